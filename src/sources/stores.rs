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

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rusqlite::limits::Limit;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension};

use super::folders::folder_pair;
use super::regular_file;
use super::roots::Roots;
use super::tail::timestamp;
use crate::agents::cursor::{self, CursorRoot};
use crate::agents::opencode::{self, MessageRow, PartRow, SessionRow};
use crate::agents::{LineError, Observation, Registry, StoreKind};
use crate::model::{AgentKind, Problem, ProblemKind, SessionKey, Timestamp};
use crate::tracker::{Batch, TranscriptRole};

/// How long one statement waits for a writer's lock before giving up: short, because the agent
/// is the one that matters and the next read comes soon anyway.
const BUSY_TIMEOUT: Duration = Duration::from_millis(200);

/// How many times a read is tried when the database is busy or locked. Each try waits up to
/// `BUSY_TIMEOUT` in SQLite's own busy handler, so the tries are spaced without a clock here.
const TRIES: u32 = 3;

/// How many of a session's newest messages are read. What decides a state is always near the
/// end, and a long session must not make every re-read slow.
pub const MESSAGES_PER_SESSION: usize = 50;

/// Archived OpenCode sessions older than this are not read at all.
const ARCHIVED_KEPT: Duration = Duration::from_secs(24 * 60 * 60);

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

// ---- Paths -------------------------------------------------------------------------------------

/// OpenCode's main database in its data folder: `$OPENCODE_DB` when set (an absolute path, or a
/// name relative to the data folder), else `<data>/opencode.db`. `None` when `$OPENCODE_DB` is
/// `:memory:`, which leaves nothing on disk to read (docs/formats.md §4.1).
pub fn opencode_main_db(data: &Path, named: Option<&Path>) -> Option<PathBuf> {
    let named = named.map(|name| name.to_string_lossy());
    match named
        .as_deref()
        .map(str::trim)
        .filter(|name| !name.is_empty())
    {
        Some(":memory:") => None,
        Some(name) => Some(data.join(name)),
        None => Some(data.join("opencode.db")),
    }
}

/// Every OpenCode database that exists in the data folder `data`: the main one (`None` for an
/// in-memory one), plus the per-channel `opencode-<channel>.db` files beside it (a beta or dev
/// build writes its own).
pub fn opencode_databases(data: &Path, main: Option<&Path>) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let main = main.map(Path::to_path_buf);
    if let Some(main) = &main {
        if named_like_a_file(main) {
            found.push(main.clone());
        }
    }
    if let Ok(entries) = std::fs::read_dir(data) {
        let mut channels: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| {
                path.file_name()
                    .and_then(|name| name.to_str())
                    .is_some_and(is_channel_db)
            })
            .filter(|path| Some(path) != main.as_ref() && named_like_a_file(path))
            .collect();
        channels.sort();
        found.extend(channels);
    }
    found
}

/// True for a path that exists and is not a folder: a store, or something named like one (a FIFO,
/// a device link), which the read reports rather than passes over.
fn named_like_a_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| !meta.is_dir())
}

fn is_channel_db(name: &str) -> bool {
    name.strip_prefix("opencode-")
        .and_then(|rest| rest.strip_suffix(".db"))
        .is_some_and(|channel| !channel.is_empty())
}

/// Where cursor-agent keeps the chat `agent_id` started in `cwd`.
pub fn cursor_store_path(root: &Path, cwd: &str, agent_id: &str) -> PathBuf {
    root.join("chats")
        .join(cursor::chat_bucket(cwd))
        .join(agent_id)
        .join("store.db")
}

/// Where a chat's `agent-transcripts` JSONL may be, newest layout first.
pub fn cursor_transcript_paths(root: &Path, cwd: &str, agent_id: &str) -> Vec<PathBuf> {
    let transcripts = root
        .join("projects")
        .join(cursor::project_slug(cwd))
        .join("agent-transcripts");
    vec![
        transcripts.join(agent_id).join(format!("{agent_id}.jsonl")),
        transcripts.join(format!("{agent_id}.jsonl")),
    ]
}

/// Every chat store under a cursor-agent root: `<root>/chats/<bucket>/<agentId>/store.db`.
pub fn cursor_stores(root: &Path) -> Vec<PathBuf> {
    let mut stores = Vec::new();
    let Ok(buckets) = std::fs::read_dir(root.join("chats")) else {
        return stores;
    };
    for bucket in buckets.filter_map(Result::ok) {
        let Ok(chats) = std::fs::read_dir(bucket.path()) else {
            continue;
        };
        for chat in chats.filter_map(Result::ok) {
            let store = chat.path().join("store.db");
            if named_like_a_file(&store) {
                stores.push(store);
            }
        }
    }
    stores.sort();
    stores
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

fn integer(value: ValueRef<'_>) -> Option<i64> {
    match value {
        ValueRef::Integer(number) => Some(number),
        ValueRef::Real(number) => Some(number as i64),
        _ => None,
    }
}

fn mtime(path: &Path) -> Option<Timestamp> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    Some(timestamp(modified))
}

fn line_problem(path: &Path, row: &str, error: &LineError) -> Problem {
    problem(ProblemKind::MalformedRow, path, format!("{row}: {error}"))
}

// ---- OpenCode ----------------------------------------------------------------------------------

/// Reads the sessions of an OpenCode database updated after `updated_after` (all of them for
/// `None`) into one batch each, as of `now`, which decides which archived sessions are too old to
/// read.
///
/// Sub-agent sessions come out as their own batches whose `Info.parent_session` names the parent;
/// the tracker rolls them up. A missing database yields nothing and no problem: OpenCode is simply
/// not used here. The read has the budget of `STEP_BUDGET` steps; what fits of a database too big
/// for it is returned, with a `store_timeout` problem ([`StoreState`] goes on from there).
pub fn read_opencode_since(
    agent: AgentKind,
    db_path: &Path,
    updated_after: Option<Timestamp>,
    now: Timestamp,
    problems: &mut Vec<Problem>,
) -> Vec<Batch> {
    let after = updated_after.map_or(i64::MIN, Timestamp::millis);
    let none = HashSet::new();
    read_opencode(agent, db_path, after, &none, now, STEP_BUDGET, problems).0
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

/// Reads the sessions updated after `after`, but those in `skip` (read already by an earlier part
/// of the same pass), within a budget of `steps`.
fn read_opencode(
    agent: AgentKind,
    db_path: &Path,
    after: i64,
    skip: &HashSet<String>,
    now: Timestamp,
    steps: u64,
    problems: &mut Vec<Problem>,
) -> (Vec<Batch>, Outcome) {
    if !db_path.exists() {
        return (Vec::new(), Outcome::Complete);
    }
    let archived_cutoff = now.minus(ARCHIVED_KEPT).millis();
    let read = read_store(db_path, steps, |connection| {
        read_opencode_sessions(connection, after, archived_cutoff, skip)
    });
    let (sessions, cut) = match read {
        Ok(read) => read,
        Err(error) => {
            problems.push(store_problem(db_path, &error));
            let timed_out = error.timed_out();
            return (Vec::new(), Outcome::Failed { timed_out });
        }
    };
    let outcome = if cut {
        problems.push(problem(
            ProblemKind::StoreTimeout,
            db_path,
            format!(
                "read {} sessions within the budget of steps and bytes; the rest at the next scan",
                sessions.len()
            ),
        ));
        Outcome::Partial
    } else {
        Outcome::Complete
    };
    let batches = sessions
        .into_iter()
        .map(|stored| {
            let (observations, errors) =
                opencode::observe_session_counted(&stored.session, &stored.messages);
            for error in &errors {
                problems.push(line_problem(db_path, &error.row_id, &error.error));
            }
            let id = stored.session.id.clone();
            Batch {
                key: SessionKey::new(agent, id.as_str()),
                role: TranscriptRole::Main,
                transcript: format!("{}#{id}", db_path.display()),
                last_write: Timestamp::from_millis(stored.last_write),
                folders: folder_pair(&stored.session.directory),
                observations,
            }
        })
        .collect();
    (batches, outcome)
}

/// One session as read from the database.
struct StoredSession {
    session: SessionRow,
    messages: Vec<MessageRow>,
    /// The newest `time_updated` of the session and its messages and parts. The database file is
    /// shared by every session, so its mtime says nothing about this one.
    last_write: i64,
}

/// The sessions updated after `after` (oldest update first) but those in `skip`, and whether the
/// budget ran out before the last of them.
fn read_opencode_sessions(
    connection: &Budgeted,
    after: i64,
    archived_cutoff: i64,
    skip: &HashSet<String>,
) -> rusqlite::Result<(Vec<StoredSession>, bool)> {
    let mut sessions = Vec::new();
    let mut statement = connection.prepare(
        "SELECT id, parent_id, directory, title, version, time_created, time_updated, \
                time_compacting, time_archived \
         FROM session \
         WHERE time_updated > ?1 \
            OR (?1 > ?2 AND id IN (SELECT session_id FROM message WHERE time_updated > ?1 \
                                   UNION SELECT session_id FROM part WHERE time_updated > ?1)) \
         ORDER BY time_updated, id",
    )?;
    // A part can change without its session's `time_updated` moving (docs/formats.md does not say
    // that OpenCode touches the session on every part update), so an incremental read also looks
    // for newer messages and parts. A full read skips that scan.
    let mut rows = statement.query([after, i64::MIN])?;
    while let Some(row) = rows.next()? {
        let Some(id) = connection.text(row.get_ref(0)?) else {
            continue;
        };
        let session = SessionRow {
            id,
            parent_id: connection.text(row.get_ref(1)?).filter(|id| !id.is_empty()),
            directory: connection.text(row.get_ref(2)?).unwrap_or_default(),
            title: connection.text(row.get_ref(3)?).unwrap_or_default(),
            version: connection.text(row.get_ref(4)?),
            time_created: integer(row.get_ref(5)?).unwrap_or(0),
            time_updated: integer(row.get_ref(6)?).unwrap_or(0),
            time_compacting: integer(row.get_ref(7)?),
            time_archived: integer(row.get_ref(8)?),
        };
        if session
            .time_archived
            .is_some_and(|archived| archived < archived_cutoff)
            || skip.contains(&session.id)
        {
            continue;
        }
        sessions.push(session);
    }
    drop(rows);
    let mut stored = Vec::with_capacity(sessions.len());
    for session in sessions {
        match read_opencode_session(connection, session) {
            Ok(one) => stored.push(one),
            // Out of budget part way: what was read stands, and the rest is read next time.
            Err(error) if is_interrupted(&error) && !stored.is_empty() => {
                return Ok((stored, true));
            }
            Err(error) => return Err(error),
        }
    }
    Ok((stored, false))
}

/// One session's newest messages with their parts, and its newest update.
fn read_opencode_session(
    connection: &Budgeted,
    session: SessionRow,
) -> rusqlite::Result<StoredSession> {
    let read = || -> rusqlite::Result<(Vec<MessageRow>, Option<i64>)> {
        let messages = read_opencode_messages(connection, &session.id)?;
        let newest: Option<i64> = connection.query_row(
            "SELECT MAX(updated) FROM ( \
               SELECT MAX(time_updated) AS updated FROM message WHERE session_id = ?1 \
               UNION ALL SELECT MAX(time_updated) FROM part WHERE session_id = ?1)",
            [&session.id],
            |row| Ok(integer(row.get_ref(0)?)),
        )?;
        Ok((messages, newest))
    };
    let (messages, newest) = read()?;
    let last_write = newest.map_or(session.time_updated, |newest| {
        newest.max(session.time_updated)
    });
    Ok(StoredSession {
        session,
        messages,
        last_write,
    })
}

fn read_opencode_messages(
    connection: &Budgeted,
    session_id: &str,
) -> rusqlite::Result<Vec<MessageRow>> {
    let mut messages_statement = connection.prepare_cached(
        "SELECT id, time_created, data FROM message WHERE session_id = ?1 \
         ORDER BY time_created DESC, id DESC LIMIT ?2",
    )?;
    let mut parts_statement =
        connection.prepare_cached("SELECT id, data FROM part WHERE message_id = ?1 ORDER BY id")?;
    let mut messages = Vec::new();
    let mut rows =
        messages_statement.query(rusqlite::params![session_id, MESSAGES_PER_SESSION as i64])?;
    while let Some(row) = rows.next()? {
        let Some(id) = connection.text(row.get_ref(0)?) else {
            continue;
        };
        messages.push(MessageRow {
            id,
            time_created: integer(row.get_ref(1)?).unwrap_or(0),
            data: connection.text(row.get_ref(2)?).unwrap_or_default(),
            parts: Vec::new(),
        });
    }
    messages.reverse();
    for message in &mut messages {
        let mut rows = parts_statement.query([&message.id])?;
        while let Some(row) = rows.next()? {
            if let Some(id) = connection.text(row.get_ref(0)?) {
                message.parts.push(PartRow {
                    id,
                    data: connection.text(row.get_ref(1)?).unwrap_or_default(),
                });
            }
        }
    }
    Ok(messages)
}

/// Reads the pre-1.2 JSON tree (`<data>/storage`): every session file, with its newest messages
/// and their parts. These sessions are history; they are dated by their own times, not by file
/// times, which a copy or a backup would change.
pub fn read_opencode_legacy(
    agent: AgentKind,
    storage_dir: &Path,
    problems: &mut Vec<Problem>,
) -> Vec<Batch> {
    let mut batches = Vec::new();
    let Ok(projects) = std::fs::read_dir(storage_dir.join("session")) else {
        return batches;
    };
    let mut session_files: Vec<PathBuf> = projects
        .filter_map(Result::ok)
        .filter_map(|project| std::fs::read_dir(project.path()).ok())
        .flat_map(|files| files.filter_map(Result::ok).map(|file| file.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    session_files.sort();
    for session_file in session_files {
        let session_json = match regular_file::read(&session_file, FILE_LIMIT) {
            Ok(bytes) => bytes,
            Err(error) => {
                problems.push(problem(
                    ProblemKind::UnreadableFile,
                    &session_file,
                    format!("the session file could not be read: {error}"),
                ));
                continue;
            }
        };
        let read = read_legacy_session(agent, storage_dir, &session_file, &session_json, problems);
        match read {
            Ok(batch) => batches.push(batch),
            Err(error) => problems.push(problem(
                ProblemKind::MalformedFile,
                &session_file,
                error.to_string(),
            )),
        }
    }
    batches
}

/// One session of the JSON tree, from its session file's bytes: its newest messages with their
/// parts, dated by the newest time they state.
fn read_legacy_session(
    agent: AgentKind,
    storage_dir: &Path,
    session_file: &Path,
    session_json: &[u8],
    problems: &mut Vec<Problem>,
) -> Result<Batch, LineError> {
    let session = opencode::legacy_session(session_json)?;
    let mut message_files = json_files(&storage_dir.join("message").join(&session.id));
    let skip = message_files.len().saturating_sub(MESSAGES_PER_SESSION);
    message_files.drain(..skip);
    let mut messages = Vec::with_capacity(message_files.len());
    let mut newest = session.time_updated;
    let mut read = |file: &Path| match regular_file::read(file, FILE_LIMIT) {
        Ok(bytes) => Some(bytes),
        Err(error) => {
            let detail = format!("the file could not be read: {error}");
            problems.push(problem(ProblemKind::UnreadableFile, file, detail));
            None
        }
    };
    for message_file in message_files {
        let Some(message_json) = read(&message_file) else {
            continue;
        };
        let message_id = message_file
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Ok(message) = serde_json::from_slice::<serde_json::Value>(&message_json) {
            for key in ["created", "completed"] {
                if let Some(at) = message["time"][key].as_i64() {
                    newest = newest.max(at);
                }
            }
        }
        let parts = json_files(&storage_dir.join("part").join(&message_id))
            .iter()
            .filter_map(|part_file| read(part_file))
            .collect();
        messages.push((message_json, parts));
    }
    let observations = opencode::observe_legacy(session_json, &messages)?;
    Ok(Batch {
        key: SessionKey::new(agent, session.id.as_str()),
        role: TranscriptRole::Main,
        transcript: session_file.display().to_string(),
        last_write: Timestamp::from_millis(newest),
        folders: folder_pair(&session.directory),
        observations,
    })
}

/// The `.json` files of a folder, sorted by name (OpenCode ids sort by time).
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

// ---- cursor-agent ------------------------------------------------------------------------------

/// What one read of a chat store found.
struct StoredChat {
    meta_hex: Option<String>,
    root: Option<Vec<u8>>,
    /// The message blobs named by the root, in its order; `None` where a blob is missing.
    messages: Vec<Option<Vec<u8>>>,
}

/// Reads one cursor-agent chat: its `store.db`, the `meta.json` sidecar beside it, and its
/// `agent-transcripts` JSONL when there is one. `None` when the store is missing, has no meta row
/// yet, or could not be read (then with a counted problem).
pub fn read_cursor_store(
    agent: AgentKind,
    store_db: &Path,
    problems: &mut Vec<Problem>,
) -> Option<Batch> {
    read_cursor(agent, store_db, STEP_BUDGET, problems).0
}

/// Reads one chat store within a budget of `steps`; also says how the read ended.
fn read_cursor(
    agent: AgentKind,
    store_db: &Path,
    steps: u64,
    problems: &mut Vec<Problem>,
) -> (Option<Batch>, Outcome) {
    if !store_db.exists() {
        return (None, Outcome::Complete);
    }
    let stored = match read_store(store_db, steps, read_chat) {
        Ok(stored) => stored,
        Err(error) => {
            problems.push(store_problem(store_db, &error));
            let timed_out = error.timed_out();
            return (None, Outcome::Failed { timed_out });
        }
    };
    (
        decide_chat(agent, store_db, stored, problems),
        Outcome::Complete,
    )
}

/// A chat store's rows, its sidecar and its transcript, read into one batch.
fn decide_chat(
    agent: AgentKind,
    store_db: &Path,
    stored: StoredChat,
    problems: &mut Vec<Problem>,
) -> Option<Batch> {
    let meta = match cursor::decode_meta(stored.meta_hex.as_deref()?) {
        Ok(meta) => meta,
        Err(error) => {
            problems.push(problem(
                ProblemKind::StoreCorrupt,
                store_db,
                format!("meta row: {error}"),
            ));
            return None;
        }
    };
    let root = match stored.root.as_deref().map(cursor::decode_root).transpose() {
        Ok(root) => root,
        Err(error) => {
            problems.push(problem(
                ProblemKind::StoreCorrupt,
                store_db,
                format!("root blob: {error}"),
            ));
            return None;
        }
    };
    // A blob the root names but the store lacks is a write still in progress; the next read
    // will find it.
    let messages: Vec<Vec<u8>> = stored.messages.into_iter().flatten().collect();
    let chat_dir = store_db.parent();
    let sidecar_path = chat_dir.map(|dir| dir.join("meta.json"));
    let sidecar =
        sidecar_path
            .as_deref()
            .and_then(|path| match regular_file::read(path, FILE_LIMIT) {
                Ok(bytes) => Some(bytes),
                Err(error) if error.kind() == io::ErrorKind::NotFound => None,
                Err(error) => {
                    problems.push(problem(
                        ProblemKind::UnreadableFile,
                        path,
                        error.to_string(),
                    ));
                    None
                }
            });
    let folder_name = chat_dir
        .and_then(Path::file_name)
        .map(|name| name.to_string_lossy().into_owned());
    let agent_id = meta.agent_id.clone().or(folder_name)?;
    let mut observations =
        cursor::observe_messages(&meta, sidecar.as_deref(), root.as_ref(), &messages);

    let wal = store_db.with_extension("db-wal");
    let mut last_write = [Some(store_db), Some(wal.as_path()), sidecar_path.as_deref()]
        .into_iter()
        .flatten()
        .filter_map(mtime)
        .max()
        .or(meta.created_at)
        .unwrap_or(Timestamp::from_millis(0));

    let cwd = observations
        .iter()
        .find_map(|observation| match observation {
            Observation::Info(info) => info.cwd.clone(),
            _ => None,
        });
    if let (Some(cwd), Some(root_dir)) = (&cwd, config_root_of(store_db)) {
        let transcript = cursor_transcript_paths(&root_dir, cwd, &agent_id)
            .into_iter()
            .find(|path| path.is_file());
        if let Some(transcript) = transcript {
            if let Some(records) = read_transcript(&transcript, last_write, problems) {
                // The transcript carries turn markers the store lacks; when it is at least as new
                // as the store, its records replace the store's.
                observations.retain(|observation| !matches!(observation, Observation::Record(_)));
                observations.extend(records);
                last_write = last_write.max(mtime(&transcript).unwrap_or(last_write));
            }
        }
    }
    Some(Batch {
        key: SessionKey::new(agent, agent_id),
        role: TranscriptRole::Main,
        transcript: store_db.display().to_string(),
        last_write,
        folders: cwd.as_deref().map(folder_pair).unwrap_or_default(),
        observations,
    })
}

fn read_chat(connection: &Budgeted) -> rusqlite::Result<StoredChat> {
    let meta_hex = connection
        .query_row("SELECT value FROM meta WHERE key = '0'", [], |row| {
            Ok(connection.text(row.get_ref(0)?))
        })
        .optional()?
        .flatten();
    let Some(meta) = meta_hex
        .as_deref()
        .and_then(|hex| cursor::decode_meta(hex).ok())
    else {
        return Ok(StoredChat {
            meta_hex,
            root: None,
            messages: Vec::new(),
        });
    };
    let blob = |id: &str| -> rusqlite::Result<Option<Vec<u8>>> {
        let mut statement = connection.prepare_cached("SELECT data FROM blobs WHERE id = ?1")?;
        statement
            .query_row([id], |row| Ok(connection.bytes(row.get_ref(0)?)))
            .optional()
            .map(Option::flatten)
    };
    let root = match &meta.latest_root_blob_id {
        Some(id) => blob(id)?,
        None => None,
    };
    let mut messages = Vec::new();
    // A root that does not decode is reported by the caller; here it just names no messages.
    if let Some(decoded) = root
        .as_deref()
        .and_then(|bytes| cursor::decode_root(bytes).ok())
    {
        let CursorRoot { message_ids, .. } = decoded;
        for id in message_ids {
            messages.push(blob(&id)?);
        }
    }
    Ok(StoredChat {
        meta_hex,
        root,
        messages,
    })
}

/// The config root a chat store lives under: `<root>/chats/<bucket>/<agentId>/store.db`.
fn config_root_of(store_db: &Path) -> Option<PathBuf> {
    let chats = store_db.ancestors().nth(3)?;
    (chats.file_name()? == "chats").then(|| chats.parent().map(Path::to_path_buf))?
}

/// Slack for comparing a transcript's mtime with the store's, which the CLI writes moments apart.
const TRANSCRIPT_SLACK: Duration = Duration::from_secs(2);

/// The records of a chat's JSONL transcript, or `None` when it is older than the store or holds
/// no record. A last line without its newline is still being written and is left for next time.
fn read_transcript(
    path: &Path,
    store_write: Timestamp,
    problems: &mut Vec<Problem>,
) -> Option<Vec<Observation>> {
    let written = mtime(path)?;
    if written.plus(TRANSCRIPT_SLACK) < store_write {
        return None;
    }
    let bytes = match regular_file::read(path, FILE_LIMIT) {
        Ok(bytes) => bytes,
        Err(error) => {
            problems.push(problem(
                ProblemKind::UnreadableFile,
                path,
                error.to_string(),
            ));
            return None;
        }
    };
    let mut lines: Vec<&[u8]> = bytes.split(|byte| *byte == b'\n').collect();
    // The piece after the last newline is empty for a complete file, partial otherwise.
    lines.pop();
    let mut records = Vec::new();
    for (index, line) in lines.into_iter().enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match cursor::observe_transcript_line(line) {
            Ok(observations) => records.extend(observations),
            Err(error) => problems.push(problem(
                ProblemKind::MalformedLine,
                path,
                format!("line {}: {error}", index + 1),
            )),
        }
    }
    (!records.is_empty()).then_some(records)
}

// ---- Following the stores ----------------------------------------------------------------------

/// The size and modification time of each of a store's files; unchanged means nothing to read.
type Signature = Vec<Option<(u64, SystemTime)>>;

fn signature(paths: &[PathBuf]) -> Signature {
    paths
        .iter()
        .map(|path| {
            let meta = std::fs::metadata(path).ok()?;
            Some((meta.len(), meta.modified().ok()?))
        })
        .collect()
}

/// True when a read should be tried again at the next scan even if the store's files did not
/// change: a lock or a damaged file may be gone by then, a read cut by its budget goes on where
/// it stopped. A store that outran its budget before reading anything is not tried again until it
/// changes: it would only spend the budget again.
fn read_again(outcome: Outcome) -> bool {
    match outcome {
        Outcome::Complete => false,
        Outcome::Partial => true,
        Outcome::Failed { timed_out } => !timed_out,
    }
}

/// The stores `registry`'s descriptions name, each with its agent and root.
fn stores<'a>(
    registry: Registry,
    roots: &'a Roots,
) -> impl Iterator<Item = (AgentKind, StoreKind, &'a Path)> + 'a {
    registry.iter().filter_map(|description| {
        let agent = description.kind();
        Some((agent, description.store()?, roots.get(agent)?))
    })
}

/// OpenCode's databases in its data folder, with `$OPENCODE_DB` as the roots were resolved with.
fn opencode_databases_of(data: &Path, roots: &Roots) -> Vec<PathBuf> {
    let main = opencode_main_db(data, roots.var("OPENCODE_DB"));
    opencode_databases(data, main.as_deref())
}

/// What has been read of each store, so that a scan re-reads only stores that changed.
///
/// An OpenCode database holds every session, so it is read incrementally: only sessions updated
/// after the newest update seen so far (less a millisecond, so a write in the same millisecond as
/// the last read is not missed). A cursor-agent chat store holds one chat and is small: it is read
/// whole whenever its `store.db`, `store.db-wal` or `meta.json` changed. A store that could not be
/// read (locked by a writer past the busy timeout, say) keeps its old signature, so the next scan
/// tries it again. The position of an OpenCode database never moves past `now`: a row dated in
/// the far future must not hide every later one. A database too big for one budget is read in a
/// pass of several parts: each part reads the sessions the earlier ones did not, from the same
/// position, and the position moves on when the pass is complete.
#[derive(Debug, Clone)]
pub struct StoreState {
    opencode: HashMap<PathBuf, Followed>,
    legacy: HashMap<PathBuf, Signature>,
    cursor: HashMap<PathBuf, Signature>,
    /// The budget of steps of each read.
    steps: u64,
}

/// What has been read of one OpenCode database.
#[derive(Debug, Clone, Default)]
struct Followed {
    /// The signature of its files when it was last read through; `None` while a pass has more
    /// to read.
    signature: Option<Signature>,
    /// The newest update read so far: the next read asks for what is newer.
    newest: Option<Timestamp>,
    pass: Option<Pass>,
}

/// A read of an OpenCode database that its budget cut into parts.
#[derive(Debug, Clone)]
struct Pass {
    /// The position every part reads from.
    after: i64,
    /// The sessions its parts have read.
    done: HashSet<String>,
    /// The newest update its parts have read.
    latest: Option<Timestamp>,
    /// When it started: the position never moves past it, so a session written again after its
    /// part was read is read again next time.
    started: Timestamp,
}

impl Default for StoreState {
    fn default() -> StoreState {
        StoreState::with_step_budget(STEP_BUDGET)
    }
}

impl StoreState {
    pub fn new() -> StoreState {
        StoreState::default()
    }

    /// A state whose every read has a budget of `steps` SQLite steps instead of `STEP_BUDGET`.
    pub fn with_step_budget(steps: u64) -> StoreState {
        StoreState {
            opencode: HashMap::new(),
            legacy: HashMap::new(),
            cursor: HashMap::new(),
            steps,
        }
    }

    /// Reads every store `registry` names under `roots` that changed since the last scan: each
    /// OpenCode database and legacy JSON tree, each cursor-agent chat store. `now` decides which
    /// archived OpenCode sessions are too old.
    pub fn scan(
        &mut self,
        registry: Registry,
        roots: &Roots,
        now: Timestamp,
        problems: &mut Vec<Problem>,
    ) -> Vec<Batch> {
        let mut batches = Vec::new();
        for (agent, kind, root) in stores(registry, roots) {
            match kind {
                StoreKind::OpenCode => {
                    for db in opencode_databases_of(root, roots) {
                        batches.extend(self.read_opencode_db(agent, &db, now, problems));
                    }
                    batches.extend(self.read_legacy(agent, &root.join("storage"), problems));
                }
                StoreKind::Cursor => {
                    for store in cursor_stores(root) {
                        batches.extend(self.read_cursor(agent, &store, problems));
                    }
                }
            }
        }
        batches
    }

    /// Re-reads the store a changed file at `path` belongs to, as a watcher asks; `None` when the
    /// path belongs to no store.
    pub fn read_path(
        &mut self,
        registry: Registry,
        roots: &Roots,
        path: &Path,
        now: Timestamp,
        problems: &mut Vec<Problem>,
    ) -> Option<Vec<Batch>> {
        let name = path.file_name()?.to_str()?;
        for (agent, kind, root) in stores(registry, roots) {
            match kind {
                StoreKind::OpenCode => {
                    let db = match name.strip_suffix("-wal") {
                        Some(db) => path.with_file_name(db),
                        None => path.to_path_buf(),
                    };
                    if opencode_databases_of(root, roots).contains(&db) {
                        return Some(self.read_opencode_db(agent, &db, now, problems));
                    }
                }
                StoreKind::Cursor => {
                    if !path.starts_with(root.join("chats")) {
                        continue;
                    }
                    if !matches!(name, "store.db" | "store.db-wal" | "meta.json") {
                        return Some(Vec::new());
                    }
                    let store = path.with_file_name("store.db");
                    let batch = self.read_cursor(agent, &store, problems);
                    return Some(batch.into_iter().collect());
                }
            }
        }
        None
    }

    fn read_opencode_db(
        &mut self,
        agent: AgentKind,
        db: &Path,
        now: Timestamp,
        problems: &mut Vec<Problem>,
    ) -> Vec<Batch> {
        let files = [db.to_path_buf(), db.with_extension("db-wal")];
        let seen = signature(&files);
        let known = self.opencode.get(db).cloned().unwrap_or_default();
        if known.signature.as_ref() == Some(&seen) {
            return Vec::new();
        }
        let mut pass = known.pass.unwrap_or_else(|| Pass {
            after: known
                .newest
                .map_or(i64::MIN, |newest| newest.millis().saturating_sub(1)),
            done: HashSet::new(),
            latest: None,
            started: now,
        });
        let (batches, outcome) =
            read_opencode(agent, db, pass.after, &pass.done, now, self.steps, problems);
        let latest = batches.iter().map(|batch| batch.last_write).max();
        pass.latest = pass.latest.max(latest);
        pass.done
            .extend(batches.iter().map(|batch| batch.key.id.to_string()));
        let followed = match outcome {
            Outcome::Complete => Followed {
                signature: Some(seen),
                newest: known
                    .newest
                    .max(pass.latest.map(|latest| latest.min(pass.started).min(now))),
                pass: None,
            },
            Outcome::Partial => Followed {
                signature: None,
                newest: known.newest,
                pass: Some(pass),
            },
            // Out of budget before reading anything: not again until the files change.
            Outcome::Failed { timed_out: true } => Followed {
                signature: Some(seen),
                newest: known.newest,
                pass: None,
            },
            // Anything else may pass (a lock, a file half written): tried again next time.
            Outcome::Failed { timed_out: false } => return batches,
        };
        self.opencode.insert(db.to_path_buf(), followed);
        batches
    }

    /// The pre-1.2 tree is history: it is read again only when a session folder in it changed.
    fn read_legacy(
        &mut self,
        agent: AgentKind,
        storage: &Path,
        problems: &mut Vec<Problem>,
    ) -> Vec<Batch> {
        let sessions = storage.join("session");
        let mut folders = vec![sessions.clone()];
        if let Ok(entries) = std::fs::read_dir(&sessions) {
            let mut projects: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .collect();
            projects.sort();
            folders.extend(projects);
        }
        let seen = signature(&folders);
        if self.legacy.get(storage) == Some(&seen) {
            return Vec::new();
        }
        self.legacy.insert(storage.to_path_buf(), seen);
        read_opencode_legacy(agent, storage, problems)
    }

    fn read_cursor(
        &mut self,
        agent: AgentKind,
        store: &Path,
        problems: &mut Vec<Problem>,
    ) -> Option<Batch> {
        let files = [
            store.to_path_buf(),
            store.with_extension("db-wal"),
            store.with_file_name("meta.json"),
        ];
        let seen = signature(&files);
        if self.cursor.get(store) == Some(&seen) {
            return None;
        }
        let (batch, outcome) = read_cursor(agent, store, self.steps, problems);
        if !read_again(outcome) {
            self.cursor.insert(store.to_path_buf(), seen);
        }
        batch
    }
}
