//! The one-shot commands' side of sensing: the terminals of the live agent processes located
//! once, and the panes the tracker wants read once, on the caller's thread. Both return readings
//! for the engine to apply (`engine::sense_once`); nothing here drives the engine.

use std::collections::HashMap;

use super::{
    has_terminal, hosted, peers, read, rivals, unread_view, unreadable, unreadable_at_once,
    Address, Backends, Clues, Job, Located, Outcome,
};
use slate_core::model::{AgentKind, PendingCall, Problem, SessionKey, TerminalView, Timestamp};
use slate_core::tracker::{Input, SeenProcess};

/// Where the live agent processes' terminals are, located once for a one-shot command
/// (`engine::sense_once` drives the two steps: [`locate_once`], then [`read_once`]).
#[derive(Debug, Default)]
pub struct Once {
    located: HashMap<u32, Located>,
    /// The agent of each process located.
    agents: HashMap<u32, AgentKind>,
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

/// Locates the terminal of every process of `processes` that has one, in `backends`.
pub fn locate_once(backends: Backends, processes: &[SeenProcess]) -> Once {
    let pids: Vec<u32> = processes
        .iter()
        .filter(|process| has_terminal(process))
        .map(|process| process.info.pid)
        .collect();
    let located: HashMap<u32, Located> = backends.locate(&pids).into_iter().collect();
    let problems = located
        .iter()
        .filter_map(|(pid, found)| unreadable_at_once(backends, *pid, &found.view))
        .collect();
    let agents = processes
        .iter()
        .map(|process| (process.info.pid, process.recognised.agent))
        .collect();
    Once {
        located,
        agents,
        problems,
    }
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
/// socket by session), any other's where `once` located it, with its open call (`calls`,
/// `Tracker::open_calls`) where its tab must be told among others. A decisive title or screen
/// decides on this one read; rules that need time wait for a live engine.
pub fn read_once(
    once: &Once,
    wanted: Vec<(SessionKey, u32)>,
    hosted: &HashMap<SessionKey, String>,
    calls: &HashMap<SessionKey, PendingCall>,
    clock: fn() -> Timestamp,
) -> Readings {
    let mut jobs: Vec<Job> = wanted
        .into_iter()
        .filter_map(|(key, pid)| {
            let address = match hosted.get(&key) {
                Some(socket) => hosted::address(socket.clone()),
                None => once.located.get(&pid)?.address.clone()?,
            };
            let clues = Clues {
                call: calls.get(&key).cloned(),
                peers: peers(once.located.iter(), &once.agents, key.agent, &address),
                others: Vec::new(),
            };
            Some(Job {
                key,
                address,
                clues,
            })
        })
        .collect();
    let placed: Vec<(SessionKey, Address)> = jobs
        .iter()
        .map(|job| (job.key.clone(), job.address.clone()))
        .collect();
    for job in &mut jobs {
        let others = placed.iter().map(|(key, address)| (key, address));
        job.clues.others = rivals(&job.key, &job.address, others, calls);
    }
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
