//! Where each value of a JSON settings file sits in its text, so Slate's hook entries can be
//! added and taken out without touching a byte around them (`settings`).
//!
//! The text is first checked with `serde_json`, after its comments (`//` and `/* */`, which
//! Gemini CLI's settings allow) are blanked to spaces of the same length, so offsets stay those
//! of the file; a text that does not parse is refused there. This module then only finds spans
//! in text known to be JSON: objects with their members' keys, arrays with their elements, and
//! where each begins and ends. It reads nothing and allocates in proportion to the text.

use serde_json::Value;

/// A value's place in the text: `start..end` covers it, brackets or quotes included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Node {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Kind {
    /// Members in order: the key (decoded), where the member starts (its key's quote), and its
    /// value.
    Object(Vec<(String, usize, Node)>),
    Array(Vec<Node>),
    Scalar,
}

impl Node {
    /// The value of the member `key`: the last one when the key is given twice, as `serde_json`
    /// reads it.
    pub(super) fn member(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            Kind::Object(members) => members
                .iter()
                .rev()
                .find(|(name, _, _)| name == key)
                .map(|(_, _, node)| node),
            _ => None,
        }
    }
}

/// Why a settings text cannot be edited.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("it is not valid JSON: {0}")]
    Invalid(String),
    #[error("it holds {0}, not a JSON object")]
    NotObject(&'static str),
    #[error("it is {0} bytes, more than the {1} bytes Slate edits")]
    TooLarge(usize, usize),
    /// A file of the name Slate's would take that is not Slate's: why, and what to do.
    #[error("{0}")]
    NotSlates(String),
}

/// The most a settings file may hold for Slate to edit it.
pub const SETTINGS_LIMIT: usize = 4 * 1024 * 1024;

/// `text` with every comment replaced by spaces (new lines kept), or an error for a comment that
/// never ends.
pub(super) fn blank_comments(text: &str) -> Result<String, ParseError> {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let byte = bytes[i];
        if in_string {
            match byte {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match (byte, bytes.get(i + 1)) {
            (b'"', _) => in_string = true,
            (b'/', Some(b'/')) => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
                continue;
            }
            (b'/', Some(b'*')) => {
                let close = text[i + 2..]
                    .find("*/")
                    .ok_or_else(|| ParseError::Invalid("a comment never ends".into()))?;
                let end = i + 2 + close + 2;
                for at in i..end {
                    if bytes[at] != b'\n' {
                        out[at] = b' ';
                    }
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    // Only ASCII bytes outside strings were replaced, by ASCII spaces: still UTF-8.
    String::from_utf8(out).map_err(|err| ParseError::Invalid(err.to_string()))
}

/// The text's top-level object, its comments blanked, with the value `serde_json` read.
pub(super) fn parse(text: &str) -> Result<(String, Node, Value), ParseError> {
    if text.len() > SETTINGS_LIMIT {
        return Err(ParseError::TooLarge(text.len(), SETTINGS_LIMIT));
    }
    let blank = blank_comments(text)?;
    let value: Value =
        serde_json::from_str(&blank).map_err(|err| ParseError::Invalid(err.to_string()))?;
    if !value.is_object() {
        let what = match value {
            Value::Array(_) => "an array",
            Value::String(_) => "a string",
            Value::Number(_) => "a number",
            Value::Bool(_) => "a boolean",
            _ => "null",
        };
        return Err(ParseError::NotObject(what));
    }
    let mut scanner = Scanner {
        bytes: blank.as_bytes(),
        at: 0,
    };
    scanner.skip_space();
    let node = scanner.value();
    Ok((blank, node, value))
}

/// A reader over text that `serde_json` accepted (comments blanked): it cannot meet an error,
/// and its depth is bounded by `serde_json`'s own recursion limit.
struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Scanner<'_> {
    fn skip_space(&mut self) {
        while self
            .bytes
            .get(self.at)
            .is_some_and(|byte| byte.is_ascii_whitespace())
        {
            self.at += 1;
        }
    }

    fn value(&mut self) -> Node {
        let start = self.at;
        match self.bytes.get(self.at) {
            Some(b'{') => {
                self.at += 1;
                let mut members = Vec::new();
                loop {
                    self.skip_space();
                    match self.bytes.get(self.at) {
                        Some(b'}') | None => break,
                        Some(b',') => {
                            self.at += 1;
                            continue;
                        }
                        _ => {}
                    }
                    let key_start = self.at;
                    let key = self.string();
                    self.skip_space();
                    self.at += 1; // the colon
                    self.skip_space();
                    let value = self.value();
                    members.push((key, key_start, value));
                }
                self.at += 1;
                Node {
                    start,
                    end: self.at,
                    kind: Kind::Object(members),
                }
            }
            Some(b'[') => {
                self.at += 1;
                let mut elements = Vec::new();
                loop {
                    self.skip_space();
                    match self.bytes.get(self.at) {
                        Some(b']') | None => break,
                        Some(b',') => {
                            self.at += 1;
                            continue;
                        }
                        _ => elements.push(self.value()),
                    }
                }
                self.at += 1;
                Node {
                    start,
                    end: self.at,
                    kind: Kind::Array(elements),
                }
            }
            Some(b'"') => {
                self.string();
                Node {
                    start,
                    end: self.at,
                    kind: Kind::Scalar,
                }
            }
            _ => {
                while self.bytes.get(self.at).is_some_and(|byte| {
                    !byte.is_ascii_whitespace() && !matches!(byte, b',' | b']' | b'}')
                }) {
                    self.at += 1;
                }
                Node {
                    start,
                    end: self.at,
                    kind: Kind::Scalar,
                }
            }
        }
    }

    /// A string at the cursor, decoded.
    fn string(&mut self) -> String {
        let start = self.at;
        self.at += 1;
        while let Some(byte) = self.bytes.get(self.at) {
            match byte {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    break;
                }
                _ => self.at += 1,
            }
        }
        let raw = &self.bytes[start..self.at.min(self.bytes.len())];
        serde_json::from_slice(raw).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_become_spaces_of_the_same_length() {
        let text = "{ // a\n \"a\": \"//x\", /* b\n */ \"b\": 1 }";
        let blank = blank_comments(text).unwrap();
        assert_eq!(blank.len(), text.len());
        assert!(blank.contains("\"//x\""));
        let value: Value = serde_json::from_str(&blank).unwrap();
        assert_eq!(value["b"], 1);
    }

    #[test]
    fn spans_cover_the_values() {
        let text = r#"{"a": [1, {"b": "x\"y"}], "c": true}"#;
        let (_, node, _) = parse(text).unwrap();
        let a = node.member("a").unwrap();
        assert_eq!(&text[a.start..a.end], r#"[1, {"b": "x\"y"}]"#);
        let c = node.member("c").unwrap();
        assert_eq!(&text[c.start..c.end], "true");
    }

    #[test]
    fn broken_texts_are_refused() {
        for text in ["", "{", "{\"a\": }", "[1]", "/* open", "{} {}", "\"x\""] {
            assert!(parse(text).is_err(), "{text:?}");
        }
    }
}
