//! Following a running Slate from its event stream: events read into what they tell, a snapshot
//! after a reconnect compared with the list held, and a real follower of a real server that goes
//! away and comes back, with the notification decision fed from it.

use std::net::SocketAddr;
use std::time::Duration;

use slate::api;
use slate::client::{Client, ServerEvent};
use slate::live::{self, Handle, Update};
use slate::mirror::follower::{self, Link, Timing};
use slate::mirror::{read_event, Mirror, Told};
use slate::model::{AgentKind, Machine, SessionKey, Status};
use slate::policy::notifications::{self, Input, Notifier, BURST};
use tokio::sync::broadcast;

use crate::api::{finish_turn, security, started, TOKEN};
use crate::util::{transcript_path, waiting, working, SESSION};

fn event(name: &str, data: &str) -> ServerEvent {
    ServerEvent {
        event: name.to_string(),
        data: data.to_string(),
    }
}

fn session_update(session: &slate::model::Session) -> Update {
    Update::Session {
        session: Box::new(session.clone()),
    }
}

#[test]
fn each_event_reads_as_what_it_tells_and_a_garbled_one_as_nothing() {
    let one = working("acme", "a1");
    let snapshot = serde_json::json!({ "sessions": [one, {"not": "a session"}] }).to_string();
    assert_eq!(
        read_event(&event("snapshot", &snapshot)),
        Some(Told::Snapshot(vec![one.clone()])),
        "a session object that does not read is left out"
    );
    assert_eq!(
        read_event(&event("session", &serde_json::to_string(&one).unwrap())),
        Some(Told::Update(session_update(&one)))
    );
    assert_eq!(
        read_event(&event(
            "removed",
            r#"{"agent":"claude-code","id":"a1","machine":"box"}"#
        )),
        Some(Told::Update(Update::Removed {
            agent: AgentKind::CLAUDE_CODE,
            id: "a1".to_string(),
            machine: Some(Machine::new("box").unwrap()),
        }))
    );
    for (name, data) in [
        ("session", "{truncated"),
        ("session", r#"{"id": 7}"#),
        ("removed", r#"{"agent":"claude-code"}"#),
        ("snapshot", "not json"),
        ("hello", r#"{"from":"a newer slate"}"#),
        ("message", ""),
    ] {
        assert_eq!(read_event(&event(name, data)), None, "{name}: {data}");
    }
}

#[test]
fn a_snapshot_after_a_gap_tells_only_what_changed() {
    let mut mirror = Mirror::seeded(vec![
        working("acme", "a1"),
        working("web", "w1"),
        waiting("docs", "d1"),
    ]);
    // An update passes through; a removal of a session the mirror never held is dropped.
    let flipped = waiting("acme", "a1");
    assert_eq!(
        mirror.apply(Told::Update(session_update(&flipped))),
        [session_update(&flipped)]
    );
    let stranger = Update::removed(&SessionKey::new(AgentKind::CLAUDE_CODE, "nobody"));
    assert_eq!(mirror.apply(Told::Update(stranger)), []);

    // The stream was down: meanwhile web turned to Needs you, docs closed and left the list,
    // and a new session started. acme is as it was.
    let web = waiting("web", "w1");
    let new = working("api", "n1");
    let updates = mirror.apply(Told::Snapshot(vec![
        flipped.clone(),
        web.clone(),
        new.clone(),
    ]));
    assert_eq!(
        updates,
        [
            Update::removed(&SessionKey::new(AgentKind::CLAUDE_CODE, "d1")),
            session_update(&new),
            session_update(&web),
        ]
    );
    assert_eq!(
        mirror.sessions(),
        [flipped.clone(), web.clone(), new.clone()]
    );
    // The same snapshot again tells nothing.
    assert_eq!(mirror.apply(Told::Snapshot(vec![new, web, flipped])), []);
}

/// Serves `handle`'s API on `address` (port 0 for a free one) until the sender fires.
async fn serve_at(
    handle: &Handle,
    address: SocketAddr,
) -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let listener = tokio::net::TcpListener::bind(address).await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(api::serve(
        listener,
        handle.clone(),
        security(address.port()),
        async move {
            let _ = stopped.await;
        },
    ));
    (address, stop, server)
}

async fn next_update(updates: &mut broadcast::Receiver<Update>) -> Update {
    tokio::time::timeout(Duration::from_secs(5), updates.recv())
        .await
        .expect("an update within 5 s")
        .expect("the channel is open")
}

async fn link_becomes(link: &mut tokio::sync::watch::Receiver<Link>, up: bool) -> Link {
    tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let now = link.borrow_and_update().clone();
            if (now == Link::Up) == up {
                return now;
            }
            link.changed().await.expect("the follower lives");
        }
    })
    .await
    .expect("the link changes within 5 s")
}

/// The Slate service seen from the app: its list, its changes and its settings come through the
/// follower; when it goes away the link says since when; a session that turned to Needs you
/// while it was away is told once when it is back, and the notification policy fed from the
/// follower notifies it, as it would have with the engine in-process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_tells_a_change_made_while_the_slate_was_away_once() {
    let (temp, handle, thread) = started();
    let (address, stop, server) = serve_at(&handle, "127.0.0.1:0".parse().unwrap()).await;
    let timing = Timing {
        retry: Duration::from_millis(100),
        health_every: Duration::from_millis(200),
    };
    let client = Client::new(address, Some(TOKEN.to_string()));
    let followed = tokio::task::spawn_blocking(move || {
        follower::follow(client, timing, live::system_clock).expect("it follows")
    })
    .await
    .unwrap();
    assert_eq!(
        followed.identity().kind,
        Some(slate::model::ServerKind::Service)
    );
    assert_eq!(followed.identity().pid, Some(std::process::id()));
    assert_eq!(followed.settings().error, None);
    let (snapshot, mut updates) = followed.subscribe();
    assert_eq!(snapshot.len(), 1, "{snapshot:?}");
    assert_eq!(snapshot[0].id.as_str(), SESSION);
    assert_eq!(snapshot[0].status, Status::Working);
    assert_eq!(snapshot, handle.live_sessions());
    let mut notifier = Notifier::seed(&snapshot);
    let id = SESSION.to_string();
    let asked = followed.clone();
    let detail = tokio::task::spawn_blocking(move || asked.session(&id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(detail.id.as_str(), SESSION);

    // The service goes away: the link is down from then on.
    let mut link = followed.watch_link();
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    let down = link_becomes(&mut link, false).await;
    assert!(matches!(down, Link::Down { .. }), "{down:?}");

    // Meanwhile the session's turn ends; the engine (the service's, restarting) sees it.
    finish_turn(&transcript_path(temp.path()));
    tokio::time::timeout(Duration::from_secs(5), async {
        while handle.live_sessions()[0].status != Status::Waiting {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the engine sees the turn end");
    assert!(updates.try_recv().is_err(), "nothing is told while away");

    // It is back on the same port: the follower opens the stream again by itself, and the
    // snapshot tells the one change.
    let (_, stop, server) = serve_at(&handle, address).await;
    link_becomes(&mut link, true).await;
    let update = next_update(&mut updates).await;
    let Update::Session { session } = &update else {
        panic!("{update:?}")
    };
    assert_eq!(session.id.as_str(), SESSION);
    assert_eq!(session.status, Status::Waiting);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(updates.try_recv().is_err(), "told once");
    assert_eq!(followed.live_sessions(), handle.live_sessions());

    let now = live::system_clock();
    let first = notifications::decide(&mut notifier, update.as_notification(), now, false);
    assert!(first.plans.is_empty(), "a burst window opens first");
    let told = notifications::decide(&mut notifier, Input::Tick, now.plus(BURST), false);
    assert_eq!(told.plans.len(), 1, "{told:?}");
    assert!(told.plans[0].title.ends_with("needs you"), "{told:?}");

    followed.stop();
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    handle.shutdown();
    thread.join().unwrap();
}

/// The settings in force and a config error come from the followed Slate's `/health`, which the
/// follower reads again every `health_every`: a broken edit of the config file shows, and goes
/// when the file reads again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_s_settings_follow_the_slate_s_health() {
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("config.toml");
    std::fs::write(&file, "[project-policy]\nsession_idle_minutes = 7\n").unwrap();
    let mut service = crate::api::service(temp.path());
    service.settings = slate::settings::Settings::load(&file);
    let (handle, thread) = live::start(service);
    let (address, stop, server) = serve_at(&handle, "127.0.0.1:0".parse().unwrap()).await;
    let timing = Timing {
        retry: Duration::from_millis(100),
        health_every: Duration::from_millis(100),
    };
    let client = Client::new(address, Some(TOKEN.to_string()));
    let followed = tokio::task::spawn_blocking(move || {
        follower::follow(client, timing, live::system_clock).expect("it follows")
    })
    .await
    .unwrap();
    let settings = followed.settings();
    assert_eq!(settings.file.as_deref(), Some(file.as_path()));
    assert_eq!(settings.config.project_policy.session_idle_minutes, 7);
    assert_eq!(settings.error, None);

    let mut watched = followed.watch_settings();
    std::fs::write(&file, "[project-policy]\nsesion_idle_minutes = 9\n").unwrap();
    let error = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if let Some(error) = watched.borrow_and_update().error.clone() {
                return error;
            }
            watched.changed().await.unwrap();
        }
    })
    .await
    .expect("the error shows within 5 s");
    assert!(error.contains("sesion_idle_minutes"), "{error}");
    assert_eq!(
        followed
            .settings()
            .config
            .project_policy
            .session_idle_minutes,
        7,
        "the last good config stays in force there, and so here"
    );
    std::fs::write(&file, "").unwrap();
    tokio::time::timeout(Duration::from_secs(5), async {
        while watched.borrow_and_update().error.is_some() {
            watched.changed().await.unwrap();
        }
    })
    .await
    .expect("the error goes within 5 s");

    followed.stop();
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    handle.shutdown();
    thread.join().unwrap();
}

/// A Slate that is not there, or whose stream ends before its first snapshot, cannot be
/// followed: the caller runs an engine of its own instead.
#[test]
fn nothing_to_follow_is_an_error() {
    let nobody = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = nobody.local_addr().unwrap();
    drop(nobody);
    let client = Client::new(address, Some(TOKEN.to_string()));
    assert!(follower::follow(client, Timing::default(), live::system_clock).is_err());
}
