//! A private desktop for a test or a benchmark of the accessibility bus: Xvfb on a display of
//! its own and a session bus whose activations (the accessibility bus among them) start in a
//! throwaway HOME; everything it started is stopped when it is dropped. Used by
//! `tests/terminals/accessibility.rs` and by `benches/accessibility.rs`, which takes this file by
//! its path.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

pub struct Desktop {
    pub home: tempfile::TempDir,
    /// The X display, `:N`.
    pub display: String,
    /// The session bus's address.
    pub bus: String,
    children: Vec<Child>,
}

impl Desktop {
    /// Starts Xvfb with a screen of `size` (`1024x768x24`) and the session bus.
    pub fn start(size: &str) -> Desktop {
        let home = tempfile::tempdir().expect("a temp folder");
        let runtime = home.path().join("run");
        std::fs::create_dir(&runtime).unwrap();
        std::fs::set_permissions(
            &runtime,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        let mut desktop = Desktop {
            home,
            display: String::new(),
            bus: String::new(),
            children: Vec::new(),
        };
        let mut xvfb = desktop
            .private("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", size, "-nolisten", "tcp"])
            .spawn()
            .expect("Xvfb starts");
        desktop.display = format!(":{}", first_line(&mut xvfb));
        desktop.children.push(xvfb);
        let mut daemon = desktop
            .private("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .env("DISPLAY", &desktop.display)
            .spawn()
            .expect("dbus-daemon starts");
        desktop.bus = first_line(&mut daemon);
        desktop.children.push(daemon);
        desktop
    }

    /// `program` with nothing of the caller's environment but PATH: the throwaway HOME and XDG
    /// folders, a UTF-8 locale, the display and the session bus; stdout piped, the rest null.
    pub fn command(&self, program: &str) -> Command {
        let mut command = self.private(program);
        command
            .env("DISPLAY", &self.display)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus);
        command
    }

    /// Stops `child` with the desktop.
    pub fn keep(&mut self, child: Child) {
        self.children.push(child);
    }

    fn private(&self, program: &str) -> Command {
        let home = self.home.path();
        let mut command = Command::new(program);
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home)
            .env("LANG", "C.UTF-8")
            .env("XDG_RUNTIME_DIR", home.join("run"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("XDG_DATA_HOME", home.join("data"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        command
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        for child in self.children.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The first line `child` prints (Xvfb's display number, dbus-daemon's address).
fn first_line(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("a first line");
    line.trim().to_string()
}
