//! The agent registry: the built-in descriptions, agent ids on the wire, and a toy agent defined
//! only here, registered through the same kind of description, found, vouched for and decided by
//! the real engine.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use slate::agents::{
    self, AgentProcess, Base, Description, Found, Layout, LineError, LineParser, Observation,
    ProcessRole, Processes, Record, RecordKind, Registry, Root, Sessions, Watch, BUILT_IN,
};
use slate::engine::{Engine, Options, ProcessSource};
use slate::model::{
    AgentKind, ProblemKind, ProcessInfo, ProcessTable, ReasonCode, Session, SessionKey, Status,
    Timestamp,
};
use slate::sources::roots::Env;

// ---- The toy agent ------------------------------------------------------------------------------

/// A made-up agent CLI, `toy`, that keeps one JSONL file per session in `~/.toy/sessions/` (or
/// `$TOY_HOME/sessions/`). Each line is `{"at": <RFC 3339>, "do": <what>, …}`: `start` names the
/// session's folder, `ask` is a prompt, `think` is model text, and `done` ends the turn.
static TOY: Description = Description {
    id: "toy-agent",
    name: "Toy",
    product: "Toy Agent",
    processes: Processes {
        programs: &["toy"],
        recognise: recognise_toy,
        relaunch_parent: None,
    },
    root: Root {
        candidates: &[(Base::Var("TOY_HOME"), ""), (Base::Home, ".toy")],
        variables: &[],
    },
    watch: Watch {
        folders: &[("sessions", true)],
        files: &[".toylog"],
    },
    sessions: Sessions::Transcripts(Layout {
        folders: &[&["sessions"]],
        classify: classify_toy,
        parser: |_| Box::new(ToyLines),
        names: None,
        whole_file: None,
        full_id: None,
        project: None,
        beside: None,
    }),
    listing: None,
    titles: None,
    screens: None,
    keys: None,
    hooks: None,
    recorded: &[],
};

const TOY_KIND: AgentKind = AgentKind::of(&TOY);

/// The registry of a machine with only the toy agent on it.
static TOY_ONLY: [&Description; 1] = [&TOY];

fn recognise_toy(process: &ProcessInfo) -> Option<AgentProcess> {
    let program = agents::program_name(process.cmd.first()?);
    (program == "toy").then_some(AgentProcess {
        agent: TOY_KIND,
        role: ProcessRole::Interactive,
        folder_arg: None,
        session_arg: None,
    })
}

/// `sessions/<session id>.toylog`.
fn classify_toy(parts: &[&str]) -> Option<Found> {
    match parts {
        ["sessions", file] => Some(Found::main(file.strip_suffix(".toylog")?)),
        _ => None,
    }
}

/// The toy's lines need no memory of each other.
#[derive(Debug)]
struct ToyLines;

impl LineParser for ToyLines {
    fn feed(&mut self, line: &[u8]) -> Result<Vec<Observation>, LineError> {
        let value: Value =
            serde_json::from_slice(line).map_err(|error| LineError::NotJson(error.to_string()))?;
        let at = value["at"].as_str().and_then(Timestamp::parse_rfc3339);
        let record = |kind| Observation::Record(Record { at, kind });
        Ok(match value["do"].as_str() {
            Some("start") => vec![Observation::Info(agents::Info {
                cwd: value["cwd"].as_str().map(str::to_string),
                ..agents::Info::default()
            })],
            Some("ask") => vec![record(RecordKind::Prompt {
                text: value["text"].as_str().unwrap_or_default().to_string(),
            })],
            Some("think") => vec![record(RecordKind::ModelText)],
            Some("done") => vec![record(RecordKind::TurnEnded { turn_id: None })],
            _ => return Err(LineError::Shape("a toy line says what it does")),
        })
    }

    fn restart(&mut self) {}
}

// ---- The toy agent through the engine -----------------------------------------------------------

const SESSION: &str = "toy-session-1";
const FOLDER: &str = "/work/toy-project";

/// The moment the toy session starts; everything else is counted from it.
fn t0() -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(1_795_950_000_000)
}

fn stamp(at: SystemTime) -> Timestamp {
    let ms = at
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_millis();
    Timestamp::from_millis(i64::try_from(ms).expect("fits"))
}

/// Appends toy lines written at `at` and dates the file's last write to it, as the agent would.
fn append(path: &Path, at: SystemTime, lines: &[&str]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for line in lines {
        let line = line.replace("{at}", &stamp(at).to_rfc3339());
        writeln!(file, "{line}").unwrap();
    }
    file.set_modified(at).unwrap();
}

/// The `toy` process (pid 4100) working in `FOLDER`, started before the session.
fn toy_table() -> ProcessTable {
    ProcessTable {
        processes: vec![ProcessInfo {
            pid: 4100,
            ppid: Some(1),
            name: "toy".to_string(),
            exe: None,
            cmd: vec!["toy".to_string(), "--fast".to_string()],
            cwd: Some(FOLDER.to_string()),
            start_time: stamp(t0() - Duration::from_secs(600)),
            start_ticks: None,
        }],
    }
}

fn toy_session(engine: &Engine) -> Session {
    engine
        .tracker()
        .session(&SessionKey::new(TOY_KIND, SESSION))
        .expect("the toy session is known")
}

fn state(session: &Session) -> (Status, ReasonCode) {
    (session.status, session.session_state.reason.code)
}

#[test]
fn a_toy_agent_is_found_vouched_for_and_decided_by_the_engine() {
    let home = tempfile::tempdir().expect("temp dir");
    let transcript = home.path().join(format!(".toy/sessions/{SESSION}.toylog"));
    append(
        &transcript,
        t0(),
        &[
            &format!(r#"{{"at":"{{at}}","do":"start","cwd":"{FOLDER}"}}"#),
            r#"{"at":"{at}","do":"ask","text":"build the castle"}"#,
        ],
    );
    // A Claude Code transcript in the same HOME is not the toy registry's business.
    append(
        &home.path().join(".claude/projects/-work/0b1c2d3e.jsonl"),
        t0(),
        &[r#"{"type":"user"}"#],
    );
    let table = Arc::new(Mutex::new(toy_table()));
    let mut options = Options::from_env(Env::with_home(home.path()));
    options.processes = ProcessSource::Shared(table.clone());
    options.registry = Registry::new(&TOY_ONLY);
    let mut engine = Engine::new(options);

    // The walk finds the toy's transcript, and the toy process vouches for it: the prompt is
    // being answered.
    engine.refresh(stamp(t0() + Duration::from_secs(1)));
    let session = toy_session(&engine);
    assert_eq!(session.agent, TOY_KIND);
    assert_eq!(session.pid, Some(4100));
    assert_eq!(session.folder.as_deref(), Some(FOLDER));
    assert_eq!(session.last_prompt.as_deref(), Some("build the castle"));
    assert_eq!(
        state(&session),
        (Status::Working, ReasonCode::ModelAnswering)
    );
    assert_eq!(
        engine.sessions().len(),
        1,
        "only the toy's sessions are looked for"
    );
    let roots = engine.roots();
    assert_eq!(roots.len(), 1);
    assert_eq!((roots[0].agent, roots[0].found), (TOY_KIND, true));
    assert_eq!(roots[0].product, "Toy Agent");
    let watched = engine.watch_paths();
    assert_eq!(watched.len(), 1);
    assert_eq!(watched[0].path, home.path().join(".toy/sessions"));

    // The turn ends: the toy waits for its person.
    let done_at = t0() + Duration::from_secs(20);
    append(
        &transcript,
        done_at,
        &[
            r#"{"at":"{at}","do":"think"}"#,
            r#"{"at":"{at}","do":"done"}"#,
        ],
    );
    engine.read_path(&transcript, stamp(done_at + Duration::from_secs(1)));
    assert_eq!(
        state(&toy_session(&engine)),
        (Status::Waiting, ReasonCode::TurnFinished)
    );

    // A malformed line is a counted problem, and the session stands.
    append(&transcript, done_at, &["not json"]);
    engine.read_path(&transcript, stamp(done_at + Duration::from_secs(2)));
    assert_eq!(
        engine.problems().counts.get(&ProblemKind::MalformedLine),
        Some(&1)
    );
    assert_eq!(toy_session(&engine).status, Status::Waiting);

    // The toy exits and its transcript stays quiet past the window: the session is closed.
    table.lock().unwrap().processes.clear();
    engine.refresh(stamp(done_at + Duration::from_secs(120)));
    let session = toy_session(&engine);
    assert_eq!(state(&session), (Status::Ended, ReasonCode::ProcessGone));
    assert_eq!(session.pid, None);
    assert_eq!(
        serde_json::to_value(&session).unwrap()["agent"],
        "toy-agent"
    );
}

#[test]
fn a_toy_root_follows_its_own_variable() {
    let home = tempfile::tempdir().expect("temp dir");
    let elsewhere = home.path().join("toy-home");
    let env = Env::with_home(home.path()).with_var("TOY_HOME", &elsewhere);
    let roots = slate::sources::roots::resolve_roots(Registry::new(&TOY_ONLY), &env);
    assert_eq!(roots.get(TOY_KIND), Some(elsewhere.as_path()));
    assert_eq!(roots.get(AgentKind::CLAUDE_CODE), None);
    assert!(slate::sources::roots::is_interesting(
        Registry::new(&TOY_ONLY),
        Path::new("/h/toy-home/sessions/a.toylog")
    ));
    assert!(!slate::sources::roots::is_interesting(
        BUILT_IN,
        Path::new("/h/toy-home/sessions/a.toylog")
    ));
}

// ---- The built-in agents and their ids ----------------------------------------------------------

#[test]
fn the_built_in_agents_keep_their_wire_ids_and_names() {
    let described: Vec<(&str, &str, &str)> = BUILT_IN
        .iter()
        .map(|description| (description.id, description.name, description.product))
        .collect();
    // The first five keep their place and spelling; an agent added later comes after them,
    // with an id of its own.
    assert_eq!(
        described[..5],
        [
            ("claude-code", "Claude Code", "Claude Code"),
            ("codex", "Codex", "Codex"),
            ("gemini-cli", "Gemini", "Gemini CLI"),
            ("opencode", "OpenCode", "OpenCode"),
            ("cursor-agent", "Cursor", "cursor-agent"),
        ]
    );
    let mut ids: Vec<&str> = described.iter().map(|(id, _, _)| *id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(
        ids.len(),
        described.len(),
        "every agent has an id of its own"
    );
    let constants = [
        (AgentKind::CLAUDE_CODE, "claude-code"),
        (AgentKind::CODEX, "codex"),
        (AgentKind::GEMINI_CLI, "gemini-cli"),
        (AgentKind::OPENCODE, "opencode"),
        (AgentKind::CURSOR_AGENT, "cursor-agent"),
        (AgentKind::QWEN_CODE, "qwen-code"),
        (AgentKind::COPILOT, "copilot"),
    ];
    for (agent, id) in constants {
        assert_eq!(agent.as_str(), id);
        assert_eq!(serde_json::to_value(agent).unwrap(), Value::from(id));
        assert_eq!(
            serde_json::from_value::<AgentKind>(Value::from(id)).unwrap(),
            agent
        );
        assert_eq!(AgentKind::parse(id), Some(agent));
        assert!(agent.description().is_some(), "{id}");
        // Every built-in agent is recognised by its own program name.
        let program = agent.description().unwrap().processes.programs[0];
        assert_eq!(BUILT_IN.by_program(program), Some(agent));
    }
    assert_eq!(AgentKind::parse("toy-agent"), None);
}

#[test]
fn an_agent_only_a_newer_slate_knows_is_kept_by_its_id() {
    let wire = serde_json::json!({
        "agent": "quill-cli",
        "id": "q-1",
        "folder": null, "project": null, "title": null, "last_prompt": null, "branch": null,
        "row_time": "2026-11-28T10:00:00.000Z", "pid": null, "transcript": null, "model": null,
        "cli_version": null, "status": "waiting",
    });
    let session = Session::from_wire(wire).expect("a session from a newer server reads");
    assert_eq!(session.agent.as_str(), "quill-cli");
    assert_eq!(session.agent.display_name(), "quill-cli");
    assert!(session.agent.description().is_none());
    assert_eq!(session.key(), SessionKey::new(session.agent, "q-1"));
    assert_eq!(
        serde_json::to_value(&session).unwrap()["agent"],
        "quill-cli"
    );

    // A foreign agent and a described one with the same id are the same agent.
    assert_eq!(AgentKind::from_wire("toy-agent").unwrap(), TOY_KIND);
    assert_eq!(AgentKind::from_wire("codex").unwrap(), AgentKind::CODEX);
    // Ids that are not ids are refused with a clear error, never a panic.
    for bad in ["", "two words", &"x".repeat(15), "agent\u{e9}"] {
        let error = AgentKind::from_wire(bad).expect_err(bad);
        assert!(error.to_string().starts_with("not an agent id"), "{error}");
    }
    assert!(AgentKind::from_wire(&"x".repeat(14)).is_ok());
    // Small enough that a session's key costs little more than its id.
    assert_eq!(std::mem::size_of::<AgentKind>(), 24);
}

#[test]
fn problem_kinds_keep_their_spelling() {
    for kind in ProblemKind::ALL {
        let wire = serde_json::to_value(kind).unwrap();
        assert_eq!(wire, Value::from(kind.as_str()));
        assert_eq!(kind.to_string(), kind.as_str());
        assert_eq!(serde_json::from_value::<ProblemKind>(wire).unwrap(), kind);
    }
    // Counted by kind, problems list in the alphabetical order of their spelling.
    let mut spelled: Vec<&str> = ProblemKind::ALL.iter().map(|kind| kind.as_str()).collect();
    spelled.sort_unstable();
    let ordered: Vec<&str> = {
        let mut kinds = ProblemKind::ALL.to_vec();
        kinds.sort();
        kinds.iter().map(|kind| kind.as_str()).collect()
    };
    assert_eq!(ordered, spelled);
}
