//! The loopback HTTP API the app serves in-process, so the window, the `slate` CLI and a browser
//! all read the same live state.
//!
//! This module only picks the address and hands the listener to the engine's API; the routes, the
//! security checks and the token belong to `slate::api`. The configured address (port 7411 by
//! default) is tried first; when it is taken, for instance by a `slate serve` already running,
//! the app falls back to a free port rather than failing, and the window learns the real address
//! through the `api_endpoint` command.

use std::net::{SocketAddr, TcpListener};

use serde::Serialize;
use slate::live;

/// What the page needs to reach the API.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Endpoint {
    /// `http://127.0.0.1:<port>`, without a trailing slash.
    pub base: String,
    /// The bearer token for POSTs.
    pub token: String,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot listen on a loopback port: {0}")]
pub struct ServerError(#[from] std::io::Error);

/// Binds the API's listener and starts serving `handle` on it.
pub fn start(handle: live::Handle, listen: SocketAddr) -> Result<Endpoint, ServerError> {
    let listener = match TcpListener::bind(listen) {
        Ok(listener) => listener,
        Err(err) => {
            tracing::warn!(%listen, "{err}; listening on a free port instead");
            TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?
        }
    };
    let address = listener.local_addr()?;
    tracing::info!("listening on http://{address}");
    serve(listener, handle);
    Ok(Endpoint {
        base: format!("http://{address}"),
        // TODO(merge): the token comes from `slate::api::Security` (`<config_dir>/slate/token`).
        token: String::new(),
    })
}

// TODO(merge): hand the listener to `slate::api::serve(listener, handle, security, shutdown)` on
// `tauri::async_runtime` once `src/api.rs` is merged. Until then the listener is closed again, so a
// request is refused at once instead of hanging.
fn serve(listener: TcpListener, handle: live::Handle) {
    drop((listener, handle));
}
