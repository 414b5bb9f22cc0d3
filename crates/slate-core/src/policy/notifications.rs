//! Deciding which notifications to show when sessions change.
//!
//! docs/states.md §6: exactly one notification per Working → Needs you change of a session, none
//! at start-up for sessions that were already waiting, none while paused, and a burst of changes
//! within two seconds becomes one summary. [`decide`] is the whole policy as a pure function over
//! [`Notifier`] state: it gets the time as an argument and, instead of running a timer, returns
//! the deadline at which it wants to be asked again ([`Input::Tick`]). That keeps the debounce
//! testable with a fake clock.
//!
//! It shows nothing itself (the desktop shell turns each [`NotificationPlan`] into a native
//! notification), decides no state (the tracker does) and focuses nothing (a click is handed back
//! as a [`Click`]). A notification for one session at a permission dialog its dialog says Slate
//! can answer, on this machine or another, also carries an [`Offer`]: the shell adds "Allow
//! once", "Deny" and "Open" where the notification server shows actions, and answers with the
//! fingerprint the offer names, for the session its key names (machine and all, so an answer to
//! another machine's dialog is forwarded there). A notification shows the dialog's one-line
//! summary only, so where the command has more lines, was cut short, or is longer than
//! [`NOTIFIED_CHARS`], the offer leaves "Allow once" out (`policy::shows_whole`).
//!
//! What the notification server reports back (an action's id on a notification's number) is
//! untrusted text: [`Choice::of`] reads only the action ids the shell registers ([`ALLOW`],
//! [`DENY`], [`OPEN`], and [`TAP`] for a click on the notification itself), and answers only what
//! the notification offered.
//!
//! A person can keep only some reasons (`[notifications] reasons`, [`NotifyReason`]): a session
//! that turns Needs you for a reason not kept is told nothing, and is told when it comes to a
//! kept reason while still Needs you. The count and the window are not the notifier's, and do
//! not change.
//!
//! A body holds text from outside (a session's title, a command on its screen). A notification
//! server that advertises `body-markup` reads `<b>`, `<a href>`, `<img>` and `&` entities in a
//! body, so the shell passes the body through [`escape_markup`] for such a server.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use crate::agents::keys::Action;
use crate::agents::screens::DialogKind;
pub use crate::config::NotifyReason;
use crate::limits::spaced;
use crate::model::{AgentKind, Machine, Session, SessionKey, Status, Timestamp};
use crate::tracker::notifications_muted;

/// The most characters of a dialog's summary a notification is trusted to show whole: past them
/// it offers no "Allow once".
pub const NOTIFIED_CHARS: usize = 80;

/// Changes closer together than this are told in one summary notification.
pub const BURST: Duration = Duration::from_secs(2);

/// The action ids of a permission notification, as the shell registers them and the notification
/// server reports them back: "Allow once", "Deny" and "Open".
pub const ALLOW: &str = "allow";
pub const DENY: &str = "deny";
pub const OPEN: &str = "open";
/// "Mute", on a notification about one session of this machine: no more notifications for it.
pub const MUTE: &str = "mute";
/// What the shell's notification plugin reports for a click on the notification itself (the
/// server's `default` action).
pub const TAP: &str = "tap";

/// What a click on a notification should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Click {
    /// Focus this session's terminal.
    Focus(SessionKey),
    /// Show Slate's window (a summary names several sessions, so no single terminal is right).
    OpenWindow,
}

/// One notification to show.
#[derive(Debug, Clone, PartialEq)]
pub struct NotificationPlan {
    pub title: String,
    pub body: String,
    pub click: Click,
    /// The permission dialog it may be answered from, when there is one.
    pub offer: Option<Offer>,
    /// The sessions it tells of, as they stood when it was decided: what a push elsewhere
    /// (`push` in the `slate` crate) builds its own message from.
    pub sessions: Vec<Session>,
}

/// A permission dialog that its session's dialog says Slate can answer (`answerable`: on this
/// machine, Slate can type into its terminal; on another, that machine's Slate can and its link is
/// up), with a deny option: what a notification's "Deny" and, when [`Offer::allow`], "Allow once"
/// answer, and the fingerprint of the dialog the notification was made for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// The session, with its machine when it runs on another one.
    pub key: SessionKey,
    pub fingerprint: String,
    /// How the notification names the session ("acme-api · Claude Code"), to tell the outcome.
    pub label: String,
    /// Whether "Allow once" is offered: only when the notification shows the whole command
    /// (`policy::shows_whole`). "Deny" and "Open" are offered either way.
    pub allow: bool,
}

impl Offer {
    /// The offer a session's dialog makes, if any.
    pub fn of(session: &Session) -> Option<Offer> {
        let dialog = session.dialog.as_ref()?;
        let offers = |action: Action| {
            dialog
                .options
                .iter()
                .any(|option| option.action == Some(action))
        };
        let answerable =
            dialog.kind == DialogKind::Permission && dialog.answerable && offers(Action::Deny);
        answerable.then(|| Offer {
            key: session.key(),
            fingerprint: dialog.fingerprint.clone(),
            label: label(session),
            allow: offers(Action::Approve) && super::shows_whole(dialog, NOTIFIED_CHARS),
        })
    }
}

/// What to do with an action the notification server reported on one of Slate's notifications.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// Answer the offer's dialog: approve ("Allow once") or deny.
    Answer { offer: Offer, action: Action },
    /// Do what a click on the notification does.
    Click(Click),
    /// Mute the session the notification is about (one of this machine).
    Mute(SessionKey),
    /// Nothing: an action this notification did not offer, or an id Slate never registered.
    Nothing,
}

impl Choice {
    /// What `action_id`, reported on a notification that Slate made with `click` and `offer`
    /// (`None` when the notification's number is not one Slate knows), asks for. Only the ids
    /// the shell registers are read, exactly as written: "Allow once" answers only where the
    /// notification offered it (it showed the whole command), "Deny" only where it offered an
    /// answer at all; a click on the notification and "Open" do what a click does; "Mute" mutes
    /// the one session of this machine the notification is about. Anything else, however long
    /// or odd, does nothing.
    pub fn of(action_id: &str, click: Option<&Click>, offer: Option<&Offer>) -> Choice {
        let answer = |offer: &Offer, action: Action| Choice::Answer {
            offer: offer.clone(),
            action,
        };
        match (action_id, offer) {
            (ALLOW, Some(offer)) if offer.allow => answer(offer, Action::Approve),
            (DENY, Some(offer)) => answer(offer, Action::Deny),
            (TAP | OPEN, _) => click.cloned().map_or(Choice::Nothing, Choice::Click),
            (MUTE, _) => match click {
                Some(Click::Focus(key)) if key.machine.is_none() => Choice::Mute(key.clone()),
                _ => Choice::Nothing,
            },
            _ => Choice::Nothing,
        }
    }
}

/// What can wake the notifier.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// A session on the live list appeared or changed (the live service's `Update::Session`).
    Changed(&'a Session),
    /// A session left the live list (`Update::Removed`); `machine` is the remote machine it was
    /// on, `None` for this one.
    Removed {
        agent: AgentKind,
        id: &'a str,
        machine: Option<&'a Machine>,
    },
    /// The deadline [`decide`] returned has passed.
    Tick,
}

/// The notifier's memory: each live session's last status, the changes waiting for the burst
/// window to close, and the reasons it tells.
#[derive(Debug)]
pub struct Notifier {
    statuses: HashMap<SessionKey, Status>,
    /// Sessions that turned Working → Needs you in the current window, in arrival order.
    pending: BTreeMap<u64, Session>,
    arrivals: u64,
    window_closes: Option<Timestamp>,
    /// The reasons told; every one unless [`Notifier::keep`] says otherwise.
    kept: Vec<NotifyReason>,
    /// Sessions that turned Needs you for a reason not kept, and have been Needs you since.
    held: HashSet<SessionKey>,
}

impl Default for Notifier {
    fn default() -> Notifier {
        Notifier {
            statuses: HashMap::new(),
            pending: BTreeMap::new(),
            arrivals: 0,
            window_closes: None,
            kept: NotifyReason::ALL.to_vec(),
            held: HashSet::new(),
        }
    }
}

impl Notifier {
    /// Seeds the statuses from the first snapshot. Nothing is planned for it: a session that was
    /// already waiting when Slate started is not news.
    pub fn seed(sessions: &[Session]) -> Notifier {
        Notifier {
            statuses: sessions
                .iter()
                .map(|session| (session.key(), session.status))
                .collect(),
            ..Notifier::default()
        }
    }

    /// Tells only `reasons` from now on (`[notifications] reasons`); a change already waiting for
    /// its window is told as it will be when the window closes.
    pub fn keep(&mut self, reasons: &[NotifyReason]) {
        if self.kept != reasons {
            self.kept = reasons.to_vec();
        }
    }

    /// Whether a session Needs you for a reason this notifier tells.
    fn tells(&self, session: &Session) -> bool {
        NotifyReason::of(session.session_state.reason.code)
            .is_none_or(|reason| self.kept.contains(&reason))
    }
}

/// What [`decide`] returns: the notifications to show now, and when to call again with
/// [`Input::Tick`] (`None` when nothing is pending).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Decision {
    pub plans: Vec<NotificationPlan>,
    pub next_deadline: Option<Timestamp>,
}

/// Applies one input at time `now`. `paused` is whether the user paused notifications; a change
/// that arrives while paused is remembered as a status but never shown, then or later.
pub fn decide(notifier: &mut Notifier, input: Input<'_>, now: Timestamp, paused: bool) -> Decision {
    match input {
        Input::Changed(session) => {
            let key = session.key();
            let previous = notifier.statuses.insert(key.clone(), session.status);
            let queued = notifier
                .pending
                .iter()
                .find(|(_, pending)| pending.key() == key)
                .map(|(arrival, _)| *arrival);
            let waiting = session.status == Status::Waiting;
            let tells = notifier.tells(session);
            match queued {
                // Still waiting: tell the latest reason when the window closes.
                Some(arrival) if waiting && tells => {
                    notifier.pending.insert(arrival, session.clone());
                }
                // Still waiting, now for a reason not told: held until it comes to one that is.
                Some(arrival) if waiting => {
                    notifier.pending.remove(&arrival);
                    notifier.held.insert(key.clone());
                }
                // A session that stopped waiting before the window closed needs no telling.
                Some(arrival) => {
                    notifier.pending.remove(&arrival);
                }
                None => {}
            }
            let flipped = previous == Some(Status::Working) && waiting;
            // Needs you all along, for a reason not told, and now for one that is.
            let released = !flipped && waiting && tells && notifier.held.remove(&key);
            if !waiting || (flipped && tells) {
                notifier.held.remove(&key);
            } else if flipped {
                notifier.held.insert(key.clone());
            }
            // A parked session fires nothing, and one awaiting another actor stays quiet until that
            // actor acts (docs/states.md §4 intent); the tracker's own rule says which. A session
            // the person muted, or whose agent they muted, fires nothing either.
            let muted = session.muted || notifications_muted(&session.session_state);
            let told = (flipped && tells) || released;
            if told && !paused && !muted && queued.is_none() {
                notifier.arrivals += 1;
                notifier.pending.insert(notifier.arrivals, session.clone());
                notifier.window_closes.get_or_insert(now.plus(BURST));
            }
        }
        Input::Removed { agent, id, machine } => {
            let key = SessionKey::new(agent, id).on(machine.cloned());
            notifier.statuses.remove(&key);
            notifier.pending.retain(|_, pending| pending.key() != key);
            notifier.held.remove(&key);
        }
        Input::Tick => {}
    }
    if notifier.pending.is_empty() {
        notifier.window_closes = None;
    }
    let mut plans = Vec::new();
    if notifier.window_closes.is_some_and(|closes| closes <= now) {
        notifier.window_closes = None;
        let sessions: Vec<Session> = std::mem::take(&mut notifier.pending)
            .into_values()
            .collect();
        if !paused {
            plans.extend(plan(&sessions));
        }
    }
    Decision {
        plans,
        next_deadline: notifier.window_closes,
    }
}

/// One notification for one session, a summary for several.
fn plan(sessions: &[Session]) -> Option<NotificationPlan> {
    match sessions {
        [] => None,
        [session] => Some(NotificationPlan {
            title: format!("{} needs you", label(session)),
            body: body(session),
            click: Click::Focus(session.key()),
            offer: Offer::of(session),
            sessions: vec![session.clone()],
        }),
        several => Some(NotificationPlan {
            title: format!("{} sessions need you", several.len()),
            body: several
                .iter()
                .map(|session| {
                    format!(
                        "{} — {}",
                        label(session),
                        spaced(&session.session_state.reason.text)
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"),
            click: Click::OpenWindow,
            offer: None,
            sessions: several.to_vec(),
        }),
    }
}

/// "acme-api · Claude Code": the project and the agent, as the tray menu also names a session.
/// The project (a folder's name) and the machine come from outside, so the label's control and
/// invisible characters are spaces ([`spaced`]): no bidi override reorders a title and no tag
/// character hides text, in the notification, the menu or the push that names the session so.
/// A session started with `slate run` is "acme-api · Codex (hosted)", the way `slate sessions`
/// marks it, so the notification, the menu and the command line name it alike. A session on a
/// remote machine names the machine first: "box · api-server · Codex".
pub fn label(session: &Session) -> String {
    let project = session
        .project
        .as_deref()
        .or(session.folder.as_deref())
        .unwrap_or("unknown project");
    let hosted = if session.hosted { " (hosted)" } else { "" };
    let machine = match &session.machine {
        Some(machine) => format!("{machine} · "),
        None => String::new(),
    };
    spaced(&format!(
        "{machine}{project} · {}{hosted}",
        session.agent.display_name()
    ))
}

/// The reason, the dialog's summary when the reason does not hold it, then the session's title
/// (or its last prompt when it has no title), one a line, each with its control and invisible
/// characters made spaces ([`spaced`]): the lines are Slate's, what is in them is not.
fn body(session: &Session) -> String {
    let reason = &session.session_state.reason.text;
    let mut body = spaced(reason);
    if let Some(dialog) = &session.dialog {
        if !reason.contains(&dialog.summary) {
            body = format!("{body}\n{}", spaced(&dialog.summary));
        }
    }
    match session
        .title
        .as_deref()
        .or(session.last_prompt.as_deref())
        .filter(|title| !title.is_empty())
    {
        Some(title) => format!("{body}\n{}", spaced(title)),
        None => body,
    }
}

/// `body` as text a notification server that reads markup (`body-markup` in its capabilities,
/// the Desktop Notifications Specification) shows as written: `&`, `<`, `>`, `"` and `'` become
/// entities, so no tag (`<a href=…>`, `<img src=…>`, an unterminated `<b`) and no entity of the
/// text's own takes effect. A server without that capability shows entities literally, so the
/// shell escapes only for one that has it.
pub fn escape_markup(body: &str) -> String {
    let mut escaped = String::with_capacity(body.len());
    for c in body.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            c => escaped.push(c),
        }
    }
    escaped
}
