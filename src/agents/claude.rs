//! TODO
use super::{AgentProcess, LineError, Observation};
use crate::model::ProcessInfo;

pub fn observe(_line: &[u8]) -> Result<Vec<Observation>, LineError> {
    Ok(Vec::new())
}

pub fn recognise(_process: &ProcessInfo) -> Option<AgentProcess> {
    None
}

// Temporary stubs for the edges branch, replaced at merge by the Claude adapter's own parsers.
// They parse just enough of the registry (FORMATS.md §1.1) for `sources::listings` to be tested.

pub fn parse_registry(bytes: &[u8]) -> Result<Option<crate::model::ListingEntry>, LineError> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|error| LineError::NotJson(error.to_string()))?;
    let Some(session_id) = value.get("sessionId").and_then(|id| id.as_str()) else {
        return Ok(None);
    };
    Ok(Some(crate::model::ListingEntry {
        session_id: session_id.to_string(),
        pid: value
            .get("pid")
            .and_then(|pid| pid.as_u64())
            .and_then(|pid| u32::try_from(pid).ok()),
        proc_start: value
            .get("procStart")
            .and_then(|start| start.as_str())
            .map(str::to_string),
        started_at: None,
        cwd: value
            .get("cwd")
            .and_then(|cwd| cwd.as_str())
            .map(str::to_string),
        status: None,
        waiting_for: None,
        interactive: value.get("kind").and_then(|kind| kind.as_str()) == Some("interactive"),
        updated_at: None,
    }))
}

pub fn parse_job_state(bytes: &[u8]) -> Result<Option<crate::model::ListingEntry>, LineError> {
    let _: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|error| LineError::NotJson(error.to_string()))?;
    Ok(None)
}
