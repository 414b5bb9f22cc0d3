//! Whether the person is looking at a session's terminal right now, from the same facts as
//! focusing: for "quiet while you look", a notification is held back only for a session whose
//! pane is the one its tmux session shows in the focused window, whose kitty window or WezTerm
//! pane is the one its terminal says is in front, or whose terminal window is the focused one and
//! shows nothing else. Anything less than sure is [`Looking::Unsure`], and an unsure session is
//! notified: a missed prompt costs more than one notification too many.

use super::decide::{inside_tmux, pane_of, runs_under, window_plan};
use super::{Facts, Host, Step, TmuxClient};

/// What the facts say of the person and the session's terminal, with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Looking {
    /// Its terminal is in front: the focused window, and in it the session's pane.
    Yes(String),
    /// It is not in front.
    No(String),
    /// The facts cannot tell.
    Unsure(String),
}

/// Whether the session's terminal is in front.
pub fn looking(facts: &Facts) -> Looking {
    let Some(host) = &facts.host else {
        return Looking::Unsure("the session's process is gone".to_string());
    };
    let in_tmux = host.env.tmux.is_some()
        || facts
            .tmux
            .as_ref()
            .is_some_and(|tmux| pane_of(host, tmux).is_some());
    if in_tmux {
        tmux_looking(facts, host)
    } else {
        window_looking(facts, host)
    }
}

fn tmux_looking(facts: &Facts, host: &Host) -> Looking {
    let Some(tmux) = &facts.tmux else {
        return Looking::Unsure("its tmux server could not be asked".to_string());
    };
    if let Some(error) = &tmux.error {
        return Looking::Unsure(format!("its tmux server could not be asked: {error}"));
    }
    let Some(pane) = pane_of(host, tmux) else {
        return Looking::Unsure("no pane of its tmux server has its terminal".to_string());
    };
    if !pane.shown {
        return Looking::No(format!(
            "pane {} is not the one its tmux session shows",
            pane.target()
        ));
    }
    let showing: Vec<&TmuxClient> = tmux
        .clients
        .iter()
        .filter(|client| client.session == pane.session)
        .collect();
    if showing.is_empty() {
        return Looking::No(format!("no tmux client shows session {:?}", pane.session));
    }
    let mut unsure = None;
    for client in showing {
        let Some(client_host) = &client.host else {
            continue;
        };
        if inside_tmux(client_host) {
            unsure = Some(format!(
                "tmux client {} runs inside another tmux",
                client.pid
            ));
            continue;
        }
        match window_looking(facts, client_host) {
            Looking::Yes(_) => {
                return Looking::Yes(format!(
                    "pane {} shows in the focused window",
                    pane.target()
                ))
            }
            Looking::No(_) => {}
            Looking::Unsure(reason) => unsure = Some(reason),
        }
    }
    match unsure {
        Some(reason) => Looking::Unsure(reason),
        None => Looking::No(format!(
            "no window that shows tmux session {:?} is the focused one",
            pane.session
        )),
    }
}

/// The window `host`'s terminal draws in (kitty's or WezTerm's by their own account, else an X11
/// window or a compositor's), against the focused window.
fn window_looking(facts: &Facts, host: &Host) -> Looking {
    if let Some(looking) = kitty_looking(facts, host) {
        return looking;
    }
    if let Some(looking) = wezterm_looking(facts, host) {
        return looking;
    }
    let (steps, caveat) = match window_plan(facts, host) {
        Ok(planned) => planned,
        Err(reason) => return Looking::Unsure(reason),
    };
    let focused = match os_window_focused(facts, &steps) {
        Ok(focused) => focused,
        Err(unsure) => return unsure,
    };
    match (focused, caveat) {
        (false, _) => Looking::No("its terminal's window is not the focused one".to_string()),
        (true, Some(_)) => Looking::Unsure(
            "its terminal's window is the focused one, but it shows tabs and Slate cannot tell \
             which is in front"
                .to_string(),
        ),
        (true, None) => Looking::Yes("its terminal's window is the focused one".to_string()),
    }
}

/// Whether the window the one step of `steps` raises (an X11 window, or a compositor's) is the
/// focused one; unsure for any other plan.
fn os_window_focused(facts: &Facts, steps: &[Step]) -> Result<bool, Looking> {
    Ok(match steps {
        [Step::X11Activate {
            display, window, ..
        }] => {
            let active = facts
                .displays
                .iter()
                .find(|known| &known.name == display)
                .and_then(|known| known.active);
            match active {
                Some(active) => active == *window,
                None => {
                    return Err(Looking::Unsure(format!(
                        "the focused window of X11 display {display} is not known"
                    )))
                }
            }
        }
        [Step::SwayFocus { con_id: id, .. } | Step::HyprlandFocus { address: id, .. }] => {
            facts.compositor.as_ref().is_some_and(|session| {
                session
                    .windows
                    .iter()
                    .any(|window| window.id == *id && window.focused)
            })
        }
        _ => {
            return Err(Looking::Unsure(
                "Slate cannot tell which window or tab of its terminal is in front".to_string(),
            ))
        }
    })
}

/// A terminal in kitty, by kitty's own account of focus: its OS window focused, and in it the
/// active tab's active window. The window is the one whose terminal is `host`'s, not the one
/// `$KITTY_WINDOW_ID` names (a variable a process may have inherited from elsewhere). `None`
/// when `host` does not run in a kitty that was asked.
fn kitty_looking(facts: &Facts, host: &Host) -> Option<Looking> {
    let listen_on = host.env.kitty_listen_on.as_ref()?;
    if !runs_under(host, &["kitty"]) {
        return None;
    }
    let kitty = facts
        .kitty
        .iter()
        .find(|kitty| &kitty.listen_on == listen_on)?;
    if let Some(error) = &kitty.error {
        return Some(Looking::Unsure(format!(
            "its kitty could not be asked: {error}"
        )));
    }
    let tty = host.tty.as_deref()?;
    let Some(window) = kitty
        .windows
        .iter()
        .find(|window| window.tty.as_deref() == Some(tty))
    else {
        return Some(Looking::Unsure(format!(
            "no window of its kitty has its terminal {tty}"
        )));
    };
    Some(if window.in_front {
        Looking::Yes(format!("kitty window {} is the one in front", window.id))
    } else {
        Looking::No(format!(
            "kitty window {} is not the one in front",
            window.id
        ))
    })
}

/// A pane in WezTerm: the pane with the session's terminal (by `tty_name`, not `$WEZTERM_PANE`) is
/// the focused pane of the GUI that draws it (`list-clients`), and that GUI's window is the
/// focused one. `None` when `host` does not run in a WezTerm GUI that was asked.
fn wezterm_looking(facts: &Facts, host: &Host) -> Option<Looking> {
    host.env.wezterm_pane.as_ref()?;
    let gui = host
        .ancestors
        .iter()
        .find(|ancestor| ancestor.program() == "wezterm-gui")?
        .pid;
    let wezterm = facts.wezterm.as_ref()?;
    if let Some(error) = &wezterm.error {
        return Some(Looking::Unsure(format!(
            "its WezTerm could not be asked: {error}"
        )));
    }
    let tty = host.tty.as_deref()?;
    let Some((pane, _)) = wezterm.panes.iter().find(|(_, pane_tty)| pane_tty == tty) else {
        return Some(Looking::Unsure(format!(
            "no pane of its WezTerm has its terminal {tty}"
        )));
    };
    if !wezterm
        .clients
        .iter()
        .any(|(pid, focused)| *pid == gui && focused == pane)
    {
        return Some(Looking::No(format!(
            "WezTerm pane {pane} is not the focused pane of its window"
        )));
    }
    let steps = match window_plan(facts, host) {
        // The pane's own step first, then its window's.
        Ok((steps, _)) => steps,
        Err(reason) => return Some(Looking::Unsure(reason)),
    };
    let window_steps = match steps.split_first() {
        Some((Step::WeztermActivatePane { .. }, rest)) => rest,
        _ => steps.as_slice(),
    };
    Some(match os_window_focused(facts, window_steps) {
        Ok(true) => Looking::Yes(format!(
            "WezTerm pane {pane} is the focused pane of the focused window"
        )),
        Ok(false) => Looking::No("its WezTerm window is not the focused one".to_string()),
        Err(unsure) => unsure,
    })
}
