//! `POST /hooks/decision`: a decision hook's call, held until the person decides
//! (docs/hooks.md, "Decision hooks"; `answers::hook` keeps the waiting calls).
//!
//! Taken over this user's API socket only, whose peer is proven this uid (`local`): a request on
//! the loopback port is refused, token or not, so a decision never travels to or from a listener
//! that is not proven. The answer streams: a first line at once (`{"waiting": FINGERPRINT}`),
//! which tells the hook that a Slate holds its call, a blank line every half second while it
//! waits (a hook that went away is noticed at the next one, and its call released), and a last
//! line with the verdict, `{"decision": "allow"|"deny"|null}`. Null (no decision) when the bound
//! passes, the call is released (a newer call, a later event of the session, the session no
//! longer waiting) or the server stops.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::json;

use super::errors::error;
use super::AppState;
use crate::answers::hook::{decisions, dialog_of, fingerprint_of};
use crate::live;
use slate_core::agents::hooks::decision::{decides, HookCall, Verdict};
use slate_core::model::{AgentKind, SessionKey, Status};

/// How often the waiting answer writes a blank line, and looks whether the call still waits.
const BEAT: Duration = Duration::from_millis(500);

/// The body of `POST /hooks/decision`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionRequest {
    pub call: HookCall,
    /// The hook's own random nonce (16 to 64 hex digits), which the fingerprint covers.
    pub nonce: String,
    /// How long the hook waits, in milliseconds; at most its agent's bound.
    pub within_ms: u64,
}

/// Ends a wait however it ends (the verdict, the bound, the hook gone): the call no longer waits,
/// and its session's dialog says so.
struct Held {
    key: SessionKey,
    fingerprint: String,
    handle: live::Handle,
}

impl Drop for Held {
    fn drop(&mut self) {
        decisions().release(&self.key, Some(&self.fingerprint));
        if decisions().waiting(&self.key).is_none() {
            self.handle.send(live::Event::Decision {
                key: self.key.clone(),
                waiting: None,
            });
        }
    }
}

pub(super) async fn decision(
    State(state): State<AppState>,
    request: axum::extract::Request,
) -> Response {
    if request
        .extensions()
        .get::<super::local::OverSocket>()
        .is_none()
    {
        return error(
            StatusCode::FORBIDDEN,
            "socket_only",
            "decisions are taken over this user's API socket only",
        );
    }
    let body = match axum::body::to_bytes(request.into_body(), super::BODY_LIMIT).await {
        Ok(body) => body,
        Err(err) => return error(StatusCode::BAD_REQUEST, "invalid", err.to_string()),
    };
    let request: DecisionRequest = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(err) => {
            return error(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid",
                format!("the body is not a decision hook's call: {err}"),
            )
        }
    };
    let nonce_ok = (16..=64).contains(&request.nonce.len())
        && request.nonce.bytes().all(|byte| byte.is_ascii_hexdigit());
    let fingerprint = match fingerprint_of(&request.call, &request.nonce) {
        Ok(fingerprint) if nonce_ok => fingerprint,
        Ok(_) => return error(StatusCode::UNPROCESSABLE_ENTITY, "invalid", "a bad nonce"),
        Err(why) => return error(StatusCode::UNPROCESSABLE_ENTITY, "invalid", why),
    };
    let (Some(agent), Some(decides)) = (
        AgentKind::parse(&request.call.agent),
        decides(&request.call.agent),
    ) else {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
            "an unknown agent",
        );
    };
    let key = SessionKey::new(agent, request.call.session_id.clone());
    let Some(verdict) = decisions().wait(key.clone(), fingerprint.clone()) else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "busy",
            "too many calls wait already",
        );
    };
    let handle = state.handle.clone();
    handle.send(live::Event::Decision {
        key: key.clone(),
        waiting: Some(dialog_of(&request.call, &fingerprint)),
    });
    let held = Held {
        key,
        fingerprint: fingerprint.clone(),
        handle,
    };
    let within = Duration::from_millis(request.within_ms).min(decides.bound);
    let first = Bytes::from(format!("{}\n", json!({ "waiting": fingerprint })));
    let stopping = state.stopping.clone();
    let outcome = futures_util::stream::unfold(
        Some((
            held,
            verdict,
            tokio::time::Instant::now() + within,
            false,
            stopping,
        )),
        |state| async move {
            let (held, mut verdict, until, mut seen_waiting, mut stopping) = state?;
            let beat = tokio::time::sleep(
                BEAT.min(until.saturating_duration_since(tokio::time::Instant::now())),
            );
            let decided = tokio::select! {
                got = &mut verdict => Some(got.ok().flatten()),
                _ = stopping.changed() => Some(None),
                _ = beat => None,
            };
            let decided = decided.or_else(|| {
                if tokio::time::Instant::now() >= until || *stopping.borrow() {
                    return Some(None);
                }
                // The person answered at the terminal, or the call was interrupted: the session
                // no longer waits once it did.
                let waits = still_waiting(&held);
                seen_waiting |= waits == Some(true);
                (seen_waiting && waits != Some(true)).then_some(None)
            });
            match decided {
                Some(verdict) => {
                    let word = match verdict {
                        Some(Verdict::Allow) => json!("allow"),
                        Some(Verdict::Deny) => json!("deny"),
                        None => serde_json::Value::Null,
                    };
                    drop(held);
                    let line = format!("{}\n", json!({ "decision": word }));
                    Some((Ok::<_, std::io::Error>(Bytes::from(line)), None))
                }
                None => Some((
                    Ok(Bytes::from_static(b"\n")),
                    Some((held, verdict, until, seen_waiting, stopping)),
                )),
            }
        },
    );
    let stream = futures_util::stream::once(async move { Ok(first) }).chain(outcome);
    (
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(stream),
    )
        .into_response()
}

/// Whether the session of `held` reads as waiting at a permission now (`None` when it is not in the live list).
fn still_waiting(held: &Held) -> Option<bool> {
    let sessions = held.handle.live_sessions();
    let session = sessions.iter().find(|session| {
        session.agent == held.key.agent && session.id.as_str() == held.key.id.as_str()
    })?;
    Some(
        session.status == Status::Waiting
            && session.session_state.reason.code == slate_core::model::ReasonCode::PermissionPrompt,
    )
}

/// Releases the session's waiting call, with no decision, when `report` says the call moved on:
/// a tool started or ended, a prompt, the turn's or the session's end (the person answered at
/// the terminal, or interrupted). Another permission or a notification of the same dialog does
/// not: the observing hook of the same event runs beside the decision hook.
pub(super) fn moved_on(report: &slate_core::agents::hooks::HookReport) {
    use slate_core::agents::hooks::Meaning;
    let Some(agent) = AgentKind::parse(&report.agent) else {
        return;
    };
    let meaning = slate_core::agents::BUILT_IN
        .iter()
        .find(|description| description.id == report.agent)
        .and_then(|description| description.hooks)
        .and_then(|hooks| hooks.meaning(&report.event));
    let moved = matches!(
        meaning,
        Some(
            Meaning::ToolStart
                | Meaning::ToolEnd
                | Meaning::Prompt
                | Meaning::TurnEnd
                | Meaning::SessionStart
                | Meaning::SessionEnd
        )
    );
    if moved {
        decisions().release(&SessionKey::new(agent, report.session_id.clone()), None);
    }
}
