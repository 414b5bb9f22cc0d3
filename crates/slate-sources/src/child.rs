//! Running a helper program to completion within a time limit, for its output.
//!
//! Some facts are only available by asking a program (Claude Code's `claude agents --json`), and
//! the engine's loop must never hang on one that stalls. [`output_within`] starts the program,
//! reads its output on a thread of its own (so a large answer never fills the pipe and stalls the
//! child), kills it when it overruns, and says why it gave nothing. [`finish_bounded`] also gives
//! the program its input, and stops one that prints more than its bounds (a remote machine's
//! answer, which this machine did not write). This is the one place outside the loop's own
//! timers that waits on the wall clock; the sources that call it read no clock and decide nothing
//! by it.

use std::io::Write;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Why a helper program gave no output.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    #[error("{0}")]
    Spawn(std::io::Error),
    #[error("no answer within {} ms; killed", .0.as_millis())]
    Overran(Duration),
    #[error("{0}")]
    Wait(std::io::Error),
    #[error("exited with {0}")]
    Failed(ExitStatus),
    #[error("{0}")]
    Read(std::io::Error),
    #[error("its output did not close in time")]
    OutputOpen,
    #[error("its {what} was longer than {max} bytes; it was not read further, and killed")]
    TooLong { what: &'static str, max: usize },
}

impl ChildError {
    /// True when the program ran out of time, as opposed to failing.
    pub fn is_timeout(&self) -> bool {
        matches!(self, ChildError::Overran(_) | ChildError::OutputOpen)
    }
}

/// Runs `command` with no input and its errors discarded, and returns what it printed when it
/// exits successfully within `limit`. A program still running at the limit is killed.
pub fn output_within(command: &mut Command, limit: Duration) -> Result<Vec<u8>, ChildError> {
    command.stderr(Stdio::null());
    let finished = finish_within(command, limit)?;
    if !finished.status.success() {
        return Err(ChildError::Failed(finished.status));
    }
    Ok(finished.stdout)
}

/// How a program that ran to its end within its time limit ended.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    /// What it wrote on its error output, when that was asked for (the caller's `stderr` set to
    /// piped), at most the last 8 KiB.
    pub stderr: String,
}

/// Runs `command` with no input within `limit`, and returns how it ended, whatever its exit
/// code, with what it printed and (when the caller piped it) what it wrote on its error output.
/// A program still running at the limit is killed.
pub fn finish_within(command: &mut Command, limit: Duration) -> Result<Finished, ChildError> {
    finish_bounded(command, limit, None, Bounds::UNLIMITED)
}

/// How much a program may print before it is stopped: its output and its error output, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub stdout: usize,
    pub stderr: usize,
}

impl Bounds {
    /// No bound: the program's own helpers, whose output this machine wrote.
    pub const UNLIMITED: Bounds = Bounds {
        stdout: usize::MAX,
        stderr: usize::MAX,
    };
}

/// Runs `command` within `limit`, with `input` (when given) on its standard input and no input
/// otherwise, and returns how it ended, as [`finish_within`] does. Its output and its error
/// output are read no further than `bounds`: a program that prints more is killed at once and
/// [`ChildError::TooLong`] says which stream overflowed, so a hostile or broken program can make
/// this process hold no more than the bounds.
pub fn finish_bounded(
    command: &mut Command,
    limit: Duration,
    input: Option<Vec<u8>>,
    bounds: Bounds,
) -> Result<Finished, ChildError> {
    let stdin = if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    };
    command.stdin(stdin).stdout(Stdio::piped());
    let mut child = command.spawn().map_err(ChildError::Spawn)?;
    if let (Some(mut pipe), Some(input)) = (child.stdin.take(), input) {
        // On a thread of its own, so a program that never reads cannot stall this one; the pipe
        // closes when the thread ends, which is the end of the input for the program.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
    }
    // Set by a reader whose stream went past its bound; the wait below then kills the program.
    let overflowed: Arc<Mutex<Option<(&'static str, usize)>>> = Arc::new(Mutex::new(None));
    // The threads end when the pipes close (the child exits or is killed) or past their bound.
    let (sender, receiver) = std::sync::mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
        let overflowed = overflowed.clone();
        std::thread::spawn(move || {
            let read = read_bounded(stdout, bounds.stdout, usize::MAX);
            if let Ok(Drained::Over) = read {
                *overflowed.lock().expect("lock poisoned") = Some(("output", bounds.stdout));
            }
            let _ = sender.send(read);
        });
    }
    let (error_sender, errors) = std::sync::mpsc::channel();
    if let Some(stderr) = child.stderr.take() {
        let overflowed = overflowed.clone();
        std::thread::spawn(move || {
            let kept = match read_bounded(stderr, bounds.stderr, STDERR_KEPT) {
                Ok(Drained::All(bytes)) => bytes,
                Ok(Drained::Over) => {
                    *overflowed.lock().expect("lock poisoned") =
                        Some(("error output", bounds.stderr));
                    Vec::new()
                }
                Err(_) => Vec::new(),
            };
            let _ = error_sender.send(String::from_utf8_lossy(&kept).into_owned());
        });
    }
    let too_long = || *overflowed.lock().expect("lock poisoned");
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some((what, max)) = too_long() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ChildError::TooLong { what, max });
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ChildError::Overran(limit));
            }
            Err(error) => {
                let _ = child.kill();
                return Err(ChildError::Wait(error));
            }
        }
    };
    let remaining = deadline.saturating_duration_since(Instant::now());
    let stdout = match receiver.recv_timeout(remaining.max(Duration::from_millis(100))) {
        Ok(Ok(Drained::All(bytes))) => bytes,
        Ok(Ok(Drained::Over)) => {
            return Err(ChildError::TooLong {
                what: "output",
                max: bounds.stdout,
            })
        }
        Ok(Err(err)) => return Err(ChildError::Read(err)),
        Err(_) => return Err(ChildError::OutputOpen),
    };
    // The error output closes with the output, unless a grandchild holds it open: then it is
    // not waited for.
    let stderr = errors
        .recv_timeout(Duration::from_millis(100))
        .unwrap_or_default();
    if let Some((what, max)) = too_long() {
        return Err(ChildError::TooLong { what, max });
    }
    Ok(Finished {
        status,
        stdout,
        stderr,
    })
}

/// How much of a program's error output is kept to say why it failed.
const STDERR_KEPT: usize = 8 * 1024;

/// What a bounded read gave.
enum Drained {
    /// The stream to its end (or the last `keep` bytes of it).
    All(Vec<u8>),
    /// The stream went past its bound; it was not read further.
    Over,
}

/// Reads `pipe` to its end, keeping its last `keep` bytes, unless more than `max` bytes come:
/// then it stops reading at once.
fn read_bounded(mut pipe: impl std::io::Read, max: usize, keep: usize) -> std::io::Result<Drained> {
    let mut kept = Vec::new();
    let mut total: usize = 0;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let read = match pipe.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => read,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        total = total.saturating_add(read);
        if total > max {
            return Ok(Drained::Over);
        }
        kept.extend_from_slice(&chunk[..read]);
        if kept.len() > keep.saturating_mul(2) {
            kept.drain(..kept.len() - keep);
        }
    }
    let start = kept.len().saturating_sub(keep);
    kept.drain(..start);
    Ok(Drained::All(kept))
}
