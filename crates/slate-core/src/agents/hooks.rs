//! An agent's own hooks, as Slate reads them (docs/hooks.md): where the agent keeps its hook
//! configuration and in which format, which of its events Slate listens to and what each means
//! (a permission or a question waiting, a tool starting or ending, a prompt, a turn's end), and
//! how a hook's event, read as JSON, becomes a [`HookReport`] and then a [`HookSeen`] the tracker
//! is fed.
//!
//! Hooks are opt-in and observe only: Slate's hook never answers for the agent. The description
//! is data; `settings` edits a configuration's text (pure text to text), `spans` finds values in
//! a JSON text. Reading and writing the files, running `slate hook` and posting its report are
//! the `slate` crate's `hooks`.

pub mod decision;
pub mod settings;
mod spans;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agents::Base;
use crate::model::{SessionKey, Timestamp};

pub use spans::{ParseError, SETTINGS_LIMIT};

/// The most any text field of a hook report may hold, in bytes.
pub const FIELD_LIMIT: usize = 512;
/// The most a session id in a hook report may hold, in bytes: the ids' limit everywhere
/// (`limits::ID_MAX`). A longer one is refused, never cut.
pub const ID_LIMIT: usize = crate::limits::ID_MAX;
/// The most an event's JSON may hold for `slate hook` to read it.
pub const EVENT_LIMIT: usize = 1024 * 1024;

/// What an agent's hooks are, for an agent that has them.
#[derive(Debug)]
pub struct Hooks {
    /// The configuration file: the first candidate whose base the environment names, joined
    /// with its path under it.
    pub file: &'static [(Base, &'static str)],
    pub format: HookFormat,
    /// The events Slate installs a hook for, with what each means.
    pub events: &'static [(&'static str, Meaning)],
    /// JSON pointers into an event, tried in order: the session's id, the tool's name, what the
    /// call does (its command or file), and a notification's type.
    pub session: &'static [&'static str],
    pub tool: &'static [&'static str],
    pub detail: &'static [&'static str],
    pub notification: &'static [&'static str],
    /// The agent's tools whose call is a question to the person: a permission or a tool start
    /// naming one says a question waits.
    pub questions: &'static [&'static str],
    /// What the agent asks of a person before new hooks run, and how to give it.
    pub trust: Option<&'static str>,
    /// True when the agent runs a hook's command through a shell and takes a failing command
    /// for a refusal (Gemini CLI denies a tool whose hook exits 2 or more, with the shell's
    /// `not found` as the reason): the command then ends in [`GUARD`], so a Slate that was
    /// uninstalled or moved without `slate hooks remove` still blocks nothing.
    pub guarded: bool,
    /// How the events were checked.
    pub verified: Verified,
}

/// How an agent's events were checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verified {
    /// In the pinned CLI's shipped code.
    ShippedCode,
    /// From the agent's documentation only: the CLI cannot run here.
    Documentation,
}

/// The shape of an agent's hook configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookFormat {
    /// `{"hooks": {"Event": [{"hooks": [{"type": "command", "command": …, "timeout": N}]}]}}`
    /// (Claude Code's settings, Codex's hooks.json, Gemini CLI's settings): `timeout` in the
    /// agent's unit.
    Matchers { timeout: u64 },
    /// `{"version": 1, "hooks": {"event": [{"command": …}]}}` (cursor-agent's hooks.json).
    Commands,
    /// `{"hooks": {"event": [{"type": "command", "bash": …, "timeoutSec": N}]}}` (Copilot CLI's
    /// settings): one command an item, its shell line under `bash`, `timeoutSec` in seconds.
    Bash { timeout_sec: u64 },
    /// A plugin file of Slate's own that forwards the agent's events (OpenCode).
    Plugin,
    /// A folder of hooks, one a file named after its event (Cline CLI's): Slate's are shell
    /// scripts of its own, each its own whole, beside the person's. `file` names the folder.
    Files,
}

/// What an event means for a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Meaning {
    /// A permission dialog is open (a question when the tool asks one).
    Permission,
    /// A question to the person is open.
    Question,
    /// A notification: what it means depends on its type (`notification`).
    Notification,
    ToolStart,
    ToolEnd,
    /// The person sent a prompt.
    Prompt,
    TurnEnd,
    SessionStart,
    SessionEnd,
}

/// What a hook event says of its session, once read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// A permission dialog waits for the person.
    Permission,
    /// A question waits for the person.
    Question,
    /// The agent works: a tool started or ended, or a prompt came in.
    Working,
    TurnEnded,
    /// Bookkeeping only: the session started or ended (its process decides).
    Lifecycle,
}

impl Signal {
    /// True for a dialog that waits for the person: a permission or a question.
    pub fn is_prompt(self) -> bool {
        matches!(self, Signal::Permission | Signal::Question)
    }
}

/// What `slate hook` passes on of one event: the agent, the event's name and the few fields
/// Slate reads, each bounded and free of control characters. It is what `POST /hooks` takes,
/// and nothing else: a field it does not name is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookReport {
    pub agent: String,
    pub event: String,
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notification: Option<String>,
}

/// One hook event as the tracker takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSeen {
    pub key: SessionKey,
    /// The event's name, as the agent calls it.
    pub event: String,
    pub signal: Signal,
    pub tool: Option<String>,
    pub detail: Option<String>,
    /// When Slate received it.
    pub at: Timestamp,
}

/// `text` cut to at most `limit` bytes on a character boundary, with control and invisible
/// characters (`limits::is_invisible`: bidi overrides, tag characters and the like) replaced by
/// spaces.
pub fn clean(text: &str, limit: usize) -> String {
    let mut out = String::new();
    for ch in text.chars() {
        let ch = if ch.is_control() || crate::limits::is_invisible(ch) {
            ' '
        } else {
            ch
        };
        if out.len() + ch.len_utf8() > limit {
            break;
        }
        out.push(ch);
    }
    out
}

/// The first of `pointers` that names a string (or a number) in `value`.
fn first(value: &Value, pointers: &[&str], limit: usize) -> Option<String> {
    pointers.iter().find_map(|pointer| {
        let found = value.pointer(pointer)?;
        let text = match found {
            Value::String(text) => text.clone(),
            Value::Number(number) => number.to_string(),
            _ => return None,
        };
        let text = clean(text.trim(), limit);
        (!text.trim().is_empty()).then_some(text)
    })
}

/// A session id Slate accepts from a hook: letters, digits and `-_.:`, at most `ID_LIMIT` bytes.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= ID_LIMIT
        && id
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b':'))
}

impl Hooks {
    /// What the event named `event` means, when Slate listens to it.
    pub fn meaning(&self, event: &str) -> Option<Meaning> {
        self.events
            .iter()
            .find(|(name, _)| *name == event)
            .map(|(_, meaning)| *meaning)
    }

    /// The report of one event, read from its JSON: `None` for an event Slate does not listen
    /// to, or one without a usable session id: an id longer than [`ID_LIMIT`] is refused whole,
    /// never cut to an id that might be another session's.
    pub fn report(&self, agent: &str, event: &str, value: &Value) -> Option<HookReport> {
        self.meaning(event)?;
        let session_id = first(value, self.session, EVENT_LIMIT)?;
        if !valid_id(&session_id) {
            return None;
        }
        Some(HookReport {
            agent: agent.to_string(),
            event: event.to_string(),
            session_id,
            tool: first(value, self.tool, FIELD_LIMIT),
            detail: first(value, self.detail, FIELD_LIMIT),
            notification: first(value, self.notification, FIELD_LIMIT),
        })
    }

    /// What a report says of its session (`None` for an event Slate does not listen to, or a
    /// notification it does not read).
    pub fn signal(&self, report: &HookReport) -> Option<Signal> {
        let question = |tool: Option<&str>| tool.is_some_and(|tool| self.questions.contains(&tool));
        let tool = report.tool.as_deref();
        Some(match self.meaning(&report.event)? {
            Meaning::Permission if question(tool) => Signal::Question,
            Meaning::Permission => Signal::Permission,
            Meaning::Question => Signal::Question,
            Meaning::Notification => {
                let kind = report.notification.as_deref()?.to_ascii_lowercase();
                if kind.contains("permission") {
                    Signal::Permission
                } else if kind.contains("elicitation") || kind.contains("input") {
                    Signal::Question
                } else if kind.contains("idle") {
                    Signal::TurnEnded
                } else {
                    return None;
                }
            }
            Meaning::ToolStart if question(tool) => Signal::Question,
            Meaning::ToolStart | Meaning::ToolEnd | Meaning::Prompt => Signal::Working,
            Meaning::TurnEnd => Signal::TurnEnded,
            Meaning::SessionStart | Meaning::SessionEnd => Signal::Lifecycle,
        })
    }
}

/// The reading of a report for the tracker: the report's session under `key`, at `at`.
pub fn seen(
    hooks: &Hooks,
    key: SessionKey,
    report: &HookReport,
    at: Timestamp,
) -> Option<HookSeen> {
    let signal = hooks.signal(report)?;
    Some(HookSeen {
        key,
        event: clean(&report.event, 64),
        signal,
        tool: report.tool.as_deref().map(|tool| clean(tool, FIELD_LIMIT)),
        detail: report
            .detail
            .as_deref()
            .map(|detail| clean(detail, FIELD_LIMIT)),
        at,
    })
}

/// The words of the command a hook runs: `slate hook <agent> <event>`, after the program.
pub fn command_words(agent: &str, event: &str) -> String {
    format!("hook {agent} {event}")
}

/// What a guarded command ends in: whatever becomes of the program, the shell prints nothing
/// and exits 0.
pub const GUARD: &str = " 2>/dev/null || true";

/// The command line a hook runs: the program (quoted for a POSIX shell) and its words, and
/// [`GUARD`] after them when `guarded`.
pub fn command(program: &str, agent: &str, event: &str, guarded: bool) -> String {
    let quoted = if program
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'/' | b'.' | b'_' | b'-'))
    {
        program.to_string()
    } else {
        format!("'{}'", program.replace('\'', r"'\''"))
    };
    let guard = if guarded { GUARD } else { "" };
    format!("{quoted} {}{guard}", command_words(agent, event))
}

/// True for a command Slate's `command` wrote for `agent`, whatever the program's path: a
/// program whose file name is `slate` followed by `hook <agent> <event>`.
pub fn is_slates(command: &str, agent: &str) -> Option<String> {
    let command = command.trim();
    let command = command.strip_suffix(GUARD).unwrap_or(command);
    let (program, rest) = if let Some(quoted) = command.strip_prefix('\'') {
        let end = quoted.rfind("' ")?;
        (&quoted[..end], &quoted[end + 2..])
    } else {
        command.split_once(' ')?
    };
    let name = program.rsplit('/').next()?;
    if name != "slate" {
        return None;
    }
    let mut words = rest.split_whitespace();
    (words.next()? == "hook" && words.next()? == agent).then_some(())?;
    let event = words.next()?;
    // A decision hook's entry (`slate hooks install --answer`) ends in its flag.
    match words.next() {
        None => Some(event.to_string()),
        Some(decision::ANSWER_FLAG) => words.next().is_none().then(|| event.to_string()),
        Some(_) => None,
    }
}

/// True for a command Slate's [`answer_command`] wrote: a decision hook's.
pub fn is_answer(command: &str) -> bool {
    let command = command.trim();
    let command = command.strip_suffix(GUARD).unwrap_or(command);
    command.ends_with(&format!(" {}", decision::ANSWER_FLAG))
}

/// The command line of a decision hook: [`command`]'s, unguarded (a decision hook must print
/// what it decides), and [`decision::ANSWER_FLAG`] after it.
pub fn answer_command(program: &str, agent: &str, event: &str) -> String {
    format!(
        "{} {}",
        command(program, agent, event, false),
        decision::ANSWER_FLAG
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_read_back() {
        for program in ["/usr/bin/slate", "/home/a b/it's/slate", "slate"] {
            for guarded in [false, true] {
                let line = command(program, "claude-code", "PreToolUse", guarded);
                assert_eq!(line.ends_with(GUARD), guarded, "{line}");
                assert_eq!(
                    is_slates(&line, "claude-code").as_deref(),
                    Some("PreToolUse"),
                    "{line}"
                );
                assert_eq!(is_slates(&line, "codex"), None);
            }
        }
        // Only Slate's own guard is read back: anything else after the words is not Slate's.
        assert_eq!(
            is_slates("slate hook codex Stop 2>/dev/null || rm -rf ~", "codex"),
            None
        );
        assert_eq!(
            is_slates("/usr/bin/notslate hook codex Stop", "codex"),
            None
        );
        assert_eq!(is_slates("slate hook codex Stop; rm -rf /", "codex"), None);
    }

    #[test]
    fn fields_are_bounded_and_cleaned() {
        assert_eq!(clean("a\u{1b}[31mb\u{202e}c", 64), "a [31mb c");
        assert_eq!(clean("ééé", 5), "éé");
        assert!(!valid_id("../x"));
        assert!(valid_id("ses_01:ab-c.d"));
    }
}
