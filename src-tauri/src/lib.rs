//! Slate's desktop shell: the tray, the notifications and the window around the engine.
//!
//! [`run`] starts the app one of two ways: as the tray app (`app`), or, with `--window`, as the
//! window's own process (`window`), which the tray starts while the window is open. The tray app
//! finds Slate's places, reads the config (a broken file gives the defaults, and the error is
//! shown in the window, the menu and the tooltip), and finds its engine (`source`): when this
//! user's Slate service already serves on the configured address the app follows it and starts
//! no engine of its own ("Using the Slate service"); otherwise it starts the engine's live service
//! in-process (or the demo's, with `--demo`) with the options `slate::settings` makes of the
//! config and serves the loopback API from it (`engine`). It registers the plugins, creates the
//! tray, and follows the engine's updates and settings on one task (`follow`) that recounts the
//! tray and asks the engine's notification policy what to show, the same way whichever engine it
//! follows. When a followed service goes away and does not come back within [`SERVICE_GRACE`],
//! the app starts an engine of its own, and what changed meanwhile is told then. A session's
//! dialog, on this machine or another, is answered from the tray's submenu and from a
//! notification's actions (`clicks`, then `answer`).
//!
//! The policy lives in the engine crate (`slate::policy`: the Needs-you count, the menu model, the
//! notification decision); here are only the Tauri glue modules:
//! - `app` builds the Tauri app, its plugins and the tray, and stops the engine at exit;
//! - `shell` holds the [`Shell`], the state every part shares;
//! - `engine` makes and starts the app's own engine;
//! - `follow` follows the engine: the tray's recount, the notification decisions, the service
//!   going away;
//! - `tray` builds the native menu and redraws it, `badge` draws the count;
//! - `clicks` turns a menu click or a notification's action into what it does;
//! - `notify` shows a notification, `answer` carries out an answer to a dialog;
//! - `commands` holds the actions the page, the menu and a notification click share;
//! - `window` the window's lifecycle, and `page` what the window's process and the commands it
//!   runs share (the line protocol's requests, the window's state);
//! - `memory` the tray's runtime and GTK choices, `server` binds the API, `source` chooses and
//!   hands out the engine, and `pause` keeps the notification pause across restarts.
//!
//! It deliberately decides no session state (the engine does) and keeps no `AppHandle` in a
//! global: the shared state is a [`Shell`] managed by Tauri and passed where it is needed.

pub mod answer;
pub mod app;
pub mod badge;
pub mod clicks;
pub mod commands;
pub mod engine;
#[cfg(test)]
mod fixtures;
pub mod follow;
pub mod memory;
pub mod notify;
pub mod page;
pub mod pause;
pub mod server;
pub mod shell;
pub mod source;
pub mod tray;
pub mod window;

pub use follow::SERVICE_GRACE;
pub use shell::Shell;

/// Runs the app until the user quits it.
pub fn run() {
    slate::logging::init("warn,slate_app=info");
    let flags = app::Flags::parse(std::env::args().skip(1));
    if !flags.window {
        // Before GTK and before any other thread starts.
        memory::turn_gl_off();
    }
    let context = tauri::generate_context!();
    let result = memory::start_runtime()
        .map_err(anyhow::Error::from)
        .and_then(|runtime| {
            let result = if flags.window {
                window::run(context)
            } else {
                app::run(flags, context)
            };
            // The runtime lives until the app ends; `run` only returns on an error.
            drop(runtime);
            result
        });
    if let Err(err) = result {
        eprintln!("slate-app: {err:#}");
        std::process::exit(1);
    }
}
