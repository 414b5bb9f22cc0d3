//! What a session's terminal shows, and the rules that read it (docs/states.md §3 rules 4, 5
//! and 6c).
//!
//! A terminal gives up to three signals: the titles the agent set (each with when it was seen),
//! when the terminal last drew anything, and what its screen shows. They come from two sources.
//! A hosted session's pseudo-terminal, which `slate run` owns, reports titles and draws, by
//! session or by the pid of the process it started (`merge`, `attach_hosted`), and its screen is
//! read through `slate run`'s control socket like a pane's. A terminal Slate
//! reads from outside (a tmux pane, a kitty window, a WezTerm pane: "sensed") gives its title and
//! what its screen shows at each read (`merge_sensed`); Slate does not see its draws between
//! reads. The rules do not read either source but a `Terminal`, a view of the signals that does
//! not say where they came from, so one set of rules decides both. What a title and a screen mean
//! for an agent are `agents::titles`' and `agents::screens`' grammars; the transcript's own
//! reading is `rules`'.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use super::evidence::Evidence;
use super::log::Log;
use super::reasons::{self, earliest, Outcome, Posture};
use super::vouch::Vouch;
use super::{Policy, SeenProcess, Sensed, Tracker};
use crate::agents::screens::{Dialog, DialogKind, ScreenKind, ScreenSeen};
use crate::agents::titles::{animates, classify_title, TitleKind};
use crate::agents::unread::UnreadRecord;
use crate::agents::CallKind;
use crate::model::{AgentKind, HostedSignals, Reason, ReasonCode, SessionKey, Status, Timestamp};

/// How many titles a hosted session keeps: enough to have seen the spinner that last moved.
const TITLES_KEPT: usize = 64;

/// Folds a new report into a hosted session's signals: titles are appended in time order
/// (a report may repeat titles already seen), the newest draw wins, and the history is bounded.
pub(super) fn merge(held: &mut Option<HostedSignals>, signals: HostedSignals) {
    let held = held.get_or_insert_with(HostedSignals::default);
    if signals.pid.is_some() {
        held.pid = signals.pid;
    }
    if signals.control.is_some() {
        held.control = signals.control;
    }
    for (at, title) in signals.titles {
        if held
            .titles
            .iter()
            .any(|(seen, text)| *seen == at && *text == title)
        {
            continue;
        }
        let index = held.titles.partition_point(|(seen, _)| *seen <= at);
        held.titles.insert(index, (at, title));
    }
    let excess = held.titles.len().saturating_sub(TITLES_KEPT);
    held.titles.drain(..excess);
    held.last_draw = held.last_draw.max(signals.last_draw);
}

/// What a terminal read from outside showed, over its reads: the titles, each kept from the read
/// that first saw it, and the screen's reading with the read that first saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct SensedSignals {
    titles: Vec<(Timestamp, String)>,
    screen: Option<(Timestamp, ScreenSeen)>,
    /// The dialog the last reading showed, with its options, for the session object.
    dialog: Option<Dialog>,
    /// Since when the readings have shown screens its grammar does not know, and whether that
    /// stay was counted.
    unknown: Option<(Timestamp, bool)>,
}

impl SensedSignals {
    /// The dialog the last reading showed, if it showed one.
    pub(super) fn dialog(&self) -> Option<&Dialog> {
        self.dialog.as_ref()
    }
}

/// How long a screen its agent's grammar does not know must stay, over two reads or more, before
/// it is counted as the session's unread: a screen caught while the agent redraws it, or on its
/// way out, is not a sign that its format changed.
pub const UNKNOWN_FOR: Duration = Duration::from_secs(5);

/// Folds one reading of a terminal read from outside into what is held for it; `None` forgets
/// it all. A title is kept when it differs from the last one, so the time kept is when it first
/// showed; the same holds for the screen's reading. Returns the redacted copy of a screen its
/// grammar does not know the first time such a screen has stayed [`UNKNOWN_FOR`], to be counted
/// once for that stay.
pub(super) fn merge_sensed(
    held: &mut Option<SensedSignals>,
    reading: Option<Sensed>,
) -> Option<UnreadRecord> {
    let Some(reading) = reading else {
        *held = None;
        return None;
    };
    let held = held.get_or_insert_with(SensedSignals::default);
    if let Some(title) = reading.title {
        if held.titles.last().is_none_or(|(_, last)| *last != title) {
            held.titles.push((reading.at, title));
        }
    }
    let excess = held.titles.len().saturating_sub(TITLES_KEPT);
    held.titles.drain(..excess);
    if held
        .screen
        .as_ref()
        .is_none_or(|(_, seen)| *seen != reading.screen)
    {
        held.screen = Some((reading.at, reading.screen));
    }
    held.dialog = reading.dialog;
    let Some(record) = reading.unread else {
        held.unknown = None;
        return None;
    };
    let (since, counted) = held.unknown.get_or_insert((reading.at, false));
    if *counted || since.elapsed_until(reading.at) < UNKNOWN_FOR {
        return None;
    }
    *counted = true;
    Some(record)
}

/// How many processes above the one that vouches may be the one `slate run` started.
const RELAUNCHES: usize = 4;

impl Tracker {
    /// Forgets the reports of hosted processes that were alive at the last scan and are missing
    /// from this one: they exited, and their signals must not follow a recycled pid.
    pub(super) fn forget_exited_hosts(&mut self, processes: &[SeenProcess]) {
        let before: HashSet<u32> = self.processes.iter().map(|p| p.info.pid).collect();
        let after: HashSet<u32> = processes.iter().map(|p| p.info.pid).collect();
        self.hosted_processes
            .retain(|pid, _| !before.contains(pid) || after.contains(pid));
    }

    /// Gives each session the hosted signals reported for the process that vouches for it, or
    /// for one of the processes it was relaunched from: `slate run` starts the CLI's first
    /// process, and Gemini CLI relaunches itself once in a child, Qwen Code twice. The search
    /// goes up through the agent's own processes, and one step past them (the parent of the
    /// first, which `slate run` may have started as a script).
    pub(super) fn attach_hosted(&mut self, vouches: &HashMap<SessionKey, Vouch>) {
        if self.hosted_processes.is_empty() {
            return;
        }
        let parents: HashMap<u32, Option<u32>> = self
            .processes
            .iter()
            .map(|process| (process.info.pid, process.info.ppid))
            .collect();
        for (key, vouch) in vouches {
            let mut pid = vouch.pid;
            let mut seen = HashSet::from([pid]);
            let mut signals = self.hosted_processes.get(&pid);
            // At most a few relaunches; a table whose parent links loop still ends.
            while signals.is_none() && seen.len() <= RELAUNCHES {
                let Some(Some(parent)) = parents.get(&pid).copied() else {
                    break;
                };
                if !seen.insert(parent) {
                    break;
                }
                signals = self.hosted_processes.get(&parent);
                pid = parent;
            }
            if let (Some(signals), Some(entry)) = (signals, self.entries.get_mut(key)) {
                entry.hosted = Some(signals.clone());
            }
        }
    }
}

/// The signals of a session's terminal, whatever reported them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Terminal<'a> {
    /// The titles seen, oldest first, each with when it was seen.
    titles: &'a [(Timestamp, String)],
    /// When the terminal last drew anything, where Slate sees every draw (a hosted terminal:
    /// `Some`, holding `None` before the first draw); `None` for a terminal read from outside.
    last_draw: Option<Option<Timestamp>>,
    /// What the screen showed at the last read, and since when.
    screen: Option<&'a (Timestamp, ScreenSeen)>,
}

impl<'a> From<&'a HostedSignals> for Terminal<'a> {
    fn from(signals: &'a HostedSignals) -> Terminal<'a> {
        Terminal {
            titles: &signals.titles,
            last_draw: Some(signals.last_draw),
            screen: None,
        }
    }
}

impl<'a> Terminal<'a> {
    /// When Slate last saw the terminal change: its newest title, its last draw where every draw
    /// is seen, or its screen's reading. A hook older than that is no longer the newest word
    /// (docs/states.md §3 rule 3a).
    pub(super) fn changed_at(&self) -> Option<Timestamp> {
        let title = self.titles.last().map(|(at, _)| *at);
        let draw = self.last_draw.flatten();
        let screen = self.screen.map(|(at, _)| *at);
        [title, draw, screen].into_iter().flatten().max()
    }

    /// A hosted terminal whose screen is also read (through `slate run`'s control socket): its
    /// own titles and draws, with the screen's reading.
    pub(super) fn hosted_with_screen(
        hosted: &'a HostedSignals,
        sensed: &'a SensedSignals,
    ) -> Terminal<'a> {
        Terminal {
            screen: sensed.screen.as_ref(),
            ..Terminal::from(hosted)
        }
    }
}

impl<'a> From<&'a SensedSignals> for Terminal<'a> {
    fn from(signals: &'a SensedSignals) -> Terminal<'a> {
        Terminal {
            titles: &signals.titles,
            last_draw: None,
            screen: signals.screen.as_ref(),
        }
    }
}

/// The current title of a terminal, read with its agent's grammar.
struct CurrentTitle {
    text: String,
    kind: TitleKind,
    /// When the title last changed: the first sighting of the trailing run of this title (for a
    /// blinking action-required title, of this kind).
    changed_at: Timestamp,
}

fn current_title(agent: AgentKind, titles: &[(Timestamp, String)]) -> Option<CurrentTitle> {
    let (at, text) = titles.last()?;
    let kind = classify_title(agent, text);
    let mut changed_at = *at;
    for (seen, earlier) in titles.iter().rev().skip(1) {
        let same = if kind == TitleKind::ActionRequired {
            classify_title(agent, earlier) == kind
        } else {
            earlier.trim_end() == text.trim_end()
        };
        if !same {
            break;
        }
        changed_at = *seen;
    }
    Some(CurrentTitle {
        text: text.trim_end().to_string(),
        kind,
        changed_at,
    })
}

/// What a terminal decides: a verdict (status, reason, since, deadline) that overrides the
/// transcript, or only a time at which it may start to.
#[derive(Default)]
pub(super) struct Reading {
    pub(super) verdict: Option<(Status, Reason, Timestamp, Option<Timestamp>)>,
    pub(super) deadline: Option<Timestamp>,
    pub(super) evidence: Vec<Evidence>,
}

/// Rules 4, 5 and 6c for a session whose terminal Slate can see. An action-required title, and a
/// dialog on screen, are Needs you at once; a spinner that moved within `title_moving` keeps the
/// session Working over the timing rules (never over a turn the transcript ended), and so does a
/// screen that shows the agent at work; an open tool call under a terminal that has drawn nothing
/// for `terminal_silence` is a prompt (only where Slate sees every draw: a terminal read from
/// outside is read for its screen instead); a static busy title keeps Working like a moving one;
/// and a title that was seen to move and then stopped for `title_moving` is Needs you
/// (`title_stopped`) unless the transcript names a more specific reason. An idle or unknown screen
/// decides nothing.
pub(super) fn rules(
    agent: AgentKind,
    terminal: Terminal<'_>,
    log: &Log,
    posture: &Posture,
    now: Timestamp,
    policy: &Policy,
) -> Reading {
    let mut reading = Reading::default();
    let current = current_title(agent, terminal.titles);
    let transcript_decides = matches!(posture.outcome, Outcome::Waiting(_)) && !posture.timed;
    let keep_working = |reason: Reason, since: Timestamp, until: Option<Timestamp>| {
        let (reason, since, deadline) = match &posture.outcome {
            Outcome::Working(own) => (
                own.clone(),
                posture.since,
                earliest(posture.deadline, until),
            ),
            Outcome::Waiting(_) => (reason, since, until),
        };
        Some((Status::Working, reason, since, deadline))
    };
    if let Some(title) = &current {
        reading.evidence.push(Evidence::Title {
            text: title.text.clone(),
            kind: title.kind,
            since: title.changed_at,
        });
    }
    // The dialog on screen says more than a title that only asks for action, so it goes first.
    if let Some((since, seen)) = terminal.screen {
        reading.evidence.push(Evidence::Screen {
            kind: seen.kind,
            summary: seen.summary.clone(),
            since: *since,
        });
        let dialog = match seen.kind {
            ScreenKind::Permission => Some(DialogKind::Permission),
            ScreenKind::Question => Some(DialogKind::Question),
            ScreenKind::Plan => Some(DialogKind::Plan),
            ScreenKind::Idle | ScreenKind::Working | ScreenKind::Unknown => None,
        };
        if let Some(dialog) = dialog {
            let reason = reasons::shown(dialog, seen.summary.as_deref(), log);
            reading.verdict = Some((Status::Waiting, reason, *since, None));
            return reading;
        }
    }
    if let Some(title) = &current {
        if title.kind == TitleKind::ActionRequired {
            let reason = match log.newest_open_call() {
                Some(call) if call.kind == CallKind::Question => reasons::question(Some(call)),
                _ => reasons::permission(log),
            };
            reading.verdict = Some((Status::Waiting, reason, title.changed_at, None));
            return reading;
        }
        let moving_until = title.changed_at.plus(policy.title_moving);
        if title.kind == TitleKind::Frame && now < moving_until {
            reading.deadline = Some(moving_until);
            if !transcript_decides {
                let reason = Reason::new(ReasonCode::TitleMoving, "The terminal title is moving");
                reading.verdict = keep_working(reason, title.changed_at, Some(moving_until));
            }
            return reading;
        }
    }
    if let Some((since, seen)) = terminal.screen {
        if seen.kind == ScreenKind::Working && !transcript_decides {
            let reason = Reason::new(
                ReasonCode::ToolRunning,
                "The terminal shows the agent at work",
            );
            let deadline = reading.deadline;
            reading.verdict = keep_working(reason, *since, deadline);
            return reading;
        }
    }
    if let (Some(call), Some(last_draw)) = (log.newest_open_call(), terminal.last_draw) {
        let silent_from = last_draw.map_or(call.at, |drawn| drawn.max(call.at));
        let prompt_at = silent_from.plus(policy.terminal_silence);
        if now >= prompt_at {
            reading
                .evidence
                .push(Evidence::TerminalSilent { since: silent_from });
            let reason = reasons::dialog(call).unwrap_or_else(|| reasons::permission(log));
            reading.verdict = Some((Status::Waiting, reason, silent_from, None));
            return reading;
        }
        reading.deadline = Some(prompt_at);
    }
    let Some(title) = current else {
        return reading;
    };
    if title.kind == TitleKind::Busy && !transcript_decides {
        let reason = Reason::new(
            ReasonCode::TitleMoving,
            "The terminal title says the agent is working",
        );
        reading.verdict = keep_working(reason, title.changed_at, reading.deadline);
        return reading;
    }
    // Only a title seen to move counts: a static title says nothing about stopping.
    let seen_moving = animates(agent)
        && terminal
            .titles
            .iter()
            .any(|(_, text)| classify_title(agent, text) == TitleKind::Frame);
    if !seen_moving {
        return reading;
    }
    let stopped_at = title.changed_at.plus(policy.title_moving);
    if now < stopped_at {
        reading.deadline = earliest(reading.deadline, Some(stopped_at));
        return reading;
    }
    let specific =
        matches!(&posture.outcome, Outcome::Waiting(reason) if reason.code != ReasonCode::Unknown);
    if !specific {
        reading.evidence.push(Evidence::TitleStopped {
            at: title.changed_at,
        });
        let reason = Reason::new(
            ReasonCode::TitleStopped,
            "The terminal title stopped moving",
        );
        reading.verdict = Some((Status::Waiting, reason, title.changed_at, None));
    }
    reading
}
