//! The JSON endpoints through the router: what each answers, a hosted report marking the session
//! its process vouches for, and an intent refused clearly without a store.

use std::time::Duration;

use axum::http::StatusCode;

use crate::util::SESSION;

use super::{call, error_code, get, json, post_json, started, OLD_SESSION};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_json_endpoints_answer() {
    let (_temp, handle, thread) = started();

    let (status, body) = call(&handle, get("/sessions/live")).await;
    assert_eq!(status, StatusCode::OK);
    let live = json(&body);
    assert_eq!(live["sessions"].as_array().unwrap().len(), 1, "{body}");
    assert_eq!(live["sessions"][0]["id"], SESSION);
    assert_eq!(live["sessions"][0]["status"], "working");
    assert_eq!(live["sessions"][0]["session_state"]["status"], "working");

    let (status, body) = call(&handle, get("/sessions/7f3c1d2e")).await;
    assert_eq!(status, StatusCode::OK);
    let detail = json(&body);
    assert_eq!(detail["session"]["id"], SESSION);
    assert!(!detail["evidence"].as_array().unwrap().is_empty(), "{body}");
    assert!(detail["transitions"].is_array());

    // A closed session of the history, known but never read, is shown all the same.
    let (status, body) = call(&handle, get("/sessions/0ld5e551")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let detail = json(&body);
    assert_eq!(detail["session"]["id"], OLD_SESSION);
    assert_eq!(detail["session"]["status"], "ended");
    assert!(!detail["evidence"].as_array().unwrap().is_empty(), "{body}");

    let (status, body) = call(&handle, get("/sessions/ffff")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(error_code(&body), "unknown_session");

    let (status, body) = call(&handle, get("/health")).await;
    assert_eq!(status, StatusCode::OK);
    let health = json(&body);
    assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(health["live_sessions"], 1);
    assert_eq!(health["needs_you"], 0);
    // Which Slate this is, so one that finds the port taken can name it.
    assert_eq!(health["kind"], "service");
    assert_eq!(health["pid"], std::process::id());
    assert!(health["roots"]
        .as_array()
        .unwrap()
        .iter()
        .any(|root| root["agent"] == "claude-code" && root["found"] == true));
    // Each agent's versions, as `slate doctor` lists them: those Slate has recordings of beside
    // those its live sessions were written by (tests/versions.rs fakes a newer one).
    let claude = health["agents"]
        .as_array()
        .expect("health lists the agents")
        .iter()
        .find(|agent| agent["agent"] == "claude-code")
        .expect("Claude Code is among them");
    assert!(
        claude["recorded"]
            .as_array()
            .unwrap()
            .iter()
            .any(|version| version == "2.1.332"),
        "{claude}"
    );
    assert_eq!(claude["seen"], serde_json::json!(["2.1.332"]));
    assert_eq!(claude["newer_than_recorded"], false);

    let (status, body) = call(&handle, get("/nowhere")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(error_code(&body), "not_found");

    // The page holds no token (tests/api/page.rs).
    let (status, body) = call(&handle, get("/")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("<title>Slate</title>"), "{body}");
    for file in [
        "/ui/api.js",
        "/api.js",
        "/app.js",
        "/parts.js",
        "/ui/session.js",
        "/style.css",
        "/ui/index.html",
    ] {
        let (status, body) = call(&handle, get(file)).await;
        assert_eq!(status, StatusCode::OK, "{file}");
        assert!(!body.is_empty(), "{file}");
    }
    assert_eq!(
        call(&handle, get("/ui/nothing.js")).await.0,
        StatusCode::NOT_FOUND
    );

    handle.shutdown();
    thread.join().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosted_report_marks_the_session_its_process_vouches_for() {
    let (_temp, handle, thread) = started();
    assert!(!handle.live_sessions()[0].hosted);
    let pid = handle.live_sessions()[0]
        .pid
        .expect("the recorded process vouches");
    let (status, body) = call(
        &handle,
        post_json(
            "/hosted",
            serde_json::json!({"pid": pid, "titles": [], "last_draw": null}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    while !handle.live_sessions()[0].hosted {
        assert!(
            std::time::Instant::now() < deadline,
            "the report never reached the session"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A report that names neither a session nor a pid is refused with a reason.
    let (status, body) = call(
        &handle,
        post_json("/hosted", serde_json::json!({"titles": []})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    handle.shutdown();
    thread.join().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_intent_without_a_store_is_refused_clearly() {
    let (_temp, handle, thread) = started();
    let id = handle.live_sessions()[0].id.to_string();
    let (status, body) = call(
        &handle,
        post_json(
            &format!("/sessions/{id}/intent"),
            serde_json::json!({"state": "parked", "reason": "lunch"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(error_code(&body), "unavailable");
    let (status, _) = call(
        &handle,
        post_json(
            "/sessions/nope/intent",
            serde_json::json!({"state": "none"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    handle.shutdown();
    thread.join().unwrap();
}
