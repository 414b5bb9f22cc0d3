//! The desktop's own terminals (GNOME Terminal, xfce4-terminal and the other VTE terminals) read
//! through the accessibility bus (AT-SPI2), where they publish each tab's visible text for screen
//! readers. No terminal device is published there, so a tab is only matched to a session by what
//! it shows (issue 23); this module reads, and decides nothing.
//!
//! [`read_app`] finds the application whose process is `pid` among those the accessibility
//! registry lists (by the process id of its bus connection), walks its tree of accessible objects
//! (at most [`MOST_NODES`] of them, [`MOST_DEPTH`] deep) and returns each `terminal` object's text
//! (at most [`MOST_TEXT`] characters) with the `page tab` it sits in: its name (the title the
//! program set, for xfce4-terminal) and whether it is the selected one. The whole read has a
//! deadline, and runs on a runtime of its own, off any loop.

use std::time::Duration;

use crate::agents::screens::{read_screen, Dialog};
use crate::focus::strategy::{draws_terminals, Host};
use crate::model::AgentKind;
use atspi::proxy::accessible::{AccessibleProxy, ObjectRefExt};
use atspi::proxy::text::TextProxy;
use atspi::{Role, State};

/// The most objects of one application's tree that are looked at.
pub const MOST_NODES: usize = 5_000;
/// How deep the walk goes; a terminal tab is a dozen levels down at most.
pub const MOST_DEPTH: usize = 32;
/// The most characters of one terminal's text that are read: a screen is a few thousand.
pub const MOST_TEXT: i32 = 256 * 1024;

/// One terminal tab of an application, as the accessibility bus tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tab {
    /// The name of the `page tab` it sits in (xfce4-terminal names it by the program's title;
    /// GNOME Terminal leaves it empty).
    pub title: Option<String>,
    /// Its page tab is the selected one of its window.
    pub selected: bool,
    /// The visible text of its terminal.
    pub text: String,
}

/// Why an application's terminals could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unread {
    #[error("no accessibility bus: {0}")]
    NoBus(String),
    #[error("process {0} has no application on the accessibility bus")]
    NotListed(u32),
    #[error("the application publishes no terminal text")]
    NoTerminals,
    #[error("the accessibility bus did not answer within {} ms", .0.as_millis())]
    TimedOut(Duration),
    #[error("the accessibility bus failed: {0}")]
    Failed(String),
}

/// The terminal tabs of the application whose process is `pid`, on the accessibility bus of the
/// session bus at `session_bus` (a D-Bus address, as in `$DBUS_SESSION_BUS_ADDRESS`), within
/// `deadline`.
pub fn read_app(session_bus: &str, pid: u32, deadline: Duration) -> Result<Vec<Tab>, Unread> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| Unread::Failed(error.to_string()))?;
    runtime.block_on(async {
        tokio::time::timeout(deadline, read(session_bus, pid))
            .await
            .map_err(|_| Unread::TimedOut(deadline))?
    })
}

async fn read(session_bus: &str, pid: u32) -> Result<Vec<Tab>, Unread> {
    let no_bus = |error: &dyn std::fmt::Display| Unread::NoBus(error.to_string());
    let session = zbus::connection::Builder::address(session_bus)
        .map_err(|e| no_bus(&e))?
        .build()
        .await
        .map_err(|e| no_bus(&e))?;
    let address = atspi::proxy::bus::BusProxy::new(&session)
        .await
        .map_err(|e| no_bus(&e))?
        .get_address()
        .await
        .map_err(|e| no_bus(&e))?;
    let a11y = atspi::AccessibilityConnection::from_address(
        address.parse().map_err(|e: zbus::Error| no_bus(&e))?,
    )
    .await
    .map_err(|e| no_bus(&e))?;
    let bus = a11y.connection();
    let failed = |error: &dyn std::fmt::Display| Unread::Failed(error.to_string());
    let root = a11y
        .root_accessible_on_registry()
        .await
        .map_err(|e| failed(&e))?;
    let dbus = zbus::fdo::DBusProxy::new(bus)
        .await
        .map_err(|e| failed(&e))?;
    let mut app = None;
    for child in root.get_children().await.map_err(|e| failed(&e))? {
        let Some(name) = child.name() else { continue };
        let owner = dbus
            .get_connection_unix_process_id(name.clone().into())
            .await
            .ok();
        if owner == Some(pid) {
            app = Some(child);
            break;
        }
    }
    let app = app.ok_or(Unread::NotListed(pid))?;
    let mut tabs = Vec::new();
    // Each object with the page tab it sits in, if any: (title, selected).
    let mut queue = vec![(app, 0usize, None::<(Option<String>, bool)>)];
    let mut seen = 0;
    while let Some((object, depth, tab)) = queue.pop() {
        seen += 1;
        if seen > MOST_NODES {
            break;
        }
        if depth > MOST_DEPTH {
            continue;
        }
        let proxy: AccessibleProxy<'_> = object
            .as_accessible_proxy(bus)
            .await
            .map_err(|e| failed(&e))?;
        let role = proxy.get_role().await.map_err(|e| failed(&e))?;
        let mut here = tab.clone();
        match role {
            Role::PageTab => {
                let title = proxy.name().await.ok().filter(|name| !name.is_empty());
                let selected = proxy
                    .get_state()
                    .await
                    .is_ok_and(|state| state.contains(State::Selected));
                here = Some((title, selected));
            }
            Role::Terminal => {
                let text = TextProxy::builder(bus)
                    .destination(proxy.inner().destination().to_owned())
                    .and_then(|b| b.path(proxy.inner().path().to_owned()))
                    .map_err(|e| failed(&e))?
                    .build()
                    .await
                    .map_err(|e| failed(&e))?;
                // The last MOST_TEXT characters, and no more whatever the application answers.
                let count = text.character_count().await.map_err(|e| failed(&e))?;
                let text = if count > 0 {
                    let start = count.saturating_sub(MOST_TEXT).max(0);
                    let text = text.get_text(start, count).await.map_err(|e| failed(&e))?;
                    text.chars().take(MOST_TEXT as usize).collect()
                } else {
                    String::new()
                };
                let (title, selected) = here.clone().unwrap_or((None, true));
                tabs.push(Tab {
                    title,
                    selected,
                    text,
                });
                continue;
            }
            _ => {}
        }
        let children = proxy.get_children().await.map_err(|e| failed(&e))?;
        // Pushed in reverse, so the tree is walked in its order; never more than the walk could
        // reach, whatever an application answers.
        for child in children.into_iter().take(MOST_NODES).rev() {
            queue.push((child, depth + 1, here.clone()));
        }
    }
    if tabs.is_empty() {
        return Err(Unread::NoTerminals);
    }
    Ok(tabs)
}

/// The terminal applications that publish their tabs' text on the accessibility bus: those built
/// on VTE (measured: xfce4-terminal 1.0.4 and GNOME Terminal 3.46.8 with no setting changed), and
/// Konsole through Qt's accessibility (not measured).
pub const PUBLISHERS: &[&str] = &[
    "gnome-terminal-server",
    "xfce4-terminal",
    "tilix",
    "terminator",
    "mate-terminal",
    "ptyxis-agent",
    "kgx",
    "konsole",
];

/// The application among `host`'s ancestors that draws its terminal, when it is one of
/// [`PUBLISHERS`]: its pid and program. The first terminal on the way up decides: a session in
/// tmux or in an xterm inside GNOME Terminal is not GNOME Terminal's to read.
pub fn publisher(host: &Host) -> Option<(u32, String)> {
    host.ancestors
        .iter()
        .skip(1)
        .map(|ancestor| (ancestor.pid, ancestor.program()))
        .find(|(_, program)| draws_terminals(program) || PUBLISHERS.contains(&program.as_str()))
        .filter(|(_, program)| PUBLISHERS.contains(&program.as_str()))
}

/// Which of an application's tabs shows the dialog of a session, or why none can be said to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TabChoice {
    /// Tab `index` (in the order [`read_app`] gives), and why it is the session's.
    Tab { index: usize, why: String },
    /// No tab shows a dialog of the session's agent.
    NoDialog,
    /// More than one session could own what the tabs show: decided for none of them.
    Ambiguous(String),
}

/// The tab of `tabs` that shows the dialog of a session of `agent`, when the evidence is
/// unambiguous: the one tab whose dialog asks about `pending` (the command the session's records
/// hold as its open call), or else the one tab showing a dialog of `agent` while `sessions_here`
/// is 1 (no other session of that agent runs in this application). A wrong tab is worse than
/// none, so anything else is [`TabChoice::Ambiguous`], with why.
pub fn choose_tab(
    agent: AgentKind,
    tabs: &[Tab],
    pending: Option<&str>,
    sessions_here: usize,
) -> TabChoice {
    let dialogs: Vec<(usize, Dialog)> = tabs
        .iter()
        .enumerate()
        .filter_map(|(index, tab)| Some((index, read_screen(agent, &tab.text).dialog()?.clone())))
        .collect();
    if dialogs.is_empty() {
        return TabChoice::NoDialog;
    }
    if let Some(pending) = pending.map(str::trim).filter(|p| !p.is_empty()) {
        let asking: Vec<usize> = dialogs
            .iter()
            .filter(|(_, dialog)| dialog.detail.join("\n").trim() == pending)
            .map(|(index, _)| *index)
            .collect();
        match asking.as_slice() {
            [index] => {
                return TabChoice::Tab {
                    index: *index,
                    why: "its dialog asks about the session's open call".to_string(),
                }
            }
            [] => {}
            many => {
                return TabChoice::Ambiguous(format!(
                    "{} tabs ask about the same command",
                    many.len()
                ))
            }
        }
    }
    let name = agent.display_name();
    match (dialogs.as_slice(), sessions_here) {
        ([(index, _)], 1) => TabChoice::Tab {
            index: *index,
            why: format!("the only tab showing a dialog of {name}"),
        },
        (shown, 1) => TabChoice::Ambiguous(format!("{} tabs show a dialog of {name}", shown.len())),
        (shown, sessions) => TabChoice::Ambiguous(format!(
            "{} tab(s) show a dialog of {name}, and {sessions} of its sessions run in this \
             terminal",
            shown.len()
        )),
    }
}

/// How long `slate doctor` gives the accessibility bus for one application.
pub const DOCTOR_DEADLINE: Duration = Duration::from_secs(2);

/// Where a process's terminal could be read on the accessibility bus: the publishing
/// application's pid and program, and the session bus its accessibility bus hangs from (the
/// process's `$DBUS_SESSION_BUS_ADDRESS`, else Slate's own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub app: u32,
    pub program: String,
    pub bus: Option<String>,
}

/// [`Place`] of process `pid`, from one read of the process table; `None` when its terminal is
/// not one of [`PUBLISHERS`] (or the process is gone).
pub fn place_of(pid: u32) -> Option<Place> {
    let (_, host) = crate::focus::hosts(&[pid]).into_iter().next()?;
    let host = host?;
    let (app, program) = publisher(&host)?;
    let bus = host.env.dbus_session.clone().or_else(|| {
        std::env::var("DBUS_SESSION_BUS_ADDRESS")
            .ok()
            .filter(|v| !v.is_empty())
    });
    Some(Place { app, program, bus })
}
