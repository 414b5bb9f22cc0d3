//! Hosted sessions: the title scanner (split reads, both terminators, garbage), the report
//! thinning, `slate run` driven for real in a private tmux server, and a silent terminal under an
//! open tool call turning Needs you in the live engine.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use slate::engine::{Options, ProcessSource};
use slate::host::osc::TitleScanner;
use slate::host::{Report, Reports, Seen};
use slate::live::{self, Event, Service, Timing};
use slate::model::{
    AgentKind, HostedSignals, ProcessInfo, ProcessTable, SessionKey, Status, Timestamp,
};
use slate::sources::roots::Env;
use slate::tracker::{Evidence, Input, Policy, Tracker};

use crate::util::{needs, Tmux};

fn scan_in_pieces(stream: &[u8], cuts: &[usize]) -> Vec<String> {
    let mut scanner = TitleScanner::new();
    let mut titles = Vec::new();
    let mut start = 0;
    for &cut in cuts {
        let cut = cut.clamp(start, stream.len());
        titles.extend(scanner.feed(&stream[start..cut]));
        start = cut;
    }
    titles.extend(scanner.feed(&stream[start..]));
    titles
}

fn title_text() -> impl Strategy<Value = String> {
    // Titles never contain the control bytes that end or cancel a sequence.
    "[a-zA-Z0-9 ◐◑✳⠋✋|.:\\[\\]!()…-]{0,40}"
}

fn garbage() -> impl Strategy<Value = Vec<u8>> {
    // Text and other escape sequences (CSI colours, OSC 8 links, lone ESCs) that never form a
    // title of their own.
    prop::collection::vec(
        prop_oneof![
            "[a-z \r\n]{0,12}".prop_map(String::into_bytes),
            Just(b"\x1b[31m".to_vec()),
            Just(b"\x1b[0m\x1b[2J".to_vec()),
            Just(b"\x1b]8;;http://x\x1b\\".to_vec()),
            Just(b"\x1b]1;icon\x07".to_vec()),
            Just(b"\x1b7".to_vec()),
        ],
        0..6,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn titles_survive_any_split(
        parts in prop::collection::vec((garbage(), title_text(), any::<bool>(), prop_oneof![Just(b'0'), Just(b'2')]), 1..5),
        tail in garbage(),
        cuts in prop::collection::vec(0usize..400, 0..6),
    ) {
        let mut stream = Vec::new();
        let mut expected = Vec::new();
        for (before, title, bel, kind) in &parts {
            stream.extend(before);
            stream.extend([0x1b, b']', *kind, b';']);
            stream.extend(title.as_bytes());
            if *bel { stream.push(0x07) } else { stream.extend(b"\x1b\\") }
            expected.push(title.clone());
        }
        stream.extend(&tail);
        let mut cuts = cuts;
        cuts.sort_unstable();
        prop_assert_eq!(scan_in_pieces(&stream, &[]), expected.clone());
        prop_assert_eq!(scan_in_pieces(&stream, &cuts), expected);
    }

    #[test]
    fn any_bytes_are_scanned_without_panic_and_split_does_not_matter(
        bytes in prop::collection::vec(any::<u8>(), 0..600),
        cut in 0usize..600,
    ) {
        let whole = scan_in_pieces(&bytes, &[]);
        prop_assert_eq!(scan_in_pieces(&bytes, &[cut]), whole);
    }
}

const BASE_MS: i64 = 1_795_946_400_000;

fn at(seconds: f64) -> Timestamp {
    Timestamp::from_millis(BASE_MS + (seconds * 1000.0).round() as i64)
}

#[test]
fn reports_carry_changes_only() {
    let mut reports = Reports::default();
    assert_eq!(reports.due(at(0.0)), None, "nothing seen, nothing sent");
    reports.see(Seen::Title(at(0.0), "◐ Claude Code".into()));
    reports.see(Seen::Drew(at(0.0)));
    assert_eq!(
        reports.due(at(0.0)),
        Some(Report {
            titles: vec![(at(0.0), "◐ Claude Code".into())],
            last_draw: Some(at(0.0)),
        })
    );
    // A terminal drawing ten times a second is reported once a second, not per draw.
    let mut sent = 0;
    for tenth in 1..=30 {
        let now = at(f64::from(tenth) / 10.0);
        reports.see(Seen::Drew(now));
        reports.see(Seen::Title(now, "◐ Claude Code".into()));
        if let Some(report) = reports.due(now) {
            assert!(
                report.titles.is_empty(),
                "the same title again is no change"
            );
            assert_eq!(report.last_draw, Some(now));
            sent += 1;
        }
    }
    assert_eq!(sent, 3);
    // Silence sends nothing; the next change goes out at once.
    assert_eq!(reports.due(at(10.0)), None);
    reports.see(Seen::Title(at(11.0), "✳ Claude Code".into()));
    let report = reports.due(at(11.0)).expect("a new title is reported");
    assert_eq!(report.titles, vec![(at(11.0), "✳ Claude Code".into())]);
}

/// A stand-in for the engine's `POST /hosted`: it answers 204 and hands over each body.
fn fake_engine() -> (u16, mpsc::Receiver<(String, serde_json::Value)>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let mut reader = BufReader::new(stream);
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let _ = reader
                .get_mut()
                .write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
            let body = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
            if sender.send((head, body)).is_err() {
                return;
            }
        }
    });
    (port, receiver)
}

#[test]
#[ignore = "slow tier: needs tmux"]
fn slate_run_relays_size_input_resize_and_exit_code_and_reports_the_title() {
    needs(&["tmux"]);
    let temp = tempfile::tempdir().unwrap();
    let config = temp.path().join("config");
    std::fs::create_dir_all(config.join("slate")).unwrap();
    std::fs::write(config.join("slate/token"), "test-token\n").unwrap();
    let (port, bodies) = fake_engine();
    let program = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/host/size-echo.sh");
    let command = format!(
        "env -u XDG_RUNTIME_DIR -u XDG_DATA_HOME HOME={home} XDG_CONFIG_HOME={config} SLATE_API=http://127.0.0.1:{port} {slate} run -- {program}; echo \"slate run exited with $?\"",
        home = temp.path().display(),
        config = config.display(),
        slate = env!("CARGO_BIN_EXE_slate"),
        program = program.display(),
    );
    let tmux = Tmux::start(&command);
    tmux.wait_for("the program's first size", |t| {
        t.screen().contains("size 30 100")
    });
    tmux.wait_for("the title to pass through", |t| {
        t.run(&["display", "-p", "#{pane_title}"]).trim() == "slate-host-title"
    });
    tmux.run(&["resize-window", "-x", "120", "-y", "40"]);
    tmux.wait_for("the program to see the new size", |t| {
        t.screen().contains("resized 40 120")
    });
    tmux.run(&["send-keys", "hello slate", "Enter"]);
    // The shell around `slate run` says how it ended. (tmux's own `pane_dead_status` is not used:
    // on this machine's tmux a pane whose process has exited is sometimes marked dead while the
    // process waits, unreaped, for longer than the test does, so the status never fills in.)
    tmux.wait_for("slate run to exit", |t| {
        t.screen().contains("slate run exited with")
    });
    let screen = tmux.screen();
    assert!(screen.contains("got [hello slate]"), "{screen}");
    assert!(
        screen.contains("slate run exited with 3"),
        "the child's exit code passes through: {screen}"
    );

    // What the host told the engine: the title it saw, the child's pid and folder, a draw.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut titles = Vec::new();
    let mut drew = false;
    let mut seen = None;
    while Instant::now() < deadline && (titles.is_empty() || !drew) {
        let Ok((head, body)) = bodies.recv_timeout(Duration::from_millis(200)) else {
            continue;
        };
        assert!(head.starts_with("POST /hosted HTTP/1.1\r\n"), "{head}");
        assert!(
            // Header names are case-insensitive; the client may send them in lower case.
            head.to_ascii_lowercase()
                .contains("authorization: bearer test-token\r\n"),
            "{head}"
        );
        for pair in body["titles"].as_array().cloned().unwrap_or_default() {
            titles.push(pair[1].as_str().unwrap_or_default().to_string());
            assert!(Timestamp::parse_rfc3339(pair[0].as_str().unwrap()).is_some());
        }
        drew |= body["last_draw"].is_string();
        seen = Some(body);
    }
    assert_eq!(titles, ["slate-host-title"]);
    assert!(drew, "a report carries the last draw");
    let body = seen.expect("a report arrived");
    assert!(body["pid"].as_u64().is_some_and(|pid| pid > 1), "{body}");
    assert!(body["cwd"].is_string(), "{body}");
    // The control socket, in the temporary HOME's private runtime folder.
    let control = body["control"].as_str().unwrap_or_default();
    assert!(
        control.starts_with(
            &temp
                .path()
                .join(".local/share/slate/run")
                .display()
                .to_string()
        ) && control.ends_with(".sock"),
        "{body}"
    );
}

#[test]
#[ignore = "slow tier: needs tmux"]
fn slate_run_passes_ctrl_c_and_sigterm_to_the_child_and_restores_the_terminal() {
    needs(&["tmux"]);
    let program = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/host/signals.sh");
    // The shell around `slate run` compares the terminal's modes before and after: raw mode must
    // not outlive the host.
    let home = tempfile::tempdir().unwrap();
    let script = format!(
        "echo \"shell $$\"; before=$(stty -g); unset XDG_RUNTIME_DIR XDG_DATA_HOME; HOME={home} XDG_CONFIG_HOME={home} {slate} run -- {program}; code=$?; \
         [ \"$before\" = \"$(stty -g)\" ] && echo \"modes restored, code $code\"; sleep 30",
        home = home.path().display(),
        slate = env!("CARGO_BIN_EXE_slate"),
        program = program.display(),
    );
    let tmux = Tmux::start(&format!("bash -c '{}'", script.replace('\'', "'\\''")));
    tmux.wait_for("the program to start", |t| t.screen().contains("ready"));
    tmux.run(&["send-keys", "C-c"]);
    tmux.wait_for("Ctrl-C to reach the program", |t| {
        t.screen().contains("caught INT")
    });
    // The shell that runs the host, as it said: the pane's own process may be the user's
    // shell around it.
    let screen = tmux.screen();
    let shell = screen
        .lines()
        .find_map(|line| line.strip_prefix("shell "))
        .expect("the shell said its pid");
    let host = Command::new("pgrep")
        .args(["-P", shell.trim(), "-x", "slate"])
        .output()
        .expect("pgrep runs");
    let host = String::from_utf8_lossy(&host.stdout).trim().to_string();
    assert!(!host.is_empty(), "the host runs under the shell");
    let killed = Command::new("kill")
        .args(["-TERM", &host])
        .status()
        .unwrap();
    assert!(killed.success());
    tmux.wait_for(
        "the host to pass SIGTERM on and exit with the child's code",
        |t| t.screen().contains("modes restored, code 5"),
    );
    assert!(tmux.screen().contains("caught TERM"));
}

const SESSION: &str = "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

/// The moment the fake CLI drew its permission prompt and went silent.
const DREW_AT_MS: i64 = 1_795_946_400_000;

static CLOCK_MS: AtomicI64 = AtomicI64::new(DREW_AT_MS);

fn fake_clock() -> Timestamp {
    Timestamp::from_millis(CLOCK_MS.load(Ordering::SeqCst))
}

/// What a fake Claude-style CLI leaves behind when it prints a permission prompt and goes
/// silent: a prompt and a tool call with no result.
fn write_open_call(home: &Path, written: Timestamp) {
    let line = |kind: &str, body: &str| {
        format!(
            r#"{{"type":"{kind}","cwd":"/work/acme","sessionId":"{SESSION}","version":"2.1.332","uuid":"u-{kind}","timestamp":"{written}",{body}}}"#
        )
    };
    let path = home.join(format!(".claude/projects/-work-acme/{SESSION}.jsonl"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let text = [
        line(
            "user",
            r#""message":{"role":"user","content":"clean the build"}"#,
        ),
        line(
            "assistant",
            r#""message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_9","name":"Bash","input":{"command":"rm -rf build"}}]}"#,
        ),
    ]
    .join("\n");
    std::fs::write(path, text + "\n").unwrap();
}

/// Refreshes until the session reads `want`, for at most five seconds: a watcher round may land
/// between a refresh request and the refresh itself.
async fn settle(
    handle: &live::Handle,
    state: &impl Fn(&live::Handle) -> (Status, String, bool),
    want: (Status, String, bool),
) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        tokio::time::timeout(Duration::from_secs(5), handle.refresh_and_wait())
            .await
            .expect("the refresh lands");
        let got = state(handle);
        if got == want {
            return;
        }
        assert!(Instant::now() < deadline, "got {got:?}, want {want:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_hosted_terminal_under_an_open_call_turns_needs_you() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let drew = Timestamp::from_millis(DREW_AT_MS);
    write_open_call(home, drew);
    let mut options = Options::from_env(Env {
        home: Some(home.to_path_buf()),
        ..Env::default()
    });
    options.processes = ProcessSource::Recorded(ProcessTable {
        processes: vec![ProcessInfo {
            pid: 5151,
            ppid: Some(1),
            name: "claude".to_string(),
            exe: None,
            cmd: vec!["claude".to_string()],
            cwd: Some("/work/acme".to_string()),
            start_time: drew.minus(Duration::from_secs(60)),
            start_ticks: None,
        }],
    });
    let (handle, thread) = live::start(Service {
        options,
        timing: Timing::default(),
        store: None,
        clock: fake_clock,
        settings: Default::default(),
        remotes: None,
    });
    let key = SessionKey::new(AgentKind::CLAUDE_CODE, SESSION);
    let state = |handle: &live::Handle| {
        let detail = handle.session(SESSION).expect("the session is known");
        let reason = detail
            .session
            .session_state
            .reason
            .code
            .as_str()
            .to_string();
        (detail.session.status, reason, detail.session.hosted)
    };
    assert_eq!(
        state(&handle),
        (Status::Working, "tool_running".to_string(), false)
    );

    // The host reports the prompt it drew; one second later the session is still Working.
    CLOCK_MS.store(DREW_AT_MS + 1_000, Ordering::SeqCst);
    handle.send(Event::Hosted {
        key: key.clone(),
        signals: HostedSignals {
            pid: Some(5151),
            titles: vec![
                (drew.minus(Duration::from_secs(1)), "◐ Claude Code".into()),
                (drew, "✳ Claude Code".into()),
            ],
            last_draw: Some(drew),
            ..Default::default()
        },
    });
    settle(
        &handle,
        &state,
        (Status::Working, "tool_running".to_string(), true),
    )
    .await;

    // Five seconds of silence later the engine says Needs you: the CLI waits to be allowed.
    CLOCK_MS.store(DREW_AT_MS + 5_100, Ordering::SeqCst);
    settle(
        &handle,
        &state,
        (Status::Waiting, "permission_prompt".to_string(), true),
    )
    .await;
    handle.shutdown();
    thread.join().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_started_under_slate_run_after_the_last_scan_is_linked_at_its_first_report() {
    // The process table is scanned once an hour here: only the hosted report of a program no scan
    // has seen can bring the scan forward. Without that, the session would wait for the next
    // periodic scan (15 s by default) before its terminal counts, and a dialog drawn meanwhile
    // would read Needs you late (issue 6 asks for 12 s).
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let now = live::system_clock();
    write_open_call(home, now);
    let table = std::sync::Arc::new(std::sync::Mutex::new(ProcessTable::default()));
    let mut options = Options::from_env(Env {
        home: Some(home.to_path_buf()),
        ..Env::default()
    });
    options.processes = ProcessSource::Shared(table.clone());
    let (handle, thread) = live::start(Service {
        options,
        timing: Timing {
            process_scan: Duration::from_secs(3600),
            hosted_rescan: Duration::from_millis(100),
            ..Timing::default()
        },
        store: None,
        clock: live::system_clock,
        settings: Default::default(),
        remotes: None,
    });
    let (listed, mut updates) = handle.subscribe();
    let session = listed
        .iter()
        .find(|session| session.id.as_str() == SESSION)
        .expect("the session is listed from its transcript");
    assert_eq!((session.pid, session.hosted), (None, false));

    // The CLI starts under `slate run` after the start-up scan and reports its terminal.
    table.lock().unwrap().processes.push(ProcessInfo {
        pid: 5151,
        ppid: Some(1),
        name: "claude".to_string(),
        exe: None,
        cmd: vec!["claude".to_string()],
        cwd: Some("/work/acme".to_string()),
        start_time: now.minus(Duration::from_secs(60)),
        start_ticks: None,
    });
    handle.send(Event::HostedProcess {
        pid: 5151,
        signals: HostedSignals {
            pid: Some(5151),
            titles: vec![(now, "✳ Claude Code".into())],
            last_draw: Some(now),
            ..Default::default()
        },
    });
    let linked = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match updates.recv().await {
                Ok(live::Update::Session { session }) if session.id.as_str() == SESSION => {
                    if session.hosted {
                        return session;
                    }
                }
                Ok(_) => {}
                Err(err) => panic!("the update stream ended: {err}"),
            }
        }
    })
    .await
    .expect("the report brought a scan forward and the session is hosted");
    assert_eq!(linked.pid, Some(5151));
    handle.shutdown();
    thread.join().unwrap();
}

#[test]
fn the_flip_after_five_silent_seconds_is_announced() {
    // The same story through the tracker alone, tick by tick with a fake clock: the flip comes
    // at 5 s of silence, and `next_deadline` announced it.
    let mut tracker = Tracker::new(Policy::default());
    let key = SessionKey::new(AgentKind::CLAUDE_CODE, SESSION);
    let home = tempfile::tempdir().unwrap();
    write_open_call(home.path(), at(0.0));
    let observations = std::fs::read_to_string(
        home.path()
            .join(format!(".claude/projects/-work-acme/{SESSION}.jsonl")),
    )
    .unwrap()
    .lines()
    .flat_map(|line| slate::agents::claude::observe(line.as_bytes()).unwrap_or_default())
    .collect();
    tracker.apply(
        Input::Observed(slate::tracker::Batch {
            key: key.clone(),
            role: slate::tracker::TranscriptRole::Main,
            transcript: "t.jsonl".into(),
            last_write: at(0.0),
            observations,
            folders: Vec::new(),
        }),
        at(0.0),
    );
    tracker.apply(
        Input::Hosted {
            key: key.clone(),
            signals: HostedSignals {
                pid: Some(5151),
                titles: vec![(at(0.0), "✳ Claude Code".into())],
                last_draw: Some(at(0.0)),
                ..Default::default()
            },
        },
        at(0.0),
    );
    assert_eq!(tracker.next_deadline(), Some(at(5.0)));
    for tenth in 1..=60 {
        let now = at(f64::from(tenth) / 10.0);
        tracker.apply(Input::Tick, now);
        let status = tracker.session(&key).unwrap().status;
        let want = if tenth < 50 {
            Status::Working
        } else {
            Status::Waiting
        };
        assert_eq!(status, want, "at {now}");
    }
}

/// The whole engine where this base reads the agent's files, else the tracker fed by hand the way
/// the files edge would feed it (Gemini's chat files are not walked by the engine on this base yet).
enum Replay {
    Engine(Box<slate::engine::Engine>),
    Tracker(Box<Tracker>),
}

impl Replay {
    fn tracker(
        dir: &Path,
        home: &Path,
        agent: AgentKind,
        session_id: &str,
        now: Timestamp,
    ) -> Replay {
        assert_eq!(
            agent,
            AgentKind::GEMINI_CLI,
            "only Gemini is replayed by hand"
        );
        let mut tracker = Tracker::new(Policy::default());
        let table = slate::sources::processes::load_table(&dir.join("processes.json")).unwrap();
        let seen = table
            .processes
            .iter()
            .filter_map(|info| {
                let recognised = slate::agents::recognise(info)?;
                Some(slate::tracker::SeenProcess {
                    info: info.clone(),
                    recognised,
                    folder: info.cwd.clone(),
                    newest_child: None,
                })
            })
            .collect();
        tracker.apply(Input::Processes(seen), now);
        let tmp = home.join(".gemini/tmp");
        for project in std::fs::read_dir(&tmp).unwrap() {
            let project = project.unwrap().path();
            let root = std::fs::read_to_string(project.join(".project_root")).unwrap();
            for chat in std::fs::read_dir(project.join("chats")).unwrap() {
                let chat = chat.unwrap().path();
                let mut fold = slate::agents::gemini::ChatFold::new();
                let mut observations =
                    vec![slate::agents::Observation::Info(slate::agents::Info {
                        cwd: Some(root.trim().to_string()),
                        ..slate::agents::Info::default()
                    })];
                for line in std::fs::read(&chat).unwrap().split(|byte| *byte == b'\n') {
                    if !line.is_empty() {
                        observations.extend(fold.feed(line).unwrap_or_default());
                    }
                }
                tracker.apply(
                    Input::Observed(slate::tracker::Batch {
                        key: SessionKey::new(agent, session_id),
                        role: slate::tracker::TranscriptRole::Main,
                        transcript: chat.to_string_lossy().into_owned(),
                        last_write: now,
                        observations,
                        folders: Vec::new(),
                    }),
                    now,
                );
            }
        }
        Replay::Tracker(Box::new(tracker))
    }

    fn apply(&mut self, input: Input, now: Timestamp) {
        match self {
            Replay::Engine(engine) => drop(engine.apply(input, now)),
            Replay::Tracker(tracker) => drop(tracker.apply(input, now)),
        }
    }

    fn session(&self, id: &str) -> slate::model::Session {
        match self {
            Replay::Engine(engine) => engine.find(id).expect("the recorded session").clone(),
            Replay::Tracker(tracker) => tracker
                .sessions()
                .find(|session| session.id.as_str() == id)
                .expect("the recorded session")
                .clone(),
        }
    }

    fn evidence(&self, key: &SessionKey) -> Vec<Evidence> {
        match self {
            Replay::Engine(engine) => engine.evidence(key),
            Replay::Tracker(tracker) => tracker.evidence(key),
        }
    }
}

fn copy_tree(from: &Path, to: &Path, written: std::time::SystemTime) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target, written);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
            let file = std::fs::File::options().write(true).open(&target).unwrap();
            file.set_modified(written).unwrap();
        }
    }
}

#[test]
fn real_approvals_under_slate_run_read_needs_you() {
    // Recorded with the real CLIs under `slate run` in tmux, against the fake model server: the
    // files, the process table, and every report the host sent (see each recording.json's note).
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/hosted");
    let mut dirs = Vec::new();
    for agent in std::fs::read_dir(&root).unwrap() {
        for version in std::fs::read_dir(agent.unwrap().path()).unwrap() {
            for scenario in std::fs::read_dir(version.unwrap().path()).unwrap() {
                dirs.push(scenario.unwrap().path());
            }
        }
    }
    dirs.sort();
    assert!(dirs.len() >= 2, "{dirs:?}");
    for dir in dirs {
        replay_hosted(&dir);
    }
}

fn replay_hosted(dir: &Path) {
    let name = dir.display();
    let recording: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("recording.json")).unwrap())
            .unwrap();
    let captured = Timestamp::parse_rfc3339(recording["captured_at"].as_str().unwrap()).unwrap();
    let session_id = recording["session_id"].as_str().unwrap();
    let agent = AgentKind::parse(recording["agent"].as_str().unwrap()).unwrap();
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    let written = std::time::UNIX_EPOCH + Duration::from_millis(captured.millis() as u64);
    copy_tree(&dir.join("home"), &home, written);
    let mut options = Options::from_env(Env {
        home: Some(home.clone()),
        xdg_data_home: Some(home.join(".local/share")),
        xdg_config_home: Some(home.join(".config")),
        ..Env::default()
    });
    options.processes = ProcessSource::Recorded(
        slate::sources::processes::load_table(&dir.join("processes.json")).unwrap(),
    );
    let mut engine = slate::engine::Engine::new(options);
    engine.refresh(captured);
    let mut engine = if engine.roots().iter().any(|root| root.agent == agent) {
        Replay::Engine(Box::new(engine))
    } else {
        Replay::tracker(dir, &home, agent, session_id, captured)
    };
    let state = |engine: &Replay| {
        let session = engine.session(session_id);
        (
            session.status.as_str().to_string(),
            session.session_state.reason.code.as_str().to_string(),
            session.hosted,
        )
    };
    let unhosted = &recording["expected_unhosted"];
    assert_eq!(
        state(&engine),
        (
            unhosted["status"].as_str().unwrap().to_string(),
            unhosted["reason"].as_str().unwrap().to_string(),
            false
        ),
        "{name}: without the host, the transcript alone is the blind spot"
    );

    let reports = std::fs::read_to_string(dir.join("hosted.jsonl")).unwrap();
    let expected = &recording["expected"];
    let want = (
        expected["status"].as_str().unwrap().to_string(),
        expected["reason"].as_str().unwrap().to_string(),
        true,
    );
    let mut flipped_at = None;
    for line in reports.lines() {
        let report: serde_json::Value = serde_json::from_str(line).unwrap();
        let received = Timestamp::parse_rfc3339(report["received_at"].as_str().unwrap()).unwrap();
        let body = &report["body"];
        assert_eq!(
            body["agent"],
            agent.as_str(),
            "{name}: the host recognised the agent"
        );
        let pid = u32::try_from(body["pid"].as_u64().unwrap()).unwrap();
        let signals: HostedSignals = serde_json::from_value(body.clone()).unwrap();
        engine.apply(Input::HostedProcess { pid, signals }, received);
        if flipped_at.is_none() && state(&engine) == want {
            flipped_at = Some(received);
        }
    }
    assert_eq!(
        state(&engine),
        want,
        "{name}: evidence: {:?}",
        engine.evidence(&SessionKey::new(agent, session_id))
    );
    // Needs you within 12 s of the dialog's first title, as issue 6 asks.
    let first_action = reports
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .flat_map(|report| {
            report["body"]["titles"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|pair| pair[1].as_str().unwrap_or("").contains("Action Required"))
        .and_then(|pair| Timestamp::parse_rfc3339(pair[0].as_str()?))
        .expect("the dialog's title was reported");
    let flipped_at = flipped_at.expect("the state flipped");
    assert!(flipped_at.millis() - first_action.millis() < 12_000);
}
