//! Reading back what the store wrote: statuses, reason codes, intents, item states and session
//! keys in their wire spelling, with what a newer Slate may have written read as unknown rather
//! than refused; and the key an answer is filed under.

use super::StoreError;
use slate_core::model::{
    AgentKind, Awaiting, IntentState, ItemStatus, ReasonCode, SessionKey, Status,
};

/// Reads a value the store wrote with its snake_case wire spelling (a status, an intent state);
/// any other text is a decode error naming where it was found.
pub(super) fn decode_spelling<T: serde::de::DeserializeOwned>(
    table: &'static str,
    column: &'static str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_value(serde_json::Value::String(text.to_owned())).map_err(|_| {
        StoreError::Decode {
            table,
            column,
            value: text.to_owned(),
        }
    })
}

pub(super) fn decode_status(text: &str) -> Result<Status, StoreError> {
    decode_spelling("transitions", "status", text)
}

/// A code this build does not know was written by a newer Slate; it reads as `unknown` rather
/// than making the whole history unreadable.
pub(super) fn decode_reason_code(text: &str) -> ReasonCode {
    serde_json::from_value(serde_json::Value::String(text.to_owned()))
        .unwrap_or(ReasonCode::Unknown)
}

pub(super) fn intent_state_str(state: IntentState) -> &'static str {
    match state {
        IntentState::None => "none",
        IntentState::Parked => "parked",
        IntentState::Awaiting => "awaiting",
    }
}

pub(super) fn decode_intent_state(text: &str) -> Result<IntentState, StoreError> {
    decode_spelling("intents", "state", text)
}

/// An item status this build does not know (written by hand, or by a newer Slate) reads as
/// `blocked`: the item then waits for direction rather than passing for ready or done.
pub(super) fn decode_item_status(text: &str) -> ItemStatus {
    ItemStatus::parse(text).unwrap_or(ItemStatus::Blocked)
}

/// An `awaiting_who` this build cannot read (an older Slate's API took any text) reads as an
/// intent that names no one: the session still shows as awaiting, and the row is kept as it is.
pub(super) fn decode_awaiting(text: Option<String>) -> Option<Awaiting> {
    text.and_then(|text| text.parse().ok())
}

pub(super) fn decode_key(
    table: &'static str,
    agent: &str,
    session_id: String,
) -> Result<SessionKey, StoreError> {
    let agent = AgentKind::parse(agent).ok_or_else(|| StoreError::Decode {
        table,
        column: "agent",
        value: agent.to_owned(),
    })?;
    Ok(SessionKey::new(agent, session_id))
}

/// The session an answer is filed under: its id, or `MACHINE:ID` for a session on a remote
/// machine whose answer was forwarded there, so it never mixes with a local session's.
pub(super) fn answer_session(key: &SessionKey) -> String {
    key.reference()
}
