//! Sessions on other machines, over SSH.
//!
//! The pure parts first, from data: the retry schedule with made-up jitter, the `ssh` argument
//! lists, what a failed link means, reading `slate watch --json` lines (bad, truncated, foreign,
//! third-machine), the merged view (a reconnect fires nothing again, a missed flip fires once, a
//! session first seen waiting fires nothing), the `[[remote]]` config edits that keep the rest
//! of the file, the tray menu's note and the MACHINE column.
//!
//! Then the real thing: an OpenSSH server on 127.0.0.1 (`tests/sshd.rs`) whose key forces a
//! second HOME with a transcript and a live fake Claude Code process, and the `slate` under test
//! on its PATH. A live service here follows it with the system `ssh` (with short keep-alives, so
//! a dead link is seen in seconds rather than the product's 30 s), and the tests check that the
//! remote's session is listed with its machine, that a transcript change on the remote reaches
//! this machine's event stream, that a stopped server (and a frozen one) marks the remote
//! unreachable within 45 s with its sessions no longer counted, that a restart reconnects within
//! 60 s without a second notification, what the command line does with remotes when no Slate
//! runs here, and that focusing a remote session in tmux opens a local terminal attached to its
//! pane.
//!
//! Last, a remote that misbehaves, played by a stand-in `ssh`: an answer or error output without
//! end is cut off at its limit, a forwarded answer carries its data on standard input (and an
//! older remote Slate is named), hostile ids are refused and counted, at most
//! `view::SESSIONS_PER_REMOTE` sessions are listed, and a real `slate serve` flooded with
//! sessions stays small, drops the remote at `slate remote remove` and ends at SIGTERM.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use slate::config::{self, Config, RemoteEntry};
use slate::engine::{Options, ProcessSource};
use slate::live::{self, Service, Timing, Update};
use slate::model::{AgentKind, Machine, ProcessTable, Session, SessionKey, Status, Timestamp};
use slate::policy::menu::{menu_model, Entry, MenuAction, MenuState, Pause};
use slate::policy::notifications::{self, Notifier};
use slate::remote::backoff::Backoff;
use slate::remote::view::{LinkEvent, Remotes};
use slate::remote::wire::{self, Line};
use slate::remote::{self, attach, Failure, FailureKind, LinkOptions, LinkTiming, RemoteCommand};
use slate::settings::Settings;
use slate::sources::roots::Env;

use crate::api::{follow_events, json, serve_on_free_port};
use crate::sshd::{Account, FakeAgent, Sshd};
use crate::util::{needs, waiting, working};

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
// The retry schedule.

#[test]
fn retries_start_at_a_second_and_double_to_a_minute() {
    let mut backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(60));
    let waits: Vec<u64> = (0..9).map(|_| backoff.ended(None, 0.0).as_secs()).collect();
    assert_eq!(waits, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
}

#[test]
fn jitter_takes_up_to_a_quarter_off_and_never_adds() {
    let mut backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(60));
    assert_eq!(backoff.ended(None, 1.0), Duration::from_millis(750));
    assert_eq!(backoff.ended(None, 0.5), Duration::from_millis(1750));
    for _ in 0..10 {
        backoff.ended(None, 0.0);
    }
    for jitter in [0.0, 0.3, 0.99, 1.0, 7.0, -3.0] {
        let wait = backoff.ended(None, jitter);
        assert!(wait <= Duration::from_secs(60), "{jitter}: {wait:?}");
        assert!(wait >= Duration::from_secs(45), "{jitter}: {wait:?}");
    }
}

#[test]
fn a_link_that_stayed_up_starts_the_waits_over_and_a_flapping_one_does_not() {
    let mut backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(60));
    for _ in 0..5 {
        backoff.ended(None, 0.0);
    }
    assert_eq!(backoff.upcoming(), Duration::from_secs(32));
    // Up for a few seconds after its snapshot, then gone again: still backing off.
    assert_eq!(
        backoff.ended(Some(Duration::from_secs(5)), 0.0),
        Duration::from_secs(32)
    );
    // Up for an hour: a drop now is news, tried again within a second.
    assert_eq!(
        backoff.ended(Some(Duration::from_secs(3600)), 0.0),
        Duration::from_secs(1)
    );
}

// ---------------------------------------------------------------------------------------------
// The ssh command lines.

#[test]
fn ssh_gets_batch_mode_keep_alives_the_person_s_arguments_and_a_fixed_command() {
    let remote = entry("box", "dev@box.example.com", &["-p", "2222", "-i", "/k ey"]);
    let args = remote::ssh_args(&remote, &LinkTiming::default(), &RemoteCommand::Watch).unwrap();
    assert_eq!(
        args,
        [
            "-T",
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=10",
            "-o",
            "ServerAliveInterval=10",
            "-o",
            "ServerAliveCountMax=2",
            "-o",
            "ClearAllForwardings=yes",
            "-p",
            "2222",
            "-i",
            "/k ey",
            "--",
            "dev@box.example.com",
            "slate",
            "watch",
            "--json",
        ]
    );
    let once = remote::ssh_args(&remote, &LinkTiming::default(), &RemoteCommand::Sessions).unwrap();
    assert_eq!(once[once.len() - 3..], ["slate", "sessions", "--json"]);
    // The product's bound: a dead link is noticed within 30 s.
    assert_eq!(
        LinkTiming::default().dead_link_noticed_within(),
        Duration::from_secs(30)
    );
}

#[test]
fn a_destination_that_ssh_would_read_as_an_option_is_refused() {
    for bad in [
        "-oProxyCommand=touch /tmp/x",
        "-p",
        "",
        "box example",
        "box\n",
    ] {
        let refused = RemoteEntry::new(machine("box"), bad, Vec::new());
        assert!(refused.is_err(), "{bad:?} was accepted");
    }
    let error = Config::parse(
        "[[remote]]\nname = \"box\"\ndestination = \"-oProxyCommand=touch /tmp/x\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("line 3"), "{error}");
    assert!(error.contains("`destination`"), "{error}");
    assert!(error.contains("starts with `-`"), "{error}");
    for good in ["box", "dev@box.example.com", "ssh://dev@box:2222", "[::1]"] {
        assert!(
            RemoteEntry::new(machine("box"), good, Vec::new()).is_ok(),
            "{good}"
        );
    }
}

#[test]
fn machine_names_are_short_plain_and_never_hold_a_colon() {
    for good in ["box", "build-01", "gpu.lab", "a", "A_b"] {
        assert!(Machine::new(good).is_ok(), "{good}");
    }
    for bad in [
        "",
        "-box",
        ".box",
        "box:1",
        "my box",
        "b/x",
        &"x".repeat(33),
        "bôx",
    ] {
        assert!(Machine::new(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn words_for_a_remote_shell_are_plain_and_anything_else_is_quoted() {
    assert!(remote::shell_safe("3fa2-0c1d").is_ok());
    for bad in [
        "a b",
        "$(reboot)",
        "a;b",
        "`x`",
        "a'b",
        "~",
        "",
        "a\nb",
        "*",
    ] {
        assert!(remote::shell_safe(bad).is_err(), "{bad:?}");
    }
    assert_eq!(remote::shell_quote("it's"), r"'it'\''s'");
    let remote = entry("box", "box", &["-F", "/c f"]);
    assert_eq!(
        remote::attach_args(&remote, "work; rm -rf ~").unwrap(),
        [
            "-t",
            "-F",
            "/c f",
            "--",
            "box",
            "tmux",
            "attach",
            "-t",
            "'work; rm -rf ~'"
        ]
    );
    assert_eq!(
        remote::command_line("ssh", &remote::attach_args(&remote, "w").unwrap()),
        "ssh -t -F '/c f' -- box tmux attach -t w"
    );
    // Typed into a local shell, a quoted name reaches the remote's shell quoted.
    assert_eq!(
        remote::command_line("ssh", &remote::attach_args(&remote, "a b").unwrap()),
        r"ssh -t -F '/c f' -- box tmux attach -t ''\''a b'\'''"
    );
    // fish reads `\'` and `\\` in single quotes as escapes, a POSIX shell does not, and PowerShell
    // ends a quote at a typographic one: a name with any of them (or a control or format
    // character) is never sent to a remote's login shell.
    for odd in ["it's", "it\u{2019}s", r"a\b", "a\u{1b}b", "a\u{202e}b", ""] {
        assert_eq!(remote::attach_args(&remote, odd), None, "{odd:?}");
    }
}

#[test]
fn a_remote_session_in_tmux_is_attached_to_and_any_other_gets_a_shell_there() {
    let remote = entry("box", "box", &[]);
    // The pane is the most precise target: attaching to it selects its window and pane.
    let in_tmux = serde_json::json!({
        "id": "s1", "terminal": {"kind": "tmux", "pane": "%3", "sensed": true}
    });
    assert_eq!(attach::tmux_session(&in_tmux).as_deref(), Some("%3"));
    let plan = attach::plan_for(&remote, &in_tmux);
    assert_eq!(
        plan.args(),
        ["-t", "--", "box", "tmux", "attach", "-t", "'%3'"]
    );
    let named = serde_json::json!({"id": "s1", "terminal": {"kind": "tmux", "session": "work"}});
    let plan = attach::plan_for(&remote, &named);
    assert_eq!(plan.command_line(), "ssh -t -- box tmux attach -t work");
    for elsewhere in [
        serde_json::json!({"id": "s1"}),
        serde_json::json!({"id": "s1", "terminal": null}),
        serde_json::json!({"id": "s1", "terminal": {"kind": "kitty", "session": "work"}}),
        serde_json::json!({"id": "s1", "terminal": {"kind": "tmux"}}),
    ] {
        let plan = attach::plan_for(&remote, &elsewhere);
        assert!(matches!(plan, attach::Plan::Shell { .. }), "{elsewhere}");
        assert_eq!(plan.command_line(), "ssh -- box");
    }
}

#[test]
fn a_failed_link_says_what_is_wrong_on_which_machine() {
    let name = machine("box");
    let missing = remote::classify(&name, Some(127), "sh: 1: slate: not found\n", false);
    assert_eq!(missing.kind, FailureKind::NoSlate);
    assert!(
        missing
            .message
            .starts_with("slate not found on box: install it there"),
        "{}",
        missing.message
    );
    let bash = remote::classify(&name, Some(127), "bash: slate: command not found\n", false);
    assert_eq!(bash.kind, FailureKind::NoSlate);
    let old = remote::classify(
        &name,
        Some(2),
        "error: unrecognized subcommand 'watch'\n\nUsage: slate <COMMAND>\n",
        false,
    );
    assert_eq!(old.kind, FailureKind::OldSlate);
    assert!(old.message.contains("too old to stream"), "{}", old.message);
    let refused = remote::classify(
        &name,
        Some(255),
        "ssh: connect to host 10.0.0.9 port 22: Connection refused\r\n",
        false,
    );
    assert_eq!(refused.kind, FailureKind::Link);
    assert_eq!(
        refused.message,
        "ssh: connect to host 10.0.0.9 port 22: Connection refused"
    );
    // A remote whose Slate streamed and then stopped is a link that closed, not a missing one.
    let closed = remote::classify(&name, Some(1), "slate: the server stopped\n", true);
    assert_eq!(closed.kind, FailureKind::Link);
    assert!(closed.message.contains("closed"), "{}", closed.message);
    let cut = remote::classify(&name, None, "", true);
    assert_eq!(cut.message, "the link to box was cut");
}

// ---------------------------------------------------------------------------------------------
// Reading what a remote prints.

fn snapshot_line(sessions: &[Session]) -> String {
    serde_json::json!({"type": "snapshot", "sessions": sessions, "version": "0.1.0"}).to_string()
}

#[test]
fn a_snapshot_line_reads_and_a_bad_session_in_it_is_skipped_not_the_snapshot() {
    let mut objects = vec![
        serde_json::to_value(working("api", "s1")).unwrap(),
        serde_json::json!({"agent": "claude-code", "id": "broken"}),
        serde_json::to_value(waiting("web", "s2")).unwrap(),
    ];
    // A newer Slate's agent, and an older server's session without facets, still read.
    let mut newer = serde_json::to_value(working("cli", "s3")).unwrap();
    newer["agent"] = "grok-cli".into();
    newer["some_new_field"] = serde_json::json!({"x": 1});
    objects.push(newer);
    let mut older = serde_json::to_value(waiting("old", "s4")).unwrap();
    older.as_object_mut().unwrap().remove("session_state");
    objects.push(older);
    // A session the remote follows on a third machine is not relayed.
    let mut third = serde_json::to_value(working("far", "s5")).unwrap();
    third["machine"] = "elsewhere".into();
    objects.push(third);
    let line = serde_json::json!({"type": "snapshot", "sessions": objects, "version": "9.9.9"});
    let Line::Snapshot {
        sessions,
        skipped,
        version,
    } = wire::parse_line(line.to_string().as_bytes()).unwrap()
    else {
        panic!("not a snapshot");
    };
    let ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["s1", "s2", "s3", "s4"]);
    assert_eq!(skipped, 1);
    assert_eq!(version.as_deref(), Some("9.9.9"));
    assert_eq!(sessions[2].agent.as_str(), "grok-cli");
    assert_eq!(sessions[3].session_state.status, Status::Waiting);
}

#[test]
fn change_lines_read_and_bad_lines_are_errors_that_name_what_is_wrong() {
    let session = serde_json::json!({"type": "session", "session": working("api", "s1")});
    assert!(matches!(
        wire::parse_line(session.to_string().as_bytes()).unwrap(),
        Line::Session(session) if session.id.as_str() == "s1"
    ));
    let removed = br#"{"type":"removed","agent":"codex","id":"s9"}"#;
    assert_eq!(
        wire::parse_line(removed).unwrap(),
        Line::Removed(SessionKey::new(AgentKind::CODEX, "s9"))
    );
    let elsewhere = br#"{"type":"removed","agent":"codex","id":"s9","machine":"far"}"#;
    assert_eq!(wire::parse_line(elsewhere).unwrap(), Line::Ignored);
    // A type a newer Slate may print is passed over.
    assert_eq!(
        wire::parse_line(br#"{"type":"keepalive"}"#).unwrap(),
        Line::Ignored
    );
    let full = snapshot_line(&[working("api", "s1")]);
    for bad in [
        &b"not json"[..],
        &full.as_bytes()[..full.len() / 2],
        br#"{"sessions":[]}"#,
        br#"{"type":"snapshot"}"#,
        br#"{"type":"session"}"#,
        br#"{"type":"session","session":{"id":"x"}}"#,
        br#"{"type":"removed","agent":"codex"}"#,
        br#"{"type":"removed","agent":"codex","id":""}"#,
        br#"{"type":"removed","agent":"this is no agent id at all","id":"x"}"#,
        b"\xff\xfe",
    ] {
        let error = wire::parse_line(bad).unwrap_err();
        assert!(
            error.to_string().starts_with("a line that cannot be read"),
            "{error}"
        );
    }
    let (sessions, skipped) = wire::parse_sessions(br#"{"sessions":[{"id":"x"}]}"#).unwrap();
    assert!(sessions.is_empty());
    assert_eq!(skipped, 1);
    assert!(wire::parse_sessions(b"").is_err());
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

#[test]
fn a_flip_on_a_remote_notifies_once_naming_the_machine() {
    let mut watched = Watched::new(&[entry("box", "box", &[])]);
    // First seen: one working, one already waiting. Nothing is news yet.
    watched.snapshot(
        "box",
        vec![
            codex("api-server", "s1", Status::Working),
            codex("web", "s2", Status::Waiting),
        ],
        1,
    );
    assert!(watched.shown.is_empty(), "{:?}", watched.shown);
    assert_eq!(watched.needs_you(), 1);
    let session = watched
        .remotes
        .session(&SessionKey::new(AgentKind::CODEX, "s1").on(Some(machine("box"))))
        .unwrap();
    assert_eq!(session.machine, Some(machine("box")));
    // A session that appears later already waiting is not news either.
    watched.report(
        "box",
        LinkEvent::Line(Line::Session(Box::new(codex(
            "late",
            "s3",
            Status::Waiting,
        )))),
        2,
    );
    assert!(watched.shown.is_empty(), "{:?}", watched.shown);
    watched.report(
        "box",
        LinkEvent::Line(Line::Session(Box::new(codex(
            "api-server",
            "s1",
            Status::Waiting,
        )))),
        3,
    );
    assert_eq!(watched.shown, ["box · api-server · Codex needs you"]);
}

#[test]
fn a_dropped_link_keeps_its_sessions_uncounted_and_a_reconnect_fires_nothing_again() {
    let mut watched = Watched::new(&[entry("box", "box", &[])]);
    watched.snapshot("box", vec![codex("api", "s1", Status::Working)], 1);
    watched.report(
        "box",
        LinkEvent::Line(Line::Session(Box::new(codex("api", "s1", Status::Waiting)))),
        2,
    );
    assert_eq!(watched.shown.len(), 1);
    assert_eq!(watched.needs_you(), 1);

    let touched = watched.lost("box", 5);
    assert_eq!(touched.len(), 1, "the session is marked, not removed");
    let session = watched.remotes.sessions().next().unwrap().clone();
    assert_eq!(session.status, Status::Waiting, "it keeps its last state");
    assert_eq!(session.unreachable_since, Some(at(5)));
    assert_eq!(
        watched.needs_you(),
        0,
        "an unreachable session is not counted"
    );
    let report = &watched.remotes.reports()[0];
    assert_eq!(report.status, remote::Status::Unreachable);
    assert_eq!(report.since, at(5));
    assert_eq!(report.sessions, 1);
    // Further failures while down change nothing listed.
    assert!(watched.lost("box", 9).is_empty());
    assert_eq!(watched.remotes.reports()[0].since, at(5));

    // Back: the snapshot says the same session still waits, and a new one works.
    let touched = watched.snapshot(
        "box",
        vec![
            codex("api", "s1", Status::Waiting),
            codex("docs", "s4", Status::Working),
        ],
        20,
    );
    assert_eq!(touched.len(), 2);
    assert_eq!(watched.shown.len(), 1, "{:?}", watched.shown);
    assert_eq!(watched.needs_you(), 1);
    assert!(watched
        .remotes
        .sessions()
        .all(|session| session.unreachable_since.is_none()));
    assert_eq!(
        watched.remotes.reports()[0].status,
        remote::Status::Connected
    );

    // A turn that finished while the link was down is told once, when the link is back.
    watched.lost("box", 30);
    watched.snapshot(
        "box",
        vec![
            codex("api", "s1", Status::Waiting),
            codex("docs", "s4", Status::Waiting),
        ],
        40,
    );
    assert_eq!(watched.shown.len(), 2, "{:?}", watched.shown);
    assert_eq!(watched.shown[1], "box · docs · Codex needs you");
    // A session gone from the snapshot leaves the list.
    let touched = watched.snapshot("box", vec![codex("docs", "s4", Status::Waiting)], 50);
    assert_eq!(touched.len(), 1);
    assert_eq!(watched.remotes.sessions().count(), 1);
    assert_eq!(watched.shown.len(), 2);
}

#[test]
fn two_machines_with_the_same_session_id_stay_two_sessions_and_a_removed_remote_goes() {
    let mut watched = Watched::new(&[entry("box", "box", &[]), entry("gpu", "gpu", &[])]);
    watched.snapshot("box", vec![codex("api", "same", Status::Working)], 1);
    watched.snapshot("gpu", vec![codex("api", "same", Status::Waiting)], 1);
    assert_eq!(watched.remotes.sessions().count(), 2);
    let local = SessionKey::new(AgentKind::CODEX, "same");
    let keys: Vec<SessionKey> = watched.remotes.sessions().map(Session::key).collect();
    assert!(
        !keys.contains(&local),
        "a remote key never equals a local one"
    );
    assert_ne!(keys[0], keys[1]);
    assert_eq!(keys[0].to_string(), "box:codex:same");
    assert_eq!(keys[0].reference(), "box:same");

    // A removal names the session on its machine only.
    watched.report("gpu", LinkEvent::Line(Line::Removed(local.clone())), 2);
    assert_eq!(watched.remotes.sessions().count(), 1);

    // A remote taken out of the config takes its sessions with it; a late report from it is
    // ignored.
    let gone = watched
        .remotes
        .configure(&[entry("gpu", "gpu", &[])], at(3));
    assert_eq!(gone, [local.clone().on(Some(machine("box")))]);
    assert!(watched
        .report(
            "box",
            LinkEvent::Line(Line::Session(Box::new(codex("x", "y", Status::Working)))),
            4
        )
        .is_empty());
    assert_eq!(watched.remotes.sessions().count(), 0);
    let names: Vec<String> = watched
        .remotes
        .reports()
        .iter()
        .map(|report| report.name.to_string())
        .collect();
    assert_eq!(names, ["gpu"]);
}

#[test]
fn a_garbled_line_is_said_and_the_link_goes_on() {
    let mut watched = Watched::new(&[entry("box", "box", &[])]);
    watched.snapshot("box", vec![codex("api", "s1", Status::Working)], 1);
    watched.report(
        "box",
        LinkEvent::Garbled("box: a line that cannot be read".into()),
        2,
    );
    let report = &watched.remotes.reports()[0];
    assert_eq!(report.status, remote::Status::Connected);
    assert_eq!(
        report.error.as_deref(),
        Some("box: a line that cannot be read")
    );
    assert_eq!(watched.remotes.sessions().count(), 1);
}

// ---------------------------------------------------------------------------------------------
// The config file.

const CONFIG: &str = "# Slate's config: my notes stay.\n\
[notifications]\n\
enabled = true # keep them\n\
\n\
[[remote]]\n\
# the build box\n\
name = \"build\"\n\
destination = \"ci@build.example.com\"\n\
\n\
[cleanup]\n\
reclaim_after_minutes = 5\n";

#[test]
fn adding_and_removing_a_remote_keeps_the_rest_of_the_file() {
    let added = config::with_remote_added(
        CONFIG,
        &entry("box", "dev@box", &["-p", "2222", "-o", "Compression=yes"]),
    )
    .unwrap();
    // The new table goes after the other remotes; every other byte stays where it was.
    let build = "destination = \"ci@build.example.com\"\n";
    let expected = CONFIG.replace(
        build,
        &format!(
            "{build}\n[[remote]]\nname = \"box\"\ndestination = \"dev@box\"\n\
             ssh_args = [\"-p\", \"2222\", \"-o\", \"Compression=yes\"]\n"
        ),
    );
    assert_eq!(added, expected);
    let parsed = Config::parse(&added).unwrap();
    let names: Vec<&str> = parsed.remotes.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["build", "box"]);
    assert_eq!(
        parsed.remotes[1].ssh_args,
        ["-p", "2222", "-o", "Compression=yes"]
    );
    assert_eq!(parsed.cleanup.reclaim_after_minutes, 5);

    let removed = config::with_remote_removed(&added, &machine("box"))
        .unwrap()
        .unwrap();
    assert_eq!(removed.trim_end(), CONFIG.trim_end());
    assert_eq!(
        config::with_remote_removed(&removed, &machine("nothere")).unwrap(),
        None
    );
    let without = config::with_remote_removed(&removed, &machine("build"))
        .unwrap()
        .unwrap();
    assert!(
        without.contains("# Slate's config: my notes stay."),
        "{without}"
    );
    assert!(without.contains("enabled = true # keep them"), "{without}");
    assert!(Config::parse(&without).unwrap().remotes.is_empty());
}

#[test]
fn a_taken_name_a_duplicate_an_unknown_key_or_a_broken_file_is_refused() {
    let taken = config::with_remote_added(CONFIG, &entry("build", "other", &[])).unwrap_err();
    assert!(taken.to_string().contains("already configured"), "{taken}");
    let twice = "[[remote]]\nname = \"a\"\ndestination = \"x\"\n\n[[remote]]\nname = \"a\"\ndestination = \"y\"\n";
    let error = Config::parse(twice).unwrap_err().to_string();
    assert!(error.contains("line 6"), "{error}");
    assert!(error.contains("two remotes are named \"a\""), "{error}");
    let unknown = "[[remote]]\nname = \"a\"\ndestination = \"x\"\nport = 22\n";
    let error = Config::parse(unknown).unwrap_err().to_string();
    assert!(
        error.contains("line 4") && error.contains("`port`"),
        "{error}"
    );
    let bad_name = "[[remote]]\nname = \"a:b\"\ndestination = \"x\"\n";
    assert!(Config::parse(bad_name).is_err());
    let broken = "[notifications\nenabled = true\n";
    assert!(config::with_remote_added(broken, &entry("box", "box", &[])).is_err());

    // The file on disk: a missing one is created, a broken one is left as it is.
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("slate/config.toml");
    let box_entry = entry("box", "box", &[]);
    assert!(
        config::edit_file(&file, |text| config::with_remote_added(text, &box_entry)
            .map(Some))
        .unwrap()
    );
    assert_eq!(
        config::load_or_default(&file).unwrap().0.remotes,
        std::slice::from_ref(&box_entry)
    );
    std::fs::write(&file, broken).unwrap();
    let error = config::edit_file(&file, |text| {
        config::with_remote_added(text, &box_entry).map(Some)
    })
    .unwrap_err()
    .to_string();
    assert!(error.contains(&file.display().to_string()), "{error}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), broken);
}

// ---------------------------------------------------------------------------------------------
// The tray and the table.

#[test]
fn the_menu_names_an_unreachable_machine_and_leaves_its_sessions_out() {
    let mut watched = Watched::new(&[entry("box", "box", &[]), entry("gpu", "gpu", &[])]);
    watched.snapshot("box", vec![codex("api-server", "s1", Status::Waiting)], 1);
    watched.snapshot("gpu", vec![codex("train", "s2", Status::Waiting)], 1);
    watched.lost("gpu", 2);
    let mut live: Vec<Session> = watched.remotes.sessions().cloned().collect();
    live.push(waiting("local-proj", "s3"));
    let reports = watched.remotes.reports();
    let entries = menu_model(
        &live,
        MenuState {
            pause: Pause::Off,
            autostart: false,
            config_error: None,
            remotes: &reports,
        },
        at(3),
    );
    let items: Vec<(String, Option<MenuAction>)> = entries
        .iter()
        .filter_map(|entry| match entry {
            Entry::Item { label, action } => Some((label.clone(), Some(action.clone()))),
            Entry::Note(text) => Some((text.clone(), None)),
            _ => None,
        })
        .take(3)
        .collect();
    assert!(
        items[0].0.starts_with("box · api-server · Codex — "),
        "{items:?}"
    );
    assert!(
        items[1].0.starts_with("local-proj · Claude Code — "),
        "{items:?}"
    );
    assert!(
        items[2].0.starts_with("gpu is unreachable (since "),
        "{items:?}"
    );
    assert_eq!(items[2].1, None);
    assert_eq!(slate::policy::needs_you_count(&live), 2);
    // A remote session's menu id reads back with its machine.
    let action = items[0].1.clone().unwrap();
    assert_eq!(MenuAction::parse(&action.id()), Some(action.clone()));
    let MenuAction::Focus(key) = action else {
        panic!("not a focus action");
    };
    assert_eq!(key.machine, Some(machine("box")));
}

#[test]
fn the_sessions_table_has_a_machine_column_when_remotes_are_configured() {
    let mut remote = codex("api-server", "s1", Status::Waiting);
    remote.machine = Some(machine("box"));
    remote.unreachable_since = Some(at(1));
    let local = working("acme", "s2");
    let table = slate::report::table_with(
        &[remote.clone(), local.clone()],
        at(2),
        slate::report::Listed::Live,
        &[],
        true,
    );
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("MACHINE      STATUS"), "{table}");
    assert!(lines[1].starts_with("box          Needs you"), "{table}");
    assert!(lines[1].ends_with("(unreachable)"), "{table}");
    assert!(lines[2].starts_with("local        Working"), "{table}");
    assert!(table.contains("2 sessions, 0 need you"), "{table}");
    let plain = slate::report::table(&[local], at(2), slate::report::Listed::Live, &[]);
    assert!(plain.starts_with("STATUS"), "{plain}");
    // Serialized, a local session says `"machine": null`, a remote one its name.
    let value = serde_json::to_value(&remote).unwrap();
    assert_eq!(value["machine"], "box");
    assert!(value["unreachable_since"].is_string());
    let value = serde_json::to_value(working("acme", "s2")).unwrap();
    assert!(value["machine"].is_null() && value.get("machine").is_some());
    assert!(value.get("unreachable_since").is_none());
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

/// The bounds the issue sets for the product: a dead link is noticed within 45 s and a
/// restarted server is reached again within 60 s.
const UNREACHABLE_WITHIN: Duration = Duration::from_secs(45);
const RECONNECTED_WITHIN: Duration = Duration::from_secs(60);

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

/// Finishes the remote session's turn: it needs the person now.
fn finish_remote_turn(remote: &RemoteHome) {
    let folder = &remote.folder;
    let text = [
        claude_line(
            folder,
            "user",
            r#""message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok","is_error":false}]}"#,
        ),
        claude_line(
            folder,
            "assistant",
            r#""message":{"role":"assistant","content":[{"type":"text","text":"Shipped."}]}"#,
        ),
        claude_line(folder, "system", r#""subtype":"turn_duration","durationMs":900"#),
    ]
    .join("\n")
        + "\n";
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&remote.transcript)
        .unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

/// A live service over an empty HOME here that follows the remotes `entries`.
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
        store: None,
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

fn the_remote_session(handle: &live::Handle) -> Option<Session> {
    handle
        .live_sessions()
        .into_iter()
        .find(|session| session.id.as_str() == REMOTE_SESSION)
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow tier: needs sshd, ssh and ssh-keygen"]
async fn a_remote_session_is_listed_with_its_machine_and_named_as_machine_colon_id() {
    needs(&["sshd", "ssh", "ssh-keygen"]);
    let machine_box = box_machine(|_| Vec::new());
    let (handle, thread) = live::start(following(
        &machine_box.local_home,
        vec![machine_box.entry("box")],
    ));
    let session = wait_for("the remote session listed", Duration::from_secs(30), || {
        the_remote_session(&handle)
    });
    assert_eq!(session.machine, Some(machine("box")));
    assert_eq!(session.status, Status::Working);
    assert_eq!(session.session_state.reason.code.as_str(), "tool_running");
    assert_eq!(session.project.as_deref(), Some("api-server"));
    assert_eq!(session.unreachable_since, None);
    let report = &handle.remotes()[0];
    assert_eq!(report.status, remote::Status::Connected);
    assert_eq!(report.sessions, 1);
    assert_eq!(report.version.as_deref(), Some(env!("CARGO_PKG_VERSION")));

    // Found as `box:<prefix>`; a bare id names this machine's sessions only.
    let found = handle
        .find(&format!("box:{}", &REMOTE_SESSION[..8]))
        .unwrap();
    assert_eq!(found.session.key(), session.key());
    assert!(handle.find(&REMOTE_SESSION[..8]).is_err());

    // The API lists it with its machine, and the command line reads it from there.
    let (address, stop, server) = serve_on_free_port(&handle).await;
    let body = slate::client::Client::new(address, None)
        .get("/sessions/live")
        .unwrap();
    let live = json(&body);
    assert_eq!(live["sessions"][0]["machine"], "box", "{live}");
    let remotes = json(
        &slate::client::Client::new(address, None)
            .get("/remotes")
            .unwrap(),
    );
    assert_eq!(remotes["remotes"][0]["status"], "connected", "{remotes}");
    assert_eq!(remotes["remotes"][0]["sessions"], 1, "{remotes}");
    // The command line's own HOME holds the server's token: the server is this HOME's Slate.
    let cli_home = tempfile::tempdir().unwrap();
    let token = cli_home.path().join(".config/slate/token");
    std::fs::create_dir_all(token.parent().unwrap()).unwrap();
    std::fs::write(&token, crate::api::TOKEN).unwrap();
    std::fs::set_permissions(&token, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let api = format!("http://{address}");
    let table = tokio::task::spawn_blocking({
        let home = cli_home.path().to_path_buf();
        let api = api.clone();
        move || cli(&home, &["sessions"], &[("SLATE_API", &api)])
    })
    .await
    .unwrap();
    assert!(
        table.lines().next().unwrap().starts_with("MACHINE"),
        "{table}"
    );
    assert!(table.contains("\nbox "), "{table}");
    let list = tokio::task::spawn_blocking({
        let home = cli_home.path().to_path_buf();
        move || cli(&home, &["remote", "list"], &[("SLATE_API", &api)])
    })
    .await
    .unwrap();
    assert!(list.contains("box          connected"), "{list}");
    assert!(
        list.contains(&format!("(from the Slate running at {address})")),
        "{list}"
    );

    // An answer sent to the API is forwarded to box, whose own Slate says what it found.
    let refused = tokio::task::spawn_blocking(move || {
        let request = slate::answers::RespondRequest {
            surface: Some(slate::answers::Surface::Window),
            ..approve_seen()
        };
        slate::client::Client::new(address, Some(crate::api::TOKEN.to_string()))
            .respond(&format!("box:{}", &REMOTE_SESSION[..8]), &request)
    })
    .await
    .unwrap()
    .unwrap_err();
    assert_eq!(
        refused.code,
        slate::answers::ErrorCode::NotAtDialog,
        "{refused}"
    );
    assert!(refused.message.starts_with("on box: "), "{refused}");

    let _ = stop.send(());
    let _ = server.await;
    handle.shutdown();
    thread.join().unwrap();
}

/// An event stream, read as the tray reads it: every event goes through the notification
/// policy (the stream's snapshot seeds it), and the titles it would show are kept.
struct Followed {
    events: std::sync::mpsc::Receiver<slate::client::ServerEvent>,
    notifier: Option<Notifier>,
    titles: Vec<String>,
}

impl Followed {
    fn take(&mut self, event: &slate::client::ServerEvent) {
        let now = live::system_clock();
        let data = json(&event.data);
        let update = match event.event.as_str() {
            "snapshot" => {
                let sessions: Vec<Session> = data["sessions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|session| Session::from_wire(session.clone()).unwrap())
                    .collect();
                // A fresh snapshot (the first, or after falling behind) starts over as the tray
                // does.
                self.notifier = Some(Notifier::seed(&sessions));
                return;
            }
            "session" => Update::Session {
                session: Box::new(Session::from_wire(data).unwrap()),
            },
            "removed" => Update::Removed {
                agent: serde_json::from_value(data["agent"].clone()).unwrap(),
                id: data["id"].as_str().unwrap().to_string(),
                machine: serde_json::from_value(data["machine"].clone()).unwrap_or_default(),
            },
            _ => return,
        };
        let notifier = self.notifier.as_mut().expect("a snapshot first");
        notifications::decide(notifier, update.as_notification(), now, false);
        let decision = notifications::decide(
            notifier,
            notifications::Input::Tick,
            now.plus(notifications::BURST),
            false,
        );
        self.titles
            .extend(decision.plans.into_iter().map(|plan| plan.title));
    }

    /// Reads events until one shows the remote session in `status` (reachable or not), or
    /// fails naming `what` after `limit`. It blocks its worker thread, as the stream's reader
    /// does.
    fn until(&mut self, what: &str, limit: Duration, status: &str, unreachable: bool) {
        tokio::task::block_in_place(|| {
            let deadline = Instant::now() + limit;
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                let event = self
                    .events
                    .recv_timeout(left)
                    .unwrap_or_else(|_| panic!("{what}: not within {limit:?}"));
                self.take(&event);
                if remote_event(&event, status, unreachable) {
                    return;
                }
            }
        });
    }

    /// Reads whatever arrives until the stream has been quiet for `quiet`.
    fn drain(&mut self, quiet: Duration) {
        tokio::task::block_in_place(|| {
            while let Ok(event) = self.events.recv_timeout(quiet) {
                self.take(&event);
            }
        });
    }
}

/// True when `event` shows the remote session in `status`, reachable or not: as a change, or
/// in a snapshot (the stream may open after the link came up).
fn remote_event(event: &slate::client::ServerEvent, status: &str, unreachable: bool) -> bool {
    let data = json(&event.data);
    let shows = |session: &serde_json::Value| {
        session["id"] == REMOTE_SESSION
            && session["machine"] == "box"
            && session["status"] == status
            && session.get("unreachable_since").is_some() == unreachable
    };
    match event.event.as_str() {
        "session" => shows(&data),
        "snapshot" => data["sessions"].as_array().unwrap().iter().any(shows),
        _ => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow tier: needs sshd, ssh and ssh-keygen"]
async fn a_remote_change_reaches_the_stream_and_a_dropped_link_neither_loses_nor_repeats_it() {
    needs(&["sshd", "ssh", "ssh-keygen"]);
    let mut machine_box = box_machine(|_| Vec::new());
    let (handle, thread) = live::start(following(
        &machine_box.local_home,
        vec![machine_box.entry("box")],
    ));
    let (address, stop, server) = serve_on_free_port(&handle).await;
    let mut stream = Followed {
        events: tokio::task::block_in_place(|| follow_events(address)),
        notifier: None,
        titles: Vec::new(),
    };
    // The link comes up after the local snapshot: the remote session arrives as a change.
    stream.until(
        "the remote session",
        Duration::from_secs(30),
        "working",
        false,
    );
    assert!(stream.titles.is_empty(), "{:?}", stream.titles);

    // A transcript change on the remote reaches this machine's stream, and notifies once.
    finish_remote_turn(&machine_box.remote);
    stream.until("the remote flip", Duration::from_secs(15), "waiting", false);
    assert_eq!(stream.titles, ["box · api-server · Claude Code needs you"]);
    assert_eq!(handle.health().needs_you, 1);

    // The server stops and its connections die: unreachable, its session kept but not counted.
    let dropped = Instant::now();
    machine_box.sshd.stop_and_cut();
    stream.until("unreachable", UNREACHABLE_WITHIN, "waiting", true);
    assert!(dropped.elapsed() < UNREACHABLE_WITHIN);
    let report = handle.remotes()[0].clone();
    assert_eq!(report.status, remote::Status::Unreachable, "{report:?}");
    assert!(report.error.is_some(), "{report:?}");
    assert_eq!(
        handle.health().needs_you,
        0,
        "an unreachable session is not counted"
    );
    let session = the_remote_session(&handle).expect("still listed");
    assert_eq!(session.status, Status::Waiting);
    assert!(session.unreachable_since.is_some());

    // Back again: reconnected within the bound, the session reachable and counted, and no
    // second notification for a turn already told.
    let restarted = Instant::now();
    machine_box.sshd.restart();
    stream.until("reconnected", RECONNECTED_WITHIN, "waiting", false);
    assert!(restarted.elapsed() < RECONNECTED_WITHIN);
    wait_for("connected again", Duration::from_secs(5), || {
        (handle.remotes()[0].status == remote::Status::Connected).then_some(())
    });
    assert_eq!(handle.health().needs_you, 1);
    // Nothing else arrives for a moment, and nothing more was told.
    stream.drain(Duration::from_millis(1500));
    assert_eq!(stream.titles, ["box · api-server · Claude Code needs you"]);

    let _ = stop.send(());
    let _ = server.await;
    handle.shutdown();
    thread.join().unwrap();
}

#[test]
#[ignore = "slow tier: needs sshd, ssh and ssh-keygen"]
fn a_link_whose_server_stops_answering_is_seen_dead_by_its_keep_alives() {
    needs(&["sshd", "ssh", "ssh-keygen"]);
    let machine_box = box_machine(|_| Vec::new());
    let (handle, thread) = live::start(following(
        &machine_box.local_home,
        vec![machine_box.entry("box")],
    ));
    wait_for("connected", Duration::from_secs(30), || {
        the_remote_session(&handle).filter(|s| s.unreachable_since.is_none())
    });
    // Every connection freezes: the TCP connection stays open, nothing answers on it. Only
    // the client's keep-alives (1 s, 2 of them here) can tell.
    let frozen = Instant::now();
    let stopped = machine_box.sshd.freeze();
    assert!(!stopped.is_empty());
    let session = wait_for("unreachable", UNREACHABLE_WITHIN, || {
        the_remote_session(&handle).filter(|s| s.unreachable_since.is_some())
    });
    let noticed = frozen.elapsed();
    assert!(noticed < UNREACHABLE_WITHIN, "{noticed:?}");
    assert_eq!(session.status, Status::Working);
    assert_eq!(handle.remotes()[0].status, remote::Status::Unreachable);
    for pid in stopped {
        crate::sshd::signal(pid, "CONT");
    }
    handle.shutdown();
    thread.join().unwrap();
}

#[test]
#[ignore = "slow tier: needs sshd, ssh and ssh-keygen"]
fn a_remote_without_slate_says_so_and_is_tried_again_slowly() {
    needs(&["sshd", "ssh", "ssh-keygen"]);
    let machine_box = box_machine(|root| {
        vec![Account {
            host: "bare".to_string(),
            home: root.join("bare-home"),
            path: Vec::new(),
            forced: None,
        }]
    });
    let (handle, thread) = live::start(following(
        &machine_box.local_home,
        vec![machine_box.entry("bare")],
    ));
    let report = wait_for("the missing slate said", Duration::from_secs(30), || {
        handle
            .remotes()
            .into_iter()
            .find(|report| report.status == remote::Status::Unreachable)
    });
    let error = report.error.clone().unwrap();
    assert!(
        error.starts_with("slate not found on bare: install it there"),
        "{error}"
    );
    // Tried again after the slow wait, not the quick one.
    let next = report.next_attempt.expect("a next attempt");
    let wait = next.millis() - report.since.millis();
    assert!(
        wait >= fast().slow_retry.as_millis() as i64 - 100,
        "{wait} ms"
    );
    handle.shutdown();
    thread.join().unwrap();
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

#[test]
#[ignore = "slow tier: needs sshd, ssh and ssh-keygen"]
fn without_a_running_slate_each_remote_is_asked_once_and_a_slow_one_is_unreachable() {
    needs(&["sshd", "ssh", "ssh-keygen"]);
    let machine_box = box_machine(|root| {
        vec![
            Account {
                host: "bare".to_string(),
                home: root.join("bare-home"),
                path: Vec::new(),
                forced: None,
            },
            // Answers nothing for longer than the one-shot limit.
            Account {
                host: "slow".to_string(),
                home: root.join("slow-home"),
                path: Vec::new(),
                forced: Some("sleep 8".to_string()),
            },
        ]
    });
    let (home, config) = machine_box.serverless_home();
    for name in ["box", "bare", "slow"] {
        let added = cli(
            &home,
            &["remote", "add", name, name, "--", "-F", &config],
            &[],
        );
        assert!(added.contains(&format!("added remote {name}")), "{added}");
    }
    let text = std::fs::read_to_string(home.join(".config/slate/config.toml")).unwrap();
    assert!(
        text.starts_with("[server]\nlisten = \"127.0.0.1:0\"\n"),
        "{text}"
    );

    let started = Instant::now();
    let answer = json(&cli(&home, &["sessions", "--json"], &[]));
    let took = started.elapsed();
    // The slow remote is cut at its 5 s limit and does not hold the answer up much past it.
    assert!(took < Duration::from_secs(20), "{took:?}");
    let sessions = answer["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{answer}");
    assert_eq!(sessions[0]["id"], REMOTE_SESSION);
    assert_eq!(sessions[0]["machine"], "box");
    let remotes = answer["remotes"].as_array().unwrap();
    let by_name = |name: &str| {
        remotes
            .iter()
            .find(|remote| remote["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {answer}"))
            .clone()
    };
    assert_eq!(by_name("box")["status"], "connected");
    assert_eq!(by_name("box")["sessions"], 1);
    assert_eq!(by_name("bare")["status"], "unreachable");
    assert!(by_name("bare")["error"]
        .as_str()
        .unwrap()
        .starts_with("slate not found on bare: install it there"));
    assert_eq!(by_name("slow")["status"], "unreachable");
    assert_eq!(by_name("slow")["error"], "slow did not answer within 5 s");

    let table = cli(&home, &["sessions"], &[]);
    assert!(table.starts_with("MACHINE"), "{table}");
    assert!(
        table.contains("slow: unreachable (slow did not answer within 5 s)"),
        "{table}"
    );

    // `box:ID` names the remote session: shown from the remote itself.
    let prefix = format!("box:{}", &REMOTE_SESSION[..8]);
    let shown = json(&cli(&home, &["show", &prefix, "--json"], &[]));
    assert_eq!(shown["session"]["machine"], "box", "{shown}");
    assert_eq!(shown["session"]["status"], "working", "{shown}");
    let refused = cli_output(&home, &["park", &prefix, "--reason", "later"], &[]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("is a session on box"),
        "{refused:?}"
    );
    // Not in tmux (nothing says so): focus prints the way there instead.
    let focus = cli_output(&home, &["focus", &prefix], &[]);
    assert!(focus.status.success(), "{focus:?}");
    assert_eq!(
        String::from_utf8_lossy(&focus.stdout).trim(),
        format!("ssh -F {config} -- box")
    );
    assert!(
        String::from_utf8_lossy(&focus.stderr).contains("does not say the session runs in tmux"),
        "{focus:?}"
    );

    let list = json(&cli(&home, &["remote", "list", "--json"], &[]));
    let statuses: Vec<&str> = list["remotes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|remote| remote["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["connected", "unreachable", "unreachable"],
        "{list}"
    );
    let doctor = cli(&home, &["doctor"], &[]);
    assert!(doctor.contains("Remote machines:"), "{doctor}");
    assert!(
        doctor.contains("slate not found on bare: install it there"),
        "{doctor}"
    );

    cli(&home, &["remote", "remove", "slow"], &[]);
    let missing = cli_output(&home, &["remote", "remove", "slow"], &[]);
    assert!(!missing.status.success());
    let bad = cli_output(&home, &["remote", "add", "evil", "-oProxyCommand=x"], &[]);
    assert!(!bad.status.success(), "{bad:?}");
    let text = std::fs::read_to_string(home.join(".config/slate/config.toml")).unwrap();
    assert!(!text.contains("slow") && !text.contains("evil"), "{text}");
}

#[test]
fn slate_watch_ends_when_nobody_reads_it() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    std::fs::create_dir_all(home.join(".config/slate")).unwrap();
    std::fs::write(
        home.join(".config/slate/config.toml"),
        "[server]\nlisten = \"127.0.0.1:0\"\n",
    )
    .unwrap();
    let mut child = Command::new(slate_bin())
        .args(["watch", "--json"])
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env_remove("SLATE_API")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    let snapshot = json(&first);
    assert_eq!(snapshot["type"], "snapshot", "{first}");
    assert_eq!(snapshot["version"], env!("CARGO_PKG_VERSION"));
    drop(reader);
    let ended = wait_for("slate watch ending", Duration::from_secs(10), || {
        child.try_wait().unwrap()
    });
    assert!(ended.success(), "{ended:?}");
}

#[test]
#[ignore = "slow tier: needs sshd, ssh and ssh-keygen"]
fn focus_on_a_remote_session_in_tmux_opens_a_local_terminal_attached_to_its_pane() {
    needs(&["sshd", "ssh", "ssh-keygen"]);
    // A remote whose Slate says the session runs in tmux pane %3 (a stand-in for its answer to
    // `slate sessions --json`), and a stand-in terminal here that writes down how it was started.
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().canonicalize().unwrap();
    let mut session = serde_json::to_value(waiting(
        "api-server",
        "7e5f0000-1111-4222-8333-444444444444",
    ))
    .unwrap();
    session["terminal"] = serde_json::json!({"kind": "tmux", "pane": "%3", "sensed": true});
    let answer = root.join("answer.json");
    std::fs::write(
        &answer,
        serde_json::json!({ "sessions": [session] }).to_string(),
    )
    .unwrap();
    let sshd = Sshd::start(
        &root.join("sshd"),
        &[Account {
            host: "tmuxbox".to_string(),
            home: root.join("tmuxbox-home"),
            path: Vec::new(),
            forced: Some(format!("cat {}", answer.display())),
        }],
    );
    let terminal = root.join("terminal.sh");
    let started = root.join("terminal-args");
    std::fs::write(
        &terminal,
        format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > {}\n", started.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        &terminal,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let home = root.join("local-home");
    std::fs::create_dir_all(home.join(".config/slate")).unwrap();
    std::fs::write(
        home.join(".config/slate/config.toml"),
        "[server]\nlisten = \"127.0.0.1:0\"\n",
    )
    .unwrap();
    let config = sshd.ssh_config().display().to_string();
    cli(
        &home,
        &["remote", "add", "tmuxbox", "tmuxbox", "--", "-F", &config],
        &[],
    );

    let dry = cli(&home, &["focus", "tmuxbox:7e5f", "--dry-run"], &[]);
    assert_eq!(
        dry.trim(),
        format!("ssh -t -F {config} -- tmuxbox tmux attach -t ''\\''%3'\\'''")
    );
    let terminal_env = terminal.display().to_string();
    let opened = cli(
        &home,
        &["focus", "tmuxbox:7e5f"],
        &[("TERMINAL", &terminal_env)],
    );
    assert!(
        opened.starts_with(&format!("opened {terminal_env}: ssh -t")),
        "{opened}"
    );
    let args = wait_for("the terminal to start", Duration::from_secs(10), || {
        std::fs::read_to_string(&started).ok()
    });
    let args: Vec<&str> = args.lines().collect();
    assert_eq!(
        args,
        ["-e", "ssh", "-t", "-F", &config, "--", "tmuxbox", "tmux", "attach", "-t", "'%3'"]
    );
}

// ---------------------------------------------------------------------------------------------
// Answers forwarded to a remote.

/// A session with a permission dialog Slate can type into, as its own machine says it.
fn at_dialog(id: &str) -> Session {
    let mut session = codex("api", id, Status::Waiting);
    session.dialog = Some(
        serde_json::from_value(serde_json::json!({
            "kind": "permission",
            "summary": "Run: touch x.txt",
            "options": [
                {"number": 1, "label": "Yes", "action": "approve"},
                {"number": 3, "label": "No", "action": "deny"}
            ],
            "fingerprint": "9f86d081884c7d65",
            "answerable": true
        }))
        .unwrap(),
    );
    session
}

#[test]
fn a_relayed_dialog_is_answerable_while_its_remote_is_connected_and_says_why_not_while_down() {
    let mut watched = Watched::new(&[entry("box", "box", &[])]);
    watched.snapshot("box", vec![at_dialog("s1")], 1);
    let dialog = |watched: &Watched| {
        watched
            .remotes
            .sessions()
            .next()
            .unwrap()
            .dialog
            .clone()
            .unwrap()
    };
    let shown = dialog(&watched);
    assert!(shown.answerable, "{shown:?}");
    assert_eq!(shown.why_not, None);

    watched.lost("box", 5);
    let shown = dialog(&watched);
    assert!(!shown.answerable);
    let why = shown.why_not.unwrap();
    assert!(why.starts_with("box is unreachable"), "{why}");
    assert!(why.contains("ssh box"), "{why}");

    watched.snapshot("box", vec![at_dialog("s1")], 9);
    assert!(dialog(&watched).answerable);

    // What the remote says it cannot type into stays so, with its own reason.
    let mut plain = at_dialog("s1");
    let remote_dialog = plain.dialog.as_mut().unwrap();
    remote_dialog.answerable = false;
    remote_dialog.why_not = Some("plain terminal".to_string());
    watched.snapshot("box", vec![plain], 12);
    let shown = dialog(&watched);
    assert!(!shown.answerable);
    assert_eq!(shown.why_not.as_deref(), Some("plain terminal"));
}

#[test]
fn a_forwarded_answer_is_one_fixed_command_with_checked_arguments() {
    use slate::agents::keys::{Action, OptionRef};
    use slate::answers::{ErrorCode, RespondRequest};
    use slate::remote::forward;

    let remote = entry("box", "box.example", &["-p", "2222"]);
    let request = |action, option: Option<OptionRef>| RespondRequest {
        action,
        option,
        text: None,
        dialog: "9f86d081884c7d65".to_string(),
        surface: None,
    };
    let command = forward::command(&remote, "s-1.a_b:c", &request(Action::Approve, None)).unwrap();
    let args = remote::ssh_args(&remote, &LinkTiming::default(), &command).unwrap();
    let tail = args.iter().position(|arg| arg == "box.example").unwrap();
    // The command line the remote's login shell reads is fixed: no session data is on it, so no
    // shell's quoting (fish reads `\'` unlike a POSIX shell) can change what runs.
    assert_eq!(args[tail + 1..], ["slate", "remote-call"]);
    assert!(args.contains(&"BatchMode=yes".to_string()), "{args:?}");
    assert!(
        !args.iter().any(|arg| arg.contains("s-1.a_b:c")
            || arg.contains("9f86d081884c7d65")
            || arg.contains("approve")),
        "{args:?}"
    );
    // The request goes on its standard input, as one JSON call.
    let input = command.input().unwrap();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&input).unwrap(),
        serde_json::json!({
            "call": "respond",
            "id": "s-1.a_b:c",
            "request": {"action": "approve", "dialog": "9f86d081884c7d65"}
        })
    );
    assert_eq!(
        remote::RemoteCall::parse(&input).unwrap(),
        remote::RemoteCall::Respond {
            id: "s-1.a_b:c".to_string(),
            request: request(Action::Approve, None),
        }
    );
    let command = forward::command(
        &remote,
        "s1",
        &request(Action::Answer, Some(OptionRef::Number(2))),
    )
    .unwrap();
    assert_eq!(command.words().unwrap(), ["slate", "remote-call"]);
    let call: serde_json::Value = serde_json::from_slice(&command.input().unwrap()).unwrap();
    assert_eq!(call["request"]["option"], 2);
    assert_eq!(call["request"]["action"], "answer");
    // What the remote reads is checked too: a call that is not JSON, a truncated one, one of an
    // unknown kind or with an unknown field, or one too long to be a call, is refused.
    for bad in [
        &b"approve s1"[..],
        &input[..input.len() / 2],
        b"\xff\xfe",
        br#"{"call":"reboot"}"#,
        br#"{"call":"respond","id":"s1","request":{"action":"approve","dialog":"9f86d081884c7d65"},"x":1}"#,
        br#"{"call":"respond","id":"s1"}"#,
        b"",
    ] {
        assert!(remote::RemoteCall::parse(bad).is_err(), "{bad:?}");
    }
    let huge = format!(
        r#"{{"call":"respond","id":"s1","request":{{"action":"answer","text":"{}","dialog":"9f86d081884c7d65"}}}}"#,
        "x".repeat(remote::CALL_MAX)
    );
    assert!(remote::RemoteCall::parse(huge.as_bytes())
        .unwrap_err()
        .contains("at most"));

    // Refused before anything runs: hostile ids, a label, a free text, a bad fingerprint.
    let long = "s".repeat(129);
    for id in [
        "s1;touch x",
        "$(reboot)",
        "-oProxyCommand=x",
        "a b",
        " ",
        "",
        "s1'",
        "s1\\'x",
        "é",
        "s\u{202e}1",
        &long,
    ] {
        let error = forward::command(&remote, id, &request(Action::Approve, None)).unwrap_err();
        assert_eq!(error.code, ErrorCode::BadRequest, "{id:?}");
        assert!(error.message.contains("cannot be sent to box"), "{error}");
    }
    let error = forward::command(
        &remote,
        "s1",
        &request(
            Action::Answer,
            Some(OptionRef::Label("Postgres; rm".into())),
        ),
    )
    .unwrap_err();
    assert_eq!(error.code, ErrorCode::BadRequest);
    assert!(error.message.contains("by its number only"), "{error}");
    let mut text = request(Action::Answer, None);
    text.text = Some("yes".into());
    assert_eq!(
        forward::command(&remote, "s1", &text).unwrap_err().code,
        ErrorCode::NotOffered
    );
    let mut bad = request(Action::Approve, None);
    bad.dialog = "9f86d081884c7d6; x".into();
    assert_eq!(
        forward::command(&remote, "s1", &bad).unwrap_err().code,
        ErrorCode::BadRequest
    );
    // The time limit: the remote's own confirmation and the connect timeout, plus a margin.
    assert_eq!(
        forward::limit(&LinkOptions::default()),
        Duration::from_secs(20)
    );
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

/// A stand-in `ssh` that counts its runs in `count` and fails as `ssh` does when the host
/// refuses the connection.
fn refusing_ssh(folder: &Path) -> (PathBuf, PathBuf) {
    let count = folder.join("runs");
    let program = folder.join("ssh");
    std::fs::write(
        &program,
        format!(
            "#!/bin/sh\necho run >> '{}'\necho 'ssh: connect to host box.example port 22: Connection refused' >&2\nexit 255\n",
            count.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    (program, count)
}

#[test]
fn an_unreachable_remote_gives_a_clear_error_and_is_tried_once() {
    use slate::agents::keys::{Action, OptionRef};
    use slate::answers::ErrorCode;
    use slate::remote::forward;

    let temp = tempfile::tempdir().unwrap();
    let (program, count) = refusing_ssh(temp.path());
    let options = LinkOptions {
        ssh: program.into(),
        timing: fast(),
    };
    let request = approve_seen();
    let remote = entry("box", "box.example", &[]);
    let error = forward::respond(&remote, &options, "s1", &request).unwrap_err();
    assert_eq!(error.code, ErrorCode::Unreachable, "{error}");
    assert!(error.message.contains("box"), "{error}");
    assert!(error.message.contains("Connection refused"), "{error}");
    assert!(error.message.contains("not tried again"), "{error}");
    assert_eq!(std::fs::read_to_string(&count).unwrap(), "run\n");

    // A hostile option never reaches `ssh`.
    let mut hostile = request.clone();
    hostile.action = Action::Answer;
    hostile.option = Some(OptionRef::Label("1 && reboot".into()));
    forward::respond(&remote, &options, "s1", &hostile).unwrap_err();
    forward::respond(&remote, &options, "s1;reboot", &request).unwrap_err();
    assert_eq!(std::fs::read_to_string(&count).unwrap(), "run\n");
}

#[test]
#[ignore = "slow tier: needs sshd, ssh and ssh-keygen"]
fn a_forwarded_answer_reaches_the_remote_slate_and_its_result_comes_back() {
    needs(&["sshd", "ssh", "ssh-keygen"]);
    use slate::answers::ErrorCode;
    use slate::remote::forward;

    let machine_box = box_machine(|_| Vec::new());
    let options = LinkOptions {
        ssh: "ssh".into(),
        timing: fast(),
    };
    let request = approve_seen();
    // The remote session works: its own Slate says it is at no dialog, and types nothing.
    let error = forward::respond(
        &machine_box.entry("box"),
        &options,
        REMOTE_SESSION,
        &request,
    )
    .unwrap_err();
    assert_eq!(error.code, ErrorCode::NotAtDialog, "{error}");
    assert!(error.message.starts_with("on box: "), "{error}");

    // The command line does the same from a HOME that follows `box`, and both machines
    // record the attempt.
    let (home, config) = machine_box.serverless_home();
    cli(
        &home,
        &["remote", "add", "box", "box", "--", "-F", &config],
        &[],
    );
    let output = cli_output(
        &home,
        &[
            "approve",
            &format!("box:{}", &REMOTE_SESSION[..8]),
            "--json",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let said = json(&String::from_utf8_lossy(&output.stdout));
    assert_eq!(said["error"]["code"], "not_at_dialog", "{said}");
    assert!(
        said["error"]["message"]
            .as_str()
            .unwrap()
            .contains("is at no dialog"),
        "{said}"
    );
    // The command line saw no dialog in the remote's list, so it forwarded nothing: this machine
    // records the attempt under `box:ID`, and the remote's store holds only the forwarded one.
    let key = SessionKey::new(AgentKind::CLAUDE_CODE, REMOTE_SESSION);
    let here = slate::store::open(&home.join(".local/share/slate/slate.db")).unwrap();
    let recorded = here
        .answers(&key.clone().on(Some(machine("box"))), 5)
        .unwrap();
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(recorded[0].outcome, "not_at_dialog");
    assert_eq!(recorded[0].surface, slate::answers::Surface::Cli);
    assert!(
        here.answers(&key, 5).unwrap().is_empty(),
        "never as a local one"
    );
    let there =
        slate::store::open(&machine_box.remote.home.join(".local/share/slate/slate.db")).unwrap();
    let recorded = there.answers(&key, 5).unwrap();
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(recorded[0].outcome, "not_at_dialog");
    assert_eq!(recorded[0].fingerprint, "9f86d081884c7d65");
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

#[test]
fn a_one_shot_answer_or_error_output_past_its_limit_is_cut_off_and_said() {
    let temp = tempfile::tempdir().unwrap();
    let remote = entry("box", "box.example", &[]);
    // An answer without end, and error output without end: each is read up to its limit, then
    // `ssh` is killed, and the question fails saying why (not after its time limit).
    for (name, script, what) in [
        ("out", "exec yes '{\"sessions\":[]}'\n", "output"),
        ("err", "exec yes 'ssh: warning' >&2\n", "error output"),
    ] {
        let options = LinkOptions {
            ssh: stand_in_ssh(&temp.path().join(name), script).into(),
            timing: LinkTiming {
                ask_limit: Duration::from_secs(60),
                ..fast()
            },
        };
        let failure = remote::link::ask_sessions(&remote, &options).unwrap_err();
        assert!(
            failure
                .message
                .starts_with(&format!("the {what} from box was longer than")),
            "{}",
            failure.message
        );
        assert!(
            failure.message.contains("ssh was stopped"),
            "{}",
            failure.message
        );
    }
    // Just under the limit reads: a long answer is not a broken one.
    let sessions: Vec<Session> = (0..3).map(|n| working("api", &format!("s{n}"))).collect();
    let answer = serde_json::json!({ "sessions": sessions }).to_string();
    let padded = format!(
        "{answer}{}",
        " ".repeat(remote::link::REPLY_MAX - answer.len())
    );
    let file = temp.path().join("answer.json");
    std::fs::write(&file, &padded).unwrap();
    let options = LinkOptions {
        ssh: stand_in_ssh(
            &temp.path().join("full"),
            &format!("exec cat '{}'\n", file.display()),
        )
        .into(),
        timing: fast(),
    };
    assert_eq!(
        remote::link::ask_sessions(&remote, &options).unwrap().len(),
        3
    );
}

#[test]
fn a_forwarded_answer_carries_its_data_on_standard_input_and_an_old_remote_slate_is_named() {
    use slate::answers::ErrorCode;
    use slate::remote::forward;

    let temp = tempfile::tempdir().unwrap();
    let args = temp.path().join("args");
    let input = temp.path().join("input");
    // What an older Slate says of a subcommand it does not have (clap's words), after `ssh`
    // passed its input on.
    let program = stand_in_ssh(
        &temp.path().join("bin"),
        &format!(
            "for arg in \"$@\"; do echo \"$arg\"; done > '{}'\ncat > '{}'\n\
             echo \"error: unrecognized subcommand 'remote-call'\" >&2\nexit 2\n",
            args.display(),
            input.display()
        ),
    );
    let options = LinkOptions {
        ssh: program.into(),
        timing: fast(),
    };
    let remote = entry("box", "box.example", &[]);
    let error = forward::respond(&remote, &options, "s1.x", &approve_seen()).unwrap_err();
    assert_eq!(error.code, ErrorCode::CannotType, "{error}");
    assert!(
        error
            .message
            .starts_with("the slate on box is older than this one"),
        "{error}"
    );
    assert!(error.message.contains("update it there"), "{error}");
    let args = std::fs::read_to_string(&args).unwrap();
    assert!(
        args.ends_with("--\nbox.example\nslate\nremote-call\n"),
        "{args}"
    );
    assert!(
        !args.contains("s1.x") && !args.contains("9f86d081884c7d65"),
        "{args}"
    );
    let call: serde_json::Value = serde_json::from_slice(&std::fs::read(&input).unwrap()).unwrap();
    assert_eq!(call["call"], "respond");
    assert_eq!(call["id"], "s1.x");
    assert_eq!(call["request"]["dialog"], "9f86d081884c7d65");

    // An id with a quote never gets that far: the id check refuses it before `ssh` runs.
    std::fs::remove_file(temp.path().join("args")).unwrap();
    let error = forward::respond(&remote, &options, "s1'x", &approve_seen()).unwrap_err();
    assert_eq!(error.code, ErrorCode::BadRequest, "{error}");
    assert!(!temp.path().join("args").exists());
}

/// A ledger that keeps what it is given, to see what the one answer path records.
#[derive(Default)]
struct Kept(std::sync::Mutex<Vec<(SessionKey, slate::answers::Record)>>);

impl slate::answers::Ledger for Kept {
    fn now(&self) -> Timestamp {
        live::system_clock()
    }

    fn keep(&self, key: &SessionKey, record: &slate::answers::Record) {
        self.0.lock().unwrap().push((key.clone(), record.clone()));
    }
}

impl Kept {
    fn taken(self) -> Vec<(String, slate::answers::Record)> {
        let kept = self.0.into_inner().unwrap();
        kept.into_iter()
            .map(|(key, record)| (key.reference(), record))
            .collect()
    }
}

#[test]
fn the_one_answer_path_records_each_attempt_once_where_it_is_carried_out() {
    use slate::answers::{self, ErrorCode, RespondError, Route, Target};

    let temp = tempfile::tempdir().unwrap();
    let (program, count) = refusing_ssh(temp.path());
    let mut session = at_dialog("s1");
    session.machine = Some(machine("box"));
    let target = Target::of(&session);
    let request = approve_seen();

    // Forwarded from here: sent once, the refusal comes back, and this machine records it once,
    // under `box:s1`, with the dialog as it was shown (its screen is read there).
    let kept = Kept::default();
    let route = Route::Forward {
        entry: entry("box", "box.example", &[]),
        options: LinkOptions {
            ssh: program.into(),
            timing: fast(),
        },
    };
    let error = answers::answer(route, &target, &request, &kept).unwrap_err();
    assert_eq!(error.code, ErrorCode::Unreachable, "{error}");
    assert_eq!(std::fs::read_to_string(&count).unwrap(), "run\n");
    let kept = kept.taken();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let (key, record) = &kept[0];
    assert_eq!(key, "box:s1");
    assert_eq!(record.outcome, "unreachable");
    assert_eq!(record.detail.as_deref(), Some(error.message.as_str()));
    assert_eq!(record.fingerprint, "9f86d081884c7d65");
    assert_eq!(record.summary.as_deref(), Some("Run: touch x.txt"));
    assert_eq!(record.surface, slate::answers::Surface::Api);

    // Through a running Slate, which records what it carries out itself: nothing here. (None
    // answers at this address, which is said as such.)
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = free.local_addr().unwrap();
    drop(free);
    let kept = Kept::default();
    let client = slate::client::Client::new(address, Some("0".repeat(64)));
    let error = answers::answer(Route::Server(client), &target, &request, &kept).unwrap_err();
    assert_eq!(error.code, ErrorCode::Unreachable, "{error}");
    assert!(kept.taken().is_empty());

    // Typed here, where Slate keeps no store to lock and record in: refused, recorded once as
    // this machine's session, without a summary (no screen was read).
    let here = Target {
        machine: None,
        ..target.clone()
    };
    let kept = Kept::default();
    let error = answers::answer(Route::Here { locks: None }, &here, &request, &kept).unwrap_err();
    assert_eq!(error.code, ErrorCode::Internal, "{error}");
    let kept = kept.taken();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].0, "s1");
    assert_eq!(kept[0].1.outcome, "internal");
    assert_eq!(kept[0].1.summary, None);

    // Refused before it took a route (the command line's checks of the dialog it showed):
    // recorded once too, and the refusal handed back as it was.
    let kept = Kept::default();
    let refused = RespondError::new(ErrorCode::NotAtDialog, "session s1 is at no dialog");
    let returned = answers::refuse(&target, &request, refused.clone(), &kept);
    assert_eq!(returned, refused);
    let kept = kept.taken();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].0, "box:s1");
    assert_eq!(kept[0].1.outcome, "not_at_dialog");
    assert_eq!(kept[0].1.summary.as_deref(), Some("Run: touch x.txt"));
}

/// The API forwards an answer to a remote session once, records it once under `MACHINE:ID`
/// (never as a local session's), and refuses that session's intent; each refusal in the API's
/// one error shape.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_forwards_a_remote_answer_once_and_records_it_under_its_machine() {
    use axum::http::StatusCode;

    use crate::api::{call, error_code, json, post_json};

    let temp = tempfile::tempdir().unwrap();
    let local = temp.path().join("local");
    std::fs::create_dir_all(&local).unwrap();
    let snapshot = temp.path().join("snapshot");
    std::fs::write(&snapshot, snapshot_line(&[at_dialog("s1")]) + "\n").unwrap();
    let calls = temp.path().join("calls");
    // `slate watch --json` shows one session at a dialog and stays; `slate remote-call` reads
    // the call and says what the remote's Slate would of a session no longer at it.
    let program = stand_in_ssh(
        &temp.path().join("bin"),
        &format!(
            "case \"$*\" in\n\
             *remote-call*) cat > /dev/null; echo call >> '{}'\n\
             echo '{{\"error\":{{\"code\":\"not_at_dialog\",\"message\":\"session s1 is at no dialog\"}}}}'\n\
             exit 3;;\n\
             *) cat '{}'; exec sleep 600;;\n\
             esac\n",
            calls.display(),
            snapshot.display()
        ),
    );
    let mut service = following(&local, vec![entry("box", "box", &[])]);
    service.remotes = Some(LinkOptions {
        ssh: program.into(),
        timing: fast(),
    });
    let store = local.join("slate.db");
    service.store = Some(slate::store::open(&store).unwrap());
    let (handle, thread) = live::start(service);
    tokio::task::spawn_blocking({
        let handle = handle.clone();
        move || {
            wait_for("the remote session", Duration::from_secs(30), || {
                handle
                    .live_sessions()
                    .into_iter()
                    .find(|session| session.machine.is_some())
            })
        }
    })
    .await
    .unwrap();

    let (status, body) = call(
        &handle,
        post_json(
            "/sessions/box:s1/intent",
            serde_json::json!({"state": "parked", "reason": "lunch"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(error_code(&body), "remote_session");

    let (status, body) = call(
        &handle,
        post_json(
            "/sessions/box:s1/respond",
            serde_json::json!({"action": "approve", "dialog": "9f86d081884c7d65", "surface": "window"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(error_code(&body), "not_at_dialog");
    assert_eq!(
        json(&body)["error"]["message"],
        "on box: session s1 is at no dialog"
    );
    assert_eq!(std::fs::read_to_string(&calls).unwrap(), "call\n");

    handle.shutdown();
    thread.join().unwrap();
    let store = slate::store::open(&store).unwrap();
    let key = SessionKey::new(AgentKind::CODEX, "s1");
    let recorded = store
        .answers(&key.clone().on(Some(machine("box"))), 5)
        .unwrap();
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(recorded[0].outcome, "not_at_dialog");
    assert_eq!(recorded[0].surface, slate::answers::Surface::Window);
    assert_eq!(recorded[0].summary.as_deref(), Some("Run: touch x.txt"));
    assert!(
        store.answers(&key, 5).unwrap().is_empty(),
        "never as a local one"
    );
}

/// The parts of a `session` line around its id, for a stand-in remote that makes up sessions.
fn session_line_parts() -> (String, String) {
    let line = serde_json::json!({"type": "session", "session": working("api", "IDHERE")});
    let line = line.to_string();
    let (before, after) = line.split_once("IDHERE").unwrap();
    (before.to_string(), after.to_string())
}

/// A stand-in `ssh` for `slate watch --json` that sends a snapshot and then new sessions without
/// end, as fast as it can, writing its pid to `pids` first. A one-shot question gets no sessions.
fn flooding_ssh(folder: &Path, pids: &Path) -> PathBuf {
    let (before, after) = session_line_parts();
    std::fs::create_dir_all(folder).unwrap();
    std::fs::write(folder.join("before"), before).unwrap();
    std::fs::write(folder.join("after"), after).unwrap();
    let flood = format!(
        "BEGIN {{ getline before < \"{folder}/before\"; getline after < \"{folder}/after\"; \
         print \"{{\\\"type\\\":\\\"snapshot\\\",\\\"sessions\\\":[],\\\"version\\\":\\\"9\\\"}}\"; \
         for (n = 0; ; n++) print before \"s\" n after }}",
        folder = folder.display()
    );
    std::fs::write(folder.join("flood.awk"), flood).unwrap();
    stand_in_ssh(
        folder,
        &format!(
            "case \"$*\" in\n*watch*) echo $$ >> '{pids}'; exec awk -f '{awk}' ;;\n\
             *) echo '{{\"sessions\":[]}}' ;;\nesac\n",
            pids = pids.display(),
            awk = folder.join("flood.awk").display()
        ),
    )
}

/// A `slate serve` under test, killed when the test ends, even by a failed assertion (its flood
/// ends with it: the stand-in's writes then fail).
struct Serving(std::process::Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn alive(pid: &str) -> bool {
    // A killed child stays a zombie until its parent reaps it; that is gone too.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.contains(") Z "))
        .unwrap_or(false)
}

fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_remote_sending_sessions_without_end_is_capped_removed_at_once_and_never_delays_sigterm() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    let pids = temp.path().join("pids");
    let bin = temp.path().join("bin");
    flooding_ssh(&bin, &pids);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = home.join(".config/slate");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!("[server]\nlisten = \"127.0.0.1:{port}\"\n"),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = [("PATH", path.as_str())];
    cli(&home, &["remote", "add", "box", "box"], &env);
    let mut serve = Command::new(slate_bin());
    serve
        .arg("serve")
        .env_clear()
        .env("HOME", &home)
        .env("PATH", &path)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut serve = Serving(serve.spawn().unwrap());
    let serve = &mut serve.0;
    let mut said = String::new();
    BufReader::new(serve.stdout.take().unwrap())
        .read_line(&mut said)
        .unwrap();
    assert!(said.starts_with("listening on"), "{said}");

    // The sessions past the cap are left out and said; the flood costs a bounded amount.
    let listed = |home: &Path| -> Vec<serde_json::Value> {
        let said = json(&cli(home, &["remote", "list", "--json"], &env));
        said["remotes"].as_array().cloned().unwrap_or_default()
    };
    let report = wait_for("the cap reached", Duration::from_secs(60), || {
        listed(&home).into_iter().find(|report| {
            report["sessions"] == remote::view::SESSIONS_PER_REMOTE
                && report["error"]
                    .as_str()
                    .is_some_and(|error| error.contains("were left out"))
        })
    });
    assert_eq!(report["name"], "box", "{report}");
    let resident = resident_kib(serve.id());
    eprintln!("resident while flooded: {resident} KiB");
    assert!(resident < 512 * 1024, "{resident} KiB");

    // `slate remote remove` stops the link, and kills its `ssh`, while the flood goes on.
    let first = std::fs::read_to_string(&pids).unwrap();
    let first = first.lines().next().unwrap().to_string();
    assert!(alive(&first));
    let removing = Instant::now();
    cli(&home, &["remote", "remove", "box"], &env);
    wait_for("the link's ssh killed", Duration::from_secs(20), || {
        (!alive(&first)).then_some(())
    });
    eprintln!(
        "ssh killed {:?} after slate remote remove",
        removing.elapsed()
    );
    wait_for("the remote gone", Duration::from_secs(20), || {
        listed(&home).is_empty().then_some(())
    });

    // Flooded again, SIGTERM still ends it at once.
    cli(&home, &["remote", "add", "box", "box"], &env);
    wait_for("the flood again", Duration::from_secs(30), || {
        listed(&home)
            .into_iter()
            .find(|report| report["sessions"].as_u64().unwrap_or(0) > 100)
    });
    let terminating = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(serve.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = wait_for("slate serve to end", Duration::from_secs(10), || {
        serve.try_wait().unwrap()
    });
    eprintln!(
        "slate serve ended {:?} after SIGTERM",
        terminating.elapsed()
    );
    assert!(status.success(), "{status:?}");
    let pids = std::fs::read_to_string(&pids).unwrap();
    for pid in pids.lines() {
        assert!(!alive(pid), "ssh {pid} outlived slate serve");
    }
}

#[test]
fn a_remote_s_hostile_ids_are_refused_and_counted_as_problems() {
    let long = "s".repeat(5000);
    for id in [
        " ",
        "a b",
        long.as_str(),
        "a\u{202e}b",
        "a\u{1b}[2Jb",
        "s\u{200b}",
    ] {
        let line = serde_json::json!({"type": "session", "session": working("api", id)});
        let error = wire::parse_line(line.to_string().as_bytes()).unwrap_err();
        assert!(error.to_string().contains("session id"), "{id:?}: {error}");
        let removed = serde_json::json!({"type": "removed", "agent": "codex", "id": id});
        assert!(
            wire::parse_line(removed.to_string().as_bytes()).is_err(),
            "{id:?}"
        );
        let snapshot = snapshot_line(&[working("api", "good"), working("api", id)]);
        let Line::Snapshot {
            sessions, skipped, ..
        } = wire::parse_line(snapshot.as_bytes()).unwrap()
        else {
            panic!("not a snapshot");
        };
        assert_eq!(sessions.len(), 1, "{id:?}");
        assert_eq!(skipped, 1, "{id:?}");
    }
    // The view lists what reads, and counts what did not as a problem of that remote.
    let mut watched = Watched::new(&[entry("box", "box", &[])]);
    watched.report(
        "box",
        LinkEvent::Line(Line::Snapshot {
            sessions: vec![working("api", "good")],
            skipped: 1,
            version: None,
        }),
        1,
    );
    watched.report(
        "box",
        LinkEvent::Garbled("box: a line that cannot be read: the session id".into()),
        2,
    );
    let problems = watched.remotes.take_problems();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems.iter().all(|problem| problem.kind
        == slate::model::ProblemKind::RemoteDropped
        && problem.place == "remote box"));
    assert!(watched.remotes.take_problems().is_empty(), "taken once");
    assert_eq!(watched.remotes.sessions().count(), 1);
}

#[test]
fn a_remote_lists_at_most_its_cap_of_sessions_and_the_rest_is_counted() {
    use slate::remote::view::SESSIONS_PER_REMOTE;
    let mut watched = Watched::new(&[entry("box", "box", &[]), entry("pi", "pi", &[])]);
    let many: Vec<Session> = (0..SESSIONS_PER_REMOTE + 5)
        .map(|n| working("api", &format!("s{n}")))
        .collect();
    watched.snapshot("box", many, 1);
    assert_eq!(watched.remotes.sessions().count(), SESSIONS_PER_REMOTE);
    let problems = watched.remotes.take_problems();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0]
        .detail
        .starts_with("5 sessions from box were left out"));
    // A new session past the cap is left out and counted; a listed one still changes; another
    // machine has its own cap.
    let touched = watched.report(
        "box",
        LinkEvent::Line(Line::Session(Box::new(working("api", "new")))),
        2,
    );
    assert!(touched.is_empty());
    assert_eq!(watched.remotes.take_problems().len(), 1);
    let touched = watched.report(
        "box",
        LinkEvent::Line(Line::Session(Box::new(waiting("api", "s0")))),
        3,
    );
    assert_eq!(touched.len(), 1);
    watched.snapshot("pi", vec![working("api", "s0")], 4);
    assert_eq!(watched.remotes.sessions().count(), SESSIONS_PER_REMOTE + 1);
    let report = watched
        .remotes
        .reports()
        .into_iter()
        .find(|report| report.name.as_str() == "box")
        .unwrap();
    assert_eq!(report.sessions, SESSIONS_PER_REMOTE);
    assert!(report.error.unwrap().contains("at most 1000 are listed"));
}
