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

/// One kind of unread record or screen, and how many of it there were.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnreadKind {
    /// What it was, as [`UnreadKind::shown`] allows it to be shown.
    pub what: String,
    pub records: u64,
}

/// The longest name (a key or a record type) a redacted copy keeps, in characters.
pub const NAME_CHARS: usize = 32;
/// The most digits a kept name holds.
const NAME_DIGITS: usize = 4;
/// The longest word of a kept name, in characters: a part between `_`, `-` and `.`, or one hump
/// of a camelCase name.
const NAME_WORD: usize = 16;

impl UnreadKind {
    /// What a screen its agent's grammar does not know is counted as.
    pub const SCREEN: &'static str = "screen its grammar does not know";
    /// What is shown for a kind whose name does not read as one Slate would write.
    pub const NOT_SHOWN: &'static str = "record of a kind whose name is not shown";

    /// True when `text` may be shown as it is in a copy meant for a public bug report: it reads
    /// as a name a program gives a key or a record type (`type`, `sessionId`,
    /// `tool.execution_start`, `response_item`, `x86_64`), never as a credential, an address, a
    /// path or a number. The allow-list:
    /// - 1 to [`NAME_CHARS`] ASCII letters, digits, `_`, `-` and `.`, starting with a lower-case
    ///   letter: no `/`, `@`, `:`, space or quote, so no path, e-mail, URL, host and port, and
    ///   none of the long tokens services issue (`sk-…`, `ghp_…`, `xoxb-…` are longer);
    /// - an upper-case letter only to start a camelCase hump, so followed by a lower-case letter:
    ///   no all-capitals key id (`AKIA…`) and no mixed-case random token, whose capitals fall
    ///   anywhere;
    /// - at most [`NAME_DIGITS`] digits in all: no card, phone or account number, no hex digest;
    /// - no word longer than [`NAME_WORD`]: no long run of letters.
    ///
    /// A short lower-case secret cannot be told from a name by its shape; the ones services issue
    /// are longer or mix cases and digits, and fail.
    pub fn is_name(text: &str) -> bool {
        let chars: Vec<char> = text.chars().collect();
        if chars.is_empty() || chars.len() > NAME_CHARS || !chars[0].is_ascii_lowercase() {
            return false;
        }
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
        if !chars.iter().all(|&c| allowed(c)) {
            return false;
        }
        let humps_only = chars.iter().enumerate().all(|(at, c)| {
            !c.is_ascii_uppercase() || chars.get(at + 1).is_some_and(char::is_ascii_lowercase)
        });
        let digits = chars.iter().filter(|c| c.is_ascii_digit()).count();
        let mut word = 0;
        let mut longest = 0;
        for &c in &chars {
            word = match c {
                '_' | '-' | '.' => 0,
                c if c.is_ascii_uppercase() => 1,
                _ => word + 1,
            };
            longest = longest.max(word);
        }
        humps_only && digits <= NAME_DIGITS && longest <= NAME_WORD
    }

    /// `what` as it may be shown: a name Slate writes for a kind (`type "turn-ledger"`, `record
    /// with no type`, `part type of JSON number`, `type <text, 40 chars>`, a screen) whose every
    /// part passes [`UnreadKind::is_name`], or else [`UnreadKind::NOT_SHOWN`]. Applied to every
    /// kind printed, so a name from an older Slate's count is held to the same rule.
    pub fn shown(what: &str) -> String {
        if [UnreadKind::SCREEN, UnreadKind::NOT_SHOWN, OTHER_KINDS].contains(&what) {
            return what.to_owned();
        }
        let words = |key: &str| {
            !key.is_empty() && key.split(' ').all(UnreadKind::is_name) && key.len() <= NAME_CHARS
        };
        let fine = if let Some(key) = what.strip_prefix("record with no ") {
            words(key)
        } else if let Some((key, kind)) = what.rsplit_once(" of JSON ") {
            words(key) && ["null", "boolean", "number", "string", "array", "object"].contains(&kind)
        } else if let Some((key, length)) = what.split_once(" <text, ") {
            words(key) && is_count(length.strip_suffix(" chars>").unwrap_or("x"))
        } else if let Some((key, name)) = what.split_once(" \"") {
            words(key) && name.strip_suffix('"').is_some_and(UnreadKind::is_name)
        } else {
            false
        };
        if fine {
            what.to_owned()
        } else {
            UnreadKind::NOT_SHOWN.to_owned()
        }
    }
}

/// A count as redaction writes it: 1 to 7 digits.
fn is_count(text: &str) -> bool {
    (1..=7).contains(&text.len()) && text.chars().all(|c| c.is_ascii_digit())
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
            .map(|kind| format!("{} ×{}", UnreadKind::shown(&kind.what), kind.records))
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
