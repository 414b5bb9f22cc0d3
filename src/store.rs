//! Slate's own persistent store: one SQLite file that remembers what must survive a restart.
//!
//! It owns the schema and its migrations, and the small typed reads and writes the engine needs:
//! the history of status transitions (and from it the time a session spent in a status), the
//! user's intents (park/await), and the work items and claims; the desktop app's notification
//! pause (schema version 4), so a pause the person chose outlives a restart; and every answer to a
//! dialog (schema version 5). It keeps no read offsets (schema version 2 dropped them): a start-up
//! never reads closed history, only looks at its size and time, so there is nothing for an offset
//! to spare. Nor does it keep settings or the vouching process of a session (schema version 3
//! dropped both tables, which nothing wrote): settings live in the config file, and the tracker
//! learns presence again from the first process scan. It also owns what happens when the file is
//! corrupt (moved aside, never deleted, and a fresh store created) or locked by another writer (a
//! typed error after the busy timeout).
//!
//! It deliberately decides nothing: it stores what the engine hands it and gives it back. It never
//! reads the agents' own SQLite stores (that is `sources`), and it does not know where its file
//! lives: `places` says that, and the caller passes the path in.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, ErrorCode, OptionalExtension, TransactionBehavior};

use crate::model::{
    AgentKind, Awaiting, Intent, IntentState, ItemStatus, Reason, ReasonCode, SessionKey, Status,
    Timestamp,
};
use crate::policy::menu::Pause;
use crate::protocol::Record;

/// How long a write waits for another writer before it gives up with [`StoreError::Locked`].
/// Slate's own writes are tiny, so anything holding the lock this long is another program.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The schema, one entry per version, applied in order and never edited once released: version
/// `n` is reached by running `MIGRATIONS[n - 1]`, and `PRAGMA user_version` records how far a file
/// got. A change to the schema is a new entry at the end.
const MIGRATIONS: &[&str] = &[
    // Version 1: everything the first engine keeps.
    r#"
    CREATE TABLE transitions (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        session_id TEXT NOT NULL,
        from_status TEXT NULL,
        to_status TEXT NOT NULL,
        reason_code TEXT NOT NULL,
        reason_text TEXT NOT NULL,
        at_ms INTEGER NOT NULL
    );
    CREATE INDEX transitions_by_session ON transitions (agent, session_id, at_ms);

    CREATE TABLE offsets (
        path TEXT PRIMARY KEY,
        file_id TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ms INTEGER NOT NULL,
        "offset" INTEGER NOT NULL
    );

    CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );

    CREATE TABLE intents (
        agent TEXT NOT NULL,
        session_id TEXT NOT NULL,
        state TEXT NOT NULL,
        reason TEXT NULL,
        awaiting_who TEXT NULL,
        set_at_ms INTEGER NOT NULL,
        PRIMARY KEY (agent, session_id)
    );

    CREATE TABLE presence (
        agent TEXT NOT NULL,
        session_id TEXT NOT NULL,
        pid INTEGER NOT NULL,
        start_ms INTEGER NOT NULL,
        gone_at_ms INTEGER NULL,
        PRIMARY KEY (agent, session_id)
    );

    CREATE TABLE work_items (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        status TEXT NOT NULL,
        deps TEXT NOT NULL DEFAULT '[]',
        created_ms INTEGER NOT NULL
    );

    CREATE TABLE claims (
        id INTEGER PRIMARY KEY,
        item_id TEXT NOT NULL REFERENCES work_items (id) ON DELETE CASCADE,
        agent TEXT NOT NULL,
        session_id TEXT NOT NULL,
        claimed_ms INTEGER NOT NULL,
        released_ms INTEGER NULL
    );
    CREATE INDEX claims_by_item ON claims (item_id);
    CREATE INDEX claims_by_session ON claims (agent, session_id);
    "#,
    // Version 2: no read offsets. Closed history is never read at start-up (only its size and
    // time are looked at), and a live transcript must be folded whole to be decided, so an
    // offset saved across restarts would spare nothing.
    r#"
    DROP TABLE offsets;
    "#,
    // Version 3: no settings and no presence. Nothing ever wrote either table: settings live in
    // the config file, and a session's vouching process is found again by the first process scan
    // after a start. Dropping them (rather than leaving them unused) keeps the schema a true
    // account of what the store holds.
    r#"
    DROP TABLE settings;
    DROP TABLE presence;
    "#,
    // Version 4: the desktop app's notification pause, so a pause outlives a restart. One row at
    // most: no row is no pause, and a row without an end is a pause until resumed.
    r#"
    CREATE TABLE notification_pause (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        until_ms INTEGER NULL,
        set_at_ms INTEGER NOT NULL
    );
    "#,
    // Version 5: every answer to a dialog, whatever its outcome (docs/states.md §8): where it came
    // from, what it asked, the fingerprint of the dialog the person saw, and what happened.
    r#"
    CREATE TABLE answers (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        session_id TEXT NOT NULL,
        surface TEXT NOT NULL,
        action TEXT NOT NULL,
        option TEXT NULL,
        fingerprint TEXT NOT NULL,
        summary TEXT NULL,
        outcome TEXT NOT NULL,
        detail TEXT NULL,
        at_ms INTEGER NOT NULL
    );
    CREATE INDEX answers_by_session ON answers (agent, session_id, at_ms);
    "#,
];

/// What can go wrong with the store. Opening errors are fatal for the engine; a locked store is
/// worth retrying later.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot create the store folder {path}: {source}")]
    CreateFolder { path: PathBuf, source: io::Error },
    #[error("cannot open the store {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("the store {path} is corrupt: {detail}")]
    Corrupt { path: PathBuf, detail: String },
    #[error("the store {path} is locked by another writer")]
    Locked { path: PathBuf },
    #[error("cannot move the corrupt store {path} aside: {source}")]
    MoveAside { path: PathBuf, source: io::Error },
    #[error(
        "the store {path} has schema version {found}, newer than the {known} this slate knows"
    )]
    TooNew {
        path: PathBuf,
        found: u32,
        known: u32,
    },
    #[error("cannot {about} in the store: {source}")]
    Sqlite {
        about: &'static str,
        source: rusqlite::Error,
    },
    #[error("the store holds an unreadable {column} in {table}: {value}")]
    Decode {
        table: &'static str,
        column: &'static str,
        value: String,
    },
}

/// One status change of one session, as the engine recorded it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Transition {
    pub key: SessionKey,
    /// `None` for the first status Slate saw for the session.
    pub from: Option<Status>,
    pub to: Status,
    pub reason: Reason,
    pub at: Timestamp,
}

/// A user's intent together with when it was set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredIntent {
    pub intent: Intent,
    pub set_at: Timestamp,
}

/// A unit of work sessions can claim (a later issue gives these meaning).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkItem {
    pub id: String,
    pub title: String,
    /// Stored as its snake_case name; a name this build does not know reads as `blocked`.
    pub status: ItemStatus,
    /// The ids of the items this one waits for.
    pub deps: Vec<String>,
    pub created: Timestamp,
}

/// A session's claim on a work item; released claims are kept as history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub id: i64,
    pub item_id: String,
    pub key: SessionKey,
    pub claimed: Timestamp,
    pub released: Option<Timestamp>,
}

/// An open store. It holds one connection and is not shared between threads; the engine owns it.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    /// The file, or `:memory:`, for error messages.
    path: PathBuf,
    recovered_from: Option<PathBuf>,
}

/// Opens (creating if needed) the store at `path` with the default busy timeout.
pub fn open(path: &Path) -> Result<Store, StoreError> {
    open_with_busy_timeout(path, DEFAULT_BUSY_TIMEOUT)
}

/// Opens the store at `path`, waiting at most `busy_timeout` for another writer.
///
/// A corrupt file (not a database, or one that fails SQLite's quick check) is renamed to
/// `<name>.corrupt-<time>` together with its `-wal` and `-shm` files, a warning is logged, and a
/// fresh store is created in its place; [`Store::recovered_from`] then says where the old one went.
/// A locked file is not corrupt: it gives [`StoreError::Locked`] and is left alone.
pub fn open_with_busy_timeout(path: &Path, busy_timeout: Duration) -> Result<Store, StoreError> {
    if let Some(folder) = path
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
    {
        fs::create_dir_all(folder).map_err(|source| StoreError::CreateFolder {
            path: folder.to_path_buf(),
            source,
        })?;
    }
    match connect(path, busy_timeout) {
        Ok(conn) => Ok(Store {
            conn,
            path: path.to_path_buf(),
            recovered_from: None,
        }),
        Err(Failure::Corrupt(detail)) => {
            let aside = move_aside(path)?;
            tracing::warn!(
                store = %path.display(),
                moved_to = %aside.display(),
                error = %detail,
                "the store was corrupt: kept it aside and started a fresh one"
            );
            let conn = connect(path, busy_timeout).map_err(|failure| failure.into_error(path))?;
            Ok(Store {
                conn,
                path: path.to_path_buf(),
                recovered_from: Some(aside),
            })
        }
        Err(failure) => Err(failure.into_error(path)),
    }
}

/// Opens a fresh store that lives only in memory, for tests and for `--no-store` runs.
pub fn open_in_memory() -> Result<Store, StoreError> {
    let path = PathBuf::from(":memory:");
    let conn = Connection::open_in_memory().map_err(|source| StoreError::Open {
        path: path.clone(),
        source,
    })?;
    prepare(&conn, DEFAULT_BUSY_TIMEOUT).map_err(|failure| failure.into_error(&path))?;
    Ok(Store {
        conn,
        path,
        recovered_from: None,
    })
}

impl Store {
    /// The file this store lives in (`:memory:` for an in-memory one).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where a corrupt store found at open was moved, for `/health` to report.
    pub fn recovered_from(&self) -> Option<&Path> {
        self.recovered_from.as_deref()
    }

    /// The schema version the file is at.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        user_version(&self.conn).map_err(|source| self.fail("read the schema version", source))
    }

    /// The schema version this build writes.
    pub fn latest_schema_version() -> u32 {
        MIGRATIONS.len() as u32
    }

    /// Applies the migrations the file has not had yet and returns how many ran. Opening already
    /// does this, so a second call is a no-op that returns 0.
    pub fn migrate(&self) -> Result<usize, StoreError> {
        migrate(&self.conn).map_err(|failure| failure.into_error(&self.path))
    }

    /// Records one status change.
    pub fn record_transition(
        &self,
        key: &SessionKey,
        from: Option<Status>,
        to: Status,
        reason: &Reason,
        at: Timestamp,
    ) -> Result<(), StoreError> {
        self.record_transitions(&[Transition {
            key: key.clone(),
            from,
            to,
            reason: reason.clone(),
            at,
        }])
    }

    /// Records several status changes in one transaction: all of them are kept, or none.
    pub fn record_transitions(&self, transitions: &[Transition]) -> Result<(), StoreError> {
        if transitions.is_empty() {
            return Ok(());
        }
        let about = "record transitions";
        let tx = self.begin(about)?;
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO transitions
                        (agent, session_id, from_status, to_status, reason_code, reason_text, at_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .map_err(|source| self.fail(about, source))?;
            for transition in transitions {
                insert
                    .execute(params![
                        transition.key.agent.as_str(),
                        transition.key.id.as_str(),
                        transition.from.map(Status::as_str),
                        transition.to.as_str(),
                        transition.reason.code.as_str(),
                        transition.reason.text,
                        transition.at.millis(),
                    ])
                    .map_err(|source| self.fail(about, source))?;
            }
        }
        tx.commit().map_err(|source| self.fail(about, source))
    }

    /// Records one answer to a session's dialog, whatever its outcome.
    pub fn record_answer(&self, key: &SessionKey, record: &Record) -> Result<(), StoreError> {
        let about = "record an answer";
        self.conn
            .execute(
                "INSERT INTO answers
                    (agent, session_id, surface, action, option, fingerprint, summary, outcome,
                     detail, at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    key.agent.as_str(),
                    answer_session(key),
                    record.surface.as_str(),
                    record.action.as_str(),
                    record.option,
                    record.fingerprint,
                    record.summary,
                    record.outcome,
                    record.detail,
                    record.at.millis(),
                ],
            )
            .map_err(|source| self.fail(about, source))?;
        Ok(())
    }

    /// The latest `limit` answers to a session's dialogs, newest first.
    pub fn answers(&self, key: &SessionKey, limit: usize) -> Result<Vec<Record>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self.rows(
            "read answers",
            "SELECT surface, action, option, fingerprint, summary, outcome, detail, at_ms
                 FROM answers WHERE agent = ?1 AND session_id = ?2
                 ORDER BY at_ms DESC, id DESC LIMIT ?3",
            params![key.agent.as_str(), answer_session(key), limit],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, Option<String>>(2)?,
                    row.get::<_, String>(3)?,
                    row.get::<_, Option<String>>(4)?,
                    row.get::<_, String>(5)?,
                    row.get::<_, Option<String>>(6)?,
                    row.get::<_, i64>(7)?,
                ))
            },
        )?;
        let mut answers = Vec::new();
        for (surface, action, option, fingerprint, summary, outcome, detail, at_ms) in rows {
            let decode = |column: &'static str, value: &str| StoreError::Decode {
                table: "answers",
                column,
                value: value.to_owned(),
            };
            answers.push(Record {
                surface: serde_json::from_value(serde_json::Value::String(surface.clone()))
                    .map_err(|_| decode("surface", &surface))?,
                action: action.parse().map_err(|_| decode("action", &action))?,
                option,
                fingerprint,
                summary,
                outcome,
                detail,
                at: Timestamp::from_millis(at_ms),
            });
        }
        Ok(answers)
    }

    /// The sessions whose latest recorded transition leaves them open (not `ended`), with that
    /// status: the ones a restart must close if they ended while Slate was not running.
    pub fn unfinished(&self) -> Result<Vec<(SessionKey, Status)>, StoreError> {
        let rows = self.rows(
            "read unfinished sessions",
            "SELECT agent, session_id, to_status FROM transitions
                 WHERE id IN (SELECT MAX(id) FROM transitions GROUP BY agent, session_id)
                   AND to_status != 'ended'
                 ORDER BY agent, session_id",
            [],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                ))
            },
        )?;
        let mut open = Vec::new();
        for (agent, id, to) in rows {
            open.push((decode_key("transitions", &agent, id)?, decode_status(&to)?));
        }
        Ok(open)
    }

    /// The latest `limit` transitions of a session, newest first.
    pub fn transitions(
        &self,
        key: &SessionKey,
        limit: usize,
    ) -> Result<Vec<Transition>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self.rows(
            "read transitions",
            "SELECT from_status, to_status, reason_code, reason_text, at_ms
                 FROM transitions WHERE agent = ?1 AND session_id = ?2
                 ORDER BY at_ms DESC, id DESC LIMIT ?3",
            params![key.agent.as_str(), key.id.as_str(), limit],
            |row| {
                Ok((
                    row.get::<_, Option<String>>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                    row.get::<_, i64>(4)?,
                ))
            },
        )?;
        let mut transitions = Vec::new();
        for (from, to, code, text, at_ms) in rows {
            transitions.push(Transition {
                key: key.clone(),
                from: from.as_deref().map(decode_status).transpose()?,
                to: decode_status(&to)?,
                reason: Reason::new(decode_reason_code(&code), text),
                at: Timestamp::from_millis(at_ms),
            });
        }
        Ok(transitions)
    }

    /// The total time the session has spent in `status`, over its whole recorded history, up to
    /// `now` ("time in Needs you"). Each transition starts a stretch in its `to` status that lasts
    /// until the next one; the last stretch lasts until `now`. Time after `now` does not count.
    pub fn time_in_status(
        &self,
        key: &SessionKey,
        status: Status,
        now: Timestamp,
    ) -> Result<Duration, StoreError> {
        let rows = self.rows(
            "add up time in a status",
            "SELECT to_status, at_ms FROM transitions
                 WHERE agent = ?1 AND session_id = ?2
                 ORDER BY at_ms ASC, id ASC",
            params![key.agent.as_str(), key.id.as_str()],
            |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?)),
        )?;
        let mut total = Duration::ZERO;
        let mut open_since: Option<Timestamp> = None;
        for (to, at_ms) in rows {
            let at = Timestamp::from_millis(at_ms).min(now);
            if let Some(since) = open_since.take() {
                total += since.elapsed_until(at);
            }
            if decode_status(&to)? == status {
                open_since = Some(at);
            }
        }
        if let Some(since) = open_since {
            total += since.elapsed_until(now);
        }
        Ok(total)
    }

    /// The notification pause the person chose last, as it stands at `now`: a pause whose end
    /// has passed is no pause.
    pub fn notification_pause(&self, now: Timestamp) -> Result<Pause, StoreError> {
        let about = "read the notification pause";
        let row: Option<Option<i64>> = self
            .conn
            .query_row(
                "SELECT until_ms FROM notification_pause WHERE id = 1",
                [],
                |row| row.get(0),
            )
            .optional()
            .map_err(|source| self.fail(about, source))?;
        Ok(match row {
            None => Pause::Off,
            Some(None) => Pause::UntilResumed,
            Some(Some(until)) if Timestamp::from_millis(until) > now => {
                Pause::Until(Timestamp::from_millis(until))
            }
            Some(Some(_)) => Pause::Off,
        })
    }

    /// Keeps the notification pause the person chose at `at`; `Pause::Off` (resumed) removes it.
    pub fn set_notification_pause(&self, pause: Pause, at: Timestamp) -> Result<(), StoreError> {
        let about = "keep the notification pause";
        let until = match pause {
            Pause::Off => {
                return self
                    .conn
                    .execute("DELETE FROM notification_pause", [])
                    .map(drop)
                    .map_err(|source| self.fail(about, source));
            }
            Pause::UntilResumed => None,
            Pause::Until(until) => Some(until.millis()),
        };
        self.conn
            .execute(
                "INSERT INTO notification_pause (id, until_ms, set_at_ms) VALUES (1, ?1, ?2)
                 ON CONFLICT (id) DO UPDATE SET
                     until_ms = excluded.until_ms, set_at_ms = excluded.set_at_ms",
                params![until, at.millis()],
            )
            .map(drop)
            .map_err(|source| self.fail(about, source))
    }

    /// Sets the user's intent for a session. An intent whose state is `none` is the absence of
    /// one, so it clears the stored intent instead.
    pub fn set_intent(
        &self,
        key: &SessionKey,
        intent: &Intent,
        at: Timestamp,
    ) -> Result<(), StoreError> {
        if intent.state == IntentState::None {
            return self.clear_intent(key);
        }
        self.conn
            .execute(
                "INSERT INTO intents (agent, session_id, state, reason, awaiting_who, set_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (agent, session_id) DO UPDATE SET
                     state = excluded.state, reason = excluded.reason,
                     awaiting_who = excluded.awaiting_who, set_at_ms = excluded.set_at_ms",
                params![
                    key.agent.as_str(),
                    key.id.as_str(),
                    intent_state_str(intent.state),
                    intent.reason,
                    intent.awaiting_who.as_ref().map(Awaiting::to_string),
                    at.millis(),
                ],
            )
            .map(drop)
            .map_err(|source| self.fail("set an intent", source))
    }

    pub fn get_intent(&self, key: &SessionKey) -> Result<Option<StoredIntent>, StoreError> {
        let about = "read an intent";
        let row = self
            .conn
            .query_row(
                "SELECT state, reason, awaiting_who, set_at_ms FROM intents
                 WHERE agent = ?1 AND session_id = ?2",
                params![key.agent.as_str(), key.id.as_str()],
                |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, Option<String>>(1)?,
                        row.get::<_, Option<String>>(2)?,
                        row.get::<_, i64>(3)?,
                    ))
                },
            )
            .optional()
            .map_err(|source| self.fail(about, source))?;
        row.map(|(state, reason, awaiting_who, set_at_ms)| {
            Ok(StoredIntent {
                intent: Intent {
                    state: decode_intent_state(&state)?,
                    reason,
                    awaiting_who: decode_awaiting(awaiting_who),
                },
                set_at: Timestamp::from_millis(set_at_ms),
            })
        })
        .transpose()
    }

    /// Every stored intent, for the engine to restore at start.
    pub fn intents(&self) -> Result<Vec<(SessionKey, StoredIntent)>, StoreError> {
        let rows = self.rows(
            "read intents",
            "SELECT agent, session_id, state, reason, awaiting_who, set_at_ms FROM intents
                 ORDER BY agent, session_id",
            [],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, Option<String>>(3)?,
                    row.get::<_, Option<String>>(4)?,
                    row.get::<_, i64>(5)?,
                ))
            },
        )?;
        let mut intents = Vec::new();
        for (agent, session_id, state, reason, awaiting_who, set_at_ms) in rows {
            intents.push((
                decode_key("intents", &agent, session_id)?,
                StoredIntent {
                    intent: Intent {
                        state: decode_intent_state(&state)?,
                        reason,
                        awaiting_who: decode_awaiting(awaiting_who),
                    },
                    set_at: Timestamp::from_millis(set_at_ms),
                },
            ));
        }
        Ok(intents)
    }

    pub fn clear_intent(&self, key: &SessionKey) -> Result<(), StoreError> {
        self.conn
            .execute(
                "DELETE FROM intents WHERE agent = ?1 AND session_id = ?2",
                params![key.agent.as_str(), key.id.as_str()],
            )
            .map(drop)
            .map_err(|source| self.fail("clear an intent", source))
    }

    /// Creates or replaces a work item.
    pub fn put_work_item(&self, item: &WorkItem) -> Result<(), StoreError> {
        let deps = serde_json::to_string(&item.deps).unwrap_or_else(|_| "[]".to_owned());
        self.conn
            .execute(
                "INSERT INTO work_items (id, title, status, deps, created_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (id) DO UPDATE SET
                     title = excluded.title, status = excluded.status, deps = excluded.deps,
                     created_ms = excluded.created_ms",
                params![
                    item.id,
                    item.title,
                    item.status.as_str(),
                    deps,
                    item.created.millis()
                ],
            )
            .map(drop)
            .map_err(|source| self.fail("save a work item", source))
    }

    pub fn work_item(&self, id: &str) -> Result<Option<WorkItem>, StoreError> {
        Ok(self
            .select_work_items("WHERE id = ?1", params![id])?
            .into_iter()
            .next())
    }

    /// Every work item, oldest first.
    pub fn work_items(&self) -> Result<Vec<WorkItem>, StoreError> {
        self.select_work_items("", params![])
    }

    /// Deletes a work item and, with it, its claims.
    pub fn delete_work_item(&self, id: &str) -> Result<(), StoreError> {
        self.conn
            .execute("DELETE FROM work_items WHERE id = ?1", params![id])
            .map(drop)
            .map_err(|source| self.fail("delete a work item", source))
    }

    fn select_work_items(
        &self,
        filter: &str,
        params: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<WorkItem>, StoreError> {
        let rows = self.rows(
            "read work items",
            &format!(
                "SELECT id, title, status, deps, created_ms FROM work_items {filter}
                 ORDER BY created_ms, id"
            ),
            params,
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                    row.get::<_, i64>(4)?,
                ))
            },
        )?;
        let mut items = Vec::new();
        for (id, title, status, deps, created_ms) in rows {
            let deps = serde_json::from_str(&deps).map_err(|_| StoreError::Decode {
                table: "work_items",
                column: "deps",
                value: deps,
            })?;
            items.push(WorkItem {
                id,
                title,
                status: decode_item_status(&status),
                deps,
                created: Timestamp::from_millis(created_ms),
            });
        }
        Ok(items)
    }

    /// Records a session's claim on a work item and returns the claim's id. The item must exist.
    pub fn claim(&self, item_id: &str, key: &SessionKey, at: Timestamp) -> Result<i64, StoreError> {
        self.conn
            .execute(
                "INSERT INTO claims (item_id, agent, session_id, claimed_ms) VALUES (?1, ?2, ?3, ?4)",
                params![item_id, key.agent.as_str(), key.id.as_str(), at.millis()],
            )
            .map_err(|source| self.fail("record a claim", source))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Marks a claim released; releasing twice keeps the first release time.
    pub fn release_claim(&self, claim_id: i64, at: Timestamp) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE claims SET released_ms = ?2 WHERE id = ?1 AND released_ms IS NULL",
                params![claim_id, at.millis()],
            )
            .map(drop)
            .map_err(|source| self.fail("release a claim", source))
    }

    /// Every claim on an item, released or not, oldest first.
    pub fn claims_on(&self, item_id: &str) -> Result<Vec<Claim>, StoreError> {
        self.select_claims("WHERE item_id = ?1", params![item_id])
    }

    /// The claims a session holds now (not released), oldest first.
    pub fn active_claims(&self, key: &SessionKey) -> Result<Vec<Claim>, StoreError> {
        self.select_claims(
            "WHERE agent = ?1 AND session_id = ?2 AND released_ms IS NULL",
            params![key.agent.as_str(), key.id.as_str()],
        )
    }

    fn select_claims(
        &self,
        filter: &str,
        params: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<Claim>, StoreError> {
        let rows = self.rows(
            "read claims",
            &format!(
                "SELECT id, item_id, agent, session_id, claimed_ms, released_ms FROM claims {filter}
                 ORDER BY claimed_ms, id"
            ),
            params,
            |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                    row.get::<_, i64>(4)?,
                    row.get::<_, Option<i64>>(5)?,
                ))
            },
        )?;
        let mut claims = Vec::new();
        for (id, item_id, agent, session_id, claimed_ms, released_ms) in rows {
            claims.push(Claim {
                id,
                item_id,
                key: decode_key("claims", &agent, session_id)?,
                claimed: Timestamp::from_millis(claimed_ms),
                released: released_ms.map(Timestamp::from_millis),
            });
        }
        Ok(claims)
    }

    /// Runs one query and reads each row's raw values with `read`; the caller decodes them.
    fn rows<T>(
        &self,
        about: &'static str,
        sql: &str,
        params: impl rusqlite::Params,
        read: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, StoreError> {
        let mut select = self
            .conn
            .prepare_cached(sql)
            .map_err(|source| self.fail(about, source))?;
        let rows = select
            .query_map(params, read)
            .map_err(|source| self.fail(about, source))?;
        rows.collect::<Result<Vec<T>, _>>()
            .map_err(|source| self.fail(about, source))
    }

    /// Begins a write transaction that takes the write lock at once. A deferred one would take it
    /// at its first write, where SQLite may refuse without waiting out the busy timeout.
    fn begin(&self, about: &'static str) -> Result<rusqlite::Transaction<'_>, StoreError> {
        rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(|source| self.fail(about, source))
    }

    /// Names an SQLite failure, telling a lock held by someone else apart from everything else.
    fn fail(&self, about: &'static str, source: rusqlite::Error) -> StoreError {
        if is_busy(&source) {
            StoreError::Locked {
                path: self.path.clone(),
            }
        } else {
            StoreError::Sqlite { about, source }
        }
    }
}

/// Why a connection could not be made ready, sorted by what the opener should do about it.
enum Failure {
    /// The file is damaged: move it aside and start again.
    Corrupt(String),
    /// Anything else: report it and leave the file alone.
    Error(rusqlite::Error),
    TooNew {
        found: u32,
        known: u32,
    },
}

impl Failure {
    fn into_error(self, path: &Path) -> StoreError {
        let path = path.to_path_buf();
        match self {
            Failure::Corrupt(detail) => StoreError::Corrupt { path, detail },
            Failure::Error(source) if is_busy(&source) => StoreError::Locked { path },
            Failure::Error(source) => StoreError::Open { path, source },
            Failure::TooNew { found, known } => StoreError::TooNew { path, found, known },
        }
    }
}

impl From<rusqlite::Error> for Failure {
    fn from(err: rusqlite::Error) -> Failure {
        match err.sqlite_error_code() {
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
                Failure::Corrupt(err.to_string())
            }
            _ => Failure::Error(err),
        }
    }
}

fn connect(path: &Path, busy_timeout: Duration) -> Result<Connection, Failure> {
    let conn = Connection::open(path)?;
    prepare(&conn, busy_timeout)?;
    Ok(conn)
}

/// Sets the connection up: busy timeout, WAL, foreign keys, a quick corruption check, migrations.
fn prepare(conn: &Connection, busy_timeout: Duration) -> Result<(), Failure> {
    conn.busy_timeout(busy_timeout)?;
    // WAL lets the API read while the engine writes, and with `synchronous = NORMAL` a commit
    // survives the process being killed (it may not survive a power cut, which is fine for a
    // cache of what the transcripts already say).
    let _mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", true)?;
    // The store is small, so checking it at every start is cheap, and it finds a truncated file
    // that would otherwise fail later, in the middle of some write.
    let verdict: String = conn.query_row("PRAGMA quick_check", [], |row| row.get(0))?;
    if verdict != "ok" {
        return Err(Failure::Corrupt(format!("quick check: {verdict}")));
    }
    migrate(conn)?;
    Ok(())
}

fn migrate(conn: &Connection) -> Result<usize, Failure> {
    let known = MIGRATIONS.len() as u32;
    let found = user_version(conn)?;
    if found > known {
        return Err(Failure::TooNew { found, known });
    }
    let mut applied = 0;
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        // Another Slate may have migrated between our read and our lock; the version read under
        // the lock is the one that counts.
        if user_version(&tx)? > index as u32 {
            continue;
        }
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", index as u32 + 1)?;
        tx.commit()?;
        applied += 1;
    }
    Ok(applied)
}

fn user_version(conn: &Connection) -> Result<u32, rusqlite::Error> {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
}

fn is_busy(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Renames a corrupt store and its `-wal` and `-shm` companions to `<name>.corrupt-<time>[-wal]`,
/// so SQLite could still open the kept copy with its log. Nothing is deleted. Leaving the old
/// `-wal` in place would be wrong as well as wasteful: SQLite could replay it into the fresh file.
fn move_aside(path: &Path) -> Result<PathBuf, StoreError> {
    let stamp = time::OffsetDateTime::now_utc()
        .format(time::macros::format_description!(
            "[year][month][day]T[hour][minute][second]Z"
        ))
        .unwrap_or_else(|_| "unknown-time".to_owned());
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "slate.db".to_owned());
    let mut aside = path.with_file_name(format!("{name}.corrupt-{stamp}"));
    let mut attempt = 1;
    while aside.exists() {
        attempt += 1;
        aside = path.with_file_name(format!("{name}.corrupt-{stamp}-{attempt}"));
    }
    let rename = |from: &Path, to: &Path| {
        fs::rename(from, to).map_err(|source| StoreError::MoveAside {
            path: from.to_path_buf(),
            source,
        })
    };
    rename(path, &aside)?;
    for suffix in ["-wal", "-shm"] {
        let companion = with_suffix(path, suffix);
        if companion.exists() {
            rename(&companion, &with_suffix(&aside, suffix))?;
        }
    }
    Ok(aside)
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Reads a value the store wrote with its snake_case wire spelling (a status, an intent state);
/// any other text is a decode error naming where it was found.
fn decode_spelling<T: serde::de::DeserializeOwned>(
    table: &'static str,
    column: &'static str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_value(serde_json::Value::String(text.to_owned())).map_err(|_| {
        StoreError::Decode {
            table,
            column,
            value: text.to_owned(),
        }
    })
}

fn decode_status(text: &str) -> Result<Status, StoreError> {
    decode_spelling("transitions", "status", text)
}

/// A code this build does not know was written by a newer Slate; it reads as `unknown` rather
/// than making the whole history unreadable.
fn decode_reason_code(text: &str) -> ReasonCode {
    serde_json::from_value(serde_json::Value::String(text.to_owned()))
        .unwrap_or(ReasonCode::Unknown)
}

fn intent_state_str(state: IntentState) -> &'static str {
    match state {
        IntentState::None => "none",
        IntentState::Parked => "parked",
        IntentState::Awaiting => "awaiting",
    }
}

fn decode_intent_state(text: &str) -> Result<IntentState, StoreError> {
    decode_spelling("intents", "state", text)
}

/// An item status this build does not know (written by hand, or by a newer Slate) reads as
/// `blocked`: the item then waits for direction rather than passing for ready or done.
fn decode_item_status(text: &str) -> ItemStatus {
    ItemStatus::parse(text).unwrap_or(ItemStatus::Blocked)
}

/// An `awaiting_who` this build cannot read (an older Slate's API took any text) reads as an
/// intent that names no one: the session still shows as awaiting, and the row is kept as it is.
fn decode_awaiting(text: Option<String>) -> Option<Awaiting> {
    text.and_then(|text| text.parse().ok())
}

fn decode_key(
    table: &'static str,
    agent: &str,
    session_id: String,
) -> Result<SessionKey, StoreError> {
    let agent = AgentKind::parse(agent).ok_or_else(|| StoreError::Decode {
        table,
        column: "agent",
        value: agent.to_owned(),
    })?;
    Ok(SessionKey::new(agent, session_id))
}

/// The session an answer is filed under: its id, or `MACHINE:ID` for a session on a remote
/// machine whose answer was forwarded there, so it never mixes with a local session's.
fn answer_session(key: &SessionKey) -> String {
    key.reference()
}
