//! A copy of a running Slate's live list, kept from its event stream, for a process that follows
//! that Slate instead of running an engine of its own.
//!
//! [`read_event`] reads one server-sent event of `/sessions/live/stream` (`snapshot`, `session`,
//! `removed`) into what it [`Told`]; `slate watch` prints that, and a [`Mirror`] applies it and
//! answers with the same `live::Update`s the in-process live service broadcasts. A snapshot after
//! the first (the stream was reopened, or the server found this reader too far behind) is
//! compared with the list the mirror holds, so only real changes come out of it: a session that
//! turned to Needs you while the stream was down is one `Update::Session`, and one that left is
//! one `Update::Removed`. The desktop app's notifications and tray then behave the same whichever
//! engine they follow.
//!
//! This module is pure: it reads no socket and no clock. `mirror::follower` does the I/O: it
//! holds the connection, reopens it, and reads `/health` for the settings and the remotes.

pub mod follower;

use std::collections::HashMap;

use crate::client::ServerEvent;
use crate::live::Update;
use slate_core::model::{Session, SessionKey};
use slate_core::report;

/// What one event of the live stream says.
#[derive(Debug, Clone, PartialEq)]
pub enum Told {
    /// The whole live list (the first event of a stream, and after the reader fell behind).
    Snapshot(Vec<Session>),
    /// One change.
    Update(Update),
}

/// Reads one event of `/sessions/live/stream`. An event this build does not know, or whose data
/// does not read, is `None`: the stream goes on. An older server's sessions lack facets this one
/// has, and `Session::from_wire` fills them in; a session object that does not read is left out
/// of a snapshot.
pub fn read_event(event: &ServerEvent) -> Option<Told> {
    let data: serde_json::Value = serde_json::from_str(&event.data).ok()?;
    match event.event.as_str() {
        "snapshot" => Some(Told::Snapshot(
            data["sessions"]
                .as_array()
                .map(|sessions| {
                    sessions
                        .iter()
                        .filter_map(|session| Session::from_wire(session.clone()).ok())
                        .collect()
                })
                .unwrap_or_default(),
        )),
        "session" => Some(Told::Update(Update::Session {
            session: Box::new(Session::from_wire(data).ok()?),
        })),
        "removed" => Some(Told::Update(Update::Removed {
            agent: serde_json::from_value(data["agent"].clone()).ok()?,
            id: data["id"].as_str()?.to_string(),
            machine: serde_json::from_value(data["machine"].clone()).unwrap_or_default(),
        })),
        _ => None,
    }
}

/// The live list as the followed Slate last told it.
#[derive(Debug, Default, Clone)]
pub struct Mirror {
    sessions: HashMap<SessionKey, Session>,
}

impl Mirror {
    /// A mirror that holds `sessions` (a first snapshot), with nothing to tell about them.
    pub fn seeded(sessions: Vec<Session>) -> Mirror {
        Mirror {
            sessions: sessions
                .into_iter()
                .map(|session| (session.key(), session))
                .collect(),
        }
    }

    /// Applies what the stream told, and returns the changes it made to the list: an update is
    /// passed on as it came (a `removed` for a session the mirror does not hold is dropped); a
    /// snapshot becomes one `Update::Session` per session that is new or differs, and one
    /// `Update::Removed` per session it no longer lists.
    pub fn apply(&mut self, told: Told) -> Vec<Update> {
        match told {
            Told::Update(Update::Session { session }) => {
                self.sessions.insert(session.key(), (*session).clone());
                vec![Update::Session { session }]
            }
            Told::Update(Update::Removed { agent, id, machine }) => {
                let key = SessionKey::new(agent, id.as_str()).on(machine.clone());
                match self.sessions.remove(&key) {
                    Some(_) => vec![Update::Removed { agent, id, machine }],
                    None => Vec::new(),
                }
            }
            Told::Snapshot(sessions) => {
                let mut fresh = Mirror::seeded(sessions).sessions;
                let mut gone: Vec<&SessionKey> = self
                    .sessions
                    .keys()
                    .filter(|key| !fresh.contains_key(*key))
                    .collect();
                gone.sort();
                let mut changed: Vec<&Session> = fresh
                    .values()
                    .filter(|session| self.sessions.get(&session.key()) != Some(*session))
                    .collect();
                changed.sort_by_key(|session| session.key());
                let updates = gone
                    .into_iter()
                    .map(Update::removed)
                    .chain(changed.into_iter().map(|session| Update::Session {
                        session: Box::new(session.clone()),
                    }))
                    .collect();
                std::mem::swap(&mut self.sessions, &mut fresh);
                updates
            }
        }
    }

    /// The list, Needs you first (as `live::Handle::live_sessions` gives it).
    pub fn sessions(&self) -> Vec<Session> {
        let mut sessions: Vec<Session> = self.sessions.values().cloned().collect();
        report::sort_for_display(&mut sessions);
        sessions
    }
}
