//! The OpenAI Codex CLI adapter: rollout lines, `session_index.jsonl` lines, rollout file names and
//! Codex processes, turned into the shared observation vocabulary (docs/formats.md §2, §9).
//!
//! A rollout is JSONL, one `{"timestamp","type","payload"}` envelope a line. [`observe`] reads one
//! line on its own; [`RolloutReader`] wraps it with the little state a whole file needs (only the
//! first `session_meta` is canonical, and legacy rollouts state their prompts only as
//! `response_item` user messages). [`recognise`] tells a Codex TUI from `codex exec`, the
//! `app-server` daemon, helper subcommands and the npm shim. This module deliberately does not open
//! files, decompress `.jsonl.zst` rollouts, keep the newest index line per id, or decide any state:
//! those belong to `sources` and `tracker`.
//!
//! This file holds the description and the file names; `rollout` reads rollout and index lines,
//! `processes` recognises Codex processes.

mod processes;
mod rollout;

use super::keys::{DialogKeys, Press};
use super::screens::{Detail, DialogKind, DialogShape, OptionLayout, ScreenGrammar, Summary, Top};
use super::titles::{Grammar, TitleKind};
use super::{Base, Description, Found, Layout, NameIndex, Processes, Root, Sessions, Watch};
use crate::model::AgentKind;

pub use processes::recognise;
pub use rollout::{observe, parse_index_line, RolloutReader};

/// The Codex CLI, as Slate knows it (docs/formats.md §2).
pub static DESCRIPTION: Description = Description {
    id: "codex",
    name: "Codex",
    product: "Codex",
    processes: Processes {
        programs: &["codex"],
        recognise,
        relaunch_parent: None,
    },
    // `$CODEX_HOME`, else `~/.codex` (docs/formats.md §2.1).
    root: Root {
        candidates: &[(Base::Var("CODEX_HOME"), ""), (Base::Home, ".codex")],
        variables: &[],
    },
    // The root itself is watched for `session_index.jsonl`; its other files are filtered out.
    watch: Watch {
        folders: &[("sessions", true), ("", false)],
        files: &[".jsonl", ".zst"],
    },
    sessions: Sessions::Transcripts(Layout {
        folders: &[&["sessions", "*", "*", "*"], &["archived_sessions"]],
        classify: classify_transcript,
        parser: |_| Box::new(RolloutReader::new()),
        names: Some(NameIndex {
            file: "session_index.jsonl",
            parse: parse_index_line,
        }),
        whole_file: None,
        full_id: None,
        project: None,
        beside: None,
    }),
    listing: None,
    // A braille spinner frame prefixes the title while a task runs (~100 ms a frame); the title
    // blinks between `[ ! ]` and `[ . ] Action Required` while the bottom pane waits; the idle
    // title is the plain project name, or the thread's name and the project (docs/formats.md §2.4).
    titles: Some(Grammar {
        animates: true,
        frames: &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"],
        busy: &[],
        action_required: &["[ ! ] Action Required", "[ . ] Action Required"],
        idle: &[],
        otherwise: TitleKind::Idle,
    }),
    // The bottom pane shows one dialog at a time, its options marked `›` when highlighted, its
    // key hints last (docs/formats.md §10).
    screens: Some(ScreenGrammar {
        dialogs: &[
            DialogShape {
                kind: DialogKind::Permission,
                footer: "Press enter to confirm",
                top: Top::Line("Would you like to"),
                holds: &[],
                options: OptionLayout::Numbered,
                summary: &[("Run", Summary::Prefix("$ "))],
                widens: &["don't ask again", "always", "for this session"],
                detail: &[Detail::Hanging("$ ")],
            },
            DialogShape {
                kind: DialogKind::Question,
                footer: "enter to submit",
                top: Top::Line("Question "),
                holds: &[],
                options: OptionLayout::Numbered,
                summary: &[("Question", Summary::After("Question "))],
                widens: &[],
                detail: &[],
            },
            DialogShape {
                kind: DialogKind::Plan,
                footer: "esc back",
                top: Top::Line("Implement this plan?"),
                holds: &[],
                options: OptionLayout::Numbered,
                summary: &[("Plan", Summary::Above("Proposed Plan"))],
                widens: &["clear context"],
                detail: &[],
            },
        ],
        working: &["esc to interrupt"],
        idle: &["for shortcuts", "Ask Codex to do anything"],
        status_lines: 6,
        markers: &["›"],
        margin: 2,
        breaks_after: &[],
        under_dialogs: 0,
    }),
    // Digits pick; Escape rejects. Free text in Codex is a note on an option, reached only with
    // arrows, so Slate offers none (docs/formats.md §10).
    hooks: Some(&HOOKS),
    recorded: &["0.171.0"],
    keys: Some(DialogKeys {
        deny: Press::Escape,
        confirm_reject: None,
        highlighted: Press::Enter,
        free_text: &[],
        text_pause_ms: 0,
        // The recorded exec approval draws the `cmd` of the `function_call` after `$ `.
        drawn_inputs: &["exec_command"],
        lines_under_input: 0,
    }),
};

/// Its own hooks (docs/hooks.md): where they are configured and the events Slate listens to.
static HOOKS: crate::agents::hooks::Hooks = crate::agents::hooks::Hooks {
    file: &[
        (Base::Var("CODEX_HOME"), "hooks.json"),
        (Base::Home, ".codex/hooks.json"),
    ],
    // Seconds; `slate hook` returns within 250 ms anyway.
    format: crate::agents::hooks::HookFormat::Matchers { timeout: 5 },
    events: &[
        (
            "PermissionRequest",
            crate::agents::hooks::Meaning::Permission,
        ),
        ("PreToolUse", crate::agents::hooks::Meaning::ToolStart),
        ("PostToolUse", crate::agents::hooks::Meaning::ToolEnd),
        ("UserPromptSubmit", crate::agents::hooks::Meaning::Prompt),
        ("Stop", crate::agents::hooks::Meaning::TurnEnd),
        ("SessionStart", crate::agents::hooks::Meaning::SessionStart),
    ],
    session: &["/session_id"],
    tool: &["/tool_name"],
    detail: &["/tool_input/command", "/tool_input/cmd", "/tool_input/path"],
    notification: &[],
    questions: &["request_user_input"],
    trust: Some(
        "Codex runs new or changed hooks only once you trust them: at its next start it asks \
         (\"Hooks need review\": choose \"Trust all and continue\"), and /hooks in Codex lists \
         them",
    ),
    guarded: false,
    verified: crate::agents::hooks::Verified::ShippedCode,
};

/// The Codex CLI itself.
pub const KIND: AgentKind = AgentKind::of(&DESCRIPTION);

/// `sessions/YYYY/MM/DD/rollout-…-<threadId>.jsonl[.zst]` and the same names, flat, in
/// `archived_sessions/`.
pub fn classify_transcript(parts: &[&str]) -> Option<Found> {
    let (file, folders) = parts.split_last()?;
    if !matches!(folders, ["sessions", _, _, _] | ["archived_sessions"]) {
        return None;
    }
    Some(Found {
        compressed: file.ends_with(".zst"),
        ..Found::main(session_id_from_file_name(file)?)
    })
}

/// The thread id in a rollout file name, `rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl` or
/// `….jsonl.zst`. A path is accepted too; only its last component is read.
pub fn session_id_from_file_name(name: &str) -> Option<String> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let stem = base
        .strip_suffix(".jsonl")
        .or_else(|| base.strip_suffix(".jsonl.zst"))?;
    let rest = stem.strip_prefix("rollout-")?;
    // The local start time is `YYYY-MM-DDThh-mm-ss`: 19 ASCII characters, then a dash.
    let (time, id) = (rest.get(..19)?, rest.get(19..)?.strip_prefix('-')?);
    let time_shape = time.bytes().enumerate().all(|(idx, byte)| match idx {
        4 | 7 | 13 | 16 => byte == b'-',
        10 => byte == b'T',
        _ => byte.is_ascii_digit(),
    });
    (time_shape && crate::agents::is_uuid(id)).then(|| id.to_owned())
}
