//! Start-up cost over a large history: generates a HOME with 20,000 transcripts and about 5 GB
//! of history, then measures `slate sessions` on it (the real binary, end to end) and one engine
//! refresh in-process with its peak memory, then the cost of a re-walk with nothing changed.
//! Prints figures; asserts nothing.
//!
//! Run with `cargo bench --bench history`. The generated history is kept in
//! `target/bench-history/` and reused; set `SLATE_BENCH_FILES` and `SLATE_BENCH_GB` for another
//! size, `SLATE_BENCH_RUNS` for the number of timed runs (default 7), and `SLATE_BENCH_SKIP` (comma-
//! separated: `binary` leaves out the end-to-end runs of the binary, `all` the in-process refresh
//! that reads every closed transcript).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use slate::engine::{Engine, Options, ProcessSource};
use slate::sources::roots::Env;

#[path = "history_gen.rs"]
mod history_gen;
use history_gen::*;

fn main() {
    let n_files = env_number("SLATE_BENCH_FILES", 20_000.0) as usize;
    let gigabytes = env_number("SLATE_BENCH_GB", 5.0);
    let runs = env_number("SLATE_BENCH_RUNS", 7.0) as usize;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join(format!("bench-history-{n_files}-{gigabytes}"));
    let home = root.join("home");
    let live_pids = generate(&home, n_files, (gigabytes * 1e9) as u64);
    let (files, bytes) = measure_tree(&home);
    println!(
        "history: {files} transcripts, {:.2} GB, in {}",
        bytes as f64 / 1e9,
        home.display()
    );

    // End to end: the real binary, as a person runs it. The live sessions are vouched for by a
    // recorded process table, so the run does not depend on what runs on this machine.
    let table_path = root.join("processes.json");
    fs::write(
        &table_path,
        serde_json::to_vec(&live_table(&live_pids).processes).unwrap(),
    )
    .unwrap();
    let binary = env!("CARGO_BIN_EXE_slate");
    let skip = std::env::var("SLATE_BENCH_SKIP").unwrap_or_default();
    for all in [false, true] {
        if !skip.split(',').any(|part| part == "binary") {
            time_binary(binary, &home, &table_path, runs, all);
        }
    }

    // In-process, for peak memory: reset the peak, run one refresh, read the peak back. Skipping
    // closed transcripts first, then reading them as `--all` does.
    for closed_detail in [false, true] {
        if closed_detail && skip.split(',').any(|part| part == "all") {
            continue;
        }
        reset_peak_memory();
        let started = Instant::now();
        let env = Env {
            home: Some(home.clone()),
            xdg_data_home: Some(home.join(".local/share")),
            xdg_config_home: Some(home.join(".config")),
            ..Env::default()
        };
        let mut options = Options::from_env(env);
        options.processes = ProcessSource::Recorded(live_table(&live_pids));
        options.scan.closed_detail = closed_detail;
        let mut engine = Engine::new(options);
        engine.refresh(now());
        let elapsed = started.elapsed();
        let sessions = engine.sessions();
        println!(
            "engine refresh (in-process, closed detail {closed_detail}): {}, {} sessions known, \
             {:?}, peak memory {}",
            show(elapsed),
            sessions.len(),
            engine.read_totals(),
            peak_memory().unwrap_or_else(|| "unknown (needs Linux /proc)".to_string())
        );
        if !closed_detail {
            // The live service's safety-net walk: everything known, nothing changed.
            let mut walks: Vec<std::time::Duration> = (0..runs)
                .map(|_| {
                    let started = Instant::now();
                    engine.scan_files(now());
                    started.elapsed()
                })
                .collect();
            walks.sort();
            println!(
                "re-walk with nothing changed (median of {runs}): {}",
                show(walks[walks.len() / 2])
            );
        }
    }
}

/// Times `slate sessions --json` (with `--all` when `all`: closed sessions' transcripts are then
/// read head and tail, as every start-up did before closed transcripts were skipped).
fn time_binary(binary: &str, home: &Path, table_path: &Path, runs: usize, all: bool) {
    let mut times = Vec::new();
    let mut listed = 0;
    for _ in 0..runs {
        let started = Instant::now();
        let mut command = Command::new(binary);
        command.args(["sessions", "--json"]);
        if all {
            command.arg("--all");
        }
        let output = command
            .arg("--processes")
            .arg(table_path)
            .env("HOME", home)
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .output()
            .expect("slate runs");
        times.push(started.elapsed());
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let body: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        listed = body["sessions"].as_array().map_or(0, Vec::len);
    }
    println!(
        "slate sessions{} (binary, {runs} runs): median {}, min {}, max {}; {listed} sessions listed",
        if all { " --all" } else { "" },
        show(median(&mut times)),
        show(*times.iter().min().unwrap()),
        show(*times.iter().max().unwrap()),
    );
}
