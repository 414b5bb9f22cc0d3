//! The menu's sessions and actions: the sessions that need you then the app's actions, an empty
//! menu, a pause that offers resume, long reasons cut, a hosted session marked, and a config error
//! said first in the menu and the tooltip.

use std::time::Duration;

use slate::model::{AgentKind, SessionKey};
use slate::policy::menu::{
    menu_model, session_label, tooltip, Entry, MenuAction, MenuState, Pause,
};

use crate::util::{waiting, working};

use super::{labels, now, state};

#[test]
fn the_menu_lists_the_sessions_that_need_you_then_the_app_actions() {
    // The live list also holds a working session: it is not in the menu.
    let entries = menu_model(
        &[
            waiting("acme-api", "s1"),
            working("api", "s3"),
            waiting("web", "s2"),
        ],
        state(Pause::Off, false),
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
            "Mute notifications for > [ ] acme-api · Claude Code | [ ] web · Claude Code",
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
    let entries = menu_model(&[], state(Pause::Until(until), true), now());
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

/// The mute submenu ticks a muted session, leaves out one on another machine (muted there), and
/// its items' ids read back as the session they name.
#[test]
fn the_mute_submenu_ticks_muted_sessions_of_this_machine() {
    let mut muted = waiting("acme-api", "s1");
    muted.muted = true;
    let mut remote = waiting("box-api", "s9");
    remote.machine = Some(slate::model::Machine::new("box").unwrap());
    let entries = menu_model(
        &[muted, waiting("web", "s2"), remote],
        state(Pause::Off, false),
        now(),
    );
    let mute = entries
        .iter()
        .find_map(|entry| match entry {
            Entry::Submenu { label, entries } if label == "Mute notifications for" => {
                Some(entries.clone())
            }
            _ => None,
        })
        .expect("a mute submenu");
    assert_eq!(
        labels(&mute),
        ["[x] acme-api · Claude Code", "[ ] web · Claude Code"]
    );
    let Entry::Check { action, .. } = &mute[0] else {
        panic!("{:?}", mute[0]);
    };
    let key = SessionKey::new(AgentKind::CLAUDE_CODE, "s1");
    assert_eq!(*action, MenuAction::ToggleMute(key.clone()));
    assert_eq!(action.id(), "mute:claude-code:2:s1");
    assert_eq!(
        MenuAction::parse(&action.id()),
        Some(MenuAction::ToggleMute(key))
    );
    // Only this machine's sessions are muted from here; a cut or odd id names none.
    for bad in [
        "mute@box:claude-code:2:s9",
        "mute:claude-code:3:s1",
        "mute:claude-code:2:s1 ",
        "mute:nosuch:2:s1",
        "mute:",
    ] {
        assert_eq!(MenuAction::parse(bad), None, "{bad}");
    }
    // With nothing that needs you, there is nothing to mute.
    let calm = menu_model(&[working("api", "s3")], state(Pause::Off, false), now());
    assert!(!labels(&calm).iter().any(|label| label.starts_with("Mute")));
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
    let entries = menu_model(
        &[plain, hosted, parked_hosted],
        state(Pause::Off, false),
        now(),
    );
    assert_eq!(
        labels(&entries)[..3],
        [
            "acme-api · Claude Code — Asks permission for Bash: cargo test",
            "web · Claude Code (hosted) — Asks permission for Bash: cargo test",
            "Parked · docs · Claude Code (hosted) — Asks permission for Bash: cargo test",
        ]
    );
}

#[test]
fn a_config_error_is_said_first_in_the_menu_and_in_the_tooltip() {
    let error = "the config file /home/u/.config/slate/config.toml, line 2, in [project-policy], \
                 key `sesion_idle_minutes`: unknown field `sesion_idle_minutes`, expected \
                 `session_idle_minutes`";
    let entries = menu_model(
        &[waiting("acme-api", "s1")],
        MenuState {
            pause: Pause::Off,
            autostart: false,
            config_error: Some(error),
            remotes: &[],
        },
        now(),
    );
    let labels = labels(&entries);
    assert!(
        labels[0].starts_with("(Config error: the config file /home/u/.config/slate/config.toml"),
        "{labels:?}"
    );
    assert!(labels[0].ends_with("…)"), "a long error is cut: {labels:?}");
    assert_eq!(labels[1], "---");
    assert!(
        labels[2].starts_with("acme-api · Claude Code"),
        "{labels:?}"
    );

    assert_eq!(tooltip(0, None), "Slate: nothing needs you");
    assert_eq!(tooltip(1, None), "Slate: 1 session needs you");
    assert_eq!(
        tooltip(3, Some(error)),
        format!("Slate: 3 sessions need you\nConfig error: {error}")
    );
}

#[test]
fn the_config_says_whether_notifications_start_paused() {
    use slate::config::Notifications;
    let until = now().plus(Duration::from_secs(600));
    let cases = [
        (true, None, Pause::Off),
        (true, Some(until), Pause::Until(until)),
        (false, Some(until), Pause::UntilResumed),
        (false, None, Pause::UntilResumed),
    ];
    for (enabled, paused_until, pause) in cases {
        let notifications = Notifications {
            enabled,
            paused_until,
            ..Notifications::default()
        };
        assert_eq!(
            Pause::from_config(&notifications),
            pause,
            "{notifications:?}"
        );
    }
}

#[test]
fn a_kept_pause_holds_until_it_ends_and_then_the_config_says() {
    use slate::config::Notifications;
    let later = now().plus(Duration::from_secs(600));
    let earlier = now().minus(Duration::from_secs(600));
    let plain = Notifications::default();
    let off = Notifications {
        enabled: false,
        ..Notifications::default()
    };
    let cases = [
        (Some(Pause::Until(later)), &plain, Pause::Until(later)),
        (Some(Pause::UntilResumed), &plain, Pause::UntilResumed),
        (Some(Pause::Until(earlier)), &plain, Pause::Off),
        (Some(Pause::Off), &off, Pause::UntilResumed),
        (None, &off, Pause::UntilResumed),
        (None, &plain, Pause::Off),
    ];
    for (kept, notifications, pause) in cases {
        assert_eq!(
            Pause::in_force(kept, notifications, now()),
            pause,
            "{kept:?} {notifications:?}"
        );
    }
}
