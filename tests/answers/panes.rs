//! Which pane keys go to: a pane is the agent's by its terminal, not by the variables it
//! inherited; an agent without variables or behind a relay is found by its terminal; keys go only
//! to an agent in the foreground of a pane in no mode; to kitty as one `send-text` that asks for
//! no answer; and none to a plain terminal, whose refusal names what would make it possible.

use slate::agents::keys::{self, Action};

use slate::answers::{self, ErrorCode, Target};
use slate::model::{AgentKind, SessionKey};
use slate::terminals::proof::Proof;

use crate::util::needs;

use super::{codex_under, print_of, request, screen, Launch, StandIn};

/// True when a line of the pane is `text` alone, as a key echoed by a program would be.
fn pane_has_line(stand_in: &StandIn, text: &str) -> bool {
    stand_in
        .tmux
        .screen()
        .lines()
        .any(|line| line.trim() == text)
}

#[test]
#[ignore = "slow tier: needs tmux"]
fn a_pane_is_the_agents_by_its_terminal_not_by_the_variables_it_inherited() {
    needs(&["tmux"]);
    let stand_in = StandIn::start("react");
    let permission = print_of("permission-touch.txt");
    // An agent started from the stand-in's pane into a terminal of its own (as `kitty codex` or
    // an editor's terminal would): it carries the pane's `$TMUX` and `$TMUX_PANE`, but its
    // terminal is `script`'s, and `script` runs in no pane.
    let socket = stand_in
        .tmux
        .run(&["display", "-p", "-t", "%0", "#{socket_path}"]);
    let mut elsewhere = std::process::Command::new("script")
        // `script` runs its command with `$SHELL`, which may be a shell without `exec -a`.
        .args(["-qfc", "bash -c 'exec -a codex sleep 60'", "/dev/null"])
        .env("TMUX", format!("{},1,0", socket.trim()))
        .env("TMUX_PANE", "%0")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let impostor = codex_under(elsewhere.id());
    let located = slate::terminals::locate(&[impostor]);
    let done = stand_in.answer_at(
        &Target {
            pid: Some(impostor),
            ..stand_in.target()
        },
        &request(Action::Approve, None, &permission),
        slate::live::system_clock(),
    );
    let _ = elsewhere.kill();
    let _ = elsewhere.wait();
    assert_eq!(located.len(), 1);
    assert_eq!(located[0].1.address, None, "{located:?}");
    assert_eq!(
        located[0].1.view.note.as_deref(),
        Some(slate::terminals::tmux::INHERITED_NOTE)
    );
    let error = done.result.expect_err("the pane is not the impostor's");
    assert_eq!(error.code, ErrorCode::CannotType, "{error}");
    assert!(error.message.contains("not that pane's"), "{error}");
    assert_eq!(stand_in.keys(), "", "nothing reached the pane's own agent");

    // The pane's own agent is proved by its terminal and answered.
    let located = slate::terminals::locate(&[stand_in.pid]);
    assert_eq!(
        located[0].1.address,
        Some(slate::terminals::tmux::address(socket.trim(), "%0"))
    );
    let done = stand_in.answer(&request(Action::Approve, None, &permission));
    assert!(done.result.is_ok(), "{:?}", done.result);
    assert_eq!(stand_in.keys(), "1");
}

#[test]
#[ignore = "slow tier: needs tmux"]
fn an_agent_without_variables_or_behind_a_relay_is_found_by_its_terminal() {
    needs(&["tmux"]);
    let permission = print_of("permission-touch.txt");
    for launch in [Launch::Cleared, Launch::Script] {
        let stand_in = StandIn::start_with("react", launch, "working-sleep.txt");
        let located = slate::terminals::locate(&[stand_in.pid]);
        let found = &located[0].1;
        assert_eq!(
            found.address.as_ref().map(|address| address.pane()),
            Some("%0"),
            "{launch:?}: {found:?}"
        );
        match (launch, &found.proof) {
            (Launch::Cleared, Some(Proof::Direct { .. })) => {}
            (Launch::Script, Some(Proof::Relay { program, .. })) => assert_eq!(program, "script"),
            other => panic!("{launch:?}: proved as {other:?}"),
        }
        let done = stand_in.answer(&request(Action::Approve, None, &permission));
        assert!(done.result.is_ok(), "{launch:?}: {:?}", done.result);
        assert_eq!(stand_in.keys(), "1", "{launch:?}");
    }
}

#[test]
#[ignore = "slow tier: needs tmux"]
fn keys_go_only_to_an_agent_in_the_foreground_of_a_pane_in_no_mode() {
    needs(&["tmux"]);
    let stand_in = StandIn::start_with("react", Launch::Shell, "working-sleep.txt");
    let permission = print_of("permission-touch.txt");
    let approve = request(Action::Approve, None, &permission);

    // Copy mode: the keys would move tmux's cursor, not reach the agent.
    stand_in.tmux.run(&["copy-mode", "-t", "%0"]);
    let done = stand_in.answer(&approve);
    let error = done.result.expect_err("a pane in copy mode is refused");
    assert_eq!(error.code, ErrorCode::CannotType, "{error}");
    assert!(error.message.contains("copy mode"), "{error}");
    stand_in
        .tmux
        .run(&["send-keys", "-t", "%0", "-X", "cancel"]);
    assert_eq!(stand_in.keys(), "");

    // Stopped (as Ctrl-Z does; the stand-in's raw terminal takes C-z as a key, so the signal is
    // sent as the terminal would), with `tail -f` of the dialog's text in the foreground: the
    // screen shows the same dialog, but the agent would not get the keys.
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", stand_in.pid)).unwrap();
    let pgrp = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .nth(2)
        .unwrap()
        .to_string();
    let signal = |name: &str| {
        let sent = std::process::Command::new("kill")
            .args([name, "--", &format!("-{pgrp}")])
            .status()
            .unwrap();
        assert!(sent.success(), "kill {name}");
    };
    signal("-TSTP");
    stand_in
        .tmux
        .wait_for("the job stopped", |tmux| tmux.screen().contains("Stopped"));
    let shown = stand_in.temp.path().join("shown.txt");
    std::fs::copy(screen("permission-touch.txt"), &shown).unwrap();
    stand_in.tmux.run(&[
        "send-keys",
        "-t",
        "%0",
        "-l",
        &format!("stty sane; clear; tail -n +1 -f '{}'", shown.display()),
    ]);
    stand_in.tmux.run(&["send-keys", "-t", "%0", "Enter"]);
    stand_in.wait_showing("permission-touch.txt");
    let done = stand_in.answer(&approve);
    let error = done.result.expect_err("a stopped agent is refused");
    assert_eq!(error.code, ErrorCode::CannotType, "{error}");
    assert!(error.message.contains("stopped"), "{error}");

    // Running again, but in the background (`kill -CONT`): `tail` still has the terminal.
    signal("-CONT");
    let done = stand_in.answer(&approve);
    let error = done
        .result
        .expect_err("an agent in the background is refused");
    assert_eq!(error.code, ErrorCode::CannotType, "{error}");
    assert!(error.message.contains("foreground"), "{error}");
    // Nothing was typed into `tail`'s terminal, and the agent got nothing.
    assert!(!pane_has_line(&stand_in, "1"), "{}", stand_in.tmux.screen());
    assert_eq!(stand_in.keys(), "");
}

#[test]
fn keys_go_to_kitty_as_one_send_text_that_asks_for_no_answer() {
    use std::io::Read;
    let temp = tempfile::tempdir().unwrap();
    let socket = temp.path().join("kitty.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let received = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut frame = Vec::new();
        stream.read_to_end(&mut frame).unwrap();
        frame
    });
    let address = slate::terminals::kitty::address(format!("unix:{}", socket.display()), "3");
    // kitty answers nothing to send-text: a send that waited for an answer would fail here.
    slate::terminals::typing::send(&address, &[keys::Key::Digit(1)]).unwrap();
    let frame = received.join().unwrap();
    let body = frame
        .strip_prefix(b"\x1bP@kitty-cmd")
        .and_then(|rest| rest.strip_suffix(b"\x1b\\"))
        .expect("one kitty frame");
    let command: serde_json::Value = serde_json::from_slice(body).unwrap();
    assert_eq!(command["cmd"], "send-text");
    assert_eq!(command["no_response"], true);
    assert_eq!(command["payload"]["match"], "id:3");
    assert_eq!(command["payload"]["data"], "text:1");
}

#[test]
fn a_plain_terminals_refusal_names_claude_codes_decision_hook_and_no_other_agents() {
    // An agent outside any multiplexer, with no variable of any terminal: a plain terminal.
    let mut plain = std::process::Command::new("env")
        .args(["-i", "PATH=/usr/bin:/bin", "sleep", "30"])
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let refusal = |agent: AgentKind| {
        let target = Target {
            key: SessionKey::new(agent, "5e55a0de-0000-4000-8000-000000000001"),
            pid: Some(plain.id()),
            hosted: false,
            control: None,
            machine: None,
            call: None,
            summary: None,
        };
        answers::terminal_of(&target).expect_err("a plain terminal is refused")
    };
    let claude = refusal(AgentKind::CLAUDE_CODE);
    let codex = refusal(AgentKind::CODEX);
    let _ = plain.kill();
    let _ = plain.wait();
    assert_eq!(claude.code, ErrorCode::CannotType, "{claude}");
    assert!(claude.message.contains("start it in tmux"), "{claude}");
    // Claude Code's dialog stays usable while its decision hook waits, so Slate can answer it
    // there through that hook: the refusal says how to install it.
    assert!(
        claude
            .message
            .contains("let Slate answer Claude Code there through its decision hook"),
        "{claude}"
    );
    assert!(
        claude
            .message
            .contains("`slate hooks install --answer claude-code`"),
        "{claude}"
    );
    // Codex's hook cannot decide with its dialog kept usable: no command that would be refused.
    assert_eq!(codex.code, ErrorCode::CannotType, "{codex}");
    assert!(codex.message.contains("start it in tmux"), "{codex}");
    assert!(!codex.message.contains("install --answer"), "{codex}");
    assert!(
        codex
            .message
            .contains("Codex's hook cannot decide with its dialog kept usable"),
        "{codex}"
    );
}
