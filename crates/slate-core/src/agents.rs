//! The agent adapters and their registry: what each CLI's records and processes mean, in one
//! vocabulary.
//!
//! Each agent's module exports one [`Description`] of itself (names, processes, roots, watched
//! folders, transcript layout or store, listing, title grammar), and [`BUILT_IN`] lists them all;
//! every other module loops over a [`Registry`] instead of naming agents. An adapter turns one
//! transcript line (or one stored row) into [`Observation`]s and recognises the agent's processes
//! from their executable and argv. Adapters are pure: they never open a file, never read the clock
//! and never decide a status. Deciding is `tracker`'s job; finding and reading files is `sources`'
//! job. Adding an agent means adding a module here and one line to [`BUILT_IN`] (see
//! docs/formats.md §11).

pub mod claude;
pub mod cline;
pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod description;
pub mod gemini;
pub mod hooks;
pub mod keys;
pub mod kilo;
pub mod opencode;
pub mod pi;
pub mod qwen;
pub mod screens;
pub mod titles;
pub mod unread;
pub mod versions;

pub use description::{
    Base, Beside, BesideReader, Description, EntryParser, Found, IdReader, Layout, LineParser,
    ListingCommand, ListingRule, NameIndex, NameLine, OpenCodeStore, Processes, ProjectFolder,
    Registry, Root, Sessions, StoreKind, Watch, WholeFileReader,
};

use crate::model::{AgentKind, ForeignAgentError, ProcessInfo, Timestamp};

/// The agents Slate knows, in the order their processes are recognised and they are listed.
pub const BUILT_IN: Registry = Registry::new(BUILT_IN_AGENTS);

/// One line per agent: adding an agent adds its module above and its description here.
static BUILT_IN_AGENTS: &[&Description] = &[
    &claude::DESCRIPTION,
    &codex::DESCRIPTION,
    &gemini::DESCRIPTION,
    &opencode::DESCRIPTION,
    &cursor::DESCRIPTION,
    &pi::DESCRIPTION,
    &qwen::DESCRIPTION,
    &copilot::DESCRIPTION,
    &cline::DESCRIPTION,
    &kilo::DESCRIPTION,
];

/// The built-in agents by name, reading a kind from its wire id, and the way back from a kind to
/// its description: the model holds a kind without knowing any agent (`model::Described`).
impl AgentKind {
    pub const CLAUDE_CODE: AgentKind = AgentKind::of(&claude::DESCRIPTION);
    pub const CODEX: AgentKind = AgentKind::of(&codex::DESCRIPTION);
    pub const CURSOR_AGENT: AgentKind = AgentKind::of(&cursor::DESCRIPTION);
    pub const OPENCODE: AgentKind = AgentKind::of(&opencode::DESCRIPTION);
    pub const GEMINI_CLI: AgentKind = AgentKind::of(&gemini::DESCRIPTION);
    pub const QWEN_CODE: AgentKind = AgentKind::of(&qwen::DESCRIPTION);
    pub const COPILOT: AgentKind = AgentKind::of(&copilot::DESCRIPTION);
    pub const CLINE: AgentKind = AgentKind::of(&cline::DESCRIPTION);
    pub const KILO: AgentKind = AgentKind::of(&kilo::DESCRIPTION);

    /// What Slate knows about this agent; `None` for one only named on the wire.
    pub fn description(self) -> Option<&'static Description> {
        let described: &'static dyn std::any::Any = self.described()?;
        described.downcast_ref()
    }

    /// The built-in agent with this wire id.
    pub fn parse(name: &str) -> Option<AgentKind> {
        BUILT_IN.find(name).map(Description::kind)
    }

    /// The agent a session object names: a built-in one, else a foreign one that keeps its id.
    pub fn from_wire(name: &str) -> Result<AgentKind, ForeignAgentError> {
        match AgentKind::parse(name) {
            Some(known) => Ok(known),
            None => AgentKind::foreign(name),
        }
    }
}

impl<'de> serde::Deserialize<'de> for AgentKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        AgentKind::from_wire(&name).map_err(serde::de::Error::custom)
    }
}

/// One fact a transcript line states about its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observation {
    /// Bookkeeping: facts about the session that never move its time.
    Info(Info),
    /// A turn record: a prompt, a model message, a tool call or result, a turn marker.
    Record(Record),
    /// Forget every turn record seen so far; the records that follow replace them. Adapters whose
    /// format rewrites history (Gemini's `$rewindTo`, a re-read SQLite session) emit this.
    Reset,
    /// A record the parser does not know: it moves nothing, and is counted as a sign that the
    /// agent's format may have changed ([`unread`]).
    Unread(unread::UnreadRecord),
    /// What a model call used (`usage::Call`): it moves nothing but the session's usage, and it
    /// outlives a `Reset` (a rewound or re-read history was still paid for; its id keeps a
    /// response read again from counting twice).
    Usage(crate::model::usage::Call),
}

/// A usage record read (`usage::Call`), or, when a figure in it is not a token count (negative,
/// text, absurd), the record `usage` counted as unread: a hostile figure reaches no sum.
pub fn usage_observation(
    call: Result<crate::model::usage::Call, String>,
    usage: &serde_json::Value,
) -> Observation {
    match call {
        Ok(call) => Observation::Usage(call),
        Err(what) => unread::UnreadRecord::of(&what, usage).observation(),
    }
}

/// Bookkeeping facts. Every field is optional: a line states what it states.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Info {
    pub session_id: Option<String>,
    /// The working folder this line was written in. The session's folder is the first one seen.
    pub cwd: Option<String>,
    pub branch: Option<String>,
    pub cli_version: Option<String>,
    pub model: Option<String>,
    pub title: Option<Title>,
    /// Set when the session is a non-interactive run (`claude -p`, `codex exec`, `gemini -p`,
    /// `opencode run`), which has no Needs-you state: it works, then it closes.
    pub print_mode: Option<bool>,
    /// Set when this transcript belongs to a sub-agent of another session, which it rolls up into.
    pub parent_session: Option<String>,
    /// When the session started, where the format says so.
    pub started_at: Option<Timestamp>,
}

/// A title and where it came from; a better source replaces a worse one, a later title of the
/// same source replaces an earlier one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Title {
    pub text: String,
    pub source: TitleSource,
}

/// Ordered from weakest to strongest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TitleSource {
    /// An old-style summary line (Claude Code 1.x/2.0 `summary`).
    Summary,
    /// A title the model or the agent generated (`ai-title`, Gemini `summary`).
    Generated,
    /// A name from the agent's index (Codex `session_index.jsonl`, `thread_name_updated`).
    Named,
    /// A title the user set (`/rename`, `custom-title`).
    Custom,
}

/// A turn record with its time. `at` is `None` for formats without per-record times (Cursor); the
/// tracker then dates the record by the file's last write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub at: Option<Timestamp>,
    pub kind: RecordKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordKind {
    /// A real prompt typed by the user (not injected context, not a command echo).
    Prompt { text: String },
    /// The model called a tool.
    ToolCall {
        call_id: String,
        name: String,
        /// A short description for people, e.g. the command of a shell call.
        detail: Option<String>,
        /// The call's input as the transcript records it: the field `detail` is taken from (the
        /// whole command of a shell call, the path of a file call), bounded by [`CallInput::of`].
        input: Option<CallInput>,
        kind: CallKind,
    },
    /// A tool call's result arrived.
    ToolResult { call_id: String, rejected: bool },
    /// The model wrote text (no tool call in the same record).
    ModelText,
    /// The model is thinking or reasoning: more is coming.
    ModelThinking,
    /// An explicit turn start (Codex `task_started`).
    TurnStarted { turn_id: Option<String> },
    /// An explicit turn end (Claude Code `turn_duration`, Codex `task_complete`, …).
    TurnEnded { turn_id: Option<String> },
    /// The user interrupted the turn.
    Interrupted { turn_id: Option<String> },
    /// The turn ended in an error the model will not retry.
    TurnFailed { message: Option<String> },
    /// The model hit an API error and is retrying.
    Retrying,
    /// The conversation is being compacted; the turn goes on.
    Compacting,
    /// The agent recorded the session's end.
    SessionEnded,
    /// Turn activity that does not say what comes next (docs/states.md §3 rule 7): the session
    /// reads Working for the window after it, then Needs you.
    Unsettled,
    /// The agent left work running in the background, which wakes it when it ends (Claude Code's
    /// `run_in_background`, docs/formats.md §1): a turn that ends while it runs is not handed
    /// back. Not a turn record: it dates nothing.
    BackgroundStarted { id: String, work: Background },
    /// That background work ended (its notification reached the agent).
    BackgroundEnded { id: String },
}

/// What runs in the background.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Background {
    /// A shell command.
    Command,
    /// A sub-agent.
    Agent,
}

impl Background {
    /// "1 background command", "2 background agents".
    pub fn count(self, n: usize) -> String {
        let noun = match self {
            Background::Command => "command",
            Background::Agent => "agent",
        };
        format!("{n} background {noun}{}", if n == 1 { "" } else { "s" })
    }
}

/// The most of a call's input that is kept: a command longer than this is kept cut short.
pub const INPUT_BYTES: usize = 8 * 1024;

/// A tool call's input as the transcript records it (the command of a shell call, the path of a
/// file call), bounded: at most [`INPUT_BYTES`], cut on a character boundary, and `cut` says
/// when there was more. Kept as written otherwise, control characters included: whoever shows it
/// escapes it, and a screen that draws it must agree with it (docs/states.md §8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallInput {
    pub text: String,
    pub cut: bool,
}

impl CallInput {
    /// `text`, kept whole up to [`INPUT_BYTES`]; `None` for an empty one.
    pub fn of(text: &str) -> Option<CallInput> {
        if text.trim().is_empty() {
            return None;
        }
        if text.len() <= INPUT_BYTES {
            return Some(CallInput {
                text: text.to_string(),
                cut: false,
            });
        }
        let mut end = INPUT_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        Some(CallInput {
            text: text[..end].to_string(),
            cut: true,
        })
    }
}

/// What kind of tool call this is, as far as the state rules care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// An ordinary tool: running, or (indistinguishably on disk) waiting for permission.
    Plain,
    /// A question to the user (Claude Code `AskUserQuestion`, Codex `request_user_input`,
    /// OpenCode `question`).
    Question,
    /// A plan waiting for approval (Claude Code `ExitPlanMode`).
    PlanApproval,
    /// A sub-agent (Claude Code `Agent`/`Task`, OpenCode `task`).
    SubAgent,
    /// A call that asked for escalated permissions (Codex `require_escalated`): very likely a
    /// permission prompt, but not proven.
    Escalated,
    /// A call whose permission dialog the agent itself wrote as open (Copilot CLI's
    /// `permission.requested`): a permission prompt, proven, until the call's result or an
    /// approval that marks it running again.
    Asking,
}

/// Why a line could not be read. A malformed line is data, counted as a problem; it never fails
/// the session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("line is not valid JSON: {0}")]
    NotJson(String),
    #[error("line is not valid UTF-8")]
    NotUtf8,
    #[error("line has an unexpected shape: {0}")]
    Shape(&'static str),
}

/// What a recognised agent process is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessRole {
    /// An interactive session (a TUI): it vouches for its sessions.
    Interactive,
    /// A print-mode run (`claude -p`, `codex exec`): it vouches while it runs.
    Print,
    /// A background server or daemon (Codex `app-server`, `claude daemon`). It may write
    /// transcripts, but it never vouches: presence keys on the TUI (docs/formats.md §9).
    Daemon,
    /// A helper run of the CLI (`claude agents --json`, `codex login`, an npm shim parent): not a
    /// session at all.
    Helper,
}

/// An agent process, as an adapter recognised it from its executable and argv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentProcess {
    pub agent: AgentKind,
    pub role: ProcessRole,
    /// The folder named on the command line (`codex -C`, `cursor-agent --workspace`,
    /// `opencode <dir>`), as written; relative to the process's cwd when not absolute.
    pub folder_arg: Option<String>,
    /// The session named on the command line (`--resume <id>`, `--session-id <id>`, …).
    pub session_arg: Option<String>,
}

/// Recognises a process of one of the built-in agents.
pub fn recognise(process: &ProcessInfo) -> Option<AgentProcess> {
    BUILT_IN.recognise(process)
}

/// True for a UUID in its 8-4-4-4-12 hexadecimal spelling: a session id on a command line, as
/// opposed to `latest`, a list number or a prompt.
pub fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Where the script sits in the arguments a JavaScript runtime (`node`, `bun`) was given: the
/// first argument that is not one of the runtime's own options, a few of which take a value.
pub fn runtime_script_index(args: &[String]) -> usize {
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        if !arg.starts_with('-') {
            break;
        }
        let takes_value = matches!(
            arg.as_str(),
            "-r" | "--require" | "--import" | "--loader" | "--experimental-loader"
        );
        index += if takes_value { 2 } else { 1 };
    }
    index
}

/// The base name of an executable path or argv[0], without a `.exe` suffix, lower-cased.
pub fn program_name(path: &str) -> String {
    let base = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let base = base.strip_suffix(".exe").unwrap_or(base);
    base.to_ascii_lowercase()
}

/// Truncates `text` to at most `max_chars` characters on a character boundary, adding `…` when cut,
/// and folds whitespace runs into single spaces so a detail fits on one line.
pub fn one_line(text: &str, max_chars: usize) -> String {
    let folded: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() <= max_chars {
        return folded;
    }
    let mut cut: String = folded.chars().take(max_chars.saturating_sub(1)).collect();
    cut.push('…');
    cut
}
