//! Focus on Wayland, through Sway's IPC: the plan from facts alone (a window found by the pid of
//! the terminal that draws it, never guessed), the tree parsed with bad input refused, and for
//! real under a headless Sway with two foot windows and a kitty one (Wayland clients all):
//! `slate focus` focuses the right one, as the compositor's own tree shows, and
//! quiet-while-you-look reads the focused one.

use std::path::Path;
use std::process::{Command, Stdio};

use slate::focus::{self, strategy};
use slate::terminals::front;
use strategy::{Compositor, CompositorFacts, CompositorWindow, Facts, Looking, Plan, Step};

use super::strategy::{all_tools, host};
use super::{poll, Children};
use crate::util::needs;

const SOCKET: &str = "/run/user/1000/sway-ipc.1000.42.sock";

fn sway_env() -> strategy::Environment {
    strategy::Environment {
        wayland_display: Some("wayland-1".into()),
        swaysock: Some(SOCKET.into()),
        ..strategy::Environment::default()
    }
}

fn sway_window(id: u64, pid: u32, focused: bool) -> CompositorWindow {
    CompositorWindow {
        id,
        pid,
        app_id: "foot".into(),
        focused,
    }
}

/// The session process 100 in sh 90 in foot 80, on Sway, where foot 80 draws container 5 and
/// foot 81 container 6.
fn foot_facts(windows: Vec<CompositorWindow>) -> Facts {
    Facts {
        pid: Some(100),
        host: Some(host(
            &[(100, "codex"), (90, "sh"), (80, "foot"), (1, "systemd")],
            "/dev/pts/4",
            sway_env(),
        )),
        compositor: Some(CompositorFacts {
            compositor: Compositor::Sway,
            socket: SOCKET.into(),
            windows,
            error: None,
        }),
        tools: all_tools(),
        ..Facts::default()
    }
}

#[test]
fn on_sway_the_window_of_the_terminal_is_focused_by_its_pid_or_nothing_is() {
    let facts = foot_facts(vec![sway_window(5, 80, false), sway_window(6, 81, true)]);
    let step = Step::SwayFocus {
        socket: SOCKET.into(),
        con_id: 5,
    };
    assert_eq!(
        strategy::choose(&facts),
        Plan::Run {
            steps: vec![step.clone()],
            caveat: None
        }
    );
    assert_eq!(
        step.to_string(),
        format!("swaymsg -s {SOCKET} '[con_id=5]' focus")
    );
    assert!(matches!(strategy::looking(&facts), Looking::No(_)));
    let front = foot_facts(vec![sway_window(5, 80, true), sway_window(6, 81, false)]);
    assert!(matches!(strategy::looking(&front), Looking::Yes(_)));

    // Two windows of one foot server and nothing to tell them apart: no guess.
    let twins = foot_facts(vec![sway_window(5, 80, false), sway_window(7, 80, false)]);
    match strategy::choose(&twins) {
        Plan::Unsure { reason } => assert!(reason.contains("owns 2 Sway windows"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // No window of its own, or a tree that could not be read: it says why and does nothing.
    match strategy::choose(&foot_facts(vec![sway_window(6, 81, true)])) {
        Plan::Unsure { reason } => assert!(reason.contains("no Sway window belongs"), "{reason}"),
        other => panic!("{other:?}"),
    }
    let mut broken = foot_facts(Vec::new());
    broken.compositor.as_mut().unwrap().error = Some("swaymsg did not finish within 5 s".into());
    match strategy::choose(&broken) {
        Plan::Unsure { reason } => assert!(reason.contains("could not be listed"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(strategy::looking(&broken), Looking::Unsure(_)));
}

#[test]
fn the_sway_tree_is_read_with_floating_windows_and_bad_trees_are_refused() {
    let tree = r#"{"id":1,"type":"root","nodes":[{"id":3,"type":"output","nodes":[
        {"id":4,"type":"workspace","nodes":[{"id":5,"pid":2668,"app_id":"footA","focused":false}],
         "floating_nodes":[{"id":9,"pid":2700,"app_id":null,"focused":true}]}]}]}"#;
    assert_eq!(
        strategy::parse_sway_tree(tree).unwrap(),
        vec![
            CompositorWindow {
                id: 5,
                pid: 2668,
                app_id: "footA".into(),
                focused: false
            },
            CompositorWindow {
                id: 9,
                pid: 2700,
                app_id: String::new(),
                focused: true
            },
        ]
    );
    for bad in ["", "[]", "{\"id\":", "null", "\u{0}\u{1}"] {
        assert!(strategy::parse_sway_tree(bad).is_err(), "{bad:?}");
    }
    let deep = format!("{}{}", "{\"nodes\":[".repeat(40), "]}".repeat(40));
    assert!(strategy::parse_sway_tree(&deep)
        .unwrap_err()
        .contains("deeper"));
    let deeper = format!("{}{}", "{\"nodes\":[".repeat(10_000), "]}".repeat(10_000));
    assert!(
        strategy::parse_sway_tree(&deeper).is_err(),
        "JSON's own depth limit holds"
    );
    // A pid past u32 matches no process.
    let odd = r#"{"id":2,"pid":99999999999,"focused":true}"#;
    assert_eq!(strategy::parse_sway_tree(odd).unwrap()[0].pid, 0);
}

/// The user a headless Sway runs as: Sway refuses to start as root.
const SWAY_USER: &str = "slate-sway-test";

/// A headless Sway session run as [`SWAY_USER`] in a private runtime folder, ended (with its
/// clients) when dropped.
struct Sway {
    // Fields drop in order: the session ends before its folder goes.
    children: Children,
    socket: String,
    runtime: tempfile::TempDir,
}

impl Sway {
    fn start() -> Sway {
        needs(&["sway", "swaymsg", "foot", "runuser", "useradd"]);
        let exists = Command::new("id")
            .arg(SWAY_USER)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if !exists {
            let made = Command::new("useradd")
                .args([
                    "--system",
                    "--no-create-home",
                    "--shell",
                    "/bin/sh",
                    SWAY_USER,
                ])
                .status()
                .expect("useradd runs");
            assert!(
                made.success(),
                "useradd {SWAY_USER} failed (the slow tier runs as root)"
            );
        }
        let runtime = tempfile::tempdir().unwrap();
        std::fs::write(
            runtime.path().join("config"),
            "output HEADLESS-1 resolution 1280x800\n",
        )
        .unwrap();
        let owned = Command::new("chown")
            .args(["-R", SWAY_USER])
            .arg(runtime.path())
            .status()
            .expect("chown runs");
        assert!(owned.success());
        let log = std::fs::File::create(runtime.path().join("sway.log")).unwrap();
        let sway = as_user(runtime.path(), None)
            .args([
                "WLR_BACKENDS=headless",
                "WLR_LIBINPUT_NO_DEVICES=1",
                "WLR_RENDERER=pixman",
                "sway",
                "-c",
            ])
            .arg(runtime.path().join("config"))
            .stderr(log)
            .spawn()
            .expect("sway starts");
        let children = Children(vec![sway]);
        let folder = runtime.path().to_path_buf();
        let socket = super::poll_until(|| {
            let socket = std::fs::read_dir(&folder)
                .ok()?
                .flatten()
                .map(|entry| entry.path())
                .find(|path| {
                    path.file_name()
                        .is_some_and(|name| name.to_string_lossy().starts_with("sway-ipc."))
                })?;
            folder.join("wayland-1").exists().then_some(socket)
        })
        .unwrap_or_else(|| {
            let said = std::fs::read_to_string(folder.join("sway.log")).unwrap_or_default();
            panic!("Sway made no IPC socket and Wayland display in time; it said: {said}")
        });
        Sway {
            children,
            socket: socket.to_string_lossy().into_owned(),
            runtime,
        }
    }

    /// Starts `foot -a APP_ID` running `sleep`, and returns the sleep's pid once its window is
    /// in Sway's tree.
    fn foot(&mut self, app_id: &str) -> u32 {
        self.terminal(app_id, &["foot", "-a", app_id])
    }

    /// Starts kitty as a Wayland client (class APP_ID, no remote control) running `sleep`, and
    /// returns the sleep's pid once its window is in Sway's tree.
    fn kitty(&mut self, app_id: &str) -> u32 {
        let args = [
            "kitty",
            "--config",
            "NONE",
            "-o",
            "linux_display_server=wayland",
        ];
        self.terminal(app_id, &[&args[..], &["--class", app_id]].concat())
    }

    /// Starts the terminal `program` (its arguments up to the command) running `sleep`, and
    /// returns the sleep's pid once the window `app_id` is in Sway's tree.
    fn terminal(&mut self, app_id: &str, program: &[&str]) -> u32 {
        let terminal = as_user(self.runtime.path(), Some(&self.socket))
            .args(program)
            .args(["sh", "-c", "exec sleep 300"])
            .spawn()
            .expect("the terminal starts");
        let runuser = terminal.id();
        self.children.0.push(terminal);
        poll("the terminal's window in Sway's tree", || {
            let window = self
                .windows()
                .into_iter()
                .find(|window| window.app_id == app_id)?;
            let table = slate::sources::processes::scan_processes();
            let under = |parent: u32, name: Option<&str>| {
                table
                    .processes
                    .iter()
                    .find(|process| {
                        process.ppid == Some(parent) && name.is_none_or(|name| process.name == name)
                    })
                    .map(|process| process.pid)
            };
            // runuser, then the terminal (which draws the window), then the shell that became
            // sleep (kitty keeps a helper process of its own beside it).
            let terminal = under(runuser, None).filter(|pid| *pid == window.pid)?;
            under(terminal, Some("sleep"))
        })
    }

    fn windows(&self) -> Vec<CompositorWindow> {
        let out = Command::new("swaymsg")
            .args(["-s", &self.socket, "-t", "get_tree"])
            .output()
            .expect("swaymsg runs");
        strategy::parse_sway_tree(&String::from_utf8_lossy(&out.stdout)).unwrap_or_default()
    }

    fn focused(&self) -> Option<String> {
        self.windows()
            .into_iter()
            .find(|window| window.focused)
            .map(|window| window.app_id)
    }
}

impl Drop for Sway {
    fn drop(&mut self) {
        // Sway ends its clients as it exits; the children's own drop then finds them gone.
        let _ = Command::new("swaymsg")
            .args(["-s", &self.socket, "exit"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// `runuser -u SWAY_USER -- env -i …` with the session's runtime folder, and its IPC socket and
/// Wayland display when given (what a client of the session inherits).
fn as_user(runtime: &Path, socket: Option<&str>) -> Command {
    let mut command = Command::new("runuser");
    command
        .args(["-u", SWAY_USER, "--", "env", "-i"])
        .arg(format!(
            "PATH={}",
            std::env::var("PATH").unwrap_or_default()
        ))
        .arg(format!("HOME={}", runtime.display()))
        .arg(format!("XDG_RUNTIME_DIR={}", runtime.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(socket) = socket {
        command
            .arg("WAYLAND_DISPLAY=wayland-1")
            .arg(format!("SWAYSOCK={socket}"));
    }
    command
}

#[test]
#[ignore = "slow tier: needs sway, foot, kitty and runuser, and root to make the user Sway runs as"]
fn under_a_headless_sway_focus_moves_to_the_right_terminal_and_looking_follows_it() {
    needs(&["kitty"]);
    let mut sway = Sway::start();
    let first = sway.foot("slate-foot-a");
    let second = sway.foot("slate-foot-b");
    let third = sway.kitty("slate-kitty-c");
    // The newest window has the focus; focusing the others has to move it.
    poll("the kitty to have the focus", || {
        (sway.focused().as_deref() == Some("slate-kitty-c")).then_some(())
    });
    assert!(matches!(front::looking_at(first), Looking::No(_)));

    for (pid, app_id) in [
        (first, "slate-foot-a"),
        (third, "slate-kitty-c"),
        (second, "slate-foot-b"),
    ] {
        let outcome = focus::focus(pid).expect("the terminal's window is found by its pid");
        assert!(
            matches!(outcome.done.as_slice(), [Step::SwayFocus { .. }]),
            "{outcome:?}"
        );
        // kitty draws tabs, which Sway knows nothing of: focused, with that said.
        match app_id {
            "slate-kitty-c" => assert!(
                outcome
                    .caveat
                    .as_deref()
                    .is_some_and(|c| c.contains("tabs")),
                "{outcome:?}"
            ),
            _ => assert_eq!(outcome.caveat, None),
        }
        poll("the compositor's tree to show the focus moved", || {
            (sway.focused().as_deref() == Some(app_id)).then_some(())
        });
        // kitty without remote control cannot say which of its tabs is in front: notified.
        match app_id {
            "slate-kitty-c" => assert!(matches!(front::looking_at(pid), Looking::Unsure(_))),
            _ => assert!(matches!(front::looking_at(pid), Looking::Yes(_))),
        }
    }
    assert!(matches!(front::looking_at(first), Looking::No(_)));
}
