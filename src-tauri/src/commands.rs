//! The commands the window may invoke, and the shell actions behind them.
//!
//! The page gets its data over HTTP like any browser, so the commands are only what belongs to
//! the shell: where the API is, focusing a session's terminal (for a session on a remote machine,
//! a local terminal attached to the remote's tmux, `slate::remote::attach`), start at login,
//! pausing notifications, showing the window and quitting. They run in the window process (see
//! `window`): what only the tray can do (pausing, quitting, redrawing the menu) is sent to it as
//! a `page::Request`; focusing a terminal reads the session's process from the API and raises
//! it from there. The tray menu and the notification click handler call the same focus, pause and
//! autostart functions, so a menu click and a click in the page do the same thing. Errors cross
//! to the page as their message (`CommandError` serializes as a string).

use serde::{Serialize, Serializer};
use tauri::{AppHandle, Runtime, State};
use tauri_plugin_autostart::ManagerExt;

use slate::model::SessionKey;
use slate::policy::menu::Pause;

use crate::page::{Page, Request};
use crate::server::Endpoint;
use crate::shell::Shell;
use crate::source::Source;
use crate::tray;

#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error("no session with id `{0}`")]
    UnknownSession(String),
    #[error("session `{0}` has no running process to focus")]
    NoProcess(String),
    #[error("cannot focus the terminal of session `{id}`: {reason}")]
    Focus { id: String, reason: String },
    #[error("{reason}; to see it, run: {command}")]
    RemoteFocus { reason: String, command: String },
    #[error("cannot change start at login: {0}")]
    Autostart(#[from] tauri_plugin_autostart::Error),
    #[error("cannot read session `{id}` from the API: {reason}")]
    Api { id: String, reason: String },
    #[error("cannot open the window: {0}")]
    Window(#[from] std::io::Error),
}

impl Serialize for CommandError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

/// Where the page finds the loopback API, and the token its POSTs need.
#[tauri::command]
pub fn api_endpoint(page: State<'_, Page>) -> Endpoint {
    page.endpoint()
}

/// Raises the terminal that hosts session `id` (an id or a unique prefix of one, or `NAME:ID`
/// for a session on a remote machine). It runs off the main thread: asking a remote where its
/// session runs can take a few seconds.
#[tauri::command]
pub async fn focus_session(page: State<'_, Page>, id: String) -> Result<(), CommandError> {
    let endpoint = page.endpoint();
    tauri::async_runtime::spawn_blocking(move || focus_through_api(&endpoint, &id))
        .await
        .map_err(|err| CommandError::Focus {
            id: String::new(),
            reason: err.to_string(),
        })?
}

#[tauri::command]
pub fn set_autostart<R: Runtime>(
    app: AppHandle<R>,
    page: State<'_, Page>,
    enabled: bool,
) -> Result<bool, CommandError> {
    let now_enabled = change_autostart(&app, enabled)?;
    page.ask(Request::Refresh);
    Ok(now_enabled)
}

#[tauri::command]
pub fn autostart_enabled<R: Runtime>(app: AppHandle<R>) -> Result<bool, CommandError> {
    Ok(app.autolaunch().is_enabled()?)
}

/// Pauses notifications for `minutes`, or until resumed when `minutes` is absent; `0` resumes.
#[tauri::command]
pub fn pause_notifications(
    page: State<'_, Page>,
    minutes: Option<u32>,
) -> Result<(), CommandError> {
    let pause = match minutes {
        None => Pause::UntilResumed,
        Some(0) => Pause::Off,
        Some(minutes) => Pause::Until(
            slate::live::system_clock()
                .plus(std::time::Duration::from_secs(u64::from(minutes) * 60)),
        ),
    };
    page.ask(Request::Pause(pause));
    Ok(())
}

/// Quits Slate: the tray ends, and the window with it.
#[tauri::command]
pub fn quit(page: State<'_, Page>) {
    page.ask(Request::Quit);
}

#[tauri::command]
pub fn show_window<R: Runtime>(app: AppHandle<R>) {
    crate::page::raise(&app);
}

/// Focuses a session's terminal: finds its process, then asks the focus strategy to raise what
/// hosts it. A session on a remote machine is attached to instead.
pub fn focus(shell: &Shell, id: &str) -> Result<(), CommandError> {
    focus_with(&shell.source(), id)
}

fn focus_with(source: &Source, id: &str) -> Result<(), CommandError> {
    let session = source
        .session(id)
        .map_err(|err| CommandError::Api {
            id: id.to_string(),
            reason: err.to_string(),
        })?
        .ok_or_else(|| CommandError::UnknownSession(id.to_string()))?;
    if let Some(machine) = &session.machine {
        return attach(
            &source.settings().config,
            machine.as_str(),
            session.id.as_str(),
        );
    }
    focus_pid(session.id.as_str(), session.pid)
}

/// [`focus`] from the window process: the session's process comes from `GET /sessions/{id}`.
pub fn focus_through_api(endpoint: &Endpoint, id: &str) -> Result<(), CommandError> {
    // An id is letters, digits and a few marks, with at most one `:` after a machine's name;
    // anything else could not name a session and would not make a clean path.
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let readable = match id.split_once(':') {
        Some((machine, rest)) => {
            !machine.is_empty() && machine.chars().all(plain) && rest.chars().all(plain)
        }
        None => id.chars().all(plain),
    };
    if id.is_empty() || !readable {
        return Err(CommandError::UnknownSession(id.to_string()));
    }
    let api_error = |reason: String| CommandError::Api {
        id: id.to_string(),
        reason,
    };
    // A session's details need the token (or the socket): the endpoint's client has both.
    let client = endpoint
        .client()
        .ok_or_else(|| api_error(format!("`{}` is not a loopback address", endpoint.base)))?;
    let detail: serde_json::Value = match client.get_json(&format!("/sessions/{id}")) {
        Ok(detail) => detail,
        Err(slate::client::ClientError::Status { status: 404, .. }) => {
            return Err(CommandError::UnknownSession(id.to_string()));
        }
        Err(err) => return Err(api_error(err.to_string())),
    };
    let session = &detail["session"];
    let found = session["id"].as_str().unwrap_or(id);
    if let Some(machine) = session["machine"].as_str() {
        // The window process has no engine of its own: the remotes come from the config file,
        // read as the tray read it.
        let env = slate::sources::roots::Env::from_process();
        let places =
            slate::places::Places::from_env(&env).map_err(|err| api_error(err.to_string()))?;
        let settings = slate::settings::Settings::load(&places.config_file());
        return attach(&settings.config, machine, found);
    }
    let pid = session["pid"]
        .as_u64()
        .and_then(|pid| u32::try_from(pid).ok());
    focus_pid(found, pid)
}

/// Opens a local terminal attached to the remote session `id` on `machine`, when the remote says
/// it runs in tmux; otherwise says which command gets there.
fn attach(config: &slate::config::Config, machine: &str, id: &str) -> Result<(), CommandError> {
    use slate::remote::attach::{self, Plan};
    let entry = config
        .remotes
        .iter()
        .find(|entry| entry.name.as_str() == machine)
        .ok_or_else(|| CommandError::UnknownSession(format!("{machine}:{id}")))?;
    let options = slate::remote::LinkOptions::default();
    let plan = attach::plan(entry, &options, id).map_err(|failure| CommandError::Focus {
        id: id.to_string(),
        reason: failure.message,
    })?;
    let command = plan.command_line();
    tracing::info!(%machine, session = id, %command, "attach requested");
    match &plan {
        Plan::Tmux { .. } => attach::open_terminal(plan.args())
            .map(|_| ())
            .map_err(|reason| CommandError::RemoteFocus { reason, command }),
        Plan::Shell { reason, .. } => Err(CommandError::RemoteFocus {
            reason: reason.clone(),
            command,
        }),
    }
}

fn focus_pid(id: &str, pid: Option<u32>) -> Result<(), CommandError> {
    let pid = pid.ok_or_else(|| CommandError::NoProcess(id.to_string()))?;
    tracing::info!(session = %id, pid, "focus requested");
    focus_terminal(pid).map_err(|reason| CommandError::Focus {
        id: id.to_string(),
        reason,
    })
}

/// Focuses the session `key` names (from the tray menu or a notification); failures are logged,
/// since there is nobody to show them to. It runs on a thread of its own, so the menu never waits
/// on the network (a remote session is attached to) nor on the helper programs (a KWin script is
/// left loaded for half a second).
pub fn focus_key(shell: &Shell, key: &SessionKey) {
    let source = shell.source();
    let reference = key.reference();
    std::thread::spawn(move || {
        if let Err(err) = focus_with(&source, &reference) {
            tracing::warn!("{err}");
        }
    });
}

/// The one call into the engine's focus strategy: the same one `slate focus` uses. When it cannot
/// be sure which window hosts the session, it says why instead of raising another one.
fn focus_terminal(pid: u32) -> Result<(), String> {
    match slate::focus::focus(pid) {
        Ok(outcome) => {
            if let Some(caveat) = outcome.caveat {
                tracing::info!(pid, "focused, with a caveat: {caveat}");
            }
            Ok(())
        }
        Err(err) => Err(err.to_string()),
    }
}

/// Turns start at login on or off from the tray menu, and redraws the menu.
pub fn set_autostart_to<R: Runtime>(
    app: &AppHandle<R>,
    enabled: bool,
) -> Result<bool, CommandError> {
    let now_enabled = change_autostart(app, enabled)?;
    tray::refresh(app);
    Ok(now_enabled)
}

fn change_autostart<R: Runtime>(app: &AppHandle<R>, enabled: bool) -> Result<bool, CommandError> {
    let autolaunch = app.autolaunch();
    if enabled {
        autolaunch.enable()?;
    } else {
        autolaunch.disable()?;
    }
    let now_enabled = autolaunch.is_enabled()?;
    tracing::info!(enabled = now_enabled, "start at login changed");
    Ok(now_enabled)
}

/// Pauses or resumes notifications (from the menu, the page, or the config's `[notifications]`),
/// and keeps the pause in the store for the next start.
pub fn set_pause<R: Runtime>(app: &AppHandle<R>, shell: &Shell, pause: Pause) {
    *shell.pause.lock().expect("lock poisoned") = pause;
    tracing::info!(?pause, "notification pause changed");
    crate::pause::keep(shell.store_file(), pause, slate::live::system_clock());
    tray::refresh(app);
}
