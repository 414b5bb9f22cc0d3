//! Showing a notification the engine's policy planned (`slate::policy::notifications`).
//!
//! This is the one function that shows a planned notification. What to show, when, and what a
//! click does are decided by the policy in the engine crate; `lib` keeps which notification id
//! stands for which click and which offer. A notification whose plan offers answers to a
//! permission dialog carries "Allow once", "Deny" and "Open" where the notification server shows
//! actions (`answer`).

use slate::policy::notifications::NotificationPlan;

/// Shows `plan` as notification number `id`. The caller keeps `id → plan.click` so that the
/// plugin's action handler can find what a click should do.
pub fn show<R: tauri::Runtime>(
    app: &tauri::AppHandle<R>,
    id: i32,
    plan: &NotificationPlan,
) -> Result<(), tauri_plugin_notification::Error> {
    use tauri_plugin_notification::NotificationExt;
    let builder = app
        .notification()
        .builder()
        .id(id)
        .title(&plan.title)
        .body(&plan.body);
    let builder = if plan.offer.is_some() && crate::answer::server_shows_actions() {
        builder.action_type_id(crate::answer::PERMISSION)
    } else {
        builder
    };
    builder.show()
}
