//! The loopback HTTP API the app serves in-process, so the window, the `slate` CLI and a browser
//! all read the same live state.
//!
//! This module only picks the address and hands the listener to the engine's API; the routes, the
//! security checks and the token belong to `slate::api`. The configured address (port 7411 by
//! default) is tried first; when it is taken, for instance by a `slate serve` already running,
//! the app falls back to a free port rather than failing, and the window learns the real address
//! through the `api_endpoint` command.

use std::net::{SocketAddr, TcpListener};
use std::path::Path;

use serde::{Deserialize, Serialize};
use slate::live;

/// What the page needs to reach the API.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Endpoint {
    /// `http://127.0.0.1:<port>`, without a trailing slash.
    pub base: String,
    /// The bearer token for POSTs.
    pub token: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot listen on a loopback port: {0}")]
    Listen(#[from] std::io::Error),
    #[error("cannot read or create the API token: {0}")]
    Token(#[from] slate::token::TokenError),
}

/// Binds the API's listener and starts serving `handle` on it, with the user's token from
/// `token_file` (created on first run).
pub fn start(
    handle: live::Handle,
    listen: SocketAddr,
    token_file: &Path,
) -> Result<Endpoint, ServerError> {
    let token = slate::token::load_or_create_token(token_file)?;
    let listener = match TcpListener::bind(listen) {
        Ok(listener) => listener,
        Err(err) => {
            tracing::warn!(%listen, "{err}; listening on a free port instead");
            TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?
        }
    };
    let address = listener.local_addr()?;
    tracing::info!("listening on http://{address}");
    listener.set_nonblocking(true)?;
    let security = slate::api::Security {
        port: address.port(),
        token: token.clone(),
    };
    tauri::async_runtime::spawn(async move {
        let listener = match tokio::net::TcpListener::from_std(listener) {
            Ok(listener) => listener,
            Err(err) => {
                tracing::error!("cannot serve the API: {err}");
                return;
            }
        };
        // The server lives as long as the app; the app's exit ends the process.
        if let Err(err) =
            slate::api::serve(listener, handle, security, std::future::pending()).await
        {
            tracing::error!("the API stopped: {err}");
        }
    });
    Ok(Endpoint {
        base: format!("http://{address}"),
        token,
    })
}
