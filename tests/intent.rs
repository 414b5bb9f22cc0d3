//! Intent, custody and the next actor through the real `slate` binary: a temp HOME with four
//! Claude Code transcripts and a recorded process table; one session is parked, one claims an
//! item, one awaits another item, and one has ended. `slate show <id> --json` must show the
//! right `next_actor` for each, and `slate sessions --reclaimable` the ended one.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, UNIX_EPOCH};

use serde_json::Value;
use slate::model::Timestamp;

const NOW: &str = "2026-11-29T12:00:10.000Z";

struct Home {
    _dir: tempfile::TempDir,
    root: PathBuf,
    processes: PathBuf,
}

/// One transcript: a prompt, the model's answer, and (unless `working`) the turn's end.
fn transcript(id: &str, folder: &Path, at: &str, working: bool) -> String {
    let cwd = folder.display().to_string();
    let base = serde_json::json!({"sessionId": id, "cwd": cwd, "isSidechain": false});
    let mut lines = Vec::new();
    let mut line = |extra: Value| {
        let mut value = base.clone();
        for (key, field) in extra.as_object().expect("an object") {
            value[key] = field.clone();
        }
        lines.push(value.to_string());
    };
    line(serde_json::json!({
        "type": "user", "uuid": format!("{id}-u"), "timestamp": format!("{at}0.000Z"),
        "message": {"role": "user", "content": format!("work on {id}")}
    }));
    if !working {
        line(serde_json::json!({
            "type": "assistant", "uuid": format!("{id}-a"), "timestamp": format!("{at}1.000Z"),
            "message": {"id": format!("msg-{id}"), "type": "message", "role": "assistant",
                "model": "claude-opus-5-5", "stop_reason": "end_turn",
                "content": [{"type": "text", "text": "Done."}]}
        }));
        line(serde_json::json!({
            "type": "system", "subtype": "turn_duration", "durationMs": 900,
            "uuid": format!("{id}-t"), "timestamp": format!("{at}2.000Z")
        }));
    }
    lines.join("\n") + "\n"
}

/// `parked`, `claimed` and `awaiting` are live (a process works in each folder); `ended` is an
/// hour old with no process.
fn home() -> Home {
    let dir = tempfile::tempdir().expect("a temp dir");
    let root = dir.path().canonicalize().expect("canonical temp dir");
    let mut processes = Vec::new();
    for (index, (id, at, live, working)) in [
        ("parked-1111", "2026-11-29T12:00:0", true, false),
        ("claimed-2222", "2026-11-29T12:00:0", true, true),
        ("awaiting-3333", "2026-11-29T12:00:0", true, false),
        ("ended-4444", "2026-11-29T11:00:0", false, false),
    ]
    .into_iter()
    .enumerate()
    {
        let folder = root.join("work").join(id);
        std::fs::create_dir_all(&folder).expect("project folder");
        let encoded = folder.display().to_string().replace(['/', '.'], "-");
        let projects = root.join("home/.claude/projects").join(encoded);
        std::fs::create_dir_all(&projects).expect("projects folder");
        let path = projects.join(format!("{id}.jsonl"));
        std::fs::write(&path, transcript(id, &folder, at, working)).expect("transcript written");
        // The file was last written when its last record was, not when this test ran.
        let written = Timestamp::parse_rfc3339(&format!("{at}2.000Z")).expect("a time");
        let mtime = UNIX_EPOCH + Duration::from_millis(written.millis() as u64);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|file| file.set_modified(mtime))
            .expect("mtime set");
        if live {
            processes.push(serde_json::json!({
                "pid": 4000 + index, "ppid": 1, "name": "claude",
                "exe": "/opt/claude/bin/claude.exe", "cmd": ["claude"],
                "cwd": folder.display().to_string(),
                "start_time": "2026-11-29T11:59:00.000Z"
            }));
        }
    }
    let table = root.join("processes.json");
    std::fs::write(&table, Value::Array(processes).to_string()).expect("process table");
    Home {
        _dir: dir,
        root,
        processes: table,
    }
}

fn slate(home: &Home, args: &[&str]) -> String {
    let output = run(home, args);
    assert!(
        output.status.success(),
        "slate {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8 output")
}

/// Runs `slate` over `home` at `NOW`, whatever the outcome.
fn run(home: &Home, args: &[&str]) -> std::process::Output {
    crate::util::slate_over(&home.root, &home.processes, NOW)
        .args(args)
        .output()
        .expect("slate runs")
}

fn state(home: &Home, id: &str) -> Value {
    let out = slate(home, &["show", id, "--json"]);
    let value: Value = serde_json::from_str(&out).expect("show prints JSON");
    value["session"]["session_state"].clone()
}

#[test]
fn parked_claimed_awaiting_and_ended_sessions_name_their_next_actor() {
    let home = home();
    // Before anything is set: between turns is not parked.
    let before = state(&home, "parked");
    assert_eq!(before["status"], "waiting", "{before}");
    assert_eq!(before["intent"]["state"], "none", "{before}");
    assert_eq!(before["next_actor"]["actor"], "operator", "{before}");

    slate(&home, &["park", "parked", "--reason", "after the release"]);
    slate(
        &home,
        &["item", "add", "schema", "--title", "Schema change"],
    );
    slate(
        &home,
        &[
            "item",
            "add",
            "api",
            "--title",
            "New endpoint",
            "--dep",
            "schema",
        ],
    );
    slate(&home, &["item", "add", "docs", "--title", "Docs"]);
    slate(&home, &["claim", "docs", "--session", "claimed"]);
    slate(
        &home,
        &[
            "await",
            "awaiting",
            "--who",
            "another_item:schema",
            "--reason",
            "needs the schema first",
        ],
    );

    let parked = state(&home, "parked");
    assert_eq!(
        parked["status"], "waiting",
        "a parked session keeps its state: {parked}"
    );
    assert_eq!(parked["reason"]["code"], "turn_finished", "{parked}");
    assert_eq!(parked["intent"]["state"], "parked", "{parked}");
    assert_eq!(parked["intent"]["reason"], "after the release", "{parked}");
    assert_eq!(
        parked["next_actor"]["actor"], "parent_or_steering",
        "{parked}"
    );
    // The park's reason is carried once, by the intent; the next actor points at it.
    assert_eq!(
        parked.to_string().matches("after the release").count(),
        1,
        "{parked}"
    );
    assert!(
        parked["next_actor"]["reason"]
            .as_str()
            .is_some_and(|reason| reason.contains("see intent")),
        "{parked}"
    );

    let claimed = state(&home, "claimed");
    assert_eq!(claimed["status"], "working", "{claimed}");
    assert_eq!(claimed["custody"]["holds_work_claim"], true, "{claimed}");
    assert_eq!(claimed["custody"]["holds"][0], "item:docs", "{claimed}");
    assert_eq!(claimed["custody"]["reclaimable"], false, "{claimed}");
    assert_eq!(claimed["next_actor"]["actor"], "this_session", "{claimed}");

    let awaiting = state(&home, "awaiting");
    assert_eq!(awaiting["intent"]["state"], "awaiting", "{awaiting}");
    assert_eq!(
        awaiting["intent"]["awaiting_who"], "another_item:schema",
        "{awaiting}"
    );
    assert_eq!(
        awaiting["next_actor"]["actor"], "another_item",
        "{awaiting}"
    );
    assert!(
        awaiting["next_actor"]["reason"]
            .as_str()
            .is_some_and(|reason| reason.contains("schema")),
        "the next actor names the item: {awaiting}"
    );

    let ended = state(&home, "ended");
    assert_eq!(ended["status"], "ended", "{ended}");
    assert_eq!(ended["next_actor"]["actor"], "nobody", "{ended}");
    assert_eq!(ended["custody"]["reclaimable"], true, "{ended}");

    // The table marks the parked session and keeps its reason; `show` prints intent and custody.
    let table = slate(&home, &["sessions"]);
    assert!(table.contains("parked · The turn finished"), "{table}");
    let page = slate(&home, &["show", "claimed"]);
    assert!(page.contains("holds item:docs; not reclaimable"), "{page}");
    let page = slate(&home, &["show", "parked"]);
    assert!(page.contains("parked: after the release"), "{page}");

    // The ended session is the one reclaimable candidate, under both spellings.
    for flag in ["--reclaimable", "--stale"] {
        let out = slate(&home, &["sessions", flag, "--json"]);
        let listed: Value = serde_json::from_str(&out).expect("sessions prints JSON");
        let ids: Vec<&str> = listed["sessions"]
            .as_array()
            .expect("a list")
            .iter()
            .filter_map(|session| session["id"].as_str())
            .collect();
        assert_eq!(ids, ["ended-4444"], "{flag}");
    }
    let table = slate(&home, &["sessions", "--reclaimable"]);
    assert!(table.contains("holds no work claim"), "{table}");

    // An hour after it ended, cleanup has taken it off the live list; it stays in the history.
    let live = slate(&home, &["sessions", "--json"]);
    assert!(!live.contains("ended-4444"), "{live}");
    assert!(live.contains("parked-1111"), "{live}");
    let all = slate(&home, &["sessions", "--all", "--json"]);
    assert!(all.contains("ended-4444"), "{all}");

    // The awaited item is done: the wait is over and the decision is the operator's again.
    slate(&home, &["item", "done", "schema"]);
    let awaiting = state(&home, "awaiting");
    assert_eq!(awaiting["next_actor"]["actor"], "operator", "{awaiting}");
    let items = slate(&home, &["item", "list"]);
    assert!(items.contains("next: this_session"), "{items}");
    assert!(items.contains("next: nobody"), "{items}");

    // Resuming clears the park; releasing the claim leaves the session with no work claim.
    slate(&home, &["resume", "parked"]);
    assert_eq!(state(&home, "parked")["intent"]["state"], "none");
    slate(&home, &["release", "docs"]);
    let claimed = state(&home, "claimed");
    assert_eq!(claimed["custody"]["holds_work_claim"], false, "{claimed}");
}

#[test]
fn await_rejects_an_unknown_actor() {
    let home = home();
    let output = Command::new(env!("CARGO_BIN_EXE_slate"))
        .args(["await", "awaiting", "--who", "the-moon", "--reason", "x"])
        .env_clear()
        .env("HOME", home.root.join("home"))
        .env("XDG_DATA_HOME", home.root.join("data"))
        .env("XDG_CONFIG_HOME", home.root.join("config"))
        .output()
        .expect("slate runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("another_item:<item>"), "{stderr}");
}

/// `slate await --who` and `POST /sessions/{id}/intent` read the awaited actor the same way:
/// each spelling below is taken by both or refused by both, and a refusal says the same thing on
/// the command line as in the API's 400 `{"error": {"code", "message"}}`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_and_the_api_accept_and_refuse_the_same_awaited_actors() {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use slate::api::{self, Security};
    use slate::engine::{Options, ProcessSource};
    use slate::live::{self, Service, Timing};
    use slate::model::Awaiting;
    use slate::sources::roots::Env;
    use tower::ServiceExt;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    const PORT: u16 = 7411;

    // The API: a live service with a store over one working session.
    let temp = tempfile::tempdir().expect("a temp dir");
    let now = live::system_clock();
    crate::util::working_transcript(temp.path(), now);
    let mut options = Options::from_env(Env {
        home: Some(temp.path().to_path_buf()),
        ..Env::default()
    });
    options.processes = ProcessSource::Recorded(crate::util::claude_process_table(
        now.minus(Duration::from_secs(60)),
    ));
    let service = Service {
        options,
        timing: Timing::default(),
        store: Some(slate::store::open(&temp.path().join("slate.db")).expect("a store")),
        clock: live::system_clock,
        settings: Default::default(),
        remotes: None,
    };
    let (handle, thread) = live::start(service);
    let router = api::router(
        handle.clone(),
        Security {
            port: PORT,
            token: TOKEN.to_string(),
            kind: slate::model::ServerKind::Service,
        },
    );
    let post = |who: &str| {
        let body = serde_json::json!({"state": "awaiting", "reason": "x", "awaiting_who": who});
        Request::post(format!("/sessions/{}/intent", crate::util::SESSION))
            .header("host", format!("127.0.0.1:{PORT}"))
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .expect("a request")
    };

    // The command line: the four-session HOME.
    let home = home();
    for (who, taken) in [
        ("operator", true),
        ("ci_or_deploy", true),
        ("another_item:schema", true),
        ("another_item:", false),
        ("another_item", false),
        ("ci", false),
        ("parent_or_steering", false),
        ("Operator", false),
        ("the-moon", false),
    ] {
        let response = router.clone().oneshot(post(who)).await.expect("an answer");
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("a body");
        let body: Value = serde_json::from_slice(&body).expect("a JSON answer");
        let cli = run(&home, &["await", "awaiting", "--who", who, "--reason", "x"]);
        let stderr = String::from_utf8_lossy(&cli.stderr);
        if taken {
            assert_eq!(status, StatusCode::OK, "{who}: {body}");
            let intent = &body["session"]["session_state"]["intent"];
            assert_eq!(intent["awaiting_who"], who, "{who}: {body}");
            assert!(cli.status.success(), "{who}: {stderr}");
            assert_eq!(state(&home, "awaiting")["intent"]["awaiting_who"], who);
        } else {
            let said = who
                .parse::<Awaiting>()
                .expect_err("refused by the parser")
                .to_string();
            assert!(said.contains("another_item:<item>"), "{said}");
            assert_eq!(status, StatusCode::BAD_REQUEST, "{who}: {body}");
            assert_eq!(body["error"]["code"], "bad_request", "{who}");
            assert_eq!(body["error"]["message"], said.as_str(), "{who}");
            assert!(!cli.status.success(), "{who} was taken by the command line");
            assert!(stderr.contains(&said), "{who}: {stderr}");
        }
    }
    handle.shutdown();
    thread.join().expect("the loop ends");
}

#[test]
fn a_session_from_an_older_server_without_session_state_still_reads() {
    use slate::model::{Actor, IntentState, Session, Status};

    let old = serde_json::json!({
        "agent": "claude-code",
        "id": "abc",
        "folder": "/work/acme",
        "project": "acme",
        "title": "Fix the build",
        "row_time": "2026-11-29T12:00:00.000Z",
        "pid": 4242,
        "status": "waiting"
    });
    let session = Session::from_wire(old).expect("an older session reads");
    assert_eq!(session.status, Status::Waiting);
    let state = &session.session_state;
    assert_eq!(state.status, Status::Waiting);
    assert_eq!(state.intent.state, IntentState::None);
    assert_eq!(state.next_actor.actor, Actor::Operator);
    assert!(!state.custody.reclaimable);
    assert!(!slate::tracker::notifications_muted(state));

    // A current session round-trips unchanged.
    let home = home();
    let out = slate(&home, &["show", "parked", "--json"]);
    let mut value: Value = serde_json::from_str(&out).expect("JSON");
    let current = value["session"].take();
    let session = Session::from_wire(current.clone()).expect("a current session reads");
    assert_eq!(session.session_state.reason.code.as_str(), "turn_finished");

    // The terminal as Slate sees it reads back; one a newer server describes in a way this build
    // does not know is left out, and the session still reads.
    let mut sensed = current.clone();
    sensed["terminal"] = serde_json::json!({"kind": "tmux", "pane": "%3", "sensed": true});
    let terminal = Session::from_wire(sensed)
        .unwrap()
        .terminal
        .expect("a terminal");
    assert_eq!(
        (terminal.kind, terminal.pane.as_deref(), terminal.sensed),
        (slate::model::TerminalKind::Tmux, Some("%3"), true)
    );
    let mut newer = current.clone();
    newer["terminal"] = serde_json::json!({"kind": "some-future-terminal", "pane": 3});
    assert_eq!(Session::from_wire(newer).unwrap().terminal, None);
    assert_eq!(Session::from_wire(current.clone()).unwrap().terminal, None);

    // Without a status there is nothing to show.
    assert!(Session::from_wire(serde_json::json!({"agent": "claude-code", "id": "x"})).is_err());
}

#[test]
fn a_change_from_the_command_line_asks_a_running_server_to_refresh() {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    let home = home();
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let address = listener.local_addr().expect("its address");
    let config = home.root.join("config/slate");
    std::fs::create_dir_all(&config).expect("config folder");
    std::fs::write(
        config.join("config.toml"),
        format!("[server]\nlisten = \"{address}\"\n"),
    )
    .expect("config written");
    std::fs::write(config.join("token"), "secret-token\n").expect("token written");

    // A stand-in server: it reads one request's head and answers 200.
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("a connection");
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout set");
        let mut request = Vec::new();
        let mut buffer = [0u8; 512];
        while !request.windows(4).any(|window| window == b"\r\n\r\n") {
            match stream.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(read) => request.extend_from_slice(&buffer[..read]),
            }
        }
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        String::from_utf8_lossy(&request).into_owned()
    });
    slate(&home, &["park", "parked", "--reason", "lunch"]);
    // If the command line never connected, this connection unblocks the stand-in, whose empty
    // request then fails the checks below rather than hanging the test.
    let _unblock = TcpStream::connect(address);
    let request = server.join().expect("the stand-in server ran");
    assert!(
        request.starts_with("POST /sessions/live/refresh HTTP/1.1\r\n"),
        "{request}"
    );
    assert!(
        // Header names are case-insensitive; the client may send them in lower case.
        request
            .to_ascii_lowercase()
            .contains("authorization: bearer secret-token\r\n"),
        "{request}"
    );
}

/// `slate mute` and `slate unmute`: the mute is kept in the store (every command is a new
/// process, as after a restart), the session says so and keeps its status and place, and an
/// agent muted in the config mutes each of its sessions.
#[test]
fn a_muted_session_is_kept_muted_and_keeps_its_state() {
    let home = home();
    let muted = |id: &str| {
        let out = slate(&home, &["show", id, "--json"]);
        let value: Value = serde_json::from_str(&out).expect("show prints JSON");
        value["session"].get("muted").cloned()
    };
    let before = state(&home, "parked-1111");
    assert_eq!(muted("parked-1111"), None, "absent while not muted");
    let said = slate(&home, &["mute", "parked-1111"]);
    assert!(said.contains("muted"), "{said}");
    assert_eq!(muted("parked-1111"), Some(Value::Bool(true)));
    assert_eq!(muted("awaiting-3333"), None, "only the one named");
    assert_eq!(state(&home, "parked-1111")["status"], before["status"]);
    let listed = slate(&home, &["sessions", "--json"]);
    let sessions: Value = serde_json::from_str(&listed).unwrap();
    let found = sessions["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|session| session["id"] == "parked-1111")
        .expect("a muted session is still listed")
        .clone();
    assert_eq!(found["muted"], true);
    // Twice changes nothing; unmute takes it out.
    slate(&home, &["mute", "parked-1111"]);
    slate(&home, &["unmute", "parked-1111"]);
    assert_eq!(muted("parked-1111"), None);
    // An unknown session is an error that changes nothing.
    let output = run(&home, &["mute", "nosuch-9999"]);
    assert!(!output.status.success());
    assert!(!String::from_utf8_lossy(&output.stderr).is_empty());

    // The config mutes Claude Code: every session of it.
    let config = home.root.join("config/slate/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        "[notifications]\nmuted_agents = [\"claude-code\"]\n",
    )
    .unwrap();
    assert_eq!(muted("parked-1111"), Some(Value::Bool(true)));
    assert_eq!(muted("awaiting-3333"), Some(Value::Bool(true)));
    // An agent Slate does not know is named in the error, with the ones it knows.
    std::fs::write(&config, "[notifications]\nmuted_agents = [\"claud\"]\n").unwrap();
    let output = run(&home, &["sessions", "--json"]);
    let complained = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        complained.contains("\"claud\" is not an agent Slate knows"),
        "{complained}"
    );
    assert!(complained.contains("claude-code"), "{complained}");
}
