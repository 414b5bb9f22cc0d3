//! The facets beside the status (docs/states.md §4): activity, intent, custody and next actor,
//! the work items behind them, and the session object that carries them all.
//!
//! The rules decide a status, a reason and a presence; this module dresses that verdict as the
//! session object every surface reads. Activity comes from the transcript's timing, intent from
//! the user (it is carried as given, and its reason appears in the intent alone: the other
//! facets refer to it), custody from the work claims and the branch, and next actor from all of
//! them in priority order. `notifications_muted` and `item_next_actor` are pure helpers for the
//! desktop shell and `slate item list`.

use std::collections::{BTreeMap, HashSet};

use super::log::Log;
use super::rules::Verdict;
use super::{Entry, Policy, Tracker, WorkItemInfo};
use crate::model::{
    Activity, Actor, Awaiting, Custody, Intent, IntentState, ItemStatus, NextActor, Presence,
    Session, SessionDialog, SessionId, SessionKey, SessionState, Status, TerminalView, Timestamp,
    READ_ONLY,
};
use crate::usage::{prices, SessionUsage};

/// The activity facet: working, between turns, or silent.
pub(super) fn activity(log: &Log, status: Status, now: Timestamp, policy: &Policy) -> Activity {
    let Some(last) = &log.last else {
        return Activity::Silent;
    };
    if let Some(call) = log.newest_open_call() {
        // An open call excuses silence, for at most the watcher ceiling.
        return if now >= call.at.plus(policy.open_call_excuse) {
            Activity::Silent
        } else {
            Activity::Working
        };
    }
    if now >= last.at.plus(policy.session_idle) {
        return Activity::Silent;
    }
    match status {
        Status::Working => Activity::Working,
        Status::Waiting | Status::Ended => Activity::BetweenTurns,
    }
}

/// When the activity facet next flips by time alone, if it will.
pub(super) fn activity_deadline(log: &Log, now: Timestamp, policy: &Policy) -> Option<Timestamp> {
    let last = log.last.as_ref()?;
    let flips_at = match log.newest_open_call() {
        Some(call) => call.at.plus(policy.open_call_excuse),
        None => last.at.plus(policy.session_idle),
    };
    (flips_at > now).then_some(flips_at)
}

/// True when a facet the surfaces show changed: the intent, the custody, or who acts next.
pub(super) fn changed(before: &SessionState, after: &SessionState) -> bool {
    before.intent != after.intent
        || before.custody != after.custody
        || before.next_actor.actor != after.next_actor.actor
        || before.next_actor.reason != after.next_actor.reason
}

/// Whether a session's notifications are held back (docs/states.md §4): a parked session fires
/// none, and a session awaiting another actor fires none until that actor acts, which the
/// tracker shows by moving `next_actor` off the awaited actor. Pure, for the desktop shell.
pub fn notifications_muted(state: &SessionState) -> bool {
    match state.intent.state {
        IntentState::None => false,
        IntentState::Parked => true,
        IntentState::Awaiting => {
            let Some(awaiting) = &state.intent.awaiting_who else {
                return false;
            };
            let actor = awaiting.actor();
            actor != Actor::Operator && state.next_actor.actor == actor
        }
    }
}

/// Who acts next on a work item (docs/states.md §4): a done item has nobody left; an
/// unsatisfied dependency names the other item; running CI names CI; claimed work is its
/// holder's; unclaimed ready (or blocked) work needs parent or steering direction. `items` looks
/// up dependencies and `holder` is the session holding a claim on it, if any.
pub fn item_next_actor(
    item: &WorkItemInfo,
    items: &BTreeMap<String, WorkItemInfo>,
    holder: Option<&SessionKey>,
) -> (Actor, String) {
    if item.status == ItemStatus::Done {
        return (Actor::Nobody, "the item is done".to_string());
    }
    if let Some(dep) = unsatisfied_dep(item, items) {
        return (Actor::AnotherItem, format!("waits for item {dep}"));
    }
    if item.status == ItemStatus::CiRunning {
        return (Actor::CiOrDeploy, "CI is running".to_string());
    }
    match holder {
        Some(key) => (Actor::ThisSession, format!("claimed by {key}")),
        None => (
            Actor::ParentOrSteering,
            "unclaimed work needs parent or steering direction".to_string(),
        ),
    }
}

/// The first dependency of `item` that is not done; a dependency on an unknown item is not done.
fn unsatisfied_dep<'a>(
    item: &'a WorkItemInfo,
    items: &BTreeMap<String, WorkItemInfo>,
) -> Option<&'a str> {
    item.deps
        .iter()
        .find(|dep| {
            items
                .get(dep.as_str())
                .is_none_or(|dep| dep.status != ItemStatus::Done)
        })
        .map(String::as_str)
}

fn project_name(folder: &str) -> String {
    let trimmed = folder.trim_end_matches(['/', '\\']);
    trimmed
        .rsplit(['/', '\\'])
        .next()
        .filter(|name| !name.is_empty())
        .unwrap_or(trimmed)
        .to_string()
}

impl Tracker {
    /// The session object for a verdict: the transcript's facts, the status and every facet.
    pub(super) fn session_object(
        &self,
        key: &SessionKey,
        entry: &Entry,
        verdict: &Verdict,
        activity: Activity,
        pid: Option<u32>,
        row_time: Option<Timestamp>,
    ) -> Session {
        let (status, reason, presence) = (verdict.status, &verdict.reason, verdict.presence);
        let log = &entry.log;
        let folder = log.folder.clone();
        let project = folder.as_deref().map(project_name);
        let row_time = if status == Status::Ended {
            entry.last_write.or(row_time)
        } else {
            row_time.or(entry.last_write)
        };
        let intent = self.intents.get(key);
        let custody = self.custody(key, log, status, presence);
        let next_actor = self.next_actor(key, log, verdict, intent);
        let terminal = if let Some(hosted) = &entry.hosted {
            Some(TerminalView::hosted_with(hosted.control.as_deref()))
        } else {
            pid.and_then(|pid| self.terminals.get(&pid)).cloned()
        };
        Session {
            agent: key.agent,
            id: SessionId::new(key.id.as_str()),
            folder,
            project,
            title: log
                .title
                .as_ref()
                .map(|title| title.text.clone())
                .or_else(|| log.first_prompt.clone()),
            last_prompt: log.last_prompt.clone(),
            branch: log.branch.clone(),
            row_time,
            pid,
            transcript: entry.transcript.clone(),
            model: log.model.clone(),
            cli_version: log.cli_version.clone(),
            hosted: entry.hosted.is_some(),
            terminal: terminal.clone(),
            // A call the agent's decision hook waits on is answered through the hook: it
            // cannot land on the wrong pane (docs/hooks.md, "Decision hooks").
            // Only while the session waits at that permission: not once the turn moved on.
            dialog: (entry.waiting.as_ref())
                .filter(|_| {
                    status == Status::Waiting
                        && reason.code == crate::model::ReasonCode::PermissionPrompt
                })
                .map(|waiting| waiting.dialog())
                .or_else(|| {
                    entry
                        .sensed
                        .as_ref()
                        .and_then(|sensed| sensed.dialog())
                        .map(|dialog| {
                            let call = log.call_of(key.agent, dialog);
                            // A terminal whose backend reads it but cannot answer in it (a
                            // desktop terminal's tab) offers no safe way in for keys: shown, not
                            // answered (docs/states.md §8), in its backend's words.
                            let seen_only = (terminal.as_ref())
                                .filter(|view| !view.can.answer)
                                .map(|view| view.note.as_deref().unwrap_or(READ_ONLY).to_string());
                            SessionDialog::of(key.agent, dialog, seen_only, call)
                        })
                })
                .or_else(|| {
                    // A dialog only a hook told of: shown, never answerable (no screen to check).
                    let hook = entry.hook.as_ref().filter(|_| status == Status::Waiting)?;
                    let dialog = super::hooks::dialog(hook, log)?;
                    let call = log.call_of(key.agent, &dialog);
                    let why_not = format!(
                        "slate learnt of this dialog from {}'s hook and cannot see its terminal: \
                         answer it there",
                        key.agent.display_name()
                    );
                    Some(SessionDialog::of(key.agent, &dialog, Some(why_not), call))
                }),
            status,
            session_state: SessionState {
                status,
                active_at: log.last.as_ref().map(|last| last.at),
                reason: reason.clone(),
                presence,
                activity,
                intent: intent.map(|(intent, _)| intent.clone()).unwrap_or_default(),
                custody,
                next_actor,
            },
            // Git facts are the live service's to add.
            ahead: None,
            behind: None,
            dirty: None,
            // The tracker decides this machine's sessions only.
            machine: None,
            unreachable_since: None,
            unread: (!log.unread.is_empty()).then(|| log.unread.clone()),
            muted: self.mutes.contains(key) || self.policy.muted_agents.contains(&key.agent),
            usage: self.usage_of(entry),
        }
    }

    /// The session's usage with its sub-agents': they cost money too, and they show nowhere but
    /// in the session they roll up into. A response both files hold (a sidechain copied into the
    /// main transcript) counts once, by its id.
    fn usage_of(&self, entry: &Entry) -> Option<SessionUsage> {
        if entry.children.is_empty() {
            return prices::session_usage(&entry.log.usage, &self.policy.prices);
        }
        let mut tally = entry.log.usage.clone();
        let mut seen = HashSet::new();
        let mut children: Vec<&SessionKey> = entry.children.iter().collect();
        while let Some(child) = children.pop() {
            if !seen.insert(child) {
                continue;
            }
            if let Some(child) = self.entries.get(child) {
                tally.absorb(&child.log.usage);
                children.extend(child.children.iter());
            }
        }
        prices::session_usage(&tally, &self.policy.prices)
    }

    /// Every work item, by id, and the session holding a claim on each, for `slate item list`.
    pub fn work_items(&self) -> impl Iterator<Item = (&WorkItemInfo, Option<&SessionKey>)> {
        self.items.values().map(|item| {
            let holder = self
                .claims
                .iter()
                .find(|(claimed, _, _)| *claimed == item.id)
                .map(|(_, key, _)| key);
            (item, holder)
        })
    }

    /// The work claims a session holds now, oldest first: (item id, claimed at).
    fn claims_of(&self, key: &SessionKey) -> Vec<(&str, Timestamp)> {
        let mut claims: Vec<(&str, Timestamp)> = self
            .claims
            .iter()
            .filter(|(_, holder, _)| holder == key)
            .map(|(item, _, at)| (item.as_str(), *at))
            .collect();
        claims.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(b.0)));
        claims
    }

    /// The custody facet: work claims protect their holder whatever its activity age; only an
    /// ended or gone session without one is reclaimable.
    fn custody(&self, key: &SessionKey, log: &Log, status: Status, presence: Presence) -> Custody {
        let claims = self.claims_of(key);
        let mut holds: Vec<String> = claims
            .iter()
            .map(|(item, _)| format!("item:{item}"))
            .collect();
        if let Some(branch) = &log.branch {
            holds.push(format!("branch:{branch}"));
        }
        let holds_work_claim = !claims.is_empty();
        let over = status == Status::Ended || presence != Presence::Present;
        let reason = match (holds_work_claim, over) {
            (true, true) => format!(
                "holds a work claim on item {}; silence and process absence never release a claim",
                claims[0].0
            ),
            (true, false) => format!("live, and holds a work claim on item {}", claims[0].0),
            (false, true) => match presence {
                Presence::Gone => "its process is gone and it holds no work claim".to_string(),
                _ => "ended and holds no work claim".to_string(),
            },
            (false, false) => "live".to_string(),
        };
        Custody {
            holds,
            holds_work_claim,
            reclaimable: over && !holds_work_claim,
            reason,
        }
    }

    /// The next-actor facet, in priority order. A parked or awaiting session names whom it waits
    /// for; its reason stays in the intent, which this facet points at instead of repeating.
    fn next_actor(
        &self,
        key: &SessionKey,
        log: &Log,
        verdict: &Verdict,
        intent: Option<&(Intent, Timestamp)>,
    ) -> NextActor {
        let next = |actor, reason: String, since| NextActor {
            actor,
            reason,
            since,
        };
        if verdict.status == Status::Ended {
            return next(
                Actor::Nobody,
                "the session has ended".to_string(),
                verdict.since,
            );
        }
        if let Some((intent, set_at)) = intent {
            let see = if intent.reason.is_some() {
                "; see intent"
            } else {
                ""
            };
            match &intent.awaiting_who {
                Some(Awaiting::AnotherItem(item)) if !self.wait_over(log, *set_at, Some(item)) => {
                    return next(
                        Actor::AnotherItem,
                        format!("awaits item {item}{see}"),
                        *set_at,
                    );
                }
                Some(Awaiting::CiOrDeploy) if !self.wait_over(log, *set_at, None) => {
                    return next(
                        Actor::CiOrDeploy,
                        format!("awaits CI or deployment{see}"),
                        *set_at,
                    );
                }
                Some(Awaiting::Operator) => {
                    return next(
                        Actor::Operator,
                        format!("awaits the operator{see}"),
                        *set_at,
                    );
                }
                _ if intent.state == IntentState::Parked => {
                    return next(
                        Actor::ParentOrSteering,
                        format!("parked; it needs direction{see}"),
                        *set_at,
                    );
                }
                _ => {}
            }
        }
        if verdict.status == Status::Waiting {
            return next(
                Actor::Operator,
                format!("a pending decision: {}", verdict.reason.text),
                verdict.since,
            );
        }
        for (item_id, claimed_at) in self.claims_of(key) {
            let Some(item) = self.items.get(item_id) else {
                continue;
            };
            if let Some(dep) = unsatisfied_dep(item, &self.items) {
                return next(
                    Actor::AnotherItem,
                    format!("its item {item_id} waits for item {dep}"),
                    claimed_at,
                );
            }
            if item.status == ItemStatus::CiRunning {
                return next(
                    Actor::CiOrDeploy,
                    format!("CI is running for its item {item_id}"),
                    claimed_at,
                );
            }
        }
        next(
            Actor::ThisSession,
            format!("the session can continue: {}", verdict.reason.text),
            verdict.since,
        )
    }

    /// Whether the actor an intent awaits has acted: the awaited item is done, or someone handed
    /// the session a new prompt after the intent was set.
    fn wait_over(&self, log: &Log, set_at: Timestamp, item: Option<&str>) -> bool {
        let item_done = item
            .and_then(|item| self.items.get(item))
            .is_some_and(|item| item.status == ItemStatus::Done);
        item_done
            || log
                .last_prompt_at
                .is_some_and(|prompt_at| prompt_at > set_at)
    }
}
