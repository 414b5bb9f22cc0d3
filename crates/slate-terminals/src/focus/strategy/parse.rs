//! Parsers for the tools' text output (`tmux list-panes` and `list-clients` in the formats given
//! here, `wmctrl -lp`, `xdotool search`, `ps -o tty=`), so that they are tested without the tools.

use super::{CompositorWindow, TmuxClient, TmuxPane, X11Window};

/// Reads a window id written in decimal or as `0x…` hex.
pub fn parse_window_id(text: &str) -> Option<u64> {
    let text = text.trim();
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// The separator of the tmux formats below: a tab, which session names do not hold in practice.
/// `pane_active` and `window_active` say whether the pane is the one its session shows.
pub const TMUX_PANE_FORMAT: &str = "#{pane_tty}\t#{pane_id}\t#{window_index}\t#{pane_index}\t\
     #{pane_active}\t#{window_active}\t#{session_name}";
pub const TMUX_CLIENT_FORMAT: &str = "#{client_tty}\t#{client_pid}\t#{client_session}";

/// Parses `list-panes -a -F TMUX_PANE_FORMAT`. Lines that do not fit are skipped.
pub fn parse_tmux_panes(text: &str) -> Vec<TmuxPane> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.splitn(7, '\t');
            let tty = fields.next()?;
            let pane_id = fields.next()?;
            let window_index = fields.next()?;
            let pane_index = fields.next()?;
            let pane_active = fields.next()?;
            let window_active = fields.next()?;
            let session = fields.next()?;
            pane_id.starts_with('%').then(|| TmuxPane {
                tty: tty.to_string(),
                pane_id: pane_id.to_string(),
                session: session.to_string(),
                window_index: window_index.to_string(),
                pane_index: pane_index.to_string(),
                shown: pane_active == "1" && window_active == "1",
            })
        })
        .collect()
}

/// Reads `xdotool getactivewindow` (a decimal id) or `xprop -root _NET_ACTIVE_WINDOW`
/// (`_NET_ACTIVE_WINDOW(WINDOW): window id # 0x1400006`): the focused window, `None` when
/// there is none (id 0) or the text says nothing.
pub fn parse_active_window(text: &str) -> Option<u64> {
    let text = text.trim();
    let id = match text.rsplit_once('#') {
        Some((_, id)) => id,
        None => text,
    };
    let id = id.split(',').next().unwrap_or(id);
    parse_window_id(id).filter(|id| *id != 0)
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

/// How deep `parse_sway_tree` follows nested containers; Sway's trees are a handful deep.
const SWAY_DEPTH: usize = 32;

/// Reads `swaymsg -t get_tree` (JSON): every container with a `pid` (a client's window, tiled or
/// floating) with its id, `app_id` and `focused`. Text that is not such a tree is an error.
pub fn parse_sway_tree(text: &str) -> Result<Vec<CompositorWindow>, String> {
    let tree: serde_json::Value =
        serde_json::from_str(text).map_err(|err| format!("swaymsg's tree is not JSON: {err}"))?;
    if !tree.is_object() {
        return Err("swaymsg's tree is not an object".to_string());
    }
    let mut windows = Vec::new();
    let mut stack = vec![(&tree, 0)];
    while let Some((node, depth)) = stack.pop() {
        if depth > SWAY_DEPTH {
            return Err(format!("swaymsg's tree is deeper than {SWAY_DEPTH}"));
        }
        let pid = node.get("pid").and_then(serde_json::Value::as_u64);
        let id = node.get("id").and_then(serde_json::Value::as_u64);
        if let (Some(pid), Some(id)) = (pid, id) {
            windows.push(CompositorWindow {
                id,
                pid: u32::try_from(pid).unwrap_or(0),
                app_id: short_text(node.get("app_id")),
                focused: node.get("focused").and_then(serde_json::Value::as_bool) == Some(true),
            });
        }
        // Pushed last, popped first: tiled windows before floating ones, in the tree's order.
        for key in ["floating_nodes", "nodes"] {
            if let Some(children) = node.get(key).and_then(serde_json::Value::as_array) {
                stack.extend(children.iter().rev().map(|child| (child, depth + 1)));
            }
        }
    }
    Ok(windows)
}

/// At most 200 characters of a JSON string (an app id or a class): enough to name a program.
fn short_text(value: Option<&serde_json::Value>) -> String {
    value
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .chars()
        .take(200)
        .collect()
}

/// Reads `hyprctl -j clients` (a JSON list of windows): each mapped window with its `address`
/// (`0x` and hex digits), its client's `pid`, its `class`, and whether it has the focus (its
/// `focusHistoryID` is 0). A window without a positive pid or a readable address is left out;
/// text that is not such a list is an error.
pub fn parse_hyprland_clients(text: &str) -> Result<Vec<CompositorWindow>, String> {
    let list: serde_json::Value = serde_json::from_str(text)
        .map_err(|err| format!("hyprctl's clients are not JSON: {err}"))?;
    let Some(clients) = list.as_array() else {
        return Err("hyprctl's clients are not a list".to_string());
    };
    Ok(clients
        .iter()
        .filter(|client| client.get("mapped").and_then(serde_json::Value::as_bool) != Some(false))
        .filter_map(|client| {
            let address = client.get("address")?.as_str()?.strip_prefix("0x")?;
            let id = u64::from_str_radix(address, 16).ok()?;
            let pid = u32::try_from(client.get("pid")?.as_i64()?).ok()?;
            Some(CompositorWindow {
                id,
                pid,
                app_id: short_text(client.get("class")),
                focused: client
                    .get("focusHistoryID")
                    .and_then(serde_json::Value::as_i64)
                    == Some(0),
            })
        })
        .filter(|window| window.pid > 0)
        .collect())
}
