//! `slate hook` and the spool at run time, over a temporary HOME with Claude Code sessions a
//! recorded process table vouches for: a running Slate takes what is spooled while it runs (not
//! only at its start), 40 hooks fired at once against a running `slate serve` all reach it, a
//! one-shot `slate sessions` reads the spool and leaves it for a later Slate, a hook starved past
//! its budget still hands its event over, and a FIFO where
//! the spool or the last-event note goes never holds the hook past its budget. The figures of
//! docs/hooks.md (all 40 seen within 2 s, a blocked hook back within 300 ms) are measured and
//! printed; the assertions keep a margin a loaded machine cannot break.

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use slate::client::Client;
use slate::model::ProcessInfo;

use crate::util::slate_in;

/// The sessions of the burst.
const SESSIONS: usize = 40;

pub(super) fn session_id(n: usize) -> String {
    format!("7f3c1d2e-5a4b-4c3d-9e8f-{n:012}")
}

fn folder(n: usize) -> String {
    format!("/work/p{n}")
}

/// Claude Code session `n` at work on a command in its own folder, with the process that
/// vouches for it; the processes go in `processes.json` under `root`, whose path is returned.
pub(super) fn working_sessions(root: &Path, count: usize) -> PathBuf {
    let now = slate::live::system_clock();
    let started = now.minus(Duration::from_secs(60));
    let mut table = Vec::new();
    for n in 0..count {
        let (id, folder) = (session_id(n), folder(n));
        let path = root.join(format!(
            "home/.claude/projects/{}/{id}.jsonl",
            folder.replace('/', "-")
        ));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let line = |kind: &str, body: &str| {
            format!(
                r#"{{"type":"{kind}","cwd":"{folder}","sessionId":"{id}","version":"2.1.332","uuid":"u","timestamp":"{now}",{body}}}"#
            ) + "\n"
        };
        let text = line(
            "user",
            r#""message":{"role":"user","content":"run the tests"}"#,
        ) + &line(
            "assistant",
            r#""message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"cargo test"}}]}"#,
        );
        std::fs::write(&path, text).unwrap();
        table.push(ProcessInfo {
            pid: 5000 + n as u32,
            ppid: Some(1),
            name: "claude".to_string(),
            exe: None,
            cmd: vec!["claude".to_string()],
            cwd: Some(folder),
            start_time: started,
            start_ticks: None,
        });
    }
    let path = root.join("processes.json");
    std::fs::write(&path, serde_json::to_vec(&table).unwrap()).unwrap();
    path
}

/// The permission hook Claude Code sends for session `n`.
pub(super) fn permission_event(n: usize) -> String {
    serde_json::json!({
        "session_id": session_id(n),
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": format!("touch x{n}.txt")},
        "cwd": folder(n),
        "transcript_path": null,
    })
    .to_string()
}

/// Starts `slate hook claude-code PermissionRequest` for session `n` with its event written and
/// its input closed, talking to `api` (else finding this HOME's Slate as it does by default).
pub(super) fn start_hook(root: &Path, api: Option<&str>, n: usize) -> Child {
    let mut child = spawned_hook(root, api, "PermissionRequest");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(permission_event(n).as_bytes()).unwrap();
    drop(stdin);
    child
}

/// `slate hook claude-code EVENT` started in `root`'s HOME (posting to `api` when given), its
/// standard input, output and error piped, nothing written to it yet.
pub(super) fn spawned_hook(root: &Path, api: Option<&str>, event: &str) -> Child {
    let mut command = slate_in(root);
    if let Some(api) = api {
        command.env("SLATE_API", api);
    }
    command
        .args(["hook", "claude-code", event])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for a hook and checks what the agent sees of it: exit 0, nothing printed. One still
/// running after 10 s is killed, and the test fails.
fn finished_quietly(mut child: Child) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("slate hook was still running after 10 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(
        output.stdout.is_empty() && output.stderr.is_empty(),
        "printed {:?} {:?}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn spool_path(root: &Path) -> PathBuf {
    root.join("data/slate/hooks.spool")
}

fn spooled(root: &Path) -> usize {
    std::fs::read_to_string(spool_path(root))
        .map(|text| text.lines().count())
        .unwrap_or(0)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `slate serve` over `root`, killed when the test ends, even by a failed assertion.
pub(super) struct Serving {
    child: Child,
    pub(super) client: Client,
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Serving {
    pub(super) fn start(root: &Path, table: &Path) -> Serving {
        let port = free_port();
        let child = slate_in(root)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .arg("--processes")
            .arg(table)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let api = format!("http://127.0.0.1:{port}");
        let token_file = root.join("config/slate/token");
        let deadline = Instant::now() + Duration::from_secs(60);
        let client = loop {
            assert!(Instant::now() < deadline, "slate serve did not start");
            std::thread::sleep(Duration::from_millis(100));
            let Ok(token) = std::fs::read_to_string(&token_file) else {
                continue;
            };
            let client = Client::new(
                slate::client::address_of(&api).unwrap(),
                Some(token.trim().to_string()),
            );
            if client.get_json::<serde_json::Value>("/health").is_ok() {
                break client;
            }
        };
        Serving { child, client }
    }

    /// The ids of the live sessions that need the person, once `count` sessions are listed.
    fn needing(&self) -> Option<Vec<String>> {
        let live: serde_json::Value = self.client.get_json("/sessions/live").ok()?;
        let sessions = live.get("sessions").unwrap_or(&live).as_array()?.clone();
        Some(
            sessions
                .iter()
                .filter(|session| session["status"] == "waiting")
                .map(|session| session["id"].as_str().unwrap_or_default().to_string())
                .collect(),
        )
    }

    fn listed(&self) -> usize {
        self.client
            .get_json::<serde_json::Value>("/sessions/live")
            .ok()
            .and_then(|live| Some(live.get("sessions").unwrap_or(&live).as_array()?.len()))
            .unwrap_or(0)
    }

    /// Waits up to `limit` for `count` sessions to need the person; how long it took, or the
    /// ids that did by then.
    fn wait_needing(&self, count: usize, limit: Duration) -> Result<Duration, Vec<String>> {
        let started = Instant::now();
        loop {
            let needing = self.needing().unwrap_or_default();
            if needing.len() >= count {
                return Ok(started.elapsed());
            }
            if started.elapsed() > limit {
                return Err(needing);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Starts a Slate over `count` working sessions and waits until it lists them all, Working.
fn serving_working(root: &Path, count: usize) -> Serving {
    let table = working_sessions(root, count);
    let serving = Serving::start(root, &table);
    let deadline = Instant::now() + Duration::from_secs(30);
    while serving.listed() < count {
        assert!(Instant::now() < deadline, "the sessions were not listed");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(serving.needing(), Some(Vec::new()), "all are working");
    serving
}

/// A token of this HOME, for a hook to find when no Slate made one.
fn with_token(root: &Path) {
    std::fs::create_dir_all(root.join("config/slate")).unwrap();
    std::fs::write(root.join("config/slate/token"), "test-token-1234567890\n").unwrap();
}

/// A port nobody listens on: a hook told to post there spools its event.
fn nobody() -> String {
    format!("http://127.0.0.1:{}", free_port())
}

#[test]
fn a_running_slate_takes_what_is_spooled_while_it_runs() {
    let root = tempfile::tempdir().unwrap();
    let serving = serving_working(root.path(), 1);
    // The hook misses the running Slate (as one does whose POST ran out of time) and spools.
    finished_quietly(start_hook(root.path(), Some(&nobody()), 0));
    let took = serving.wait_needing(1, Duration::from_secs(20));
    eprintln!("spooled while Slate runs, seen after {took:?}");
    assert!(took.is_ok(), "the running Slate never read the spool");
    let deadline = Instant::now() + Duration::from_secs(5);
    while spooled(root.path()) > 0 {
        assert!(Instant::now() < deadline, "the spool was not emptied");
        std::thread::sleep(Duration::from_millis(50));
    }
}

// A hook that got no CPU from just after it started until past its budget (stopped there, as a
// burst on a loaded machine starves one) finds its event written when it runs, and hands it over:
// with a read cut at its deadline, such a hook dropped the event.
#[test]
fn a_hook_starved_past_its_budget_still_hands_its_event_over() {
    let root = tempfile::tempdir().unwrap();
    let serving = serving_working(root.path(), 1);
    let mut child = spawned_hook(root.path(), None, "PermissionRequest");
    // Its watchdog runs (a second thread): the hook is past its start and waits for its event.
    let pid = child.id();
    let tasks = format!("/proc/{pid}/task");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_dir(&tasks).map_or(0, |tasks| tasks.count()) < 2 {
        assert!(
            Instant::now() < deadline,
            "the hook never started its watchdog"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let hook = nix::unistd::Pid::from_raw(pid as i32);
    nix::sys::signal::kill(hook, nix::sys::signal::Signal::SIGSTOP).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(permission_event(0).as_bytes()).unwrap();
    drop(stdin);
    std::thread::sleep(Duration::from_millis(400));
    nix::sys::signal::kill(hook, nix::sys::signal::Signal::SIGCONT).unwrap();
    finished_quietly(child);
    let took = serving.wait_needing(1, Duration::from_secs(20));
    eprintln!("a hook stopped for 400 ms: its event seen after {took:?}");
    assert!(
        took.is_ok(),
        "the starved hook's event never reached the running Slate"
    );
}

#[test]
fn forty_hooks_at_once_all_reach_a_running_slate() {
    let root = tempfile::tempdir().unwrap();
    let serving = serving_working(root.path(), SESSIONS);
    let fired = Instant::now();
    let hooks: Vec<Child> = (0..SESSIONS)
        .map(|n| start_hook(root.path(), None, n))
        .collect();
    let started = fired.elapsed();
    for hook in hooks {
        finished_quietly(hook);
    }
    let ended = fired.elapsed();
    let left_in_spool = spooled(root.path());
    let seen = serving.wait_needing(SESSIONS, Duration::from_secs(30));
    eprintln!(
        "{SESSIONS} hooks at once: started within {started:?}, all ended within {ended:?}, \
         {left_in_spool} spooled after they ended, all seen {:?} after the first started \
         (docs/hooks.md: within 2 s)",
        seen.as_ref().map(|took| *took + ended)
    );
    match seen {
        Ok(_) => {}
        Err(needing) => panic!(
            "{} of {SESSIONS} hook events reached the running Slate",
            needing.len()
        ),
    }
}

#[test]
fn a_one_shot_read_uses_the_spool_and_leaves_it_for_a_later_slate() {
    let root = tempfile::tempdir().unwrap();
    let table = working_sessions(root.path(), 2);
    with_token(root.path());
    // No Slate runs: the event of session 1 is spooled.
    finished_quietly(start_hook(root.path(), Some(&nobody()), 1));
    assert_eq!(spooled(root.path()), 1);
    let read = |root: &Path| -> Vec<(String, String)> {
        let output = slate_in(root)
            .env("SLATE_STANDALONE", "1")
            .args(["sessions", "--json", "--processes"])
            .arg(&table)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let listed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let mut states: Vec<(String, String)> = listed["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|session| {
                (
                    session["id"].as_str().unwrap().to_string(),
                    session["status"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        states.sort();
        states
    };
    let expected = vec![
        (session_id(0), "working".to_string()),
        (session_id(1), "waiting".to_string()),
    ];
    assert_eq!(read(root.path()), expected, "the hook's prompt shows");
    // Left as it was: a second one-shot reads it again, and a Slate that starts takes it.
    assert_eq!(spooled(root.path()), 1);
    assert_eq!(read(root.path()), expected);
    let serving = Serving::start(root.path(), &table);
    assert!(serving
        .wait_needing(1, Duration::from_secs(20))
        .is_ok_and(|_| serving.needing() == Some(vec![session_id(1)])));
    assert_eq!(spooled(root.path()), 0, "the running Slate took it");
}

/// Runs one hook with its event and no Slate, returning how long it took.
fn timed_hook(root: &Path) -> Duration {
    let started = Instant::now();
    finished_quietly(start_hook(root, Some(&nobody()), 0));
    started.elapsed()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Makes a FIFO at `path` (no one reads it: an `open` for writing would wait for ever).
fn fifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

#[test]
fn a_fifo_at_the_spool_or_the_last_event_note_never_holds_the_hook() {
    for place in ["spool", "note", "both"] {
        let root = tempfile::tempdir().unwrap();
        with_token(root.path());
        if place != "note" {
            fifo(&spool_path(root.path()));
        }
        if place != "spool" {
            fifo(&root.path().join("data/slate/hooks-last/claude-code"));
        }
        let times: Vec<Duration> = (0..5).map(|_| timed_hook(root.path())).collect();
        let took = median(times.clone());
        eprintln!(
            "slate hook with a FIFO at the {place}: median {took:?}, slowest {:?} \
             (docs/hooks.md: within 300 ms)",
            times.iter().max().unwrap()
        );
        for time in times {
            assert!(time < Duration::from_secs(1), "{place}: took {time:?}");
        }
        // The FIFOs are left as they were: refused, not replaced.
        if place != "note" {
            use std::os::unix::fs::FileTypeExt;
            let kind = std::fs::symlink_metadata(spool_path(root.path()))
                .unwrap()
                .file_type();
            assert!(kind.is_fifo());
        }
    }
}

/// The watchdog: whatever holds the hook, it is gone at its budget. Here the spool is locked by
/// another process for longer than a second, so the hook that has to spool waits on the lock.
#[test]
fn a_spool_locked_by_another_process_never_holds_the_hook() {
    let root = tempfile::tempdir().unwrap();
    with_token(root.path());
    let spool = spool_path(root.path());
    std::fs::create_dir_all(spool.parent().unwrap()).unwrap();
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&spool)
        .unwrap();
    file.lock().unwrap();
    let times: Vec<Duration> = (0..3).map(|_| timed_hook(root.path())).collect();
    eprintln!(
        "slate hook with the spool locked: median {:?} (docs/hooks.md: within 250 ms)",
        median(times.clone())
    );
    for time in times {
        assert!(time < Duration::from_secs(1), "took {time:?}");
    }
    drop(file);
}
