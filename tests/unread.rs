//! Records an agent's parser does not know (`agents::unread`): the session keeps the state its
//! known records give, `slate show` says its format may have changed, `slate doctor` counts them
//! by version, and `slate doctor --sample` writes them redacted for a bug report. The redaction is
//! bounded whatever the record.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};
use slate::agents::unread::{UnreadRecord, SAMPLE_BYTES, WHAT_CHARS};
use slate::model::Timestamp;

use crate::util;

mod secrets;

const NOW: &str = "2026-11-29T12:00:30.000Z";
const FIXTURE: &str = "fixtures/transcripts/claude-code/format-drift.jsonl";
/// How many of the fixture's lines are records Claude Code 2.1.332 never wrote.
const UNREAD_LINES: usize = 3;

/// A temporary HOME holding `transcript` as `util::SESSION`'s, and the recorded `claude` process
/// that vouches for it.
fn home_with(transcript: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = util::transcript_path(&dir.path().join("home"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, transcript).unwrap();
    let now = Timestamp::parse_rfc3339(NOW).unwrap();
    let table = util::claude_process_table(now.minus(Duration::from_secs(60)));
    let processes = dir.path().join("processes.json");
    std::fs::write(&processes, serde_json::to_string(&table.processes).unwrap()).unwrap();
    (dir, processes)
}

fn fixture() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)).unwrap()
}

/// `slate args…` over the HOME, on its own (no server), and its standard output.
fn slate(dir: &Path, processes: &Path, args: &[&str]) -> (bool, String, String) {
    let output = util::slate_over(dir, processes, NOW)
        .args(args)
        .env("SLATE_STANDALONE", "1")
        .current_dir(dir)
        .output()
        .expect("slate runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The one session `slate sessions --json` lists.
fn listed(dir: &Path, processes: &Path) -> Value {
    let (ok, out, err) = slate(dir, processes, &["sessions", "--json", "--all"]);
    assert!(ok, "{err}");
    let value: Value = serde_json::from_str(&out).expect("JSON");
    let sessions = value
        .get("sessions")
        .cloned()
        .unwrap_or(value)
        .as_array()
        .cloned()
        .expect("a list of sessions");
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    sessions[0].clone()
}

#[test]
fn unread_records_keep_the_state_the_known_ones_give_and_are_said() {
    let text = fixture();
    let (dir, processes) = home_with(&text);
    let session = listed(dir.path(), &processes);
    // The same transcript without the records Slate cannot read decides the same state.
    let known: Vec<&str> = text.lines().collect();
    let known = known[..known.len() - UNREAD_LINES].join("\n") + "\n";
    let (plain_dir, plain_processes) = home_with(&known);
    let plain = listed(plain_dir.path(), &plain_processes);
    assert_eq!(session["session_state"], plain["session_state"]);
    assert_eq!(session["status"], "waiting");
    assert_eq!(session["session_state"]["reason"]["code"], "turn_finished");
    assert_eq!(plain.get("unread"), None);
    assert_eq!(
        session["unread"]["kinds"],
        json!([
            {"what": "type \"turn-ledger\"", "records": 2},
            {"what": "type \"voice-note\"", "records": 1},
        ])
    );
    assert_eq!(session["unread"]["records"], UNREAD_LINES);

    let (ok, show, err) = slate(dir.path(), &processes, &["show", &util::SESSION[..8]]);
    assert!(ok, "{err}");
    assert!(
        show.contains(
            "its format may have changed: 3 records Slate could not read (type \"turn-ledger\" \
             ×2, type \"voice-note\" ×1); its state comes from what Slate knows"
        ),
        "{show}"
    );
    assert!(
        show.contains(&format!("slate doctor --sample {}", util::SESSION)),
        "{show}"
    );
    let (_, plain_show, _) = slate(
        plain_dir.path(),
        &plain_processes,
        &["show", &util::SESSION[..8]],
    );
    assert!(!plain_show.contains("could not read"), "{plain_show}");

    let (ok, doctor, err) = slate(dir.path(), &processes, &["doctor"]);
    assert!(ok, "{err}");
    assert!(
        doctor.contains("3 records Slate could not read, in 1 session of 2.1.400"),
        "{doctor}"
    );
}

#[test]
fn the_sample_keeps_keys_and_record_types_and_replaces_every_text() {
    let (dir, processes) = home_with(&fixture());
    let out = dir.path().join("sample.json");
    let out_arg = out.to_str().unwrap();
    let (ok, said, err) = slate(
        dir.path(),
        &processes,
        &["doctor", "--sample", &util::SESSION[..8], "--out", out_arg],
    );
    assert!(ok, "{err}");
    assert!(
        said.contains("wrote 2 redacted samples of the 3 records Slate could not read"),
        "{said}"
    );
    let written = std::fs::read_to_string(&out).unwrap();
    for private in [
        "secret-plans",
        "private sentence",
        "production",
        "/work/acme",
    ] {
        assert!(!written.contains(private), "{private} leaked: {written}");
    }
    let sample: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(sample["agent"], "claude-code");
    assert_eq!(sample["cli_version"], "2.1.400");
    assert_eq!(sample["records"], 3);
    assert_eq!(
        sample["samples"][0],
        json!({
            "entry": {"kind": "summary", "text": "<text, 61 chars>"},
            "sessionId": "<text, 36 chars>",
            "timestamp": "<text, 24 chars>",
            "type": "turn-ledger",
        })
    );
    assert_eq!(sample["samples"][1]["transcript"], "<text, 35 chars>");
    assert_eq!(sample["samples"][1]["durationMs"], "<number>");

    // Asked again for the same file: it is left as it is, and the command says so.
    let (ok, _, err) = slate(
        dir.path(),
        &processes,
        &["doctor", "--sample", &util::SESSION[..8], "--out", out_arg],
    );
    assert!(!ok);
    assert!(err.contains("exists and is left as it is"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), written);

    // Without --out it goes to a file named after the session, here.
    let (ok, said, err) = slate(
        dir.path(),
        &processes,
        &["doctor", "--sample", &util::SESSION[..8]],
    );
    assert!(ok, "{err}");
    let named = dir.path().join(format!(
        "slate-sample-claude-code-{}.json",
        &util::SESSION[..8]
    ));
    assert!(named.is_file(), "{said}");
}

#[test]
fn a_session_read_whole_has_nothing_to_sample() {
    let text = fixture();
    let known: Vec<&str> = text.lines().collect();
    let known = known[..known.len() - UNREAD_LINES].join("\n") + "\n";
    let (dir, processes) = home_with(&known);
    let (ok, said, err) = slate(
        dir.path(),
        &processes,
        &["doctor", "--sample", &util::SESSION[..8]],
    );
    assert!(ok, "{err}");
    assert!(said.contains("there is nothing to sample"), "{said}");
    let written: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with("slate-sample")
        })
        .collect();
    assert!(written.is_empty());
}

#[test]
fn a_hostile_record_is_named_and_copied_within_bounds() {
    // A huge text, thousands of keys, deep nesting, long arrays and control characters.
    let mut deep = json!("bottom");
    for _ in 0..200 {
        deep = json!({ "type": "layer", "inner": deep });
    }
    let keys: serde_json::Map<String, Value> = (0..10_000)
        .map(|index| (format!("key{index}"), json!("some private text")))
        .collect();
    let record = json!({
        "type": "x\u{1b}[31mred\u{7}".repeat(40),
        "huge": "a".repeat(1 << 20),
        "deep": deep,
        "keys": keys,
        "list": vec![json!("secret"); 1000],
        "k".repeat(5000): 1,
    });
    let unread = UnreadRecord::of_type("type", &record["type"], &record);
    assert!(unread.what.chars().count() <= WHAT_CHARS, "{}", unread.what);
    assert!(
        !unread.what.chars().any(char::is_control),
        "{:?}",
        unread.what
    );
    assert!(
        unread.sample.len() <= SAMPLE_BYTES,
        "{}",
        unread.sample.len()
    );
    assert!(!unread.sample.contains("secret") && !unread.sample.contains("aaaa"));
    let sample: Value = serde_json::from_str(&unread.sample).expect("the sample is JSON");
    assert!(sample.is_object());

    // A small record keeps its shape: keys and types, text and numbers replaced, long arrays
    // cut, a type that is not an identifier replaced too.
    let record = json!({
        "type": "new-thing",
        "role": "a role with spaces is text",
        "items": [1, 2, 3, 4, 5],
        "nested": {"kind": "inner.kind", "body": "hello"},
        "flag": true,
        "nothing": null,
    });
    let unread = UnreadRecord::of_type("type", &record["type"], &record);
    assert_eq!(unread.what, "type \"new-thing\"");
    assert_eq!(
        serde_json::from_str::<Value>(&unread.sample).unwrap(),
        json!({
            "type": "new-thing",
            "role": "<text, 26 chars>",
            "items": ["<number>", "<number>", "<number>", "<2 more>"],
            "nested": {"kind": "inner.kind", "body": "<text, 5 chars>"},
            "flag": true,
            "nothing": null,
        })
    );
    // Types that are no string are named by their JSON kind.
    assert_eq!(
        UnreadRecord::of_type("type", &Value::Null, &json!({})).what,
        "record with no type"
    );
    assert_eq!(
        UnreadRecord::of_type("type", &json!([1]), &json!({"type": [1]})).what,
        "type of JSON array"
    );
}

#[test]
fn a_screen_its_grammar_does_not_know_is_copied_with_its_frames_and_known_words_only() {
    let codex = slate::agents::screens::grammar(slate::model::AgentKind::CODEX).expect("Codex's");
    let screen = "\u{1b}]0;secret title\u{7}header line with private words\n\
                  \n\
                  ╭──────────────────────────────╮\n\
                  │ \u{1b}[7m› 1. rm -rf ~/secret-42\u{1b}[0m │\n\
                  ╰──────────────────────────────╯\n\
                  esc to interrupt, then\u{1}   \n\
                  \n\n";
    let screen = format!("{screen}{}", "\n".repeat(100));
    let unread = UnreadRecord::screen(codex, &screen).expect("a screen with text");
    assert_eq!(unread.what, slate::agents::unread::SCREEN);
    let sample: Value = serde_json::from_str(&unread.sample).expect("the sample is JSON");
    assert_eq!(
        sample,
        json!({"screen": [
            "xxxxxx xxxx xxxx xxxxxxx xxxxx",
            "",
            "╭──────────────────────────────╮",
            "│ › x. xx -xx ~/xxxxxx-xx │",
            "╰──────────────────────────────╯",
            "esc to interrupt, xxxx",
        ]}),
        "{}",
        unread.sample
    );

    // Nothing drawn: nothing that tells of a format.
    for blank in ["", "\n\n", "   \n\u{1b}[0m\n\t\n"] {
        assert_eq!(UnreadRecord::screen(codex, blank), None, "{blank:?}");
    }

    // Huge and hostile: a megabyte line, a hundred thousand lines, escapes that never end, and
    // characters of every width. The copy keeps the last lines, bounded.
    let mut hostile = "€".repeat(1 << 20);
    hostile.push('\n');
    hostile.push_str(&"line ✓ 漢字 \u{1b}[31m\n".repeat(100_000));
    hostile.push_str("\u{1b}]0;an escape that never ends");
    let unread = UnreadRecord::screen(codex, &hostile).expect("text");
    assert!(
        unread.sample.len() <= SAMPLE_BYTES,
        "{}",
        unread.sample.len()
    );
    let sample: Value = serde_json::from_str(&unread.sample).expect("JSON");
    let lines = sample["screen"].as_array().unwrap();
    assert!(!lines.is_empty() && lines.len() <= 12, "{lines:?}");
    assert!(lines.iter().all(|line| line == "xxxx ✓ xx"), "{lines:?}");
    let wide = format!("{}\n", "界".repeat(5000)).repeat(40);
    let unread = UnreadRecord::screen(codex, &wide).expect("text");
    assert!(
        unread.sample.len() <= SAMPLE_BYTES,
        "{}",
        unread.sample.len()
    );
}
