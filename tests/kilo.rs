//! Tests of the Kilo Code CLI adapter: the real `kilo.db` stores of Kilo Code 7.7.9 read by the
//! engine in a temp HOME and decided, the database's names, the process table, and every cut of
//! every recorded row.
//!
//! Fixtures live in `fixtures/transcripts/kilo/7.7.9/<moment>/kilo.db`: each is the store the real
//! CLI wrote against the fake model (fixtures/recorder/agents/kilo.sh), copied with its `-wal` and
//! then checkpointed into the one file (docs/formats.md §16.2).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;
use slate::agents::kilo::{recognise, DESCRIPTION};
use slate::agents::opencode::{observe_session_counted, MessageRow, PartRow, SessionRow};
use slate::agents::{Observation, ProcessRole, RecordKind, StoreKind};
use slate::model::{AgentKind, ProcessInfo, ProcessTable, ReasonCode, Status, Timestamp};
use slate::sources::roots::{resolve_roots, Env};
use slate::sources::stores;

use crate::engine::{engine, state};

/// The folder every recorded session ran in.
const PROJECT: &str = "/work/research/kilocode/acme-api";

fn fixture(moment: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/transcripts/kilo/7.7.9")
        .join(moment)
        .join("kilo.db")
}

const MOMENTS: &[&str] = &[
    "finished",
    "tool_running",
    "permission",
    "permission-after-approve-and-reject",
    "question",
    "question-answered",
    "interrupted_esc_tool",
];

/// A temp HOME with one recorded store in Kilo Code's data folder.
fn home_with(moment: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("temp dir");
    let data = home.path().join(".local/share/kilo");
    std::fs::create_dir_all(&data).expect("data dir");
    std::fs::copy(fixture(moment), data.join("kilo.db")).expect("copy the store");
    home
}

/// `kilo` running in the recorded project, as the native binary's process shows.
fn kilo_in(folder: &str) -> ProcessTable {
    ProcessTable {
        processes: vec![ProcessInfo {
            pid: 4100,
            ppid: Some(4099),
            name: "kilo".to_string(),
            exe: Some(NATIVE.to_string()),
            cmd: vec![NATIVE.to_string()],
            cwd: Some(folder.to_string()),
            start_time: Timestamp::from_millis(1_700_000_000_000),
            start_ticks: None,
        }],
    }
}

const NATIVE: &str = "/usr/lib/node_modules/@kilocode/cli-linux-x64/bin/kilo";

/// The one session of a recorded store, and when it was last written.
fn session_of(moment: &str) -> (String, Timestamp) {
    let connection =
        Connection::open_with_flags(fixture(moment), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open");
    let (id, updated): (String, i64) = connection
        .query_row("SELECT id, MAX(time_updated) FROM session", [], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .expect("a session");
    let newest: i64 = connection
        .query_row("SELECT MAX(time_updated) FROM part", [], |row| row.get(0))
        .expect("parts");
    (id, Timestamp::from_millis(updated.max(newest)))
}

/// What the engine decides for a recorded store with `kilo` live in its folder, `after` the last
/// write.
fn decided(moment: &str, after: Duration) -> (Status, ReasonCode) {
    let home = home_with(moment);
    let (id, written) = session_of(moment);
    let mut engine = engine(home.path(), kilo_in(PROJECT));
    engine.refresh(written.plus(after));
    assert_eq!(
        engine.problems().total(),
        0,
        "{moment}: {:?}",
        engine.problems().recent
    );
    // Every part of a real store is one OpenCode's reader knows: nothing counts as unread.
    let session = engine
        .sessions()
        .into_iter()
        .find(|session| session.agent == AgentKind::KILO && session.id.as_str() == id)
        .expect("the session is listed");
    assert_eq!(session.unread, None, "{moment}");
    state(&engine, AgentKind::KILO, &id)
}

#[test]
fn recorded_moments_are_decided() {
    let soon = Duration::from_secs(2);
    let later = Duration::from_secs(60);
    assert_eq!(
        decided("finished", soon),
        (Status::Waiting, ReasonCode::TurnFinished)
    );
    assert_eq!(
        decided("tool_running", later),
        (Status::Working, ReasonCode::ToolRunning)
    );
    // The permission dialog leaves no trace on disk: the bash part reads as a running tool
    // (docs/formats.md §16.3). The screen tells (tests/screens.rs).
    assert_eq!(
        decided("permission", soon),
        (Status::Working, ReasonCode::ToolRunning)
    );
    assert_eq!(
        decided("question", later),
        (Status::Waiting, ReasonCode::Question)
    );
    assert_eq!(
        decided("question-answered", soon),
        (Status::Waiting, ReasonCode::TurnFinished)
    );
    assert_eq!(
        decided("interrupted_esc_tool", soon),
        (Status::Waiting, ReasonCode::Interrupted)
    );
}

#[test]
fn a_rejected_permission_ends_the_turn() {
    // Approved once (the file was made, the model finished), then rejected: the rejected call's
    // step is the last one, and no model call follows it.
    let (status, _) = decided(
        "permission-after-approve-and-reject",
        Duration::from_secs(2),
    );
    assert_eq!(status, Status::Waiting);
}

#[test]
fn the_store_names_its_session_and_version() {
    let mut problems = Vec::new();
    let batches = stores::read_opencode_since(
        AgentKind::KILO,
        &fixture("tool_running"),
        None,
        Timestamp::from_millis(1_796_200_000_000),
        &mut problems,
    );
    assert_eq!(problems, Vec::new());
    let [batch] = batches.as_slice() else {
        panic!("one session: {batches:?}");
    };
    assert_eq!(batch.key.agent, AgentKind::KILO);
    let info = batch
        .observations
        .iter()
        .find_map(|observation| match observation {
            Observation::Info(info) => Some(info),
            _ => None,
        })
        .expect("an info");
    assert_eq!(info.cli_version.as_deref(), Some("7.7.9"));
    assert_eq!(info.cwd.as_deref(), Some(PROJECT));
    assert_eq!(info.model.as_deref(), Some("fake-model"));
    let call = batch
        .observations
        .iter()
        .find_map(|observation| match observation {
            Observation::Record(record) => match &record.kind {
                RecordKind::ToolCall { name, input, .. } => Some((name.clone(), input.clone())),
                _ => None,
            },
            _ => None,
        });
    let (name, input) = call.expect("the bash call");
    assert_eq!(name, "bash");
    assert_eq!(
        input.map(|input| input.text),
        Some("bash scripts/long-task.sh".to_string())
    );
}

#[test]
fn database_names_and_folder() {
    let store = match DESCRIPTION.store() {
        Some(StoreKind::OpenCode(store)) => store,
        other => panic!("Kilo Code keeps an OpenCode-shaped store, not {other:?}"),
    };
    let env = Env::with_home("/home/dev");
    let roots = resolve_roots(slate::agents::BUILT_IN, &env);
    let data = roots.get(AgentKind::KILO).expect("a data folder");
    assert_eq!(data, Path::new("/home/dev/.local/share/kilo"));
    let main = |named: Option<&str>| stores::opencode_main_db(data, store, named.map(Path::new));
    assert_eq!(main(None), Some(data.join("kilo.db")));
    assert_eq!(main(Some("/tmp/k.db")), Some(PathBuf::from("/tmp/k.db")));
    assert_eq!(main(Some(":memory:")), None);

    let dir = tempfile::tempdir().expect("temp dir");
    for name in [
        "kilo.db",
        "kilo-dev.db",
        "kilo.db-wal",
        "opencode.db",
        "kilo-.db",
    ] {
        std::fs::write(dir.path().join(name), b"").expect("touch");
    }
    let main = stores::opencode_main_db(dir.path(), store, None);
    assert_eq!(
        stores::opencode_databases(dir.path(), store, main.as_deref()),
        vec![dir.path().join("kilo.db"), dir.path().join("kilo-dev.db")]
    );
}

fn process(name: &str, exe: Option<&str>, cmd: &[&str]) -> ProcessInfo {
    ProcessInfo {
        pid: 7,
        ppid: None,
        name: name.to_string(),
        exe: exe.map(str::to_string),
        cmd: cmd.iter().map(|arg| arg.to_string()).collect(),
        cwd: Some(PROJECT.to_string()),
        start_time: Timestamp::from_millis(0),
        start_ticks: None,
    }
}

#[test]
fn processes() {
    let role = |info: &ProcessInfo| recognise(info).map(|seen| (seen.agent, seen.role));
    // The native binary, with only its path for argv, as recorded.
    let native = process("kilo", Some(NATIVE), &[NATIVE]);
    assert_eq!(
        role(&native),
        Some((AgentKind::KILO, ProcessRole::Interactive))
    );
    // The copy the npm wrapper's install script leaves beside its launchers.
    let hidden = "/usr/lib/node_modules/@kilocode/cli/bin/.kilo";
    assert_eq!(
        role(&process(".kilo", Some(hidden), &[hidden, "/work/acme"])).map(|(_, role)| role),
        Some(ProcessRole::Interactive)
    );
    let seen = recognise(&process(
        "kilo",
        None,
        &["kilo", "/work/acme", "-s", "ses_1"],
    ))
    .expect("recognised");
    assert_eq!(seen.folder_arg.as_deref(), Some("/work/acme"));
    assert_eq!(seen.session_arg.as_deref(), Some("ses_1"));
    // The node launchers start the native binary: helpers.
    for launcher in ["kilo", "kilocode"] {
        let script = format!("/usr/lib/node_modules/@kilocode/cli/bin/{launcher}");
        let node = process("node", Some("/usr/bin/node"), &["node", &script]);
        assert_eq!(role(&node), Some((AgentKind::KILO, ProcessRole::Helper)));
    }
    let kind = |cmd: &[&str]| role(&process("kilo", None, cmd)).map(|(_, role)| role);
    assert_eq!(kind(&["kilo", "run", "fix it"]), Some(ProcessRole::Print));
    assert_eq!(kind(&["kilo", "serve"]), Some(ProcessRole::Daemon));
    assert_eq!(kind(&["kilo", "daemon"]), Some(ProcessRole::Daemon));
    assert_eq!(
        kind(&["kilo", "session", "list"]),
        Some(ProcessRole::Helper)
    );
    assert_eq!(kind(&["kilo", "--version"]), Some(ProcessRole::Helper));
    // Not Kilo Code: OpenCode, and a node script that only has kilo in its name.
    assert_eq!(recognise(&process("opencode", None, &["opencode"])), None);
    let other = process("node", None, &["node", "/home/dev/kilometre.js"]);
    assert_eq!(recognise(&other), None);
}

/// The recorded rows of a store: its session and its messages with their parts.
fn rows(moment: &str) -> (SessionRow, Vec<MessageRow>) {
    let connection =
        Connection::open_with_flags(fixture(moment), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open");
    let session = connection
        .query_row(
            "SELECT id, directory, title, version, time_created, time_updated FROM session",
            [],
            |row| {
                Ok(SessionRow {
                    id: row.get(0)?,
                    directory: row.get(1)?,
                    title: row.get(2)?,
                    version: row.get(3)?,
                    time_created: row.get(4)?,
                    time_updated: row.get(5)?,
                    ..SessionRow::default()
                })
            },
        )
        .expect("the session");
    let mut messages: Vec<MessageRow> = connection
        .prepare("SELECT id, time_created, data FROM message ORDER BY time_created, id")
        .expect("prepare")
        .query_map([], |row| {
            Ok(MessageRow {
                id: row.get(0)?,
                time_created: row.get(1)?,
                data: row.get(2)?,
                parts: Vec::new(),
            })
        })
        .expect("query")
        .map(|row| row.expect("row"))
        .collect();
    for message in &mut messages {
        message.parts = connection
            .prepare("SELECT id, data FROM part WHERE message_id = ?1 ORDER BY id")
            .expect("prepare")
            .query_map([&message.id], |row| {
                Ok(PartRow {
                    id: row.get(0)?,
                    data: row.get(1)?,
                })
            })
            .expect("query")
            .map(|row| row.expect("row"))
            .collect();
    }
    (session, messages)
}

#[test]
fn every_cut_of_every_recorded_row_reads_or_is_refused_without_panicking() {
    for moment in MOMENTS {
        let (session, messages) = rows(moment);
        for (m, message) in messages.iter().enumerate() {
            let cuts = |text: &str| {
                (0..text.len())
                    .filter(|at| text.is_char_boundary(*at))
                    .map(|at| text[..at].to_string())
                    .collect::<Vec<_>>()
            };
            for cut in cuts(&message.data) {
                let mut damaged = messages.clone();
                damaged[m].data = cut;
                let (observations, errors) = observe_session_counted(&session, &damaged);
                assert!(matches!(observations.first(), Some(Observation::Reset)));
                assert!(errors.len() <= 1, "{moment}: {errors:?}");
            }
            for (p, part) in message.parts.iter().enumerate() {
                for cut in cuts(&part.data) {
                    let mut damaged = messages.clone();
                    damaged[m].parts[p].data = cut;
                    let (_, errors) = observe_session_counted(&session, &damaged);
                    assert!(errors.len() <= 1, "{moment}: {errors:?}");
                }
            }
        }
    }
}

#[test]
fn hostile_rows_are_refused_and_huge_ones_read() {
    let (session, messages) = rows("question");
    let mut hostile = messages.clone();
    let last = hostile.len() - 1;
    hostile[last].data = "\u{0}\u{feff}[[[[".repeat(10_000);
    hostile[0].parts[0].data = "{\"type\":\"text\",\"text\":".to_string() + &"9".repeat(100_000);
    let (observations, errors) = observe_session_counted(&session, &hostile);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(matches!(observations.first(), Some(Observation::Reset)));

    // A prompt of a megabyte is read whole, and a tool call's input of a megabyte is cut short.
    let mut huge = messages;
    let prompt = "x".repeat(1 << 20);
    huge[0].parts[0].data = serde_json::json!({"type": "text", "text": prompt}).to_string();
    let (observations, errors) = observe_session_counted(&session, &huge);
    assert_eq!(errors, Vec::new());
    let read = observations
        .iter()
        .find_map(|observation| match observation {
            Observation::Record(record) => match &record.kind {
                RecordKind::Prompt { text } => Some(text.len()),
                _ => None,
            },
            _ => None,
        });
    assert_eq!(read, Some(1 << 20));
}
