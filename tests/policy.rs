//! The policy every surface shares: which sessions need you, and which belong on the live list and
//! until when.

use std::time::Duration;

use slate::model::{Status, Timestamp};
use slate::policy::{self, Leaves};

use crate::util::{waiting, wire_session, working};

fn now() -> Timestamp {
    Timestamp::parse_rfc3339("2026-11-29T12:00:00Z").unwrap()
}

/// A session that ended `minutes` ago, holding a work claim or not.
fn ended(minutes: u64, claim: bool) -> slate::model::Session {
    let mut session = wire_session(
        "acme",
        "s9",
        Status::Ended,
        "no_process",
        "Its process ended",
    );
    let state = &mut session.session_state;
    state.custody.holds_work_claim = claim;
    state.custody.reclaimable = !claim;
    state.next_actor.since = now().minus(Duration::from_secs(minutes * 60));
    session
}

#[test]
fn only_waiting_sessions_need_you() {
    let sessions = [
        waiting("a", "s1"),
        working("b", "s2"),
        ended(0, true),
        waiting("c", "s3"),
    ];
    assert!(policy::needs_you(&sessions[0]));
    assert!(!policy::needs_you(&sessions[1]));
    assert!(!policy::needs_you(&sessions[2]));
    assert_eq!(policy::needs_you_count(&sessions), 2);
}

#[test]
fn a_reclaimable_session_leaves_the_live_list_after_the_reclaim_time() {
    let hour = Duration::from_secs(3600);
    assert!(policy::on_live_list(&ended(59, false), now(), hour));
    assert!(!policy::on_live_list(&ended(60, false), now(), hour));
    // By default a closed session leaves at once.
    assert!(!policy::on_live_list(
        &ended(0, false),
        now(),
        Duration::ZERO
    ));
    // A work claim keeps it listed however long ago it ended.
    assert!(policy::on_live_list(
        &ended(24 * 60, true),
        now(),
        Duration::ZERO
    ));
    assert!(policy::on_live_list(
        &working("a", "s1"),
        now(),
        Duration::ZERO
    ));
}

#[test]
fn the_time_a_session_leaves_the_list_is_known_in_advance() {
    let hour = Duration::from_secs(3600);
    assert_eq!(
        policy::leaves_live_list_at(&ended(10, false), hour),
        Leaves::At(now().plus(Duration::from_secs(50 * 60)))
    );
    assert_eq!(
        policy::leaves_live_list_at(&ended(10, true), hour),
        Leaves::Never
    );
    assert_eq!(
        policy::leaves_live_list_at(&waiting("a", "s1"), hour),
        Leaves::Never
    );
}
