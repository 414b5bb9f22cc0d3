//! The state every part of the desktop shell shares: the [`Shell`], managed by Tauri
//! (`app.state::<Shell>()`) and passed where it is needed, so no `AppHandle` lives in a global.
//!
//! It holds the engine the shell follows and where its API is, the notification pause, the app's
//! own engine once it runs, which notification number stands for which click and offer, and the
//! menu, count and tooltip as last shown. It is data with a few accessors: what changes it lives
//! in the modules that act (`app` makes it, `follow` replaces the engine, `tray` redraws, `clicks`
//! reads the notifications' offers).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, RwLock};

use slate::policy::menu::{self, Pause};
use slate::policy::notifications::{Click, Offer};

use crate::engine::{Engine, Own};
use crate::server::Endpoint;
use crate::source::Source;

/// The state every part of the shell shares, managed by Tauri (`app.state::<Shell>()`).
pub struct Shell {
    /// The engine the shell follows: its own, or this user's Slate service.
    pub(crate) source: RwLock<Source>,
    /// Where the page finds the API, and which Slate serves it.
    pub(crate) endpoint: Mutex<Endpoint>,
    pub pause: Mutex<Pause>,
    /// Slate's store, where the pause is kept across restarts; `None` for the demo.
    pub(crate) store_file: Option<PathBuf>,
    /// How to start an engine of its own when a followed service goes away; `None` for the demo.
    pub(crate) own: Option<Own>,
    /// The app's own engine, once it runs, stopped at exit.
    pub(crate) engine: Mutex<Option<Engine>>,
    /// True once the app started its own engine because the service it followed went away.
    pub(crate) took_over: AtomicBool,
    /// What a click on notification number `id` does, and the dialog its actions answer.
    pub(crate) clicks: Mutex<HashMap<i32, (Click, Option<Offer>)>>,
    pub(crate) next_notification: Mutex<i32>,
    /// The menu, the count and the tooltip as last shown, so the tray only changes when they
    /// would: each new icon is a new file on Linux.
    pub(crate) menu: Mutex<Vec<menu::Entry>>,
    pub(crate) count: Mutex<usize>,
    pub(crate) tooltip: Mutex<String>,
}

impl Shell {
    /// Slate's store, where the notification pause is kept; `None` for the demo.
    pub fn store_file(&self) -> Option<&std::path::Path> {
        self.store_file.as_deref()
    }

    /// The engine the shell follows now.
    pub fn source(&self) -> Source {
        self.source.read().expect("lock poisoned").clone()
    }

    /// Where the page finds the API now.
    pub fn endpoint(&self) -> Endpoint {
        self.endpoint.lock().expect("lock poisoned").clone()
    }

    /// What the menu and the tooltip say about the engine, when there is something to say.
    pub(crate) fn engine_note(&self) -> Option<String> {
        self.source().note().or_else(|| {
            self.took_over
                .load(Ordering::SeqCst)
                .then(|| "The Slate service stopped: Slate runs its own engine".to_string())
        })
    }

    /// A new notification number; numbers are reused after `i32::MAX`, long after their
    /// notifications left the screen.
    pub fn next_notification_id(&self) -> i32 {
        let mut next = self.next_notification.lock().expect("lock poisoned");
        let id = *next;
        *next = next.wrapping_add(1).max(1);
        id
    }
}
