//! Reading one screen with an agent's grammar: the dialog drawn at the bottom (where it begins,
//! its options in order with their numbers and highlight, its one-line summary and its whole
//! text, with the lines the CLI wrapped joined again and bounded), else what the status lines say
//! (the agent works, or its composer waits), else `Unknown`.

use super::cells::{cells, is_frame_char, Edge, Line};
use super::{
    Detail, Dialog, DialogKind, DialogOption, DialogShape, OptionLayout, Screen, ScreenGrammar,
    Summary, Top, DETAIL_BYTES, DETAIL_LINES, HEADLINE_CHARS,
};

/// Reads one screen with `grammar`.
pub fn read_with(grammar: &ScreenGrammar, text: &str) -> Screen {
    let lines = cells(text);
    let Some(last) = lines.iter().rposition(|line| !line.is_blank()) else {
        return Screen::Unknown;
    };
    // The pane's width, as far as the screen tells it: its widest line.
    let width = lines.iter().map(|line| line.columns).max().unwrap_or(0);
    for shape in grammar.dialogs {
        let Some((footer, beside)) = footer_at(&lines, shape.footer, grammar.under_dialogs) else {
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

/// The line holding a dialog's `footer`, when it is the last line with text on screen but for
/// the `under` lines the agent draws under its dialogs, and the column where a side bar beside
/// it begins, when one shows. A wide screen may show a side bar beside the dialog (OpenCode's),
/// so a line below whose text lies wholly to the right of the footer's does not count.
fn footer_at(lines: &[Line], footer: &str, under: usize) -> Option<(usize, Option<usize>)> {
    let mut below: Vec<&Line> = Vec::new();
    let mut skipped = 0;
    for (index, line) in lines.iter().enumerate().rev() {
        if line.is_blank() {
            continue;
        }
        if skipped < under {
            skipped += 1;
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
        OptionLayout::Listed(marker) => listed_options(marker, region),
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
            Summary::AfterSkipping(marker, skip) => after_skipping(&texts, marker, *skip),
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

/// The line with text after the first `skip` lines with text after the first line holding
/// `marker`, skipping rules.
fn after_skipping(texts: &[String], marker: &str, skip: usize) -> Option<String> {
    let at = texts.iter().position(|text| text.contains(marker))?;
    texts[at + 1..]
        .iter()
        .filter(|text| !text.is_empty() && !is_rule(text))
        .nth(skip)
        .cloned()
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

/// The options of a dialog that lists them one a line without numbers: the last line that starts
/// with `marker` is the highlighted option, and the lines next to it whose text starts in its
/// label's column are the others (a heading above them starts further left).
fn listed_options(marker: &str, region: &[Line]) -> (Vec<DialogOption>, usize) {
    let label_of = |text: &str| {
        text.strip_prefix(marker)
            .map(|rest| rest.trim_start().to_string())
    };
    let Some(marked) = region
        .iter()
        .rposition(|line| label_of(&line.text()).is_some_and(|label| !label.is_empty()))
    else {
        return (Vec::new(), region.len());
    };
    let text = region[marked].text();
    let label = label_of(&text).unwrap_or_default();
    let Some((start, _)) = region[marked].span() else {
        return (Vec::new(), region.len());
    };
    let column = region[marked].lead + start + text.chars().count() - label.chars().count();
    let at_column = |line: &Line| {
        line.span()
            .is_some_and(|(start, _)| line.lead + start == column)
    };
    let first = (0..marked)
        .rev()
        .take_while(|&index| at_column(&region[index]))
        .last()
        .unwrap_or(marked);
    let last = (marked + 1..region.len())
        .take_while(|&index| at_column(&region[index]))
        .last()
        .unwrap_or(marked);
    let options = (first..=last)
        .map(|index| DialogOption {
            label: if index == marked {
                first_cell(&label, 2)
            } else {
                first_cell(&region[index].text(), 2)
            },
            number: None,
            highlighted: index == marked,
            widens: false,
        })
        .collect();
    (options, first)
}

/// The options of a dialog that draws them in a row on its footer's line, before its key hints.
fn row_options(footer: &Line, hints: &str) -> Vec<DialogOption> {
    let text = footer.text();
    let end = if hints.is_empty() {
        text.len()
    } else {
        let Some(end) = text.find(hints) else {
            return Vec::new();
        };
        end
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_skipping_passes_over_lines_with_text_only() {
        let texts: Vec<String> = ["? Ask", "", "Database", "────", "", "Which one?", "1. A"]
            .iter()
            .map(|text| text.to_string())
            .collect();
        assert_eq!(after(&texts, "? "), Some("Database".to_string()));
        assert_eq!(
            after_skipping(&texts, "? ", 1),
            Some("Which one?".to_string())
        );
        assert_eq!(after_skipping(&texts, "? ", 0), after(&texts, "? "));
        assert_eq!(after_skipping(&texts, "? ", 9), None);
        assert_eq!(after_skipping(&texts, "nowhere", 1), None);
    }
}
