//! The API and the command line over the stand-in: the API answers the dialog it serves and
//! refuses with the contract's codes, an answer whose client went away is carried out and
//! recorded all the same, and the command line shows the dialog, answers it and says why not by
//! its exit status.

use slate::agents::keys::Action;

use std::time::{Duration, Instant};

use slate::answers::{ErrorCode, RespondRequest, Surface};

use crate::util::needs;

use axum::http::StatusCode;

use crate::api::{call, json, serve_on_free_port, slate, TOKEN};

use super::{
    dialog_about_call, print_of, print_with, respond_request, wait_session, StandIn, SESSION_ID,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow tier: needs tmux"]
async fn the_api_answers_the_dialog_it_serves_and_refuses_with_the_contracts_codes() {
    needs(&["tmux"]);
    let stand_in = StandIn::start("react");
    let (handle, thread) = stand_in.service();
    let permission = print_of("permission-touch.txt");
    let session = tokio::task::spawn_blocking({
        let handle = handle.clone();
        move || wait_session(&handle, "the dialog on the session", |s| s.dialog.is_some())
    })
    .await
    .unwrap();
    // The session object carries the dialog: its options with what Slate offers, and the
    // fingerprint of what the screen shows.
    let dialog = session.dialog.clone().unwrap();
    assert_eq!(dialog.summary, "Run: touch x.txt");
    assert_eq!(dialog.fingerprint, permission);
    assert!(dialog.answerable);
    let actions: Vec<Option<Action>> = dialog.options.iter().map(|o| o.action).collect();
    assert_eq!(
        actions,
        vec![Some(Action::Approve), None, Some(Action::Deny)]
    );
    let wire = serde_json::to_value(&session).unwrap();
    assert_eq!(
        wire["dialog"]["options"][1]["action"],
        serde_json::Value::Null
    );
    assert_eq!(wire["dialog"]["options"][0]["number"], 1);

    let approve = format!(r#"{{"action":"approve","dialog":"{permission}"}}"#);
    let code = |body: &str| {
        json(body)["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    // 401 without the token, 400 for a malformed body, 404 for an unknown session.
    let (status, _) = call(&handle, respond_request(SESSION_ID, None, &approve)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, body) = call(
        &handle,
        respond_request(SESSION_ID, Some(TOKEN), "{\"action\":"),
    )
    .await;
    assert_eq!(
        (status, code(&body).as_str()),
        (StatusCode::BAD_REQUEST, "bad_request")
    );
    let with_option = format!(r#"{{"action":"approve","option":1,"dialog":"{permission}"}}"#);
    let (status, body) = call(
        &handle,
        respond_request(SESSION_ID, Some(TOKEN), &with_option),
    )
    .await;
    assert_eq!(
        (status, code(&body).as_str()),
        (StatusCode::BAD_REQUEST, "bad_request")
    );
    let (status, body) = call(
        &handle,
        respond_request(
            "ffffffff-0000-4000-8000-00000000dead",
            Some(TOKEN),
            &approve,
        ),
    )
    .await;
    assert_eq!(
        (status, code(&body).as_str()),
        (StatusCode::NOT_FOUND, "unknown_session")
    );
    // 422 for an option that widens, 409 for a fingerprint the screen does not show.
    let widening = format!(r#"{{"action":"answer","option":2,"dialog":"{permission}"}}"#);
    let (status, body) = call(&handle, respond_request(SESSION_ID, Some(TOKEN), &widening)).await;
    assert_eq!(
        (status, code(&body).as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, "not_offered")
    );
    let other = print_of("question.txt");
    let changed = format!(r#"{{"action":"approve","dialog":"{other}","surface":"window"}}"#);
    let (status, body) = call(&handle, respond_request(SESSION_ID, Some(TOKEN), &changed)).await;
    assert_eq!(
        (status, code(&body).as_str()),
        (StatusCode::CONFLICT, "dialog_changed")
    );
    assert_eq!(stand_in.keys(), "", "nothing is typed for a refusal");

    // 200: delivered, and the dialog left.
    let (status, body) = call(
        &handle,
        respond_request(&SESSION_ID[..8], Some(TOKEN), &approve),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let answered = json(&body);
    assert_eq!(answered["outcome"], "answered");
    assert_eq!(answered["action"], "approve");
    assert_eq!(answered["option"], 1);
    assert!(answered["left_after_ms"].as_u64().unwrap() < 5000);
    assert_eq!(stand_in.keys(), "1");
    stand_in.wait_showing("working-sleep.txt");
    // 409 now that it works.
    let (status, body) = call(&handle, respond_request(SESSION_ID, Some(TOKEN), &approve)).await;
    assert_eq!(
        (status, code(&body).as_str()),
        (StatusCode::CONFLICT, "not_at_dialog")
    );
    assert_eq!(stand_in.keys(), "");

    // Every attempt is recorded, with its surface and outcome, and the session's details list
    // them.
    let detail = handle.session(SESSION_ID).unwrap();
    let outcomes: Vec<(&str, &str)> = detail
        .answers
        .iter()
        .map(|answer| (answer.surface.as_str(), answer.outcome.as_str()))
        .collect();
    assert_eq!(
        outcomes,
        vec![
            ("api", "not_at_dialog"),
            ("api", "answered"),
            ("window", "dialog_changed"),
            ("api", "not_offered"),
        ],
        "newest first"
    );
    assert_eq!(detail.answers[1].fingerprint, permission);
    assert_eq!(
        detail.answers[1].summary.as_deref(),
        Some("Run: touch x.txt")
    );

    // The client: the same endpoint over a real port, with the token, and without the right one.
    // The dialog answered a moment ago, drawn again, is not answered twice (a double click).
    // (The answer is aimed at the call the session's dialog names, so wait for the service to
    // read a dialog.)
    stand_in.show("permission-touch.txt");
    tokio::task::spawn_blocking({
        let handle = handle.clone();
        move || wait_session(&handle, "the dialog drawn again", |s| s.dialog.is_some())
    })
    .await
    .unwrap();
    let (status, body) = call(&handle, respond_request(SESSION_ID, Some(TOKEN), &approve)).await;
    assert_eq!(
        (status, code(&body).as_str()),
        (StatusCode::CONFLICT, "already_answered")
    );
    assert_eq!(stand_in.keys(), "");
    // Another call, and its dialog: the session's dialog is about that call now.
    let narrow = stand_in.add_call("call_2", "touch narrow.txt");
    stand_in.show("permission-touch-80x24.txt");
    dialog_about_call(&handle, "call_2").await;
    let (address, stop, server) = serve_on_free_port(&handle).await;
    let client = slate::client::Client::new(address, Some(TOKEN.to_string()));
    let deny = RespondRequest {
        action: Action::Deny,
        option: None,
        text: None,
        dialog: print_with("permission-touch-80x24.txt", &narrow),
        surface: Some(Surface::Tray),
    };
    let responded = tokio::task::spawn_blocking({
        let (client, deny) = (client.clone(), deny.clone());
        move || {
            // The screen is read again by the server; wait until its reading has the dialog.
            std::thread::sleep(Duration::from_millis(200));
            client.respond(SESSION_ID, &deny)
        }
    })
    .await
    .unwrap();
    assert_eq!(responded.expect("deny through the client").option, Some(3));
    assert_eq!(stand_in.keys(), "\u{1b}");
    let stranger = slate::client::Client::new(address, Some("f".repeat(64)));
    let refused = tokio::task::spawn_blocking(move || stranger.respond(SESSION_ID, &deny))
        .await
        .unwrap();
    assert_eq!(refused.unwrap_err().code, ErrorCode::Unauthorized);
    let _ = stop.send(());
    let _ = server.await;
    handle.shutdown();
    thread.join().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow tier: needs tmux"]
async fn an_answer_whose_client_went_away_is_carried_out_and_recorded_all_the_same() {
    needs(&["tmux"]);
    use tokio::io::AsyncWriteExt;
    // The stand-in ignores the keys, so the server waits its full five seconds for the dialog.
    let stand_in = StandIn::start("ignore");
    let (handle, thread) = stand_in.service();
    let permission = print_of("permission-touch.txt");
    tokio::task::spawn_blocking({
        let handle = handle.clone();
        move || wait_session(&handle, "the dialog on the session", |s| s.dialog.is_some())
    })
    .await
    .unwrap();
    let (address, stop, server) = serve_on_free_port(&handle).await;
    let body = format!(r#"{{"action":"approve","dialog":"{permission}"}}"#);
    let mut client = tokio::net::TcpStream::connect(address).await.unwrap();
    let head = format!(
        "POST /sessions/{SESSION_ID}/respond HTTP/1.1\r\nHost: {address}\r\nAuthorization: \
         Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    client.write_all(head.as_bytes()).await.unwrap();
    client.write_all(body.as_bytes()).await.unwrap();
    // The client goes away while the server waits for the dialog to leave.
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(client);
    let recorded = tokio::task::spawn_blocking({
        let handle = handle.clone();
        move || {
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                let answers = handle.session(SESSION_ID).unwrap().answers;
                if !answers.is_empty() {
                    return answers;
                }
                assert!(Instant::now() < deadline, "the answer was never recorded");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(recorded[0].outcome, "no_effect");
    assert_eq!(stand_in.keys(), "1", "typed once, never again");
    let _ = stop.send(());
    let _ = server.await;
    handle.shutdown();
    thread.join().unwrap();
}

#[test]
#[ignore = "slow tier: needs tmux"]
fn the_command_line_shows_the_dialog_answers_it_and_says_why_not_by_its_exit_status() {
    needs(&["tmux"]);
    let stand_in = StandIn::start("react");
    let cli = |args: &[&str]| {
        let mut command = slate(&stand_in.home, args);
        command
            .env("SLATE_STANDALONE", "1")
            .stdin(std::process::Stdio::null());
        command.output().unwrap()
    };
    // An option that widens: exit 7, nothing typed.
    let widening = cli(&["answer", &SESSION_ID[..8], "2", "--yes"]);
    assert_eq!(widening.status.code(), Some(7), "{widening:?}");
    let said = String::from_utf8_lossy(&widening.stderr);
    assert!(said.contains("widens"), "{said}");
    assert_eq!(stand_in.keys(), "");

    // On a terminal (util-linux `script` gives the command one), it asks; "n" answers nothing.
    let slate_line = format!(
        "'{}' approve {}",
        env!("CARGO_BIN_EXE_slate"),
        &SESSION_ID[..8]
    );
    let mut asked = std::process::Command::new("script");
    for (name, value) in slate(&stand_in.home, &[]).get_envs() {
        match value {
            Some(value) => asked.env(name, value),
            None => asked.env_remove(name),
        };
    }
    let mut child = asked
        .env("SLATE_STANDALONE", "1")
        .args(["-qec", &slate_line, "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        // The answer waits in the terminal's input until the question reads it.
        stdin.write_all(b"n\n").unwrap();
    }
    let declined = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&declined.stdout);
    assert_eq!(declined.status.code(), Some(8), "{said}");
    assert!(said.contains("Answer it? [y/N]"), "{said}");
    assert!(said.contains("not answered"), "{said}");
    assert_eq!(stand_in.keys(), "");

    // Standard input not a terminal, and no `--yes`: nobody confirmed, so nothing is answered
    // (`echo y | slate approve` is no confirmation); exit 8, and it says how to confirm.
    let unasked = cli(&["approve", &SESSION_ID[..8]]);
    assert_eq!(unasked.status.code(), Some(8), "{unasked:?}");
    let said = String::from_utf8_lossy(&unasked.stderr);
    assert!(said.contains("--yes"), "{said}");
    assert_eq!(stand_in.keys(), "");

    // Approve with `--yes`: no question, the dialog shown, exit 0.
    let approved = cli(&["approve", &SESSION_ID[..8], "--yes"]);
    let out = String::from_utf8_lossy(&approved.stdout);
    assert_eq!(approved.status.code(), Some(0), "{approved:?}");
    assert!(out.contains("Run: touch x.txt"), "{out}");
    assert!(out.contains("1. Yes, proceed (y)  [approve]"), "{out}");
    assert!(out.contains("stays in the terminal"), "{out}");
    assert!(out.contains("answered: approve (option 1)"), "{out}");
    assert!(!String::from_utf8_lossy(&approved.stderr).contains("[y/N]"));
    assert_eq!(stand_in.keys(), "1");
    stand_in.wait_showing("working-sleep.txt");

    // Working now: exit 3, nothing typed.
    let working = cli(&["approve", &SESSION_ID[..8], "--json", "--yes"]);
    assert_eq!(working.status.code(), Some(3), "{working:?}");
    let body = json(&String::from_utf8_lossy(&working.stdout));
    assert_eq!(body["error"]["code"], "not_at_dialog");
    assert_eq!(stand_in.keys(), "");

    // `slate show` lists the answers with the transitions.
    let show = cli(&["show", &SESSION_ID[..8]]);
    let out = String::from_utf8_lossy(&show.stdout);
    assert!(out.contains("history:"), "{out}");
    assert!(
        out.contains("answer approve to Run: touch x.txt from the cli: answered"),
        "{out}"
    );
    assert!(
        out.contains("answer answer 2 to Run: touch x.txt from the cli: not_offered"),
        "{out}"
    );
    let show = cli(&["show", &SESSION_ID[..8], "--json"]);
    let body = json(&String::from_utf8_lossy(&show.stdout));
    // Newest first: the refusal at the working screen is recorded too.
    let outcomes: Vec<&str> = body["session"]["answers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|answer| answer["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["not_at_dialog", "answered", "not_offered"]);
    assert_eq!(body["session"]["answers"][1]["surface"], "cli");

    // The dialog just approved, drawn again: answered once already, so refused (exit 9), and
    // nothing typed.
    stand_in.show("permission-touch.txt");
    let again = cli(&["deny", &SESSION_ID[..8], "--json", "--yes"]);
    assert_eq!(again.status.code(), Some(9), "{again:?}");
    let body = json(&String::from_utf8_lossy(&again.stdout));
    assert_eq!(body["error"]["code"], "already_answered");
    assert_eq!(stand_in.keys(), "");

    // Deny another dialog, about another call, as JSON.
    stand_in.add_call("call_2", "touch narrow.txt");
    stand_in.show("permission-touch-80x24.txt");
    let denied = cli(&["deny", &SESSION_ID[..8], "--json", "--yes"]);
    assert_eq!(denied.status.code(), Some(0), "{denied:?}");
    let body = json(&String::from_utf8_lossy(&denied.stdout));
    assert_eq!(body["outcome"], "answered");
    assert_eq!(body["dialog"]["summary"], "Run: touch narrow.txt");
    assert_eq!(stand_in.keys(), "\u{1b}");
}
