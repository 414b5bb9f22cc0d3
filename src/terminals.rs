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
mod once;
pub mod panes;
pub mod proof;
mod sensing;
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
pub use once::{locate_once, read_once, Once, Readings};
use panes::{Address, PaneText, Server};
pub use sensing::{Delivery, Sensing};

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
