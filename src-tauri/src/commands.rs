//! The commands the window may invoke, and the shell actions behind them.
//!
//! The page gets its data over HTTP like any browser, so the commands are only what belongs to
//! the shell: where the API is, focusing a session's terminal, start at login, pausing
//! notifications, showing the window and quitting. They run in the window process (see
//! `window`): what only the tray can do (pausing, quitting, redrawing the menu) is sent to it as
//! a `window::Request`; focusing a terminal reads the session's process from the API and raises
//! it from there. The tray menu and the notification click handler call the same focus, pause and
//! autostart functions, so a menu click and a click in the page do the same thing. Errors cross
//! to the page as their message (`CommandError` serializes as a string).

use serde::{Serialize, Serializer};
use tauri::{AppHandle, Manager, Runtime, State};
use tauri_plugin_autostart::ManagerExt;

use slate::model::SessionKey;
use slate::policy::menu::Pause;

use crate::server::Endpoint;
use crate::window::{Page, Request};
use crate::Shell;

#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error("no session with id `{0}`")]
    UnknownSession(String),
    #[error("session `{0}` has no running process to focus")]
    NoProcess(String),
    #[error("cannot focus the terminal of session `{id}`: {reason}")]
    Focus { id: String, reason: String },
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
    page.endpoint.clone()
}

/// Raises the terminal that hosts session `id` (an id or a unique prefix of one).
#[tauri::command]
pub fn focus_session(page: State<'_, Page>, id: String) -> Result<(), CommandError> {
    focus_through_api(&page.endpoint, &id)
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
    crate::window::raise(&app);
}

/// Focuses a session's terminal: finds its process, then asks the focus strategy to raise what
/// hosts it.
pub fn focus(shell: &Shell, id: &str) -> Result<(), CommandError> {
    let detail = shell
        .handle
        .session(id)
        .ok_or_else(|| CommandError::UnknownSession(id.to_string()))?;
    let session = detail.session;
    focus_pid(session.id.as_str(), session.pid)
}

/// [`focus`] from the window process: the session's process comes from `GET /sessions/{id}`.
pub fn focus_through_api(endpoint: &Endpoint, id: &str) -> Result<(), CommandError> {
    // An id is letters, digits and a few marks; anything else could not name a session and
    // would not make a clean path.
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if id.is_empty() || !id.chars().all(plain) {
        return Err(CommandError::UnknownSession(id.to_string()));
    }
    let api_error = |reason: String| CommandError::Api {
        id: id.to_string(),
        reason,
    };
    let address = slate::client::address_of(&endpoint.base)
        .ok_or_else(|| api_error(format!("`{}` is not a loopback address", endpoint.base)))?;
    let client = slate::client::Client::new(address, None);
    let detail: serde_json::Value = match client.get_json(&format!("/sessions/{id}")) {
        Ok(detail) => detail,
        Err(slate::client::ClientError::Status { status: 404, .. }) => {
            return Err(CommandError::UnknownSession(id.to_string()));
        }
        Err(err) => return Err(api_error(err.to_string())),
    };
    let session = &detail["session"];
    let found = session["id"].as_str().unwrap_or(id);
    let pid = session["pid"]
        .as_u64()
        .and_then(|pid| u32::try_from(pid).ok());
    focus_pid(found, pid)
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
/// since there is nobody to show them to.
pub fn focus_key(shell: &Shell, key: &SessionKey) {
    if let Err(err) = focus(shell, key.id.as_str()) {
        tracing::warn!("{err}");
    }
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
    crate::refresh_tray(app);
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

pub fn set_pause<R: Runtime>(app: &AppHandle<R>, shell: &Shell, pause: Pause) {
    *shell.pause.lock().expect("lock poisoned") = pause;
    tracing::info!(?pause, "notification pause changed");
    crate::refresh_tray(app);
}

/// Shows the window, starting its process when it is closed, and brings it to the front.
pub fn show<R: Runtime>(app: &AppHandle<R>) -> Result<(), CommandError> {
    let shell = app.state::<Shell>();
    crate::window::open(app, &shell.endpoint, crate::on_window_request)?;
    Ok(())
}
