//! The sessions the person muted (`slate mute`, docs/states.md §4): a row of `mutes` is a mute.

use rusqlite::params;

use super::decode::decode_key;
use super::{Store, StoreError};
use slate_core::model::{SessionKey, Timestamp};

impl Store {
    /// Mutes the session (`muted`) or unmutes it: a muted session never notifies.
    pub fn set_muted(
        &self,
        key: &SessionKey,
        muted: bool,
        at: Timestamp,
    ) -> Result<(), StoreError> {
        let (agent, id) = (key.agent.as_str(), key.id.as_str());
        let done = if muted {
            self.conn.execute(
                "INSERT INTO mutes (agent, session_id, set_at_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT (agent, session_id) DO NOTHING",
                params![agent, id, at.millis()],
            )
        } else {
            self.conn.execute(
                "DELETE FROM mutes WHERE agent = ?1 AND session_id = ?2",
                params![agent, id],
            )
        };
        done.map(drop).map_err(|source| {
            self.fail(
                if muted {
                    "mute a session"
                } else {
                    "unmute a session"
                },
                source,
            )
        })
    }

    /// Every muted session, for the engine to restore at start.
    pub fn mutes(&self) -> Result<Vec<SessionKey>, StoreError> {
        let rows = self.rows(
            "read mutes",
            "SELECT agent, session_id FROM mutes ORDER BY agent, session_id",
            [],
            |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)),
        )?;
        rows.into_iter()
            .map(|(agent, session_id)| decode_key("mutes", &agent, session_id))
            .collect()
    }
}
