//! The agents' own listings of their live sessions, read from disk.
//!
//! Claude Code keeps one `sessions/<pid>.json` file per running process and one
//! `jobs/<id>/state.json` per background job (FORMATS.md §1.1). This module finds those files and
//! hands their bytes to the Claude adapter's parsers; a file that cannot be read or parsed is a
//! counted problem and the rest of the listing stands.
//!
//! When the registry is missing or stale (older versions keep none; a live `claude` has no file
//! in it), [`AgentsCommand`] asks Claude Code itself: `claude agents --json` (FORMATS.md §1.4),
//! run with a bounded time, killed when it overruns, and its answer kept for a short while so the
//! loop does not spawn a process on every scan.
//!
//! It deliberately does not interpret the files' fields (the adapter does) nor decide what a
//! listed status means for a session (the tracker does).

use std::ffi::OsString;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::agents;
use crate::agents::LineError;
use crate::model::{Listing, ListingEntry, Problem};

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

/// Adds `extra` entries to `listing`, except those for a session it already lists: the registry
/// file is the fresher account of a session when both have one.
pub fn merge_entries(listing: &mut Listing, extra: Vec<ListingEntry>) {
    for entry in extra {
        if !listing
            .entries
            .iter()
            .any(|known| known.session_id == entry.session_id)
        {
            listing.entries.push(entry);
        }
    }
}

/// Runs `claude agents --json` as a listing of last resort, at most once per `cache_for`.
#[derive(Debug, Clone)]
pub struct AgentsCommand {
    /// The `PATH` to find `claude` on.
    pub path: Option<OsString>,
    /// The child's whole environment, when set; else it inherits this process's. Tests set it so
    /// the child never sees the real home folder.
    pub env: Option<Vec<(OsString, OsString)>>,
    /// How long the command may run before it is killed.
    pub timeout: Duration,
    /// How long an answer (or a failure) is reused.
    pub cache_for: Duration,
    cached: Option<(Instant, Vec<ListingEntry>)>,
}

impl AgentsCommand {
    /// The command as this machine runs it: the process's own `PATH` and environment, 2 s to
    /// answer, answers kept 15 s.
    pub fn from_process() -> AgentsCommand {
        AgentsCommand::new(std::env::var_os("PATH"), None)
    }

    pub fn new(path: Option<OsString>, env: Option<Vec<(OsString, OsString)>>) -> AgentsCommand {
        AgentsCommand {
            path,
            env,
            timeout: Duration::from_secs(2),
            cache_for: Duration::from_secs(15),
            cached: None,
        }
    }

    /// The `claude` executable on `path`, if there is one.
    pub fn claude(&self) -> Option<PathBuf> {
        let path = self.path.as_ref()?;
        std::env::split_paths(path)
            .flat_map(|folder| [folder.join("claude"), folder.join("claude.exe")])
            .find(|candidate| candidate.is_file())
    }

    /// The sessions `claude agents --json` lists: from the cache when it is fresh, else by running
    /// the command. A missing `claude` lists nothing; a command that fails, overruns its time or
    /// prints something unreadable lists nothing and is a counted problem.
    pub fn entries(&mut self, problems: &mut Vec<Problem>) -> Vec<ListingEntry> {
        if let Some((at, entries)) = &self.cached {
            if at.elapsed() < self.cache_for {
                return entries.clone();
            }
        }
        let Some(claude) = self.claude() else {
            return Vec::new();
        };
        let entries = self.run(&claude, problems);
        self.cached = Some((Instant::now(), entries.clone()));
        entries
    }

    fn run(&self, claude: &Path, problems: &mut Vec<Problem>) -> Vec<ListingEntry> {
        let place = format!("{} agents --json", claude.display());
        let mut command = Command::new(claude);
        command
            .args(["agents", "--json"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(env) = &self.env {
            command
                .env_clear()
                .envs(env.iter().map(|(key, value)| (key, value)));
        }
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(error) => {
                problems.push(problem("listing_failed", place, error.to_string()));
                return Vec::new();
            }
        };
        // The output is read on its own thread so that a large answer never fills the pipe and
        // stalls the child; the thread ends when the pipe closes.
        let (sender, receiver) = std::sync::mpsc::channel();
        if let Some(mut stdout) = child.stdout.take() {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                let read = stdout.read_to_end(&mut bytes).map(|_| bytes);
                let _ = sender.send(read);
            });
        }
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    problems.push(problem(
                        "listing_timeout",
                        place,
                        format!("no answer within {} ms; killed", self.timeout.as_millis()),
                    ));
                    return Vec::new();
                }
                Err(error) => {
                    let _ = child.kill();
                    problems.push(problem("listing_failed", place, error.to_string()));
                    return Vec::new();
                }
            }
        };
        if !status.success() {
            problems.push(problem(
                "listing_failed",
                place,
                format!("exited with {status}"),
            ));
            return Vec::new();
        }
        let remaining = deadline.saturating_duration_since(Instant::now());
        let bytes = match receiver.recv_timeout(remaining.max(Duration::from_millis(100))) {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(error)) => {
                problems.push(problem("listing_failed", place, error.to_string()));
                return Vec::new();
            }
            Err(_) => {
                problems.push(problem(
                    "listing_timeout",
                    place,
                    "its output did not close in time".to_string(),
                ));
                return Vec::new();
            }
        };
        match agents::claude::parse_agents_json(&bytes) {
            Ok(entries) => entries,
            Err(error) => {
                problems.push(problem("malformed_listing", place, error.to_string()));
                Vec::new()
            }
        }
    }
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
