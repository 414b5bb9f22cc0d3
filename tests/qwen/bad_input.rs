//! Qwen Code's chat reader and registry reader on bad input: malformed, unknown, of the wrong
//! type, huge, cut short at every byte, arbitrary and mutated.

use proptest::prelude::*;
use slate::agents::qwen::ChatLines;

use super::*;

fn feed(line: &str) -> Result<Vec<Observation>, slate::agents::LineError> {
    ChatLines.feed(line.as_bytes())
}

#[test]
fn malformed_lines_are_errors_and_unknown_ones_say_nothing() {
    assert!(feed("{\"type\":\"user\"").is_err());
    assert!(feed("[1,2]").is_err());
    assert!(feed("\"user\"").is_err());
    assert!(ChatLines
        .feed(b"{\"type\":\"user\",\"x\":\"\xff\"}")
        .is_err());
    assert_eq!(feed("   "), Ok(Vec::new()));
    // A record with no type, or a type a later version may add, moves nothing and its facts are
    // skipped; it is counted as unread, its text replaced.
    let unread = |observations: Vec<Observation>| match observations.as_slice() {
        [Observation::Unread(record)] => (record.what.clone(), record.sample.clone()),
        other => panic!("not one unread record: {other:?}"),
    };
    assert_eq!(
        unread(feed("{}").unwrap()),
        ("record with no type".to_owned(), "{}".to_owned())
    );
    assert_eq!(
        unread(feed(r#"{"type":"telepathy","sessionId":"s","cwd":"/x"}"#).unwrap()),
        (
            r#"type "telepathy""#.to_owned(),
            r#"{"cwd":"<text, 2 chars>","sessionId":"<text, 1 chars>","type":"telepathy"}"#
                .to_owned()
        )
    );
    let unknown = feed(r#"{"type":"system","subtype":"dream","sessionId":"s"}"#).unwrap();
    assert!(records(&unknown).is_empty());
    // Fields of the wrong type are no records and no panic.
    for line in [
        r#"{"type":"user","message":{"parts":"hello"}}"#,
        r#"{"type":"user","message":{"parts":[5,null,{"text":7}]}}"#,
        r#"{"type":"assistant","message":{"parts":[{"functionCall":5},{"functionCall":{"args":[]}}]}}"#,
        r#"{"type":"tool_result","message":{"parts":[{"functionResponse":"x"}]},"toolCallResult":7}"#,
        r#"{"type":"system","subtype":"custom_title","systemPayload":{"customTitle":["x"]}}"#,
        r#"{"type":"user","sessionId":5,"timestamp":"yesterday","cwd":null}"#,
    ] {
        let observations = feed(line).expect("a JSON object reads");
        assert!(
            records(&observations)
                .iter()
                .all(|kind| !matches!(kind, RecordKind::Prompt { .. })),
            "{line}"
        );
    }
}

#[test]
fn what_the_cli_puts_in_itself_is_told_from_prompts() {
    let kinds = |line: &str| -> Vec<RecordKind> {
        records(&feed(line).unwrap()).into_iter().cloned().collect()
    };
    let shown = r#"{"type":"user","message":{"parts":[{"text":"expanded @a.txt"}]},"systemPayload":{"displayText":"read @a.txt"}}"#;
    assert_eq!(
        kinds(shown),
        [RecordKind::Prompt {
            text: "read @a.txt".to_string()
        }]
    );
    let cron = r#"{"type":"user","subtype":"cron","provenance":"system","message":{"parts":[{"text":"tick"}]}}"#;
    assert_eq!(kinds(cron), [RecordKind::TurnStarted { turn_id: None }]);
    let notice =
        r#"{"type":"user","subtype":"notification","message":{"parts":[{"text":"done"}]}}"#;
    assert_eq!(kinds(notice), [RecordKind::Unsettled]);
    let thought = r#"{"type":"assistant","message":{"parts":[{"text":"hmm","thought":true},{"text":"a"},{"text":"b"}]}}"#;
    assert_eq!(
        kinds(thought),
        [RecordKind::ModelThinking, RecordKind::ModelText]
    );
    let error = r#"{"type":"system","subtype":"ui_telemetry","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_error"}}}"#;
    assert_eq!(kinds(error), [RecordKind::Unsettled]);
    let sub = r#"{"type":"system","subtype":"ui_telemetry","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_error","subagent_id":"m"}}}"#;
    assert_eq!(kinds(sub), []);
    let compress = r#"{"type":"system","subtype":"chat_compression","systemPayload":{}}"#;
    assert_eq!(kinds(compress), [RecordKind::Compacting]);
    let title = feed(r#"{"type":"system","subtype":"custom_title","systemPayload":{"customTitle":"Fix\nit","titleSource":"auto"}}"#).unwrap();
    assert!(title.iter().any(|observation| matches!(
        observation,
        Observation::Info(Info { title: Some(title), .. })
            if title.text == "Fix it" && title.source == slate::agents::TitleSource::Generated
    )));
}

#[test]
fn a_huge_command_is_kept_bounded() {
    let command = "x".repeat(3 * 1024 * 1024);
    let line = format!(
        r#"{{"type":"assistant","message":{{"parts":[{{"functionCall":{{"id":"c1","name":"run_shell_command","args":{{"command":"{command}"}}}}}}]}}}}"#
    );
    let observations = feed(&line).unwrap();
    let Some(RecordKind::ToolCall { detail, input, .. }) = records(&observations).first().copied()
    else {
        panic!("a tool call");
    };
    assert_eq!(detail.as_ref().map(|text| text.chars().count()), Some(120));
    let input = input.as_ref().expect("the input is kept");
    assert!(input.cut && input.text.len() == slate::agents::INPUT_BYTES);
    // A line past the files edge's limit is reported, never parsed.
    assert!(read_lines(format!("{line}\n").as_bytes())
        .iter()
        .all(|outcome| outcome
            .as_ref()
            .is_err_and(|error| error.contains("oversized"))));
    // Nesting deeper than the JSON reader allows is an error, not a stack overflow.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(feed(&deep).is_err());
}

#[test]
fn every_prefix_of_every_fixture_reads_as_its_complete_lines() {
    for path in fixture_files() {
        let bytes = std::fs::read(&path).unwrap();
        let whole = read_lines(&bytes);
        for cut in 0..=bytes.len() {
            let prefix = read_lines(&bytes[..cut]);
            let complete = bytes[..cut].iter().filter(|&&byte| byte == b'\n').count();
            assert_eq!(prefix.len(), complete, "{} cut at {cut}", path.display());
            assert_eq!(
                prefix[..],
                whole[..complete],
                "{} cut at {cut}",
                path.display()
            );
        }
    }
}

fn fixture_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![fixtures()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 8, "only {} fixtures", files.len());
    files
}

fn fixture_lines() -> Vec<Vec<u8>> {
    fixture_files()
        .iter()
        .flat_map(|path| {
            let bytes = std::fs::read(path).unwrap();
            bytes
                .split(|&byte| byte == b'\n')
                .map(<[u8]>::to_vec)
                .collect::<Vec<_>>()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(lines in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..200), 0..8)) {
        for line in &lines {
            let _ = ChatLines.feed(line);
            let _ = qwen::parse_registry(line);
        }
    }

    #[test]
    fn mutated_fixture_lines_never_panic(
        picks in proptest::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..12)
    ) {
        let lines = fixture_lines();
        for (line, at, byte, how) in picks {
            let mut line = lines[line.index(lines.len())].clone();
            if !line.is_empty() {
                let at = at.index(line.len());
                match how {
                    0 => line[at] = byte,
                    1 => line.truncate(at),
                    _ => line.insert(at, byte),
                }
            }
            let _ = ChatLines.feed(&line);
            let _ = qwen::parse_registry(&line);
        }
    }
}
