//! The invisible characters (issue 35): one class, `limits::is_invisible`, and every cleaner uses
//! it. A table of each character through each cleaner: the terminal shows its code point, a
//! hook's text and a push have a space for it, a session id and a shell word refuse it, and a
//! dialog read off a screen leaves it out.

use slate::agents::screens::read_screen;
use slate::limits::{is_invisible, session_id, TextError};
use slate::model::AgentKind;

/// Codex's permission dialog, whose command the characters are put in.
const SCREEN: &str = include_str!("../../fixtures/screens/codex/0.171.0/permission-touch.txt");

#[test]
fn every_cleaner_knows_every_invisible_character() {
    let invisible = [
        '\u{00ad}',
        '\u{061c}',
        '\u{200b}',
        '\u{200e}',
        '\u{2028}',
        '\u{2029}',
        '\u{202e}',
        '\u{2066}',
        '\u{2069}',
        '\u{feff}',
        '\u{fff9}',
        '\u{fffa}',
        '\u{fffb}',
        '\u{e0000}',
        '\u{e0001}',
        '\u{e0041}',
        '\u{e007f}',
    ];
    for c in invisible {
        let text = format!("a{c}b");
        let code = format!("<U+{:04X}>", u32::from(c));
        assert!(is_invisible(c), "{code}");
        assert_eq!(
            slate::report::terminal_text(&text),
            format!("a{code}b"),
            "{code}"
        );
        assert_eq!(slate::agents::hooks::clean(&text, 64), "a b", "{code}");
        assert!(
            matches!(session_id(&text), Err(TextError::Blank { .. })),
            "{code}"
        );
        assert_eq!(slate::remote::quoted_for_any_shell(&text), None, "{code}");
        let drawn = SCREEN.replace("$ touch x.txt", &format!("$ touch x{c}.txt"));
        let read = read_screen(AgentKind::CODEX, &drawn);
        let dialog = read.dialog().expect("the dialog is read");
        assert_eq!(dialog.summary, "Run: touch x.txt", "{code}");
        assert_eq!(dialog.detail, ["touch x.txt"], "{code}");
    }
    // What is visible stays as it is.
    for c in [
        'a',
        'é',
        '界',
        '€',
        '\u{a0}',
        '\u{2027}',
        '\u{202f}',
        '\u{fffc}',
        '\u{e0080}',
    ] {
        assert!(!is_invisible(c), "{c:?}");
        assert_eq!(
            slate::report::terminal_text(&format!("a{c}b")),
            format!("a{c}b")
        );
    }
}

#[test]
fn a_push_carries_no_invisible_character() {
    use slate::config::{NtfyTopic, Push, PushUrl};
    use slate::policy::notifications::{Click, NotificationPlan};
    let hidden = "\u{202e}\u{2028}\u{e0041}\u{ad}";
    let mut session = crate::util::waiting(&format!("acme{hidden}gpj.exe"), "s1");
    session.session_state.reason.text = format!("Asks permission for Bash: rm{hidden} -rf x");
    let plan = NotificationPlan {
        title: String::new(),
        body: String::new(),
        click: Click::OpenWindow,
        offer: None,
        sessions: vec![session],
    };
    let push = Push {
        ntfy: Some(NtfyTopic::parse("https://ntfy.example.org/topic").unwrap()),
        webhook: Some(PushUrl::parse("https://hooks.example.org/slate").unwrap()),
        commands: true,
        ..Push::default()
    };
    let sent = slate::push::requests(&push, &plan, "box");
    assert_eq!(sent.len(), 2);
    for request in sent {
        let body = request.body.to_string();
        let text: String = serde_json::from_str::<serde_json::Value>(&body)
            .unwrap()
            .to_string();
        assert!(!text.chars().any(is_invisible), "{}", request.channel);
        assert!(body.contains("acme    gpj.exe"), "{body}");
    }
}
