//! The generated history shared by the benchmarks: a HOME with many Claude Code and Codex
//! transcripts of realistic shapes, a dozen of them live (vouched by a recorded process table),
//! and small measuring helpers. Included by `history.rs` and `live.rs` with `#[path]`.

#![allow(dead_code)]

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use slate::model::{ProcessInfo, ProcessTable, Timestamp};

pub fn env_number(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

pub fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

pub fn show(duration: Duration) -> String {
    format!("{:.0} ms", duration.as_secs_f64() * 1000.0)
}

pub fn now() -> Timestamp {
    let since = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap();
    Timestamp::from_millis(since.as_millis() as i64)
}

pub fn reset_peak_memory() {
    // Writing 5 to clear_refs resets the peak resident set size (Linux 4.0+).
    let _ = fs::write("/proc/self/clear_refs", "5");
}

pub fn peak_memory() -> Option<String> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kilobytes: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(format!("{:.1} MB", kilobytes / 1024.0))
}

pub fn measure_tree(dir: &Path) -> (usize, u64) {
    let mut files = 0;
    let mut bytes = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            } else if entry.path().extension().is_some_and(|ext| ext == "jsonl") {
                files += 1;
                bytes += meta.len();
            }
        }
    }
    (files, bytes)
}

/// Twelve live sessions: six Claude Code and six Codex, each with a process started just before
/// its transcript. Their pids are made up; the recorded table vouches for them.
pub const LIVE_PER_AGENT: usize = 6;

pub fn live_table(live: &[(u32, String, &'static str)]) -> ProcessTable {
    let started = now().minus(Duration::from_secs(600));
    ProcessTable {
        processes: live
            .iter()
            .map(|(pid, folder, program)| ProcessInfo {
                pid: *pid,
                ppid: Some(1),
                name: program.to_string(),
                exe: None,
                cmd: vec![program.to_string()],
                cwd: Some(folder.clone()),
                start_time: started,
                start_ticks: None,
            })
            .collect(),
    }
}

/// Writes the history unless a complete one is already there. Returns the live processes.
pub fn generate(home: &Path, n_files: usize, total_bytes: u64) -> Vec<(u32, String, &'static str)> {
    let marker = home.join(".complete");
    let live: Vec<(u32, String, &'static str)> = (0..LIVE_PER_AGENT)
        .flat_map(|index| {
            [
                (
                    50_000 + index as u32,
                    format!("/bench/live-claude-{index}"),
                    "claude",
                ),
                (
                    60_000 + index as u32,
                    format!("/bench/live-codex-{index}"),
                    "codex",
                ),
            ]
        })
        .collect();
    if marker.exists() {
        refresh_live(home, &live);
        return live;
    }
    let _ = fs::remove_dir_all(home);
    println!(
        "generating {n_files} transcripts, {:.1} GB (once; kept for later runs)…",
        total_bytes as f64 / 1e9
    );
    let started = Instant::now();
    let per_file = total_bytes / n_files as u64;
    let n_codex = n_files / 10;
    let old = SystemTime::now() - Duration::from_secs(30 * 86_400);
    for index in 0..n_files {
        // Sizes vary: most transcripts are small, a few are huge, the mean is `per_file`.
        let size = match index % 10 {
            0 => per_file * 6,
            1..=3 => per_file,
            _ => per_file / 3,
        };
        let path = if index < n_codex {
            let day = 1 + index % 28;
            let dir = home.join(format!(".codex/sessions/2026/10/{day:02}"));
            fs::create_dir_all(&dir).unwrap();
            dir.join(format!(
                "rollout-2026-10-{day:02}T10-00-00-{}.jsonl",
                uuid(index)
            ))
        } else {
            let dir = home.join(format!(".claude/projects/-bench-project-{}", index % 400));
            fs::create_dir_all(&dir).unwrap();
            dir.join(format!("{}.jsonl", uuid(index)))
        };
        let folder = format!("/bench/project-{}", index % 400);
        if index < n_codex {
            write_codex(&path, &uuid(index), &folder, size);
        } else {
            write_claude(&path, &uuid(index), &folder, size);
        }
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old + Duration::from_secs(index as u64))
            .unwrap();
        if index % 2000 == 0 && index > 0 {
            println!("  {index} files, {:.0} s", started.elapsed().as_secs_f64());
        }
    }
    fs::create_dir_all(home.join(".claude/sessions")).unwrap();
    refresh_live(home, &live);
    File::create(&marker).unwrap();
    println!("generated in {:.0} s", started.elapsed().as_secs_f64());
    live
}

/// (Re)writes the live sessions' transcripts so they are fresh at every run.
pub fn refresh_live(home: &Path, live: &[(u32, String, &'static str)]) {
    for (index, (_, folder, program)) in live.iter().enumerate() {
        let id = uuid(1_000_000 + index);
        if *program == "claude" {
            let dir = home.join(format!(".claude/projects/{}", folder.replace('/', "-")));
            fs::create_dir_all(&dir).unwrap();
            write_claude(&dir.join(format!("{id}.jsonl")), &id, folder, 40_000);
        } else {
            let dir = home.join(".codex/sessions/2026/11/29");
            fs::create_dir_all(&dir).unwrap();
            let path = dir.join(format!("rollout-2026-11-29T10-00-00-{id}.jsonl"));
            write_codex(&path, &id, folder, 40_000);
        }
    }
}

pub fn uuid(index: usize) -> String {
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        index,
        index % 0xffff,
        index % 0xfff,
        (index / 7) % 0xfff,
        index * 7919
    )
}

pub fn stamp(offset_ms: i64) -> String {
    now()
        .minus(Duration::from_millis(offset_ms.max(0) as u64))
        .to_rfc3339()
}

pub fn write_claude(path: &Path, id: &str, folder: &str, size: u64) {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path).unwrap());
    let padding = "x".repeat(2000);
    let envelope = |kind: &str, rest: &str, at: &str| {
        format!(
            r#"{{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"{folder}","sessionId":"{id}","version":"2.1.332","gitBranch":"main","type":"{kind}",{rest},"uuid":"u","timestamp":"{at}"}}"#
        )
    };
    let mut written = 0u64;
    let mut turn = 0u64;
    writeln!(
        out,
        "{}",
        envelope(
            "user",
            r#""message":{"role":"user","content":"please fix the failing tests"}"#,
            &stamp(60_000)
        )
    )
    .unwrap();
    while written < size {
        turn += 1;
        let lines = [
            envelope(
                "assistant",
                &format!(r#""message":{{"model":"claude-opus-4","id":"m{turn}","type":"message","role":"assistant","content":[{{"type":"tool_use","id":"toolu_{turn}","name":"Bash","input":{{"command":"cargo test"}}}}]}}"#),
                &stamp(50_000),
            ),
            envelope(
                "user",
                &format!(r#""message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{turn}","content":"{padding}","is_error":false}}]}}"#),
                &stamp(49_000),
            ),
            r#"{"type":"file-history-snapshot","messageId":"m","snapshot":{},"isSnapshotUpdate":false}"#.to_string(),
        ];
        for line in lines {
            written += line.len() as u64 + 1;
            writeln!(out, "{line}").unwrap();
        }
    }
    writeln!(
        out,
        "{}",
        envelope("assistant", r#""message":{"model":"claude-opus-4","id":"end","type":"message","role":"assistant","content":[{"type":"text","text":"All tests pass."}]}"#, &stamp(2_000))
    )
    .unwrap();
    writeln!(
        out,
        "{}",
        envelope(
            "system",
            r#""subtype":"turn_duration","durationMs":58000"#,
            &stamp(1_000)
        )
    )
    .unwrap();
    out.flush().unwrap();
}

pub fn write_codex(path: &Path, id: &str, folder: &str, size: u64) {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path).unwrap());
    let instructions = "You are Codex. ".repeat(600);
    writeln!(
        out,
        r#"{{"timestamp":"{}","type":"session_meta","payload":{{"id":"{id}","timestamp":"{}","cwd":"{folder}","originator":"codex-tui","cli_version":"0.171.0","source":"cli","base_instructions":{{"text":"{instructions}"}}}}}}"#,
        stamp(60_000),
        stamp(60_000)
    )
    .unwrap();
    writeln!(
        out,
        r#"{{"timestamp":"{}","type":"event_msg","payload":{{"type":"task_started","turn_id":"t1"}}}}"#,
        stamp(59_000)
    )
    .unwrap();
    let padding = "y".repeat(2000);
    let mut written = 0u64;
    let mut call = 0u64;
    while written < size {
        call += 1;
        let lines = [
            format!(
                r#"{{"timestamp":"{}","type":"response_item","payload":{{"type":"function_call","name":"exec_command","arguments":"{{\"cmd\":\"ls\"}}","call_id":"c{call}"}}}}"#,
                stamp(50_000)
            ),
            format!(
                r#"{{"timestamp":"{}","type":"response_item","payload":{{"type":"function_call_output","call_id":"c{call}","output":"{padding}"}}}}"#,
                stamp(49_000)
            ),
        ];
        for line in lines {
            written += line.len() as u64 + 1;
            writeln!(out, "{line}").unwrap();
        }
    }
    writeln!(
        out,
        r#"{{"timestamp":"{}","type":"event_msg","payload":{{"type":"task_complete","turn_id":"t1"}}}}"#,
        stamp(1_000)
    )
    .unwrap();
    out.flush().unwrap();
}
