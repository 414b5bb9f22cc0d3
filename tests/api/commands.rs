//! The command line against a running server: `slate sessions` reads it (a claimed closed session
//! included), every command answers from it, and a broken config stops a command with the file and
//! the key.

use std::path::Path;
use std::time::Duration;

use slate::engine::ProcessSource;
use slate::live::{self, Handle};

use crate::util::{claude_process_table, working_transcript, SESSION};

use super::{
    give_token, json, point_at, serve_on_free_port, service, slate, started, OLD_SESSION, TOKEN,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slate_sessions_reads_a_running_server() {
    let (_temp, handle, thread) = started();
    report_hosted(&handle).await;
    let (address, stop, server) = serve_on_free_port(&handle).await;
    // An empty HOME whose config points at that server, with its token: on its own,
    // `slate sessions` would list nothing.
    let home = tempfile::tempdir().unwrap();
    point_at(home.path(), address);
    let home_path = home.path().to_path_buf();
    let run = move |extra: &[(&str, &str)]| {
        let mut command = slate(&home_path, &["sessions", "--json"]);
        for (name, value) in extra {
            command.env(name, value);
        }
        command.output().unwrap()
    };
    let output = tokio::task::spawn_blocking(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let output = run(&[]);
            let body = json(&String::from_utf8_lossy(&output.stdout));
            if body["sessions"][0]["hosted"] == true || std::time::Instant::now() > deadline {
                return (
                    body,
                    json(&String::from_utf8_lossy(
                        &run(&[("SLATE_STANDALONE", "1")]).stdout,
                    )),
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    })
    .await
    .unwrap();
    let (from_server, standalone) = output;
    assert_eq!(from_server["sessions"][0]["id"], SESSION, "{from_server}");
    assert_eq!(from_server["sessions"][0]["hosted"], true, "{from_server}");
    assert_eq!(
        standalone["sessions"],
        serde_json::json!([]),
        "{standalone}"
    );
    // With no config at all, `SLATE_API` names the server, as it does for `slate run`.
    let bare = tempfile::tempdir().unwrap();
    give_token(bare.path(), TOKEN);
    let bare_path = bare.path().to_path_buf();
    let through_variable = tokio::task::spawn_blocking(move || {
        let output = slate(&bare_path, &["sessions", "--json"])
            .env("SLATE_API", format!("http://{address}"))
            .output()
            .unwrap();
        json(&String::from_utf8_lossy(&output.stdout))
    })
    .await
    .unwrap();
    assert_eq!(
        through_variable["sessions"][0]["hosted"], true,
        "{through_variable}"
    );
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    handle.shutdown();
    thread.join().unwrap();
}

/// Reports a hosted terminal for the live session's process, the way `slate run` does, and waits
/// until the session reads hosted: what only the running engine knows.
async fn report_hosted(handle: &Handle) {
    let pid = handle.live_sessions()[0]
        .pid
        .expect("the recorded process vouches");
    handle.send(live::Event::HostedProcess {
        pid,
        signals: slate::model::HostedSignals::default(),
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !handle.live_sessions()[0].hosted {
        assert!(
            std::time::Instant::now() < deadline,
            "the report never landed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Runs `slate args…` over `home` on a blocking thread and reads its JSON.
async fn slate_json(home: &Path, args: &[&str]) -> serde_json::Value {
    let mut command = slate(home, args);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    json(&String::from_utf8_lossy(&output.stdout))
}

/// With a server running, `slate sessions --all` and `slate show` read a live session as the
/// server decided it (here: hosted, which only the running engine knows), and add the closed
/// history this process reads. They once scanned on their own, so the same session read
/// differently there and in `slate sessions`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_answers_from_the_running_server() {
    let (temp, handle, thread) = started();
    report_hosted(&handle).await;
    let (address, stop, server) = serve_on_free_port(&handle).await;
    // The same HOME: this process reads the same transcripts, but sees no live `claude`.
    point_at(temp.path(), address);

    let standalone = {
        let mut command = slate(temp.path(), &["sessions", "--json", "--all"]);
        command.env("SLATE_STANDALONE", "1");
        let output = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        json(&String::from_utf8_lossy(&output.stdout))
    };
    let mine = |body: &serde_json::Value, id: &str| -> Vec<serde_json::Value> {
        body["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|session| session["id"] == id)
            .cloned()
            .collect()
    };
    assert_eq!(
        mine(&standalone, SESSION)[0]["hosted"],
        false,
        "on its own, this process cannot know the session is hosted"
    );

    let all = slate_json(temp.path(), &["sessions", "--json", "--all"]).await;
    let live = mine(&all, SESSION);
    assert_eq!(live.len(), 1, "listed once: {all}");
    assert_eq!(live[0]["hosted"], true, "{all}");
    assert_eq!(live[0]["status"], "working", "{all}");
    let old = mine(&all, OLD_SESSION);
    assert_eq!(old.len(), 1, "the closed history is added: {all}");
    assert_eq!(old[0]["status"], "ended");

    let listed = slate_json(temp.path(), &["sessions", "--json"]).await;
    assert_eq!(mine(&listed, SESSION)[0], live[0], "both commands agree");

    let shown = slate_json(temp.path(), &["show", &SESSION[..8], "--json"]).await;
    assert_eq!(shown["session"]["id"], SESSION);
    assert_eq!(shown["session"]["hosted"], true, "{shown}");
    assert!(shown["session"]["evidence"].is_array(), "{shown}");
    let closed = slate_json(temp.path(), &["show", OLD_SESSION, "--json"]).await;
    assert_eq!(closed["session"]["status"], "ended", "{closed}");

    let _ = stop.send(());
    server.await.unwrap().unwrap();
    handle.shutdown();
    thread.join().unwrap();
}

/// With a server running, `slate sessions` lists a closed session that holds a work claim, as
/// the command line on its own does; the server once dropped every closed session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slate_sessions_lists_a_claimed_closed_session_from_the_server() {
    use slate::store;
    use std::sync::{Arc, Mutex};

    let temp = tempfile::tempdir().unwrap();
    let now = live::system_clock();
    working_transcript(temp.path(), now);
    let store = store::open(&temp.path().join("data/slate.db")).unwrap();
    crate::util::claim_docs(&store, now);
    let table = Arc::new(Mutex::new(claude_process_table(
        now.minus(Duration::from_secs(60)),
    )));
    let mut service = service(temp.path());
    service.options.processes = ProcessSource::Shared(Arc::clone(&table));
    service.store = Some(store);
    let (handle, thread) = live::start(service);
    // The session's process exits.
    table.lock().unwrap().processes.clear();
    handle.refresh_and_wait().await;
    let (address, stop, server) = serve_on_free_port(&handle).await;

    let home = tempfile::tempdir().unwrap();
    point_at(home.path(), address);
    let listed = slate_json(home.path(), &["sessions", "--json"]).await;
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{listed}");
    assert_eq!(sessions[0]["id"], SESSION);
    assert_eq!(sessions[0]["status"], "ended");
    assert_eq!(
        sessions[0]["session_state"]["custody"]["holds_work_claim"],
        true
    );

    let _ = stop.send(());
    server.await.unwrap().unwrap();
    handle.shutdown();
    thread.join().unwrap();
}

/// A config file that does not parse stops a command with an error naming the file, the line and
/// the key, and a non-zero exit; `slate run` says so and runs the program anyway.
#[test]
fn a_broken_config_stops_a_command_with_the_file_and_the_key() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let config = home.join(".config/slate/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "[project-policy]\nsesion_idle_minutes = 20\n").unwrap();

    for args in [&["sessions"][..], &["item", "list"], &["serve"]] {
        let output = slate(home, args).output().unwrap();
        assert!(!output.status.success(), "{args:?} must fail");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&config.display().to_string()),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("line 2"), "{args:?}: {stderr}");
        assert!(
            stderr.contains("key `sesion_idle_minutes`"),
            "{args:?}: {stderr}"
        );
    }
    let output = slate(home, &["run", "--", "sh", "-c", "exit 3"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "the program ran");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("sesion_idle_minutes"),
        "and the error was said"
    );
}
