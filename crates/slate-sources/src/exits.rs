//! The ends of the agents' processes, as hints: one thread waits on a pidfd for each process the
//! live loop names (those the last scan saw that may vouch for a session) and says when one of
//! them has ended, so the loop scans the process table at once instead of at its next periodic
//! scan, a quarter of a minute away (docs/states.md §5). A CLI that writes nothing as it exits
//! (Kilo Code, Pi, any CLI closed while its turn was over) would otherwise read Working or Needs
//! you until then.
//!
//! Like the file watcher's events, an end is only a hint: the scan that follows decides. A pid is
//! held with its start time in clock ticks, as the scan saw it; a pid that is gone, or names
//! another process by the time its pidfd is opened, counts as ended at once. The thread sleeps in
//! `poll` with no timeout, so it costs nothing while nothing ends. Off Linux, or on a kernel
//! without pidfds, nothing is watched and the periodic scan alone finds an end.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A process as the scan saw it: its pid and its start time in clock ticks (`None` where the
/// scan could not read one).
pub type Process = (u32, Option<u64>);

/// How long, after a first end, the thread waits for others before it reports: a CLI and the
/// commands it ran end together, and one report brings one scan.
#[cfg(target_os = "linux")]
const GATHER: std::time::Duration = std::time::Duration::from_millis(50);

/// The running watch. Dropping it stops the thread.
pub struct Exits {
    shared: Arc<Mutex<Wanted>>,
    #[cfg(target_os = "linux")]
    wake: std::os::unix::net::UnixStream,
}

/// What the thread is asked to watch, and whether it should stop.
#[derive(Default)]
struct Wanted {
    processes: Vec<Process>,
    /// Bumped by every `watch`, so the thread knows the list changed.
    generation: u64,
    stop: bool,
}

impl Exits {
    /// Starts the thread, which calls `ended` (on its own thread) each time one or more of the
    /// watched processes have ended. `None` when the thread or its wake-up socket cannot be had,
    /// or off Linux: the periodic scan is left to find ends.
    pub fn start(ended: impl Fn() + Send + 'static) -> Option<Exits> {
        let shared: Arc<Mutex<Wanted>> = Arc::default();
        #[cfg(target_os = "linux")]
        {
            let (wake, woken) = std::os::unix::net::UnixStream::pair().ok()?;
            woken.set_nonblocking(true).ok()?;
            let theirs = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("slate-exits".to_string())
                .spawn(move || linux::run(&theirs, &woken, &ended))
                .ok()?;
            Some(Exits { shared, wake })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (shared, ended);
            None
        }
    }

    /// Watches these processes from now on, in place of those named before.
    pub fn watch(&self, processes: &[Process]) {
        let Ok(mut wanted) = self.shared.lock() else {
            return;
        };
        if wanted.processes == processes {
            return;
        }
        wanted.processes = processes.to_vec();
        wanted.generation += 1;
        drop(wanted);
        self.wake();
    }

    fn wake(&self) {
        #[cfg(target_os = "linux")]
        {
            use std::io::Write;
            // A full socket already holds a wake-up the thread has not read.
            let _ = (&self.wake).write(&[1]);
        }
    }
}

impl Drop for Exits {
    fn drop(&mut self) {
        if let Ok(mut wanted) = self.shared.lock() {
            wanted.stop = true;
        }
        self.wake();
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io::Read;
    use std::os::fd::OwnedFd;
    use std::os::unix::net::UnixStream;

    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    use rustix::process::{pidfd_open, Pid, PidfdFlags};

    use super::{HashMap, Mutex, Process, Wanted, GATHER};
    use crate::sources::processes::parse_start_ticks;

    /// What opening a pidfd for a process found.
    enum Opened {
        Held(OwnedFd),
        /// The process is gone, or its pid names another process now.
        Ended,
        /// No pidfd could be had (an old kernel, out of descriptors): not watched.
        Unwatched,
    }

    fn open(&(pid, ticks): &Process) -> Opened {
        let Some(id) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
            return Opened::Unwatched;
        };
        let fd = match pidfd_open(id, PidfdFlags::empty()) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::SRCH) => return Opened::Ended,
            Err(_) => return Opened::Unwatched,
        };
        // The pidfd holds whatever process has the pid now: it is the scanned one only if it
        // started when that one did.
        let now = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| parse_start_ticks(&stat));
        match (ticks, now) {
            (_, None) => Opened::Ended,
            (Some(scanned), Some(now)) if scanned != now => Opened::Ended,
            _ => Opened::Held(fd),
        }
    }

    pub(super) fn run(shared: &Mutex<Wanted>, woken: &UnixStream, ended: &dyn Fn()) {
        let mut held: HashMap<Process, OwnedFd> = HashMap::new();
        let mut generation = 0;
        loop {
            let mut gone = false;
            {
                let Ok(wanted) = shared.lock() else { return };
                if wanted.stop {
                    return;
                }
                if wanted.generation != generation {
                    generation = wanted.generation;
                    held.retain(|process, _| wanted.processes.contains(process));
                    for process in &wanted.processes {
                        if held.contains_key(process) {
                            continue;
                        }
                        match open(process) {
                            Opened::Held(fd) => {
                                held.insert(*process, fd);
                            }
                            Opened::Ended => gone = true,
                            Opened::Unwatched => {}
                        }
                    }
                }
            }
            if gone {
                ended();
            }
            let keys: Vec<Process> = held.keys().copied().collect();
            let readable = wait(woken, &keys, &held, None);
            if readable.is_empty() {
                continue;
            }
            for process in &readable {
                held.remove(process);
            }
            // Those that end with it are reported in the same breath.
            let keys: Vec<Process> = held.keys().copied().collect();
            for process in wait(woken, &keys, &held, Some(GATHER)) {
                held.remove(&process);
            }
            ended();
        }
    }

    /// Waits until the wake-up socket or a pidfd is readable (at most `most`), drains the socket,
    /// and returns the processes whose pidfd said they ended.
    fn wait(
        woken: &UnixStream,
        keys: &[Process],
        held: &HashMap<Process, OwnedFd>,
        most: Option<std::time::Duration>,
    ) -> Vec<Process> {
        let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(keys.len() + 1);
        fds.push(PollFd::new(woken, PollFlags::IN));
        fds.extend(
            keys.iter()
                .map(|key| PollFd::new(&held[key], PollFlags::IN)),
        );
        let timeout = most.and_then(|most| Timespec::try_from(most).ok());
        if poll(&mut fds, timeout.as_ref()).is_err() {
            return Vec::new();
        }
        if !fds[0].revents().is_empty() {
            let mut buffer = [0u8; 64];
            while matches!((&*woken).read(&mut buffer), Ok(n) if n > 0) {}
        }
        keys.iter()
            .zip(&fds[1..])
            .filter(|(_, fd)| !fd.revents().is_empty())
            .map(|(key, _)| *key)
            .collect()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};
    use std::sync::mpsc;
    use std::time::Duration;

    /// Bounds a wait that must end, so a broken watch fails instead of hanging.
    const BOUND: Duration = Duration::from_secs(20);

    fn ticks(pid: u32) -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        crate::sources::processes::parse_start_ticks(&stat)
    }

    fn sleeper() -> std::process::Child {
        Command::new("sleep")
            .arg("600")
            .stdin(Stdio::null())
            .spawn()
            .expect("sleep starts")
    }

    #[test]
    fn says_when_a_watched_process_ends_and_not_before() {
        let (tx, rx) = mpsc::channel();
        let exits = Exits::start(move || {
            let _ = tx.send(());
        })
        .expect("the watch starts");
        let mut first = sleeper();
        let mut second = sleeper();
        exits.watch(&[
            (first.id(), ticks(first.id())),
            (second.id(), ticks(second.id())),
        ]);
        assert!(
            rx.recv_timeout(Duration::from_millis(300)).is_err(),
            "nothing ended, yet the watch said so"
        );
        first.kill().expect("kill");
        first.wait().expect("reaped");
        rx.recv_timeout(BOUND)
            .expect("the end of a watched process is told");
        // Watching again what is left: the one still alive is not told of.
        exits.watch(&[(second.id(), ticks(second.id()))]);
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
        second.kill().expect("kill");
        second.wait().expect("reaped");
        rx.recv_timeout(BOUND).expect("the second end is told too");
    }

    #[test]
    fn a_process_gone_or_another_by_the_time_it_is_watched_counts_as_ended() {
        let (tx, rx) = mpsc::channel();
        let exits = Exits::start(move || {
            let _ = tx.send(());
        })
        .expect("the watch starts");
        let mut child = sleeper();
        let pid = child.id();
        let started = ticks(pid);
        child.kill().expect("kill");
        child.wait().expect("reaped");
        exits.watch(&[(pid, started)]);
        rx.recv_timeout(BOUND)
            .expect("a pid already gone is an end");
        // A live pid with another start time is another process: the scanned one has ended.
        let mut live = sleeper();
        let other = ticks(live.id()).map(|ticks| ticks + 1);
        exits.watch(&[(live.id(), other)]);
        rx.recv_timeout(BOUND)
            .expect("a recycled pid is the end of the process scanned");
        live.kill().expect("kill");
        live.wait().expect("reaped");
    }
}
