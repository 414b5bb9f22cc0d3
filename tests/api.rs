//! The HTTP API over a temporary HOME: JSON endpoints through the router, the event stream from a
//! real server on port 0, the guard rails (Host, Origin, token, body size), the token file, and
//! the `slate serve` and `slate watch` commands as a person runs them.

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use slate::api::{self, Security};
use slate::client::{Client, ServerEvent};
use slate::engine::{Options, ProcessSource};
use slate::live::{self, Handle, Service, Timing};

use slate::sources::roots::Env;
use tower::ServiceExt;

use crate::util::{
    claude_line, claude_process_table, transcript_path, working_transcript, SESSION,
};

pub(crate) const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
pub(crate) const PORT: u16 = 7411;

/// Appends the tool's result, a closing text and the turn's end: the session now needs you.
pub(crate) fn finish_turn(path: &Path) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    let at = live::system_clock();
    let mut text = String::new();
    for (kind, body) in [
        (
            "user",
            r#""message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok","is_error":false}]}"#,
        ),
        (
            "assistant",
            r#""message":{"role":"assistant","content":[{"type":"text","text":"All green."}]}"#,
        ),
        ("system", r#""subtype":"turn_duration","durationMs":900"#),
    ] {
        text.push_str(&claude_line(kind, body, at));
        text.push('\n');
    }
    // One write, so the watcher cannot catch the turn half-written.
    file.write_all(text.as_bytes()).unwrap();
    file.flush().unwrap();
}

pub(crate) fn service(home: &Path) -> Service {
    let env = Env {
        home: Some(home.to_path_buf()),
        ..Env::default()
    };
    let mut options = Options::from_env(env);
    let started = live::system_clock().minus(Duration::from_secs(60));
    options.processes = ProcessSource::Recorded(claude_process_table(started));
    Service {
        options,
        timing: Timing::default(),
        store: None,
        clock: live::system_clock,
        settings: Default::default(),
        remotes: None,
    }
}

/// A session closed a month ago, in the same project.
const OLD_SESSION: &str = "0ld5e551-0000-4000-8000-000000000001";

/// A live service over a fresh temporary HOME with one working Claude Code session and one
/// closed a month ago.
pub(crate) fn started() -> (tempfile::TempDir, Handle, std::thread::JoinHandle<()>) {
    let temp = tempfile::tempdir().unwrap();
    let working = working_transcript(temp.path(), live::system_clock());
    let old = working.with_file_name(format!("{OLD_SESSION}.jsonl"));
    std::fs::write(&old, std::fs::read(&working).unwrap()).unwrap();
    let month_ago = std::time::SystemTime::now() - Duration::from_secs(30 * 24 * 3600);
    crate::engine::set_modified(&old, month_ago);
    let (handle, thread) = live::start(service(temp.path()));
    (temp, handle, thread)
}

pub(crate) fn security(port: u16) -> Security {
    Security {
        port,
        token: TOKEN.to_string(),
        kind: slate::model::ServerKind::Service,
    }
}

/// Sends one request through the router; returns the status and the body.
pub(crate) async fn call(handle: &Handle, request: Request<Body>) -> (StatusCode, String) {
    let response = api::router(handle.clone(), security(PORT))
        .oneshot(request)
        .await
        .unwrap();
    let status = response.status();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

pub(crate) fn get(uri: &str) -> Request<Body> {
    Request::get(uri)
        .header("host", format!("127.0.0.1:{PORT}"))
        .body(Body::empty())
        .unwrap()
}

pub(crate) fn json(body: &str) -> serde_json::Value {
    serde_json::from_str(body).unwrap_or_else(|err| panic!("{err}: {body}"))
}

/// The code of an API error, checking the one shape every error has:
/// `{"error": {"code", "message"}}` and nothing else, the code a snake_case word and the message
/// a sentence.
pub(crate) fn error_code(body: &str) -> String {
    let value = json(body);
    let keys = |value: &serde_json::Value| -> Vec<String> {
        let object = value
            .as_object()
            .unwrap_or_else(|| panic!("not an object: {body}"));
        let mut keys: Vec<String> = object.keys().cloned().collect();
        keys.sort();
        keys
    };
    assert_eq!(keys(&value), ["error"], "{body}");
    assert_eq!(keys(&value["error"]), ["code", "message"], "{body}");
    let code = value["error"]["code"].as_str().unwrap_or_default();
    assert!(
        !code.is_empty() && code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
        "{body}"
    );
    let message = value["error"]["message"].as_str().unwrap_or_default();
    assert!(message.len() > 10, "{body}");
    code.to_string()
}

/// The message of an API error, checking its shape (`error_code`).
pub(crate) fn error_message(body: &str) -> String {
    error_code(body);
    json(body)["error"]["message"].as_str().unwrap().to_string()
}

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

    let (status, body) = call(&handle, get("/nowhere")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(error_code(&body), "not_found");

    let (status, body) = call(&handle, get("/")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        body.contains(&format!(r#"<meta name="slate-token" content="{TOKEN}">"#)),
        "{body}"
    );
    for file in [
        "/ui/api.js",
        "/api.js",
        "/app.js",
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
async fn foreign_hosts_and_origins_are_refused() {
    let (_temp, handle, thread) = started();
    for host in [
        "evil.example:7411",
        "127.0.0.1:7412",
        "localhost",
        "10.0.0.1:7411",
    ] {
        let request = Request::get("/sessions/live")
            .header("host", host)
            .body(Body::empty())
            .unwrap();
        let (status, body) = call(&handle, request).await;
        assert_eq!(status, StatusCode::MISDIRECTED_REQUEST, "{host}");
        assert_eq!(error_code(&body), "misdirected_request");
    }
    for host in ["localhost:7411", "[::1]:7411"] {
        let request = Request::get("/sessions/live")
            .header("host", host)
            .body(Body::empty())
            .unwrap();
        assert_eq!(call(&handle, request).await.0, StatusCode::OK, "{host}");
    }
    for (origin, expected) in [
        ("https://evil.example", StatusCode::FORBIDDEN),
        ("http://127.0.0.1:7412", StatusCode::FORBIDDEN),
        ("null", StatusCode::FORBIDDEN),
        ("http://127.0.0.1:7411", StatusCode::OK),
        ("http://localhost:7411", StatusCode::OK),
        ("tauri://localhost", StatusCode::OK),
        ("http://tauri.localhost", StatusCode::OK),
    ] {
        let request = Request::get("/sessions/live")
            .header("host", "127.0.0.1:7411")
            .header("origin", origin)
            .body(Body::empty())
            .unwrap();
        assert_eq!(call(&handle, request).await.0, expected, "{origin}");
    }
    handle.shutdown();
    thread.join().unwrap();
}

fn refresh(token: Option<&str>, body: Vec<u8>) -> Request<Body> {
    let mut request = Request::post("/sessions/live/refresh").header("host", "127.0.0.1:7411");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    request.body(Body::from(body)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_need_the_token_and_a_small_body() {
    let (_temp, handle, thread) = started();
    let (status, body) = call(&handle, refresh(None, Vec::new())).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(error_code(&body), "unauthorized");
    let wrong = "f".repeat(64);
    assert_eq!(
        call(&handle, refresh(Some(&wrong), Vec::new())).await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        call(&handle, refresh(Some(TOKEN), Vec::new())).await.0,
        StatusCode::NO_CONTENT
    );
    let (status, body) = call(&handle, refresh(Some(TOKEN), vec![b'x'; 1 << 20])).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(error_code(&body), "body_too_large");
    // A body just under the limit is fine.
    assert_eq!(
        call(&handle, refresh(Some(TOKEN), vec![b'x'; 1000]))
            .await
            .0,
        StatusCode::NO_CONTENT
    );
    handle.shutdown();
    thread.join().unwrap();
}

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
            empty(to("GET", "/sessions/%FF")),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "an id too short to name a session",
            empty(to("GET", "/sessions/7f3")),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "an id that names no session",
            empty(to("GET", "/sessions/ffff")),
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

/// Reads a server's events on a thread of its own and hands them over a channel.
pub(crate) fn follow_events(address: SocketAddr) -> mpsc::Receiver<ServerEvent> {
    let mut events = Client::new(address, None).events().unwrap();
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        while let Ok(Some(event)) = events.next_event() {
            if send.send(event).is_err() {
                return;
            }
        }
    });
    receive
}

/// The issue's "done when": an appended finished turn reaches the stream as exactly one
/// `session` event with status `waiting`, within a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_appended_turn_end_reaches_the_stream_once() {
    let (temp, handle, thread) = started();
    let (address, stop, server) = serve_on_free_port(&handle).await;

    let events = tokio::task::spawn_blocking(move || follow_events(address))
        .await
        .unwrap();
    let first = events.recv_timeout(Duration::from_secs(2)).unwrap();
    assert_eq!(first.event, "snapshot");
    let snapshot = json(&first.data);
    assert_eq!(snapshot["sessions"][0]["status"], "working", "{snapshot}");

    finish_turn(&transcript_path(temp.path()));
    let event = events.recv_timeout(Duration::from_secs(1)).unwrap();
    assert_eq!(event.event, "session");
    let session = json(&event.data);
    assert_eq!(session["id"], SESSION);
    assert_eq!(session["status"], "waiting");
    assert_eq!(session["session_state"]["reason"]["code"], "turn_finished");
    // Exactly one: nothing else arrives while nothing else happens.
    let more = events.recv_timeout(Duration::from_millis(700));
    assert!(more.is_err(), "a second event arrived: {more:?}");

    // Shutting down ends the open stream, so the server stops.
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("the server stops with a stream open")
        .unwrap()
        .unwrap();
    handle.shutdown();
    thread.join().unwrap();
}

#[test]
fn the_token_file_is_private_and_kept() {
    let temp = tempfile::tempdir().unwrap();
    // The token file lives in a folder that does not exist yet: it is created.
    let path = temp.path().join("slate/token");
    assert_eq!(slate::token::read_token(&path).unwrap(), None);
    let token = slate::token::load_or_create_token(&path).unwrap();
    assert_eq!(token.len(), 64);
    assert!(token.bytes().all(|byte| byte.is_ascii_hexdigit()));
    assert_eq!(
        slate::token::read_token(&path).unwrap(),
        Some(token.clone())
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert_eq!(slate::token::load_or_create_token(&path).unwrap(), token);

    std::fs::write(&path, "not a token\n").unwrap();
    let replaced = slate::token::load_or_create_token(&path).unwrap();
    assert_ne!(replaced, token);
    assert_eq!(replaced.len(), 64);

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let again = slate::token::load_or_create_token(&path).unwrap();
        assert_ne!(again, replaced, "a token others could read is replaced");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

/// A `slate` command over a temporary HOME, with no agent variables from the real environment.
pub(crate) fn slate(home: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_slate"));
    command
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("SLATE_LOG", "warn");
    for variable in [
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "GEMINI_CLI_HOME",
        "OPENCODE_DB",
        "CURSOR_CONFIG_DIR",
        "USERPROFILE",
        "APPDATA",
        "SLATE_API",
        // `slate run` listens in the runtime folder: the temporary HOME's, never the real one.
        "XDG_RUNTIME_DIR",
    ] {
        command.env_remove(variable);
    }
    command
}

/// A running child whose stdout lines arrive on a channel; killed when dropped.
pub(crate) struct Running {
    pub(crate) child: Child,
    pub(crate) lines: mpsc::Receiver<String>,
}

impl Running {
    pub(crate) fn spawn(mut command: Command) -> Running {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        Running { child, lines }
    }

    pub(crate) fn line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(10))
            .expect("a line within 10 s")
    }

    /// Waits for the child to exit, at most 10 s.
    pub(crate) fn wait(mut self) -> std::process::ExitStatus {
        let mut child = std::mem::replace(
            &mut self.child,
            Command::new("true").spawn().expect("`true` runs"),
        );
        let (send, receive) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = send.send(child.wait());
        });
        receive
            .recv_timeout(Duration::from_secs(10))
            .expect("the child exits within 10 s")
            .unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn write_table(home: &Path) -> PathBuf {
    let path = home.join("processes.json");
    let started = live::system_clock().minus(Duration::from_secs(60));
    std::fs::write(
        &path,
        serde_json::to_vec(&claude_process_table(started).processes).unwrap(),
    )
    .unwrap();
    path
}

#[cfg(unix)]
#[test]
fn serve_prints_its_port_refuses_a_second_and_stops_on_sigterm() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    working_transcript(home, live::system_clock());
    let table = write_table(home);
    let table = table.to_str().unwrap();

    let first = Running::spawn(slate(
        home,
        &["serve", "--listen", "127.0.0.1:0", "--processes", table],
    ));
    let announced = first.line();
    let port: u16 = announced
        .strip_prefix("listening on http://127.0.0.1:")
        .unwrap_or_else(|| panic!("unexpected first line {announced:?}"))
        .parse()
        .unwrap();
    let address: SocketAddr = ([127, 0, 0, 1], port).into();
    assert!(Client::new(address, None).probe(Duration::from_secs(2)));

    // The token was created, owner-only.
    let token_file = home.join(".config/slate/token");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // One engine per user: a second `slate serve` of the same HOME names the first and does not
    // start, with the status the user unit does not restart on.
    let listen = format!("127.0.0.1:{port}");
    let second = slate(home, &["serve", "--listen", &listen, "--processes", table])
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(3));
    let message = String::from_utf8_lossy(&second.stderr);
    assert_eq!(
        message.trim_end(),
        format!(
            "slate: another `slate serve` already serves on {listen} (pid {}); it is this \
             user's engine, so this one does not start",
            first.child.id()
        )
    );

    let refused = slate(home, &["serve", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not a loopback address"));

    let killed = Command::new("kill")
        .args(["-TERM", &first.child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert!(first.wait().success(), "serve exits cleanly on SIGTERM");
}

/// One engine per user, the other way round: while the desktop app serves this HOME's API on the
/// port, `slate serve` does not start, names the app and its process, and exits with 3 (which
/// the user unit does not restart on). A Slate that holds another token is another user's, and
/// a program that is not a Slate is neither: both are plain errors that suggest a free port.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_refuses_to_start_while_the_app_serves_and_names_it() {
    let (temp, handle, _thread) = started();
    let home = temp.path();
    give_token(home, TOKEN);
    // The app's server: this process, saying it is the app.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let app = Security {
        kind: slate::model::ServerKind::App,
        ..security(address.port())
    };
    let server = tokio::spawn(api::serve(listener, handle.clone(), app, async move {
        let _ = stopped.await;
    }));
    let (status, body) = call_health(address).await;
    assert_eq!(status, 200);
    assert_eq!(body["kind"], "app");

    let listen = address.to_string();
    let mut command = slate(home, &["serve", "--listen", &listen]);
    let refused = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(refused.status.code(), Some(3), "{refused:?}");
    assert!(refused.stdout.is_empty(), "it never listened");
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim_end(),
        format!(
            "slate: the Slate app already serves on {listen} (pid {}); it is this user's \
             engine, so this one does not start",
            std::process::id()
        )
    );

    // Another HOME's `slate serve` finds a Slate whose token is not its own.
    let other = tempfile::tempdir().unwrap();
    give_token(other.path(), &"f".repeat(64));
    let mut command = slate(other.path(), &["serve", "--listen", &listen]);
    let foreign = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(foreign.status.code(), Some(1));
    let message = String::from_utf8_lossy(&foreign.stderr);
    assert!(
        message.contains("is held by another user's or HOME's Slate (its token differs)")
            && message.contains("--listen 127.0.0.1:0"),
        "{message}"
    );
    let _ = stop.send(());
    server.await.unwrap().unwrap();

    // A program that is not a Slate: it answers every request with 404.
    let stranger = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let listen = stranger.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in stranger.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut request = [0u8; 1024];
            let _ = std::io::Read::read(&mut stream, &mut request);
            let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let mut command = slate(home, &["serve", "--listen", &listen]);
    let taken = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(taken.status.code(), Some(1));
    let message = String::from_utf8_lossy(&taken.stderr);
    assert!(
        message.contains("is already in use on 127.0.0.1 by a program that is not a Slate"),
        "{message}"
    );
}

/// `GET /health` over HTTP, with the test token: the status and the JSON.
async fn call_health(address: SocketAddr) -> (u16, serde_json::Value) {
    tokio::task::spawn_blocking(move || {
        let client = Client::new(address, Some(TOKEN.to_string()));
        match client.get_json::<serde_json::Value>("/health") {
            Ok(body) => (200, body),
            Err(slate::client::ClientError::Status { status, .. }) => (status, json("null")),
            Err(err) => panic!("{err}"),
        }
    })
    .await
    .unwrap()
}

/// Serves `handle`'s API on a free loopback port until the returned sender fires.
pub(crate) async fn serve_on_free_port(
    handle: &Handle,
) -> (
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(api::serve(
        listener,
        handle.clone(),
        security(address.port()),
        async move {
            let _ = stopped.await;
        },
    ));
    (address, stop, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_follows_a_running_server() {
    let (temp, handle, thread) = started();
    let (address, stop, server) = serve_on_free_port(&handle).await;
    // The watcher's own HOME has no transcripts, only the server's token: everything it prints
    // comes from the server.
    let own = tempfile::tempdir().unwrap();
    give_token(own.path(), TOKEN);
    let listen = address.to_string();
    let watch = Running::spawn(slate(own.path(), &["watch", "--json", "--listen", &listen]));
    let first = tokio::task::spawn_blocking({
        let lines = watch.lines.recv_timeout(Duration::from_secs(10));
        move || lines
    })
    .await
    .unwrap()
    .expect("a first line");
    let snapshot = json(&first);
    assert_eq!(snapshot["type"], "snapshot");
    assert_eq!(snapshot["sessions"][0]["id"], SESSION, "{first}");

    finish_turn(&transcript_path(temp.path()));
    let next = json(&watch.line());
    assert_eq!(next["type"], "session");
    assert_eq!(next["session"]["status"], "waiting");
    drop(watch);

    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(5), server).await;
    handle.shutdown();
    thread.join().unwrap();
}

#[test]
fn watch_runs_its_own_engine_when_no_server_answers() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    working_transcript(home, live::system_clock());
    let table = write_table(home);
    // A port nobody listens on: bound, then freed.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let listen = free.local_addr().unwrap().to_string();
    drop(free);

    let watch = Running::spawn(slate(
        home,
        &[
            "watch",
            "--listen",
            &listen,
            "--processes",
            table.to_str().unwrap(),
        ],
    ));
    let first = watch.line();
    assert!(
        first.contains("Working") && first.contains("Claude Code") && first.contains("acme"),
        "{first}"
    );
    finish_turn(&transcript_path(home));
    let next = watch.line();
    assert!(next.contains("Needs you"), "{next}");
}

pub(crate) fn post_json(uri: &str, body: serde_json::Value) -> Request<Body> {
    Request::post(uri)
        .header("host", format!("127.0.0.1:{PORT}"))
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desktop_webview_origin_gets_cors_and_others_do_not() {
    let (_temp, handle, thread) = started();
    let preflight = |origin: &str| {
        Request::options("/sessions/live/refresh")
            .header("host", format!("127.0.0.1:{PORT}"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "authorization")
            .body(Body::empty())
            .unwrap()
    };
    let response = api::router(handle.clone(), security(PORT))
        .oneshot(preflight("tauri://localhost"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let headers = response.headers();
    assert_eq!(headers["access-control-allow-origin"], "tauri://localhost");
    assert!(headers["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .contains("authorization"));
    let response = api::router(handle.clone(), security(PORT))
        .oneshot(preflight("https://evil.example"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(response
        .headers()
        .get("access-control-allow-origin")
        .is_none());
    // A plain read from the webview carries the header too; a same-origin read needs none.
    let mut request = get("/sessions/live");
    request
        .headers_mut()
        .insert("origin", "http://tauri.localhost".parse().unwrap());
    let response = api::router(handle.clone(), security(PORT))
        .oneshot(request)
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["access-control-allow-origin"],
        "http://tauri.localhost"
    );
    handle.shutdown();
    thread.join().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slate_sessions_reads_a_running_server() {
    let (_temp, handle, thread) = started();
    report_hosted(&handle).await;
    let (address, stop, server) = serve_on_free_port(&handle).await;
    // An empty HOME whose config points at that server, with its token: on its own,
    // `slate sessions` would list nothing.
    let home = tempfile::tempdir().unwrap();
    point_at(home.path(), address);
    let home_path = home.path().to_path_buf();
    let run = move |extra: &[(&str, &str)]| {
        let mut command = slate(&home_path, &["sessions", "--json"]);
        for (name, value) in extra {
            command.env(name, value);
        }
        command.output().unwrap()
    };
    let output = tokio::task::spawn_blocking(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let output = run(&[]);
            let body = json(&String::from_utf8_lossy(&output.stdout));
            if body["sessions"][0]["hosted"] == true || std::time::Instant::now() > deadline {
                return (
                    body,
                    json(&String::from_utf8_lossy(
                        &run(&[("SLATE_STANDALONE", "1")]).stdout,
                    )),
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    })
    .await
    .unwrap();
    let (from_server, standalone) = output;
    assert_eq!(from_server["sessions"][0]["id"], SESSION, "{from_server}");
    assert_eq!(from_server["sessions"][0]["hosted"], true, "{from_server}");
    assert_eq!(
        standalone["sessions"],
        serde_json::json!([]),
        "{standalone}"
    );
    // With no config at all, `SLATE_API` names the server, as it does for `slate run`.
    let bare = tempfile::tempdir().unwrap();
    give_token(bare.path(), TOKEN);
    let bare_path = bare.path().to_path_buf();
    let through_variable = tokio::task::spawn_blocking(move || {
        let output = slate(&bare_path, &["sessions", "--json"])
            .env("SLATE_API", format!("http://{address}"))
            .output()
            .unwrap();
        json(&String::from_utf8_lossy(&output.stdout))
    })
    .await
    .unwrap();
    assert_eq!(
        through_variable["sessions"][0]["hosted"], true,
        "{through_variable}"
    );
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    handle.shutdown();
    thread.join().unwrap();
}

/// Reports a hosted terminal for the live session's process, the way `slate run` does, and waits
/// until the session reads hosted: what only the running engine knows.
async fn report_hosted(handle: &Handle) {
    let pid = handle.live_sessions()[0]
        .pid
        .expect("the recorded process vouches");
    handle.send(live::Event::HostedProcess {
        pid,
        signals: slate::model::HostedSignals::default(),
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !handle.live_sessions()[0].hosted {
        assert!(
            std::time::Instant::now() < deadline,
            "the report never landed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A HOME whose config points `slate` at the server at `address`, and that holds its token: a
/// command reads only from a Slate that holds its HOME's token.
pub(crate) fn point_at(home: &Path, address: SocketAddr) {
    let config = home.join(".config/slate");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!("[server]\nlisten = \"{address}\"\n"),
    )
    .unwrap();
    give_token(home, TOKEN);
}

/// Writes `token` as the token of `home`, owner-only, as the Slate serving that HOME would.
pub(crate) fn give_token(home: &Path, token: &str) {
    let path = home.join(".config/slate/token");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, format!("{token}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
}

/// Runs `slate args…` over `home` on a blocking thread and reads its JSON.
async fn slate_json(home: &Path, args: &[&str]) -> serde_json::Value {
    let mut command = slate(home, args);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    json(&String::from_utf8_lossy(&output.stdout))
}

/// With a server running, `slate sessions --all` and `slate show` read a live session as the
/// server decided it (here: hosted, which only the running engine knows), and add the closed
/// history this process reads. They once scanned on their own, so the same session read
/// differently there and in `slate sessions`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_answers_from_the_running_server() {
    let (temp, handle, thread) = started();
    report_hosted(&handle).await;
    let (address, stop, server) = serve_on_free_port(&handle).await;
    // The same HOME: this process reads the same transcripts, but sees no live `claude`.
    point_at(temp.path(), address);

    let standalone = {
        let mut command = slate(temp.path(), &["sessions", "--json", "--all"]);
        command.env("SLATE_STANDALONE", "1");
        let output = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        json(&String::from_utf8_lossy(&output.stdout))
    };
    let mine = |body: &serde_json::Value, id: &str| -> Vec<serde_json::Value> {
        body["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|session| session["id"] == id)
            .cloned()
            .collect()
    };
    assert_eq!(
        mine(&standalone, SESSION)[0]["hosted"],
        false,
        "on its own, this process cannot know the session is hosted"
    );

    let all = slate_json(temp.path(), &["sessions", "--json", "--all"]).await;
    let live = mine(&all, SESSION);
    assert_eq!(live.len(), 1, "listed once: {all}");
    assert_eq!(live[0]["hosted"], true, "{all}");
    assert_eq!(live[0]["status"], "working", "{all}");
    let old = mine(&all, OLD_SESSION);
    assert_eq!(old.len(), 1, "the closed history is added: {all}");
    assert_eq!(old[0]["status"], "ended");

    let listed = slate_json(temp.path(), &["sessions", "--json"]).await;
    assert_eq!(mine(&listed, SESSION)[0], live[0], "both commands agree");

    let shown = slate_json(temp.path(), &["show", &SESSION[..8], "--json"]).await;
    assert_eq!(shown["session"]["id"], SESSION);
    assert_eq!(shown["session"]["hosted"], true, "{shown}");
    assert!(shown["session"]["evidence"].is_array(), "{shown}");
    let closed = slate_json(temp.path(), &["show", OLD_SESSION, "--json"]).await;
    assert_eq!(closed["session"]["status"], "ended", "{closed}");

    let _ = stop.send(());
    server.await.unwrap().unwrap();
    handle.shutdown();
    thread.join().unwrap();
}

/// With a server running, `slate sessions` lists a closed session that holds a work claim, as
/// the command line on its own does; the server once dropped every closed session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slate_sessions_lists_a_claimed_closed_session_from_the_server() {
    use slate::store;
    use std::sync::{Arc, Mutex};

    let temp = tempfile::tempdir().unwrap();
    let now = live::system_clock();
    working_transcript(temp.path(), now);
    let store = store::open(&temp.path().join("data/slate.db")).unwrap();
    crate::util::claim_docs(&store, now);
    let table = Arc::new(Mutex::new(claude_process_table(
        now.minus(Duration::from_secs(60)),
    )));
    let mut service = service(temp.path());
    service.options.processes = ProcessSource::Shared(Arc::clone(&table));
    service.store = Some(store);
    let (handle, thread) = live::start(service);
    // The session's process exits.
    table.lock().unwrap().processes.clear();
    handle.refresh_and_wait().await;
    let (address, stop, server) = serve_on_free_port(&handle).await;

    let home = tempfile::tempdir().unwrap();
    point_at(home.path(), address);
    let listed = slate_json(home.path(), &["sessions", "--json"]).await;
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{listed}");
    assert_eq!(sessions[0]["id"], SESSION);
    assert_eq!(sessions[0]["status"], "ended");
    assert_eq!(
        sessions[0]["session_state"]["custody"]["holds_work_claim"],
        true
    );

    let _ = stop.send(());
    server.await.unwrap().unwrap();
    handle.shutdown();
    thread.join().unwrap();
}

/// A config file that does not parse stops a command with an error naming the file, the line and
/// the key, and a non-zero exit; `slate run` says so and runs the program anyway.
#[test]
fn a_broken_config_stops_a_command_with_the_file_and_the_key() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let config = home.join(".config/slate/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "[project-policy]\nsesion_idle_minutes = 20\n").unwrap();

    for args in [&["sessions"][..], &["item", "list"], &["serve"]] {
        let output = slate(home, args).output().unwrap();
        assert!(!output.status.success(), "{args:?} must fail");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&config.display().to_string()),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("line 2"), "{args:?}: {stderr}");
        assert!(
            stderr.contains("key `sesion_idle_minutes`"),
            "{args:?}: {stderr}"
        );
    }
    let output = slate(home, &["run", "--", "sh", "-c", "exit 3"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "the program ran");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("sesion_idle_minutes"),
        "and the error was said"
    );
}
