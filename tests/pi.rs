//! The Pi coding agent's adapter (docs/formats.md §12): its session files, recorded from the real
//! `pi` 0.73.1 against the fake model, folded and decided; its processes; and lines that are
//! malformed, cut short, huge or hostile.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use slate::agents::pi::{self, SessionReader};
use slate::agents::{Info, LineParser, Observation, ProcessRole, Record, RecordKind, BUILT_IN};
use slate::lines::{LineBuffer, LineEvent};
use slate::model::{AgentKind, ProcessInfo, ReasonCode, SessionKey, Status, Timestamp};
use slate::tracker::{Batch, Input, Policy, SeenProcess, Tracker, TranscriptRole};

const ROOT: &str = "/home/dev/acme-api";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/transcripts/pi")
        .join(name)
}

fn pi_kind() -> AgentKind {
    BUILT_IN.find("pi").expect("pi is built in").kind()
}

/// Feeds a whole file through a `LineBuffer` into one reader, as the files edge does.
fn read_file(bytes: &[u8]) -> Vec<Result<Vec<Observation>, String>> {
    let mut buffer = LineBuffer::new(0, 64 * 1024);
    let mut reader = SessionReader;
    let mut out = Vec::new();
    buffer.push(bytes, |event| match event {
        LineEvent::Line(line) => out.push(reader.feed(line).map_err(|error| error.to_string())),
        LineEvent::Oversized { len } => out.push(Err(format!("oversized line of {len} bytes"))),
    });
    out
}

fn observations(name: &str) -> Vec<Observation> {
    let bytes = std::fs::read(fixture(name)).expect("the fixture is readable");
    read_file(&bytes)
        .into_iter()
        .flat_map(|outcome| outcome.expect("every recorded line reads"))
        .collect()
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
    if let Some(model) = &info.model {
        let _ = write!(text, " model={model}");
    }
    if let Some(at) = info.started_at {
        let _ = write!(text, " started={}", at.to_rfc3339());
    }
    text
}

#[test]
fn every_recording_reads_to_its_snapshot() {
    insta::glob!("../fixtures/transcripts/pi", "*.jsonl", |path| {
        let bytes = std::fs::read(path).expect("the fixture is readable");
        let mut text = String::new();
        text.push_str(&crate::util::render_lines(&read_file(&bytes), render));
        insta::assert_snapshot!("pi_read", text);
    });
}

fn last_record(observations: &[Observation]) -> Timestamp {
    observations
        .iter()
        .filter_map(|observation| match observation {
            Observation::Record(Record { at: Some(at), .. }) => Some(*at),
            _ => None,
        })
        .max()
        .expect("the file has records")
}

fn session_id(observations: &[Observation]) -> String {
    observations
        .iter()
        .find_map(|observation| match observation {
            Observation::Info(Info {
                session_id: Some(id),
                ..
            }) => Some(id.clone()),
            _ => None,
        })
        .expect("the header names the session")
}

/// A live `pi` (its process title set, run by node) in the project, started an hour ago.
fn pi_process(now: Timestamp) -> SeenProcess {
    let info = ProcessInfo {
        pid: 5150,
        ppid: Some(5100),
        name: "pi".to_string(),
        exe: Some("/usr/bin/node".to_string()),
        cmd: vec!["pi".to_string()],
        cwd: Some(ROOT.to_string()),
        start_time: now.minus(Duration::from_secs(3600)),
        start_ticks: None,
    };
    let recognised = pi::recognise(&info).expect("the process is Pi");
    SeenProcess {
        info,
        recognised,
        folder: Some(ROOT.to_string()),
        newest_child: None,
    }
}

/// Decides a recording with a live `pi` in its folder (or none), `after` its last record.
fn decide(name: &str, after: Duration, alive: bool) -> (Status, ReasonCode) {
    let observations = observations(name);
    let last = last_record(&observations);
    let now = last.plus(after);
    let key = SessionKey::new(pi_kind(), session_id(&observations));
    let mut tracker = Tracker::new(Policy::default());
    tracker.apply(
        Input::Observed(Batch {
            key: key.clone(),
            role: TranscriptRole::Main,
            transcript: name.to_string(),
            last_write: last,
            observations,
            folders: vec![(ROOT.to_string(), ROOT.to_string())],
        }),
        now,
    );
    let processes = if alive {
        vec![pi_process(now)]
    } else {
        Vec::new()
    };
    tracker.apply(Input::Processes(processes), now);
    let session = tracker.session(&key).expect("the session is tracked");
    (session.status, session.session_state.reason.code)
}

#[test]
fn a_finished_turn_needs_you() {
    assert_eq!(
        decide("finished.jsonl", Duration::from_secs(5), true),
        (Status::Waiting, ReasonCode::TurnFinished)
    );
}

#[test]
fn a_long_tool_call_is_working_and_still_is_50_seconds_later() {
    for after in [2, 50, 300] {
        assert_eq!(
            decide("tool_running.jsonl", Duration::from_secs(after), true),
            (Status::Working, ReasonCode::ToolRunning),
            "{after} s after the call"
        );
    }
}

#[test]
fn an_interrupt_needs_you() {
    for name in [
        "interrupted_esc_tool.jsonl",
        "interrupted_esc_streaming.jsonl",
    ] {
        assert_eq!(
            decide(name, Duration::from_secs(5), true),
            (Status::Waiting, ReasonCode::Interrupted),
            "{name}"
        );
    }
}

#[test]
fn the_example_question_tool_is_a_question() {
    // Asked for a moment it may still be drawing; left unanswered, it needs you.
    assert_eq!(
        decide("question_open.jsonl", Duration::from_secs(60), true),
        (Status::Waiting, ReasonCode::Question)
    );
    assert_eq!(
        decide("question_answered.jsonl", Duration::from_secs(5), true).1,
        ReasonCode::TurnFinished
    );
}

#[test]
fn a_session_whose_pi_is_gone_is_closed() {
    // Killed in the middle of a tool call: the file ends with the call, and its pi is gone.
    let observations = observations("exit_ctrlc_mid_tool.jsonl");
    let last = last_record(&observations);
    let key = SessionKey::new(pi_kind(), session_id(&observations));
    let mut tracker = Tracker::new(Policy::default());
    tracker.apply(
        Input::Observed(Batch {
            key: key.clone(),
            role: TranscriptRole::Main,
            transcript: "exit_ctrlc_mid_tool.jsonl".to_string(),
            last_write: last,
            observations,
            folders: vec![(ROOT.to_string(), ROOT.to_string())],
        }),
        last,
    );
    let alive = last.plus(Duration::from_secs(2));
    tracker.apply(Input::Processes(vec![pi_process(alive)]), alive);
    assert_eq!(tracker.session(&key).unwrap().status, Status::Working);
    let gone = last.plus(Duration::from_secs(20));
    tracker.apply(Input::Processes(Vec::new()), gone);
    assert_eq!(tracker.session(&key).unwrap().status, Status::Ended);
}

#[test]
fn the_header_names_the_session_its_folder_and_its_model() {
    let observations = observations("finished.jsonl");
    let info: Vec<&Info> = observations
        .iter()
        .filter_map(|observation| match observation {
            Observation::Info(info) => Some(info),
            _ => None,
        })
        .collect();
    assert_eq!(
        info[0].session_id.as_deref(),
        Some("01a23455-cdee-723b-9219-01622cc399e7")
    );
    assert_eq!(info[0].cwd.as_deref(), Some(ROOT));
    assert!(info
        .iter()
        .any(|info| info.model.as_deref() == Some("fake-model")));
}

fn process(exe: Option<&str>, cmd: &[&str]) -> ProcessInfo {
    ProcessInfo {
        pid: 77,
        ppid: Some(1),
        name: cmd.first().copied().unwrap_or_default().to_string(),
        exe: exe.map(str::to_string),
        cmd: cmd.iter().map(|arg| arg.to_string()).collect(),
        cwd: Some(ROOT.to_string()),
        start_time: Timestamp::from_millis(1_796_000_000_000),
        start_ticks: None,
    }
}

#[test]
fn pi_processes_are_recognised_and_others_called_pi_are_not() {
    let role = |exe, cmd: &[&str]| pi::recognise(&process(exe, cmd)).map(|seen| seen.role);
    // Its process title replaces the whole command line.
    assert_eq!(
        role(Some("/usr/bin/node"), &["pi"]),
        Some(ProcessRole::Interactive)
    );
    // Before the title is set, node runs its script.
    let script = "/usr/lib/node_modules/@mariozechner/pi-coding-agent/dist/cli.js";
    assert_eq!(
        role(Some("/usr/bin/node"), &["node", script]),
        Some(ProcessRole::Interactive)
    );
    assert_eq!(
        role(
            Some("/usr/bin/node"),
            &["node", "--no-warnings", script, "-p", "hi"]
        ),
        Some(ProcessRole::Print)
    );
    // A program of another kind named pi, a pi with no executable to prove it, another script.
    assert_eq!(role(Some("/usr/bin/pi"), &["pi"]), None);
    assert_eq!(role(None, &["pi"]), None);
    assert_eq!(
        role(Some("/usr/bin/node"), &["node", "/srv/app/pi.js"]),
        None
    );
    assert_eq!(role(Some("/usr/bin/node"), &["pi-server"]), None);
    // Through the registry: Pi is the agent, and no other agent claims it.
    assert_eq!(
        BUILT_IN
            .recognise(&process(Some("/usr/bin/node"), &["pi"]))
            .map(|seen| seen.agent),
        Some(pi_kind())
    );
}

#[test]
fn only_its_own_files_are_sessions() {
    let found = |parts: &[&str]| pi::classify_transcript(parts).map(|found| found.session_id);
    let file = "2026-12-02T01-19-28-242Z_01a23455-cdee-723b-9219-01622cc399e7.jsonl";
    assert_eq!(
        found(&["sessions", "--home-dev-acme-api--", file]).as_deref(),
        Some("01a23455-cdee-723b-9219-01622cc399e7")
    );
    assert_eq!(found(&["sessions", "home-dev-acme-api", file]), None);
    assert!(found(&["sessions", "----", file]).is_some());
    assert_eq!(found(&["sessions", "--x--", "notes.jsonl"]), None);
    assert_eq!(found(&["sessions", "--x--", "sub", file]), None);
    assert_eq!(found(&["bin", "--x--", file]), None);
}

#[test]
fn every_cut_of_every_recorded_line_reads_or_is_refused_without_panicking() {
    let mut refused = 0;
    for entry in std::fs::read_dir(fixture("")).expect("the fixtures") {
        let path = entry.expect("an entry").path();
        if path.extension().is_none_or(|ext| ext != "jsonl") {
            continue;
        }
        let bytes = std::fs::read(path).expect("readable");
        for line in bytes
            .split(|byte| *byte == b'\n')
            .filter(|line| !line.is_empty())
        {
            for end in 0..line.len() {
                if pi::observe(&line[..end]).is_err() {
                    refused += 1;
                }
            }
            assert!(pi::observe(line).is_ok(), "a whole line reads");
        }
    }
    // Nearly every cut is not JSON at all.
    assert!(refused > 10_000, "{refused}");
}

#[test]
fn malformed_and_hostile_lines_are_refused_or_read_as_nothing() {
    let refused = |line: &str| pi::observe(line.as_bytes()).is_err();
    let nothing = |line: &str| pi::observe(line.as_bytes()).expect("it reads").is_empty();
    assert!(refused(""));
    assert!(refused("not json"));
    assert!(refused("[1,2,3]"));
    assert!(refused(r#"{"no":"type"}"#));
    assert!(refused(r#"{"type":"message"}"#));
    assert!(refused(r#"{"type":"message","message":"text"}"#));
    assert!(pi::observe(b"\xff\xfe{}").is_err());
    // Nested beyond the JSON reader's depth: refused, never a stack overflow.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(refused(&deep));
    // Types that are not what Pi writes read as nothing, not as a record.
    assert!(nothing(r#"{"type":"message","message":{"role":7}}"#));
    assert!(nothing(
        r#"{"type":"message","message":{"role":"toolResult","toolCallId":3}}"#
    ));
    assert!(nothing(r#"{"type":"compaction","summary":"x"}"#));
    assert!(nothing(r#"{"type":"custom","data":{"role":"user"}}"#));
    // A header whose id is not a uuid names no session; an empty cwd names no folder.
    let header = pi::observe(br#"{"type":"session","id":"../../etc","cwd":""}"#).unwrap();
    assert!(
        matches!(&header[..], [Observation::Info(info)] if info.session_id.is_none() && info.cwd.is_none())
    );
    // A tool call without an id or a name is no call; content of the wrong type is no text.
    let odd = pi::observe(
        br#"{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","name":"bash"},{"type":"text","text":5}],"stopReason":"toolUse"}}"#,
    )
    .unwrap();
    assert!(odd.iter().all(|observation| !matches!(
        observation,
        Observation::Record(Record {
            kind: RecordKind::ToolCall { .. } | RecordKind::ModelText,
            ..
        })
    )));
}

#[test]
fn huge_prompts_and_commands_are_kept_bounded() {
    let command = "x".repeat(5 * 1024 * 1024);
    let line = format!(
        r#"{{"type":"message","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"c1","name":"bash","arguments":{{"command":"{command}"}}}}],"stopReason":"toolUse"}}}}"#
    );
    let observations = pi::observe(line.as_bytes()).expect("a huge line reads");
    let call = observations
        .iter()
        .find_map(|observation| match observation {
            Observation::Record(Record {
                kind: RecordKind::ToolCall { detail, input, .. },
                ..
            }) => Some((detail.clone(), input.clone())),
            _ => None,
        })
        .expect("the call is read");
    assert!(call.0.unwrap().chars().count() <= 120);
    let input = call.1.unwrap();
    assert!(input.cut && input.text.len() <= slate::agents::INPUT_BYTES);
    let prompt = format!(
        r#"{{"type":"message","message":{{"role":"user","content":[{{"type":"text","text":"{}\u202e\u0007"}}]}}}}"#,
        "p".repeat(1_000_000)
    );
    match &pi::observe(prompt.as_bytes()).expect("a huge prompt reads")[..] {
        [Observation::Record(Record {
            kind: RecordKind::Prompt { text },
            ..
        })] => assert!(text.chars().count() <= 200),
        other => panic!("{other:?}"),
    }
}
