//! What a session's model calls used: tokens per model, counted once per API response, from the
//! agent's own records; and, in `usage::prices`, what that is estimated to cost.
//!
//! A session whose CLI records no usage has none here (`None` on the wire, "not recorded" on
//! screen), never zeros. Every cost says what it is: `reported` (the CLI wrote the figure),
//! `estimate` (tokens times a dated price table) or `unknown` (a model the table does not price).

use serde::{Deserialize, Serialize};

pub mod prices;

/// The tokens of one response, or a sum of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// Input tokens not read from or written to the prompt cache.
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Tokens {
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }

    pub fn add(&mut self, other: &Tokens) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
    }
}

/// Where a cost figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CostBasis {
    /// The CLI wrote the cost itself (OpenCode, Kilo Code).
    Reported,
    /// Tokens times the price table (shipped, or the config's override).
    Estimate,
    /// A model the table does not price: tokens only, no cost.
    Unknown,
}
