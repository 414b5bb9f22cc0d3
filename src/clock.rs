//! The wall clock. The core takes time as an argument; the edges that need the time now (the live
//! loop, `slate run`, the command line) read it here.

use crate::model::Timestamp;

/// The time now, by the system's wall clock.
pub fn system_clock() -> Timestamp {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Timestamp::from_millis(since_epoch.as_millis() as i64)
}
