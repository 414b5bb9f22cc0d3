//! The wire field `unread` of a session: the records of its files that its agent's parser does
//! not know, and the screens of its terminal that its agent's grammar does not know
//! (`agents::unread`), counted by what they were, with a few redacted copies. A session that has
//! any reads "the format may have changed" in `slate show`; its state comes from what Slate can
//! read, never from these.

use serde::{Deserialize, Serialize};

/// How many kinds of unread record a session names; more are counted under one more name.
pub const KINDS: usize = 16;
/// How many redacted copies a session keeps: the first record of each of the first kinds.
pub const SAMPLES: usize = 5;
/// The name the kinds past [`KINDS`] are counted under.
pub const OTHER_KINDS: &str = "(other kinds)";

/// The records and screens of a session that Slate could not read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnreadRecords {
    /// How many records there were.
    pub records: u64,
    /// How many screens there were: each screen its grammar did not know that stayed on the
    /// terminal a while, counted once for its stay.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub screens: u64,
    /// How many of each kind, in the order each kind was first met.
    pub kinds: Vec<UnreadKind>,
    /// Redacted copies, the first of each kind: a record's keys and record types with its text
    /// replaced, a screen's frames and marks with its letters replaced (`agents::unread`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnreadKind {
    pub what: String,
    pub records: u64,
}

impl UnreadRecords {
    /// True when nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.records == 0 && self.screens == 0
    }

    /// Counts one more unread record: `what` it was, and its redacted copy.
    pub fn count(&mut self, what: &str, sample: &str) {
        self.records = self.records.saturating_add(1);
        self.tally(what, sample);
    }

    /// Counts one more unread screen: `what` it was, and its redacted copy.
    pub fn count_screen(&mut self, what: &str, sample: &str) {
        self.screens = self.screens.saturating_add(1);
        self.tally(what, sample);
    }

    /// Counts one more of the kind `what`, keeping its copy when it is the first of a kind.
    fn tally(&mut self, what: &str, sample: &str) {
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

    /// "3 records", "1 screen", "2 records and 1 screen": what was counted, for people.
    pub fn counted(records: u64, screens: u64) -> String {
        let plural = |count: u64, one: &str| match count {
            1 => format!("1 {one}"),
            _ => format!("{count} {one}s"),
        };
        match (records, screens) {
            (_, 0) => plural(records, "record"),
            (0, _) => plural(screens, "screen"),
            _ => format!(
                "{} and {}",
                plural(records, "record"),
                plural(screens, "screen")
            ),
        }
    }

    /// The sentence `slate show` prints: how many, of which kinds.
    pub fn summary(&self) -> String {
        let kinds: Vec<String> = self
            .kinds
            .iter()
            .map(|kind| format!("{} ×{}", kind.what, kind.records))
            .collect();
        format!(
            "its format may have changed: {} Slate could not read ({}); its state comes from \
             what Slate knows",
            UnreadRecords::counted(self.records, self.screens),
            kinds.join(", ")
        )
    }
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}
