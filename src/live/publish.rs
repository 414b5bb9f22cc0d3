//! The publish that ends every round: the status transitions recorded in the store, the changes
//! applied to the published snapshot (git facts, evidence, the live list and health), and what
//! changed on the live list broadcast to subscribers.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{GitRecheck, Health, LoopState, Published, Round, Update};
use crate::store::{Store, Transition};
use slate_core::model::{Session, SessionKey, Status, Timestamp};
use slate_core::policy::{self, Leaves};
use slate_core::tracker::Change;
use slate_sources::sources::git::GitCache;

impl LoopState {
    /// Sessions the store last saw open that are closed now, with no change to say so (a
    /// session that ended while Slate was not running is first seen closed): their closing, so
    /// their history does not stay open for ever.
    fn closed_while_away(
        &self,
        store: &Store,
        changes: &[Change],
        now: Timestamp,
    ) -> Vec<Transition> {
        let unfinished = match store.unfinished() {
            Ok(unfinished) => unfinished,
            Err(err) => {
                tracing::warn!("cannot read which sessions the store saw open: {err}");
                return Vec::new();
            }
        };
        unfinished
            .into_iter()
            .filter(|(key, _)| !changes.iter().any(|change| change.key == *key))
            .filter_map(|(key, last)| {
                let session = self.engine.tracker().session(&key)?;
                (session.status == Status::Ended).then_some(Transition {
                    key,
                    from: Some(last),
                    to: Status::Ended,
                    reason: session.session_state.reason,
                    at: now,
                })
            })
            .collect()
    }

    /// Ends a round: records the transitions, applies the changes to the snapshot, and
    /// broadcasts what changed on the live list. Then the schedule learns the tracker's next
    /// deadline and when the next closed session leaves the list.
    pub(super) fn publish(&mut self, mut changes: Vec<Change>, round: Round) {
        let now = (self.clock)();
        let checked = Instant::now();
        for change in &mut changes {
            add_git_facts(&mut self.git, &mut change.session, checked);
        }
        self.record(&changes, round, now);
        let (updates, leaves) = self.apply(changes, round, now, checked);
        self.broadcast(updates);
        let instant = Instant::now();
        let at = |time: Timestamp| {
            let wait = time.millis().saturating_sub(now.millis()).max(0);
            instant + Duration::from_millis(u64::try_from(wait).unwrap_or(0))
        };
        self.schedule
            .set_deadline(self.engine.next_deadline().map(at));
        self.schedule.set_leave(leaves.map(at));
        if let Some(sensing) = &mut self.sensing {
            let wanted = self.engine.tracker().terminals_wanted();
            sensing.set_hosted(self.engine.tracker().hosted_controls());
            sensing.set_marks(&self.engine.tracker().terminals_marked(), Instant::now());
            self.schedule
                .set_panes(sensing.next_read(&wanted, Instant::now()));
            let awaiting = self.engine.tracker().awaiting_scan();
            self.schedule.awaiting_scan(&awaiting, Instant::now());
        }
    }

    /// Writes the status transitions in `changes` to the store (and, in the first round, the
    /// closings of sessions that ended while Slate was away).
    fn record(&self, changes: &[Change], round: Round, now: Timestamp) {
        let Some(store) = &self.store else {
            return;
        };
        let Ok(store) = store.lock() else {
            return;
        };
        let mut transitions: Vec<Transition> = changes
            .iter()
            .filter(|change| change.previous != Some(change.session.status))
            .map(|change| Transition {
                key: change.key.clone(),
                from: change.previous,
                to: change.session.status,
                reason: change.session.session_state.reason.clone(),
                at: now,
            })
            .collect();
        if round == Round::First {
            transitions.extend(self.closed_while_away(&store, changes, now));
        }
        if let Err(err) = store.record_transitions(&transitions) {
            tracing::warn!("cannot record state transitions: {err}");
        }
        // Each changed session's usage totals, so its cost outlives its place on the list.
        let usage: Vec<crate::store::StoredUsage> = changes
            .iter()
            .filter(|change| change.session.machine.is_none())
            .filter_map(|change| {
                Some(crate::store::StoredUsage {
                    key: change.key.clone(),
                    project: change.session.project.clone(),
                    at: change.session.row_time.unwrap_or(now),
                    usage: change.session.usage.clone()?,
                })
            })
            .collect();
        if let Err(err) = store.record_usage(&usage) {
            tracing::warn!("cannot record usage: {err}");
        }
    }

    /// Applies a round's changes to the published snapshot and returns the updates for
    /// subscribers (none in the first round) and when the next listed session leaves the live
    /// list by time.
    fn apply(
        &mut self,
        mut changes: Vec<Change>,
        round: Round,
        now: Timestamp,
        checked: Instant,
    ) -> (Vec<Update>, Option<Timestamp>) {
        let shared = Arc::clone(&self.shared);
        let mut published = shared.published.write().expect("lock poisoned");
        self.take_sessions(&mut published, &changes, round, checked);
        self.recheck_git(&mut published, &mut changes, checked);
        let touched = std::mem::take(&mut self.remote_touched);
        for key in &touched {
            match self.remotes.session(key) {
                Some(session) => published.remote.insert(key.clone(), session.clone()),
                None => published.remote.remove(key),
            };
        }
        let live = listed(&published, now, self.reclaim_after);
        let changed = changes.iter().map(|change| &change.key).chain(&touched);
        let updates = match round {
            Round::First => Vec::new(),
            Round::Next => live_updates(&published.live, &live, changed),
        };
        let leaves = next_leave(&live, now, self.reclaim_after);
        published.live = live;
        published.evidence = published
            .live
            .keys()
            .filter(|key| published.sessions.contains_key(*key))
            .map(|key| (key.clone(), self.engine.evidence(key)))
            .collect();
        published.health = Health {
            version: env!("CARGO_PKG_VERSION").to_string(),
            roots: self.engine.roots(),
            problems: self.engine.problems().counts.clone(),
            live_sessions: published.live.len(),
            needs_you: policy::needs_you_count(published.live.values()),
            store_recovered_from: self.store_recovered_from.clone(),
            wakeups: self.wakeups,
            settings: self.settings.clone(),
            remotes: self.remotes.reports(),
            agents: slate_core::agents::versions::report(
                self.engine.registry(),
                published.live.values(),
            ),
            push: None,
        };
        let reports = &published.health.remotes;
        self.shared.remotes_changed.send_if_modified(|told| {
            let news = told != reports;
            if news {
                told.clone_from(reports);
            }
            news
        });
        (updates, leaves)
    }

    /// Puts the changed sessions (in the first round, every session the tracker holds in full)
    /// into the snapshot, with the tracker's closed summaries and policy.
    fn take_sessions(
        &mut self,
        published: &mut Published,
        changes: &[Change],
        round: Round,
        checked: Instant,
    ) {
        published.policy = self.engine.tracker().policy().clone();
        for change in changes {
            published
                .sessions
                .insert(change.key.clone(), change.session.clone());
        }
        if round == Round::First {
            published.sessions = self
                .engine
                .full_sessions()
                .map(|session| {
                    let mut session = session.clone();
                    add_git_facts(&mut self.git, &mut session, checked);
                    (session.key(), session)
                })
                .collect();
        }
        let closed = self.engine.tracker().closed();
        if !Arc::ptr_eq(&published.closed, closed) {
            // Summaries the tracker brought back to full entries are published in full, even
            // when their decision did not change.
            let reopened: Vec<SessionKey> = published
                .closed
                .keys()
                .filter(|key| !closed.contains_key(*key) && !published.sessions.contains_key(*key))
                .cloned()
                .collect();
            for key in reopened {
                if let Some(session) = self.engine.tracker().session(&key) {
                    published.sessions.insert(key, session);
                }
            }
            published.closed = Arc::clone(closed);
        }
    }

    /// Reads the git facts the `GitRecheck` asks for again, and adds a change for each live
    /// session whose facts moved.
    fn recheck_git(
        &mut self,
        published: &mut Published,
        changes: &mut Vec<Change>,
        checked: Instant,
    ) {
        let recheck = std::mem::replace(&mut self.git_recheck, GitRecheck::Nothing);
        if recheck == GitRecheck::Nothing {
            return;
        }
        let changed: BTreeSet<SessionKey> =
            changes.iter().map(|change| change.key.clone()).collect();
        for (key, session) in published.sessions.iter_mut() {
            if !recheck.covers(session.folder.as_deref())
                || changed.contains(key)
                || session.status == Status::Ended
            {
                continue;
            }
            let mut updated = session.clone();
            add_git_facts(&mut self.git, &mut updated, checked);
            if updated != *session {
                *session = updated.clone();
                changes.push(Change {
                    key: key.clone(),
                    previous: Some(updated.status),
                    session: updated,
                });
            }
        }
    }

    /// Tells subscribers what changed.
    fn broadcast(&self, updates: Vec<Update>) {
        for update in updates {
            let _ = self.shared.updates.send(update);
        }
    }
}

/// The live list at `now`: the full sessions `policy::on_live_list` keeps, and, when closed
/// sessions stay a while (`reclaim_after`), the closed summaries that ended since; and every
/// remote machine's sessions, which their machine listed.
fn listed(
    published: &Published,
    now: Timestamp,
    reclaim_after: Duration,
) -> HashMap<SessionKey, Session> {
    let mut live: HashMap<SessionKey, Session> = published
        .sessions
        .iter()
        .filter(|(_, session)| policy::on_live_list(session, now, reclaim_after))
        .map(|(key, session)| (key.clone(), session.clone()))
        .collect();
    if !reclaim_after.is_zero() {
        for (key, closed) in published.closed.iter() {
            if now < closed.since().plus(reclaim_after) {
                let (session, _) = closed.session(key, &published.policy);
                if policy::on_live_list(&session, now, reclaim_after) {
                    live.insert(key.clone(), session);
                }
            }
        }
    }
    live.extend(
        published
            .remote
            .iter()
            .map(|(key, session)| (key.clone(), session.clone())),
    );
    live
}

/// The next time after `now` that a session on the live list leaves it by time alone.
fn next_leave(
    live: &HashMap<SessionKey, Session>,
    now: Timestamp,
    reclaim_after: Duration,
) -> Option<Timestamp> {
    live.values()
        .filter_map(
            |session| match policy::leaves_live_list_at(session, reclaim_after) {
                Leaves::At(at) if at > now => Some(at),
                Leaves::At(_) | Leaves::Never => None,
            },
        )
        .min()
}

/// What subscribers are told when the live list goes from `before` to `after` with the
/// sessions `changed`: every changed session still listed, every session newly listed, and every
/// session that left.
fn live_updates<'a>(
    before: &HashMap<SessionKey, Session>,
    after: &'a HashMap<SessionKey, Session>,
    changed: impl IntoIterator<Item = &'a SessionKey>,
) -> Vec<Update> {
    let removed = Update::removed;
    let mut told: HashSet<&SessionKey> = HashSet::new();
    let mut updates = Vec::new();
    for key in changed {
        if !told.insert(key) {
            continue;
        }
        match after.get(key) {
            Some(session) => updates.push(Update::Session {
                session: Box::new(session.clone()),
            }),
            None if before.contains_key(key) => updates.push(removed(key)),
            None => {}
        }
    }
    for (key, session) in after {
        if !before.contains_key(key) && !told.contains(key) {
            updates.push(Update::Session {
                session: Box::new(session.clone()),
            });
        }
    }
    for key in before.keys() {
        if !after.contains_key(key) && !told.contains(key) {
            updates.push(removed(key));
        }
    }
    updates
}

/// Adds the checkout's current branch, ahead/behind and dirty count to a live session. The
/// checkout's branch replaces the one the transcript recorded, which may be stale; a closed
/// session keeps what its transcript said.
fn add_git_facts(git: &mut GitCache, session: &mut Session, now: Instant) {
    if session.status == Status::Ended {
        return;
    }
    let Some(folder) = session.folder.as_deref() else {
        return;
    };
    let Some(facts) = git.facts(Path::new(folder), now) else {
        return;
    };
    if facts.branch.is_some() {
        session.branch = facts.branch.clone();
    }
    session.ahead = facts.ahead;
    session.behind = facts.behind;
    session.dirty = facts.dirty;
}
