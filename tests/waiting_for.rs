//! Claude Code's `waitingFor`, each value replayed through the engine: a recorded session of
//! Claude Code 2.1.332 (`fixtures/recordings/`), then its registry entry rewritten as Claude Code
//! writes it when the session goes `waiting` (`fixtures/registry/claude-code/waiting-for/`),
//! read as the watcher's hint would have it read. Each value gives its state and reason, the
//! person's own menu (`dialog open`) changes nothing and notifies nobody, and a value Slate does
//! not know is counted for `slate doctor` instead of becoming a Needs you.

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use slate::agents::versions::report;
use slate::agents::BUILT_IN;
use slate::engine::{Engine, Options, ProcessSource};
use slate::model::{ReasonCode, Session, Status, Timestamp};
use slate::policy::notifications::{decide, Input, Notifier, BURST};
use slate::sources::processes;
use slate::sources::roots::Env;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// A recording of Claude Code 2.1.332 replayed, and the registry entry it was recorded with.
struct Replayed {
    engine: Engine,
    session_id: String,
    registry: PathBuf,
    captured: Timestamp,
    _home: tempfile::TempDir,
}

fn copy_tree(from: &Path, to: &Path, at: Timestamp) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target, at);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
            let when = UNIX_EPOCH + Duration::from_millis(at.millis() as u64);
            let file = std::fs::File::options().write(true).open(&target).unwrap();
            file.set_modified(when).unwrap();
        }
    }
}

fn replay(scenario: &str) -> Replayed {
    let dir = root().join("recordings/claude-code/2.1.332").join(scenario);
    let text = std::fs::read_to_string(dir.join("recording.json")).unwrap();
    let recording: serde_json::Value = serde_json::from_str(&text).unwrap();
    let captured = Timestamp::parse_rfc3339(recording["captured_at"].as_str().unwrap()).unwrap();
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    copy_tree(&dir.join("home"), &home, captured);
    let sessions = home.join(".claude/sessions");
    let registry = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension().is_some_and(|ext| ext == "json"))
        .expect("a recorded registry entry");
    let env = Env {
        home: Some(home.clone()),
        xdg_data_home: Some(home.join(".local/share")),
        xdg_config_home: Some(home.join(".config")),
        ..Env::default()
    };
    let mut options = Options::from_env(env);
    let table = processes::load_table(&dir.join("processes.json")).unwrap();
    options.processes = ProcessSource::Recorded(table);
    let mut engine = Engine::new(options);
    engine.refresh(captured);
    Replayed {
        engine,
        session_id: recording["session_id"].as_str().unwrap().to_owned(),
        registry,
        captured,
        _home: temp,
    }
}

/// What one value did: the session before and after, the sessions the engine reported changed,
/// and the notifications the policy made of them.
struct Outcome {
    before: Session,
    after: Session,
    changed: Vec<Session>,
    notified: usize,
    unread_counted: u64,
}

/// Replays `scenario`, then writes `fixture` over its registry entry two seconds after the
/// recorded moment and reads it.
fn rewrite(scenario: &str, fixture: &str) -> Outcome {
    let mut replayed = replay(scenario);
    let before = replayed
        .engine
        .find(&replayed.session_id)
        .expect("the recorded session");
    let mut notifier = Notifier::seed(&replayed.engine.sessions());
    let entry = root()
        .join("registry/claude-code/waiting-for")
        .join(fixture);
    std::fs::copy(&entry, &replayed.registry).unwrap();
    let now = replayed.captured.plus(Duration::from_secs(2));
    let changes = replayed.engine.read_path(&replayed.registry, now);
    let after = replayed.engine.find(&replayed.session_id).unwrap();
    // The notification policy as the tray and the push channel run it, over the same changes.
    let mut notified = 0;
    for change in &changes {
        notified += decide(&mut notifier, Input::Changed(&change.session), now, false)
            .plans
            .len();
    }
    notified += decide(&mut notifier, Input::Tick, now.plus(BURST), false)
        .plans
        .len();
    let unread_counted = report(BUILT_IN, [&after])
        .iter()
        .flat_map(|agent| &agent.unread)
        .filter(|count| count.version.as_deref() == Some("2.1.332"))
        .map(|count| count.records)
        .sum();
    Outcome {
        before,
        after,
        changed: changes.into_iter().map(|change| change.session).collect(),
        notified,
        unread_counted,
    }
}

fn state(session: &Session) -> (Status, ReasonCode, &str) {
    (
        session.status,
        session.session_state.reason.code,
        session.session_state.reason.text.as_str(),
    )
}

#[test]
fn each_waiting_for_value_claude_code_writes_gives_its_reason_and_one_notification() {
    let asks = [
        (
            "tool_running--permission-prompt.json",
            ReasonCode::PermissionPrompt,
            "Asks permission for Bash: bash scripts/long-task.sh",
        ),
        (
            "tool_running--input-needed.json",
            ReasonCode::Question,
            "Asks you a question",
        ),
        (
            "tool_running--worker-request.json",
            ReasonCode::PermissionPrompt,
            "Asks you to approve a worker's request",
        ),
        (
            "tool_running--sandbox-request.json",
            ReasonCode::PermissionPrompt,
            "Asks for a sandbox exception",
        ),
        (
            "tool_running--goal-proposal.json",
            ReasonCode::Dialog,
            "Proposes a goal",
        ),
    ];
    for (fixture, code, text) in asks {
        let outcome = rewrite("tool_running", fixture);
        assert_eq!(outcome.before.status, Status::Working, "{fixture}");
        assert_eq!(
            state(&outcome.after),
            (Status::Waiting, code, text),
            "{fixture}"
        );
        assert_eq!(outcome.changed.len(), 1, "{fixture}");
        assert_eq!(outcome.notified, 1, "{fixture}: one notification");
        assert_eq!(outcome.unread_counted, 0, "{fixture}: a value Slate knows");
    }
}

#[test]
fn the_persons_own_menu_after_a_finished_turn_keeps_the_state_reason_and_time_and_notifies_nobody()
{
    let outcome = rewrite("finished", "finished--dialog-open.json");
    assert_eq!(
        state(&outcome.before),
        (
            Status::Waiting,
            ReasonCode::TurnFinished,
            "The turn finished"
        )
    );
    // Not "A dialog is open: dialog open": the same state, reason and time as before the menu.
    assert_eq!(state(&outcome.after), state(&outcome.before));
    assert_eq!(outcome.after.session_state, outcome.before.session_state);
    assert!(
        outcome.changed.is_empty(),
        "no change: {:?}",
        outcome.changed
    );
    assert_eq!(outcome.notified, 0);
    assert_eq!(outcome.unread_counted, 0, "a value Slate knows");
}

#[test]
fn the_persons_own_menu_during_a_running_tool_keeps_it_working() {
    let outcome = rewrite("tool_running", "tool_running--dialog-open.json");
    assert_eq!(state(&outcome.after).0, Status::Working);
    assert_eq!(state(&outcome.after), state(&outcome.before));
    assert!(
        outcome.changed.is_empty(),
        "no change: {:?}",
        outcome.changed
    );
    assert_eq!(outcome.notified, 0);
}

#[test]
fn a_value_slate_does_not_know_is_counted_for_doctor_and_is_no_needs_you_on_its_own() {
    // A running tool stays Working, a finished turn stays as it was: nothing else agrees.
    for (scenario, fixture, status, code) in [
        (
            "tool_running",
            "tool_running--review-pending.json",
            Status::Working,
            ReasonCode::ToolRunning,
        ),
        (
            "finished",
            "finished--review-pending.json",
            Status::Waiting,
            ReasonCode::TurnFinished,
        ),
    ] {
        let outcome = rewrite(scenario, fixture);
        assert_eq!(state(&outcome.after).0, status, "{fixture}");
        assert_eq!(state(&outcome.after).1, code, "{fixture}");
        assert_eq!(outcome.notified, 0, "{fixture}");
        assert_eq!(outcome.unread_counted, 1, "{fixture}: counted once");
        let unread = outcome.after.unread.as_ref().expect("counted as unread");
        assert_eq!(unread.kinds[0].what, "waitingFor <text, 14 chars>");
        assert!(
            !unread.samples[0].contains("review"),
            "the value is redacted: {}",
            unread.samples[0]
        );
    }
    // An AskUserQuestion the transcript holds open agrees: the session asks a question.
    let outcome = rewrite("question", "question--review-pending.json");
    assert_eq!(state(&outcome.after).0, Status::Waiting);
    assert_eq!(state(&outcome.after).1, ReasonCode::Question);
    assert_eq!(outcome.unread_counted, 1);
}

#[test]
fn a_value_slate_does_not_know_is_counted_once_while_the_registry_keeps_saying_it() {
    let mut replayed = replay("finished");
    let entry = root().join("registry/claude-code/waiting-for/finished--review-pending.json");
    let count = |engine: &Engine, id: &str| {
        engine
            .find(id)
            .ok()
            .and_then(|session| session.unread)
            .map_or(0, |unread| unread.records)
    };
    let mut now = replayed.captured;
    for _ in 0..3 {
        now = now.plus(Duration::from_secs(1));
        std::fs::copy(&entry, &replayed.registry).unwrap();
        replayed.engine.read_path(&replayed.registry, now);
        replayed.engine.refresh(now);
    }
    assert_eq!(count(&replayed.engine, &replayed.session_id), 1);
    // Idle again, then the same value again: a second time.
    let recorded = root().join("recordings/claude-code/2.1.332/finished/home/.claude/sessions");
    let idle = recorded.join(replayed.registry.file_name().unwrap());
    std::fs::copy(&idle, &replayed.registry).unwrap();
    replayed
        .engine
        .read_path(&replayed.registry, now.plus(Duration::from_secs(1)));
    std::fs::copy(&entry, &replayed.registry).unwrap();
    replayed
        .engine
        .read_path(&replayed.registry, now.plus(Duration::from_secs(2)));
    assert_eq!(count(&replayed.engine, &replayed.session_id), 2);
}
