//! Focusing for real on an X11 desktop (Xvfb with openbox and xterms): the xterm of the process
//! activated, and the xterm of a tmux client raised.

use slate::focus::{self, strategy, strategy::Step, strategy::X11Tool};
use slate::terminals::front;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;

use super::{poll, poll_until, unique_name, Children, TmuxServer, DEADLINE};
use crate::util::needs;

fn x11_command(program: &str, display: &str, home: &std::path::Path) -> Command {
    let mut command = Command::new(program);
    // A clean environment: the test runner's own TMUX or KITTY_* must not leak into the xterms.
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("DISPLAY", display)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

fn child_of(parent: u32) -> Option<u32> {
    let table = slate::sources::processes::scan_processes();
    table
        .processes
        .iter()
        .find(|process| process.ppid == Some(parent))
        .map(|process| process.pid)
}

fn active_window(display: &str) -> Option<u64> {
    let out = Command::new("xdotool")
        .arg("getactivewindow")
        .env("DISPLAY", display)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// What a `Desktop` runs: the X server, the window manager, the terminal and the tools that read
/// and activate windows.
const X11_DESKTOP: &[&str] = &["Xvfb", "openbox", "xterm", "xdotool", "wmctrl", "xprop"];

/// A virtual X11 desktop: Xvfb on a free display, with openbox managing it. Everything started on
/// it is killed when it is dropped.
struct Desktop {
    // Fields drop in order: the processes go before their temporary home.
    children: Children,
    display: String,
    home: tempfile::TempDir,
}

impl Desktop {
    fn start() -> Desktop {
        needs(X11_DESKTOP);
        let home = tempfile::tempdir().unwrap();
        let mut children = Children(Vec::new());

        // Xvfb picks a free display itself and writes its number to the given descriptor.
        let mut xvfb = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "800x600x24",
                "-nolisten",
                "tcp",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb starts");
        let stdout = xvfb.stdout.take().unwrap();
        children.0.push(xvfb);
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = sender.send(line);
        });
        let number = receiver
            .recv_timeout(DEADLINE)
            .expect("Xvfb reports its display");
        assert!(number.trim().parse::<u32>().is_ok(), "Xvfb said {number:?}");
        let display = format!(":{}", number.trim());

        // Xvfb names its display a moment before every client can connect, so wait until one
        // does; openbox gives up at once when it cannot.
        let accepts = || {
            Command::new("xprop")
                .arg("-root")
                .env("DISPLAY", &display)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .ok()?
                .success()
                .then_some(())
        };
        poll_until(accepts).unwrap_or_else(|| panic!("display {display} accepts no client"));
        // Openbox sometimes fails to open a display that just came up, and then exits at once;
        // it is started again until it manages the display or the deadline passes.
        let start_openbox = || {
            x11_command("openbox", &display, home.path())
                .spawn()
                .expect("openbox starts")
        };
        children.0.push(start_openbox());
        let managed = || {
            if let Some(openbox) = children.0.last_mut() {
                if openbox.try_wait().ok().flatten().is_some() {
                    *openbox = start_openbox();
                }
            }
            let out = Command::new("xprop")
                .args(["-root", "_NET_SUPPORTING_WM_CHECK"])
                .env("DISPLAY", &display)
                .stderr(Stdio::null())
                .output()
                .ok()?;
            String::from_utf8_lossy(&out.stdout)
                .contains("window id")
                .then_some(())
        };
        if poll_until(managed).is_none() {
            // Openbox 3.6 writes its messages to its own log under the cache folder.
            let log = std::fs::read_to_string(home.path().join(".cache/openbox/openbox.log"))
                .unwrap_or_default();
            let root = Command::new("xprop")
                .arg("-root")
                .env("DISPLAY", &display)
                .output()
                .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
                .unwrap_or_default();
            let states: Vec<String> = children
                .0
                .iter_mut()
                .map(|child| format!("{}: {:?}", child.id(), child.try_wait()))
                .collect();
            panic!(
                "openbox did not manage display {display} in time; processes {states:?}; \
                 openbox said {log:?}; the root window has {} properties",
                root.lines().count()
            );
        }
        Desktop {
            display,
            home,
            children,
        }
    }

    /// Starts `xterm -e <args>` and returns its pid and its window once it is managed.
    fn xterm(&mut self, args: &[&str]) -> (u32, u64) {
        let display = self.display.clone();
        let home = self.home.path().to_path_buf();
        let start = || {
            x11_command("xterm", &display, &home)
                .arg("-e")
                .args(args)
                .spawn()
                .expect("xterm starts")
        };
        self.children.0.push(start());
        let children = &mut self.children;
        poll("the xterm's window", || {
            let xterm = children.0.last_mut()?;
            // Like openbox, an xterm that could not open the display exits; start it again.
            if xterm.try_wait().ok().flatten().is_some() {
                *xterm = start();
            }
            let pid = xterm.id();
            let out = Command::new("wmctrl")
                .arg("-lp")
                .env("DISPLAY", &display)
                .output()
                .ok()?;
            strategy::parse_wmctrl(&String::from_utf8_lossy(&out.stdout))
                .into_iter()
                .find(|window| window.pid == pid)
                .map(|window| (pid, window.id))
        })
    }

    /// Gives `window` the focus with wmctrl (the test's hand) and waits until it has it.
    fn activate(&self, window: u64) {
        let status = Command::new("wmctrl")
            .args(["-i", "-a", &format!("{window:#x}")])
            .env("DISPLAY", &self.display)
            .status()
            .expect("wmctrl runs");
        assert!(status.success());
        self.wait_active(window);
    }

    fn wait_active(&self, window: u64) {
        poll("the window to become the active one", || {
            (active_window(&self.display) == Some(window)).then_some(())
        });
    }

    fn activation(&self, window: u64) -> Step {
        Step::X11Activate {
            display: self.display.clone(),
            window,
            tool: X11Tool::Wmctrl,
        }
    }
}

#[test]
#[ignore = "slow tier: needs Xvfb, openbox, xterm, xdotool, wmctrl and xprop"]
fn x11_focus_activates_the_xterm_of_the_process() {
    needs(X11_DESKTOP);
    let mut desktop = Desktop::start();
    let mut terms = Vec::new();
    for seconds in ["300", "301"] {
        let (xterm_pid, window) = desktop.xterm(&["sleep", seconds]);
        let sleep_pid = poll("the xterm's sleep", || child_of(xterm_pid));
        terms.push((sleep_pid, window));
    }
    // Focus the second, then the first, so each call has to move the focus.
    for (sleep_pid, window) in [terms[1], terms[0]] {
        let outcome = focus::focus(sleep_pid).expect("the xterm is found");
        assert_eq!(outcome.done, vec![desktop.activation(window)]);
        assert_eq!(outcome.caveat, None);
        desktop.wait_active(window);
    }
}

#[test]
#[ignore = "slow tier: needs tmux, Xvfb, openbox, xterm, xdotool, wmctrl and xprop"]
fn tmux_focus_raises_the_xterm_of_the_attached_client() {
    needs(&[
        "tmux", "Xvfb", "openbox", "xterm", "xdotool", "wmctrl", "xprop",
    ]);
    let mut desktop = Desktop::start();
    let server = TmuxServer {
        name: unique_name(),
    };
    server.tmux(&[
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "work",
        "-x",
        "80",
        "-y",
        "24",
    ]);
    let pid: u32 = server
        .tmux(&[
            "new-window",
            "-d",
            "-t",
            "work",
            "-P",
            "-F",
            "#{pane_pid}",
            "exec sleep 300",
        ])
        .parse()
        .expect("tmux prints the pane's pid");
    let (_, client_window) = desktop.xterm(&["tmux", "-L", &server.name, "attach", "-t", "work"]);
    poll("the client to attach", || {
        (server.tmux(&["list-clients", "-F", "#{client_session}"]) == "work").then_some(())
    });
    // Another xterm in front, so raising the client's has to move the focus.
    let (_, other_window) = desktop.xterm(&["sleep", "300"]);
    desktop.activate(other_window);

    let outcome = focus::focus(pid).expect("the pane and the client's xterm are found");
    assert_eq!(outcome.done.len(), 3, "{outcome:?}");
    assert_eq!(outcome.done[2], desktop.activation(client_window));
    assert_eq!(outcome.caveat, None);
    desktop.wait_active(client_window);
    assert_eq!(
        server.tmux(&["list-clients", "-F", "#{client_session}:#{window_index}"]),
        "work:1"
    );
}

#[test]
#[ignore = "slow tier: needs tmux, Xvfb, openbox, xterm, xdotool, wmctrl and xprop"]
fn quiet_while_looking_holds_back_only_the_session_in_the_focused_windows_active_pane() {
    needs(&[
        "tmux", "Xvfb", "openbox", "xterm", "xdotool", "wmctrl", "xprop",
    ]);
    let mut desktop = Desktop::start();
    let server = TmuxServer {
        name: unique_name(),
    };
    // Two tmux sessions, each one pane running a stand-in agent, each shown by a tmux client in
    // an xterm of its own.
    let mut pids = Vec::new();
    let mut windows = Vec::new();
    for name in ["alpha", "beta"] {
        let pid: u32 = server
            .tmux(&[
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                name,
                "-x",
                "80",
                "-y",
                "24",
                "-P",
                "-F",
                "#{pane_pid}",
                "exec sleep 300",
            ])
            .parse()
            .expect("tmux prints the pane's pid");
        let (_, window) = desktop.xterm(&["tmux", "-L", &server.name, "attach", "-t", name]);
        pids.push(pid);
        windows.push(window);
    }
    poll("both clients to attach", || {
        let sessions = server.tmux(&["list-clients", "-F", "#{client_session}"]);
        (sessions.lines().count() == 2).then_some(())
    });
    let plan = |pid: u32| {
        let mut session = crate::util::waiting("acme", &pid.to_string());
        session.pid = Some(pid);
        slate::policy::notifications::NotificationPlan {
            title: String::new(),
            body: String::new(),
            click: slate::policy::notifications::Click::OpenWindow,
            offer: None,
            sessions: vec![session],
        }
    };

    desktop.activate(windows[0]);
    // alpha's pane is the one shown in the focused window: no notification for it; beta's
    // xterm is behind: notified.
    assert_eq!(
        front::looking_at(pids[0]),
        strategy::Looking::Yes("pane alpha:0.0 shows in the focused window".into())
    );
    assert!(front::seen_already(&plan(pids[0])).is_some());
    assert!(matches!(
        front::looking_at(pids[1]),
        strategy::Looking::No(_)
    ));
    assert_eq!(front::seen_already(&plan(pids[1])), None);

    // The other way round once beta's xterm has the focus.
    desktop.activate(windows[1]);
    assert!(front::seen_already(&plan(pids[1])).is_some());
    assert_eq!(front::seen_already(&plan(pids[0])), None);

    // A new window in beta hides its pane, though its xterm keeps the focus: notified again.
    server.tmux(&["new-window", "-t", "beta", "exec sleep 300"]);
    match front::looking_at(pids[1]) {
        strategy::Looking::No(why) => assert!(why.contains("not the one"), "{why}"),
        other => panic!("a hidden pane is not in front: {other:?}"),
    }
    assert_eq!(front::seen_already(&plan(pids[1])), None);
}

#[test]
#[ignore = "slow tier: needs kitty, Xvfb, openbox, xterm, xdotool, wmctrl and xprop"]
fn quiet_while_looking_reads_kittys_own_focus_of_os_windows_tabs_and_windows() {
    needs(&[
        "kitty", "Xvfb", "openbox", "xterm", "xdotool", "wmctrl", "xprop",
    ]);
    let mut desktop = Desktop::start();
    let socket = desktop.home.path().join("kitty.sock");
    let listen_on = format!("unix:{}", socket.display());
    desktop.children.0.push(
        x11_command("kitty", &desktop.display, desktop.home.path())
            .args(["--config", "NONE", "-o", "allow_remote_control=yes"])
            .args(["-o", "linux_display_server=x11", "--listen-on", &listen_on])
            .args(["sleep", "300"])
            .spawn()
            .expect("kitty starts"),
    );
    // The test's hand: kitty's own remote control, as a person's keys would do.
    let kitty = |args: &[&str]| {
        let out = x11_command("kitty", &desktop.display, desktop.home.path())
            .args(["@", "--to", &listen_on])
            .args(args)
            .stdout(Stdio::piped())
            .output()
            .expect("kitty @ runs");
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    // Window 1 (pid of its sleep, and its OS window) once kitty listens.
    let list = || -> Option<serde_json::Value> { serde_json::from_str(&kitty(&["ls"])?).ok() };
    poll("kitty to listen", || {
        list().filter(|ls| ls[0]["platform_window_id"].as_u64() > Some(0))
    });
    // A second OS window with window 2, and in it a second tab with window 3.
    kitty(&["launch", "--type=os-window", "sleep", "301"]).expect("an OS window opens");
    let tab = kitty(&["launch", "--type=tab", "--match", "id:2", "sleep", "302"]);
    assert_eq!(tab.as_deref(), Some("3"), "the tab's window");
    let ls = poll("three windows with OS windows", || {
        let ls = list()?;
        let os = ls.as_array()?;
        (os.len() == 2
            && os
                .iter()
                .all(|o| o["platform_window_id"].as_u64() > Some(0)))
        .then_some(ls)
    });
    let os_window = |n: usize| ls[n]["platform_window_id"].as_u64().unwrap();
    let pid = |window: u64| {
        let found = ls
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|os| os["tabs"].as_array().unwrap())
            .flat_map(|tab| tab["windows"].as_array().unwrap())
            .find(|w| w["id"] == window)
            .and_then(|w| w["pid"].as_u64())
            .expect("the window's process");
        u32::try_from(found).unwrap()
    };
    let (one, two, three) = (pid(1), pid(2), pid(3));
    let in_front = |pid: u32| matches!(front::looking_at(pid), strategy::Looking::Yes(_));

    // OS window 1 focused: its only window is in front.
    desktop.activate(os_window(0));
    assert_eq!(
        front::looking_at(one),
        strategy::Looking::Yes("kitty window 1 is the one in front".into())
    );
    assert!(!in_front(two) && !in_front(three));

    // OS window 2 focused: its active tab (window 3's) is in front, not the tab behind it.
    desktop.activate(os_window(1));
    poll("kitty to see the focus", || in_front(three).then_some(()));
    assert!(!in_front(one) && !in_front(two));
    let mut session = crate::util::waiting("acme", &three.to_string());
    session.pid = Some(three);
    let plan = slate::policy::notifications::NotificationPlan {
        title: String::new(),
        body: String::new(),
        click: slate::policy::notifications::Click::OpenWindow,
        offer: None,
        sessions: vec![session],
    };
    assert!(front::seen_already(&plan).is_some(), "held back");

    // The other tab chosen: window 2 in front, window 3 behind (and notified).
    kitty(&["focus-tab", "--match", "id:2"]).expect("the tab is focused");
    poll("the tab to come in front", || in_front(two).then_some(()));
    assert!(!in_front(three));
    assert_eq!(front::seen_already(&plan), None);

    // Another program's window focused: no kitty window is in front.
    let (_, xterm) = desktop.xterm(&["sleep", "300"]);
    desktop.activate(xterm);
    poll("kitty to lose the focus", || (!in_front(two)).then_some(()));
    match front::looking_at(one) {
        strategy::Looking::No(why) => assert!(why.contains("kitty window 1"), "{why}"),
        other => panic!("a kitty window behind an xterm: {other:?}"),
    }
}
