//! Slate's desktop shell: the tray, the notifications and the window around the engine.
//!
//! [`run`] wires everything together and owns nothing clever: it finds Slate's places, reads the
//! config (a broken file gives the defaults, and the error is shown in the window, the menu and
//! the tooltip), and finds its engine (`source`): when this user's Slate service already serves
//! on the configured address the app follows it and starts no engine of its own ("Using the Slate
//! service"); otherwise it starts the engine's live service in-process (or the demo's, with
//! `--demo`) with the options `slate::settings` makes of the config and serves the loopback API
//! from it. It registers the plugins, creates the tray, and follows the engine's updates and
//! settings on one task that recounts the tray and asks the engine's notification policy what to
//! show, the same way whichever engine it follows. When a followed service goes away and does not
//! come back within [`SERVICE_GRACE`], the app starts an engine of its own, and what changed
//! meanwhile is told then. With `--window` it is instead the window's own process, which `window`
//! starts while the window is open. A session's dialog is answered from the tray's submenu and
//! from a notification's actions through `answer`.
//! The policy lives in the engine crate (`slate::policy`: the Needs-you count, the menu model, the
//! notification decision); here are only the Tauri glue modules: `badge` draws the count, `tray`
//! builds the native menu, `notify` shows a notification, `commands` holds the actions the page,
//! the menu and a notification click share, `window` the window's lifecycle, `memory` the tray's
//! runtime and GTK choices, `server` binds the API, `source` chooses and hands out the engine,
//! and `pause` keeps the notification pause across restarts.
//!
//! It deliberately decides no session state (the engine does) and keeps no `AppHandle` in a
//! global: the shared state is a [`Shell`] managed by Tauri and passed where it is needed.

pub mod answer;
pub mod badge;
pub mod commands;
pub mod memory;
pub mod notify;
pub mod pause;
pub mod server;
pub mod source;
pub mod tray;
pub mod window;

use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::Duration;

use slate::live::{self, Service, Timing, Update};
use slate::mirror::follower::Link;
use slate::model::{ServerKind, Session, Timestamp};
use slate::places::Places;
use slate::policy::menu::{self, MenuAction, MenuState, Pause};
use slate::policy::notifications::{self, Click, Decision, Input, Notifier, Offer};
use slate::remote::Report;
use slate::settings::{self, Settings};
use slate::sources::roots::Env;
use tauri::{AppHandle, Manager, RunEvent, Runtime};
use tauri_plugin_autostart::ManagerExt;
use tauri_plugin_notification::NotificationExt;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, watch};

use server::Endpoint;
use source::{Found, Source};

/// How long a followed Slate service may be away before the app starts an engine of its own.
/// It is longer than the user unit's restart delay (5 s), so a service that restarts (after a
/// crash, an upgrade, `systemctl --user restart slate`) is simply followed again; one that was
/// stopped leaves the app watching on its own, with the changes made meanwhile told then.
pub const SERVICE_GRACE: Duration = Duration::from_secs(10);

/// The state every part of the shell shares, managed by Tauri (`app.state::<Shell>()`).
pub struct Shell {
    /// The engine the shell follows: its own, or this user's Slate service.
    source: RwLock<Source>,
    /// Where the page finds the API, and which Slate serves it.
    endpoint: Mutex<Endpoint>,
    pub pause: Mutex<Pause>,
    /// Slate's store, where the pause is kept across restarts; `None` for the demo.
    store_file: Option<PathBuf>,
    /// How to start an engine of its own when a followed service goes away; `None` for the demo.
    own: Option<Own>,
    /// The app's own engine, once it runs, stopped at exit.
    engine: Mutex<Option<Engine>>,
    /// True once the app started its own engine because the service it followed went away.
    took_over: AtomicBool,
    /// What a click on notification number `id` does, and the dialog its actions answer.
    clicks: Mutex<HashMap<i32, (Click, Option<Offer>)>>,
    next_notification: Mutex<i32>,
    /// The menu, the count and the tooltip as last shown, so the tray only changes when they
    /// would: each new icon is a new file on Linux.
    menu: Mutex<Vec<menu::Entry>>,
    count: Mutex<usize>,
    tooltip: Mutex<String>,
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
    fn engine_note(&self) -> Option<String> {
        self.source().note().or_else(|| {
            self.took_over
                .load(Ordering::SeqCst)
                .then(|| "The Slate service stopped: Slate runs its own engine".to_string())
        })
    }
}

/// What the app needs to start an engine of its own later.
struct Own {
    env: Env,
    places: Places,
    listen: SocketAddr,
}

/// The app's own engine: its live service and the thread it runs on.
struct Engine {
    handle: live::Handle,
    thread: std::thread::JoinHandle<()>,
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
    let listen = listen_address(&settings.config);
    let token_file = places.token_file();
    let (source, endpoint, engine) = match &demo {
        // The demo plays its own made-up sessions, on the configured port when it is free.
        Some(demo) => start_engine(
            demo_service(demo, settings.clone()),
            server::bind(listen)?,
            &token_file,
        )?,
        None => match source::find(listen, &token_file) {
            Found::Ours(follower) => {
                let kind = follower.identity().kind.unwrap_or(ServerKind::Service);
                let token = slate::token::load_or_create_token(&token_file)?;
                let endpoint = Endpoint::followed(follower.client().address(), token, kind);
                (Source::Service(follower), endpoint, None)
            }
            Found::Free(listener) => start_engine(
                engine_service(&env, &places, settings.clone()),
                listener,
                &token_file,
            )?,
            Found::Elsewhere => start_engine(
                engine_service(&env, &places, settings.clone()),
                server::free_port()?,
                &token_file,
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

/// Starts `service` in-process and serves its API on `listener`.
fn start_engine(
    service: Service,
    listener: TcpListener,
    token_file: &std::path::Path,
) -> anyhow::Result<(Source, Endpoint, Option<Engine>)> {
    let (handle, thread) = live::start(service);
    let endpoint = server::start(handle.clone(), listener, token_file)?;
    Ok((
        Source::InProcess(handle.clone()),
        endpoint,
        Some(Engine { handle, thread }),
    ))
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
    let (snapshot, followed) = Followed::of(&shell.source());
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
        .register_action_types(answer::permission_actions())
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
            // Only where the notification offered it: it showed the whole command.
            answer::ALLOW if offer.as_ref().is_some_and(|offer| offer.allow) => {
                Some(slate::agents::keys::Action::Approve)
            }
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
    tauri::async_runtime::spawn(async move {
        follow(follower, Notifier::seed(&snapshot), followed).await;
    });
    Ok(())
}

/// What the window process asks (see `window::Request`).
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
    answer::answer(app, shell.endpoint(), answer, id);
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
                .source()
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

/// The receivers `follow` reads, taken from one `Source`: the same for the engine in-process and
/// for a followed service (which also has its link).
struct Followed {
    updates: broadcast::Receiver<Update>,
    settings: watch::Receiver<Settings>,
    remotes: watch::Receiver<Vec<Report>>,
    link: Option<watch::Receiver<Link>>,
}

impl Followed {
    /// The live list of `source` and the receivers of everything after it.
    fn of(source: &Source) -> (Vec<Session>, Followed) {
        let (snapshot, updates) = source.subscribe();
        let followed = Followed {
            updates,
            settings: source.watch_settings(),
            remotes: source.watch_remotes(),
            link: source.watch_link(),
        };
        (snapshot, followed)
    }
}

/// What woke the follower.
enum Woke {
    Update(Result<Update, RecvError>),
    /// The config file was applied, or broke: the pause may follow it, and the tray says it.
    Settings,
    /// A remote machine's link came up or went down: the menu names the unreachable ones.
    Remotes,
    /// The followed service stopped answering, or answers again.
    Link,
    /// The policy's deadline, the end of a timed pause, or the end of the wait for a service that
    /// went away.
    Deadline,
}

/// Follows the engine: every update recounts the tray and goes through the notification policy;
/// the policy's deadline wakes the loop when a burst window closes, and the end of a timed pause
/// wakes it to update the menu. A change of the settings updates the pause when the config's
/// `[notifications]` changed, and the tray's note of a config error; a change of a remote's link
/// updates the menu's note of unreachable machines. When a followed service stops answering, the
/// menu says so; when it is still away after [`SERVICE_GRACE`], the app looks for its engine
/// again (`replace_source`) and follows what it finds from its first list, compared with the last
/// one the service sent, so a session that turned to Needs you meanwhile is notified then.
async fn follow<R: Runtime>(app: AppHandle<R>, mut notifier: Notifier, mut followed: Followed) {
    let mut deadline: Option<Timestamp> = None;
    let mut away_until: Option<Timestamp> = None;
    let mut told = followed
        .settings
        .borrow_and_update()
        .config
        .notifications
        .clone();
    loop {
        let wait = [deadline, away_until]
            .into_iter()
            .flatten()
            .min()
            .map(|at| {
                Duration::from_millis((at.millis() - live::system_clock().millis()).max(0) as u64)
            });
        let woke = tokio::select! {
            received = followed.updates.recv() => Woke::Update(received),
            Ok(()) = followed.settings.changed() => Woke::Settings,
            Ok(()) = followed.remotes.changed() => Woke::Remotes,
            () = link_changed(&mut followed.link) => Woke::Link,
            () = sleep_or_never(wait) => Woke::Deadline,
        };
        let shell = app.state::<Shell>();
        let now = live::system_clock();
        let paused = shell.pause.lock().expect("lock poisoned").is_paused(now);
        let decision = match woke {
            Woke::Remotes => {
                followed.remotes.borrow_and_update();
                refresh_tray(&app);
                continue;
            }
            Woke::Settings => {
                let wanted = followed
                    .settings
                    .borrow_and_update()
                    .config
                    .notifications
                    .clone();
                if wanted != told {
                    commands::set_pause(&app, &shell, Pause::from_config(&wanted));
                    told = wanted;
                }
                refresh_tray(&app);
                continue;
            }
            Woke::Link => {
                let link = followed
                    .link
                    .as_mut()
                    .map(|link| link.borrow_and_update().clone());
                away_until = match link {
                    Some(Link::Down { since, .. }) => Some(since.plus(SERVICE_GRACE)),
                    _ => None,
                };
                refresh_tray(&app);
                continue;
            }
            Woke::Update(Ok(update)) => {
                refresh_tray(&app);
                notifications::decide(&mut notifier, update.as_notification(), now, paused)
            }
            Woke::Update(Err(RecvError::Lagged(missed))) => {
                // Too far behind to know which changes were flips: start over from the current
                // list, as at start-up, rather than guess.
                tracing::warn!(missed, "fell behind the engine's updates");
                notifier = Notifier::seed(&shell.source().live_sessions());
                refresh_tray(&app);
                Decision::default()
            }
            Woke::Update(Err(RecvError::Closed)) => return,
            Woke::Deadline => {
                // A timed pause may have just run out; the menu should stop offering Resume.
                refresh_tray(&app);
                let mut decision = notifications::decide(&mut notifier, Input::Tick, now, paused);
                if away_until.is_some_and(|at| at <= now) {
                    away_until = None;
                    let before = shell.source().live_sessions();
                    let replacing = app.clone();
                    let replaced =
                        tauri::async_runtime::spawn_blocking(move || replace_source(&replacing))
                            .await;
                    match replaced {
                        Ok(Ok(source)) => {
                            let (snapshot, fresh) = Followed::of(&source);
                            followed = fresh;
                            told = followed
                                .settings
                                .borrow_and_update()
                                .config
                                .notifications
                                .clone();
                            let now = live::system_clock();
                            for caught in catch_up(&mut notifier, &before, &snapshot, now, paused) {
                                merge(&mut decision, caught);
                            }
                            refresh_tray(&app);
                        }
                        Ok(Err(err)) => {
                            tracing::warn!("cannot start an engine of its own: {err:#}");
                            away_until = Some(now.plus(SERVICE_GRACE));
                        }
                        Err(err) => tracing::warn!("{err}"),
                    }
                }
                decision
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

/// The decisions for the changes between `before` (the last list of the engine that was
/// followed) and `after` (the first list of the one that replaces it), as if they had arrived as
/// updates: a session that left is removed, and every session of the new list is told as
/// changed, which the policy notifies only when it turned from Working to Needs you.
fn catch_up(
    notifier: &mut Notifier,
    before: &[Session],
    after: &[Session],
    now: Timestamp,
    paused: bool,
) -> Vec<Decision> {
    let kept: std::collections::HashSet<_> = after.iter().map(Session::key).collect();
    let removed = before
        .iter()
        .map(Session::key)
        .filter(|key| !kept.contains(key))
        .map(|key| Update::removed(&key));
    let changed = after.iter().map(|session| Update::Session {
        session: Box::new(session.clone()),
    });
    removed
        .chain(changed)
        .map(|update| notifications::decide(notifier, update.as_notification(), now, paused))
        .collect()
}

/// Adds `more`'s notifications to `into`, which wakes at the earlier deadline.
fn merge(into: &mut Decision, more: Decision) {
    into.plans.extend(more.plans);
    into.next_deadline = [into.next_deadline, more.next_deadline]
        .into_iter()
        .flatten()
        .min();
}

/// Finds the engine again after the followed service stayed away: this user's Slate answers on
/// the address again (followed anew), or the address is free and the app's own engine takes it
/// (or, when something else holds it, a free port). The window, if open, is pointed at the new
/// API. Runs off the async runtime: binding and asking may wait.
fn replace_source<R: Runtime>(app: &AppHandle<R>) -> anyhow::Result<Source> {
    let shell = app.state::<Shell>();
    let own = shell
        .own
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("the demo follows no service"))?;
    // Stop following first: the old follower retries every second, and would otherwise find the
    // engine started below on the same port and follow the app's own API.
    shell.source().stop();
    let token_file = own.places.token_file();
    let (source, endpoint, engine) = match source::find(own.listen, &token_file) {
        Found::Ours(follower) => {
            let kind = follower.identity().kind.unwrap_or(ServerKind::Service);
            let token = slate::token::load_or_create_token(&token_file)?;
            let endpoint = Endpoint::followed(follower.client().address(), token, kind);
            (Source::Service(follower), endpoint, None)
        }
        found => {
            let listener = match found {
                Found::Free(listener) => listener,
                _ => server::free_port()?,
            };
            let settings = Settings::load(&own.places.config_file());
            let service = engine_service(&own.env, &own.places, settings);
            tracing::info!("the Slate service is gone: starting an engine of its own");
            start_engine(service, listener, &token_file)?
        }
    };
    *shell.source.write().expect("lock poisoned") = source.clone();
    *shell.endpoint.lock().expect("lock poisoned") = endpoint.clone();
    if let Some(engine) = engine {
        *shell.engine.lock().expect("lock poisoned") = Some(engine);
        shell.took_over.store(true, Ordering::SeqCst);
    }
    window::retarget(app, &endpoint);
    Ok(source)
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
    let live = shell.source().live_sessions();
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

/// The engine's menu model, with the note about the engine (the service used, or not
/// answering) above Open Slate, beside the notes about remote machines.
fn menu_entries<R: Runtime>(
    app: &AppHandle<R>,
    shell: &Shell,
    live: &[Session],
) -> Vec<menu::Entry> {
    let pause = *shell.pause.lock().expect("lock poisoned");
    let autostart = app.autolaunch().is_enabled().unwrap_or(false);
    let source = shell.source();
    let settings = source.settings();
    let remotes = source.remotes();
    let state = MenuState {
        pause,
        autostart,
        config_error: settings.error.as_deref(),
        remotes: &remotes,
    };
    let entries = menu::menu_model(live, state, live::system_clock());
    with_note(entries, shell.engine_note())
}

/// `entries` with `note` just before the separator above Open Slate.
fn with_note(mut entries: Vec<menu::Entry>, note: Option<String>) -> Vec<menu::Entry> {
    let Some(note) = note else {
        return entries;
    };
    let open = entries
        .iter()
        .position(|entry| {
            matches!(
                entry,
                menu::Entry::Item {
                    action: MenuAction::OpenWindow,
                    ..
                }
            )
        })
        .unwrap_or(entries.len());
    let at = match open.checked_sub(1).map(|before| &entries[before]) {
        Some(menu::Entry::Separator) => open - 1,
        _ => open,
    };
    entries.insert(at, menu::Entry::Note(note));
    entries
}

fn tooltip(shell: &Shell, count: usize) -> String {
    let tooltip = menu::tooltip(count, shell.source().settings().error.as_deref());
    match shell.engine_note() {
        Some(note) => format!("{tooltip}\n{note}"),
        None => tooltip,
    }
}

/// Waits for the followed service's link to change; for ever when there is none (the engine
/// in-process), or once the follower is gone.
async fn link_changed(link: &mut Option<watch::Receiver<Link>>) {
    match link {
        Some(link) => {
            if link.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending().await,
    }
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

    fn session(id: &str, status: &str) -> Session {
        serde_json::from_value(serde_json::json!({
            "agent": "claude-code",
            "id": id,
            "folder": "/work/acme",
            "project": "acme",
            "title": "acme work",
            "last_prompt": "do the thing",
            "branch": "main",
            "row_time": "2026-11-29T12:00:00Z",
            "pid": 4242,
            "transcript": null,
            "model": null,
            "cli_version": null,
            "hosted": false,
            "status": status,
            "session_state": {
                "status": status,
                "active_at": null,
                "reason": {"code": "turn_finished", "text": "Finished its turn"},
                "presence": "present",
                "activity": "between_turns",
                "intent": {"state": "none"},
                "custody": {"holds": [], "holds_work_claim": false, "reclaimable": false, "reason": "live"},
                "next_actor": {"actor": "operator", "reason": "r", "since": "2026-11-29T12:00:00Z"},
            },
        }))
        .expect("a session object")
    }

    /// When the app replaces the service it followed, the new engine's first list is compared
    /// with the service's last one: a session that turned to Needs you meanwhile is notified
    /// once, one that stayed as it was is not, and one that left is forgotten.
    #[test]
    fn what_changed_while_the_service_was_away_is_notified_once() {
        let before = [
            session("a1", "working"),
            session("b2", "waiting"),
            session("c3", "working"),
        ];
        let after = [session("a1", "waiting"), session("b2", "waiting")];
        let mut notifier = Notifier::seed(&before);
        let now = Timestamp::from_millis(1_764_590_400_000);
        let mut decision = Decision::default();
        for caught in catch_up(&mut notifier, &before, &after, now, false) {
            merge(&mut decision, caught);
        }
        assert!(decision.plans.is_empty(), "the burst window opens first");
        let at = decision.next_deadline.expect("a deadline for the window");
        let told = notifications::decide(&mut notifier, Input::Tick, at, false);
        assert_eq!(told.plans.len(), 1, "{told:?}");
        assert_eq!(told.plans[0].click, Click::Focus(after[0].key()));
        // Nothing more: the same list again is no news.
        let again = catch_up(&mut notifier, &after, &after, at, false);
        assert!(again.iter().all(|decision| decision.plans.is_empty()));
        // While paused, the flip is remembered and never told.
        let mut notifier = Notifier::seed(&before);
        let paused: Vec<Decision> = catch_up(&mut notifier, &before, &after, now, true);
        assert!(paused
            .iter()
            .all(|decision| decision.next_deadline.is_none()));
    }

    /// The note about the engine goes just above Open Slate, below the sessions, and nowhere
    /// when there is nothing to say.
    #[test]
    fn the_engine_note_sits_above_open_slate() {
        let state = MenuState {
            pause: Pause::Off,
            autostart: false,
            config_error: None,
            remotes: &[],
        };
        let live = [session("b2", "waiting")];
        let now = Timestamp::from_millis(1_764_590_400_000);
        let plain = menu::menu_model(&live, state, now);
        assert_eq!(with_note(plain.clone(), None), plain);
        let noted = with_note(plain.clone(), Some("Using the Slate service".to_string()));
        assert_eq!(noted.len(), plain.len() + 1);
        let at = noted
            .iter()
            .position(|entry| *entry == menu::Entry::Note("Using the Slate service".to_string()))
            .expect("the note");
        assert!(
            matches!(
                noted[0],
                menu::Entry::Item {
                    action: MenuAction::Focus(_),
                    ..
                }
            ),
            "{noted:?}"
        );
        assert_eq!(noted[at + 1], menu::Entry::Separator);
        assert!(matches!(
            noted[at + 2],
            menu::Entry::Item {
                action: MenuAction::OpenWindow,
                ..
            }
        ));
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
