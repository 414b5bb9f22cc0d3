//! `slate usage` and `slate show` over a temp HOME holding a recorded Claude Code transcript: each
//! response counted once, priced by the shipped table or the config's `[prices]`, said to be an
//! estimate; a bad price or `--since` refused with the key named.

use std::path::Path;

use serde_json::Value;

use crate::util::{slate_in, SESSION};

/// The recorded transcript: two responses of `claude-sonnet-5`, the first written twice.
const SAMPLE: &str =
    "fixtures/transcripts/claude-code/samples/7f3c1d2e-5a4b-4c3d-9e8f-0a1b2c3d4e5f.jsonl";

/// One response's usage in the sample, as Claude Code wrote it.
const INPUT: u64 = 6;
const OUTPUT: u64 = 212;
const CACHE_READ: u64 = 21_044;
const CACHE_WRITE: u64 = 1_820;

fn home_with_sample() -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("temp dir");
    let folder = root.path().join("home/.claude/projects/-work-acme");
    std::fs::create_dir_all(&folder).expect("projects folder");
    std::fs::create_dir_all(root.path().join("config/slate")).expect("config folder");
    std::fs::create_dir_all(root.path().join("data")).expect("data folder");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join(SAMPLE);
    std::fs::copy(sample, folder.join(format!("{SESSION}.jsonl"))).expect("sample copied");
    root
}

fn usage_json(root: &Path, args: &[&str]) -> Value {
    let out = slate_in(root)
        .arg("usage")
        .arg("--json")
        .args(args)
        .output()
        .expect("slate usage runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn close(value: &Value, want: f64) {
    let got = value.as_f64().unwrap_or(f64::NAN);
    assert!((got - want).abs() < 1e-12, "got {value}, want {want}");
}

/// The sample's two responses at `claude-sonnet-5`'s prices ($/Mtok: 2 in, 10 out, 0.20 cache
/// read, 2.50 cache write), worked out here from the file's own figures.
fn sample_estimate(input: f64, output: f64, cache_read: f64, cache_write: f64) -> f64 {
    2.0 * (INPUT as f64 * input
        + OUTPUT as f64 * output
        + CACHE_READ as f64 * cache_read
        + CACHE_WRITE as f64 * cache_write)
        / 1e6
}

#[test]
fn usage_json_counts_each_response_once_and_says_the_cost_is_an_estimate() {
    let root = home_with_sample();
    let body = usage_json(root.path(), &[]);
    let rows = body["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{body}");
    let row = &rows[0];
    assert_eq!(row["key"], SESSION);
    // The first response is written twice in the file: it counts once.
    assert_eq!(row["input_tokens"], 2 * INPUT);
    assert_eq!(row["output_tokens"], 2 * OUTPUT);
    assert_eq!(row["cache_read_tokens"], 2 * CACHE_READ);
    assert_eq!(row["cache_write_tokens"], 2 * CACHE_WRITE);
    assert_eq!(row["cost_basis"], "estimate");
    close(&row["cost_usd"], sample_estimate(2.0, 10.0, 0.20, 2.50));
    assert_eq!(
        row["priced_tokens"],
        2 * (INPUT + OUTPUT + CACHE_READ + CACHE_WRITE)
    );
    assert_eq!(row["unpriced_tokens"], 0);
    assert_eq!(row["not_recorded"], 0);
    assert_eq!(body["total"]["sessions"], 1);
    close(
        &body["total"]["cost_usd"],
        sample_estimate(2.0, 10.0, 0.20, 2.50),
    );
    // The table's date and sources travel with the figures.
    assert_eq!(body["prices"]["date"], "2026-12-07");
    assert!(!body["prices"]["sources"]
        .as_array()
        .expect("sources")
        .is_empty());

    let by_agent = usage_json(root.path(), &["--by", "agent"]);
    assert_eq!(by_agent["rows"][0]["key"], "claude-code");
    let by_day = usage_json(root.path(), &["--by", "day"]);
    let day = by_day["rows"][0]["key"].as_str().expect("a day");
    assert_eq!(day.len(), 10, "{day}");
    assert!(day.starts_with("2026-"), "{day}");

    // The table says what it is.
    let out = slate_in(root.path())
        .arg("usage")
        .output()
        .expect("slate usage runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(estimate)"), "{text}");
    assert!(text.contains("not a bill"), "{text}");
}

#[test]
fn the_configs_price_replaces_the_tables_and_a_bad_one_names_its_key() {
    let root = home_with_sample();
    let config = root.path().join("config/slate/config.toml");
    std::fs::write(
        &config,
        "[prices.\"claude-sonnet-5\"]\ninput = 3\noutput = 15\n",
    )
    .expect("config");
    let body = usage_json(root.path(), &[]);
    // The figures set are the person's; the cache prices stay the table's.
    close(
        &body["rows"][0]["cost_usd"],
        sample_estimate(3.0, 15.0, 0.20, 2.50),
    );

    std::fs::write(&config, "[prices.\"claude-sonnet-5\"]\ncache_read = -0.3\n").expect("config");
    let out = slate_in(root.path())
        .args(["usage", "--json"])
        .output()
        .expect("slate usage runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a bad price is refused");
    assert!(stderr.contains("cache_read"), "{stderr}");
    assert!(stderr.contains("a price is dollars"), "{stderr}");
}

#[test]
fn since_leaves_older_sessions_out_and_a_bad_since_is_refused() {
    let root = home_with_sample();
    let body = usage_json(root.path(), &["--since", "2099-01-01"]);
    assert_eq!(body["rows"].as_array().map(Vec::len), Some(0));
    assert_eq!(body["total"]["sessions"], 0);
    assert_eq!(body["total"]["cost_basis"], "unknown");
    assert_eq!(body["total"]["cost_usd"], Value::Null);
    let body = usage_json(root.path(), &["--since", "2000-01-01"]);
    assert_eq!(body["total"]["sessions"], 1);
    for bad in ["yesterday", "-5d", "99999999999999d"] {
        let out = slate_in(root.path())
            .args(["usage", &format!("--since={bad}")])
            .output()
            .expect("slate usage runs");
        assert!(!out.status.success(), "{bad}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--since"), "{bad}: {stderr}");
    }
    let out = slate_in(root.path())
        .args(["usage", "--by", "week"])
        .output()
        .expect("slate usage runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--by"));
}

#[test]
fn show_says_the_sessions_usage_and_that_its_cost_is_an_estimate() {
    let root = home_with_sample();
    let out = slate_in(root.path())
        .args(["show", SESSION])
        .output()
        .expect("slate show runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("usage:"), "{text}");
    assert!(
        text.contains("12 in, 424 out, 42.1k cache read, 3.6k cache write"),
        "{text}"
    );
    assert!(text.contains("$0.02 (estimate)"), "{text}");
    assert!(text.contains("models:      claude-sonnet-5"), "{text}");
    assert!(text.contains("context:"), "{text}");
}

/// The store's totals of `SESSION` as a running Slate records them, with `output` tokens.
fn stored(root: &Path, id: &str, output: u64) {
    let folder = root.join("data/slate");
    std::fs::create_dir_all(&folder).expect("data folder");
    let store = slate::store::open(&folder.join("slate.db")).expect("store");
    let usage: slate::usage::SessionUsage = serde_json::from_value(serde_json::json!({
        "input_tokens": 100, "output_tokens": output, "cache_read_tokens": 0,
        "cache_write_tokens": 0, "models": ["claude-sonnet-5"], "context_tokens": 100,
        "context_percent": null, "cost_usd": 0.5, "cost_basis": "estimate",
        "priced_tokens": 100 + output, "unpriced_tokens": 0,
    }))
    .expect("usage");
    let row = slate::store::StoredUsage {
        key: slate::model::SessionKey::new(
            slate::model::AgentKind::parse("claude-code").expect("claude-code"),
            id,
        ),
        project: Some("acme".to_owned()),
        at: slate::model::Timestamp::parse_rfc3339("2026-11-28T10:00:00Z").expect("time"),
        usage,
    };
    store.record_usage(&[row]).expect("recorded");
}

#[test]
fn a_closed_sessions_stored_totals_count_once_after_its_transcript_is_gone() {
    let root = home_with_sample();
    // The store holds the sample session (read from its transcript too) and one whose
    // transcript is gone.
    stored(root.path(), SESSION, 1);
    stored(root.path(), "0ld5e551-0000-4000-8000-000000000002", 50);
    let body = usage_json(root.path(), &[]);
    assert_eq!(body["total"]["sessions"], 2, "{body}");
    let rows = body["rows"].as_array().expect("rows");
    let gone = rows
        .iter()
        .find(|row| row["key"] == "0ld5e551-0000-4000-8000-000000000002")
        .unwrap_or_else(|| panic!("the stored session: {body}"));
    assert_eq!(gone["output_tokens"], 50);
    close(&gone["cost_usd"], 0.5);
    // The one still read counts from its transcript, not twice.
    let read = rows.iter().find(|row| row["key"] == SESSION).expect("read");
    assert_eq!(read["output_tokens"], 2 * OUTPUT);
    let by_project = usage_json(root.path(), &["--by", "project"]);
    assert!(
        by_project["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .any(|row| row["key"] == "acme"),
        "{by_project}"
    );
}
