//! The spend alert (`[budget]`, opt-in): when a session's cost crosses `session_usd`, or the
//! day's crosses `day_usd`, one notification names the session and the figure; after it, that
//! session is told nothing more about spend.
//!
//! Like `policy::notifications`, [`SpendWatch::observe`] is a pure function over the watch's
//! state, given the session as it changed and the time. A session's cost is its `usage`'s
//! `cost_usd`, reported or estimated; an estimate that leaves tokens out is a floor, and a floor
//! that crosses an amount means the whole crossed it too. A session whose cost is unknown counts
//! for nothing. A muted session still counts, toward the day and against its own amount: a
//! mute holds back Needs you notifications, not what a session spends.
//!
//! The day is the UTC day (Slate reads no time zone), and a session counts toward the day of its
//! last activity (`row_time`), whole: the figure `slate usage --by day` shows for that day. At
//! start-up ([`SpendWatch::seed`]) a session already over its amount, and a day already over its
//! own, are taken as told: a restart never repeats an alert.

use std::collections::{HashMap, HashSet};

use crate::config::spend::{Budget, Usd};
use crate::model::{Session, SessionKey, Timestamp};
use crate::usage::{CostBasis, SessionUsage};

use super::notifications::{label, Click, NotificationPlan};

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// The UTC day a time falls on, as a day number since 1970-01-01.
pub fn day_of(at: Timestamp) -> i64 {
    at.0.div_euclid(DAY_MS)
}

/// The watch's memory: the amounts, each session's last cost and day, the sessions told, and
/// whether the day's amount was told.
#[derive(Debug, Default)]
pub struct SpendWatch {
    budget: Budget,
    /// Each session's cost (in billionths of a dollar) and the day it counts toward.
    costs: HashMap<SessionKey, (u64, i64)>,
    /// Closed sessions' costs on each day, from the store, that the live list no longer holds.
    before: HashMap<i64, u64>,
    told: HashSet<SessionKey>,
    day_told: Option<i64>,
}

/// A session's cost in billionths of a dollar, when it has one.
fn nano(usage: Option<&SessionUsage>) -> Option<u64> {
    let usd = usage?.cost_usd?;
    (usd.is_finite() && usd >= 0.0).then(|| (usd * 1e9).round() as u64)
}

fn counts_toward(session: &Session, now: Timestamp) -> i64 {
    day_of(session.row_time.unwrap_or(now))
}

impl SpendWatch {
    /// A watch over the live list as it stands, with `before`: what closed sessions no longer on
    /// it cost, by day (`day_of`), in dollars. What is over its amount now is taken as told.
    pub fn seed(
        budget: Budget,
        sessions: &[Session],
        before: &[(i64, f64)],
        now: Timestamp,
    ) -> SpendWatch {
        let mut watch = SpendWatch {
            budget,
            before: before
                .iter()
                .filter(|(_, usd)| usd.is_finite() && *usd >= 0.0)
                .map(|(day, usd)| (*day, (usd * 1e9).round() as u64))
                .collect(),
            ..SpendWatch::default()
        };
        for session in sessions {
            if let Some(cost) = nano(session.usage.as_ref()) {
                watch
                    .costs
                    .insert(session.key(), (cost, counts_toward(session, now)));
                if watch.over(budget.session_usd, cost) {
                    watch.told.insert(session.key());
                }
            }
        }
        let today = day_of(now);
        if watch.over(budget.day_usd, watch.day_total(today)) {
            watch.day_told = Some(today);
        }
        watch
    }

    /// The amounts in force (the config may change while Slate runs); what was told stays told.
    pub fn budget(&mut self, budget: Budget) {
        self.budget = budget;
    }

    fn over(&self, amount: Option<Usd>, cost: u64) -> bool {
        amount.is_some_and(|amount| cost >= (amount.usd() * 1e9).round() as u64)
    }

    /// Every session's cost on `day`, with the closed ones' from before, in billionths.
    fn day_total(&self, day: i64) -> u64 {
        let live: u64 = self
            .costs
            .values()
            .filter(|(_, on)| *on == day)
            .map(|(cost, _)| *cost)
            .sum();
        live.saturating_add(self.before.get(&day).copied().unwrap_or(0))
    }

    /// The day's spend so far, in dollars: what the day's alert compares.
    pub fn today_usd(&self, now: Timestamp) -> f64 {
        self.day_total(day_of(now)) as f64 / 1e9
    }

    /// A session as it changed, at `now`: the one notification its crossing sends, if this
    /// change crossed an amount and the session was not told before.
    pub fn observe(&mut self, session: &Session, now: Timestamp) -> Option<NotificationPlan> {
        let cost = nano(session.usage.as_ref())?;
        let key = session.key();
        let day = counts_toward(session, now);
        self.costs.insert(key.clone(), (cost, day));
        let today = day_of(now);
        // Days gone by hold nothing the alert needs.
        self.before.retain(|on, _| *on >= today - 1);
        self.costs.retain(|_, (_, on)| *on >= today - 1);
        if self.told.contains(&key) {
            return None;
        }
        let figure = |usd: u64| describe(usd, session.usage.as_ref());
        if let Some(amount) = self
            .budget
            .session_usd
            .filter(|_| self.over(self.budget.session_usd, cost))
        {
            self.told.insert(key.clone());
            return Some(plan(
                session,
                format!("{} crossed the session budget of {amount}", figure(cost)),
            ));
        }
        let total = self.day_total(today);
        if day == today && self.day_told != Some(today) && self.over(self.budget.day_usd, total) {
            let amount = self.budget.day_usd?;
            self.day_told = Some(today);
            self.told.insert(key.clone());
            return Some(plan(
                session,
                format!(
                    "today's spend, ${:.2}, crossed the day budget of {amount} with this session at {}",
                    total as f64 / 1e9,
                    figure(cost)
                ),
            ));
        }
        None
    }
}

/// A cost as a notification says it: "$5.12 (estimate)", "≥ $5.12 (estimate, part priced)",
/// "$5.12 (reported)". Never a bare figure: an estimate is not a bill.
pub fn describe(nano_usd: u64, usage: Option<&SessionUsage>) -> String {
    let usd = nano_usd as f64 / 1e9;
    match usage.map(|usage| (usage.cost_basis, usage.unpriced_tokens)) {
        Some((CostBasis::Reported, _)) => format!("${usd:.2} (reported)"),
        Some((_, unpriced)) if unpriced > 0 => format!("≥ ${usd:.2} (estimate, part priced)"),
        _ => format!("${usd:.2} (estimate)"),
    }
}

fn plan(session: &Session, body: String) -> NotificationPlan {
    NotificationPlan {
        title: format!("Spend: {}", label(session)),
        body,
        click: Click::Focus(session.key()),
        offer: None,
        sessions: vec![session.clone()],
    }
}
