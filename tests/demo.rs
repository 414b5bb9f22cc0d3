//! The demo's timeline, replayed step by step through the real engine with a fake clock: every
//! session starts working, and each then reaches the state the demo promises.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use slate::demo::{self, SESSIONS};
use slate::engine::{Engine, Options};
use slate::model::{Session, Timestamp};

fn state_of<'a>(sessions: &'a [Session], project: &str) -> &'a Session {
    let session = SESSIONS.iter().find(|s| s.project == project).unwrap();
    sessions
        .iter()
        .find(|s| s.id.as_str() == session.id)
        .unwrap_or_else(|| panic!("{project} not found in {sessions:#?}"))
}

fn summary(sessions: &[Session]) -> Vec<(String, &'static str, String)> {
    let mut rows: Vec<_> = SESSIONS
        .iter()
        .map(|demo| {
            let session = state_of(sessions, demo.project);
            (
                demo.project.to_string(),
                session.status.as_str(),
                session.session_state.reason.code.as_str().to_string(),
            )
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn the_demo_plays_every_session_into_its_promised_state() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let started = Timestamp::parse_rfc3339("2026-11-29T12:00:00Z").unwrap();
    let script = demo::script();
    let table = Arc::new(Mutex::new(demo::process_table(home, started)));
    for step in script.iter().filter(|step| step.at.is_zero()) {
        demo::apply(home, &table, step, started, started).unwrap();
    }
    for session in &SESSIONS {
        std::fs::create_dir_all(demo::folder(home, session)).unwrap();
    }
    let mut options = Options::from_env(slate::sources::roots::Env {
        home: Some(home.to_path_buf()),
        ..Default::default()
    });
    options.processes = slate::engine::ProcessSource::Shared(table.clone());
    let mut engine = Engine::new(options);
    engine.refresh(started.plus(Duration::from_secs(1)));
    let first = engine.sessions();
    assert!(
        summary(&first)
            .iter()
            .all(|(_, status, _)| *status == "working"),
        "{:#?}",
        summary(&first)
    );
    assert_eq!(
        state_of(&first, "acme-api").title.as_deref(),
        Some("Rate limiting for the login endpoint")
    );

    for step in script.iter().filter(|step| !step.at.is_zero()) {
        let at = started.plus(step.at);
        demo::apply(home, &table, step, started, at).unwrap();
        engine.refresh(at.plus(Duration::from_millis(500)));
    }
    let end = started.plus(Duration::from_secs(30));
    engine.tick(end);
    let last = engine.sessions();
    assert_eq!(
        summary(&last),
        vec![
            (
                "acme-api".to_string(),
                "waiting",
                "permission_prompt".to_string()
            ),
            ("billing".to_string(), "ended", "process_gone".to_string()),
            ("docs-site".to_string(), "waiting", "question".to_string()),
            (
                "ml-pipeline".to_string(),
                "working",
                "tool_running".to_string()
            ),
            (
                "web-dashboard".to_string(),
                "waiting",
                "turn_finished".to_string()
            ),
        ]
    );
    assert_eq!(
        state_of(&last, "docs-site").session_state.reason.text,
        "Asks: Should the guide cover upgrading from v1 too?"
    );
}

#[test]
fn a_started_demo_lives_in_its_own_home_and_cleans_up() {
    let temp = tempfile::tempdir().unwrap();
    let demo = demo::start(Some(temp.path()), slate::live::system_clock).unwrap();
    let home = demo.home.clone();
    assert!(home.starts_with(temp.path()));
    assert_eq!(demo.env.home.as_deref(), Some(home.as_path()));
    assert!(demo::transcript_path(&home, &SESSIONS[0]).is_file());
    drop(demo);
    assert!(!home.exists());
}
