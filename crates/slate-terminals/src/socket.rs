//! Unix-socket connections with a deadline, for every socket Slate speaks to a terminal over
//! (kitty's remote control, `slate run`'s control socket).
//!
//! `UnixStream::connect` has no time limit, and a listener that stopped accepting (a hung
//! kitty, a `slate run` stopped with SIGSTOP) blocks it for as long as its listen queue is full:
//! everything waiting on that read or answer waits with it. [`connect_within`] connects a
//! non-blocking socket instead: a full queue answers "try again" at once (Linux says `EAGAIN`
//! for a Unix socket, other systems `EINPROGRESS`, which is waited on with `poll`), so it is
//! tried again every few milliseconds until the deadline, and then it gives up saying so.
//! [`write_within`] and [`read_some_within`] bound the rest of an exchange by the same deadline.
//! What goes over the socket is the callers' business.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::socket::{self, AddressFamily, SockFlag, SockType, UnixAddr};

/// How long one call to a terminal may take before it is given up or killed: a whole exchange
/// over one of these sockets, or a terminal's command-line tool (`terminals`).
pub const READ_LIMIT: Duration = Duration::from_millis(500);

/// How long a connect waits between two tries while the listener's queue is full.
const RETRY_EVERY: Duration = Duration::from_millis(5);

/// Where a Unix socket listens.
#[derive(Debug, Clone, Copy)]
pub enum Place<'a> {
    /// A socket file.
    Path(&'a Path),
    /// A Linux abstract socket name (without its leading `@` or NUL).
    Abstract(&'a [u8]),
}

/// Connects to the socket at `place` by `deadline`. A listener whose queue is full is asked again
/// until then; at the deadline the error is of kind `TimedOut` and says it accepted nothing. The
/// stream comes back blocking, with no timeouts set.
pub fn connect_within(place: Place<'_>, deadline: Instant) -> io::Result<UnixStream> {
    let address = match place {
        Place::Path(path) => UnixAddr::new(path)?,
        #[cfg(any(target_os = "linux", target_os = "android"))]
        Place::Abstract(name) => UnixAddr::new_abstract(name)?,
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        Place::Abstract(_) => {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "abstract sockets exist only on Linux",
            ))
        }
    };
    let fd = socket::socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    loop {
        match socket::connect(fd.as_raw_fd(), &address) {
            Ok(()) | Err(Errno::EISCONN) => break,
            Err(Errno::EAGAIN) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(accepted_nothing());
                }
                std::thread::sleep(left.min(RETRY_EVERY));
            }
            Err(Errno::EINPROGRESS | Errno::EALREADY) => {
                wait_writable(&fd, deadline)?;
                match socket::getsockopt(&fd, socket::sockopt::SocketError)? {
                    0 => break,
                    error => return Err(io::Error::from_raw_os_error(error)),
                }
            }
            Err(Errno::EINTR) => {}
            Err(error) => return Err(error.into()),
        }
    }
    let stream = UnixStream::from(fd);
    stream.set_nonblocking(false)?;
    Ok(stream)
}

fn accepted_nothing() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        "the connection was not accepted in time (its listen queue is full)",
    )
}

/// Waits until a connect in progress on `fd` has finished, or the deadline.
fn wait_writable(fd: &impl AsFd, deadline: Instant) -> io::Result<()> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(accepted_nothing());
        }
        let wait = PollTimeout::try_from(left).unwrap_or(PollTimeout::MAX);
        let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLOUT)];
        match poll(&mut fds, wait) {
            Ok(0) | Err(Errno::EINTR) => {}
            Ok(_) => return Ok(()),
            Err(error) => return Err(error.into()),
        }
    }
}

/// Writes all of `bytes` to `stream` by `deadline`, however slowly the other end reads.
pub fn write_within(stream: &mut UnixStream, bytes: &[u8], deadline: Instant) -> io::Result<()> {
    let mut rest = bytes;
    while !rest.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the other end did not take the request in time",
            ));
        }
        stream.set_write_timeout(Some(left))?;
        match stream.write(rest) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(written) => rest = &rest[written..],
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// Reads what `stream` has into `buffer`, waiting at most until `deadline`: the number of bytes
/// read (0 at the end of the stream), or an error of kind `TimedOut` at the deadline.
pub fn read_some_within(
    stream: &mut UnixStream,
    buffer: &mut [u8],
    deadline: Instant,
) -> io::Result<usize> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "no answer in time"));
        }
        stream.set_read_timeout(Some(left))?;
        match stream.read(buffer) {
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "no answer in time"))
            }
            read => return read,
        }
    }
}
