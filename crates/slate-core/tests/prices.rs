//! `usage::prices`: the shipped table, the name rules, the config's overrides and budget, and
//! the estimate with its basis and coverage.

use std::collections::BTreeMap;

use slate_core::config::{Config, ConfigError};
use slate_core::usage::prices::{context_percent, estimate, session_usage, Table};
use slate_core::usage::{Call, CostBasis, Tally, Tokens, NO_MODEL};

fn tokens(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Tokens {
    Tokens {
        input,
        output,
        cache_read,
        cache_write,
    }
}

fn close(got: Option<f64>, want: f64) {
    let got = got.expect("a figure");
    assert!((got - want).abs() < 1e-9, "got {got}, want {want}");
}

#[test]
fn the_shipped_table_parses_and_names_its_date_and_sources() {
    let table = Table::parse(slate_core::usage::prices::SHIPPED).expect("the shipped table parses");
    assert_eq!(&table, Table::shipped());
    assert_eq!(table.date, "2026-12-07");
    assert!(table
        .sources
        .iter()
        .all(|source| source.starts_with("https://")));
    assert!(table.sources.len() >= 2);
    // Every model has at least its input and output prices.
    for (name, price) in table.models() {
        assert!(price.input.is_some() && price.output.is_some(), "{name}");
    }
    let opus = table.price("claude-opus-5-5").expect("claude-opus-5-5");
    assert_eq!(opus.input.map(|r| r.usd_per_million()), Some(4.0));
    assert_eq!(opus.cache_read.map(|r| r.usd_per_million()), Some(0.2));
    assert_eq!(opus.context_window, Some(1_000_000));
    // OpenAI has no cache-write price: none is made up.
    assert_eq!(table.price("gpt-5.1").and_then(|p| p.cache_write), None);
}

#[test]
fn a_table_without_a_date_or_source_or_with_a_bad_figure_is_refused() {
    let model = "[models.\"m\"]\ninput = 1.0\noutput = 2.0\n";
    let no_date = format!("sources = [\"https://example.com\"]\n{model}");
    assert!(Table::parse(&no_date).unwrap_err().contains("date"));
    let bad_date = format!("date = \"7 Dec\"\nsources = [\"https://example.com\"]\n{model}");
    assert!(Table::parse(&bad_date).unwrap_err().contains("YYYY-MM-DD"));
    let no_source = format!("date = \"2026-12-07\"\nsources = []\n{model}");
    assert!(Table::parse(&no_source).unwrap_err().contains("no source"));
    let negative = "date = \"2026-12-07\"\nsources = [\"https://example.com\"]\n\
                    [models.\"m\"]\ninput = -1.0\n";
    assert!(Table::parse(negative)
        .unwrap_err()
        .contains("a price is dollars"));
}

#[test]
fn dated_and_prefixed_names_match_their_model_and_nothing_is_guessed() {
    let table = Table::shipped();
    for (written, name) in [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-haiku-4-5@20251001", "claude-haiku-4-5"),
        ("gpt-5.1-2025-11-13", "gpt-5.1"),
        ("anthropic/claude-opus-5", "claude-opus-5"),
        ("openai/gpt-5.1-2025-11-13", "gpt-5.1"),
        ("Claude-Opus-5-5", "claude-opus-5-5"),
        ("  claude-opus-4-8 ", "claude-opus-4-8"),
    ] {
        assert_eq!(table.matched_name(written), Some(name), "{written}");
    }
    for unknown in [
        "gpt-5.1-codex",     // a sibling, not the model
        "claude-opus-5-5x",  // one letter more
        "claude-opus-5-5-1", // not a date
        "claude-opus-5-5-2026121",
        "claude-opus",
        "opus",
        "fake-model",
        "",
        NO_MODEL,
    ] {
        assert_eq!(table.matched_name(unknown), None, "{unknown:?}");
    }
    // A dated name whose base is not in the table stays unknown.
    assert_eq!(table.matched_name("gemini-3-pro-20261001"), None);
}

#[test]
fn the_config_overrides_a_figure_and_adds_a_model() {
    let config = Config::parse(
        "[prices.\"claude-opus-5-5-20261001\"]\ninput = 3.2\n\n\
         [prices.\"qwen3-coder-plus\"]\ninput = 1\noutput = 5\ncontext_window = 1_000_000\n",
    )
    .expect("valid");
    let table = Table::shipped().with_overrides(&config.prices);
    let opus = table.price("claude-opus-5-5").expect("priced");
    // The figure set is the person's; the rest stay the shipped ones.
    assert_eq!(opus.input.map(|r| r.usd_per_million()), Some(3.2));
    assert_eq!(opus.output.map(|r| r.usd_per_million()), Some(20.0));
    assert!(table.is_overridden("claude-opus-5-5"));
    assert!(!table.is_overridden("claude-opus-5"));
    let qwen = table.price("qwen3-coder-plus").expect("added");
    assert_eq!(qwen.context_window, Some(1_000_000));
    assert_eq!(qwen.cache_read, None);
    // The shipped table itself is untouched.
    assert_eq!(
        Table::shipped()
            .price("claude-opus-5-5")
            .and_then(|p| p.input)
            .map(|r| r.usd_per_million()),
        Some(4.0)
    );
    assert!(Table::shipped().price("qwen3-coder-plus").is_none());
}

fn invalid(text: &str) -> (Option<String>, String) {
    match Config::parse(text) {
        Err(ConfigError::Invalid { key, message, .. }) => (key, message),
        other => panic!("{text:?} parsed as {other:?}"),
    }
}

#[test]
fn a_malformed_price_or_budget_is_an_error_that_names_the_key() {
    for (text, key, says) in [
        (
            "[prices.\"m\"]\ninput = -1\n",
            "input",
            "a price is dollars",
        ),
        (
            "[prices.\"m\"]\noutput = \"cheap\"\n",
            "output",
            "a number of dollars",
        ),
        (
            "[prices.\"m\"]\ncache_read = 1e9\n",
            "cache_read",
            "from 0 to",
        ),
        (
            "[prices.\"m\"]\ncache_write = nan\n",
            "cache_write",
            "a price is dollars",
        ),
        (
            "[prices.\"m\"]\ncontext_window = 0\n",
            "context_window",
            "from 1 to",
        ),
        (
            "[prices.\"m\"]\ncontext_window = 2.5\n",
            "context_window",
            "whole number",
        ),
        ("[prices.\"m\"]\ninptu = 1\n", "inptu", "unknown field"),
        ("[budget]\nsession_usd = 0\n", "session_usd", "above 0"),
        ("[budget]\nday_usd = -5\n", "day_usd", "above 0"),
        ("[budget]\nday = 5\n", "day", "unknown field"),
    ] {
        let (named, message) = invalid(text);
        assert!(
            named.as_deref() == Some(key) || message.contains(key),
            "{text:?}: key {named:?}, {message}"
        );
        assert!(message.contains(says), "{text:?}: {message}");
    }
    let (_, message) = invalid("[prices.\"\"]\ninput = 1\n");
    assert!(message.contains("no model name"), "{message}");
}

#[test]
fn the_budget_is_off_unless_set() {
    let config = Config::parse("").expect("empty");
    assert!(!config.budget.is_on());
    assert!(config.prices.is_empty());
    let config = Config::parse("[budget]\nsession_usd = 5\nday_usd = 40.5\n").expect("valid");
    assert_eq!(config.budget.session_usd.map(|usd| usd.usd()), Some(5.0));
    assert_eq!(config.budget.day_usd.map(|usd| usd.usd()), Some(40.5));
}

#[test]
fn tokens_of_priced_models_are_an_estimate_with_every_kind_priced() {
    let opus = tokens(1_000_000, 100_000, 2_000_000, 200_000);
    let haiku = tokens(500_000, 10_000, 0, 0);
    let cost = estimate(
        [
            ("claude-opus-5-5", &opus),
            ("claude-haiku-4-5-20251001", &haiku),
        ],
        None,
        Table::shipped(),
    );
    // 4 + 2 + 0.40 + 1.00 for Opus 5.5, 0.50 + 0.05 for Haiku 4.5.
    close(cost.usd, 7.95);
    assert_eq!(cost.basis, CostBasis::Estimate);
    assert_eq!(cost.priced_tokens, opus.total() + haiku.total());
    assert_eq!(cost.unpriced_tokens, 0);
    assert!(!cost.is_partial());
}

#[test]
fn mixed_priced_and_unpriced_tokens_give_a_partial_estimate_with_the_coverage() {
    let opus = tokens(1_000_000, 0, 0, 0);
    let unknown = tokens(300, 200, 100, 0);
    let nameless = tokens(7, 0, 0, 0);
    // OpenAI has no cache-write price: those tokens are unpriced, never free.
    let gpt = tokens(1_000_000, 0, 0, 50);
    let cost = estimate(
        [
            ("claude-opus-5-5", &opus),
            ("gemini-3-pro", &unknown),
            (NO_MODEL, &nameless),
            ("gpt-5.1", &gpt),
        ],
        None,
        Table::shipped(),
    );
    close(cost.usd, 4.0 + 1.25);
    assert_eq!(cost.basis, CostBasis::Estimate);
    assert_eq!(cost.priced_tokens, 2_000_000);
    assert_eq!(cost.unpriced_tokens, 600 + 7 + 50);
    assert!(cost.is_partial());
}

#[test]
fn tokens_of_no_priced_model_are_unknown_with_no_figure() {
    let unknown = tokens(300, 200, 100, 0);
    let cost = estimate([("gemini-3-pro", &unknown)], None, Table::shipped());
    assert_eq!(cost.usd, None);
    assert_eq!(cost.basis, CostBasis::Unknown);
    assert_eq!((cost.priced_tokens, cost.unpriced_tokens), (0, 600));
    // A model with no name is no priced model either.
    let cost = estimate([(NO_MODEL, &unknown)], None, Table::shipped());
    assert_eq!(cost.basis, CostBasis::Unknown);
}

#[test]
fn a_cost_the_cli_reported_wins_over_the_estimate() {
    let opus = tokens(1_000_000, 0, 0, 0);
    let unknown = tokens(10, 0, 0, 0);
    let cost = estimate(
        [("claude-opus-5-5", &opus), ("gemini-3-pro", &unknown)],
        Some(0.42),
        Table::shipped(),
    );
    assert_eq!(cost.usd, Some(0.42));
    assert_eq!(cost.basis, CostBasis::Reported);
    assert_eq!((cost.priced_tokens, cost.unpriced_tokens), (1_000_010, 0));
}

#[test]
fn the_context_share_uses_the_clis_window_else_the_tables() {
    let table = Table::shipped();
    assert_eq!(
        context_percent(136_000, Some("gpt-5.1"), Some(272_000), table),
        Some(50.0)
    );
    assert_eq!(
        context_percent(100_000, Some("claude-haiku-4-5-20251001"), None, table),
        Some(50.0)
    );
    // No window known: no share, rather than a guess.
    assert_eq!(
        context_percent(100_000, Some("claude-opus-4-8"), None, table),
        None
    );
    assert_eq!(context_percent(100_000, None, None, table), None);
    assert_eq!(
        context_percent(100_000, Some("gemini-3-pro"), None, table),
        None
    );
}

#[test]
fn a_tally_is_priced_on_the_wire_and_none_stays_not_recorded() {
    let table = Table::shipped();
    assert_eq!(session_usage(&Tally::default(), table), None);
    let mut tally = Tally::default();
    tally.add(
        Call::response(
            Some("msg_1".to_owned()),
            Some("claude-opus-5-5".to_owned()),
            tokens(1_000, 500, 99_000, 0),
        ),
        None,
    );
    tally.add(
        Call::response(Some("msg_2".to_owned()), None, tokens(2_000, 0, 0, 0)),
        Some("mystery-model"),
    );
    let usage = session_usage(&tally, table).expect("recorded");
    assert_eq!(usage.cost_basis, CostBasis::Estimate);
    // 1000 × 4 + 500 × 20 + 99000 × 0.20 per million.
    close(usage.cost_usd, 0.004 + 0.01 + 0.0198);
    assert_eq!(
        (usage.priced_tokens, usage.unpriced_tokens),
        (100_500, 2_000)
    );
    // The last request was the unknown model's: no window, no share.
    assert_eq!(usage.context_tokens, 2_000);
    assert_eq!(usage.context_percent, None);
    let mut overrides = BTreeMap::new();
    overrides.insert(
        "mystery-model".to_owned(),
        Config::parse("[prices.\"mystery-model\"]\ninput = 1\ncontext_window = 8000\n")
            .expect("valid")
            .prices["mystery-model"],
    );
    let usage = session_usage(&tally, &table.with_overrides(&overrides)).expect("recorded");
    assert_eq!(usage.unpriced_tokens, 0);
    assert_eq!(usage.context_percent, Some(25.0));
}
