//! The accessibility bus for real: xfce4-terminal under Xvfb with a private session bus (whose
//! activation starts the accessibility bus), two tabs, each read with its title and whether it is
//! the selected one; a process with no application there, and no bus at all, say so.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use slate::terminals::accessibility::{self, Unread};

use crate::focus::{poll, Children};
use crate::util::needs;

/// One line `program` prints first (Xvfb's display number, dbus-daemon's address).
fn first_line(child: &mut std::process::Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    line.trim().to_string()
}

#[test]
#[ignore = "slow tier: needs Xvfb, dbus-daemon, at-spi2-core and xfce4-terminal"]
fn xfce4_terminals_tabs_are_read_from_the_accessibility_bus() {
    needs(&["Xvfb", "dbus-daemon", "xfce4-terminal"]);
    let home = tempfile::tempdir().unwrap();
    let runtime = home.path().join("run");
    std::fs::create_dir(&runtime).unwrap();
    std::fs::set_permissions(
        &runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let private = |program: &str| {
        let mut command = Command::new(program);
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("LANG", "C.UTF-8")
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_CACHE_HOME", home.path().join("cache"))
            .env("XDG_DATA_HOME", home.path().join("data"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        command
    };
    let mut xvfb = private("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1024x768x24",
            "-nolisten",
            "tcp",
        ])
        .spawn()
        .expect("Xvfb starts");
    let display = format!(":{}", first_line(&mut xvfb));
    let mut children = Children(vec![xvfb]);
    let mut daemon = private("dbus-daemon")
        .args(["--session", "--nofork", "--print-address=1"])
        .env("DISPLAY", &display)
        .spawn()
        .expect("dbus-daemon starts");
    let bus = first_line(&mut daemon);
    children.0.push(daemon);

    // Tab one: a shell's line. Tab two: a stand-in Codex (a program named `codex` in a project
    // folder with a Codex session) drawing Codex 0.171.0's recorded permission dialog, at 80x24.
    let project = home.path().join("acme-api");
    std::fs::create_dir(&project).unwrap();
    let project = std::fs::canonicalize(&project).unwrap();
    let user = home.path().join("user");
    super::codex_rollout(&user, &project, slate::live::system_clock());
    let screen = super::fixture("screens/codex/0.171.0/permission-touch-80x24.txt");
    let script = home.path().join("codex.sh");
    std::fs::write(
        &script,
        format!(
            "printf '\\033]0;agent-two\\007'\ncd '{}'\nhead -c -1 '{}'\nexec -a codex sleep 300\n",
            project.display(),
            screen.display()
        ),
    )
    .unwrap();
    let terminal = private("xfce4-terminal")
        .env("DISPLAY", &display)
        .env("DBUS_SESSION_BUS_ADDRESS", &bus)
        .args(["--disable-server", "--geometry", "80x24"])
        .args(["--command", "sh -c 'echo tab one: at work; exec sleep 300'"])
        .args(["--tab", "--command", &format!("bash {}", script.display())])
        .stdout(Stdio::null())
        .spawn()
        .expect("xfce4-terminal starts");
    let pid = terminal.id();
    children.0.push(terminal);

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

    // `slate doctor` finds the application from the session's process, reads its tabs, and names
    // the one that shows the session's dialog: the only Codex dialog there.
    let doctor = Command::new(env!("CARGO_BIN_EXE_slate"))
        .arg("doctor")
        .env("HOME", &user)
        .env("XDG_CONFIG_HOME", home.path().join("user-config"))
        .env("XDG_DATA_HOME", home.path().join("user-data"))
        .env("DBUS_SESSION_BUS_ADDRESS", &bus)
        .env("SLATE_STANDALONE", "1")
        .env_remove("CODEX_HOME")
        .output()
        .unwrap();
    let doctor = String::from_utf8_lossy(&doctor.stdout).into_owned();
    let expected = format!(
        "accessibility: xfce4-terminal (pid {pid}), 2 tab(s) read: tab 2 shows its dialog (the \
         only tab showing a dialog of Codex)"
    );
    assert!(doctor.contains(&expected), "{doctor}");

    // A process with no application there, and a bus that is not one.
    assert_eq!(
        accessibility::read_app(&bus, std::process::id(), Duration::from_secs(2)),
        Err(Unread::NotListed(std::process::id()))
    );
    let none = home.path().join("no-bus");
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
