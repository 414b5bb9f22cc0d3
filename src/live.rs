//! The live service: one loop that keeps the engine current and tells subscribers what changed.
//!
//! Every source of change (file-watcher hints, the timers of the `schedule`, and commands from
//! the API or the desktop shell) arrives as one `Event` on one channel or falls due in the
//! schedule, and one thread handles them in order. That thread is the only one that touches the
//! `Engine`; everyone else reads the published snapshot through a `Handle` and follows changes
//! through a broadcast channel. The loop blocks on the channel until the next event or timer, so
//! an idle machine with no pending flip wakes only for the periodic scans.
//!
//! Each round ends in a publish of three steps: recording the status transitions in the store,
//! applying the changes to the published snapshot (with git facts, evidence, the live list and
//! health), and broadcasting what changed on the live list. The live list is `policy`'s: live
//! sessions, closed ones holding a work claim, and closed, reclaimable ones until `[cleanup]
//! reclaim_after_minutes` has passed (a timer of the schedule takes them off). The loop also
//! watches the config file and applies a change at once (`settings`).
//!
//! The live list also holds the sessions of the config's `[[remote]]` machines, when the service
//! runs with links (`Service::remotes`): one `remote::link::Link` per remote hands what its
//! `ssh … slate watch --json` prints to this loop as `Event::Remote`, `remote::view` keeps each
//! machine's sessions and says which changed, and they are published and broadcast with this
//! machine's own, each carrying its `machine`. A config edit that adds or removes a remote starts
//! or stops its link.
//!
//! This module owns the loop and fan-out. It does not decide states (`tracker` does), read files
//! (`sources` does), plan its own timers (`schedule` does), speak HTTP (`api` does) or SSH
//! (`remote::link` does).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::broadcast;

use crate::config::RemoteEntry;
use crate::engine::{merge, Engine, FindError, Options, RootReport};
use crate::model::{
    AgentKind, HostedSignals, Intent, Machine, Session, SessionKey, Status, Timestamp,
};
use crate::policy::{self, notifications, Leaves};
use crate::remote::link::{Credit, Link};
use crate::remote::view::{LinkEvent, Remotes};
use crate::remote::{self, LinkOptions};
use crate::report;
use crate::schedule::{Schedule, Task};
use crate::settings::{self, Reload, Settings};
use crate::sources::git::GitCache;
use crate::sources::roots::WatchSpec;
use crate::store::{Store, Transition};
use crate::terminals::{self, Sensing};
use crate::tracker::{Change, Closed, Evidence, Input, Policy};
use crate::watch::{self, Hint};

pub use crate::schedule::Timing;

/// Everything that can wake the loop besides its timers.
#[derive(Debug)]
pub enum Event {
    /// The file watcher's hint: a file changed (read after the coalescing delay), or walk
    /// everything.
    Hint(Hint),
    /// Re-read everything now: the config, processes, listings and transcripts.
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
    /// The terminal reader located processes' terminals or read panes (`terminals`).
    Terminals(terminals::Delivery),
    /// What the link to a remote machine reported, with its place among the link's events out
    /// (dropped once handled, so the link reads on).
    Remote {
        machine: Machine,
        event: LinkEvent,
        credit: Credit,
    },
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
    /// A session on the live list appeared or changed; the whole session object.
    Session { session: Box<Session> },
    /// A session left the live list (it closed, or its time on the list as closed is up, or
    /// its remote machine was taken out of the config). `machine` is absent for this machine's.
    Removed {
        agent: AgentKind,
        id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        machine: Option<Machine>,
    },
}

impl Update {
    /// The update as the notification policy reads it.
    pub fn as_notification(&self) -> notifications::Input<'_> {
        match self {
            Update::Session { session } => notifications::Input::Changed(session),
            Update::Removed { agent, id, machine } => notifications::Input::Removed {
                agent: *agent,
                id,
                machine: machine.as_ref(),
            },
        }
    }

    /// The removal of the session `key` names.
    pub fn removed(key: &SessionKey) -> Update {
        Update::Removed {
            agent: key.agent,
            id: key.id.as_str().to_string(),
            machine: key.machine.clone(),
        }
    }
}

/// One session with the evidence that decided it and its recent transitions.
#[derive(Debug, Clone, Serialize)]
pub struct Detail {
    pub session: Session,
    pub evidence: Vec<Evidence>,
    pub transitions: Vec<Transition>,
    /// The latest answers to its dialogs, newest first, whatever their outcome.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<crate::protocol::Record>,
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
    /// The config in force, its file, and what is wrong with the file now (`error`).
    pub settings: Settings,
    /// Each `[[remote]]` machine's link (empty when there are none, or the service runs
    /// without links).
    pub remotes: Vec<remote::Report>,
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
    /// The live list, by key: what subscribers see.
    live: HashMap<SessionKey, Session>,
    /// Every remote machine's sessions, by key (each key names its machine).
    remote: HashMap<SessionKey, Session>,
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
    /// Set by `Handle::shutdown`: the loop checks it before every event, so events queued before
    /// the `Shutdown` event (a remote's flood, a burst of file hints) never delay the stop.
    stopping: std::sync::atomic::AtomicBool,
    refreshes_done: tokio::sync::watch::Sender<u64>,
    settings_changed: tokio::sync::watch::Sender<Settings>,
    remotes_changed: tokio::sync::watch::Sender<Vec<remote::Report>>,
    /// How the links run, for an answer forwarded to a remote (`remote::forward`).
    link_options: Option<LinkOptions>,
    clock: fn() -> Timestamp,
}

/// A cheap, cloneable view of the live service for the API, the CLI and the desktop shell.
#[derive(Clone)]
pub struct Handle {
    shared: Arc<Shared>,
}

impl Handle {
    /// The live list, Needs you first.
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
    /// `NAME:ID` names a session on the remote machine `NAME`; a bare id, one on this machine.
    pub fn find(&self, id: &str) -> Result<Detail, FindError> {
        let published = self.shared.published.read().expect("lock poisoned");
        if let Some((machine, rest)) = remote_reference(id, &published.health.remotes) {
            let keys = published
                .remote
                .keys()
                .filter(|key| key.machine.as_ref() == Some(&machine));
            let key = crate::engine::pick(keys, rest).map_err(|err| match err {
                FindError::NotFound(_) => FindError::NotFound(id.to_string()),
                other => other,
            })?;
            let session = published.remote[key].clone();
            return Ok(Detail {
                session,
                evidence: Vec::new(),
                transitions: Vec::new(),
                answers: Vec::new(),
                needs_you_ms: None,
            });
        }
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
        let answers = store
            .as_ref()
            .and_then(|store| store.answers(key, 20).ok())
            .unwrap_or_default();
        Detail {
            session,
            evidence,
            transitions,
            answers,
            needs_you_ms,
        }
    }

    /// The time on the service's clock.
    pub fn now(&self) -> Timestamp {
        (self.shared.clock)()
    }

    /// The folder of the answers' locks (`answers::lock_folder`), beside this Slate's store;
    /// `None` without a store file.
    pub fn answer_locks(&self) -> Option<std::path::PathBuf> {
        let store = self.shared.store.as_ref()?.lock().ok()?;
        crate::answers::lock_folder(store.path())
    }

    /// Records one answer to a session's dialog in the store, whatever its outcome.
    pub fn record_answer(
        &self,
        key: &SessionKey,
        record: &crate::protocol::Record,
    ) -> Result<(), String> {
        let store = self
            .shared
            .store
            .as_ref()
            .ok_or_else(|| "this slate runs without a store".to_string())?;
        let store = store
            .lock()
            .map_err(|_| "the store is unusable".to_string())?;
        store
            .record_answer(key, record)
            .map_err(|error| error.to_string())
    }

    pub fn health(&self) -> Health {
        self.shared
            .published
            .read()
            .expect("lock poisoned")
            .health
            .clone()
    }

    /// The settings in force and the config file's problem, if any.
    pub fn settings(&self) -> Settings {
        self.shared.settings_changed.borrow().clone()
    }

    /// Where each remote machine's link stands.
    pub fn remotes(&self) -> Vec<remote::Report> {
        self.shared.remotes_changed.borrow().clone()
    }

    /// The config entry of the remote `machine` and how its link runs, to forward an answer to
    /// it; `None` when this service runs no links or does not follow that machine.
    pub fn forwarding(&self, machine: &Machine) -> Option<(RemoteEntry, LinkOptions)> {
        let options = self.shared.link_options.clone()?;
        let settings = self.shared.settings_changed.borrow();
        let entry = settings
            .config
            .remotes
            .iter()
            .find(|entry| &entry.name == machine)?
            .clone();
        Some((entry, options))
    }

    /// A receiver that wakes whenever a remote's link changes (connected, lost, configured), for
    /// the tray, which names an unreachable machine even when it has no sessions.
    pub fn watch_remotes(&self) -> tokio::sync::watch::Receiver<Vec<remote::Report>> {
        self.shared.remotes_changed.subscribe()
    }

    /// A receiver that wakes whenever the settings change (an edit applied, or a broken edit
    /// kept out), for the desktop shell's pause and tooltip.
    pub fn watch_settings(&self) -> tokio::sync::watch::Receiver<Settings> {
        self.shared.settings_changed.subscribe()
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

    /// Stops the loop before the next event it would handle, whatever is queued.
    pub fn shutdown(&self) {
        self.shared
            .stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = self.shared.events.send(Event::Shutdown);
    }
}

/// The remote machine and the id in `NAME:ID`, when `NAME` is one of `remotes`.
fn remote_reference<'a>(id: &'a str, remotes: &[remote::Report]) -> Option<(Machine, &'a str)> {
    let (name, rest) = id.split_once(':')?;
    let machine = Machine::new(name).ok()?;
    remotes
        .iter()
        .any(|report| report.name == machine)
        .then_some((machine, rest))
}

fn live_list(published: &Published) -> Vec<Session> {
    let mut sessions: Vec<Session> = published.live.values().cloned().collect();
    report::sort_for_display(&mut sessions);
    sessions
}

/// The wall clock, the default `Service::clock`.
pub use crate::clock::system_clock;

/// How many changes a subscriber may fall behind before it has lagged. The channel keeps each
/// change until every subscriber has read it, so a subscriber that stops reading (an event-stream
/// client whose socket is full) holds back this many session objects at most: a few hundred,
/// a megabyte or two now that free text has a limit (`limits`). Past that it has lagged, and the
/// API sends it a fresh snapshot when it reads again.
pub const SUBSCRIBER_BACKLOG: usize = 256;

/// The most queued remote reports the loop handles in one round (`LoopState::run`).
const REMOTE_BATCH: usize = 256;

/// The pieces a live service is built from.
pub struct Service {
    /// The engine's options; their policy is the settings' (`settings::engine_options`).
    pub options: Options,
    pub timing: Timing,
    pub store: Option<Store>,
    /// The wall clock; tests pass a fake one.
    pub clock: fn() -> Timestamp,
    /// The config in force at start and the file to follow (`Settings::default()`: the
    /// defaults, and no file).
    pub settings: Settings,
    /// How to run the links to the config's `[[remote]]` machines; `None` runs none (the
    /// engine `slate watch` starts for itself, which is what a remote runs for a link).
    pub remotes: Option<LinkOptions>,
}

/// Starts the loop on its own thread and returns its handle once the first full read is
/// published, so the first snapshot a client sees is already correct.
pub fn start(service: Service) -> (Handle, std::thread::JoinHandle<()>) {
    let (events, inbox) = mpsc::channel();
    let (updates, _) = broadcast::channel(SUBSCRIBER_BACKLOG);
    let (refreshes_done, _) = tokio::sync::watch::channel(0);
    let (settings_changed, _) = tokio::sync::watch::channel(service.settings.clone());
    let (remotes_changed, _) = tokio::sync::watch::channel(Vec::new());
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
        stopping: std::sync::atomic::AtomicBool::new(false),
        refreshes_done,
        settings_changed,
        remotes_changed,
        link_options: service.remotes.clone(),
        clock: service.clock,
    });
    let handle = Handle {
        shared: shared.clone(),
    };
    let (ready_tx, ready_rx) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("slate-engine".to_string())
        .spawn(move || {
            let engine = Engine::new(service.options);
            // Terminals are read only where the processes are real: a recorded table is a replay.
            let sensing = engine.scans_live_processes().then(|| {
                let delivered = events.clone();
                Sensing::start(service.clock, move |delivery| {
                    let _ = delivered.send(Event::Terminals(delivery));
                })
            });
            let hints = events.clone();
            let watcher = watch::start(engine.watch_paths(), move |hint| {
                let _ = hints.send(Event::Hint(hint));
            });
            let mut state = LoopState {
                engine,
                schedule: Schedule::new(service.timing, Instant::now(), Duration::ZERO),
                clock: service.clock,
                shared,
                store,
                store_recovered_from,
                watcher,
                git: GitCache::default(),
                git_recheck: GitRecheck::Nothing,
                sensing,
                wakeups: 0,
                reclaim_after: settings::reclaim_after(&service.settings.config),
                settings: service.settings,
                remotes: Remotes::default(),
                links: BTreeMap::new(),
                link_options: service.remotes,
                remote_touched: Vec::new(),
                events: events.clone(),
            };
            state.run(inbox, ready_tx);
        })
        .expect("the engine thread starts");
    let _ = ready_rx.recv();
    (handle, thread)
}

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

/// Which live sessions' git facts must be read again before the next publish.
#[derive(Debug, Clone, PartialEq, Eq)]
enum GitRecheck {
    Nothing,
    /// Every live session's (after a refresh).
    All,
    /// Those working in these folders (after their checkout's `HEAD` changed).
    Folders(Vec<PathBuf>),
}

impl GitRecheck {
    fn add_folders(&mut self, folders: Vec<PathBuf>) {
        match self {
            GitRecheck::All => {}
            GitRecheck::Folders(scheduled) => scheduled.extend(folders),
            GitRecheck::Nothing => *self = GitRecheck::Folders(folders),
        }
    }

    fn covers(&self, folder: Option<&str>) -> bool {
        match (self, folder) {
            (GitRecheck::Nothing, _) => false,
            (GitRecheck::All, _) => true,
            (GitRecheck::Folders(folders), Some(folder)) => {
                folders.iter().any(|f| f.as_path() == Path::new(folder))
            }
            (GitRecheck::Folders(_), None) => false,
        }
    }
}

/// Which publish this is: the first one sets the whole snapshot and tells nobody.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Round {
    First,
    Next,
}

struct LoopState {
    engine: Engine,
    schedule: Schedule,
    clock: fn() -> Timestamp,
    shared: Arc<Shared>,
    store: Option<Arc<Mutex<Store>>>,
    store_recovered_from: Option<PathBuf>,
    watcher: Option<watch::Watcher>,
    /// Git facts of live sessions' folders, added to the sessions as they are published.
    git: GitCache,
    git_recheck: GitRecheck,
    /// The terminals of sessions Slate does not host, read off the loop; `None` for a replay.
    sensing: Option<Sensing>,
    wakeups: u64,
    settings: Settings,
    /// How long a closed, reclaimable session stays on the live list (from the settings).
    reclaim_after: Duration,
    /// The remote machines' sessions and link states.
    remotes: Remotes,
    /// One link per configured remote, while the service runs links.
    links: BTreeMap<Machine, Link>,
    link_options: Option<LinkOptions>,
    /// Remote sessions whose object changed since the last publish.
    remote_touched: Vec<SessionKey>,
    /// The loop's own inbox, for the links to report to.
    events: mpsc::Sender<Event>,
}

impl LoopState {
    fn run(&mut self, inbox: mpsc::Receiver<Event>, ready: mpsc::Sender<()>) {
        let now = (self.clock)();
        self.load_custody(now);
        let started = Instant::now();
        let mut first = self.engine.refresh(now);
        first = merge(first, self.processes_scanned(now));
        let done = Instant::now();
        self.schedule.scanned(done);
        self.schedule.walked(done, done - started);
        self.publish(first, Round::First);
        self.refresh_watches();
        let _ = ready.send(());
        // The links start once this machine's own list is out: a slow remote never delays it.
        self.follow_remotes(now);

        loop {
            let event = match self.schedule.next_wake() {
                Some(wake) => {
                    match inbox.recv_timeout(wake.saturating_duration_since(Instant::now())) {
                        Ok(event) => Some(event),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                }
                None => match inbox.recv() {
                    Ok(event) => Some(event),
                    Err(_) => return,
                },
            };
            if self
                .shared
                .stopping
                .load(std::sync::atomic::Ordering::SeqCst)
            {
                return;
            }
            self.wakeups += 1;
            let mut refreshed = matches!(event, Some(Event::Refresh));
            let from_remote = matches!(event, Some(Event::Remote { .. }));
            let mut changes = match event {
                Some(Event::Shutdown) => return,
                Some(event) => self.handle(event),
                None => Vec::new(),
            };
            // The remote reports already queued are handled in the same round, so a busy remote
            // costs one publish per batch rather than one per line. The batch ends at the first
            // other event (handled too), and a shutdown still stops it at once.
            let mut batched = 0;
            while from_remote && batched < REMOTE_BATCH {
                let Ok(next) = inbox.try_recv() else {
                    break;
                };
                if matches!(next, Event::Shutdown)
                    || self
                        .shared
                        .stopping
                        .load(std::sync::atomic::Ordering::SeqCst)
                {
                    return;
                }
                batched += 1;
                refreshed |= matches!(next, Event::Refresh);
                let more = matches!(next, Event::Remote { .. });
                changes = merge(changes, self.handle(next));
                if !more {
                    break;
                }
            }
            for task in self.schedule.due(Instant::now()) {
                changes = merge(changes, self.work(task));
            }
            let repositories = self.git.len();
            self.publish(changes, Round::Next);
            if refreshed {
                self.shared.refreshes_done.send_modify(|done| *done += 1);
            }
            if self.git.len() != repositories {
                self.refresh_watches();
            }
        }
    }

    /// Handles one event and returns the changes it made.
    fn handle(&mut self, event: Event) -> Vec<Change> {
        let now = (self.clock)();
        match event {
            Event::Hint(Hint::Changed(path)) => {
                self.schedule.changed(path, Instant::now());
                Vec::new()
            }
            Event::Hint(Hint::Rescan) => {
                // A new folder may be the config's, created with the file already in it.
                let changes = self.reload_settings(now);
                let changes = merge(changes, self.engine.scan_files(now));
                self.refresh_watches();
                changes
            }
            Event::Refresh => {
                self.git.invalidate_all();
                self.git_recheck = GitRecheck::All;
                let mut changes = self.reload_settings(now);
                changes = merge(changes, self.load_custody(now));
                changes = merge(changes, self.engine.refresh(now));
                changes = merge(changes, self.processes_scanned(now));
                self.refresh_watches();
                self.schedule.refreshed(Instant::now());
                changes
            }
            Event::Hosted { key, signals } => {
                self.engine.apply(Input::Hosted { key, signals }, now)
            }
            Event::Remote {
                machine,
                event,
                credit,
            } => {
                let touched = self.remotes.apply(&machine, event, now);
                drop(credit);
                self.remote_touched.extend(touched);
                for problem in self.remotes.take_problems() {
                    self.engine.record_problem(problem);
                }
                Vec::new()
            }
            Event::IntentsChanged => self.load_custody(now),
            Event::HostedProcess { pid, signals } => {
                let changes = self
                    .engine
                    .apply(Input::HostedProcess { pid, signals }, now);
                let seen = can_vouch(&self.engine, pid);
                self.schedule.hosted_report(pid, seen, Instant::now());
                changes
            }
            Event::Terminals(delivery) => {
                let Some(sensing) = &mut self.sensing else {
                    return Vec::new();
                };
                let (inputs, problems) = sensing.delivered(delivery, Instant::now());
                for problem in problems {
                    self.engine.record_problem(problem);
                }
                self.engine.apply_all(inputs, now)
            }
            // `run` stops before handing this over.
            Event::Shutdown => Vec::new(),
        }
    }

    /// Does one task the schedule says is due and returns the changes it made.
    fn work(&mut self, task: Task) -> Vec<Change> {
        let now = (self.clock)();
        match task {
            Task::Read(paths) => {
                let mut changes = Vec::new();
                for path in paths {
                    // The config file is read after the same delay as a transcript, so an editor
                    // that truncates it before writing is read once, whole.
                    if self.settings.file.as_deref() == Some(path.as_path()) {
                        changes = merge(changes, self.reload_settings(now));
                        continue;
                    }
                    if self.git_head_changed(&path) {
                        continue;
                    }
                    changes = merge(changes, self.engine.read_path(&path, now));
                }
                self.refresh_watches();
                changes
            }
            Task::Scan => {
                let changes = self.engine.scan_processes(now);
                merge(changes, self.processes_scanned(now))
            }
            Task::ReadPanes => {
                let Some(sensing) = &mut self.sensing else {
                    return Vec::new();
                };
                let wanted = self.engine.tracker().terminals_wanted();
                sensing.set_hosted(self.engine.tracker().hosted_controls());
                let inputs = sensing.read_due(&wanted, Instant::now());
                self.engine.apply_all(inputs, now)
            }
            Task::Rewalk => {
                let started = Instant::now();
                let changes = self.engine.scan_files(now);
                self.schedule.walked(Instant::now(), started.elapsed());
                self.refresh_watches();
                changes
            }
            Task::Tick => self.engine.tick(now),
            // The publish that follows takes off the sessions whose time is up.
            Task::Leave => Vec::new(),
        }
    }

    /// After a process scan: new agent processes' terminals are located (off the loop), and the
    /// terminals of processes gone are forgotten.
    fn processes_scanned(&mut self, now: Timestamp) -> Vec<Change> {
        let Some(sensing) = &mut self.sensing else {
            return Vec::new();
        };
        let inputs = sensing.scanned(self.engine.processes(), Instant::now());
        self.engine.apply_all(inputs, now)
    }

    /// Reads the config file again. What parses applies at once: the tracker's policy (every
    /// live session is decided again under it) and the live list's cleanup delay. A broken file
    /// keeps the last good config; either way the settings are published.
    fn reload_settings(&mut self, now: Timestamp) -> Vec<Change> {
        let reload = self.settings.reload();
        if reload == Reload::Unchanged {
            return Vec::new();
        }
        self.shared
            .settings_changed
            .send_replace(self.settings.clone());
        if reload == Reload::Kept {
            return Vec::new();
        }
        self.follow_remotes(now);
        self.reclaim_after = settings::reclaim_after(&self.settings.config);
        let policy = settings::policy(&self.settings.config, self.engine.tracker().policy());
        if policy == *self.engine.tracker().policy() {
            return Vec::new();
        }
        self.engine.apply(Input::Policy(policy), now)
    }

    /// Starts a link for each configured remote that has none, and stops the links of remotes
    /// taken out of the config or changed (a changed one starts again with its new entry). Their
    /// sessions follow at the next publish.
    fn follow_remotes(&mut self, now: Timestamp) {
        let Some(options) = &self.link_options else {
            return;
        };
        let entries = &self.settings.config.remotes;
        self.links
            .retain(|_, link| entries.iter().any(|entry| entry == link.entry()));
        for entry in entries {
            if self.links.contains_key(&entry.name) {
                continue;
            }
            let events = self.events.clone();
            let machine = entry.name.clone();
            let sink = Box::new(move |event, credit| {
                let _ = events.send(Event::Remote {
                    machine: machine.clone(),
                    event,
                    credit,
                });
            });
            let link = Link::start(entry.clone(), options.clone(), self.clock, sink);
            self.links.insert(entry.name.clone(), link);
        }
        let gone = self.remotes.configure(entries, now);
        self.remote_touched.extend(gone);
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

    /// Keeps the watcher on every root, on folders that appeared since, on the `.git` folders of
    /// live sessions' checkouts (for their `HEAD`), and on the config file.
    fn refresh_watches(&mut self) {
        if let Some(watcher) = &mut self.watcher {
            let mut specs = self.engine.watch_paths();
            specs.extend(self.git.git_dirs().into_iter().map(|path| WatchSpec {
                path,
                recursive: false,
            }));
            watcher.watch_all(specs);
            if let Some(file) = &self.settings.file {
                watcher.watch_file(file);
            }
        }
    }

    /// When `path` is the `HEAD` of a checkout a live session works in, schedules a re-read of
    /// that checkout's git facts and returns true.
    fn git_head_changed(&mut self, path: &Path) -> bool {
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
        self.git_recheck.add_folders(folders);
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

    /// Ends a round: records the transitions, applies the changes to the snapshot, and
    /// broadcasts what changed on the live list. Then the schedule learns the tracker's next
    /// deadline and when the next closed session leaves the list.
    fn publish(&mut self, mut changes: Vec<Change>, round: Round) {
        let now = (self.clock)();
        let checked = Instant::now();
        for change in &mut changes {
            add_git_facts(&mut self.git, &mut change.session, checked);
        }
        self.record(&changes, round, now);
        let (updates, leaves) = self.apply(changes, round, now, checked);
        self.broadcast(updates);
        let instant = Instant::now();
        let at = |time: Timestamp| {
            let wait = time.millis().saturating_sub(now.millis()).max(0);
            instant + Duration::from_millis(u64::try_from(wait).unwrap_or(0))
        };
        self.schedule
            .set_deadline(self.engine.next_deadline().map(at));
        self.schedule.set_leave(leaves.map(at));
        if let Some(sensing) = &mut self.sensing {
            let wanted = self.engine.tracker().terminals_wanted();
            sensing.set_hosted(self.engine.tracker().hosted_controls());
            self.schedule
                .set_panes(sensing.next_read(&wanted, Instant::now()));
            let awaiting = self.engine.tracker().awaiting_scan();
            if !awaiting.is_empty() {
                self.schedule.awaiting_scan(&awaiting, Instant::now());
            }
        }
    }

    /// Writes the status transitions in `changes` to the store (and, in the first round, the
    /// closings of sessions that ended while Slate was away).
    fn record(&self, changes: &[Change], round: Round, now: Timestamp) {
        let Some(store) = &self.store else {
            return;
        };
        let Ok(store) = store.lock() else {
            return;
        };
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
        if round == Round::First {
            transitions.extend(self.closed_while_away(&store, changes, now));
        }
        if let Err(err) = store.record_transitions(&transitions) {
            tracing::warn!("cannot record state transitions: {err}");
        }
    }

    /// Applies a round's changes to the published snapshot and returns the updates for
    /// subscribers (none in the first round) and when the next listed session leaves the live
    /// list by time.
    fn apply(
        &mut self,
        mut changes: Vec<Change>,
        round: Round,
        now: Timestamp,
        checked: Instant,
    ) -> (Vec<Update>, Option<Timestamp>) {
        let shared = Arc::clone(&self.shared);
        let mut published = shared.published.write().expect("lock poisoned");
        self.take_sessions(&mut published, &changes, round, checked);
        self.recheck_git(&mut published, &mut changes, checked);
        let touched = std::mem::take(&mut self.remote_touched);
        for key in &touched {
            match self.remotes.session(key) {
                Some(session) => published.remote.insert(key.clone(), session.clone()),
                None => published.remote.remove(key),
            };
        }
        let live = listed(&published, now, self.reclaim_after);
        let changed = changes.iter().map(|change| &change.key).chain(&touched);
        let updates = match round {
            Round::First => Vec::new(),
            Round::Next => live_updates(&published.live, &live, changed),
        };
        let leaves = next_leave(&live, now, self.reclaim_after);
        published.live = live;
        published.evidence = published
            .live
            .keys()
            .filter(|key| published.sessions.contains_key(*key))
            .map(|key| (key.clone(), self.engine.evidence(key)))
            .collect();
        published.health = Health {
            version: env!("CARGO_PKG_VERSION").to_string(),
            roots: self.engine.roots(),
            problems: self.engine.problems().counts.clone(),
            live_sessions: published.live.len(),
            needs_you: policy::needs_you_count(published.live.values()),
            store_recovered_from: self.store_recovered_from.clone(),
            wakeups: self.wakeups,
            settings: self.settings.clone(),
            remotes: self.remotes.reports(),
        };
        let reports = &published.health.remotes;
        self.shared.remotes_changed.send_if_modified(|told| {
            let news = told != reports;
            if news {
                told.clone_from(reports);
            }
            news
        });
        (updates, leaves)
    }

    /// Puts the changed sessions (in the first round, every session the tracker holds in full)
    /// into the snapshot, with the tracker's closed summaries and policy.
    fn take_sessions(
        &mut self,
        published: &mut Published,
        changes: &[Change],
        round: Round,
        checked: Instant,
    ) {
        published.policy = self.engine.tracker().policy().clone();
        for change in changes {
            published
                .sessions
                .insert(change.key.clone(), change.session.clone());
        }
        if round == Round::First {
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
    }

    /// Reads the git facts the `GitRecheck` asks for again, and adds a change for each live
    /// session whose facts moved.
    fn recheck_git(
        &mut self,
        published: &mut Published,
        changes: &mut Vec<Change>,
        checked: Instant,
    ) {
        let recheck = std::mem::replace(&mut self.git_recheck, GitRecheck::Nothing);
        if recheck == GitRecheck::Nothing {
            return;
        }
        let changed: BTreeSet<SessionKey> =
            changes.iter().map(|change| change.key.clone()).collect();
        for (key, session) in published.sessions.iter_mut() {
            if !recheck.covers(session.folder.as_deref())
                || changed.contains(key)
                || session.status == Status::Ended
            {
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

    /// Tells subscribers what changed.
    fn broadcast(&self, updates: Vec<Update>) {
        for update in updates {
            let _ = self.shared.updates.send(update);
        }
    }
}

/// The live list at `now`: the full sessions `policy::on_live_list` keeps, and, when closed
/// sessions stay a while (`reclaim_after`), the closed summaries that ended since; and every
/// remote machine's sessions, which their machine listed.
fn listed(
    published: &Published,
    now: Timestamp,
    reclaim_after: Duration,
) -> HashMap<SessionKey, Session> {
    let mut live: HashMap<SessionKey, Session> = published
        .sessions
        .iter()
        .filter(|(_, session)| policy::on_live_list(session, now, reclaim_after))
        .map(|(key, session)| (key.clone(), session.clone()))
        .collect();
    if !reclaim_after.is_zero() {
        for (key, closed) in published.closed.iter() {
            if now < closed.since().plus(reclaim_after) {
                let (session, _) = closed.session(key, &published.policy);
                if policy::on_live_list(&session, now, reclaim_after) {
                    live.insert(key.clone(), session);
                }
            }
        }
    }
    live.extend(
        published
            .remote
            .iter()
            .map(|(key, session)| (key.clone(), session.clone())),
    );
    live
}

/// The next time after `now` that a session on the live list leaves it by time alone.
fn next_leave(
    live: &HashMap<SessionKey, Session>,
    now: Timestamp,
    reclaim_after: Duration,
) -> Option<Timestamp> {
    live.values()
        .filter_map(
            |session| match policy::leaves_live_list_at(session, reclaim_after) {
                Leaves::At(at) if at > now => Some(at),
                Leaves::At(_) | Leaves::Never => None,
            },
        )
        .min()
}

/// What subscribers are told when the live list goes from `before` to `after` with the
/// sessions `changed`: every changed session still listed, every session newly listed, and every
/// session that left.
fn live_updates<'a>(
    before: &HashMap<SessionKey, Session>,
    after: &'a HashMap<SessionKey, Session>,
    changed: impl IntoIterator<Item = &'a SessionKey>,
) -> Vec<Update> {
    let removed = Update::removed;
    let mut told: HashSet<&SessionKey> = HashSet::new();
    let mut updates = Vec::new();
    for key in changed {
        if !told.insert(key) {
            continue;
        }
        match after.get(key) {
            Some(session) => updates.push(Update::Session {
                session: Box::new(session.clone()),
            }),
            None if before.contains_key(key) => updates.push(removed(key)),
            None => {}
        }
    }
    for (key, session) in after {
        if !before.contains_key(key) && !told.contains(key) {
            updates.push(Update::Session {
                session: Box::new(session.clone()),
            });
        }
    }
    for key in before.keys() {
        if !after.contains_key(key) && !told.contains(key) {
            updates.push(removed(key));
        }
    }
    updates
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
    let Some(facts) = git.facts(Path::new(folder), now) else {
        return;
    };
    if facts.branch.is_some() {
        session.branch = facts.branch.clone();
    }
    session.ahead = facts.ahead;
    session.behind = facts.behind;
    session.dirty = facts.dirty;
}
