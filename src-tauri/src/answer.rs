//! Answering a session's dialog from the tray menu and from a notification's actions.
//!
//! What is offered, for which session and with which fingerprint, is the engine's policy
//! (`slate::policy::menu` for the submenu's items, `slate::policy::notifications::Offer` for a
//! notification's "Allow once" and "Deny"), from the session dialog's `answerable`, for a session
//! on this machine or another alike. This module only carries one answer out: it calls the API
//! of the Slate that serves (the app's own server, or the service it follows) through
//! `slate::client::Client::respond` for the session as its key names it (`NAME:ID` for one on
//! another machine), naming its surface (`tray` or `notification`), on a thread of its own so the
//! menu and the notification server never wait on the seconds an answer may take (a forwarded one
//! waits for the remote's own confirmation), and tells the outcome in a notification. The server
//! re-reads the screen, or forwards the answer over the machine's link to that machine's Slate,
//! which does; either refuses when the dialog changed since the menu or the notification was
//! made, and records every attempt.
//!
//! It also asks the notification server, once, whether it shows actions at all and whether it
//! reads markup in a body (the Desktop Notifications Specification's `GetCapabilities`, through
//! notify-rust's `get_capabilities`): where it shows no actions, a permission notification
//! carries none and a click focuses the terminal, as for any other notification; where it reads
//! markup (`body-markup`), every body is escaped (`slate::policy::notifications::escape_markup`).

use std::sync::OnceLock;

use slate::agents::keys::{Action, OptionRef};
use slate::answers::{RespondRequest, Surface};
use slate::model::SessionKey;
use tauri::{AppHandle, Runtime};
use tauri_plugin_notification::NotificationExt;

use crate::server::Endpoint;

/// The notification action type of a permission dialog Slate can answer.
pub const PERMISSION: &str = "permission";
/// The action ids of a permission notification, as its `ActionInvoked` reports them; the
/// engine's policy reads them back (`slate::policy::notifications::Choice::of`).
pub use slate::policy::notifications::{ALLOW, DENY, OPEN};

/// The notification action type of a permission dialog whose command the notification cannot
/// show whole: "Deny" and "Open" only (`Offer::allow`).
pub const PERMISSION_DENY_ONLY: &str = "permission-deny-only";

/// The notification action type of one session of this machine with no dialog to answer from
/// here: "Open" and "Mute".
pub const SESSION: &str = "session";
pub use slate::policy::notifications::MUTE;

/// The action types of the notifications: "Allow once", "Deny", "Open" for a permission dialog;
/// "Deny", "Open" for a command the notification cannot show whole; "Open" for any other
/// session; each with "Mute" last when the session runs on this machine (`…-mute`).
pub fn permission_actions() -> Vec<tauri_plugin_notification::ActionType> {
    use tauri_plugin_notification::{Action as Button, ActionType};
    let kinds: [(&str, &[(&str, &str)]); 3] = [
        (
            PERMISSION,
            &[(ALLOW, "Allow once"), (DENY, "Deny"), (OPEN, "Open")],
        ),
        (PERMISSION_DENY_ONLY, &[(DENY, "Deny"), (OPEN, "Open")]),
        (SESSION, &[(OPEN, "Open")]),
    ];
    let mut types = Vec::new();
    for (kind, buttons) in kinds {
        for muted in [false, true] {
            let mut actions: Vec<_> = buttons
                .iter()
                .map(|(id, title)| Button::builder(*id, *title).build())
                .collect();
            let id = if muted {
                actions.push(Button::builder(MUTE, "Mute").build());
                with_mute(kind)
            } else {
                kind.to_string()
            };
            types.push(ActionType::builder(id).actions(actions).build());
        }
    }
    types
}

/// The action type `kind` with "Mute" after its buttons.
pub fn with_mute(kind: &str) -> String {
    format!("{kind}-mute")
}

/// What the notification server said it does: unknown until it answered.
#[derive(Debug, Clone, Copy)]
struct Server {
    actions: bool,
    markup: bool,
}

static SERVER: OnceLock<Server> = OnceLock::new();

/// Asks the notification server, on a thread of its own, whether it shows actions and reads
/// markup; until it answers, and when it does not show actions (or there is no server),
/// notifications are plain.
pub fn ask_notification_server() {
    let spawned = std::thread::Builder::new()
        .name("notification-server".into())
        .spawn(|| {
            let capabilities = capabilities();
            let has = |wanted: &str| capabilities.iter().any(|capability| capability == wanted);
            let server = Server {
                actions: has("actions"),
                markup: has("body-markup"),
            };
            tracing::info!(
                actions = server.actions,
                markup = server.markup,
                "what the notification server shows"
            );
            let _ = SERVER.set(server);
        });
    if let Err(err) = spawned {
        tracing::warn!("cannot ask the notification server what it shows: {err}");
    }
}

/// Whether a notification may carry actions.
pub fn server_shows_actions() -> bool {
    SERVER.get().is_some_and(|server| server.actions)
}

/// `body` as the notification server should get it: escaped where the server reads markup, and,
/// on Linux, until it said whether it does (a server there may; macOS and Windows read none).
pub fn body_for_server(body: &str) -> String {
    let markup = match SERVER.get() {
        Some(server) => server.markup,
        None => cfg!(all(unix, not(target_os = "macos"))),
    };
    match markup {
        true => slate::policy::notifications::escape_markup(body),
        false => body.to_string(),
    }
}

#[cfg(all(unix, not(target_os = "macos")))]
fn capabilities() -> Vec<String> {
    notify_rust::get_capabilities().unwrap_or_else(|err| {
        tracing::warn!("cannot ask the notification server what it shows: {err}");
        Vec::new()
    })
}

/// macOS and Windows show a notification's actions themselves.
#[cfg(not(all(unix, not(target_os = "macos"))))]
fn capabilities() -> Vec<String> {
    vec!["actions".to_string()]
}

/// One answer to carry out: the session, what to do, the option (only for `answer`), and the
/// fingerprint of the dialog the menu or the notification showed.
#[derive(Debug, Clone)]
pub struct Answer {
    pub key: SessionKey,
    pub action: Action,
    pub option: Option<u32>,
    pub fingerprint: String,
    pub surface: Surface,
    /// How the person saw the session named ("acme-api · Claude Code"), for the outcome.
    pub label: String,
}

/// Answers on a thread of its own through the API at `endpoint`, and tells the outcome in a
/// notification numbered `outcome_id`.
pub fn answer<R: Runtime>(app: &AppHandle<R>, endpoint: Endpoint, answer: Answer, outcome_id: i32) {
    let app = app.clone();
    let spawned = std::thread::Builder::new()
        .name("answer".into())
        .spawn(move || {
            let (title, body) = carry_out(&endpoint, &answer);
            let shown = app
                .notification()
                .builder()
                .id(outcome_id)
                .title(&title)
                .body(body_for_server(&body))
                .show();
            if let Err(err) = shown {
                tracing::warn!("cannot tell the answer's outcome: {err}");
            }
        });
    if let Err(err) = spawned {
        tracing::warn!("cannot start answering: {err}");
    }
}

/// Sends the answer and says what came of it, as a notification's title and body.
fn carry_out(endpoint: &Endpoint, answer: &Answer) -> (String, String) {
    let request = RespondRequest {
        action: answer.action,
        option: answer.option.map(OptionRef::Number),
        text: None,
        dialog: answer.fingerprint.clone(),
        surface: Some(answer.surface),
    };
    let Some(client) = endpoint.client() else {
        return refused(
            answer,
            &format!("`{}` is not a loopback address", endpoint.base),
        );
    };
    match client.respond(&answer.key.reference(), &request) {
        Ok(responded) => {
            tracing::info!(
                session = %answer.key.id,
                action = %answer.action.as_str(),
                surface = %answer.surface.as_str(),
                left_after_ms = responded.left_after_ms,
                "answered"
            );
            let done = match answer.action {
                Action::Approve => "Allowed once",
                Action::Deny => "Denied",
                Action::Answer => "Answered",
            };
            // An answer the agent's own decision hook took has no screen to watch: the agent
            // acts on the verdict, and its dialog closes there.
            let body = if responded.outcome == slate::answers::hook::HOOK_OUTCOME {
                "Handed to the agent through its own hook; it acts on it now."
            } else {
                "The dialog left the screen."
            };
            (format!("{done}: {}", answer.label), body.to_string())
        }
        Err(err) => {
            tracing::warn!(
                session = %answer.key.id,
                action = %answer.action.as_str(),
                surface = %answer.surface.as_str(),
                code = %err.code.as_str(),
                "not answered: {}",
                err.message
            );
            refused(answer, &err.message)
        }
    }
}

fn refused(answer: &Answer, why: &str) -> (String, String) {
    (format!("Not answered: {}", answer.label), why.to_string())
}
