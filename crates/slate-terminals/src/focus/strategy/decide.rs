//! The choice itself, in docs/states.md §6's order: the tmux pane whose terminal is the
//! session's (then the window of the client that shows it), else the terminal's own remote
//! control (kitty, WezTerm), else the platform's window (macOS Terminal and iTerm2 by tty, a
//! Windows console window, an X11 window by `_NET_WM_PID`), or why none is sure.

use super::parse::parse_window_id;
use super::plan::{MacTerminal, Plan, Step, X11Tool};
use super::{Compositor, Facts, Host, Platform, TmuxClient, TmuxFacts, TmuxPane, X11Window};

/// Terminals that show tabs (or panes) in one window. A single window of theirs is still the
/// right window, but the tab inside it is not selected by raising it. Those that only draw many
/// windows from one process (foot's server, urxvtd, alacritty) have no tabs: one window of
/// theirs is the session's whole.
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
        || matches!(
            program,
            "xterm" | "urxvt" | "urxvtd" | "st" | "konsole" | "sshd" | "foot" | "alacritty"
        )
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
pub(super) fn pane_of<'a>(host: &Host, tmux: &'a TmuxFacts) -> Option<&'a TmuxPane> {
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
pub(super) fn inside_tmux(client: &Host) -> bool {
    client.env.tmux.is_some()
        || client
            .ancestors
            .iter()
            .skip(1)
            .any(|ancestor| ancestor.program() == "tmux" || ancestor.name.starts_with("tmux"))
}

/// True when a process on the way up is this terminal; an inherited variable alone can be stale.
pub(super) fn runs_under(host: &Host, programs: &[&str]) -> bool {
    host.ancestors
        .iter()
        .any(|ancestor| programs.contains(&ancestor.program().as_str()))
}

pub(super) type Steps = (Vec<Step>, Option<String>);

/// The steps that raise the window (and where possible the tab) whose terminal `host` runs in.
pub(super) fn window_plan(facts: &Facts, host: &Host) -> Result<Steps, String> {
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
        Platform::Linux | Platform::Other => match compositor_plan(facts, host) {
            Some(planned) => planned,
            None => match kwin_plan(facts, host) {
                Some(planned) => planned,
                None => x11_plan(facts, host),
            },
        },
    }
}

/// The compositor's own way, when the facts hold a Sway or Hyprland session: focus the window of
/// `host`'s terminal through the compositor's IPC, found by the pid of the client that draws it.
/// `None` leaves it to X11: no such session is known, or the terminal is an X11 window of another
/// display.
fn compositor_plan(facts: &Facts, host: &Host) -> Option<Result<Steps, String>> {
    let session = facts.compositor.as_ref()?;
    let name = session.compositor.name();
    let env = &host.env;
    let on_wayland =
        env.wayland_display.is_some() || env.swaysock.is_some() || env.hyprland_instance.is_some();
    if let Some(error) = &session.error {
        return on_wayland.then(|| {
            Err(format!(
                "the windows of the {name} session could not be listed: {error}"
            ))
        });
    }
    for ancestor in host
        .ancestors
        .iter()
        .take_while(|ancestor| ancestor.pid > 1)
    {
        let owned: Vec<_> = session
            .windows
            .iter()
            .filter(|window| window.pid == ancestor.pid)
            .collect();
        let program = ancestor.program();
        match owned.as_slice() {
            [] => continue,
            [window] => {
                let caveat = TABBED_TERMINALS.contains(&program.as_str()).then(|| {
                    format!("{program} shows tabs; its window was focused, but the tab was not selected")
                });
                let step = match session.compositor {
                    Compositor::Sway => Step::SwayFocus {
                        socket: session.socket.clone(),
                        con_id: window.id,
                    },
                    Compositor::Hyprland => Step::HyprlandFocus {
                        instance: session.socket.clone(),
                        address: window.id,
                    },
                };
                return Some(Ok((vec![step], caveat)));
            }
            many => {
                return Some(Err(format!(
                    "{program} (pid {}) owns {} {name} windows, and nothing tells which one shows \
                     the session",
                    ancestor.pid,
                    many.len()
                )))
            }
        }
    }
    on_wayland.then(|| {
        Err(format!(
            "no {name} window belongs to process {} or its parents",
            host.pid
        ))
    })
}

/// KDE Plasma on Wayland: a KWin script that activates the one window of the nearest process,
/// from `host`'s up to its terminal's, that has any. KWin runs it without saying what it found,
/// so the plan says so. `None` leaves it to X11: not Plasma, not Wayland, or no dbus-send.
fn kwin_plan(facts: &Facts, host: &Host) -> Option<Result<Steps, String>> {
    if !facts.kde || !facts.tools.dbus_send || host.env.wayland_display.is_none() {
        return None;
    }
    let mut pids = Vec::new();
    let mut terminal = None;
    for ancestor in host
        .ancestors
        .iter()
        .take_while(|ancestor| ancestor.pid > 1)
    {
        pids.push(ancestor.pid);
        let program = ancestor.program();
        if draws_terminals(&program) {
            terminal = Some(program);
            break;
        }
    }
    let Some(terminal) = terminal else {
        return Some(Err(format!(
            "no terminal is among the parents of process {}",
            host.pid
        )));
    };
    let mut caveat = "KWin does not tell whether it found one window to activate".to_string();
    if TABBED_TERMINALS.contains(&terminal.as_str()) {
        caveat.push_str(&format!(
            "; {terminal} shows tabs, and the tab is not selected"
        ));
    }
    let step = Step::KwinActivate {
        bus: host.env.dbus_session.clone(),
        pids,
    };
    Some(Ok((vec![step], Some(caveat))))
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
            "the session's terminal is a Wayland window, and this compositor offers no way to \
             focus another program's window (Slate can on Sway and Hyprland through their IPC, \
             and on KDE Plasma through KWin's scripts)"
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
             Wayland window, and this compositor offers no way to focus another program's \
             window (Slate can on Sway and Hyprland through their IPC, and on KDE Plasma \
             through KWin's scripts)",
            host.pid
        )
    } else {
        format!(
            "no X11 window belongs to process {} or its parents",
            host.pid
        )
    })
}
