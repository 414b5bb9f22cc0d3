//! The state rules: the one place that decides whether a session is Working, Needs you or Closed.
//!
//! `Tracker` folds observations, process scans and listings into per-session facts and applies the
//! rules of docs/states.md §3 and §4 to them. It is a pure state machine: it does no I/O, spawns
//! nothing and never reads the clock. Time comes in as `now` on every call, and `next_deadline`
//! says when the tracker next wants a `Tick` because a time-based flip is pending.
//!
//! This file is the front door: the inputs, the tracker with what it answers (sessions, changes,
//! evidence, closed summaries, the next deadline), and the bookkeeping of which sessions a round
//! of inputs may have changed. Each concern behind it has its own file: `log` folds one
//! session's observations, `vouch` says which live process vouches for which session, `rules`
//! applies the state rules in order and builds every reason, `signals` reads what a session's
//! terminal shows, `facets` fills the facets beside the status, and `evidence` names the facts
//! behind a decision.

mod evidence;
mod facets;
mod hooks;
mod inputs;
mod log;
mod reasons;
mod rules;
mod signals;
mod terminals;
mod vouch;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use crate::model::{
    Activity, AgentKind, HostedSignals, Intent, IntentState, Listing, Presence, Reason, Session,
    SessionKey, Status, TerminalView, Timestamp,
};

pub use crate::model::ItemStatus;
pub use evidence::Evidence;
pub use facets::{item_next_actor, notifications_muted};
pub use inputs::{Batch, Input, SeenProcess, Sensed, TranscriptRole, WorkItemInfo};
pub use signals::UNKNOWN_FOR;

use crate::agents::hooks::HookSeen;
pub use vouch::VouchKind;

use log::Log;
use rules::Verdict;
use vouch::Vouch;

/// The times the rules use. The defaults are the ones docs/states.md gives; tests and the config
/// may change them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Agents whose sessions the person muted in the config (`[notifications] muted_agents`):
    /// each session of theirs is `muted`.
    pub muted_agents: Vec<AgentKind>,
    /// The "window" of docs/states.md §1: how long a quiet transcript stays open without a
    /// process, and how long a question waits before it reads as Needs you.
    pub window: Duration,
    /// A text-only model message that stays last this long ends the turn (docs/states.md §3
    /// rule 6).
    pub text_settle: Duration,
    /// A tool call quiet this long is a prompt nobody answered (docs/states.md §3 rule 6b).
    pub quiet_call: Duration,
    /// `session_idle_minutes`: no tool activity this long makes a session silent
    /// (docs/states.md §4).
    pub session_idle: Duration,
    /// The most an open tool call excuses silence (docs/states.md §4).
    pub open_call_excuse: Duration,
    /// How much earlier than its process's start a transcript may have been written and still be
    /// vouched for by that process, to absorb clock granularity.
    pub start_slack: Duration,
    /// A terminal title that changed this recently is moving (docs/states.md §3 rules 4–5).
    pub title_moving: Duration,
    /// A terminal silent this long under an open tool call is a prompt (docs/states.md §3
    /// rule 6c).
    pub terminal_silence: Duration,
    /// The prices a session's usage is estimated with: the shipped table with the config's
    /// `[prices]` over it (`usage::prices`).
    pub prices: std::sync::Arc<crate::usage::prices::Table>,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            muted_agents: Vec::new(),
            window: Duration::from_secs(45),
            text_settle: Duration::from_secs(3),
            quiet_call: Duration::from_secs(30 * 60),
            session_idle: Duration::from_secs(20 * 60),
            open_call_excuse: Duration::from_secs(45 * 60),
            start_slack: Duration::from_secs(2),
            title_moving: Duration::from_secs(10),
            terminal_silence: Duration::from_secs(5),
            prices: std::sync::Arc::new(crate::usage::prices::Table::shipped().clone()),
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
    /// Sessions first seen this round with nothing read (a transcript known closed): transcript
    /// and last write, each with an entry only while decided, so a long history is never held.
    unseen: HashMap<SessionKey, (String, Timestamp)>,
    processes: Vec<SeenProcess>,
    listings: BTreeMap<AgentKind, Listing>,
    /// Canonical spellings of folders, as the edges resolved them.
    folders: HashMap<String, String>,
    /// Which process vouched for which session at the last decision.
    vouched: HashMap<SessionKey, Vouch>,
    /// A vouching process that stopped while alive, by session: its death still counts.
    lapsed: HashMap<SessionKey, (u32, Timestamp)>,
    /// The user's intents, with when each was set.
    intents: HashMap<SessionKey, (Intent, Timestamp)>,
    /// The sessions the person muted.
    mutes: HashSet<SessionKey>,
    /// Work items by id.
    items: BTreeMap<String, WorkItemInfo>,
    /// Claims held now: (item id, holder, claimed at).
    claims: Vec<(String, SessionKey, Timestamp)>,
    /// Hosted signals reported by pid, before or without a session key.
    hosted_processes: HashMap<u32, HostedSignals>,
    /// How Slate sees the terminal of each live agent process, by pid.
    terminals: HashMap<u32, TerminalView>,
    /// Hook events for sessions not read yet, kept until their transcript is (at most
    /// `HOOKS_PENDING`).
    hooks_pending: HashMap<SessionKey, HookSeen>,
}

/// The most hook events kept for sessions whose transcript has not been read yet.
const HOOKS_PENDING: usize = 256;

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
    /// What its terminal showed when Slate last read it from outside.
    sensed: Option<signals::SensedSignals>,
    /// The newest event of the agent's own hooks for it (docs/states.md §3 rule 3a).
    hook: Option<HookSeen>,
    /// When the vouching process was seen dead (docs/states.md §1, presence `gone`).
    gone_at: Option<Timestamp>,
    /// True once any observation was folded into `log`.
    observed: bool,
    decision: Option<Decision>,
    /// The call its agent's decision hook waits on, while it waits.
    waiting: Option<crate::model::HookDecision>,
}

impl Entry {
    /// The entry of a session seen with nothing read yet.
    fn unseen(transcript: String, last_write: Timestamp) -> Entry {
        Entry {
            transcript: Some(transcript),
            last_write: Some(last_write),
            ..Entry::default()
        }
    }
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
    evidence: Vec<Evidence>,
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
    pub fn session(&self, key: &SessionKey, policy: &Policy) -> (Session, Vec<Evidence>) {
        let decision = self.decision(key, policy);
        (decision.session, decision.evidence)
    }

    fn entry(&self) -> Entry {
        Entry::unseen(self.transcript.clone(), self.last_write)
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
            reads_terminal: false,
        }
    }
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
    evidence: Vec<Evidence>,
    session: Session,
    /// True when a reading of the session's terminal could change this decision (see
    /// `Tracker::terminals_wanted`).
    reads_terminal: bool,
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
                self.forget_exited_hosts(&processes);
                self.processes = processes;
                scope.live = true;
            }
            Input::Listing { agent, listing } => {
                self.take_listing(agent, listing);
                scope.live = true;
            }
            Input::Hosted { key, signals } => {
                signals::merge(&mut self.entry_mut(&key).hosted, signals);
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
            Input::Mutes(mutes) => {
                let mutes: HashSet<SessionKey> = mutes.into_iter().collect();
                let touched: Vec<SessionKey> =
                    self.mutes.symmetric_difference(&mutes).cloned().collect();
                for key in touched {
                    if self.reopen(&key) {
                        scope.keys.insert(key);
                    }
                }
                self.mutes = mutes;
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
                signals::merge(&mut held, signals);
                if let Some(held) = held {
                    self.hosted_processes.insert(pid, held);
                }
                scope.live = true;
            }
            Input::Terminals(terminals) => {
                self.terminals = terminals.into_iter().collect();
                scope.live = true;
            }
            Input::Sensed { key, reading } => {
                if reading.is_some() || self.entries.contains_key(&key) {
                    let entry = self.entry_mut(&key);
                    if let Some(screen) = signals::merge_sensed(&mut entry.sensed, reading) {
                        entry.log.count_screen(&screen);
                    }
                    scope.keys.insert(key);
                }
            }
            Input::Decision { key, waiting } => {
                if waiting.is_some() || self.entries.contains_key(&key) {
                    self.entry_mut(&key).waiting = waiting;
                    scope.keys.insert(key);
                }
            }
            Input::Hook(seen) => {
                let key = seen.key.clone();
                if self.reopen(&key) {
                    let entry = self.entry_mut(&key);
                    if entry
                        .hook
                        .as_ref()
                        .is_none_or(|held| held.at <= seen.at && !hooks::tells_again(held, &seen))
                    {
                        entry.hook = Some(seen);
                    }
                    scope.keys.insert(key);
                } else {
                    if self.hooks_pending.len() >= HOOKS_PENDING
                        && !self.hooks_pending.contains_key(&key)
                    {
                        // The oldest goes: a flood of unknown sessions costs bounded memory.
                        let oldest = self
                            .hooks_pending
                            .iter()
                            .min_by_key(|(_, held)| held.at)
                            .map(|(key, _)| key.clone());
                        if let Some(oldest) = oldest {
                            self.hooks_pending.remove(&oldest);
                        }
                    }
                    self.hooks_pending.insert(key, seen);
                }
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
    pub fn evidence(&self, key: &SessionKey) -> Vec<Evidence> {
        if let Some(closed) = self.closed.get(key) {
            return closed.session(key, &self.policy).1;
        }
        self.entries
            .get(key)
            .and_then(|entry| entry.decision.as_ref())
            .map(|decision| decision.evidence.clone())
            .unwrap_or_default()
    }

    /// The sessions a live process vouched for at the last decision, including listed sessions
    /// whose transcript has not been read yet.
    pub fn vouched_keys(&self) -> impl Iterator<Item = &SessionKey> {
        self.vouched.keys()
    }

    /// The processes the last scan recognised.
    pub fn processes(&self) -> &[SeenProcess] {
        &self.processes
    }

    /// How Slate sees the terminal of process `pid`, as the edges last said.
    pub fn terminal(&self, pid: u32) -> Option<&TerminalView> {
        self.terminals.get(&pid)
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
                .insert(key.clone(), Entry::unseen(transcript, last_write));
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
            && entry.sensed.is_none()
            && entry.hook.is_none()
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
                // Its records stay its own, but its model calls cost the session money: they
                // count in the session's usage, each response once by its id.
                for observation in batch.observations {
                    if let crate::agents::Observation::Usage(call) = observation {
                        entry.log.usage.add(call, None);
                    }
                }
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
                let pending = self.hooks_pending.remove(&key);
                let entry = self.entry_mut(&key);
                if entry.hook.is_none() {
                    entry.hook = pending;
                }
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
            self.count_listed_drift(&key);
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
                    || facets::changed(
                        &previous.session.session_state,
                        &decision.session.session_state,
                    )
                    || previous.session.hosted != decision.session.hosted
                    || previous.session.terminal != decision.session.terminal
                    || previous.session.dialog != decision.session.dialog
                    || previous.session.muted != decision.session.muted
                    || previous.session.unread != decision.session.unread
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

    /// Applies the rules to one session and dresses the verdict with its facets.
    fn decide(&self, key: &SessionKey, vouch: Option<Vouch>, now: Timestamp) -> Decision {
        let entry = &self.entries[key];
        let mut evidence = Vec::new();
        let verdict = self.rules(key, entry, vouch, now, &mut evidence);
        let log = &entry.log;
        let activity = facets::activity(log, verdict.status, now, &self.policy);
        let deadline = if verdict.status == Status::Ended {
            verdict.deadline
        } else {
            reasons::earliest(
                verdict.deadline,
                facets::activity_deadline(log, now, &self.policy),
            )
        };
        let pid = vouch.map(|vouch| vouch.pid);
        let row_time = log.last.as_ref().map(|last| last.at);
        // Where the agent's listing decides, a reading changes no decision, but the dialog on
        // screen is what an answer checks against (docs/states.md §8), so the pane is read too. A
        // hosted terminal reports its titles and draws itself; its screen is read (through its
        // control socket) like a pane's, when `slate run` offers one.
        let reads_terminal = verdict.status != Status::Ended
            && pid.is_some()
            && entry
                .hosted
                .as_ref()
                .is_none_or(|hosted| hosted.control.is_some())
            && log.newest_open_call().is_some();
        Decision {
            reads_terminal,
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
}
