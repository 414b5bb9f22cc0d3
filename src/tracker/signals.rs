//! What a session's terminal shows, and the rules that read it (docs/states.md §3 rules 4, 5
//! and 6c).
//!
//! A terminal gives two signals: the titles the agent set (each with when it was seen) and when
//! the terminal last drew anything. Today they come from hosted sessions, whose pseudo-terminal
//! `slate run` owns and reports, by session or by the pid of the process it started; this module
//! keeps those reports (`merge`, `attach_hosted`). The rules do not read the reports themselves
//! but a `Terminal`, a view of the two signals that does not say where they came from, so a
//! second source of the same signals (panes sensed in tmux, kitty or WezTerm) can be read by the
//! same rules. What a title means for an agent is `agents::titles`' grammar; the transcript's
//! own reading is `rules`'.

use std::collections::{HashMap, HashSet};

use super::evidence::Evidence;
use super::log::Log;
use super::rules::{self, earliest, Outcome, Posture};
use super::vouch::Vouch;
use super::{Policy, SeenProcess, Tracker};
use crate::agents::titles::{animates, classify_title, TitleKind};
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

impl Tracker {
    /// Forgets the reports of hosted processes that were alive at the last scan and are missing
    /// from this one: they exited, and their signals must not follow a recycled pid.
    pub(super) fn forget_exited_hosts(&mut self, processes: &[SeenProcess]) {
        let before: HashSet<u32> = self.processes.iter().map(|p| p.info.pid).collect();
        let after: HashSet<u32> = processes.iter().map(|p| p.info.pid).collect();
        self.hosted_processes
            .retain(|pid, _| !before.contains(pid) || after.contains(pid));
    }

    /// Gives each session the hosted signals reported for the process that vouches for it (or
    /// for that process's parent: Gemini relaunches itself in a child process).
    pub(super) fn attach_hosted(&mut self, vouches: &HashMap<SessionKey, Vouch>) {
        if self.hosted_processes.is_empty() {
            return;
        }
        for (key, vouch) in vouches {
            let parent = self
                .processes
                .iter()
                .find(|process| process.info.pid == vouch.pid)
                .and_then(|process| process.info.ppid);
            let signals = self
                .hosted_processes
                .get(&vouch.pid)
                .or_else(|| parent.and_then(|ppid| self.hosted_processes.get(&ppid)));
            if let (Some(signals), Some(entry)) = (signals, self.entries.get_mut(key)) {
                entry.hosted = Some(signals.clone());
            }
        }
    }
}

/// The two signals of a session's terminal, whatever reported them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Terminal<'a> {
    /// The titles seen, oldest first, each with when it was seen.
    titles: &'a [(Timestamp, String)],
    /// When the terminal last drew anything.
    last_draw: Option<Timestamp>,
}

impl<'a> From<&'a HostedSignals> for Terminal<'a> {
    fn from(signals: &'a HostedSignals) -> Terminal<'a> {
        Terminal {
            titles: &signals.titles,
            last_draw: signals.last_draw,
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

/// Rules 4, 5 and 6c for a session whose terminal Slate can see. An action-required title is
/// Needs you at once; a spinner that moved within `title_moving` keeps the session Working over
/// the timing rules (never over a turn the transcript ended); an open tool call under a terminal
/// that has drawn nothing for `terminal_silence` is a prompt; a static busy title keeps Working
/// like a moving one; and a title that was seen to move and then stopped for `title_moving` is
/// Needs you (`title_stopped`) unless the transcript names a more specific reason.
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
        if title.kind == TitleKind::ActionRequired {
            let reason = match log.newest_open_call() {
                Some(call) if call.kind == CallKind::Question => rules::question(Some(call)),
                _ => rules::permission(log),
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
    if let Some(call) = log.newest_open_call() {
        let silent_from = terminal
            .last_draw
            .map_or(call.at, |drawn| drawn.max(call.at));
        let prompt_at = silent_from.plus(policy.terminal_silence);
        if now >= prompt_at {
            reading
                .evidence
                .push(Evidence::TerminalSilent { since: silent_from });
            let reason = rules::dialog(call).unwrap_or_else(|| rules::permission(log));
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
