//! Answering the dialog of a session on another machine: the answer is forwarded over that
//! remote's SSH link as one `slate remote-call` run there, which reads the request (the session
//! id, the action, the option and the fingerprint) as JSON on its standard input and carries it
//! out as `slate approve|deny|answer --dialog <fingerprint> --yes --json <id>` would
//! (docs/states.md §8): the remote's own Slate re-reads its screen, compares the fingerprint,
//! types, confirms and records, exactly as it does for its own sessions. The command line `ssh`
//! hands the remote's login shell is fixed, so no shell's quoting rules matter.
//!
//! This module checks every argument before `ssh` runs (the session id, the fingerprint, and the
//! option, which is forwarded only as a number), runs the command once with
//! `remote::link::run_once` within the remote's own
//! confirmation time plus the connect timeout, never retries, and reads the remote's JSON answer
//! back into the same [`Responded`]/[`RespondError`] the local machinery gives. It records
//! nothing: the caller records the attempt in this machine's store, and the remote's Slate in its.

use crate::config::RemoteEntry;
use crate::remote::link;
use crate::remote::{classify, FailureKind, LinkOptions, RemoteCommand};
use slate_core::agents::keys::OptionRef;
use slate_core::protocol::{self, ErrorCode, RespondError, RespondRequest, Responded};

/// The longest a forwarded answer may take with `options`' timings (`remote::forward_limit`).
pub use crate::remote::forward_limit as limit;

/// The command that forwards `request` for the session `id` of `entry`'s machine, or why it
/// cannot be sent. Refuses before anything runs: a request of the wrong shape, an id longer than
/// `limits::ID_MAX` or with a character outside `[A-Za-z0-9._:-]` or one that starts with `-`, a
/// free text, and an option named by its label.
pub fn command(
    entry: &RemoteEntry,
    id: &str,
    request: &RespondRequest,
) -> Result<RemoteCommand, RespondError> {
    protocol::check(request)?;
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-');
    if id.is_empty()
        || id.len() > slate_core::limits::ID_MAX
        || id.starts_with('-')
        || !id.chars().all(plain)
    {
        return Err(RespondError::new(
            ErrorCode::BadRequest,
            format!(
                "the session id {id:?} cannot be sent to {}: only letters, digits, `.`, `_`, `:` \
                 and `-` are forwarded",
                entry.name
            ),
        ));
    }
    if request.text.is_some() {
        return Err(RespondError::new(
            ErrorCode::NotOffered,
            format!(
                "a free answer is not forwarded to {name}: answer it there (ssh {name}, then slate \
                 answer {id} --text …)",
                name = entry.name
            ),
        ));
    }
    let option = match &request.option {
        None => None,
        Some(OptionRef::Number(number)) => Some(*number),
        Some(OptionRef::Label(label)) => {
            return Err(RespondError::new(
                ErrorCode::BadRequest,
                format!(
                    "an option is forwarded to {} by its number only, not by its label {label:?}: \
                     give the number the dialog shows",
                    entry.name
                ),
            ))
        }
    };
    Ok(RemoteCommand::Respond {
        id: id.to_string(),
        request: RespondRequest {
            action: request.action,
            option: option.map(OptionRef::Number),
            text: None,
            dialog: request.dialog.clone(),
            surface: None,
        },
    })
}

/// Forwards `request` for the session `id` (its full id on that machine) to `entry`'s machine,
/// once, and returns what the remote's Slate says of it.
pub fn respond(
    entry: &RemoteEntry,
    options: &LinkOptions,
    id: &str,
    request: &RespondRequest,
) -> Result<Responded, RespondError> {
    let command = command(entry, id, request)?;
    let name = &entry.name;
    let finished = link::run_once(entry, options, &command, limit(options)).map_err(|failure| {
        RespondError::new(
            ErrorCode::Unreachable,
            format!(
                "the answer was not forwarded to {name}, and is not tried again: {}",
                failure.message
            ),
        )
    })?;
    // The remote's `slate --json` prints its outcome whatever its exit status.
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&finished.stdout) {
        if let Some(error) = value.get("error") {
            if let Ok(error) = serde_json::from_value::<RespondError>(error.clone()) {
                return Err(RespondError::new(
                    error.code,
                    format!("on {name}: {}", error.message),
                ));
            }
        }
        if let Ok(responded) = serde_json::from_value::<Responded>(value) {
            if finished.status.success() {
                return Ok(responded);
            }
        }
    }
    let failure = classify(name, finished.status.code(), &finished.stderr, false);
    let code = match (finished.status.code(), failure.kind) {
        (_, FailureKind::NoSlate | FailureKind::OldSlate) => ErrorCode::CannotType,
        (Some(255) | None, _) => ErrorCode::Unreachable,
        _ => ErrorCode::Internal,
    };
    let message = match failure.kind {
        FailureKind::OldSlate => format!(
            "the slate on {name} is older than this one (it has no `slate remote-call` to take a \
             forwarded answer): update it there, or answer it there (ssh {name}, then slate {} \
             {id})",
            request.action.as_str()
        ),
        _ => format!(
            "the answer was not carried out on {name}, and is not tried again: {}",
            failure.message
        ),
    };
    Err(RespondError::new(code, message))
}
