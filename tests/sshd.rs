//! A real OpenSSH server on 127.0.0.1 for the remote-machine tests and benchmark: a throwaway
//! host key, one throwaway client key per account, and an `authorized_keys` entry per key that
//! forces that account's remote environment (its own HOME, a `PATH` with or without the `slate`
//! under test, or a fixed command in place of whatever the client asked).
//!
//! It listens on 127.0.0.1 only, at a free port, and every file it uses lives in a temporary
//! folder. The client side is an `ssh_config` file with one `Host` per account, passed to `ssh`
//! with `-F`, so neither the person's `~/.ssh` nor the system's `ssh_config` is read. Running
//! as root (as CI does), sshd needs its privilege separation folder, which is created when
//! missing. The server is stopped, with every process it started, when the value is dropped.

#![allow(dead_code)]

use std::collections::HashMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One account on the server: what runs when its key logs in.
#[derive(Debug, Clone)]
pub struct Account {
    /// Its `Host` name in the client's `ssh_config`.
    pub host: String,
    /// The HOME the remote command runs with.
    pub home: PathBuf,
    /// Folders put before `/usr/bin:/bin` on the remote command's `PATH`.
    pub path: Vec<PathBuf>,
    /// A command run in place of the one the client asks for (`None` runs the client's).
    pub forced: Option<String>,
}

impl Account {
    /// An account whose remote command runs with `home` and the `slate` under test on its PATH.
    pub fn with_slate(host: &str, home: &Path, slate_bin: &Path) -> Account {
        Account {
            host: host.to_string(),
            home: home.to_path_buf(),
            path: vec![slate_bin.to_path_buf()],
            forced: None,
        }
    }
}

/// A running sshd and the files around it.
pub struct Sshd {
    pub dir: PathBuf,
    pub port: u16,
    child: Option<Child>,
}

/// The sshd program: Debian's place, else the first on `PATH`.
fn sshd_program() -> PathBuf {
    let debian = PathBuf::from("/usr/sbin/sshd");
    if debian.exists() {
        return debian;
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|folder| folder.join("sshd"))
        .find(|path| path.exists())
        .expect("sshd is not installed: install openssh-server (scripts/deps.sh does)")
}

fn run(command: &mut Command) {
    let output = command.output().expect("the command runs");
    assert!(
        output.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn keygen(path: &Path) {
    if !path.exists() {
        run(Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", "slate-test", "-f"])
            .arg(path));
    }
}

fn user() -> String {
    let output = Command::new("id").arg("-un").output().expect("id runs");
    String::from_utf8(output.stdout)
        .expect("a user name")
        .trim()
        .to_string()
}

/// A port nobody listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// Text quoted for a POSIX shell.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

impl Sshd {
    /// Writes the keys, the accounts' scripts and both configs into `dir`, and starts sshd.
    pub fn start(dir: &Path, accounts: &[Account]) -> Sshd {
        std::fs::create_dir_all(dir).unwrap();
        let port = free_port();
        keygen(&dir.join("host_key"));
        let mut authorized = String::new();
        let mut client = String::new();
        for account in accounts {
            let key = dir.join(format!("{}_key", account.host));
            keygen(&key);
            let script = dir.join(format!("{}.sh", account.host));
            let mut path: Vec<String> = account
                .path
                .iter()
                .map(|folder| folder.display().to_string())
                .collect();
            path.extend(["/usr/bin".to_string(), "/bin".to_string()]);
            let home = account.home.display().to_string();
            let command = match &account.forced {
                Some(forced) => format!("exec /bin/sh -c {}", quoted(forced)),
                None => "exec /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"".to_string(),
            };
            std::fs::write(
                &script,
                format!(
                    "#!/bin/sh\n\
                     # The remote environment of account {host}: its own HOME and PATH.\n\
                     export HOME={home}\n\
                     export XDG_CONFIG_HOME=\"$HOME/.config\" XDG_DATA_HOME=\"$HOME/.local/share\"\n\
                     export PATH={path}\n\
                     {command}\n",
                    host = account.host,
                    home = quoted(&home),
                    path = quoted(&path.join(":")),
                ),
            )
            .unwrap();
            std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
            let public = std::fs::read_to_string(key.with_extension("pub")).unwrap_or_else(|_| {
                std::fs::read_to_string(format!("{}.pub", key.display())).unwrap()
            });
            authorized.push_str(&format!(
                "command=\"{}\",no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-pty {}",
                script.display(),
                public.trim()
            ));
            authorized.push('\n');
            client.push_str(&format!(
                "Host {host}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  \
                 IdentityFile {key}\n  IdentitiesOnly yes\n  UserKnownHostsFile {known}\n  \
                 GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  \
                 PasswordAuthentication no\n  KbdInteractiveAuthentication no\n  \
                 ControlMaster no\n  ControlPath none\n  LogLevel ERROR\n",
                host = account.host,
                user = user(),
                key = key.display(),
                known = dir.join("known_hosts").display(),
            ));
        }
        std::fs::write(dir.join("authorized_keys"), authorized).unwrap();
        std::fs::write(dir.join("ssh_config"), client).unwrap();
        let host_public =
            std::fs::read_to_string(format!("{}.pub", dir.join("host_key").display())).unwrap();
        std::fs::write(
            dir.join("known_hosts"),
            format!("[127.0.0.1]:{port} {}", host_public.trim()),
        )
        .unwrap();
        let mut sshd = Sshd {
            dir: dir.to_path_buf(),
            port,
            child: None,
        };
        sshd.write_config();
        sshd.restart();
        sshd
    }

    /// The client config to pass to `ssh -F`.
    pub fn ssh_config(&self) -> PathBuf {
        self.dir.join("ssh_config")
    }

    fn write_config(&self) {
        let dir = &self.dir;
        let mut config = format!(
            "ListenAddress 127.0.0.1\nPort {port}\nHostKey {host_key}\n\
             AuthorizedKeysFile {authorized}\nPidFile {pid}\n\
             # The test's files live under a temporary folder another user could list.\n\
             StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             PermitRootLogin prohibit-password\nAllowTcpForwarding no\nX11Forwarding no\n\
             AllowAgentForwarding no\nPermitTTY no\nMaxStartups 100\nMaxSessions 100\nLogLevel ERROR\n\
             # A shell started by sshd at level 1 reads the login user's ~/.bashrc, which is not\n\
             # this test's to run (and may be slow); deeper shells do not.\n\
             SetEnv SHLVL=5\n",
            port = self.port,
            host_key = dir.join("host_key").display(),
            authorized = dir.join("authorized_keys").display(),
            pid = dir.join("sshd.pid").display(),
        );
        // Newer servers hold back a source whose connections misbehave; every connection here
        // comes from 127.0.0.1, and the tests drop links on purpose.
        let with_penalties = format!("{config}PerSourcePenalties no\n");
        std::fs::write(dir.join("sshd_config"), &with_penalties).unwrap();
        let accepted = Command::new(sshd_program())
            .arg("-t")
            .arg("-f")
            .arg(dir.join("sshd_config"))
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if !accepted {
            config.push('\n');
            std::fs::write(dir.join("sshd_config"), config).unwrap();
        }
    }

    /// Starts sshd (again), in the foreground as a child of this process, and waits until it
    /// accepts connections.
    pub fn restart(&mut self) {
        if nix_is_root() {
            let _ = std::fs::create_dir_all("/run/sshd");
        }
        let child = Command::new(sshd_program())
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(self.dir.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(
                std::fs::File::options()
                    .create(true)
                    .append(true)
                    .open(self.dir.join("sshd.log"))
                    .unwrap(),
            )
            // Its own process group, so a Ctrl-C meant for the test run reaches it through
            // the test's own cleanup only.
            .process_group(0)
            .spawn()
            .expect("sshd starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "sshd did not listen on 127.0.0.1:{}: {}",
                self.port,
                std::fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The pid of the listening sshd.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Every process sshd started, and theirs: its connections and the commands they run.
    pub fn connections(&self) -> Vec<u32> {
        self.pid().map(descendants).unwrap_or_default()
    }

    /// Stops sshd and kills every connection it holds: each link's TCP connection closes.
    pub fn stop_and_cut(&mut self) {
        let connections = self.connections();
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        for pid in connections {
            signal(pid, "KILL");
        }
    }

    /// Freezes sshd and every connection it holds (SIGSTOP), so each TCP connection stays open
    /// but nothing answers on it, and a new one gets no greeting: only the client's keep-alives
    /// and its connect timeout can tell. Returns the frozen processes, to thaw (SIGCONT).
    pub fn freeze(&self) -> Vec<u32> {
        let mut frozen: Vec<u32> = self.pid().into_iter().collect();
        frozen.extend(self.connections());
        for pid in &frozen {
            signal(*pid, "STOP");
        }
        frozen
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let mut frozen: Vec<u32> = self.pid().into_iter().collect();
        frozen.extend(self.connections());
        for pid in &frozen {
            signal(*pid, "CONT");
        }
        self.stop_and_cut();
    }
}

fn nix_is_root() -> bool {
    user() == "root"
}

/// Sends `name` (KILL, STOP, CONT) to one process, by its id.
pub fn signal(pid: u32, name: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .stderr(Stdio::null())
        .status();
}

/// The processes descended from `root`, read from `/proc`.
pub fn descendants(root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|name| name.parse().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // The parent is the second field after the command name, which is in parentheses
            // and may hold spaces.
            let parent = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|ppid| ppid.parse::<u32>().ok());
            if let Some(parent) = parent {
                children.entry(parent).or_default().push(pid);
            }
        }
    }
    let mut found = Vec::new();
    let mut queue = vec![root];
    while let Some(pid) = queue.pop() {
        for child in children.get(&pid).into_iter().flatten() {
            found.push(*child);
            queue.push(*child);
        }
    }
    found
}

/// A process that looks like Claude Code to the process scan (`claude` as its argv[0]), working
/// in `folder`, for as long as the value lives.
pub struct FakeAgent(Child);

impl FakeAgent {
    pub fn start(folder: &Path) -> FakeAgent {
        let child = Command::new("sleep")
            .arg0("claude")
            .arg("3600")
            .current_dir(folder)
            .stdin(Stdio::null())
            .spawn()
            .expect("a fake agent starts");
        FakeAgent(child)
    }

    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for FakeAgent {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The folder the integration tests' and benchmarks' `slate` binary is in.
pub fn slate_folder(slate: &Path) -> PathBuf {
    slate.parent().expect("the binary's folder").to_path_buf()
}
