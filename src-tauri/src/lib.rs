//! Slate's desktop shell: the tray, the notifications and the window around the engine.
//!
//! [`run`] wires everything together and owns nothing clever: it finds Slate's places, reads the
//! config (a broken file gives the defaults, and the error is shown in the window, the menu and
//! the tooltip), starts the engine's live service in-process (or the demo's, with `--demo`) with
//! the options `slate::settings` makes of the config, serves the loopback API from it, registers
//! the plugins, creates the tray, and follows the service's updates and settings on one task that
//! recounts the tray and asks the engine's notification policy what to show. A session's dialog
//! is answered from the tray's submenu and from a notification's actions through `answer`. With `--window` it
//! is instead the window's own process, which `window` starts while the window is open.
//! The policy lives in the engine crate (`slate::policy`: the Needs-you count, the menu model, the
//! notification decision); here are only the Tauri glue modules: `badge` draws the count, `tray`
//! builds the native menu, `notify` shows a notification, `commands` holds the actions the page,
//! the menu and a notification click share, `window` the window's lifecycle, `memory` the tray's
//! runtime and GTK choices, and `server` binds the API.
//!
//! It deliberately decides no session state (the engine does) and keeps no `AppHandle` in a
//! global: the shared state is a [`Shell`] managed by Tauri and passed where it is needed.

pub mod answer;
pub mod badge;
pub mod commands;
pub mod memory;
pub mod notify;
pub mod server;
pub mod tray;
pub mod window;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

use slate::live::{self, Service, Timing, Update};
use slate::model::{Session, Timestamp};
use slate::places::Places;
use slate::policy::menu::{self, MenuAction, MenuState, Pause};
use slate::policy::notifications::{self, Click, Input, Notifier, Offer};
use slate::settings::{self, Settings};
use slate::sources::roots::Env;
use tauri::{AppHandle, Manager, RunEvent, Runtime};
use tauri_plugin_autostart::ManagerExt;
use tauri_plugin_notification::NotificationExt;
use tokio::sync::broadcast::error::RecvError;

/// The state every part of the shell shares, managed by Tauri (`app.state::<Shell>()`).
pub struct Shell {
    pub handle: live::Handle,
    pub endpoint: server::Endpoint,
    pub pause: Mutex<Pause>,
    /// What a click on notification number `id` does, and the dialog its actions answer.
    clicks: Mutex<HashMap<i32, (Click, Option<Offer>)>>,
    next_notification: Mutex<i32>,
    /// The menu, the count and the tooltip as last shown, so the tray only changes when they
    /// would: each new icon is a new file on Linux.
    menu: Mutex<Vec<menu::Entry>>,
    count: Mutex<usize>,
    tooltip: Mutex<String>,
}

/// The command line the app understands. Autostart launches it with `--hidden`, which is also the
/// default: the app starts in the tray.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Flags {
    /// Play the demo sessions in a temporary HOME instead of watching this machine.
    demo: bool,
    /// Show the window at start.
    show: bool,
    /// Be the window's process (see `window`), started by the tray.
    window: bool,
}

impl Flags {
    fn parse(args: impl IntoIterator<Item = String>) -> Flags {
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

/// Runs the app until the user quits it.
pub fn run() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SLATE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,slate_app=info")),
        )
        .init();
    let flags = Flags::parse(std::env::args().skip(1));
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
                run_app(flags, context)
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

fn run_app(flags: Flags, context: tauri::Context<tauri::Wry>) -> anyhow::Result<()> {
    let env = Env::from_process();
    let places = Places::from_env(&env)?;
    let settings = Settings::load(&places.config_file());

    let app = tauri::Builder::default()
        // The single-instance plugin goes first, so a second launch shows this one's window
        // before anything else of the second process starts. Plugins start in `build`, so a
        // second launch exits there, before it would start an engine (which would write its
        // own view of every session into the store) or take the API's port.
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| {
            if let Err(err) = commands::show(app) {
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
                commands::show(&handle)?;
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
    let service = match &demo {
        Some(demo) => demo_service(demo, settings.clone()),
        None => engine_service(&env, &places, settings.clone()),
    };
    let (handle, engine_thread) = live::start(service);
    let endpoint = server::start(
        handle.clone(),
        listen_address(&settings.config),
        &places.token_file(),
    )?;
    let shell = Shell {
        handle: handle.clone(),
        endpoint,
        pause: Mutex::new(Pause::from_config(&settings.config.notifications)),
        clicks: Mutex::new(HashMap::new()),
        next_notification: Mutex::new(1),
        menu: Mutex::new(Vec::new()),
        count: Mutex::new(0),
        tooltip: Mutex::new(String::new()),
    };
    app.manage(shell);

    let mut demo = demo;
    let mut engine_thread = Some(engine_thread);
    app.run(move |app, event| match event {
        // The tray has no window, but a platform may still ask to exit; only an explicit Quit
        // (which passes an exit code) ends the tray app.
        RunEvent::ExitRequested { api, code, .. } if code.is_none() => api.prevent_exit(),
        // `run` never returns (the event loop ends the process), so the engine is stopped and
        // the demo's temporary HOME removed here.
        RunEvent::Exit => {
            window::close(app);
            handle.shutdown();
            if let Some(thread) = engine_thread.take() {
                let _ = thread.join();
            }
            drop(demo.take());
        }
        _ => {}
    });
    Ok(())
}

fn listen_address(config: &slate::config::Config) -> SocketAddr {
    // SLATE_LISTEN overrides the config, so tests and a second copy can run side by side.
    std::env::var("SLATE_LISTEN")
        .ok()
        .and_then(|text| text.parse().ok())
        .filter(|address: &SocketAddr| address.ip().is_loopback())
        .unwrap_or(config.server.listen)
}

/// The live service that watches this machine: the options the config makes (the tracker's
/// policy, `session_idle_minutes` included), the store, and the config file to follow.
fn engine_service(env: &Env, places: &Places, settings: Settings) -> Service {
    Service {
        options: settings::engine_options(env.clone(), &settings.config),
        timing: Timing::default(),
        store: open_store(&places.store_file()),
        clock: live::system_clock,
        settings,
        remotes: Some(slate::remote::LinkOptions::default()),
    }
}

/// The live service that plays the demo in its temporary HOME, with no store.
fn demo_service(demo: &slate::demo::Demo, settings: Settings) -> Service {
    let mut options = settings::engine_options(demo.env.clone(), &settings.config);
    options.processes = demo.processes.clone();
    // The demo changes the agents' registries every few seconds; a real registry only matters
    // at the next process scan, which the demo brings closer.
    let timing = Timing {
        process_scan: Duration::from_secs(2),
        ..Timing::default()
    };
    Service {
        options,
        timing,
        store: None,
        clock: live::system_clock,
        settings,
        // The demo shows its own made-up sessions only.
        remotes: None,
    }
}

fn open_store(path: &std::path::Path) -> Option<slate::store::Store> {
    match slate::store::open(path).and_then(|store| store.migrate().map(|_| store)) {
        Ok(store) => Some(store),
        Err(err) => {
            tracing::warn!("running without a store: {err}");
            None
        }
    }
}

/// Creates the tray, wires notification clicks, and starts following the engine.
fn setup<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let shell = app.state::<Shell>();
    let (snapshot, updates) = shell.handle.subscribe();
    let count = slate::policy::needs_you_count(&snapshot);
    let entries = menu_entries(app, &shell, &snapshot);
    let tooltip = tooltip(&shell, count);
    tray::create_tray(app, &entries, count, &tooltip, on_menu)?;
    *shell.menu.lock().expect("lock poisoned") = entries;
    *shell.count.lock().expect("lock poisoned") = count;
    *shell.tooltip.lock().expect("lock poisoned") = tooltip;

    // A permission notification's "Allow once", "Deny" and "Open", where the server shows them.
    answer::ask_notification_server();
    if let Err(err) = app
        .notification()
        .register_action_types(vec![answer::permission_actions()])
    {
        tracing::warn!("cannot register the notification actions: {err}");
    }
    let clicked = app.clone();
    let _ = app.notification().on_action(move |action| {
        let Some(id) = action.notification().map(|notification| notification.id()) else {
            return;
        };
        let shell = clicked.state::<Shell>();
        let known = shell
            .clicks
            .lock()
            .expect("lock poisoned")
            .get(&id)
            .cloned();
        tracing::info!(
            id,
            action = action.action_id(),
            ?known,
            "notification clicked"
        );
        let (click, offer) = match known {
            Some((click, offer)) => (Some(click), offer),
            None => (None, None),
        };
        let answering = match action.action_id() {
            answer::ALLOW => Some(slate::agents::keys::Action::Approve),
            answer::DENY => Some(slate::agents::keys::Action::Deny),
            _ => None,
        };
        if let (Some(action), Some(offer)) = (answering, offer) {
            answer_dialog(
                &clicked,
                &shell,
                answer::Answer {
                    key: offer.key,
                    action,
                    option: None,
                    fingerprint: offer.fingerprint,
                    surface: slate::answers::Surface::Notification,
                    label: offer.label,
                },
            );
            return;
        }
        match click {
            Some(Click::Focus(key)) => commands::focus_key(&shell, &key),
            Some(Click::OpenWindow) => {
                if let Err(err) = commands::show(&clicked) {
                    tracing::warn!("{err}");
                }
            }
            None => {}
        }
    });

    let follower = app.clone();
    let settings = shell.handle.watch_settings();
    let remotes = shell.handle.watch_remotes();
    tauri::async_runtime::spawn(async move {
        follow(
            follower,
            Notifier::seed(&snapshot),
            updates,
            settings,
            remotes,
        )
        .await;
    });
    Ok(())
}

/// What the tray does when the window process asks (see `window::Request`).
pub fn on_window_request<R: Runtime>(app: &AppHandle<R>, request: window::Request) {
    tracing::info!(?request, "the window asked");
    match request {
        window::Request::Pause(pause) => commands::set_pause(app, &app.state::<Shell>(), pause),
        window::Request::Quit => app.exit(0),
        window::Request::Refresh => refresh_tray(app),
    }
}

/// Answers a session's dialog through the API of the Slate that serves, off this thread; the
/// outcome comes as a notification of its own.
fn answer_dialog<R: Runtime>(app: &AppHandle<R>, shell: &Shell, answer: answer::Answer) {
    tracing::info!(session = %answer.key.id, action = %answer.action.as_str(), surface = %answer.surface.as_str(), "answering");
    let id = next_notification_id(shell);
    answer::answer(app, shell.endpoint.clone(), answer, id);
}

/// A new notification number; numbers are reused after `i32::MAX`, long after their
/// notifications left the screen.
fn next_notification_id(shell: &Shell) -> i32 {
    let mut next = shell.next_notification.lock().expect("lock poisoned");
    let id = *next;
    *next = next.wrapping_add(1).max(1);
    id
}

fn on_menu<R: Runtime>(app: &AppHandle<R>, action: MenuAction) {
    tracing::info!(?action, "menu clicked");
    let shell = app.state::<Shell>();
    let result = match action {
        MenuAction::Focus(key) => {
            commands::focus_key(&shell, &key);
            Ok(())
        }
        MenuAction::Answer(chosen) => {
            let label = shell
                .handle
                .live_sessions()
                .iter()
                .find(|session| session.key() == chosen.key)
                .map(notifications::label)
                .unwrap_or_else(|| chosen.key.id.to_string());
            answer_dialog(
                app,
                &shell,
                answer::Answer {
                    key: chosen.key,
                    action: chosen.action,
                    option: chosen.option,
                    fingerprint: chosen.fingerprint,
                    surface: slate::answers::Surface::Tray,
                    label,
                },
            );
            Ok(())
        }
        MenuAction::OpenWindow => commands::show(app),
        MenuAction::PauseForAnHour => {
            let until = live::system_clock().plus(Duration::from_secs(60 * 60));
            commands::set_pause(app, &shell, Pause::Until(until));
            Ok(())
        }
        MenuAction::PauseUntilResumed => {
            commands::set_pause(app, &shell, Pause::UntilResumed);
            Ok(())
        }
        MenuAction::Resume => {
            commands::set_pause(app, &shell, Pause::Off);
            Ok(())
        }
        MenuAction::ToggleAutostart => {
            let enabled = app.autolaunch().is_enabled().unwrap_or(false);
            commands::set_autostart_to(app, !enabled).map(|_| ())
        }
        MenuAction::Quit => {
            app.exit(0);
            Ok(())
        }
    };
    if let Err(err) = result {
        tracing::warn!("{err}");
    }
}

/// What woke the follower.
enum Woke {
    Update(Result<Update, RecvError>),
    /// The config file was applied, or broke: the pause may follow it, and the tray says it.
    Settings,
    /// A remote machine's link came up or went down: the menu names the unreachable ones.
    Remotes,
    /// The policy's deadline or the end of a timed pause.
    Deadline,
}

/// Follows the engine: every update recounts the tray and goes through the notification policy;
/// the policy's deadline wakes the loop when a burst window closes, and the end of a timed pause
/// wakes it to update the menu. A change of the settings updates the pause when the config's
/// `[notifications]` changed, and the tray's note of a config error; a change of a remote's link
/// updates the menu's note of unreachable machines.
async fn follow<R: Runtime>(
    app: AppHandle<R>,
    mut notifier: Notifier,
    mut updates: tokio::sync::broadcast::Receiver<Update>,
    mut settings: tokio::sync::watch::Receiver<Settings>,
    mut remotes: tokio::sync::watch::Receiver<Vec<slate::remote::Report>>,
) {
    let mut deadline: Option<Timestamp> = None;
    let mut told = settings.borrow_and_update().config.notifications.clone();
    loop {
        let wait = deadline.map(|at| {
            Duration::from_millis((at.millis() - live::system_clock().millis()).max(0) as u64)
        });
        let woke = tokio::select! {
            received = updates.recv() => Woke::Update(received),
            Ok(()) = settings.changed() => Woke::Settings,
            Ok(()) = remotes.changed() => Woke::Remotes,
            () = sleep_or_never(wait) => Woke::Deadline,
        };
        let received = match woke {
            Woke::Update(received) => Some(received),
            Woke::Deadline => None,
            Woke::Remotes => {
                remotes.borrow_and_update();
                refresh_tray(&app);
                continue;
            }
            Woke::Settings => {
                let wanted = settings.borrow_and_update().config.notifications.clone();
                if wanted != told {
                    let shell = app.state::<Shell>();
                    commands::set_pause(&app, &shell, Pause::from_config(&wanted));
                    told = wanted;
                }
                refresh_tray(&app);
                continue;
            }
        };
        let shell = app.state::<Shell>();
        let now = live::system_clock();
        let paused = shell.pause.lock().expect("lock poisoned").is_paused(now);
        let decision = match received {
            Some(Ok(update)) => {
                refresh_tray(&app);
                notifications::decide(&mut notifier, update.as_notification(), now, paused)
            }
            Some(Err(RecvError::Lagged(missed))) => {
                // Too far behind to know which changes were flips: start over from the current
                // list, as at start-up, rather than guess.
                tracing::warn!(missed, "fell behind the engine's updates");
                notifier = Notifier::seed(&shell.handle.live_sessions());
                refresh_tray(&app);
                notifications::Decision::default()
            }
            Some(Err(RecvError::Closed)) => return,
            None => {
                // A timed pause may have just run out; the menu should stop offering Resume.
                refresh_tray(&app);
                notifications::decide(&mut notifier, Input::Tick, now, paused)
            }
        };
        // Wake for the burst window, and for the end of a timed pause.
        let pause_ends = match *shell.pause.lock().expect("lock poisoned") {
            Pause::Until(until) if until > now => Some(until),
            _ => None,
        };
        deadline = [decision.next_deadline, pause_ends]
            .into_iter()
            .flatten()
            .min();
        for plan in decision.plans {
            let id = next_notification_id(&shell);
            {
                let mut clicks = shell.clicks.lock().expect("lock poisoned");
                // Old notifications are long gone from the screen; keep the latest hundred.
                clicks.retain(|known, _| id.wrapping_sub(*known) < 100);
                clicks.insert(id, (plan.click.clone(), plan.offer.clone()));
            }
            tracing::info!(id, title = %plan.title, "notifying");
            if let Err(err) = notify::show(&app, id, &plan) {
                tracing::warn!("cannot show a notification: {err}");
            }
        }
    }
}

/// Recounts the tray and rebuilds its menu when what it lists changed.
///
/// The work is queued on the main thread, where Tauri builds menus anyway: every tray change then
/// happens on one thread in order, and no lock below is ever held while waiting for that thread.
pub fn refresh_tray<R: Runtime>(app: &AppHandle<R>) {
    let queued = app.clone();
    if let Err(err) = app.run_on_main_thread(move || refresh_tray_now(&queued)) {
        tracing::warn!("cannot update the tray: {err}");
    }
}

fn refresh_tray_now<R: Runtime>(app: &AppHandle<R>) {
    let shell = app.state::<Shell>();
    let live = shell.handle.live_sessions();
    let Some(tray) = app.tray_by_id(tray::TRAY_ID) else {
        return;
    };
    let count = slate::policy::needs_you_count(&live);
    let count_changed =
        std::mem::replace(&mut *shell.count.lock().expect("lock poisoned"), count) != count;
    if count_changed {
        tracing::info!(count, "needs-you count changed");
        if let Err(err) = tray::set_count(&tray, count) {
            tracing::warn!("cannot update the tray icon: {err}");
        }
    }
    let tooltip = tooltip(&shell, count);
    let tooltip_changed = *shell.tooltip.lock().expect("lock poisoned") != tooltip;
    if tooltip_changed {
        if let Err(err) = tray::set_tooltip(&tray, &tooltip) {
            tracing::warn!("cannot update the tray tooltip: {err}");
        }
        *shell.tooltip.lock().expect("lock poisoned") = tooltip;
    }
    let entries = menu_entries(app, &shell, &live);
    let menu_changed = *shell.menu.lock().expect("lock poisoned") != entries;
    if menu_changed {
        if let Err(err) = tray::set_menu(&tray, &entries) {
            tracing::warn!("cannot rebuild the tray menu: {err}");
        }
        *shell.menu.lock().expect("lock poisoned") = entries;
    }
}

fn menu_entries<R: Runtime>(
    app: &AppHandle<R>,
    shell: &Shell,
    live: &[Session],
) -> Vec<menu::Entry> {
    let pause = *shell.pause.lock().expect("lock poisoned");
    let autostart = app.autolaunch().is_enabled().unwrap_or(false);
    let settings = shell.handle.settings();
    let remotes = shell.handle.remotes();
    let state = MenuState {
        pause,
        autostart,
        config_error: settings.error.as_deref(),
        remotes: &remotes,
    };
    menu::menu_model(live, state, live::system_clock())
}

fn tooltip(shell: &Shell, count: usize) -> String {
    menu::tooltip(count, shell.handle.settings().error.as_deref())
}

/// Sleeps for `wait`, or for ever when there is nothing to wait for.
async fn sleep_or_never(wait: Option<Duration>) {
    match wait {
        Some(wait) => tokio::time::sleep(wait).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The app once ran its engine on the default policy whatever the config said. Its engine now
    /// takes `[project-policy] session_idle_minutes` from the file (and follows the file); a file
    /// that does not parse gives the defaults and an error that names the file and the key.
    #[test]
    fn the_app_engine_honours_session_idle_minutes() {
        let temp = tempfile::tempdir().unwrap();
        let env = Env {
            home: Some(temp.path().to_path_buf()),
            xdg_config_home: Some(temp.path().join("config")),
            xdg_data_home: Some(temp.path().join("data")),
            ..Env::default()
        };
        let places = Places::from_env(&env).unwrap();
        std::fs::create_dir_all(&places.config_dir).unwrap();
        std::fs::write(
            places.config_file(),
            "[project-policy]\nsession_idle_minutes = 7\n",
        )
        .unwrap();
        let service = engine_service(&env, &places, Settings::load(&places.config_file()));
        assert_eq!(
            service.options.policy.session_idle,
            Duration::from_secs(7 * 60)
        );
        assert_eq!(service.settings.file, Some(places.config_file()));
        assert_eq!(service.settings.error, None);
        assert!(
            service.store.is_some(),
            "the store opens in the data folder"
        );
        assert!(places.store_file().exists());

        std::fs::write(
            places.config_file(),
            "[project-policy]\nsesion_idle_minutes = 7\n",
        )
        .unwrap();
        let service = engine_service(&env, &places, Settings::load(&places.config_file()));
        assert_eq!(
            service.options.policy.session_idle,
            Duration::from_secs(20 * 60),
            "a broken file runs on the defaults"
        );
        let error = service.settings.error.expect("the error is kept to show");
        assert!(error.contains("sesion_idle_minutes"), "{error}");
        assert!(
            error.contains(&places.config_file().display().to_string()),
            "{error}"
        );
    }

    #[test]
    fn the_demo_engine_takes_the_same_options() {
        let settings = Settings::new(
            None,
            slate::config::Config::parse("[project-policy]\nsession_idle_minutes = 3\n").unwrap(),
        );
        let temp = tempfile::tempdir().unwrap();
        let demo = slate::demo::start(Some(temp.path()), live::system_clock).unwrap();
        let service = demo_service(&demo, settings);
        assert_eq!(
            service.options.policy.session_idle,
            Duration::from_secs(3 * 60)
        );
        assert!(service.store.is_none());
    }
}
