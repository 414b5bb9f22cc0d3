//! Which agent CLI a session belongs to: [`AgentKind`], a small `Copy` value that points at the
//! agent's description.
//!
//! The model names no agent and imports nothing of `agents`, which builds on it: it holds the
//! description behind [`Described`], the part of it the model reads (its names). `agents` adds the
//! built-in kinds (`AgentKind::CLAUDE_CODE`, …), reading a kind from its wire id, and the way back
//! from a kind to its whole description (`AgentKind::description`).

use std::any::Any;
use std::fmt;

use serde::Serialize;

/// What the model reads of an agent's description (`agents::Description`, the one
/// implementation): its names. `Any` lets `agents` find the whole description again.
pub trait Described: Any + Sync {
    /// The wire id (`claude-code`).
    fn id(&self) -> &'static str;
    /// The short name a person reads (`Claude`).
    fn name(&self) -> &'static str;
}

/// An agent CLI: one of the built-in ones (`agents::BUILT_IN`), one a test registers through its
/// own description, or one a newer Slate named on the wire that this one does not know.
///
/// It is a small `Copy` value that points at the agent's description, so the agent's names and
/// grammars are one step away wherever a session is. Two kinds are equal when their wire ids are,
/// and they sort by wire id. On the wire it is the id (`claude-code`, `codex`, `cursor-agent`,
/// `opencode`, `gemini-cli`; docs/states.md §4). Reading an id this build does not know keeps it
/// (up to [`AgentKind::FOREIGN_MAX`] bytes) as a foreign agent with no description, so a session
/// from a newer Slate is shown rather than refused.
#[derive(Clone, Copy)]
pub struct AgentKind(Kind);

#[derive(Clone, Copy)]
enum Kind {
    Known(&'static dyn Described),
    Foreign {
        len: u8,
        bytes: [u8; AgentKind::FOREIGN_MAX],
    },
}

impl AgentKind {
    /// The longest wire id of an agent without a description that is kept. It keeps an
    /// `AgentKind` (and so every `SessionKey`) at 24 bytes, the size of the pointer to a
    /// description beside its tag; the built-in ids are at most 12.
    pub const FOREIGN_MAX: usize = 14;

    /// The agent a description describes.
    pub const fn of(description: &'static dyn Described) -> AgentKind {
        AgentKind(Kind::Known(description))
    }

    /// An agent only named on the wire, with no description: `name` kept whole when it is a
    /// plausible id (1 to [`AgentKind::FOREIGN_MAX`] printable ASCII characters).
    pub fn foreign(name: &str) -> Result<AgentKind, ForeignAgentError> {
        let fits = !name.is_empty()
            && name.len() <= AgentKind::FOREIGN_MAX
            && name.bytes().all(|byte| byte.is_ascii_graphic());
        if !fits {
            return Err(ForeignAgentError(name.chars().take(40).collect()));
        }
        let mut bytes = [0; AgentKind::FOREIGN_MAX];
        bytes[..name.len()].copy_from_slice(name.as_bytes());
        Ok(AgentKind(Kind::Foreign {
            len: name.len() as u8,
            bytes,
        }))
    }

    /// The wire name, as used in JSON and on the command line.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Kind::Known(description) => description.id(),
            // Only ever filled from a `&str`, whole, so the bytes are UTF-8.
            Kind::Foreign { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
        }
    }

    /// The name a person reads in a table or a notification; a foreign agent's wire id.
    pub fn display_name(&self) -> &str {
        match &self.0 {
            Kind::Known(description) => description.name(),
            Kind::Foreign { .. } => self.as_str(),
        }
    }

    /// The description behind this kind, as the model sees it; `None` for one only named on the
    /// wire.
    pub fn described(self) -> Option<&'static dyn Described> {
        match self.0 {
            Kind::Known(description) => Some(description),
            Kind::Foreign { .. } => None,
        }
    }
}

/// An agent id on the wire that is neither known nor a plausible id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an agent id: {0:?} (at most 14 printable ASCII characters)")]
pub struct ForeignAgentError(String);

impl PartialEq for AgentKind {
    fn eq(&self, other: &AgentKind) -> bool {
        match (self.0, other.0) {
            (Kind::Known(one), Kind::Known(two)) if std::ptr::addr_eq(one, two) => true,
            _ => self.as_str() == other.as_str(),
        }
    }
}

impl Eq for AgentKind {}

impl std::hash::Hash for AgentKind {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialOrd for AgentKind {
    fn partial_cmp(&self, other: &AgentKind) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for AgentKind {
    fn cmp(&self, other: &AgentKind) -> std::cmp::Ordering {
        match (self.0, other.0) {
            (Kind::Known(one), Kind::Known(two)) if std::ptr::addr_eq(one, two) => {
                std::cmp::Ordering::Equal
            }
            _ => self.as_str().cmp(other.as_str()),
        }
    }
}

impl fmt::Debug for AgentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AgentKind({:?})", self.as_str())
    }
}

impl fmt::Display for AgentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for AgentKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}
