//! When to try a failed link again: 1 s, doubling to 60 s, with jitter.
//!
//! A pure schedule: it is told how each attempt ended and answers how long to wait, with the
//! randomness handed in (`jitter`, from 0 to 1), so its tests are data. It starts no timer and
//! reads no clock; `remote::link` sleeps for what it says.

use std::time::Duration;

/// The waits between attempts of one link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backoff {
    first: Duration,
    most: Duration,
    /// The wait after the next failure, before jitter.
    next: Duration,
}

impl Backoff {
    /// Waits that start at `first` and double up to `most`.
    pub fn new(first: Duration, most: Duration) -> Backoff {
        let first = first.min(most);
        Backoff {
            first,
            most,
            next: first,
        }
    }

    /// The wait before the next attempt, after one that ended. `up_for` is how long the link
    /// was up after its snapshot arrived (`None` when it never was). A link that stayed up at
    /// least the longest wait starts the waits over, so a remote that is rebooted now and then
    /// is reached again within a second; one that drops right after connecting keeps doubling,
    /// so a flapping link is not hammered. `jitter` (0 to 1) takes up to a quarter off the wait,
    /// so links that failed together do not all try again at the same moment, and no wait is
    /// ever longer than `most`.
    pub fn ended(&mut self, up_for: Option<Duration>, jitter: f64) -> Duration {
        if up_for.is_some_and(|up| up >= self.most) {
            self.next = self.first;
        }
        let base = self.next;
        self.next = (self.next * 2).min(self.most);
        base.mul_f64(1.0 - 0.25 * jitter.clamp(0.0, 1.0))
    }

    /// The wait the next failure will get, before jitter.
    pub fn upcoming(&self) -> Duration {
        self.next
    }
}
