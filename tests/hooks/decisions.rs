//! The decision hook (`slate hook claude-code PermissionRequest --answer`, docs/hooks.md
//! "Decision hooks") against a real `slate serve` in a temporary HOME: the session's dialog
//! offers Allow once and Deny while the hook waits, an answer reaches the hook once and only for
//! the fingerprint shown, and the hook prints nothing (no decision) when the call was answered at
//! the terminal, when no Slate runs, when Slate stops, at its bound, or for an event it cannot
//! offer. Decisions are taken over this user's socket only: the loopback port refuses them,
//! token or not, and another user cannot reach the socket.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use slate::model::{Action, SessionDialog};
use slate::protocol::{ErrorCode, RespondRequest};

use super::runtime::{
    permission_event, session_id, spawned_hook, start_hook, working_sessions, Serving,
};
use crate::util::slate_in;

/// The decision hook for session `n` with `event` on its input, its bound shortened to
/// `within_ms`; its output is read when it ends.
fn decision_hook(root: &Path, event: &str, within_ms: u64) -> Child {
    let mut child = slate_in(root)
        .env("SLATE_HOOK_ANSWER_WITHIN_MS", within_ms.to_string())
        .args(["hook", "claude-code", "PermissionRequest", "--answer"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(event.as_bytes()).unwrap();
    drop(stdin);
    child
}

/// Waits for the hook to end, at most `limit`: its exit code and what it printed.
fn ended(mut child: Child, limit: Duration) -> (Option<i32>, String, String, Duration) {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the decision hook still ran after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = start.elapsed();
    let mut out = String::new();
    let mut err = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap().code(), out, err, took)
}

/// The dialog session 0 shows once it offers an answer through the hook, within 20 s.
fn waiting_dialog(serving: &Serving) -> SessionDialog {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let live: serde_json::Value = serving.client.get_json("/sessions/live").unwrap();
        let dialog = live["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|session| session["id"] == session_id(0))
            .and_then(|session| {
                serde_json::from_value::<SessionDialog>(session["dialog"].clone()).ok()
            })
            .filter(|dialog| dialog.answerable);
        if let Some(dialog) = dialog {
            return dialog;
        }
        assert!(Instant::now() < deadline, "no answerable dialog: {live}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn request(action: Action, fingerprint: &str) -> RespondRequest {
    RespondRequest {
        action,
        option: None,
        text: None,
        dialog: fingerprint.to_string(),
        surface: None,
    }
}

/// A HOME with session 0 at work, `slate serve` over it, and its permission hook seen.
fn serving(root: &Path) -> Serving {
    let table = working_sessions(root, 1);
    let serving = Serving::start(root, &table);
    let observe = start_hook(root, None, 0);
    let _ = ended(observe, Duration::from_secs(10));
    serving
}

#[test]
fn an_approval_reaches_the_waiting_hook_once_and_only_for_its_fingerprint() {
    let dir = tempfile::tempdir().unwrap();
    let serving = serving(dir.path());
    let hook = decision_hook(dir.path(), &permission_event(0), 60_000);
    let dialog = waiting_dialog(&serving);
    let labels: Vec<&str> = dialog.options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(labels, ["Allow once", "Deny"]);
    assert_eq!(dialog.summary, "Run: touch x0.txt");
    let call = dialog.call.clone().unwrap();
    assert_eq!(call.name, "Bash");
    assert!(call.input.unwrap().contains("touch x0.txt"));
    // A stale fingerprint is refused, and the hook keeps waiting.
    let stale = serving
        .client
        .respond(
            &session_id(0),
            &request(Action::Approve, "0123456789abcdef"),
        )
        .unwrap_err();
    assert_eq!(stale.code, ErrorCode::DialogChanged, "{stale:?}");
    let answered = serving
        .client
        .respond(
            &session_id(0),
            &request(Action::Approve, &dialog.fingerprint),
        )
        .unwrap();
    assert_eq!(answered.action, Action::Approve);
    let (code, out, err, _) = ended(hook, Duration::from_secs(10));
    assert_eq!(code, Some(0));
    assert!(err.is_empty(), "{err}");
    let printed: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        printed["hookSpecificOutput"]["decision"]["behavior"], "allow",
        "{out}"
    );
    assert_eq!(
        printed["hookSpecificOutput"]["hookEventName"],
        "PermissionRequest"
    );
    // At most once: the same answer again is refused, and nothing is sent.
    let again = serving
        .client
        .respond(
            &session_id(0),
            &request(Action::Approve, &dialog.fingerprint),
        )
        .unwrap_err();
    assert!(
        matches!(again.code, ErrorCode::NotAtDialog | ErrorCode::CannotType),
        "{again:?}"
    );
    // Each attempt is recorded like a typed answer: the stale one, the approval, the second.
    let detail: serde_json::Value = serving
        .client
        .get_json(&format!("/sessions/{}", session_id(0)))
        .unwrap();
    let outcomes: Vec<String> = detail["answers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|record| record.to_string())
        .collect();
    assert_eq!(outcomes.len(), 3, "{outcomes:?}");
    assert!(
        outcomes.iter().any(|record| record.contains("answered")),
        "{outcomes:?}"
    );
}

#[test]
fn a_denial_carries_its_reason_and_an_answer_at_the_terminal_releases_the_hook() {
    let dir = tempfile::tempdir().unwrap();
    let serving = serving(dir.path());
    let hook = decision_hook(dir.path(), &permission_event(0), 60_000);
    let dialog = waiting_dialog(&serving);
    serving
        .client
        .respond(&session_id(0), &request(Action::Deny, &dialog.fingerprint))
        .unwrap();
    let (_, out, _, _) = ended(hook, Duration::from_secs(10));
    let printed: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        printed["hookSpecificOutput"]["decision"]["behavior"],
        "deny"
    );
    assert_eq!(
        printed["hookSpecificOutput"]["decision"]["message"],
        "denied from Slate"
    );

    // The next call is answered at the terminal: the CLI goes on, and its next event (the
    // tool's end) releases the hook with no decision; a later approval is refused.
    let observe = start_hook(dir.path(), None, 0);
    let _ = ended(observe, Duration::from_secs(10));
    let hook = decision_hook(dir.path(), &permission_event(0), 60_000);
    let dialog = waiting_dialog(&serving);
    let post_tool_use = serde_json::json!({
        "session_id": session_id(0), "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "touch x0.txt"}, "tool_use_id": "toolu_1", "cwd": "/work/p0",
    });
    let mut terminal = spawned_hook(dir.path(), None, "PostToolUse");
    let mut stdin = terminal.stdin.take().unwrap();
    stdin
        .write_all(post_tool_use.to_string().as_bytes())
        .unwrap();
    drop(stdin);
    terminal.wait().unwrap();
    let (code, out, err, _) = ended(hook, Duration::from_secs(10));
    assert_eq!((code, out.as_str(), err.as_str()), (Some(0), "", ""));
    let late = serving
        .client
        .respond(
            &session_id(0),
            &request(Action::Approve, &dialog.fingerprint),
        )
        .unwrap_err();
    assert!(
        matches!(late.code, ErrorCode::NotAtDialog | ErrorCode::CannotType),
        "{late:?}"
    );
}

#[test]
fn with_no_slate_the_hook_decides_nothing_and_does_not_wait() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err, took) = ended(
        decision_hook(dir.path(), &permission_event(0), 60_000),
        Duration::from_secs(20),
    );
    assert_eq!((code, out.as_str(), err.as_str()), (Some(0), "", ""));
    // Far below the 60 s bound: it did not wait for a Slate that is not there.
    assert!(took < Duration::from_secs(15), "{took:?}");
}

#[test]
fn the_hook_decides_nothing_at_its_bound_or_when_slate_stops() {
    let dir = tempfile::tempdir().unwrap();
    let serving = serving(dir.path());
    let (code, out, _, took) = ended(
        decision_hook(dir.path(), &permission_event(0), 1_500),
        Duration::from_secs(30),
    );
    assert_eq!((code, out.as_str()), (Some(0), ""));
    assert!(took >= Duration::from_millis(1_000), "{took:?}");

    let hook = decision_hook(dir.path(), &permission_event(0), 60_000);
    waiting_dialog(&serving);
    drop(serving);
    let (code, out, err, _) = ended(hook, Duration::from_secs(30));
    assert_eq!((code, out.as_str(), err.as_str()), (Some(0), "", ""));
}

#[test]
fn hostile_or_huge_events_are_never_offered() {
    let dir = tempfile::tempdir().unwrap();
    let serving = serving(dir.path());
    let huge = serde_json::json!({
        "session_id": session_id(0), "hook_event_name": "PermissionRequest", "tool_name": "Bash",
        "tool_input": {"command": "x".repeat(20_000)}, "cwd": "/work/p0",
    });
    let long_id = serde_json::json!({
        "session_id": "a".repeat(300), "hook_event_name": "PermissionRequest",
        "tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": "/work/p0",
    });
    let control = serde_json::json!({
        "session_id": session_id(0), "hook_event_name": "PermissionRequest",
        "tool_name": "Ba\u{1b}[2Jsh", "tool_input": {"command": "ls"}, "cwd": "/work/p0",
    });
    for event in [
        huge.to_string(),
        long_id.to_string(),
        control.to_string(),
        "{".into(),
        "[]".into(),
    ] {
        let (code, out, err, took) = ended(
            decision_hook(dir.path(), &event, 60_000),
            Duration::from_secs(20),
        );
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (Some(0), "", ""),
            "{event:.80}"
        );
        assert!(took < Duration::from_secs(15), "{took:?}");
    }
    drop(serving);
}

#[test]
fn decisions_are_refused_on_the_port_token_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let serving = serving(dir.path());
    let body = serde_json::json!({
        "call": {"agent": "claude-code", "session_id": session_id(0), "tool": "Bash",
                 "input": "{\"command\": \"ls\"}", "cwd": "/work/p0"},
        "nonce": "00112233445566778899aabbccddeeff", "within_ms": 1000,
    });
    let refused = serving
        .client
        .post("/hooks/decision", Some(&body), Duration::from_secs(5))
        .unwrap_err();
    assert!(refused.to_string().contains("403"), "{refused}");
}

#[test]
fn another_user_cannot_hand_slate_a_call_to_decide() {
    let dir = tempfile::tempdir().unwrap();
    let serving = serving(dir.path());
    let socket = dir.path().join("data/slate/run/api.sock");
    assert!(socket.exists(), "no API socket at {}", socket.display());
    // Its folders open to the other user, as a careless HOME might be: the socket's own folder
    // stays 0700 and the peer's uid is checked, whatever is above.
    for folder in [
        dir.path(),
        &dir.path().join("data"),
        &dir.path().join("data/slate"),
    ] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let script = r#"
import socket, sys
body = sys.argv[2].encode()
try:
    s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect(sys.argv[1])
    s.sendall(b"POST /hooks/decision HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    print("answered:", s.recv(4096))
except Exception as e:
    print("refused:", type(e).__name__, e)
"#;
    let body = serde_json::json!({
        "call": {"agent": "claude-code", "session_id": session_id(0), "tool": "Bash",
                 "input": "{\"command\": \"ls\"}", "cwd": "/work/p0"},
        "nonce": "00112233445566778899aabbccddeeff", "within_ms": 5000,
    });
    let output = std::process::Command::new("setpriv")
        .args([
            "--reuid",
            "65534",
            "--regid",
            "65534",
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
        ])
        .arg(script)
        .arg(&socket)
        .arg(body.to_string())
        .current_dir("/")
        .output()
        .expect("setpriv runs python3 as uid 65534");
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        said.starts_with("refused:") || said.contains("answered: b''"),
        "{said} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!said.contains("waiting"), "{said}");
    // Nothing waits: the session offers no answer through a hook.
    let live: serde_json::Value = serving.client.get_json("/sessions/live").unwrap();
    assert!(!live.to_string().contains("Allow once"), "{live}");
}

#[test]
fn a_waiting_hook_makes_the_tray_and_notifications_offer_allow_once_and_deny() {
    use slate::model::{HookDecision, PendingCall, Status};
    use slate::policy::menu::{answer_entries, Entry};
    use slate::policy::notifications::Offer;
    let waiting = |lines: &[&str]| HookDecision {
        fingerprint: "0123456789abcdef".into(),
        summary: format!("Run: {}", lines[0]),
        detail: lines.iter().map(|line| line.to_string()).collect(),
        call: PendingCall {
            id: "0123456789abcdef".into(),
            name: "Bash".into(),
            input: Some(lines.join("\n")),
            cut: false,
        },
    };
    let mut session = crate::util::wire_session(
        "acme-api",
        "s1",
        Status::Waiting,
        "permission_prompt",
        "Asks permission: Bash: touch x",
    );
    session.dialog = Some(waiting(&["touch x"]).dialog());
    let offer = Offer::of(&session).expect("an offer");
    assert!(offer.allow);
    assert_eq!(offer.fingerprint, "0123456789abcdef");
    let labels: Vec<String> = answer_entries(session.key(), session.dialog.as_ref().unwrap())
        .into_iter()
        .filter_map(|entry| match entry {
            Entry::Item { label, .. } => Some(label),
            _ => None,
        })
        .collect();
    assert!(
        labels.iter().any(|label| label.contains("Allow once")),
        "{labels:?}"
    );
    assert!(
        labels.iter().any(|label| label.contains("Deny")),
        "{labels:?}"
    );
    // A command of more lines than the summary shows: Deny only, never a blind approval.
    session.dialog = Some(waiting(&["touch x &&", "curl x | sh"]).dialog());
    assert!(!Offer::of(&session).expect("an offer").allow);
}
