//! The notification pause, kept in Slate's store so it outlives a restart.
//!
//! Every change of the pause (a menu click, the page, an edit of the config's `[notifications]`)
//! is written to the store as the pause in force ([`keep`]), and the app starts with it
//! ([`at_start`]): a pause until resumed, or until a time still ahead. When none is kept (never
//! paused, resumed, or a timed pause that has run out) the config's `[notifications]` says how the
//! app starts, as it always did. The store is opened for each read or write and closed again, so
//! the app holds no connection to it while the Slate service runs the engine. The demo keeps no
//! pause: it plays in a HOME of its own.

use std::path::Path;

use slate::config::Notifications;
use slate::model::Timestamp;
use slate::policy::menu::Pause;

/// The pause the app starts with: the one kept in `store_file` while it holds, else the
/// config's.
pub fn at_start(store_file: Option<&Path>, config: &Notifications, now: Timestamp) -> Pause {
    let kept = store_file.and_then(|file| {
        slate::store::open(file)
            .and_then(|store| store.notification_pause(now))
            .map_err(|err| tracing::warn!("cannot read the kept notification pause: {err}"))
            .ok()
    });
    let pause = Pause::in_force(kept, config, now);
    if kept == Some(pause) && pause.is_paused(now) {
        tracing::info!(?pause, "notifications stay paused, as they were");
    }
    pause
}

/// Keeps `pause`, set at `now`, in `store_file`. A failure is logged: the pause still holds
/// until the app quits.
pub fn keep(store_file: Option<&Path>, pause: Pause, now: Timestamp) {
    let Some(file) = store_file else {
        return;
    };
    let kept = slate::store::open(file).and_then(|store| store.set_notification_pause(pause, now));
    if let Err(err) = kept {
        tracing::warn!("cannot keep the notification pause for the next start: {err}");
    }
}
