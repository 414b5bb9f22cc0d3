//! Times: timestamp arithmetic saturates, and a far-future time is read as now and postpones
//! nothing.

use std::fs;
use std::time::{Duration, SystemTime};

use rusqlite::Connection;
use slate::model::{AgentKind, ProcessTable, SessionKey, Status, Timestamp};
use slate::sources::walk::ScanOptions;

use crate::engine::fixtures;

use super::{engine, now, problems_of};

#[test]
fn timestamp_arithmetic_saturates() {
    let end = Timestamp::from_millis(i64::MAX);
    let start = Timestamp::from_millis(i64::MIN);
    assert_eq!(end.plus(Duration::from_secs(1)), end);
    assert_eq!(Timestamp::from_millis(0).plus(Duration::MAX), end);
    assert_eq!(Timestamp::from_millis(-2).minus(Duration::MAX), start);
    assert_eq!(start.minus(Duration::from_secs(1)), start);
    assert_eq!(
        start.elapsed_until(end),
        Duration::from_millis(i64::MAX as u64)
    );
    assert_eq!(end.elapsed_until(start), Duration::ZERO);
}

#[test]
fn a_far_future_time_is_read_as_now_and_postpones_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    // An OpenCode row updated at the end of time, and a Claude Code transcript whose records and
    // file are dated in the year 9999.
    let data = home.join(".local/share/opencode");
    fs::create_dir_all(&data).unwrap();
    let db = data.join("opencode.db");
    fs::copy(fixtures().join("stores/opencode.db"), &db).unwrap();
    let future_id = "ses_5a1b2c3d5ffeB2workingRt7P";
    {
        let connection = Connection::open(&db).unwrap();
        connection
            .execute(
                "UPDATE session SET time_updated = ?1 WHERE id = ?2",
                rusqlite::params![i64::MAX, future_id],
            )
            .unwrap();
        connection
            .execute(
                "UPDATE part SET time_updated = ?1 WHERE session_id = ?2",
                rusqlite::params![i64::MAX, future_id],
            )
            .unwrap();
    }
    let transcript = crate::util::transcript_path(home);
    let far = Timestamp::parse_rfc3339("9999-12-31T23:59:59.000Z").unwrap();
    crate::util::working_transcript(home, far);
    let file = fs::File::options().write(true).open(&transcript).unwrap();
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(253_402_300_799))
        .unwrap();
    drop(file);

    // No process vouches for either: each closes once its last write is a window old, which a
    // date in the future would put off for ever.
    let start = now();
    let mut engine = engine(home, ProcessTable::default(), ScanOptions::default());
    engine.refresh(start);
    let opencode = SessionKey::new(AgentKind::OPENCODE, future_id);
    let claude = SessionKey::new(AgentKind::CLAUDE_CODE, crate::util::SESSION);
    let session = engine
        .tracker()
        .session(&claude)
        .expect("the transcript is read");
    let active = session.session_state.active_at.expect("it has activity");
    assert!(active <= start, "active at {active}, after {start}");
    // Counted once for each, where it was read.
    let counted: Vec<String> = problems_of(&engine)
        .into_iter()
        .filter(|(kind, _, _)| kind == "future_time")
        .map(|(_, place, _)| place)
        .collect();
    for place in [
        format!("{}#{future_id}", db.display()),
        transcript.display().to_string(),
    ] {
        let times = counted.iter().filter(|at| **at == place).count();
        assert_eq!(times, 1, "{place}: {counted:?}");
    }
    // No deadline lies beyond the window the clamped records open.
    let deadline = engine
        .next_deadline()
        .expect("a working session has a deadline");
    assert!(
        deadline <= start.plus(Duration::from_secs(3600)),
        "{deadline}"
    );

    // A day later nothing is still open on the strength of a date that has not come.
    let later = start.plus(Duration::from_secs(24 * 3600));
    engine.tick(later);
    for key in [&opencode, &claude] {
        let session = engine.tracker().session(key).expect("the session is known");
        assert_eq!(
            session.status,
            Status::Ended,
            "{key}: {:?}",
            session.session_state
        );
    }

    // The OpenCode database is still followed: a session written after the far-future row is
    // read (the store's own position never moves past now).
    {
        let connection = Connection::open(&db).unwrap();
        connection
            .execute(
                "UPDATE session SET time_updated = ?1, title = 'later' WHERE id = ?2",
                rusqlite::params![
                    later.plus(Duration::from_secs(1)).millis(),
                    "ses_5a1b2c3d4ffeA1finishedXk9Q"
                ],
            )
            .unwrap();
    }
    engine.refresh(later.plus(Duration::from_secs(2)));
    let updated = engine
        .tracker()
        .session(&SessionKey::new(
            AgentKind::OPENCODE,
            "ses_5a1b2c3d4ffeA1finishedXk9Q",
        ))
        .unwrap();
    assert_eq!(updated.title.as_deref(), Some("later"));
}
