//! Copilot CLI's recorded screens: the permission dialog read, answered and checked against its
//! call, the question read with only its highlighted option to pick, and screens that are no
//! dialog.

use slate::model::AgentKind;
use std::path::Path;

fn screen(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/screens/copilot/1.0.102")
        .join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

#[test]
fn the_recorded_permission_dialog_is_read_answered_and_checked_against_the_call() {
    use slate::agents::keys::{disagreement, option_actions, Action};
    use slate::agents::screens::read_screen;
    use slate::model::PendingCall;
    let read = read_screen(AgentKind::COPILOT, &screen("permission-touch.txt"));
    let dialog = read.dialog().expect("the dialog is read");
    assert_eq!(dialog.summary, "Run: touch slate-permission-probe.txt");
    assert_eq!(dialog.detail, ["touch slate-permission-probe.txt"]);
    assert!(!dialog.cut);
    // `1` allows once, Escape denies, the option that remembers the command is never offered.
    assert_eq!(
        option_actions(AgentKind::COPILOT, dialog),
        [Some(Action::Approve), None, Some(Action::Deny)]
    );
    // The screen agrees with the call the transcript records as asking (permission-pending.jsonl),
    // and not with another command.
    let call = |input: &str| PendingCall {
        id: "call_fake1a2346655e40003".into(),
        name: "bash".into(),
        input: Some(input.into()),
        cut: false,
    };
    assert_eq!(
        disagreement(
            AgentKind::COPILOT,
            dialog,
            Some(&call("touch slate-permission-probe.txt"))
        ),
        None
    );
    assert!(disagreement(AgentKind::COPILOT, dialog, Some(&call("rm -rf ~"))).is_some());
    // The same dialog with the highlight moved to the feedback row is still that dialog.
    let moved = read_screen(AgentKind::COPILOT, &screen("permission-feedback-row.txt"));
    assert_eq!(
        moved.dialog().map(|dialog| dialog.summary.as_str()),
        Some("Run: mkdir probe-dir")
    );
}

fn kind_of(text: &str) -> slate::agents::screens::ScreenKind {
    slate::agents::screens::read_screen(AgentKind::COPILOT, text).kind()
}

#[test]
fn its_question_is_read_and_only_its_highlighted_option_can_be_picked() {
    use slate::agents::keys::{plan, Action, Choice, Key, OptionRef};
    use slate::agents::screens::read_screen;
    let text = screen("question.txt");
    let read = read_screen(AgentKind::COPILOT, &text);
    let dialog = read.dialog().expect("the question is a dialog");
    assert_eq!(
        dialog.summary,
        "Asks: Which database should the fixture use?"
    );
    let labels: Vec<(&str, bool)> = dialog
        .options
        .iter()
        .map(|option| (option.label.as_str(), option.highlighted))
        .collect();
    assert_eq!(
        labels,
        [
            ("SQLite", true),
            ("Postgres", false),
            ("Other (type your answer)", false)
        ]
    );
    let pick = |dialog: &slate::agents::screens::Dialog, label: &str| {
        plan(
            AgentKind::COPILOT,
            dialog,
            &Choice {
                action: Action::Answer,
                option: Some(OptionRef::Label(label.to_string())),
                text: None,
            },
        )
    };
    assert_eq!(pick(dialog, "SQLite").unwrap().keys, vec![Key::Enter]);
    assert!(pick(dialog, "Postgres").is_err(), "arrows are never sent");
    // With the highlight moved down (arrows at the terminal), Enter picks Postgres, and SQLite
    // cannot be picked from outside.
    let moved = text
        .replace(" ❯ SQLite", "   SQLite")
        .replace("   Postgres", " ❯ Postgres");
    let read = read_screen(AgentKind::COPILOT, &moved);
    let dialog = read.dialog().expect("still the question");
    let highlighted: Vec<&str> = dialog
        .options
        .iter()
        .filter(|option| option.highlighted)
        .map(|option| option.label.as_str())
        .collect();
    assert_eq!(highlighted, ["Postgres"]);
    assert_eq!(dialog.options.len(), 3);
    assert_eq!(pick(dialog, "Postgres").unwrap().keys, vec![Key::Enter]);
    assert!(pick(dialog, "SQLite").is_err());
    // Cut short anywhere above its footer, it is no dialog.
    for cut in ["Database:", "❯ SQLite", "Other (type your answer)"] {
        let end = text.find(cut).unwrap();
        let shorter = &text[..end];
        assert!(
            read_screen(AgentKind::COPILOT, shorter).dialog().is_none(),
            "{cut}"
        );
    }
}

#[test]
fn working_idle_and_lookalike_screens_are_no_dialog() {
    use slate::agents::screens::{read_screen, ScreenKind};
    let kind = |file: &str| read_screen(AgentKind::COPILOT, &screen(file)).kind();
    assert_eq!(kind("working-tool.txt"), ScreenKind::Working);
    assert_eq!(kind("working-thinking.txt"), ScreenKind::Working);
    assert_eq!(kind("idle-start.txt"), ScreenKind::Idle);
    assert_eq!(kind("idle.txt"), ScreenKind::Idle);
    // The model quoting the dialog's every line, hints included: the composer is under it.
    assert_eq!(kind("idle-after-quoted-dialog.txt"), ScreenKind::Idle);
    // The question in the model's history, with the composer under it, is no dialog.
    let question = screen("question.txt");
    let quoted = question.replace(
        " ↑/↓ select · enter accept · ctrl+d decline · esc cancel",
        " ↑/↓ select · enter accept · ctrl+d decline · esc cancel\n ❯ \n ? help",
    );
    assert_ne!(kind_of(&quoted), ScreenKind::Question);
    // The dialog's lines with the composer cut off below them (a screen Copilot never draws
    // with a dialog open) still read as the dialog only when they end the screen.
    let quoted = screen("idle-after-quoted-dialog.txt");
    let cut: String = quoted
        .lines()
        .take_while(|line| !line.contains("acme-api ["))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(
        read_screen(AgentKind::COPILOT, &cut).kind(),
        ScreenKind::Unknown
    );
}
