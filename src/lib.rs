//! Slate's engine: it watches every AI coding-agent session on the machine and decides which ones
//! need you.
//!
//! Transcripts, process scans and the agents' own listings come in through `sources`, are turned
//! into observations by the per-agent adapters in `agents`, and are decided by the pure state
//! machine in `tracker`. The command line, the HTTP API and the desktop shell all read the same
//! decisions.
//!
//! # Layout
//! The pure core is the `slate-core` crate (crates/slate-core): `model`, `lines`, `limits`,
//! `config` (parsed from text), `agents`, `protocol`, `tracker`, `remote` (the pure part),
//! `policy`, `report` and `schedule`, re-exported here under the same names. The sources are the
//! `slate-sources` crate (crates/slate-sources), re-exported too: `sources` (the edges that read
//! what the agents leave), `child` (a helper program run within a time limit) and `watch` (the
//! file watcher's hints). This crate holds the other edges and the loop that feeds the core:
//! - `places`: where Slate keeps its own files; `config`: the config file on disk; `push`: the
//!   optional push to an ntfy topic or a webhook on each Needs you notification;
//!   `settings`: from the config to the engine's options, and live reloads.
//! - `host`: `slate run`, the pseudo-terminal that hosts an agent CLI and reports its title.
//! - `store`: Slate's own SQLite file: transition history, intents, claims, the notification
//!   pause, the answers.
//! - `focus`: bringing a session's terminal to the front; the choice itself is pure.
//! - `clock`: the wall clock, read at the edges.
//! - `tty`: which terminal a process belongs to; `socket`: Unix-socket exchanges with a
//!   deadline.
//! - `terminals`: reading the tmux panes, kitty windows and WezTerm panes of sessions Slate does
//!   not host (their titles and what their screens show), off the live loop, one backend module
//!   each behind one trait (`terminals::backend`), with `slate run`'s hosted terminals.
//! - `answers`: carrying one answer out: the pane proved, the dialog read again, the keys typed
//!   once.
//! - `remote`: the `ssh` links to other machines, the attach and the forwarded answers.
//! - `engine`: the sessions as the sources and the tracker make them; `live`: the live service;
//!   `api`: the loopback HTTP API; `token`: the API's bearer token; `client`: the one client for
//!   a running Slate; `mirror`: following a running Slate's live list from its event stream
//!   (what the desktop app does when the Slate service runs the engine).
//! - `demo`: made-up sessions that play through every state in a temporary HOME.

pub use slate_core::{
    agents, limits, lines, model, policy, protocol, report, schedule, tracker, usage,
};
pub use slate_sources::{child, exits, sources, watch};
pub use slate_terminals::{focus, socket, terminals, tty};

pub mod answers;
pub mod api;
pub mod client;
pub mod clock;
pub mod config;
pub mod demo;
pub mod engine;
pub mod hooks;
pub mod host;
pub mod live;
pub mod logging;
pub mod mirror;
pub mod places;
pub mod push;
pub mod remote;
pub mod settings;
pub mod store;
pub mod token;
