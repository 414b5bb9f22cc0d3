//! cursor-agent: the generated chat stores in `fixtures/stores/dot-cursor`, read through
//! `sources::stores` and decided by the tracker, plus damaged stores, the process shapes of
//! docs/formats.md §5.4 and property tests that the byte decoders never panic.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use rusqlite::Connection;
use slate::agents::cursor::{self, CursorMeta, CursorRoot};
use slate::agents::BUILT_IN;
use slate::agents::{Observation, ProcessRole, RecordKind};
use slate::model::{
    AgentKind, ProblemKind, ProcessInfo, ReasonCode, SessionKey, Status, Timestamp,
};
use slate::sources::roots::{resolve_roots, Env};
use slate::sources::stores;
use slate::tracker::Batch;

use crate::opencode::decide_with_process;

const BUCKET: &str = "ce3fa0aa9e98006977055c78d826399a";
const FINISHED: &str = "3b1f6a2e-9c4d-4e7a-8b21-5f0c9d3e7a11";
const WORKING: &str = "7c2e8b4f-1a5d-4f9b-9c32-6a1d0e4f8b22";
const NEW: &str = "9d3f0c5a-2b6e-4a0c-8d43-7b2e1f5a9c33";

/// cursor-agent as `exec -a` leaves it: the bundled node, with argv[0] the `cursor-agent` path.
const CURSOR_CMD: &[&str] = &[
    "/home/dev/.local/bin/cursor-agent",
    "--use-system-ca",
    "/home/dev/.local/share/cursor-agent/versions/2026.11.20-1a2b3c4/index.js",
];

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("make folder");
    for entry in std::fs::read_dir(from).expect("read fixture folder") {
        let entry = entry.expect("fixture entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy fixture");
        }
    }
}

/// A copy of the sample `~/.cursor` in a temp folder.
fn sample_root() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("dot-cursor");
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/stores/dot-cursor"),
        &root,
    );
    (dir, root)
}

fn store(root: &Path, id: &str) -> PathBuf {
    root.join("chats").join(BUCKET).join(id).join("store.db")
}

fn read(store_db: &Path) -> (Option<Batch>, Vec<slate::model::Problem>) {
    let mut problems = Vec::new();
    let batch = stores::read_cursor_store(AgentKind::CURSOR_AGENT, store_db, &mut problems);
    (batch, problems)
}

fn records(batch: &Batch) -> Vec<RecordKind> {
    batch
        .observations
        .iter()
        .filter_map(|observation| match observation {
            Observation::Record(record) => {
                assert_eq!(record.at, None, "cursor records are undated");
                Some(record.kind.clone())
            }
            _ => None,
        })
        .collect()
}

fn expect_state(root: &Path, id: &str, status: Status, reason: ReasonCode) {
    let (batch, problems) = read(&store(root, id));
    assert_eq!(problems, Vec::new());
    let batch = batch.expect("the store was read");
    let key = SessionKey::new(AgentKind::CURSOR_AGENT, id);
    assert_eq!(batch.key, key);
    // Every record is dated by the store's last write, so that is the last record's time.
    let now = batch.last_write.plus(std::time::Duration::from_secs(60));
    let decided = decide_with_process(vec![batch], &key, CURSOR_CMD, now);
    assert_eq!(decided, (status, reason), "chat {id}");
}

#[test]
fn finished_chat_with_its_transcript_needs_you() {
    let (_dir, root) = sample_root();
    let (batch, _) = read(&store(&root, FINISHED));
    let kinds = records(&batch.expect("read"));
    assert_eq!(kinds.last(), Some(&RecordKind::TurnEnded { turn_id: None }));
    expect_state(&root, FINISHED, Status::Waiting, ReasonCode::TurnFinished);
}

#[test]
fn finished_chat_from_the_store_alone_needs_you() {
    let (_dir, root) = sample_root();
    std::fs::remove_dir_all(root.join("projects")).expect("drop the transcripts");
    let (batch, _) = read(&store(&root, FINISHED));
    let kinds = records(&batch.expect("read"));
    assert_eq!(kinds.last(), Some(&RecordKind::ModelText));
    expect_state(&root, FINISHED, Status::Waiting, ReasonCode::TurnFinished);
}

#[test]
fn tool_call_without_result_is_working() {
    let (_dir, root) = sample_root();
    expect_state(&root, WORKING, Status::Working, ReasonCode::ToolRunning);
}

#[test]
fn chat_without_conversation_is_new() {
    let (_dir, root) = sample_root();
    expect_state(&root, NEW, Status::Waiting, ReasonCode::NewSession);
}

#[test]
fn sample_observations() {
    let (_dir, root) = sample_root();
    let shown: Vec<(String, Vec<Observation>)> = [FINISHED, WORKING, NEW]
        .iter()
        .map(|id| {
            let (batch, _) = read(&store(&root, id));
            let batch = batch.expect("read");
            (batch.key.to_string(), batch.observations)
        })
        .collect();
    insta::assert_debug_snapshot!("cursor_sample_stores", shown);
}

#[test]
fn stores_and_paths_are_found() {
    let (_dir, root) = sample_root();
    let found = stores::cursor_stores(&root);
    assert_eq!(
        found,
        vec![
            store(&root, FINISHED),
            store(&root, WORKING),
            store(&root, NEW)
        ]
    );
    assert_eq!(
        stores::cursor_store_path(&root, "/home/dev/acme-api", WORKING),
        store(&root, WORKING)
    );
    assert!(stores::cursor_transcript_paths(&root, "/home/dev/acme-api", FINISHED)[0].is_file());
    // The root itself comes from cursor-agent's description (`sources::roots`).
    let root_of = |env: &Env| {
        resolve_roots(BUILT_IN, env)
            .get(AgentKind::CURSOR_AGENT)
            .map(Path::to_path_buf)
    };
    let env = Env::with_home("/home/dev");
    assert_eq!(root_of(&env), Some(PathBuf::from("/home/dev/.cursor")));
    let env = Env {
        xdg_config_home: Some(PathBuf::from("/xdg")),
        ..env
    };
    assert_eq!(root_of(&env), Some(PathBuf::from("/xdg/cursor")));
    let env = env.with_var("CURSOR_CONFIG_DIR", "/cfg");
    assert_eq!(root_of(&env), Some(PathBuf::from("/cfg")));
}

#[test]
fn corrupt_root_blob_is_a_counted_problem() {
    let (_dir, root) = sample_root();
    let path = store(&root, WORKING);
    let (batch, _) = read(&path);
    assert!(batch.is_some());
    let writer = Connection::open(&path).expect("open for writing");
    let meta_hex: String = writer
        .query_row("SELECT value FROM meta WHERE key = '0'", [], |row| {
            row.get(0)
        })
        .expect("meta row");
    let meta = cursor::decode_meta(&meta_hex).expect("meta decodes");
    let root_id = meta.latest_root_blob_id.expect("root id");
    // A length prefix that runs past the end of the blob.
    writer
        .execute(
            "UPDATE blobs SET data = ?1 WHERE id = ?2",
            rusqlite::params![vec![0x0a_u8, 0x20, 0x01, 0x02], root_id],
        )
        .expect("damage the root");
    drop(writer);
    let (batch, problems) = read(&path);
    assert!(batch.is_none());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].kind, ProblemKind::StoreCorrupt);
}

#[test]
fn corrupt_meta_hex_is_a_counted_problem() {
    let (_dir, root) = sample_root();
    let path = store(&root, FINISHED);
    let writer = Connection::open(&path).expect("open for writing");
    writer
        .execute("UPDATE meta SET value = 'zz7b' WHERE key = '0'", [])
        .expect("damage the meta row");
    drop(writer);
    let (batch, problems) = read(&path);
    assert!(batch.is_none());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].kind, ProblemKind::StoreCorrupt);
}

#[test]
fn unreadable_stores_are_counted_problems() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("chats/x/y/store.db");
    let (batch, problems) = read(&missing);
    assert!(batch.is_none());
    assert_eq!(problems, Vec::new());
    let noise = dir.path().join("store.db");
    std::fs::write(&noise, vec![0x5a_u8; 4096]).expect("write noise");
    let (batch, problems) = read(&noise);
    assert!(batch.is_none());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].kind, ProblemKind::StoreCorrupt);
}

#[test]
fn locked_store_is_a_counted_problem_until_the_writer_commits() {
    let (_dir, root) = sample_root();
    let path = store(&root, WORKING);
    let writer = Connection::open(&path).expect("open for writing");
    writer
        .execute_batch("BEGIN EXCLUSIVE")
        .expect("take the lock");
    let (batch, problems) = read(&path);
    assert!(batch.is_none());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].kind, ProblemKind::StoreLocked);
    writer.execute_batch("COMMIT").expect("release the lock");
    let (batch, problems) = read(&path);
    assert_eq!(problems, Vec::new());
    assert!(batch.is_some());
}

#[test]
fn meta_and_root_decode() {
    let meta = cursor::decode_meta(&hex(br#"{"agentId":"a-1","latestRootBlobId":"ABCD","name":"New Agent","mode":"default","createdAt":1795951000000,"lastUsedModel":"gpt-9"}"#))
        .expect("decodes");
    assert_eq!(
        meta,
        CursorMeta {
            agent_id: Some("a-1".to_string()),
            latest_root_blob_id: Some("abcd".to_string()),
            name: Some("New Agent".to_string()),
            mode: Some("default".to_string()),
            created_at: Some(Timestamp::from_millis(1_795_951_000_000)),
            last_used_model: Some("gpt-9".to_string()),
        }
    );
    assert!(cursor::decode_meta("abc").is_err());
    assert!(cursor::decode_meta(&hex(b"[1]")).is_err());

    let id = [7_u8; 32];
    let mut blob = vec![0x0a, 0x20];
    blob.extend_from_slice(&id);
    blob.extend_from_slice(&[0x28, 0x96, 0x01]); // field 5, varint 150: skipped
    blob.extend_from_slice(&[0x35, 1, 2, 3, 4]); // field 6, fixed32: skipped
    let uri = b"file:///home/dev/my%20app";
    blob.push(0x4a);
    blob.push(uri.len() as u8);
    blob.extend_from_slice(uri);
    let root = cursor::decode_root(&blob).expect("decodes");
    assert_eq!(root.message_ids, vec!["07".repeat(32)]);
    assert_eq!(root.workspace_path().as_deref(), Some("/home/dev/my app"));
}

#[test]
fn title_falls_back_to_the_name_then_the_first_query() {
    let meta = CursorMeta {
        agent_id: Some("a-1".to_string()),
        name: Some("New Agent".to_string()),
        ..CursorMeta::default()
    };
    let query =
        br#"{"role":"user","content":"<user_query>\n  fix the build\n</user_query>"}"#.to_vec();
    let context =
        br#"{"role":"user","content":[{"type":"text","text":"<user_info>os</user_info>"}]}"#
            .to_vec();
    let root = CursorRoot {
        message_ids: Vec::new(),
        workspace_uri: Some("file:///work/acme".to_string()),
    };
    let observations = cursor::observe_messages(&meta, None, Some(&root), &[context, query]);
    let Observation::Info(info) = &observations[1] else {
        panic!("the second observation is the chat's info");
    };
    assert_eq!(
        info.title.as_ref().map(|title| title.text.as_str()),
        Some("fix the build")
    );
    assert_eq!(info.cwd.as_deref(), Some("/work/acme"));
    assert_eq!(observations.len(), 3, "the context row says nothing");
    let named = CursorMeta {
        name: Some("Fix build".to_string()),
        ..meta
    };
    let observations = cursor::observe_messages(&named, Some(br#"{"title":""}"#), None, &[]);
    let Observation::Info(info) = &observations[1] else {
        panic!("the second observation is the chat's info");
    };
    assert_eq!(
        info.title.as_ref().map(|title| title.text.as_str()),
        Some("Fix build")
    );
}

#[test]
fn transcript_lines() {
    let lines: [(&[u8], Vec<RecordKind>); 5] = [
        (br#"{"type":"turn_ended","status":"completed"}"#, vec![RecordKind::TurnEnded { turn_id: None }]),
        (
            br#"{"role":"assistant","message":{"content":[{"type":"text","text":"Run it."},{"type":"tool_use","id":"t1","name":"Shell","input":{"command":"npm test"}}]}}"#,
            vec![RecordKind::ToolCall {
                call_id: "t1".to_string(),
                name: "Shell".to_string(),
                detail: Some("npm test".to_string()),
                input: slate::agents::CallInput::of("npm test"),
                kind: slate::agents::CallKind::Plain,
            }],
        ),
        (
            br#"{"role":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}"#,
            vec![RecordKind::ToolResult { call_id: "t1".to_string(), rejected: false }],
        ),
        (br#"{"type":"something_new"}"#, Vec::new()),
        (br#"{"role":"user","message":{"content":"<user_query>hi</user_query>"}}"#, vec![RecordKind::Prompt { text: "hi".to_string() }]),
    ];
    for (line, expected) in lines {
        let kinds: Vec<RecordKind> = cursor::observe_transcript_line(line)
            .expect("reads")
            .into_iter()
            .filter_map(|observation| match observation {
                Observation::Record(record) => Some(record.kind),
                _ => None,
            })
            .collect();
        assert_eq!(kinds, expected, "{}", String::from_utf8_lossy(line));
    }
    assert!(cursor::observe_transcript_line(b"{\"role\":").is_err());
    assert!(cursor::observe_transcript_line(b"[]").is_err());
    assert!(cursor::observe_transcript_line(&[0xff, 0xfe]).is_err());
}

#[test]
fn processes() {
    let process = |name: &str, cmd: &[&str]| ProcessInfo {
        pid: 9,
        ppid: None,
        name: name.to_string(),
        exe: Some(
            "/home/dev/.local/share/cursor-agent/versions/2026.11.20-1a2b3c4/node".to_string(),
        ),
        cmd: cmd.iter().map(|arg| arg.to_string()).collect(),
        cwd: None,
        start_time: Timestamp::from_millis(0),
        start_ticks: None,
    };
    let with = |extra: &[&str]| {
        let mut cmd = vec!["agent", "--use-system-ca", CURSOR_CMD[2]];
        cmd.extend_from_slice(extra);
        cursor::recognise(&process("node", &cmd)).expect("recognised")
    };
    let seen = with(&["--workspace", "/work/acme", "--resume", WORKING]);
    assert_eq!(seen.role, ProcessRole::Interactive);
    assert_eq!(seen.folder_arg.as_deref(), Some("/work/acme"));
    assert_eq!(seen.session_arg.as_deref(), Some(WORKING));
    let seen = with(&["--resume", "fix the tests"]);
    assert_eq!(seen.session_arg, None, "a bare --resume opens the picker");
    assert_eq!(
        with(&["-p", "--output-format", "json", "go"]).role,
        ProcessRole::Print
    );
    assert_eq!(with(&["ls"]).role, ProcessRole::Helper);
    assert_eq!(
        with(&["status", "--format", "json"]).role,
        ProcessRole::Helper
    );
    assert_eq!(with(&["acp"]).role, ProcessRole::Daemon);
    // Older installs, without `exec -a`: argv[0] is the node binary itself.
    let old = process(
        "node",
        &[
            "/home/dev/.local/share/cursor-agent/versions/2025.01.01-aa/node",
            CURSOR_CMD[2],
        ],
    );
    assert_eq!(
        cursor::recognise(&old).map(|seen| seen.role),
        Some(ProcessRole::Interactive)
    );
    let mut binary = process("cursor-agent", &["cursor-agent", "--print", "hi"]);
    binary.exe = Some("/usr/local/bin/cursor-agent".to_string());
    assert_eq!(
        cursor::recognise(&binary).map(|seen| seen.role),
        Some(ProcessRole::Print)
    );
    let plain_node = process("node", &["node", "/srv/app/index.js"]);
    assert_eq!(cursor::recognise(&plain_node), None);
    let other_agent = process("agent", &["/usr/bin/agent", "--daemon"]);
    assert_eq!(cursor::recognise(&other_agent), None);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn decode_root_never_panics(blob in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = cursor::decode_root(&blob);
    }

    #[test]
    fn decode_root_reads_what_was_written(
        ids in proptest::collection::vec(proptest::array::uniform32(any::<u8>()), 0..8),
        path in "/[a-z]{1,12}(/[a-z]{1,12}){0,3}",
    ) {
        let mut blob = Vec::new();
        for id in &ids {
            blob.push(0x0a);
            blob.push(32);
            blob.extend_from_slice(id);
        }
        let uri = format!("file://{path}");
        blob.push(0x4a);
        blob.push(uri.len() as u8);
        blob.extend_from_slice(uri.as_bytes());
        let root = cursor::decode_root(&blob).expect("a well-formed root decodes");
        let expected: Vec<String> = ids.iter().map(|id| hex(id)).collect();
        prop_assert_eq!(root.message_ids, expected);
        prop_assert_eq!(root.workspace_uri, Some(uri));
    }

    #[test]
    fn decode_meta_never_panics(text in ".{0,200}") {
        let _ = cursor::decode_meta(&text);
    }

    #[test]
    fn decode_meta_never_panics_on_hex_of_anything(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = cursor::decode_meta(&hex(&bytes));
    }

    #[test]
    fn transcript_lines_never_panic(line in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = cursor::observe_transcript_line(&line);
    }

    #[test]
    fn json_shaped_transcript_lines_never_panic(
        role in prop_oneof![Just("user"), Just("assistant"), Just("tool"), Just("x")],
        kind in prop_oneof![Just("text"), Just("tool_use"), Just("tool_result"), Just("thinking")],
        text in ".{0,40}",
    ) {
        let line = serde_json::json!({
            "role": role,
            "message": {"content": [{"type": kind, "text": text, "id": text, "tool_use_id": 3, "input": text}]}
        });
        let _ = cursor::observe_transcript_line(line.to_string().as_bytes());
    }
}
