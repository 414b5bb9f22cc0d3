//! Following a running Slate (this user's `slate serve`) as if its engine ran here: the live list
//! and its changes, the settings in force and the remote machines' links.
//!
//! [`follow`] opens the Slate's event stream through the `client`, waits for the first snapshot
//! (so the first list a caller sees is already right) and reads `/health` once, then leaves two
//! threads behind: one reads the stream into a [`Mirror`] and broadcasts the changes as
//! `live::Update`s, the other reads `/health` every few seconds for the settings and the remotes,
//! which the stream does not carry. A [`Follower`] hands them out the way a `live::Handle` does
//! (a snapshot with a receiver for every change after it, and watch receivers), so the desktop
//! shell follows either with the same code.
//!
//! When the stream ends (the Slate stopped or restarted), the link is [`Link::Down`] from that
//! moment and the stream is opened again every `Timing::retry`; the snapshot that comes when it
//! opens is compared with the mirror (see `mirror`), so a change made meanwhile is told once.
//! What to do about a Slate that stays away is the caller's choice: this module only says since
//! when it is down.
//!
//! It owns the threads and the connection; what the events mean is `mirror`'s, and HTTP is the
//! `client`'s.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::sync::{broadcast, watch};

use super::{read_event, Mirror, Told};
use crate::client::{Client, ClientError, EventStream};
use crate::config::Config;
use crate::live::{Update, SUBSCRIBER_BACKLOG};
use crate::remote::Report;
use crate::settings::Settings;
use slate_core::model::{ServerKind, Session, Timestamp};

/// How often the follower acts on its own.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// The pause before opening the stream again after it ended or could not be opened.
    pub retry: Duration,
    /// How often `/health` is read for the settings and the remotes.
    pub health_every: Duration,
}

impl Default for Timing {
    /// A second between attempts (a restarted service is followed again as soon as it answers),
    /// and `/health` every five seconds (a config edit or a remote's link shows within that).
    fn default() -> Timing {
        Timing {
            retry: Duration::from_secs(1),
            health_every: Duration::from_secs(5),
        }
    }
}

/// Whether the followed Slate's event stream is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    Up,
    /// The stream ended at `since`, for the reason in `error`, and has not opened again since.
    Down {
        since: Timestamp,
        error: String,
    },
}

/// What the Slate that is followed said about itself in its first `/health`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The app or the service; `None` for an older Slate, which does not say.
    pub kind: Option<ServerKind>,
    pub pid: Option<u32>,
    pub version: String,
}

/// A cheap, cloneable view of a followed Slate, as `live::Handle` is of the engine in-process.
#[derive(Clone)]
pub struct Follower {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Follower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follower")
            .field("client", &self.shared.client)
            .field("identity", &self.shared.identity)
            .finish()
    }
}

struct Shared {
    client: Client,
    identity: Identity,
    timing: Timing,
    clock: fn() -> Timestamp,
    mirror: RwLock<Mirror>,
    updates: broadcast::Sender<Update>,
    settings: watch::Sender<Settings>,
    remotes: watch::Sender<Vec<Report>>,
    link: watch::Sender<Link>,
    stopped: AtomicBool,
}

/// Starts following the Slate `client` talks to, and returns once its first snapshot and its
/// `/health` have been read. Fails when either cannot be read: then there is nothing to follow.
pub fn follow(
    client: Client,
    timing: Timing,
    clock: fn() -> Timestamp,
) -> Result<Follower, ClientError> {
    let health: serde_json::Value = client.get_json("/health")?;
    let mut events = client.events()?;
    let first = loop {
        match events.next_event()? {
            Some(event) => {
                if let Some(Told::Snapshot(sessions)) = read_event(&event) {
                    break sessions;
                }
            }
            None => {
                return Err(ClientError::Io(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the event stream ended before its first snapshot",
                )))
            }
        }
    };
    let identity = Identity {
        kind: serde_json::from_value(health["kind"].clone()).ok(),
        pid: health["pid"]
            .as_u64()
            .and_then(|pid| u32::try_from(pid).ok()),
        version: health["version"].as_str().unwrap_or("unknown").to_string(),
    };
    let (updates, _) = broadcast::channel(SUBSCRIBER_BACKLOG);
    let shared = Arc::new(Shared {
        identity,
        timing,
        clock,
        mirror: RwLock::new(Mirror::seeded(first)),
        updates,
        settings: watch::channel(settings_of(&health)).0,
        remotes: watch::channel(remotes_of(&health)).0,
        link: watch::channel(Link::Up).0,
        stopped: AtomicBool::new(false),
        client,
    });
    let reader = shared.clone();
    std::thread::Builder::new()
        .name("slate-follow".to_string())
        .spawn(move || read_stream(&reader, events))
        .map_err(ClientError::Io)?;
    let poller = shared.clone();
    std::thread::Builder::new()
        .name("slate-follow-health".to_string())
        .spawn(move || poll_health(&poller))
        .map_err(ClientError::Io)?;
    Ok(Follower { shared })
}

impl Follower {
    /// The live list as last told, Needs you first.
    pub fn live_sessions(&self) -> Vec<Session> {
        self.shared.mirror.read().expect("lock poisoned").sessions()
    }

    /// The live list and a receiver for every change after it, taken together so no change
    /// falls between the two.
    pub fn subscribe(&self) -> (Vec<Session>, broadcast::Receiver<Update>) {
        let mirror = self.shared.mirror.read().expect("lock poisoned");
        let receiver = self.shared.updates.subscribe();
        (mirror.sessions(), receiver)
    }

    /// One session by id (or unique prefix, or `NAME:ID`), live or closed, as the followed
    /// Slate decided it (`GET /sessions/{id}`).
    pub fn session(&self, id: &str) -> Result<Session, ClientError> {
        let detail: serde_json::Value = self.shared.client.get_json(&format!("/sessions/{id}"))?;
        Session::from_wire(detail["session"].clone()).map_err(|err| ClientError::Unreadable {
            address: self.shared.client.address(),
            path: format!("/sessions/{id}"),
            detail: err.to_string(),
        })
    }

    /// The settings in force there, as its `/health` last said.
    pub fn settings(&self) -> Settings {
        self.shared.settings.borrow().clone()
    }

    pub fn watch_settings(&self) -> watch::Receiver<Settings> {
        self.shared.settings.subscribe()
    }

    /// Its remote machines' links, as its `/health` last said.
    pub fn remotes(&self) -> Vec<Report> {
        self.shared.remotes.borrow().clone()
    }

    pub fn watch_remotes(&self) -> watch::Receiver<Vec<Report>> {
        self.shared.remotes.subscribe()
    }

    pub fn link(&self) -> Link {
        self.shared.link.borrow().clone()
    }

    /// A receiver that wakes when the stream drops or opens again.
    pub fn watch_link(&self) -> watch::Receiver<Link> {
        self.shared.link.subscribe()
    }

    pub fn identity(&self) -> &Identity {
        &self.shared.identity
    }

    pub fn client(&self) -> &Client {
        &self.shared.client
    }

    /// Stops following: the threads end at their next wake (the stream's next event or
    /// keep-alive, the next retry or health read), and no update is broadcast after this returns.
    pub fn stop(&self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
    }
}

impl Shared {
    fn stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// Applies what the stream told and broadcasts the changes, under the mirror's lock so a
    /// subscriber's snapshot and its updates never overlap or leave a gap.
    fn publish(&self, told: Told) {
        let snapshot = matches!(told, Told::Snapshot(_));
        {
            let mut mirror = self.mirror.write().expect("lock poisoned");
            if self.stopped() {
                return;
            }
            for update in mirror.apply(told) {
                let _ = self.updates.send(update);
            }
        }
        // A snapshot opens every stream: the link is up from then on.
        if snapshot {
            self.link.send_if_modified(|link| {
                let changed = *link != Link::Up;
                *link = Link::Up;
                changed
            });
        }
    }

    /// The stream ended or could not be opened, with `error`: down since the first failure.
    fn lost(&self, error: String) {
        let now = (self.clock)();
        self.link.send_if_modified(|link| match link {
            Link::Up => {
                tracing::warn!(address = %self.client.address(), "lost the Slate it follows: {error}");
                *link = Link::Down { since: now, error };
                true
            }
            Link::Down { error: said, .. } if *said != error => {
                *said = error;
                true
            }
            Link::Down { .. } => false,
        });
    }
}

/// The reading thread: the stream's events into the mirror, and the stream opened again whenever
/// it ends.
fn read_stream(shared: &Shared, mut events: EventStream) {
    loop {
        let end = loop {
            match events.next_event() {
                Ok(Some(event)) => {
                    if shared.stopped() {
                        return;
                    }
                    if let Some(told) = read_event(&event) {
                        shared.publish(told);
                    }
                }
                Ok(None) => break "the event stream ended".to_string(),
                Err(err) => break err.to_string(),
            }
        };
        if shared.stopped() {
            return;
        }
        shared.lost(end);
        events = loop {
            std::thread::sleep(shared.timing.retry);
            if shared.stopped() {
                return;
            }
            match shared.client.events() {
                Ok(events) => break events,
                Err(err) => shared.lost(err.to_string()),
            }
        };
        tracing::info!(address = %shared.client.address(), "following the Slate again");
    }
}

/// The health thread: the settings and the remotes, which the stream does not carry.
fn poll_health(shared: &Shared) {
    loop {
        std::thread::sleep(shared.timing.health_every);
        if shared.stopped() {
            return;
        }
        let Ok(health) = shared.client.get_json::<serde_json::Value>("/health") else {
            // The stream's thread says when the Slate is gone.
            continue;
        };
        let settings = settings_of(&health);
        shared.settings.send_if_modified(|held| {
            let changed = *held != settings;
            *held = settings;
            changed
        });
        let remotes = remotes_of(&health);
        shared.remotes.send_if_modified(|held| {
            let changed = *held != remotes;
            *held = remotes;
            changed
        });
    }
}

/// The settings a `/health` reports: the config in force, its file, and the file's error. A
/// config this build cannot read (a newer Slate's) gives the defaults, and the reason as the
/// error, so it shows where a config error would.
fn settings_of(health: &serde_json::Value) -> Settings {
    let said = &health["settings"];
    let file = serde_json::from_value(said["file"].clone()).unwrap_or_default();
    let (config, unread) = match serde_json::from_value::<Config>(said["config"].clone()) {
        Ok(config) => (config, None),
        Err(err) => (
            Config::default(),
            Some(format!(
                "the config the Slate service runs on cannot be read here: {err}"
            )),
        ),
    };
    let mut settings = Settings::new(file, config);
    settings.error = said["error"].as_str().map(str::to_string).or(unread);
    settings.restart_needed =
        serde_json::from_value(said["restart_needed"].clone()).unwrap_or_default();
    settings
}

/// The remote machines' links a `/health` reports; an entry that does not read is left out.
fn remotes_of(health: &serde_json::Value) -> Vec<Report> {
    health["remotes"]
        .as_array()
        .map(|remotes| {
            remotes
                .iter()
                .filter_map(|remote| serde_json::from_value(remote.clone()).ok())
                .collect()
        })
        .unwrap_or_default()
}
