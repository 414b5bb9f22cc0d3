//! Finds the terminal titles (OSC 0 and OSC 2) in a hosted program's output stream.
//!
//! `TitleScanner` is fed the bytes exactly as they are read from the pseudo-terminal, in chunks
//! that may split a sequence anywhere, and returns each complete title. It ends a sequence at BEL
//! or at ST (`ESC \`), drops a sequence that CAN, SUB or a new escape interrupts, and forgets a
//! sequence that grows past [`MAX_SEQUENCE`] instead of holding the stream's bytes. Every other
//! escape sequence and all text pass it by. It owns no I/O and never changes the bytes: the host
//! relays the stream untouched and only shows the scanner a copy.

/// The longest OSC payload kept. Real titles are short; a longer "title" is a runaway sequence.
pub const MAX_SEQUENCE: usize = 4096;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    /// Plain text, or inside an escape sequence that is not an OSC.
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// Inside an OSC, collecting its payload.
    Osc,
    /// Inside an OSC that grew too long: skipping to its end.
    Overflow,
    /// After ESC inside an OSC: `\` ends it, anything else interrupts it.
    OscEscape { overflowed: bool },
}

/// An incremental scanner for title-setting OSC sequences.
#[derive(Debug, Default)]
pub struct TitleScanner {
    state: State,
    payload: Vec<u8>,
}

impl TitleScanner {
    pub fn new() -> TitleScanner {
        TitleScanner::default()
    }

    /// Scans the next chunk of output and returns the titles completed in it, in order.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut titles = Vec::new();
        for &byte in bytes {
            self.step(byte, &mut titles);
        }
        titles
    }

    fn step(&mut self, byte: u8, titles: &mut Vec<String>) {
        match self.state {
            State::Ground => {
                if byte == ESC {
                    self.state = State::Escape;
                }
            }
            State::Escape => {
                self.state = match byte {
                    b']' => {
                        self.payload.clear();
                        State::Osc
                    }
                    ESC => State::Escape,
                    _ => State::Ground,
                };
            }
            State::Osc | State::Overflow => match byte {
                BEL => {
                    if self.state == State::Osc {
                        self.finish(titles);
                    }
                    self.state = State::Ground;
                }
                ESC => {
                    self.state = State::OscEscape {
                        overflowed: self.state == State::Overflow,
                    }
                }
                CAN | SUB => self.state = State::Ground,
                _ if self.state == State::Overflow => {}
                _ if self.payload.len() >= MAX_SEQUENCE => {
                    self.payload.clear();
                    self.state = State::Overflow;
                }
                _ => self.payload.push(byte),
            },
            State::OscEscape { overflowed } => {
                if byte == b'\\' {
                    if !overflowed {
                        self.finish(titles);
                    }
                    self.state = State::Ground;
                } else {
                    // An escape inside an OSC interrupts it and starts a sequence of its own.
                    self.state = State::Escape;
                    self.step(byte, titles);
                }
            }
        }
    }

    fn finish(&mut self, titles: &mut Vec<String>) {
        let payload = std::mem::take(&mut self.payload);
        let Some(split) = payload.iter().position(|&byte| byte == b';') else {
            return;
        };
        if matches!(&payload[..split], b"0" | b"2") {
            titles.push(String::from_utf8_lossy(&payload[split + 1..]).into_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_terminators_and_both_kinds() {
        let mut scanner = TitleScanner::new();
        let titles = scanner.feed(b"a\x1b]0;one\x07b\x1b]2;two\x1b\\c\x1b]1;icon\x07d");
        assert_eq!(titles, ["one", "two"]);
    }

    #[test]
    fn split_anywhere() {
        let stream = "x\x1b[31mred\x1b]0;◐ Claude Code\x07\x1b]2;✳ Claude Code\x1b\\".as_bytes();
        for cut in 0..stream.len() {
            let mut scanner = TitleScanner::new();
            let mut titles = scanner.feed(&stream[..cut]);
            titles.extend(scanner.feed(&stream[cut..]));
            assert_eq!(titles, ["◐ Claude Code", "✳ Claude Code"], "cut at {cut}");
        }
    }

    #[test]
    fn interrupted_and_runaway_sequences_are_dropped() {
        let mut scanner = TitleScanner::new();
        assert!(scanner
            .feed(b"\x1b]0;half\x18\x1b]0;also\x1b[0m")
            .is_empty());
        let mut long = b"\x1b]0;".to_vec();
        long.extend(std::iter::repeat_n(b'a', MAX_SEQUENCE + 10));
        long.extend(b"\x07\x1b]2;after\x07");
        assert_eq!(scanner.feed(&long), ["after"]);
    }
}
