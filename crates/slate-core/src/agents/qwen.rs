//! The Qwen Code adapter: its description, chat records, processes and registry
//! (docs/formats.md §13).
//!
//! Qwen Code keeps one JSONL chat per session, `projects/<dir>/chats/<sessionId>.jsonl` under
//! its home, whose every record names the session, its folder, the CLI's version and the git
//! branch; a running TUI lists itself in `sessions/<pid>.json`. This module turns a chat line
//! into [`Observation`](super::Observation)s, a registry file into a
//! [`ListingEntry`](crate::model::ListingEntry), and recognises the CLI's processes from their
//! argv. It deliberately does no I/O and decides no status: the sources read the files, the
//! tracker decides.
//!
//! This file holds the description and the file names; `chats` reads chat lines, `processes`
//! recognises Qwen Code processes, and `registry` reads the registry.

mod chats;
mod processes;
mod registry;

use super::hooks::{HookFormat, Hooks, Meaning, Verified};
use super::keys::{DialogKeys, Press};
use super::screens::{Detail, DialogKind, DialogShape, OptionLayout, ScreenGrammar, Summary, Top};
use super::titles::{Grammar, TitleKind};
use super::{Base, Description, Found, Layout, ListingRule, Processes, Root, Sessions, Watch};
use crate::model::AgentKind;

pub use chats::{observe, ChatLines};
pub use processes::{is_relaunch_parent, recognise};
pub use registry::parse_registry;

/// Qwen Code, as Slate knows it (docs/formats.md §13).
pub static DESCRIPTION: Description = Description {
    id: "qwen-code",
    name: "Qwen",
    product: "Qwen Code",
    processes: Processes {
        programs: &["qwen"],
        recognise,
        relaunch_parent: Some(is_relaunch_parent),
    },
    // `$QWEN_HOME`, else `~/.qwen` (docs/formats.md §13.1).
    root: Root {
        candidates: &[(Base::Var("QWEN_HOME"), ""), (Base::Home, ".qwen")],
        variables: &[],
    },
    watch: Watch {
        folders: &[("projects", true), ("sessions", false)],
        files: &[".jsonl", ".json"],
    },
    sessions: Sessions::Transcripts(Layout {
        folders: &[&["projects", "*", "chats"]],
        classify: classify_transcript,
        parser: |_| Box::new(ChatLines),
        names: None,
        whole_file: None,
        full_id: None,
        project: None,
        beside: None,
    }),
    // One file per live TUI, removed when it exits; no status in it (docs/formats.md §13.1).
    listing: Some(ListingRule {
        registry: "sessions",
        entry_file: is_registry_file,
        parse_entry: parse_registry,
        jobs: None,
        command: None,
    }),
    // `Qwen - <folder>`, prefixed while the model or a tool works and while a dialog waits
    // (docs/formats.md §13.4). The prefixes carry U+FE0E, the text presentation selector.
    titles: Some(Grammar {
        animates: false,
        frames: &[],
        busy: &["\u{25D0}\u{FE0E} "],
        action_required: &["\u{2733}\u{FE0E} "],
        idle: &["Qwen - "],
        // The title may be the session's name, or `CLI_TITLE`: without a prefix it is idle.
        otherwise: TitleKind::Idle,
    }),
    // A dialog is drawn under the call's line (`? Shell …`, `? AskUserQuestion …`), and the
    // status line under it says "Waiting for user confirmation..." while it is open; the
    // highlighted option carries `›` (permission) or `❯` (question) (docs/formats.md §10).
    screens: Some(ScreenGrammar {
        dialogs: &[
            DialogShape {
                kind: DialogKind::Question,
                footer: "Waiting for user confirmation",
                top: Top::Line("? "),
                holds: &["Enter: Select"],
                options: OptionLayout::Numbered,
                summary: &[("Question", Summary::AfterSkipping("? AskUserQuestion", 1))],
                widens: &[],
                detail: &[],
            },
            DialogShape {
                kind: DialogKind::Permission,
                footer: "Waiting for user confirmation",
                top: Top::Line("? "),
                holds: &[],
                options: OptionLayout::Numbered,
                summary: &[("Run", Summary::After("? Shell"))],
                widens: &["always"],
                detail: &[Detail::Under("? Shell", "Allow execution of")],
            },
        ],
        working: &["esc to cancel"],
        idle: &["Type your message"],
        status_lines: 8,
        markers: &["›", "❯"],
        margin: 0,
        breaks_after: &[],
        under_dialogs: 0,
    }),
    hooks: Some(&HOOKS),
    recorded: &["0.24.4"],
    // Digits pick; Escape denies a permission and dismisses a question (docs/formats.md §10).
    keys: Some(DialogKeys {
        deny: Press::Escape,
        confirm_reject: None,
        highlighted: Press::Enter,
        free_text: &["type something"],
        text_pause_ms: 700,
        // The shell dialog draws the command the `functionCall` records, written before the
        // dialog opens.
        drawn_inputs: &["run_shell_command"],
        lines_under_input: 0,
    }),
};

/// Its own hooks (docs/hooks.md): Claude Code's shape, in `settings.json` under its home.
static HOOKS: Hooks = Hooks {
    file: &[
        (Base::Var("QWEN_HOME"), "settings.json"),
        (Base::Home, ".qwen/settings.json"),
    ],
    // Seconds; `slate hook` returns within 250 ms anyway.
    format: HookFormat::Matchers { timeout: 5 },
    events: &[
        ("PermissionRequest", Meaning::Permission),
        ("Notification", Meaning::Notification),
        ("PreToolUse", Meaning::ToolStart),
        ("PostToolUse", Meaning::ToolEnd),
        ("PostToolUseFailure", Meaning::ToolEnd),
        ("UserPromptSubmit", Meaning::Prompt),
        ("Stop", Meaning::TurnEnd),
        ("SessionStart", Meaning::SessionStart),
        ("SessionEnd", Meaning::SessionEnd),
    ],
    session: &["/session_id"],
    tool: &["/tool_name"],
    detail: &[
        "/tool_input/command",
        "/tool_input/file_path",
        "/tool_input/questions/0/question",
    ],
    notification: &["/notification_type"],
    questions: &["ask_user_question"],
    trust: None,
    // A hook command that fails must not refuse a tool.
    guarded: true,
    verified: Verified::ShippedCode,
};

/// Qwen Code itself.
pub const KIND: AgentKind = AgentKind::of(&DESCRIPTION);

/// `projects/<dir>/chats/<sessionId>.jsonl` is a session's chat; `<dir>` is the folder with
/// every character but a letter or a digit turned into `-`, so the folder comes from the lines'
/// `cwd`, never from the name. `<sessionId>.runtime.json` beside it is not a chat.
pub fn classify_transcript(parts: &[&str]) -> Option<Found> {
    match parts {
        ["projects", _, "chats", file] => {
            let stem = file.strip_suffix(".jsonl")?;
            (!stem.is_empty() && !stem.contains('.')).then(|| Found::main(stem))
        }
        _ => None,
    }
}

/// `sessions/<pid>.json` is a live TUI's entry.
fn is_registry_file(name: &str) -> bool {
    name.strip_suffix(".json")
        .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|byte| byte.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_chats_are_transcripts() {
        let id = "727eac64-cb4c-4873-bbc1-32ee2eab3482";
        let chat = format!("{id}.jsonl");
        assert_eq!(
            classify_transcript(&["projects", "-w-acme", "chats", &chat]),
            Some(Found::main(id))
        );
        let runtime = format!("{id}.runtime.json");
        assert_eq!(
            classify_transcript(&["projects", "-w-acme", "chats", &runtime]),
            None
        );
        assert_eq!(
            classify_transcript(&["projects", "-w-acme", "chats", ".jsonl"]),
            None
        );
        assert_eq!(classify_transcript(&["projects", "-w-acme", &chat]), None);
        assert_eq!(classify_transcript(&["tmp", "x", "chats", &chat]), None);
    }

    #[test]
    fn registry_files_are_named_by_pid() {
        assert!(is_registry_file("27617.json"));
        assert!(!is_registry_file(".json"));
        assert!(!is_registry_file("27617.json.tmp"));
        assert!(!is_registry_file("pid-1.json"));
    }
}
