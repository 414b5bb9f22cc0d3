//! Each session's usage totals (`usage`, schema version 7), so a closed session's tokens and cost
//! stay, and a day's total survives a restart, after its transcript is gone or the session has
//! left the live list. A row is the session's latest wire `SessionUsage`, as JSON, with the time
//! of its last activity and its project: what `slate usage` sums beside the sessions it reads.

use rusqlite::params;

use super::decode::decode_key;
use super::{Store, StoreError};
use slate_core::model::{SessionKey, Timestamp};
use slate_core::usage::SessionUsage;

/// One session's stored totals.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredUsage {
    pub key: SessionKey,
    pub project: Option<String>,
    /// The session's last activity when it was recorded.
    pub at: Timestamp,
    pub usage: SessionUsage,
}

impl Store {
    /// Records sessions' latest totals, one row per session, replacing what was there.
    pub fn record_usage(&self, rows: &[StoredUsage]) -> Result<(), StoreError> {
        if rows.is_empty() {
            return Ok(());
        }
        let about = "record usage";
        let tx = self.begin(about)?;
        for row in rows {
            let usage = serde_json::to_string(&row.usage).unwrap_or_default();
            tx.execute(
                "INSERT INTO usage (agent, session_id, at_ms, project, usage)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (agent, session_id) DO UPDATE SET
                   at_ms = excluded.at_ms, project = excluded.project, usage = excluded.usage",
                params![
                    row.key.agent.as_str(),
                    row.key.id.as_str(),
                    row.at.millis(),
                    row.project,
                    usage
                ],
            )
            .map_err(|source| self.fail(about, source))?;
        }
        tx.commit().map_err(|source| self.fail(about, source))
    }

    /// Every session's stored totals. A row a newer Slate wrote in a shape this one cannot read
    /// is left out, never failing the read.
    pub fn usages(&self) -> Result<Vec<StoredUsage>, StoreError> {
        let rows = self.rows(
            "read usage",
            "SELECT agent, session_id, at_ms, project, usage FROM usage
             ORDER BY at_ms, agent, session_id",
            [],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, i64>(2)?,
                    row.get::<_, Option<String>>(3)?,
                    row.get::<_, String>(4)?,
                ))
            },
        )?;
        let mut out = Vec::new();
        for (agent, id, at_ms, project, usage) in rows {
            let Ok(key) = decode_key("usage", &agent, id) else {
                continue;
            };
            let Ok(usage) = serde_json::from_str::<SessionUsage>(&usage) else {
                continue;
            };
            out.push(StoredUsage {
                key,
                project,
                at: Timestamp::from_millis(at_ms),
                usage,
            });
        }
        Ok(out)
    }
}
