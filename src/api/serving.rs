//! Serving the API: the accept loop over the loopback port and this user's API socket
//! (`local`), each connection with the request-head timeout (`Timeouts`) and the graceful stop
//! that ends open event streams; and the open-file limit raised before anything is accepted.
//! The routes and the guard rails are the parent's; what the socket proves is `local`'s.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::guard::Names;
use super::{build, local, Security, Timeouts};
use crate::live;

/// Serves the API on `listener` until `shutdown` completes, with the default `Timeouts`.
pub async fn serve(
    listener: tokio::net::TcpListener,
    handle: live::Handle,
    security: Security,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, handle, security, Timeouts::default(), shutdown).await
}

/// Serves the API on `listener` until `shutdown` completes. Open event streams end at shutdown,
/// so a connected page never keeps the server from stopping. Before it accepts anything it
/// raises the process's limit on open files (`raise_open_file_limit`), so many connections at
/// once cannot starve it, and every connection gets `timeouts`.
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    handle: live::Handle,
    security: Security,
    timeouts: Timeouts,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_both(listener, None, handle, security, timeouts, shutdown).await
}

/// Serves the API on the loopback `listener` and on this user's API `socket` (`local::listen`)
/// until `shutdown` completes, as `serve_with` does. A connection over the socket is served
/// only when its peer is this user (`local::accept`), and its requests carry `local::OverSocket`.
pub async fn serve_local(
    listener: tokio::net::TcpListener,
    socket: std::os::unix::net::UnixListener,
    handle: live::Handle,
    security: Security,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    socket.set_nonblocking(true)?;
    let socket = tokio::net::UnixListener::from_std(socket)?;
    let timeouts = Timeouts::default();
    serve_both(listener, Some(socket), handle, security, timeouts, shutdown).await
}

async fn serve_both(
    listener: tokio::net::TcpListener,
    socket: Option<tokio::net::UnixListener>,
    handle: live::Handle,
    security: Security,
    timeouts: Timeouts,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    raise_open_file_limit();
    let bound = listener.local_addr()?;
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let stop = Arc::new(stop);
    let names = Names::new(bound.port(), Some(bound.ip()));
    // The address the challenge's proof names (`challenge`): the one the listener is bound to.
    let app = build(handle, security, names, timeouts, stop.clone(), stopping)
        .layer(axum::Extension(super::challenge::Bound(bound)));
    let over_socket = app.clone().layer(axum::Extension(local::OverSocket));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(timeouts.request_head);
    let connections = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let from_socket = async {
            match &socket {
                Some(socket) => local::accept(socket).await,
                None => std::future::pending().await,
            }
        };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            stream = from_socket => {
                let service = hyper_util::service::TowerToHyperService::new(over_socket.clone());
                let io = hyper_util::rt::TokioIo::new(stream);
                let connection = connections.watch(http.serve_connection(io, service));
                tokio::spawn(async move {
                    if let Err(err) = connection.await {
                        tracing::debug!("a connection over the socket ended: {err}");
                    }
                });
                continue;
            }
            () = &mut shutdown => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(err) => {
                // Out of descriptors, or a connection reset before it was accepted: the listener
                // is fine, and the request-head timeout frees descriptors held by silent peers.
                tracing::debug!("cannot accept a connection: {err}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let connection =
            connections.watch(http.serve_connection(hyper_util::rt::TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(err) = connection.await {
                tracing::debug!("a connection ended: {err}");
            }
        });
    }
    drop(listener);
    drop(socket);
    let _ = stop.send(true);
    // Idle connections close at once and event streams end with `stopping`; a request still
    // being answered gets a few seconds.
    tokio::select! {
        () = connections.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(5)) => {}
    }
    Ok(())
}

/// Raises this process's soft limit on open files to its hard limit, so a burst of connections
/// (or of silent ones, until their request-head time is up) cannot run the server out of
/// descriptors while the system allows more. Returns the soft limit in force afterwards.
#[cfg(unix)]
pub fn raise_open_file_limit() -> Option<u64> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    // macOS refuses an unlimited soft limit for files; 10240 (its OPEN_MAX) is what it allows.
    for wanted in [hard, hard.min(10_240)] {
        if wanted <= soft {
            return Some(soft);
        }
        if setrlimit(Resource::RLIMIT_NOFILE, wanted, hard).is_ok() {
            return Some(wanted);
        }
    }
    Some(soft)
}

/// Elsewhere the limit is not a soft/hard pair the process may raise itself.
#[cfg(not(unix))]
pub fn raise_open_file_limit() -> Option<u64> {
    None
}
