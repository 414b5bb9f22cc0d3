//! A remote that misbehaves, played by a stand-in `ssh`: answer or error output without end is cut
//! off at its limit, hostile ids are refused and counted, at most `view::SESSIONS_PER_REMOTE`
//! sessions are listed, and a real `slate serve` flooded with sessions stays small, drops the
//! remote at `slate remote remove` and ends at SIGTERM.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use slate::model::Session;
use slate::remote::view::LinkEvent;
use slate::remote::wire::{self, Line};
use slate::remote::{self, LinkOptions, LinkTiming};

use crate::api::json;
use crate::util::{waiting, working};

use super::{cli, entry, fast, slate_bin, snapshot_line, stand_in_ssh, wait_for, Watched};

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
