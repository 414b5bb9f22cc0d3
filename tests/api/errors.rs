//! Every error of the API has one shape, `{"error": {"code", "message"}}`, endpoint by endpoint.

use std::io::Write;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use slate::api;

use crate::util::SESSION;

use super::{call, error_code, security, started, PORT, TOKEN};

/// Every error the API answers has one shape, `{"error": {"code", "message"}}`: the guard's
/// refusals, a body or a path that cannot be read, an id that names no session, each endpoint's
/// own refusals and an answer's, and a body that does not arrive in time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_error_of_the_api_has_one_shape() {
    let (_temp, handle, thread) = started();
    let host = format!("127.0.0.1:{PORT}");
    let to = |method: &str, uri: &str| {
        Request::builder()
            .method(method)
            .uri(uri)
            .header("host", &host)
    };
    let with_token = |method: &str, uri: &str| {
        to(method, uri).header("authorization", format!("Bearer {TOKEN}"))
    };
    let posted = |uri: &str, body: &str| {
        with_token("POST", uri)
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap()
    };
    let empty = |builder: axum::http::request::Builder| builder.body(Body::empty()).unwrap();
    let intent = format!("/sessions/{SESSION}/intent");
    let respond = format!("/sessions/{SESSION}/respond");
    let mute = format!("/sessions/{SESSION}/mute");
    let cases = [
        // The guard.
        (
            "two Host headers",
            empty(to("GET", "/sessions/live").header("host", "evil.example")),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "two Origin headers",
            empty(
                to("GET", "/sessions/live")
                    .header("origin", format!("http://{host}"))
                    .header("origin", "https://evil.example"),
            ),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "another Host",
            Request::get("/sessions/live")
                .header("host", "evil.example:7411")
                .body(Body::empty())
                .unwrap(),
            StatusCode::MISDIRECTED_REQUEST,
            "misdirected_request",
        ),
        (
            "no Host",
            Request::get("/sessions/live").body(Body::empty()).unwrap(),
            StatusCode::MISDIRECTED_REQUEST,
            "misdirected_request",
        ),
        (
            "an absolute URL naming another host",
            empty(to("GET", "http://evil.example:7411/sessions/live")),
            StatusCode::MISDIRECTED_REQUEST,
            "misdirected_request",
        ),
        (
            "another site's page",
            empty(to("GET", "/sessions/live").header("origin", "https://evil.example")),
            StatusCode::FORBIDDEN,
            "forbidden_origin",
        ),
        (
            "a change without the token",
            empty(to("POST", "/sessions/live/refresh")),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
        (
            "a read of the live list without the token",
            empty(to("GET", "/sessions/live")),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
        (
            "a read with another token",
            empty(
                to("GET", "/sessions/live")
                    .header("authorization", format!("Bearer {}", "f".repeat(64))),
            ),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
        (
            "a body over the limit",
            with_token("POST", "/sessions/live/refresh")
                .body(Body::from(vec![b'x'; api::BODY_LIMIT + 1]))
                .unwrap(),
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
        ),
        // Paths and methods.
        (
            "no such endpoint",
            empty(to("GET", "/nowhere")),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            "no such file of the page",
            empty(to("GET", "/ui/nothing.js")),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            "a method the endpoint does not take",
            empty(with_token("DELETE", "/sessions/live")),
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
        ),
        (
            "an id that is not UTF-8",
            empty(with_token("GET", "/sessions/%FF")),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "an id too short to name a session",
            empty(with_token("GET", "/sessions/7f3")),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "an id that names no session",
            empty(with_token("GET", "/sessions/ffff")),
            StatusCode::NOT_FOUND,
            "unknown_session",
        ),
        // An intent.
        (
            "an intent that is not JSON",
            posted(&intent, "not json"),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "an intent not labelled JSON",
            with_token("POST", &intent)
                .body(Body::from(r#"{"state":"parked"}"#))
                .unwrap(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        ),
        (
            "an intent of the wrong shape",
            posted(&intent, r#"{"state":"sideways"}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
        ),
        (
            "an intent awaiting nobody Slate knows",
            posted(
                &intent,
                r#"{"state":"awaiting","awaiting_who":"nobody","reason":"r"}"#,
            ),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "an intent with a reason over its limit",
            posted(
                &intent,
                &serde_json::json!({
                    "state": "parked",
                    "reason": "r".repeat(slate::limits::REASON_MAX + 1),
                })
                .to_string(),
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
        ),
        // A mute.
        (
            "a mute without the token",
            empty(to("POST", &mute)),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
        (
            "a mute that is not JSON",
            posted(&mute, "not json"),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "a mute of the wrong shape",
            posted(&mute, r#"{"muted":"yes"}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
        ),
        (
            "a mute with a field it does not know",
            posted(&mute, r#"{"muted":true,"for":"ever"}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
        ),
        (
            "a mute for no session",
            posted("/sessions/ffff/mute", r#"{"muted":true}"#),
            StatusCode::NOT_FOUND,
            "unknown_session",
        ),
        (
            "a mute where no store keeps it",
            posted(&mute, r#"{"muted":true}"#),
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
        ),
        (
            "an intent for no session",
            posted(
                "/sessions/ffff/intent",
                r#"{"state":"parked","reason":"r"}"#,
            ),
            StatusCode::NOT_FOUND,
            "unknown_session",
        ),
        (
            "an intent where no store keeps it",
            posted(&intent, r#"{"state":"parked","reason":"r"}"#),
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
        ),
        // A hosted report.
        (
            "a hosted report that is not JSON",
            posted("/hosted", "{"),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "a hosted report naming neither a session nor a process",
            posted("/hosted", "{}"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
        ),
        // An answer.
        (
            "an answer that is not one",
            posted(&respond, r#"{"action":"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "an answer without a fingerprint's form",
            posted(&respond, r#"{"action":"approve","dialog":"xyz"}"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "an answer to no session",
            posted(
                "/sessions/ffff/respond",
                r#"{"action":"approve","dialog":"0123456789abcdef"}"#,
            ),
            StatusCode::NOT_FOUND,
            "unknown_session",
        ),
        (
            "an answer where no store locks and records it",
            posted(
                &respond,
                r#"{"action":"approve","dialog":"0123456789abcdef"}"#,
            ),
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
        ),
    ];
    for (what, request, status, code) in cases {
        let (answered, body) = call(&handle, request).await;
        assert_eq!(answered, status, "{what}: {body}");
        assert_eq!(error_code(&body), code, "{what}: {body}");
    }

    // A body that does not arrive in time, which only a real connection can send.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let timeouts = api::Timeouts {
        request_body: Duration::from_millis(300),
        ..api::Timeouts::default()
    };
    let server = tokio::spawn(api::serve_with(
        listener,
        handle.clone(),
        security(address.port()),
        timeouts,
        async move {
            let _ = stopped.await;
        },
    ));
    let answer = tokio::task::spawn_blocking(move || {
        use std::io::Read;
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let head = format!(
            "POST /sessions/live/refresh HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer \
             {TOKEN}\r\nContent-Length: 100\r\nConnection: close\r\n\r\nonly part"
        );
        stream.write_all(head.as_bytes()).unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    assert_eq!(error_code(body), "request_timeout", "{answer}");
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(5), server).await;
    handle.shutdown();
    thread.join().unwrap();
}
