//! Deciding how to bring a session's terminal to the front, from facts alone.
//!
//! [`choose`] reads a [`Facts`] value (the session process's ancestors, its terminal, a few of its
//! environment variables, the tmux panes and clients of its server, the X11 windows with their
//! owning pids, which tools are installed) and returns a [`Plan`]: the [`Step`]s to run, or
//! [`Plan::Unsure`] with the reason it cannot be sure. The order is docs/states.md §6's: the
//! multiplexer first (tmux), then the terminal's own remote control (kitty, WezTerm), then the
//! platform's window (macOS Terminal and iTerm2 by tty, a Windows console window, an X11 window by
//! `_NET_WM_PID`). Raising the wrong window is worse than raising none, so whenever two windows
//! could be the one, or a fact that would tell is missing, the plan says why instead.
//!
//! This module is pure: no I/O, no clock. It also holds the parsers for the tools' text output, so
//! they are tested without the tools. Gathering the facts and running the steps is `focus`'s job.

use std::fmt;

/// The operating system the facts were gathered on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Platform {
    #[default]
    Linux,
    MacOs,
    Windows,
    /// Another Unix (the BSDs): X11 by pid may still work there.
    Other,
}

/// One process on the way from the session's process up to pid 1.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ancestor {
    pub pid: u32,
    pub ppid: Option<u32>,
    /// The short name (`comm` on Linux, which is cut at 15 bytes).
    pub name: String,
    pub cmd: Vec<String>,
}

impl Ancestor {
    /// The program's name in lower case: the base name of `argv[0]` when there is one, because
    /// `comm` cuts `gnome-terminal-server` to `gnome-terminal-`.
    pub fn program(&self) -> String {
        let first = self
            .cmd
            .first()
            .map(String::as_str)
            .filter(|arg| !arg.is_empty());
        let raw = first.unwrap_or(&self.name);
        let base = raw.rsplit(['/', '\\']).next().unwrap_or(raw);
        let base = base.strip_suffix(".exe").unwrap_or(base);
        base.to_ascii_lowercase()
    }
}

/// The environment variables of a process that say where it runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Environment {
    pub tmux: Option<String>,
    pub tmux_pane: Option<String>,
    pub kitty_window_id: Option<String>,
    pub kitty_listen_on: Option<String>,
    pub wezterm_pane: Option<String>,
    pub wezterm_unix_socket: Option<String>,
    pub term_program: Option<String>,
    pub windowid: Option<String>,
    pub display: Option<String>,
    pub wayland_display: Option<String>,
}

impl Environment {
    /// Picks the variables Slate cares about out of `NAME=value` entries (as in
    /// `/proc/<pid>/environ`, split at NUL). Other entries, and entries without `=`, are ignored;
    /// an empty value counts as unset.
    pub fn from_entries<'a>(entries: impl IntoIterator<Item = &'a str>) -> Environment {
        let mut env = Environment::default();
        for entry in entries {
            let Some((name, value)) = entry.split_once('=') else {
                continue;
            };
            if value.is_empty() {
                continue;
            }
            let slot = match name {
                "TMUX" => &mut env.tmux,
                "TMUX_PANE" => &mut env.tmux_pane,
                "KITTY_WINDOW_ID" => &mut env.kitty_window_id,
                "KITTY_LISTEN_ON" => &mut env.kitty_listen_on,
                "WEZTERM_PANE" => &mut env.wezterm_pane,
                "WEZTERM_UNIX_SOCKET" => &mut env.wezterm_unix_socket,
                "TERM_PROGRAM" => &mut env.term_program,
                "WINDOWID" => &mut env.windowid,
                "DISPLAY" => &mut env.display,
                "WAYLAND_DISPLAY" => &mut env.wayland_display,
                _ => continue,
            };
            *slot = Some(value.to_string());
        }
        env
    }

    /// True when a variable says which multiplexer or terminal the process runs in.
    pub fn names_a_terminal(&self) -> bool {
        self.tmux.is_some() || self.kitty_window_id.is_some() || self.wezterm_pane.is_some()
    }

    /// The tmux server's socket path: `$TMUX` is `<socket>,<server pid>,<session index>`.
    pub fn tmux_socket(&self) -> Option<&str> {
        let value = self.tmux.as_deref()?;
        let socket = value.split(',').next().unwrap_or(value);
        (!socket.is_empty()).then_some(socket)
    }
}

/// A process that lives in a terminal: the session's process, or a tmux client showing its pane.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Host {
    pub pid: u32,
    /// The process itself first, then its parent, up to pid 1 or the first unreadable parent.
    pub ancestors: Vec<Ancestor>,
    /// What its standard input is: `/dev/pts/3` for a terminal, `/dev/null`, `pipe:[…]`, or `None`
    /// when it could not be read.
    pub tty: Option<String>,
    pub env: Environment,
}

/// One pane of a tmux server, from `list-panes -a`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmuxPane {
    pub tty: String,
    /// `%N`, unique on the server and stable while the pane lives.
    pub pane_id: String,
    pub session: String,
    pub window_index: String,
    pub pane_index: String,
}

impl TmuxPane {
    /// `session:window.pane`, as a person reads it.
    pub fn target(&self) -> String {
        format!("{}:{}.{}", self.session, self.window_index, self.pane_index)
    }
}

/// One client attached to a tmux server, from `list-clients`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmuxClient {
    pub tty: String,
    pub pid: u32,
    pub session: String,
    /// The client process with its ancestors and environment, to find the window it draws in.
    pub host: Option<Host>,
}

/// What the tmux server of `$TMUX` said.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TmuxFacts {
    pub socket: String,
    pub panes: Vec<TmuxPane>,
    pub clients: Vec<TmuxClient>,
    /// Why the server could not be asked, when it could not.
    pub error: Option<String>,
}

/// A top-level X11 window and the pid in its `_NET_WM_PID`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct X11Window {
    pub id: u64,
    pub pid: u32,
    pub title: String,
}

/// The windows of one X11 display.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct X11Display {
    pub name: String,
    pub windows: Vec<X11Window>,
    /// Why the windows could not be listed, when they could not.
    pub error: Option<String>,
}

/// Which helper programs are installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tools {
    pub tmux: bool,
    pub xdotool: bool,
    pub wmctrl: bool,
    pub kitty: bool,
    pub wezterm: bool,
    pub osascript: bool,
}

/// Everything `choose` looks at.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Facts {
    pub platform: Platform,
    /// The session's process; `None` when the session has no live process.
    pub pid: Option<u32>,
    /// The session's process in its terminal; `None` when the pid is gone.
    pub host: Option<Host>,
    /// The tmux server of the session's `$TMUX`, when it has one.
    pub tmux: Option<TmuxFacts>,
    pub displays: Vec<X11Display>,
    /// Slate's own `DISPLAY` and `WAYLAND_DISPLAY`, used when the session's are unknown.
    pub own_display: Option<String>,
    pub own_wayland_display: Option<String>,
    /// Windows: the console window of the session, when something recorded it.
    pub console_window: Option<u64>,
    pub tools: Tools,
}

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
            Step::AppleScript { app, tty } => plain("osascript", &["-e", &apple_script(*app, tty)]),
            Step::WindowsForeground { .. } => return None,
        })
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
                _ => Ok(()),
            };
        };
        for (name, value) in &line.env {
            write!(f, "{name}={value} ")?;
        }
        write!(f, "{}", line.program)?;
        for arg in &line.args {
            if arg.is_empty() || arg.contains([' ', '\'', '"', '\\', '$']) {
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

/// Terminals that draw many windows from one process. A single window of theirs is still the
/// right window, but the tab inside it is not selected by raising it.
const TABBED_TERMINALS: &[&str] = &[
    "gnome-terminal-server",
    "gnome-terminal-",
    "konsole",
    "tilix",
    "xfce4-terminal",
    "mate-terminal",
    "terminator",
    "guake",
    "yakuake",
    "kitty",
    "wezterm-gui",
    "alacritty",
    "foot",
    "urxvtd",
    "code",
    "cursor",
];

/// True for a program that draws terminals for the processes below it (a multiplexer's server,
/// a terminal emulator): the variables that say where a process runs stop at it.
pub fn draws_terminals(program: &str) -> bool {
    program.starts_with("tmux")
        || program.starts_with("screen")
        || program.starts_with("wezterm")
        || TABBED_TERMINALS.contains(&program)
        || matches!(program, "xterm" | "urxvt" | "st" | "konsole" | "sshd")
}

/// Decides how to bring the session of `facts` to the front.
pub fn choose(facts: &Facts) -> Plan {
    let Some(pid) = facts.pid else {
        return unsure("the session has no live process");
    };
    let Some(host) = &facts.host else {
        return unsure(format!("process {pid} is gone"));
    };
    // A pane is the session's when its terminal is the process's; tmux's variables are inherited
    // by whatever a pane's shell starts, so a process that carries them in a terminal of its own
    // (`kitty codex` started from a pane) is focused as the window it is in, never as that pane.
    let asked = facts.tmux.as_ref().filter(|tmux| tmux.error.is_none());
    let in_pane = asked.is_some_and(|tmux| pane_of(host, tmux).is_some());
    let inherited = host.env.tmux.is_some() && asked.is_some() && !in_pane;
    if in_pane || (host.env.tmux.is_some() && !inherited) {
        return tmux_plan(facts, host);
    }
    match window_plan(facts, host) {
        Ok((steps, caveat)) => Plan::Run { steps, caveat },
        Err(reason) => Plan::Unsure { reason },
    }
}

fn unsure(reason: impl Into<String>) -> Plan {
    Plan::Unsure {
        reason: reason.into(),
    }
}

/// True for a path that names a terminal device.
fn is_terminal(tty: &str) -> bool {
    (tty.starts_with("/dev/pts/") || tty.starts_with("/dev/tty"))
        && tty
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '/' || c == '_' || c == '.')
}

/// The pane of `tmux` whose terminal is the process's controlling terminal.
fn pane_of<'a>(host: &Host, tmux: &'a TmuxFacts) -> Option<&'a TmuxPane> {
    let tty = host.tty.as_deref().filter(|tty| is_terminal(tty))?;
    tmux.panes.iter().find(|pane| pane.tty == tty)
}

/// The session runs in tmux: select its pane, then raise the terminal of the client showing it.
fn tmux_plan(facts: &Facts, host: &Host) -> Plan {
    let Some(tmux) = &facts.tmux else {
        return unsure(if facts.tools.tmux {
            "the session runs in tmux, but its server could not be asked".to_string()
        } else {
            "the session runs in tmux, but tmux is not installed here".to_string()
        });
    };
    if let Some(error) = &tmux.error {
        return unsure(format!(
            "the session runs in tmux, but its server ({}) could not be asked: {error}",
            tmux.socket
        ));
    }
    // The terminal device is the truth; `$TMUX_PANE` is inherited and never decides.
    let Some(pane) = pane_of(host, tmux) else {
        return unsure(format!(
            "process {} runs under tmux, but no pane of the server {} has its terminal",
            host.pid, tmux.socket
        ));
    };
    let socket = tmux.socket.clone();
    let mut steps = vec![
        Step::TmuxSelectWindow {
            socket: socket.clone(),
            pane_id: pane.pane_id.clone(),
        },
        Step::TmuxSelectPane {
            socket: socket.clone(),
            pane_id: pane.pane_id.clone(),
        },
    ];
    let showing: Vec<&TmuxClient> = tmux
        .clients
        .iter()
        .filter(|client| client.session == pane.session)
        .collect();
    let client = match (showing.as_slice(), tmux.clients.as_slice()) {
        ([one], _) => *one,
        ([], []) => {
            return Plan::Run {
                steps,
                caveat: Some(format!(
                    "pane {} is selected, but no tmux client is attached, so no window shows it",
                    pane.target()
                )),
            };
        }
        ([], [other]) => {
            steps.push(Step::TmuxSwitchClient {
                socket,
                client_tty: other.tty.clone(),
                pane_id: pane.pane_id.clone(),
            });
            other
        }
        ([], many) => {
            return Plan::Run {
                steps,
                caveat: Some(format!(
                    "pane {} is selected, but no tmux client shows session {:?} and {} clients \
                     show others, so none was switched",
                    pane.target(),
                    pane.session,
                    many.len()
                )),
            };
        }
        (many, _) => {
            return Plan::Run {
                steps,
                caveat: Some(format!(
                    "pane {} is selected, but {} tmux clients show session {:?}, so no window was \
                     raised",
                    pane.target(),
                    many.len(),
                    pane.session
                )),
            };
        }
    };
    let raised = match &client.host {
        None => Err(format!("tmux client {} is gone", client.pid)),
        Some(client_host) if inside_tmux(client_host) => Err(format!(
            "tmux client {} runs inside another tmux",
            client.pid
        )),
        Some(client_host) => window_plan(facts, client_host),
    };
    match raised {
        Ok((more, caveat)) => {
            steps.extend(more);
            Plan::Run { steps, caveat }
        }
        Err(reason) => Plan::Run {
            steps,
            caveat: Some(format!(
                "pane {} is selected, but the terminal window of its tmux client was not raised: \
                 {reason}",
                pane.target()
            )),
        },
    }
}

/// True when a tmux client itself runs in a tmux pane: its window belongs to the outer server's
/// client, which these facts do not cover. `$TMUX` may have been unset to allow the nesting, so
/// a tmux process among its parents counts too.
fn inside_tmux(client: &Host) -> bool {
    client.env.tmux.is_some()
        || client
            .ancestors
            .iter()
            .skip(1)
            .any(|ancestor| ancestor.program() == "tmux" || ancestor.name.starts_with("tmux"))
}

/// True when a process on the way up is this terminal; an inherited variable alone can be stale.
fn runs_under(host: &Host, programs: &[&str]) -> bool {
    host.ancestors
        .iter()
        .any(|ancestor| programs.contains(&ancestor.program().as_str()))
}

type Steps = (Vec<Step>, Option<String>);

/// The steps that raise the window (and where possible the tab) whose terminal `host` runs in.
fn window_plan(facts: &Facts, host: &Host) -> Result<Steps, String> {
    let env = &host.env;
    if facts.platform != Platform::Windows {
        match host.tty.as_deref() {
            Some(tty) if is_terminal(tty) => {}
            Some(other) => {
                return Err(format!(
                    "process {} has no terminal (its input is {other})",
                    host.pid
                ))
            }
            None => {
                return Err(format!(
                    "process {} has no terminal Slate can find",
                    host.pid
                ))
            }
        }
    }
    if let (Some(window_id), Some(listen_on)) = (&env.kitty_window_id, &env.kitty_listen_on) {
        if facts.tools.kitty && runs_under(host, &["kitty"]) {
            // kitty raises the OS window of the window it focuses.
            let step = Step::KittyFocusWindow {
                listen_on: listen_on.clone(),
                window_id: window_id.clone(),
            };
            return Ok((vec![step], None));
        }
    }
    if let Some(pane_id) = &env.wezterm_pane {
        if facts.tools.wezterm && runs_under(host, &["wezterm-gui", "wezterm"]) {
            let step = Step::WeztermActivatePane {
                pane_id: pane_id.clone(),
                socket: env.wezterm_unix_socket.clone(),
            };
            // The pane is active now; its OS window still has to be raised (wezterm#3542).
            return Ok(match os_window_plan(facts, host) {
                Ok((mut more, caveat)) => {
                    more.insert(0, step);
                    (more, caveat)
                }
                Err(reason) => (
                    vec![step],
                    Some(format!(
                        "the WezTerm pane is active, but its window was not raised: {reason}"
                    )),
                ),
            });
        }
    }
    os_window_plan(facts, host)
}

/// The platform's own way to raise the window of `host`'s terminal.
fn os_window_plan(facts: &Facts, host: &Host) -> Result<Steps, String> {
    match facts.platform {
        Platform::MacOs => mac_plan(facts, host),
        Platform::Windows => match facts.console_window {
            Some(hwnd) => Ok((vec![Step::WindowsForeground { hwnd }], None)),
            None => Err(format!(
                "the console window of process {} is not known",
                host.pid
            )),
        },
        Platform::Linux | Platform::Other => x11_plan(facts, host),
    }
}

fn mac_plan(facts: &Facts, host: &Host) -> Result<Steps, String> {
    let app = match host.env.term_program.as_deref() {
        Some("Apple_Terminal") => MacTerminal::Terminal,
        Some("iTerm.app") => MacTerminal::ITerm2,
        Some(other) => {
            return Err(format!(
                "the session runs in {other}, and on macOS Slate can select tabs only in Terminal \
                 and iTerm2"
            ))
        }
        None => return Err("the session's terminal program is unknown".to_string()),
    };
    if !facts.tools.osascript {
        return Err("osascript is not available".to_string());
    }
    // `window_plan` checked that the tty is a terminal path with plain characters.
    let tty = host.tty.clone().unwrap_or_default();
    Ok((vec![Step::AppleScript { app, tty }], None))
}

fn x11_plan(facts: &Facts, host: &Host) -> Result<Steps, String> {
    let wayland = host
        .env
        .wayland_display
        .as_ref()
        .or(facts.own_wayland_display.as_ref())
        .is_some();
    let Some(display_name) = host.env.display.as_ref().or(facts.own_display.as_ref()) else {
        return Err(if wayland {
            "the session's terminal is a Wayland window, and Wayland lets no program raise \
             another's window"
                .to_string()
        } else {
            "no X11 display is known for the session".to_string()
        });
    };
    let tool = if facts.tools.wmctrl {
        X11Tool::Wmctrl
    } else if facts.tools.xdotool {
        X11Tool::Xdotool
    } else {
        return Err(
            "raising an X11 window needs wmctrl or xdotool, and neither is installed".to_string(),
        );
    };
    let Some(display) = facts
        .displays
        .iter()
        .find(|display| &display.name == display_name)
    else {
        return Err(format!(
            "the windows of X11 display {display_name} were not listed"
        ));
    };
    if let Some(error) = &display.error {
        return Err(format!(
            "the windows of X11 display {display_name} could not be listed: {error}"
        ));
    }
    for ancestor in &host.ancestors {
        if ancestor.pid <= 1 {
            break;
        }
        let owned: Vec<&X11Window> = display
            .windows
            .iter()
            .filter(|window| window.pid == ancestor.pid)
            .collect();
        let program = ancestor.program();
        let window = match owned.as_slice() {
            [] => continue,
            [one] => one,
            many => {
                // `$WINDOWID` names the window of the terminal that started the process; it
                // settles the choice only when it is one of the candidates.
                let named = host
                    .env
                    .windowid
                    .as_deref()
                    .and_then(parse_window_id)
                    .and_then(|id| many.iter().find(|window| window.id == id));
                match named {
                    Some(window) => window,
                    None => {
                        return Err(format!(
                            "{program} (pid {}) owns {} windows, and nothing tells which one shows \
                             the session",
                            ancestor.pid,
                            many.len()
                        ))
                    }
                }
            }
        };
        let caveat = TABBED_TERMINALS.contains(&program.as_str()).then(|| {
            format!("{program} shows tabs; its window was raised, but the tab was not selected")
        });
        let step = Step::X11Activate {
            display: display_name.clone(),
            window: window.id,
            tool,
        };
        return Ok((vec![step], caveat));
    }
    Err(if wayland {
        format!(
            "no X11 window belongs to process {} or its parents; its terminal is likely a \
             Wayland window, which no program may raise",
            host.pid
        )
    } else {
        format!(
            "no X11 window belongs to process {} or its parents",
            host.pid
        )
    })
}

/// Reads a window id written in decimal or as `0x…` hex.
pub fn parse_window_id(text: &str) -> Option<u64> {
    let text = text.trim();
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// The separator of the tmux formats below: a tab, which session names do not hold in practice.
pub const TMUX_PANE_FORMAT: &str =
    "#{pane_tty}\t#{pane_id}\t#{window_index}\t#{pane_index}\t#{session_name}";
pub const TMUX_CLIENT_FORMAT: &str = "#{client_tty}\t#{client_pid}\t#{client_session}";

/// Parses `list-panes -a -F TMUX_PANE_FORMAT`. Lines that do not fit are skipped.
pub fn parse_tmux_panes(text: &str) -> Vec<TmuxPane> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.splitn(5, '\t');
            let tty = fields.next()?;
            let pane_id = fields.next()?;
            let window_index = fields.next()?;
            let pane_index = fields.next()?;
            let session = fields.next()?;
            pane_id.starts_with('%').then(|| TmuxPane {
                tty: tty.to_string(),
                pane_id: pane_id.to_string(),
                session: session.to_string(),
                window_index: window_index.to_string(),
                pane_index: pane_index.to_string(),
            })
        })
        .collect()
}

/// Parses `list-clients -F TMUX_CLIENT_FORMAT`, leaving each client's `host` empty.
pub fn parse_tmux_clients(text: &str) -> Vec<TmuxClient> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, '\t');
            let tty = fields.next()?;
            let pid = fields.next()?.parse().ok()?;
            let session = fields.next()?;
            Some(TmuxClient {
                tty: tty.to_string(),
                pid,
                session: session.to_string(),
                host: None,
            })
        })
        .collect()
}

/// Parses `wmctrl -lp`: `<id> <desktop> <pid> <host> <title…>`. A pid of 0 (a window without
/// `_NET_WM_PID`) is kept; it matches no process.
pub fn parse_wmctrl(text: &str) -> Vec<X11Window> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let id = parse_window_id(fields.next()?)?;
            let _desktop = fields.next()?;
            let pid = fields.next()?.parse().ok()?;
            let _host = fields.next();
            let title = fields.collect::<Vec<_>>().join(" ");
            Some(X11Window { id, pid, title })
        })
        .collect()
}

/// Parses `xdotool search --pid <pid>`: one decimal window id a line.
pub fn parse_xdotool_search(text: &str, pid: u32) -> Vec<X11Window> {
    text.lines()
        .filter_map(parse_window_id)
        .map(|id| X11Window {
            id,
            pid,
            title: String::new(),
        })
        .collect()
}

/// Turns `ps -o tty=` output (`ttys003`, or `??` with no terminal) into a device path.
pub fn parse_ps_tty(text: &str) -> Option<String> {
    let tty = text.trim();
    if tty.is_empty() || tty.starts_with('?') {
        return None;
    }
    Some(if tty.starts_with("/dev/") {
        tty.to_string()
    } else {
        format!("/dev/{tty}")
    })
}
