//! Migrations and what a newer Slate wrote: migrating twice is a no-op, a newer store is refused
//! and left alone, versions 3, 4 and 5 from the one before, and a reason code, item status or
//! awaited actor it cannot read read as unknown rather than failing the read.

use slate::model::{Awaiting, IntentState, ItemStatus, ReasonCode};
use slate::policy::menu::Pause;
use slate::store::{self, Store, StoreError};

use super::{at, corrupt_siblings, item, key, memory};

#[test]
fn migrating_twice_is_a_no_op() {
    let store = memory();
    let latest = Store::latest_schema_version();
    assert!(latest >= 1);
    assert_eq!(store.schema_version().unwrap(), latest);
    assert_eq!(store.migrate().unwrap(), 0);
    assert_eq!(store.migrate().unwrap(), 0);
    assert_eq!(store.schema_version().unwrap(), latest);

    // The same holds for a file opened again: nothing re-runs and nothing is lost.
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("slate").join("slate.db");
    {
        let store = store::open(&path).unwrap();
        store.put_work_item(&item("kept")).unwrap();
    }
    let store = store::open(&path).unwrap();
    assert_eq!(store.migrate().unwrap(), 0);
    assert_eq!(store.schema_version().unwrap(), latest);
    assert_eq!(store.work_item("kept").unwrap(), Some(item("kept")));
}

#[test]
fn a_store_from_a_newer_slate_is_refused_and_left_alone() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("slate.db");
    drop(store::open(&path).unwrap());
    let future = Store::latest_schema_version() + 1;
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", future)
        .unwrap();
    let err = store::open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::TooNew { found, .. } if found == future),
        "{err:?}"
    );
    assert!(corrupt_siblings(folder.path()).is_empty());
}

#[test]
fn a_reason_code_from_a_newer_slate_reads_as_unknown() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("slate.db");
    drop(store::open(&path).unwrap());
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute(
            "INSERT INTO transitions
                (agent, session_id, from_status, to_status, reason_code, reason_text, at_ms)
             VALUES ('claude-code', 'a', NULL, 'waiting', 'some_future_code', 'later', 5)",
            [],
        )
        .unwrap();
    let store = store::open(&path).unwrap();
    let transitions = store.transitions(&key("a"), 10).unwrap();
    assert_eq!(transitions[0].reason.code, ReasonCode::Unknown);
    assert_eq!(transitions[0].reason.text, "later");
}

#[test]
fn an_item_status_or_an_awaited_actor_it_cannot_read_does_not_fail_the_read() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("slate.db");
    drop(store::open(&path).unwrap());
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "INSERT INTO work_items (id, title, status, created_ms)
                 VALUES ('odd', 'Odd', 'someday', 1000);
             INSERT INTO intents (agent, session_id, state, reason, awaiting_who, set_at_ms)
                 VALUES ('claude-code', 'a', 'awaiting', 'odd', 'the-moon', 2000),
                        ('claude-code', 'b', 'awaiting', 'ci', 'ci_or_deploy', 3000);",
        )
        .unwrap();
    let store = store::open(&path).unwrap();
    // An unknown status reads as blocked: the item waits for direction.
    let odd = store.work_item("odd").unwrap().expect("the item reads");
    assert_eq!(odd.status, ItemStatus::Blocked);
    // An unknown awaited actor reads as an intent that names no one; the others read as written.
    let intents = store.intents().unwrap();
    assert_eq!(intents.len(), 2);
    assert_eq!(intents[0].1.intent.state, IntentState::Awaiting);
    assert_eq!(intents[0].1.intent.awaiting_who, None);
    assert_eq!(intents[1].1.intent.awaiting_who, Some(Awaiting::CiOrDeploy));
    let first = store
        .get_intent(&key("a"))
        .unwrap()
        .expect("the intent reads");
    assert_eq!(first.intent.reason.as_deref(), Some("odd"));
}

#[test]
fn version_3_drops_the_unused_settings_and_presence_tables_and_keeps_the_rest() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("slate.db");
    {
        let store = store::open(&path).unwrap();
        store.put_work_item(&item("kept")).unwrap();
    }
    // Put the file back as version 2 left it: with both tables, one of them holding a row, and
    // without what later versions add.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "DROP TABLE notification_pause;
             DROP TABLE answers;
             DROP TABLE mutes;
             DROP TABLE usage;
             CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             INSERT INTO settings VALUES ('autostart', 'true');
             CREATE TABLE presence (
                 agent TEXT NOT NULL, session_id TEXT NOT NULL, pid INTEGER NOT NULL,
                 start_ms INTEGER NOT NULL, gone_at_ms INTEGER NULL,
                 PRIMARY KEY (agent, session_id));
             PRAGMA user_version = 2;",
        )
        .unwrap();
    let store = store::open(&path).unwrap();
    assert_eq!(
        store.schema_version().unwrap(),
        Store::latest_schema_version()
    );
    assert_eq!(store.work_item("kept").unwrap(), Some(item("kept")));
    let tables: Vec<String> = {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let mut select = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .unwrap();
        let names = select
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        names
    };
    assert_eq!(
        tables,
        vec![
            "answers",
            "claims",
            "intents",
            "mutes",
            "notification_pause",
            "transitions",
            "usage",
            "work_items"
        ],
        "{tables:?}"
    );
}

/// A store of version 3 (before the pause was kept) gains the table and keeps what it held: the
/// migration only adds.
#[test]
fn version_4_adds_the_pause_to_a_version_3_store() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("slate.db");
    {
        let store = store::open(&path).unwrap();
        store.put_work_item(&item("kept")).unwrap();
    }
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "DROP TABLE notification_pause; DROP TABLE answers; DROP TABLE mutes;
             DROP TABLE usage; PRAGMA user_version = 3;",
        )
        .unwrap();
    let store = store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 7);
    assert_eq!(store.work_item("kept").unwrap(), Some(item("kept")));
    assert_eq!(store.notification_pause(at(0)).unwrap(), Pause::Off);
    store
        .set_notification_pause(Pause::UntilResumed, at(1))
        .unwrap();
    assert_eq!(
        store.notification_pause(at(2)).unwrap(),
        Pause::UntilResumed
    );
}

#[test]
fn version_5_adds_the_answers_to_a_version_4_store() {
    use slate::agents::keys::Action;
    use slate::answers::{Record, Surface};
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("slate.db");
    {
        let store = store::open(&path).unwrap();
        store
            .set_notification_pause(Pause::UntilResumed, at(1))
            .unwrap();
    }
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "DROP TABLE answers; DROP TABLE mutes; DROP TABLE usage; PRAGMA user_version = 4;",
        )
        .unwrap();
    let store = store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 7);
    assert_eq!(Store::latest_schema_version(), 7);
    assert_eq!(
        store.notification_pause(at(2)).unwrap(),
        Pause::UntilResumed
    );
    let record = Record {
        surface: Surface::Notification,
        action: Action::Approve,
        option: None,
        fingerprint: "9f86d081884c7d65".to_string(),
        summary: None,
        outcome: "answered".to_string(),
        detail: None,
        at: at(3),
    };
    store.record_answer(&key("s1"), &record).unwrap();
    assert_eq!(store.answers(&key("s1"), 5).unwrap(), vec![record]);
}

#[test]
fn version_6_adds_the_mutes_to_a_version_5_store() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("slate.db");
    {
        let store = store::open(&path).unwrap();
        store
            .set_notification_pause(Pause::UntilResumed, at(1))
            .unwrap();
    }
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("DROP TABLE mutes; DROP TABLE usage; PRAGMA user_version = 5;")
        .unwrap();
    let store = store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 7);
    assert_eq!(
        store.notification_pause(at(2)).unwrap(),
        Pause::UntilResumed
    );
    assert!(store.mutes().unwrap().is_empty());
    store.set_muted(&key("s1"), true, at(3)).unwrap();
    store.set_muted(&key("s1"), true, at(4)).unwrap();
    drop(store);
    // Kept across a reopen (a restart), once however often it was asked.
    let store = store::open(&path).unwrap();
    assert_eq!(store.mutes().unwrap(), vec![key("s1")]);
    store.set_muted(&key("s1"), false, at(5)).unwrap();
    assert!(store.mutes().unwrap().is_empty());
}

/// A store of version 6 (before usage was kept) gains the usage table and loses nothing: its
/// mutes, its pause and its work items stay, and a session's totals are kept across a reopen.
#[test]
fn version_7_adds_the_usage_to_a_version_6_store_and_keeps_the_rest() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("slate.db");
    {
        let store = store::open(&path).unwrap();
        store.put_work_item(&item("kept")).unwrap();
        store.set_muted(&key("s1"), true, at(1)).unwrap();
        store
            .set_notification_pause(Pause::UntilResumed, at(1))
            .unwrap();
    }
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("DROP TABLE usage; PRAGMA user_version = 6;")
        .unwrap();
    let store = store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 7);
    assert_eq!(store.work_item("kept").unwrap(), Some(item("kept")));
    assert_eq!(store.mutes().unwrap(), vec![key("s1")]);
    assert_eq!(
        store.notification_pause(at(2)).unwrap(),
        Pause::UntilResumed
    );
    assert!(store.usages().unwrap().is_empty());
    let usage: slate::usage::SessionUsage = serde_json::from_value(serde_json::json!({
        "input_tokens": 10, "output_tokens": 5, "cache_read_tokens": 0, "cache_write_tokens": 0,
        "models": ["claude-opus-5-5"], "context_tokens": 10, "context_percent": null,
        "cost_usd": 0.25, "cost_basis": "estimate", "priced_tokens": 15, "unpriced_tokens": 0,
    }))
    .unwrap();
    let mut row = slate::store::StoredUsage {
        key: key("s1"),
        project: Some("acme".to_owned()),
        at: at(3),
        usage,
    };
    store.record_usage(std::slice::from_ref(&row)).unwrap();
    // Recorded again with more: one row, the latest.
    row.usage.output_tokens = 50;
    row.at = at(4);
    store.record_usage(std::slice::from_ref(&row)).unwrap();
    drop(store);
    let store = store::open(&path).unwrap();
    assert_eq!(store.usages().unwrap(), vec![row]);
    // A row this Slate cannot read is left out, not a failed read.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "INSERT INTO usage VALUES ('claude-code', 's2', 5, NULL, '{\"tokens\": \"many\"}');",
        )
        .unwrap();
    assert_eq!(store.usages().unwrap().len(), 1);
}
