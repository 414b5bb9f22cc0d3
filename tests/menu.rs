//! The tray menu as data (`policy::menu`): the sessions that need you, the app's actions, a
//! config error, and menu ids that read back; and the tooltip.

use std::time::Duration;

use slate::agents::keys::Action;
use slate::agents::screens::DialogKind;
use slate::model::{
    AgentKind, Machine, Session, SessionDialog, SessionDialogOption, SessionKey, Timestamp,
};
use slate::policy::menu::{
    menu_model, session_label, tooltip, Entry, MenuAction, MenuAnswer, MenuState, Pause,
};

use crate::util::{waiting, working};

/// Claude Code's permission dialog as the session object carries it: the widening options have
/// no action.
pub fn permission_dialog(fingerprint: &str) -> SessionDialog {
    let option = |number: u32, label: &str, action: Option<Action>| SessionDialogOption {
        number: Some(number),
        label: label.to_string(),
        action,
    };
    SessionDialog {
        kind: DialogKind::Permission,
        summary: "Run: touch x.txt".to_string(),
        detail: vec!["touch x.txt".to_string()],
        cut: false,
        options: vec![
            option(1, "Yes", Some(Action::Approve)),
            option(
                2,
                "Yes, and always allow access to /tmp/acme-api from this project",
                None,
            ),
            option(3, "Yes, and switch to auto mode", None),
            option(4, "No", Some(Action::Deny)),
        ],
        fingerprint: fingerprint.to_string(),
        answerable: true,
        why_not: None,
        call: None,
    }
}

fn at_dialog(project: &str, id: &str, dialog: SessionDialog) -> Session {
    let mut session = waiting(project, id);
    session.dialog = Some(dialog);
    session
}

fn now() -> Timestamp {
    Timestamp::parse_rfc3339("2026-11-29T12:00:00Z").unwrap()
}

fn state(pause: Pause, autostart: bool) -> MenuState<'static> {
    MenuState {
        pause,
        autostart,
        config_error: None,
        remotes: &[],
    }
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
    let answer = MenuAction::Answer(MenuAnswer {
        key: SessionKey::new(AgentKind::CLAUDE_CODE, "019a-ff:with-colon"),
        action: Action::Answer,
        option: Some(2),
        fingerprint: "9f86d081884c7d65".to_string(),
    });
    assert_eq!(MenuAction::parse(&answer.id()), Some(answer));
    let approve = MenuAction::Answer(MenuAnswer {
        key: SessionKey::new(AgentKind::CODEX, "s1"),
        action: Action::Approve,
        option: None,
        fingerprint: "0123456789abcdef".to_string(),
    });
    assert_eq!(MenuAction::parse(&approve.id()), Some(approve));
    assert_eq!(MenuAction::parse("answer:always:1:00:claude-code:s1"), None);
    assert_eq!(
        MenuAction::parse("answer:approve:x:00:claude-code:s1"),
        None
    );
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
        };
        assert_eq!(
            Pause::from_config(&notifications),
            pause,
            "{notifications:?}"
        );
    }
}

#[test]
fn a_session_at_a_dialog_gets_a_submenu_with_the_offered_options_and_open() {
    let question = SessionDialog {
        kind: DialogKind::Question,
        summary: "Question: Which database?".to_string(),
        detail: vec!["Which database?".to_string()],
        cut: false,
        options: vec![
            SessionDialogOption {
                number: Some(1),
                label: "SQLite & co".to_string(),
                action: Some(Action::Answer),
            },
            SessionDialogOption {
                number: Some(2),
                label: "Postgres".to_string(),
                action: Some(Action::Answer),
            },
        ],
        fingerprint: "00000000000000aa".to_string(),
        answerable: true,
        why_not: None,
        call: None,
    };
    let mut plain = permission_dialog("00000000000000bb");
    plain.answerable = false;
    plain.why_not = Some("plain terminal: start it in tmux or under `slate run`".to_string());
    let mut remote = at_dialog("api", "s4", permission_dialog("00000000000000cc"));
    remote.machine = Some(Machine::new("box").unwrap());
    let entries = menu_model(
        &[
            at_dialog("acme-api", "s1", permission_dialog("9f86d081884c7d65")),
            at_dialog("web", "s2", question),
            at_dialog("docs", "s3", plain),
            remote,
        ],
        state(Pause::Off, false),
        now(),
    );
    assert_eq!(
        labels(&entries)[..4],
        [
            "acme-api · Claude Code — Asks permission for Bash: cargo test > (Run: touch x.txt) | Allow once | Deny | --- | Open",
            "web · Claude Code — Asks permission for Bash: cargo test > (Question: Which database?) | SQLite && co | Postgres | --- | Open",
            "docs · Claude Code — Asks permission for Bash: cargo test > (Run: touch x.txt) | (plain terminal: start it in tmux or under `slate run`) | --- | Open",
            // Another machine's dialog is answered there: its entry focuses (attaches) only.
            "box · api · Claude Code — Asks permission for Bash: cargo test",
        ]
    );
    let Entry::Submenu { entries: first, .. } = &entries[0] else {
        panic!("{:?}", entries[0]);
    };
    let key = SessionKey::new(AgentKind::CLAUDE_CODE, "s1");
    let actions: Vec<MenuAction> = first
        .iter()
        .filter_map(|entry| match entry {
            Entry::Item { action, .. } => Some(action.clone()),
            _ => None,
        })
        .collect();
    let answer = |action, option| {
        MenuAction::Answer(MenuAnswer {
            key: key.clone(),
            action,
            option,
            fingerprint: "9f86d081884c7d65".to_string(),
        })
    };
    assert_eq!(
        actions,
        [
            answer(Action::Approve, None),
            answer(Action::Deny, None),
            MenuAction::Focus(key.clone()),
        ]
    );
    let Entry::Submenu {
        entries: second, ..
    } = &entries[1]
    else {
        panic!("{:?}", entries[1]);
    };
    match &second[1] {
        Entry::Item {
            action: MenuAction::Answer(answer),
            ..
        } => {
            assert_eq!(answer.action, Action::Answer);
            assert_eq!(answer.option, Some(1));
            assert_eq!(answer.fingerprint, "00000000000000aa");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_menu_offers_allow_once_only_for_a_command_it_shows_whole() {
    // See: issue 20, item 1. The menu shows a dialog's summary cut at 60 characters: for a
    // command of several lines, one cut short, or one longer than that, it says why and offers
    // Deny and Open only.
    use crate::notifications::{at_screen, LONGER, SCREENS};
    let items = |session: &Session| -> Vec<String> {
        let entries = menu_model(
            std::slice::from_ref(session),
            state(Pause::Off, false),
            now(),
        );
        let Entry::Submenu { entries, .. } = &entries[0] else {
            panic!("{:?}", entries[0]);
        };
        entries
            .iter()
            .filter_map(|entry| match entry {
                Entry::Item { label, .. } => Some(label.clone()),
                Entry::Note(note) => Some(format!("({note})")),
                _ => None,
            })
            .collect()
    };
    let mut checked = 0;
    for (agent, folder) in SCREENS {
        let agent = AgentKind::parse(agent).unwrap();
        let harmless = items(&at_screen(agent, folder, "permission-touch.txt"));
        assert_eq!(
            harmless[1..],
            ["Allow once", "Deny", "Open"],
            "{folder}: {harmless:?}"
        );
        for file in LONGER {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/screens")
                .join(folder)
                .join(file);
            if !path.exists() {
                continue;
            }
            let shown = items(&at_screen(agent, folder, file));
            assert!(
                !shown.iter().any(|label| label == "Allow once"),
                "{folder}/{file}: {shown:?}"
            );
            assert_eq!(
                shown[shown.len() - 2..],
                ["Deny", "Open"],
                "{folder}/{file}"
            );
            assert!(
                shown[1].starts_with("(Allow in "),
                "{folder}/{file}: {shown:?}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 14, "only {checked} derived dialogs checked");
    // A summary that does not hold the one line of the command shows less than the whole.
    let mut unnamed = permission_dialog("00000000000000dd");
    unnamed.summary = "Permission".to_string();
    unnamed.detail = vec!["rm -rf ~".to_string()];
    let shown = items(&at_dialog("acme-api", "s9", unnamed));
    assert_eq!(
        shown,
        [
            "(Permission)",
            "(Allow in Slate's window or the terminal: this menu cannot show the whole command)",
            "Deny",
            "Open"
        ]
    );
}
