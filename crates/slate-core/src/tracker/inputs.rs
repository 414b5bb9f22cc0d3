//! What the tracker is fed: every [`Input`] that can change its state, and the facts they carry
//! (a transcript's batch of observations, a process seen with what it is, a terminal's reading,
//! a work item).

use super::Policy;
use crate::agents::hooks::HookSeen;
use crate::agents::screens::{self, Dialog, Screen, ScreenSeen};
use crate::agents::unread::UnreadRecord;
use crate::agents::{AgentProcess, Observation};
use crate::model::{
    AgentKind, HostedSignals, Intent, ItemStatus, Listing, ProcessInfo, SessionKey, TerminalView,
    Timestamp,
};

/// Everything that can change the tracker's state. The engine loop matches on it, and nothing
/// else mutates a `Tracker`.
#[derive(Debug, Clone)]
pub enum Input {
    /// New records from one transcript (or a re-read of a stored session).
    Observed(Batch),
    /// A transcript disappeared from disk.
    TranscriptGone { key: SessionKey, transcript: String },
    /// A full process scan: the recognised agent processes alive right now.
    Processes(Vec<SeenProcess>),
    /// One agent's own listing of its live sessions.
    Listing { agent: AgentKind, listing: Listing },
    /// Signals from a hosted session's pseudo-terminal.
    Hosted {
        key: SessionKey,
        signals: HostedSignals,
    },
    /// The user's intents (park/await) as the store holds them now, each with when it was set.
    /// The list replaces the earlier one: a session missing from it has no intent.
    Intents(Vec<(SessionKey, Intent, Timestamp)>),
    /// The sessions the person muted (`slate mute`), as the store holds them now. The list
    /// replaces the earlier one: a session missing from it is not muted.
    Mutes(Vec<SessionKey>),
    /// The work items and the claims held on them now, as the store holds them: `claims` are
    /// `(item id, holder, claimed at)`. Both lists replace the earlier ones.
    Custody {
        items: Vec<WorkItemInfo>,
        claims: Vec<(String, SessionKey, Timestamp)>,
    },
    /// Signals from a hosted pseudo-terminal whose session is not known yet: they belong to the
    /// session that the process `pid` (or its parent) vouches for.
    HostedProcess { pid: u32, signals: HostedSignals },
    /// How Slate sees the terminal of each live agent process, by pid (docs/states.md §1 "sensed
    /// terminal"). The list replaces the earlier one.
    Terminals(Vec<(u32, TerminalView)>),
    /// One reading of a session's terminal from outside (a tmux pane, a kitty window, a WezTerm
    /// pane), or `None` when it could not be read or is no longer read: the session goes back to
    /// the rules without it.
    Sensed {
        key: SessionKey,
        reading: Option<Sensed>,
    },
    /// An event of the agent's own hooks (`slate hook`, docs/states.md §3 rule 3a).
    Hook(HookSeen),
    /// The agent's decision hook waits for the person's answer about this call, or (`None`) no
    /// longer does (docs/hooks.md, "Decision hooks").
    Decision {
        key: SessionKey,
        waiting: Option<crate::model::HookDecision>,
    },
    /// The policy changed (the config file was edited): every live session is decided again
    /// under the new one.
    Policy(Policy),
    /// Time passed; nothing else happened.
    Tick,
}

/// One reading of a terminal Slate reads from outside: the pane's title and what its screen
/// shows, at one moment. A screen's text never comes here, only what its grammar made of it, and
/// a redacted copy of a screen its grammar did not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sensed {
    pub at: Timestamp,
    pub title: Option<String>,
    pub screen: ScreenSeen,
    /// The dialog on screen, with its options, when the screen shows one: what an answer is
    /// checked against. Its words are the dialog's, never the rest of the screen's.
    pub dialog: Option<Dialog>,
    /// A screen with text on it that the agent's grammar did not know, redacted
    /// ([`UnreadRecord::screen`]): counted as the session's unread once it stays
    /// (`signals::UNKNOWN_FOR`).
    pub unread: Option<UnreadRecord>,
}

impl Sensed {
    /// A reading of `screen`, as its grammar read it.
    pub fn of(at: Timestamp, title: Option<String>, screen: &Screen) -> Sensed {
        Sensed {
            at,
            title,
            screen: screen.seen(),
            dialog: screen.dialog().cloned(),
            unread: None,
        }
    }

    /// A reading of a pane whose screen showed `text` (empty when the screen was not read),
    /// read with `agent`'s grammar, with a redacted copy of a screen the grammar did not know.
    pub fn read(at: Timestamp, title: Option<String>, agent: AgentKind, text: &str) -> Sensed {
        let Some(grammar) = screens::grammar(agent).filter(|_| !text.is_empty()) else {
            return Sensed::of(at, title, &Screen::Unknown);
        };
        let screen = screens::read_with(grammar, text);
        let unread = match screen {
            Screen::Unknown => UnreadRecord::screen(grammar, text),
            _ => None,
        };
        Sensed {
            unread,
            ..Sensed::of(at, title, &screen)
        }
    }
}

/// A work item as the tracker sees it: plain data, copied from the store by the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkItemInfo {
    pub id: String,
    pub title: String,
    pub status: ItemStatus,
    /// The ids of the items this one waits for.
    pub deps: Vec<String>,
}

/// Observations read from one transcript in one go.
#[derive(Debug, Clone)]
pub struct Batch {
    pub key: SessionKey,
    pub role: TranscriptRole,
    /// The transcript's path (or, for stored sessions, the store's path).
    pub transcript: String,
    /// The file's last write (its mtime): dates a closed session and untimed records.
    pub last_write: Timestamp,
    pub observations: Vec<Observation>,
    /// Canonical spellings of the folders named in `observations`: (as written, canonical).
    pub folders: Vec<(String, String)>,
}

/// Whether a transcript is the session's own or one of its sub-agents'.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TranscriptRole {
    Main,
    /// A sub-agent's transcript, rolled up into the session `key` names.
    Subagent {
        agent_id: String,
    },
}

/// A recognised agent process with its folder resolved to a canonical path by the process scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenProcess {
    pub info: ProcessInfo,
    pub recognised: AgentProcess,
    /// The canonical folder the process works in: the folder named on its command line, else its cwd.
    pub folder: Option<String>,
    /// When the newest of the processes it started (at any depth) started, as the scan saw it:
    /// in whole seconds, so never later than the true start. Rule 3a reads it: a command the
    /// agent runs after a permission dialog was approved at the terminal.
    pub newest_child: Option<Timestamp>,
}
