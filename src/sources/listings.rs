//! The agents' own listings of their live sessions, read from disk.
//!
//! Claude Code keeps one `sessions/<pid>.json` file per running process and one
//! `jobs/<id>/state.json` per background job (FORMATS.md §1.1). This module finds those files and
//! hands their bytes to the Claude adapter's parsers; a file that cannot be read or parsed is a
//! counted problem and the rest of the listing stands. [`drop_dead`] removes entries whose process
//! is gone or whose pid was recycled, since a crashed process leaves its registry file behind.
//!
//! It deliberately does not interpret the files' fields (the adapter does) nor decide what a
//! listed status means for a session (the tracker does).

use std::fs;
use std::io;
use std::path::Path;

use crate::agents;
use crate::agents::LineError;
use crate::model::{Listing, ListingEntry, Problem, ProcessTable};

/// Reads Claude Code's registry and background jobs under `claude_root`. The listing is
/// `available` when the `sessions/` folder exists: older versions keep no registry, and then the
/// listing decides nothing.
pub fn read_claude_listing(claude_root: &Path, problems: &mut Vec<Problem>) -> Listing {
    let sessions = claude_root.join("sessions");
    let available = sessions.is_dir();
    let mut entries = Vec::new();
    for path in files_in(&sessions, problems) {
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
            continue;
        };
        // `pid-<n>.json` is a legacy generation without status: ignored (FORMATS.md §1.1).
        if !name.ends_with(".json") || name.starts_with("pid-") {
            continue;
        }
        read_entry(
            &path,
            agents::claude::parse_registry,
            &mut entries,
            problems,
        );
    }
    let jobs = claude_root.join("jobs");
    for job in folders_in(&jobs, problems) {
        let state = job.join("state.json");
        if state.is_file() {
            read_entry(
                &state,
                agents::claude::parse_job_state,
                &mut entries,
                problems,
            );
        }
    }
    Listing { available, entries }
}

/// Keeps only entries whose process is alive: its pid is in `table` and, where both are known,
/// its start time in clock ticks equals the entry's `procStart`. Entries without a pid (background
/// jobs) are kept.
pub fn drop_dead(listing: &mut Listing, table: &ProcessTable) {
    listing.entries.retain(|entry| {
        let Some(pid) = entry.pid else {
            return true;
        };
        let Some(process) = table.get(pid) else {
            return false;
        };
        let listed_start = entry
            .proc_start
            .as_deref()
            .and_then(|start| start.trim().parse::<u64>().ok());
        match (listed_start, process.start_ticks) {
            (Some(listed), Some(actual)) => listed == actual,
            _ => true,
        }
    });
}

type EntryParser = fn(&[u8]) -> Result<Option<ListingEntry>, LineError>;

fn read_entry(
    path: &Path,
    parse: EntryParser,
    entries: &mut Vec<ListingEntry>,
    problems: &mut Vec<Problem>,
) {
    let place = path.display().to_string();
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        // The process exited between listing and reading: its file is gone, and so is it.
        Err(error) if error.kind() == io::ErrorKind::NotFound => return,
        Err(error) => {
            problems.push(problem("unreadable", place, error.to_string()));
            return;
        }
    };
    match parse(&bytes) {
        Ok(Some(entry)) => entries.push(entry),
        Ok(None) => {}
        Err(error) => problems.push(problem("malformed_listing", place, error.to_string())),
    }
}

/// The files in `folder`, sorted; a missing folder has none, an unreadable one is a problem.
fn files_in(folder: &Path, problems: &mut Vec<Problem>) -> Vec<std::path::PathBuf> {
    entries_in(folder, problems, |path| path.is_file())
}

fn folders_in(folder: &Path, problems: &mut Vec<Problem>) -> Vec<std::path::PathBuf> {
    entries_in(folder, problems, |path| path.is_dir())
}

fn entries_in(
    folder: &Path,
    problems: &mut Vec<Problem>,
    keep: impl Fn(&Path) -> bool,
) -> Vec<std::path::PathBuf> {
    let entries = match fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Vec::new(),
        Err(error) => {
            problems.push(problem(
                "unreadable",
                folder.display().to_string(),
                error.to_string(),
            ));
            return Vec::new();
        }
    };
    let mut paths: Vec<_> = entries
        .filter_map(|entry| match entry {
            Ok(entry) => Some(entry.path()),
            Err(error) => {
                problems.push(problem(
                    "unreadable",
                    folder.display().to_string(),
                    error.to_string(),
                ));
                None
            }
        })
        .filter(|path| keep(path))
        .collect();
    paths.sort();
    paths
}

fn problem(kind: &str, place: String, detail: String) -> Problem {
    Problem {
        kind: kind.to_string(),
        place,
        detail,
    }
}
