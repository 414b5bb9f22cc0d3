//! The Gemini CLI adapter against the files in `fixtures/transcripts/gemini-cli`: what every chat
//! recording folds to (snapshots, one per fixture), what the tracker decides from the samples, how
//! processes and project folders are recognised, and that no bytes make the fold panic.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use proptest::prelude::*;
use slate::agents::gemini::{self, ChatFold};
use slate::agents::{Info, Observation, ProcessRole, Record, RecordKind};
use slate::lines::{LineBuffer, LineEvent};
use slate::model::{AgentKind, ProcessInfo, ReasonCode, SessionKey, Status, Timestamp};
use slate::tracker::{Batch, Input, Policy, SeenProcess, Tracker, TranscriptRole};

const ROOT: &str = "/home/dev/acme-api";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/transcripts/gemini-cli")
}

fn sample(relative: &str) -> PathBuf {
    fixtures().join("dot-gemini/tmp").join(relative)
}

/// Feeds a whole file through a `LineBuffer` into one `ChatFold`, the way the files edge does, and
/// returns each complete line's outcome in order. A partial last line is left in the buffer.
fn fold_file(bytes: &[u8]) -> Vec<Result<Vec<Observation>, String>> {
    let mut buffer = LineBuffer::new(0, 64 * 1024);
    let mut fold = ChatFold::new();
    let mut out = Vec::new();
    buffer.push(bytes, |event| match event {
        LineEvent::Line(line) => out.push(fold.feed(line).map_err(|error| error.to_string())),
        LineEvent::Oversized { len } => out.push(Err(format!("oversized line of {len} bytes"))),
    });
    out
}

fn observations(bytes: &[u8]) -> Vec<Observation> {
    fold_file(bytes)
        .into_iter()
        .flat_map(Result::unwrap_or_default)
        .collect()
}

/// One readable line per observation, so a snapshot can be checked by eye.
fn render(observation: &Observation) -> String {
    crate::util::render_observation(observation, render_info)
}

fn render_info(info: &Info) -> String {
    let Info {
        session_id,
        model,
        title,
        started_at,
        parent_session,
        ..
    } = info;
    let mut text = "Info".to_string();
    if let Some(id) = session_id {
        let _ = write!(text, " session={id}");
    }
    if let Some(at) = started_at {
        let _ = write!(text, " started={at}");
    }
    if let Some(model) = model {
        let _ = write!(text, " model={model}");
    }
    if let Some(title) = title {
        let _ = write!(text, " title={:?} ({:?})", title.text, title.source);
    }
    if let Some(parent) = parent_session {
        let _ = write!(text, " parent={parent}");
    }
    text
}

#[test]
fn every_fixture_folds_to_its_snapshot() {
    insta::glob!("../fixtures/transcripts/gemini-cli", "**/*.json*", |path| {
        let legacy = path.extension().is_some_and(|ext| ext == "json");
        let name = path
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or("");
        if legacy && !name.starts_with("session-") {
            // `projects.json` is the project registry, not a chat.
            return;
        }
        let bytes = std::fs::read(path).expect("fixture is readable");
        let mut text = String::new();
        if legacy {
            match gemini::fold_legacy_json(&bytes) {
                Ok(observations) => {
                    for observation in &observations {
                        let _ = writeln!(text, "{}", render(observation));
                    }
                }
                Err(error) => {
                    let _ = writeln!(text, "error: {error}");
                }
            }
        } else {
            text.push_str(&crate::util::render_lines(&fold_file(&bytes), render));
        }
        insta::assert_snapshot!("gemini_fold", text);
    });
}

/// The newest record time among `observations`.
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

/// A live interactive `gemini` in the sample project, started an hour before `now`.
fn gemini_process(now: Timestamp) -> SeenProcess {
    let info = ProcessInfo {
        pid: 4242,
        ppid: Some(4241),
        name: "node".to_string(),
        exe: Some("/usr/bin/node".to_string()),
        cmd: vec![
            "/usr/bin/node".to_string(),
            "--max-old-space-size=8192".to_string(),
            "/usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js".to_string(),
        ],
        cwd: Some(ROOT.to_string()),
        start_time: now.minus(Duration::from_secs(3600)),
        start_ticks: None,
    };
    let recognised = gemini::recognise(&info).expect("the process is Gemini");
    SeenProcess {
        info,
        recognised,
        folder: Some(ROOT.to_string()),
        newest_child: None,
    }
}

/// Folds a sample through the tracker with a live Gemini process in its folder, at `now`, and
/// returns the decided status and reason. The files edge adds the folder as `Info { cwd }`, since
/// Gemini's transcript does not store it (docs/formats.md §3.2).
fn decide(observations: Vec<Observation>, now: Timestamp, process: bool) -> (Status, ReasonCode) {
    let id = session_id(&observations);
    let key = SessionKey::new(AgentKind::GEMINI_CLI, id);
    let last_write = last_record(&observations);
    let mut all = vec![Observation::Info(Info {
        cwd: Some(ROOT.to_string()),
        ..Info::default()
    })];
    all.extend(observations);
    let mut tracker = Tracker::new(Policy::default());
    let batch = Batch {
        key: key.clone(),
        role: TranscriptRole::Main,
        transcript: "session.jsonl".to_string(),
        last_write,
        observations: all,
        folders: vec![(ROOT.to_string(), ROOT.to_string())],
    };
    tracker.apply(Input::Observed(batch), now);
    let processes = if process {
        vec![gemini_process(now)]
    } else {
        Vec::new()
    };
    tracker.apply(Input::Processes(processes), now);
    let session = tracker.session(&key).expect("the session is tracked");
    (session.status, session.session_state.reason.code)
}

fn decide_sample(relative: &str) -> (Status, ReasonCode) {
    let bytes = std::fs::read(sample(relative)).expect("sample is readable");
    let observations = observations(&bytes);
    let now = last_record(&observations).plus(Duration::from_secs(60));
    decide(observations, now, true)
}

#[test]
fn a_finished_answer_needs_you() {
    assert_eq!(
        decide_sample("acme-api/chats/session-2026-11-28T10-40-5e1f2a3b.jsonl"),
        (Status::Waiting, ReasonCode::TurnFinished)
    );
}

#[test]
fn a_finished_sub_agent_rolls_up_without_reviving_its_parent() {
    let parent = std::fs::read(sample(
        "acme-api/chats/session-2026-11-28T10-40-5e1f2a3b.jsonl",
    ))
    .expect("readable");
    let parent = observations(&parent);
    let (dir, file) = (
        "5e1f2a3b-6c7d-4e8f-9a0b-1c2d3e4f5a6b",
        "9c5d6e7f-0a1b-4c2d-8e3f-5a6b7c8d9e0f.jsonl",
    );
    let (parent_id, sub_id) = gemini::subagent_file(dir, file).expect("a sub-agent chat");
    assert_eq!(parent_id, session_id(&parent));
    let sub = std::fs::read(sample(&format!("acme-api/chats/{dir}/{file}"))).expect("readable");
    let sub = observations(&sub);
    let now = last_record(&parent).plus(Duration::from_secs(60));
    let key = SessionKey::new(AgentKind::GEMINI_CLI, parent_id);
    let mut tracker = Tracker::new(Policy::default());
    let mut all = vec![Observation::Info(Info {
        cwd: Some(ROOT.to_string()),
        ..Info::default()
    })];
    all.extend(parent.iter().cloned());
    let main = Batch {
        key: key.clone(),
        role: TranscriptRole::Main,
        transcript: "session.jsonl".to_string(),
        last_write: last_record(&parent),
        observations: all,
        folders: vec![(ROOT.to_string(), ROOT.to_string())],
    };
    let subagent = Batch {
        key: key.clone(),
        role: TranscriptRole::Subagent { agent_id: sub_id },
        transcript: "sub.jsonl".to_string(),
        last_write: last_record(&sub),
        observations: sub,
        folders: Vec::new(),
    };
    tracker.apply(Input::Observed(main), now);
    tracker.apply(Input::Observed(subagent), now);
    tracker.apply(Input::Processes(vec![gemini_process(now)]), now);
    let session = tracker.session(&key).expect("the parent is tracked");
    assert_eq!(
        (session.status, session.session_state.reason.code),
        (Status::Waiting, ReasonCode::TurnFinished)
    );
    assert_eq!(session.title.as_deref(), Some("Diagnose slow build"));
}

#[test]
fn an_empty_model_message_is_a_running_tool() {
    assert_eq!(
        decide_sample("acme-api/chats/session-2026-11-28T10-45-6f2a3b4c.jsonl"),
        (Status::Working, ReasonCode::ToolRunning)
    );
}

#[test]
fn a_cancelled_request_needs_you() {
    assert_eq!(
        decide_sample("acme-api/chats/session-2026-11-28T10-50-7a3b4c5d.jsonl"),
        (Status::Waiting, ReasonCode::Interrupted)
    );
}

#[test]
fn a_legacy_session_older_than_the_process_is_closed() {
    let path = sample(
        "6689668a49dc648b376787d8cde1d55e418968e916b4efa79d849fba7fb28a1f/chats/session-2026-01-12T08-00-0b1c2d3e.json",
    );
    let bytes = std::fs::read(path).expect("sample is readable");
    let observations = gemini::fold_legacy_json(&bytes).expect("the legacy sample reads");
    // A Gemini process runs in the project today; it started long after this January session
    // was last written, so it must not vouch for it.
    let now = Timestamp::parse_rfc3339("2026-11-28T10:41:00Z").expect("valid time");
    let (status, _) = decide(observations, now, true);
    assert_eq!(status, Status::Ended);
}

#[test]
fn a_cancelled_tool_call_leaves_nothing_open() {
    let bytes = std::fs::read(fixtures().join("focused/cancelled-tool.jsonl")).expect("readable");
    let observations = observations(&bytes);
    let now = last_record(&observations).plus(Duration::from_secs(60));
    assert_eq!(
        decide(observations, now, true),
        (Status::Waiting, ReasonCode::Interrupted)
    );
}

#[test]
fn a_lost_tool_record_does_not_keep_the_session_working() {
    // The re-append that records the completed call never arrived; the next model message still
    // proves the tool finished.
    let bytes = std::fs::read(fixtures().join("focused/lost-tool-record.jsonl")).expect("read");
    let observations = observations(&bytes);
    let now = last_record(&observations).plus(Duration::from_secs(60));
    assert_eq!(
        decide(observations, now, true),
        (Status::Waiting, ReasonCode::TurnFinished)
    );
}

#[test]
fn cancelling_every_call_ends_the_turn_even_without_an_info_line() {
    let bytes = std::fs::read(fixtures().join("focused/all-calls-cancelled-no-info.jsonl"))
        .expect("readable");
    // The first four lines: the calls were cancelled and Gemini (in older versions) wrote nothing
    // more.
    let head: Vec<u8> = bytes
        .split(|&byte| byte == b'\n')
        .take(4)
        .flat_map(|line| line.iter().copied().chain([b'\n']))
        .collect();
    let observations = observations(&head);
    let now = last_record(&observations).plus(Duration::from_secs(60));
    assert_eq!(
        decide(observations, now, true),
        (Status::Waiting, ReasonCode::Interrupted)
    );
}

#[test]
fn a_rewound_turn_is_forgotten() {
    // After the rewind the last record is the new prompt: the model is answering it, and the
    // dropped empty model message must not leave a tool call open.
    let bytes = std::fs::read(fixtures().join("focused/rewind.jsonl")).expect("readable");
    let observations = observations(&bytes);
    let now = last_record(&observations).plus(Duration::from_secs(5));
    assert_eq!(
        decide(observations, now, true),
        (Status::Working, ReasonCode::ModelAnswering)
    );
}

#[test]
fn a_re_appended_message_is_replayed_in_place() {
    let bytes = std::fs::read(fixtures().join("focused/reappend-earlier-id.jsonl")).expect("read");
    let outcomes = fold_file(&bytes);
    // The fifth line re-appends `g1`: the fold answers with a reset and the chat as it stands,
    // where the second prompt is still the last message.
    let replay = outcomes[4].as_ref().expect("the line reads");
    assert_eq!(replay.first(), Some(&Observation::Reset));
    let last = replay
        .iter()
        .rev()
        .find_map(|observation| match observation {
            Observation::Record(record) => Some(&record.kind),
            _ => None,
        });
    assert!(
        matches!(last, Some(RecordKind::Prompt { text }) if text == "and lib.rs?"),
        "{last:?}"
    );
}

#[test]
fn a_sub_agent_transcript_names_no_parent_itself() {
    // The parent comes from the path (`chats/<parentSessionId>/<sub>.jsonl`), not from the line.
    let bytes = std::fs::read(sample(
        "acme-api/chats/5e1f2a3b-6c7d-4e8f-9a0b-1c2d3e4f5a6b/9c5d6e7f-0a1b-4c2d-8e3f-5a6b7c8d9e0f.jsonl",
    ))
    .expect("readable");
    let observations = observations(&bytes);
    assert_eq!(
        session_id(&observations),
        "9c5d6e7f-0a1b-4c2d-8e3f-5a6b7c8d9e0f"
    );
    assert!(observations.iter().all(|observation| !matches!(
        observation,
        Observation::Info(Info {
            parent_session: Some(_),
            ..
        })
    )));
}

#[test]
fn a_replay_keeps_only_the_newest_messages() {
    let mut fold = ChatFold::new();
    for index in 0..300 {
        let line = format!(
            r#"{{"id":"m{index}","timestamp":"2026-11-28T11:00:00Z","type":"user","content":"prompt {index}"}}"#
        );
        let observations = fold.feed(line.as_bytes()).expect("line reads");
        assert_eq!(observations.len(), 1, "a new message yields only itself");
    }
    let replay = fold.feed(br#"{"$rewindTo":"m299"}"#).expect("line reads");
    let prompts: Vec<&str> = replay
        .iter()
        .filter_map(|observation| match observation {
            Observation::Record(Record {
                kind: RecordKind::Prompt { text },
                ..
            }) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(prompts.len(), 200);
    assert_eq!(prompts.first(), Some(&"prompt 99"));
    assert_eq!(prompts.last(), Some(&"prompt 298"));
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

const BUNDLE: &str =
    "/home/dev/.nvm/versions/node/v22/lib/node_modules/@google/gemini-cli/bundle/gemini.js";

#[test]
fn gemini_processes_are_recognised_with_their_roles() {
    let role = |cmd: &[&str]| gemini::recognise(&process(10, 1, cmd)).map(|found| found.role);
    assert_eq!(role(&["node", BUNDLE]), Some(ProcessRole::Interactive));
    assert_eq!(
        role(&[
            "/usr/bin/node",
            "--no-warnings=DEP0040",
            BUNDLE,
            "-m",
            "gemini-3-pro"
        ]),
        Some(ProcessRole::Interactive)
    );
    assert_eq!(
        role(&["node", "/usr/local/bin/gemini", "-p", "say hi"]),
        Some(ProcessRole::Print)
    );
    assert_eq!(role(&["gemini", "--prompt=hi"]), Some(ProcessRole::Print));
    assert_eq!(
        role(&["node", "/src/gemini-cli/packages/cli/dist/index.js"]),
        Some(ProcessRole::Interactive)
    );
    assert_eq!(
        role(&["gemini", "--list-sessions"]),
        Some(ProcessRole::Helper)
    );
    assert_eq!(
        role(&["gemini", "--delete-session", "3"]),
        Some(ProcessRole::Helper)
    );
    assert_eq!(role(&["gemini", "mcp", "list"]), Some(ProcessRole::Helper));
    assert_eq!(
        role(&["gemini", "extensions", "install", "x"]),
        Some(ProcessRole::Helper)
    );
    assert_eq!(role(&["node", "server.js", "gemini"]), None);
    assert_eq!(role(&["node", "/opt/app/dist/index.js"]), None);
    assert_eq!(role(&["python3", "gemini.py"]), None);
    assert!(slate::agents::recognise(&process(10, 1, &["node", BUNDLE])).is_some());
}

#[test]
fn only_a_full_uuid_names_the_session() {
    let session =
        |cmd: &[&str]| gemini::recognise(&process(10, 1, cmd)).and_then(|found| found.session_arg);
    let id = "5e1f2a3b-6c7d-4e8f-9a0b-1c2d3e4f5a6b";
    assert_eq!(session(&["gemini", "--resume", id]).as_deref(), Some(id));
    assert_eq!(session(&["gemini", "-r", id]).as_deref(), Some(id));
    assert_eq!(
        session(&["node", BUNDLE, &format!("--resume={id}")]).as_deref(),
        Some(id)
    );
    assert_eq!(session(&["gemini", "--resume", "latest"]), None);
    assert_eq!(session(&["gemini", "--resume", "2"]), None);
    assert_eq!(session(&["gemini", "--resume"]), None);
}

#[test]
fn the_relaunching_parent_is_told_apart_from_its_child() {
    let parent = process(100, 1, &["node", BUNDLE]);
    let child = process(
        101,
        100,
        &["/usr/bin/node", "--max-old-space-size=8192", BUNDLE],
    );
    let other = process(200, 1, &["node", BUNDLE]);
    let unrelated_child = process(102, 100, &["bash", "-c", "npm test"]);
    let all = vec![
        parent.clone(),
        child.clone(),
        other.clone(),
        unrelated_child,
    ];
    assert!(gemini::is_relaunch_parent(&parent, &all));
    assert!(!gemini::is_relaunch_parent(&child, &all));
    assert!(!gemini::is_relaunch_parent(&other, &all));
    // A parent started with a relative script path hands its child the absolute one.
    let relative = process(300, 1, &["node", "bundle/gemini.js"]);
    let absolute = process(301, 300, &["node", "/src/gemini-cli/bundle/gemini.js"]);
    assert!(gemini::is_relaunch_parent(
        &relative,
        &[relative.clone(), absolute]
    ));
    // A child running a different Gemini install is not a relaunch.
    let foreign = process(
        103,
        200,
        &["node", "/opt/@google/gemini-cli/bundle/gemini.js"],
    );
    assert!(!gemini::is_relaunch_parent(
        &other,
        &[other.clone(), foreign]
    ));
}

#[test]
fn temp_folders_map_to_project_roots() {
    let registry = std::fs::read(fixtures().join("dot-gemini/projects.json")).expect("readable");
    assert_eq!(
        gemini::project_root_from_registry(&registry, "acme-api").as_deref(),
        Some(ROOT)
    );
    let hash = "6689668a49dc648b376787d8cde1d55e418968e916b4efa79d849fba7fb28a1f";
    assert_eq!(gemini::hash_for(ROOT), hash);
    assert_eq!(
        gemini::project_root_from_registry(&registry, hash).as_deref(),
        Some(ROOT)
    );
    assert_eq!(gemini::project_root_from_registry(&registry, "other"), None);
    assert_eq!(
        gemini::project_root_from_registry(b"not json", "acme-api"),
        None
    );
    assert_eq!(gemini::slug_for(ROOT), "acme-api");
    let marker = std::fs::read_to_string(fixtures().join("dot-gemini/tmp/acme-api/.project_root"))
        .expect("readable");
    assert_eq!(marker.trim(), ROOT);
}

/// Every complete line of every sample and focused fixture, for mutation.
fn fixture_lines() -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    let mut pending = vec![fixtures()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)
            .expect("fixture dir is readable")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "jsonl") {
                let bytes = std::fs::read(&path).expect("fixture is readable");
                lines.extend(bytes.split(|&byte| byte == b'\n').map(<[u8]>::to_vec));
            }
        }
    }
    lines.sort();
    lines
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(lines in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..200), 0..8)) {
        let mut fold = ChatFold::new();
        for line in &lines {
            let _ = fold.feed(line);
        }
        let _ = gemini::fold_legacy_json(&lines.concat());
    }

    #[test]
    fn mutated_sample_lines_never_panic(
        picks in proptest::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..12)
    ) {
        let lines = fixture_lines();
        let mut fold = ChatFold::new();
        let mut whole = Vec::new();
        for (line, at, byte, how) in picks {
            let mut line = lines[line.index(lines.len())].clone();
            if !line.is_empty() {
                let at = at.index(line.len());
                match how {
                    0 => line[at] = byte,
                    1 => line.truncate(at),
                    _ => line.insert(at, byte),
                }
            }
            let _ = fold.feed(&line);
            whole.extend_from_slice(&line);
        }
        let _ = gemini::fold_legacy_json(&whole);
    }
}

#[test]
fn the_reported_stream_always_adds_up_to_the_folded_chat() {
    // Whatever the fold reported so far, applied the tracker's way (a reset forgets the turn
    // records before it), must equal a replay of the chat as it stands, after every line.
    let records = |observations: &[Observation]| -> Vec<Record> {
        observations
            .iter()
            .filter_map(|observation| match observation {
                Observation::Record(record) => Some(record.clone()),
                _ => None,
            })
            .collect()
    };
    let mut pending = vec![fixtures()];
    let mut files = 0;
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)
            .expect("fixture dir is readable")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "jsonl") {
                continue;
            }
            files += 1;
            let bytes = std::fs::read(&path).expect("fixture is readable");
            let mut fold = ChatFold::new();
            let mut seen: Vec<Record> = Vec::new();
            for (index, line) in bytes.split(|&byte| byte == b'\n').enumerate() {
                let observations = fold.feed(line).unwrap_or_default();
                if let Some(reset) = observations.iter().rposition(|o| *o == Observation::Reset) {
                    seen.clear();
                    seen.extend(records(&observations[reset..]));
                } else {
                    seen.extend(records(&observations));
                }
                assert_eq!(
                    seen,
                    records(&fold.replay()),
                    "{} after line {}",
                    path.display(),
                    index + 1
                );
            }
        }
    }
    assert!(files >= 14, "only {files} fixtures found");
}
