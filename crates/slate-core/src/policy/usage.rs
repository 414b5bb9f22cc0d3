//! Sessions' usage summed by session, project, agent or day: what `slate usage`, the API's
//! `/usage` and the window's day total show.
//!
//! A sum says what it is as each session's figure does. Its basis is `reported` only when every
//! session in it reported its cost; `estimate` when any figure in it is an estimate; `unknown`
//! when no session in it has a figure. Tokens with no price, and every token of a session whose
//! cost is unknown, count as unpriced, so a sum that leaves tokens out shows as a floor. A
//! session with no usage recorded adds no tokens and no zeros: it is counted as `not_recorded`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{Session, Timestamp};
use crate::usage::{CostBasis, SessionUsage};

/// How the sessions are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum By {
    #[default]
    Session,
    Project,
    Agent,
    /// The UTC day of each session's last activity.
    Day,
}

impl By {
    /// By its name, as the command line and the API take it.
    pub fn parse(name: &str) -> Option<By> {
        match name {
            "session" => Some(By::Session),
            "project" => Some(By::Project),
            "agent" => Some(By::Agent),
            "day" => Some(By::Day),
            _ => None,
        }
    }
}

/// One group's sums.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The session's id, the project, the agent's id or the day (`YYYY-MM-DD`).
    pub key: String,
    pub sessions: u64,
    /// Sessions in the group whose agent recorded no usage.
    pub not_recorded: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub cost_usd: Option<f64>,
    pub cost_basis: CostBasis,
    pub priced_tokens: u64,
    pub unpriced_tokens: u64,
    /// Sessions with a figure, and those of them reported.
    #[serde(skip)]
    costed: u64,
    #[serde(skip)]
    reported: u64,
}

impl Row {
    fn new(key: String) -> Row {
        Row {
            key,
            sessions: 0,
            not_recorded: 0,
            input_tokens: 0,
            output_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            cost_usd: None,
            cost_basis: CostBasis::Unknown,
            priced_tokens: 0,
            unpriced_tokens: 0,
            costed: 0,
            reported: 0,
        }
    }

    /// Whether the figure leaves tokens out, so it is a floor ("≥ $x").
    pub fn is_partial(&self) -> bool {
        self.cost_usd.is_some() && self.unpriced_tokens > 0
    }

    fn add(&mut self, usage: Option<&SessionUsage>) {
        self.sessions += 1;
        let Some(usage) = usage else {
            self.not_recorded += 1;
            return;
        };
        self.input_tokens = self.input_tokens.saturating_add(usage.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(usage.output_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(usage.cache_read_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(usage.cache_write_tokens);
        match usage.cost_usd {
            Some(usd) => {
                self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + usd);
                self.priced_tokens = self.priced_tokens.saturating_add(usage.priced_tokens);
                self.unpriced_tokens = self.unpriced_tokens.saturating_add(usage.unpriced_tokens);
                self.costed += 1;
                if usage.cost_basis == CostBasis::Reported {
                    self.reported += 1;
                }
            }
            None => {
                let all = usage
                    .input_tokens
                    .saturating_add(usage.output_tokens)
                    .saturating_add(usage.cache_read_tokens)
                    .saturating_add(usage.cache_write_tokens);
                self.unpriced_tokens = self.unpriced_tokens.saturating_add(all);
            }
        }
        self.cost_basis = if self.costed == 0 {
            CostBasis::Unknown
        } else if self.reported == self.costed && self.unpriced_tokens == 0 {
            CostBasis::Reported
        } else {
            CostBasis::Estimate
        };
    }
}

/// One session as a sum reads it: a live or read session, or totals the store kept.
#[derive(Debug, Clone, Copy)]
pub struct Item<'a> {
    pub id: &'a str,
    pub project: Option<&'a str>,
    pub agent: &'a str,
    /// Its last activity.
    pub at: Option<Timestamp>,
    pub usage: Option<&'a SessionUsage>,
}

impl<'a> From<&'a Session> for Item<'a> {
    fn from(session: &'a Session) -> Item<'a> {
        Item {
            id: session.id.as_str(),
            project: session.project.as_deref(),
            agent: session.agent.as_str(),
            at: session.row_time,
            usage: session.usage.as_ref(),
        }
    }
}

/// The items' usage summed by `by`, with the sum of all of them; the groups in the order of
/// their keys (days oldest first).
pub fn summarize<'a>(items: impl IntoIterator<Item = Item<'a>>, by: By) -> (Vec<Row>, Row) {
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    let mut total = Row::new("total".to_owned());
    for item in items {
        let key = match by {
            By::Session => item.id.to_owned(),
            By::Project => item.project.unwrap_or("unknown project").to_owned(),
            By::Agent => item.agent.to_owned(),
            By::Day => item.at.map_or_else(|| "unknown day".to_owned(), day_name),
        };
        rows.entry(key.clone())
            .or_insert_with(|| Row::new(key))
            .add(item.usage);
        total.add(item.usage);
    }
    (rows.into_values().collect(), total)
}

/// The UTC day of a time, `YYYY-MM-DD`.
pub fn day_name(at: Timestamp) -> String {
    at.to_rfc3339().chars().take(10).collect()
}

/// A cost as every surface writes it: "$1.23 (reported)", "$1.23 (estimate)", "≥ $1.23
/// (estimate)" when tokens are left out, "unknown" when nothing is priced. Never a bare figure.
pub fn cost_text(cost_usd: Option<f64>, basis: CostBasis, unpriced_tokens: u64) -> String {
    match (cost_usd, basis) {
        (None, _) | (_, CostBasis::Unknown) => "unknown (no price)".to_owned(),
        (Some(usd), CostBasis::Reported) => format!("${usd:.2} (reported)"),
        (Some(usd), CostBasis::Estimate) if unpriced_tokens > 0 => {
            format!("≥ ${usd:.2} (estimate)")
        }
        (Some(usd), CostBasis::Estimate) => format!("${usd:.2} (estimate)"),
    }
}

/// A token count short: 950, 12.3k, 4.56M.
pub fn tokens_text(tokens: u64) -> String {
    match tokens {
        0..=999 => tokens.to_string(),
        1_000..=999_999 => format!("{:.1}k", tokens as f64 / 1e3),
        _ => format!("{:.2}M", tokens as f64 / 1e6),
    }
}

/// A session's usage in one line, for `slate show` and the window: "not recorded" when its agent
/// recorded none.
pub fn usage_line(usage: Option<&SessionUsage>) -> String {
    let Some(usage) = usage else {
        return "not recorded".to_owned();
    };
    let mut line = format!(
        "{} in, {} out, {} cache read, {} cache write · {}",
        tokens_text(usage.input_tokens),
        tokens_text(usage.output_tokens),
        tokens_text(usage.cache_read_tokens),
        tokens_text(usage.cache_write_tokens),
        cost_text(usage.cost_usd, usage.cost_basis, usage.unpriced_tokens)
    );
    if usage.unpriced_tokens > 0 && usage.cost_usd.is_some() {
        line.push_str(&format!(
            ", {} tokens unpriced",
            tokens_text(usage.unpriced_tokens)
        ));
    }
    line
}

/// `since` as a person writes it: a duration back from `now` (`90m`, `24h`, `7d`), a day
/// (`2026-12-01`, from its UTC midnight) or an RFC 3339 time. An error says what it takes.
pub fn since(text: &str, now: Timestamp) -> Result<Timestamp, String> {
    let text = text.trim();
    let unit = |suffix: char, seconds: u64| -> Option<Timestamp> {
        let count: u64 = text.strip_suffix(suffix)?.parse().ok()?;
        let back = std::time::Duration::from_secs(count.checked_mul(seconds)?);
        (back <= std::time::Duration::from_secs(100 * 365 * 24 * 3600)).then(|| now.minus(back))
    };
    if let Some(at) = unit('m', 60)
        .or_else(|| unit('h', 3600))
        .or_else(|| unit('d', 24 * 3600))
    {
        return Ok(at);
    }
    let day = (text.len() == 10)
        .then(|| Timestamp::parse_rfc3339(&format!("{text}T00:00:00Z")))
        .flatten();
    day.or_else(|| Timestamp::parse_rfc3339(text))
        .ok_or_else(|| {
            format!(
            "{:?} is not a time: write 24h, 7d, 90m, a day like 2026-12-01, or an RFC 3339 time",
            text.chars().take(40).collect::<String>()
        )
        })
}
