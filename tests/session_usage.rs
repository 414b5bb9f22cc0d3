//! `slate sessions --json` carries each session's `usage` object, from its transcript in a
//! temporary HOME: a sub-agent's responses counted in its parent, each once; a session whose
//! agent recorded no usage has no `usage` at all, never zeros.

use serde_json::Value;

const NOW: &str = "2026-11-29T12:00:00Z";

/// The sessions `slate sessions --all --json` lists over a HOME holding `files` (each copied from
/// `fixtures/` to its path under HOME), with no process alive.
fn sessions(files: &[(&str, &str)]) -> Vec<Value> {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    for (from, to) in files {
        let to = root.join("home").join(to);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(from),
            &to,
        )
        .expect("fixture copied");
    }
    let table = root.join("processes.json");
    std::fs::write(&table, "[]").unwrap();
    let output = crate::util::slate_over(root, &table, NOW)
        .args(["sessions", "--all", "--json"])
        .env("SLATE_STANDALONE", "1")
        .output()
        .expect("slate runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let value: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    value["sessions"].as_array().expect("sessions").clone()
}

const SAMPLE: &str =
    "fixtures/transcripts/claude-code/samples/6e7f8091-4c5d-4e6f-9071-3c4d5e6f7081";
const PROJECT: &str = ".claude/projects/-home-dev-acme-api/6e7f8091-4c5d-4e6f-9071-3c4d5e6f7081";

#[test]
fn sessions_json_carries_usage_with_the_sub_agent_counted_once() {
    let main = format!("{SAMPLE}.jsonl");
    let sub = format!("{SAMPLE}/subagents/agent-a3f9c2e1b7d4.jsonl");
    let listed = sessions(&[
        (&main, &format!("{PROJECT}.jsonl")),
        (
            &sub,
            &format!("{PROJECT}/subagents/agent-a3f9c2e1b7d4.jsonl"),
        ),
    ]);
    assert_eq!(listed.len(), 1, "the sub-agent rolls up: {listed:#?}");
    let usage = &listed[0]["usage"];
    // msg_01StU (claude-sonnet-5) in the session's file and msg_01Sub (claude-haiku-5) in the
    // sub-agent's: 6 + 6 input, 212 + 212 output, 21044 + 21044 read, 1820 + 1820 written.
    assert_eq!(usage["input_tokens"], 12, "{usage:#}");
    assert_eq!(usage["output_tokens"], 424);
    assert_eq!(usage["cache_read_tokens"], 42088);
    assert_eq!(usage["cache_write_tokens"], 3640);
    assert_eq!(
        usage["models"],
        serde_json::json!(["claude-haiku-5", "claude-sonnet-5"])
    );
    // The session's own last request: 6 + 21044 + 1820.
    assert_eq!(usage["context_tokens"], 22870);
    for key in [
        "context_percent",
        "cost_usd",
        "cost_basis",
        "priced_tokens",
        "unpriced_tokens",
    ] {
        assert!(usage.get(key).is_some(), "{key} in {usage:#}");
    }
    let basis = usage["cost_basis"].as_str().unwrap();
    assert!(
        ["reported", "estimate", "unknown"].contains(&basis),
        "{basis}"
    );
    let priced = usage["priced_tokens"].as_u64().unwrap();
    let unpriced = usage["unpriced_tokens"].as_u64().unwrap();
    assert_eq!(priced + unpriced, 12 + 424 + 42088 + 3640);
}

#[test]
fn a_session_with_no_usage_recorded_has_no_usage_object() {
    let listed = sessions(&[(
        "fixtures/transcripts/claude-code/interrupted-by-escape.jsonl",
        ".claude/projects/-work-acme/11111111-2222-4333-8444-555555555555.jsonl",
    )]);
    assert_eq!(listed.len(), 1, "{listed:#?}");
    assert!(listed[0].get("usage").is_none(), "{:#}", listed[0]);
}
