//! The tray app: the Tauri app with its plugins, the tray, and the engine it follows.
//!
//! [`run`] finds Slate's places and reads the config (a broken file gives the defaults), finds
//! the engine (`source`: this user's Slate service when it serves, else the app's own, `engine`,
//! or the demo's with `--demo`), registers the plugins (single-instance first, so a second launch
//! hands over to the first and exits before it would start an engine; notification; autostart),
//! manages the [`Shell`], creates the tray, registers the notification actions and starts
//! following the engine (`follow`). At exit it closes the window, stops the engine and removes
//! the demo's temporary HOME. [`Flags`] is the command line it understands.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, RwLock};

use slate::live;
use slate::model::ServerKind;
use slate::places::Places;
use slate::policy::notifications::Notifier;
use slate::settings::Settings;
use slate::sources::roots::Env;
use tauri::{AppHandle, Manager, RunEvent, Runtime};
use tauri_plugin_notification::NotificationExt;

use crate::engine::{self, Own};
use crate::follow::{self, Followed};
use crate::server::{self, Endpoint};
use crate::shell::Shell;
use crate::source::{self, Found, Source};
use crate::{answer, clicks, pause, tray, window};

/// The command line the app understands. Autostart launches it with `--hidden`, which is also the
/// default: the app starts in the tray.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Flags {
    /// Play the demo sessions in a temporary HOME instead of watching this machine.
    pub demo: bool,
    /// Show the window at start.
    pub show: bool,
    /// Be the window's process (see `window`), started by the tray.
    pub window: bool,
}

impl Flags {
    pub fn parse(args: impl IntoIterator<Item = String>) -> Flags {
        let mut flags = Flags::default();
        for arg in args {
            match arg.as_str() {
                "--demo" => flags.demo = true,
                "--show" => flags.show = true,
                "--hidden" => flags.show = false,
                window::FLAG => flags.window = true,
                other => tracing::warn!("ignoring the unknown argument {other:?}"),
            }
        }
        flags
    }
}

pub(crate) fn run(flags: Flags, context: tauri::Context<tauri::Wry>) -> anyhow::Result<()> {
    let env = Env::from_process();
    let places = Places::from_env(&env)?;
    let settings = Settings::load(&places.config_file());

    let app = tauri::Builder::default()
        // The single-instance plugin goes first, so a second launch shows this one's window
        // before anything else of the second process starts. Plugins start in `build`, so a
        // second launch exits there, before it would start an engine (which would write its
        // own view of every session into the store) or take the API's port.
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| {
            if let Err(err) = window::show(app) {
                tracing::warn!("cannot show the window for a second launch: {err}");
            }
        }))
        .plugin(tauri_plugin_notification::init())
        .plugin(
            tauri_plugin_autostart::Builder::new()
                .arg("--hidden")
                .build(),
        )
        // The tray has no window of its own: the window is a process it starts (see `window`),
        // which handles the page's commands.
        .manage(window::Launcher::default())
        .setup(move |app| {
            let handle = app.handle().clone();
            setup(&handle)?;
            if flags.show || flags.demo {
                window::show(&handle)?;
            }
            Ok(())
        })
        .build(context)?;

    // The demo must outlive the engine reading its files, so it is kept until the app exits.
    let demo = if flags.demo {
        Some(slate::demo::start(None, live::system_clock)?)
    } else {
        None
    };
    let listen = engine::listen_address(&settings.config);
    let token_file = places.token_file();
    let api_socket = places.api_socket(&env);
    let (source, endpoint, engine) = match &demo {
        // The demo plays its own made-up sessions, on the configured port when it is free.
        Some(demo) => engine::start(
            engine::demo_service(demo, settings.clone()),
            server::bind(listen)?,
            None,
            &token_file,
            None,
        )?,
        None => match source::find(listen, Some(&api_socket), &token_file) {
            Found::Ours(follower) => {
                let kind = follower.identity().kind.unwrap_or(ServerKind::Service);
                let token = slate::token::load_or_create_token(&token_file)?;
                let endpoint = Endpoint::followed(
                    follower.client().address(),
                    follower.client().socket(),
                    token,
                    kind,
                );
                (Source::Service(follower), endpoint, None)
            }
            Found::Free(listener) => engine::start(
                engine::engine_service(&env, &places, settings.clone()),
                listener,
                Some(&api_socket),
                &token_file,
                Some(slate::push::Setup::of(&places)),
            )?,
            Found::Elsewhere => engine::start(
                engine::engine_service(&env, &places, settings.clone()),
                server::free_port()?,
                Some(&api_socket),
                &token_file,
                Some(slate::push::Setup::of(&places)),
            )?,
        },
    };
    let store_file = demo.is_none().then(|| places.store_file());
    let pause = pause::at_start(
        store_file.as_deref(),
        &settings.config.notifications,
        live::system_clock(),
    );
    let own = demo.is_none().then(|| Own {
        env: env.clone(),
        places: places.clone(),
        listen,
    });
    let shell = Shell {
        source: RwLock::new(source),
        endpoint: Mutex::new(endpoint),
        pause: Mutex::new(pause),
        store_file,
        own,
        engine: Mutex::new(engine),
        took_over: AtomicBool::new(false),
        clicks: Mutex::new(HashMap::new()),
        next_notification: Mutex::new(1),
        menu: Mutex::new(Vec::new()),
        count: Mutex::new(0),
        tooltip: Mutex::new(String::new()),
    };
    app.manage(shell);

    let mut demo = demo;
    app.run(move |app, event| match event {
        // The tray has no window, but a platform may still ask to exit; only an explicit Quit
        // (which passes an exit code) ends the tray app.
        RunEvent::ExitRequested { api, code, .. } if code.is_none() => api.prevent_exit(),
        // `run` never returns (the event loop ends the process), so the engine is stopped and
        // the demo's temporary HOME removed here.
        RunEvent::Exit => {
            window::close(app);
            let shell = app.state::<Shell>();
            shell.source().stop();
            if let Some(engine) = shell.engine.lock().expect("lock poisoned").take() {
                engine.handle.shutdown();
                let _ = engine.thread.join();
            }
            drop(demo.take());
        }
        _ => {}
    });
    Ok(())
}

/// Creates the tray, wires notification clicks, and starts following the engine.
fn setup<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let shell = app.state::<Shell>();
    let (snapshot, followed) = Followed::of(&shell.source());
    let count = slate::policy::needs_you_count(&snapshot);
    let entries = tray::menu_entries(app, &shell, &snapshot);
    let tooltip = tray::tooltip(&shell, count);
    tray::create_tray(app, &entries, count, &tooltip, clicks::on_menu)?;
    *shell.menu.lock().expect("lock poisoned") = entries;
    *shell.count.lock().expect("lock poisoned") = count;
    *shell.tooltip.lock().expect("lock poisoned") = tooltip;

    // A permission notification's "Allow once", "Deny" and "Open", where the server shows them.
    answer::ask_notification_server();
    if let Err(err) = app
        .notification()
        .register_action_types(answer::permission_actions())
    {
        tracing::warn!("cannot register the notification actions: {err}");
    }
    let clicked = app.clone();
    let _ = app.notification().on_action(move |action| {
        let id = action.notification().map(|notification| notification.id());
        clicks::on_notification(&clicked, id, action.action_id());
    });

    let follower = app.clone();
    tauri::async_runtime::spawn(async move {
        follow::follow(follower, Notifier::seed(&snapshot), followed).await;
    });
    Ok(())
}
