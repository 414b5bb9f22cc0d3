//! Terminals of processes as the kernel tells them (Linux's `/proc`): a process's controlling
//! terminal, its process group and the terminal's foreground group (`Stat`), the device number of
//! a terminal file, and the tmux servers of this user, found without any variable. Only reads,
//! each bounded in size; it decides nothing. `terminals::proof` proves panes with it, and `focus`
//! finds a session's terminal with it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

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
pub fn read_small(path: &Path, most: u64) -> Option<String> {
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

/// The path of `pid`'s controlling terminal: the one of its standard streams that is that
/// device, else the pseudo-terminal of that number when its device matches.
pub fn controlling_terminal(pid: u32) -> Option<String> {
    let device = Stat::of(pid)?.tty;
    if device == 0 {
        return None;
    }
    for fd in 0..3 {
        let Ok(link) = std::fs::read_link(format!("/proc/{pid}/fd/{fd}")) else {
            continue;
        };
        let link = link.to_string_lossy().into_owned();
        if device_of(&link).is_some_and(|found| same_device(found, device)) {
            return Some(link);
        }
    }
    let (major, minor) = split_device(device);
    if !(136..=143).contains(&major) {
        return None;
    }
    let candidate = format!("/dev/pts/{}", (major - 136) * 256 + minor);
    device_of(&candidate)
        .filter(|found| same_device(*found, device))
        .map(|_| candidate)
}

/// The tmux servers of this user: the sockets named in `hints` (the `$TMUX` of processes) that
/// exist, and the listening socket of every running tmux server process of this user, so a
/// server started with `-L` or `-S` anywhere is found without any variable. The files in tmux's
/// own folder are not taken as servers: a server that died leaves its socket behind, and asking
/// hundreds of dead sockets would cost a process each.
pub fn tmux_sockets(hints: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut sockets: BTreeSet<String> = hints
        .into_iter()
        .filter(|socket| Path::new(socket).is_absolute() && Path::new(socket).exists())
        .collect();
    #[cfg(target_os = "linux")]
    if let Some(uid) = own_uid() {
        sockets.extend(server_sockets(uid));
    }
    sockets.into_iter().collect()
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
