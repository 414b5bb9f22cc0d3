//! The wire field `unread` of a session: the records of its files that its agent's parser does
//! not know (`agents::unread`), counted by what they were, with a few redacted copies. A session
//! that has any reads "the format may have changed" in `slate show`; its state comes from the
//! records Slate knows, never from these.

use serde::{Deserialize, Serialize};

/// How many kinds of unread record a session names; more are counted under one more name.
pub const KINDS: usize = 16;
/// How many redacted copies a session keeps: the first record of each of the first kinds.
pub const SAMPLES: usize = 5;
/// The name the kinds past [`KINDS`] are counted under.
pub const OTHER_KINDS: &str = "(other kinds)";

/// The records of a session that Slate could not read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnreadRecords {
    /// How many there were.
    pub records: u64,
    /// How many of each kind, in the order each kind was first met.
    pub kinds: Vec<UnreadKind>,
    /// Redacted copies (keys and record types kept, text replaced), the first of each kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnreadKind {
    pub what: String,
    pub records: u64,
}

impl UnreadRecords {
    /// Counts one more unread record: `what` it was, and its redacted copy.
    pub fn count(&mut self, what: &str, sample: &str) {
        self.records = self.records.saturating_add(1);
        if let Some(kind) = self.kinds.iter_mut().find(|kind| kind.what == what) {
            kind.records = kind.records.saturating_add(1);
            return;
        }
        let what = if self.kinds.len() < KINDS {
            what
        } else {
            OTHER_KINDS
        };
        match self.kinds.iter_mut().find(|kind| kind.what == what) {
            Some(kind) => kind.records = kind.records.saturating_add(1),
            None => {
                self.kinds.push(UnreadKind {
                    what: what.to_owned(),
                    records: 1,
                });
                if self.samples.len() < SAMPLES {
                    self.samples.push(sample.to_owned());
                }
            }
        }
    }

    /// The sentence `slate show` prints: how many, of which kinds.
    pub fn summary(&self) -> String {
        let kinds: Vec<String> = self
            .kinds
            .iter()
            .map(|kind| format!("{} ×{}", kind.what, kind.records))
            .collect();
        let records = if self.records == 1 {
            "record"
        } else {
            "records"
        };
        format!(
            "its format may have changed: {} {records} Slate could not read ({}); its state \
             comes from the records Slate knows",
            self.records,
            kinds.join(", ")
        )
    }
}
