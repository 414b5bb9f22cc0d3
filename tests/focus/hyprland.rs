//! Focus on Hyprland, through its IPC (`hyprctl`), from facts alone: Hyprland is not packaged
//! for the Debian this is built on, so nothing here runs it. The clients below are written in the
//! shape Hyprland's documentation and its `hyprctl -j clients` give (an `address` in hex, the
//! client's `pid`, `class`, `mapped`, and `focusHistoryID`, 0 for the focused window); they are
//! not a recording.

use slate::focus::strategy::{
    self, Compositor, CompositorFacts, CompositorWindow, Environment, Facts, Looking, Plan, Step,
};

use super::strategy::{all_tools, host};

const INSTANCE: &str = "4520b30d498daca8079365bdb909a8dea38e8d55_1733046000_1207542233";

/// A session process 100 in sh 90 in foot 80, in a Hyprland session.
fn foot_facts(windows: Vec<CompositorWindow>) -> Facts {
    let env = Environment {
        wayland_display: Some("wayland-1".into()),
        hyprland_instance: Some(INSTANCE.into()),
        ..Environment::default()
    };
    Facts {
        pid: Some(100),
        host: Some(host(
            &[(100, "codex"), (90, "sh"), (80, "foot"), (1, "systemd")],
            "/dev/pts/4",
            env,
        )),
        compositor: Some(CompositorFacts {
            compositor: Compositor::Hyprland,
            socket: INSTANCE.into(),
            windows,
            error: None,
        }),
        tools: all_tools(),
        ..Facts::default()
    }
}

fn window(id: u64, pid: u32, focused: bool) -> CompositorWindow {
    CompositorWindow {
        id,
        pid,
        app_id: "foot".into(),
        focused,
    }
}

#[test]
fn on_hyprland_the_window_of_the_terminal_is_focused_by_its_address() {
    let facts = foot_facts(vec![
        window(0x55d1e0a0, 80, false),
        window(0x55d1e0b0, 81, true),
    ]);
    let step = Step::HyprlandFocus {
        instance: INSTANCE.into(),
        address: 0x55d1e0a0,
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
        format!(
            "HYPRLAND_INSTANCE_SIGNATURE={INSTANCE} hyprctl dispatch focuswindow address:0x55d1e0a0"
        )
    );
    // hyprctl exits 0 whether or not it found the window; only `ok` says it did.
    assert_eq!(step.check_answer("ok\n"), Ok(()));
    assert!(step.check_answer("No such window found").is_err());
    assert!(step.check_answer("").is_err());

    // Quiet while you look: the focused window is the one whose focusHistoryID is 0.
    assert!(matches!(strategy::looking(&facts), Looking::No(_)));
    let front = foot_facts(vec![window(0x55d1e0a0, 80, true)]);
    assert!(matches!(strategy::looking(&front), Looking::Yes(_)));

    // Two windows of one foot server: no guess; none of its own, or no list: it says why.
    let twins = foot_facts(vec![window(1, 80, false), window(2, 80, true)]);
    match strategy::choose(&twins) {
        Plan::Unsure { reason } => assert!(reason.contains("owns 2 Hyprland windows"), "{reason}"),
        other => panic!("{other:?}"),
    }
    match strategy::choose(&foot_facts(vec![window(2, 81, true)])) {
        Plan::Unsure { reason } => {
            assert!(reason.contains("no Hyprland window belongs"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    let mut broken = foot_facts(Vec::new());
    broken.compositor.as_mut().unwrap().error = Some("hyprctl did not finish within 5 s".into());
    match strategy::choose(&broken) {
        Plan::Unsure { reason } => {
            assert!(
                reason.contains("Hyprland session could not be listed"),
                "{reason}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(strategy::looking(&broken), Looking::Unsure(_)));
}

#[test]
fn hyprctls_clients_are_read_and_bad_lists_refused() {
    let clients = r#"[
      {"address": "0x55d1e0a0", "mapped": true, "hidden": false, "at": [10, 10], "size": [800, 600],
       "workspace": {"id": 1, "name": "1"}, "floating": false, "monitor": 0, "class": "foot",
       "title": "codex", "initialClass": "foot", "initialTitle": "foot", "pid": 2668,
       "xwayland": false, "pinned": false, "fullscreen": 0, "grouped": [], "swallowing": "0x0",
       "focusHistoryID": 1},
      {"address": "0x55d1e0b0", "mapped": true, "class": "kitty", "pid": 2700, "focusHistoryID": 0},
      {"address": "0x55d1e0c0", "mapped": false, "class": "foot", "pid": 2701, "focusHistoryID": 2},
      {"address": "55d1e0d0", "class": "no-prefix", "pid": 2702},
      {"address": "0xzz", "class": "not-hex", "pid": 2703},
      {"address": "0x55d1e0e0", "class": "xwayland-without-pid", "pid": -1},
      {"address": "0x55d1e0f0", "class": "huge-pid", "pid": 99999999999},
      7, "text", null
    ]"#;
    assert_eq!(
        strategy::parse_hyprland_clients(clients).unwrap(),
        vec![
            CompositorWindow {
                id: 0x55d1e0a0,
                pid: 2668,
                app_id: "foot".into(),
                focused: false
            },
            CompositorWindow {
                id: 0x55d1e0b0,
                pid: 2700,
                app_id: "kitty".into(),
                focused: true
            },
        ]
    );
    assert_eq!(strategy::parse_hyprland_clients("[]").unwrap(), Vec::new());
    for bad in ["", "{}", "[", "null", "\u{0}", "ok"] {
        assert!(strategy::parse_hyprland_clients(bad).is_err(), "{bad:?}");
    }
    let long_class = format!(
        r#"[{{"address": "0x1", "pid": 5, "class": "{}"}}]"#,
        "x".repeat(100_000)
    );
    assert_eq!(
        strategy::parse_hyprland_clients(&long_class).unwrap()[0]
            .app_id
            .len(),
        200
    );
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    assert!(strategy::parse_hyprland_clients(&deep).is_err());
    // An address too long for 64 bits is no address.
    let wide = r#"[{"address": "0x1ffffffffffffffff", "pid": 5}]"#;
    assert_eq!(strategy::parse_hyprland_clients(wide).unwrap(), Vec::new());
}

#[test]
fn the_hyprland_instance_comes_from_the_environment() {
    let env = Environment::from_entries([
        "HYPRLAND_INSTANCE_SIGNATURE=abc_1_2",
        "WAYLAND_DISPLAY=wayland-1",
    ]);
    assert_eq!(env.hyprland_instance.as_deref(), Some("abc_1_2"));
    assert_eq!(
        Environment::from_entries(["HYPRLAND_INSTANCE_SIGNATURE="]).hyprland_instance,
        None
    );
}
