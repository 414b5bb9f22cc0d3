//! Reading a Cline session's `<id>.messages.json` (docs/formats.md §15.2): one JSON document,
//! rewritten whole on every change, whose `messages` are Anthropic-style blocks.

use serde_json::Value;

use crate::agents::usage_observation;
use crate::agents::{
    one_line, CallInput, CallKind, Info, LineError, Observation, Record, RecordKind,
};
use crate::model::usage::{self, Call, Tokens};
use crate::model::Timestamp;

/// The most characters of a call's detail.
const DETAIL_CHARS: usize = 120;

/// The most characters of a prompt that are kept.
const PROMPT_CHARS: usize = 200;

/// What a tool result that an interrupt cut short says (Escape while a command runs).
const ABORTED: &str = "Command was aborted";

/// What a tool result refused at its permission dialog says.
const REJECTED: &str = "rejected by the user";

/// The line of the default system prompt that names the session's folder.
const WORKING_DIRECTORY: &str = "Working Directory: ";

/// Reads the whole document into observations: a `Reset` (the file is rewritten, so each read
/// replaces the last), what it says of the session, then its messages in order.
pub fn read_messages(bytes: &[u8]) -> Result<Vec<Observation>, LineError> {
    let text = std::str::from_utf8(bytes).map_err(|_| LineError::NotUtf8)?;
    let document: Value =
        serde_json::from_str(text).map_err(|error| LineError::NotJson(error.to_string()))?;
    let Value::Object(document) = document else {
        return Err(LineError::Shape("the messages file is not a JSON object"));
    };
    let messages = match document.get("messages") {
        Some(Value::Array(messages)) => messages.as_slice(),
        None | Some(Value::Null) => &[],
        Some(_) => return Err(LineError::Shape("`messages` is not an array")),
    };
    let origin = document.get("origin");
    let info = Info {
        session_id: string(document.get("sessionId"))
            .or_else(|| string(origin.and_then(|origin| origin.get("sessionId")))),
        cli_version: string(origin.and_then(|origin| origin.get("version"))),
        cwd: document
            .get("system_prompt")
            .and_then(Value::as_str)
            .and_then(working_directory),
        ..Info::default()
    };
    let mut observations = vec![Observation::Reset, Observation::Info(info)];
    for message in messages {
        read_message(message, &mut observations);
        observations.extend(usage(message));
    }
    Ok(observations)
}

/// What an assistant message's call used: its `metrics` (and their `cost`, where Cline wrote
/// one), under the message's id, so the document read again counts it once (docs/formats.md
/// §15.6).
fn usage(message: &Value) -> Option<Observation> {
    if message.get("role").and_then(Value::as_str) != Some("assistant") {
        return None;
    }
    let metrics = message.get("metrics").filter(|usage| !usage.is_null())?;
    let names = [
        "inputTokens",
        "outputTokens",
        "cacheReadTokens",
        "cacheWriteTokens",
    ];
    let call = usage::tokens(metrics, names).map(|read| {
        let model = message.get("modelInfo").and_then(|info| info.get("id"));
        // `inputTokens` counts the cached input too (checked live through an OpenAI-compatible
        // provider): what is left is fresh input.
        let tokens = Tokens {
            input: read
                .input
                .saturating_sub(read.cache_read)
                .saturating_sub(read.cache_write),
            ..read
        };
        Call::response(string(message.get("id")), string(model), tokens)
            .with_cost(usage::cost_usd(metrics.get("cost")))
    });
    Some(usage_observation(call, metrics))
}

/// The folder the default system prompt names (`Working Directory: <path>` in its `<env>`
/// block); a prompt replaced with `--system` names none.
fn working_directory(prompt: &str) -> Option<String> {
    prompt.lines().find_map(|line| {
        let (_, rest) = line.split_once(WORKING_DIRECTORY)?;
        let path = rest.trim();
        path.starts_with('/').then(|| path.to_string())
    })
}

fn string(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
        .map(str::to_string)
}

/// One message's records: a prompt, the model's text, thinking and calls, or the tools' results.
fn read_message(message: &Value, out: &mut Vec<Observation>) {
    let at = message
        .get("ts")
        .and_then(Value::as_i64)
        .filter(|ms| *ms > 0)
        .map(Timestamp);
    let mut push = |kind: RecordKind| out.push(Observation::Record(Record { at, kind }));
    let blocks = match message.get("content") {
        Some(Value::Array(blocks)) => blocks.as_slice(),
        Some(Value::String(text)) => {
            if message.get("role").and_then(Value::as_str) == Some("user") {
                if let Some(prompt) = user_input(text) {
                    push(RecordKind::Prompt { text: prompt });
                }
            } else if !text.trim().is_empty() {
                push(RecordKind::ModelText);
            }
            return;
        }
        _ => return,
    };
    match message.get("role").and_then(Value::as_str) {
        Some("user") => {
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                        if let Some(prompt) = user_input(text) {
                            push(RecordKind::Prompt { text: prompt });
                        }
                    }
                    Some("tool_result") => {
                        let Some(call_id) = string(block.get("tool_use_id")) else {
                            continue;
                        };
                        let said = result_text(block.get("content"));
                        push(RecordKind::ToolResult {
                            call_id,
                            rejected: said.contains(REJECTED),
                        });
                        if said.contains(ABORTED) {
                            push(RecordKind::Interrupted { turn_id: None });
                        }
                    }
                    _ => {}
                }
            }
        }
        Some("assistant") => {
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                        if !text.trim().is_empty() {
                            push(RecordKind::ModelText);
                        }
                    }
                    Some("thinking" | "redacted_thinking" | "reasoning") => {
                        push(RecordKind::ModelThinking)
                    }
                    Some("tool_use") => {
                        if let Some(call) = tool_call(block) {
                            push(call);
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// The person's words in a prompt: what `<user_input …>` wraps. A user text without it is the
/// CLI's own (a mode notice, context it adds) and no prompt.
fn user_input(text: &str) -> Option<String> {
    let start = text.find("<user_input")?;
    let rest = &text[start..];
    let open_end = rest.find('>')? + 1;
    let inner = &rest[open_end..];
    let inner = inner
        .rfind("</user_input>")
        .map_or(inner, |end| &inner[..end]);
    Some(one_line(inner, PROMPT_CHARS))
}

/// A tool result's content as text: a string, or the JSON of whatever else it holds.
fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// A `tool_use` block as a call: `run_commands` names its commands (one a line), `ask_question`
/// is a question, a file tool its path.
fn tool_call(block: &Value) -> Option<RecordKind> {
    let call_id = string(block.get("id"))?;
    let name = string(block.get("name"))?;
    let input = block.get("input");
    let field = |key: &str| input.and_then(|input| input.get(key));
    let text = match name.as_str() {
        "run_commands" => match field("commands") {
            Some(Value::Array(commands)) => {
                let commands: Vec<&str> = commands.iter().filter_map(Value::as_str).collect();
                Some(commands.join("\n"))
            }
            Some(Value::String(command)) => Some(command.clone()),
            _ => None,
        },
        "ask_question" => string(field("question")),
        _ => ["path", "file_path", "url", "query"]
            .iter()
            .find_map(|key| string(field(key))),
    };
    let kind = match name.as_str() {
        "ask_question" => CallKind::Question,
        _ => CallKind::Plain,
    };
    Some(RecordKind::ToolCall {
        call_id,
        detail: text.as_deref().map(|text| one_line(text, DETAIL_CHARS)),
        input: text.as_deref().and_then(CallInput::of),
        name,
        kind,
    })
}
