//! Ids and limits: short id prefixes name no session (over HTTP and on the command line), a token
//! file that is not a regular file, free text without a limit, and work-item dependencies that
//! would make a cycle or name unreadable ids.

use std::time::Duration;

use axum::http::StatusCode;
use slate::live;

use crate::api::{
    call, error_code, error_message, get, json, post_json, slate, started, write_table,
};
use crate::util::{working_transcript, SESSION};

use super::{finished_within, limited};

/// Item 10, over HTTP: a prefix of fewer than four characters names no session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_prefix_names_no_session_over_http() {
    let (_temp, handle, thread) = started();
    let (status, body) = call(&handle, get("/sessions/7f3")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(error_code(&body), "bad_request");
    assert!(error_message(&body).contains("at least 4"), "{body}");
    let (status, body) = call(
        &handle,
        post_json("/sessions/7/intent", serde_json::json!({"state": "none"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(call(&handle, get("/sessions/7f3c")).await.0, StatusCode::OK);
    handle.shutdown();
    thread.join().unwrap();
}

/// Item 10, on the command line: `slate show ''` and `slate park ''` name no session, and
/// neither does a prefix of three characters.
#[test]
fn an_empty_or_short_id_names_no_session_on_the_command_line() {
    let place = StoreHome::new();
    let said = place.refused(&["show", ""]);
    assert!(said.contains("empty"), "{said}");
    place.refused(&["park", "", "--reason", "oops"]);
    let said = place.refused(&["show", "7f3"]);
    assert!(said.contains("at least 4"), "{said}");
    assert_eq!(
        place.intent()["state"],
        "none",
        "the empty id parked nothing"
    );
}

/// Item 10: the rules of the one lookup. A whole id shorter than four characters still names its
/// session; a prefix that short does not.
#[test]
fn a_whole_short_id_names_its_session_and_a_short_prefix_does_not() {
    use slate::engine::{pick, FindError};
    use slate::model::{AgentKind, SessionKey};
    let keys = [
        SessionKey::new(AgentKind::OPENCODE, "ab"),
        SessionKey::new(AgentKind::OPENCODE, "abcdef"),
    ];
    assert_eq!(pick(&keys, "ab").unwrap().id.as_str(), "ab");
    assert_eq!(pick(&keys, "abcd").unwrap().id.as_str(), "abcdef");
    assert_eq!(pick(&keys, "a"), Err(FindError::TooShort("a".to_string())));
    assert_eq!(pick(&keys, ""), Err(FindError::Empty));
    assert_eq!(
        pick(&keys, "abcx"),
        Err(FindError::NotFound("abcx".to_string()))
    );
}

/// `command` with its address space capped at about 1 GB, so a read that never ends fails
/// instead of taking the machine's memory.
#[cfg(unix)]
fn capped(command: std::process::Command) -> std::process::Command {
    limited("-v 1000000", command)
}

/// Item 3: a token file that is a FIFO, or a link to `/dev/zero`, is read as what it is: not a
/// token. `serve` stops with an error that names the file; `slate run` and `slate item add`,
/// which only use the token to tell a server, go on without it.
#[cfg(unix)]
#[test]
fn a_token_file_that_is_not_a_regular_file_is_refused_without_blocking() {
    for kind in ["fifo", "zero"] {
        let temp = tempfile::tempdir().unwrap();
        let home = temp.path();
        let token = home.join(".config/slate/token");
        std::fs::create_dir_all(token.parent().unwrap()).unwrap();
        if kind == "fifo" {
            let made = std::process::Command::new("mkfifo")
                .arg(&token)
                .status()
                .unwrap();
            assert!(made.success());
        } else {
            std::os::unix::fs::symlink("/dev/zero", &token).unwrap();
        }
        working_transcript(home, live::system_clock());
        let table = write_table(home);
        let table = table.to_str().unwrap();

        let serve = capped(slate(
            home,
            &["serve", "--listen", "127.0.0.1:0", "--processes", table],
        ));
        let served = finished_within(serve, Duration::from_secs(10))
            .unwrap_or_else(|| panic!("{kind}: serve blocked on the token file"));
        assert!(!served.status.success(), "{kind}");
        let said = String::from_utf8_lossy(&served.stderr);
        assert!(
            said.contains(&token.display().to_string()) && said.contains("not a regular file"),
            "{kind}: {said}"
        );

        let run = finished_within(
            capped(slate(home, &["run", "--", "true"])),
            Duration::from_secs(10),
        )
        .unwrap_or_else(|| panic!("{kind}: slate run blocked on the token file"));
        assert!(run.status.success(), "{kind}: {run:?}");

        let add = finished_within(
            capped(slate(home, &["item", "add", "fix-1", "--title", "Fix it"])),
            Duration::from_secs(10),
        )
        .unwrap_or_else(|| panic!("{kind}: slate item add blocked on the token file"));
        assert!(add.status.success(), "{kind}: {add:?}");
    }
}

/// A HOME with the working session and its recorded process table, for the commands that write
/// Slate's store.
struct StoreHome {
    _temp: tempfile::TempDir,
    home: std::path::PathBuf,
    table: String,
}

impl StoreHome {
    fn new() -> StoreHome {
        let temp = tempfile::tempdir().unwrap();
        let home = temp.path().to_path_buf();
        working_transcript(&home, live::system_clock());
        let table = write_table(&home).to_str().unwrap().to_string();
        StoreHome {
            _temp: temp,
            home,
            table,
        }
    }

    /// Runs `slate args…` with the recorded process table.
    fn slate(&self, args: &[&str]) -> std::process::Output {
        let mut all = args.to_vec();
        all.extend(["--processes", &self.table]);
        slate(&self.home, &all).output().unwrap()
    }

    /// Runs `slate args…` and returns its stderr, asserting that it failed.
    fn refused(&self, args: &[&str]) -> String {
        let output = self.slate(args);
        let said = String::from_utf8_lossy(&output.stderr).into_owned();
        let shown: String = format!("{args:?}").chars().take(120).collect();
        assert!(!output.status.success(), "{shown} was accepted: {said}");
        said
    }

    fn intent(&self) -> serde_json::Value {
        let shown = self.slate(&["show", "7f3c", "--json"]);
        json(&String::from_utf8_lossy(&shown.stdout))["session"]["session_state"]["intent"].clone()
    }
}

/// Item 7: reasons, titles and ids have a length limit, the same on the command line and over
/// HTTP, with an error that says so; nothing is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn free_text_over_its_limit_is_refused_on_every_surface() {
    let long_reason = "r".repeat(slate::limits::REASON_MAX + 1);
    let long_id = "i".repeat(slate::limits::ID_MAX + 1);
    let long_title = "t".repeat(slate::limits::TITLE_MAX + 1);
    let place = StoreHome::new();
    let said = place.refused(&["park", "7f3c", "--reason", &long_reason]);
    assert!(said.contains("at most"), "{said}");
    assert_eq!(place.intent()["state"], "none");
    let who = format!("another_item:{long_id}");
    let said = place.refused(&["await", "7f3c", "--who", &who, "--reason", "later"]);
    assert!(said.contains("at most"), "{said}");
    let said = place.refused(&["item", "add", &long_id, "--title", "Fix it"]);
    assert!(said.contains("at most"), "{said}");
    let said = place.refused(&["item", "add", "fix-1", "--title", &long_title]);
    assert!(said.contains("at most"), "{said}");
    let said = place.refused(&["item", "add", "fix-1", "--title", "Fix", "--dep", &long_id]);
    assert!(said.contains("at most"), "{said}");
    let said = place.refused(&["claim", &long_id, "--session", "7f3c"]);
    assert!(said.contains("at most"), "{said}");
    // Within the limits, all is well.
    let reason = "r".repeat(slate::limits::REASON_MAX);
    assert!(place
        .slate(&["park", "7f3c", "--reason", &reason])
        .status
        .success());
    assert_eq!(place.intent()["reason"], reason.as_str());

    let (_temp, handle, thread) = started();
    let (status, body) = call(
        &handle,
        post_json(
            &format!("/sessions/{SESSION}/intent"),
            serde_json::json!({"state": "parked", "reason": long_reason}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_code(&body), "invalid");
    assert!(error_message(&body).contains("at most"), "{body}");
    let (status, body) = call(
        &handle,
        post_json(
            &format!("/sessions/{SESSION}/intent"),
            serde_json::json!({"state": "awaiting", "awaiting_who": who, "reason": "later"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    handle.shutdown();
    thread.join().unwrap();
}

/// Item 15: an item may not wait for itself, directly or round a cycle, and an id must be
/// something a person can read: not empty, not only spaces, no control characters.
#[test]
fn item_dependencies_refuse_cycles_and_unreadable_ids() {
    let place = StoreHome::new();
    fn add<'a>(id: &'a str, deps: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["item", "add", id, "--title", "Work"];
        for dep in deps {
            args.extend(["--dep", dep]);
        }
        args
    }
    let said = place.refused(&add("x", &["x"]));
    assert!(said.contains("itself"), "{said}");
    assert!(place.slate(&add("a", &["b"])).status.success());
    let said = place.refused(&add("b", &["a"]));
    assert!(said.contains("cycle"), "{said}");
    assert!(place.slate(&add("c", &["a"])).status.success());
    let said = place.refused(&add("b", &["c"]));
    assert!(said.contains("b → c → a → b"), "{said}");
    assert!(place.slate(&add("b", &[])).status.success());
    for bad in ["", "   ", "x\u{1b}]52;c;aGk=\u{7}", "tab\there"] {
        place.refused(&add(bad, &[]));
        place.refused(&add("fine", &[bad]));
    }
    let listed = place.slate(&["item", "list"]);
    let listed = String::from_utf8_lossy(&listed.stdout);
    let ids: Vec<&str> = listed
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert_eq!(ids, ["a", "b", "c"], "{listed}");
}
