//! Reading an agent's terminal screen with its screen grammar (docs/formats.md §10).
//!
//! A terminal that Slate can read from outside (a tmux pane, a kitty window, a WezTerm pane) shows
//! what the agent draws: its permission, question and plan dialogs, a tool at work, or the empty
//! composer. Each agent's [`ScreenGrammar`] is data in its description
//! (`agents::<agent>::DESCRIPTION.screens`), beside its title grammar; [`read_screen`] reads the
//! visible text of one screen with it into a [`Screen`]: the dialog on screen (its kind, a short
//! summary such as `Run: touch x.txt`, its options in order), or that the agent works, is idle, or
//! shows nothing this grammar knows. A screen that matches nothing known is
//! [`Screen::Unknown`]: it never produces a guess.
//!
//! A dialog counts only at the bottom of the screen, where the agent draws it: its last line (its
//! key hints) must be the last line with text on it. A tool's output that quotes a dialog higher up
//! (`cat` of a file holding one, a model's answer) is followed by more output and the composer,
//! so it never reads as a dialog.
//!
//! The text may carry colour escapes (`tmux capture-pane -e`, `kitty @ get-text --ansi`): they are
//! removed, and where an agent marks the highlighted option only by colour, its background tells.
//! This module is pure: it decides no state (the tracker does, with the reading's kind and
//! summary) and it keeps no text. Answering a dialog is not its business either: `agents::keys`
//! builds on the types here (the options with their numbers, the highlight and whether an option
//! widens permissions).
//!
//! This file holds the types a reading gives and a grammar is written in; `reading` reads one
//! screen with a grammar (the dialog at the bottom, its options, summary and text, or the status
//! lines), and `cells` turns the raw text into lines of characters with their backgrounds and
//! frames.

mod cells;
mod reading;

use serde::{Deserialize, Serialize};

use crate::model::AgentKind;
pub use crate::model::DialogKind;

pub(crate) use cells::plain_lines;
pub(crate) use reading::is_cut_mark;
pub use reading::read_with;

/// What one screen shows, in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScreenKind {
    /// A dialog asks permission to run a tool.
    Permission,
    /// A dialog asks the person a question.
    Question,
    /// A dialog puts a plan up for approval.
    Plan,
    /// The composer waits for a prompt; no dialog is open and nothing runs.
    Idle,
    /// The agent works: a tool runs or the model answers.
    Working,
    /// Nothing this agent's grammar knows.
    Unknown,
}

impl ScreenKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ScreenKind::Permission => "permission",
            ScreenKind::Question => "question",
            ScreenKind::Plan => "plan",
            ScreenKind::Idle => "idle",
            ScreenKind::Working => "working",
            ScreenKind::Unknown => "unknown",
        }
    }
}

impl DialogKind {
    pub fn screen_kind(self) -> ScreenKind {
        match self {
            DialogKind::Permission => ScreenKind::Permission,
            DialogKind::Question => ScreenKind::Question,
            DialogKind::Plan => ScreenKind::Plan,
        }
    }
}

/// One option of a dialog, as the screen labels it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DialogOption {
    /// The label's first line, without its number and without a description beside it.
    pub label: String,
    /// The number in front of the label (`2.`), when the dialog numbers its options.
    pub number: Option<u32>,
    /// True for the option that Enter would choose, when the screen marks it.
    pub highlighted: bool,
    /// True for an option that allows more than this one call ("always", "don't ask again",
    /// "for this session", an automatic mode): a program answering for the person must leave it
    /// to the person.
    pub widens: bool,
}

/// A dialog on screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dialog {
    pub kind: DialogKind,
    /// The dialog as a person would say it, on one line: `Run: touch x.txt`, `Question: Which
    /// database?`, `Plan: Fixture plan`. When the text it names has more lines, or the CLI or
    /// Slate cut it short, it says so: `Run: touch x.txt && \ … (3 lines)`. This, with the kind,
    /// the text and the option labels, is all of a screen that Slate keeps.
    pub summary: String,
    /// The whole command, file or diff the dialog asks about, as the CLI draws it: every line,
    /// a line the CLI wrapped at the pane's edge joined to the one it continues, at most
    /// [`DETAIL_LINES`] lines and [`DETAIL_BYTES`] bytes. A question or a plan holds the line its
    /// summary names. Empty when the screen shows none.
    #[serde(default)]
    pub detail: Vec<String>,
    /// True when the text is not whole: the CLI itself cut it short (a line `… +N lines`, a last
    /// line ending in `…`), or it passed Slate's bounds. A cut dialog can be denied, but only a
    /// surface that shows it as the CLI does (its terminal) may allow it.
    #[serde(default)]
    pub cut: bool,
    /// The options in the order they are drawn.
    pub options: Vec<DialogOption>,
}

/// The most lines of a dialog's text that Slate keeps; past them the dialog is marked cut.
pub const DETAIL_LINES: usize = 64;

/// The most bytes of a dialog's text that Slate keeps; past them the dialog is marked cut.
pub const DETAIL_BYTES: usize = 8 * 1024;

/// The most characters of a summary's headline; a longer first line ends in `…` there (the text
/// keeps it whole).
pub const HEADLINE_CHARS: usize = 120;

impl Dialog {
    /// The option the screen marks as the one Enter chooses, if it marks exactly one.
    pub fn highlighted(&self) -> Option<&DialogOption> {
        let mut marked = self.options.iter().filter(|option| option.highlighted);
        let first = marked.next()?;
        marked.next().is_none().then_some(first)
    }
}

/// What a screen shows, read with its agent's grammar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Screen {
    Dialog(Dialog),
    Working,
    Idle,
    Unknown,
}

impl Screen {
    pub fn kind(&self) -> ScreenKind {
        match self {
            Screen::Dialog(dialog) => dialog.kind.screen_kind(),
            Screen::Working => ScreenKind::Working,
            Screen::Idle => ScreenKind::Idle,
            Screen::Unknown => ScreenKind::Unknown,
        }
    }

    pub fn dialog(&self) -> Option<&Dialog> {
        match self {
            Screen::Dialog(dialog) => Some(dialog),
            _ => None,
        }
    }

    /// What Slate keeps of a screen: its kind and a dialog's summary, never its text.
    pub fn seen(&self) -> ScreenSeen {
        ScreenSeen {
            kind: self.kind(),
            summary: self.dialog().map(|dialog| dialog.summary.clone()),
        }
    }
}

/// What Slate keeps of one reading of a screen: the kind, and a dialog's short summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenSeen {
    pub kind: ScreenKind,
    pub summary: Option<String>,
}

/// One agent's screen grammar, part of its description.
#[derive(Debug, Clone, Copy)]
pub struct ScreenGrammar {
    /// The agent's dialogs, tried in order: the first that the bottom of the screen shows wins.
    pub dialogs: &'static [DialogShape],
    /// Texts that say the agent works (`esc to interrupt`), when one of the last `status_lines`
    /// lines with text on them holds one.
    pub working: &'static [&'static str],
    /// Texts that say the composer waits (`? for shortcuts`), found the same way.
    pub idle: &'static [&'static str],
    /// How many of the screen's last lines with text on them hold the status and the composer.
    pub status_lines: usize,
    /// The marks drawn in front of the highlighted option (`›`, `❯`, `●`). Empty when the agent
    /// marks it with a colour only: then the option drawn on a background of its own is the one.
    pub markers: &'static [&'static str],
    /// The columns the agent leaves empty in front of the right edge (its frame, else the
    /// pane's) when it wraps a dialog's text: a line that ends there is full. Codex wraps a
    /// command two columns short of the pane's edge, Gemini CLI three short of its box's frame,
    /// OpenCode five short of the pane's edge (fixtures/screens/codex/0.171.0/permission-chain.txt,
    /// gemini-cli/0.61.0/permission-long.txt, opencode/1.18.33/permission-chain-80x24.txt).
    pub margin: usize,
    /// Characters after which the agent breaks a line inside a word, as it does at a space:
    /// OpenCode breaks a URL after a `/` (fixtures/screens/opencode/1.18.33/permission-long.txt).
    /// A continued line that ends in one is joined without a space.
    pub breaks_after: &'static [char],
    /// How many lines with text the agent keeps drawing under an open dialog (Cline's status
    /// bar: its model, its folder and its approval mode, fixtures/screens/cline/3.0.65/): the
    /// dialog's footer is the last line with text above them. 0 for a dialog drawn last.
    pub under_dialogs: usize,
}

/// One dialog of an agent, as drawn at the bottom of its screen.
#[derive(Debug, Clone, Copy)]
pub struct DialogShape {
    pub kind: DialogKind,
    /// Text of the dialog's last line (its key hints, or its last option): only blank lines and
    /// frames may follow it on screen.
    pub footer: &'static str,
    /// Where the dialog begins, above the footer.
    pub top: Top,
    /// Texts that must all appear in the dialog (what tells a plan from a question).
    pub holds: &'static [&'static str],
    pub options: OptionLayout,
    /// How the summary is found: alternatives, each with the word in front of what it finds
    /// (`Run`), tried in order; the first that finds a line wins. When none does, the summary is
    /// the dialog's kind (`Permission`).
    pub summary: &'static [(&'static str, Summary)],
    /// Words in an option's label (in lower case) that make it widen permissions.
    pub widens: &'static [&'static str],
    /// Where the whole of what the dialog asks about is drawn (a command of several lines, a
    /// diff), when it may take more than the summary's line: alternatives tried in order, the
    /// first that finds lines wins. Empty keeps the summary's line.
    pub detail: &'static [Detail],
}

/// Where a dialog draws the whole of what it asks about, above its options. Each reads from the
/// dialog's own marks inward, so a line of the command that looks like a mark (a rule, `Do you
/// want to`) cannot end the text early.
#[derive(Debug, Clone, Copy)]
pub enum Detail {
    /// From the first line that starts with this text (which is taken off, `$ `) down to the
    /// options; the lines under it start where the text itself does, not where the text after
    /// it does: it is drawn in front of the command, as part of it (Codex, OpenCode;
    /// fixtures/screens/codex/0.171.0/permission-curl.txt).
    Hanging(&'static str),
    /// The lines after the first line that holds the first text, up to the last line above the
    /// options that holds the second (Claude Code 2.1.197: "Bash command" … "Do you want to").
    Under(&'static str, &'static str),
    /// The lines between the first and the last line drawn with this rule above the options
    /// (Claude Code 2.1.332's `╌`).
    Between(&'static str),
    /// The lines inside the first box drawn in the dialog (`╭` … the last `╰` above the options;
    /// Gemini CLI).
    Boxed,
}

/// Where a dialog begins.
#[derive(Debug, Clone, Copy)]
pub enum Top {
    /// The nearest line above the footer that starts with this text (frames and indentation
    /// aside).
    Line(&'static str),
    /// The first of the lines above the footer that all carry this frame (OpenCode draws its
    /// dialogs as a block behind one bar).
    Block(&'static str),
}

/// How a dialog lays out its options.
#[derive(Debug, Clone, Copy)]
pub enum OptionLayout {
    /// One option a line, `N. label`: the last run numbered from 1 in the dialog (a plan's own
    /// numbered list above them is not options).
    Numbered,
    /// All options on the footer's line, before its key hints (which start with this text; an
    /// empty text for a line of options alone), apart from each other by three or more spaces. A
    /// narrow pane cuts the hints short, never the options before them.
    Row(&'static str),
    /// One option a line with no number, the highlighted one behind this marker (Copilot CLI's
    /// `❯`, Cline CLI's `>`): the lines whose text starts in the marked line's label column,
    /// around the marked line. Only the highlighted one can be picked (`keys`).
    Listed(&'static str),
}

/// Where a dialog's summary is.
#[derive(Debug, Clone, Copy)]
pub enum Summary {
    /// The rest of the first line in the dialog that starts with this text (`$ ` before a
    /// command).
    Prefix(&'static str),
    /// The text between the two on the first line in the dialog that starts with the first
    /// (`Plan at ` … ` is complete`).
    Within(&'static str, &'static str),
    /// The first line with text after the first line in the dialog that holds this text,
    /// skipping rules.
    After(&'static str),
    /// Like `After`, but the line after the first that many lines with text: a dialog that
    /// draws a heading between its marker and what it asks (Qwen Code's question, whose header
    /// stands between the call's line and the question).
    AfterSkipping(&'static str, usize),
    /// The first line with text between the first two dashed rules (`╌`) in the dialog.
    Between(&'static str),
    /// The dialog's first line with text, skipping rules.
    First,
    /// Like `After`, but the marker may be anywhere above the footer: a long plan pushes its title
    /// above the dialog's top.
    Above(&'static str),
    /// The first line inside the dialog's first box (`╭` … `╰`), when a line of the dialog
    /// starts with this text: Gemini CLI heads a long command's box with the call's
    /// description, which names no command.
    Boxed(&'static str),
}

/// The grammar of one agent, if its screens are known.
pub fn grammar(agent: AgentKind) -> Option<&'static ScreenGrammar> {
    agent.description()?.screens.as_ref()
}

/// Reads one screen of `agent` (plain text, or text with colour escapes).
pub fn read_screen(agent: AgentKind, text: &str) -> Screen {
    match grammar(agent) {
        Some(grammar) => read_with(grammar, text),
        None => Screen::Unknown,
    }
}
