//! Running a helper program to completion within a time limit, for its output.
//!
//! Some facts are only available by asking a program (Claude Code's `claude agents --json`), and
//! the engine's loop must never hang on one that stalls. [`output_within`] starts the program,
//! reads its output on a thread of its own (so a large answer never fills the pipe and stalls the
//! child), kills it when it overruns, and says why it gave nothing. This is the one place outside
//! the loop's own timers that waits on the wall clock; the sources that call it read no clock and
//! decide nothing by it.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
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
    command.stdin(Stdio::null()).stdout(Stdio::piped());
    let mut child = command.spawn().map_err(ChildError::Spawn)?;
    // The threads end when the pipes close: when the child exits or is killed.
    let (sender, receiver) = std::sync::mpsc::channel();
    if let Some(mut stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let read = stdout.read_to_end(&mut bytes).map(|_| bytes);
            let _ = sender.send(read);
        });
    }
    let (error_sender, errors) = std::sync::mpsc::channel();
    if let Some(mut stderr) = child.stderr.take() {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stderr.read_to_end(&mut bytes);
            let start = bytes.len().saturating_sub(8 * 1024);
            let _ = error_sender.send(String::from_utf8_lossy(&bytes[start..]).into_owned());
        });
    }
    let deadline = Instant::now() + limit;
    let status = loop {
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
        Ok(read) => read.map_err(ChildError::Read)?,
        Err(_) => return Err(ChildError::OutputOpen),
    };
    // The error output closes with the output, unless a grandchild holds it open: then it is
    // not waited for.
    let stderr = errors
        .recv_timeout(Duration::from_millis(100))
        .unwrap_or_default();
    Ok(Finished {
        status,
        stdout,
        stderr,
    })
}
