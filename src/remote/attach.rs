//! `slate focus NAME:ID` (and a click on a remote session in the tray or the window): a local
//! terminal attached to the remote's tmux session, or the command that gets you there.
//!
//! Raising a window on another machine is not something Slate can do, but when the remote
//! session runs in tmux (its session object's `terminal` says `"kind": "tmux"` with the pane,
//! `"pane": "%3"`, or a session name), `ssh -t DEST tmux attach -t <target>` in a local terminal
//! shows it: attaching to a pane selects its window and the pane too. The
//! remote is asked for its live list once (`slate sessions --json`, within the one-shot limit)
//! for the freshest word on where the session runs; when it says nothing of tmux (or an older
//! Slate there does not say), or cannot be asked, the command that opens a shell there is
//! given instead, with the reason. Local focus (`focus`) never handles a remote session: a
//! remote pid means nothing here.

#[cfg(not(any(target_os = "macos", windows)))]
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::config::RemoteEntry;
use crate::engine::pick;
use crate::remote::link::ask;
use crate::remote::{attach_args, command_line, shell_args, Failure, LinkOptions, RemoteCommand};
use slate_core::model::{AgentKind, SessionKey};

/// Where a remote session can be seen from here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// The session runs in this tmux session on the remote: attach to it.
    Tmux { session: String, args: Vec<String> },
    /// Slate does not know which terminal shows it: a shell on the remote, and why.
    Shell { args: Vec<String>, reason: String },
}

impl Plan {
    /// The `ssh` arguments of the plan.
    pub fn args(&self) -> &[String] {
        match self {
            Plan::Tmux { args, .. } | Plan::Shell { args, .. } => args,
        }
    }

    /// The plan as a command a person can type.
    pub fn command_line(&self) -> String {
        command_line("ssh", self.args())
    }
}

/// What to attach to in tmux, when a session object's `terminal` says the session runs in tmux:
/// its pane (`{"kind": "tmux", "pane": "%3", …}`), else a session name it gives.
pub fn tmux_session(session: &Value) -> Option<String> {
    let terminal = session.get("terminal")?;
    if terminal.get("kind").and_then(Value::as_str) != Some("tmux") {
        return None;
    }
    ["pane", "session", "session_name"]
        .iter()
        .find_map(|field| terminal.get(field).and_then(Value::as_str))
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
}

/// The plan for the session object `session` (as the remote sent it) on `entry`'s machine.
pub fn plan_for(entry: &RemoteEntry, session: &Value) -> Plan {
    let Some(name) = tmux_session(session) else {
        return Plan::Shell {
            args: shell_args(entry),
            reason: format!(
                "{} does not say the session runs in tmux, so Slate cannot attach to it",
                entry.name
            ),
        };
    };
    match attach_args(entry, &name) {
        Some(args) => Plan::Tmux {
            args,
            session: name,
        },
        None => Plan::Shell {
            args: shell_args(entry),
            reason: format!(
                "the tmux target {:?} on {} cannot be sent to a remote shell as it is (a quote, \
                 a backslash or a control character), so Slate does not attach to it",
                name, entry.name
            ),
        },
    }
}

/// Asks `entry`'s machine where the session `id` (an id or a unique prefix of one) runs, and
/// plans how to see it. A remote that cannot be asked gives the shell plan with the reason.
pub fn plan(entry: &RemoteEntry, options: &LinkOptions, id: &str) -> Result<Plan, Failure> {
    let answer = match ask(entry, options, &RemoteCommand::Sessions) {
        Ok(answer) => answer,
        Err(failure) => {
            return Ok(Plan::Shell {
                args: shell_args(entry),
                reason: failure.message,
            })
        }
    };
    let value: Value = serde_json::from_slice(&answer).map_err(|err| {
        Failure::link(format!(
            "{}: an answer that cannot be read: {err}",
            entry.name
        ))
    })?;
    let objects = value
        .get("sessions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let keyed: Vec<(SessionKey, Value)> = objects
        .into_iter()
        .filter_map(|object| {
            let agent = AgentKind::from_wire(object.get("agent")?.as_str()?).ok()?;
            let session_id = object.get("id")?.as_str()?.to_owned();
            Some((SessionKey::new(agent, session_id), object))
        })
        .collect();
    let found = pick(keyed.iter().map(|(key, _)| key), id)
        .map_err(|err| Failure::link(format!("on {}: {err}", entry.name)))?;
    let object = keyed
        .iter()
        .find(|(key, _)| key == found)
        .map(|(_, object)| object)
        .expect("the key picked is one of them");
    Ok(plan_for(entry, object))
}

/// Opens a local terminal window running `ssh` with `args`, and returns the terminal's name.
/// The terminal is whatever `$TERMINAL` names, else the first of the usual ones found on `PATH`
/// (Linux and the BSDs, with a display), Terminal.app on macOS, or a console on Windows. It is
/// not waited for, except on a thread that reaps it.
pub fn open_terminal(args: &[String]) -> Result<String, String> {
    let (program, mut command) = terminal_command(args)?;
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = command
        .spawn()
        .map_err(|err| format!("cannot start {program}: {err}"))?;
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(program)
}

#[cfg(target_os = "macos")]
fn terminal_command(args: &[String]) -> Result<(String, Command), String> {
    let line = command_line("ssh", args)
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    let mut command = Command::new("osascript");
    command
        .arg("-e")
        .arg(format!(
            "tell application \"Terminal\" to do script \"{line}\""
        ))
        .arg("-e")
        .arg("tell application \"Terminal\" to activate");
    Ok(("Terminal".to_owned(), command))
}

#[cfg(windows)]
fn terminal_command(args: &[String]) -> Result<(String, Command), String> {
    let mut command = Command::new("cmd");
    command.args(["/C", "start", "", "ssh"]).args(args);
    Ok(("a console window".to_owned(), command))
}

#[cfg(not(any(target_os = "macos", windows)))]
fn terminal_command(args: &[String]) -> Result<(String, Command), String> {
    let display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|value| !value.is_empty()));
    let chosen = std::env::var("TERMINAL")
        .ok()
        .filter(|name| !name.is_empty())
        .and_then(|name| on_path(&name).map(|path| (name, path, "-e")));
    let chosen = chosen.or_else(|| {
        if !display {
            return None;
        }
        [
            ("x-terminal-emulator", "-e"),
            ("gnome-terminal", "--"),
            ("konsole", "-e"),
            ("xfce4-terminal", "-x"),
            ("alacritty", "-e"),
            ("kitty", "--"),
            ("xterm", "-e"),
        ]
        .iter()
        .find_map(|(name, flag)| on_path(name).map(|path| (name.to_string(), path, *flag)))
    });
    let Some((name, path, flag)) = chosen else {
        return Err(if display {
            "no terminal found (set TERMINAL to one)".to_owned()
        } else {
            "no display to open a terminal on".to_owned()
        });
    };
    let mut command = Command::new(path);
    // `kitty` takes the program directly; `--` only ends its own options.
    command.arg(flag).arg("ssh").args(args);
    Ok((name, command))
}

/// The file `name` names on `PATH` (or `name` itself, when it is a path).
#[cfg(not(any(target_os = "macos", windows)))]
fn on_path(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let path = PathBuf::from(name);
        return is_program(&path).then_some(path);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|folder| folder.join(name))
        .find(|path| is_program(path))
}

#[cfg(not(any(target_os = "macos", windows)))]
fn is_program(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}
