//! Showing a notification the engine's policy planned (`slate::policy::notifications`).
//!
//! This is the one function that shows a planned notification. What to show, when, and what a
//! click does are decided by the policy in the engine crate; `lib` keeps which notification id
//! stands for which click and which offer. A notification whose plan offers answers to a
//! permission dialog carries "Allow once", "Deny" and "Open" where the notification server shows
//! actions (`answer`), and "Deny" and "Open" only where it cannot show the whole command. The
//! body is escaped for a server that reads markup.

use slate::policy::notifications::NotificationPlan;

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
    // "Allow once" only where the notification shows the whole command (`Offer::allow`).
    let builder = match &plan.offer {
        Some(offer) if crate::answer::server_shows_actions() => {
            builder.action_type_id(match offer.allow {
                true => crate::answer::PERMISSION,
                false => crate::answer::PERMISSION_DENY_ONLY,
            })
        }
        _ => builder,
    };
    builder.show()
}
