//! `slate doctor --sample` writes a file meant for a public bug report, and `slate doctor` names
//! each kind of record it could not read: neither keeps a secret. Keys and record types are kept
//! only when they read as names (`UnreadKind::is_name`), every number is replaced, each kind's
//! name is built from the kept type alone, and a copy read back is held to the same rules.

use serde_json::{json, Value};
use slate::agents::unread::{resample, UnreadRecord, SAMPLE_BYTES};
use slate::model::UnreadKind;

use super::{fixture, home_with, slate};
use crate::util;

/// Secrets as they were found in a sample: each built here, so the repository holds none whole.
fn secrets() -> Vec<String> {
    vec![
        format!("ghp_{}", "Zq7Xw2Lm9Kp4Rt".repeat(3)),
        format!("sk-proj-{}", "Ab3dE5gH7jK9mN".repeat(4)),
        format!("sk-ant-api03-{}", "Qw8Er6Ty4Ui2Op".repeat(4)),
        "AKIAIOSFODNN7EXAMPLE".to_owned(),
        "/home/person/acme/.env".to_owned(),
        "10.1.2.3:5432/acme_prod".to_owned(),
        "person@example.com".to_owned(),
        "4111111111111111".to_owned(),
    ]
}

/// A record that holds every one of the `secrets()`: as keys, as short values under the keys that
/// name a type, as a number.
fn leaky_record(kind: &str) -> Value {
    let s = secrets();
    json!({
        "type": kind,
        "sessionId": util::SESSION,
        "timestamp": "2026-11-29T12:00:06.000Z",
        s[4].clone(): "a path as a key",
        s[3].clone(): "an AWS key id as a key",
        "status": s[0],
        "role": s[1],
        "method": s[4],
        "event": s[5],
        "kind": s[6],
        "subtype": s[3],
        "card": 4_111_111_111_111_111_u64,
        "nested": {"op": s[0], s[0].clone(): 1.5},
    })
}

#[test]
fn names_are_kept_only_when_they_read_as_names() {
    for name in [
        "type",
        "sessionId",
        "durationMs",
        "stopReason",
        "tool.execution_start",
        "response_item",
        "turn-ledger",
        "x86_64",
        "sha256",
        "isVisibleInTranscriptOnly",
    ] {
        assert!(UnreadKind::is_name(name), "{name} should read as a name");
    }
    let mut refused = secrets();
    refused.extend(
        [
            "",
            ".env",
            "AWS_SECRET",
            "userID",
            "api-request/v2",
            "tcp:5432",
            "a b",
            "9f86d081884c7d659a2feaa0c55ad015",
            "version12345",
            "abcdefghijklmnopq",
            "an-identifier-that-runs-past-its-limit",
            "é",
        ]
        .map(str::to_owned),
    );
    for text in refused {
        assert!(!UnreadKind::is_name(&text), "{text} read as a name");
    }
}

#[test]
fn a_leaky_record_keeps_no_secret_in_its_name_or_its_copy() {
    for kind in secrets().iter().map(String::as_str).chain(["new-thing"]) {
        let unread = UnreadRecord::of_type("type", &json!(kind), &leaky_record(kind));
        for secret in secrets() {
            assert!(
                !unread.what.contains(&secret),
                "{secret} in {}",
                unread.what
            );
            assert!(
                !unread.sample.contains(&secret),
                "{secret} in {}",
                unread.sample
            );
        }
        assert!(!unread.sample.contains("4111"), "{}", unread.sample);
        if kind == "new-thing" {
            assert_eq!(unread.what, r#"type "new-thing""#);
        } else {
            assert_eq!(
                unread.what,
                format!("type <text, {} chars>", kind.chars().count())
            );
        }
        let sample: Value = serde_json::from_str(&unread.sample).unwrap();
        // The keys that read as names and the types that do stay; the rest is counted.
        assert_eq!(sample["card"], "<number>");
        assert_eq!(sample["status"], "<text, 46 chars>");
        assert_eq!(sample["event"], "<text, 23 chars>");
        assert_eq!(sample["nested"]["op"], "<text, 46 chars>");
        assert!(sample
            .as_object()
            .unwrap()
            .keys()
            .any(|key| key.starts_with("<key ") && key.ends_with(", 20 chars>")));
        // Redacted again, a copy does not change.
        assert_eq!(resample(None, &unread.sample), sample);
    }
}

#[test]
fn a_kind_s_name_is_shown_only_in_a_form_slate_writes() {
    let s = secrets();
    for (what, shown) in [
        (r#"type "turn-ledger""#, r#"type "turn-ledger""#),
        ("record with no type", "record with no type"),
        (
            "event_msg type of JSON number",
            "event_msg type of JSON number",
        ),
        ("type <text, 40 chars>", "type <text, 40 chars>"),
        (UnreadKind::SCREEN, UnreadKind::SCREEN),
        // As a Slate before this check named them, and anything else.
        (&format!("type {:?}", s[2]), UnreadKind::NOT_SHOWN),
        (&format!("type {:?}", s[4]), UnreadKind::NOT_SHOWN),
        (&format!("{} \"x\"", s[3]), UnreadKind::NOT_SHOWN),
        ("type <text, 41111111111 chars>", UnreadKind::NOT_SHOWN),
        ("type of JSON secret", UnreadKind::NOT_SHOWN),
        ("", UnreadKind::NOT_SHOWN),
    ] {
        assert_eq!(UnreadKind::shown(what), shown, "{what}");
    }
    let mut counted = slate::model::UnreadRecords::default();
    counted.count(&format!("type {:?}", s[2]), "{}");
    assert!(!counted.summary().contains(&s[2]), "{}", counted.summary());
}

#[test]
fn a_copy_read_back_is_held_to_the_rules_whatever_it_is() {
    let s = secrets();
    // As a Slate before this check kept them: keys, types and numbers whole.
    let old = serde_json::to_string(&leaky_record(&s[2])).unwrap();
    let again = resample(None, &old).to_string();
    for secret in &s {
        assert!(!again.contains(secret.as_str()), "{secret} in {again}");
    }
    // Malformed, truncated, huge and deep: replaced by their length.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let huge = format!("{{\"type\":\"{}\"}}", "a".repeat(1 << 20));
    for text in [
        &old[..old.len() / 2],
        "{\"type\": \"x\"",
        "not json at all 4111111111111111",
        "",
        &deep,
        &huge,
    ] {
        assert_eq!(
            resample(None, text),
            json!(format!("<sample not JSON, {} bytes>", text.len())),
            "{}",
            &text[..text.len().min(40)]
        );
    }
    // Nested as deep as a parser may read it: cut at the copy's depth.
    let mut nested = json!(s[0]);
    for _ in 0..120 {
        nested = json!({ "inner": nested });
    }
    let again = resample(None, &nested.to_string());
    assert!(again.to_string().len() <= SAMPLE_BYTES);
    assert!(again.to_string().contains("<object cut>"), "{again}");
    // A screen's lines are masked again with the grammar's words.
    let codex = slate::agents::screens::grammar(slate::model::AgentKind::CODEX);
    let screen = json!({ "screen": [format!("› 1. {} esc to interrupt", s[0])] }).to_string();
    assert_eq!(
        resample(codex, &screen),
        json!({ "screen": [format!("› x. xxx_{} esc to interrupt", "x".repeat(42))] })
    );
}

#[test]
fn doctor_and_its_sample_keep_no_secret_of_a_leaky_transcript() {
    let s = secrets();
    let mut transcript = fixture();
    for kind in [s[2].as_str(), "probe-one"] {
        transcript.push_str(&leaky_record(kind).to_string());
        transcript.push('\n');
    }
    let (dir, processes) = home_with(&transcript);
    let (ok, doctor, err) = slate(dir.path(), &processes, &["doctor"]);
    assert!(ok, "{err}");
    assert!(doctor.contains(r#"type "probe-one" ×1"#), "{doctor}");
    let out = dir.path().join("sample.json");
    let (ok, said, err) = slate(
        dir.path(),
        &processes,
        &[
            "doctor",
            "--sample",
            &util::SESSION[..8],
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(ok, "{err}");
    assert!(said.contains("wrote 4 redacted samples"), "{said}");
    let written = std::fs::read_to_string(&out).unwrap();
    for secret in &s {
        assert!(!doctor.contains(secret.as_str()), "{secret} in {doctor}");
        assert!(!written.contains(secret.as_str()), "{secret} in {written}");
    }
    for number in ["4111", "5100"] {
        assert!(!written.contains(number), "{number} in {written}");
    }
    let sample: Value = serde_json::from_str(&written).unwrap();
    let kinds: Vec<&str> = sample["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|kind| kind["what"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            r#"type "turn-ledger""#,
            r#"type "voice-note""#,
            "type <text, 69 chars>",
            r#"type "probe-one""#
        ]
    );
    assert_eq!(sample["samples"][3]["type"], "probe-one");
    assert_eq!(sample["samples"][3]["card"], "<number>");
}
