//! The Claude Code adapter: its description, transcript lines, processes, and its own listings.
//!
//! It owns the meaning of Claude Code's on-disk formats (docs/formats.md §1): one JSONL line of
//! `projects/<dir>/<session>.jsonl` (or of a sub-agent's `agent-<id>.jsonl`) becomes
//! [`Observation`]s, a process is recognised from its executable and argv, and the live registry
//! `sessions/<pid>.json`, the output of `claude agents --json` and a background job's
//! `jobs/<id>/state.json` become [`ListingEntry`]s. It deliberately does not decide any state,
//! order records, pair tool calls with results, find files or check that a pid is alive: the
//! tracker and the sources do that. Everything here is a pure function of its bytes.

use serde_json::{Map, Value};

use super::keys::{DialogKeys, Press};
use super::screens::{Detail, DialogKind, DialogShape, OptionLayout, ScreenGrammar, Summary, Top};
use super::titles::{Grammar, TitleKind};
use super::{
    one_line, program_name, AgentProcess, Base, CallInput, CallKind, Description, Found, Info,
    Layout, LineError, LineParser, ListingCommand, ListingRule, Observation, ProcessRole,
    Processes, Record, RecordKind, Root, Sessions, Title, TitleSource, Watch,
};
use crate::model::{AgentKind, ListedStatus, ListingEntry, ProcessInfo, Timestamp};

/// Claude Code, as Slate knows it (docs/formats.md §1).
pub static DESCRIPTION: Description = Description {
    id: "claude-code",
    name: "Claude Code",
    product: "Claude Code",
    processes: Processes {
        programs: &["claude"],
        recognise,
        relaunch_parent: None,
    },
    // `$CLAUDE_CONFIG_DIR`, else `~/.claude` (docs/formats.md §1.1).
    root: Root {
        candidates: &[
            (Base::Var("CLAUDE_CONFIG_DIR"), ""),
            (Base::Home, ".claude"),
        ],
        variables: &[],
    },
    watch: Watch {
        folders: &[("projects", true), ("sessions", false), ("jobs", true)],
        files: &[".jsonl", ".json"],
    },
    sessions: Sessions::Transcripts(Layout {
        folders: &[
            &["projects", "*"],
            &["projects", "*", "*", "subagents"],
            &["projects", "*", "*", "subagents", "workflows", "*"],
        ],
        classify: classify_transcript,
        parser: |subagent| Box::new(TranscriptLines::new(subagent)),
        names: None,
        whole_file: None,
        full_id: None,
        project: None,
    }),
    listing: Some(ListingRule {
        registry: "sessions",
        // `pid-<n>.json` is a legacy generation without status: ignored (docs/formats.md §1.1).
        entry_file: |name| name.ends_with(".json") && !name.starts_with("pid-"),
        parse_entry: parse_registry,
        jobs: Some(("jobs", "state.json", parse_job_state)),
        command: Some(ListingCommand {
            program: "claude",
            args: &["agents", "--json"],
            parse: parse_agents_json,
        }),
    }),
    // `<frame> <title>` while busy, the frames `◐`/`◑` in 2.1.332 and `⠂`/`⠐` in 2.1.197, about
    // once a second; `✳ <title>` when idle and when a dialog waits (docs/formats.md §1.5).
    titles: Some(Grammar {
        animates: true,
        frames: &["◐", "◑", "⠂", "⠐"],
        busy: &[],
        action_required: &[],
        idle: &["✳"],
        otherwise: TitleKind::Other,
    }),
    // Dialogs are drawn under a full-width rule at the bottom; the highlighted option carries
    // `❯` (docs/formats.md §10). The permission dialog shows the command between two dashed
    // rules in 2.1.332 and under "Bash command" in 2.1.197.
    screens: Some(ScreenGrammar {
        dialogs: &[
            DialogShape {
                kind: DialogKind::Permission,
                footer: "Tab to amend",
                top: Top::Line("────"),
                holds: &["Do you want to"],
                options: OptionLayout::Numbered,
                summary: &[
                    ("Run", Summary::Between("╌")),
                    ("Run", Summary::After("Bash command")),
                ],
                widens: &["always", "don't ask again", "auto mode"],
                detail: &[
                    Detail::Between("╌"),
                    Detail::Under("Bash command", "Do you want to"),
                ],
            },
            DialogShape {
                kind: DialogKind::Question,
                footer: "Enter to select",
                top: Top::Line("☐"),
                holds: &[],
                options: OptionLayout::Numbered,
                summary: &[("Question", Summary::After("☐"))],
                widens: &[],
                detail: &[],
            },
            DialogShape {
                kind: DialogKind::Plan,
                footer: "ctrl+g to edit in",
                top: Top::Line("────"),
                holds: &["Would you like to proceed?"],
                options: OptionLayout::Numbered,
                summary: &[("Plan", Summary::Above("Here is Claude's plan:"))],
                widens: &["auto mode", "auto-accept", "always"],
                detail: &[],
            },
        ],
        working: &["esc to interrupt"],
        idle: &["for shortcuts", "mode on", "for agents"],
        status_lines: 4,
        markers: &["❯"],
        margin: 0,
        breaks_after: &[],
    }),
    // An option is its digit alone; Escape rejects a permission and closes a question or a plan.
    // A free answer is the digit of "Type something." (a plan's "Tell Claude what to change"), the
    // text and Enter, paced: 2.1.197 lost the text of one burst in two (docs/formats.md §10).
    keys: Some(DialogKeys {
        deny: Press::Escape,
        highlighted: Press::Enter,
        free_text: &["type something", "tell claude what to change"],
        text_pause_ms: 700,
        // The recorded Bash dialogs draw the command as the `tool_use` records it; 2.1.197 draws
        // the call's description on the line under it.
        drawn_inputs: &["Bash"],
        lines_under_input: 1,
    }),
};

/// Claude Code itself.
pub const KIND: AgentKind = AgentKind::of(&DESCRIPTION);

/// `projects/<dir>/<sessionId>.jsonl` is a session's own transcript, and
/// `projects/<dir>/<sessionId>/subagents[/workflows/<wfId>]/agent-<agentId>.jsonl` are its
/// sub-agents'. The 2.0.x `projects/<dir>/agent-<id>.jsonl` sub-agent files are skipped: their
/// parent is named only inside their lines, and such old sessions are never live any more.
pub fn classify_transcript(parts: &[&str]) -> Option<Found> {
    let (file, folders) = parts.split_last()?;
    let stem = file.strip_suffix(".jsonl")?;
    let subagent = |session: &str| Some(Found::subagent(session, stem.strip_prefix("agent-")?));
    match folders {
        ["projects", _] if !stem.starts_with("agent-") && !stem.is_empty() => {
            Some(Found::main(stem))
        }
        ["projects", _, session, "subagents"] => subagent(session),
        ["projects", _, session, "subagents", "workflows", _] => subagent(session),
        _ => None,
    }
}

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

/// How many characters of a tool call's detail an observation keeps.
const DETAIL_CHARS: usize = 120;

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
    let Value::Object(entry) = value else {
        return Err(LineError::Shape("line is not a JSON object"));
    };
    let Some(kind) = entry.get("type").and_then(Value::as_str) else {
        return Ok(Vec::new());
    };
    if CONVERSATIONAL.contains(&kind) {
        Ok(observe_conversational(&entry, kind, role))
    } else {
        Ok(observe_bookkeeping(&entry, kind).into_iter().collect())
    }
}

/// Titles are the only bookkeeping worth reporting; every other bookkeeping type (and every
/// unknown type) says nothing the tracker uses.
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
    let is_meta = entry.get("isMeta").and_then(Value::as_bool) == Some(true);
    if (sidechain && role == Role::Main) || is_meta {
        return observations;
    }
    let at = str_field(entry, "timestamp").and_then(Timestamp::parse_rfc3339);
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
    match content {
        Value::String(text) => prompt_record(text).into_iter().collect(),
        Value::Array(blocks) => user_block_records(blocks),
        _ => Vec::new(),
    }
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

/// Recognises a Claude Code process (docs/formats.md §1.5): the native binary (`claude`, or a
/// versioned file under `.local/share/claude/versions/`), npm's `bin/claude.exe`, the legacy
/// `node …/@anthropic-ai/claude-code/cli.js`, or any process that titled itself `claude`.
/// Programs that merely mention Claude in an argument (`vim notes-about-claude.md`) are not it.
pub fn recognise(process: &ProcessInfo) -> Option<AgentProcess> {
    let args = claude_args(process)?;
    let subcommand = args.first().map(String::as_str);
    let role = match subcommand {
        Some("daemon" | "daemon-worker") => ProcessRole::Daemon,
        Some(
            "agents" | "mcp" | "config" | "doctor" | "update" | "upgrade" | "install"
            | "setup-token" | "plugin" | "plugins" | "migrate-installer" | "auth" | "login"
            | "logout",
        ) => ProcessRole::Helper,
        _ if args.iter().any(|arg| arg == "-p" || arg == "--print") => ProcessRole::Print,
        _ => ProcessRole::Interactive,
    };
    Some(AgentProcess {
        agent: KIND,
        role,
        folder_arg: None,
        session_arg: session_arg(&args),
    })
}

/// The arguments after the program (or after the `cli.js` script), when the process is Claude
/// Code at all.
fn claude_args(process: &ProcessInfo) -> Option<Vec<String>> {
    let argv0 = process.cmd.first().map(String::as_str).unwrap_or("");
    // `process.title = "claude daemon"` can leave the whole title in argv[0].
    let mut title_words = argv0.split_whitespace();
    if title_words.next().map(program_name).as_deref() == Some("claude") {
        let mut args: Vec<String> = title_words.map(str::to_owned).collect();
        args.extend(process.cmd.iter().skip(1).cloned());
        return Some(args);
    }
    if is_node(argv0) || process.exe.as_deref().is_some_and(is_node) {
        // The script is the first argument that is not a node option.
        let script_idx = process
            .cmd
            .iter()
            .skip(1)
            .position(|arg| !arg.starts_with('-'))?
            + 1;
        let script = process.cmd[script_idx].replace('\\', "/");
        return script
            .ends_with("@anthropic-ai/claude-code/cli.js")
            .then(|| process.cmd[script_idx + 1..].to_vec());
    }
    let exe_is_claude = process.exe.as_deref().is_some_and(|exe| {
        program_name(exe) == "claude" || exe.replace('\\', "/").contains("/claude/versions/")
    });
    if exe_is_claude || program_name(&process.name) == "claude" {
        return Some(process.cmd.iter().skip(1).cloned().collect());
    }
    None
}

fn is_node(path: &str) -> bool {
    matches!(program_name(path).as_str(), "node" | "nodejs")
}

/// The session named by `--resume <id>`, `-r <id>` or `--session-id <id>` (also `--flag=<id>`).
/// `--resume` without an id opens a picker, and the next argument is then a prompt or another
/// flag, so only a session UUID counts.
fn session_arg(args: &[String]) -> Option<String> {
    const FLAGS: [&str; 3] = ["--resume", "-r", "--session-id"];
    for (arg_idx, arg) in args.iter().enumerate() {
        let value = if FLAGS.contains(&arg.as_str()) {
            args.get(arg_idx + 1).map(String::as_str)
        } else {
            FLAGS.iter().find_map(|flag| {
                arg.strip_prefix(flag)
                    .and_then(|rest| rest.strip_prefix('='))
            })
        };
        if let Some(value) = value.filter(|value| crate::agents::is_uuid(value)) {
            return Some(value.to_owned());
        }
    }
    None
}

/// Reads one live-registry file `sessions/<pid>.json`. The legacy generation (`pid-<n>.json`,
/// snake_case `session_id`, no status) and any file without a `sessionId` give `Ok(None)`.
pub fn parse_registry(bytes: &[u8]) -> Result<Option<ListingEntry>, LineError> {
    let entry = parse_object(bytes)?;
    let Some(session_id) = str_field(&entry, "sessionId") else {
        return Ok(None);
    };
    Ok(Some(ListingEntry {
        session_id: session_id.to_owned(),
        pid: pid_field(&entry),
        proc_start: entry.get("procStart").and_then(|value| match value {
            Value::String(text) => Some(text.clone()),
            Value::Number(number) => Some(number.to_string()),
            _ => None,
        }),
        started_at: time_field(&entry, "startedAt"),
        cwd: str_field(&entry, "cwd").map(str::to_owned),
        status: str_field(&entry, "status").and_then(registry_status),
        waiting_for: str_field(&entry, "waitingFor").map(str::to_owned),
        // Registries from before `kind` was written held only interactive sessions.
        interactive: str_field(&entry, "kind").is_none_or(|kind| kind == "interactive"),
        updated_at: time_field(&entry, "updatedAt"),
    }))
}

/// The registry's `status`; `shell` is the prompt with a user shell running, which the TUI itself
/// reports as busy.
fn registry_status(status: &str) -> Option<ListedStatus> {
    match status {
        "busy" | "shell" => Some(ListedStatus::Busy),
        "idle" => Some(ListedStatus::Idle),
        "waiting" => Some(ListedStatus::Waiting),
        _ => None,
    }
}

/// A background job's `state` (or its `tempo`).
fn job_status(state: &str) -> Option<ListedStatus> {
    match state {
        "done" | "failed" | "stopped" => Some(ListedStatus::Finished),
        "working" | "active" => Some(ListedStatus::Busy),
        "blocked" => Some(ListedStatus::Waiting),
        "idle" => Some(ListedStatus::Idle),
        _ => None,
    }
}

/// Reads the output of `claude agents --json`: a JSON array of live sessions and background jobs.
/// Entries without a session id (a job that has not started one) are left out.
pub fn parse_agents_json(bytes: &[u8]) -> Result<Vec<ListingEntry>, LineError> {
    let text = std::str::from_utf8(bytes).map_err(|_| LineError::NotUtf8)?;
    let value: Value = serde_json::from_str(text).map_err(json_error)?;
    let Value::Array(items) = value else {
        return Err(LineError::Shape("agents listing is not a JSON array"));
    };
    let entries = items
        .iter()
        .filter_map(Value::as_object)
        .filter_map(|item| {
            let session_id = str_field(item, "sessionId")?;
            let interactive = str_field(item, "kind") != Some("background");
            // Background jobs report their progress in `state`; chats in `status`.
            let status = str_field(item, "state")
                .and_then(job_status)
                .or_else(|| str_field(item, "status").and_then(registry_status));
            Some(ListingEntry {
                session_id: session_id.to_owned(),
                pid: pid_field(item),
                proc_start: None,
                started_at: time_field(item, "startedAt"),
                cwd: str_field(item, "cwd").map(str::to_owned),
                status,
                waiting_for: str_field(item, "waitingFor").map(str::to_owned),
                interactive,
                updated_at: time_field(item, "updatedAt"),
            })
        })
        .collect();
    Ok(entries)
}

/// Reads a background job's `jobs/<id>/state.json`. A job that names no session gives `Ok(None)`.
pub fn parse_job_state(bytes: &[u8]) -> Result<Option<ListingEntry>, LineError> {
    let entry = parse_object(bytes)?;
    let Some(session_id) =
        str_field(&entry, "sessionId").or_else(|| str_field(&entry, "session_id"))
    else {
        return Ok(None);
    };
    // `state` is the job's lifecycle; `tempo` only says how busy a live job is, so it counts only
    // when there is no state.
    let status = str_field(&entry, "state")
        .and_then(job_status)
        .or_else(|| str_field(&entry, "tempo").and_then(job_status));
    let waiting_for = match entry.get("needs") {
        Some(Value::String(needs)) if !needs.is_empty() => Some(needs.clone()),
        _ => None,
    };
    Ok(Some(ListingEntry {
        session_id: session_id.to_owned(),
        pid: pid_field(&entry),
        proc_start: None,
        started_at: time_field(&entry, "startedAt"),
        cwd: str_field(&entry, "cwd").map(str::to_owned),
        status,
        waiting_for,
        interactive: false,
        updated_at: time_field(&entry, "updatedAt"),
    }))
}

fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, LineError> {
    let text = std::str::from_utf8(bytes).map_err(|_| LineError::NotUtf8)?;
    match serde_json::from_str(text).map_err(json_error)? {
        Value::Object(entry) => Ok(entry),
        _ => Err(LineError::Shape("file is not a JSON object")),
    }
}

fn json_error(err: serde_json::Error) -> LineError {
    LineError::NotJson(one_line(&err.to_string(), DETAIL_CHARS))
}

fn str_field<'a>(entry: &'a Map<String, Value>, field: &str) -> Option<&'a str> {
    entry.get(field).and_then(Value::as_str)
}

fn pid_field(entry: &Map<String, Value>) -> Option<u32> {
    entry
        .get("pid")
        .and_then(Value::as_u64)
        .and_then(|pid| u32::try_from(pid).ok())
}

/// A time written as epoch milliseconds (the registry's way) or as RFC 3339 text.
fn time_field(entry: &Map<String, Value>, field: &str) -> Option<Timestamp> {
    match entry.get(field)? {
        Value::Number(number) => number
            .as_i64()
            .or_else(|| {
                number
                    .as_f64()
                    .filter(|ms| ms.is_finite() && ms.abs() < 1e15)
                    .map(|ms| ms as i64)
            })
            .map(Timestamp::from_millis),
        Value::String(text) => Timestamp::parse_rfc3339(text),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_tells_main_from_subagent() {
        let main = classify_transcript(&["projects", "-p", "abc.jsonl"]);
        assert_eq!(main, Some(Found::main("abc")));
        assert_eq!(
            classify_transcript(&["projects", "-p", "agent-1.jsonl"]),
            None
        );
        let sub = classify_transcript(&["projects", "-p", "abc", "subagents", "agent-x1.jsonl"]);
        assert_eq!(sub, Some(Found::subagent("abc", "x1")));
        let meta = ["projects", "-p", "abc", "subagents", "agent-x1.meta.json"];
        assert_eq!(classify_transcript(&meta), None);
    }

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

    #[test]
    fn uuids_need_all_five_groups() {
        assert!(crate::agents::is_uuid(
            "2b9e4f10-8c7d-4e6f-a5b4-c3d2e1f0a9b8"
        ));
        assert!(!crate::agents::is_uuid("2b9e4f10-8c7d-4e6f-a5b4"));
        assert!(!crate::agents::is_uuid("fix the login bug"));
        assert!(!crate::agents::is_uuid(
            "2b9e4f10-8c7d-4e6f-a5b4-c3d2e1f0a9bz"
        ));
    }
}
