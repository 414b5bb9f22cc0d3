//! Reading the terminals of sessions: tmux panes, kitty windows and WezTerm panes, from outside
//! (docs/states.md §1 "sensed terminal"), and the screens `slate run` keeps of the sessions it
//! hosts, through its control socket, each through its backend (`terminals::backend`'s
//! `Backend`, one module each: `tmux`, `kitty`, `wezterm`, `hosted`), listed in [`BUILT_IN`] or
//! in a test's own [`Backends`].
//!
//! For every live agent process, [`Backends::locate`] finds its terminal through `focus`'s facts
//! (the process's environment, or its nearest ancestor's): the pane whose terminal device is the
//! process's controlling terminal among the panes the backends list (`proof`), or else the pane
//! a backend's variables name, kept only once its terminal device is found to be the process's.
//! [`read`] reads the panes of sessions whose reading could change a decision (the tracker says
//! which), each server's panes through its backend on a thread of its own, so a hung tmux server
//! or a hung kitty costs at most the read limit: each call has 500 ms from its start to its answer
//! (`child` for the programs, `socket` for the sockets, connecting included). The screen is read
//! with the agent's screen grammar at once and only its kind and a dialog's summary leave this
//! module: a screen's text is never kept, never logged and never served.
//!
//! [`Sensing`] is the live loop's side: a worker thread that runs the locating and the reading off
//! the loop and hands the results back as an event, which pids are located where, which reads
//! are in flight, and the pacing: a pane is read at most once a second (a read still in flight
//! past its second is not asked for again, nor looked at more often), and a terminal that
//! failed is asked again only after a pause, its failure counted once as a problem.
//! `terminals::front` says whether a session's terminal is in front (quiet while you look), from
//! `focus`'s facts and kitty's own account of its windows.
//! [`locate_once`] and [`read_once`] are the one-shot commands' side: they locate and read once,
//! on the caller's thread, and return readings for the engine to apply (`engine::sense_once`).
//! This module drives no engine and decides no state (`tracker` does, from the readings) and
//! parses nothing itself (the backends and `agents::screens` do).

pub mod accessibility;
pub mod backend;
pub mod front;
pub mod hosted;
pub mod kitty;
mod once;
mod pace;
pub mod proof;
mod sensing;
pub mod tmux;
#[cfg(unix)]
pub mod typing;
pub mod wezterm;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::process::Command;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use crate::focus::strategy::CommandLine;
pub use backend::{Address, Backend, Backends, Clues, PaneRead, PaneText, Wanted};
use backend::{ParseError, Survey};
pub use once::{locate_once, read_once, Once, Readings};
pub use sensing::{Delivery, Sensing};
use slate_core::agents::screens::{self, Dialog, Screen, ScreenSeen};
use slate_core::agents::ProcessRole;
use slate_core::model::{
    AgentKind, PendingCall, Problem, ProblemKind, SessionKey, TerminalKind, TerminalView, Timestamp,
};
use slate_core::tracker::{Input, SeenProcess, Sensed};

pub use crate::socket::READ_LIMIT;

/// The terminals Slate reads, in the order their variables are asked: a WezTerm pane's variables
/// before a kitty window's (WezTerm started from kitty), and tmux's last, where they only say why
/// no pane was proved. A hosted terminal is never located: its session names its socket. A desktop
/// terminal's tab on the accessibility bus is watched only where nothing else placed a process.
pub const BUILT_IN: Backends = Backends::new(BUILT_IN_BACKENDS);

/// One line per backend: adding a terminal adds its module above and its backend here.
static BUILT_IN_BACKENDS: &[&dyn Backend] = &[
    &wezterm::WEZTERM,
    &kitty::KITTY,
    &tmux::TMUX,
    &hosted::HOSTED,
    &accessibility::ACCESSIBILITY,
];

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

/// [`Backends::locate`] over the built-in backends.
pub fn locate(pids: &[u32]) -> Vec<(u32, Located)> {
    BUILT_IN.locate(pids)
}

impl Backends {
    /// Finds the terminal of each process in `pids` by its controlling terminal
    /// (`terminals::proof`): the pane whose terminal it is among every pane the backends list
    /// (every tmux server of this user), or the pane a backend's variables name (a kitty window, a
    /// WezTerm pane), once that pane's terminal is found to be the process's.
    pub fn locate(&self, pids: &[u32]) -> Vec<(u32, Located)> {
        let tools = crate::focus::tools();
        let hosts = crate::focus::hosts(pids);
        let ttys: Vec<proof::ProcessTty> = hosts
            .iter()
            .map(|(pid, host)| {
                host.as_ref()
                    .map(|host| proof::ProcessTty::read(*pid, &host.ancestors))
                    .unwrap_or_default()
            })
            .collect();
        let terminals: Vec<u64> = ttys.iter().flat_map(proof::ProcessTty::devices).collect();
        let surveys: Vec<(&'static dyn Backend, Survey)> = if hosts.is_empty() {
            Vec::new()
        } else {
            self.iter()
                .map(|backend| {
                    let named: Vec<String> = hosts
                        .iter()
                        .filter_map(|(_, host)| backend.named_server(&host.as_ref()?.env))
                        .collect();
                    (backend, backend.survey_for(&named, &terminals, &tools))
                })
                .collect()
        };
        let panes: Vec<backend::PaneTty> = surveys
            .iter()
            .flat_map(|(_, survey)| survey.panes.iter().cloned())
            .collect();
        hosts
            .into_iter()
            .zip(ttys)
            .map(|((pid, host), tty)| {
                let proved =
                    proof::prove(&tty, &panes).map(|(pane, proof)| (pane.address.clone(), proof));
                let (view, address) = self.see(
                    host.as_ref().map(|host| &host.env),
                    &tools,
                    proved.as_ref().map(|(address, _)| address),
                );
                // A server that did not answer may hold the pane: the one the process's
                // variables name, or, for a process in a terminal of its own, any of them.
                let unanswered = surveys.iter().find_map(|(backend, survey)| {
                    let named = host
                        .as_ref()
                        .and_then(|host| backend.named_server(&host.env));
                    survey
                        .unanswered
                        .iter()
                        .find(|(server, _)| named.as_deref().is_none_or(|named| named == server))
                        .map(|(server, why)| (*backend, server, why))
                });
                let located = match (proved, address, unanswered) {
                    (Some((address, proof)), _, _) => Located {
                        view,
                        address: Some(address),
                        proof: Some(proof),
                        retry: false,
                    },
                    (None, Some(address), _) => confirm(address, tty.tty),
                    (None, None, Some((backend, server, why))) if tty.tty != 0 => Located {
                        view: TerminalView::unread(
                            backend.kind(),
                            None,
                            format!(
                                "the {} server at {server} did not answer ({why}), so its pane \
                                 could not be proved; asked again shortly",
                                backend.kind().as_str()
                            ),
                        ),
                        address: None,
                        proof: None,
                        retry: true,
                    },
                    (None, None, _) => match host
                        .as_ref()
                        .filter(|_| view.kind == TerminalKind::Plain)
                        .and_then(|host| self.iter().find_map(|backend| backend.watch(host)))
                    {
                        // Seen, never typed into: no proof goes with it.
                        Some(address) => Located {
                            view: address.view(),
                            address: Some(address),
                            proof: None,
                            retry: false,
                        },
                        None => Located {
                            view,
                            address: None,
                            proof: None,
                            retry: false,
                        },
                    },
                };
                (pid, located)
            })
            .collect()
    }
}

/// A pane named by a process's variables, kept only when its terminal is the process's own
/// (`tty`): a variable is inherited by whatever a window's shell starts.
fn confirm(address: Address, tty: u64) -> Located {
    let owner = address.backend.device(&address);
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

/// How many tabs of the application at `address` hold a live session of `agent`: the distinct
/// panes located there for processes of that agent (a CLI that relaunched itself in a child is
/// one), from each process's location (`located`) and agent (`agents`).
fn peers<'a>(
    located: impl Iterator<Item = (&'a u32, &'a Located)>,
    agents: &HashMap<u32, AgentKind>,
    agent: AgentKind,
    address: &Address,
) -> usize {
    located
        .filter(|(pid, _)| agents.get(pid) == Some(&agent))
        .filter_map(|(_, located)| located.address.as_ref())
        .filter(|other| other.kind() == address.kind() && other.server == address.server)
        .map(|other| other.pane())
        .collect::<HashSet<_>>()
        .len()
}

/// The calls the other sessions of `key`'s agent hold open (`calls`) whose terminals are other
/// tabs of the application at `address`, from where each session's terminal is read (`placed`):
/// a dialog that is about one of them as well is no proof of whose it is.
fn rivals<'a>(
    key: &SessionKey,
    address: &Address,
    placed: impl Iterator<Item = (&'a SessionKey, &'a Address)>,
    calls: &HashMap<SessionKey, PendingCall>,
) -> Vec<PendingCall> {
    placed
        .filter(|(other, _)| *other != key && other.agent == key.agent)
        .filter(|(_, other)| {
            other.kind() == address.kind()
                && other.server == address.server
                && other.pane != address.pane
        })
        .filter_map(|(other, _)| calls.get(other).cloned())
        .collect()
}

/// One pane to read, for one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub key: SessionKey,
    pub address: Address,
    /// What tells the session's tab, where its backend reads a whole application.
    pub clues: Clues,
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
    let mut servers: BTreeMap<(String, String), Vec<Job>> = BTreeMap::new();
    for job in jobs {
        let server = (
            job.address.kind().wire().to_string(),
            job.address.server.clone(),
        );
        servers.entry(server).or_default().push(job);
    }
    std::thread::scope(|scope| {
        let running: Vec<_> = servers
            .into_values()
            .map(|jobs| scope.spawn(move || read_server(jobs, clock)))
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

/// Reads the panes of one terminal server, all through one backend.
fn read_server(jobs: Vec<Job>, clock: fn() -> Timestamp) -> Vec<Outcome> {
    let Some(first) = jobs.first() else {
        return Vec::new();
    };
    let (backend, server) = (first.address.backend, first.address.server.clone());
    let wanted: Vec<Wanted> = jobs
        .iter()
        .map(|job| Wanted {
            pane: job.address.pane.clone(),
            agent: job.key.agent,
            clues: job.clues.clone(),
            colours: wants_colours(job.key.agent),
            // A title that says a dialog waits decides the status, but the screen is read all
            // the same: its dialog, with its options, is what an answer checks against.
            screen: screens::grammar(job.key.agent).is_some(),
        })
        .collect();
    let mut reads = backend.read(&server, &wanted, clock).into_iter();
    jobs.into_iter()
        .map(|job| match reads.next() {
            Some(Ok((pane, at))) => reading(job, pane, at),
            Some(Err(why)) => failed(job, why),
            None => failed(job, "the terminal gave no reading of it".to_string()),
        })
        .collect()
}

/// The panes of a server that lists its panes' titles in one call and gives each screen in
/// another (kitty, WezTerm): one listing for the titles, then the screen of each pane that wants
/// it; `program` names the tool in what a failure says.
fn read_listed(
    wanted: &[Wanted],
    clock: fn() -> Timestamp,
    program: &str,
    list: impl Fn() -> Result<String, String>,
    titles: fn(&str) -> Result<BTreeMap<String, String>, ParseError>,
    get_text: impl Fn(&str, bool) -> Result<String, String>,
) -> Vec<PaneRead> {
    let titles = match list().and_then(|text| titles(&text).map_err(|e| e.to_string())) {
        Ok(titles) => titles,
        Err(why) => {
            return wanted
                .iter()
                .map(|_| Err(format!("{program}: {why}")))
                .collect()
        }
    };
    wanted
        .iter()
        .map(|want| {
            let Some(title) = titles.get(&want.pane).cloned() else {
                return Err(format!("{program}: window {} is gone", want.pane));
            };
            let screen = if want.screen {
                get_text(&want.pane, want.colours).map_err(|why| format!("{program}: {why}"))?
            } else {
                String::new()
            };
            let title = Some(title).filter(|title| !title.is_empty());
            Ok((PaneText { title, screen }, clock()))
        })
        .collect()
}

/// Reads the screen of the pane at `address` now, on the caller's thread, with `agent`'s grammar:
/// the whole reading, a dialog with its options included, for an answer to check against. The
/// screen's text ends here.
pub fn screen_now(address: &Address, agent: AgentKind) -> Result<Screen, String> {
    let text = address.backend.screen(address, wants_colours(agent))?;
    Ok(screens::read_screen(agent, &text))
}

/// A pane's text read into what Slate keeps: its title and its screen's kind and summary, and a
/// redacted copy of a screen its grammar did not know. The screen's text ends here.
fn reading(job: Job, pane: PaneText, at: Timestamp) -> Outcome {
    let Job { key, address, .. } = job;
    let sensed = Sensed::read(at, pane.title, key.agent, &pane.screen);
    tracing::debug!(session = %key, screen = sensed.screen.kind.as_str(), "read a terminal");
    Outcome::Read {
        key,
        address,
        sensed,
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
fn run_child(line: &CommandLine) -> Result<String, slate_sources::child::ChildError> {
    let mut command = Command::new(&line.program);
    command.args(&line.args);
    for (name, value) in &line.env {
        command.env(name, value);
    }
    let output = slate_sources::child::output_within(&mut command, READ_LIMIT)?;
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
    Problem::new(ProblemKind::TerminalUnreadable, address.describe(), why)
}

/// The problem a terminal found unreadable as soon as it is located is counted as, where its
/// backend says so (a kitty window whose kitty does not listen for remote control). A plain
/// terminal is no problem: nothing was set up to be read.
fn unreadable_at_once(backends: Backends, pid: u32, view: &TerminalView) -> Option<Problem> {
    let counted = backends
        .of(view.kind)
        .is_some_and(|backend| backend.unread_is_a_problem());
    (counted && !view.sensed).then(|| {
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
