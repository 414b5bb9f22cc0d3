//! Bringing a session's terminal to the front: gathering the facts and running the plan.
//!
//! [`focus`] is what `slate focus`, the tray menu and a notification click call. It [`gather`]s
//! facts about the session's process (its ancestors through `sysinfo`, its controlling terminal
//! (`tty`) or `ps`, a few environment variables, the panes and clients of the tmux server whose
//! pane has that terminal, found among all of the user's servers, the X11 windows with their
//! `_NET_WM_PID` through `wmctrl` or `xdotool` and the focused one, the windows of a Sway session
//! through `swaymsg -t get_tree` or of a Hyprland one through `hyprctl -j clients`, whether this is
//! KDE Plasma), lets the pure [`strategy::choose`] decide, and [`execute`]s the steps (on Plasma,
//! a KWin script loaded over the session bus). Every helper program runs with a deadline and a
//! limit on what it may print, so a hung or chatty tool never hangs the caller.
//! `terminals::front` reads the same facts, with what kitty and WezTerm say of their own windows
//! and panes, for "quiet while you look".
//!
//! It deliberately decides nothing itself: which window is the right one, and when no window is
//! sure enough, is `strategy`'s. The Windows step is planned but not executed in this build.

pub mod strategy;

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System, UpdateKind};

use strategy::{
    Ancestor, CommandLine, Compositor, CompositorFacts, Environment, Facts, Host, Plan, Platform,
    Step, TmuxFacts, Tools, X11Display, X11Window,
};

/// How long one helper program may take before it is killed.
const TOOL_DEADLINE: Duration = Duration::from_secs(5);

/// The most a helper program's output is read: a Sway tree of hundreds of windows is well under.
const OUTPUT_LIMIT: u64 = 4 * 1024 * 1024;

/// How far up the process tree the walk goes; real chains are a dozen deep at most.
const MAX_ANCESTORS: usize = 64;

/// What `execute` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub done: Vec<Step>,
    /// What the steps did not reach, from the plan.
    pub caveat: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum FocusError {
    #[error("not sure which window shows the session: {reason}")]
    Unsure { reason: String },
    #[error("`{step}` failed: {detail}")]
    StepFailed { step: String, detail: String },
    #[error("`{step}` cannot run in this build")]
    Unsupported { step: String },
}

/// Gathers, chooses and executes: brings the terminal of process `pid` to the front.
pub fn focus(pid: u32) -> Result<Outcome, FocusError> {
    execute(&plan(Some(pid)))
}

/// The plan for a session's process, without running it (`slate focus --dry-run`).
pub fn plan(pid: Option<u32>) -> Plan {
    let facts = match pid {
        Some(pid) => gather(pid),
        None => Facts::default(),
    };
    strategy::choose(&facts)
}

/// Runs a plan's steps in order, stopping at the first that fails.
pub fn execute(plan: &Plan) -> Result<Outcome, FocusError> {
    let (steps, caveat) = match plan {
        Plan::Unsure { reason } => {
            return Err(FocusError::Unsure {
                reason: reason.clone(),
            })
        }
        Plan::Run { steps, caveat } => (steps, caveat),
    };
    for step in steps {
        if let Step::KwinActivate { bus, pids } = step {
            kwin_activate(bus.as_deref(), pids).map_err(|detail| FocusError::StepFailed {
                step: step.to_string(),
                detail,
            })?;
            continue;
        }
        let Some(line) = step.command() else {
            return Err(FocusError::Unsupported {
                step: step.to_string(),
            });
        };
        run(&line)
            .and_then(|output| step.check_answer(&output))
            .map_err(|detail| FocusError::StepFailed {
                step: step.to_string(),
                detail,
            })?;
    }
    Ok(Outcome {
        done: steps.clone(),
        caveat: caveat.clone(),
    })
}

/// Which helper programs are on the `PATH`.
pub fn tools() -> Tools {
    Tools {
        tmux: on_path("tmux"),
        xdotool: on_path("xdotool"),
        wmctrl: on_path("wmctrl"),
        kitty: on_path("kitty"),
        wezterm: on_path("wezterm"),
        osascript: on_path("osascript"),
        swaymsg: on_path("swaymsg"),
        hyprctl: on_path("hyprctl"),
        dbus_send: on_path("dbus-send"),
    }
}

/// Each process in `pids` in its terminal (its ancestors, its terminal device and the
/// environment that says where it runs), from one read of the process table; `None` for a
/// process that is gone. This is what `terminals` locates sessions' panes with.
pub fn hosts(pids: &[u32]) -> Vec<(u32, Option<Host>)> {
    if pids.is_empty() {
        return Vec::new();
    }
    let mut table = ProcessView::new();
    pids.iter()
        .map(|pid| (*pid, table.host(*pid, None)))
        .collect()
}

/// Collects what `strategy::choose` needs about process `pid`.
pub fn gather(pid: u32) -> Facts {
    let tools = tools();
    let platform = if cfg!(target_os = "linux") {
        Platform::Linux
    } else if cfg!(target_os = "macos") {
        Platform::MacOs
    } else if cfg!(windows) {
        Platform::Windows
    } else {
        Platform::Other
    };
    let mut table = ProcessView::new();
    let host = table.host(pid, None);
    let tmux = host
        .as_ref()
        .filter(|_| tools.tmux)
        .and_then(|host| tmux_server(host, &mut table));
    let own_display = std::env::var("DISPLAY").ok().filter(|v| !v.is_empty());
    let own_wayland_display = std::env::var("WAYLAND_DISPLAY")
        .ok()
        .filter(|v| !v.is_empty());

    // Every host that might be raised: the session's process and the tmux clients.
    let hosts = strategy::terminal_hosts(host.as_ref(), tmux.as_ref());
    let displays = if matches!(platform, Platform::Linux | Platform::Other) {
        let names: BTreeSet<&String> = hosts
            .iter()
            .filter_map(|host| host.env.display.as_ref())
            .chain(own_display.as_ref())
            .collect();
        let pids: BTreeSet<u32> = hosts
            .iter()
            .flat_map(|host| host.ancestors.iter().map(|ancestor| ancestor.pid))
            .filter(|pid| *pid > 1)
            .collect();
        names
            .into_iter()
            .map(|name| x11_display(name, &tools, &pids))
            .collect()
    } else {
        Vec::new()
    };
    // The compositor session the terminal draws in: the Sway socket, else the Hyprland instance,
    // that the session's process (or a tmux client of its pane) inherited, else Slate's own.
    let inherited = |pick: fn(&Environment) -> Option<&String>, own: &str| {
        hosts
            .iter()
            .find_map(|host| pick(&host.env).cloned())
            .or_else(|| std::env::var(own).ok().filter(|v| !v.is_empty()))
    };
    let sway = tools
        .swaymsg
        .then(|| inherited(|env| env.swaysock.as_ref(), "SWAYSOCK"))
        .flatten();
    let hyprland = tools
        .hyprctl
        .then(|| {
            inherited(
                |env| env.hyprland_instance.as_ref(),
                "HYPRLAND_INSTANCE_SIGNATURE",
            )
        })
        .flatten();
    let compositor = match (sway, hyprland) {
        (Some(socket), _) => Some(compositor_windows(Compositor::Sway, &socket)),
        (None, Some(instance)) => Some(compositor_windows(Compositor::Hyprland, &instance)),
        (None, None) => None,
    };
    Facts {
        platform,
        pid: Some(pid),
        host,
        tmux,
        displays,
        compositor,
        kitty: Vec::new(),
        wezterm: None,
        kde: std::env::var("XDG_CURRENT_DESKTOP")
            .is_ok_and(|desktops| desktops.split(':').any(|d| d.eq_ignore_ascii_case("KDE"))),
        own_display,
        own_wayland_display,
        console_window: None,
        tools,
    }
}

/// The process table, read once, with command lines and environments read for the few processes
/// that are asked about.
struct ProcessView {
    system: System,
}

impl ProcessView {
    fn new() -> ProcessView {
        let mut system = System::new();
        system.refresh_processes_specifics(
            ProcessesToUpdate::All,
            true,
            ProcessRefreshKind::nothing().without_tasks(),
        );
        ProcessView { system }
    }

    /// Process `pid` with its ancestors, environment and terminal; `None` when it is gone. A tmux
    /// client's terminal is the one tmux reports, passed as `tty`.
    fn host(&mut self, pid: u32, tty: Option<String>) -> Option<Host> {
        let mut chain = Vec::new();
        let mut next = Some(Pid::from_u32(pid));
        while let Some(current) = next {
            if chain.len() >= MAX_ANCESTORS || chain.contains(&current) {
                break;
            }
            let Some(process) = self.system.process(current) else {
                break;
            };
            chain.push(current);
            next = process.parent();
        }
        if chain.is_empty() {
            return None;
        }
        self.system.refresh_processes_specifics(
            ProcessesToUpdate::Some(&chain),
            false,
            ProcessRefreshKind::nothing()
                .without_tasks()
                .with_cmd(UpdateKind::Always)
                .with_environ(UpdateKind::Always),
        );
        let ancestors: Vec<Ancestor> = chain
            .iter()
            .filter_map(|pid| self.system.process(*pid))
            .map(|process| Ancestor {
                pid: process.pid().as_u32(),
                ppid: process.parent().map(Pid::as_u32),
                name: process.name().to_string_lossy().into_owned(),
                cmd: process
                    .cmd()
                    .iter()
                    .map(|arg| arg.to_string_lossy().into_owned())
                    .collect(),
            })
            .collect();
        let environment = |pid: &Pid| {
            self.system.process(*pid).map(|process| {
                let entries: Vec<String> = process
                    .environ()
                    .iter()
                    .map(|entry| entry.to_string_lossy().into_owned())
                    .collect();
                Environment::from_entries(entries.iter().map(String::as_str))
            })
        };
        // A CLI started with a clean environment (`env -i`) inside a pane does not carry the
        // variables that say where it runs, but the shell it was started from does: the nearest
        // ancestor that names a terminal speaks for it, up to the terminal's own process, whose
        // variables (if any) are those of wherever the terminal itself was started.
        let mut env = environment(&chain[0]).unwrap_or_default();
        if !env.names_a_terminal() {
            for (ancestor, pid) in ancestors.iter().zip(&chain).skip(1) {
                if strategy::draws_terminals(&ancestor.program()) {
                    break;
                }
                if let Some(found) = environment(pid).filter(Environment::names_a_terminal) {
                    env = Environment {
                        display: env.display.or(found.display.clone()),
                        wayland_display: env.wayland_display.or(found.wayland_display.clone()),
                        ..found
                    };
                    break;
                }
            }
        }
        Some(Host {
            pid,
            ancestors,
            tty: tty.or_else(|| terminal_of(pid)),
            env,
        })
    }
}

/// The controlling terminal of `pid` (`tty::controlling_terminal`) on Linux, `ps -o tty=`
/// elsewhere on Unix.
fn terminal_of(pid: u32) -> Option<String> {
    if cfg!(target_os = "linux") {
        return crate::tty::controlling_terminal(pid);
    }
    if cfg!(unix) {
        let line = CommandLine {
            program: "ps".to_string(),
            args: vec!["-o".into(), "tty=".into(), "-p".into(), pid.to_string()],
            env: Vec::new(),
        };
        return strategy::parse_ps_tty(&run(&line).ok()?);
    }
    None
}

/// The tmux server whose pane has `host`'s terminal: the one its variables name first, then every
/// other server of this user (so a process started with `env -i` in a pane is found). Without
/// such a pane, the server its variables name, if any, for `strategy` to say what it saw.
fn tmux_server(host: &Host, table: &mut ProcessView) -> Option<TmuxFacts> {
    let hinted = host.env.tmux_socket().map(str::to_string);
    let mut named = None;
    let sockets = crate::tty::tmux_sockets(hinted.clone());
    let ordered = hinted
        .iter()
        .chain(sockets.iter().filter(|s| Some(*s) != hinted.as_ref()));
    // Only the panes of each server are asked for until one has the terminal; the clients (and
    // their ancestors) only of the server chosen.
    for socket in ordered {
        let facts = tmux_panes(socket);
        let has_pane = host
            .tty
            .as_deref()
            .is_some_and(|tty| facts.panes.iter().any(|pane| pane.tty == tty));
        if has_pane {
            return Some(tmux_clients(facts, table));
        }
        if hinted.as_deref() == Some(socket.as_str()) {
            named = Some(facts);
        }
    }
    named.map(|facts| tmux_clients(facts, table))
}

/// One tmux command to the server at `socket`, with a deadline.
fn ask_tmux(socket: &str, args: &[&str]) -> Result<String, String> {
    let mut all = vec!["-S".to_string(), socket.to_string()];
    all.extend(args.iter().map(|arg| arg.to_string()));
    run(&CommandLine {
        program: "tmux".to_string(),
        args: all,
        env: Vec::new(),
    })
}

/// The panes of the server at `socket`, or why it could not be asked.
fn tmux_panes(socket: &str) -> TmuxFacts {
    let mut facts = TmuxFacts {
        socket: socket.to_string(),
        ..TmuxFacts::default()
    };
    match ask_tmux(
        socket,
        &["list-panes", "-a", "-F", strategy::TMUX_PANE_FORMAT],
    ) {
        Ok(text) => facts.panes = strategy::parse_tmux_panes(&text),
        Err(error) => facts.error = Some(error),
    }
    facts
}

/// `facts` with the server's clients, each in its terminal. A server that could not be asked for
/// its panes is not asked again.
fn tmux_clients(mut facts: TmuxFacts, table: &mut ProcessView) -> TmuxFacts {
    if facts.error.is_some() {
        return facts;
    }
    // A server without clients answers `list-clients` with nothing, not an error.
    match ask_tmux(
        &facts.socket,
        &["list-clients", "-F", strategy::TMUX_CLIENT_FORMAT],
    ) {
        Ok(text) => facts.clients = strategy::parse_tmux_clients(&text),
        Err(error) => facts.error = Some(error),
    }
    for client in &mut facts.clients {
        client.host = table.host(client.pid, Some(client.tty.clone()));
    }
    facts
}

/// Lists the windows of X11 display `name`: every client window through `wmctrl -lp`, or, with
/// only xdotool, the windows of each pid that might own the session's terminal.
fn x11_display(name: &str, tools: &Tools, pids: &BTreeSet<u32>) -> X11Display {
    let env = vec![("DISPLAY".to_string(), name.to_string())];
    let mut display = X11Display {
        name: name.to_string(),
        ..X11Display::default()
    };
    if tools.wmctrl {
        let line = CommandLine {
            program: "wmctrl".to_string(),
            args: vec!["-lp".to_string()],
            env: env.clone(),
        };
        match run(&line) {
            Ok(text) => display.windows = strategy::parse_wmctrl(&text),
            Err(error) => display.error = Some(error),
        }
    } else if tools.xdotool {
        for pid in pids {
            let line = CommandLine {
                program: "xdotool".to_string(),
                args: vec!["search".into(), "--pid".into(), pid.to_string()],
                env: env.clone(),
            };
            // xdotool exits 1 when nothing matches, which is an answer, not a failure.
            if let Ok(text) = run(&line) {
                let windows: Vec<X11Window> = strategy::parse_xdotool_search(&text, *pid);
                display.windows.extend(windows);
            }
        }
    }
    display.active = active_window(&env, tools);
    display
}

/// The windows of the compositor's session at `socket` (`swaymsg -t get_tree`, or `hyprctl -j
/// clients` for the Hyprland instance `socket`), or why they could not be listed.
fn compositor_windows(compositor: Compositor, socket: &str) -> CompositorFacts {
    let listed = match compositor {
        Compositor::Sway => run(&CommandLine {
            program: "swaymsg".to_string(),
            args: ["-s", socket, "-t", "get_tree"].map(String::from).to_vec(),
            env: Vec::new(),
        })
        .and_then(|text| strategy::parse_sway_tree(&text)),
        Compositor::Hyprland => run(&CommandLine {
            program: "hyprctl".to_string(),
            args: ["-j", "clients"].map(String::from).to_vec(),
            env: vec![(
                "HYPRLAND_INSTANCE_SIGNATURE".to_string(),
                socket.to_string(),
            )],
        })
        .and_then(|text| strategy::parse_hyprland_clients(&text)),
    };
    let (windows, error) = match listed {
        Ok(windows) => (windows, None),
        Err(error) => (Vec::new(), Some(error)),
    };
    CompositorFacts {
        compositor,
        socket: socket.to_string(),
        windows,
        error,
    }
}

/// The display's focused window, through xdotool or else xprop; `None` when neither tells (no
/// window manager that keeps `_NET_ACTIVE_WINDOW`, or neither tool).
fn active_window(env: &[(String, String)], tools: &Tools) -> Option<u64> {
    let (program, args): (&str, &[&str]) = if tools.xdotool {
        ("xdotool", &["getactivewindow"])
    } else if on_path("xprop") {
        ("xprop", &["-root", "_NET_ACTIVE_WINDOW"])
    } else {
        return None;
    };
    let line = CommandLine {
        program: program.to_string(),
        args: args.iter().map(|arg| (*arg).to_string()).collect(),
        env: env.to_vec(),
    };
    run(&line)
        .ok()
        .and_then(|text| strategy::parse_active_window(&text))
}

/// How long the script stays loaded: KWin may read its file and run it after `start` returns.
const KWIN_SCRIPT_RUNS_WITHIN: Duration = Duration::from_millis(500);

/// Loads [`strategy::kwin_script`] into KWin over the session bus `bus` (else Slate's own), runs
/// it, and unloads it: `dbus-send` calls to `org.kde.KWin /Scripting`, each with the helpers'
/// deadline. The script's file is Slate's own (created new, owner-only) and removed after.
#[cfg(unix)]
fn kwin_activate(bus: Option<&str>, pids: &[u32]) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    let name = format!("slate-focus-{}-{stamp}", std::process::id());
    let path = std::env::temp_dir().join(format!("{name}.js"));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .and_then(|mut file| file.write_all(strategy::kwin_script(pids).as_bytes()))
        .map_err(|error| format!("cannot write the script {}: {error}", path.display()))?;
    let call = |method: &str, args: Vec<String>| {
        let mut line = CommandLine {
            program: "dbus-send".to_string(),
            args: [
                "--session",
                "--print-reply",
                "--dest=org.kde.KWin",
                "/Scripting",
            ]
            .map(String::from)
            .to_vec(),
            env: Vec::new(),
        };
        line.args.push(format!("org.kde.kwin.Scripting.{method}"));
        line.args.extend(args);
        if let Some(bus) = bus {
            line.env
                .push(("DBUS_SESSION_BUS_ADDRESS".to_string(), bus.to_string()));
        }
        run(&line)
    };
    let ran = call(
        "loadScript",
        vec![
            format!("string:{}", path.display()),
            format!("string:{name}"),
        ],
    )
    .and_then(|_| call("start", Vec::new()));
    if ran.is_ok() {
        std::thread::sleep(KWIN_SCRIPT_RUNS_WITHIN);
    }
    let unloaded = call("unloadScript", vec![format!("string:{name}")]);
    let _ = std::fs::remove_file(&path);
    ran.and(unloaded).map(|_| ())
}

#[cfg(not(unix))]
fn kwin_activate(_: Option<&str>, _: &[u32]) -> Result<(), String> {
    Err("KWin is not reached on this platform".to_string())
}

/// True when `program` is an executable file in a `PATH` folder.
fn on_path(program: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|folder| {
        let candidate = folder.join(program);
        is_executable(&candidate)
            || cfg!(windows) && is_executable(&candidate.with_extension("exe"))
    })
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// Runs a helper program with a deadline and returns its standard output. A non-zero exit, a
/// program that cannot start and one that outlives the deadline are errors, described in one line.
fn run(line: &CommandLine) -> Result<String, String> {
    let mut command = Command::new(&line.program);
    command
        .args(&line.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in &line.env {
        command.env(name, value);
    }
    let mut child = command
        .spawn()
        .map_err(|err| format!("cannot run {}: {err}", line.program))?;
    // Reading in threads keeps a chatty program from blocking on a full pipe while we wait. The
    // answers come back over channels with a deadline, because a grandchild that inherited a pipe
    // could hold it open after the program itself is gone.
    let out = read_in_thread(child.stdout.take());
    let err = read_in_thread(child.stderr.take());
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < TOOL_DEADLINE => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{} did not finish within {} s",
                    line.program,
                    TOOL_DEADLINE.as_secs()
                ));
            }
            Err(err) => return Err(format!("cannot wait for {}: {err}", line.program)),
        }
    };
    let stdout = out.recv_timeout(TOOL_DEADLINE).unwrap_or_default();
    let stderr = err.recv_timeout(TOOL_DEADLINE).unwrap_or_default();
    if status.success() {
        Ok(stdout)
    } else {
        let detail = stderr.trim();
        Err(if detail.is_empty() {
            format!("{} exited with {status}", line.program)
        } else {
            format!("{} exited with {status}: {detail}", line.program)
        })
    }
}

/// Reads a pipe to its end on its own thread and sends the text.
fn read_in_thread(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(pipe) = pipe {
            // What is past the limit is never read; the program is killed at its deadline.
            let _ = pipe.take(OUTPUT_LIMIT).read_to_end(&mut bytes);
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let _ = sender.send(text);
    });
    receiver
}
