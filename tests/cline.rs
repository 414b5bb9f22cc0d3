//! The Cline CLI adapter (docs/formats.md §15): its conversations, recorded from the real `cline`
//! 3.0.65 against the fake model, read and decided; its processes, the hub daemon among them; and
//! documents that are malformed, cut short, huge or hostile.

mod row;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use slate::agents::cline;
use slate::agents::{Info, Observation, ProcessRole, Record, RecordKind, BUILT_IN};
use slate::model::{AgentKind, ProcessInfo, ReasonCode, SessionKey, Status, Timestamp};
use slate::tracker::{Batch, Input, Policy, SeenProcess, Tracker, TranscriptRole};

fn folder(scenario: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/transcripts/cline")
        .join(scenario)
}

/// The recorded conversation of a scenario (`<id>.messages.json`).
fn messages_file(scenario: &str) -> PathBuf {
    std::fs::read_dir(folder(scenario))
        .expect("the scenario's folder")
        .map(|entry| entry.expect("an entry").path())
        .find(|path| path.to_string_lossy().ends_with(".messages.json"))
        .expect("the scenario has a conversation")
}

fn cline_kind() -> AgentKind {
    BUILT_IN.find("cline").expect("cline is built in").kind()
}

fn observations(scenario: &str) -> Vec<Observation> {
    let bytes = std::fs::read(messages_file(scenario)).expect("readable");
    cline::read_messages(&bytes).expect("every recorded conversation reads")
}

fn render(observation: &Observation) -> String {
    crate::util::render_observation(observation, render_info)
}

fn render_info(info: &Info) -> String {
    let mut text = "Info".to_string();
    if let Some(id) = &info.session_id {
        let _ = write!(text, " session={id}");
    }
    if let Some(cwd) = &info.cwd {
        let _ = write!(text, " cwd={cwd}");
    }
    if let Some(version) = &info.cli_version {
        let _ = write!(text, " version={version}");
    }
    text
}

#[test]
fn every_recording_reads_to_its_snapshot() {
    insta::glob!(
        "../fixtures/transcripts/cline",
        "*/*.messages.json",
        |path| {
            let bytes = std::fs::read(path).expect("the fixture is readable");
            let text: String = cline::read_messages(&bytes)
                .expect("a recorded conversation reads")
                .iter()
                .map(|observation| render(observation) + "\n")
                .collect();
            insta::assert_snapshot!(text);
        }
    );
}

fn info(observations: &[Observation]) -> &Info {
    observations
        .iter()
        .find_map(|observation| match observation {
            Observation::Info(info) => Some(info),
            _ => None,
        })
        .expect("the document says what it is")
}

fn last_record(observations: &[Observation]) -> Timestamp {
    observations
        .iter()
        .filter_map(|observation| match observation {
            Observation::Record(Record { at: Some(at), .. }) => Some(*at),
            _ => None,
        })
        .max()
        .expect("the conversation has records")
}

/// A process as the scan sees it.
fn process(pid: u32, exe: Option<&str>, cmd: &[&str], cwd: &str, start: Timestamp) -> ProcessInfo {
    ProcessInfo {
        pid,
        ppid: Some(1),
        name: "cline".to_string(),
        exe: exe.map(str::to_string),
        cmd: cmd.iter().map(|arg| arg.to_string()).collect(),
        cwd: Some(cwd.to_string()),
        start_time: start,
        start_ticks: None,
    }
}

const BINARY: &str = "/opt/npm/node_modules/@cline/cli-linux-x64/bin/cline";

/// The processes of a recording's folder at `now`: the TUI (when `tui`) and, always, the hub
/// daemon started for that folder, both started an hour earlier.
fn processes(cwd: &str, now: Timestamp, tui: bool) -> Vec<SeenProcess> {
    let start = now.minus(Duration::from_secs(3600));
    let hub = process(
        25890,
        Some(BINARY),
        &[
            BINARY,
            "--cline-hub-daemon",
            "--cwd",
            cwd,
            "--host",
            "127.0.0.1",
            "--port",
            "25463",
            "--pathname",
            "/hub",
        ],
        cwd,
        start,
    );
    let mut seen = vec![hub];
    if tui {
        seen.push(process(
            26053,
            Some(BINARY),
            &["cline", "--auto-approve", "false"],
            cwd,
            start,
        ));
    }
    seen.into_iter()
        .map(|info| {
            let recognised = cline::recognise(&info).expect("a Cline process");
            SeenProcess {
                info,
                recognised,
                folder: Some(cwd.to_string()),
                newest_child: None,
            }
        })
        .collect()
}

/// A scenario's conversation read with the row beside it, as the walk reads them.
fn session(scenario: &str) -> Vec<Observation> {
    let messages = std::fs::read(messages_file(scenario)).expect("readable");
    let row_file = messages_file(scenario)
        .to_string_lossy()
        .replace(".messages.json", ".json");
    let row = std::fs::read(row_file).expect("the row beside it");
    cline::read_session(&messages, Some(&row)).expect("every recorded session reads")
}

/// Decides a recording `after` its last record, with its TUI alive or not (the hub always is).
fn decide(scenario: &str, after: Duration, tui: bool) -> (Status, ReasonCode) {
    let observations = session(scenario);
    let cwd = info(&observations)
        .cwd
        .clone()
        .expect("the folder is named");
    let id = info(&observations)
        .session_id
        .clone()
        .expect("the session is named");
    let last = last_record(&observations);
    let now = last.plus(after);
    let key = SessionKey::new(cline_kind(), id);
    let mut tracker = Tracker::new(Policy::default());
    tracker.apply(
        Input::Observed(Batch {
            key: key.clone(),
            role: TranscriptRole::Main,
            transcript: scenario.to_string(),
            last_write: last,
            observations,
            folders: vec![(cwd.clone(), cwd.clone())],
        }),
        now,
    );
    tracker.apply(Input::Processes(processes(&cwd, now, tui)), now);
    let session = tracker.session(&key).expect("the session is tracked");
    (session.status, session.session_state.reason.code)
}

#[test]
fn the_document_names_the_session_its_folder_and_the_version() {
    let observations = observations("tool_running");
    let info = info(&observations);
    assert_eq!(info.session_id.as_deref(), Some("1796174550271_8m0a0"));
    assert_eq!(
        info.cwd.as_deref(),
        Some("/work/research/cline/proj/tool_running")
    );
    assert_eq!(info.cli_version.as_deref(), Some("3.0.65"));
    // The prompt is the person's words, without the mode tag the CLI wraps them in.
    assert!(observations.iter().any(|observation| matches!(
        observation,
        Observation::Record(Record { kind: RecordKind::Prompt { text }, .. }) if text == "slate-fixture tool_running"
    )));
}

#[test]
fn a_running_command_is_working_and_still_is_50_seconds_later() {
    for scenario in ["tool_running", "tool_running_local_backend"] {
        for after in [2, 50, 300] {
            assert_eq!(
                decide(scenario, Duration::from_secs(after), true),
                (Status::Working, ReasonCode::ToolRunning),
                "{scenario}, {after} s after the call"
            );
        }
    }
}

#[test]
fn a_finished_turn_needs_you() {
    for scenario in ["permission_denied", "question_answered"] {
        assert_eq!(
            decide(scenario, Duration::from_secs(5), true),
            (Status::Waiting, ReasonCode::TurnFinished),
            "{scenario}"
        );
    }
}

#[test]
fn a_session_whose_hub_shut_down_is_closed() {
    // The row says `completed`, with its end: an end stamp, whatever runs.
    assert_eq!(
        decide(
            "finished_after_exit_and_hub_stop",
            Duration::from_secs(5),
            true
        ),
        (Status::Ended, ReasonCode::EndStamp)
    );
}

#[test]
fn an_interrupted_command_needs_you() {
    for scenario in [
        "interrupted_esc",
        "ctrl_c_mid_tool_local_backend",
        "interrupted_thinking",
    ] {
        assert_eq!(
            decide(scenario, Duration::from_secs(5), true),
            (Status::Waiting, ReasonCode::Interrupted),
            "{scenario}"
        );
    }
}

#[test]
fn an_open_question_needs_you_once_the_window_has_passed() {
    assert_eq!(
        decide("question_pending", Duration::from_secs(2), true).0,
        Status::Working
    );
    assert_eq!(
        decide("question_pending", Duration::from_secs(60), true),
        (Status::Waiting, ReasonCode::Question)
    );
}

#[test]
fn a_permission_dialog_reads_as_its_call_on_disk() {
    // The file holds the call, as while it runs; the screen tells the dialog.
    assert_eq!(
        decide("permission_pending", Duration::from_secs(5), true),
        (Status::Working, ReasonCode::ToolRunning)
    );
}

#[test]
fn the_hub_alone_vouches_for_nothing() {
    // The TUI is gone (Ctrl-C, a closed terminal); the hub it started lives on and still runs
    // the command: the session is closed.
    for scenario in ["tool_running", "ctrl_c_mid_tool", "permission_denied"] {
        assert_eq!(
            decide(scenario, Duration::from_secs(90), false).0,
            Status::Ended,
            "{scenario}"
        );
    }
}

/// The recorded process tables: `pid=… argv=[…]` lines (`processes.txt`).
fn recorded_argvs() -> Vec<Vec<String>> {
    let mut argvs = Vec::new();
    for entry in std::fs::read_dir(folder("")).expect("the fixtures") {
        let table = entry.expect("an entry").path().join("processes.txt");
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines() {
            if let Some((_, argv)) = line.split_once("argv=") {
                let argv: Vec<String> = serde_json::from_str(argv.trim()).expect("an argv");
                argvs.push(argv);
            }
        }
    }
    argvs
}

#[test]
fn the_recorded_processes_are_the_tui_the_hub_and_their_tools() {
    let start = Timestamp(0);
    let mut roles = Vec::new();
    for argv in recorded_argvs() {
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let exe = if argv[0].ends_with("cline") {
            Some(BINARY)
        } else {
            Some("/usr/bin/bash")
        };
        let seen = cline::recognise(&process(1, exe, &argv, "/p", start)).map(|found| found.role);
        match argv[0] {
            "cline" => assert_eq!(seen, Some(ProcessRole::Interactive), "{argv:?}"),
            path if path.ends_with("/cline") => {
                assert_eq!(argv[1], "--cline-hub-daemon");
                assert_eq!(seen, Some(ProcessRole::Daemon), "{argv:?}");
            }
            _ => assert_eq!(seen, None, "{argv:?}"),
        }
        roles.extend(seen);
    }
    assert!(roles.contains(&ProcessRole::Daemon) && roles.contains(&ProcessRole::Interactive));
}

#[test]
fn its_command_lines_name_their_role_folder_and_session() {
    let recognise = |cmd: &[&str]| {
        cline::recognise(&process(1, Some(BINARY), cmd, "/p", Timestamp(0)))
            .map(|found| (found.role, found.folder_arg, found.session_arg))
    };
    let role = |cmd: &[&str]| recognise(cmd).map(|found| found.0);
    assert_eq!(role(&["cline"]), Some(ProcessRole::Interactive));
    assert_eq!(
        role(&["cline", "-i", "fix the tests"]),
        Some(ProcessRole::Interactive)
    );
    assert_eq!(role(&["cline", "fix the tests"]), Some(ProcessRole::Print));
    assert_eq!(
        role(&["cline", "--thinking", "high"]),
        Some(ProcessRole::Interactive)
    );
    assert_eq!(
        role(&["cline", "-m", "fake-model"]),
        Some(ProcessRole::Interactive)
    );
    for helper in [
        "history",
        "auth",
        "hub",
        "version",
        "--version",
        "-h",
        "mcp",
    ] {
        assert_eq!(
            role(&["cline", helper]),
            Some(ProcessRole::Helper),
            "{helper}"
        );
    }
    assert_eq!(
        recognise(&["cline", "--cwd", "/w/acme", "--id", "1796174550271_8m0a0"]),
        Some((
            ProcessRole::Interactive,
            Some("/w/acme".to_string()),
            Some("1796174550271_8m0a0".to_string())
        ))
    );
    // The Node wrapper waits for the binary; other programs named like it are not Cline.
    let wrapper = ProcessInfo {
        exe: Some("/usr/bin/node".to_string()),
        ..process(
            2,
            None,
            &["node", "/opt/npm/node_modules/cline/bin/cline"],
            "/p",
            Timestamp(0),
        )
    };
    assert_eq!(
        cline::recognise(&wrapper).map(|found| found.role),
        Some(ProcessRole::Helper)
    );
    let other = process(
        3,
        Some("/usr/bin/node"),
        &["node", "/srv/app.js"],
        "/p",
        Timestamp(0),
    );
    assert_eq!(cline::recognise(&other), None);
    assert_eq!(
        cline::recognise(&process(
            4,
            Some("/usr/bin/clinex"),
            &["clinex"],
            "/p",
            Timestamp(0)
        )),
        None
    );
}

#[test]
fn every_cut_of_every_recorded_document_reads_or_is_refused_without_panicking() {
    let mut refused = 0;
    for scenario in ["tool_running", "permission_denied", "question_answered"] {
        let bytes = std::fs::read(messages_file(scenario)).expect("readable");
        for end in (0..bytes.len()).step_by(7) {
            if cline::read_messages(&bytes[..end]).is_err() {
                refused += 1;
            }
        }
    }
    assert!(refused > 1_000, "{refused}");
}

#[test]
fn malformed_and_hostile_documents_are_refused_or_read_as_little() {
    let refused = |text: &str| cline::read_messages(text.as_bytes()).is_err();
    let records = |text: &str| -> Vec<RecordKind> {
        cline::read_messages(text.as_bytes())
            .expect("it reads")
            .into_iter()
            .filter_map(|observation| match observation {
                Observation::Record(record) => Some(record.kind),
                _ => None,
            })
            .collect()
    };
    assert!(refused(""));
    assert!(refused("not json"));
    assert!(refused("[1,2,3]"));
    assert!(refused(r#"{"messages":{}}"#));
    assert!(cline::read_messages(b"\xff\xfe{}").is_err());
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(refused(&deep));
    assert!(records(r#"{}"#).is_empty());
    // Shapes Cline does not write read as nothing.
    assert!(records(
        r#"{"messages":[1,"x",{"role":7},{"role":"user","content":[{"type":"text","text":5}]}]}"#
    )
    .is_empty());
    // A user text without the CLI's tag is its own context, not a prompt.
    assert!(records(r#"{"messages":[{"role":"user","content":[{"type":"text","text":"<mode_notice>plan</mode_notice>"}]}]}"#).is_empty());
    // A call without an id or a name is no call; a result without its call's id is no result.
    assert!(records(r#"{"messages":[{"role":"assistant","content":[{"type":"tool_use","name":"run_commands"},{"type":"tool_use","id":"c1"}]},{"role":"user","content":[{"type":"tool_result","content":"x"}]}]}"#).is_empty());
    // A system prompt that names no absolute folder names none.
    let observations =
        cline::read_messages(br#"{"system_prompt":"Working Directory: ../etc"}"#).unwrap();
    assert_eq!(info(&observations).cwd, None);
}

#[test]
fn huge_prompts_and_commands_are_kept_bounded() {
    let command = "x".repeat(5 * 1024 * 1024);
    let document = format!(
        r#"{{"messages":[{{"role":"user","content":[{{"type":"text","text":"<user_input mode=\"act\">{}\u202e</user_input>"}}]}},{{"role":"assistant","content":[{{"type":"tool_use","id":"c1","name":"run_commands","input":{{"commands":["{command}"]}}}}]}}]}}"#,
        "p".repeat(1_000_000)
    );
    let kinds: Vec<RecordKind> = cline::read_messages(document.as_bytes())
        .expect("a huge document reads")
        .into_iter()
        .filter_map(|observation| match observation {
            Observation::Record(record) => Some(record.kind),
            _ => None,
        })
        .collect();
    match &kinds[..] {
        [RecordKind::Prompt { text }, RecordKind::ToolCall { detail, input, .. }] => {
            assert!(text.chars().count() <= 200);
            assert!(detail.as_ref().unwrap().chars().count() <= 120);
            let input = input.as_ref().unwrap();
            assert!(input.cut && input.text.len() <= slate::agents::INPUT_BYTES);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn its_question_is_read_and_only_its_highlighted_option_is_picked() {
    use slate::agents::keys::{plan, Action, Choice, Key, OptionRef};
    use slate::agents::screens::read_screen;
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/screens/cline/3.0.65/question.txt");
    let text = std::fs::read_to_string(path).expect("the recorded screen");
    let pick = |text: &str, label: &str| {
        let read = read_screen(AgentKind::CLINE, text);
        let dialog = read.dialog().expect("the question is a dialog").clone();
        let choice = Choice {
            action: Action::Answer,
            option: Some(OptionRef::Label(label.to_string())),
            text: None,
        };
        plan(AgentKind::CLINE, &dialog, &choice).map(|plan| plan.keys)
    };
    assert_eq!(pick(&text, "SQLite"), Ok(vec![Key::Enter]));
    assert!(
        pick(&text, "Postgres").is_err(),
        "no digit, no arrow is sent"
    );
    // The highlight moved down at the terminal: Enter now picks Postgres.
    let moved = text
        .replace("  > SQLite", "    SQLite")
        .replace("    Postgres", "  > Postgres");
    assert_eq!(pick(&moved, "Postgres"), Ok(vec![Key::Enter]));
    assert!(pick(&moved, "SQLite").is_err());
    // Cut above its last row, it is no dialog.
    let cut = &text[..text
        .find("Type a response...")
        .expect("the free answer's row")];
    assert!(read_screen(AgentKind::CLINE, cut).dialog().is_none());
}
