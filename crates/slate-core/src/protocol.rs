//! The answer protocol: a request to answer a session's dialog and its outcome, as the API, the
//! client, the command line, a forwarded remote call and the store share them (docs/states.md
//! §8). Plain data and the checks of a request's shape; carrying an answer out is `answers`' job,
//! and recording it the store's.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::agents::keys::{Choice, OptionRef, Refusal};
use crate::model::{Action, Machine, PendingCall, Session, SessionKey, TerminalView, Timestamp};

/// How long after the keys the dialog has to leave the screen: an answer's outcome is known
/// within it, so every caller's deadline is this and its own margin.
pub const CONFIRM_WITHIN: Duration = Duration::from_secs(5);

/// Where an answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Surface {
    Cli,
    #[default]
    Api,
    Window,
    Tray,
    Notification,
}

impl Surface {
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Cli => "cli",
            Surface::Api => "api",
            Surface::Window => "window",
            Surface::Tray => "tray",
            Surface::Notification => "notification",
        }
    }
}

/// The body of `POST /sessions/{id}/respond`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RespondRequest {
    pub action: Action,
    /// The option to pick (its number or its label), only with `answer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option: Option<OptionRef>,
    /// A free answer, only with `answer`, where the dialog offers one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The fingerprint of the dialog the person saw.
    pub dialog: String,
    /// Where the answer came from; `api` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<Surface>,
}

impl RespondRequest {
    pub fn surface(&self) -> Surface {
        self.surface.unwrap_or_default()
    }

    /// What the agent's keys are planned for (`agents::keys::plan`).
    pub fn choice(&self) -> Choice {
        Choice {
            action: self.action,
            option: self.option.clone(),
            text: self.text.clone(),
        }
    }
}

/// What a delivered answer did: the keys went in and the dialog left the screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Responded {
    /// `answered` (the keys went in and the dialog left the screen), or `hook` (the agent's
    /// decision hook took the verdict, docs/hooks.md).
    pub outcome: String,
    pub action: Action,
    /// The number of the option picked, when the dialog numbers it.
    #[serde(default)]
    pub option: Option<u32>,
    /// Milliseconds from the keys to the first screen without the dialog.
    pub left_after_ms: u64,
}

/// Why an answer was refused or had no effect, as the API's `error.code` spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The request is malformed (an option with approve, text without answer, a bad body).
    BadRequest,
    /// The request did not carry this server's token.
    Unauthorized,
    /// No session has that id.
    UnknownSession,
    /// The session is at no dialog now.
    NotAtDialog,
    /// The screen shows a dialog whose fingerprint differs from the one the person saw.
    DialogChanged,
    /// The keys were delivered and the agent drew none of its own screens after them within five
    /// seconds (the dialog stayed, or something else took the screen).
    NoEffect,
    /// Another answer to this dialog is being carried out, or was carried out a moment ago.
    AlreadyAnswered,
    /// Slate cannot type into the session's terminal, or will not: the dialog on screen is not the
    /// call the transcript records.
    CannotType,
    /// The option widens permissions, or the dialog has no such option.
    NotOffered,
    /// The client could not reach a Slate, or could not read its answer.
    Unreachable,
    /// Something failed inside Slate (its store, its loop).
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::UnknownSession => "unknown_session",
            ErrorCode::NotAtDialog => "not_at_dialog",
            ErrorCode::DialogChanged => "dialog_changed",
            ErrorCode::NoEffect => "no_effect",
            ErrorCode::AlreadyAnswered => "already_answered",
            ErrorCode::CannotType => "cannot_type",
            ErrorCode::NotOffered => "not_offered",
            ErrorCode::Unreachable => "unreachable",
            ErrorCode::Internal => "internal",
        }
    }

    /// The HTTP status the API answers it with.
    pub fn status(self) -> u16 {
        match self {
            ErrorCode::BadRequest => 400,
            ErrorCode::Unauthorized => 401,
            ErrorCode::UnknownSession => 404,
            ErrorCode::NotAtDialog
            | ErrorCode::DialogChanged
            | ErrorCode::NoEffect
            | ErrorCode::AlreadyAnswered => 409,
            ErrorCode::CannotType | ErrorCode::NotOffered => 422,
            ErrorCode::Unreachable => 502,
            ErrorCode::Internal => 500,
        }
    }
}

/// An answer refused or without effect: a code and a sentence for the person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct RespondError {
    pub code: ErrorCode,
    pub message: String,
}

impl RespondError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> RespondError {
        RespondError {
            code,
            message: message.into(),
        }
    }
}

impl From<Refusal> for RespondError {
    fn from(refusal: Refusal) -> RespondError {
        match refusal {
            Refusal::Malformed(why) => RespondError::new(ErrorCode::BadRequest, why),
            Refusal::NotOffered(why) => RespondError::new(ErrorCode::NotOffered, why),
        }
    }
}

/// The API's error body: `{"error": {"code": "...", "message": "..."}}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: RespondError,
}

/// What an answer is aimed at: the session, its live process, and where it runs.
#[derive(Debug, Clone)]
pub struct Target {
    pub key: SessionKey,
    pub pid: Option<u32>,
    /// True for a session under `slate run`.
    pub hosted: bool,
    /// The control socket of a session under `slate run`, when it offers one (`host::control`):
    /// the session's `terminal.pane`.
    pub control: Option<String>,
    /// The machine it runs on, `None` for this one.
    pub machine: Option<Machine>,
    /// The call the dialog is about, as the session's dialog carries it: the screen must agree
    /// with it, and the fingerprint covers it (`agents::keys`).
    pub call: Option<PendingCall>,
    /// The dialog's summary as the session shows it: what the record of an answer forwarded to
    /// another machine, or refused before any screen was read, names.
    pub summary: Option<String>,
}

impl Target {
    /// The target of an answer to `session`, as the live list shows it.
    pub fn of(session: &Session) -> Target {
        Target {
            key: SessionKey::new(session.agent, session.id.as_str()),
            pid: session.pid,
            hosted: session.hosted,
            control: session
                .terminal
                .as_ref()
                .and_then(TerminalView::control)
                .map(String::from),
            machine: session.machine.clone(),
            call: session
                .dialog
                .as_ref()
                .and_then(|dialog| dialog.call.clone()),
            summary: session.dialog.as_ref().map(|dialog| dialog.summary.clone()),
        }
    }
}

/// One attempt as it is recorded in the store, whatever its outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub surface: Surface,
    pub action: Action,
    /// The option as the person named it (a number or a label), when one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option: Option<String>,
    /// The fingerprint the person sent.
    pub fingerprint: String,
    /// The dialog's summary, when one was on screen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// `answered`, or the error code.
    pub outcome: String,
    /// The refusal's sentence, or nothing for an answer delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    pub at: Timestamp,
}

/// What one call to [`respond`] did, with what the store records of it.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub result: Result<Responded, RespondError>,
    /// The summary of the dialog on screen at the re-read, when there was one.
    pub summary: Option<String>,
}

impl Attempt {
    pub fn refused(error: RespondError, summary: Option<String>) -> Attempt {
        Attempt {
            result: Err(error),
            summary,
        }
    }

    /// The store's record of this attempt, made at `at`.
    pub fn record(&self, request: &RespondRequest, at: Timestamp) -> Record {
        let (outcome, detail) = match &self.result {
            Ok(responded) => (responded.outcome.clone(), None),
            Err(error) => (error.code.as_str().to_string(), Some(error.message.clone())),
        };
        Record {
            surface: request.surface(),
            action: request.action,
            option: request.option.as_ref().map(|option| match option {
                OptionRef::Number(number) => number.to_string(),
                OptionRef::Label(label) => label.clone(),
            }),
            fingerprint: request.dialog.clone(),
            summary: self.summary.clone(),
            outcome,
            detail,
            at,
        }
    }
}

/// Checks a request's shape before anything is read: the fingerprint's form, and an option or a
/// text only with `answer`.
pub fn check(request: &RespondRequest) -> Result<(), RespondError> {
    let print = &request.dialog;
    if print.len() != 16
        || !print
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(RespondError::new(
            ErrorCode::BadRequest,
            "`dialog` must be the fingerprint of the dialog shown: 16 lowercase hex digits",
        ));
    }
    if request.action != Action::Answer && (request.option.is_some() || request.text.is_some()) {
        return Err(RespondError::new(
            ErrorCode::BadRequest,
            format!(
                "{} takes no option and no text (use answer to pick an option)",
                request.action.as_str()
            ),
        ));
    }
    if request.action == Action::Answer && request.option.is_none() && request.text.is_none() {
        return Err(RespondError::new(
            ErrorCode::BadRequest,
            "answer needs an option (its number or label) or a text",
        ));
    }
    Ok(())
}
