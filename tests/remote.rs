//! Sessions on other machines, over SSH: the pure parts from data, then a real OpenSSH server on
//! 127.0.0.1 (`tests/sshd.rs`) whose key forces a second HOME with a transcript and a live fake
//! Claude Code process and the `slate` under test on its PATH, then a remote that misbehaves,
//! played by a stand-in `ssh`. The helpers here are the ones several groups share.

mod backlog; // a backlog handed over a read at a time, superseded lines left out
mod commands; // the command line with remotes, and focusing a remote pane
mod configured; // the [[remote]] config edits, the menu's note, the MACHINE column
mod forward; // answers to a remote session's dialog, forwarded
mod link; // the retry schedule, the ssh argument lists, what a failed link means
mod misbehaving; // a stand-in ssh that floods, lies or never ends
mod over_ssh; // a live service following a real sshd
mod view; // watch lines read, and every remote's sessions merged

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use slate::config::{Config, RemoteEntry};
use slate::engine::{Options, ProcessSource};
use slate::live::{self, Service, Timing, Update};
use slate::model::{AgentKind, Machine, ProcessTable, Session, SessionKey, Status, Timestamp};
use slate::policy::notifications::{self, Notifier};
use slate::remote::view::{LinkEvent, Remotes};
use slate::remote::wire::Line;
use slate::remote::{Failure, LinkOptions, LinkTiming};
use slate::settings::Settings;
use slate::sources::roots::Env;

use crate::sshd::{Account, FakeAgent, Sshd};
use crate::util::{waiting, working};

fn machine(name: &str) -> Machine {
    Machine::new(name).unwrap()
}

fn entry(name: &str, destination: &str, args: &[&str]) -> RemoteEntry {
    RemoteEntry::new(
        machine(name),
        destination,
        args.iter().map(|arg| arg.to_string()).collect(),
    )
    .unwrap()
}

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_millis(1_800_000_000_000 + seconds * 1000)
}

// ---------------------------------------------------------------------------------------------
// Reading what a remote prints.

fn snapshot_line(sessions: &[Session]) -> String {
    serde_json::json!({"type": "snapshot", "sessions": sessions, "version": "0.1.0"}).to_string()
}

// ---------------------------------------------------------------------------------------------
// The merged view and the notifications it leads to.

/// Feeds the view's changes to the notification policy, as the live service and the tray do,
/// and returns the titles shown.
struct Watched {
    remotes: Remotes,
    notifier: Notifier,
    shown: Vec<String>,
}

impl Watched {
    fn new(entries: &[RemoteEntry]) -> Watched {
        let mut remotes = Remotes::default();
        remotes.configure(entries, at(0));
        Watched {
            remotes,
            // The local list at start-up is empty; remote sessions arrive later, as changes.
            notifier: Notifier::seed(&[]),
            shown: Vec::new(),
        }
    }

    fn report(&mut self, name: &str, event: LinkEvent, time: i64) -> Vec<SessionKey> {
        let touched = self.remotes.apply(&machine(name), event, at(time));
        for key in &touched {
            let update = match self.remotes.session(key) {
                Some(session) => Update::Session {
                    session: Box::new(session.clone()),
                },
                None => Update::removed(key),
            };
            notifications::decide(
                &mut self.notifier,
                update.as_notification(),
                at(time),
                false,
            );
        }
        // The burst window closes.
        let decision = notifications::decide(
            &mut self.notifier,
            notifications::Input::Tick,
            at(time + 10),
            false,
        );
        self.shown
            .extend(decision.plans.into_iter().map(|plan| plan.title));
        touched
    }

    fn snapshot(&mut self, name: &str, sessions: Vec<Session>, time: i64) -> Vec<SessionKey> {
        self.report(
            name,
            LinkEvent::Line(Line::Snapshot {
                sessions,
                skipped: 0,
                version: None,
            }),
            time,
        )
    }

    fn lost(&mut self, name: &str, time: i64) -> Vec<SessionKey> {
        self.report(
            name,
            LinkEvent::Lost {
                failure: Failure::link("ssh: connect to host box port 22: Connection refused"),
                retry_at: at(time + 1),
            },
            time,
        )
    }

    fn needs_you(&self) -> usize {
        slate::policy::needs_you_count(self.remotes.sessions())
    }
}

fn codex(project: &str, id: &str, status: Status) -> Session {
    let mut session = match status {
        Status::Waiting => waiting(project, id),
        _ => working(project, id),
    };
    session.agent = AgentKind::CODEX;
    session
}

// ---------------------------------------------------------------------------------------------
// Over a real sshd.

/// Link timings short enough for a test: a dead link is noticed in about 3 s, a failed one is
/// tried again within 2 s.
fn fast() -> LinkTiming {
    LinkTiming {
        connect_timeout: Duration::from_secs(3),
        alive_interval: Duration::from_secs(1),
        alive_count: 2,
        first_retry: Duration::from_millis(200),
        most_retry: Duration::from_secs(2),
        slow_retry: Duration::from_secs(2),
        ask_limit: Duration::from_secs(5),
    }
}

const REMOTE_SESSION: &str = "5e55e55e-0000-4000-8000-00000000b0c5";

fn slate_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_slate"))
}

/// A remote machine's HOME: a config that keeps its `slate` from looking for a server, a
/// Claude Code transcript in the middle of a tool call, and a live fake `claude` in its folder.
struct RemoteHome {
    home: PathBuf,
    transcript: PathBuf,
    folder: PathBuf,
    _agent: FakeAgent,
}

fn claude_line(folder: &Path, kind: &str, body: &str) -> String {
    format!(
        r#"{{"type":"{kind}","cwd":"{}","sessionId":"{REMOTE_SESSION}","version":"2.1.332","uuid":"u","timestamp":"{}",{body}}}"#,
        folder.display(),
        live::system_clock()
    )
}

fn remote_home(root: &Path) -> RemoteHome {
    let home = root.join("remote-home");
    let folder = root.join("work/api-server");
    std::fs::create_dir_all(&folder).unwrap();
    let folder = folder.canonicalize().unwrap();
    let config = home.join(".config/slate");
    std::fs::create_dir_all(&config).unwrap();
    // Port 0: no server to follow or ask; `slate watch` runs its own engine.
    std::fs::write(
        config.join("config.toml"),
        "[server]\nlisten = \"127.0.0.1:0\"\n",
    )
    .unwrap();
    let agent = FakeAgent::start(&folder);
    let encoded = folder.display().to_string().replace(['/', '.'], "-");
    let transcript = home
        .join(".claude/projects")
        .join(encoded)
        .join(format!("{REMOTE_SESSION}.jsonl"));
    std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    // The process started before the transcript was last written, as a real one would.
    std::thread::sleep(Duration::from_millis(1100));
    let lines = [
        claude_line(
            &folder,
            "user",
            r#""message":{"role":"user","content":"ship the api"}"#,
        ),
        claude_line(
            &folder,
            "assistant",
            r#""message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"cargo test"}}]}"#,
        ),
    ];
    std::fs::write(&transcript, lines.join("\n") + "\n").unwrap();
    RemoteHome {
        home,
        transcript,
        folder,
        _agent: agent,
    }
}

/// A live service over an empty HOME here that follows the remotes `entries`, with a store of its
/// own, which a forwarded answer takes its lock in.
fn following(local_home: &Path, entries: Vec<RemoteEntry>) -> Service {
    let env = Env {
        home: Some(local_home.to_path_buf()),
        ..Env::default()
    };
    let mut options = Options::from_env(env);
    options.processes = ProcessSource::Recorded(ProcessTable::default());
    let config = Config {
        remotes: entries,
        ..Config::default()
    };
    Service {
        options,
        timing: Timing::default(),
        store: Some(slate::store::open(&local_home.join("slate.db")).expect("a store")),
        clock: live::system_clock,
        settings: Settings::new(None, config),
        remotes: Some(LinkOptions {
            ssh: "ssh".into(),
            timing: fast(),
        }),
    }
}

/// Polls `check` until it gives a value, or fails naming `what` after `limit`.
fn wait_for<T>(what: &str, limit: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(found) = check() {
            return found;
        }
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A machine called `box`, served by a real sshd, with the remote HOME above.
struct BoxMachine {
    _temp: tempfile::TempDir,
    sshd: Sshd,
    remote: RemoteHome,
    local_home: PathBuf,
}

fn box_machine(extra: impl FnOnce(&Path) -> Vec<Account>) -> BoxMachine {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().canonicalize().unwrap();
    let remote = remote_home(&root);
    let slate_folder = crate::sshd::slate_folder(&slate_bin());
    let mut accounts = vec![Account::with_slate("box", &remote.home, &slate_folder)];
    accounts.extend(extra(&root));
    let sshd = Sshd::start(&root.join("sshd"), &accounts);
    let local_home = root.join("local-home");
    std::fs::create_dir_all(&local_home).unwrap();
    BoxMachine {
        _temp: temp,
        sshd,
        remote,
        local_home,
    }
}

impl BoxMachine {
    /// The local HOME, with a config whose listen port has nothing on it (so no server is
    /// asked), and the `ssh_config` that reaches the accounts.
    fn serverless_home(&self) -> (PathBuf, String) {
        let home = self.local_home.clone();
        std::fs::create_dir_all(home.join(".config/slate")).unwrap();
        std::fs::write(
            home.join(".config/slate/config.toml"),
            "[server]\nlisten = \"127.0.0.1:0\"\n",
        )
        .unwrap();
        (home, self.sshd.ssh_config().display().to_string())
    }

    fn entry(&self, name: &str) -> RemoteEntry {
        let config = self.sshd.ssh_config().display().to_string();
        entry(name, name, &["-F", &config])
    }
}

/// Runs the `slate` under test with its own HOME; returns its output, which must be a success.
fn cli(home: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let output = cli_output(home, args, env);
    assert!(
        output.status.success(),
        "slate {args:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn cli_output(home: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = Command::new(slate_bin());
    command
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

/// Approve, with the fingerprint of a dialog the person saw.
fn approve_seen() -> slate::answers::RespondRequest {
    slate::answers::RespondRequest {
        action: slate::agents::keys::Action::Approve,
        option: None,
        text: None,
        dialog: "9f86d081884c7d65".to_string(),
        surface: None,
    }
}

// ---------------------------------------------------------------------------------------------
// A remote that sends too much, or sends what it must not.

/// Writes an executable stand-in for `ssh` into `folder` and returns its path.
fn stand_in_ssh(folder: &Path, script: &str) -> PathBuf {
    std::fs::create_dir_all(folder).unwrap();
    let program = folder.join("ssh");
    std::fs::write(&program, format!("#!/bin/sh\n{script}")).unwrap();
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    program
}
