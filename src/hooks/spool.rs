//! The spool: the hook events `slate hook` could not hand to a running Slate in time, one JSON
//! line each, in `hooks.spool` in Slate's data folder (docs/hooks.md).
//!
//! Hooks append to it, each under an exclusive lock on the file, so a line is never cut in two
//! nor lost to a reader emptying the file at the same moment. A running Slate takes it ([`drain`]:
//! read and emptied under the same lock) as it grows: the file watcher tells the live loop, and
//! the loop looks at its size ([`waiting`]) at every process scan besides. A one-shot command
//! reads it ([`read`]) and leaves it as it is: the one-shot's reading ends with the command, and
//! a Slate that starts later must still find the events. So only a live service empties the
//! spool; while none runs, it keeps what came in the last [`KEPT`], and a hook that finds it full
//! drops the older events first.
//!
//! The spool is opened without blocking, never through a link, and only when it is a regular
//! file: a FIFO or a device put there is refused, not waited on. Everything read is bounded.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::agents::hooks::HookReport;
use crate::model::Timestamp;

/// The spool's name in Slate's data folder, and the most it holds.
pub const SPOOL_FILE: &str = "hooks.spool";
pub const SPOOL_LIMIT: u64 = 256 * 1024;
/// How old a spooled event may be and still be read: an older one no longer says anything about
/// a session that is still open.
pub const KEPT: Duration = Duration::from_secs(3600);

/// One spooled event: when `slate hook` ran, and its report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Spooled {
    pub at: i64,
    pub report: HookReport,
}

/// Appends the report to the spool. A full spool first drops its events older than [`KEPT`];
/// when it is still full, the report is dropped.
pub fn spool(path: &Path, report: &HookReport, now: Timestamp) -> io::Result<()> {
    if let Some(folder) = path.parent() {
        fs::create_dir_all(folder)?;
    }
    let mut line = serde_json::to_string(&Spooled {
        at: now.millis(),
        report: report.clone(),
    })?;
    line.push('\n');
    let mut file = open_own(path, true)?;
    file.lock()?;
    let size = file.metadata()?.len();
    if size + line.len() as u64 <= SPOOL_LIMIT {
        // One write of one line, under the lock.
        return file.write_all(line.as_bytes());
    }
    let text = read_all(&file)?;
    let mut kept: String = text
        .lines()
        .filter(|old| parse(old).is_some_and(|(at, _)| at >= now.minus(KEPT)))
        .flat_map(|old| [old, "\n"])
        .collect();
    if kept.len() + line.len() > SPOOL_LIMIT as usize {
        return Ok(());
    }
    kept.push_str(&line);
    file.set_len(0)?;
    file.write_all(kept.as_bytes())
}

/// Takes the spool: its events of the last [`KEPT`] before `now`, oldest first, with the spool
/// emptied. Lines that do not read are skipped; a spool that cannot be opened gives nothing. A
/// hook holds the lock for one write, and no hook lives past its budget, so the wait for it is
/// short and bounded.
pub fn drain(path: &Path, now: Timestamp) -> Vec<(Timestamp, HookReport)> {
    let Ok(file) = open_own(path, false) else {
        return Vec::new();
    };
    if file.lock().is_err() {
        return Vec::new();
    }
    let text = read_all(&file).unwrap_or_default();
    if !text.is_empty() {
        let _ = file.set_len(0);
    }
    recent(&text, now)
}

/// Reads the spool's events of the last [`KEPT`] before `now`, oldest first, and leaves them
/// there (a one-shot command's reading).
pub fn read(path: &Path, now: Timestamp) -> Vec<(Timestamp, HookReport)> {
    let Ok(file) = open_own(path, false) else {
        return Vec::new();
    };
    if file.lock_shared().is_err() {
        return Vec::new();
    }
    recent(&read_all(&file).unwrap_or_default(), now)
}

/// True when the spool holds something to drain: one look at its size.
pub fn waiting(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|meta| meta.is_file() && meta.len() > 0)
}

/// The events of `text` from the last [`KEPT`] before `now`.
fn recent(text: &str, now: Timestamp) -> Vec<(Timestamp, HookReport)> {
    let since = now.minus(KEPT);
    text.lines()
        .filter_map(parse)
        .filter(|(at, _)| *at >= since)
        .collect()
}

fn parse(line: &str) -> Option<(Timestamp, HookReport)> {
    let spooled: Spooled = serde_json::from_str(line).ok()?;
    Some((Timestamp::from_millis(spooled.at), spooled.report))
}

/// Reads the whole spool from its start, at most twice its limit (a larger one was not written
/// by `slate hook`: what is past that is left unread).
fn read_all(mut file: &File) -> io::Result<String> {
    use std::io::Seek;
    file.rewind()?;
    let mut bytes = Vec::new();
    file.take(SPOOL_LIMIT * 2).read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Opens `path` to read and append, without blocking and without following a link, created
/// (owner-only) when `create` says so; anything but a regular file is refused.
pub(super) fn open_own(path: &Path, create: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).append(true).create(create);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(0o600)
            .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOFOLLOW);
    }
    let file = options.open(path)?;
    crate::sources::regular_file::ensure(&file.metadata()?)?;
    Ok(file)
}
