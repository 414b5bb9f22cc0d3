//! What an answer to a session's dialog is on the wire (docs/states.md §8), as the API, the client,
//! the command line and a forwarded answer share it: the request and its check, the outcome, the
//! refusal with its code, where the answer came from, and the store's record of an attempt.
//!
//! Plain data: it reads no screen and types nothing (the rest of `answers` does), so the client and
//! the forwarding over a remote's link can use it without the machinery that types.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::agents::keys::{Action, Choice, OptionRef, Refusal};
use crate::model::Timestamp;

/// How long after the keys the dialog has to leave the screen.
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
    /// Always `answered`.
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
