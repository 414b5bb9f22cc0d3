//! The state rules of docs/states.md §3, applied in their order, and the one builder of each
//! reason.
//!
//! `Tracker::rules` walks the rules for one session: closed (rule 1), what the agent's listing
//! says (rules 2–3), what its terminal shows (rules 4, 5 and 6c, read in `signals`), then what
//! the transcript alone says (rules 6–7, `posture`). The first rule that decides returns a
//! `Verdict`; every fact looked at on the way is pushed as `Evidence`. Each reason a rule can
//! give is built by one function in `reasons`, so the same situation reads the same whichever
//! rule found it. The facets beside the status are `facets`' business.

use serde_json::{json, Value};

use super::evidence::Evidence;
use super::hooks;
use super::log::Log;
use super::reasons::{
    dialog, earliest, end_stamp, is_menu, known_waiting_for, model_answering, new_session,
    permission, print_finished, turn_finished, waiting_reason, ListedWait, Outcome, Posture,
};
use super::signals::{self, Terminal};
use super::vouch::{Vouch, VouchKind};
use super::{Entry, Policy, Tracker};
use crate::agents::unread::UnreadRecord;
use crate::agents::{CallKind, RecordKind};
use crate::model::{
    AgentKind, ListedStatus, Listing, ListingEntry, Presence, Reason, ReasonCode, SessionKey,
    Status, Timestamp,
};

/// What the rules decided, before it is dressed as a session object.
pub(super) struct Verdict {
    pub(super) status: Status,
    pub(super) reason: Reason,
    pub(super) presence: Presence,
    pub(super) since: Timestamp,
    pub(super) deadline: Option<Timestamp>,
}

fn verdict(
    status: Status,
    reason: Reason,
    presence: Presence,
    since: Timestamp,
    deadline: Option<Timestamp>,
) -> Verdict {
    Verdict {
        status,
        reason,
        presence,
        since,
        deadline,
    }
}

/// A Needs-you verdict, except for print-mode runs, which never wait: their turn's end is the
/// session's end.
fn finish(log: &Log, reason: Reason, since: Timestamp, deadline: Option<Timestamp>) -> Verdict {
    if log.print_mode && reason.code != ReasonCode::Question {
        return verdict(
            Status::Ended,
            print_finished(),
            Presence::Ended,
            since,
            None,
        );
    }
    verdict(Status::Waiting, reason, Presence::Present, since, deadline)
}

impl Tracker {
    /// docs/states.md §3, in priority order (`rules_in_order`). While the agent's listing says
    /// the person has their own menu open (Claude Code's `dialog open`), the session keeps what
    /// it had: the later rules decide, and where they give the status and reason it had, it keeps
    /// the time it had them since, so the menu makes no change at all.
    pub(super) fn rules(
        &self,
        key: &SessionKey,
        entry: &Entry,
        vouch: Option<Vouch>,
        now: Timestamp,
        evidence: &mut Vec<Evidence>,
    ) -> Verdict {
        let mut verdict = self.rules_in_order(key, entry, vouch, now, evidence);
        let menu = self.listed(key).is_some_and(|listed| {
            listed.status == Some(ListedStatus::Waiting) && is_menu(listed.waiting_for.as_deref())
        });
        if let Some(previous) = entry.decision.as_ref().filter(|_| menu) {
            if previous.status == verdict.status && previous.reason == verdict.reason {
                verdict.since = previous.since;
            }
        }
        verdict
    }

    /// The rules in priority order. Each rule that decides returns; `evidence` collects the
    /// facts looked at on the way.
    fn rules_in_order(
        &self,
        key: &SessionKey,
        entry: &Entry,
        vouch: Option<Vouch>,
        now: Timestamp,
        evidence: &mut Vec<Evidence>,
    ) -> Verdict {
        let log = &entry.log;
        let policy = &self.policy;
        let agent = key.agent.display_name();
        let last_write = entry.last_write.unwrap_or(now);
        let listing = self
            .listings
            .get(&key.agent)
            .filter(|listing| listing.available);
        let listed = self.listed(key);
        if let Some(listed) = listed {
            evidence.push(Evidence::Listed {
                status: listed.status,
                waiting_for: listed.waiting_for.clone(),
                pid: listed.pid,
            });
        }
        let subagent_write = self.subagent_write(entry);
        // Rule 1: closed.
        if let Some(ended_at) = log.ended_at {
            evidence.push(Evidence::EndRecorded { at: ended_at });
            return verdict(Status::Ended, end_stamp(), Presence::Ended, ended_at, None);
        }
        if let Some(listed) = listed {
            if listed.status == Some(ListedStatus::Finished) && !listed.interactive {
                let reason = Reason::new(
                    ReasonCode::ListingDone,
                    format!("{agent} reports the job finished"),
                );
                let since = listed.updated_at.unwrap_or(last_write);
                return verdict(Status::Ended, reason, Presence::Ended, since, None);
            }
        }
        match vouch {
            Some(vouch) => evidence.push(Evidence::Vouched {
                pid: vouch.pid,
                how: vouch.kind,
            }),
            None => {
                let death = entry.gone_at.filter(|gone_at| {
                    log.last_tool_call
                        .is_none_or(|tool_call_at| tool_call_at <= *gone_at)
                });
                if let Some(gone_at) = death {
                    evidence.push(Evidence::ProcessDied { at: gone_at });
                    let reason = Reason::new(ReasonCode::ProcessGone, "The agent's process exited");
                    return verdict(Status::Ended, reason, Presence::Gone, gone_at, None);
                }
                if let Some(died_at) = entry.gone_at {
                    evidence.push(Evidence::PresentAgain { died_at });
                }
                if listing.is_some() && !self.agent_has_unlisted_process(key.agent) {
                    evidence.push(Evidence::Unlisted { agent: key.agent });
                    let reason = Reason::new(
                        ReasonCode::NotListed,
                        format!("{agent} no longer lists the session"),
                    );
                    return verdict(Status::Ended, reason, Presence::Gone, last_write, None);
                }
                let quiet_until = last_write.plus(policy.window);
                if now >= quiet_until {
                    evidence.push(Evidence::QuietWithoutProcess { since: last_write });
                    let reason = Reason::new(
                        ReasonCode::NoProcess,
                        "No live process, and the transcript is quiet",
                    );
                    return verdict(Status::Ended, reason, Presence::Gone, last_write, None);
                }
                evidence.push(Evidence::WrittenWithinWindow { at: last_write });
            }
        }
        let closes_at = vouch.is_none().then(|| last_write.plus(policy.window));

        // Rules 2–3: the agent's own listing decides the status where it reports one.
        let posture = posture(log, entry.last_write, now, policy);
        evidence.push(posture.evidence.clone());
        let listed_alive =
            listed.filter(|_| matches!(vouch, Some(v) if v.kind == VouchKind::Listing));
        if let Some(listed) = listed_alive {
            let since = listed.updated_at.unwrap_or(last_write);
            match listed.status {
                Some(ListedStatus::Busy) => {
                    let reason = match &posture.outcome {
                        Outcome::Working(reason) => reason.clone(),
                        _ => Reason::new(
                            ReasonCode::ListingBusy,
                            format!("{agent} reports the session busy"),
                        ),
                    };
                    return verdict(Status::Working, reason, Presence::Present, since, None);
                }
                Some(ListedStatus::Waiting) => {
                    match waiting_reason(listed.waiting_for.as_deref(), log) {
                        ListedWait::Asks(reason) => {
                            return verdict(Status::Waiting, reason, Presence::Present, since, None)
                        }
                        // The person's own menu, or a value Slate does not know: the rules below
                        // decide, as if the listing said nothing.
                        ListedWait::Menu | ListedWait::Unknown => {}
                    }
                }
                Some(ListedStatus::Idle) | Some(ListedStatus::Finished) => {
                    // Idle between turns, but the work its turn left in the background wakes it
                    // (docs/formats.md §1.6): not handed back yet.
                    if let (Outcome::Working(reason), Evidence::Background { .. }) =
                        (&posture.outcome, &posture.evidence)
                    {
                        return verdict(
                            Status::Working,
                            reason.clone(),
                            Presence::Present,
                            posture.since,
                            posture.deadline,
                        );
                    }
                    let reason = match &posture.outcome {
                        Outcome::Waiting(reason) => reason.clone(),
                        _ if log.n_records == 0 => new_session(),
                        _ => turn_finished(),
                    };
                    return finish(log, reason, since, None);
                }
                None => {}
            }
        }

        // The session's terminal, for rules 3a–6c. A hosted terminal reports every title and
        // draw, and its screen is read through its control socket while a tool call is open; a
        // terminal read from outside counts while a tool call is open, which is when it is read.
        let mut terminal_deadline = None;
        let terminal = match (&entry.hosted, &entry.sensed) {
            (Some(hosted), Some(sensed)) if log.newest_open_call().is_some() => {
                Some(Terminal::hosted_with_screen(hosted, sensed))
            }
            (Some(hosted), _) => Some(Terminal::from(hosted)),
            (None, Some(sensed)) if log.newest_open_call().is_some() => {
                Some(Terminal::from(sensed))
            }
            _ => None,
        };
        // Rule 3a: the agent's own hook, for a session a live process vouches for, while it is
        // the newest word: a terminal Slate reads that changed after it (a dialog drawn after a
        // tool-start hook, the dialog gone after an approval no hook reports) goes first, except
        // that a prompt hook holds for `hooks::DIALOG_DRAWS` while its dialog is being drawn.
        let terminal_changed = terminal.as_ref().and_then(Terminal::changed_at);
        if let (Some(hook), Some(vouch)) = (&entry.hook, vouch) {
            let read = hooks::rules(hook, log, vouch.newest_child, now, policy);
            evidence.push(read.evidence);
            let drawing = hook
                .signal
                .is_prompt()
                .then(|| hook.at.plus(hooks::DIALOG_DRAWS));
            let (newest, holds_until) = match terminal_changed {
                Some(changed) if changed > hook.at => match drawing {
                    Some(until) if now < until => (true, Some(until)),
                    _ => (false, None),
                },
                _ => (true, None),
            };
            if let Some((status, reason, since, deadline)) = read.verdict.filter(|_| newest) {
                let deadline = earliest(earliest(deadline, holds_until), closes_at);
                if status == Status::Waiting {
                    return finish(log, reason, since, deadline);
                }
                return verdict(status, reason, Presence::Present, since, deadline);
            }
        }

        // Rules 4, 5 and 6c: what the session's terminal shows.
        if let Some(terminal) = terminal {
            let read = signals::rules(key.agent, terminal, log, &posture, now, policy);
            evidence.extend(read.evidence);
            if let Some((status, reason, since, deadline)) = read.verdict {
                let deadline = earliest(deadline, closes_at);
                return verdict(status, reason, Presence::Present, since, deadline);
            }
            terminal_deadline = read.deadline;
        }

        // Rule 4: signals that keep a session Working over the timing rules.
        let subagent_fresh = subagent_write.filter(|written| now < written.plus(policy.window));

        // Rule 6–7: the transcript.
        let closes_at = earliest(closes_at, terminal_deadline);
        let deadline = earliest(posture.deadline, closes_at);
        match posture.outcome {
            Outcome::Working(reason) => {
                let since = posture.since;
                verdict(Status::Working, reason, Presence::Present, since, deadline)
            }
            Outcome::Waiting(reason) => {
                if posture.timed {
                    if let Some(written) = subagent_fresh {
                        evidence.push(Evidence::SubagentWrote { at: written });
                        let reason = Reason::new(
                            ReasonCode::SubagentRunning,
                            "A sub-agent is still writing",
                        );
                        let deadline = earliest(Some(written.plus(policy.window)), closes_at);
                        return verdict(
                            Status::Working,
                            reason,
                            Presence::Present,
                            written,
                            deadline,
                        );
                    }
                }
                finish(log, reason, posture.since, closes_at)
            }
        }
    }

    /// Keeps `agent`'s new listing. A listing may decide a session it names, so such a session
    /// needs its entry.
    pub(super) fn take_listing(&mut self, agent: AgentKind, listing: Listing) {
        for listed in &listing.entries {
            self.reopen(&SessionKey::new(agent, listed.session_id.clone()));
        }
        self.listings.insert(agent, listing);
    }

    /// Counts a listing's `waiting` whose `waitingFor` Slate does not know as a record of the
    /// session that Slate could not read (`slate doctor` counts them by agent and version): once
    /// for as long as the listing says that value, and again if it says it again later.
    pub(super) fn count_listed_drift(&mut self, key: &SessionKey) {
        let drift = self
            .listed(key)
            .filter(|listed| listed.status == Some(ListedStatus::Waiting))
            .and_then(|listed| listed.waiting_for.clone())
            .filter(|value| !known_waiting_for(Some(value)));
        let Some(entry) = self.entries.get_mut(key) else {
            return;
        };
        if entry.log.listed_drift == drift {
            return;
        }
        if let Some(value) = &drift {
            let value = Value::from(value.as_str());
            let record = json!({ "status": "waiting", "waitingFor": value });
            let unread = UnreadRecord::of_type("waitingFor", &value, &record);
            entry.log.unread.count(&unread.what, &unread.sample);
        }
        entry.log.listed_drift = drift;
    }

    /// The agent's own listing's entry for this session, when the agent keeps an available
    /// listing that names it.
    fn listed(&self, key: &SessionKey) -> Option<&ListingEntry> {
        self.listings
            .get(&key.agent)
            .filter(|listing| listing.available)?
            .entries
            .iter()
            .find(|listed| listed.session_id == key.id.as_str())
    }

    /// The newest write of any of the session's sub-agents: its own sub-agent transcripts, and
    /// the sessions that roll up into it.
    fn subagent_write(&self, entry: &Entry) -> Option<Timestamp> {
        let own = entry.subagents.values().copied().max();
        let children = entry
            .children
            .iter()
            .filter_map(|child| self.entries.get(child)?.last_write)
            .max();
        own.max(children)
    }
}

fn posture(log: &Log, last_write: Option<Timestamp>, now: Timestamp, policy: &Policy) -> Posture {
    let working = |reason, since, deadline, evidence| Posture {
        outcome: Outcome::Working(reason),
        since,
        deadline,
        timed: false,
        evidence,
    };
    let waiting = |reason, since, timed, evidence| Posture {
        outcome: Outcome::Waiting(reason),
        since,
        deadline: None,
        timed,
        evidence,
    };
    let Some(last) = &log.last else {
        // A CLI writes a new transcript's first lines a moment apart (Codex its session header,
        // then the prompt): one just written is not yet waiting for a first prompt.
        if let Some(written) = last_write {
            let settles_at = written.plus(policy.text_settle);
            if now < settles_at {
                return working(
                    Reason::new(ReasonCode::RecentActivity, "The session is starting"),
                    written,
                    Some(settles_at),
                    Evidence::Starting { at: written },
                );
            }
        }
        return waiting(new_session(), now, false, Evidence::NoTurnRecord);
    };
    if let Some(call) = log.newest_open_call() {
        let label = call.label();
        let quiet_from = call.at.max(last.at);
        let quiet_at = quiet_from.plus(policy.quiet_call);
        if now >= quiet_at {
            let minutes = quiet_from.elapsed_until(now).as_secs() / 60;
            return waiting(
                Reason::new(
                    ReasonCode::QuietCall,
                    format!("A tool call has been quiet for {minutes} min: {label}"),
                ),
                quiet_at,
                true,
                Evidence::CallQuiet {
                    call: label,
                    at: call.at,
                },
            );
        }
        if let Some(reason) = dialog(call) {
            let asks_at = call.at.plus(policy.window);
            if now >= asks_at {
                let evidence = Evidence::AskUnanswered {
                    call: label,
                    at: call.at,
                };
                return waiting(reason, call.at, false, evidence);
            }
            return working(
                Reason::new(ReasonCode::ToolRunning, format!("Asking: {label}")),
                call.at,
                Some(asks_at),
                Evidence::AskPending {
                    call: label,
                    at: call.at,
                },
            );
        }
        if call.kind == CallKind::Asking {
            // The agent wrote that its dialog is open: no window to wait out.
            let evidence = Evidence::DialogWritten {
                call: label,
                at: call.at,
            };
            return waiting(permission(log), call.at, false, evidence);
        }
        let text = match call.kind {
            CallKind::Escalated => format!("Running {label} (may be waiting for approval)"),
            CallKind::SubAgent => format!("A sub-agent is running: {label}"),
            _ => format!("Running {label}"),
        };
        return working(
            Reason::new(ReasonCode::ToolRunning, text),
            call.at,
            Some(quiet_at),
            Evidence::CallOpen {
                call: label,
                at: call.at,
            },
        );
    }
    let at = last.at;
    // The turn is over but its background work runs: the agent wakes when it ends, so the turn
    // is not the person's yet, until the transcript has been quiet as long as a quiet call.
    let ended = match &last.kind {
        RecordKind::TurnEnded { .. } => true,
        RecordKind::ModelText | RecordKind::ToolCall { .. } => {
            log.open_turn.is_none() && now >= at.plus(policy.text_settle)
        }
        _ => false,
    };
    if let Some((work, started)) = log.background_work().filter(|_| ended) {
        let quiet_from = started.max(at);
        let quiet_at = quiet_from.plus(policy.quiet_call);
        if now >= quiet_at {
            let minutes = quiet_from.elapsed_until(now).as_secs() / 60;
            return waiting(
                Reason::new(
                    ReasonCode::QuietCall,
                    format!("Quiet for {minutes} min, waiting for {work}"),
                ),
                quiet_at,
                true,
                Evidence::BackgroundQuiet {
                    work,
                    at: quiet_from,
                },
            );
        }
        return working(
            Reason::new(ReasonCode::ToolRunning, format!("Waiting for {work}")),
            quiet_from,
            Some(quiet_at),
            Evidence::Background { work, at: started },
        );
    }
    match &last.kind {
        RecordKind::Prompt { .. }
        | RecordKind::ToolResult { .. }
        | RecordKind::TurnStarted { .. } => {
            working(model_answering(), at, None, Evidence::ModelAsked { at })
        }
        RecordKind::ModelThinking => working(
            Reason::new(ReasonCode::ModelAnswering, "The model is thinking"),
            at,
            None,
            Evidence::Thinking { at },
        ),
        RecordKind::Retrying => working(
            Reason::new(
                ReasonCode::ModelRetrying,
                "The model is retrying after an API error",
            ),
            at,
            None,
            Evidence::Retrying { at },
        ),
        RecordKind::Compacting => working(
            Reason::new(
                ReasonCode::Compacting,
                "The conversation is being compacted",
            ),
            at,
            None,
            Evidence::Compacting { at },
        ),
        RecordKind::ModelText | RecordKind::ToolCall { .. } => {
            if log.open_turn.is_some() {
                return working(model_answering(), at, None, Evidence::TurnOpen { at });
            }
            let settles_at = at.plus(policy.text_settle);
            if now >= settles_at {
                waiting(turn_finished(), at, true, Evidence::TextStayedLast { at })
            } else {
                working(
                    model_answering(),
                    at,
                    Some(settles_at),
                    Evidence::TextFresh { at },
                )
            }
        }
        RecordKind::TurnEnded { .. } => {
            waiting(turn_finished(), at, false, Evidence::TurnEnded { at })
        }
        RecordKind::Interrupted { .. } => waiting(
            Reason::new(ReasonCode::Interrupted, "The turn was interrupted"),
            at,
            false,
            Evidence::Interrupted { at },
        ),
        RecordKind::TurnFailed { message } => {
            let text = match message {
                Some(message) => format!("The turn failed: {message}"),
                None => "The turn failed".to_string(),
            };
            waiting(
                Reason::new(ReasonCode::TurnFailed, text),
                at,
                false,
                Evidence::TurnFailed { at },
            )
        }
        RecordKind::SessionEnded => waiting(end_stamp(), at, false, Evidence::SessionEnded { at }),
        // Never the newest record (`Log` keeps them aside); as if it were the turn's activity.
        RecordKind::BackgroundStarted { .. } | RecordKind::BackgroundEnded { .. } => {
            working(model_answering(), at, None, Evidence::ModelAsked { at })
        }
        RecordKind::Unsettled => {
            let flips_at = at.plus(policy.window);
            if now >= flips_at {
                waiting(
                    Reason::new(
                        ReasonCode::Unknown,
                        "Quiet since its last turn record; nothing says what it waits for",
                    ),
                    flips_at,
                    true,
                    Evidence::UnsettledPast { at },
                )
            } else {
                working(
                    Reason::new(ReasonCode::RecentActivity, "Recently active"),
                    at,
                    Some(flips_at),
                    Evidence::UnsettledRecent { at },
                )
            }
        }
    }
}
