//! Remote machines, measured: 10 remotes with 50 live sessions each, followed over a real sshd
//! on 127.0.0.1 (`tests/sshd.rs`) with the system `ssh`, by an in-process live service with its
//! API. Prints figures; asserts nothing.
//!
//! Each remote is an account of the one sshd whose key forces its own HOME: 50 Claude Code
//! transcripts whose turn has finished (Needs you) and a recorded process table that vouches for
//! them, so the remote's `slate watch --json` (the `slate` under test) needs no live processes.
//!
//! - connect: from the config edit that adds the remotes to all their sessions listed here;
//! - idle cost on top of this machine's own: CPU time of this process (the live service, the
//!   links' threads, the API) and of its `ssh` children over `SLATE_BENCH_IDLE_SECS`, before the
//!   remotes were added and after their sessions arrived, with the loop's wake-ups;
//! - memory: this process's resident size before and after, and the `ssh` clients' own
//!   (proportional set size, so the libraries they share count once);
//! - remote change → local event: a prompt appended to a remote transcript, until this
//!   machine's event stream carries the changed session, p50 / p99 over `SLATE_BENCH_CHANGES`.
//!
//! Run with `cargo bench --bench remote`. Knobs: `SLATE_BENCH_REMOTES` (10),
//! `SLATE_BENCH_SESSIONS` (50), `SLATE_BENCH_IDLE_SECS` (60), `SLATE_BENCH_CHANGES` (200).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use slate::api::{self, Security};
use slate::client::{Client, ServerEvent};
use slate::config::Config;
use slate::engine::{Options, ProcessSource};
use slate::live::{self, Service, Timing};
use slate::model::{ProcessInfo, ProcessTable, Timestamp};
use slate::remote::LinkOptions;
use slate::settings::Settings;
use slate::sources::roots::Env;

#[path = "../tests/sshd.rs"]
mod sshd;

fn env_number(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn session_id(remote: usize, index: usize) -> String {
    format!("{remote:04}{index:04}-1111-4222-8333-444444444444")
}

fn folder(remote: usize, index: usize) -> String {
    format!("/bench/r{remote}-{index}")
}

fn transcript(home: &Path, remote: usize, index: usize) -> PathBuf {
    home.join(format!(
        ".claude/projects/-bench-r{remote}-{index}/{}.jsonl",
        session_id(remote, index)
    ))
}

fn claude_line(remote: usize, index: usize, kind: &str, body: &str, at: Timestamp) -> String {
    format!(
        r#"{{"type":"{kind}","cwd":"{}","sessionId":"{}","version":"2.1.332","uuid":"u","timestamp":"{at}",{body}}}"#,
        folder(remote, index),
        session_id(remote, index)
    ) + "\n"
}

/// A remote's HOME: `sessions` finished turns, the process table that vouches for them, and a
/// config that keeps its `slate` from looking for a server of its own.
fn remote_home(home: &Path, remote: usize, sessions: usize) {
    let at = live::system_clock();
    let started = at.minus(Duration::from_secs(600));
    let mut processes = Vec::new();
    for index in 0..sessions {
        let path = transcript(home, remote, index);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text = [
            claude_line(
                remote,
                index,
                "user",
                r#""message":{"role":"user","content":"tidy the module"}"#,
                at,
            ),
            claude_line(
                remote,
                index,
                "assistant",
                r#""message":{"role":"assistant","content":[{"type":"text","text":"Done."}]}"#,
                at,
            ),
            claude_line(
                remote,
                index,
                "system",
                r#""subtype":"turn_duration","durationMs":900"#,
                at,
            ),
        ]
        .concat();
        fs::write(&path, text).unwrap();
        processes.push(ProcessInfo {
            pid: 30_000 + index as u32,
            ppid: Some(1),
            name: "claude".to_string(),
            exe: None,
            cmd: vec!["claude".to_string()],
            cwd: Some(folder(remote, index)),
            start_time: started,
            start_ticks: None,
        });
    }
    fs::write(
        home.join("processes.json"),
        serde_json::to_vec(&ProcessTable { processes }.processes).unwrap(),
    )
    .unwrap();
    fs::create_dir_all(home.join(".config/slate")).unwrap();
    fs::write(
        home.join(".config/slate/config.toml"),
        "[server]\nlisten = \"127.0.0.1:0\"\n",
    )
    .unwrap();
}

/// CPU time (user + system) of one process, in clock ticks, from `/proc/<pid>/stat`.
fn cpu_ticks(pid: &str) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let user: u64 = fields.get(11)?.parse().ok()?;
    let system: u64 = fields.get(12)?.parse().ok()?;
    Some(user + system)
}

fn clock_ticks() -> u64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok()?.trim().parse().ok())
        .unwrap_or(100)
}

/// A `kB` figure of `/proc/<pid>/<file>`, such as `VmRSS` of `status` or `Pss` of
/// `smaps_rollup`, in megabytes.
fn megabytes(pid: &str, file: &str, field: &str) -> Option<f64> {
    let text = fs::read_to_string(format!("/proc/{pid}/{file}")).ok()?;
    let line = text
        .lines()
        .find(|line| line.starts_with(&format!("{field}:")))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// The `ssh` processes this one started.
fn ssh_children() -> Vec<String> {
    let me = std::process::id();
    sshd::descendants(me)
        .into_iter()
        .map(|pid| pid.to_string())
        .filter(|pid| {
            fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|comm| comm.trim() == "ssh")
        })
        .collect()
}

/// CPU ticks of this process and of its `ssh` children.
fn ticks_now() -> (u64, u64) {
    let own = cpu_ticks("self").unwrap_or(0);
    let ssh = ssh_children().iter().filter_map(|pid| cpu_ticks(pid)).sum();
    (own, ssh)
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

fn main() {
    let remotes = env_number("SLATE_BENCH_REMOTES", 10.0) as usize;
    let sessions = env_number("SLATE_BENCH_SESSIONS", 50.0) as usize;
    let idle_secs = env_number("SLATE_BENCH_IDLE_SECS", 60.0);
    let changes = env_number("SLATE_BENCH_CHANGES", 200.0) as usize;
    println!(
        "machine: {} cores, Linux {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
    );
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().canonicalize().unwrap();
    let slate = PathBuf::from(env!("CARGO_BIN_EXE_slate"));
    let mut accounts = Vec::new();
    for remote in 0..remotes {
        let home = root.join(format!("remote-{remote}"));
        remote_home(&home, remote, sessions);
        accounts.push(sshd::Account {
            host: format!("r{remote}"),
            home,
            path: vec![sshd::slate_folder(&slate)],
            forced: Some("slate --processes \"$HOME/processes.json\" watch --json".to_string()),
        });
    }
    let server = sshd::Sshd::start(&root.join("sshd"), &accounts);

    // This machine: an empty HOME, and a config file the live service follows.
    let local = root.join("local");
    fs::create_dir_all(&local).unwrap();
    let config_file = local.join("config.toml");
    fs::write(&config_file, "").unwrap();
    let mut options = Options::from_env(Env {
        home: Some(local.clone()),
        ..Env::default()
    });
    options.processes = ProcessSource::Recorded(ProcessTable::default());
    let (handle, thread) = live::start(Service {
        options,
        timing: Timing::default(),
        store: None,
        clock: live::system_clock,
        settings: Settings::new(Some(config_file.clone()), Config::default()),
        remotes: Some(LinkOptions::default()),
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
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = runtime.spawn(api::serve(
        listener,
        handle.clone(),
        Security {
            port: address.port(),
            token: "bench".repeat(8),
            kind: slate::model::ServerKind::Service,
        },
        async move {
            let _ = stopped.await;
        },
    ));
    let ticks = clock_ticks() as f64;
    let idle = |label: &str| {
        std::thread::sleep(Duration::from_secs(2));
        let wakeups = handle.health().wakeups;
        let (own, ssh) = ticks_now();
        std::thread::sleep(Duration::from_secs_f64(idle_secs));
        let (own_after, ssh_after) = ticks_now();
        let wakeups = handle.health().wakeups - wakeups;
        let own = (own_after - own) as f64 / ticks;
        let ssh = (ssh_after.saturating_sub(ssh)) as f64 / ticks;
        println!(
            "idle, {label}, {idle_secs} s: this process {own:.3} CPU s, ssh clients {ssh:.3} CPU s \
             ({:.3}% of one core in all), {:.1} wake-ups/min",
            (own + ssh) / idle_secs * 100.0,
            wakeups as f64 / idle_secs * 60.0
        );
        own + ssh
    };

    let resident_before = megabytes("self", "status", "VmRSS").unwrap_or(0.0);
    let cost_before = idle("no remotes");

    // The remotes go into the config file; the running service starts their links.
    let ssh_config = server.ssh_config().display().to_string();
    let mut text = String::new();
    for remote in 0..remotes {
        text.push_str(&format!(
            "[[remote]]\nname = \"r{remote}\"\ndestination = \"r{remote}\"\nssh_args = [\"-F\", \"{ssh_config}\"]\n\n"
        ));
    }
    let added = Instant::now();
    fs::write(&config_file, text).unwrap();
    let expected = remotes * sessions;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let listed = handle.live_sessions().len();
        if listed >= expected {
            break;
        }
        if Instant::now() > deadline {
            println!("connect: only {listed} of {expected} sessions after 120 s");
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    println!(
        "connect: {remotes} remotes, {expected} sessions listed {:.0} ms after the config edit",
        added.elapsed().as_secs_f64() * 1000.0
    );
    std::thread::sleep(Duration::from_secs(3));
    let resident_after = megabytes("self", "status", "VmRSS").unwrap_or(0.0);
    let clients = ssh_children();
    let ssh_pss: f64 = clients
        .iter()
        .filter_map(|pid| megabytes(pid, "smaps_rollup", "Pss"))
        .sum();
    let ssh_rss: f64 = clients
        .iter()
        .filter_map(|pid| megabytes(pid, "status", "VmRSS"))
        .sum();
    println!(
        "memory: this process {resident_before:.1} MB before, {resident_after:.1} MB with \
         {expected} remote sessions (+{:.1} MB); {} ssh clients: {ssh_pss:.1} MB proportional \
         ({ssh_rss:.1} MB resident, shared libraries counted in each)",
        resident_after - resident_before,
        clients.len()
    );
    let cost_after = idle(&format!("{remotes} remotes, {expected} sessions"));
    println!(
        "idle on top of this machine's own: {:.3}% of one core",
        (cost_after - cost_before) / idle_secs * 100.0
    );

    // Remote change → local event.
    let (sender, events) = mpsc::channel::<(Instant, ServerEvent)>();
    let mut stream = Client::new(address, Some("bench".repeat(8)))
        .events()
        .unwrap();
    std::thread::spawn(move || {
        while let Ok(Some(event)) = stream.next_event() {
            if sender.send((Instant::now(), event)).is_err() {
                return;
            }
        }
    });
    let mut latencies = Vec::new();
    let mut missed = 0;
    for change in 0..changes {
        let remote = change % remotes;
        let index = (change / remotes) % sessions;
        let marker = format!("bench change {change}");
        let line = claude_line(
            remote,
            index,
            "user",
            &format!(r#""message":{{"role":"user","content":"{marker}"}}"#),
            live::system_clock(),
        );
        let home = root.join(format!("remote-{remote}"));
        let started = Instant::now();
        fs::OpenOptions::new()
            .append(true)
            .open(transcript(&home, remote, index))
            .and_then(|mut file| file.write_all(line.as_bytes()))
            .unwrap();
        let deadline = started + Duration::from_secs(10);
        let arrived = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match events.recv_timeout(left) {
                Ok((at, event)) if event.event == "session" && event.data.contains(&marker) => {
                    break Some(at)
                }
                Ok(_) => {}
                Err(_) => break None,
            }
        };
        match arrived {
            Some(at) => latencies.push(at - started),
            None => missed += 1,
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    latencies.sort();
    if latencies.is_empty() {
        println!("remote change → local event: no event arrived ({missed} missed)");
    } else {
        println!(
            "remote change → local event, {} changes over {remotes} remotes: p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms ({missed} missed)",
            latencies.len(),
            percentile(&latencies, 0.5).as_secs_f64() * 1000.0,
            percentile(&latencies, 0.99).as_secs_f64() * 1000.0,
            latencies.last().unwrap().as_secs_f64() * 1000.0
        );
    }

    let _ = stop.send(());
    let _ = runtime.block_on(serving);
    handle.shutdown();
    let _ = thread.join();
    drop(server);
}
