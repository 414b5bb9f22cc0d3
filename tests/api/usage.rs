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
