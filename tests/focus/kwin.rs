//! Focus on KDE Plasma under Wayland, through KWin's scripting interface: the plan from facts (a
//! script that activates the one window of the nearest process, from the session's up to its
//! terminal's), the script's text, and the D-Bus conversation for real against a stand-in KWin on
//! a private bus (`fixtures/focus/fake-kwin.py`). KWin itself does not start in this build's
//! container (the README says why), so what the script does inside KWin is not tested here.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use slate::focus::{self, strategy};
use strategy::{Environment, Facts, Looking, Plan, Step};

use super::strategy::{all_tools, host};
use super::{poll, Children};
use crate::util::{needs, private_bus};

const BUS: &str = "unix:path=/run/user/1000/bus";

/// A session process 100 in zsh 90 in konsole 80, started from plasmashell 70, on Plasma under
/// Wayland.
fn konsole_facts() -> Facts {
    let env = Environment {
        wayland_display: Some("wayland-0".into()),
        dbus_session: Some(BUS.into()),
        ..Environment::default()
    };
    Facts {
        pid: Some(100),
        host: Some(host(
            &[
                (100, "codex"),
                (90, "zsh"),
                (80, "konsole"),
                (70, "plasmashell"),
                (1, "systemd"),
            ],
            "/dev/pts/4",
            env,
        )),
        kde: true,
        tools: all_tools(),
        ..Facts::default()
    }
}

#[test]
fn on_plasma_under_wayland_a_kwin_script_activates_the_terminals_one_window() {
    let plan = strategy::choose(&konsole_facts());
    let Plan::Run { steps, caveat } = plan else {
        panic!("{plan:?}");
    };
    // The processes up to the terminal, never past it (plasmashell's windows are not its).
    assert_eq!(
        steps,
        vec![Step::KwinActivate {
            bus: Some(BUS.into()),
            pids: vec![100, 90, 80]
        }]
    );
    let caveat = caveat.expect("KWin does not say what it found");
    assert!(caveat.contains("KWin does not tell"), "{caveat}");
    assert!(caveat.contains("konsole shows tabs"), "{caveat}");
    assert_eq!(
        steps[0].to_string(),
        "a KWin script that activates the one window of the nearest of processes 100, 90, 80"
    );
    // Nothing tells Slate which window KWin has focused: quiet while you look notifies.
    assert!(matches!(
        strategy::looking(&konsole_facts()),
        Looking::Unsure(_)
    ));

    // Not Plasma, or no dbus-send: not this way (here, no X11 display either, so nothing).
    let mut elsewhere = konsole_facts();
    elsewhere.kde = false;
    assert!(matches!(strategy::choose(&elsewhere), Plan::Unsure { .. }));
    let mut no_tool = konsole_facts();
    no_tool.tools.dbus_send = false;
    assert!(matches!(strategy::choose(&no_tool), Plan::Unsure { .. }));
    // No terminal among its parents: it says so and does nothing.
    let mut loose = konsole_facts();
    loose.host.as_mut().unwrap().ancestors.remove(2);
    match strategy::choose(&loose) {
        Plan::Unsure { reason } => assert!(reason.contains("no terminal"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_kwin_script_holds_only_the_pids_and_stops_at_the_first_process_with_windows() {
    let script = strategy::kwin_script(&[100, 90, 80]);
    assert!(
        script.starts_with("const pids = [100, 90, 80];\n"),
        "{script}"
    );
    // Plasma 6's names, else Plasma 5's.
    for name in [
        "workspace.windowList",
        "workspace.clientList",
        "activeWindow",
        "activeClient",
    ] {
        assert!(script.contains(name), "{name} in {script}");
    }
    // One window is activated; more than one, or the first process with any, ends the search.
    assert!(script.contains("owned.length === 1"));
    assert!(script.contains("if (owned.length > 0) { break; }"));
    assert_eq!(
        strategy::kwin_script(&[]).lines().next(),
        Some("const pids = [];")
    );
}

#[test]
#[ignore = "slow tier: needs dbus-daemon, dbus-send and python3 with dbus and gi"]
fn the_script_goes_to_kwin_over_the_session_bus_and_is_unloaded_after() {
    needs(&["dbus-daemon", "dbus-send", "/usr/bin/python3"]);
    let dir = tempfile::tempdir().unwrap();
    let (daemon, address) = private_bus(dir.path());
    let mut children = Children(vec![daemon]);
    let log = dir.path().join("kwin.log");
    let fake = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/focus/fake-kwin.py");
    let mut kwin = Command::new("/usr/bin/python3")
        .arg(fake)
        .arg(&address)
        .arg(&log)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the stand-in KWin starts");
    let mut ready = String::new();
    BufReader::new(kwin.stdout.take().unwrap())
        .read_line(&mut ready)
        .unwrap();
    assert_eq!(ready.trim(), "ready");
    children.0.push(kwin);

    let step = Step::KwinActivate {
        bus: Some(address.clone()),
        pids: vec![4242, 4241],
    };
    let outcome = focus::execute(&Plan::Run {
        steps: vec![step.clone()],
        caveat: None,
    })
    .expect("KWin takes the script");
    assert_eq!(outcome.done, vec![step]);

    let calls: Vec<serde_json::Value> = poll("the three calls", || {
        let text = std::fs::read_to_string(&log).ok()?;
        let calls: Vec<serde_json::Value> = text
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        (calls.len() == 3).then_some(calls)
    });
    assert_eq!(calls[0][0], "loadScript");
    assert_eq!(
        calls[0][3].as_str(),
        Some(strategy::kwin_script(&[4242, 4241]).as_str())
    );
    let name = calls[0][2].as_str().unwrap();
    assert!(name.starts_with("slate-focus-"), "{name}");
    assert_eq!(calls[1], serde_json::json!(["start"]));
    assert_eq!(calls[2], serde_json::json!(["unloadScript", name]));
    // The script's file is gone after.
    let path = calls[0][1].as_str().unwrap();
    assert!(!std::path::Path::new(path).exists(), "{path} left behind");

    // No KWin on the bus: a clear failure, and still no file left.
    if let Some(mut kwin) = children.0.pop() {
        let _ = kwin.kill();
        let _ = kwin.wait();
    }
    let failed = focus::execute(&Plan::Run {
        steps: vec![Step::KwinActivate {
            bus: Some(address),
            pids: vec![1],
        }],
        caveat: None,
    });
    assert!(failed.is_err(), "{failed:?}");
}
