//! What a terminal backend is: [`Backend`], the one trait that each kind of terminal Slate reads
//! and types into implements (`terminals::tmux`, `terminals::kitty`, `terminals::wezterm` and
//! `terminals::hosted`, or one a test defines), the [`Address`] of one of its panes, and
//! [`Backends`], the list that the engine, sensing and answers go through, which a test extends
//! the way it extends the agents' registry.
//!
//! A backend lists its panes with their terminal devices, says what a process's variables say of
//! it, reads its panes' titles and screens (a server's panes together where its tool allows),
//! checks a pane just before typing, and types. It decides none of the rules that hold for every
//! terminal: a pane is the process's only when its terminal device is the process's controlling
//! terminal (`terminals::proof`, over what [`Backend::survey`] and [`Backend::device`] give,
//! never a variable alone); keys go only to a dialog read just now, only while the agent holds
//! the terminal's foreground, and at most once (`answers`). [`Backends::see`] is the pure choice
//! of how a process's terminal is seen from its variables. Bringing a pane to the front is not a
//! backend's: `focus::strategy` chooses that across the multiplexer and the window around it.
//! This module does no I/O.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

use crate::focus::strategy::{Environment, Host, Tools};
use slate_core::agents::keys::Key;
use slate_core::model::{AgentKind, Can, PendingCall, TerminalKind, TerminalView, Timestamp};

/// One kind of terminal Slate reads and types into. Every method that reaches the terminal has
/// the terminal read limit (`socket::READ_LIMIT`) from its start to its answer.
pub trait Backend: Sync + 'static {
    /// Its kind on the wire (`TerminalKind::Tmux`; `TerminalKind::Other` for one Slate does not
    /// build in).
    fn kind(&self) -> TerminalKind;

    /// What Slate can do with a pane of it: read, type, select the pane, prove it by its
    /// terminal device, answer a dialog in it. The rules and the surfaces decide by this, never
    /// by the backend's name.
    fn can(&self) -> Can;

    /// How a person reads the pane at `address` in a problem or a refusal
    /// (`tmux pane %3 on /tmp/tmux-1000/default`).
    fn describe(&self, address: &Address) -> String;

    /// How Slate sees a pane of it that it reads.
    fn view(&self, address: &Address) -> TerminalView {
        TerminalView {
            kind: self.kind(),
            pane: Some(address.pane.clone()),
            sensed: true,
            note: None,
            can: self.can(),
        }
    }

    /// The server a process's variables name (tmux's `$TMUX` socket): surveyed first, and the
    /// only one whose silence can hide that process's pane.
    fn named_server(&self, _env: &Environment) -> Option<String> {
        None
    }

    /// Every pane it can list without a hint, with its terminal device, for the proof (tmux:
    /// every server of this user, `named` among them), and the servers that did not answer.
    fn survey(&self, _named: &[String], _tools: &Tools) -> Survey {
        Survey::default()
    }

    /// [`Backend::survey`] for processes on the terminal devices `terminals` (their own and
    /// their ancestors'): a backend that can tell which of its servers hold which terminals
    /// without asking them (tmux, by the pseudo-terminals each server process holds) lists only
    /// the panes of the servers that can hold one of them. Others list every pane.
    fn survey_for(&self, named: &[String], _terminals: &[u64], tools: &Tools) -> Survey {
        self.survey(named, tools)
    }

    /// What a process's variables say of it when no surveyed pane has the process's terminal: a
    /// pane to confirm by its terminal device, a note on why it is not read, or nothing.
    fn hint(&self, _env: &Environment, _tools: &Tools) -> Option<Hint> {
        None
    }

    /// A pane of it for a process that no backend's variables or terminal device placed: one read
    /// only to see what it shows, never typed into, because nothing proves which of its panes is
    /// the process's (a desktop terminal's tab on the accessibility bus). `host` is the process
    /// with its ancestors.
    fn watch(&self, _host: &Host) -> Option<Address> {
        None
    }

    /// The terminal device of the pane at `address` now (`None`: it has none, or is gone), which
    /// must be the process's own before a hinted pane is read.
    fn device(&self, _address: &Address) -> Result<Option<u64>, String> {
        Ok(None)
    }

    /// True when a pane of it that was found but cannot be read is a problem to count (kitty:
    /// remote control is off, which its person can change).
    fn unread_is_a_problem(&self) -> bool {
        false
    }

    /// Reads the panes `wanted` of its server `server`: one result per pane, in order, each
    /// stamped with `clock`'s time when it was read, or why it could not be.
    fn read(&self, server: &str, wanted: &[Wanted], clock: fn() -> Timestamp) -> Vec<PaneRead>;

    /// The visible screen of the pane at `address` now (`colours`: each background a colour
    /// escape), for an answer to check against.
    fn screen(&self, address: &Address, colours: bool) -> Result<String, String>;

    /// Says why keys typed into the pane now would not reach the program on terminal device
    /// `tty`, the one proved to be the agent's (tmux: the pane is in a mode, or no longer has
    /// that terminal). The agent's own state (alive, in the foreground) is checked by `answers`.
    fn check(&self, _address: &Address, _tty: u64) -> Result<(), String> {
        Ok(())
    }

    /// Types `keys` (no pauses: `terminals::typing` splits at them) into the pane at `address`.
    fn send(&self, address: &Address, keys: &[Key]) -> Result<(), String>;
}

/// Where Slate reads one pane: a backend, the server its reads are batched by (a tmux socket, a
/// kitty's `listen_on`, a WezTerm socket or `""` for the one `wezterm cli` finds, a hosted
/// terminal's control socket) and the pane's own id on that server.
#[derive(Clone)]
pub struct Address {
    pub backend: &'static dyn Backend,
    pub server: String,
    pub pane: String,
}

impl Address {
    pub fn new(
        backend: &'static dyn Backend,
        server: impl Into<String>,
        pane: impl Into<String>,
    ) -> Address {
        Address {
            backend,
            server: server.into(),
            pane: pane.into(),
        }
    }

    /// The pane's own id on its server (a hosted terminal's is its socket: one terminal each).
    pub fn pane(&self) -> &str {
        &self.pane
    }

    pub fn kind(&self) -> TerminalKind {
        self.backend.kind()
    }

    /// The view of a pane Slate reads.
    pub fn view(&self) -> TerminalView {
        self.backend.view(self)
    }

    pub fn describe(&self) -> String {
        self.backend.describe(self)
    }

    fn key(&self) -> (TerminalKind, &str, &str) {
        (self.kind(), &self.server, &self.pane)
    }
}

impl PartialEq for Address {
    fn eq(&self, other: &Address) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Address {}

impl Hash for Address {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl PartialOrd for Address {
    fn partial_cmp(&self, other: &Address) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Address {
    fn cmp(&self, other: &Address) -> Ordering {
        let key = |address: &Address| {
            (
                address.kind().wire().to_string(),
                address.server.clone(),
                address.pane.clone(),
            )
        };
        key(self).cmp(&key(other))
    }
}

impl fmt::Debug for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Address")
            .field("kind", &self.kind().wire())
            .field("server", &self.server)
            .field("pane", &self.pane)
            .finish()
    }
}

/// One pane of a backend with its terminal's device number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneTty {
    pub address: Address,
    pub tty: u64,
}

/// What [`Backend::survey`] found.
#[derive(Debug, Default)]
pub struct Survey {
    pub panes: Vec<PaneTty>,
    /// The servers that did not answer, with why: what they would have proved is asked again
    /// later rather than taken as no pane.
    pub unanswered: Vec<(String, String)>,
}

/// What a process's variables say of a backend ([`Backend::hint`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hint {
    /// This pane, once its terminal device is found to be the process's.
    Pane(Address),
    /// A terminal of this kind that Slate does not read, and why.
    Unread(TerminalView),
}

/// One pane to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    pub pane: String,
    /// The agent of the session whose pane it is.
    pub agent: AgentKind,
    /// What tells the session's tab among others, for a backend that reads a whole application
    /// ([`Backend::watch`]).
    pub clues: Clues,
    /// Its screen with its colours: its agent marks the highlighted option only by colour.
    pub colours: bool,
    /// Its screen is wanted, not only its title: its agent has a screen grammar.
    pub screen: bool,
}

/// What tells a session's tab among an application's tabs where nothing proves it: the call its
/// transcript holds open, how many tabs of the same application hold a live process of its agent
/// (counting its own), and the calls the other sessions of its agent there hold open (a dialog
/// about its call is its own only when it is about none of theirs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Clues {
    pub call: Option<PendingCall>,
    pub peers: usize,
    pub others: Vec<PendingCall>,
}

/// What one read of a pane gave: its title and its visible screen, with when it was read. The
/// screen is read with the agent's grammar at once and dropped; it is never kept.
pub type PaneRead = Result<(PaneText, Timestamp), String>;

/// A pane's title and its visible screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneText {
    pub title: Option<String>,
    pub screen: String,
}

/// Why a tool's output could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("pane {0} is gone")]
    Gone(String),
    #[error("unexpected output: {0}")]
    Unexpected(&'static str),
    #[error("refused: {0}")]
    Refused(String),
}

/// What Slate says of a session in a terminal it has no way to read.
pub const PLAIN_NOTE: &str =
    "plain terminal: start it in tmux or under `slate run` to see its prompts";

/// The terminal backends Slate looks in: the built-in ones (`terminals::BUILT_IN`), or a test's
/// own. The order is the order in which their variables are asked ([`Backends::see`]).
#[derive(Clone, Copy)]
pub struct Backends(&'static [&'static dyn Backend]);

impl Backends {
    pub const fn new(backends: &'static [&'static dyn Backend]) -> Backends {
        Backends(backends)
    }

    pub fn iter(&self) -> impl Iterator<Item = &'static dyn Backend> {
        self.0.iter().copied()
    }

    /// The backend of `kind`, when one is listed.
    pub fn of(&self, kind: TerminalKind) -> Option<&'static dyn Backend> {
        self.iter().find(|backend| backend.kind() == kind)
    }

    /// How Slate sees the terminal of a process with environment `env` (`None`: it could not be
    /// read), and the address to read it at when it can. `proved` is the pane whose terminal is
    /// the process's controlling terminal (`terminals::proof`), found without any variable: it
    /// comes first. Otherwise each backend's variables are asked in order; a hinted pane is read
    /// only once `terminals` confirms it by its terminal device. `$TMUX` and `$TMUX_PANE` alone
    /// never make an address: they are inherited by whatever a pane's shell starts.
    pub fn see(
        &self,
        env: Option<&Environment>,
        tools: &Tools,
        proved: Option<&Address>,
    ) -> (TerminalView, Option<Address>) {
        if let Some(address) = proved {
            return (address.view(), Some(address.clone()));
        }
        let Some(env) = env else {
            return (
                TerminalView::unread(
                    TerminalKind::Unknown,
                    None,
                    "its environment could not be read (another user's process, or it exited)",
                ),
                None,
            );
        };
        for backend in self.iter() {
            match backend.hint(env, tools) {
                Some(Hint::Pane(address)) => return (address.view(), Some(address)),
                Some(Hint::Unread(view)) => return (view, None),
                None => {}
            }
        }
        (
            TerminalView::unread(TerminalKind::Plain, None, PLAIN_NOTE),
            None,
        )
    }
}

impl fmt::Debug for Backends {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|backend| backend.kind()))
            .finish()
    }
}

/// True for a pane or window id of digits only, short enough to be one.
pub fn all_digits(text: &str) -> bool {
    !text.is_empty() && text.len() <= 12 && text.bytes().all(|byte| byte.is_ascii_digit())
}
