//! The hosted terminal's control socket: how another Slate process reads the screen `slate run`
//! keeps of its program and types into the program's pseudo-terminal.
//!
//! `slate run` listens on a Unix socket named by its child's pid (`<pid>.sock`) in a private
//! runtime folder: `$XDG_RUNTIME_DIR/slate`, else `run` under Slate's data folder
//! (`places::Places::runtime_dir`). The folder is the person's own and 0700, the socket 0600, and
//! a connection whose peer is another user is closed unanswered, so only the person who runs
//! `slate run` (and root) can read the screen or type. The socket is removed when `slate run`
//! ends; one left by a run that was killed is replaced, never one that still answers.
//!
//! The protocol is one JSON request a line and one JSON answer a line:
//! `{"read": true}` (optionally `"colours": true`) answers `{"title": "…", "screen": "…"}`, the
//! last title and the visible screen (with its backgrounds as colour escapes when asked);
//! `{"write": "…"}` writes those bytes (the string's UTF-8) to the program's terminal and answers
//! `{"written": N}`; anything else answers `{"error": "…"}`. A hostile local client cannot hang
//! or bloat `slate run`: a line is at most [`MAX_LINE`] bytes, a write at most `wire::MAX_WRITE`, at
//! most [`MAX_CONNECTIONS`] connections are served at once (each on a thread of its own, off the
//! relay), and a connection is closed after [`IDLE`] without a request, after [`MAX_REQUESTS`],
//! or [`LIFETIME`] after it opened. The client side and the wire's types are
//! `terminals::hosted` and `terminals::hosted::wire` (crates/slate-terminals). This module keeps no
//! screen itself (`screen` does) and decides nothing about what it shows.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use slate_terminals::socket::{connect_within, Place};
use slate_terminals::terminals::hosted::wire::{parse_request, Answer, Request};

/// The longest request line read, newline included; a longer one is refused and the connection
/// closed.
pub const MAX_LINE: usize = 16 * 1024;

/// How many connections are served at once; one more is told so and closed.
pub const MAX_CONNECTIONS: usize = 4;

/// How long a connection may wait between requests (or take to send one).
pub const IDLE: Duration = Duration::from_secs(2);

/// How many requests one connection may make.
pub const MAX_REQUESTS: usize = 64;

/// How long a connection may stay open, whatever it does.
pub const LIFETIME: Duration = Duration::from_secs(30);

/// What the socket reads and types into: the hosted terminal.
pub trait Terminal: Send + Sync + 'static {
    /// The last title the program set and its visible screen.
    fn read(&self, colours: bool) -> (Option<String>, String);
    /// Types `bytes` into the program's terminal.
    fn write(&self, bytes: &[u8]) -> std::io::Result<()>;
}

/// The socket of the program with pid `pid` in `folder`.
pub fn socket_path(folder: &Path, pid: u32) -> PathBuf {
    folder.join(format!("{pid}.sock"))
}

/// A listening control socket; dropping it stops listening and removes the socket file.
#[derive(Debug)]
pub struct Control {
    path: PathBuf,
    stop: Arc<AtomicBool>,
}

impl Control {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Control {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // The accept loop waits in accept(): a connection wakes it to see the flag. A loop that
        // accepts nothing any more is not waited for.
        let _ = connect_within(
            Place::Path(&self.path),
            Instant::now() + Duration::from_millis(100),
        );
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Listens on `<folder>/<pid>.sock` for `terminal`, on a thread of its own. A socket file left by
/// a run that was killed (nothing answers on it) is replaced; one that answers is left alone, and
/// this run goes without a control socket.
pub fn serve(folder: &Path, pid: u32, terminal: Arc<dyn Terminal>) -> Result<Control, String> {
    crate::places::private_folder(folder)?;
    let path = socket_path(folder, pid);
    let shown = path.display().to_string();
    if let Ok(meta) = std::fs::symlink_metadata(&path) {
        if meta.file_type().is_socket() {
            // A socket that accepts is in use, and so is one whose queue is full (its program is
            // alive, only stopped or busy): only a refused connection marks a stale file.
            let deadline = Instant::now() + slate_terminals::socket::READ_LIMIT;
            match connect_within(Place::Path(&path), deadline) {
                Ok(_) => return Err(format!("{shown} is in use by a running program")),
                Err(error) if error.kind() == std::io::ErrorKind::TimedOut => {
                    return Err(format!(
                        "{shown} is in use by a program that accepts no connection"
                    ))
                }
                Err(_) => {}
            }
        }
        std::fs::remove_file(&path)
            .map_err(|error| format!("cannot replace the stale {shown}: {error}"))?;
    }
    let listener =
        UnixListener::bind(&path).map_err(|error| format!("cannot listen on {shown}: {error}"))?;
    // The folder is private, so nobody else could reach the socket before it is narrowed too.
    if let Err(error) = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)) {
        let _ = std::fs::remove_file(&path);
        return Err(format!("cannot make {shown} private: {error}"));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = Arc::clone(&stop);
    let spawned = std::thread::Builder::new()
        .name("slate-control".to_string())
        .spawn(move || accept(listener, terminal, stopping));
    if let Err(error) = spawned {
        let _ = std::fs::remove_file(&path);
        return Err(format!("cannot start the control socket's thread: {error}"));
    }
    Ok(Control { path, stop })
}

fn accept(listener: UnixListener, terminal: Arc<dyn Terminal>, stop: Arc<AtomicBool>) {
    let open = Arc::new(AtomicUsize::new(0));
    let me = nix::unistd::geteuid().as_raw();
    for stream in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(mut stream) = stream else {
            continue;
        };
        // Another user's connection gets nothing, not even an error.
        if peer_uid(&stream) != Some(me) {
            tracing::debug!("a connection from another user to the control socket was closed");
            continue;
        }
        if open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            open.fetch_sub(1, Ordering::SeqCst);
            let _ = stream.set_write_timeout(Some(IDLE));
            let busy = Answer::Error {
                error: "too many connections".to_string(),
            };
            let _ = stream.write_all(&busy.line());
            continue;
        }
        let terminal = Arc::clone(&terminal);
        let open = Arc::clone(&open);
        let counted = Arc::clone(&open);
        let spawned = std::thread::Builder::new()
            .name("slate-control-client".to_string())
            .spawn(move || {
                converse(stream, terminal.as_ref());
                open.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            counted.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// The user id of the process at the other end of `stream`.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn peer_uid(stream: &UnixStream) -> Option<u32> {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    getsockopt(stream, PeerCredentials)
        .ok()
        .map(|credentials| credentials.uid())
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn peer_uid(stream: &UnixStream) -> Option<u32> {
    nix::unistd::getpeereid(stream)
        .ok()
        .map(|(uid, _)| uid.as_raw())
}

/// Serves one connection's requests, within the limits.
fn converse(stream: UnixStream, terminal: &dyn Terminal) {
    let opened = Instant::now();
    let Ok(writer) = stream.try_clone() else {
        return;
    };
    let mut writer = writer;
    let _ = writer.set_write_timeout(Some(IDLE));
    let mut reader = BufReader::new(stream);
    for _ in 0..MAX_REQUESTS {
        let left = LIFETIME.saturating_sub(opened.elapsed());
        if left.is_zero() {
            return;
        }
        if reader
            .get_ref()
            .set_read_timeout(Some(IDLE.min(left)))
            .is_err()
        {
            return;
        }
        let mut line = Vec::new();
        let read = (&mut reader)
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut line);
        match read {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.last() != Some(&b'\n') {
            // Either the line is too long or the peer closed mid-line; either way it ends here.
            if line.len() >= MAX_LINE {
                let refused = Answer::Error {
                    error: format!("a request is at most {MAX_LINE} bytes"),
                };
                let _ = writer.write_all(&refused.line());
            }
            return;
        }
        line.pop();
        let answer = match parse_request(&line) {
            Ok(Request::Read { colours }) => {
                let (title, screen) = terminal.read(colours);
                Answer::Screen {
                    title: title.unwrap_or_default(),
                    screen,
                }
            }
            Ok(Request::Write(text)) => match terminal.write(text.as_bytes()) {
                Ok(()) => Answer::Written {
                    written: text.len(),
                },
                Err(error) => Answer::Error {
                    error: format!("cannot write to the terminal: {error}"),
                },
            },
            Err(error) => Answer::Error { error },
        };
        if writer.write_all(&answer.line()).is_err() {
            return;
        }
    }
}
