//! The engine: the one owner of the tracker and of the edges' reading state.
//!
//! `Engine` turns what the edges read (transcripts, the process table, the agents' listings) into
//! tracker inputs and applies them; it is the only code that mutates a `Tracker`. It is
//! synchronous and does one thing per call, so the command line can run it once (`refresh`) and a
//! long-running server can drive it from its event loop (file hints, process scans, deadlines).
//! It decides nothing itself: every rule lives in `tracker`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};

use crate::agents::ProcessRole;
use crate::model::{AgentKind, Problem, ProcessTable, Session, SessionKey, Timestamp};
use crate::sources::files::{self, Env, ReadState, Roots, ScanOptions};
use crate::sources::stores::StoreState;
use crate::sources::{listings, processes};
use crate::store::{Store, StoreError};
use crate::tracker::{Change, Evidence, Input, Policy, SeenProcess, Tracker, WorkItemInfo};
use crate::watch::WatchSpec;

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
}

impl Options {
    /// Options for this machine: the process's own environment and live processes.
    pub fn from_env(env: Env) -> Options {
        Options {
            env,
            policy: Policy::default(),
            scan: ScanOptions::default(),
            processes: ProcessSource::Live,
        }
    }
}

/// How many problems of each kind were seen, and the latest few in full.
#[derive(Debug, Clone, Default)]
pub struct Problems {
    pub counts: BTreeMap<String, u64>,
    pub recent: VecDeque<Problem>,
}

impl Problems {
    const RECENT: usize = 50;

    pub fn record(&mut self, problem: Problem) {
        *self.counts.entry(problem.kind.clone()).or_default() += 1;
        if self.recent.len() == Self::RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(problem);
    }

    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }
}

/// One agent root and whether it exists.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RootReport {
    pub agent: AgentKind,
    pub path: PathBuf,
    pub found: bool,
}

pub struct Engine {
    tracker: Tracker,
    roots: Roots,
    scan: ScanOptions,
    read_state: ReadState,
    stores: StoreState,
    process_source: ProcessSource,
    problems: Problems,
    found: Vec<AgentKind>,
    start_slack: std::time::Duration,
    totals: ReadTotals,
    claude_agents: listings::AgentsCommand,
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
    fn add(&mut self, result: &files::ScanResult) {
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
        Engine {
            tracker: Tracker::new(options.policy.clone()),
            roots: files::resolve_roots(&options.env),
            scan: options.scan,
            read_state: ReadState::new(),
            stores: StoreState::new(),
            process_source: options.processes,
            problems: Problems::default(),
            found: Vec::new(),
            start_slack: options.policy.start_slack,
            totals: ReadTotals::default(),
            claude_agents: listings::AgentsCommand::from_process(),
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
        AgentKind::ALL
            .into_iter()
            .filter_map(|agent| {
                let path = self.roots.get(agent)?.to_path_buf();
                Some(RootReport {
                    agent,
                    path,
                    found: self.found.contains(&agent),
                })
            })
            .collect()
    }

    /// The folders the file watcher should watch: where transcripts, registries and stores live.
    pub fn watch_paths(&self) -> Vec<WatchSpec> {
        let mut specs = Vec::new();
        let mut add = |path: PathBuf, recursive: bool| specs.push(WatchSpec { path, recursive });
        if let Some(root) = self.roots.get(AgentKind::ClaudeCode) {
            add(root.join("projects"), true);
            add(root.join("sessions"), false);
            add(root.join("jobs"), true);
        }
        if let Some(root) = self.roots.get(AgentKind::Codex) {
            add(root.join("sessions"), true);
            // The root itself, for `session_index.jsonl`; its other files are filtered out.
            add(root.to_path_buf(), false);
        }
        if let Some(root) = self.roots.get(AgentKind::GeminiCli) {
            add(root.join("tmp"), true);
        }
        if let Some(data) = self.roots.get(AgentKind::OpenCode) {
            // The databases and their WAL files; the watcher forwards only `.db`/`.db-wal` names.
            add(data.to_path_buf(), false);
        }
        if let Some(root) = self.roots.get(AgentKind::CursorAgent) {
            add(root.join("chats"), true);
        }
        specs
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
        let seen = processes::recognise_all(&table);
        let mut inputs = vec![Input::Processes(seen.clone())];
        if let Some(root) = self.roots.get(AgentKind::ClaudeCode) {
            let mut problems = Vec::new();
            let mut listing = listings::read_claude_listing(root, &mut problems);
            // The registry is missing or stale when a live claude has no entry in it; then ask
            // `claude agents --json`. Only for the live table: a recorded one is a replay.
            let unlisted = seen.iter().any(|process| {
                process.recognised.agent == AgentKind::ClaudeCode
                    && matches!(
                        process.recognised.role,
                        ProcessRole::Interactive | ProcessRole::Print
                    )
                    && !listing
                        .entries
                        .iter()
                        .any(|entry| entry.pid == Some(process.info.pid))
            });
            if unlisted && matches!(self.process_source, ProcessSource::Live) {
                let extra = self.claude_agents.entries(&mut problems);
                if !extra.is_empty() {
                    listing.available = true;
                }
                listings::merge_entries(&mut listing, extra);
            }
            self.record_problems(problems);
            inputs.push(Input::Listing {
                agent: AgentKind::ClaudeCode,
                listing,
            });
        }
        self.tracker.apply_all(inputs, now)
    }

    /// Walks every root and reads what changed: the transcripts, then OpenCode's and
    /// cursor-agent's stores.
    pub fn scan_files(&mut self, now: Timestamp) -> Vec<Change> {
        self.scan.vouched = self.tracker.vouched_keys().cloned().collect();
        self.scan.process_since = Some(self.process_since());
        let mut result = files::scan(&self.roots, &self.scan, &mut self.read_state);
        self.totals.add(&result);
        let stores = self
            .stores
            .scan(&self.roots.stores(), now, &mut result.problems);
        result.batches.extend(stores);
        for agent in [AgentKind::OpenCode, AgentKind::CursorAgent] {
            if self.roots.get(agent).is_some_and(Path::is_dir) {
                result.found.push(agent);
            }
        }
        self.found = result.found.clone();
        self.apply_scan(result, now)
    }

    /// Reads one file the watcher says changed: a transcript, or a file of a store.
    pub fn read_path(&mut self, path: &Path, now: Timestamp) -> Vec<Change> {
        let mut problems = Vec::new();
        let stored = self
            .stores
            .read_path(&self.roots.stores(), path, now, &mut problems);
        let result = match stored {
            Some(batches) => files::ScanResult {
                batches,
                problems,
                ..files::ScanResult::default()
            },
            None => {
                self.scan.process_since = Some(self.process_since());
                let result = self.read_state.read_path(&self.roots, &self.scan, path);
                self.totals.add(&result);
                result
            }
        };
        self.apply_scan(result, now)
    }

    /// Reads the user's intents, the work items and the claims held now from Slate's store and
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
        Ok(self.tracker.apply_all(
            [Input::Intents(intents), Input::Custody { items, claims }],
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
        self.tracker.apply(input, now)
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

    fn apply_scan(&mut self, result: files::ScanResult, now: Timestamp) -> Vec<Change> {
        self.record_problems(result.problems);
        let gone = result.gone.into_iter().map(|gone| Input::TranscriptGone {
            key: gone.key,
            transcript: gone.transcript,
        });
        let observed = result.batches.into_iter().map(Input::Observed);
        self.tracker.apply_all(gone.chain(observed), now)
    }

    fn record_problems(&mut self, problems: Vec<Problem>) {
        for problem in problems {
            tracing::debug!(kind = %problem.kind, place = %problem.place, "{}", problem.detail);
            self.problems.record(problem);
        }
    }
}

/// Why `slate show <id>` found no single session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FindError {
    #[error("no session with an id starting with `{0}` (try `slate sessions --all`)")]
    NotFound(String),
    #[error("`{id}` matches {count} sessions; give more of the id")]
    Ambiguous { id: String, count: usize },
}

/// The one key `id` names among `keys`: a key whose id starts with `id`, or, when several do,
/// the one whose id is exactly `id`.
pub fn pick<K: std::borrow::Borrow<SessionKey>>(
    keys: impl IntoIterator<Item = K>,
    id: &str,
) -> Result<K, FindError> {
    let mut matches: Vec<K> = keys
        .into_iter()
        .filter(|key| key.borrow().id.as_str().starts_with(id))
        .collect();
    if matches.len() == 1 {
        return Ok(matches.remove(0));
    }
    if matches.is_empty() {
        return Err(FindError::NotFound(id.to_string()));
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
