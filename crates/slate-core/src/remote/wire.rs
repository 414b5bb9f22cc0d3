//! Reading what a remote's Slate prints: one NDJSON line of `slate watch --json` (a snapshot,
//! a changed session, a removed one), or the whole answer of `slate sessions --json`.
//!
//! A remote may run a newer or an older Slate than this one. Session objects are read with
//! `Session::from_wire` (an older server's objects without `session_state` are filled in, an
//! agent this build does not know is kept by its id), a line of a type this build does not know
//! is skipped, and one session object that cannot be read is skipped and counted, never the
//! whole snapshot. A session id is checked as `limits::session_id` says (at most 128 bytes, no
//! space, no control or format character): ids are printed in tables and named in commands, so
//! a session with any other id is one that cannot be read. A session the remote itself follows
//! on a third machine (its `machine` is not null) is left out: each machine's sessions come from
//! that machine's own link, and two Slates that follow each other must not echo each other's
//! sessions for ever. Pure: bytes in, values out.

use serde_json::Value;

use crate::limits;
use crate::model::{AgentKind, Session, SessionKey};

/// One line of `slate watch --json`, read.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// The whole live list; a remote sends one first, and again after it fell behind.
    Snapshot {
        sessions: Vec<Session>,
        /// Session objects that could not be read.
        skipped: usize,
        /// The remote's Slate version, when it says.
        version: Option<String>,
    },
    /// A session appeared or changed.
    Session(Box<Session>),
    /// A session left the remote's live list; the key as the remote names it (no machine).
    Removed(SessionKey),
    /// A line this build has no use for: a type it does not know, or a third machine's session.
    Ignored,
}

/// Why a line could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct WireError(pub String);

fn unreadable(what: impl std::fmt::Display) -> WireError {
    WireError(format!("a line that cannot be read: {what}"))
}

/// Reads one line of `slate watch --json`.
pub fn parse_line(line: &[u8]) -> Result<Line, WireError> {
    let value: Value = serde_json::from_slice(line).map_err(unreadable)?;
    let kind = value
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| unreadable("no `type`"))?;
    match kind {
        "snapshot" => {
            let (sessions, skipped) = sessions_of(&value)?;
            Ok(Line::Snapshot {
                sessions,
                skipped,
                version: value
                    .get("version")
                    .and_then(Value::as_str)
                    .map(|version| version.chars().take(40).collect()),
            })
        }
        "session" => {
            let object = value
                .get("session")
                .cloned()
                .ok_or_else(|| unreadable("a `session` line without its session"))?;
            match local_session(object)? {
                Some(session) => Ok(Line::Session(Box::new(session))),
                None => Ok(Line::Ignored),
            }
        }
        "removed" => {
            if value
                .get("machine")
                .is_some_and(|machine| !machine.is_null())
            {
                return Ok(Line::Ignored);
            }
            let agent = value
                .get("agent")
                .and_then(Value::as_str)
                .ok_or_else(|| unreadable("a `removed` line without its agent"))?;
            let agent = AgentKind::from_wire(agent).map_err(unreadable)?;
            let id = value
                .get("id")
                .and_then(Value::as_str)
                .filter(|id| !id.is_empty())
                .ok_or_else(|| unreadable("a `removed` line without its id"))?;
            limits::session_id(id).map_err(unreadable)?;
            Ok(Line::Removed(SessionKey::new(agent, id)))
        }
        _ => Ok(Line::Ignored),
    }
}

/// Reads the answer of `slate sessions --json`: its sessions, and how many could not be read.
pub fn parse_sessions(answer: &[u8]) -> Result<(Vec<Session>, usize), WireError> {
    let value: Value = serde_json::from_slice(answer).map_err(unreadable)?;
    sessions_of(&value)
}

/// The sessions of `{"sessions": […]}`, leaving out (and counting) those that cannot be read.
fn sessions_of(value: &Value) -> Result<(Vec<Session>, usize), WireError> {
    let objects = value
        .get("sessions")
        .and_then(Value::as_array)
        .ok_or_else(|| unreadable("no `sessions` list"))?;
    let mut sessions = Vec::with_capacity(objects.len());
    let mut skipped = 0;
    for object in objects {
        match local_session(object.clone()) {
            Ok(Some(session)) => sessions.push(session),
            Ok(None) => {}
            Err(_) => skipped += 1,
        }
    }
    Ok((sessions, skipped))
}

/// A session object the remote decided itself; `None` for one it follows on a third machine.
fn local_session(object: Value) -> Result<Option<Session>, WireError> {
    if object
        .get("machine")
        .is_some_and(|machine| !machine.is_null())
    {
        return Ok(None);
    }
    let session = Session::from_wire(object).map_err(unreadable)?;
    limits::session_id(session.id.as_str()).map_err(unreadable)?;
    Ok(Some(session))
}
