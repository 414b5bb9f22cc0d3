//! A session at a dialog gets a submenu with the options its dialog offers and Open, Allow once
//! only for a command the menu shows whole, and a remote session's dialog gets the same answers
//! with ids that name its machine.

use slate::agents::keys::Action;
use slate::agents::screens::DialogKind;
use slate::model::{AgentKind, Machine, Session, SessionDialog, SessionDialogOption, SessionKey};
use slate::policy::menu::{menu_model, Entry, MenuAction, MenuAnswer, Pause};

use crate::util::waiting;

use super::{labels, now, permission_dialog, state};

fn at_dialog(project: &str, id: &str, dialog: SessionDialog) -> Session {
    let mut session = waiting(project, id);
    session.dialog = Some(dialog);
    session
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
