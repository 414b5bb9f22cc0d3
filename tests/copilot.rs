//! Tests of the GitHub Copilot CLI adapter: the real sessions of Copilot CLI 1.0.102 read line by
//! line and decided by the engine in a temp HOME, a file that shrinks (a prompt taken back),
//! the process table, the file names, and bad bytes of every kind.
//!
//! Fixtures live in `fixtures/transcripts/copilot/`: each is a real `events.jsonl` written by
//! Copilot CLI 1.0.102 against the fake model (fixtures/recorder/agents/copilot.sh), with the
//! system prompt and the usage figures cut short to keep them small.

use std::path::{Path, PathBuf};
use std::time::Duration;

use proptest::prelude::*;
use slate::agents::copilot::{classify_transcript, recognise, EventsReader, DESCRIPTION};
use slate::agents::{
    AgentProcess, CallKind, Found, LineError, LineParser, Observation, ProcessRole, Record,
    RecordKind,
};
use slate::lines::{LineBuffer, LineEvent};
use slate::model::{AgentKind, ProcessInfo, ProcessTable, ReasonCode, Status, Timestamp};

use crate::engine::{engine, set_modified, state};

mod screens;

/// The native binary as npm installs it, which the loader starts.
const NATIVE: &str =
    "/usr/lib/node_modules/@github/copilot/node_modules/@github/copilot-linux-x64/copilot";

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/transcripts/copilot")
}

fn read_fixture(name: &str) -> Vec<u8> {
    let path = fixture_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()))
}

/// Every line's observations, fed through a `LineBuffer` in uneven chunks as the sources do.
fn observe_all(bytes: &[u8]) -> Vec<Observation> {
    let mut buffer = LineBuffer::new(0, 1 << 20);
    let mut reader = EventsReader::new();
    let mut all = Vec::new();
    for chunk in bytes.chunks(89) {
        buffer.push(chunk, |event| match event {
            LineEvent::Line(line) => all.extend(reader.feed(line).expect("a real line reads")),
            LineEvent::Oversized { len } => panic!("oversized line: {len}"),
        });
    }
    all
}

/// The turn records of a fixture, one short word each, in order.
fn records(name: &str) -> Vec<String> {
    observe_all(&read_fixture(name))
        .into_iter()
        .filter_map(|observation| match observation {
            Observation::Record(Record { kind, .. }) => Some(word(&kind)),
            _ => None,
        })
        .collect()
}

fn word(kind: &RecordKind) -> String {
    match kind {
        RecordKind::Prompt { text } => format!("prompt:{text}"),
        RecordKind::ToolCall { name, kind, .. } => match kind {
            CallKind::Plain => format!("call:{name}"),
            CallKind::Asking => format!("asks:{name}"),
            CallKind::Question => format!("question:{name}"),
            other => format!("{other:?}:{name}"),
        },
        RecordKind::ToolResult { rejected, .. } => match rejected {
            true => "rejected".into(),
            false => "result".into(),
        },
        RecordKind::ModelText => "text".into(),
        RecordKind::TurnStarted { .. } => "start".into(),
        RecordKind::TurnEnded { .. } => "end".into(),
        RecordKind::Interrupted { .. } => "interrupted".into(),
        RecordKind::SessionEnded => "shutdown".into(),
        other => format!("{other:?}"),
    }
}

#[test]
fn each_real_session_reads_as_its_records() {
    let cases = [
        ("finished.jsonl", "prompt:slate-fixture finished start text end"),
        (
            "closed.jsonl",
            "prompt:slate-fixture finished start text end shutdown",
        ),
        // The long task still runs: its call is open.
        ("tool-running.jsonl", "prompt:slate-fixture tool_running start call:bash"),
        // The turn's end after a call that did not finish is no end of the person's turn.
        (
            "interrupted-esc.jsonl",
            "prompt:slate-fixture tool_running start call:bash interrupted",
        ),
        // The dialog is open: the call waits for the person.
        (
            "permission-pending.jsonl",
            "prompt:slate-fixture permission start call:bash asks:bash",
        ),
        (
            "permission-denied-esc.jsonl",
            "prompt:slate-fixture permission start call:bash asks:bash interrupted",
        ),
        (
            "question-pending.jsonl",
            "prompt:slate-fixture question start question:ask_user",
        ),
        (
            "question-answered.jsonl",
            "prompt:slate-fixture question start question:ask_user result start text end",
        ),
        // Escape, then `1` (approved: the call runs again as a plain one), `2` (approved for the
        // repo), then `3` with feedback (rejected).
        (
            "permission-three-ways.jsonl",
            "prompt:slate-fixture permission start call:bash asks:bash interrupted \
             prompt:slate-fixture permission start call:bash asks:bash call:bash result start text end \
             prompt:slate-fixture permission start call:bash asks:bash call:bash result start text end \
             prompt:slate-fixture run: mkdir probe-dir start call:bash asks:bash rejected start text end",
        ),
        // Two prompts, the first interrupted mid-tool; the file was rewritten after a prompt was
        // taken back (Esc Esc), then the session closed.
        (
            "rewound-then-interrupted.jsonl",
            "prompt:slate-fixture tool_running start call:bash interrupted \
             prompt:slate-fixture tool_running start call:bash interrupted shutdown",
        ),
    ];
    for (name, expected) in cases {
        let expected: Vec<&str> = expected.split_whitespace().collect();
        assert_eq!(records(name).join(" "), expected.join(" "), "{name}");
    }
}

#[test]
fn the_session_start_names_the_session_folder_branch_model_and_version() {
    let infos: Vec<_> = observe_all(&read_fixture("finished.jsonl"))
        .into_iter()
        .filter_map(|observation| match observation {
            Observation::Info(info) => Some(info),
            _ => None,
        })
        .collect();
    let start = &infos[0];
    assert_eq!(
        start.session_id.as_deref(),
        Some("f4d6872d-ec9e-4dfd-b416-5eb26da8dc45")
    );
    assert_eq!(
        start.cwd.as_deref(),
        Some("/work/research/copilot/proj/finished")
    );
    assert_eq!(start.branch.as_deref(), Some("main"));
    assert_eq!(start.cli_version.as_deref(), Some("1.0.102"));
    assert_eq!(start.model.as_deref(), Some("gpt-4.1"));
    assert_eq!(
        start.started_at,
        Timestamp::parse_rfc3339("2026-12-02T01:37:05.377Z")
    );
}

#[test]
fn a_permission_request_names_the_call_and_its_whole_command() {
    let asked = observe_all(&read_fixture("permission-pending.jsonl"))
        .into_iter()
        .rev()
        .find_map(|observation| match observation {
            Observation::Record(Record {
                kind:
                    RecordKind::ToolCall {
                        call_id,
                        detail,
                        input,
                        kind: CallKind::Asking,
                        ..
                    },
                ..
            }) => Some((call_id, detail, input)),
            _ => None,
        })
        .expect("the request is read");
    assert_eq!(asked.0, "call_fake1a2346655e40003");
    assert_eq!(asked.1.as_deref(), Some("touch slate-permission-probe.txt"));
    assert_eq!(
        asked.2.map(|input| input.text).as_deref(),
        Some("touch slate-permission-probe.txt")
    );
    // A request for a call the reader never saw (the file was cut above it) names it from
    // the request itself.
    let mut reader = EventsReader::new();
    let line = br#"{"type":"permission.requested","data":{"permissionRequest":{"kind":"shell","toolCallId":"c9","fullCommandText":"rm -rf build"}},"timestamp":"2026-12-02T01:37:31.900Z"}"#;
    let got = reader.feed(line).expect("reads");
    assert!(
        matches!(
            &got[..],
            [Observation::Record(Record { kind: RecordKind::ToolCall { call_id, name, detail, kind: CallKind::Asking, .. }, .. })]
                if call_id == "c9" && name == "bash" && detail.as_deref() == Some("rm -rf build")
        ),
        "{got:?}"
    );
}

/// A temp HOME holding one fixture as `~/.copilot/session-state/<id>/events.jsonl`, last
/// written at `written`.
fn home_with(name: &str, written: Timestamp) -> (tempfile::TempDir, PathBuf, String) {
    home_with_bytes(&read_fixture(name), written)
}

/// A HOME holding `bytes` as a session's events.jsonl, last written at `written`.
fn home_with_bytes(bytes: &[u8], written: Timestamp) -> (tempfile::TempDir, PathBuf, String) {
    let first = bytes.split(|b| *b == b'\n').next().expect("a first line");
    let start: serde_json::Value = serde_json::from_slice(first).expect("json");
    let id = start["data"]["sessionId"]
        .as_str()
        .expect("an id")
        .to_string();
    let temp = tempfile::tempdir().expect("temp dir");
    let folder = temp.path().join(".copilot/session-state").join(&id);
    std::fs::create_dir_all(&folder).expect("folder");
    let path = folder.join("events.jsonl");
    std::fs::write(&path, bytes).expect("write");
    set_modified(&path, system_time(written));
    (temp, path, id)
}

fn system_time(at: Timestamp) -> std::time::SystemTime {
    std::time::UNIX_EPOCH + Duration::from_millis(u64::try_from(at.millis()).expect("after 1970"))
}

/// The live Copilot binary in `folder`, started before the session.
fn copilot_in(folder: &str) -> ProcessTable {
    let mut table = crate::engine::processes(&[NATIVE], folder, 1);
    table.processes[0].name = "MainThread".into();
    table
}

/// The newest record's time in a fixture.
fn last_time(bytes: &[u8]) -> Timestamp {
    bytes
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice::<serde_json::Value>(line).ok())
        .filter_map(|event| Timestamp::parse_rfc3339(event["timestamp"].as_str()?))
        .max()
        .expect("timed events")
}

/// The folder permission-three-ways.jsonl was recorded in.
const FOLDER_OF_THREE_WAYS: &str = "/work/research/copilot/proj/permission";

#[test]
fn a_permission_dialog_written_to_disk_is_needs_you_until_approved() {
    // A real session cut where its second dialog opened, then where it was approved at the
    // terminal (permission.completed "approved"): the command runs.
    let bytes = read_fixture("permission-three-ways.jsonl");
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    let cases = [
        (18, Status::Waiting, ReasonCode::PermissionPrompt),
        (19, Status::Working, ReasonCode::ToolRunning),
    ];
    for (count, status, reason) in cases {
        let cut: Vec<u8> = lines[..count]
            .join(&b'\n')
            .into_iter()
            .chain([b'\n'])
            .collect();
        let last = last_time(&cut);
        let (home, _, id) = home_with_bytes(&cut, last);
        let mut engine = engine(home.path(), copilot_in(FOLDER_OF_THREE_WAYS));
        engine.refresh(last.plus(Duration::from_millis(500)));
        assert_eq!(
            state(&engine, AgentKind::COPILOT, &id),
            (status, reason),
            "{count} lines"
        );
        // Still so a minute later: no window to wait out, and nothing to time out.
        engine.tick(last.plus(Duration::from_secs(60)));
        assert_eq!(
            state(&engine, AgentKind::COPILOT, &id),
            (status, reason),
            "{count} lines"
        );
    }
}

#[test]
fn the_engine_decides_each_real_session_from_the_home() {
    let cases = [
        ("finished.jsonl", Status::Waiting, ReasonCode::TurnFinished),
        ("closed.jsonl", Status::Ended, ReasonCode::EndStamp),
        (
            "tool-running.jsonl",
            Status::Working,
            ReasonCode::ToolRunning,
        ),
        (
            "interrupted-esc.jsonl",
            Status::Waiting,
            ReasonCode::Interrupted,
        ),
        // Copilot CLI writes that its permission dialog is open (docs/formats.md §14.3): Needs
        // you from the file alone, in any terminal.
        (
            "permission-pending.jsonl",
            Status::Waiting,
            ReasonCode::PermissionPrompt,
        ),
        (
            "permission-denied-esc.jsonl",
            Status::Waiting,
            ReasonCode::Interrupted,
        ),
        (
            "permission-three-ways.jsonl",
            Status::Waiting,
            ReasonCode::TurnFinished,
        ),
        // A question is Needs you once the window has passed since it was asked.
        (
            "question-pending.jsonl",
            Status::Waiting,
            ReasonCode::Question,
        ),
        (
            "question-answered.jsonl",
            Status::Waiting,
            ReasonCode::TurnFinished,
        ),
        (
            "rewound-then-interrupted.jsonl",
            Status::Ended,
            ReasonCode::EndStamp,
        ),
    ];
    for (name, status, reason) in cases {
        let bytes = read_fixture(name);
        let last = last_time(&bytes);
        let (home, _, id) = home_with(name, last);
        let folder = observe_all(&bytes)
            .into_iter()
            .find_map(|observation| match observation {
                Observation::Info(info) => info.cwd,
                _ => None,
            })
            .expect("a folder");
        let mut engine = engine(home.path(), copilot_in(&folder));
        engine.refresh(last.plus(Duration::from_secs(1)));
        assert_eq!(
            engine.problems().total(),
            0,
            "{name}: {:?}",
            engine.problems().recent
        );
        engine.tick(last.plus(Duration::from_secs(60)));
        assert_eq!(
            state(&engine, AgentKind::COPILOT, &id),
            (status, reason),
            "{name}"
        );
        let session = engine
            .sessions()
            .into_iter()
            .find(|session| session.id.as_str() == id)
            .expect("listed");
        assert_eq!(session.folder.as_deref(), Some(folder.as_str()), "{name}");
    }
}

#[test]
fn a_prompt_taken_back_shrinks_the_file_and_is_forgotten() {
    // Copilot removes a prompt taken back with Esc Esc before the model answered, rewriting the
    // file shorter (docs/formats.md §14.3). Before: the finished session with a new prompt
    // under way; after: the finished session again, with the checkpoint Copilot appends.
    let finished = read_fixture("finished.jsonl");
    let last = last_time(&finished);
    let (home, path, id) = home_with("finished.jsonl", last);
    let mut grown = finished.clone();
    grown.extend_from_slice(
        br#"{"type":"user.message","data":{"content":"taken back"},"timestamp":"2026-12-02T01:37:20.000Z"}
{"type":"assistant.turn_start","data":{"turnId":"0"},"timestamp":"2026-12-02T01:37:20.010Z"}
"#,
    );
    std::fs::write(&path, &grown).expect("write");
    let mut engine = engine(
        home.path(),
        copilot_in("/work/research/copilot/proj/finished"),
    );
    let now = Timestamp::parse_rfc3339("2026-12-02T01:37:21Z").expect("time");
    engine.refresh(now);
    assert_eq!(state(&engine, AgentKind::COPILOT, &id).0, Status::Working);
    let mut shrunk = finished;
    shrunk.extend_from_slice(
        br#"{"type":"session.usage_checkpoint","data":{"totalNanoAiu":0},"timestamp":"2026-12-02T01:37:22.000Z"}
"#,
    );
    assert!(shrunk.len() < grown.len());
    std::fs::write(&path, &shrunk).expect("write");
    let later = now.plus(Duration::from_secs(2));
    engine.refresh(later);
    engine.tick(later.plus(Duration::from_secs(5)));
    assert_eq!(
        state(&engine, AgentKind::COPILOT, &id),
        (Status::Waiting, ReasonCode::TurnFinished)
    );
    let session = engine
        .sessions()
        .into_iter()
        .find(|session| session.id.as_str() == id)
        .expect("listed");
    assert_eq!(
        session.last_prompt.as_deref(),
        Some("slate-fixture finished")
    );
}

#[test]
fn restart_reads_the_file_again_as_new() {
    let bytes = read_fixture("permission-three-ways.jsonl");
    let mut reader = EventsReader::new();
    let lines: Vec<&[u8]> = bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let first: Vec<_> = lines.iter().map(|line| reader.feed(line)).collect();
    reader.restart();
    let again: Vec<_> = lines.iter().map(|line| reader.feed(line)).collect();
    assert_eq!(first, again);
}

#[test]
fn every_prefix_of_every_fixture_reads_without_error_as_the_start_of_the_whole() {
    let mut names: Vec<String> = std::fs::read_dir(fixture_dir())
        .expect("fixtures")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .into_string()
                .expect("utf-8")
        })
        .filter(|name| name.ends_with(".jsonl"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 10);
    for name in names {
        let bytes = read_fixture(&name);
        let whole = observe_all(&bytes);
        let mut read_up_to = None;
        for end in 0..=bytes.len() {
            // What a reader sees of a file cut at `end`: its complete lines.
            let complete = bytes[..end]
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |at| at + 1);
            if read_up_to != Some(complete) {
                read_up_to = Some(complete);
                let part = observe_all(&bytes[..complete]);
                assert_eq!(part[..], whole[..part.len()], "{name} cut at {end}");
            }
            // The unfinished last line, fed anyway, is an error or nothing: never a panic.
            let mut reader = EventsReader::new();
            let _ = reader.feed(&bytes[complete..end]);
        }
    }
}

#[test]
fn bad_lines_are_errors_and_leave_the_reader_usable() {
    let cases: [(&[u8], Result<usize, LineError>); 9] = [
        (b"", Ok(0)),
        (b"   ", Ok(0)),
        (b"not json", Err(LineError::NotJson(String::new()))),
        (b"[1,2]", Err(LineError::Shape("line is not a JSON object"))),
        (
            br#"{"data":{}}"#,
            Err(LineError::Shape("event has no type")),
        ),
        (
            br#"{"type":"user.message","data":"text"}"#,
            Err(LineError::Shape("event data is not an object")),
        ),
        (
            b"{\"type\":\"user.message\",\"data\":{\"content\":\"\xff\"}}",
            Err(LineError::NotUtf8),
        ),
        (
            br#"{"type":"tool.execution_complete","data":{}}"#,
            Err(LineError::Shape("tool result without toolCallId")),
        ),
        // A type this version does not know moves nothing: it is one unread record.
        (br#"{"type":"session.future_thing","data":{"x":1}}"#, Ok(1)),
    ];
    let mut reader = EventsReader::new();
    for (line, expected) in cases {
        let got = reader.feed(line).map(|observations| observations.len());
        match (&got, &expected) {
            (Err(LineError::NotJson(_)), Err(LineError::NotJson(_))) => {}
            _ => assert_eq!(got, expected, "{}", String::from_utf8_lossy(line)),
        }
    }
    let unread = reader
        .feed(br#"{"type":"session.future_thing","data":{"note":"private"}}"#)
        .expect("reads");
    assert!(
        matches!(&unread[..], [Observation::Unread(record)]
            if record.what == r#"type "session.future_thing""#
                && record.sample == r#"{"data":{"note":"<text, 7 chars>"},"type":"session.future_thing"}"#),
        "{unread:?}"
    );
    // Still usable: a prompt reads.
    let prompt = reader
        .feed(br#"{"type":"user.message","data":{"content":"go on"},"timestamp":"2026-12-02T01:37:12.172Z"}"#)
        .expect("reads");
    assert!(
        matches!(&prompt[..], [Observation::Record(Record { kind: RecordKind::Prompt { text }, .. })] if text == "go on")
    );
}

#[test]
fn hostile_fields_are_bounded_and_kept_as_data() {
    let mut reader = EventsReader::new();
    // A huge prompt is cut to a line; a huge command is kept up to the input bound, marked cut.
    let huge = "x".repeat(2 << 20);
    let line = format!(r#"{{"type":"user.message","data":{{"content":"{huge}"}}}}"#);
    let got = reader.feed(line.as_bytes()).expect("reads");
    assert!(
        matches!(&got[..], [Observation::Record(Record { kind: RecordKind::Prompt { text }, .. })] if text.chars().count() <= 200)
    );
    let line = format!(
        r#"{{"type":"assistant.message","data":{{"content":"","toolRequests":[{{"toolCallId":"c1","name":"bash","arguments":{{"command":"{huge}\u001b]0;evil\u0007"}}}}]}}}}"#
    );
    let got = reader.feed(line.as_bytes()).expect("reads");
    let Some(Observation::Record(Record {
        kind: RecordKind::ToolCall { detail, input, .. },
        ..
    })) = got.last()
    else {
        panic!("a call: {got:?}");
    };
    assert!(detail.as_ref().expect("detail").chars().count() <= 120);
    let input = input.as_ref().expect("input");
    assert!(input.cut && input.text.len() <= slate::agents::INPUT_BYTES);
    // Wrong types where strings belong are skipped, not trusted.
    let got = reader
        .feed(br#"{"type":"assistant.message","data":{"content":7,"toolRequests":[{"toolCallId":5},"x",null],"model":[]}}"#)
        .expect("reads");
    assert!(got.is_empty(), "{got:?}");
    // A deep nest is refused by the JSON reader, not a stack overflow.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(reader.feed(deep.as_bytes()).is_err());
    // A sub-agent's own records are not the session's.
    let got = reader
        .feed(br#"{"type":"assistant.turn_end","data":{"turnId":"0","parentToolCallId":"t1"}}"#)
        .expect("reads");
    assert!(got.is_empty());
}

proptest! {
    #[test]
    fn any_bytes_never_panic(line in proptest::collection::vec(any::<u8>(), 0..512)) {
        let mut reader = EventsReader::new();
        let _ = reader.feed(&line);
    }

    #[test]
    fn any_event_shape_never_panics(kind in "[a-z_.]{0,30}", data in "\\PC{0,80}") {
        let mut reader = EventsReader::new();
        let line = serde_json::json!({"type": kind, "data": {"content": data, "toolCallId": data, "toolRequests": [{"toolCallId": data, "name": data, "arguments": {"command": data}}], "permissionRequest": {"toolCallId": data}}});
        let _ = reader.feed(line.to_string().as_bytes());
    }
}

fn process(pid: u32, name: &str, cmd: &[&str]) -> ProcessInfo {
    ProcessInfo {
        pid,
        ppid: Some(1),
        name: name.into(),
        exe: None,
        cmd: cmd.iter().map(|arg| arg.to_string()).collect(),
        cwd: Some("/work/p".into()),
        start_time: Timestamp::from_millis(0),
        start_ticks: None,
    }
}

#[test]
fn the_native_binary_is_the_session_and_the_loader_a_helper() {
    let role = |name: &str, cmd: &[&str]| {
        recognise(&process(1, name, cmd)).map(|found| (found.role, found.session_arg))
    };
    // As recorded (fixtures/recorder/agents/copilot.sh): the loader, then the binary.
    assert_eq!(
        role(
            "node",
            &[
                "node",
                "/work/npm/node_modules/.bin/copilot",
                "--allow-all-tools"
            ]
        ),
        Some((ProcessRole::Helper, None))
    );
    assert_eq!(
        role(
            "node",
            &[
                "/usr/bin/node",
                "/usr/lib/node_modules/@github/copilot/npm-loader.js"
            ]
        ),
        Some((ProcessRole::Helper, None))
    );
    assert_eq!(
        role("MainThread", &[NATIVE, "--allow-all-tools"]),
        Some((ProcessRole::Interactive, None))
    );
    assert_eq!(
        role("MainThread", &[NATIVE, "-p", "fix it"]),
        Some((ProcessRole::Print, None))
    );
    let id = "2c59cd4e-1a77-470c-9634-44de2aac4df9";
    assert_eq!(
        role("MainThread", &[NATIVE, "--resume", id]),
        Some((ProcessRole::Interactive, Some(id.into())))
    );
    assert_eq!(
        role("MainThread", &[NATIVE, &format!("--session-id={id}")]),
        Some((ProcessRole::Interactive, Some(id.into())))
    );
    assert_eq!(
        role("MainThread", &[NATIVE, "--resume"]),
        Some((ProcessRole::Interactive, None))
    );
    assert_eq!(
        role("MainThread", &[NATIVE, "mcp", "list"]),
        Some((ProcessRole::Helper, None))
    );
    assert_eq!(
        role("MainThread", &[NATIVE, "--version"]),
        Some((ProcessRole::Helper, None))
    );
    // Its tools' processes and other programs are not Copilot.
    assert_eq!(role("bash", &["bash", "scripts/long-task.sh"]), None);
    assert_eq!(role("node", &["node", "/opt/copilot-tools/index.js"]), None);
    assert_eq!(role("copilotd", &["/usr/bin/copilotd"]), None);
    // Without a command line, the executable tells.
    let mut bare = process(2, "MainThread", &[]);
    bare.exe = Some(NATIVE.into());
    assert_eq!(
        recognise(&bare).map(|found| found.role),
        Some(ProcessRole::Interactive)
    );
    // Every built-in recogniser agrees that the binary is Copilot's.
    let found: Option<AgentProcess> =
        slate::agents::recognise(&process(3, "MainThread", &[NATIVE]));
    assert_eq!(found.map(|found| found.agent), Some(AgentKind::COPILOT));
}

#[test]
fn only_a_session_folders_events_file_is_a_transcript() {
    let id = "2c59cd4e-1a77-470c-9634-44de2aac4df9";
    assert_eq!(
        classify_transcript(&["session-state", id, "events.jsonl"]),
        Some(Found::main(id))
    );
    assert_eq!(
        classify_transcript(&["session-state", id, "workspace.yaml"]),
        None
    );
    assert_eq!(
        classify_transcript(&["session-state", "not-a-uuid", "events.jsonl"]),
        None
    );
    assert_eq!(
        classify_transcript(&["session-state", id, "sub", "events.jsonl"]),
        None
    );
    assert_eq!(classify_transcript(&["logs", "events.jsonl"]), None);
    assert_eq!(DESCRIPTION.id, "copilot");
}
