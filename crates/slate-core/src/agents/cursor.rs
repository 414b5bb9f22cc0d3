//! The cursor-agent adapter: its description, what a Cursor CLI chat store means, and which
//! processes are Cursor's.
//!
//! A chat lives in a small SQLite store (docs/formats.md §5.2): a `meta` row of hex-encoded JSON, a
//! protobuf root blob listing the message blobs in order, and the message blobs themselves in the
//! Vercel AI SDK's JSON shape. Newer builds add a `meta.json` sidecar and an `agent-transcripts`
//! JSONL file. This module decodes those bytes (including a small hand-written protobuf reader,
//! because the root blob is the only protobuf Slate reads) and states the facts they hold. It never
//! opens the store: `sources::stores` reads the rows and hands the bytes in. Cursor records carry
//! no times, so every record here is undated and the tracker dates it by the store's last write.

use md5::{Digest, Md5};
use serde_json::Value;

use super::{
    one_line, program_name, AgentProcess, Base, CallInput, CallKind, Description, Info, LineError,
    Observation, ProcessRole, Processes, Record, RecordKind, Root, Sessions, StoreKind, Title,
    TitleSource, Watch,
};
use crate::model::{AgentKind, ProcessInfo, Timestamp};

/// cursor-agent, as Slate knows it (docs/formats.md §5).
pub static DESCRIPTION: Description = Description {
    id: "cursor-agent",
    name: "Cursor",
    product: "cursor-agent",
    processes: Processes {
        programs: &["cursor-agent"],
        recognise,
        relaunch_parent: None,
    },
    // `$CURSOR_CONFIG_DIR`, else `$XDG_CONFIG_HOME/cursor`, else `~/.cursor` (docs/formats.md
    // §5.1).
    root: Root {
        candidates: &[
            (Base::Var("CURSOR_CONFIG_DIR"), ""),
            (Base::XdgConfig, "cursor"),
            (Base::Home, ".cursor"),
        ],
        variables: &[],
    },
    // A chat's `store.db`, its WAL and its `meta.json` sidecar, under `chats/<bucket>/<agentId>/`.
    watch: Watch {
        folders: &[("chats", true)],
        files: &[".db", ".db-wal", ".json"],
    },
    sessions: Sessions::Store(StoreKind::Cursor),
    listing: None,
    // Its terminal titles are not known.
    titles: None,
    screens: None,
    hooks: Some(&HOOKS),
    recorded: &[],
    keys: None,
};

/// Its own hooks (docs/hooks.md): where they are configured and the events Slate listens to.
static HOOKS: crate::agents::hooks::Hooks = crate::agents::hooks::Hooks {
    file: &[(Base::Home, ".cursor/hooks.json")],
    format: crate::agents::hooks::HookFormat::Commands,
    events: &[
        ("beforeSubmitPrompt", crate::agents::hooks::Meaning::Prompt),
        (
            "beforeShellExecution",
            crate::agents::hooks::Meaning::ToolStart,
        ),
        (
            "beforeMCPExecution",
            crate::agents::hooks::Meaning::ToolStart,
        ),
        (
            "afterShellExecution",
            crate::agents::hooks::Meaning::ToolEnd,
        ),
        ("afterMCPExecution", crate::agents::hooks::Meaning::ToolEnd),
        ("afterFileEdit", crate::agents::hooks::Meaning::ToolEnd),
        ("stop", crate::agents::hooks::Meaning::TurnEnd),
    ],
    session: &["/conversation_id"],
    tool: &["/hook_event_name"],
    detail: &["/command", "/file_path"],
    notification: &[],
    questions: &[],
    trust: None,
    guarded: false,
    verified: crate::agents::hooks::Verified::Documentation,
};

/// cursor-agent itself.
pub const KIND: AgentKind = AgentKind::of(&DESCRIPTION);

/// The `meta` row of a chat store (key `'0'`), decoded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CursorMeta {
    /// The chat's id, which is also its folder name and the `--resume` argument.
    pub agent_id: Option<String>,
    /// The blob id (sha256 hex) of the newest root blob.
    pub latest_root_blob_id: Option<String>,
    /// The chat's name; `New Agent` until the agent names it.
    pub name: Option<String>,
    pub mode: Option<String>,
    pub created_at: Option<Timestamp>,
    pub last_used_model: Option<String>,
}

/// The parts of a root blob Slate reads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CursorRoot {
    /// The message blob ids in conversation order, as lower-case hex. An id may repeat: identical
    /// messages share one blob.
    pub message_ids: Vec<String>,
    /// The workspace as a `file://` URI, as written (field 9).
    pub workspace_uri: Option<String>,
}

impl CursorRoot {
    /// The workspace folder, decoded from its `file://` URI.
    pub fn workspace_path(&self) -> Option<String> {
        file_uri_path(self.workspace_uri.as_deref()?)
    }
}

/// The name Cursor gives a chat before anything names it; not a title.
const DEFAULT_NAME: &str = "New Agent";

/// Decodes the `meta` row's value: hex-encoded UTF-8 JSON.
pub fn decode_meta(hex_value: &str) -> Result<CursorMeta, LineError> {
    let bytes =
        decode_hex(hex_value.trim()).ok_or(LineError::Shape("meta value is not hex-encoded"))?;
    let text = std::str::from_utf8(&bytes).map_err(|_| LineError::NotUtf8)?;
    let value: Value =
        serde_json::from_str(text).map_err(|error| LineError::NotJson(error.to_string()))?;
    if !value.is_object() {
        return Err(LineError::Shape("meta value is not a JSON object"));
    }
    let text_of = |key: &str| {
        value
            .get(key)
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
            .map(str::to_string)
    };
    Ok(CursorMeta {
        agent_id: text_of("agentId"),
        latest_root_blob_id: text_of("latestRootBlobId").map(|id| id.to_ascii_lowercase()),
        name: text_of("name"),
        mode: text_of("mode"),
        created_at: value
            .get("createdAt")
            .and_then(Value::as_i64)
            .map(Timestamp::from_millis),
        last_used_model: text_of("lastUsedModel"),
    })
}

/// The largest length-delimited field the reader accepts; a root blob is small, and a length past
/// this is garbage rather than data.
const MAX_FIELD_LEN: u64 = 64 * 1024 * 1024;

/// Decodes a root blob: a protobuf message whose field 1 repeats 32-byte message blob ids and
/// whose field 9 is the workspace URI. Other fields are skipped; groups (wire types 3 and 4), a
/// truncated field or an id of the wrong length make the blob unreadable.
pub fn decode_root(blob: &[u8]) -> Result<CursorRoot, LineError> {
    let mut root = CursorRoot::default();
    let mut reader = Wire {
        bytes: blob,
        pos: 0,
    };
    while !reader.done() {
        let key = reader
            .varint()
            .ok_or(LineError::Shape("root blob has a truncated field key"))?;
        let field = key >> 3;
        match key & 0x7 {
            0 => {
                reader
                    .varint()
                    .ok_or(LineError::Shape("root blob has a truncated varint"))?;
            }
            1 => {
                reader
                    .take(8)
                    .ok_or(LineError::Shape("root blob has a truncated fixed64"))?;
            }
            5 => {
                reader
                    .take(4)
                    .ok_or(LineError::Shape("root blob has a truncated fixed32"))?;
            }
            2 => {
                let len = reader
                    .varint()
                    .filter(|len| *len <= MAX_FIELD_LEN)
                    .ok_or(LineError::Shape("root blob has a bad field length"))?;
                let payload = reader
                    .take(len as usize)
                    .ok_or(LineError::Shape("root blob has a truncated field"))?;
                match field {
                    1 if payload.len() == 32 => root.message_ids.push(encode_hex(payload)),
                    1 => return Err(LineError::Shape("root blob has a message id of bad length")),
                    9 => {
                        let uri = std::str::from_utf8(payload).map_err(|_| LineError::NotUtf8)?;
                        root.workspace_uri = Some(uri.to_string());
                    }
                    _ => {}
                }
            }
            _ => return Err(LineError::Shape("root blob has an unsupported wire type")),
        }
    }
    Ok(root)
}

/// A cursor over protobuf wire bytes. Every read checks its bounds and returns `None` past the
/// end, so garbage never panics.
struct Wire<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Wire<'a> {
    fn done(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    fn varint(&mut self) -> Option<u64> {
        let mut value: u64 = 0;
        for shift in 0..10 {
            let byte = *self.bytes.get(self.pos)?;
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << (shift * 7);
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        // More than ten bytes cannot be a 64-bit varint.
        None
    }

    fn take(&mut self, len: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(len)?;
        let slice = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(slice)
    }
}

/// The observations a chat store states: `Reset`, the session's bookkeeping, then one record per
/// message fact, in root order and undated.
///
/// `sidecar` is the `meta.json` next to the store when there is one; `messages` are the message
/// blobs in root order. A blob that is not JSON is skipped.
pub fn observe_messages(
    meta: &CursorMeta,
    sidecar: Option<&[u8]>,
    root: Option<&CursorRoot>,
    messages: &[Vec<u8>],
) -> Vec<Observation> {
    let sidecar: Option<Value> = sidecar
        .and_then(|bytes| serde_json::from_slice(bytes).ok())
        .filter(Value::is_object);
    let sidecar_text = |key: &str| {
        sidecar
            .as_ref()?
            .get(key)?
            .as_str()
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .map(str::to_string)
    };
    let mut records = Vec::new();
    let mut first_query = None;
    for blob in messages {
        let Ok(message) = serde_json::from_slice::<Value>(blob) else {
            continue;
        };
        observe_message(&message, &mut records, &mut first_query);
    }
    let title = sidecar_text("title")
        .or_else(|| meta.name.clone().filter(|name| name != DEFAULT_NAME))
        .or(first_query)
        .map(|text| Title {
            text: one_line(&text, 200),
            source: TitleSource::Generated,
        });
    let cwd = sidecar_text("cwd").or_else(|| root.and_then(CursorRoot::workspace_path));
    let started_at = meta.created_at.or_else(|| {
        sidecar
            .as_ref()?
            .get("createdAtMs")?
            .as_i64()
            .map(Timestamp::from_millis)
    });
    let mut observations = vec![
        Observation::Reset,
        Observation::Info(Info {
            session_id: meta.agent_id.clone(),
            cwd,
            model: meta.last_used_model.clone(),
            title,
            started_at,
            ..Info::default()
        }),
    ];
    observations.extend(records.into_iter().map(undated));
    observations
}

fn observe_message(
    message: &Value,
    records: &mut Vec<RecordKind>,
    first_query: &mut Option<String>,
) {
    let role = message.get("role").and_then(Value::as_str);
    let content = message.get("content").unwrap_or(&Value::Null);
    match role {
        Some("user") => {
            // Only a `<user_query>` is something the user typed; other user rows are context the
            // agent attaches (`<user_info>`, files).
            let text = content_texts(content).join("\n");
            if let Some(query) = user_query(&text) {
                if first_query.is_none() {
                    *first_query = Some(query.clone());
                }
                records.push(RecordKind::Prompt { text: query });
            }
        }
        Some("assistant") => {
            let blocks = blocks(content);
            let has_call = blocks
                .iter()
                .any(|block| block_type(block) == Some("tool-call"));
            for block in &blocks {
                match block_type(block) {
                    Some("reasoning") => records.push(RecordKind::ModelThinking),
                    Some("text") if !has_call => records.push(RecordKind::ModelText),
                    Some("tool-call") => {
                        if let Some(call) = tool_call(block, "toolCallId", "toolName", "args") {
                            records.push(call);
                        }
                    }
                    _ => {}
                }
            }
            // A plain string is the whole answer.
            if content.is_string() {
                records.push(RecordKind::ModelText);
            }
        }
        Some("tool") => {
            for block in blocks(content) {
                if block_type(block) == Some("tool-result") {
                    if let Some(call_id) = block.get("toolCallId").and_then(Value::as_str) {
                        records.push(RecordKind::ToolResult {
                            call_id: call_id.to_string(),
                            rejected: false,
                        });
                    }
                }
            }
        }
        _ => {}
    }
}

/// Reads one line of an `agent-transcripts` JSONL file: `{"role","message":{"content":[…]}}`
/// with Anthropic-style blocks, or a `{"type":"turn_ended"}` marker.
pub fn observe_transcript_line(line: &[u8]) -> Result<Vec<Observation>, LineError> {
    let text = std::str::from_utf8(line).map_err(|_| LineError::NotUtf8)?;
    let value: Value =
        serde_json::from_str(text).map_err(|error| LineError::NotJson(error.to_string()))?;
    if !value.is_object() {
        return Err(LineError::Shape("transcript line is not a JSON object"));
    }
    if value.get("type").and_then(Value::as_str) == Some("turn_ended") {
        return Ok(vec![undated(RecordKind::TurnEnded { turn_id: None })]);
    }
    let content = value
        .get("message")
        .and_then(|message| message.get("content"))
        .unwrap_or(&Value::Null);
    let mut records = Vec::new();
    match value.get("role").and_then(Value::as_str) {
        Some("user") => {
            for block in blocks(content) {
                if block_type(block) == Some("tool_result") {
                    if let Some(call_id) = block.get("tool_use_id").and_then(Value::as_str) {
                        records.push(RecordKind::ToolResult {
                            call_id: call_id.to_string(),
                            rejected: false,
                        });
                    }
                }
            }
            let text = content_texts(content).join("\n");
            if let Some(query) = user_query(&text) {
                records.push(RecordKind::Prompt { text: query });
            }
        }
        Some("assistant") => {
            let blocks = blocks(content);
            let has_call = blocks
                .iter()
                .any(|block| block_type(block) == Some("tool_use"));
            for block in &blocks {
                match block_type(block) {
                    Some("thinking") | Some("reasoning") => records.push(RecordKind::ModelThinking),
                    Some("text") if !has_call => records.push(RecordKind::ModelText),
                    Some("tool_use") => {
                        if let Some(call) = tool_call(block, "id", "name", "input") {
                            records.push(call);
                        }
                    }
                    _ => {}
                }
            }
            if content.is_string() {
                records.push(RecordKind::ModelText);
            }
        }
        _ => {}
    }
    Ok(records.into_iter().map(undated).collect())
}

/// The chat bucket of a working folder: the md5 of the folder as the CLI spells it, in hex
/// (`chats/<bucket>/<agentId>/store.db`).
pub fn chat_bucket(cwd: &str) -> String {
    encode_hex(&Md5::digest(cwd.as_bytes()))
}

/// The project slug of `agent-transcripts`: the folder with each run of non-alphanumerics turned
/// into one `-`, trimmed of leading and trailing dashes (`/home/dev/acme-api` →
/// `home-dev-acme-api`).
pub fn project_slug(cwd: &str) -> String {
    let mut slug = String::with_capacity(cwd.len());
    for ch in cwd.chars() {
        if ch.is_ascii_alphanumeric() {
            slug.push(ch);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.trim_matches('-').to_string()
}

fn undated(kind: RecordKind) -> Observation {
    Observation::Record(Record { at: None, kind })
}

fn blocks(content: &Value) -> Vec<&Value> {
    content
        .as_array()
        .map(|items| items.iter().collect())
        .unwrap_or_default()
}

fn block_type(block: &Value) -> Option<&str> {
    block.get("type").and_then(Value::as_str)
}

/// The text of a message's content: the string itself, or its `text` blocks.
fn content_texts(content: &Value) -> Vec<&str> {
    match content {
        Value::String(text) => vec![text.as_str()],
        Value::Array(items) => items
            .iter()
            .filter(|block| block_type(block) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect(),
        _ => Vec::new(),
    }
}

/// The query inside `<user_query>…</user_query>`, trimmed; `None` when the text holds none.
fn user_query(text: &str) -> Option<String> {
    let start = text.find("<user_query>")? + "<user_query>".len();
    let rest = &text[start..];
    let end = rest.find("</user_query>").unwrap_or(rest.len());
    Some(rest[..end].trim().to_string())
}

fn tool_call(block: &Value, id_key: &str, name_key: &str, input_key: &str) -> Option<RecordKind> {
    let call_id = block.get(id_key)?.as_str()?;
    let name = block
        .get(name_key)
        .and_then(Value::as_str)
        .unwrap_or("tool");
    let input = block.get(input_key).unwrap_or(&Value::Null);
    // The most telling argument first: a search's pattern says more than the folder it searches.
    let text = [
        "command",
        "question",
        "target_file",
        "file_path",
        "pattern",
        "query",
        "url",
        "path",
    ]
    .iter()
    .find_map(|key| input.get(*key).and_then(Value::as_str));
    let detail = text
        .map(|text| one_line(text, 120))
        .filter(|text| !text.is_empty());
    Some(RecordKind::ToolCall {
        call_id: call_id.to_string(),
        name: name.to_string(),
        detail,
        input: text.and_then(CallInput::of),
        kind: call_kind(name),
    })
}

/// Cursor's agent toolset has a question tool (`AskQuestion`) and a sub-agent tool; whether the
/// CLI persists them is unverified (docs/formats.md §5.3), so only their names are matched.
fn call_kind(name: &str) -> CallKind {
    let folded: String = name
        .chars()
        .filter(|ch| ch.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    match folded.as_str() {
        "askquestion" | "askuserquestion" => CallKind::Question,
        "task" => CallKind::SubAgent,
        _ => CallKind::Plain,
    }
}

/// The path of a `file://` URI, percent-decoded; `None` for anything else.
fn file_uri_path(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    // `file://host/path` names a host; a local URI has an empty host and a path from `/`.
    let path = if rest.starts_with('/') {
        rest
    } else {
        &rest[rest.find('/')?..]
    };
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = bytes.get(index + 1..index + 3).and_then(|pair| {
                let pair = std::str::from_utf8(pair).ok()?;
                u8::from_str_radix(pair, 16).ok()
            });
            if let Some(byte) = hex {
                decoded.push(byte);
                index += 3;
                continue;
            }
        }
        decoded.push(bytes[index]);
        index += 1;
    }
    let mut path = String::from_utf8(decoded).ok()?;
    // A Windows URI is `file:///C:/dir`: the drive letter follows the slash.
    if path.len() >= 3 && path.as_bytes()[2] == b':' && path.starts_with('/') {
        path.remove(0);
    }
    Some(path)
}

fn encode_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        hex.push(char::from(DIGITS[usize::from(byte >> 4)]));
        hex.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
    hex
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    hex.as_bytes()
        .chunks(2)
        .map(|pair| {
            let pair = std::str::from_utf8(pair).ok()?;
            u8::from_str_radix(pair, 16).ok()
        })
        .collect()
}

/// Subcommands that are not a chat session.
const HELPER_COMMANDS: &[&str] = &[
    "ls", "status", "about", "login", "logout", "mcp", "update", "upgrade", "help", "whoami",
];

/// Recognises a cursor-agent process (docs/formats.md §5.4): the bundled `node` running
/// `…/cursor-agent/versions/<ver>/index.js` (its argv[0] may read `cursor-agent` or `agent`), or a
/// `cursor-agent` binary.
pub fn recognise(process: &ProcessInfo) -> Option<AgentProcess> {
    let script = process.cmd.iter().position(|arg| {
        let arg = arg.replace('\\', "/");
        arg.contains("cursor-agent/versions/") && arg.ends_with("/index.js")
    });
    let user_args: &[String] = match script {
        Some(index) => &process.cmd[index + 1..],
        None => {
            let argv0 = process.cmd.first().map(String::as_str).unwrap_or_default();
            let named = program_name(argv0) == "cursor-agent"
                || process
                    .exe
                    .as_deref()
                    .is_some_and(|exe| program_name(exe) == "cursor-agent");
            if !named {
                return None;
            }
            process.cmd.get(1..).unwrap_or_default()
        }
    };
    let mut role = None;
    let mut print = false;
    let mut folder_arg = None;
    let mut session_arg = None;
    let mut first_positional = true;
    let mut args = user_args.iter().peekable();
    while let Some(arg) = args.next() {
        let arg = arg.as_str();
        if let Some(value) = arg.strip_prefix("--workspace=") {
            folder_arg = Some(value.to_string());
        } else if arg == "--workspace" {
            folder_arg = args.next().cloned();
        } else if let Some(value) = arg
            .strip_prefix("--resume=")
            .or_else(|| arg.strip_prefix("--new-session-id="))
        {
            session_arg = Some(value.to_string());
        } else if arg == "--resume" || arg == "--new-session-id" {
            // `--resume` alone opens a picker; its value is optional, and only a chat id is one.
            if args.peek().is_some_and(|next| crate::agents::is_uuid(next)) {
                session_arg = args.next().cloned();
            }
        } else if arg == "-p" || arg == "--print" {
            print = true;
        } else if matches!(arg, "-h" | "--help" | "-v" | "--version") {
            role = role.or(Some(ProcessRole::Helper));
        } else if matches!(
            arg,
            "--output-format" | "-m" | "--model" | "--api-key" | "-H" | "--header"
        ) {
            args.next();
        } else if arg.starts_with('-') {
        } else if first_positional {
            first_positional = false;
            if arg == "acp" {
                role = Some(ProcessRole::Daemon);
            } else if HELPER_COMMANDS.contains(&arg) {
                role = Some(ProcessRole::Helper);
            }
        }
    }
    let role = role.unwrap_or(if print {
        ProcessRole::Print
    } else {
        ProcessRole::Interactive
    });
    Some(AgentProcess {
        agent: KIND,
        role,
        folder_arg,
        session_arg,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_is_md5_of_the_folder() {
        assert_eq!(
            chat_bucket("/home/dev/acme-api"),
            "ce3fa0aa9e98006977055c78d826399a"
        );
    }

    #[test]
    fn slug_folds_separators() {
        assert_eq!(project_slug("/home/dev/acme-api"), "home-dev-acme-api");
        assert_eq!(project_slug("C:\\Users\\me\\x y"), "C-Users-me-x-y");
    }

    #[test]
    fn file_uris_decode() {
        assert_eq!(
            file_uri_path("file:///home/dev/my%20app").as_deref(),
            Some("/home/dev/my app")
        );
        assert_eq!(file_uri_path("file:///C:/work").as_deref(), Some("C:/work"));
        assert_eq!(file_uri_path("https://x"), None);
    }

    #[test]
    fn varint_reader_stops_at_the_end() {
        assert!(decode_root(&[0x0a]).is_err());
        assert!(decode_root(&[0x0a, 0x20, 1, 2]).is_err());
        assert_eq!(decode_root(&[]), Ok(CursorRoot::default()));
        assert!(decode_root(&[0xff; 11]).is_err());
    }
}
