//! Parsers for the tools' text output (`tmux list-panes` and `list-clients` in the formats given
//! here, `wmctrl -lp`, `xdotool search`, `ps -o tty=`), so that they are tested without the tools.

use super::{TmuxClient, TmuxPane, X11Window};

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
