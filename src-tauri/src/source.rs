//! Where the shell's sessions come from: the engine running in this process, or this user's Slate
//! service, which the app follows instead of starting a second engine.
//!
//! One engine runs per user. At start (and when a service it followed has gone) the app looks at
//! the configured address with [`find`]: when it can bind it, nothing serves there and the app's
//! own engine takes the listener; when it is taken, the app asks who holds it, and follows it if
//! it is this user's Slate (it takes this HOME's token: the user service, a `slate serve` started
//! by hand, or the app of another login). Binding first leaves no moment in which both could
//! start: a `slate serve` that starts later finds the port taken and names the app.
//!
//! A [`Source`] gives the rest of the shell the same things either way: the live list with a
//! receiver for every change (`live::Update`s, which the tray and the notification policy read),
//! the settings in force, the remote machines' links, and one session by id. For the service they
//! come from its event stream and its `/health` through `slate::mirror::follower`.
//!
//! This module chooses and hands out; what the shell does with the updates is `lib`'s, and what
//! to do when the followed service goes away too.

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::time::Duration;

use slate::client::{Answer, Client, ClientError};
use slate::live::{self, Update};
use slate::mirror::follower::{self, Follower, Link};
use slate::model::{ServerKind, Session};
use slate::remote::Report;
use slate::settings::Settings;
use tokio::sync::{broadcast, watch};

/// How long the app waits to learn who holds its port. A Slate service that has just started
/// (at login, with the app) answers after its first read of the machine, which a long history
/// makes take some seconds.
const WHO_WAIT: Duration = Duration::from_secs(20);

/// The engine the shell follows.
#[derive(Clone)]
pub enum Source {
    /// The app's own engine, in this process.
    InProcess(live::Handle),
    /// This user's Slate service (or another Slate of this user) runs the engine.
    Service(Follower),
}

/// What holds the configured address.
pub enum Found {
    /// Nothing did: this listener holds it now, for the app's own engine.
    Free(TcpListener),
    /// This user's Slate serves there, and is followed.
    Ours(Follower),
    /// Something else holds it (another user's Slate, a program that is not a Slate), or it could
    /// not be bound or followed: the app's own engine listens on a free port.
    Elsewhere,
}

/// Looks at `address` as the app starts: binds it, or follows this user's Slate that holds it,
/// reached over this user's API `socket` first when there is one, and proven this user's before
/// the token goes out (`slate::client`).
pub fn find(address: SocketAddr, socket: Option<&Path>, token_file: &Path) -> Found {
    let taken = match TcpListener::bind(address) {
        Ok(listener) => return Found::Free(listener),
        Err(err) => err,
    };
    if taken.kind() != std::io::ErrorKind::AddrInUse {
        tracing::warn!(%address, "cannot listen: {taken}");
        return Found::Elsewhere;
    }
    let token = match slate::token::read_token(token_file) {
        Ok(token) => token,
        Err(err) => {
            tracing::warn!("cannot read the API token: {err}");
            None
        }
    };
    let client = Client::new(address, token).with_socket(socket.map(Path::to_path_buf));
    match client.answer(WHO_WAIT) {
        Answer::Ours { version, kind, pid } => {
            let who = kind.unwrap_or(ServerKind::Service).name();
            match follower::follow(client, follower::Timing::default(), live::system_clock) {
                Ok(follower) => {
                    tracing::info!(%address, ?pid, %version, "using {who}: it runs this user's engine");
                    Found::Ours(follower)
                }
                Err(err) => {
                    tracing::warn!(%address, "{who} answers but cannot be followed: {err}");
                    Found::Elsewhere
                }
            }
        }
        Answer::Foreign(why) => {
            tracing::warn!(%address, "another user's or HOME's Slate holds the port ({why})");
            Found::Elsewhere
        }
        Answer::Silent => {
            tracing::warn!(%address, "the port is taken by a program that is not a Slate");
            Found::Elsewhere
        }
        Answer::NotYours(why) => {
            tracing::warn!(%address, "the port is taken by a listener that is not yours: {why}");
            Found::Elsewhere
        }
    }
}

impl Source {
    /// The live list, Needs you first.
    pub fn live_sessions(&self) -> Vec<Session> {
        match self {
            Source::InProcess(handle) => handle.live_sessions(),
            Source::Service(follower) => follower.live_sessions(),
        }
    }

    /// The live list and a receiver for every change after it.
    pub fn subscribe(&self) -> (Vec<Session>, broadcast::Receiver<Update>) {
        match self {
            Source::InProcess(handle) => handle.subscribe(),
            Source::Service(follower) => follower.subscribe(),
        }
    }

    /// The settings in force: the config the engine runs on, and the config file's error.
    pub fn settings(&self) -> Settings {
        match self {
            Source::InProcess(handle) => handle.settings(),
            Source::Service(follower) => follower.settings(),
        }
    }

    pub fn watch_settings(&self) -> watch::Receiver<Settings> {
        match self {
            Source::InProcess(handle) => handle.watch_settings(),
            Source::Service(follower) => follower.watch_settings(),
        }
    }

    /// Where each remote machine's link stands.
    pub fn remotes(&self) -> Vec<Report> {
        match self {
            Source::InProcess(handle) => handle.remotes(),
            Source::Service(follower) => follower.remotes(),
        }
    }

    pub fn watch_remotes(&self) -> watch::Receiver<Vec<Report>> {
        match self {
            Source::InProcess(handle) => handle.watch_remotes(),
            Source::Service(follower) => follower.watch_remotes(),
        }
    }

    /// The link to the followed service; `None` for the engine in-process, which cannot be lost.
    pub fn watch_link(&self) -> Option<watch::Receiver<Link>> {
        match self {
            Source::InProcess(_) => None,
            Source::Service(follower) => Some(follower.watch_link()),
        }
    }

    /// One session by id (or unique prefix, or `NAME:ID`); `Ok(None)` when none matches.
    pub fn session(&self, id: &str) -> Result<Option<Session>, ClientError> {
        match self {
            Source::InProcess(handle) => Ok(handle.session(id).map(|detail| detail.session)),
            Source::Service(follower) => match follower.session(id) {
                Ok(session) => Ok(Some(session)),
                Err(ClientError::Status { status: 404, .. }) => Ok(None),
                Err(err) => Err(err),
            },
        }
    }

    /// What the menu and the tooltip say about the engine: nothing for the app's own; for a
    /// followed service, that the app uses it, or that it does not answer.
    pub fn note(&self) -> Option<String> {
        let Source::Service(follower) = self else {
            return None;
        };
        let kind = follower.identity().kind.unwrap_or(ServerKind::Service);
        Some(match (follower.link(), kind) {
            (Link::Up, ServerKind::Service) => "Using the Slate service".to_string(),
            (Link::Up, ServerKind::App) => match follower.identity().pid {
                Some(pid) => format!("Using the engine of the Slate app (pid {pid})"),
                None => "Using the engine of the Slate app".to_string(),
            },
            (Link::Down { .. }, ServerKind::Service) => {
                "The Slate service is not answering; waiting for it".to_string()
            }
            (Link::Down { .. }, ServerKind::App) => {
                "The Slate app's engine is not answering; waiting for it".to_string()
            }
        })
    }

    /// Stops following a service; the engine in-process is stopped by `lib` at exit.
    pub fn stop(&self) {
        if let Source::Service(follower) = self {
            follower.stop();
        }
    }
}
