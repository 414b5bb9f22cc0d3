//! Answering a remote session's dialog: answerable while its remote is connected, one fixed
//! command with checked arguments, its data on standard input (an older remote Slate is named),
//! a clear error from an unreachable remote, the one answer path recording each attempt once, and
//! a forwarded answer through the real sshd and through the API.

use std::path::{Path, PathBuf};
use std::time::Duration;

use slate::live;
use slate::model::{AgentKind, Session, SessionKey, Status, Timestamp};
use slate::remote::{self, LinkOptions, LinkTiming};

use crate::api::json;
use crate::util::needs;

use super::{
    approve_seen, box_machine, cli, cli_output, codex, entry, fast, following, machine,
    snapshot_line, stand_in_ssh, wait_for, Watched, REMOTE_SESSION,
};

/// A session with a permission dialog Slate can type into, as its own machine says it.
fn at_dialog(id: &str) -> Session {
    let mut session = codex("api", id, Status::Waiting);
    session.dialog = Some(
        serde_json::from_value(serde_json::json!({
            "kind": "permission",
            "summary": "Run: touch x.txt",
            "options": [
                {"number": 1, "label": "Yes", "action": "approve"},
                {"number": 3, "label": "No", "action": "deny"}
            ],
            "fingerprint": "9f86d081884c7d65",
            "answerable": true
        }))
        .unwrap(),
    );
    session
}

#[test]
fn a_relayed_dialog_is_answerable_while_its_remote_is_connected_and_says_why_not_while_down() {
    let mut watched = Watched::new(&[entry("box", "box", &[])]);
    watched.snapshot("box", vec![at_dialog("s1")], 1);
    let dialog = |watched: &Watched| {
        watched
            .remotes
            .sessions()
            .next()
            .unwrap()
            .dialog
            .clone()
            .unwrap()
    };
    let shown = dialog(&watched);
    assert!(shown.answerable, "{shown:?}");
    assert_eq!(shown.why_not, None);

    watched.lost("box", 5);
    let shown = dialog(&watched);
    assert!(!shown.answerable);
    let why = shown.why_not.unwrap();
    assert!(why.starts_with("box is unreachable"), "{why}");
    assert!(why.contains("ssh box"), "{why}");

    watched.snapshot("box", vec![at_dialog("s1")], 9);
    assert!(dialog(&watched).answerable);

    // What the remote says it cannot type into stays so, with its own reason.
    let mut plain = at_dialog("s1");
    let remote_dialog = plain.dialog.as_mut().unwrap();
    remote_dialog.answerable = false;
    remote_dialog.why_not = Some("plain terminal".to_string());
    watched.snapshot("box", vec![plain], 12);
    let shown = dialog(&watched);
    assert!(!shown.answerable);
    assert_eq!(shown.why_not.as_deref(), Some("plain terminal"));
}

#[test]
fn a_forwarded_answer_is_one_fixed_command_with_checked_arguments() {
    use slate::agents::keys::{Action, OptionRef};
    use slate::answers::{ErrorCode, RespondRequest};
    use slate::remote::forward;

    let remote = entry("box", "box.example", &["-p", "2222"]);
    let request = |action, option: Option<OptionRef>| RespondRequest {
        action,
        option,
        text: None,
        dialog: "9f86d081884c7d65".to_string(),
        surface: None,
    };
    let command = forward::command(&remote, "s-1.a_b:c", &request(Action::Approve, None)).unwrap();
    let args = remote::ssh_args(&remote, &LinkTiming::default(), &command).unwrap();
    let tail = args.iter().position(|arg| arg == "box.example").unwrap();
    // The command line the remote's login shell reads is fixed: no session data is on it, so no
    // shell's quoting (fish reads `\'` unlike a POSIX shell) can change what runs.
    assert_eq!(args[tail + 1..], ["slate", "remote-call"]);
    assert!(args.contains(&"BatchMode=yes".to_string()), "{args:?}");
    assert!(
        !args.iter().any(|arg| arg.contains("s-1.a_b:c")
            || arg.contains("9f86d081884c7d65")
            || arg.contains("approve")),
        "{args:?}"
    );
    // The request goes on its standard input, as one JSON call.
    let input = command.input().unwrap();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&input).unwrap(),
        serde_json::json!({
            "call": "respond",
            "id": "s-1.a_b:c",
            "request": {"action": "approve", "dialog": "9f86d081884c7d65"}
        })
    );
    assert_eq!(
        remote::RemoteCall::parse(&input).unwrap(),
        remote::RemoteCall::Respond {
            id: "s-1.a_b:c".to_string(),
            request: request(Action::Approve, None),
        }
    );
    let command = forward::command(
        &remote,
        "s1",
        &request(Action::Answer, Some(OptionRef::Number(2))),
    )
    .unwrap();
    assert_eq!(command.words().unwrap(), ["slate", "remote-call"]);
    let call: serde_json::Value = serde_json::from_slice(&command.input().unwrap()).unwrap();
    assert_eq!(call["request"]["option"], 2);
    assert_eq!(call["request"]["action"], "answer");
    // What the remote reads is checked too: a call that is not JSON, a truncated one, one of an
    // unknown kind or with an unknown field, or one too long to be a call, is refused.
    for bad in [
        &b"approve s1"[..],
        &input[..input.len() / 2],
        b"\xff\xfe",
        br#"{"call":"reboot"}"#,
        br#"{"call":"respond","id":"s1","request":{"action":"approve","dialog":"9f86d081884c7d65"},"x":1}"#,
        br#"{"call":"respond","id":"s1"}"#,
        b"",
    ] {
        assert!(remote::RemoteCall::parse(bad).is_err(), "{bad:?}");
    }
    let huge = format!(
        r#"{{"call":"respond","id":"s1","request":{{"action":"answer","text":"{}","dialog":"9f86d081884c7d65"}}}}"#,
        "x".repeat(remote::CALL_MAX)
    );
    assert!(remote::RemoteCall::parse(huge.as_bytes())
        .unwrap_err()
        .contains("at most"));

    // Refused before anything runs: hostile ids, a label, a free text, a bad fingerprint.
    let long = "s".repeat(129);
    for id in [
        "s1;touch x",
        "$(reboot)",
        "-oProxyCommand=x",
        "a b",
        " ",
        "",
        "s1'",
        "s1\\'x",
        "é",
        "s\u{202e}1",
        &long,
    ] {
        let error = forward::command(&remote, id, &request(Action::Approve, None)).unwrap_err();
        assert_eq!(error.code, ErrorCode::BadRequest, "{id:?}");
        assert!(error.message.contains("cannot be sent to box"), "{error}");
    }
    let error = forward::command(
        &remote,
        "s1",
        &request(
            Action::Answer,
            Some(OptionRef::Label("Postgres; rm".into())),
        ),
    )
    .unwrap_err();
    assert_eq!(error.code, ErrorCode::BadRequest);
    assert!(error.message.contains("by its number only"), "{error}");
    let mut text = request(Action::Answer, None);
    text.text = Some("yes".into());
    assert_eq!(
        forward::command(&remote, "s1", &text).unwrap_err().code,
        ErrorCode::NotOffered
    );
    let mut bad = request(Action::Approve, None);
    bad.dialog = "9f86d081884c7d6; x".into();
    assert_eq!(
        forward::command(&remote, "s1", &bad).unwrap_err().code,
        ErrorCode::BadRequest
    );
    // The time limit: the remote's own confirmation and the connect timeout, plus a margin.
    assert_eq!(
        forward::limit(&LinkOptions::default()),
        Duration::from_secs(20)
    );
}

/// A stand-in `ssh` that counts its runs in `count` and fails as `ssh` does when the host
/// refuses the connection.
fn refusing_ssh(folder: &Path) -> (PathBuf, PathBuf) {
    let count = folder.join("runs");
    let program = folder.join("ssh");
    std::fs::write(
        &program,
        format!(
            "#!/bin/sh\necho run >> '{}'\necho 'ssh: connect to host box.example port 22: Connection refused' >&2\nexit 255\n",
            count.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    (program, count)
}

#[test]
fn an_unreachable_remote_gives_a_clear_error_and_is_tried_once() {
    use slate::agents::keys::{Action, OptionRef};
    use slate::answers::ErrorCode;
    use slate::remote::forward;

    let temp = tempfile::tempdir().unwrap();
    let (program, count) = refusing_ssh(temp.path());
    let options = LinkOptions {
        ssh: program.into(),
        timing: fast(),
    };
    let request = approve_seen();
    let remote = entry("box", "box.example", &[]);
    let error = forward::respond(&remote, &options, "s1", &request).unwrap_err();
    assert_eq!(error.code, ErrorCode::Unreachable, "{error}");
    assert!(error.message.contains("box"), "{error}");
    assert!(error.message.contains("Connection refused"), "{error}");
    assert!(error.message.contains("not tried again"), "{error}");
    assert_eq!(std::fs::read_to_string(&count).unwrap(), "run\n");

    // A hostile option never reaches `ssh`.
    let mut hostile = request.clone();
    hostile.action = Action::Answer;
    hostile.option = Some(OptionRef::Label("1 && reboot".into()));
    forward::respond(&remote, &options, "s1", &hostile).unwrap_err();
    forward::respond(&remote, &options, "s1;reboot", &request).unwrap_err();
    assert_eq!(std::fs::read_to_string(&count).unwrap(), "run\n");
}

#[test]
#[ignore = "slow tier: needs sshd, ssh and ssh-keygen"]
fn a_forwarded_answer_reaches_the_remote_slate_and_its_result_comes_back() {
    needs(&["sshd", "ssh", "ssh-keygen"]);
    use slate::answers::ErrorCode;
    use slate::remote::forward;

    let machine_box = box_machine(|_| Vec::new());
    let options = LinkOptions {
        ssh: "ssh".into(),
        timing: fast(),
    };
    let request = approve_seen();
    // The remote session works: its own Slate says it is at no dialog, and types nothing.
    let error = forward::respond(
        &machine_box.entry("box"),
        &options,
        REMOTE_SESSION,
        &request,
    )
    .unwrap_err();
    assert_eq!(error.code, ErrorCode::NotAtDialog, "{error}");
    assert!(error.message.starts_with("on box: "), "{error}");

    // The command line does the same from a HOME that follows `box`, and both machines
    // record the attempt.
    let (home, config) = machine_box.serverless_home();
    cli(
        &home,
        &["remote", "add", "box", "box", "--", "-F", &config],
        &[],
    );
    let output = cli_output(
        &home,
        &[
            "approve",
            &format!("box:{}", &REMOTE_SESSION[..8]),
            "--json",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let said = json(&String::from_utf8_lossy(&output.stdout));
    assert_eq!(said["error"]["code"], "not_at_dialog", "{said}");
    assert!(
        said["error"]["message"]
            .as_str()
            .unwrap()
            .contains("is at no dialog"),
        "{said}"
    );
    // The command line saw no dialog in the remote's list, so it forwarded nothing: this machine
    // records the attempt under `box:ID`, and the remote's store holds only the forwarded one.
    let key = SessionKey::new(AgentKind::CLAUDE_CODE, REMOTE_SESSION);
    let here = slate::store::open(&home.join(".local/share/slate/slate.db")).unwrap();
    let recorded = here
        .answers(&key.clone().on(Some(machine("box"))), 5)
        .unwrap();
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(recorded[0].outcome, "not_at_dialog");
    assert_eq!(recorded[0].surface, slate::answers::Surface::Cli);
    assert!(
        here.answers(&key, 5).unwrap().is_empty(),
        "never as a local one"
    );
    let there =
        slate::store::open(&machine_box.remote.home.join(".local/share/slate/slate.db")).unwrap();
    let recorded = there.answers(&key, 5).unwrap();
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(recorded[0].outcome, "not_at_dialog");
    assert_eq!(recorded[0].fingerprint, "9f86d081884c7d65");
}

#[test]
fn a_forwarded_answer_carries_its_data_on_standard_input_and_an_old_remote_slate_is_named() {
    use slate::answers::ErrorCode;
    use slate::remote::forward;

    let temp = tempfile::tempdir().unwrap();
    let args = temp.path().join("args");
    let input = temp.path().join("input");
    // What an older Slate says of a subcommand it does not have (clap's words), after `ssh`
    // passed its input on.
    let program = stand_in_ssh(
        &temp.path().join("bin"),
        &format!(
            "for arg in \"$@\"; do echo \"$arg\"; done > '{}'\ncat > '{}'\n\
             echo \"error: unrecognized subcommand 'remote-call'\" >&2\nexit 2\n",
            args.display(),
            input.display()
        ),
    );
    let options = LinkOptions {
        ssh: program.into(),
        timing: fast(),
    };
    let remote = entry("box", "box.example", &[]);
    let error = forward::respond(&remote, &options, "s1.x", &approve_seen()).unwrap_err();
    assert_eq!(error.code, ErrorCode::CannotType, "{error}");
    assert!(
        error
            .message
            .starts_with("the slate on box is older than this one"),
        "{error}"
    );
    assert!(error.message.contains("update it there"), "{error}");
    let args = std::fs::read_to_string(&args).unwrap();
    assert!(
        args.ends_with("--\nbox.example\nslate\nremote-call\n"),
        "{args}"
    );
    assert!(
        !args.contains("s1.x") && !args.contains("9f86d081884c7d65"),
        "{args}"
    );
    let call: serde_json::Value = serde_json::from_slice(&std::fs::read(&input).unwrap()).unwrap();
    assert_eq!(call["call"], "respond");
    assert_eq!(call["id"], "s1.x");
    assert_eq!(call["request"]["dialog"], "9f86d081884c7d65");

    // An id with a quote never gets that far: the id check refuses it before `ssh` runs.
    std::fs::remove_file(temp.path().join("args")).unwrap();
    let error = forward::respond(&remote, &options, "s1'x", &approve_seen()).unwrap_err();
    assert_eq!(error.code, ErrorCode::BadRequest, "{error}");
    assert!(!temp.path().join("args").exists());
}

/// A ledger that keeps what it is given, to see what the one answer path records.
#[derive(Default)]
struct Kept(std::sync::Mutex<Vec<(SessionKey, slate::answers::Record)>>);

impl slate::answers::Ledger for Kept {
    fn now(&self) -> Timestamp {
        live::system_clock()
    }

    fn keep(&self, key: &SessionKey, record: &slate::answers::Record) {
        self.0.lock().unwrap().push((key.clone(), record.clone()));
    }
}

impl Kept {
    fn taken(self) -> Vec<(String, slate::answers::Record)> {
        let kept = self.0.into_inner().unwrap();
        kept.into_iter()
            .map(|(key, record)| (key.reference(), record))
            .collect()
    }
}

#[test]
fn the_one_answer_path_records_each_attempt_once_where_it_is_carried_out() {
    use slate::answers::{self, ErrorCode, RespondError, Route, Target};

    let temp = tempfile::tempdir().unwrap();
    let (program, count) = refusing_ssh(temp.path());
    let mut session = at_dialog("s1");
    session.machine = Some(machine("box"));
    let target = Target::of(&session);
    let request = approve_seen();

    // Forwarded from here: sent once, the refusal comes back, and this machine records it once,
    // under `box:s1`, with the dialog as it was shown (its screen is read there).
    let kept = Kept::default();
    let route = Route::Forward {
        entry: entry("box", "box.example", &[]),
        options: LinkOptions {
            ssh: program.into(),
            timing: fast(),
        },
        locks: Some(temp.path().join("answers")),
    };
    let error = answers::answer(route, &target, &request, &kept).unwrap_err();
    assert_eq!(error.code, ErrorCode::Unreachable, "{error}");
    assert_eq!(std::fs::read_to_string(&count).unwrap(), "run\n");
    let kept = kept.taken();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let (key, record) = &kept[0];
    assert_eq!(key, "box:s1");
    assert_eq!(record.outcome, "unreachable");
    assert_eq!(record.detail.as_deref(), Some(error.message.as_str()));
    assert_eq!(record.fingerprint, "9f86d081884c7d65");
    assert_eq!(record.summary.as_deref(), Some("Run: touch x.txt"));
    assert_eq!(record.surface, slate::answers::Surface::Api);

    // Through a running Slate, which records what it carries out itself: nothing here. (None
    // answers at this address, which is said as such.)
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = free.local_addr().unwrap();
    drop(free);
    let kept = Kept::default();
    let client = slate::client::Client::new(address, Some("0".repeat(64)));
    let error = answers::answer(Route::Server(client), &target, &request, &kept).unwrap_err();
    assert_eq!(error.code, ErrorCode::Unreachable, "{error}");
    assert!(kept.taken().is_empty());

    // Typed here, where Slate keeps no store to lock and record in: refused, recorded once as
    // this machine's session, without a summary (no screen was read).
    let here = Target {
        machine: None,
        ..target.clone()
    };
    let kept = Kept::default();
    let error = answers::answer(Route::Here { locks: None }, &here, &request, &kept).unwrap_err();
    assert_eq!(error.code, ErrorCode::Internal, "{error}");
    let kept = kept.taken();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].0, "s1");
    assert_eq!(kept[0].1.outcome, "internal");
    assert_eq!(kept[0].1.summary, None);

    // Refused before it took a route (the command line's checks of the dialog it showed):
    // recorded once too, and the refusal handed back as it was.
    let kept = Kept::default();
    let refused = RespondError::new(ErrorCode::NotAtDialog, "session s1 is at no dialog");
    let returned = answers::refuse(&target, &request, refused.clone(), &kept);
    assert_eq!(returned, refused);
    let kept = kept.taken();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].0, "box:s1");
    assert_eq!(kept[0].1.outcome, "not_at_dialog");
    assert_eq!(kept[0].1.summary.as_deref(), Some("Run: touch x.txt"));
}

/// The API forwards an answer to a remote session once, records it once under `MACHINE:ID`
/// (never as a local session's), and refuses that session's intent; each refusal in the API's
/// one error shape.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_forwards_a_remote_answer_once_and_records_it_under_its_machine() {
    use axum::http::StatusCode;

    use crate::api::{call, error_code, json, post_json};

    let temp = tempfile::tempdir().unwrap();
    let local = temp.path().join("local");
    std::fs::create_dir_all(&local).unwrap();
    let snapshot = temp.path().join("snapshot");
    std::fs::write(&snapshot, snapshot_line(&[at_dialog("s1")]) + "\n").unwrap();
    let calls = temp.path().join("calls");
    // `slate watch --json` shows one session at a dialog and stays; `slate remote-call` reads
    // the call and says what the remote's Slate would of a session no longer at it.
    let program = stand_in_ssh(
        &temp.path().join("bin"),
        &format!(
            "case \"$*\" in\n\
             *remote-call*) cat > /dev/null; echo call >> '{}'\n\
             echo '{{\"error\":{{\"code\":\"not_at_dialog\",\"message\":\"session s1 is at no dialog\"}}}}'\n\
             exit 3;;\n\
             *) cat '{}'; exec sleep 600;;\n\
             esac\n",
            calls.display(),
            snapshot.display()
        ),
    );
    let mut service = following(&local, vec![entry("box", "box", &[])]);
    service.remotes = Some(LinkOptions {
        ssh: program.into(),
        timing: fast(),
    });
    let store = local.join("slate.db");
    service.store = Some(slate::store::open(&store).unwrap());
    let (handle, thread) = live::start(service);
    tokio::task::spawn_blocking({
        let handle = handle.clone();
        move || {
            wait_for("the remote session", Duration::from_secs(30), || {
                handle
                    .live_sessions()
                    .into_iter()
                    .find(|session| session.machine.is_some())
            })
        }
    })
    .await
    .unwrap();

    let (status, body) = call(
        &handle,
        post_json(
            "/sessions/box:s1/intent",
            serde_json::json!({"state": "parked", "reason": "lunch"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(error_code(&body), "remote_session");

    let (status, body) = call(
        &handle,
        post_json(
            "/sessions/box:s1/respond",
            serde_json::json!({"action": "approve", "dialog": "9f86d081884c7d65", "surface": "window"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(error_code(&body), "not_at_dialog");
    assert_eq!(
        json(&body)["error"]["message"],
        "on box: session s1 is at no dialog"
    );
    assert_eq!(std::fs::read_to_string(&calls).unwrap(), "call\n");

    handle.shutdown();
    thread.join().unwrap();
    let store = slate::store::open(&store).unwrap();
    let key = SessionKey::new(AgentKind::CODEX, "s1");
    let recorded = store
        .answers(&key.clone().on(Some(machine("box"))), 5)
        .unwrap();
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(recorded[0].outcome, "not_at_dialog");
    assert_eq!(recorded[0].surface, slate::answers::Surface::Window);
    assert_eq!(recorded[0].summary.as_deref(), Some("Run: touch x.txt"));
    assert!(
        store.answers(&key, 5).unwrap().is_empty(),
        "never as a local one"
    );
}

/// A forwarded answer holds the session's answer lock here, as a typed one does: a second answer
/// to the same remote session while the first is out is refused before anything is sent, a
/// second one to the same dialog after it went through too, and a Slate without a store (where
/// the lock lives) forwards nothing.
#[test]
fn a_forwarded_answer_takes_the_local_lock_so_two_never_go_out_at_once() {
    use slate::answers::{self, ErrorCode, Route, Target};

    let temp = tempfile::tempdir().unwrap();
    let runs = temp.path().join("runs");
    // `slate remote-call` there takes a second and a half, then says it answered.
    let program = stand_in_ssh(
        &temp.path().join("bin"),
        &format!(
            "cat > /dev/null; echo run >> '{}'; sleep 1.5\n\
             echo '{{\"outcome\":\"answered\",\"action\":\"approve\",\"left_after_ms\":40}}'\n",
            runs.display()
        ),
    );
    let mut session = at_dialog("s1");
    session.machine = Some(machine("box"));
    let target = Target::of(&session);
    let locks = temp.path().join("answers");
    let route = |locks: Option<PathBuf>| Route::Forward {
        entry: entry("box", "box.example", &[]),
        options: LinkOptions {
            ssh: program.clone().into(),
            timing: fast(),
        },
        locks,
    };
    let results: Vec<_> = std::thread::scope(|scope| {
        let answering: Vec<_> = (0..2)
            .map(|n| {
                let (route, target) = (route(Some(locks.clone())), &target);
                scope.spawn(move || {
                    // The second starts while the first is out.
                    std::thread::sleep(Duration::from_millis(500 * n));
                    let kept = Kept::default();
                    let result = answers::answer(route, target, &approve_seen(), &kept);
                    (result, kept.taken())
                })
            })
            .collect();
        answering.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(
        std::fs::read_to_string(&runs).unwrap(),
        "run\n",
        "sent once"
    );
    // One went out and was answered; the other was refused here, whichever took the lock first.
    let (answered, refused): (Vec<_>, Vec<_>) =
        results.into_iter().partition(|(result, _)| result.is_ok());
    assert_eq!((answered.len(), refused.len()), (1, 1));
    let (first, first_kept) = &answered[0];
    assert_eq!(first.as_ref().unwrap().outcome, "answered");
    assert_eq!(first_kept[0].1.outcome, "answered");
    let (second, second_kept) = &refused[0];
    let refused = second.as_ref().unwrap_err();
    assert_eq!(refused.code, ErrorCode::AlreadyAnswered, "{refused}");
    assert!(
        refused.message.contains("box:s1"),
        "names the session with its machine: {refused}"
    );
    assert_eq!(second_kept.len(), 1, "the refusal is recorded once");
    assert_eq!(second_kept[0].0, "box:s1");
    assert_eq!(second_kept[0].1.outcome, "already_answered");

    // The same dialog again, once the first went through: refused here, not sent.
    let kept = Kept::default();
    let again = answers::answer(route(Some(locks.clone())), &target, &approve_seen(), &kept);
    assert_eq!(again.unwrap_err().code, ErrorCode::AlreadyAnswered);
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), "run\n");

    // No store, no lock: nothing is forwarded.
    let kept = Kept::default();
    let error = answers::answer(route(None), &target, &approve_seen(), &kept).unwrap_err();
    assert_eq!(error.code, ErrorCode::Internal, "{error}");
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), "run\n");
}
