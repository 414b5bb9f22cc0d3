//! What a real file survives: a writer killed with SIGKILL mid-write loses no committed
//! transition, a corrupt or truncated file is moved aside and replaced, and a lock held by another
//! writer is waited out, then reported, never taken for corruption.

use std::collections::{BTreeMap, HashSet};
use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use slate::model::{Reason, ReasonCode, Status, Timestamp};
use slate::store::{self, Store, StoreError, Transition};

use super::{at, corrupt_siblings, item, key, transition};

fn integrity(path: &Path) -> String {
    let conn = rusqlite::Connection::open(path).expect("the store opens with plain rusqlite");
    conn.query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .expect("the integrity check runs")
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
            "store::recovery::writer_child",
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
