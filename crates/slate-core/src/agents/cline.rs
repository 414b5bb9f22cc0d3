//! The Cline CLI adapter: its session messages and processes (docs/formats.md §15).
//!
//! Cline keeps one folder per session, `sessions/<id>/`, under its data folder: the session's
//! row (`<id>.json`: its status, folder and model) and its conversation (`<id>.messages.json`),
//! each a JSON document rewritten whole when it changes. The conversation is the transcript,
//! read whole with the row beside it on every change of either ([`read_session`]): prompts, the
//! model's text and calls, the tools' results, an interrupted command, and what the row's status
//! adds (the model at work before the conversation holds the prompt, a turn's end, an interrupt). [`recognise`] tells the TUI (the session) from the hub
//! daemon that runs its sessions and outlives it, and from the management commands. This module
//! does no I/O and decides no state.
//!
//! This file holds the description and the file names; `messages` reads the conversation, `row`
//! the row beside it, `processes` recognises Cline's processes.

mod messages;
mod processes;
mod row;

use super::hooks::{HookFormat, Hooks, Meaning, Verified};
use super::keys::{DialogKeys, Press};
use super::screens::{Detail, DialogKind, DialogShape, OptionLayout, ScreenGrammar, Summary, Top};
use super::titles::Grammar;
use super::{Base, Beside, Description, Found, Layout, Processes, Root, Sessions, Watch};
use crate::model::AgentKind;

pub use messages::read_messages;
pub use processes::recognise;
pub use row::read_session;

/// Cline CLI, as Slate knows it (docs/formats.md §15).
pub static DESCRIPTION: Description = Description {
    id: "cline",
    name: "Cline",
    product: "Cline CLI",
    processes: Processes {
        programs: &["cline"],
        recognise,
        relaunch_parent: None,
    },
    // `$CLINE_DATA_DIR`, else `$CLINE_DIR/data`, else `~/.cline/data` (docs/formats.md §15.1).
    root: Root {
        candidates: &[
            (Base::Var("CLINE_DATA_DIR"), ""),
            (Base::Var("CLINE_DIR"), "data"),
            (Base::Home, ".cline/data"),
        ],
        variables: &[],
    },
    watch: Watch {
        folders: &[("sessions", true)],
        files: &[".json"],
    },
    sessions: Sessions::Transcripts(Layout {
        folders: &[&["sessions", "*"]],
        classify: classify_transcript,
        parser: |_| Box::new(WholeOnly),
        names: None,
        whole_file: Some(read_messages),
        full_id: None,
        project: None,
        // The row beside it says the folder and the status from the prompt on.
        beside: Some(Beside {
            name: row_name,
            of: messages_name,
            read: read_session,
        }),
    }),
    // `cline history --json` lists every session it keeps, live or not, with the hub's pid in
    // hub mode: no listing of live sessions (docs/formats.md §15.4).
    listing: None,
    // `Cline`, then `> <session title>`, whatever the state (docs/formats.md §15.4).
    titles: Some(Grammar::SILENT),
    // The permission dialog is drawn above the composer's status bar (three lines): "Cline needs
    // permission", the tool, `$ <command>`, and its two buttons in a row, the highlighted one on
    // a brighter background (fixtures/screens/cline/3.0.65/). Its question dialog marks the
    // highlighted option with `>` and numbers none.
    screens: Some(ScreenGrammar {
        dialogs: &[
            DialogShape {
                kind: DialogKind::Permission,
                footer: "[n] Deny",
                top: Top::Line("Cline needs permission"),
                holds: &["Approve tool call?"],
                options: OptionLayout::Row(""),
                summary: &[("Run", Summary::Prefix("$ "))],
                widens: &[],
                detail: &[Detail::Hanging("$ ")],
            },
            DialogShape {
                // The question (`ask_question`): what it asks, then its options one a line with no
                // numbers, the highlighted one behind `>`, the free answer's row last
                // (fixtures/screens/cline/3.0.65/question.txt). Slate picks only the highlighted one.
                kind: DialogKind::Question,
                footer: "Type a response...",
                top: Top::Line("Cline is asking a question"),
                holds: &[],
                options: OptionLayout::Listed(">"),
                summary: &[("Asks", Summary::After("Cline is asking a question"))],
                widens: &[],
                detail: &[],
            },
        ],
        // The spinner in front of "Thinking... (esc to cancel)" and of a running call's line.
        working: &[
            "esc to cancel",
            "\u{280B} ",
            "\u{2819} ",
            "\u{2839} ",
            "\u{2838} ",
            "\u{283C} ",
            "\u{2834} ",
            "\u{2826} ",
            "\u{2827} ",
            "\u{2807} ",
            "\u{280F} ",
        ],
        idle: &["Ask anything", "What can I do for you?"],
        status_lines: 7,
        // The permission dialog's highlighted button is only a brighter background (the question's
        // `>` is its layout's own).
        markers: &[],
        margin: 0,
        breaks_after: &[],
        under_dialogs: 3,
    }),
    // Enter takes the highlighted button (Approve, unless arrows moved it); Escape denies, and
    // the model is told (docs/formats.md §15.5).
    keys: Some(DialogKeys {
        deny: Press::Escape,
        highlighted: Press::Enter,
        free_text: &[],
        text_pause_ms: 0,
        drawn_inputs: &["run_commands"],
        lines_under_input: 0,
        confirm_reject: None,
    }),
    hooks: Some(&HOOKS),
    recorded: &["3.0.65"],
};

/// Its own hooks (docs/hooks.md): a file an event in its hooks folder, each run with the event
/// as JSON on standard input, whatever else is there for the same event. `PreToolUse` fires
/// before the permission dialog and for every tool, so it says Working, or a question for
/// `ask_question`; no event says that a permission dialog is open.
static HOOKS: Hooks = Hooks {
    file: &[
        (Base::Var("CLINE_DIR"), "hooks"),
        (Base::Home, ".cline/hooks"),
    ],
    format: HookFormat::Files,
    events: &[
        ("PreToolUse", Meaning::ToolStart),
        ("PostToolUse", Meaning::ToolEnd),
        // At each prompt: the first of a session, then each one after.
        ("TaskStart", Meaning::Prompt),
        ("TaskResume", Meaning::Prompt),
        ("TaskComplete", Meaning::TurnEnd),
        // Fired at an interrupt (Escape) too, with the session still open.
        ("SessionShutdown", Meaning::SessionEnd),
    ],
    session: &["/sessionContext/rootSessionId"],
    tool: &["/tool_call/name", "/tool_result/name"],
    detail: &[
        "/tool_call/input/commands/0",
        "/tool_call/input/question",
        "/tool_call/input/path",
        "/tool_result/input/commands/0",
    ],
    notification: &[],
    questions: &["ask_question"],
    trust: None,
    // Cline reads a hook's JSON output, never its exit code; the guard keeps it quiet anyway.
    guarded: true,
    verified: Verified::ShippedCode,
};

/// Cline CLI itself.
pub const KIND: AgentKind = AgentKind::of(&DESCRIPTION);

/// `sessions/<id>/<id>.messages.json` is a session's conversation, read whole; the session's row
/// `<id>.json` beside it is not a transcript.
pub fn classify_transcript(parts: &[&str]) -> Option<Found> {
    match parts {
        ["sessions", id, file] => {
            let stem = file.strip_suffix(".messages.json")?;
            (stem == *id && !id.is_empty() && !id.contains('.')).then(|| Found {
                whole_file: true,
                ..Found::main(*id)
            })
        }
        _ => None,
    }
}

/// `<id>.json`, the row beside the conversation `<id>.messages.json`.
fn row_name(messages: &str) -> Option<String> {
    let id = messages.strip_suffix(".messages.json")?;
    (!id.is_empty()).then(|| format!("{id}.json"))
}

/// `<id>.messages.json`, the conversation beside the row `<id>.json`.
fn messages_name(row: &str) -> Option<String> {
    let id = row.strip_suffix(".json")?;
    (!id.is_empty() && !id.contains('.')).then(|| format!("{id}.messages.json"))
}

/// The line parser of a layout whose every transcript is read whole: it is never fed.
#[derive(Debug)]
struct WholeOnly;

impl super::LineParser for WholeOnly {
    fn feed(&mut self, _line: &[u8]) -> Result<Vec<super::Observation>, super::LineError> {
        Err(super::LineError::Shape(
            "a Cline conversation is read whole",
        ))
    }

    fn restart(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_conversations_are_transcripts() {
        let id = "1796174550271_8m0a0";
        let messages = format!("{id}.messages.json");
        let found = classify_transcript(&["sessions", id, &messages]).expect("a conversation");
        assert_eq!(found.session_id, id);
        assert!(found.whole_file);
        let row = format!("{id}.json");
        assert_eq!(classify_transcript(&["sessions", id, &row]), None);
        assert_eq!(classify_transcript(&["sessions", "other", &messages]), None);
        assert_eq!(classify_transcript(&["sessions", &messages]), None);
        assert_eq!(classify_transcript(&["db", id, &messages]), None);
    }
}
