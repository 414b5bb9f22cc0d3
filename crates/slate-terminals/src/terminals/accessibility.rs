//! The desktop's own terminals (GNOME Terminal, xfce4-terminal and the other VTE terminals) read
//! through the accessibility bus (AT-SPI2), where they publish each tab's visible text for screen
//! readers: [`ACCESSIBILITY`], a terminal backend that sees and never types. No terminal device
//! is published there, and a tab can show anything (a shell that printed a recorded dialog), so a
//! tab is a session's only when counting proves it: every tab of the application holds a process
//! of its agent, and the tab is the only one, or its dialog is about the session's open call and
//! no other's ([`choose_tab`], pure).
//!
//! [`read_app`] finds the application whose process is `pid` among those the accessibility
//! registry lists (by the process id of its bus connection), walks its tree of accessible objects
//! (at most [`MOST_NODES`] of them, [`MOST_DEPTH`] deep, each once) and returns each `terminal`
//! object's text (its last [`MOST_TEXT`] characters) with the `page tab` it sits in: its name
//! (the title the program set, for xfce4-terminal) and whether it is the selected one.
//! [`read_texts`], the sensing loop's read, re-reads only the text of the terminals the last walk
//! found, and walks again when a new session asks, after [`WALK_AGAIN`], or when one is gone.
//! Every read has a deadline and runs on the runtime of a connection kept per session bus, off
//! any loop; the connection is dropped after a failure.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use super::backend::{Address, Backend, Clues, PaneRead, PaneText, Wanted};
use crate::focus::strategy::{draws_terminals, Host};
use atspi::proxy::accessible::{AccessibleProxy, ObjectRefExt};
use atspi::proxy::text::TextProxy;
use atspi::{Role, State};
use slate_core::agents::keys::{compare, Key};
use slate_core::agents::screens::{read_screen, Dialog};
use slate_core::model::{AgentKind, Can, PendingCall, TerminalKind, TerminalView, Timestamp};

/// Why a dialog read in a desktop terminal's tab is not answered: the view's note, so the same
/// words are on the session's dialog and in a refusal.
pub const SEEN_ONLY: &str = "this terminal is read through the accessibility bus, which offers \
     no safe way to type into one of its tabs: Slate shows its dialogs and never answers them; \
     answer it in its terminal";

/// The most objects of one application's tree that are looked at.
pub const MOST_NODES: usize = 5_000;
/// How deep the walk goes; a terminal tab is a dozen levels down at most.
pub const MOST_DEPTH: usize = 32;
/// The most characters of one terminal's text that are read, its last: a screen is a few
/// thousand (a 300-column, 100-row one is 30,000), and a dialog is at its foot.
pub const MOST_TEXT: i32 = 32 * 1024;

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
/// `deadline`, with each tab's title and whether it is selected: a whole walk of its tree. The
/// connection to that accessibility bus is kept for the next read ([`Link`]), and dropped after
/// any failure, so a bus that went away is connected to afresh.
pub fn read_app(session_bus: &str, pid: u32, deadline: Duration) -> Result<Vec<Tab>, Unread> {
    with_link(session_bus, pid, deadline, None)
}

/// The text of every terminal tab of the application whose process is `pid`, for the sessions
/// `panes` (their terminal devices): the sensing loop's read, once a second while a call is
/// open. The tree is walked again only when a session not among those it was walked for asks (a
/// new tab may hold its dialog), after [`WALK_AGAIN`], or when a terminal it found is gone;
/// between walks a read is two calls per tab. Titles and selection are not read here.
pub fn read_texts(
    session_bus: &str,
    pid: u32,
    panes: &BTreeSet<String>,
    deadline: Duration,
) -> Result<Vec<Tab>, Unread> {
    with_link(session_bus, pid, deadline, Some(panes))
}

/// [`read_texts`] for `Some(panes)`, [`read_app`] for `None`, on a kept link.
async fn run(
    link: &mut Linked,
    session_bus: &str,
    pid: u32,
    panes: Option<&BTreeSet<String>>,
) -> Result<Vec<Tab>, Unread> {
    // What was found of applications not read for a while is forgotten: they may be gone.
    link.walks
        .retain(|app, walked| *app == pid || walked.at.elapsed() < FORGET_AFTER);
    let walks = &link.walks;
    link.apps
        .retain(|app, _| *app == pid || walks.contains_key(app));
    let Some(panes) = panes else {
        let walked = walk(link, session_bus, pid).await?;
        return Ok(walked.into_iter().map(|(_, tab)| tab).collect());
    };
    let fresh = link
        .walks
        .get(&pid)
        .filter(|walked| walked.at.elapsed() < WALK_AGAIN && panes.is_subset(&walked.panes));
    if let (Some(walked), Some(bus)) = (fresh, &link.a11y) {
        let mut tabs = Vec::new();
        for terminal in &walked.terminals {
            match text_of(bus, terminal).await {
                Ok(text) => tabs.push(Tab {
                    title: None,
                    selected: false,
                    text,
                }),
                Err(_) => break,
            }
        }
        if tabs.len() == walked.terminals.len() {
            return Ok(tabs);
        }
    }
    let walked = walk(link, session_bus, pid).await?;
    let (terminals, tabs): (Vec<_>, Vec<_>) = walked
        .into_iter()
        .map(|(terminal, tab)| {
            let tab = Tab {
                title: None,
                selected: false,
                text: tab.text,
            };
            (terminal, tab)
        })
        .unzip();
    let walked = Walked {
        terminals,
        panes: panes.clone(),
        at: Instant::now(),
    };
    link.walks.insert(pid, walked);
    Ok(tabs)
}

/// How long the terminals found by one walk of an application's tree are read without another.
pub const WALK_AGAIN: Duration = Duration::from_secs(10);

/// How long an application not read is remembered.
const FORGET_AFTER: Duration = Duration::from_secs(600);

/// Runs [`run`] on the kept link to `session_bus`'s accessibility bus, within `deadline`.
fn with_link(
    session_bus: &str,
    pid: u32,
    deadline: Duration,
    panes: Option<&BTreeSet<String>>,
) -> Result<Vec<Tab>, Unread> {
    // The link is taken out for the read, so that a slow bus holds up no read of another; a read
    // of the same bus meanwhile makes a link of its own, and the one put back last is kept.
    let taken = LINKS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .remove(session_bus);
    let mut link = match taken {
        Some(link) => link,
        None => Link {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|error| Unread::Failed(error.to_string()))?,
            state: Linked::default(),
        },
    };
    let Link { runtime, state } = &mut link;
    let read = runtime.block_on(async {
        tokio::time::timeout(deadline, run(state, session_bus, pid, panes))
            .await
            .map_err(|_| Unread::TimedOut(deadline))?
    });
    let mut links = LINKS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    match &read {
        Ok(_) => {
            links.insert(session_bus.to_string(), link);
        }
        // Only the application is not there: the bus is fine.
        Err(Unread::NotListed(_) | Unread::NoTerminals) => {
            link.state.apps.remove(&pid);
            link.state.walks.remove(&pid);
            links.insert(session_bus.to_string(), link);
        }
        Err(_) => {}
    }
    read
}

/// A connection to one session's accessibility bus, on a runtime of its own that runs only while
/// a read does.
struct Link {
    runtime: tokio::runtime::Runtime,
    state: Linked,
}

/// What a link knows: its connection, the applications found on it by process id, and the
/// terminals of each found by its last walk.
#[derive(Default)]
struct Linked {
    /// A plain connection to the accessibility bus. Not atspi's `AccessibilityConnection`: that
    /// one, as the `atspi` crate builds it (its `p2p` feature is always on), asks every
    /// application on the registry for its own bus and connects to each, and fails whole when any
    /// one of them answers wrong (`tests/terminals/hostile_bus.rs`).
    a11y: Option<zbus::Connection>,
    apps: HashMap<u32, atspi::ObjectRefOwned>,
    walks: HashMap<u32, Walked>,
}

struct Walked {
    terminals: Vec<atspi::ObjectRefOwned>,
    /// The sessions it was walked for.
    panes: BTreeSet<String>,
    at: Instant,
}

/// The links kept, by session bus address: a handful at most (one per desktop session).
static LINKS: LazyLock<Mutex<HashMap<String, Link>>> = LazyLock::new(Mutex::default);

/// Where the registry keeps its root: the applications on the bus are its children.
const REGISTRY: &str = "org.a11y.atspi.Registry";
const REGISTRY_ROOT: &str = "/org/a11y/atspi/accessible/root";

async fn connect(session_bus: &str) -> Result<zbus::Connection, Unread> {
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
    zbus::connection::Builder::address(address.as_str())
        .map_err(|e| no_bus(&e))?
        .build()
        .await
        .map_err(|e| no_bus(&e))
}

fn failed(error: &dyn std::fmt::Display) -> Unread {
    Unread::Failed(error.to_string())
}

/// Every terminal of the application whose process is `pid`, with its tab, in the tree's order.
async fn walk(
    link: &mut Linked,
    session_bus: &str,
    pid: u32,
) -> Result<Vec<(atspi::ObjectRefOwned, Tab)>, Unread> {
    if link.a11y.is_none() {
        link.a11y = Some(connect(session_bus).await?);
    }
    let Some(bus) = &link.a11y else {
        return Err(Unread::NoBus("not connected".to_string()));
    };
    let app = match link.apps.get(&pid) {
        Some(app) => app.clone(),
        None => {
            let root = AccessibleProxy::builder(bus)
                .destination(REGISTRY)
                .and_then(|b| b.path(REGISTRY_ROOT))
                .map_err(|e| failed(&e))?
                .cache_properties(zbus::proxy::CacheProperties::No)
                .build()
                .await
                .map_err(|e| failed(&e))?;
            let dbus = zbus::fdo::DBusProxy::new(bus)
                .await
                .map_err(|e| failed(&e))?;
            let mut found = None;
            for child in root.get_children().await.map_err(|e| failed(&e))? {
                let Some(name) = child.name() else { continue };
                let owner = dbus
                    .get_connection_unix_process_id(name.clone().into())
                    .await
                    .ok();
                if owner == Some(pid) {
                    found = Some(child);
                    break;
                }
            }
            let app = found.ok_or(Unread::NotListed(pid))?;
            link.apps.insert(pid, app.clone());
            app
        }
    };
    let mut tabs = Vec::new();
    // Each object with the page tab it sits in, if any: (title, selected).
    let mut queue = vec![(app, 0usize, None::<(Option<String>, bool)>)];
    // An object listed under two parents is read once.
    let mut visited = HashSet::new();
    while let Some((object, depth, tab)) = queue.pop() {
        if visited.len() >= MOST_NODES {
            break;
        }
        if depth > MOST_DEPTH || !visited.insert(object.clone()) {
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
                let text = text_of(bus, &object).await?;
                let (title, selected) = here.clone().unwrap_or((None, true));
                tabs.push((
                    object.clone(),
                    Tab {
                        title,
                        selected,
                        text,
                    },
                ));
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

/// The last [`MOST_TEXT`] characters of a terminal object's text, and no more whatever the
/// application answers.
async fn text_of(
    bus: &zbus::Connection,
    terminal: &atspi::ObjectRefOwned,
) -> Result<String, Unread> {
    let (Some(name), path) = (terminal.name(), terminal.path()) else {
        return Err(Unread::Failed(
            "a terminal object with no bus name".to_string(),
        ));
    };
    let text = TextProxy::builder(bus)
        .destination(name.to_owned())
        .and_then(|b| b.path(path.to_owned()))
        .map_err(|e| failed(&e))?
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .map_err(|e| failed(&e))?;
    let count = text.character_count().await.map_err(|e| failed(&e))?;
    if count <= 0 {
        return Ok(String::new());
    }
    let start = count.saturating_sub(MOST_TEXT).max(0);
    let text = text.get_text(start, count).await.map_err(|e| failed(&e))?;
    Ok(text.chars().take(MOST_TEXT as usize).collect())
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
    /// Every dialog of its agent shown is about another command than the session's open call:
    /// none is the session's.
    Others(usize),
    /// Nothing proves which tab is the session's: decided for none.
    Ambiguous(String),
}

/// The tab of `tabs` (all the application's) that shows the dialog of a session of `agent`, when
/// it is proved to be the session's own; `clues` says what is known of the session (its open
/// call, the tabs holding a process of `agent`, the other sessions' open calls).
///
/// No tab names the process that draws in it, and a tab can show any text: a shell that `cat`s a
/// recorded dialog shows one as an agent draws it. So a tab is proved only by counting: when as
/// many tabs are read as hold a process of `agent` (`clues.peers`), every tab holds one, and a
/// dialog of `agent` shown is one of theirs. Then the tab is the session's when it is the
/// application's only tab, or when its dialog is about the session's open call (compared as an
/// answer compares them: `agents::keys::compare`), about none of the open calls of the other
/// sessions of `agent` there (`clues.others`; a session whose transcript holds no call open asks
/// nothing), and no other tab's dialog is. A tab beyond those may be a shell or any other program
/// showing a copy: then no tab is proved, even to the only session of `agent`.
///
/// [`TabChoice::NoDialog`] when no tab shows a dialog of `agent`, [`TabChoice::Others`] when
/// every dialog shown is about another command than the session's call. A wrong tab is worse
/// than none, so anything else is [`TabChoice::Ambiguous`], with why.
pub fn choose_tab(agent: AgentKind, tabs: &[Tab], clues: &Clues) -> TabChoice {
    choose_among(agent, &dialogs_in(agent, tabs), tabs.len(), clues)
}

/// The dialogs of `agent` that `tabs` show, by tab index: each screen read once with the
/// agent's grammar, whatever number of its sessions a read is for.
pub fn dialogs_in(agent: AgentKind, tabs: &[Tab]) -> Vec<(usize, Dialog)> {
    tabs.iter()
        .enumerate()
        .filter_map(|(index, tab)| Some((index, read_screen(agent, &tab.text).dialog()?.clone())))
        .collect()
}

/// [`choose_tab`] over the dialogs [`dialogs_in`] found among `tabs` tabs.
fn choose_among(
    agent: AgentKind,
    dialogs: &[(usize, Dialog)],
    tabs: usize,
    clues: &Clues,
) -> TabChoice {
    if dialogs.is_empty() {
        return TabChoice::NoDialog;
    }
    let about = |dialog: &Dialog, call: &PendingCall| compare(agent, dialog, call);
    // Every dialog is about another command: none of them is this session's.
    if let Some(call) = &clues.call {
        if dialogs
            .iter()
            .all(|(_, dialog)| about(dialog, call) == Some(false))
        {
            return TabChoice::Others(dialogs.len());
        }
    }
    let name = agent.display_name();
    let held = clues.peers.max(1);
    if tabs > held {
        return TabChoice::Ambiguous(format!(
            "{tabs} tabs read, and {name} runs in only {held}: another tab (a shell, another \
             program) could show a copy of a dialog"
        ));
    }
    if tabs < held {
        return TabChoice::Ambiguous(format!(
            "{tabs} tab(s) read, fewer than the {held} {name} runs in"
        ));
    }
    if let [(index, _)] = dialogs {
        if tabs == 1 {
            return TabChoice::Tab {
                index: *index,
                why: format!("the application's only tab, and it holds {name}"),
            };
        }
    }
    // One session of the agent to a tab: only its open call tells which dialog is whose.
    let Some(call) = &clues.call else {
        return TabChoice::Ambiguous(format!(
            "{name} runs in {held} tabs, and its transcript holds no call open to tell its \
             dialog by"
        ));
    };
    let asking: Vec<&(usize, Dialog)> = dialogs
        .iter()
        .filter(|(_, dialog)| about(dialog, call) == Some(true))
        .collect();
    match asking.as_slice() {
        [] => TabChoice::Ambiguous(format!(
            "{name} runs in {held} tabs, and no dialog shown is known to be about its open call"
        )),
        [(index, dialog)] => {
            if clues
                .others
                .iter()
                .any(|other| about(dialog, other) == Some(true))
            {
                TabChoice::Ambiguous(format!(
                    "another session of {name} in this terminal holds the same call open"
                ))
            } else if clues
                .others
                .iter()
                .any(|other| about(dialog, other).is_none())
            {
                TabChoice::Ambiguous(format!(
                    "its dialog could be about the open call of another session of {name} here"
                ))
            } else {
                TabChoice::Tab {
                    index: *index,
                    why: "its dialog asks about the session's open call, and no other session's"
                        .to_string(),
                }
            }
        }
        many => TabChoice::Ambiguous(format!("{} tabs ask about the same command", many.len())),
    }
}

/// What `slate doctor` tells a person whose terminal is not on the accessibility bus. Qt
/// applications (Konsole 22.12.3, measured) publish nothing while the bus's `IsEnabled` is false,
/// the default outside a screen reader; one started after it is set publishes its text. Slate
/// never sets it: that is the person's choice.
pub const UNLISTED_ADVICE: &str = "a Qt terminal such as Konsole publishes its text only while \
     the desktop's accessibility is on, which Slate never switches on: to choose it, run \
     `dbus-send --session --print-reply --dest=org.a11y.Bus /org/a11y/bus \
     org.freedesktop.DBus.Properties.Set string:org.a11y.Status string:IsEnabled \
     variant:boolean:true` and start the terminal again";

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

/// The accessibility bus as a terminal backend: a session in a desktop terminal that nothing
/// else placed is watched through its application ([`publisher`]). Its address is the
/// application (`program:pid@bus`, the session bus its accessibility bus hangs from) and the
/// agent's terminal device (its tab, whichever that is); a read takes every tab of the
/// application at once, within the terminals' read limit, and gives each session the tab
/// [`choose_tab`] names, or an empty screen (nothing known, so the transcript decides) when no
/// tab shows a dialog of its agent, none shows one about its open call, or nothing proves the
/// tab is its own. Nothing is ever typed: [`SEEN_ONLY`].
pub struct Accessibility;

pub static ACCESSIBILITY: Accessibility = Accessibility;

/// An application as an address's server names it.
struct App<'a> {
    program: &'a str,
    pid: u32,
    bus: &'a str,
}

fn app_of(server: &str) -> Option<App<'_>> {
    let (program, rest) = server.split_once(':')?;
    let (pid, bus) = rest.split_once('@')?;
    Some(App {
        program,
        pid: pid.parse().ok()?,
        bus,
    })
}

impl Backend for Accessibility {
    fn kind(&self) -> TerminalKind {
        TerminalKind::Accessibility
    }

    fn can(&self) -> Can {
        // Read, never typed into: a tab has no terminal device to prove it by, and the bus
        // offers no safe way in for keys.
        Can {
            read: true,
            ..Can::NOTHING
        }
    }

    fn describe(&self, address: &Address) -> String {
        match app_of(&address.server) {
            Some(app) => format!(
                "{} (pid {}) on the accessibility bus, the tab on {}",
                app.program, app.pid, address.pane
            ),
            None => format!("the accessibility bus, the tab on {}", address.pane),
        }
    }

    fn view(&self, address: &Address) -> TerminalView {
        TerminalView {
            kind: self.kind(),
            pane: app_of(&address.server).map(|app| app.program.to_string()),
            sensed: true,
            note: Some(SEEN_ONLY.to_string()),
            can: self.can(),
        }
    }

    fn watch(&self, host: &Host) -> Option<Address> {
        let (app, program) = publisher(host)?;
        let bus = host.env.dbus_session.clone().or_else(|| {
            std::env::var("DBUS_SESSION_BUS_ADDRESS")
                .ok()
                .filter(|v| !v.is_empty())
        })?;
        // The tab is its terminal device: the processes of one session share it.
        let tab = match &host.tty {
            Some(tty) if tty.starts_with("/dev/") => tty.clone(),
            _ => format!("process {}", host.pid),
        };
        Some(Address::new(
            &ACCESSIBILITY,
            format!("{program}:{app}@{bus}"),
            tab,
        ))
    }

    fn read(&self, server: &str, wanted: &[Wanted], clock: fn() -> Timestamp) -> Vec<PaneRead> {
        let panes: BTreeSet<String> = wanted.iter().map(|want| want.pane.clone()).collect();
        let tabs = app_of(server)
            .ok_or_else(|| format!("not an application on the accessibility bus: {server}"))
            .and_then(|app| {
                read_texts(app.bus, app.pid, &panes, super::READ_LIMIT)
                    .map_err(|why| why.to_string())
            });
        let tabs = match tabs {
            Ok(tabs) => tabs,
            Err(why) => return wanted.iter().map(|_| Err(why.clone())).collect(),
        };
        let at = clock();
        let mut dialogs: HashMap<AgentKind, Vec<(usize, Dialog)>> = HashMap::new();
        wanted
            .iter()
            .map(|want| {
                let shown = dialogs
                    .entry(want.agent)
                    .or_insert_with(|| dialogs_in(want.agent, &tabs));
                match choose_among(want.agent, shown, tabs.len(), &want.clues) {
                    TabChoice::Tab { index, .. } => {
                        let tab = &tabs[index];
                        let text = PaneText {
                            title: tab.title.clone(),
                            screen: tab.text.clone(),
                        };
                        Ok((text, at))
                    }
                    // No tab shows a dialog of its agent, or none about its call: its own
                    // shows none either.
                    TabChoice::NoDialog | TabChoice::Others(_) => Ok((
                        PaneText {
                            title: None,
                            screen: String::new(),
                        },
                        at,
                    )),
                    // Decided for no session: the transcript decides, and `slate doctor` says
                    // why. Not a failure: the terminal was read, and is read again in a second.
                    TabChoice::Ambiguous(why) => {
                        tracing::debug!(pane = %want.pane, "no tab is known to be its: {why}");
                        Ok((
                            PaneText {
                                title: None,
                                screen: String::new(),
                            },
                            at,
                        ))
                    }
                }
            })
            .collect()
    }

    fn screen(&self, _address: &Address, _colours: bool) -> Result<String, String> {
        Err(SEEN_ONLY.to_string())
    }

    fn send(&self, _address: &Address, _keys: &[Key]) -> Result<(), String> {
        Err(SEEN_ONLY.to_string())
    }
}
