//! The engine over whole temp homes: each agent's sample files laid out in its real folder layout,
//! read by `Engine::refresh` with a recorded process table, decided as the samples' READMEs say.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use slate::engine::{Engine, Options, ProcessSource};
use slate::model::{
    AgentKind, ProcessInfo, ProcessTable, ReasonCode, SessionKey, Status, Timestamp,
};
use slate::sources::files::Env;
use slate::tracker::Policy;

pub const FOLDER: &str = "/home/dev/acme-api";

/// The moment every copied sample file was last written.
pub fn written_at() -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(1_795_950_000_000)
}

pub fn stamp(at: SystemTime) -> Timestamp {
    let ms = at
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_millis();
    Timestamp::from_millis(i64::try_from(ms).expect("fits"))
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Copies a fixture tree, giving every file the same modification time.
pub fn copy_tree(from: &Path, to: &Path, modified: SystemTime) {
    std::fs::create_dir_all(to).expect("make folder");
    for entry in std::fs::read_dir(from).expect("read fixture folder") {
        let entry = entry.expect("fixture entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target, modified);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy fixture");
            set_modified(&target, modified);
        }
    }
}

pub fn set_modified(path: &Path, modified: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|file| file.set_modified(modified))
        .expect("set mtime");
}

/// `count` live processes running `cmd` in `folder`, started long before any sample was written.
pub fn processes(cmd: &[&str], folder: &str, count: u32) -> ProcessTable {
    ProcessTable {
        processes: (0..count)
            .map(|n| ProcessInfo {
                pid: 4000 + n,
                ppid: Some(1),
                name: slate::agents::program_name(cmd[0]),
                exe: None,
                cmd: cmd.iter().map(|arg| arg.to_string()).collect(),
                cwd: Some(folder.to_string()),
                start_time: Timestamp::from_millis(1_700_000_000_000),
                start_ticks: None,
            })
            .collect(),
    }
}

pub fn engine(home: &Path, table: ProcessTable) -> Engine {
    Engine::new(Options {
        env: Env {
            home: Some(home.to_path_buf()),
            ..Env::default()
        },
        policy: Policy::default(),
        scan: Default::default(),
        processes: ProcessSource::Recorded(table),
    })
}

pub fn state(engine: &Engine, agent: AgentKind, id: &str) -> (Status, ReasonCode) {
    let session = engine
        .tracker()
        .session(&SessionKey::new(agent, id))
        .unwrap_or_else(|| panic!("session {id} is tracked"));
    (session.status, session.session_state.reason.code)
}

/// A temp home with the sample OpenCode database and legacy JSON tree in their real places.
fn opencode_home() -> tempfile::TempDir {
    let temp = tempfile::tempdir().expect("temp dir");
    let data = temp.path().join(".local/share/opencode");
    std::fs::create_dir_all(&data).expect("data dir");
    std::fs::copy(
        fixtures().join("stores/opencode.db"),
        data.join("opencode.db"),
    )
    .expect("copy the db");
    copy_tree(
        &fixtures().join("stores/legacy-json-storage-pre-1.2/storage"),
        &data.join("storage"),
        written_at(),
    );
    temp
}

#[test]
fn opencode_sessions_are_read_from_the_home_and_decided() {
    // The six root sessions in the database (five plus a parent with a sub-agent) each get a
    // process, so every one is vouched for; the legacy JSON session is older than all of them.
    let expected = [
        (
            "ses_5a1b2c3d4ffeA1finishedXk9Q",
            Status::Waiting,
            ReasonCode::TurnFinished,
        ),
        (
            "ses_5a1b2c3d5ffeB2workingRt7P",
            Status::Working,
            ReasonCode::ToolRunning,
        ),
        (
            "ses_5a1b2c3d6ffeC3questionQz8",
            Status::Waiting,
            ReasonCode::Question,
        ),
        // A pending permission leaves no trace in the database (FORMATS.md §4.2): it reads
        // working, which the README allows without live information.
        (
            "ses_5a1b2c3d7ffeD4permissionA",
            Status::Working,
            ReasonCode::ToolRunning,
        ),
        (
            "ses_5a1b2c3d8ffeE5abortedMm2",
            Status::Waiting,
            ReasonCode::Interrupted,
        ),
        (
            "ses_5a1b2c3d9ffeF6parentTask1",
            Status::Working,
            ReasonCode::ToolRunning,
        ),
    ];
    for (id, status, reason) in expected {
        let home = opencode_home();
        let mut engine = engine(home.path(), processes(&["opencode"], FOLDER, 6));
        // Read once to learn the session's newest record, then decide a minute after it.
        engine.refresh(Timestamp::from_millis(1_795_950_000_000));
        let last = engine
            .tracker()
            .session(&SessionKey::new(AgentKind::OpenCode, id))
            .and_then(|session| session.row_time)
            .expect("the session has activity");
        engine.tick(last.plus(Duration::from_secs(60)));
        assert_eq!(
            engine.problems().total(),
            0,
            "{:?}",
            engine.problems().recent
        );
        assert_eq!(
            state(&engine, AgentKind::OpenCode, id),
            (status, reason),
            "{id}"
        );
    }
    let home = opencode_home();
    let mut engine = engine(home.path(), processes(&["opencode"], FOLDER, 6));
    engine.refresh(Timestamp::from_millis(1_795_950_000_000));
    assert_eq!(
        state(&engine, AgentKind::OpenCode, "ses_3f1e2d3c4ffeLegacyJsonA1").0,
        Status::Ended
    );
    assert!(engine
        .roots()
        .iter()
        .any(|root| root.agent == AgentKind::OpenCode && root.found));
}

#[test]
fn cursor_chats_are_read_from_the_home_and_decided() {
    const FINISHED: &str = "3b1f6a2e-9c4d-4e7a-8b21-5f0c9d3e7a11";
    const WORKING: &str = "7c2e8b4f-1a5d-4f9b-9c32-6a1d0e4f8b22";
    const NEW: &str = "9d3f0c5a-2b6e-4a0c-8d43-7b2e1f5a9c33";
    const CURSOR_CMD: &[&str] = &[
        "/home/dev/.local/bin/cursor-agent",
        "--use-system-ca",
        "/home/dev/.local/share/cursor-agent/versions/2026.11.20-1a2b3c4/index.js",
    ];
    let temp = tempfile::tempdir().expect("temp dir");
    let root = temp.path().join(".cursor");
    copy_tree(&fixtures().join("stores/dot-cursor"), &root, written_at());
    let mut engine = engine(temp.path(), processes(CURSOR_CMD, FOLDER, 3));
    // Every record of a chat store is dated by the store's last write.
    engine.refresh(stamp(written_at()).plus(Duration::from_secs(60)));
    assert_eq!(
        engine.problems().total(),
        0,
        "{:?}",
        engine.problems().recent
    );
    assert_eq!(
        state(&engine, AgentKind::CursorAgent, FINISHED),
        (Status::Waiting, ReasonCode::TurnFinished)
    );
    assert_eq!(
        state(&engine, AgentKind::CursorAgent, WORKING),
        (Status::Working, ReasonCode::ToolRunning)
    );
    assert_eq!(
        state(&engine, AgentKind::CursorAgent, NEW),
        (Status::Waiting, ReasonCode::NewSession)
    );
    // Nothing changed on disk: a second walk reads no store again.
    assert!(engine
        .refresh(stamp(written_at()).plus(Duration::from_secs(61)))
        .is_empty());
    let watched = engine.watch_paths();
    assert!(watched
        .iter()
        .any(|spec| spec.path == root.join("chats") && spec.recursive));
}

#[test]
fn a_locked_opencode_database_is_a_problem_then_read_on_the_next_refresh() {
    let home = opencode_home();
    let db = home.path().join(".local/share/opencode/opencode.db");
    let writer = rusqlite::Connection::open(&db).expect("open the db");
    writer
        .execute_batch("PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE;")
        .expect("lock the db");
    let mut engine = engine(home.path(), processes(&["opencode"], FOLDER, 6));
    let now = Timestamp::from_millis(1_795_950_000_000);
    engine.refresh(now);
    assert_eq!(engine.problems().counts.get("store_locked"), Some(&1));
    let key = SessionKey::new(AgentKind::OpenCode, "ses_5a1b2c3d4ffeA1finishedXk9Q");
    assert!(engine.tracker().session(&key).is_none());
    writer.execute_batch("COMMIT;").expect("unlock");
    drop(writer);
    engine.refresh(now);
    assert!(engine.tracker().session(&key).is_some());
}
