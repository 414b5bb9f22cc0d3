//! The GitHub Copilot CLI adapter: its session events, processes and screens (docs/formats.md
//! §14).
//!
//! Copilot keeps one folder per session, `session-state/<uuid>/`, under its home; the folder's
//! `events.jsonl` is the session's transcript, one event a line. [`EventsReader`] turns its
//! events into observations: the prompt, the model's messages and tool calls, a permission
//! request waiting for its dialog, the tools' results, the end of a turn and an abort. The file
//! shrinks when the person takes a prompt back before the model answers (Esc Esc), which the
//! sources read as a truncation: they start the reader again from the top. [`recognise`] tells
//! the native binary (the session) from the npm loader that starts it. This module does no I/O
//! and decides no state.
//!
//! This file holds the description and the file names; `events` reads the events, `processes`
//! recognises Copilot's processes.

mod events;
mod processes;

use super::hooks::{HookFormat, Hooks, Meaning, Verified};
use super::keys::{DialogKeys, Press};
use super::screens::{Detail, DialogKind, DialogShape, OptionLayout, ScreenGrammar, Summary, Top};
use super::titles::Grammar;
use super::{Base, Description, Found, Layout, Processes, Root, Sessions, Watch};
use crate::model::AgentKind;

pub use events::EventsReader;
pub use processes::recognise;

/// GitHub Copilot CLI, as Slate knows it (docs/formats.md §14).
pub static DESCRIPTION: Description = Description {
    id: "copilot",
    name: "Copilot",
    product: "GitHub Copilot CLI",
    processes: Processes {
        programs: &["copilot"],
        recognise,
        relaunch_parent: None,
    },
    // `$COPILOT_HOME`, else `~/.copilot` (docs/formats.md §14.1).
    root: Root {
        candidates: &[(Base::Var("COPILOT_HOME"), ""), (Base::Home, ".copilot")],
        variables: &[],
    },
    watch: Watch {
        folders: &[("session-state", true)],
        files: &[".jsonl"],
    },
    sessions: Sessions::Transcripts(Layout {
        folders: &[&["session-state", "*"]],
        classify: classify_transcript,
        parser: |_| Box::new(EventsReader::new()),
        names: None,
        whole_file: None,
        full_id: None,
        project: None,
        beside: None,
    }),
    // Its listing files say `working` at a dialog too, and name no process's start
    // (docs/formats.md §14.4): processes and folders vouch instead.
    listing: None,
    // `GitHub Copilot`, or `<session name> - GitHub Copilot`, whatever the state
    // (docs/formats.md §14.4): the title tells nothing.
    titles: Some(Grammar::SILENT),
    // The permission dialog is a box at the bottom, the command in a box of its own inside it,
    // the highlighted option marked `❯`, its key hints last; the composer is gone while it shows
    // (fixtures/screens/copilot/1.0.102/).
    screens: Some(ScreenGrammar {
        dialogs: &[
            DialogShape {
                kind: DialogKind::Permission,
                footer: "enter to select · esc to cancel",
                // The lines behind the box's left edge: a quote of the dialog in the history is
                // drawn without it (fixtures/screens/copilot/1.0.102/idle-after-quoted-dialog.txt).
                top: Top::Block("│"),
                holds: &["Do you want to"],
                options: OptionLayout::Numbered,
                summary: &[("Run", Summary::Boxed("╭"))],
                widens: &["don't ask again", "always", "for this session"],
                detail: &[Detail::Boxed],
            },
            DialogShape {
                // The question (`ask_user`): what it asks, the field's name, then its options one a
                // line with no numbers, the highlighted one marked `❯`; arrows move the mark, Enter
                // picks it (fixtures/screens/copilot/1.0.102/question.txt).
                kind: DialogKind::Question,
                footer: "enter accept · ctrl+d decline · esc cancel",
                top: Top::Line("Copilot needs information."),
                holds: &[],
                options: OptionLayout::Listed("❯"),
                summary: &[("Asks", Summary::After("Copilot needs information."))],
                widens: &[],
                detail: &[],
            },
        ],
        working: &["esc esc interrupt", "esc esc edit prompt"],
        idle: &["? help"],
        status_lines: 2,
        markers: &["❯"],
        margin: 1,
        breaks_after: &[],
        under_dialogs: 0,
    }),
    hooks: Some(&HOOKS),
    recorded: &["1.0.102"],
    // `1` allows once; Escape rejects (and ends the turn). Option 3 takes feedback typed after
    // it, which Slate does not offer (docs/formats.md §14.5).
    keys: Some(DialogKeys {
        deny: Press::Escape,
        confirm_reject: None,
        highlighted: Press::Enter,
        free_text: &[],
        text_pause_ms: 0,
        // The recorded shell dialog draws the call's `command` in its inner box.
        drawn_inputs: &["bash"],
        lines_under_input: 0,
    }),
};

/// Its own hooks (docs/hooks.md): inline in `settings.json` under its home, each a `bash` line.
/// The events carry `sessionId`, the session folder's name.
static HOOKS: Hooks = Hooks {
    file: &[
        (Base::Var("COPILOT_HOME"), "settings.json"),
        (Base::Home, ".copilot/settings.json"),
    ],
    // Seconds; `slate hook` returns within 250 ms anyway.
    format: HookFormat::Bash { timeout_sec: 5 },
    events: &[
        ("permissionRequest", Meaning::Permission),
        // `permission_prompt`, or `elicitation_dialog` for `ask_user`'s question.
        ("notification", Meaning::Notification),
        ("preToolUse", Meaning::ToolStart),
        ("postToolUse", Meaning::ToolEnd),
        ("postToolUseFailure", Meaning::ToolEnd),
        ("userPromptSubmitted", Meaning::Prompt),
        ("agentStop", Meaning::TurnEnd),
        ("sessionStart", Meaning::SessionStart),
        ("sessionEnd", Meaning::SessionEnd),
    ],
    session: &["/sessionId"],
    tool: &["/toolName"],
    detail: &[
        "/toolInput/command",
        "/toolArgs/command",
        "/toolInput/path",
        "/toolArgs/path",
        "/toolArgs/message",
    ],
    notification: &["/notification_type"],
    questions: &["ask_user"],
    trust: None,
    // Whether a failing hook refuses a tool is not documented: the guard makes it never fail.
    guarded: true,
    verified: Verified::ShippedCode,
};

/// GitHub Copilot CLI itself.
pub const KIND: AgentKind = AgentKind::of(&DESCRIPTION);

/// `session-state/<uuid>/events.jsonl` is a session's transcript; the folder names the session.
pub fn classify_transcript(parts: &[&str]) -> Option<Found> {
    match parts {
        ["session-state", id, "events.jsonl"] if crate::agents::is_uuid(id) => {
            Some(Found::main(*id))
        }
        _ => None,
    }
}
