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

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, ErrorCode, OptionalExtension, TransactionBehavior};

use slate_core::model::{
    Awaiting, Intent, IntentState, ItemStatus, Reason, SessionKey, Status, Timestamp,
};
use slate_core::policy::menu::Pause;
use slate_core::protocol::Record;

mod decode;
mod mutes;
mod open;
mod schema;
mod usage;

use decode::{
    answer_session, decode_awaiting, decode_intent_state, decode_item_status, decode_key,
    decode_reason_code, decode_status, intent_state_str,
};
use open::is_busy;
pub use open::{open, open_in_memory, open_with_busy_timeout};
use schema::{migrate, user_version, MIGRATIONS};
pub use usage::StoredUsage;

/// How long a write waits for another writer before it gives up with [`StoreError::Locked`].
/// Slate's own writes are tiny, so anything holding the lock this long is another program.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

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
