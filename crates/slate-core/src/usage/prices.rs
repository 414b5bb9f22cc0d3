//! The dated price table Slate ships, the config's overrides, each model's context window, and
//! the estimate of a session's cost from its tokens.
//!
//! The table is `prices.toml` beside this file, read in at build time: dollars per million
//! tokens for input, output, cache reads and cache writes, and the context window, for each
//! model whose published page gave them, with the pages and the date they were read. The config's
//! `[prices."<model>"]` sections (`config::spend`) replace a figure or add a model.
//!
//! A model name an agent writes is matched against the table's names, in this order, and never
//! by a guess:
//! 1. exactly (case does not matter);
//! 2. without a provider's prefix: the part after the last `/` (`anthropic/claude-opus-5`);
//! 3. without a dated snapshot suffix: `-YYYYMMDD` (`claude-sonnet-4-5-20250929`),
//!    `-YYYY-MM-DD` (`gpt-5.1-2025-11-13`) or `@YYYYMMDD` (`claude-haiku-4-5@20251001`);
//! 4. both.
//!
//! A name still unmatched has no price: `gpt-5.1-codex` is not `gpt-5.1`, whatever it sounds
//! like.
//!
//! How a cost's basis is chosen ([`estimate`]):
//! - the CLI wrote a cost for every response it counted: `reported`, that figure, every token
//!   covered;
//! - else, some tokens priced: `estimate`, the priced tokens times their prices. When some
//!   tokens have no price (a model the table lacks, or a kind of token the model's entry has no
//!   price for), `unpriced_tokens` counts them and the figure is a floor: every surface shows it
//!   as "≥ $x", never as the whole;
//! - else (nothing priced): `unknown`, no figure, tokens only.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use super::{percent, CostBasis, SessionUsage, Tally, Tokens, NO_MODEL};
use crate::config::spend::{PriceOverride, Rate, MOST_WINDOW};

/// The shipped table's text.
pub const SHIPPED: &str = include_str!("prices.toml");

/// One model's prices and window. A price left out is no price: tokens of that kind are counted
/// as unpriced, never as free.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Price {
    pub input: Option<Rate>,
    pub output: Option<Rate>,
    pub cache_read: Option<Rate>,
    pub cache_write: Option<Rate>,
    pub context_window: Option<u64>,
}

impl Price {
    /// This price with an override's figures over it.
    fn overridden(self, over: &PriceOverride) -> Price {
        Price {
            input: over.input.or(self.input),
            output: over.output.or(self.output),
            cache_read: over.cache_read.or(self.cache_read),
            cache_write: over.cache_write.or(self.cache_write),
            context_window: over.context_window.or(self.context_window),
        }
    }
}

/// The price table: its date, its sources and its models, by lower-case name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Table {
    /// The day the prices were read from the sources (`YYYY-MM-DD`).
    pub date: String,
    /// The published pages the prices come from.
    pub sources: Vec<String>,
    models: BTreeMap<String, Price>,
    /// The names the config's overrides set, so a surface can say a price is the person's own.
    overridden: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    date: String,
    sources: Vec<String>,
    models: BTreeMap<String, PriceOverride>,
}

impl Table {
    /// The table Slate ships (`prices.toml`), parsed once.
    pub fn shipped() -> &'static Table {
        static SHIPPED_TABLE: OnceLock<Table> = OnceLock::new();
        SHIPPED_TABLE.get_or_init(|| Table::parse(SHIPPED).unwrap_or_default())
    }

    /// A table from its text: `date`, `sources` and `[models."<name>"]` sections with the keys
    /// of a config override. An error names what is wrong.
    pub fn parse(text: &str) -> Result<Table, String> {
        let file: File = toml::from_str(text).map_err(|err| err.to_string())?;
        let date_ok = file.date.len() == 10
            && file.date.bytes().enumerate().all(|(at, byte)| {
                matches!(at, 4 | 7) == (byte == b'-') && (byte == b'-' || byte.is_ascii_digit())
            });
        if !date_ok {
            return Err(format!(
                "the table's date {:?} is not YYYY-MM-DD",
                file.date
            ));
        }
        if file.sources.is_empty() {
            return Err("the table names no source".to_owned());
        }
        let models = file
            .models
            .iter()
            .map(|(name, over)| (name.to_ascii_lowercase(), Price::default().overridden(over)))
            .collect();
        Ok(Table {
            date: file.date,
            sources: file.sources,
            models,
            overridden: Vec::new(),
        })
    }

    /// This table with the config's `[prices."<model>"]` over it: each override's figures
    /// replace the figures of the model its name matches (by the rules above), and a name that
    /// matches none adds a model.
    pub fn with_overrides(&self, overrides: &BTreeMap<String, PriceOverride>) -> Table {
        let mut table = self.clone();
        for (name, over) in overrides {
            let key = table
                .matched_name(name)
                .map(str::to_owned)
                .unwrap_or_else(|| name.trim().to_ascii_lowercase());
            let price = table.models.get(&key).copied().unwrap_or_default();
            table.models.insert(key.clone(), price.overridden(over));
            table.overridden.push(key);
        }
        table
    }

    /// The price of the model an agent names, by the matching rules above.
    pub fn price(&self, model: &str) -> Option<&Price> {
        self.matched_name(model)
            .and_then(|name| self.models.get(name))
    }

    /// The table's own name for the model an agent names.
    pub fn matched_name(&self, model: &str) -> Option<&str> {
        candidates(model).into_iter().find_map(|name| {
            self.models
                .get_key_value(&name)
                .map(|(name, _)| name.as_str())
        })
    }

    /// Whether the config set the price of the model an agent names.
    pub fn is_overridden(&self, model: &str) -> bool {
        self.matched_name(model)
            .is_some_and(|name| self.overridden.iter().any(|own| own == name))
    }

    /// Every model the table prices, by name.
    pub fn models(&self) -> impl Iterator<Item = (&str, &Price)> {
        self.models
            .iter()
            .map(|(name, price)| (name.as_str(), price))
    }
}

/// The names to look a model up by, in the order of the matching rules.
fn candidates(model: &str) -> Vec<String> {
    let exact = model.trim().to_ascii_lowercase();
    let bare = exact.rsplit('/').next().unwrap_or_default().to_owned();
    let mut names = vec![exact.clone()];
    for name in [bare.clone(), undated(&exact), undated(&bare)] {
        if !name.is_empty() && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// A name without its dated snapshot suffix (`-YYYYMMDD`, `-YYYY-MM-DD`, `@YYYYMMDD`); the name
/// itself when it has none.
fn undated(name: &str) -> String {
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    let is_date = |text: &str| {
        (text.len() == 8 && digits(text))
            || (text.len() == 10
                && digits(&text[..4])
                && &text[4..5] == "-"
                && digits(&text[5..7])
                && &text[7..8] == "-"
                && digits(&text[8..]))
    };
    for (at, _) in name.char_indices().rev() {
        let (head, tail) = name.split_at(at);
        if (tail.starts_with('-') || tail.starts_with('@'))
            && is_date(&tail[1..])
            && !head.is_empty()
        {
            return head.to_owned();
        }
    }
    name.to_owned()
}

/// What a session's tokens cost, and what that figure is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// Dollars: the CLI's figure, or the estimate of the priced tokens; `None` when unknown.
    pub usd: Option<f64>,
    pub basis: CostBasis,
    /// The tokens the figure covers, and those it leaves out.
    pub priced_tokens: u64,
    pub unpriced_tokens: u64,
}

impl Cost {
    /// Whether the figure leaves tokens out, so it is a floor ("≥ $x").
    pub fn is_partial(&self) -> bool {
        self.basis == CostBasis::Estimate && self.unpriced_tokens > 0
    }
}

/// The cost of `tokens_by_model` (as a tally holds them; a model [`NO_MODEL`] has no price),
/// with what the CLI `reported`, if it did; the basis as the module's paragraph says.
pub fn estimate<'a>(
    tokens_by_model: impl IntoIterator<Item = (&'a str, &'a Tokens)>,
    reported_usd: Option<f64>,
    table: &Table,
) -> Cost {
    let mut priced = 0u64;
    let mut unpriced = 0u64;
    let mut picodollars = 0u128;
    let mut every_model = true;
    for (model, tokens) in tokens_by_model {
        let price = (model != NO_MODEL).then(|| table.price(model)).flatten();
        every_model &= price.is_some();
        let kinds = [
            (tokens.input, price.and_then(|p| p.input)),
            (tokens.output, price.and_then(|p| p.output)),
            (tokens.cache_read, price.and_then(|p| p.cache_read)),
            (tokens.cache_write, price.and_then(|p| p.cache_write)),
        ];
        for (count, rate) in kinds {
            match rate {
                Some(rate) => {
                    priced = priced.saturating_add(count);
                    picodollars += u128::from(count) * u128::from(rate.picodollars());
                }
                None => unpriced = unpriced.saturating_add(count),
            }
        }
    }
    if let Some(usd) = reported_usd {
        return Cost {
            usd: Some(usd),
            basis: CostBasis::Reported,
            priced_tokens: priced.saturating_add(unpriced),
            unpriced_tokens: 0,
        };
    }
    // Nothing to price at all is an estimate of nothing only when every model has a price.
    if priced > 0 || (unpriced == 0 && every_model) {
        return Cost {
            usd: Some(picodollars as f64 / 1e12),
            basis: CostBasis::Estimate,
            priced_tokens: priced,
            unpriced_tokens: unpriced,
        };
    }
    Cost {
        usd: None,
        basis: CostBasis::Unknown,
        priced_tokens: 0,
        unpriced_tokens: unpriced,
    }
}

/// How full the last request's context was, in percent: its input and cache tokens against the
/// window the CLI wrote down, else the table's window for its model; `None` when neither is
/// known.
pub fn context_percent(
    context_tokens: u64,
    model: Option<&str>,
    cli_window: Option<u64>,
    table: &Table,
) -> Option<f64> {
    let window = cli_window
        .filter(|window| (1..=MOST_WINDOW).contains(window))
        .or_else(|| table.price(model?)?.context_window)?;
    Some(percent(context_tokens, window))
}

/// A tally's wire figures, priced by `table`: the cost and its basis, the coverage, and the
/// context's share of the window. `None` when the tally holds no usage ("not recorded").
pub fn session_usage(tally: &Tally, table: &Table) -> Option<SessionUsage> {
    let mut usage = SessionUsage::from_tally(tally)?;
    let cost = estimate(tally.per_model(), tally.reported_cost_usd(), table);
    usage.cost_usd = cost.usd;
    usage.cost_basis = cost.basis;
    usage.priced_tokens = cost.priced_tokens;
    usage.unpriced_tokens = cost.unpriced_tokens;
    let model = tally.last_request().map(|(model, _)| model);
    usage.context_percent = context_percent(
        usage.context_tokens,
        model.filter(|model| *model != NO_MODEL),
        tally.context_window(),
        table,
    );
    Some(usage)
}
