//! Reading a growing file incrementally, whatever its lines mean.
//!
//! [`FileTail`] reads a file from where its last read stopped: a partial last line is kept and
//! waited for, a line too long to hold is skipped and reported, a zstd-compressed file is read as
//! a stream, and a file that was truncated or replaced (told by its [`FileIdentity`]) is read
//! again from the start after a reset. A first read may take only a file's head and tail.
//! [`TranscriptReader`] puts an agent's [`LineParser`] behind a tail and counts the lines it
//! cannot read as problems. This module knows no agent and no layout: the walk decides which
//! files to read and how, and the descriptions' parsers say what the lines mean.
//!
//! A compressed file is read to the same byte budget as a plain one, counted in decompressed
//! bytes: a few kilobytes of zstd can hold gigabytes, and neither the time a read takes nor the
//! memory it holds may depend on the compression ratio. Its head and tail are the head and the
//! last bytes of what fits the budget, and a stream longer than the budget is cut there and
//! reported. A plain file that grew by more than the budget since its last read goes on from its
//! last budget's worth, and no read goes past the size the file had when it was opened, so a
//! writer that never stops cannot hold a read. Files are opened through `sources::regular_file`,
//! so a FIFO or a device never blocks a read.

use std::fs::{File, Metadata};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::regular_file;
use slate_core::agents::{LineParser, Observation};
use slate_core::lines::{LineBuffer, LineEvent};
use slate_core::model::{Problem, ProblemKind, Timestamp};

/// One read of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRead {
    pub path: std::path::PathBuf,
    pub stats: ReadStats,
}

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
    /// True when the file held more than one read may take: a compressed file that decompresses
    /// past the budget (the rest was not read), or a plain one that grew by more since its last
    /// read (only its newest bytes were read).
    pub cut: bool,
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
    /// The most one read takes: of a compressed file, in decompressed bytes; of a plain file
    /// that grew since the last read, its last bytes.
    budget: u64,
    cursor: Option<Cursor>,
}

/// The budget of one read unless the caller sets one: the walk's whole-read limit.
pub const READ_BUDGET: u64 = 16 * 1024 * 1024;

/// The largest zstd window a compressed file may ask for (2^24 bytes, 16 MiB): the decoder
/// allocates the window a frame declares, so a larger one would cost memory whatever is read of
/// it. Every level but the `--ultra` ones (20 to 22) stays within it, and no back-reference inside
/// the budget can reach further than the budget itself.
const WINDOW_LOG_MAX: u32 = 24;

impl FileTail {
    /// A reader for `path`, which is zstd-compressed when `compressed`. Nothing is read yet.
    pub fn new(path: impl Into<PathBuf>, compressed: bool, max_line: usize) -> FileTail {
        FileTail {
            path: path.into(),
            compressed,
            max_line,
            budget: READ_BUDGET,
            cursor: None,
        }
    }

    /// The same reader, reading at most `budget` bytes at once (decompressed bytes of a
    /// compressed file, the newest bytes of a plain file that grew by more).
    pub fn with_budget(mut self, budget: u64) -> FileTail {
        self.budget = budget;
        self
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
        let mut file = regular_file::open(&self.path)?;
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
            let read = self.read_compressed(file, identity, size, plan, &mut counting)?;
            stats.head_tail = read.head_tail;
            stats.cut = read.cut;
            read.bytes
        } else if let Some(cursor) = &mut self.cursor {
            if size - cursor.position > self.budget {
                // More was appended since the last read than one read may take: go on from the
                // last budget's worth, at the first line that starts inside it (one byte early,
                // as for a tail).
                let start = size - self.budget - 1;
                *cursor = Cursor::new(identity, start, size, true, self.max_line);
                stats.cut = true;
            }
            cursor.size = size;
            file.seek(SeekFrom::Start(cursor.position))?;
            let pending = size - cursor.position;
            feed_to_end(&mut (&mut file).take(pending), cursor, &mut counting)?
        } else {
            match plan {
                ReadPlan::HeadTail { head, tail } if size > head.saturating_add(tail) => {
                    stats.head_tail = true;
                    self.read_head_tail(&mut file, identity, size, head, tail, &mut counting)?
                }
                _ => {
                    let cursor = Cursor::new(identity, 0, size, false, self.max_line);
                    feed_to_end(
                        &mut (&mut file).take(size),
                        self.cursor.insert(cursor),
                        &mut counting,
                    )?
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
        let rest = &mut file.take(size - start);
        Ok(read + feed_to_end(rest, self.cursor.insert(cursor), on_event)?)
    }

    /// Decompresses a `.zst` rollout as a stream, at most `budget` bytes of it. Its last line
    /// needs no newline when the stream ends there: the file is finished. A stream cut at the
    /// budget ends in the middle of a line, which is dropped.
    fn read_compressed(
        &mut self,
        file: File,
        identity: FileIdentity,
        size: u64,
        plan: ReadPlan,
        on_event: &mut dyn FnMut(LineEvent<'_>),
    ) -> io::Result<Compressed> {
        let mut decoder = zstd::stream::read::Decoder::new(file)?;
        decoder.window_log_max(WINDOW_LOG_MAX)?;
        let budget = self.budget;
        let max_line = self.max_line;
        let mut stream = (&mut decoder).take(budget);
        let mut read = match plan {
            ReadPlan::Whole => {
                let cursor = self
                    .cursor
                    .insert(Cursor::new(identity, 0, size, false, max_line));
                let bytes = feed_to_end(&mut stream, cursor, on_event)?;
                Compressed {
                    bytes,
                    head_tail: false,
                    cut: false,
                }
            }
            ReadPlan::HeadTail { head, tail } => {
                let (cursor, read) =
                    head_and_tail(&mut stream, identity, size, head, tail, max_line, on_event)?;
                self.cursor = Some(cursor);
                read
            }
        };
        // One byte more than the budget tells a stream that ends there from a longer one (or from
        // one that is damaged past it, which is not read either).
        read.cut = read.bytes == budget && !matches!(decoder.read(&mut [0u8]), Ok(0));
        if let Some(cursor) = &mut self.cursor {
            if cursor.lines.has_partial() && !read.cut {
                cursor.lines.push(b"\n", on_event);
            }
        }
        Ok(read)
    }
}

/// What one read of a compressed file did.
struct Compressed {
    /// Decompressed bytes read.
    bytes: u64,
    head_tail: bool,
    cut: bool,
}

/// Reads the first `head` bytes of `stream` (whole lines only), then goes on to its end keeping
/// only the last `tail` bytes, and hands out the whole lines of those. A stream not longer than
/// both together is read whole. Memory stays at `tail` bytes whatever the stream's length.
fn head_and_tail(
    stream: &mut dyn Read,
    identity: FileIdentity,
    size: u64,
    head: u64,
    tail: u64,
    max_line: usize,
    on_event: &mut dyn FnMut(LineEvent<'_>),
) -> io::Result<(Cursor, Compressed)> {
    let both = head.saturating_add(tail);
    let mut start = Vec::new();
    (&mut *stream)
        .take(both.saturating_add(1))
        .read_to_end(&mut start)?;
    let mut cursor = Cursor::new(identity, 0, size, false, max_line);
    if start.len() as u64 <= both {
        let bytes = feed_to_end(&mut start.as_slice(), &mut cursor, on_event)?;
        let read = Compressed {
            bytes,
            head_tail: false,
            cut: false,
        };
        return Ok((cursor, read));
    }
    let mut head_lines = LineBuffer::new(0, max_line);
    let head = usize::try_from(head).unwrap_or(usize::MAX).min(start.len());
    head_lines.push(&start[..head], &mut *on_event);
    // The last `tail + 1` bytes: if the first of them is a newline, the tail begins with a whole
    // line, which resyncing must not drop.
    let keep = usize::try_from(tail.saturating_add(1)).unwrap_or(usize::MAX);
    let mut last = start.split_off(head);
    let mut total = (head + last.len()) as u64;
    let mut chunk = vec![0; CHUNK];
    loop {
        let n = read_some(stream, &mut chunk)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        last.extend_from_slice(&chunk[..n]);
        if last.len() > keep {
            last.drain(..last.len() - keep);
        }
    }
    let from = total - last.len() as u64;
    cursor = Cursor::new(identity, from, size, true, max_line);
    feed_to_end(&mut last.as_slice(), &mut cursor, on_event)?;
    let read = Compressed {
        bytes: total,
        head_tail: true,
        cut: false,
    };
    Ok((cursor, read))
}

const CHUNK: usize = 256 * 1024;

/// One read of `source` into `chunk`, tried again when a signal interrupted it; 0 at the end.
fn read_some(source: &mut dyn Read, chunk: &mut [u8]) -> io::Result<usize> {
    loop {
        match source.read(chunk) {
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// Reads `source` to its end into `cursor`, handing out complete lines.
fn feed_to_end(
    source: &mut dyn Read,
    cursor: &mut Cursor,
    on_event: &mut dyn FnMut(LineEvent<'_>),
) -> io::Result<u64> {
    let mut chunk = vec![0; CHUNK];
    let mut read = 0;
    loop {
        let n = read_some(source, &mut chunk)?;
        if n == 0 {
            break;
        }
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

    /// The same reader, reading at most `budget` bytes at once (see [`FileTail::with_budget`]).
    pub fn with_budget(mut self, budget: u64) -> TranscriptReader {
        self.tail = self.tail.with_budget(budget);
        self
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
        if stats.cut {
            let budget = self.tail.budget;
            let detail = if self.tail.compressed {
                format!(
                    "decompresses to more than {budget} bytes; only the first {budget} were read"
                )
            } else {
                format!(
                    "grew by more than {budget} bytes at once; only the last {budget} were read"
                )
            };
            problems.push(Problem::new(ProblemKind::HugeFile, &place, detail));
        }
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
