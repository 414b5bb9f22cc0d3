//! The push channel: every Needs you notification, also sent to an ntfy topic or a webhook
//! (`[push]` in the config), for a person away from the desk.
//!
//! It fires on the same edges as the desktop notification: it keeps its own `Notifier` over the
//! live service's updates and runs the same `policy::notifications::decide`, so a burst is one
//! push, a session already waiting at start-up is none, a parked or muted session is none, one
//! whose terminal is in front is none (`terminals::front::seen_already`), and Slate's pause (kept
//! in the store) holds it back. It runs beside whichever process owns the engine (`slate serve`,
//! or the tray app when it runs its own), so one machine pushes once.
//!
//! A push names the machine, the project, the agent and the reason; the dialog's command only
//! when `[push] commands = true`, since a push leaves the machine. Each channel's token is read
//! from the owner-only file the config names for that channel (`config::push`), in Slate's
//! config folder, never from the config itself, and is sent to that channel's server alone.
//! Neither a token nor the URL's path (an ntfy topic is a password) is ever logged or shown: a
//! failure is told by its kind (`live::PushFailure`).
//!
//! Nothing here can hold the engine back: the deciding thread only reads the broadcast, and it
//! hands each request to a sending thread through a queue of [`QUEUE`] that drops (and counts)
//! what does not fit. Each request has [`DEADLINE`] in all, connecting included, and is never
//! retried. The live service's `PushStats` count what was sent, what failed and what was dropped,
//! for `/health`.
//!
//! The messages are built by plain functions ([`requests`]); this module decides no state. What
//! other programs wrote (a project's name, a reason, a command) goes out with its control and
//! invisible characters made spaces (`limits::spaced`), so no bidi override rearranges a
//! notification on a phone.

use std::path::PathBuf;
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::broadcast::error::RecvError;

use crate::config::{push, Notifications, Push};
use crate::live::{Handle, PushFailure, PushStats};
use crate::places::Places;
use slate_core::limits::spaced;
use slate_core::model::{Session, Timestamp};
use slate_core::policy::menu::Pause;
use slate_core::policy::notifications::{self, Input, NotificationPlan, Notifier};

/// How long one push may take in all, connecting and TLS included.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// How many pushes may wait for the sending thread; past that a push is dropped and counted.
pub const QUEUE: usize = 16;

/// The most bytes of a reply that are read (and thrown away).
const REPLY_LIMIT: u64 = 16 * 1024;

/// What the push worker needs besides the live service.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The folder the channels' token files are named in: Slate's config folder.
    pub token_dir: PathBuf,
    /// Slate's store, where the person's pause is kept; `None` runs without one.
    pub store_file: Option<PathBuf>,
    /// How a push names this machine (its host name).
    pub machine: String,
    /// How long one push may take in all ([`DEADLINE`]; a test passes less).
    pub deadline: Duration,
}

impl Setup {
    /// The setup of this user's Slate: the push tokens beside the API's, the store, and the
    /// machine's host name (`this machine` when it has none).
    pub fn of(places: &Places) -> Setup {
        Setup {
            token_dir: places.config_dir.clone(),
            store_file: Some(places.store_file()),
            machine: sysinfo::System::host_name()
                .filter(|name| !name.is_empty())
                .unwrap_or_else(|| "this machine".to_owned()),
            deadline: DEADLINE,
        }
    }
}

/// One request to send: where, and the JSON it carries.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// `ntfy` or `webhook`, for the counts and the logs.
    pub channel: &'static str,
    /// The whole URL. Never to print.
    pub url: String,
    pub body: Value,
}

/// The requests one notification makes under `push`: one per configured channel.
pub fn requests(push: &Push, plan: &NotificationPlan, machine: &str) -> Vec<Request> {
    let lines: Vec<String> = plan
        .sessions
        .iter()
        .map(|session| line(session, machine, push.commands))
        .collect();
    let title = match plan.sessions.as_slice() {
        [one] => format!("{} needs you", notifications::label(one)),
        several => format!("{} sessions need you", several.len()),
    };
    let mut out = Vec::new();
    if let Some(topic) = &push.ntfy {
        // ntfy's JSON publish: the server's root, the topic in the body; priority 3 is ntfy's
        // default, which a phone's own Do Not Disturb holds back.
        out.push(Request {
            channel: push::NTFY,
            url: topic.server(),
            body: json!({
                "topic": topic.expose_topic(),
                "title": title,
                "message": lines.join("\n"),
                "tags": ["bell"],
                "priority": 3,
            }),
        });
    }
    if let Some(url) = &push.webhook {
        let sessions: Vec<Value> = plan
            .sessions
            .iter()
            .map(|session| told(session, machine, push.commands))
            .collect();
        out.push(Request {
            channel: push::WEBHOOK,
            url: url.expose().to_owned(),
            body: json!({
                "event": "needs_you",
                "machine": machine,
                "title": title,
                "message": lines.join("\n"),
                "sessions": sessions,
            }),
        });
    }
    out
}

/// "box · acme-api · Codex — Asks permission for Bash": where, who, and why.
fn line(session: &Session, machine: &str, commands: bool) -> String {
    let place = session
        .machine
        .as_ref()
        .map_or(machine.to_owned(), ToString::to_string);
    spaced(&format!(
        "{place} · {} · {} — {}",
        project(session),
        session.agent.display_name(),
        reason(session, commands)
    ))
}

/// One session in a webhook's body.
fn told(session: &Session, machine: &str, commands: bool) -> Value {
    let mut value = json!({
        "id": session.id.as_str(),
        "machine": spaced(&session.machine.as_ref().map_or(machine.to_owned(), ToString::to_string)),
        "project": spaced(project(session)),
        "agent": session.agent.as_str(),
        "agent_name": session.agent.display_name(),
        "reason": session.session_state.reason.code.as_str(),
        "reason_text": spaced(&reason(session, commands)),
    });
    if commands {
        if let Some(dialog) = &session.dialog {
            let command = if dialog.detail.is_empty() {
                spaced(&dialog.summary)
            } else {
                let lines: Vec<String> = dialog.detail.iter().map(|line| spaced(line)).collect();
                lines.join("\n")
            };
            value["command"] = Value::String(command);
        }
    }
    value
}

fn project(session: &Session) -> &str {
    session
        .project
        .as_deref()
        .or(session.folder.as_deref())
        .unwrap_or("unknown project")
}

/// The reason's text; without `commands`, only what comes before its first `: `, which is where
/// every reason puts what is asked ("Asks permission for Bash: cargo test" → "Asks permission for
/// Bash", "Asks: which colour?" → "Asks").
fn reason(session: &Session, commands: bool) -> String {
    let text = &session.session_state.reason.text;
    if commands {
        return text.clone();
    }
    text.split(": ").next().unwrap_or(text).to_owned()
}

/// Starts the push worker beside the live service behind `handle`: one thread that decides, one
/// that sends. They wake only for the live service's changes and the end of a burst window, and
/// last as long as the process.
pub fn start(handle: &Handle, setup: Setup) {
    let stats = handle.push_stats();
    let (queue, inbox) = mpsc::sync_channel::<(Request, Option<String>)>(QUEUE);
    let sending = stats.clone();
    let deadline = setup.deadline;
    let sender = std::thread::Builder::new()
        .name("slate-push-send".to_owned())
        .spawn(move || send_all(&inbox, &sending, deadline));
    if let Err(err) = sender {
        tracing::warn!("cannot start the push channel: {err}");
        return;
    }
    let deciding = stats.clone();
    let handle = handle.clone();
    let decider = std::thread::Builder::new()
        .name("slate-push".to_owned())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build();
            match runtime {
                Ok(runtime) => runtime.block_on(decide_all(&handle, &setup, &queue, &deciding)),
                Err(err) => tracing::warn!("cannot start the push channel: {err}"),
            }
        });
    if let Err(err) = decider {
        tracing::warn!("cannot start the push channel: {err}");
    }
}

/// Follows the live service's updates through the notification policy, and queues a request
/// per channel for each notification it decides.
async fn decide_all(
    handle: &Handle,
    setup: &Setup,
    queue: &SyncSender<(Request, Option<String>)>,
    stats: &PushStats,
) {
    let (snapshot, mut updates) = handle.subscribe();
    let mut notifier = Notifier::seed(&snapshot);
    let settings = handle.watch_settings();
    let mut deadline: Option<Timestamp> = None;
    loop {
        let received = tokio::select! {
            received = updates.recv() => Some(received),
            () = crate::clock::sleep_until(deadline) => None,
        };
        let now = crate::clock::system_clock();
        // The reasons the person keeps (`[notifications] reasons`), as the tray's notifier does.
        notifier.keep(&settings.borrow().config.notifications.reasons);
        let decision = match received {
            Some(Ok(update)) => {
                notifications::decide(&mut notifier, update.as_notification(), now, false)
            }
            Some(Err(RecvError::Lagged(_))) => {
                // Too far behind to know which changes were flips: start over, as at start-up.
                notifier = Notifier::seed(&handle.live_sessions());
                deadline = None;
                continue;
            }
            Some(Err(RecvError::Closed)) => return,
            None => notifications::decide(&mut notifier, Input::Tick, now, false),
        };
        deadline = decision.next_deadline;
        if decision.plans.is_empty() {
            continue;
        }
        let (push, notifications) = {
            let settings = settings.borrow();
            (
                settings.config.push.clone(),
                settings.config.notifications.clone(),
            )
        };
        if !push.is_on() || paused(setup, &notifications, now) {
            continue;
        }
        for plan in &decision.plans {
            // Quiet while you look: a person at the screen needs no push either.
            if notifications.quiet_while_looking
                && slate_terminals::terminals::front::seen_already(plan).is_some()
            {
                continue;
            }
            for request in requests(&push, plan, &setup.machine) {
                let token = match channel_token(setup, &push, request.channel) {
                    Ok(token) => token,
                    Err(what) => {
                        stats.failed(PushFailure {
                            channel: request.channel,
                            what,
                        });
                        continue;
                    }
                };
                match queue.try_send((request, token)) {
                    Ok(()) => {}
                    Err(TrySendError::Full(_)) => stats.dropped(),
                    Err(TrySendError::Disconnected(_)) => return,
                }
            }
        }
    }
}

/// The token of `channel`, read from the file `push` names for it, and for no other channel;
/// `None` when it names none. The error names the file, never what it holds.
fn channel_token(setup: &Setup, push: &Push, channel: &str) -> Result<Option<String>, String> {
    let Some(file) = push.token_file(channel) else {
        return Ok(None);
    };
    match crate::token::read_private_token(&setup.token_dir.join(file.name())) {
        Ok(Some(token)) => Ok(Some(token)),
        Ok(None) => Err(format!(
            "[push] {channel}_token_file names {}, and there is no such file",
            file.name()
        )),
        Err(err) => Err(err.to_string()),
    }
}

/// Whether the person paused notifications at `now`: `Pause::in_force`, over the pause kept in
/// the store, as the tray app reads it at start.
fn paused(setup: &Setup, notifications: &Notifications, now: Timestamp) -> bool {
    let kept = setup
        .store_file
        .as_deref()
        .filter(|file| file.exists())
        .and_then(|file| {
            crate::store::open(file)
                .and_then(|store| store.notification_pause(now))
                .ok()
        });
    Pause::in_force(kept, notifications, now).is_paused(now)
}

/// Sends each queued request once, within `deadline`, until the queue closes.
fn send_all(
    inbox: &mpsc::Receiver<(Request, Option<String>)>,
    stats: &PushStats,
    deadline: Duration,
) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(deadline))
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent(concat!("slate/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    while let Ok((request, token)) = inbox.recv() {
        match send(&agent, &request, token.as_deref(), deadline) {
            Ok(()) => stats.sent(),
            Err(what) => stats.failed(PushFailure {
                channel: request.channel,
                what,
            }),
        }
    }
}

/// One POST; the error is its kind, in words that hold no part of the URL or the token.
fn send(
    agent: &ureq::Agent,
    request: &Request,
    token: Option<&str>,
    deadline: Duration,
) -> Result<(), String> {
    let mut post = agent
        .post(&request.url)
        .header("Content-Type", "application/json");
    if let Some(token) = token {
        post = post.header("Authorization", format!("Bearer {token}"));
    }
    let body = serde_json::to_vec(&request.body).map_err(|err| err.to_string())?;
    let mut response = post
        .send(&body[..])
        .map_err(|err| describe(&err, deadline))?;
    let status = response.status();
    // Read a little of the reply so the connection ends cleanly; what it says is not ours.
    let _ = std::io::copy(
        &mut std::io::Read::take(response.body_mut().as_reader(), REPLY_LIMIT),
        &mut std::io::sink(),
    );
    if status.is_success() {
        Ok(())
    } else {
        Err(format!("the server answered HTTP {}", status.as_u16()))
    }
}

/// A transport error by its kind. ureq's own messages may quote the URL, so none is passed on.
fn describe(err: &ureq::Error, deadline: Duration) -> String {
    match err {
        ureq::Error::Timeout(_) => format!("no answer within {:.1} s", deadline.as_secs_f64()),
        ureq::Error::Io(io) => format!("cannot reach the server ({})", io.kind()),
        ureq::Error::HostNotFound => "the server's host name is not known".to_owned(),
        ureq::Error::ConnectionFailed => "cannot connect to the server".to_owned(),
        ureq::Error::Tls(_) => "the server's TLS was refused".to_owned(),
        ureq::Error::TooManyRedirects | ureq::Error::RedirectFailed => {
            "the server redirected, and a push follows no redirect".to_owned()
        }
        _ => "the request failed".to_owned(),
    }
}
