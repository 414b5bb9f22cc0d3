//! What a choice gives: a [`Plan`], the [`Step`]s to run or the reason to run none, and the
//! command line that performs each step (`tmux`, `kitty @`, `wezterm cli`, `wmctrl` or `xdotool`,
//! `osascript`), which is also how a step is shown to a person.

use std::fmt;

/// What to do, or why nothing should be done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Run these steps in order. The caveat says what the steps will not reach, e.g. a tmux pane
    /// that is selected but shown by no terminal window.
    Run {
        steps: Vec<Step>,
        caveat: Option<String>,
    },
    /// Nothing is run: it is not sure which window shows the session.
    Unsure { reason: String },
}

/// The macOS terminals that can select a tab by its tty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MacTerminal {
    Terminal,
    ITerm2,
}

/// The X11 tool that activates a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum X11Tool {
    Wmctrl,
    Xdotool,
}

/// One action that brings the session a little closer to the front.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// `tmux select-window` on the window holding the pane.
    TmuxSelectWindow { socket: String, pane_id: String },
    /// `tmux select-pane`.
    TmuxSelectPane { socket: String, pane_id: String },
    /// `tmux switch-client`: make a client that shows another session show the pane's.
    TmuxSwitchClient {
        socket: String,
        client_tty: String,
        pane_id: String,
    },
    /// `kitty @ focus-window` over kitty's remote-control socket.
    KittyFocusWindow {
        listen_on: String,
        window_id: String,
    },
    /// `wezterm cli activate-pane`.
    WeztermActivatePane {
        pane_id: String,
        socket: Option<String>,
    },
    /// EWMH activation (`_NET_ACTIVE_WINDOW`) of an X11 window.
    X11Activate {
        display: String,
        window: u64,
        tool: X11Tool,
    },
    /// `swaymsg '[con_id=N] focus'`: Sway focuses the window (container) `con_id`.
    SwayFocus { socket: String, con_id: u64 },
    /// `hyprctl dispatch focuswindow address:0x…`: Hyprland focuses the window at `address`.
    HyprlandFocus { instance: String, address: u64 },
    /// A KWin script ([`kwin_script`]), loaded and run through KWin's scripting interface on the
    /// session bus `bus` (the terminal's `$DBUS_SESSION_BUS_ADDRESS`, else Slate's own), that
    /// activates the one window of the nearest of `pids` that has any.
    KwinActivate { bus: Option<String>, pids: Vec<u32> },
    /// AppleScript that selects the tab with this tty and brings its window to the front.
    AppleScript { app: MacTerminal, tty: String },
    /// `SetForegroundWindow` on a Windows console window.
    WindowsForeground { hwnd: u64 },
}

/// A program to run, with its arguments and extra environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

impl Step {
    /// The command that performs this step, or `None` for a step that is an API call rather than
    /// a program (the Windows one).
    pub fn command(&self) -> Option<CommandLine> {
        let plain = |program: &str, args: &[&str]| CommandLine {
            program: program.to_string(),
            args: args.iter().map(|arg| arg.to_string()).collect(),
            env: Vec::new(),
        };
        Some(match self {
            Step::TmuxSelectWindow { socket, pane_id } => {
                plain("tmux", &["-S", socket, "select-window", "-t", pane_id])
            }
            Step::TmuxSelectPane { socket, pane_id } => {
                plain("tmux", &["-S", socket, "select-pane", "-t", pane_id])
            }
            Step::TmuxSwitchClient {
                socket,
                client_tty,
                pane_id,
            } => plain(
                "tmux",
                &[
                    "-S",
                    socket,
                    "switch-client",
                    "-c",
                    client_tty,
                    "-t",
                    pane_id,
                ],
            ),
            Step::KittyFocusWindow {
                listen_on,
                window_id,
            } => plain(
                "kitty",
                &[
                    "@",
                    "--to",
                    listen_on,
                    "focus-window",
                    "--match",
                    &format!("id:{window_id}"),
                ],
            ),
            Step::WeztermActivatePane { pane_id, socket } => {
                let mut line = plain(
                    "wezterm",
                    &[
                        "cli",
                        "--no-auto-start",
                        "activate-pane",
                        "--pane-id",
                        pane_id,
                    ],
                );
                if let Some(socket) = socket {
                    line.env
                        .push(("WEZTERM_UNIX_SOCKET".to_string(), socket.clone()));
                }
                line
            }
            Step::X11Activate {
                display,
                window,
                tool,
            } => {
                let mut line = match tool {
                    X11Tool::Wmctrl => plain("wmctrl", &["-i", "-a", &format!("{window:#x}")]),
                    X11Tool::Xdotool => plain("xdotool", &["windowactivate", &window.to_string()]),
                };
                line.env.push(("DISPLAY".to_string(), display.clone()));
                line
            }
            Step::SwayFocus { socket, con_id } => plain(
                "swaymsg",
                &["-s", socket, &format!("[con_id={con_id}]"), "focus"],
            ),
            Step::HyprlandFocus { instance, address } => {
                let mut line = plain(
                    "hyprctl",
                    &["dispatch", "focuswindow", &format!("address:{address:#x}")],
                );
                line.env
                    .push(("HYPRLAND_INSTANCE_SIGNATURE".to_string(), instance.clone()));
                line
            }
            Step::AppleScript { app, tty } => plain("osascript", &["-e", &apple_script(*app, tty)]),
            // Three calls around a script file: `focus::execute` runs them.
            Step::KwinActivate { .. } | Step::WindowsForeground { .. } => return None,
        })
    }

    /// Whether what the step's program printed says it did it: `hyprctl dispatch` exits 0 and says
    /// why in its output when it could not (no such window), and `ok` when it did.
    pub fn check_answer(&self, output: &str) -> Result<(), String> {
        match self {
            Step::HyprlandFocus { .. } if output.trim() != "ok" => Err(format!(
                "hyprctl answered {:?}",
                output.trim().chars().take(200).collect::<String>()
            )),
            _ => Ok(()),
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Step::AppleScript { app, tty } = self {
            let name = match app {
                MacTerminal::Terminal => "Terminal",
                MacTerminal::ITerm2 => "iTerm2",
            };
            return write!(f, "select the {name} tab on {tty} (AppleScript)");
        }
        let Some(line) = self.command() else {
            return match self {
                Step::WindowsForeground { hwnd } => {
                    write!(f, "SetForegroundWindow on console window {hwnd:#x}")
                }
                Step::KwinActivate { pids, .. } => {
                    let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
                    write!(
                        f,
                        "a KWin script that activates the one window of the nearest of processes {}",
                        pids.join(", ")
                    )
                }
                _ => Ok(()),
            };
        };
        for (name, value) in &line.env {
            write!(f, "{name}={value} ")?;
        }
        write!(f, "{}", line.program)?;
        for arg in &line.args {
            if arg.is_empty() || arg.contains([' ', '\'', '"', '\\', '$', '[', '*', '?']) {
                write!(f, " '{}'", arg.replace('\'', r"'\''"))?;
            } else {
                write!(f, " {arg}")?;
            }
        }
        Ok(())
    }
}

/// The AppleScript that selects the tab on `tty` and raises its window. The tty has been checked
/// to hold only path characters, so it can be quoted as is. `activate` comes last: activating
/// first raises whichever window was in front (c9watch PR #109).
fn apple_script(app: MacTerminal, tty: &str) -> String {
    match app {
        MacTerminal::Terminal => format!(
            "tell application \"Terminal\"\n\
             repeat with w in windows\n\
             repeat with t in tabs of w\n\
             if tty of t is \"{tty}\" then\n\
             set selected of t to true\n\
             set index of w to 1\n\
             activate\n\
             return\n\
             end if\n\
             end repeat\n\
             end repeat\n\
             error \"no Terminal tab has tty {tty}\"\n\
             end tell"
        ),
        MacTerminal::ITerm2 => format!(
            "tell application \"iTerm2\"\n\
             repeat with w in windows\n\
             repeat with t in tabs of w\n\
             repeat with s in sessions of t\n\
             if tty of s is \"{tty}\" then\n\
             select w\n\
             select t\n\
             select s\n\
             activate\n\
             return\n\
             end if\n\
             end repeat\n\
             end repeat\n\
             end repeat\n\
             error \"no iTerm2 session has tty {tty}\"\n\
             end tell"
        ),
    }
}

/// The KWin script of [`Step::KwinActivate`]: for each of `pids` in order, the normal windows
/// that process owns; the first process that owns any decides: one window is activated, more than
/// one is left alone (nothing tells which shows the session). It reads Plasma 6's
/// `workspace.windowList()` and `activeWindow`, or Plasma 5's `clientList()` and `activeClient`.
/// Only the pids are put into it, as numbers.
pub fn kwin_script(pids: &[u32]) -> String {
    let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
    format!(
        "const pids = [{}];\n\
         const windows = workspace.windowList ? workspace.windowList() : workspace.clientList();\n\
         for (const pid of pids) {{\n\
         \x20   const owned = windows.filter((w) => w.pid === pid && w.normalWindow);\n\
         \x20   if (owned.length === 1) {{\n\
         \x20       if (\"activeWindow\" in workspace) {{ workspace.activeWindow = owned[0]; }}\n\
         \x20       else {{ workspace.activeClient = owned[0]; }}\n\
         \x20   }}\n\
         \x20   if (owned.length > 0) {{ break; }}\n\
         }}\n",
        pids.join(", ")
    )
}
