//! Closed history kept as small summaries, what brings one back to a full entry, and a CLI started
//! since the last process scan, which waits for one.

use slate_core::agents::{
    AgentProcess, CallKind, Info, Observation, ProcessRole, Record, RecordKind,
};
use slate_core::model::{
    AgentKind, Intent, IntentState, ListedStatus, Listing, ListingEntry, ProcessInfo, SessionKey,
    Status, Timestamp,
};
use slate_core::tracker::{Batch, Input, Policy, SeenProcess, Tracker, TranscriptRole};

use super::at;

/// A Claude Code transcript seen closed, with nothing read from it.
fn unread(id: &str, last_write: Timestamp) -> Input {
    Input::Observed(Batch {
        key: SessionKey::new(AgentKind::CLAUDE_CODE, id),
        role: TranscriptRole::Main,
        transcript: format!("/home/u/.claude/projects/-work-acme/{id}.jsonl"),
        last_write,
        observations: Vec::new(),
        folders: Vec::new(),
    })
}

fn resumed_by(pid: u32, id: &str, start: Timestamp) -> SeenProcess {
    SeenProcess {
        info: ProcessInfo {
            pid,
            ppid: None,
            name: "claude".to_string(),
            exe: None,
            cmd: vec!["claude".into(), "--resume".into(), id.into()],
            cwd: Some("/work/acme".to_string()),
            start_time: start,
            start_ticks: None,
        },
        recognised: AgentProcess {
            agent: AgentKind::CLAUDE_CODE,
            role: ProcessRole::Interactive,
            folder_arg: None,
            session_arg: Some(id.to_string()),
        },
        folder: Some("/work/acme".to_string()),
        newest_child: None,
    }
}

#[test]
fn closed_history_is_kept_as_summaries_until_something_touches_it() {
    let mut tracker = Tracker::new(Policy::default());
    let month_ago = at(0.0);
    let now = at(30.0 * 24.0 * 3600.0);
    let ids: Vec<String> = (0..3).map(|n| format!("old-{n}")).collect();
    let changes = tracker.apply_all(ids.iter().map(|id| unread(id, month_ago)), now);
    assert!(
        changes.is_empty(),
        "history seen closed is no change: {changes:?}"
    );
    assert_eq!(tracker.closed().len(), 3);
    assert_eq!(tracker.sessions().count(), 0, "no full entries");
    let all = tracker.all_sessions();
    assert_eq!(all.len(), 3);
    assert!(all.iter().all(|session| session.status == Status::Ended));
    let key = SessionKey::new(AgentKind::CLAUDE_CODE, "old-1");
    let before = tracker.session(&key).expect("a summary is a session");
    assert!(!tracker.evidence(&key).is_empty());
    assert_eq!(tracker.next_deadline(), None);

    // `claude --resume old-1` vouches for it: a full entry again, and a change from Closed.
    let later = now.plus(std::time::Duration::from_secs(5));
    let changes = tracker.apply(Input::Processes(vec![resumed_by(42, "old-1", now)]), later);
    let change = changes
        .iter()
        .find(|change| change.key == key)
        .expect("the resumed session changes");
    assert_eq!(change.previous, Some(before.status));
    assert_ne!(change.session.status, Status::Ended);
    assert_eq!(tracker.closed().len(), 2);
    assert_eq!(tracker.sessions().count(), 1);

    // An intent on another summary brings it back too, with its decision kept.
    let parked = Intent {
        state: IntentState::Parked,
        reason: Some("later".to_string()),
        awaiting_who: None,
    };
    let other = SessionKey::new(AgentKind::CLAUDE_CODE, "old-2");
    tracker.apply(
        Input::Intents(vec![(other.clone(), parked.clone(), later)]),
        later,
    );
    assert_eq!(tracker.closed().len(), 1);
    let session = tracker.session(&other).expect("known");
    assert_eq!(session.session_state.intent, parked);

    // Its file gone, a summary is forgotten.
    let gone = SessionKey::new(AgentKind::CLAUDE_CODE, "old-0");
    tracker.apply(
        Input::TranscriptGone {
            key: gone.clone(),
            transcript: "/home/u/.claude/projects/-work-acme/old-0.jsonl".to_string(),
        },
        later,
    );
    assert!(tracker.closed().is_empty());
    assert!(tracker.session(&gone).is_none());
}

#[test]
fn a_cli_started_since_the_last_scan_waits_for_one() {
    let now = Timestamp::from_millis(1_800_000_000_000);
    let mut tracker = Tracker::new(Policy::default());
    let key = SessionKey::new(AgentKind::CODEX, "new-1");
    // A tool call opens in a session no process vouches for yet.
    tracker.apply(
        Input::Observed(Batch {
            key: key.clone(),
            role: TranscriptRole::Main,
            transcript: "/h/.codex/sessions/new-1.jsonl".into(),
            last_write: now,
            observations: vec![
                Observation::Info(Info {
                    cwd: Some("/work/acme".into()),
                    ..Info::default()
                }),
                Observation::Record(Record {
                    at: Some(now),
                    kind: RecordKind::ToolCall {
                        call_id: "c1".into(),
                        name: "exec_command".into(),
                        detail: Some("touch x.txt".into()),
                        input: None,
                        kind: CallKind::Escalated,
                    },
                }),
            ],
            folders: Vec::new(),
        }),
        now,
    );
    assert_eq!(tracker.awaiting_scan(), vec![key.clone()]);
    // A listing names a session under a pid no scan has seen.
    let listed = SessionKey::new(AgentKind::CLAUDE_CODE, "listed-1");
    let entry = ListingEntry {
        session_id: "listed-1".into(),
        pid: Some(4343),
        proc_start: None,
        started_at: None,
        cwd: None,
        status: Some(ListedStatus::Busy),
        waiting_for: None,
        interactive: true,
        updated_at: None,
    };
    tracker.apply(
        Input::Listing {
            agent: AgentKind::CLAUDE_CODE,
            listing: Listing {
                available: true,
                entries: vec![entry],
            },
        },
        now,
    );
    let mut awaiting = tracker.awaiting_scan();
    awaiting.sort();
    assert_eq!(awaiting, vec![listed.clone(), key.clone()]);
    // The scan sees both processes: nothing waits any more.
    let process = |pid: u32, agent: AgentKind, name: &str| SeenProcess {
        info: ProcessInfo {
            pid,
            ppid: None,
            name: name.into(),
            exe: None,
            cmd: vec![name.into()],
            cwd: Some("/work/acme".into()),
            start_time: now.minus(std::time::Duration::from_secs(5)),
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
    tracker.apply(
        Input::Processes(vec![
            process(4242, AgentKind::CODEX, "codex"),
            process(4343, AgentKind::CLAUDE_CODE, "claude"),
        ]),
        now,
    );
    assert_eq!(tracker.awaiting_scan(), Vec::<SessionKey>::new());

    // The session is interrupted, as a CLI whose terminal was closed writes on its way out: the
    // next scan, soon, tells whether its process lives on.
    let later = now.plus(std::time::Duration::from_secs(3));
    tracker.apply(
        Input::Observed(Batch {
            key: key.clone(),
            role: TranscriptRole::Main,
            transcript: "/h/.codex/sessions/new-1.jsonl".into(),
            last_write: later,
            observations: vec![Observation::Record(Record {
                at: Some(later),
                kind: RecordKind::Interrupted { turn_id: None },
            })],
            folders: Vec::new(),
        }),
        later,
    );
    let session = tracker.session(&key).expect("the session");
    assert_eq!(session.session_state.reason.code.as_str(), "interrupted");
    assert_eq!(tracker.awaiting_scan(), vec![key.clone()]);
    // A scan finds its process still alive on its way out, but no longer vouching for the
    // session (as Kilo Code 7.7.9's did, its terminal closed; here, it left the folder): not
    // closed yet, since it lives.
    let mut leaving = process(4242, AgentKind::CODEX, "codex");
    leaving.info.cwd = Some("/elsewhere".into());
    leaving.folder = Some("/elsewhere".into());
    tracker.apply(
        Input::Processes(vec![
            leaving,
            process(4343, AgentKind::CLAUDE_CODE, "claude"),
        ]),
        later,
    );
    let session = tracker.session(&key).expect("the session");
    assert_eq!(session.status, slate_core::model::Status::Waiting);
    // The next scan finds it gone: its death still closes the session, and nothing waits.
    let gone = later.plus(std::time::Duration::from_secs(2));
    tracker.apply(
        Input::Processes(vec![process(4343, AgentKind::CLAUDE_CODE, "claude")]),
        gone,
    );
    let session = tracker.session(&key).expect("the session");
    assert_eq!(session.status, slate_core::model::Status::Ended);
    assert_eq!(session.session_state.reason.code.as_str(), "process_gone");
    assert_eq!(tracker.awaiting_scan(), Vec::<SessionKey>::new());
}
