//! The tray icon and its menu, as Tauri objects.
//!
//! The icon carries the Needs-you count in its pixels (drawn by `badge`) and, where the platform
//! shows one, in the tray title. The menu is the only way in on Linux, where a click on an
//! AppIndicator item never reaches the app, so every action lives in it. What the menu holds and
//! what the tooltip says are the engine's policy (`slate::policy::menu`); this module only turns
//! those entries into Tauri menu items and maps clicks back to `MenuAction`s for `lib`.

use slate::policy::menu::{Entry, MenuAction};
use tauri::image::Image;
use tauri::menu::{CheckMenuItem, IsMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Runtime};

use crate::badge;

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
