//! The accessibility reader against applications that answer as no real terminal does. A
//! stand-in, on a private session bus that is also its accessibility bus, serves the registry
//! and one application whose tree is endless, loops back on itself, runs deeper than any
//! terminal's, holds a text of a million characters behind a count of `i32::MAX`, answers with
//! the wrong types, or never answers. Each read ends within its deadline, having asked no more
//! than the bounds allow (`MOST_NODES`, `MOST_DEPTH`, `MOST_TEXT`), and says why it read nothing.

use std::process::Child;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use slate::terminals::accessibility::{self, Tab, Unread, MOST_DEPTH, MOST_NODES, MOST_TEXT};
use zbus::message::Type;
use zbus::zvariant::{ObjectPath, OwnedValue, Value};

use crate::util::{needs, private_bus};

const ROLE_FILLER: u32 = atspi::Role::Filler as u32;
const ROLE_TERMINAL: u32 = atspi::Role::Terminal as u32;
const REGISTRY_ROOT: &str = "/org/a11y/atspi/accessible/root";

/// How the stand-in application answers.
#[derive(Clone, Copy)]
enum App {
    /// Every object has three children never seen before.
    Endless,
    /// Its one child lists the application and itself as its children.
    Loop,
    /// A chain of objects whose terminal is this many levels below the application.
    TerminalAt(usize),
    /// One terminal, whose text has this many characters by its count, and a text of this many
    /// whatever part is asked for.
    Text { count: i32, length: usize },
    /// Its role is a string, not a number.
    WrongRole,
    /// It never answers what its role is.
    Silent,
}

/// What the application was asked.
#[derive(Default)]
struct Asked {
    roles: AtomicUsize,
    texts: Mutex<Vec<(i32, i32)>>,
}

/// A private session bus with the stand-in on it; stopped when dropped.
struct StandIn {
    bus: String,
    daemon: Child,
    asked: Arc<Asked>,
    _runtime: tokio::runtime::Runtime,
    _home: tempfile::TempDir,
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

impl StandIn {
    fn start(app: App) -> StandIn {
        needs(&["dbus-daemon"]);
        let home = tempfile::tempdir().unwrap();
        let (daemon, bus) = private_bus(home.path());
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let asked = Arc::new(Asked::default());
        let connection = runtime.block_on(async {
            zbus::connection::Builder::address(bus.as_str())
                .unwrap()
                .name("org.a11y.Bus")
                .unwrap()
                .name("org.a11y.atspi.Registry")
                .unwrap()
                .build()
                .await
                .expect("the stand-in connects")
        });
        runtime.spawn(serve(connection, bus.clone(), app, Arc::clone(&asked)));
        StandIn {
            bus,
            daemon,
            asked,
            _runtime: runtime,
            _home: home,
        }
    }

    /// One read of the application's tabs, as `slate doctor` reads them.
    fn read(&self, deadline: Duration) -> Result<Vec<Tab>, Unread> {
        accessibility::read_app(&self.bus, std::process::id(), deadline)
    }

    fn roles_asked(&self) -> usize {
        self.asked.roles.load(Ordering::SeqCst)
    }
}

/// Answers every method call on `connection` as `app` would: the accessibility bus's address
/// (this same bus), the registry's root, whose children are the application and two that are
/// no one's, and the application's objects.
async fn serve(connection: zbus::Connection, bus: String, app: App, asked: Arc<Asked>) {
    let me = connection.unique_name().unwrap().to_string();
    let mut calls = zbus::MessageStream::from(&connection);
    let mut made = 0usize;
    let path = |p: String| ObjectPath::try_from(p).unwrap();
    while let Some(Ok(call)) = calls.next().await {
        if call.message_type() != Type::MethodCall {
            continue;
        }
        let header = call.header();
        let at = header.path().map(|p| p.to_string()).unwrap_or_default();
        let member = header.member().map(|m| m.to_string()).unwrap_or_default();
        let child = |p: String| (me.clone(), path(p));
        let replied = match member.as_str() {
            "GetAddress" => connection.reply(&header, &bus).await,
            "GetChildren" if at == REGISTRY_ROOT => {
                let children = vec![
                    (String::new(), path("/org/a11y/atspi/null".to_string())),
                    (":1.9999".to_string(), path("/gone".to_string())),
                    child("/app".to_string()),
                ];
                connection.reply(&header, &children).await
            }
            "GetChildren" => {
                let children: Vec<(String, ObjectPath<'_>)> = match app {
                    App::Endless => (0..3)
                        .map(|_| {
                            made += 1;
                            child(format!("/n/{made}"))
                        })
                        .collect(),
                    App::Loop => vec![child("/app".to_string()), child("/n/1".to_string())],
                    App::TerminalAt(_) => {
                        let depth: usize = at.strip_prefix("/n/").map_or(0, |d| d.parse().unwrap());
                        vec![child(format!("/n/{}", depth + 1))]
                    }
                    App::Text { .. } => vec![child("/terminal".to_string())],
                    App::WrongRole | App::Silent => vec![child("/n/1".to_string())],
                };
                connection.reply(&header, &children).await
            }
            "GetRole" => {
                asked.roles.fetch_add(1, Ordering::SeqCst);
                let depth = at.strip_prefix("/n/").and_then(|d| d.parse().ok());
                match app {
                    App::Silent => continue,
                    App::WrongRole => connection.reply(&header, &"terminal").await,
                    App::TerminalAt(deep) if depth == Some(deep) => {
                        connection.reply(&header, &ROLE_TERMINAL).await
                    }
                    App::Text { .. } if at == "/terminal" => {
                        connection.reply(&header, &ROLE_TERMINAL).await
                    }
                    _ => connection.reply(&header, &ROLE_FILLER).await,
                }
            }
            "GetState" => connection.reply(&header, &vec![0u32, 0u32]).await,
            "Get" => {
                let (_, property): (String, String) = call.body().deserialize().unwrap();
                let value = match (property.as_str(), app) {
                    ("CharacterCount", App::Text { count, .. }) => Value::from(count),
                    ("CharacterCount", _) => Value::from(2i32),
                    _ => Value::from(""),
                };
                connection.reply(&header, &value).await
            }
            "GetAll" => {
                let none: std::collections::HashMap<String, OwnedValue> = Default::default();
                connection.reply(&header, &none).await
            }
            "GetText" => {
                let (start, end): (i32, i32) = call.body().deserialize().unwrap();
                asked.texts.lock().unwrap().push((start, end));
                let text = match app {
                    App::Text { length, .. } => "x".repeat(length),
                    _ => "ok".to_string(),
                };
                connection.reply(&header, &text).await
            }
            _ => {
                connection
                    .reply_error(&header, "org.freedesktop.DBus.Error.UnknownMethod", &member)
                    .await
            }
        };
        if replied.is_err() {
            break;
        }
    }
}

// See: issue 23 ("the same budgets as the other backends"): a walk never looks at more than
// MOST_NODES objects, however many an application offers.
#[test]
#[ignore = "slow tier: needs dbus-daemon"]
fn an_endless_tree_is_walked_no_further_than_its_bound() {
    let _one = super::one_bus_test_at_a_time();
    let app = StandIn::start(App::Endless);
    // About 8 s of a debug build on an idle machine; on a starved one the deadline may come
    // first, and the walk must have stayed within its bound all the same.
    match app.read(Duration::from_secs(60)) {
        Err(Unread::NoTerminals) => assert_eq!(app.roles_asked(), MOST_NODES),
        Err(Unread::TimedOut(_)) => assert!(app.roles_asked() <= MOST_NODES),
        other => panic!("an endless tree read as {other:?}"),
    }
}

#[test]
#[ignore = "slow tier: needs dbus-daemon"]
fn a_tree_that_loops_back_is_walked_once() {
    let app = StandIn::start(App::Loop);
    assert_eq!(app.read(Duration::from_secs(10)), Err(Unread::NoTerminals));
    // The application and its one child, each once.
    assert_eq!(app.roles_asked(), 2);
}

#[test]
#[ignore = "slow tier: needs dbus-daemon"]
fn a_terminal_deeper_than_the_bound_is_not_looked_for() {
    // The deepest a walk goes: found, its text read.
    let app = StandIn::start(App::TerminalAt(MOST_DEPTH));
    let tabs = app.read(Duration::from_secs(10)).expect("read");
    assert_eq!(tabs.len(), 1);
    assert_eq!(tabs[0].text, "ok");
    // One level deeper: not found, and nothing below the bound asked.
    let app = StandIn::start(App::TerminalAt(MOST_DEPTH + 1));
    assert_eq!(app.read(Duration::from_secs(10)), Err(Unread::NoTerminals));
    assert_eq!(app.roles_asked(), MOST_DEPTH + 1);
}

#[test]
#[ignore = "slow tier: needs dbus-daemon"]
fn a_huge_text_is_cut_and_a_negative_count_reads_nothing() {
    // A count of i32::MAX: only the last MOST_TEXT characters are asked for, and an answer of a
    // million characters is cut to that many.
    let app = StandIn::start(App::Text {
        count: i32::MAX,
        length: 1_000_000,
    });
    let tabs = app.read(Duration::from_secs(10)).expect("read");
    assert_eq!(tabs.len(), 1);
    assert_eq!(tabs[0].text.chars().count(), MOST_TEXT as usize);
    assert_eq!(
        *app.asked.texts.lock().unwrap(),
        vec![(i32::MAX - MOST_TEXT, i32::MAX)]
    );
    // A negative count: an empty screen, and no text asked for.
    let app = StandIn::start(App::Text {
        count: -5,
        length: 10,
    });
    let tabs = app.read(Duration::from_secs(10)).expect("read");
    assert_eq!(tabs[0].text, "");
    assert!(app.asked.texts.lock().unwrap().is_empty());
}

#[test]
#[ignore = "slow tier: needs dbus-daemon"]
fn a_wrong_answer_or_none_is_a_failure_with_its_reason() {
    let app = StandIn::start(App::WrongRole);
    match app.read(Duration::from_secs(10)) {
        Err(Unread::Failed(why)) => assert!(!why.is_empty()),
        other => panic!("a role of the wrong type read as {other:?}"),
    }
    let app = StandIn::start(App::Silent);
    let deadline = Duration::from_secs(2);
    assert_eq!(app.read(deadline), Err(Unread::TimedOut(deadline)));
    // Asked once, never again after it did not answer.
    assert_eq!(app.roles_asked(), 1);
}
