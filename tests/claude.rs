//! Tests of the Claude Code adapter: transcript fixtures through the line buffer, process
//! recognition, the registry, agents-listing and job-state parsers, and never-panic properties.
//!
//! Every transcript fixture under `fixtures/transcripts/claude-code/` gets one snapshot listing each
//! line's observations or its error, fed in the way the real reader feeds it (through `LineBuffer`),
//! so a partial last line shows up as unconsumed. A file named `agent-*.jsonl` is a sub-agent's
//! transcript and is read with `observe_subagent`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::Value;

use slate::agents::claude::{
    observe, observe_subagent, parse_agents_json, parse_job_state, parse_registry, recognise,
};
use slate::agents::{AgentProcess, Info, LineError, Observation, ProcessRole, Record};
use slate::lines::{LineBuffer, LineEvent};
use slate::model::{AgentKind, ListedStatus, ListingEntry, ProcessInfo, Timestamp};

mod background; // work left in the background, through the tracker

/// The longest line the snapshot reader accepts, as a real reader would cap it.
const MAX_LINE: usize = 1 << 20;

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(path)
}

fn read_fixture(path: &str) -> Vec<u8> {
    let path = fixture(path);
    std::fs::read(&path).unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()))
}

fn is_subagent_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.starts_with("agent-"))
}

/// Feeds a whole transcript through a `LineBuffer` in two chunks (split mid-file, so lines also
/// cross chunk boundaries) and renders every line's outcome.
fn render_transcript(bytes: &[u8], subagent: bool) -> String {
    let read = if subagent { observe_subagent } else { observe };
    let mut out = String::new();
    let mut buffer = LineBuffer::new(0, MAX_LINE);
    let mut line_no = 0;
    let (first, second) = bytes.split_at(bytes.len() / 2);
    for chunk in [first, second] {
        buffer.push(chunk, |event| {
            line_no += 1;
            match event {
                LineEvent::Line(line) => render_line(&mut out, line_no, read(line)),
                LineEvent::Oversized { len } => {
                    let _ = writeln!(out, "{line_no}: oversized line of {len} bytes");
                }
            }
        });
    }
    if buffer.has_partial() {
        let _ = writeln!(
            out,
            "partial last line: {} bytes unconsumed (consumed {} of {})",
            buffer.partial().len(),
            buffer.consumed(),
            buffer.pushed()
        );
    } else {
        let _ = writeln!(out, "all {} bytes consumed", buffer.consumed());
    }
    out
}

fn render_line(out: &mut String, line_no: usize, result: Result<Vec<Observation>, LineError>) {
    match result {
        Err(err) => {
            let _ = writeln!(out, "{line_no}: error: {err:?}");
        }
        Ok(observations) if observations.is_empty() => {
            let _ = writeln!(out, "{line_no}: nothing");
        }
        Ok(observations) => {
            let _ = writeln!(out, "{line_no}:");
            for observation in observations {
                let _ = writeln!(out, "  {}", render_observation(&observation));
            }
        }
    }
}

fn render_observation(observation: &Observation) -> String {
    match observation {
        Observation::Info(info) => render_info(info),
        Observation::Record(Record { at, kind }) => {
            let at = at.map_or_else(|| "no time".to_owned(), |at| at.to_rfc3339());
            format!("record {at} {kind:?}")
        }
        Observation::Reset => "reset".to_owned(),
        Observation::Unread(record) => crate::util::render_unread(record),
        Observation::Usage(call) => crate::util::render_usage(call),
    }
}

/// Only the fields a line states, so the snapshots stay readable.
fn render_info(info: &Info) -> String {
    let mut fields = Vec::new();
    let mut field = |name: &str, value: Option<String>| {
        if let Some(value) = value {
            fields.push(format!("{name}={value}"));
        }
    };
    field("session", info.session_id.clone());
    field("parent", info.parent_session.clone());
    field("cwd", info.cwd.clone());
    field("branch", info.branch.clone());
    field("version", info.cli_version.clone());
    field("model", info.model.clone());
    field(
        "title",
        info.title
            .as_ref()
            .map(|title| format!("{:?}:{:?}", title.source, title.text)),
    );
    field("print", info.print_mode.map(|print| print.to_string()));
    field("started", info.started_at.map(|at| at.to_rfc3339()));
    format!("info {}", fields.join(" "))
}

#[test]
fn transcript_fixtures() {
    insta::glob!(
        "../fixtures/transcripts/claude-code",
        "**/*.jsonl",
        |path| {
            let bytes = std::fs::read(path).expect("fixture is readable");
            let rendered = render_transcript(&bytes, is_subagent_file(path));
            insta::assert_snapshot!("claude_transcript", rendered);
        }
    );
}

/// Splitting the same file at every byte must not change what a reader observes: a line read in
/// pieces is the same line.
#[test]
fn chunking_does_not_change_observations() {
    let bytes =
        read_fixture("transcripts/claude-code/samples/7f3c1d2e-5a4b-4c3d-9e8f-0a1b2c3d4e5f.jsonl");
    let whole = observe_all(&bytes, bytes.len());
    for chunk_len in [1, 7, 64] {
        assert_eq!(
            observe_all(&bytes, chunk_len),
            whole,
            "chunks of {chunk_len}"
        );
    }
    assert!(whole
        .iter()
        .any(|result| matches!(result, Ok(observations) if !observations.is_empty())));
}

fn observe_all(bytes: &[u8], chunk_len: usize) -> Vec<Result<Vec<Observation>, LineError>> {
    let mut buffer = LineBuffer::new(0, MAX_LINE);
    let mut results = Vec::new();
    for chunk in bytes.chunks(chunk_len.max(1)) {
        buffer.push(chunk, |event| {
            if let LineEvent::Line(line) = event {
                results.push(observe(line));
            }
        });
    }
    results
}

fn process(name: &str, exe: Option<&str>, cmd: &[&str]) -> ProcessInfo {
    ProcessInfo {
        pid: 4242,
        ppid: Some(1),
        name: name.to_owned(),
        exe: exe.map(str::to_owned),
        cmd: cmd.iter().map(|arg| (*arg).to_owned()).collect(),
        cwd: Some("/home/dev/acme-api".to_owned()),
        start_time: Timestamp::from_millis(1_795_942_190_000),
        start_ticks: Some(2_093_318),
    }
}

const UUID: &str = "2b9e4f10-8c7d-4e6f-a5b4-c3d2e1f0a9b8";

#[test]
fn recognises_claude_processes() {
    let native = "/home/dev/.local/share/claude/versions/2.1.332";
    let npm = "/usr/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe";
    let cli_js = "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js";
    let resume_eq = format!("--resume={UUID}");
    #[rustfmt::skip]
    let cases: Vec<(ProcessInfo, ProcessRole, Option<&str>)> = vec![
        // The native binary, titled `claude`.
        (process("claude", Some(native), &["claude"]), ProcessRole::Interactive, None),
        // The versioned binary under its own name, resuming a session.
        (process("2.1.332", Some(native), &[native, "--resume", UUID]), ProcessRole::Interactive, Some(UUID)),
        (process("claude", Some(native), &["claude", "-r", UUID, "--model", "opus"]), ProcessRole::Interactive, Some(UUID)),
        (process("claude", Some(native), &["claude", "--session-id", UUID]), ProcessRole::Interactive, Some(UUID)),
        (process("claude", Some(native), &["claude", &resume_eq]), ProcessRole::Interactive, Some(UUID)),
        // `--resume` without an id opens the picker; what follows is no session.
        (process("claude", Some(native), &["claude", "--resume", "fix the login bug"]), ProcessRole::Interactive, None),
        (process("claude", Some(native), &["claude", "--continue"]), ProcessRole::Interactive, None),
        // npm's copied native binary, whose comm reads `claude.exe` even on Linux.
        (process("claude.exe", Some(npm), &[npm, "-p", "explain the diff"]), ProcessRole::Print, None),
        (process("claude", Some(npm), &["claude", "--print", "--output-format", "json", "hi"]), ProcessRole::Print, None),
        // Legacy node launch of the cli.js script, with and without node options.
        (process("node", Some("/usr/bin/node"), &["node", cli_js, "-r", UUID]), ProcessRole::Interactive, Some(UUID)),
        (process("node", Some("/usr/bin/node"), &["/usr/bin/node", "--no-warnings", cli_js, "-p", "x"]), ProcessRole::Print, None),
        // A process that titled itself `claude` under another executable.
        (process("MainThread", Some("/usr/local/bin/bun"), &["claude"]), ProcessRole::Interactive, None),
        // Windows paths.
        (process("claude.exe", Some(r"C:\Users\me\.local\bin\claude.exe"), &[r"C:\Users\me\.local\bin\claude.exe"]), ProcessRole::Interactive, None),
        // The background daemon, with its title in one argv entry or split.
        (process("claude", Some(native), &["claude daemon"]), ProcessRole::Daemon, None),
        (process("claude", Some(native), &["claude", "daemon", "start"]), ProcessRole::Daemon, None),
        (process("claude", Some(native), &["claude", "daemon-worker"]), ProcessRole::Daemon, None),
        // Helper runs of the CLI.
        (process("claude", Some(native), &["claude", "agents", "--json"]), ProcessRole::Helper, None),
        (process("claude", Some(native), &["claude", "mcp", "serve"]), ProcessRole::Helper, None),
        (process("claude", Some(native), &["claude", "config", "list"]), ProcessRole::Helper, None),
        (process("claude", Some(native), &["claude", "doctor"]), ProcessRole::Helper, None),
        (process("claude", Some(native), &["claude", "update"]), ProcessRole::Helper, None),
        (process("claude", Some(native), &["claude", "install"]), ProcessRole::Helper, None),
        // A prompt that merely starts like a subcommand is still a prompt.
        (process("claude", Some(native), &["claude", "doctor the tests please"]), ProcessRole::Interactive, None),
    ];
    for (info, role, session) in cases {
        let expected = AgentProcess {
            agent: AgentKind::CLAUDE_CODE,
            role,
            folder_arg: None,
            session_arg: session.map(str::to_owned),
        };
        assert_eq!(recognise(&info), Some(expected), "{:?}", info.cmd);
    }
}

#[test]
fn does_not_recognise_programs_that_mention_claude() {
    let cases = [
        process(
            "vim",
            Some("/usr/bin/vim"),
            &["vim", "notes-about-claude.md"],
        ),
        process("grep", Some("/usr/bin/grep"), &["grep", "claude"]),
        process(
            "less",
            Some("/usr/bin/less"),
            &[
                "less",
                "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js",
            ],
        ),
        process(
            "node",
            Some("/usr/bin/node"),
            &["node", "server.js", "/x/@anthropic-ai/claude-code/cli.js"],
        ),
        process(
            "node",
            Some("/usr/bin/node"),
            &["node", "/x/@anthropic-ai/claude-code/sdk.mjs"],
        ),
        process("node", Some("/usr/bin/node"), &["node", "--inspect"]),
        process(
            "claude-squad",
            Some("/usr/local/bin/claude-squad"),
            &["claude-squad"],
        ),
        process(
            "python3",
            Some("/usr/bin/python3.12"),
            &["python3", "claude.py"],
        ),
        process("bash", None, &[]),
        process("tmux: server", None, &["tmux", "new", "-s", "claude"]),
    ];
    for info in cases {
        assert_eq!(recognise(&info), None, "{:?}", info.cmd);
    }
}

fn registry(name: &str) -> Result<Option<ListingEntry>, LineError> {
    parse_registry(&read_fixture(&format!("registry/claude-code/{name}")))
}

#[test]
fn parses_the_sample_registry_files() {
    let waiting = registry("41301.json").expect("valid registry file");
    assert_eq!(
        waiting,
        Some(ListingEntry {
            session_id: "4c5d6e7f-2a3b-4c5d-9e6f-1a2b3c4d5e6f".to_owned(),
            pid: Some(41301),
            proc_start: Some("2093318".to_owned()),
            started_at: Some(Timestamp::from_millis(1_795_943_390_000)),
            cwd: Some("/home/dev/acme-api".to_owned()),
            status: Some(ListedStatus::Waiting),
            waiting_for: Some("permission prompt".to_owned()),
            interactive: true,
            updated_at: Some(Timestamp::from_millis(1_795_943_404_100)),
        })
    );
    let statuses: Vec<_> = ["41234.json", "41377.json", "41420.json"]
        .into_iter()
        .map(|name| {
            let entry = registry(name).expect("valid").expect("has a session");
            (entry.pid, entry.status, entry.waiting_for)
        })
        .collect();
    assert_eq!(
        statuses,
        vec![
            (Some(41234), Some(ListedStatus::Busy), None),
            (
                Some(41377),
                Some(ListedStatus::Waiting),
                Some("input needed".to_owned())
            ),
            (Some(41420), Some(ListedStatus::Idle), None),
        ]
    );
    // The legacy generation is ignored.
    assert_eq!(registry("pid-30001.json"), Ok(None));
}

#[test]
fn reads_registry_variants() {
    let parse = |text: &str| parse_registry(text.as_bytes());
    let entry =
        parse(r#"{"pid":7,"sessionId":"s","status":"shell","kind":"bg","procStart":12345}"#)
            .expect("valid")
            .expect("has a session");
    assert_eq!(entry.status, Some(ListedStatus::Busy));
    assert!(!entry.interactive);
    assert_eq!(entry.proc_start.as_deref(), Some("12345"));
    let entry = parse(r#"{"pid":8,"sessionId":"s","kind":"daemon-worker","status":"sleeping"}"#)
        .expect("valid")
        .expect("has a session");
    assert!(!entry.interactive);
    assert_eq!(entry.status, None);
    // A registry written before `kind` and `status` existed held interactive sessions only.
    let entry = parse(r#"{"pid":9,"sessionId":"s","cwd":"/w"}"#)
        .expect("valid")
        .expect("has a session");
    assert!(entry.interactive);
    assert_eq!(entry.status, None);
    assert_eq!(parse(r#"{"pid":9,"cwd":"/w"}"#), Ok(None));
    assert_eq!(
        parse(r#"{"pid":-1,"sessionId":"s"}"#).map(|entry| entry.and_then(|entry| entry.pid)),
        Ok(None)
    );
    assert!(matches!(
        parse(r#"{"pid":9,"sessionId""#),
        Err(LineError::NotJson(_))
    ));
    assert!(matches!(parse("[]"), Err(LineError::Shape(_))));
    assert_eq!(
        parse_registry(b"{\"sessionId\":\"\xff\"}"),
        Err(LineError::NotUtf8)
    );
}

#[test]
fn parses_the_agents_listing() {
    let entries = parse_agents_json(&read_fixture(
        "registry/claude-code/claude-agents--json.output.json",
    ))
    .expect("valid listing");
    let summary: Vec<_> = entries
        .iter()
        .map(|entry| {
            (
                entry.session_id.as_str(),
                entry.pid,
                entry.status,
                entry.interactive,
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                "2b9e4f10-8c7d-4e6f-a5b4-c3d2e1f0a9b8",
                Some(41234),
                Some(ListedStatus::Busy),
                true
            ),
            (
                "4c5d6e7f-2a3b-4c5d-9e6f-1a2b3c4d5e6f",
                Some(41301),
                Some(ListedStatus::Waiting),
                true
            ),
            (
                "9a8b7c6d-1e2f-4a3b-8c4d-5e6f7a8b9c0d",
                Some(41377),
                Some(ListedStatus::Waiting),
                true
            ),
            (
                "7f3c1d2e-5a4b-4c3d-9e8f-0a1b2c3d4e5f",
                Some(41420),
                Some(ListedStatus::Idle),
                true
            ),
        ]
    );
    assert_eq!(entries[2].waiting_for.as_deref(), Some("input needed"));
    assert_eq!(
        entries[0].started_at,
        Some(Timestamp::from_millis(1_795_942_190_000))
    );
    assert_eq!(entries[0].cwd.as_deref(), Some("/home/dev/acme-api"));
}

#[test]
fn reads_background_jobs_in_the_agents_listing() {
    let listing = br#"[
        {"pid":1,"kind":"background","id":"j1","sessionId":"a","state":"working","status":"busy"},
        {"pid":2,"kind":"background","id":"j2","sessionId":"b","state":"blocked"},
        {"pid":3,"kind":"background","id":"j3","sessionId":"c","state":"done"},
        {"pid":4,"kind":"background","id":"j4","sessionId":"d","state":"failed"},
        {"pid":5,"kind":"background","id":"j5","sessionId":"e","state":"stopped"},
        {"pid":6,"kind":"background","id":"j6","state":"working"},
        {"pid":7,"kind":"interactive","sessionId":"f","status":"shell"},
        "not an object",
        {"pid":8,"kind":"interactive","sessionId":"g"}
    ]"#;
    let entries = parse_agents_json(listing).expect("valid listing");
    let summary: Vec<_> = entries
        .iter()
        .map(|entry| (entry.session_id.as_str(), entry.status, entry.interactive))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("a", Some(ListedStatus::Busy), false),
            ("b", Some(ListedStatus::Waiting), false),
            ("c", Some(ListedStatus::Finished), false),
            ("d", Some(ListedStatus::Finished), false),
            ("e", Some(ListedStatus::Finished), false),
            ("f", Some(ListedStatus::Busy), true),
            ("g", None, true),
        ]
    );
    assert!(matches!(parse_agents_json(b"{}"), Err(LineError::Shape(_))));
    assert!(matches!(
        parse_agents_json(b"[{"),
        Err(LineError::NotJson(_))
    ));
    assert_eq!(parse_agents_json(b"[]"), Ok(Vec::new()));
}

#[test]
fn parses_job_states() {
    let status = |text: &str| {
        parse_job_state(text.as_bytes())
            .expect("valid")
            .map(|entry| (entry.session_id, entry.status, entry.interactive))
    };
    let finished = Some(ListedStatus::Finished);
    assert_eq!(
        status(r#"{"sessionId":"s","state":"done"}"#),
        Some(("s".to_owned(), finished, false))
    );
    assert_eq!(
        status(r#"{"session_id":"s","state":"stopped"}"#),
        Some(("s".to_owned(), finished, false))
    );
    assert_eq!(
        status(r#"{"sessionId":"s","state":"failed"}"#),
        Some(("s".to_owned(), finished, false))
    );
    assert_eq!(
        status(r#"{"sessionId":"s","state":"working","tempo":"idle"}"#),
        Some(("s".to_owned(), Some(ListedStatus::Busy), false))
    );
    assert_eq!(
        status(r#"{"sessionId":"s","state":"active"}"#),
        Some(("s".to_owned(), Some(ListedStatus::Busy), false))
    );
    assert_eq!(
        status(r#"{"sessionId":"s","state":"blocked"}"#),
        Some(("s".to_owned(), Some(ListedStatus::Waiting), false))
    );
    // Without a state, the tempo says how busy the job is.
    assert_eq!(
        status(r#"{"sessionId":"s","tempo":"blocked"}"#),
        Some(("s".to_owned(), Some(ListedStatus::Waiting), false))
    );
    assert_eq!(
        status(r#"{"sessionId":"s","state":"paused"}"#),
        Some(("s".to_owned(), None, false))
    );
    assert_eq!(
        status(r#"{"state":"done","detail":"no session yet"}"#),
        None
    );
    let entry = parse_job_state(
        br#"{"sessionId":"s","state":"blocked","needs":"approve Bash","updatedAt":1795943404100}"#,
    )
    .expect("valid")
    .expect("has a session");
    assert_eq!(entry.waiting_for.as_deref(), Some("approve Bash"));
    assert_eq!(
        entry.updated_at,
        Some(Timestamp::from_millis(1_795_943_404_100))
    );
    assert!(matches!(parse_job_state(b"1"), Err(LineError::Shape(_))));
    assert_eq!(parse_job_state(b"\xc3("), Err(LineError::NotUtf8));
}

/// Every complete line of every transcript fixture, as seeds for mutation.
fn fixture_lines() -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    let mut folders = vec![fixture("transcripts/claude-code")];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|ext| ext == "jsonl") {
                let bytes = std::fs::read(&path).unwrap_or_default();
                lines.extend(bytes.split(|&byte| byte == b'\n').map(<[u8]>::to_vec));
            }
        }
    }
    lines.retain(|line| !line.is_empty());
    lines
}

/// JSON built from the words the adapter looks for, so random values reach its deeper branches.
fn json_like() -> impl Strategy<Value = Value> {
    let words = prop::sample::select(vec![
        "type",
        "user",
        "assistant",
        "system",
        "attachment",
        "progress",
        "message",
        "content",
        "text",
        "tool_use",
        "tool_result",
        "tool_use_id",
        "is_error",
        "id",
        "name",
        "input",
        "subtype",
        "turn_duration",
        "api_error",
        "compact_boundary",
        "isSidechain",
        "isMeta",
        "isCompactSummary",
        "isApiErrorMessage",
        "timestamp",
        "sessionId",
        "agentId",
        "cwd",
        "model",
        "entrypoint",
        "sdk-cli",
        "Bash",
        "AskUserQuestion",
        "questions",
        "question",
        "thinking",
        "custom-title",
        "customTitle",
        "ai-title",
        "summary",
        "image",
        "command",
        "[Request interrupted by user]",
        "<command-name>",
        "2026-11-28T09:00:00Z",
        "",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        words.clone().prop_map(Value::from),
        ".*".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((words.clone(), inner), 0..8).prop_map(|fields| {
                Value::Object(
                    fields
                        .into_iter()
                        .map(|(key, value)| (key.to_owned(), value))
                        .collect(),
                )
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn observe_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = observe(&bytes);
        let _ = observe_subagent(&bytes);
    }

    #[test]
    fn observe_never_panics_on_mutated_real_lines(
        seed in any::<prop::sample::Index>(),
        mutations in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        keep in any::<prop::sample::Index>(),
    ) {
        let lines = fixture_lines();
        prop_assume!(!lines.is_empty());
        let mut line = lines[seed.index(lines.len())].clone();
        for (at, byte) in mutations {
            let at = at.index(line.len().max(1)).min(line.len().saturating_sub(1));
            if let Some(slot) = line.get_mut(at) {
                *slot = byte;
            }
        }
        line.truncate(keep.index(line.len() + 1));
        let _ = observe(&line);
        let _ = observe_subagent(&line);
    }

    #[test]
    fn observe_never_panics_on_json_built_from_its_words(value in json_like()) {
        let line = value.to_string();
        let result = observe(line.as_bytes());
        // Valid JSON is never a JSON error; only a non-object is a shape error.
        match result {
            Err(LineError::Shape(_)) => prop_assert!(!value.is_object()),
            Err(err) => prop_assert!(false, "unexpected error {err:?}"),
            Ok(_) => prop_assert!(value.is_object()),
        }
        let _ = observe_subagent(line.as_bytes());
        let _ = parse_registry(line.as_bytes());
        let _ = parse_agents_json(line.as_bytes());
        let _ = parse_job_state(line.as_bytes());
    }

    #[test]
    fn listing_parsers_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = parse_registry(&bytes);
        let _ = parse_agents_json(&bytes);
        let _ = parse_job_state(&bytes);
    }
}

/// The same sidechain line is the session's business only when read as a sub-agent's transcript.
#[test]
fn sidechain_lines_keep_their_records_only_in_a_subagent_transcript() {
    let bytes = read_fixture(
        "transcripts/claude-code/samples/6e7f8091-4c5d-4e6f-9071-3c4d5e6f7081/subagents/agent-a3f9c2e1b7d4.jsonl",
    );
    let line = bytes
        .split(|&byte| byte == b'\n')
        .nth(1)
        .expect("the sample has a second line");
    let is_record = |observation: &Observation| matches!(observation, Observation::Record(_));
    let as_main = observe(line).expect("valid line");
    assert!(!as_main.iter().any(is_record));
    let Some(Observation::Info(info)) = as_main.first() else {
        panic!("a sidechain line still states facts: {as_main:?}");
    };
    assert_eq!(info.model, None, "a sub-agent's model is not the session's");
    let as_subagent = observe_subagent(line).expect("valid line");
    assert_eq!(
        as_subagent
            .iter()
            .filter(|observation| is_record(observation))
            .count(),
        1
    );
    let Some(Observation::Info(info)) = as_subagent.first() else {
        panic!("expected facts first: {as_subagent:?}");
    };
    assert_eq!(info.session_id.as_deref(), Some("a3f9c2e1b7d4"));
    assert_eq!(
        info.parent_session.as_deref(),
        Some("6e7f8091-4c5d-4e6f-9071-3c4d5e6f7081")
    );
    assert_eq!(info.model.as_deref(), Some("claude-haiku-5"));
}

/// The input of the one `Bash` tool call in an assistant line whose `input` is `input`.
fn bash_input(input: Value) -> Result<Option<slate::agents::CallInput>, LineError> {
    let line = serde_json::json!({
        "type": "assistant",
        "timestamp": "2026-11-28T09:10:03.640Z",
        "sessionId": "11111111-2222-4333-8444-555555555555",
        "message": {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": input}],
        },
    });
    let observations = observe(line.to_string().as_bytes())?;
    Ok(observations
        .into_iter()
        .find_map(|observation| match observation {
            Observation::Record(Record {
                kind: slate::agents::RecordKind::ToolCall { input, detail, .. },
                ..
            }) => {
                // The one-line detail stays one short line whatever the input holds.
                assert!(detail
                    .as_deref()
                    .is_none_or(|detail| !detail.contains('\n') && detail.chars().count() <= 120));
                Some(input)
            }
            _ => None,
        })
        .expect("the line holds a tool call"))
}

#[test]
fn a_tool_calls_input_is_kept_whole_up_to_its_bound_and_marked_cut_beyond() {
    // See: issue 20. The dialog's call carries the input, so it must stay bounded whatever the
    // model wrote: 1 MB of command, control characters and bidi overrides, or no command at all.
    let command = "touch x.txt \\\n  && echo done";
    let kept = bash_input(serde_json::json!({ "command": command }))
        .unwrap()
        .unwrap();
    assert_eq!((kept.text.as_str(), kept.cut), (command, false));

    let huge = format!("echo {}é", "x".repeat(1 << 20));
    let kept = bash_input(serde_json::json!({ "command": huge }))
        .unwrap()
        .unwrap();
    assert!(kept.cut);
    assert!(kept.text.len() <= slate::agents::INPUT_BYTES);
    assert!(huge.starts_with(&kept.text));

    // Cut on a character boundary: a multi-byte character straddling the bound is left out.
    let wide = "é".repeat(slate::agents::INPUT_BYTES);
    let kept = bash_input(serde_json::json!({ "command": wide }))
        .unwrap()
        .unwrap();
    assert!(kept.cut);
    assert_eq!(kept.text.len(), slate::agents::INPUT_BYTES);

    // Control characters and bidi overrides are kept as written (whoever shows them escapes
    // them, and no screen agrees with them).
    let hostile = "touch x.txt\u{1b}[2K\r\u{202e}txt.x hcuot\u{7}";
    let kept = bash_input(serde_json::json!({ "command": hostile }))
        .unwrap()
        .unwrap();
    assert_eq!(kept.text, hostile);

    // No command, a command that is not text, an input that is not an object: a call without
    // input, and the line still reads.
    for input in [
        serde_json::json!({}),
        serde_json::json!({ "command": 42 }),
        serde_json::json!({ "command": "   " }),
        serde_json::json!("touch x.txt"),
        Value::Null,
    ] {
        assert_eq!(bash_input(input.clone()), Ok(None), "{input}");
    }
}
