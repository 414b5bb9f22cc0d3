//! Transcript discovery and incremental reading (`sources::walk`, `sources::layouts`,
//! `sources::tail`), the roots and the one canonical folder, all in temp folders.

mod discovery; // the roots, the watcher's folders, each agent's transcripts, one changed path
mod folders; // canonical folders, compared by each platform's rules
mod reading; // reading only what was appended, and every damaged file

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use slate::agents::BUILT_IN;
use slate::model::Timestamp;
use slate::sources::roots::{resolve_roots, Env, Roots};
use slate::sources::tail::ReadStats;
use slate::sources::walk::{self, ReadState, ScanOptions, ScanResult};

const CLAUDE_ID: &str = "2b9e4f10-8c7d-4e6f-a5b4-c3d2e1f0a9b8";
const CODEX_ID: &str = "019ac3f2-7d41-7a90-b1c2-3d4e5f607182";

/// A Claude Code user line, shaped like the real ones (docs/formats.md §1.2).
fn claude_line(session: &str, n: usize) -> String {
    format!(
        r#"{{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/dev/acme-api","sessionId":"{session}","version":"2.1.332","type":"user","message":{{"role":"user","content":"prompt {n}"}},"uuid":"u{n}","timestamp":"2026-11-28T09:10:00.020Z"}}"#
    ) + "\n"
}

fn codex_line(n: usize) -> String {
    format!(
        r#"{{"timestamp":"2026-11-28T10:15:03.560Z","type":"event_msg","payload":{{"type":"user_message","message":"prompt {n}","images":[]}}}}"#
    ) + "\n"
}

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("create folder");
    }
    fs::write(path, text).expect("write file");
}

fn append(path: &Path, text: &str) {
    let mut file = OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open to append");
    file.write_all(text.as_bytes()).expect("append");
}

fn lines(text: impl Fn(usize) -> String, range: std::ops::Range<usize>) -> String {
    range.map(text).collect()
}

fn home_roots(home: &Path) -> Roots {
    resolve_roots(BUILT_IN, &Env::with_home(home))
}

/// The time now, as the engine would hand it to the walk.
fn now() -> Timestamp {
    slate::sources::tail::timestamp(SystemTime::now())
}

/// One walk of the built-in agents' roots, now.
fn scan(roots: &Roots, options: &ScanOptions, state: &mut ReadState) -> ScanResult {
    walk::scan(BUILT_IN, roots, options, state, now())
}

fn read_of<'a>(result: &'a ScanResult, path: &Path) -> &'a ReadStats {
    &result
        .reads
        .iter()
        .find(|read| read.path == path)
        .unwrap_or_else(|| panic!("{} was not read: {:?}", path.display(), result.reads))
        .stats
}

fn claude_main(home: &Path) -> PathBuf {
    home.join(".claude/projects/-home-dev-acme-api")
        .join(format!("{CLAUDE_ID}.jsonl"))
}

fn write_zst(path: &Path, text: &str) {
    let compressed = zstd::encode_all(text.as_bytes(), 3).expect("compress");
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("create folder");
    }
    fs::write(path, compressed).expect("write zst");
}
