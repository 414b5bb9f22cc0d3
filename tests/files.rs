//! Transcript discovery and incremental reading (`sources::walk`, `sources::layouts`,
//! `sources::tail`), the roots and the one canonical folder, all in temp folders.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use slate::agents::claude::TranscriptLines;
use slate::agents::{Info, Observation, TitleSource, BUILT_IN};
use slate::lines::LineEvent;
use slate::model::{AgentKind, ProblemKind, SessionKey, Timestamp};
use slate::sources::folders::{canonical_folder, comparable, folder_pair, lexical, Platform};
use slate::sources::roots::{is_interesting, resolve_roots, Env, Roots};
use slate::sources::tail::{FileTail, ReadPlan, ReadStats, TranscriptReader};
use slate::sources::walk::{self, ReadState, ScanOptions, ScanResult};
use slate::tracker::TranscriptRole;

const CLAUDE_ID: &str = "2b9e4f10-8c7d-4e6f-a5b4-c3d2e1f0a9b8";
const CODEX_ID: &str = "019ac3f2-7d41-7a90-b1c2-3d4e5f607182";

/// A Claude Code user line, shaped like the real ones (docs/formats.md §1.2).
fn claude_line(session: &str, n: usize) -> String {
    format!(
        r#"{{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/dev/acme-api","sessionId":"{session}","version":"2.1.332","type":"user","message":{{"role":"user","content":"prompt {n}"}},"uuid":"u{n}","timestamp":"2026-11-28T09:10:00.020Z"}}"#
    ) + "\n"
}

fn codex_line(n: usize) -> String {
    format!(
        r#"{{"timestamp":"2026-11-28T10:15:03.560Z","type":"event_msg","payload":{{"type":"user_message","message":"prompt {n}","images":[]}}}}"#
    ) + "\n"
}

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("create folder");
    }
    fs::write(path, text).expect("write file");
}

fn append(path: &Path, text: &str) {
    let mut file = OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open to append");
    file.write_all(text.as_bytes()).expect("append");
}

fn lines(text: impl Fn(usize) -> String, range: std::ops::Range<usize>) -> String {
    range.map(text).collect()
}

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

fn home_roots(home: &Path) -> Roots {
    resolve_roots(BUILT_IN, &Env::with_home(home))
}

/// The time now, as the engine would hand it to the walk.
fn now() -> Timestamp {
    slate::sources::tail::timestamp(SystemTime::now())
}

/// One walk of the built-in agents' roots, now.
fn scan(roots: &Roots, options: &ScanOptions, state: &mut ReadState) -> ScanResult {
    walk::scan(BUILT_IN, roots, options, state, now())
}

fn read_of<'a>(result: &'a ScanResult, path: &Path) -> &'a ReadStats {
    &result
        .reads
        .iter()
        .find(|read| read.path == path)
        .unwrap_or_else(|| panic!("{} was not read: {:?}", path.display(), result.reads))
        .stats
}

fn claude_main(home: &Path) -> PathBuf {
    home.join(".claude/projects/-home-dev-acme-api")
        .join(format!("{CLAUDE_ID}.jsonl"))
}

#[test]
fn roots_follow_home_and_the_agents_variables() {
    let home = PathBuf::from("/h");
    let roots = home_roots(&home);
    let root = |roots: &Roots, agent| roots.get(agent).map(Path::to_path_buf);
    let under_home = [
        (AgentKind::CLAUDE_CODE, "/h/.claude"),
        (AgentKind::CODEX, "/h/.codex"),
        (AgentKind::GEMINI_CLI, "/h/.gemini"),
        (AgentKind::OPENCODE, "/h/.local/share/opencode"),
        (AgentKind::CURSOR_AGENT, "/h/.cursor"),
    ];
    for (agent, path) in under_home {
        assert_eq!(root(&roots, agent), Some(PathBuf::from(path)), "{agent}");
    }
    let env = Env {
        xdg_data_home: Some(PathBuf::from("/data")),
        xdg_config_home: Some(PathBuf::from("/config")),
        ..Env::with_home(&home)
    };
    let roots = resolve_roots(BUILT_IN, &env);
    assert_eq!(
        root(&roots, AgentKind::OPENCODE),
        Some(PathBuf::from("/data/opencode"))
    );
    assert_eq!(
        root(&roots, AgentKind::CURSOR_AGENT),
        Some(PathBuf::from("/config/cursor"))
    );
    let env = env
        .with_var("CLAUDE_CONFIG_DIR", "/c")
        .with_var("CODEX_HOME", "/x")
        .with_var("GEMINI_CLI_HOME", "/g")
        .with_var("CURSOR_CONFIG_DIR", "/cursor");
    let roots = resolve_roots(BUILT_IN, &env);
    let from_variables = [
        (AgentKind::CLAUDE_CODE, "/c"),
        (AgentKind::CODEX, "/x"),
        (AgentKind::GEMINI_CLI, "/g/.gemini"),
        (AgentKind::CURSOR_AGENT, "/cursor"),
    ];
    for (agent, path) in from_variables {
        assert_eq!(root(&roots, agent), Some(PathBuf::from(path)), "{agent}");
        // A variable's folder is the root itself, spelled without a trailing separator.
        assert!(!root(&roots, agent)
            .unwrap()
            .display()
            .to_string()
            .ends_with('/'));
    }
    assert_eq!(resolve_roots(BUILT_IN, &Env::default()), Roots::default());
}

#[test]
fn the_watcher_watches_the_folders_and_files_the_descriptions_name() {
    let roots = home_roots(Path::new("/h"));
    let specs: Vec<(String, bool)> = roots
        .watch_specs(BUILT_IN)
        .into_iter()
        .map(|spec| (spec.path.display().to_string(), spec.recursive))
        .collect();
    let expected = [
        ("/h/.claude/projects", true),
        ("/h/.claude/sessions", false),
        ("/h/.claude/jobs", true),
        ("/h/.codex/sessions", true),
        ("/h/.codex", false),
        ("/h/.gemini/tmp", true),
        ("/h/.local/share/opencode", false),
        ("/h/.cursor/chats", true),
    ];
    let expected: Vec<(String, bool)> = expected
        .iter()
        .map(|(path, recursive)| (path.to_string(), *recursive))
        .collect();
    assert_eq!(specs, expected);
    for path in [
        "/h/.claude/projects/x/abc.jsonl",
        "/h/.claude/sessions/4242.json",
        "/h/.codex/sessions/2026/11/28/rollout-x.jsonl.zst",
        "/h/.local/share/opencode/opencode.db-wal",
        "/work/acme/.git/HEAD",
    ] {
        assert!(is_interesting(BUILT_IN, Path::new(path)), "{path}");
    }
    for path in [
        "/h/.claude/debug/latest",
        "/h/.codex/log/codex-tui.log",
        "/h/.codex/state_5.sqlite-shm",
    ] {
        assert!(!is_interesting(BUILT_IN, Path::new(path)), "{path}");
    }
}

#[test]
fn discovery_finds_each_agents_transcripts_and_nothing_else() {
    let temp = tempfile::tempdir().expect("temp dir");
    let home = temp.path();
    let project = home.join(".claude/projects/-home-dev-acme-api");
    write(
        &project.join(format!("{CLAUDE_ID}.jsonl")),
        &claude_line(CLAUDE_ID, 1),
    );
    let subagents = project.join(CLAUDE_ID).join("subagents");
    write(
        &subagents.join("agent-a3f9.jsonl"),
        &claude_line(CLAUDE_ID, 2),
    );
    write(&subagents.join("agent-a3f9.meta.json"), "{}");
    write(
        &subagents.join("workflows/wf1/agent-b7d4.jsonl"),
        &claude_line(CLAUDE_ID, 3),
    );
    // A 2.0.x sub-agent file directly in the project folder is skipped (see classify_claude).
    write(&project.join("agent-old.jsonl"), &claude_line(CLAUDE_ID, 4));
    write(&project.join("notes.txt"), "not a transcript");

    let day = home.join(".codex/sessions/2026/11/28");
    let plain = day.join(format!("rollout-2026-11-28T10-15-03-{CODEX_ID}.jsonl"));
    write(&plain, &codex_line(1));
    // The same rollout compressed as well: the plain file wins.
    let both = day.join(format!("rollout-2026-11-28T10-15-03-{CODEX_ID}.jsonl.zst"));
    write_zst(&both, &codex_line(1));
    let cold_id = "019ac3f5-1b22-7e33-8f44-a55b66c77d88";
    let cold = day.join(format!("rollout-2026-11-28T10-18-11-{cold_id}.jsonl.zst"));
    write_zst(&cold, &codex_line(2));
    let archived_id = "019ac3f8-3d44-7a55-8b66-c77d88e99fa0";
    let archived = home.join(format!(
        ".codex/archived_sessions/rollout-2026-11-20T08-00-00-{archived_id}.jsonl"
    ));
    write(&archived, &codex_line(3));
    write(&day.join("rollout-without-an-id.jsonl"), &codex_line(4));

    let mut state = ReadState::new();
    let result = scan(&home_roots(home), &ScanOptions::default(), &mut state);
    assert!(result.problems.is_empty(), "{:?}", result.problems);
    assert_eq!(result.found, vec![AgentKind::CLAUDE_CODE, AgentKind::CODEX]);
    let mut found: Vec<(SessionKey, TranscriptRole, String)> = result
        .batches
        .iter()
        .map(|batch| {
            let file = Path::new(&batch.transcript)
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            (batch.key.clone(), batch.role.clone(), file)
        })
        .collect();
    found.sort_by(|a, b| a.2.cmp(&b.2));
    let claude = |role| (SessionKey::new(AgentKind::CLAUDE_CODE, CLAUDE_ID), role);
    let codex = |id: &str| (SessionKey::new(AgentKind::CODEX, id), TranscriptRole::Main);
    let mut expected = vec![
        {
            let (key, role) = claude(TranscriptRole::Main);
            (key, role, format!("{CLAUDE_ID}.jsonl"))
        },
        {
            let (key, role) = claude(TranscriptRole::Subagent {
                agent_id: "a3f9".to_string(),
            });
            (key, role, "agent-a3f9.jsonl".to_string())
        },
        {
            let (key, role) = claude(TranscriptRole::Subagent {
                agent_id: "b7d4".to_string(),
            });
            (key, role, "agent-b7d4.jsonl".to_string())
        },
        {
            let (key, role) = codex(CODEX_ID);
            (key, role, file_name(&plain))
        },
        {
            let (key, role) = codex(cold_id);
            (key, role, file_name(&cold))
        },
        {
            let (key, role) = codex(archived_id);
            (key, role, file_name(&archived))
        },
    ];
    expected.sort_by(|a, b| a.2.cmp(&b.2));
    assert_eq!(found, expected);
    assert_eq!(state.tracked(), 6);
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn write_zst(path: &Path, text: &str) {
    let compressed = zstd::encode_all(text.as_bytes(), 3).expect("compress");
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("create folder");
    }
    fs::write(path, compressed).expect("write zst");
}

#[test]
fn the_config_variables_move_the_roots() {
    let temp = tempfile::tempdir().expect("temp dir");
    let elsewhere = temp.path().join("claude-config");
    write(
        &elsewhere
            .join("projects/-p")
            .join(format!("{CLAUDE_ID}.jsonl")),
        &claude_line(CLAUDE_ID, 1),
    );
    // A transcript under $HOME/.claude is not looked at once CLAUDE_CONFIG_DIR is set.
    write(&claude_main(temp.path()), &claude_line(CLAUDE_ID, 1));
    let env = Env::with_home(temp.path())
        .with_var("CLAUDE_CONFIG_DIR", &elsewhere)
        .with_var("CODEX_HOME", temp.path().join("no-codex-here"));
    let roots = resolve_roots(BUILT_IN, &env);
    let result = scan(&roots, &ScanOptions::default(), &mut ReadState::new());
    assert_eq!(result.found, vec![AgentKind::CLAUDE_CODE]);
    assert_eq!(result.batches.len(), 1);
    assert!(result.batches[0]
        .transcript
        .starts_with(&elsewhere.display().to_string()));
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
fn an_unreadable_folder_is_a_counted_problem_and_the_walk_goes_on() {
    let temp = tempfile::tempdir().expect("temp dir");
    let projects = temp.path().join(".claude/projects");
    write(&claude_main(temp.path()), &claude_line(CLAUDE_ID, 1));
    let locked = projects.join("-locked");
    write(&locked.join("x.jsonl"), &claude_line("x", 1));
    set_mode(&locked, 0o000);
    // As root (or where permissions are not enforced) the locked folder is still readable; then
    // an entry that cannot be followed, a symlink pointing at itself, makes the unreadable folder.
    let blocked = fs::read_dir(&locked).is_err();
    if !blocked {
        set_mode(&locked, 0o755);
        fs::remove_dir_all(&locked).expect("remove");
        make_self_link(&locked);
    }

    let result = scan(
        &home_roots(temp.path()),
        &ScanOptions::default(),
        &mut ReadState::new(),
    );
    if blocked {
        set_mode(&locked, 0o755);
    }
    let unreadable: Vec<_> = result
        .problems
        .iter()
        .filter(|problem| problem.kind == ProblemKind::Unreadable)
        .collect();
    assert_eq!(unreadable.len(), 1, "{:?}", result.problems);
    assert!(unreadable[0].place.ends_with("-locked"));
    assert_eq!(result.batches.len(), 1);
    assert_eq!(result.batches[0].key.id.as_str(), CLAUDE_ID);
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) {}

#[cfg(unix)]
fn make_self_link(path: &Path) {
    std::os::unix::fs::symlink(path, path).expect("symlink");
}

#[cfg(windows)]
fn make_self_link(path: &Path) {
    std::os::windows::fs::symlink_dir(path, path).expect("symlink");
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

fn named_titles(result: &ScanResult, id: &str) -> Vec<String> {
    result
        .batches
        .iter()
        .filter(|batch| batch.key == SessionKey::new(AgentKind::CODEX, id))
        .flat_map(|batch| &batch.observations)
        .filter_map(|observation| match observation {
            Observation::Info(Info {
                title: Some(title), ..
            }) if title.source == TitleSource::Named => Some(title.text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn codex_names_come_from_the_session_index() {
    let temp = tempfile::tempdir().expect("temp dir");
    let codex = temp.path().join(".codex");
    write(
        &codex.join(format!(
            "sessions/2026/11/28/rollout-2026-11-28T10-15-03-{CODEX_ID}.jsonl"
        )),
        &codex_line(1),
    );
    let index = codex.join("session_index.jsonl");
    write(
        &index,
        &format!(
            "{{\"id\":\"{CODEX_ID}\",\"thread_name\":\"first\",\"updated_at\":\"2026-11-28T10:31:20.000Z\"}}\n\
             {{\"id\":\"{CODEX_ID}\",\"thread_name\":\"TODO cleanup\",\"updated_at\":\"2026-11-28T10:32:20.000Z\"}}\n"
        ),
    );
    let roots = home_roots(temp.path());
    let options = ScanOptions::default();
    let mut state = ReadState::new();
    let first = scan(&roots, &options, &mut state);
    // The newest line for an id wins.
    assert_eq!(named_titles(&first, CODEX_ID), vec!["TODO cleanup"]);

    append(
        &index,
        &format!("{{\"id\":\"{CODEX_ID}\",\"thread_name\":\"renamed\",\"updated_at\":\"2026-11-28T11:00:00.000Z\"}}\n"),
    );
    let second = scan(&roots, &options, &mut state);
    assert_eq!(second.batches.len(), 1);
    assert_eq!(named_titles(&second, CODEX_ID), vec!["renamed"]);
}

#[test]
fn read_path_reads_one_changed_file() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = claude_main(temp.path());
    write(&path, &claude_line(CLAUDE_ID, 1));
    let roots = home_roots(temp.path());
    let options = ScanOptions::default();
    let mut state = ReadState::new();
    scan(&roots, &options, &mut state);

    append(&path, &claude_line(CLAUDE_ID, 2));
    let result = state.read_path(BUILT_IN, &roots, &options, &path, now());
    assert_eq!(result.batches.len(), 1);
    assert_eq!(read_of(&result, &path).lines, 1);

    let stranger = temp.path().join("elsewhere.jsonl");
    write(&stranger, &claude_line(CLAUDE_ID, 3));
    let result = state.read_path(BUILT_IN, &roots, &options, &stranger, now());
    assert!(result.batches.is_empty() && result.reads.is_empty());

    fs::remove_file(&path).expect("remove");
    let result = state.read_path(BUILT_IN, &roots, &options, &path, now());
    assert_eq!(result.gone.len(), 1);
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
fn canonical_folders_resolve_links_and_drop_trailing_separators() {
    let temp = tempfile::tempdir().expect("temp dir");
    let real = temp.path().join("real");
    fs::create_dir(&real).expect("mkdir");
    let real_canonical = fs::canonicalize(&real).expect("canonicalize");
    let expected = canonical_folder(&real_canonical.display().to_string());
    #[cfg(unix)]
    {
        let link = temp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        assert_eq!(canonical_folder(&link.display().to_string()), expected);
    }
    assert_eq!(canonical_folder(&format!("{}/", real.display())), expected);
    // A folder that no longer exists is normalised without the disk.
    let gone = temp.path().join("gone");
    assert_eq!(
        canonical_folder(&format!("{}/./sub/../", gone.display())),
        canonical_folder(&gone.display().to_string())
    );
    assert!(!canonical_folder("/no/such/folder/").ends_with('/'));
}

#[test]
fn folders_compare_by_each_platforms_rules() {
    assert_eq!(lexical("/a/b/../c/./d/"), "/a/c/d");
    assert_eq!(lexical("/"), "/");
    assert_eq!(lexical("rel/x/"), "rel/x");
    let cases = [
        // macOS: `/tmp`, `/var` and `/etc` resolve into `/private`, which transcripts may not
        // write; the file system ignores case.
        (Platform::MacOs, "/private/tmp/Acme", "/tmp/acme"),
        (Platform::MacOs, "/private/var/folders/x", "/var/folders/x"),
        (Platform::MacOs, "/private/etc", "/etc"),
        (Platform::MacOs, "/private/tmpfile", "/private/tmpfile"),
        (
            Platform::MacOs,
            "/Users/Dev/Acme-API",
            "/users/dev/acme-api",
        ),
        // Windows: the verbatim prefix canonicalize adds is dropped; case is ignored.
        (Platform::Windows, r"\\?\C:\Users\Dev", r"c:\users\dev"),
        (Platform::Windows, r"C:\Work", r"c:\work"),
        // Elsewhere a folder is what it resolved to.
        (Platform::Other, "/home/Dev/acme", "/home/Dev/acme"),
        (Platform::Other, "/private/tmp/x", "/private/tmp/x"),
    ];
    for (platform, resolved, expected) in cases {
        assert_eq!(
            comparable(resolved, platform),
            expected,
            "{platform:?} {resolved}"
        );
    }
}

#[test]
fn stores_and_transcripts_pair_folders_the_same_way() {
    let temp = tempfile::tempdir().expect("temp dir");
    let folder = temp.path().join("acme");
    fs::create_dir(&folder).expect("mkdir");
    let written = format!("{}/", folder.display());
    assert_eq!(
        folder_pair(&written),
        vec![(written.clone(), canonical_folder(&written))]
    );
    // A folder that is gone still gets its lexical spelling, as a transcript's folder does.
    let gone = format!("{}/gone/../gone2/", temp.path().display());
    assert_eq!(
        folder_pair(&gone),
        vec![(gone.clone(), canonical_folder(&gone))]
    );
    assert!(!folder_pair(&gone)[0].1.ends_with('/'));
    assert_eq!(folder_pair(""), Vec::new());
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

#[test]
fn read_path_follows_the_codex_name_index() {
    let temp = tempfile::tempdir().expect("temp dir");
    let codex = temp.path().join(".codex");
    write(
        &codex.join(format!(
            "sessions/2026/11/28/rollout-2026-11-28T10-15-03-{CODEX_ID}.jsonl"
        )),
        &codex_line(1),
    );
    let roots = home_roots(temp.path());
    let options = ScanOptions::default();
    let mut state = ReadState::new();
    scan(&roots, &options, &mut state);

    let index = codex.join("session_index.jsonl");
    write(
        &index,
        &format!("{{\"id\":\"{CODEX_ID}\",\"thread_name\":\"named later\"}}\n"),
    );
    let result = state.read_path(BUILT_IN, &roots, &options, &index, now());
    assert_eq!(named_titles(&result, CODEX_ID), vec!["named later"]);
}
