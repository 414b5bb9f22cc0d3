//! Tests of the Codex CLI adapter: every rollout fixture snapshotted line by line, the process
//! table, the index and file-name readers, and properties that bad bytes never panic.
//!
//! Fixtures live in `fixtures/transcripts/codex/`. The six `rollout-2026-11-28T…` files are copies
//! of the shared samples, whose expected states are listed in their README; the others each show
//! one behaviour. Reading files from disk and decompressing `.jsonl.zst` in production belong to
//! `sources`; here the files are read only to feed the pure adapter.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use slate::agents::codex::{
    observe, parse_index_line, recognise, session_id_from_file_name, RolloutReader,
};
use slate::agents::unread::UnreadRecord;
use slate::agents::{
    AgentProcess, CallKind, Info, LineError, Observation, ProcessRole, Record, RecordKind,
};
use slate::lines::{LineBuffer, LineEvent};
use slate::model::{AgentKind, ProcessInfo, Timestamp};

/// What the reader made of one line, and what the index reader made of one entry.
type LineResult = Result<Vec<Observation>, LineError>;
type IndexEntry = (String, String, Option<Timestamp>);
type IndexCase = (&'static [u8], Result<Option<IndexEntry>, ()>);

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/transcripts/codex")
}

fn read_fixture(name: &str) -> Vec<u8> {
    let path = fixture_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()))
}

/// Feeds `bytes` through a `LineBuffer` in uneven chunks, as the files edge will, and returns each
/// complete line's number and result, plus the length of the unfinished tail.
fn read_rollout(bytes: &[u8]) -> (Vec<(usize, LineResult)>, usize) {
    let mut buffer = LineBuffer::new(0, 1 << 20);
    let mut reader = RolloutReader::new();
    let mut results = Vec::new();
    let mut line_no = 0;
    for chunk in bytes.chunks(97) {
        buffer.push(chunk, |event| {
            line_no += 1;
            match event {
                LineEvent::Line(line) => results.push((line_no, reader.feed(line))),
                LineEvent::Oversized { len } => panic!("fixture line {line_no} oversized: {len}"),
            }
        });
    }
    (results, buffer.partial().len())
}

fn render_info(info: &Info) -> String {
    let mut fields = Vec::new();
    let mut field = |name: &str, value: &Option<String>| {
        if let Some(value) = value {
            fields.push(format!("{name}={value:?}"));
        }
    };
    field("session_id", &info.session_id);
    field("cwd", &info.cwd);
    field("branch", &info.branch);
    field("cli_version", &info.cli_version);
    field("model", &info.model);
    field("parent_session", &info.parent_session);
    if let Some(title) = &info.title {
        fields.push(format!("title={:?} ({:?})", title.text, title.source));
    }
    if let Some(print_mode) = info.print_mode {
        fields.push(format!("print_mode={print_mode}"));
    }
    if let Some(started_at) = info.started_at {
        fields.push(format!("started_at={started_at}"));
    }
    format!("Info {{ {} }}", fields.join(", "))
}

fn render(observation: &Observation) -> String {
    match observation {
        Observation::Info(info) => render_info(info),
        Observation::Record(Record { at, kind }) => {
            let at = at.map_or_else(|| "no-time".to_owned(), |at| at.to_rfc3339());
            format!("{at} {kind:?}")
        }
        Observation::Reset => "Reset".to_owned(),
        Observation::Unread(record) => crate::util::render_unread(record),
        Observation::Usage(call) => crate::util::render_usage(call),
    }
}

fn render_rollout(bytes: &[u8]) -> String {
    let (results, partial) = read_rollout(bytes);
    let mut out = String::new();
    for (line_no, result) in results {
        match result {
            Ok(observations) if observations.is_empty() => {
                let _ = writeln!(out, "{line_no:>3}: -");
            }
            Ok(observations) => {
                for observation in observations {
                    let _ = writeln!(out, "{line_no:>3}: {}", render(&observation));
                }
            }
            Err(err) => {
                let _ = writeln!(out, "{line_no:>3}: error: {err}");
            }
        }
    }
    let _ = writeln!(out, "partial tail: {partial} bytes");
    out
}

#[test]
fn rollout_fixtures() {
    insta::glob!("../fixtures/transcripts/codex", "*.jsonl", |path| {
        if path.file_name().and_then(|name| name.to_str()) == Some("session_index.jsonl") {
            return;
        }
        let bytes = std::fs::read(path).expect("fixture is readable");
        insta::assert_snapshot!("rollout", render_rollout(&bytes));
    });
}

/// The compressed fixture was made with the `zstd` command from one sample; it must read back to
/// the same bytes and the same observations. The files edge does the decompression for real.
#[test]
fn compressed_rollout_reads_like_the_plain_one() {
    let name = "rollout-2026-11-28T10-31-00-019ac401-93aa-70b1-81c2-2d33e44f5a06.jsonl";
    let compressed = read_fixture(&format!("compressed/{name}.zst"));
    let plain = read_fixture(name);
    let decompressed = zstd::decode_all(compressed.as_slice()).expect("fixture is valid zstd");
    assert_eq!(decompressed, plain);
    assert_eq!(render_rollout(&decompressed), render_rollout(&plain));
    assert_eq!(
        session_id_from_file_name(&format!("{name}.zst")).as_deref(),
        Some("019ac401-93aa-70b1-81c2-2d33e44f5a06")
    );
}

fn records(observations: &[Observation]) -> Vec<&RecordKind> {
    observations
        .iter()
        .filter_map(|observation| match observation {
            Observation::Record(record) => Some(&record.kind),
            _ => None,
        })
        .collect()
}

fn prompts_of(bytes: &[u8]) -> Vec<String> {
    let (results, _) = read_rollout(bytes);
    results
        .into_iter()
        .filter_map(|(_, result)| result.ok())
        .flatten()
        .filter_map(|observation| match observation {
            Observation::Record(Record {
                kind: RecordKind::Prompt { text },
                ..
            }) => Some(text),
            _ => None,
        })
        .collect()
}

#[test]
fn every_prompt_is_read_exactly_once_in_every_era() {
    let current =
        read_fixture("rollout-2026-11-28T10-31-00-019ac401-93aa-70b1-81c2-2d33e44f5a06.jsonl");
    assert_eq!(
        prompts_of(&current),
        vec!["summarize open TODOs", "fix the first one"]
    );
    let legacy = read_fixture("legacy-no-events.jsonl");
    assert_eq!(prompts_of(&legacy), vec!["list the failing tests", "fix a"]);
    let bare = read_fixture("legacy-pre-envelope.jsonl");
    assert_eq!(
        prompts_of(&bare),
        vec!["index the old rollouts second line of the same turn"]
    );
    let item_first = read_fixture("legacy-item-before-event.jsonl");
    assert_eq!(
        prompts_of(&item_first),
        vec!["explain the build", "and the tests?"]
    );
}

#[test]
fn the_stateless_reader_takes_prompts_from_events_only() {
    let event = br#"{"timestamp":"2026-11-28T10:15:03.560Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}"#;
    let item = br#"{"timestamp":"2026-11-28T10:15:03.560Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}"#;
    let at = Timestamp::parse_rfc3339("2026-11-28T10:15:03.560Z");
    assert_eq!(
        observe(event),
        Ok(vec![Observation::Record(Record {
            at,
            kind: RecordKind::Prompt {
                text: "hi".to_owned()
            },
        })])
    );
    assert_eq!(observe(item), Ok(vec![]));
    // The reader falls back to the item only while the file has shown no event line.
    let mut reader = RolloutReader::new();
    assert_eq!(records(&reader.feed(item).expect("line reads")).len(), 1);
    assert_eq!(records(&reader.feed(event).expect("line reads")).len(), 0);
    assert_eq!(records(&reader.feed(item).expect("line reads")).len(), 0);
    assert_eq!(records(&reader.feed(event).expect("line reads")).len(), 1);
}

#[test]
fn only_the_first_session_meta_is_canonical() {
    let bytes = read_fixture("fork-repeated-meta.jsonl");
    let (results, _) = read_rollout(&bytes);
    let infos: Vec<Info> = results
        .into_iter()
        .filter_map(|(_, result)| result.ok())
        .flatten()
        .filter_map(|observation| match observation {
            Observation::Info(info) if info.session_id.is_some() => Some(info),
            _ => None,
        })
        .collect();
    assert_eq!(infos.len(), 1);
    assert_eq!(
        infos[0].session_id.as_deref(),
        Some("019ac410-0000-7aaa-8bbb-ccccdddd0001")
    );
    assert_eq!(infos[0].cwd.as_deref(), Some("/home/dev/acme-api-fork"));
    // The stateless function still reads the repeated line; only the reader drops it.
    let second_meta = bytes
        .split(|&byte| byte == b'\n')
        .nth(1)
        .unwrap_or_default();
    assert!(matches!(
        observe(second_meta).as_deref(),
        Ok([Observation::Info(Info {
            session_id: Some(_),
            ..
        })])
    ));
}

#[test]
fn line_errors_are_typed() {
    assert_eq!(observe(b"\xff\xfe{}"), Err(LineError::NotUtf8));
    assert!(matches!(observe(b"{\"type\":"), Err(LineError::NotJson(_))));
    assert_eq!(observe(b""), Ok(vec![]));
    assert_eq!(observe(b"  \t"), Ok(vec![]));
    assert!(matches!(observe(b"[1]"), Err(LineError::Shape(_))));
    assert!(matches!(
        observe(b"{\"payload\":{}}"),
        Err(LineError::Shape(_))
    ));
    assert!(matches!(
        observe(b"{\"type\":\"event_msg\",\"payload\":3}"),
        Err(LineError::Shape(_))
    ));
    // A type a later version adds moves nothing, and is counted as unread, with its text
    // replaced.
    let unread = |what: &str, sample: &str| {
        Ok(vec![Observation::Unread(UnreadRecord {
            what: what.to_owned(),
            sample: sample.to_owned(),
        })])
    };
    assert_eq!(
        observe(b"{\"type\":\"something_new\",\"note\":\"secret\"}"),
        unread(
            r#"type "something_new""#,
            r#"{"note":"<text, 6 chars>","type":"something_new"}"#
        )
    );
    assert_eq!(
        observe(b"{\"type\":\"event_msg\",\"payload\":{\"type\":\"something_new\"}}"),
        unread(
            r#"event_msg type "something_new""#,
            r#"{"type":"something_new"}"#
        )
    );
    assert_eq!(
        observe(b"{\"type\":\"response_item\",\"payload\":{\"type\":\"hologram\"}}"),
        unread(r#"response_item type "hologram""#, r#"{"type":"hologram"}"#)
    );
    // Bookkeeping Slate knows is not.
    assert_eq!(
        observe(b"{\"type\":\"world_state\",\"payload\":{}}"),
        Ok(vec![])
    );
}

#[test]
fn tool_calls_carry_their_kind_and_detail() {
    let call = |arguments: &str, name: &str| {
        let line = serde_json::json!({
            "timestamp": "2026-11-28T10:00:00.000Z",
            "type": "response_item",
            "payload": {"type": "function_call", "name": name, "arguments": arguments, "call_id": "c1"},
        });
        match observe(line.to_string().as_bytes()).as_deref() {
            Ok(
                [Observation::Record(Record {
                    kind: RecordKind::ToolCall { kind, detail, .. },
                    ..
                })],
            ) => (*kind, detail.clone()),
            other => panic!("not one tool call: {other:?}"),
        }
    };
    assert_eq!(
        call(
            r#"{"cmd":"npm install","sandbox_permissions":"require_escalated"}"#,
            "exec_command"
        ),
        (CallKind::Escalated, Some("npm install".to_owned()))
    );
    assert_eq!(
        call(r#"{"command":["bash","-lc","ls"]}"#, "shell"),
        (CallKind::Plain, Some("bash -lc ls".to_owned()))
    );
    assert_eq!(
        call(
            r#"{"questions":[{"question":"Which one?"}]}"#,
            "request_user_input"
        ),
        (CallKind::Question, Some("Which one?".to_owned()))
    );
    assert_eq!(call("{", "exec_command"), (CallKind::Plain, None));
    assert_eq!(
        call(
            r#"{"sandbox_permissions":"require_escalated"}"#,
            "view_image"
        ),
        (CallKind::Escalated, None)
    );
}

fn process(cmd: &[&str], exe: Option<&str>) -> ProcessInfo {
    ProcessInfo {
        pid: 4242,
        ppid: Some(1),
        name: cmd
            .first()
            .map(|arg0| slate::agents::program_name(arg0))
            .unwrap_or_default(),
        exe: exe.map(str::to_owned),
        cmd: cmd.iter().map(|arg| (*arg).to_owned()).collect(),
        cwd: Some("/home/dev/acme-api".to_owned()),
        start_time: Timestamp::from_millis(1_795_860_000_000),
        start_ticks: None,
    }
}

fn codex(role: ProcessRole, folder_arg: Option<&str>, session_arg: Option<&str>) -> AgentProcess {
    AgentProcess {
        agent: AgentKind::CODEX,
        role,
        folder_arg: folder_arg.map(str::to_owned),
        session_arg: session_arg.map(str::to_owned),
    }
}

#[test]
fn recognises_codex_processes() {
    use ProcessRole::{Daemon, Helper, Interactive, Print};
    const ID: &str = "019ac3f2-7d41-7a90-b1c2-3d4e5f607182";
    const VENDOR: &str =
        "/usr/lib/node_modules/@openai/codex/vendor/x86_64-unknown-linux-musl/codex/codex";
    const SHIM: &str = "/usr/lib/node_modules/@openai/codex/bin/codex.js";
    let cases: Vec<(Vec<&str>, Option<&str>, Option<AgentProcess>)> = vec![
        // The TUI, by every spelling of its argv.
        (vec!["codex"], None, Some(codex(Interactive, None, None))),
        (
            vec!["/usr/local/bin/codex", "fix the tests"],
            None,
            Some(codex(Interactive, None, None)),
        ),
        (
            vec!["codex", "-p", "exec", "hello"],
            None,
            Some(codex(Interactive, None, None)),
        ),
        (
            vec!["codex", "-m", "gpt-5.6", "exec", "hi"],
            None,
            Some(codex(Print, None, None)),
        ),
        (
            vec!["codex", "--no-daemon"],
            None,
            Some(codex(Interactive, None, None)),
        ),
        (
            vec!["codex", "resume", ID],
            None,
            Some(codex(Interactive, None, Some(ID))),
        ),
        (
            vec!["codex", "resume", "--last"],
            None,
            Some(codex(Interactive, None, None)),
        ),
        (
            vec!["codex", "resume", "not-a-uuid"],
            None,
            Some(codex(Interactive, None, None)),
        ),
        (
            vec!["codex", "fork", ID],
            None,
            Some(codex(Interactive, None, Some(ID))),
        ),
        (
            vec!["codex", "-C", "../api", "resume", ID],
            None,
            Some(codex(Interactive, Some("../api"), Some(ID))),
        ),
        (
            vec!["codex", "--cd", "/srv/app"],
            None,
            Some(codex(Interactive, Some("/srv/app"), None)),
        ),
        (
            vec!["codex", "--cd=/srv/app", "hi"],
            None,
            Some(codex(Interactive, Some("/srv/app"), None)),
        ),
        (
            vec!["codex", "-C/srv/app"],
            None,
            Some(codex(Interactive, Some("/srv/app"), None)),
        ),
        (
            vec!["C:\\Users\\dev\\codex.exe", "-c", "model=\"o3\""],
            None,
            Some(codex(Interactive, None, None)),
        ),
        (
            vec!["codex-x86_64-unknown-linux-musl"],
            None,
            Some(codex(Interactive, None, None)),
        ),
        // The vendor binary after the npm shim execve'd into it, or as the shim's child.
        (
            vec![VENDOR, "resume", ID],
            Some(VENDOR),
            Some(codex(Interactive, None, Some(ID))),
        ),
        // Print runs.
        (
            vec!["codex", "exec", "--json", "bump the version"],
            None,
            Some(codex(Print, None, None)),
        ),
        (
            vec!["codex", "e", "-C", "/srv/ci", "lint"],
            None,
            Some(codex(Print, Some("/srv/ci"), None)),
        ),
        (
            vec!["codex", "exec", "resume", ID, "again"],
            None,
            Some(codex(Print, None, Some(ID))),
        ),
        (
            vec!["codex", "review"],
            None,
            Some(codex(Print, None, None)),
        ),
        // The background daemon never vouches.
        (
            vec!["codex", "app-server"],
            None,
            Some(codex(Daemon, None, None)),
        ),
        (
            vec![VENDOR, "app-server", "daemon", "start"],
            Some(VENDOR),
            Some(codex(Daemon, None, None)),
        ),
        // Helper runs.
        (
            vec!["codex", "login"],
            None,
            Some(codex(Helper, None, None)),
        ),
        (
            vec!["codex", "mcp", "list"],
            None,
            Some(codex(Helper, None, None)),
        ),
        (
            vec!["codex", "mcp-server"],
            None,
            Some(codex(Helper, None, None)),
        ),
        (
            vec!["codex", "completion", "zsh"],
            None,
            Some(codex(Helper, None, None)),
        ),
        (
            vec!["codex", "--version"],
            None,
            Some(codex(Helper, None, None)),
        ),
        (
            vec!["codex", "resume", "--help"],
            None,
            Some(codex(Helper, None, None)),
        ),
        (
            vec!["codex", "sandbox", "linux", "ls"],
            None,
            Some(codex(Helper, None, None)),
        ),
        (
            vec!["codex-linux-sandbox", "--", "ls"],
            Some(VENDOR),
            Some(codex(Helper, None, None)),
        ),
        // The npm shim parent: not a session, so its vendor child is not counted twice.
        (
            vec!["node", SHIM, "resume", ID],
            Some("/usr/bin/node"),
            Some(codex(Helper, None, None)),
        ),
        (
            vec!["node", "/home/dev/.nvm/versions/node/v20.1.0/bin/codex"],
            None,
            Some(codex(Helper, None, None)),
        ),
        (
            vec![
                "node.exe",
                "--no-warnings",
                "C:\\npm\\node_modules\\@openai\\codex\\bin\\codex.js",
            ],
            None,
            Some(codex(Helper, None, None)),
        ),
        // Unrelated programs that mention codex.
        (
            vec!["vim", "src/agents/codex.rs"],
            Some("/usr/bin/vim"),
            None,
        ),
        (vec!["grep", "-r", "codex", "."], None, None),
        (vec!["node", "server.js", "--name", "codex"], None, None),
        (vec!["node", "/srv/codex.js"], None, None),
        (
            vec!["bash", "-c", "codex exec hi"],
            Some("/usr/bin/bash"),
            None,
        ),
        (vec!["codexfmt"], None, None),
        (vec!["python3", "-m", "codex"], None, None),
        (vec![], Some("/usr/local/bin/codex"), None),
    ];
    for (cmd, exe, expected) in cases {
        assert_eq!(
            recognise(&process(&cmd, exe)),
            expected,
            "argv {cmd:?}, exe {exe:?}"
        );
    }
}

#[test]
fn the_shim_and_its_vendor_child_count_once() {
    let shim = process(
        &[
            "node",
            "/usr/lib/node_modules/@openai/codex/bin/codex.js",
            "-C",
            "/srv",
        ],
        Some("/usr/bin/node"),
    );
    let vendor = "/usr/lib/node_modules/@openai/codex/vendor/x86_64-unknown-linux-musl/codex/codex";
    let mut child = process(&[vendor, "-C", "/srv"], Some(vendor));
    child.ppid = Some(shim.pid);
    let roles: Vec<ProcessRole> = [&shim, &child]
        .into_iter()
        .filter_map(recognise)
        .map(|found| found.role)
        .collect();
    assert_eq!(roles, vec![ProcessRole::Helper, ProcessRole::Interactive]);
    assert_eq!(
        recognise(&child)
            .and_then(|found| found.folder_arg)
            .as_deref(),
        Some("/srv")
    );
    // The shared dispatcher finds it too.
    assert_eq!(
        slate::agents::recognise(&child).map(|found| found.agent),
        Some(AgentKind::CODEX)
    );
}

#[test]
fn reads_session_index_lines() {
    let at = |text: &str| Timestamp::parse_rfc3339(text);
    let bytes = read_fixture("session_index.jsonl");
    let first = bytes
        .split(|&byte| byte == b'\n')
        .next()
        .unwrap_or_default();
    assert_eq!(
        parse_index_line(first),
        Ok(Some((
            "019ac401-93aa-70b1-81c2-2d33e44f5a06".to_owned(),
            "TODO cleanup".to_owned(),
            at("2026-11-28T10:31:20.000Z"),
        )))
    );
    let cases: Vec<IndexCase> = vec![
        (b"", Ok(None)),
        (b"   ", Ok(None)),
        (
            br#"{"id":"a","thread_name":" Renamed ","updated_at":"bad"}"#,
            Ok(Some(("a".to_owned(), "Renamed".to_owned(), None))),
        ),
        (br#"{"id":"a","thread_name":null}"#, Ok(None)),
        (br#"{"id":"a"}"#, Ok(None)),
        (br#"{"thread_name":"x"}"#, Err(())),
        (br#"["a"]"#, Err(())),
        (b"{\"id\":", Err(())),
        (b"\xff", Err(())),
    ];
    for (line, expected) in cases {
        assert_eq!(
            parse_index_line(line).map_err(|_| ()),
            expected,
            "line {:?}",
            String::from_utf8_lossy(line)
        );
    }
}

#[test]
fn reads_session_ids_from_file_names() {
    let id = "019ac3f2-7d41-7a90-b1c2-3d4e5f607182";
    let cases = [
        (format!("rollout-2026-11-28T10-15-03-{id}.jsonl"), Some(id)),
        (
            format!("rollout-2026-11-28T10-15-03-{id}.jsonl.zst"),
            Some(id),
        ),
        (
            format!("/home/dev/.codex/sessions/2026/11/28/rollout-2026-11-28T10-15-03-{id}.jsonl"),
            Some(id),
        ),
        (format!("rollout-2026-11-28T10-15-03-{id}.json"), None),
        (format!("rollout-2026-11-28-{id}.jsonl"), None),
        (format!("session-2026-11-28T10-15-03-{id}.jsonl"), None),
        (
            "rollout-2026-11-28T10-15-03-not-a-uuid.jsonl".to_owned(),
            None,
        ),
        ("rollout-2026-11-28T10-15-03-.jsonl".to_owned(), None),
        ("rollout-ü.jsonl".to_owned(), None),
        ("session_index.jsonl".to_owned(), None),
        (String::new(), None),
    ];
    for (name, expected) in cases {
        assert_eq!(
            session_id_from_file_name(&name).as_deref(),
            expected,
            "{name}"
        );
    }
}

fn sample_lines() -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    for entry in std::fs::read_dir(fixture_dir()).expect("fixture folder is readable") {
        let path = entry.expect("fixture entry").path();
        if path.extension().and_then(|ext| ext.to_str()) == Some("jsonl") {
            let bytes = std::fs::read(&path).expect("fixture is readable");
            lines.extend(
                bytes
                    .split(|&byte| byte == b'\n')
                    .filter(|line| line.first() == Some(&b'{'))
                    .map(<[u8]>::to_vec),
            );
        }
    }
    lines.sort();
    lines
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = observe(&bytes);
        let _ = parse_index_line(&bytes);
        let mut reader = RolloutReader::new();
        for line in bytes.split(|&byte| byte == b'\n') {
            let _ = reader.feed(line);
        }
    }

    #[test]
    fn arbitrary_json_never_panics(text in "\\{\"timestamp\":\"[0-9T:.Z-]{0,30}\",\"type\":\"(session_meta|event_msg|response_item|turn_context|compacted)\",\"payload\":\\{\"type\":\"[a-z_]{0,20}\"(,\"[a-z_]{1,12}\":(\"[^\"\\\\]{0,20}\"|[0-9]{1,3}|null|\\[\\]|\\{\\}))*\\}\\}") {
        let _ = observe(text.as_bytes());
        let _ = RolloutReader::new().feed(text.as_bytes());
    }

    #[test]
    fn mutated_sample_lines_never_panic(
        pick in any::<proptest::sample::Index>(),
        cut in any::<proptest::sample::Index>(),
        flips in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 0..4),
    ) {
        let lines = sample_lines();
        let mut line = pick.get(&lines).clone();
        for (at, byte) in flips {
            let idx = at.index(line.len());
            line[idx] = byte;
        }
        let truncated = &line[..cut.index(line.len() + 1)];
        let _ = observe(truncated);
        let _ = observe(&line);
        let mut reader = RolloutReader::new();
        let _ = reader.feed(truncated);
        let _ = reader.feed(&line);
    }
}
