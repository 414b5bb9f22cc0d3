//! Where a session's terminal is and how to read it, from facts alone: the pure half of
//! `terminals`.
//!
//! [`locate`] turns the tmux pane proved by the process's terminal device (`terminals::proof`)
//! and the process's environment (the variables `focus` gathers: `$KITTY_LISTEN_ON` and
//! `$KITTY_WINDOW_ID`, `$WEZTERM_UNIX_SOCKET` and `$WEZTERM_PANE`, hints that `terminals`
//! confirms by the device; `$TMUX` only to say why a pane was not proved) into how Slate sees its
//! terminal (a `TerminalView`) and, when Slate can read it, the [`Address`] of its pane. The command builders say which program reads a pane's title and
//! screen (`tmux display -p` and `capture-pane -p`, kitty's remote-control `ls` and `get-text`,
//! `wezterm cli list` and `get-text`), and the parsers read their output, so both are tested against
//! recorded outputs without the programs. This module does no I/O and reads no clock; running the
//! programs is `terminals`'.

use std::collections::BTreeMap;

use crate::focus::strategy::{CommandLine, Environment, Tools};
use crate::model::{TerminalKind, TerminalView};

/// Where Slate reads one pane.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Address {
    /// A pane of the tmux server listening on `socket` (any server: the default one, or a private
    /// one started with `-L` or `-S`). Pane ids are per server, so both name the pane.
    Tmux { socket: String, pane: String },
    /// A window of the kitty listening on `listen_on` for remote control.
    Kitty { listen_on: String, window: String },
    /// A pane of the WezTerm whose mux listens on `socket` (or the one `wezterm cli` finds).
    Wezterm {
        socket: Option<String>,
        pane: String,
    },
    /// A terminal hosted by `slate run`, read and typed into through its control socket
    /// (`host::control`). It is never located from a process's environment: the session's hosted
    /// report names its socket.
    Hosted { socket: String },
}

/// The program a read goes to: reads of one server share one call where its tool allows.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Server {
    Tmux(String),
    Kitty(String),
    Wezterm(Option<String>),
    Hosted(String),
}

impl Address {
    pub fn server(&self) -> Server {
        match self {
            Address::Tmux { socket, .. } => Server::Tmux(socket.clone()),
            Address::Kitty { listen_on, .. } => Server::Kitty(listen_on.clone()),
            Address::Wezterm { socket, .. } => Server::Wezterm(socket.clone()),
            Address::Hosted { socket } => Server::Hosted(socket.clone()),
        }
    }

    /// The pane's own id on its server (a hosted terminal's is its socket: one terminal each).
    pub fn pane(&self) -> &str {
        match self {
            Address::Tmux { pane, .. } => pane,
            Address::Kitty { window, .. } => window,
            Address::Wezterm { pane, .. } => pane,
            Address::Hosted { socket } => socket,
        }
    }

    pub fn kind(&self) -> TerminalKind {
        match self {
            Address::Tmux { .. } => TerminalKind::Tmux,
            Address::Kitty { .. } => TerminalKind::Kitty,
            Address::Wezterm { .. } => TerminalKind::Wezterm,
            Address::Hosted { .. } => TerminalKind::Hosted,
        }
    }

    /// The view of a pane Slate reads. A hosted terminal's view stays `hosted`: Slate owns it.
    pub fn view(&self) -> TerminalView {
        if let Address::Hosted { .. } = self {
            return TerminalView::hosted();
        }
        TerminalView {
            kind: self.kind(),
            pane: Some(self.pane().to_string()),
            sensed: true,
            note: None,
        }
    }
}

/// What Slate says of a session in a terminal it has no way to read.
pub const PLAIN_NOTE: &str =
    "plain terminal: start it in tmux or under `slate run` to see its prompts";

/// What Slate says of a kitty window whose kitty does not listen for remote control.
pub const KITTY_OFF_NOTE: &str =
    "kitty without remote control: set allow_remote_control and listen_on to see its prompts";

/// What Slate says of a process whose `$TMUX_PANE` names a pane that its terminal is not.
pub const INHERITED_NOTE: &str = "its $TMUX_PANE names a tmux pane, but its terminal is not that \
     pane's (started from tmux into another terminal?): Slate reads and answers only a pane whose \
     terminal is the process's own";

/// How Slate sees the terminal of a process with environment `env` (`None`: it could not be
/// read), and the address to read it at when it can. `proved` is the tmux pane whose terminal is
/// the process's controlling terminal (`terminals::proof`), found without any variable: a
/// multiplexer inside a terminal window is what the process draws in, so it comes before kitty and
/// WezTerm, whose variables are only hints here that `terminals` confirms by the terminal device
/// before a window is read. `$TMUX` and `$TMUX_PANE` alone never make an address: they are
/// inherited by whatever a pane's shell starts.
pub fn locate(
    env: Option<&Environment>,
    tools: &Tools,
    proved: Option<&Address>,
) -> (TerminalView, Option<Address>) {
    if let Some(address) = proved {
        return (address.view(), Some(address.clone()));
    }
    let Some(env) = env else {
        return (
            TerminalView::unread(
                TerminalKind::Unknown,
                None,
                "its environment could not be read (another user's process, or it exited)",
            ),
            None,
        );
    };
    if let Some(pane) = env.wezterm_pane.clone() {
        if !all_digits(&pane) {
            let note = "$WEZTERM_PANE is not a pane id";
            return (
                TerminalView::unread(TerminalKind::Wezterm, None, note),
                None,
            );
        }
        if !tools.wezterm {
            let note = "`wezterm` is not on the PATH where Slate runs";
            return (
                TerminalView::unread(TerminalKind::Wezterm, Some(pane), note),
                None,
            );
        }
        let address = Address::Wezterm {
            socket: env.wezterm_unix_socket.clone(),
            pane,
        };
        return (address.view(), Some(address));
    }
    if let Some(window) = env.kitty_window_id.clone().filter(|id| all_digits(id)) {
        let Some(listen_on) = env.kitty_listen_on.clone() else {
            return (
                TerminalView::unread(TerminalKind::Kitty, Some(window), KITTY_OFF_NOTE),
                None,
            );
        };
        // kitty is asked over its socket: no `kitty` program is needed where Slate runs.
        let address = Address::Kitty { listen_on, window };
        return (address.view(), Some(address));
    }
    if env.tmux_socket().is_some() {
        return if tools.tmux {
            (
                TerminalView::unread(TerminalKind::Unknown, None, INHERITED_NOTE),
                None,
            )
        } else {
            let note = "tmux is not installed where Slate runs";
            (TerminalView::unread(TerminalKind::Tmux, None, note), None)
        };
    }
    (
        TerminalView::unread(TerminalKind::Plain, None, PLAIN_NOTE),
        None,
    )
}

fn all_digits(text: &str) -> bool {
    !text.is_empty() && text.len() <= 12 && text.bytes().all(|byte| byte.is_ascii_digit())
}

/// What one read of a pane gave: its title and its visible screen. The screen is read with the
/// agent's grammar at once and dropped; it is never kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneText {
    pub title: Option<String>,
    pub screen: String,
}

/// The format of the line tmux prints before each pane's screen.
const TMUX_HEAD: &str = "#{pane_id} #{pane_height} #{pane_title}";

/// One tmux call that reads every pane in `panes` (each with whether to keep colours): per pane,
/// a line with its id, its height and its title (`display -p`), then its visible screen
/// (`capture-pane -p`, `-e` for colours), as one command sequence. Its command must fit tmux's
/// command length: [`tmux_batches`] says which panes go in one call.
pub fn tmux_read(socket: &str, panes: &[(String, bool)]) -> CommandLine {
    let mut args = vec!["-S".to_string(), socket.to_string()];
    for (index, (pane, colours)) in panes.iter().enumerate() {
        if index > 0 {
            args.push(";".to_string());
        }
        args.extend(tmux_read_one(pane, *colours));
    }
    CommandLine {
        program: "tmux".to_string(),
        args,
        env: Vec::new(),
    }
}

/// The arguments that read one pane, in [`tmux_read`]'s sequence.
fn tmux_read_one(pane: &str, colours: bool) -> Vec<String> {
    let mut args: Vec<String> = ["display-message", "-p", "-t", pane, TMUX_HEAD, ";"]
        .iter()
        .map(|arg| arg.to_string())
        .collect();
    args.extend(["capture-pane", "-p"].iter().map(|arg| arg.to_string()));
    if colours {
        args.push("-e".to_string());
    }
    args.extend(["-t", pane].iter().map(|arg| arg.to_string()));
    args
}

/// The most bytes of command (its arguments after the socket's, each with its terminating NUL)
/// one tmux call is given. The tmux client sends a command's arguments to its server in one
/// message of at most 16 KiB with its header; tmux 3.3a takes 16,364 bytes of arguments and
/// refuses 16,365 with "command too long" (measured with `display-message -p` and a long
/// format). Batches stay under 12 KiB, a margin for a tmux that counts its header differently:
/// about 120 panes a call.
pub const TMUX_COMMAND_MOST: usize = 12 * 1024;

/// The panes of one tmux server in runs, in order, each read by one [`tmux_read`] whose command
/// stays within `most` bytes ([`TMUX_COMMAND_MOST`] in use). A pane too long for a call of its
/// own still gets one.
pub fn tmux_batches(panes: &[(String, bool)], most: usize) -> Vec<std::ops::Range<usize>> {
    let mut batches = Vec::new();
    let mut start = 0;
    let mut length = 0;
    for (index, (pane, colours)) in panes.iter().enumerate() {
        let own: usize = tmux_read_one(pane, *colours)
            .iter()
            .map(|arg| arg.len() + 1)
            .sum();
        // The `;` between two panes, with its NUL.
        let joined = if index > start { own + 2 } else { own };
        if index > start && length + joined > most {
            batches.push(start..index);
            start = index;
            length = own;
        } else {
            length += joined;
        }
    }
    if start < panes.len() {
        batches.push(start..panes.len());
    }
    batches
}

/// Why an output could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("pane {0} is gone")]
    Gone(String),
    #[error("unexpected output: {0}")]
    Unexpected(&'static str),
    #[error("refused: {0}")]
    Refused(String),
}

/// Reads the output of [`tmux_read`] for `panes`, in their order. A pane tmux no longer has
/// prints an empty id (tmux 3.3 still runs `display` for a missing target), and is gone.
pub fn parse_tmux_read(
    text: &str,
    panes: &[String],
) -> Vec<(String, Result<PaneText, ParseError>)> {
    let mut lines = text.split('\n');
    let mut read = Vec::new();
    for pane in panes {
        let parsed = (|| {
            let head = lines
                .next()
                .ok_or(ParseError::Unexpected("no line for the pane"))?;
            let (id, rest) = head.split_once(' ').unwrap_or((head, ""));
            if id != pane {
                return Err(ParseError::Gone(pane.clone()));
            }
            let (height, title) = rest.split_once(' ').unwrap_or((rest, ""));
            let height: usize = height
                .parse()
                .map_err(|_| ParseError::Unexpected("the pane's height is not a number"))?;
            if height > 10_000 {
                return Err(ParseError::Unexpected("the pane is implausibly tall"));
            }
            let mut screen = String::new();
            for _ in 0..height {
                let line = lines
                    .next()
                    .ok_or(ParseError::Unexpected("the screen ended early"))?;
                screen.push_str(line);
                screen.push('\n');
            }
            Ok(PaneText {
                title: (!title.is_empty()).then(|| title.to_string()),
                screen,
            })
        })();
        let failed = parsed.is_err();
        read.push((pane.clone(), parsed));
        if failed {
            // The lines after a pane that did not parse cannot be placed.
            for rest in panes.iter().skip(read.len()) {
                read.push((
                    rest.clone(),
                    Err(ParseError::Unexpected("an earlier pane did not parse")),
                ));
            }
            break;
        }
    }
    read
}

/// The version a kitty remote-control command claims. A kitty refuses a command from a newer
/// version than its own, and `ls` and `get-text` have been there since long before this one.
const KITTY_VERSION: [u32; 3] = [0, 14, 2];

/// One kitty remote-control command as it goes over kitty's socket: `ESC P @kitty-cmd`, the JSON
/// command, `ESC \`.
pub fn kitty_frame(cmd: &str, payload: serde_json::Value) -> Vec<u8> {
    framed(serde_json::json!({
        "cmd": cmd,
        "version": KITTY_VERSION,
        "payload": payload,
    }))
}

/// Like [`kitty_frame`], for a command whose answer is not wanted (`"no_response": true`).
pub fn kitty_frame_without_answer(cmd: &str, payload: serde_json::Value) -> Vec<u8> {
    framed(serde_json::json!({
        "cmd": cmd,
        "version": KITTY_VERSION,
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
pub fn kitty_get_text(window: &str, colours: bool) -> serde_json::Value {
    serde_json::json!({ "match": format!("id:{window}"), "extent": "screen", "ansi": colours })
}

/// True once `bytes` hold a whole answer frame (it ends with `ESC \`).
pub fn kitty_frame_done(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x1bP@kitty-cmd") && bytes.ends_with(b"\x1b\\")
}

/// The `data` of kitty's answer frame: the text it sent, or why it refused.
pub fn parse_kitty_frame(bytes: &[u8]) -> Result<String, ParseError> {
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
fn kitty_windows(json: &str) -> Result<Vec<serde_json::Value>, ParseError> {
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|_| ParseError::Unexpected("not JSON"))?;
    let serde_json::Value::Array(os_windows) = value else {
        return Err(ParseError::Unexpected("not a list of OS windows"));
    };
    Ok(os_windows
        .into_iter()
        .flat_map(|mut os_window| match os_window["tabs"].take() {
            serde_json::Value::Array(tabs) => tabs,
            _ => Vec::new(),
        })
        .flat_map(|mut tab| match tab["windows"].take() {
            serde_json::Value::Array(windows) => windows,
            _ => Vec::new(),
        })
        .collect())
}

/// The title of every window in `kitty @ ls`'s JSON, by window id.
pub fn parse_kitty_titles(json: &str) -> Result<BTreeMap<String, String>, ParseError> {
    Ok(kitty_windows(json)?
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
pub fn parse_kitty_children(json: &str) -> Result<BTreeMap<String, u32>, ParseError> {
    Ok(kitty_windows(json)?
        .iter()
        .filter_map(|window| {
            let id = window["id"].as_u64()?;
            let pid = u32::try_from(window["pid"].as_u64()?).ok()?;
            Some((id.to_string(), pid))
        })
        .collect())
}

fn wezterm(socket: Option<&str>, args: &[&str]) -> CommandLine {
    let mut all = vec!["cli".to_string(), "--no-auto-start".to_string()];
    all.extend(args.iter().map(|arg| arg.to_string()));
    CommandLine {
        program: "wezterm".to_string(),
        args: all,
        env: socket
            .map(|socket| vec![("WEZTERM_UNIX_SOCKET".to_string(), socket.to_string())])
            .unwrap_or_default(),
    }
}

/// `wezterm cli list --format json`: every pane, with its title.
pub fn wezterm_list(socket: Option<&str>) -> CommandLine {
    wezterm(socket, &["list", "--format", "json"])
}

/// `wezterm cli get-text` of one pane's visible screen (`--escapes` for colours).
pub fn wezterm_get_text(socket: Option<&str>, pane: &str, colours: bool) -> CommandLine {
    let mut args = vec!["get-text", "--pane-id", pane];
    if colours {
        args.push("--escapes");
    }
    wezterm(socket, &args)
}

/// Every pane in `wezterm cli list --format json`, with its id.
fn wezterm_panes(json: &str) -> Result<Vec<(String, serde_json::Value)>, ParseError> {
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|_| ParseError::Unexpected("not JSON"))?;
    let serde_json::Value::Array(panes) = value else {
        return Err(ParseError::Unexpected("not a list of panes"));
    };
    Ok(panes
        .into_iter()
        .filter_map(|pane| Some((pane["pane_id"].as_u64()?.to_string(), pane)))
        .collect())
}

/// The title of every pane in `wezterm cli list --format json`, by pane id.
pub fn parse_wezterm_titles(json: &str) -> Result<BTreeMap<String, String>, ParseError> {
    Ok(wezterm_panes(json)?
        .into_iter()
        .map(|(id, pane)| (id, pane["title"].as_str().unwrap_or_default().to_string()))
        .collect())
}

/// The terminal device of every pane in `wezterm cli list --format json` (its `tty_name`), by
/// pane id; a pane without one (a remote domain's) is left out.
pub fn parse_wezterm_ttys(json: &str) -> Result<BTreeMap<String, String>, ParseError> {
    Ok(wezterm_panes(json)?
        .into_iter()
        .filter_map(|(id, pane)| Some((id, pane["tty_name"].as_str()?.to_string())))
        .collect())
}
