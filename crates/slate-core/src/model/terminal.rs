//! How Slate sees a session's terminal (docs/states.md §1): the wire field `terminal` and the
//! kinds of terminal Slate knows, with [`TerminalName`] for a kind it does not build in (a
//! test's own terminal backend, or one a newer Slate named on the wire).

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
    /// What Slate can do with it, as its backend says. Absent for a terminal Slate cannot
    /// reach, and from an older server's view: then nothing.
    #[serde(default, skip_serializing_if = "Can::is_nothing")]
    pub can: Can,
}

/// What Slate can do with a session's terminal, as the terminal's backend states it (the wire's
/// `can`): read its screen, type into it, bring the pane itself to the front (its tab or pane,
/// not only its window), prove the pane the session's by its terminal device, and so answer a
/// dialog read there. The rules and the surfaces decide by these, never by a backend's name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Can {
    #[serde(default)]
    pub read: bool,
    #[serde(default, rename = "type")]
    pub type_keys: bool,
    #[serde(default)]
    pub focus: bool,
    #[serde(default)]
    pub prove: bool,
    #[serde(default)]
    pub answer: bool,
}

impl Can {
    /// A terminal Slate cannot reach.
    pub const NOTHING: Can = Can {
        read: false,
        type_keys: false,
        focus: false,
        prove: false,
        answer: false,
    };

    /// A terminal Slate reads, types into, proves and answers in, and whose pane it can select.
    pub const EVERYTHING: Can = Can {
        read: true,
        type_keys: true,
        focus: true,
        prove: true,
        answer: true,
    };

    pub fn is_nothing(&self) -> bool {
        *self == Can::NOTHING
    }
}

/// What `slate run`'s control socket offers: its screen read, keys typed into the pseudo-terminal
/// Slate owns (its own child's, so proved), and so answers; it has no pane to select.
pub const HOSTED_CAN: Can = Can {
    read: true,
    type_keys: true,
    focus: false,
    prove: true,
    answer: true,
};

/// Why a dialog read in a terminal that Slate reads but cannot type into (its [`Can`] has no
/// `answer`) is not answered, when its backend gives no words of its own in the view's `note`.
pub const READ_ONLY: &str = "slate reads this terminal but has no safe way to type into it: it \
     shows its dialogs and never answers them; answer it in its terminal";

impl TerminalView {
    /// The terminal of a session under `slate run`, which Slate owns.
    pub fn hosted() -> TerminalView {
        TerminalView {
            kind: TerminalKind::Hosted,
            pane: None,
            sensed: false,
            note: None,
            can: Can::NOTHING,
        }
    }

    /// The terminal of a session under a `slate run` that offers a control socket: its `pane` is
    /// the socket, and Slate reads its screen (`host::control`).
    pub fn hosted_with(control: Option<&str>) -> TerminalView {
        TerminalView {
            pane: control.map(str::to_string),
            sensed: control.is_some(),
            can: if control.is_some() {
                HOSTED_CAN
            } else {
                Can::NOTHING
            },
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
            can: Can::NOTHING,
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
            (TerminalKind::Accessibility, Some(app)) => {
                format!("{app} (accessibility bus)")
            }
            (TerminalKind::Other(name), Some(pane)) => format!("{} pane {pane}", name.as_str()),
            (kind, _) => kind.as_str().to_string(),
        };
        match (&self.note, self.sensed) {
            (_, true) => format!("{place}, read by Slate"),
            (Some(note), false) => format!("{place}: {note}"),
            (None, false) => format!("{place}, not read"),
        }
    }
}

/// What kind of terminal a session runs in, as Slate sees it. On the wire it is its name:
/// `hosted`, `tmux`, `kitty`, `wezterm`, `accessibility`, `plain`, `unknown`, or an
/// [`TerminalName`] of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TerminalKind {
    /// Under `slate run`: Slate owns the pseudo-terminal.
    Hosted,
    Tmux,
    Kitty,
    Wezterm,
    /// A desktop terminal (GNOME Terminal, xfce4-terminal, …) whose tabs' text Slate reads
    /// through the accessibility bus: seen, never typed into.
    Accessibility,
    /// A terminal Slate has no way to read (a plain terminal emulator, `screen`, an IDE's).
    Plain,
    /// The process's environment could not be read (another user's process, or it is gone).
    Unknown,
    /// A terminal backend Slate does not build in: one a test registers
    /// (`terminals::Backends`), or one only a newer Slate knows, named on the wire.
    Other(TerminalName),
}

impl TerminalKind {
    /// How a person reads it.
    pub fn as_str(&self) -> &str {
        match self {
            TerminalKind::Hosted => "hosted",
            TerminalKind::Tmux => "tmux",
            TerminalKind::Kitty => "kitty",
            TerminalKind::Wezterm => "wezterm",
            TerminalKind::Accessibility => "accessibility",
            TerminalKind::Plain => "plain terminal",
            TerminalKind::Unknown => "unknown terminal",
            TerminalKind::Other(name) => name.as_str(),
        }
    }

    /// Its name on the wire.
    pub fn wire(&self) -> &str {
        match self {
            TerminalKind::Plain => "plain",
            TerminalKind::Unknown => "unknown",
            other => other.as_str(),
        }
    }

    /// The kind a wire name names: a built-in one, or any other plausible name as
    /// [`TerminalKind::Other`].
    pub fn from_wire(name: &str) -> Option<TerminalKind> {
        Some(match name {
            "hosted" => TerminalKind::Hosted,
            "tmux" => TerminalKind::Tmux,
            "kitty" => TerminalKind::Kitty,
            "wezterm" => TerminalKind::Wezterm,
            "accessibility" => TerminalKind::Accessibility,
            "plain" => TerminalKind::Plain,
            "unknown" => TerminalKind::Unknown,
            other => TerminalKind::Other(TerminalName::new(other)?),
        })
    }
}

impl Serialize for TerminalKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.wire())
    }
}

impl<'de> Deserialize<'de> for TerminalKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        TerminalKind::from_wire(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "not a terminal kind: {:?} (at most {} lower-case letters, digits and `-`)",
                name.chars().take(40).collect::<String>(),
                TerminalName::MAX
            ))
        })
    }
}

/// The name of a kind of terminal Slate does not build in, as it goes on the wire: 1 to
/// [`TerminalName::MAX`] lower-case ASCII letters, digits and `-`, starting with a letter. It is
/// kept inline, so a [`TerminalKind`] stays a small `Copy` value.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TerminalName {
    len: u8,
    bytes: [u8; TerminalName::MAX],
}

impl TerminalName {
    /// The longest name.
    pub const MAX: usize = 15;

    /// `name` as a terminal name, when it is one; a `const fn`, so a backend's kind is a constant.
    pub const fn new(name: &str) -> Option<TerminalName> {
        let from = name.as_bytes();
        if from.is_empty() || from.len() > TerminalName::MAX || !from[0].is_ascii_lowercase() {
            return None;
        }
        let mut bytes = [0; TerminalName::MAX];
        let mut at = 0;
        while at < from.len() {
            let byte = from[at];
            if !(byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-') {
                return None;
            }
            bytes[at] = byte;
            at += 1;
        }
        Some(TerminalName {
            len: from.len() as u8,
            bytes,
        })
    }

    pub fn as_str(&self) -> &str {
        // Only ever filled from a `&str` of ASCII bytes, whole.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl std::fmt::Debug for TerminalName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TerminalName({:?})", self.as_str())
    }
}
