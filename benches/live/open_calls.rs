//! Issue 36: what one session in an open call costs. (h) A one-shot `slate sessions --json` with 4
//! live private tmux servers, one of them holding a Codex stand-in's pane in an open tool call,
//! timed in pairs with Claude Code's own `claude agents --json` over the same HOME (medians of
//! the pairs). (i) `slate serve` watching one such session, then ten, each in a pane of its own:
//! the CPU of the server and the tmux clients it ran, and of the tmux server that answered.
//! `SLATE_BENCH_BIN` runs another build of `slate` (the one before a change).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::history_gen::*;
use super::terminals::{codex_stand_in, open_call, rollout, sensed_in, BenchTmux, Usage};
use super::Server;

/// The `slate` binary the bench runs: `SLATE_BENCH_BIN`, else this build's.
pub(super) fn slate_binary() -> PathBuf {
    std::env::var_os("SLATE_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_slate")))
}

/// Claude Code's CLI: `SLATE_BENCH_CLAUDE`, else the one `scripts/deps.sh` installs under
/// `target/agent-clis`, else `claude` on PATH.
fn claude_binary() -> Option<PathBuf> {
    let installed =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/agent-clis/node_modules/.bin/claude");
    std::env::var_os("SLATE_BENCH_CLAUDE")
        .map(PathBuf::from)
        .or_else(|| installed.exists().then_some(installed))
        .or_else(|| {
            Command::new("claude")
                .arg("--version")
                .output()
                .ok()
                .map(|_| PathBuf::from("claude"))
        })
}

/// A HOME under `temp` with `count` Codex stand-ins, each in a pane of its own window of the
/// private server `tmux` and in an open tool call; returns the HOME.
fn sessions_in(temp: &Path, tmux: &BenchTmux, count: usize) -> PathBuf {
    let home = temp.join("home");
    let day = home.join(".codex/sessions/2026/12/01");
    fs::create_dir_all(&day).unwrap();
    for index in 0..count {
        let (folder, command) = codex_stand_in(temp, index);
        tmux.open(index, &command);
        let id = format!("01a228e1-7d37-7ed1-9043-{index:012}");
        let path = day.join(format!("rollout-2026-12-01T00-00-00-{id}.jsonl"));
        fs::write(path, rollout(&id, &folder) + &open_call()).unwrap();
    }
    std::thread::sleep(Duration::from_secs(1));
    home
}

/// A private tmux server with `panes` idle shells: a server that holds none of the sessions.
fn idle_server(name: String, panes: usize) -> BenchTmux {
    let tmux = BenchTmux(name);
    tmux.run(&["new-session", "-d", "sleep", "100000"]);
    for _ in 1..panes {
        tmux.run(&["new-window", "-d", "sleep", "100000"]);
    }
    tmux
}

fn millis(time: Duration) -> f64 {
    time.as_secs_f64() * 1000.0
}

/// (h) One-shot `slate sessions --json` beside `claude agents --json`, with 4 live tmux servers.
pub(super) fn oneshot() {
    if Command::new("tmux").arg("-V").output().is_err() {
        println!("one-shot: tmux is not installed; skipped");
        return;
    }
    let pairs = env_number("SLATE_BENCH_PAIRS", 15.0) as usize;
    let temp = tempfile::tempdir().unwrap();
    let pid = std::process::id();
    let agent = BenchTmux(format!("slate-oneshot-{pid}"));
    let home = sessions_in(temp.path(), &agent, 1);
    let _others: Vec<BenchTmux> = (1..4)
        .map(|index| idle_server(format!("slate-oneshot-{pid}-{index}"), 4))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let slate = slate_binary();
    let claude = claude_binary();
    let run = |program: &Path, args: &[&str]| {
        let begun = Instant::now();
        let output = Command::new(program)
            .args(args)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", temp.path().join("config"))
            .env("XDG_DATA_HOME", temp.path().join("data"))
            .env("SLATE_STANDALONE", "1")
            .env_remove("CODEX_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("XDG_RUNTIME_DIR")
            .stderr(Stdio::null())
            .output()
            .unwrap();
        (begun.elapsed(), output)
    };
    // One of each first, unmeasured: the caches of both programs' files are warm for every pair.
    let (_, output) = run(&slate, &["sessions", "--json"]);
    let sensed = sensed_in(&output.stdout);
    if let Some(claude) = &claude {
        run(claude, &["agents", "--json"]);
    }
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    let mut ratios = Vec::new();
    for _ in 0..pairs {
        let (slate_took, _) = run(&slate, &["sessions", "--json"]);
        ours.push(slate_took);
        if let Some(claude) = &claude {
            let (claude_took, _) = run(claude, &["agents", "--json"]);
            theirs.push(claude_took);
            ratios.push(slate_took.as_secs_f64() / claude_took.as_secs_f64());
        }
    }
    let slate_median = median(&mut ours);
    println!(
        "one-shot, 4 live tmux servers (1 with the session's pane, 3 with 4 idle panes each): \
         `slate sessions --json` median {:.1} ms of {pairs} (fastest {:.1}, slowest {:.1}); \
         {sensed} session in a sensed pane",
        millis(slate_median),
        millis(ours[0]),
        millis(ours[ours.len() - 1]),
    );
    if claude.is_none() {
        println!(
            "one-shot: Claude Code's CLI was not found (SLATE_BENCH_CLAUDE); against the 710 ms \
             the issue measured for `claude agents --json`, the ratio is {:.4}",
            slate_median.as_secs_f64() / 0.710
        );
        return;
    }
    let claude_median = median(&mut theirs);
    ratios.sort_by(f64::total_cmp);
    println!(
        "one-shot: `claude agents --json` median {:.1} ms; slate ÷ claude, median of the pairs' \
         ratios {:.4} (target: at most 0.05)",
        millis(claude_median),
        ratios[ratios.len() / 2],
    );
}

/// (i) `slate serve` watching one session in an open call in tmux, then ten.
pub(super) fn open_calls() {
    if Command::new("tmux").arg("-V").output().is_err() {
        println!("open calls: tmux is not installed; skipped");
        return;
    }
    let seconds = env_number("SLATE_BENCH_IDLE_SECS", 60.0);
    for count in [1, 10] {
        let temp = tempfile::tempdir().unwrap();
        let tmux = BenchTmux(format!("slate-open-{}-{count}", std::process::id()));
        let home = sessions_in(temp.path(), &tmux, count);
        let tmux_server: u32 = tmux
            .run(&["display", "-p", "#{pid}"])
            .trim()
            .parse()
            .unwrap_or(0);
        let server = Server::start(&home, temp.path(), None);
        std::thread::sleep(Duration::from_secs(5));
        let Some(usage) = Usage::over(&server, tmux_server, seconds) else {
            println!("open calls: CPU time unavailable (needs Linux /proc)");
            return;
        };
        println!(
            "open calls, {count} session(s) in an open call, each in a tmux pane: {} (target: \
             Slate's side at most {}% of one core)",
            usage.describe(3),
            0.05 * count as f64
        );
        server.stop();
    }
}
