//! Typed round trips through an in-memory store: transitions (newest first, within a limit), time
//! in status, intents, work items and claims, the notification pause, the answers, the sessions a
//! last transition leaves open, and a store moved to a worker thread.

use std::path::Path;
use std::time::Duration;

use slate::model::{
    AgentKind, Awaiting, Intent, IntentState, ItemStatus, Reason, ReasonCode, SessionKey, Status,
    Timestamp,
};
use slate::policy::menu::Pause;
use slate::store::{self, Store, StoredIntent, Transition, WorkItem};

use super::{at, item, key, memory, transition};

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

/// The desktop app's notification pause outlives the process that set it: until resumed, or
/// until a time that is still ahead. A pause whose end has passed reads as none, and resuming
/// removes it.
#[test]
fn the_notification_pause_is_kept_until_resumed_or_until_it_ends() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("slate.db");
    {
        let store = store::open(&path).unwrap();
        assert_eq!(store.notification_pause(at(0)).unwrap(), Pause::Off);
        store
            .set_notification_pause(Pause::UntilResumed, at(10))
            .unwrap();
    }
    // Another process (the app after a restart) opens the file and finds the pause.
    let store = store::open(&path).unwrap();
    assert_eq!(
        store.notification_pause(at(1_000_000)).unwrap(),
        Pause::UntilResumed
    );

    // A timed pause replaces it, holds until its end, and is no pause from then on.
    store
        .set_notification_pause(Pause::Until(at(3600)), at(20))
        .unwrap();
    assert_eq!(
        store.notification_pause(at(3599)).unwrap(),
        Pause::Until(at(3600))
    );
    assert_eq!(store.notification_pause(at(3600)).unwrap(), Pause::Off);
    assert_eq!(store.notification_pause(at(7200)).unwrap(), Pause::Off);

    // Resuming removes it.
    store
        .set_notification_pause(Pause::UntilResumed, at(30))
        .unwrap();
    store.set_notification_pause(Pause::Off, at(40)).unwrap();
    assert_eq!(store.notification_pause(at(41)).unwrap(), Pause::Off);
    let rows: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM notification_pause", [], |row| {
            row.get(0)
        })
        .unwrap();
    assert_eq!(rows, 0, "one row at most, and none once resumed");
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
