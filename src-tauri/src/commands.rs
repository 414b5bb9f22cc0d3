//! The commands the window may invoke, and the shell actions behind them.
//!
//! The page gets its data over HTTP like any browser, so the commands are only what belongs to
//! the shell: where the API is, focusing a session's terminal, start at login, pausing
//! notifications, showing the window and quitting. The tray menu and the notification click
//! handler call the same functions, so a menu click and a click in the page do the same thing.
//! Errors cross to the page as their message (`CommandError` serializes as a string).

use serde::{Serialize, Serializer};
use tauri::{AppHandle, Manager, Runtime, State};
use tauri_plugin_autostart::ManagerExt;

use slate::model::SessionKey;
use slate::policy::menu::Pause;

use crate::server::Endpoint;
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
    #[error("the main window is missing")]
    NoWindow,
    #[error(transparent)]
    Tauri(#[from] tauri::Error),
}

impl Serialize for CommandError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

/// Where the page finds the loopback API, and the token its POSTs need.
#[tauri::command]
pub fn api_endpoint(shell: State<'_, Shell>) -> Endpoint {
    shell.endpoint.clone()
}

/// Raises the terminal that hosts session `id` (an id or a unique prefix of one).
#[tauri::command]
pub fn focus_session(shell: State<'_, Shell>, id: String) -> Result<(), CommandError> {
    focus(&shell, &id)
}

#[tauri::command]
pub fn set_autostart<R: Runtime>(app: AppHandle<R>, enabled: bool) -> Result<bool, CommandError> {
    set_autostart_to(&app, enabled)
}

#[tauri::command]
pub fn autostart_enabled<R: Runtime>(app: AppHandle<R>) -> Result<bool, CommandError> {
    Ok(app.autolaunch().is_enabled()?)
}

/// Pauses notifications for `minutes`, or until resumed when `minutes` is absent; `0` resumes.
#[tauri::command]
pub fn pause_notifications<R: Runtime>(
    app: AppHandle<R>,
    shell: State<'_, Shell>,
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
    set_pause(&app, &shell, pause);
    Ok(())
}

#[tauri::command]
pub fn quit<R: Runtime>(app: AppHandle<R>) {
    app.exit(0);
}

#[tauri::command]
pub fn show_window<R: Runtime>(app: AppHandle<R>) -> Result<(), CommandError> {
    show(&app)
}

/// Focuses a session's terminal: finds its process, then asks the focus strategy to raise what
/// hosts it.
pub fn focus(shell: &Shell, id: &str) -> Result<(), CommandError> {
    let detail = shell
        .handle
        .session(id)
        .ok_or_else(|| CommandError::UnknownSession(id.to_string()))?;
    let session = detail.session;
    let pid = session
        .pid
        .ok_or_else(|| CommandError::NoProcess(session.id.to_string()))?;
    tracing::info!(session = %session.id, pid, "focus requested");
    focus_terminal(pid).map_err(|reason| CommandError::Focus {
        id: session.id.to_string(),
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

pub fn set_autostart_to<R: Runtime>(
    app: &AppHandle<R>,
    enabled: bool,
) -> Result<bool, CommandError> {
    let autolaunch = app.autolaunch();
    if enabled {
        autolaunch.enable()?;
    } else {
        autolaunch.disable()?;
    }
    let now_enabled = autolaunch.is_enabled()?;
    tracing::info!(enabled = now_enabled, "start at login changed");
    crate::refresh_tray(app);
    Ok(now_enabled)
}

pub fn set_pause<R: Runtime>(app: &AppHandle<R>, shell: &Shell, pause: Pause) {
    *shell.pause.lock().expect("lock poisoned") = pause;
    tracing::info!(?pause, "notification pause changed");
    crate::refresh_tray(app);
}

/// Shows, unminimises and focuses the main window.
pub fn show<R: Runtime>(app: &AppHandle<R>) -> Result<(), CommandError> {
    let window = app
        .get_webview_window("main")
        .ok_or(CommandError::NoWindow)?;
    window.show()?;
    window.unminimize()?;
    window.set_focus()?;
    Ok(())
}
