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

use serde::{Deserialize, Serialize};

use crate::model::AgentKind;

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

/// What a dialog asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DialogKind {
    Permission,
    Question,
    Plan,
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
    /// All options on the footer's line, before its key hints (which start with this text), apart
    /// from each other by three or more spaces. A narrow pane cuts the hints short, never the
    /// options before them.
    Row(&'static str),
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

/// Reads one screen with `grammar`.
pub fn read_with(grammar: &ScreenGrammar, text: &str) -> Screen {
    let lines = cells(text);
    let Some(last) = lines.iter().rposition(|line| !line.is_blank()) else {
        return Screen::Unknown;
    };
    // The pane's width, as far as the screen tells it: its widest line.
    let width = lines.iter().map(|line| line.columns).max().unwrap_or(0);
    for shape in grammar.dialogs {
        let Some((footer, beside)) = footer_at(&lines, shape.footer) else {
            continue;
        };
        // Beside a wide dialog, a side bar: the dialog's text ends where it begins.
        let edge = Edge {
            width,
            beside,
            margin: grammar.margin,
            breaks_after: grammar.breaks_after,
        };
        if let Some(dialog) = read_dialog(grammar, shape, &lines, footer, edge) {
            return Screen::Dialog(dialog);
        }
    }
    let status: Vec<String> = lines[..=last]
        .iter()
        .rev()
        .filter(|line| !line.is_blank())
        .take(grammar.status_lines)
        .map(Line::text)
        .collect();
    let shows = |texts: &[&str]| {
        status
            .iter()
            .any(|line| texts.iter().any(|text| line.contains(text)))
    };
    if shows(grammar.working) {
        Screen::Working
    } else if shows(grammar.idle) {
        Screen::Idle
    } else {
        Screen::Unknown
    }
}

/// The line holding a dialog's `footer`, when it is the last line with text on screen, and the
/// column where a side bar beside it begins, when one shows. A wide screen may show a side bar
/// beside the dialog (OpenCode's), so a line below whose text lies wholly to the right of the
/// footer's does not count.
fn footer_at(lines: &[Line], footer: &str) -> Option<(usize, Option<usize>)> {
    let mut below: Vec<&Line> = Vec::new();
    for (index, line) in lines.iter().enumerate().rev() {
        if line.is_blank() {
            continue;
        }
        if line.text().contains(footer) {
            let (_, end) = line.span()?;
            let beside = below
                .iter()
                .all(|line| line.span().is_some_and(|(start, _)| start > end));
            let bar = below
                .iter()
                .filter_map(|line| line.span().map(|(start, _)| line.lead + start))
                .min();
            return beside.then_some((index, bar));
        }
        below.push(line);
    }
    None
}

/// Where a dialog's lines end on the right: the pane's width as the screen tells it (its widest
/// line), and the column where a side bar beside the dialog begins, when one shows.
#[derive(Debug, Clone, Copy)]
struct Edge {
    width: usize,
    beside: Option<usize>,
    /// [`ScreenGrammar::margin`].
    margin: usize,
    /// [`ScreenGrammar::breaks_after`].
    breaks_after: &'static [char],
}

/// The dialog `shape` describes, when the screen ends with it at line `last`.
fn read_dialog(
    grammar: &ScreenGrammar,
    shape: &DialogShape,
    lines: &[Line],
    last: usize,
    edge: Edge,
) -> Option<Dialog> {
    let footer = &lines[last];
    let top = match shape.top {
        Top::Line(start) => (0..=last)
            .rev()
            .find(|&index| lines[index].text().starts_with(start))?,
        Top::Block(frame) => {
            let mut top = last;
            while top > 0 && lines[top - 1].frame.contains(frame) {
                top -= 1;
            }
            top
        }
    };
    let region = &lines[top..=last];
    let texts: Vec<String> = region.iter().map(Line::text).collect();
    if !shape
        .holds
        .iter()
        .all(|held| texts.iter().any(|text| text.contains(held)))
    {
        return None;
    }
    let (options, options_at) = match shape.options {
        OptionLayout::Numbered => numbered_options(grammar, region),
        OptionLayout::Row(hints) => (row_options(footer, hints), region.len() - 1),
    };
    if options.is_empty() {
        return None;
    }
    let options = options
        .into_iter()
        .map(|mut option| {
            let label = option.label.to_lowercase();
            option.widens = shape.widens.iter().any(|word| label.contains(word));
            option
        })
        .collect();
    let above: Vec<String> = lines[..top].iter().map(Line::text).collect();
    let found = shape.summary.iter().find_map(|(word, rule)| {
        let found = match rule {
            Summary::Prefix(prefix) => texts
                .iter()
                .find_map(|text| text.strip_prefix(prefix))
                .map(str::trim)
                .filter(|rest| !rest.is_empty())
                .map(str::to_string),
            Summary::Within(prefix, suffix) => texts.iter().find_map(|text| {
                let rest = text.strip_prefix(prefix)?;
                let end = rest.find(suffix)?;
                Some(rest[..end].trim().to_string())
            }),
            Summary::After(marker) => after(&texts, marker),
            Summary::Between(rule) => between(&texts, rule),
            Summary::First => first_text(&texts),
            Summary::Above(marker) => after(&above, marker).or_else(|| after(&texts, marker)),
            Summary::Boxed(prefix) => texts
                .iter()
                .any(|text| text.starts_with(prefix))
                .then(|| boxed(&texts))
                .flatten(),
        };
        // A Markdown heading's marks are not part of what a person would say.
        let found = found?;
        let found = found.trim_start_matches('#').trim();
        (!found.is_empty()).then(|| (*word, found.to_string()))
    });
    let drawn = shape
        .detail
        .iter()
        .filter_map(|detail| detail_lines(*detail, region, &texts, options_at))
        .map(|(block, prefix, hanging)| drawn_text(&block, prefix, hanging, edge))
        .find(|(text, _)| !text.is_empty());
    let (detail, cut) = match (drawn, &found) {
        (Some(drawn), _) if !drawn.0.is_empty() => drawn,
        (_, Some((_, found))) => bounded(vec![found.clone()]),
        _ => (Vec::new(), false),
    };
    let summary = match found {
        Some((word, found)) => {
            // The headline is the text's first line when that is where the summary's line
            // begins (a line the CLI wrapped is joined there).
            let headline = match detail.first() {
                Some(first) if first.starts_with(&found) => first.clone(),
                _ => found,
            };
            format!("{word}: {}{}", shortened(&headline), more(&detail, cut))
        }
        None => {
            let kind = match shape.kind {
                DialogKind::Permission => "Permission",
                DialogKind::Question => "Question",
                DialogKind::Plan => "Plan",
            };
            let lines = match detail.len() {
                0 => String::new(),
                1 => format!(" ({})", shortened(&detail[0])),
                lines => format!(" ({lines} lines)"),
            };
            format!("{kind}{lines}")
        }
    };
    Some(Dialog {
        kind: shape.kind,
        summary,
        detail,
        cut,
        options,
    })
}

/// A headline of at most [`HEADLINE_CHARS`] characters.
fn shortened(headline: &str) -> String {
    if headline.chars().count() <= HEADLINE_CHARS {
        return headline.to_string();
    }
    let kept: String = headline.chars().take(HEADLINE_CHARS - 1).collect();
    format!("{}…", kept.trim_end())
}

/// What a summary adds when its line is not the whole text: ` … (3 lines)`, ` … (cut short)`.
fn more(detail: &[String], cut: bool) -> String {
    match (detail.len(), cut) {
        (0 | 1, false) => String::new(),
        (0 | 1, true) => " … (cut short)".to_string(),
        (lines, false) => format!(" … ({lines} lines)"),
        (lines, true) => format!(" … ({lines} lines, cut short)"),
    }
}

/// The lines of the region that `detail` names (above the options, which start at
/// `options_at`), the text taken off the first, and whether the lines under it start where that
/// text does.
fn detail_lines<'a>(
    detail: Detail,
    region: &'a [Line],
    texts: &[String],
    options_at: usize,
) -> Option<(Vec<&'a Line>, &'static str, bool)> {
    let above = &texts[..options_at.min(texts.len())];
    let (from, to, prefix) = match detail {
        Detail::Hanging(prefix) => {
            let from = above.iter().position(|text| text.starts_with(prefix))?;
            (from, above.len(), prefix)
        }
        Detail::Under(start, end) => {
            let from = above.iter().position(|text| text.contains(start))? + 1;
            let to = above.iter().rposition(|text| text.contains(end))?;
            (from, to, "")
        }
        Detail::Between(rule) => {
            let is_drawn = |text: &String| text.starts_with(rule) && is_rule(text);
            let open = above.iter().position(is_drawn)?;
            let close = above.iter().rposition(is_drawn)?;
            (open + 1, close, "")
        }
        Detail::Boxed => {
            let open = above
                .iter()
                .position(|text| text.starts_with('╭') && is_rule(text))?;
            let close = above
                .iter()
                .rposition(|text| text.starts_with('╰') && is_rule(text))?;
            (open + 1, close, "")
        }
    };
    let hanging = matches!(detail, Detail::Hanging(_));
    (from <= to).then(|| (region[from..to].iter().collect(), prefix, hanging))
}

/// The text of `block` as the CLI meant it: `prefix` taken off its first line (the lines under
/// it indented from where its text starts, or with `hanging` from where the prefix does), blank lines at
/// either end dropped (blank lines inside kept), a line that the CLI wrapped joined to the one
/// it continues, bounded by [`DETAIL_LINES`] and [`DETAIL_BYTES`]; and whether it is cut short.
/// A side bar beside the dialog is no part of its text.
///
/// A line continues the one above when the first word on it would not have fit in what was left
/// of the line above, up to the right edge: the frame drawn there, else a side bar, else the
/// screen's widest line, which stands for the pane's width. The two are joined with a space (the
/// CLI broke the line at one), unless the line above fills its width and the word broken there
/// is longer than a line: then the CLI cut the word, and its parts are joined as they are; or
/// the line above ends in a character the agent breaks words after (`/`, OpenCode). A
/// command's own new line starts a line of its own unless the line above it ran that close to
/// the edge, where the drawing itself cannot tell them apart.
fn drawn_text(block: &[&Line], prefix: &str, hanging: bool, edge: Edge) -> (Vec<String>, bool) {
    // The text is bounded before it is joined, so a huge screen costs no more than that.
    let cut_here = block.len() > DETAIL_LINES * 4;
    let block = &block[..block.len().min(DETAIL_LINES * 4)];
    let texts: Vec<String> = block
        .iter()
        .enumerate()
        .map(|(index, line)| {
            let text = line.text_before(edge.beside);
            match index {
                0 => text
                    .strip_prefix(prefix)
                    .unwrap_or(&text)
                    .trim()
                    .to_string(),
                _ => text,
            }
        })
        .collect();
    // Where each line's text begins: a line indented deeper than the least indented keeps the
    // difference (a heredoc's body, a loop's), as the CLI draws it.
    let starts: Vec<Option<usize>> = block
        .iter()
        .zip(&texts)
        .map(|(line, text)| {
            let drawn = line.text_before(edge.beside);
            let skipped = match hanging {
                true => 0,
                false => drawn.chars().count() - text.chars().count(),
            };
            let before = line.before(edge.beside);
            let start = before.iter().position(|(c, _)| !c.is_whitespace())?;
            Some(line.lead + start + skipped)
        })
        .collect();
    let base = starts.iter().flatten().min().copied().unwrap_or(0);
    let mut joined: Vec<String> = Vec::new();
    let mut previous: Option<&Line> = None;
    for ((line, text), start) in block.iter().zip(texts).zip(starts) {
        let room = previous.and_then(|above| above.room(edge));
        previous = Some(line);
        if let (Some(last), Some((room, line_width))) = (joined.last_mut(), room) {
            let count = |word: Option<&str>| word.map_or(0, |word| word.chars().count());
            let word = count(text.split(' ').next());
            if !last.is_empty() && !text.is_empty() && room <= word + 1 {
                // Cut inside a word only where the line is full and the word, its two parts
                // together, could not have fit on one line.
                let tail = count(last.rsplit(' ').next());
                let broken = last.ends_with(|c: char| edge.breaks_after.contains(&c));
                if !broken && (room > 1 || tail + word <= line_width) {
                    last.push(' ');
                }
                last.push_str(&text);
                continue;
            }
        }
        let indent = start.map_or(0, |start| start.saturating_sub(base));
        joined.push(match joined.is_empty() {
            true => text,
            false => format!("{}{text}", " ".repeat(indent)),
        });
    }
    let mut cut = cut_here;
    while joined.last().is_some_and(String::is_empty) {
        joined.pop();
    }
    let start = joined.iter().position(|text| !text.is_empty());
    let joined = joined.split_off(start.unwrap_or(joined.len()));
    // The CLI's own marks that it showed less than the whole: `… +3 lines (ctrl+o to expand)`,
    // or a last line that ends in an ellipsis.
    cut |= joined.iter().any(|text| is_cut_mark(text))
        || joined.last().is_some_and(|text| text.ends_with('…'));
    let (joined, over) = bounded(joined);
    (joined, cut || over)
}

/// A line a CLI draws in place of the lines it left out: `… +3 lines`, `… 12 more lines`, `…`.
pub(crate) fn is_cut_mark(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('…') else {
        return false;
    };
    let rest = rest.trim_start().trim_start_matches('+');
    rest.is_empty() || (rest.starts_with(|c: char| c.is_ascii_digit()) && rest.contains("line"))
}

/// `lines` within [`DETAIL_LINES`] and [`DETAIL_BYTES`], and whether anything was left out.
fn bounded(mut lines: Vec<String>) -> (Vec<String>, bool) {
    let mut cut = false;
    if lines.len() > DETAIL_LINES {
        lines.truncate(DETAIL_LINES);
        cut = true;
    }
    let mut left = DETAIL_BYTES;
    let mut kept = 0;
    for line in &mut lines {
        if line.len() > left {
            let mut end = left;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            line.truncate(end);
            cut = true;
            kept += 1;
            break;
        }
        left -= line.len();
        kept += 1;
    }
    if kept < lines.len() {
        lines.truncate(kept);
        cut = true;
    }
    (lines, cut)
}

/// The first line with text after the first line that holds `marker`, skipping rules.
fn after(texts: &[String], marker: &str) -> Option<String> {
    let at = texts.iter().position(|text| text.contains(marker))?;
    first_text(&texts[at + 1..])
}

/// The first line with text inside the first box (`╭` … `╰`).
fn boxed(texts: &[String]) -> Option<String> {
    let open = texts
        .iter()
        .position(|text| text.starts_with('╭') && is_rule(text))?;
    let close = open
        + texts[open..]
            .iter()
            .position(|text| text.starts_with('╰'))?;
    first_text(&texts[open + 1..close])
}

/// The first line with text between the first two lines drawn with `rule`.
fn between(texts: &[String], rule: &str) -> Option<String> {
    let rules: Vec<usize> = texts
        .iter()
        .enumerate()
        .filter(|(_, text)| text.starts_with(rule) && is_rule(text))
        .map(|(index, _)| index)
        .take(2)
        .collect();
    match rules.as_slice() {
        [open, close] => first_text(&texts[open + 1..*close]),
        _ => None,
    }
}

fn first_text(texts: &[String]) -> Option<String> {
    texts
        .iter()
        .find(|text| !text.is_empty() && !is_rule(text))
        .cloned()
}

/// True for a line drawn only with box-drawing and block characters (a rule, a box's edge).
fn is_rule(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c == ' ' || is_frame_char(c))
}

fn is_frame_char(c: char) -> bool {
    ('\u{2500}'..='\u{259f}').contains(&c) || c == '\u{2594}'
}

/// The options of a numbered dialog: the last run of lines numbered 1, 2, 3, … in order, and
/// the index in `region` of its first line (the region's length when there is none).
fn numbered_options(grammar: &ScreenGrammar, region: &[Line]) -> (Vec<DialogOption>, usize) {
    let mut runs: Vec<(usize, Vec<DialogOption>)> = Vec::new();
    for (index, line) in region.iter().enumerate() {
        let Some(option) = numbered(grammar, line) else {
            continue;
        };
        let next = runs.last().map_or(1, |(_, run)| run.len() as u32 + 1);
        match option.number {
            Some(1) => runs.push((index, vec![option])),
            Some(number) if number == next && !runs.is_empty() => {
                runs.last_mut().expect("checked").1.push(option)
            }
            _ => {}
        }
    }
    match runs.pop() {
        Some((at, run)) => (run, at),
        None => (Vec::new(), region.len()),
    }
}

/// One `N. label` line, with the highlight mark in front of it or its background.
fn numbered(grammar: &ScreenGrammar, line: &Line) -> Option<DialogOption> {
    let text = line.text();
    let mut rest = text.as_str();
    let mut marked = false;
    for marker in grammar.markers {
        if let Some(after) = rest.strip_prefix(marker) {
            rest = after.trim_start();
            marked = true;
            break;
        }
    }
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 2 {
        return None;
    }
    let number: u32 = rest[..digits].parse().ok()?;
    let after_number = rest[digits..].strip_prefix('.')?;
    if !after_number.starts_with(' ') {
        return None;
    }
    let label = first_cell(after_number.trim_start(), 2);
    if label.is_empty() {
        return None;
    }
    let highlighted = if grammar.markers.is_empty() {
        line.stands_out(text.find(|c: char| c.is_ascii_digit()).unwrap_or(0))
    } else {
        marked
    };
    Some(DialogOption {
        label,
        number: Some(number),
        highlighted,
        widens: false,
    })
}

/// The options of a dialog that draws them in a row on its footer's line, before its key hints.
fn row_options(footer: &Line, hints: &str) -> Vec<DialogOption> {
    let text = footer.text();
    let Some(end) = text.find(hints) else {
        return Vec::new();
    };
    cells_of(&text[..end], 3)
        .map(|(start, cell)| DialogOption {
            label: cell.to_string(),
            number: None,
            highlighted: footer.stands_out(start),
            widens: false,
        })
        .collect()
}

/// The text up to the first run of `gap` or more spaces.
fn first_cell(text: &str, gap: usize) -> String {
    cells_of(text, gap)
        .next()
        .map(|(_, cell)| cell.to_string())
        .unwrap_or_default()
}

/// The parts of `text` apart from each other by runs of `gap` or more spaces, each with the byte
/// offset it starts at.
fn cells_of(text: &str, gap: usize) -> impl Iterator<Item = (usize, &str)> {
    let mut cells = Vec::new();
    let mut start: Option<usize> = None;
    let mut spaces = 0;
    let mut end = 0;
    for (index, c) in text.char_indices() {
        if c == ' ' {
            spaces += 1;
            if spaces == gap {
                if let Some(from) = start.take() {
                    cells.push((from, &text[from..end]));
                }
            }
            continue;
        }
        if start.is_none() {
            start = Some(index);
        }
        spaces = 0;
        end = index + c.len_utf8();
    }
    if let Some(from) = start {
        cells.push((from, &text[from..end]));
    }
    cells.into_iter()
}

/// One screen line with its frame taken off: the text inside, and each character's background.
#[derive(Debug, Default)]
struct Line {
    /// The characters inside the frame, with the background each is drawn on.
    chars: Vec<(char, u32)>,
    /// The frame characters taken off the line's start (`│`, `┃`).
    frame: String,
    /// How many columns were taken off the line's start (frames and the spaces around them).
    lead: usize,
    /// The column of the innermost frame taken off the line's end, when one was: the right
    /// edge of the box the text is in.
    edge: Option<usize>,
    /// The columns the whole line takes (characters, each counted as one column).
    columns: usize,
}

impl Line {
    fn is_blank(&self) -> bool {
        self.chars
            .iter()
            .all(|(c, _)| c.is_whitespace() || is_frame_char(*c))
    }

    /// The columns of the first and the last character with ink, from inside the frame.
    fn span(&self) -> Option<(usize, usize)> {
        let inked = |(c, _): &(char, u32)| !c.is_whitespace();
        let start = self.chars.iter().position(inked)?;
        let end = self.chars.iter().rposition(inked)?;
        Some((start, end))
    }

    /// The columns left between the line's last character with ink and its right edge (the
    /// frame drawn there, else a side bar, else the screen's width, less the agent's margin),
    /// and the columns from its first character with ink to that edge; `None` for a blank line.
    fn room(&self, edge: Edge) -> Option<(usize, usize)> {
        let inked = |(c, _): &(char, u32)| !c.is_whitespace();
        let before = self.before(edge.beside);
        let start = before.iter().position(inked)?;
        let end = before.iter().rposition(inked)?;
        let right = self
            .edge
            .or(edge.beside)
            .unwrap_or(edge.width)
            .saturating_sub(edge.margin);
        Some((
            right.saturating_sub(self.lead + end + 1),
            right.saturating_sub(self.lead + start),
        ))
    }

    /// The characters inside the frame that lie left of column `beside` (all, when `None`).
    fn before(&self, beside: Option<usize>) -> &[(char, u32)] {
        match beside {
            Some(column) => &self.chars[..column.saturating_sub(self.lead).min(self.chars.len())],
            None => &self.chars,
        }
    }

    /// The text inside the frame and left of column `beside`, trimmed.
    fn text_before(&self, beside: Option<usize>) -> String {
        let text: String = self.before(beside).iter().map(|(c, _)| c).collect();
        text.trim().to_string()
    }

    /// The text inside the frame, trimmed.
    fn text(&self) -> String {
        let text: String = self.chars.iter().map(|(c, _)| c).collect();
        text.trim().to_string()
    }

    /// True when the character at byte `offset` of [`Line::text`] is drawn on another background
    /// than the line's padding: the highlight of an agent that marks it with a colour only.
    fn stands_out(&self, offset: usize) -> bool {
        let leading = self
            .chars
            .iter()
            .take_while(|(c, _)| c.is_whitespace())
            .count();
        let Some((_, padding)) = self.chars.first() else {
            return false;
        };
        let text = self.text();
        let index = leading + text[..offset.min(text.len())].chars().count();
        self.chars
            .get(index)
            .is_some_and(|(_, background)| background != padding)
    }
}

/// The frames an agent draws its dialogs in, taken off a line's ends.
const FRAMES: &[char] = &['│', '┃', '║'];

/// Splits a screen into lines, drops colour and other escape sequences (remembering each
/// character's background), and takes the frames off each line's ends.
fn cells(text: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut background = 0u32;
    let mut reverse = false;
    for raw in text.split('\n') {
        let mut chars: Vec<(char, u32)> = Vec::new();
        let mut iter = raw.chars().peekable();
        while let Some(c) = iter.next() {
            match c {
                '\u{1b}' => match iter.next() {
                    Some('[') => {
                        let mut params = String::new();
                        for next in iter.by_ref() {
                            if ('\u{40}'..='\u{7e}').contains(&next) {
                                if next == 'm' {
                                    apply_sgr(&params, &mut background, &mut reverse);
                                }
                                break;
                            }
                            params.push(next);
                        }
                    }
                    Some(']') => {
                        // An OSC string ends with BEL or ST (ESC \).
                        while let Some(next) = iter.next() {
                            if next == '\u{7}' {
                                break;
                            }
                            if next == '\u{1b}' {
                                iter.next();
                                break;
                            }
                        }
                    }
                    _ => {}
                },
                '\r' => {}
                c if c.is_control() => {}
                c => chars.push((c, if reverse { u32::MAX } else { background })),
            }
        }
        lines.push(unframe(chars));
    }
    lines
}

/// Takes leading and trailing frame characters (and the spaces around them) off a line.
fn unframe(mut chars: Vec<(char, u32)>) -> Line {
    let columns = chars.len();
    let mut frame = String::new();
    let mut lead = 0;
    loop {
        let start = chars
            .iter()
            .position(|(c, _)| *c != ' ')
            .unwrap_or(chars.len());
        match chars.get(start) {
            Some((c, _)) if FRAMES.contains(c) => {
                frame.push(*c);
                chars.drain(..=start);
                lead += start + 1;
            }
            _ => break,
        }
    }
    let mut edge = None;
    loop {
        while chars.last().is_some_and(|(c, _)| *c == ' ') {
            chars.pop();
        }
        match chars.last() {
            Some((c, _)) if FRAMES.contains(c) => {
                chars.pop();
                edge = Some(lead + chars.len());
            }
            _ => break,
        }
    }
    Line {
        chars,
        frame,
        lead,
        edge,
        columns,
    }
}

/// Applies one SGR sequence's parameters to the background in force.
fn apply_sgr(params: &str, background: &mut u32, reverse: &mut bool) {
    let numbers: Vec<u32> = params
        .split([';', ':'])
        .map(|part| part.parse().unwrap_or(0))
        .collect();
    let mut index = 0;
    while index < numbers.len() {
        match numbers[index] {
            0 => {
                *background = 0;
                *reverse = false;
            }
            7 => *reverse = true,
            27 => *reverse = false,
            code @ 40..=47 => *background = code - 39,
            code @ 100..=107 => *background = code - 91,
            49 => *background = 0,
            48 => match numbers.get(index + 1) {
                Some(5) => {
                    *background = 0x100 + numbers.get(index + 2).copied().unwrap_or(0);
                    index += 2;
                }
                Some(2) => {
                    let rgb = |at: usize| numbers.get(index + at).copied().unwrap_or(0) & 0xff;
                    *background = 0x0100_0000 | rgb(2) << 16 | rgb(3) << 8 | rgb(4);
                    index += 4;
                }
                _ => {}
            },
            38 => match numbers.get(index + 1) {
                Some(5) => index += 2,
                Some(2) => index += 4,
                _ => {}
            },
            _ => {}
        }
        index += 1;
    }
    if params.is_empty() {
        *background = 0;
        *reverse = false;
    }
}
