//! The one path of an answer, for the API and the command line alike (docs/states.md §8): the
//! answer goes through the agent's decision hook when one waits on the call (`answers::hook`),
//! or is typed here, sent through this HOME's running Slate, or forwarded once over the link
//! of the machine the session runs on, and every attempt is recorded exactly once, whatever its
//! outcome.
//!
//! The caller chooses the [`Route`] (the API from the session's machine, the command line also
//! from whether a Slate runs here) and says where records go ([`Ledger`]: the running service's
//! store, or the store the command opens). The Slate that carries an answer out records it: this
//! process for one typed here or forwarded from here (the remote's Slate records it too, in its
//! own store), the running Slate for one sent through it. Nothing is retried on any route.

use std::path::{Path, PathBuf};

use crate::client::Client;
use crate::config::RemoteEntry;
use crate::remote::{forward, LinkOptions};
use slate_core::model::{SessionKey, Timestamp};

use super::{no_store, respond_in, Attempt, Claim, Target};
use slate_core::protocol::{Record, RespondError, RespondRequest, Responded};
use slate_terminals::terminals::Backends;

/// Where an answer is carried out.
#[derive(Debug, Clone)]
pub enum Route {
    /// In this process, which re-reads the screen and types (`respond`), holding the session's
    /// answer lock in `locks` (`lock_folder`); `None` where Slate keeps no store, which refuses
    /// the answer.
    Here { locks: Option<PathBuf> },
    /// Through this HOME's running Slate (`POST /sessions/{id}/respond`), which carries it out on
    /// its own route and records it itself.
    Server(Client),
    /// Forwarded once over the link of `entry`, the machine the session runs on, whose Slate
    /// carries it out (`remote::forward`). The session (its key with its machine) is locked in
    /// `locks` meanwhile, as a typed answer locks its own, so two answers never go out at once;
    /// `None` where Slate keeps no store, which refuses the answer.
    Forward {
        entry: RemoteEntry,
        options: LinkOptions,
        locks: Option<PathBuf>,
    },
}

/// Where the attempts are recorded, and the clock they are recorded by.
pub trait Ledger {
    /// The time now.
    fn now(&self) -> Timestamp;
    /// Keeps one attempt of an answer to session `key` (`MACHINE:ID` for a session on another
    /// machine); a record that cannot be kept is said, never fatal.
    fn keep(&self, key: &SessionKey, record: &Record);
}

/// [`answer_in`] the built-in terminals.
pub fn answer(
    route: Route,
    target: &Target,
    request: &RespondRequest,
    ledger: &dyn Ledger,
) -> Result<Responded, RespondError> {
    answer_in(
        slate_terminals::terminals::BUILT_IN,
        route,
        target,
        request,
        ledger,
    )
}

/// Carries out `request` on `target` along `route` (here, its terminal looked for among
/// `terminals`), and records the attempt in `ledger` unless the running Slate it went through
/// records it. Returns what the answer did, or why it was refused or had no effect.
pub fn answer_in(
    terminals: Backends,
    route: Route,
    target: &Target,
    request: &RespondRequest,
    ledger: &dyn Ledger,
) -> Result<Responded, RespondError> {
    // A call the agent's decision hook waits on is answered through it: the hook cannot land
    // on the wrong pane (`answers::hook`).
    if let Route::Here { .. } = route {
        if let Some(result) = super::hook::answer(super::hook::decisions(), target, request) {
            let attempt = Attempt {
                result,
                summary: target.summary.clone(),
            };
            ledger.keep(
                &recorded_key(target),
                &attempt.record(request, ledger.now()),
            );
            return attempt.result;
        }
    }
    let attempt = match route {
        Route::Server(client) => {
            let key = recorded_key(target);
            return client.respond(&key.reference(), request);
        }
        Route::Here { locks: Some(locks) } => {
            respond_in(terminals, target, request, &locks, ledger.now())
        }
        Route::Here { locks: None } => Attempt::refused(no_store(), None),
        Route::Forward {
            entry,
            options,
            locks,
        } => Attempt {
            result: forwarded(
                &entry,
                &options,
                locks.as_deref(),
                target,
                request,
                ledger.now(),
            ),
            // The remote's screen is read there: the record names the dialog as it was shown.
            summary: target.summary.clone(),
        },
    };
    ledger.keep(
        &recorded_key(target),
        &attempt.record(request, ledger.now()),
    );
    attempt.result
}

/// Forwards `request` to `target`'s machine holding the session's answer lock in `locks` (a
/// [`Claim`] on its key with its machine), from before it is sent to the remote's answer: an
/// answer to the same session meanwhile, or to the same dialog within `ANSWERED_HOLDS` of one
/// that went through, is refused here and never sent.
fn forwarded(
    entry: &RemoteEntry,
    options: &LinkOptions,
    locks: Option<&Path>,
    target: &Target,
    request: &RespondRequest,
    now: Timestamp,
) -> Result<Responded, RespondError> {
    let locks = locks.ok_or_else(no_store)?;
    let mut claim = Claim::take(locks, &recorded_key(target))?;
    claim.unanswered(&request.dialog, now)?;
    let result = forward::respond(entry, options, target.key.id.as_str(), request);
    if result.is_ok() {
        claim.answered(&request.dialog, now);
    }
    result
}

/// Records `error`, a refusal of `request` decided before it took a route (the command line's
/// checks of the dialog it showed), and returns it.
pub fn refuse(
    target: &Target,
    request: &RespondRequest,
    error: RespondError,
    ledger: &dyn Ledger,
) -> RespondError {
    let attempt = Attempt::refused(error.clone(), target.summary.clone());
    ledger.keep(
        &recorded_key(target),
        &attempt.record(request, ledger.now()),
    );
    error
}

/// The session an attempt is filed under: its key, with its machine for a session on another
/// one, so it never mixes with a local session of the same id.
fn recorded_key(target: &Target) -> SessionKey {
    target.key.clone().on(target.machine.clone())
}
