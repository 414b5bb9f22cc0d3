//! The HTTP API over a temporary HOME: JSON endpoints through the router, the event stream from a
//! real server on port 0, the guard rails (Host, Origin, token, body size), the token file, and
//! the `slate serve` and `slate watch` commands as a person runs them. The helpers here (a
//! service, a server on a free port, a `slate` command, the token) serve other groups too.

mod challenge; // the server proves it holds the token: a MAC of a nonce and its bound address
mod commands; // commands that read a running server
mod errors; // one error shape everywhere
mod guards; // Host, Origin, token and body size, CORS, the token file
mod other_user; // another local user: no token to their listener, nothing read or answered
mod page; // the page holds no token; slate serve tells its own terminal the address that does
mod router; // the JSON endpoints through the router
mod serving; // slate serve and slate watch, and the event stream
mod usage; // GET /usage: the token, the sums, the day, bad queries refused

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

use crate::util::{claude_line, claude_process_table, working_transcript};

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

/// A GET with the token: every route that shows sessions needs it (`anonymous_get` has none).
pub(crate) fn get(uri: &str) -> Request<Body> {
    Request::get(uri)
        .header("host", format!("127.0.0.1:{PORT}"))
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .unwrap()
}

/// A GET without the token, as any local user may send one.
pub(crate) fn anonymous_get(uri: &str) -> Request<Body> {
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

fn refresh(token: Option<&str>, body: Vec<u8>) -> Request<Body> {
    let mut request = Request::post("/sessions/live/refresh").header("host", "127.0.0.1:7411");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    request.body(Body::from(body)).unwrap()
}

/// Reads a server's events on a thread of its own and hands them over a channel.
pub(crate) fn follow_events(address: SocketAddr) -> mpsc::Receiver<ServerEvent> {
    let mut events = Client::new(address, Some(TOKEN.to_string()))
        .events()
        .unwrap();
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

/// The lines `stdout` writes, as they come, read on a thread of their own until it ends.
pub(crate) fn lines_of(stdout: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if send.send(line).is_err() {
                return;
            }
        }
    });
    lines
}

/// One plain `GET` with no token over TCP, as any local program (or the page) can send it: the
/// whole answer, its head and its body.
pub(crate) fn plain_get(address: SocketAddr, path: &str) -> String {
    use std::io::Read;
    let mut stream =
        std::net::TcpStream::connect_timeout(&address, Duration::from_secs(5)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

impl Running {
    pub(crate) fn spawn(mut command: Command) -> Running {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = lines_of(child.stdout.take().unwrap());
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

pub(crate) fn post_json(uri: &str, body: serde_json::Value) -> Request<Body> {
    Request::post(uri)
        .header("host", format!("127.0.0.1:{PORT}"))
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
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
