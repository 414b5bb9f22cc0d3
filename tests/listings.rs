//! Claude Code's registry and background jobs on disk (`sources::listings`).

use std::path::{Path, PathBuf};

use slate::agents::claude::parse_registry;
use slate::model::{Listing, ListingEntry, ProcessInfo, ProcessTable, Timestamp};
use slate::sources::listings::{drop_dead, read_claude_listing};

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sources/claude")
}

#[test]
fn the_registry_and_jobs_are_read_and_bad_files_counted() {
    let root = fixture_root();
    let mut problems = Vec::new();
    let listing = read_claude_listing(&root, &mut problems);
    assert!(listing.available);

    // What the adapter makes of each registry file is its business; this checks that every
    // `<pid>.json` went through it and the legacy `pid-<n>.json` did not.
    let mut expected: Vec<String> = ["41234", "41301", "41377", "41420"]
        .iter()
        .filter_map(|pid| {
            let bytes = std::fs::read(root.join(format!("sessions/{pid}.json"))).ok()?;
            parse_registry(&bytes).ok().flatten()
        })
        .map(|entry| entry.session_id)
        .collect();
    expected.sort();
    let mut listed: Vec<String> = listing
        .entries
        .iter()
        .map(|entry| entry.session_id.clone())
        .collect();
    listed.sort();
    assert_eq!(listed, expected);
    assert!(!listed.contains(&"0000aaaa-0000-4000-8000-000000000001".to_string()));

    let mut kinds: Vec<(String, String)> = problems
        .iter()
        .map(|problem| {
            let file = Path::new(&problem.place)
                .strip_prefix(&root)
                .map(|path| path.display().to_string())
                .unwrap_or_default();
            (problem.kind.clone(), file)
        })
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        vec![
            (
                "malformed_listing".to_string(),
                "jobs/bad1/state.json".to_string()
            ),
            (
                "malformed_listing".to_string(),
                "sessions/50000.json".to_string()
            ),
        ]
    );
}

#[test]
fn no_sessions_folder_means_no_listing() {
    let temp = tempfile::tempdir().expect("temp dir");
    let mut problems = Vec::new();
    let listing = read_claude_listing(temp.path(), &mut problems);
    assert_eq!(listing, Listing::default());
    assert!(problems.is_empty());
}

fn entry(session: &str, pid: Option<u32>, proc_start: Option<&str>) -> ListingEntry {
    ListingEntry {
        session_id: session.to_string(),
        pid,
        proc_start: proc_start.map(str::to_string),
        started_at: None,
        cwd: None,
        status: None,
        waiting_for: None,
        interactive: true,
        updated_at: None,
    }
}

fn alive(pid: u32, start_ticks: Option<u64>) -> ProcessInfo {
    ProcessInfo {
        pid,
        ppid: None,
        name: "claude".to_string(),
        exe: None,
        cmd: vec!["claude".to_string()],
        cwd: None,
        start_time: Timestamp::from_millis(0),
        start_ticks,
    }
}

#[test]
fn entries_of_dead_or_recycled_pids_are_dropped() {
    let mut listing = Listing {
        available: true,
        entries: vec![
            entry("alive", Some(41301), Some("2093318")),
            entry("recycled", Some(41234), Some("2093318")),
            entry("dead", Some(41377), Some("2093318")),
            entry("no-start-known", Some(41420), None),
            entry("job", None, None),
        ],
    };
    let table = ProcessTable {
        processes: vec![
            alive(41301, Some(2093318)),
            alive(41234, Some(99)),
            alive(41420, Some(5)),
        ],
    };
    drop_dead(&mut listing, &table);
    let kept: Vec<&str> = listing
        .entries
        .iter()
        .map(|entry| entry.session_id.as_str())
        .collect();
    assert_eq!(kept, vec!["alive", "no-start-known", "job"]);
}
