//! How Slate sees a session's terminal (docs/states.md §1): the wire field `terminal` and the
//! kinds of terminal Slate knows.

use serde::{Deserialize, Serialize};

/// How Slate sees a session's terminal (docs/states.md §1 "sensed terminal"): the wire field
/// `terminal`, `{"kind": "tmux", "pane": "%3", "sensed": true}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalView {
    pub kind: TerminalKind,
    /// The pane in its terminal: a tmux pane id (`%3`), a kitty window id, a WezTerm pane id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane: Option<String>,
    /// True when Slate reads the terminal's title and screen from outside.
    #[serde(default)]
    pub sensed: bool,
    /// Why Slate does not read it, when it does not (said by `slate doctor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl TerminalView {
    /// The terminal of a session under `slate run`, which Slate owns.
    pub fn hosted() -> TerminalView {
        TerminalView {
            kind: TerminalKind::Hosted,
            pane: None,
            sensed: false,
            note: None,
        }
    }

    /// The terminal of a session under a `slate run` that offers a control socket: its `pane` is
    /// the socket, and Slate reads its screen (`host::control`).
    pub fn hosted_with(control: Option<&str>) -> TerminalView {
        TerminalView {
            pane: control.map(str::to_string),
            sensed: control.is_some(),
            ..TerminalView::hosted()
        }
    }

    /// The control socket of a hosted terminal, when it has one.
    pub fn control(&self) -> Option<&str> {
        match self.kind {
            TerminalKind::Hosted => self.pane.as_deref(),
            _ => None,
        }
    }

    /// A terminal Slate does not read, and why.
    pub fn unread(
        kind: TerminalKind,
        pane: Option<String>,
        note: impl Into<String>,
    ) -> TerminalView {
        TerminalView {
            kind,
            pane,
            sensed: false,
            note: Some(note.into()),
        }
    }

    /// How a person reads it in `slate doctor`.
    pub fn describe(&self) -> String {
        let place = match (&self.kind, &self.pane) {
            (TerminalKind::Hosted, _) => return "hosted by `slate run`".to_string(),
            (TerminalKind::Plain | TerminalKind::Unknown, _) if self.note.is_some() => {
                return self.note.clone().unwrap_or_default()
            }
            (TerminalKind::Tmux, Some(pane)) => format!("tmux pane {pane}"),
            (TerminalKind::Kitty, Some(window)) => format!("kitty window {window}"),
            (TerminalKind::Wezterm, Some(pane)) => format!("WezTerm pane {pane}"),
            (kind, _) => kind.as_str().to_string(),
        };
        match (&self.note, self.sensed) {
            (_, true) => format!("{place}, read by Slate"),
            (Some(note), false) => format!("{place}: {note}"),
            (None, false) => format!("{place}, not read"),
        }
    }
}

/// What kind of terminal a session runs in, as Slate sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TerminalKind {
    /// Under `slate run`: Slate owns the pseudo-terminal.
    Hosted,
    Tmux,
    Kitty,
    Wezterm,
    /// A terminal Slate has no way to read (a plain terminal emulator, `screen`, an IDE's).
    Plain,
    /// The process's environment could not be read (another user's process, or it is gone).
    Unknown,
}

impl TerminalKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TerminalKind::Hosted => "hosted",
            TerminalKind::Tmux => "tmux",
            TerminalKind::Kitty => "kitty",
            TerminalKind::Wezterm => "wezterm",
            TerminalKind::Plain => "plain terminal",
            TerminalKind::Unknown => "unknown terminal",
        }
    }
}
