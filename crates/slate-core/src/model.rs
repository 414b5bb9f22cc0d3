//! Plain data shared by the engine, the command line, the API and the desktop shell.
//!
//! Everything here is a value: sessions, their state facets, process tables and listings. There is
//! no behaviour beyond small accessors and conversions, no I/O and no clock; the rules that decide a
//! session's state live in `tracker`, and the code that fills these values from the outside world
//! lives in `sources`. It is the bottom of the core: it imports no other module, and names no
//! agent (`model::agent`).

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

mod agent;
mod dialog;
mod problem;
mod terminal;
mod unread;
pub mod usage;

pub use agent::{AgentKind, Described, ForeignAgentError};
pub use dialog::{
    Action, DialogKind, HookDecision, PendingCall, SessionDialog, SessionDialogOption,
};
pub use problem::{Problem, ProblemKind, ServerKind};
pub use terminal::{Can, TerminalKind, TerminalName, TerminalView, HOSTED_CAN, READ_ONLY};
pub use unread::{UnreadKind, UnreadRecords};

/// A session id as the agent spells it (a UUID for most agents, `ses_…` for OpenCode).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionId(pub String);

impl SessionId {
    pub fn new(id: impl Into<String>) -> SessionId {
        SessionId(id.into())
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The name of another machine whose sessions Slate follows over SSH (`[[remote]] name` in the
/// config): a letter or digit, then up to 31 letters, digits, `.`, `_` or `-`. It never holds a
/// `:`, so `NAME:ID` names a session on it. Cheap to clone: every session from that machine
/// carries it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Machine(std::sync::Arc<str>);

impl Machine {
    /// The longest machine name.
    pub const MAX: usize = 32;

    pub fn new(name: &str) -> Result<Machine, MachineNameError> {
        let mut chars = name.chars();
        let first_fits = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
        let rest_fits = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if !first_fits || !rest_fits || name.len() > Machine::MAX {
            return Err(MachineNameError(name.chars().take(40).collect()));
        }
        Ok(Machine(name.into()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A machine name that does not fit [`Machine`]'s rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not a machine name: use a letter or digit, then up to 31 letters, digits, `.`, `_` or `-`"
)]
pub struct MachineNameError(String);

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Machine {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Machine {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Machine::new(&name).map_err(serde::de::Error::custom)
    }
}

/// A session is identified by its agent and the agent's own id (docs/states.md §1), and, for a
/// session on another machine, that machine's name: the same transcript seen on two machines
/// is two sessions, and a remote session's key never equals a local one's.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SessionKey {
    pub agent: AgentKind,
    pub id: SessionId,
    /// `None` for a session on this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<Machine>,
}

impl SessionKey {
    /// The key of a session on this machine.
    pub fn new(agent: AgentKind, id: impl Into<String>) -> SessionKey {
        SessionKey {
            agent,
            id: SessionId::new(id),
            machine: None,
        }
    }

    /// The same session as seen from another machine, where it lives on `machine`.
    pub fn on(self, machine: Option<Machine>) -> SessionKey {
        SessionKey { machine, ..self }
    }

    /// How a command names the session: its id, or `NAME:ID` for one on another machine.
    pub fn reference(&self) -> String {
        match &self.machine {
            Some(machine) => format!("{machine}:{}", self.id),
            None => self.id.to_string(),
        }
    }
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.machine {
            Some(machine) => write!(f, "{machine}:{}:{}", self.agent, self.id),
            None => write!(f, "{}:{}", self.agent, self.id),
        }
    }
}

/// A point in time, in milliseconds since the Unix epoch, UTC.
///
/// The core never reads the clock: every `Timestamp` it sees was parsed from a record or handed in
/// as `now` by an edge. On the wire it is an RFC 3339 string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timestamp(pub i64);

impl Timestamp {
    pub fn from_millis(ms: i64) -> Timestamp {
        Timestamp(ms)
    }

    pub fn millis(self) -> i64 {
        self.0
    }

    /// Parses an RFC 3339 time such as `2026-11-28T10:15:03.120Z`.
    pub fn parse_rfc3339(text: &str) -> Option<Timestamp> {
        let parsed =
            time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
                .ok()?;
        let ms = parsed.unix_timestamp_nanos() / 1_000_000;
        i64::try_from(ms).ok().map(Timestamp)
    }

    pub fn to_rfc3339(self) -> String {
        let nanos = i128::from(self.0) * 1_000_000;
        match time::OffsetDateTime::from_unix_timestamp_nanos(nanos) {
            Ok(at) => {
                let format = time::macros::format_description!(
                    "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
                );
                at.format(&format)
                    .unwrap_or_else(|_| format!("@{}ms", self.0))
            }
            Err(_) => format!("@{}ms", self.0),
        }
    }

    /// `duration` later, or the end of time when that does not fit: no arithmetic on a time can
    /// overflow, whatever a record claims.
    pub fn plus(self, duration: Duration) -> Timestamp {
        Timestamp(self.0.saturating_add(millis_of(duration)))
    }

    /// `duration` earlier, or the start of time when that does not fit.
    pub fn minus(self, duration: Duration) -> Timestamp {
        Timestamp(self.0.saturating_sub(millis_of(duration)))
    }

    /// How long ago `self` was, seen from `now`; zero when `self` is in the future.
    pub fn elapsed_until(self, now: Timestamp) -> Duration {
        Duration::from_millis(now.0.saturating_sub(self.0).max(0) as u64)
    }
}

/// A duration in whole milliseconds, as many as an `i64` holds.
fn millis_of(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_rfc3339())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Timestamp::parse_rfc3339(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("not an RFC 3339 time: {text}")))
    }
}

/// The display status (docs/states.md §2). The tray counts `Waiting`, shown as "Needs you".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Working,
    Waiting,
    Ended,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::Waiting => "waiting",
            Status::Ended => "ended",
        }
    }

    /// The words a person reads.
    pub fn label(self) -> &'static str {
        match self {
            Status::Working => "Working",
            Status::Waiting => "Needs you",
            Status::Ended => "Closed",
        }
    }
}

/// The stable code of the evidence that decided a status (docs/states.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasonCode {
    /// A tool call is in flight.
    ToolRunning,
    /// The last record is a prompt or a tool result: the model is answering.
    ModelAnswering,
    /// A sub-agent of this session wrote within the window.
    SubagentRunning,
    /// The agent's own listing reports the session busy.
    ListingBusy,
    /// The model hit an API error and is retrying.
    ModelRetrying,
    /// The conversation is being compacted.
    Compacting,
    /// A hosted session's title is moving.
    TitleMoving,
    /// Nothing settles it yet and the last turn record is recent (docs/states.md §3 rule 7).
    RecentActivity,
    TurnFinished,
    PermissionPrompt,
    Question,
    PlanApproval,
    /// A dialog other than a permission prompt or a question.
    Dialog,
    Interrupted,
    QuietCall,
    TitleStopped,
    TerminalSilent,
    /// The agent's listing reported the job done, stopped or failed.
    ListingDone,
    /// The process that vouched for the session died.
    ProcessGone,
    /// The agent's listing no longer lists the session.
    NotListed,
    /// The agent recorded the session's end, or the user ended it.
    EndStamp,
    /// The transcript is quiet and no live process vouches for it.
    NoProcess,
    /// A print-mode run (`claude -p`, `codex exec`, …) finished its only turn.
    PrintFinished,
    /// The turn ended in an error the model will not retry.
    TurnFailed,
    /// A live session that has not had its first prompt yet.
    NewSession,
    Unknown,
}

impl ReasonCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::ToolRunning => "tool_running",
            ReasonCode::ModelAnswering => "model_answering",
            ReasonCode::SubagentRunning => "subagent_running",
            ReasonCode::ListingBusy => "listing_busy",
            ReasonCode::ModelRetrying => "model_retrying",
            ReasonCode::Compacting => "compacting",
            ReasonCode::TitleMoving => "title_moving",
            ReasonCode::RecentActivity => "recent_activity",
            ReasonCode::TurnFinished => "turn_finished",
            ReasonCode::PermissionPrompt => "permission_prompt",
            ReasonCode::Question => "question",
            ReasonCode::PlanApproval => "plan_approval",
            ReasonCode::Dialog => "dialog",
            ReasonCode::Interrupted => "interrupted",
            ReasonCode::QuietCall => "quiet_call",
            ReasonCode::TitleStopped => "title_stopped",
            ReasonCode::TerminalSilent => "terminal_silent",
            ReasonCode::ListingDone => "listing_done",
            ReasonCode::ProcessGone => "process_gone",
            ReasonCode::NotListed => "not_listed",
            ReasonCode::EndStamp => "end_stamp",
            ReasonCode::NoProcess => "no_process",
            ReasonCode::PrintFinished => "print_finished",
            ReasonCode::TurnFailed => "turn_failed",
            ReasonCode::NewSession => "new_session",
            ReasonCode::Unknown => "unknown",
        }
    }
}

/// A reason: a stable code plus a sentence for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reason {
    pub code: ReasonCode,
    pub text: String,
}

impl Reason {
    pub fn new(code: ReasonCode, text: impl Into<String>) -> Reason {
        Reason {
            code,
            text: text.into(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    Present,
    Ended,
    Gone,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Activity {
    Working,
    BetweenTurns,
    Silent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum IntentState {
    #[default]
    None,
    Parked,
    Awaiting,
}

/// An explicit pause set by the user (docs/states.md §4). Defaults to none. The reason is
/// carried here only: the other facets refer to it rather than repeat it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Intent {
    pub state: IntentState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub awaiting_who: Option<Awaiting>,
}

/// Whom an `awaiting` intent waits for. The command line (`slate await --who`), the API
/// (`POST /sessions/{id}/intent`), the store and the wire all spell it the same way:
/// `operator`, `another_item:<item>` or `ci_or_deploy`, read by `FromStr` and written by
/// `Display`, so every surface accepts and refuses the same values.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Awaiting {
    /// The person at the keyboard.
    Operator,
    /// Another work item, by id, which must be done first.
    AnotherItem(String),
    /// A CI run or a deployment.
    CiOrDeploy,
}

/// A spelling of `awaiting_who` that names no one Slate knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not operator, another_item:<item> or ci_or_deploy")]
pub struct UnknownAwaiting(pub String);

impl Awaiting {
    /// The actor the wait names, which `next_actor` reports until that actor has acted.
    pub fn actor(&self) -> Actor {
        match self {
            Awaiting::Operator => Actor::Operator,
            Awaiting::AnotherItem(_) => Actor::AnotherItem,
            Awaiting::CiOrDeploy => Actor::CiOrDeploy,
        }
    }

    /// The work item awaited, for `another_item:<item>`.
    pub fn item(&self) -> Option<&str> {
        match self {
            Awaiting::AnotherItem(item) => Some(item),
            Awaiting::Operator | Awaiting::CiOrDeploy => None,
        }
    }
}

impl std::str::FromStr for Awaiting {
    type Err = UnknownAwaiting;

    fn from_str(text: &str) -> Result<Awaiting, UnknownAwaiting> {
        match text.split_once(':') {
            None if text == "operator" => Ok(Awaiting::Operator),
            None if text == "ci_or_deploy" => Ok(Awaiting::CiOrDeploy),
            Some(("another_item", item)) if !item.is_empty() => {
                Ok(Awaiting::AnotherItem(item.to_string()))
            }
            _ => Err(UnknownAwaiting(text.to_string())),
        }
    }
}

impl fmt::Display for Awaiting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Awaiting::Operator => f.write_str("operator"),
            Awaiting::AnotherItem(item) => write!(f, "another_item:{item}"),
            Awaiting::CiOrDeploy => f.write_str("ci_or_deploy"),
        }
    }
}

impl Serialize for Awaiting {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Awaiting {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Where a work item stands (docs/states.md §4 custody and next actor). The store keeps it as its
/// snake_case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    Ready,
    Blocked,
    CiRunning,
    Done,
}

impl ItemStatus {
    pub const ALL: [ItemStatus; 4] = [
        ItemStatus::Ready,
        ItemStatus::Blocked,
        ItemStatus::CiRunning,
        ItemStatus::Done,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ItemStatus::Ready => "ready",
            ItemStatus::Blocked => "blocked",
            ItemStatus::CiRunning => "ci_running",
            ItemStatus::Done => "done",
        }
    }

    pub fn parse(text: &str) -> Option<ItemStatus> {
        ItemStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == text)
    }
}

/// A spelling of an item status that is none of `ItemStatus::ALL`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an item status (ready, blocked, ci_running, done)")]
pub struct UnknownItemStatus(pub String);

impl std::str::FromStr for ItemStatus {
    type Err = UnknownItemStatus;

    fn from_str(text: &str) -> Result<ItemStatus, UnknownItemStatus> {
        ItemStatus::parse(text).ok_or_else(|| UnknownItemStatus(text.to_string()))
    }
}

impl fmt::Display for ItemStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the session holds and whether cleanup may reclaim it (docs/states.md §4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Custody {
    pub holds: Vec<String>,
    pub holds_work_claim: bool,
    pub reclaimable: bool,
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    ThisSession,
    Operator,
    ParentOrSteering,
    AnotherItem,
    CiOrDeploy,
    Nobody,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NextActor {
    pub actor: Actor,
    pub reason: String,
    pub since: Timestamp,
}

/// The wire field `session_state` (docs/states.md §4): the one state every consumer reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionState {
    pub status: Status,
    pub active_at: Option<Timestamp>,
    pub reason: Reason,
    pub presence: Presence,
    pub activity: Activity,
    pub intent: Intent,
    pub custody: Custody,
    pub next_actor: NextActor,
}

/// The session object of docs/states.md §4, as the CLI and the API print it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub agent: AgentKind,
    pub id: SessionId,
    /// The folder the session began in.
    pub folder: Option<String>,
    /// The last component of `folder`, for display.
    pub project: Option<String>,
    pub title: Option<String>,
    pub last_prompt: Option<String>,
    pub branch: Option<String>,
    /// The last turn record; for a closed session, its last write.
    pub row_time: Option<Timestamp>,
    pub pid: Option<u32>,
    pub transcript: Option<String>,
    pub model: Option<String>,
    pub cli_version: Option<String>,
    /// True when the session runs under `slate run`.
    pub hosted: bool,
    /// How Slate sees the session's terminal, for a session with a live process: hosted by
    /// `slate run`, or a tmux pane, a kitty window or a WezTerm pane it reads from outside, or a
    /// terminal it cannot read. Absent from an older server's session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<TerminalView>,
    /// The dialog its screen shows now (a sensed pane or a hosted terminal), with what Slate
    /// offers for each option. Absent when the session is at no dialog read from a screen, and
    /// never kept across restarts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog: Option<SessionDialog>,
    pub status: Status,
    pub session_state: SessionState,
    /// For a live session in a git checkout: commits ahead of and behind the branch's upstream,
    /// and the number of dirty files. Filled in by the live service, never by the tracker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ahead: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty: Option<u32>,
    /// The machine the session runs on: `null` for this one, else the remote's name (`[[remote]]
    /// name`). Set by the live service as a remote's sessions arrive, never by the tracker.
    #[serde(default)]
    pub machine: Option<Machine>,
    /// For a session on a remote machine that Slate cannot reach now: since when. The session
    /// keeps the state its machine last reported, and does not count as needing you
    /// (`policy::needs_you`) until the machine answers again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreachable_since: Option<Timestamp>,
    /// Records of the session's files that its agent's parser does not know: the sign that the
    /// agent's format may have changed. Absent when there are none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unread: Option<UnreadRecords>,
    /// True when the person muted the session (`slate mute`) or its agent (`[notifications]
    /// muted_agents`): it counts and shows as ever, and no notification tells of it. Absent when
    /// false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub muted: bool,
    /// The tokens its model calls used and what they cost (`model::usage`). Absent when the
    /// agent recorded none: "not recorded", never zeros.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<usage::SessionUsage>,
}

impl Session {
    /// The key the engine and the store know this session by.
    pub fn key(&self) -> SessionKey {
        SessionKey::new(self.agent, self.id.as_str()).on(self.machine.clone())
    }

    /// Reads a session object as a server sent it, tolerating an older server that sent no
    /// `session_state` (docs/states.md §4: consumers show what they can). The missing facets are filled
    /// from the top-level `status` and `row_time`, with an `unknown` reason, no intent, and a
    /// custody that claims nothing (never `reclaimable`, since nothing says so). A missing
    /// `hosted` reads as false, and a missing or unreadable `terminal` as none. Anything else
    /// malformed is still an error.
    pub fn from_wire(mut value: serde_json::Value) -> Result<Session, serde_json::Error> {
        use serde::de::Error as _;
        let Some(object) = value.as_object_mut() else {
            return Err(serde_json::Error::custom("a session must be a JSON object"));
        };
        object
            .entry("hosted")
            .or_insert(serde_json::Value::Bool(false));
        // A terminal this build cannot read (a kind a newer server knows) is left out rather than
        // failing the whole session.
        let readable = object.get("terminal").is_none_or(|terminal| {
            serde_json::from_value::<Option<TerminalView>>(terminal.clone()).is_ok()
        });
        if !readable {
            object.remove("terminal");
        }
        // So is a dialog this build cannot read (a kind or an action a newer server knows): the
        // session still reads, without a dialog to answer.
        let readable = object.get("dialog").is_none_or(|dialog| {
            serde_json::from_value::<Option<SessionDialog>>(dialog.clone()).is_ok()
        });
        if !readable {
            object.remove("dialog");
        }
        let present = object
            .get("session_state")
            .is_some_and(|state| !state.is_null());
        if !present {
            let status: Status = serde_json::from_value(
                object
                    .get("status")
                    .cloned()
                    .ok_or_else(|| serde_json::Error::custom("missing field `status`"))?,
            )?;
            let row_time: Option<Timestamp> = match object.get("row_time") {
                Some(time) if !time.is_null() => Some(serde_json::from_value(time.clone())?),
                _ => None,
            };
            let (presence, activity, actor) = match status {
                Status::Working => (Presence::Present, Activity::Working, Actor::ThisSession),
                Status::Waiting => (Presence::Present, Activity::BetweenTurns, Actor::Operator),
                Status::Ended => (Presence::Ended, Activity::BetweenTurns, Actor::Nobody),
            };
            let state = SessionState {
                status,
                active_at: row_time,
                reason: Reason::new(
                    ReasonCode::Unknown,
                    "The server did not say why (an older server)",
                ),
                presence,
                activity,
                intent: Intent::default(),
                custody: Custody {
                    reason: "unknown: the server did not report custody".to_string(),
                    ..Custody::default()
                },
                next_actor: NextActor {
                    actor,
                    reason: "derived from the status (an older server)".to_string(),
                    since: row_time.unwrap_or(Timestamp(0)),
                },
            };
            object.insert("session_state".to_string(), serde_json::to_value(state)?);
        }
        serde_json::from_value(value)
    }
}

/// A live process as the process scan saw it: plain data, not `sysinfo` types.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo {
    pub pid: u32,
    #[serde(default)]
    pub ppid: Option<u32>,
    /// The short name (`comm` on Linux).
    pub name: String,
    #[serde(default)]
    pub exe: Option<String>,
    pub cmd: Vec<String>,
    /// The working folder, canonical where the scan could resolve it.
    #[serde(default)]
    pub cwd: Option<String>,
    pub start_time: Timestamp,
    /// Linux only: field 22 of `/proc/<pid>/stat`, which Claude Code's registry records as `procStart`.
    #[serde(default)]
    pub start_ticks: Option<u64>,
}

/// All the processes one scan saw, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ProcessTable {
    pub processes: Vec<ProcessInfo>,
}

impl ProcessTable {
    pub fn get(&self, pid: u32) -> Option<&ProcessInfo> {
        self.processes.iter().find(|process| process.pid == pid)
    }
}

/// What an agent's own listing says about one of its sessions (docs/states.md §1 "listing").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListingEntry {
    pub session_id: String,
    pub pid: Option<u32>,
    /// Claude Code's `procStart`: the process start time in clock ticks, as text.
    pub proc_start: Option<String>,
    pub started_at: Option<Timestamp>,
    pub cwd: Option<String>,
    pub status: Option<ListedStatus>,
    pub waiting_for: Option<String>,
    /// True for an interactive chat, which reports done or idle after each turn (docs/states.md §3 rule 2).
    pub interactive: bool,
    pub updated_at: Option<Timestamp>,
}

/// A status as an agent's listing reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ListedStatus {
    Busy,
    Idle,
    Waiting,
    /// A background job that is done, stopped or failed.
    Finished,
}

/// One agent's listing, as read from disk or from the agent's own command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Listing {
    /// False when the agent keeps no listing here (an older version, or no registry folder):
    /// then the listing decides nothing and processes vouch by folder.
    pub available: bool,
    pub entries: Vec<ListingEntry>,
}

/// Signals a hosted session's pseudo-terminal reports (docs/states.md §1 "hosted session").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct HostedSignals {
    pub pid: Option<u32>,
    /// The titles seen, newest last, each with when it was seen.
    pub titles: Vec<(Timestamp, String)>,
    /// When the terminal last drew anything.
    pub last_draw: Option<Timestamp>,
    /// The control socket through which Slate reads the terminal's screen and types into it
    /// (`host::control`); absent from an older `slate run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<String>,
}
