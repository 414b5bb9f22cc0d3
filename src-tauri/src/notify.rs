//! Showing a notification the engine's policy planned (`slate::policy::notifications`).
//!
//! This is the one function that talks to the notification plugin. What to show, when, and what
//! a click does are decided by the policy in the engine crate; `lib` keeps which notification id
//! stands for which click.

use slate::policy::notifications::NotificationPlan;

/// Shows `plan` as notification number `id`. The caller keeps `id → plan.click` so that the
/// plugin's action handler can find what a click should do.
pub fn show<R: tauri::Runtime>(
    app: &tauri::AppHandle<R>,
    id: i32,
    plan: &NotificationPlan,
) -> Result<(), tauri_plugin_notification::Error> {
    use tauri_plugin_notification::NotificationExt;
    app.notification()
        .builder()
        .id(id)
        .title(&plan.title)
        .body(&plan.body)
        .show()
}
