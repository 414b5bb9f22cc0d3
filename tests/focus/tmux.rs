//! Focusing a pane of a private tmux server for real: the window and pane selected, the pane
//! found by its terminal and never by inherited variables, and a client that shows another
//! session switched.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use slate::focus::{
    self,
    strategy::{Plan, Step},
};

use super::{poll, unique_name, Children, TmuxServer, DEADLINE};
use crate::util::needs;

#[test]
#[ignore = "slow tier: needs tmux"]
fn tmux_focus_selects_the_window_and_pane_of_the_process() {
    needs(&["tmux"]);
    let server = TmuxServer::detached();
    let pid = server.window("exec sleep 300");
    // A second pane in window 1 becomes its active pane, so selecting the sleep's pane is checked.
    server.tmux(&["split-window", "-t", ":1", "exec sleep 301"]);
    assert_eq!(
        server.tmux(&["display", "-p", "#{window_index}"]),
        "0",
        "window 0 is active before focusing"
    );
    let outcome = focus::focus(pid).expect("the pane is found");
    assert_eq!(outcome.done.len(), 2, "{outcome:?}");
    assert!(
        outcome
            .caveat
            .as_deref()
            .is_some_and(|caveat| caveat.contains("no tmux client")),
        "{outcome:?}"
    );
    assert_eq!(
        server.tmux(&["display", "-p", "#{window_index}.#{pane_index}"]),
        "1.0"
    );
}

#[test]
#[ignore = "slow tier: needs tmux"]
fn tmux_focus_finds_the_pane_by_its_terminal_never_by_inherited_variables() {
    needs(&["tmux"]);
    let server = TmuxServer::detached();
    // A process with every variable cleared: no $TMUX says where it runs, its terminal does.
    let pid = server.window("exec env -i sleep 300");
    let pane = server.tmux(&["display", "-p", "-t", ":1", "#{pane_id}"]);
    match focus::plan(Some(pid)) {
        Plan::Run { steps, .. } => assert!(
            steps.iter().any(|step| step.to_string().contains(&pane)),
            "{steps:?}"
        ),
        plan => panic!("the pane of a process without variables was not found: {plan:?}"),
    }
    // A process that carries the pane's variables in a terminal of its own (`script`, as an
    // editor's terminal or `kitty codex` started from the pane would): that pane is never
    // selected for it.
    let socket = server.tmux(&["display", "-p", "#{socket_path}"]);
    let elsewhere = Children(vec![Command::new("script")
        .args(["-qfc", "exec sleep 300", "/dev/null"])
        .env("TMUX", format!("{socket},1,0"))
        .env("TMUX_PANE", &pane)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("script starts")]);
    let deadline = Instant::now() + DEADLINE;
    let impostor = loop {
        let script = elsewhere.0[0].id();
        let children = std::fs::read_to_string(format!("/proc/{script}/task/{script}/children"))
            .unwrap_or_default();
        if let Some(child) = children.split_whitespace().next() {
            break child.parse::<u32>().unwrap();
        }
        assert!(Instant::now() < deadline, "script started nothing");
        std::thread::sleep(Duration::from_millis(20));
    };
    match focus::plan(Some(impostor)) {
        Plan::Run { steps, .. } => assert!(
            !steps.iter().any(|step| step.to_string().contains(&pane)),
            "the launching pane was selected: {steps:?}"
        ),
        Plan::Unsure { .. } => {}
    }
    drop(elsewhere);
}

#[test]
#[ignore = "slow tier: needs tmux"]
fn tmux_focus_switches_a_client_that_shows_another_session() {
    needs(&["tmux"]);
    let inner = TmuxServer {
        name: unique_name() + "-inner",
    };
    let outer = TmuxServer {
        name: unique_name() + "-outer",
    };
    inner.tmux(&[
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "work",
        "-x",
        "80",
        "-y",
        "24",
    ]);
    let pid: u32 = inner
        .tmux(&[
            "new-window",
            "-d",
            "-t",
            "work",
            "-P",
            "-F",
            "#{pane_pid}",
            "exec sleep 300",
        ])
        .parse()
        .expect("tmux prints the pane's pid");
    inner.tmux(&["new-session", "-d", "-s", "play", "-x", "80", "-y", "24"]);
    // A real client needs a terminal: the outer server's pane gives it one. `TMUX` is unset so
    // the inner tmux agrees to attach from inside the outer one.
    let attach = format!("exec env -u TMUX tmux -L {} attach -t play", inner.name);
    outer.tmux(&[
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-x",
        "80",
        "-y",
        "24",
        &attach,
    ]);
    poll("the client to attach", || {
        (inner.tmux(&["list-clients", "-F", "#{client_session}"]) == "play").then_some(())
    });

    let outcome = focus::focus(pid).expect("the pane is found");
    assert!(
        outcome
            .done
            .iter()
            .any(|step| matches!(step, Step::TmuxSwitchClient { .. })),
        "{outcome:?}"
    );
    // The client runs inside the outer tmux, so no window is raised, and the plan says so.
    assert!(
        outcome
            .caveat
            .as_deref()
            .is_some_and(|caveat| caveat.contains("runs inside another tmux")),
        "{outcome:?}"
    );
    assert_eq!(
        inner.tmux(&["list-clients", "-F", "#{client_session}:#{window_index}"]),
        "work:1"
    );
}
