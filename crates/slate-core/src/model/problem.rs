//! Counted problems (what went wrong reading the outside world while the engine went on) and the
//! kind of Slate that serves the loopback API.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A counted problem: something went wrong reading the outside world, and the engine went on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    pub kind: ProblemKind,
    /// Where: a path, a root or a session.
    pub place: String,
    pub detail: String,
}

impl Problem {
    pub fn new(kind: ProblemKind, place: impl Into<String>, detail: impl Into<String>) -> Problem {
        Problem {
            kind,
            place: place.into(),
            detail: detail.into(),
        }
    }
}

/// What kind of problem it was. The snake_case spelling is stable: `/health` counts problems by
/// it and `slate doctor` prints it. The variants are in the alphabetical order of their spelling,
/// so counts keyed by kind list in that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// A time in a record or a file lies in the future; it was read as the time of the read.
    FutureTime,
    /// A file holds more than one read may take (a compressed transcript that decompresses past
    /// the budget, or a transcript that grew by more at once); only part of it was read.
    HugeFile,
    /// A line longer than the limit was skipped unread.
    HugeLine,
    /// An agent's listing command could not be run, or failed.
    ListingFailed,
    /// An agent's listing command did not answer in time and was killed.
    ListingTimeout,
    /// A whole-file record (a legacy OpenCode JSON file) could not be read as one.
    MalformedFile,
    /// A transcript line is not what its format says.
    MalformedLine,
    /// A listing file or the listing command's output is not what its format says.
    MalformedListing,
    /// A stored row is not what its format says.
    MalformedRow,
    /// A remote machine sent something this machine does not list: a line or a session object
    /// that cannot be read, a session id that is not a plain one, or a session past the most
    /// listed for one machine.
    RemoteDropped,
    /// A store is damaged (corrupt, not a database, an undecodable meta row or root).
    StoreCorrupt,
    /// A store stayed locked by its writer past the retries.
    StoreLocked,
    /// A store's query ran past its budget and was stopped (a view that never ends, or a store
    /// too big to read at once, which is then read in parts).
    StoreTimeout,
    /// A store has a layout this reader does not know (a missing table or column).
    StoreUnexpected,
    /// A store could not be opened or read.
    StoreUnreadable,
    /// A terminal Slate reads from outside (a tmux pane, a kitty window, a WezTerm pane) did not
    /// answer in time, is gone, or cannot be asked (kitty without remote control).
    TerminalUnreadable,
    /// A folder or a file could not be listed, opened or read.
    Unreadable,
    /// A file of a store's file tree could not be read.
    UnreadableFile,
}

impl ProblemKind {
    pub const ALL: [ProblemKind; 18] = [
        ProblemKind::FutureTime,
        ProblemKind::HugeFile,
        ProblemKind::HugeLine,
        ProblemKind::ListingFailed,
        ProblemKind::ListingTimeout,
        ProblemKind::MalformedFile,
        ProblemKind::MalformedLine,
        ProblemKind::MalformedListing,
        ProblemKind::MalformedRow,
        ProblemKind::RemoteDropped,
        ProblemKind::StoreCorrupt,
        ProblemKind::StoreLocked,
        ProblemKind::StoreTimeout,
        ProblemKind::StoreUnexpected,
        ProblemKind::StoreUnreadable,
        ProblemKind::TerminalUnreadable,
        ProblemKind::Unreadable,
        ProblemKind::UnreadableFile,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ProblemKind::FutureTime => "future_time",
            ProblemKind::HugeFile => "huge_file",
            ProblemKind::HugeLine => "huge_line",
            ProblemKind::ListingFailed => "listing_failed",
            ProblemKind::ListingTimeout => "listing_timeout",
            ProblemKind::MalformedFile => "malformed_file",
            ProblemKind::MalformedLine => "malformed_line",
            ProblemKind::MalformedListing => "malformed_listing",
            ProblemKind::MalformedRow => "malformed_row",
            ProblemKind::RemoteDropped => "remote_dropped",
            ProblemKind::StoreCorrupt => "store_corrupt",
            ProblemKind::StoreLocked => "store_locked",
            ProblemKind::StoreTimeout => "store_timeout",
            ProblemKind::StoreUnexpected => "store_unexpected",
            ProblemKind::StoreUnreadable => "store_unreadable",
            ProblemKind::TerminalUnreadable => "terminal_unreadable",
            ProblemKind::Unreadable => "unreadable",
            ProblemKind::UnreadableFile => "unreadable_file",
        }
    }

    /// True when whatever the place holds is missing from every list: a store, a folder or a
    /// file could not be read at all. A bad line or row costs one record, not the sessions
    /// around it, and a failed listing costs a state's precision, not a session. Every kind is
    /// named here, so a new one has to say which it is.
    pub fn hides_sessions(self) -> bool {
        match self {
            ProblemKind::MalformedFile
            | ProblemKind::StoreCorrupt
            | ProblemKind::StoreLocked
            | ProblemKind::StoreTimeout
            | ProblemKind::StoreUnexpected
            | ProblemKind::StoreUnreadable
            | ProblemKind::Unreadable
            | ProblemKind::UnreadableFile => true,
            ProblemKind::FutureTime
            | ProblemKind::HugeFile
            | ProblemKind::HugeLine
            | ProblemKind::ListingFailed
            | ProblemKind::ListingTimeout
            | ProblemKind::MalformedLine
            | ProblemKind::MalformedListing
            | ProblemKind::MalformedRow
            | ProblemKind::RemoteDropped
            | ProblemKind::TerminalUnreadable => false,
        }
    }
}

impl fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// What kind of Slate serves the loopback API, as `/health` says (`"kind"`): the desktop app's
/// engine or `slate serve` (the user service, or one started by hand). One engine runs per user,
/// so whichever finds the port taken names the other with this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerKind {
    App,
    Service,
}

impl ServerKind {
    /// How a message names it: "the Slate app", "the Slate service".
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::App => "the Slate app",
            ServerKind::Service => "the Slate service",
        }
    }
}
