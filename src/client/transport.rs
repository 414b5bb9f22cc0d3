//! How the client's HTTP reaches a running Slate: `ureq`'s HTTP over a connection this module
//! opens and proves (`proof`) before `ureq` writes a byte to it.
//!
//! The connector goes to the API's Unix socket when the client has one and it is there, and to
//! the loopback TCP address otherwise (or when `SLATE_API` chose TCP). A socket that is there but
//! not this user's stops the request: it never falls back to TCP. A socket file that is missing,
//! or that nothing listens on, is a Slate that is not running there, and TCP is tried, proven the
//! same way. HTTP itself (the request, the response, keep-alive) stays `ureq`'s, over the
//! transport this module hands it; `ureq` marks that interface as outside its semver promises,
//! and Cargo.lock pins the version it was written against.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, LazyBuffers, NextTimeout, Transport,
};

use super::proof::{self, NotYours};

/// Where the connector goes: the socket first when there is one, else (or when it is absent)
/// the TCP address.
#[derive(Debug, Clone)]
pub struct Route {
    pub socket: Option<PathBuf>,
    pub address: SocketAddr,
}

/// The connector that proves the listener before `ureq` writes (see the module's paragraph).
#[derive(Debug)]
pub struct Proven(pub Route);

/// The longest a connection may take when the request gives no limit.
const CONNECT_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

fn refused(why: NotYours) -> ureq::Error {
    ureq::Error::Other(Box::new(why))
}

impl Connector<()> for Proven {
    type Out = Box<dyn Transport>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        _chained: Option<()>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        let limit = details
            .timeout
            .not_zero()
            .map(|limit| *limit)
            .unwrap_or(CONNECT_LIMIT);
        let config = details.config;
        let buffers = || LazyBuffers::new(config.input_buffer_size(), config.output_buffer_size());
        if let Some(path) = &self.0.socket {
            if let Some(stream) = connect_socket(path, Instant::now() + limit)? {
                return Ok(Some(Box::new(Stream::new(stream, buffers()))));
            }
        }
        let address = self.0.address;
        let stream = TcpStream::connect_timeout(&address, limit).map_err(|err| {
            if err.kind() == io::ErrorKind::WouldBlock {
                ureq::Error::Timeout(ureq::Timeout::Connect)
            } else {
                ureq::Error::Io(err)
            }
        })?;
        proof::check_tcp(&stream).map_err(refused)?;
        let _ = stream.set_nodelay(true);
        Ok(Some(Box::new(Stream::new(stream, buffers()))))
    }
}

/// Connects to the API's socket at `path` and proves it this user's: `None` when there is no
/// socket file or nothing listens on it (no Slate there).
fn connect_socket(path: &Path, deadline: Instant) -> Result<Option<UnixStream>, ureq::Error> {
    match std::fs::symlink_metadata(path) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        _ => proof::check_socket_file(path).map_err(refused)?,
    }
    let stream = match slate_terminals::socket::connect_within(
        slate_terminals::socket::Place::Path(path),
        deadline,
    ) {
        Ok(stream) => stream,
        Err(err)
            if matches!(
                err.kind(),
                io::ErrorKind::ConnectionRefused | io::ErrorKind::NotFound
            ) =>
        {
            return Ok(None)
        }
        Err(err) if err.kind() == io::ErrorKind::TimedOut => {
            return Err(ureq::Error::Timeout(ureq::Timeout::Connect))
        }
        Err(err) => return Err(ureq::Error::Io(err)),
    };
    proof::check_peer(&stream, path).map_err(refused)?;
    Ok(Some(stream))
}

/// A connected stream whose reads and writes can be given a time limit: TCP or a Unix socket.
pub trait Socket: Read + Write + Send + Sync + 'static {
    fn read_limit(&self, limit: Option<std::time::Duration>) -> io::Result<()>;
    fn write_limit(&self, limit: Option<std::time::Duration>) -> io::Result<()>;
    fn nonblocking(&self, on: bool) -> io::Result<()>;
}

impl Socket for TcpStream {
    fn read_limit(&self, limit: Option<std::time::Duration>) -> io::Result<()> {
        self.set_read_timeout(limit)
    }
    fn write_limit(&self, limit: Option<std::time::Duration>) -> io::Result<()> {
        self.set_write_timeout(limit)
    }
    fn nonblocking(&self, on: bool) -> io::Result<()> {
        self.set_nonblocking(on)
    }
}

impl Socket for UnixStream {
    fn read_limit(&self, limit: Option<std::time::Duration>) -> io::Result<()> {
        self.set_read_timeout(limit)
    }
    fn write_limit(&self, limit: Option<std::time::Duration>) -> io::Result<()> {
        self.set_write_timeout(limit)
    }
    fn nonblocking(&self, on: bool) -> io::Result<()> {
        self.set_nonblocking(on)
    }
}

/// HTTP/1.1's transport over a proven stream (`ureq` keeps its own TCP transport to itself).
pub struct Stream<S> {
    stream: S,
    buffers: LazyBuffers,
}

impl<S: Socket> Stream<S> {
    fn new(stream: S, buffers: LazyBuffers) -> Stream<S> {
        Stream { stream, buffers }
    }
}

impl<S> std::fmt::Debug for Stream<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").finish()
    }
}

/// An I/O error as `ureq` wants it: a time-out as its `Timeout`.
fn io_error(err: io::Error, timeout: NextTimeout) -> ureq::Error {
    match err.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => ureq::Error::Timeout(timeout.reason),
        _ => ureq::Error::Io(err),
    }
}

impl<S: Socket> Transport for Stream<S> {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let timeout = timeout.for_write();
        if timeout.after.is_zero() {
            return Err(ureq::Error::Timeout(timeout.reason));
        }
        self.stream
            .write_limit(timeout.not_zero().map(|limit| *limit))?;
        let output = &self.buffers.output()[..amount];
        self.stream
            .write_all(output)
            .map_err(|err| io_error(err, timeout))
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        let timeout = timeout.for_read();
        if timeout.after.is_zero() {
            return Err(ureq::Error::Timeout(timeout.reason));
        }
        let limit = timeout.not_zero().map(|limit| *limit);
        self.stream.read_limit(limit)?;
        let started = Instant::now();
        let input = self.buffers.input_append_buf();
        let amount = loop {
            match self.stream.read(input) {
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {
                    // A signal: read again for what is left of the time.
                    if let Some(limit) = limit {
                        let left = limit.saturating_sub(started.elapsed());
                        if left.is_zero() {
                            return Err(ureq::Error::Timeout(timeout.reason));
                        }
                        self.stream.read_limit(Some(left))?;
                    }
                }
                read => break read.map_err(|err| io_error(err, timeout))?,
            }
        };
        self.buffers.input_appended(amount);
        Ok(amount > 0)
    }

    fn is_open(&mut self) -> bool {
        // Open when a read would wait: no bytes nobody asked for, and no end.
        if self.stream.nonblocking(true).is_err() {
            return false;
        }
        let mut byte = [0u8];
        let open = matches!(
            self.stream.read(&mut byte),
            Err(err) if err.kind() == io::ErrorKind::WouldBlock
        );
        open && self.stream.nonblocking(false).is_ok()
    }
}
