//! `slate hook AGENT EVENT`, the command an installed hook runs, and `slate hooks` over a
//! temporary HOME: the hook exits 0, prints nothing and returns well within a second whether
//! Slate is absent, hangs, or never gets the event's end; a running Slate takes the event
//! (`POST /hooks`), else it goes to the spool. The 250 ms of docs/hooks.md is measured and
//! printed; the assertion keeps a margin a loaded machine cannot break.

use crate::util::slate_in;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const EVENT: &str = r#"{"session_id":"019a-hooked","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch x.txt"},"cwd":"/work/acme","transcript_path":null,"turn_id":"t1","model":"m","permission_mode":"default"}"#;

fn with_token(root: &Path) {
    let folder = root.join("config/slate");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("token"), "test-token-1234567890\n").unwrap();
}

/// Runs one hook with `input` written to it (and its standard input left open when `close` is
/// false), returning how long it took, its exit code and what it printed.
fn run_hook(mut command: Command, input: &str, close: bool) -> (Duration, Option<i32>, Vec<u8>) {
    let started = Instant::now();
    let mut child = command
        .args(["hook", "codex", "PermissionRequest"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    let held = if close {
        drop(stdin);
        None
    } else {
        Some(stdin)
    };
    let status = child.wait().unwrap();
    let took = started.elapsed();
    drop(held);
    let mut printed = Vec::new();
    child.stdout.unwrap().read_to_end(&mut printed).unwrap();
    child.stderr.unwrap().read_to_end(&mut printed).unwrap();
    (took, status.code(), printed)
}

fn spooled(root: &Path) -> usize {
    std::fs::read_to_string(root.join("data/slate/hooks.spool"))
        .map(|text| text.lines().count())
        .unwrap_or(0)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Runs the hook `runs` times and checks each run: exit 0, nothing printed, under a second.
fn check_runs(root: &Path, runs: usize, api: Option<&str>, close: bool) -> Duration {
    let times: Vec<Duration> = (0..runs)
        .map(|_| {
            let mut command = slate_in(root);
            if let Some(api) = api {
                command.env("SLATE_API", api);
            }
            let (took, code, printed) = run_hook(command, EVENT, close);
            assert_eq!(code, Some(0));
            assert!(
                printed.is_empty(),
                "printed {:?}",
                String::from_utf8_lossy(&printed)
            );
            assert!(took < Duration::from_secs(1), "took {took:?}");
            took
        })
        .collect();
    median(times)
}

#[test]
fn with_slate_absent_the_hook_returns_at_once_and_spools() {
    let root = tempfile::tempdir().unwrap();
    with_token(root.path());
    // A port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let api = format!("http://127.0.0.1:{port}");
    let took = check_runs(root.path(), 7, Some(&api), true);
    eprintln!("slate hook, Slate absent: median {took:?}");
    assert_eq!(spooled(root.path()), 7);
    let last = std::fs::read_to_string(root.path().join("data/slate/hooks-last/codex")).unwrap();
    assert!(last.starts_with("PermissionRequest "), "{last}");
}

#[test]
fn with_a_slate_that_never_answers_the_hook_still_returns() {
    let root = tempfile::tempdir().unwrap();
    with_token(root.path());
    // Accepts connections and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let api = format!("http://{}", listener.local_addr().unwrap());
    let held = std::thread::spawn(move || {
        let mut open = Vec::new();
        for stream in listener.incoming().take(7) {
            open.push(stream);
        }
        std::thread::sleep(Duration::from_secs(3));
    });
    let took = check_runs(root.path(), 7, Some(&api), true);
    eprintln!("slate hook, Slate hanging: median {took:?}");
    assert_eq!(spooled(root.path()), 7);
    drop(held);
}

#[test]
fn an_event_that_never_ends_is_dropped_in_time() {
    let root = tempfile::tempdir().unwrap();
    let took = check_runs(root.path(), 3, None, false);
    eprintln!("slate hook, standard input left open: median {took:?}");
    assert_eq!(spooled(root.path()), 0);
}

#[test]
fn what_the_hook_cannot_read_is_dropped_quietly() {
    let root = tempfile::tempdir().unwrap();
    for input in [
        "",
        "not json",
        "{\"session_id\": \"../../etc\"}",
        "[1,2]",
        "{}",
    ] {
        let (took, code, printed) = run_hook(slate_in(root.path()), input, true);
        assert_eq!((code, printed.len()), (Some(0), 0), "{input}");
        assert!(took < Duration::from_secs(1));
    }
    for args in [
        vec!["hook"],
        vec!["hook", "nobody", "Stop"],
        vec!["hook", "codex", "NoSuchEvent"],
        vec!["hook", "codex", "Stop", "extra"],
    ] {
        let output = slate_in(root.path())
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{args:?}");
        assert!(
            output.stdout.is_empty() && output.stderr.is_empty(),
            "{args:?}"
        );
    }
    assert_eq!(spooled(root.path()), 0);
}

#[test]
fn a_running_slate_takes_the_event() {
    let root = tempfile::tempdir().unwrap();
    // An event spooled while no Slate ran is read when one starts.
    with_token(root.path());
    let mut absent = slate_in(root.path());
    absent.env("SLATE_API", "http://127.0.0.1:9");
    let (_, code, _) = run_hook(absent, EVENT, true);
    assert_eq!((code, spooled(root.path())), (Some(0), 1));
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut serve = slate_in(root.path())
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let api = format!("http://127.0.0.1:{port}");
    let client = slate::client::Client::new(slate::client::address_of(&api).unwrap(), None);
    let deadline = Instant::now() + Duration::from_secs(30);
    while client.get_json::<serde_json::Value>("/health").is_err() {
        assert!(Instant::now() < deadline, "slate serve did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        spooled(root.path()),
        0,
        "slate serve drained the spool at its start"
    );
    let took = check_runs(root.path(), 5, Some(&api), true);
    eprintln!("slate hook, Slate running: median {took:?}");
    assert_eq!(
        spooled(root.path()),
        0,
        "the running Slate took every event"
    );
    // The API refuses a hook without the token, and one it cannot read.
    let token = std::fs::read_to_string(root.path().join("config/slate/token")).unwrap();
    assert!(!token.trim().is_empty());
    let refused = Command::new("curl")
        .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST"])
        .args(["-H", "Content-Type: application/json", "--data", "{}"])
        .arg(format!("{api}/hooks"))
        .output();
    if let Ok(refused) = refused {
        assert_eq!(String::from_utf8_lossy(&refused.stdout), "401");
        let bad = Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST"])
            .args(["-H", "Content-Type: application/json"])
            .args(["-H", &format!("Authorization: Bearer {}", token.trim())])
            .args([
                "--data",
                r#"{"agent":"codex","event":"Stop","session_id":"../x"}"#,
            ])
            .arg(format!("{api}/hooks"))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&bad.stdout), "422");
    }
    let _ = serve.kill();
    let _ = serve.wait();
}

#[test]
fn hooks_install_remove_and_status_over_a_temporary_home() {
    let root = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/hooks");
    let gemini = root.path().join("home/.gemini/settings.json");
    std::fs::create_dir_all(gemini.parent().unwrap()).unwrap();
    let original = std::fs::read(fixtures.join("gemini-settings.json")).unwrap();
    std::fs::write(&gemini, &original).unwrap();
    let codex = root.path().join("home/.codex/hooks.json");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    let broken = std::fs::read(fixtures.join("broken-truncated.json")).unwrap();
    std::fs::write(&codex, &broken).unwrap();

    let output = slate_in(root.path())
        .args(["hooks", "install", "gemini-cli", "codex"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout).to_string();
    let complained = String::from_utf8_lossy(&output.stderr).to_string();
    // The broken file is named, left as it was, and the command fails.
    assert_eq!(output.status.code(), Some(1), "{said}{complained}");
    assert!(
        complained.contains("hooks.json is left as it is"),
        "{complained}"
    );
    assert_eq!(std::fs::read(&codex).unwrap(), broken);
    assert!(said.contains("Gemini CLI: hooks installed in"), "{said}");
    assert!(said.contains(".slate-backup"), "{said}");
    let backups: Vec<_> = std::fs::read_dir(gemini.parent().unwrap())
        .unwrap()
        .filter_map(|entry| entry.ok())
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .contains(".slate-backup")
        })
        .collect();
    assert_eq!(backups.len(), 1);
    assert_eq!(std::fs::read(backups[0].path()).unwrap(), original);

    // Codex asks for trust: installing there says how.
    std::fs::remove_file(&codex).unwrap();
    let output = slate_in(root.path())
        .args(["hooks", "install", "codex"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(output.status.success());
    assert!(said.contains("Trust all and continue"), "{said}");

    // Twice: nothing changes.
    let before = std::fs::read(&gemini).unwrap();
    let output = slate_in(root.path())
        .args(["hooks", "install", "gemini-cli"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stdout).contains("already installed"));
    assert_eq!(std::fs::read(&gemini).unwrap(), before);

    let output = slate_in(root.path())
        .args(["hooks", "status", "--json"])
        .output()
        .unwrap();
    let status: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let agents = status["agents"].as_array().unwrap();
    let of = |id: &str| agents.iter().find(|a| a["agent"] == id).unwrap().clone();
    assert!(of("gemini-cli")["missing"].as_array().unwrap().is_empty());
    assert!(of("claude-code")["installed"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(of("cursor-agent")["verified"], "documentation");

    let output = slate_in(root.path())
        .args(["hooks", "remove", "gemini-cli", "codex"])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(std::fs::read(&gemini).unwrap(), original, "byte for byte");
    assert!(!codex.exists(), "the file Slate made is gone");

    // slate doctor says it per agent.
    let output = slate_in(root.path())
        .env("SLATE_STANDALONE", "1")
        .arg("doctor")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(said.contains("Agent hooks"), "{said}");
    assert!(said.contains("Gemini CLI    hooks not installed"), "{said}");
}

/// Gemini CLI runs a hook through a shell and denies the tool when the hook exits 2 or more,
/// with what it printed as the reason. Slate's entry for it ends in a guard, so a Slate that was
/// uninstalled or moved without `slate hooks remove` blocks nothing: the shell prints nothing
/// and exits 0. The other agents read a failing hook as a warning and go on.
#[test]
fn a_gemini_hook_whose_slate_is_gone_still_blocks_nothing() {
    let gemini = slate::agents::BUILT_IN.find("gemini-cli").unwrap();
    let hooks = gemini.hooks.unwrap();
    let text = slate::agents::hooks::settings::install(
        hooks,
        gemini.id,
        "/nonexistent/uninstalled/slate",
        "",
        &[],
    )
    .unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let command = value["hooks"]["BeforeTool"][0]["hooks"][0]["command"]
        .as_str()
        .expect("a command for BeforeTool")
        .to_string();
    assert!(command.ends_with(slate::agents::hooks::GUARD), "{command}");
    for shell in ["sh", "bash"] {
        let mut child = Command::new(shell)
            .args(["-c", &command])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The shell finds no program and exits without reading the event: a closed pipe is
        // what the agent would see too, and nothing else may go wrong.
        let written = child.stdin.take().unwrap().write_all(EVENT.as_bytes());
        if let Err(err) = written {
            assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe, "{err}");
        }
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{shell}: {command}");
        assert!(
            output.stdout.is_empty() && output.stderr.is_empty(),
            "{shell} printed {:?} {:?}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    // Unguarded, the same shell says `not found` and exits 127: a denial to Gemini CLI.
    let bare = command.strip_suffix(slate::agents::hooks::GUARD).unwrap();
    let output = Command::new("sh").args(["-c", bare]).output().unwrap();
    assert_eq!(output.status.code(), Some(127));
    assert!(!output.stderr.is_empty());
}

/// Cline CLI's hooks are a folder of files, one an event, each run whatever else is there for
/// the same event: Slate writes a script of its own per event, never over a file of the
/// person's, and takes out only its own.
#[test]
fn cline_gets_a_hook_file_per_event_beside_the_persons_own() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let folder = root.path().join("home/.cline/hooks");
    std::fs::create_dir_all(&folder).unwrap();
    // The person's own hook for an event, under another file name of that event: it stays.
    let theirs = folder.join("PreToolUse.sh");
    std::fs::write(&theirs, "#!/bin/sh\necho mine >> /tmp/never\n").unwrap();

    let output = slate_in(root.path())
        .args(["hooks", "install", "cline"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(output.status.success(), "{said}");
    let cline = slate::agents::BUILT_IN.find("cline").unwrap();
    let events: Vec<&str> = cline
        .hooks
        .unwrap()
        .events
        .iter()
        .map(|(event, _)| *event)
        .collect();
    for event in &events {
        let path = folder.join(event);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("#!/bin/sh\n"), "{text}");
        assert!(
            text.contains(&format!(" hook cline {event} 2>/dev/null || true")),
            "{text}"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755, "{event}");
    }
    assert_eq!(
        std::fs::read_to_string(&theirs).unwrap(),
        "#!/bin/sh\necho mine >> /tmp/never\n"
    );

    // Run as Cline runs it, with the slate binary gone: it prints nothing and exits 0.
    let script = std::fs::read_to_string(folder.join("PreToolUse"))
        .unwrap()
        .replace(env!("CARGO_BIN_EXE_slate"), "/nonexistent/slate");
    let moved = root.path().join("moved-PreToolUse");
    std::fs::write(&moved, script).unwrap();
    let output = Command::new("bash").arg(&moved).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stdout.is_empty() && output.stderr.is_empty());

    // Status: every event has its file.
    let output = slate_in(root.path())
        .args(["hooks", "status", "--json"])
        .output()
        .unwrap();
    let status: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let of = status["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|agent| agent["agent"] == "cline")
        .unwrap()
        .clone();
    assert!(of["missing"].as_array().unwrap().is_empty(), "{of}");
    assert_eq!(of["installed"].as_array().unwrap().len(), events.len());

    // Twice: nothing changes.
    let output = slate_in(root.path())
        .args(["hooks", "install", "cline"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stdout).contains("already installed"));

    // Remove: Slate's files go, the person's stays.
    let output = slate_in(root.path())
        .args(["hooks", "remove", "cline"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let left: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["PreToolUse.sh"]);

    // A file of the person's under the very name Slate would write refuses the install, and
    // nothing is written.
    std::fs::write(folder.join("TaskComplete"), "#!/bin/sh\nexit 0\n").unwrap();
    let output = slate_in(root.path())
        .args(["hooks", "install", "cline"])
        .output()
        .unwrap();
    let complained = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(output.status.code(), Some(1), "{complained}");
    assert!(
        complained.contains("TaskComplete is left as it is"),
        "{complained}"
    );
    assert!(complained.contains("not Slate's"), "{complained}");
    assert!(
        complained.contains("rename yours (TaskComplete.sh, say)"),
        "{complained}"
    );
    let mut left: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["PreToolUse.sh", "TaskComplete"]);
    assert_eq!(
        std::fs::read_to_string(folder.join("TaskComplete")).unwrap(),
        "#!/bin/sh\nexit 0\n"
    );
    // Nor does remove touch it.
    let output = slate_in(root.path())
        .args(["hooks", "remove", "cline"])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(folder.join("TaskComplete").exists());
}
