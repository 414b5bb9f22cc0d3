//! Focusing a session's terminal (`focus`, `focus::strategy`): the pure choice as a table of
//! facts and plans with the tools' output parsers (`strategy`), and the tmux (`tmux`) and X11
//! (`x11`: Xvfb with openbox and two xterms) paths for real, over the helpers here.

mod front;
mod hyprland;
mod kwin;
mod strategy;
mod sway;
mod tmux;
mod x11;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::needs;

pub(crate) const DEADLINE: Duration = Duration::from_secs(20);

pub(crate) fn output(command: &mut Command) -> String {
    let out = command.output().expect("the tool runs");
    assert!(
        out.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Polls `probe` until it returns `Some`, failing after the deadline.
pub(crate) fn poll<T>(what: &str, probe: impl FnMut() -> Option<T>) -> T {
    poll_until(probe).unwrap_or_else(|| panic!("timed out waiting for {what}"))
}

/// Polls `probe` until it returns `Some`, or `None` after the deadline.
pub(crate) fn poll_until<T>(mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let started = Instant::now();
    loop {
        if let Some(value) = probe() {
            return Some(value);
        }
        if started.elapsed() > DEADLINE {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub(crate) fn unique_name() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.subsec_nanos())
        .unwrap_or(0);
    format!("slate-test-{}-{nanos}", std::process::id())
}

/// A private tmux server, killed when dropped.
pub(crate) struct TmuxServer {
    pub(crate) name: String,
}

impl TmuxServer {
    /// A private server with one detached 80x24 session (tmux required).
    pub(crate) fn detached() -> TmuxServer {
        needs(&["tmux"]);
        let server = TmuxServer {
            name: unique_name(),
        };
        server.tmux(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            "80",
            "-y",
            "24",
        ]);
        server
    }

    /// Runs `command` in a new window, left in the background, and returns its pane's pid.
    pub(crate) fn window(&self, command: &str) -> u32 {
        self.tmux(&["new-window", "-d", "-P", "-F", "#{pane_pid}", command])
            .parse()
            .expect("tmux prints the pane's pid")
    }

    pub(crate) fn tmux(&self, args: &[&str]) -> String {
        output(
            Command::new("tmux")
                .env("HISTFILE", crate::util::PANE_HISTFILE)
                .args(["-L", &self.name])
                .args(args),
        )
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        crate::util::kill_tmux_server(&self.name);
    }
}

/// Child processes killed and reaped when dropped, last started first.
pub(crate) struct Children(pub(crate) Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for child in self.0.iter_mut().rev() {
            // SIGTERM first, so Xvfb removes its lock file and socket; SIGKILL if it lingers.
            let _ = Command::new("kill")
                .arg(child.id().to_string())
                .stderr(Stdio::null())
                .status();
            let started = Instant::now();
            while child.try_wait().ok().flatten().is_none() {
                if started.elapsed() > Duration::from_secs(2) {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}
