//! A real server on port 0: an appended turn end reaches the event stream once, `slate serve`
//! prints its port, refuses a second and stops on SIGTERM, refuses while the app serves, and
//! `slate watch` follows a running server or runs its own engine when none answers.

use std::io::Write;
use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

use slate::api::{self, Security};
use slate::client::Client;
use slate::live;

use crate::util::{transcript_path, working_transcript, SESSION};

use super::{
    finish_turn, follow_events, give_token, json, security, serve_on_free_port, slate, started,
    write_table, Running, TOKEN,
};

/// The "done when": an appended finished turn reaches the stream as exactly one
/// `session` event with status `waiting`, within a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_appended_turn_end_reaches_the_stream_once() {
    let (temp, handle, thread) = started();
    let (address, stop, server) = serve_on_free_port(&handle).await;

    let events = tokio::task::spawn_blocking(move || follow_events(address))
        .await
        .unwrap();
    let first = events.recv_timeout(Duration::from_secs(2)).unwrap();
    assert_eq!(first.event, "snapshot");
    let snapshot = json(&first.data);
    assert_eq!(snapshot["sessions"][0]["status"], "working", "{snapshot}");

    finish_turn(&transcript_path(temp.path()));
    let event = events.recv_timeout(Duration::from_secs(1)).unwrap();
    assert_eq!(event.event, "session");
    let session = json(&event.data);
    assert_eq!(session["id"], SESSION);
    assert_eq!(session["status"], "waiting");
    assert_eq!(session["session_state"]["reason"]["code"], "turn_finished");
    // Exactly one: nothing else arrives while nothing else happens.
    let more = events.recv_timeout(Duration::from_millis(700));
    assert!(more.is_err(), "a second event arrived: {more:?}");

    // Shutting down ends the open stream, so the server stops.
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("the server stops with a stream open")
        .unwrap()
        .unwrap();
    handle.shutdown();
    thread.join().unwrap();
}

#[cfg(unix)]
#[test]
fn serve_prints_its_port_refuses_a_second_and_stops_on_sigterm() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    working_transcript(home, live::system_clock());
    let table = write_table(home);
    let table = table.to_str().unwrap();

    let first = Running::spawn(slate(
        home,
        &["serve", "--listen", "127.0.0.1:0", "--processes", table],
    ));
    let announced = first.line();
    let port: u16 = announced
        .strip_prefix("listening on http://127.0.0.1:")
        .unwrap_or_else(|| panic!("unexpected first line {announced:?}"))
        .parse()
        .unwrap();
    let address: SocketAddr = ([127, 0, 0, 1], port).into();
    assert!(Client::new(address, None).probe(Duration::from_secs(2)));

    // The token was created, owner-only.
    let token_file = home.join(".config/slate/token");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // One engine per user: a second `slate serve` of the same HOME names the first and does not
    // start, with the status the user unit does not restart on.
    let listen = format!("127.0.0.1:{port}");
    let second = slate(home, &["serve", "--listen", &listen, "--processes", table])
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(3));
    let message = String::from_utf8_lossy(&second.stderr);
    assert_eq!(
        message.trim_end(),
        format!(
            "slate: another `slate serve` already serves on {listen} (pid {}); it is this \
             user's engine, so this one does not start",
            first.child.id()
        )
    );

    let refused = slate(home, &["serve", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not a loopback address"));

    let killed = Command::new("kill")
        .args(["-TERM", &first.child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert!(first.wait().success(), "serve exits cleanly on SIGTERM");
}

/// One engine per user, the other way round: while the desktop app serves this HOME's API on the
/// port, `slate serve` does not start, names the app and its process, and exits with 3 (which
/// the user unit does not restart on). A Slate that holds another token is another user's, and
/// a program that is not a Slate is neither: both are plain errors that suggest a free port.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_refuses_to_start_while_the_app_serves_and_names_it() {
    let (temp, handle, _thread) = started();
    let home = temp.path();
    give_token(home, TOKEN);
    // The app's server: this process, saying it is the app.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let app = Security {
        kind: slate::model::ServerKind::App,
        ..security(address.port())
    };
    let server = tokio::spawn(api::serve(listener, handle.clone(), app, async move {
        let _ = stopped.await;
    }));
    let (status, body) = call_health(address).await;
    assert_eq!(status, 200);
    assert_eq!(body["kind"], "app");

    let listen = address.to_string();
    let mut command = slate(home, &["serve", "--listen", &listen]);
    let refused = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(refused.status.code(), Some(3), "{refused:?}");
    assert!(refused.stdout.is_empty(), "it never listened");
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim_end(),
        format!(
            "slate: the Slate app already serves on {listen} (pid {}); it is this user's \
             engine, so this one does not start",
            std::process::id()
        )
    );

    // Another HOME's `slate serve` finds a Slate whose token is not its own.
    let other = tempfile::tempdir().unwrap();
    give_token(other.path(), &"f".repeat(64));
    let mut command = slate(other.path(), &["serve", "--listen", &listen]);
    let foreign = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(foreign.status.code(), Some(1));
    let message = String::from_utf8_lossy(&foreign.stderr);
    assert!(
        message.contains("is held by another user's or HOME's Slate (its token differs)")
            && message.contains("--listen 127.0.0.1:0"),
        "{message}"
    );
    let _ = stop.send(());
    server.await.unwrap().unwrap();

    // A program that is not a Slate: it answers every request with 404.
    let stranger = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let listen = stranger.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in stranger.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut request = [0u8; 1024];
            let _ = std::io::Read::read(&mut stream, &mut request);
            let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let mut command = slate(home, &["serve", "--listen", &listen]);
    let taken = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(taken.status.code(), Some(1));
    let message = String::from_utf8_lossy(&taken.stderr);
    assert!(
        message.contains("is already in use on 127.0.0.1 by a program that is not a Slate"),
        "{message}"
    );
}

/// `GET /health` over HTTP, with the test token: the status and the JSON.
async fn call_health(address: SocketAddr) -> (u16, serde_json::Value) {
    tokio::task::spawn_blocking(move || {
        let client = Client::new(address, Some(TOKEN.to_string()));
        match client.get_json::<serde_json::Value>("/health") {
            Ok(body) => (200, body),
            Err(slate::client::ClientError::Status { status, .. }) => (status, json("null")),
            Err(err) => panic!("{err}"),
        }
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_follows_a_running_server() {
    let (temp, handle, thread) = started();
    let (address, stop, server) = serve_on_free_port(&handle).await;
    // The watcher's own HOME has no transcripts, only the server's token: everything it prints
    // comes from the server.
    let own = tempfile::tempdir().unwrap();
    give_token(own.path(), TOKEN);
    let listen = address.to_string();
    let watch = Running::spawn(slate(own.path(), &["watch", "--json", "--listen", &listen]));
    let first = tokio::task::spawn_blocking({
        let lines = watch.lines.recv_timeout(Duration::from_secs(10));
        move || lines
    })
    .await
    .unwrap()
    .expect("a first line");
    let snapshot = json(&first);
    assert_eq!(snapshot["type"], "snapshot");
    assert_eq!(snapshot["sessions"][0]["id"], SESSION, "{first}");

    finish_turn(&transcript_path(temp.path()));
    let next = json(&watch.line());
    assert_eq!(next["type"], "session");
    assert_eq!(next["session"]["status"], "waiting");
    drop(watch);

    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(5), server).await;
    handle.shutdown();
    thread.join().unwrap();
}

#[test]
fn watch_runs_its_own_engine_when_no_server_answers() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    working_transcript(home, live::system_clock());
    let table = write_table(home);
    // A port nobody listens on: bound, then freed.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let listen = free.local_addr().unwrap().to_string();
    drop(free);

    let watch = Running::spawn(slate(
        home,
        &[
            "watch",
            "--listen",
            &listen,
            "--processes",
            table.to_str().unwrap(),
        ],
    ));
    let first = watch.line();
    assert!(
        first.contains("Working") && first.contains("Claude Code") && first.contains("acme"),
        "{first}"
    );
    finish_turn(&transcript_path(home));
    let next = watch.line();
    assert!(next.contains("Needs you"), "{next}");
}
