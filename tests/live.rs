//! The live service over a temporary HOME: the first snapshot is already decided, an append to a
//! transcript reaches subscribers as exactly one change, a closed session leaves the list (unless
//! a claim holds it, or until its reclaim time is up), and a config edit applies while it runs.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use slate::config::Config;
use slate::engine::{Options, ProcessSource};
use slate::live::{self, Service, Timing, Update};
use slate::model::{Activity, Status, Timestamp};
use slate::settings::{self, Settings};
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
        settings: Default::default(),
        remotes: None,
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
    use slate::store;

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
    crate::util::claim_docs(&store::open(&db).unwrap(), now);
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

/// Writes `SESSION`'s transcript with a turn that finished at `at`: Needs you, between turns.
fn finished_transcript(home: &Path, at: Timestamp) {
    let path = crate::util::transcript_path(home);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let lines = [
        (
            "user",
            r#""message":{"role":"user","content":"tidy the docs"}"#,
        ),
        (
            "assistant",
            r#""message":{"role":"assistant","content":[{"type":"text","text":"Done."}]}"#,
        ),
        ("system", r#""subtype":"turn_duration","durationMs":900"#),
    ];
    let text: String = lines
        .iter()
        .map(|(kind, body)| format!("{}\n", claude_line(kind, body, at)))
        .collect();
    std::fs::write(path, text).unwrap();
}

/// Waits until `check` holds for the service's settings, at most five seconds.
async fn settings_until(handle: &live::Handle, what: &str, check: impl Fn(&Settings) -> bool) {
    let mut settings = handle.watch_settings();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !check(&settings.borrow_and_update()) {
        tokio::time::timeout_at(deadline, settings.changed())
            .await
            .unwrap_or_else(|_| panic!("{what} within five seconds: {:?}", handle.settings()))
            .unwrap();
    }
}

/// Waits at most five seconds for the session update whose activity is `activity`, skipping
/// others.
async fn activity_becomes(
    updates: &mut tokio::sync::broadcast::Receiver<Update>,
    activity: Activity,
) -> slate::model::Session {
    let wait = async {
        loop {
            let session = next_session(updates).await;
            if session.session_state.activity == activity {
                return session;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), wait)
        .await
        .unwrap_or_else(|_| panic!("the activity turns {activity:?} within five seconds"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_edit_applies_live_and_a_broken_one_keeps_the_last_good() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let now = live::system_clock();
    finished_transcript(home, now.minus(Duration::from_secs(5 * 60)));
    let file = home.join("config/slate/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "[project-policy]\nsession_idle_minutes = 20\n").unwrap();

    let settings = Settings::load(&file);
    let mut service = service(home, now.minus(Duration::from_secs(10 * 60)));
    service.options = {
        let mut options = settings::engine_options(service.options.env.clone(), &settings.config);
        options.processes = service.options.processes.clone();
        options
    };
    service.settings = settings;
    let (handle, thread) = live::start(service);
    let (snapshot, mut updates) = handle.subscribe();
    assert_eq!(snapshot[0].status, Status::Waiting);
    assert_eq!(
        snapshot[0].session_state.activity,
        Activity::BetweenTurns,
        "five minutes without activity is not silent under a 20-minute policy"
    );

    // An edit applies at once: the session has been quiet longer than a minute.
    std::fs::write(&file, "[project-policy]\nsession_idle_minutes = 1\n").unwrap();
    let session = activity_becomes(&mut updates, Activity::Silent).await;
    assert_eq!(session.status, Status::Waiting);
    let settings = handle.settings();
    assert_eq!(settings.config.project_policy.session_idle_minutes, 1);
    assert_eq!(settings.error, None);
    assert_eq!(
        handle
            .health()
            .settings
            .config
            .project_policy
            .session_idle_minutes,
        1
    );

    // A broken edit keeps the last good config, and says what is wrong and where.
    std::fs::write(
        &file,
        "[project-policy]\nsession_idle_minutes = \"thirty\"\n",
    )
    .unwrap();
    settings_until(&handle, "the broken edit is reported", |settings| {
        settings.error.is_some()
    })
    .await;
    let settings = handle.settings();
    let error = settings.error.clone().unwrap();
    assert!(error.contains(&file.display().to_string()), "{error}");
    assert!(error.contains("session_idle_minutes"), "{error}");
    assert!(error.contains("line 2"), "{error}");
    assert_eq!(
        settings.config.project_policy.session_idle_minutes, 1,
        "the last good config stays in force"
    );
    handle.refresh_and_wait().await;
    assert_eq!(handle.health().settings.error, Some(error));
    assert_eq!(
        handle.live_sessions()[0].session_state.activity,
        Activity::Silent
    );

    // Fixed, with the listener moved: the policy applies, the error goes, and the new address
    // waits for a restart.
    std::fs::write(
        &file,
        "[project-policy]\nsession_idle_minutes = 30\n\n[server]\nlisten = \"127.0.0.1:7499\"\n",
    )
    .unwrap();
    let session = activity_becomes(&mut updates, Activity::BetweenTurns).await;
    assert_eq!(session.status, Status::Waiting);
    let settings = handle.settings();
    assert_eq!(settings.error, None);
    assert_eq!(settings.restart_needed, ["server.listen"]);

    handle.shutdown();
    thread.join().unwrap();
}

/// A clock the test moves: the live service reads it as its wall clock.
static FAKE_NOW: AtomicI64 = AtomicI64::new(0);

fn fake_clock() -> Timestamp {
    Timestamp::from_millis(FAKE_NOW.load(Ordering::SeqCst))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_session_stays_listed_while_it_holds_a_claim_or_until_its_time_is_up() {
    use slate::store;

    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let now = live::system_clock();
    FAKE_NOW.store(now.millis(), Ordering::SeqCst);
    working_transcript(home, now);
    let db = home.join("data/slate/slate.db");
    crate::util::claim_docs(&store::open(&db).unwrap(), now);
    // Its process exits while the service runs.
    let table = Arc::new(Mutex::new(claude_process_table(
        now.minus(Duration::from_secs(60)),
    )));
    let mut service = service(home, now);
    service.options.processes = ProcessSource::Shared(Arc::clone(&table));
    service.store = Some(store::open(&db).unwrap());
    service.clock = fake_clock;
    service.settings = Settings::new(
        None,
        Config::parse("[cleanup]\nreclaim_after_minutes = 10\n").unwrap(),
    );
    let (handle, thread) = live::start(service);
    let (snapshot, mut updates) = handle.subscribe();
    assert_eq!(snapshot[0].status, Status::Working);

    table.lock().unwrap().processes.clear();
    handle.refresh_and_wait().await;
    let session = next_session(&mut updates).await;
    assert_eq!(session.status, Status::Ended);
    assert!(session.session_state.custody.holds_work_claim);
    let listed = handle.live_sessions();
    assert_eq!(
        listed.len(),
        1,
        "a closed session holding a claim stays listed"
    );
    assert_eq!(listed[0].status, Status::Ended);
    assert_eq!(handle.health().live_sessions, 1);
    assert_eq!(handle.health().needs_you, 0);

    // Long after it ended, the claim still holds it.
    FAKE_NOW.store(
        now.plus(Duration::from_secs(3600)).millis(),
        Ordering::SeqCst,
    );
    handle.refresh_and_wait().await;
    assert_eq!(handle.live_sessions().len(), 1);

    // Released, it is reclaimable: it stays until ten minutes after it ended, then leaves.
    FAKE_NOW.store(now.plus(Duration::from_secs(60)).millis(), Ordering::SeqCst);
    let cli = store::open(&db).unwrap();
    for claim in cli.claims_on("docs").unwrap() {
        cli.release_claim(claim.id, fake_clock()).unwrap();
    }
    handle.refresh_and_wait().await;
    let listed = handle.live_sessions();
    assert_eq!(listed.len(), 1, "{listed:#?}");
    assert!(listed[0].session_state.custody.reclaimable);
    FAKE_NOW.store(
        now.plus(Duration::from_secs(11 * 60)).millis(),
        Ordering::SeqCst,
    );
    handle.refresh_and_wait().await;
    assert!(handle.live_sessions().is_empty());
    let removed = loop {
        let update = tokio::time::timeout(Duration::from_secs(2), updates.recv())
            .await
            .expect("an update within two seconds")
            .unwrap();
        if let Update::Removed { id, .. } = update {
            break id;
        }
    };
    assert_eq!(removed, SESSION);
    assert_eq!(handle.health().live_sessions, 0);

    handle.shutdown();
    thread.join().unwrap();
}
