//! The state rules: the one place that decides whether a session is Working, Needs you or Closed.
//!
//! `Tracker` folds observations, process scans and listings into per-session facts and applies the
//! rules of SPEC §3 and §4 to them. It is a pure state machine: it does no I/O, spawns nothing and
//! never reads the clock. Time comes in as `now` on every call, and `next_deadline` says when the
//! tracker next wants a `Tick` because a time-based flip is pending.

use crate::agents::{AgentProcess, Observation};
use crate::model::{AgentKind, HostedSignals, Listing, ProcessInfo, SessionKey, Timestamp};

/// Everything that can change the tracker's state. The engine loop matches on it, and nothing
/// else mutates a `Tracker`.
#[derive(Debug, Clone)]
pub enum Input {
    /// New records from one transcript (or a re-read of a stored session).
    Observed(Batch),
    /// A transcript disappeared from disk.
    TranscriptGone { key: SessionKey, transcript: String },
    /// A full process scan: the recognised agent processes alive right now.
    Processes(Vec<SeenProcess>),
    /// One agent's own listing of its live sessions.
    Listing { agent: AgentKind, listing: Listing },
    /// Signals from a hosted session's pseudo-terminal.
    Hosted {
        key: SessionKey,
        signals: HostedSignals,
    },
    /// The user's intents (park/await) as the store holds them now, each with when it was set.
    /// The list replaces the earlier one: a session missing from it has no intent.
    Intents(Vec<(SessionKey, Intent, Timestamp)>),
    /// The work items and the claims held on them now, as the store holds them: `claims` are
    /// `(item id, holder, claimed at)`. Both lists replace the earlier ones.
    Custody {
        items: Vec<WorkItemInfo>,
        claims: Vec<(String, SessionKey, Timestamp)>,
    },
    /// Signals from a hosted pseudo-terminal whose session is not known yet: they belong to the
    /// session that the process `pid` (or its parent) vouches for.
    HostedProcess { pid: u32, signals: HostedSignals },
    /// The policy changed (the config file was edited): every live session is decided again
    /// under the new one.
    Policy(Policy),
    /// Time passed; nothing else happened.
    Tick,
}

/// A work item as the tracker sees it: plain data, copied from the store by the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkItemInfo {
    pub id: String,
    pub title: String,
    pub status: ItemStatus,
    /// The ids of the items this one waits for.
    pub deps: Vec<String>,
}

/// Where a work item stands (SPEC §4 custody and next actor).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ItemStatus {
    Ready,
    Blocked,
    CiRunning,
    Done,
}

impl ItemStatus {
    pub const ALL: [ItemStatus; 4] = [
        ItemStatus::Ready,
        ItemStatus::Blocked,
        ItemStatus::CiRunning,
        ItemStatus::Done,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ItemStatus::Ready => "ready",
            ItemStatus::Blocked => "blocked",
            ItemStatus::CiRunning => "ci_running",
            ItemStatus::Done => "done",
        }
    }

    pub fn parse(text: &str) -> Option<ItemStatus> {
        ItemStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == text)
    }
}

/// Observations read from one transcript in one go.
#[derive(Debug, Clone)]
pub struct Batch {
    pub key: SessionKey,
    pub role: TranscriptRole,
    /// The transcript's path (or, for stored sessions, the store's path).
    pub transcript: String,
    /// The file's last write (its mtime): dates a closed session and untimed records.
    pub last_write: Timestamp,
    pub observations: Vec<Observation>,
    /// Canonical spellings of the folders named in `observations`: (as written, canonical).
    pub folders: Vec<(String, String)>,
}

/// Whether a transcript is the session's own or one of its sub-agents'.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TranscriptRole {
    Main,
    /// A sub-agent's transcript, rolled up into the session `key` names.
    Subagent {
        agent_id: String,
    },
}

/// A recognised agent process with its folder resolved to a canonical path by the process scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenProcess {
    pub info: ProcessInfo,
    pub recognised: AgentProcess,
    /// The canonical folder the process works in: the folder named on its command line, else its cwd.
    pub folder: Option<String>,
}

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use crate::agents::titles::{animates, classify_title, TitleKind};
use crate::agents::{CallKind, Info, ProcessRole, Record, RecordKind, Title};
use crate::model::{
    Activity, Actor, Custody, Intent, IntentState, ListedStatus, ListingEntry, NextActor, Presence,
    Reason, ReasonCode, Session, SessionId, SessionState, Status,
};

/// The times the rules use. Defaults are SPEC's; tests and the config may change them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// SPEC §1 "window": how long a quiet transcript stays open without a process, and how long a
    /// question waits before it reads as Needs you.
    pub window: Duration,
    /// A text-only model message that stays last this long ends the turn (SPEC §3 rule 6).
    pub text_settle: Duration,
    /// A tool call quiet this long is a prompt nobody answered (SPEC §3 rule 6b).
    pub quiet_call: Duration,
    /// `session_idle_minutes`: no tool activity this long makes a session silent (SPEC §4).
    pub session_idle: Duration,
    /// The most an open tool call excuses silence (SPEC §4).
    pub open_call_excuse: Duration,
    /// How much earlier than its process's start a transcript may have been written and still be
    /// vouched for by that process, to absorb clock granularity.
    pub start_slack: Duration,
    /// A hosted session's title that changed this recently is moving (SPEC §3 rules 4–5).
    pub title_moving: Duration,
    /// A hosted terminal silent this long under an open tool call is a prompt (SPEC §3 rule 6c).
    pub terminal_silence: Duration,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            window: Duration::from_secs(45),
            text_settle: Duration::from_secs(3),
            quiet_call: Duration::from_secs(30 * 60),
            session_idle: Duration::from_secs(20 * 60),
            open_call_excuse: Duration::from_secs(45 * 60),
            start_slack: Duration::from_secs(2),
            title_moving: Duration::from_secs(10),
            terminal_silence: Duration::from_secs(5),
        }
    }
}

/// A session whose decided status or reason changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub key: SessionKey,
    /// The status before, or `None` for a session seen for the first time.
    pub previous: Option<Status>,
    pub session: Session,
}

/// The tracker: every session's folded transcript, what vouches for it, and its decided state.
#[derive(Debug, Default)]
pub struct Tracker {
    policy: Policy,
    entries: HashMap<SessionKey, Entry>,
    /// Sessions first seen already closed, with nothing read from them and nothing pointing at
    /// them, kept as a small summary instead of an `Entry` (see `Closed`). Shared, so a reader
    /// elsewhere can hold the map without a copy; it is copied only when it changes while held.
    closed: Arc<HashMap<SessionKey, Closed>>,
    /// Sessions first seen in this round with nothing read (a transcript known closed and not
    /// read): transcript and last write. Each gets its entry only while it is decided, so a
    /// start-up over a long history never holds a full entry for every closed session at once.
    unseen: HashMap<SessionKey, (String, Timestamp)>,
    processes: Vec<SeenProcess>,
    listings: BTreeMap<AgentKind, Listing>,
    /// Canonical spellings of folders, as the edges resolved them.
    folders: HashMap<String, String>,
    /// Which process vouched for which session at the last decision.
    vouched: HashMap<SessionKey, Vouch>,
    /// The user's intents, with when each was set.
    intents: HashMap<SessionKey, (Intent, Timestamp)>,
    /// Work items by id.
    items: BTreeMap<String, WorkItemInfo>,
    /// Claims held now: (item id, holder, claimed at).
    claims: Vec<(String, SessionKey, Timestamp)>,
    /// Hosted signals reported by pid, before or without a session key.
    hosted_processes: HashMap<u32, HostedSignals>,
}

/// The sessions one round of inputs may have changed.
#[derive(Debug, Default)]
struct Scope {
    keys: HashSet<SessionKey>,
    /// A process scan or a listing arrived: every live session may have changed.
    live: bool,
    /// Time passed: sessions whose deadline has come may have changed.
    due: bool,
}

/// What the tracker knows about one session.
#[derive(Debug, Default)]
struct Entry {
    transcript: Option<String>,
    last_write: Option<Timestamp>,
    log: Log,
    /// Last writes of this session's sub-agent transcripts, by sub-agent id.
    subagents: HashMap<String, Timestamp>,
    /// Sessions that roll up into this one (Codex sub-agent threads and the like).
    children: HashSet<SessionKey>,
    hosted: Option<HostedSignals>,
    /// When the vouching process was seen dead (SPEC §1, presence `gone`).
    gone_at: Option<Timestamp>,
    /// True once any observation was folded into `log`.
    observed: bool,
    decision: Option<Decision>,
}

/// A closed session that nothing was read from, kept small: most of a long history is such
/// sessions, and a full `Entry` with its decided session object for each would cost tens of
/// megabytes. It keeps the rules' verdict and evidence; its session object is built again from
/// them when asked for, and is the one that was decided when the session was first seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closed {
    transcript: String,
    last_write: Timestamp,
    reason: Reason,
    presence: Presence,
    activity: Activity,
    since: Timestamp,
    evidence: Vec<String>,
}

impl Closed {
    fn new(entry: &Entry, decision: &Decision) -> Option<Closed> {
        Some(Closed {
            transcript: entry.transcript.clone()?,
            last_write: entry.last_write?,
            reason: decision.reason.clone(),
            presence: decision.presence,
            activity: decision.activity,
            since: decision.since,
            evidence: decision.evidence.clone(),
        })
    }

    /// When the session was decided closed.
    pub fn since(&self) -> Timestamp {
        self.since
    }

    /// The session object and evidence, as they were decided.
    pub fn session(&self, key: &SessionKey, policy: &Policy) -> (Session, Vec<String>) {
        let decision = self.decision(key, policy);
        (decision.session, decision.evidence)
    }

    fn entry(&self) -> Entry {
        unseen_entry(self.transcript.clone(), self.last_write)
    }

    /// The decision again. A summary has no intent, claim, vouch or hosted signals (it is made
    /// full again when one comes), so a tracker that knows nothing else builds the same object.
    fn decision(&self, key: &SessionKey, policy: &Policy) -> Decision {
        let verdict = Verdict {
            status: Status::Ended,
            reason: self.reason.clone(),
            presence: self.presence,
            since: self.since,
            deadline: None,
        };
        let alone = Tracker::new(policy.clone());
        let session = alone.session_object(key, &self.entry(), &verdict, self.activity, None, None);
        Decision {
            session,
            status: Status::Ended,
            reason: verdict.reason,
            presence: verdict.presence,
            activity: self.activity,
            since: verdict.since,
            pid: None,
            deadline: None,
            evidence: self.evidence.clone(),
        }
    }
}

/// The fold of a session's observations: the facts the rules read, kept small.
#[derive(Debug, Default, Clone)]
struct Log {
    folder: Option<String>,
    branch: Option<String>,
    cli_version: Option<String>,
    model: Option<String>,
    title: Option<Title>,
    first_prompt: Option<String>,
    last_prompt: Option<String>,
    print_mode: bool,
    parent_session: Option<String>,
    /// The newest turn record, by its time; file order breaks ties.
    last: Option<Dated>,
    /// Tool calls without a result yet, by call id.
    open_calls: BTreeMap<String, OpenCall>,
    /// Results seen, so a result written before its call does not leave the call open.
    answered: HashSet<String>,
    /// The latest tool call's time: a tool call after the process died proves presence again.
    last_tool_call: Option<Timestamp>,
    /// Codex-style explicit turns: `Some` while a started turn has not ended.
    open_turn: Option<Option<String>>,
    n_prompts: u32,
    /// The latest prompt's time: someone handed the session its next message.
    last_prompt_at: Option<Timestamp>,
    n_records: u64,
    ended_at: Option<Timestamp>,
}

#[derive(Debug, Clone)]
struct Dated {
    at: Timestamp,
    seq: u64,
    kind: RecordKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct OpenCall {
    name: String,
    detail: Option<String>,
    kind: CallKind,
    at: Timestamp,
    seq: u64,
}

/// The outcome of the rules for one session at one moment.
#[derive(Debug, Clone, PartialEq)]
struct Decision {
    status: Status,
    reason: Reason,
    presence: Presence,
    activity: Activity,
    /// When the evidence behind this status appeared.
    since: Timestamp,
    pid: Option<u32>,
    /// When this decision may change with no new input.
    deadline: Option<Timestamp>,
    evidence: Vec<String>,
    session: Session,
}

/// How a process vouches for a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum VouchKind {
    /// The agent's listing names the session, and its pid is alive with the same start time.
    Listing,
    /// The process's command line names the session.
    CommandLine,
    /// A live process of the agent works in the session's folder.
    Folder,
}

#[derive(Debug, Clone, Copy)]
struct Vouch {
    pid: u32,
    start: Timestamp,
    kind: VouchKind,
}

impl Tracker {
    pub fn new(policy: Policy) -> Tracker {
        Tracker {
            policy,
            ..Tracker::default()
        }
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Applies one input at `now` and returns the sessions whose status or reason changed.
    pub fn apply(&mut self, input: Input, now: Timestamp) -> Vec<Change> {
        self.apply_all([input], now)
    }

    /// Applies several inputs at `now`, deciding once at the end: a start-up scan of thousands of
    /// transcripts costs one decision per session, not one per transcript.
    pub fn apply_all(
        &mut self,
        inputs: impl IntoIterator<Item = Input>,
        now: Timestamp,
    ) -> Vec<Change> {
        let mut scope = Scope::default();
        for input in inputs {
            self.ingest(input, &mut scope);
        }
        self.decide_scope(scope, now)
    }

    fn ingest(&mut self, input: Input, scope: &mut Scope) {
        match input {
            Input::Observed(batch) => {
                scope.keys.insert(batch.key.clone());
                if let Some(parent) = self.observe(batch) {
                    scope.keys.insert(parent);
                }
            }
            Input::TranscriptGone { key, transcript } => {
                if self
                    .closed
                    .get(&key)
                    .is_some_and(|closed| closed.transcript == transcript)
                {
                    // The file of a closed summary went away: nothing is left to list.
                    Arc::make_mut(&mut self.closed).remove(&key);
                }
                if self
                    .unseen
                    .get(&key)
                    .is_some_and(|(unseen, _)| *unseen == transcript)
                {
                    self.unseen.remove(&key);
                }
                if let Some(entry) = self.entries.get_mut(&key) {
                    if entry.transcript.as_deref() == Some(transcript.as_str()) {
                        entry.transcript = None;
                    }
                }
                scope.keys.insert(key);
            }
            Input::Processes(processes) => {
                // A hosted process seen alive before and missing now has exited: its signals
                // must not follow a recycled pid.
                let before: HashSet<u32> = self.processes.iter().map(|p| p.info.pid).collect();
                let after: HashSet<u32> = processes.iter().map(|p| p.info.pid).collect();
                self.hosted_processes
                    .retain(|pid, _| !before.contains(pid) || after.contains(pid));
                self.processes = processes;
                scope.live = true;
            }
            Input::Listing { agent, listing } => {
                // A listing may decide a session it names, so such a session needs its entry.
                for listed in &listing.entries {
                    self.reopen(&SessionKey::new(agent, listed.session_id.clone()));
                }
                self.listings.insert(agent, listing);
                scope.live = true;
            }
            Input::Hosted { key, signals } => {
                merge_hosted(&mut self.entry_mut(&key).hosted, signals);
                scope.keys.insert(key);
            }
            Input::Intents(intents) => {
                let intents: HashMap<SessionKey, (Intent, Timestamp)> = intents
                    .into_iter()
                    .filter(|(_, intent, _)| intent.state != IntentState::None)
                    .map(|(key, intent, at)| (key, (intent, at)))
                    .collect();
                let touched: Vec<SessionKey> = self
                    .intents
                    .keys()
                    .chain(intents.keys())
                    .filter(|key| self.intents.get(*key) != intents.get(*key))
                    .cloned()
                    .collect();
                for key in touched {
                    if self.reopen(&key) {
                        scope.keys.insert(key);
                    }
                }
                self.intents = intents;
            }
            Input::Custody { items, claims } => {
                // An item's status or dependencies touch every holder, so every holder before
                // and after is decided again; so is every session awaiting an item.
                let holders: Vec<SessionKey> = self
                    .claims
                    .iter()
                    .chain(claims.iter())
                    .map(|(_, key, _)| key.clone())
                    .collect();
                let awaiting: Vec<SessionKey> = self
                    .intents
                    .iter()
                    .filter(|(_, (intent, _))| intent.awaiting_who.is_some())
                    .map(|(key, _)| key.clone())
                    .collect();
                for key in holders.into_iter().chain(awaiting) {
                    if self.reopen(&key) {
                        scope.keys.insert(key);
                    }
                }
                self.items = items
                    .into_iter()
                    .map(|item| (item.id.clone(), item))
                    .collect();
                self.claims = claims;
            }
            Input::HostedProcess { pid, signals } => {
                let mut held = self.hosted_processes.remove(&pid);
                merge_hosted(&mut held, signals);
                if let Some(held) = held {
                    self.hosted_processes.insert(pid, held);
                }
                scope.live = true;
            }
            Input::Policy(policy) => {
                self.policy = policy;
                scope.live = true;
            }
            Input::Tick => scope.due = true,
        }
    }

    /// When the tracker next wants a `Tick`: the earliest time a decision flips on its own.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        self.entries
            .values()
            .filter_map(|entry| entry.decision.as_ref()?.deadline)
            .min()
    }

    /// Every session with a transcript, as last decided, except the closed ones kept as
    /// summaries (`closed`; `all_sessions` gives both). Sub-agent sessions are rolled up into
    /// their parents and not listed.
    pub fn sessions(&self) -> impl Iterator<Item = &Session> {
        self.entries
            .values()
            .filter(|entry| entry.transcript.is_some() && entry.log.parent_session.is_none())
            .filter_map(|entry| entry.decision.as_ref().map(|decision| &decision.session))
    }

    /// The closed sessions kept as summaries: sessions first seen closed with nothing read.
    pub fn closed(&self) -> &Arc<HashMap<SessionKey, Closed>> {
        &self.closed
    }

    /// Every listed session, the closed summaries decided again included.
    pub fn all_sessions(&self) -> Vec<Session> {
        let summaries = self
            .closed
            .iter()
            .map(|(key, closed)| closed.session(key, &self.policy).0);
        self.sessions().cloned().chain(summaries).collect()
    }

    pub fn session(&self, key: &SessionKey) -> Option<Session> {
        if let Some(closed) = self.closed.get(key) {
            return Some(closed.session(key, &self.policy).0);
        }
        let decision = self.entries.get(key)?.decision.as_ref()?;
        Some(decision.session.clone())
    }

    /// The facts that decided a session's state, for `slate show` and `slate doctor`.
    pub fn evidence(&self, key: &SessionKey) -> Vec<String> {
        if let Some(closed) = self.closed.get(key) {
            return closed.session(key, &self.policy).1;
        }
        self.entries
            .get(key)
            .and_then(|entry| entry.decision.as_ref())
            .map(|decision| decision.evidence.clone())
            .unwrap_or_default()
    }

    /// The entry of `key`, made (or brought back from a closed summary) when there is none.
    fn entry_mut(&mut self, key: &SessionKey) -> &mut Entry {
        self.reopen(key);
        self.entries.entry(key.clone()).or_default()
    }

    /// Gives a session known only as unseen or as a closed summary its full entry (a summary
    /// with the decision it had), because something now touches it. Returns whether the session
    /// has an entry.
    fn reopen(&mut self, key: &SessionKey) -> bool {
        if let Some((transcript, last_write)) = self.unseen.remove(key) {
            self.entries
                .insert(key.clone(), unseen_entry(transcript, last_write));
        }
        if let Some(closed) = self.closed.get(key) {
            let decision = closed.decision(key, &self.policy);
            let mut entry = closed.entry();
            entry.decision = Some(decision);
            Arc::make_mut(&mut self.closed).remove(key);
            self.entries.insert(key.clone(), entry);
        }
        self.entries.contains_key(key)
    }

    /// Whether a session just decided for the first time can be kept as a closed summary:
    /// closed for good, with nothing read, and nothing else that the rules could read about it.
    fn summarisable(
        &self,
        key: &SessionKey,
        entry: &Entry,
        decision: &Decision,
        vouches: &HashMap<SessionKey, Vouch>,
    ) -> bool {
        decision.status == Status::Ended
            && decision.deadline.is_none()
            && !entry.observed
            && entry.transcript.is_some()
            && entry.last_write.is_some()
            && entry.subagents.is_empty()
            && entry.children.is_empty()
            && entry.hosted.is_none()
            && entry.gone_at.is_none()
            && !vouches.contains_key(key)
            && !self.intents.contains_key(key)
            && !self.claims.iter().any(|(_, holder, _)| holder == key)
            && !self.listings.values().any(|listing| {
                listing
                    .entries
                    .iter()
                    .any(|listed| listed.session_id == key.id.as_str())
            })
    }

    /// The sessions a live process vouched for at the last decision, including listed sessions
    /// whose transcript has not been read yet.
    pub fn vouched_keys(&self) -> impl Iterator<Item = &SessionKey> {
        self.vouched.keys()
    }

    /// The pid vouching for a session, if any.
    pub fn vouching_pid(&self, key: &SessionKey) -> Option<u32> {
        self.vouched.get(key).map(|vouch| vouch.pid)
    }

    /// The processes the last scan recognised.
    pub fn processes(&self) -> &[SeenProcess] {
        &self.processes
    }

    /// Folds a batch into its session; returns the parent session it rolls up into, if any.
    fn observe(&mut self, batch: Batch) -> Option<SessionKey> {
        for (written, canonical) in batch.folders {
            self.folders.insert(written, canonical);
        }
        let key = batch.key;
        match batch.role {
            TranscriptRole::Subagent { agent_id } => {
                let entry = self.entry_mut(&key);
                let last = entry.subagents.entry(agent_id).or_insert(batch.last_write);
                *last = (*last).max(batch.last_write);
            }
            TranscriptRole::Main
                if batch.observations.is_empty()
                    && !self.entries.contains_key(&key)
                    && !self.closed.contains_key(&key) =>
            {
                let last_write = self
                    .unseen
                    .get(&key)
                    .map_or(batch.last_write, |(_, last)| (*last).max(batch.last_write));
                self.unseen.insert(key, (batch.transcript, last_write));
            }
            TranscriptRole::Main => {
                let entry = self.entry_mut(&key);
                entry.transcript = Some(batch.transcript);
                entry.observed |= !batch.observations.is_empty();
                entry.last_write = Some(
                    entry
                        .last_write
                        .map_or(batch.last_write, |last| last.max(batch.last_write)),
                );
                for observation in batch.observations {
                    entry.log.fold(observation, batch.last_write);
                }
                if let Some(parent) = entry.log.parent_session.clone() {
                    let parent_key = SessionKey::new(key.agent, parent);
                    self.entry_mut(&parent_key).children.insert(key);
                    return Some(parent_key);
                }
            }
        }
        None
    }

    fn canonical<'a>(&'a self, folder: &'a str) -> &'a str {
        self.folders.get(folder).map_or(folder, String::as_str)
    }

    /// Decides again the sessions an input may have changed: the ones it named, the ones whose
    /// vouching process changed, every live one after a process scan or a listing, and the ones
    /// whose deadline has come. Closed sessions nothing touched keep their decision.
    fn decide_scope(&mut self, scope: Scope, now: Timestamp) -> Vec<Change> {
        let vouches = self.vouches();
        let mut keys = scope.keys;
        for key in vouches.keys() {
            self.reopen(key);
        }
        self.attach_hosted(&vouches);
        keys.extend(self.remember_deaths(&vouches, now));
        for (key, entry) in &self.entries {
            let Some(decision) = &entry.decision else {
                keys.insert(key.clone());
                continue;
            };
            let live = decision.status != Status::Ended || decision.deadline.is_some();
            let due = decision.deadline.is_some_and(|deadline| deadline <= now);
            if (scope.live && live) || (scope.due && due) {
                keys.insert(key.clone());
            }
        }
        let mut changes = Vec::new();
        for key in keys {
            if !self.reopen(&key) {
                continue;
            }
            let decision = self.decide(&key, vouches.get(&key).copied(), now);
            let entry = &self.entries[&key];
            if entry.decision.is_none() && self.summarisable(&key, entry, &decision, &vouches) {
                // First seen, and closed for good: kept small, and no change to report, since
                // nobody saw it otherwise.
                let closed = Closed::new(entry, &decision).expect("summarisable has both");
                debug_assert!(closed.decision(&key, &self.policy) == decision);
                self.entries.remove(&key);
                Arc::make_mut(&mut self.closed).insert(key, closed);
                continue;
            }
            let entry = self.entries.get_mut(&key).expect("checked above");
            let previous = entry.decision.take();
            let changed = previous.as_ref().is_none_or(|previous| {
                previous.status != decision.status
                    || previous.reason != decision.reason
                    || previous.activity != decision.activity
                    || facets_changed(
                        &previous.session.session_state,
                        &decision.session.session_state,
                    )
                    || previous.session.hosted != decision.session.hosted
            });
            let listed = entry.transcript.is_some() && entry.log.parent_session.is_none();
            if changed && listed {
                changes.push(Change {
                    key: key.clone(),
                    previous: previous.as_ref().map(|previous| previous.status),
                    session: decision.session.clone(),
                });
            }
            entry.decision = Some(decision);
        }
        debug_assert!(self.unseen.is_empty(), "every unseen session is in scope");
        self.vouched = vouches;
        changes.sort_by(|a, b| a.key.cmp(&b.key));
        changes
    }

    /// Gives each session the hosted signals reported for the process that vouches for it (or
    /// for that process's parent: Gemini relaunches itself in a child process).
    fn attach_hosted(&mut self, vouches: &HashMap<SessionKey, Vouch>) {
        if self.hosted_processes.is_empty() {
            return;
        }
        for (key, vouch) in vouches {
            let parent = self
                .processes
                .iter()
                .find(|process| process.info.pid == vouch.pid)
                .and_then(|process| process.info.ppid);
            let signals = self
                .hosted_processes
                .get(&vouch.pid)
                .or_else(|| parent.and_then(|ppid| self.hosted_processes.get(&ppid)));
            if let (Some(signals), Some(entry)) = (signals, self.entries.get_mut(key)) {
                entry.hosted = Some(signals.clone());
            }
        }
    }

    /// Records the death of processes that vouched at the previous decision, and forgets it when
    /// a live process vouches again. Returns the sessions whose vouching changed.
    fn remember_deaths(
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
        touched.sort();
        touched.dedup();
        for key in &touched {
            let Some(entry) = self.entries.get_mut(key) else {
                continue;
            };
            match (vouches.get(key), self.vouched.get(key)) {
                (Some(_), _) => entry.gone_at = None,
                (None, Some(previous)) => {
                    if !alive.contains(&(previous.pid, previous.start)) {
                        entry.gone_at = Some(now);
                    }
                }
                (None, None) => {}
            }
        }
        touched
    }

    /// Which live process vouches for which session (SPEC §1 "vouch").
    fn vouches(&self) -> HashMap<SessionKey, Vouch> {
        let mut vouches = HashMap::new();
        let mut pools: BTreeMap<(AgentKind, String), Vec<&SeenProcess>> = BTreeMap::new();
        for process in &self.processes {
            let agent = process.recognised.agent;
            if !matches!(
                process.recognised.role,
                ProcessRole::Interactive | ProcessRole::Print
            ) {
                continue;
            }
            let vouch = |kind| Vouch {
                pid: process.info.pid,
                start: process.info.start_time,
                kind,
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
        // before it started (SPEC §1).
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
                    },
                );
                if free.is_empty() {
                    break;
                }
            }
        }
        vouches
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

    fn decide(&self, key: &SessionKey, vouch: Option<Vouch>, now: Timestamp) -> Decision {
        let entry = &self.entries[key];
        let mut evidence = Vec::new();
        let verdict = self.rules(key, entry, vouch, now, &mut evidence);
        let log = &entry.log;
        let activity = activity(log, verdict.status, now, &self.policy);
        let deadline = if verdict.status == Status::Ended {
            verdict.deadline
        } else {
            earliest(verdict.deadline, activity_deadline(log, now, &self.policy))
        };
        let pid = vouch.map(|vouch| vouch.pid);
        let row_time = log.last.as_ref().map(|last| last.at);
        Decision {
            session: self.session_object(key, entry, &verdict, activity, pid, row_time),
            status: verdict.status,
            reason: verdict.reason,
            presence: verdict.presence,
            activity,
            since: verdict.since,
            pid,
            deadline,
            evidence,
        }
    }

    /// SPEC §3, in priority order. Each rule that decides returns; `evidence` collects the facts
    /// looked at on the way.
    fn rules(
        &self,
        key: &SessionKey,
        entry: &Entry,
        vouch: Option<Vouch>,
        now: Timestamp,
        evidence: &mut Vec<String>,
    ) -> Verdict {
        let log = &entry.log;
        let policy = &self.policy;
        let last_write = entry.last_write.unwrap_or(now);
        let listing = self
            .listings
            .get(&key.agent)
            .filter(|listing| listing.available);
        let listed = listing.and_then(|listing| {
            listing
                .entries
                .iter()
                .find(|listed| listed.session_id == key.id.as_str())
        });
        if let Some(listed) = listed {
            evidence.push(describe_listed(listed));
        }
        let subagent_write = self.subagent_write(entry);
        // Rule 1: closed.
        if let Some(ended_at) = log.ended_at {
            evidence.push(format!(
                "the agent recorded the session's end at {ended_at}"
            ));
            let reason = Reason::new(ReasonCode::EndStamp, "The session ended");
            return verdict(Status::Ended, reason, Presence::Ended, ended_at, None);
        }
        if let Some(listed) = listed {
            if listed.status == Some(ListedStatus::Finished) && !listed.interactive {
                let reason = Reason::new(
                    ReasonCode::ListingDone,
                    format!("{} reports the job finished", key.agent.display_name()),
                );
                let since = listed.updated_at.unwrap_or(last_write);
                return verdict(Status::Ended, reason, Presence::Ended, since, None);
            }
        }
        match vouch {
            Some(vouch) => evidence.push(format!(
                "process {} vouches for it ({})",
                vouch.pid,
                match vouch.kind {
                    VouchKind::Listing => "listed by the agent",
                    VouchKind::CommandLine => "named on its command line",
                    VouchKind::Folder => "works in its folder",
                }
            )),
            None => {
                let death = entry.gone_at.filter(|gone_at| {
                    log.last_tool_call
                        .is_none_or(|tool_call_at| tool_call_at <= *gone_at)
                });
                if let Some(gone_at) = death {
                    evidence.push(format!("the process that vouched for it died at {gone_at}"));
                    let reason = Reason::new(ReasonCode::ProcessGone, "The agent's process exited");
                    return verdict(Status::Ended, reason, Presence::Gone, gone_at, None);
                }
                if let Some(gone_at) = entry.gone_at {
                    evidence.push(format!(
                        "a tool call after its process died at {gone_at} proves it present again"
                    ));
                }
                if listing.is_some() && !self.agent_has_unlisted_process(key.agent) {
                    evidence.push(format!(
                        "{} lists its live sessions and this one is not among them",
                        key.agent.display_name()
                    ));
                    let reason = Reason::new(
                        ReasonCode::NotListed,
                        format!("{} no longer lists the session", key.agent.display_name()),
                    );
                    return verdict(Status::Ended, reason, Presence::Gone, last_write, None);
                }
                let quiet_until = last_write.plus(policy.window);
                if now >= quiet_until {
                    evidence.push(format!(
                        "no live process vouches for it and its transcript has been quiet since {last_write}"
                    ));
                    let reason = Reason::new(
                        ReasonCode::NoProcess,
                        "No live process, and the transcript is quiet",
                    );
                    return verdict(Status::Ended, reason, Presence::Gone, last_write, None);
                }
                evidence.push(format!(
                    "no live process vouches for it, but it was written at {last_write}, within the window"
                ));
            }
        }
        let closes_at = vouch.is_none().then(|| last_write.plus(policy.window));

        // Rules 2–3: the agent's own listing decides the status where it reports one.
        let posture = posture(log, entry.last_write, now, policy);
        evidence.push(posture.describe());
        let listed_alive =
            listed.filter(|_| matches!(vouch, Some(v) if v.kind == VouchKind::Listing));
        if let Some(listed) = listed_alive {
            match listed.status {
                Some(ListedStatus::Busy) => {
                    let reason = match &posture.outcome {
                        Outcome::Working(reason) => reason.clone(),
                        _ => Reason::new(
                            ReasonCode::ListingBusy,
                            format!("{} reports the session busy", key.agent.display_name()),
                        ),
                    };
                    let since = listed.updated_at.unwrap_or(last_write);
                    return verdict(Status::Working, reason, Presence::Present, since, None);
                }
                Some(ListedStatus::Waiting) => {
                    let reason = waiting_reason(listed.waiting_for.as_deref(), log);
                    let since = listed.updated_at.unwrap_or(last_write);
                    return verdict(Status::Waiting, reason, Presence::Present, since, None);
                }
                Some(ListedStatus::Idle) | Some(ListedStatus::Finished) => {
                    let since = listed.updated_at.unwrap_or(last_write);
                    let reason = match &posture.outcome {
                        Outcome::Waiting(reason) => reason.clone(),
                        _ if log.n_records == 0 => new_session_reason(),
                        _ => Reason::new(ReasonCode::TurnFinished, "The turn finished"),
                    };
                    return finish(log, reason, since, None);
                }
                None => {}
            }
        }

        // Rules 4, 5 and 6c: what a hosted session's terminal shows.
        let mut hosted_deadline = None;
        if let Some(signals) = &entry.hosted {
            let hosted = hosted_rules(key.agent, signals, log, &posture, now, policy);
            evidence.extend(hosted.evidence);
            if let Some((status, reason, since, deadline)) = hosted.verdict {
                let deadline = earliest(deadline, closes_at);
                return verdict(status, reason, Presence::Present, since, deadline);
            }
            hosted_deadline = hosted.deadline;
        }

        // Rule 4: signals that keep a session Working over the timing rules.
        let subagent_fresh = subagent_write.filter(|written| now < written.plus(policy.window));

        // Rule 6–7: the transcript.
        let closes_at = earliest(closes_at, hosted_deadline);
        let deadline = earliest(posture.deadline, closes_at);
        match posture.outcome {
            Outcome::Working(reason) => {
                let since = posture.since;
                verdict(Status::Working, reason, Presence::Present, since, deadline)
            }
            Outcome::Waiting(reason) => {
                if posture.timed {
                    if let Some(written) = subagent_fresh {
                        evidence_note(evidence, written);
                        let reason = Reason::new(
                            ReasonCode::SubagentRunning,
                            "A sub-agent is still writing",
                        );
                        let deadline = earliest(Some(written.plus(policy.window)), closes_at);
                        return verdict(
                            Status::Working,
                            reason,
                            Presence::Present,
                            written,
                            deadline,
                        );
                    }
                }
                finish(log, reason, posture.since, closes_at)
            }
        }
    }

    /// True when some live process of this agent is not accounted for by its listing, so an
    /// unlisted session may still be vouched by folder (an older CLI that keeps no registry).
    fn agent_has_unlisted_process(&self, agent: AgentKind) -> bool {
        self.processes.iter().any(|process| {
            process.recognised.agent == agent
                && matches!(
                    process.recognised.role,
                    ProcessRole::Interactive | ProcessRole::Print
                )
                && self.listed_entry_for_pid(agent, &process.info).is_none()
                && process.recognised.session_arg.is_none()
        })
    }

    fn subagent_write(&self, entry: &Entry) -> Option<Timestamp> {
        let own = entry.subagents.values().copied().max();
        let children = entry
            .children
            .iter()
            .filter_map(|child| self.entries.get(child)?.last_write)
            .max();
        own.max(children)
    }

    fn session_object(
        &self,
        key: &SessionKey,
        entry: &Entry,
        verdict: &Verdict,
        activity: Activity,
        pid: Option<u32>,
        row_time: Option<Timestamp>,
    ) -> Session {
        let (status, reason, presence) = (verdict.status, &verdict.reason, verdict.presence);
        let log = &entry.log;
        let folder = log.folder.clone();
        let project = folder.as_deref().map(project_name);
        let row_time = if status == Status::Ended {
            entry.last_write.or(row_time)
        } else {
            row_time.or(entry.last_write)
        };
        let intent = self.intents.get(key);
        let custody = self.custody(key, log, status, presence);
        let next_actor = self.next_actor(key, log, verdict, intent);
        Session {
            agent: key.agent,
            id: SessionId::new(key.id.as_str()),
            folder,
            project,
            title: log
                .title
                .as_ref()
                .map(|title| title.text.clone())
                .or_else(|| log.first_prompt.clone()),
            last_prompt: log.last_prompt.clone(),
            branch: log.branch.clone(),
            row_time,
            pid,
            transcript: entry.transcript.clone(),
            model: log.model.clone(),
            cli_version: log.cli_version.clone(),
            hosted: entry.hosted.is_some(),
            status,
            session_state: SessionState {
                status,
                active_at: log.last.as_ref().map(|last| last.at),
                reason: reason.clone(),
                presence,
                activity,
                intent: intent.map(|(intent, _)| intent.clone()).unwrap_or_default(),
                custody,
                next_actor,
            },
            // Git facts are the live service's to add.
            ahead: None,
            behind: None,
            dirty: None,
        }
    }
}

/// A Needs-you verdict, except for print-mode runs, which never wait: their turn's end is the
/// session's end.
fn finish(log: &Log, reason: Reason, since: Timestamp, deadline: Option<Timestamp>) -> Verdict {
    if log.print_mode && reason.code != ReasonCode::Question {
        let reason = Reason::new(
            ReasonCode::PrintFinished,
            "The non-interactive run finished",
        );
        return verdict(Status::Ended, reason, Presence::Ended, since, None);
    }
    verdict(Status::Waiting, reason, Presence::Present, since, deadline)
}

/// What the rules decided, before it is dressed as a session object.
struct Verdict {
    status: Status,
    reason: Reason,
    presence: Presence,
    since: Timestamp,
    deadline: Option<Timestamp>,
}

fn verdict(
    status: Status,
    reason: Reason,
    presence: Presence,
    since: Timestamp,
    deadline: Option<Timestamp>,
) -> Verdict {
    Verdict {
        status,
        reason,
        presence,
        since,
        deadline,
    }
}

fn evidence_note(evidence: &mut Vec<String>, written: Timestamp) {
    evidence.push(format!("a sub-agent transcript was written at {written}"));
}

fn earliest(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
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

fn describe_listed(listed: &ListingEntry) -> String {
    let status = match listed.status {
        Some(ListedStatus::Busy) => "busy",
        Some(ListedStatus::Idle) => "idle",
        Some(ListedStatus::Waiting) => "waiting",
        Some(ListedStatus::Finished) => "finished",
        None => "no status",
    };
    let waiting_for = listed
        .waiting_for
        .as_deref()
        .map(|what| format!(" ({what})"))
        .unwrap_or_default();
    match listed.pid {
        Some(pid) => format!("the agent lists it as {status}{waiting_for}, pid {pid}"),
        None => format!("the agent lists it as {status}{waiting_for}"),
    }
}

fn new_session_reason() -> Reason {
    Reason::new(ReasonCode::NewSession, "Waiting for the first prompt")
}

/// The reason for a listing's `waiting`: the pending tool call says more than `waitingFor`,
/// which some versions write as "permission prompt" for questions too (FORMATS.md §9).
fn waiting_reason(waiting_for: Option<&str>, log: &Log) -> Reason {
    match log.newest_open_call().map(|call| call.kind) {
        Some(CallKind::Question) => return question_reason(log.newest_open_call()),
        Some(CallKind::PlanApproval) => {
            return Reason::new(ReasonCode::PlanApproval, "A plan is waiting for approval")
        }
        _ => {}
    }
    let what = waiting_for.unwrap_or_default().to_ascii_lowercase();
    if what.contains("input") {
        question_reason(None)
    } else if what.contains("permission") || what.contains("approve") {
        let text = match log.newest_open_call() {
            Some(call) => format!("Asks permission for {}", call_label(call)),
            None => "Asks permission".to_string(),
        };
        Reason::new(ReasonCode::PermissionPrompt, text)
    } else {
        let text = match waiting_for {
            Some(what) if !what.is_empty() => format!("A dialog is open: {what}"),
            _ => "A dialog is open".to_string(),
        };
        Reason::new(ReasonCode::Dialog, text)
    }
}

fn question_reason(call: Option<&OpenCall>) -> Reason {
    let text = match call.and_then(|call| call.detail.as_deref()) {
        Some(question) => format!("Asks: {question}"),
        None => "Asks you a question".to_string(),
    };
    Reason::new(ReasonCode::Question, text)
}

fn call_label(call: &OpenCall) -> String {
    match &call.detail {
        Some(detail) => format!("{}: {detail}", call.name),
        None => call.name.clone(),
    }
}

fn project_name(folder: &str) -> String {
    let trimmed = folder.trim_end_matches(['/', '\\']);
    trimmed
        .rsplit(['/', '\\'])
        .next()
        .filter(|name| !name.is_empty())
        .unwrap_or(trimmed)
        .to_string()
}

/// What the transcript alone says (SPEC §3 rules 6–7).
struct Posture {
    outcome: Outcome,
    /// When the evidence appeared.
    since: Timestamp,
    /// When the outcome may change by time alone.
    deadline: Option<Timestamp>,
    /// True when time, not a record, made this a Needs you: keep-Working signals override it.
    timed: bool,
    description: String,
}

enum Outcome {
    Working(Reason),
    Waiting(Reason),
}

impl Posture {
    fn describe(&self) -> String {
        self.description.clone()
    }
}

fn posture(log: &Log, last_write: Option<Timestamp>, now: Timestamp, policy: &Policy) -> Posture {
    let working = |reason, since, deadline, description: String| Posture {
        outcome: Outcome::Working(reason),
        since,
        deadline,
        timed: false,
        description,
    };
    let waiting = |reason, since, timed, description: String| Posture {
        outcome: Outcome::Waiting(reason),
        since,
        deadline: None,
        timed,
        description,
    };
    let Some(last) = &log.last else {
        // A CLI writes a new transcript's first lines a moment apart (Codex its session header,
        // then the prompt): one just written is not yet waiting for a first prompt.
        if let Some(written) = last_write {
            let settles_at = written.plus(policy.text_settle);
            if now < settles_at {
                return working(
                    Reason::new(ReasonCode::RecentActivity, "The session is starting"),
                    written,
                    Some(settles_at),
                    format!("the transcript was started at {written} and has no turn record yet"),
                );
            }
        }
        return waiting(
            new_session_reason(),
            now,
            false,
            "the transcript has no turn record yet".to_string(),
        );
    };
    if let Some(call) = log.newest_open_call() {
        let label = call_label(call);
        let quiet_from = call.at.max(last.at);
        let quiet_at = quiet_from.plus(policy.quiet_call);
        if now >= quiet_at {
            let minutes = quiet_from.elapsed_until(now).as_secs() / 60;
            return waiting(
                Reason::new(
                    ReasonCode::QuietCall,
                    format!("A tool call has been quiet for {minutes} min: {label}"),
                ),
                quiet_at,
                true,
                format!("the tool call {label} has had no result since {}", call.at),
            );
        }
        let asks = match call.kind {
            CallKind::Question => Some(question_reason(Some(call))),
            CallKind::PlanApproval => Some(Reason::new(
                ReasonCode::PlanApproval,
                "A plan is waiting for approval",
            )),
            _ => None,
        };
        if let Some(reason) = asks {
            let asks_at = call.at.plus(policy.window);
            if now >= asks_at {
                return waiting(
                    reason,
                    call.at,
                    false,
                    format!("{label} has waited since {} with no answer", call.at),
                );
            }
            return working(
                Reason::new(ReasonCode::ToolRunning, format!("Asking: {label}")),
                call.at,
                Some(asks_at),
                format!(
                    "{label} was asked at {}; the window has not passed",
                    call.at
                ),
            );
        }
        let text = match call.kind {
            CallKind::Escalated => format!("Running {label} (may be waiting for approval)"),
            CallKind::SubAgent => format!("A sub-agent is running: {label}"),
            _ => format!("Running {label}"),
        };
        return working(
            Reason::new(ReasonCode::ToolRunning, text),
            call.at,
            Some(quiet_at),
            format!("the tool call {label} at {} has no result yet", call.at),
        );
    }
    let at = last.at;
    match &last.kind {
        RecordKind::Prompt { .. }
        | RecordKind::ToolResult { .. }
        | RecordKind::TurnStarted { .. } => working(
            Reason::new(ReasonCode::ModelAnswering, "The model is answering"),
            at,
            None,
            format!("the last turn record, at {at}, asks the model to answer"),
        ),
        RecordKind::ModelThinking => working(
            Reason::new(ReasonCode::ModelAnswering, "The model is thinking"),
            at,
            None,
            format!("the model was thinking at {at}"),
        ),
        RecordKind::Retrying => working(
            Reason::new(
                ReasonCode::ModelRetrying,
                "The model is retrying after an API error",
            ),
            at,
            None,
            format!("an API error at {at} is being retried"),
        ),
        RecordKind::Compacting => working(
            Reason::new(
                ReasonCode::Compacting,
                "The conversation is being compacted",
            ),
            at,
            None,
            format!("compaction started at {at}"),
        ),
        RecordKind::ModelText | RecordKind::ToolCall { .. } => {
            if log.open_turn.is_some() {
                return working(
                    Reason::new(ReasonCode::ModelAnswering, "The model is answering"),
                    at,
                    None,
                    format!("the turn is still open after the model wrote at {at}"),
                );
            }
            let settles_at = at.plus(policy.text_settle);
            if now >= settles_at {
                waiting(
                    Reason::new(ReasonCode::TurnFinished, "The turn finished"),
                    at,
                    true,
                    format!("the model's text at {at} stayed last"),
                )
            } else {
                working(
                    Reason::new(ReasonCode::ModelAnswering, "The model is answering"),
                    at,
                    Some(settles_at),
                    format!("the model wrote text at {at}; more may follow"),
                )
            }
        }
        RecordKind::TurnEnded { .. } => waiting(
            Reason::new(ReasonCode::TurnFinished, "The turn finished"),
            at,
            false,
            format!("the turn ended at {at}"),
        ),
        RecordKind::Interrupted { .. } => waiting(
            Reason::new(ReasonCode::Interrupted, "The turn was interrupted"),
            at,
            false,
            format!("the turn was interrupted at {at}"),
        ),
        RecordKind::TurnFailed { message } => {
            let text = match message {
                Some(message) => format!("The turn failed: {message}"),
                None => "The turn failed".to_string(),
            };
            waiting(
                Reason::new(ReasonCode::TurnFailed, text),
                at,
                false,
                format!("the turn failed at {at}"),
            )
        }
        RecordKind::SessionEnded => waiting(
            Reason::new(ReasonCode::EndStamp, "The session ended"),
            at,
            false,
            format!("the session ended at {at}"),
        ),
        RecordKind::Unsettled => {
            let flips_at = at.plus(policy.window);
            if now >= flips_at {
                waiting(
                    Reason::new(
                        ReasonCode::Unknown,
                        "Quiet since its last turn record; nothing says what it waits for",
                    ),
                    flips_at,
                    true,
                    format!("the last turn record at {at} does not settle the state, and the window has passed"),
                )
            } else {
                working(
                    Reason::new(ReasonCode::RecentActivity, "Recently active"),
                    at,
                    Some(flips_at),
                    format!("the last turn record at {at} does not settle the state; the window has not passed"),
                )
            }
        }
    }
}

/// How many titles a hosted session keeps: enough to have seen the spinner that last moved.
const HOSTED_TITLES_KEPT: usize = 64;

/// Folds a new report into a hosted session's signals: titles are appended in time order
/// (a report may repeat titles already seen), the newest draw wins, and the history is bounded.
fn merge_hosted(held: &mut Option<HostedSignals>, signals: HostedSignals) {
    let held = held.get_or_insert_with(HostedSignals::default);
    if signals.pid.is_some() {
        held.pid = signals.pid;
    }
    for (at, title) in signals.titles {
        if held
            .titles
            .iter()
            .any(|(seen, text)| *seen == at && *text == title)
        {
            continue;
        }
        let index = held.titles.partition_point(|(seen, _)| *seen <= at);
        held.titles.insert(index, (at, title));
    }
    let excess = held.titles.len().saturating_sub(HOSTED_TITLES_KEPT);
    held.titles.drain(..excess);
    held.last_draw = held.last_draw.max(signals.last_draw);
}

/// The current title of a hosted terminal, read with its agent's grammar.
struct CurrentTitle {
    text: String,
    kind: TitleKind,
    /// When the title last changed: the first sighting of the trailing run of this title (for a
    /// blinking action-required title, of this kind).
    changed_at: Timestamp,
}

fn current_title(agent: AgentKind, titles: &[(Timestamp, String)]) -> Option<CurrentTitle> {
    let (at, text) = titles.last()?;
    let kind = classify_title(agent, text);
    let mut changed_at = *at;
    for (seen, earlier) in titles.iter().rev().skip(1) {
        let same = if kind == TitleKind::ActionRequired {
            classify_title(agent, earlier) == kind
        } else {
            earlier.trim_end() == text.trim_end()
        };
        if !same {
            break;
        }
        changed_at = *seen;
    }
    Some(CurrentTitle {
        text: text.trim_end().to_string(),
        kind,
        changed_at,
    })
}

/// What a hosted terminal decides: a verdict (status, reason, since, deadline) that overrides the
/// transcript, or only a time at which it may start to.
#[derive(Default)]
struct Hosted {
    verdict: Option<(Status, Reason, Timestamp, Option<Timestamp>)>,
    deadline: Option<Timestamp>,
    evidence: Vec<String>,
}

/// SPEC §3 rules 4, 5 and 6c for a hosted session. An action-required title is Needs you at once;
/// a spinner that moved within `title_moving` keeps the session Working over the timing rules
/// (never over a turn the transcript ended); an open tool call under a terminal that has drawn
/// nothing for `terminal_silence` is a prompt; a static busy title keeps Working like a moving
/// one; and a title that was seen to move and then stopped for `title_moving` is Needs you
/// (`title_stopped`) unless the transcript names a more specific reason.
fn hosted_rules(
    agent: AgentKind,
    signals: &HostedSignals,
    log: &Log,
    posture: &Posture,
    now: Timestamp,
    policy: &Policy,
) -> Hosted {
    let mut hosted = Hosted::default();
    let current = current_title(agent, &signals.titles);
    let transcript_decides = matches!(posture.outcome, Outcome::Waiting(_)) && !posture.timed;
    let keep_working = |reason: Reason, since: Timestamp, until: Option<Timestamp>| {
        let (reason, since, deadline) = match &posture.outcome {
            Outcome::Working(own) => (
                own.clone(),
                posture.since,
                earliest(posture.deadline, until),
            ),
            Outcome::Waiting(_) => (reason, since, until),
        };
        Some((Status::Working, reason, since, deadline))
    };
    if let Some(title) = &current {
        hosted.evidence.push(format!(
            "the hosted terminal's title has read {:?} ({:?}) since {}",
            title.text, title.kind, title.changed_at
        ));
        if title.kind == TitleKind::ActionRequired {
            let reason = match log.newest_open_call() {
                Some(call) if call.kind == CallKind::Question => question_reason(Some(call)),
                _ => permission_reason(log),
            };
            hosted.verdict = Some((Status::Waiting, reason, title.changed_at, None));
            return hosted;
        }
        let moving_until = title.changed_at.plus(policy.title_moving);
        if title.kind == TitleKind::Frame && now < moving_until {
            hosted.deadline = Some(moving_until);
            if !transcript_decides {
                let reason = Reason::new(ReasonCode::TitleMoving, "The terminal title is moving");
                hosted.verdict = keep_working(reason, title.changed_at, Some(moving_until));
            }
            return hosted;
        }
    }
    if let Some(call) = log.newest_open_call() {
        let silent_from = signals
            .last_draw
            .map_or(call.at, |drawn| drawn.max(call.at));
        let prompt_at = silent_from.plus(policy.terminal_silence);
        if now >= prompt_at {
            hosted.evidence.push(format!(
                "the hosted terminal has drawn nothing since {silent_from} under an open tool call"
            ));
            let reason = match call.kind {
                CallKind::Question => question_reason(Some(call)),
                CallKind::PlanApproval => {
                    Reason::new(ReasonCode::PlanApproval, "A plan is waiting for approval")
                }
                _ => permission_reason(log),
            };
            hosted.verdict = Some((Status::Waiting, reason, silent_from, None));
            return hosted;
        }
        hosted.deadline = Some(prompt_at);
    }
    let Some(title) = current else {
        return hosted;
    };
    if title.kind == TitleKind::Busy && !transcript_decides {
        let reason = Reason::new(
            ReasonCode::TitleMoving,
            "The terminal title says the agent is working",
        );
        hosted.verdict = keep_working(reason, title.changed_at, hosted.deadline);
        return hosted;
    }
    // Only a title seen to move counts: a static title says nothing about stopping.
    let seen_moving = animates(agent)
        && signals
            .titles
            .iter()
            .any(|(_, text)| classify_title(agent, text) == TitleKind::Frame);
    if !seen_moving {
        return hosted;
    }
    let stopped_at = title.changed_at.plus(policy.title_moving);
    if now < stopped_at {
        hosted.deadline = earliest(hosted.deadline, Some(stopped_at));
        return hosted;
    }
    let specific =
        matches!(&posture.outcome, Outcome::Waiting(reason) if reason.code != ReasonCode::Unknown);
    if !specific {
        hosted.evidence.push(format!(
            "the hosted terminal's title stopped moving at {}",
            title.changed_at
        ));
        let reason = Reason::new(
            ReasonCode::TitleStopped,
            "The terminal title stopped moving",
        );
        hosted.verdict = Some((Status::Waiting, reason, title.changed_at, None));
    }
    hosted
}

fn permission_reason(log: &Log) -> Reason {
    let text = match log.newest_open_call() {
        Some(call) => format!("Asks permission for {}", call_label(call)),
        None => "Asks permission".to_string(),
    };
    Reason::new(ReasonCode::PermissionPrompt, text)
}

/// The activity facet (SPEC §4): working, between turns, or silent.
fn activity(log: &Log, status: Status, now: Timestamp, policy: &Policy) -> Activity {
    let Some(last) = &log.last else {
        return Activity::Silent;
    };
    if let Some(call) = log.newest_open_call() {
        // An open call excuses silence, for at most the watcher ceiling.
        return if now >= call.at.plus(policy.open_call_excuse) {
            Activity::Silent
        } else {
            Activity::Working
        };
    }
    if now >= last.at.plus(policy.session_idle) {
        return Activity::Silent;
    }
    match status {
        Status::Working => Activity::Working,
        Status::Waiting | Status::Ended => Activity::BetweenTurns,
    }
}

/// When the activity facet next flips by time alone, if it will.
fn activity_deadline(log: &Log, now: Timestamp, policy: &Policy) -> Option<Timestamp> {
    let last = log.last.as_ref()?;
    let flips_at = match log.newest_open_call() {
        Some(call) => call.at.plus(policy.open_call_excuse),
        None => last.at.plus(policy.session_idle),
    };
    (flips_at > now).then_some(flips_at)
}

impl Log {
    fn newest_open_call(&self) -> Option<&OpenCall> {
        self.open_calls
            .values()
            .max_by_key(|call| (call.at, call.seq))
    }

    fn fold(&mut self, observation: Observation, last_write: Timestamp) {
        match observation {
            Observation::Info(info) => self.fold_info(info),
            Observation::Reset => {
                let kept = Log {
                    folder: self.folder.take(),
                    branch: self.branch.take(),
                    cli_version: self.cli_version.take(),
                    model: self.model.take(),
                    title: self.title.take(),
                    print_mode: self.print_mode,
                    parent_session: self.parent_session.take(),
                    ..Log::default()
                };
                *self = kept;
            }
            Observation::Record(record) => self.fold_record(record, last_write),
        }
    }

    fn fold_info(&mut self, info: Info) {
        if self.folder.is_none() {
            self.folder = info.cwd;
        }
        if info.branch.is_some() {
            self.branch = info.branch;
        }
        if info.cli_version.is_some() {
            self.cli_version = info.cli_version;
        }
        if info.model.is_some() {
            self.model = info.model;
        }
        if let Some(title) = info.title {
            let better = self
                .title
                .as_ref()
                .is_none_or(|current| title.source >= current.source);
            if better && !title.text.trim().is_empty() {
                self.title = Some(title);
            }
        }
        if let Some(print_mode) = info.print_mode {
            self.print_mode = print_mode;
        }
        if info.parent_session.is_some() {
            self.parent_session = info.parent_session;
        }
    }

    fn fold_record(&mut self, record: Record, last_write: Timestamp) {
        let at = record.at.unwrap_or(last_write);
        self.n_records += 1;
        let seq = self.n_records;
        match &record.kind {
            RecordKind::Prompt { text } => {
                self.n_prompts += 1;
                if self.first_prompt.is_none() {
                    self.first_prompt = Some(text.clone());
                }
                self.last_prompt = Some(text.clone());
                self.last_prompt_at = Some(self.last_prompt_at.map_or(at, |last| last.max(at)));
                // A new prompt means every call made before it has finished one way or another.
                self.open_calls.retain(|_, call| call.at > at);
            }
            RecordKind::ToolCall {
                call_id,
                name,
                detail,
                kind,
            } => {
                self.last_tool_call = Some(self.last_tool_call.map_or(at, |last| last.max(at)));
                if !self.answered.remove(call_id) {
                    self.open_calls.insert(
                        call_id.clone(),
                        OpenCall {
                            name: name.clone(),
                            detail: detail.clone(),
                            kind: *kind,
                            at,
                            seq,
                        },
                    );
                }
            }
            RecordKind::ToolResult { call_id, .. } => {
                if self.open_calls.remove(call_id).is_none() {
                    self.answered.insert(call_id.clone());
                }
            }
            RecordKind::TurnStarted { turn_id } => self.open_turn = Some(turn_id.clone()),
            RecordKind::TurnEnded { turn_id } | RecordKind::Interrupted { turn_id } => {
                let same_turn = match (&self.open_turn, turn_id) {
                    (Some(Some(open)), Some(ended)) => open == ended,
                    _ => true,
                };
                if same_turn {
                    self.open_turn = None;
                }
                self.open_calls.clear();
            }
            RecordKind::TurnFailed { .. } => {
                self.open_turn = None;
                self.open_calls.clear();
            }
            RecordKind::SessionEnded => {
                self.ended_at = Some(at);
            }
            RecordKind::ModelText
            | RecordKind::ModelThinking
            | RecordKind::Retrying
            | RecordKind::Compacting
            | RecordKind::Unsettled => {}
        }
        let newer = self
            .last
            .as_ref()
            .is_none_or(|last| (at, seq) >= (last.at, last.seq));
        if newer {
            self.last = Some(Dated {
                at,
                seq,
                kind: record.kind,
            });
        }
    }
}

/// The entry of a session seen with nothing read yet.
fn unseen_entry(transcript: String, last_write: Timestamp) -> Entry {
    Entry {
        transcript: Some(transcript),
        last_write: Some(last_write),
        ..Entry::default()
    }
}

/// True when a facet the surfaces show changed: the intent, the custody, or who acts next.
fn facets_changed(before: &SessionState, after: &SessionState) -> bool {
    before.intent != after.intent
        || before.custody != after.custody
        || before.next_actor.actor != after.next_actor.actor
        || before.next_actor.reason != after.next_actor.reason
}

/// Whom an intent's `awaiting_who` names: `operator`, `another_item[:<item>]`, `ci_or_deploy`,
/// `parent_or_steering`, and the item named, if any. Anything else names nobody in particular.
pub fn awaited_actor(awaiting_who: &str) -> Option<(Actor, Option<&str>)> {
    let (word, item) = match awaiting_who.split_once(':') {
        Some((word, item)) => (word, Some(item).filter(|item| !item.is_empty())),
        None => (awaiting_who, None),
    };
    let actor = match word.trim() {
        "operator" => Actor::Operator,
        "another_item" => Actor::AnotherItem,
        "ci_or_deploy" | "ci" | "deploy" => Actor::CiOrDeploy,
        "parent_or_steering" => Actor::ParentOrSteering,
        _ => return None,
    };
    Some((actor, item))
}

/// Whether a session's notifications are held back (SPEC §4, issue 7): a parked session fires
/// none, and a session awaiting another actor fires none until that actor acts, which the
/// tracker shows by moving `next_actor` off the awaited actor. Pure, for the desktop shell.
pub fn notifications_muted(state: &SessionState) -> bool {
    match state.intent.state {
        IntentState::None => false,
        IntentState::Parked => true,
        IntentState::Awaiting => {
            let Some((actor, _)) = state.intent.awaiting_who.as_deref().and_then(awaited_actor)
            else {
                return false;
            };
            actor != Actor::Operator && state.next_actor.actor == actor
        }
    }
}

/// Who acts next on a work item (SPEC §4): a done item has nobody left; an unsatisfied
/// dependency names the other item; running CI names CI; claimed work is its holder's; unclaimed
/// ready (or blocked) work needs parent or steering direction. `items` looks up dependencies and
/// `holder` is the session holding a claim on it, if any.
pub fn item_next_actor(
    item: &WorkItemInfo,
    items: &BTreeMap<String, WorkItemInfo>,
    holder: Option<&SessionKey>,
) -> (Actor, String) {
    if item.status == ItemStatus::Done {
        return (Actor::Nobody, "the item is done".to_string());
    }
    if let Some(dep) = unsatisfied_dep(item, items) {
        return (Actor::AnotherItem, format!("waits for item {dep}"));
    }
    if item.status == ItemStatus::CiRunning {
        return (Actor::CiOrDeploy, "CI is running".to_string());
    }
    match holder {
        Some(key) => (Actor::ThisSession, format!("claimed by {key}")),
        None => (
            Actor::ParentOrSteering,
            "unclaimed work needs parent or steering direction".to_string(),
        ),
    }
}

/// The first dependency of `item` that is not done; a dependency on an unknown item is not done.
fn unsatisfied_dep<'a>(
    item: &'a WorkItemInfo,
    items: &BTreeMap<String, WorkItemInfo>,
) -> Option<&'a str> {
    item.deps
        .iter()
        .find(|dep| {
            items
                .get(dep.as_str())
                .is_none_or(|dep| dep.status != ItemStatus::Done)
        })
        .map(String::as_str)
}

impl Tracker {
    /// The work claims a session holds now, oldest first: (item id, claimed at).
    fn claims_of(&self, key: &SessionKey) -> Vec<(&str, Timestamp)> {
        let mut claims: Vec<(&str, Timestamp)> = self
            .claims
            .iter()
            .filter(|(_, holder, _)| holder == key)
            .map(|(item, _, at)| (item.as_str(), *at))
            .collect();
        claims.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(b.0)));
        claims
    }

    /// The custody facet (SPEC §4): work claims protect their holder whatever its activity age;
    /// only an ended or gone session without one is reclaimable.
    fn custody(&self, key: &SessionKey, log: &Log, status: Status, presence: Presence) -> Custody {
        let claims = self.claims_of(key);
        let mut holds: Vec<String> = claims
            .iter()
            .map(|(item, _)| format!("item:{item}"))
            .collect();
        if let Some(branch) = &log.branch {
            holds.push(format!("branch:{branch}"));
        }
        let holds_work_claim = !claims.is_empty();
        let over = status == Status::Ended || presence != Presence::Present;
        let reason = match (holds_work_claim, over) {
            (true, true) => format!(
                "holds a work claim on item {}; silence and process absence never release a claim",
                claims[0].0
            ),
            (true, false) => format!("live, and holds a work claim on item {}", claims[0].0),
            (false, true) => match presence {
                Presence::Gone => "its process is gone and it holds no work claim".to_string(),
                _ => "ended and holds no work claim".to_string(),
            },
            (false, false) => "live".to_string(),
        };
        Custody {
            holds,
            holds_work_claim,
            reclaimable: over && !holds_work_claim,
            reason,
        }
    }

    /// The next-actor facet (SPEC §4), in priority order.
    fn next_actor(
        &self,
        key: &SessionKey,
        log: &Log,
        verdict: &Verdict,
        intent: Option<&(Intent, Timestamp)>,
    ) -> NextActor {
        let next = |actor, reason: String, since| NextActor {
            actor,
            reason,
            since,
        };
        if verdict.status == Status::Ended {
            return next(
                Actor::Nobody,
                "the session has ended".to_string(),
                verdict.since,
            );
        }
        if let Some((intent, set_at)) = intent {
            let awaited = intent.awaiting_who.as_deref().and_then(awaited_actor);
            let what = intent
                .reason
                .as_deref()
                .map(|reason| format!(": {reason}"))
                .unwrap_or_default();
            match awaited {
                Some((Actor::AnotherItem, item)) if !self.wait_over(log, *set_at, item) => {
                    let named = item.map(|item| format!(" {item}")).unwrap_or_default();
                    return next(
                        Actor::AnotherItem,
                        format!("awaits item{named}{what}"),
                        *set_at,
                    );
                }
                Some((Actor::CiOrDeploy, _)) if !self.wait_over(log, *set_at, None) => {
                    return next(
                        Actor::CiOrDeploy,
                        format!("awaits CI or deployment{what}"),
                        *set_at,
                    );
                }
                Some((Actor::ParentOrSteering, _)) if !self.wait_over(log, *set_at, None) => {
                    return next(
                        Actor::ParentOrSteering,
                        format!("awaits direction{what}"),
                        *set_at,
                    );
                }
                Some((Actor::Operator, _)) => {
                    return next(
                        Actor::Operator,
                        format!("awaits the operator{what}"),
                        *set_at,
                    );
                }
                _ if intent.state == IntentState::Parked => {
                    return next(
                        Actor::ParentOrSteering,
                        format!("parked{what}; it needs direction"),
                        *set_at,
                    );
                }
                _ => {}
            }
        }
        if verdict.status == Status::Waiting {
            return next(
                Actor::Operator,
                format!("a pending decision: {}", verdict.reason.text),
                verdict.since,
            );
        }
        for (item_id, claimed_at) in self.claims_of(key) {
            let Some(item) = self.items.get(item_id) else {
                continue;
            };
            if let Some(dep) = unsatisfied_dep(item, &self.items) {
                return next(
                    Actor::AnotherItem,
                    format!("its item {item_id} waits for item {dep}"),
                    claimed_at,
                );
            }
            if item.status == ItemStatus::CiRunning {
                return next(
                    Actor::CiOrDeploy,
                    format!("CI is running for its item {item_id}"),
                    claimed_at,
                );
            }
        }
        next(
            Actor::ThisSession,
            format!("the session can continue: {}", verdict.reason.text),
            verdict.since,
        )
    }

    /// Whether the actor an intent awaits has acted: the awaited item is done, or someone handed
    /// the session a new prompt after the intent was set.
    fn wait_over(&self, log: &Log, set_at: Timestamp, item: Option<&str>) -> bool {
        let item_done = item
            .and_then(|item| self.items.get(item))
            .is_some_and(|item| item.status == ItemStatus::Done);
        item_done
            || log
                .last_prompt_at
                .is_some_and(|prompt_at| prompt_at > set_at)
    }

    /// Every work item, by id, and the session holding a claim on each, for `slate item list`.
    pub fn work_items(&self) -> impl Iterator<Item = (&WorkItemInfo, Option<&SessionKey>)> {
        self.items.values().map(|item| {
            let holder = self
                .claims
                .iter()
                .find(|(claimed, _, _)| *claimed == item.id)
                .map(|(_, key, _)| key);
            (item, holder)
        })
    }
}
