//! The process scan, agent folder resolution and recorded process tables (`sources::processes`).

use std::fs;

use slate::agents::{AgentProcess, ProcessRole};
use slate::model::{AgentKind, ProcessInfo, ProcessTable, Timestamp};
use slate::sources::folders::canonical_folder;
use slate::sources::processes::{
    load_table, parse_start_ticks, recognise_all_with, scan_processes,
};

#[test]
fn the_scan_finds_this_test_process() {
    let table = scan_processes();
    let me = table
        .get(std::process::id())
        .expect("the test process is in the table");
    assert!(!me.cmd.is_empty());
    assert!(me.start_time > Timestamp::from_millis(0));
    assert!(me.cwd.is_some());
    if cfg!(target_os = "linux") {
        assert!(me.start_ticks.is_some());
    }
}

#[test]
fn start_ticks_are_counted_after_the_last_parenthesis() {
    let stat = "4242 (tmux: (server) x) S 1 4242 4242 0 -1 4194560 935 0 0 0 \
                12 3 0 0 20 0 1 0 2093318 12345678 900 18446744073709551615";
    assert_eq!(parse_start_ticks(stat), Some(2093318));
    assert_eq!(parse_start_ticks("1 (init) S 0"), None);
    assert_eq!(parse_start_ticks("garbage without parens"), None);
}

fn process(pid: u32, cwd: Option<&str>, cmd: &[&str]) -> ProcessInfo {
    ProcessInfo {
        pid,
        ppid: Some(1),
        name: cmd.first().copied().unwrap_or_default().to_string(),
        exe: None,
        cmd: cmd.iter().map(|arg| arg.to_string()).collect(),
        cwd: cwd.map(str::to_string),
        start_time: Timestamp::from_millis(1_795_942_190_000),
        start_ticks: Some(2093318),
    }
}

/// A stand-in recogniser: every `codex` process, with `-C <dir>` as its folder.
fn codex_like(info: &ProcessInfo) -> Option<AgentProcess> {
    if info.cmd.first().map(String::as_str) != Some("codex") {
        return None;
    }
    let folder_arg = info
        .cmd
        .iter()
        .position(|arg| arg == "-C")
        .and_then(|at| info.cmd.get(at + 1))
        .cloned();
    Some(AgentProcess {
        agent: AgentKind::CODEX,
        role: ProcessRole::Interactive,
        folder_arg,
        session_arg: None,
    })
}

#[test]
fn folders_resolve_relative_arguments_and_symlinks() {
    let temp = tempfile::tempdir().expect("temp dir");
    let base = temp.path().join("base");
    let target = temp.path().join("target");
    fs::create_dir_all(base.join("relative/dir")).expect("mkdir");
    fs::create_dir_all(&target).expect("mkdir");
    let base_text = base.display().to_string();
    let table = ProcessTable {
        processes: vec![
            process(10, Some(&base_text), &["codex", "-C", "relative/dir"]),
            process(11, Some(&base_text), &["codex"]),
            process(12, Some(&base_text), &["bash"]),
            process(13, None, &["codex", "-C", "relative/dir"]),
        ],
    };
    let seen = recognise_all_with(&table, codex_like);
    let folders: Vec<(u32, Option<String>)> = seen
        .iter()
        .map(|process| (process.info.pid, process.folder.clone()))
        .collect();
    let canonical = |path: &std::path::Path| {
        Some(canonical_folder(
            &fs::canonicalize(path)
                .expect("canonicalize")
                .display()
                .to_string(),
        ))
    };
    assert_eq!(
        folders,
        vec![
            (10, canonical(&base.join("relative/dir"))),
            (11, canonical(&base)),
            (13, None),
        ]
    );

    #[cfg(unix)]
    {
        let link = temp.path().join("link");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let link_text = link.display().to_string();
        let table = ProcessTable {
            processes: vec![process(20, Some("/"), &["codex", "-C", &link_text])],
        };
        let seen = recognise_all_with(&table, codex_like);
        assert_eq!(seen[0].folder, canonical(&target));
    }
}

#[test]
fn a_recorded_table_loads() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = temp.path().join("processes.json");
    fs::write(
        &path,
        r#"[{"pid":41301,"ppid":41000,"name":"claude","exe":"/home/dev/.local/bin/claude",
            "cmd":["claude","--resume","4c5d"],"cwd":"/home/dev/acme-api",
            "start_ticks":2093318,"start_time":"2026-11-28T09:49:50.000Z"},
           {"pid":7,"name":"init","cmd":[],"start_time":"2026-11-28T00:00:00Z"}]"#,
    )
    .expect("write");
    let table = load_table(&path).expect("load");
    assert_eq!(table.processes.len(), 2);
    let claude = table.get(41301).expect("claude");
    assert_eq!(claude.start_ticks, Some(2093318));
    assert_eq!(claude.cmd, vec!["claude", "--resume", "4c5d"]);
    assert_eq!(
        claude.start_time,
        Timestamp::parse_rfc3339("2026-11-28T09:49:50Z").expect("time")
    );
    assert_eq!(table.get(7).and_then(|init| init.ppid), None);

    fs::write(&path, "{not json").expect("write");
    assert!(load_table(&path).is_err());
    assert!(load_table(&temp.path().join("missing.json")).is_err());
}

/// Gemini CLI relaunches itself: a parent `node gemini.js` waits for a child running the same
/// script. Only the child may vouch, so the parent comes out a helper. The table mirrors what a
/// scan of a real relaunch shows (docs/formats.md §3); the third process is a print-mode run that
/// did not relaunch (`GEMINI_CLI_NO_RELAUNCH`) and stays what it is.
#[test]
fn a_gemini_relaunch_parent_is_a_helper() {
    let table = load_table(std::path::Path::new(
        "fixtures/sources/gemini/relaunch-processes.json",
    ))
    .expect("the fixture loads");
    let seen = slate::sources::processes::recognise_all(slate::agents::BUILT_IN, &table);
    let roles: Vec<(u32, ProcessRole)> = seen
        .iter()
        .map(|process| (process.info.pid, process.recognised.role))
        .collect();
    assert_eq!(
        roles,
        vec![
            (4100, ProcessRole::Helper),
            (4117, ProcessRole::Interactive),
            (5200, ProcessRole::Print),
        ]
    );
    assert!(seen
        .iter()
        .all(|process| process.recognised.agent == AgentKind::GEMINI_CLI));
}

#[test]
fn an_agent_knows_when_its_newest_descendant_started() {
    let started = |pid: u32, ppid: u32, seconds: i64| ProcessInfo {
        ppid: Some(ppid),
        start_time: Timestamp::from_millis(1_795_942_000_000 + seconds * 1000),
        ..process(pid, Some("/work/acme"), &["bash", "-c", "x"])
    };
    let table = ProcessTable {
        processes: vec![
            started(10, 1, 0),
            ProcessInfo {
                ppid: Some(10),
                ..process(20, Some("/work/acme"), &["codex"])
            },
            // Its MCP server, started with it, and the approved command two levels down.
            started(21, 20, 5),
            started(30, 20, 40),
            started(31, 30, 90),
            // A process of another tree, newer than all of them, is not the agent's.
            started(40, 10, 300),
            // A parent link that loops (a pid recycled between reads) still ends.
            started(50, 51, 500),
            started(51, 50, 500),
            ProcessInfo {
                ppid: Some(51),
                ..process(52, Some("/work/acme"), &["codex"])
            },
            // An agent with no children has none.
            ProcessInfo {
                ppid: Some(1),
                ..process(60, Some("/work/acme"), &["codex"])
            },
        ],
    };
    let seen = recognise_all_with(&table, codex_like);
    let newest = |pid: u32| {
        seen.iter()
            .find(|p| p.info.pid == pid)
            .unwrap()
            .newest_child
    };
    assert_eq!(newest(20), Some(Timestamp::from_millis(1_795_942_090_000)));
    assert_eq!(newest(52), None);
    assert_eq!(newest(60), None);
}
