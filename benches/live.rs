//! The live service's costs, measured the way a client sees them. Prints figures; asserts nothing.
//!
//! - latency from a transcript append to its server-sent event, p50/p99 over appends spread over
//!   50 live sessions (in-process server on port 0, read with a plain HTTP client);
//! - idle cost of a `slate serve` child with 50 live, idle sessions: CPU seconds and loop
//!   wake-ups over a minute;
//! - cold start of `slate serve` over the generated history of `history.rs`, to the first correct
//!   snapshot, with peak memory, and its idle cost over that history; then a restart with the
//!   store in place;
//! - peak memory of a `slate serve` child with 5 event-stream clients that never read, while 50
//!   parked sessions (each with a reason at the 2 kB limit) change a few thousand times, next to
//!   the same churn with no such client;
//! - the cost of sensing terminals: a `slate serve` child (live process scan) over 50 Codex
//!   sessions whose processes (stand-ins named `codex`) sit in 50 panes of a private tmux server,
//!   first with no tool call open (nothing is read), then with 10 of them in an open call (their
//!   panes are read once a second): CPU of the server and the tmux clients it ran, and of the tmux
//!   server that answered;
//! - sensing a crowded tmux server (issue 20): 300 Codex stand-ins in 300 panes of one private
//!   tmux server, every one in an open tool call (every pane read once a second): a one-shot
//!   `slate sessions` (median of 3), then a `slate serve` child's CPU over 20 s (its own, the tmux
//!   clients it ran and the tmux server), against the targets of under 2 s and under 5% of a core.
//!
//! - one session in an open call (issue 36): a one-shot `slate sessions --json` with 4 live tmux
//!   servers, timed in pairs with `claude agents --json` over the same HOME (medians of the
//!   pairs), and `slate serve` watching one such session in a tmux pane, then ten.
//!
//! Run with `cargo bench --bench live`. Knobs: `SLATE_BENCH_APPENDS` (1000),
//! `SLATE_BENCH_IDLE_SECS` (60), `SLATE_BENCH_FILES` (20000) and `SLATE_BENCH_GB` (5) for the
//! history, `SLATE_BENCH_CHANGES` (3000) for the stalled clients, `SLATE_BENCH_SKIP`
//! (comma-separated: latency, idle, start, stalled, sensing, crowded, oneshot, open-calls),
//! `SLATE_BENCH_PANES` (300) and `SLATE_BENCH_CROWDED_SECS` (20) for the crowded tmux server,
//! `SLATE_BENCH_PAIRS` (15) for the one-shot, `SLATE_BENCH_CLAUDE` (Claude Code's CLI) and
//! `SLATE_BENCH_BIN` (another build of `slate` to run, such as the one before a change).

use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use slate::api::{self, Security};
use slate::client::Client;
use slate::engine::{Options, ProcessSource};
use slate::live::{self, Service, Timing};
use slate::model::{
    AgentKind, Intent, IntentState, ProcessInfo, ProcessTable, SessionKey, Timestamp,
};
use slate::sources::roots::Env;

#[path = "history_gen.rs"]
mod history_gen;
use history_gen::*;

#[path = "live/terminals.rs"]
mod terminals;
use terminals::{crowded, sensing};

#[path = "live/open_calls.rs"]
mod open_calls;
use open_calls::{oneshot, open_calls};

const LIVE: usize = 50;

fn main() {
    let skip = std::env::var("SLATE_BENCH_SKIP").unwrap_or_default();
    println!(
        "machine: {} cores, Linux {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
    );
    if !skip.contains("latency") {
        latency();
    }
    if !skip.contains("idle") {
        idle();
    }
    if !skip.contains("start") {
        start();
    }
    if !skip.contains("stalled") {
        stalled();
    }
    if !skip.contains("sensing") {
        sensing();
    }
    if !skip.contains("crowded") {
        crowded();
    }
    if !skip.contains("oneshot") {
        oneshot();
    }
    if !skip.contains("open-calls") {
        open_calls();
    }
}

fn session_id(index: usize) -> String {
    format!("0000{index:04}-1111-4222-8333-444444444444")
}

fn folder(index: usize) -> String {
    format!("/bench/live-{index}")
}

fn claude_line(index: usize, kind: &str, body: &str, at: Timestamp) -> String {
    format!(
        r#"{{"type":"{kind}","cwd":"{}","sessionId":"{}","version":"2.1.332","uuid":"u","timestamp":"{at}",{body}}}"#,
        folder(index),
        session_id(index)
    )
}

fn transcript(home: &Path, index: usize) -> PathBuf {
    home.join(format!(
        ".claude/projects/-bench-live-{index}/{}.jsonl",
        session_id(index)
    ))
}

/// The lines that start a turn (a prompt and a tool call: Working) or finish it (the result, a
/// text and the turn's end: Needs you).
fn turn(index: usize, call: usize, finish: bool) -> String {
    let at = live::system_clock();
    let lines = if finish {
        vec![
            claude_line(
                index,
                "user",
                &format!(
                    r#""message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{call}","content":"ok","is_error":false}}]}}"#
                ),
                at,
            ),
            claude_line(
                index,
                "assistant",
                r#""message":{"role":"assistant","content":[{"type":"text","text":"Done."}]}"#,
                at,
            ),
            claude_line(
                index,
                "system",
                r#""subtype":"turn_duration","durationMs":900"#,
                at,
            ),
        ]
    } else {
        vec![
            claude_line(
                index,
                "user",
                r#""message":{"role":"user","content":"go on"}"#,
                at,
            ),
            claude_line(
                index,
                "assistant",
                &format!(
                    r#""message":{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_{call}","name":"Bash","input":{{"command":"make"}}}}]}}"#
                ),
                at,
            ),
        ]
    };
    lines.into_iter().map(|line| line + "\n").collect()
}

/// A HOME with `LIVE` Claude Code sessions, each finished (idle, Needs you) or working, and the
/// process table that vouches for them.
fn live_home(home: &Path, working: bool) -> ProcessTable {
    let started = live::system_clock().minus(Duration::from_secs(600));
    let mut processes = Vec::new();
    for index in 0..LIVE {
        let path = transcript(home, index);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut text = turn(index, 0, false);
        if !working {
            text.push_str(&turn(index, 0, true));
        }
        fs::write(&path, text).unwrap();
        processes.push(ProcessInfo {
            pid: 20_000 + index as u32,
            ppid: Some(1),
            name: "claude".to_string(),
            exe: None,
            cmd: vec!["claude".to_string()],
            cwd: Some(folder(index)),
            start_time: started,
            start_ticks: None,
        });
    }
    ProcessTable { processes }
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

/// (a) Append → event latency through the real HTTP stream.
fn latency() {
    let appends = env_number("SLATE_BENCH_APPENDS", 1000.0) as usize;
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let table = live_home(home, true);
    let mut options = Options::from_env(Env {
        home: Some(home.to_path_buf()),
        ..Env::default()
    });
    options.processes = ProcessSource::Recorded(table);
    let (handle, thread) = live::start(Service {
        options,
        timing: Timing::default(),
        store: None,
        clock: live::system_clock,
        settings: Default::default(),
        remotes: None,
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let address = listener.local_addr().unwrap();
    let security = Security {
        port: address.port(),
        token: "0".repeat(64),
        kind: slate::model::ServerKind::Service,
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = runtime.spawn(api::serve(listener, handle.clone(), security, async move {
        let _ = stopped.await;
    }));

    // The reader stamps each event as it arrives.
    let mut stream = Client::new(address, Some("0".repeat(64))).events().unwrap();
    let (send, events) = mpsc::channel::<(Instant, serde_json::Value)>();
    std::thread::spawn(move || {
        while let Ok(Some(event)) = stream.next_event() {
            let arrived = Instant::now();
            if event.event != "session" {
                continue;
            }
            let Ok(value) = serde_json::from_str(&event.data) else {
                continue;
            };
            if send.send((arrived, value)).is_err() {
                return;
            }
        }
    });

    // Rounds of ten appends to ten different sessions, written back to back, as busy agents do.
    let mut finished = [false; LIVE];
    let mut latencies = Vec::with_capacity(appends);
    let mut lost = 0;
    let mut call = 1;
    let mut next = 0;
    while latencies.len() + lost < appends {
        let round = 10.min(appends - latencies.len() - lost);
        let mut waiting: HashMap<String, (Instant, &'static str)> = HashMap::new();
        for _ in 0..round {
            let index = next % LIVE;
            next += 1;
            let finish = !finished[index];
            finished[index] = finish;
            let text = turn(index, call, finish);
            call += 1;
            let mut file = fs::OpenOptions::new()
                .append(true)
                .open(transcript(home, index))
                .unwrap();
            let written = Instant::now();
            file.write_all(text.as_bytes()).unwrap();
            let expected = if finish { "waiting" } else { "working" };
            waiting.insert(session_id(index), (written, expected));
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while !waiting.is_empty() {
            let Ok((arrived, session)) =
                events.recv_timeout(deadline.saturating_duration_since(Instant::now()))
            else {
                break;
            };
            let id = session["id"].as_str().unwrap_or_default();
            if let Some((written, expected)) = waiting.get(id) {
                if session["status"] == *expected {
                    latencies.push(arrived - *written);
                    waiting.remove(id);
                }
            }
        }
        lost += waiting.len();
    }
    latencies.sort();
    println!(
        "append → SSE event, {} appends over {LIVE} live sessions: p50 {}, p99 {}, max {}{}",
        latencies.len(),
        show(percentile(&latencies, 0.5)),
        show(percentile(&latencies, 0.99)),
        show(*latencies.last().unwrap()),
        if lost > 0 {
            format!(", {lost} events not seen within 5 s")
        } else {
            String::new()
        }
    );
    let _ = stop.send(());
    let _ = runtime.block_on(server);
    handle.shutdown();
    thread.join().unwrap();
}

/// What an idle server used over a while.
struct Idle {
    elapsed: Duration,
    used: Duration,
    wakeups: u64,
}

impl Idle {
    fn describe(&self) -> String {
        let seconds = self.elapsed.as_secs_f64();
        format!(
            "{seconds:.0} s: {:.3} CPU s ({:.4}% of one core), {:.1} wake-ups/min",
            self.used.as_secs_f64(),
            self.used.as_secs_f64() / seconds * 100.0,
            self.wakeups as f64 * 60.0 / seconds
        )
    }
}

/// A `slate serve` child over `home`, killed when dropped.
struct Server {
    child: Child,
    address: SocketAddr,
    /// Spawn to the `listening on` line, which comes after the first full read.
    ready_after: Duration,
    /// The HOME's token, which every read of sessions needs.
    token: String,
}

impl Server {
    fn start(home: &Path, data: &Path, table: Option<&Path>) -> Server {
        let mut command = Command::new(open_calls::slate_binary());
        command
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", data.join("config"))
            .env("XDG_DATA_HOME", data.join("data"))
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env_remove("GEMINI_CLI_HOME")
            .env_remove("OPENCODE_DB")
            .env_remove("CURSOR_CONFIG_DIR")
            // The API's socket goes under the temporary HOME, never into the real runtime folder.
            .env_remove("XDG_RUNTIME_DIR")
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(table) = table {
            command.arg("--processes").arg(table);
        }
        let started = Instant::now();
        let mut child = command.spawn().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        lines.read_line(&mut first).unwrap();
        let ready_after = started.elapsed();
        let address = first
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
            .parse()
            .unwrap();
        let token = fs::read_to_string(data.join("config/slate/token")).unwrap();
        Server {
            child,
            address,
            token: token.trim().to_string(),
            ready_after,
        }
    }

    fn get(&self, path: &str) -> serde_json::Value {
        Client::new(self.address, Some(self.token.clone()))
            .get_json(path)
            .unwrap()
    }

    /// User plus system CPU time so far, from `/proc/<pid>/stat`.
    fn cpu(&self) -> Option<Duration> {
        process_cpu(self.child.id(), false)
    }

    /// CPU time and loop wake-ups over `seconds` of doing nothing, after 2 s for start-up work
    /// to settle. `None` without Linux's `/proc`.
    fn idle_for(&self, seconds: f64) -> Option<Idle> {
        std::thread::sleep(Duration::from_secs(2));
        let cpu_before = self.cpu();
        let wakeups_before = self.get("/health")["wakeups"].as_u64().unwrap_or(0);
        let started = Instant::now();
        std::thread::sleep(Duration::from_secs_f64(seconds));
        let elapsed = started.elapsed();
        // The health request itself wakes nothing in the loop; its CPU is counted, and tiny.
        let wakeups = self.get("/health")["wakeups"].as_u64().unwrap_or(0) - wakeups_before;
        let used = self.cpu()?.saturating_sub(cpu_before?);
        Some(Idle {
            elapsed,
            used,
            wakeups,
        })
    }

    fn peak_memory(&self) -> Option<String> {
        let status = fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
        let kilobytes: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(format!("{:.1} MB", kilobytes / 1024.0))
    }

    fn stop(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// User plus system CPU time of process `pid` so far, from `/proc/<pid>/stat`, with that of the
/// children it has waited for when `children`.
fn process_cpu(pid: u32, children: bool) -> Option<Duration> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let field = |index: usize| fields.get(index)?.parse::<u64>().ok();
    let mut ticks = field(11)? + field(12)?;
    if children {
        ticks += field(13)? + field(14)?;
    }
    Some(Duration::from_millis(ticks * 1000 / clock_ticks()))
}

fn clock_ticks() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok()?.trim().parse().ok())
        .unwrap_or(100)
}

/// (b) CPU and wake-ups of an idle server with 50 live sessions.
fn idle() {
    let seconds = env_number("SLATE_BENCH_IDLE_SECS", 60.0);
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    let table = live_home(&home, false);
    let table_path = temp.path().join("processes.json");
    fs::write(&table_path, serde_json::to_vec(&table.processes).unwrap()).unwrap();
    for (label, table) in [
        ("recorded process table", Some(table_path.as_path())),
        ("live process scan", None),
    ] {
        let server = Server::start(&home, temp.path(), table);
        let live = server.get("/sessions/live")["sessions"]
            .as_array()
            .map_or(0, Vec::len);
        match server.idle_for(seconds) {
            Some(idle) => println!("idle, {label}, {live} live sessions, {}", idle.describe()),
            None => println!("idle: CPU time unavailable (needs Linux /proc)"),
        }
        server.stop();
    }
}

/// (c) and (d): `slate serve` over the generated history, cold and then with its store in place.
fn start() {
    let n_files = env_number("SLATE_BENCH_FILES", 20_000.0) as usize;
    let gigabytes = env_number("SLATE_BENCH_GB", 5.0);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join(format!("bench-history-{n_files}-{gigabytes}"));
    let home = root.join("home");
    let live_pids = generate(&home, n_files, (gigabytes * 1e9) as u64);
    let (files, bytes) = measure_tree(&home);
    let table_path = root.join("processes.json");
    fs::write(
        &table_path,
        serde_json::to_vec(&live_table(&live_pids).processes).unwrap(),
    )
    .unwrap();
    let state = tempfile::tempdir().unwrap();
    let idle_secs = env_number("SLATE_BENCH_IDLE_SECS", 60.0);
    for label in ["cold start (no store)", "restart (store warm)"] {
        let server = Server::start(&home, state.path(), Some(&table_path));
        let listed = server.get("/sessions/live")["sessions"]
            .as_array()
            .map_or(0, Vec::len);
        println!(
            "{label}, {files} transcripts, {:.2} GB: first snapshot after {}, {listed} live sessions (expected {}), peak memory {}",
            bytes as f64 / 1e9,
            show(server.ready_after),
            live_pids.len(),
            server.peak_memory().unwrap_or_else(|| "unknown".to_string())
        );
        if label.starts_with("cold") {
            // What the history costs while nothing happens: the process scans and the
            // safety-net walk over every transcript.
            if let Some(idle) = server.idle_for(idle_secs) {
                println!(
                    "idle over that history, {}, peak memory {}",
                    idle.describe(),
                    server
                        .peak_memory()
                        .unwrap_or_else(|| "unknown".to_string())
                );
            }
        }
        server.stop();
    }
}

/// Sends one request and reads the answer to its end.
fn exchange(address: SocketAddr, request: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

/// (e) Peak memory with event-stream clients that never read: each subscriber that stops
/// reading can hold back only a few hundred changes, so 5 of them cost little more than none.
/// The changes are new park reasons at the 2 kB limit, written to the store as `slate park`
/// writes them, 50 at a time, each round published by a refresh; a client that does read counts
/// the changes that were published.
fn stalled() {
    let changes = env_number("SLATE_BENCH_CHANGES", 3000.0) as usize;
    for clients in [0, 5] {
        let temp = tempfile::tempdir().unwrap();
        let home = temp.path().join("home");
        let table = live_home(&home, false);
        let table_path = temp.path().join("processes.json");
        fs::write(&table_path, serde_json::to_vec(&table.processes).unwrap()).unwrap();
        let server = Server::start(&home, temp.path(), Some(&table_path));
        let address = server.address;
        let token = fs::read_to_string(temp.path().join("config/slate/token")).unwrap();
        let token = token.trim().to_string();
        let store = slate::store::open(&temp.path().join("data/slate/slate.db")).unwrap();

        let mut reader = Client::new(address, Some(token.clone())).events().unwrap();
        let (seen_tx, seen) = mpsc::channel::<()>();
        std::thread::spawn(move || {
            while let Ok(Some(event)) = reader.next_event() {
                if event.event == "session" && seen_tx.send(()).is_err() {
                    return;
                }
            }
        });
        let _stalled: Vec<TcpStream> = (0..clients)
            .map(|_| {
                let mut stream = TcpStream::connect(address).unwrap();
                let request = format!(
                    "GET /sessions/live/stream HTTP/1.1\r\nHost: {address}\r\n\
                     Authorization: Bearer {token}\r\n\r\n"
                );
                stream.write_all(request.as_bytes()).unwrap();
                stream
            })
            .collect();
        let refresh = format!(
            "POST /sessions/live/refresh HTTP/1.1\r\nHost: {address}\r\n\
             Authorization: Bearer {token}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        let started = Instant::now();
        let mut published = 0;
        let mut round = 0;
        while published < changes && started.elapsed() < Duration::from_secs(300) {
            round += 1;
            // The longest reason allowed, different every round.
            let reason = format!("{round:06}{}", "r".repeat(slate::limits::REASON_MAX - 6));
            let intent = Intent {
                state: IntentState::Parked,
                reason: Some(reason),
                awaiting_who: None,
            };
            for index in 0..LIVE {
                let key = SessionKey::new(AgentKind::CLAUDE_CODE, session_id(index));
                store
                    .set_intent(&key, &intent, live::system_clock())
                    .unwrap();
            }
            exchange(address, &refresh);
            while seen.try_recv().is_ok() {
                published += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
        while seen.try_recv().is_ok() {
            published += 1;
        }
        println!(
            "{clients} event-stream clients that never read, {published} changes published \
             over {LIVE} parked sessions (2 kB reasons) in {}: peak memory {}",
            show(started.elapsed()),
            server
                .peak_memory()
                .unwrap_or_else(|| "unknown".to_string())
        );
        server.stop();
    }
}
