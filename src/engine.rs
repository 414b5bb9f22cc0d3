//! The engine: the one owner of the tracker and of the edges' reading state.
//!
//! `Engine` turns what the edges read (transcripts, the process table, the agents' listings) into
//! tracker inputs and applies them; it is the only code that mutates a `Tracker`. It is
//! synchronous and does one thing per call, so the command line can run it once (`refresh`) and a
//! long-running server can drive it from its event loop (file hints, process scans, deadlines).
//! It decides nothing itself: every rule lives in `tracker`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};

use crate::model::{AgentKind, Problem, ProcessTable, Session, SessionKey, Timestamp};
use crate::sources::files::{self, Env, ReadState, Roots, ScanOptions};
use crate::sources::{listings, processes};
use crate::tracker::{Change, Input, Policy, SeenProcess, Tracker};
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
    process_source: ProcessSource,
    problems: Problems,
    found: Vec<AgentKind>,
}

impl Engine {
    pub fn new(options: Options) -> Engine {
        Engine {
            tracker: Tracker::new(options.policy),
            roots: files::resolve_roots(&options.env),
            scan: options.scan,
            read_state: ReadState::new(),
            process_source: options.processes,
            problems: Problems::default(),
            found: Vec::new(),
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
        let mut inputs = vec![Input::Processes(seen)];
        if let Some(root) = self.roots.get(AgentKind::ClaudeCode) {
            let mut problems = Vec::new();
            let listing = listings::read_claude_listing(root, &mut problems);
            self.record_problems(problems);
            inputs.push(Input::Listing {
                agent: AgentKind::ClaudeCode,
                listing,
            });
        }
        self.tracker.apply_all(inputs, now)
    }

    /// Walks every root and reads what changed.
    pub fn scan_files(&mut self, now: Timestamp) -> Vec<Change> {
        self.scan.vouched = self.tracker.vouched_keys().cloned().collect();
        let result = files::scan(&self.roots, &self.scan, &mut self.read_state);
        self.found = result.found.clone();
        self.apply_scan(result, now)
    }

    /// Reads one file the watcher says changed.
    pub fn read_path(&mut self, path: &Path, now: Timestamp) -> Vec<Change> {
        let result = self.read_state.read_path(&self.roots, &self.scan, path);
        self.apply_scan(result, now)
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
        self.tracker.sessions().cloned().collect()
    }

    /// The processes the last scan recognised.
    pub fn processes(&self) -> &[SeenProcess] {
        self.tracker.processes()
    }

    /// Finds a session by its id or a unique prefix of it.
    pub fn find(&self, id: &str) -> Result<&Session, FindError> {
        let matches: Vec<&Session> = self
            .tracker
            .sessions()
            .filter(|session| session.id.as_str().starts_with(id))
            .collect();
        match matches.as_slice() {
            [] => Err(FindError::NotFound(id.to_string())),
            [one] => Ok(one),
            many => match many.iter().find(|session| session.id.as_str() == id) {
                Some(exact) => Ok(exact),
                None => Err(FindError::Ambiguous {
                    id: id.to_string(),
                    count: many.len(),
                }),
            },
        }
    }

    /// The evidence behind a session's state.
    pub fn evidence(&self, key: &SessionKey) -> Vec<String> {
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
