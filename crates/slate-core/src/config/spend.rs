//! `[prices."<model>"]` and `[budget]`: a person's own prices for a model, over the table Slate
//! ships (`usage::prices`), and the opt-in amounts whose crossing notifies once.
//!
//! ```toml
//! [prices."claude-opus-5-5"]      # the model's name as the agent writes it
//! input = 3.2                     # US dollars per million tokens
//! output = 16.0
//! cache_read = 0.16
//! cache_write = 4.0
//! context_window = 1_000_000      # tokens
//!
//! [budget]
//! session_usd = 5.0               # one session's estimate or reported cost
//! day_usd = 40.0                  # every session's, over the local day
//! ```
//!
//! A price is a number of dollars from 0 to [`MOST_PRICE`]; a context window a whole number of
//! tokens from 1 to [`MOST_WINDOW`]; a budget a number of dollars above 0 up to
//! [`MOST_BUDGET`]. Anything else is an error that names the key and what it takes.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The most a price may be, in dollars per million tokens: well above any published rate.
pub const MOST_PRICE: f64 = 10_000.0;

/// The largest context window the config takes, in tokens.
pub const MOST_WINDOW: u64 = 100_000_000;

/// The largest budget the config takes, in dollars.
pub const MOST_BUDGET: f64 = 1_000_000.0;

/// The longest model name a `[prices."<model>"]` section may have.
pub const MODEL_NAME_LIMIT: usize = 200;

/// A price per token, in millionths of a millionth of a dollar (picodollars), so prices and
/// their sums are whole numbers: one dollar per million tokens is 1,000,000.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rate(u64);

impl Rate {
    /// A rate from dollars per million tokens; `None` for a figure out of range.
    pub fn per_million(usd: f64) -> Option<Rate> {
        (usd.is_finite() && (0.0..=MOST_PRICE).contains(&usd))
            .then(|| Rate((usd * 1_000_000.0).round() as u64))
    }

    /// Picodollars per token.
    pub fn picodollars(self) -> u64 {
        self.0
    }

    /// Dollars per million tokens.
    pub fn usd_per_million(self) -> f64 {
        self.0 as f64 / 1_000_000.0
    }
}

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Rate, D::Error> {
        let usd = dollars(deserializer, "a price")?;
        Rate::per_million(usd).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "a price is dollars per million tokens, from 0 to {MOST_PRICE}, not {usd}"
            ))
        })
    }
}

impl Serialize for Rate {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.usd_per_million())
    }
}

/// An amount of money, in billionths of a dollar (whole numbers, so sums never drift).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Usd(u64);

impl Usd {
    /// An amount from dollars; `None` for a figure out of range (budgets are above 0).
    pub fn dollars(usd: f64) -> Option<Usd> {
        (usd.is_finite() && usd > 0.0 && usd <= MOST_BUDGET)
            .then(|| Usd((usd * 1e9).round() as u64))
    }

    /// The amount in dollars.
    pub fn usd(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

impl fmt::Display for Usd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "${:.2}", self.usd())
    }
}

impl<'de> Deserialize<'de> for Usd {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Usd, D::Error> {
        let usd = dollars(deserializer, "a budget")?;
        Usd::dollars(usd).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "a budget is dollars, above 0 and at most {MOST_BUDGET}, not {usd}"
            ))
        })
    }
}

impl Serialize for Usd {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.usd())
    }
}

/// A number of dollars as TOML writes it: a float or an integer.
fn dollars<'de, D: Deserializer<'de>>(deserializer: D, what: &str) -> Result<f64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Number {
        Integer(i64),
        Float(f64),
    }
    match Number::deserialize(deserializer) {
        Ok(Number::Integer(n)) => Ok(n as f64),
        Ok(Number::Float(n)) => Ok(n),
        Err(_) => Err(serde::de::Error::custom(format!(
            "{what} is a number of dollars, like 3.5"
        ))),
    }
}

/// A context window in tokens, from 1 to [`MOST_WINDOW`].
fn window<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    let tokens = i64::deserialize(deserializer).map_err(|_| {
        serde::de::Error::custom("a context window is a whole number of tokens, like 200000")
    })?;
    u64::try_from(tokens)
        .ok()
        .filter(|tokens| (1..=MOST_WINDOW).contains(tokens))
        .map(Some)
        .ok_or_else(|| {
            serde::de::Error::custom(format!(
                "a context window is from 1 to {MOST_WINDOW} tokens, not {tokens}"
            ))
        })
}

/// One `[prices."<model>"]` section: any of the four prices and the window. A key left out
/// keeps the shipped table's figure for that model, if it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceOverride {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<Rate>,
    #[serde(
        default,
        deserialize_with = "window",
        skip_serializing_if = "Option::is_none"
    )]
    pub context_window: Option<u64>,
}

/// `[prices]`: the overrides by model name. A name is matched as the shipped table's names are
/// (`usage::prices`): exactly, or without a dated suffix or a provider's prefix.
pub fn price_overrides<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, PriceOverride>, D::Error> {
    let table = BTreeMap::<String, PriceOverride>::deserialize(deserializer)?;
    for name in table.keys() {
        if name.trim().is_empty()
            || name.len() > MODEL_NAME_LIMIT
            || name.chars().any(char::is_control)
        {
            return Err(serde::de::Error::custom(format!(
                "{:?} is no model name: [prices.\"<model>\"] takes the name as the agent writes it",
                name.chars().take(40).collect::<String>()
            )));
        }
    }
    Ok(table)
}

/// `[budget]`: amounts whose crossing sends one notification. None by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Budget {
    /// One session's cost (`reported`, or the estimate of what is priced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_usd: Option<Usd>,
    /// Every session's cost over the local day.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub day_usd: Option<Usd>,
}

impl Budget {
    /// Whether any amount is set.
    pub fn is_on(&self) -> bool {
        self.session_usd.is_some() || self.day_usd.is_some()
    }
}
