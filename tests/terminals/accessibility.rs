//! The accessibility bus for real: xfce4-terminal under Xvfb with a private session bus (whose
//! activation starts the accessibility bus), two tabs, each read with its title and whether it is
//! the selected one; a process with no application there, and no bus at all, say so.

use std::process::{Command, Stdio};
use std::time::Duration;

use slate::terminals::accessibility::{self, Unread};

use super::desktop::Desktop;
use crate::focus::poll;
use crate::util::needs;

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
    let project = home.join("acme-api");
    std::fs::create_dir(&project).unwrap();
    let project = std::fs::canonicalize(&project).unwrap();
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
    let terminal = desktop
        .command("xfce4-terminal")
        .args(["--disable-server", "--geometry", "80x24"])
        .args(["--command", "sh -c 'echo tab one: at work; exec sleep 300'"])
        .args(["--tab", "--command", &format!("bash {}", script.display())])
        .stdout(Stdio::null())
        .spawn()
        .expect("xfce4-terminal starts");
    let pid = terminal.id();
    desktop.keep(terminal);

    let tabs = poll("xfce4-terminal's two tabs on the accessibility bus", || {
        let tabs = accessibility::read_app(&bus, pid, Duration::from_secs(2)).ok()?;
        (tabs.len() == 2 && tabs[1].text.contains("Would you like to run")).then_some(tabs)
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
    let slate = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_slate"))
            .args(args)
            .env("HOME", &user)
            .env("XDG_CONFIG_HOME", home.join("user-config"))
            .env("XDG_DATA_HOME", home.join("user-data"))
            .env("DBUS_SESSION_BUS_ADDRESS", &bus)
            .env("SLATE_STANDALONE", "1")
            .env("SLATE_LOG", "error")
            .env_remove("CODEX_HOME")
            .output()
            .unwrap()
    };
    // The session's open call is `touch x.txt`; the dialog asks about `touch narrow.txt`: it is
    // some other session's, so this one reads Working by its transcript.
    let doctor = String::from_utf8_lossy(&slate(&["doctor"]).stdout).into_owned();
    let expected = format!(
        "accessibility: xfce4-terminal (pid {pid}), 2 tab(s) read: 1 dialog(s) of Codex shown, \
         none about its open call"
    );
    assert!(doctor.contains(&expected), "{doctor}");
    assert!(
        doctor.contains("— Working (Running exec_command"),
        "{doctor}"
    );
    // Once its transcript holds the command the dialog shows, the tab is its.
    let rollout = std::fs::read_dir(user.join(".codex/sessions/2026/12/01"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(&rollout).unwrap();
    std::fs::write(&rollout, text.replace("touch x.txt", "touch narrow.txt")).unwrap();
    let doctor = String::from_utf8_lossy(&slate(&["doctor"]).stdout).into_owned();
    let expected = format!(
        "accessibility: xfce4-terminal (pid {pid}), 2 tab(s) read: tab 2 shows its dialog (its \
         dialog asks about the session's open call)"
    );
    assert!(doctor.contains(&expected), "{doctor}");
    assert!(
        doctor.contains("terminal: xfce4-terminal (accessibility bus), read by Slate"),
        "{doctor}"
    );

    // The engine reads that tab as the session's: Needs you at its permission dialog, with no
    // hook, no tmux and no variable of any terminal. The dialog is shown, never answerable.
    let listed = slate(&["sessions", "--json"]);
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
    assert_eq!(session["dialog"]["why_not"], slate::model::SEEN_ONLY);

    // `slate approve` refuses and says why; nothing reaches the tab.
    let approve = slate(&["approve", "--yes", "01a228e1"]);
    assert!(!approve.status.success());
    let said = String::from_utf8_lossy(&approve.stderr);
    assert!(said.contains("accessibility bus"), "{said}");
    std::thread::sleep(Duration::from_millis(300));
    let after = accessibility::read_app(&bus, pid, Duration::from_secs(2)).unwrap();
    assert_eq!(
        after[1].text, tabs[1].text,
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

/// A tab showing `file` of `fixtures/screens/` (a recorded screen of the real CLI).
fn tab(file: &str, selected: bool) -> accessibility::Tab {
    accessibility::Tab {
        title: None,
        selected,
        text: super::text(&format!("screens/{file}")),
    }
}

#[test]
fn a_tab_is_the_sessions_only_when_the_evidence_is_unambiguous() {
    use accessibility::TabChoice;
    use slate::model::AgentKind;
    let codex = AgentKind::CODEX;
    let idle = tab("codex/0.171.0/idle.txt", false);
    let touch = tab("codex/0.171.0/permission-touch.txt", true);
    let curl = tab("codex/0.171.0/permission-curl.txt", false);

    // The only tab showing a Codex dialog, with one Codex session in this terminal.
    let one = [idle.clone(), touch.clone()];
    assert!(matches!(
        accessibility::choose_tab(codex, &one, None, 1),
        TabChoice::Tab { index: 1, .. }
    ));
    // No dialog of this agent anywhere: a Claude Code session's tab is not read as Codex's.
    assert_eq!(
        accessibility::choose_tab(codex, std::slice::from_ref(&idle), None, 1),
        TabChoice::NoDialog
    );
    assert_eq!(
        accessibility::choose_tab(AgentKind::CLAUDE_CODE, &one, None, 1),
        TabChoice::NoDialog
    );
    // Two Codex sessions here and one dialog: whose is it? Neither, unless the open call says.
    assert!(matches!(
        accessibility::choose_tab(codex, &one, None, 2),
        TabChoice::Ambiguous(_)
    ));
    let two = [touch.clone(), idle, curl];
    assert!(matches!(
        accessibility::choose_tab(codex, &two, None, 1),
        TabChoice::Ambiguous(_)
    ));
    // The open call's command names the tab, among two dialogs and two sessions.
    let command = match slate::agents::screens::read_screen(codex, &two[2].text) {
        slate::agents::screens::Screen::Dialog(dialog) => dialog.detail.join("\n"),
        other => panic!("the recorded curl dialog reads as {other:?}"),
    };
    let call = |input: &str| slate::model::PendingCall {
        id: "call_1".into(),
        name: "exec_command".into(),
        input: Some(input.into()),
        cut: false,
    };
    let command = call(&command);
    // Its spacing as the transcript keeps it (runs of spaces) still names it.
    let spaced = call(&command.input.as_deref().unwrap().replace(' ', "  "));
    assert!(matches!(
        accessibility::choose_tab(codex, &two, Some(&spaced), 2),
        TabChoice::Tab { index: 2, .. }
    ));
    // A call of another command: every dialog shown is some other session's, so none is its.
    assert_eq!(
        accessibility::choose_tab(codex, &two, Some(&call("rm -rf /tmp/elsewhere")), 2),
        TabChoice::Others(2)
    );
    // A call of a tool whose dialog does not draw its input is no evidence.
    let unnamed = slate::model::PendingCall {
        name: "apply_patch".into(),
        ..command.clone()
    };
    assert!(matches!(
        accessibility::choose_tab(codex, &two, Some(&unnamed), 2),
        TabChoice::Ambiguous(_)
    ));
    assert_eq!(
        accessibility::choose_tab(codex, &two, Some(&command), 2),
        TabChoice::Tab {
            index: 2,
            why: "its dialog asks about the session's open call".into()
        }
    );
    // The same command in two tabs: neither.
    let twice = [two[2].clone(), two[2].clone()];
    assert!(matches!(
        accessibility::choose_tab(codex, &twice, Some(&command), 2),
        TabChoice::Ambiguous(_)
    ));
}
