//! The wall clock. The core takes time as an argument; the edges that need the time now (the live
//! loop, `slate run`, the command line) read it here, and the async followers of the live
//! service (the push worker, the tray's) wait here for a deadline the core gave them.

use slate_core::model::Timestamp;

/// The time now, by the system's wall clock.
pub fn system_clock() -> Timestamp {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Timestamp::from_millis(since_epoch.as_millis() as i64)
}

/// Waits until the wall clock reaches `at` (at once when it has passed), or for ever when there
/// is no deadline: the timer arm of a `select!` over a deadline the core returned.
pub async fn sleep_until(at: Option<Timestamp>) {
    match at {
        Some(at) => tokio::time::sleep(system_clock().elapsed_until(at)).await,
        None => std::future::pending().await,
    }
}
