//! Quiet while you look, from facts alone (`focus::strategy::looking`): in front only when the
//! session's tmux pane is the one shown in the focused window, its kitty window the one kitty
//! says is in front, or its terminal window is the focused one and shows nothing else; unsure
//! (so notified) whenever a fact is missing.

use slate::focus::strategy::{self, Facts, KittyFacts, KittyWindow, Looking, WeztermFacts};

use super::strategy::{client, display, host, tmux_facts, window, xterm_facts};

fn focused(mut facts: Facts, active: Option<u64>) -> Facts {
    for known in &mut facts.displays {
        known.active = active;
    }
    facts
}

fn verdict(facts: &Facts) -> &'static str {
    match strategy::looking(facts) {
        Looking::Yes(_) => "yes",
        Looking::No(_) => "no",
        Looking::Unsure(_) => "unsure",
    }
}

#[test]
fn a_tmux_pane_is_in_front_only_when_shown_by_a_client_in_the_focused_window() {
    // Pane %3 (work:1) runs the session; the client of `work` draws in xterm 81 (0x400001).
    let in_front = focused(tmux_facts(vec![client("work")]), Some(0x400001));
    assert_eq!(
        strategy::looking(&in_front),
        Looking::Yes("pane work:1.0 shows in the focused window".into())
    );

    let other_window = focused(tmux_facts(vec![client("work")]), Some(0x200001));
    assert_eq!(verdict(&other_window), "no");

    let mut hidden = in_front.clone();
    let panes = &mut hidden.tmux.as_mut().unwrap().panes;
    panes
        .iter_mut()
        .find(|pane| pane.pane_id == "%3")
        .unwrap()
        .shown = false;
    match strategy::looking(&hidden) {
        Looking::No(why) => assert!(why.contains("not the one its tmux session shows"), "{why}"),
        other => panic!("{other:?}"),
    }

    let detached = focused(tmux_facts(Vec::new()), Some(0x400001));
    assert_eq!(verdict(&detached), "no", "no client: nobody sees it");
    let elsewhere = focused(tmux_facts(vec![client("play")]), Some(0x400001));
    assert_eq!(
        verdict(&elsewhere),
        "no",
        "the client shows another session"
    );

    // Without the focused window, or with the server's error, it cannot tell: notify.
    assert_eq!(
        verdict(&focused(tmux_facts(vec![client("work")]), None)),
        "unsure"
    );
    let mut broken = in_front.clone();
    broken.tmux.as_mut().unwrap().error = Some("timed out".into());
    assert_eq!(verdict(&broken), "unsure");
}

#[test]
fn a_terminal_window_is_in_front_when_focused_unless_it_shows_tabs() {
    // The session runs in xterm 80, which owns window 0x200001.
    assert_eq!(verdict(&focused(xterm_facts(), Some(0x200001))), "yes");
    assert_eq!(verdict(&focused(xterm_facts(), Some(0x400001))), "no");
    assert_eq!(verdict(&focused(xterm_facts(), None)), "unsure");

    let mut tabbed = focused(xterm_facts(), Some(0x200001));
    let host = tabbed.host.as_mut().unwrap();
    host.ancestors[2].name = "gnome-terminal-".into();
    host.ancestors[2].cmd = vec!["/usr/libexec/gnome-terminal-server".into()];
    match strategy::looking(&tabbed) {
        Looking::Unsure(why) => assert!(why.contains("tabs"), "{why}"),
        other => panic!("a tabbed terminal cannot tell its tab: {other:?}"),
    }

    let mut gone = focused(xterm_facts(), Some(0x200001));
    gone.host = None;
    assert_eq!(verdict(&gone), "unsure");
    let mut no_window = focused(xterm_facts(), Some(0x200001));
    no_window.displays = display(vec![window(0x900001, 999)]);
    no_window.displays[0].active = Some(0x900001);
    assert_eq!(
        verdict(&no_window),
        "unsure",
        "no window of its own: cannot tell"
    );
}

/// A session process 100 in zsh 90 in kitty 70 (listening on /tmp/kitty-70), on /dev/pts/4, in
/// kitty window 3; window 5 has another terminal.
fn kitty_facts(window_3_in_front: bool) -> Facts {
    let mut env = super::strategy::x11_env();
    env.kitty_window_id = Some("3".into());
    env.kitty_listen_on = Some("unix:/tmp/kitty-70".into());
    let kitty_window = |id: u64, tty: &str, in_front: bool| KittyWindow {
        id,
        tty: Some(tty.into()),
        in_front,
    };
    Facts {
        pid: Some(100),
        host: Some(host(
            &[(100, "claude"), (90, "zsh"), (70, "kitty"), (1, "systemd")],
            "/dev/pts/4",
            env,
        )),
        displays: display(vec![window(0x200001, 70)]),
        kitty: vec![KittyFacts {
            listen_on: "unix:/tmp/kitty-70".into(),
            windows: vec![
                kitty_window(3, "/dev/pts/4", window_3_in_front),
                kitty_window(5, "/dev/pts/9", !window_3_in_front),
            ],
            error: None,
        }],
        tools: super::strategy::all_tools(),
        ..Facts::default()
    }
}

#[test]
fn a_kitty_window_is_in_front_when_kitty_says_so_whatever_x11_says() {
    assert_eq!(
        strategy::looking(&kitty_facts(true)),
        Looking::Yes("kitty window 3 is the one in front".into())
    );
    // Its OS window is the focused X11 window, but another tab or split is the active one.
    assert_eq!(verdict(&focused(kitty_facts(false), Some(0x200001))), "no");

    // The window is the one with the session's terminal, whatever $KITTY_WINDOW_ID says.
    let mut renamed = kitty_facts(true);
    renamed.host.as_mut().unwrap().env.kitty_window_id = Some("5".into());
    assert_eq!(verdict(&renamed), "yes");
    let mut elsewhere = kitty_facts(true);
    elsewhere.host.as_mut().unwrap().tty = Some("/dev/pts/7".into());
    match strategy::looking(&elsewhere) {
        Looking::Unsure(why) => assert!(why.contains("no window of its kitty"), "{why}"),
        other => panic!("no window has its terminal: {other:?}"),
    }

    // kitty could not be asked: unsure, so notified.
    let mut silent = kitty_facts(true);
    silent.kitty[0].error = Some("no answer within 2 s".into());
    silent.kitty[0].windows.clear();
    assert_eq!(verdict(&silent), "unsure");

    // $KITTY_LISTEN_ON inherited by a process in an xterm: kitty's answer is not its own, and the
    // xterm's window decides.
    let mut in_xterm = focused(kitty_facts(true), Some(0x200001));
    let host = in_xterm.host.as_mut().unwrap();
    host.ancestors[2].name = "xterm".into();
    host.ancestors[2].cmd = vec!["xterm".into()];
    in_xterm.kitty[0].windows[0].in_front = false;
    assert_eq!(verdict(&in_xterm), "yes");
}

/// A session process 100 in zsh 90 in wezterm-gui 70 (window 0x200001 on :0), on /dev/pts/4, in
/// WezTerm pane 3; pane 5 has another terminal. The GUI's focused pane is `focused`.
fn wezterm_facts(focused: u64, active: Option<u64>) -> Facts {
    let mut env = super::strategy::x11_env();
    env.wezterm_pane = Some("3".into());
    let mut facts = Facts {
        pid: Some(100),
        host: Some(host(
            &[
                (100, "codex"),
                (90, "zsh"),
                (70, "wezterm-gui"),
                (1, "systemd"),
            ],
            "/dev/pts/4",
            env,
        )),
        displays: display(vec![window(0x200001, 70), window(0x400001, 81)]),
        wezterm: Some(WeztermFacts {
            socket: String::new(),
            panes: vec![(3, "/dev/pts/4".into()), (5, "/dev/pts/9".into())],
            clients: vec![(70, focused)],
            error: None,
        }),
        tools: super::strategy::all_tools(),
        ..Facts::default()
    };
    for known in &mut facts.displays {
        known.active = active;
    }
    facts
}

#[test]
fn a_wezterm_pane_is_in_front_when_its_gui_focuses_it_in_the_focused_window() {
    assert_eq!(
        strategy::looking(&wezterm_facts(3, Some(0x200001))),
        Looking::Yes("WezTerm pane 3 is the focused pane of the focused window".into())
    );
    // Another pane (a tab or a split) focused in the GUI, or another program's window in front.
    assert_eq!(verdict(&wezterm_facts(5, Some(0x200001))), "no");
    assert_eq!(verdict(&wezterm_facts(3, Some(0x400001))), "no");
    // The focused window unknown, the mux silent, or no pane with its terminal: notified.
    assert_eq!(verdict(&wezterm_facts(3, None)), "unsure");
    let mut silent = wezterm_facts(3, Some(0x200001));
    silent.wezterm.as_mut().unwrap().error = Some("no answer within 500 ms".into());
    assert_eq!(verdict(&silent), "unsure");
    let mut elsewhere = wezterm_facts(3, Some(0x200001));
    elsewhere.host.as_mut().unwrap().tty = Some("/dev/pts/7".into());
    match strategy::looking(&elsewhere) {
        Looking::Unsure(why) => assert!(why.contains("no pane of its WezTerm"), "{why}"),
        other => panic!("{other:?}"),
    }
    // The pane is the one with the session's terminal, whatever $WEZTERM_PANE says.
    let mut renamed = wezterm_facts(3, Some(0x200001));
    renamed.host.as_mut().unwrap().env.wezterm_pane = Some("5".into());
    assert_eq!(verdict(&renamed), "yes");
    // Another GUI's focus says nothing of this one's.
    let mut other_gui = wezterm_facts(3, Some(0x200001));
    other_gui.wezterm.as_mut().unwrap().clients = vec![(71, 3), (70, 5)];
    assert_eq!(verdict(&other_gui), "no");
}
