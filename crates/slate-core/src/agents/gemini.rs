//! The Gemini CLI adapter: chat recordings, processes and project folders (docs/formats.md §3).
//!
//! Gemini's JSONL chat recording is not append-only in meaning: a message is re-appended under the
//! same `id` whenever it changes, `{"$set":…}` patches the metadata (and a `$set` carrying a whole
//! `messages` array replaces the history), and `{"$rewindTo":id}` drops a message and everything
//! after it. [`ChatFold`] keeps the folded message list so that every line can be answered with
//! observations that leave the tracker's fold right: a plain append yields just the new message's
//! records, anything that rewrites history yields [`Observation::Reset`] and a replay of the
//! folded list. This module also recognises Gemini processes and maps project temp folders to
//! their roots from names and bytes it is handed. It deliberately does no I/O (the sources read
//! `projects.json`, `.project_root` and the transcripts) and decides no status.

use std::collections::HashMap;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::keys::{DialogKeys, Press};
use super::screens::{Detail, DialogKind, DialogShape, OptionLayout, ScreenGrammar, Summary, Top};
use super::titles::{Grammar, TitleKind};
use super::{
    one_line, program_name, AgentProcess, Base, CallInput, CallKind, Description, Found, Info,
    Layout, LineError, LineParser, Observation, ProcessRole, Processes, ProjectFolder, Record,
    RecordKind, Root, Sessions, Title, TitleSource, Watch,
};
use crate::model::{AgentKind, ProcessInfo, Timestamp};

/// Gemini CLI, as Slate knows it (docs/formats.md §3).
pub static DESCRIPTION: Description = Description {
    id: "gemini-cli",
    name: "Gemini",
    product: "Gemini CLI",
    processes: Processes {
        programs: &["gemini"],
        recognise,
        relaunch_parent: Some(is_relaunch_parent),
    },
    // `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini` (docs/formats.md §3).
    root: Root {
        candidates: &[
            (Base::Var("GEMINI_CLI_HOME"), ".gemini"),
            (Base::Home, ".gemini"),
        ],
        variables: &[],
    },
    watch: Watch {
        folders: &[("tmp", true)],
        files: &[".jsonl", ".json"],
    },
    sessions: Sessions::Transcripts(Layout {
        folders: &[&["tmp", "*", "chats"], &["tmp", "*", "chats", "*"]],
        classify: classify_transcript,
        parser: |_| Box::new(ChatFold::new()),
        names: None,
        whole_file: Some(fold_legacy_json),
        full_id: Some(session_id_in),
        project: Some(ProjectFolder {
            parent: "tmp",
            marker: ".project_root",
            registry: "projects.json",
            from_registry: project_root_from_registry,
        }),
    }),
    listing: None,
    // Static titles that change with the state, padded to 80 characters (docs/formats.md §3.4).
    titles: Some(Grammar {
        animates: false,
        frames: &[],
        busy: &["✦  ", "⏲  "],
        action_required: &["✋  Action Required"],
        idle: &["◇  Ready", "Gemini CLI"],
        otherwise: TitleKind::Other,
    }),
    // Dialogs are boxes at the bottom, the highlighted option marked `●`; the permission box has
    // no key hints, its last option ends in `(esc)` (docs/formats.md §10).
    screens: Some(ScreenGrammar {
        dialogs: &[
            DialogShape {
                kind: DialogKind::Plan,
                footer: "Ctrl+G to edit plan",
                top: Top::Line("Ready to start implementation?"),
                holds: &[],
                options: OptionLayout::Numbered,
                summary: &[("Plan", Summary::After("Ready to start implementation?"))],
                widens: &["automatically", "always"],
                detail: &[],
            },
            DialogShape {
                kind: DialogKind::Question,
                footer: "Enter to select",
                top: Top::Line("Answer Questions"),
                holds: &[],
                options: OptionLayout::Numbered,
                summary: &[("Question", Summary::After("Answer Questions"))],
                widens: &[],
                detail: &[],
            },
            DialogShape {
                kind: DialogKind::Permission,
                footer: "(esc)",
                top: Top::Line("? "),
                holds: &[],
                options: OptionLayout::Numbered,
                summary: &[
                    // The box holds the command; the line heading it holds the command when it
                    // is short, else the call's description (permission-chain.txt).
                    ("Run", Summary::Boxed("? Shell")),
                    ("Run", Summary::Prefix("? Shell")),
                    ("Permission", Summary::Prefix("? ")),
                ],
                widens: &["for this session", "always"],
                detail: &[Detail::Boxed],
            },
        ],
        working: &["esc to cancel"],
        idle: &["Type your message", "for shortcuts"],
        status_lines: 7,
        markers: &["●"],
        margin: 3,
        breaks_after: &[],
    }),
    // Digits pick; Escape rejects. A free answer is paced: the burst lost its text
    // (docs/formats.md §10).
    keys: Some(DialogKeys {
        deny: Press::Escape,
        highlighted: Press::Enter,
        free_text: &["enter a custom value", "type your feedback"],
        text_pause_ms: 700,
        // Gemini CLI records a call only once it has finished, so no pending call is known.
        drawn_inputs: &[],
        lines_under_input: 0,
    }),
};

/// Gemini CLI itself.
pub const KIND: AgentKind = AgentKind::of(&DESCRIPTION);

/// `tmp/<project>/chats/session-<minute>-<short id>.jsonl` is a session's chat (the pre-0.39
/// `.json` of the same name is a whole-file chat), and
/// `tmp/<project>/chats/<parentSessionId>/<subSessionId>.jsonl` a sub-agent's, rolled up into the
/// parent (docs/formats.md §3).
///
/// A session's full id is only inside its file (the metadata line's `sessionId`); the file name
/// carries its first 8 characters. The full id is the key everything else uses (a sub-agent's
/// folder, `--resume`), so the sources read it from the first line ([`session_id_in`]) when they
/// first see the file, and keep the short id only when that line names none.
pub fn classify_transcript(parts: &[&str]) -> Option<Found> {
    match parts {
        ["tmp", _, "chats", file] => Some(Found {
            whole_file: !file.ends_with(".jsonl"),
            short_id: true,
            ..Found::main(session_file_id(file)?)
        }),
        ["tmp", _, "chats", parent, file] => {
            let (parent, sub) = subagent_file(parent, file)?;
            Some(Found::subagent(parent, sub))
        }
        _ => None,
    }
}

/// The full session id a chat states: its metadata line's `sessionId` (the first line of a
/// `.jsonl` chat, without its newline), or the whole document's (a legacy `.json` chat).
pub fn session_id_in(bytes: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    let id = value.get("sessionId")?.as_str()?;
    (!id.is_empty()).then(|| id.to_string())
}

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
        // `warning`, and message types a later version may add, say nothing about the turn.
        _ => {}
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

/// Recognises a Gemini CLI process: `node …/@google/gemini-cli/bundle/gemini.js` (or
/// `…/dist/index.js`, or the npm `bin/gemini` link run by node), or a binary named `gemini`.
///
/// The CLI relaunches itself in a child node process with the same script, so one session shows as
/// a parent and a child. This function sees one process at a time and recognises both; the
/// processes edge must call [`is_relaunch_parent`] and mark the parent `ProcessRole::Helper` so
/// the pair vouches once.
pub fn recognise(process: &ProcessInfo) -> Option<AgentProcess> {
    let (_, args) = invocation(process)?;
    let (role, session_arg) = read_args(args);
    Some(AgentProcess {
        agent: KIND,
        role,
        folder_arg: None,
        session_arg,
    })
}

/// True when `process` is a Gemini process that relaunched itself: another Gemini process in
/// `all` runs the same script and has `process` as its parent. The parent only waits for its child,
/// which is the real session.
pub fn is_relaunch_parent(process: &ProcessInfo, all: &[ProcessInfo]) -> bool {
    let Some((script, _)) = invocation(process) else {
        return false;
    };
    all.iter().any(|other| {
        other.pid != process.pid
            && other.ppid == Some(process.pid)
            && invocation(other).is_some_and(|(other_script, _)| same_script(script, other_script))
    })
}

/// True when two command lines name the same script. The child gets the parent's script as Node
/// resolved it, so a parent started as `node bundle/gemini.js` has a child with the absolute path.
fn same_script(a: &str, b: &str) -> bool {
    let a = a.replace('\\', "/");
    let b = b.replace('\\', "/");
    let relative = |path: &str| path.trim_start_matches("./").to_string();
    a == b
        || (!a.starts_with('/') && b.ends_with(&format!("/{}", relative(&a))))
        || (!b.starts_with('/') && a.ends_with(&format!("/{}", relative(&b))))
}

/// The Gemini entry point a process runs and the arguments after it, or `None` when the process
/// is not Gemini.
fn invocation(process: &ProcessInfo) -> Option<(&str, &[String])> {
    let (first, rest) = match process.cmd.split_first() {
        Some(split) => split,
        None => {
            // Without a command line (another user's process) only the executable can tell.
            let exe = process.exe.as_deref()?;
            return (program_name(exe) == "gemini").then_some((exe, &[]));
        }
    };
    let program = program_name(first);
    if program == "gemini" {
        return Some((first.as_str(), rest));
    }
    if !matches!(program.as_str(), "node" | "nodejs" | "bun") {
        return None;
    }
    // Skip the runtime's own options to find the script; a few of them take a value.
    let mut index = 0;
    while let Some(arg) = rest.get(index) {
        if !arg.starts_with('-') {
            break;
        }
        let takes_value = matches!(
            arg.as_str(),
            "-r" | "--require" | "--import" | "--loader" | "--experimental-loader"
        );
        index += if takes_value { 2 } else { 1 };
    }
    let script = rest.get(index)?;
    is_gemini_script(script).then(|| (script.as_str(), rest.get(index + 1..).unwrap_or(&[])))
}

fn is_gemini_script(script: &str) -> bool {
    let normalised = script.replace('\\', "/").to_ascii_lowercase();
    if program_name(&normalised) == "gemini" {
        return true;
    }
    // The bundle's file name is distinctive; `dist/index.js` is not, so it must sit in a
    // `gemini-cli` package or checkout.
    let bundle = normalised == "bundle/gemini.js" || normalised.ends_with("/bundle/gemini.js");
    bundle || (normalised.contains("gemini-cli/") && normalised.ends_with("/dist/index.js"))
}

/// The role and the named session of a Gemini command line (the arguments after the script).
fn read_args(args: &[String]) -> (ProcessRole, Option<String>) {
    let mut role = ProcessRole::Interactive;
    let mut session = None;
    for (index, arg) in args.iter().enumerate() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value)),
            _ => (arg.as_str(), None),
        };
        let value = || inline.or_else(|| args.get(index + 1).map(String::as_str));
        match flag {
            "--list-sessions" | "--delete-session" | "--version" | "-v" | "--help" | "-h"
            | "--list-extensions" | "-l" => return (ProcessRole::Helper, None),
            "-p" | "--prompt" => role = ProcessRole::Print,
            "-r" | "--resume" => {
                session = value()
                    .filter(|id| crate::agents::is_uuid(id))
                    .map(str::to_string);
            }
            _ => {}
        }
    }
    // Subcommands come first: `gemini mcp …`, `gemini extensions …` manage the CLI.
    if matches!(
        args.first().map(String::as_str),
        Some("mcp" | "extensions" | "extension")
    ) {
        return (ProcessRole::Helper, None);
    }
    (role, session)
}

/// The short session id in a chat file name: `session-<YYYY-MM-DDTHH-MM>-<8 hex>.jsonl` (or the
/// legacy `.json`) gives the 8 characters. The full id is in the file's metadata.
pub fn session_file_id(file_name: &str) -> Option<String> {
    let stem = file_name.strip_prefix("session-")?;
    let stem = stem
        .strip_suffix(".jsonl")
        .or_else(|| stem.strip_suffix(".json"))?;
    let (minute, short) = stem.rsplit_once('-')?;
    let minute_ok = minute.len() == 16
        && minute.char_indices().all(|(at, c)| match at {
            4 | 7 | 13 => c == '-',
            10 => c == 'T',
            _ => c.is_ascii_digit(),
        });
    let short_ok = short.len() == 8 && short.chars().all(|c| c.is_ascii_hexdigit());
    (minute_ok && short_ok).then(|| short.to_string())
}

/// The parent session id and the sub-agent session id of a sub-agent chat at
/// `chats/<parentSessionId>/<subagentSessionId>.jsonl`, from the folder and file names. The chat's
/// own metadata says only `kind:"subagent"`; the parent is known from the path alone.
pub fn subagent_file(dir_name: &str, file_name: &str) -> Option<(String, String)> {
    let sub = file_name.strip_suffix(".jsonl")?;
    (crate::agents::is_uuid(dir_name) && crate::agents::is_uuid(sub))
        .then(|| (dir_name.to_string(), sub.to_string()))
}

/// The project root a `tmp/<dir>` folder belongs to, from the bytes of `~/.gemini/projects.json`
/// (`{"projects":{"/abs/root":"slug"}}`). A slug dir matches its entry's slug; a legacy
/// `tmp/<sha256>` dir matches the root whose [`hash_for`] it is.
pub fn project_root_from_registry(projects_json: &[u8], tmp_dir_name: &str) -> Option<String> {
    let value: Value = serde_json::from_slice(projects_json).ok()?;
    let projects = value.get("projects")?.as_object()?;
    let by_slug = projects
        .iter()
        .find(|(_, slug)| slug.as_str() == Some(tmp_dir_name));
    if let Some((root, _)) = by_slug {
        return Some(root.clone());
    }
    let is_hash = tmp_dir_name.len() == 64 && tmp_dir_name.chars().all(|c| c.is_ascii_hexdigit());
    if !is_hash {
        return None;
    }
    projects
        .keys()
        .find(|root| hash_for(root).eq_ignore_ascii_case(tmp_dir_name))
        .cloned()
}

/// The base slug Gemini gives a project root's temp folder: its last path component, lower-cased,
/// with every run of characters outside `[a-z0-9]` turned into one `-`, trimmed of `-`. Gemini
/// adds `-1`, `-2`… on a collision, which only `projects.json` records.
pub fn slug_for(root: &str) -> String {
    let base = root
        .trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(root)
        .to_lowercase();
    let mut slug = String::new();
    for c in base.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            slug.push(c);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_matches('-');
    if slug.is_empty() {
        "project".to_string()
    } else {
        slug.to_string()
    }
}

/// The hex SHA-256 of a project root: the name of a pre-0.29 temp folder, and the `projectHash`
/// of every chat's metadata.
pub fn hash_for(root: &str) -> String {
    Sha256::digest(root.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_ids_come_only_from_well_formed_names() {
        assert_eq!(
            session_file_id("session-2026-11-28T10-40-5e1f2a3b.jsonl").as_deref(),
            Some("5e1f2a3b")
        );
        assert_eq!(
            session_file_id("session-2026-01-12T08-00-0b1c2d3e.json").as_deref(),
            Some("0b1c2d3e")
        );
        assert_eq!(
            session_file_id("session-2026-11-28T10-40-5e1f2a3.jsonl"),
            None
        );
        assert_eq!(
            session_file_id("session-2026-11-28-10-40-5e1f2a3b.jsonl"),
            None
        );
        assert_eq!(
            session_file_id("session-2026-11-28T10-40-5e1f2a3b.txt"),
            None
        );
        assert_eq!(session_file_id("logs.json"), None);
        assert_eq!(session_file_id("session-ü"), None);
    }

    #[test]
    fn sub_agent_chats_name_their_parent_by_folder() {
        assert_eq!(
            subagent_file(
                "5e1f2a3b-6c7d-4e8f-9a0b-1c2d3e4f5a6b",
                "9c5d6e7f-0a1b-4c2d-8e3f-5a6b7c8d9e0f.jsonl"
            ),
            Some((
                "5e1f2a3b-6c7d-4e8f-9a0b-1c2d3e4f5a6b".to_string(),
                "9c5d6e7f-0a1b-4c2d-8e3f-5a6b7c8d9e0f".to_string()
            ))
        );
        assert_eq!(
            subagent_file("chats", "session-2026-11-28T10-40-5e1f2a3b.jsonl"),
            None
        );
        assert_eq!(
            subagent_file(
                "5e1f2a3b-6c7d-4e8f-9a0b-1c2d3e4f5a6b",
                "9c5d6e7f-0a1b-4c2d-8e3f-5a6b7c8d9e0f.json"
            ),
            None
        );
    }

    #[test]
    fn slugs_follow_the_last_path_component() {
        assert_eq!(slug_for("/home/dev/acme-api"), "acme-api");
        assert_eq!(slug_for("/home/dev/My Project_2/"), "my-project-2");
        assert_eq!(slug_for("C:\\Users\\dev\\Über"), "ber");
        assert_eq!(slug_for("/"), "project");
    }

    #[test]
    fn uuids_are_full_uuids() {
        assert!(crate::agents::is_uuid(
            "5e1f2a3b-6c7d-4e8f-9a0b-1c2d3e4f5a6b"
        ));
        assert!(!crate::agents::is_uuid("latest"));
        assert!(!crate::agents::is_uuid("3"));
        assert!(!crate::agents::is_uuid(
            "5e1f2a3b-6c7d-4e8f-9a0b-1c2d3e4f5a6"
        ));
    }
}
