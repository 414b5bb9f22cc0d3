//! Answering a session's dialog from where the person is (docs/states.md §8): the request and its
//! outcome as the API, the client and the command line share them, and the machinery that
//! carries one answer out.
//!
//! [`respond`] finds the session's terminal, re-reads its screen immediately before typing (in the
//! process that types), checks that the dialog on screen now has the fingerprint the person saw,
//! works out the fewest keys with the agent's keys (`agents::keys`), sends them once
//! (`terminals::typing`), and then reads the screen again until the dialog has left, for at most
//! [`CONFIRM_WITHIN`]. It never retries: keys that had no effect are reported as such. It refuses
//! a session at no dialog, a dialog that changed, a terminal Slate cannot type into (saying what
//! would make it possible), and an option that widens permissions.
//!
//! It does not record the attempt (the caller does, with [`Record`], in the store) and decides no
//! state: the tracker sees the dialog leave on its next reading like any other.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::agents::keys::{self, Action, Choice, OptionRef, Refusal};
use crate::agents::screens::Screen;
use crate::model::{Machine, Session, SessionKey, TerminalKind, TerminalView, Timestamp};
use crate::terminals::{self, panes::Address};

/// How long after the keys the dialog has to leave the screen.
pub const CONFIRM_WITHIN: Duration = Duration::from_secs(5);

/// How often the screen is read while waiting for the dialog to leave.
const CONFIRM_EVERY: Duration = Duration::from_millis(50);

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

    fn choice(&self) -> Choice {
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
    /// The keys were delivered and the dialog was still on screen after five seconds.
    NoEffect,
    /// Slate cannot type into the session's terminal.
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
            ErrorCode::NotAtDialog | ErrorCode::DialogChanged | ErrorCode::NoEffect => 409,
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
    fn refused(error: RespondError, summary: Option<String>) -> Attempt {
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

/// What Slate says of a session under a `slate run` that offers no control socket.
pub const NO_CONTROL_NOTE: &str = "this `slate run` offers no control socket (an older version, \
     or it could not make one in its runtime folder): answer it in its terminal, or start it \
     again under this version's `slate run`";

/// What Slate says of a terminal it cannot type into, and what would make it possible.
pub const PLAIN_NOTE: &str =
    "plain terminal: start it in tmux or under `slate run` to answer from here";

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

/// Where Slate can type into `target`'s terminal, or why it cannot. A session on another machine
/// is not typed into from here: its answer is forwarded (`remote::forward`).
pub fn terminal_of(target: &Target) -> Result<Address, RespondError> {
    if let Some(machine) = &target.machine {
        return Err(RespondError::new(
            ErrorCode::CannotType,
            format!(
                "session {} runs on {machine}, where its terminal is: answer it with `slate {} \
                 {}`, which forwards the answer there",
                target.key.reference(),
                Action::Approve.as_str(),
                target.key.reference()
            ),
        ));
    }
    let Some(pid) = target.pid else {
        return Err(RespondError::new(
            ErrorCode::NotAtDialog,
            format!(
                "session {} has no live process, so it is at no dialog",
                target.key.reference()
            ),
        ));
    };
    if target.hosted {
        return match &target.control {
            Some(socket) => Ok(Address::Hosted {
                socket: socket.clone(),
            }),
            None => Err(RespondError::new(ErrorCode::CannotType, NO_CONTROL_NOTE)),
        };
    }
    let located = terminals::locate(&[pid])
        .into_iter()
        .find_map(|(found, located)| (found == pid).then_some(located));
    let Some(located) = located else {
        return Err(RespondError::new(
            ErrorCode::NotAtDialog,
            format!("process {pid} is gone"),
        ));
    };
    match located.address {
        Some(address) => Ok(address),
        None => {
            let message = match located.view.kind {
                TerminalKind::Plain => PLAIN_NOTE.to_string(),
                _ => format!(
                    "slate cannot type into this terminal ({}): {}",
                    located.view.describe(),
                    located.view.note.as_deref().unwrap_or("it cannot be read")
                ),
            };
            Err(RespondError::new(ErrorCode::CannotType, message))
        }
    }
}

/// Carries out one answer on `target`: re-reads its screen, checks the fingerprint, types the
/// fewest keys once, and waits up to [`CONFIRM_WITHIN`] for the dialog to leave.
pub fn respond(target: &Target, request: &RespondRequest) -> Attempt {
    if let Err(error) = check(request) {
        return Attempt::refused(error, None);
    }
    let address = match terminal_of(target) {
        Ok(address) => address,
        Err(error) => return Attempt::refused(error, None),
    };
    respond_at(&address, target.key.agent, request)
}

/// [`respond`] on a pane already found.
pub fn respond_at(
    address: &Address,
    agent: crate::model::AgentKind,
    request: &RespondRequest,
) -> Attempt {
    if let Err(error) = check(request) {
        return Attempt::refused(error, None);
    }
    let screen = match terminals::screen_now(address, agent) {
        Ok(screen) => screen,
        Err(why) => {
            return Attempt::refused(
                RespondError::new(
                    ErrorCode::CannotType,
                    format!("cannot read the terminal before typing, so nothing was typed: {why}"),
                ),
                None,
            )
        }
    };
    let Screen::Dialog(dialog) = screen else {
        let now = match screen {
            Screen::Working => "the agent is working",
            Screen::Idle => "the agent waits for a prompt",
            _ => "its screen shows nothing slate knows",
        };
        return Attempt::refused(
            RespondError::new(
                ErrorCode::NotAtDialog,
                format!("the session is at no dialog now ({now}), so nothing was typed"),
            ),
            None,
        );
    };
    let summary = Some(dialog.summary.clone());
    let shown = keys::fingerprint(agent, &dialog);
    if shown != request.dialog {
        return Attempt::refused(
            RespondError::new(
                ErrorCode::DialogChanged,
                format!(
                    "the dialog changed: the screen now shows {:?} (fingerprint {shown}), not \
                     the one answered ({}), so nothing was typed",
                    dialog.summary, request.dialog
                ),
            ),
            summary,
        );
    }
    let plan = match keys::plan(agent, &dialog, &request.choice()) {
        Ok(plan) => plan,
        Err(refusal) => return Attempt::refused(refusal.into(), summary),
    };
    let option = plan
        .option
        .and_then(|index| dialog.options.get(index))
        .and_then(|option| option.number);
    let sent_at = Instant::now();
    if let Err(why) = terminals::typing::send(address, &plan.keys) {
        return Attempt::refused(RespondError::new(ErrorCode::CannotType, why), summary);
    }
    // The keys went in once; from here on only the screen is read.
    let deadline = sent_at + CONFIRM_WITHIN;
    loop {
        let still = match terminals::screen_now(address, agent) {
            Ok(Screen::Dialog(now)) => keys::fingerprint(agent, &now) == shown,
            Ok(_) => false,
            // A read that fails says nothing either way: the next one may.
            Err(_) => true,
        };
        let elapsed = sent_at.elapsed();
        if !still {
            return Attempt {
                result: Ok(Responded {
                    outcome: "answered".to_string(),
                    action: request.action,
                    option,
                    left_after_ms: elapsed.as_millis() as u64,
                }),
                summary,
            };
        }
        if Instant::now() >= deadline {
            return Attempt::refused(
                RespondError::new(
                    ErrorCode::NoEffect,
                    format!(
                        "the keys were sent once and the dialog is still on screen after {} s; \
                         slate does not send them again: look at the terminal",
                        CONFIRM_WITHIN.as_secs()
                    ),
                ),
                summary,
            );
        }
        std::thread::sleep(CONFIRM_EVERY);
    }
}
