//! Slate's own store: typed round trips through an in-memory store, migrations, and what a real
//! file survives: a writer killed with SIGKILL mid-write, a corrupt or truncated file, and a lock
//! held by another writer.

use std::collections::{BTreeMap, HashSet};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use slate::model::{
    AgentKind, Awaiting, Intent, IntentState, ItemStatus, Reason, ReasonCode, SessionKey, Status,
    Timestamp,
};
use slate::store::{self, Store, StoreError, StoredIntent, Transition, WorkItem};

fn key(id: &str) -> SessionKey {
    SessionKey::new(AgentKind::CLAUDE_CODE, id)
}

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_millis(seconds * 1000)
}

fn memory() -> Store {
    store::open_in_memory().expect("an in-memory store opens")
}

/// A ready work item with no dependencies: the smallest thing to write and read back.
fn item(id: &str) -> WorkItem {
    WorkItem {
        id: id.to_owned(),
        title: id.to_owned(),
        status: ItemStatus::Ready,
        deps: Vec::new(),
        created: at(1),
    }
}

fn transition(key: &SessionKey, from: Option<Status>, to: Status, seconds: i64) -> Transition {
    Transition {
        key: key.clone(),
        from,
        to,
        reason: Reason::new(ReasonCode::TurnFinished, format!("at {seconds}s")),
        at: at(seconds),
    }
}

fn integrity(path: &Path) -> String {
    let conn = rusqlite::Connection::open(path).expect("the store opens with plain rusqlite");
    conn.query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .expect("the integrity check runs")
}

fn corrupt_siblings(folder: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(folder)
        .expect("the temp folder lists")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.to_string_lossy().contains(".corrupt-"))
        .collect();
    found.sort();
    found
}

#[test]
fn transitions_round_trip_in_memory() {
    let store = memory();
    let session = key("a");
    let reason = Reason::new(ReasonCode::ToolRunning, "Running Bash: cargo test");
    store
        .record_transition(&session, None, Status::Working, &reason, at(1))
        .unwrap();
    store
        .record_transition(
            &session,
            Some(Status::Working),
            Status::Waiting,
            &Reason::new(ReasonCode::PermissionPrompt, "Allow Bash?"),
            at(2),
        )
        .unwrap();
    let transitions = store.transitions(&session, 10).unwrap();
    assert_eq!(
        transitions,
        vec![
            Transition {
                key: session.clone(),
                from: Some(Status::Working),
                to: Status::Waiting,
                reason: Reason::new(ReasonCode::PermissionPrompt, "Allow Bash?"),
                at: at(2),
            },
            Transition {
                key: session.clone(),
                from: None,
                to: Status::Working,
                reason,
                at: at(1),
            },
        ]
    );
    assert!(store.recovered_from().is_none());
    assert_eq!(store.path(), Path::new(":memory:"));
}

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
fn transitions_come_newest_first_and_respect_the_limit() {
    let store = memory();
    let session = key("a");
    let other = key("b");
    // Written out of order, and in one batch, to show the order comes from the times.
    store
        .record_transitions(&[
            transition(&session, Some(Status::Working), Status::Waiting, 30),
            transition(&session, None, Status::Working, 10),
            transition(&other, None, Status::Working, 20),
            transition(&session, Some(Status::Waiting), Status::Working, 50),
            transition(&session, Some(Status::Working), Status::Ended, 40),
        ])
        .unwrap();
    let times = |limit| -> Vec<Timestamp> {
        store
            .transitions(&session, limit)
            .unwrap()
            .into_iter()
            .map(|transition| transition.at)
            .collect()
    };
    assert_eq!(times(10), vec![at(50), at(40), at(30), at(10)]);
    assert_eq!(times(2), vec![at(50), at(40)]);
    assert_eq!(times(0), Vec::<Timestamp>::new());
    assert_eq!(store.transitions(&other, usize::MAX).unwrap().len(), 1);
    assert!(store.transitions(&key("none"), 10).unwrap().is_empty());
}

#[test]
fn time_in_status_adds_up_every_stretch_until_now() {
    let store = memory();
    let session = key("a");
    store
        .record_transitions(&[
            transition(&session, None, Status::Working, 0),
            transition(&session, Some(Status::Working), Status::Waiting, 10),
            transition(&session, Some(Status::Waiting), Status::Working, 25),
            transition(&session, Some(Status::Working), Status::Waiting, 40),
        ])
        .unwrap();
    let time_in = |status, now| store.time_in_status(&session, status, now).unwrap();
    // Needs you from 10 to 25 and from 40 until now; Working from 0 to 10 and from 25 to 40.
    assert_eq!(time_in(Status::Waiting, at(100)), Duration::from_secs(75));
    assert_eq!(time_in(Status::Working, at(100)), Duration::from_secs(25));
    assert_eq!(time_in(Status::Ended, at(100)), Duration::ZERO);
    // A `now` in the middle of the history counts nothing after it.
    assert_eq!(time_in(Status::Waiting, at(30)), Duration::from_secs(15));
    assert_eq!(time_in(Status::Working, at(30)), Duration::from_secs(15));
    assert_eq!(time_in(Status::Working, at(-5)), Duration::ZERO);
    assert_eq!(
        store
            .time_in_status(&key("unknown"), Status::Waiting, at(100))
            .unwrap(),
        Duration::ZERO
    );
}

#[test]
fn intents_are_set_replaced_listed_and_cleared() {
    let store = memory();
    let session = key("a");
    assert_eq!(store.get_intent(&session).unwrap(), None);
    let parked = Intent {
        state: IntentState::Parked,
        reason: Some("lunch".to_owned()),
        awaiting_who: None,
    };
    store.set_intent(&session, &parked, at(1)).unwrap();
    assert_eq!(
        store.get_intent(&session).unwrap(),
        Some(StoredIntent {
            intent: parked,
            set_at: at(1)
        })
    );
    let awaiting = Intent {
        state: IntentState::Awaiting,
        reason: Some("waiting for CI".to_owned()),
        awaiting_who: Some(Awaiting::CiOrDeploy),
    };
    store.set_intent(&session, &awaiting, at(2)).unwrap();
    let other = SessionKey::new(AgentKind::OPENCODE, "ses_1");
    store.set_intent(&other, &parked_plain(), at(3)).unwrap();
    assert_eq!(
        store.intents().unwrap(),
        vec![
            (
                session.clone(),
                StoredIntent {
                    intent: awaiting,
                    set_at: at(2)
                }
            ),
            (
                other.clone(),
                StoredIntent {
                    intent: parked_plain(),
                    set_at: at(3)
                }
            ),
        ]
    );
    store.clear_intent(&session).unwrap();
    assert_eq!(store.get_intent(&session).unwrap(), None);
    // Setting the intent `none` is the same as clearing it.
    store.set_intent(&other, &Intent::default(), at(4)).unwrap();
    assert_eq!(store.get_intent(&other).unwrap(), None);
    assert!(store.intents().unwrap().is_empty());
}

fn parked_plain() -> Intent {
    Intent {
        state: IntentState::Parked,
        reason: None,
        awaiting_who: None,
    }
}

#[test]
fn work_items_and_claims_have_simple_crud() {
    let store = memory();
    let item = WorkItem {
        id: "item-1".to_owned(),
        title: "Fix the tray count".to_owned(),
        status: ItemStatus::Blocked,
        deps: vec!["item-0".to_owned()],
        created: at(1),
    };
    store.put_work_item(&item).unwrap();
    assert_eq!(store.work_item("item-1").unwrap(), Some(item.clone()));
    assert_eq!(store.work_item("missing").unwrap(), None);
    let done = WorkItem {
        status: ItemStatus::Done,
        ..item.clone()
    };
    store.put_work_item(&done).unwrap();
    assert_eq!(store.work_items().unwrap(), vec![done]);

    let session = key("a");
    let claim_id = store.claim("item-1", &session, at(2)).unwrap();
    assert_eq!(store.active_claims(&session).unwrap().len(), 1);
    store.release_claim(claim_id, at(3)).unwrap();
    store.release_claim(claim_id, at(4)).unwrap();
    assert!(store.active_claims(&session).unwrap().is_empty());
    let claims = store.claims_on("item-1").unwrap();
    assert_eq!(claims.len(), 1);
    assert_eq!(claims[0].released, Some(at(3)));
    assert_eq!(claims[0].key, session);

    // Foreign keys are on: a claim needs its item, and deleting the item deletes its claims.
    assert!(store.claim("missing", &session, at(5)).is_err());
    store.delete_work_item("item-1").unwrap();
    assert!(store.work_items().unwrap().is_empty());
    assert!(store.claims_on("item-1").unwrap().is_empty());
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
            "DROP TABLE answers;
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
        vec!["answers", "claims", "intents", "transitions", "work_items"],
        "{tables:?}"
    );
}

#[test]
fn a_store_can_move_to_a_worker_thread() {
    fn assert_send<T: Send>() {}
    assert_send::<Store>();
    let store = memory();
    let handle = std::thread::spawn(move || store.put_work_item(&item("moved")).map(|()| store));
    let store = handle.join().unwrap().unwrap();
    assert_eq!(store.work_item("moved").unwrap(), Some(item("moved")));
}

/// The environment variable that turns [`writer_child`] from a no-op into the writer that
/// [`a_killed_writer_loses_no_committed_transition`] kills.
const WRITER_ENV: &str = "SLATE_STORE_WRITER";

/// Not a test on its own: run by the crash test as a child process, it writes transitions until
/// it is killed, printing `committed <at_ms>` after each commit. Even batches are one transition,
/// odd ones five in one transaction, so the parent can also check that a batch is all or nothing.
#[test]
fn writer_child() {
    let Some(path) = std::env::var_os(WRITER_ENV) else {
        return;
    };
    let store = store::open(Path::new(&path)).expect("the writer opens the store");
    let session = key("crash");
    let mut stdout = io::stdout().lock();
    for batch in 0..100_000_i64 {
        let size = if batch % 2 == 0 { 1 } else { 5 };
        let transitions: Vec<Transition> = (0..size)
            .map(|index| Transition {
                key: session.clone(),
                from: Some(Status::Working),
                to: Status::Waiting,
                reason: Reason::new(ReasonCode::TurnFinished, format!("batch {batch}")),
                at: Timestamp::from_millis(batch * 10 + index),
            })
            .collect();
        store
            .record_transitions(&transitions)
            .expect("the writer writes");
        for transition in &transitions {
            writeln!(stdout, "committed {}", transition.at.millis()).expect("stdout is open");
        }
        stdout.flush().expect("stdout is open");
    }
}

#[test]
fn a_killed_writer_loses_no_committed_transition() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("slate.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "store::writer_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(WRITER_ENV, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the test binary starts again as the writer");
    let stdout = child.stdout.take().expect("the writer's stdout is piped");
    let (sender, receiver) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            // The test harness prints the test's name without a newline just before the writer
            // starts, so the first report shares its line.
            if let Some((_, at_ms)) = line.rsplit_once("committed ") {
                if let Ok(at_ms) = at_ms.trim().parse::<i64>() {
                    let _ = sender.send(at_ms);
                }
            }
        }
    });

    // Bounded polling: wait for a few hundred commits, then kill the writer mid-stream.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut committed = Vec::new();
    while committed.len() < 300 {
        let left = deadline.saturating_duration_since(Instant::now());
        match receiver.recv_timeout(left) {
            Ok(at_ms) => committed.push(at_ms),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the writer reported only {} commits", committed.len());
            }
        }
    }
    child.kill().expect("SIGKILL reaches the writer");
    let status = child.wait().expect("the writer is reaped");
    assert!(
        !status.success(),
        "the writer finished before it was killed"
    );
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9));
    }
    reader.join().expect("the reader thread ends");
    committed.extend(receiver.try_iter());

    let store = store::open(&path).expect("the store opens after the crash");
    assert!(store.recovered_from().is_none());
    assert_eq!(integrity(&path), "ok");
    let kept = store.transitions(&key("crash"), usize::MAX).unwrap();
    let kept_times: HashSet<i64> = kept.iter().map(|t| t.at.millis()).collect();
    let lost: Vec<i64> = committed
        .iter()
        .copied()
        .filter(|at_ms| !kept_times.contains(at_ms))
        .collect();
    assert!(lost.is_empty(), "committed but lost: {lost:?}");
    let mut batches: BTreeMap<String, usize> = BTreeMap::new();
    for transition in &kept {
        *batches.entry(transition.reason.text.clone()).or_default() += 1;
    }
    for (batch, size) in batches {
        let number: i64 = batch["batch ".len()..].parse().unwrap();
        let expected = if number % 2 == 0 { 1 } else { 5 };
        assert_eq!(size, expected, "{batch} is partly kept");
    }
}

/// Collects what a `tracing` subscriber writes, to check the warning a recovery logs.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn open_capturing_logs(path: &Path) -> (Store, String) {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let store = tracing::subscriber::with_default(subscriber, || store::open(path))
        .expect("a corrupt store is replaced, not an error");
    let logs = String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned();
    (store, logs)
}

fn check_recovery(folder: &Path, path: &Path, original: &[u8]) {
    let (store, logs) = open_capturing_logs(path);
    let aside = store
        .recovered_from()
        .expect("the open reports the recovery")
        .to_path_buf();
    assert_eq!(corrupt_siblings(folder), vec![aside.clone()]);
    assert!(aside
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("slate.db.corrupt-"));
    // The user's data is kept byte for byte.
    assert_eq!(std::fs::read(&aside).unwrap(), original);
    assert!(logs.contains("WARN"), "{logs}");
    assert!(logs.contains("the store was corrupt"), "{logs}");
    assert!(logs.contains(&aside.display().to_string()), "{logs}");

    // The fresh store works, and opening it again is an ordinary open.
    store
        .record_transition(
            &key("after"),
            None,
            Status::Working,
            &Reason::new(ReasonCode::NewSession, "new"),
            at(1),
        )
        .unwrap();
    drop(store);
    let store = store::open(path).unwrap();
    assert!(store.recovered_from().is_none());
    assert_eq!(store.transitions(&key("after"), 10).unwrap().len(), 1);
    assert_eq!(corrupt_siblings(folder).len(), 1);
}

#[test]
fn a_garbage_file_is_moved_aside_and_replaced() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("slate.db");
    let garbage = b"this is not an sqlite database\n".repeat(200);
    std::fs::write(&path, &garbage).unwrap();
    check_recovery(folder.path(), &path, &garbage);
}

#[test]
fn a_truncated_file_is_moved_aside_and_replaced() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("slate.db");
    {
        let store = store::open(&path).unwrap();
        let session = key("long");
        let transitions: Vec<Transition> = (0..2000)
            .map(|seconds| Transition {
                reason: Reason::new(ReasonCode::ToolRunning, "x".repeat(200)),
                ..transition(&session, None, Status::Working, seconds)
            })
            .collect();
        store.record_transitions(&transitions).unwrap();
    }
    // Closing the last connection folds the log back into the file, so the cut hits real pages.
    assert!(!folder.path().join("slate.db-wal").exists());
    let whole = std::fs::read(&path).unwrap();
    assert!(whole.len() > 64 * 1024, "{} bytes", whole.len());
    let truncated = &whole[..whole.len() / 2 + 100];
    std::fs::write(&path, truncated).unwrap();
    check_recovery(folder.path(), &path, truncated);
}

#[test]
fn a_write_waits_out_the_busy_timeout_then_reports_the_lock() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("slate.db");
    let busy_timeout = Duration::from_millis(200);
    let store = store::open_with_busy_timeout(&path, busy_timeout).unwrap();
    let holder = rusqlite::Connection::open(&path).unwrap();
    holder
        .execute_batch(
            "BEGIN IMMEDIATE;
             INSERT INTO work_items (id, title, status, created_ms) VALUES ('held', 'held', 'ready', 1000);",
        )
        .unwrap();

    let started = Instant::now();
    let err = store.put_work_item(&item("mine")).unwrap_err();
    assert!(matches!(err, StoreError::Locked { .. }), "{err:?}");
    assert!(started.elapsed() >= busy_timeout, "{:?}", started.elapsed());
    assert!(
        err.to_string().contains("locked by another writer"),
        "{err}"
    );
    let err = store
        .record_transition(
            &key("a"),
            None,
            Status::Working,
            &Reason::new(ReasonCode::Unknown, ""),
            at(1),
        )
        .unwrap_err();
    assert!(matches!(err, StoreError::Locked { .. }), "{err:?}");
    // Reading still works while another writer holds the lock: that is what WAL is for.
    assert_eq!(store.work_item("held").unwrap(), None);

    holder.execute_batch("COMMIT").unwrap();
    store.put_work_item(&item("mine")).unwrap();
    assert_eq!(store.work_item("held").unwrap(), Some(item("held")));
}

#[test]
fn an_exclusively_locked_file_is_reported_not_treated_as_corrupt() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("slate.db");
    drop(store::open(&path).unwrap());
    let holder = rusqlite::Connection::open(&path).unwrap();
    holder
        .execute_batch(
            "PRAGMA locking_mode = EXCLUSIVE;
             BEGIN EXCLUSIVE;
             INSERT INTO work_items (id, title, status, created_ms) VALUES ('held', 'held', 'ready', 1000);
             COMMIT;",
        )
        .unwrap();

    let err = store::open_with_busy_timeout(&path, Duration::from_millis(100)).unwrap_err();
    assert!(matches!(err, StoreError::Locked { .. }), "{err:?}");
    assert!(corrupt_siblings(folder.path()).is_empty());

    drop(holder);
    let store = store::open(&path).unwrap();
    assert!(store.recovered_from().is_none());
    assert_eq!(store.work_item("held").unwrap(), Some(item("held")));
}

#[test]
fn unfinished_names_the_sessions_whose_last_transition_leaves_them_open() {
    let store = memory();
    let (open, closed, reopened) = (key("open"), key("closed"), key("reopened"));
    store
        .record_transitions(&[
            transition(&open, None, Status::Working, 1),
            transition(&open, Some(Status::Working), Status::Waiting, 2),
            transition(&closed, None, Status::Working, 1),
            transition(&closed, Some(Status::Working), Status::Ended, 3),
            transition(&reopened, None, Status::Ended, 1),
            transition(&reopened, Some(Status::Ended), Status::Working, 4),
        ])
        .unwrap();
    assert_eq!(
        store.unfinished().unwrap(),
        vec![(open, Status::Waiting), (reopened, Status::Working)]
    );
}

/// Every answer to a dialog is kept with where it came from and what came of it, and read back
/// newest first, per session.
#[test]
fn answers_are_recorded_whatever_their_outcome_and_read_newest_first() {
    use slate::agents::keys::Action;
    use slate::answers::{Record, Surface};
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("slate.db");
    let record = |surface, action, option: Option<&str>, outcome: &str, at_s| Record {
        surface,
        action,
        option: option.map(str::to_string),
        fingerprint: "9f86d081884c7d65".to_string(),
        summary: Some("Run: touch x.txt".to_string()),
        outcome: outcome.to_string(),
        detail: (outcome != "answered").then(|| "the dialog changed".to_string()),
        at: at(at_s),
    };
    {
        let store = store::open(&path).unwrap();
        store
            .record_answer(
                &key("s1"),
                &record(Surface::Window, Action::Approve, None, "dialog_changed", 10),
            )
            .unwrap();
        store
            .record_answer(
                &key("s1"),
                &record(
                    Surface::Cli,
                    Action::Answer,
                    Some("Postgres"),
                    "answered",
                    20,
                ),
            )
            .unwrap();
        store
            .record_answer(
                &key("s2"),
                &record(Surface::Tray, Action::Deny, None, "answered", 30),
            )
            .unwrap();
    }
    let store = store::open(&path).unwrap();
    let answers = store.answers(&key("s1"), 10).unwrap();
    assert_eq!(
        answers,
        vec![
            record(
                Surface::Cli,
                Action::Answer,
                Some("Postgres"),
                "answered",
                20
            ),
            record(Surface::Window, Action::Approve, None, "dialog_changed", 10),
        ]
    );
    assert_eq!(store.answers(&key("s1"), 1).unwrap().len(), 1);
    assert!(store.answers(&key("nobody"), 10).unwrap().is_empty());
    // A row another program wrote with a surface this build does not know is a clear error.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "INSERT INTO answers (agent, session_id, surface, action, fingerprint, outcome, at_ms)
             VALUES ('claude-code', 's3', 'telepathy', 'approve', '0000000000000000', 'answered', 1)",
        )
        .unwrap();
    let error = store.answers(&key("s3"), 10).unwrap_err().to_string();
    assert!(error.contains("surface"), "{error}");
}
