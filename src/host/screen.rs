//! The screen a hosted program draws, kept by `slate run` so that its dialogs can be read without
//! a terminal multiplexer: a model of the pseudo-terminal's visible screen (the `vt100` crate) fed
//! a copy of the program's output.
//!
//! [`ScreenModel`] takes the output bytes as they come (a chunk may split a sequence anywhere),
//! follows the terminal's size, remembers the last title the program set (OSC 0 or 2), and gives
//! back the visible screen as text: plain, or with each character's background as colour escapes
//! (`48;5;N`, `48;2;R;G;B`, `49`, and `7`/`27` for reverse video) for agents that mark their
//! highlighted option only by a colour, as `tmux capture-pane -e` would. It owns no I/O and no
//! thread: the host feeds it off the relay's path (`host`), and the control socket (`control`)
//! reads it. Reading what the screen means is `agents::screens`'.

use std::num::NonZeroU16;

/// The callbacks the model keeps: the last window title the program set.
#[derive(Debug, Default)]
struct Titles {
    last: Option<String>,
}

/// The longest title kept; a longer "title" is a runaway sequence and is cut.
const MAX_TITLE: usize = 4096;

impl vt100::Callbacks for Titles {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        let title = &title[..title.len().min(MAX_TITLE)];
        self.last = Some(String::from_utf8_lossy(title).into_owned());
    }
}

/// A model of a terminal's visible screen, fed the output drawn on it.
pub struct ScreenModel {
    parser: vt100::Parser<Titles>,
}

impl std::fmt::Debug for ScreenModel {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (rows, cols) = self.size();
        write!(formatter, "ScreenModel({cols}x{rows})")
    }
}

fn at_least_one(value: u16) -> NonZeroU16 {
    NonZeroU16::new(value).unwrap_or(NonZeroU16::MIN)
}

impl ScreenModel {
    /// An empty screen of `rows` by `cols` (each at least 1). No scrollback is kept: only what is
    /// on screen now counts.
    pub fn new(rows: u16, cols: u16) -> ScreenModel {
        ScreenModel {
            parser: vt100::Parser::new_with_callbacks(
                at_least_one(rows),
                at_least_one(cols),
                0,
                Titles::default(),
            ),
        }
    }

    /// Draws the next chunk of output.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
    }

    /// Follows a resize of the terminal.
    pub fn resize(&mut self, rows: u16, cols: u16) {
        if self.size() != (rows.max(1), cols.max(1)) {
            self.parser.set_size(at_least_one(rows), at_least_one(cols));
        }
    }

    /// The screen's size, as (rows, columns).
    pub fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.parser.screen().size();
        (rows.get(), cols.get())
    }

    /// The last title the program set, if it set one.
    pub fn title(&self) -> Option<&str> {
        self.parser.callbacks().last.as_deref()
    }

    /// The visible screen, one line a row (each ending in a newline), with the trailing spaces of
    /// each row left off. With `colours`, each change of background (or of reverse video) is an
    /// SGR escape in front of the character it starts at, and every row starts from the default.
    pub fn text(&self, colours: bool) -> String {
        let screen = self.parser.screen();
        let (rows, cols) = self.size();
        let mut text = String::new();
        for row in 0..rows {
            let mut line = String::new();
            // The line's text up to its last character that is not a space on the default
            // background: what lies past it is padding.
            let mut kept = 0;
            let mut kept_drawn = (vt100::Color::Default, false);
            let mut drawn = (vt100::Color::Default, false);
            for col in 0..cols {
                let Some(cell) = screen.cell(row, col) else {
                    break;
                };
                if cell.is_wide_continuation() {
                    continue;
                }
                if colours {
                    let looks = (cell.bgcolor(), cell.inverse());
                    if looks != drawn {
                        push_background(&mut line, drawn, looks);
                        drawn = looks;
                    }
                }
                let contents = cell.contents();
                if contents.is_empty() {
                    line.push(' ');
                } else {
                    line.push_str(contents);
                }
                let blank = contents.trim().is_empty();
                if !blank || (colours && drawn != (vt100::Color::Default, false)) {
                    kept = line.len();
                    kept_drawn = drawn;
                }
            }
            line.truncate(kept);
            // The grammar carries a background from one line to the next, as a terminal would:
            // a row that ends coloured says that it ends.
            if kept_drawn != (vt100::Color::Default, false) {
                line.push_str("\x1b[0m");
            }
            text.push_str(&line);
            text.push('\n');
        }
        text
    }
}

/// The SGR escape that changes the drawing from `from` to `to` (background, reverse).
fn push_background(line: &mut String, from: (vt100::Color, bool), to: (vt100::Color, bool)) {
    let mut params: Vec<String> = Vec::new();
    if from.1 != to.1 {
        params.push(if to.1 { "7" } else { "27" }.to_string());
    }
    if from.0 != to.0 {
        params.push(match to.0 {
            vt100::Color::Default => "49".to_string(),
            vt100::Color::Idx(index) => format!("48;5;{index}"),
            vt100::Color::Rgb(red, green, blue) => format!("48;2;{red};{green};{blue}"),
        });
    }
    if !params.is_empty() {
        line.push_str("\x1b[");
        line.push_str(&params.join(";"));
        line.push('m');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_title_from_a_split_stream() {
        let stream =
            "\x1b]0;one\x07\x1b[2J\x1b[Hhello\r\n\x1b[2;3Hworld\x1b]2;two\x1b\\".as_bytes();
        for cut in 0..stream.len() {
            let mut model = ScreenModel::new(3, 10);
            model.feed(&stream[..cut]);
            model.feed(&stream[cut..]);
            assert_eq!(model.text(false), "hello\n  world\n\n", "cut at {cut}");
            assert_eq!(model.title(), Some("two"), "cut at {cut}");
        }
    }

    #[test]
    fn backgrounds_become_escapes_only_when_asked() {
        let mut model = ScreenModel::new(2, 20);
        model.feed(b"a \x1b[48;5;238mYes\x1b[49m  \x1b[7mNo\x1b[27m");
        assert_eq!(model.text(false), "a Yes  No\n\n");
        assert_eq!(
            model.text(true),
            "a \x1b[48;5;238mYes\x1b[49m  \x1b[7mNo\x1b[0m\n\n"
        );
    }

    #[test]
    fn follows_resizes() {
        let mut model = ScreenModel::new(2, 5);
        model.feed(b"abcdefgh");
        assert_eq!(model.text(false), "abcde\nfgh\n");
        model.resize(3, 8);
        assert_eq!(model.size(), (3, 8));
        model.feed(b"\x1b[2J\x1b[Habcdefgh");
        assert_eq!(model.text(false), "abcdefgh\n\n\n");
        model.resize(0, 0);
        assert_eq!(model.size(), (1, 1));
    }

    #[test]
    fn wide_characters_take_one_place_in_the_text() {
        let mut model = ScreenModel::new(1, 10);
        model.feed("✋ 漢字 x".as_bytes());
        assert_eq!(model.text(false), "✋ 漢字 x\n");
    }
}
