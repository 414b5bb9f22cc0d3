//! The fourth route of an answer: through the agent's own decision hook (docs/hooks.md,
//! "Decision hooks"). A decision hook (`slate hook AGENT EVENT --answer`) hands the running
//! Slate the call it holds over this user's API socket and waits; [`Decisions`] keeps that call
//! until the person decides, the hook goes away, or the call is no longer pending, and hands the
//! hook the verdict at most once.
//!
//! A decision names the waiting call's fingerprint, which covers the session, the call, the tool,
//! the whole input, the folder and the hook's own nonce: a decision about another call, an older
//! one, or one answered already is refused and nothing is sent. A session has one waiting call
//! at most: a newer call of the same session releases the older with no decision, and so does
//! any later event of the session's hooks that says the call moved on (answered at the terminal,
//! interrupted). Released, the hook prints nothing and the agent's own dialog decides.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use slate_core::agents::hooks::decision::{self, HookCall, Verdict};
use slate_core::model::{Action, HookDecision, PendingCall, SessionKey};
use slate_core::protocol::{ErrorCode, RespondError, RespondRequest, Responded, Target};
use tokio::sync::oneshot;

/// The outcome of an answer the agent's decision hook took (`Responded::outcome`): the verdict
/// reached the hook, and the agent acts on it; no keys, no screen to watch.
pub const HOOK_OUTCOME: &str = "hook";

/// The most calls waiting at once, across sessions: past it, a new call is refused and its hook
/// returns no decision.
pub const MOST_WAITING: usize = 256;

/// One waiting call.
struct Waiting {
    fingerprint: String,
    verdict: oneshot::Sender<Option<Verdict>>,
}

/// The calls decision hooks wait on, one per session.
#[derive(Default)]
pub struct Decisions {
    waiting: Mutex<HashMap<SessionKey, Waiting>>,
}

/// This process's waiting calls: the API takes them from the hooks, and `answers::answer` decides
/// them, in the one Slate that serves this user's socket.
pub fn decisions() -> &'static Decisions {
    static DECISIONS: OnceLock<Decisions> = OnceLock::new();
    DECISIONS.get_or_init(Decisions::default)
}

/// What a waiting call shows as its session's dialog.
pub fn dialog_of(call: &HookCall, fingerprint: &str) -> HookDecision {
    let detail = call.lines();
    let first = detail.first().cloned().unwrap_or_default();
    let shell = serde_json::from_str::<serde_json::Value>(&call.input)
        .ok()
        .is_some_and(|input| input.get("command").is_some_and(|c| c.is_string()));
    let more = match detail.len() {
        0 | 1 => String::new(),
        lines => format!(" … ({lines} lines)"),
    };
    let summary = if shell {
        format!("Run: {first}{more}")
    } else {
        format!("{}: {first}{more}", call.tool)
    };
    HookDecision {
        fingerprint: fingerprint.to_string(),
        summary: slate_core::agents::hooks::clean(&summary, 512),
        detail,
        call: PendingCall {
            id: call
                .call_id
                .clone()
                .unwrap_or_else(|| fingerprint.to_string()),
            name: call.tool.clone(),
            input: Some(call.input.clone()),
            cut: false,
        },
    }
}

impl Decisions {
    /// Keeps `call` of session `key` as waiting under `fingerprint`: the receiver gets the
    /// verdict, or `None` when the call is released. An older call of the session is released.
    /// `None` when too many calls wait already.
    pub fn wait(
        &self,
        key: SessionKey,
        fingerprint: String,
    ) -> Option<oneshot::Receiver<Option<Verdict>>> {
        let mut waiting = self.waiting.lock().ok()?;
        if waiting.len() >= MOST_WAITING && !waiting.contains_key(&key) {
            return None;
        }
        let (sender, receiver) = oneshot::channel();
        if let Some(older) = waiting.insert(
            key,
            Waiting {
                fingerprint,
                verdict: sender,
            },
        ) {
            let _ = older.verdict.send(None);
        }
        Some(receiver)
    }

    /// The fingerprint of session `key`'s waiting call, if one waits.
    pub fn waiting(&self, key: &SessionKey) -> Option<String> {
        let waiting = self.waiting.lock().ok()?;
        let held = waiting.get(key)?;
        (!held.verdict.is_closed()).then(|| held.fingerprint.clone())
    }

    /// Releases session `key`'s waiting call with no decision: only the one with `fingerprint`
    /// when one is named. True when one was released.
    pub fn release(&self, key: &SessionKey, fingerprint: Option<&str>) -> bool {
        let Ok(mut waiting) = self.waiting.lock() else {
            return false;
        };
        let matches = waiting
            .get(key)
            .is_some_and(|held| fingerprint.is_none_or(|print| held.fingerprint == print));
        if !matches {
            return false;
        }
        if let Some(held) = waiting.remove(key) {
            let _ = held.verdict.send(None);
        }
        true
    }

    /// Hands `verdict` to session `key`'s waiting call if its fingerprint is `fingerprint`, once:
    /// the call stops waiting whatever the hook does with it.
    pub fn decide(
        &self,
        key: &SessionKey,
        fingerprint: &str,
        verdict: Verdict,
    ) -> Result<(), RespondError> {
        let mut waiting = self.waiting.lock().map_err(|_| {
            RespondError::new(ErrorCode::Internal, "the waiting calls cannot be read")
        })?;
        let Some(held) = waiting.get(key) else {
            return Err(not_waiting(key));
        };
        if held.fingerprint != fingerprint {
            return Err(RespondError::new(
                ErrorCode::DialogChanged,
                format!(
                    "the call waiting now is another (fingerprint {}), not the one answered \
                     ({fingerprint}); nothing was sent",
                    held.fingerprint
                ),
            ));
        }
        let held = waiting.remove(key).ok_or_else(|| not_waiting(key))?;
        held.verdict.send(Some(verdict)).map_err(|_| {
            RespondError::new(
                ErrorCode::NotAtDialog,
                "the agent's hook stopped waiting before the answer reached it; nothing was sent",
            )
        })
    }
}

fn not_waiting(key: &SessionKey) -> RespondError {
    RespondError::new(
        ErrorCode::NotAtDialog,
        format!(
            "no hook of session {} waits for an answer now (answered at the terminal, \
             interrupted, or a newer call); nothing was sent",
            key.reference()
        ),
    )
}

/// The answer through the hook, when session `target`'s agent has a call waiting in
/// `decisions` (`None` otherwise, and the answer takes another route): a permission allowed or
/// denied, once, and only for the fingerprint the person saw.
pub fn answer(
    decisions: &Decisions,
    target: &Target,
    request: &RespondRequest,
) -> Option<Result<Responded, RespondError>> {
    if target.machine.is_some() {
        return None;
    }
    decisions.waiting(&target.key)?;
    let verdict = match request.action {
        Action::Approve => Verdict::Allow,
        Action::Deny => Verdict::Deny,
        Action::Answer => {
            return Some(Err(RespondError::new(
                ErrorCode::NotOffered,
                "the agent's hook takes allow or deny only: approve or deny it",
            )))
        }
    };
    Some(
        decisions
            .decide(&target.key, &request.dialog, verdict)
            .map(|()| Responded {
                outcome: HOOK_OUTCOME.to_string(),
                action: request.action,
                option: None,
                left_after_ms: 0,
            }),
    )
}

/// The fingerprint of `call` as a waiting hook holds it with `nonce`; refused when Slate may not
/// offer it.
pub fn fingerprint_of(call: &HookCall, nonce: &str) -> Result<String, String> {
    match decision::refused(call) {
        Some(why) => Err(why),
        None => Ok(decision::fingerprint(call, nonce)),
    }
}
