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

use slate_core::agents::hooks::HookReport;
use slate_core::model::Timestamp;

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
    rewrite(path, &file, kept.as_bytes())
}

/// Writes `text` over the start of the locked spool `locked` and cuts the file after it. The
/// spool is opened append-only, where every write goes to the end, so this writes through a
/// second handle on the same file (checked to be the same inode). A hook killed by its watchdog
/// half-way leaves the new text's start followed by the old text's rest: at most one line is cut
/// (and skipped by its reader), the rest is read twice, as the same events, and none is lost, as
/// it would be had the file been emptied first.
fn rewrite(path: &Path, locked: &File, text: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
    let file = OpenOptions::new()
        .write(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOFOLLOW)
        .open(path)?;
    let (ours, theirs) = (locked.metadata()?, file.metadata()?);
    if (ours.dev(), ours.ino()) != (theirs.dev(), theirs.ino()) {
        return Err(io::Error::other(
            "the spool was replaced while it was locked",
        ));
    }
    file.write_all_at(text, 0)?;
    file.set_len(text.len() as u64)
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
    slate_sources::sources::regular_file::ensure(&file.metadata()?)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(id: &str) -> HookReport {
        HookReport {
            agent: "codex".into(),
            event: "PermissionRequest".into(),
            session_id: id.into(),
            tool: None,
            detail: Some("x".repeat(400)),
            notification: None,
        }
    }

    fn ids(events: &[(Timestamp, HookReport)]) -> Vec<String> {
        events.iter().map(|(_, r)| r.session_id.clone()).collect()
    }

    /// Fills the spool with events at `at` until it takes no more, and returns how many it took.
    fn fill(path: &Path, at: Timestamp) -> usize {
        let size = || fs::metadata(path).map_or(0, |meta| meta.len());
        let mut n = 0;
        loop {
            let before = size();
            spool(path, &report(&format!("old-{n}")), at).unwrap();
            if size() == before {
                return n;
            }
            n += 1;
        }
    }

    #[test]
    fn a_full_spool_drops_its_stale_events_in_place_and_keeps_the_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(SPOOL_FILE);
        let now = Timestamp::from_millis(10_000_000_000);
        let stale = now.minus(KEPT + Duration::from_secs(60));
        let filled = fill(&path, stale);
        assert!(filled > 100, "the spool took {filled} events");
        let inode = |path: &Path| std::os::unix::fs::MetadataExt::ino(&fs::metadata(path).unwrap());
        let before = inode(&path);
        // Full: the next event makes room by dropping the stale ones, in the same file.
        spool(&path, &report("recent"), now.minus(Duration::from_secs(5))).unwrap();
        spool(&path, &report("newest"), now).unwrap();
        assert_eq!(inode(&path), before, "the spool is rewritten in place");
        let text = fs::read_to_string(&path).unwrap();
        assert!(
            text.lines().all(|line| parse(line).is_some()),
            "every line reads"
        );
        let events = read(&path, now);
        let seen = ids(&events);
        assert_eq!(seen.first().map(String::as_str), Some("recent"));
        assert_eq!(seen.last().map(String::as_str), Some("newest"));
        assert!(
            events.iter().all(|(at, _)| *at >= now.minus(KEPT)),
            "no stale event is left"
        );
        assert!(fs::metadata(&path).unwrap().len() <= SPOOL_LIMIT);
    }

    #[test]
    fn a_spool_full_of_recent_events_drops_the_new_one_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(SPOOL_FILE);
        let now = Timestamp::from_millis(10_000_000_000);
        fill(&path, now);
        let before = fs::read(&path).unwrap();
        spool(&path, &report("dropped"), now).unwrap();
        assert_eq!(
            fs::read(&path).unwrap(),
            before,
            "nothing of the spool changed"
        );
        assert!(!ids(&read(&path, now)).contains(&"dropped".to_string()));
    }

    #[test]
    fn a_rewrite_cut_short_loses_no_whole_event() {
        // What a watchdog's exit half-way through `rewrite` leaves: the new text's start over the
        // old text. Every old event that was not cut still reads.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(SPOOL_FILE);
        let now = Timestamp::from_millis(10_000_000_000);
        for n in 0..20 {
            spool(&path, &report(&format!("e{n}")), now).unwrap();
        }
        let old = fs::read(&path).unwrap();
        let kept: Vec<u8> = old
            .split_inclusive(|byte| *byte == b'\n')
            .skip(5)
            .flatten()
            .copied()
            .collect();
        let cut = kept.len() / 2;
        let mut left = kept[..cut].to_vec();
        left.extend_from_slice(&old[cut..]);
        fs::write(&path, &left).unwrap();
        let seen = ids(&read(&path, now));
        for n in 5..20 {
            assert!(seen.contains(&format!("e{n}")), "e{n} was lost: {seen:?}");
        }
    }
}
