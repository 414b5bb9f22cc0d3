//! The tray icon and its menu, as Tauri objects, and their redrawing.
//!
//! The icon carries the Needs-you count in its pixels (drawn by `badge`) and, where the platform
//! shows one, in the tray title. The menu is the only way in on Linux, where a click on an
//! AppIndicator item never reaches the app, so every action lives in it. What the menu holds and
//! what the tooltip says are the engine's policy (`slate::policy::menu`); this module only turns
//! those entries into Tauri menu items, adds the note about the engine, redraws what changed
//! ([`refresh`]), and maps clicks back to `MenuAction`s for `clicks`. A menu id comes back from
//! the tray host as untrusted text: only one `MenuAction::parse` reads is acted on.

use slate::live;
use slate::model::Session;
use slate::policy::menu::{self, Entry, MenuAction, MenuState};
use tauri::image::Image;
use tauri::menu::{CheckMenuItem, IsMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_autostart::ManagerExt;

use crate::badge;
use crate::shell::Shell;

/// The tray's id; on Linux its D-Bus object is `/org/ayatana/NotificationItem/tray_icon_tray_app_slate`.
pub const TRAY_ID: &str = "slate";

/// Creates the tray with the icon for `count`, the tooltip and the given menu.
pub fn create_tray<R: Runtime>(
    app: &AppHandle<R>,
    entries: &[Entry],
    count: usize,
    tooltip: &str,
    on_action: impl Fn(&AppHandle<R>, MenuAction) + Send + Sync + 'static,
) -> tauri::Result<TrayIcon<R>> {
    let menu = build_menu(app, entries)?;
    let tray = TrayIconBuilder::with_id(TRAY_ID)
        .icon(icon(count))
        .title(count.to_string())
        .tooltip(tooltip)
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

/// Shows `count` in the icon and the title.
pub fn set_count<R: Runtime>(tray: &TrayIcon<R>, count: usize) -> tauri::Result<()> {
    tray.set_icon(Some(icon(count)))?;
    tray.set_title(Some(count.to_string()))?;
    Ok(())
}

/// Replaces the tooltip (where the platform shows one: not on Linux, where the menu carries the
/// same news).
pub fn set_tooltip<R: Runtime>(tray: &TrayIcon<R>, tooltip: &str) -> tauri::Result<()> {
    tray.set_tooltip(Some(tooltip))
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

/// Recounts the tray and rebuilds its menu when what it lists changed.
///
/// The work is queued on the main thread, where Tauri builds menus anyway: every tray change then
/// happens on one thread in order, and no lock below is ever held while waiting for that thread.
pub fn refresh<R: Runtime>(app: &AppHandle<R>) {
    let queued = app.clone();
    if let Err(err) = app.run_on_main_thread(move || refresh_now(&queued)) {
        tracing::warn!("cannot update the tray: {err}");
    }
}

fn refresh_now<R: Runtime>(app: &AppHandle<R>) {
    let shell = app.state::<Shell>();
    let live = shell.source().live_sessions();
    let Some(tray) = app.tray_by_id(TRAY_ID) else {
        return;
    };
    let count = slate::policy::needs_you_count(&live);
    let count_changed =
        std::mem::replace(&mut *shell.count.lock().expect("lock poisoned"), count) != count;
    if count_changed {
        tracing::info!(count, "needs-you count changed");
        if let Err(err) = set_count(&tray, count) {
            tracing::warn!("cannot update the tray icon: {err}");
        }
    }
    let tooltip = tooltip(&shell, count);
    let tooltip_changed = *shell.tooltip.lock().expect("lock poisoned") != tooltip;
    if tooltip_changed {
        if let Err(err) = set_tooltip(&tray, &tooltip) {
            tracing::warn!("cannot update the tray tooltip: {err}");
        }
        *shell.tooltip.lock().expect("lock poisoned") = tooltip;
    }
    let entries = menu_entries(app, &shell, &live);
    let menu_changed = *shell.menu.lock().expect("lock poisoned") != entries;
    if menu_changed {
        if let Err(err) = set_menu(&tray, &entries) {
            tracing::warn!("cannot rebuild the tray menu: {err}");
        }
        *shell.menu.lock().expect("lock poisoned") = entries;
    }
}

/// The engine's menu model, with the note about the engine (the service used, or not
/// answering) above Open Slate, beside the notes about remote machines.
pub(crate) fn menu_entries<R: Runtime>(
    app: &AppHandle<R>,
    shell: &Shell,
    live: &[Session],
) -> Vec<menu::Entry> {
    let pause = *shell.pause.lock().expect("lock poisoned");
    let autostart = app.autolaunch().is_enabled().unwrap_or(false);
    let source = shell.source();
    let settings = source.settings();
    let remotes = source.remotes();
    let state = MenuState {
        pause,
        autostart,
        config_error: settings.error.as_deref(),
        remotes: &remotes,
    };
    let entries = menu::menu_model(live, state, live::system_clock());
    with_note(entries, shell.engine_note())
}

/// `entries` with `note` just before the separator above Open Slate.
fn with_note(mut entries: Vec<menu::Entry>, note: Option<String>) -> Vec<menu::Entry> {
    let Some(note) = note else {
        return entries;
    };
    let open = entries
        .iter()
        .position(|entry| {
            matches!(
                entry,
                menu::Entry::Item {
                    action: MenuAction::OpenWindow,
                    ..
                }
            )
        })
        .unwrap_or(entries.len());
    let at = match open.checked_sub(1).map(|before| &entries[before]) {
        Some(menu::Entry::Separator) => open - 1,
        _ => open,
    };
    entries.insert(at, menu::Entry::Note(note));
    entries
}

pub(crate) fn tooltip(shell: &Shell, count: usize) -> String {
    let tooltip = menu::tooltip(count, shell.source().settings().error.as_deref());
    match shell.engine_note() {
        Some(note) => format!("{tooltip}\n{note}"),
        None => tooltip,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::session;
    use slate::model::Timestamp;
    use slate::policy::menu::Pause;

    /// The note about the engine goes just above Open Slate, below the sessions, and nowhere
    /// when there is nothing to say.
    #[test]
    fn the_engine_note_sits_above_open_slate() {
        let state = MenuState {
            pause: Pause::Off,
            autostart: false,
            config_error: None,
            remotes: &[],
        };
        let live = [session("b2", "waiting")];
        let now = Timestamp::from_millis(1_764_590_400_000);
        let plain = menu::menu_model(&live, state, now);
        assert_eq!(with_note(plain.clone(), None), plain);
        let noted = with_note(plain.clone(), Some("Using the Slate service".to_string()));
        assert_eq!(noted.len(), plain.len() + 1);
        let at = noted
            .iter()
            .position(|entry| *entry == menu::Entry::Note("Using the Slate service".to_string()))
            .expect("the note");
        assert!(
            matches!(
                noted[0],
                menu::Entry::Item {
                    action: MenuAction::Focus(_),
                    ..
                }
            ),
            "{noted:?}"
        );
        assert_eq!(noted[at + 1], menu::Entry::Separator);
        assert!(matches!(
            noted[at + 2],
            menu::Entry::Item {
                action: MenuAction::OpenWindow,
                ..
            }
        ));
    }
}
