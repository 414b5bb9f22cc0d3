//! Splitting a growing byte stream into complete lines.
//!
//! `LineBuffer` receives whatever bytes a read returned and hands out only complete lines. A partial
//! last line is kept until its newline arrives: "not enough bytes yet" is the normal state of a
//! transcript that an agent is appending to, never an error. A line longer than the limit is
//! skipped as it streams past, without ever holding more than the limit in memory, and reported as
//! oversized so it can be counted. This module does no I/O; `sources::tail` feeds it.

/// One event out of [`LineBuffer::push`].
#[derive(Debug, PartialEq, Eq)]
pub enum LineEvent<'a> {
    /// A complete line, without its trailing `\n` (or `\r\n`).
    Line(&'a [u8]),
    /// A line longer than the limit went past; it was dropped unread. `len` is its length in bytes.
    Oversized { len: u64 },
}

/// Keeps the partial tail of a stream and the offset of the last complete line.
#[derive(Debug, Clone)]
pub struct LineBuffer {
    partial: Vec<u8>,
    /// True while the current line is past the limit: its bytes are dropped until its newline.
    skipping: bool,
    /// The length so far of the line being skipped.
    skipped_len: u64,
    max_line: usize,
    /// The stream offset just past the last complete (or skipped) line.
    consumed: u64,
}

impl LineBuffer {
    /// A buffer for a stream read from `offset`, dropping lines longer than `max_line` bytes.
    pub fn new(offset: u64, max_line: usize) -> LineBuffer {
        LineBuffer {
            partial: Vec::new(),
            skipping: false,
            skipped_len: 0,
            max_line,
            consumed: offset,
        }
    }

    /// The offset just past the last complete line: where a later read can resume without losing
    /// the partial line.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// The offset just past every byte pushed so far.
    pub fn pushed(&self) -> u64 {
        self.consumed + self.partial.len() as u64 + self.skipped_len
    }

    /// True when bytes of an unfinished line are waiting for their newline.
    pub fn has_partial(&self) -> bool {
        !self.partial.is_empty() || self.skipping
    }

    /// The unfinished last line so far, for formats whose final record may lack a newline.
    pub fn partial(&self) -> &[u8] {
        &self.partial
    }

    /// Feeds `chunk` and calls `on_event` for every line it completes.
    pub fn push(&mut self, mut chunk: &[u8], mut on_event: impl FnMut(LineEvent<'_>)) {
        while !chunk.is_empty() {
            let newline = chunk.iter().position(|&byte| byte == b'\n');
            match newline {
                Some(end) => {
                    let (head, rest) = (&chunk[..end], &chunk[end + 1..]);
                    let line_len = self.partial.len() as u64 + self.skipped_len + end as u64;
                    if self.skipping || self.partial.len() + head.len() > self.max_line {
                        on_event(LineEvent::Oversized { len: line_len });
                        self.partial.clear();
                    } else if self.partial.is_empty() {
                        on_event(LineEvent::Line(trim_cr(head)));
                    } else {
                        self.partial.extend_from_slice(head);
                        let line = std::mem::take(&mut self.partial);
                        on_event(LineEvent::Line(trim_cr(&line)));
                    }
                    self.skipping = false;
                    self.skipped_len = 0;
                    self.consumed += line_len + 1;
                    chunk = rest;
                }
                None => {
                    if self.skipping {
                        self.skipped_len += chunk.len() as u64;
                    } else if self.partial.len() + chunk.len() > self.max_line {
                        self.skipped_len = (self.partial.len() + chunk.len()) as u64;
                        self.partial = Vec::new();
                        self.skipping = true;
                    } else {
                        self.partial.extend_from_slice(chunk);
                    }
                    chunk = &[];
                }
            }
        }
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(buffer: &mut LineBuffer, chunk: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        buffer.push(chunk, |event| match event {
            LineEvent::Line(line) => out.push(String::from_utf8_lossy(line).into_owned()),
            LineEvent::Oversized { len } => out.push(format!("<oversized {len}>")),
        });
        out
    }

    #[test]
    fn keeps_the_partial_tail_until_its_newline() {
        let mut buffer = LineBuffer::new(0, 100);
        assert_eq!(collect(&mut buffer, b"one\ntw"), vec!["one"]);
        assert_eq!(buffer.consumed(), 4);
        assert!(buffer.has_partial());
        assert_eq!(collect(&mut buffer, b"o\r\nthree\n"), vec!["two", "three"]);
        assert_eq!(buffer.consumed(), 15);
        assert!(!buffer.has_partial());
    }

    #[test]
    fn skips_an_oversized_line_without_holding_it() {
        let mut buffer = LineBuffer::new(10, 8);
        assert_eq!(collect(&mut buffer, b"short\n0123456789"), vec!["short"]);
        assert!(buffer.partial().is_empty());
        assert_eq!(collect(&mut buffer, b"abcdef"), Vec::<String>::new());
        assert_eq!(
            collect(&mut buffer, b"xyz\nnext\n"),
            vec!["<oversized 19>", "next"]
        );
        assert_eq!(buffer.consumed(), 10 + 6 + 20 + 5);
    }
}
