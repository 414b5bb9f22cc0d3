//! Records an agent's parser does not know: a type it has never seen, in a file it otherwise
//! reads. They change no state (the session keeps the state its known records give), but they are
//! the first sign that a CLI changed its format, so a parser reports each one as an
//! [`UnreadRecord`]: a short name of what it was, and a redacted copy of the record that keeps its
//! keys and record types and replaces its text, for a bug report (`slate doctor --sample`).
//!
//! Pure, and bounded whatever the record: the name and the copy have fixed limits.

use serde_json::{Map, Value};

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
