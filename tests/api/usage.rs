//! `GET /usage`: the token needed, the sums `slate usage` prints, the day's total, bad queries
//! refused with the one error shape.

use axum::http::StatusCode;

use super::{anonymous_get, call, get, json, started};
use crate::util::SESSION;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_needs_the_token_and_says_a_session_without_usage_is_not_recorded() {
    let (_temp, handle, thread) = started();
    let (status, _) = call(&handle, anonymous_get("/usage")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let (status, body) = call(&handle, get("/usage")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let body = json(&body);
    assert_eq!(body["by"], "session");
    assert_eq!(body["prices"]["date"], "2026-12-07");
    let rows = body["rows"].as_array().expect("rows");
    let row = rows
        .iter()
        .find(|row| row["key"] == SESSION)
        .unwrap_or_else(|| panic!("the working session: {body}"));
    // Its transcript records no usage: counted as not recorded, with no cost and no zeros
    // passed off as one.
    assert_eq!(row["sessions"], 1);
    assert_eq!(row["not_recorded"], 1);
    assert_eq!(row["cost_basis"], "unknown");
    assert_eq!(row["cost_usd"], serde_json::Value::Null);
    // The working session is active today: the day's total holds it.
    assert!(body["today"]["sessions"].as_u64() >= Some(1), "{body}");

    let (status, body) = call(&handle, get("/usage?by=project")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(json(&body)["by"], "project");
    let (status, body) = call(&handle, get("/usage?since=2099-01-01")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(json(&body)["total"]["sessions"], 0);

    for bad in ["/usage?by=week", "/usage?since=yesterday"] {
        let (status, body) = call(&handle, get(bad)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
        assert_eq!(json(&body)["error"]["code"], "invalid", "{bad}");
    }
    handle.shutdown();
    thread.join().unwrap();
}

/// A session the store kept totals of, gone from the live list (its transcript deleted): `/usage`
/// still counts it, and today's total holds it after a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_counts_a_closed_sessions_stored_totals_once() {
    let temp = tempfile::tempdir().unwrap();
    crate::util::working_transcript(temp.path(), slate::live::system_clock());
    let store = slate::store::open(&temp.path().join("slate.db")).expect("a store");
    let usage: slate::usage::SessionUsage = serde_json::from_value(serde_json::json!({
        "input_tokens": 1000, "output_tokens": 10, "cache_read_tokens": 0,
        "cache_write_tokens": 0, "models": ["claude-opus-5-5"], "context_tokens": 1000,
        "context_percent": 0.1, "cost_usd": 1.25, "cost_basis": "estimate",
        "priced_tokens": 1010, "unpriced_tokens": 0,
    }))
    .unwrap();
    let gone = "0ld5e551-0000-4000-8000-000000000003";
    store
        .record_usage(&[slate::store::StoredUsage {
            key: slate::model::SessionKey::new(
                slate::model::AgentKind::parse("claude-code").unwrap(),
                gone,
            ),
            project: Some("acme".to_owned()),
            at: slate::live::system_clock(),
            usage,
        }])
        .unwrap();
    let mut service = super::service(temp.path());
    service.store = Some(store);
    let (handle, thread) = slate::live::start(service);
    let (status, body) = call(&handle, get("/usage")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let body = json(&body);
    let row = body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["key"] == gone)
        .unwrap_or_else(|| panic!("the stored session: {body}"))
        .clone();
    assert_eq!(row["output_tokens"], 10);
    assert_eq!(row["cost_usd"], 1.25);
    assert_eq!(body["today"]["cost_usd"], 1.25, "{body}");
    assert_eq!(body["today"]["cost_basis"], "estimate");
    // The live session, whose usage is not recorded, is in the day too, and counted once.
    assert_eq!(body["total"]["sessions"], 2, "{body}");
    handle.shutdown();
    thread.join().unwrap();
}
