//! What a hook event carries to Slate (issue 35): a session id longer than its limit is refused
//! whole, by `slate hook` and by `POST /hooks`, never cut to one that might be another session's;
//! and `POST /hooks` takes the fields of a `HookReport` and nothing else, while `slate hook`
//! never sends a field it does not name.

use std::process::Stdio;

use axum::http::StatusCode;
use serde_json::json;
use slate::agents::hooks::{HookReport, ID_LIMIT};
use slate::agents::BUILT_IN;
use slate::limits::ID_MAX;

use crate::api::{call, error_code, error_message, json, post_json, started};
use crate::util::slate_in;

/// Codex's permission event with `session_id` as its session.
fn permission(session_id: &str) -> serde_json::Value {
    json!({
        "session_id": session_id,
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": "touch x.txt"},
        "cwd": "/work/acme",
    })
}

#[test]
fn a_session_id_past_its_limit_is_refused_whole_never_cut() {
    assert_eq!(ID_LIMIT, ID_MAX, "one limit for ids");
    let hooks = BUILT_IN.find("codex").unwrap().hooks.unwrap();
    let whole = "a".repeat(ID_LIMIT);
    let report = hooks
        .report("codex", "PermissionRequest", &permission(&whole))
        .expect("an id at its limit is read");
    assert_eq!(report.session_id, whole);
    for long in [ID_LIMIT + 1, 4096, 1 << 20] {
        let id = "a".repeat(long);
        assert_eq!(
            hooks.report("codex", "PermissionRequest", &permission(&id)),
            None,
            "{long} bytes"
        );
    }
}

#[test]
fn slate_hook_drops_an_event_whose_session_id_is_too_long() {
    let root = tempfile::tempdir().unwrap();
    let spool = root.path().join("data/slate/hooks.spool");
    let run = |session_id: &str| {
        let mut child = slate_in(root.path())
            // No Slate listens: the event goes to the spool, where it can be counted.
            .env("SLATE_API", "http://127.0.0.1:9")
            .args(["hook", "codex", "PermissionRequest"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        std::io::Write::write_all(&mut input, permission(session_id).to_string().as_bytes())
            .unwrap();
        drop(input);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0));
    };
    let spooled = || {
        std::fs::read_to_string(&spool)
            .unwrap_or_default()
            .lines()
            .count()
    };
    run(&"b".repeat(ID_LIMIT + 1));
    assert_eq!(spooled(), 0, "an over-long id is neither sent nor spooled");
    run(&"b".repeat(ID_LIMIT));
    assert_eq!(spooled(), 1, "an id at its limit is spooled whole");
    let line = std::fs::read_to_string(&spool).unwrap();
    assert!(line.contains(&"b".repeat(ID_LIMIT)), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_hooks_refuses_an_id_too_long_and_a_field_it_does_not_name() {
    let (_temp, handle, thread) = started();
    let report = json!({
        "agent": "codex", "event": "PermissionRequest", "session_id": "019a-wire",
        "tool": "Bash", "detail": "touch x.txt",
    });
    let (status, body) = call(&handle, post_json("/hooks", report.clone())).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");

    let mut long = report.clone();
    long["session_id"] = json!("c".repeat(ID_LIMIT + 1));
    let (status, body) = call(&handle, post_json("/hooks", long)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_code(&body), "invalid");
    assert!(
        error_message(&body).contains(&format!(
            "is {} bytes long; at most {ID_LIMIT} are allowed",
            ID_LIMIT + 1
        )),
        "{body}"
    );

    for (field, value) in [
        ("answer", json!("1")),
        ("session", json!("019a-wire")),
        ("Tool", json!("Bash")),
    ] {
        let mut more = report.clone();
        more[field] = value;
        let (status, body) = call(&handle, post_json("/hooks", more)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{field}: {body}");
        let error = &json(&body)["error"];
        assert_eq!(error["code"], "invalid", "{body}");
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|message| message.contains(&format!("unknown field `{field}`"))),
            "{body}"
        );
    }

    // What `slate hook` sends is a `HookReport` as it serializes, every field set: the API
    // takes it whole.
    let hooks = BUILT_IN.find("claude-code").unwrap().hooks.unwrap();
    let event = json!({
        "session_id": "7f3c1d2e-5a4b-4c3d-9e8f-0a1b2c3d4e5f",
        "hook_event_name": "Notification",
        "tool_name": "Bash",
        "tool_input": {"command": "touch x.txt"},
        "notification_type": "permission_prompt",
        "message": "Claude needs your permission",
        "extra": {"anything": "the agent adds"},
    });
    let sent: HookReport = hooks
        .report("claude-code", "Notification", &event)
        .expect("an event Slate reads");
    let (status, body) = call(
        &handle,
        post_json("/hooks", serde_json::to_value(&sent).unwrap()),
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    handle.shutdown();
    thread.join().unwrap();
}
