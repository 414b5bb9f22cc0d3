//! Each agent's usage records, read by its adapter and folded by `usage::Tally` as the tracker
//! folds them: the real CLIs' recordings give exactly the figures they wrote, a response written
//! twice or a file read again counts once, a resumed and a compacted session keep what they
//! counted, and a hostile figure reaches no sum.

use std::path::Path;

use slate_core::agents::{self, LineParser, Observation};
use slate_core::model::usage::{Call, Counting, Tokens, MOST_TOKENS};
use slate_core::usage::{SessionUsage, Tally};

use crate::repository;

/// What a session's observations add up to, folded as `tracker::log` folds them: a record with
/// no model takes the session's model so far. Also the unread records' names.
fn fold(observations: impl IntoIterator<Item = Observation>) -> (Tally, Vec<String>) {
    let mut tally = Tally::default();
    let mut model: Option<String> = None;
    let mut unread = Vec::new();
    for observation in observations {
        match observation {
            Observation::Info(info) if info.model.is_some() => model = info.model,
            Observation::Usage(call) => tally.add(call, model.as_deref()),
            Observation::Unread(record) => unread.push(record.what),
            _ => {}
        }
    }
    (tally, unread)
}

/// Every line of `file` through `parser`, the lines that do not read dropped.
fn lines(file: &Path, parser: &mut dyn LineParser) -> Vec<Observation> {
    let bytes = std::fs::read(file).unwrap_or_else(|err| panic!("{}: {err}", file.display()));
    bytes
        .split(|byte| *byte == b'\n')
        .filter(|line| !line.is_empty())
        .filter_map(|line| parser.feed(line).ok())
        .flatten()
        .collect()
}

fn one_file(glob_dir: &str, ends: &str) -> std::path::PathBuf {
    let mut found = Vec::new();
    let mut stack = vec![repository().join(glob_dir)];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with(ends) {
                found.push(path);
            }
        }
    }
    assert_eq!(found.len(), 1, "one {ends} under {glob_dir}: {found:?}");
    found.remove(0)
}

fn tokens(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Tokens {
    Tokens {
        input,
        output,
        cache_read,
        cache_write,
    }
}

fn per_model(tally: &Tally) -> Vec<(String, Tokens)> {
    tally
        .per_model()
        .map(|(model, tokens)| (model.to_owned(), *tokens))
        .collect()
}

#[test]
fn claude_code_recording_gives_the_cli_s_figures() {
    let file = one_file(
        "fixtures/recordings/claude-code/2.1.332/finished/home/.claude/projects",
        ".jsonl",
    );
    let (tally, unread) = fold(lines(
        &file,
        &mut agents::claude::TranscriptLines::new(false),
    ));
    assert!(unread.is_empty(), "{unread:?}");
    assert_eq!(
        per_model(&tally),
        [("claude-opus-5-5".to_owned(), tokens(120, 20, 0, 0))]
    );
    assert_eq!(tally.last_request(), Some(("claude-opus-5-5", 120)));
}

#[test]
fn claude_code_response_on_several_lines_counts_once_with_its_final_figures() {
    let file = repository().join("fixtures/usage/claude-streamed.jsonl");
    let (tally, unread) = fold(lines(
        &file,
        &mut agents::claude::TranscriptLines::new(false),
    ));
    assert!(unread.is_empty(), "{unread:?}");
    // msg_A twice (its final figures once), the sidechain's msg_S (a sub-agent costs too), no
    // `<synthetic>` notice, and msg_B after the compaction.
    assert_eq!(
        per_model(&tally),
        [
            ("claude-haiku-5".to_owned(), tokens(5, 7, 0, 0)),
            ("claude-sonnet-5".to_owned(), tokens(30, 180, 1300, 200)),
        ]
    );
    // The context is the last request's, after the compaction: smaller than the sum.
    assert_eq!(tally.last_request(), Some(("claude-sonnet-5", 320)));
    // The whole file read again (a rewrite in place) changes nothing.
    let mut again = tally.clone();
    for observation in lines(&file, &mut agents::claude::TranscriptLines::new(false)) {
        if let Observation::Usage(call) = observation {
            again.add(call, None);
        }
    }
    assert_eq!(again.tokens(), tally.tokens());
    let usage = SessionUsage::from_tally(&tally).expect("recorded");
    assert_eq!(usage.models, ["claude-haiku-5", "claude-sonnet-5"]);
    assert_eq!(usage.context_tokens, 320);
}

#[test]
fn hostile_usage_figures_are_unread_and_never_summed() {
    let file = repository().join("fixtures/usage/claude-hostile.jsonl");
    let (tally, unread) = fold(lines(
        &file,
        &mut agents::claude::TranscriptLines::new(false),
    ));
    // Negative, text, 1e30, u64::MAX, past u64, a fraction, a usage that is text: each refused
    // and named; the truncated last line does not read at all.
    assert_eq!(
        unread,
        [
            "usage input_tokens of JSON number",
            "usage input_tokens of JSON string",
            "usage input_tokens of JSON number",
            "usage input_tokens of JSON number",
            "usage input_tokens of JSON number",
            "usage input_tokens of JSON number",
            "usage of JSON string",
        ]
    );
    assert_eq!(tally.tokens(), tokens(3, 4, 0, 0));
}

#[test]
fn sums_saturate_instead_of_overflowing() {
    let mut tally = Tally::default();
    for id in ["a", "b", "c"] {
        let call = Call::response(Some(id.into()), None, tokens(u64::MAX - 1, 0, 0, u64::MAX));
        tally.add(call, Some("m"));
    }
    assert_eq!(tally.tokens().input, u64::MAX);
    assert_eq!(tally.tokens().total(), u64::MAX);
    // A running total that jumps to the top and back does not wrap either.
    let running = |input| Call {
        counting: Counting::RunningTotal {
            last: Tokens::default(),
        },
        ..Call::response(None, None, tokens(input, 0, 0, 0))
    };
    let mut tally = Tally::default();
    tally.add(running(MOST_TOKENS), None);
    tally.add(running(1), None);
    tally.add(running(u64::MAX), None);
    assert_eq!(tally.tokens().input, u64::MAX);
}

#[test]
fn codex_recording_counts_each_response_by_its_id() {
    let file = one_file(
        "fixtures/recordings/codex/0.171.0/finished/home/.codex/sessions",
        ".jsonl",
    );
    let (tally, unread) = fold(lines(&file, &mut agents::codex::RolloutReader::new()));
    assert!(unread.is_empty(), "{unread:?}");
    // One `token_usage_record` and a `token_count` total of the same response: once.
    assert_eq!(tally.tokens(), tokens(200, 20, 0, 0));
    assert_eq!(tally.context_window(), Some(258400));
}

#[test]
fn codex_records_leave_a_fork_s_ancestor_out_and_totals_to_the_context() {
    let file = repository().join("fixtures/usage/codex-records.jsonl");
    let (tally, _) = fold(lines(&file, &mut agents::codex::RolloutReader::new()));
    // `input_tokens` counts the cached and cache-written input: what is left is fresh input.
    assert_eq!(
        per_model(&tally),
        [("gpt-5.5".to_owned(), tokens(2001, 100, 400, 200))]
    );
    assert_eq!(tally.last_request(), Some(("gpt-5.5", 1301)));
}

#[test]
fn codex_running_totals_count_once_and_a_resumed_process_adds_on() {
    let file = repository().join("fixtures/usage/codex-resumed.jsonl");
    let (tally, _) = fold(lines(&file, &mut agents::codex::RolloutReader::new()));
    // 1200 (written twice), 2500, then a resumed process whose total starts again at 600.
    assert_eq!(
        per_model(&tally),
        [(
            "gpt-5.5".to_owned(),
            tokens(2100 + 500, 100 + 25, 400 + 100, 0)
        )]
    );
    assert_eq!(tally.last_request(), Some(("gpt-5.5", 600)));
    let usage = SessionUsage::from_tally(&tally).expect("recorded");
    assert_eq!(usage.context_percent, Some(0.3));
}

#[test]
fn gemini_cli_recording_and_its_rewrites_count_each_message_once() {
    let file = one_file(
        "fixtures/recordings/gemini-cli/0.61.0/finished/home/.gemini/tmp",
        ".jsonl",
    );
    let (tally, unread) = fold(lines(&file, &mut agents::gemini::ChatFold::new()));
    assert!(unread.is_empty(), "{unread:?}");
    assert_eq!(
        per_model(&tally),
        [("gemini-2.5-pro".to_owned(), tokens(200, 20, 0, 0))]
    );
    // The same chat read again through a fresh fold (the file replaced): still once.
    let mut both = lines(&file, &mut agents::gemini::ChatFold::new());
    both.extend(lines(&file, &mut agents::gemini::ChatFold::new()));
    assert_eq!(fold(both).0.tokens(), tokens(200, 20, 0, 0));
}

#[test]
fn qwen_code_recording_gives_the_cli_s_figures() {
    let file = one_file(
        "fixtures/recordings/qwen-code/0.24.4/finished/home/.qwen/projects",
        ".jsonl",
    );
    let (tally, unread) = fold(lines(&file, &mut agents::qwen::ChatLines));
    assert!(unread.is_empty(), "{unread:?}");
    assert_eq!(tally.tokens(), tokens(200, 20, 0, 0));
}

#[test]
fn pi_recording_gives_the_cli_s_figures_and_a_zero_cost_is_no_report() {
    let file = repository().join("fixtures/transcripts/pi/finished.jsonl");
    let observations: Vec<Observation> = std::fs::read(&file)
        .unwrap()
        .split(|byte| *byte == b'\n')
        .filter(|line| !line.is_empty())
        .filter_map(|line| agents::pi::observe(line).ok())
        .flatten()
        .collect();
    let (tally, unread) = fold(observations);
    assert!(unread.is_empty(), "{unread:?}");
    assert_eq!(tally.tokens(), tokens(200, 20, 0, 0));
    // Pi wrote a cost of 0 for a model it has no price for: not a bill of $0.
    assert_eq!(tally.reported_cost_usd(), None);
}

#[test]
fn cline_conversation_read_again_counts_once() {
    let file = repository()
        .join("fixtures/transcripts/cline/tool_running/1796174550271_8m0a0.messages.json");
    let bytes = std::fs::read(&file).unwrap();
    let once = agents::cline::read_messages(&bytes).unwrap();
    let mut twice = once.clone();
    twice.extend(agents::cline::read_messages(&bytes).unwrap());
    let (tally, _) = fold(once);
    assert_eq!(
        per_model(&tally),
        [("fake-model".to_owned(), tokens(200, 20, 0, 0))]
    );
    assert_eq!(fold(twice).0.tokens(), tally.tokens());
}

#[test]
fn copilot_cli_checkpoint_and_shutdown_totals_count_once() {
    let file = repository().join("fixtures/transcripts/copilot/rewound-then-interrupted.jsonl");
    let (tally, unread) = fold(lines(&file, &mut agents::copilot::EventsReader::new()));
    assert!(unread.is_empty(), "{unread:?}");
    // `session.usage_checkpoint` and `session.shutdown` state the same running total.
    assert_eq!(
        per_model(&tally),
        [("gpt-4.1".to_owned(), tokens(400, 40, 0, 0))]
    );
}

#[test]
fn a_session_with_no_usage_records_is_not_recorded() {
    let file = repository().join("fixtures/transcripts/claude-code/compaction.jsonl");
    let observations = lines(&file, &mut agents::claude::TranscriptLines::new(false));
    let (tally, _) = fold(
        observations
            .into_iter()
            .filter(|observation| !matches!(observation, Observation::Usage(_))),
    );
    assert!(tally.is_empty());
    assert_eq!(SessionUsage::from_tally(&tally), None);
}

#[test]
fn a_sub_agent_folds_into_its_parent_once_by_id() {
    let call = |id: &str, input| Call::response(Some(id.into()), None, tokens(input, 1, 0, 0));
    let mut parent = Tally::default();
    parent.add(call("msg_parent", 100), Some("claude-sonnet-5"));
    // 1.x kept the sub-agent's lines in the main file too.
    parent.add(call("msg_sub", 10), Some("claude-haiku-5"));
    let mut child = Tally::default();
    child.add(call("msg_sub", 10), Some("claude-haiku-5"));
    child.add(call("msg_sub2", 20), Some("claude-haiku-5"));
    let mut combined = parent.clone();
    combined.absorb(&child);
    assert_eq!(
        per_model(&combined),
        [
            ("claude-haiku-5".to_owned(), tokens(30, 2, 0, 0)),
            ("claude-sonnet-5".to_owned(), tokens(100, 1, 0, 0)),
        ]
    );
    // The parent's own last request stays the context.
    assert_eq!(combined.last_request(), Some(("claude-haiku-5", 10)));
}
