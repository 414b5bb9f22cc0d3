//! The defects a hostile user or file found (issue 17), each with the test that showed it: the
//! server's guard rails (the address it listens on, duplicate headers, absolute URLs, error
//! shapes, the bearer scheme), silent and idle connections, short id prefixes, the token file,
//! free text without a limit, work-item dependencies, terminal escapes, `slate run`'s exit, a
//! running Slate of another HOME, and a store that cannot be read.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use slate::api::{self, Timeouts};
use slate::live;

use crate::api::{
    call, error_code, error_message, finish_turn, follow_events, get, give_token, json, post_json,
    security, slate, started, write_table, Running, PORT, TOKEN,
};
use crate::util::{transcript_path, working_transcript, SESSION};

/// Sends `request` as it is and returns what the server answers until it closes the connection
/// (or 5 s pass).
fn raw(address: SocketAddr, request: &str) -> String {
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(2)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// The token `slate serve` created under `home`.
fn token_of(home: &Path) -> String {
    std::fs::read_to_string(home.join(".config/slate/token"))
        .unwrap()
        .trim()
        .to_string()
}

/// The address a `slate serve` child announced on its first line.
fn announced(server: &Running) -> SocketAddr {
    let line = server.line();
    line.strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .parse()
        .unwrap()
}

/// `slate serve` over a HOME with one working session, on `listen`.
fn serve(home: &Path, listen: &str) -> Running {
    working_transcript(home, live::system_clock());
    let table = write_table(home);
    Running::spawn(slate(
        home,
        &[
            "serve",
            "--listen",
            listen,
            "--processes",
            table.to_str().unwrap(),
        ],
    ))
}

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

/// Item 10, over HTTP: a prefix of fewer than four characters names no session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_prefix_names_no_session_over_http() {
    let (_temp, handle, thread) = started();
    let (status, body) = call(&handle, get("/sessions/7f3")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(error_code(&body), "bad_request");
    assert!(error_message(&body).contains("at least 4"), "{body}");
    let (status, body) = call(
        &handle,
        post_json("/sessions/7/intent", serde_json::json!({"state": "none"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(call(&handle, get("/sessions/7f3c")).await.0, StatusCode::OK);
    handle.shutdown();
    thread.join().unwrap();
}

/// Item 10, on the command line: `slate show ''` and `slate park ''` name no session, and
/// neither does a prefix of three characters.
#[test]
fn an_empty_or_short_id_names_no_session_on_the_command_line() {
    let place = StoreHome::new();
    let said = place.refused(&["show", ""]);
    assert!(said.contains("empty"), "{said}");
    place.refused(&["park", "", "--reason", "oops"]);
    let said = place.refused(&["show", "7f3"]);
    assert!(said.contains("at least 4"), "{said}");
    assert_eq!(
        place.intent()["state"],
        "none",
        "the empty id parked nothing"
    );
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
        idle.write_all(format!("GET /health HTTP/1.1\r\nHost: {address}\r\n\r\n").as_bytes())
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

/// Item 10: the rules of the one lookup. A whole id shorter than four characters still names its
/// session; a prefix that short does not.
#[test]
fn a_whole_short_id_names_its_session_and_a_short_prefix_does_not() {
    use slate::engine::{pick, FindError};
    use slate::model::{AgentKind, SessionKey};
    let keys = [
        SessionKey::new(AgentKind::OPENCODE, "ab"),
        SessionKey::new(AgentKind::OPENCODE, "abcdef"),
    ];
    assert_eq!(pick(&keys, "ab").unwrap().id.as_str(), "ab");
    assert_eq!(pick(&keys, "abcd").unwrap().id.as_str(), "abcdef");
    assert_eq!(pick(&keys, "a"), Err(FindError::TooShort("a".to_string())));
    assert_eq!(pick(&keys, ""), Err(FindError::Empty));
    assert_eq!(
        pick(&keys, "abcx"),
        Err(FindError::NotFound("abcx".to_string()))
    );
}

/// Runs `command` to its end, or kills it after `limit`; `None` when it had to be killed.
fn finished_within(
    mut command: std::process::Command,
    limit: Duration,
) -> Option<std::process::Output> {
    let mut child = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(child.wait_with_output().unwrap())
}

/// `command` run by `sh` under `ulimit <limit>`, with the same arguments and environment.
#[cfg(unix)]
fn limited(limit: &str, command: std::process::Command) -> std::process::Command {
    let mut limited = std::process::Command::new("sh");
    limited
        .arg("-c")
        .arg(format!(r#"ulimit {limit} && exec "$0" "$@""#))
        .arg(command.get_program())
        .args(command.get_args());
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => limited.env(name, value),
            None => limited.env_remove(name),
        };
    }
    limited
}

/// `command` with its address space capped at about 1 GB, so a read that never ends fails
/// instead of taking the machine's memory.
#[cfg(unix)]
fn capped(command: std::process::Command) -> std::process::Command {
    limited("-v 1000000", command)
}

/// Item 3: a token file that is a FIFO, or a link to `/dev/zero`, is read as what it is: not a
/// token. `serve` stops with an error that names the file; `slate run` and `slate item add`,
/// which only use the token to tell a server, go on without it.
#[cfg(unix)]
#[test]
fn a_token_file_that_is_not_a_regular_file_is_refused_without_blocking() {
    for kind in ["fifo", "zero"] {
        let temp = tempfile::tempdir().unwrap();
        let home = temp.path();
        let token = home.join(".config/slate/token");
        std::fs::create_dir_all(token.parent().unwrap()).unwrap();
        if kind == "fifo" {
            let made = std::process::Command::new("mkfifo")
                .arg(&token)
                .status()
                .unwrap();
            assert!(made.success());
        } else {
            std::os::unix::fs::symlink("/dev/zero", &token).unwrap();
        }
        working_transcript(home, live::system_clock());
        let table = write_table(home);
        let table = table.to_str().unwrap();

        let serve = capped(slate(
            home,
            &["serve", "--listen", "127.0.0.1:0", "--processes", table],
        ));
        let served = finished_within(serve, Duration::from_secs(10))
            .unwrap_or_else(|| panic!("{kind}: serve blocked on the token file"));
        assert!(!served.status.success(), "{kind}");
        let said = String::from_utf8_lossy(&served.stderr);
        assert!(
            said.contains(&token.display().to_string()) && said.contains("not a regular file"),
            "{kind}: {said}"
        );

        let run = finished_within(
            capped(slate(home, &["run", "--", "true"])),
            Duration::from_secs(10),
        )
        .unwrap_or_else(|| panic!("{kind}: slate run blocked on the token file"));
        assert!(run.status.success(), "{kind}: {run:?}");

        let add = finished_within(
            capped(slate(home, &["item", "add", "fix-1", "--title", "Fix it"])),
            Duration::from_secs(10),
        )
        .unwrap_or_else(|| panic!("{kind}: slate item add blocked on the token file"));
        assert!(add.status.success(), "{kind}: {add:?}");
    }
}

/// A HOME with the working session and its recorded process table, for the commands that write
/// Slate's store.
struct StoreHome {
    _temp: tempfile::TempDir,
    home: std::path::PathBuf,
    table: String,
}

impl StoreHome {
    fn new() -> StoreHome {
        let temp = tempfile::tempdir().unwrap();
        let home = temp.path().to_path_buf();
        working_transcript(&home, live::system_clock());
        let table = write_table(&home).to_str().unwrap().to_string();
        StoreHome {
            _temp: temp,
            home,
            table,
        }
    }

    /// Runs `slate args…` with the recorded process table.
    fn slate(&self, args: &[&str]) -> std::process::Output {
        let mut all = args.to_vec();
        all.extend(["--processes", &self.table]);
        slate(&self.home, &all).output().unwrap()
    }

    /// Runs `slate args…` and returns its stderr, asserting that it failed.
    fn refused(&self, args: &[&str]) -> String {
        let output = self.slate(args);
        let said = String::from_utf8_lossy(&output.stderr).into_owned();
        let shown: String = format!("{args:?}").chars().take(120).collect();
        assert!(!output.status.success(), "{shown} was accepted: {said}");
        said
    }

    fn intent(&self) -> serde_json::Value {
        let shown = self.slate(&["show", "7f3c", "--json"]);
        json(&String::from_utf8_lossy(&shown.stdout))["session"]["session_state"]["intent"].clone()
    }
}

/// Item 7: reasons, titles and ids have a length limit, the same on the command line and over
/// HTTP, with an error that says so; nothing is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn free_text_over_its_limit_is_refused_on_every_surface() {
    let long_reason = "r".repeat(slate::limits::REASON_MAX + 1);
    let long_id = "i".repeat(slate::limits::ID_MAX + 1);
    let long_title = "t".repeat(slate::limits::TITLE_MAX + 1);
    let place = StoreHome::new();
    let said = place.refused(&["park", "7f3c", "--reason", &long_reason]);
    assert!(said.contains("at most"), "{said}");
    assert_eq!(place.intent()["state"], "none");
    let who = format!("another_item:{long_id}");
    let said = place.refused(&["await", "7f3c", "--who", &who, "--reason", "later"]);
    assert!(said.contains("at most"), "{said}");
    let said = place.refused(&["item", "add", &long_id, "--title", "Fix it"]);
    assert!(said.contains("at most"), "{said}");
    let said = place.refused(&["item", "add", "fix-1", "--title", &long_title]);
    assert!(said.contains("at most"), "{said}");
    let said = place.refused(&["item", "add", "fix-1", "--title", "Fix", "--dep", &long_id]);
    assert!(said.contains("at most"), "{said}");
    let said = place.refused(&["claim", &long_id, "--session", "7f3c"]);
    assert!(said.contains("at most"), "{said}");
    // Within the limits, all is well.
    let reason = "r".repeat(slate::limits::REASON_MAX);
    assert!(place
        .slate(&["park", "7f3c", "--reason", &reason])
        .status
        .success());
    assert_eq!(place.intent()["reason"], reason.as_str());

    let (_temp, handle, thread) = started();
    let (status, body) = call(
        &handle,
        post_json(
            &format!("/sessions/{SESSION}/intent"),
            serde_json::json!({"state": "parked", "reason": long_reason}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_code(&body), "invalid");
    assert!(error_message(&body).contains("at most"), "{body}");
    let (status, body) = call(
        &handle,
        post_json(
            &format!("/sessions/{SESSION}/intent"),
            serde_json::json!({"state": "awaiting", "awaiting_who": who, "reason": "later"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    handle.shutdown();
    thread.join().unwrap();
}

/// Item 15: an item may not wait for itself, directly or round a cycle, and an id must be
/// something a person can read: not empty, not only spaces, no control characters.
#[test]
fn item_dependencies_refuse_cycles_and_unreadable_ids() {
    let place = StoreHome::new();
    fn add<'a>(id: &'a str, deps: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["item", "add", id, "--title", "Work"];
        for dep in deps {
            args.extend(["--dep", dep]);
        }
        args
    }
    let said = place.refused(&add("x", &["x"]));
    assert!(said.contains("itself"), "{said}");
    assert!(place.slate(&add("a", &["b"])).status.success());
    let said = place.refused(&add("b", &["a"]));
    assert!(said.contains("cycle"), "{said}");
    assert!(place.slate(&add("c", &["a"])).status.success());
    let said = place.refused(&add("b", &["c"]));
    assert!(said.contains("b → c → a → b"), "{said}");
    assert!(place.slate(&add("b", &[])).status.success());
    for bad in ["", "   ", "x\u{1b}]52;c;aGk=\u{7}", "tab\there"] {
        place.refused(&add(bad, &[]));
        place.refused(&add("fine", &[bad]));
    }
    let listed = place.slate(&["item", "list"]);
    let listed = String::from_utf8_lossy(&listed.stdout);
    let ids: Vec<&str> = listed
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert_eq!(ids, ["a", "b", "c"], "{listed}");
}

/// What hostile text carries: OSC 52 (write the clipboard), OSC 0 (set the window title),
/// CSI 2J (clear the screen) and a bare BEL.
const HOSTILE: &str = "\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}]0;pwned\u{7}\u{1b}[2J\u{7}";

/// The session of the escape test.
const ESCAPED: &str = "e5ca9ed0-0000-4000-8000-00000000e5ca";

/// True when `text` holds a byte a terminal would obey rather than show: a C0 control other than
/// a line end or a tab, DEL, or a C1 control.
fn has_controls(text: &str) -> bool {
    text.chars()
        .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{7f}')
}

/// Item 8: titles, prompts, folders, branches, item ids and reasons come from models, tools and
/// other programs; on a terminal their control characters are shown, never obeyed, by every
/// command that prints text. JSON stays JSON, with the characters escaped by serde.
#[cfg(unix)]
#[test]
fn control_characters_reach_no_terminal() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().canonicalize().unwrap();
    let folder = home.join(format!("work/acme{HOSTILE}"));
    std::fs::create_dir_all(&folder).unwrap();
    let projects = home.join(".claude/projects/-work-acme");
    std::fs::create_dir_all(&projects).unwrap();
    let at = live::system_clock();
    let line = |extra: serde_json::Value| {
        let mut value = serde_json::json!({
            "sessionId": ESCAPED, "cwd": folder.display().to_string(), "version": "2.1.332",
            "gitBranch": format!("main{HOSTILE}"), "uuid": "u", "timestamp": at.to_string(),
        });
        for (key, field) in extra.as_object().unwrap() {
            value[key] = field.clone();
        }
        value.to_string() + "\n"
    };
    let transcript = [
        line(serde_json::json!({"type": "custom-title", "customTitle": format!("title{HOSTILE}")})),
        line(serde_json::json!({"type": "user",
            "message": {"role": "user", "content": format!("prompt{HOSTILE}")}})),
        line(
            serde_json::json!({"type": "assistant", "message": {"role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": format!("Bash{HOSTILE}"),
                "input": {"command": format!("make{HOSTILE}")}}]}}),
        ),
    ]
    .concat();
    std::fs::write(projects.join(format!("{ESCAPED}.jsonl")), transcript).unwrap();
    let table = home.join("processes.json");
    std::fs::write(
        &table,
        serde_json::json!([{
            "pid": 4242, "ppid": 1, "name": "claude", "exe": null, "cmd": ["claude"],
            "cwd": folder.display().to_string(),
            "start_time": at.minus(Duration::from_secs(60)).to_string(), "start_ticks": null
        }])
        .to_string(),
    )
    .unwrap();
    let table = table.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--processes", table]);
        let output = slate(&home, &all).output().unwrap();
        assert!(output.status.success(), "{args:?}: {output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    // A reason from the command line, and an item id written to the store by another program.
    run(&["park", "e5ca", "--reason", &format!("reason{HOSTILE}")]);
    let store = slate::store::open(&home.join(".local/share/slate/slate.db")).unwrap();
    let item = format!("item{HOSTILE}");
    store
        .put_work_item(&slate::store::WorkItem {
            id: item.clone(),
            title: format!("work{HOSTILE}"),
            status: slate::model::ItemStatus::Ready,
            deps: vec![format!("dep{HOSTILE}")],
            created: at,
        })
        .unwrap();
    let key = slate::model::SessionKey::new(slate::model::AgentKind::CLAUDE_CODE, ESCAPED);
    store.claim(&item, &key, at).unwrap();
    drop(store);

    let mut printed = vec![
        ("sessions", run(&["sessions"])),
        ("sessions --all", run(&["sessions", "--all"])),
        ("show", run(&["show", "e5ca"])),
        ("doctor", run(&["doctor"])),
        ("item list", run(&["item", "list"])),
    ];
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let unused = free.local_addr().unwrap().to_string();
    drop(free);
    let watch = Running::spawn(slate(
        &home,
        &["watch", "--listen", &unused, "--processes", table],
    ));
    printed.push(("watch", watch.line()));
    drop(watch);
    for (command, text) in &printed {
        assert!(
            !has_controls(text),
            "{command} printed a control character: {text:?}"
        );
    }
    // Every field was printed, each made visible the same way.
    let all: String = printed.iter().map(|(_, text)| text.as_str()).collect();
    for field in ["title", "prompt", "acme", "main", "item", "reason", "work"] {
        let shown = format!("{field}^[]52;c;cHduZWQ=^G^[]0;pwned^G^[[2J^G");
        assert!(all.contains(&shown), "{field} not shown as {shown}: {all}");
    }

    // JSON keeps the text as it is, escaped by serde.
    let listed = run(&["sessions", "--json"]);
    assert!(listed.contains(r"\u001b]52;c;"), "{listed}");
    let listed = json(&listed);
    assert_eq!(listed["sessions"][0]["title"], format!("title{HOSTILE}"));
}

/// `slate run -- args…` with nothing on its input, its output and errors kept.
fn slate_run(args: &[&str]) -> std::process::Output {
    let temp = tempfile::tempdir().unwrap();
    let mut all = vec!["run", "--"];
    all.extend(args);
    let mut command = slate(temp.path(), &all);
    command.env("SLATE_LOG", "slate=debug");
    finished_within(command, Duration::from_secs(10)).expect("slate run ends within 10 s")
}

/// Item 16: a child killed by a signal makes `slate run` exit as a shell would, 128 + n.
#[cfg(unix)]
#[test]
fn slate_run_exits_128_plus_the_signal_that_killed_the_child() {
    for (signal, code) in [("KILL", 137), ("TERM", 143)] {
        let script = format!("kill -{signal} $$");
        let run = slate_run(&["sh", "-c", &script]);
        assert_eq!(run.status.code(), Some(code), "{signal}: {run:?}");
    }
    assert_eq!(slate_run(&["sh", "-c", "exit 3"]).status.code(), Some(3));
}

/// Item 16: the relay adds nothing to the output (no echoed line end when its input ends), ends
/// the child's input when its own ends, and stops as soon as the output is drained.
#[cfg(unix)]
#[test]
fn slate_run_adds_nothing_and_stops_when_the_output_is_drained() {
    let run = slate_run(&["printf", "a\\nb"]);
    assert!(run.status.success(), "{run:?}");
    assert_eq!(String::from_utf8_lossy(&run.stdout), "a\r\nb");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!stderr.contains("did not"), "slate run waited: {stderr}");

    // The end of the input reaches the child as the end of its input, even after a partial line.
    for (input, echoed) in [("hi\n", "hi\r\nhi\r\n"), ("hi", "hihi")] {
        let temp = tempfile::tempdir().unwrap();
        let mut child = slate(temp.path(), &["run", "--", "cat"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = send.send(child.wait_with_output());
        });
        let output = receive
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("cat never saw the end of {input:?}"))
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), echoed, "{input:?}");
    }
}

/// Item 16: a program that cannot start gets one short line, not the whole PATH.
#[cfg(unix)]
#[test]
fn slate_run_says_briefly_why_a_program_cannot_start() {
    for (program, expected) in [
        ("", "empty"),
        ("  ", "empty"),
        ("no-such-program-slate-test", "not found in PATH"),
    ] {
        let run = slate_run(&[program]);
        assert!(!run.status.success());
        let said = String::from_utf8_lossy(&run.stderr);
        let said = said
            .lines()
            .filter(|line| line.starts_with("slate:"))
            .collect::<Vec<_>>();
        assert_eq!(said.len(), 1, "{program:?}: {said:?}");
        assert!(said[0].contains(expected), "{program:?}: {said:?}");
        assert!(!said[0].contains("/usr/bin"), "{program:?}: {said:?}");
    }
}

/// Item 16: an error and its cause are printed once each, not the operating system's words
/// twice.
#[test]
fn an_error_names_its_cause_once() {
    let temp = tempfile::tempdir().unwrap();
    let missing = temp.path().join("missing.json");
    let output = slate(
        temp.path(),
        &["sessions", "--processes", missing.to_str().unwrap()],
    )
    .output()
    .unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(said.matches("(os error 2)").count(), 1, "{said}");
    assert!(said.contains(&missing.display().to_string()), "{said}");
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

/// `slate args…` over `home`, pointed at the server at `address` by `SLATE_API`.
fn slate_at(home: &Path, address: SocketAddr, args: &[&str]) -> std::process::Output {
    let mut command = slate(home, args);
    command.env("SLATE_API", format!("http://{address}"));
    finished_within(command, Duration::from_secs(20)).expect("the command ends within 20 s")
}

/// Item 9: a command reads from a running Slate only when that Slate holds this HOME's token.
/// The server refuses a read that carries another token (and still answers one that carries
/// none, as the page and curl send). A command whose token the server refuses, or that has no
/// token to prove itself with, reads for itself and says why on stderr; the JSON says which
/// engine answered.
#[cfg(unix)]
#[test]
fn a_command_reads_only_from_a_slate_that_holds_its_token() {
    let ours = tempfile::tempdir().unwrap();
    let server = serve(ours.path(), "127.0.0.1:0");
    let address = announced(&server);
    let token = token_of(ours.path());

    // The guard: no token reads, our token reads, another token is refused.
    let read = |authorization: &str| {
        raw(
            address,
            &format!(
                "GET /sessions/live HTTP/1.1\r\nHost: {address}\r\n{authorization}\
                 Connection: close\r\n\r\n"
            ),
        )
    };
    assert!(read("").starts_with("HTTP/1.1 200"), "{}", read(""));
    let right = read(&format!("Authorization: Bearer {token}\r\n"));
    assert!(right.starts_with("HTTP/1.1 200"), "{right}");
    let wrong = read(&format!("Authorization: Bearer {}\r\n", "f".repeat(64)));
    assert!(wrong.starts_with("HTTP/1.1 401"), "{wrong}");
    assert!(
        wrong.contains(r#"{"error":{"code":"unauthorized","#),
        "{wrong}"
    );

    // The server's own HOME reads from it, and says so.
    let listed = slate_at(ours.path(), address, &["sessions", "--json"]);
    assert!(listed.status.success(), "{listed:?}");
    let body = json(&String::from_utf8_lossy(&listed.stdout));
    assert_eq!(body["sessions"][0]["id"], SESSION, "{body}");
    assert_eq!(
        body["engine"],
        serde_json::json!({
            "kind": "server",
            "address": address.to_string(),
            "version": env!("CARGO_PKG_VERSION"),
        })
    );
    assert_eq!(String::from_utf8_lossy(&listed.stderr), "");
    let shown = slate_at(ours.path(), address, &["show", &SESSION[..8], "--json"]);
    let shown = json(&String::from_utf8_lossy(&shown.stdout));
    assert_eq!(shown["session"]["id"], SESSION, "{shown}");
    assert_eq!(shown["engine"]["kind"], "server", "{shown}");

    // Another HOME, with a token of its own or none at all, reads for itself.
    let other = tempfile::tempdir().unwrap();
    let bare = tempfile::tempdir().unwrap();
    give_token(other.path(), &"e".repeat(64));
    for (home, why) in [
        (other.path(), "its token differs"),
        (bare.path(), "this HOME has no token"),
    ] {
        let listed = slate_at(home, address, &["sessions", "--json"]);
        assert!(listed.status.success(), "{why}: {listed:?}");
        let body = json(&String::from_utf8_lossy(&listed.stdout));
        assert_eq!(body["sessions"], serde_json::json!([]), "{why}: {body}");
        assert_eq!(
            body["engine"],
            serde_json::json!({"kind": "standalone"}),
            "{why}: {body}"
        );
        let said = String::from_utf8_lossy(&listed.stderr);
        assert_eq!(
            said.trim_end(),
            format!(
                "slate: the Slate at {address} belongs to another user or HOME ({why}); \
                 reading for myself"
            ),
            "{why}"
        );
        assert_eq!(said.lines().count(), 1, "{why}: {said}");

        // `show` does not find the other HOME's session there.
        let shown = slate_at(home, address, &["show", SESSION, "--json"]);
        assert!(!shown.status.success(), "{why}: {shown:?}");
        assert!(
            String::from_utf8_lossy(&shown.stderr).contains("belongs to another user or HOME"),
            "{why}: {shown:?}"
        );

        // `watch` does not follow the other HOME's stream.
        let mut watch = slate(home, &["watch", "--json"]);
        watch.env("SLATE_API", format!("http://{address}"));
        let watch = Running::spawn(watch);
        let first = json(&watch.line());
        assert_eq!(first["type"], "snapshot", "{why}: {first}");
        assert_eq!(first["sessions"], serde_json::json!([]), "{why}: {first}");
        assert_eq!(first["engine"]["kind"], "standalone", "{why}: {first}");
    }
    let mut watch = slate(ours.path(), &["watch", "--json"]);
    watch.env("SLATE_API", format!("http://{address}"));
    let watch = Running::spawn(watch);
    let first = json(&watch.line());
    assert_eq!(first["sessions"][0]["id"], SESSION, "{first}");
    assert_eq!(first["engine"]["kind"], "server", "{first}");
}

/// A HOME holding the sample OpenCode database (six sessions, all closed without a process).
fn opencode_home() -> (tempfile::TempDir, std::path::PathBuf) {
    let temp = tempfile::tempdir().unwrap();
    let db = temp.path().join(".local/share/opencode/opencode.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/stores/opencode.db");
    std::fs::copy(sample, &db).unwrap();
    (temp, db)
}

/// `slate args…` over `home` with an engine of its own, whatever runs on the default port.
fn standalone(home: &Path, args: &[&str]) -> std::process::Output {
    let mut command = slate(home, args);
    command.env("SLATE_STANDALONE", "1");
    finished_within(command, Duration::from_secs(20)).expect("the command ends within 20 s")
}

/// Item 13: a store that cannot be read is said, with its path and why, and `slate doctor` is
/// named; the list never suggests the flag it was given. Once the lock is gone, the sessions
/// behind it show.
#[test]
fn a_locked_store_is_said_not_hidden() {
    let (temp, db) = opencode_home();
    let home = temp.path();
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer.execute_batch("BEGIN EXCLUSIVE").unwrap();

    let all = standalone(home, &["sessions", "--all"]);
    assert!(all.status.success(), "{all:?}");
    let said = String::from_utf8_lossy(&all.stdout);
    assert!(!said.contains("--all"), "{said}");
    assert!(said.contains(&db.display().to_string()), "{said}");
    assert!(said.contains("locked"), "{said}");
    assert!(said.contains("slate doctor"), "{said}");

    let live = standalone(home, &["sessions"]);
    let said = String::from_utf8_lossy(&live.stdout);
    assert!(said.contains("`slate sessions --all`"), "{said}");
    assert!(said.contains(&db.display().to_string()), "{said}");

    let listed = standalone(home, &["sessions", "--all", "--json"]);
    let body = json(&String::from_utf8_lossy(&listed.stdout));
    assert_eq!(body["sessions"], serde_json::json!([]), "{body}");
    assert_eq!(
        body["unread"][0]["place"],
        db.display().to_string(),
        "{body}"
    );
    assert_eq!(body["unread"][0]["kind"], "store_locked", "{body}");

    writer.execute_batch("COMMIT").unwrap();
    drop(writer);
    let all = standalone(home, &["sessions", "--all"]);
    let said = String::from_utf8_lossy(&all.stdout);
    assert!(!said.contains("could not"), "{said}");
    assert!(said.contains("6 sessions"), "{said}");
    let listed = standalone(home, &["sessions", "--all", "--json"]);
    let body = json(&String::from_utf8_lossy(&listed.stdout));
    assert_eq!(body["unread"], serde_json::json!([]), "{body}");
}

/// Logging writes no colour codes when stderr is not a terminal, and `slate item done` and
/// `slate release` show an id's control characters instead of echoing them.
#[test]
fn logs_and_echoed_ids_carry_no_control_characters() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    // Probing for a running Slate logs the client's requests at the debug level.
    let mut command = slate(home, &["sessions"]);
    command.env("SLATE_LOG", "debug");
    let sessions = finished_within(command, Duration::from_secs(20)).unwrap();
    let logged = String::from_utf8_lossy(&sessions.stderr);
    assert!(!logged.is_empty(), "nothing was logged");
    assert!(!has_controls(&logged), "{logged:?}");

    let item = format!("item{HOSTILE}");
    let store = slate::store::open(&home.join(".local/share/slate/slate.db")).unwrap();
    store
        .put_work_item(&slate::store::WorkItem {
            id: item.clone(),
            title: "work".to_string(),
            status: slate::model::ItemStatus::Ready,
            deps: Vec::new(),
            created: live::system_clock(),
        })
        .unwrap();
    drop(store);
    for args in [
        vec!["item", "done", item.as_str()],
        vec!["release", item.as_str()],
    ] {
        let output = standalone(home, &args);
        assert!(output.status.success(), "{args:?}: {output:?}");
        let said = String::from_utf8_lossy(&output.stdout);
        assert!(said.contains("item^[]52;"), "{args:?}: {said:?}");
        assert!(!has_controls(&said), "{args:?}: {said:?}");
    }
}
