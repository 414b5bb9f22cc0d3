//! Showing a notification the engine's policy planned (`slate::policy::notifications`).
//!
//! This is the one function that shows a planned notification. What to show, when, and what a
//! click does are decided by the policy in the engine crate; `lib` keeps which notification id
//! stands for which click and which offer. A notification whose plan offers answers to a
//! permission dialog carries "Allow once", "Deny" and "Open" where the notification server shows
//! actions (`answer`), and "Deny" and "Open" only where it cannot show the whole command; one
//! about another session of this machine carries "Open". Each about one session of this machine
//! ends in "Mute"; a summary of several carries none. The body is escaped for a server that reads
//! markup.

use slate::policy::notifications::{Click, NotificationPlan};

/// Shows `plan` as notification number `id`, with the sound of the theme named `sound` when the
/// config names one (`[notifications] sound`). The caller keeps `id → plan.click` so that the
/// plugin's action handler can find what a click should do. No urgency is set, which the
/// server reads as normal: critical would break through the desktop's Do Not Disturb.
pub fn show<R: tauri::Runtime>(
    app: &tauri::AppHandle<R>,
    id: i32,
    plan: &NotificationPlan,
    sound: Option<&str>,
) -> Result<(), tauri_plugin_notification::Error> {
    use tauri_plugin_notification::NotificationExt;
    let builder = app
        .notification()
        .builder()
        .id(id)
        .title(&plan.title)
        .body(crate::answer::body_for_server(&plan.body));
    let builder = match sound {
        Some(sound) => builder.sound(sound),
        None => builder,
    };
    // "Allow once" only where the notification shows the whole command (`Offer::allow`); "Mute"
    // where it is about one session of this machine. A summary of several has no buttons.
    let one_here = matches!(&plan.click, Click::Focus(key) if key.machine.is_none());
    let kind = match &plan.offer {
        Some(offer) if offer.allow => Some(crate::answer::PERMISSION),
        Some(_) => Some(crate::answer::PERMISSION_DENY_ONLY),
        None if one_here => Some(crate::answer::SESSION),
        None => None,
    };
    let builder = match kind {
        Some(kind) if crate::answer::server_shows_actions() => match one_here {
            true => builder.action_type_id(crate::answer::with_mute(kind)),
            false => builder.action_type_id(kind),
        },
        _ => builder,
    };
    builder.show()
}
