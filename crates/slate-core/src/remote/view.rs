//! The merged view of every remote: which sessions each one has, where each link stands, and
//! which sessions changed with each thing a link reported.
//!
//! A pure state machine. The live service feeds it the links' events ([`LinkEvent`]) with the
//! time, and gets back the keys of the sessions whose published object changed, so it tells
//! subscribers exactly what moved. The rules that make a dropped link neither lose nor invent a
//! notification live here:
//!
//! - a link that drops keeps its sessions listed with the state last reported, each marked
//!   `unreachable_since` (and so not counted as needing anyone, `policy::needs_you`), and its
//!   dialog, if any, not answerable until the link is back;
//! - the snapshot after a reconnect replaces them and is compared with them: a session whose
//!   object is the same apart from the mark reports a change only to clear the mark, with its
//!   status as before, so the notification policy (which fires on Working → Needs you) sees no
//!   new turn; one that finished its turn while the link was down does go from Working to Needs
//!   you, which is news that was not told yet;
//! - a session first seen already waiting (in a first snapshot, or later) comes with no earlier
//!   status, which the notification policy treats as start-up: nothing fires.
//!
//! A link hands over the lines of one read at once, [`coalesce`]d: what a later line makes moot
//! (a session's earlier state, anything before a snapshot) is left out before it costs anything.
//!
//! Every session here carries its machine in `machine` and in its key, so no remote session is
//! ever confused with a local one or with another machine's.
//!
//! A remote lists at most [`SESSIONS_PER_REMOTE`] sessions, whatever it sends: what comes past
//! them, and every line or session object that could not be read, is kept as a problem
//! ([`Remotes::take_problems`]) for the live service to count.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::RemoteEntry;
use crate::model::{Machine, Problem, ProblemKind, Session, SessionKey, Timestamp};
use crate::remote::wire::Line;
use crate::remote::{Failure, Report, Status};

/// What a link reports.
#[derive(Debug, Clone, PartialEq)]
pub enum LinkEvent {
    /// An attempt started: `ssh` is running, and no snapshot came yet.
    Attempt,
    /// A line from the remote, read.
    Line(Line),
    /// The lines of one read from the remote, in order, with those a later one of the same
    /// read supersedes left out ([`coalesce`]): a backlog costs one event per read, not one per
    /// line.
    Lines(Vec<Line>),
    /// A line that could not be read; the link goes on.
    Garbled(String),
    /// The link ended (or never came up): why, and when the next attempt is due.
    Lost {
        failure: Failure,
        retry_at: Timestamp,
    },
}

impl LinkEvent {
    /// How many of the remote's lines the event carries, for the live service's slices.
    pub fn lines(&self) -> usize {
        match self {
            LinkEvent::Lines(lines) => lines.len(),
            _ => 1,
        }
    }
}

/// `lines` in order, with what a later line makes moot left out: everything before the last
/// snapshot (which replaces the whole list), a line this build has no use for, and a session's
/// change or removal followed by another of the same session. What is left, applied, leaves the
/// view as every line would have; only the states in between are not told. One pass, with one
/// set of the sessions seen.
pub fn coalesce(mut lines: Vec<Line>) -> Vec<Line> {
    if let Some(last) = lines
        .iter()
        .rposition(|line| matches!(line, Line::Snapshot { .. }))
    {
        lines.drain(..last);
    }
    let mut seen: BTreeSet<SessionKey> = BTreeSet::new();
    let mut kept: Vec<Line> = Vec::with_capacity(lines.len());
    for line in lines.into_iter().rev() {
        let key = match &line {
            Line::Session(session) => session.key(),
            Line::Removed(key) => key.clone(),
            Line::Ignored => continue,
            Line::Snapshot { .. } => {
                kept.push(line);
                continue;
            }
        };
        if seen.insert(key) {
            kept.push(line);
        }
    }
    kept.reverse();
    kept
}

/// The most sessions listed for one remote. A machine runs a few dozen sessions at most; a
/// remote that sends more (a broken or hostile one sending sessions without end) has the rest
/// left out and counted as a problem, so it can cost this machine no more than this many
/// session objects.
pub const SESSIONS_PER_REMOTE: usize = 1_000;

/// Every remote's sessions and link state.
#[derive(Debug, Default, Clone)]
pub struct Remotes {
    machines: BTreeMap<Machine, Remote>,
    /// What the links sent that is not listed, since the live service last took them.
    problems: Vec<Problem>,
}

#[derive(Debug, Clone)]
struct Remote {
    destination: String,
    status: Status,
    since: Timestamp,
    error: Option<String>,
    next_attempt: Option<Timestamp>,
    version: Option<String>,
    sessions: BTreeMap<SessionKey, Session>,
}

impl Remotes {
    /// Follows the config's remotes: a new one starts connecting, one no longer configured goes
    /// with its sessions (their keys are returned, as changed), one whose destination changed
    /// keeps its sessions until its new link says otherwise.
    pub fn configure(&mut self, entries: &[RemoteEntry], now: Timestamp) -> Vec<SessionKey> {
        let wanted: BTreeSet<&Machine> = entries.iter().map(|entry| &entry.name).collect();
        let mut changed = Vec::new();
        self.machines.retain(|name, remote| {
            let keep = wanted.contains(name);
            if !keep {
                changed.extend(remote.sessions.keys().cloned());
            }
            keep
        });
        for entry in entries {
            let remote = self
                .machines
                .entry(entry.name.clone())
                .or_insert_with(|| Remote {
                    destination: entry.destination.clone(),
                    status: Status::Connecting,
                    since: now,
                    error: None,
                    next_attempt: None,
                    version: None,
                    sessions: BTreeMap::new(),
                });
            remote.destination = entry.destination.clone();
        }
        changed
    }

    /// Applies what the link of `machine` reported at `now`, and returns the keys of the
    /// sessions whose object changed (appeared, changed, left, or was marked or unmarked
    /// unreachable). A report from a machine no longer configured is ignored.
    pub fn apply(
        &mut self,
        machine: &Machine,
        event: LinkEvent,
        now: Timestamp,
    ) -> Vec<SessionKey> {
        let Some(remote) = self.machines.get_mut(machine) else {
            return Vec::new();
        };
        match event {
            LinkEvent::Attempt => {
                remote.next_attempt = None;
                Vec::new()
            }
            LinkEvent::Line(Line::Snapshot {
                sessions,
                skipped,
                version,
            }) => {
                remote.set_status(Status::Connected, now);
                remote.next_attempt = None;
                remote.version = version;
                remote.error = (skipped > 0)
                    .then(|| format!("{skipped} session objects from {machine} could not be read"));
                if let Some(error) = &remote.error {
                    self.problems.push(dropped(machine, error.clone()));
                }
                let mut fresh: BTreeMap<SessionKey, Session> = BTreeMap::new();
                let mut past_cap = 0usize;
                for session in sessions {
                    let session = adopt(session, machine);
                    let key = session.key();
                    if fresh.len() >= SESSIONS_PER_REMOTE && !fresh.contains_key(&key) {
                        past_cap += 1;
                        continue;
                    }
                    fresh.insert(key, session);
                }
                if past_cap > 0 {
                    let error = past_cap_error(machine, past_cap);
                    self.problems.push(dropped(machine, error.clone()));
                    remote.error = Some(error);
                }
                let old = std::mem::replace(&mut remote.sessions, fresh);
                let mut changed: Vec<SessionKey> = remote
                    .sessions
                    .iter()
                    .filter(|(key, session)| old.get(*key) != Some(*session))
                    .map(|(key, _)| key.clone())
                    .collect();
                changed.extend(
                    old.into_keys()
                        .filter(|key| !remote.sessions.contains_key(key)),
                );
                changed
            }
            LinkEvent::Line(Line::Session(session)) => {
                let session = adopt(*session, machine);
                let key = session.key();
                if remote.sessions.get(&key) == Some(&session) {
                    return Vec::new();
                }
                if remote.sessions.len() >= SESSIONS_PER_REMOTE
                    && !remote.sessions.contains_key(&key)
                {
                    let error = past_cap_error(machine, 1);
                    self.problems.push(dropped(machine, error.clone()));
                    remote.error = Some(error);
                    return Vec::new();
                }
                remote.sessions.insert(key.clone(), session);
                vec![key]
            }
            LinkEvent::Line(Line::Removed(key)) => {
                let key = key.on(Some(machine.clone()));
                match remote.sessions.remove(&key) {
                    Some(_) => vec![key],
                    None => Vec::new(),
                }
            }
            LinkEvent::Line(Line::Ignored) => Vec::new(),
            LinkEvent::Lines(lines) => {
                let mut changed = Vec::new();
                for line in lines {
                    changed.extend(self.apply(machine, LinkEvent::Line(line), now));
                }
                changed
            }
            LinkEvent::Garbled(error) => {
                self.problems.push(dropped(machine, error.clone()));
                remote.error = Some(error);
                Vec::new()
            }
            LinkEvent::Lost { failure, retry_at } => {
                remote.error = Some(failure.message);
                remote.next_attempt = Some(retry_at);
                if remote.status == Status::Unreachable {
                    return Vec::new();
                }
                remote.set_status(Status::Unreachable, now);
                remote
                    .sessions
                    .iter_mut()
                    .map(|(key, session)| {
                        mark_unreachable(session, machine, now);
                        key.clone()
                    })
                    .collect()
            }
        }
    }

    /// Every remote session, each with its machine.
    pub fn sessions(&self) -> impl Iterator<Item = &Session> {
        self.machines
            .values()
            .flat_map(|remote| remote.sessions.values())
    }

    /// One remote session by its key.
    pub fn session(&self, key: &SessionKey) -> Option<&Session> {
        let machine = key.machine.as_ref()?;
        self.machines.get(machine)?.sessions.get(key)
    }

    /// The sessions of one machine; `None` when no remote has that name.
    pub fn sessions_of(&self, machine: &Machine) -> Option<impl Iterator<Item = &Session>> {
        self.machines
            .get(machine)
            .map(|remote| remote.sessions.values())
    }

    /// Every remote's report, in name order.
    pub fn reports(&self) -> Vec<Report> {
        self.machines
            .iter()
            .map(|(name, remote)| Report {
                name: name.clone(),
                destination: remote.destination.clone(),
                status: remote.status,
                since: remote.since,
                error: remote.error.clone(),
                sessions: remote.sessions.len(),
                next_attempt: remote.next_attempt,
                version: remote.version.clone(),
            })
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.machines.is_empty()
    }

    /// What the links sent that is not listed (a line or a session object that cannot be read,
    /// an id that is not a plain one, a session past [`SESSIONS_PER_REMOTE`]) since the last
    /// call, as problems to count.
    pub fn take_problems(&mut self) -> Vec<Problem> {
        std::mem::take(&mut self.problems)
    }
}

/// A problem with what `machine`'s link sent.
fn dropped(machine: &Machine, detail: String) -> Problem {
    Problem::new(
        ProblemKind::RemoteDropped,
        format!("remote {machine}"),
        detail,
    )
}

fn past_cap_error(machine: &Machine, count: usize) -> String {
    format!(
        "{count} sessions from {machine} were left out: at most {SESSIONS_PER_REMOTE} are listed \
         for one machine"
    )
}

impl Remote {
    fn set_status(&mut self, status: Status, now: Timestamp) {
        if self.status != status {
            self.status = status;
            self.since = now;
        }
    }
}

/// A remote's session as this machine lists it: marked with its machine, and reachable (it just
/// arrived).
fn adopt(mut session: Session, machine: &Machine) -> Session {
    mark_machine(&mut session, machine);
    session.unreachable_since = None;
    session
}

/// Marks a session as running on `machine`. Its dialog stays answerable as that machine says:
/// an answer is forwarded there over the link (`remote::forward`, docs/states.md §8).
pub fn mark_machine(session: &mut Session, machine: &Machine) {
    session.machine = Some(machine.clone());
}

/// Marks the dialog of a session whose remote just became unreachable: no answer can reach it
/// until the link is back (the next snapshot brings the remote's own word again).
fn mark_unreachable(session: &mut Session, machine: &Machine, now: Timestamp) {
    session.unreachable_since = Some(now);
    if let Some(dialog) = &mut session.dialog {
        dialog.answerable = false;
        dialog.why_not = Some(format!(
            "{machine} is unreachable: an answer is forwarded once the link is back, or answer it \
             there (ssh {machine}, then slate approve, deny or answer {})",
            session.id
        ));
    }
}
