//! What a session's model calls used: tokens per model, counted once per API response, from the
//! agent's own records; and, in `usage::prices`, what that is estimated to cost.
//!
//! A session whose CLI records no usage has none here (`None` on the wire, "not recorded" on
//! screen), never zeros. Every cost says what it is: `reported` (the CLI wrote the figure),
//! `estimate` (tokens times a dated price table) or `unknown` (a model the table does not price).

use std::collections::BTreeMap;

use crate::model::usage::NANO;
pub use crate::model::usage::{
    cost_usd, count, tokens, Call, CostBasis, Counting, SessionUsage, Tokens, MOST_COST_USD,
    MOST_TOKENS,
};

pub mod prices;

/// One counted response, by id.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Counted {
    model: String,
    tokens: Tokens,
    cost_nano_usd: Option<u64>,
}

/// The name a session's tokens are kept under when no record names its model.
pub const NO_MODEL: &str = "";

/// One session's usage, folded a record at a time: tokens per model, each response once. It
/// keeps one small entry per response with an id (to replace it when it is written again), and
/// sums for the rest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// Responses with an id, by id.
    by_id: BTreeMap<String, Counted>,
    /// Tokens per model: every response counted, by id or not.
    per_model: BTreeMap<String, Tokens>,
    /// The running totals last read: the whole session's (key `""`), or a model's.
    running: BTreeMap<String, Tokens>,
    /// Responses counted, and those of them that came with a cost the CLI wrote.
    responses: u64,
    costed: u64,
    cost_nano_usd: u64,
    /// The last request: its model and its input and cache tokens.
    last: Option<(String, u64)>,
    context_window: Option<u64>,
}

impl Tally {
    /// True when no record stated any usage: the session's usage is "not recorded".
    pub fn is_empty(&self) -> bool {
        self.responses == 0 && self.running.is_empty()
    }

    /// Folds one record; `session_model` names the model when the record does not.
    pub fn add(&mut self, call: Call, session_model: Option<&str>) {
        // A running total is the model's it names, else the whole session's.
        let running_key = call.model.clone().unwrap_or_default();
        let model = call
            .model
            .or_else(|| session_model.map(str::to_owned))
            .unwrap_or_else(|| NO_MODEL.to_owned());
        if call.context_window.is_some() {
            self.context_window = call.context_window;
        }
        match call.counting {
            Counting::RunningTotal { last } => {
                let before = self.running.get(&running_key).copied().unwrap_or_default();
                let grew = call.tokens.input >= before.input
                    && call.tokens.output >= before.output
                    && call.tokens.cache_read >= before.cache_read
                    && call.tokens.cache_write >= before.cache_write;
                let new = if grew {
                    call.tokens.minus(&before)
                } else {
                    call.tokens
                };
                // Where responses count by id, the total holds them already.
                if self.by_id.is_empty() {
                    if new.total() > 0 {
                        self.responses = self.responses.saturating_add(1);
                    }
                    self.per_model.entry(model.clone()).or_default().add(&new);
                }
                self.running.insert(running_key, call.tokens);
                if last.total() > 0 {
                    self.last = Some((model, last.context()));
                }
            }
            Counting::Response => {
                self.last = Some((model.clone(), call.tokens.context()));
                let counted = Counted {
                    model,
                    tokens: call.tokens,
                    cost_nano_usd: call.cost_nano_usd,
                };
                let earlier = match call.id {
                    Some(id) => self.by_id.insert(id, counted.clone()),
                    None => None,
                };
                match earlier {
                    Some(earlier) => {
                        // Written again: the later copy replaces it (the final figures of a
                        // streamed response, or the same figures once more).
                        if let Some(tokens) = self.per_model.get_mut(&earlier.model) {
                            *tokens = tokens.minus(&earlier.tokens);
                        }
                        if let Some(cost) = earlier.cost_nano_usd {
                            self.costed = self.costed.saturating_sub(1);
                            self.cost_nano_usd = self.cost_nano_usd.saturating_sub(cost);
                        }
                    }
                    None => self.responses = self.responses.saturating_add(1),
                }
                self.per_model
                    .entry(counted.model)
                    .or_default()
                    .add(&counted.tokens);
                if let Some(cost) = counted.cost_nano_usd {
                    self.costed = self.costed.saturating_add(1);
                    self.cost_nano_usd = self.cost_nano_usd.saturating_add(cost);
                }
            }
        }
        self.per_model.retain(|_, tokens| tokens.total() > 0);
    }

    /// This tally with `other`'s (a sub-agent's) folded in: a response both hold, by id,
    /// counts once.
    pub fn absorb(&mut self, other: &Tally) {
        let mut per_model = other.per_model.clone();
        let (mut responses, mut costed, mut cost) =
            (other.responses, other.costed, other.cost_nano_usd);
        for (id, counted) in &other.by_id {
            if !self.by_id.contains_key(id) {
                continue;
            }
            // Both hold it: it counts here already.
            if let Some(tokens) = per_model.get_mut(&counted.model) {
                *tokens = tokens.minus(&counted.tokens);
            }
            responses = responses.saturating_sub(1);
            if let Some(its) = counted.cost_nano_usd {
                costed = costed.saturating_sub(1);
                cost = cost.saturating_sub(its);
            }
        }
        for (id, counted) in &other.by_id {
            self.by_id
                .entry(id.clone())
                .or_insert_with(|| counted.clone());
        }
        for (model, tokens) in &per_model {
            self.per_model.entry(model.clone()).or_default().add(tokens);
        }
        self.per_model.retain(|_, tokens| tokens.total() > 0);
        self.responses = self.responses.saturating_add(responses);
        self.costed = self.costed.saturating_add(costed);
        self.cost_nano_usd = self.cost_nano_usd.saturating_add(cost);
        if self.last.is_none() {
            self.last.clone_from(&other.last);
        }
    }

    /// The tokens per model (a model no record named is [`NO_MODEL`]).
    pub fn per_model(&self) -> impl Iterator<Item = (&str, &Tokens)> {
        self.per_model
            .iter()
            .map(|(model, tokens)| (model.as_str(), tokens))
    }

    /// Every token counted.
    pub fn tokens(&self) -> Tokens {
        let mut sum = Tokens::default();
        for tokens in self.per_model.values() {
            sum.add(tokens);
        }
        sum
    }

    /// The last request's model and its input and cache tokens: how full its context was.
    pub fn last_request(&self) -> Option<(&str, u64)> {
        self.last
            .as_ref()
            .map(|(model, tokens)| (model.as_str(), *tokens))
    }

    /// The context window the CLI itself wrote down, if it did.
    pub fn context_window(&self) -> Option<u64> {
        self.context_window
    }

    /// What the CLI says the session cost, in dollars: only when it wrote a cost with every
    /// response it counted, and not nothing for tokens it counted (a CLI writes 0 for a model it
    /// has no price for, which is no report).
    pub fn reported_cost_usd(&self) -> Option<f64> {
        let every = self.responses > 0 && self.costed == self.responses;
        let something = self.cost_nano_usd > 0 || self.tokens().total() == 0;
        (every && something).then(|| self.cost_nano_usd as f64 / NANO)
    }
}

impl SessionUsage {
    /// The wire figures of a tally; `None` when it holds no usage. A cost the CLI reported is
    /// `reported`; else, until a price is found for it, `unknown`, with every token unpriced.
    /// (`usage::prices` fills in the estimate and the context share.)
    pub fn from_tally(tally: &Tally) -> Option<SessionUsage> {
        if tally.is_empty() {
            return None;
        }
        let tokens = tally.tokens();
        let (cost_usd, cost_basis, priced, unpriced) = match tally.reported_cost_usd() {
            Some(usd) => (Some(usd), CostBasis::Reported, tokens.total(), 0),
            None => (None, CostBasis::Unknown, 0, tokens.total()),
        };
        let context_tokens = tally.last_request().map_or(0, |(_, tokens)| tokens);
        let context_percent = tally
            .context_window()
            .filter(|window| *window > 0)
            .map(|window| percent(context_tokens, window));
        Some(SessionUsage {
            input_tokens: tokens.input,
            output_tokens: tokens.output,
            cache_read_tokens: tokens.cache_read,
            cache_write_tokens: tokens.cache_write,
            models: tally
                .per_model()
                .map(|(model, _)| model.to_owned())
                .filter(|model| model != NO_MODEL)
                .collect(),
            context_tokens,
            context_percent,
            cost_usd,
            cost_basis,
            priced_tokens: priced,
            unpriced_tokens: unpriced,
        })
    }
}

/// `part` of `whole` in percent, to one decimal.
pub fn percent(part: u64, whole: u64) -> f64 {
    (part as f64 * 1000.0 / whole as f64).round() / 10.0
}
