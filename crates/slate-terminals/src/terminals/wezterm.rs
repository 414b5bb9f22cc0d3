//! WezTerm as a terminal backend: the panes of a WezTerm mux, through `wezterm cli` (never
//! started by Slate: `--no-auto-start`).
//!
//! Locating: `$WEZTERM_PANE` (and `$WEZTERM_UNIX_SOCKET`) name a pane, a hint kept only once the
//! pane's terminal (`tty_name` in `list`) is the process's own. Reading: `list --format json` for
//! the titles, then `get-text` of each pane's screen. Typing: `send-text --no-paste`. The command
//! builders and parsers are pure and tested against WezTerm's documented output; every call runs
//! within the terminal read limit.

use std::collections::BTreeMap;

use super::backend::{all_digits, Address, Backend, Hint, PaneRead, ParseError, Wanted};
use crate::focus::strategy::{CommandLine, Environment, Tools};
use slate_core::agents::keys::Key;
use slate_core::model::{Can, TerminalKind, TerminalView, Timestamp};

/// The WezTerm backend.
pub struct Wezterm;

pub static WEZTERM: Wezterm = Wezterm;

/// Pane `pane` of the WezTerm whose mux listens on `socket` (or, with `None`, the one
/// `wezterm cli` finds: its server is `""`).
pub fn address(socket: Option<String>, pane: impl Into<String>) -> Address {
    Address::new(&WEZTERM, socket.unwrap_or_default(), pane)
}

/// The mux socket of a WezTerm address, `None` for the one `wezterm cli` finds.
fn socket(server: &str) -> Option<&str> {
    (!server.is_empty()).then_some(server)
}

impl Backend for Wezterm {
    fn kind(&self) -> TerminalKind {
        TerminalKind::Wezterm
    }

    fn can(&self) -> Can {
        Can::EVERYTHING
    }

    fn describe(&self, address: &Address) -> String {
        match socket(&address.server) {
            Some(socket) => format!("WezTerm pane {} at {socket}", address.pane),
            None => format!("WezTerm pane {}", address.pane),
        }
    }

    fn hint(&self, env: &Environment, tools: &Tools) -> Option<Hint> {
        let pane = env.wezterm_pane.clone()?;
        Some(if !all_digits(&pane) {
            let note = "$WEZTERM_PANE is not a pane id";
            Hint::Unread(TerminalView::unread(TerminalKind::Wezterm, None, note))
        } else if !tools.wezterm {
            let note = "`wezterm` is not on the PATH where Slate runs";
            Hint::Unread(TerminalView::unread(
                TerminalKind::Wezterm,
                Some(pane),
                note,
            ))
        } else {
            Hint::Pane(address(env.wezterm_unix_socket.clone(), pane))
        })
    }

    fn device(&self, address: &Address) -> Result<Option<u64>, String> {
        super::run(&list(socket(&address.server)))
            .map_err(|why| format!("wezterm: {why}"))
            .and_then(|json| parse_ttys(&json).map_err(|e| e.to_string()))
            .map(|ttys| {
                ttys.get(&address.pane)
                    .and_then(|path| crate::tty::device_of(path))
            })
    }

    fn read(&self, server: &str, wanted: &[Wanted], clock: fn() -> Timestamp) -> Vec<PaneRead> {
        let socket = socket(server);
        super::read_listed(
            wanted,
            clock,
            "wezterm",
            || super::run(&list(socket)),
            parse_titles,
            |pane, colours| super::run(&get_text(socket, pane, colours)),
        )
    }

    fn screen(&self, address: &Address, colours: bool) -> Result<String, String> {
        super::run(&get_text(socket(&address.server), &address.pane, colours))
            .map_err(|why| format!("wezterm: {why}"))
    }

    fn send(&self, address: &Address, keys: &[Key]) -> Result<(), String> {
        super::run(&send_text(socket(&address.server), &address.pane, keys)).map(drop)
    }
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
pub fn list(socket: Option<&str>) -> CommandLine {
    wezterm(socket, &["list", "--format", "json"])
}

/// `wezterm cli list-clients --format json`: every GUI client of the mux, with its focused pane.
pub fn list_clients(socket: Option<&str>) -> CommandLine {
    wezterm(socket, &["list-clients", "--format", "json"])
}

/// Each client in `wezterm cli list-clients --format json` with the pane that has the focus in it
/// (`pid`, `focused_pane_id`); a client without both is left out.
pub fn parse_clients(json: &str) -> Result<Vec<(u32, u64)>, ParseError> {
    Ok(json_list(json, "not a list of clients")?
        .iter()
        .filter_map(|client| {
            let pid = u32::try_from(client.get("pid")?.as_u64()?).ok()?;
            Some((pid, client.get("focused_pane_id")?.as_u64()?))
        })
        .collect())
}

/// `wezterm cli get-text` of one pane's visible screen (`--escapes` for colours).
pub fn get_text(socket: Option<&str>, pane: &str, colours: bool) -> CommandLine {
    let mut args = vec!["get-text", "--pane-id", pane];
    if colours {
        args.push("--escapes");
    }
    wezterm(socket, &args)
}

/// `wezterm cli send-text --no-paste` of the keys' bytes to one pane.
pub fn send_text(socket: Option<&str>, pane: &str, keys: &[Key]) -> CommandLine {
    let text: String = keys.iter().map(Key::bytes).collect();
    wezterm(
        socket,
        &["send-text", "--pane-id", pane, "--no-paste", "--", &text],
    )
}

/// Every pane in `wezterm cli list --format json`, with its id.
fn panes(json: &str) -> Result<Vec<(String, serde_json::Value)>, ParseError> {
    Ok(json_list(json, "not a list of panes")?
        .into_iter()
        .filter_map(|pane| Some((pane["pane_id"].as_u64()?.to_string(), pane)))
        .collect())
}

/// The items of a JSON list `wezterm cli` printed; `not_a_list` says what else it was.
fn json_list(json: &str, not_a_list: &'static str) -> Result<Vec<serde_json::Value>, ParseError> {
    match serde_json::from_str(json).map_err(|_| ParseError::Unexpected("not JSON"))? {
        serde_json::Value::Array(items) => Ok(items),
        _ => Err(ParseError::Unexpected(not_a_list)),
    }
}

/// The title of every pane in `wezterm cli list --format json`, by pane id.
pub fn parse_titles(json: &str) -> Result<BTreeMap<String, String>, ParseError> {
    Ok(panes(json)?
        .into_iter()
        .map(|(id, pane)| (id, pane["title"].as_str().unwrap_or_default().to_string()))
        .collect())
}

/// The terminal device of every pane in `wezterm cli list --format json` (its `tty_name`), by
/// pane id; a pane without one (a remote domain's) is left out.
pub fn parse_ttys(json: &str) -> Result<BTreeMap<String, String>, ParseError> {
    Ok(panes(json)?
        .into_iter()
        .filter_map(|(id, pane)| Some((id, pane["tty_name"].as_str()?.to_string())))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wezterm_gets_the_bytes_of_the_keys() {
        let line = send_text(Some("/run/wez"), "4", &[Key::Digit(2), Key::Enter]);
        assert_eq!(line.program, "wezterm");
        assert_eq!(line.args.last().map(String::as_str), Some("2\r"));
        assert!(line.args.contains(&"--no-paste".to_string()));
        assert_eq!(
            line.env,
            vec![("WEZTERM_UNIX_SOCKET".to_string(), "/run/wez".to_string())]
        );
    }
}
