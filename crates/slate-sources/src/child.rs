//! Running a helper program to completion within a time limit, for its output.
//!
//! Some facts are only available by asking a program (Claude Code's `claude agents --json`), and
//! the engine's loop must never hang on one that stalls. [`output_within`] starts the program,
//! reads its output on a thread of its own (so a large answer never fills the pipe and stalls the
//! child), kills it when it overruns, and says why it gave nothing. [`finish_bounded`] also gives
//! the program its input, and stops one that prints more than its bounds (a remote machine's
//! answer, which this machine did not write). This is the one place outside the loop's own
//! timers that waits on the wall clock; the sources that call it read no clock and decide nothing
//! by it. On Linux it waits for the program's end on its pidfd, which wakes it the moment the
//! program exits (or is killed for printing too much) and not before, with no polling; only
//! where the kernel has no pidfd does it look every 10 ms.

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
    // Taken before anything can reap the child, so it names this child and no process that
    // reuses its pid later.
    let end = Arc::new(End::of(&child));
    if let (Some(mut pipe), Some(input)) = (child.stdin.take(), input) {
        // On a thread of its own, so a program that never reads cannot stall this one; the pipe
        // closes when the thread ends, which is the end of the input for the program.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
    }
    // Set by a reader whose stream went past its bound, which then kills the program.
    let overflowed: Arc<Mutex<Option<(&'static str, usize)>>> = Arc::new(Mutex::new(None));
    let over = |what: &'static str, max: usize, overflowed: &Mutex<_>, end: &End| {
        *overflowed.lock().expect("lock poisoned") = Some((what, max));
        end.kill();
    };
    // The threads end when the pipes close (the child exits or is killed) or past their bound.
    let (sender, receiver) = std::sync::mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
        let (overflowed, end) = (overflowed.clone(), end.clone());
        std::thread::spawn(move || {
            let read = read_bounded(stdout, bounds.stdout, usize::MAX);
            if let Ok(Drained::Over) = read {
                over("output", bounds.stdout, &overflowed, &end);
            }
            let _ = sender.send(read);
        });
    }
    // Only an error output the caller piped is read, and waited for below.
    let errors = child.stderr.take().map(|stderr| {
        let (error_sender, errors) = std::sync::mpsc::channel();
        let (overflowed, end) = (overflowed.clone(), end.clone());
        std::thread::spawn(move || {
            let kept = match read_bounded(stderr, bounds.stderr, STDERR_KEPT) {
                Ok(Drained::All(bytes)) => bytes,
                Ok(Drained::Over) => {
                    over("error output", bounds.stderr, &overflowed, &end);
                    Vec::new()
                }
                Err(_) => Vec::new(),
            };
            let _ = error_sender.send(String::from_utf8_lossy(&kept).into_owned());
        });
        errors
    });
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
            Ok(None) => match deadline.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => end.wait(left),
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(ChildError::Overran(limit));
                }
            },
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
        .map(|errors| {
            count(&ERROR_WAITS);
            errors
                .recv_timeout(Duration::from_millis(100))
                .unwrap_or_default()
        })
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

/// How the end of a running child is waited for: on Linux, its pidfd, readable once the child has
/// exited; elsewhere, or on a kernel without pidfds, nothing but a short sleep.
struct End {
    #[cfg(target_os = "linux")]
    pidfd: Option<std::os::fd::OwnedFd>,
}

impl End {
    fn of(child: &std::process::Child) -> End {
        #[cfg(target_os = "linux")]
        {
            use rustix::process::{pidfd_open, Pid, PidfdFlags};
            End {
                pidfd: pidfd_open(Pid::from_child(child), PidfdFlags::empty()).ok(),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = child;
            End {}
        }
    }

    /// Waits at most `most` for the child to end, or for a signal; returns early either way, and
    /// the caller looks at the child again.
    fn wait(&self, most: Duration) {
        count(&WAITS);
        #[cfg(target_os = "linux")]
        if let Some(pidfd) = &self.pidfd {
            use rustix::event::{poll, PollFd, PollFlags, Timespec};
            let timeout = Timespec::try_from(most).ok();
            let mut fds = [PollFd::new(pidfd, PollFlags::IN)];
            // Interrupted or not, the caller looks again: a wrong wake costs one `try_wait`.
            let _ = poll(&mut fds, timeout.as_ref());
            return;
        }
        std::thread::sleep(most.min(Duration::from_millis(10)));
    }

    /// Kills the child from another thread than the one that waits for it (a reader past its
    /// bound). Through the pidfd only: a bare pid could name another process by now.
    fn kill(&self) {
        #[cfg(target_os = "linux")]
        if let Some(pidfd) = &self.pidfd {
            use rustix::process::{pidfd_send_signal, Signal};
            let _ = pidfd_send_signal(pidfd, Signal::KILL);
        }
    }
}

thread_local! {
    /// How many times this thread waited for a child's end, and for a child's error output: what
    /// the tests count.
    static WAITS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    static ERROR_WAITS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn count(waits: &'static std::thread::LocalKey<std::cell::Cell<usize>>) {
    waits.with(|waits| waits.set(waits.get() + 1));
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn shell(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    fn waits() -> usize {
        WAITS.with(std::cell::Cell::get)
    }

    fn error_waits() -> usize {
        ERROR_WAITS.with(std::cell::Cell::get)
    }

    // Issue 36: with the error output not piped, its reader's channel was still waited on for
    // 100 ms after every program, since no reader ever took the channel's sender; a tmux read
    // took 100 ms more than tmux did.
    #[test]
    fn an_error_output_not_piped_is_not_waited_for() {
        let before = error_waits();
        let output = output_within(&mut shell("echo hi"), Duration::from_secs(5)).expect("it ends");
        assert_eq!(output, b"hi\n");
        assert_eq!(error_waits(), before);
        let mut piped = shell("echo hi >&2");
        piped.stderr(Stdio::piped());
        let finished = finish_within(&mut piped, Duration::from_secs(5)).expect("it ends");
        assert_eq!(finished.stderr, "hi\n");
        assert_eq!(error_waits(), before + 1);
    }

    // Issue 36: the wait looked at the child every 10 ms, a hundred wake-ups a second for as long
    // as a program ran; on the pidfd it wakes when the child ends.
    #[test]
    fn a_program_s_end_is_waited_for_without_looking_every_10_ms() {
        let before = waits();
        let output = output_within(&mut shell("sleep 0.3; echo done"), Duration::from_secs(5))
            .expect("it ends well within its limit");
        assert_eq!(output, b"done\n");
        let woken = waits() - before;
        assert!(woken <= 2, "woken {woken} times for one program's end");
    }

    #[test]
    fn a_program_past_its_limit_is_killed() {
        let error = output_within(&mut shell("sleep 30"), Duration::from_millis(200))
            .expect_err("it cannot end in time");
        assert!(matches!(error, ChildError::Overran(_)), "{error}");
        assert!(error.is_timeout());
    }

    #[test]
    fn a_program_that_prints_too_much_is_killed_at_once() {
        let bounds = Bounds {
            stdout: 1024,
            stderr: 1024,
        };
        // It would print forever, and never end of itself within the limit.
        let error = finish_bounded(
            &mut shell("while :; do echo xxxxxxxxxxxxxxxx; done"),
            Duration::from_secs(60),
            None,
            bounds,
        )
        .expect_err("it prints past its bound");
        assert!(
            matches!(
                error,
                ChildError::TooLong {
                    what: "output",
                    max: 1024
                }
            ),
            "{error}"
        );
        let mut loud = shell("while :; do echo xxxxxxxxxxxxxxxx >&2; done");
        loud.stderr(Stdio::piped());
        let error = finish_bounded(&mut loud, Duration::from_secs(60), None, bounds)
            .expect_err("it writes past its bound");
        assert!(
            matches!(
                error,
                ChildError::TooLong {
                    what: "error output",
                    max: 1024
                }
            ),
            "{error}"
        );
    }

    #[test]
    fn input_goes_in_and_the_error_output_comes_back_when_piped() {
        let mut command = shell("cat; echo oops >&2; exit 3");
        command.stderr(Stdio::piped());
        let finished = finish_bounded(
            &mut command,
            Duration::from_secs(5),
            Some(b"hello".to_vec()),
            Bounds::UNLIMITED,
        )
        .expect("it ends");
        assert_eq!(finished.stdout, b"hello");
        assert_eq!(finished.stderr, "oops\n");
        assert_eq!(finished.status.code(), Some(3));
        let error = output_within(&mut shell("exit 4"), Duration::from_secs(5)).expect_err("fails");
        assert!(matches!(error, ChildError::Failed(_)), "{error}");
    }
}
