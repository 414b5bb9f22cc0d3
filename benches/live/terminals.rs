//! The cost of sensing terminals in a private tmux server: 50 Codex stand-ins with and without an
//! open tool call (`sensing`), and 300 in one crowded server (`crowded`, issue 20). The stand-ins,
//! their rollouts and the tmux server are here; the server child and the CPU readings are the
//! parent's.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use slate::live;
use slate::model::Timestamp;

use super::history_gen::*;

use super::{process_cpu, Server, LIVE};

/// Project folder `index` under `base`, made, and the pane command of a stand-in for Codex in it:
/// a program named `codex` in the project's folder, showing the screen the real Codex 0.171.0
/// drew while a command it had run went on (`fixtures/screens/codex/0.171.0/working-sleep.txt`,
/// its status line "Working (4s • esc to interrupt)"), as a session in a long call shows.
pub(super) fn codex_stand_in(base: &Path, index: usize) -> (PathBuf, String) {
    let folder = base.join(format!("project-{index}"));
    fs::create_dir_all(&folder).unwrap();
    let folder = fs::canonicalize(&folder).unwrap();
    let screen = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/screens/codex/0.171.0/working-sleep.txt"
    );
    let command = format!(
        "cd '{}' && cat '{screen}' && exec -a codex sleep 100000",
        folder.display()
    );
    (folder, command)
}

/// What a running `slate serve` and the tmux server it reads used over a while.
pub(super) struct Usage {
    elapsed: f64,
    /// CPU seconds of `slate serve` itself, of the tmux clients it ran, and of the tmux server.
    own: f64,
    clients: f64,
    tmux: f64,
    wakeups: u64,
    /// The live list at the end.
    sessions: Vec<serde_json::Value>,
}

impl Usage {
    /// Measures `server` and the tmux server `tmux_server` over `seconds`; `None` without Linux's
    /// `/proc`.
    pub(super) fn over(server: &Server, tmux_server: u32, seconds: f64) -> Option<Usage> {
        let pid = server.child.id();
        let cpu = || {
            Some((
                process_cpu(pid, false)?,
                process_cpu(pid, true)?,
                process_cpu(tmux_server, false)?,
            ))
        };
        let before = cpu()?;
        let wakeups = server.get("/health")["wakeups"].as_u64().unwrap_or(0);
        let started = Instant::now();
        std::thread::sleep(Duration::from_secs_f64(seconds));
        let elapsed = started.elapsed().as_secs_f64();
        let after = cpu()?;
        let own = after.0.saturating_sub(before.0).as_secs_f64();
        let sessions = server.get("/sessions/live")["sessions"].clone();
        Some(Usage {
            elapsed,
            own,
            clients: after.1.saturating_sub(before.1).as_secs_f64() - own,
            tmux: after.2.saturating_sub(before.2).as_secs_f64(),
            wakeups: server.get("/health")["wakeups"].as_u64().unwrap_or(0) - wakeups,
            sessions: sessions.as_array().cloned().unwrap_or_default(),
        })
    }

    /// One line: each part's CPU seconds and share of one core (with `decimals` places), the
    /// wake-ups a minute, and how many sessions are in a sensed pane.
    pub(super) fn describe(&self, decimals: usize) -> String {
        let share = |used: f64| format!("{:.decimals$}%", used / self.elapsed * 100.0);
        let sensed = self
            .sessions
            .iter()
            .filter(|session| session["terminal"]["sensed"] == true)
            .count();
        format!(
            "slate serve over {:.0} s: {:.3} CPU s ({} of one core), the tmux clients it ran \
             {:.3} CPU s ({}), the tmux server {:.3} CPU s ({}), in all {} of one core; {:.1} \
             wake-ups/min; {sensed} of {} sessions in a sensed pane",
            self.elapsed,
            self.own,
            share(self.own),
            self.clients,
            share(self.clients),
            self.tmux,
            share(self.tmux),
            share(self.own + self.clients + self.tmux),
            self.wakeups as f64 * 60.0 / self.elapsed,
            self.sessions.len(),
        )
    }
}

/// The first lines of a Codex 0.171.0 rollout of one session in `folder`: a turn that finished.
pub(super) fn rollout(id: &str, folder: &Path) -> String {
    let at = live::system_clock();
    let folder = folder.display();
    [
        format!(
            r#"{{"timestamp":"{at}","type":"session_meta","payload":{{"id":"{id}","timestamp":"{at}","cwd":"{folder}","originator":"codex_cli_rs","cli_version":"0.171.0"}}}}"#
        ),
        prompt_line(at),
        format!(
            r#"{{"timestamp":"{at}","type":"event_msg","payload":{{"type":"task_complete","last_agent_message":"Done."}}}}"#
        ),
    ]
    .join("\n")
        + "\n"
}

fn prompt_line(at: Timestamp) -> String {
    format!(
        r#"{{"timestamp":"{at}","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"go on"}}]}}}}"#
    )
}

/// The lines Codex appends for a new turn that asks to run an escalated command and waits for
/// approval: a tool call left open.
pub(super) fn open_call() -> String {
    let at = live::system_clock();
    [
        prompt_line(at),
        format!(
            r#"{{"timestamp":"{at}","type":"response_item","payload":{{"type":"function_call","name":"exec_command","arguments":"{{\"cmd\": \"make\", \"sandbox_permissions\": \"require_escalated\"}}","call_id":"call_1"}}}}"#
        ),
    ]
    .join("\n")
        + "\n"
}

/// A private tmux server for the sensing bench, killed when dropped.
/// How many sessions `slate sessions --json` printed in `output` read as sensed.
pub(super) fn sensed_in(output: &[u8]) -> usize {
    let json: serde_json::Value = serde_json::from_slice(output).unwrap_or_default();
    json["sessions"]
        .as_array()
        .or(json.as_array())
        .map_or(0, |sessions| {
            sessions
                .iter()
                .filter(|session| session["terminal"]["sensed"] == true)
                .count()
        })
}

pub(super) struct BenchTmux(pub(super) String);

impl BenchTmux {
    pub(super) fn run(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .args(["-L", &self.0, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Starts the server with `command` in its first window, 160x45, detached.
    pub(super) fn start(&self, command: &str) {
        self.run(&[
            "new-session",
            "-d",
            "-x",
            "160",
            "-y",
            "45",
            "bash",
            "-c",
            command,
        ]);
    }

    /// Runs `command` in the server's first window when `index` is 0, else in a new one.
    pub(super) fn open(&self, index: usize, command: &str) {
        if index == 0 {
            self.start(command);
        } else {
            self.run(&["new-window", "-d", "bash", "-c", command]);
        }
    }
}

impl Drop for BenchTmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

/// (f) What sensing terminals costs: 50 Codex sessions in the panes of a private tmux server,
/// first with no tool call open, then with 10 of them in an open call.
pub(super) fn sensing() {
    if Command::new("tmux").arg("-V").output().is_err() {
        println!("sensing: tmux is not installed; skipped");
        return;
    }
    let seconds = env_number("SLATE_BENCH_IDLE_SECS", 60.0);
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    let tmux = BenchTmux(format!("slate-bench-{}", std::process::id()));
    let mut folders = Vec::new();
    for index in 0..LIVE {
        let (folder, command) = codex_stand_in(temp.path(), index);
        tmux.open(index, &command);
        folders.push(folder);
    }
    std::thread::sleep(Duration::from_secs(1));
    let day = home.join(".codex/sessions/2026/12/01");
    fs::create_dir_all(&day).unwrap();
    let id = |index: usize| format!("01a228e1-7d37-7ed1-9043-{index:012}");
    let path = |index: usize| day.join(format!("rollout-2026-12-01T00-00-00-{}.jsonl", id(index)));
    for (index, folder) in folders.iter().enumerate() {
        fs::write(path(index), rollout(&id(index), folder)).unwrap();
    }
    let tmux_server: u32 = tmux
        .run(&["display", "-p", "#{pid}"])
        .trim()
        .parse()
        .unwrap_or(0);
    let server = Server::start(&home, temp.path(), None);
    let measure = |label: &str| {
        std::thread::sleep(Duration::from_secs(3));
        let Some(usage) = Usage::over(&server, tmux_server, seconds) else {
            println!("sensing: CPU time unavailable (needs Linux /proc)");
            return;
        };
        let working = usage
            .sessions
            .iter()
            .filter(|session| session["status"] == "working")
            .count();
        println!("sensing, {label}: {}; {working} working", usage.describe(3));
    };
    measure("50 sessions in tmux panes, no call open");
    for index in 0..10 {
        let mut file = fs::OpenOptions::new()
            .append(true)
            .open(path(index))
            .unwrap();
        file.write_all(open_call().as_bytes()).unwrap();
    }
    measure("10 of them in an open tool call (panes read once a second)");
    server.stop();
}

/// (g) Sensing a crowded tmux server: `SLATE_BENCH_PANES` (300) Codex stand-ins, each in a pane
/// of its own and in an open tool call, read by a one-shot `slate sessions` and by `slate serve`.
pub(super) fn crowded() {
    if Command::new("tmux").arg("-V").output().is_err() {
        println!("crowded: tmux is not installed; skipped");
        return;
    }
    let panes = env_number("SLATE_BENCH_PANES", 300.0) as usize;
    let seconds = env_number("SLATE_BENCH_CROWDED_SECS", 20.0);
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    let tmux = BenchTmux(format!("slate-crowded-{}", std::process::id()));
    let mut folders = Vec::new();
    let mut windows: Vec<String> = Vec::new();
    for index in 0..panes {
        let (folder, command) = codex_stand_in(temp.path(), index);
        if index == 0 {
            tmux.start(&command);
        } else {
            windows.extend(["new-window", "-d", "bash", "-c"].map(String::from));
            windows.push(command);
            windows.push(";".to_string());
        }
        // Forty windows a call keep each call well under tmux's command length.
        if windows.len() >= 40 * 6 || (index + 1 == panes && !windows.is_empty()) {
            let args: Vec<&str> = windows.iter().map(String::as_str).collect();
            tmux.run(&args);
            windows.clear();
        }
        folders.push(folder);
    }
    std::thread::sleep(Duration::from_secs(2));
    let started = tmux
        .run(&["list-panes", "-a", "-F", "#{pane_id}"])
        .lines()
        .count();
    let day = home.join(".codex/sessions/2026/12/01");
    fs::create_dir_all(&day).unwrap();
    for (index, folder) in folders.iter().enumerate() {
        let id = format!("01a228e1-7d37-7ed1-9043-{index:012}");
        let path = day.join(format!("rollout-2026-12-01T00-00-00-{id}.jsonl"));
        fs::write(path, rollout(&id, folder) + &open_call()).unwrap();
    }
    let tmux_server: u32 = tmux
        .run(&["display", "-p", "#{pid}"])
        .trim()
        .parse()
        .unwrap_or(0);
    // The one-shot read: no server runs for this HOME, and the command decides on its own.
    let mut times = Vec::new();
    let mut listed = 0;
    for _ in 0..3 {
        let begun = Instant::now();
        let output = Command::new(super::open_calls::slate_binary())
            .args(["sessions", "--json"])
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", temp.path().join("config"))
            .env("XDG_DATA_HOME", temp.path().join("data"))
            .env("SLATE_STANDALONE", "1")
            .env_remove("CODEX_HOME")
            .stderr(Stdio::null())
            .output()
            .unwrap();
        times.push(begun.elapsed());
        listed = sensed_in(&output.stdout);
    }
    println!(
        "crowded: {started} panes on one tmux server; one-shot `slate sessions`: median {:.2} s \
         of 3 ({}), {listed} sessions in a sensed pane (target: under 2 s)",
        median(&mut times).as_secs_f64(),
        times
            .iter()
            .map(|time| format!("{:.2} s", time.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let server = Server::start(&home, temp.path(), None);
    std::thread::sleep(Duration::from_secs(5));
    let Some(usage) = Usage::over(&server, tmux_server, seconds) else {
        println!("crowded: CPU time unavailable (needs Linux /proc)");
        return;
    };
    println!(
        "crowded: {} (target: under 5% of one core)",
        usage.describe(2)
    );
    server.stop();
}
