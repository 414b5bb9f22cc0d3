//! kitty as a terminal backend: the windows of a kitty that listens for remote control, spoken
//! to straight over its socket, so no `kitty @` process starts (one costs about a tenth of a
//! second of CPU).
//!
//! Locating: `$KITTY_WINDOW_ID` and `$KITTY_LISTEN_ON` name a window, a hint kept only once the
//! window's terminal (that of the process kitty started in it, from `ls`) is the process's own.
//! Reading: `ls` for the titles, then `get-text` of each window's screen. Typing: `send-text`,
//! which kitty answers nothing to. The frames and parsers are pure and tested against recorded
//! answers; every exchange, connecting included, has the terminal read limit.

use std::collections::BTreeMap;
use std::time::Instant;

use super::backend::{all_digits, Address, Backend, Hint, PaneRead, ParseError, Wanted};
use super::READ_LIMIT;
use crate::focus::strategy::{Environment, Tools};
use slate_core::agents::keys::Key;
use slate_core::model::{Can, TerminalKind, TerminalView, Timestamp};

/// The kitty backend.
pub struct Kitty;

pub static KITTY: Kitty = Kitty;

/// Window `window` of the kitty listening on `listen_on` for remote control (`unix:<path>`, or
/// `unix:@<name>` for an abstract socket on Linux).
pub fn address(listen_on: impl Into<String>, window: impl Into<String>) -> Address {
    Address::new(&KITTY, listen_on, window)
}

/// What Slate says of a kitty window whose kitty does not listen for remote control.
pub const OFF_NOTE: &str =
    "kitty without remote control: set allow_remote_control and listen_on to see its prompts";

impl Backend for Kitty {
    fn kind(&self) -> TerminalKind {
        TerminalKind::Kitty
    }

    fn can(&self) -> Can {
        Can::EVERYTHING
    }

    fn describe(&self, address: &Address) -> String {
        format!("kitty window {} at {}", address.pane, address.server)
    }

    fn hint(&self, env: &Environment, _tools: &Tools) -> Option<Hint> {
        let window = env.kitty_window_id.clone().filter(|id| all_digits(id))?;
        Some(match env.kitty_listen_on.clone() {
            // kitty is asked over its socket: no `kitty` program is needed where Slate runs.
            Some(listen_on) => Hint::Pane(address(listen_on, window)),
            None => Hint::Unread(TerminalView::unread(
                TerminalKind::Kitty,
                Some(window),
                OFF_NOTE,
            )),
        })
    }

    fn device(&self, address: &Address) -> Result<Option<u64>, String> {
        list(&address.server)
            .map_err(|why| format!("kitty: {why}"))
            .and_then(|json| parse_children(&json).map_err(|e| e.to_string()))
            .map(|children| {
                children
                    .get(&address.pane)
                    .and_then(|pid| crate::tty::Stat::of(*pid))
                    .map(|stat| stat.tty)
            })
    }

    fn unread_is_a_problem(&self) -> bool {
        true
    }

    fn read(&self, listen_on: &str, wanted: &[Wanted], clock: fn() -> Timestamp) -> Vec<PaneRead> {
        super::read_listed(
            wanted,
            clock,
            "kitty",
            || list(listen_on),
            parse_titles,
            |window, colours| command(listen_on, "get-text", get_text(window, colours)),
        )
    }

    fn screen(&self, address: &Address, colours: bool) -> Result<String, String> {
        command(
            &address.server,
            "get-text",
            get_text(&address.pane, colours),
        )
        .map_err(|why| format!("kitty: {why}"))
    }

    fn send(&self, address: &Address, keys: &[Key]) -> Result<(), String> {
        tell(&address.server, "send-text", send_text(&address.pane, keys))
    }
}

/// The version a kitty remote-control command claims. A kitty refuses a command from a newer
/// version than its own, and `ls` and `get-text` have been there since long before this one.
const VERSION: [u32; 3] = [0, 14, 2];

/// One kitty remote-control command as it goes over kitty's socket: `ESC P @kitty-cmd`, the JSON
/// command, `ESC \`.
pub fn frame(cmd: &str, payload: serde_json::Value) -> Vec<u8> {
    framed(serde_json::json!({
        "cmd": cmd,
        "version": VERSION,
        "payload": payload,
    }))
}

/// Like [`frame`], for a command whose answer is not wanted (`"no_response": true`).
pub fn frame_without_answer(cmd: &str, payload: serde_json::Value) -> Vec<u8> {
    framed(serde_json::json!({
        "cmd": cmd,
        "version": VERSION,
        "no_response": true,
        "payload": payload,
    }))
}

fn framed(command: serde_json::Value) -> Vec<u8> {
    let mut frame = b"\x1bP@kitty-cmd".to_vec();
    frame.extend_from_slice(command.to_string().as_bytes());
    frame.extend_from_slice(b"\x1b\\");
    frame
}

/// The payload of `get-text` for one window's visible screen (with its colours, or not).
pub fn get_text(window: &str, colours: bool) -> serde_json::Value {
    serde_json::json!({ "match": format!("id:{window}"), "extent": "screen", "ansi": colours })
}

/// The payload of `send-text` for one window: the keys' bytes as text, not as a paste.
pub fn send_text(window: &str, keys: &[Key]) -> serde_json::Value {
    let text: String = keys.iter().map(Key::bytes).collect();
    serde_json::json!({
        "match": format!("id:{window}"),
        "data": format!("text:{text}"),
        "bracketed_paste": "disable",
    })
}

/// True once `bytes` hold a whole answer frame (it ends with `ESC \`).
pub fn frame_done(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x1bP@kitty-cmd") && bytes.ends_with(b"\x1b\\")
}

/// The `data` of kitty's answer frame: the text it sent, or why it refused.
pub fn parse_frame(bytes: &[u8]) -> Result<String, ParseError> {
    let body = bytes
        .strip_prefix(b"\x1bP@kitty-cmd")
        .and_then(|rest| rest.strip_suffix(b"\x1b\\"))
        .ok_or(ParseError::Unexpected("not a kitty answer frame"))?;
    let answer: serde_json::Value =
        serde_json::from_slice(body).map_err(|_| ParseError::Unexpected("not JSON"))?;
    if answer["ok"] != serde_json::Value::Bool(true) {
        let error = answer["error"].as_str().unwrap_or("refused").to_string();
        return Err(ParseError::Refused(error));
    }
    Ok(match &answer["data"] {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    })
}

/// Every window in `kitty @ ls`'s JSON.
fn windows(json: &str) -> Result<Vec<serde_json::Value>, ParseError> {
    Ok(placed_windows(json)?
        .into_iter()
        .map(|(_, window)| window)
        .collect())
}

/// Every window in `kitty @ ls`'s JSON, with whether its OS window has the focus and its tab is
/// that OS window's active one (`is_focused` of each; a tab's holds only while its OS window has
/// the focus, as recorded in `fixtures/terminals/kitty/ls-focus.json`).
fn placed_windows(json: &str) -> Result<Vec<(bool, serde_json::Value)>, ParseError> {
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|_| ParseError::Unexpected("not JSON"))?;
    let serde_json::Value::Array(os_windows) = value else {
        return Err(ParseError::Unexpected("not a list of OS windows"));
    };
    let focused = |value: &serde_json::Value| value["is_focused"].as_bool() == Some(true);
    // What is not an object, or has no list under `key`, lists nothing (indexing a number or a
    // string mutably would panic).
    let take_list = |value: &mut serde_json::Value, key: &str| match value.get_mut(key) {
        Some(serde_json::Value::Array(list)) => std::mem::take(list),
        _ => Vec::new(),
    };
    Ok(os_windows
        .into_iter()
        .flat_map(|mut os_window| {
            let os_focused = focused(&os_window);
            take_list(&mut os_window, "tabs")
                .into_iter()
                .map(move |tab| (os_focused, tab))
        })
        .flat_map(|(os_focused, mut tab)| {
            let shown = os_focused && focused(&tab);
            take_list(&mut tab, "windows")
                .into_iter()
                .map(move |window| (shown, window))
        })
        .collect())
}

/// One window of `kitty @ ls`'s JSON, for "quiet while you look".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedWindow {
    pub id: u64,
    /// The process kitty started in it.
    pub pid: Option<u32>,
    /// Its OS window has the focus, its tab is the active one, and it is the tab's active window.
    pub in_front: bool,
}

/// Every window of `kitty @ ls`'s JSON, with whether the person is looking at it.
pub fn parse_in_front(json: &str) -> Result<Vec<ListedWindow>, ParseError> {
    Ok(placed_windows(json)?
        .iter()
        .filter_map(|(shown, window)| {
            Some(ListedWindow {
                id: window["id"].as_u64()?,
                pid: window["pid"]
                    .as_u64()
                    .and_then(|pid| u32::try_from(pid).ok()),
                in_front: *shown && window["is_focused"].as_bool() == Some(true),
            })
        })
        .collect())
}

/// `kitty @ ls` over the socket `listen_on` names, within the terminal read limit.
pub fn list(listen_on: &str) -> Result<String, String> {
    command(listen_on, "ls", serde_json::json!({}))
}

/// The title of every window in `kitty @ ls`'s JSON, by window id.
pub fn parse_titles(json: &str) -> Result<BTreeMap<String, String>, ParseError> {
    Ok(windows(json)?
        .iter()
        .filter_map(|window| {
            let id = window["id"].as_u64()?;
            let title = window["title"].as_str().unwrap_or_default();
            Some((id.to_string(), title.to_string()))
        })
        .collect())
}

/// The process kitty started in every window of `kitty @ ls`'s JSON (its `pid`), by window id:
/// that process's terminal is the window's.
pub fn parse_children(json: &str) -> Result<BTreeMap<String, u32>, ParseError> {
    Ok(windows(json)?
        .iter()
        .filter_map(|window| {
            let id = window["id"].as_u64()?;
            let pid = u32::try_from(window["pid"].as_u64()?).ok()?;
            Some((id.to_string(), pid))
        })
        .collect())
}

/// One remote-control command to the kitty listening on `listen_on`, within [`READ_LIMIT`];
/// returns the answer's data.
#[cfg(unix)]
fn command(listen_on: &str, cmd: &str, payload: serde_json::Value) -> Result<String, String> {
    /// The most of an answer that is read: `ls` lists every window's environment.
    const MOST: usize = 16 << 20;
    let deadline = Instant::now() + READ_LIMIT;
    let mut stream = connect(listen_on, deadline)?;
    crate::socket::write_within(&mut stream, &frame(cmd, payload), deadline)
        .map_err(|error| format!("cannot send to kitty: {error}"))?;
    let mut answer = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    while !frame_done(&answer) {
        if answer.len() > MOST {
            return Err(format!("kitty's answer is longer than {MOST} bytes"));
        }
        match crate::socket::read_some_within(&mut stream, &mut chunk, deadline) {
            Ok(0) => break,
            Ok(read) => answer.extend_from_slice(&chunk[..read]),
            Err(error) if error.kind() == std::io::ErrorKind::TimedOut => {
                return Err(format!(
                    "kitty did not answer within {} ms",
                    READ_LIMIT.as_millis()
                ))
            }
            Err(error) => return Err(format!("kitty did not answer: {error}")),
        }
    }
    parse_frame(&answer).map_err(|error| error.to_string())
}

/// A connection to the kitty listening on `listen_on`, made by `deadline`: a kitty that accepts
/// no connection (hung, its listen queue full) is given up on then.
#[cfg(unix)]
fn connect(listen_on: &str, deadline: Instant) -> Result<std::os::unix::net::UnixStream, String> {
    let Some(place) = listen_on.strip_prefix("unix:") else {
        return Err(format!(
            "cannot reach {listen_on}: only unix sockets are read"
        ));
    };
    let place = match place.strip_prefix('@') {
        Some(name) => crate::socket::Place::Abstract(name.as_bytes()),
        None => crate::socket::Place::Path(std::path::Path::new(place)),
    };
    crate::socket::connect_within(place, deadline).map_err(|error| {
        if error.kind() == std::io::ErrorKind::TimedOut {
            format!(
                "the kitty at {listen_on} accepted no connection within {} ms",
                READ_LIMIT.as_millis()
            )
        } else {
            format!("no kitty listens on {listen_on}: {error}")
        }
    })
}

/// One remote-control command that kitty answers nothing to (`send-text`: kitty 0.26 sends no
/// answer for it, so none is asked for): connected and written within [`READ_LIMIT`], then done.
#[cfg(unix)]
fn tell(listen_on: &str, cmd: &str, payload: serde_json::Value) -> Result<(), String> {
    let deadline = Instant::now() + READ_LIMIT;
    let mut stream = connect(listen_on, deadline)?;
    crate::socket::write_within(&mut stream, &frame_without_answer(cmd, payload), deadline)
        .map_err(|error| format!("cannot send to kitty: {error}"))
}

#[cfg(not(unix))]
fn command(listen_on: &str, _: &str, _: serde_json::Value) -> Result<String, String> {
    Err(format!("cannot reach {listen_on} on this platform"))
}

#[cfg(not(unix))]
fn tell(listen_on: &str, _: &str, _: serde_json::Value) -> Result<(), String> {
    Err(format!("cannot reach {listen_on} on this platform"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kitty_gets_the_bytes_of_the_keys() {
        let payload = send_text("7", &[Key::Escape]);
        assert_eq!(payload["data"], "text:\u{1b}");
        assert_eq!(payload["match"], "id:7");
    }
}
