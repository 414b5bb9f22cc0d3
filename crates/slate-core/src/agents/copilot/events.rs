//! Copilot CLI's `events.jsonl`, one `{"type","data","id","timestamp","parentId"}` event a line,
//! read into observations (docs/formats.md §14.2, §14.3).

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::agents::unread::UnreadRecord;
use crate::agents::usage_observation;
use crate::agents::{
    one_line, CallInput, CallKind, Info, LineError, LineParser, Observation, Record, RecordKind,
};
use crate::model::usage::{self, Call, Counting, Tokens};
use crate::model::Timestamp;

/// How many characters of a prompt an observation keeps.
const PROMPT_CHARS: usize = 200;
/// How many characters of a tool call's detail an observation keeps.
const DETAIL_CHARS: usize = 120;
/// The most call ids a reader remembers between lines; a turn with more calls than this only
/// risks a call observed twice.
const REMEMBERED_CALLS: usize = 1024;

/// The event types of 1.0.102's files that say nothing of the turn; any other type Slate does not
/// read is counted as unread.
const BOOKKEEPING: &[&str] = &[
    "session.usage_record",
    "session.info",
    "system.message",
    "hook.start",
    "hook.end",
    "human_response.recorded",
    "user.abort",
];

/// Reads one session's `events.jsonl`, line by line, in order.
///
/// Copilot writes one `assistant.turn_start`/`assistant.turn_end` pair per model call, so a
/// prompt that runs tools has several; only the pair whose model message called no tool ends the
/// person's turn. The reader keeps that, the calls already observed (a call is stated by the
/// model's message and again when it starts) and the session's own id, whose sub-agents' events
/// are written into the same file and are left out.
#[derive(Debug, Clone, Default)]
pub struct EventsReader {
    /// The newest model message of the open turn called tools: its turn's end is not the end.
    called_tools: bool,
    /// The calls of the prompt so far, as observed, so that `tool.execution_start` does not
    /// state them again and a permission request can name its call.
    calls: HashMap<String, RecordKind>,
}

impl LineParser for EventsReader {
    fn feed(&mut self, line: &[u8]) -> Result<Vec<Observation>, LineError> {
        EventsReader::feed(self, line)
    }

    fn restart(&mut self) {
        *self = EventsReader::new();
    }
}

impl EventsReader {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the next line. Errors are per line and leave the reader usable.
    pub fn feed(&mut self, line: &[u8]) -> Result<Vec<Observation>, LineError> {
        let text = std::str::from_utf8(line).map_err(|_| LineError::NotUtf8)?;
        if text.trim().is_empty() {
            return Ok(Vec::new());
        }
        let value: Value =
            serde_json::from_str(text).map_err(|err| LineError::NotJson(err.to_string()))?;
        let event = value
            .as_object()
            .ok_or(LineError::Shape("line is not a JSON object"))?;
        let kind = event
            .get("type")
            .and_then(Value::as_str)
            .ok_or(LineError::Shape("event has no type"))?;
        let empty = Map::new();
        let data = match event.get("data") {
            Some(Value::Object(data)) => data,
            None | Some(Value::Null) => &empty,
            Some(_) => return Err(LineError::Shape("event data is not an object")),
        };
        // A sub-agent's own calls and messages carry the call that started it; the sub-agent is
        // that one call, open until its result.
        if data.contains_key("parentToolCallId") {
            return Ok(Vec::new());
        }
        let at = event
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(Timestamp::parse_rfc3339);
        let record = |kind: RecordKind| Observation::Record(Record { at, kind });
        let observations = match kind {
            "session.start" | "session.resume" => vec![Observation::Info(start(data, at))],
            "session.context_changed" => vec![Observation::Info(context(data))],
            "session.model_change" => vec![Observation::Info(Info {
                model: text_field(data, "newModel"),
                ..Info::default()
            })],
            "user.message" => {
                self.called_tools = false;
                self.calls.clear();
                match text_field(data, "content") {
                    Some(content) => vec![record(RecordKind::Prompt {
                        text: one_line(&content, PROMPT_CHARS),
                    })],
                    None => Vec::new(),
                }
            }
            "assistant.turn_start" => {
                self.called_tools = false;
                vec![record(RecordKind::TurnStarted {
                    turn_id: text_field(data, "turnId"),
                })]
            }
            "assistant.reasoning" => vec![record(RecordKind::ModelThinking)],
            "assistant.message" => self.message(data, at),
            "tool.execution_start" => {
                let Some(call_id) = text_field(data, "toolCallId") else {
                    return Err(LineError::Shape("tool start without toolCallId"));
                };
                if self.calls.contains_key(&call_id) {
                    Vec::new()
                } else {
                    let name = text_field(data, "toolName").unwrap_or_else(|| "tool".into());
                    let kind = call(call_id.clone(), name, data.get("arguments"));
                    vec![record(self.remember(call_id, kind))]
                }
            }
            // The dialog is open (docs/formats.md §14.3): the call now waits for the person.
            "permission.requested" => self
                .asked(data)
                .map(|kind| vec![record(kind)])
                .unwrap_or_default(),
            "permission.completed" => {
                // Approved: the call runs. Denied or cancelled: its result or the abort follows.
                let approved = data
                    .get("result")
                    .and_then(|result| result.get("kind"))
                    .and_then(Value::as_str)
                    .is_some_and(|kind| kind.starts_with("approved"));
                let known = text_field(data, "toolCallId")
                    .and_then(|call_id| self.calls.get(&call_id))
                    .cloned();
                match known {
                    Some(kind) if approved => vec![record(kind)],
                    _ => Vec::new(),
                }
            }
            "tool.execution_complete" => {
                let Some(call_id) = text_field(data, "toolCallId") else {
                    return Err(LineError::Shape("tool result without toolCallId"));
                };
                let rejected = data.get("success").and_then(Value::as_bool) == Some(false)
                    && data
                        .get("error")
                        .and_then(|error| error.get("code"))
                        .and_then(Value::as_str)
                        .is_some_and(|code| code == "denied" || code == "rejected");
                vec![record(RecordKind::ToolResult { call_id, rejected })]
            }
            "assistant.turn_end" => {
                if self.called_tools {
                    // The tools' results go back to the model in the next pair.
                    Vec::new()
                } else {
                    vec![record(RecordKind::TurnEnded {
                        turn_id: text_field(data, "turnId"),
                    })]
                }
            }
            "abort" => {
                self.called_tools = false;
                vec![record(RecordKind::Interrupted { turn_id: None })]
            }
            "session.error" => vec![record(RecordKind::TurnFailed {
                message: text_field(data, "message").map(|text| one_line(&text, DETAIL_CHARS)),
            })],
            "session.compaction_start" => vec![record(RecordKind::Compacting)],
            "session.shutdown" => {
                let mut out = vec![record(RecordKind::SessionEnded)];
                out.extend(model_metrics(data));
                out
            }
            "session.usage_checkpoint" => model_metrics(data),
            // Usage, hooks, system prompts and the like: bookkeeping seen in 1.0.102's files.
            kind if BOOKKEEPING.contains(&kind) => Vec::new(),
            _ => vec![UnreadRecord::of_type("type", &Value::from(kind), &value).observation()],
        };
        Ok(observations)
    }

    /// A model message: its tool calls, else its text.
    fn message(&mut self, data: &Map<String, Value>, at: Option<Timestamp>) -> Vec<Observation> {
        let mut observations = Vec::new();
        let requests = data.get("toolRequests").and_then(Value::as_array);
        for request in requests.into_iter().flatten() {
            let Some(request) = request.as_object() else {
                continue;
            };
            let Some(call_id) = text_field(request, "toolCallId") else {
                continue;
            };
            let name = text_field(request, "name").unwrap_or_else(|| "tool".into());
            let kind = call(call_id.clone(), name, request.get("arguments"));
            observations.push(Observation::Record(Record {
                at,
                kind: self.remember(call_id, kind),
            }));
        }
        self.called_tools = !observations.is_empty();
        if observations.is_empty() && text_field(data, "content").is_some() {
            observations.push(Observation::Record(Record {
                at,
                kind: RecordKind::ModelText,
            }));
        }
        if let Some(model) = text_field(data, "model") {
            observations.insert(
                0,
                Observation::Info(Info {
                    model: Some(model),
                    ..Info::default()
                }),
            );
        }
        observations
    }

    /// Keeps a call as observed, and gives it back.
    fn remember(&mut self, call_id: String, kind: RecordKind) -> RecordKind {
        if self.calls.len() >= REMEMBERED_CALLS {
            self.calls.clear();
        }
        self.calls.insert(call_id, kind.clone());
        kind
    }

    /// The call a permission request is about, as waiting for the person: the call as the model
    /// made it, else as the request states it (its kind, its whole command, path or URL).
    fn asked(&self, data: &Map<String, Value>) -> Option<RecordKind> {
        let request = data.get("permissionRequest")?.as_object()?;
        let call_id = text_field(request, "toolCallId")?;
        if let Some(RecordKind::ToolCall {
            call_id,
            name,
            detail,
            input,
            ..
        }) = self.calls.get(&call_id).cloned()
        {
            return Some(RecordKind::ToolCall {
                call_id,
                name,
                detail,
                input,
                kind: CallKind::Asking,
            });
        }
        let name = match text_field(request, "kind").as_deref() {
            Some("shell") | None => "bash".to_string(),
            Some(other) => other.to_string(),
        };
        let command = ["fullCommandText", "path", "fileName", "url"]
            .iter()
            .find_map(|key| text_field(request, key));
        Some(RecordKind::ToolCall {
            detail: command.as_deref().map(|text| one_line(text, DETAIL_CHARS)),
            input: command.as_deref().and_then(CallInput::of),
            call_id,
            name,
            kind: CallKind::Asking,
        })
    }
}

/// A tool call from its name and arguments: the command of a shell call, the path of a file
/// call, the message of a question.
fn call(call_id: String, name: String, arguments: Option<&Value>) -> RecordKind {
    let arguments = arguments.and_then(Value::as_object);
    let field = |key: &str| arguments.and_then(|arguments| text_field(arguments, key));
    let input = ["command", "path", "message", "prompt", "pattern", "url"]
        .iter()
        .find_map(|key| field(key));
    let kind = match name.as_str() {
        "ask_user" => CallKind::Question,
        "task" => CallKind::SubAgent,
        _ => CallKind::Plain,
    };
    RecordKind::ToolCall {
        detail: input
            .as_deref()
            .or(field("description").as_deref())
            .map(|text| one_line(text, DETAIL_CHARS)),
        // A question's text is not a call's input a dialog must agree with.
        input: match kind {
            CallKind::Question => None,
            _ => input.as_deref().and_then(CallInput::of),
        },
        call_id,
        name,
        kind,
    }
}

/// `session.start` and `session.resume`: the session, its folder and branch, the CLI's version,
/// the model.
fn start(data: &Map<String, Value>, at: Option<Timestamp>) -> Info {
    let started_at = text_field(data, "startTime")
        .as_deref()
        .and_then(Timestamp::parse_rfc3339);
    Info {
        session_id: text_field(data, "sessionId"),
        cli_version: text_field(data, "copilotVersion"),
        model: text_field(data, "selectedModel"),
        started_at: started_at.or(at.filter(|_| data.contains_key("startTime"))),
        ..context(
            data.get("context")
                .and_then(Value::as_object)
                .unwrap_or(&Map::new()),
        )
    }
}

/// A working-folder context: its folder and branch.
fn context(data: &Map<String, Value>) -> Info {
    Info {
        cwd: text_field(data, "cwd"),
        branch: text_field(data, "branch"),
        ..Info::default()
    }
}

/// A non-empty string field.
/// The session's tokens so far per model, as `session.usage_checkpoint` and `session.shutdown`
/// state them in `providerModelMetrics` (sub-agents' calls included): running totals, each
/// model's own (docs/formats.md §14.6). Copilot writes no figures per call (`usage_record`'s
/// `usage` is empty).
fn model_metrics(data: &Map<String, Value>) -> Vec<Observation> {
    let Some(models) = data.get("providerModelMetrics").and_then(Value::as_array) else {
        return Vec::new();
    };
    models
        .iter()
        .filter_map(|entry| {
            let model = entry.get("modelId").and_then(Value::as_str)?;
            let usage = entry
                .get("metrics")?
                .get("usage")
                .filter(|usage| !usage.is_null())?;
            let names = [
                "inputTokens",
                "outputTokens",
                "cacheReadTokens",
                "cacheWriteTokens",
            ];
            // `inputTokens` counts the cached input too (checked live): what is left is fresh.
            let fresh = |read: Tokens| Tokens {
                input: read
                    .input
                    .saturating_sub(read.cache_read)
                    .saturating_sub(read.cache_write),
                ..read
            };
            let call = usage::tokens(usage, names).map(|read| Call {
                counting: Counting::RunningTotal {
                    last: Tokens::default(),
                },
                ..Call::response(None, Some(model.to_owned()), fresh(read))
            });
            Some(usage_observation(call, usage))
        })
        .collect()
}

fn text_field(object: &Map<String, Value>, key: &str) -> Option<String> {
    object
        .get(key)
        .and_then(Value::as_str)
        .filter(|text| !text.trim().is_empty())
        .map(str::to_string)
}
