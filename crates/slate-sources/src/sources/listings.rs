//! The agents' own listings of their live sessions, read from disk or asked of the agent.
//!
//! An agent's description says where it lists its sessions (`agents::ListingRule`): Claude Code
//! keeps one `sessions/<pid>.json` file per running process and one `jobs/<id>/state.json` per
//! background job (docs/formats.md §1.1). [`read_listing`] finds those files and hands their bytes
//! to the description's parsers; a file that cannot be read or parsed is a counted problem and the
//! rest of the listing stands.
//!
//! When the registry is missing or stale (older versions keep none; a live `claude` has no file
//! in it), [`AgentsCommand`] asks the agent itself with the description's listing command
//! (`claude agents --json`, docs/formats.md §1.4), run with a bounded time (`crate::child`), and
//! keeps its answer for a short while so the loop does not spawn a process on every scan. The
//! time that decides whether an answer is still fresh comes in as an argument.
//!
//! Every listing file is opened through `sources::regular_file` and read whole up to a size limit,
//! so a FIFO or a device link in the registry is a counted problem, never a blocked read.
//!
//! It deliberately does not interpret the files' fields (the adapter does) nor decide what a
//! listed status means for a session (the tracker does).

use std::ffi::OsString;
use std::fs;
use std::io;

use super::regular_file;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::child;
use slate_core::agents::{EntryParser, ListingCommand, ListingRule};
use slate_core::model::{Listing, ListingEntry, Problem, ProblemKind, Timestamp};

/// Reads an agent's registry and background jobs under its `root`, as `rule` says. The listing is
/// `available` when the registry folder exists: older versions keep none, and then the listing
/// decides nothing.
pub fn read_listing(rule: &ListingRule, root: &Path, problems: &mut Vec<Problem>) -> Listing {
    let registry = root.join(rule.registry);
    let available = registry.is_dir();
    let mut entries = Vec::new();
    for path in files_in(&registry, problems) {
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
            continue;
        };
        if (rule.entry_file)(name) {
            read_entry(&path, rule.parse_entry, &mut entries, problems);
        }
    }
    if let Some((folder, file, parse)) = rule.jobs {
        for job in folders_in(&root.join(folder), problems) {
            // A job without its state file yet lists nothing; `read_entry` passes over it.
            read_entry(&job.join(file), parse, &mut entries, problems);
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

/// Runs an agent's listing command as a listing of last resort, at most once per `cache_for`.
#[derive(Debug, Clone)]
pub struct AgentsCommand {
    command: &'static ListingCommand,
    /// The `PATH` to find the program on.
    pub path: Option<OsString>,
    /// The child's whole environment, when set; else it inherits this process's. Tests set it so
    /// the child never sees the real home folder.
    pub env: Option<Vec<(OsString, OsString)>>,
    /// How long the command may run before it is killed.
    pub timeout: Duration,
    /// How long an answer (or a failure) is reused.
    pub cache_for: Duration,
    cached: Option<(Timestamp, Vec<ListingEntry>)>,
}

impl AgentsCommand {
    /// The command as this machine runs it: the process's own `PATH` and environment, 2 s to
    /// answer, answers kept 15 s.
    pub fn from_process(command: &'static ListingCommand) -> AgentsCommand {
        AgentsCommand::new(command, std::env::var_os("PATH"), None)
    }

    pub fn new(
        command: &'static ListingCommand,
        path: Option<OsString>,
        env: Option<Vec<(OsString, OsString)>>,
    ) -> AgentsCommand {
        AgentsCommand {
            command,
            path,
            env,
            timeout: Duration::from_secs(2),
            cache_for: Duration::from_secs(15),
            cached: None,
        }
    }

    /// The program's executable on `path`, if there is one.
    pub fn program(&self) -> Option<PathBuf> {
        let path = self.path.as_ref()?;
        let name = self.command.program;
        std::env::split_paths(path)
            .flat_map(|folder| [folder.join(name), folder.join(format!("{name}.exe"))])
            .find(|candidate| candidate.is_file())
    }

    /// The sessions the command lists: from the cache when it is fresh at `now`, else by running
    /// the command. A missing program lists nothing; a command that fails, overruns its time or
    /// prints something unreadable lists nothing and is a counted problem.
    pub fn entries(&mut self, now: Timestamp, problems: &mut Vec<Problem>) -> Vec<ListingEntry> {
        if let Some((at, entries)) = &self.cached {
            if at.elapsed_until(now) < self.cache_for {
                return entries.clone();
            }
        }
        let Some(program) = self.program() else {
            return Vec::new();
        };
        let entries = self.run(&program, problems);
        self.cached = Some((now, entries.clone()));
        entries
    }

    fn run(&self, program: &Path, problems: &mut Vec<Problem>) -> Vec<ListingEntry> {
        let place = format!("{} {}", program.display(), self.command.args.join(" "));
        let mut command = Command::new(program);
        command.args(self.command.args);
        if let Some(env) = &self.env {
            command
                .env_clear()
                .envs(env.iter().map(|(key, value)| (key, value)));
        }
        let bytes = match child::output_within(&mut command, self.timeout) {
            Ok(bytes) => bytes,
            Err(error) => {
                let kind = if error.is_timeout() {
                    ProblemKind::ListingTimeout
                } else {
                    ProblemKind::ListingFailed
                };
                problems.push(Problem::new(kind, place, error.to_string()));
                return Vec::new();
            }
        };
        match (self.command.parse)(&bytes) {
            Ok(entries) => entries,
            Err(error) => {
                problems.push(Problem::new(
                    ProblemKind::MalformedListing,
                    place,
                    error.to_string(),
                ));
                Vec::new()
            }
        }
    }
}

/// The most of one listing file that is read: a registry entry or a job's state is a few hundred
/// bytes.
const ENTRY_LIMIT: u64 = 1024 * 1024;

fn read_entry(
    path: &Path,
    parse: EntryParser,
    entries: &mut Vec<ListingEntry>,
    problems: &mut Vec<Problem>,
) {
    let place = path.display().to_string();
    let bytes = match regular_file::read(path, ENTRY_LIMIT) {
        Ok(bytes) => bytes,
        // The process exited between listing and reading: its file is gone, and so is it.
        Err(error) if error.kind() == io::ErrorKind::NotFound => return,
        Err(error) => {
            problems.push(Problem::new(
                ProblemKind::Unreadable,
                place,
                error.to_string(),
            ));
            return;
        }
    };
    match parse(&bytes) {
        Ok(Some(entry)) => entries.push(entry),
        Ok(None) => {}
        Err(error) => problems.push(Problem::new(
            ProblemKind::MalformedListing,
            place,
            error.to_string(),
        )),
    }
}

/// Everything in `folder` but its subfolders, sorted: files, and whatever else is named like one
/// (which `read_entry` reports); a missing folder has none, an unreadable one is a problem.
fn files_in(folder: &Path, problems: &mut Vec<Problem>) -> Vec<PathBuf> {
    entries_in(folder, problems, |path| !path.is_dir())
}

fn folders_in(folder: &Path, problems: &mut Vec<Problem>) -> Vec<PathBuf> {
    entries_in(folder, problems, |path| path.is_dir())
}

fn entries_in(
    folder: &Path,
    problems: &mut Vec<Problem>,
    keep: impl Fn(&Path) -> bool,
) -> Vec<PathBuf> {
    let entries = match fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Vec::new(),
        Err(error) => {
            problems.push(Problem::new(
                ProblemKind::Unreadable,
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
                problems.push(Problem::new(
                    ProblemKind::Unreadable,
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
