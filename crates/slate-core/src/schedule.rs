//! The live loop's timing as plain state: when to read hinted files, scan processes, walk the
//! roots again, read the terminals of sessions in a tool call, tick the tracker and drop a closed
//! session from the live list.
//!
//! A [`Schedule`] holds one instant per [`Timer`]. The loop asks [`Schedule::next_wake`] how long
//! it may sleep, and [`Schedule::due`] what to do when it wakes; it tells the schedule what
//! happened (a hint, a hosted report, a full refresh, a finished walk, the tracker's new deadline)
//! through the other methods. Like the tracker, it never reads the clock: every instant comes in
//! as an argument, so its tests are plain data with made-up instants. It does no work itself;
//! `live` does what falls due.
//!
//! Adding a timer is one [`Timer`] variant (its place in the order says when it runs among
//! others due at once), one [`Task`], the line in [`Schedule::due`] that turns one into the
//! other, and whatever arms it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::model::SessionKey;

/// How often the loop does its periodic work. `Default` gives docs/states.md §5's values.
#[derive(Debug, Clone)]
pub struct Timing {
    /// File-watcher hints for the same file within this time are read once.
    pub coalesce: Duration,
    /// The process table is scanned this often (and at once on refresh).
    pub process_scan: Duration,
    /// Every root is walked again this often, because watcher events are hints.
    pub rewalk: Duration,
    /// A hosted report from a program the last process scan did not see (a CLI started under
    /// `slate run` since) brings the next scan forward, to at most this long after the last one.
    pub hosted_rescan: Duration,
}

impl Default for Timing {
    fn default() -> Timing {
        Timing {
            coalesce: Duration::from_millis(150),
            process_scan: Duration::from_secs(15),
            rewalk: Duration::from_secs(60),
            hosted_rescan: Duration::from_secs(2),
        }
    }
}

/// The loop's timers, in the order their work is done when several are due at once: files are
/// read before the scan, the scan before the walk, and the tracker ticks last, after all input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Timer {
    /// Read the files the watcher hinted at, once the coalescing delay has passed.
    Reads,
    /// Scan the process table and read the listings.
    Scan,
    /// Walk every root again: watcher events are hints, and some are missed.
    Rewalk,
    /// Read the terminals (tmux panes, kitty windows, WezTerm panes) of sessions whose reading
    /// could change a decision: at most once a second, and only while one has a tool call open.
    Panes,
    /// The tracker's next deadline: a decision flips by time alone.
    Deadline,
    /// A closed, reclaimable session's time on the live list is up.
    Leave,
}

/// Work that fell due, for the loop to do in this order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Task {
    /// Read these hinted files.
    Read(Vec<PathBuf>),
    /// Scan the process table and the listings.
    Scan,
    /// Walk every root; report how long it took with [`Schedule::walked`].
    Rewalk,
    /// Send the reads of the terminals that are due.
    ReadPanes,
    /// Let time pass in the tracker.
    Tick,
    /// Publish again, so sessions whose time on the live list is up leave it.
    Leave,
}

/// A walk of every root may take at most this share of the time between walks.
const REWALK_SHARE: u32 = 2000;

/// How long a hosted pid that asked for early scans is remembered (see `Timing::hosted_rescan`).
const FORGET_UNSEEN_HOSTED: Duration = Duration::from_secs(3600);

/// The time until the next safety-net walk: `every`, or longer when a walk is slow (a history
/// of tens of thousands of transcripts), so the walk never costs more than 1/`REWALK_SHARE` of
/// the time (0.05 %). The watcher's events remain the way changes arrive; the walk only
/// catches what they missed.
pub fn rewalk_interval(every: Duration, walk_took: Duration) -> Duration {
    every.max(walk_took.saturating_mul(REWALK_SHARE))
}

/// When each timer fires next, and the state that decides it.
#[derive(Debug, Clone)]
pub struct Schedule {
    timing: Timing,
    at: BTreeMap<Timer, Instant>,
    /// Files hinted at and not read yet.
    pending: BTreeSet<PathBuf>,
    last_scan: Instant,
    /// Hosted pids no scan had seen when they first reported, and when that was.
    unseen_hosted: HashMap<u32, Instant>,
    /// Sessions that waited for a process scan when first seen so (`awaiting_scan`), and when
    /// that was.
    unvouched: HashMap<SessionKey, Instant>,
}

impl Schedule {
    /// The schedule after the first full read, finished at `now`, whose walk took `walk_took`.
    pub fn new(timing: Timing, now: Instant, walk_took: Duration) -> Schedule {
        let mut at = BTreeMap::new();
        at.insert(Timer::Scan, now + timing.process_scan);
        at.insert(
            Timer::Rewalk,
            now + rewalk_interval(timing.rewalk, walk_took),
        );
        Schedule {
            timing,
            at,
            pending: BTreeSet::new(),
            last_scan: now,
            unseen_hosted: HashMap::new(),
            unvouched: HashMap::new(),
        }
    }

    pub fn timing(&self) -> &Timing {
        &self.timing
    }

    /// When `timer` fires next, if it is armed.
    pub fn when(&self, timer: Timer) -> Option<Instant> {
        self.at.get(&timer).copied()
    }

    /// The earliest armed timer: the loop sleeps until then unless an event comes first.
    pub fn next_wake(&self) -> Option<Instant> {
        self.at.values().min().copied()
    }

    fn arm(&mut self, timer: Timer, at: Option<Instant>) {
        match at {
            Some(at) => self.at.insert(timer, at),
            None => self.at.remove(&timer),
        };
    }

    /// Takes every timer due at `now` and returns its work, in [`Timer`] order. The periodic
    /// timers are armed again: the scan a period from now, the walk a period from now until
    /// [`Schedule::walked`] says how long it took.
    pub fn due(&mut self, now: Instant) -> Vec<Task> {
        let due: Vec<Timer> = self
            .at
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(timer, _)| *timer)
            .collect();
        let mut tasks = Vec::new();
        for timer in due {
            self.at.remove(&timer);
            tasks.push(match timer {
                Timer::Reads => Task::Read(std::mem::take(&mut self.pending).into_iter().collect()),
                Timer::Scan => {
                    self.scanned(now);
                    Task::Scan
                }
                Timer::Rewalk => {
                    self.arm(Timer::Rewalk, Some(now + self.timing.rewalk));
                    Task::Rewalk
                }
                Timer::Panes => Task::ReadPanes,
                Timer::Deadline => Task::Tick,
                Timer::Leave => Task::Leave,
            });
        }
        tasks
    }

    /// The watcher hinted that `path` changed at `now`: it is read once the coalescing delay has
    /// passed since the first hint not read yet, together with every file hinted meanwhile.
    pub fn changed(&mut self, path: PathBuf, now: Instant) {
        self.pending.insert(path);
        if !self.at.contains_key(&Timer::Reads) {
            self.arm(Timer::Reads, Some(now + self.timing.coalesce));
        }
    }

    /// Processes were scanned at `now` (periodically, or in a full refresh): the next scan is a
    /// period away.
    pub fn scanned(&mut self, now: Instant) {
        self.last_scan = now;
        self.arm(Timer::Scan, Some(now + self.timing.process_scan));
    }

    /// A full refresh at `now` scanned the processes and walked everything: the next scan is a
    /// period away, and the hinted files were read by the walk.
    pub fn refreshed(&mut self, now: Instant) {
        self.scanned(now);
        self.pending.clear();
        self.arm(Timer::Reads, None);
    }

    /// A walk of every root finished at `now` and took `took`: the next one comes after
    /// [`rewalk_interval`].
    pub fn walked(&mut self, now: Instant, took: Duration) {
        let next = now + rewalk_interval(self.timing.rewalk, took);
        self.arm(Timer::Rewalk, Some(next));
    }

    /// A hosted terminal running `pid` reported at `now`; `seen` says whether the last scan saw
    /// an agent process that is `pid` or its child. A report from a CLI started since the last
    /// scan attaches to no session until a scan sees the CLI, and the next periodic scan may be a
    /// whole `process_scan` away: a dialog would wait that long to read Needs you. So the next scan
    /// comes at most `hosted_rescan` after the last one, for as long as one periodic scan would
    /// take; a program that is no agent is never seen and stops asking then (its pid is
    /// remembered for an hour, so it does not start asking again).
    pub fn hosted_report(&mut self, pid: u32, seen: bool, now: Instant) {
        self.unseen_hosted
            .retain(|_, first| now < *first + FORGET_UNSEEN_HOSTED);
        if seen {
            return;
        }
        let first = *self.unseen_hosted.entry(pid).or_insert(now);
        if now < first + self.timing.process_scan {
            let soon = self.last_scan + self.timing.hosted_rescan;
            let next = self.when(Timer::Scan).map_or(soon, |at| at.min(soon));
            self.arm(Timer::Scan, Some(next));
        }
    }

    /// Sessions that wait for a process scan at `now` (`Tracker::awaiting_scan`: a tool call no
    /// process vouches for, a listing entry whose pid no scan has seen; a CLI started since the
    /// last scan). Its terminal can be read, and its listing vouch for it, only once a scan has
    /// seen its process, and its dialog would wait for the next periodic scan to read Needs you;
    /// so, as for a hosted report (`hosted_report`), the next scan comes at most `hosted_rescan`
    /// after the last one, for as long as one periodic scan would take per session. A session
    /// that stops waiting is forgotten, so that waiting again (interrupted later on) brings the
    /// scans forward again; the loop calls this after every round, with no keys when none waits.
    pub fn awaiting_scan(&mut self, keys: &[SessionKey], now: Instant) {
        self.unvouched
            .retain(|key, first| keys.contains(key) && now < *first + FORGET_UNSEEN_HOSTED);
        let mut soon = false;
        for key in keys {
            let first = *self.unvouched.entry(key.clone()).or_insert(now);
            soon |= now < first + self.timing.process_scan;
        }
        if soon {
            let soon = self.last_scan + self.timing.hosted_rescan;
            let next = self.when(Timer::Scan).map_or(soon, |at| at.min(soon));
            self.arm(Timer::Scan, Some(next));
        }
    }

    /// The tracker's next deadline, as an instant (`None`: nothing flips by time alone).
    pub fn set_deadline(&mut self, at: Option<Instant>) {
        self.arm(Timer::Deadline, at);
    }

    /// When the terminals are next read (`None`: no session's reading could change a decision).
    pub fn set_panes(&mut self, at: Option<Instant>) {
        self.arm(Timer::Panes, at);
    }

    /// When the next closed session leaves the live list (`None`: none will by time alone).
    pub fn set_leave(&mut self, at: Option<Instant>) {
        self.arm(Timer::Leave, at);
    }
}
