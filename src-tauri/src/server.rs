//! The loopback HTTP API the app serves when its engine runs in-process, so the window, the
//! `slate` CLI and a browser all read the same live state; and the endpoint the page is handed,
//! whichever Slate serves it.
//!
//! This module only binds and hands the listener to the engine's API, with this user's API
//! socket beside it (`slate::api::local`), which the `slate` command and the app's own clients
//! reach first; the routes, the security checks and the token belong to `slate::api`. The configured address (port 7411 by default) is
//! bound first by `source::find`, which follows this user's Slate service instead when it holds
//! the port; when something else holds it, the app's engine listens on a free port rather than
//! failing, and the window learns the real address through the `api_endpoint` command.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use slate::live;
use slate::model::ServerKind;

/// What the page needs to reach the API, and which Slate serves it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Endpoint {
    /// `http://127.0.0.1:<port>`, without a trailing slash.
    pub base: String,
    /// The bearer token for POSTs.
    pub token: String,
    /// The app's own engine, or the Slate service the app follows (the page says "Using the
    /// Slate service" then).
    pub served_by: ServerKind,
    /// This user's API socket, which the app's own clients try first (never sent to the page).
    #[serde(skip)]
    pub socket: Option<PathBuf>,
}

impl Endpoint {
    /// The endpoint of the Slate at `address` (and `socket`), which the app follows.
    pub fn followed(
        address: SocketAddr,
        socket: Option<&Path>,
        token: String,
        served_by: ServerKind,
    ) -> Endpoint {
        Endpoint {
            base: format!("http://{address}"),
            token,
            served_by,
            socket: socket.map(Path::to_path_buf),
        }
    }

    /// A client of this endpoint's Slate: over its socket first, else its address, proven this
    /// user's either way before the token goes out (`slate::client`). `None` when the base is
    /// not a loopback address.
    pub fn client(&self) -> Option<slate::client::Client> {
        let address = slate::client::address_of(&self.base)?;
        Some(
            slate::client::Client::new(address, Some(self.token.clone()))
                .with_socket(self.socket.clone()),
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot listen on a loopback port: {0}")]
    Listen(#[from] std::io::Error),
    #[error("cannot read or create the API token: {0}")]
    Token(#[from] slate::token::TokenError),
}

/// A listener on `listen`, or on a free loopback port when that is taken (the demo's).
pub fn bind(listen: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(listen).or_else(|err| {
        tracing::warn!(%listen, "{err}; listening on a free port instead");
        free_port()
    })
}

/// A listener on a free loopback port.
pub fn free_port() -> std::io::Result<TcpListener> {
    TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
}

/// Starts serving `handle` on `listener`, and on this user's API socket at `socket` when one is
/// given (never for the demo, whose sessions are made up), with the user's token from
/// `token_file` (created on first run). A socket that another running Slate holds, or that
/// cannot be made private, is said and left: the port still serves.
pub fn start(
    handle: live::Handle,
    listener: TcpListener,
    socket: Option<&Path>,
    token_file: &Path,
) -> Result<Endpoint, ServerError> {
    let token = slate::token::load_or_create_token(token_file)?;
    let address = listener.local_addr()?;
    tracing::info!("listening on http://{address}");
    listener.set_nonblocking(true)?;
    let security = slate::api::Security {
        port: address.port(),
        token: token.clone(),
        kind: ServerKind::App,
    };
    let mut local = socket.and_then(|path| match slate::api::local::listen(path) {
        Ok(local) => Some(local),
        Err(err) => {
            tracing::warn!("serving the API on its port only: {err}");
            None
        }
    });
    let unix = local.as_mut().and_then(|local| local.take_listener());
    let served_socket = local.as_ref().map(|local| local.path().to_path_buf());
    tauri::async_runtime::spawn(async move {
        let listener = match tokio::net::TcpListener::from_std(listener) {
            Ok(listener) => listener,
            Err(err) => {
                tracing::error!("cannot serve the API: {err}");
                return;
            }
        };
        // The server lives as long as the app; the app's exit ends the process. The socket's
        // file goes with `local` when the server stops.
        let served = match unix {
            Some(unix) => {
                slate::api::serve_local(listener, unix, handle, security, std::future::pending())
                    .await
            }
            None => slate::api::serve(listener, handle, security, std::future::pending()).await,
        };
        if let Err(err) = served {
            tracing::error!("the API stopped: {err}");
        }
        drop(local);
    });
    Ok(Endpoint {
        base: format!("http://{address}"),
        token,
        served_by: ServerKind::App,
        socket: served_socket,
    })
}
