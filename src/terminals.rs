//! Reading the terminals of sessions: tmux panes, kitty windows and WezTerm panes, from outside
//! (docs/states.md §1 "sensed terminal"), and the screens `slate run` keeps of the sessions it
//! hosts, through its control socket (`hosted`).
//!
//! For every live agent process, [`locate`] finds its terminal through `focus`'s facts (the
//! process's environment, or its nearest ancestor's) and `panes::locate`. [`read`] reads the
//! panes of sessions whose reading could change a decision (the tracker says which): the title
//! and the visible screen, one call per tmux server for as many panes as fit tmux's command
//! length (`display -p` and `capture-pane -p` for each), kitty's remote-control `ls` and
//! `get-text` straight over its socket, `wezterm cli list` and `get-text`, and a hosted
//! terminal's `{"read": true}` over its control socket (the session's hosted report names the
//! socket). Each call has a 500 ms limit from its start to its answer (`child` for the programs,
//! `socket` for the sockets, connecting included: a listener that accepts nothing is given up on
//! too), and servers are read in parallel, so a hung tmux server or a hung kitty costs at most
//! that. The screen is
//! read with the agent's screen grammar at once and only its kind and a dialog's summary leave
//! this module: a screen's text is never kept, never logged and never served.
//!
//! [`Sensing`] is the live loop's side: a worker thread that runs the locating and the reading off
//! the loop and hands the results back as an event, which pids are located where, which reads
//! are in flight, and the pacing: a pane is read at most once a second (a read still in flight
//! past its second is not asked for again, nor looked at more often), and a terminal that
//! failed is asked again only after a pause, its failure counted once as a problem.
//! [`locate_once`] and [`read_once`] are the one-shot commands' side: they locate and read once,
//! on the caller's thread, and return readings for the engine to apply (`engine::sense_once`).
//! This module drives no engine and decides no state (`tracker` does, from the readings) and parses nothing
//! itself (`panes` and `agents::screens` do).

pub mod hosted;
pub mod panes;
pub mod proof;
#[cfg(unix)]
pub mod typing;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::process::Command;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use crate::agents::screens::{self, Dialog, Screen, ScreenSeen};
use crate::agents::ProcessRole;
use crate::focus::strategy::CommandLine;
use crate::model::{
    AgentKind, Problem, ProblemKind, SessionKey, TerminalKind, TerminalView, Timestamp,
};
use crate::tracker::{Input, SeenProcess, Sensed};
use panes::{Address, PaneText, Server};

pub use crate::socket::READ_LIMIT;

/// A pane is read at most this often.
pub const READ_EVERY: Duration = Duration::from_secs(1);

/// How long a terminal that could not be read is left alone before it is asked again.
pub const RETRY_AFTER: Duration = Duration::from_secs(15);

/// Where a process's terminal is: how Slate sees it, and where to read it when it can, with how
/// that pane was proved to be the process's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub view: TerminalView,
    pub address: Option<Address>,
    /// The process's terminal device, and the relay between it and the pane, when there is an
    /// address.
    pub proof: Option<proof::Proof>,
    /// True when no pane was proved because a tmux server did not answer: it is asked again
    /// after [`RETRY_AFTER`].
    pub retry: bool,
}

/// Finds the terminal of each process in `pids` by its controlling terminal
/// (`terminals::proof`): the tmux pane whose terminal it is, on any tmux server of this user, or
/// the kitty window or WezTerm pane its variables name, once that window's terminal is found to
/// be the process's.
pub fn locate(pids: &[u32]) -> Vec<(u32, Located)> {
    let tools = crate::focus::tools();
    let hosts = crate::focus::hosts(pids);
    let servers = if tools.tmux && !hosts.is_empty() {
        let hints = hosts
            .iter()
            .filter_map(|(_, host)| host.as_ref()?.env.tmux_socket().map(str::to_string));
        proof::tmux_panes(&proof::tmux_sockets(hints))
    } else {
        proof::TmuxPanes::default()
    };
    let panes = &servers.panes;
    hosts
        .into_iter()
        .map(|(pid, host)| {
            let tty = host
                .as_ref()
                .map(|host| proof::ProcessTty::read(pid, &host.ancestors))
                .unwrap_or_default();
            let proved = proof::prove(&tty, panes).map(|(pane, proof)| {
                let address = Address::Tmux {
                    socket: pane.socket.clone(),
                    pane: pane.pane.clone(),
                };
                (address, proof)
            });
            let (view, address) = panes::locate(
                host.as_ref().map(|host| &host.env),
                &tools,
                proved.as_ref().map(|(address, _)| address),
            );
            // A server that did not answer may hold the pane: the one the process's variables
            // name, or, for a process in a terminal of its own, any of them.
            let hinted = host
                .as_ref()
                .and_then(|host| host.env.tmux_socket().map(str::to_string));
            let unanswered = servers.unanswered.iter().find(|(socket, _)| {
                hinted
                    .as_deref()
                    .is_none_or(|hinted| hinted == socket.as_str())
            });
            let located = match (proved, address, unanswered) {
                (Some((address, proof)), _, _) => Located {
                    view,
                    address: Some(address),
                    proof: Some(proof),
                    retry: false,
                },
                (None, Some(address), _) => confirm(address, tty.tty),
                (None, None, Some((socket, why))) if tty.tty != 0 => Located {
                    view: TerminalView::unread(
                        TerminalKind::Tmux,
                        None,
                        format!(
                            "the tmux server at {socket} did not answer ({why}), so its pane \
                             could not be proved; asked again shortly"
                        ),
                    ),
                    address: None,
                    proof: None,
                    retry: true,
                },
                (None, None, _) => Located {
                    view,
                    address: None,
                    proof: None,
                    retry: false,
                },
            };
            (pid, located)
        })
        .collect()
}

/// A kitty window or WezTerm pane named by a process's variables, kept only when its terminal is
/// the process's own (`tty`): a variable is inherited by whatever a window's shell starts.
fn confirm(address: Address, tty: u64) -> Located {
    let owner = match &address {
        Address::Kitty { listen_on, window } => {
            kitty_command(listen_on, "ls", serde_json::json!({}))
                .map_err(|why| format!("kitty: {why}"))
                .and_then(|json| panes::parse_kitty_children(&json).map_err(|e| e.to_string()))
                .map(|children| {
                    children
                        .get(window)
                        .and_then(|pid| proof::Stat::of(*pid))
                        .map(|stat| stat.tty)
                })
        }
        Address::Wezterm { socket, pane } => run(&panes::wezterm_list(socket.as_deref()))
            .map_err(|why| format!("wezterm: {why}"))
            .and_then(|json| panes::parse_wezterm_ttys(&json).map_err(|e| e.to_string()))
            .map(|ttys| ttys.get(pane).and_then(|path| proof::device_of(path))),
        Address::Tmux { .. } | Address::Hosted { .. } => Ok(None),
    };
    let pane = Some(address.pane().to_string());
    match owner {
        Ok(Some(device)) if proof::same_device(device, tty) => Located {
            view: address.view(),
            address: Some(address),
            proof: Some(proof::Proof::Direct { tty }),
            retry: false,
        },
        Ok(_) => Located {
            view: TerminalView::unread(
                address.kind(),
                pane,
                "its variables name this window, but its terminal is not that window's (started \
                 from it into another terminal?): Slate reads and answers only a window whose \
                 terminal is the process's own",
            ),
            address: None,
            proof: None,
            retry: false,
        },
        Err(why) => Located {
            view: TerminalView::unread(
                address.kind(),
                pane,
                format!("could not be read to confirm it is the process's terminal: {why}"),
            ),
            address: None,
            proof: None,
            retry: true,
        },
    }
}

/// One pane to read, for one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub key: SessionKey,
    pub address: Address,
}

/// What a read of one session's pane gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Read {
        key: SessionKey,
        address: Address,
        sensed: Sensed,
    },
    Failed {
        key: SessionKey,
        address: Address,
        why: String,
    },
}

impl Outcome {
    pub fn key(&self) -> &SessionKey {
        match self {
            Outcome::Read { key, .. } | Outcome::Failed { key, .. } => key,
        }
    }
}

/// Reads every job's pane, each terminal server on a thread of its own, and stamps each reading
/// with `clock`'s time when it was read.
pub fn read(jobs: Vec<Job>, clock: fn() -> Timestamp) -> Vec<Outcome> {
    let mut servers: BTreeMap<Server, Vec<Job>> = BTreeMap::new();
    for job in jobs {
        servers.entry(job.address.server()).or_default().push(job);
    }
    std::thread::scope(|scope| {
        let running: Vec<_> = servers
            .into_iter()
            .map(|(server, jobs)| scope.spawn(move || read_server(&server, jobs, clock)))
            .collect();
        running
            .into_iter()
            .flat_map(|thread| thread.join().unwrap_or_default())
            .collect()
    })
}

/// True when the agent marks its highlighted option only by colour, so its screen is read with
/// its colours.
fn wants_colours(agent: AgentKind) -> bool {
    screens::grammar(agent).is_some_and(|grammar| grammar.markers.is_empty())
}

/// Reads the panes of one terminal server.
fn read_server(server: &Server, jobs: Vec<Job>, clock: fn() -> Timestamp) -> Vec<Outcome> {
    match server {
        Server::Tmux(socket) => read_tmux(socket, jobs, clock),
        Server::Kitty(listen_on) => read_listed(
            jobs,
            clock,
            "kitty",
            || kitty_command(listen_on, "ls", serde_json::json!({})),
            panes::parse_kitty_titles,
            |window, colours| {
                kitty_command(
                    listen_on,
                    "get-text",
                    panes::kitty_get_text(window, colours),
                )
            },
        ),
        Server::Wezterm(socket) => read_listed(
            jobs,
            clock,
            "wezterm",
            || run(&panes::wezterm_list(socket.as_deref())),
            panes::parse_wezterm_titles,
            |pane, colours| run(&panes::wezterm_get_text(socket.as_deref(), pane, colours)),
        ),
        Server::Hosted(socket) => jobs
            .into_iter()
            .map(|job| {
                let colours = wants_colours(job.key.agent);
                match hosted::read(std::path::Path::new(socket), colours) {
                    Ok(pane) => reading(job, pane, clock()),
                    Err(why) => failed(job, why),
                }
            })
            .collect(),
    }
}

/// The panes of one tmux server, in as few calls as fit tmux's command length
/// (`panes::tmux_batches`). When a call fails (a pane closed since it was located makes tmux
/// stop the whole sequence), each pane of that call is read alone, so one gone pane does not
/// blind the others. A call that runs out of time is not tried pane by pane: the server is not
/// answering, so every pane not read yet fails at once.
fn read_tmux(socket: &str, jobs: Vec<Job>, clock: fn() -> Timestamp) -> Vec<Outcome> {
    let panes: Vec<(String, bool)> = jobs
        .iter()
        .map(|job| (job.address.pane().to_string(), wants_colours(job.key.agent)))
        .collect();
    let mut jobs = jobs.into_iter();
    let mut outcomes = Vec::new();
    let mut stuck: Option<String> = None;
    for batch in panes::tmux_batches(&panes, panes::TMUX_COMMAND_MOST) {
        let batch_jobs: Vec<Job> = jobs.by_ref().take(batch.len()).collect();
        let batch_panes = &panes[batch];
        if let Some(why) = &stuck {
            outcomes.extend(batch_jobs.into_iter().map(|job| failed(job, why.clone())));
            continue;
        }
        match run_child(&panes::tmux_read(socket, batch_panes)) {
            Ok(text) => outcomes.extend(tmux_outcomes(&text, batch_jobs, batch_panes, clock)),
            Err(error) if error.is_timeout() => {
                let why = format!("tmux: {error}");
                outcomes.extend(batch_jobs.into_iter().map(|job| failed(job, why.clone())));
                stuck = Some(why);
            }
            Err(error) if batch_jobs.len() == 1 => {
                outcomes.extend(
                    batch_jobs
                        .into_iter()
                        .map(|job| failed(job, format!("tmux: {error}"))),
                );
            }
            Err(_) => {
                for (job, pane) in batch_jobs.into_iter().zip(batch_panes) {
                    if let Some(why) = &stuck {
                        outcomes.push(failed(job, why.clone()));
                        continue;
                    }
                    let one = std::slice::from_ref(pane);
                    match run_child(&panes::tmux_read(socket, one)) {
                        Ok(text) => outcomes.extend(tmux_outcomes(&text, vec![job], one, clock)),
                        Err(error) => {
                            let why = format!("tmux: {error}");
                            if error.is_timeout() {
                                stuck = Some(why.clone());
                            }
                            outcomes.push(failed(job, why));
                        }
                    }
                }
            }
        }
    }
    outcomes
}

/// The outcomes of one tmux read of `panes` (the panes of `jobs`, in order) that printed `text`.
fn tmux_outcomes(
    text: &str,
    jobs: Vec<Job>,
    panes: &[(String, bool)],
    clock: fn() -> Timestamp,
) -> Vec<Outcome> {
    let at = clock();
    let ids: Vec<String> = panes.iter().map(|(pane, _)| pane.clone()).collect();
    let parsed = panes::parse_tmux_read(text, &ids);
    jobs.into_iter()
        .zip(parsed)
        .map(|(job, (_, parsed))| match parsed {
            Ok(pane) => reading(job, pane, at),
            Err(error) => failed(job, error.to_string()),
        })
        .collect()
}

/// The panes of a kitty or a WezTerm: one listing for the titles, then the screen of each pane.
fn read_listed(
    jobs: Vec<Job>,
    clock: fn() -> Timestamp,
    program: &str,
    list: impl Fn() -> Result<String, String>,
    titles: fn(&str) -> Result<BTreeMap<String, String>, panes::ParseError>,
    get_text: impl Fn(&str, bool) -> Result<String, String>,
) -> Vec<Outcome> {
    let titles = match list().and_then(|text| titles(&text).map_err(|e| e.to_string())) {
        Ok(titles) => titles,
        Err(why) => {
            return jobs
                .into_iter()
                .map(|job| failed(job, format!("{program}: {why}")))
                .collect()
        }
    };
    jobs.into_iter()
        .map(|job| {
            let pane = job.address.pane().to_string();
            let Some(title) = titles.get(&pane).cloned() else {
                return failed(job, format!("{program}: window {pane} is gone"));
            };
            let agent = job.key.agent;
            // A title that says a dialog waits decides the status, but the screen is read all the
            // same: its dialog, with its options, is what an answer checks against.
            let screen = if screens::grammar(agent).is_none() {
                String::new()
            } else {
                match get_text(&pane, wants_colours(agent)) {
                    Ok(screen) => screen,
                    Err(why) => return failed(job, format!("{program}: {why}")),
                }
            };
            let title = Some(title).filter(|title| !title.is_empty());
            reading(job, PaneText { title, screen }, clock())
        })
        .collect()
}

/// One remote-control command to the kitty listening on `listen_on` (`unix:<path>`, or
/// `unix:@<name>` for an abstract socket on Linux), straight over its socket, so no `kitty @`
/// process starts (one costs about a tenth of a second of CPU); the whole exchange, connecting
/// included, has [`READ_LIMIT`]. Returns the answer's data.
#[cfg(unix)]
fn kitty_command(listen_on: &str, cmd: &str, payload: serde_json::Value) -> Result<String, String> {
    /// The most of an answer that is read: `ls` lists every window's environment.
    const MOST: usize = 16 << 20;
    let deadline = Instant::now() + READ_LIMIT;
    let mut stream = kitty_connect(listen_on, deadline)?;
    crate::socket::write_within(&mut stream, &panes::kitty_frame(cmd, payload), deadline)
        .map_err(|error| format!("cannot send to kitty: {error}"))?;
    let mut answer = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    while !panes::kitty_frame_done(&answer) {
        if answer.len() > MOST {
            return Err(format!("kitty's answer is longer than {MOST} bytes"));
        }
        match crate::socket::read_some_within(&mut stream, &mut chunk, deadline) {
            Ok(0) => break,
            Ok(read) => answer.extend_from_slice(&chunk[..read]),
            Err(error) if error.kind() == std::io::ErrorKind::TimedOut => {
                return Err(format!(
                    "kitty did not answer within {} ms",
                    READ_LIMIT.as_millis()
                ))
            }
            Err(error) => return Err(format!("kitty did not answer: {error}")),
        }
    }
    panes::parse_kitty_frame(&answer).map_err(|error| error.to_string())
}

/// A connection to the kitty listening on `listen_on`, made by `deadline`: a kitty that accepts
/// no connection (hung, its listen queue full) is given up on then.
#[cfg(unix)]
fn kitty_connect(
    listen_on: &str,
    deadline: Instant,
) -> Result<std::os::unix::net::UnixStream, String> {
    let Some(place) = listen_on.strip_prefix("unix:") else {
        return Err(format!(
            "cannot reach {listen_on}: only unix sockets are read"
        ));
    };
    let place = match place.strip_prefix('@') {
        Some(name) => crate::socket::Place::Abstract(name.as_bytes()),
        None => crate::socket::Place::Path(std::path::Path::new(place)),
    };
    crate::socket::connect_within(place, deadline).map_err(|error| {
        if error.kind() == std::io::ErrorKind::TimedOut {
            format!(
                "the kitty at {listen_on} accepted no connection within {} ms",
                READ_LIMIT.as_millis()
            )
        } else {
            format!("no kitty listens on {listen_on}: {error}")
        }
    })
}

/// One remote-control command that kitty answers nothing to (`send-text`: kitty 0.26 sends no
/// answer for it, so none is asked for): connected and written within [`READ_LIMIT`], then done.
#[cfg(unix)]
fn kitty_tell(listen_on: &str, cmd: &str, payload: serde_json::Value) -> Result<(), String> {
    let deadline = Instant::now() + READ_LIMIT;
    let mut stream = kitty_connect(listen_on, deadline)?;
    crate::socket::write_within(
        &mut stream,
        &panes::kitty_frame_without_answer(cmd, payload),
        deadline,
    )
    .map_err(|error| format!("cannot send to kitty: {error}"))
}

#[cfg(not(unix))]
fn kitty_command(listen_on: &str, _: &str, _: serde_json::Value) -> Result<String, String> {
    Err(format!("cannot reach {listen_on} on this platform"))
}

#[cfg(not(unix))]
fn kitty_tell(listen_on: &str, _: &str, _: serde_json::Value) -> Result<(), String> {
    Err(format!("cannot reach {listen_on} on this platform"))
}

/// Reads the screen of the pane at `address` now, on the caller's thread, with `agent`'s grammar:
/// the whole reading, a dialog with its options included, for an answer to check against. The
/// screen's text ends here.
pub fn screen_now(address: &Address, agent: AgentKind) -> Result<Screen, String> {
    let colours = wants_colours(agent);
    let text = match address {
        Address::Tmux { socket, pane } => {
            let output = run(&panes::tmux_read(socket, &[(pane.clone(), colours)]))
                .map_err(|why| format!("tmux: {why}"))?;
            let mut parsed = panes::parse_tmux_read(&output, std::slice::from_ref(pane));
            match parsed.pop() {
                Some((_, Ok(text))) => text.screen,
                Some((_, Err(error))) => return Err(format!("tmux: {error}")),
                None => return Err("tmux: nothing was read".to_string()),
            }
        }
        Address::Kitty { listen_on, window } => kitty_command(
            listen_on,
            "get-text",
            panes::kitty_get_text(window, colours),
        )
        .map_err(|why| format!("kitty: {why}"))?,
        Address::Wezterm { socket, pane } => {
            run(&panes::wezterm_get_text(socket.as_deref(), pane, colours))
                .map_err(|why| format!("wezterm: {why}"))?
        }
        Address::Hosted { socket } => hosted::read(std::path::Path::new(socket), colours)?.screen,
    };
    Ok(screens::read_screen(agent, &text))
}

/// A tmux pane's state now (its mode and its terminal's device), within [`READ_LIMIT`], for the
/// check before typing.
pub fn tmux_pane_state(socket: &str, pane: &str) -> Result<PaneState, String> {
    let text = run(&proof::tmux_state(socket, pane)).map_err(|why| format!("tmux: {why}"))?;
    let state = proof::parse_tmux_state(&text, pane)?;
    let tty = proof::device_of(&state.tty)
        .ok_or_else(|| format!("{} is not a terminal here", state.tty))?;
    Ok(PaneState {
        in_mode: state.in_mode,
        tty,
    })
}

/// What the check before typing reads of a tmux pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaneState {
    pub in_mode: bool,
    /// Its terminal's device number.
    pub tty: u64,
}

/// A pane's text read into what Slate keeps: its title and its screen's kind and summary. The
/// screen's text ends here.
fn reading(job: Job, pane: PaneText, at: Timestamp) -> Outcome {
    let Job { key, address } = job;
    let screen = if pane.screen.is_empty() {
        Screen::Unknown
    } else {
        screens::read_screen(key.agent, &pane.screen)
    };
    tracing::debug!(session = %key, screen = screen.kind().as_str(), "read a terminal");
    Outcome::Read {
        key,
        address,
        sensed: Sensed::of(at, pane.title, &screen),
    }
}

fn failed(job: Job, why: String) -> Outcome {
    Outcome::Failed {
        key: job.key,
        address: job.address,
        why,
    }
}

/// Runs one terminal call within [`READ_LIMIT`] and returns what it printed.
fn run(line: &CommandLine) -> Result<String, String> {
    run_child(line).map_err(|error| error.to_string())
}

/// [`run`], saying whether a failure was the call running out of time.
fn run_child(line: &CommandLine) -> Result<String, crate::child::ChildError> {
    let mut command = Command::new(&line.program);
    command.args(&line.args);
    for (name, value) in &line.env {
        command.env(name, value);
    }
    let output = crate::child::output_within(&mut command, READ_LIMIT)?;
    Ok(String::from_utf8_lossy(&output).into_owned())
}

/// True for a process whose session's terminal Slate may read: an interactive or print-mode
/// agent process (background servers and helpers have no terminal of their own).
fn has_terminal(process: &SeenProcess) -> bool {
    matches!(
        process.recognised.role,
        ProcessRole::Interactive | ProcessRole::Print
    )
}

/// Where the live agent processes' terminals are, located once for a one-shot command
/// (`engine::sense_once` drives the two steps: [`locate_once`], then [`read_once`]).
#[derive(Debug, Default)]
pub struct Once {
    located: HashMap<u32, Located>,
    /// A terminal Slate cannot read at all, counted once.
    pub problems: Vec<Problem>,
}

impl Once {
    /// How each process's terminal is seen, for `Input::Terminals`.
    pub fn views(&self) -> Vec<(u32, TerminalView)> {
        self.located
            .iter()
            .map(|(pid, located)| (*pid, located.view.clone()))
            .collect()
    }
}

/// Locates the terminal of every process of `processes` that has one.
pub fn locate_once(processes: &[SeenProcess]) -> Once {
    let pids: Vec<u32> = processes
        .iter()
        .filter(|process| has_terminal(process))
        .map(|process| process.info.pid)
        .collect();
    let located: HashMap<u32, Located> = locate(&pids).into_iter().collect();
    let problems = located
        .iter()
        .filter_map(|(pid, found)| unreadable_at_once(*pid, &found.view))
        .collect();
    Once { located, problems }
}

/// What one read of the panes the tracker wants gives: the readings and the terminals' views
/// as they stand after it, for the engine to apply, and the terminals that could not be read.
#[derive(Debug, Default)]
pub struct Readings {
    pub inputs: Vec<Input>,
    pub problems: Vec<Problem>,
}

/// Reads once, on the caller's thread, the panes of `wanted` (each session with its process,
/// `Tracker::terminals_wanted`): a hosted session's through its control socket (`hosted`, its
/// socket by session), any other's where `once` located it. A decisive title or screen decides
/// on this one read; rules that need time wait for a live engine.
pub fn read_once(
    once: &Once,
    wanted: Vec<(SessionKey, u32)>,
    hosted: &HashMap<SessionKey, String>,
    clock: fn() -> Timestamp,
) -> Readings {
    let jobs: Vec<Job> = wanted
        .into_iter()
        .filter_map(|(key, pid)| {
            let address = match hosted.get(&key) {
                Some(socket) => Address::Hosted {
                    socket: socket.clone(),
                },
                None => once.located.get(&pid)?.address.clone()?,
            };
            Some(Job { key, address })
        })
        .collect();
    let mut readings = Readings::default();
    if jobs.is_empty() {
        return readings;
    }
    let mut views: HashMap<u32, TerminalView> = once.views().into_iter().collect();
    for outcome in read(jobs, clock) {
        match outcome {
            Outcome::Read { key, sensed, .. } => readings.inputs.push(Input::Sensed {
                key,
                reading: Some(sensed),
            }),
            Outcome::Failed { key, address, why } => {
                readings.problems.push(unreadable(&address, &why));
                for (pid, located) in &once.located {
                    if located.address.as_ref() == Some(&address) {
                        views.insert(*pid, unread_view(&address, &why));
                    }
                }
                readings.inputs.push(Input::Sensed { key, reading: None });
            }
        }
    }
    readings
        .inputs
        .push(Input::Terminals(views.into_iter().collect()));
    readings
}

/// The problem a terminal that could not be read is counted as.
fn unreadable(address: &Address, why: &str) -> Problem {
    Problem::new(ProblemKind::TerminalUnreadable, describe(address), why)
}

pub fn describe(address: &Address) -> String {
    match address {
        Address::Tmux { socket, pane } => format!("tmux pane {pane} on {socket}"),
        Address::Kitty { listen_on, window } => format!("kitty window {window} at {listen_on}"),
        Address::Wezterm { socket, pane } => match socket {
            Some(socket) => format!("WezTerm pane {pane} at {socket}"),
            None => format!("WezTerm pane {pane}"),
        },
        Address::Hosted { socket } => format!("the hosted terminal at {socket}"),
    }
}

/// The problem a terminal found unreadable as soon as it is located is counted as: a kitty window
/// whose kitty does not listen for remote control. (A plain terminal is no problem: nothing was
/// set up to be read.)
fn unreadable_at_once(pid: u32, view: &TerminalView) -> Option<Problem> {
    (view.kind == TerminalKind::Kitty && !view.sensed).then(|| {
        Problem::new(
            ProblemKind::TerminalUnreadable,
            format!("process {pid}"),
            view.note.clone().unwrap_or_default(),
        )
    })
}

/// The view of a pane Slate could not read.
fn unread_view(address: &Address, why: &str) -> TerminalView {
    TerminalView::unread(
        address.kind(),
        Some(address.pane().to_string()),
        format!("could not be read: {why}"),
    )
}

/// What the worker hands back to the loop.
#[derive(Debug)]
pub enum Delivery {
    /// Where the terminals of these processes are.
    Located(Vec<(u32, Located)>),
    /// The readings of these panes.
    Read(Vec<Outcome>),
}

enum Request {
    Locate(Vec<u32>),
    /// Panes to read, each with whether the tracker holds no reading of it yet (then its reading
    /// is handed back even when it did not change).
    Read(Vec<(Job, bool)>),
}

/// The worker's side of the reads: it hands back only what changed, so a pane that shows the same
/// title and screen as a second ago costs the loop nothing.
#[derive(Default)]
struct Reader {
    /// What each session's pane showed at its last reading handed back.
    last: HashMap<SessionKey, (Option<String>, ScreenSeen, Option<Dialog>)>,
}

impl Reader {
    fn read(
        &mut self,
        jobs: Vec<(Job, bool)>,
        clock: fn() -> Timestamp,
        in_flight: &Mutex<HashSet<SessionKey>>,
    ) -> Vec<Outcome> {
        let fresh: HashSet<SessionKey> = jobs
            .iter()
            .filter(|(_, fresh)| *fresh)
            .map(|(job, _)| job.key.clone())
            .collect();
        let keys: HashSet<SessionKey> = jobs.iter().map(|(job, _)| job.key.clone()).collect();
        let outcomes = read(jobs.into_iter().map(|(job, _)| job).collect(), clock);
        if let Ok(mut in_flight) = in_flight.lock() {
            in_flight.retain(|key| !keys.contains(key));
        }
        self.last.retain(|key, _| keys.contains(key));
        outcomes
            .into_iter()
            .filter(|outcome| match outcome {
                Outcome::Read { key, sensed, .. } => {
                    let seen = (
                        sensed.title.clone(),
                        sensed.screen.clone(),
                        sensed.dialog.clone(),
                    );
                    let news = fresh.contains(key) || self.last.get(key) != Some(&seen);
                    self.last.insert(key.clone(), seen);
                    news
                }
                Outcome::Failed { key, .. } => {
                    self.last.remove(key);
                    true
                }
            })
            .collect()
    }
}

/// The live loop's side of sensing: the worker thread, what is located where, the reads in
/// flight and their pacing. Every method takes the time it is called at, so it holds no clock of
/// its own besides the worker's stamp on each reading.
pub struct Sensing {
    requests: mpsc::Sender<Request>,
    /// Each live agent process's terminal, with its start time (a pid reused by another process
    /// is located again).
    located: HashMap<u32, (Timestamp, Located)>,
    /// Pids sent to be located, not answered yet, with their start times.
    locating: HashMap<u32, Timestamp>,
    /// Pids whose pane could not be proved because a terminal did not answer, and when they are
    /// located again.
    relocate: HashMap<u32, Instant>,
    /// Sessions whose read is in flight; the worker takes them off when it has read them.
    in_flight: Arc<Mutex<HashSet<SessionKey>>>,
    /// Sessions the tracker holds a reading for.
    held: HashSet<SessionKey>,
    /// Panes that could not be read, and when they may be asked again.
    resting: HashMap<Address, Instant>,
    /// When reads were last sent.
    last_sent: Option<Instant>,
    /// The hosted sessions whose screens are read through `slate run`'s control socket, with its
    /// address: it comes before wherever their processes' terminals are located.
    hosted: HashMap<SessionKey, Address>,
}

impl Sensing {
    /// Starts the worker; `deliver` is called on its thread with each result (the live loop
    /// sends it to itself as an event).
    pub fn start(clock: fn() -> Timestamp, deliver: impl Fn(Delivery) + Send + 'static) -> Sensing {
        let (requests, inbox) = mpsc::channel::<Request>();
        let in_flight = Arc::new(Mutex::new(HashSet::new()));
        let reading = Arc::clone(&in_flight);
        let spawned = std::thread::Builder::new()
            .name("slate-terminals".to_string())
            .spawn(move || {
                let mut reader = Reader::default();
                for request in inbox {
                    match request {
                        Request::Locate(pids) => deliver(Delivery::Located(locate(&pids))),
                        Request::Read(jobs) => {
                            let outcomes = reader.read(jobs, clock, &reading);
                            if !outcomes.is_empty() {
                                deliver(Delivery::Read(outcomes));
                            }
                        }
                    }
                }
            });
        if let Err(error) = spawned {
            tracing::warn!("cannot start the terminal reader, so no terminal is read: {error}");
        }
        Sensing::over(requests, in_flight)
    }

    /// The loop's side over a worker that takes `requests` and takes sessions off `in_flight`
    /// when it has read them.
    fn over(
        requests: mpsc::Sender<Request>,
        in_flight: Arc<Mutex<HashSet<SessionKey>>>,
    ) -> Sensing {
        Sensing {
            requests,
            located: HashMap::new(),
            locating: HashMap::new(),
            relocate: HashMap::new(),
            in_flight,
            held: HashSet::new(),
            resting: HashMap::new(),
            last_sent: None,
            hosted: HashMap::new(),
        }
    }

    /// The control sockets of the hosted sessions to read (`Tracker::hosted_controls`), given
    /// before each [`Sensing::read_due`] and [`Sensing::next_read`].
    pub fn set_hosted(&mut self, controls: HashMap<SessionKey, String>) {
        self.hosted = controls
            .into_iter()
            .map(|(key, socket)| (key, Address::Hosted { socket }))
            .collect();
    }

    /// Where the terminal of session `key`, vouched for by `pid`, is read.
    fn address(&self, key: &SessionKey, pid: u32) -> Option<&Address> {
        self.hosted
            .get(key)
            .or_else(|| self.located.get(&pid)?.1.address.as_ref())
    }

    /// A process scan saw `processes` at `now`: new agent processes are sent to be located, and
    /// so are those whose pane a terminal that did not answer kept from being proved, once their
    /// pause is over; those gone are forgotten. Returns the tracker's input when the terminals it
    /// knows changed.
    pub fn scanned(&mut self, processes: &[SeenProcess], now: Instant) -> Vec<Input> {
        let live: HashMap<u32, Timestamp> = processes
            .iter()
            .filter(|process| has_terminal(process))
            .map(|process| (process.info.pid, process.info.start_time))
            .collect();
        let before = self.located.len();
        self.located
            .retain(|pid, (started, _)| live.get(pid) == Some(started));
        self.locating
            .retain(|pid, started| live.get(pid) == Some(started));
        self.relocate.retain(|pid, _| live.contains_key(pid));
        let due: HashSet<u32> = self
            .relocate
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(pid, _)| *pid)
            .collect();
        self.relocate.retain(|pid, _| !due.contains(pid));
        let new: Vec<(u32, Timestamp)> = live
            .iter()
            .filter(|(pid, _)| {
                (!self.located.contains_key(pid) || due.contains(pid))
                    && !self.locating.contains_key(pid)
            })
            .map(|(pid, started)| (*pid, *started))
            .collect();
        if !new.is_empty() {
            self.locating.extend(new.iter().copied());
            let pids = new.into_iter().map(|(pid, _)| pid).collect();
            let _ = self.requests.send(Request::Locate(pids));
        }
        if self.located.len() == before {
            return Vec::new();
        }
        vec![self.views()]
    }

    /// The terminals as the tracker should know them.
    fn views(&self) -> Input {
        Input::Terminals(
            self.located
                .iter()
                .map(|(pid, (_, located))| (*pid, located.view.clone()))
                .collect(),
        )
    }

    /// Sends the reads that are due at `now` for the sessions the tracker wants read, and
    /// returns the inputs that forget the readings of sessions no longer read.
    pub fn read_due(&mut self, wanted: &[(SessionKey, u32)], now: Instant) -> Vec<Input> {
        let wanted_keys: HashSet<&SessionKey> = wanted.iter().map(|(key, _)| key).collect();
        let dropped: Vec<SessionKey> = self
            .held
            .iter()
            .filter(|key| !wanted_keys.contains(key))
            .cloned()
            .collect();
        let mut inputs = Vec::new();
        for key in dropped {
            self.held.remove(&key);
            inputs.push(Input::Sensed { key, reading: None });
        }
        if self.last_sent.is_some_and(|sent| now < sent + READ_EVERY) {
            return inputs;
        }
        self.resting.retain(|_, until| now < *until);
        let Ok(mut in_flight) = self.in_flight.lock() else {
            return inputs;
        };
        let jobs: Vec<(Job, bool)> = wanted
            .iter()
            .filter(|(key, _)| !in_flight.contains(key))
            .filter_map(|(key, pid)| {
                let address = self.address(key, *pid)?.clone();
                let job = Job {
                    key: key.clone(),
                    address,
                };
                let fresh = !self.held.contains(key);
                (!self.resting.contains_key(&job.address)).then_some((job, fresh))
            })
            .collect();
        if !jobs.is_empty() {
            in_flight.extend(jobs.iter().map(|(job, _)| job.key.clone()));
            self.last_sent = Some(now);
            let _ = self.requests.send(Request::Read(jobs));
        }
        drop(in_flight);
        inputs
    }

    /// When the next reads are due: while some session is wanted read, a second after the last
    /// reads were sent; at once when a reading is held for a session no longer wanted, so it is
    /// forgotten; never otherwise. A session whose read is still in flight is not due before a
    /// second from `now`: a read that runs over its second never makes the loop wake at once
    /// over and over (`read_due` would send nothing for it), and the loop looks again at most
    /// once a second until it returns.
    pub fn next_read(&self, wanted: &[(SessionKey, u32)], now: Instant) -> Option<Instant> {
        let stale = self
            .held
            .iter()
            .any(|key| !wanted.iter().any(|(wanted, _)| wanted == key));
        if stale {
            return Some(now);
        }
        let in_flight = self.in_flight.lock().ok()?;
        // Only panes Slate can read count; a pane resting after a failure counts from when its
        // rest ends.
        let ready = wanted
            .iter()
            .filter_map(|(key, pid)| Some((key, self.address(key, *pid)?)))
            .map(|(key, address)| {
                if in_flight.contains(key) {
                    now + READ_EVERY
                } else {
                    self.resting.get(address).copied().unwrap_or(now)
                }
            })
            .min()?;
        let paced = self.last_sent.map_or(now, |sent| sent + READ_EVERY);
        Some(ready.max(paced).max(now))
    }

    /// What the worker handed back, as the tracker's inputs and the problems to count.
    pub fn delivered(&mut self, delivery: Delivery, now: Instant) -> (Vec<Input>, Vec<Problem>) {
        let mut inputs = Vec::new();
        let mut problems = Vec::new();
        match delivery {
            Delivery::Located(located) => {
                for (pid, found) in located {
                    // A process that exited while it was located is not kept.
                    let Some(started) = self.locating.remove(&pid) else {
                        continue;
                    };
                    if let Some(problem) = unreadable_at_once(pid, &found.view) {
                        problems.push(problem);
                    }
                    if found.retry {
                        self.relocate.insert(pid, now + RETRY_AFTER);
                    }
                    self.located.insert(pid, (started, found));
                }
                inputs.push(self.views());
            }
            Delivery::Read(outcomes) => {
                let mut views_changed = false;
                for outcome in outcomes {
                    match outcome {
                        Outcome::Read {
                            key,
                            address,
                            sensed,
                        } => {
                            // A pane read again after a failure is seen again.
                            for (_, located) in self.located.values_mut() {
                                if located.address.as_ref() == Some(&address)
                                    && !located.view.sensed
                                {
                                    located.view = address.view();
                                    views_changed = true;
                                }
                            }
                            self.held.insert(key.clone());
                            inputs.push(Input::Sensed {
                                key,
                                reading: Some(sensed),
                            });
                        }
                        Outcome::Failed { key, address, why } => {
                            tracing::debug!(session = %key, "cannot read its terminal: {why}");
                            if !self.resting.contains_key(&address) {
                                problems.push(unreadable(&address, &why));
                            }
                            self.resting.insert(address.clone(), now + RETRY_AFTER);
                            for (_, located) in self.located.values_mut() {
                                if located.address.as_ref() == Some(&address) {
                                    views_changed |= located.view.sensed;
                                    located.view = unread_view(&address, &why);
                                }
                            }
                            self.held.remove(&key);
                            inputs.push(Input::Sensed { key, reading: None });
                        }
                    }
                }
                if views_changed {
                    inputs.push(self.views());
                }
            }
        }
        (inputs, problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `Sensing` whose worker never answers: every read sent stays in flight.
    fn stuck() -> (Sensing, mpsc::Receiver<Request>) {
        let (requests, inbox) = mpsc::channel();
        let sensing = Sensing::over(requests, Arc::new(Mutex::new(HashSet::new())));
        (sensing, inbox)
    }

    // See: issue 20, item 5 (a tmux server stopped with SIGSTOP made the loop wake 12,454 times
    // in 10 s).
    #[test]
    fn a_read_in_flight_past_its_second_is_not_due_at_once() {
        let (mut sensing, inbox) = stuck();
        let key = SessionKey::new(AgentKind::CODEX, "stuck-1");
        let socket = "/run/user/1000/slate/4242.sock".to_string();
        sensing.set_hosted(HashMap::from([(key.clone(), socket)]));
        let wanted = [(key, 4242)];
        let start = Instant::now();
        assert!(sensing.read_due(&wanted, start).is_empty());
        assert!(matches!(inbox.try_recv(), Ok(Request::Read(jobs)) if jobs.len() == 1));
        assert_eq!(sensing.next_read(&wanted, start), Some(start + READ_EVERY));
        // The read never comes back: each time the loop is woken, the next read is a second
        // away, never now, and nothing more is sent.
        for step in 1..20 {
            let now = start + READ_EVERY + Duration::from_millis(100 * step);
            sensing.read_due(&wanted, now);
            let next = sensing.next_read(&wanted, now).expect("still wanted");
            assert!(next >= now + READ_EVERY, "due {:?} after now", next - now);
        }
        assert!(inbox.try_recv().is_err(), "a read was sent again");
    }

    fn codex(pid: u32) -> SeenProcess {
        SeenProcess {
            info: crate::model::ProcessInfo {
                pid,
                ppid: None,
                name: "codex".to_string(),
                exe: None,
                cmd: vec!["codex".to_string()],
                cwd: None,
                start_time: Timestamp::from_millis(1_000),
                start_ticks: None,
            },
            recognised: crate::agents::AgentProcess {
                agent: AgentKind::CODEX,
                role: ProcessRole::Interactive,
                folder_arg: None,
                session_arg: None,
            },
            folder: None,
        }
    }

    fn located(retry: bool) -> Located {
        Located {
            view: TerminalView::unread(TerminalKind::Tmux, None, "no answer"),
            address: None,
            proof: None,
            retry,
        }
    }

    // A tmux server too slow to answer when a process was located (a loaded machine) must not
    // leave the process unsensed for as long as it lives.
    #[test]
    fn a_process_whose_server_did_not_answer_is_located_again_after_a_pause() {
        let (mut sensing, inbox) = stuck();
        let start = Instant::now();
        let processes = [codex(10), codex(11)];
        sensing.scanned(&processes, start);
        assert!(matches!(inbox.try_recv(), Ok(Request::Locate(pids)) if pids.len() == 2));
        sensing.delivered(
            Delivery::Located(vec![(10, located(true)), (11, located(false))]),
            start,
        );
        // Not before the pause is over, and then only the process that may have a pane.
        sensing.scanned(&processes, start + RETRY_AFTER / 2);
        assert!(inbox.try_recv().is_err(), "located again too soon");
        sensing.scanned(&processes, start + RETRY_AFTER);
        assert!(matches!(inbox.try_recv(), Ok(Request::Locate(pids)) if pids == [10]));
        // Located well this time: no more.
        sensing.delivered(Delivery::Located(vec![(10, located(false))]), start);
        sensing.scanned(&processes, start + RETRY_AFTER * 3);
        assert!(inbox.try_recv().is_err(), "located again without a reason");
    }
}
