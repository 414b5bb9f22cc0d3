//! Replays the recordings of real agent CLIs in `fixtures/recordings/` through the whole engine:
//! the recorded files in a temporary HOME, the recorded process table, and the recorded moment as
//! `now`. Each recording names the state docs/states.md §3 prescribes for that moment.

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use serde::Deserialize;
use slate::engine::{Engine, Options, ProcessSource};
use slate::model::{AgentKind, Timestamp};
use slate::sources::processes;
use slate::sources::roots::Env;

#[derive(Debug, Deserialize)]
struct Recording {
    agent: String,
    cli_version: String,
    scenario: String,
    captured_at: String,
    session_id: String,
    expected: Expected,
    /// Each recorded file's last write, relative to `home/`, where the recorder kept it. Git does
    /// not keep modification times, so without these every file counts as written at the moment
    /// of capture.
    #[serde(default)]
    mtimes: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
struct Expected {
    status: String,
    reason: String,
}

fn recordings() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/recordings");
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.join("recording.json").is_file() {
                found.push(path);
            } else if path.is_dir() && path.file_name().is_some_and(|name| name != "home") {
                stack.push(path);
            }
        }
    }
    found.sort();
    found
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn set_mtimes(dir: &Path, home: &Path, recording: &Recording, captured: Timestamp) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            set_mtimes(&path, home, recording, captured);
            continue;
        }
        let relative = path
            .strip_prefix(home)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let at = recording
            .mtimes
            .get(&relative)
            .and_then(|text| Timestamp::parse_rfc3339(text))
            .unwrap_or(captured);
        let when = UNIX_EPOCH + Duration::from_millis(at.millis() as u64);
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(when).unwrap();
    }
}

/// Reasons that say "closed" from a single look: a one-shot run never saw the process alive,
/// so it cannot tell `process_gone` from `not_listed` or `no_process`.
const CLOSED: &[&str] = &["process_gone", "not_listed", "no_process", "print_finished"];

#[test]
fn real_cli_recordings_get_their_prescribed_state() {
    let dirs = recordings();
    assert!(!dirs.is_empty(), "no recordings under fixtures/recordings");
    let mut failures = Vec::new();
    for dir in &dirs {
        let text = std::fs::read_to_string(dir.join("recording.json")).unwrap();
        let recording: Recording =
            serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
        let name = format!(
            "{} {} {}",
            recording.agent, recording.cli_version, recording.scenario
        );
        let captured = Timestamp::parse_rfc3339(&recording.captured_at).expect("captured_at");
        let agent = AgentKind::parse(&recording.agent).expect("known agent");
        // A single look at a closed session of an agent without a listing cannot tell a process
        // that just exited from one Slate cannot see: docs/states.md §3 rule 1 closes it once the
        // window has passed. (A live engine closes it at once, having seen the process die; the
        // `rule1-codex-daemon-does-not-vouch` scenario shows that.) Claude Code's registry
        // decides at once, so its closed recordings are checked at the moment of capture.
        let now = if recording.expected.status == "ended" && agent != AgentKind::CLAUDE_CODE {
            captured.plus(Duration::from_secs(46))
        } else {
            captured
        };
        let temp = tempfile::tempdir().unwrap();
        let home = temp.path().join("home");
        copy_tree(&dir.join("home"), &home);
        set_mtimes(&home, &home, &recording, captured);
        let table = processes::load_table(&dir.join("processes.json")).unwrap();
        let env = Env {
            home: Some(home.clone()),
            xdg_data_home: Some(home.join(".local/share")),
            xdg_config_home: Some(home.join(".config")),
            ..Env::default()
        };
        let mut options = Options::from_env(env);
        options.processes = ProcessSource::Recorded(table);
        let mut engine = Engine::new(options);
        engine.refresh(now);
        let session = engine
            .sessions()
            .into_iter()
            .find(|session| session.agent == agent && session.id.as_str() == recording.session_id);
        let Some(session) = session else {
            failures.push(format!(
                "{name}: session {} not found",
                recording.session_id
            ));
            continue;
        };
        let state = &session.session_state;
        let reason = state.reason.code.as_str();
        let reason_ok = reason == recording.expected.reason
            || recording.expected.status == "ended" && CLOSED.contains(&reason);
        if state.status.as_str() != recording.expected.status || !reason_ok {
            let key = slate::model::SessionKey::new(agent, recording.session_id.as_str());
            failures.push(format!(
                "{name}: expected {}/{}, got {}/{reason} ({}); evidence: {:?}",
                recording.expected.status,
                recording.expected.reason,
                state.status.as_str(),
                state.reason.text,
                engine.evidence(&key)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
