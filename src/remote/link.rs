//! The I/O of remotes: one long-lived `ssh DEST slate watch --json` per remote, kept up with
//! backoff, and the one-shot questions (`ssh DEST slate sessions --json`) of a command that
//! finds no running Slate.
//!
//! A [`Link`] owns one thread that runs `ssh` (with [`crate::remote::ssh_args`]: batch mode,
//! keep-alives, the person's own `ssh_args`, the fixed command), reads its output line by line
//! (`LineBuffer`, so a line split across reads waits for its end and a line past
//! [`MAX_LINE`] is skipped, not held), reads each line (`remote::wire`) and hands what it read to
//! the live service as [`LinkEvent`]s. The first line must be a snapshot; a remote that prints
//! something else has a Slate too old to stream. When `ssh` ends, the thread says why
//! ([`crate::remote::classify`]), waits what `remote::backoff` says (or the slow retry, when the
//! remote has no usable `slate`), and starts it again. A second thread drains `ssh`'s error
//! output, keeping its end for the explanation, so a chatty remote never stalls on a full pipe.
//! Dropping a `Link` kills its `ssh` and waits for its thread.
//!
//! A remote can send lines faster than the live service handles them. The lines of one read go
//! as one event (`LinkEvent::Lines`), with what a later line of the same read supersedes left out
//! (`view::coalesce`), so a backlog costs the service one event per read, not one per line. Each
//! event travels with a [`Credit`], and a link has at most [`EVENTS_IN_FLIGHT`] out at once: past
//! that its thread stops reading (so `ssh`, and the remote behind it, wait on a full pipe) until
//! the service has handled some, or the link is stopped. So a flood from a remote holds a bounded
//! amount of memory here, and never stands between the service and a config change or a
//! shutdown. The one-shot questions read at most [`REPLY_MAX`] of answer and [`ERRORS_MAX`] of
//! error output (`child::finish_bounded`): past either, `ssh` is killed and the question fails
//! saying so. What the events mean is `remote::view`'s business; this module decides nothing.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::config::RemoteEntry;
use crate::remote::backoff::Backoff;
use crate::remote::view::LinkEvent;
use crate::remote::wire::{self, Line};
use crate::remote::{classify, ssh_args, Failure, FailureKind, LinkOptions, RemoteCommand};
use slate_core::lines::{LineBuffer, LineEvent};
use slate_core::model::{Session, Timestamp};
use slate_sources::child::{self, Bounds, ChildError};

/// The longest line read from a remote: a snapshot of thousands of sessions is far below it.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// How much of `ssh`'s error output is kept to explain a failure.
const STDERR_KEPT: usize = 8 * 1024;

/// The longest answer a one-shot question reads (`slate sessions --json`, a forwarded answer's
/// outcome): the most sessions listed for a remote are far below it.
pub const REPLY_MAX: usize = MAX_LINE;

/// The most error output a one-shot question reads: `ssh`'s and the remote's messages are a few
/// lines.
pub const ERRORS_MAX: usize = 1024 * 1024;

/// How many of one link's events may wait for the live service at once.
pub const EVENTS_IN_FLIGHT: usize = 64;

/// What a link hands its events to, each with the credit the receiver drops once it has handled
/// the event.
pub type Sink = Box<dyn Fn(LinkEvent, Credit) + Send>;

/// One event's place among a link's [`EVENTS_IN_FLIGHT`]: dropping it, once the event is
/// handled, lets the link read on.
pub struct Credit(Arc<Shared>);

impl Drop for Credit {
    fn drop(&mut self) {
        let mut state = self.0.state.lock().expect("lock poisoned");
        state.in_flight = state.in_flight.saturating_sub(1);
        self.0.wake.notify_all();
    }
}

impl std::fmt::Debug for Credit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credit")
    }
}

/// The answers of one question to several remotes, in their order: each one's sessions, or why
/// it gave none.
pub type Answers = Vec<Result<Vec<Session>, Failure>>;

/// One remote's link: a thread that keeps `ssh … slate watch --json` running.
pub struct Link {
    entry: RemoteEntry,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    /// Whether the link is to stop, and its events out; the condition variable wakes a thread
    /// waiting to retry or for a credit.
    state: Mutex<State>,
    wake: Condvar,
    /// The `ssh` running now, to kill when the link stops.
    child: Mutex<Option<Child>>,
}

#[derive(Default)]
struct State {
    stopped: bool,
    /// Events handed to the sink whose credits are not dropped yet.
    in_flight: usize,
}

impl Shared {
    fn stopped(&self) -> bool {
        self.state.lock().expect("lock poisoned").stopped
    }

    fn stop(&self) {
        self.state.lock().expect("lock poisoned").stopped = true;
        self.wake.notify_all();
        if let Some(child) = self.child.lock().expect("lock poisoned").as_mut() {
            let _ = child.kill();
        }
    }

    /// Waits `wait`, or less when the link is stopped; true when it was.
    fn sleep(&self, wait: Duration) -> bool {
        let state = self.state.lock().expect("lock poisoned");
        let (state, _) = self
            .wake
            .wait_timeout_while(state, wait, |state| !state.stopped)
            .expect("lock poisoned");
        state.stopped
    }

    /// Hands `event` to `sink` once fewer than [`EVENTS_IN_FLIGHT`] are out, waiting for that
    /// as long as it takes; drops it when the link is stopped meanwhile.
    fn send(self: &Arc<Shared>, sink: &Sink, event: LinkEvent) {
        {
            let state = self.state.lock().expect("lock poisoned");
            let mut state = self
                .wake
                .wait_while(state, |state| {
                    !state.stopped && state.in_flight >= EVENTS_IN_FLIGHT
                })
                .expect("lock poisoned");
            if state.stopped {
                return;
            }
            state.in_flight += 1;
        }
        sink(event, Credit(self.clone()));
    }
}

impl Link {
    /// Starts following `entry`: `sink` gets every event, from the link's own thread, and
    /// `clock` dates the next attempts.
    pub fn start(
        entry: RemoteEntry,
        options: LinkOptions,
        clock: fn() -> Timestamp,
        sink: Sink,
    ) -> Link {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            child: Mutex::new(None),
        });
        let thread = {
            let shared = shared.clone();
            let entry = entry.clone();
            std::thread::Builder::new()
                .name(format!("slate-remote-{}", entry.name))
                .spawn(move || follow(&entry, &options, clock, &sink, &shared))
                .expect("a remote link's thread starts")
        };
        Link {
            entry,
            shared,
            thread: Some(thread),
        }
    }

    /// The config entry this link follows.
    pub fn entry(&self) -> &RemoteEntry {
        &self.entry
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.shared.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The link's thread: attempt, explain, wait, and again, until stopped.
fn follow(
    entry: &RemoteEntry,
    options: &LinkOptions,
    clock: fn() -> Timestamp,
    sink: &Sink,
    shared: &Arc<Shared>,
) {
    let timing = &options.timing;
    let mut backoff = Backoff::new(timing.first_retry, timing.most_retry);
    while !shared.stopped() {
        shared.send(sink, LinkEvent::Attempt);
        let (failure, up_for) = attempt(entry, options, sink, shared);
        if shared.stopped() {
            return;
        }
        let wait = match failure.kind {
            FailureKind::NoSlate | FailureKind::OldSlate => timing.slow_retry,
            FailureKind::Link => backoff.ended(up_for, fastrand::f64()),
        };
        tracing::info!(remote = %entry.name, "{}; trying again in {:?}", failure.message, wait);
        shared.send(
            sink,
            LinkEvent::Lost {
                failure,
                retry_at: clock().plus(wait),
            },
        );
        if shared.sleep(wait) {
            return;
        }
    }
}

/// One run of `ssh`: until it ends, every line it prints goes to `sink`. Returns why it ended
/// and how long it was up after its snapshot.
fn attempt(
    entry: &RemoteEntry,
    options: &LinkOptions,
    sink: &Sink,
    shared: &Arc<Shared>,
) -> (Failure, Option<Duration>) {
    let args = match ssh_args(entry, &options.timing, &RemoteCommand::Watch) {
        Ok(args) => args,
        Err(err) => return (Failure::link(err.to_string()), None),
    };
    let mut child = match Command::new(&options.ssh)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(err) => {
            let program = options.ssh.to_string_lossy();
            return (Failure::link(format!("cannot run {program}: {err}")), None);
        }
    };
    let stdout = child.stdout.take();
    let errors = child.stderr.take().map(drain);
    *shared.child.lock().expect("lock poisoned") = Some(child);
    if shared.stopped() {
        shared.stop();
    }
    let mut up_since = None;
    let mut protocol = None;
    let send = |event| shared.send(sink, event);
    if let Some(mut stdout) = stdout {
        let mut buffer = LineBuffer::new(0, MAX_LINE);
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            let read = match stdout.read(&mut chunk) {
                Ok(0) => break,
                Ok(read) => read,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            // The lines of one read go as one event, what a later one supersedes left out.
            let mut read_now = Vec::new();
            buffer.push(&chunk[..read], |event| {
                if protocol.is_some() {
                    return;
                }
                protocol = line(entry, event, &mut up_since, &mut |event| {
                    read_now.push(event)
                });
            });
            for event in batched(read_now) {
                send(event);
            }
            if shared.stopped() {
                break;
            }
            if protocol.is_some() {
                // Nothing more from this remote makes sense: stop listening to it.
                if let Some(child) = shared.child.lock().expect("lock poisoned").as_mut() {
                    let _ = child.kill();
                }
                break;
            }
        }
    }
    let child = shared.child.lock().expect("lock poisoned").take();
    let code = child
        .and_then(|mut child| child.wait().ok())
        .and_then(|status| status.code());
    let stderr = errors
        .and_then(|errors| errors.recv_timeout(Duration::from_millis(200)).ok())
        .unwrap_or_default();
    let up_for = up_since.map(|since: Instant| since.elapsed());
    let failure =
        protocol.unwrap_or_else(|| classify(&entry.name, code, &stderr, up_for.is_some()));
    (failure, up_for)
}

/// Handles one line: hands it to `sink`, and returns a failure when the remote broke the
/// protocol (its first line is not a snapshot, or the snapshot is too long to read).
fn line(
    entry: &RemoteEntry,
    event: LineEvent<'_>,
    up_since: &mut Option<Instant>,
    sink: &mut impl FnMut(LinkEvent),
) -> Option<Failure> {
    let first = up_since.is_none();
    match event {
        LineEvent::Oversized { len } if first => Some(Failure::link(format!(
            "the snapshot from {} is {len} bytes long, more than the {MAX_LINE} read",
            entry.name
        ))),
        LineEvent::Oversized { len } => {
            sink(LinkEvent::Garbled(format!(
                "a line of {len} bytes from {} was skipped: longer than {MAX_LINE}",
                entry.name
            )));
            None
        }
        LineEvent::Line(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => None,
        LineEvent::Line(bytes) => match wire::parse_line(bytes) {
            Ok(line @ Line::Snapshot { .. }) => {
                if first {
                    *up_since = Some(Instant::now());
                }
                sink(LinkEvent::Line(line));
                None
            }
            Ok(_) | Err(_) if first => Some(Failure::old_slate(&entry.name)),
            Ok(line) => {
                sink(LinkEvent::Line(line));
                None
            }
            Err(err) => {
                sink(LinkEvent::Garbled(format!("{}: {err}", entry.name)));
                None
            }
        },
    }
}

/// The events of one read, with each run of lines between them made one `LinkEvent::Lines`
/// (`view::coalesce`), in order.
fn batched(events: Vec<LinkEvent>) -> Vec<LinkEvent> {
    let mut out = Vec::new();
    let mut lines = Vec::new();
    let flush = |lines: &mut Vec<Line>, out: &mut Vec<LinkEvent>| {
        let mut lines = crate::remote::view::coalesce(std::mem::take(lines));
        match lines.len() {
            0 => {}
            1 => out.push(LinkEvent::Line(lines.remove(0))),
            _ => out.push(LinkEvent::Lines(lines)),
        }
    };
    for event in events {
        match event {
            LinkEvent::Line(line) => lines.push(line),
            other => {
                flush(&mut lines, &mut out);
                out.push(other);
            }
        }
    }
    flush(&mut lines, &mut out);
    out
}

/// Reads a pipe to its end on a thread of its own, keeping the last `STDERR_KEPT` bytes, and
/// sends them when the pipe closes.
fn drain(mut pipe: impl Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut kept: Vec<u8> = Vec::new();
        let mut chunk = [0u8; 4096];
        while let Ok(read) = pipe.read(&mut chunk) {
            if read == 0 {
                break;
            }
            kept.extend_from_slice(&chunk[..read]);
            if kept.len() > 2 * STDERR_KEPT {
                kept.drain(..kept.len() - STDERR_KEPT);
            }
        }
        let start = kept.len().saturating_sub(STDERR_KEPT);
        let _ = sender.send(String::from_utf8_lossy(&kept[start..]).into_owned());
    });
    receiver
}

/// Runs `command` on `entry`'s machine once, within the one-shot limit, and returns what it
/// printed.
pub fn ask(
    entry: &RemoteEntry,
    options: &LinkOptions,
    command: &RemoteCommand,
) -> Result<Vec<u8>, Failure> {
    let finished = run_once(entry, options, command, options.timing.ask_limit)?;
    if finished.status.success() {
        return Ok(finished.stdout);
    }
    Err(classify(
        &entry.name,
        finished.status.code(),
        &finished.stderr,
        false,
    ))
}

/// Runs `command` on `entry`'s machine once, within `limit`, with the command's input (its
/// [`RemoteCommand::input`]) on `ssh`'s standard input, and returns how it ended, whatever its
/// exit status; a failure only when `ssh` could not be run, did not end in time, or printed more
/// than [`REPLY_MAX`] or [`ERRORS_MAX`] (it is then killed). Nothing is ever tried twice.
pub fn run_once(
    entry: &RemoteEntry,
    options: &LinkOptions,
    command: &RemoteCommand,
    limit: Duration,
) -> Result<child::Finished, Failure> {
    let args =
        ssh_args(entry, &options.timing, command).map_err(|err| Failure::link(err.to_string()))?;
    let mut ssh = Command::new(&options.ssh);
    ssh.args(&args).stderr(Stdio::piped());
    let bounds = Bounds {
        stdout: REPLY_MAX,
        stderr: ERRORS_MAX,
    };
    match child::finish_bounded(&mut ssh, limit, command.input(), bounds) {
        Ok(finished) => Ok(finished),
        Err(ChildError::TooLong { what, max }) => Err(Failure::link(format!(
            "the {what} from {} was longer than {max} bytes: it was not read further, and ssh \
             was stopped",
            entry.name
        ))),
        Err(err) if err.is_timeout() => Err(Failure::link(format!(
            "{} did not answer within {} s",
            entry.name,
            limit.as_secs_f64()
        ))),
        Err(ChildError::Spawn(err)) => Err(Failure::link(format!(
            "cannot run {}: {err}",
            options.ssh.to_string_lossy()
        ))),
        Err(err) => Err(Failure::link(format!("asking {}: {err}", entry.name))),
    }
}

/// The live list of `entry`'s machine, asked once (`slate sessions --json`), each session
/// marked with the machine.
pub fn ask_sessions(entry: &RemoteEntry, options: &LinkOptions) -> Result<Vec<Session>, Failure> {
    let answer = ask(entry, options, &RemoteCommand::Sessions)?;
    let (mut sessions, _) = wire::parse_sessions(&answer).map_err(|err| {
        if answer.trim_ascii().is_empty() {
            Failure::old_slate(&entry.name)
        } else {
            Failure::link(format!("{}: {err}", entry.name))
        }
    })?;
    // A remote lists no more here than a link would (`view::SESSIONS_PER_REMOTE`).
    sessions.truncate(super::view::SESSIONS_PER_REMOTE);
    for session in &mut sessions {
        super::view::mark_machine(session, &entry.name);
    }
    Ok(sessions)
}

/// Asks every remote at once, each within the one-shot limit, so the slowest one bounds the
/// wait; answers come back in `entries`' order.
pub fn ask_all(entries: &[RemoteEntry], options: &LinkOptions) -> Answers {
    std::thread::scope(|scope| {
        let asked: Vec<_> = entries
            .iter()
            .map(|entry| scope.spawn(move || ask_sessions(entry, options)))
            .collect();
        asked
            .into_iter()
            .map(|thread| {
                thread
                    .join()
                    .unwrap_or_else(|_| Err(Failure::link("the question failed")))
            })
            .collect()
    })
}

/// Starts [`ask_all`] on a thread of its own, so a command can read this machine meanwhile.
pub fn ask_all_later(entries: Vec<RemoteEntry>, options: LinkOptions) -> JoinHandle<Answers> {
    std::thread::spawn(move || ask_all(&entries, &options))
}
