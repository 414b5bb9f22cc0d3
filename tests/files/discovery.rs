//! Where transcripts are found: the roots from HOME, the agents' variables and the config, the
//! folders the watcher watches, each agent's transcripts and nothing else, an unreadable folder
//! counted and passed, Codex's names from its session index, and one changed path read.

use std::fs;
use std::path::{Path, PathBuf};

use slate::agents::{Info, Observation, TitleSource, BUILT_IN};
use slate::model::{AgentKind, ProblemKind, SessionKey};
use slate::sources::roots::{is_interesting, resolve_roots, Env, Roots};
use slate::sources::walk::{ReadState, ScanOptions, ScanResult};
use slate::tracker::TranscriptRole;

use super::{
    append, claude_line, claude_main, codex_line, home_roots, now, read_of, scan, write, write_zst,
    CLAUDE_ID, CODEX_ID,
};

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
        ("/h/.copilot/session-state", true),
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
