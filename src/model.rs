//! Plain data shared by the engine, the command line, the API and the desktop shell.
//!
//! Everything here is a value: sessions, their state facets, process tables and listings. There is
//! no behaviour beyond small accessors and conversions, no I/O and no clock; the rules that decide a
//! session's state live in `tracker`, and the code that fills these values from the outside world
//! lives in `sources`.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::agents::keys::Action;
use crate::agents::screens::{Dialog, DialogKind};
use crate::agents::Description;

/// An agent CLI: one of the built-in ones ([`crate::agents::BUILT_IN`]), one a test registers
/// through its own description, or one a newer Slate named on the wire that this one does not know.
///
/// It is a small `Copy` value that points at the agent's description, so the agent's names and
/// grammars are one step away wherever a session is. Two kinds are equal when their wire ids are,
/// and they sort by wire id. On the wire it is the id (`claude-code`, `codex`, `cursor-agent`,
/// `opencode`, `gemini-cli`; docs/states.md §4). Reading an id this build does not know keeps it
/// (up to [`AgentKind::FOREIGN_MAX`] bytes) as a foreign agent with no description, so a session
/// from a newer Slate is shown rather than refused.
#[derive(Clone, Copy)]
pub struct AgentKind(Kind);

#[derive(Clone, Copy)]
enum Kind {
    Known(&'static Description),
    Foreign {
        len: u8,
        bytes: [u8; AgentKind::FOREIGN_MAX],
    },
}

impl AgentKind {
    pub const CLAUDE_CODE: AgentKind = AgentKind::of(&crate::agents::claude::DESCRIPTION);
    pub const CODEX: AgentKind = AgentKind::of(&crate::agents::codex::DESCRIPTION);
    pub const CURSOR_AGENT: AgentKind = AgentKind::of(&crate::agents::cursor::DESCRIPTION);
    pub const OPENCODE: AgentKind = AgentKind::of(&crate::agents::opencode::DESCRIPTION);
    pub const GEMINI_CLI: AgentKind = AgentKind::of(&crate::agents::gemini::DESCRIPTION);

    /// The longest wire id of an agent without a description that is kept. It keeps an
    /// `AgentKind` (and so every `SessionKey`) at 16 bytes; the built-in ids are at most 12.
    pub const FOREIGN_MAX: usize = 14;

    /// The agent a description describes.
    pub const fn of(description: &'static Description) -> AgentKind {
        AgentKind(Kind::Known(description))
    }

    /// The wire name, as used in JSON and on the command line.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Kind::Known(description) => description.id,
            // Only ever filled from a `&str`, whole, so the bytes are UTF-8.
            Kind::Foreign { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
        }
    }

    /// The name a person reads in a table or a notification; a foreign agent's wire id.
    pub fn display_name(&self) -> &str {
        match &self.0 {
            Kind::Known(description) => description.name,
            Kind::Foreign { .. } => self.as_str(),
        }
    }

    /// What Slate knows about this agent; `None` for one only named on the wire.
    pub fn description(self) -> Option<&'static Description> {
        match self.0 {
            Kind::Known(description) => Some(description),
            Kind::Foreign { .. } => None,
        }
    }

    /// The built-in agent with this wire id.
    pub fn parse(name: &str) -> Option<AgentKind> {
        crate::agents::BUILT_IN.find(name).map(Description::kind)
    }

    /// The agent a session object names: a built-in one, else a foreign one that keeps its id.
    pub fn from_wire(name: &str) -> Result<AgentKind, ForeignAgentError> {
        if let Some(known) = AgentKind::parse(name) {
            return Ok(known);
        }
        let fits = !name.is_empty()
            && name.len() <= AgentKind::FOREIGN_MAX
            && name.bytes().all(|byte| byte.is_ascii_graphic());
        if !fits {
            return Err(ForeignAgentError(name.chars().take(40).collect()));
        }
        let mut bytes = [0; AgentKind::FOREIGN_MAX];
        bytes[..name.len()].copy_from_slice(name.as_bytes());
        Ok(AgentKind(Kind::Foreign {
            len: name.len() as u8,
            bytes,
        }))
    }
}

/// An agent id on the wire that is neither known nor a plausible id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an agent id: {0:?} (at most 14 printable ASCII characters)")]
pub struct ForeignAgentError(String);

impl PartialEq for AgentKind {
    fn eq(&self, other: &AgentKind) -> bool {
        match (self.0, other.0) {
            (Kind::Known(one), Kind::Known(two)) if std::ptr::eq(one, two) => true,
            _ => self.as_str() == other.as_str(),
        }
    }
}

impl Eq for AgentKind {}

impl std::hash::Hash for AgentKind {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialOrd for AgentKind {
    fn partial_cmp(&self, other: &AgentKind) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for AgentKind {
    fn cmp(&self, other: &AgentKind) -> std::cmp::Ordering {
        match (self.0, other.0) {
            (Kind::Known(one), Kind::Known(two)) if std::ptr::eq(one, two) => {
                std::cmp::Ordering::Equal
            }
            _ => self.as_str().cmp(other.as_str()),
        }
    }
}

impl fmt::Debug for AgentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AgentKind({:?})", self.as_str())
    }
}

impl fmt::Display for AgentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for AgentKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for AgentKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        AgentKind::from_wire(&name).map_err(serde::de::Error::custom)
    }
}

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

/// The dialog a session's screen shows, on the wire (docs/states.md §8): what it asks, its options
/// with what Slate offers for each, its fingerprint, and whether Slate can type the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionDialog {
    pub kind: DialogKind,
    /// `Run: touch x.txt`, `Question: Which database?`; `Run: touch x.txt && \ … (3 lines)` when
    /// the text has more lines, `… (cut short)` when it is not whole.
    pub summary: String,
    /// The whole command, file or diff the dialog asks about, as the CLI draws it: every line,
    /// wrapped lines joined (`agents::screens::Dialog::detail`). A surface that cannot show all
    /// of it offers no approval (docs/states.md §8).
    #[serde(default)]
    pub detail: Vec<String>,
    /// True when the text is not whole: the CLI cut it short, or it passed Slate's bounds.
    #[serde(default)]
    pub cut: bool,
    /// Every option drawn, in order.
    pub options: Vec<SessionDialogOption>,
    /// 16 lowercase hex digits naming what the dialog says (`agents::keys::fingerprint`): an
    /// answer must send the fingerprint of the dialog the person saw.
    pub fingerprint: String,
    /// False when Slate cannot type into the session's terminal.
    pub answerable: bool,
    /// Why it cannot, and what would make it possible; only when `answerable` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
    /// The call the dialog is about, where the transcript records it (a Claude Code `tool_use`, a
    /// Codex `function_call`): its id, and for a permission its input. Absent from an older
    /// server, and where no call is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<PendingCall>,
}

/// The tool call a dialog is about, as the transcript records it (docs/states.md §8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The call's id in the transcript.
    pub id: String,
    /// The tool's name (`Bash`, `exec_command`).
    pub name: String,
    /// The call's input: the command of a shell call, the path of a file call, at most 8 KB
    /// (`agents::INPUT_BYTES`); absent for a question or a plan, and where the call records none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// True when the input was longer than that and is kept cut short.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

impl PendingCall {
    /// The call as a dialog of `kind` carries it: a permission with its input, a question or a
    /// plan by its id only (its input is not compared with the screen).
    pub fn about(self, kind: DialogKind) -> PendingCall {
        match kind {
            DialogKind::Permission => self,
            DialogKind::Question | DialogKind::Plan => PendingCall {
                input: None,
                cut: false,
                ..self
            },
        }
    }
}

/// One option of a session's dialog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionDialogOption {
    /// The number the dialog draws in front of it; null where it draws none (OpenCode's row).
    pub number: Option<u32>,
    pub label: String,
    /// What Slate offers for it: approve, deny, answer, or null for an option that widens
    /// permissions (it stays in the terminal).
    pub action: Option<Action>,
}

impl SessionDialog {
    /// The session's dialog as the wire shows it, from a dialog `agent`'s screen shows and the
    /// call the transcript records for it, if one. A question or a plan carries the call's id
    /// only; a permission dialog that does not agree with its call's input
    /// (`agents::keys::disagreement`) is not answerable.
    pub fn of(
        agent: AgentKind,
        dialog: &Dialog,
        why_not: Option<String>,
        call: Option<PendingCall>,
    ) -> SessionDialog {
        let call = call.map(|call| call.about(dialog.kind));
        let actions = crate::agents::keys::option_actions(agent, dialog);
        let why_not = why_not
            .or_else(|| crate::agents::keys::disagreement(agent, dialog, call.as_ref()))
            .or_else(|| {
                actions.iter().all(Option::is_none).then(|| {
                    format!(
                        "slate offers no answer to this dialog of {}: answer it in its terminal",
                        agent.display_name()
                    )
                })
            });
        SessionDialog {
            kind: dialog.kind,
            summary: dialog.summary.clone(),
            detail: dialog.detail.clone(),
            cut: dialog.cut,
            options: dialog
                .options
                .iter()
                .zip(actions)
                .map(|(option, action)| SessionDialogOption {
                    number: option.number,
                    label: option.label.clone(),
                    action,
                })
                .collect(),
            fingerprint: crate::agents::keys::fingerprint(agent, dialog, call.as_ref()),
            answerable: why_not.is_none(),
            why_not,
            call,
        }
    }
}

/// How Slate sees a session's terminal (docs/states.md §1 "sensed terminal"): the wire field
/// `terminal`, `{"kind": "tmux", "pane": "%3", "sensed": true}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalView {
    pub kind: TerminalKind,
    /// The pane in its terminal: a tmux pane id (`%3`), a kitty window id, a WezTerm pane id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane: Option<String>,
    /// True when Slate reads the terminal's title and screen from outside.
    #[serde(default)]
    pub sensed: bool,
    /// Why Slate does not read it, when it does not (said by `slate doctor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl TerminalView {
    /// The terminal of a session under `slate run`, which Slate owns.
    pub fn hosted() -> TerminalView {
        TerminalView {
            kind: TerminalKind::Hosted,
            pane: None,
            sensed: false,
            note: None,
        }
    }

    /// The terminal of a session under a `slate run` that offers a control socket: its `pane` is
    /// the socket, and Slate reads its screen (`host::control`).
    pub fn hosted_with(control: Option<&str>) -> TerminalView {
        TerminalView {
            pane: control.map(str::to_string),
            sensed: control.is_some(),
            ..TerminalView::hosted()
        }
    }

    /// The control socket of a hosted terminal, when it has one.
    pub fn control(&self) -> Option<&str> {
        match self.kind {
            TerminalKind::Hosted => self.pane.as_deref(),
            _ => None,
        }
    }

    /// A terminal Slate does not read, and why.
    pub fn unread(
        kind: TerminalKind,
        pane: Option<String>,
        note: impl Into<String>,
    ) -> TerminalView {
        TerminalView {
            kind,
            pane,
            sensed: false,
            note: Some(note.into()),
        }
    }

    /// How a person reads it in `slate doctor`.
    pub fn describe(&self) -> String {
        let place = match (&self.kind, &self.pane) {
            (TerminalKind::Hosted, _) => return "hosted by `slate run`".to_string(),
            (TerminalKind::Plain | TerminalKind::Unknown, _) if self.note.is_some() => {
                return self.note.clone().unwrap_or_default()
            }
            (TerminalKind::Tmux, Some(pane)) => format!("tmux pane {pane}"),
            (TerminalKind::Kitty, Some(window)) => format!("kitty window {window}"),
            (TerminalKind::Wezterm, Some(pane)) => format!("WezTerm pane {pane}"),
            (kind, _) => kind.as_str().to_string(),
        };
        match (&self.note, self.sensed) {
            (_, true) => format!("{place}, read by Slate"),
            (Some(note), false) => format!("{place}: {note}"),
            (None, false) => format!("{place}, not read"),
        }
    }
}

/// What kind of terminal a session runs in, as Slate sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TerminalKind {
    /// Under `slate run`: Slate owns the pseudo-terminal.
    Hosted,
    Tmux,
    Kitty,
    Wezterm,
    /// A terminal Slate has no way to read (a plain terminal emulator, `screen`, an IDE's).
    Plain,
    /// The process's environment could not be read (another user's process, or it is gone).
    Unknown,
}

impl TerminalKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TerminalKind::Hosted => "hosted",
            TerminalKind::Tmux => "tmux",
            TerminalKind::Kitty => "kitty",
            TerminalKind::Wezterm => "wezterm",
            TerminalKind::Plain => "plain terminal",
            TerminalKind::Unknown => "unknown terminal",
        }
    }
}

/// A counted problem: something went wrong reading the outside world, and the engine went on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    pub kind: ProblemKind,
    /// Where: a path, a root or a session.
    pub place: String,
    pub detail: String,
}

impl Problem {
    pub fn new(kind: ProblemKind, place: impl Into<String>, detail: impl Into<String>) -> Problem {
        Problem {
            kind,
            place: place.into(),
            detail: detail.into(),
        }
    }
}

/// What kind of problem it was. The snake_case spelling is stable: `/health` counts problems by
/// it and `slate doctor` prints it. The variants are in the alphabetical order of their spelling,
/// so counts keyed by kind list in that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// A time in a record or a file lies in the future; it was read as the time of the read.
    FutureTime,
    /// A file holds more than one read may take (a compressed transcript that decompresses past
    /// the budget, or a transcript that grew by more at once); only part of it was read.
    HugeFile,
    /// A line longer than the limit was skipped unread.
    HugeLine,
    /// An agent's listing command could not be run, or failed.
    ListingFailed,
    /// An agent's listing command did not answer in time and was killed.
    ListingTimeout,
    /// A whole-file record (a legacy OpenCode JSON file) could not be read as one.
    MalformedFile,
    /// A transcript line is not what its format says.
    MalformedLine,
    /// A listing file or the listing command's output is not what its format says.
    MalformedListing,
    /// A stored row is not what its format says.
    MalformedRow,
    /// A remote machine sent something this machine does not list: a line or a session object
    /// that cannot be read, a session id that is not a plain one, or a session past the most
    /// listed for one machine.
    RemoteDropped,
    /// A store is damaged (corrupt, not a database, an undecodable meta row or root).
    StoreCorrupt,
    /// A store stayed locked by its writer past the retries.
    StoreLocked,
    /// A store's query ran past its budget and was stopped (a view that never ends, or a store
    /// too big to read at once, which is then read in parts).
    StoreTimeout,
    /// A store has a layout this reader does not know (a missing table or column).
    StoreUnexpected,
    /// A store could not be opened or read.
    StoreUnreadable,
    /// A terminal Slate reads from outside (a tmux pane, a kitty window, a WezTerm pane) did not
    /// answer in time, is gone, or cannot be asked (kitty without remote control).
    TerminalUnreadable,
    /// A folder or a file could not be listed, opened or read.
    Unreadable,
    /// A file of a store's file tree could not be read.
    UnreadableFile,
}

impl ProblemKind {
    pub const ALL: [ProblemKind; 18] = [
        ProblemKind::FutureTime,
        ProblemKind::HugeFile,
        ProblemKind::HugeLine,
        ProblemKind::ListingFailed,
        ProblemKind::ListingTimeout,
        ProblemKind::MalformedFile,
        ProblemKind::MalformedLine,
        ProblemKind::MalformedListing,
        ProblemKind::MalformedRow,
        ProblemKind::RemoteDropped,
        ProblemKind::StoreCorrupt,
        ProblemKind::StoreLocked,
        ProblemKind::StoreTimeout,
        ProblemKind::StoreUnexpected,
        ProblemKind::StoreUnreadable,
        ProblemKind::TerminalUnreadable,
        ProblemKind::Unreadable,
        ProblemKind::UnreadableFile,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ProblemKind::FutureTime => "future_time",
            ProblemKind::HugeFile => "huge_file",
            ProblemKind::HugeLine => "huge_line",
            ProblemKind::ListingFailed => "listing_failed",
            ProblemKind::ListingTimeout => "listing_timeout",
            ProblemKind::MalformedFile => "malformed_file",
            ProblemKind::MalformedLine => "malformed_line",
            ProblemKind::MalformedListing => "malformed_listing",
            ProblemKind::MalformedRow => "malformed_row",
            ProblemKind::RemoteDropped => "remote_dropped",
            ProblemKind::StoreCorrupt => "store_corrupt",
            ProblemKind::StoreLocked => "store_locked",
            ProblemKind::StoreTimeout => "store_timeout",
            ProblemKind::StoreUnexpected => "store_unexpected",
            ProblemKind::StoreUnreadable => "store_unreadable",
            ProblemKind::TerminalUnreadable => "terminal_unreadable",
            ProblemKind::Unreadable => "unreadable",
            ProblemKind::UnreadableFile => "unreadable_file",
        }
    }

    /// True when whatever the place holds is missing from every list: a store, a folder or a
    /// file could not be read at all. A bad line or row costs one record, not the sessions
    /// around it, and a failed listing costs a state's precision, not a session. Every kind is
    /// named here, so a new one has to say which it is.
    pub fn hides_sessions(self) -> bool {
        match self {
            ProblemKind::MalformedFile
            | ProblemKind::StoreCorrupt
            | ProblemKind::StoreLocked
            | ProblemKind::StoreTimeout
            | ProblemKind::StoreUnexpected
            | ProblemKind::StoreUnreadable
            | ProblemKind::Unreadable
            | ProblemKind::UnreadableFile => true,
            ProblemKind::FutureTime
            | ProblemKind::HugeFile
            | ProblemKind::HugeLine
            | ProblemKind::ListingFailed
            | ProblemKind::ListingTimeout
            | ProblemKind::MalformedLine
            | ProblemKind::MalformedListing
            | ProblemKind::MalformedRow
            | ProblemKind::RemoteDropped
            | ProblemKind::TerminalUnreadable => false,
        }
    }
}

impl fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// What kind of Slate serves the loopback API, as `/health` says (`"kind"`): the desktop app's
/// engine or `slate serve` (the user service, or one started by hand). One engine runs per user,
/// so whichever finds the port taken names the other with this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerKind {
    App,
    Service,
}

impl ServerKind {
    /// How a message names it: "the Slate app", "the Slate service".
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::App => "the Slate app",
            ServerKind::Service => "the Slate service",
        }
    }
}
