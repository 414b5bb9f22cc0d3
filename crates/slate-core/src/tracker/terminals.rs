//! What the terminal edge asks of the tracker: which sessions' panes to read, with the open
//! call a dialog would be about, the control socket of a hosted one, and how quiet each
//! session's transcript is.

use std::collections::HashMap;

use super::{Entry, Tracker};
use crate::model::{PendingCall, SessionKey, Timestamp};

impl Tracker {
    /// The sessions whose terminal is worth reading, each with the process that vouches for it:
    /// live, not hosted without a control socket (such a terminal reports only its titles and
    /// draws), and with a tool call open. That is when a reading can change a decision (unless
    /// the agent's listing decides it) and when a dialog can be on screen for an answer to check
    /// against; with no call open, no dialog waits and nothing on screen changes a decision, so
    /// nothing is read.
    pub fn terminals_wanted(&self) -> Vec<(SessionKey, u32)> {
        let mut wanted: Vec<(SessionKey, u32)> = self
            .entries
            .iter()
            .filter_map(|(key, entry)| {
                let decision = entry.decision.as_ref()?;
                decision
                    .reads_terminal
                    .then_some((key.clone(), decision.pid?))
            })
            .collect();
        wanted.sort();
        wanted
    }

    /// The newest open call of each session that [`Tracker::terminals_wanted`] lists: the call a
    /// dialog on its screen would be about, which tells its tab among others where a terminal
    /// does not say which tab is the session's (the accessibility bus).
    pub fn open_calls(&self) -> HashMap<SessionKey, PendingCall> {
        self.reading_terminals()
            .filter_map(|(key, entry)| Some((key.clone(), entry.log.newest_open_call()?.pending())))
            .collect()
    }

    /// The time of the newest turn record of each session that [`Tracker::terminals_wanted`]
    /// lists: a pane whose transcript has been quiet a while, with its agent at work on screen,
    /// is read less often (crates/slate-terminals/src/terminals/pace.rs).
    pub fn terminals_marked(&self) -> HashMap<SessionKey, Option<Timestamp>> {
        self.reading_terminals()
            .map(|(key, entry)| (key.clone(), entry.log.last.as_ref().map(|last| last.at)))
            .collect()
    }

    /// The sessions whose terminal is read ([`Tracker::terminals_wanted`]), with their entries.
    fn reading_terminals(&self) -> impl Iterator<Item = (&SessionKey, &Entry)> {
        self.entries.iter().filter(|(_, entry)| {
            entry
                .decision
                .as_ref()
                .is_some_and(|decision| decision.reads_terminal)
        })
    }

    /// The control socket of each hosted session that [`Tracker::terminals_wanted`] lists: its
    /// screen is read there rather than wherever its process's terminal is located.
    pub fn hosted_controls(&self) -> HashMap<SessionKey, String> {
        self.reading_terminals()
            .filter_map(|(key, entry)| Some((key.clone(), entry.hosted.as_ref()?.control.clone()?)))
            .collect()
    }
}
