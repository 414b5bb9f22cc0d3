//! The Pi coding agent (`@mariozechner/pi-coding-agent`): its session files and its processes
//! (docs/formats.md §12).
//!
//! Pi keeps one JSONL file per session under `~/.pi/agent/sessions/--<folder>--/`, named
//! `<start time>_<session uuid>.jsonl`: a `session` header (id, cwd), then entries that form a
//! tree through `id` and `parentId`, appended one a line. A `message` entry holds one message of
//! the conversation: the person's prompt, the model's reply (its `stopReason` says whether the
//! turn goes on: `toolUse`, or ends: `stop`, `length`, `aborted`, `error`), or a tool's result.
//! The file is written only once the first reply has come: before it, a session has no file.
//!
//! Pi has no permission or question dialog of its own (its README: "No permission popups"); an
//! extension may draw one, and on disk it looks like the running tool it holds back. Its
//! terminal title (`π - <folder>`) never changes with the state, so Slate reads none. Everything
//! here is a pure function of bytes and names: the sources read the files.

use serde_json::Value;

use super::{
    one_line, program_name, AgentProcess, Base, CallInput, CallKind, Description, Found, Info,
    Layout, LineError, LineParser, Observation, Processes, Record, RecordKind, Root, Sessions,
    Watch,
};
use crate::agents::unread::UnreadRecord;
use crate::agents::usage_observation;
use crate::agents::ProcessRole;
use crate::model::usage::{self, Call};
use crate::model::{AgentKind, ProcessInfo, Timestamp};

/// How many characters of a prompt an observation keeps.
const PROMPT_CHARS: usize = 200;
/// How many characters of a tool call's detail an observation keeps.
const DETAIL_CHARS: usize = 120;

/// The Pi coding agent, as Slate knows it (docs/formats.md §12).
pub static DESCRIPTION: Description = Description {
    id: "pi",
    name: "Pi",
    product: "Pi coding agent",
    processes: Processes {
        programs: &["pi"],
        recognise,
        relaunch_parent: None,
    },
    // `$PI_CODING_AGENT_DIR` replaces `~/.pi/agent` whole (docs/formats.md §12.1).
    root: Root {
        candidates: &[
            (Base::Var("PI_CODING_AGENT_DIR"), ""),
            (Base::Home, ".pi/agent"),
        ],
        variables: &[],
    },
    watch: Watch {
        folders: &[("sessions", true)],
        files: &[".jsonl"],
    },
    sessions: Sessions::Transcripts(Layout {
        folders: &[&["sessions", "*"]],
        classify: classify_transcript,
        parser: |_| Box::new(SessionReader),
        names: None,
        whole_file: None,
        full_id: None,
        project: None,
        beside: None,
    }),
    listing: None,
    titles: None,
    screens: None,
    keys: None,
    hooks: None,
    recorded: &["0.73.1"],
};

/// The Pi coding agent itself.
pub const KIND: AgentKind = AgentKind::of(&DESCRIPTION);

/// `sessions/--<folder>--/<start time>_<session uuid>.jsonl` is a session's file. The folder's
/// name spells the cwd with `/` as `-`, which cannot be read back (a `-` in a folder name looks
/// the same): the header's `cwd` says it.
pub fn classify_transcript(parts: &[&str]) -> Option<Found> {
    let ["sessions", folder, file] = parts else {
        return None;
    };
    if !(folder.len() >= 4 && folder.starts_with("--") && folder.ends_with("--")) {
        return None;
    }
    session_file_id(file).map(Found::main)
}

/// The session's uuid in a file name `<start time>_<uuid>.jsonl`.
pub fn session_file_id(file_name: &str) -> Option<String> {
    let stem = file_name.strip_suffix(".jsonl")?;
    let (started, id) = stem.rsplit_once('_')?;
    (!started.is_empty() && super::is_uuid(id)).then(|| id.to_ascii_lowercase())
}

/// Recognises a Pi process. Pi sets its process title to `pi`, which replaces its whole command
/// line: what the table shows is `pi` run by Node (`/proc/<pid>/exe` is `node`). Before it does,
/// or where the title is not written, the command line is `node …/pi-coding-agent/dist/cli.js`.
/// A program of another kind that is called `pi` is not Pi: its executable is not a runtime.
pub fn recognise(process: &ProcessInfo) -> Option<AgentProcess> {
    let first = process.cmd.first()?;
    let runtime = |path: &str| matches!(program_name(path).as_str(), "node" | "nodejs" | "bun");
    let titled = first == "pi" && process.exe.as_deref().is_some_and(runtime);
    let script = runtime(first)
        && process
            .cmd
            .iter()
            .skip(1)
            .find(|arg| !arg.starts_with('-'))
            .is_some_and(|script| {
                let script = script.replace('\\', "/");
                script.contains("/pi-coding-agent/") || script.ends_with("/bin/pi")
            });
    if !(titled || script) {
        return None;
    }
    let print = process
        .cmd
        .iter()
        .any(|arg| matches!(arg.as_str(), "-p" | "--print"));
    Some(AgentProcess {
        agent: KIND,
        role: if print {
            ProcessRole::Print
        } else {
            ProcessRole::Interactive
        },
        folder_arg: None,
        session_arg: None,
    })
}

/// Reads a Pi session file a line at a time. Each line stands alone: the reader keeps nothing
/// between lines.
#[derive(Debug, Default)]
pub struct SessionReader;

impl LineParser for SessionReader {
    fn feed(&mut self, line: &[u8]) -> Result<Vec<Observation>, LineError> {
        observe(line)
    }

    fn restart(&mut self) {}
}

/// Reads one line of a Pi session file into observations.
pub fn observe(line: &[u8]) -> Result<Vec<Observation>, LineError> {
    let text = std::str::from_utf8(line).map_err(|_| LineError::NotUtf8)?;
    let value: Value =
        serde_json::from_str(text).map_err(|error| LineError::NotJson(error.to_string()))?;
    let entry = value.as_object().ok_or(LineError::Shape("not an object"))?;
    let kind = entry
        .get("type")
        .and_then(Value::as_str)
        .ok_or(LineError::Shape("no type"))?;
    let at = entry
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(Timestamp::parse_rfc3339);
    let text_of = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_string);
    match kind {
        "session" => Ok(vec![Observation::Info(Info {
            session_id: text_of("id").filter(|id| super::is_uuid(id)),
            cwd: text_of("cwd").filter(|cwd| !cwd.is_empty()),
            started_at: at,
            ..Info::default()
        })]),
        "model_change" => Ok(vec![Observation::Info(Info {
            model: text_of("modelId"),
            ..Info::default()
        })]),
        "message" => {
            let message = entry
                .get("message")
                .and_then(Value::as_object)
                .ok_or(LineError::Shape("a message entry without its message"))?;
            let mut out = read_message(message, at);
            out.extend(usage(entry.get("id").and_then(Value::as_str), message));
            Ok(out)
        }
        // The thinking level, a compaction, a branch summary, a label, an extension's own
        // entries: bookkeeping that says nothing of the turn.
        "thinking_level_change"
        | "compaction"
        | "branch_summary"
        | "label"
        | "session_info"
        | "custom"
        | "custom_message" => Ok(Vec::new()),
        _ => Ok(vec![UnreadRecord::of_type(
            "type",
            &Value::from(kind),
            &value,
        )
        .observation()]),
    }
}

/// What the model's reply used (docs/formats.md §12.5): its `usage`, with the cost Pi wrote from
/// its own price list (`cost.total`), under the entry's id.
fn usage(id: Option<&str>, message: &serde_json::Map<String, Value>) -> Option<Observation> {
    if message.get("role").and_then(Value::as_str) != Some("assistant") {
        return None;
    }
    let usage = message.get("usage").filter(|usage| !usage.is_null())?;
    let model = message.get("model").and_then(Value::as_str);
    let call = usage::tokens(usage, ["input", "output", "cacheRead", "cacheWrite"]).map(|tokens| {
        let cost = usage.get("cost").and_then(|cost| cost.get("total"));
        Call::response(id.map(str::to_owned), model.map(str::to_owned), tokens)
            .with_cost(usage::cost_usd(cost))
    });
    Some(usage_observation(call, usage))
}

/// One message of the conversation: a prompt, the model's reply, or a tool's result.
fn read_message(
    message: &serde_json::Map<String, Value>,
    at: Option<Timestamp>,
) -> Vec<Observation> {
    let record = |kind| Observation::Record(Record { at, kind });
    let blocks = message
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let texts = || {
        blocks
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
    };
    match message.get("role").and_then(Value::as_str) {
        Some("user") => {
            // A prompt may also be a plain string.
            let text = match message.get("content") {
                Some(Value::String(text)) => text.clone(),
                _ => texts().collect::<Vec<_>>().join(" "),
            };
            vec![record(RecordKind::Prompt {
                text: one_line(&text, PROMPT_CHARS),
            })]
        }
        Some("assistant") => {
            let mut out = Vec::new();
            if let Some(model) = message.get("model").and_then(Value::as_str) {
                out.push(Observation::Info(Info {
                    model: Some(model.to_string()),
                    ..Info::default()
                }));
            }
            let calls: Vec<RecordKind> = blocks.iter().filter_map(tool_call).collect();
            let wrote = texts().any(|text| !text.trim().is_empty());
            if wrote {
                out.push(record(RecordKind::ModelText));
            }
            let thought = blocks
                .iter()
                .any(|block| block.get("type").and_then(Value::as_str) == Some("thinking"));
            let has_calls = !calls.is_empty();
            out.extend(calls.into_iter().map(record));
            let stop = message.get("stopReason").and_then(Value::as_str);
            match stop {
                Some("stop") | Some("length") => {
                    out.push(record(RecordKind::TurnEnded { turn_id: None }))
                }
                Some("aborted") => out.push(record(RecordKind::Interrupted { turn_id: None })),
                Some("error") => out.push(record(RecordKind::TurnFailed {
                    message: message
                        .get("errorMessage")
                        .and_then(Value::as_str)
                        .map(|text| one_line(text, DETAIL_CHARS)),
                })),
                // `toolUse`: its calls run next. A reply with no reason and nothing in it says
                // only that the model is at work.
                _ if !has_calls && !wrote => out.push(record(if thought {
                    RecordKind::ModelThinking
                } else {
                    RecordKind::Unsettled
                })),
                _ => {}
            }
            out
        }
        Some("toolResult") => match message.get("toolCallId").and_then(Value::as_str) {
            Some(call_id) if !call_id.is_empty() => vec![record(RecordKind::ToolResult {
                call_id: call_id.to_string(),
                rejected: false,
            })],
            _ => Vec::new(),
        },
        // A `!` command the person ran themselves, an extension's message: not the model's turn.
        _ => Vec::new(),
    }
}

/// A `toolCall` block of the model's reply.
fn tool_call(block: &Value) -> Option<RecordKind> {
    if block.get("type").and_then(Value::as_str) != Some("toolCall") {
        return None;
    }
    let call_id = block.get("id").and_then(Value::as_str)?;
    let name = block.get("name").and_then(Value::as_str)?;
    if call_id.is_empty() || name.is_empty() {
        return None;
    }
    let arguments = block.get("arguments");
    let field = |key: &str| {
        arguments
            .and_then(|args| args.get(key))
            .and_then(Value::as_str)
    };
    let input = field("command")
        .or_else(|| field("path"))
        .or_else(|| field("question"));
    Some(RecordKind::ToolCall {
        call_id: call_id.to_string(),
        name: name.to_string(),
        detail: input.map(|text| one_line(text, DETAIL_CHARS)),
        input: input.and_then(CallInput::of),
        // The `question` tool of the extension Pi ships as an example asks the person.
        kind: if name == "question" {
            CallKind::Question
        } else {
            CallKind::Plain
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_give_the_session_uuid() {
        assert_eq!(
            session_file_id("2026-12-02T01-19-28-242Z_01a23455-cdee-723b-9219-01622cc399e7.jsonl")
                .as_deref(),
            Some("01a23455-cdee-723b-9219-01622cc399e7")
        );
        assert_eq!(
            session_file_id("_01a23455-cdee-723b-9219-01622cc399e7.jsonl"),
            None
        );
        assert_eq!(session_file_id("2026_01a23455.jsonl"), None);
        assert_eq!(
            session_file_id("2026_01a23455-cdee-723b-9219-01622cc399e7.json"),
            None
        );
        assert!(classify_transcript(&[
            "sessions",
            "--x--",
            "a_01a23455-cdee-723b-9219-01622cc399e7.jsonl"
        ])
        .is_some());
        assert!(classify_transcript(&[
            "sessions",
            "x",
            "a_01a23455-cdee-723b-9219-01622cc399e7.jsonl"
        ])
        .is_none());
        assert!(classify_transcript(&[
            "bin",
            "--x--",
            "a_01a23455-cdee-723b-9219-01622cc399e7.jsonl"
        ])
        .is_none());
    }
}
