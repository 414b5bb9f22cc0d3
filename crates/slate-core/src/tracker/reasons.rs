//! The one builder of each reason a rule can give, and what the transcript alone says of a
//! session (`Posture`), shared by the state rules (`rules`) and the terminal's signals
//! (`signals`), so the same situation reads the same whichever found it.

use super::evidence::Evidence;
use super::log::{Log, OpenCall};
use crate::agents::screens::DialogKind;
use crate::agents::CallKind;
use crate::model::{Reason, ReasonCode, Timestamp};

pub(super) fn earliest(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// What the transcript alone says (docs/states.md §3 rules 6–7).
pub(super) struct Posture {
    pub(super) outcome: Outcome,
    /// When the evidence appeared.
    pub(super) since: Timestamp,
    /// When the outcome may change by time alone.
    pub(super) deadline: Option<Timestamp>,
    /// True when time, not a record, made this a Needs you: keep-Working signals override it.
    pub(super) timed: bool,
    pub(super) evidence: Evidence,
}

pub(super) enum Outcome {
    Working(Reason),
    Waiting(Reason),
}

/// What a listing's `waiting` says, by its `waitingFor` (docs/formats.md §1.1, docs/states.md §3
/// rule 3).
pub(super) enum ListedWait {
    /// The agent asks the person something: Needs you, for this reason.
    Asks(Reason),
    /// The person's own menu (`/model`, `/config`): they are at the terminal and nothing needs
    /// them, so the listing decides nothing and the later rules decide.
    Menu,
    /// A value Slate does not know: a sign the format changed (counted as the session's unread),
    /// never a Needs you on its own. The later rules decide, a dialog the transcript or the
    /// terminal shows included.
    Unknown,
}

/// Whether `waiting_for` is Claude Code's `dialog open`: the person's own menu.
pub(super) fn is_menu(waiting_for: Option<&str>) -> bool {
    waiting_for.is_some_and(|what| what.trim().eq_ignore_ascii_case("dialog open"))
}

/// The reason for a listing's `waiting`: the pending tool call says more than `waitingFor`,
/// which some versions write as "permission prompt" for questions too (docs/formats.md §9).
/// Each value Claude Code writes is mapped; older builds' `approve <Tool>` reads as a permission
/// and any value with `input` in it as a question. No value at all (a background job `blocked`
/// with no `needs`) is a dialog, as the listing says waiting and nothing more.
pub(super) fn waiting_reason(waiting_for: Option<&str>, log: &Log) -> ListedWait {
    if is_menu(waiting_for) {
        return ListedWait::Menu;
    }
    let what = waiting_for.unwrap_or_default().trim().to_ascii_lowercase();
    if let Some(reason) = log.newest_open_call().and_then(dialog) {
        return ListedWait::Asks(reason);
    }
    let reason = match what.as_str() {
        "" => Reason::new(ReasonCode::Dialog, "A dialog is open"),
        "worker request" => Reason::new(
            ReasonCode::PermissionPrompt,
            "Asks you to approve a worker's request",
        ),
        "sandbox request" => {
            Reason::new(ReasonCode::PermissionPrompt, "Asks for a sandbox exception")
        }
        "goal proposal" => Reason::new(ReasonCode::Dialog, "Proposes a goal"),
        what if what.contains("input") => question(None),
        what if what.contains("permission") || what.contains("approve") => permission(log),
        _ => return ListedWait::Unknown,
    };
    ListedWait::Asks(reason)
}

/// Whether `waiting_for` is a value `waiting_reason` knows: anything else is counted as a record
/// Slate could not read.
pub(super) fn known_waiting_for(waiting_for: Option<&str>) -> bool {
    !matches!(
        waiting_reason(waiting_for, &Log::default()),
        ListedWait::Unknown
    )
}

/// The reason a tool call gives when it is itself a dialog with the user (a question, or a plan
/// to approve); `None` for any other call.
pub(super) fn dialog(call: &OpenCall) -> Option<Reason> {
    match call.kind {
        CallKind::Question => Some(question(Some(call))),
        CallKind::PlanApproval => Some(plan_approval()),
        _ => None,
    }
}

/// A question to the user, quoted when the call says what it asks.
pub(super) fn question(call: Option<&OpenCall>) -> Reason {
    let text = match call.and_then(|call| call.detail.as_deref()) {
        Some(question) => format!("Asks: {question}"),
        None => "Asks you a question".to_string(),
    };
    Reason::new(ReasonCode::Question, text)
}

/// A dialog the terminal shows on screen, with what it says: a permission prompt with its
/// summary (`Run: touch x.txt`), a question, or a plan to approve.
pub(super) fn shown(kind: DialogKind, summary: Option<&str>, log: &Log) -> Reason {
    // The summary is `<word>: <what>`; a question and a plan read best by what they are about.
    let about = summary.map(|summary| summary.split_once(": ").map_or(summary, |(_, about)| about));
    match (kind, summary, about) {
        (DialogKind::Permission, Some(summary), _) => Reason::new(
            ReasonCode::PermissionPrompt,
            format!("Asks permission: {summary}"),
        ),
        (DialogKind::Permission, None, _) => permission(log),
        (DialogKind::Question, _, Some(about)) => {
            Reason::new(ReasonCode::Question, format!("Asks: {about}"))
        }
        (DialogKind::Question, _, None) => question(log.newest_open_call()),
        (DialogKind::Plan, _, Some(about)) => Reason::new(
            ReasonCode::PlanApproval,
            format!("A plan is waiting for approval: {about}"),
        ),
        (DialogKind::Plan, _, None) => plan_approval(),
    }
}

pub(super) fn plan_approval() -> Reason {
    Reason::new(ReasonCode::PlanApproval, "A plan is waiting for approval")
}

/// A permission prompt, naming the tool call it is about when one is open.
pub(super) fn permission(log: &Log) -> Reason {
    let text = match log.newest_open_call() {
        Some(call) => format!("Asks permission for {}", call.label()),
        None => "Asks permission".to_string(),
    };
    Reason::new(ReasonCode::PermissionPrompt, text)
}

pub(super) fn new_session() -> Reason {
    Reason::new(ReasonCode::NewSession, "Waiting for the first prompt")
}

pub(super) fn turn_finished() -> Reason {
    Reason::new(ReasonCode::TurnFinished, "The turn finished")
}

pub(super) fn model_answering() -> Reason {
    Reason::new(ReasonCode::ModelAnswering, "The model is answering")
}

pub(super) fn end_stamp() -> Reason {
    Reason::new(ReasonCode::EndStamp, "The session ended")
}

pub(super) fn print_finished() -> Reason {
    Reason::new(
        ReasonCode::PrintFinished,
        "The non-interactive run finished",
    )
}
