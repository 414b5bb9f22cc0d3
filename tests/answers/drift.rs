//! A dialog drawn in a format Slate does not know (the stand-in draws Codex's recorded dialog
//! with every text its grammar knows reworded, as a newer Codex might): the running Slate counts
//! the screen once it has stayed, `slate show` says the format may have changed, `slate doctor`
//! counts it and `slate doctor --sample` writes its redacted copy, both from the running Slate,
//! and nothing is typed into it.

use std::time::Duration;

use slate::agents::keys::Action;
use slate::agents::screens::{self, Screen};
use slate::answers::ErrorCode;
use slate::model::AgentKind;

use crate::api::{give_token, serve_on_free_port, slate, TOKEN};
use crate::util::needs;

use super::{print_of, request, screen, wait_session, StandIn, SESSION_ID};

/// Codex's recorded permission dialog with every text its grammar knows worded anew.
fn drifted_dialog() -> String {
    let text = std::fs::read_to_string(screen("permission-touch.txt")).unwrap();
    let text = crate::util::reworded(AgentKind::CODEX, &text);
    assert_eq!(
        screens::read_screen(AgentKind::CODEX, &text),
        Screen::Unknown
    );
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow tier: needs tmux"]
async fn a_dialog_in_a_format_slate_does_not_know_is_counted_sampled_and_never_answered() {
    needs(&["tmux"]);
    let stand_in = StandIn::start("react");
    let (handle, thread) = stand_in.service();
    tokio::task::spawn_blocking({
        let handle = handle.clone();
        move || wait_session(&handle, "the recorded dialog", |s| s.dialog.is_some())
    })
    .await
    .unwrap();

    let drifted = stand_in.temp.path().join("drifted.txt");
    std::fs::write(&drifted, drifted_dialog()).unwrap();
    stand_in.show_path(&drifted);
    let session = tokio::task::spawn_blocking({
        let handle = handle.clone();
        move || {
            wait_session(&handle, "the unknown screen counted", |s| {
                s.unread.as_ref().is_some_and(|unread| unread.screens > 0)
            })
        }
    })
    .await
    .unwrap();
    assert_eq!(session.dialog, None, "no dialog is read from it");
    let unread = session.unread.expect("counted");
    assert_eq!((unread.records, unread.screens), (0, 1));
    // The copy keeps the frames and the marks; the new words are letters replaced.
    assert!(unread.samples[0].contains("(xxxxxx xxxx)"), "{unread:?}");
    assert!(!unread.samples[0].contains("touch"), "{unread:?}");

    // Nothing is typed into a screen that shows no dialog Slate knows.
    let attempt = stand_in.answer(&request(
        Action::Approve,
        None,
        &print_of("permission-touch.txt"),
    ));
    let error = attempt.result.expect_err("nothing to answer");
    assert!(
        matches!(
            error.code,
            ErrorCode::NotAtDialog | ErrorCode::DialogChanged
        ),
        "{error}"
    );
    assert_eq!(stand_in.keys(), "");

    // The same stay is counted once, however long it lasts.
    tokio::time::sleep(Duration::from_secs(7)).await;
    let session = handle
        .live_sessions()
        .into_iter()
        .find(|session| session.id.as_str() == SESSION_ID)
        .expect("still live");
    assert_eq!(session.unread.map(|unread| unread.screens), Some(1));

    // The command line asks the running Slate, which has watched the screen.
    let (address, stop, server) = serve_on_free_port(&handle).await;
    give_token(&stand_in.home, TOKEN);
    // each command runs off the runtime, which serves its requests meanwhile
    let run = |args: &[&str]| {
        let mut command = slate(&stand_in.home, args);
        command
            .env("SLATE_API", format!("http://{address}"))
            .current_dir(stand_in.temp.path());
        tokio::task::spawn_blocking(move || command.output().unwrap())
    };
    let shown = run(&["show", &SESSION_ID[..8]]).await.unwrap();
    let out = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.status.success(), "{shown:?}");
    assert!(
        out.contains("its format may have changed: 1 screen Slate could not read"),
        "{out}"
    );
    let doctor = run(&["doctor"]).await.unwrap();
    let said = String::from_utf8_lossy(&doctor.stdout);
    assert!(doctor.status.success(), "{doctor:?}");
    assert!(
        said.contains("1 screen Slate could not read, in 1 session of"),
        "{said}"
    );
    let sample = stand_in.temp.path().join("sample.json");
    let out_path = sample.to_str().unwrap();
    let sampled = run(&["doctor", "--sample", &SESSION_ID[..8], "--out", out_path])
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&sampled.stdout);
    assert!(sampled.status.success(), "{sampled:?}");
    assert!(
        said.contains("wrote 1 redacted sample of the 1 screen Slate could not read"),
        "{said}"
    );
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sample).unwrap()).unwrap();
    assert_eq!(written["screens"], 1);
    assert_eq!(written["records"], 0);
    let lines = written["samples"][0]["screen"]
        .as_array()
        .expect("its lines");
    assert!(
        lines
            .iter()
            .any(|line| line.as_str().unwrap().contains("(xxxxxx xxxx)")),
        "{written}"
    );

    let _ = stop.send(());
    let _ = server.await;
    handle.shutdown();
    thread.join().unwrap();
}
