//! The engine over whole temp homes: each agent's sample files laid out in its real folder layout,
//! read by `Engine::refresh` with a recorded process table, decided as the samples' READMEs say.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use slate::engine::{Engine, Options, ProcessSource};
use slate::model::{
    AgentKind, ProblemKind, ProcessInfo, ProcessTable, ReasonCode, SessionKey, Status, Timestamp,
};
use slate::sources::roots::Env;
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
        registry: slate::agents::BUILT_IN,
        terminals: slate::terminals::BUILT_IN,
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
        // A pending permission leaves no trace in the database (docs/formats.md §4.2): it reads
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
    // The newest sample record was written at 11:05:03: the database is read after that (a
    // record dated after the read would be read as the time of the read).
    let read = Timestamp::from_millis(1_795_950_000_000 + 310_000);
    for (id, status, reason) in expected {
        let home = opencode_home();
        let mut engine = engine(home.path(), processes(&["opencode"], FOLDER, 6));
        // Read once to learn the session's newest record, then decide a minute after it.
        engine.refresh(read);
        let last = engine
            .tracker()
            .session(&SessionKey::new(AgentKind::OPENCODE, id))
            .and_then(|session| session.row_time)
            .expect("the session has activity");
        engine.tick(last.plus(Duration::from_secs(60)).max(read));
        assert_eq!(
            engine.problems().total(),
            0,
            "{:?}",
            engine.problems().recent
        );
        assert_eq!(
            state(&engine, AgentKind::OPENCODE, id),
            (status, reason),
            "{id}"
        );
    }
    let home = opencode_home();
    let mut engine = engine(home.path(), processes(&["opencode"], FOLDER, 6));
    engine.refresh(read);
    assert_eq!(
        state(&engine, AgentKind::OPENCODE, "ses_3f1e2d3c4ffeLegacyJsonA1").0,
        Status::Ended
    );
    assert!(engine
        .roots()
        .iter()
        .any(|root| root.agent == AgentKind::OPENCODE && root.found));
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
    // Every record of a chat store is dated by the store's last write. The chats say they were
    // created up to 11:18:40, after the stores' files were written: they are read after that.
    let read = stamp(written_at()).plus(Duration::from_secs(20 * 60));
    engine.refresh(read);
    assert_eq!(
        engine.problems().total(),
        0,
        "{:?}",
        engine.problems().recent
    );
    assert_eq!(
        state(&engine, AgentKind::CURSOR_AGENT, FINISHED),
        (Status::Waiting, ReasonCode::TurnFinished)
    );
    assert_eq!(
        state(&engine, AgentKind::CURSOR_AGENT, WORKING),
        (Status::Working, ReasonCode::ToolRunning)
    );
    assert_eq!(
        state(&engine, AgentKind::CURSOR_AGENT, NEW),
        (Status::Waiting, ReasonCode::NewSession)
    );
    // Nothing changed on disk: a second walk reads no store again.
    assert!(engine.refresh(read.plus(Duration::from_secs(1))).is_empty());
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
    assert_eq!(
        engine.problems().counts.get(&ProblemKind::StoreLocked),
        Some(&1)
    );
    let key = SessionKey::new(AgentKind::OPENCODE, "ses_5a1b2c3d4ffeA1finishedXk9Q");
    assert!(engine.tracker().session(&key).is_none());
    writer.execute_batch("COMMIT;").expect("unlock");
    drop(writer);
    engine.refresh(now);
    assert!(engine.tracker().session(&key).is_some());
}

const OLD_CLAUDE: &str = "2b9e4f10-8c7d-4e6f-a5b4-c3d2e1f0a9b8";

fn old_claude_line(n: usize) -> String {
    format!(
        r#"{{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/dev/acme-api","sessionId":"{OLD_CLAUDE}","version":"2.1.332","type":"user","message":{{"role":"user","content":"prompt {n}"}},"uuid":"u{n}","timestamp":"2026-10-28T09:10:00.020Z"}}"#
    ) + "\n"
}

/// A Claude Code transcript last written 30 days ago, in a temp home.
fn thirty_day_old_transcript() -> (tempfile::TempDir, PathBuf) {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = temp
        .path()
        .join(".claude/projects/-home-dev-acme-api")
        .join(format!("{OLD_CLAUDE}.jsonl"));
    std::fs::create_dir_all(path.parent().expect("parent")).expect("folder");
    let text: String = (0..3).map(old_claude_line).collect();
    std::fs::write(&path, text).expect("write");
    set_modified(
        &path,
        SystemTime::now() - Duration::from_secs(30 * 24 * 3600),
    );
    (temp, path)
}

fn now() -> Timestamp {
    stamp(SystemTime::now())
}

#[test]
fn an_old_transcript_with_no_process_is_known_closed_without_being_read() {
    let (temp, path) = thirty_day_old_transcript();
    let mut engine = engine(temp.path(), ProcessTable::default());
    let key = SessionKey::new(AgentKind::CLAUDE_CODE, OLD_CLAUDE);
    let changes = engine.refresh(now());
    assert!(changes.is_empty(), "history seen closed is no change");
    let totals = engine.read_totals();
    assert_eq!((totals.reads, totals.bytes_read, totals.skipped), (0, 0, 1));
    let session = engine
        .tracker()
        .session(&key)
        .expect("the session is known");
    assert_eq!(session.status, Status::Ended);
    assert_eq!(session.last_prompt, None, "nothing was read");
    assert_eq!(engine.sessions().len(), 1);
    // Kept as a small summary, yet found and shown like any session.
    assert!(engine.tracker().closed().contains_key(&key));
    assert_eq!(engine.full_sessions().count(), 0);
    assert_eq!(
        engine.find(&OLD_CLAUDE[..8]).expect("found by prefix"),
        session
    );
    assert!(!engine.evidence(&key).is_empty());

    // Written again, it is read properly from its start: every line, not an assumed offset.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open");
    std::io::Write::write_all(&mut file, old_claude_line(3).as_bytes()).expect("append");
    drop(file);
    let changes = engine.refresh(now());
    let change = changes
        .iter()
        .find(|change| change.key == key)
        .expect("written again, it changes");
    assert_eq!(change.previous, Some(Status::Ended), "{change:?}");
    assert!(!engine.tracker().closed().contains_key(&key));
    assert_eq!(engine.full_sessions().count(), 1);
    let totals = engine.read_totals();
    assert_eq!(totals.reads, 1);
    assert_eq!(
        totals.bytes_read,
        std::fs::metadata(&path).expect("meta").len()
    );
    let session = engine
        .tracker()
        .session(&SessionKey::new(AgentKind::CLAUDE_CODE, OLD_CLAUDE))
        .expect("the session is known");
    assert_eq!(session.last_prompt.as_deref(), Some("prompt 3"));
}

#[test]
fn an_old_transcript_is_read_when_closed_sessions_are_asked_for() {
    let (temp, _path) = thirty_day_old_transcript();
    let mut options = Options {
        env: Env {
            home: Some(temp.path().to_path_buf()),
            ..Env::default()
        },
        policy: Policy::default(),
        scan: Default::default(),
        processes: ProcessSource::Recorded(ProcessTable::default()),
        registry: slate::agents::BUILT_IN,
        terminals: slate::terminals::BUILT_IN,
    };
    options.scan.closed_detail = true;
    let mut engine = Engine::new(options);
    engine.refresh(now());
    assert_eq!(engine.read_totals().skipped, 0);
    assert_eq!(engine.read_totals().reads, 1);
    let session = engine
        .tracker()
        .session(&SessionKey::new(AgentKind::CLAUDE_CODE, OLD_CLAUDE))
        .expect("the session is known");
    assert_eq!(session.status, Status::Ended);
    assert_eq!(session.last_prompt.as_deref(), Some("prompt 2"));
    assert_eq!(session.folder.as_deref(), Some(FOLDER));
}

#[test]
fn an_old_transcript_is_read_when_a_process_started_before_it_was_written() {
    let (temp, _path) = thirty_day_old_transcript();
    // A claude process that has run for two months could have written it: it is read.
    let mut table = processes(&["claude"], FOLDER, 1);
    table.processes[0].start_time = now().minus(Duration::from_secs(60 * 24 * 3600));
    let mut engine = engine(temp.path(), table);
    engine.refresh(now());
    assert_eq!(engine.read_totals().skipped, 0);
    assert_eq!(engine.read_totals().reads, 1);
}

const GEMINI_CMD: &[&str] = &[
    "/usr/bin/node",
    "--max-old-space-size=8192",
    "/usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js",
];

const LEGACY_GEMINI: &str =
    "tmp/6689668a49dc648b376787d8cde1d55e418968e916b4efa79d849fba7fb28a1f/chats/session-2026-01-12T08-00-0b1c2d3e.json";

fn at(text: &str) -> SystemTime {
    let stamp = Timestamp::parse_rfc3339(text).expect("valid time");
    UNIX_EPOCH + Duration::from_millis(u64::try_from(stamp.millis()).expect("after 1970"))
}

/// A temp home with the sample `~/.gemini`: the chats last written just before their newest
/// records would be read, the legacy chat in January.
fn gemini_home() -> tempfile::TempDir {
    let temp = tempfile::tempdir().expect("temp dir");
    let root = temp.path().join(".gemini");
    copy_tree(
        &fixtures().join("transcripts/gemini-cli/dot-gemini"),
        &root,
        at("2026-11-28T10:39:00Z"),
    );
    set_modified(&root.join(LEGACY_GEMINI), at("2026-01-12T08:30:00Z"));
    temp
}

/// Three Gemini processes in the sample project, started before the sample chats.
fn gemini_processes() -> ProcessTable {
    let mut table = processes(GEMINI_CMD, FOLDER, 3);
    for process in &mut table.processes {
        process.start_time = stamp(at("2026-11-28T10:00:00Z"));
    }
    table
}

#[test]
fn gemini_chats_are_read_from_the_home_and_decided() {
    let expected = [
        // The finished chat's sub-agent, also finished, rolls up into it.
        (
            "5e1f2a3b-6c7d-4e8f-9a0b-1c2d3e4f5a6b",
            Status::Waiting,
            ReasonCode::TurnFinished,
        ),
        // Running a tool or waiting for approval: only the terminal title tells them apart, and
        // that needs a live process (docs/formats.md §3); from the file it is a running tool.
        ("6f2a3b4c", Status::Working, ReasonCode::ToolRunning),
        ("7a3b4c5d", Status::Waiting, ReasonCode::Interrupted),
    ];
    for (id, status, reason) in expected {
        let home = gemini_home();
        let mut engine = engine(home.path(), gemini_processes());
        engine.refresh(stamp(at("2026-11-28T11:00:00Z")));
        assert_eq!(
            engine.problems().total(),
            0,
            "{:?}",
            engine.problems().recent
        );
        let session = engine
            .sessions()
            .into_iter()
            .find(|session| session.id.as_str().starts_with(id))
            .unwrap_or_else(|| panic!("session {id} is known"));
        assert_eq!(session.folder.as_deref(), Some(FOLDER), "{id}");
        // The key is the full session id from the metadata line, not the file name's 8 characters.
        assert_eq!(session.id.as_str().len(), 36, "{id}");
        let last = session.row_time.expect("the session has records");
        engine.tick(last.plus(Duration::from_secs(60)));
        let key = SessionKey::new(AgentKind::GEMINI_CLI, session.id.as_str());
        let decided = engine.tracker().session(&key).expect("still known");
        assert_eq!(
            (decided.status, decided.session_state.reason.code),
            (status, reason),
            "{id}"
        );
    }
    let home = gemini_home();
    let mut engine = engine(home.path(), gemini_processes());
    engine.refresh(stamp(at("2026-11-28T11:00:00Z")));
    // Four chats: the sub-agent is not a session of its own.
    assert_eq!(engine.sessions().len(), 4);
    let legacy = engine
        .sessions()
        .into_iter()
        .find(|session| session.id.as_str().starts_with("0b1c2d3e"))
        .expect("the legacy chat is known");
    assert_eq!(legacy.status, Status::Ended);
    assert!(engine
        .watch_paths()
        .iter()
        .any(|spec| spec.path == home.path().join(".gemini/tmp") && spec.recursive));
}

#[test]
fn gemini_folders_come_from_project_root_files_and_the_registry() {
    let home = gemini_home();
    let root = home.path().join(".gemini");
    // Without the registry, `.project_root` still names the folder; the legacy hash folder has
    // none, so it has no folder.
    std::fs::remove_file(root.join("projects.json")).expect("remove the registry");
    let mut options = Options {
        env: Env {
            home: Some(home.path().to_path_buf()),
            ..Env::default()
        },
        policy: Policy::default(),
        scan: Default::default(),
        processes: ProcessSource::Recorded(ProcessTable::default()),
        registry: slate::agents::BUILT_IN,
        terminals: slate::terminals::BUILT_IN,
    };
    options.scan.closed_detail = true;
    let mut engine = Engine::new(options.clone());
    engine.refresh(now());
    let folder_of = |engine: &Engine, prefix: &str| {
        engine
            .sessions()
            .into_iter()
            .find(|session| session.id.as_str().starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix} is known"))
            .folder
    };
    assert_eq!(folder_of(&engine, "7a3b4c5d").as_deref(), Some(FOLDER));
    assert_eq!(folder_of(&engine, "0b1c2d3e"), None);

    // With the registry back and `.project_root` gone, both come from `projects.json`: the slug
    // folder by its slug, the legacy folder by the hash of the root.
    std::fs::copy(
        fixtures().join("transcripts/gemini-cli/dot-gemini/projects.json"),
        root.join("projects.json"),
    )
    .expect("restore the registry");
    std::fs::remove_file(root.join("tmp/acme-api/.project_root")).expect("remove");
    let mut engine = Engine::new(options);
    engine.refresh(now());
    assert_eq!(folder_of(&engine, "7a3b4c5d").as_deref(), Some(FOLDER));
    assert_eq!(folder_of(&engine, "0b1c2d3e").as_deref(), Some(FOLDER));
    assert_eq!(
        engine.problems().total(),
        0,
        "{:?}",
        engine.problems().recent
    );
}
