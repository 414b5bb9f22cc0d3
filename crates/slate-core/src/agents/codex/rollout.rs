//! Codex's rollout lines, one `{"timestamp","type","payload"}` envelope a line (and the bare lines
//! of pre-envelope rollouts), read into observations, and the lines of `session_index.jsonl` read
//! into thread names (docs/formats.md §2.1, §2.2).

use serde_json::{Map, Value};

use crate::agents::unread::UnreadRecord;
use crate::agents::usage_observation;
use crate::agents::{
    one_line, CallInput, CallKind, Info, LineError, LineParser, NameLine, Observation, Record,
    RecordKind, Title, TitleSource,
};
use crate::model::usage::{self, Call, Counting, Tokens};
use crate::model::Timestamp;

/// How many characters of a prompt an observation keeps.
const PROMPT_CHARS: usize = 200;
/// How many characters of a tool call's detail an observation keeps.
const DETAIL_CHARS: usize = 120;

/// Prefixes of user-role `response_item` messages that Codex injects as context; they are not
/// prompts (docs/formats.md §2.2).
const INJECTED_USER_PREFIXES: [&str; 7] = [
    "<environment_context>",
    "# AGENTS.md instructions for",
    "<user_instructions>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<user_shell_command>",
    "<permissions instructions>",
];

/// The record kinds of the rollout envelope `{"timestamp","type","payload"}`.
const ENVELOPE_TYPES: [&str; 5] = [
    "session_meta",
    "turn_context",
    "event_msg",
    "response_item",
    "compacted",
];

/// Response item types that pre-envelope rollouts wrote bare, at the top level of a line.
const BARE_ITEM_TYPES: [&str; 8] = [
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
];

/// Reads one rollout line, on its own.
///
/// A prompt is stated twice in a current rollout, as `event_msg/user_message` and as a
/// `response_item` user message; this function takes it from the event only, so a prompt is never
/// counted twice. Legacy rollouts that have no `event_msg` lines at all are read right only through
/// [`RolloutReader`], which falls back to the `response_item` messages.
pub fn observe(line: &[u8]) -> Result<Vec<Observation>, LineError> {
    read_line(line).map(|parsed| parsed.observations)
}

/// Reads a rollout file line by line, in order, keeping what a single line cannot know.
///
/// * Only the first `session_meta` of a file is canonical: a forked rollout repeats the meta lines
///   of its ancestors, whose ids, folders and start times are not this session's, so the reader
///   drops every later `session_meta` whole.
/// * The prompt decision: a prompt comes from `event_msg/user_message` whenever the file has event
///   lines, because that is the one record Codex writes only for text the user typed. Until the
///   first `event_msg` has been seen, a non-injected `response_item` user message is taken as the
///   prompt instead, since rollouts from before event persistence have nothing else. If the very
///   next event turns out to be the `user_message` echo of that same text, the echo is dropped, so
///   either order of the pair yields exactly one prompt.
#[derive(Debug, Clone, Default)]
pub struct RolloutReader {
    seen_meta: bool,
    seen_event: bool,
    /// The prompt most recently taken from a `response_item`, until the next event line.
    item_prompt: Option<String>,
    /// The session the file's first `session_meta` names: a usage record of another thread (an
    /// ancestor's, copied into a fork) is that thread's to count.
    session: Option<String>,
}

impl LineParser for RolloutReader {
    fn feed(&mut self, line: &[u8]) -> Result<Vec<Observation>, LineError> {
        RolloutReader::feed(self, line)
    }

    fn restart(&mut self) {
        *self = RolloutReader::new();
    }
}

impl RolloutReader {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the next line of the file. Errors are per line and leave the reader usable.
    pub fn feed(&mut self, line: &[u8]) -> Result<Vec<Observation>, LineError> {
        let mut parsed = read_line(line)?;
        match parsed.shape {
            LineShape::SessionMeta => {
                if self.seen_meta {
                    return Ok(Vec::new());
                }
                self.seen_meta = true;
                self.session =
                    parsed
                        .observations
                        .iter()
                        .find_map(|observation| match observation {
                            Observation::Info(info) => info.session_id.clone(),
                            _ => None,
                        });
            }
            LineShape::UsageOf(thread) => {
                if thread.is_some() && self.session.is_some() && thread != self.session {
                    return Ok(Vec::new());
                }
            }
            LineShape::Event => {
                self.seen_event = true;
                if let Some(item_text) = self.item_prompt.take() {
                    parsed.observations.retain(|observation| {
                        !matches!(
                            observation,
                            Observation::Record(Record {
                                kind: RecordKind::Prompt { text },
                                ..
                            }) if *text == item_text
                        )
                    });
                }
            }
            LineShape::UserItem(Some(prompt)) if !self.seen_event => {
                self.item_prompt = Some(prompt.clone());
                parsed.observations.push(Observation::Record(Record {
                    at: parsed.at,
                    kind: RecordKind::Prompt { text: prompt },
                }));
            }
            LineShape::UserItem(_) | LineShape::Other => {}
        }
        Ok(parsed.observations)
    }
}

/// One line, read: its observations plus what the reader needs to know about its place in the file.
struct ParsedLine {
    at: Option<Timestamp>,
    observations: Vec<Observation>,
    shape: LineShape,
}

enum LineShape {
    SessionMeta,
    Event,
    /// A user-role `response_item` message, with its text when it looks like a typed prompt.
    UserItem(Option<String>),
    /// A `token_usage_record`, with the thread it names.
    UsageOf(Option<String>),
    Other,
}

fn read_line(line: &[u8]) -> Result<ParsedLine, LineError> {
    let text = std::str::from_utf8(line).map_err(|_| LineError::NotUtf8)?;
    // A blank line states nothing; it is not worth a problem report.
    if text.trim().is_empty() {
        return Ok(ParsedLine {
            at: None,
            observations: Vec::new(),
            shape: LineShape::Other,
        });
    }
    let value: Value =
        serde_json::from_str(text).map_err(|err| LineError::NotJson(err.to_string()))?;
    let envelope = value
        .as_object()
        .ok_or(LineError::Shape("line is not a JSON object"))?;
    let at = envelope
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(Timestamp::parse_rfc3339);
    let mut parsed = ParsedLine {
        at,
        observations: Vec::new(),
        shape: LineShape::Other,
    };
    // Rollouts written before the envelope existed (Codex CLI of mid 2025) open with a bare header
    // `{id, timestamp, instructions, cwd?, git?}`, mark saves with `{"record_type":"state"}` and
    // write response items bare, mostly without a time. They are read as if enveloped.
    let (kind, payload) = match envelope.get("type").and_then(Value::as_str) {
        None if envelope.contains_key("record_type") => return Ok(parsed),
        None if envelope.contains_key("id") && envelope.contains_key("timestamp") => {
            ("session_meta", envelope)
        }
        None => return Err(LineError::Shape("line has no type")),
        Some(item) if BARE_ITEM_TYPES.contains(&item) && !envelope.contains_key("payload") => {
            ("response_item", envelope)
        }
        Some(kind) if ENVELOPE_TYPES.contains(&kind) => {
            let payload = envelope
                .get("payload")
                .and_then(Value::as_object)
                .ok_or(LineError::Shape("line has no payload object"))?;
            (kind, payload)
        }
        // Whole-thread bookkeeping 0.171.0 writes: no turn meaning.
        Some("world_state") => return Ok(parsed),
        // One response's usage, by its id (0.171.0).
        Some("token_usage_record") => {
            let payload = envelope.get("payload").unwrap_or(&Value::Null);
            parsed.shape = LineShape::UsageOf(
                payload
                    .get("thread_id")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            );
            parsed.observations.extend(usage_record(payload));
            return Ok(parsed);
        }
        Some(_) => {
            let kind = envelope.get("type").unwrap_or(&Value::Null);
            let unread = UnreadRecord::of_type("type", kind, &value);
            parsed.observations.push(unread.observation());
            return Ok(parsed);
        }
    };
    let record = |kind: RecordKind| Observation::Record(Record { at, kind });
    match kind {
        "session_meta" => {
            parsed.shape = LineShape::SessionMeta;
            parsed
                .observations
                .push(Observation::Info(session_meta(payload)));
        }
        "turn_context" => {
            let info = Info {
                cwd: text_field(payload, "cwd"),
                model: text_field(payload, "model"),
                ..Info::default()
            };
            parsed.observations.push(Observation::Info(info));
        }
        "event_msg" => {
            parsed.shape = LineShape::Event;
            if let Some(observation) = event(payload, record) {
                parsed.observations.push(observation);
            }
            if payload.get("type").and_then(Value::as_str) == Some("token_count") {
                parsed.observations.extend(token_count(payload));
            }
        }
        "response_item" => {
            if payload.get("type").and_then(Value::as_str) == Some("message")
                && payload.get("role").and_then(Value::as_str) == Some("user")
            {
                parsed.shape = LineShape::UserItem(typed_prompt(payload));
            } else {
                match response_item(payload)? {
                    Item::Record(kind) => parsed.observations.push(record(kind)),
                    Item::Nothing => {}
                    Item::Unread => {
                        let payload = Value::Object(payload.clone());
                        let kind = payload.get("type").unwrap_or(&Value::Null);
                        let unread = UnreadRecord::of_type("response_item type", kind, &payload);
                        parsed.observations.push(unread.observation());
                    }
                }
            }
        }
        // The `compacted` line carries the summary that replaces the history; the turn goes on.
        _ => parsed.observations.push(record(RecordKind::Compacting)),
    }
    Ok(parsed)
}

/// Codex's token figures (`input_tokens` counts the cached and cache-written input too) as
/// Slate counts them: input that the cache neither gave nor took, output, cache read and write.
fn codex_tokens(usage: &Value) -> Result<Tokens, String> {
    let read = usage::tokens(
        usage,
        [
            "input_tokens",
            "output_tokens",
            "cached_input_tokens",
            "cache_write_input_tokens",
        ],
    )?;
    Ok(Tokens {
        input: read
            .input
            .saturating_sub(read.cache_read)
            .saturating_sub(read.cache_write),
        ..read
    })
}

/// A `token_usage_record` (0.171.0): one response's `usage`, under its `response_id`.
fn usage_record(payload: &Value) -> Option<Observation> {
    let usage = payload.get("usage").filter(|usage| !usage.is_null())?;
    let id = payload.get("response_id").and_then(Value::as_str);
    let call =
        codex_tokens(usage).map(|tokens| Call::response(id.map(str::to_owned), None, tokens));
    Some(usage_observation(call, usage))
}

/// A `token_count` event: the session's running total (`info.total_token_usage`), the last
/// response's own figures (`last_token_usage`, for the context) and the model's window. Codex
/// writes one after each response and again with rate-limit news, so only the total counts;
/// where `token_usage_record`s count the responses by id, the total only dates the context
/// (`usage::Tally`).
fn token_count(payload: &Map<String, Value>) -> Option<Observation> {
    let info = payload.get("info").filter(|info| !info.is_null())?;
    let total = info.get("total_token_usage")?;
    let call = codex_tokens(total).and_then(|tokens| {
        let last = match info.get("last_token_usage") {
            Some(last) => codex_tokens(last)?,
            None => Tokens::default(),
        };
        Ok(Call {
            context_window: info
                .get("model_context_window")
                .and_then(Value::as_u64)
                .filter(|window| *window <= usage::MOST_TOKENS),
            counting: Counting::RunningTotal { last },
            ..Call::response(None, None, tokens)
        })
    });
    Some(usage_observation(call, info))
}

fn session_meta(payload: &Map<String, Value>) -> Info {
    let source = payload.get("source");
    // Print runs (`codex exec`) have no Needs-you state; either field alone says so.
    let exec = payload.get("originator").and_then(Value::as_str) == Some("codex_exec")
        || source.and_then(Value::as_str) == Some("exec");
    // A sub-agent's source is `{"subagent": …}`; its parent thread is somewhere inside, in a shape
    // docs/formats.md §7 lists as not fully verified, so it is looked for rather than addressed.
    let parent_session = source
        .and_then(Value::as_object)
        .and_then(|source| source.get("subagent"))
        .and_then(|subagent| find_text(subagent, "parent_thread_id"));
    Info {
        session_id: text_field(payload, "id"),
        cwd: text_field(payload, "cwd"),
        branch: payload
            .get("git")
            .and_then(Value::as_object)
            .and_then(|git| text_field(git, "branch")),
        cli_version: text_field(payload, "cli_version"),
        print_mode: exec.then_some(true),
        parent_session,
        started_at: payload
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(Timestamp::parse_rfc3339),
        ..Info::default()
    }
}

fn event(
    payload: &Map<String, Value>,
    record: impl Fn(RecordKind) -> Observation,
) -> Option<Observation> {
    let turn_id = || text_field(payload, "turn_id");
    let kind = match payload.get("type").and_then(Value::as_str)? {
        "task_started" => RecordKind::TurnStarted { turn_id: turn_id() },
        "task_complete" => RecordKind::TurnEnded { turn_id: turn_id() },
        // Every abort reason (`interrupted`, `replaced`, `review_ended`) ends the turn without an
        // answer, which is what an interruption means to the state rules.
        "turn_aborted" => RecordKind::Interrupted { turn_id: turn_id() },
        "user_message" => RecordKind::Prompt {
            text: one_line(
                payload.get("message").and_then(Value::as_str).unwrap_or(""),
                PROMPT_CHARS,
            ),
        },
        "agent_message" => RecordKind::ModelText,
        "agent_reasoning" | "agent_reasoning_raw_content" => RecordKind::ModelThinking,
        "error" => RecordKind::TurnFailed {
            message: text_field(payload, "message"),
        },
        "stream_error" => RecordKind::Retrying,
        "context_compacted" => RecordKind::Compacting,
        "thread_name_updated" => {
            let name = text_field(payload, "thread_name")?;
            return Some(Observation::Info(Info {
                title: Some(Title {
                    text: name,
                    source: TitleSource::Named,
                }),
                ..Info::default()
            }));
        }
        // Bookkeeping a rollout keeps, with no turn meaning of its own.
        kind if EVENT_BOOKKEEPING.contains(&kind) => return None,
        _ => {
            let payload = Value::Object(payload.clone());
            let kind = payload.get("type").unwrap_or(&Value::Null);
            return Some(UnreadRecord::of_type("event_msg type", kind, &payload).observation());
        }
    };
    Some(record(kind))
}

/// The `event_msg` types a rollout keeps that have no turn meaning (docs/formats.md §2): any other
/// type Slate does not read is counted as unread.
const EVENT_BOOKKEEPING: &[&str] = &[
    "token_count",
    "thread_settings_applied",
    "thread_rolled_back",
    "entered_review_mode",
    "exited_review_mode",
    "undo_completed",
    "turn_diff",
    "plan_update",
    "exec_command_end",
    "patch_apply_end",
    "mcp_tool_call_end",
    "web_search_end",
    "view_image_tool_call",
    "item_completed",
];

/// The `response_item` types with no turn meaning of their own.
const ITEM_BOOKKEEPING: &[&str] = &[
    "web_search_call",
    "ghost_snapshot",
    "compaction",
    "compaction_summary",
    "image_generation_call",
];

/// What a `response_item` says.
enum Item {
    Record(RecordKind),
    /// Nothing the state reads (a developer message, reasoning with no summary, bookkeeping).
    Nothing,
    /// A type Slate does not know.
    Unread,
}

/// Reads a `response_item` other than a user message.
///
/// An assistant message is `ModelText` here and its `event_msg/agent_message` twin is `ModelText`
/// too: both carry the line's time, so the pair reads as one answer, and legacy rollouts without
/// events still get theirs. The same holds for `reasoning` and `agent_reasoning`.
fn response_item(payload: &Map<String, Value>) -> Result<Item, LineError> {
    let Some(kind) = payload.get("type").and_then(Value::as_str) else {
        return Ok(Item::Unread);
    };
    let kind = match kind {
        "message" => match payload.get("role").and_then(Value::as_str) {
            Some("assistant") => RecordKind::ModelText,
            // Developer messages are injected instructions, not turn activity.
            _ => return Ok(Item::Nothing),
        },
        "reasoning" => {
            let has_summary = payload
                .get("summary")
                .and_then(Value::as_array)
                .is_some_and(|summary| !summary.is_empty());
            if !has_summary {
                return Ok(Item::Nothing);
            }
            RecordKind::ModelThinking
        }
        "function_call" => {
            let name = text_field(payload, "name").unwrap_or_default();
            let arguments = payload.get("arguments").and_then(Value::as_str);
            tool_call(payload, name, arguments)?
        }
        "custom_tool_call" => {
            let name = text_field(payload, "name").unwrap_or_default();
            let input = payload.get("input").and_then(Value::as_str);
            tool_call(payload, name, input)?
        }
        "local_shell_call" => {
            let command = payload
                .get("action")
                .and_then(|action| action.get("command"))
                .and_then(command_text);
            // Codex pairs a local shell call by its `call_id`, or by its item `id` when the
            // model sent none; its output then carries that id.
            let call_id = text_field(payload, "call_id")
                .or_else(|| text_field(payload, "id"))
                .ok_or(LineError::Shape("tool call has no call_id"))?;
            RecordKind::ToolCall {
                call_id,
                name: "local_shell".to_owned(),
                detail: command
                    .as_deref()
                    .map(|command| one_line(command, DETAIL_CHARS)),
                input: command.as_deref().and_then(CallInput::of),
                kind: CallKind::Plain,
            }
        }
        "function_call_output" | "custom_tool_call_output" => RecordKind::ToolResult {
            call_id: call_id(payload)?,
            rejected: false,
        },
        // A web search is written complete and has no result to pair with; snapshots and
        // compaction items have no turn meaning of their own.
        kind if ITEM_BOOKKEEPING.contains(&kind) => return Ok(Item::Nothing),
        _ => return Ok(Item::Unread),
    };
    Ok(Item::Record(kind))
}

fn tool_call(
    payload: &Map<String, Value>,
    name: String,
    arguments: Option<&str>,
) -> Result<RecordKind, LineError> {
    let call_id = call_id(payload)?;
    // Function arguments are a JSON object in a string; a custom tool's input is free text (the
    // patch of `apply_patch`), which simply fails to parse here.
    let parsed: Option<Map<String, Value>> =
        arguments.and_then(|arguments| serde_json::from_str(arguments).ok());
    let kind = if name == "request_user_input" {
        CallKind::Question
    } else if parsed.as_ref().is_some_and(asks_escalation) {
        CallKind::Escalated
    } else {
        CallKind::Plain
    };
    let detail = match name.as_str() {
        "exec_command" | "shell" | "shell_command" | "container.exec" | "local_shell" => parsed
            .as_ref()
            .and_then(|args| args.get("cmd").or_else(|| args.get("command")))
            .and_then(command_text),
        "apply_patch" => {
            let patch = parsed
                .as_ref()
                .and_then(|args| text_field(args, "input").or_else(|| text_field(args, "patch")))
                .or_else(|| arguments.map(str::to_owned));
            patch.as_deref().and_then(first_patched_file)
        }
        "request_user_input" => parsed
            .as_ref()
            .and_then(|args| args.get("questions"))
            .and_then(|questions| questions.get(0))
            .and_then(|question| question.get("question"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => None,
    };
    Ok(RecordKind::ToolCall {
        call_id,
        name,
        detail: detail
            .as_deref()
            .map(|detail| one_line(detail, DETAIL_CHARS)),
        input: detail.as_deref().and_then(CallInput::of),
        kind,
    })
}

/// True when a shell call asks to run outside the sandbox, which in an `on-request` session is
/// very likely an approval prompt. `with_escalated_permissions` is the older spelling.
fn asks_escalation(arguments: &Map<String, Value>) -> bool {
    arguments.get("sandbox_permissions").and_then(Value::as_str) == Some("require_escalated")
        || arguments
            .get("with_escalated_permissions")
            .and_then(Value::as_bool)
            == Some(true)
}

/// A call's id. A call or result without one could never be paired, so it is a malformed line
/// rather than a call that would look unanswered forever.
fn call_id(payload: &Map<String, Value>) -> Result<String, LineError> {
    text_field(payload, "call_id").ok_or(LineError::Shape("tool call has no call_id"))
}

/// A command given as a string or as an argv array.
fn command_text(command: &Value) -> Option<String> {
    match command {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            let parts: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
            (!parts.is_empty()).then(|| parts.join(" "))
        }
        _ => None,
    }
}

/// The first file an `apply_patch` patch touches.
fn first_patched_file(patch: &str) -> Option<String> {
    patch.lines().find_map(|line| {
        ["*** Add File: ", "*** Update File: ", "*** Delete File: "]
            .iter()
            .find_map(|marker| line.trim_start().strip_prefix(marker))
            .map(|path| path.trim().to_owned())
            .filter(|path| !path.is_empty())
    })
}

/// The text of a user-role `response_item` message when it looks typed, not injected.
fn typed_prompt(payload: &Map<String, Value>) -> Option<String> {
    let parts = payload.get("content")?.as_array()?;
    let text: Vec<&str> = parts
        .iter()
        .filter(|part| part.get("type").and_then(Value::as_str) == Some("input_text"))
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect();
    let text = text.join("\n");
    let trimmed = text.trim_start();
    if trimmed.is_empty()
        || INJECTED_USER_PREFIXES
            .iter()
            .any(|prefix| trimmed.starts_with(prefix))
    {
        return None;
    }
    Some(one_line(trimmed, PROMPT_CHARS))
}

/// A non-empty string field.
fn text_field(object: &Map<String, Value>, key: &str) -> Option<String> {
    object
        .get(key)
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

/// The first non-empty string under `key` anywhere inside `value`, depth first.
fn find_text(value: &Value, key: &str) -> Option<String> {
    match value {
        Value::Object(object) => text_field(object, key)
            .or_else(|| object.values().find_map(|inner| find_text(inner, key))),
        Value::Array(items) => items.iter().find_map(|inner| find_text(inner, key)),
        _ => None,
    }
}

/// Reads one `session_index.jsonl` line `{"id","thread_name","updated_at"}` into
/// `(id, name, updated_at)`.
///
/// A blank line, or one without a name, states nothing and is `Ok(None)`. The index is append-only
/// and the newest line for an id wins, so the caller keeps the last one it reads.
pub fn parse_index_line(line: &[u8]) -> Result<NameLine, LineError> {
    let text = std::str::from_utf8(line).map_err(|_| LineError::NotUtf8)?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    let value: Value =
        serde_json::from_str(text).map_err(|err| LineError::NotJson(err.to_string()))?;
    let entry = value
        .as_object()
        .ok_or(LineError::Shape("index line is not a JSON object"))?;
    let id = text_field(entry, "id").ok_or(LineError::Shape("index line has no id"))?;
    let Some(name) = entry.get("thread_name").and_then(Value::as_str) else {
        return Ok(None);
    };
    let updated_at = entry
        .get("updated_at")
        .and_then(Value::as_str)
        .and_then(Timestamp::parse_rfc3339);
    Ok(Some((id, name.trim().to_owned(), updated_at)))
}
