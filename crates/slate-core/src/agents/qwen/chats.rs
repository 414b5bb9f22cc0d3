//! Qwen Code's chat records (docs/formats.md §13.2, §13.3): one line of
//! `projects/<dir>/chats/<sessionId>.jsonl` becomes observations. Every line carries the
//! session's facts (`sessionId`, `cwd`, `version`, `gitBranch`); `user`, `assistant` and
//! `tool_result` lines are the turn's records, `system` lines mostly bookkeeping.

use serde_json::{Map, Value};

use crate::agents::unread::UnreadRecord;
use crate::agents::usage_observation;
use crate::agents::{
    one_line, CallInput, CallKind, Info, LineError, LineParser, Observation, Record, RecordKind,
    Title, TitleSource,
};
use crate::model::usage::{self, Call, Tokens};
use crate::model::Timestamp;

/// Reads a Qwen Code chat. Lines need no memory of each other: a tool call and its result are
/// paired by the tracker, by the call's id.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChatLines;

impl LineParser for ChatLines {
    fn feed(&mut self, line: &[u8]) -> Result<Vec<Observation>, LineError> {
        observe(line)
    }

    fn restart(&mut self) {}
}

/// How many characters of a prompt or a title an observation keeps.
const PROMPT_CHARS: usize = 200;

/// How many characters of a tool call's detail an observation keeps.
const DETAIL_CHARS: usize = 120;

/// The start of the error Qwen Code sends back for a call the person refused or cancelled
/// (`[Operation Cancelled] Reason: User did not allow tool call`).
const CANCELLED: &str = "[Operation Cancelled]";

/// The `ui_telemetry` event a failed model request writes.
const API_ERROR: &str = "qwen-code.api_error";

/// Reads one line of a chat.
pub fn observe(line: &[u8]) -> Result<Vec<Observation>, LineError> {
    let text = std::str::from_utf8(line).map_err(|_| LineError::NotUtf8)?;
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|error| LineError::NotJson(one_line(&error.to_string(), DETAIL_CHARS)))?;
    let Value::Object(record) = &value else {
        return Err(LineError::Shape("line is not a JSON object"));
    };
    let kind = record.get("type").and_then(Value::as_str);
    let Some(kind) =
        kind.filter(|kind| matches!(*kind, "user" | "assistant" | "tool_result" | "system"))
    else {
        // A record type a later version may add: it moves nothing, and is counted.
        let kind = record.get("type").unwrap_or(&Value::Null);
        return Ok(vec![
            UnreadRecord::of_type("type", kind, &value).observation()
        ]);
    };
    let mut out = Vec::new();
    let info = info(record, kind);
    if info != Info::default() {
        out.push(Observation::Info(info));
    }
    if kind == "assistant" {
        out.extend(usage(record));
    }
    let at = str_field(record, "timestamp").and_then(Timestamp::parse_rfc3339);
    let kinds = match kind {
        "user" => user_records(record),
        "assistant" => assistant_records(record),
        "tool_result" => result_records(record),
        _ => match system_record(record) {
            System::Record(kind) => vec![kind],
            System::Title(title) => {
                out.push(Observation::Info(Info {
                    title: Some(title),
                    ..Info::default()
                }));
                Vec::new()
            }
            System::Nothing => Vec::new(),
        },
    };
    out.extend(
        kinds
            .into_iter()
            .map(|kind| Observation::Record(Record { at, kind })),
    );
    Ok(out)
}

/// What the response behind an assistant record used: its `usageMetadata`, Gemini's figures
/// (`promptTokenCount` counts the cached tokens too; thoughts are billed as output), under the
/// record's `uuid` (docs/formats.md §13.5).
fn usage(record: &Map<String, Value>) -> Option<Observation> {
    let metadata = record
        .get("usageMetadata")
        .filter(|usage| !usage.is_null())?;
    let call = usage::tokens(
        metadata,
        [
            "promptTokenCount",
            "candidatesTokenCount",
            "cachedContentTokenCount",
            "",
        ],
    )
    .and_then(|read| {
        let thoughts = usage::count(metadata, "thoughtsTokenCount")?;
        let tool = usage::count(metadata, "toolUsePromptTokenCount")?;
        let tokens = Tokens {
            input: read
                .input
                .saturating_sub(read.cache_read)
                .saturating_add(tool),
            output: read.output.saturating_add(thoughts),
            ..read
        };
        let owned = |field: &str| str_field(record, field).map(str::to_owned);
        Ok(Call::response(owned("uuid"), owned("model"), tokens))
    });
    Some(usage_observation(call, metadata))
}

fn str_field<'a>(record: &'a Map<String, Value>, field: &str) -> Option<&'a str> {
    record.get(field).and_then(Value::as_str)
}

/// The facts every record carries; the model only on the model's records.
fn info(record: &Map<String, Value>, kind: &str) -> Info {
    let owned = |field: &str| {
        str_field(record, field)
            .filter(|text| !text.is_empty())
            .map(str::to_owned)
    };
    Info {
        session_id: owned("sessionId"),
        cwd: owned("cwd"),
        branch: owned("gitBranch"),
        // `createBaseRecord` writes "unknown" when the CLI does not know its version.
        cli_version: owned("version").filter(|version| version != "unknown"),
        model: (kind == "assistant").then(|| owned("model")).flatten(),
        ..Info::default()
    }
}

/// The `message.parts` of a record (Gemini-style parts: `text`, `functionCall`,
/// `functionResponse`), or none.
fn parts(record: &Map<String, Value>) -> &[Value] {
    record
        .get("message")
        .and_then(|message| message.get("parts"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The text of the parts that are not thoughts, joined.
fn text_of(parts: &[Value]) -> String {
    parts
        .iter()
        .filter(|part| part.get("thought").and_then(Value::as_bool) != Some(true))
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A `user` record: the person's prompt, or a message the CLI itself put in the conversation.
fn user_records(record: &Map<String, Value>) -> Vec<RecordKind> {
    let parts = parts(record);
    // What the person typed, before `@file` expansion, where the CLI kept it.
    let shown = record
        .get("systemPayload")
        .and_then(|payload| payload.get("displayText"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let text = if shown.trim().is_empty() {
        text_of(parts)
    } else {
        shown.to_string()
    };
    match str_field(record, "subtype") {
        // A prompt typed while the turn runs: it is drained into the same turn.
        None | Some("mid_turn_user_message") => {
            if !text.trim().is_empty() {
                vec![RecordKind::Prompt {
                    text: one_line(&text, PROMPT_CHARS),
                }]
            } else if parts
                .iter()
                .any(|part| part.get("inlineData").is_some() || part.get("fileData").is_some())
            {
                // A pasted image or file with no words is still a prompt the model answers.
                vec![RecordKind::Prompt {
                    text: "[attachment]".to_string(),
                }]
            } else {
                Vec::new()
            }
        }
        // A scheduled prompt and the goal runtime's message start a model request of their own.
        Some("cron" | "goal_runtime") => vec![RecordKind::TurnStarted { turn_id: None }],
        // A background task's notification: the model may or may not answer it.
        Some("notification") => vec![RecordKind::Unsettled],
        _ => Vec::new(),
    }
}

/// An `assistant` record: the model's whole answer to one request, its parts in order.
fn assistant_records(record: &Map<String, Value>) -> Vec<RecordKind> {
    let mut out = Vec::new();
    for (index, part) in parts(record).iter().enumerate() {
        if let Some(call) = part.get("functionCall") {
            out.extend(call_record(call, index));
            continue;
        }
        let Some(text) = part.get("text").and_then(Value::as_str) else {
            continue;
        };
        let kind = if part.get("thought").and_then(Value::as_bool) == Some(true) {
            RecordKind::ModelThinking
        } else if text.trim().is_empty() {
            continue;
        } else {
            RecordKind::ModelText
        };
        // One record for a run of text parts of the same kind.
        if out.last() != Some(&kind) {
            out.push(kind);
        }
    }
    out
}

fn call_record(call: &Value, index: usize) -> Option<RecordKind> {
    let call = call.as_object()?;
    let name = str_field(call, "name").unwrap_or("tool").to_string();
    let call_id = str_field(call, "id")
        .filter(|id| !id.is_empty())
        .map_or_else(|| format!("{name}-{index}"), str::to_string);
    let text = call.get("args").and_then(|args| call_text(&name, args));
    Some(RecordKind::ToolCall {
        detail: text
            .map(|text| one_line(text, DETAIL_CHARS))
            .filter(|detail| !detail.is_empty()),
        input: text.and_then(CallInput::of),
        kind: call_kind(&name),
        call_id,
        name,
    })
}

fn call_kind(name: &str) -> CallKind {
    match name {
        "ask_user_question" => CallKind::Question,
        "exit_plan_mode" => CallKind::PlanApproval,
        // `task` is the tool's name before it was renamed `agent`.
        "agent" | "task" => CallKind::SubAgent,
        _ => CallKind::Plain,
    }
}

/// What a call runs, reads, edits or asks, as its arguments say it.
fn call_text<'a>(name: &str, args: &'a Value) -> Option<&'a str> {
    if name == "ask_user_question" {
        return args
            .get("questions")
            .and_then(|questions| questions.get(0))
            .and_then(|question| question.get("question"))
            .and_then(Value::as_str);
    }
    const KEYS: [&str; 9] = [
        "command",
        "file_path",
        "absolute_path",
        "path",
        "pattern",
        "url",
        "query",
        "description",
        "plan",
    ];
    let args = args.as_object()?;
    KEYS.iter()
        .find_map(|key| args.get(*key).and_then(Value::as_str))
}

/// A `tool_result` record: the results sent back to the model. A call the person refused at its
/// dialog, or cancelled while it ran, ends the turn: the CLI asks the model nothing more.
fn result_records(record: &Map<String, Value>) -> Vec<RecordKind> {
    let status = record
        .get("toolCallResult")
        .and_then(|result| result.get("status"))
        .and_then(Value::as_str);
    let not_started = record
        .get("toolCallResult")
        .and_then(|result| result.get("executionStatus"))
        .and_then(Value::as_str)
        == Some("not_started");
    let mut out = Vec::new();
    let mut cancelled = status == Some("cancelled");
    for (index, part) in parts(record).iter().enumerate() {
        let Some(response) = part.get("functionResponse").and_then(Value::as_object) else {
            continue;
        };
        let error = response
            .get("response")
            .and_then(|response| response.get("error"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let refused = error.starts_with(CANCELLED);
        cancelled |= refused;
        let call_id = str_field(response, "id")
            .filter(|id| !id.is_empty())
            .map(str::to_string)
            .or_else(|| str_field(response, "name").map(|name| format!("{name}-{index}")))
            .unwrap_or_else(|| format!("tool-{index}"));
        out.push(RecordKind::ToolResult {
            call_id,
            rejected: refused && (not_started || status.is_none()),
        });
    }
    if cancelled && !out.is_empty() {
        out.push(RecordKind::Interrupted { turn_id: None });
    }
    out
}

/// What a `system` record says.
enum System {
    Record(RecordKind),
    Title(Title),
    Nothing,
}

fn system_record(record: &Map<String, Value>) -> System {
    let payload = record.get("systemPayload");
    match str_field(record, "subtype") {
        Some("chat_compression") => System::Record(RecordKind::Compacting),
        // Written by the editor (ACP) path only; the TUI writes no turn's end.
        Some("turn_result") => System::Record(RecordKind::TurnEnded { turn_id: None }),
        Some("custom_title") => {
            let Some(text) = payload
                .and_then(|payload| payload.get("customTitle"))
                .and_then(Value::as_str)
                .map(|text| one_line(text, PROMPT_CHARS))
                .filter(|text| !text.is_empty())
            else {
                return System::Nothing;
            };
            let source = match payload
                .and_then(|payload| payload.get("titleSource"))
                .and_then(Value::as_str)
            {
                Some("auto") => TitleSource::Generated,
                _ => TitleSource::Custom,
            };
            System::Title(Title { text, source })
        }
        Some("ui_telemetry") => {
            let event = payload.and_then(|payload| payload.get("uiEvent"));
            let name = event
                .and_then(|event| event.get("event.name"))
                .and_then(Value::as_str);
            // A sub-agent's request is not the session's turn.
            let subagent = event.is_some_and(|event| event.get("subagent_id").is_some());
            if name == Some(API_ERROR) && !subagent {
                // The request failed: the CLI may retry it, or give the turn up and write
                // nothing more (docs/formats.md §13.3).
                System::Record(RecordKind::Unsettled)
            } else {
                System::Nothing
            }
        }
        // Snapshots, slash commands, rewinds, models and every other subtype are bookkeeping.
        _ => System::Nothing,
    }
}
