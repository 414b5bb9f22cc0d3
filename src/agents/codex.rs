//! TODO
use super::{AgentProcess, LineError, Observation};
use crate::model::ProcessInfo;

pub fn observe(_line: &[u8]) -> Result<Vec<Observation>, LineError> {
    Ok(Vec::new())
}

pub fn recognise(_process: &ProcessInfo) -> Option<AgentProcess> {
    None
}
