//! kitty's remote-control socket, spoken to by a stand-in that answers as the recorded kitty
//! did, or never, and sockets that accept no connection: reads, keys, the loop and the one-shot
//! read all give up in time.

use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::path::Path;

use slate::agents::screens::ScreenKind;
use slate::model::{AgentKind, TerminalKind};
use slate::terminals::{hosted, kitty, read};

use super::{clock, codex_rollout, full_listener, job, readings, returns, text};

/// A stand-in for kitty's remote-control socket: it answers `ls` and `get-text` with what the
/// real kitty answered (recorded in `fixtures/terminals/kitty/`), or, with `silent`, reads the
/// command and never answers.
fn fake_kitty(socket: &Path, silent: bool) {
    let listener = UnixListener::bind(socket).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut command = Vec::new();
            let mut byte = [0u8; 1];
            while !command.ends_with(b"\x1b\\") {
                if stream.read(&mut byte).unwrap_or(0) == 0 {
                    break;
                }
                command.push(byte[0]);
            }
            if silent {
                std::thread::sleep(std::time::Duration::from_secs(5));
                continue;
            }
            let command: serde_json::Value =
                serde_json::from_slice(&command[12..command.len() - 2]).unwrap();
            let data = match command["cmd"].as_str() {
                Some("ls") => text("terminals/kitty/ls-permission.json"),
                Some("get-text") => {
                    assert_eq!(command["payload"]["match"], "id:1");
                    assert_eq!(command["payload"]["extent"], "screen");
                    text("terminals/kitty/get-text-permission.txt")
                }
                other => panic!("unexpected command {other:?}"),
            };
            let answer = serde_json::json!({ "ok": true, "data": data });
            let _ = stream.write_all(format!("\x1bP@kitty-cmd{answer}\x1b\\").as_bytes());
        }
    });
}

#[test]
fn kitty_is_read_over_its_socket_and_a_silent_one_fails_in_time() {
    let temp = tempfile::tempdir().unwrap();
    let answering = temp.path().join("kitty.sock");
    let silent = temp.path().join("silent.sock");
    fake_kitty(&answering, false);
    fake_kitty(&silent, true);
    let at = |socket: &Path, window: &str| {
        kitty::address(format!("unix:{}", socket.display()), window.to_string())
    };
    let read = readings(read(
        vec![
            job(AgentKind::CODEX, "kitty-1", at(&answering, "1")),
            job(AgentKind::CODEX, "kitty-7", at(&answering, "7")),
            job(AgentKind::CODEX, "silent-1", at(&silent, "1")),
            job(
                AgentKind::CODEX,
                "none-1",
                at(&temp.path().join("nothing.sock"), "1"),
            ),
        ],
        clock,
    ));
    // The title says a dialog waits, and the screen is read too: its dialog is what an answer
    // checks against.
    assert_eq!(
        read["kitty-1"],
        Ok((
            ScreenKind::Permission,
            Some("Run: touch kitty-probe.txt".to_string())
        ))
    );
    assert!(read["kitty-7"]
        .clone()
        .unwrap_err()
        .contains("window 7 is gone"));
    assert!(
        read["silent-1"]
            .clone()
            .unwrap_err()
            .contains("did not answer"),
        "{:?}",
        read["silent-1"]
    );
    assert!(read["none-1"]
        .clone()
        .unwrap_err()
        .contains("no kitty listens"));
}

#[test]
fn kittys_screen_is_read_when_its_title_does_not_decide() {
    let temp = tempfile::tempdir().unwrap();
    let socket = temp.path().join("kitty.sock");
    fake_kitty(&socket, false);
    // OpenCode's title never says a dialog waits, so its screen is read; here it is the Codex
    // screen kitty recorded, which OpenCode's grammar does not know.
    let codex_screen = read(
        vec![job(
            AgentKind::OPENCODE,
            "opencode-1",
            kitty::address(format!("unix:{}", socket.display()), "1"),
        )],
        clock,
    );
    assert_eq!(
        readings(codex_screen)["opencode-1"],
        Ok((ScreenKind::Unknown, None))
    );
    // The recorded kitty screen itself reads as Codex's dialog.
    let screen = text("terminals/kitty/get-text-permission.txt");
    let reading = slate::agents::screens::read_screen(AgentKind::CODEX, &screen);
    assert_eq!(
        reading.dialog().map(|dialog| dialog.summary.as_str()),
        Some("Run: touch kitty-probe.txt")
    );
}

// See: issue 20, item 4 (a socket that accepts no connection froze every terminal read and every
// answer: connecting had no deadline).
#[test]
fn a_socket_that_accepts_no_connection_fails_reads_and_keys_instead_of_hanging() {
    use slate::agents::keys::Key;

    use std::os::unix::fs::PermissionsExt;

    let temp = tempfile::tempdir().unwrap();
    // A hosted terminal's socket is followed only in a private folder of the user's.
    std::fs::set_permissions(temp.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let kitty = temp.path().join("kitty.sock");
    let hosted = temp.path().join("4242.sock");
    let _kitty_queue = full_listener(&kitty);
    let _hosted_queue = full_listener(&hosted);
    let kitty_at = kitty::address(format!("unix:{}", kitty.display()), "1");
    let hosted_at = hosted::address(hosted.display().to_string());
    let jobs = vec![
        job(AgentKind::CODEX, "kitty-1", kitty_at.clone()),
        job(AgentKind::CODEX, "hosted-1", hosted_at.clone()),
    ];
    let read = readings(returns("the read", move || read(jobs, clock)));
    for id in ["kitty-1", "hosted-1"] {
        let why = read[id].clone().expect_err("nothing is read");
        assert!(
            why.contains("accepted no connection within 500 ms"),
            "{id}: {why}"
        );
    }
    // The one read an answer checks against, and the keys, give up the same way.
    let address = kitty_at.clone();
    let screen = returns("the screen read", move || {
        slate::terminals::screen_now(&address, AgentKind::CODEX)
    });
    assert!(screen.unwrap_err().contains("accepted no connection"));
    for address in [kitty_at, hosted_at] {
        let typed = returns("the keys", move || {
            slate::terminals::typing::send(&address, &[Key::Digit(1)])
        });
        let why = typed.expect_err("no key is typed");
        assert!(why.contains("accepted no connection"), "{why}");
    }
}

// See: issue 20, item 4 ("done when": with a kitty socket that accepts nothing, the one-shot read
// and the live loop go on, and the loop does not wake more for it).
#[test]
fn a_kitty_that_accepts_nothing_stalls_neither_the_loop_nor_the_one_shot_read() {
    use std::os::unix::fs::PermissionsExt;

    let temp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(temp.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let home = temp.path().join("home");
    let socket = temp.path().join("kitty.sock");
    let _queue = full_listener(&socket);
    let folder = temp.path().join("project");
    std::fs::create_dir_all(&folder).unwrap();
    let folder = std::fs::canonicalize(&folder).unwrap();
    // A stand-in for Codex in a window of that kitty, as its environment says.
    let mut codex = std::process::Command::new("env")
        .args([
            "-i",
            "PATH=/usr/bin:/bin",
            "KITTY_WINDOW_ID=1",
            &format!("KITTY_LISTEN_ON=unix:{}", socket.display()),
            "bash",
            "-c",
            &format!("cd '{}' && exec -a codex sleep 600", folder.display()),
        ])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    codex_rollout(&home, &folder, slate::live::system_clock());
    let env = slate::sources::roots::Env {
        home: Some(home.clone()),
        ..slate::sources::roots::Env::default()
    };
    let options = slate::engine::Options::from_env(env);
    // The one-shot read gives up on the window and says why.
    let once = options.clone();
    let note = returns("the one-shot read", move || {
        let mut engine = slate::engine::Engine::new(once);
        let now = slate::live::system_clock();
        engine.refresh(now);
        slate::engine::sense_once(&mut engine, now, slate::live::system_clock);
        engine
            .sessions()
            .into_iter()
            .find_map(|session| session.terminal?.note)
    });
    let note = note.expect("the session's terminal is said");
    assert!(note.contains("accepted no connection"), "{note}");
    let (handle, thread) = slate::live::start(slate::live::Service {
        options,
        timing: slate::live::Timing::default(),
        store: None,
        clock: slate::live::system_clock,
        settings: Default::default(),
        remotes: None,
    });
    let said = |handle: &slate::live::Handle| {
        handle.live_sessions().into_iter().find_map(|session| {
            let terminal = session.terminal?;
            (terminal.kind == TerminalKind::Kitty)
                .then_some(terminal.note)
                .flatten()
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !said(&handle).is_some_and(|note| note.contains("accepted no connection")) {
        assert!(
            std::time::Instant::now() < deadline,
            "waited 20 s for the kitty window to be found unreadable: {:#?}",
            handle.live_sessions()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let before = handle.health().wakeups;
    std::thread::sleep(std::time::Duration::from_secs(3));
    let woken = handle.health().wakeups - before;
    handle.shutdown();
    thread.join().unwrap();
    let _ = codex.kill();
    let _ = codex.wait();
    assert!(woken <= 30, "the loop woke {woken} times in 3 s");
}
