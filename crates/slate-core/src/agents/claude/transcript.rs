//! Claude Code's transcript lines (docs/formats.md §1.2, §1.3): one JSONL line of a session's
//! own transcript or of a sub-agent's becomes observations. Bookkeeping entries never move a
//! session's time, and sidechain lines keep their records only in a sub-agent's own file.

use serde_json::{Map, Value};

use super::{json_error, str_field, DETAIL_CHARS};
use crate::agents::unread::UnreadRecord;
use crate::agents::usage_observation;
use crate::agents::{
    one_line, Background, CallInput, CallKind, Info, LineError, LineParser, Observation, Record,
    RecordKind, Title, TitleSource,
};
use crate::model::usage::{self, Call};
use crate::model::Timestamp;

/// Reads a Claude Code transcript, a session's own or a sub-agent's. Lines need no memory of
/// each other.
#[derive(Debug, Clone, Copy)]
pub struct TranscriptLines {
    subagent: bool,
}

impl TranscriptLines {
    pub fn new(subagent: bool) -> TranscriptLines {
        TranscriptLines { subagent }
    }
}

impl LineParser for TranscriptLines {
    fn feed(&mut self, line: &[u8]) -> Result<Vec<Observation>, LineError> {
        if self.subagent {
            observe_subagent(line)
        } else {
            observe(line)
        }
    }

    fn restart(&mut self) {}
}

/// The text of the `tool_result` Claude Code writes when the user rejects a tool in its
/// permission dialog. Permission prompts themselves are never written to the transcript.
const REJECTION_TEXT: &str = "The user doesn't want to proceed with this tool use";

/// The start of the marker line Claude Code writes when the user interrupts a turn (Esc, or a
/// rejected tool: `[Request interrupted by user for tool use]`).
const INTERRUPT_MARKER: &str = "[Request interrupted by user";

/// How many characters of a prompt an observation keeps; the tracker shows it as the last prompt.
const PROMPT_CHARS: usize = 200;

/// Entry types that are turn activity (the "message" group of 2.1.332's entry-type table). Every
/// other type is bookkeeping and never yields a record, because 2.1.x appends bookkeeping after
/// nearly every turn and a reader that dated the session by it would be wrong on every turn.
const CONVERSATIONAL: [&str; 5] = ["user", "assistant", "system", "attachment", "progress"];

/// Reads one line of a session's own transcript.
///
/// Sub-agent lines that older generations (1.x) kept inside the main file (`isSidechain: true`)
/// state facts about the session but no turn records of its own: the sub-agent's tool calls are
/// not the session's.
pub fn observe(line: &[u8]) -> Result<Vec<Observation>, LineError> {
    observe_as(line, Role::Main)
}

/// Reads one line of a sub-agent's transcript (`subagents/agent-<id>.jsonl`, or 2.0.x's
/// `agent-<id>.jsonl` beside the session). Its lines are all `isSidechain: true`, and here they
/// keep their records. The line's `sessionId` names the parent session, so it is reported as
/// `parent_session`, and the sub-agent's own `agentId` as `session_id`.
pub fn observe_subagent(line: &[u8]) -> Result<Vec<Observation>, LineError> {
    observe_as(line, Role::Subagent)
}

/// Which kind of transcript a line comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Main,
    Subagent,
}

fn observe_as(line: &[u8], role: Role) -> Result<Vec<Observation>, LineError> {
    let text = std::str::from_utf8(line).map_err(|_| LineError::NotUtf8)?;
    // A blank line carries nothing; it is not worth a problem report.
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let value: Value = serde_json::from_str(text).map_err(json_error)?;
    let Value::Object(entry) = &value else {
        return Err(LineError::Shape("line is not a JSON object"));
    };
    let kind = entry.get("type").unwrap_or(&Value::Null);
    match kind.as_str() {
        Some(kind) if CONVERSATIONAL.contains(&kind) => {
            Ok(observe_conversational(entry, kind, role))
        }
        Some(kind) if is_bookkeeping(kind) => {
            Ok(observe_bookkeeping(entry, kind).into_iter().collect())
        }
        _ => Ok(vec![
            UnreadRecord::of_type("type", kind, &value).observation()
        ]),
    }
}

/// The bookkeeping types Claude Code writes (docs/formats.md §1.2): they never move a session's
/// time, and only titles are read from them. A type not here, or in [`CONVERSATIONAL`], is
/// counted as unread.
fn is_bookkeeping(kind: &str) -> bool {
    const KNOWN: &[&str] = &[
        "custom-title",
        "ai-title",
        "summary",
        "tag",
        "last-prompt",
        "permission-mode",
        "mode",
        "queue-operation",
        "file-history-snapshot",
        "cost-state",
        "atis-latch",
        "artifact-yield",
        "tools-used",
    ];
    KNOWN.contains(&kind) || kind.starts_with("api-request")
}

/// Titles are the only bookkeeping worth reporting; every other bookkeeping type says nothing the
/// tracker uses.
fn observe_bookkeeping(entry: &Map<String, Value>, kind: &str) -> Option<Observation> {
    let (field, source) = match kind {
        "custom-title" => ("customTitle", TitleSource::Custom),
        "ai-title" => ("aiTitle", TitleSource::Generated),
        "summary" => ("summary", TitleSource::Summary),
        _ => return None,
    };
    let text = one_line(str_field(entry, field)?, PROMPT_CHARS);
    if text.is_empty() {
        return None;
    }
    Some(Observation::Info(Info {
        session_id: str_field(entry, "sessionId").map(str::to_owned),
        title: Some(Title { text, source }),
        ..Info::default()
    }))
}

fn observe_conversational(entry: &Map<String, Value>, kind: &str, role: Role) -> Vec<Observation> {
    let sidechain = entry.get("isSidechain").and_then(Value::as_bool) == Some(true);
    let mut observations = Vec::new();
    let info = line_info(entry, kind, role, sidechain);
    if info != Info::default() {
        observations.push(Observation::Info(info));
    }
    if kind == "assistant" {
        observations.extend(usage(entry));
    }
    let is_meta = entry.get("isMeta").and_then(Value::as_bool) == Some(true);
    let at = str_field(entry, "timestamp").and_then(Timestamp::parse_rfc3339);
    if sidechain && role == Role::Main {
        return observations;
    }
    if is_meta {
        // A meta line moves no turn, but a background task's end may come as one.
        let ended = (kind == "user")
            .then(|| {
                entry
                    .get("message")
                    .and_then(|message| message.get("content"))
            })
            .flatten()
            .map(background_ended)
            .unwrap_or_default();
        observations.extend(
            ended
                .into_iter()
                .map(|kind| Observation::Record(Record { at, kind })),
        );
        return observations;
    }
    let kinds = match kind {
        "user" => user_records(entry),
        "assistant" => assistant_records(entry),
        "system" => system_records(entry),
        // Attachments (file contents, hook output) and progress lines (hook and tool progress)
        // accompany a turn but do not move it on their own.
        _ => Vec::new(),
    };
    observations.extend(
        kinds
            .into_iter()
            .map(|kind| Observation::Record(Record { at, kind })),
    );
    observations
}

/// What the API response behind an assistant line used: its `message.usage`, under its
/// `message.id` (docs/formats.md §1.6). Claude Code writes a response's content blocks as lines
/// of their own, each with the response's id and usage, so the id makes it count once. A
/// sub-agent's response counts too (it cost as much), in a sidechain line of the main file as in
/// the sub-agent's own. Synthetic notices (`<synthetic>`) were no call.
fn usage(entry: &Map<String, Value>) -> Option<Observation> {
    let message = entry.get("message")?;
    let usage = message.get("usage").filter(|usage| !usage.is_null())?;
    let model = message.get("model").and_then(Value::as_str);
    if model.is_some_and(|model| model.starts_with('<')) {
        return None;
    }
    let id = message.get("id").and_then(Value::as_str).map(str::to_owned);
    let call = usage::tokens(
        usage,
        [
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ],
    )
    .map(|tokens| Call::response(id, model.map(str::to_owned), tokens));
    Some(usage_observation(call, usage))
}

/// The bookkeeping facts of the envelope every conversational line carries.
fn line_info(entry: &Map<String, Value>, kind: &str, role: Role, sidechain: bool) -> Info {
    let owned = |field: &str| str_field(entry, field).map(str::to_owned);
    let (session_id, parent_session) = match role {
        Role::Main => (owned("sessionId"), None),
        Role::Subagent => (owned("agentId"), owned("sessionId")),
    };
    // A sub-agent kept inside the main file often runs a smaller model than the session; it
    // must not stand for the session's model. Synthetic messages (interrupt and error notices)
    // name the pseudo-model `<synthetic>`, which is no model at all.
    let model = if kind == "assistant" && !(sidechain && role == Role::Main) {
        entry
            .get("message")
            .and_then(|message| message.get("model"))
            .and_then(Value::as_str)
            .filter(|model| !model.is_empty() && !model.starts_with('<'))
            .map(str::to_owned)
    } else {
        None
    };
    // `claude -p` and the Agent SDK write `sdk-cli`/`sdk-ts`/`sdk-py`; the TUI writes `cli`, and
    // editor integrations write their own names. Only the `sdk` family has no Needs-you state.
    let print_mode = str_field(entry, "entrypoint").map(|entrypoint| entrypoint.starts_with("sdk"));
    Info {
        session_id,
        cwd: owned("cwd"),
        branch: owned("gitBranch"),
        cli_version: owned("version"),
        model,
        title: None,
        print_mode,
        parent_session,
        started_at: None,
    }
}

fn user_records(entry: &Map<String, Value>) -> Vec<RecordKind> {
    if entry.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
        return vec![RecordKind::Compacting];
    }
    let Some(content) = entry
        .get("message")
        .and_then(|message| message.get("content"))
    else {
        return Vec::new();
    };
    let mut records = match content {
        Value::String(text) => prompt_record(text).into_iter().collect(),
        Value::Array(blocks) => user_block_records(blocks),
        _ => Vec::new(),
    };
    records.extend(background_started(entry));
    records.extend(background_ended(content));
    records
}

/// Work a tool result left running in the background (docs/formats.md §1.7): a Bash command's
/// `toolUseResult.backgroundTaskId` (run with `run_in_background`, or moved there by Ctrl+B or its
/// timeout), an Agent's `toolUseResult` with `status` `async_launched` and its `agentId`.
fn background_started(entry: &Map<String, Value>) -> Option<RecordKind> {
    let result = entry.get("toolUseResult")?.as_object()?;
    let id = |field: &str| {
        result
            .get(field)
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty() && id.len() <= BACKGROUND_ID_CHARS)
            .map(str::to_owned)
    };
    if let Some(id) = id("backgroundTaskId") {
        return Some(RecordKind::BackgroundStarted {
            id,
            work: Background::Command,
        });
    }
    if result.get("status").and_then(Value::as_str) == Some("async_launched") {
        return Some(RecordKind::BackgroundStarted {
            id: id("agentId")?,
            work: Background::Agent,
        });
    }
    None
}

/// The longest background task id read; a longer one is not an id Claude Code writes.
const BACKGROUND_ID_CHARS: usize = 128;

/// The end of background work: the `<task-notification>` Claude Code puts in a user line when a
/// background task stops, with its `<task-id>` and a `<status>` (docs/formats.md §1.7).
fn background_ended(content: &Value) -> Vec<RecordKind> {
    let texts: Vec<&str> = match content {
        Value::String(text) => vec![text.as_str()],
        Value::Array(blocks) => blocks
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect(),
        _ => Vec::new(),
    };
    texts
        .into_iter()
        .filter(|text| text.trim_start().starts_with("<task-notification"))
        .filter_map(|text| {
            let id = between(text, "<task-id>", "</task-id>")?.trim();
            (!id.is_empty() && id.len() <= BACKGROUND_ID_CHARS)
                .then(|| RecordKind::BackgroundEnded { id: id.to_owned() })
        })
        .collect()
}

/// The text between the first `open` and the `close` after it.
fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let length = text[start..].find(close)?;
    Some(&text[start..start + length])
}

/// A user line's blocks: tool results each make a record; the text blocks together make at most
/// one prompt, because an editor integration puts injected context (`<ide_opened_file>…`) in its
/// own text block beside the typed prompt.
fn user_block_records(blocks: &[Value]) -> Vec<RecordKind> {
    let mut records = Vec::new();
    let mut prompt_parts: Vec<&str> = Vec::new();
    let mut has_attachment = false;
    let mut interrupted = false;
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("tool_result") => {
                if let Some(record) = tool_result_record(block) {
                    records.push(record);
                }
            }
            Some("text") => {
                let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                match classify_user_text(text) {
                    UserText::Prompt => prompt_parts.push(text),
                    UserText::Interrupt => interrupted = true,
                    UserText::Injected => {}
                }
            }
            Some("image") | Some("document") => has_attachment = true,
            _ => {}
        }
    }
    if interrupted {
        records.push(RecordKind::Interrupted { turn_id: None });
    } else if !prompt_parts.is_empty() {
        records.push(RecordKind::Prompt {
            text: one_line(&prompt_parts.join(" "), PROMPT_CHARS),
        });
    } else if has_attachment && records.is_empty() {
        // A pasted image or file with no words is still a prompt the model answers.
        records.push(RecordKind::Prompt {
            text: "[image]".to_owned(),
        });
    }
    records
}

fn prompt_record(text: &str) -> Option<RecordKind> {
    match classify_user_text(text) {
        UserText::Prompt => Some(RecordKind::Prompt {
            text: one_line(text, PROMPT_CHARS),
        }),
        UserText::Interrupt => Some(RecordKind::Interrupted { turn_id: None }),
        UserText::Injected => None,
    }
}

/// What a user text is, per 2.1.332's regex
/// `^(?:\s*<[a-z][\w-]*[\s>]|\[Request interrupted by user[^\]]*\])`.
#[derive(Debug, PartialEq, Eq)]
enum UserText {
    Prompt,
    Interrupt,
    /// A command echo, injected context or a notification: not typed by the user as a prompt.
    Injected,
}

fn classify_user_text(text: &str) -> UserText {
    if text.starts_with(INTERRUPT_MARKER) {
        return UserText::Interrupt;
    }
    if starts_with_tag(text) || text.trim().is_empty() {
        return UserText::Injected;
    }
    UserText::Prompt
}

/// True when `text` opens, after optional whitespace, with a tag such as `<command-name>` or
/// `<system-reminder `: a lower-case letter, word characters or hyphens, then `>` or whitespace.
fn starts_with_tag(text: &str) -> bool {
    let Some(rest) = text.trim_start().strip_prefix('<') else {
        return false;
    };
    let mut chars = rest.chars();
    if !chars.next().is_some_and(|first| first.is_ascii_lowercase()) {
        return false;
    }
    for next in chars {
        if next == '>' || next.is_whitespace() {
            return true;
        }
        if !(next.is_alphanumeric() || next == '_' || next == '-') {
            return false;
        }
    }
    false
}

fn tool_result_record(block: &Value) -> Option<RecordKind> {
    let call_id = block.get("tool_use_id").and_then(Value::as_str)?.to_owned();
    let is_error = block.get("is_error").and_then(Value::as_bool) == Some(true);
    let rejected = is_error && result_text_contains(block.get("content"), REJECTION_TEXT);
    Some(RecordKind::ToolResult { call_id, rejected })
}

/// A tool result's content is a string or a list of blocks, of which the text blocks count.
fn result_text_contains(content: Option<&Value>, needle: &str) -> bool {
    match content {
        Some(Value::String(text)) => text.contains(needle),
        Some(Value::Array(blocks)) => blocks.iter().any(|block| {
            block
                .get("text")
                .and_then(Value::as_str)
                .is_some_and(|text| text.contains(needle))
        }),
        _ => false,
    }
}

fn assistant_records(entry: &Map<String, Value>) -> Vec<RecordKind> {
    let Some(message) = entry.get("message") else {
        return Vec::new();
    };
    // After its retries run out, Claude Code writes the API error as a synthetic assistant
    // message: the turn is over, and no more is coming.
    if entry.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true) {
        let message = first_text(message.get("content")).map(|text| one_line(text, DETAIL_CHARS));
        return vec![RecordKind::TurnFailed { message }];
    }
    match message.get("content") {
        Some(Value::String(_)) => vec![RecordKind::ModelText],
        Some(Value::Array(blocks)) => blocks.iter().filter_map(assistant_block_record).collect(),
        _ => Vec::new(),
    }
}

fn first_text(content: Option<&Value>) -> Option<&str> {
    match content {
        Some(Value::String(text)) => Some(text),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .find_map(|block| block.get("text").and_then(Value::as_str)),
        _ => None,
    }
}

fn assistant_block_record(block: &Value) -> Option<RecordKind> {
    match block.get("type").and_then(Value::as_str)? {
        "tool_use" => {
            let call_id = block.get("id").and_then(Value::as_str)?.to_owned();
            let name = block
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let input = block.get("input").unwrap_or(&Value::Null);
            let text = call_text(&name, input);
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
        "text" => Some(RecordKind::ModelText),
        "thinking" | "redacted_thinking" => Some(RecordKind::ModelThinking),
        // Server-side tools (`server_tool_use`, `web_search_tool_result`) run and finish inside
        // one model request, so they never leave a call waiting.
        _ => None,
    }
}

fn call_kind(name: &str) -> CallKind {
    match name {
        "AskUserQuestion" => CallKind::Question,
        "ExitPlanMode" => CallKind::PlanApproval,
        // `Task` is the 1.x/2.0 name of the sub-agent tool.
        "Agent" | "Task" => CallKind::SubAgent,
        _ => CallKind::Plain,
    }
}

/// What a tool call runs, reads, edits or asks, as its input says it: the field a short
/// description of it is taken from, and what the call's `input` keeps.
fn call_text<'a>(name: &str, input: &'a Value) -> Option<&'a str> {
    let field = |key: &str| input.get(key).and_then(Value::as_str);
    match name {
        "Bash" => field("command"),
        "Edit" | "MultiEdit" | "Write" | "Read" => field("file_path"),
        "NotebookEdit" => field("notebook_path"),
        "Agent" | "Task" => field("description"),
        "Grep" | "Glob" => field("pattern"),
        "WebFetch" => field("url"),
        "WebSearch" => field("query"),
        "ExitPlanMode" => field("plan"),
        "Skill" => field("skill"),
        "AskUserQuestion" => input
            .get("questions")
            .and_then(|questions| questions.get(0))
            .and_then(|question| question.get("question"))
            .and_then(Value::as_str),
        _ => None,
    }
}

fn system_records(entry: &Map<String, Value>) -> Vec<RecordKind> {
    let record = match str_field(entry, "subtype") {
        // `turn_duration` is written when an interactive turn ends normally; `stop_hook_summary`
        // when the Stop hooks ran at the end of a turn.
        Some("turn_duration") | Some("stop_hook_summary") => {
            RecordKind::TurnEnded { turn_id: None }
        }
        Some("api_error") => RecordKind::Retrying,
        Some("compact_boundary") => RecordKind::Compacting,
        _ => return Vec::new(),
    };
    vec![record]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_follow_the_cli_regex() {
        assert!(starts_with_tag("<command-name>/clear</command-name>"));
        assert!(starts_with_tag("  <system-reminder>\nx"));
        assert!(starts_with_tag("<local-command-stdout>ok"));
        assert!(starts_with_tag("<task-notification id=\"1\">"));
        assert!(!starts_with_tag("<Foo> is a component"));
        assert!(!starts_with_tag("a < b"));
        assert!(!starts_with_tag("<div"));
        assert!(!starts_with_tag("<a.b>"));
    }
}
