//! The tray menu as plain data, and the tray's tooltip.
//!
//! [`menu_model`] describes the whole menu: the sessions that need you (a click focuses one,
//! a remote one by attaching to it), a note naming each remote machine Slate cannot reach, Open
//! Slate, Pause notifications, Start at login and Quit, and a note when the config file does not
//! read. Menu ids read back into [`MenuAction`]s. The desktop shell builds its native menu
//! from these entries and decides what a click does; this module only describes.

use crate::config::Notifications;
use crate::model::{AgentKind, IntentState, Machine, Session, SessionKey, Timestamp};
use crate::policy::{needs_you, notifications};
use crate::remote::{Report, Status};

/// A menu entry's reason text is cut here, so one chatty session cannot widen the whole menu.
const MAX_REASON: usize = 60;

/// The config error's note in the menu is cut here; the window shows it whole.
const MAX_NOTE: usize = 100;

/// Whether notifications are paused, as the menu shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pause {
    Off,
    Until(Timestamp),
    UntilResumed,
}

impl Pause {
    /// The pause the config's `[notifications]` asks for: none, until a time, or (with
    /// `enabled = false`) until resumed.
    pub fn from_config(notifications: &Notifications) -> Pause {
        if !notifications.enabled {
            return Pause::UntilResumed;
        }
        match notifications.paused_until {
            Some(until) => Pause::Until(until),
            None => Pause::Off,
        }
    }

    pub fn is_paused(self, now: Timestamp) -> bool {
        match self {
            Pause::Off => false,
            Pause::Until(until) => now < until,
            Pause::UntilResumed => true,
        }
    }
}

/// What a menu entry does when clicked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MenuAction {
    Focus(SessionKey),
    OpenWindow,
    PauseForAnHour,
    PauseUntilResumed,
    Resume,
    ToggleAutostart,
    Quit,
}

impl MenuAction {
    /// The menu id that stands for this action.
    pub fn id(&self) -> String {
        match self {
            MenuAction::Focus(key) => match &key.machine {
                Some(machine) => format!("focus@{machine}:{}:{}", key.agent.as_str(), key.id),
                None => format!("focus:{}:{}", key.agent.as_str(), key.id),
            },
            MenuAction::OpenWindow => "open".to_string(),
            MenuAction::PauseForAnHour => "pause-hour".to_string(),
            MenuAction::PauseUntilResumed => "pause-resumed".to_string(),
            MenuAction::Resume => "resume".to_string(),
            MenuAction::ToggleAutostart => "autostart".to_string(),
            MenuAction::Quit => "quit".to_string(),
        }
    }

    /// Reads a menu id back; `None` for an id this module did not make.
    pub fn parse(id: &str) -> Option<MenuAction> {
        if let Some(rest) = id.strip_prefix("focus@") {
            let (machine, rest) = rest.split_once(':')?;
            let (agent, session) = rest.split_once(':')?;
            let key = SessionKey::new(AgentKind::from_wire(agent).ok()?, session);
            return Some(MenuAction::Focus(key.on(Some(Machine::new(machine).ok()?))));
        }
        if let Some(rest) = id.strip_prefix("focus:") {
            let (agent, session) = rest.split_once(':')?;
            return Some(MenuAction::Focus(SessionKey::new(
                AgentKind::parse(agent)?,
                session,
            )));
        }
        Some(match id {
            "open" => MenuAction::OpenWindow,
            "pause-hour" => MenuAction::PauseForAnHour,
            "pause-resumed" => MenuAction::PauseUntilResumed,
            "resume" => MenuAction::Resume,
            "autostart" => MenuAction::ToggleAutostart,
            "quit" => MenuAction::Quit,
            _ => return None,
        })
    }
}

/// One menu entry as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Item {
        action: MenuAction,
        label: String,
    },
    /// A greyed-out line of text.
    Note(String),
    Check {
        action: MenuAction,
        label: String,
        checked: bool,
    },
    Submenu {
        label: String,
        entries: Vec<Entry>,
    },
    Separator,
}

/// What the menu shows besides the sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MenuState<'a> {
    pub pause: Pause,
    pub autostart: bool,
    /// Why the config file is not in force, when it does not read.
    pub config_error: Option<&'a str>,
    /// The remote machines' links, to name those that cannot be reached.
    pub remotes: &'a [Report],
}

/// Describes the whole menu from the live list: a config error first when there is one, the
/// sessions that need you (or a note that none do), a note for each remote machine that cannot
/// be reached (its sessions, which no longer count, are not in the menu), then the app's own
/// actions. Sessions on the live list that do not need you (working, or closed and still held)
/// are not in the menu.
pub fn menu_model(live: &[Session], state: MenuState<'_>, now: Timestamp) -> Vec<Entry> {
    let MenuState {
        pause,
        autostart,
        config_error,
        remotes,
    } = state;
    let mut entries = Vec::new();
    if let Some(error) = config_error {
        entries.push(Entry::Note(format!(
            "Config error: {}",
            cut(error, MAX_NOTE)
        )));
        entries.push(Entry::Separator);
    }
    let waiting: Vec<&Session> = live.iter().filter(|session| needs_you(session)).collect();
    if waiting.is_empty() {
        entries.push(Entry::Note("Nothing needs you".to_string()));
    }
    for session in waiting {
        entries.push(Entry::Item {
            action: MenuAction::Focus(session.key()),
            label: session_label(session),
        });
    }
    for remote in remotes
        .iter()
        .filter(|remote| remote.status == Status::Unreachable)
    {
        entries.push(Entry::Note(unreachable_label(remote)));
    }
    entries.push(Entry::Separator);
    entries.push(Entry::Item {
        action: MenuAction::OpenWindow,
        label: "Open Slate".to_string(),
    });
    if pause.is_paused(now) {
        let label = match pause {
            Pause::Until(until) => {
                format!("Resume notifications (paused until {})", clock_time(until))
            }
            _ => "Resume notifications (paused)".to_string(),
        };
        entries.push(Entry::Item {
            action: MenuAction::Resume,
            label,
        });
    } else {
        entries.push(Entry::Submenu {
            label: "Pause notifications".to_string(),
            entries: vec![
                Entry::Item {
                    action: MenuAction::PauseForAnHour,
                    label: "For 1 hour".to_string(),
                },
                Entry::Item {
                    action: MenuAction::PauseUntilResumed,
                    label: "Until resumed".to_string(),
                },
            ],
        });
    }
    entries.push(Entry::Check {
        action: MenuAction::ToggleAutostart,
        label: "Start at login".to_string(),
        checked: autostart,
    });
    entries.push(Entry::Separator);
    entries.push(Entry::Item {
        action: MenuAction::Quit,
        label: "Quit Slate".to_string(),
    });
    entries
}

/// "acme-api · Claude Code — Asks permission for Bash: cargo test"; a parked session is
/// "Parked · acme-api · Claude Code — …" and a hosted one "acme-api · Codex (hosted) — …".
pub fn session_label(session: &Session) -> String {
    let reason = cut(&session.session_state.reason.text, MAX_REASON);
    // A parked session says so first: it waits on purpose, and fires no notifications.
    let parked = match session.session_state.intent.state {
        IntentState::Parked => "Parked · ",
        IntentState::Awaiting => "Awaiting · ",
        IntentState::None => "",
    };
    // A lone `&` would become a mnemonic marker in the menu.
    format!("{parked}{} — {reason}", notifications::label(session)).replace('&', "&&")
}

/// "box is unreachable (since 14:05 UTC)": a remote machine whose link is down.
pub fn unreachable_label(remote: &Report) -> String {
    format!(
        "{} is unreachable (since {})",
        remote.name,
        clock_time(remote.since)
    )
    .replace('&', "&&")
}

/// "14:05 UTC": the menus have no locale to format with, so the pause end is given in UTC.
fn clock_time(at: Timestamp) -> String {
    let text = at.to_string();
    match text.get(11..16) {
        Some(hhmm) => format!("{hhmm} UTC"),
        None => text,
    }
}

/// `text`, cut to at most `most` characters with an ellipsis.
fn cut(text: &str, most: usize) -> String {
    if text.chars().count() <= most {
        return text.to_string();
    }
    let kept: String = text.chars().take(most - 1).collect();
    format!("{}…", kept.trim_end())
}

/// The tray's tooltip: the count in words, and the config error when there is one.
pub fn tooltip(count: usize, config_error: Option<&str>) -> String {
    let count = match count {
        0 => "Slate: nothing needs you".to_string(),
        1 => "Slate: 1 session needs you".to_string(),
        n => format!("Slate: {n} sessions need you"),
    };
    match config_error {
        Some(error) => format!("{count}\nConfig error: {error}"),
        None => count,
    }
}
