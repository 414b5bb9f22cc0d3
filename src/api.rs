//! The loopback HTTP API: the live list as JSON, its changes as server-sent events, one session's
//! details, health, a refresh command, and the page in `ui/`.
//!
//! The contract is `/work/api-contract.md` (kept in the README): every surface (the page, the
//! desktop shell, `slate watch`) reads the same session objects the engine publishes. This module
//! owns HTTP and its guard rails: the `Host` allow-list against DNS rebinding, the `Origin`
//! allow-list against other web sites, the bearer token on every request that changes anything,
//! and the request size limit. It decides no state (`tracker` does) and keeps no state of its own
//! beyond what `live::Handle` publishes.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::Stream;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;

use crate::live::{self, Update};
use crate::model::{AgentKind, Awaiting, HostedSignals, Intent, IntentState, Session, SessionKey};

/// The largest request body accepted, in bytes.
pub const BODY_LIMIT: usize = 64 * 1024;

/// How often an open event stream gets a `: keep-alive` comment.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The page, embedded so the binary serves it wherever it runs.
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
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../ui/app.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../ui/style.css"),
    ),
];

/// What the guard rails need to know: the port the server listens on (for the `Host` and
/// `Origin` allow-lists) and the token POSTs must carry.
#[derive(Clone)]
pub struct Security {
    pub port: u16,
    pub token: String,
}

impl std::fmt::Debug for Security {
    // The token never reaches a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Security")
            .field("port", &self.port)
            .field("token", &"…")
            .finish()
    }
}

#[derive(Clone)]
struct AppState {
    handle: live::Handle,
    security: Arc<Security>,
    /// `index.html` with the token's `<meta>` tag in it.
    index: Arc<str>,
    /// Flips to true when the server shuts down, so open event streams end and let it stop.
    stopping: tokio::sync::watch::Receiver<bool>,
    /// Keeps the `stopping` channel open while the router lives.
    _stop: Arc<tokio::sync::watch::Sender<bool>>,
}

/// The API and the page, guarded, for a server listening on `security.port`.
pub fn router(handle: live::Handle, security: Security) -> Router {
    let (stop, stopping) = tokio::sync::watch::channel(false);
    build(handle, security, Arc::new(stop), stopping)
}

fn build(
    handle: live::Handle,
    security: Security,
    stop: Arc<tokio::sync::watch::Sender<bool>>,
    stopping: tokio::sync::watch::Receiver<bool>,
) -> Router {
    let index = inject_token(INDEX_HTML, &security.token);
    let state = AppState {
        handle,
        security: Arc::new(security),
        index: index.into(),
        stopping,
        _stop: stop,
    };
    Router::new()
        .route("/sessions/live", get(live_sessions))
        .route("/sessions/live/stream", get(stream))
        .route("/sessions/live/refresh", post(refresh))
        .route("/sessions/{id}", get(session))
        .route("/sessions/{id}/intent", post(set_intent))
        .route("/hosted", post(hosted))
        .route("/health", get(health))
        .route("/", get(index_page))
        .route("/ui/", get(index_page))
        .route("/ui/index.html", get(index_page))
        .route("/ui/{file}", get(ui_file))
        .route("/{file}", get(ui_file))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(state)
}

/// Serves the API on `listener` until `shutdown` completes. Open event streams end at shutdown,
/// so a connected page never keeps the server from stopping.
pub async fn serve(
    listener: tokio::net::TcpListener,
    handle: live::Handle,
    security: Security,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let stop = Arc::new(stop);
    let signal = {
        let stop = stop.clone();
        async move {
            shutdown.await;
            let _ = stop.send(true);
        }
    };
    let app = build(handle, security, stop, stopping);
    axum::serve(listener, app)
        .with_graceful_shutdown(signal)
        .await
}

/// The token goes into `index.html` as `<meta name="slate-token" content="…">`: the page reads it
/// from its own document, which another site's page cannot do (no CORS, and `Host` is checked).
fn inject_token(page: &str, token: &str) -> String {
    let meta = format!(r#"<meta name="slate-token" content="{token}">"#);
    let placeholder = r#"<meta name="slate-token" content="">"#;
    if page.contains(placeholder) {
        return page.replacen(placeholder, &meta, 1);
    }
    match page.find("<head>") {
        Some(at) => {
            let end = at + "<head>".len();
            format!("{}\n{meta}{}", &page[..end], &page[end..])
        }
        None => format!("{meta}\n{page}"),
    }
}

/// A JSON error response: `{"error":"…"}`.
fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

/// The guard every request passes: `Host`, then `Origin`, then (for anything but reads) the
/// token, then the body size.
async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let port = state.security.port;
    let headers = request.headers();
    match headers
        .get(header::HOST)
        .and_then(|host| host.to_str().ok())
    {
        Some(host) if host_allowed(host, port) => {}
        Some(_) => {
            return error(
                StatusCode::MISDIRECTED_REQUEST,
                format!(
                "this server answers only to 127.0.0.1:{port}, localhost:{port} or [::1]:{port}"
            ),
            )
        }
        None => return error(StatusCode::MISDIRECTED_REQUEST, "the request has no Host"),
    }
    let origin = match headers.get(header::ORIGIN) {
        Some(origin) => match origin.to_str() {
            Ok(origin) if origin_allowed(origin, port) => Some(origin.to_string()),
            _ => {
                return error(
                    StatusCode::FORBIDDEN,
                    "requests from other sites are refused",
                )
            }
        },
        None => None,
    };
    // The desktop window's page comes from the webview's own origin, so its requests are
    // cross-origin: answer the allowed origins' preflights, and name them on every response.
    if *request.method() == Method::OPTIONS {
        let mut response = StatusCode::NO_CONTENT.into_response();
        allow_origin(&mut response, origin.as_deref());
        return response;
    }
    let mut response = guarded(&state, request, next).await;
    allow_origin(&mut response, origin.as_deref());
    response
}

/// Adds the CORS headers for an allowed origin (never for any other: those were refused).
fn allow_origin(response: &mut Response, origin: Option<&str>) {
    let Some(origin) = origin.and_then(|origin| HeaderValue::from_str(origin).ok()) else {
        return;
    };
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.insert(header::VARY, HeaderValue::from_static("Origin"));
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("authorization, content-type"),
    );
}

/// The token and body-size part of the guard, for requests that passed `Host` and `Origin`.
async fn guarded(state: &AppState, request: Request, next: Next) -> Response {
    let headers = request.headers();
    if !matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    ) {
        if !bearer_matches(headers, &state.security.token) {
            return error(
                StatusCode::UNAUTHORIZED,
                "this request needs `Authorization: Bearer <token>` (the token is in the config folder)",
            );
        }
        // The size limit holds for every body, not only for handlers that read one.
        let (parts, body) = request.into_parts();
        let bytes = match axum::body::to_bytes(body, BODY_LIMIT).await {
            Ok(bytes) => bytes,
            Err(_) => {
                return error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("request bodies are limited to {BODY_LIMIT} bytes"),
                )
            }
        };
        let request = Request::from_parts(parts, Body::from(bytes));
        return next.run(request).await;
    }
    next.run(request).await
}

fn host_allowed(host: &str, port: u16) -> bool {
    [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ]
    .iter()
    .any(|allowed| host.eq_ignore_ascii_case(allowed))
}

fn origin_allowed(origin: &str, port: u16) -> bool {
    [
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
        "tauri://localhost".to_string(),
        "http://tauri.localhost".to_string(),
    ]
    .iter()
    .any(|allowed| origin.eq_ignore_ascii_case(allowed))
}

/// Compares the presented token with ours in time that does not depend on where they differ.
fn bearer_matches(headers: &HeaderMap, token: &str) -> bool {
    let Some(presented) = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
    else {
        return false;
    };
    let presented = presented.trim().as_bytes();
    let expected = token.as_bytes();
    presented.len() == expected.len()
        && presented
            .iter()
            .zip(expected)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

async fn live_sessions(State(state): State<AppState>) -> Response {
    Json(json!({ "sessions": state.handle.live_sessions() })).into_response()
}

async fn refresh(State(state): State<AppState>) -> StatusCode {
    state.handle.refresh_and_wait().await;
    StatusCode::NO_CONTENT
}

async fn session(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match state.handle.session(&id) {
        Some(detail) => Json(detail).into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            format!("no single session with an id starting with `{id}`"),
        ),
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
    Path(id): Path<String>,
    Json(request): Json<IntentRequest>,
) -> Response {
    let awaiting_who = match request
        .awaiting_who
        .as_deref()
        .map(str::parse::<Awaiting>)
        .transpose()
    {
        Ok(awaiting_who) => awaiting_who,
        Err(err) => return error(StatusCode::BAD_REQUEST, err.to_string()),
    };
    let intent = Intent {
        state: request.state,
        reason: request.reason,
        awaiting_who,
    };
    let Some(detail) = state.handle.session(&id) else {
        return error(
            StatusCode::NOT_FOUND,
            format!("no single session with an id starting with `{id}`"),
        );
    };
    let key = SessionKey::new(detail.session.agent, detail.session.id.as_str());
    if let Err(err) = state.handle.set_intent(&key, &intent) {
        return error(StatusCode::SERVICE_UNAVAILABLE, err.to_string());
    }
    state.handle.refresh_and_wait().await;
    match state.handle.session(key.id.as_str()) {
        Some(detail) => Json(detail).into_response(),
        None => StatusCode::NO_CONTENT.into_response(),
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

/// `POST /hosted`: a hosted terminal's titles and last draw (SPEC §3 rules 4, 5 and 6c).
async fn hosted(State(state): State<AppState>, Json(report): Json<HostedReport>) -> Response {
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
                    "a hosted report needs a session (agent and session_id) or a pid",
                )
            }
        },
    };
    state.handle.send(event);
    StatusCode::NO_CONTENT.into_response()
}

async fn health(State(state): State<AppState>) -> Response {
    Json(state.handle.health()).into_response()
}

async fn index_page(State(state): State<AppState>) -> Response {
    let mut response = state.index.to_string().into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    // The page carries the token: never cached, never framed by another page.
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

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "no such endpoint")
}

async fn method_not_allowed() -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        "this endpoint does not take that method",
    )
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
        Update::Removed { agent, id } => SseEvent::default()
            .event("removed")
            .data(json!({ "agent": agent, "id": id }).to_string()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_goes_into_the_head() {
        let page = inject_token("<html><head><title>x</title></head></html>", "abc");
        assert!(page.contains(
            r#"<head>
<meta name="slate-token" content="abc"><title>"#
        ));
        let page = inject_token(
            r#"<head><meta name="slate-token" content=""></head>"#,
            "abc",
        );
        assert_eq!(
            page,
            r#"<head><meta name="slate-token" content="abc"></head>"#
        );
    }

    #[test]
    fn only_loopback_names_with_our_port_are_hosts() {
        assert!(host_allowed("127.0.0.1:7411", 7411));
        assert!(host_allowed("localhost:7411", 7411));
        assert!(host_allowed("[::1]:7411", 7411));
        assert!(!host_allowed("127.0.0.1:7412", 7411));
        assert!(!host_allowed("evil.example:7411", 7411));
        assert!(!host_allowed("127.0.0.1", 7411));
    }
}
