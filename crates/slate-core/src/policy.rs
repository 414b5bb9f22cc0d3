//! What every surface must show alike, decided once: which sessions need you, which belong on the
//! live list, when to notify (`policy::notifications`) and what the tray menu holds
//! (`policy::menu`), when spend crosses a budget (`policy::spend`) and usage summed by
//! session, project, agent or day (`policy::usage`).
//!
//! The command line, the live service, the desktop shell and, through the API, the page read the
//! same answers here, so a macOS menu bar or a remote view can reuse them. Like the tracker, this
//! is a pure core: plain data in, plain data out, and time only as an argument. It decides no
//! session state (the tracker does); it only reads the state the tracker decided.

pub mod menu;
pub mod notifications;
pub mod spend;
pub mod usage;

use std::time::Duration;

use crate::model::{Session, SessionDialog, Status, Timestamp};

/// Whether a session needs the person now: the tray's count, the menu's list, the window's
/// "needs you" and `/health`'s `needs_you` all count these. A session on a remote machine Slate
/// cannot reach now keeps its last status but is not counted: nobody knows whether it still
/// waits, and the menu names the unreachable machine instead.
pub fn needs_you(session: &Session) -> bool {
    session.status == Status::Waiting && session.unreachable_since.is_none()
}

/// Whether a surface that shows a dialog's one-line summary, cut at `most` characters, shows the
/// whole of what the dialog asks about: its text is one line, neither the CLI nor Slate cut it
/// short, the summary holds that line, and the summary fits. Where this is false, the notification and the tray menu offer no
/// "Allow once" (docs/states.md §8): they still offer "Deny", which runs nothing, and "Open",
/// which shows the terminal, where the whole command is.
pub fn shows_whole(dialog: &SessionDialog, most: usize) -> bool {
    let fits = |text: &str| text.chars().count() <= most;
    !dialog.cut
        && dialog.detail.len() <= 1
        && fits(&dialog.summary)
        && dialog
            .detail
            .iter()
            .all(|line| dialog.summary.contains(line.as_str()))
}

/// How many of `sessions` need the person.
pub fn needs_you_count<'a>(sessions: impl IntoIterator<Item = &'a Session>) -> usize {
    sessions
        .into_iter()
        .filter(|session| needs_you(session))
        .count()
}

/// Whether a session belongs on the live list at `now`: every session that has not ended; an
/// ended one holding a work claim (custody protects it until the claim is released); and an
/// ended, reclaimable one until `reclaim_after` has passed since it ended, after which automatic
/// cleanup takes it off the list. It stays in the history (`slate sessions --all`) either way.
pub fn on_live_list(session: &Session, now: Timestamp, reclaim_after: Duration) -> bool {
    match leaves_live_list_at(session, reclaim_after) {
        Leaves::Never => true,
        Leaves::At(at) => now < at,
    }
}

/// When a session leaves the live list by time alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leaves {
    /// Not by time: it is live, or it holds a work claim.
    Never,
    /// At this time (which may have passed).
    At(Timestamp),
}

/// When `session` leaves the live list by time alone, so the live service can wake then.
pub fn leaves_live_list_at(session: &Session, reclaim_after: Duration) -> Leaves {
    let state = &session.session_state;
    if session.status != Status::Ended
        || state.custody.holds_work_claim
        || !state.custody.reclaimable
    {
        return Leaves::Never;
    }
    Leaves::At(state.next_actor.since.plus(reclaim_after))
}
