//! Slate's engine: it watches every AI coding-agent session on the machine and decides which ones
//! need you.
//!
//! Transcripts, process scans and the agents' own listings come in through `sources`, are turned
//! into observations by the per-agent adapters in `agents`, and are decided by the pure state
//! machine in `tracker`. The command line, the HTTP API and the desktop shell all read the same
//! decisions.
//!
//! # Layout
//! - `model`: plain data shared by everything (sessions, states, processes, listings).
//! - `lines`: splitting a growing byte stream into complete lines.
//! - `limits`: the limits on free text a person sends, and dependency cycles, for every surface.
//! - `agents`: one description and adapter per CLI (names, processes, roots, layouts, titles),
//!   turning records and processes into observations, and the registry that lists them.
//! - `tracker`: the state rules (docs/states.md §3–4), pure.
//! - `policy`: what every surface shows alike (needs you, the live list, notifications, the
//!   menu), pure.
//! - `sources`: the edges that read the outside world; `child`: a helper program run within a
//!   time limit.
//! - `places`: where Slate keeps its own files; `config`: the config file, parsed from text, and
//!   its migrations; `settings`: from the config to the engine's options, and live reloads.
//! - `host`: `slate run`, the pseudo-terminal that hosts an agent CLI and reports its title.
//! - `store`: Slate's own SQLite file: transition history, intents, claims, the notification
//!   pause.
//! - `focus`: bringing a session's terminal to the front; the choice itself is pure.
//! - `terminals`: reading the tmux panes, kitty windows and WezTerm panes of sessions Slate does
//!   not host (their titles and what their screens show), off the live loop; where a pane is and
//!   how its tools' output reads is pure (`terminals::panes`).
//! - `live`: the live service, with its timing as plain data in `schedule`; `watch`: the file
//!   watcher's hints; `api`: the loopback HTTP API; `token`: the API's bearer token; `client`:
//!   the one client for a running Slate; `mirror`: following a running Slate's live list from
//!   its event stream (what the desktop app does when the Slate service runs the engine).
//! - `demo`: made-up sessions that play through every state in a temporary HOME.

pub mod agents;
pub mod answers;
pub mod api;
pub mod child;
pub mod client;
pub mod config;
pub mod demo;
pub mod engine;
pub mod focus;
pub mod host;
pub mod limits;
pub mod lines;
pub mod live;
pub mod mirror;
pub mod model;
pub mod places;
pub mod policy;
pub mod remote;
pub mod report;
pub mod schedule;
pub mod settings;
pub mod sources;
pub mod store;
pub mod terminals;
pub mod token;
pub mod tracker;
pub mod tty;
pub mod watch;
