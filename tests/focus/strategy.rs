//! The choice, as a table: facts in, a plan out (`focus::strategy::choose`), the steps as the
//! commands they run, and the tools' output parsed with garbage skipped.

use std::process::{Command, Stdio};

use slate::focus::{self, strategy};
use strategy::{
    Ancestor, Environment, Facts, Host, MacTerminal, Plan, Platform, Step, TmuxClient, TmuxFacts,
    TmuxPane, Tools, X11Display, X11Tool, X11Window,
};

use super::Children;

fn chain(links: &[(u32, &str)]) -> Vec<Ancestor> {
    links
        .iter()
        .enumerate()
        .map(|(index, (pid, name))| Ancestor {
            pid: *pid,
            ppid: links.get(index + 1).map(|(ppid, _)| *ppid),
            name: name.to_string(),
            cmd: vec![name.to_string()],
        })
        .collect()
}

pub(super) fn host(links: &[(u32, &str)], tty: &str, env: Environment) -> Host {
    Host {
        pid: links[0].0,
        ancestors: chain(links),
        tty: Some(tty.to_string()),
        env,
    }
}

pub(super) fn x11_env() -> Environment {
    Environment {
        display: Some(":0".into()),
        ..Environment::default()
    }
}

fn tmux_env(pane: &str) -> Environment {
    Environment {
        tmux: Some("/tmp/tmux-1000/default,4100,0".into()),
        tmux_pane: Some(pane.into()),
        display: Some(":0".into()),
        ..Environment::default()
    }
}

pub(super) fn all_tools() -> Tools {
    Tools {
        tmux: true,
        xdotool: true,
        wmctrl: true,
        kitty: true,
        wezterm: true,
        osascript: false,
        swaymsg: true,
        hyprctl: true,
        dbus_send: true,
    }
}

pub(super) fn window(id: u64, pid: u32) -> X11Window {
    X11Window {
        id,
        pid,
        title: String::new(),
    }
}

pub(super) fn display(windows: Vec<X11Window>) -> Vec<X11Display> {
    vec![X11Display {
        name: ":0".into(),
        windows,
        error: None,
        active: None,
    }]
}

/// A session process 100 in bash 90 in xterm 80, on display :0 where xterm 80 and 81 have one
/// window each.
pub(super) fn xterm_facts() -> Facts {
    Facts {
        pid: Some(100),
        host: Some(host(
            &[(100, "claude"), (90, "bash"), (80, "xterm"), (1, "systemd")],
            "/dev/pts/4",
            x11_env(),
        )),
        displays: display(vec![window(0x200001, 80), window(0x400001, 81)]),
        tools: all_tools(),
        ..Facts::default()
    }
}

pub(super) fn pane(tty: &str, id: &str, session: &str, window_index: &str) -> TmuxPane {
    TmuxPane {
        tty: tty.into(),
        pane_id: id.into(),
        session: session.into(),
        window_index: window_index.into(),
        pane_index: "0".into(),
        shown: true,
    }
}

/// A tmux client on /dev/pts/1, pid 300, in xterm 81 (which owns window 0x400001).
pub(super) fn client(session: &str) -> TmuxClient {
    TmuxClient {
        tty: "/dev/pts/1".into(),
        pid: 300,
        session: session.into(),
        host: Some(host(
            &[
                (300, "tmux: client"),
                (290, "bash"),
                (81, "xterm"),
                (1, "init"),
            ],
            "/dev/pts/1",
            x11_env(),
        )),
    }
}

/// The session process 200 runs in pane %3 (window work:1) of the default server.
pub(super) fn tmux_facts(clients: Vec<TmuxClient>) -> Facts {
    Facts {
        pid: Some(200),
        host: Some(host(
            &[
                (200, "codex"),
                (199, "bash"),
                (4100, "tmux: server"),
                (1, "init"),
            ],
            "/dev/pts/7",
            tmux_env("%3"),
        )),
        tmux: Some(TmuxFacts {
            socket: "/tmp/tmux-1000/default".into(),
            panes: vec![
                pane("/dev/pts/6", "%0", "work", "0"),
                pane("/dev/pts/7", "%3", "work", "1"),
                pane("/dev/pts/9", "%5", "play", "0"),
            ],
            clients,
            error: None,
        }),
        displays: display(vec![window(0x200001, 80), window(0x400001, 81)]),
        tools: all_tools(),
        ..Facts::default()
    }
}

fn select(pane_id: &str) -> Vec<Step> {
    let socket = "/tmp/tmux-1000/default".to_string();
    vec![
        Step::TmuxSelectWindow {
            socket: socket.clone(),
            pane_id: pane_id.into(),
        },
        Step::TmuxSelectPane {
            socket,
            pane_id: pane_id.into(),
        },
    ]
}

fn activate(window: u64) -> Step {
    Step::X11Activate {
        display: ":0".into(),
        window,
        tool: X11Tool::Wmctrl,
    }
}

enum Expect {
    /// These steps, and a caveat containing this text (or none).
    Run(Vec<Step>, Option<&'static str>),
    /// Unsure, with a reason containing this text.
    Unsure(&'static str),
}

fn cases() -> Vec<(&'static str, Facts, Expect)> {
    let mut cases = Vec::new();

    cases.push((
        "no process",
        Facts::default(),
        Expect::Unsure("no live process"),
    ));
    cases.push((
        "process gone",
        Facts {
            pid: Some(5),
            ..Facts::default()
        },
        Expect::Unsure("process 5 is gone"),
    ));

    // tmux.
    let mut steps = select("%3");
    steps.push(activate(0x400001));
    cases.push((
        "tmux pane by tty, its session shown by one client in an xterm",
        tmux_facts(vec![client("work")]),
        Expect::Run(steps, None),
    ));

    let mut steps = select("%3");
    steps.push(Step::TmuxSwitchClient {
        socket: "/tmp/tmux-1000/default".into(),
        client_tty: "/dev/pts/1".into(),
        pane_id: "%3".into(),
    });
    steps.push(activate(0x400001));
    cases.push((
        "tmux client attached to another session is switched",
        tmux_facts(vec![client("play")]),
        Expect::Run(steps, None),
    ));

    let mut facts = tmux_facts(vec![client("work")]);
    if let Some(host) = &mut facts.host {
        host.tty = Some("/dev/null".into());
    }
    cases.push((
        "tmux's variables without the pane's terminal select no pane",
        facts,
        Expect::Unsure("has no terminal"),
    ));

    cases.push((
        "tmux without clients selects the pane and says no window shows it",
        tmux_facts(vec![]),
        Expect::Run(select("%3"), Some("no tmux client is attached")),
    ));

    let mut second = client("play");
    second.tty = "/dev/pts/2".into();
    cases.push((
        "tmux with several clients on other sessions switches none",
        tmux_facts(vec![client("play"), second]),
        Expect::Run(select("%3"), Some("none was switched")),
    ));

    let mut second = client("work");
    second.tty = "/dev/pts/2".into();
    cases.push((
        "tmux with two clients on the session raises no window",
        tmux_facts(vec![client("work"), second]),
        Expect::Run(select("%3"), Some("2 tmux clients show session")),
    ));

    let mut nested = client("work");
    if let Some(host) = &mut nested.host {
        host.ancestors = chain(&[(300, "tmux"), (290, "bash"), (280, "tmux: server")]);
    }
    cases.push((
        "tmux client inside another tmux: the pane is selected, no window raised",
        tmux_facts(vec![nested]),
        Expect::Run(select("%3"), Some("runs inside another tmux")),
    ));

    let mut facts = tmux_facts(vec![client("work")]);
    facts.displays = display(vec![window(0x200001, 80)]);
    cases.push((
        "tmux client whose terminal has no window: the pane is still selected",
        facts,
        Expect::Run(select("%3"), Some("no X11 window belongs to process 300")),
    ));

    let mut facts = tmux_facts(vec![client("work")]);
    if let Some(host) = &mut facts.host {
        host.tty = Some("/dev/pts/55".into());
        host.env.tmux_pane = Some("%42".into());
    }
    cases.push((
        "tmux's variables in a terminal that is no pane: its own window is looked for, no pane",
        facts,
        Expect::Unsure("no X11 window belongs to process 200"),
    ));

    let mut facts = tmux_facts(vec![]);
    facts.tmux = None;
    facts.tools.tmux = false;
    cases.push((
        "tmux not installed",
        facts,
        Expect::Unsure("tmux is not installed"),
    ));

    // Terminal remote control.
    let mut facts = xterm_facts();
    if let Some(host) = &mut facts.host {
        host.ancestors = chain(&[(100, "claude"), (90, "zsh"), (70, "kitty"), (1, "init")]);
        host.env.kitty_window_id = Some("3".into());
        host.env.kitty_listen_on = Some("unix:/tmp/kitty-70".into());
    }
    cases.push((
        "kitty with remote control",
        facts,
        Expect::Run(
            vec![Step::KittyFocusWindow {
                listen_on: "unix:/tmp/kitty-70".into(),
                window_id: "3".into(),
            }],
            None,
        ),
    ));

    let mut facts = xterm_facts();
    if let Some(host) = &mut facts.host {
        host.env.kitty_window_id = Some("3".into());
        host.env.kitty_listen_on = Some("unix:/tmp/kitty-70".into());
    }
    cases.push((
        "a stale kitty variable under xterm is ignored",
        facts,
        Expect::Run(vec![activate(0x200001)], None),
    ));

    let mut facts = xterm_facts();
    if let Some(host) = &mut facts.host {
        host.ancestors = chain(&[(100, "claude"), (90, "bash"), (60, "wezterm-gui")]);
        host.env.wezterm_pane = Some("7".into());
    }
    facts.displays = display(vec![window(0x600001, 60)]);
    cases.push((
        "wezterm pane, then its only window",
        facts,
        Expect::Run(
            vec![
                Step::WeztermActivatePane {
                    pane_id: "7".into(),
                    socket: None,
                },
                activate(0x600001),
            ],
            Some("wezterm-gui shows tabs"),
        ),
    ));

    // X11.
    cases.push((
        "X11: the xterm found by walking up from the process",
        xterm_facts(),
        Expect::Run(vec![activate(0x200001)], None),
    ));

    let mut facts = xterm_facts();
    facts.tools.wmctrl = false;
    cases.push((
        "X11 with xdotool only",
        facts,
        Expect::Run(
            vec![Step::X11Activate {
                display: ":0".into(),
                window: 0x200001,
                tool: X11Tool::Xdotool,
            }],
            None,
        ),
    ));

    let gnome = |env: Environment, windows: Vec<X11Window>| Facts {
        pid: Some(100),
        host: Some(Host {
            pid: 100,
            ancestors: vec![
                Ancestor {
                    pid: 100,
                    ppid: Some(90),
                    name: "claude".into(),
                    cmd: vec!["claude".into()],
                },
                Ancestor {
                    pid: 90,
                    ppid: Some(50),
                    name: "bash".into(),
                    cmd: vec!["bash".into()],
                },
                Ancestor {
                    pid: 50,
                    ppid: Some(1),
                    name: "gnome-terminal-".into(),
                    cmd: vec!["/usr/libexec/gnome-terminal-server".into()],
                },
            ],
            tty: Some("/dev/pts/2".into()),
            env,
        }),
        displays: display(windows),
        tools: all_tools(),
        ..Facts::default()
    };
    cases.push((
        "X11 ambiguous: a terminal server with two windows",
        gnome(x11_env(), vec![window(0x1000, 50), window(0x2000, 50)]),
        Expect::Unsure("gnome-terminal-server (pid 50) owns 2 windows"),
    ));
    cases.push((
        "X11: $WINDOWID settles which window of the server",
        gnome(
            Environment {
                windowid: Some("8192".into()),
                ..x11_env()
            },
            vec![window(0x1000, 50), window(0x2000, 50)],
        ),
        Expect::Run(vec![activate(0x2000)], Some("the tab was not selected")),
    ));
    cases.push((
        "X11: a terminal server with one window is raised, tab not selected",
        gnome(x11_env(), vec![window(0x1000, 50)]),
        Expect::Run(vec![activate(0x1000)], Some("the tab was not selected")),
    ));

    let mut facts = xterm_facts();
    facts.displays = display(vec![window(0x400001, 81), window(0x9, 1)]);
    cases.push((
        "X11: no window on the way up (and pid 1's is never taken)",
        facts,
        Expect::Unsure("no X11 window belongs to process 100"),
    ));

    let mut facts = xterm_facts();
    facts.tools.wmctrl = false;
    facts.tools.xdotool = false;
    cases.push((
        "X11 without tools",
        facts,
        Expect::Unsure("needs wmctrl or xdotool"),
    ));

    let mut facts = xterm_facts();
    facts.displays[0].error = Some("cannot open display".into());
    cases.push((
        "X11 display that could not be listed",
        facts,
        Expect::Unsure("could not be listed"),
    ));

    // Wayland.
    let mut facts = xterm_facts();
    if let Some(host) = &mut facts.host {
        host.env = Environment {
            wayland_display: Some("wayland-0".into()),
            ..Environment::default()
        };
    }
    facts.displays.clear();
    cases.push((
        "Wayland without X11",
        facts,
        Expect::Unsure("offers no way to focus another program's window"),
    ));

    let mut facts = xterm_facts();
    if let Some(host) = &mut facts.host {
        host.env.wayland_display = Some("wayland-0".into());
    }
    facts.displays = display(vec![]);
    cases.push((
        "Wayland with XWayland but no X11 window for the terminal",
        facts,
        Expect::Unsure("likely a Wayland window"),
    ));

    // No terminal.
    let mut facts = xterm_facts();
    if let Some(host) = &mut facts.host {
        host.tty = Some("/dev/null".into());
    }
    cases.push((
        "no tty",
        facts,
        Expect::Unsure("has no terminal (its input is /dev/null)"),
    ));
    let mut facts = xterm_facts();
    if let Some(host) = &mut facts.host {
        host.tty = None;
    }
    cases.push((
        "unreadable tty",
        facts,
        Expect::Unsure("process 100 has no terminal Slate can find"),
    ));

    // macOS.
    let mac = |term: &str| Facts {
        platform: Platform::MacOs,
        pid: Some(100),
        host: Some(host(
            &[(100, "claude"), (90, "zsh"), (80, "login")],
            "/dev/ttys003",
            Environment {
                term_program: Some(term.into()),
                ..Environment::default()
            },
        )),
        tools: Tools {
            osascript: true,
            ..Tools::default()
        },
        ..Facts::default()
    };
    cases.push((
        "macOS Terminal by tty",
        mac("Apple_Terminal"),
        Expect::Run(
            vec![Step::AppleScript {
                app: MacTerminal::Terminal,
                tty: "/dev/ttys003".into(),
            }],
            None,
        ),
    ));
    cases.push((
        "macOS iTerm2 by tty",
        mac("iTerm.app"),
        Expect::Run(
            vec![Step::AppleScript {
                app: MacTerminal::ITerm2,
                tty: "/dev/ttys003".into(),
            }],
            None,
        ),
    ));
    cases.push((
        "macOS, another terminal",
        mac("Alacritty"),
        Expect::Unsure("only in Terminal and iTerm2"),
    ));

    // Windows.
    let windows = |hwnd: Option<u64>| Facts {
        platform: Platform::Windows,
        pid: Some(4000),
        host: Some(Host {
            pid: 4000,
            ancestors: chain(&[(4000, "claude.exe"), (3000, "WindowsTerminal.exe")]),
            tty: None,
            env: Environment::default(),
        }),
        console_window: hwnd,
        ..Facts::default()
    };
    cases.push((
        "Windows console window",
        windows(Some(0x1234)),
        Expect::Run(vec![Step::WindowsForeground { hwnd: 0x1234 }], None),
    ));
    cases.push((
        "Windows without a known console window",
        windows(None),
        Expect::Unsure("console window of process 4000 is not known"),
    ));
    cases
}

#[test]
fn the_strategy_chooses_as_the_table_says() {
    for (name, facts, expect) in cases() {
        let plan = strategy::choose(&facts);
        match (expect, &plan) {
            (
                Expect::Run(steps, caveat),
                Plan::Run {
                    steps: got,
                    caveat: got_caveat,
                },
            ) => {
                assert_eq!(got, &steps, "{name}: steps");
                match (caveat, got_caveat) {
                    (None, None) => {}
                    (Some(want), Some(got)) => {
                        assert!(got.contains(want), "{name}: caveat {got:?} lacks {want:?}")
                    }
                    (want, got) => panic!("{name}: caveat {got:?}, expected {want:?}"),
                }
            }
            (Expect::Unsure(want), Plan::Unsure { reason }) => {
                assert!(
                    reason.contains(want),
                    "{name}: reason {reason:?} lacks {want:?}"
                )
            }
            (_, plan) => panic!("{name}: unexpected plan {plan:?}"),
        }
    }
}

#[test]
fn steps_print_as_the_commands_they_run() {
    let lines: Vec<String> = [
        Step::TmuxSelectWindow {
            socket: "/tmp/tmux-0/default".into(),
            pane_id: "%3".into(),
        },
        Step::TmuxSwitchClient {
            socket: "/tmp/tmux-0/default".into(),
            client_tty: "/dev/pts/1".into(),
            pane_id: "%3".into(),
        },
        Step::KittyFocusWindow {
            listen_on: "unix:/tmp/kitty".into(),
            window_id: "3".into(),
        },
        Step::WeztermActivatePane {
            pane_id: "7".into(),
            socket: Some("/run/user/1000/wezterm/sock".into()),
        },
        activate(0x200001),
        Step::X11Activate {
            display: ":1".into(),
            window: 0x200001,
            tool: X11Tool::Xdotool,
        },
        Step::AppleScript {
            app: MacTerminal::ITerm2,
            tty: "/dev/ttys003".into(),
        },
        Step::WindowsForeground { hwnd: 0xbeef },
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    // The snapshots stay together in tests/snapshots.
    insta::with_settings!({ snapshot_path => "../snapshots" }, {
        insta::assert_debug_snapshot!("focus_step_lines", lines);
    });
}

#[test]
fn the_apple_script_activates_last() {
    let step = Step::AppleScript {
        app: MacTerminal::Terminal,
        tty: "/dev/ttys003".into(),
    };
    let line = step.command().expect("AppleScript runs through osascript");
    assert_eq!(line.program, "osascript");
    let script = &line.args[1];
    assert!(script.contains("if tty of t is \"/dev/ttys003\""));
    let select = script.find("set selected of t").unwrap();
    let activate = script.find("activate").unwrap();
    assert!(
        select < activate,
        "activate must come after selecting the tab"
    );
}

#[test]
fn the_environment_keeps_only_the_terminal_variables() {
    let environ = "HOME=/root\0TMUX=/tmp/tmux-0/slate test,812,0\0TMUX_PANE=%3\0DISPLAY=:1\0\
                   WAYLAND_DISPLAY=\0junk\0KITTY_WINDOW_ID=4\0WINDOWID=123";
    let env = Environment::from_entries(environ.split('\0'));
    assert_eq!(env.tmux_socket(), Some("/tmp/tmux-0/slate test"));
    assert_eq!(env.tmux_pane.as_deref(), Some("%3"));
    assert_eq!(env.display.as_deref(), Some(":1"));
    assert_eq!(env.wayland_display, None, "an empty value is unset");
    assert_eq!(env.kitty_window_id.as_deref(), Some("4"));
    assert_eq!(env.windowid.as_deref(), Some("123"));
    assert_eq!(env.term_program, None);
    assert_eq!(Environment::default().tmux_socket(), None);
}

#[test]
fn tool_output_parses_and_garbage_is_skipped() {
    let panes = strategy::parse_tmux_panes(
        "/dev/pts/2\t%0\t0\t0\t1\t0\tmy session\n/dev/pts/3\t%1\t1\t0\t1\t1\tmy session\n\
         nonsense\n/dev/pts/4\tnot-a-pane\t0\t0\t1\t1\tx\n/dev/pts/5\t%2\t0\t0\tmy session\n",
    );
    assert_eq!(panes.len(), 2, "{panes:?}");
    assert_eq!(panes[1].pane_id, "%1");
    assert_eq!(panes[1].target(), "my session:1.0");
    assert_eq!(
        (panes[0].shown, panes[1].shown),
        (false, true),
        "shown: the active pane of the active window"
    );
    for (text, active) in [
        ("65011718\n", Some(65_011_718)),
        (
            "_NET_ACTIVE_WINDOW(WINDOW): window id # 0x1400006\n",
            Some(0x1400006),
        ),
        ("_NET_ACTIVE_WINDOW(WINDOW): window id # 0x0\n", None),
        ("_NET_ACTIVE_WINDOW:  not found.\n", None),
        ("", None),
        ("0x1400006, 0x0\n", Some(0x1400006)),
    ] {
        assert_eq!(strategy::parse_active_window(text), active, "{text:?}");
    }

    let clients =
        strategy::parse_tmux_clients("/dev/pts/1\t4242\twork\n/dev/pts/5\tnotapid\tx\n\n");
    assert_eq!(clients.len(), 1);
    assert_eq!(
        (clients[0].pid, clients[0].session.as_str()),
        (4242, "work")
    );

    let windows = strategy::parse_wmctrl(
        "0x0060000c  0 23090  vm sleep here\n0x0020000c -1 0 vm\nbroken line\n",
    );
    assert_eq!(
        windows,
        vec![
            X11Window {
                id: 0x60000c,
                pid: 23090,
                title: "sleep here".into()
            },
            X11Window {
                id: 0x20000c,
                pid: 0,
                title: String::new()
            },
        ]
    );
    assert_eq!(
        strategy::parse_xdotool_search("2097164\n\nbad\n", 7),
        vec![window(2097164, 7)]
    );
    assert_eq!(strategy::parse_window_id("0x1F"), Some(31));
    assert_eq!(strategy::parse_window_id("31"), Some(31));
    assert_eq!(
        strategy::parse_ps_tty("ttys003\n").as_deref(),
        Some("/dev/ttys003")
    );
    assert_eq!(strategy::parse_ps_tty("??"), None);
}

#[test]
fn a_missing_process_is_unsure() {
    // No process has the largest pid, so this is the gather-and-choose path for a gone session.
    let error = focus::focus(u32::MAX).expect_err("no such process");
    assert!(matches!(error, focus::FocusError::Unsure { .. }), "{error}");
    assert!(matches!(focus::plan(None), Plan::Unsure { .. }));
}

#[test]
fn a_process_without_a_terminal_is_unsure_and_nothing_runs() {
    // A clean environment, so the test runner's own tmux or display does not leak in.
    let sleeper = Children(vec![Command::new("sleep")
        .arg("300")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("sleep starts")]);
    let pid = sleeper.0[0].id();
    match focus::plan(Some(pid)) {
        Plan::Unsure { reason } if cfg!(target_os = "linux") => {
            assert!(reason.contains("has no terminal"), "{reason}")
        }
        Plan::Unsure { .. } => {}
        plan => panic!("a process without a terminal got {plan:?}"),
    }
}
