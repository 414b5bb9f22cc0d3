//! Reading a Cline session's row, `<id>.json` beside its conversation (docs/formats.md §15.1):
//! its folder, model and title, and its status, which says what the conversation does not yet.

use serde_json::Value;

use crate::agents::{Info, LineError, Observation, Record, RecordKind, Title, TitleSource};
use crate::model::Timestamp;

use super::messages::read_messages;

/// Reads the conversation with the row beside it: the row's facts first (the conversation
/// names no folder before the model's first reply), then the conversation, then what the row's
/// status adds at its end. A row that cannot be read adds nothing.
pub fn read_session(messages: &[u8], row: Option<&[u8]>) -> Result<Vec<Observation>, LineError> {
    let mut observations = read_messages(messages)?;
    let Some(row) = row.and_then(|row| serde_json::from_slice::<Value>(row).ok()) else {
        return Ok(observations);
    };
    let Value::Object(row) = row else {
        return Ok(observations);
    };
    let text = |key: &str| {
        row.get(key)
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
            .map(str::to_string)
    };
    let metadata = row.get("metadata");
    let info = Info {
        session_id: text("session_id"),
        cwd: text("cwd").filter(|cwd| cwd.starts_with('/')),
        model: text("model"),
        branch: metadata
            .and_then(|metadata| metadata.pointer("/git/branch"))
            .and_then(Value::as_str)
            .map(str::to_string),
        title: metadata
            .and_then(|metadata| metadata.get("title"))
            .and_then(Value::as_str)
            .filter(|title| !title.trim().is_empty())
            .map(|title| Title {
                text: crate::agents::one_line(title, 200),
                source: TitleSource::Generated,
            }),
        print_mode: row
            .get("interactive")
            .and_then(Value::as_bool)
            .map(|live| !live),
        started_at: text("started_at").and_then(|at| Timestamp::parse_rfc3339(&at)),
        ..Info::default()
    };
    // After the `Reset` the conversation's read starts with, before its own facts.
    let at = usize::from(observations.first() == Some(&Observation::Reset));
    observations.insert(at, Observation::Info(info));
    if let Some(kind) = status_record(text("status").as_deref(), &observations) {
        observations.push(Observation::Record(Record { at: None, kind }));
    }
    if let Some(ended) = text("ended_at").and_then(|at| Timestamp::parse_rfc3339(&at)) {
        if matches!(
            text("status").as_deref(),
            Some("completed" | "cancelled" | "failed")
        ) {
            observations.push(Observation::Record(Record {
                at: Some(ended),
                kind: RecordKind::SessionEnded,
            }));
        }
    }
    Ok(observations)
}

/// What the row's status says beyond the conversation: `running` after a finished turn (or
/// before any record) is a new turn whose prompt the conversation does not hold yet, the model
/// thinking; `idle` after a finished turn ends it at once, and after anything else (a prompt, a
/// result, an open call) is an interrupt (Escape before the model's first token writes nothing
/// else). Undated: the record takes the files' last write.
fn status_record(status: Option<&str>, observations: &[Observation]) -> Option<RecordKind> {
    let last = observations
        .iter()
        .rev()
        .find_map(|observation| match observation {
            Observation::Record(record) => Some(&record.kind),
            _ => None,
        });
    let settled = matches!(
        last,
        Some(RecordKind::ModelText | RecordKind::TurnEnded { .. } | RecordKind::Interrupted { .. })
    );
    match status? {
        "running" if last.is_none() || settled => Some(RecordKind::TurnStarted { turn_id: None }),
        "idle" if matches!(last, Some(RecordKind::ModelText)) => {
            Some(RecordKind::TurnEnded { turn_id: None })
        }
        "idle" if last.is_some() && !settled => Some(RecordKind::Interrupted { turn_id: None }),
        _ => None,
    }
}
