//! Incremental reading: only what was appended, a partial last line, malformed, huge and binary
//! lines, truncated, replaced and deleted transcripts, compressed rollouts (read once, compressed
//! in place, corrupt), and a closed large transcript read head and tail only.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime};

use slate::agents::claude::TranscriptLines;
use slate::agents::{Info, Observation};
use slate::lines::LineEvent;
use slate::model::{AgentKind, ProblemKind, SessionKey};
use slate::sources::folders::canonical_folder;
use slate::sources::tail::{FileTail, ReadPlan, TranscriptReader};
use slate::sources::walk::{ReadState, ScanOptions};

use super::{
    append, claude_line, claude_main, codex_line, home_roots, lines, read_of, scan, write,
    write_zst, CLAUDE_ID, CODEX_ID,
};

/// Reads what is new through a bare `FileTail` and lists exactly what it handed out: each line's
/// text, `<oversized N>` for a skipped line and `<reset>` when the file started over.
fn tail_read(tail: &mut FileTail, plan: ReadPlan) -> Vec<String> {
    let seen = std::cell::RefCell::new(Vec::new());
    tail.read(
        plan,
        &mut || seen.borrow_mut().push("<reset>".to_string()),
        &mut |event| {
            seen.borrow_mut().push(match event {
                LineEvent::Line(line) => String::from_utf8_lossy(line).into_owned(),
                LineEvent::Oversized { len } => format!("<oversized {len}>"),
            })
        },
    )
    .expect("read");
    seen.into_inner()
}

fn claude_reader(path: &Path) -> TranscriptReader {
    TranscriptReader::new(path, false, 8 << 20, Box::new(TranscriptLines::new(false)))
}

/// The observations a clean file holding just `text` gives, to compare a damaged file with.
fn clean_observations(dir: &Path, text: &str) -> Vec<Observation> {
    let path = dir.join("clean.jsonl");
    write(&path, text);
    let read = claude_reader(&path).read(ReadPlan::Whole).expect("read");
    assert!(read.problems.is_empty(), "{:?}", read.problems);
    assert!(!read.observations.is_empty());
    read.observations
}

#[test]
fn a_second_scan_reads_only_what_was_appended() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = claude_main(temp.path());
    write(&path, &lines(|n| claude_line(CLAUDE_ID, n), 0..3));
    let roots = home_roots(temp.path());
    let options = ScanOptions::default();
    let mut state = ReadState::new();

    let first = scan(&roots, &options, &mut state);
    assert_eq!(read_of(&first, &path).lines, 3);
    assert!(!read_of(&first, &path).head_tail);
    for batch in &first.batches {
        // Every folder the observations name comes with its canonical spelling.
        for observation in &batch.observations {
            if let Observation::Info(Info { cwd: Some(cwd), .. }) = observation {
                assert!(batch
                    .folders
                    .contains(&(cwd.clone(), canonical_folder(cwd))));
            }
        }
    }

    let added = claude_line(CLAUDE_ID, 3);
    append(&path, &added);
    let second = scan(&roots, &options, &mut state);
    let stats = read_of(&second, &path);
    assert_eq!(stats.lines, 1);
    assert_eq!(stats.bytes_read, added.len() as u64);
    assert!(!stats.reset);
    assert_eq!(second.batches.len(), 1);

    // Nothing changed: the file is not even opened.
    let third = scan(&roots, &options, &mut state);
    assert!(third.reads.is_empty());
    assert!(third.batches.is_empty());
}

#[test]
fn a_partial_last_line_waits_for_its_newline() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = temp.path().join("t.jsonl");
    let whole = r#"{"n":2,"text":"split across two writes"}"#;
    let (start, end) = whole.split_at(15);
    write(&path, &format!("{{\"n\":1}}\n{start}"));
    let mut tail = FileTail::new(&path, false, 8 << 20);
    assert_eq!(tail_read(&mut tail, ReadPlan::Whole), vec![r#"{"n":1}"#]);

    append(&path, &format!("{end}\n"));
    assert_eq!(tail_read(&mut tail, ReadPlan::Whole), vec![whole]);
    assert!(tail_read(&mut tail, ReadPlan::Whole).is_empty());
}

#[test]
fn a_malformed_middle_line_is_counted_and_the_rest_read() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = temp.path().join("t.jsonl");
    let (one, three) = (claude_line(CLAUDE_ID, 1), claude_line(CLAUDE_ID, 3));
    write(&path, &format!("{one}{{\"n\":2,\n\n{three}"));
    let read = claude_reader(&path).read(ReadPlan::Whole).expect("read");
    assert_eq!(
        read.observations,
        clean_observations(temp.path(), &format!("{one}{three}"))
    );
    assert_eq!(read.problems.len(), 1);
    assert_eq!(read.problems[0].kind, ProblemKind::MalformedLine);
    assert_eq!(read.problems[0].place, path.display().to_string());
}

#[test]
fn a_100_mb_line_is_skipped_unread_and_the_next_line_read() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = temp.path().join("t.jsonl");
    let (one, three) = (claude_line(CLAUDE_ID, 1), claude_line(CLAUDE_ID, 3));
    let mut file = File::create(&path).expect("create");
    file.write_all(one.as_bytes()).expect("write");
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..100 {
        file.write_all(&chunk).expect("write");
    }
    file.write_all(b"\n").expect("write");
    file.write_all(three.as_bytes()).expect("write");
    drop(file);

    let read = claude_reader(&path).read(ReadPlan::Whole).expect("read");
    assert_eq!(
        read.observations,
        clean_observations(temp.path(), &format!("{one}{three}"))
    );
    assert_eq!(read.problems.len(), 1);
    assert_eq!(read.problems[0].kind, ProblemKind::HugeLine);
    assert!(
        read.problems[0].detail.contains("104857600"),
        "{}",
        read.problems[0].detail
    );
    assert_eq!(read.stats.lines, 3);
}

#[test]
fn binary_garbage_is_counted_and_never_fatal() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = temp.path().join("t.jsonl");
    // Bytes from a simple generator: NULs, invalid UTF-8 and newlines in every mix.
    let mut garbage = Vec::new();
    let mut seed: u32 = 0x2545_f491;
    for _ in 0..200_000 {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        garbage.push((seed >> 24) as u8);
    }
    let after = claude_line(CLAUDE_ID, 7);
    garbage.push(b'\n');
    garbage.extend_from_slice(after.as_bytes());
    fs::write(&path, &garbage).expect("write");

    let read = claude_reader(&path).read(ReadPlan::Whole).expect("read");
    assert_eq!(read.observations, clean_observations(temp.path(), &after));
    assert!(read
        .problems
        .iter()
        .all(|problem| problem.kind == ProblemKind::MalformedLine));
    // Reported one by one up to a cap, then summed up in one more problem.
    assert_eq!(read.problems.len(), 21);
    assert!(read.problems[20].detail.contains("more malformed lines"));
}

#[test]
fn a_truncated_transcript_is_reset_and_read_again() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = temp.path().join("t.jsonl");
    write(&path, "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n");
    let mut tail = FileTail::new(&path, false, 8 << 20);
    assert_eq!(tail_read(&mut tail, ReadPlan::Whole).len(), 3);

    let file = OpenOptions::new().write(true).open(&path).expect("open");
    file.set_len(0).expect("truncate");
    drop(file);
    append(&path, "{\"n\":9}\n");
    assert_eq!(
        tail_read(&mut tail, ReadPlan::Whole),
        vec!["<reset>", r#"{"n":9}"#]
    );
}

#[test]
fn a_replaced_transcript_is_reset_and_read_again() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = claude_main(temp.path());
    write(&path, &claude_line(CLAUDE_ID, 1));
    let roots = home_roots(temp.path());
    let options = ScanOptions::default();
    let mut state = ReadState::new();
    scan(&roots, &options, &mut state);

    // A new, longer file renamed over the old one: no truncation, only a new identity.
    let fresh = temp.path().join("fresh.jsonl");
    write(&fresh, &lines(|n| claude_line(CLAUDE_ID, n), 0..4));
    fs::rename(&fresh, &path).expect("rename over");
    let result = scan(&roots, &options, &mut state);
    let stats = read_of(&result, &path);
    assert!(stats.reset);
    assert_eq!(stats.lines, 4);
    assert_eq!(result.batches.len(), 1);
    assert_eq!(
        result.batches[0].observations.first(),
        Some(&Observation::Reset)
    );
}

#[test]
fn a_compressed_rollout_is_read_once() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = temp.path().join(format!(
        ".codex/sessions/2026/11/28/rollout-2026-11-28T10-15-03-{CODEX_ID}.jsonl.zst"
    ));
    let text = lines(codex_line, 0..5);
    // The last line of a finished rollout needs no newline.
    write_zst(&path, text.trim_end());
    let roots = home_roots(temp.path());
    let options = ScanOptions::default();
    let mut state = ReadState::new();
    let first = scan(&roots, &options, &mut state);
    let stats = read_of(&first, &path);
    assert_eq!(stats.lines, 5);
    assert_eq!(stats.bytes_read, text.trim_end().len() as u64);
    assert_eq!(first.batches.len(), 1);
    assert_eq!(
        first.batches[0].key,
        SessionKey::new(AgentKind::CODEX, CODEX_ID)
    );

    let second = scan(&roots, &options, &mut state);
    assert!(second.reads.is_empty());
    assert!(second.batches.is_empty());

    // Read directly, the compressed rollout hands out every line, the last one without newline.
    let mut tail = FileTail::new(&path, true, 8 << 20);
    let read = tail_read(&mut tail, ReadPlan::Whole);
    assert_eq!(read.len(), 5);
    assert_eq!(read[4], codex_line(4).trim_end());
}

#[test]
fn a_closed_large_transcript_is_read_head_and_tail_only() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = claude_main(temp.path());
    let text = lines(|n| claude_line(CLAUDE_ID, n), 0..8000);
    assert!(text.len() > 2_000_000);
    write(&path, &text);
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    File::options()
        .write(true)
        .open(&path)
        .and_then(|file| file.set_modified(hour_ago))
        .expect("set mtime");

    let roots = home_roots(temp.path());
    let options = ScanOptions::default();
    let mut state = ReadState::new();
    let result = scan(&roots, &options, &mut state);
    let stats = read_of(&result, &path);
    assert!(stats.head_tail);
    assert!(
        stats.bytes_read <= options.head_bytes + options.tail_bytes + 1,
        "{stats:?}"
    );
    // Whole lines only, about 270 bytes each: roughly 128 KiB worth of the 8000.
    assert!(stats.lines > 400 && stats.lines < 500, "{stats:?}");

    // The session comes alive again: reading continues from the end, not from the middle.
    let added = claude_line(CLAUDE_ID, 8000);
    append(&path, &added);
    let result = scan(&roots, &options, &mut state);
    let stats = read_of(&result, &path);
    assert!(!stats.head_tail && !stats.reset);
    assert_eq!(stats.bytes_read, added.len() as u64);
    assert_eq!(stats.lines, 1);
}

#[test]
fn head_and_tail_keep_whole_lines_at_the_seams() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = temp.path().join("t.jsonl");
    let text = lines(|n| format!("{{\"n\":\"{n:05}\"}}\n"), 0..1000);
    fs::write(&path, &text).expect("write");
    // Each line is 14 bytes: a head of 30 holds two whole lines, a tail of 42 exactly three.
    let mut tail = FileTail::new(&path, false, 8 << 20);
    assert_eq!(
        tail_read(&mut tail, ReadPlan::HeadTail { head: 30, tail: 42 }),
        vec![
            r#"{"n":"00000"}"#,
            r#"{"n":"00001"}"#,
            r#"{"n":"00997"}"#,
            r#"{"n":"00998"}"#,
            r#"{"n":"00999"}"#
        ]
    );
}

#[test]
fn a_vouched_quiet_transcript_is_read_whole() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = claude_main(temp.path());
    write(&path, &lines(|n| claude_line(CLAUDE_ID, n), 0..2000));
    File::options()
        .write(true)
        .open(&path)
        .and_then(|file| file.set_modified(SystemTime::now() - Duration::from_secs(3600)))
        .expect("set mtime");
    let mut options = ScanOptions::default();
    options
        .vouched
        .insert(SessionKey::new(AgentKind::CLAUDE_CODE, CLAUDE_ID));
    let result = scan(&home_roots(temp.path()), &options, &mut ReadState::new());
    let stats = read_of(&result, &path);
    assert!(!stats.head_tail);
    assert_eq!(stats.lines, 2000);
}

#[test]
fn a_deleted_transcript_is_reported_gone() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = claude_main(temp.path());
    write(&path, &claude_line(CLAUDE_ID, 1));
    let roots = home_roots(temp.path());
    let options = ScanOptions::default();
    let mut state = ReadState::new();
    scan(&roots, &options, &mut state);
    fs::remove_file(&path).expect("remove");
    let result = scan(&roots, &options, &mut state);
    assert_eq!(result.gone.len(), 1);
    assert_eq!(
        result.gone[0].key,
        SessionKey::new(AgentKind::CLAUDE_CODE, CLAUDE_ID)
    );
    assert_eq!(result.gone[0].transcript, path.display().to_string());
    assert_eq!(state.tracked(), 0);
    assert!(scan(&roots, &options, &mut state).gone.is_empty());
}

#[test]
fn a_file_tail_hands_out_complete_lines_only() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = temp.path().join("t.jsonl");
    fs::write(&path, "a\nb").expect("write");
    let mut tail = FileTail::new(&path, false, 1024);
    assert_eq!(tail_read(&mut tail, ReadPlan::Whole), vec!["a"]);
    append(&path, "c\n");
    assert_eq!(tail_read(&mut tail, ReadPlan::Whole), vec!["bc"]);
}

#[test]
fn a_rollout_compressed_in_place_is_followed_not_reported_gone() {
    let temp = tempfile::tempdir().expect("temp dir");
    let plain = temp.path().join(format!(
        ".codex/sessions/2026/11/28/rollout-2026-11-28T10-15-03-{CODEX_ID}.jsonl"
    ));
    let text = lines(codex_line, 0..3);
    write(&plain, &text);
    let roots = home_roots(temp.path());
    let options = ScanOptions::default();
    let mut state = ReadState::new();
    scan(&roots, &options, &mut state);

    // Codex's maintenance task compresses the cold rollout and removes the plain file.
    let compressed = plain.with_extension("jsonl.zst");
    write_zst(&compressed, &text);
    fs::remove_file(&plain).expect("remove");
    let result = scan(&roots, &options, &mut state);
    assert!(result.gone.is_empty(), "{:?}", result.gone);
    assert_eq!(result.batches.len(), 1);
    assert_eq!(
        result.batches[0].transcript,
        compressed.display().to_string()
    );
    assert_eq!(
        result.batches[0].observations.first(),
        Some(&Observation::Reset)
    );
    assert_eq!(state.tracked(), 1);

    fs::remove_file(&compressed).expect("remove");
    let result = scan(&roots, &options, &mut state);
    assert_eq!(result.gone.len(), 1);
}

#[test]
fn a_corrupt_compressed_rollout_is_a_counted_problem() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = temp.path().join(format!(
        ".codex/archived_sessions/rollout-2026-11-28T10-15-03-{CODEX_ID}.jsonl.zst"
    ));
    write(&path, "this is not zstd at all\n");
    let result = scan(
        &home_roots(temp.path()),
        &ScanOptions::default(),
        &mut ReadState::new(),
    );
    assert_eq!(result.problems.len(), 1, "{:?}", result.problems);
    assert_eq!(result.problems[0].kind, ProblemKind::Unreadable);
    assert_eq!(result.problems[0].place, path.display().to_string());
}
