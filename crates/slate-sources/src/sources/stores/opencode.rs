//! OpenCode's stores: its `opencode.db` (and the per-channel `opencode-<channel>.db` beside it),
//! read incrementally by the newest update and in parts when one budget is not enough, and its
//! pre-1.2 JSON tree under `<data>/storage`. What the rows mean is `agents::opencode`'s.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::types::ValueRef;

use super::{
    is_interrupted, named_like_a_file, problem, read_store, store_problem, Budgeted, Outcome,
    FILE_LIMIT, MESSAGES_PER_SESSION, STEP_BUDGET,
};
use crate::sources::folders::folder_pair;
use crate::sources::regular_file;
use slate_core::agents::opencode::{self, MessageRow, PartRow, SessionRow};
use slate_core::agents::{LineError, OpenCodeStore};
use slate_core::model::{AgentKind, Problem, ProblemKind, SessionKey, Timestamp};
use slate_core::tracker::{Batch, TranscriptRole};

/// Archived OpenCode sessions older than this are not read at all.
const ARCHIVED_KEPT: Duration = Duration::from_secs(24 * 60 * 60);

/// OpenCode's main database in its data folder: `$OPENCODE_DB` when set (an absolute path, or a
/// name relative to the data folder), else `<data>/opencode.db`; for a fork, its own names
/// (`store`). `None` when the variable is `:memory:`, which leaves nothing on disk to read
/// (docs/formats.md §4.1).
pub fn opencode_main_db(
    data: &Path,
    store: OpenCodeStore,
    named: Option<&Path>,
) -> Option<PathBuf> {
    let named = named.map(|name| name.to_string_lossy());
    match named
        .as_deref()
        .map(str::trim)
        .filter(|name| !name.is_empty())
    {
        Some(":memory:") => None,
        Some(name) => Some(data.join(name)),
        None => Some(data.join(format!("{}.db", store.database))),
    }
}

/// Every OpenCode database that exists in the data folder `data`: the main one (`None` for an
/// in-memory one), plus the per-channel `opencode-<channel>.db` files beside it (a beta or dev
/// build writes its own), under a fork's own names for a fork.
pub fn opencode_databases(data: &Path, store: OpenCodeStore, main: Option<&Path>) -> Vec<PathBuf> {
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
                    .is_some_and(|name| is_channel_db(store, name))
            })
            .filter(|path| Some(path) != main.as_ref() && named_like_a_file(path))
            .collect();
        channels.sort();
        found.extend(channels);
    }
    found
}

fn is_channel_db(store: OpenCodeStore, name: &str) -> bool {
    name.strip_prefix(store.database)
        .and_then(|rest| rest.strip_prefix('-'))
        .and_then(|rest| rest.strip_suffix(".db"))
        .is_some_and(|channel| !channel.is_empty())
}

fn integer(value: ValueRef<'_>) -> Option<i64> {
    match value {
        ValueRef::Integer(number) => Some(number),
        ValueRef::Real(number) => Some(number as i64),
        _ => None,
    }
}

fn line_problem(path: &Path, row: &str, error: &LineError) -> Problem {
    problem(ProblemKind::MalformedRow, path, format!("{row}: {error}"))
}

/// Reads the sessions of an OpenCode database updated after `updated_after` (all of them for
/// `None`) into one batch each, as of `now`, which decides which archived sessions are too old to
/// read.
///
/// Sub-agent sessions come out as their own batches whose `Info.parent_session` names the parent;
/// the tracker rolls them up. A missing database yields nothing and no problem: OpenCode is simply
/// not used here. The read has the budget of `STEP_BUDGET` steps; what fits of a database too big
/// for it is returned, with a `store_timeout` problem ([`StoreState`](super::StoreState) goes on
/// from there).
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

/// Reads the sessions updated after `after`, but those in `skip` (read already by an earlier part
/// of the same pass), within a budget of `steps`.
pub(super) fn read_opencode(
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
