//! The push channel (`push`): the requests it builds for ntfy's JSON publish and for a webhook,
//! its URLs that never show their topic, and the live worker against a local HTTP server: one
//! push per flip, each channel with its own token and never the other's, the one token file of
//! before given to one channel, and a server that hangs or refuses costing the engine nothing.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use slate::config::push::TokenFile;
use slate::config::{Config, NtfyTopic, Push, PushUrl};
use slate::engine::{Options, ProcessSource};
use slate::live::{self, Handle, Service, Timing, Update};
use slate::model::{Status, Timestamp};
use slate::policy::notifications::{Click, NotificationPlan, BURST};
use slate::push::{requests, Setup};
use slate::settings::Settings;
use slate::sources::roots::Env;

use crate::api::finish_turn;
use crate::util::{claude_process_table, transcript_path, waiting, working_transcript};

mod tokens;

const TOPIC: &str = "slate-k3x9q7f2";
const TOKEN: &str = "tk_secretpushtoken0123456789";
/// The webhook's own secret, which only the webhook may receive.
const WEBHOOK_TOKEN: &str = "whsec_webhookonly9876543210";
/// The files each channel's token is in, as `push_to` names them.
const NTFY_FILE: &str = "push-token-ntfy";
const WEBHOOK_FILE: &str = "push-token-webhook";

/// `[push]` with these channels, each naming its own token file.
fn push_to(ntfy: Option<&str>, webhook: Option<&str>, commands: bool) -> Push {
    Push {
        ntfy: ntfy.map(|url| NtfyTopic::parse(url).unwrap()),
        ntfy_token_file: ntfy.map(|_| TokenFile::parse(NTFY_FILE).unwrap()),
        webhook: webhook.map(|url| PushUrl::parse(url).unwrap()),
        webhook_token_file: webhook.map(|_| TokenFile::parse(WEBHOOK_FILE).unwrap()),
        commands,
    }
}

fn plan_of(sessions: Vec<slate::model::Session>) -> NotificationPlan {
    NotificationPlan {
        title: String::new(),
        body: String::new(),
        click: Click::OpenWindow,
        offer: None,
        sessions,
    }
}

#[test]
fn ntfy_gets_its_json_publish_and_a_webhook_names_each_session_without_the_command() {
    let push = push_to(
        Some(&format!("https://ntfy.example.org/{TOPIC}")),
        Some("https://hooks.example.org/slate?team=7"),
        false,
    );
    let sent = requests(&push, &plan_of(vec![waiting("acme-api", "s1")]), "box");
    assert_eq!(sent.len(), 2);
    // ntfy's JSON publish: the server's root, the topic in the body, priority 3 (its default).
    assert_eq!(sent[0].channel, "ntfy");
    assert_eq!(sent[0].url, "https://ntfy.example.org/");
    assert_eq!(
        sent[0].body,
        json!({
            "topic": TOPIC,
            "title": "acme-api · Claude Code needs you",
            "message": "box · acme-api · Claude Code — Asks permission for Bash",
            "tags": ["bell"],
            "priority": 3,
        })
    );
    assert_eq!(sent[1].channel, "webhook");
    assert_eq!(sent[1].url, "https://hooks.example.org/slate?team=7");
    assert_eq!(sent[1].body["event"], "needs_you");
    assert_eq!(sent[1].body["machine"], "box");
    assert_eq!(
        sent[1].body["sessions"],
        json!([{
            "id": "s1",
            "machine": "box",
            "project": "acme-api",
            "agent": "claude-code",
            "agent_name": "Claude Code",
            "reason": "permission_prompt",
            "reason_text": "Asks permission for Bash",
        }])
    );
    let whole = serde_json::to_string(&sent.iter().map(|r| &r.body).collect::<Vec<_>>()).unwrap();
    assert!(
        !whole.contains("cargo test"),
        "no command unless asked for: {whole}"
    );
}

#[test]
fn with_commands_on_a_push_carries_the_reason_whole_and_a_summary_names_every_session() {
    let push = push_to(None, Some("http://127.0.0.1:9/hook"), true);
    let mut remote = waiting("web", "s2");
    remote.machine = Some(slate::model::Machine::new("devbox").unwrap());
    let sent = requests(
        &push,
        &plan_of(vec![waiting("acme-api", "s1"), remote]),
        "laptop",
    );
    assert_eq!(sent.len(), 1);
    let body = &sent[0].body;
    assert_eq!(body["title"], "2 sessions need you");
    assert_eq!(
        body["message"],
        "laptop · acme-api · Claude Code — Asks permission for Bash: cargo test\n\
         devbox · web · Claude Code — Asks permission for Bash: cargo test"
    );
    assert_eq!(body["sessions"][1]["machine"], "devbox");
    assert_eq!(
        body["sessions"][0]["reason_text"],
        "Asks permission for Bash: cargo test"
    );
}

#[test]
fn push_urls_never_show_their_topic_and_bad_ones_are_refused_without_being_repeated() {
    let config: Config = toml::from_str(&format!(
        "[push]\nntfy = \"https://ntfy.sh/{TOPIC}\"\nwebhook = \"https://hooks.example.org/{TOPIC}\"\n"
    ))
    .unwrap();
    assert!(config.push.is_on());
    assert!(!config.push.commands, "commands are off by default");
    let shown = format!(
        "{:?} {} {}",
        config.push,
        serde_json::to_string(&config.push).unwrap(),
        config.push.ntfy.as_ref().unwrap()
    );
    assert!(!shown.contains(TOPIC), "{shown}");
    assert!(shown.contains("https://ntfy.sh/…"), "{shown}");
    assert_eq!(config.push.ntfy.unwrap().expose_topic(), TOPIC);
    assert!(!Config::default().push.is_on(), "off unless a URL is set");

    for (text, says) in [
        ("ftp://ntfy.sh/topic", "https:// or http://"),
        ("https://user:hunter2@ntfy.sh/topic", "no user or password"),
        ("https:///topic", "names no host"),
        ("https://ntfy.sh/top ic", "a space or a control character"),
        (
            "https://ntfy.sh/topic\u{1b}[2J",
            "a space or a control character",
        ),
        ("https://ntfy.sh/topic#frag", "no fragment"),
    ] {
        let err = PushUrl::parse(text).unwrap_err();
        assert!(err.contains(says), "{text:?}: {err}");
        assert!(!err.contains("hunter2") && !err.contains("topic#"), "{err}");
    }
    let huge = format!("https://ntfy.sh/{}", "a".repeat(10_000));
    assert!(PushUrl::parse(&huge).unwrap_err().contains("longer than"));
    for topic in [
        "https://ntfy.sh/",
        "https://ntfy.sh/a/b",
        "https://ntfy.sh/t?x=1",
        "https://ntfy.sh/ü",
    ] {
        let err = NtfyTopic::parse(topic).unwrap_err();
        assert!(err.contains("one topic"), "{topic}: {err}");
    }
    assert!(NtfyTopic::parse(&format!("https://ntfy.sh/{}", "t".repeat(65))).is_err());
    let unknown = toml::from_str::<Config>("[push]\nntfy_url = \"https://ntfy.sh/x\"\n");
    assert!(unknown.unwrap_err().to_string().contains("ntfy_url"));
}

/// What the local server does with a connection.
#[derive(Clone, Copy)]
enum Behaviour {
    /// Reads the request and answers 200.
    Answer,
    /// Reads the request and never answers.
    Hang,
}

/// One request the local server read.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    headers: BTreeMap<String, String>,
    body: Value,
}

/// A local HTTP/1.1 server on 127.0.0.1 that records what it reads.
struct Server {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    fn start(behaviour: Behaviour) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let kept = seen.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming().flatten() {
                stream
                    .set_read_timeout(Some(Duration::from_secs(5)))
                    .unwrap();
                if let Some(request) = read_request(&stream) {
                    kept.lock().unwrap().push(request);
                }
                match behaviour {
                    Behaviour::Answer => {
                        let mut stream = stream;
                        let _ = stream.write_all(
                            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
                        );
                    }
                    Behaviour::Hang => held.push(stream),
                }
            }
        });
        Server { port, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn read_request(stream: &TcpStream) -> Option<Seen> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut words = line.split_whitespace();
    let (method, path) = (words.next()?.to_owned(), words.next()?.to_owned());
    let mut headers = BTreeMap::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
    }
    let length: usize = headers.get("content-length")?.parse().ok()?;
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Seen {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).ok()?,
    })
}

/// A port nothing listens on.
fn refused_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The live service over `home` with `push` in its config, and the push worker beside it; the
/// channels' tokens (`TOKEN` for ntfy, `WEBHOOK_TOKEN` for the webhook) in their files in `home`
/// with `token_mode`, or no files.
fn live_with_push(home: &Path, push: Push, token_mode: Option<u32>) -> (Handle, Timestamp) {
    let config = Config {
        push,
        ..Config::default()
    };
    live_with_config(home, config, token_mode)
}

/// `live_with_push` with the whole config.
fn live_with_config(home: &Path, config: Config, token_mode: Option<u32>) -> (Handle, Timestamp) {
    let now = live::system_clock();
    working_transcript(home, now);
    let env = Env {
        home: Some(home.to_path_buf()),
        ..Env::default()
    };
    let mut options = Options::from_env(env);
    options.processes =
        ProcessSource::Recorded(claude_process_table(now.minus(Duration::from_secs(60))));
    let (handle, _thread) = live::start(Service {
        options,
        timing: Timing::default(),
        store: None,
        clock: live::system_clock,
        settings: Settings::new(None, config),
        remotes: None,
    });
    if let Some(mode) = token_mode {
        for (file, token) in [(NTFY_FILE, TOKEN), (WEBHOOK_FILE, WEBHOOK_TOKEN)] {
            write_token(&home.join(file), token, mode);
        }
    }
    slate::push::start(
        &handle,
        Setup {
            token_dir: home.to_path_buf(),
            store_file: None,
            machine: "test-box".to_owned(),
            deadline: Duration::from_secs(1),
        },
    );
    (handle, now)
}

fn write_token(file: &Path, token: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(file, format!("{token}\n")).unwrap();
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Polls `check` every 50 ms for up to `within`.
fn eventually(within: Duration, mut check: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    check()
}

#[test]
fn a_flip_to_needs_you_is_pushed_once_to_ntfy_and_the_webhook_each_with_its_token() {
    let temp = tempfile::tempdir().unwrap();
    let server = Server::start(Behaviour::Answer);
    let push = push_to(
        Some(&format!("http://127.0.0.1:{}/{TOPIC}", server.port)),
        Some(&format!("http://127.0.0.1:{}/hook", server.port)),
        false,
    );
    let (handle, _) = live_with_push(temp.path(), push, Some(0o600));
    assert_eq!(handle.live_sessions()[0].status, Status::Working);
    finish_turn(&transcript_path(temp.path()));
    // The policy holds a change for its two-second burst window, then tells it.
    assert!(
        eventually(Duration::from_secs(10), || server.seen().len() >= 2),
        "two requests: {:?}",
        server.seen()
    );
    std::thread::sleep(Duration::from_millis(500));
    let seen = server.seen();
    assert_eq!(seen.len(), 2, "once per channel, once per flip: {seen:#?}");
    let ntfy = seen.iter().find(|s| s.path == "/").expect("ntfy's root");
    let hook = seen
        .iter()
        .find(|s| s.path == "/hook")
        .expect("the webhook");
    for (request, token) in [(ntfy, TOKEN), (hook, WEBHOOK_TOKEN)] {
        assert_eq!(request.method, "POST");
        assert_eq!(request.headers["content-type"], "application/json");
        assert_eq!(request.headers["authorization"], format!("Bearer {token}"));
    }
    assert_eq!(ntfy.body["topic"], TOPIC);
    assert_eq!(ntfy.body["title"], "acme · Claude Code needs you");
    assert_eq!(ntfy.body["priority"], 3);
    let message = ntfy.body["message"].as_str().unwrap();
    assert!(
        message.starts_with("test-box · acme · Claude Code — "),
        "{message}"
    );
    assert_eq!(hook.body["sessions"][0]["reason"], "turn_finished");
    assert_eq!(hook.body["machine"], "test-box");
    let report = handle.health().push.expect("counted while [push] is on");
    assert_eq!((report.sent, report.failed, report.dropped), (2, 0, 0));
    handle.shutdown();
}

#[test]
fn a_finished_turn_is_not_pushed_when_the_config_keeps_only_the_dialogs_and_it_still_counts() {
    use slate::policy::notifications::NotifyReason;
    let temp = tempfile::tempdir().unwrap();
    let server = Server::start(Behaviour::Answer);
    let mut config = Config {
        push: push_to(
            Some(&format!("http://127.0.0.1:{}/{TOPIC}", server.port)),
            Some(&format!("http://127.0.0.1:{}/hook", server.port)),
            false,
        ),
        ..Config::default()
    };
    config.notifications.reasons = vec![NotifyReason::Permission, NotifyReason::Question];
    let (handle, _) = live_with_config(temp.path(), config, Some(0o600));
    assert_eq!(handle.live_sessions()[0].status, Status::Working);
    finish_turn(&transcript_path(temp.path()));
    let counted = || slate::policy::needs_you_count(&handle.live_sessions()) == 1;
    assert!(eventually(Duration::from_secs(10), counted), "it counts");
    // Past the burst window in which the policy would have told it.
    std::thread::sleep(BURST + Duration::from_secs(1));
    assert_eq!(
        server.seen().len(),
        0,
        "nothing pushed: {:?}",
        server.seen()
    );
    handle.shutdown();
}

#[test]
fn a_server_that_hangs_or_refuses_costs_the_engine_nothing_and_no_failure_names_a_secret() {
    let temp = tempfile::tempdir().unwrap();
    let hanging = Server::start(Behaviour::Hang);
    let push = push_to(
        Some(&format!("http://127.0.0.1:{}/{TOPIC}", hanging.port)),
        Some(&format!("http://127.0.0.1:{}/{TOPIC}", refused_port())),
        false,
    );
    let (handle, _) = live_with_push(temp.path(), push, Some(0o600));
    let (_, mut updates) = handle.subscribe();
    finish_turn(&transcript_path(temp.path()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let update = runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(2), updates.recv()).await })
        .expect("the change reaches subscribers whatever the push server does")
        .unwrap();
    assert!(matches!(update, Update::Session { session } if session.status == Status::Waiting));
    // Both fail (one hangs past its deadline, one is refused), and are counted, once each.
    assert!(
        eventually(Duration::from_secs(10), || {
            handle
                .health()
                .push
                .is_some_and(|report| report.failed == 2)
        }),
        "{:?}",
        handle.health().push
    );
    assert_eq!(hanging.seen().len(), 1, "never retried");
    let report = handle.health().push.unwrap();
    assert_eq!(report.sent, 0);
    let told = serde_json::to_string(&handle.health()).unwrap();
    for secret in [TOKEN, WEBHOOK_TOKEN, TOPIC] {
        assert!(!told.contains(secret), "/health names {secret}: {told}");
    }
    let last = report.last_failure.unwrap();
    assert!(
        last.what.contains("no answer within") || last.what.contains("cannot"),
        "{last:?}"
    );
    handle.shutdown();
}

#[test]
fn a_push_token_others_can_read_is_refused_and_nothing_is_sent() {
    let temp = tempfile::tempdir().unwrap();
    let server = Server::start(Behaviour::Answer);
    let push = push_to(
        Some(&format!("http://127.0.0.1:{}/{TOPIC}", server.port)),
        None,
        false,
    );
    let (handle, _) = live_with_push(temp.path(), push, Some(0o644));
    finish_turn(&transcript_path(temp.path()));
    assert!(eventually(Duration::from_secs(10), || {
        handle
            .health()
            .push
            .is_some_and(|report| report.failed == 1)
    }));
    let failure = handle.health().push.unwrap().last_failure.unwrap();
    assert!(failure.what.contains("readable by others"), "{failure:?}");
    assert!(!failure.what.contains(TOKEN));
    assert!(
        server.seen().is_empty(),
        "nothing sent with a token others could read"
    );
    handle.shutdown();
}

#[test]
fn the_push_token_and_the_topic_never_reach_the_log_even_at_trace() {
    // `slate serve` with [push] on and every log line asked for, the HTTP client's by name too
    // (at its trace level it dumps the bytes it sends): a flip is pushed with the token, and not
    // a piece of the token or of the topic is written to the log.
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path();
    let home = root.join("home");
    let now = live::system_clock();
    let transcript = working_transcript(&home, now);
    let processes = root.join("processes.json");
    let table = claude_process_table(now.minus(Duration::from_secs(60)));
    std::fs::write(&processes, serde_json::to_string(&table.processes).unwrap()).unwrap();
    let server = Server::start(Behaviour::Answer);
    let config = root.join("config/slate");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[server]\nlisten = \"127.0.0.1:{}\"\n\n[push]\nntfy = \"http://127.0.0.1:{}/{TOPIC}\"\n",
            refused_port(),
            server.port
        ),
    )
    .unwrap();
    let token_file = config.join("push-token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let log = root.join("serve.log");
    let mut serve = crate::util::slate_in(root)
        .args(["serve", "--processes"])
        .arg(&processes)
        // Every target, and the HTTP client's by name.
        .env("SLATE_LOG", "trace,ureq=trace,ureq_proto=trace")
        .stdout(std::fs::File::create(root.join("serve.out")).unwrap())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    // The session is seen working first, so that the turn's end is a flip.
    std::thread::sleep(Duration::from_secs(2));
    finish_turn(&transcript);
    let pushed = eventually(Duration::from_secs(20), || !server.seen().is_empty());
    let _ = serve.kill();
    let _ = serve.wait();
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(pushed, "nothing pushed; the log:\n{written}");
    let seen = server.seen();
    assert_eq!(seen[0].headers["authorization"], format!("Bearer {TOKEN}"));
    assert!(written.lines().count() > 10, "the log is on: {written}");
    // Not a piece of either: a dump of the bytes sent splits them over its lines.
    for secret in [TOKEN, TOPIC] {
        let chars: Vec<char> = secret.chars().collect();
        for piece in chars
            .windows(8)
            .map(|piece| piece.iter().collect::<String>())
        {
            assert!(
                !written.contains(&piece),
                "the log names {piece} of {secret}:\n{written}"
            );
        }
    }
}
