//! The server's guard rails: the address it listens on, duplicate headers, absolute URLs, error
//! shapes and the bearer scheme, silent and idle connections (and event streams that are kept), a
//! subscriber that stops reading, and `slate serve` with a malformed config.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use slate::api::{self, Timeouts};
use slate::live;

use crate::api::{
    call, error_code, finish_turn, follow_events, security, slate, started, write_table, Running,
    PORT, TOKEN,
};
use crate::util::{transcript_path, working_transcript, SESSION};

use super::{announced, finished_within, limited, raw, serve, token_of};

/// Item 11: a server told to listen on another loopback address answers requests made to that
/// address, and its page may post from that origin.
#[cfg(unix)]
#[test]
fn a_server_on_another_loopback_address_answers_to_that_address() {
    let temp = tempfile::tempdir().unwrap();
    let server = serve(temp.path(), "127.0.0.2:0");
    let address = announced(&server);
    assert_eq!(address.ip().to_string(), "127.0.0.2");
    let health = raw(
        address,
        &format!("GET /health HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"),
    );
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    let token = token_of(temp.path());
    let refresh = raw(
        address,
        &format!(
            "POST /sessions/live/refresh HTTP/1.1\r\nHost: {address}\r\nOrigin: http://{address}\r\n\
             Authorization: Bearer {token}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ),
    );
    assert!(refresh.starts_with("HTTP/1.1 204"), "{refresh}");
    // Any other address is still a foreign host.
    let port = address.port();
    let foreign = raw(
        address,
        &format!("GET /health HTTP/1.1\r\nHost: 127.0.0.3:{port}\r\nConnection: close\r\n\r\n"),
    );
    assert!(foreign.starts_with("HTTP/1.1 421"), "{foreign}");
}

/// Item 12: two `Host` or two `Origin` headers are a bad request, and an absolute URL in the
/// request line must name this server too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_hosts_or_origins_and_foreign_absolute_urls_are_refused() {
    let (_temp, handle, thread) = started();
    let request = Request::get("/sessions/live")
        .header("host", format!("127.0.0.1:{PORT}"))
        .header("host", "evil.example")
        .body(Body::empty())
        .unwrap();
    let (status, body) = call(&handle, request).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(error_code(&body), "bad_request");
    let request = Request::get("/sessions/live")
        .header("host", format!("127.0.0.1:{PORT}"))
        .header("origin", format!("http://127.0.0.1:{PORT}"))
        .header("origin", "https://evil.example")
        .body(Body::empty())
        .unwrap();
    let (status, body) = call(&handle, request).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(error_code(&body), "bad_request");
    let request = Request::get(format!("http://evil.example:{PORT}/sessions/live"))
        .header("host", format!("127.0.0.1:{PORT}"))
        .body(Body::empty())
        .unwrap();
    let (status, body) = call(&handle, request).await;
    assert_eq!(status, StatusCode::MISDIRECTED_REQUEST, "{body}");
    let request = Request::get(format!("http://127.0.0.1:{PORT}/sessions/live"))
        .header("host", format!("127.0.0.1:{PORT}"))
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .unwrap();
    assert_eq!(call(&handle, request).await.0, StatusCode::OK);
    handle.shutdown();
    thread.join().unwrap();
}

/// Item 17: a body that is not JSON, not labelled JSON, or not the right JSON gets the same
/// `{"error": {"code", "message"}}` shape as every other error, and `bearer` is the bearer scheme
/// in any case.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bodies_get_json_errors_and_the_scheme_is_case_insensitive() {
    let (_temp, handle, thread) = started();
    let intent = format!("/sessions/{SESSION}/intent");
    let post = |uri: &str, content_type: Option<&str>, body: &str| {
        let mut request = Request::post(uri)
            .header("host", format!("127.0.0.1:{PORT}"))
            .header("authorization", format!("Bearer {TOKEN}"));
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        request.body(Body::from(body.to_string())).unwrap()
    };
    for (request, expected) in [
        (
            post(&intent, Some("application/json"), "not json"),
            StatusCode::BAD_REQUEST,
        ),
        (
            post(&intent, None, r#"{"state":"parked"}"#),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
        (
            post(&intent, Some("application/json"), r#"{"state":"sideways"}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            post("/hosted", Some("application/json"), "{"),
            StatusCode::BAD_REQUEST,
        ),
    ] {
        let (status, body) = call(&handle, request).await;
        assert_eq!(status, expected, "{body}");
        let code = match expected {
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
            StatusCode::UNPROCESSABLE_ENTITY => "invalid",
            _ => "bad_request",
        };
        assert_eq!(error_code(&body), code, "{body}");
    }
    for scheme in ["bearer", "BEARER", "Bearer"] {
        let request = Request::post("/sessions/live/refresh")
            .header("host", format!("127.0.0.1:{PORT}"))
            .header("authorization", format!("{scheme} {TOKEN}"))
            .body(Body::empty())
            .unwrap();
        assert_eq!(
            call(&handle, request).await.0,
            StatusCode::NO_CONTENT,
            "{scheme}"
        );
    }
    handle.shutdown();
    thread.join().unwrap();
}

/// Item 4: a hundred connections that never send a byte do not keep `/health` from answering,
/// even when the server starts with a soft limit of 64 descriptors.
#[cfg(unix)]
#[test]
fn silent_connections_do_not_starve_health() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    working_transcript(home, live::system_clock());
    let table = write_table(home);
    let command = slate(
        home,
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--processes",
            table.to_str().unwrap(),
        ],
    );
    let server = Running::spawn(limited("-Sn 64", command));
    let address = announced(&server);
    let silent: Vec<TcpStream> = (0..100)
        .map(|_| TcpStream::connect_timeout(&address, Duration::from_secs(2)).unwrap())
        .collect();
    let health = raw(
        address,
        &format!("GET /health HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"),
    );
    assert!(health.starts_with("HTTP/1.1 200"), "{health:?}");
    drop(silent);
}

/// Item 4: a connection that never sends its request, or sits idle after one, is closed once the
/// request-head time is up; an event stream, which is quiet on purpose, stays open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_idle_connections_are_closed_but_event_streams_are_not() {
    let (temp, handle, thread) = started();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let timeouts = Timeouts {
        request_head: Duration::from_secs(1),
        ..Timeouts::default()
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
    let path = transcript_path(temp.path());
    tokio::task::spawn_blocking(move || {
        let closed = |stream: &mut TcpStream| {
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut byte = [0u8; 1];
            matches!(stream.read(&mut byte), Ok(0))
        };
        let mut silent = TcpStream::connect(address).unwrap();
        assert!(closed(&mut silent), "a silent connection stays open");

        let mut idle = TcpStream::connect(address).unwrap();
        idle.write_all(
            format!(
                "GET /health HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
            )
            .as_bytes(),
        )
        .unwrap();
        idle.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut answer = Vec::new();
        let mut buffer = [0u8; 4096];
        while !String::from_utf8_lossy(&answer).contains("\"wakeups\"") {
            let read = idle.read(&mut buffer).unwrap();
            assert!(read > 0, "the answer ended early");
            answer.extend_from_slice(&buffer[..read]);
        }
        assert!(
            closed(&mut idle),
            "an idle kept-alive connection stays open"
        );

        let events = follow_events(address);
        assert_eq!(
            events.recv_timeout(Duration::from_secs(2)).unwrap().event,
            "snapshot"
        );
        std::thread::sleep(Duration::from_millis(2500));
        finish_turn(&path);
        let event = events
            .recv_timeout(Duration::from_secs(2))
            .expect("the event stream is still open");
        assert_eq!(event.event, "session");
    })
    .await
    .unwrap();
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(5), server).await;
    handle.shutdown();
    thread.join().unwrap();
}

/// Item 16: with a malformed config, `serve` says it cannot use it and stops; it does not first
/// say it goes on with the default settings.
#[test]
fn serve_with_a_malformed_config_does_not_promise_the_defaults() {
    let temp = tempfile::tempdir().unwrap();
    let config = temp.path().join(".config/slate");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[server\nlisten = ").unwrap();
    let output = finished_within(
        slate(temp.path(), &["serve", "--listen", "127.0.0.1:0"]),
        Duration::from_secs(10),
    )
    .expect("serve stops");
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("config.toml"), "{said}");
    assert!(!said.contains("default settings"), "{said}");
}

/// Item 6: a subscriber that stops reading (an event-stream client whose socket is full) holds
/// back at most a few hundred changes. Past that it has lagged, and the API sends it a fresh
/// snapshot when it reads again, so the changes it missed are not kept for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_that_stops_reading_lags_after_a_few_hundred_changes() {
    let temp = tempfile::tempdir().unwrap();
    working_transcript(temp.path(), live::system_clock());
    let mut service = crate::api::service(temp.path());
    service.store = Some(slate::store::open(&temp.path().join("slate.db")).unwrap());
    let (handle, thread) = live::start(service);
    let key = slate::model::SessionKey::new(slate::model::AgentKind::CLAUDE_CODE, SESSION);
    let (_, mut stalled) = handle.subscribe();
    let (_, mut reading) = handle.subscribe();
    let mut changes = 0;
    let mut round = 0;
    // Each new reason is a change of the session; the reading subscriber counts them.
    while changes <= 300 {
        round += 1;
        assert!(round < 2000, "the changes never came: {changes}");
        let intent = slate::model::Intent {
            state: slate::model::IntentState::Parked,
            reason: Some(format!("reason {round}")),
            awaiting_who: None,
        };
        handle.set_intent(&key, &intent).unwrap();
        handle.refresh_and_wait().await;
        while reading.try_recv().is_ok() {
            changes += 1;
        }
    }
    assert!(
        matches!(
            stalled.try_recv(),
            Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_))
        ),
        "a subscriber {changes} changes behind has not lagged"
    );
    handle.shutdown();
    thread.join().unwrap();
}
