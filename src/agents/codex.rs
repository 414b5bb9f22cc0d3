//! TODO
use super::{AgentProcess, LineError, Observation};
use crate::model::ProcessInfo;

pub fn observe(_line: &[u8]) -> Result<Vec<Observation>, LineError> {
    Ok(Vec::new())
}

pub fn recognise(_process: &ProcessInfo) -> Option<AgentProcess> {
    None
}

// Temporary stubs for the edges branch, replaced at merge by the Codex adapter's own parsers.
// They do just enough (FORMATS.md §2.1) for `sources::files` to be tested.

pub fn session_id_from_file_name(name: &str) -> Option<String> {
    let stem = name
        .strip_suffix(".jsonl.zst")
        .or_else(|| name.strip_suffix(".jsonl"))?;
    let stem = stem.strip_prefix("rollout-")?;
    let start = stem.len().checked_sub(36)?;
    let id = stem.get(start..)?;
    (id.len() == 36 && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-'))
        .then(|| id.to_string())
}

pub fn parse_index_line(
    line: &[u8],
) -> Result<Option<(String, String, Option<crate::model::Timestamp>)>, LineError> {
    let value: serde_json::Value =
        serde_json::from_slice(line).map_err(|error| LineError::NotJson(error.to_string()))?;
    let id = value.get("id").and_then(|id| id.as_str());
    let name = value.get("thread_name").and_then(|name| name.as_str());
    let at = value
        .get("updated_at")
        .and_then(|at| at.as_str())
        .and_then(crate::model::Timestamp::parse_rfc3339);
    Ok(match (id, name) {
        (Some(id), Some(name)) => Some((id.to_string(), name.to_string(), at)),
        _ => None,
    })
}
