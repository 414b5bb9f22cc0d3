//! cursor-agent's stores: one `store.db` a chat under `<root>/chats/<bucket>/<agentId>/`, read
//! whole with the `meta.json` sidecar beside it and, when it is at least as new, the chat's
//! `agent-transcripts` JSONL. What the rows and lines mean is `agents::cursor`'s.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::OptionalExtension;

use super::{
    named_like_a_file, problem, read_store, store_problem, Budgeted, Outcome, FILE_LIMIT,
    STEP_BUDGET,
};
use crate::sources::folders::folder_pair;
use crate::sources::regular_file;
use crate::sources::tail::timestamp;
use slate_core::agents::cursor::{self, CursorRoot};
use slate_core::agents::Observation;
use slate_core::model::{AgentKind, Problem, ProblemKind, SessionKey, Timestamp};
use slate_core::tracker::{Batch, TranscriptRole};

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
fn mtime(path: &Path) -> Option<Timestamp> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    Some(timestamp(modified))
}

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
pub(super) fn read_cursor(
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
