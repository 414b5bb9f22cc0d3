//! Claude Code's registry and background jobs on disk, and its listing command
//! (`sources::listings`, read as Claude Code's description says).

use std::path::{Path, PathBuf};

use slate::agents::claude::{self, parse_registry};
use slate::agents::{ListingCommand, ListingRule};
use slate::model::{Listing, ListingEntry, ProblemKind, Timestamp};
use slate::sources::listings::{read_listing, AgentsCommand};

/// Where Claude Code's description says it lists its sessions.
fn claude_listing() -> &'static ListingRule {
    claude::DESCRIPTION
        .listing
        .as_ref()
        .expect("Claude Code keeps a listing")
}

fn claude_command() -> &'static ListingCommand {
    claude_listing()
        .command
        .as_ref()
        .expect("and a listing command")
}

/// A moment to ask the command at; the cache is fresh for `cache_for` after it.
fn at(seconds: i64) -> Timestamp {
    Timestamp::from_millis(1_795_950_000_000 + seconds * 1000)
}

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sources/claude")
}

#[test]
fn the_registry_and_jobs_are_read_and_bad_files_counted() {
    let root = fixture_root();
    let mut problems = Vec::new();
    let listing = read_listing(claude_listing(), &root, &mut problems);
    assert!(listing.available);

    // What the adapter makes of each registry file is its business; this checks that every
    // `<pid>.json` went through it and the legacy `pid-<n>.json` did not.
    let mut expected: Vec<String> = ["41234", "41301", "41377", "41420"]
        .iter()
        .filter_map(|pid| {
            let bytes = std::fs::read(root.join(format!("sessions/{pid}.json"))).ok()?;
            parse_registry(&bytes).ok().flatten()
        })
        .map(|entry| entry.session_id)
        .collect();
    expected.sort();
    let mut listed: Vec<String> = listing
        .entries
        .iter()
        .map(|entry| entry.session_id.clone())
        .collect();
    listed.sort();
    assert_eq!(listed, expected);
    assert!(!listed.contains(&"0000aaaa-0000-4000-8000-000000000001".to_string()));

    let mut kinds: Vec<(ProblemKind, String)> = problems
        .iter()
        .map(|problem| {
            let file = Path::new(&problem.place)
                .strip_prefix(&root)
                .map(|path| path.display().to_string())
                .unwrap_or_default();
            (problem.kind, file)
        })
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        vec![
            (
                ProblemKind::MalformedListing,
                "jobs/bad1/state.json".to_string()
            ),
            (
                ProblemKind::MalformedListing,
                "sessions/50000.json".to_string()
            ),
        ]
    );
}

#[test]
fn no_sessions_folder_means_no_listing() {
    let temp = tempfile::tempdir().expect("temp dir");
    let mut problems = Vec::new();
    let listing = read_listing(claude_listing(), temp.path(), &mut problems);
    assert_eq!(listing, Listing::default());
    assert!(problems.is_empty());
}

/// A temp folder with an executable `claude` running `body`, and the command that would run it
/// with a controlled environment: that folder first on `PATH`, and a temp `HOME`.
fn fake_claude(body: &str) -> (tempfile::TempDir, AgentsCommand) {
    use std::os::unix::fs::PermissionsExt;
    let temp = tempfile::tempdir().expect("temp dir");
    let bin = temp.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let script = bin.join("claude");
    std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let child_path = format!("{}:/usr/bin:/bin", bin.display());
    let mut command = AgentsCommand::new(
        claude_command(),
        Some(bin.clone().into_os_string()),
        Some(vec![
            ("PATH".into(), child_path.into()),
            ("HOME".into(), temp.path().as_os_str().to_owned()),
        ]),
    );
    command.timeout = std::time::Duration::from_millis(500);
    (temp, command)
}

#[test]
fn claude_agents_json_is_run_parsed_and_cached() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/registry/claude-code/claude-agents--json.output.json");
    let (temp, mut command) = fake_claude(&format!(
        "echo run >> \"$HOME/runs\"\n[ \"$1 $2\" = \"agents --json\" ] || exit 3\ncat '{}'",
        sample.display()
    ));
    let mut problems = Vec::new();
    let entries = command.entries(at(0), &mut problems);
    assert_eq!(problems, Vec::new());
    let expected = slate::agents::claude::parse_agents_json(&std::fs::read(&sample).expect("read"))
        .expect("the sample parses");
    assert!(!expected.is_empty());
    assert_eq!(entries, expected);
    // A second ask within the cache time does not run it again; one after it does.
    assert_eq!(command.entries(at(14), &mut problems), expected);
    let runs = std::fs::read_to_string(temp.path().join("runs")).expect("the script ran");
    assert_eq!(runs.lines().count(), 1);
    assert_eq!(command.entries(at(15), &mut problems), expected);
    let runs = std::fs::read_to_string(temp.path().join("runs")).expect("the script ran");
    assert_eq!(runs.lines().count(), 2);

    // Merged into a listing, a session the registry already has keeps the registry's entry.
    let mut listing = Listing {
        available: false,
        entries: vec![ListingEntry {
            status: None,
            ..expected[0].clone()
        }],
    };
    slate::sources::listings::merge_entries(&mut listing, entries);
    assert_eq!(listing.entries.len(), expected.len());
    assert_eq!(listing.entries[0].status, None);
}

#[test]
fn a_claude_agents_json_that_hangs_is_killed_and_counted() {
    let (_temp, mut command) = fake_claude("exec sleep 30");
    let mut problems = Vec::new();
    let started = std::time::Instant::now();
    assert_eq!(command.entries(at(0), &mut problems), Vec::new());
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].kind, ProblemKind::ListingTimeout);
}

#[test]
fn a_claude_agents_json_that_prints_garbage_is_counted() {
    let (_temp, mut command) = fake_claude("echo 'Unknown command: agents'");
    let mut problems = Vec::new();
    assert_eq!(command.entries(at(0), &mut problems), Vec::new());
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].kind, ProblemKind::MalformedListing);
}

#[test]
fn without_claude_on_the_path_nothing_runs() {
    let temp = tempfile::tempdir().expect("temp dir");
    let mut command = AgentsCommand::new(
        claude_command(),
        Some(temp.path().as_os_str().to_owned()),
        Some(Vec::new()),
    );
    assert_eq!(command.program(), None);
    let mut problems = Vec::new();
    assert_eq!(command.entries(at(0), &mut problems), Vec::new());
    assert_eq!(problems, Vec::new());
}

#[test]
fn a_changed_registry_entry_is_read_at_once_not_at_the_next_scan() {
    use slate::engine::{Engine, Options, ProcessSource};
    use slate::model::{ReasonCode, Status};

    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let now = slate::live::system_clock();
    crate::util::working_transcript(home, now);
    let mut table =
        crate::util::claude_process_table(now.minus(std::time::Duration::from_secs(60)));
    table.processes[0].start_ticks = Some(777);
    let entry = home.join(".claude/sessions/4242.json");
    std::fs::create_dir_all(entry.parent().unwrap()).unwrap();
    let write = |status: &str, waiting_for: &str| {
        let body = serde_json::json!({
            "pid": 4242, "sessionId": crate::util::SESSION, "cwd": "/work/acme",
            "procStart": "777", "kind": "interactive", "status": status,
            "waitingFor": waiting_for,
        });
        std::fs::write(&entry, body.to_string()).unwrap();
    };
    write("busy", "");
    let mut options = Options::from_env(slate::sources::roots::Env {
        home: Some(home.to_path_buf()),
        ..slate::sources::roots::Env::default()
    });
    options.processes = ProcessSource::Recorded(table);
    let mut engine = Engine::new(options);
    engine.refresh(now);
    let status = |engine: &Engine| {
        let session = engine.find(crate::util::SESSION).expect("the session");
        (session.status, session.session_state.reason.code)
    };
    assert_eq!(status(&engine).0, Status::Working);
    // The dialog opens: the CLI rewrites its entry, and the watcher's hint is read at once.
    write("waiting", "permission prompt");
    engine.read_path(&entry, now.plus(std::time::Duration::from_secs(1)));
    assert_eq!(
        status(&engine),
        (Status::Waiting, ReasonCode::PermissionPrompt)
    );
    // Approved: busy again.
    write("busy", "");
    engine.read_path(&entry, now.plus(std::time::Duration::from_secs(2)));
    assert_eq!(status(&engine).0, Status::Working);
}
