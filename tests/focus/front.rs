//! Quiet while you look, from facts alone (`focus::strategy::looking`): in front only when the
//! session's tmux pane is the one shown in the focused window, or its terminal window is the
//! focused one and shows nothing else; unsure (so notified) whenever a fact is missing.

use slate::focus::strategy::{self, Facts, Looking};

use super::strategy::{client, display, tmux_facts, window, xterm_facts};

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
