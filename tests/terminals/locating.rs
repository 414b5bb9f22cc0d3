//! Where a process's pane is, from facts alone: the environments recorded in real tmux and
//! kitty panes and every other terminal, seen through the built-in backends' variables
//! (`Backends::see`), a pane proved by its terminal coming first.

use slate::focus::strategy::{Environment, Tools};
use slate::model::TerminalKind;
use slate::terminals::backend::PLAIN_NOTE;
use slate::terminals::{kitty, tmux, wezterm, BUILT_IN};

use super::text;

/// The `NAME=value` lines of a recorded environment, comments and commands left out.
fn environment(lines: &str) -> Environment {
    Environment::from_entries(
        lines
            .lines()
            .filter(|line| !line.starts_with('#') && !line.starts_with('$'))
            .filter(|line| line.contains('=')),
    )
}

fn tools() -> Tools {
    Tools {
        tmux: true,
        ..Tools::default()
    }
}

#[test]
fn a_pane_is_found_from_the_recorded_environments() {
    // The Codex process in the first pane of a `-L slate-term` server: its variables name the
    // pane, but a variable is inherited by whatever the pane's shell starts, so they alone make
    // no address; the pane proved by the process's terminal device does (`terminals::proof`).
    let recorded = text("terminals/tmux/env-inside.txt");
    let first = recorded.split("# -S").next().unwrap();
    let (view, address) = BUILT_IN.see(Some(&environment(first)), &tools(), None);
    assert_eq!(address, None);
    assert_eq!(
        (view.kind, view.sensed, view.note.as_deref()),
        (TerminalKind::Unknown, false, Some(tmux::INHERITED_NOTE))
    );
    let proved = tmux::address("/tmp/tmux-0/slate-term", "%0");
    let (view, address) = BUILT_IN.see(Some(&environment(first)), &tools(), Some(&proved));
    assert_eq!(address, Some(proved.clone()));
    assert_eq!(
        (view.kind, view.pane.as_deref(), view.sensed),
        (TerminalKind::Tmux, Some("%0"), true)
    );
    // A process whose variables were cleared (`env -i`) is found by its terminal all the same.
    let (_, address) = BUILT_IN.see(Some(&Environment::default()), &tools(), Some(&proved));
    assert_eq!(address, Some(proved));
    // The Codex process in a kitty window with remote control on.
    let kitty = text("terminals/kitty/env-inside.txt");
    let (view, address) = BUILT_IN.see(Some(&environment(&kitty)), &Tools::default(), None);
    assert_eq!(address, Some(kitty::address("unix:<work>/kitty.sock", "1")));
    assert!(view.sensed);
    // A kitty without remote control sets no KITTY_LISTEN_ON: seen, not read, and said why.
    let off = text("terminals/kitty/remote-control-off.txt");
    let off_env = off.split("# KITTY_* in the environment").nth(1).unwrap();
    let (view, address) = BUILT_IN.see(Some(&environment(off_env)), &tools(), None);
    assert_eq!(address, None);
    assert_eq!(
        (view.kind, view.pane.as_deref(), view.sensed),
        (TerminalKind::Kitty, Some("1"), false)
    );
    assert_eq!(view.note.as_deref(), Some(kitty::OFF_NOTE));
}

#[test]
fn every_other_terminal_is_said_as_it_is() {
    let env = |entries: &[&str]| Environment::from_entries(entries.iter().copied());
    // WezTerm, with and without its socket variable.
    let wezterm = Tools {
        wezterm: true,
        ..Tools::default()
    };
    let (view, address) = BUILT_IN.see(
        Some(&env(&[
            "WEZTERM_PANE=3",
            "WEZTERM_UNIX_SOCKET=/run/user/1/wezterm/sock",
        ])),
        &wezterm,
        None,
    );
    assert_eq!(
        address,
        Some(wezterm::address(
            Some("/run/user/1/wezterm/sock".to_string()),
            "3"
        ))
    );
    assert_eq!(view.kind, TerminalKind::Wezterm);
    let (view, address) = BUILT_IN.see(Some(&env(&["WEZTERM_PANE=3"])), &Tools::default(), None);
    assert_eq!((view.sensed, address), (false, None), "no wezterm program");
    // tmux inside kitty: the pane the process draws in is tmux's, proved by its terminal.
    let inside_kitty = env(&[
        "TMUX=/tmp/tmux-1/default,7,0",
        "TMUX_PANE=%4",
        "KITTY_WINDOW_ID=2",
        "KITTY_LISTEN_ON=unix:/tmp/k",
    ]);
    let pane = tmux::address("/tmp/tmux-1/default", "%4");
    let (view, _) = BUILT_IN.see(Some(&inside_kitty), &tools(), Some(&pane));
    assert_eq!(
        (view.kind, view.pane.as_deref()),
        (TerminalKind::Tmux, Some("%4"))
    );
    // Started from that tmux pane into a kitty window (`kitty codex`): its tmux variables are
    // inherited and no pane is proved, so the kitty window is the candidate (which `terminals`
    // confirms by its terminal before reading it).
    let (view, address) = BUILT_IN.see(Some(&inside_kitty), &tools(), None);
    assert_eq!(view.kind, TerminalKind::Kitty);
    assert_eq!(address, Some(kitty::address("unix:/tmp/k", "2")));
    // tmux variables without the tool, and without a proved pane.
    let (view, address) = BUILT_IN.see(
        Some(&env(&["TMUX=/tmp/tmux-1/default,7,0", "TMUX_PANE=%4"])),
        &Tools::default(),
        None,
    );
    assert!(!view.sensed && address.is_none() && view.note.is_some());
    let (view, _) = BUILT_IN.see(
        Some(&env(&["TMUX=/tmp/tmux-1/default,7,0"])),
        &tools(),
        None,
    );
    assert!(!view.sensed);
    // Ids that are not ids are not put on a command line.
    for entries in [
        ["TMUX=/tmp/tmux-1/default,7,0", "TMUX_PANE=%4;"],
        ["TMUX=/tmp/tmux-1/default,7,0", "TMUX_PANE=%4 kill-server"],
        ["WEZTERM_PANE=3;", "TERM=xterm"],
    ] {
        let (view, address) = BUILT_IN.see(
            Some(&env(&entries)),
            &Tools {
                tmux: true,
                wezterm: true,
                ..Tools::default()
            },
            None,
        );
        assert_eq!((view.sensed, address), (false, None), "{entries:?}");
    }
    let (view, _) = BUILT_IN.see(Some(&env(&["KITTY_WINDOW_ID=1 2"])), &tools(), None);
    assert_eq!(view.kind, TerminalKind::Plain);
    // A plain terminal, and a process whose environment could not be read.
    let (view, address) = BUILT_IN.see(Some(&env(&["TERM=xterm"])), &tools(), None);
    assert_eq!((view.kind, address), (TerminalKind::Plain, None));
    assert_eq!(view.note.as_deref(), Some(PLAIN_NOTE));
    assert!(view
        .describe()
        .contains("start it in tmux or under `slate run`"));
    let (view, _) = BUILT_IN.see(None, &tools(), None);
    assert_eq!(view.kind, TerminalKind::Unknown);
}
