//! The commands the window may invoke, and the shell actions behind them.
//!
//! The page gets its data over HTTP like any browser, so the commands are only what belongs to
//! the shell: where the API is, focusing a session's terminal (for a session on a remote machine,
//! a local terminal attached to the remote's tmux, `slate::remote::attach`), start at login,
//! pausing notifications, showing the window and quitting. The tray menu and the notification click
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
    #[error("{reason}; to see it, run: {command}")]
    RemoteFocus { reason: String, command: String },
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

/// Raises the terminal that hosts session `id` (an id or a unique prefix of one, or `NAME:ID`
/// for a session on a remote machine). It runs off the main thread: asking a remote where its
/// session runs can take a few seconds.
#[tauri::command]
pub async fn focus_session(shell: State<'_, Shell>, id: String) -> Result<(), CommandError> {
    let handle = shell.handle.clone();
    tauri::async_runtime::spawn_blocking(move || focus_with(&handle, &id))
        .await
        .map_err(|err| CommandError::Focus {
            id: String::new(),
            reason: err.to_string(),
        })?
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
/// hosts it. A session on a remote machine is attached to instead.
pub fn focus(shell: &Shell, id: &str) -> Result<(), CommandError> {
    focus_with(&shell.handle, id)
}

fn focus_with(handle: &slate::live::Handle, id: &str) -> Result<(), CommandError> {
    let detail = handle
        .session(id)
        .ok_or_else(|| CommandError::UnknownSession(id.to_string()))?;
    let session = detail.session;
    if let Some(machine) = &session.machine {
        return attach(handle, machine, session.id.as_str());
    }
    let pid = session
        .pid
        .ok_or_else(|| CommandError::NoProcess(session.id.to_string()))?;
    tracing::info!(session = %session.id, pid, "focus requested");
    focus_terminal(pid).map_err(|reason| CommandError::Focus {
        id: session.id.to_string(),
        reason,
    })
}

/// Opens a local terminal attached to the remote session `id` on `machine`, when the remote says
/// it runs in tmux; otherwise says which command gets there.
fn attach(
    handle: &slate::live::Handle,
    machine: &slate::model::Machine,
    id: &str,
) -> Result<(), CommandError> {
    use slate::remote::attach::{self, Plan};
    let settings = handle.settings();
    let entry = settings
        .config
        .remotes
        .iter()
        .find(|entry| &entry.name == machine)
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

/// Focuses the session `key` names (from the tray menu or a notification); failures are logged,
/// since there is nobody to show them to. A remote session is attached to on a thread of its
/// own, so the menu never waits on the network.
pub fn focus_key(shell: &Shell, key: &SessionKey) {
    if key.machine.is_some() {
        let handle = shell.handle.clone();
        let reference = key.reference();
        std::thread::spawn(move || {
            if let Err(err) = focus_with(&handle, &reference) {
                tracing::warn!("{err}");
            }
        });
        return;
    }
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
