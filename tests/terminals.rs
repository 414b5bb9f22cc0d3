//! Reading sensed terminals, one module per concern: where a process's pane is
//! (`locating`, from the environments recorded in real tmux and kitty panes), the tools' outputs
//! read (`outputs`: recorded tmux and kitty outputs, WezTerm's documented JSON), a real private
//! tmux server read for real (`tmux`: panes in one call, a pane gone, a server that does not
//! answer), kitty's remote-control socket spoken to by a stand-in that answers as the recorded
//! kitty did, or never (`kitty`), the accessibility bus read for real (`accessibility`) and
//! against a stand-in application that answers as no terminal does (`hostile_bus`), and here the
//! live service following a dialog in a real tmux pane, with the helpers the modules share.

mod accessibility;
pub(crate) mod desktop;
mod hostile_bus;
mod kitty;
mod locating;
mod outputs;
mod servers;
mod tmux;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use slate::agents::screens::ScreenKind;
use slate::model::{AgentKind, SessionKey, TerminalKind, Timestamp};
use slate::terminals::{Address, Job, Outcome};

use crate::util::{needs, Tmux};

/// Held by the tests that keep the accessibility bus busy (the live xfce4-terminal and the
/// stand-in applications): one at a time, so that the 5,000-object walk of one does not starve
/// the other's terminal of the time it needs to start within its deadline.
pub(crate) fn one_bus_test_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static BUS_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    BUS_TESTS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(crate) fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(path)
}

fn text(path: &str) -> String {
    std::fs::read_to_string(fixture(path)).unwrap_or_else(|err| panic!("{path}: {err}"))
}

pub(crate) fn clock() -> Timestamp {
    Timestamp::from_millis(1_800_000_000_000)
}

pub(crate) fn job(agent: AgentKind, id: &str, address: Address) -> Job {
    Job {
        key: SessionKey::new(agent, id),
        address,
        clues: Default::default(),
    }
}

/// The screen kind and summary of each outcome, by session id; a failure as `Err(why)`.
pub(crate) fn readings(
    outcomes: Vec<Outcome>,
) -> BTreeMap<String, Result<(ScreenKind, Option<String>), String>> {
    outcomes
        .into_iter()
        .map(|outcome| match outcome {
            Outcome::Read { key, sensed, .. } => {
                assert_eq!(sensed.at, clock());
                (
                    key.id.as_str().to_string(),
                    Ok((sensed.screen.kind, sensed.screen.summary)),
                )
            }
            Outcome::Failed { key, why, .. } => (key.id.as_str().to_string(), Err(why)),
        })
        .collect()
}

/// A Codex session in `folder`, in the middle of an escalated `exec_command` that waits for
/// approval, written at `at` the way Codex 0.171.0 writes its rollout.
pub(crate) fn codex_rollout(home: &Path, folder: &Path, at: Timestamp) {
    codex_rollout_with_id(home, folder, at, "01a228e1-7d37-7ed1-9043-e56f4039d0ff");
}

pub(crate) fn codex_rollout_with_id(home: &Path, folder: &Path, at: Timestamp, id: &str) {
    let day = home.join(".codex/sessions/2026/12/01");
    std::fs::create_dir_all(&day).unwrap();
    let folder = folder.display();
    let lines = [
        format!(
            r#"{{"timestamp":"{at}","type":"session_meta","payload":{{"id":"{id}","timestamp":"{at}","cwd":"{folder}","originator":"codex_cli_rs","cli_version":"0.171.0"}}}}"#
        ),
        format!(
            r#"{{"timestamp":"{at}","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"create a probe file"}}]}}}}"#
        ),
        format!(
            r#"{{"timestamp":"{at}","type":"response_item","payload":{{"type":"function_call","name":"exec_command","arguments":"{{\"cmd\": \"touch x.txt\", \"sandbox_permissions\": \"require_escalated\"}}","call_id":"call_1"}}}}"#
        ),
    ];
    std::fs::write(
        day.join(format!("rollout-2026-12-01T00-00-00-{id}.jsonl")),
        lines.join("\n") + "\n",
    )
    .unwrap();
}

#[test]
#[ignore = "slow tier: needs tmux"]
fn the_live_service_sees_a_dialog_come_and_go_in_a_tmux_pane() {
    needs(&["tmux"]);
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    let folder = temp.path().join("acme-api");
    std::fs::create_dir_all(&folder).unwrap();
    let folder = std::fs::canonicalize(&folder).unwrap();
    // A stand-in for Codex: a program named `codex` in the project's folder, in a tmux pane,
    // that shows whatever screen file it is given.
    let viewer = temp.path().join("viewer.sh");
    std::fs::write(
        &viewer,
        "while read -r f; do printf '\\033[H\\033[2J'; cat \"$f\"; done\n",
    )
    .unwrap();
    let tmux = Tmux::start_sized(
        &format!(
            "bash -c 'cd \"{}\" && exec -a codex bash \"{}\"'",
            folder.display(),
            viewer.display()
        ),
        160,
        45,
    );
    let show = |screen: &str| {
        tmux.run(&[
            "send-keys",
            "-t",
            "%0",
            &fixture(screen).display().to_string(),
            "Enter",
        ]);
    };
    codex_rollout(&home, &folder, slate::live::system_clock());
    let env = slate::sources::roots::Env {
        home: Some(home.clone()),
        ..slate::sources::roots::Env::default()
    };
    let (handle, thread) = slate::live::start(slate::live::Service {
        options: slate::engine::Options::from_env(env.clone()),
        timing: slate::live::Timing::default(),
        store: None,
        clock: slate::live::system_clock,
        settings: Default::default(),
        remotes: None,
    });
    let ours = |handle: &slate::live::Handle| {
        handle
            .live_sessions()
            .into_iter()
            .find(|session| session.folder.as_deref() == Some(&*folder.to_string_lossy()))
    };
    let wait = |what: &str, until: &dyn Fn(&slate::model::Session) -> bool| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let session = ours(&handle);
            if session.as_ref().is_some_and(until) {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "waited 20 s for {what}; the session reads {session:#?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    };
    let terminal_is = |session: &slate::model::Session| {
        session.terminal.as_ref().is_some_and(|terminal| {
            terminal.kind == TerminalKind::Tmux
                && terminal.pane.as_deref() == Some("%0")
                && terminal.sensed
        })
    };
    wait("the session in its pane, working", &|session| {
        terminal_is(session) && session.status == slate::model::Status::Working
    });
    show("screens/codex/0.171.0/permission-touch.txt");
    wait("the dialog to read Needs you", &|session| {
        session.session_state.reason.code == slate::model::ReasonCode::PermissionPrompt
            && session.session_state.reason.text == "Asks permission: Run: touch x.txt"
    });
    // Only the dialog (its kind, summary and option labels) is kept: nothing else of the screen
    // is in the session or its evidence, as the API serves them.
    let id = ours(&handle).unwrap().id.as_str().to_string();
    let served = serde_json::to_string(&handle.session(&id).expect("the session")).unwrap();
    assert!(served.contains("Run: touch x.txt"), "{served}");
    for secret in [
        "Would you like to run",
        "Create a probe file outside the sandbox",
        "Press enter to confirm",
    ] {
        assert!(!served.contains(secret), "{secret:?} is served: {served}");
    }
    // The one-shot commands read the same pane once.
    let mut engine = slate::engine::Engine::new(slate::engine::Options::from_env(env));
    let now = slate::live::system_clock();
    engine.refresh(now);
    slate::engine::sense_once(&mut engine, now, slate::live::system_clock);
    let once = engine
        .sessions()
        .into_iter()
        .find(|session| session.folder.as_deref() == Some(&*folder.to_string_lossy()))
        .expect("the one-shot read finds the session");
    assert_eq!(
        once.session_state.reason.code,
        slate::model::ReasonCode::PermissionPrompt
    );
    // `slate doctor` says how each live session's terminal is seen, or why it is not: a second
    // stand-in, outside any multiplexer, is in a plain terminal.
    let plain = temp.path().join("plain-api");
    std::fs::create_dir_all(&plain).unwrap();
    let plain = std::fs::canonicalize(&plain).unwrap();
    let second_home = temp.path().join("home");
    codex_rollout_with_id(
        &second_home,
        &plain,
        slate::live::system_clock(),
        "01a228e1-7d37-7ed1-9043-e56f4039d0aa",
    );
    let spawned = std::process::Command::new("env")
        .args(["-i", "PATH=/usr/bin:/bin", "bash", "-c"])
        .arg(format!(
            "cd '{}' && (exec -a codex sleep 600 >/dev/null 2>&1 &) ; sleep 0.2; pgrep -n -f '^codex 600'",
            plain.display()
        ))
        .output()
        .unwrap();
    let plain_pid = String::from_utf8_lossy(&spawned.stdout).trim().to_string();
    let doctor = std::process::Command::new(env!("CARGO_BIN_EXE_slate"))
        .arg("doctor")
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", temp.path().join("config"))
        .env("XDG_DATA_HOME", temp.path().join("data"))
        .env("SLATE_STANDALONE", "1")
        .env_remove("CODEX_HOME")
        .output()
        .unwrap();
    let _ = std::process::Command::new("kill").arg(&plain_pid).status();
    let doctor = String::from_utf8_lossy(&doctor.stdout).into_owned();
    assert!(
        doctor.contains("terminal: tmux pane %0, read by Slate"),
        "{doctor}"
    );
    assert!(
        doctor.contains(
            "terminal: plain terminal: start it in tmux or under `slate run` to see its prompts"
        ),
        "{doctor}"
    );
    // And where a click would take the person, or why nowhere, and whether they look at it: the
    // pane's session has no client, so nobody sees it; the plain one has no terminal at all.
    assert!(
        doctor.contains("select-pane -t %0 (note: pane "),
        "{doctor}"
    );
    assert!(
        doctor.contains("looking: not in front (no tmux client shows session"),
        "{doctor}"
    );
    assert!(
        doctor.contains("focus: nothing, not sure which window shows it: process"),
        "{doctor}"
    );
    assert!(
        doctor.contains("looking: not sure whether it is in front (process"),
        "{doctor}"
    );
    // And whether the accessibility bus could read it: not from a process with no terminal.
    assert!(
        doctor.contains(
            "accessibility: not read: its terminal application does not publish its text there"
        ),
        "{doctor}"
    );
    // Approved: the screen shows the command at work.
    show("screens/codex/0.171.0/working-sleep.txt");
    wait("the approved command to read Working", &|session| {
        session.status == slate::model::Status::Working
    });
    handle.shutdown();
    thread.join().unwrap();
}

/// A Unix listener at `path` that never accepts, with its listen queue full: a hung kitty or a
/// stopped `slate run`. The listener and the queued connections live as long as what it returns.
pub(crate) fn full_listener(path: &Path) -> Vec<std::os::fd::OwnedFd> {
    use nix::errno::Errno;
    use nix::sys::socket::{self, AddressFamily, Backlog, SockFlag, SockType, UnixAddr};
    use std::os::fd::AsRawFd;

    let address = UnixAddr::new(path).unwrap();
    let open = |flags| socket::socket(AddressFamily::Unix, SockType::Stream, flags, None).unwrap();
    let listener = open(SockFlag::SOCK_CLOEXEC);
    socket::bind(listener.as_raw_fd(), &address).unwrap();
    socket::listen(&listener, Backlog::new(0).unwrap()).unwrap();
    let mut held = vec![listener];
    // Linux queues backlog + 1 connections; the next one would block.
    for _ in 0..64 {
        let client = open(SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK);
        match socket::connect(client.as_raw_fd(), &address) {
            Ok(()) => held.push(client),
            Err(Errno::EAGAIN) => return held,
            Err(error) => panic!("filling the queue failed: {error}"),
        }
    }
    panic!("the listen queue never filled");
}

/// Runs `work` on a thread of its own and gives back what it returned, failing the test when it
/// has not returned after 10 s (the limit under test is half a second; this only keeps a hang
/// from hanging the test).
pub(crate) fn returns<T: Send + 'static>(
    what: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(work());
    });
    receiver
        .recv_timeout(std::time::Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("{what} did not return within 10 s"))
}

/// Sends `signal` (`-STOP`, `-CONT`) to process `pid`.
pub(crate) fn signal(name: &str, pid: u32) {
    std::process::Command::new("kill")
        .args([name, &pid.to_string()])
        .status()
        .expect("kill runs");
}

/// Keeps a stopped tmux server going again when the test ends however it ends, so its
/// `kill-server` is answered.
pub(crate) struct Stopped(pub(crate) u32);

impl Drop for Stopped {
    fn drop(&mut self) {
        signal("-CONT", self.0);
    }
}
