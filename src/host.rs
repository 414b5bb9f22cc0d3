//! `slate run -- <cli> …`: runs an agent CLI in a pseudo-terminal Slate owns, and tells the engine
//! what that terminal shows.
//!
//! The host relays everything transparently: our terminal's size (and every resize) becomes the
//! child's, our stdin goes to the child byte for byte in raw mode (so Ctrl-C reaches it as the
//! raw byte), its output goes to our stdout untouched, SIGTERM, SIGHUP, SIGINT and SIGQUIT sent to
//! us are passed on, and the child's exit code becomes ours. Raw mode is restored on every way out,
//! a panic included. On the side it observes the title sequences in the output (`osc`), when the
//! terminal last drew, and the child's pid, and reports changes (never a stream per byte) to a
//! running `slate serve` or app with `POST /hosted`, through the one `client`. When no engine
//! answers it stays silent: the CLI must work exactly as it would without Slate.
//!
//! It also keeps a model of the child's screen (`screen`, sized as the terminal and following
//! its resizes), fed a copy of the output on a thread of its own so the relay only copies each
//! chunk, and listens on a private control socket (`control`) through which Slate reads that
//! screen and types into the child; the socket's path goes in the reports as `control`. This
//! module decides no state; the tracker's rules read what it reports, and sensing
//! (`terminals::hosted`) reads the screen.

#[cfg(unix)]
pub mod control;
pub mod osc;
pub mod screen;

use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use portable_pty::{native_pty_system, CommandBuilder, MasterPty, PtySize};

use crate::client::{Client, ClientError};
use crate::clock::system_clock;
use slate_core::agents::{self, program_name};
use slate_core::model::{AgentKind, ProcessInfo, Timestamp};

/// Reports go out at most this often; a draw is reported again only this long after the last
/// reported one, so a terminal that keeps drawing costs about one report a second.
pub const REPORT_EVERY: Duration = Duration::from_secs(1);

/// How long the host waits for the child's last output after it exited.
const DRAIN: Duration = Duration::from_millis(500);

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("nothing to run: give a command after `slate run --`")]
    NoCommand,
    #[error("nothing to run: the program's name is empty")]
    EmptyProgram,
    #[error("cannot start `{0}`: not found in PATH")]
    NotFound(String),
    #[error("cannot open a pseudo-terminal: {0}")]
    Pty(String),
    #[error("cannot start {program}: {detail}")]
    Spawn { program: String, detail: String },
    #[error("cannot wait for the program: {0}")]
    Wait(std::io::Error),
}

/// What the host tells the engine about its session.
#[derive(Debug, Clone)]
pub struct Identity {
    pub agent: Option<AgentKind>,
    pub pid: Option<u32>,
    pub cwd: Option<String>,
    /// The control socket's path, when `slate run` listens on one (`control`).
    pub control: Option<String>,
}

/// The agent a command line starts: the built-in agents' own recognition first, then the
/// program names their descriptions list.
pub fn agent_of(argv: &[String], pid: u32, cwd: Option<&str>) -> Option<AgentKind> {
    let first = argv.first()?;
    let process = ProcessInfo {
        pid,
        ppid: None,
        name: program_name(first),
        exe: Some(first.clone()),
        cmd: argv.to_vec(),
        cwd: cwd.map(str::to_string),
        start_time: Timestamp::from_millis(0),
        start_ticks: None,
    };
    if let Some(recognised) = agents::BUILT_IN.recognise(&process) {
        return Some(recognised.agent);
    }
    agents::BUILT_IN.by_program(&program_name(first))
}

/// What the relay saw, in the order it saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    Title(Timestamp, String),
    Drew(Timestamp),
}

/// Turns what the relay saw into reports: titles are batched, draws are thinned to one a
/// `REPORT_EVERY`, and nothing is reported while nothing changes.
#[derive(Debug, Default)]
pub struct Reports {
    titles: Vec<(Timestamp, String)>,
    last_title: Option<String>,
    last_draw: Option<Timestamp>,
    reported_draw: Option<Timestamp>,
    last_sent: Option<Timestamp>,
}

/// One report's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub titles: Vec<(Timestamp, String)>,
    pub last_draw: Option<Timestamp>,
}

impl Reports {
    pub fn see(&mut self, seen: Seen) {
        match seen {
            Seen::Title(at, title) => {
                // A title set again to what it already reads is no change.
                if self.last_title.as_deref() != Some(title.as_str()) {
                    self.last_title = Some(title.clone());
                    self.titles.push((at, title));
                }
            }
            Seen::Drew(at) => self.last_draw = Some(self.last_draw.map_or(at, |d| d.max(at))),
        }
    }

    /// The report due at `now`, if one is.
    pub fn due(&mut self, now: Timestamp) -> Option<Report> {
        if self
            .last_sent
            .is_some_and(|sent| now < sent.plus(REPORT_EVERY))
        {
            return None;
        }
        let draw_news = match (self.last_draw, self.reported_draw) {
            (Some(_), None) => true,
            (Some(drawn), Some(reported)) => drawn >= reported.plus(REPORT_EVERY),
            (None, _) => false,
        };
        if self.titles.is_empty() && !draw_news {
            return None;
        }
        self.last_sent = Some(now);
        self.reported_draw = self.last_draw;
        Some(Report {
            titles: std::mem::take(&mut self.titles),
            last_draw: self.last_draw,
        })
    }

    /// Whatever has not been reported yet, regardless of the pace: the last report before the
    /// host exits.
    pub fn flush(&mut self) -> Option<Report> {
        if !self.pending() {
            return None;
        }
        self.reported_draw = self.last_draw;
        Some(Report {
            titles: std::mem::take(&mut self.titles),
            last_draw: self.last_draw,
        })
    }

    /// True when something seen has not been reported yet.
    pub fn pending(&self) -> bool {
        !self.titles.is_empty() || self.last_draw != self.reported_draw
    }
}

/// The JSON body of `POST /hosted`.
pub fn report_body(identity: &Identity, report: &Report) -> serde_json::Value {
    serde_json::json!({
        "agent": identity.agent,
        "pid": identity.pid,
        "cwd": identity.cwd,
        "control": identity.control,
        "titles": report.titles,
        "last_draw": report.last_draw,
    })
}

/// Sends one report. Any failure is returned and ignored by the caller: reporting is best effort.
pub fn post(client: &Client, body: &serde_json::Value) -> Result<u16, ClientError> {
    client.post("/hosted", Some(body), Duration::from_secs(2))
}

/// Runs `argv` in a pseudo-terminal, relays it, reports to the running Slate through `client`
/// when there is one, and returns the child's exit code.
/// The screen model and the control socket are kept only when `control_folder` names the
/// private runtime folder to listen in; without it (or when the socket cannot be made) the host
/// relays and reports as before, and the session's screen cannot be read.
pub fn run(
    argv: &[String],
    client: Option<Client>,
    control_folder: Option<&Path>,
) -> Result<i32, HostError> {
    let program = argv.first().ok_or(HostError::NoCommand)?;
    if program.trim().is_empty() {
        return Err(HostError::EmptyProgram);
    }
    // A bare name is looked up in PATH; when it is nowhere, one short line says so (the
    // spawner's own error lists every folder of PATH).
    if Path::new(program).components().count() == 1 && !in_path(program) {
        return Err(HostError::NotFound(program.clone()));
    }
    let pair = native_pty_system()
        .openpty(terminal_size())
        .map_err(|err| HostError::Pty(err.to_string()))?;
    let cwd = std::env::current_dir().ok();
    // Like a shell, a program named with a separator is a path, not a name to look up.
    let named_path = Path::new(program);
    let resolved = match &cwd {
        Some(cwd) if named_path.is_relative() && named_path.components().count() > 1 => {
            cwd.join(named_path).into_os_string()
        }
        _ => program.into(),
    };
    let mut command = CommandBuilder::new(resolved);
    command.args(&argv[1..]);
    if let Some(cwd) = &cwd {
        command.cwd(cwd);
    }
    let mut child = pair
        .slave
        .spawn_command(command)
        .map_err(|err| HostError::Spawn {
            program: program.clone(),
            detail: err.to_string(),
        })?;
    // The child holds the terminal's other end now; ours must close so its exit ends our reads.
    drop(pair.slave);
    let pid = child.process_id();
    let reader = pair
        .master
        .try_clone_reader()
        .map_err(|err| HostError::Pty(err.to_string()))?;
    let writer: Typist = Arc::new(Mutex::new(
        pair.master
            .take_writer()
            .map_err(|err| HostError::Pty(err.to_string()))?,
    ));
    let eof = end_of_file(pair.master.as_ref());
    let size = terminal_size();
    let master = Arc::new(Mutex::new(pair.master));

    let raw = RawMode::enable();
    // The screen model and the socket that reads it, when there is a folder to listen in.
    let (model, feed, control) = match (control_folder, pid) {
        (Some(folder), Some(pid)) => listen(folder, pid, size, Arc::clone(&writer))
            .map_or((None, None, None), |kept| {
                (Some(kept.0), Some(kept.1), Some(kept.2))
            }),
        _ => (None, None, None),
    };
    let (seen_tx, seen_rx) = mpsc::channel::<Seen>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    std::thread::spawn(move || relay_output(reader, seen_tx, done_tx, feed));
    let typing = Arc::clone(&writer);
    std::thread::spawn(move || relay_input(typing, eof));
    follow_signals(Arc::clone(&master), model, pid);
    let (reported_tx, reported_rx) = mpsc::channel::<()>();
    if let Some(client) = client {
        let cwd = cwd.as_deref().map(Path::to_string_lossy).map(String::from);
        let identity = Identity {
            agent: agent_of(argv, pid.unwrap_or(0), cwd.as_deref()),
            pid,
            cwd,
            control: control
                .as_ref()
                .map(|control| control.path().to_string_lossy().into_owned()),
        };
        std::thread::spawn(move || {
            report_loop(seen_rx, identity, client);
            let _ = reported_tx.send(());
        });
    } else {
        // Nobody to tell: drain the channel so the relay never blocks on it, and say when the
        // relay has ended, as the reporter would.
        std::thread::spawn(move || {
            while seen_rx.recv().is_ok() {}
            let _ = reported_tx.send(());
        });
    }

    let code = wait_for(child.as_mut())?;
    if done_rx.recv_timeout(DRAIN).is_err() {
        tracing::debug!(
            "the output did not end within {DRAIN:?} of the exit; a process the program left \
             may hold its terminal"
        );
    }
    // The output relay has ended (or been given up on): let the last report go out.
    if reported_rx.recv_timeout(DRAIN).is_err() {
        tracing::debug!("the last report did not go out within {DRAIN:?}");
    }
    let _ = std::io::stdout().flush();
    drop(raw);
    // The socket goes before the program's terminal: nothing may type into it any more.
    drop(control);
    drop(master);
    Ok(code)
}

/// Waits for the child and returns the code a shell would give for it: its exit code, or
/// 128 + n when signal n ended it. portable-pty names a signal only by its description, so on
/// Unix the child is reaped here, where the number is known.
#[cfg(unix)]
fn wait_for(child: &mut (dyn portable_pty::Child + Send + Sync)) -> Result<i32, HostError> {
    use nix::errno::Errno;
    use nix::sys::wait::{waitpid, WaitStatus};
    let Some(pid) = child.process_id().and_then(|pid| i32::try_from(pid).ok()) else {
        let status = child.wait().map_err(HostError::Wait)?;
        return Ok(status.exit_code() as i32);
    };
    loop {
        match waitpid(nix::unistd::Pid::from_raw(pid), None) {
            Ok(WaitStatus::Exited(_, code)) => return Ok(code),
            Ok(WaitStatus::Signaled(_, signal, _)) => return Ok(128 + signal as i32),
            Ok(_) | Err(Errno::EINTR) => continue,
            Err(err) => return Err(HostError::Wait(err.into())),
        }
    }
}

/// Elsewhere the exit code is all there is; a child ended otherwise exits 1.
#[cfg(not(unix))]
fn wait_for(child: &mut (dyn portable_pty::Child + Send + Sync)) -> Result<i32, HostError> {
    let status = child.wait().map_err(HostError::Wait)?;
    Ok(if status.signal().is_some() && status.exit_code() == 0 {
        1
    } else {
        status.exit_code() as i32
    })
}

/// True when PATH holds an executable file named `name`.
#[cfg(unix)]
fn in_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|folder| {
        std::fs::metadata(folder.join(name))
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    })
}

/// Elsewhere names take extensions (PATHEXT): the spawner looks them up itself.
#[cfg(not(unix))]
fn in_path(_name: &str) -> bool {
    true
}

/// The terminal's end-of-file character: what it says, else Ctrl-D.
fn end_of_file(master: &(dyn MasterPty + Send)) -> u8 {
    #[cfg(unix)]
    {
        use nix::sys::termios::SpecialCharacterIndices;
        let eof = master
            .get_termios()
            .map(|termios| termios.control_chars[SpecialCharacterIndices::VEOF as usize]);
        if let Some(eof) = eof.filter(|&eof| eof != 0) {
            return eof;
        }
    }
    #[cfg(not(unix))]
    let _ = master;
    0x04
}

/// Our terminal's size, or 80×24 when stdout is not a terminal.
fn terminal_size() -> PtySize {
    let (cols, rows) = crossterm::terminal::size().unwrap_or((80, 24));
    PtySize {
        rows: rows.max(1),
        cols: cols.max(1),
        pixel_width: 0,
        pixel_height: 0,
    }
}

/// Gives the child's terminal (and the screen model, when there is one) our terminal's size.
fn resize(master: &Mutex<Box<dyn MasterPty + Send>>, model: Option<&Model>) {
    let size = terminal_size();
    if let Ok(master) = master.lock() {
        let _ = master.resize(size);
    }
    if let Some(Ok(mut model)) = model.map(|model| model.lock()) {
        model.resize(size.rows, size.cols);
    }
}

fn relay_output(
    mut reader: Box<dyn Read + Send>,
    seen: mpsc::Sender<Seen>,
    done: mpsc::Sender<()>,
    feed: Option<ModelFeed>,
) {
    let mut scanner = osc::TitleScanner::new();
    pass_through(
        &mut reader,
        &mut std::io::stdout(),
        feed.as_ref(),
        |bytes| {
            let now = system_clock();
            let _ = seen.send(Seen::Drew(now));
            for title in scanner.feed(bytes) {
                let _ = seen.send(Seen::Title(now, title));
            }
        },
    );
    let _ = done.send(());
}

/// The relay's hot path: each chunk read from the program goes to `out` at once, then a copy to
/// the screen model's feed (when there is one), then to `also`. Returns how many bytes passed,
/// when the reader ends or `out` fails.
pub fn pass_through(
    reader: &mut impl Read,
    out: &mut impl Write,
    feed: Option<&ModelFeed>,
    mut also: impl FnMut(&[u8]),
) -> u64 {
    let mut buffer = [0u8; 8192];
    let mut passed = 0u64;
    loop {
        let read = match reader.read(&mut buffer) {
            Ok(0) => break,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
            Ok(read) => read,
        };
        let bytes = &buffer[..read];
        if out.write_all(bytes).and_then(|()| out.flush()).is_err() {
            break;
        }
        passed += read as u64;
        if let Some(feed) = feed {
            feed.give(bytes);
        }
        also(bytes);
    }
    passed
}

/// The most output the screen model may fall behind by; past it, output is not shown to the
/// model (the relay never waits for it) until it has caught up. Agents redraw their screens, so
/// the model recovers at the next redraw.
pub const MODEL_BEHIND: usize = 8 << 20;

/// The screen model a hosted terminal keeps, shared between its feeder, the resizer and the
/// control socket.
pub type Model = Arc<Mutex<screen::ScreenModel>>;

/// Hands the relay's output to the screen model, which draws it on a thread of its own, so the
/// relay's cost is a copy and a channel send.
#[derive(Debug)]
pub struct ModelFeed {
    chunks: mpsc::Sender<Vec<u8>>,
    pending: Arc<std::sync::atomic::AtomicUsize>,
}

impl ModelFeed {
    /// Starts the thread that draws into `model`.
    pub fn start(model: Model) -> std::io::Result<ModelFeed> {
        use std::sync::atomic::Ordering;
        let (chunks, inbox) = mpsc::channel::<Vec<u8>>();
        let pending = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let drawn = Arc::clone(&pending);
        std::thread::Builder::new()
            .name("slate-screen".to_string())
            .spawn(move || {
                while let Ok(chunk) = inbox.recv() {
                    let Ok(mut model) = model.lock() else {
                        return;
                    };
                    // Everything already waiting is drawn under one lock.
                    let mut size = chunk.len();
                    model.feed(&chunk);
                    while let Ok(more) = inbox.try_recv() {
                        size += more.len();
                        model.feed(&more);
                    }
                    drop(model);
                    drawn.fetch_sub(size, Ordering::SeqCst);
                }
            })?;
        Ok(ModelFeed { chunks, pending })
    }

    /// Gives the model a copy of `bytes`, unless it is too far behind.
    pub fn give(&self, bytes: &[u8]) {
        use std::sync::atomic::Ordering;
        if self.pending.load(Ordering::SeqCst) > MODEL_BEHIND {
            return;
        }
        self.pending.fetch_add(bytes.len(), Ordering::SeqCst);
        if self.chunks.send(bytes.to_vec()).is_err() {
            self.pending.fetch_sub(bytes.len(), Ordering::SeqCst);
        }
    }

    /// True when the model has drawn everything it was given.
    pub fn caught_up(&self) -> bool {
        self.pending.load(std::sync::atomic::Ordering::SeqCst) == 0
    }
}

/// The program's terminal's input, shared by the input relay and the control socket.
type Typist = Arc<Mutex<Box<dyn Write + Send>>>;

/// The hosted terminal as the control socket sees it.
#[cfg(unix)]
struct Hosted {
    model: Model,
    typist: Typist,
}

#[cfg(unix)]
impl control::Terminal for Hosted {
    fn read(&self, colours: bool) -> (Option<String>, String) {
        match self.model.lock() {
            Ok(model) => (model.title().map(str::to_string), model.text(colours)),
            Err(_) => (None, String::new()),
        }
    }

    fn write(&self, bytes: &[u8]) -> std::io::Result<()> {
        let mut typist = self
            .typist
            .lock()
            .map_err(|_| std::io::Error::other("the terminal's input is gone"))?;
        typist.write_all(bytes).and_then(|()| typist.flush())
    }
}

/// Starts the screen model (sized as the terminal) and the control socket in `folder` for the
/// program with pid `pid`. When either cannot start, the host goes on without both.
#[cfg(unix)]
fn listen(
    folder: &Path,
    pid: u32,
    size: PtySize,
    typist: Typist,
) -> Option<(Model, ModelFeed, control::Control)> {
    let model: Model = Arc::new(Mutex::new(screen::ScreenModel::new(size.rows, size.cols)));
    let feed = ModelFeed::start(Arc::clone(&model))
        .map_err(|err| tracing::debug!(%err, "cannot start the screen model"))
        .ok()?;
    let hosted = Arc::new(Hosted {
        model: Arc::clone(&model),
        typist,
    });
    match control::serve(folder, pid, hosted) {
        Ok(control) => Some((model, feed, control)),
        Err(err) => {
            tracing::debug!(%err, "no control socket: the session's screen cannot be read");
            None
        }
    }
}

/// Elsewhere there is no control socket (it is a Unix socket).
#[cfg(not(unix))]
fn listen(
    _folder: &Path,
    _pid: u32,
    _size: PtySize,
    _typist: Typist,
) -> Option<(Model, ModelFeed, NoControl)> {
    None
}

#[cfg(not(unix))]
struct NoControl;

#[cfg(not(unix))]
impl NoControl {
    fn path(&self) -> &Path {
        Path::new("")
    }
}

/// Relays our input to the child byte for byte. When our input ends, the child's input ends
/// too, as on a terminal: its end-of-file character at the start of a line, or, after a partial
/// line, twice (the first ends the line, the second is the end of file).
fn relay_input(writer: Typist, eof: u8) {
    let mut stdin = std::io::stdin();
    let mut buffer = [0u8; 4096];
    let mut line_start = true;
    let ended = loop {
        match stdin.read(&mut buffer) {
            Ok(0) => break true,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break true,
            Ok(read) => {
                let typed = writer.lock().map_err(|_| ()).and_then(|mut writer| {
                    writer
                        .write_all(&buffer[..read])
                        .and_then(|()| writer.flush())
                        .map_err(|_| ())
                });
                if typed.is_err() {
                    break false;
                }
                line_start = matches!(buffer[read - 1], b'\n' | b'\r');
            }
        }
    };
    // On Unix, dropping portable-pty's writer types a newline and an end of file into the
    // terminal, and the terminal echoes the newline into the output. The end of file is typed
    // here instead, and the writer left open: the process ends soon after the child does, and
    // the descriptor with it. Elsewhere closing the writer is how the input ends.
    #[cfg(unix)]
    {
        if ended {
            let end: &[u8] = if line_start { &[eof] } else { &[eof, eof] };
            if let Ok(mut writer) = writer.lock() {
                let _ = writer.write_all(end).and_then(|()| writer.flush());
            }
        }
        std::mem::forget(writer);
    }
    #[cfg(not(unix))]
    let _ = (ended, line_start, eof);
}

fn report_loop(seen: mpsc::Receiver<Seen>, identity: Identity, client: Client) {
    let mut reports = Reports::default();
    // After a failed post, wait before trying again: no engine may be running at all.
    let mut quiet_until: Option<Timestamp> = None;
    loop {
        let wait = if reports.pending() {
            REPORT_EVERY / 4
        } else {
            Duration::from_secs(3600)
        };
        match seen.recv_timeout(wait) {
            Ok(event) => reports.see(event),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                if let Some(report) = reports.flush() {
                    if quiet_until.is_none() {
                        let _ = post(&client, &report_body(&identity, &report));
                    }
                }
                return;
            }
        }
        while let Ok(event) = seen.try_recv() {
            reports.see(event);
        }
        let now = system_clock();
        if quiet_until.is_some_and(|until| now < until) {
            continue;
        }
        if let Some(report) = reports.due(now) {
            let body = report_body(&identity, &report);
            match post(&client, &body) {
                Ok(_) => quiet_until = None,
                Err(err) => {
                    tracing::debug!(%err, "no engine took the hosted report (none runs, or it refused)");
                    quiet_until = Some(now.plus(Duration::from_secs(5)));
                }
            }
        }
    }
}

/// Raw mode on our terminal for as long as this lives, and restored on a panic too.
struct RawMode {
    enabled: bool,
}

impl RawMode {
    fn enable() -> RawMode {
        if !std::io::stdin().is_terminal() {
            return RawMode { enabled: false };
        }
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let _ = crossterm::terminal::disable_raw_mode();
            previous(info);
        }));
        RawMode {
            enabled: crossterm::terminal::enable_raw_mode().is_ok(),
        }
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        if self.enabled {
            let _ = crossterm::terminal::disable_raw_mode();
        }
    }
}

/// Follows resizes and passes termination signals to the child, on a thread of its own.
#[cfg(unix)]
fn follow_signals(
    master: Arc<Mutex<Box<dyn MasterPty + Send>>>,
    model: Option<Model>,
    pid: Option<u32>,
) {
    use tokio::signal::unix::{signal, SignalKind};
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            tracing::warn!(%err, "cannot follow signals");
            return;
        }
    };
    let forward = move |signal: nix::sys::signal::Signal| {
        if let Some(pid) = pid.and_then(|pid| i32::try_from(pid).ok()) {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal);
        }
    };
    std::thread::spawn(move || {
        runtime.block_on(async move {
            let kinds = [
                SignalKind::window_change(),
                SignalKind::terminate(),
                SignalKind::hangup(),
                SignalKind::interrupt(),
                SignalKind::quit(),
            ];
            let mut streams = Vec::new();
            for kind in kinds {
                match signal(kind) {
                    Ok(stream) => streams.push(stream),
                    Err(err) => {
                        tracing::warn!(%err, "cannot follow a signal");
                        return;
                    }
                }
            }
            let [winch, term, hup, int, quit] = &mut streams[..] else {
                return;
            };
            use nix::sys::signal::Signal;
            loop {
                tokio::select! {
                    Some(()) = winch.recv() => resize(&master, model.as_ref()),
                    Some(()) = term.recv() => forward(Signal::SIGTERM),
                    Some(()) = hup.recv() => forward(Signal::SIGHUP),
                    Some(()) = int.recv() => forward(Signal::SIGINT),
                    Some(()) = quit.recv() => forward(Signal::SIGQUIT),
                    else => return,
                }
            }
        });
    });
}

/// Windows has no SIGWINCH: the console's size is polled instead, and console control events
/// reach the child through ConPTY.
#[cfg(not(unix))]
fn follow_signals(
    master: Arc<Mutex<Box<dyn MasterPty + Send>>>,
    model: Option<Model>,
    _pid: Option<u32>,
) {
    std::thread::spawn(move || {
        let mut last = crossterm::terminal::size().ok();
        loop {
            std::thread::sleep(Duration::from_millis(250));
            let now = crossterm::terminal::size().ok();
            if now != last {
                last = now;
                resize(&master, model.as_ref());
            }
        }
    });
}
