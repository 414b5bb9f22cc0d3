//! Which live process vouches for which session (docs/states.md §1 "vouch"), and the memory of a
//! vouching process's death.
//!
//! A process vouches for a session in one of three ways, tried in this order: the agent's own
//! listing names the session under the process's pid (and start time), the process's command
//! line names the session, or the process works in the session's folder. In one folder, N live
//! processes vouch for the N most recently written sessions that each could have written. A
//! process never vouches for a transcript last written before it started, and a pid is matched
//! with its start time, so a recycled pid or a new agent in an old folder never revives a ghost.
//!
//! [`Tracker::awaiting_scan`] says which sessions wait for the next process scan to be seen as they
//! are.
//!
//! Deciding what a vouch (or its loss) means for the status is `rules`' business.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use super::{SeenProcess, Tracker};
use crate::agents::hooks::Signal;
use crate::agents::ProcessRole;
use crate::model::{
    AgentKind, ListingEntry, ProcessInfo, ReasonCode, SessionKey, Status, Timestamp,
};

/// How a process vouches for a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VouchKind {
    /// The agent's listing names the session, and its pid is alive with the same start time.
    Listing,
    /// The process's command line names the session.
    CommandLine,
    /// A live process of the agent works in the session's folder.
    Folder,
}

/// The process vouching for a session, with its start time so a recycled pid never matches.
#[derive(Debug, Clone, Copy)]
pub(super) struct Vouch {
    pub(super) pid: u32,
    pub(super) start: Timestamp,
    pub(super) kind: VouchKind,
    /// `SeenProcess::newest_child`: when its newest child process started.
    pub(super) newest_child: Option<Timestamp>,
}

impl Tracker {
    /// Which live process vouches for which session now.
    pub(super) fn vouches(&self) -> HashMap<SessionKey, Vouch> {
        let mut vouches = HashMap::new();
        let mut pools: BTreeMap<(AgentKind, String), Vec<&SeenProcess>> = BTreeMap::new();
        for process in &self.processes {
            let agent = process.recognised.agent;
            if !may_vouch(process) {
                continue;
            }
            let vouch = |kind| Vouch {
                pid: process.info.pid,
                start: process.info.start_time,
                kind,
                newest_child: process.newest_child,
            };
            if let Some(listed) = self.listed_entry_for_pid(agent, &process.info) {
                vouches.insert(
                    SessionKey::new(agent, listed.session_id.clone()),
                    vouch(VouchKind::Listing),
                );
                continue;
            }
            if let Some(session) = &process.recognised.session_arg {
                vouches.insert(
                    SessionKey::new(agent, session.clone()),
                    vouch(VouchKind::CommandLine),
                );
                continue;
            }
            if let Some(folder) = &process.folder {
                pools
                    .entry((agent, folder.clone()))
                    .or_default()
                    .push(process);
            }
        }
        if pools.is_empty() {
            return vouches;
        }
        // N live processes in one folder vouch for the N most recently active sessions there
        // that each could have written: a process never vouches for a transcript last written
        // before it started (docs/states.md §1).
        let mut candidates: BTreeMap<(AgentKind, String), Vec<(Timestamp, &SessionKey)>> =
            BTreeMap::new();
        for (key, entry) in &self.entries {
            let (Some(folder), Some(last_write)) = (&entry.log.folder, entry.last_write) else {
                continue;
            };
            // A sub-agent session rolls up into its parent: the parent's process is not its.
            if entry.transcript.is_none()
                || entry.log.parent_session.is_some()
                || vouches.contains_key(key)
            {
                continue;
            }
            let pool_key = (key.agent, self.canonical(folder).to_string());
            if pools.contains_key(&pool_key) {
                candidates
                    .entry(pool_key)
                    .or_default()
                    .push((last_write, key));
            }
        }
        for (pool_key, mut sessions) in candidates {
            let mut free = pools[&pool_key].clone();
            sessions.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
            for (last_write, key) in sessions {
                let eligible = free
                    .iter()
                    .enumerate()
                    .filter(|(_, process)| {
                        process.info.start_time.minus(self.policy.start_slack) <= last_write
                    })
                    .max_by_key(|(_, process)| process.info.start_time)
                    .map(|(index, _)| index);
                let Some(index) = eligible else { continue };
                let process = free.swap_remove(index);
                vouches.insert(
                    key.clone(),
                    Vouch {
                        pid: process.info.pid,
                        start: process.info.start_time,
                        kind: VouchKind::Folder,
                        newest_child: process.newest_child,
                    },
                );
                if free.is_empty() {
                    break;
                }
            }
        }
        vouches
    }

    /// Records the death of processes that vouched at the previous decision, or that stopped
    /// vouching while they still lived and have died since, and forgets it when a live process
    /// vouches again. Returns the sessions whose vouching changed.
    pub(super) fn remember_deaths(
        &mut self,
        vouches: &HashMap<SessionKey, Vouch>,
        now: Timestamp,
    ) -> Vec<SessionKey> {
        let alive: HashSet<(u32, Timestamp)> = self
            .processes
            .iter()
            .map(|process| (process.info.pid, process.info.start_time))
            .collect();
        let mut touched: Vec<SessionKey> = self
            .vouched
            .keys()
            .chain(vouches.keys())
            .filter(|key| {
                let before = self.vouched.get(*key).map(|vouch| (vouch.pid, vouch.start));
                let after = vouches.get(*key).map(|vouch| (vouch.pid, vouch.start));
                before != after
            })
            .cloned()
            .collect();
        // A process that stopped vouching while it lived (its terminal closed, and it no longer
        // reads as the session's interactive process) and has died since.
        let died: Vec<SessionKey> = self
            .lapsed
            .iter()
            .filter(|(key, process)| !vouches.contains_key(*key) && !alive.contains(process))
            .map(|(key, _)| key.clone())
            .collect();
        for key in &died {
            self.lapsed.remove(key);
            if let Some(entry) = self.entries.get_mut(key) {
                entry.gone_at = Some(now);
            }
        }
        touched.sort();
        touched.dedup();
        for key in &touched {
            let Some(entry) = self.entries.get_mut(key) else {
                self.lapsed.remove(key);
                continue;
            };
            match (vouches.get(key), self.vouched.get(key)) {
                (Some(_), _) => {
                    entry.gone_at = None;
                    self.lapsed.remove(key);
                }
                (None, Some(previous)) => {
                    if alive.contains(&(previous.pid, previous.start)) {
                        self.lapsed
                            .insert(key.clone(), (previous.pid, previous.start));
                    } else {
                        entry.gone_at = Some(now);
                    }
                }
                (None, None) => {}
            }
        }
        touched.extend(died);
        touched
    }

    /// True when some live process of this agent is not accounted for by its listing, so an
    /// unlisted session may still be vouched by folder (an older CLI that keeps no registry).
    pub(super) fn agent_has_unlisted_process(&self, agent: AgentKind) -> bool {
        self.processes.iter().any(|process| {
            process.recognised.agent == agent
                && may_vouch(process)
                && self.listed_entry_for_pid(agent, &process.info).is_none()
                && process.recognised.session_arg.is_none()
        })
    }

    /// The listing entry a live process answers for: same pid, and the same start time where
    /// the listing records one, so a recycled pid never vouches.
    fn listed_entry_for_pid(
        &self,
        agent: AgentKind,
        process: &ProcessInfo,
    ) -> Option<&ListingEntry> {
        let listing = self.listings.get(&agent)?;
        listing
            .entries
            .iter()
            .filter(|entry| entry.pid == Some(process.pid))
            .find(|entry| same_start(entry, process))
    }

    fn canonical<'a>(&'a self, folder: &'a str) -> &'a str {
        self.folders.get(folder).map_or(folder, String::as_str)
    }
}

/// Only a session's own CLI vouches: background servers and helpers never do.
fn may_vouch(process: &SeenProcess) -> bool {
    matches!(
        process.recognised.role,
        ProcessRole::Interactive | ProcessRole::Print
    )
}

fn same_start(entry: &ListingEntry, process: &ProcessInfo) -> bool {
    match (&entry.proc_start, process.start_ticks) {
        (Some(recorded), Some(ticks)) => recorded.trim() == ticks.to_string(),
        // Without clock ticks on either side, the session cannot have started before its
        // process did.
        _ => entry
            .started_at
            .is_none_or(|started| started >= process.start_time.minus(Duration::from_secs(2))),
    }
}

impl Tracker {
    /// Sessions that wait for a process scan to be seen as they are: a live session that no
    /// process vouches for (a CLI started since the last scan: its terminal cannot be read, and
    /// its end cannot be watched for, until a scan finds it, so a CLI that exits idle soon after
    /// it started would read open until the window passed), and a session an agent's listing names under a pid
    /// the last scan did not see (its listing cannot vouch for it until then), and a session
    /// that waits at a permission dialog only a hook told of (approved at the terminal, its
    /// command shows as a new process: docs/states.md §3 rule 3a), and a session that reads
    /// interrupted (a CLI whose terminal closed writes its interrupt on its way out: a scan soon
    /// tells a closed session from one that waits for its person).
    pub fn awaiting_scan(&self) -> Vec<SessionKey> {
        let seen: HashSet<u32> = self.processes.iter().map(|p| p.info.pid).collect();
        let unvouched = self.entries.iter().filter(|(_, entry)| {
            entry.hosted.is_none()
                // A sub-agent's session rolls up into its parent, whose process vouches.
                && entry.log.parent_session.is_none()
                && entry.decision.as_ref().is_some_and(|decision| {
                    decision.pid.is_none() && decision.status != Status::Ended
                })
        });
        let available = self
            .listings
            .iter()
            .filter(|(_, listing)| listing.available);
        let listed_unseen = available.flat_map(|(agent, listing)| {
            listing
                .entries
                .iter()
                .filter(|entry| entry.pid.is_some_and(|pid| !seen.contains(&pid)))
                .map(|entry| SessionKey::new(*agent, entry.session_id.clone()))
        });
        // A permission dialog only a hook told of: a scan sees the command it runs once approved
        // (rule 3a).
        let hook_dialogs = self.entries.iter().filter(|(_, entry)| {
            entry
                .hook
                .as_ref()
                .is_some_and(|hook| hook.signal == Signal::Permission)
                && entry
                    .decision
                    .as_ref()
                    .is_some_and(|decision| decision.status == Status::Waiting)
        });
        let interrupted = self.entries.iter().filter(|(_, entry)| {
            entry.decision.as_ref().is_some_and(|decision| {
                decision.status == Status::Waiting
                    && decision.reason.code == ReasonCode::Interrupted
            })
        });
        unvouched
            .chain(hook_dialogs)
            .chain(interrupted)
            .map(|(key, _)| key.clone())
            .chain(listed_unseen)
            .collect()
    }
}
