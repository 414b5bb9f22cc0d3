//! A screen's text as lines of cells: escape sequences dropped (each character keeps the
//! background it is drawn on, which is how some agents mark the highlighted option), and the
//! frames an agent draws its dialogs in taken off each line's ends, with where they were. Also the
//! right edge a dialog's lines end at, which tells a line the CLI wrapped.

/// Where a dialog's lines end on the right: the pane's width as the screen tells it (its widest
/// line), and the column where a side bar beside the dialog begins, when one shows.
#[derive(Debug, Clone, Copy)]
pub(super) struct Edge {
    pub(super) width: usize,
    pub(super) beside: Option<usize>,
    /// [`ScreenGrammar::margin`](super::ScreenGrammar::margin).
    pub(super) margin: usize,
    /// [`ScreenGrammar::breaks_after`](super::ScreenGrammar::breaks_after).
    pub(super) breaks_after: &'static [char],
}

/// True for a box-drawing or block character, which frames, boxes and rules are drawn with.
pub(super) fn is_frame_char(c: char) -> bool {
    ('\u{2500}'..='\u{259f}').contains(&c) || c == '\u{2594}'
}

/// One screen line with its frame taken off: the text inside, and each character's background.
#[derive(Debug, Default)]
pub(super) struct Line {
    /// The characters inside the frame, with the background each is drawn on.
    chars: Vec<(char, u32)>,
    /// The frame characters taken off the line's start (`│`, `┃`).
    pub(super) frame: String,
    /// How many columns were taken off the line's start (frames and the spaces around them).
    pub(super) lead: usize,
    /// The column of the innermost frame taken off the line's end, when one was: the right
    /// edge of the box the text is in.
    edge: Option<usize>,
    /// The columns the whole line takes (characters, each counted as one column).
    pub(super) columns: usize,
}

impl Line {
    pub(super) fn is_blank(&self) -> bool {
        self.chars
            .iter()
            .all(|(c, _)| c.is_whitespace() || is_frame_char(*c))
    }

    /// The columns of the first and the last character with ink, from inside the frame.
    pub(super) fn span(&self) -> Option<(usize, usize)> {
        let inked = |(c, _): &(char, u32)| !c.is_whitespace();
        let start = self.chars.iter().position(inked)?;
        let end = self.chars.iter().rposition(inked)?;
        Some((start, end))
    }

    /// The columns left between the line's last character with ink and its right edge (the
    /// frame drawn there, else a side bar, else the screen's width, less the agent's margin),
    /// and the columns from its first character with ink to that edge; `None` for a blank line.
    pub(super) fn room(&self, edge: Edge) -> Option<(usize, usize)> {
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
    pub(super) fn before(&self, beside: Option<usize>) -> &[(char, u32)] {
        match beside {
            Some(column) => &self.chars[..column.saturating_sub(self.lead).min(self.chars.len())],
            None => &self.chars,
        }
    }

    /// The text inside the frame and left of column `beside`, trimmed.
    pub(super) fn text_before(&self, beside: Option<usize>) -> String {
        let text: String = self.before(beside).iter().map(|(c, _)| c).collect();
        text.trim().to_string()
    }

    /// The text inside the frame, trimmed.
    pub(super) fn text(&self) -> String {
        let text: String = self.chars.iter().map(|(c, _)| c).collect();
        text.trim().to_string()
    }

    /// True when the character at byte `offset` of [`Line::text`] is drawn on another background
    /// than the line's padding: the highlight of an agent that marks it with a colour only.
    pub(super) fn stands_out(&self, offset: usize) -> bool {
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
pub(super) fn cells(text: &str) -> Vec<Line> {
    let mut pen = Pen::default();
    text.split('\n')
        .map(|raw| unframe(drawn(raw, &mut pen)))
        .collect()
}

/// A screen's lines as drawn, frames included, with colour and other escape sequences dropped.
pub(crate) fn plain_lines(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut pen = Pen::default();
    text.split('\n')
        .map(move |raw| drawn(raw, &mut pen).into_iter().map(|(c, _)| c).collect())
}

/// The background in force, which carries from one line of a screen to the next.
#[derive(Debug, Default)]
struct Pen {
    background: u32,
    reverse: bool,
}

/// The characters one line draws, each with the background it is drawn on: escape sequences and
/// other control characters and invisible ones (`limits::is_invisible`) dropped, colours applied
/// to `pen`.
fn drawn(raw: &str, pen: &mut Pen) -> Vec<(char, u32)> {
    let mut chars: Vec<(char, u32)> = Vec::new();
    let mut iter = raw.chars();
    while let Some(c) = iter.next() {
        match c {
            '\u{1b}' => match iter.next() {
                Some('[') => {
                    let mut params = String::new();
                    for next in iter.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&next) {
                            if next == 'm' {
                                apply_sgr(&params, &mut pen.background, &mut pen.reverse);
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
            c if c.is_control() || crate::limits::is_invisible(c) => {}
            c => chars.push((
                c,
                if pen.reverse {
                    u32::MAX
                } else {
                    pen.background
                },
            )),
        }
    }
    chars
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
