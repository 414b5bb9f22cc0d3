//! The process table: which processes run right now, and which of them are agents.
//!
//! [`scan_processes`] asks the operating system (through `sysinfo`) for every process with its
//! argv, executable, cwd and start time, and on Linux adds the start time in clock ticks that
//! Claude Code's registry records as `procStart`, so a recycled pid never vouches for a session.
//! [`recognise_all`] runs a registry's recognisers over a table and resolves each agent process's
//! folder to the canonical spelling `sources::folders::canonical_folder` gives transcripts.
//! [`load_table`] reads a recorded table, so tests replay real process layouts.
//!
//! It deliberately does not decide which process vouches for which session; the tracker does.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use sysinfo::{ProcessRefreshKind, ProcessStatus, ProcessesToUpdate, System, UpdateKind};

use super::folders::canonical_folder;
use slate_core::agents::{AgentProcess, ProcessRole, Registry};
use slate_core::model::{ProcessInfo, ProcessTable, Timestamp};
use slate_core::tracker::SeenProcess;

/// Lists every live process (threads and processes that ended but are not reaped yet excluded)
/// with what recognising agents needs.
pub fn scan_processes() -> ProcessTable {
    let mut system = System::new();
    let refresh = ProcessRefreshKind::nothing()
        .without_tasks()
        .with_cmd(UpdateKind::Always)
        .with_exe(UpdateKind::Always)
        .with_cwd(UpdateKind::Always);
    system.refresh_processes_specifics(ProcessesToUpdate::All, true, refresh);
    let mut processes: Vec<ProcessInfo> = system
        .processes()
        .values()
        .filter(|process| process.thread_kind().is_none())
        // A process that has ended but is not reaped yet is no longer there to vouch: its pidfd
        // already said it ended (`exits`).
        .filter(|process| {
            !matches!(
                process.status(),
                ProcessStatus::Zombie | ProcessStatus::Dead
            )
        })
        .map(|process| {
            let pid = process.pid().as_u32();
            ProcessInfo {
                pid,
                ppid: process.parent().map(|parent| parent.as_u32()),
                name: process.name().to_string_lossy().into_owned(),
                exe: process.exe().map(|exe| exe.to_string_lossy().into_owned()),
                cmd: process
                    .cmd()
                    .iter()
                    .map(|arg| arg.to_string_lossy().into_owned())
                    .collect(),
                cwd: process.cwd().map(|cwd| cwd.to_string_lossy().into_owned()),
                start_time: Timestamp::from_millis(
                    i64::try_from(process.start_time())
                        .unwrap_or(i64::MAX / 1000)
                        .saturating_mul(1000),
                ),
                start_ticks: start_ticks(pid),
            }
        })
        .collect();
    processes.sort_by_key(|process| process.pid);
    ProcessTable { processes }
}

/// Field 22 of `/proc/<pid>/stat` on Linux; `None` elsewhere or when the process is gone.
fn start_ticks(pid: u32) -> Option<u64> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_start_ticks(&stat)
}

/// Reads field 22 (`starttime`) of a `/proc/<pid>/stat` line. Field 2, `comm`, is in parentheses
/// and may itself hold spaces and parentheses, so the fields are counted after the last `)`.
pub fn parse_start_ticks(stat: &str) -> Option<u64> {
    let after_comm = &stat[stat.rfind(')')? + 1..];
    // After `comm` come field 3 (`state`) onwards, so field 22 is the 20th.
    after_comm.split_whitespace().nth(19)?.parse().ok()
}

/// The processes of a table that `registry`'s agents recognise, each with its folder resolved.
///
/// An agent that relaunches itself (Gemini CLI, in a child `node` process running the same
/// script) shows as two processes for one session; the parent only waits for its child, so it is
/// marked [`ProcessRole::Helper`] and the session is vouched for once, by the child.
pub fn recognise_all(registry: Registry, table: &ProcessTable) -> Vec<SeenProcess> {
    recognise_all_with(table, |info| {
        let mut recognised = registry.recognise(info)?;
        let relaunch_parent = recognised
            .agent
            .description()
            .and_then(|description| description.processes.relaunch_parent);
        if relaunch_parent.is_some_and(|is_parent| is_parent(info, &table.processes)) {
            recognised.role = ProcessRole::Helper;
        }
        Some(recognised)
    })
}

/// [`recognise_all`] with the recogniser given, so the folder resolution can be tested on its own.
pub fn recognise_all_with(
    table: &ProcessTable,
    recognise: impl Fn(&ProcessInfo) -> Option<AgentProcess>,
) -> Vec<SeenProcess> {
    let mut children: HashMap<u32, Vec<&ProcessInfo>> = HashMap::new();
    for info in &table.processes {
        if let Some(parent) = info.ppid.filter(|parent| *parent != info.pid) {
            children.entry(parent).or_default().push(info);
        }
    }
    table
        .processes
        .iter()
        .filter_map(|info| {
            let recognised = recognise(info)?;
            let folder = process_folder(info, &recognised);
            Some(SeenProcess {
                info: info.clone(),
                recognised,
                folder,
                newest_child: newest_descendant(info.pid, &children),
            })
        })
        .collect()
}

/// When the newest of `pid`'s descendants started. Each pid is visited once, so a table whose
/// parent links loop (a pid recycled between reads) still ends.
fn newest_descendant(pid: u32, children: &HashMap<u32, Vec<&ProcessInfo>>) -> Option<Timestamp> {
    let mut seen = HashSet::from([pid]);
    let mut stack = vec![pid];
    let mut newest = None;
    while let Some(parent) = stack.pop() {
        for child in children.get(&parent).into_iter().flatten() {
            if seen.insert(child.pid) {
                newest = newest.max(Some(child.start_time));
                stack.push(child.pid);
            }
        }
    }
    newest
}

/// The canonical folder an agent process works in: the folder on its command line, joined to
/// its cwd when relative, else its cwd.
pub fn process_folder(info: &ProcessInfo, recognised: &AgentProcess) -> Option<String> {
    let folder = match (&recognised.folder_arg, &info.cwd) {
        (Some(arg), _) if Path::new(arg).is_absolute() => PathBuf::from(arg),
        (Some(arg), Some(cwd)) => Path::new(cwd).join(arg),
        // A relative folder with no known cwd cannot be placed.
        (Some(_), None) => return None,
        (None, Some(cwd)) => PathBuf::from(cwd),
        (None, None) => return None,
    };
    Some(canonical_folder(&folder.to_string_lossy()))
}

/// Why a recorded process table could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not a process table: {source}")]
    Parse {
        path: String,
        source: serde_json::Error,
    },
}

/// Reads a recorded `processes.json`: a JSON array of objects with the fields of [`ProcessInfo`]
/// (`start_time` in RFC 3339).
pub fn load_table(path: &Path) -> Result<ProcessTable, LoadError> {
    let place = path.display().to_string();
    let text = std::fs::read(path).map_err(|source| LoadError::Read {
        path: place.clone(),
        source,
    })?;
    let processes: Vec<ProcessInfo> =
        serde_json::from_slice(&text).map_err(|source| LoadError::Parse {
            path: place,
            source,
        })?;
    Ok(ProcessTable { processes })
}
