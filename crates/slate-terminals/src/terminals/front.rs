//! Quiet while you look: whether the person is looking at a session's terminal right now. The
//! facts are `focus`'s (tmux's panes and clients, the focused X11 or compositor window), with what
//! each kitty the terminals may draw in says of its own windows, asked over its socket (no program
//! starts), and for a session in a WezTerm GUI, its mux's panes and the pane each GUI has focused
//! (`wezterm cli list` and `list-clients`); `focus::strategy::looking` decides from them.

use std::collections::BTreeSet;

use crate::focus::strategy::{self, Facts, KittyFacts, KittyWindow, Looking, WeztermFacts};
use slate_core::policy::notifications::NotificationPlan;

/// `focus`'s facts about process `pid`, with the windows of every kitty its terminal (or a tmux
/// client of its pane) runs in, by `$KITTY_LISTEN_ON`, and the WezTerm mux of a WezTerm GUI it
/// runs in (two `wezterm cli` calls).
pub fn gather(pid: u32) -> Facts {
    let mut facts = crate::focus::gather(pid);
    let hosts = strategy::terminal_hosts(facts.host.as_ref(), facts.tmux.as_ref());
    let sockets: BTreeSet<String> = hosts
        .iter()
        .filter_map(|host| host.env.kitty_listen_on.clone())
        .collect();
    let wezterm_socket = hosts
        .iter()
        .find(|host| {
            host.env.wezterm_pane.is_some()
                && host
                    .ancestors
                    .iter()
                    .any(|ancestor| ancestor.program() == "wezterm-gui")
        })
        .map(|host| host.env.wezterm_unix_socket.clone());
    facts.kitty = sockets
        .iter()
        .map(|listen_on| kitty_windows(listen_on))
        .collect();
    if let Some(socket) = wezterm_socket.filter(|_| facts.tools.wezterm) {
        facts.wezterm = Some(wezterm_mux(socket.as_deref()));
    }
    facts
}

/// Whether the person is looking at the terminal of process `pid` right now.
pub fn looking_at(pid: u32) -> Looking {
    strategy::looking(&gather(pid))
}

/// Why a notification is not worth showing: it tells of one session, of this machine, whose
/// terminal is in front ([`looking_at`]). `None` for every other notification, and whenever the
/// facts are not sure.
pub fn seen_already(plan: &NotificationPlan) -> Option<String> {
    let [session] = plan.sessions.as_slice() else {
        return None;
    };
    let pid = session.pid.filter(|_| session.machine.is_none())?;
    match looking_at(pid) {
        Looking::Yes(why) => Some(why),
        Looking::No(_) | Looking::Unsure(_) => None,
    }
}

/// The panes and GUI clients of the WezTerm mux at `socket` (or the one `wezterm cli` finds).
fn wezterm_mux(socket: Option<&str>) -> WeztermFacts {
    use super::wezterm;
    let asked = super::run(&wezterm::list(socket))
        .and_then(|json| wezterm::parse_ttys(&json).map_err(|e| e.to_string()))
        .and_then(|ttys| {
            let clients = super::run(&wezterm::list_clients(socket))
                .and_then(|json| wezterm::parse_clients(&json).map_err(|e| e.to_string()))?;
            Ok((ttys, clients))
        });
    let mut facts = WeztermFacts {
        socket: socket.unwrap_or_default().to_string(),
        ..WeztermFacts::default()
    };
    match asked {
        Ok((ttys, clients)) => {
            facts.panes = ttys
                .into_iter()
                .filter_map(|(pane, tty)| Some((pane.parse().ok()?, tty)))
                .collect();
            facts.clients = clients;
        }
        Err(error) => facts.error = Some(error),
    }
    facts
}

/// The windows of the kitty listening on `listen_on`, each with its terminal: kitty's `ls`, within
/// the terminal read limit.
fn kitty_windows(listen_on: &str) -> KittyFacts {
    let listed = super::kitty::list(listen_on)
        .and_then(|json| super::kitty::parse_in_front(&json).map_err(|e| e.to_string()));
    match listed {
        Ok(windows) => KittyFacts {
            listen_on: listen_on.to_string(),
            windows: windows
                .into_iter()
                .map(|window| KittyWindow {
                    id: window.id,
                    tty: window.pid.and_then(crate::tty::controlling_terminal),
                    in_front: window.in_front,
                })
                .collect(),
            error: None,
        },
        Err(error) => KittyFacts {
            listen_on: listen_on.to_string(),
            windows: Vec::new(),
            error: Some(error),
        },
    }
}
