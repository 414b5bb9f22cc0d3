//! tmux as a terminal backend: the panes of every tmux server of this user.
//!
//! Locating: the panes with their terminal devices (`list-panes -a`) of the servers that can hold
//! the processes' terminals, found without `$TMUX` (`tty::tmux_sockets_for`: a server is asked
//! only when the kernel shows it holds one of them, or does not say what it holds), each asked
//! once and all in parallel, for `terminals::proof` to find the process's pane by its controlling
//! terminal. `$TMUX` and `$TMUX_PANE` never say which pane it is: they name a server `/proc` may
//! not show, and say why no pane was proved. Reading: one call per server for as many panes as
//! fit tmux's command length (`display -p` and `capture-pane -p` for each, [`batches`]). Before
//! typing: the pane's mode and terminal (`display -p`, [`STATE_FORMAT`]). Typing: `send-keys`
//! (`-l` for literal text). The command builders and parsers are pure and tested against
//! recorded outputs; every call runs within the terminal read limit.

use super::backend::{
    Address, Backend, Hint, PaneRead, PaneText, PaneTty, ParseError, Survey, Wanted,
};
use crate::focus::strategy::{CommandLine, Environment, Tools};
use crate::tty::{device_of, same_device, tmux_sockets, tmux_sockets_for};
use slate_core::agents::keys::Key;
use slate_core::model::{Can, TerminalKind, TerminalView, Timestamp};

/// The tmux backend.
pub struct Tmux;

pub static TMUX: Tmux = Tmux;

/// Pane `pane` of the tmux server listening on `socket` (any server: the default one, or a
/// private one started with `-L` or `-S`). Pane ids are per server, so both name the pane.
pub fn address(socket: impl Into<String>, pane: impl Into<String>) -> Address {
    Address::new(&TMUX, socket, pane)
}

/// What Slate says of a process whose `$TMUX_PANE` names a pane that its terminal is not.
pub const INHERITED_NOTE: &str = "its $TMUX_PANE names a tmux pane, but its terminal is not that \
     pane's (started from tmux into another terminal?): Slate reads and answers only a pane whose \
     terminal is the process's own";

impl Backend for Tmux {
    fn kind(&self) -> TerminalKind {
        TerminalKind::Tmux
    }

    fn can(&self) -> Can {
        Can::EVERYTHING
    }

    fn describe(&self, address: &Address) -> String {
        format!("tmux pane {} on {}", address.pane, address.server)
    }

    fn named_server(&self, env: &Environment) -> Option<String> {
        env.tmux_socket().map(str::to_string)
    }

    fn survey(&self, named: &[String], tools: &Tools) -> Survey {
        if !tools.tmux {
            return Survey::default();
        }
        panes(&tmux_sockets(named.iter().cloned()))
    }

    /// Only the servers that hold one of `terminals`, or that cannot be told without asking
    /// (`tty::tmux_sockets_for`): one `list-panes` for a process's pane, not one per server.
    fn survey_for(&self, named: &[String], terminals: &[u64], tools: &Tools) -> Survey {
        if !tools.tmux {
            return Survey::default();
        }
        panes(&tmux_sockets_for(named.iter().cloned(), terminals))
    }

    fn hint(&self, env: &Environment, tools: &Tools) -> Option<Hint> {
        env.tmux_socket()?;
        Some(Hint::Unread(if tools.tmux {
            TerminalView::unread(TerminalKind::Unknown, None, INHERITED_NOTE)
        } else {
            let note = "tmux is not installed where Slate runs";
            TerminalView::unread(TerminalKind::Tmux, None, note)
        }))
    }

    /// In as few calls as fit tmux's command length ([`batches`]). When a call fails (a pane
    /// closed since it was located makes tmux stop the whole sequence), each pane of that call is
    /// read alone, so one gone pane does not blind the others. A call that runs out of time is not
    /// tried pane by pane: the server is not answering, so every pane not read yet fails at once.
    fn read(&self, socket: &str, wanted: &[Wanted], clock: fn() -> Timestamp) -> Vec<PaneRead> {
        let panes: Vec<(String, bool)> = wanted
            .iter()
            .map(|want| (want.pane.clone(), want.colours))
            .collect();
        let mut reads = Vec::new();
        let mut stuck: Option<String> = None;
        for batch in batches(&panes, COMMAND_MOST) {
            let batch = &panes[batch];
            if let Some(why) = &stuck {
                reads.extend(batch.iter().map(|_| Err(why.clone())));
                continue;
            }
            match super::run_child(&read_line(socket, batch)) {
                Ok(text) => reads.extend(stamped(&text, batch, clock)),
                Err(error) if error.is_timeout() => {
                    let why = format!("tmux: {error}");
                    reads.extend(batch.iter().map(|_| Err(why.clone())));
                    stuck = Some(why);
                }
                Err(error) if batch.len() == 1 => reads.push(Err(format!("tmux: {error}"))),
                Err(_) => {
                    for pane in batch {
                        if let Some(why) = &stuck {
                            reads.push(Err(why.clone()));
                            continue;
                        }
                        let one = std::slice::from_ref(pane);
                        match super::run_child(&read_line(socket, one)) {
                            Ok(text) => reads.extend(stamped(&text, one, clock)),
                            Err(error) => {
                                let why = format!("tmux: {error}");
                                if error.is_timeout() {
                                    stuck = Some(why.clone());
                                }
                                reads.push(Err(why));
                            }
                        }
                    }
                }
            }
        }
        reads
    }

    fn screen(&self, address: &Address, colours: bool) -> Result<String, String> {
        let one = [(address.pane.clone(), colours)];
        let output =
            super::run(&read_line(&address.server, &one)).map_err(|why| format!("tmux: {why}"))?;
        let mut parsed = parse_read(&output, std::slice::from_ref(&address.pane));
        match parsed.pop() {
            Some((_, Ok(text))) => Ok(text.screen),
            Some((_, Err(error))) => Err(format!("tmux: {error}")),
            None => Err("tmux: nothing was read".to_string()),
        }
    }

    fn check(&self, address: &Address, tty: u64) -> Result<(), String> {
        let pane = &address.pane;
        let state = pane_state(&address.server, pane)
            .map_err(|why| format!("cannot check the pane before typing: {why}"))?;
        if state.in_mode {
            return Err(format!(
                "tmux pane {pane} is in a mode (copy mode, or a chooser): keys would go to the \
                 mode, not the agent; leave it (q) first"
            ));
        }
        if !same_device(state.tty, tty) {
            return Err(format!(
                "tmux pane {pane} no longer has the terminal proved to be the agent's"
            ));
        }
        Ok(())
    }

    fn send(&self, address: &Address, keys: &[Key]) -> Result<(), String> {
        super::run(&send_line(&address.server, &address.pane, keys)).map(drop)
    }
}

/// The readings of one call that read `panes` and printed `text`, all stamped now.
fn stamped(text: &str, panes: &[(String, bool)], clock: fn() -> Timestamp) -> Vec<PaneRead> {
    let at = clock();
    let ids: Vec<String> = panes.iter().map(|(pane, _)| pane.clone()).collect();
    parse_read(text, &ids)
        .into_iter()
        .map(|(_, parsed)| {
            parsed
                .map(|pane| (pane, at))
                .map_err(|error| error.to_string())
        })
        .collect()
}

/// The format of the line tmux prints before each pane's screen.
const HEAD: &str = "#{pane_id} #{pane_height} #{pane_title}";

fn tmux(socket: &str, args: Vec<String>) -> CommandLine {
    let mut all = vec!["-S".to_string(), socket.to_string()];
    all.extend(args);
    CommandLine {
        program: "tmux".to_string(),
        args: all,
        env: Vec::new(),
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|arg| arg.to_string()).collect()
}

/// One tmux call that reads every pane in `panes` (each with whether to keep colours): per pane,
/// a line with its id, its height and its title (`display -p`), then its visible screen
/// (`capture-pane -p`, `-e` for colours), as one command sequence. Its command must fit tmux's
/// command length: [`batches`] says which panes go in one call.
pub fn read_line(socket: &str, panes: &[(String, bool)]) -> CommandLine {
    let mut args = Vec::new();
    for (index, (pane, colours)) in panes.iter().enumerate() {
        if index > 0 {
            args.push(";".to_string());
        }
        args.extend(read_one(pane, *colours));
    }
    tmux(socket, args)
}

/// The arguments that read one pane, in [`read_line`]'s sequence.
fn read_one(pane: &str, colours: bool) -> Vec<String> {
    let mut args = strings(&["display-message", "-p", "-t", pane, HEAD, ";"]);
    args.extend(strings(&["capture-pane", "-p"]));
    if colours {
        args.push("-e".to_string());
    }
    args.extend(strings(&["-t", pane]));
    args
}

/// The most bytes of command (its arguments after the socket's, each with its terminating NUL)
/// one tmux call is given. The tmux client sends a command's arguments to its server in one
/// message of at most 16 KiB with its header; tmux 3.3a takes 16,364 bytes of arguments and
/// refuses 16,365 with "command too long" (measured with `display-message -p` and a long
/// format). Batches stay under 12 KiB, a margin for a tmux that counts its header differently:
/// about 120 panes a call.
pub const COMMAND_MOST: usize = 12 * 1024;

/// The panes of one tmux server in runs, in order, each read by one [`read_line`] whose command
/// stays within `most` bytes ([`COMMAND_MOST`] in use). A pane too long for a call of its own
/// still gets one.
pub fn batches(panes: &[(String, bool)], most: usize) -> Vec<std::ops::Range<usize>> {
    let mut batches = Vec::new();
    let mut start = 0;
    let mut length = 0;
    for (index, (pane, colours)) in panes.iter().enumerate() {
        let own: usize = read_one(pane, *colours)
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

/// Reads the output of [`read_line`] for `panes`, in their order. A pane tmux no longer has
/// prints an empty id (tmux 3.3 still runs `display` for a missing target), and is gone.
pub fn parse_read(text: &str, panes: &[String]) -> Vec<(String, Result<PaneText, ParseError>)> {
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

/// The format of each line of `tmux list-panes -a` that proving reads.
pub const TTY_FORMAT: &str = "#{pane_id} #{pane_tty}";

/// `tmux -S <socket> list-panes -a` with [`TTY_FORMAT`].
pub fn list_ttys(socket: &str) -> CommandLine {
    tmux(socket, strings(&["list-panes", "-a", "-F", TTY_FORMAT]))
}

/// Reads the output of [`list_ttys`]: each pane's id and terminal path. Lines that are not a
/// pane id and a `/dev/` path are skipped.
pub fn parse_ttys(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let (pane, tty) = line.split_once(' ')?;
            let valid = pane
                .strip_prefix('%')
                .is_some_and(|digits| !digits.is_empty() && digits.len() <= 12)
                && pane[1..].bytes().all(|b| b.is_ascii_digit());
            (valid && tty.starts_with("/dev/") && !tty.contains(char::is_whitespace))
                .then(|| (pane.to_string(), tty.to_string()))
        })
        .collect()
}

/// Every pane of every server in `sockets`, with its terminal's device, each server asked once
/// and all of them in parallel, each within the terminal read limit; and the servers that did not
/// answer, with why (a stopped server, or one too slow on a loaded machine), so that what they
/// would have proved is asked again later rather than taken as no pane.
pub fn panes(sockets: &[String]) -> Survey {
    std::thread::scope(|scope| {
        let asked: Vec<_> = sockets
            .iter()
            .map(|socket| {
                scope.spawn(move || {
                    let text = super::run(&list_ttys(socket))?;
                    Ok(parse_ttys(&text)
                        .into_iter()
                        .filter_map(|(pane, tty)| {
                            Some(PaneTty {
                                address: address(socket.clone(), pane),
                                tty: device_of(&tty)?,
                            })
                        })
                        .collect::<Vec<_>>())
                })
            })
            .collect();
        let mut found = Survey::default();
        for (socket, thread) in sockets.iter().zip(asked) {
            match thread.join() {
                Ok(Ok(panes)) => found.panes.extend(panes),
                Ok(Err(why)) => found.unanswered.push((socket.clone(), why)),
                Err(_) => found
                    .unanswered
                    .push((socket.clone(), "the read stopped".to_string())),
            }
        }
        found
    })
}

/// The format of the line tmux prints for a pane's state before typing.
pub const STATE_FORMAT: &str = "#{pane_id} #{pane_in_mode} #{pane_tty}";

/// `tmux -S <socket> display-message -p -t <pane>` with [`STATE_FORMAT`].
pub fn state_line(socket: &str, pane: &str) -> CommandLine {
    tmux(
        socket,
        strings(&["display-message", "-p", "-t", pane, STATE_FORMAT]),
    )
}

/// A tmux pane's state just before typing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneState {
    /// True while the pane is in a mode (copy mode, a chooser): keys go to the mode.
    pub in_mode: bool,
    /// The path of its terminal.
    pub tty: String,
}

/// Reads the output of [`state_line`] for `pane`. A pane tmux no longer has prints another id
/// or none.
pub fn parse_state(text: &str, pane: &str) -> Result<PaneState, String> {
    let line = text.lines().next().unwrap_or_default();
    let mut fields = line.splitn(3, ' ');
    if fields.next() != Some(pane) {
        return Err(format!("pane {pane} is gone"));
    }
    let in_mode = match fields.next() {
        Some("0") => false,
        Some("1") => true,
        _ => return Err("tmux did not say whether the pane is in a mode".to_string()),
    };
    let tty = fields.next().unwrap_or_default();
    if !tty.starts_with("/dev/") {
        return Err("tmux did not say the pane's terminal".to_string());
    }
    Ok(PaneState {
        in_mode,
        tty: tty.to_string(),
    })
}

/// What the check before typing reads of a pane.
struct PaneNow {
    in_mode: bool,
    /// Its terminal's device number.
    tty: u64,
}

/// A pane's state now (its mode and its terminal's device), within the read limit.
fn pane_state(socket: &str, pane: &str) -> Result<PaneNow, String> {
    let text = super::run(&state_line(socket, pane)).map_err(|why| format!("tmux: {why}"))?;
    let state = parse_state(&text, pane)?;
    let tty =
        device_of(&state.tty).ok_or_else(|| format!("{} is not a terminal here", state.tty))?;
    Ok(PaneNow {
        in_mode: state.in_mode,
        tty,
    })
}

/// One tmux call that sends `keys` to `pane`: key names in one `send-keys`, each literal text in
/// a `send-keys -l` of its own, as one command sequence.
pub fn send_line(socket: &str, pane: &str, keys: &[Key]) -> CommandLine {
    let mut args = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut commands: Vec<Vec<String>> = Vec::new();
    let head = |literal: bool| {
        let mut head = strings(&["send-keys", "-t", pane]);
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
                command.push(literal(text));
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
    tmux(socket, args)
}

/// Literal text as a tmux argument: an argument that ends with `;` ends tmux's command there, and
/// `\;` at its end is tmux's way to keep the semicolon.
fn literal(text: &str) -> String {
    match text.strip_suffix(';') {
        Some(rest) => format!("{rest}\\;"),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmux_tty_lines_are_checked() {
        let text = "%0 /dev/pts/3\n%12 /dev/pts/14\n\n%x /dev/pts/1\n%1 /etc/passwd\n%2 \n%3 /dev/pts/2 extra\nnoise";
        assert_eq!(
            parse_ttys(text),
            vec![
                ("%0".to_string(), "/dev/pts/3".to_string()),
                ("%12".to_string(), "/dev/pts/14".to_string()),
            ]
        );
        let huge = format!("%1 /dev/{}\n", "p".repeat(200_000));
        assert_eq!(parse_ttys(&huge).len(), 1);
        assert_eq!(device_of(&format!("/dev/{}", "p".repeat(200_000))), None);
        assert_eq!(device_of("/dev/../etc/passwd"), None);
        assert_eq!(device_of("/etc/passwd"), None);
    }

    #[test]
    fn a_pane_state_says_its_mode_and_terminal() {
        assert_eq!(
            parse_state("%3 1 /dev/pts/4\n", "%3"),
            Ok(PaneState {
                in_mode: true,
                tty: "/dev/pts/4".to_string()
            })
        );
        assert!(!parse_state("%3 0 /dev/pts/4", "%3").unwrap().in_mode);
        for bad in [
            "",
            " 0 /dev/pts/4",
            "%4 0 /dev/pts/4",
            "%3 2 /dev/pts/4",
            "%3 0",
            "%3 0 tty",
        ] {
            assert!(parse_state(bad, "%3").is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_digit_is_one_send_keys_and_text_goes_literal() {
        let line = send_line("/tmp/s", "%3", &[Key::Digit(1)]);
        assert_eq!(
            line.args,
            ["-S", "/tmp/s", "send-keys", "-t", "%3", "--", "1"]
        );
        let line = send_line(
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
}
