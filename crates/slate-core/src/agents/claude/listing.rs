//! Claude Code's own listings of its sessions (docs/formats.md §1.1, §1.4): the live registry
//! `sessions/<pid>.json`, the output of `claude agents --json` and a background job's
//! `jobs/<id>/state.json`, each read into `ListingEntry`s.

use serde_json::{Map, Value};

use super::{json_error, str_field};
use crate::agents::LineError;
use crate::model::{ListedStatus, ListingEntry, Timestamp};

/// Reads one live-registry file `sessions/<pid>.json`. The legacy generation (`pid-<n>.json`,
/// snake_case `session_id`, no status) and any file without a `sessionId` give `Ok(None)`.
pub fn parse_registry(bytes: &[u8]) -> Result<Option<ListingEntry>, LineError> {
    let entry = parse_object(bytes)?;
    let Some(session_id) = str_field(&entry, "sessionId") else {
        return Ok(None);
    };
    Ok(Some(ListingEntry {
        session_id: session_id.to_owned(),
        pid: pid_field(&entry),
        proc_start: entry.get("procStart").and_then(|value| match value {
            Value::String(text) => Some(text.clone()),
            Value::Number(number) => Some(number.to_string()),
            _ => None,
        }),
        started_at: time_field(&entry, "startedAt"),
        cwd: str_field(&entry, "cwd").map(str::to_owned),
        status: str_field(&entry, "status").and_then(registry_status),
        waiting_for: str_field(&entry, "waitingFor").map(str::to_owned),
        // Registries from before `kind` was written held only interactive sessions.
        interactive: str_field(&entry, "kind").is_none_or(|kind| kind == "interactive"),
        updated_at: time_field(&entry, "updatedAt"),
    }))
}

/// The registry's `status`; `shell` is the prompt with a user shell running, which the TUI itself
/// reports as busy.
fn registry_status(status: &str) -> Option<ListedStatus> {
    match status {
        "busy" | "shell" => Some(ListedStatus::Busy),
        "idle" => Some(ListedStatus::Idle),
        "waiting" => Some(ListedStatus::Waiting),
        _ => None,
    }
}

/// A background job's `state` (or its `tempo`).
fn job_status(state: &str) -> Option<ListedStatus> {
    match state {
        "done" | "failed" | "stopped" => Some(ListedStatus::Finished),
        "working" | "active" => Some(ListedStatus::Busy),
        "blocked" => Some(ListedStatus::Waiting),
        "idle" => Some(ListedStatus::Idle),
        _ => None,
    }
}

/// Reads the output of `claude agents --json`: a JSON array of live sessions and background jobs.
/// Entries without a session id (a job that has not started one) are left out.
pub fn parse_agents_json(bytes: &[u8]) -> Result<Vec<ListingEntry>, LineError> {
    let text = std::str::from_utf8(bytes).map_err(|_| LineError::NotUtf8)?;
    let value: Value = serde_json::from_str(text).map_err(json_error)?;
    let Value::Array(items) = value else {
        return Err(LineError::Shape("agents listing is not a JSON array"));
    };
    let entries = items
        .iter()
        .filter_map(Value::as_object)
        .filter_map(|item| {
            let session_id = str_field(item, "sessionId")?;
            let interactive = str_field(item, "kind") != Some("background");
            // Background jobs report their progress in `state`; chats in `status`.
            let status = str_field(item, "state")
                .and_then(job_status)
                .or_else(|| str_field(item, "status").and_then(registry_status));
            Some(ListingEntry {
                session_id: session_id.to_owned(),
                pid: pid_field(item),
                proc_start: None,
                started_at: time_field(item, "startedAt"),
                cwd: str_field(item, "cwd").map(str::to_owned),
                status,
                waiting_for: str_field(item, "waitingFor").map(str::to_owned),
                interactive,
                updated_at: time_field(item, "updatedAt"),
            })
        })
        .collect();
    Ok(entries)
}

/// Reads a background job's `jobs/<id>/state.json`. A job that names no session gives `Ok(None)`.
pub fn parse_job_state(bytes: &[u8]) -> Result<Option<ListingEntry>, LineError> {
    let entry = parse_object(bytes)?;
    let Some(session_id) =
        str_field(&entry, "sessionId").or_else(|| str_field(&entry, "session_id"))
    else {
        return Ok(None);
    };
    // `state` is the job's lifecycle; `tempo` only says how busy a live job is, so it counts only
    // when there is no state.
    let status = str_field(&entry, "state")
        .and_then(job_status)
        .or_else(|| str_field(&entry, "tempo").and_then(job_status));
    let waiting_for = match entry.get("needs") {
        Some(Value::String(needs)) if !needs.is_empty() => Some(needs.clone()),
        _ => None,
    };
    Ok(Some(ListingEntry {
        session_id: session_id.to_owned(),
        pid: pid_field(&entry),
        proc_start: None,
        started_at: time_field(&entry, "startedAt"),
        cwd: str_field(&entry, "cwd").map(str::to_owned),
        status,
        waiting_for,
        interactive: false,
        updated_at: time_field(&entry, "updatedAt"),
    }))
}

fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, LineError> {
    let text = std::str::from_utf8(bytes).map_err(|_| LineError::NotUtf8)?;
    match serde_json::from_str(text).map_err(json_error)? {
        Value::Object(entry) => Ok(entry),
        _ => Err(LineError::Shape("file is not a JSON object")),
    }
}

fn pid_field(entry: &Map<String, Value>) -> Option<u32> {
    entry
        .get("pid")
        .and_then(Value::as_u64)
        .and_then(|pid| u32::try_from(pid).ok())
}

/// A time written as epoch milliseconds (the registry's way) or as RFC 3339 text.
fn time_field(entry: &Map<String, Value>, field: &str) -> Option<Timestamp> {
    match entry.get(field)? {
        Value::Number(number) => number
            .as_i64()
            .or_else(|| {
                number
                    .as_f64()
                    .filter(|ms| ms.is_finite() && ms.abs() < 1e15)
                    .map(|ms| ms as i64)
            })
            .map(Timestamp::from_millis),
        Value::String(text) => Timestamp::parse_rfc3339(text),
        _ => None,
    }
}
