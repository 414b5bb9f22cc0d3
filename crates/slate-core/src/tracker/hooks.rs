//! What an agent's own hook says of a session (docs/states.md §3 rule 3a): the newest hook event
//! Slate received for it, read against the transcript.
//!
//! A hook is an event the agent sends as it happens, so it says at once what a transcript says
//! late or never (a permission dialog on a plain terminal). It decides only while it is the
//! newest word: a prompt hook (a permission or a question) is Needs you until a later hook or a
//! transcript record that answers it (a tool's result, a turn's end, a new prompt); a hook that
//! says the agent works (a tool starting or ending, a prompt) is Working until the transcript
//! writes anything newer, at most for the window; a turn's end is Needs you until the
//! transcript writes anything newer. It never decides alone that a session is open: the rules
//! read it only for a session a live process vouches for. Session start and end hooks are
//! evidence only. Where the prompt hook carries the call (the command, the file), the session's
//! `dialog` shows it (`dialog`), with no option to answer: only the terminal can.

use super::evidence::Evidence;
use super::log::Log;
use super::reasons::{self, turn_finished};
use super::Policy;
use crate::agents::hooks::{HookSeen, Signal};
use crate::agents::screens::{Dialog, DialogKind};
use crate::agents::{CallKind, RecordKind};
use crate::model::{Reason, ReasonCode, Status, Timestamp};

/// How long a prompt hook holds against a terminal Slate reads that changed after it: the
/// dialog the hook tells of is drawn a moment after the hook fires, and a screen read in between
/// still shows the agent working. Past it, a screen that changed after the hook decides (the
/// dialog answered at the terminal, which no hook reports).
pub(super) const DIALOG_DRAWS: std::time::Duration = std::time::Duration::from_secs(2);

/// How much later than a permission hook a process the agent started must have started to say
/// that the dialog was approved at the terminal and its command runs: a hook that runs right
/// after Slate's for the same event (a person's own, playing a sound) starts within it, and
/// nobody reads and approves a dialog faster.
pub(super) const APPROVED_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// What a hook decides: status, reason, since and when it stops deciding; with its evidence.
pub(super) struct HookReading {
    pub(super) verdict: Option<(Status, Reason, Timestamp, Option<Timestamp>)>,
    pub(super) evidence: Evidence,
}

/// True when the transcript's newest record came after the hook and answers a prompt: the
/// call's result, the turn's end or failure, an interrupt, a new prompt or turn.
fn answered_since(log: &Log, at: Timestamp) -> bool {
    log.last.as_ref().is_some_and(|last| {
        last.at > at
            && matches!(
                last.kind,
                RecordKind::ToolResult { .. }
                    | RecordKind::TurnEnded { .. }
                    | RecordKind::TurnFailed { .. }
                    | RecordKind::Interrupted { .. }
                    | RecordKind::Prompt { .. }
                    | RecordKind::TurnStarted { .. }
                    | RecordKind::SessionEnded
            )
    })
}

/// True when the transcript wrote any turn record after the hook.
fn written_since(log: &Log, at: Timestamp) -> bool {
    log.last.as_ref().is_some_and(|last| last.at > at)
}

/// `newest_child` is when the newest process the vouching agent process started started
/// (`SeenProcess::newest_child`): a permission hook followed by a new process at least
/// `APPROVED_AFTER` later was approved at the terminal, and its command runs. Codex and Gemini
/// CLI send no hook on approval, only at the tool's end.
pub(super) fn rules(
    hook: &HookSeen,
    log: &Log,
    newest_child: Option<Timestamp>,
    now: Timestamp,
    policy: &Policy,
) -> HookReading {
    let evidence = Evidence::Hook {
        event: hook.event.clone(),
        signal: hook.signal,
        at: hook.at,
    };
    let what = match (&hook.tool, &hook.detail) {
        (Some(tool), Some(detail)) => Some(format!("{tool}: {detail}")),
        (Some(tool), None) => Some(tool.clone()),
        (None, Some(detail)) => Some(detail.clone()),
        (None, None) => None,
    };
    let approved = newest_child.filter(|started| *started >= hook.at.plus(APPROVED_AFTER));
    let verdict = match hook.signal {
        Signal::Permission if !answered_since(log, hook.at) && approved.is_some() => {
            let text = match &what {
                Some(what) => format!("Running {what} (approved at the terminal)"),
                None => "Approved at the terminal: its command runs".to_string(),
            };
            let reason = Reason::new(ReasonCode::ToolRunning, text);
            Some((Status::Working, reason, approved.unwrap_or(hook.at), None))
        }
        Signal::Permission if !answered_since(log, hook.at) => {
            let reason = match &what {
                Some(what) => Reason::new(
                    ReasonCode::PermissionPrompt,
                    format!("Asks permission: {what}"),
                ),
                None => reasons::permission(log),
            };
            Some((Status::Waiting, reason, hook.at, None))
        }
        Signal::Question if !answered_since(log, hook.at) => {
            let call = log
                .newest_open_call()
                .filter(|call| call.kind == CallKind::Question);
            Some((Status::Waiting, reasons::question(call), hook.at, None))
        }
        Signal::Working if !written_since(log, hook.at) => {
            let until = hook.at.plus(policy.window);
            (now < until).then(|| {
                let text = match &what {
                    Some(what) => format!("Running {what} (the agent's hook says)"),
                    None => "The agent's hook says it works".to_string(),
                };
                let reason = Reason::new(ReasonCode::ToolRunning, text);
                (Status::Working, reason, hook.at, Some(until))
            })
        }
        Signal::TurnEnded if !written_since(log, hook.at) => {
            Some((Status::Waiting, turn_finished(), hook.at, None))
        }
        _ => None,
    };
    HookReading { verdict, evidence }
}

/// True when `seen` tells of the dialog `held` told of, and adds nothing: a prompt of the same
/// kind without the call's tool or detail, within `DIALOG_DRAWS` of it. Claude Code and Copilot
/// CLI send a `permission_prompt` notification right after the dialog's own event, and the
/// held event keeps what the dialog asks and when it opened.
pub(super) fn tells_again(held: &HookSeen, seen: &HookSeen) -> bool {
    held.signal.is_prompt()
        && seen.signal == held.signal
        && seen.tool.is_none()
        && seen.detail.is_none()
        && seen.at <= held.at.plus(DIALOG_DRAWS)
}

/// The shell tools' names, whose detail is a command to run.
const SHELLS: &[&str] = &[
    "Bash",
    "bash",
    "shell",
    "exec_command",
    "run_shell_command",
    "Confirm Shell Command",
];

/// The dialog a prompt hook tells of, while it is the newest word: its kind, a summary and the
/// call's command or file as its detail, with no options (Slate answers only what it sees).
pub(super) fn dialog(hook: &HookSeen, log: &Log) -> Option<Dialog> {
    let kind = match hook.signal {
        Signal::Permission => DialogKind::Permission,
        Signal::Question => DialogKind::Question,
        _ => return None,
    };
    if answered_since(log, hook.at) {
        return None;
    }
    let about = hook.detail.clone().or_else(|| hook.tool.clone())?;
    let summary = match kind {
        DialogKind::Permission => match (&hook.tool, &hook.detail) {
            (Some(tool), Some(detail)) if !SHELLS.contains(&tool.as_str()) => {
                format!("{tool}: {detail}")
            }
            (_, Some(detail)) => format!("Run: {detail}"),
            (_, None) => format!("Use: {about}"),
        },
        _ => format!("Question: {about}"),
    };
    Some(Dialog {
        kind,
        summary,
        detail: vec![about],
        cut: false,
        options: Vec::new(),
    })
}
