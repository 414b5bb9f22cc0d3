//! The tray menu as data (`policy::menu`): the sessions that need you, the app's actions, a config
//! error, the answers a dialog offers, and menu ids that read back; and the tooltip.

mod dialogs; // the answers a dialog offers, local and remote
mod ids; // menu ids that read back, and hostile ones refused
mod sessions; // the sessions that need you, the app's actions, a config error

use slate::agents::keys::Action;
use slate::agents::screens::DialogKind;
use slate::model::{SessionDialog, SessionDialogOption, Timestamp};
use slate::policy::menu::{Entry, MenuState, Pause};

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
