//! Records an agent's parser does not know: a type it has never seen, in a file it otherwise
//! reads. They change no state (the session keeps the state its known records give), but they are
//! the first sign that a CLI changed its format, so a parser reports each one as an
//! [`UnreadRecord`]: a short name of what it was, and a redacted copy of the record that keeps its
//! keys and record types and replaces its text and numbers, for a bug report (`slate doctor
//! --sample`). A key or a type is kept only when it reads as a name a program gives, never as a
//! secret, an address, a path or a number (`UnreadKind::is_name`), and the name of a record is
//! built from the kept type alone.
//!
//! A screen is read the same way (`screen`): a screen of a session at work that its agent's
//! grammar does not know, neither a dialog nor the agent at work nor its composer, is copied with
//! its frames, its marks and the grammar's own words kept and every other letter and digit
//! replaced. The tracker counts it once it has stayed a while (`tracker::signals`).
//!
//! A copy read back (`resample`, for a copy a running Slate, maybe an older one, kept) is held to
//! the same rules again: redacting a redacted copy changes nothing.
//!
//! Pure, and bounded whatever the record: the name and the copy have fixed limits.

use std::collections::VecDeque;

use serde_json::{Map, Value};

use super::screens::{plain_lines, ScreenGrammar};
use super::{one_line, Observation};
use crate::model::UnreadKind;

/// The longest name of an unread record, in characters.
pub const WHAT_CHARS: usize = 60;
/// The longest redacted copy of a record, in bytes of JSON.
pub const SAMPLE_BYTES: usize = 2048;
/// How deep the copy follows nested objects and arrays.
const DEPTH: usize = 6;
/// How many keys of one object, and items of one array, the copy keeps.
const KEYS: usize = 24;
const ITEMS: usize = 3;

/// What a screen its agent's grammar does not know is counted as.
pub const SCREEN: &str = UnreadKind::SCREEN;
/// How many of a screen's last lines a copy of it keeps.
const SCREEN_LINES: usize = 12;
/// How many characters of one screen line a copy keeps.
const SCREEN_COLUMNS: usize = 240;

/// Keys whose values name a record's type or role, not its content: a copy keeps a value that
/// passes `UnreadKind::is_name`, so a maintainer can see which record was new.
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

/// The markers a copy writes in place of what it leaves out, with every count as `N`. A string
/// of one of these forms is kept when a copy is redacted again.
const MARKERS: &[&str] = &[
    "<text, N chars>",
    "<number>",
    "<N more>",
    "<more keys>",
    "<key N, N chars>",
    "<null cut>",
    "<boolean cut>",
    "<number cut>",
    "<string cut>",
    "<object cut>",
    "<array cut>",
    "<record cut>",
    "<N bytes of JSON>",
    "<sample not JSON, N bytes>",
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
    /// `what` is shown only as `UnreadKind::shown` allows.
    pub fn of(what: &str, record: &Value) -> UnreadRecord {
        UnreadRecord {
            what: one_line(&UnreadKind::shown(what), WHAT_CHARS),
            sample: bounded(redact(record, 0)),
        }
    }

    /// A record of a type `kind` (under the key `key`) that the parser does not know, named by
    /// the type as its copy keeps it: `type "turn-ledger"`, or `type <text, 40 chars>` for a
    /// type that does not read as a name.
    pub fn of_type(key: &str, kind: &Value, record: &Value) -> UnreadRecord {
        let what = match kind {
            Value::Null => format!("record with no {key}"),
            Value::String(kind) if UnreadKind::is_name(kind) => format!("{key} \"{kind}\""),
            Value::String(kind) => format!("{key} {}", replaced(kind)),
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
        let words = grammar_words(grammar);
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

/// A copy read back (`sample`, as a session's `unread.samples` holds it), held to the rules
/// again: a screen's lines (a copy whose one key is `screen`) masked again with the `grammar`'s
/// words, any other copy redacted again, and text that is no JSON, or too long or too deep to
/// be a copy, replaced by its length.
pub fn resample(grammar: Option<&ScreenGrammar>, sample: &str) -> Value {
    let not_json = || Value::String(format!("<sample not JSON, {} bytes>", sample.len()));
    if sample.len() > SAMPLE_BYTES {
        return not_json();
    }
    let Ok(value) = serde_json::from_str::<Value>(sample) else {
        return not_json();
    };
    let screen = value
        .as_object()
        .filter(|fields| fields.len() == 1)
        .and_then(|fields| fields.get("screen")?.as_array())
        .filter(|lines| lines.iter().all(Value::is_string));
    let again = match screen {
        Some(lines) => {
            let words = grammar.map(grammar_words).unwrap_or_default();
            let lines: Vec<String> = lines
                .iter()
                .take(SCREEN_LINES)
                .filter_map(Value::as_str)
                .map(|line| {
                    let line: String = line.chars().take(SCREEN_COLUMNS).collect();
                    masked(&line, &words)
                })
                .collect();
            serde_json::json!({ "screen": lines })
        }
        None => redact(&value, 0),
    };
    serde_json::from_str(&bounded(again)).unwrap_or_else(|_| not_json())
}

/// The record's keys and record types that read as names, with every other text, every number
/// and every other key replaced. A marker an earlier redaction wrote is kept as it is.
pub fn redact(value: &Value, depth: usize) -> Value {
    if depth >= DEPTH && matches!(value, Value::Object(_) | Value::Array(_)) {
        return Value::String(format!("<{} cut>", json_kind(value)));
    }
    match value {
        Value::String(text) if is_marker(text) => value.clone(),
        Value::String(text) => Value::String(replaced(text)),
        Value::Number(_) => Value::String("<number>".to_owned()),
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
            for (at, (key, field)) in fields.iter().take(KEYS).enumerate() {
                let value = match field {
                    Value::String(text)
                        if TYPE_KEYS.contains(&key.as_str()) && UnreadKind::is_name(text) =>
                    {
                        field.clone()
                    }
                    _ => redact(field, depth + 1),
                };
                let key = if UnreadKind::is_name(key) || is_marker(key) {
                    key.clone()
                } else {
                    format!("<key {}, {} chars>", at + 1, key.chars().count())
                };
                kept.insert(key, value);
            }
            if fields.len() > KEYS {
                kept.insert(
                    "<more keys>".to_owned(),
                    Value::String(format!("<{} more>", fields.len() - KEYS)),
                );
            }
            Value::Object(kept)
        }
        Value::Null | Value::Bool(_) => value.clone(),
    }
}

/// `copy` as JSON text, or a marker of its length when it is longer than [`SAMPLE_BYTES`].
fn bounded(copy: Value) -> String {
    let text = copy.to_string();
    if text.len() <= SAMPLE_BYTES {
        return text;
    }
    serde_json::json!({ "<record cut>": format!("<{} bytes of JSON>", text.len()) }).to_string()
}

/// True when `text` is one of the [`MARKERS`], each count in it 1 to 7 digits.
fn is_marker(text: &str) -> bool {
    if text.len() > 40 {
        return false;
    }
    let mut shape = String::new();
    let mut digits = 0;
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits += 1;
            if digits > 7 {
                return false;
            }
            if digits == 1 {
                shape.push('N');
            }
        } else {
            digits = 0;
            shape.push(c);
        }
    }
    MARKERS.contains(&shape.as_str())
}

/// The grammar's own words, which a screen's copy keeps: its dialogs' footers and the texts they
/// hold, its working and idle texts, its marks.
fn grammar_words(grammar: &ScreenGrammar) -> Vec<&'static str> {
    grammar
        .dialogs
        .iter()
        .flat_map(|shape| std::iter::once(shape.footer).chain(shape.holds.iter().copied()))
        .chain(grammar.working.iter().copied())
        .chain(grammar.idle.iter().copied())
        .chain(grammar.markers.iter().copied())
        .filter(|word| !word.trim().is_empty())
        .collect()
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
