//! What the push channel did, counted where `/health` reads it. The push worker (`push`) does
//! the pushing; the live service only keeps its counts, so a stalled push never reaches the loop.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde::Serialize;

/// The push channel's counts since the service started.
#[derive(Debug, Default)]
pub struct PushStats {
    sent: AtomicU64,
    failed: AtomicU64,
    dropped: AtomicU64,
    last_failure: Mutex<Option<PushFailure>>,
}

/// [`PushStats`] as `/health` shows them, under `push`, while `[push]` names a channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PushReport {
    pub sent: u64,
    pub failed: u64,
    /// Pushes the sending queue had no room for.
    pub dropped: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<PushFailure>,
}

/// Why a push failed, by its kind only: never the URL's path, the topic or the token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PushFailure {
    /// `ntfy`, `webhook`, or `push` for what stopped both (the token file).
    pub channel: &'static str,
    pub what: String,
}

impl PushStats {
    pub fn report(&self) -> PushReport {
        PushReport {
            sent: self.sent.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
            last_failure: self.last_failure.lock().expect("lock poisoned").clone(),
        }
    }

    pub fn sent(&self) {
        self.sent.fetch_add(1, Ordering::Relaxed);
    }

    pub fn dropped(&self) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a failure, logs its kind and keeps it as the last one.
    pub fn failed(&self, failure: PushFailure) {
        self.failed.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(channel = failure.channel, "a push failed: {}", failure.what);
        *self.last_failure.lock().expect("lock poisoned") = Some(failure);
    }
}
