//! Claude Code's work in the background (docs/formats.md §1.6), from the transcript through the
//! tracker (issue 40).

use slate::agents::claude::observe;
use slate::agents::{Observation, Record};
use slate::model::{AgentKind, ProcessInfo, Timestamp};

use super::read_fixture;
/// Background work read from the transcript through the tracker (issue 40): a turn that ends with
/// a command and an agent left in the background reads Working and names them, the turn their
/// notifications wake ends the same way while any still runs, and only the last is finished.
#[test]
fn background_work_keeps_the_session_working_until_the_last_turn_it_wakes() {
    use slate::agents::{AgentProcess, ProcessRole, RecordKind};
    use slate::model::{SessionKey, Status};
    use slate::tracker::{Batch, Input, Policy, SeenProcess, Tracker, TranscriptRole};

    let bytes = read_fixture("transcripts/claude-code/background-work.jsonl");
    let key = SessionKey::new(
        AgentKind::CLAUDE_CODE,
        "5b1e0c3a-7d2f-4e8a-9c61-0f3b2a4d5e6f",
    );
    let mut tracker = Tracker::new(Policy::default());
    let start = Timestamp::parse_rfc3339("2026-12-01T09:59:00Z").expect("a time");
    tracker.apply(
        Input::Processes(vec![SeenProcess {
            info: ProcessInfo {
                pid: 4242,
                ppid: None,
                name: "claude".into(),
                exe: None,
                cmd: vec!["claude".into()],
                cwd: Some("/work/acme-api".into()),
                start_time: start,
                start_ticks: None,
            },
            recognised: AgentProcess {
                agent: AgentKind::CLAUDE_CODE,
                role: ProcessRole::Interactive,
                folder_arg: None,
                session_arg: None,
            },
            folder: Some("/work/acme-api".into()),
            newest_child: None,
        }]),
        start,
    );
    let mut read = Vec::new();
    for line in bytes
        .split(|byte| *byte == b'\n')
        .filter(|line| !line.is_empty())
    {
        let observations = observe(line).expect("a line of the fixture");
        let at = observations
            .iter()
            .find_map(|observation| match observation {
                Observation::Record(Record { at, .. }) => *at,
                _ => None,
            })
            .unwrap_or(start);
        let turn_ended = observations.iter().any(|observation| {
            matches!(
                observation,
                Observation::Record(Record {
                    kind: RecordKind::TurnEnded { .. },
                    ..
                })
            )
        });
        tracker.apply(
            Input::Observed(Batch {
                key: key.clone(),
                role: TranscriptRole::Main,
                transcript: "/h/.claude/projects/-work-acme-api/background-work.jsonl".into(),
                last_write: at,
                observations,
                folders: Vec::new(),
            }),
            at,
        );
        if turn_ended {
            // Read a little after the turn's end, when its text has long settled.
            let later = at.plus(std::time::Duration::from_secs(20));
            tracker.apply(Input::Tick, later);
            let session = tracker.session(&key).expect("the session");
            read.push((session.status, session.session_state.reason.text.clone()));
        }
    }
    assert_eq!(
        read,
        vec![
            (
                Status::Working,
                "Waiting for 1 background command, 1 background agent".to_string()
            ),
            (
                Status::Working,
                "Waiting for 1 background agent".to_string()
            ),
            (Status::Waiting, "The turn finished".to_string()),
        ]
    );
}
