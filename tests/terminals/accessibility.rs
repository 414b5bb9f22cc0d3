//! The accessibility bus for real: xfce4-terminal under Xvfb with a private session bus (whose
//! activation starts the accessibility bus), two tabs, each read with its title and whether it is
//! the selected one; a process with no application there, and no bus at all, say so. Which tab is
//! a session's, when nothing but counting proves it: two stand-in Codex sessions with the same
//! open call, and a shell that prints a recorded dialog beside a working session, leave the
//! sessions Working; the pure chooser, case by case, on recorded screens.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use slate::model::{AgentKind, PendingCall};
use slate::terminals::accessibility::{self, TabChoice, Unread};
use slate::terminals::Clues;

use super::desktop::Desktop;
use crate::focus::{poll, poll_until};
use crate::util::needs;

/// `slate args` with no running server (the one-shot read, as a command run with no service
/// does), in the HOME `user` under the desktop's throwaway folder, on the desktop's session bus.
fn slate(desktop: &Desktop, user: &Path, args: &[&str]) -> Output {
    let home = desktop.home.path();
    Command::new(env!("CARGO_BIN_EXE_slate"))
        .args(args)
        .env("HOME", user)
        .env("XDG_CONFIG_HOME", home.join("user-config"))
        .env("XDG_DATA_HOME", home.join("user-data"))
        .env("DBUS_SESSION_BUS_ADDRESS", &desktop.bus)
        .env("SLATE_STANDALONE", "1")
        .env("SLATE_LOG", "error")
        .env_remove("CODEX_HOME")
        .output()
        .unwrap()
}

/// What `slate doctor` printed.
fn doctor(desktop: &Desktop, user: &Path) -> String {
    String::from_utf8_lossy(&slate(desktop, user, &["doctor"]).stdout).into_owned()
}

/// The `accessibility:` line `doctor` printed for session `id`.
fn accessibility_line(doctor: &str, id: &str) -> String {
    let header = format!(" {id} — ");
    doctor
        .lines()
        .skip_while(|line| !line.contains(&header))
        .find_map(|line| line.trim().strip_prefix("accessibility: "))
        .unwrap_or_else(|| panic!("no accessibility line for {id}: {doctor}"))
        .to_string()
}

/// The status and reason code of each session `slate sessions --json` lists, by id.
fn statuses(desktop: &Desktop, user: &Path) -> Vec<(String, String, String)> {
    let listed = slate(desktop, user, &["sessions", "--json"]);
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("sessions JSON");
    let mut seen: Vec<(String, String, String)> = listed["sessions"]
        .as_array()
        .expect("a list of sessions")
        .iter()
        .map(|session| {
            let text = |value: &serde_json::Value| value.as_str().unwrap_or("").to_string();
            (
                text(&session["id"]),
                text(&session["status"]),
                text(&session["session_state"]["reason"]["code"]),
            )
        })
        .collect();
    seen.sort();
    seen
}

/// A script for a tab: in `folder`, `screen` (a recorded screen of `fixtures/screens/`, drawn
/// without its last newline so its last line stays at the foot), then a wait as `program`: `codex`
/// makes a stand-in Codex (a program of that name in a folder with a Codex session); `sleep` a
/// shell that only showed a recorded screen. With `then`, another recorded screen, the wait is a
/// loop that clears the screen and draws it at SIGUSR1. Its pid is written to `<name>.pid`.
fn tab_script(
    home: &Path,
    name: &str,
    folder: &Path,
    screen: &str,
    program: &str,
    then: Option<&str>,
) -> PathBuf {
    let script = home.join(format!("{name}.sh"));
    let pid = home.join(format!("{name}.pid"));
    let screen = super::fixture(&format!("screens/{screen}"));
    let wait = match then {
        None => format!("exec -a {program} sleep 300"),
        Some(then) => {
            let redraw = home.join(format!("{name}-redraw.sh"));
            let then = super::fixture(&format!("screens/{then}"));
            std::fs::write(
                &redraw,
                format!(
                    "trap 'printf \"\\033[H\\033[2J\"; head -c -1 \"{}\"' USR1\n\
                     while :; do sleep 1 & wait $!; done\n",
                    then.display()
                ),
            )
            .unwrap();
            format!("exec -a {program} bash '{}'", redraw.display())
        }
    };
    std::fs::write(
        &script,
        format!(
            "echo $$ > '{}'\ncd '{}'\nhead -c -1 '{}'\n{wait}\n",
            pid.display(),
            folder.display(),
            screen.display()
        ),
    )
    .unwrap();
    script
}

/// Sends `signal` to the process whose pid is in the file `pid`.
fn signal(pid: &Path, signal: nix::sys::signal::Signal) {
    let pid: i32 = std::fs::read_to_string(pid)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal).unwrap();
}

/// A project folder `name` under `home`, by its canonical path (as a process's cwd reads).
fn project(home: &Path, name: &str) -> PathBuf {
    let folder = home.join(name);
    std::fs::create_dir(&folder).unwrap();
    std::fs::canonicalize(&folder).unwrap()
}

/// Waits until the desktop's accessibility bus and its registry answer (each is started by the
/// first call for it). A terminal started before may give up on the bus before it answers on a
/// loaded machine, and never show there.
fn accessibility_up(desktop: &Desktop) {
    poll("the accessibility bus and its registry", || {
        let read =
            accessibility::read_app(&desktop.bus, std::process::id(), Duration::from_secs(5));
        matches!(read, Err(Unread::NotListed(_))).then_some(())
    });
}

/// xfce4-terminal on `desktop`, one window of 160x45 with a tab per script, in that order: its
/// pid once every tab's text on the accessibility bus passes `ready` (by index).
fn terminal(desktop: &mut Desktop, scripts: &[&Path], ready: &[&str]) -> u32 {
    accessibility_up(desktop);
    let mut command = desktop.command("xfce4-terminal");
    command.args(["--disable-server", "--geometry", "160x45"]);
    for (n, script) in scripts.iter().enumerate() {
        if n > 0 {
            command.arg("--tab");
        }
        command.args(["--command", &format!("bash {}", script.display())]);
    }
    let terminal = command
        .stdout(Stdio::null())
        .spawn()
        .expect("xfce4-terminal starts");
    let pid = terminal.id();
    desktop.keep(terminal);
    let bus = desktop.bus.clone();
    let mut last = None;
    let shown = poll_until(|| {
        let read = accessibility::read_app(&bus, pid, Duration::from_secs(2));
        let shown = read.as_ref().is_ok_and(|tabs| {
            tabs.len() == ready.len()
                && tabs
                    .iter()
                    .zip(ready)
                    .all(|(tab, words)| tab.text.contains(words))
        });
        last = Some(read);
        shown.then_some(())
    });
    assert!(
        shown.is_some(),
        "xfce4-terminal's tabs never showed on the accessibility bus; the last read: {last:?}"
    );
    pid
}

/// The rollout of Codex session `id` under `user`, with its open call's command `from` made `to`.
fn retell_call(user: &Path, id: &str, from: &str, to: &str) {
    let day = user.join(".codex/sessions/2026/12/01");
    let rollout = day.join(format!("rollout-2026-12-01T00-00-00-{id}.jsonl"));
    let text = std::fs::read_to_string(&rollout).unwrap();
    assert!(text.contains(from), "{text}");
    std::fs::write(&rollout, text.replace(from, to)).unwrap();
}

const DIALOG: &str = "Would you like to run";
const WORKING: &str = "esc to interrupt";
const FIRST: &str = "01a228e1-7d37-7ed1-9043-e56f4039d0ff";
const SECOND: &str = "01a228e1-7d37-7ed1-9043-e56f4039d100";

#[test]
#[ignore = "slow tier: needs Xvfb, dbus-daemon, at-spi2-core and xfce4-terminal"]
fn xfce4_terminals_tabs_are_read_from_the_accessibility_bus() {
    needs(&["Xvfb", "dbus-daemon", "xfce4-terminal"]);
    let _one = super::one_bus_test_at_a_time();
    let mut desktop = Desktop::start("1024x768x24");
    let bus = desktop.bus.clone();
    let home = desktop.home.path().to_path_buf();

    // Tab one: a shell's line. Tab two: a stand-in Codex (a program named `codex` in a project
    // folder with a Codex session) drawing Codex 0.171.0's recorded permission dialog, at 80x24.
    let project = project(&home, "acme-api");
    let user = home.join("user");
    super::codex_rollout(&user, &project, slate::live::system_clock());
    let screen = super::fixture("screens/codex/0.171.0/permission-touch-80x24.txt");
    let script = home.join("codex.sh");
    std::fs::write(
        &script,
        format!(
            "printf '\\033]0;agent-two\\007'\ncd '{}'\nhead -c -1 '{}'\nexec -a codex sleep 300\n",
            project.display(),
            screen.display()
        ),
    )
    .unwrap();
    let shell = home.join("shell.pid");
    accessibility_up(&desktop);
    let terminal = desktop
        .command("xfce4-terminal")
        .args(["--disable-server", "--geometry", "80x24"])
        .args([
            "--command",
            &format!(
                "sh -c 'echo $$ > {}; echo tab one: at work; exec sleep 300'",
                shell.display()
            ),
        ])
        .args(["--tab", "--command", &format!("bash {}", script.display())])
        .stdout(Stdio::null())
        .spawn()
        .expect("xfce4-terminal starts");
    let pid = terminal.id();
    desktop.keep(terminal);

    let tabs = poll("xfce4-terminal's two tabs on the accessibility bus", || {
        let tabs = accessibility::read_app(&bus, pid, Duration::from_secs(2)).ok()?;
        (tabs.len() == 2 && tabs[1].text.contains(DIALOG)).then_some(tabs)
    });
    assert!(tabs[0].text.starts_with("tab one: at work\n"), "{tabs:?}");
    // Tab two's visible text is the dialog as drawn, line for line.
    let drawn = super::text("screens/codex/0.171.0/permission-touch-80x24.txt");
    assert_eq!(tabs[1].text.trim_end(), drawn.trim_end());
    // The newest tab is the selected one; a tab is named by the title its program set.
    assert_eq!(tabs[1].title.as_deref(), Some("agent-two"));
    assert_eq!(
        tabs.iter().map(|tab| tab.selected).collect::<Vec<_>>(),
        vec![false, true]
    );

    // `slate doctor` (and the engine, in one-shot commands run with no server) finds the
    // application from the session's process, reads its tabs, and says which one shows the
    // session's dialog, or why none does.
    // The session's open call is `touch x.txt`; the dialog asks about `touch narrow.txt`: it is
    // some other session's, so this one reads Working by its transcript.
    let said = doctor(&desktop, &user);
    let expected = format!(
        "accessibility: xfce4-terminal (pid {pid}), 2 tab(s) read: 1 dialog(s) of Codex shown, \
         none about its open call"
    );
    assert!(said.contains(&expected), "{said}");
    assert!(said.contains("— Working (Running exec_command"), "{said}");
    // Its transcript holds the command the dialog shows, but the shell's tab could as well show
    // a copy of that dialog: nothing proves the tab is the session's, so it still reads Working.
    retell_call(&user, FIRST, "touch x.txt", "touch narrow.txt");
    let said = doctor(&desktop, &user);
    let expected = format!(
        "accessibility: xfce4-terminal (pid {pid}), 2 tab(s) read: decided for no session: 2 \
         tabs read, and Codex runs in only 1: another tab (a shell, another program) could show \
         a copy of a dialog"
    );
    assert!(said.contains(&expected), "{said}");
    assert_eq!(
        statuses(&desktop, &user),
        [(FIRST.into(), "working".into(), "tool_running".into())]
    );
    // Once the shell's tab is closed, the only tab holds the session's process: the tab is its.
    signal(&shell, nix::sys::signal::Signal::SIGTERM);
    let tabs = poll("the shell's tab closed", || {
        let tabs = accessibility::read_app(&bus, pid, Duration::from_secs(2)).ok()?;
        (tabs.len() == 1).then_some(tabs)
    });
    let said = doctor(&desktop, &user);
    let expected = format!(
        "accessibility: xfce4-terminal (pid {pid}), 1 tab(s) read: tab 1 shows its dialog (the \
         application's only tab, and it holds Codex)"
    );
    assert!(said.contains(&expected), "{said}");
    assert!(
        said.contains("terminal: xfce4-terminal (accessibility bus), read by Slate"),
        "{said}"
    );

    // The engine reads that tab as the session's: Needs you at its permission dialog, with no
    // hook, no tmux and no variable of any terminal. The dialog is shown, never answerable.
    let listed = slate(&desktop, &user, &["sessions", "--json"]);
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("sessions JSON");
    let session = &listed["sessions"][0];
    assert_eq!(session["status"], "waiting", "{listed:#}");
    assert_eq!(
        session["session_state"]["reason"]["code"],
        "permission_prompt"
    );
    assert_eq!(session["terminal"]["kind"], "accessibility");
    assert_eq!(session["terminal"]["pane"], "xfce4-terminal");
    assert_eq!(session["dialog"]["kind"], "permission");
    assert_eq!(session["dialog"]["answerable"], false);
    assert_eq!(
        session["dialog"]["why_not"],
        slate::terminals::accessibility::SEEN_ONLY
    );

    // `slate approve` refuses and says why; nothing reaches the tab.
    let approve = slate(&desktop, &user, &["approve", "--yes", "01a228e1"]);
    assert!(!approve.status.success());
    let said = String::from_utf8_lossy(&approve.stderr);
    assert!(said.contains("accessibility bus"), "{said}");
    std::thread::sleep(Duration::from_millis(300));
    let after = accessibility::read_app(&bus, pid, Duration::from_secs(2)).unwrap();
    assert_eq!(
        after[0].text, tabs[0].text,
        "the tab changed after a refusal"
    );

    // A process with no application there, and a bus that is not one.
    assert_eq!(
        accessibility::read_app(&bus, std::process::id(), Duration::from_secs(2)),
        Err(Unread::NotListed(std::process::id()))
    );
    let none = home.join("no-bus");
    assert!(matches!(
        accessibility::read_app(
            &format!("unix:path={}", none.display()),
            pid,
            Duration::from_secs(2)
        ),
        Err(Unread::NoBus(_))
    ));
}

// Issue 35: two Codex sessions in two tabs, both holding `touch x.txt` open, one tab at the
// dialog: both read Needs you from it. Nothing tells whose it is, so neither is given it.
#[test]
#[ignore = "slow tier: needs Xvfb, dbus-daemon, at-spi2-core and xfce4-terminal"]
fn two_sessions_with_the_same_open_call_are_given_no_tab() {
    needs(&["Xvfb", "dbus-daemon", "xfce4-terminal"]);
    let _one = super::one_bus_test_at_a_time();
    let mut desktop = Desktop::start("1600x1200x24");
    let home = desktop.home.path().to_path_buf();
    let user = home.join("user");
    let (api, web) = (project(&home, "acme-api"), project(&home, "acme-web"));
    let now = slate::live::system_clock();
    super::codex_rollout_with_id(&user, &api, now, FIRST);
    super::codex_rollout_with_id(&user, &web, now, SECOND);
    let at_dialog = tab_script(
        &home,
        "first",
        &api,
        "codex/0.171.0/permission-touch.txt",
        "codex",
        None,
    );
    let working = tab_script(
        &home,
        "second",
        &web,
        "codex/0.171.0/working-sleep.txt",
        "codex",
        None,
    );
    let pid = terminal(&mut desktop, &[&at_dialog, &working], &[DIALOG, WORKING]);

    let working_now = |first: &str, second: &str| {
        vec![
            (
                FIRST.to_string(),
                first.to_string(),
                "tool_running".to_string(),
            ),
            (
                SECOND.to_string(),
                second.to_string(),
                "tool_running".to_string(),
            ),
        ]
    };
    assert_eq!(statuses(&desktop, &user), working_now("working", "working"));
    let said = doctor(&desktop, &user);
    let none = format!(
        "xfce4-terminal (pid {pid}), 2 tab(s) read: decided for no session: another session of \
         Codex in this terminal holds the same call open"
    );
    assert_eq!(accessibility_line(&said, FIRST), none, "{said}");
    assert_eq!(accessibility_line(&said, SECOND), none, "{said}");

    // Once the second session's open call is another command, the dialog is the first's.
    retell_call(&user, SECOND, "touch x.txt", "sleep 600");
    let listed = statuses(&desktop, &user);
    assert_eq!(listed[0].1, "waiting", "{listed:?}");
    assert_eq!(listed[0].2, "permission_prompt", "{listed:?}");
    assert_eq!(listed[1].1, "working", "{listed:?}");
    let said = doctor(&desktop, &user);
    assert_eq!(
        accessibility_line(&said, FIRST),
        format!(
            "xfce4-terminal (pid {pid}), 2 tab(s) read: tab 1 shows its dialog (its dialog asks \
             about the session's open call, and no other session's)"
        ),
        "{said}"
    );
    assert_eq!(
        accessibility_line(&said, SECOND),
        format!(
            "xfce4-terminal (pid {pid}), 2 tab(s) read: 1 dialog(s) of Codex shown, none about \
             its open call"
        ),
        "{said}"
    );
}

// Issue 35: a tab where a shell only printed a recorded dialog made the one working Codex
// session in the other tab read Needs you. Its own tab proves nothing, so it reads Working.
#[test]
#[ignore = "slow tier: needs Xvfb, dbus-daemon, at-spi2-core and xfce4-terminal"]
fn a_dialog_a_shell_printed_is_given_to_no_session() {
    needs(&["Xvfb", "dbus-daemon", "xfce4-terminal"]);
    let _one = super::one_bus_test_at_a_time();
    let mut desktop = Desktop::start("1600x1200x24");
    let home = desktop.home.path().to_path_buf();
    let user = home.join("user");
    let api = project(&home, "acme-api");
    super::codex_rollout_with_id(&user, &api, slate::live::system_clock(), FIRST);
    let working = tab_script(
        &home,
        "codex",
        &api,
        "codex/0.171.0/working-sleep.txt",
        "codex",
        Some("codex/0.171.0/permission-touch.txt"),
    );
    // The shell is in the same folder: only its program tells it from the session's.
    let printed = tab_script(
        &home,
        "shell",
        &api,
        "codex/0.171.0/permission-touch.txt",
        "sleep",
        None,
    );
    let pid = terminal(&mut desktop, &[&working, &printed], &[WORKING, DIALOG]);

    assert_eq!(
        statuses(&desktop, &user),
        [(FIRST.into(), "working".into(), "tool_running".into())]
    );
    let said = doctor(&desktop, &user);
    assert_eq!(
        accessibility_line(&said, FIRST),
        format!(
            "xfce4-terminal (pid {pid}), 2 tab(s) read: decided for no session: 2 tabs read, and \
             Codex runs in only 1: another tab (a shell, another program) could show a copy of a \
             dialog"
        ),
        "{said}"
    );

    // The same session at its own dialog, once the shell's tab is closed: the only tab holds
    // its process, and it reads Needs you (the reads above were made, and decided nothing).
    let bus = desktop.bus.clone();
    signal(&home.join("shell.pid"), nix::sys::signal::Signal::SIGTERM);
    poll("the shell's tab closed", || {
        let tabs = accessibility::read_app(&bus, pid, Duration::from_secs(2)).ok()?;
        (tabs.len() == 1 && tabs[0].text.contains(WORKING)).then_some(())
    });
    signal(&home.join("codex.pid"), nix::sys::signal::Signal::SIGUSR1);
    poll("the session's tab at its dialog", || {
        let tabs = accessibility::read_app(&bus, pid, Duration::from_secs(2)).ok()?;
        tabs[0].text.contains(DIALOG).then_some(())
    });
    assert_eq!(
        statuses(&desktop, &user),
        [(FIRST.into(), "waiting".into(), "permission_prompt".into())]
    );
}

/// A tab showing `file` of `fixtures/screens/` (a recorded screen of the real CLI).
fn tab(file: &str, selected: bool) -> accessibility::Tab {
    accessibility::Tab {
        title: None,
        selected,
        text: super::text(&format!("screens/{file}")),
    }
}

/// A Codex `exec_command` call of `command`.
fn call(command: &str) -> PendingCall {
    PendingCall {
        id: "call_1".into(),
        name: "exec_command".into(),
        input: Some(command.into()),
        cut: false,
    }
}

/// What is known of a session: its open call, the tabs holding its agent, the others' calls.
fn clues(call: Option<PendingCall>, peers: usize, others: &[PendingCall]) -> Clues {
    Clues {
        call,
        peers,
        others: others.to_vec(),
    }
}

/// Issue 35's two cases, on the recorded screens: a tab whose dialog is about the session's open
/// call is still not proved to be its own.
#[test]
fn a_dialog_about_the_sessions_call_is_no_proof_of_its_tab() {
    let codex = AgentKind::CODEX;
    let working = tab("codex/0.171.0/working-sleep.txt", false);
    let touch = tab("codex/0.171.0/permission-touch.txt", true);
    let touched = Some(call("touch x.txt"));
    let choose =
        |tabs: &[accessibility::Tab], clues: Clues| accessibility::choose_tab(codex, tabs, &clues);

    // Issue 35, the `cat` case: the one Codex session works in its tab, holding `touch x.txt`
    // open, and another tab shows that very dialog, printed by a shell. From the bus, a tab is
    // its text: the same two tabs are what the session at its own dialog beside a shell that
    // printed its working screen would show. Only counting tells, and two tabs for one Codex
    // process leave one tab that holds no Codex: decided for none, call or no call.
    let beside = [working.clone(), touch.clone()];
    for held in [None, touched.clone()] {
        assert_eq!(
            choose(&beside, clues(held, 1, &[])),
            TabChoice::Ambiguous(
                "2 tabs read, and Codex runs in only 1: another tab (a shell, another program) \
                 could show a copy of a dialog"
                    .into()
            )
        );
    }
    // Issue 35, the two-tab case: two Codex sessions, one to a tab, both holding `touch x.txt`
    // open, and one tab at its dialog. It asks about either's call: neither is given it (what is
    // known of each is alike: its own call, two tabs, the other's same call).
    let pair = [touch.clone(), working.clone()];
    assert_eq!(
        choose(&pair, clues(touched.clone(), 2, &[call("touch x.txt")])),
        TabChoice::Ambiguous(
            "another session of Codex in this terminal holds the same call open".into()
        )
    );
}

#[test]
fn a_tab_is_the_sessions_only_when_every_tab_is_accounted_for() {
    let codex = AgentKind::CODEX;
    let idle = tab("codex/0.171.0/idle.txt", false);
    let working = tab("codex/0.171.0/working-sleep.txt", false);
    let touch = tab("codex/0.171.0/permission-touch.txt", true);
    let touched = Some(call("touch x.txt"));
    let choose =
        |tabs: &[accessibility::Tab], clues: Clues| accessibility::choose_tab(codex, tabs, &clues);

    // The application's only tab, holding the only Codex process there, at a dialog: its own,
    // whatever its transcript holds open (a question or an unrecorded call draws no command).
    for held in [None, touched.clone()] {
        assert_eq!(
            choose(std::slice::from_ref(&touch), clues(held, 1, &[])),
            TabChoice::Tab {
                index: 0,
                why: "the application's only tab, and it holds Codex".into()
            }
        );
    }
    // No dialog of this agent anywhere: a Claude Code session's tab is not read as Codex's.
    assert_eq!(
        choose(std::slice::from_ref(&idle), clues(None, 1, &[])),
        TabChoice::NoDialog
    );
    assert_eq!(
        accessibility::choose_tab(
            AgentKind::CLAUDE_CODE,
            &[idle.clone(), touch.clone()],
            &clues(None, 1, &[])
        ),
        TabChoice::NoDialog
    );

    let beside = [working.clone(), touch.clone()];
    // A shell beside the session's own dialog leaves it to the transcript too.
    assert!(matches!(
        choose(
            &[idle.clone(), touch.clone()],
            clues(touched.clone(), 1, &[])
        ),
        TabChoice::Ambiguous(_)
    ));
    // A dialog about another command is still no session's, whatever the count.
    assert_eq!(
        choose(&beside, clues(Some(call("sleep 600")), 1, &[])),
        TabChoice::Others(1)
    );
    // Fewer tabs read than tabs holding Codex: something was not read.
    assert!(matches!(
        choose(std::slice::from_ref(&touch), clues(touched.clone(), 2, &[])),
        TabChoice::Ambiguous(_)
    ));

    let pair = [touch.clone(), working.clone()];
    let same = call("touch x.txt");
    // Two Codex sessions, one to a tab; the other session holds another command open: the
    // dialog is this one's, and not that one's.
    assert_eq!(
        choose(&pair, clues(touched.clone(), 2, &[call("sleep 600")])),
        TabChoice::Tab {
            index: 0,
            why: "its dialog asks about the session's open call, and no other session's".into()
        }
    );
    assert_eq!(
        choose(
            &pair,
            clues(Some(call("sleep 600")), 2, std::slice::from_ref(&same))
        ),
        TabChoice::Others(1)
    );
    // The other's call is of a tool whose dialog does not draw its input: it could be theirs.
    let unnamed = |call: PendingCall| PendingCall {
        name: "apply_patch".into(),
        ..call
    };
    assert!(matches!(
        choose(
            &pair,
            clues(touched.clone(), 2, &[unnamed(call("sleep 600"))])
        ),
        TabChoice::Ambiguous(_)
    ));
    // A session with no call open asks nothing: the other tab's session may hold none.
    assert!(matches!(
        choose(&pair, clues(touched.clone(), 2, &[])),
        TabChoice::Tab { index: 0, .. }
    ));
    // Two Codex tabs and no call to tell them by.
    assert!(matches!(
        choose(&pair, clues(None, 2, &[])),
        TabChoice::Ambiguous(_)
    ));

    // Three Codex tabs, two at dialogs: the open call's command names the tab.
    let curl = tab("codex/0.171.0/permission-curl.txt", false);
    let three = [touch.clone(), idle, curl];
    let command = match slate::agents::screens::read_screen(codex, &three[2].text) {
        slate::agents::screens::Screen::Dialog(dialog) => dialog.detail.join("\n"),
        other => panic!("the recorded curl dialog reads as {other:?}"),
    };
    let command = call(&command);
    // Its spacing as the transcript keeps it (runs of spaces) still names it.
    let spaced = call(&command.input.as_deref().unwrap().replace(' ', "  "));
    assert!(matches!(
        choose(&three, clues(Some(spaced), 3, std::slice::from_ref(&same))),
        TabChoice::Tab { index: 2, .. }
    ));
    // A call of another command: every dialog shown is some other session's, so none is its.
    assert_eq!(
        choose(&three, clues(Some(call("rm -rf /tmp/elsewhere")), 3, &[])),
        TabChoice::Others(2)
    );
    // A call of a tool whose dialog does not draw its input is no evidence.
    assert!(matches!(
        choose(&three, clues(Some(unnamed(command.clone())), 3, &[])),
        TabChoice::Ambiguous(_)
    ));
    // The same command in two tabs: neither.
    let twice = [three[2].clone(), three[2].clone()];
    assert_eq!(
        choose(&twice, clues(Some(command), 2, &[])),
        TabChoice::Ambiguous("2 tabs ask about the same command".into())
    );
}
