//! How often each session's pane is read: every second while something may be about to need
//! the person, less often as an open call runs on with nothing new.
//!
//! A pane is read only while its session has an open tool call (`Tracker::terminals_wanted`),
//! and a dialog nearly always comes right after a record: the call written to the transcript,
//! or the result of the call before it. So a session is read every [`READ_EVERY`] while its
//! newest turn record is less than [`QUICK_FOR`] old, before its first reading, and whenever its
//! screen shows anything but the agent at work (a dialog, to see it leave when the person
//! answers at the terminal; an idle composer; a screen its grammar does not know); after that,
//! every 2 s, then 4 s, then every [`SLOWEST`] while the transcript stays quiet and the screen
//! says the agent works. A new record
//! brings the second back at once. Reading a tmux pane starts a `tmux` client (about 4 ms of CPU
//! on the machines of docs/performance.md), so a call that runs for minutes costs an eighth of
//! what it would at one read a second; the price is that a dialog drawn with no record before
//! it, deep into a quiet call, is seen up to [`SLOWEST`] late. Pure: time is an argument.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use slate_core::model::{SessionKey, Timestamp};

use super::READ_EVERY;

/// How long after a session's newest record its pane is read every second.
pub const QUICK_FOR: Duration = Duration::from_secs(15);

/// The longest a quiet session's pane goes unread.
pub const SLOWEST: Duration = Duration::from_secs(8);

/// The pace of each session whose pane is read.
#[derive(Debug, Default)]
pub struct Pace {
    sessions: HashMap<SessionKey, Paced>,
}

#[derive(Debug)]
struct Paced {
    /// The session's newest turn record, as the tracker last said.
    mark: Option<Timestamp>,
    /// When that mark was first seen here.
    since: Instant,
    /// When its pane was last sent to be read.
    sent: Option<Instant>,
    /// True when its last reading showed the agent at work, and nothing else.
    working: bool,
}

impl Pace {
    /// The sessions read now, with their newest records (`Tracker::terminals_marked`), at `now`:
    /// a session new here, or whose mark moved, is read every second again; one no longer read
    /// is forgotten.
    pub fn marks(&mut self, marks: &HashMap<SessionKey, Option<Timestamp>>, now: Instant) {
        self.sessions.retain(|key, _| marks.contains_key(key));
        for (key, mark) in marks {
            let paced = self.sessions.entry(key.clone()).or_insert(Paced {
                mark: *mark,
                since: now,
                sent: None,
                working: false,
            });
            if paced.mark != *mark {
                paced.mark = *mark;
                paced.since = now;
            }
        }
    }

    /// A reading of `key`'s pane came back, showing the agent at work or something else.
    pub fn shown(&mut self, key: &SessionKey, working: bool) {
        if let Some(paced) = self.sessions.get_mut(key) {
            paced.working = working;
        }
    }

    /// `key`'s pane was sent to be read at `now`.
    pub fn sent(&mut self, key: &SessionKey, now: Instant) {
        if let Some(paced) = self.sessions.get_mut(key) {
            paced.sent = Some(now);
        }
    }

    /// How long `key`'s pane goes between reads at `now`.
    pub fn every(&self, key: &SessionKey, now: Instant) -> Duration {
        let Some(paced) = self.sessions.get(key) else {
            return READ_EVERY;
        };
        if !paced.working {
            return READ_EVERY;
        }
        match now.saturating_duration_since(paced.since) {
            quiet if quiet < QUICK_FOR => READ_EVERY,
            quiet if quiet < QUICK_FOR * 2 => Duration::from_secs(2),
            quiet if quiet < QUICK_FOR * 4 => Duration::from_secs(4),
            _ => SLOWEST,
        }
    }

    /// When `key`'s pane is next due at `now`: at once if it was never sent, else its pace after
    /// the last send.
    pub fn due(&self, key: &SessionKey, now: Instant) -> Instant {
        match self.sessions.get(key).and_then(|paced| paced.sent) {
            Some(sent) => sent + self.every(key, now),
            None => now,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slate_core::model::AgentKind;

    fn key() -> SessionKey {
        SessionKey::new(AgentKind::CODEX, "paced-1")
    }

    fn marked(mark: i64) -> HashMap<SessionKey, Option<Timestamp>> {
        HashMap::from([(key(), Some(Timestamp::from_millis(mark)))])
    }

    /// A pace over one session marked at `start`, its screen showing the agent at work, read
    /// as the loop would for its first 100 s: by then at its slowest.
    fn slowed() -> (Pace, Instant) {
        let mut pace = Pace::default();
        let start = Instant::now();
        pace.marks(&marked(1), start);
        pace.shown(&key(), true);
        reads(&mut pace, start, 0, 100);
        (pace, start)
    }

    /// Reads as the loop would from `start` for `secs`, each time one is due; returns the
    /// seconds (from start) at which a read was sent.
    fn reads(pace: &mut Pace, start: Instant, from: u64, secs: u64) -> Vec<u64> {
        let mut sent = Vec::new();
        for tick in from * 10..(from + secs) * 10 {
            let now = start + Duration::from_millis(tick * 100);
            if pace.due(&key(), now) <= now {
                pace.sent(&key(), now);
                sent.push(tick / 10);
            }
        }
        sent
    }

    #[test]
    fn a_quiet_call_is_read_less_and_less_often_down_to_the_slowest() {
        let mut pace = Pace::default();
        let start = Instant::now();
        pace.marks(&marked(1), start);
        pace.shown(&key(), true);
        let sent = reads(&mut pace, start, 0, 120);
        // Every second for the first 15 s, then 2 s, 4 s and 8 s apart.
        assert_eq!(&sent[..15], (0..15).collect::<Vec<_>>().as_slice());
        let gaps: Vec<u64> = sent.windows(2).map(|pair| pair[1] - pair[0]).collect();
        assert!(gaps.iter().all(|gap| *gap <= SLOWEST.as_secs()), "{gaps:?}");
        assert_eq!(gaps.last(), Some(&SLOWEST.as_secs()), "{sent:?}");
        assert!(sent.len() < 40, "{} reads in 120 s: {sent:?}", sent.len());
    }

    #[test]
    fn a_new_record_or_a_dialog_brings_back_a_read_a_second() {
        let (mut pace, start) = slowed();
        let late = start + Duration::from_secs(100);
        assert_eq!(pace.every(&key(), late), SLOWEST);
        // The same mark again changes nothing; a newer one starts the quick period again, and
        // the pane is due within a second of it.
        pace.marks(&marked(1), late);
        assert_eq!(pace.every(&key(), late), SLOWEST);
        pace.marks(&marked(2), late);
        assert_eq!(pace.every(&key(), late), READ_EVERY);
        assert!(pace.due(&key(), late) <= late + READ_EVERY);
        // A dialog on screen (anything but the agent at work) keeps the pane read every second,
        // however quiet the transcript.
        let later = late + Duration::from_secs(300);
        pace.shown(&key(), false);
        assert_eq!(pace.every(&key(), later), READ_EVERY);
        pace.shown(&key(), true);
        assert_eq!(pace.every(&key(), later), SLOWEST);
    }

    #[test]
    fn a_session_no_longer_read_is_forgotten_and_starts_quick_when_read_again() {
        let (mut pace, start) = slowed();
        let late = start + Duration::from_secs(100);
        pace.marks(&HashMap::new(), late);
        assert_eq!(
            pace.due(&key(), late),
            late,
            "never sent since it came back"
        );
        pace.marks(&marked(1), late);
        assert_eq!(pace.every(&key(), late), READ_EVERY);
        assert_eq!(pace.due(&key(), late), late);
    }
}
