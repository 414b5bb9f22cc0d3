//! Terminals of processes as the kernel tells them (Linux's `/proc`): a process's controlling
//! terminal, its process group and the terminal's foreground group (`Stat`), the device number of
//! a terminal file, and the tmux servers of this user, found without any variable, with the
//! pseudo-terminals each holds the master side of (its panes' terminals, from the `tty-index` of
//! each `/dev/ptmx` descriptor's fdinfo), so that a terminal's pane is asked of the one server
//! that can hold it. Only reads, each bounded in size; it decides nothing. `terminals::proof`
//! proves panes with it, and `focus` finds a session's terminal with it.

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
    let candidate = format!("/dev/pts/{}", pts_number(device)?);
    device_of(&candidate)
        .filter(|found| same_device(*found, device))
        .map(|_| candidate)
}

/// The number N of `/dev/pts/N` for a pseudo-terminal's device number; `None` for any other
/// device. Linux numbers them from major 136 on, 256 a major in the old encoding, and the new one
/// gives the same number.
pub fn pts_number(device: u64) -> Option<u32> {
    let (major, minor) = split_device(device);
    if device == 0 || !(136..=143).contains(&major) {
        return None;
    }
    u32::try_from((major - 136) * 256 + minor).ok()
}

/// The tmux servers of this user: the sockets named in `hints` (the `$TMUX` of processes) that
/// exist, and the listening socket of every running tmux server process of this user, so a
/// server started with `-L` or `-S` anywhere is found without any variable. The files in tmux's
/// own folder are not taken as servers: a server that died leaves its socket behind, and asking
/// hundreds of dead sockets would cost a process each.
pub fn tmux_sockets(hints: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut sockets: BTreeSet<String> = existing(hints).collect();
    sockets.extend(tmux_servers().into_iter().flat_map(|server| server.sockets));
    sockets.into_iter().collect()
}

/// The tmux sockets that can hold a pane whose terminal is one of `ttys` (device numbers): among
/// the servers of this user and the sockets named in `hints` that exist, only those
/// [`sockets_holding`] keeps.
pub fn tmux_sockets_for(hints: impl IntoIterator<Item = String>, ttys: &[u64]) -> Vec<String> {
    let hints: Vec<String> = existing(hints).collect();
    sockets_holding(&tmux_servers(), &hints, ttys)
}

/// The sockets of `hints` that are absolute paths of files that exist.
fn existing(hints: impl IntoIterator<Item = String>) -> impl Iterator<Item = String> {
    hints
        .into_iter()
        .filter(|socket| Path::new(socket).is_absolute() && Path::new(socket).exists())
}

/// A tmux server of this user as `/proc` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TmuxServer {
    pub pid: u32,
    /// The paths of its listening sockets.
    pub sockets: Vec<String>,
    /// The numbers N of the `/dev/pts/N` it holds the master side of: its panes' terminals, read
    /// from the `tty-index` line the kernel shows in the fdinfo of each of its `/dev/ptmx`
    /// descriptors. `None` when one of them shows none (an older kernel, or a read that failed):
    /// then only asking the server tells which terminals are its panes'.
    pub terminals: Option<BTreeSet<u32>>,
}

/// The sockets to ask for the panes of terminals `ttys`: those of each server in `servers` that
/// holds one of them or whose terminals are not known, and each socket of `hints` that is no
/// server's in `servers` (one whose process `/proc` does not show), which only asking tells about.
/// A server known to hold none of them is not asked: none of its panes can be on them. Pure.
pub fn sockets_holding(servers: &[TmuxServer], hints: &[String], ttys: &[u64]) -> Vec<String> {
    let wanted: BTreeSet<u32> = ttys.iter().filter_map(|tty| pts_number(*tty)).collect();
    let mut sockets: BTreeSet<String> = servers
        .iter()
        .filter(|server| {
            server
                .terminals
                .as_ref()
                .is_none_or(|held| !held.is_disjoint(&wanted))
        })
        .flat_map(|server| server.sockets.iter().cloned())
        .collect();
    sockets.extend(
        hints
            .iter()
            .filter(|hint| !servers.iter().any(|server| server.sockets.contains(hint)))
            .cloned(),
    );
    sockets.into_iter().collect()
}

/// Every tmux server process of this user, with its listening sockets and its panes' terminals.
pub fn tmux_servers() -> Vec<TmuxServer> {
    #[cfg(target_os = "linux")]
    if let Some(uid) = own_uid() {
        return servers_of(uid);
    }
    Vec::new()
}

#[cfg(target_os = "linux")]
fn own_uid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").ok().map(|meta| meta.uid())
}

/// The most of one descriptor's `/proc/<pid>/fdinfo/<fd>` that is read: a pseudo-terminal
/// master's is five short lines.
const FDINFO_MOST: u64 = 4096;

/// The most descriptors of one tmux process that are looked at.
const FDS_MOST: usize = 4096;

/// What the descriptors of one tmux process show.
#[derive(Debug, Default)]
struct Held {
    /// The inodes of its sockets (a server's listening one among them).
    sockets: BTreeSet<String>,
    /// The pseudo-terminals whose master it holds, `None` when one `/dev/ptmx` did not say.
    terminals: Option<BTreeSet<u32>>,
}

/// The tmux server processes of this user, from `/proc/<pid>/fd`, their fdinfo and
/// `/proc/net/unix`. A tmux server holds its listening socket open; a tmux client holds a
/// connected one, whose path `/proc/net/unix` does not show, so a client is no server here.
#[cfg(target_os = "linux")]
fn servers_of(uid: u32) -> Vec<TmuxServer> {
    use std::os::unix::fs::MetadataExt;

    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut processes: Vec<(u32, Held)> = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|name| name.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|name| name.parse::<u32>().ok())
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
        processes.push((pid, held(pid)));
    }
    if processes.iter().all(|(_, held)| held.sockets.is_empty()) {
        return Vec::new();
    }
    let Some(table) = read_small(Path::new("/proc/net/unix"), 8 << 20) else {
        return Vec::new();
    };
    processes
        .into_iter()
        .filter_map(|(pid, held)| {
            let sockets = parse_unix_sockets(&table, &held.sockets);
            (!sockets.is_empty()).then_some(TmuxServer {
                pid,
                sockets,
                terminals: held.terminals,
            })
        })
        .collect()
}

/// The sockets and pseudo-terminal masters that process `pid`'s descriptors show.
#[cfg(target_os = "linux")]
fn held(pid: u32) -> Held {
    let mut held = Held {
        sockets: BTreeSet::new(),
        terminals: Some(BTreeSet::new()),
    };
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        held.terminals = None;
        return held;
    };
    for fd in fds.flatten().take(FDS_MOST) {
        let Ok(target) = std::fs::read_link(fd.path()) else {
            continue;
        };
        let target = target.to_string_lossy();
        if let Some(inode) = target
            .strip_prefix("socket:[")
            .and_then(|rest| rest.strip_suffix(']'))
        {
            held.sockets.insert(inode.to_string());
        } else if target == "/dev/ptmx" || target == "/dev/pts/ptmx" {
            let info = Path::new("/proc")
                .join(pid.to_string())
                .join("fdinfo")
                .join(fd.file_name());
            let index = read_small(&info, FDINFO_MOST).and_then(|text| parse_tty_index(&text));
            match (index, held.terminals.as_mut()) {
                (Some(index), Some(terminals)) => {
                    terminals.insert(index);
                }
                (None, _) => held.terminals = None,
                (Some(_), None) => {}
            }
        }
    }
    held
}

/// The pseudo-terminal number a `/dev/ptmx` descriptor's fdinfo shows (`tty-index:\t3` for
/// `/dev/pts/3`); `None` when it shows none, or not a plain number.
pub fn parse_tty_index(fdinfo: &str) -> Option<u32> {
    fdinfo.lines().find_map(|line| {
        let value = line.strip_prefix("tty-index:")?.trim_matches([' ', '\t']);
        let plain =
            !value.is_empty() && value.len() <= 10 && value.bytes().all(|b| b.is_ascii_digit());
        plain.then(|| value.parse().ok()).flatten()
    })
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

    #[test]
    fn a_pseudo_terminal_is_numbered_from_its_device() {
        // /dev/pts/3 is 136:3; /dev/pts/300 is 136:300 in the new encoding and 137:44 in the old.
        assert_eq!(pts_number(34819), Some(3));
        assert_eq!(pts_number((136 << 8) | 0x2c | (0x001 << 20)), Some(300));
        assert_eq!(pts_number((137 << 8) | 44), Some(300));
        // No device, a virtual console (4:1) and a serial line (4:64) are no pseudo-terminal.
        assert_eq!(pts_number(0), None);
        assert_eq!(pts_number(0x401), None);
        assert_eq!(pts_number(0x440), None);
    }

    #[test]
    fn a_ptmx_fdinfo_says_its_terminal() {
        // As Linux 6.18 shows a tmux server's `/dev/ptmx` descriptor.
        let real = "pos:\t0\nflags:\t0104002\nmnt_id:\t24\nino:\t90\ntty-index:\t3\n";
        assert_eq!(parse_tty_index(real), Some(3));
        assert_eq!(parse_tty_index("tty-index:\t4294967295"), Some(u32::MAX));
        assert_eq!(parse_tty_index("tty-index: 12"), Some(12));
        for bad in [
            "",
            "pos:\t0\nflags:\t0104002\nmnt_id:\t24\nino:\t90\n",
            "tty-index:",
            "tty-index:\t\n",
            "tty-index:\t-1\n",
            "tty-index:\t+3\n",
            "tty-index:\t3x\n",
            "tty-index:\t3 4\n",
            "tty-index:\t0x3\n",
            "tty-index:\t4294967296\n",
            "tty-index:\t99999999999999999999999\n",
            "tty-index:\t\u{663}\n",
            "xtty-index:\t3\n",
            " tty-index:\t3\n",
            "tty-index\t3\n",
            "TTY-INDEX:\t3\n",
            "tty-ind",
        ] {
            assert_eq!(parse_tty_index(bad), None, "{bad:?}");
        }
        // A read cut at its bound, or garbage before the line, leaves the line itself whole.
        let huge = format!("{}\ntty-index:\t7\n", "x".repeat(1 << 20));
        assert_eq!(parse_tty_index(&huge), Some(7));
        let cut = &real[..real.len() - 3];
        assert_eq!(parse_tty_index(cut), None);
        let digits = format!("tty-index:\t{}\n", "9".repeat(1 << 20));
        assert_eq!(parse_tty_index(&digits), None);
    }

    #[test]
    fn only_the_servers_that_can_hold_a_terminal_are_asked() {
        let server = |pid: u32, socket: &str, terminals: Option<&[u32]>| TmuxServer {
            pid,
            sockets: vec![socket.to_string()],
            terminals: terminals.map(|held| held.iter().copied().collect()),
        };
        let servers = [
            server(10, "/tmp/tmux-1000/default", Some(&[0, 1, 2])),
            server(11, "/tmp/tmux-1000/work", Some(&[3, 300])),
            server(12, "/tmp/tmux-1000/empty", Some(&[])),
            server(13, "/tmp/old-kernel", None),
        ];
        let pts = |n: u64| (136 << 8) | (n & 0xff) | ((n & !0xff) << 12);
        let hints = [
            "/tmp/tmux-1000/work".to_string(),
            "/tmp/elsewhere".to_string(),
        ];
        // /dev/pts/3: the server that holds it, the one the kernel says nothing of, and the named
        // socket no process shows; never the servers known to hold other terminals.
        assert_eq!(
            sockets_holding(&servers, &hints, &[pts(3)]),
            ["/tmp/elsewhere", "/tmp/old-kernel", "/tmp/tmux-1000/work"]
        );
        assert_eq!(
            sockets_holding(&servers, &[], &[pts(300), pts(1)]),
            [
                "/tmp/old-kernel",
                "/tmp/tmux-1000/default",
                "/tmp/tmux-1000/work"
            ]
        );
        // A terminal no server holds, or no pseudo-terminal at all: only what cannot be known.
        assert_eq!(
            sockets_holding(&servers, &[], &[pts(9), 0x401, 0]),
            ["/tmp/old-kernel"]
        );
        assert!(sockets_holding(&servers[..3], &[], &[]).is_empty());
    }
}
