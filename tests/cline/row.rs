//! Cline's session row beside its conversation (docs/formats.md §15.1, §15.3): read with it, it
//! names the folder before the model's first reply and says what the conversation does not (the
//! model at work on a prompt not written yet, a turn's end, an interrupt, the hub's shutdown);
//! and the walk reads the conversation again when only the row changed.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use slate::agents::{cline, Observation, Record, RecordKind, BUILT_IN};
use slate::model::{ReasonCode, SessionKey, Status};
use slate::sources::roots::{resolve_roots, Env};
use slate::sources::walk::{self, ReadState, ScanOptions};
use slate::tracker::{Batch, Input, Policy, Tracker, TranscriptRole};

fn folder(scenario: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/transcripts/cline")
        .join(scenario)
}

/// A scenario's conversation and row, as recorded.
fn files(scenario: &str) -> (Vec<u8>, Vec<u8>) {
    let mut messages = None;
    let mut row = None;
    for entry in fs::read_dir(folder(scenario)).expect("the scenario") {
        let path = entry.expect("an entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".messages.json") {
            messages = Some(fs::read(&path).unwrap());
        } else if name.ends_with(".json") {
            row = Some(fs::read(&path).unwrap());
        }
    }
    (messages.expect("a conversation"), row.expect("a row"))
}

/// The row of a scenario with its status replaced.
fn with_status(row: &[u8], status: &str) -> Vec<u8> {
    let mut row: serde_json::Value = serde_json::from_slice(row).unwrap();
    row["status"] = serde_json::Value::String(status.to_string());
    row["ended_at"] = serde_json::Value::Null;
    serde_json::to_vec(&row).unwrap()
}

fn kinds(observations: &[Observation]) -> Vec<RecordKind> {
    observations
        .iter()
        .filter_map(|observation| match observation {
            Observation::Record(Record { kind, .. }) => Some(kind.clone()),
            _ => None,
        })
        .collect()
}

fn last(observations: &[Observation]) -> RecordKind {
    kinds(observations).pop().expect("records")
}

#[test]
fn the_rows_status_adds_what_the_conversation_does_not_say() {
    // A finished turn: `idle` ends it at once.
    let (messages, row) = files("permission_denied");
    let read = cline::read_session(&messages, Some(&row)).unwrap();
    assert_eq!(last(&read), RecordKind::TurnEnded { turn_id: None });
    // Escape before the model's first token: the prompt stays last, and `idle` says interrupted.
    let (messages, row) = files("interrupted_thinking");
    let read = cline::read_session(&messages, Some(&row)).unwrap();
    assert_eq!(last(&read), RecordKind::Interrupted { turn_id: None });
    // A command at work (`running`) or at its dialog (`pending`) adds nothing: the call is open.
    for scenario in ["tool_running", "permission_pending", "question_pending"] {
        let (messages, row) = files(scenario);
        let alone = cline::read_messages(&messages).unwrap();
        let read = cline::read_session(&messages, Some(&row)).unwrap();
        assert_eq!(kinds(&read), kinds(&alone), "{scenario}");
    }
    // `running` after a finished turn: a new prompt the conversation does not hold yet.
    let (messages, row) = files("permission_denied");
    let read = cline::read_session(&messages, Some(&with_status(&row, "running"))).unwrap();
    assert_eq!(last(&read), RecordKind::TurnStarted { turn_id: None });
    // The hub shut down: `completed` with its end is the session's end.
    let (messages, row) = files("finished_after_exit_and_hub_stop");
    let read = cline::read_session(&messages, Some(&row)).unwrap();
    assert_eq!(last(&read), RecordKind::SessionEnded);
}

#[test]
fn the_row_names_the_folder_before_the_conversation_holds_anything() {
    let (_, row) = files("tool_running");
    let empty = br#"{"version":1,"sessionId":"1796174550271_8m0a0","origin":{"version":"3.0.65"},"messages":[]}"#;
    let read = cline::read_session(empty, Some(&with_status(&row, "running"))).unwrap();
    let folder = read.iter().find_map(|observation| match observation {
        Observation::Info(info) => info.cwd.clone(),
        _ => None,
    });
    assert_eq!(
        folder.as_deref(),
        Some("/work/research/cline/proj/tool_running")
    );
    assert_eq!(
        kinds(&read),
        vec![RecordKind::TurnStarted { turn_id: None }]
    );
    // Decided: the model at work, for as long as the row says so.
    let key = SessionKey::new(cline::KIND, "1796174550271_8m0a0");
    let mut tracker = Tracker::new(Policy::default());
    let written = slate::model::Timestamp(1_796_174_553_388);
    let cwd = "/work/research/cline/proj/tool_running".to_string();
    tracker.apply(
        Input::Observed(Batch {
            key: key.clone(),
            role: TranscriptRole::Main,
            transcript: "fresh".to_string(),
            last_write: written,
            observations: read,
            folders: vec![(cwd.clone(), cwd)],
        }),
        written.plus(Duration::from_secs(20)),
    );
    let session = tracker.session(&key).unwrap();
    assert_eq!(
        (session.status, session.session_state.reason.code),
        (Status::Working, ReasonCode::ModelAnswering)
    );
    // Before any prompt (`idle`, nothing written) it says nothing.
    let read = cline::read_session(empty, Some(&with_status(&row, "idle"))).unwrap();
    assert!(kinds(&read).is_empty());
}

#[test]
fn a_row_that_cannot_be_read_adds_nothing() {
    let (messages, _) = files("tool_running");
    let alone = cline::read_messages(&messages).unwrap();
    for row in [
        &b""[..],
        b"not json",
        b"[1]",
        b"{\"status\":5,\"cwd\":\"relative\"}",
    ] {
        let read = cline::read_session(&messages, Some(row)).unwrap();
        assert_eq!(kinds(&read), kinds(&alone));
    }
    assert_eq!(
        kinds(&cline::read_session(&messages, None).unwrap()),
        kinds(&alone)
    );
}

#[test]
fn a_change_to_the_row_alone_reads_the_conversation_again() {
    let home = tempfile::tempdir().unwrap();
    let (messages, row) = files("permission_denied");
    let id = "1796174622097_a4f7o";
    let session = home.path().join(".cline/data/sessions").join(id);
    fs::create_dir_all(&session).unwrap();
    let conversation = session.join(format!("{id}.messages.json"));
    let row_file = session.join(format!("{id}.json"));
    fs::write(&conversation, &messages).unwrap();
    fs::write(&row_file, with_status(&row, "idle")).unwrap();
    let roots = resolve_roots(BUILT_IN, &Env::with_home(home.path()));
    let now = slate::sources::tail::timestamp(std::time::SystemTime::now());
    let mut state = ReadState::new();
    let first = walk::scan(BUILT_IN, &roots, &ScanOptions::default(), &mut state, now);
    let batch = first
        .batches
        .iter()
        .find(|batch| batch.key.agent == cline::KIND)
        .expect("the conversation is read");
    assert_eq!(batch.key.id.to_string(), id);
    assert_eq!(
        last(&batch.observations),
        RecordKind::TurnEnded { turn_id: None }
    );
    // Nothing changed: nothing read.
    let again = walk::scan(BUILT_IN, &roots, &ScanOptions::default(), &mut state, now);
    assert!(again
        .batches
        .iter()
        .all(|batch| batch.key.agent != cline::KIND));
    // The row says a new turn runs: the watcher's hint for the row reads the conversation.
    fs::write(&row_file, with_status(&row, "running")).unwrap();
    let options = ScanOptions::default();
    let hinted = state.read_path(BUILT_IN, &roots, &options, &row_file, now);
    let batch = hinted.batches.first().expect("the row's change is read");
    assert_eq!(batch.transcript, conversation.display().to_string());
    assert_eq!(
        last(&batch.observations),
        RecordKind::TurnStarted { turn_id: None }
    );
}
