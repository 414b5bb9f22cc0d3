//! Records an agent's parser does not know: a type it has never seen, in a file it otherwise
//! reads. They change no state (the session keeps the state its known records give), but they are
//! the first sign that a CLI changed its format, so a parser reports each one as an
//! [`UnreadRecord`]: a short name of what it was, and a redacted copy of the record that keeps its
//! keys and record types and replaces its text, for a bug report (`slate doctor --sample`).
//!
//! A screen is read the same way (`screen`): a screen of a session at work that its agent's
//! grammar does not know, neither a dialog nor the agent at work nor its composer, is copied with
//! its frames, its marks and the grammar's own words kept and every other letter and digit
//! replaced. The tracker counts it once it has stayed a while (`tracker::signals`).
//!
//! Pure, and bounded whatever the record: the name and the copy have fixed limits.

use std::collections::VecDeque;

use serde_json::{Map, Value};

use super::screens::{plain_lines, ScreenGrammar};
use super::{one_line, Observation};

/// The longest name of an unread record, in characters.
pub const WHAT_CHARS: usize = 60;
/// The longest redacted copy of a record, in bytes of JSON.
pub const SAMPLE_BYTES: usize = 2048;
/// How deep the copy follows nested objects and arrays.
const DEPTH: usize = 6;
/// How many keys of one object, and items of one array, the copy keeps.
const KEYS: usize = 24;
const ITEMS: usize = 3;
/// The longest key the copy keeps, in characters.
const KEY_CHARS: usize = 40;
/// The longest value of a type-naming key that is kept as it is.
const TYPE_CHARS: usize = 48;

/// What a screen its agent's grammar does not know is counted as.
pub const SCREEN: &str = "screen its grammar does not know";
/// How many of a screen's last lines a copy of it keeps.
const SCREEN_LINES: usize = 12;
/// How many characters of one screen line a copy keeps.
const SCREEN_COLUMNS: usize = 240;

/// Keys whose short identifier values name a record's type or role, not its content: a copy keeps
/// them, so a maintainer can see which record was new.
const TYPE_KEYS: &[&str] = &[
    "type",
    "kind",
    "subtype",
    "event",
    "role",
    "status",
    "stopReason",
    "op",
    "method",
];

/// A record the agent's parser does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadRecord {
    /// What it was, for people: `type "brand-new"`, or `record with no type`.
    pub what: String,
    /// The record as JSON with its keys and record types kept and every other text replaced by
    /// `"<text, N chars>"`; at most [`SAMPLE_BYTES`] bytes.
    pub sample: String,
}

impl UnreadRecord {
    /// An unread record named `what`, whose content is `record`.
    pub fn of(what: &str, record: &Value) -> UnreadRecord {
        let what: String = what.chars().filter(|c| !c.is_control()).collect();
        let mut sample = redact(record, 0).to_string();
        if sample.len() > SAMPLE_BYTES {
            sample = format!(r#"{{"<record cut>":"{} bytes of JSON"}}"#, sample.len());
        }
        UnreadRecord {
            what: one_line(&what, WHAT_CHARS),
            sample,
        }
    }

    /// A record of a type `kind` (under the key `key`) that the parser does not know.
    pub fn of_type(key: &str, kind: &Value, record: &Value) -> UnreadRecord {
        let what = match kind {
            Value::Null => format!("record with no {key}"),
            Value::String(kind) => format!("{key} {kind:?}"),
            other => format!("{key} of JSON {}", json_kind(other)),
        };
        UnreadRecord::of(&what, record)
    }

    /// A screen that `grammar` read as nothing it knows: its last lines as drawn, with the
    /// grammar's own words (its dialogs' footers and the texts they hold, its working and idle
    /// texts, its marks), the frames and the punctuation kept, and every other letter and digit
    /// replaced by `x`. `None` for a screen with nothing drawn on it, which says nothing of a
    /// format.
    pub fn screen(grammar: &ScreenGrammar, text: &str) -> Option<UnreadRecord> {
        let words: Vec<&str> = grammar
            .dialogs
            .iter()
            .flat_map(|shape| std::iter::once(shape.footer).chain(shape.holds.iter().copied()))
            .chain(grammar.working.iter().copied())
            .chain(grammar.idle.iter().copied())
            .chain(grammar.markers.iter().copied())
            .filter(|word| !word.trim().is_empty())
            .collect();
        // The last lines up to the last one with ink on it, and the blank lines after that.
        let mut lines: VecDeque<String> = VecDeque::new();
        let mut blanks: Vec<String> = Vec::new();
        for line in plain_lines(text) {
            let line: String = line.chars().take(SCREEN_COLUMNS).collect();
            let line = masked(line.trim_end(), &words);
            if line.trim().is_empty() {
                if blanks.len() < SCREEN_LINES {
                    blanks.push(line);
                }
                continue;
            }
            lines.extend(blanks.drain(..));
            lines.push_back(line);
            while lines.len() > SCREEN_LINES {
                lines.pop_front();
            }
        }
        if lines.is_empty() {
            return None;
        }
        let mut sample = serde_json::json!({ "screen": lines }).to_string();
        while sample.len() > SAMPLE_BYTES && !lines.is_empty() {
            lines.pop_front();
            sample = serde_json::json!({ "screen": lines }).to_string();
        }
        Some(UnreadRecord {
            what: SCREEN.to_owned(),
            sample,
        })
    }

    /// As an observation.
    pub fn observation(self) -> Observation {
        Observation::Unread(self)
    }
}

/// The record's keys and record types, with every other text replaced.
pub fn redact(value: &Value, depth: usize) -> Value {
    if depth >= DEPTH && matches!(value, Value::Object(_) | Value::Array(_)) {
        return Value::String(format!("<{} cut>", json_kind(value)));
    }
    match value {
        Value::String(text) => Value::String(replaced(text)),
        Value::Array(items) => {
            let mut kept: Vec<Value> = items
                .iter()
                .take(ITEMS)
                .map(|item| redact(item, depth + 1))
                .collect();
            if items.len() > ITEMS {
                kept.push(Value::String(format!("<{} more>", items.len() - ITEMS)));
            }
            Value::Array(kept)
        }
        Value::Object(fields) => {
            let mut kept = Map::new();
            for (key, field) in fields.iter().take(KEYS) {
                let value = match field {
                    Value::String(text) if TYPE_KEYS.contains(&key.as_str()) && is_type(text) => {
                        field.clone()
                    }
                    _ => redact(field, depth + 1),
                };
                kept.insert(one_line(key, KEY_CHARS), value);
            }
            if fields.len() > KEYS {
                kept.insert("<more keys>".to_owned(), Value::from(fields.len() - KEYS));
            }
            Value::Object(kept)
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
    }
}

/// `line` with every letter and digit outside the `words` it holds replaced by `x`.
fn masked(line: &str, words: &[&str]) -> String {
    let mut kept = vec![false; line.len()];
    for word in words {
        for (start, found) in line.match_indices(word) {
            kept[start..start + found.len()].fill(true);
        }
    }
    line.char_indices()
        .map(|(at, c)| {
            if c.is_alphanumeric() && !kept[at] {
                'x'
            } else {
                c
            }
        })
        .collect()
}

/// A short identifier, as record types are spelt (`tool.execution_start`, `api-request/v2`).
fn is_type(text: &str) -> bool {
    !text.is_empty()
        && text.chars().count() <= TYPE_CHARS
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':'))
}

fn replaced(text: &str) -> String {
    format!("<text, {} chars>", text.chars().count())
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
