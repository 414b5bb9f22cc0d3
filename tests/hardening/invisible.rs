//! The invisible characters (issue 35): one class, `limits::is_invisible`, and every cleaner uses
//! it. A table of each character through each cleaner: the terminal shows its code point, a
//! hook's text has a space for it, a session id and a shell word refuse it, and a dialog read off
//! a screen leaves it out.

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
