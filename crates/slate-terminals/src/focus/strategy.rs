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
//!
//! This file holds the facts; `plan` holds the plan and its steps with the commands that run
//! them, `decide` the choice itself, `front` whether the session's terminal is in front (for
//! "quiet while you look") and `parse` the parsers.

mod decide;
mod front;
mod parse;
mod plan;

pub use decide::{choose, draws_terminals};
pub use front::{looking, Looking};
pub use parse::{
    parse_active_window, parse_hyprland_clients, parse_ps_tty, parse_sway_tree, parse_tmux_clients,
    parse_tmux_panes, parse_window_id, parse_wmctrl, parse_xdotool_search, TMUX_CLIENT_FORMAT,
    TMUX_PANE_FORMAT,
};
pub use plan::{kwin_script, CommandLine, MacTerminal, Plan, Step, X11Tool};

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
    /// Sway's IPC socket, which every client of a Sway session inherits.
    pub swaysock: Option<String>,
    /// The Hyprland instance, which every client of a Hyprland session inherits.
    pub hyprland_instance: Option<String>,
    /// The desktop session's bus, where KDE Plasma's KWin takes scripts.
    pub dbus_session: Option<String>,
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
                "SWAYSOCK" => &mut env.swaysock,
                "HYPRLAND_INSTANCE_SIGNATURE" => &mut env.hyprland_instance,
                "DBUS_SESSION_BUS_ADDRESS" => &mut env.dbus_session,
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
    /// Whether it is the pane its session shows: the active pane of the active window.
    pub shown: bool,
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
    /// The focused window (`_NET_ACTIVE_WINDOW`), when the tools could tell.
    pub active: Option<u64>,
}

/// A Wayland compositor that lists its windows with their clients' pids and focuses one on
/// request, through its IPC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compositor {
    /// Sway, through `swaymsg` and the session's `$SWAYSOCK`.
    #[default]
    Sway,
    /// Hyprland, through `hyprctl` and the session's `$HYPRLAND_INSTANCE_SIGNATURE`.
    Hyprland,
}

impl Compositor {
    pub fn name(self) -> &'static str {
        match self {
            Compositor::Sway => "Sway",
            Compositor::Hyprland => "Hyprland",
        }
    }
}

/// A window of a compositor's session: its id (Sway's container id from `swaymsg -t get_tree`,
/// Hyprland's window address from `hyprctl -j clients`), the pid of the client that draws it, its
/// app id (Hyprland's class), and whether it has the focus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompositorWindow {
    pub id: u64,
    pub pid: u32,
    pub app_id: String,
    pub focused: bool,
}

/// The windows of the compositor's session at `socket` (Sway's IPC socket, or Hyprland's
/// instance signature).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompositorFacts {
    pub compositor: Compositor,
    pub socket: String,
    pub windows: Vec<CompositorWindow>,
    /// Why the windows could not be listed, when they could not.
    pub error: Option<String>,
}

/// Every process that may draw the session's terminal: the session's own (`host`), and each
/// client of the tmux server whose pane has its terminal.
pub fn terminal_hosts<'a>(host: Option<&'a Host>, tmux: Option<&'a TmuxFacts>) -> Vec<&'a Host> {
    let clients = tmux.into_iter().flat_map(|tmux| {
        tmux.clients
            .iter()
            .filter_map(|client| client.host.as_ref())
    });
    host.into_iter().chain(clients).collect()
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
    pub swaymsg: bool,
    pub hyprctl: bool,
    pub dbus_send: bool,
}

/// One window of a kitty that listens for remote control, from its `ls`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KittyWindow {
    pub id: u64,
    /// The terminal of the process kitty started in it, which is the window's own.
    pub tty: Option<String>,
    /// Its OS window has the focus, its tab is that OS window's active one, and it is the tab's
    /// active window: what the person is looking at, by kitty's own account.
    pub in_front: bool,
}

/// The windows of the kitty listening on `listen_on`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KittyFacts {
    pub listen_on: String,
    pub windows: Vec<KittyWindow>,
    /// Why kitty could not be asked, when it could not.
    pub error: Option<String>,
}

/// A WezTerm mux's panes and its GUI clients, from `wezterm cli list` and `list-clients`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WeztermFacts {
    /// The mux socket asked (`$WEZTERM_UNIX_SOCKET`), or `""` for the one `wezterm cli` finds.
    pub socket: String,
    /// Each pane's id with its terminal device (`tty_name`).
    pub panes: Vec<(u64, String)>,
    /// Each GUI client's pid with the pane that has the focus in it (`focused_pane_id`).
    pub clients: Vec<(u32, u64)>,
    /// Why the mux could not be asked, when it could not.
    pub error: Option<String>,
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
    /// The compositor session of the session's terminal: Sway (its `$SWAYSOCK`, or Slate's own)
    /// when swaymsg is installed, else Hyprland (its `$HYPRLAND_INSTANCE_SIGNATURE`, or Slate's
    /// own) when hyprctl is.
    pub compositor: Option<CompositorFacts>,
    /// A KDE Plasma session (Slate's `$XDG_CURRENT_DESKTOP` names KDE), whose KWin takes scripts
    /// on the session bus.
    pub kde: bool,
    /// The kitties the session's terminal or a tmux client of its pane may draw in, asked over
    /// the socket their `$KITTY_LISTEN_ON` names by `terminals::front` (`focus::gather` leaves
    /// this empty: focusing does not need it).
    pub kitty: Vec<KittyFacts>,
    /// The WezTerm mux the session's terminal (or a tmux client of its pane) runs in, asked by
    /// `terminals::front` like `kitty`.
    pub wezterm: Option<WeztermFacts>,
    /// Slate's own `DISPLAY` and `WAYLAND_DISPLAY`, used when the session's are unknown.
    pub own_display: Option<String>,
    pub own_wayland_display: Option<String>,
    /// Windows: the console window of the session, when something recorded it.
    pub console_window: Option<u64>,
    pub tools: Tools,
}
