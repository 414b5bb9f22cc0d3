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
//! [`tmux_sockets`] and [`tmux_panes`] gather the facts (the process table under `/proc`, and
//! one `tmux list-panes -a` per server, each within the terminal read limit). Before any key is
//! typed, [`Stat::ready`] says whether the agent may receive it now: alive, not stopped, and its
//! process group the terminal's foreground group.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::focus::strategy::{Ancestor, CommandLine};

/// The most of `/proc/<pid>/stat` that is read: the real line is a few hundred bytes.
const STAT_MOST: u64 = 4096;

/// What Slate reads of `/proc/<pid>/stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// The state letter: `R`, `S`, `D`, `T` (stopped), `t` (stopped by a debugger), `Z`…
    pub state: char,
    /// The process group.
    pub pgrp: i64,
    /// The controlling terminal's device number, 0 for none.
    pub tty: u64,
    /// The foreground process group of the controlling terminal, -1 for none.
    pub tpgid: i64,
}

/// Why keys may not be typed for a process now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotReady {
    Gone,
    Stopped,
    /// Another process group has the terminal's foreground.
    Background,
    /// The process has no controlling terminal, or another one than the pane's.
    OtherTerminal,
}

impl NotReady {
    /// The sentence a refusal says, for process `pid` named `what` ("the agent", "its relay").
    pub fn sentence(&self, what: &str, pid: u32) -> String {
        match self {
            NotReady::Gone => format!("{what} (process {pid}) has exited"),
            NotReady::Stopped => format!(
                "{what} (process {pid}) is stopped (Ctrl-Z, or a debugger): bring it back with \
                 `fg` in its terminal first"
            ),
            NotReady::Background => format!(
                "{what} (process {pid}) is not the terminal's foreground process: another program \
                 would get the keys"
            ),
            NotReady::OtherTerminal => format!(
                "{what} (process {pid}) no longer has the terminal that was proved to be its pane"
            ),
        }
    }
}

impl Stat {
    /// Reads one `/proc/<pid>/stat` line. The command name is in parentheses and may hold spaces
    /// and parentheses of its own, so the fields are counted after the last `)`.
    pub fn parse(line: &str) -> Option<Stat> {
        let (_, rest) = line.rsplit_once(')')?;
        let mut fields = rest.split_ascii_whitespace();
        let state = fields.next()?.chars().next()?;
        let _ppid = fields.next()?;
        let pgrp = fields.next()?.parse().ok()?;
        let _session = fields.next()?;
        let tty = fields.next()?.parse::<i64>().ok()?;
        let tpgid = fields.next()?.parse().ok()?;
        Some(Stat {
            state,
            pgrp,
            tty: u64::try_from(tty).ok()?,
            tpgid,
        })
    }

    /// The process's stat now, `None` when it is gone or cannot be read.
    pub fn of(pid: u32) -> Option<Stat> {
        let text = read_small(&PathBuf::from(format!("/proc/{pid}/stat")), STAT_MOST)?;
        Stat::parse(&text)
    }

    /// True when the process's group has the foreground of its controlling terminal.
    pub fn foreground(&self) -> bool {
        self.tty != 0 && self.tpgid > 0 && self.pgrp == self.tpgid
    }

    /// Whether keys typed into terminal `tty` reach this process now.
    pub fn ready(&self, tty: u64) -> Result<(), NotReady> {
        if matches!(self.state, 'Z' | 'X' | 'x') {
            return Err(NotReady::Gone);
        }
        if matches!(self.state, 'T' | 't') {
            return Err(NotReady::Stopped);
        }
        if self.tty == 0 || !same_device(self.tty, tty) {
            return Err(NotReady::OtherTerminal);
        }
        if !self.foreground() {
            return Err(NotReady::Background);
        }
        Ok(())
    }
}

/// Reads at most `most` bytes of a small file as text.
fn read_small(path: &Path, most: u64) -> Option<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(most)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// A device number split into its major and minor numbers, as Linux encodes both a terminal's
/// `st_rdev` and a process's `tty_nr`.
fn split_device(device: u64) -> (u64, u64) {
    let major = ((device >> 8) & 0xfff) | ((device >> 32) & !0xfff);
    let minor = (device & 0xff) | ((device >> 12) & !0xff);
    (major, minor)
}

/// True when two device numbers name the same device.
pub fn same_device(a: u64, b: u64) -> bool {
    a != 0 && split_device(a) == split_device(b)
}

/// The device number of a terminal device file (`/dev/pts/3`); only paths under `/dev/` count.
pub fn device_of(path: &str) -> Option<u64> {
    if !path.starts_with("/dev/") || path.contains("/../") {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let meta = std::fs::metadata(path).ok()?;
        meta.file_type()
            .is_char_device()
            .then(|| meta.rdev())
            .filter(|device| *device != 0)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

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

/// The tmux servers of this user: the sockets named in `hints` (the `$TMUX` of processes), every
/// socket in tmux's own folder (`$TMUX_TMPDIR` or `/tmp`, then `tmux-<uid>`), and the listening
/// socket of every running tmux server process of this user, so a server started with `-S`
/// anywhere is found without any variable.
pub fn tmux_sockets(hints: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut sockets: BTreeSet<String> = hints.into_iter().collect();
    #[cfg(target_os = "linux")]
    {
        let uid = own_uid();
        if let Some(uid) = uid {
            let base = std::env::var_os("TMUX_TMPDIR")
                .map(PathBuf::from)
                .filter(|dir| dir.is_absolute())
                .unwrap_or_else(|| PathBuf::from("/tmp"));
            let folder = base.join(format!("tmux-{uid}"));
            if let Ok(entries) = std::fs::read_dir(&folder) {
                for entry in entries.flatten().take(256) {
                    use std::os::unix::fs::FileTypeExt;
                    if entry.file_type().is_ok_and(|kind| kind.is_socket()) {
                        sockets.insert(entry.path().to_string_lossy().into_owned());
                    }
                }
            }
            sockets.extend(server_sockets(uid));
        }
    }
    sockets
        .into_iter()
        .filter(|socket| Path::new(socket).is_absolute())
        .collect()
}

#[cfg(target_os = "linux")]
fn own_uid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").ok().map(|meta| meta.uid())
}

/// The listening sockets of this user's tmux server processes, from `/proc/<pid>/fd` and
/// `/proc/net/unix`.
#[cfg(target_os = "linux")]
fn server_sockets(uid: u32) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;

    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut inodes = BTreeSet::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|name| name.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if entry.metadata().map_or(true, |meta| meta.uid() != uid) {
            continue;
        }
        let Some(comm) = read_small(&entry.path().join("comm"), 64) else {
            continue;
        };
        if !comm.trim_end().starts_with("tmux") {
            continue;
        }
        // A tmux server holds its listening socket open; a tmux client holds a connected one,
        // whose path `/proc/net/unix` does not show.
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten().take(4096) {
            let Ok(target) = std::fs::read_link(fd.path()) else {
                continue;
            };
            let target = target.to_string_lossy();
            if let Some(inode) = target
                .strip_prefix("socket:[")
                .and_then(|rest| rest.strip_suffix(']'))
            {
                inodes.insert(inode.to_string());
            }
        }
    }
    if inodes.is_empty() {
        return Vec::new();
    }
    let Some(table) = read_small(Path::new("/proc/net/unix"), 8 << 20) else {
        return Vec::new();
    };
    parse_unix_sockets(&table, &inodes)
}

/// The paths of the listening unix sockets in `/proc/net/unix` whose inode is in `inodes`.
pub fn parse_unix_sockets(table: &str, inodes: &BTreeSet<String>) -> Vec<String> {
    // Num RefCount Protocol Flags Type St Inode Path; flag 00010000 is __SO_ACCEPTCON (listening).
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (flags, inode, path) = (fields.get(3)?, fields.get(6)?, fields.get(7)?);
            let listening = u32::from_str_radix(flags, 16).is_ok_and(|flags| flags & 0x10000 != 0);
            (listening && inodes.contains(*inode) && path.starts_with('/'))
                .then(|| path.to_string())
        })
        .collect()
}

/// Every pane of every server in `sockets`, with its terminal's device, each server asked once
/// and all of them in parallel, each within the terminal read limit. A server that does not
/// answer adds no pane.
pub fn tmux_panes(sockets: &[String]) -> Vec<PaneTty> {
    std::thread::scope(|scope| {
        let asked: Vec<_> = sockets
            .iter()
            .map(|socket| {
                scope.spawn(move || {
                    let Ok(text) = super::run(&tmux_list_ttys(socket)) else {
                        return Vec::new();
                    };
                    parse_tmux_ttys(&text)
                        .into_iter()
                        .filter_map(|(pane, tty)| {
                            Some(PaneTty {
                                socket: socket.clone(),
                                pane,
                                tty: device_of(&tty)?,
                            })
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        asked
            .into_iter()
            .flat_map(|thread| thread.join().unwrap_or_default())
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_read_after_the_last_parenthesis() {
        let line = "4242 (co) dex (x)) S 1 4242 4242 34819 4242 4194560 0 0";
        let stat = Stat::parse(line).expect("a stat line");
        assert_eq!(
            stat,
            Stat {
                state: 'S',
                pgrp: 4242,
                tty: 34819,
                tpgid: 4242
            }
        );
        assert!(stat.foreground());
        assert_eq!(stat.ready(34819), Ok(()));
        assert_eq!(stat.ready(34820), Err(NotReady::OtherTerminal));
        let stopped = Stat::parse("1 (a) T 1 7 7 34819 9 0").unwrap();
        assert_eq!(stopped.ready(34819), Err(NotReady::Stopped));
        let behind = Stat::parse("1 (a) S 1 7 7 34819 9 0").unwrap();
        assert_eq!(behind.ready(34819), Err(NotReady::Background));
        let zombie = Stat::parse("1 (a) Z 1 7 7 34819 7 0").unwrap();
        assert_eq!(zombie.ready(34819), Err(NotReady::Gone));
        let detached = Stat::parse("1 (a) S 1 7 7 0 -1 0").unwrap();
        assert_eq!(detached.ready(34819), Err(NotReady::OtherTerminal));
    }

    #[test]
    fn malformed_stat_lines_are_none() {
        for line in [
            "",
            "4242",
            "4242 (codex",
            "4242 (codex) S",
            "4242 (codex) S 1 x 4242 34819 4242",
            "4242 (codex) S 1 4242 4242 -5 4242",
        ] {
            assert_eq!(Stat::parse(line), None, "{line:.40}");
        }
        // A huge name with parentheses of its own is skipped whole.
        let huge = format!("1 ({}) S 1 2 2 3 2", "x) R 9 9 9 9 (".repeat(10_000));
        assert_eq!(
            Stat::parse(&huge),
            Some(Stat {
                state: 'S',
                pgrp: 2,
                tty: 3,
                tpgid: 2
            })
        );
    }

    #[test]
    fn device_numbers_compare_by_major_and_minor() {
        // /dev/pts/3: major 136, minor 3, as stat and /proc both encode it.
        assert!(same_device(34819, 34819));
        assert!(!same_device(34819, 34820));
        assert!(!same_device(0, 0));
        // A minor above 255 keeps its high bits above bit 20.
        let big = (136 << 8) | 0x05 | (0x012 << 20);
        assert_eq!(split_device(big), (136, 0x1205));
    }

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

    #[test]
    fn listening_sockets_are_found_by_inode() {
        let table = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 4711 /tmp/tmux-0/default\n\
            0000000000000000: 00000003 00000000 00000000 0001 03 4712 /tmp/tmux-0/default\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 4713 @abstract\n\
            garbage\n";
        let inodes: BTreeSet<String> = ["4711", "4712", "4713"].map(String::from).into();
        assert_eq!(
            parse_unix_sockets(table, &inodes),
            vec!["/tmp/tmux-0/default".to_string()]
        );
    }
}
