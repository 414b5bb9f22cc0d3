//! The tray menu as data.

use std::time::Duration;

use slate::model::{AgentKind, SessionKey, Timestamp};
use slate_app::tray::{menu_model, session_label, Entry, MenuAction, Pause};

use crate::waiting;

fn now() -> Timestamp {
    Timestamp::parse_rfc3339("2026-11-29T12:00:00Z").unwrap()
}

fn labels(entries: &[Entry]) -> Vec<String> {
    entries
        .iter()
        .map(|entry| match entry {
            Entry::Item { label, .. } => label.clone(),
            Entry::Note(text) => format!("({text})"),
            Entry::Check { label, checked, .. } => {
                format!("[{}] {label}", if *checked { "x" } else { " " })
            }
            Entry::Submenu { label, entries } => {
                format!("{label} > {}", labels(entries).join(" | "))
            }
            Entry::Separator => "---".to_string(),
        })
        .collect()
}

#[test]
fn the_menu_lists_the_sessions_that_need_you_then_the_app_actions() {
    let entries = menu_model(
        &[waiting("acme-api", "s1"), waiting("web", "s2")],
        Pause::Off,
        false,
        now(),
    );
    assert_eq!(
        labels(&entries),
        [
            "acme-api · Claude Code — Asks permission for Bash: cargo test",
            "web · Claude Code — Asks permission for Bash: cargo test",
            "---",
            "Open Slate",
            "Pause notifications > For 1 hour | Until resumed",
            "[ ] Start at login",
            "---",
            "Quit Slate",
        ]
    );
    match &entries[0] {
        Entry::Item { action, .. } => assert_eq!(
            *action,
            MenuAction::Focus(SessionKey::new(AgentKind::CLAUDE_CODE, "s1"))
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_empty_menu_says_so_and_a_pause_offers_resume() {
    let until = now().plus(Duration::from_secs(3600));
    let entries = menu_model(&[], Pause::Until(until), true, now());
    assert_eq!(
        labels(&entries),
        [
            "(Nothing needs you)",
            "---",
            "Open Slate",
            "Resume notifications (paused until 13:00 UTC)",
            "[x] Start at login",
            "---",
            "Quit Slate",
        ]
    );
    // Once the hour has passed the pause is over.
    assert!(!Pause::Until(until).is_paused(until));
    assert!(Pause::UntilResumed.is_paused(until));
}

#[test]
fn menu_ids_read_back_into_their_actions() {
    let actions = [
        MenuAction::Focus(SessionKey::new(AgentKind::CODEX, "019a-ff:with-colon")),
        MenuAction::OpenWindow,
        MenuAction::PauseForAnHour,
        MenuAction::PauseUntilResumed,
        MenuAction::Resume,
        MenuAction::ToggleAutostart,
        MenuAction::Quit,
    ];
    for action in actions {
        assert_eq!(MenuAction::parse(&action.id()), Some(action.clone()));
    }
    assert_eq!(MenuAction::parse("focus:nobody:x"), None);
    assert_eq!(MenuAction::parse("something-else"), None);
}

#[test]
fn long_reasons_are_cut_and_ampersands_kept_literal() {
    let mut session = waiting("r&d", "s1");
    session.session_state.reason.text = "x".repeat(200);
    let label = session_label(&session);
    assert!(label.starts_with("r&&d · Claude Code — "), "{label}");
    assert!(label.ends_with('…'));
    assert!(label.chars().count() < 100);
}

#[test]
fn a_hosted_session_is_marked_after_its_agent_parked_or_not() {
    use slate::model::{Intent, IntentState};
    let plain = waiting("acme-api", "s1");
    let mut hosted = waiting("web", "s2");
    hosted.hosted = true;
    let mut parked_hosted = waiting("docs", "s3");
    parked_hosted.hosted = true;
    parked_hosted.session_state.intent = Intent {
        state: IntentState::Parked,
        reason: Some("lunch".to_string()),
        awaiting_who: None,
    };
    assert_eq!(
        session_label(&plain),
        "acme-api · Claude Code — Asks permission for Bash: cargo test"
    );
    assert_eq!(
        session_label(&hosted),
        "web · Claude Code (hosted) — Asks permission for Bash: cargo test"
    );
    assert_eq!(
        session_label(&parked_hosted),
        "Parked · docs · Claude Code (hosted) — Asks permission for Bash: cargo test"
    );
    // The menu uses the same labels.
    let entries = menu_model(&[plain, hosted, parked_hosted], Pause::Off, false, now());
    assert_eq!(
        labels(&entries)[..3],
        [
            "acme-api · Claude Code — Asks permission for Bash: cargo test",
            "web · Claude Code (hosted) — Asks permission for Bash: cargo test",
            "Parked · docs · Claude Code (hosted) — Asks permission for Bash: cargo test",
        ]
    );
}
