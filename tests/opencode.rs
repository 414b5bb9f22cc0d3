//! OpenCode: the sample `opencode.db` and the pre-1.2 JSON tree in `fixtures/stores`, read through
//! `sources::stores` and decided by the tracker, plus the bad databases a live machine produces
//! (truncated, not a database, locked by a writer, unreadable).

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use slate::agents::opencode::{self, MessageRow, PartRow, SessionRow};
use slate::agents::BUILT_IN;
use slate::agents::{self, Observation, ProcessRole, RecordKind};
use slate::model::{
    AgentKind, ProblemKind, ProcessInfo, ReasonCode, SessionKey, Status, Timestamp,
};
use slate::sources::roots::{resolve_roots, Env};
use slate::sources::stores;
use slate::tracker::{Batch, Input, Policy, SeenProcess, Tracker};

const FOLDER: &str = "/home/dev/acme-api";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/stores")
}

/// A copy of the sample database in a fresh temp folder, so tests may lock or damage it.
fn sample_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("opencode.db");
    std::fs::copy(fixtures().join("opencode.db"), &db).expect("copy the sample db");
    (dir, db)
}

/// A far-off `now` for reads, so no sample session counts as an old archived one.
fn read_now() -> Timestamp {
    Timestamp::from_millis(1_795_950_000_000)
}

fn read(db: &Path) -> (Vec<Batch>, Vec<slate::model::Problem>) {
    let mut problems = Vec::new();
    let batches =
        stores::read_opencode_since(AgentKind::OPENCODE, db, None, read_now(), &mut problems);
    (batches, problems)
}

/// The time of the newest record in a batch (untimed records count as its last write).
fn last_record(batch: &Batch) -> Timestamp {
    batch
        .observations
        .iter()
        .filter_map(|observation| match observation {
            Observation::Record(record) => Some(record.at.unwrap_or(batch.last_write)),
            _ => None,
        })
        .max()
        .unwrap_or(batch.last_write)
}

/// Folds `batches` through a tracker with one live interactive process working in the sample
/// folder, at `now`, and returns the decided status and reason of `key`.
pub fn decide_with_process(
    batches: Vec<Batch>,
    key: &SessionKey,
    cmd: &[&str],
    now: Timestamp,
) -> (Status, ReasonCode) {
    let earliest = batches
        .iter()
        .map(|batch| batch.last_write)
        .min()
        .unwrap_or(now);
    let info = ProcessInfo {
        pid: 4242,
        ppid: Some(1),
        name: agents::program_name(cmd[0]),
        exe: None,
        cmd: cmd.iter().map(|arg| arg.to_string()).collect(),
        cwd: Some(FOLDER.to_string()),
        start_time: earliest.minus(std::time::Duration::from_secs(60)),
        start_ticks: None,
    };
    let recognised = agents::recognise(&info).expect("the process is recognised");
    assert_eq!(recognised.role, ProcessRole::Interactive);
    let seen = SeenProcess {
        info,
        recognised,
        folder: Some(FOLDER.to_string()),
        newest_child: None,
    };
    decide(batches, key, vec![seen], now)
}

fn decide(
    batches: Vec<Batch>,
    key: &SessionKey,
    processes: Vec<SeenProcess>,
    now: Timestamp,
) -> (Status, ReasonCode) {
    let mut tracker = Tracker::new(Policy::default());
    for batch in batches {
        tracker.apply(Input::Observed(batch), now);
    }
    tracker.apply(Input::Processes(processes), now);
    let session = tracker.session(key).expect("the session is tracked");
    (session.status, session.session_state.reason.code)
}

/// The batches of one root session and its sub-agent sessions.
///
/// Each test folds one family alone: one live process in a folder vouches for the single most
/// recently written session there, so all six sample sessions together would leave five of them
/// unvouched. Within the sample family the parent and the child were last written at the same
/// moment, and the tracker gives the process to the parent.
fn family(batches: &[Batch], id: &str) -> Vec<Batch> {
    batches
        .iter()
        .filter(|batch| {
            batch.key.id.as_str() == id
                || batch.observations.iter().any(|observation| {
                    matches!(observation, Observation::Info(info)
                        if info.parent_session.as_deref() == Some(id))
                })
        })
        .cloned()
        .collect()
}

fn expect_state(id: &str, status: Status, reason: ReasonCode) {
    let (_dir, db) = sample_db();
    let (batches, problems) = read(&db);
    assert_eq!(problems, Vec::new());
    let key = SessionKey::new(AgentKind::OPENCODE, id);
    let own = family(&batches, id);
    let main = own
        .iter()
        .find(|batch| batch.key == key)
        .expect("the session was read");
    let now = last_record(main).plus(std::time::Duration::from_secs(60));
    let decided = decide_with_process(own, &key, &["opencode"], now);
    assert_eq!(decided, (status, reason), "session {id}");
}

#[test]
fn finished_turn_needs_you() {
    expect_state(
        "ses_5a1b2c3d4ffeA1finishedXk9Q",
        Status::Waiting,
        ReasonCode::TurnFinished,
    );
}

#[test]
fn running_bash_is_working() {
    expect_state(
        "ses_5a1b2c3d5ffeB2workingRt7P",
        Status::Working,
        ReasonCode::ToolRunning,
    );
}

#[test]
fn running_question_needs_you_after_the_window() {
    expect_state(
        "ses_5a1b2c3d6ffeC3questionQz8",
        Status::Waiting,
        ReasonCode::Question,
    );
}

#[test]
fn running_edit_reads_working_because_a_permission_prompt_leaves_no_trace() {
    // An honest blind spot: a pending permission is only an in-memory event in OpenCode, so an
    // `edit` waiting for approval is byte-identical to one that runs (docs/formats.md §4.2).
    expect_state(
        "ses_5a1b2c3d7ffeD4permissionA",
        Status::Working,
        ReasonCode::ToolRunning,
    );
}

#[test]
fn aborted_turn_is_interrupted() {
    expect_state(
        "ses_5a1b2c3d8ffeE5abortedMm2",
        Status::Waiting,
        ReasonCode::Interrupted,
    );
}

#[test]
fn parent_with_running_task_is_working() {
    expect_state(
        "ses_5a1b2c3d9ffeF6parentTask1",
        Status::Working,
        ReasonCode::ToolRunning,
    );
}

#[test]
fn sub_agent_session_rolls_up_into_its_parent() {
    let (_dir, db) = sample_db();
    let (batches, _) = read(&db);
    assert_eq!(
        batches.len(),
        7,
        "six root sessions and one sub-agent session"
    );
    let child = batches
        .iter()
        .find(|batch| batch.key.id.as_str() == "ses_5a1b2c3daffeF6childSubag")
        .expect("the child session was read");
    let parent = child
        .observations
        .iter()
        .find_map(|observation| match observation {
            Observation::Info(info) => info.parent_session.clone(),
            _ => None,
        });
    assert_eq!(parent.as_deref(), Some("ses_5a1b2c3d9ffeF6parentTask1"));
    let mut tracker = Tracker::new(Policy::default());
    let now = Timestamp::from_millis(1_795_950_400_000);
    for batch in family(&batches, "ses_5a1b2c3d9ffeF6parentTask1") {
        tracker.apply(Input::Observed(batch), now);
    }
    let listed: Vec<&str> = tracker
        .sessions()
        .map(|session| session.id.as_str())
        .collect();
    assert_eq!(listed, vec!["ses_5a1b2c3d9ffeF6parentTask1"]);
}

#[test]
fn without_a_process_every_session_ends() {
    let (_dir, db) = sample_db();
    let (batches, _) = read(&db);
    let now = Timestamp::from_millis(1_795_950_000_000 + 3_600_000);
    for batch in batches
        .iter()
        .filter(|batch| batch.key.id.as_str() != "ses_5a1b2c3daffeF6childSubag")
    {
        let decided = decide(vec![batch.clone()], &batch.key, Vec::new(), now);
        assert_eq!(
            decided,
            (Status::Ended, ReasonCode::NoProcess),
            "{}",
            batch.key
        );
    }
}

#[test]
fn sample_observations() {
    let (_dir, db) = sample_db();
    let (batches, _) = read(&db);
    let shown: Vec<(String, String, Timestamp, Vec<Observation>)> = batches
        .into_iter()
        .map(|batch| {
            let transcript = batch
                .transcript
                .rsplit_once('#')
                .map(|(_, id)| format!("opencode.db#{id}"))
                .unwrap_or_default();
            (
                batch.key.to_string(),
                transcript,
                batch.last_write,
                batch.observations,
            )
        })
        .collect();
    insta::assert_debug_snapshot!("opencode_sample_db", shown);
}

#[test]
fn legacy_json_tree_is_history() {
    let storage = fixtures().join("legacy-json-storage-pre-1.2/storage");
    let mut problems = Vec::new();
    let batches = stores::read_opencode_legacy(AgentKind::OPENCODE, &storage, &mut problems);
    assert_eq!(problems, Vec::new());
    assert_eq!(batches.len(), 1);
    let batch = batches[0].clone();
    assert_eq!(batch.key.id.as_str(), "ses_3f1e2d3c4ffeLegacyJsonA1");
    let kinds: Vec<&RecordKind> = batch
        .observations
        .iter()
        .filter_map(|observation| match observation {
            Observation::Record(record) => Some(&record.kind),
            _ => None,
        })
        .collect();
    assert!(
        matches!(kinds.first(), Some(RecordKind::Prompt { text }) if text == "where is the rate limiter configured?")
    );
    assert!(matches!(kinds.last(), Some(RecordKind::TurnEnded { .. })));
    let now = last_record(&batch).plus(std::time::Duration::from_secs(60));
    let key = batch.key.clone();
    let decided = decide(vec![batch], &key, Vec::new(), now);
    assert_eq!(decided, (Status::Ended, ReasonCode::NoProcess));
}

#[test]
fn archived_sessions_end_and_old_ones_are_skipped() {
    let (_dir, db) = sample_db();
    let writer = Connection::open(&db).expect("open for writing");
    let archived = 1_795_950_000_000_i64;
    writer
        .execute(
            "UPDATE session SET time_archived = ?1 WHERE id = 'ses_5a1b2c3d4ffeA1finishedXk9Q'",
            [archived],
        )
        .expect("archive one session");
    drop(writer);
    let mut problems = Vec::new();
    let fresh = stores::read_opencode_since(
        AgentKind::OPENCODE,
        &db,
        None,
        Timestamp::from_millis(archived + 1000),
        &mut problems,
    );
    let batch = fresh
        .iter()
        .find(|batch| batch.key.id.as_str() == "ses_5a1b2c3d4ffeA1finishedXk9Q")
        .expect("a freshly archived session is read");
    assert!(batch.observations.iter().any(|observation| matches!(
        observation,
        Observation::Record(record) if record.kind == RecordKind::SessionEnded
    )));
    let two_days = 2 * 24 * 3_600_000;
    let later = stores::read_opencode_since(
        AgentKind::OPENCODE,
        &db,
        None,
        Timestamp::from_millis(archived + two_days),
        &mut problems,
    );
    assert_eq!(later.len(), 6, "the old archived session is skipped");
    assert_eq!(problems, Vec::new());
}

#[test]
fn reads_only_sessions_updated_after_a_time() {
    let (_dir, db) = sample_db();
    let mut problems = Vec::new();
    // Sessions 5 and 6 (and the child) were updated after T0 + 4 min.
    let after = Timestamp::from_millis(1_795_950_000_000 + 4 * 60_000 + 1);
    let batches = stores::read_opencode_since(
        AgentKind::OPENCODE,
        &db,
        Some(after),
        read_now(),
        &mut problems,
    );
    let mut ids: Vec<&str> = batches.iter().map(|batch| batch.key.id.as_str()).collect();
    ids.sort();
    assert_eq!(
        ids,
        vec![
            "ses_5a1b2c3d8ffeE5abortedMm2",
            "ses_5a1b2c3d9ffeF6parentTask1",
            "ses_5a1b2c3daffeF6childSubag"
        ]
    );
}

#[test]
fn truncated_database_is_a_counted_problem() {
    let (_dir, db) = sample_db();
    let bytes = std::fs::read(&db).expect("read the copy");
    std::fs::write(&db, &bytes[..bytes.len() / 2]).expect("cut it in half");
    let (batches, problems) = read(&db);
    assert!(batches.is_empty());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].kind, ProblemKind::StoreCorrupt);
}

#[test]
fn random_bytes_are_a_counted_problem() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("opencode.db");
    let noise: Vec<u8> = (0..8192u32)
        .map(|n| (n.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&db, noise).expect("write noise");
    let (batches, problems) = read(&db);
    assert!(batches.is_empty());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].kind, ProblemKind::StoreCorrupt);
}

#[test]
fn locked_database_is_a_counted_problem_until_the_writer_commits() {
    let (_dir, db) = sample_db();
    let writer = Connection::open(&db).expect("open for writing");
    writer
        .execute_batch("BEGIN EXCLUSIVE")
        .expect("take the lock");
    let (batches, problems) = read(&db);
    assert!(batches.is_empty());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].kind, ProblemKind::StoreLocked);
    writer.execute_batch("COMMIT").expect("release the lock");
    let (batches, problems) = read(&db);
    assert_eq!(problems, Vec::new());
    assert_eq!(batches.len(), 7);
}

#[test]
fn committed_rows_still_in_the_wal_are_read() {
    let (_dir, db) = sample_db();
    let writer = Connection::open(&db).expect("open for writing");
    let mode: String = writer
        .query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))
        .expect("switch to WAL");
    assert_eq!(mode, "wal");
    writer
        .execute_batch("PRAGMA wal_autocheckpoint=0")
        .expect("keep rows in the WAL");
    writer
        .execute(
            "UPDATE session SET title = 'Renamed in the WAL' WHERE id = 'ses_5a1b2c3d5ffeB2workingRt7P'",
            [],
        )
        .expect("write to the WAL");
    // An open write transaction does not block a WAL reader; it sees the last commit.
    writer
        .execute_batch("BEGIN IMMEDIATE")
        .expect("hold the write lock");
    assert!(db.with_extension("db-wal").exists());
    let (batches, problems) = read(&db);
    assert_eq!(problems, Vec::new());
    let batch = batches
        .iter()
        .find(|batch| batch.key.id.as_str() == "ses_5a1b2c3d5ffeB2workingRt7P")
        .expect("the session was read");
    let title = batch
        .observations
        .iter()
        .find_map(|observation| match observation {
            Observation::Info(info) => info.title.as_ref().map(|title| title.text.clone()),
            _ => None,
        });
    assert_eq!(title.as_deref(), Some("Renamed in the WAL"));
    writer.execute_batch("ROLLBACK").expect("release the lock");
}

#[test]
fn missing_database_is_nothing_and_unreadable_is_a_problem() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (batches, problems) = read(&dir.path().join("opencode.db"));
    assert!(batches.is_empty());
    assert_eq!(problems, Vec::new());
    let folder = dir.path().join("not-a-file.db");
    std::fs::create_dir(&folder).expect("make a folder");
    let (batches, problems) = read(&folder);
    assert!(batches.is_empty());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].kind, ProblemKind::StoreUnreadable);
}

#[test]
fn bad_rows_are_counted_and_skipped() {
    let session = SessionRow {
        id: "ses_x".to_string(),
        directory: FOLDER.to_string(),
        title: "New session - 2026-11-28T11:00:00.000Z".to_string(),
        time_created: 1,
        time_updated: 2,
        ..SessionRow::default()
    };
    let messages = vec![
        MessageRow {
            id: "msg_1".to_string(),
            time_created: 10,
            data: "{not json".to_string(),
            parts: Vec::new(),
        },
        MessageRow {
            id: "msg_2".to_string(),
            time_created: 20,
            data: r#"{"role":"user","time":{"created":20}}"#.to_string(),
            parts: vec![PartRow {
                id: "prt_1".to_string(),
                data: "[1,2]".to_string(),
            }],
        },
    ];
    let (observations, errors) = opencode::observe_session_counted(&session, &messages);
    let ids: Vec<&str> = errors.iter().map(|error| error.row_id.as_str()).collect();
    assert_eq!(ids, vec!["msg_1", "prt_1"]);
    assert_eq!(observations[0], Observation::Reset);
    let Observation::Info(info) = &observations[1] else {
        panic!("the second observation is the session's info");
    };
    assert_eq!(info.title, None, "a placeholder title is not a title");
    assert!(matches!(
        &observations[2],
        Observation::Record(record) if record.kind == RecordKind::Prompt { text: String::new() }
    ));
}

#[test]
fn retry_and_compaction_and_failure() {
    let session = SessionRow {
        id: "ses_y".to_string(),
        directory: FOLDER.to_string(),
        title: "Title".to_string(),
        time_created: 1,
        time_updated: 2,
        time_compacting: Some(500),
        ..SessionRow::default()
    };
    let messages = vec![MessageRow {
        id: "msg_1".to_string(),
        time_created: 10,
        data: r#"{"role":"assistant","time":{"created":10,"completed":90},"modelID":"m1","error":{"name":"APIError","data":{"message":"overloaded"}}}"#.to_string(),
        parts: vec![PartRow {
            id: "prt_1".to_string(),
            data: r#"{"type":"retry","attempt":1,"time":{"created":50}}"#.to_string(),
        }],
    }];
    let kinds: Vec<RecordKind> = opencode::observe_session(&session, &messages)
        .into_iter()
        .filter_map(|observation| match observation {
            Observation::Record(record) => Some(record.kind),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            RecordKind::TurnStarted {
                turn_id: Some("msg_1".to_string())
            },
            RecordKind::Retrying,
            RecordKind::TurnFailed {
                message: Some("overloaded".to_string())
            },
            RecordKind::Compacting,
        ]
    );
}

/// The names of OpenCode's store, as its description gives them.
fn opencode_store() -> slate::agents::OpenCodeStore {
    match slate::agents::opencode::DESCRIPTION.store() {
        Some(slate::agents::StoreKind::OpenCode(store)) => store,
        other => panic!("OpenCode keeps an OpenCode store, not {other:?}"),
    }
}

#[test]
fn database_paths() {
    // The data folder comes from OpenCode's description (`sources::roots`), the main database
    // from `$OPENCODE_DB` beside it.
    let data_of = |env: &Env| {
        resolve_roots(BUILT_IN, env)
            .get(AgentKind::OPENCODE)
            .map(Path::to_path_buf)
    };
    let env = Env::with_home("/home/dev");
    let data = data_of(&env).expect("a data folder");
    assert_eq!(data, PathBuf::from("/home/dev/.local/share/opencode"));
    let xdg = Env {
        xdg_data_home: Some(PathBuf::from("/xdg")),
        ..env.clone()
    };
    assert_eq!(data_of(&xdg), Some(PathBuf::from("/xdg/opencode")));
    let store = opencode_store();
    let main = |named: Option<&str>| stores::opencode_main_db(&data, store, named.map(Path::new));
    assert_eq!(main(None), Some(data.join("opencode.db")));
    assert_eq!(main(Some("beta.db")), Some(data.join("beta.db")));
    assert_eq!(main(Some("/tmp/oc.db")), Some(PathBuf::from("/tmp/oc.db")));
    assert_eq!(main(Some(":memory:")), None);
    assert_eq!(main(Some("  ")), Some(data.join("opencode.db")));
}

#[test]
fn channel_databases_are_found_beside_the_main_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("opencode");
    std::fs::create_dir(&data).expect("data dir");
    for name in [
        "opencode.db",
        "opencode-beta.db",
        "opencode-beta.db-wal",
        "opencode.db-shm",
        "other.db",
    ] {
        std::fs::write(data.join(name), b"").expect("touch");
    }
    let store = opencode_store();
    let main = stores::opencode_main_db(&data, store, None);
    let found = stores::opencode_databases(&data, store, main.as_deref());
    assert_eq!(
        found,
        vec![data.join("opencode.db"), data.join("opencode-beta.db")]
    );
}

#[test]
fn processes() {
    let process = |name: &str, exe: Option<&str>, cmd: &[&str]| ProcessInfo {
        pid: 7,
        ppid: None,
        name: name.to_string(),
        exe: exe.map(str::to_string),
        cmd: cmd.iter().map(|arg| arg.to_string()).collect(),
        cwd: None,
        start_time: Timestamp::from_millis(0),
        start_ticks: None,
    };
    let npm = process(
        "opencode.exe",
        Some("/usr/lib/node_modules/opencode-ai/bin/opencode.exe"),
        &["/usr/lib/node_modules/opencode-ai/bin/opencode.exe", "."],
    );
    let seen = opencode::recognise(&npm).expect("the npm binary is OpenCode");
    assert_eq!(
        (seen.role, seen.folder_arg.as_deref()),
        (ProcessRole::Interactive, Some("."))
    );
    let launcher = process(
        "node",
        Some("/usr/bin/node"),
        &["node", "/usr/lib/node_modules/opencode-ai/bin/opencode"],
    );
    assert_eq!(
        opencode::recognise(&launcher).map(|seen| seen.role),
        Some(ProcessRole::Helper)
    );
    let web = process(
        "opencode",
        None,
        &["/home/dev/.opencode/bin/opencode", "web", "--port", "4096"],
    );
    assert_eq!(
        opencode::recognise(&web).map(|seen| seen.role),
        Some(ProcessRole::Daemon)
    );
    let run = process(
        "opencode",
        None,
        &["opencode", "run", "--session", "ses_9", "go on"],
    );
    let seen = opencode::recognise(&run).expect("recognised");
    assert_eq!(
        (seen.role, seen.session_arg.as_deref()),
        (ProcessRole::Print, Some("ses_9"))
    );
    let other = process("node", Some("/usr/bin/node"), &["node", "server.js"]);
    assert_eq!(opencode::recognise(&other), None);
}

#[test]
fn a_part_updated_later_brings_its_session_into_an_incremental_read() {
    let (_dir, db) = sample_db();
    let writer = Connection::open(&db).expect("open for writing");
    let later = 1_795_950_000_000_i64 + 3_600_000;
    writer
        .execute(
            "UPDATE part SET time_updated = ?1 WHERE id = 'prt_c3a0002b'",
            [later],
        )
        .expect("touch one part");
    drop(writer);
    let mut problems = Vec::new();
    let batches = stores::read_opencode_since(
        AgentKind::OPENCODE,
        &db,
        Some(Timestamp::from_millis(later - 1)),
        read_now(),
        &mut problems,
    );
    let ids: Vec<&str> = batches.iter().map(|batch| batch.key.id.as_str()).collect();
    assert_eq!(ids, vec!["ses_5a1b2c3d6ffeC3questionQz8"]);
    assert_eq!(batches[0].last_write, Timestamp::from_millis(later));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    #[test]
    fn stored_rows_never_panic(
        message in ".{0,120}",
        part in ".{0,120}",
        role in proptest::prop_oneof![
            proptest::strategy::Just("user"),
            proptest::strategy::Just("assistant"),
        ],
        kind in proptest::prop_oneof![
            proptest::strategy::Just("text"),
            proptest::strategy::Just("tool"),
            proptest::strategy::Just("retry"),
            proptest::strategy::Just("reasoning"),
        ],
        number in proptest::prelude::any::<i64>(),
    ) {
        let session = SessionRow { id: "ses_p".to_string(), ..SessionRow::default() };
        let shaped_message = serde_json::json!({
            "role": role,
            "time": {"created": number, "completed": message},
            "finish": part,
            "error": {"name": message, "data": number},
        });
        let shaped_part = serde_json::json!({
            "type": kind,
            "callID": message,
            "tool": part,
            "text": part,
            "state": {"status": part, "time": {"start": number}, "input": {"questions": [message]}},
        });
        let rows = vec![
            MessageRow {
                id: "msg_1".to_string(),
                time_created: number,
                data: message.clone(),
                parts: vec![PartRow { id: "prt_1".to_string(), data: part.clone() }],
            },
            MessageRow {
                id: "msg_2".to_string(),
                time_created: number,
                data: shaped_message.to_string(),
                parts: vec![PartRow { id: "prt_2".to_string(), data: shaped_part.to_string() }],
            },
        ];
        let observations = opencode::observe_session(&session, &rows);
        proptest::prop_assert_eq!(&observations[0], &Observation::Reset);
        let _ = opencode::observe_legacy(message.as_bytes(), &[(part.into_bytes(), Vec::new())]);
    }
}
