//! The tray icon and its menu.
//!
//! The icon carries the Needs-you count in its pixels (drawn by `badge`) and, where the platform
//! shows one, in the tray title. The menu is the only way in on Linux, where a click on an
//! AppIndicator item never reaches the app (DESKTOP-NOTES §5), so every action lives in it: the
//! sessions that need you (a click focuses one), Open Slate, Pause notifications, Start at login
//! and Quit.
//!
//! The menu is first described as plain data by [`menu_model`], which is pure and tested, and
//! only then turned into Tauri menu items by [`set_menu`]. What a click does is decided in `lib`;
//! this module only maps menu ids to [`MenuAction`]s.

use slate::model::{AgentKind, IntentState, Session, SessionKey, Timestamp};
use tauri::image::Image;
use tauri::menu::{CheckMenuItem, IsMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Runtime};

use crate::badge;
use crate::notify;

/// The tray's id; on Linux its D-Bus object is `/org/ayatana/NotificationItem/tray_icon_tray_app_slate`.
pub const TRAY_ID: &str = "slate";

/// A menu entry's reason text is cut here, so one chatty session cannot widen the whole menu.
const MAX_REASON: usize = 60;

/// Whether notifications are paused, as the menu shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pause {
    Off,
    Until(Timestamp),
    UntilResumed,
}

impl Pause {
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
            MenuAction::Focus(key) => format!("focus:{}:{}", key.agent.as_str(), key.id),
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

/// Describes the whole menu: the sessions that need you first (or a note that none do), then the
/// app's own actions.
pub fn menu_model(
    needs_you: &[Session],
    pause: Pause,
    autostart: bool,
    now: Timestamp,
) -> Vec<Entry> {
    let mut entries = Vec::new();
    if needs_you.is_empty() {
        entries.push(Entry::Note("Nothing needs you".to_string()));
    }
    for session in needs_you {
        entries.push(Entry::Item {
            action: MenuAction::Focus(notify::key_of(session)),
            label: session_label(session),
        });
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
    let reason = &session.session_state.reason.text;
    let reason = if reason.chars().count() > MAX_REASON {
        let cut: String = reason.chars().take(MAX_REASON - 1).collect();
        format!("{}…", cut.trim_end())
    } else {
        reason.clone()
    };
    // A parked session says so first: it waits on purpose, and fires no notifications.
    let parked = match session.session_state.intent.state {
        IntentState::Parked => "Parked · ",
        IntentState::Awaiting => "Awaiting · ",
        IntentState::None => "",
    };
    // A lone `&` would become a mnemonic marker in the menu.
    format!("{parked}{} — {reason}", notify::label(session)).replace('&', "&&")
}

/// "14:05 UTC": the menus have no locale to format with, so the pause end is given in UTC.
fn clock_time(at: Timestamp) -> String {
    let text = at.to_string();
    match text.get(11..16) {
        Some(hhmm) => format!("{hhmm} UTC"),
        None => text,
    }
}

/// Creates the tray with the icon for `count` and the given menu.
pub fn create_tray<R: Runtime>(
    app: &AppHandle<R>,
    entries: &[Entry],
    count: usize,
    on_action: impl Fn(&AppHandle<R>, MenuAction) + Send + Sync + 'static,
) -> tauri::Result<TrayIcon<R>> {
    let menu = build_menu(app, entries)?;
    let tray = TrayIconBuilder::with_id(TRAY_ID)
        .icon(icon(count))
        .title(count.to_string())
        .tooltip(tooltip(count))
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(
            move |app, event| match MenuAction::parse(event.id().as_ref()) {
                Some(action) => on_action(app, action),
                None => tracing::warn!(id = event.id().as_ref(), "a menu id Slate did not make"),
            },
        )
        .build(app)?;
    Ok(tray)
}

/// Shows `count` in the icon, the title and the tooltip.
pub fn set_count<R: Runtime>(tray: &TrayIcon<R>, count: usize) -> tauri::Result<()> {
    tray.set_icon(Some(icon(count)))?;
    tray.set_title(Some(count.to_string()))?;
    tray.set_tooltip(Some(tooltip(count)))?;
    Ok(())
}

/// Replaces the menu.
pub fn set_menu<R: Runtime>(tray: &TrayIcon<R>, entries: &[Entry]) -> tauri::Result<()> {
    let menu = build_menu(tray.app_handle(), entries)?;
    tray.set_menu(Some(menu))
}

fn icon(count: usize) -> Image<'static> {
    let drawn = badge::render(count);
    Image::new_owned(drawn.rgba, drawn.width, drawn.height)
}

fn tooltip(count: usize) -> String {
    match count {
        0 => "Slate: nothing needs you".to_string(),
        1 => "Slate: 1 session needs you".to_string(),
        n => format!("Slate: {n} sessions need you"),
    }
}

fn build_menu<R: Runtime>(app: &AppHandle<R>, entries: &[Entry]) -> tauri::Result<Menu<R>> {
    let menu = Menu::new(app)?;
    for entry in entries {
        menu.append(&*build_entry(app, entry)?)?;
    }
    Ok(menu)
}

fn build_entry<R: Runtime>(
    app: &AppHandle<R>,
    entry: &Entry,
) -> tauri::Result<Box<dyn IsMenuItem<R>>> {
    Ok(match entry {
        Entry::Item { action, label } => Box::new(MenuItem::with_id(
            app,
            action.id(),
            label,
            true,
            None::<&str>,
        )?),
        Entry::Note(text) => Box::new(MenuItem::new(app, text, false, None::<&str>)?),
        Entry::Check {
            action,
            label,
            checked,
        } => Box::new(CheckMenuItem::with_id(
            app,
            action.id(),
            label,
            true,
            *checked,
            None::<&str>,
        )?),
        Entry::Submenu { label, entries } => {
            let submenu = Submenu::new(app, label, true)?;
            for entry in entries {
                submenu.append(&*build_entry(app, entry)?)?;
            }
            Box::new(submenu)
        }
        Entry::Separator => Box::new(PredefinedMenuItem::separator(app)?),
    })
}
