//! The loopback HTTP API: the live list as JSON, its changes as server-sent events, one session's
//! details, health, a refresh command, and the page in `ui/`.
//!
//! The contract is docs/api.md and docs/states.md §7: every surface (the page, the
//! desktop shell, `slate watch`) reads the same session objects the engine publishes. This module
//! owns HTTP: the routes and the idle timeout of a connection; the accept loop over the port and
//! this user's socket is `serving`, and the socket itself (its folder, its peers) `local`; its
//! guard rails (the `Host` and `Origin` allow-lists, the token, the body's size and time limits)
//! are `guard`, and the one shape every error it answers has, `{"error": {"code", "message"}}`,
//! is `errors`. It
//! decides no state (`tracker` does) and keeps no state of its own beyond what `live::Handle`
//! publishes; an answer to a dialog goes the one way every answer goes (`answers::answer`).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::Stream;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;

use crate::answers::{self, ErrorCode, Ledger, RespondError, RespondRequest, Route, Target};
use crate::live::{self, Update};
use slate_core::model::{
    AgentKind, Awaiting, HostedSignals, Intent, IntentState, ServerKind, Session, SessionKey,
};

mod challenge;
mod decision;
mod errors;
mod guard;
pub mod local;
mod serving;
mod usage;

use errors::{
    error, method_not_allowed, not_found, respond_error, unfound, JsonBody, SessionIdPath,
};
pub use guard::BODY_LIMIT;
use guard::{Guard, Names};
pub use serving::{raise_open_file_limit, serve, serve_local, serve_with};

/// How often an open event stream gets a `: keep-alive` comment.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The page, embedded so the binary serves it wherever it runs. It is served as it is, with no
/// token in it: any local user can fetch it. A browser brings the token in the address's
/// fragment, which `slate serve` prints to its own terminal (docs/api.md, "The page").
const INDEX_HTML: &str = include_str!("../ui/index.html");

/// The page's other files: (name, content type, text). The page refers to them relatively, so
/// each is served both at `/<name>` (the page at `/`) and at `/ui/<name>`.
const UI_FILES: &[(&str, &str, &str)] = &[
    (
        "api.js",
        "text/javascript; charset=utf-8",
        include_str!("../ui/api.js"),
    ),
    (
        "sse.js",
        "text/javascript; charset=utf-8",
        include_str!("../ui/sse.js"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../ui/app.js"),
    ),
    (
        "parts.js",
        "text/javascript; charset=utf-8",
        include_str!("../ui/parts.js"),
    ),
    (
        "session.js",
        "text/javascript; charset=utf-8",
        include_str!("../ui/session.js"),
    ),
    (
        "usage.js",
        "text/javascript; charset=utf-8",
        include_str!("../ui/usage.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../ui/style.css"),
    ),
];

/// What the guard rails need to know: the port the server listens on (for the `Host` and
/// `Origin` allow-lists) and the token POSTs must carry (and a read may carry, but no other).
/// Also what kind of Slate serves (`/health` says it, with the process id, so a Slate that finds
/// the port taken can name the one that holds it).
#[derive(Clone)]
pub struct Security {
    pub port: u16,
    pub token: String,
    pub kind: ServerKind,
}

impl std::fmt::Debug for Security {
    // The token never reaches a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Security")
            .field("port", &self.port)
            .field("token", &"…")
            .field("kind", &self.kind)
            .finish()
    }
}

/// How long the server waits for what a client owes it. A connection that does not finish
/// sending a request's head in time is closed; an event stream, which is quiet on purpose while
/// it waits for changes, has no limit.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// From a connection's start, or the end of its last response, to the end of the next
    /// request's head. hyper's header-read timer runs whenever a connection waits for a request,
    /// so this is also the idle timeout of a kept-alive connection.
    pub request_head: Duration,
    /// From the end of a request's head to the end of its body.
    pub request_body: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            request_head: Duration::from_secs(10),
            request_body: Duration::from_secs(10),
        }
    }
}

#[derive(Clone)]
struct AppState {
    handle: live::Handle,
    security: Arc<Security>,
    guard: Arc<Guard>,
    /// Flips to true when the server shuts down, so open event streams end and let it stop.
    stopping: tokio::sync::watch::Receiver<bool>,
    /// Keeps the `stopping` channel open while the router lives.
    _stop: Arc<tokio::sync::watch::Sender<bool>>,
}

/// The API and the page, guarded, for a server listening on `security.port`.
pub fn router(handle: live::Handle, security: Security) -> Router {
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let names = Names::new(security.port, None);
    build(
        handle,
        security,
        names,
        Timeouts::default(),
        Arc::new(stop),
        stopping,
    )
}

fn build(
    handle: live::Handle,
    security: Security,
    names: Names,
    timeouts: Timeouts,
    stop: Arc<tokio::sync::watch::Sender<bool>>,
    stopping: tokio::sync::watch::Receiver<bool>,
) -> Router {
    let guard = Guard {
        names,
        token: security.token.clone(),
        body_within: timeouts.request_body,
    };
    let state = AppState {
        handle,
        security: Arc::new(security),
        guard: Arc::new(guard),
        stopping,
        _stop: stop,
    };
    // Every route above the `route_layer` shows sessions (or changes them): it answers only a
    // request with the token, or one over this user's socket. Below it, what any local user
    // may fetch: `/health` (which says little more than "a Slate is here" without the token),
    // the challenge a client proves this server by before it sends the token (`challenge`), and
    // the page's files, which hold no token and no session.
    Router::new()
        .route("/sessions/live", get(live_sessions))
        .route("/sessions/live/stream", get(stream))
        .route("/sessions/live/refresh", post(refresh))
        .route("/sessions/{id}", get(session))
        .route("/sessions/{id}/intent", post(set_intent))
        .route("/sessions/{id}/mute", post(set_muted))
        .route("/sessions/{id}/respond", post(respond))
        .route("/hosted", post(hosted))
        .route("/hooks", post(hook))
        .route("/hooks/decision", post(decision::decision))
        .route("/remotes", get(remotes))
        .route("/usage", get(usage::usage))
        .route_layer(middleware::from_fn(guard::private))
        .route("/health", get(health))
        .route("/auth/challenge", get(challenge::answer))
        .route("/", get(index_page))
        .route("/ui/", get(index_page))
        .route("/ui/index.html", get(index_page))
        .route("/ui/{file}", get(ui_file))
        .route("/{file}", get(ui_file))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(
            state.guard.clone(),
            guard::check,
        ))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(state)
}

async fn live_sessions(State(state): State<AppState>) -> Response {
    Json(json!({ "sessions": state.handle.live_sessions() })).into_response()
}

async fn refresh(State(state): State<AppState>) -> StatusCode {
    state.handle.refresh_and_wait().await;
    StatusCode::NO_CONTENT
}

async fn session(State(state): State<AppState>, SessionIdPath(id): SessionIdPath) -> Response {
    match state.handle.find(&id) {
        Ok(detail) => Json(detail).into_response(),
        Err(err) => unfound(err),
    }
}

/// The body of `POST /sessions/{id}/intent`: an `Intent` whose `awaiting_who` is still text, so
/// a value that names no one gets a 400 saying which values are accepted, as `slate await` does.
#[derive(serde::Deserialize)]
struct IntentRequest {
    state: IntentState,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    awaiting_who: Option<String>,
}

/// `POST /sessions/{id}/intent`: park, await or resume a session (docs/states.md §4 intent).
async fn set_intent(
    State(state): State<AppState>,
    SessionIdPath(id): SessionIdPath,
    JsonBody(request): JsonBody<IntentRequest>,
) -> Response {
    let awaiting_who = match request
        .awaiting_who
        .as_deref()
        .map(str::parse::<Awaiting>)
        .transpose()
    {
        Ok(awaiting_who) => awaiting_who,
        Err(err) => return error(StatusCode::BAD_REQUEST, "bad_request", err.to_string()),
    };
    let intent = Intent {
        state: request.state,
        reason: request.reason,
        awaiting_who,
    };
    if let Err(err) = slate_core::limits::intent(&intent) {
        return error(StatusCode::UNPROCESSABLE_ENTITY, "invalid", err.to_string());
    }
    let there = ("park, await or resume it", "park");
    store_and_answer(&state, &id, there, |handle, key| {
        handle.set_intent(key, &intent)
    })
    .await
}

/// Changes what the store keeps of session `id` with `change` (its intent, its mute), then
/// answers with the session once the loop has read the store again. A session on another machine
/// is refused (409): that is kept in its own machine's store, and `there` says what to do there
/// and with which command ("mute it", "mute").
async fn store_and_answer(
    state: &AppState,
    id: &str,
    there: (&str, &str),
    change: impl FnOnce(&live::Handle, &SessionKey) -> Result<(), live::IntentError>,
) -> Response {
    let detail = match state.handle.find(id) {
        Ok(detail) => detail,
        Err(err) => return unfound(err),
    };
    if let Some(machine) = &detail.session.machine {
        return error(
            StatusCode::CONFLICT,
            "remote_session",
            format!(
                "session {} runs on {machine}: {} there (`slate {} {}` on {machine})",
                detail.session.key().reference(),
                there.0,
                there.1,
                detail.session.id
            ),
        );
    }
    let key = SessionKey::new(detail.session.agent, detail.session.id.as_str());
    if let Err(err) = change(&state.handle, &key) {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            err.to_string(),
        );
    }
    state.handle.refresh_and_wait().await;
    match state.handle.session(key.id.as_str()) {
        Some(detail) => Json(detail).into_response(),
        None => StatusCode::NO_CONTENT.into_response(),
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct MuteRequest {
    muted: bool,
}

/// `POST /sessions/{id}/mute`: `{"muted": true}` mutes a session (it counts as ever, and no
/// notification tells of it), `{"muted": false}` unmutes it. Answers with the session.
async fn set_muted(
    State(state): State<AppState>,
    SessionIdPath(id): SessionIdPath,
    JsonBody(request): JsonBody<MuteRequest>,
) -> Response {
    store_and_answer(&state, &id, ("mute it", "mute"), |handle, key| {
        handle.set_muted(key, request.muted)
    })
    .await
}

/// Where the API records answers: the live service's store, on its clock.
struct Books<'a>(&'a live::Handle);

impl Ledger for Books<'_> {
    fn now(&self) -> slate_core::model::Timestamp {
        self.0.now()
    }

    fn keep(&self, key: &SessionKey, record: &answers::Record) {
        if let Err(why) = self.0.record_answer(key, record) {
            tracing::warn!(session = %key, "cannot record an answer: {why}");
        }
    }
}

/// `POST /sessions/{id}/respond`: answers the dialog on a session's screen (docs/states.md §8)
/// through `answers::answer`: typed here, where the screen is re-read, or forwarded to the
/// machine the session runs on, and recorded in the store whatever its outcome.
async fn respond(
    State(state): State<AppState>,
    SessionIdPath(id): SessionIdPath,
    body: axum::body::Bytes,
) -> Response {
    let request: RespondRequest = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(err) => {
            return respond_error(RespondError::new(
                ErrorCode::BadRequest,
                format!("the body is not an answer: {err}"),
            ))
        }
    };
    let session = match state.handle.find(&id) {
        Ok(detail) => detail.session,
        Err(err) => return unfound(err),
    };
    let target = Target::of(&session);
    if let Err(error) = answers::check(&request) {
        return respond_error(error);
    }
    // A session on another machine is answered there: forwarded over its remote's link.
    let forward = match &target.machine {
        Some(machine) => match state.handle.forwarding(machine) {
            Some(forwarding) => Some(forwarding),
            None => {
                return respond_error(RespondError::new(
                    ErrorCode::CannotType,
                    format!(
                        "session {} runs on {machine}, which this Slate does not follow: answer \
                         it there (ssh {machine}, then slate {} {})",
                        target.key.reference(),
                        request.action.as_str(),
                        session.id
                    ),
                ))
            }
        },
        None => None,
    };
    // The answer runs to its end on a task of its own, recorded there: a client that goes away
    // meanwhile neither stops it half-way nor leaves it unrecorded. Two answers to one session
    // never overlap: the session's answer lock (`answers::Claim`) refuses the second.
    let carried = {
        let handle = state.handle.clone();
        move || {
            let locks = handle.answer_locks();
            let route = match forward {
                Some((entry, options)) => Route::Forward {
                    entry,
                    options,
                    locks,
                },
                None => Route::Here { locks },
            };
            let terminals = handle.terminals();
            let result = answers::answer_in(terminals, route, &target, &request, &Books(&handle));
            // The live list sees the dialog leave on the next reading; ask for it now.
            handle.refresh();
            result
        }
    };
    match tokio::task::spawn_blocking(carried).await {
        Ok(Ok(responded)) => Json(responded).into_response(),
        Ok(Err(refusal)) => respond_error(refusal),
        Err(err) => respond_error(RespondError::new(
            ErrorCode::Internal,
            format!("the answer stopped: {err}"),
        )),
    }
}

/// What `slate run` reports: the hosted terminal's signals, with the session when it knows it.
#[derive(serde::Deserialize)]
struct HostedReport {
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(flatten)]
    signals: HostedSignals,
}

/// `POST /hosted`: a hosted terminal's titles and last draw (docs/states.md §3 rules 4, 5 and 6c).
async fn hosted(
    State(state): State<AppState>,
    JsonBody(report): JsonBody<HostedReport>,
) -> Response {
    let agent = report.agent.as_deref().and_then(AgentKind::parse);
    let event = match (agent, report.session_id) {
        (Some(agent), Some(id)) => live::Event::Hosted {
            key: SessionKey::new(agent, id),
            signals: report.signals,
        },
        _ => match report.signals.pid {
            Some(pid) => live::Event::HostedProcess {
                pid,
                signals: report.signals,
            },
            None => {
                return error(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "invalid",
                    "a hosted report needs a session (agent and session_id) or a pid",
                )
            }
        },
    };
    state.handle.send(event);
    StatusCode::NO_CONTENT.into_response()
}

/// `POST /hooks`: one event of an agent's own hooks, as `slate hook` passes it on
/// (docs/api.md, docs/hooks.md). Its fields are checked and bounded again here: whatever posts
/// with the token, the engine gets a known agent, a readable session id and short clean text. A
/// field the report does not name, and a session id past its limit, are refused, never dropped
/// or cut.
async fn hook(
    State(state): State<AppState>,
    JsonBody(report): JsonBody<slate_core::agents::hooks::HookReport>,
) -> Response {
    use slate_core::agents::hooks::{clean, valid_id, FIELD_LIMIT, ID_LIMIT};
    if AgentKind::parse(&report.agent).is_none() {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
            "the hook names no agent Slate knows",
        );
    }
    if report.session_id.len() > ID_LIMIT {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
            format!(
                "the hook's session id is {} bytes long; at most {ID_LIMIT} are allowed",
                report.session_id.len()
            ),
        );
    }
    if !valid_id(&report.session_id) {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
            "the hook's session id is not one Slate reads (letters, digits, `-_.:`)",
        );
    }
    let bounded = |text: Option<String>| text.map(|text| clean(&text, FIELD_LIMIT));
    let report = slate_core::agents::hooks::HookReport {
        event: clean(&report.event, 64),
        tool: bounded(report.tool),
        detail: bounded(report.detail),
        notification: bounded(report.notification),
        ..report
    };
    let at = state.handle.now();
    decision::moved_on(&report);
    state.handle.send(live::Event::Hook { report, at });
    StatusCode::NO_CONTENT.into_response()
}

/// `GET /health`: the live service's health, and which Slate this is (`kind`, `pid`). Without
/// the token (or the socket) it says only that a Slate is here: `{"slate": true}`.
async fn health(
    State(state): State<AppState>,
    authorized: Option<axum::Extension<guard::Authorized>>,
) -> Response {
    if authorized.is_none() {
        return Json(json!({ "slate": true })).into_response();
    }
    #[derive(serde::Serialize)]
    struct Answer {
        #[serde(flatten)]
        health: live::Health,
        kind: ServerKind,
        pid: u32,
    }
    Json(Answer {
        health: state.handle.health(),
        kind: state.security.kind,
        pid: std::process::id(),
    })
    .into_response()
}

/// `GET /remotes`: each `[[remote]]` machine's link, as `slate remote list --json` prints it.
async fn remotes(State(state): State<AppState>) -> Response {
    Json(json!({ "remotes": state.handle.remotes() })).into_response()
}

async fn index_page() -> Response {
    let mut response = INDEX_HTML.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    // Never cached (a new binary's page shows at once), never framed by another page.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("frame-ancestors 'none'"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

async fn ui_file(Path(file): Path<String>) -> Response {
    match UI_FILES.iter().find(|(name, _, _)| *name == file) {
        Some((_, content_type, text)) => (
            [
                (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            ],
            *text,
        )
            .into_response(),
        None => not_found().await,
    }
}

/// The `snapshot` event: the whole live list.
fn snapshot_event(sessions: &[Session]) -> SseEvent {
    let data = json!({ "sessions": sessions }).to_string();
    SseEvent::default().event("snapshot").data(data)
}

/// A `session` or `removed` event for one change.
fn update_event(update: &Update) -> SseEvent {
    match update {
        Update::Session { session } => SseEvent::default()
            .event("session")
            .data(serde_json::to_string(session).unwrap_or_default()),
        Update::Removed { .. } => SseEvent::default()
            .event("removed")
            .data(serde_json::to_string(&Removed::of(update)).unwrap_or_default()),
    }
}

/// The data of a `removed` event: `{"agent", "id"}`, and `"machine"` for a remote session.
#[derive(serde::Serialize)]
struct Removed<'a> {
    agent: &'a AgentKind,
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    machine: Option<&'a slate_core::model::Machine>,
}

impl<'a> Removed<'a> {
    fn of(update: &'a Update) -> Option<Removed<'a>> {
        match update {
            Update::Removed { agent, id, machine } => Some(Removed {
                agent,
                id,
                machine: machine.as_ref(),
            }),
            Update::Session { .. } => None,
        }
    }
}

/// Where one subscriber's stream stands.
struct Follower {
    handle: live::Handle,
    updates: tokio::sync::broadcast::Receiver<Update>,
    pending: Option<SseEvent>,
    stopping: tokio::sync::watch::Receiver<bool>,
}

async fn stream(
    State(state): State<AppState>,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let (snapshot, updates) = state.handle.subscribe();
    let follower = Follower {
        handle: state.handle.clone(),
        updates,
        pending: Some(snapshot_event(&snapshot)),
        stopping: state.stopping.clone(),
    };
    let events = futures_util::stream::unfold(follower, |mut follower| async move {
        if let Some(event) = follower.pending.take() {
            return Some((Ok(event), follower));
        }
        if *follower.stopping.borrow() {
            return None;
        }
        let received = tokio::select! {
            received = follower.updates.recv() => received,
            _ = follower.stopping.changed() => return None,
        };
        let event = match received {
            Ok(update) => update_event(&update),
            // A subscriber that fell behind missed changes it cannot get back: it starts over
            // from a fresh snapshot rather than being cut off.
            Err(RecvError::Lagged(missed)) => {
                tracing::debug!("an event stream fell {missed} changes behind; sending a snapshot");
                let (snapshot, updates) = follower.handle.subscribe();
                follower.updates = updates;
                snapshot_event(&snapshot)
            }
            Err(RecvError::Closed) => return None,
        };
        Some((Ok(event), follower))
    });
    Sse::new(events).keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive"))
}
