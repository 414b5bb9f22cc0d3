//! Typing keys into a pane Slate reads: the one place Slate acts on a person's terminal.
//!
//! [`send`] turns the keys of one answer (`agents::keys::Key`) into the terminal's own form and
//! sends them: tmux `send-keys` to the pane (`-l` for literal text), kitty's remote-control
//! `send-text` straight over its socket (as sensing reads it), `wezterm cli send-text
//! --no-paste`. A pause in the keys splits them into separate sends with a sleep between, for the
//! agents that lose keys sent in one burst. Each send has the same time limit as a read.
//!
//! It types only into the addresses `terminals` reads (never `TIOCSTI`, never synthetic typing
//! into the focused window), and it decides nothing: what to type and whether to type at all is
//! `answers`' business, which re-reads the screen first. The command builders are pure and tested
//! without the programs.

use std::process::Command;
use std::time::Duration;

use crate::agents::keys::Key;
use crate::focus::strategy::CommandLine;

use super::panes::Address;
use super::READ_LIMIT;

/// Sends `keys` to the pane at `address`, burst by burst. Stops at the first send that fails and
/// says which; keys before it were delivered.
pub fn send(address: &Address, keys: &[Key]) -> Result<(), String> {
    for (index, burst) in bursts(keys).into_iter().enumerate() {
        match burst {
            Burst::Pause(ms) => std::thread::sleep(Duration::from_millis(ms)),
            Burst::Keys(keys) => {
                let sent = match address {
                    Address::Tmux { socket, pane } => run(&tmux_send(socket, pane, keys)),
                    Address::Wezterm { socket, pane } => {
                        run(&wezterm_send(socket.as_deref(), pane, keys))
                    }
                    Address::Kitty { listen_on, window } => {
                        super::kitty_command(listen_on, "send-text", kitty_send(window, keys))
                            .map(drop)
                    }
                };
                sent.map_err(|why| {
                    if index == 0 {
                        format!("cannot type into {}: {why}", super::describe(address))
                    } else {
                        format!(
                            "typing into {} stopped part-way: {why}",
                            super::describe(address)
                        )
                    }
                })?;
            }
        }
    }
    Ok(())
}

/// The keys between two pauses, or a pause.
#[derive(Debug, PartialEq, Eq)]
enum Burst<'a> {
    Keys(&'a [Key]),
    Pause(u64),
}

fn bursts(keys: &[Key]) -> Vec<Burst<'_>> {
    let mut bursts = Vec::new();
    let mut start = 0;
    for (index, key) in keys.iter().enumerate() {
        if let Key::Pause(ms) = key {
            if start < index {
                bursts.push(Burst::Keys(&keys[start..index]));
            }
            bursts.push(Burst::Pause(*ms));
            start = index + 1;
        }
    }
    if start < keys.len() {
        bursts.push(Burst::Keys(&keys[start..]));
    }
    bursts
}

/// One tmux call that sends `keys` to `pane`: key names in one `send-keys`, each literal text in a
/// `send-keys -l` of its own, as one command sequence.
pub fn tmux_send(socket: &str, pane: &str, keys: &[Key]) -> CommandLine {
    let mut args = vec!["-S".to_string(), socket.to_string()];
    let mut names: Vec<String> = Vec::new();
    let mut commands: Vec<Vec<String>> = Vec::new();
    let head = |literal: bool| {
        let mut head = vec!["send-keys".to_string(), "-t".to_string(), pane.to_string()];
        if literal {
            head.push("-l".to_string());
        }
        head.push("--".to_string());
        head
    };
    for key in keys {
        match key {
            Key::Text(text) => {
                if !names.is_empty() {
                    let mut command = head(false);
                    command.append(&mut names);
                    commands.push(command);
                }
                let mut command = head(true);
                command.push(tmux_literal(text));
                commands.push(command);
            }
            Key::Pause(_) => {}
            other => names.push(other.tmux_form()),
        }
    }
    if !names.is_empty() {
        let mut command = head(false);
        command.append(&mut names);
        commands.push(command);
    }
    for (index, command) in commands.into_iter().enumerate() {
        if index > 0 {
            args.push(";".to_string());
        }
        args.extend(command);
    }
    CommandLine {
        program: "tmux".to_string(),
        args,
        env: Vec::new(),
    }
}

/// Literal text as a tmux argument: an argument that ends with `;` ends tmux's command there, and
/// `\;` at its end is tmux's way to keep the semicolon.
fn tmux_literal(text: &str) -> String {
    match text.strip_suffix(';') {
        Some(rest) => format!("{rest}\\;"),
        None => text.to_string(),
    }
}

/// The payload of kitty's `send-text` for one window: the bytes as text, not as a paste.
pub fn kitty_send(window: &str, keys: &[Key]) -> serde_json::Value {
    let text: String = keys.iter().map(Key::bytes).collect();
    serde_json::json!({
        "match": format!("id:{window}"),
        "data": format!("text:{text}"),
        "bracketed_paste": "disable",
    })
}

/// `wezterm cli send-text --no-paste` of the keys' bytes to one pane.
pub fn wezterm_send(socket: Option<&str>, pane: &str, keys: &[Key]) -> CommandLine {
    let text: String = keys.iter().map(Key::bytes).collect();
    let mut line = super::panes::wezterm_list(socket);
    line.args = vec![
        "cli".to_string(),
        "--no-auto-start".to_string(),
        "send-text".to_string(),
        "--pane-id".to_string(),
        pane.to_string(),
        "--no-paste".to_string(),
        "--".to_string(),
        text,
    ];
    line
}

fn run(line: &CommandLine) -> Result<(), String> {
    let mut command = Command::new(&line.program);
    command.args(&line.args);
    for (name, value) in &line.env {
        command.env(name, value);
    }
    crate::child::output_within(&mut command, READ_LIMIT)
        .map(drop)
        .map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digit_is_one_send_keys_and_text_goes_literal() {
        let line = tmux_send("/tmp/s", "%3", &[Key::Digit(1)]);
        assert_eq!(
            line.args,
            ["-S", "/tmp/s", "send-keys", "-t", "%3", "--", "1"]
        );
        let line = tmux_send(
            "/tmp/s",
            "%3",
            &[Key::Digit(3), Key::Text("-rf; x;".into()), Key::Enter],
        );
        assert_eq!(
            line.args,
            [
                "-S",
                "/tmp/s",
                "send-keys",
                "-t",
                "%3",
                "--",
                "3",
                ";",
                "send-keys",
                "-t",
                "%3",
                "-l",
                "--",
                "-rf; x\\;",
                ";",
                "send-keys",
                "-t",
                "%3",
                "--",
                "Enter"
            ]
        );
    }

    #[test]
    fn pauses_split_the_keys_into_bursts() {
        let keys = [
            Key::Digit(3),
            Key::Pause(700),
            Key::Text("a".into()),
            Key::Pause(700),
            Key::Enter,
        ];
        assert_eq!(
            bursts(&keys),
            vec![
                Burst::Keys(&keys[0..1]),
                Burst::Pause(700),
                Burst::Keys(&keys[2..3]),
                Burst::Pause(700),
                Burst::Keys(&keys[4..5]),
            ]
        );
    }

    #[test]
    fn kitty_and_wezterm_get_the_bytes_of_the_keys() {
        let payload = kitty_send("7", &[Key::Escape]);
        assert_eq!(payload["data"], "text:\u{1b}");
        assert_eq!(payload["match"], "id:7");
        let line = wezterm_send(Some("/run/wez"), "4", &[Key::Digit(2), Key::Enter]);
        assert_eq!(line.program, "wezterm");
        assert_eq!(line.args.last().map(String::as_str), Some("2\r"));
        assert!(line.args.contains(&"--no-paste".to_string()));
        assert_eq!(
            line.env,
            vec![("WEZTERM_UNIX_SOCKET".to_string(), "/run/wez".to_string())]
        );
    }
}
