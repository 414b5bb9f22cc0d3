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
    assert_eq!(MenuAction::parse("focus:nobody:1:x"), None);
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
            // Another machine's dialog gets the same answers: they are forwarded there.
            "box · api · Claude Code — Asks permission for Bash: cargo test > (Run: touch x.txt) | Allow once | Deny | --- | Open",
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
    use crate::notifications::{at_screen, longer_in, SCREENS};
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
        for file in longer_in(folder) {
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

/// The actions of the items of `entry`'s submenu, in order.
fn submenu_actions(entry: &Entry) -> Vec<MenuAction> {
    let Entry::Submenu { entries, .. } = entry else {
        panic!("{entry:?}");
    };
    entries
        .iter()
        .filter_map(|entry| match entry {
            Entry::Item { action, .. } => Some(action.clone()),
            _ => None,
        })
        .collect()
}

fn on_box(mut session: Session) -> Session {
    session.machine = Some(Machine::new("box").unwrap());
    session
}

#[test]
fn a_remote_dialog_gets_the_answers_its_dialog_allows_and_every_id_names_the_machine() {
    // See: issue 21. The menu decides from the dialog's `answerable`, not from where the session
    // runs: a remote dialog gets Allow once and Deny, and each item's id names the machine, so
    // the click is routed to that machine's session and not to a local one with the same id.
    let remote = on_box(at_dialog(
        "api",
        "s1",
        permission_dialog("9f86d081884c7d65"),
    ));
    let local = at_dialog("api", "s1", permission_dialog("9f86d081884c7d65"));
    let entries = menu_model(&[remote, local], state(Pause::Off, false), now());
    let on_box_key =
        SessionKey::new(AgentKind::CLAUDE_CODE, "s1").on(Some(Machine::new("box").unwrap()));
    let answer = |key: &SessionKey, action| {
        MenuAction::Answer(MenuAnswer {
            key: key.clone(),
            action,
            option: None,
            fingerprint: "9f86d081884c7d65".to_string(),
        })
    };
    let remote_actions = submenu_actions(&entries[0]);
    assert_eq!(
        remote_actions,
        [
            answer(&on_box_key, Action::Approve),
            answer(&on_box_key, Action::Deny),
            MenuAction::Focus(on_box_key.clone()),
        ]
    );
    let ids: Vec<String> = remote_actions.iter().map(MenuAction::id).collect();
    assert_eq!(
        ids,
        [
            "answer@box:approve::9f86d081884c7d65:claude-code:2:s1",
            "answer@box:deny::9f86d081884c7d65:claude-code:2:s1",
            "focus@box:claude-code:2:s1",
        ]
    );
    for (id, action) in ids.iter().zip(&remote_actions) {
        assert_eq!(MenuAction::parse(id).as_ref(), Some(action), "{id}");
    }
    // The local session with the same id keeps ids of its own.
    let local_key = SessionKey::new(AgentKind::CLAUDE_CODE, "s1");
    let local_ids: Vec<String> = submenu_actions(&entries[1])
        .iter()
        .map(MenuAction::id)
        .collect();
    assert_eq!(
        local_ids,
        [
            "answer:approve::9f86d081884c7d65:claude-code:2:s1",
            "answer:deny::9f86d081884c7d65:claude-code:2:s1",
            "focus:claude-code:2:s1",
        ]
    );
    assert_eq!(
        MenuAction::parse(&local_ids[1]),
        Some(answer(&local_key, Action::Deny))
    );

    // A remote dialog its machine cannot answer says why, as a local one does; so does one whose
    // link went down (the view marks it), and a question gets its options.
    let mut plain = permission_dialog("00000000000000bb");
    plain.answerable = false;
    plain.why_not = Some("plain terminal: start it in tmux or under `slate run`".to_string());
    let question = SessionDialog {
        kind: DialogKind::Question,
        summary: "Question: Which database?".to_string(),
        detail: vec!["Which database?".to_string()],
        cut: false,
        options: vec![SessionDialogOption {
            number: Some(2),
            label: "Postgres".to_string(),
            action: Some(Action::Answer),
        }],
        fingerprint: "00000000000000aa".to_string(),
        answerable: true,
        why_not: None,
        call: None,
    };
    let entries = menu_model(
        &[
            on_box(at_dialog("docs", "s2", plain)),
            on_box(at_dialog("web", "s3", question)),
        ],
        state(Pause::Off, false),
        now(),
    );
    assert_eq!(
        labels(&entries)[..2],
        [
            "box · docs · Claude Code — Asks permission for Bash: cargo test > (Run: touch x.txt) | (plain terminal: start it in tmux or under `slate run`) | --- | Open",
            "box · web · Claude Code — Asks permission for Bash: cargo test > (Question: Which database?) | Postgres | --- | Open",
        ]
    );
    let question_id = submenu_actions(&entries[1])[0].id();
    assert_eq!(
        question_id,
        "answer@box:answer:2:00000000000000aa:claude-code:2:s3"
    );
    assert_eq!(
        MenuAction::parse(&question_id),
        Some(submenu_actions(&entries[1])[0].clone())
    );
}

#[test]
fn a_remote_dialog_gets_allow_once_only_for_a_command_the_menu_shows_whole() {
    // The rules for what the menu may allow are the same on every machine.
    use crate::notifications::{at_screen, longer_in, SCREENS};
    let items = |session: Session| -> Vec<String> {
        let entries = menu_model(&[on_box(session)], state(Pause::Off, false), now());
        let Entry::Submenu { entries, .. } = &entries[0] else {
            panic!("{:?}", entries[0]);
        };
        labels(entries)
    };
    let mut checked = 0;
    for (agent, folder) in SCREENS {
        let agent = AgentKind::parse(agent).unwrap();
        let harmless = items(at_screen(agent, folder, "permission-touch.txt"));
        assert_eq!(
            harmless[1..],
            ["Allow once", "Deny", "---", "Open"],
            "{folder}"
        );
        for file in longer_in(folder) {
            let shown = items(at_screen(agent, folder, file));
            assert!(
                !shown.iter().any(|label| label == "Allow once"),
                "{folder}/{file}: {shown:?}"
            );
            assert!(
                shown[1].starts_with("(Allow in "),
                "{folder}/{file}: {shown:?}"
            );
            assert_eq!(
                shown[shown.len() - 3..],
                ["Deny", "---", "Open"],
                "{folder}/{file}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 14, "only {checked} derived dialogs checked");
}

/// Every id the menu makes for these sessions and actions.
fn sample_actions() -> Vec<MenuAction> {
    let keys = [
        SessionKey::new(
            AgentKind::CLAUDE_CODE,
            "de5c0003-0000-4000-8000-000000000003",
        ),
        SessionKey::new(AgentKind::CODEX, "019a-ff:with-colon"),
        SessionKey::new(AgentKind::CLAUDE_CODE, "s1").on(Some(Machine::new("box").unwrap())),
        SessionKey::new(AgentKind::from_wire("toy-agent").unwrap(), "t:1")
            .on(Some(Machine::new("build-01.lab").unwrap())),
        SessionKey::new(AgentKind::CODEX, "x".repeat(128))
            .on(Some(Machine::new(&"m".repeat(32)).unwrap())),
    ];
    let mut actions = vec![
        MenuAction::OpenWindow,
        MenuAction::PauseForAnHour,
        MenuAction::PauseUntilResumed,
        MenuAction::Resume,
        MenuAction::ToggleAutostart,
        MenuAction::Quit,
    ];
    for key in keys {
        actions.push(MenuAction::Focus(key.clone()));
        for (action, option) in [
            (Action::Approve, None),
            (Action::Deny, None),
            (Action::Answer, Some(1)),
            (Action::Answer, Some(u32::MAX)),
        ] {
            actions.push(MenuAction::Answer(MenuAnswer {
                key: key.clone(),
                action,
                option,
                fingerprint: "0123456789abcdef".to_string(),
            }));
        }
    }
    actions
}

#[test]
fn every_menu_id_reads_back_and_none_is_too_long_to() {
    use slate::policy::menu::MENU_ID_MAX;
    for action in sample_actions() {
        let id = action.id();
        assert!(id.len() <= MENU_ID_MAX, "{id}: {} bytes", id.len());
        assert_eq!(MenuAction::parse(&id), Some(action), "{id}");
    }
}

#[test]
fn a_menu_id_cut_short_anywhere_reads_as_nothing() {
    // An id that lost its end must not read as another session (`s1` for `s12`) or another
    // answer: the session's id carries its length, and the fixed ids are no prefix of another.
    let mut cuts = 0;
    for action in sample_actions() {
        let id = action.id();
        for end in 0..id.len() {
            if !id.is_char_boundary(end) {
                continue;
            }
            assert_eq!(
                MenuAction::parse(&id[..end]),
                None,
                "{:?} from {id}",
                &id[..end]
            );
            cuts += 1;
        }
    }
    assert!(cuts > 2000, "{cuts}");
}

#[test]
fn malformed_huge_and_hostile_menu_ids_are_refused() {
    let fine = "answer@box:approve::0123456789abcdef:claude-code:2:s1";
    assert!(MenuAction::parse(fine).is_some());
    let refused = [
        // Malformed: a field missing, added, misspelt or out of place.
        "",
        ":",
        "answer",
        "answer:",
        "answer@",
        "answer@box",
        "answer@box:",
        "answer@box:approve::0123456789abcdef:claude-code:2",
        "answer@box:approve:0123456789abcdef:claude-code:2:s1",
        "answer@box:approve::0123456789abcdef::claude-code:2:s1",
        "answer@box:approve::0123456789abcdef:claude-code::s1",
        "answer@box:approve::0123456789abcdef:claude-code:s1",
        "answer@box:always::0123456789abcdef:claude-code:2:s1",
        "answer@box:APPROVE::0123456789abcdef:claude-code:2:s1",
        "Answer@box:approve::0123456789abcdef:claude-code:2:s1",
        "answers@box:approve::0123456789abcdef:claude-code:2:s1",
        "focus@box@box:claude-code:2:s1",
        "focus@:claude-code:2:s1",
        "focus@box:claude-code:2:s1:",
        "focus:claude-code:2",
        "focused:claude-code:2:s1",
        "quit ",
        " quit",
        "Quit",
        "quit\n",
        "open:",
        "pause",
        // A length that does not match, or is spelt another way.
        "focus:claude-code:3:s1",
        "focus:claude-code:1:s1",
        "focus:claude-code:02:s1",
        "focus:claude-code:+2:s1",
        "focus:claude-code:-2:s1",
        "focus:claude-code: 2:s1",
        "focus:claude-code:0:",
        "focus:claude-code:18446744073709551618:s1",
        // An option where none belongs, none where one must be, or one spelt another way.
        "answer:approve:1:0123456789abcdef:claude-code:2:s1",
        "answer:deny:0:0123456789abcdef:claude-code:2:s1",
        "answer:answer::0123456789abcdef:claude-code:2:s1",
        "answer:answer:01:0123456789abcdef:claude-code:2:s1",
        "answer:answer:+1:0123456789abcdef:claude-code:2:s1",
        "answer:answer:-1:0123456789abcdef:claude-code:2:s1",
        "answer:answer:4294967296:0123456789abcdef:claude-code:2:s1",
        "answer:answer:99999999999:0123456789abcdef:claude-code:2:s1",
        "answer:answer:1.0:0123456789abcdef:claude-code:2:s1",
        // A fingerprint of the wrong length, case or alphabet.
        "answer:approve::0123456789abcde:claude-code:2:s1",
        "answer:approve::0123456789abcdef0:claude-code:2:s1",
        "answer:approve::0123456789ABCDEF:claude-code:2:s1",
        "answer:approve::0123456789abcdeg:claude-code:2:s1",
        "answer:approve::0123456789abcde\u{0}:claude-code:2:s1",
        // A local session of an agent this Slate does not know; a remote agent id that is none.
        "focus:toy-agent:2:s1",
        "answer:deny::0123456789abcdef:Claude-Code:2:s1",
        "focus@box:a-very-long-agent-id:2:s1",
        "focus@box::2:s1",
        "focus@box:c\u{e9}:2:s1",
        // Machine names that are none: an option for ssh, a shell's words, too long, not ASCII.
        "focus@-oProxyCommand=x:claude-code:2:s1",
        "focus@box;reboot:claude-code:2:s1",
        "focus@$(reboot):claude-code:2:s1",
        "focus@b\u{f6}x:claude-code:2:s1",
        "focus@ box:claude-code:2:s1",
        // Session ids that are none: blank, control or invisible characters, too long.
        "focus:claude-code:3:s 1",
        "focus:claude-code:3:s\n1",
        "focus:claude-code:3:s\t1",
        "focus:claude-code:3:s\u{0}1",
        "focus:claude-code:3:s\u{1b}1",
        "focus:claude-code:5:s\u{202e}1",
        "focus:claude-code:5:s\u{200b}1",
        "focus:claude-code:5:s\u{feff}1",
    ];
    for id in refused {
        assert_eq!(MenuAction::parse(id), None, "{id:?}");
    }
    // Too long: a session id past `limits::ID_MAX`, a machine name past `Machine::MAX`, and
    // anything past `MENU_ID_MAX` whatever it holds, read in no time.
    let long_id = "x".repeat(129);
    assert_eq!(
        MenuAction::parse(&format!("focus:claude-code:129:{long_id}")),
        None
    );
    let long_machine = "m".repeat(33);
    assert_eq!(
        MenuAction::parse(&format!("focus@{long_machine}:claude-code:2:s1")),
        None
    );
    let started = std::time::Instant::now();
    for huge in [
        "x".repeat(slate::policy::menu::MENU_ID_MAX + 1),
        format!("focus:claude-code:2:s1{}", " ".repeat(10_000_000)),
        format!(
            "answer@box:approve::0123456789abcdef:claude-code:{}",
            ":".repeat(10_000_000)
        ),
        format!("focus@box:claude-code:9999999:{}", "s".repeat(9_999_999)),
        "quit".repeat(1_000_000),
    ] {
        assert_eq!(MenuAction::parse(&huge), None);
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

mod ids {
    use proptest::prelude::*;
    use slate::agents::keys::Action;
    use slate::model::{AgentKind, Machine, SessionKey};
    use slate::policy::menu::{MenuAction, MenuAnswer};

    fn key() -> impl Strategy<Value = SessionKey> {
        (
            prop_oneof![
                Just(AgentKind::CLAUDE_CODE),
                Just(AgentKind::CODEX),
                Just(AgentKind::from_wire("toy:agent").unwrap())
            ],
            "[!-~]{1,128}",
            proptest::option::of("[A-Za-z0-9][A-Za-z0-9._-]{0,31}"),
        )
            .prop_map(|(agent, id, machine)| {
                // A foreign agent is another machine's.
                let machine = match (agent.as_str() == "toy:agent", machine) {
                    (true, None) => Some("box".to_string()),
                    (_, machine) => machine,
                };
                SessionKey::new(agent, id).on(machine.map(|name| Machine::new(&name).unwrap()))
            })
    }

    fn action() -> impl Strategy<Value = MenuAction> {
        (key(), 0u8..4, any::<u32>(), "[0-9a-f]{16}").prop_map(|(key, which, number, print)| {
            let answer = |action, option| {
                MenuAction::Answer(MenuAnswer {
                    key: key.clone(),
                    action,
                    option,
                    fingerprint: print.clone(),
                })
            };
            match which {
                0 => MenuAction::Focus(key.clone()),
                1 => answer(Action::Approve, None),
                2 => answer(Action::Deny, None),
                _ => answer(Action::Answer, Some(number)),
            }
        })
    }

    proptest! {
        /// Every id the menu makes reads back as its action, except where the agent's own id
        /// holds a `:` (no built-in agent's does; an id the menu cannot tell apart reads as
        /// nothing rather than as another session); no proper prefix of it reads at all.
        #[test]
        fn ids_read_back_and_their_prefixes_do_not(action in action()) {
            let id = action.id();
            let parsed = MenuAction::parse(&id);
            let agent = match &action {
                MenuAction::Focus(key) => key.agent,
                MenuAction::Answer(answer) => answer.key.agent,
                _ => unreachable!(),
            };
            if agent.as_str().contains(':') {
                prop_assert_eq!(parsed, None);
            } else {
                prop_assert_eq!(parsed, Some(action));
            }
            for end in (0..id.len()).filter(|end| id.is_char_boundary(*end)) {
                prop_assert_eq!(MenuAction::parse(&id[..end]), None);
            }
        }

        /// Whatever the text, reading it ends, and what reads is an id the menu makes.
        #[test]
        fn any_text_reads_as_nothing_or_as_the_id_it_is(text in "\\PC{0,300}") {
            if let Some(action) = MenuAction::parse(&text) {
                prop_assert_eq!(action.id(), text);
            }
        }

        /// Text that looks like an id, with its fields in any order and any content.
        #[test]
        fn id_shaped_text_reads_as_nothing_or_as_the_id_it_is(
            head in prop_oneof![Just("focus"), Just("answer")],
            at in proptest::option::of("[a-z0-9.@:_-]{0,6}"),
            fields in proptest::collection::vec("[a-z0-9:+ -]{0,5}", 0..7),
        ) {
            let text = format!(
                "{head}{}:{}",
                at.map(|at| format!("@{at}")).unwrap_or_default(),
                fields.join(":")
            );
            if let Some(action) = MenuAction::parse(&text) {
                prop_assert_eq!(action.id(), text);
            }
        }
    }
}
