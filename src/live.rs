//! The live service: one loop that keeps the engine current and tells subscribers what changed.
//!
//! Every source of change (file-watcher hints, the process-scan and re-walk timers, the tracker's
//! own deadline, and commands from the API or the desktop shell) arrives as one `Event` on one
//! channel, and one thread handles them in order. That thread is the only one that touches the
//! `Engine`; everyone else reads the published snapshot through a `Handle` and follows changes
//! through a broadcast channel. The loop blocks on the channel until the next event or deadline,
//! so an idle machine with no pending flip wakes only for the periodic scans.
//!
//! This module owns timing and fan-out. It does not decide states (`tracker` does), read files
//! (`sources` does), or speak HTTP (`api` does).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::broadcast;

use crate::engine::{Engine, FindError, Options, RootReport};
use crate::model::{AgentKind, HostedSignals, Intent, Session, SessionKey, Status, Timestamp};
use crate::report;
use crate::sources::git::GitCache;
use crate::store::{Store, Transition};
use crate::tracker::{Change, Closed, Evidence, Input, Policy};

/// How often the loop does its periodic work. `Default` gives docs/states.md §5's values.
#[derive(Debug, Clone)]
pub struct Timing {
    /// File-watcher hints for the same file within this time are read once.
    pub coalesce: Duration,
    /// The process table is scanned this often (and at once on refresh).
    pub process_scan: Duration,
    /// Every root is walked again this often, because watcher events are hints.
    pub rewalk: Duration,
    /// A hosted report from a program the last process scan did not see (a CLI started under
    /// `slate run` since) brings the next scan forward, to at most this long after the last one.
    pub hosted_rescan: Duration,
}

impl Default for Timing {
    fn default() -> Timing {
        Timing {
            coalesce: Duration::from_millis(150),
            process_scan: Duration::from_secs(15),
            rewalk: Duration::from_secs(60),
            hosted_rescan: Duration::from_secs(2),
        }
    }
}

/// Everything that can wake the loop.
#[derive(Debug)]
pub enum Event {
    /// A watched file or folder changed (a hint; it is read after the coalescing delay).
    Changed(PathBuf),
    /// The watcher lost track (overflow, error): walk everything.
    Rescan,
    /// Re-read everything now: processes, listings and transcripts.
    Refresh,
    /// A hosted session reported its terminal signals.
    Hosted {
        key: SessionKey,
        signals: HostedSignals,
    },
    /// The user's intents, work items or claims changed in the store: read them again.
    IntentsChanged,
    /// A hosted terminal reported its signals by the pid of the program it runs (`POST /hosted`
    /// without a session id): they go to the session that process vouches for.
    HostedProcess { pid: u32, signals: HostedSignals },
    /// Stop the loop.
    Shutdown,
}

/// Why an intent could not be set.
#[derive(Debug, thiserror::Error)]
pub enum IntentError {
    #[error("this service runs without a store, so it cannot keep intents")]
    NoStore,
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

/// What subscribers receive.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Update {
    /// A live session appeared or changed; the whole session object.
    Session { session: Box<Session> },
    /// A session left the live list (it closed).
    Removed { agent: AgentKind, id: String },
}

/// One session with the evidence that decided it and its recent transitions.
#[derive(Debug, Clone, Serialize)]
pub struct Detail {
    pub session: Session,
    pub evidence: Vec<Evidence>,
    pub transitions: Vec<Transition>,
    /// The time the session has spent in Needs you, in all, from the recorded transitions; absent
    /// without a store.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs_you_ms: Option<u64>,
}

/// What `/health` reports.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Health {
    pub version: String,
    pub roots: Vec<RootReport>,
    pub problems: BTreeMap<crate::model::ProblemKind, u64>,
    pub live_sessions: usize,
    pub needs_you: usize,
    /// Set when the store was corrupt at start-up and was moved aside to this path.
    pub store_recovered_from: Option<PathBuf>,
    /// How many times the loop has woken since it started, for the idle-cost benchmark.
    pub wakeups: u64,
}

/// What the loop publishes after every round.
#[derive(Debug, Default)]
struct Published {
    /// Every session the tracker holds in full, live and closed, by key.
    sessions: HashMap<SessionKey, Session>,
    /// The closed sessions the tracker keeps as summaries (most of a long history), shared with
    /// it; their session objects are decided again when asked for, with `policy`.
    closed: Arc<HashMap<SessionKey, Closed>>,
    policy: Policy,
    evidence: HashMap<SessionKey, Vec<Evidence>>,
    health: Health,
}

struct Shared {
    published: RwLock<Published>,
    updates: broadcast::Sender<Update>,
    events: mpsc::Sender<Event>,
    store: Option<Arc<Mutex<Store>>>,
    /// How many refreshes have been asked for, and how many the loop has published. A waiter
    /// waits for its own refresh, not for any round: a round already under way when the
    /// refresh was asked may have read the store before the change that asked for it.
    refreshes_asked: std::sync::atomic::AtomicU64,
    refreshes_done: tokio::sync::watch::Sender<u64>,
    clock: fn() -> Timestamp,
}

/// A cheap, cloneable view of the live service for the API, the CLI and the desktop shell.
#[derive(Clone)]
pub struct Handle {
    shared: Arc<Shared>,
}

impl Handle {
    /// The live sessions (not closed), Needs you first.
    pub fn live_sessions(&self) -> Vec<Session> {
        let published = self.shared.published.read().expect("lock poisoned");
        live_list(&published)
    }

    /// The live list and a receiver for every change after it, taken together so no change
    /// falls between the two.
    pub fn subscribe(&self) -> (Vec<Session>, broadcast::Receiver<Update>) {
        let published = self.shared.published.read().expect("lock poisoned");
        let receiver = self.shared.updates.subscribe();
        (live_list(&published), receiver)
    }

    /// One session by id (or unique prefix), live or closed, with evidence and transitions.
    pub fn session(&self, id: &str) -> Option<Detail> {
        self.find(id).ok()
    }

    /// Like `session`, but says why `id` names no single session (`engine::pick`'s rules).
    pub fn find(&self, id: &str) -> Result<Detail, FindError> {
        let published = self.shared.published.read().expect("lock poisoned");
        let keys = published.sessions.keys().chain(published.closed.keys());
        let key = crate::engine::pick(keys, id)?;
        let (session, evidence) = match published.sessions.get(key) {
            Some(session) => (
                session.clone(),
                published.evidence.get(key).cloned().unwrap_or_default(),
            ),
            None => published
                .closed
                .get(key)
                .ok_or_else(|| FindError::NotFound(id.to_string()))?
                .session(key, &published.policy),
        };
        Ok(self.detail(key, session, evidence))
    }

    fn detail(&self, key: &SessionKey, session: Session, evidence: Vec<Evidence>) -> Detail {
        let now = (self.shared.clock)();
        let store = self
            .shared
            .store
            .as_ref()
            .and_then(|store| store.lock().ok());
        let transitions = store
            .as_ref()
            .and_then(|store| store.transitions(key, 20).ok())
            .unwrap_or_default();
        let needs_you_ms = store
            .as_ref()
            .and_then(|store| store.time_in_status(key, Status::Waiting, now).ok())
            .map(|total| u64::try_from(total.as_millis()).unwrap_or(u64::MAX));
        Detail {
            session,
            evidence,
            transitions,
            needs_you_ms,
        }
    }

    pub fn health(&self) -> Health {
        self.shared
            .published
            .read()
            .expect("lock poisoned")
            .health
            .clone()
    }

    /// Asks the loop to re-read everything now, without waiting.
    pub fn refresh(&self) {
        self.ask_refresh();
    }

    /// Asks for a refresh and returns its number: the loop has published it once it has
    /// published that many refreshes. Refreshes are counted before they are sent, so the n-th
    /// refresh the loop handles was sent after the n-th number was taken, and so after whatever
    /// its asker did before asking.
    fn ask_refresh(&self) -> u64 {
        let ticket = self
            .shared
            .refreshes_asked
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            + 1;
        let _ = self.shared.events.send(Event::Refresh);
        ticket
    }

    /// Asks the loop to re-read everything and waits until it has published the result.
    pub async fn refresh_and_wait(&self) {
        let mut done = self.shared.refreshes_done.subscribe();
        let ticket = self.ask_refresh();
        while *done.borrow_and_update() < ticket {
            if done.changed().await.is_err() {
                return;
            }
        }
    }

    /// Sends any event to the loop (hosted-session signals, a watcher hint).
    pub fn send(&self, event: Event) {
        let _ = self.shared.events.send(event);
    }

    /// Sets (or, with `IntentState::None`, clears) the user's intent on a session: writes it to
    /// the store and asks the loop to read intents again. This is what `POST /sessions/{id}/intent`
    /// calls; the change reaches the snapshot and subscribers on the loop's next round (await
    /// `refresh_and_wait` to see it published).
    pub fn set_intent(&self, key: &SessionKey, intent: &Intent) -> Result<(), IntentError> {
        let store = self.shared.store.as_ref().ok_or(IntentError::NoStore)?;
        {
            let store = store.lock().map_err(|_| IntentError::NoStore)?;
            store.set_intent(key, intent, (self.shared.clock)())?;
        }
        let _ = self.shared.events.send(Event::IntentsChanged);
        Ok(())
    }

    /// Stops the loop.
    pub fn shutdown(&self) {
        let _ = self.shared.events.send(Event::Shutdown);
    }
}

fn live_list(published: &Published) -> Vec<Session> {
    let mut sessions: Vec<Session> = published
        .sessions
        .values()
        .filter(|session| session.status != Status::Ended)
        .cloned()
        .collect();
    report::sort_for_display(&mut sessions);
    sessions
}

/// A walk of every root may take at most this share of the time between walks.
const REWALK_SHARE: u32 = 2000;

/// The time until the next safety-net walk: `every`, or longer when a walk is slow (a history
/// of tens of thousands of transcripts), so the walk never costs more than 1/`REWALK_SHARE` of
/// the time (0.05 %). The watcher's events remain the way changes arrive; the walk only
/// catches what they missed.
fn rewalk_interval(every: Duration, walk_took: Duration) -> Duration {
    every.max(walk_took.saturating_mul(REWALK_SHARE))
}

/// The wall clock, the default `Service::clock`.
pub fn system_clock() -> Timestamp {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Timestamp::from_millis(since_epoch.as_millis() as i64)
}

/// How many changes a subscriber may fall behind before it has lagged. The channel keeps each
/// change until every subscriber has read it, so a subscriber that stops reading (an event-stream
/// client whose socket is full) holds back this many session objects at most: a few hundred,
/// a megabyte or two now that free text has a limit (`limits`). Past that it has lagged, and the
/// API sends it a fresh snapshot when it reads again.
pub const SUBSCRIBER_BACKLOG: usize = 256;

/// The pieces a live service is built from.
pub struct Service {
    pub options: Options,
    pub timing: Timing,
    pub store: Option<Store>,
    /// The wall clock; tests pass a fake one.
    pub clock: fn() -> Timestamp,
}

/// Starts the loop on its own thread and returns its handle once the first full read is
/// published, so the first snapshot a client sees is already correct.
pub fn start(service: Service) -> (Handle, std::thread::JoinHandle<()>) {
    let (events, inbox) = mpsc::channel();
    let (updates, _) = broadcast::channel(SUBSCRIBER_BACKLOG);
    let (refreshes_done, _) = tokio::sync::watch::channel(0);
    let store_recovered_from = service
        .store
        .as_ref()
        .and_then(|store| store.recovered_from().map(PathBuf::from));
    let store = service.store.map(|store| Arc::new(Mutex::new(store)));
    let shared = Arc::new(Shared {
        published: RwLock::new(Published::default()),
        updates,
        events: events.clone(),
        store: store.clone(),
        refreshes_asked: std::sync::atomic::AtomicU64::new(0),
        refreshes_done,
        clock: service.clock,
    });
    let handle = Handle {
        shared: shared.clone(),
    };
    let (ready_tx, ready_rx) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("slate-engine".to_string())
        .spawn(move || {
            let mut state = LoopState {
                engine: Engine::new(service.options),
                timing: service.timing,
                clock: service.clock,
                shared,
                store,
                store_recovered_from,
                watcher: None,
                git: GitCache::default(),
                git_recheck: None,
                wakeups: 0,
            };
            state.watcher = crate::watch::start(state.engine.watch_paths(), events.clone());
            state.run(inbox, ready_tx);
        })
        .expect("the engine thread starts");
    let _ = ready_rx.recv();
    (handle, thread)
}

/// How long a hosted pid that asked for early scans is remembered (see `Timing::hosted_rescan`).
const FORGET_UNSEEN_HOSTED: Duration = Duration::from_secs(3600);

/// True when the last process scan saw an agent process that can vouch for a session and that is
/// the hosted program `pid` or its child (Gemini CLI relaunches itself in a child), as the
/// tracker attaches hosted signals.
fn can_vouch(engine: &Engine, pid: u32) -> bool {
    engine.processes().iter().any(|process| {
        matches!(
            process.recognised.role,
            crate::agents::ProcessRole::Interactive | crate::agents::ProcessRole::Print
        ) && (process.info.pid == pid || process.info.ppid == Some(pid))
    })
}

struct LoopState {
    engine: Engine,
    timing: Timing,
    clock: fn() -> Timestamp,
    shared: Arc<Shared>,
    store: Option<Arc<Mutex<Store>>>,
    store_recovered_from: Option<PathBuf>,
    watcher: Option<crate::watch::Watcher>,
    /// Git facts of live sessions' folders, added to the sessions as they are published.
    git: GitCache,
    /// Live sessions whose git facts must be read again before the next publish: every one
    /// (`Some(None)`) or those in these folders.
    git_recheck: Option<Option<Vec<PathBuf>>>,
    wakeups: u64,
}

impl LoopState {
    fn run(&mut self, inbox: mpsc::Receiver<Event>, ready: mpsc::Sender<()>) {
        let now = (self.clock)();
        self.load_custody(now);
        let started = Instant::now();
        let first = self.engine.refresh(now);
        let walk_took = started.elapsed();
        self.publish(first, true);
        self.refresh_watches();
        let _ = ready.send(());

        let mut pending: BTreeSet<PathBuf> = BTreeSet::new();
        let mut read_pending_at: Option<Instant> = None;
        let mut next_scan = Instant::now() + self.timing.process_scan;
        let mut last_scan = Instant::now();
        // Hosted pids no scan had seen when they first reported, and when that was.
        let mut unseen_hosted: HashMap<u32, Instant> = HashMap::new();
        let mut next_rewalk = Instant::now() + rewalk_interval(self.timing.rewalk, walk_took);
        loop {
            let deadline_at = self.engine.next_deadline().map(|deadline| {
                let wait = Duration::from_millis(
                    deadline
                        .millis()
                        .saturating_sub((self.clock)().millis())
                        .max(0) as u64,
                );
                Instant::now() + wait
            });
            let wake = [
                Some(next_scan),
                Some(next_rewalk),
                read_pending_at,
                deadline_at,
            ]
            .into_iter()
            .flatten()
            .min()
            .expect("the periodic scans always set a wake time");
            let event = match inbox.recv_timeout(wake.saturating_duration_since(Instant::now())) {
                Ok(event) => Some(event),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return,
            };
            self.wakeups += 1;
            let mut changes = Vec::new();
            let refreshed = matches!(event, Some(Event::Refresh));
            match event {
                Some(Event::Changed(path)) => {
                    pending.insert(path);
                    read_pending_at.get_or_insert(Instant::now() + self.timing.coalesce);
                }
                Some(Event::Rescan) => {
                    changes = self.engine.scan_files((self.clock)());
                    self.refresh_watches();
                }
                Some(Event::Refresh) => {
                    self.git.invalidate_all();
                    self.git_recheck = Some(None);
                    changes = self.load_custody((self.clock)());
                    changes = crate::engine::merge(changes, self.engine.refresh((self.clock)()));
                    self.refresh_watches();
                    next_scan = Instant::now() + self.timing.process_scan;
                    last_scan = Instant::now();
                    pending.clear();
                    read_pending_at = None;
                }
                Some(Event::Hosted { key, signals }) => {
                    changes = self
                        .engine
                        .apply(Input::Hosted { key, signals }, (self.clock)());
                }
                Some(Event::IntentsChanged) => changes = self.load_custody((self.clock)()),
                Some(Event::HostedProcess { pid, signals }) => {
                    changes = self
                        .engine
                        .apply(Input::HostedProcess { pid, signals }, (self.clock)());
                    // The report of a CLI started since the last scan attaches to no session
                    // until a scan sees the CLI, and the next periodic scan may be a whole
                    // `process_scan` away: a dialog would wait that long to read Needs you. So
                    // scan soon, at most once a `hosted_rescan`, for as long as one periodic scan
                    // would take; a program that is no agent is never seen and stops asking then
                    // (its pid is remembered for an hour, so it does not start asking again).
                    let now = Instant::now();
                    unseen_hosted.retain(|_, first| now < *first + FORGET_UNSEEN_HOSTED);
                    if !can_vouch(&self.engine, pid) {
                        let first = *unseen_hosted.entry(pid).or_insert(now);
                        if now < first + self.timing.process_scan {
                            next_scan = next_scan.min(last_scan + self.timing.hosted_rescan);
                        }
                    }
                }
                Some(Event::Shutdown) => return,
                None => {}
            }
            let instant = Instant::now();
            if read_pending_at.is_some_and(|at| at <= instant) {
                read_pending_at = None;
                let now = (self.clock)();
                for path in std::mem::take(&mut pending) {
                    if self.git_head_changed(&path) {
                        continue;
                    }
                    changes = crate::engine::merge(changes, self.engine.read_path(&path, now));
                }
                self.refresh_watches();
            }
            if next_scan <= instant {
                next_scan = instant + self.timing.process_scan;
                last_scan = instant;
                changes = crate::engine::merge(changes, self.engine.scan_processes((self.clock)()));
            }
            if next_rewalk <= instant {
                let started = Instant::now();
                changes = crate::engine::merge(changes, self.engine.scan_files((self.clock)()));
                next_rewalk =
                    Instant::now() + rewalk_interval(self.timing.rewalk, started.elapsed());
                self.refresh_watches();
            }
            if deadline_at.is_some_and(|at| at <= instant) {
                changes = crate::engine::merge(changes, self.engine.tick((self.clock)()));
            }
            let repositories = self.git.len();
            self.publish(changes, false);
            if refreshed {
                self.shared.refreshes_done.send_modify(|done| *done += 1);
            }
            if self.git.len() != repositories {
                self.refresh_watches();
            }
        }
    }

    /// Reads intents, work items and claims from the store into the engine. A store that cannot
    /// be read is logged and the previous custody kept.
    fn load_custody(&mut self, now: Timestamp) -> Vec<Change> {
        let Some(store) = &self.store else {
            return Vec::new();
        };
        let Ok(store) = store.lock() else {
            return Vec::new();
        };
        match self.engine.load_custody(&store, now) {
            Ok(changes) => changes,
            Err(err) => {
                tracing::warn!("cannot read intents and claims: {err}");
                Vec::new()
            }
        }
    }

    /// Keeps the watcher on every root, on folders that appeared since, and on the `.git`
    /// folders of live sessions' checkouts (for their `HEAD`).
    fn refresh_watches(&mut self) {
        if let Some(watcher) = &mut self.watcher {
            let mut specs = self.engine.watch_paths();
            specs.extend(self.git.git_dirs().into_iter().map(|path| {
                crate::sources::roots::WatchSpec {
                    path,
                    recursive: false,
                }
            }));
            watcher.watch_all(specs);
        }
    }

    /// When `path` is the `HEAD` of a checkout a live session works in, schedules a re-read of
    /// that checkout's git facts and returns true.
    fn git_head_changed(&mut self, path: &std::path::Path) -> bool {
        if path.file_name().is_none_or(|name| name != "HEAD") {
            return false;
        }
        let Some(git_dir) = path.parent() else {
            return false;
        };
        let folders = self.git.invalidate_repository(git_dir);
        if folders.is_empty() {
            return false;
        }
        match &mut self.git_recheck {
            Some(None) => {}
            Some(Some(scheduled)) => scheduled.extend(folders),
            None => self.git_recheck = Some(Some(folders)),
        }
        true
    }

    /// Sessions the store last saw open that are closed now, with no change to say so (a
    /// session that ended while Slate was not running is first seen closed): their closing, so
    /// their history does not stay open for ever.
    fn closed_while_away(
        &self,
        store: &Store,
        changes: &[Change],
        now: Timestamp,
    ) -> Vec<Transition> {
        let unfinished = match store.unfinished() {
            Ok(unfinished) => unfinished,
            Err(err) => {
                tracing::warn!("cannot read which sessions the store saw open: {err}");
                return Vec::new();
            }
        };
        unfinished
            .into_iter()
            .filter(|(key, _)| !changes.iter().any(|change| change.key == *key))
            .filter_map(|(key, last)| {
                let session = self.engine.tracker().session(&key)?;
                (session.status == Status::Ended).then_some(Transition {
                    key,
                    from: Some(last),
                    to: Status::Ended,
                    reason: session.session_state.reason,
                    at: now,
                })
            })
            .collect()
    }

    /// Publishes the engine's state, records transitions, and broadcasts what changed.
    fn publish(&mut self, mut changes: Vec<Change>, first: bool) {
        let now = (self.clock)();
        let checked = Instant::now();
        for change in &mut changes {
            add_git_facts(&mut self.git, &mut change.session, checked);
        }
        if let Some(store) = &self.store {
            if let Ok(store) = store.lock() {
                let mut transitions: Vec<Transition> = changes
                    .iter()
                    .filter(|change| change.previous != Some(change.session.status))
                    .map(|change| Transition {
                        key: change.key.clone(),
                        from: change.previous,
                        to: change.session.status,
                        reason: change.session.session_state.reason.clone(),
                        at: now,
                    })
                    .collect();
                if first {
                    transitions.extend(self.closed_while_away(&store, &changes, now));
                }
                if let Err(err) = store.record_transitions(&transitions) {
                    tracing::warn!("cannot record state transitions: {err}");
                }
            }
        }
        let mut published = self.shared.published.write().expect("lock poisoned");
        for change in &changes {
            published
                .sessions
                .insert(change.key.clone(), change.session.clone());
        }
        if first {
            published.policy = self.engine.tracker().policy().clone();
            published.sessions = self
                .engine
                .full_sessions()
                .map(|session| {
                    let mut session = session.clone();
                    add_git_facts(&mut self.git, &mut session, checked);
                    (session.key(), session)
                })
                .collect();
        }
        let closed = self.engine.tracker().closed();
        if !Arc::ptr_eq(&published.closed, closed) {
            // Summaries the tracker brought back to full entries are published in full, even
            // when their decision did not change.
            let reopened: Vec<SessionKey> = published
                .closed
                .keys()
                .filter(|key| !closed.contains_key(*key) && !published.sessions.contains_key(*key))
                .cloned()
                .collect();
            for key in reopened {
                if let Some(session) = self.engine.tracker().session(&key) {
                    published.sessions.insert(key, session);
                }
            }
            published.closed = Arc::clone(closed);
        }
        if let Some(scope) = self.git_recheck.take() {
            let changed: BTreeSet<SessionKey> =
                changes.iter().map(|change| change.key.clone()).collect();
            for (key, session) in published.sessions.iter_mut() {
                let in_scope = match (&scope, session.folder.as_deref()) {
                    (None, _) => true,
                    (Some(folders), Some(folder)) => folders
                        .iter()
                        .any(|f| f.as_path() == std::path::Path::new(folder)),
                    (Some(_), None) => false,
                };
                if !in_scope || changed.contains(key) || session.status == Status::Ended {
                    continue;
                }
                let mut updated = session.clone();
                add_git_facts(&mut self.git, &mut updated, checked);
                if updated != *session {
                    *session = updated.clone();
                    changes.push(Change {
                        key: key.clone(),
                        previous: Some(updated.status),
                        session: updated,
                    });
                }
            }
        }
        published.evidence = published
            .sessions
            .iter()
            .filter(|(_, session)| session.status != Status::Ended)
            .map(|(key, _)| (key.clone(), self.engine.evidence(key)))
            .collect();
        let live = live_list(&published);
        published.health = Health {
            version: env!("CARGO_PKG_VERSION").to_string(),
            roots: self.engine.roots(),
            problems: self.engine.problems().counts.clone(),
            live_sessions: live.len(),
            needs_you: live
                .iter()
                .filter(|session| session.status == Status::Waiting)
                .count(),
            store_recovered_from: self.store_recovered_from.clone(),
            wakeups: self.wakeups,
        };
        drop(published);
        if !first {
            for change in changes {
                let update = if change.session.status == Status::Ended {
                    if change.previous.is_none() || change.previous == Some(Status::Ended) {
                        continue;
                    }
                    Update::Removed {
                        agent: change.key.agent,
                        id: change.key.id.0,
                    }
                } else {
                    Update::Session {
                        session: Box::new(change.session),
                    }
                };
                let _ = self.shared.updates.send(update);
            }
        }
        let _ = now;
    }
}

/// Adds the checkout's current branch, ahead/behind and dirty count to a live session. The
/// checkout's branch replaces the one the transcript recorded, which may be stale; a closed
/// session keeps what its transcript said.
fn add_git_facts(git: &mut GitCache, session: &mut Session, now: Instant) {
    if session.status == Status::Ended {
        return;
    }
    let Some(folder) = session.folder.as_deref() else {
        return;
    };
    let Some(facts) = git.facts(std::path::Path::new(folder), now) else {
        return;
    };
    if facts.branch.is_some() {
        session.branch = facts.branch.clone();
    }
    session.ahead = facts.ahead;
    session.behind = facts.behind;
    session.dirty = facts.dirty;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_walk_is_made_less_often() {
        let minute = Duration::from_secs(60);
        assert_eq!(rewalk_interval(minute, Duration::from_millis(5)), minute);
        assert_eq!(rewalk_interval(minute, Duration::from_millis(30)), minute);
        assert_eq!(
            rewalk_interval(minute, Duration::from_millis(150)),
            Duration::from_secs(300)
        );
    }
}
