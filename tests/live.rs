//! The live service over a temporary HOME: the first snapshot is already decided, an append to a
//! transcript reaches subscribers as exactly one change, and a closed session leaves the list.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use slate::engine::{Options, ProcessSource};
use slate::live::{self, Service, Timing, Update};
use slate::model::{Status, Timestamp};
use slate::sources::roots::Env;

use crate::util::{claude_line, claude_process_table, working_transcript, SESSION};

fn service(home: &Path, started: Timestamp) -> Service {
    let env = Env {
        home: Some(home.to_path_buf()),
        ..Env::default()
    };
    let mut options = Options::from_env(env);
    options.processes = ProcessSource::Recorded(claude_process_table(started));
    Service {
        options,
        timing: Timing::default(),
        store: None,
        clock: live::system_clock,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_appended_turn_end_reaches_subscribers_once() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let now = live::system_clock();
    let transcript = working_transcript(home, now);

    let (handle, thread) = live::start(service(home, now.minus(Duration::from_secs(60))));
    let (snapshot, mut updates) = handle.subscribe();
    assert_eq!(snapshot.len(), 1, "{snapshot:#?}");
    assert_eq!(snapshot[0].status, Status::Working);

    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    let at = live::system_clock();
    for (kind, body) in [
        (
            "user",
            r#""message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok","is_error":false}]}"#,
        ),
        (
            "assistant",
            r#""message":{"role":"assistant","content":[{"type":"text","text":"All green."}]}"#,
        ),
        ("system", r#""subtype":"turn_duration","durationMs":900"#),
    ] {
        writeln!(file, "{}", claude_line(kind, body, at)).unwrap();
    }
    file.flush().unwrap();

    let update = tokio::time::timeout(Duration::from_secs(1), updates.recv())
        .await
        .expect("a change within a second")
        .expect("the stream is open");
    match update {
        Update::Session { session } => {
            assert_eq!(session.id.as_str(), SESSION);
            assert_eq!(session.status, Status::Waiting);
            assert_eq!(session.session_state.reason.code.as_str(), "turn_finished");
        }
        other => panic!("expected a session update, got {other:?}"),
    }
    // Exactly one: nothing else arrives while nothing else happens.
    let more = tokio::time::timeout(Duration::from_millis(700), updates.recv()).await;
    assert!(more.is_err(), "a second update arrived: {more:?}");
    assert_eq!(handle.live_sessions()[0].status, Status::Waiting);

    handle.shutdown();
    thread.join().unwrap();
}

/// Waits for the next session update, skipping removals.
async fn next_session(
    updates: &mut tokio::sync::broadcast::Receiver<Update>,
) -> slate::model::Session {
    loop {
        let update = tokio::time::timeout(Duration::from_secs(2), updates.recv())
            .await
            .expect("a change within two seconds")
            .expect("the stream is open");
        if let Update::Session { session } = update {
            return *session;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_intent_set_through_the_handle_and_a_claim_written_by_the_cli_reach_subscribers() {
    use slate::model::{Intent, IntentState, SessionKey};
    use slate::store::{self, WorkItem};

    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let now = live::system_clock();
    working_transcript(home, now);
    let db = home.join("data/slate/slate.db");
    let mut service = service(home, now.minus(Duration::from_secs(60)));
    service.store = Some(store::open(&db).unwrap());

    let (handle, thread) = live::start(service);
    let (snapshot, mut updates) = handle.subscribe();
    assert_eq!(snapshot[0].session_state.intent.state, IntentState::None);
    let key = SessionKey::new(snapshot[0].agent, SESSION);

    let parked = Intent {
        state: IntentState::Parked,
        reason: Some("after lunch".to_string()),
        awaiting_who: None,
    };
    handle.set_intent(&key, &parked).unwrap();
    let session = next_session(&mut updates).await;
    let state = &session.session_state;
    assert_eq!(state.intent, parked);
    assert_eq!(state.status, Status::Working, "parking keeps the state");
    assert_eq!(
        serde_json::to_value(state.next_actor.actor).unwrap(),
        "parent_or_steering"
    );
    assert!(slate::tracker::notifications_muted(state));

    // The command line writes the store through its own connection, then asks for a re-read.
    let cli = store::open(&db).unwrap();
    cli.put_work_item(&WorkItem {
        id: "docs".to_string(),
        title: "Docs".to_string(),
        status: slate::model::ItemStatus::Ready,
        deps: Vec::new(),
        created: now,
    })
    .unwrap();
    cli.claim("docs", &key, now).unwrap();
    handle.send(live::Event::IntentsChanged);
    let session = next_session(&mut updates).await;
    assert!(session.session_state.custody.holds_work_claim);
    assert_eq!(session.session_state.custody.holds, ["item:docs"]);

    handle.set_intent(&key, &Intent::default()).unwrap();
    let session = next_session(&mut updates).await;
    assert_eq!(session.session_state.intent.state, IntentState::None);
    assert!(!slate::tracker::notifications_muted(&session.session_state));

    handle.shutdown();
    thread.join().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_ended_while_slate_was_away_is_closed_in_the_history() {
    use slate::model::{Reason, ReasonCode, SessionKey};
    use slate::store::{self, Transition};

    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let now = live::system_clock();
    // A transcript last written a month ago, whose last recorded state was Needs you.
    let path = working_transcript(home, now);
    let month_ago = std::time::SystemTime::now() - Duration::from_secs(30 * 24 * 3600);
    crate::engine::set_modified(&path, month_ago);
    let db = home.join("data/slate/slate.db");
    let key = SessionKey::new(slate::model::AgentKind::CLAUDE_CODE, SESSION);
    let earlier = now.minus(Duration::from_secs(30 * 24 * 3600));
    store::open(&db)
        .unwrap()
        .record_transitions(&[Transition {
            key: key.clone(),
            from: Some(Status::Working),
            to: Status::Waiting,
            reason: Reason::new(ReasonCode::TurnFinished, "The turn finished"),
            at: earlier,
        }])
        .unwrap();

    // No process: seen closed at start, with no change to report, and closed in the history.
    let mut service = service(home, now);
    service.options.processes = ProcessSource::Recorded(Default::default());
    service.store = Some(store::open(&db).unwrap());
    let (handle, thread) = live::start(service);
    assert!(handle.live_sessions().is_empty());
    let detail = handle
        .session(SESSION)
        .expect("the closed session is known");
    assert_eq!(detail.session.status, Status::Ended);
    let latest = &detail.transitions[0];
    assert_eq!(
        (latest.from, latest.to),
        (Some(Status::Waiting), Status::Ended)
    );
    // It needed you from the recorded turn end until this start-up closed it: a month.
    let month_ms = 30 * 24 * 3600 * 1000;
    let needs_you = detail
        .needs_you_ms
        .expect("a store gives the time in Needs you");
    assert!(
        (month_ms..month_ms + 60_000).contains(&needs_you),
        "{needs_you} ms"
    );
    assert!(store::open(&db).unwrap().unfinished().unwrap().is_empty());
    handle.shutdown();
    thread.join().unwrap();
}
