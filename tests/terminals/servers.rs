//! A terminal's tmux server told by the kernel (issue 36): with four private tmux servers running,
//! the one whose pane has an agent's terminal is the only one asked for its panes, since Linux
//! shows in each server's `/dev/ptmx` fdinfo which `/dev/pts/N` it holds (`tty::tmux_servers`,
//! `tty::tmux_sockets_for`). Checked in process, and for a one-shot `slate sessions`, whose every
//! tmux call a stand-in `tmux` on PATH records before it runs the real one.

use std::path::Path;

use slate::terminals::{locate, proof::Proof, tmux};
use slate::tty::{device_of, pts_number, tmux_servers, tmux_sockets_for};

use super::codex_rollout;
use crate::util::{needs, slate_in, Tmux};

/// The path of the socket of the private server `tmux`.
fn socket(tmux: &Tmux) -> String {
    tmux.run(&["display", "-p", "#{socket_path}"])
        .trim()
        .to_string()
}

/// A folder holding a `tmux` that writes its arguments to `log`, then runs the real tmux.
fn recording_tmux(folder: &Path, log: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let real = std::process::Command::new("sh")
        .args(["-c", "command -v tmux"])
        .output()
        .expect("sh runs");
    let real = String::from_utf8_lossy(&real.stdout).trim().to_string();
    assert!(real.starts_with('/'), "tmux is on PATH: {real:?}");
    let shim = folder.join("tmux");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{real}' \"$@\"\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
#[ignore = "slow tier: needs tmux"]
fn a_pane_is_proved_by_asking_only_the_server_that_holds_its_terminal() {
    needs(&["tmux"]);
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    let folder = temp.path().join("acme-api");
    std::fs::create_dir_all(&folder).unwrap();
    let folder = std::fs::canonicalize(&folder).unwrap();
    let others: Vec<Tmux> = (0..3).map(|_| Tmux::start("exec sleep 600")).collect();
    // A stand-in for Codex: a program named `codex` in the project's folder.
    let agent = Tmux::start_sized(
        &format!(
            "bash -c 'cd \"{}\" && exec -a codex sleep 600'",
            folder.display()
        ),
        160,
        45,
    );
    let pane_tty = agent.run(&["display", "-p", "#{pane_tty}"]);
    let device = device_of(pane_tty.trim()).expect("the pane's terminal");
    let pid: u32 = agent
        .run(&["display", "-p", "#{pane_pid}"])
        .trim()
        .parse()
        .expect("the pane's process");

    // The kernel says which terminals each server holds.
    let servers = tmux_servers();
    for tmux in others.iter().chain([&agent]) {
        let server = servers
            .iter()
            .find(|server| server.sockets.contains(&socket(tmux)))
            .unwrap_or_else(|| panic!("{} is found among {servers:?}", socket(tmux)));
        let held = server
            .terminals
            .as_ref()
            .expect("Linux shows the tty-index of a tmux server's /dev/ptmx descriptors");
        let own = tmux.run(&["display", "-p", "#{pane_tty}"]);
        let number: u32 = own.trim().trim_start_matches("/dev/pts/").parse().unwrap();
        assert_eq!(held.iter().copied().collect::<Vec<_>>(), vec![number]);
    }
    assert_eq!(
        pts_number(device).map(|n| format!("/dev/pts/{n}")),
        Some(pane_tty.trim().into())
    );
    // Only the agent's server can hold its pane, even where the others are named.
    let named: Vec<String> = others.iter().map(socket).collect();
    assert_eq!(
        tmux_sockets_for(Vec::new(), &[device]),
        vec![socket(&agent)]
    );
    assert_eq!(tmux_sockets_for(named, &[device]), vec![socket(&agent)]);

    // Located in process: the pane, proved by its terminal.
    let located = locate(&[pid]);
    let (_, found) = located.iter().find(|(found, _)| *found == pid).unwrap();
    assert_eq!(found.address, Some(tmux::address(socket(&agent), "%0")));
    assert_eq!(found.proof, Some(Proof::Direct { tty: device }));

    // A one-shot `slate sessions`: one `list-panes`, of the agent's server, and nothing asked of
    // the other three.
    codex_rollout(&home, &folder, slate::live::system_clock());
    let bin = temp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = temp.path().join("tmux.log");
    recording_tmux(&bin, &log);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = slate_in(temp.path())
        .env("PATH", path)
        .env("SLATE_STANDALONE", "1")
        .args(["sessions", "--json"])
        .output()
        .expect("slate runs");
    assert!(output.status.success(), "{output:?}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let sessions = json["sessions"].as_array().or(json.as_array()).cloned();
    let ours = sessions
        .unwrap_or_default()
        .into_iter()
        .find(|session| session["folder"] == folder.display().to_string())
        .unwrap_or_else(|| panic!("the session is listed: {json:#}"));
    assert_eq!(ours["terminal"]["kind"], "tmux", "{ours:#}");
    assert_eq!(ours["terminal"]["pane"], "%0", "{ours:#}");
    assert_eq!(ours["terminal"]["sensed"], true, "{ours:#}");
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    let listed: Vec<&str> = calls
        .lines()
        .filter(|call| call.contains("list-panes"))
        .collect();
    assert_eq!(listed.len(), 1, "{calls}");
    assert!(listed[0].contains(&socket(&agent)), "{calls}");
    for other in &others {
        assert!(!calls.contains(&socket(other)), "{calls}");
    }
}
