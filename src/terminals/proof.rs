//! Proving which pane a process draws in, by its controlling terminal (docs/states.md §1, "the
//! pane is proved").
//!
//! Variables such as `$TMUX_PANE` are inherited: an agent started from a tmux shell into another
//! terminal (`script`, an editor's terminal, `kitty codex`) still carries the launching pane's
//! id, and one started with `env -i` carries none. So a pane is Slate's only when the process's
//! controlling terminal (field 7 of `/proc/<pid>/stat`) is the pane's own terminal device
//! (`#{pane_tty}`), on any tmux server of this user, found without `$TMUX`. A pseudo-terminal
//! relay between them (`script`, `sudo`) is followed only when the relay is an ancestor of the
//! agent and the foreground process of the pane's terminal, so keys typed into the pane reach
//! it.
//!
//! [`prove`] decides from facts alone and is tested without processes; [`ProcessTty::read`],
//! `tty::tmux_sockets` and [`tmux_panes`] gather the facts (the process table under `/proc`, and
//! one `tmux list-panes -a` per server, each within the terminal read limit). Before any key is
//! typed, [`Stat::ready`] says whether the agent may receive it now: alive, not stopped, and its
//! process group the terminal's foreground group.

use crate::focus::strategy::{Ancestor, CommandLine};

pub use crate::tty::{device_of, same_device, tmux_sockets, NotReady, Stat};

/// Programs that relay a pseudo-terminal to a child on another one: keys typed into the relay's
/// terminal reach the child.
pub const RELAYS: &[&str] = &[
    "script", "sudo", "su", "doas", "run0", "ssh", "docker", "podman",
];

/// One ancestor of a process, with its terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub pid: u32,
    /// Its program's name, lower case, as `focus::strategy::Ancestor::program` gives it.
    pub program: String,
    /// Its controlling terminal, 0 for none.
    pub tty: u64,
    /// True when its group has its terminal's foreground.
    pub foreground: bool,
}

/// A process's controlling terminal and its ancestors' (nearest first).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessTty {
    pub pid: u32,
    /// Its controlling terminal, 0 for none.
    pub tty: u64,
    pub ancestors: Vec<Link>,
}

impl ProcessTty {
    /// Reads the terminals of `pid` and of its ancestors (`ancestors` as `focus` walked them, the
    /// process itself first).
    pub fn read(pid: u32, ancestors: &[Ancestor]) -> ProcessTty {
        let tty = Stat::of(pid).map_or(0, |stat| stat.tty);
        let ancestors = ancestors
            .iter()
            .filter(|ancestor| ancestor.pid != pid && ancestor.pid > 1)
            .map(|ancestor| {
                let stat = Stat::of(ancestor.pid);
                Link {
                    pid: ancestor.pid,
                    program: ancestor.program(),
                    tty: stat.map_or(0, |stat| stat.tty),
                    foreground: stat.is_some_and(|stat| stat.foreground()),
                }
            })
            .collect();
        ProcessTty {
            pid,
            tty,
            ancestors,
        }
    }
}

/// One pane of a tmux server, with its terminal device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneTty {
    pub socket: String,
    pub pane: String,
    /// The device number of `#{pane_tty}`.
    pub tty: u64,
}

/// How a pane was proved to be a process's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proof {
    /// The process's controlling terminal is the pane's.
    Direct { tty: u64 },
    /// The process runs on a terminal of `relay`'s (`script`, `sudo`), an ancestor that is the
    /// foreground process of the pane's terminal.
    Relay {
        tty: u64,
        relay: u32,
        program: String,
        relay_tty: u64,
    },
}

impl Proof {
    /// The process's own controlling terminal.
    pub fn tty(&self) -> u64 {
        match self {
            Proof::Direct { tty } | Proof::Relay { tty, .. } => *tty,
        }
    }
}

/// The pane of `process` among `panes`, and how it was proved; `None` when its terminal is no
/// pane's. The nearest ancestor on another terminal decides a relay: a relay program in the
/// foreground of a pane proves it, anything else (a terminal emulator, an editor's terminal)
/// ends the search.
pub fn prove<'a>(process: &ProcessTty, panes: &'a [PaneTty]) -> Option<(&'a PaneTty, Proof)> {
    if process.tty == 0 {
        return None;
    }
    let pane_of = |tty: u64| panes.iter().find(|pane| same_device(pane.tty, tty));
    if let Some(pane) = pane_of(process.tty) {
        return Some((pane, Proof::Direct { tty: process.tty }));
    }
    let link = process
        .ancestors
        .iter()
        .find(|link| link.tty != 0 && !same_device(link.tty, process.tty))?;
    if !RELAYS.contains(&link.program.as_str()) || !link.foreground {
        return None;
    }
    let pane = pane_of(link.tty)?;
    Some((
        pane,
        Proof::Relay {
            tty: process.tty,
            relay: link.pid,
            program: link.program.clone(),
            relay_tty: link.tty,
        },
    ))
}

/// The format of each line of `tmux list-panes -a` that proving reads.
pub const TMUX_TTY_FORMAT: &str = "#{pane_id} #{pane_tty}";

/// `tmux -S <socket> list-panes -a` with [`TMUX_TTY_FORMAT`].
pub fn tmux_list_ttys(socket: &str) -> CommandLine {
    CommandLine {
        program: "tmux".to_string(),
        args: ["-S", socket, "list-panes", "-a", "-F", TMUX_TTY_FORMAT]
            .iter()
            .map(|arg| arg.to_string())
            .collect(),
        env: Vec::new(),
    }
}

/// Reads the output of [`tmux_list_ttys`]: each pane's id and terminal path. Lines that are not
/// a pane id and a `/dev/` path are skipped.
pub fn parse_tmux_ttys(text: &str) -> Vec<(String, String)> {
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

/// The format of the line tmux prints for a pane's state before typing.
pub const TMUX_STATE_FORMAT: &str = "#{pane_id} #{pane_in_mode} #{pane_tty}";

/// `tmux -S <socket> display-message -p -t <pane>` with [`TMUX_STATE_FORMAT`].
pub fn tmux_state(socket: &str, pane: &str) -> CommandLine {
    CommandLine {
        program: "tmux".to_string(),
        args: [
            "-S",
            socket,
            "display-message",
            "-p",
            "-t",
            pane,
            TMUX_STATE_FORMAT,
        ]
        .iter()
        .map(|arg| arg.to_string())
        .collect(),
        env: Vec::new(),
    }
}

/// A tmux pane's state just before typing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneState {
    /// True while the pane is in a mode (copy mode, a chooser): keys go to the mode.
    pub in_mode: bool,
    /// The path of its terminal.
    pub tty: String,
}

/// Reads the output of [`tmux_state`] for `pane`. A pane tmux no longer has prints another id or
/// none.
pub fn parse_tmux_state(text: &str, pane: &str) -> Result<PaneState, String> {
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

/// Every pane of every server in `sockets`, with its terminal's device, each server asked once
/// and all of them in parallel, each within the terminal read limit; and the servers that did not
/// answer, with why (a stopped server, or one too slow on a loaded machine), so that what they
/// would have proved is asked again later rather than taken as no pane.
pub fn tmux_panes(sockets: &[String]) -> TmuxPanes {
    std::thread::scope(|scope| {
        let asked: Vec<_> = sockets
            .iter()
            .map(|socket| {
                scope.spawn(move || {
                    let text = super::run(&tmux_list_ttys(socket))?;
                    Ok(parse_tmux_ttys(&text)
                        .into_iter()
                        .filter_map(|(pane, tty)| {
                            Some(PaneTty {
                                socket: socket.clone(),
                                pane,
                                tty: device_of(&tty)?,
                            })
                        })
                        .collect::<Vec<_>>())
                })
            })
            .collect();
        let mut found = TmuxPanes::default();
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

/// What [`tmux_panes`] found.
#[derive(Debug, Default)]
pub struct TmuxPanes {
    pub panes: Vec<PaneTty>,
    /// The servers that did not answer, with why.
    pub unanswered: Vec<(String, String)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pane(pane: &str, tty: u64) -> PaneTty {
        PaneTty {
            socket: "/tmp/tmux-1000/default".to_string(),
            pane: pane.to_string(),
            tty,
        }
    }

    fn link(pid: u32, program: &str, tty: u64, foreground: bool) -> Link {
        Link {
            pid,
            program: program.to_string(),
            tty,
            foreground,
        }
    }

    #[test]
    fn the_pane_is_the_one_whose_terminal_is_the_process_s() {
        let panes = [pane("%1", 34817), pane("%2", 34818)];
        let process = ProcessTty {
            pid: 10,
            tty: 34818,
            ancestors: vec![link(9, "bash", 34818, false)],
        };
        let (found, proof) = prove(&process, &panes).expect("proved");
        assert_eq!(found.pane, "%2");
        assert_eq!(proof, Proof::Direct { tty: 34818 });
    }

    #[test]
    fn a_terminal_of_no_pane_is_not_proved_whatever_runs_above_it() {
        let panes = [pane("%1", 34817)];
        // `kitty codex` started from pane %1: the agent's terminal is kitty's, and kitty is no
        // relay, even in the pane's foreground.
        let in_kitty = ProcessTty {
            pid: 10,
            tty: 34830,
            ancestors: vec![
                link(9, "bash", 34830, false),
                link(8, "kitty", 34817, true),
                link(7, "bash", 34817, false),
            ],
        };
        assert_eq!(prove(&in_kitty, &panes), None);
        // No terminal at all.
        let detached = ProcessTty {
            pid: 10,
            tty: 0,
            ancestors: vec![],
        };
        assert_eq!(prove(&detached, &panes), None);
    }

    #[test]
    fn a_relay_proves_the_pane_only_from_its_foreground() {
        let panes = [pane("%1", 34817)];
        let through = |foreground: bool| ProcessTty {
            pid: 10,
            tty: 34830,
            ancestors: vec![
                link(9, "bash", 34830, true),
                link(8, "script", 34817, foreground),
                link(7, "bash", 34817, false),
            ],
        };
        let (found, proof) = prove(&through(true), &panes).expect("proved through script");
        assert_eq!(found.pane, "%1");
        assert_eq!(
            proof,
            Proof::Relay {
                tty: 34830,
                relay: 8,
                program: "script".to_string(),
                relay_tty: 34817
            }
        );
        // `script` in the background of the pane (started with `&`): the keys would go to the
        // shell in front of it.
        assert_eq!(prove(&through(false), &panes), None);
    }

    #[test]
    fn tmux_tty_lines_are_checked() {
        let text = "%0 /dev/pts/3\n%12 /dev/pts/14\n\n%x /dev/pts/1\n%1 /etc/passwd\n%2 \n%3 /dev/pts/2 extra\nnoise";
        assert_eq!(
            parse_tmux_ttys(text),
            vec![
                ("%0".to_string(), "/dev/pts/3".to_string()),
                ("%12".to_string(), "/dev/pts/14".to_string()),
            ]
        );
        let huge = format!("%1 /dev/{}\n", "p".repeat(200_000));
        assert_eq!(parse_tmux_ttys(&huge).len(), 1);
        assert_eq!(device_of(&format!("/dev/{}", "p".repeat(200_000))), None);
        assert_eq!(device_of("/dev/../etc/passwd"), None);
        assert_eq!(device_of("/etc/passwd"), None);
    }

    #[test]
    fn a_pane_state_says_its_mode_and_terminal() {
        assert_eq!(
            parse_tmux_state("%3 1 /dev/pts/4\n", "%3"),
            Ok(PaneState {
                in_mode: true,
                tty: "/dev/pts/4".to_string()
            })
        );
        assert!(!parse_tmux_state("%3 0 /dev/pts/4", "%3").unwrap().in_mode);
        for bad in [
            "",
            " 0 /dev/pts/4",
            "%4 0 /dev/pts/4",
            "%3 2 /dev/pts/4",
            "%3 0",
            "%3 0 tty",
        ] {
            assert!(parse_tmux_state(bad, "%3").is_err(), "{bad:?}");
        }
    }
}
