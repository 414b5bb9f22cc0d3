//! The window: a process of its own, alive only while the person has the window open.
//!
//! The tray, the notifications and the engine need no webview, and a webview costs far more than
//! the rest of the app: WebKit's web and network processes, and in the process that hosts the view,
//! WebKit's and Mesa's code and heaps, which stay resident after the view is gone (measured in
//! docs/performance.md, "The tray app's memory"). So the tray process never creates one. Opening
//! the window (Open Slate in the tray menu, a notification click, a second launch, `--show`) starts
//! this same binary with [`FLAG`]; that process builds the window declared in `tauri.conf.json`
//! (`create: false`), and ends when the window is closed, taking WebKit's processes with it.
//! Reopening is quick: the page is embedded in the binary and its first snapshot comes from the
//! tray process's engine over the loopback API.
//!
//! The two processes talk over the window process's standard input and output, one line at a
//! time. The tray writes the API's [`Endpoint`] as JSON first, then `show` whenever the person
//! opens the window again, and `endpoint` with the new one as JSON when the API moved (the Slate
//! service the tray followed went away and the tray runs its own engine now: the page is loaded
//! again from it); end of input means the tray is gone, and the window closes. The window
//! writes a [`Request`] line for what only the tray can do (pause notifications, quit, redraw the
//! menu). This module owns that lifecycle and the protocol, and what the tray does with each
//! request; the requests themselves and the window process's state are in `page`, what the page
//! may invoke is in `commands`, what it shows in `ui/`.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::Mutex;

use tauri::{AppHandle, Manager, Runtime, WebviewWindowBuilder};

use crate::commands::{self, CommandError};
use crate::page::{raise, Page, Request, LABEL};
use crate::server::Endpoint;
use crate::shell::Shell;
use crate::tray;

/// The argument that makes the binary the window process.
pub const FLAG: &str = "--window";

/// The tray process's side: the window process it started, while one runs.
#[derive(Default)]
pub struct Launcher {
    running: Mutex<Option<Running>>,
}

struct Running {
    pid: u32,
    input: ChildStdin,
}

/// Shows the window: tells the running window process to come to the front, or starts one.
/// `requests` is what the tray does with each [`Request`] the window process sends; it runs on
/// the thread that follows that process.
pub fn open<R: Runtime>(
    app: &AppHandle<R>,
    endpoint: &Endpoint,
    requests: fn(&AppHandle<R>, Request),
) -> std::io::Result<()> {
    let launcher = app.state::<Launcher>();
    let mut running = launcher.running.lock().expect("lock poisoned");
    if let Some(window) = running.as_mut() {
        // A window process that has just ended fails the write; another one is started below.
        if writeln!(window.input, "show")
            .and_then(|_| window.input.flush())
            .is_ok()
        {
            return Ok(());
        }
    }
    let mut command = Command::new(own_binary()?);
    command
        .arg(FLAG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    // The tray turns GTK's OpenGL off for itself (see `crate::memory`); the window draws a page
    // and should have it.
    if crate::memory::gl_turned_off() {
        command.env_remove("GDK_GL");
    }
    let mut child = command.spawn()?;
    let pid = child.id();
    let mut input = child.stdin.take().expect("the window's input is piped");
    let output = child.stdout.take().expect("the window's output is piped");
    let first = serde_json::to_string(endpoint).map_err(std::io::Error::other)?;
    writeln!(input, "{first}")?;
    input.flush()?;
    tracing::info!(pid, "the window opened");
    *running = Some(Running { pid, input });
    drop(running);

    // One thread follows the window process: its requests, then its end.
    let follower = app.clone();
    std::thread::Builder::new()
        .name("slate-window".to_string())
        .spawn(move || {
            for line in BufReader::new(output).lines() {
                let Ok(line) = line else { break };
                match Request::parse(&line) {
                    Some(request) => requests(&follower, request),
                    None => tracing::warn!(line, "ignoring an unknown request from the window"),
                }
            }
            let status = child.wait();
            tracing::info!(pid, ?status, "the window closed");
            let launcher = follower.state::<Launcher>();
            let mut running = launcher.running.lock().expect("lock poisoned");
            if running.as_ref().is_some_and(|window| window.pid == pid) {
                *running = None;
            }
        })?;
    Ok(())
}

/// Shows the window, starting its process when it is closed, and brings it to the front: Open
/// Slate in the menu, a notification click, a second launch, `--show`.
pub fn show<R: Runtime>(app: &AppHandle<R>) -> Result<(), CommandError> {
    let shell = app.state::<Shell>();
    open(app, &shell.endpoint(), on_request)?;
    Ok(())
}

/// What the tray does with a [`Request`] of the window process.
fn on_request<R: Runtime>(app: &AppHandle<R>, request: Request) {
    tracing::info!(?request, "the window asked");
    match request {
        Request::Pause(pause) => commands::set_pause(app, &app.state::<Shell>(), pause),
        Request::Quit => app.exit(0),
        Request::Refresh => tray::refresh(app),
    }
}

/// This binary. When an upgrade replaced it while the tray runs, Linux names the old file
/// `… (deleted)`; `/proc/self/exe` still starts the same build as the tray, which is what must
/// speak the other end of the line protocol.
fn own_binary() -> std::io::Result<std::path::PathBuf> {
    let path = std::env::current_exe()?;
    if cfg!(target_os = "linux") && path.to_string_lossy().ends_with(" (deleted)") {
        return Ok(std::path::PathBuf::from("/proc/self/exe"));
    }
    Ok(path)
}

/// Points the open window, if one runs, at the API's new `endpoint`.
pub fn retarget<R: Runtime>(app: &AppHandle<R>, endpoint: &Endpoint) {
    let launcher = app.state::<Launcher>();
    let mut running = launcher.running.lock().expect("lock poisoned");
    let Some(window) = running.as_mut() else {
        return;
    };
    let line = match serde_json::to_string(endpoint) {
        Ok(json) => format!("{ENDPOINT_LINE} {json}"),
        Err(err) => {
            tracing::warn!("cannot tell the window the new endpoint: {err}");
            return;
        }
    };
    // A window process that has just ended fails the write; the next one gets the endpoint first.
    let _ = writeln!(window.input, "{line}").and_then(|_| window.input.flush());
}

/// The word before a new endpoint on the tray's line to the window.
const ENDPOINT_LINE: &str = "endpoint";

/// Closes the window process, if one runs (the tray is quitting). Closing its input is enough:
/// the window process ends at the end of its input.
pub fn close<R: Runtime>(app: &AppHandle<R>) {
    if let Some(launcher) = app.try_state::<Launcher>() {
        launcher.running.lock().expect("lock poisoned").take();
    }
}

/// Runs the window process until its window is closed or the tray goes away.
pub fn run(context: tauri::Context<tauri::Wry>) -> anyhow::Result<()> {
    let mut first = String::new();
    std::io::stdin().lock().read_line(&mut first)?;
    let endpoint: Endpoint = serde_json::from_str(first.trim())
        .map_err(|err| anyhow::anyhow!("the window expects the API's endpoint first: {err}"))?;
    let page = Page::new(endpoint);
    tauri::Builder::default()
        .plugin(
            tauri_plugin_autostart::Builder::new()
                .arg("--hidden")
                .build(),
        )
        .manage(page)
        .invoke_handler(tauri::generate_handler![
            crate::commands::api_endpoint,
            crate::commands::focus_session,
            crate::commands::set_autostart,
            crate::commands::autostart_enabled,
            crate::commands::pause_notifications,
            crate::commands::quit,
            crate::commands::show_window,
        ])
        .setup(|app| {
            let handle = app.handle().clone();
            let config = handle
                .config()
                .app
                .windows
                .iter()
                .find(|window| window.label == LABEL)
                .cloned()
                .ok_or(tauri::Error::WindowNotFound)?;
            WebviewWindowBuilder::from_config(&handle, &config)?.build()?;
            raise(&handle);
            std::thread::Builder::new()
                .name("slate-tray-line".to_string())
                .spawn(move || follow_tray(handle))?;
            Ok(())
        })
        .run(context)?;
    Ok(())
}

/// Reads the tray's lines: `show` raises the window, `endpoint` loads the page again from the
/// API's new place; the end of input (the tray quit or died) ends the window process.
fn follow_tray(app: AppHandle) {
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if line == "show" {
            let queued = app.clone();
            let _ = app.run_on_main_thread(move || raise(&queued));
            continue;
        }
        match read_endpoint_line(&line) {
            Some(endpoint) => {
                tracing::info!(base = %endpoint.base, "the API moved; loading the page again");
                app.state::<Page>().set_endpoint(endpoint);
                if let Some(window) = app.get_webview_window(LABEL) {
                    if let Err(err) = window.eval("window.location.reload()") {
                        tracing::warn!("cannot load the page again: {err}");
                    }
                }
            }
            None => tracing::warn!(line, "ignoring an unknown line from the tray"),
        }
    }
    app.exit(0);
}

/// The endpoint an `endpoint {json}` line carries; `None` for any other line.
fn read_endpoint_line(line: &str) -> Option<Endpoint> {
    let json = line.strip_prefix(ENDPOINT_LINE)?.strip_prefix(' ')?;
    serde_json::from_str(json).ok()
}

/// The line protocol between the window process and the tray: a new endpoint reads back from its
/// line, and anything else is refused rather than guessed at.
#[cfg(test)]
mod tests {
    use super::*;

    /// The tray tells an open window where the API moved; only a whole endpoint reads.
    #[test]
    fn a_new_endpoint_reads_back_from_its_line() {
        let endpoint = Endpoint {
            base: "http://127.0.0.1:7411".to_string(),
            token: "t".repeat(64),
            served_by: slate::model::ServerKind::App,
            socket: None,
        };
        let line = format!(
            "{ENDPOINT_LINE} {}",
            serde_json::to_string(&endpoint).unwrap()
        );
        assert!(!line.contains('\n'));
        assert_eq!(read_endpoint_line(&line), Some(endpoint));
        for line in [
            "endpoint",
            "endpoint ",
            "endpoint {}",
            "endpoint {\"base\":\"http://127.0.0.1:7411\"}",
            "endpoints {\"base\":\"http://127.0.0.1:7411\",\"token\":\"t\",\"served_by\":\"app\"}",
            "show",
        ] {
            assert_eq!(read_endpoint_line(line), None, "{line:?}");
        }
    }
}
