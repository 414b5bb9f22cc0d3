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
//! The same holds for every backend: the panes are what the backends list with their terminal
//! devices (`terminals::backend`'s `survey_for` and `device`, for tmux the `list-panes -a` of
//! each server that can hold the process's terminal or a relay's), and only the device decides.
//!
//! [`prove`] decides from facts alone and is tested without processes; [`ProcessTty::read`]
//! gathers the process's side (the process table under `/proc`). Before any key is typed,
//! [`Stat::ready`] says whether the agent may receive it now: alive, not stopped, and its process
//! group the terminal's foreground group.

use super::backend::PaneTty;
use crate::focus::strategy::Ancestor;

pub use crate::tty::{device_of, same_device, NotReady, Stat};

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

    /// Every terminal device a pane of the process could have: its own, and its ancestors'
    /// (a relay's pane).
    pub fn devices(&self) -> impl Iterator<Item = u64> + '_ {
        std::iter::once(self.tty)
            .chain(self.ancestors.iter().map(|link| link.tty))
            .filter(|tty| *tty != 0)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pane(pane: &str, tty: u64) -> PaneTty {
        PaneTty {
            address: crate::terminals::tmux::address("/tmp/tmux-1000/default", pane),
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
        assert_eq!(found.address.pane, "%2");
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
        assert_eq!(found.address.pane, "%1");
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
}
