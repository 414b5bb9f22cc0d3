//! The command line with remotes when no Slate runs here: each remote asked once, a slow one
//! unreachable; `slate watch` ending when nobody reads it; and focusing a remote session in tmux,
//! which opens a local terminal attached to its pane.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::api::json;
use crate::sshd::{Account, Sshd};
use crate::util::{needs, waiting};

use super::{box_machine, cli, cli_output, slate_bin, wait_for, REMOTE_SESSION};

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
