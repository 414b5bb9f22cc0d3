//! Hostile files under a temporary HOME (issue 17): FIFOs, sockets and device links named as
//! agent files, SQLite stores whose queries never end, zstd bombs, times in the far future, and
//! the whole lot at once under a running `slate serve`. Each test bounds its wait, so a hang fails
//! the test instead of holding CI: a read that blocks is given a deadline on another thread.
//! FIFOs, sockets and device files are Unix's; the peak memory is read from Linux's `/proc`.

#![cfg(unix)]

mod files; // FIFOs, sockets, device links, zstd bombs, budgets
mod queries; // endless and oversized store queries
mod times; // far-future times
mod whole; // every hostile file at once under a refresh

use std::fs;
#[cfg(target_os = "linux")]
use std::io::Read;
use std::io::Write;
#[cfg(target_os = "linux")]
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

use rusqlite::Connection;
use slate::agents::BUILT_IN;
use slate::engine::{Engine, Options, ProcessSource};
use slate::model::{Problem, ProcessTable, Timestamp};
use slate::sources::roots::Env;
use slate::sources::tail::timestamp;
use slate::sources::walk::ScanOptions;
use slate::tracker::Policy;

use crate::engine::{copy_tree, fixtures};

const CLAUDE_ID: &str = "2b9e4f10-8c7d-4e6f-a5b4-c3d2e1f0a9b8";
const CODEX_ID: &str = "019ac3f2-7d41-7a90-b1c2-3d4e5f607182";

/// How long a read may take before it counts as a hang. Everything here finishes in well under a
/// second when it works; a hang would wait forever, so the margin is generous on purpose.
const HANG: Duration = Duration::from_secs(5);

fn now() -> Timestamp {
    timestamp(SystemTime::now())
}

/// Runs `work` on a thread and returns its answer, or calls `unblock` and fails when it does not
/// answer within `HANG`.
fn within<T: Send + 'static>(
    what: &str,
    work: impl FnOnce() -> T + Send + 'static,
    unblock: impl Fn(),
) -> T {
    within_limit(what, HANG, work, unblock)
}

/// `within`, with a limit of its own.
fn within_limit<T: Send + 'static>(
    what: &str,
    limit: Duration,
    work: impl FnOnce() -> T + Send + 'static,
    unblock: impl Fn(),
) -> T {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(work());
    });
    match receive.recv_timeout(limit) {
        Ok(answer) => answer,
        Err(_) => {
            unblock();
            panic!("{what} did not answer within {limit:?}");
        }
    }
}

/// Makes a FIFO at `path` (and its folder).
fn fifo(path: &Path) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = fs::remove_file(path);
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Opens each FIFO for writing once, without blocking: a reader stuck in `open()` is released, so
/// a failed test does not leave a thread blocked behind it.
fn release(fifos: &[PathBuf]) {
    use std::os::unix::fs::OpenOptionsExt;
    for _ in 0..20 {
        for path in fifos {
            let _ = fs::OpenOptions::new()
                .write(true)
                .custom_flags(nix::libc::O_NONBLOCK)
                .open(path);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn link(target: &str, path: &Path) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = fs::remove_file(path);
    std::os::unix::fs::symlink(target, path).unwrap();
}

fn engine(home: &Path, table: ProcessTable, scan: ScanOptions) -> Engine {
    Engine::new(Options {
        env: Env::with_home(home),
        policy: Policy::default(),
        scan,
        processes: ProcessSource::Recorded(table),
        registry: BUILT_IN,
        terminals: slate::terminals::BUILT_IN,
    })
}

/// Every problem the engine recorded, as `(kind, place, detail)` text.
fn problems_of(engine: &Engine) -> Vec<(String, String, String)> {
    engine
        .problems()
        .recent
        .iter()
        .map(|problem| {
            (
                problem.kind.to_string(),
                problem.place.clone(),
                problem.detail.clone(),
            )
        })
        .collect()
}

fn kinds(problems: &[Problem]) -> Vec<String> {
    problems
        .iter()
        .map(|problem| problem.kind.to_string())
        .collect()
}

/// The agents' sample homes, copied under `home` and dated now.
fn sample_homes(home: &Path) {
    let written = SystemTime::now();
    copy_tree(
        &fixtures().join("transcripts/gemini-cli/dot-gemini"),
        &home.join(".gemini"),
        written,
    );
    copy_tree(
        &fixtures().join("stores/dot-cursor"),
        &home.join(".cursor"),
        written,
    );
    let data = home.join(".local/share/opencode");
    copy_tree(
        &fixtures().join("stores/legacy-json-storage-pre-1.2/storage"),
        &data.join("storage"),
        written,
    );
}

/// An OpenCode database whose `session` is a view over a recursive query that never ends.
fn endless_opencode_db(path: &Path) {
    let connection = Connection::open(path).unwrap();
    connection
        .execute_batch(
            "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER,
                                   time_updated INTEGER, data TEXT);
             CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT,
                                time_created INTEGER, time_updated INTEGER, data TEXT);
             CREATE VIEW session AS
               WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)
               SELECT 'ses_' || i AS id, NULL AS parent_id, '/work' AS directory, 't' AS title,
                      '1' AS version, i AS time_created, i AS time_updated,
                      NULL AS time_compacting, NULL AS time_archived
               FROM n;",
        )
        .unwrap();
}

/// A cursor-agent chat store whose `meta` table is a view that never finds its row.
fn endless_cursor_store(path: &Path) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let connection = Connection::open(path).unwrap();
    connection
        .execute_batch(
            "CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB);
             CREATE VIEW meta AS
               WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)
               SELECT 'k' || i AS key, 'v' AS value FROM n;",
        )
        .unwrap();
}

/// One Codex prompt line, as the bombs repeat it.
const BOMB_LINE: &str = r#"{"timestamp":"2026-11-28T10:15:04.000Z","type":"event_msg","payload":{"type":"user_message","message":"again","images":[]}}"#;

/// A compressed rollout made of `frames` copies of one zstd frame holding `frame_bytes` of Codex
/// prompt lines (the first frame opens with the session's meta line): a few kilobytes on disk,
/// `frames × frame_bytes` once decompressed.
fn zstd_bomb(path: &Path, frame_bytes: usize, frames: usize) -> u64 {
    let meta = format!(
        r#"{{"timestamp":"2026-11-28T10:15:03.512Z","type":"session_meta","payload":{{"id":"{CODEX_ID}","timestamp":"2026-11-28T10:15:03.512Z","cwd":"/work/bomb","originator":"codex-tui","cli_version":"0.171.0","source":"cli"}}}}"#
    ) + "\n";
    let line = format!("{BOMB_LINE}\n");
    let lines = line.repeat(frame_bytes / line.len());
    let first = zstd::encode_all((meta + &lines).as_bytes(), 3).unwrap();
    let repeat = zstd::encode_all(lines.as_bytes(), 3).unwrap();
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut file = fs::File::create(path).unwrap();
    file.write_all(&first).unwrap();
    for _ in 1..frames {
        file.write_all(&repeat).unwrap();
    }
    file.sync_all().unwrap();
    fs::metadata(path).unwrap().len()
}

/// POSTs `/sessions/live/refresh` and returns the status line, failing when no answer comes
/// within `HANG`.
#[cfg(target_os = "linux")]
fn refresh(address: SocketAddr, token: &str) -> String {
    let mut stream = TcpStream::connect_timeout(&address, HANG).unwrap();
    stream.set_read_timeout(Some(HANG)).unwrap();
    write!(
        stream,
        "POST /sessions/live/refresh HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = Vec::new();
    let mut chunk = [0; 1024];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&chunk[..n]),
            Err(error) => {
                assert!(
                    !answer.is_empty(),
                    "no answer to the refresh within {HANG:?}: {error}"
                );
                break;
            }
        }
        if answer.windows(4).any(|window| window == b"\r\n\r\n") {
            break;
        }
    }
    String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}
