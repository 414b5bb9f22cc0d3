//! The engine: the one owner of the tracker and of the edges' reading state.
//!
//! `Engine` turns what the edges read (transcripts, the process table, the agents' listings) into
//! tracker inputs and applies them; it is the only code that mutates a `Tracker`. It is
//! synchronous and does one thing per call, so the command line can run it once (`refresh`) and a
//! long-running server can drive it from its event loop (file hints, process scans, deadlines).
//! It decides nothing itself: every rule lives in `tracker`. Which agents it looks for, and where,
//! comes from the registry of agent descriptions it is given (the built-in one by default), and
//! the time every read is decided at comes from its caller.
//!
//! Every input passes through one gate on its way in ([`FutureTimes`]): a time that lies in the
//! future (a record dated 9999, a store row updated at `i64::MAX`, a file touched ahead) is read as
//! the moment the engine first saw it, and counted as a problem, so it can neither keep a session
//! working for ever nor push a deadline away.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::store::{Store, StoreError};
use slate_core::agents::hooks::HookReport;
use slate_core::agents::{Observation, ProcessRole, Registry};
use slate_core::model::{
    AgentKind, Problem, ProblemKind, ProcessTable, Session, SessionKey, Timestamp,
};
use slate_core::tracker::{Change, Evidence, Input, Policy, SeenProcess, Tracker, WorkItemInfo};
use slate_sources::sources::roots::{self, Env, Roots, WatchSpec};
use slate_sources::sources::stores::StoreState;
use slate_sources::sources::walk::{self, ReadState, ScanOptions, ScanResult};
use slate_sources::sources::{listings, processes};
use slate_terminals::terminals::Backends;

/// Where the engine gets its process table.
#[derive(Debug, Clone)]
pub enum ProcessSource {
    /// Scan the live process table.
    Live,
    /// Use a recorded table (a fixture recording, a replay).
    Recorded(ProcessTable),
    /// A recorded table that its owner changes while the engine runs (the demo, whose made-up
    /// processes exit). Each scan reads the table as it is at that moment.
    Shared(std::sync::Arc<std::sync::Mutex<ProcessTable>>),
}

/// Everything an engine needs to start.
#[derive(Debug, Clone)]
pub struct Options {
    pub env: Env,
    pub policy: Policy,
    pub scan: ScanOptions,
    pub processes: ProcessSource,
    /// The agents to look for: the built-in ones, or a test's own.
    pub registry: Registry,
    /// The terminals to look in for their sessions: the built-in ones, or a test's own.
    pub terminals: Backends,
}

impl Options {
    /// Options for this machine: the process's own environment, live processes and the built-in
    /// agents.
    pub fn from_env(env: Env) -> Options {
        Options {
            env,
            policy: Policy::default(),
            scan: ScanOptions::default(),
            processes: ProcessSource::Live,
            registry: slate_core::agents::BUILT_IN,
            terminals: slate_terminals::terminals::BUILT_IN,
        }
    }
}

/// How many problems of each kind were seen, and the latest few in full.
#[derive(Debug, Clone, Default)]
pub struct Problems {
    pub counts: BTreeMap<ProblemKind, u64>,
    pub recent: VecDeque<Problem>,
}

impl Problems {
    const RECENT: usize = 50;

    pub fn record(&mut self, problem: Problem) {
        *self.counts.entry(problem.kind).or_default() += 1;
        if self.recent.len() == Self::RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(problem);
    }

    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }
}

/// One agent root and whether it exists, with the agent's names for the surfaces that list them
/// (`slate doctor`, the window's empty state through `/health`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RootReport {
    pub agent: AgentKind,
    /// The short name (`Gemini`).
    pub name: String,
    /// The product's own name (`Gemini CLI`).
    pub product: String,
    pub path: PathBuf,
    pub found: bool,
}

pub struct Engine {
    tracker: Tracker,
    registry: Registry,
    terminals: Backends,
    roots: Roots,
    scan: ScanOptions,
    read_state: ReadState,
    stores: StoreState,
    process_source: ProcessSource,
    problems: Problems,
    found: Vec<AgentKind>,
    start_slack: std::time::Duration,
    totals: ReadTotals,
    /// The listing commands of the agents that have one, asked when their registry is stale.
    listing_commands: HashMap<AgentKind, listings::AgentsCommand>,
    future: FutureTimes,
}

/// How much transcript reading the engine has done, for diagnostics, benches and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadTotals {
    /// Transcript reads (a first read, or a read of what was appended).
    pub reads: u64,
    pub bytes_read: u64,
    /// Transcripts known closed and not read (`ScanOptions::process_since`).
    pub skipped: u64,
}

impl ReadTotals {
    fn add(&mut self, result: &ScanResult) {
        self.reads += result.reads.len() as u64;
        self.bytes_read += result
            .reads
            .iter()
            .map(|read| read.stats.bytes_read)
            .sum::<u64>();
        self.skipped += result.skipped;
    }
}

impl Engine {
    pub fn new(options: Options) -> Engine {
        let registry = options.registry;
        let listing_commands = registry
            .iter()
            .filter_map(|description| {
                let command = description.listing.as_ref()?.command.as_ref()?;
                Some((
                    description.kind(),
                    listings::AgentsCommand::from_process(command),
                ))
            })
            .collect();
        Engine {
            tracker: Tracker::new(options.policy.clone()),
            registry,
            terminals: options.terminals,
            roots: roots::resolve_roots(registry, &options.env),
            scan: options.scan,
            read_state: ReadState::new(),
            stores: StoreState::new(),
            process_source: options.processes,
            problems: Problems::default(),
            found: Vec::new(),
            start_slack: options.policy.start_slack,
            totals: ReadTotals::default(),
            listing_commands,
            future: FutureTimes::default(),
        }
    }

    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    pub fn problems(&self) -> &Problems {
        &self.problems
    }

    /// Every agent root Slate looks in, and whether the last walk found it.
    pub fn roots(&self) -> Vec<RootReport> {
        self.roots
            .iter()
            .map(|(agent, path)| RootReport {
                agent,
                name: agent.display_name().to_string(),
                product: agent
                    .description()
                    .map_or(agent.display_name(), |description| description.product)
                    .to_string(),
                path: path.to_path_buf(),
                found: self.found.contains(&agent),
            })
            .collect()
    }

    /// The folders the file watcher should watch: where transcripts, registries and stores live.
    /// The agents this engine knows.
    pub fn registry(&self) -> Registry {
        self.registry
    }

    pub fn watch_paths(&self) -> Vec<WatchSpec> {
        self.roots.watch_specs(self.registry)
    }

    /// One full pass: the process table and listings first (so the walk knows which quiet
    /// transcripts are still vouched for), then every transcript that changed.
    pub fn refresh(&mut self, now: Timestamp) -> Vec<Change> {
        let mut changes = self.scan_processes(now);
        changes = merge(changes, self.scan_files(now));
        changes
    }

    /// Scans processes and reads the listings.
    pub fn scan_processes(&mut self, now: Timestamp) -> Vec<Change> {
        let table = match &self.process_source {
            ProcessSource::Live => processes::scan_processes(),
            ProcessSource::Recorded(table) => table.clone(),
            ProcessSource::Shared(table) => {
                table.lock().map(|table| table.clone()).unwrap_or_default()
            }
        };
        let seen = processes::recognise_all(self.registry, &table);
        let mut inputs = vec![Input::Processes(seen.clone())];
        inputs.extend(self.listings(&seen, None, now));
        self.apply_inputs(inputs, now)
    }

    /// Reads the agents' listings (only `agent`'s when given) against the live processes `seen`.
    fn listings(
        &mut self,
        seen: &[SeenProcess],
        agent: Option<AgentKind>,
        now: Timestamp,
    ) -> Vec<Input> {
        let mut inputs = Vec::new();
        for description in self.registry.iter() {
            let kind = description.kind();
            if agent.is_some_and(|agent| agent != kind) {
                continue;
            }
            let (Some(rule), Some(root)) = (&description.listing, self.roots.get(kind)) else {
                continue;
            };
            let mut problems = Vec::new();
            let mut listing = listings::read_listing(rule, root, &mut problems);
            // The registry is missing or stale when a live process of the agent has no entry in
            // it; then ask the agent's own listing command. Only for the live table: a recorded
            // one is a replay.
            let unlisted = seen.iter().any(|process| {
                process.recognised.agent == kind
                    && matches!(
                        process.recognised.role,
                        ProcessRole::Interactive | ProcessRole::Print
                    )
                    && !listing
                        .entries
                        .iter()
                        .any(|entry| entry.pid == Some(process.info.pid))
            });
            let live = matches!(self.process_source, ProcessSource::Live);
            if let Some(command) = self
                .listing_commands
                .get_mut(&kind)
                .filter(|_| unlisted && live)
            {
                let extra = command.entries(now, &mut problems);
                if !extra.is_empty() {
                    listing.available = true;
                }
                listings::merge_entries(&mut listing, extra);
            }
            self.record_problems(problems);
            inputs.push(Input::Listing {
                agent: kind,
                listing,
            });
        }
        inputs
    }

    /// The agent whose listing's registry folder holds `path`: a registry entry changed.
    fn listed_in(&self, path: &Path) -> Option<AgentKind> {
        let folder = path.parent()?;
        self.registry.iter().find_map(|description| {
            let rule = description.listing.as_ref()?;
            let root = self.roots.get(description.kind())?;
            (folder == root.join(rule.registry)).then(|| description.kind())
        })
    }

    /// Walks every root and reads what changed as of `now`: the transcripts, then the stores.
    pub fn scan_files(&mut self, now: Timestamp) -> Vec<Change> {
        self.scan.vouched = self.tracker.vouched_keys().cloned().collect();
        self.scan.process_since = Some(self.process_since());
        let registry = self.registry;
        let mut result = walk::scan(registry, &self.roots, &self.scan, &mut self.read_state, now);
        self.totals.add(&result);
        let stores = self
            .stores
            .scan(registry, &self.roots, now, &mut result.problems);
        result.batches.extend(stores);
        for description in registry
            .iter()
            .filter(|description| description.store().is_some())
        {
            let agent = description.kind();
            if self.roots.get(agent).is_some_and(Path::is_dir) {
                result.found.push(agent);
            }
        }
        self.found = result.found.clone();
        self.apply_scan(result, now)
    }

    /// Reads one file the watcher says changed: a transcript, a file of a store, or an entry of
    /// an agent's listing (whose status change, such as a dialog answered, should not wait for
    /// the next process scan).
    pub fn read_path(&mut self, path: &Path, now: Timestamp) -> Vec<Change> {
        if let Some(agent) = self.listed_in(path) {
            let seen = self.tracker.processes().to_vec();
            let inputs = self.listings(&seen, Some(agent), now);
            return self.apply_inputs(inputs, now);
        }
        let mut problems = Vec::new();
        let registry = self.registry;
        let stored = self
            .stores
            .read_path(registry, &self.roots, path, now, &mut problems);
        let result = match stored {
            Some(batches) => ScanResult {
                batches,
                problems,
                ..ScanResult::default()
            },
            None => {
                self.scan.process_since = Some(self.process_since());
                let result =
                    self.read_state
                        .read_path(registry, &self.roots, &self.scan, path, now);
                self.totals.add(&result);
                result
            }
        };
        self.apply_scan(result, now)
    }

    /// Reads the user's intents and mutes, the work items and the claims held now from Slate's store and
    /// hands them to the tracker (at start, and whenever the command line or the API changed
    /// them). A work item whose status the store spells in a way this version does not know reads
    /// as `blocked`, so it never looks like free work.
    pub fn load_custody(
        &mut self,
        store: &Store,
        now: Timestamp,
    ) -> Result<Vec<Change>, StoreError> {
        let intents = store
            .intents()?
            .into_iter()
            .map(|(key, stored)| (key, stored.intent, stored.set_at))
            .collect();
        let mut items = Vec::new();
        let mut claims = Vec::new();
        for item in store.work_items()? {
            for claim in store.claims_on(&item.id)? {
                if claim.released.is_none() {
                    claims.push((claim.item_id, claim.key, claim.claimed));
                }
            }
            items.push(WorkItemInfo {
                status: item.status,
                id: item.id,
                title: item.title,
                deps: item.deps,
            });
        }
        let mutes = store.mutes()?;
        Ok(self.tracker.apply_all(
            [
                Input::Intents(intents),
                Input::Mutes(mutes),
                Input::Custody { items, claims },
            ],
            now,
        ))
    }

    /// The earliest start of a live interactive or print process of each agent, less the
    /// tracker's start slack: no process can vouch for a transcript last written before it.
    fn process_since(&self) -> HashMap<AgentKind, Timestamp> {
        let mut since: HashMap<AgentKind, Timestamp> = HashMap::new();
        for process in self.tracker.processes() {
            if !matches!(
                process.recognised.role,
                ProcessRole::Interactive | ProcessRole::Print
            ) {
                continue;
            }
            let start = process.info.start_time.minus(self.start_slack);
            since
                .entry(process.recognised.agent)
                .and_modify(|earliest| *earliest = (*earliest).min(start))
                .or_insert(start);
        }
        since
    }

    /// What the transcript reads cost so far.
    pub fn read_totals(&self) -> ReadTotals {
        self.totals
    }

    /// Time passed with no other input.
    pub fn tick(&mut self, now: Timestamp) -> Vec<Change> {
        self.tracker.apply(Input::Tick, now)
    }

    /// Applies any other input (hosted-session signals, for instance).
    pub fn apply(&mut self, input: Input, now: Timestamp) -> Vec<Change> {
        self.apply_inputs(vec![input], now)
    }

    /// Applies one event of an agent's own hooks, received at `at` (docs/states.md §3 rule 3a):
    /// read through the agent's description, or dropped when the agent has no hooks or the
    /// event says nothing Slate reads.
    pub fn hook(&mut self, report: &HookReport, at: Timestamp, now: Timestamp) -> Vec<Change> {
        let Some(description) = self.registry.iter().find(|d| d.id == report.agent) else {
            return Vec::new();
        };
        let Some(hooks) = description.hooks else {
            return Vec::new();
        };
        if !slate_core::agents::hooks::valid_id(&report.session_id) {
            return Vec::new();
        }
        let key = SessionKey::new(description.kind(), report.session_id.clone());
        match slate_core::agents::hooks::seen(hooks, key, report, at.min(now)) {
            Some(seen) => self.apply(Input::Hook(seen), now),
            None => Vec::new(),
        }
    }

    /// Applies several inputs at once, deciding once.
    pub fn apply_all(&mut self, inputs: Vec<Input>, now: Timestamp) -> Vec<Change> {
        if inputs.is_empty() {
            return Vec::new();
        }
        self.apply_inputs(inputs, now)
    }

    /// Counts a problem an edge outside the engine met (a terminal that could not be read).
    pub fn record_problem(&mut self, problem: Problem) {
        self.record_problems(vec![problem]);
    }

    /// True when the engine scans the live process table (not a recorded one): only then are
    /// its processes' terminals real, to be located and read.
    pub fn scans_live_processes(&self) -> bool {
        matches!(self.process_source, ProcessSource::Live)
    }

    /// When the engine next needs a tick.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        self.tracker.next_deadline()
    }

    /// All sessions, live and closed, as last decided.
    pub fn sessions(&self) -> Vec<Session> {
        self.tracker.all_sessions()
    }

    /// The sessions the tracker holds in full: all but the closed summaries
    /// (`Tracker::closed`), which a long-running service keeps as they are.
    pub fn full_sessions(&self) -> impl Iterator<Item = &Session> {
        self.tracker.sessions()
    }

    /// The terminal backends its sessions' terminals are looked for in.
    pub fn terminals(&self) -> Backends {
        self.terminals
    }

    /// The processes the last scan recognised.
    pub fn processes(&self) -> &[SeenProcess] {
        self.tracker.processes()
    }

    /// Finds a session by its id or a unique prefix of it.
    pub fn find(&self, id: &str) -> Result<Session, FindError> {
        let full = self.tracker.sessions().map(|session| session.key());
        let closed = self.tracker.closed().keys().cloned();
        let key = pick(full.chain(closed), id)?;
        self.tracker
            .session(&key)
            .ok_or_else(|| FindError::NotFound(id.to_string()))
    }

    /// The evidence behind a session's state.
    pub fn evidence(&self, key: &SessionKey) -> Vec<Evidence> {
        self.tracker.evidence(key)
    }

    fn apply_scan(&mut self, result: ScanResult, now: Timestamp) -> Vec<Change> {
        self.record_problems(result.problems);
        let gone = result.gone.into_iter().map(|gone| Input::TranscriptGone {
            key: gone.key,
            transcript: gone.transcript,
        });
        let observed = result.batches.into_iter().map(Input::Observed);
        let inputs = gone.chain(observed).collect();
        self.apply_inputs(inputs, now)
    }

    /// Hands `inputs` to the tracker after the future-time gate.
    fn apply_inputs(&mut self, mut inputs: Vec<Input>, now: Timestamp) -> Vec<Change> {
        let problems: Vec<Problem> = inputs
            .iter_mut()
            .filter_map(|input| self.future.clamp(input, now))
            .collect();
        self.record_problems(problems);
        self.tracker.apply_all(inputs, now)
    }

    fn record_problems(&mut self, problems: Vec<Problem>) {
        for problem in problems {
            tracing::debug!(kind = %problem.kind, place = %problem.place, "{}", problem.detail);
            self.problems.record(problem);
        }
    }
}

/// How far ahead of `now` a time may lie and be read as now without a word: a line written just
/// after the caller took `now`, or a clock a moment ahead. Further ahead is a problem.
const FUTURE_SLACK: Duration = Duration::from_secs(60);

/// The times already seen in the future, by where they were read and what they said, with the
/// moment each was first seen: a store re-reads a session whenever the database changes, and a
/// far-future row must not look freshly written at every such read.
#[derive(Debug, Default)]
struct FutureTimes {
    first_seen: HashMap<(String, i64), Timestamp>,
}

impl FutureTimes {
    /// At most this many are remembered; past it they are forgotten and start again, so a file
    /// full of distinct future dates cannot grow the map.
    const REMEMBERED: usize = 4096;

    /// Reads every time in `input` that lies after `now` as now, or, further ahead than the
    /// slack, as the moment it was first seen, and returns the problem to count for those.
    fn clamp(&mut self, input: &mut Input, now: Timestamp) -> Option<Problem> {
        let (place, times) = times_of(input)?;
        let mut furthest: Option<Timestamp> = None;
        let slack = now.plus(FUTURE_SLACK);
        for at in times {
            if *at <= now {
                continue;
            }
            if *at <= slack {
                *at = now;
                continue;
            }
            furthest = furthest.max(Some(*at));
            if self.first_seen.len() >= Self::REMEMBERED {
                self.first_seen.clear();
            }
            *at = *self
                .first_seen
                .entry((place.clone(), at.millis()))
                .or_insert(now);
        }
        let far = furthest?;
        Some(Problem::new(
            ProblemKind::FutureTime,
            place,
            format!("dated {far}, after the time of the read ({now}); read as the time it was first seen"),
        ))
    }
}

/// Where an input was read, and every time in it.
fn times_of(input: &mut Input) -> Option<(String, Vec<&mut Timestamp>)> {
    let mut times = Vec::new();
    let place = match input {
        Input::Observed(batch) => {
            times.push(&mut batch.last_write);
            for observation in &mut batch.observations {
                match observation {
                    Observation::Record(record) => times.extend(record.at.as_mut()),
                    Observation::Info(info) => times.extend(info.started_at.as_mut()),
                    Observation::Reset | Observation::Unread(_) | Observation::Usage(_) => {}
                }
            }
            batch.transcript.clone()
        }
        Input::Listing { agent, listing } => {
            for entry in &mut listing.entries {
                times.extend(entry.started_at.as_mut());
                times.extend(entry.updated_at.as_mut());
            }
            format!("{agent} listing")
        }
        Input::Hosted { key, signals } => {
            times.extend(signals.titles.iter_mut().map(|(at, _)| at));
            times.extend(signals.last_draw.as_mut());
            key.to_string()
        }
        Input::HostedProcess { pid, signals } => {
            times.extend(signals.titles.iter_mut().map(|(at, _)| at));
            times.extend(signals.last_draw.as_mut());
            format!("hosted pid {pid}")
        }
        _ => return None,
    };
    Some((place, times))
}

/// The fewest characters of a session id that may name it as a prefix. A shorter text names a
/// session only when it is that session's whole id, so a slip of the keyboard (an empty or
/// one-letter argument) never picks a session by accident.
pub const MIN_PREFIX: usize = 4;

/// Why `slate show <id>` found no single session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FindError {
    #[error("an empty session id names no session; give at least {MIN_PREFIX} characters of one")]
    Empty,
    #[error(
        "`{0}` is too short to name a session: give at least {MIN_PREFIX} characters of its id"
    )]
    TooShort(String),
    #[error("no session with an id starting with `{0}` (try `slate sessions --all`)")]
    NotFound(String),
    #[error("`{id}` matches {count} sessions; give more of the id")]
    Ambiguous { id: String, count: usize },
}

/// The one key `id` names among `keys`: a key whose id starts with `id` (at least
/// `MIN_PREFIX` characters of it), or, when several do, the one whose id is exactly `id`. A
/// shorter `id` names only a key whose whole id it is. This is the one lookup the command line
/// and the API share.
pub fn pick<K: std::borrow::Borrow<SessionKey>>(
    keys: impl IntoIterator<Item = K>,
    id: &str,
) -> Result<K, FindError> {
    if id.is_empty() {
        return Err(FindError::Empty);
    }
    let whole_only = id.chars().count() < MIN_PREFIX;
    let mut matches: Vec<K> = keys
        .into_iter()
        .filter(|key| {
            let full = key.borrow().id.as_str();
            if whole_only {
                full == id
            } else {
                full.starts_with(id)
            }
        })
        .collect();
    if matches.len() == 1 {
        return Ok(matches.remove(0));
    }
    if matches.is_empty() {
        return Err(if whole_only {
            FindError::TooShort(id.to_string())
        } else {
            FindError::NotFound(id.to_string())
        });
    }
    let count = matches.len();
    matches
        .into_iter()
        .find(|key| key.borrow().id.as_str() == id)
        .ok_or_else(|| FindError::Ambiguous {
            id: id.to_string(),
            count,
        })
}

/// Merges two rounds of changes: one change per session, keeping the earliest `previous` and
/// the latest session object.
pub fn merge(first: Vec<Change>, second: Vec<Change>) -> Vec<Change> {
    let mut by_key: HashMap<SessionKey, Change> = HashMap::new();
    let mut order = Vec::new();
    for change in first.into_iter().chain(second) {
        match by_key.get_mut(&change.key) {
            Some(existing) => existing.session = change.session,
            None => {
                order.push(change.key.clone());
                by_key.insert(change.key.clone(), change);
            }
        }
    }
    order
        .into_iter()
        .filter_map(|key| by_key.remove(&key))
        .collect()
}

/// The one-shot commands' sensing: locates the terminal of every live agent process, reads once
/// the panes of the sessions whose reading could change a decision, and applies both to
/// `engine` (`terminals::locate_once`, `terminals::read_once`). A decisive title or screen
/// decides on this one read; rules that need time wait for a live engine.
pub fn sense_once(engine: &mut Engine, now: Timestamp, clock: fn() -> Timestamp) {
    let once = slate_terminals::terminals::locate_once(engine.terminals, engine.processes());
    for problem in &once.problems {
        engine.record_problem(problem.clone());
    }
    engine.apply(Input::Terminals(once.views()), now);
    let wanted = engine.tracker().terminals_wanted();
    let hosted = engine.tracker().hosted_controls();
    let calls = engine.tracker().open_calls();
    let readings = slate_terminals::terminals::read_once(&once, wanted, &hosted, &calls, clock);
    for problem in readings.problems {
        engine.record_problem(problem);
    }
    if !readings.inputs.is_empty() {
        engine.apply_all(readings.inputs, now);
    }
}
