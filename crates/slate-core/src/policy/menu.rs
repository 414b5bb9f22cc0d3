//! The tray menu as plain data, and the tray's tooltip.
//!
//! [`menu_model`] describes the whole menu: the sessions that need you (a click focuses one,
//! a remote one by attaching to it; one at a dialog, on this machine or another, gets a submenu
//! with the options Slate may answer as its dialog says, and Open), a note naming each remote
//! machine Slate cannot reach, Open Slate, Pause notifications, Start at login and Quit, and a
//! note when the config file does not read. The desktop shell builds its native menu from these
//! entries and decides what a click does; this module only describes.
//!
//! Every entry that acts has a menu id ([`MenuAction::id`]) that names the session whole: its
//! machine (for a session on another machine), its agent and its id, so an answer chosen in the
//! menu goes to that machine's session (the shell answers through the API, which forwards it
//! over the machine's link). An id comes back from the tray host as untrusted text:
//! [`MenuAction::parse`] reads only an id this module would make, field by field, and refuses
//! anything else.

use crate::agents::keys::Action;
use crate::agents::screens::DialogKind;
use crate::config::Notifications;
use crate::model::{
    AgentKind, IntentState, Machine, Session, SessionDialog, SessionKey, Timestamp,
};
use crate::policy::{needs_you, notifications};
use crate::remote::{Report, Status};

/// A menu entry's reason text is cut here, so one chatty session cannot widen the whole menu.
const MAX_REASON: usize = 60;

/// The config error's note in the menu is cut here; the window shows it whole.
const MAX_NOTE: usize = 100;

/// The longest menu id [`MenuAction::parse`] reads. The longest one this module makes, an answer
/// to a dialog on another machine, is under 240 bytes: `answer@`, a machine name
/// ([`Machine::MAX`]), the action, an option number, the fingerprint, an agent, and a session
/// id (`limits::ID_MAX`) with its length.
pub const MENU_ID_MAX: usize = 256;

/// Whether notifications are paused, as the menu shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pause {
    Off,
    Until(Timestamp),
    UntilResumed,
}

impl Pause {
    /// The pause the config's `[notifications]` asks for: none, until a time, or (with
    /// `enabled = false`) until resumed.
    pub fn from_config(notifications: &Notifications) -> Pause {
        if !notifications.enabled {
            return Pause::UntilResumed;
        }
        match notifications.paused_until {
            Some(until) => Pause::Until(until),
            None => Pause::Off,
        }
    }

    /// The pause in force at `now`: the one `kept` from the person's last choice while it
    /// holds, else the one the config's `[notifications]` asks for.
    pub fn in_force(kept: Option<Pause>, notifications: &Notifications, now: Timestamp) -> Pause {
        match kept {
            Some(pause) if pause.is_paused(now) => pause,
            _ => Pause::from_config(notifications),
        }
    }

    pub fn is_paused(self, now: Timestamp) -> bool {
        match self {
            Pause::Off => false,
            Pause::Until(until) => now < until,
            Pause::UntilResumed => true,
        }
    }
}

/// An answer the menu offers to a session's dialog: the session, what to do, the option's number
/// (only for `answer`), and the fingerprint of the dialog the menu was drawn from, which the answer
/// must carry so it never lands on another dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenuAnswer {
    pub key: SessionKey,
    pub action: Action,
    pub option: Option<u32>,
    pub fingerprint: String,
}

/// What a menu entry does when clicked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MenuAction {
    Focus(SessionKey),
    Answer(MenuAnswer),
    /// Mutes the session on this machine, or unmutes it when it is muted.
    ToggleMute(SessionKey),
    OpenWindow,
    PauseForAnHour,
    PauseUntilResumed,
    Resume,
    ToggleAutostart,
    Quit,
}

impl MenuAction {
    /// The menu id that stands for this action. A session is named by its agent, the length of
    /// its id in bytes, and its id (`focus:codex:4:s1-x`), so an id cut short anywhere reads as
    /// no session rather than as another one; one on another machine also by its machine, after
    /// an `@` (`focus@box:codex:4:s1-x`). An answer names what it does, the option's number
    /// (only for `answer`) and the dialog's fingerprint before the session:
    /// `answer@box:deny::9f86d081884c7d65:codex:4:s1-x`.
    pub fn id(&self) -> String {
        match self {
            MenuAction::Focus(key) => format!("focus{}:{}", at_machine(key), session_text(key)),
            MenuAction::Answer(answer) => format!(
                "answer{}:{}:{}:{}:{}",
                at_machine(&answer.key),
                answer.action.as_str(),
                answer.option.map(|n| n.to_string()).unwrap_or_default(),
                answer.fingerprint,
                session_text(&answer.key)
            ),
            MenuAction::ToggleMute(key) => format!("mute:{}", session_text(key)),
            MenuAction::OpenWindow => "open".to_string(),
            MenuAction::PauseForAnHour => "pause-hour".to_string(),
            MenuAction::PauseUntilResumed => "pause-resumed".to_string(),
            MenuAction::Resume => "resume".to_string(),
            MenuAction::ToggleAutostart => "autostart".to_string(),
            MenuAction::Quit => "quit".to_string(),
        }
    }

    /// Reads a menu id back; `None` for any id this module would not make. The id comes back
    /// from the tray host, so it is read as untrusted text: at most [`MENU_ID_MAX`] bytes; a
    /// machine name as [`Machine::new`] takes it; a built-in agent for a session on this machine
    /// (one on another machine may run an agent only that machine knows,
    /// `AgentKind::from_wire`); a session id as `limits::session_id` takes one from another
    /// machine, exactly as long as the id says; an option number only with `answer`, and always
    /// with it; a fingerprint of 16 lowercase hex digits. Last, the id made of what was read must
    /// be the id given, so no second spelling (`01` for `1`, a `+`, a trailing space) reads.
    pub fn parse(id: &str) -> Option<MenuAction> {
        if id.len() > MENU_ID_MAX {
            return None;
        }
        let action = MenuAction::read(id)?;
        (action.id() == id).then_some(action)
    }

    /// The fields of `id`, each checked; [`MenuAction::parse`] also checks the whole.
    fn read(id: &str) -> Option<MenuAction> {
        if let Some(rest) = id.strip_prefix("focus") {
            let (machine, rest) = machine_of(rest)?;
            return Some(MenuAction::Focus(session_key(machine, rest)?));
        }
        if let Some(rest) = id.strip_prefix("mute:") {
            // Only a session on this machine: a remote one is muted in its own machine's store.
            return Some(MenuAction::ToggleMute(session_key(None, rest)?));
        }
        if let Some(rest) = id.strip_prefix("answer") {
            let (machine, rest) = machine_of(rest)?;
            let mut parts = rest.splitn(4, ':');
            let action = parts.next()?.parse::<Action>().ok()?;
            let option = match (action, parts.next()?) {
                (Action::Answer, number) if is_digits(number, 10) => Some(number.parse().ok()?),
                (Action::Approve | Action::Deny, "") => None,
                _ => return None,
            };
            let fingerprint = parts.next()?;
            let hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
            if fingerprint.len() != 16 || !fingerprint.bytes().all(hex) {
                return None;
            }
            return Some(MenuAction::Answer(MenuAnswer {
                key: session_key(machine, parts.next()?)?,
                action,
                option,
                fingerprint: fingerprint.to_string(),
            }));
        }
        Some(match id {
            "open" => MenuAction::OpenWindow,
            "pause-hour" => MenuAction::PauseForAnHour,
            "pause-resumed" => MenuAction::PauseUntilResumed,
            "resume" => MenuAction::Resume,
            "autostart" => MenuAction::ToggleAutostart,
            "quit" => MenuAction::Quit,
            _ => return None,
        })
    }
}

/// `@box` for a session on the machine `box`; nothing for one on this machine.
fn at_machine(key: &SessionKey) -> String {
    match &key.machine {
        Some(machine) => format!("@{machine}"),
        None => String::new(),
    }
}

/// `AGENT:LENGTH:ID`: the session as a menu id names it.
fn session_text(key: &SessionKey) -> String {
    format!(
        "{}:{}:{}",
        key.agent.as_str(),
        key.id.as_str().len(),
        key.id
    )
}

/// After `focus` or `answer`: `@MACHINE:rest` (a session on that machine) or `:rest` (one on
/// this machine).
fn machine_of(text: &str) -> Option<(Option<Machine>, &str)> {
    if let Some(rest) = text.strip_prefix(':') {
        return Some((None, rest));
    }
    let (machine, rest) = text.strip_prefix('@')?.split_once(':')?;
    Some((Some(Machine::new(machine).ok()?), rest))
}

/// `AGENT:LENGTH:ID` ([`session_text`]) as the key of a session on `machine`: a built-in agent
/// here, any plausible one there, and an id of that length that `limits::session_id` takes.
fn session_key(machine: Option<Machine>, text: &str) -> Option<SessionKey> {
    let (agent, rest) = text.split_once(':')?;
    let (length, id) = rest.split_once(':')?;
    if !is_digits(length, 3) || length.parse::<usize>().ok()? != id.len() {
        return None;
    }
    crate::limits::session_id(id).ok()?;
    let agent = match machine {
        Some(_) => AgentKind::from_wire(agent).ok()?,
        None => AgentKind::parse(agent)?,
    };
    Some(SessionKey::new(agent, id).on(machine))
}

/// Whether `text` is 1 to `most` ASCII digits.
fn is_digits(text: &str, most: usize) -> bool {
    (1..=most).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit())
}

/// One menu entry as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Item {
        action: MenuAction,
        label: String,
    },
    /// A greyed-out line of text.
    Note(String),
    Check {
        action: MenuAction,
        label: String,
        checked: bool,
    },
    Submenu {
        label: String,
        entries: Vec<Entry>,
    },
    Separator,
}

/// What the menu shows besides the sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MenuState<'a> {
    pub pause: Pause,
    pub autostart: bool,
    /// Why the config file is not in force, when it does not read.
    pub config_error: Option<&'a str>,
    /// The remote machines' links, to name those that cannot be reached.
    pub remotes: &'a [Report],
}

/// Describes the whole menu from the live list: a config error first when there is one, the
/// sessions that need you (or a note that none do), a note for each remote machine that cannot
/// be reached (its sessions, which no longer count, are not in the menu), then the app's own
/// actions. Sessions on the live list that do not need you (working, or closed and still held)
/// are not in the menu.
pub fn menu_model(live: &[Session], state: MenuState<'_>, now: Timestamp) -> Vec<Entry> {
    let MenuState {
        pause,
        autostart,
        config_error,
        remotes,
    } = state;
    let mut entries = Vec::new();
    if let Some(error) = config_error {
        entries.push(Entry::Note(format!(
            "Config error: {}",
            cut(error, MAX_NOTE)
        )));
        entries.push(Entry::Separator);
    }
    let waiting: Vec<&Session> = live.iter().filter(|session| needs_you(session)).collect();
    if waiting.is_empty() {
        entries.push(Entry::Note("Nothing needs you".to_string()));
    }
    for session in waiting {
        entries.push(session_entry(session));
    }
    for remote in remotes
        .iter()
        .filter(|remote| remote.status == Status::Unreachable)
    {
        entries.push(Entry::Note(unreachable_label(remote)));
    }
    entries.push(Entry::Separator);
    entries.push(Entry::Item {
        action: MenuAction::OpenWindow,
        label: "Open Slate".to_string(),
    });
    if pause.is_paused(now) {
        let label = match pause {
            Pause::Until(until) => {
                format!("Resume notifications (paused until {})", clock_time(until))
            }
            _ => "Resume notifications (paused)".to_string(),
        };
        entries.push(Entry::Item {
            action: MenuAction::Resume,
            label,
        });
    } else {
        entries.push(Entry::Submenu {
            label: "Pause notifications".to_string(),
            entries: vec![
                Entry::Item {
                    action: MenuAction::PauseForAnHour,
                    label: "For 1 hour".to_string(),
                },
                Entry::Item {
                    action: MenuAction::PauseUntilResumed,
                    label: "Until resumed".to_string(),
                },
            ],
        });
    }
    // Each session on the menu that runs on this machine, ticked when it is muted: a click mutes
    // or unmutes it (a remote one is muted on its own machine).
    let mutable: Vec<Entry> = live
        .iter()
        .filter(|session| needs_you(session) && session.machine.is_none())
        .map(|session| Entry::Check {
            action: MenuAction::ToggleMute(session.key()),
            label: session_name(session),
            checked: session.muted,
        })
        .collect();
    if !mutable.is_empty() {
        entries.push(Entry::Submenu {
            label: "Mute notifications for".to_string(),
            entries: mutable,
        });
    }
    entries.push(Entry::Check {
        action: MenuAction::ToggleAutostart,
        label: "Start at login".to_string(),
        checked: autostart,
    });
    entries.push(Entry::Separator);
    entries.push(Entry::Item {
        action: MenuAction::Quit,
        label: "Quit Slate".to_string(),
    });
    entries
}

/// A session that needs you: an item that focuses it, or, when its screen shows a dialog, a
/// submenu with the dialog's summary, an item per option Slate may answer when the dialog says it
/// is answerable ("Allow once", "Deny", or a question's options; never one that widens
/// permissions) or else why it is not, and "Open" to focus it. A session on another machine gets
/// the same submenu: its dialog's `answerable` is that machine's word while its link is up, and
/// its items' ids carry the machine, so the answer is forwarded there.
fn session_entry(session: &Session) -> Entry {
    let focus = MenuAction::Focus(session.key());
    let dialog = match &session.dialog {
        Some(dialog) => dialog,
        None => {
            return Entry::Item {
                action: focus,
                label: session_label(session),
            }
        }
    };
    let mut entries = vec![Entry::Note(menu_text(&cut(&dialog.summary, MAX_REASON)))];
    if dialog.answerable {
        entries.extend(answer_entries(session.key(), dialog));
    } else if let Some(why) = &dialog.why_not {
        entries.push(Entry::Note(menu_text(&cut(why, MAX_NOTE))));
    }
    entries.push(Entry::Separator);
    entries.push(Entry::Item {
        action: focus,
        label: "Open".to_string(),
    });
    Entry::Submenu {
        label: session_label(session),
        entries,
    }
}

/// The items that answer `dialog`, in the order it draws its options. An `answer` needs the
/// option's number to name it; an option drawn without one is answered in the window or the
/// terminal instead. The menu shows the dialog's summary cut at [`MAX_REASON`] characters, so
/// where that is not the whole command (`policy::shows_whole`) it offers no "Allow once": a note
/// says why, and "Deny" (which runs nothing) and "Open" stay.
pub fn answer_entries(key: SessionKey, dialog: &SessionDialog) -> Vec<Entry> {
    let whole = crate::policy::shows_whole(dialog, MAX_REASON);
    let mut entries: Vec<Entry> = dialog
        .options
        .iter()
        .filter_map(|option| {
            let action = option.action?;
            if action == Action::Approve && !whole {
                return None;
            }
            let number = match action {
                Action::Answer => Some(option.number?),
                Action::Approve | Action::Deny => None,
            };
            let label = match (dialog.kind, action) {
                (DialogKind::Permission, Action::Approve) => "Allow once".to_string(),
                (DialogKind::Permission, Action::Deny) => "Deny".to_string(),
                _ => menu_text(&cut(&option.label, MAX_REASON)),
            };
            Some(Entry::Item {
                action: MenuAction::Answer(MenuAnswer {
                    key: key.clone(),
                    action,
                    option: number,
                    fingerprint: dialog.fingerprint.clone(),
                }),
                label,
            })
        })
        .collect();
    if dialog.kind == DialogKind::Permission && !whole {
        entries.insert(0, Entry::Note(not_whole(dialog)));
    }
    entries
}

/// Why the menu offers no "Allow once": how much of the command it cannot show.
fn not_whole(dialog: &SessionDialog) -> String {
    let lines = dialog.detail.len();
    match (lines, dialog.cut) {
        (_, true) => "Allow in the terminal: the command is cut short".to_string(),
        (0 | 1, false) => {
            "Allow in Slate's window or the terminal: this menu cannot show the whole command"
                .to_string()
        }
        (lines, false) => {
            format!("Allow in Slate's window or the terminal: the command has {lines} lines")
        }
    }
}

/// Text as a menu label shows it: a lone `&` would become a mnemonic marker.
fn menu_text(text: &str) -> String {
    text.replace('&', "&&")
}

/// "acme-api · Claude Code — Asks permission for Bash: cargo test"; a parked session is
/// "Parked · acme-api · Claude Code — …" and a hosted one "acme-api · Codex (hosted) — …".
pub fn session_label(session: &Session) -> String {
    let reason = cut(&session.session_state.reason.text, MAX_REASON);
    // A parked session says so first: it waits on purpose, and fires no notifications.
    let parked = match session.session_state.intent.state {
        IntentState::Parked => "Parked · ",
        IntentState::Awaiting => "Awaiting · ",
        IntentState::None => "",
    };
    // A lone `&` would become a mnemonic marker in the menu.
    format!("{parked}{} — {reason}", notifications::label(session)).replace('&', "&&")
}

/// How the mute submenu names a session: "acme-api · Claude Code", its `&` kept literal.
fn session_name(session: &Session) -> String {
    notifications::label(session).replace('&', "&&")
}

/// "box is unreachable (since 14:05 UTC)": a remote machine whose link is down.
pub fn unreachable_label(remote: &Report) -> String {
    format!(
        "{} is unreachable (since {})",
        remote.name,
        clock_time(remote.since)
    )
    .replace('&', "&&")
}

/// "14:05 UTC": the menus have no locale to format with, so the pause end is given in UTC.
fn clock_time(at: Timestamp) -> String {
    let text = at.to_string();
    match text.get(11..16) {
        Some(hhmm) => format!("{hhmm} UTC"),
        None => text,
    }
}

/// `text`, cut to at most `most` characters with an ellipsis.
fn cut(text: &str, most: usize) -> String {
    if text.chars().count() <= most {
        return text.to_string();
    }
    let kept: String = text.chars().take(most - 1).collect();
    format!("{}…", kept.trim_end())
}

/// The tray's tooltip: the count in words, and the config error when there is one.
pub fn tooltip(count: usize, config_error: Option<&str>) -> String {
    let count = match count {
        0 => "Slate: nothing needs you".to_string(),
        1 => "Slate: 1 session needs you".to_string(),
        n => format!("Slate: {n} sessions need you"),
    };
    match config_error {
        Some(error) => format!("{count}\nConfig error: {error}"),
        None => count,
    }
}
