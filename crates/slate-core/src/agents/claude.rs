//! The Claude Code adapter: its description, transcript lines, processes, and its own listings.
//!
//! It owns the meaning of Claude Code's on-disk formats (docs/formats.md §1): one JSONL line of
//! `projects/<dir>/<session>.jsonl` (or of a sub-agent's `agent-<id>.jsonl`) becomes
//! [`Observation`](super::Observation)s, a process is recognised from its executable and argv,
//! and the live registry `sessions/<pid>.json`, the output of `claude agents --json` and a
//! background job's `jobs/<id>/state.json` become
//! [`ListingEntry`](crate::model::ListingEntry)s. It deliberately does not decide any state,
//! order records, pair tool calls with results, find files or check that a pid is alive: the
//! tracker and the sources do that. Everything here is a pure function of its bytes.
//!
//! This file holds the description, the transcript layout and the JSON helpers the readers
//! share; `transcript` reads transcript lines, `processes` recognises Claude Code processes, and
//! `listing` reads the registry, the agents listing and a background job's state.

mod listing;
mod processes;
mod transcript;

use serde_json::{Map, Value};

use super::keys::{DialogKeys, Press};
use super::screens::{Detail, DialogKind, DialogShape, OptionLayout, ScreenGrammar, Summary, Top};
use super::titles::{Grammar, TitleKind};
use super::{
    one_line, Base, Description, Found, Layout, LineError, ListingCommand, ListingRule, Processes,
    Root, Sessions, Watch,
};
use crate::model::AgentKind;

pub use listing::{parse_agents_json, parse_job_state, parse_registry};
pub use processes::recognise;
pub use transcript::{observe, observe_subagent, TranscriptLines};

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
        beside: None,
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
        under_dialogs: 0,
    }),
    // An option is its digit alone; Escape rejects a permission and closes a question or a plan.
    // A free answer is the digit of "Type something." (a plan's "Tell Claude what to change"), the
    // text and Enter, paced: 2.1.197 lost the text of one burst in two (docs/formats.md §10).
    hooks: Some(&HOOKS),
    recorded: &["2.1.197", "2.1.332"],
    keys: Some(DialogKeys {
        deny: Press::Escape,
        confirm_reject: None,
        highlighted: Press::Enter,
        free_text: &["type something", "tell claude what to change"],
        text_pause_ms: 700,
        // The recorded Bash dialogs draw the command as the `tool_use` records it; 2.1.197 draws
        // the call's description on the line under it.
        drawn_inputs: &["Bash"],
        lines_under_input: 1,
    }),
};

/// Its own hooks (docs/hooks.md): where they are configured and the events Slate listens to.
static HOOKS: crate::agents::hooks::Hooks = crate::agents::hooks::Hooks {
    file: &[
        (Base::Var("CLAUDE_CONFIG_DIR"), "settings.json"),
        (Base::Home, ".claude/settings.json"),
    ],
    // Seconds; `slate hook` returns within 250 ms anyway.
    format: crate::agents::hooks::HookFormat::Matchers { timeout: 5 },
    events: &[
        (
            "PermissionRequest",
            crate::agents::hooks::Meaning::Permission,
        ),
        ("Notification", crate::agents::hooks::Meaning::Notification),
        ("PreToolUse", crate::agents::hooks::Meaning::ToolStart),
        ("PostToolUse", crate::agents::hooks::Meaning::ToolEnd),
        ("UserPromptSubmit", crate::agents::hooks::Meaning::Prompt),
        ("Stop", crate::agents::hooks::Meaning::TurnEnd),
        ("SessionStart", crate::agents::hooks::Meaning::SessionStart),
        ("SessionEnd", crate::agents::hooks::Meaning::SessionEnd),
    ],
    session: &["/session_id"],
    tool: &["/tool_name"],
    detail: &[
        "/tool_input/command",
        "/tool_input/file_path",
        "/tool_input/url",
        "/tool_input/pattern",
    ],
    notification: &["/notification_type"],
    questions: &["AskUserQuestion", "ExitPlanMode"],
    trust: None,
    guarded: false,
    verified: crate::agents::hooks::Verified::ShippedCode,
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

/// How many characters of a tool call's detail an observation keeps.
const DETAIL_CHARS: usize = 120;

/// A JSON error as a line error, its message on one bounded line.
fn json_error(err: serde_json::Error) -> LineError {
    LineError::NotJson(one_line(&err.to_string(), DETAIL_CHARS))
}

/// A string field of a JSON object.
fn str_field<'a>(entry: &'a Map<String, Value>, field: &str) -> Option<&'a str> {
    entry.get(field).and_then(Value::as_str)
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
