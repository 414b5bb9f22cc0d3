//! Files that are not what they are named: FIFOs, sockets and device links named as agent files
//! block nothing and are counted; a zstd bomb is read to the byte budget of a plain file, and a
//! transcript that grew past the budget goes on from its last budget.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use slate::agents::BUILT_IN;
use slate::lines::LineEvent;
use slate::model::{AgentKind, ProcessTable, SessionKey, Timestamp};
use slate::sources::roots::{resolve_roots, Env};
use slate::sources::tail::{FileTail, ReadPlan};
use slate::sources::walk::{self, ReadState, ScanOptions};

use crate::engine::set_modified;

use super::{
    engine, fifo, kinds, link, now, problems_of, release, sample_homes, within, zstd_bomb,
    BOMB_LINE, CLAUDE_ID, CODEX_ID,
};

#[test]
fn fifos_sockets_and_device_links_named_as_agent_files_block_nothing_and_are_counted() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    sample_homes(home);
    let cursor_chats = home.join(".cursor/chats/ce3fa0aa9e98006977055c78d826399a");
    let fifos: Vec<PathBuf> = [
        // A transcript, as in the probe's repro.
        format!(".claude/projects/-work-acme/{CLAUDE_ID}.jsonl"),
        // Claude Code's registry entry and a background job's state.
        ".claude/sessions/4242.json".to_string(),
        ".claude/jobs/j1/state.json".to_string(),
        // Codex's name index and a compressed rollout.
        ".codex/session_index.jsonl".to_string(),
        format!(".codex/sessions/2026/11/28/rollout-2026-11-28T10-15-03-{CODEX_ID}.jsonl.zst"),
        // Gemini CLI's project marker and registry (a chat beside them asks for both), a chat
        // whose short id sends the walk to its first line, and a pre-0.39 whole-file chat.
        ".gemini/tmp/acme-api/.project_root".to_string(),
        ".gemini/projects.json".to_string(),
        ".gemini/tmp/acme-api/chats/session-2026-11-28T11-00-0c1d2e3f.jsonl".to_string(),
        ".gemini/tmp/acme-api/chats/session-2026-11-28T11-05-1d2e3f40.json".to_string(),
        // OpenCode's database and a session file of its JSON tree.
        ".local/share/opencode/opencode.db".to_string(),
        ".local/share/opencode/storage/session/global/ses_fifo.json".to_string(),
    ]
    .iter()
    .map(|relative| home.join(relative))
    .chain([
        // cursor-agent: one chat's store, and another chat's `meta.json` sidecar.
        cursor_chats.join("3b1f6a2e-9c4d-4e7a-8b21-5f0c9d3e7a11/store.db"),
        cursor_chats.join("7c2e8b4f-1a5d-4f9b-9c32-6a1d0e4f8b22/meta.json"),
    ])
    .collect();
    for path in &fifos {
        fifo(path);
    }
    let projects = home.join(".claude/projects/-work-acme");
    let socket = projects.join("0a1b2c3d-0000-4000-8000-000000000001.jsonl");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let zero = projects.join("0a1b2c3d-0000-4000-8000-000000000002.jsonl");
    link("/dev/zero", &zero);
    let random = projects.join("0a1b2c3d-0000-4000-8000-000000000003.jsonl");
    link("/dev/urandom", &random);
    let special: Vec<PathBuf> = fifos
        .iter()
        .cloned()
        .chain([socket, zero, random])
        .collect();

    let reads = special.clone();
    let home_path = home.to_path_buf();
    let problems = within(
        "the engine reading FIFOs, a socket and device links",
        move || {
            let mut engine = engine(&home_path, ProcessTable::default(), ScanOptions::default());
            let at = now();
            engine.refresh(at);
            // The watcher's hint for each, as when the file appears under a running server.
            for path in &reads {
                engine.read_path(path, at);
            }
            problems_of(&engine)
        },
        || release(&fifos),
    );
    for path in &special {
        let place = path.display().to_string();
        assert!(
            problems
                .iter()
                .any(|(_, at, detail)| *at == place && detail.contains("not a regular file")),
            "{place} is a counted problem: {problems:#?}"
        );
    }
    let fifo_problem = problems
        .iter()
        .find(|(_, at, _)| at.ends_with(&format!("{CLAUDE_ID}.jsonl")))
        .unwrap();
    assert_eq!(fifo_problem.0, "unreadable");
    assert_eq!(fifo_problem.2, "not a regular file but a fifo");
}

/// Walks the Codex root under `home` once, on another thread, within `HANG`.
fn walk_within(what: &str, home: &Path, options: &ScanOptions) -> walk::ScanResult {
    let roots = resolve_roots(BUILT_IN, &Env::with_home(home));
    let options = options.clone();
    within(
        what,
        move || walk::scan(BUILT_IN, &roots, &options, &mut ReadState::new(), now()),
        || {},
    )
}

fn observations(result: &walk::ScanResult) -> u64 {
    let count: usize = result
        .batches
        .iter()
        .map(|batch| batch.observations.len())
        .sum();
    count as u64
}

#[test]
fn a_zstd_bomb_is_read_to_the_byte_budget_of_a_plain_file() {
    let budget: u64 = 1 << 20;
    let options = ScanOptions {
        whole_read_limit: budget,
        // A live Codex process started long ago could vouch for the rollout, so it is read: the
        // probe's condition.
        process_since: Some([(AgentKind::CODEX, Timestamp::from_millis(0))].into()),
        ..ScanOptions::default()
    };
    let line = BOMB_LINE.len() as u64 + 1;
    let mut costs = Vec::new();
    // Bombs of different ratios cost the same: the budget, counted in decompressed bytes.
    for (frame_bytes, frames) in [(1 << 20, 8), (4 << 20, 16)] {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join(format!(
            ".codex/sessions/2026/11/28/rollout-2026-11-28T10-15-03-{CODEX_ID}.jsonl.zst"
        ));
        let size = zstd_bomb(&path, frame_bytes, frames);
        assert!(size < 64 * 1024, "the bomb is small on disk: {size} bytes");

        // Fresh: read as a plain file of that size would be, up to the budget, and reported.
        let result = walk_within("a fresh zstd bomb", temp.path(), &options);
        let read = &result.reads[0];
        assert!(read.stats.cut && !read.stats.head_tail, "{:?}", read.stats);
        assert!(read.stats.bytes_read <= budget, "{:?}", read.stats);
        assert_eq!(
            kinds(&result.problems),
            ["huge_file"],
            "{:?}",
            result.problems
        );
        assert!(
            observations(&result) <= budget / line + 2,
            "{}",
            observations(&result)
        );
        costs.push(read.stats.bytes_read);

        // Quiet and asked for its details: the head, and the tail of what fits the budget.
        set_modified(&path, SystemTime::now() - Duration::from_secs(3600));
        let quiet = ScanOptions {
            closed_detail: true,
            ..options.clone()
        };
        let result = walk_within("a quiet zstd bomb", temp.path(), &quiet);
        let read = &result.reads[0];
        assert!(read.stats.head_tail && read.stats.cut, "{:?}", read.stats);
        assert!(read.stats.bytes_read <= budget, "{:?}", read.stats);
        let kept = (quiet.head_bytes + quiet.tail_bytes) / line + 2;
        assert!(observations(&result) <= kept, "{}", observations(&result));
        assert_eq!(
            result.batches[0].key,
            SessionKey::new(AgentKind::CODEX, CODEX_ID)
        );
    }
    assert_eq!(costs[0], costs[1]);
}

#[test]
fn a_transcript_that_grew_past_the_budget_goes_on_from_its_last_budget() {
    // A plain transcript that grew by more than one read may take since its last read (a
    // `truncate -s 10G`, or a burst) is read from its last budget's worth, at a line start.
    let temp = tempfile::tempdir().unwrap();
    let path = temp.path().join("t.jsonl");
    fs::write(&path, "{\"n\":0}\n").unwrap();
    let budget = 64 * 1024;
    let mut tail = FileTail::new(&path, false, 1024).with_budget(budget);
    let mut lines = Vec::new();
    tail.read(ReadPlan::Whole, &mut || {}, &mut |_| {}).unwrap();
    let mut file = fs::OpenOptions::new().append(true).open(&path).unwrap();
    for n in 1..=20_000 {
        writeln!(file, "{{\"n\":{n}}}").unwrap();
    }
    drop(file);
    let stats = tail
        .read(ReadPlan::Whole, &mut || {}, &mut |event| {
            if let LineEvent::Line(line) = event {
                lines.push(String::from_utf8_lossy(line).into_owned());
            }
        })
        .unwrap();
    assert!(stats.cut, "{stats:?}");
    assert!(stats.bytes_read <= budget + 1, "{stats:?}");
    assert_eq!(lines.last().map(String::as_str), Some("{\"n\":20000}"));
    assert!(
        lines.iter().all(|line| line.starts_with("{\"n\":")),
        "whole lines only"
    );
    assert!(lines.len() < 20_000 / 2, "{} lines", lines.len());
}
