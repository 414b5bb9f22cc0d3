//! The SQLite edge: reads OpenCode's `opencode.db`, its pre-1.2 JSON tree, and cursor-agent's
//! per-chat `store.db` into tracker batches.
//!
//! Both agents keep their sessions in live WAL-mode databases that they write while Slate reads,
//! so every database is opened read-only (never `immutable`, which would ignore the WAL), with a
//! short busy timeout and a few retries. Slate never writes, never checkpoints and never holds a
//! connection between reads. A database that is locked, corrupt, truncated or half-written becomes
//! a counted `Problem` and the read goes on without it.
//!
//! Anyone can leave a database in a watched folder, and a view can make a query endless, so every
//! read of a store has a budget of SQLite virtual-machine steps and of bytes (a progress handler
//! stops it once either is spent; the steps are about a quarter of a second of work in a release
//! build), and no value may be larger than a few megabytes. It is counted in steps,
//! not read off a clock: the sources read no clock (`tests/tidy.rs`), and a budget in steps stops
//! the same store at the same place on every run, so a replay decides the same way. An OpenCode
//! database too big for one budget is read in parts, oldest sessions first, each scan going on
//! where the last one stopped; a store whose first query alone outruns the budget is a counted
//! problem, not read again until its files change. Before SQLite opens a database by its path,
//! the database and its `-wal`, `-shm` and `-journal` companions are checked to be regular files
//! (`sources::regular_file`), as SQLite's own `open()` would block on a FIFO. What the rows mean is not decided here:
//! `agents::opencode` and `agents::cursor` turn rows into observations. Which agents keep which
//! store is in their descriptions (`agents::StoreKind`); [`StoreState`] follows every store the
//! registry names. Time comes in as an argument. Watching these files for changes and deciding
//! when to re-read is the caller's job.
//!
//! This file holds what every store shares: opening a database read-only within its budget, the
//! problems a failed read becomes, and the limits. What is particular to each agent's store is in
//! its own module: `opencode` (the databases and the pre-1.2 JSON tree), `cursor` (the chat
//! stores, their sidecars and transcripts), and `follow` ([`StoreState`]: which stores changed
//! since the last scan, and where a read cut short goes on).

mod cursor;
mod follow;
mod opencode;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rusqlite::limits::Limit;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::regular_file;
use slate_core::model::{Problem, ProblemKind};

pub use cursor::{cursor_store_path, cursor_stores, cursor_transcript_paths, read_cursor_store};
pub use follow::StoreState;
pub use opencode::{
    opencode_databases, opencode_main_db, read_opencode_legacy, read_opencode_since,
};

/// How long one statement waits for a writer's lock before giving up: short, because the agent
/// is the one that matters and the next read comes soon anyway.
const BUSY_TIMEOUT: Duration = Duration::from_millis(200);

/// How many times a read is tried when the database is busy or locked. Each try waits up to
/// `BUSY_TIMEOUT` in SQLite's own busy handler, so the tries are spaced without a clock here.
const TRIES: u32 = 3;

/// How many of a session's newest messages are read. What decides a state is always near the
/// end, and a long session must not make every re-read slow.
pub const MESSAGES_PER_SESSION: usize = 50;

/// The SQLite virtual-machine steps one read of a store may take. SQLite runs some 40 million
/// steps a second through an endless recursive view in a release build here, and about 15 million
/// in an unoptimised debug build on a busy machine, so this is a quarter of a second to about
/// one second, well inside the two seconds a read may hold the engine. A full read of an OpenCode
/// history of 2,000 sessions with 100 messages of 5 parts each takes about 12 million: such a
/// history is read in two parts.
pub const STEP_BUDGET: u64 = 10_000_000;

/// How many steps pass between two looks at the budget. SQLite counts them per statement, so a
/// statement shorter than this costs nothing; it stays small so that many short statements are
/// still counted.
const STEPS_PER_CHECK: u64 = 100;

/// The bytes of text and blobs one read of a store may take. A view can make a row of any size
/// at the cost of a step or two, so steps alone do not bound memory; a store with more to read
/// than this (an OpenCode history of thousands of sessions) is read in parts.
const BYTE_BUDGET: i64 = 64 * 1024 * 1024;

/// The largest text or blob SQLite may make for a read (its `SQLITE_LIMIT_LENGTH`): a view's
/// `randomblob(1e9)` is refused instead of allocated. A message part of OpenCode or a message
/// blob of cursor-agent is far smaller.
const VALUE_LIMIT: i32 = 8 * 1024 * 1024;

/// The most of a file beside a store that is read whole: cursor-agent's `meta.json` and
/// agent-transcript, and each file of OpenCode's pre-1.2 JSON tree.
const FILE_LIMIT: u64 = 16 * 1024 * 1024;

/// True for a path that exists and is not a folder: a store, or something named like one (a FIFO,
/// a device link), which the read reports rather than passes over.
fn named_like_a_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| !meta.is_dir())
}

// ---- Opening a store ---------------------------------------------------------------------------

/// Why a store could not be read.
#[derive(Debug)]
enum ReadError {
    /// The database or one of its companion files is not a regular file, or cannot be opened.
    File(PathBuf, io::Error),
    Sqlite(rusqlite::Error),
}

impl From<rusqlite::Error> for ReadError {
    fn from(error: rusqlite::Error) -> ReadError {
        ReadError::Sqlite(error)
    }
}

impl ReadError {
    /// True when the read ran out of its budget of steps.
    fn timed_out(&self) -> bool {
        matches!(self, ReadError::Sqlite(error) if is_interrupted(error))
    }
}

/// A store open for one read, with what the read may still spend.
struct Budgeted {
    connection: Connection,
    /// Bytes of text and blobs the read may still take; below zero, the progress handler stops
    /// the next statement.
    bytes_left: Arc<AtomicI64>,
}

impl Budgeted {
    /// The text of a column, whether SQLite stored it as text or as a blob; `None` for NULL or a
    /// number. Its bytes count against the budget.
    fn text(&self, value: ValueRef<'_>) -> Option<String> {
        match value {
            ValueRef::Text(bytes) | ValueRef::Blob(bytes) => {
                self.spend(bytes.len());
                Some(String::from_utf8_lossy(bytes).into_owned())
            }
            _ => None,
        }
    }

    /// The bytes of a blob (or text) column, counted against the budget.
    fn bytes(&self, value: ValueRef<'_>) -> Option<Vec<u8>> {
        match value {
            ValueRef::Blob(bytes) | ValueRef::Text(bytes) => {
                self.spend(bytes.len());
                Some(bytes.to_vec())
            }
            _ => None,
        }
    }

    fn spend(&self, bytes: usize) {
        let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
        self.bytes_left.fetch_sub(bytes, Ordering::Relaxed);
    }
}

impl std::ops::Deref for Budgeted {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        &self.connection
    }
}

/// Opens a database read-only and runs `read` on it, within a budget of `steps` (and
/// `BYTE_BUDGET`), retrying a few times while a writer holds a lock. The connection is dropped
/// before returning.
fn read_store<T>(
    path: &Path,
    steps: u64,
    read: impl Fn(&Budgeted) -> rusqlite::Result<T>,
) -> Result<T, ReadError> {
    check_files(path)?;
    let mut attempt = 0;
    loop {
        let result = open_read_only(path, steps).and_then(|store| {
            // One read transaction gives a consistent snapshot across the queries.
            let transaction = store.unchecked_transaction()?;
            let value = read(&store)?;
            // The budget is for the reading; ending the transaction must not be stopped by it.
            transaction.progress_handler(0, None::<fn() -> bool>);
            transaction.finish()?;
            Ok(value)
        });
        match result {
            Err(error) if is_busy(&error) && attempt + 1 < TRIES => attempt += 1,
            other => return other.map_err(ReadError::Sqlite),
        }
    }
}

/// Checks that the database and whichever of its companions exist are regular files: SQLite
/// opens them itself, by their paths, and would block on a FIFO.
fn check_files(path: &Path) -> Result<(), ReadError> {
    let mut companions = vec![path.to_path_buf()];
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        companions.push(PathBuf::from(name));
    }
    for (index, file) in companions.into_iter().enumerate() {
        match regular_file::check(&file) {
            Ok(()) => {}
            Err(error) if index > 0 && error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(ReadError::File(file, error)),
        }
    }
    Ok(())
}

fn open_read_only(path: &Path, steps: u64) -> rusqlite::Result<Budgeted> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let connection = Connection::open_with_flags(path, flags)?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    connection.set_limit(Limit::SQLITE_LIMIT_LENGTH, VALUE_LIMIT)?;
    let bytes_left = Arc::new(AtomicI64::new(BYTE_BUDGET));
    let left = Arc::clone(&bytes_left);
    let mut spent = 0u64;
    connection.progress_handler(
        STEPS_PER_CHECK as i32,
        Some(move || {
            spent += STEPS_PER_CHECK;
            spent > steps || left.load(Ordering::Relaxed) < 0
        }),
    );
    Ok(Budgeted {
        connection,
        bytes_left,
    })
}

fn is_interrupted(error: &rusqlite::Error) -> bool {
    error.sqlite_error_code() == Some(ErrorCode::OperationInterrupted)
}

fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// The problem a failed read becomes.
fn store_problem(path: &Path, error: &ReadError) -> Problem {
    let error = match error {
        ReadError::File(file, error) => {
            return problem(ProblemKind::StoreUnreadable, file, error.to_string())
        }
        ReadError::Sqlite(error) => error,
    };
    let kind = match error.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => ProblemKind::StoreLocked,
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => ProblemKind::StoreCorrupt,
        Some(
            ErrorCode::CannotOpen
            | ErrorCode::PermissionDenied
            | ErrorCode::SystemIoFailure
            | ErrorCode::NotFound,
        ) => ProblemKind::StoreUnreadable,
        Some(ErrorCode::OperationInterrupted) => {
            return problem(
                ProblemKind::StoreTimeout,
                path,
                "the read ran past its budget of steps or bytes and was stopped",
            )
        }
        // A missing table or column: a layout this reader does not know (an older or newer
        // version, or a store still being created).
        _ => ProblemKind::StoreUnexpected,
    };
    problem(kind, path, error.to_string())
}

fn problem(kind: ProblemKind, path: &Path, detail: impl Into<String>) -> Problem {
    Problem::new(kind, path.display().to_string(), detail)
}

/// How a read of a store ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Everything asked for was read (or there was nothing to read).
    Complete,
    /// The budget ran out after some sessions had been read: the rest is for the next read.
    Partial,
    /// Nothing could be read; `timed_out` when its budget ran out before anything was.
    Failed { timed_out: bool },
}
