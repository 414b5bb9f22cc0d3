//! The state rules: the one place that decides whether a session is Working, Needs you or Closed.
//!
//! `Tracker` folds observations, process scans and listings into per-session facts and applies the
//! rules of SPEC §3 and §4 to them. It is a pure state machine: it does no I/O, spawns nothing and
//! never reads the clock. Time comes in as `now` on every call, and `next_deadline` says when the
//! tracker next wants a `Tick` because a time-based flip is pending.

use crate::agents::{AgentProcess, Observation};
use crate::model::{AgentKind, HostedSignals, Listing, ProcessInfo, SessionKey, Timestamp};

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
    /// Time passed; nothing else happened.
    Tick,
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
}
