//! Every built-in agent's session reads closed at the very scan that finds its vouching process
//! gone, idle or in a tool call, and stays open while the process lives: the scenario
//! `fixtures/scenarios/every-agent/rule1-exit-closes-at-once.toml`, replayed once per agent. With
//! the live loop's scan at each process's end (slate-sources' `exits`), that is Closed at the exit
//! for every agent, whether its CLI writes anything on its way out or not.

use slate_core::agents::BUILT_IN;

#[test]
fn every_agent_closes_at_the_scan_that_finds_its_process_gone() {
    let template =
        crate::repository().join("fixtures/scenarios/every-agent/rule1-exit-closes-at-once.toml");
    let template = std::fs::read_to_string(&template).expect("the scenario is there");
    assert!(template.contains("agent = \"AGENT\""));
    let folder = std::env::temp_dir().join(format!("slate-closed-{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("a temporary folder");
    let mut agents = 0;
    for description in BUILT_IN.iter() {
        let text = template.replace(
            "agent = \"AGENT\"",
            &format!("agent = \"{}\"", description.id),
        );
        let path = folder.join(format!("rule1-exit-closes-at-once-{}.toml", description.id));
        std::fs::write(&path, text).expect("the scenario written");
        super::replay::check(&path);
        agents += 1;
    }
    let _ = std::fs::remove_dir_all(&folder);
    assert!(agents >= 10, "every built-in agent, found {agents}");
}

/// A CLI that answers one prompt and exits before any periodic scan saw it: its session waits
/// for a scan from the first record on, idle as much as in a tool call, so the scan that finds
/// its process (and from then on watches for its end) comes within seconds, not at the next
/// periodic one; without it, nothing would close the session before the window passed.
#[test]
fn an_idle_session_no_scan_has_vouched_for_waits_for_one() {
    use slate_core::agents::{AgentProcess, Info, Observation, ProcessRole, Record, RecordKind};
    use slate_core::model::{ProcessInfo, SessionKey, Status, Timestamp};
    use slate_core::tracker::{Batch, Input, Policy, SeenProcess, Tracker, TranscriptRole};

    let now = Timestamp::from_millis(1_800_000_000_000);
    let second = |n: u64| now.plus(std::time::Duration::from_secs(n));
    for description in BUILT_IN.iter() {
        let agent = slate_core::model::AgentKind::of(description);
        let key = SessionKey::new(agent, "quick-1");
        let mut tracker = Tracker::new(Policy::default());
        // A scan before the CLI started saw nothing.
        tracker.apply(Input::Processes(Vec::new()), now);
        let record =
            |at: Timestamp, kind: RecordKind| Observation::Record(Record { at: Some(at), kind });
        tracker.apply(
            Input::Observed(Batch {
                key: key.clone(),
                role: TranscriptRole::Main,
                transcript: format!("/h/{}/quick-1", description.id),
                last_write: second(4),
                observations: vec![
                    Observation::Info(Info {
                        cwd: Some("/work/acme".into()),
                        ..Info::default()
                    }),
                    record(
                        second(2),
                        RecordKind::Prompt {
                            text: "hello".into(),
                        },
                    ),
                    record(second(3), RecordKind::ModelText),
                    record(second(4), RecordKind::TurnEnded { turn_id: None }),
                ],
                folders: Vec::new(),
            }),
            second(4),
        );
        let session = tracker.session(&key).expect("the session");
        assert_eq!(session.status, Status::Waiting, "{}", description.id);
        assert_eq!(
            tracker.awaiting_scan(),
            vec![key.clone()],
            "{}: an idle session no process vouches for waits for a scan",
            description.id
        );
        // The scan finds its CLI: nothing waits any more, and it stays as it was.
        let cli = SeenProcess {
            info: ProcessInfo {
                pid: 4242,
                ppid: None,
                name: description.id.into(),
                exe: None,
                cmd: vec![description.id.into()],
                cwd: Some("/work/acme".into()),
                start_time: second(1),
                start_ticks: None,
            },
            recognised: AgentProcess {
                agent,
                role: ProcessRole::Interactive,
                folder_arg: None,
                session_arg: None,
            },
            folder: Some("/work/acme".into()),
            newest_child: None,
        };
        tracker.apply(Input::Processes(vec![cli]), second(5));
        assert!(tracker.awaiting_scan().is_empty(), "{}", description.id);
        let session = tracker.session(&key).expect("the session");
        assert_eq!(session.status, Status::Waiting, "{}", description.id);
        assert_eq!(session.session_state.reason.code.as_str(), "turn_finished");
        // Its end brings the next scan: closed there, and nothing waits.
        tracker.apply(Input::Processes(Vec::new()), second(7));
        let session = tracker.session(&key).expect("the session");
        assert_eq!(session.status, Status::Ended, "{}", description.id);
        assert_eq!(session.session_state.reason.code.as_str(), "process_gone");
        assert!(tracker.awaiting_scan().is_empty(), "{}", description.id);
    }
}
