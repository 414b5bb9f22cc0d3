//! The OpenCode adapter: its description, what a stored OpenCode session means, and which
//! processes are OpenCode.
//!
//! OpenCode (≥ 1.2) keeps its sessions in SQLite rows rather than an append-only transcript
//! (docs/formats.md §4.2), so this adapter reads whole rows: one session row plus its newest
//! messages, each with its parts, and states the facts they hold (docs/formats.md §4.3). Because a
//! re-read replaces what an earlier read saw, every read starts with `Observation::Reset`. The
//! pre-1.2 JSON file tree holds the same shapes and is read through the same code. This module
//! never touches the database or the files themselves; `sources::stores` does, and hands the rows
//! in.

use serde_json::Value;

mod tokens;

use super::hooks::{HookFormat, Hooks, Meaning, Verified};
use super::keys::{DialogKeys, Press};
use super::screens::{Detail, DialogKind, DialogShape, OptionLayout, ScreenGrammar, Summary, Top};
use super::titles::{Grammar, TitleKind};
use super::unread::UnreadRecord;
use super::{
    one_line, program_name, AgentProcess, Base, CallInput, CallKind, Description, Info, LineError,
    Observation, OpenCodeStore, ProcessRole, Processes, Record, RecordKind, Root, Sessions,
    StoreKind, Title, TitleSource, Watch,
};
use crate::model::{AgentKind, ProcessInfo, Timestamp};

/// OpenCode, as Slate knows it (docs/formats.md §4).
pub static DESCRIPTION: Description = Description {
    id: "opencode",
    name: "OpenCode",
    product: "OpenCode",
    processes: Processes {
        programs: &["opencode"],
        recognise,
        relaunch_parent: None,
    },
    // `$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`, on every platform; `$OPENCODE_DB`
    // names the main database (docs/formats.md §4.1).
    root: Root {
        candidates: &[
            (Base::XdgData, "opencode"),
            (Base::Home, ".local/share/opencode"),
        ],
        variables: &["OPENCODE_DB"],
    },
    // The databases and their WAL files, beside each other in the data folder.
    watch: Watch {
        folders: &[("", false)],
        files: &[".db", ".db-wal"],
    },
    sessions: Sessions::Store(StoreKind::OpenCode(OpenCodeStore {
        database: "opencode",
        variable: "OPENCODE_DB",
    })),
    listing: None,
    // Always static: `OpenCode` on the home screen, `OC | <session title>` in a session
    // (docs/formats.md §4.4).
    titles: Some(Grammar {
        animates: false,
        frames: &[],
        busy: &[],
        action_required: &[],
        idle: &["OC | ", "OpenCode"],
        otherwise: TitleKind::Other,
    }),
    // Dialogs are a block behind the `┃` bar at the bottom; the permission dialog draws its
    // options in a row beside its key hints, and the highlighted option is marked by its
    // background colour only (docs/formats.md §10). Its title never changes, so the screen is
    // what tells a dialog.
    screens: Some(ScreenGrammar {
        dialogs: &[
            PERMISSION_DIALOG,
            DialogShape {
                kind: DialogKind::Plan,
                footer: "esc dismiss",
                top: Top::Block("┃"),
                holds: &["start implementing"],
                options: OptionLayout::Numbered,
                summary: &[("Plan", Summary::Within("Plan at ", " is complete"))],
                widens: &[],
                detail: &[],
            },
            QUESTION_DIALOG,
        ],
        working: &["esc interrupt"],
        idle: &["ctrl+p commands"],
        status_lines: 3,
        markers: &[],
        margin: 5,
        breaks_after: &['/'],
        under_dialogs: 0,
    }),
    // The permission row has no numbers: Enter takes the highlighted "Allow once" and a digit is
    // ignored. Its question and plan take digits; a free answer works as one burst
    // (docs/formats.md §10).
    hooks: Some(&HOOKS),
    recorded: &["1.18.33"],
    keys: Some(DialogKeys {
        deny: Press::Escape,
        confirm_reject: None,
        highlighted: Press::Enter,
        free_text: &["type your own answer"],
        text_pause_ms: 0,
        // The recorded bash permission draws the tool part's `command` after `$ `.
        drawn_inputs: &["bash"],
        lines_under_input: 0,
    }),
};

/// Its own hooks (docs/hooks.md): a plugin file of Slate's in its config folder.
static HOOKS: Hooks = plugin_hooks(&[
    (Base::XdgConfig, "opencode/plugin/slate-hooks.js"),
    (Base::Home, ".config/opencode/plugin/slate-hooks.js"),
]);

/// The hooks of OpenCode and its forks, whose plugin in `file` (the first candidate whose base
/// is set) gets every bus event: those Slate listens to, with what each means, and where each
/// names its session, its permission and what it asks.
pub const fn plugin_hooks(file: &'static [(Base, &'static str)]) -> Hooks {
    Hooks {
        file,
        format: HookFormat::Plugin,
        events: &[
            ("permission.asked", Meaning::Permission),
            ("permission.replied", Meaning::ToolStart),
            ("question.asked", Meaning::Question),
            ("question.replied", Meaning::ToolStart),
            ("question.rejected", Meaning::ToolStart),
            ("session.idle", Meaning::TurnEnd),
        ],
        session: &["/properties/sessionID"],
        tool: &["/properties/permission"],
        detail: &["/properties/patterns/0", "/properties/questions/0/question"],
        notification: &[],
        questions: &[],
        trust: None,
        guarded: false,
        verified: Verified::ShippedCode,
    }
}

/// OpenCode's permission dialog: a block behind the `┃` bar, the command after `$ `, its options
/// in a row before the key hints. Kilo Code, a fork, draws the same.
pub const PERMISSION_DIALOG: DialogShape = DialogShape {
    kind: DialogKind::Permission,
    footer: "⇆ select",
    top: Top::Block("┃"),
    holds: &["Permission required"],
    options: OptionLayout::Row("ctrl+f"),
    summary: &[("Run", Summary::Prefix("$ "))],
    widens: &["always"],
    detail: &[Detail::Hanging("$ ")],
};

/// OpenCode's question dialog, numbered options above `esc dismiss`; Kilo Code draws the same.
pub const QUESTION_DIALOG: DialogShape = DialogShape {
    kind: DialogKind::Question,
    footer: "esc dismiss",
    top: Top::Block("┃"),
    holds: &[],
    options: OptionLayout::Numbered,
    summary: &[("Question", Summary::First)],
    widens: &[],
    detail: &[],
};

/// OpenCode itself.
pub const KIND: AgentKind = AgentKind::of(&DESCRIPTION);

/// The columns of one `session` row this adapter reads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionRow {
    pub id: String,
    /// Set for a sub-agent (`task`) session, which rolls up into its parent.
    pub parent_id: Option<String>,
    /// The session's working folder.
    pub directory: String,
    pub title: String,
    pub version: Option<String>,
    /// Epoch milliseconds, as every OpenCode time.
    pub time_created: i64,
    pub time_updated: i64,
    pub time_compacting: Option<i64>,
    pub time_archived: Option<i64>,
}

/// One `message` row with its parts. `data` is the message's JSON info without its id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MessageRow {
    pub id: String,
    pub time_created: i64,
    pub data: String,
    /// The message's parts, ordered by id (ids are time-ordered).
    pub parts: Vec<PartRow>,
}

/// One `part` row. `data` is the part's JSON without its ids.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PartRow {
    pub id: String,
    pub data: String,
}

/// A row that could not be read, by the id of the message or part it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowError {
    pub row_id: String,
    pub error: LineError,
}

/// The observations one stored session states, dropping rows that do not parse. See
/// [`observe_session_counted`] for the same with the bad rows reported.
pub fn observe_session(session: &SessionRow, messages: &[MessageRow]) -> Vec<Observation> {
    observe_session_counted(session, messages).0
}

/// The observations one stored session states, and the rows that could not be read.
///
/// `messages` are in time order, oldest first; the caller passes only the newest few, because
/// what decides a state is always near the end.
pub fn observe_session_counted(
    session: &SessionRow,
    messages: &[MessageRow],
) -> (Vec<Observation>, Vec<RowError>) {
    let mut errors = Vec::new();
    let mut parsed = Vec::with_capacity(messages.len());
    for message in messages {
        let data = match parse_object(message.data.as_bytes()) {
            Ok(data) => data,
            Err(error) => {
                errors.push(RowError {
                    row_id: message.id.clone(),
                    error,
                });
                continue;
            }
        };
        let mut parts = Vec::with_capacity(message.parts.len());
        for part in &message.parts {
            match parse_object(part.data.as_bytes()) {
                Ok(data) => parts.push(data),
                Err(error) => errors.push(RowError {
                    row_id: part.id.clone(),
                    error,
                }),
            }
        }
        parsed.push((message, data, parts));
    }

    let model = parsed.iter().rev().find_map(|(_, data, _)| model_of(data));
    let mut observations = vec![
        Observation::Reset,
        Observation::Info(Info {
            session_id: Some(session.id.clone()),
            cwd: Some(session.directory.clone()).filter(|cwd| !cwd.is_empty()),
            cli_version: session.version.clone().filter(|v| !v.is_empty()),
            model,
            title: title_of(&session.title),
            parent_session: session.parent_id.clone().filter(|id| !id.is_empty()),
            started_at: Some(Timestamp::from_millis(session.time_created)),
            ..Info::default()
        }),
    ];
    for (message, data, parts) in &parsed {
        observe_message(message, data, parts, &mut observations);
    }
    if let Some(compacting) = session.time_compacting {
        observations.push(record(compacting, RecordKind::Compacting));
    }
    if let Some(archived) = session.time_archived {
        // Archiving is the user putting the session away: the closest thing OpenCode has to an
        // end stamp.
        observations.push(record(archived, RecordKind::SessionEnded));
    }
    (observations, errors)
}

/// Reads one session of the pre-1.2 JSON tree: the session file and, per message, the message
/// file with its part files. The shapes are the row shapes, with the ids inside the JSON.
pub fn observe_legacy(
    session_json: &[u8],
    messages: &[(Vec<u8>, Vec<Vec<u8>>)],
) -> Result<Vec<Observation>, LineError> {
    let session = legacy_session(session_json)?;
    let mut rows = Vec::with_capacity(messages.len());
    for (message_json, parts_json) in messages {
        // A message file that does not parse is skipped like a bad row, not fatal to the session.
        let Ok(message) = parse_object(message_json) else {
            continue;
        };
        let id = str_at(&message, &["id"]).unwrap_or_default().to_string();
        let time_created = i64_at(&message, &["time", "created"]).unwrap_or(0);
        let mut parts: Vec<PartRow> = parts_json
            .iter()
            .filter_map(|part_json| {
                let part = parse_object(part_json).ok()?;
                Some(PartRow {
                    id: str_at(&part, &["id"]).unwrap_or_default().to_string(),
                    data: part.to_string(),
                })
            })
            .collect();
        parts.sort_by(|a, b| a.id.cmp(&b.id));
        rows.push(MessageRow {
            id,
            time_created,
            data: message.to_string(),
            parts,
        });
    }
    rows.sort_by(|a, b| (a.time_created, &a.id).cmp(&(b.time_created, &b.id)));
    Ok(observe_session(&session, &rows))
}

/// Parses a legacy session file into the row shape.
pub fn legacy_session(session_json: &[u8]) -> Result<SessionRow, LineError> {
    let session = parse_object(session_json)?;
    let id = str_at(&session, &["id"]).ok_or(LineError::Shape("session has no id"))?;
    Ok(SessionRow {
        id: id.to_string(),
        parent_id: str_at(&session, &["parentID"]).map(str::to_string),
        directory: str_at(&session, &["directory"])
            .unwrap_or_default()
            .to_string(),
        title: str_at(&session, &["title"]).unwrap_or_default().to_string(),
        version: str_at(&session, &["version"]).map(str::to_string),
        time_created: i64_at(&session, &["time", "created"]).unwrap_or(0),
        time_updated: i64_at(&session, &["time", "updated"]).unwrap_or(0),
        time_compacting: i64_at(&session, &["time", "compacting"]),
        time_archived: i64_at(&session, &["time", "archived"]),
    })
}

fn observe_message(
    message: &MessageRow,
    data: &Value,
    parts: &[Value],
    observations: &mut Vec<Observation>,
) {
    let created = i64_at(data, &["time", "created"]).unwrap_or(message.time_created);
    match str_at(data, &["role"]) {
        Some("user") => observe_user(created, parts, observations),
        Some("assistant") => observe_assistant(message, created, data, parts, observations),
        _ => {}
    }
}

fn observe_user(created: i64, parts: &[Value], observations: &mut Vec<Observation>) {
    let texts = |synthetic: bool| -> Vec<&str> {
        parts
            .iter()
            .filter(|part| str_at(part, &["type"]) == Some("text"))
            .filter(|part| bool_at(part, &["ignored"]) != Some(true))
            .filter(|part| synthetic || bool_at(part, &["synthetic"]) != Some(true))
            .filter_map(|part| str_at(part, &["text"]))
            .collect()
    };
    // Text OpenCode injects itself is marked `synthetic`; what the user typed is the rest. A
    // message with only injected text is still the start of a turn.
    let mut text = texts(false);
    if text.is_empty() {
        text = texts(true);
    }
    let compaction = parts
        .iter()
        .any(|part| str_at(part, &["type"]) == Some("compaction"));
    if compaction && text.is_empty() {
        observations.push(record(created, RecordKind::Compacting));
        return;
    }
    observations.push(record(
        created,
        RecordKind::Prompt {
            text: text.join("\n").trim().to_string(),
        },
    ));
}

fn observe_assistant(
    message: &MessageRow,
    created: i64,
    data: &Value,
    parts: &[Value],
    observations: &mut Vec<Observation>,
) {
    observations.extend(tokens::observe(&message.id, data));
    let turn_id = Some(message.id.clone());
    // An assistant message is one step of the model's loop; while it has no completion time the
    // step is still running, whatever its last part says (docs/formats.md §4.3).
    observations.push(record(
        created,
        RecordKind::TurnStarted {
            turn_id: turn_id.clone(),
        },
    ));
    for part in parts {
        observe_part(created, part, observations);
    }
    let completed = i64_at(data, &["time", "completed"]);
    let error = data.get("error").filter(|error| !error.is_null());
    if let Some(error) = error {
        let at = completed.unwrap_or(created);
        if str_at(error, &["name"]) == Some("MessageAbortedError") {
            observations.push(record(at, RecordKind::Interrupted { turn_id }));
        } else {
            let message = str_at(error, &["data", "message"])
                .or_else(|| str_at(error, &["message"]))
                .or_else(|| str_at(error, &["name"]))
                .map(|text| one_line(text, 200));
            observations.push(record(at, RecordKind::TurnFailed { message }));
        }
        return;
    }
    let Some(completed) = completed else { return };
    // `tool-calls` means the loop goes on with another step; `unknown` is what an interrupted
    // stream leaves. Any other finish (or none, in older versions) ends the turn, and so does a
    // step with a call the person rejected: the loop stops there (docs/formats.md §16.3).
    let finish = str_at(data, &["finish"]);
    let rejected = parts.iter().any(|part| {
        str_at(part, &["type"]) == Some("tool") && part.get("state").is_some_and(is_rejection)
    });
    if rejected || !matches!(finish, Some("tool-calls") | Some("unknown")) {
        observations.push(record(completed, RecordKind::TurnEnded { turn_id }));
    }
}

fn observe_part(created: i64, part: &Value, observations: &mut Vec<Observation>) {
    let start = i64_at(part, &["time", "start"]);
    let end = i64_at(part, &["time", "end"]);
    match str_at(part, &["type"]) {
        Some("text") => {
            if bool_at(part, &["synthetic"]) == Some(true) {
                return;
            }
            let at = end.or(start).unwrap_or(created);
            observations.push(record(at, RecordKind::ModelText));
        }
        Some("reasoning") => {
            let at = end.or(start).unwrap_or(created);
            observations.push(record(at, RecordKind::ModelThinking));
        }
        Some("tool") => observe_tool(created, part, observations),
        Some("retry") => {
            let at = i64_at(part, &["time", "created"]).unwrap_or(created);
            observations.push(record(at, RecordKind::Retrying));
        }
        Some("compaction") => observations.push(record(created, RecordKind::Compacting)),
        // Step markers, snapshots, patches, files and sub-agent parts move nothing.
        Some(
            "step-start" | "step-finish" | "snapshot" | "patch" | "file" | "agent" | "subtask",
        ) => {}
        kind => {
            let kind = kind.map_or(Value::Null, Value::from);
            observations.push(UnreadRecord::of_type("part type", &kind, part).observation());
        }
    }
}

fn observe_tool(created: i64, part: &Value, observations: &mut Vec<Observation>) {
    let Some(call_id) = str_at(part, &["callID"]) else {
        return;
    };
    let name = str_at(part, &["tool"]).unwrap_or("tool");
    let state = part.get("state").unwrap_or(&Value::Null);
    let status = str_at(state, &["status"]);
    let start = i64_at(state, &["time", "start"]).unwrap_or(created);
    let kind = match name {
        "question" => CallKind::Question,
        "task" => CallKind::SubAgent,
        _ => CallKind::Plain,
    };
    observations.push(record(
        start,
        RecordKind::ToolCall {
            call_id: call_id.to_string(),
            name: name.to_string(),
            detail: tool_detail(name, state),
            input: tool_input(name, state),
            kind,
        },
    ));
    if matches!(status, Some("completed") | Some("error")) {
        let end = i64_at(state, &["time", "end"]).unwrap_or(start);
        observations.push(record(
            end,
            RecordKind::ToolResult {
                call_id: call_id.to_string(),
                rejected: is_rejection(state),
            },
        ));
    }
}

/// A short description of a tool call: the question asked, else the title OpenCode gave the call,
/// else its command or file.
fn tool_detail(name: &str, state: &Value) -> Option<String> {
    let input = state.get("input").unwrap_or(&Value::Null);
    let question = (name == "question")
        .then(|| str_at(input, &["questions", "0", "question"]))
        .flatten();
    let text = question
        .or_else(|| str_at(state, &["title"]))
        .or_else(|| str_at(input, &["command"]))
        .or_else(|| str_at(input, &["filePath"]))
        .or_else(|| str_at(input, &["description"]))
        .or_else(|| str_at(input, &["pattern"]))
        .or_else(|| str_at(input, &["url"]))?;
    let text = one_line(text, 120);
    (!text.is_empty()).then_some(text)
}

/// A tool call's input: the question asked, else its command, file or other primary argument
/// (not the title OpenCode gave the call, which is its own words for it).
fn tool_input(name: &str, state: &Value) -> Option<CallInput> {
    let input = state.get("input").unwrap_or(&Value::Null);
    let question = (name == "question")
        .then(|| str_at(input, &["questions", "0", "question"]))
        .flatten();
    let text = question
        .or_else(|| str_at(input, &["command"]))
        .or_else(|| str_at(input, &["filePath"]))
        .or_else(|| str_at(input, &["description"]))
        .or_else(|| str_at(input, &["pattern"]))
        .or_else(|| str_at(input, &["url"]))?;
    CallInput::of(text)
}

/// A tool error caused by the user saying no to a permission prompt.
fn is_rejection(state: &Value) -> bool {
    str_at(state, &["status"]) == Some("error")
        && str_at(state, &["error"]).is_some_and(|error| error.contains("rejected permission"))
}

/// The session title, unless it is one of the placeholders OpenCode writes before it has
/// generated one (`New session - <time>`, `Child session - <time>`).
fn title_of(title: &str) -> Option<Title> {
    let title = title.trim();
    let placeholder = ["New session - ", "Child session - "]
        .iter()
        .any(|prefix| title.starts_with(prefix));
    (!title.is_empty() && !placeholder).then(|| Title {
        text: title.to_string(),
        source: TitleSource::Generated,
    })
}

fn model_of(data: &Value) -> Option<String> {
    str_at(data, &["modelID"])
        .or_else(|| str_at(data, &["model", "modelID"]))
        .map(str::to_string)
}

fn record(ms: i64, kind: RecordKind) -> Observation {
    Observation::Record(Record {
        at: Some(Timestamp::from_millis(ms)),
        kind,
    })
}

fn parse_object(bytes: &[u8]) -> Result<Value, LineError> {
    let text = std::str::from_utf8(bytes).map_err(|_| LineError::NotUtf8)?;
    let value: Value =
        serde_json::from_str(text).map_err(|error| LineError::NotJson(error.to_string()))?;
    if value.is_object() {
        Ok(value)
    } else {
        Err(LineError::Shape("row is not a JSON object"))
    }
}

/// Follows a path of object keys (or array indexes written as digits) into a JSON value.
fn at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |value, key| match value {
        Value::Object(map) => map.get(*key),
        Value::Array(items) => items.get(key.parse::<usize>().ok()?),
        _ => None,
    })
}

fn str_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(value, path)?.as_str()
}

fn i64_at(value: &Value, path: &[&str]) -> Option<i64> {
    let value = at(value, path)?;
    value
        .as_i64()
        .or_else(|| value.as_f64().map(|ms| ms as i64))
}

fn bool_at(value: &Value, path: &[&str]) -> Option<bool> {
    at(value, path)?.as_bool()
}

/// Subcommands that start a headless server another client drives: they may write sessions, but
/// they never vouch for one (docs/formats.md §9).
const DAEMON_COMMANDS: &[&str] = &["serve", "web", "acp", "attach"];

/// Subcommands that are not a session at all.
const HELPER_COMMANDS: &[&str] = &[
    "session",
    "auth",
    "models",
    "db",
    "upgrade",
    "uninstall",
    "stats",
    "export",
    "import",
    "github",
    "pr",
    "mcp",
    "agent",
    "debug",
    "generate",
    "completion",
    "plugin",
    "providers",
    "help",
];

/// Options that take a value, so the value is not mistaken for the project folder.
const VALUED_OPTIONS: &[&str] = &[
    "-s",
    "--session",
    "-m",
    "--model",
    "--agent",
    "--prompt",
    "--port",
    "--hostname",
    "--log-level",
    "--mdns-domain",
    "--cors",
];

/// What tells the processes of OpenCode, or of a fork of it that kept its command line, apart.
pub struct Fork {
    pub kind: AgentKind,
    /// The native binary's program names.
    pub natives: &'static [&'static str],
    /// What the path of the npm launcher's script ends with.
    pub launchers: &'static [&'static str],
    /// Subcommands beyond OpenCode's that start a headless server.
    pub daemons: &'static [&'static str],
}

static OPENCODE: Fork = Fork {
    kind: KIND,
    natives: &["opencode"],
    launchers: &["/bin/opencode", "opencode-ai/bin/opencode.js"],
    daemons: &[],
};

/// Recognises an OpenCode process (docs/formats.md §4.4): the native binary (`opencode`, or the npm
/// package's `bin/opencode.exe`), and the npm launcher script that starts it, as a helper.
pub fn recognise(process: &ProcessInfo) -> Option<AgentProcess> {
    recognise_fork(process, &OPENCODE)
}

/// Recognises a process of OpenCode or of the fork `fork`: its native binary, whose arguments
/// say its role, folder and session, and the npm launcher that starts it, as a helper.
pub fn recognise_fork(process: &ProcessInfo, fork: &Fork) -> Option<AgentProcess> {
    let argv0 = process.cmd.first().map(String::as_str).unwrap_or_default();
    let exe = process.exe.as_deref().unwrap_or_default();
    let native = [argv0, exe, process.name.as_str()]
        .iter()
        .any(|path| fork.natives.contains(&program_name(path).as_str()));
    if !native {
        // The npm package's launcher runs under node or bun and spawns the native binary; the
        // child is the session, the launcher is only its parent.
        let runtime = matches!(program_name(argv0).as_str(), "node" | "bun");
        let launcher = process.cmd.iter().skip(1).take(3).any(|arg| {
            let arg = arg.replace('\\', "/");
            fork.launchers.iter().any(|end| arg.ends_with(end))
        });
        return (runtime && launcher).then_some(AgentProcess {
            agent: fork.kind,
            role: ProcessRole::Helper,
            folder_arg: None,
            session_arg: None,
        });
    }
    let mut role = None;
    let mut folder_arg = None;
    let mut session_arg = None;
    let mut args = process.cmd.iter().skip(1);
    let mut first_positional = true;
    while let Some(arg) = args.next() {
        if let Some(value) = arg.strip_prefix("--session=") {
            session_arg = Some(value.to_string());
            continue;
        }
        if arg == "-s" || arg == "--session" {
            session_arg = args.next().cloned();
            continue;
        }
        if matches!(arg.as_str(), "-h" | "--help" | "-v" | "--version") {
            role = role.or(Some(ProcessRole::Helper));
            continue;
        }
        if VALUED_OPTIONS.contains(&arg.as_str()) {
            args.next();
            continue;
        }
        if arg.starts_with('-') {
            continue;
        }
        if !first_positional {
            continue;
        }
        first_positional = false;
        let command = arg.as_str();
        if command == "run" {
            role = Some(ProcessRole::Print);
        } else if DAEMON_COMMANDS.contains(&command) || fork.daemons.contains(&command) {
            role = Some(ProcessRole::Daemon);
        } else if HELPER_COMMANDS.contains(&command) {
            role = Some(ProcessRole::Helper);
        } else {
            folder_arg = Some(arg.clone());
        }
        if role.is_some() && role != Some(ProcessRole::Print) {
            break;
        }
    }
    Some(AgentProcess {
        agent: fork.kind,
        role: role.unwrap_or(ProcessRole::Interactive),
        folder_arg,
        session_arg,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(cmd: &[&str]) -> ProcessInfo {
        ProcessInfo {
            pid: 1,
            ppid: None,
            name: "opencode".to_string(),
            exe: Some("/home/dev/.opencode/bin/opencode".to_string()),
            cmd: cmd.iter().map(|arg| arg.to_string()).collect(),
            cwd: None,
            start_time: Timestamp::from_millis(0),
            start_ticks: None,
        }
    }

    #[test]
    fn roles_and_arguments() {
        let seen = recognise(&process(&["opencode", "/work/acme"])).expect("recognised");
        assert_eq!(seen.role, ProcessRole::Interactive);
        assert_eq!(seen.folder_arg.as_deref(), Some("/work/acme"));
        let seen = recognise(&process(&["opencode", "-s", "ses_1", "--model", "x/y"]))
            .expect("recognised");
        assert_eq!(seen.session_arg.as_deref(), Some("ses_1"));
        assert_eq!(seen.folder_arg, None);
        let role = |cmd: &[&str]| recognise(&process(cmd)).map(|seen| seen.role);
        assert_eq!(
            role(&["opencode", "run", "fix it"]),
            Some(ProcessRole::Print)
        );
        assert_eq!(role(&["opencode", "serve"]), Some(ProcessRole::Daemon));
        assert_eq!(
            role(&["opencode", "session", "list"]),
            Some(ProcessRole::Helper)
        );
        assert_eq!(role(&["opencode", "--version"]), Some(ProcessRole::Helper));
    }

    #[test]
    fn placeholder_titles_are_not_titles() {
        assert_eq!(title_of("New session - 2026-11-28T11:00:00.000Z"), None);
        assert!(title_of("Run integration tests").is_some());
    }
}
