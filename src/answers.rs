//! Answering a session's dialog from where the person is (docs/states.md §8): the one path every
//! answer takes, and the machinery that carries one answer out.
//!
//! [`answer`] (in `route`) is what the API and the command line call: it carries the answer out
//! here, through this HOME's running Slate, or forwarded to the machine the session runs on, and
//! records the attempt once. What an answer is on the wire (the request, the outcome, the refusal
//! and its code, the store's record) is the core's `protocol`, re-exported here.
//!
//! [`respond`] finds the session's terminal, re-reads its screen immediately before typing (in the
//! process that types), checks that the dialog on screen now has the fingerprint the person saw
//! (which covers the call the transcript records, `Target::call`) and agrees with that call,
//! works out the fewest keys with the agent's keys (`agents::keys`), sends them once
//! (`terminals::typing`), and then reads the screen again until the dialog has left, for at most
//! [`CONFIRM_WITHIN`]. It never retries: keys that had no effect are reported as such. It refuses
//! a session at no dialog, a dialog that changed, a terminal Slate cannot type into (saying what
//! would make it possible), and an option that widens permissions.
//!
//! [`respond`] does not record the attempt ([`answer`] does, with [`Record`], in the store) and
//! nothing here decides a state: the tracker sees the dialog leave on its next reading like any
//! other.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use slate_core::agents::hooks::decision;
use slate_core::agents::keys::{self, Action};
use slate_core::agents::screens::Screen;
use slate_core::model::{AgentKind, PendingCall, SessionKey, TerminalKind, Timestamp};
use slate_terminals::terminals::proof::{self, Proof};
use slate_terminals::terminals::{self, hosted, Address, Backends};

pub mod hook;
mod route;

pub use route::{answer, answer_in, refuse, Ledger, Route};
pub use slate_core::protocol::{
    check, ErrorBody, ErrorCode, Record, RespondError, RespondRequest, Responded, Surface,
    CONFIRM_WITHIN,
};
pub use slate_core::protocol::{Attempt, Target};

/// How often the screen is read while waiting for the dialog to leave.
const CONFIRM_EVERY: Duration = Duration::from_millis(50);

/// What Slate says of a session under a `slate run` that offers no control socket.
pub const NO_CONTROL_NOTE: &str = "this `slate run` offers no control socket (an older version, \
     or it could not make one in its runtime folder): answer it in its terminal, or start it \
     again under this version's `slate run`";

/// What Slate says of a terminal it cannot type into, and what would make it possible.
pub const PLAIN_NOTE: &str =
    "plain terminal: start it in tmux or under `slate run` to answer from here";

/// [`PLAIN_NOTE`] for a session of `agent`, with what else would make it possible there: for an
/// agent whose hook can decide with its dialog kept usable (Claude Code), installing that decision
/// hook, through which Slate answers in any terminal; for another, that its hook cannot
/// (docs/hooks.md's table).
pub fn plain_note(agent: AgentKind) -> String {
    let product = agent
        .description()
        .map_or(agent.display_name(), |description| description.product);
    match decision::decides(agent.as_str()) {
        Some(_) => format!(
            "{PLAIN_NOTE}, or let Slate answer {product} there through its decision hook: \
             `slate hooks install --answer {}`",
            agent.as_str()
        ),
        None => format!(
            "{PLAIN_NOTE} ({product}'s hook cannot decide with its dialog kept usable, \
             docs/hooks.md)"
        ),
    }
}

/// Where an answer types, and what must still hold just before the keys go in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    pub address: Address,
    /// The agent's process.
    pub pid: u32,
    /// How the pane was proved to be the process's (`terminals::proof`); `None` for a hosted
    /// terminal, which `slate run` owns.
    pub proof: Option<Proof>,
}

/// [`terminal_of_in`] the built-in terminals.
pub fn terminal_of(target: &Target) -> Result<Destination, RespondError> {
    terminal_of_in(terminals::BUILT_IN, target)
}

/// Where Slate can type into `target`'s terminal among `backends`, or why it cannot: the pane
/// proved by the process's terminal device, found now. A session on another machine is not typed
/// into from here: its answer is forwarded (`remote::forward`).
pub fn terminal_of_in(backends: Backends, target: &Target) -> Result<Destination, RespondError> {
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
            Some(socket) => Ok(Destination {
                address: hosted::address(socket.clone()),
                pid,
                proof: None,
            }),
            None => Err(RespondError::new(ErrorCode::CannotType, NO_CONTROL_NOTE)),
        };
    }
    let located = backends
        .locate(&[pid])
        .into_iter()
        .find_map(|(found, located)| (found == pid).then_some(located));
    let Some(located) = located else {
        return Err(RespondError::new(
            ErrorCode::NotAtDialog,
            format!("process {pid} is gone"),
        ));
    };
    let view = &located.view;
    // What the terminal's backend can do decides, never its name: one that cannot answer in its
    // panes is not typed into, however well its pane is proved.
    let refused = |view: &slate_core::model::TerminalView| {
        view.note
            .clone()
            .unwrap_or_else(|| slate_core::model::READ_ONLY.to_string())
    };
    match (&located.address, located.proof) {
        (Some(address), Some(_)) if !address.view().can.answer => Err(RespondError::new(
            ErrorCode::CannotType,
            refused(&address.view()),
        )),
        (Some(address), Some(proof)) => Ok(Destination {
            address: address.clone(),
            pid,
            proof: Some(proof),
        }),
        _ => {
            let message = match view.kind {
                TerminalKind::Plain => plain_note(target.key.agent),
                // Read, but its backend cannot type into it: in its own words.
                _ if view.can.read && !view.can.answer => refused(view),
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

/// Checks, just before typing, that the keys would reach the agent: its process is alive, not
/// stopped, and its group has the foreground of the terminal proved to be its pane (and so has a
/// relay's between them), and its backend finds nothing between the pane and that terminal (a
/// tmux pane is in no mode, copy mode or a chooser, and still has that terminal). Says why not,
/// and then nothing is typed.
pub fn ready_to_type(destination: &Destination) -> Result<(), RespondError> {
    let cannot =
        |why: String| RespondError::new(ErrorCode::CannotType, format!("{why}; nothing was typed"));
    let pid = destination.pid;
    let Some(stat) = proof::Stat::of(pid) else {
        return Err(RespondError::new(
            ErrorCode::NotAtDialog,
            format!("the agent (process {pid}) has exited; nothing was typed"),
        ));
    };
    // A hosted terminal is `slate run`'s own: the agent's terminal is the one it reads.
    let tty = destination.proof.as_ref().map_or(stat.tty, Proof::tty);
    stat.ready(tty)
        .map_err(|why| cannot(why.sentence("the agent", pid)))?;
    let mut pane_tty = tty;
    if let Some(Proof::Relay {
        relay,
        program,
        relay_tty,
        ..
    }) = &destination.proof
    {
        let relay_stat = proof::Stat::of(*relay).ok_or_else(|| {
            cannot(format!(
                "its relay `{program}` (process {relay}) has exited"
            ))
        })?;
        relay_stat
            .ready(*relay_tty)
            .map_err(|why| cannot(why.sentence(&format!("its relay `{program}`"), *relay)))?;
        pane_tty = *relay_tty;
    }
    let address = &destination.address;
    address.backend.check(address, pane_tty).map_err(cannot)
}

/// How long a dialog that was answered stays answered: a second answer to the same fingerprint of
/// the same session within this time is refused (a double click, two commands at once, a stale
/// notification), even when the agent draws the same dialog again.
pub const ANSWERED_HOLDS: Duration = Duration::from_secs(30);

/// The most of a lock file that is read.
const CLAIM_MOST: u64 = 256;

/// One answer's hold on its session: a lock file in the runtime folder (`answers/`), locked
/// from the re-read of the screen to the confirmation, so no other process or surface answers the
/// same session meanwhile; it keeps the fingerprint last answered and when.
pub struct Claim {
    file: std::fs::File,
    path: PathBuf,
}

impl Claim {
    /// Takes session `key`'s lock in `folder` at once, or says that another answer holds it.
    pub fn take(folder: &Path, key: &SessionKey) -> Result<Claim, RespondError> {
        let internal = |why: String| RespondError::new(ErrorCode::Internal, why);
        crate::places::private_folder(folder)
            .map_err(|why| internal(format!("cannot make the answers' lock folder: {why}")))?;
        let name: String = Sha256::digest(key.reference().as_bytes())[..12]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        let path = folder.join(format!("{name}.lock"));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|why| internal(format!("cannot open {}: {why}", path.display())))?;
        match file.try_lock() {
            Ok(()) => Ok(Claim { file, path }),
            Err(std::fs::TryLockError::WouldBlock) => Err(RespondError::new(
                ErrorCode::AlreadyAnswered,
                format!(
                    "another answer to session {} is being carried out; nothing was typed",
                    key.reference()
                ),
            )),
            Err(std::fs::TryLockError::Error(why)) => {
                Err(internal(format!("cannot lock {}: {why}", path.display())))
            }
        }
    }

    /// The fingerprint last answered through this lock, and when.
    fn last(&mut self) -> Option<(String, Timestamp)> {
        use std::io::{Read, Seek};
        let mut text = String::new();
        self.file.rewind().ok()?;
        (&self.file)
            .take(CLAIM_MOST)
            .read_to_string(&mut text)
            .ok()?;
        let (print, at) = text.trim().split_once(' ')?;
        Some((print.to_string(), Timestamp::from_millis(at.parse().ok()?)))
    }

    /// Refuses `print` when it was answered less than [`ANSWERED_HOLDS`] before `now`.
    fn unanswered(&mut self, print: &str, now: Timestamp) -> Result<(), RespondError> {
        match self.last() {
            Some((last, at))
                if last == print
                    && now.millis().saturating_sub(at.millis())
                        < ANSWERED_HOLDS.as_millis() as i64 =>
            {
                Err(RespondError::new(
                    ErrorCode::AlreadyAnswered,
                    format!(
                        "this dialog (fingerprint {print}) was answered {} s ago; slate answers a \
                         dialog once, so nothing was typed: if the agent asks the same again, \
                         answer it in its terminal or after {} s",
                        now.millis().saturating_sub(at.millis()) / 1000,
                        ANSWERED_HOLDS.as_secs()
                    ),
                ))
            }
            _ => Ok(()),
        }
    }

    /// Notes that keys were sent for `print` at `at`.
    fn answered(&mut self, print: &str, at: Timestamp) {
        use std::io::{Seek, Write};
        let written = self
            .file
            .set_len(0)
            .and_then(|()| self.file.rewind())
            .and_then(|()| writeln!(self.file, "{print} {}", at.millis()));
        if let Err(why) = written {
            tracing::warn!("cannot note the answer in {}: {why}", self.path.display());
        }
    }
}

/// The folder of the answers' locks: `answers/` beside Slate's store (`places::Places::store_file`),
/// which every Slate of this HOME (the server, the command line, the app) finds the same way. A
/// store that is not a file (`:memory:`) has none.
pub fn lock_folder(store_file: &Path) -> Option<PathBuf> {
    let folder = store_file.parent()?;
    folder.is_absolute().then(|| folder.join("answers"))
}

/// Why an answer is refused where Slate keeps no store: its lock and its record live there.
pub fn no_store() -> RespondError {
    RespondError::new(
        ErrorCode::Internal,
        "this Slate runs without a store, where answers are locked and recorded, so nothing was \
         typed",
    )
}

/// [`respond_in`] the built-in terminals.
pub fn respond(target: &Target, request: &RespondRequest, locks: &Path, now: Timestamp) -> Attempt {
    respond_in(terminals::BUILT_IN, target, request, locks, now)
}

/// Carries out one answer on `target`, whose terminal is looked for among `backends`: takes the
/// session's answer lock in `locks`, re-reads its screen, checks the fingerprint, checks that the
/// keys would reach the agent, types the fewest keys once, and waits up to [`CONFIRM_WITHIN`] for
/// the agent to draw its own next screen.
pub fn respond_in(
    backends: Backends,
    target: &Target,
    request: &RespondRequest,
    locks: &Path,
    now: Timestamp,
) -> Attempt {
    if let Err(error) = check(request) {
        return Attempt::refused(error, None);
    }
    match terminal_of_in(backends, target) {
        Ok(destination) => respond_to(
            &destination,
            &target.key,
            target.call.as_ref(),
            request,
            locks,
            now,
        ),
        Err(error) => Attempt::refused(error, None),
    }
}

/// [`respond`] at a destination already found: takes session `key`'s answer lock in `locks` and
/// holds it from the re-read to the confirmation. `call` is the call the dialog is about, where
/// the transcript records one.
pub fn respond_to(
    destination: &Destination,
    key: &SessionKey,
    call: Option<&PendingCall>,
    request: &RespondRequest,
    locks: &Path,
    now: Timestamp,
) -> Attempt {
    if let Err(error) = check(request) {
        return Attempt::refused(error, None);
    }
    let mut claim = match Claim::take(locks, key) {
        Ok(claim) => claim,
        Err(error) => return Attempt::refused(error, None),
    };
    respond_at(destination, key.agent, call, request, &mut claim, now)
}

/// What the agent's screen shows after the keys, for the confirmation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum After {
    /// The dialog answered is still there (or the read failed, which says nothing).
    Still,
    /// The agent drew a screen of its own without a dialog: it works, or waits for a prompt.
    Moved,
    /// Another dialog is on screen in its place.
    Other,
    /// Nothing the agent's grammar knows: another program's output, an echo of the keys.
    Foreign,
}

/// [`respond_to`] with the session's lock held.
fn respond_at(
    destination: &Destination,
    agent: slate_core::model::AgentKind,
    call: Option<&PendingCall>,
    request: &RespondRequest,
    claim: &mut Claim,
    now: Timestamp,
) -> Attempt {
    let address = &destination.address;
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
    // A question or a plan is about its call by id only, as the session's dialog carries it.
    let call = call.cloned().map(|call| call.about(dialog.kind));
    let call = call.as_ref();
    let shown = keys::fingerprint(agent, &dialog, call);
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
    // What the screen asks must be the call the transcript records: otherwise what the person
    // approves is not what runs.
    if let Some(why) = keys::disagreement(agent, &dialog, call) {
        return Attempt::refused(
            RespondError::new(
                ErrorCode::CannotType,
                format!("slate types nothing here: {why}"),
            ),
            summary,
        );
    }
    if let Err(error) = claim.unanswered(&shown, now) {
        return Attempt::refused(error, summary);
    }
    let plan = match keys::plan(agent, &dialog, &request.choice()) {
        Ok(plan) => plan,
        Err(refusal) => return Attempt::refused(refusal.into(), summary),
    };
    let option = plan
        .option
        .and_then(|index| dialog.options.get(index))
        .and_then(|option| option.number);
    if let Err(error) = ready_to_type(destination) {
        return Attempt::refused(error, summary);
    }
    let sent_at = Instant::now();
    // From here on the dialog counts as answered, whatever the keys do: they are never sent again.
    claim.answered(&shown, now);
    if let Err(why) = terminals::typing::send(address, &plan.keys) {
        return Attempt::refused(RespondError::new(ErrorCode::CannotType, why), summary);
    }
    // The keys went in once; from here on only the screen is read.
    let deadline = sent_at + CONFIRM_WITHIN;
    let mut other: Option<String> = None;
    loop {
        let after = match terminals::screen_now(address, agent) {
            Ok(Screen::Dialog(now)) if keys::fingerprint(agent, &now, call) == shown => {
                After::Still
            }
            Ok(Screen::Dialog(now)) => {
                other = Some(now.summary);
                After::Other
            }
            Ok(Screen::Working | Screen::Idle) => After::Moved,
            Ok(Screen::Unknown) => After::Foreign,
            // A read that fails says nothing either way: the next one may.
            Err(_) => After::Still,
        };
        let elapsed = sent_at.elapsed();
        match after {
            After::Moved => {
                return Attempt {
                    result: Ok(Responded {
                        outcome: "answered".to_string(),
                        action: request.action,
                        option,
                        left_after_ms: elapsed.as_millis() as u64,
                    }),
                    summary,
                }
            }
            After::Other => {
                return Attempt::refused(
                    RespondError::new(
                        ErrorCode::DialogChanged,
                        format!(
                            "the keys were sent once, and another dialog is on screen now ({:?}): \
                             slate cannot tell whether the answer reached the agent; look at the \
                             terminal",
                            other.unwrap_or_default()
                        ),
                    ),
                    summary,
                )
            }
            After::Still | After::Foreign => {}
        }
        if Instant::now() >= deadline {
            let what = match after {
                After::Foreign => "the screen shows something the agent does not draw",
                _ => "the dialog is still on screen",
            };
            return Attempt::refused(
                RespondError::new(
                    ErrorCode::NoEffect,
                    format!(
                        "the keys were sent once and {what} after {} s; slate does not send them \
                         again: look at the terminal",
                        CONFIRM_WITHIN.as_secs()
                    ),
                ),
                summary,
            );
        }
        std::thread::sleep(CONFIRM_EVERY);
    }
}
