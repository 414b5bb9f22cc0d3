//! `policy::spend`: the budget alert, once per session, none at start-up, a muted session
//! counted, the day's total across sessions and the closed ones before.

use slate_core::config::Config;
use slate_core::model::{Session, Timestamp};
use slate_core::policy::spend::{day_of, describe, SpendWatch};
use slate_core::usage::CostBasis;

/// 2026-12-07T12:00:00Z.
const NOON: Timestamp = Timestamp(1_796_644_800_000);

fn at(minutes: i64) -> Timestamp {
    Timestamp(NOON.0 + minutes * 60_000)
}

/// A session whose usage says it cost `usd` (`None`: tokens with no price), on the wire.
fn costing(id: &str, usd: Option<f64>, basis: &str, unpriced: u64, muted: bool) -> Session {
    let value = serde_json::json!({
        "agent": "claude-code",
        "id": id,
        "folder": "/work/acme-api",
        "project": "acme-api",
        "title": null, "last_prompt": null, "branch": null,
        "row_time": "2026-12-07T12:00:00Z",
        "pid": null, "transcript": null, "model": "claude-opus-5-5", "cli_version": null,
        "hosted": false,
        "status": "working",
        "muted": muted,
        "session_state": {
            "status": "working",
            "active_at": null,
            "reason": {"code": "tool_running", "text": "Running Bash"},
            "presence": "present",
            "activity": "working",
            "intent": {"state": "none"},
            "custody": {"holds": [], "holds_work_claim": false, "reclaimable": false, "reason": "live"},
            "next_actor": {"actor": "this_session", "reason": "r", "since": "2026-12-07T12:00:00Z"},
        },
        "usage": {
            "input_tokens": 1000, "output_tokens": 100, "cache_read_tokens": 0,
            "cache_write_tokens": 0, "models": ["claude-opus-5-5"], "context_tokens": 1000,
            "context_percent": 0.1, "cost_usd": usd, "cost_basis": basis,
            "priced_tokens": 1100 - unpriced, "unpriced_tokens": unpriced,
        },
    });
    serde_json::from_value(value).expect("a valid session object")
}

fn estimate(id: &str, usd: f64) -> Session {
    costing(id, Some(usd), "estimate", 0, false)
}

fn budget(text: &str) -> slate_core::config::Budget {
    Config::parse(text).expect("valid").budget
}

#[test]
fn crossing_the_session_amount_tells_once_and_then_nothing_more_for_that_session() {
    let mut watch = SpendWatch::seed(budget("[budget]\nsession_usd = 5\n"), &[], &[], NOON);
    assert_eq!(watch.observe(&estimate("a", 4.99), at(1)), None);
    let plan = watch.observe(&estimate("a", 5.12), at(2)).expect("crossed");
    assert_eq!(plan.title, "Spend: acme-api · Claude Code");
    assert!(plan.body.contains("$5.12 (estimate)"), "{}", plan.body);
    assert!(
        plan.body.contains("session budget of $5.00"),
        "{}",
        plan.body
    );
    assert_eq!(plan.sessions.len(), 1);
    // Nothing more for it, however far it goes.
    assert_eq!(watch.observe(&estimate("a", 9.0), at(3)), None);
    assert_eq!(watch.observe(&estimate("a", 90.0), at(4)), None);
    // Another session has its own crossing.
    assert!(watch.observe(&estimate("b", 6.0), at(5)).is_some());
}

#[test]
fn no_budget_no_alert_and_an_unknown_cost_counts_for_nothing() {
    let mut watch = SpendWatch::seed(budget(""), &[], &[], NOON);
    assert_eq!(watch.observe(&estimate("a", 500.0), at(1)), None);
    let mut watch = SpendWatch::seed(budget("[budget]\nsession_usd = 1\n"), &[], &[], NOON);
    assert_eq!(
        watch.observe(&costing("a", None, "unknown", 1100, false), at(1)),
        None
    );
}

#[test]
fn a_session_already_over_at_start_up_is_not_told_again() {
    let over = estimate("a", 7.0);
    let mut watch = SpendWatch::seed(
        budget("[budget]\nsession_usd = 5\n"),
        std::slice::from_ref(&over),
        &[],
        NOON,
    );
    assert_eq!(watch.observe(&estimate("a", 8.0), at(1)), None);
}

#[test]
fn the_days_amount_is_crossed_by_all_sessions_together_with_the_closed_ones_and_told_once() {
    let today = day_of(NOON);
    // A closed session cost $20 earlier today; yesterday's spend does not count.
    let mut watch = SpendWatch::seed(
        budget("[budget]\nday_usd = 40\n"),
        &[],
        &[(today, 20.0), (today - 1, 500.0)],
        NOON,
    );
    assert_eq!(watch.observe(&estimate("a", 12.0), at(1)), None);
    // A muted session still counts, and its change is the one that crosses.
    let muted = costing("b", Some(9.0), "reported", 0, true);
    let plan = watch.observe(&muted, at(2)).expect("the day crossed");
    assert!(plan.body.contains("today's spend, $41.00"), "{}", plan.body);
    assert!(plan.body.contains("day budget of $40.00"), "{}", plan.body);
    assert!(plan.body.contains("$9.00 (reported)"), "{}", plan.body);
    assert_eq!(watch.today_usd(at(2)), 41.0);
    // Told once for the day: more spend by anyone tells nothing more.
    assert_eq!(watch.observe(&estimate("a", 30.0), at(3)), None);
    assert_eq!(watch.observe(&estimate("c", 3.0), at(4)), None);
}

#[test]
fn a_muted_session_crossing_its_own_amount_is_told() {
    let mut watch = SpendWatch::seed(budget("[budget]\nsession_usd = 2\n"), &[], &[], NOON);
    let muted = costing("m", Some(2.5), "estimate", 0, true);
    assert!(watch.observe(&muted, at(1)).is_some());
}

#[test]
fn a_partial_estimate_says_it_is_a_floor() {
    let session = costing("a", Some(3.0), "estimate", 40, false);
    assert_eq!(
        describe(3_000_000_000, session.usage.as_ref()),
        "≥ $3.00 (estimate, part priced)"
    );
    assert_eq!(
        session.usage.as_ref().map(|usage| usage.cost_basis),
        Some(CostBasis::Estimate)
    );
    let mut watch = SpendWatch::seed(budget("[budget]\nsession_usd = 2\n"), &[], &[], NOON);
    let plan = watch
        .observe(&session, at(1))
        .expect("a floor over the amount");
    assert!(plan.body.starts_with("≥ $3.00"), "{}", plan.body);
}
