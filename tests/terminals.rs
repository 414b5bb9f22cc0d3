//! Reading sensed terminals: where a process's pane is (from the environments recorded in real
//! tmux and kitty panes), the tools' outputs read (recorded tmux and kitty outputs, WezTerm's
//! documented JSON), a real private tmux server read for real (two panes in one call, a pane gone,
//! a server that does not answer), and kitty's remote-control socket spoken to by a stand-in that
//! answers as the recorded kitty did, or never.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

use slate::agents::screens::ScreenKind;
use slate::focus::strategy::{Environment, Tools};
use slate::model::{AgentKind, SessionKey, TerminalKind, Timestamp};
use slate::terminals::panes::{self, Address, ParseError};
use slate::terminals::{read, Job, Outcome};

use crate::util::{needs, Tmux};

pub(crate) fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(path)
}

fn text(path: &str) -> String {
    std::fs::read_to_string(fixture(path)).unwrap_or_else(|err| panic!("{path}: {err}"))
}

/// The `NAME=value` lines of a recorded environment, comments and commands left out.
fn environment(lines: &str) -> Environment {
    Environment::from_entries(
        lines
            .lines()
            .filter(|line| !line.starts_with('#') && !line.starts_with('$'))
            .filter(|line| line.contains('=')),
    )
}

fn tools() -> Tools {
    Tools {
        tmux: true,
        ..Tools::default()
    }
}

#[test]
fn a_pane_is_found_from_the_recorded_environments() {
    // The Codex process in the first pane of a `-L slate-term` server: its variables name the
    // pane, but a variable is inherited by whatever the pane's shell starts, so they alone make
    // no address; the pane proved by the process's terminal device does (`terminals::proof`).
    let recorded = text("terminals/tmux/env-inside.txt");
    let first = recorded.split("# -S").next().unwrap();
    let (view, address) = panes::locate(Some(&environment(first)), &tools(), None);
    assert_eq!(address, None);
    assert_eq!(
        (view.kind, view.sensed, view.note.as_deref()),
        (TerminalKind::Unknown, false, Some(panes::INHERITED_NOTE))
    );
    let proved = Address::Tmux {
        socket: "/tmp/tmux-0/slate-term".into(),
        pane: "%0".into(),
    };
    let (view, address) = panes::locate(Some(&environment(first)), &tools(), Some(&proved));
    assert_eq!(address, Some(proved.clone()));
    assert_eq!(
        (view.kind, view.pane.as_deref(), view.sensed),
        (TerminalKind::Tmux, Some("%0"), true)
    );
    // A process whose variables were cleared (`env -i`) is found by its terminal all the same.
    let (_, address) = panes::locate(Some(&Environment::default()), &tools(), Some(&proved));
    assert_eq!(address, Some(proved));
    // The Codex process in a kitty window with remote control on.
    let kitty = text("terminals/kitty/env-inside.txt");
    let (view, address) = panes::locate(Some(&environment(&kitty)), &Tools::default(), None);
    assert_eq!(
        address,
        Some(Address::Kitty {
            listen_on: "unix:<work>/kitty.sock".into(),
            window: "1".into()
        })
    );
    assert!(view.sensed);
    // A kitty without remote control sets no KITTY_LISTEN_ON: seen, not read, and said why.
    let off = text("terminals/kitty/remote-control-off.txt");
    let off_env = off.split("# KITTY_* in the environment").nth(1).unwrap();
    let (view, address) = panes::locate(Some(&environment(off_env)), &tools(), None);
    assert_eq!(address, None);
    assert_eq!(
        (view.kind, view.pane.as_deref(), view.sensed),
        (TerminalKind::Kitty, Some("1"), false)
    );
    assert_eq!(view.note.as_deref(), Some(panes::KITTY_OFF_NOTE));
}

#[test]
fn every_other_terminal_is_said_as_it_is() {
    let env = |entries: &[&str]| Environment::from_entries(entries.iter().copied());
    // WezTerm, with and without its socket variable.
    let wezterm = Tools {
        wezterm: true,
        ..Tools::default()
    };
    let (view, address) = panes::locate(
        Some(&env(&[
            "WEZTERM_PANE=3",
            "WEZTERM_UNIX_SOCKET=/run/user/1/wezterm/sock",
        ])),
        &wezterm,
        None,
    );
    assert_eq!(
        address,
        Some(Address::Wezterm {
            socket: Some("/run/user/1/wezterm/sock".into()),
            pane: "3".into()
        })
    );
    assert_eq!(view.kind, TerminalKind::Wezterm);
    let (view, address) = panes::locate(Some(&env(&["WEZTERM_PANE=3"])), &Tools::default(), None);
    assert_eq!((view.sensed, address), (false, None), "no wezterm program");
    // tmux inside kitty: the pane the process draws in is tmux's, proved by its terminal.
    let inside_kitty = env(&[
        "TMUX=/tmp/tmux-1/default,7,0",
        "TMUX_PANE=%4",
        "KITTY_WINDOW_ID=2",
        "KITTY_LISTEN_ON=unix:/tmp/k",
    ]);
    let pane = Address::Tmux {
        socket: "/tmp/tmux-1/default".into(),
        pane: "%4".into(),
    };
    let (view, _) = panes::locate(Some(&inside_kitty), &tools(), Some(&pane));
    assert_eq!(
        (view.kind, view.pane.as_deref()),
        (TerminalKind::Tmux, Some("%4"))
    );
    // Started from that tmux pane into a kitty window (`kitty codex`): its tmux variables are
    // inherited and no pane is proved, so the kitty window is the candidate (which `terminals`
    // confirms by its terminal before reading it).
    let (view, address) = panes::locate(Some(&inside_kitty), &tools(), None);
    assert_eq!(view.kind, TerminalKind::Kitty);
    assert_eq!(
        address,
        Some(Address::Kitty {
            listen_on: "unix:/tmp/k".into(),
            window: "2".into()
        })
    );
    // tmux variables without the tool, and without a proved pane.
    let (view, address) = panes::locate(
        Some(&env(&["TMUX=/tmp/tmux-1/default,7,0", "TMUX_PANE=%4"])),
        &Tools::default(),
        None,
    );
    assert!(!view.sensed && address.is_none() && view.note.is_some());
    let (view, _) = panes::locate(
        Some(&env(&["TMUX=/tmp/tmux-1/default,7,0"])),
        &tools(),
        None,
    );
    assert!(!view.sensed);
    // Ids that are not ids are not put on a command line.
    for entries in [
        ["TMUX=/tmp/tmux-1/default,7,0", "TMUX_PANE=%4;"],
        ["TMUX=/tmp/tmux-1/default,7,0", "TMUX_PANE=%4 kill-server"],
        ["WEZTERM_PANE=3;", "TERM=xterm"],
    ] {
        let (view, address) = panes::locate(
            Some(&env(&entries)),
            &Tools {
                tmux: true,
                wezterm: true,
                ..Tools::default()
            },
            None,
        );
        assert_eq!((view.sensed, address), (false, None), "{entries:?}");
    }
    let (view, _) = panes::locate(Some(&env(&["KITTY_WINDOW_ID=1 2"])), &tools(), None);
    assert_eq!(view.kind, TerminalKind::Plain);
    // A plain terminal, and a process whose environment could not be read.
    let (view, address) = panes::locate(Some(&env(&["TERM=xterm"])), &tools(), None);
    assert_eq!((view.kind, address), (TerminalKind::Plain, None));
    assert_eq!(view.note.as_deref(), Some(panes::PLAIN_NOTE));
    assert!(view
        .describe()
        .contains("start it in tmux or under `slate run`"));
    let (view, _) = panes::locate(None, &tools(), None);
    assert_eq!(view.kind, TerminalKind::Unknown);
}

#[test]
fn a_tmux_read_is_one_call_and_reads_back_pane_by_pane() {
    let line = panes::tmux_read(
        "/tmp/tmux-0/s",
        &[("%1".to_string(), false), ("%2".to_string(), true)],
    );
    assert_eq!(line.program, "tmux");
    assert_eq!(
        line.args.join(" "),
        "-S /tmp/tmux-0/s display-message -p -t %1 #{pane_id} #{pane_height} #{pane_title} ; \
         capture-pane -p -t %1 ; display-message -p -t %2 #{pane_id} #{pane_height} #{pane_title} ; \
         capture-pane -p -e -t %2"
    );
    let panes_read = ["%1".to_string(), "%2".to_string()];
    let output = "%1 2 a title with  spaces\nline one\nline two\n%2 1 \nonly\n";
    let read = panes::parse_tmux_read(output, &panes_read);
    assert_eq!(
        read[0].1,
        Ok(panes::PaneText {
            title: Some("a title with  spaces".into()),
            screen: "line one\nline two\n".into()
        })
    );
    assert_eq!(
        read[1].1,
        Ok(panes::PaneText {
            title: None,
            screen: "only\n".into()
        })
    );
    // tmux 3.3 prints an empty id for a pane it no longer has.
    let gone = panes::parse_tmux_read(" 40 \n", &panes_read[..1]);
    assert_eq!(gone[0].1, Err(ParseError::Gone("%1".into())));
    // A cut answer, or one that is not tmux's, reads as no pane at all.
    for bad in [
        "",
        "%1 3 t\nonly one line\n",
        "%1 many t\n",
        "%1 99999999 t\n",
    ] {
        let read = panes::parse_tmux_read(bad, &panes_read);
        assert!(read.iter().all(|(_, pane)| pane.is_err()), "{bad:?}");
        assert_eq!(read.len(), 2, "{bad:?}");
    }
}

/// The bytes of a tmux call's command as its client sends them: every argument after the
/// socket's, each with its NUL.
fn command_bytes(line: &slate::focus::strategy::CommandLine) -> usize {
    line.args[2..].iter().map(|arg| arg.len() + 1).sum()
}

// See: issue 20, item 6 (past about 150 panes the one combined read was "command too long").
#[test]
fn panes_past_tmuxs_command_length_are_read_in_batches_that_fit() {
    let most = panes::TMUX_COMMAND_MOST;
    let all: Vec<(String, bool)> = (0..400).map(|n| (format!("%{n}"), n % 3 == 0)).collect();
    let batches = panes::tmux_batches(&all, most);
    // Every pane once, in order, in a few calls.
    let covered: Vec<usize> = batches.iter().flat_map(|batch| batch.clone()).collect();
    assert_eq!(covered, (0..400).collect::<Vec<_>>());
    assert!(batches.len() <= 4, "{} calls", batches.len());
    for batch in &batches {
        let line = panes::tmux_read("/tmp/tmux-0/s", &all[batch.clone()]);
        // Under the limit, and far under what tmux 3.3a refuses (16,365 bytes).
        assert!(command_bytes(&line) <= most, "{batch:?}");
        assert!(most < 16_365);
    }
    // Each call but the last is as full as it can be: one more pane would not fit.
    for pair in batches.windows(2) {
        let grown = panes::tmux_read("/tmp/tmux-0/s", &all[pair[0].start..pair[0].end + 1]);
        assert!(
            command_bytes(&grown) > most,
            "{:?} could hold more",
            pair[0]
        );
    }
    assert_eq!(panes::tmux_batches(&all[..2], most), vec![0..2]);
    assert!(panes::tmux_batches(&[], most).is_empty());
    // A pane longer than the limit still gets a call of its own.
    assert_eq!(panes::tmux_batches(&all[..3], 10), vec![0..1, 1..2, 2..3]);
}

#[test]
fn kittys_answers_read_as_recorded() {
    let titles = panes::parse_kitty_titles(&text("terminals/kitty/ls-permission.json")).unwrap();
    assert_eq!(
        titles.get("1").map(String::as_str),
        Some("[ . ] Action Required | slate-fixture run: touch kitty-probe.txt | acme-api")
    );
    assert_eq!(titles.get("2").map(String::as_str), Some("a plain shell"));
    assert!(panes::parse_kitty_titles("not json").is_err());
    assert!(panes::parse_kitty_titles("{}").is_err());
    let frame = panes::kitty_frame("ls", serde_json::json!({}));
    assert!(frame.starts_with(b"\x1bP@kitty-cmd{"));
    assert!(frame.ends_with(b"\x1b\\"));
    let command: serde_json::Value =
        serde_json::from_slice(&frame[12..frame.len() - 2]).expect("the command is JSON");
    assert_eq!(command["cmd"], "ls");
    let answer = |body: &str| format!("\x1bP@kitty-cmd{body}\x1b\\").into_bytes();
    assert_eq!(
        panes::parse_kitty_frame(&answer(r#"{"ok": true, "data": "text"}"#)),
        Ok("text".to_string())
    );
    assert_eq!(
        panes::parse_kitty_frame(&answer(
            r#"{"ok": false, "error": "No matching windows for expression: id:9"}"#
        )),
        Err(ParseError::Refused(
            "No matching windows for expression: id:9".into()
        ))
    );
    assert!(panes::parse_kitty_frame(b"{\"ok\": true}").is_err());
    assert!(panes::parse_kitty_frame(&answer("{not json")).is_err());
}

#[test]
fn wezterm_lists_read_from_their_documented_format() {
    let titles = panes::parse_wezterm_titles(&text("sensed/wezterm/list.json")).unwrap();
    let expected: BTreeMap<String, String> = [
        (
            "0".to_string(),
            "[ . ] Action Required | slate-fixture run: touch x.txt | acme-api".to_string(),
        ),
        ("3".to_string(), "OC | Slate fixture session".to_string()),
    ]
    .into();
    assert_eq!(titles, expected);
    assert!(panes::parse_wezterm_titles("[").is_err());
    let line = panes::wezterm_get_text(Some("/run/w"), "3", false);
    assert_eq!(
        (line.program.as_str(), line.args.join(" ")),
        (
            "wezterm",
            "cli --no-auto-start get-text --pane-id 3".to_string()
        )
    );
    assert_eq!(
        line.env,
        vec![("WEZTERM_UNIX_SOCKET".to_string(), "/run/w".to_string())]
    );
    let line = panes::wezterm_list(None);
    assert_eq!(
        line.args.join(" "),
        "cli --no-auto-start list --format json"
    );
    assert!(line.env.is_empty());
}

fn clock() -> Timestamp {
    Timestamp::from_millis(1_800_000_000_000)
}

fn job(agent: AgentKind, id: &str, address: Address) -> Job {
    Job {
        key: SessionKey::new(agent, id),
        address,
    }
}

/// The screen kind and summary of each outcome, by session id; a failure as `Err(why)`.
fn readings(
    outcomes: Vec<Outcome>,
) -> BTreeMap<String, Result<(ScreenKind, Option<String>), String>> {
    outcomes
        .into_iter()
        .map(|outcome| match outcome {
            Outcome::Read { key, sensed, .. } => {
                assert_eq!(sensed.at, clock());
                (
                    key.id.as_str().to_string(),
                    Ok((sensed.screen.kind, sensed.screen.summary)),
                )
            }
            Outcome::Failed { key, why, .. } => (key.id.as_str().to_string(), Err(why)),
        })
        .collect()
}

#[test]
#[ignore = "slow tier: needs tmux"]
fn real_tmux_panes_are_read_in_one_call_and_a_gone_pane_blinds_no_other() {
    needs(&["tmux"]);
    let dialog = fixture("screens/codex/0.171.0/permission-touch.txt");
    let working = fixture("screens/opencode/1.18.33/working-sleep.txt");
    let tmux = Tmux::start_sized(
        &format!("cat '{}'; exec sleep 600", dialog.display()),
        160,
        45,
    );
    tmux.run(&[
        "new-window",
        "-d",
        &format!("cat '{}'; exec sleep 600", working.display()),
    ]);
    tmux.wait_for("both screens", |t| {
        let second = t.run(&["capture-pane", "-p", "-t", "%1"]);
        t.screen().contains("Press enter to confirm") && second.contains("esc interrupt")
    });
    let socket = tmux
        .run(&["display", "-p", "#{socket_path}"])
        .trim()
        .to_string();
    let at = |pane: &str| Address::Tmux {
        socket: socket.clone(),
        pane: pane.to_string(),
    };
    let outcomes = read(
        vec![
            job(AgentKind::CODEX, "codex-1", at("%0")),
            job(AgentKind::OPENCODE, "opencode-1", at("%1")),
            job(AgentKind::CODEX, "gone-1", at("%9")),
        ],
        clock,
    );
    let read = readings(outcomes);
    assert_eq!(
        read["codex-1"],
        Ok((ScreenKind::Permission, Some("Run: touch x.txt".to_string())))
    );
    assert_eq!(read["opencode-1"], Ok((ScreenKind::Working, None)));
    assert!(read["gone-1"].is_err(), "{:?}", read["gone-1"]);
}

#[test]
#[ignore = "slow tier: needs tmux"]
fn a_tmux_server_that_does_not_answer_fails_the_read_instead_of_hanging() {
    needs(&["tmux"]);
    let tmux = Tmux::start("exec sleep 600");
    let server: u32 = tmux
        .run(&["display", "-p", "#{pid}"])
        .trim()
        .parse()
        .expect("the server's pid");
    let socket = tmux
        .run(&["display", "-p", "#{socket_path}"])
        .trim()
        .to_string();
    let signal = |name: &str| {
        std::process::Command::new("kill")
            .args([name, &server.to_string()])
            .status()
            .expect("kill runs");
    };
    signal("-STOP");
    let outcomes = read(
        vec![job(
            AgentKind::CODEX,
            "stuck-1",
            Address::Tmux {
                socket,
                pane: "%0".into(),
            },
        )],
        clock,
    );
    signal("-CONT");
    let read = readings(outcomes);
    let why = read["stuck-1"]
        .clone()
        .expect_err("a stopped server reads nothing");
    assert!(why.contains("no answer within 500 ms"), "{why}");
}

/// A stand-in for kitty's remote-control socket: it answers `ls` and `get-text` with what the
/// real kitty answered (recorded in `fixtures/terminals/kitty/`), or, with `silent`, reads the
/// command and never answers.
fn fake_kitty(socket: &Path, silent: bool) {
    let listener = UnixListener::bind(socket).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut command = Vec::new();
            let mut byte = [0u8; 1];
            while !command.ends_with(b"\x1b\\") {
                if stream.read(&mut byte).unwrap_or(0) == 0 {
                    break;
                }
                command.push(byte[0]);
            }
            if silent {
                std::thread::sleep(std::time::Duration::from_secs(5));
                continue;
            }
            let command: serde_json::Value =
                serde_json::from_slice(&command[12..command.len() - 2]).unwrap();
            let data = match command["cmd"].as_str() {
                Some("ls") => text("terminals/kitty/ls-permission.json"),
                Some("get-text") => {
                    assert_eq!(command["payload"]["match"], "id:1");
                    assert_eq!(command["payload"]["extent"], "screen");
                    text("terminals/kitty/get-text-permission.txt")
                }
                other => panic!("unexpected command {other:?}"),
            };
            let answer = serde_json::json!({ "ok": true, "data": data });
            let _ = stream.write_all(format!("\x1bP@kitty-cmd{answer}\x1b\\").as_bytes());
        }
    });
}

#[test]
fn kitty_is_read_over_its_socket_and_a_silent_one_fails_in_time() {
    let temp = tempfile::tempdir().unwrap();
    let answering = temp.path().join("kitty.sock");
    let silent = temp.path().join("silent.sock");
    fake_kitty(&answering, false);
    fake_kitty(&silent, true);
    let at = |socket: &Path, window: &str| Address::Kitty {
        listen_on: format!("unix:{}", socket.display()),
        window: window.to_string(),
    };
    let read = readings(read(
        vec![
            job(AgentKind::CODEX, "kitty-1", at(&answering, "1")),
            job(AgentKind::CODEX, "kitty-7", at(&answering, "7")),
            job(AgentKind::CODEX, "silent-1", at(&silent, "1")),
            job(
                AgentKind::CODEX,
                "none-1",
                at(&temp.path().join("nothing.sock"), "1"),
            ),
        ],
        clock,
    ));
    // The title says a dialog waits, and the screen is read too: its dialog is what an answer
    // checks against.
    assert_eq!(
        read["kitty-1"],
        Ok((
            ScreenKind::Permission,
            Some("Run: touch kitty-probe.txt".to_string())
        ))
    );
    assert!(read["kitty-7"]
        .clone()
        .unwrap_err()
        .contains("window 7 is gone"));
    assert!(
        read["silent-1"]
            .clone()
            .unwrap_err()
            .contains("did not answer"),
        "{:?}",
        read["silent-1"]
    );
    assert!(read["none-1"]
        .clone()
        .unwrap_err()
        .contains("no kitty listens"));
}

#[test]
fn kittys_screen_is_read_when_its_title_does_not_decide() {
    let temp = tempfile::tempdir().unwrap();
    let socket = temp.path().join("kitty.sock");
    fake_kitty(&socket, false);
    // OpenCode's title never says a dialog waits, so its screen is read; here it is the Codex
    // screen kitty recorded, which OpenCode's grammar does not know.
    let codex_screen = read(
        vec![job(
            AgentKind::OPENCODE,
            "opencode-1",
            Address::Kitty {
                listen_on: format!("unix:{}", socket.display()),
                window: "1".into(),
            },
        )],
        clock,
    );
    assert_eq!(
        readings(codex_screen)["opencode-1"],
        Ok((ScreenKind::Unknown, None))
    );
    // The recorded kitty screen itself reads as Codex's dialog.
    let screen = text("terminals/kitty/get-text-permission.txt");
    let reading = slate::agents::screens::read_screen(AgentKind::CODEX, &screen);
    assert_eq!(
        reading.dialog().map(|dialog| dialog.summary.as_str()),
        Some("Run: touch kitty-probe.txt")
    );
}

/// A Codex session in `folder`, in the middle of an escalated `exec_command` that waits for
/// approval, written at `at` the way Codex 0.171.0 writes its rollout.
fn codex_rollout(home: &Path, folder: &Path, at: Timestamp) {
    codex_rollout_with_id(home, folder, at, "01a228e1-7d37-7ed1-9043-e56f4039d0ff");
}

pub(crate) fn codex_rollout_with_id(home: &Path, folder: &Path, at: Timestamp, id: &str) {
    let day = home.join(".codex/sessions/2026/12/01");
    std::fs::create_dir_all(&day).unwrap();
    let folder = folder.display();
    let lines = [
        format!(
            r#"{{"timestamp":"{at}","type":"session_meta","payload":{{"id":"{id}","timestamp":"{at}","cwd":"{folder}","originator":"codex_cli_rs","cli_version":"0.171.0"}}}}"#
        ),
        format!(
            r#"{{"timestamp":"{at}","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"create a probe file"}}]}}}}"#
        ),
        format!(
            r#"{{"timestamp":"{at}","type":"response_item","payload":{{"type":"function_call","name":"exec_command","arguments":"{{\"cmd\": \"touch x.txt\", \"sandbox_permissions\": \"require_escalated\"}}","call_id":"call_1"}}}}"#
        ),
    ];
    std::fs::write(
        day.join(format!("rollout-2026-12-01T00-00-00-{id}.jsonl")),
        lines.join("\n") + "\n",
    )
    .unwrap();
}

#[test]
#[ignore = "slow tier: needs tmux"]
fn the_live_service_sees_a_dialog_come_and_go_in_a_tmux_pane() {
    needs(&["tmux"]);
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    let folder = temp.path().join("acme-api");
    std::fs::create_dir_all(&folder).unwrap();
    let folder = std::fs::canonicalize(&folder).unwrap();
    // A stand-in for Codex: a program named `codex` in the project's folder, in a tmux pane,
    // that shows whatever screen file it is given.
    let viewer = temp.path().join("viewer.sh");
    std::fs::write(
        &viewer,
        "while read -r f; do printf '\\033[H\\033[2J'; cat \"$f\"; done\n",
    )
    .unwrap();
    let tmux = Tmux::start_sized(
        &format!(
            "bash -c 'cd \"{}\" && exec -a codex bash \"{}\"'",
            folder.display(),
            viewer.display()
        ),
        160,
        45,
    );
    let show = |screen: &str| {
        tmux.run(&[
            "send-keys",
            "-t",
            "%0",
            &fixture(screen).display().to_string(),
            "Enter",
        ]);
    };
    codex_rollout(&home, &folder, slate::live::system_clock());
    let env = slate::sources::roots::Env {
        home: Some(home.clone()),
        ..slate::sources::roots::Env::default()
    };
    let (handle, thread) = slate::live::start(slate::live::Service {
        options: slate::engine::Options::from_env(env.clone()),
        timing: slate::live::Timing::default(),
        store: None,
        clock: slate::live::system_clock,
        settings: Default::default(),
        remotes: None,
    });
    let ours = |handle: &slate::live::Handle| {
        handle
            .live_sessions()
            .into_iter()
            .find(|session| session.folder.as_deref() == Some(&*folder.to_string_lossy()))
    };
    let wait = |what: &str, until: &dyn Fn(&slate::model::Session) -> bool| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let session = ours(&handle);
            if session.as_ref().is_some_and(until) {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "waited 20 s for {what}; the session reads {session:#?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    };
    let terminal_is = |session: &slate::model::Session| {
        session.terminal.as_ref().is_some_and(|terminal| {
            terminal.kind == TerminalKind::Tmux
                && terminal.pane.as_deref() == Some("%0")
                && terminal.sensed
        })
    };
    wait("the session in its pane, working", &|session| {
        terminal_is(session) && session.status == slate::model::Status::Working
    });
    show("screens/codex/0.171.0/permission-touch.txt");
    wait("the dialog to read Needs you", &|session| {
        session.session_state.reason.code == slate::model::ReasonCode::PermissionPrompt
            && session.session_state.reason.text == "Asks permission: Run: touch x.txt"
    });
    // Only the dialog (its kind, summary and option labels) is kept: nothing else of the screen
    // is in the session or its evidence, as the API serves them.
    let id = ours(&handle).unwrap().id.as_str().to_string();
    let served = serde_json::to_string(&handle.session(&id).expect("the session")).unwrap();
    assert!(served.contains("Run: touch x.txt"), "{served}");
    for secret in [
        "Would you like to run",
        "Create a probe file outside the sandbox",
        "Press enter to confirm",
    ] {
        assert!(!served.contains(secret), "{secret:?} is served: {served}");
    }
    // The one-shot commands read the same pane once.
    let mut engine = slate::engine::Engine::new(slate::engine::Options::from_env(env));
    let now = slate::live::system_clock();
    engine.refresh(now);
    slate::engine::sense_once(&mut engine, now, slate::live::system_clock);
    let once = engine
        .sessions()
        .into_iter()
        .find(|session| session.folder.as_deref() == Some(&*folder.to_string_lossy()))
        .expect("the one-shot read finds the session");
    assert_eq!(
        once.session_state.reason.code,
        slate::model::ReasonCode::PermissionPrompt
    );
    // `slate doctor` says how each live session's terminal is seen, or why it is not: a second
    // stand-in, outside any multiplexer, is in a plain terminal.
    let plain = temp.path().join("plain-api");
    std::fs::create_dir_all(&plain).unwrap();
    let plain = std::fs::canonicalize(&plain).unwrap();
    let second_home = temp.path().join("home");
    codex_rollout_with_id(
        &second_home,
        &plain,
        slate::live::system_clock(),
        "01a228e1-7d37-7ed1-9043-e56f4039d0aa",
    );
    let spawned = std::process::Command::new("env")
        .args(["-i", "PATH=/usr/bin:/bin", "bash", "-c"])
        .arg(format!(
            "cd '{}' && (exec -a codex sleep 600 >/dev/null 2>&1 &) ; sleep 0.2; pgrep -n -f '^codex 600'",
            plain.display()
        ))
        .output()
        .unwrap();
    let plain_pid = String::from_utf8_lossy(&spawned.stdout).trim().to_string();
    let doctor = std::process::Command::new(env!("CARGO_BIN_EXE_slate"))
        .arg("doctor")
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", temp.path().join("config"))
        .env("XDG_DATA_HOME", temp.path().join("data"))
        .env("SLATE_STANDALONE", "1")
        .env_remove("CODEX_HOME")
        .output()
        .unwrap();
    let _ = std::process::Command::new("kill").arg(&plain_pid).status();
    let doctor = String::from_utf8_lossy(&doctor.stdout).into_owned();
    assert!(
        doctor.contains("terminal: tmux pane %0, read by Slate"),
        "{doctor}"
    );
    assert!(
        doctor.contains(
            "terminal: plain terminal: start it in tmux or under `slate run` to see its prompts"
        ),
        "{doctor}"
    );
    // Approved: the screen shows the command at work.
    show("screens/codex/0.171.0/working-sleep.txt");
    wait("the approved command to read Working", &|session| {
        session.status == slate::model::Status::Working
    });
    handle.shutdown();
    thread.join().unwrap();
}

/// A Unix listener at `path` that never accepts, with its listen queue full: a hung kitty or a
/// stopped `slate run`. The listener and the queued connections live as long as what it returns.
fn full_listener(path: &Path) -> Vec<std::os::fd::OwnedFd> {
    use nix::errno::Errno;
    use nix::sys::socket::{self, AddressFamily, Backlog, SockFlag, SockType, UnixAddr};
    use std::os::fd::AsRawFd;

    let address = UnixAddr::new(path).unwrap();
    let open = |flags| socket::socket(AddressFamily::Unix, SockType::Stream, flags, None).unwrap();
    let listener = open(SockFlag::SOCK_CLOEXEC);
    socket::bind(listener.as_raw_fd(), &address).unwrap();
    socket::listen(&listener, Backlog::new(0).unwrap()).unwrap();
    let mut held = vec![listener];
    // Linux queues backlog + 1 connections; the next one would block.
    for _ in 0..64 {
        let client = open(SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK);
        match socket::connect(client.as_raw_fd(), &address) {
            Ok(()) => held.push(client),
            Err(Errno::EAGAIN) => return held,
            Err(error) => panic!("filling the queue failed: {error}"),
        }
    }
    panic!("the listen queue never filled");
}

/// Runs `work` on a thread of its own and gives back what it returned, failing the test when it
/// has not returned after 10 s (the limit under test is half a second; this only keeps a hang
/// from hanging the test).
fn returns<T: Send + 'static>(what: &str, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(work());
    });
    receiver
        .recv_timeout(std::time::Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("{what} did not return within 10 s"))
}

// See: issue 20, item 4 (a socket that accepts no connection froze every terminal read and every
// answer: connecting had no deadline).
#[test]
fn a_socket_that_accepts_no_connection_fails_reads_and_keys_instead_of_hanging() {
    use slate::agents::keys::Key;

    use std::os::unix::fs::PermissionsExt;

    let temp = tempfile::tempdir().unwrap();
    // A hosted terminal's socket is followed only in a private folder of the user's.
    std::fs::set_permissions(temp.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let kitty = temp.path().join("kitty.sock");
    let hosted = temp.path().join("4242.sock");
    let _kitty_queue = full_listener(&kitty);
    let _hosted_queue = full_listener(&hosted);
    let kitty_at = Address::Kitty {
        listen_on: format!("unix:{}", kitty.display()),
        window: "1".into(),
    };
    let hosted_at = Address::Hosted {
        socket: hosted.display().to_string(),
    };
    let jobs = vec![
        job(AgentKind::CODEX, "kitty-1", kitty_at.clone()),
        job(AgentKind::CODEX, "hosted-1", hosted_at.clone()),
    ];
    let read = readings(returns("the read", move || read(jobs, clock)));
    for id in ["kitty-1", "hosted-1"] {
        let why = read[id].clone().expect_err("nothing is read");
        assert!(
            why.contains("accepted no connection within 500 ms"),
            "{id}: {why}"
        );
    }
    // The one read an answer checks against, and the keys, give up the same way.
    let address = kitty_at.clone();
    let screen = returns("the screen read", move || {
        slate::terminals::screen_now(&address, AgentKind::CODEX)
    });
    assert!(screen.unwrap_err().contains("accepted no connection"));
    for address in [kitty_at, hosted_at] {
        let typed = returns("the keys", move || {
            slate::terminals::typing::send(&address, &[Key::Digit(1)])
        });
        let why = typed.expect_err("no key is typed");
        assert!(why.contains("accepted no connection"), "{why}");
    }
}

/// Sends `signal` (`-STOP`, `-CONT`) to process `pid`.
fn signal(name: &str, pid: u32) {
    std::process::Command::new("kill")
        .args([name, &pid.to_string()])
        .status()
        .expect("kill runs");
}

/// Keeps a stopped tmux server going again when the test ends however it ends, so its
/// `kill-server` is answered.
struct Stopped(u32);

impl Drop for Stopped {
    fn drop(&mut self) {
        signal("-CONT", self.0);
    }
}

// See: issue 20, item 5 (a tmux server stopped with SIGSTOP made the loop wake 12,454 times in
// 10 s: while a read ran over its second, the next read was due at once, over and over).
#[test]
#[ignore = "slow tier: needs tmux"]
fn a_stopped_tmux_server_never_makes_the_loop_spin() {
    needs(&["tmux"]);
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    let mut folders = Vec::new();
    let tmux = Tmux::start("exec sleep 600");
    // Three stand-ins for Codex, each a program named `codex` in its project's folder in a pane of
    // its own, each in an open tool call, so each pane is read every second.
    for index in 0..3 {
        let folder = temp.path().join(format!("project-{index}"));
        std::fs::create_dir_all(&folder).unwrap();
        let folder = std::fs::canonicalize(&folder).unwrap();
        tmux.run(&[
            "new-window",
            "-d",
            &format!(
                "bash -c 'cd \"{}\" && exec -a codex sleep 600'",
                folder.display()
            ),
        ]);
        folders.push(folder);
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    for (index, folder) in folders.iter().enumerate() {
        codex_rollout_with_id(
            &home,
            folder,
            slate::live::system_clock(),
            &format!("01a228e1-7d37-7ed1-9043-e56f4039d0{index:02}"),
        );
    }
    let server: u32 = tmux
        .run(&["display", "-p", "#{pid}"])
        .trim()
        .parse()
        .expect("the server's pid");
    let env = slate::sources::roots::Env {
        home: Some(home.clone()),
        ..slate::sources::roots::Env::default()
    };
    let (handle, thread) = slate::live::start(slate::live::Service {
        options: slate::engine::Options::from_env(env),
        timing: slate::live::Timing::default(),
        store: None,
        clock: slate::live::system_clock,
        settings: Default::default(),
        remotes: None,
    });
    let sensed = |handle: &slate::live::Handle| {
        handle
            .live_sessions()
            .iter()
            .filter(|session| {
                session
                    .terminal
                    .as_ref()
                    .is_some_and(|terminal| terminal.kind == TerminalKind::Tmux && terminal.sensed)
            })
            .count()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while sensed(&handle) < folders.len() {
        assert!(
            std::time::Instant::now() < deadline,
            "waited 20 s for the three panes to be read: {:#?}",
            handle.live_sessions()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let before = handle.health().wakeups;
    signal("-STOP", server);
    let stopped = Stopped(server);
    std::thread::sleep(std::time::Duration::from_secs(5));
    let woken = handle.health().wakeups - before;
    drop(stopped);
    handle.shutdown();
    thread.join().unwrap();
    // Each wake-up is a process scan, a pane timer (at most once a second), or a reading handed
    // back; a spinning loop wakes thousands of times.
    assert!(woken <= 50, "the loop woke {woken} times in 5 s");
}

/// Set in the copy of the test binary that [`many_tmux_panes_are_read_in_a_handful_of_calls`]
/// starts: the socket of the tmux server whose panes it reads.
const MANY_PANES: &str = "SLATE_TEST_MANY_PANES";

// See: issue 20, item 6 (past about 150 panes the one combined read was "command too long", and
// every pane was read by a tmux process of its own).
#[test]
#[ignore = "slow tier: needs tmux"]
fn many_tmux_panes_are_read_in_a_handful_of_calls() {
    needs(&["tmux"]);
    if let Ok(socket) = std::env::var(MANY_PANES) {
        // The copy started below: read every pane of the server, through the counting `tmux`.
        let panes = std::process::Command::new("tmux")
            .args(["-S", &socket, "list-panes", "-a", "-F", "#{pane_id}"])
            .output()
            .unwrap();
        let jobs: Vec<Job> = String::from_utf8_lossy(&panes.stdout)
            .lines()
            .map(|pane| {
                let address = Address::Tmux {
                    socket: socket.clone(),
                    pane: pane.to_string(),
                };
                job(AgentKind::CODEX, &format!("pane-{pane}"), address)
            })
            .collect();
        assert!(jobs.len() > 200, "{} panes", jobs.len());
        for outcome in read(jobs, clock) {
            assert!(matches!(outcome, Outcome::Read { .. }), "{outcome:?}");
        }
        return;
    }
    let temp = tempfile::tempdir().unwrap();
    let tmux = Tmux::start("seq 1 5; exec sleep 600");
    for _ in 0..4 {
        let mut windows = Vec::new();
        for _ in 0..50 {
            windows.extend(["new-window", "-d", "seq 1 5; exec sleep 600", ";"]);
        }
        tmux.run(&windows);
    }
    let socket = tmux
        .run(&["display", "-p", "#{socket_path}"])
        .trim()
        .to_string();
    // A `tmux` first on the PATH that writes down each call, then runs the real one.
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|folder| folder.join("tmux"))
        .find(|path| path.is_file())
        .expect("tmux on the PATH");
    let bin = temp.path().join("bin");
    let log = temp.path().join("calls.log");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(
        bin.join("tmux"),
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["+x", &bin.join("tmux").display().to_string()])
        .status()
        .unwrap();
    let mut path = vec![bin];
    path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap()));
    let copy = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "terminals::many_tmux_panes_are_read_in_a_handful_of_calls",
            "--exact",
            // The test is in the slow tier (ignored by default): the copy runs it all the same.
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(MANY_PANES, &socket)
        .env("PATH", std::env::join_paths(path).unwrap())
        .output()
        .unwrap();
    assert!(
        copy.status.success(),
        "the read failed:\n{}{}",
        String::from_utf8_lossy(&copy.stdout),
        String::from_utf8_lossy(&copy.stderr)
    );
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    let reads = calls
        .lines()
        .filter(|call| call.contains("capture-pane"))
        .count();
    assert!(
        (1..=3).contains(&reads),
        "201 panes took {reads} tmux calls"
    );
}

// See: issue 20, item 4 ("done when": with a kitty socket that accepts nothing, the one-shot read
// and the live loop go on, and the loop does not wake more for it).
#[test]
fn a_kitty_that_accepts_nothing_stalls_neither_the_loop_nor_the_one_shot_read() {
    use std::os::unix::fs::PermissionsExt;

    let temp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(temp.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let home = temp.path().join("home");
    let socket = temp.path().join("kitty.sock");
    let _queue = full_listener(&socket);
    let folder = temp.path().join("project");
    std::fs::create_dir_all(&folder).unwrap();
    let folder = std::fs::canonicalize(&folder).unwrap();
    // A stand-in for Codex in a window of that kitty, as its environment says.
    let mut codex = std::process::Command::new("env")
        .args([
            "-i",
            "PATH=/usr/bin:/bin",
            "KITTY_WINDOW_ID=1",
            &format!("KITTY_LISTEN_ON=unix:{}", socket.display()),
            "bash",
            "-c",
            &format!("cd '{}' && exec -a codex sleep 600", folder.display()),
        ])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    codex_rollout(&home, &folder, slate::live::system_clock());
    let env = slate::sources::roots::Env {
        home: Some(home.clone()),
        ..slate::sources::roots::Env::default()
    };
    let options = slate::engine::Options::from_env(env);
    // The one-shot read gives up on the window and says why.
    let once = options.clone();
    let note = returns("the one-shot read", move || {
        let mut engine = slate::engine::Engine::new(once);
        let now = slate::live::system_clock();
        engine.refresh(now);
        slate::engine::sense_once(&mut engine, now, slate::live::system_clock);
        engine
            .sessions()
            .into_iter()
            .find_map(|session| session.terminal?.note)
    });
    let note = note.expect("the session's terminal is said");
    assert!(note.contains("accepted no connection"), "{note}");
    let (handle, thread) = slate::live::start(slate::live::Service {
        options,
        timing: slate::live::Timing::default(),
        store: None,
        clock: slate::live::system_clock,
        settings: Default::default(),
        remotes: None,
    });
    let said = |handle: &slate::live::Handle| {
        handle.live_sessions().into_iter().find_map(|session| {
            let terminal = session.terminal?;
            (terminal.kind == TerminalKind::Kitty)
                .then_some(terminal.note)
                .flatten()
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !said(&handle).is_some_and(|note| note.contains("accepted no connection")) {
        assert!(
            std::time::Instant::now() < deadline,
            "waited 20 s for the kitty window to be found unreadable: {:#?}",
            handle.live_sessions()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let before = handle.health().wakeups;
    std::thread::sleep(std::time::Duration::from_secs(3));
    let woken = handle.health().wakeups - before;
    handle.shutdown();
    thread.join().unwrap();
    let _ = codex.kill();
    let _ = codex.wait();
    assert!(woken <= 30, "the loop woke {woken} times in 3 s");
}
