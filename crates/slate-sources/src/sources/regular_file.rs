//! The one way the sources open an agent's file: non-blocking, and only when it is a regular file.
//!
//! Every path the sources read is named by someone else: an agent, a tool, or anyone who can write
//! under a watched folder. A FIFO named `<uuid>.jsonl` would block a plain `open()` until a writer
//! came along, and with it the engine's one thread; a link to `/dev/zero` would never end; a
//! socket or a folder named like a transcript is not a transcript at all. So [`open`] opens with
//! `O_NONBLOCK` (which a FIFO without a writer answers at once and a regular file ignores) and
//! then asks the opened handle, not the path, what it is: a file swapped between a check and the
//! open cannot slip through. Anything but a regular file is refused with an error that says what
//! it is, which the callers count as a problem. [`read`] adds a size limit for files read whole,
//! and [`check`] vouches for a path that another library (SQLite) opens itself.
//!
//! It knows no agent and no format; the walk, the layouts, the listings and the stores call it.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// Opens `path` for reading without blocking, and returns it only when it is a regular file.
pub fn open(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(nix::libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    ensure(&file.metadata()?)?;
    Ok(file)
}

/// Succeeds for a regular file's metadata; anything else is the error [`open`] gives for it. For a
/// caller that has already stat-ed a path and can pass over it without opening it.
pub fn ensure(meta: &Metadata) -> io::Result<()> {
    if meta.is_file() {
        Ok(())
    } else {
        Err(not_regular(meta))
    }
}

/// Reads a whole regular file of at most `limit` bytes. A larger file is an error, not a
/// truncated read: the callers parse what they read whole, and half a document is no document.
pub fn read(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = open(path)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

/// Reads a whole regular file of at most `limit` bytes as text.
pub fn read_to_string(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read(path, limit)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "the file is not UTF-8 text"))
}

/// Succeeds when `path` is a regular file that opens without blocking: for a file another library
/// opens by its path (SQLite), which would block on a FIFO.
pub fn check(path: &Path) -> io::Result<()> {
    open(path).map(drop)
}

/// The error a file that is larger than `limit` bytes becomes.
pub fn too_large(limit: u64) -> io::Error {
    io::Error::other(format!("the file is larger than {limit} bytes"))
}

/// The error a path that is not a regular file becomes, naming what it is.
fn not_regular(meta: &Metadata) -> io::Error {
    let kind = meta.file_type();
    let what = if kind.is_dir() {
        "a folder"
    } else {
        special_kind(&kind)
    };
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("not a regular file but {what}"),
    )
}

#[cfg(unix)]
fn special_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "a fifo"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "something else"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::FileType) -> &'static str {
    "something else"
}
