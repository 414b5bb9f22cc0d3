//! The store's schema: one migration per version, applied in order and never edited once
//! released, and the applying of those not yet applied.

use rusqlite::{Connection, TransactionBehavior};

use super::Failure;

/// The schema, one entry per version, applied in order and never edited once released: version
/// `n` is reached by running `MIGRATIONS[n - 1]`, and `PRAGMA user_version` records how far a file
/// got. A change to the schema is a new entry at the end.
pub(super) const MIGRATIONS: &[&str] = &[
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
    // Version 6: the sessions the person muted (`slate mute`): no notification tells of them.
    // A row is a mute; unmuting deletes it.
    r#"
    CREATE TABLE mutes (
        agent TEXT NOT NULL,
        session_id TEXT NOT NULL,
        set_at_ms INTEGER NOT NULL,
        PRIMARY KEY (agent, session_id)
    );
    "#,
    // Version 7: each session's usage totals (`store::usage`), its latest wire usage as JSON,
    // so a closed session's cost stays and a day's total survives a restart. A new table: the
    // rows of every other table stay as they were.
    r#"
    CREATE TABLE usage (
        agent TEXT NOT NULL,
        session_id TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        project TEXT,
        usage TEXT NOT NULL,
        PRIMARY KEY (agent, session_id)
    );
    CREATE INDEX usage_by_time ON usage (at_ms);
    "#,
];

pub(super) fn migrate(conn: &Connection) -> Result<usize, Failure> {
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

pub(super) fn user_version(conn: &Connection) -> Result<u32, rusqlite::Error> {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
}
