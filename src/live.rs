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
//!
//! This file holds the service's shared state, its events and updates, and `start`; `handle`
//! is the [`Handle`] everyone else reads through, `rounds` the loop's waiting and handling of each
//! event and task, and `publish` the publish that ends every round.

mod handle;
mod publish;
mod pushed;
mod rounds;

pub use pushed::{PushFailure, PushReport, PushStats};

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::broadcast;

use crate::engine::{Engine, Options, RootReport};
use crate::remote::link::{Credit, Link};
use crate::remote::view::{LinkEvent, Remotes};
use crate::remote::{self, LinkOptions};
use crate::settings::{self, Settings};
use crate::store::{Store, Transition};
use slate_core::model::{AgentKind, HostedSignals, Machine, Session, SessionKey, Timestamp};
use slate_core::policy::notifications;
use slate_core::schedule::Schedule;
use slate_core::tracker::{Closed, Evidence, Policy};
use slate_sources::sources::git::GitCache;
use slate_sources::watch::{self, Hint};
use slate_terminals::terminals::{self, Sensing};

pub use slate_core::schedule::Timing;

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
    /// An event of an agent's own hooks (`POST /hooks`), received at `at`.
    Hook {
        report: slate_core::agents::hooks::HookReport,
        at: Timestamp,
    },
    /// An agent's decision hook waits on a call of the session, or (`None`) no longer does
    /// (`answers::hook`).
    Decision {
        key: SessionKey,
        waiting: Option<slate_core::model::HookDecision>,
    },
    /// A process the last scan saw, that may vouch for a session, has ended (`exits`): scan now,
    /// so its session reads Closed at once rather than at the next periodic scan.
    Exited,
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
    pub answers: Vec<slate_core::protocol::Record>,
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
    pub problems: BTreeMap<slate_core::model::ProblemKind, u64>,
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
    /// Per agent, the versions its live sessions were written by beside those Slate was checked
    /// against, and whether one is newer (`agents::versions`).
    pub agents: Vec<slate_core::agents::versions::AgentVersions>,
    /// The push channel's counts, while `[push]` names a channel (`push`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub push: Option<PushReport>,
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
    /// The terminals the engine looks in, where an answer typed here looks too.
    terminals: terminals::Backends,
    clock: fn() -> Timestamp,
    /// The push channel's counts (`push`), kept here for `/health`.
    pushed: Arc<PushStats>,
}

/// A cheap, cloneable view of the live service for the API, the CLI and the desktop shell.
#[derive(Clone)]
pub struct Handle {
    shared: Arc<Shared>,
}

/// The wall clock, the default `Service::clock`.
pub use crate::clock::system_clock;

/// How many changes a subscriber may fall behind before it has lagged. The channel keeps each
/// change until every subscriber has read it, so a subscriber that stops reading (an event-stream
/// client whose socket is full) holds back this many session objects at most: a few hundred,
/// a megabyte or two now that free text has a limit (`limits`). Past that it has lagged, and the
/// API sends it a fresh snapshot when it reads again.
pub const SUBSCRIBER_BACKLOG: usize = 256;

/// The most of the remotes' lines the loop applies in one round (`LoopState::run`): a link
/// hands over the lines of each read at once (`remote::link`), so a backlog is applied in
/// slices of about this many, with one publish each.
const REMOTE_SLICE: usize = 4096;

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
    let spool = service
        .store
        .as_ref()
        .and_then(|store| store.path().parent().map(Path::to_path_buf))
        .filter(|folder| folder.is_absolute())
        .map(|folder| folder.join(crate::hooks::SPOOL_FILE));
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
        terminals: service.options.terminals,
        clock: service.clock,
        pushed: Arc::default(),
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
                Sensing::start(engine.terminals(), service.clock, move |delivery| {
                    let _ = delivered.send(Event::Terminals(delivery));
                })
            });
            // Ends are watched only where the processes are real, as terminals are read.
            let exits = engine.scans_live_processes().then(|| {
                let exited = events.clone();
                slate_sources::exits::Exits::start(move || {
                    let _ = exited.send(Event::Exited);
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
                exits: exits.flatten(),
                wakeups: 0,
                reclaim_after: settings::reclaim_after(&service.settings.config),
                settings: service.settings,
                remotes: Remotes::default(),
                links: BTreeMap::new(),
                link_options: service.remotes,
                remote_touched: Vec::new(),
                events: events.clone(),
                spool,
            };
            state.run(inbox, ready_tx);
        })
        .expect("the engine thread starts");
    let _ = ready_rx.recv();
    (handle, thread)
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

/// What the loop's thread owns: the engine, and all that its rounds read and keep current.
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
    /// The ends of the processes that may vouch, waited for off the loop; `None` for a replay.
    exits: Option<slate_sources::exits::Exits>,
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
    /// The hook events' spool, beside the store (`hooks::spool`); none without a store file.
    spool: Option<PathBuf>,
}
