//! Qwen Code's registry of live sessions (docs/formats.md §13.1): one `sessions/<pid>.json` per
//! running TUI, removed when it exits, read into a `ListingEntry`. It has no status: it says
//! which sessions are live, under which pid, and nothing of what they do.

use serde_json::Value;

use crate::agents::{one_line, LineError};
use crate::model::{ListingEntry, Timestamp};

/// Reads one registry file. A file without a `sessionId` lists nothing.
pub fn parse_registry(bytes: &[u8]) -> Result<Option<ListingEntry>, LineError> {
    let text = std::str::from_utf8(bytes).map_err(|_| LineError::NotUtf8)?;
    let value: Value = serde_json::from_str(text)
        .map_err(|error| LineError::NotJson(one_line(&error.to_string(), 120)))?;
    let Value::Object(entry) = value else {
        return Err(LineError::Shape("file is not a JSON object"));
    };
    let text = |field: &str| entry.get(field).and_then(Value::as_str);
    let Some(session_id) = text("sessionId").filter(|id| !id.is_empty()) else {
        return Ok(None);
    };
    Ok(Some(ListingEntry {
        session_id: session_id.to_string(),
        pid: entry
            .get("pid")
            .and_then(Value::as_u64)
            .and_then(|pid| u32::try_from(pid).ok()),
        proc_start: text("procStart").and_then(start_ticks),
        started_at: entry
            .get("startedAt")
            .and_then(Value::as_i64)
            .map(Timestamp::from_millis),
        cwd: text("cwd").map(str::to_string),
        status: None,
        waiting_for: None,
        // `tui` is the interactive CLI; other kinds (a server, an editor's agent) are not chats.
        interactive: text("kind").is_none_or(|kind| kind == "tui"),
        updated_at: None,
    }))
}

/// The process's start in clock ticks from `procStart`, `<boot id>:<ticks>` (field 22 of
/// `/proc/<pid>/stat`, as Qwen Code reads it), so that a recycled pid is told from the process
/// that wrote the file. Anything else is no start at all.
fn start_ticks(proc_start: &str) -> Option<String> {
    let ticks = proc_start
        .rsplit_once(':')
        .map_or(proc_start, |(_, ticks)| ticks);
    (!ticks.is_empty() && ticks.bytes().all(|byte| byte.is_ascii_digit()))
        .then(|| ticks.to_string())
}
