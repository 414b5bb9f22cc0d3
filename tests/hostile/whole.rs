//! The whole lot at once: the engine answers a refresh over a hostile tree without ballooning.

use std::fs;
#[cfg(target_os = "linux")]
use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use slate::model::ProcessTable;

#[cfg(target_os = "linux")]
use crate::api::{slate, Running};
#[cfg(target_os = "linux")]
use crate::engine::processes;
use crate::engine::set_modified;

use super::{
    endless_cursor_store, endless_opencode_db, fifo, link, refresh, release, sample_homes,
    zstd_bomb, CLAUDE_ID, CODEX_ID,
};

/// The peak resident memory of the process `pid` so far, in bytes (`VmHWM`).
#[cfg(target_os = "linux")]
fn peak_memory(pid: u32) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .expect("VmHWM in /proc/<pid>/status");
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap();
    kib * 1024
}

/// A process table where every agent has a live process, started long ago, working in `folder`:
/// every transcript could be vouched for, so the walk reads everything it finds.
#[cfg(target_os = "linux")]
fn every_agent_alive(folder: &str) -> ProcessTable {
    let mut table = ProcessTable::default();
    for (n, cmd) in [
        &["claude"][..],
        &["codex"],
        &["gemini"],
        &["opencode"],
        &[
            "node",
            "/home/dev/.local/share/cursor-agent/versions/1/index.js",
        ],
    ]
    .into_iter()
    .enumerate()
    {
        let mut one = processes(cmd, folder, 1);
        one.processes[0].pid += n as u32;
        table.processes.extend(one.processes);
    }
    table
}

/// The fuzz-style test: `slate serve` over a HOME full of hostile files, some there at
/// start-up and some added while it runs, must start, answer a refresh within `HANG` and stay
/// under 100 MB. Both bounds say "it does not hang, it does not balloon", not how fast it is:
/// here the refresh answers in tens of milliseconds (a debug build), and the server peaks near
/// 55 MB, 16 MB of it idle and the rest the fresh bomb read to its 16 MiB budget; before the fix
/// the server never started, and the bombs alone would have taken gigabytes. Memory does not
/// depend on the machine's load, and 5 s is a hundred times the refresh on a loaded machine.
#[cfg(target_os = "linux")]
#[test]
fn the_engine_answers_a_refresh_over_a_hostile_tree_without_ballooning() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().to_path_buf();
    sample_homes(&home);
    let projects = home.join(".claude/projects/-work-bomb");
    fs::create_dir_all(&projects).unwrap();
    let table = home.join("processes.json");
    fs::write(
        &table,
        serde_json::to_vec(&every_agent_alive("/work/bomb").processes).unwrap(),
    )
    .unwrap();

    // Laid out before the server starts: what a start-up walk meets.
    let zero = "0a1b2c3d-0000-4000-8000-00000000000a";
    link("/dev/zero", &projects.join(format!("{zero}.jsonl")));
    link(
        "/dev/urandom",
        &projects.join("0a1b2c3d-0000-4000-8000-00000000000b.jsonl"),
    );
    link("/dev/zero", &home.join(".local/share/opencode/opencode.db"));
    endless_opencode_db(&home.join(".local/share/opencode/opencode-beta.db"));
    endless_cursor_store(
        &home.join(".cursor/chats/ce3fa0aa9e98006977055c78d826399a/0a1b2c3d/store.db"),
    );
    link(
        "loop-b.jsonl",
        &projects.join("0a1b2c3d-0000-4000-8000-00000000000c.jsonl"),
    );
    link(
        "0a1b2c3d-0000-4000-8000-00000000000c.jsonl",
        &projects.join("loop-b.jsonl"),
    );
    fs::create_dir_all(projects.join("0a1b2c3d-0000-4000-8000-00000000000d.jsonl")).unwrap();
    let mut huge = vec![b'x'; 12 << 20];
    huge.push(b'\n');
    fs::write(
        projects.join("0a1b2c3d-0000-4000-8000-00000000000e.jsonl"),
        huge,
    )
    .unwrap();
    let closed = home.join(".claude/projects/-work-closed");
    fs::create_dir_all(&closed).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&closed, fs::Permissions::from_mode(0o000)).unwrap();
    }
    fifo(&home.join(".gemini/tmp/acme-api/.project_root"));
    zstd_bomb(
        &home.join(format!(
            ".codex/sessions/2026/11/28/rollout-2026-11-28T10-15-03-{CODEX_ID}.jsonl.zst"
        )),
        4 << 20,
        128,
    );

    let table = table.to_str().unwrap();
    let server = Running::spawn(slate(
        &home,
        &["serve", "--listen", "127.0.0.1:0", "--processes", table],
    ));
    // The start-up walk reads everything above, the fresh bomb to its budget; 30 s bounds a hang
    // without racing a slow debug start on a busy machine.
    let first = server
        .lines
        .recv_timeout(Duration::from_secs(30))
        .expect("the server starts over the hostile tree (it hung)");
    let address: SocketAddr = first
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .parse()
        .unwrap();
    let token = fs::read_to_string(home.join(".config/slate/token")).unwrap();

    // Added while it runs: the watcher hints at each, as in the probe's repro.
    let fifo_path = projects.join(format!("{CLAUDE_ID}.jsonl"));
    fifo(&fifo_path);
    let socket = projects.join("0a1b2c3d-0000-4000-8000-00000000000f.jsonl");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    fifo(&home.join(".claude/sessions/4242.json"));
    // An archived rollout is old: it is read head and tail, up to the byte budget. It is made
    // outside the watched folders and moved in, so the watcher never sees it fresh.
    let made = home.join("archived.jsonl.zst");
    zstd_bomb(&made, 4 << 20, 128);
    set_modified(&made, SystemTime::now() - Duration::from_secs(3600));
    let archived = home.join(".codex/archived_sessions");
    fs::create_dir_all(&archived).unwrap();
    fs::rename(
        &made,
        archived.join("rollout-2026-10-02T09-00-00-019ac3f2-0000-7000-8000-00000000000a.jsonl.zst"),
    )
    .unwrap();
    // Give the watcher a moment to pass its hints to the engine before the refresh queues up.
    std::thread::sleep(Duration::from_millis(500));

    let answer = refresh(address, token.trim());
    let still = refresh(address, token.trim());
    let peak = peak_memory(server.child.id());
    release(&[fifo_path, home.join(".gemini/tmp/acme-api/.project_root")]);
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&closed, fs::Permissions::from_mode(0o755)).unwrap();
    }
    assert!(
        answer.contains(" 200 ") || answer.contains(" 204 "),
        "{answer}"
    );
    assert!(
        still.contains(" 200 ") || still.contains(" 204 "),
        "{still}"
    );
    assert!(peak < 100 << 20, "peak memory {} MB", peak >> 20);
}
