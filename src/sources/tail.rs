//! Reading a growing file incrementally, whatever its lines mean.
//!
//! [`FileTail`] reads a file from where its last read stopped: a partial last line is kept and
//! waited for, a line too long to hold is skipped and reported, a zstd-compressed file is read
//! whole as a stream, and a file that was truncated or replaced (told by its [`FileIdentity`]) is
//! read again from the start after a reset. A first read may take only a file's head and tail.
//! [`TranscriptReader`] puts an agent's [`LineParser`] behind a tail and counts the lines it
//! cannot read as problems. This module knows no agent and no layout: the walk decides which
//! files to read and how, and the descriptions' parsers say what the lines mean.

use std::fs::{File, Metadata};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::agents::{LineParser, Observation};
use crate::lines::{LineBuffer, LineEvent};
use crate::model::{Problem, ProblemKind, Timestamp};

/// What one read did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadStats {
    /// Bytes read from the file (compressed bytes for a `.zst` file are counted decompressed).
    pub bytes_read: u64,
    /// Complete lines handed out, skipped oversized lines included.
    pub lines: u64,
    /// True when only the head and the tail were read.
    pub head_tail: bool,
    /// True when the file was truncated or replaced and read again from the start.
    pub reset: bool,
}

/// How a file is read the first time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadPlan {
    /// From the start to the end.
    Whole,
    /// The first `head` bytes and the last `tail` bytes, each cut to whole lines. A file not
    /// larger than both together is read whole.
    HeadTail { head: u64, tail: u64 },
}

/// What makes a file the same file: on Unix its device and inode, elsewhere (and as a second
/// check) its creation time. Replacing a transcript by renaming a new file over it changes this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    device: u64,
    inode: u64,
    created: Option<SystemTime>,
}

impl FileIdentity {
    pub fn of(meta: &Metadata) -> FileIdentity {
        #[cfg(unix)]
        let (device, inode) = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let (device, inode) = (0, 0);
        FileIdentity {
            device,
            inode,
            created: meta.created().ok(),
        }
    }
}

/// Where the reading of one file stands.
#[derive(Debug, Clone)]
struct Cursor {
    identity: FileIdentity,
    /// The next byte of the file to read (of the decompressed stream for a `.zst` file).
    position: u64,
    /// The file's size when last read: a compressed file is read again only when it changes.
    size: u64,
    /// True after a jump into the middle of the file: bytes are dropped up to the next newline.
    resync: bool,
    max_line: usize,
    lines: LineBuffer,
}

impl Cursor {
    /// A cursor at `position` of a file of `size` bytes, with nothing buffered yet.
    fn new(
        identity: FileIdentity,
        position: u64,
        size: u64,
        resync: bool,
        max_line: usize,
    ) -> Cursor {
        Cursor {
            identity,
            position,
            size,
            resync,
            max_line,
            lines: LineBuffer::new(position, max_line),
        }
    }
}

/// Reads one file's lines incrementally, whatever they mean.
///
/// It keeps the partial last line for the next read, skips lines longer than `max_line` without
/// holding them, and starts over (reporting a reset) when the file was truncated or replaced.
#[derive(Debug, Clone)]
pub struct FileTail {
    path: PathBuf,
    compressed: bool,
    max_line: usize,
    cursor: Option<Cursor>,
}

impl FileTail {
    /// A reader for `path`, which is zstd-compressed when `compressed`. Nothing is read yet.
    pub fn new(path: impl Into<PathBuf>, compressed: bool, max_line: usize) -> FileTail {
        FileTail {
            path: path.into(),
            compressed,
            max_line,
            cursor: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True once the file has been read at least once.
    pub fn started(&self) -> bool {
        self.cursor.is_some()
    }

    /// Reads what is new and calls `on_event` for every complete line. `plan` matters only for
    /// the first read (or the first after a reset). An error means the file could not be opened
    /// or read; lines handed out before a read error stay handed out.
    pub fn read(
        &mut self,
        plan: ReadPlan,
        on_reset: &mut dyn FnMut(),
        on_event: &mut dyn FnMut(LineEvent<'_>),
    ) -> io::Result<ReadStats> {
        let mut file = File::open(&self.path)?;
        let meta = file.metadata()?;
        let identity = FileIdentity::of(&meta);
        let size = meta.len();
        let mut stats = ReadStats::default();
        if let Some(cursor) = &self.cursor {
            let replaced = cursor.identity != identity;
            let truncated = if self.compressed {
                size != cursor.size
            } else {
                size < cursor.position
            };
            if replaced || truncated {
                stats.reset = true;
                self.cursor = None;
                on_reset();
            } else if self.compressed {
                // A compressed rollout is cold and complete: once read, it has nothing new.
                return Ok(stats);
            }
        }
        let mut lines = 0u64;
        let mut counting = |event: LineEvent<'_>| {
            lines += 1;
            on_event(event);
        };
        let bytes_read = if self.compressed {
            self.read_compressed(file, identity, size, &mut counting)?
        } else if let Some(cursor) = &mut self.cursor {
            cursor.size = size;
            file.seek(SeekFrom::Start(cursor.position))?;
            feed_to_end(&mut file, cursor, &mut counting)?
        } else {
            match plan {
                ReadPlan::HeadTail { head, tail } if size > head.saturating_add(tail) => {
                    stats.head_tail = true;
                    self.read_head_tail(&mut file, identity, size, head, tail, &mut counting)?
                }
                _ => {
                    let cursor = Cursor::new(identity, 0, size, false, self.max_line);
                    feed_to_end(&mut file, self.cursor.insert(cursor), &mut counting)?
                }
            }
        };
        stats.bytes_read = bytes_read;
        stats.lines = lines;
        Ok(stats)
    }

    /// Reads the first `head` bytes (whole lines only), then the file from `size - tail` on,
    /// starting at the first line that begins inside the tail, and keeps reading from there.
    fn read_head_tail(
        &mut self,
        file: &mut File,
        identity: FileIdentity,
        size: u64,
        head: u64,
        tail: u64,
        on_event: &mut dyn FnMut(LineEvent<'_>),
    ) -> io::Result<u64> {
        let mut head_lines = LineBuffer::new(0, self.max_line);
        let mut chunk = vec![0; CHUNK];
        let mut read = 0;
        let mut limited = (&mut *file).take(head);
        loop {
            let n = limited.read(&mut chunk)?;
            if n == 0 {
                break;
            }
            read += n as u64;
            head_lines.push(&chunk[..n], &mut *on_event);
        }
        // Start one byte early: if that byte is a newline, the tail begins with a whole line,
        // which resyncing must not drop.
        let start = size - tail - 1;
        file.seek(SeekFrom::Start(start))?;
        let cursor = Cursor::new(identity, start, size, true, self.max_line);
        Ok(read + feed_to_end(file, self.cursor.insert(cursor), on_event)?)
    }

    /// Decompresses a whole `.zst` rollout as a stream. Its last line needs no newline: the file
    /// is finished.
    fn read_compressed(
        &mut self,
        file: File,
        identity: FileIdentity,
        size: u64,
        on_event: &mut dyn FnMut(LineEvent<'_>),
    ) -> io::Result<u64> {
        let mut decoder = zstd::stream::read::Decoder::new(file)?;
        let cursor = self
            .cursor
            .insert(Cursor::new(identity, 0, size, false, self.max_line));
        let read = feed_to_end(&mut decoder, cursor, on_event)?;
        if cursor.lines.has_partial() {
            cursor.lines.push(b"\n", on_event);
        }
        Ok(read)
    }
}

const CHUNK: usize = 256 * 1024;

/// Reads `source` to its end into `cursor`, handing out complete lines.
fn feed_to_end(
    source: &mut dyn Read,
    cursor: &mut Cursor,
    on_event: &mut dyn FnMut(LineEvent<'_>),
) -> io::Result<u64> {
    let mut chunk = vec![0; CHUNK];
    let mut read = 0;
    loop {
        let n = match source.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        read += n as u64;
        let mut bytes = &chunk[..n];
        let at = cursor.position;
        cursor.position += n as u64;
        if cursor.resync {
            match bytes.iter().position(|&byte| byte == b'\n') {
                None => continue,
                Some(newline) => {
                    cursor.lines = LineBuffer::new(at + newline as u64 + 1, cursor.max_line);
                    cursor.resync = false;
                    bytes = &bytes[newline + 1..];
                }
            }
        }
        cursor.lines.push(bytes, &mut *on_event);
    }
    Ok(read)
}

/// Reads one transcript: a [`FileTail`] whose lines go through an agent's parser.
#[derive(Debug)]
pub struct TranscriptReader {
    tail: FileTail,
    parser: Box<dyn LineParser>,
}

/// What one read of a transcript found.
#[derive(Debug, Clone, Default)]
pub struct TranscriptRead {
    /// The observations of the new lines, after an [`Observation::Reset`] when the file was
    /// truncated or replaced.
    pub observations: Vec<Observation>,
    pub problems: Vec<Problem>,
    pub stats: ReadStats,
}

/// At most this many malformed lines are reported one by one per read; the rest are summed up,
/// so a binary file does not flood the problem list.
const MALFORMED_REPORTED: u64 = 20;

impl TranscriptReader {
    /// A reader for `path` whose lines go through `parser`, fresh. Nothing is read yet.
    pub fn new(
        path: impl Into<PathBuf>,
        compressed: bool,
        max_line: usize,
        parser: Box<dyn LineParser>,
    ) -> TranscriptReader {
        TranscriptReader {
            tail: FileTail::new(path, compressed, max_line),
            parser,
        }
    }

    pub fn path(&self) -> &Path {
        self.tail.path()
    }

    /// True once the file has been read at least once.
    pub fn started(&self) -> bool {
        self.tail.started()
    }

    /// Reads and parses what is new. A malformed or oversized line is a counted problem; the
    /// lines after it are read.
    pub fn read(&mut self, plan: ReadPlan) -> io::Result<TranscriptRead> {
        let place = self.tail.path().display().to_string();
        let parser = &mut self.parser;
        // Set when the file turned out truncated or replaced: the parser starts over before the
        // first line of the new content.
        let restart = std::cell::Cell::new(false);
        let mut observations = Vec::new();
        let mut problems = Vec::new();
        let mut malformed = 0u64;
        let mut on_event = |event: LineEvent<'_>| match event {
            LineEvent::Line(line) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    return;
                }
                if restart.replace(false) {
                    parser.restart();
                }
                match parser.feed(line) {
                    Ok(parsed) => observations.extend(parsed),
                    Err(error) => {
                        malformed += 1;
                        if malformed <= MALFORMED_REPORTED {
                            problems.push(Problem::new(
                                ProblemKind::MalformedLine,
                                &place,
                                error.to_string(),
                            ));
                        }
                    }
                }
            }
            LineEvent::Oversized { len } => problems.push(oversized(&place, len)),
        };
        let reset = std::cell::Cell::new(false);
        let mut on_reset = || {
            restart.set(true);
            reset.set(true);
        };
        let stats = match self.tail.read(plan, &mut on_reset, &mut on_event) {
            Ok(stats) => stats,
            Err(error) if observations.is_empty() && problems.is_empty() => return Err(error),
            // The read failed part way: what was read stands, and the failure is counted.
            Err(error) => {
                problems.push(Problem::new(
                    ProblemKind::Unreadable,
                    &place,
                    error.to_string(),
                ));
                ReadStats {
                    reset: reset.get(),
                    ..ReadStats::default()
                }
            }
        };
        if malformed > MALFORMED_REPORTED {
            problems.push(Problem::new(
                ProblemKind::MalformedLine,
                &place,
                format!("{} more malformed lines", malformed - MALFORMED_REPORTED),
            ));
        }
        if stats.reset {
            observations.insert(0, Observation::Reset);
        }
        Ok(TranscriptRead {
            observations,
            problems,
            stats,
        })
    }
}

/// A file time as a timestamp; a time before 1970 counts back from it.
pub fn timestamp(at: SystemTime) -> Timestamp {
    match at.duration_since(std::time::UNIX_EPOCH) {
        Ok(since) => Timestamp(i64::try_from(since.as_millis()).unwrap_or(i64::MAX)),
        Err(before) => Timestamp(-i64::try_from(before.duration().as_millis()).unwrap_or(0)),
    }
}

/// The problem a line too long to hold becomes.
pub fn oversized(place: &str, len: u64) -> Problem {
    Problem::new(
        ProblemKind::HugeLine,
        place,
        format!("a line of {len} bytes was skipped"),
    )
}
