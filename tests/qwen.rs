//! The Qwen Code adapter against the real chats in `fixtures/transcripts/qwen-code` (recorded from
//! qwen 0.24.4 against the fake model): what every chat reads as (snapshots), what the tracker
//! decides from each, the registry and the engine over a whole home, its processes, its titles,
//! and that no bytes (malformed, cut short, huge or hostile) make the reader panic or lie.

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use slate::agents::qwen;
use slate::agents::titles::{classify_title, TitleKind};
use slate::agents::{CallKind, Info, LineParser, Observation, ProcessRole, RecordKind};
use slate::lines::{LineBuffer, LineEvent};
use slate::model::{AgentKind, ProcessInfo, ReasonCode, SessionKey, Status, Timestamp};
use slate::tracker::{Batch, Input, Policy, SeenProcess, Tracker, TranscriptRole};

mod bad_input;

/// The project the chats were recorded in.
const ROOT: &str = "/work/research/qwen-code/acme-api";
const CHATS: &str = "dot-qwen/projects/-work-research-qwen-code-acme-api/chats";
const FINISHED: &str = "727eac64-cb4c-4873-bbc1-32ee2eab3482";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/transcripts/qwen-code")
}

fn chat(name: &str) -> PathBuf {
    fixtures().join(CHATS).join(format!("{name}.jsonl"))
}

fn focused(name: &str) -> PathBuf {
    fixtures().join("focused").join(format!("{name}.jsonl"))
}

/// Feeds bytes through a `LineBuffer` into one parser, as the files edge does: each complete
/// line's outcome in order; a partial last line stays in the buffer.
fn read_lines(bytes: &[u8]) -> Vec<Result<Vec<Observation>, String>> {
    let mut buffer = LineBuffer::new(0, 64 * 1024);
    let mut parser = (layout().parser)(false);
    let mut out = Vec::new();
    buffer.push(bytes, |event| match event {
        LineEvent::Line(line) => out.push(parser.feed(line).map_err(|error| error.to_string())),
        LineEvent::Oversized { len } => out.push(Err(format!("oversized line of {len} bytes"))),
    });
    out
}

fn layout() -> &'static slate::agents::Layout {
    qwen::DESCRIPTION
        .layout()
        .expect("Qwen Code keeps transcripts")
}

fn observations(bytes: &[u8]) -> Vec<Observation> {
    read_lines(bytes)
        .into_iter()
        .flat_map(Result::unwrap_or_default)
        .collect()
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

fn render(observation: &Observation) -> String {
    crate::util::render_observation(observation, render_info)
}

fn render_info(info: &Info) -> String {
    format!("Info {info:?}")
}

#[test]
fn every_fixture_reads_to_its_snapshot() {
    insta::glob!("../fixtures/transcripts/qwen-code", "**/*.jsonl", |path| {
        let bytes = std::fs::read(path).expect("fixture is readable");
        let mut text = String::new();
        text.push_str(&crate::util::render_lines(&read_lines(&bytes), render));
        insta::assert_snapshot!("qwen_chat", text);
    });
}

#[test]
fn every_record_names_its_session_folder_version_and_branch() {
    let observations = observations(&std::fs::read(chat(FINISHED)).unwrap());
    let infos: Vec<&Info> = observations
        .iter()
        .filter_map(|observation| match observation {
            Observation::Info(info) => Some(info),
            _ => None,
        })
        .collect();
    assert_eq!(infos.len(), 6, "one per record");
    for info in &infos {
        assert_eq!(info.session_id.as_deref(), Some(FINISHED));
        assert_eq!(info.cwd.as_deref(), Some(ROOT));
        assert_eq!(info.cli_version.as_deref(), Some("0.24.4"));
        assert_eq!(info.branch.as_deref(), Some("main"));
    }
    let models: Vec<&str> = infos
        .iter()
        .filter_map(|info| info.model.as_deref())
        .collect();
    assert_eq!(
        models,
        ["fake-model"],
        "only the assistant record names the model"
    );
    assert!(matches!(
        records(&observations)[..],
        [RecordKind::Prompt { text }, RecordKind::ModelText] if text == "slate-fixture finished: say hello"
    ));
}

fn last_record(observations: &[Observation]) -> Timestamp {
    observations
        .iter()
        .filter_map(|observation| match observation {
            Observation::Record(record) => record.at,
            _ => None,
        })
        .max()
        .expect("the sample has timed records")
}

fn session_id(observations: &[Observation]) -> String {
    observations
        .iter()
        .find_map(|observation| match observation {
            Observation::Info(info) => info.session_id.clone(),
            _ => None,
        })
        .expect("the sample names its session")
}

/// The three processes of one qwen session: the launcher, its relaunch and the TUI.
fn session_processes(started: Timestamp) -> Vec<ProcessInfo> {
    let node = |pid: u32, ppid: u32, cmd: &[&str], ticks: u64| ProcessInfo {
        pid,
        ppid: Some(ppid),
        name: "node".to_string(),
        exe: Some("/usr/bin/node".to_string()),
        cmd: cmd.iter().map(|arg| arg.to_string()).collect(),
        cwd: Some(ROOT.to_string()),
        start_time: started,
        start_ticks: Some(ticks),
    };
    let cli = "/opt/npm/node_modules/@qwen-code/qwen-code/cli.js";
    vec![
        node(
            27600,
            27599,
            &["node", "/opt/npm/node_modules/.bin/qwen"],
            3487990,
        ),
        node(
            27610,
            27600,
            &["/usr/bin/node", "--expose-gc", cli],
            3487998,
        ),
        node(
            27617,
            27610,
            &["/usr/bin/node", "--expose-gc", cli],
            3488006,
        ),
    ]
}

fn seen(processes: &[ProcessInfo]) -> Vec<SeenProcess> {
    let table = slate::model::ProcessTable {
        processes: processes.to_vec(),
    };
    slate::sources::processes::recognise_all(slate::agents::BUILT_IN, &table)
}

/// Folds a sample through the tracker with the live qwen processes in its folder, at `now`.
fn decide(observations: Vec<Observation>, now: Timestamp) -> (Status, ReasonCode) {
    let key = SessionKey::new(AgentKind::QWEN_CODE, session_id(&observations));
    let mut tracker = Tracker::new(Policy::default());
    let batch = Batch {
        key: key.clone(),
        role: TranscriptRole::Main,
        transcript: "chat.jsonl".to_string(),
        last_write: last_record(&observations),
        observations,
        folders: vec![(ROOT.to_string(), ROOT.to_string())],
    };
    tracker.apply(Input::Observed(batch), now);
    let started = now.minus(Duration::from_secs(3600));
    tracker.apply(Input::Processes(seen(&session_processes(started))), now);
    let session = tracker.session(&key).expect("the session is tracked");
    (session.status, session.session_state.reason.code)
}

/// A sample decided `after` its last record.
fn decide_file(path: &Path, after: Duration) -> (Status, ReasonCode) {
    let observations = observations(&std::fs::read(path).expect("sample is readable"));
    let now = last_record(&observations).plus(after);
    decide(observations, now)
}

const SOON: Duration = Duration::from_secs(1);
const LATER: Duration = Duration::from_secs(60);

#[test]
fn a_finished_turn_needs_you_once_its_text_has_settled() {
    assert_eq!(
        decide_file(&chat(FINISHED), SOON),
        (Status::Working, ReasonCode::ModelAnswering)
    );
    assert_eq!(
        decide_file(&chat(FINISHED), LATER),
        (Status::Waiting, ReasonCode::TurnFinished)
    );
}

#[test]
fn an_open_shell_call_reads_as_a_running_tool() {
    // A running tool and one waiting at its permission dialog are the same bytes on disk.
    for sample in ["tool-running", "permission-pending"] {
        assert_eq!(
            decide_file(&focused(sample), LATER),
            (Status::Working, ReasonCode::ToolRunning),
            "{sample}"
        );
    }
}

#[test]
fn an_open_question_is_a_question_after_the_window() {
    let path = focused("question-pending");
    let observations = observations(&std::fs::read(&path).unwrap());
    assert!(records(&observations).iter().any(|kind| matches!(
        kind,
        RecordKind::ToolCall { kind: CallKind::Question, detail: Some(detail), .. }
            if detail == "Which database should the fixture use?"
    )));
    assert_eq!(
        decide_file(&path, SOON).0,
        Status::Working,
        "within the window"
    );
    assert_eq!(
        decide_file(&path, LATER),
        (Status::Waiting, ReasonCode::Question)
    );
}

#[test]
fn an_answered_question_goes_on_to_a_finished_turn() {
    assert_eq!(
        decide_file(&chat("eb4e33fb-b5f3-4c01-b81f-5c67f5888fe4"), LATER),
        (Status::Waiting, ReasonCode::TurnFinished)
    );
}

#[test]
fn a_denied_or_cancelled_call_ends_the_turn() {
    // Approved once, then the same command denied with Escape: nothing follows the refusal.
    let denied = chat("6505c298-ae19-4fae-9b3e-87a8f14e97eb");
    let observations = observations(&std::fs::read(&denied).unwrap());
    let results: Vec<bool> = records(&observations)
        .iter()
        .filter_map(|kind| match kind {
            RecordKind::ToolResult { rejected, .. } => Some(*rejected),
            _ => None,
        })
        .collect();
    assert_eq!(results, [false, true], "the second call was refused");
    assert_eq!(
        decide_file(&denied, SOON),
        (Status::Waiting, ReasonCode::Interrupted)
    );
    // Escape while the tool ran: the tool was killed and the turn ended.
    assert_eq!(
        decide_file(&focused("interrupted-esc-tool"), SOON),
        (Status::Waiting, ReasonCode::Interrupted)
    );
}

#[test]
fn escape_before_the_first_reply_leaves_the_prompt_last() {
    // Qwen Code writes nothing when the request is cancelled before any reply: the chat ends
    // with the prompt, which reads as the model answering (docs/formats.md §13.3).
    assert_eq!(
        decide_file(&chat("629b4f17-575a-4897-a690-354d2ce643ba"), LATER),
        (Status::Working, ReasonCode::ModelAnswering)
    );
}

#[test]
fn the_registry_names_the_tui_with_its_start_in_ticks() {
    let bytes = std::fs::read(fixtures().join("dot-qwen/sessions/27617.json")).unwrap();
    let entry = qwen::parse_registry(&bytes).unwrap().expect("an entry");
    assert_eq!(entry.session_id, FINISHED);
    assert_eq!(entry.pid, Some(27617));
    assert_eq!(entry.proc_start.as_deref(), Some("3488006"));
    assert_eq!(entry.cwd.as_deref(), Some(ROOT));
    assert_eq!(
        entry.started_at,
        Some(Timestamp::from_millis(1796174584263))
    );
    assert!(entry.interactive);
    assert_eq!(
        entry.status, None,
        "the registry says nothing of what the session does"
    );
    let parse = |text: &str| qwen::parse_registry(text.as_bytes());
    assert_eq!(parse(r#"{"pid":1}"#), Ok(None));
    assert_eq!(parse(r#"{"sessionId":""}"#), Ok(None));
    assert!(parse("[]").is_err());
    assert!(parse("{\"sessionId\":").is_err());
    let odd = parse(r#"{"sessionId":"s","pid":-1,"procStart":"boot:12x","kind":"serve"}"#)
        .unwrap()
        .unwrap();
    assert_eq!(
        (odd.pid, odd.proc_start, odd.interactive),
        (None, None, false)
    );
    let bare = parse(r#"{"sessionId":"s","procStart":"12345"}"#)
        .unwrap()
        .unwrap();
    assert_eq!(bare.proc_start.as_deref(), Some("12345"));
}

/// The sample home in a temporary HOME, each chat last written at its last record, and the
/// process table at `processes`.
fn sample_home(processes: &[ProcessInfo]) -> (tempfile::TempDir, PathBuf) {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    let dot = home.join(".qwen");
    let registry = dot.join("sessions/27617.json");
    std::fs::create_dir_all(registry.parent().unwrap()).unwrap();
    std::fs::copy(fixtures().join("dot-qwen/sessions/27617.json"), &registry).unwrap();
    let chats = dot.join("projects/-work-research-qwen-code-acme-api/chats");
    std::fs::create_dir_all(&chats).unwrap();
    for entry in std::fs::read_dir(fixtures().join(CHATS)).unwrap() {
        let from = entry.unwrap().path();
        let to = chats.join(from.file_name().unwrap());
        let bytes = std::fs::read(&from).unwrap();
        std::fs::write(&to, &bytes).unwrap();
        let last = last_record(&observations(&bytes));
        let file = std::fs::File::options().write(true).open(&to).unwrap();
        file.set_modified(UNIX_EPOCH + Duration::from_millis(last.millis() as u64))
            .unwrap();
    }
    let table = temp.path().join("processes.json");
    std::fs::write(&table, serde_json::to_string(processes).unwrap()).unwrap();
    (temp, table)
}

/// What `slate sessions --json` says of the qwen sessions over a sample home, by session id.
fn qwen_sessions(processes: &[ProcessInfo], now: &str) -> Vec<(String, String, String)> {
    let (temp, table) = sample_home(processes);
    let output = crate::util::slate_over(temp.path(), &table, now)
        .args(["sessions", "--json"])
        .env("SLATE_STANDALONE", "1")
        .output()
        .expect("slate runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let mut found: Vec<(String, String, String)> = value["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .filter(|session| session["agent"] == "qwen-code")
        .map(|session| {
            let text = |value: &serde_json::Value| value.as_str().unwrap_or("").to_string();
            (
                text(&session["id"]),
                text(&session["status"]),
                text(&session["session_state"]["reason"]["code"]),
            )
        })
        .collect();
    found.sort();
    found
}

#[test]
fn the_registry_decides_which_session_is_live() {
    // The TUI (pid 27617, its start in ticks as the registry records it) vouches for the one
    // session the registry lists; its launcher and relaunch parent vouch for nothing, and the
    // other chats of the folder, unlisted, are not live.
    // `now` is after every sample chat was last written.
    let started = Timestamp::from_millis(1796174584263);
    let now = "2026-12-02T01:27:00Z";
    assert_eq!(
        qwen_sessions(&session_processes(started), now),
        [(
            FINISHED.to_string(),
            "waiting".to_string(),
            "turn_finished".to_string()
        )]
    );
    // A process whose start is not the one recorded (a recycled pid) does not answer for the
    // listed session; being missing from the registry, it vouches by its folder instead
    // (docs/states.md §3 rule 2), for the one session there written most recently.
    let mut recycled = session_processes(started);
    recycled[2].start_ticks = Some(9_999_999);
    let live = qwen_sessions(&recycled, now);
    assert_eq!(live.len(), 1, "{live:?}");
    assert_ne!(live[0].0, FINISHED);
}

fn process(pid: u32, ppid: u32, cmd: &[&str]) -> ProcessInfo {
    ProcessInfo {
        pid,
        ppid: Some(ppid),
        name: "node".to_string(),
        exe: None,
        cmd: cmd.iter().map(|arg| arg.to_string()).collect(),
        cwd: Some(ROOT.to_string()),
        start_time: Timestamp::from_millis(0),
        start_ticks: None,
    }
}

const CLI: &str = "/home/dev/.npm-global/lib/node_modules/@qwen-code/qwen-code/cli.js";

#[test]
fn qwen_processes_are_recognised_with_their_roles() {
    let role = |cmd: &[&str]| qwen::recognise(&process(10, 1, cmd)).map(|found| found.role);
    let interactive = Some(ProcessRole::Interactive);
    assert_eq!(role(&["node", "/usr/local/bin/qwen"]), interactive);
    assert_eq!(role(&["/usr/bin/node", "--expose-gc", CLI]), interactive);
    assert_eq!(
        role(&["node", "/x/node_modules/@qwen-code/qwen-code/cli-entry.js"]),
        interactive
    );
    assert_eq!(role(&["qwen", "-p", "say hi"]), Some(ProcessRole::Print));
    assert_eq!(role(&["qwen", "--prompt=hi"]), Some(ProcessRole::Print));
    for helper in [
        &["qwen", "--version"][..],
        &["qwen", "sessions", "ps", "--json"],
        &["qwen", "mcp", "list"],
        &["qwen", "hooks"],
    ] {
        assert_eq!(role(helper), Some(ProcessRole::Helper), "{helper:?}");
    }
    assert_eq!(role(&["node", "/opt/app/cli.js"]), None);
    assert_eq!(role(&["node", "server.js", "qwen"]), None);
    assert_eq!(role(&["python3", "qwen.py"]), None);
    assert_eq!(
        slate::agents::recognise(&process(10, 1, &["node", CLI])).map(|found| found.agent),
        Some(AgentKind::QWEN_CODE)
    );
    let id = "727eac64-cb4c-4873-bbc1-32ee2eab3482";
    let session = |cmd: &[&str]| qwen::recognise(&process(10, 1, cmd)).and_then(|p| p.session_arg);
    assert_eq!(session(&["qwen", "-r", id]).as_deref(), Some(id));
    assert_eq!(
        session(&["qwen", &format!("--session-id={id}")]).as_deref(),
        Some(id)
    );
    assert_eq!(session(&["qwen", "--resume"]), None);
    assert_eq!(session(&["qwen", "-r", "latest"]), None);
}

#[test]
fn only_the_innermost_process_is_the_session() {
    let all = session_processes(Timestamp::from_millis(0));
    let tool = process(27700, 27617, &["bash", "scripts/long-task.sh"]);
    let mut with_tool = all.clone();
    with_tool.push(tool);
    let roles: Vec<(u32, ProcessRole)> = seen(&with_tool)
        .iter()
        .map(|process| (process.info.pid, process.recognised.role))
        .collect();
    assert_eq!(
        roles,
        [
            (27600, ProcessRole::Helper),
            (27610, ProcessRole::Helper),
            (27617, ProcessRole::Interactive)
        ]
    );
    assert!(!qwen::is_relaunch_parent(&with_tool[3], &with_tool));
}

#[test]
fn titles_say_working_and_action_required() {
    let cases = [
        ("Qwen - acme-api", TitleKind::Idle),
        ("\u{25D0}\u{FE0E} Qwen - acme-api", TitleKind::Busy),
        (
            "\u{2733}\u{FE0E} Qwen - acme-api",
            TitleKind::ActionRequired,
        ),
        // Outside tmux the title is padded to 80 columns.
        (
            "\u{2733}\u{FE0E} Qwen - acme-api                              ",
            TitleKind::ActionRequired,
        ),
        ("", TitleKind::Other),
    ];
    for (title, kind) in cases {
        assert_eq!(
            classify_title(AgentKind::QWEN_CODE, title),
            kind,
            "{title:?}"
        );
    }
}

#[test]
fn under_slate_run_the_launcher_hosts_the_session() {
    // `slate run -- qwen` starts the launcher (pid 27600); the TUI two relaunches below it
    // vouches. The launcher's action-required title is the session's: Needs you at once, while
    // the open call alone would read as a running tool.
    let path = focused("permission-pending");
    let observations = observations(&std::fs::read(&path).unwrap());
    let key = SessionKey::new(AgentKind::QWEN_CODE, session_id(&observations));
    let last = last_record(&observations);
    let now = last.plus(Duration::from_secs(2));
    let mut tracker = Tracker::new(Policy::default());
    tracker.apply(
        Input::Observed(Batch {
            key: key.clone(),
            role: TranscriptRole::Main,
            transcript: "chat.jsonl".to_string(),
            last_write: last,
            observations,
            folders: vec![(ROOT.to_string(), ROOT.to_string())],
        }),
        now,
    );
    let signals = slate::model::HostedSignals {
        pid: Some(27600),
        titles: vec![(last, "\u{2733}\u{FE0E} Qwen - acme-api".to_string())],
        last_draw: Some(last),
        control: None,
    };
    tracker.apply(
        Input::HostedProcess {
            pid: 27600,
            signals,
        },
        now,
    );
    let started = now.minus(Duration::from_secs(3600));
    tracker.apply(Input::Processes(seen(&session_processes(started))), now);
    let session = tracker.session(&key).expect("the session is tracked");
    assert!(session.hosted, "the session is hosted");
    assert_eq!(
        (session.status, session.session_state.reason.code),
        (Status::Waiting, ReasonCode::PermissionPrompt)
    );
}

/// The events qwen 0.24.4 sent to hooks in its settings (`fixtures/transcripts/qwen-code/hooks/`,
/// one file per event, one event a line, captured with a `cat` hook in a throwaway HOME), read
/// with Qwen Code's hook description.
#[test]
fn the_events_qwen_sent_read_as_they_mean() {
    use slate::agents::hooks::Signal;
    let hooks = qwen::DESCRIPTION.hooks.expect("Qwen Code has hooks");
    let folder = fixtures().join("hooks");
    let mut read = Vec::new();
    for entry in std::fs::read_dir(&folder).unwrap() {
        let path = entry.unwrap().path();
        let event = path.file_stem().unwrap().to_str().unwrap().to_string();
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(value["hook_event_name"], event.as_str());
            let report = hooks
                .report("qwen-code", &event, &value)
                .unwrap_or_else(|| panic!("{event} reads as a report"));
            assert_eq!(report.session_id, "dbf3cf73-0bed-4fe2-b4bc-1650d0d09328");
            let signal = hooks.signal(&report);
            let tool = report.tool.as_deref();
            let kind = report.notification.as_deref();
            let expected = match (event.as_str(), kind) {
                // A question's dialog is announced as a permission too, naming its question tool
                // (docs/hooks.md); the tool starting says so first.
                ("PermissionRequest" | "PreToolUse", _) if tool == Some("ask_user_question") => {
                    Signal::Question
                }
                ("PermissionRequest", _) | ("Notification", Some("permission_prompt")) => {
                    Signal::Permission
                }
                ("Notification", _) | ("Stop", _) => Signal::TurnEnded,
                ("PreToolUse" | "PostToolUse" | "UserPromptSubmit", _) => Signal::Working,
                ("SessionStart" | "SessionEnd", _) => Signal::Lifecycle,
                (other, _) => panic!("{other}: an event the test does not know"),
            };
            assert_eq!(signal, Some(expected), "{event} {kind:?}");
            if event == "PermissionRequest" {
                let detail = report.detail.as_deref();
                match tool {
                    Some("run_shell_command") => {
                        assert_eq!(detail, Some("touch slate-permission-probe.txt"))
                    }
                    Some("ask_user_question") => {
                        assert_eq!(detail, Some("Which database should the fixture use?"))
                    }
                    other => panic!("{other:?}"),
                }
            }
            read.push(event.clone());
        }
    }
    read.sort();
    read.dedup();
    assert_eq!(read.len(), 8, "{read:?}");
    // Every event Slate installs a hook for, but the failure variant of PostToolUse, was seen.
    for (event, _) in hooks.events {
        assert!(
            read.iter().any(|seen| seen == event) || *event == "PostToolUseFailure",
            "{event} was never seen"
        );
    }
}
