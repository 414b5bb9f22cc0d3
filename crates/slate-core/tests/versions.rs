//! Which versions of each agent the live sessions were written by, beside the versions Slate was
//! checked against (`agents::versions`): a newer one is said, in the report and for the session.

use slate_core::agents::versions::{newer_note, report};
use slate_core::agents::{Info, Observation, Record, RecordKind, BUILT_IN};
use slate_core::model::{AgentKind, Session, SessionKey, Status, Timestamp};
use slate_core::tracker::{Batch, Input, Policy, Tracker, TranscriptRole};

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_millis(1_800_000_000_000 + seconds * 1000)
}

/// A Codex session whose rollout names `version`, decided 5 s after its turn ended.
fn codex_session(id: &str, version: Option<&str>) -> Session {
    let key = SessionKey::new(AgentKind::CODEX, id);
    let mut tracker = Tracker::new(Policy::default());
    let record = |kind| {
        Observation::Record(Record {
            at: Some(at(0)),
            kind,
        })
    };
    tracker.apply(
        Input::Observed(Batch {
            key: key.clone(),
            role: TranscriptRole::Main,
            transcript: format!("/h/.codex/sessions/{id}.jsonl"),
            last_write: at(0),
            observations: vec![
                Observation::Info(Info {
                    cwd: Some("/work/acme".into()),
                    cli_version: version.map(str::to_string),
                    ..Info::default()
                }),
                record(RecordKind::Prompt { text: "go".into() }),
                record(RecordKind::ModelText),
                record(RecordKind::TurnEnded { turn_id: None }),
            ],
            folders: Vec::new(),
        }),
        at(5),
    );
    tracker.session(&key).expect("the session is known").clone()
}

#[test]
fn a_version_newer_than_any_recorded_is_said() {
    let recorded = codex_session("a", Some("0.171.0"));
    let newer = codex_session("b", Some("0.200.1"));
    let unnamed = codex_session("c", None);
    assert_ne!(newer.status, Status::Ended, "the check reads live sessions");
    let versions = report(BUILT_IN, [&recorded, &unnamed]);
    let codex = versions
        .iter()
        .find(|agent| agent.agent == AgentKind::CODEX)
        .expect("codex is reported");
    assert_eq!(codex.recorded, vec!["0.171.0"]);
    assert_eq!(codex.seen, vec!["0.171.0".to_string()]);
    assert!(!codex.newer_than_recorded);
    let versions = report(BUILT_IN, [&recorded, &newer]);
    let codex = versions
        .iter()
        .find(|agent| agent.agent == AgentKind::CODEX)
        .unwrap();
    assert_eq!(
        codex.seen,
        vec!["0.171.0".to_string(), "0.200.1".to_string()]
    );
    assert!(codex.newer_than_recorded);
    // Every agent of the registry is in the report, in its order.
    assert_eq!(versions.len(), BUILT_IN.iter().count());
    let note = newer_note(&newer).expect("the newer session says so");
    assert!(
        note.contains("0.200.1") && note.contains("0.171.0"),
        "{note}"
    );
    assert_eq!(newer_note(&recorded), None);
    assert_eq!(newer_note(&unnamed), None);
}

#[test]
fn versions_that_are_not_versions_are_left_out() {
    let odd = codex_session("d", Some("latest\u{202e}"));
    let versions = report(BUILT_IN, [&odd]);
    let codex = versions
        .iter()
        .find(|agent| agent.agent == AgentKind::CODEX)
        .unwrap();
    assert!(codex.seen.is_empty() && !codex.newer_than_recorded);
    assert_eq!(newer_note(&odd), None);
}
