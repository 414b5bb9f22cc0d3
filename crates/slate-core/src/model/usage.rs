//! What an agent's records say its model calls used, as plain data: the four token figures
//! (`Tokens`), one usage record as an adapter reads it (`Call`), the readers of a figure that
//! keep a hostile one out of every sum (`count`, `tokens`, `cost_usd`), and a session's usage as
//! the wire carries it (`SessionUsage`). The fold of a session's records, and the prices, are
//! `usage`'s.

use serde::{Deserialize, Serialize};

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

    /// This minus `other`, field by field, never below zero.
    pub fn minus(&self, other: &Tokens) -> Tokens {
        Tokens {
            input: self.input.saturating_sub(other.input),
            output: self.output.saturating_sub(other.output),
            cache_read: self.cache_read.saturating_sub(other.cache_read),
            cache_write: self.cache_write.saturating_sub(other.cache_write),
        }
    }

    /// What a request's context held: its input and cache tokens.
    pub fn context(&self) -> u64 {
        self.input
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

/// The most tokens one response can use, or one running total can reach, before the figure reads
/// as nonsense rather than usage: a thousand times the largest context window there is, for
/// thousands of responses. A figure above it is refused, never summed.
pub const MOST_TOKENS: u64 = 1 << 40;

/// The most a CLI can say one response cost, in dollars, before the figure reads as nonsense.
pub const MOST_COST_USD: f64 = 100_000.0;

/// Billionths of a dollar: costs are summed as integers, so a sum never drifts.
pub(crate) const NANO: f64 = 1e9;

/// One record of what model calls used, as an agent wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The response's own id (Claude Code's `message.id`, a message row's id). A later call with
    /// the same id replaces the earlier one, so a response written twice, or a file rewritten in
    /// place, counts once. `None` where the CLI writes no id: each such call counts.
    pub id: Option<String>,
    /// The model that answered, where the record says; else the session's model at that point.
    pub model: Option<String>,
    pub tokens: Tokens,
    /// What the CLI itself says the response cost, in billionths of a dollar.
    pub cost_nano_usd: Option<u64>,
    /// The context window the CLI says the model has (Codex writes it).
    pub context_window: Option<u64>,
    pub counting: Counting,
}

/// How a usage record counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counting {
    /// One response's tokens.
    Response,
    /// The session's tokens so far, as a running total (Codex's `total_token_usage`), or one
    /// model's (Copilot's `providerModelMetrics`, when the call names the model), with the last
    /// response's own tokens for the context figure (none: zeros). A later total replaces an earlier one;
    /// a total lower than the one before starts a new count (a new process on the same file)
    /// and adds to what was counted. A session whose responses count by id takes no tokens from
    /// a running total, only the context.
    RunningTotal { last: Tokens },
}

impl Call {
    /// One response's usage.
    pub fn response(id: Option<String>, model: Option<String>, tokens: Tokens) -> Call {
        Call {
            id: id.filter(|id| !id.is_empty()),
            model: model.filter(|model| !model.trim().is_empty()),
            tokens,
            cost_nano_usd: None,
            context_window: None,
            counting: Counting::Response,
        }
    }

    /// The same, with what the CLI says it cost (dollars, as read by [`cost_usd`]).
    pub fn with_cost(mut self, usd: Option<f64>) -> Call {
        self.cost_nano_usd = usd.map(|usd| (usd * NANO).round() as u64);
        self
    }
}

/// A token figure as an agent wrote it, read: a whole number from 0 to [`MOST_TOKENS`] (a JSON
/// integer, or a float with no fraction) under `field` of the object `usage`. Absent or `null` is
/// 0 (older versions leave cache fields out). Anything else (a `usage` that is no object, a
/// negative figure, text, a fraction, a huge number) is an error that names what it was
/// (`usage input_tokens of JSON string`, an unread record's name): the caller drops the whole
/// record and counts it as unread, so a hostile figure never reaches a sum.
pub fn count(usage: &serde_json::Value, field: &str) -> Result<u64, String> {
    let Some(object) = usage.as_object() else {
        return Err(format!("usage of JSON {}", json_kind(usage)));
    };
    let Some(value) = object.get(field).filter(|value| !value.is_null()) else {
        return Ok(0);
    };
    let read = match value {
        serde_json::Value::Number(number) => number.as_u64().or_else(|| {
            let float = number.as_f64()?;
            (float.is_finite() && float >= 0.0 && float.fract() == 0.0 && float < 2e18)
                .then_some(float as u64)
        }),
        _ => None,
    };
    match read {
        Some(tokens) if tokens <= MOST_TOKENS => Ok(tokens),
        _ => Err(format!("usage {field} of JSON {}", json_kind(value))),
    }
}

/// The four figures of `usage` named `[input, output, cache read, cache write]` by [`count`]
/// (a name `""` is a figure the format does not have: 0).
pub fn tokens(usage: &serde_json::Value, names: [&str; 4]) -> Result<Tokens, String> {
    let read = |name: &str| {
        if name.is_empty() {
            Ok(0)
        } else {
            count(usage, name)
        }
    };
    Ok(Tokens {
        input: read(names[0])?,
        output: read(names[1])?,
        cache_read: read(names[2])?,
        cache_write: read(names[3])?,
    })
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// A cost as an agent wrote it, in dollars: a finite number from 0 to [`MOST_COST_USD`];
/// anything else is no cost at all (`None`), and the tokens stand without one.
pub fn cost_usd(value: Option<&serde_json::Value>) -> Option<f64> {
    let usd = value?.as_f64()?;
    (usd.is_finite() && (0.0..=MOST_COST_USD).contains(&usd)).then_some(usd)
}

/// A session's usage as the wire carries it (`usage` on a session object, docs/api.md). Absent
/// when the agent recorded none: never zeros for "not recorded".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionUsage {
    /// Input tokens not read from or written to the prompt cache.
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// The models that answered, by name (empty when no record named one).
    pub models: Vec<String>,
    /// The last request's input and cache tokens: what its context held.
    pub context_tokens: u64,
    /// `context_tokens` against the model's window, where both are known.
    pub context_percent: Option<f64>,
    pub cost_usd: Option<f64>,
    pub cost_basis: CostBasis,
    /// The tokens a price covers, and those none does: the estimate's coverage.
    pub priced_tokens: u64,
    pub unpriced_tokens: u64,
}
