//! The commands: `slate run`'s exit status, output and start failures, an error naming its cause
//! once, a command reading only from a running Slate that holds its token (not one of another
//! HOME), and a locked store said, not hidden.

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use crate::api::{give_token, json, slate, Running};
use crate::util::SESSION;

use super::{announced, finished_within, raw, serve, standalone, token_of};

/// `slate run -- args…` with nothing on its input, its output and errors kept.
fn slate_run(args: &[&str]) -> std::process::Output {
    let temp = tempfile::tempdir().unwrap();
    let mut all = vec!["run", "--"];
    all.extend(args);
    let mut command = slate(temp.path(), &all);
    command.env("SLATE_LOG", "slate=debug");
    finished_within(command, Duration::from_secs(10)).expect("slate run ends within 10 s")
}

/// Item 16: a child killed by a signal makes `slate run` exit as a shell would, 128 + n.
#[cfg(unix)]
#[test]
fn slate_run_exits_128_plus_the_signal_that_killed_the_child() {
    for (signal, code) in [("KILL", 137), ("TERM", 143)] {
        let script = format!("kill -{signal} $$");
        let run = slate_run(&["sh", "-c", &script]);
        assert_eq!(run.status.code(), Some(code), "{signal}: {run:?}");
    }
    assert_eq!(slate_run(&["sh", "-c", "exit 3"]).status.code(), Some(3));
}

/// Item 16: the relay adds nothing to the output (no echoed line end when its input ends), ends
/// the child's input when its own ends, and stops as soon as the output is drained.
#[cfg(unix)]
#[test]
fn slate_run_adds_nothing_and_stops_when_the_output_is_drained() {
    let run = slate_run(&["printf", "a\\nb"]);
    assert!(run.status.success(), "{run:?}");
    assert_eq!(String::from_utf8_lossy(&run.stdout), "a\r\nb");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!stderr.contains("did not"), "slate run waited: {stderr}");

    // The end of the input reaches the child as the end of its input, even after a partial line.
    for (input, echoed) in [("hi\n", "hi\r\nhi\r\n"), ("hi", "hihi")] {
        let temp = tempfile::tempdir().unwrap();
        let mut child = slate(temp.path(), &["run", "--", "cat"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = send.send(child.wait_with_output());
        });
        let output = receive
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("cat never saw the end of {input:?}"))
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), echoed, "{input:?}");
    }
}

/// Item 16: a program that cannot start gets one short line, not the whole PATH.
#[cfg(unix)]
#[test]
fn slate_run_says_briefly_why_a_program_cannot_start() {
    for (program, expected) in [
        ("", "empty"),
        ("  ", "empty"),
        ("no-such-program-slate-test", "not found in PATH"),
    ] {
        let run = slate_run(&[program]);
        assert!(!run.status.success());
        let said = String::from_utf8_lossy(&run.stderr);
        let said = said
            .lines()
            .filter(|line| line.starts_with("slate:"))
            .collect::<Vec<_>>();
        assert_eq!(said.len(), 1, "{program:?}: {said:?}");
        assert!(said[0].contains(expected), "{program:?}: {said:?}");
        assert!(!said[0].contains("/usr/bin"), "{program:?}: {said:?}");
    }
}

/// Item 16: an error and its cause are printed once each, not the operating system's words
/// twice.
#[test]
fn an_error_names_its_cause_once() {
    let temp = tempfile::tempdir().unwrap();
    let missing = temp.path().join("missing.json");
    let output = slate(
        temp.path(),
        &["sessions", "--processes", missing.to_str().unwrap()],
    )
    .output()
    .unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(said.matches("(os error 2)").count(), 1, "{said}");
    assert!(said.contains(&missing.display().to_string()), "{said}");
}

/// `slate args…` over `home`, pointed at the server at `address` by `SLATE_API`.
fn slate_at(home: &Path, address: SocketAddr, args: &[&str]) -> std::process::Output {
    let mut command = slate(home, args);
    command.env("SLATE_API", format!("http://{address}"));
    finished_within(command, Duration::from_secs(20)).expect("the command ends within 20 s")
}

/// Item 9: a command reads from a running Slate only when that Slate holds this HOME's token.
/// The server refuses a read that carries another token, and one that carries none (issue 35:
/// the live list is no other local user's to read). A command whose token the server refuses, or that has no
/// token to prove itself with, reads for itself and says why on stderr; the JSON says which
/// engine answered.
#[cfg(unix)]
#[test]
fn a_command_reads_only_from_a_slate_that_holds_its_token() {
    let ours = tempfile::tempdir().unwrap();
    let server = serve(ours.path(), "127.0.0.1:0");
    let address = announced(&server);
    let token = token_of(ours.path());

    // The guard: our token reads; no token, or another, is refused.
    let read = |authorization: &str| {
        raw(
            address,
            &format!(
                "GET /sessions/live HTTP/1.1\r\nHost: {address}\r\n{authorization}\
                 Connection: close\r\n\r\n"
            ),
        )
    };
    assert!(read("").starts_with("HTTP/1.1 401"), "{}", read(""));
    let right = read(&format!("Authorization: Bearer {token}\r\n"));
    assert!(right.starts_with("HTTP/1.1 200"), "{right}");
    let wrong = read(&format!("Authorization: Bearer {}\r\n", "f".repeat(64)));
    assert!(wrong.starts_with("HTTP/1.1 401"), "{wrong}");
    assert!(
        wrong.contains(r#"{"error":{"code":"unauthorized","#),
        "{wrong}"
    );

    // The server's own HOME reads from it, and says so.
    let listed = slate_at(ours.path(), address, &["sessions", "--json"]);
    assert!(listed.status.success(), "{listed:?}");
    let body = json(&String::from_utf8_lossy(&listed.stdout));
    assert_eq!(body["sessions"][0]["id"], SESSION, "{body}");
    assert_eq!(
        body["engine"],
        serde_json::json!({
            "kind": "server",
            "address": address.to_string(),
            "version": env!("CARGO_PKG_VERSION"),
        })
    );
    assert_eq!(String::from_utf8_lossy(&listed.stderr), "");
    let shown = slate_at(ours.path(), address, &["show", &SESSION[..8], "--json"]);
    let shown = json(&String::from_utf8_lossy(&shown.stdout));
    assert_eq!(shown["session"]["id"], SESSION, "{shown}");
    assert_eq!(shown["engine"]["kind"], "server", "{shown}");

    // Another HOME, with a token of its own or none at all, reads for itself.
    let other = tempfile::tempdir().unwrap();
    let bare = tempfile::tempdir().unwrap();
    give_token(other.path(), &"e".repeat(64));
    for (home, why) in [
        (other.path(), "its token differs"),
        (bare.path(), "this HOME has no token"),
    ] {
        let listed = slate_at(home, address, &["sessions", "--json"]);
        assert!(listed.status.success(), "{why}: {listed:?}");
        let body = json(&String::from_utf8_lossy(&listed.stdout));
        assert_eq!(body["sessions"], serde_json::json!([]), "{why}: {body}");
        assert_eq!(
            body["engine"],
            serde_json::json!({"kind": "standalone"}),
            "{why}: {body}"
        );
        let said = String::from_utf8_lossy(&listed.stderr);
        assert_eq!(
            said.trim_end(),
            format!(
                "slate: the Slate at {address} belongs to another user or HOME ({why}); \
                 reading for myself"
            ),
            "{why}"
        );
        assert_eq!(said.lines().count(), 1, "{why}: {said}");

        // `show` does not find the other HOME's session there.
        let shown = slate_at(home, address, &["show", SESSION, "--json"]);
        assert!(!shown.status.success(), "{why}: {shown:?}");
        assert!(
            String::from_utf8_lossy(&shown.stderr).contains("belongs to another user or HOME"),
            "{why}: {shown:?}"
        );

        // `watch` does not follow the other HOME's stream.
        let mut watch = slate(home, &["watch", "--json"]);
        watch.env("SLATE_API", format!("http://{address}"));
        let watch = Running::spawn(watch);
        let first = json(&watch.line());
        assert_eq!(first["type"], "snapshot", "{why}: {first}");
        assert_eq!(first["sessions"], serde_json::json!([]), "{why}: {first}");
        assert_eq!(first["engine"]["kind"], "standalone", "{why}: {first}");
    }
    let mut watch = slate(ours.path(), &["watch", "--json"]);
    watch.env("SLATE_API", format!("http://{address}"));
    let watch = Running::spawn(watch);
    let first = json(&watch.line());
    assert_eq!(first["sessions"][0]["id"], SESSION, "{first}");
    assert_eq!(first["engine"]["kind"], "server", "{first}");
}

/// A HOME holding the sample OpenCode database (six sessions, all closed without a process).
fn opencode_home() -> (tempfile::TempDir, std::path::PathBuf) {
    let temp = tempfile::tempdir().unwrap();
    let db = temp.path().join(".local/share/opencode/opencode.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/stores/opencode.db");
    std::fs::copy(sample, &db).unwrap();
    (temp, db)
}

/// Item 13: a store that cannot be read is said, with its path and why, and `slate doctor` is
/// named; the list never suggests the flag it was given. Once the lock is gone, the sessions
/// behind it show.
#[test]
fn a_locked_store_is_said_not_hidden() {
    let (temp, db) = opencode_home();
    let home = temp.path();
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer.execute_batch("BEGIN EXCLUSIVE").unwrap();

    let all = standalone(home, &["sessions", "--all"]);
    assert!(all.status.success(), "{all:?}");
    let said = String::from_utf8_lossy(&all.stdout);
    assert!(!said.contains("--all"), "{said}");
    assert!(said.contains(&db.display().to_string()), "{said}");
    assert!(said.contains("locked"), "{said}");
    assert!(said.contains("slate doctor"), "{said}");

    let live = standalone(home, &["sessions"]);
    let said = String::from_utf8_lossy(&live.stdout);
    assert!(said.contains("`slate sessions --all`"), "{said}");
    assert!(said.contains(&db.display().to_string()), "{said}");

    let listed = standalone(home, &["sessions", "--all", "--json"]);
    let body = json(&String::from_utf8_lossy(&listed.stdout));
    assert_eq!(body["sessions"], serde_json::json!([]), "{body}");
    assert_eq!(
        body["unread"][0]["place"],
        db.display().to_string(),
        "{body}"
    );
    assert_eq!(body["unread"][0]["kind"], "store_locked", "{body}");

    writer.execute_batch("COMMIT").unwrap();
    drop(writer);
    let all = standalone(home, &["sessions", "--all"]);
    let said = String::from_utf8_lossy(&all.stdout);
    assert!(!said.contains("could not"), "{said}");
    assert!(said.contains("6 sessions"), "{said}");
    let listed = standalone(home, &["sessions", "--all", "--json"]);
    let body = json(&String::from_utf8_lossy(&listed.stdout));
    assert_eq!(body["unread"], serde_json::json!([]), "{body}");
}
