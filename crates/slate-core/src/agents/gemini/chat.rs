//! Folding a Gemini chat recording (docs/formats.md §3.2): [`ChatFold`] keeps the messages as
//! they stand after every re-append, `$set` and `$rewindTo`, and answers each line with the
//! observations that keep the tracker's fold right; [`fold_legacy_json`] reads a pre-0.39
//! whole-file chat.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::agents::unread::UnreadRecord;
use crate::agents::usage_observation;
use crate::agents::{
    one_line, CallInput, CallKind, Info, LineError, LineParser, Observation, Record, RecordKind,
    Title, TitleSource,
};
use crate::model::usage::{self, Call, Tokens};
use crate::model::Timestamp;

impl LineParser for ChatFold {
    fn feed(&mut self, line: &[u8]) -> Result<Vec<Observation>, LineError> {
        ChatFold::feed(self, line)
    }

    fn restart(&mut self) {
        *self = ChatFold::new();
    }
}

/// How many of the newest messages a replay re-emits. Gemini chats are small, but a resumed chat
/// can be long; the state rules only look at the recent end of a session.
const REPLAY_LIMIT: usize = 200;

/// The `info` message Gemini writes when the user presses Esc during a turn, or cancels every
/// tool call of a turn.
const CANCELLED: &str = "Request cancelled.";

/// The start of the `info` message Gemini writes when a tool stops the agent's execution.
const STOPPED: &str = "Agent execution stopped";

/// The folded state of one Gemini chat recording: its messages in order and its metadata.
#[derive(Debug, Clone, Default)]
pub struct ChatFold {
    /// The messages as they stand now, in file order of first appearance, each already turned into
    /// observations.
    messages: Vec<Folded>,
    /// Position of each message id in `messages`.
    positions: HashMap<String, usize>,
    meta: Meta,
}

#[derive(Debug, Clone)]
struct Folded {
    id: String,
    observations: Vec<Observation>,
    /// True for a `gemini` message.
    from_model: bool,
    /// True when the message stands for a tool call not recorded yet (an empty `gemini` message).
    pending: bool,
}

/// The metadata fields the adapter reports; everything else in the metadata is bookkeeping.
#[derive(Debug, Clone, Default)]
struct Meta {
    session_id: Option<String>,
    started_at: Option<Timestamp>,
    summary: Option<String>,
}

impl ChatFold {
    pub fn new() -> ChatFold {
        ChatFold::default()
    }

    /// Folds one line of a `.jsonl` chat recording and returns what it changed, in a form the
    /// tracker can fold without knowing about Gemini's rewrites: a new message at the end yields
    /// its own observations; a changed message, a rewind or a checkpoint yields `Reset` and then
    /// the whole folded chat (its newest `REPLAY_LIMIT` (200) messages).
    pub fn feed(&mut self, line: &[u8]) -> Result<Vec<Observation>, LineError> {
        let Some(object) = parse_object(line)? else {
            return Ok(Vec::new());
        };
        if let Some(target) = object.get("$rewindTo") {
            let target = target
                .as_str()
                .ok_or(LineError::Shape("$rewindTo is not a string"))?;
            self.rewind_to(target);
            return Ok(self.replay());
        }
        if let Some(patch) = object.get("$set") {
            let patch = patch
                .as_object()
                .ok_or(LineError::Shape("$set is not an object"))?;
            return Ok(self.apply_metadata(patch));
        }
        if let Some(id) = object.get("id") {
            let id = id
                .as_str()
                .ok_or(LineError::Shape("message id is not a string"))?;
            return Ok(self.upsert(id, &object));
        }
        if object.contains_key("sessionId") || object.contains_key("startTime") {
            return Ok(self.apply_metadata(&object));
        }
        // An unknown line shape: a later CLI version may write more kinds of lines.
        Ok(Vec::new())
    }

    /// Applies a metadata object (the first line, or a `$set` patch). A `messages` array in it is a
    /// checkpoint that replaces the history.
    fn apply_metadata(&mut self, patch: &Map<String, Value>) -> Vec<Observation> {
        let mut info = Info::default();
        if let Some(id) = patch.get("sessionId").and_then(Value::as_str) {
            self.meta.session_id = Some(id.to_string());
            info.session_id = Some(id.to_string());
        }
        if let Some(started) = patch
            .get("startTime")
            .and_then(Value::as_str)
            .and_then(Timestamp::parse_rfc3339)
        {
            self.meta.started_at = Some(started);
            info.started_at = Some(started);
        }
        if let Some(summary) = patch.get("summary").and_then(Value::as_str) {
            self.meta.summary = Some(summary.to_string());
            info.title = title(summary);
        }
        if let Some(messages) = patch.get("messages").and_then(Value::as_array) {
            self.messages.clear();
            self.positions.clear();
            for message in messages {
                let Some(object) = message.as_object() else {
                    continue;
                };
                if let Some(id) = object.get("id").and_then(Value::as_str) {
                    self.upsert(id, object);
                }
            }
            return self.replay();
        }
        if info == Info::default() {
            Vec::new()
        } else {
            vec![Observation::Info(info)]
        }
    }

    /// Stores a message under its id. A new id at the end yields its observations; a known id is
    /// replaced in place (the last copy wins, the first position stays) and yields a replay.
    fn upsert(&mut self, id: &str, message: &Map<String, Value>) -> Vec<Observation> {
        let position = self.positions.get(id).copied();
        let mut folded = fold_message(id, message);
        if let Some(closed) = self.close_pending(position.unwrap_or(self.messages.len()), &folded) {
            folded.observations.insert(0, closed);
        }
        match position {
            Some(position) => {
                self.messages[position] = folded;
                self.replay()
            }
            None => {
                self.positions.insert(id.to_string(), self.messages.len());
                let observations = folded.observations.clone();
                self.messages.push(folded);
                observations
            }
        }
    }

    /// A result for the pending call of the previous model message, when `next` is a newer model
    /// message that did not replace it. Gemini normally re-appends the pending message with its
    /// completed calls; if that line never reached the fold (a line too long to read, a crash),
    /// the next model message still proves the tool finished, and the call must not stay open.
    fn close_pending(&self, before: usize, next: &Folded) -> Option<Observation> {
        if !next.from_model {
            return None;
        }
        let previous = self.messages[..before]
            .iter()
            .rev()
            .find(|message| message.from_model)?;
        if !previous.pending {
            return None;
        }
        let at = next
            .observations
            .iter()
            .find_map(|observation| match observation {
                Observation::Record(record) => record.at,
                _ => None,
            });
        Some(Observation::Record(Record {
            at,
            kind: RecordKind::ToolResult {
                call_id: pending_call_id(&previous.id),
                rejected: false,
            },
        }))
    }

    /// Drops the message `target` and everything after it. Gemini clears the whole history when
    /// the target is unknown, and so does the fold.
    fn rewind_to(&mut self, target: &str) {
        let keep = self.positions.get(target).copied().unwrap_or(0);
        for dropped in self.messages.drain(keep..) {
            self.positions.remove(&dropped.id);
        }
    }

    /// The whole folded chat as the tracker should see it: `Reset`, the metadata, then the newest
    /// `REPLAY_LIMIT` (200) messages. The files edge can use it to re-announce a chat it already read.
    pub fn replay(&self) -> Vec<Observation> {
        let mut out = vec![Observation::Reset];
        let info = Info {
            session_id: self.meta.session_id.clone(),
            started_at: self.meta.started_at,
            title: self.meta.summary.as_deref().and_then(title),
            ..Info::default()
        };
        if info != Info::default() {
            out.push(Observation::Info(info));
        }
        let skip = self.messages.len().saturating_sub(REPLAY_LIMIT);
        for message in &self.messages[skip..] {
            out.extend(message.observations.iter().cloned());
        }
        out
    }
}

/// Reads a pre-0.39 whole-file `.json` session (a `ConversationRecord`). The file is rewritten on
/// every update, so the result starts with `Reset`: folding a re-read replaces the previous read.
pub fn fold_legacy_json(bytes: &[u8]) -> Result<Vec<Observation>, LineError> {
    let text = std::str::from_utf8(bytes).map_err(|_| LineError::NotUtf8)?;
    let value: Value =
        serde_json::from_str(text).map_err(|error| LineError::NotJson(error.to_string()))?;
    let object = value
        .as_object()
        .ok_or(LineError::Shape("session file is not a JSON object"))?;
    let mut fold = ChatFold::new();
    let mut metadata = object.clone();
    // Without a `messages` array the metadata alone is folded; the replay below is the answer
    // either way.
    metadata
        .entry("messages")
        .or_insert_with(|| Value::Array(Vec::new()));
    fold.apply_metadata(&metadata);
    Ok(fold.replay())
}

/// Parses one line into a JSON object. A blank line is `None`: nothing to say, nothing wrong.
fn parse_object(line: &[u8]) -> Result<Option<Map<String, Value>>, LineError> {
    let text = std::str::from_utf8(line).map_err(|_| LineError::NotUtf8)?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    let value: Value =
        serde_json::from_str(text).map_err(|error| LineError::NotJson(error.to_string()))?;
    match value {
        Value::Object(object) => Ok(Some(object)),
        _ => Err(LineError::Shape("line is not a JSON object")),
    }
}

fn title(summary: &str) -> Option<Title> {
    let text = one_line(summary, 200);
    (!text.is_empty()).then_some(Title {
        text,
        source: TitleSource::Generated,
    })
}

fn fold_message(id: &str, message: &Map<String, Value>) -> Folded {
    let observations = message_observations(id, message);
    let pending_id = pending_call_id(id);
    let pending = observations.iter().any(|observation| {
        matches!(
            observation,
            Observation::Record(Record { kind: RecordKind::ToolCall { call_id, .. }, .. })
                if *call_id == pending_id
        )
    });
    Folded {
        id: id.to_string(),
        observations,
        from_model: message.get("type").and_then(Value::as_str) == Some("gemini"),
        pending,
    }
}

/// What a `gemini` message's response used, under the message's id (docs/formats.md §3.5):
/// `input` counts the cached tokens too, and the model's thoughts and tool-use prompt are billed
/// beside its output and input.
fn usage(id: &str, message: &Map<String, Value>, tokens: &Value) -> Observation {
    let call = usage::tokens(tokens, ["input", "output", "cached", ""]).and_then(|read| {
        let thoughts = usage::count(tokens, "thoughts")?;
        let tool = usage::count(tokens, "tool")?;
        let model = message.get("model").and_then(Value::as_str);
        let tokens = Tokens {
            input: read
                .input
                .saturating_sub(read.cache_read)
                .saturating_add(tool),
            output: read.output.saturating_add(thoughts),
            ..read
        };
        Ok(Call::response(
            Some(id.to_owned()),
            model.map(str::to_owned),
            tokens,
        ))
    });
    usage_observation(call, tokens)
}

/// The call id standing for the unrecorded tool call of an empty `gemini` message.
fn pending_call_id(message_id: &str) -> String {
    format!("{message_id}-pending")
}

/// What one message says (docs/formats.md §3.2–3.3).
fn message_observations(id: &str, message: &Map<String, Value>) -> Vec<Observation> {
    let at = message
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(Timestamp::parse_rfc3339);
    let record = |kind| Observation::Record(Record { at, kind });
    let content = message.get("content");
    let mut out = Vec::new();
    match message.get("type").and_then(Value::as_str) {
        Some("user") => {
            let parts = Parts::of(content);
            for response in &parts.responses {
                out.push(record(RecordKind::ToolResult {
                    call_id: response.clone(),
                    rejected: false,
                }));
            }
            // `displayContent` is what the user typed, before `@file` expansion; prefer it.
            let shown = Parts::of(message.get("displayContent"));
            let text = if shown.text.trim().is_empty() {
                parts.text
            } else {
                shown.text
            };
            if !text.trim().is_empty() {
                out.push(record(RecordKind::Prompt {
                    text: one_line(&text, 200),
                }));
            }
        }
        Some("gemini") => {
            if let Some(model) = message.get("model").and_then(Value::as_str) {
                out.push(Observation::Info(Info {
                    model: Some(model.to_string()),
                    ..Info::default()
                }));
            }
            if let Some(tokens) = message.get("tokens").filter(|tokens| !tokens.is_null()) {
                out.push(usage(id, message, tokens));
            }
            let calls = message
                .get("toolCalls")
                .and_then(Value::as_array)
                .filter(|calls| !calls.is_empty());
            let text = Parts::of(content).text;
            let has_thoughts = message
                .get("thoughts")
                .and_then(Value::as_array)
                .is_some_and(|thoughts| !thoughts.is_empty());
            if let Some(calls) = calls {
                let mut finished = at;
                for (index, call) in calls.iter().enumerate() {
                    for observation in call_observations(id, index, call, at) {
                        if let Observation::Record(record) = &observation {
                            finished = finished.max(record.at);
                        }
                        out.push(observation);
                    }
                }
                // When the user cancels every call, Gemini sends nothing back to the model: the
                // turn is over. Newer versions also write "Request cancelled."; older ones don't.
                let all_cancelled = calls
                    .iter()
                    .all(|call| call.get("status").and_then(Value::as_str) == Some("cancelled"));
                if all_cancelled {
                    out.push(Observation::Record(Record {
                        at: finished,
                        kind: RecordKind::Interrupted { turn_id: None },
                    }));
                }
            } else if !text.trim().is_empty() {
                out.push(record(RecordKind::ModelText));
            } else if content.is_none() && has_thoughts {
                out.push(record(RecordKind::ModelThinking));
            } else {
                // The stream ended without text and the tool calls are not recorded yet: Gemini
                // writes them only once they complete, so a tool is running or waiting for
                // approval. The two are the same bytes on disk; the title tells them apart.
                out.push(record(RecordKind::ToolCall {
                    call_id: pending_call_id(id),
                    name: "tool".to_string(),
                    detail: None,
                    input: None,
                    kind: CallKind::Plain,
                }));
            }
        }
        Some("info") => {
            let text = Parts::of(content).text;
            let text = text.trim();
            if text == CANCELLED {
                out.push(record(RecordKind::Interrupted { turn_id: None }));
            } else if text.starts_with(STOPPED) {
                // A tool asked to stop the agent; Gemini ends the turn without asking the model.
                out.push(record(RecordKind::TurnFailed {
                    message: Some(one_line(text, 200)),
                }));
            }
        }
        Some("error") => {
            let text = one_line(&Parts::of(content).text, 200);
            out.push(record(RecordKind::TurnFailed {
                message: (!text.is_empty()).then_some(text),
            }));
        }
        // A warning says nothing about the turn.
        Some("warning") => {}
        // Nor does a message type a later version added, but it is counted.
        _ => {
            let message = Value::Object(message.clone());
            let kind = message.get("type").unwrap_or(&Value::Null);
            out.push(UnreadRecord::of_type("message type", kind, &message).observation());
        }
    }
    out
}

/// A completed tool call and, when it finished, its result. Gemini records calls only after
/// completion, so a recorded call with a final status is never left open.
fn call_observations(
    message_id: &str,
    index: usize,
    call: &Value,
    at: Option<Timestamp>,
) -> Vec<Observation> {
    let Some(call) = call.as_object() else {
        return Vec::new();
    };
    let call_id = call
        .get("id")
        .and_then(Value::as_str)
        .map_or_else(|| format!("{message_id}-{index}"), str::to_string);
    let name = call
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("tool")
        .to_string();
    let text = call.get("args").and_then(call_text);
    let detail = text
        .map(|text| one_line(text, 120))
        .filter(|text| !text.is_empty());
    let input = text.and_then(CallInput::of);
    let mut out = vec![Observation::Record(Record {
        at,
        kind: RecordKind::ToolCall {
            call_id: call_id.clone(),
            name,
            detail,
            input,
            kind: CallKind::Plain,
        },
    })];
    let status = call.get("status").and_then(Value::as_str);
    if let Some(status @ ("success" | "error" | "cancelled")) = status {
        let finished_at = call
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(Timestamp::parse_rfc3339)
            .or(at);
        out.push(Observation::Record(Record {
            at: finished_at,
            kind: RecordKind::ToolResult {
                call_id,
                rejected: status == "cancelled",
            },
        }));
    }
    out
}

/// What a call is about, from its arguments: the command of a shell call, the path of a
/// file call, the pattern of a search.
fn call_text(args: &Value) -> Option<&str> {
    const KEYS: [&str; 8] = [
        "command",
        "file_path",
        "absolute_path",
        "path",
        "dir_path",
        "pattern",
        "query",
        "url",
    ];
    let args = args.as_object()?;
    KEYS.iter()
        .find_map(|key| args.get(*key).and_then(Value::as_str))
}

/// The text and function responses of a `PartListUnion`: a string, a part, or a list of either.
#[derive(Debug, Default)]
struct Parts {
    text: String,
    /// The call ids (or, lacking one, the tool names) of `functionResponse` parts.
    responses: Vec<String>,
}

impl Parts {
    fn of(content: Option<&Value>) -> Parts {
        let mut parts = Parts::default();
        match content {
            Some(Value::Array(items)) => items.iter().for_each(|item| parts.add(item)),
            Some(item) => parts.add(item),
            None => {}
        }
        parts
    }

    fn add(&mut self, part: &Value) {
        match part {
            Value::String(text) => self.push_text(text),
            Value::Object(part) => {
                if let Some(text) = part.get("text").and_then(Value::as_str) {
                    // A thought part is the model's reasoning, not its answer.
                    if part.get("thought").and_then(Value::as_bool) != Some(true) {
                        self.push_text(text);
                    }
                }
                if let Some(response) = part.get("functionResponse").and_then(Value::as_object) {
                    let id = response
                        .get("id")
                        .and_then(Value::as_str)
                        .or_else(|| response.get("name").and_then(Value::as_str))
                        .unwrap_or("tool");
                    self.responses.push(id.to_string());
                }
            }
            _ => {}
        }
    }

    fn push_text(&mut self, text: &str) {
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(text);
    }
}
