//! What several test modules build the same way: a Claude Code session in a temporary HOME, in
//! the middle of a tool call, and the recorded process that vouches for it; session objects as
//! a server sends them, for the policy tests; a private tmux server; a recorded screen reworded as
//! a newer CLI might draw it; a private session bus; and `needs`, which every slow-tier test calls
//! first (docs/testing-tiers.md).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use slate::model::{ProcessInfo, ProcessTable, Session, Status, Timestamp};

/// A private session bus: `dbus-daemon --session` with nothing of the caller's environment but
/// PATH, in the throwaway `home`. Its process (the caller stops it) and its address.
pub fn private_bus(home: &Path) -> (Child, String) {
    let mut daemon = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--print-address=1"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("dbus-daemon starts");
    let mut address = String::new();
    BufReader::new(daemon.stdout.take().expect("piped"))
        .read_line(&mut address)
        .expect("dbus-daemon prints its address");
    (daemon, address.trim().to_string())
}

/// Fails, naming each missing tool and the package that brings it, when a slow-tier test runs
/// without the tools it drives. Every test marked `#[ignore = "slow tier: needs …"]` calls it
/// first, so `cargo test -- --include-ignored` on a machine without them says what to install
/// instead of failing somewhere inside the test.
pub fn needs(tools: &[&str]) {
    let missing: Vec<String> = tools
        .iter()
        .filter(|tool| !installed(tool))
        .map(|tool| format!("{tool} (package `{}`)", package(tool)))
        .collect();
    assert!(
        missing.is_empty(),
        "this slow-tier test needs {}; not found on PATH: {}. scripts/deps.sh installs every \
         tool the slow tier needs; plain `cargo test` leaves the slow tier out.",
        tools.join(", "),
        missing.join(", ")
    );
}

/// True when `tool` is an executable file in a folder of PATH (or, for sshd, in Debian's
/// /usr/sbin, where tests/sshd.rs looks first).
fn installed(tool: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let mut folders: Vec<PathBuf> =
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).collect();
    if tool == "sshd" {
        folders.push(PathBuf::from("/usr/sbin"));
    }
    folders.iter().any(|folder| {
        std::fs::metadata(folder.join(tool))
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    })
}

/// The Debian package that brings `tool` (scripts/deps.sh installs them all).
fn package(tool: &str) -> &str {
    match tool {
        "Xvfb" => "xvfb",
        "sshd" => "openssh-server",
        "ssh" | "ssh-keygen" => "openssh-client",
        "xprop" => "x11-utils",
        "swaymsg" => "sway",
        "runuser" | "useradd" => "util-linux, passwd",
        other => other,
    }
}

/// The session every such HOME holds.
pub const SESSION: &str = "7f3c1d2e-5a4b-4c3d-9e8f-0a1b2c3d4e5f";

/// One Claude Code transcript line of `kind`, written in `/work/acme`, with `body` as its own
/// fields.
pub fn claude_line(kind: &str, body: &str, at: Timestamp) -> String {
    format!(
        r#"{{"type":"{kind}","cwd":"/work/acme","sessionId":"{SESSION}","version":"2.1.332","uuid":"u","timestamp":"{at}",{body}}}"#
    )
}

/// Where `SESSION`'s transcript lives under `home`.
pub fn transcript_path(home: &Path) -> PathBuf {
    home.join(format!(".claude/projects/-work-acme/{SESSION}.jsonl"))
}

/// Writes `SESSION`'s transcript in the middle of a tool call (Working) and returns its path.
pub fn working_transcript(home: &Path, at: Timestamp) -> PathBuf {
    let path = transcript_path(home);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut file = std::fs::File::create(&path).unwrap();
    writeln!(
        file,
        "{}",
        claude_line(
            "user",
            r#""message":{"role":"user","content":"run the tests"}"#,
            at
        )
    )
    .unwrap();
    writeln!(
        file,
        "{}",
        claude_line(
            "assistant",
            r#""message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"cargo test"}}]}"#,
            at
        )
    )
    .unwrap();
    path
}

/// A recorded table with one `claude` process (pid 4242) working in `/work/acme`, started at
/// `started`: it vouches for `SESSION`.
pub fn claude_process_table(started: Timestamp) -> ProcessTable {
    ProcessTable {
        processes: vec![ProcessInfo {
            pid: 4242,
            ppid: Some(1),
            name: "claude".to_string(),
            exe: None,
            cmd: vec!["claude".to_string()],
            cwd: Some("/work/acme".to_string()),
            start_time: started,
            start_ticks: None,
        }],
    }
}

/// The real `slate` binary over a temporary `root` (HOME in `root/home`, data and config beside
/// it) and nothing of the real environment but PATH, replaying `processes` at `now`.
pub fn slate_over(root: &Path, processes: &Path, now: &str) -> Command {
    let mut command = slate_in(root);
    command
        .arg("--now")
        .arg(now)
        .arg("--processes")
        .arg(processes);
    command
}

/// The real binary with its HOME, data and config folders under `root` and nothing of the real
/// environment but PATH.
pub fn slate_in(root: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_slate"));
    command
        .env_clear()
        .env("HOME", root.join("home"))
        .env("XDG_DATA_HOME", root.join("data"))
        .env("XDG_CONFIG_HOME", root.join("config"))
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    command
}

/// A session in `status` with reason `code`/`text`, built from the wire format.
pub fn wire_session(project: &str, id: &str, status: Status, code: &str, text: &str) -> Session {
    let value = serde_json::json!({
        "agent": "claude-code",
        "id": id,
        "folder": format!("/work/{project}"),
        "project": project,
        "title": format!("{project} work"),
        "last_prompt": "do the thing",
        "branch": "main",
        "row_time": "2026-11-29T12:00:00Z",
        "pid": 4242,
        "transcript": null,
        "model": null,
        "cli_version": null,
        "hosted": false,
        "status": status.as_str(),
        "session_state": {
            "status": status.as_str(),
            "active_at": null,
            "reason": {"code": code, "text": text},
            "presence": "present",
            "activity": "working",
            "intent": {"state": "none"},
            "custody": {"holds": [], "holds_work_claim": false, "reclaimable": false, "reason": "live"},
            "next_actor": {"actor": "operator", "reason": "r", "since": "2026-11-29T12:00:00Z"},
        },
    });
    serde_json::from_value(value).expect("a valid session object")
}

pub fn working(project: &str, id: &str) -> Session {
    wire_session(project, id, Status::Working, "tool_running", "Running Bash")
}

pub fn waiting(project: &str, id: &str) -> Session {
    wire_session(
        project,
        id,
        Status::Waiting,
        "permission_prompt",
        "Asks permission for Bash: cargo test",
    )
}

/// Adds the work item `docs` to `store` and records that `SESSION` holds a claim on it.
pub fn claim_docs(store: &slate::store::Store, now: Timestamp) {
    store
        .put_work_item(&slate::store::WorkItem {
            id: "docs".to_string(),
            title: "Docs".to_string(),
            status: slate::model::ItemStatus::Ready,
            deps: Vec::new(),
            created: now,
        })
        .unwrap();
    let key = slate::model::SessionKey::new(slate::model::AgentKind::CLAUDE_CODE, SESSION);
    store.claim("docs", &key, now).unwrap();
}

/// The history file of the shells in a test's tmux panes: none. A tmux server hands the
/// environment of the client that started it to every pane, and an interactive bash there would
/// otherwise save the commands a test types into the real HOME's `.bash_history`.
pub const PANE_HISTFILE: &str = "/dev/null";

/// A private tmux server, killed when the test ends however it ends.
pub struct Tmux {
    pub socket: String,
}

impl Tmux {
    pub fn start(command: &str) -> Tmux {
        Tmux::start_sized(command, 100, 30)
    }

    /// A server whose first pane, `cols` by `rows`, runs `command`.
    pub fn start_sized(command: &str, cols: u16, rows: u16) -> Tmux {
        needs(&["tmux"]);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let tmux = Tmux {
            socket: format!("slate-host-{}-{nanos}", std::process::id()),
        };
        let status = Command::new("tmux")
            .env("HISTFILE", PANE_HISTFILE)
            .args(["-L", &tmux.socket, "-f", "/dev/null"])
            .args([
                "new-session",
                "-d",
                "-x",
                &cols.to_string(),
                "-y",
                &rows.to_string(),
            ])
            .arg(command)
            .args([";", "set-option", "-g", "remain-on-exit", "on"])
            .status()
            .expect("tmux runs");
        assert!(status.success());
        tmux
    }

    pub fn run(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-S", "-"])
    }

    pub fn wait_for(&self, what: &str, until: impl Fn(&Tmux) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !until(self) {
            assert!(
                Instant::now() < deadline,
                "waited 10 s for {what}; the pane shows:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        kill_tmux_server(&self.socket);
    }
}

/// Kills the private tmux server named `name` (`tmux -L`), and removes the socket file tmux
/// leaves behind when its server is killed.
pub fn kill_tmux_server(name: &str) {
    let socket = Command::new("tmux")
        .args(["-L", name, "display", "-p", "#{socket_path}"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|path| path.ends_with(name));
    let _ = Command::new("tmux")
        .args(["-L", name, "kill-server"])
        .stderr(std::process::Stdio::null())
        .status();
    if let Some(socket) = socket {
        let _ = std::fs::remove_file(socket);
    }
}

/// How a snapshot spells a usage record: its id and model, then its four figures, its cost and
/// how it counts.
pub fn render_usage(call: &slate::usage::Call) -> String {
    let tokens = &call.tokens;
    let mut out = format!(
        "Usage id={} model={} input={} output={} cache_read={} cache_write={}",
        call.id.as_deref().unwrap_or("-"),
        call.model.as_deref().unwrap_or("-"),
        tokens.input,
        tokens.output,
        tokens.cache_read,
        tokens.cache_write,
    );
    if let Some(cost) = call.cost_nano_usd {
        out.push_str(&format!(" cost_nano_usd={cost}"));
    }
    if let Some(window) = call.context_window {
        out.push_str(&format!(" window={window}"));
    }
    if let slate::usage::Counting::RunningTotal { last } = call.counting {
        out.push_str(&format!(" running_total last_context={}", last.context()));
    }
    out
}

/// How a snapshot spells an observation: `info` spells an `Info`, which each agent's snapshots
/// show in their own way; the rest is spelled alike for every agent.
pub fn render_observation(
    observation: &slate::agents::Observation,
    info: impl Fn(&slate::agents::Info) -> String,
) -> String {
    use slate::agents::{Observation, Record};
    match observation {
        Observation::Reset => "Reset".to_string(),
        Observation::Unread(record) => render_unread(record),
        Observation::Usage(call) => render_usage(call),
        Observation::Info(found) => info(found),
        Observation::Record(Record { at, kind }) => {
            let at = at.map_or_else(|| "(no time)".to_string(), |at| at.to_rfc3339());
            format!("{at} {kind:?}")
        }
    }
}

/// A snapshot of a file read a line at a time: `line N:`, then what its line gave, indented
/// (each observation as `render` spells it, or the error).
pub fn render_lines(
    outcomes: &[Result<Vec<slate::agents::Observation>, String>],
    render: impl Fn(&slate::agents::Observation) -> String,
) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    for (index, outcome) in outcomes.iter().enumerate() {
        let _ = writeln!(text, "line {}:", index + 1);
        match outcome {
            Ok(observations) => {
                for observation in observations {
                    let _ = writeln!(text, "  {}", render(observation));
                }
            }
            Err(error) => {
                let _ = writeln!(text, "  error: {error}");
            }
        }
    }
    text
}

/// How a snapshot spells a record the parser did not know: what it was, and its redacted copy.
pub fn render_unread(record: &slate::agents::unread::UnreadRecord) -> String {
    format!("Unread {} {}", record.what, record.sample)
}

/// `screen` as a newer CLI might draw it: every text `agent`'s screen grammar knows (its dialogs'
/// footers, its working and idle texts) worded anew as `(worded anew)`.
pub fn reworded(agent: slate::model::AgentKind, screen: &str) -> String {
    let Some(grammar) = slate::agents::screens::grammar(agent) else {
        return screen.to_owned();
    };
    let known = grammar
        .dialogs
        .iter()
        .map(|shape| shape.footer)
        .chain(grammar.working.iter().copied())
        .chain(grammar.idle.iter().copied());
    known.fold(screen.to_owned(), |text, word| {
        text.replace(word, "(worded anew)")
    })
}
