//! What a click does: on an entry of the tray menu, or on a notification or one of its actions.
//!
//! Both arrive as untrusted text from outside the app: a menu id from the tray host, already read
//! by `slate::policy::menu::MenuAction::parse` (which reads only an id the menu makes), and an
//! action id on a notification number from the notification server, read by
//! `slate::policy::notifications::Choice::of` against what the shell keeps for that number. A
//! click focuses a session (a remote one by attaching to it), opens the window, pauses, toggles
//! start at login or quits through `commands` and `window`; an answer to a session's dialog, on
//! this machine or another (its key names the machine), goes to `answer`, which calls the API of
//! the Slate that serves: that Slate types it, or forwards it over the machine's link.

use std::time::Duration;

use slate::live;
use slate::policy::menu::{MenuAction, Pause};
use slate::policy::notifications::{self, Choice, Click};
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_autostart::ManagerExt;

use crate::shell::Shell;
use crate::{answer, commands, window};

/// What the notification server reported: action `action_id` on notification number `id` (`None`
/// when it named none), as the notification plugin hands it over.
pub(crate) fn on_notification<R: Runtime>(app: &AppHandle<R>, id: Option<i32>, action_id: &str) {
    let Some(id) = id else {
        return;
    };
    let shell = app.state::<Shell>();
    let known = shell
        .clicks
        .lock()
        .expect("lock poisoned")
        .get(&id)
        .cloned();
    tracing::info!(id, action = action_id, ?known, "notification clicked");
    let (click, offer) = match &known {
        Some((click, offer)) => (Some(click), offer.as_ref()),
        None => (None, None),
    };
    match Choice::of(action_id, click, offer) {
        Choice::Answer { offer, action } => answer_dialog(
            app,
            &shell,
            answer::Answer {
                key: offer.key,
                action,
                option: None,
                fingerprint: offer.fingerprint,
                surface: slate::answers::Surface::Notification,
                label: offer.label,
            },
        ),
        Choice::Click(Click::Focus(key)) => commands::focus_key(&shell, &key),
        Choice::Mute(key) => set_muted(&shell, key, true),
        Choice::Click(Click::OpenWindow) => {
            if let Err(err) = window::show(app) {
                tracing::warn!("{err}");
            }
        }
        Choice::Nothing => {}
    }
}

/// Answers a session's dialog through the API of the Slate that serves, off this thread; the
/// outcome comes as a notification of its own.
fn answer_dialog<R: Runtime>(app: &AppHandle<R>, shell: &Shell, answer: answer::Answer) {
    tracing::info!(session = %answer.key.id, action = %answer.action.as_str(), surface = %answer.surface.as_str(), "answering");
    let id = shell.next_notification_id();
    answer::answer(app, shell.endpoint(), answer, id);
}

/// Mutes or unmutes a session through the API of the Slate that serves, off this thread; the
/// engine's next update redraws the menu with its mark.
fn set_muted(shell: &Shell, key: slate::model::SessionKey, muted: bool) {
    let endpoint = shell.endpoint();
    let spawned = std::thread::Builder::new()
        .name("mute".into())
        .spawn(move || {
            let Some(client) = endpoint.client() else {
                tracing::warn!(base = %endpoint.base, "cannot mute: not a loopback address");
                return;
            };
            match client.set_muted(key.id.as_str(), muted) {
                Ok(status) if status < 300 => {
                    tracing::info!(session = %key.id, muted, "muted from the tray or a notification");
                }
                Ok(status) => {
                    tracing::warn!(session = %key.id, status, "the server refused to mute")
                }
                Err(err) => tracing::warn!(session = %key.id, "cannot mute: {err}"),
            }
        });
    if let Err(err) = spawned {
        tracing::warn!("cannot start muting: {err}");
    }
}

pub(crate) fn on_menu<R: Runtime>(app: &AppHandle<R>, action: MenuAction) {
    tracing::info!(?action, "menu clicked");
    let shell = app.state::<Shell>();
    let result = match action {
        MenuAction::Focus(key) => {
            commands::focus_key(&shell, &key);
            Ok(())
        }
        MenuAction::Answer(chosen) => {
            let label = shell
                .source()
                .live_sessions()
                .iter()
                .find(|session| session.key() == chosen.key)
                .map(notifications::label)
                .unwrap_or_else(|| chosen.key.id.to_string());
            answer_dialog(
                app,
                &shell,
                answer::Answer {
                    key: chosen.key,
                    action: chosen.action,
                    option: chosen.option,
                    fingerprint: chosen.fingerprint,
                    surface: slate::answers::Surface::Tray,
                    label,
                },
            );
            Ok(())
        }
        MenuAction::ToggleMute(key) => {
            let muted = shell
                .source()
                .live_sessions()
                .iter()
                .any(|session| session.key() == key && session.muted);
            set_muted(&shell, key, !muted);
            Ok(())
        }
        MenuAction::OpenWindow => window::show(app),
        MenuAction::PauseForAnHour => {
            let until = live::system_clock().plus(Duration::from_secs(60 * 60));
            commands::set_pause(app, &shell, Pause::Until(until));
            Ok(())
        }
        MenuAction::PauseUntilResumed => {
            commands::set_pause(app, &shell, Pause::UntilResumed);
            Ok(())
        }
        MenuAction::Resume => {
            commands::set_pause(app, &shell, Pause::Off);
            Ok(())
        }
        MenuAction::ToggleAutostart => {
            let enabled = app.autolaunch().is_enabled().unwrap_or(false);
            commands::set_autostart_to(app, !enabled).map(|_| ())
        }
        MenuAction::Quit => {
            app.exit(0);
            Ok(())
        }
    };
    if let Err(err) = result {
        tracing::warn!("{err}");
    }
}
