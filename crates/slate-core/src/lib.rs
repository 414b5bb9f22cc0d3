//! Slate's pure core: the vocabulary every part of Slate speaks and the rules that decide which
//! sessions need the person.
//!
//! Nothing here does I/O, reads the clock or starts a thread: time is an argument, and the state
//! machine reports its next deadline. Cargo keeps it so: this crate depends on no runtime, file
//! watcher, database, process table or HTTP crate (tests/layers.rs checks its dependency list),
//! and no module here imports another round a circle (tests/layers.rs again).
//!
//! # Layout, from the bottom up
//! - `model`: plain data shared by everything (sessions, states, processes, listings, dialogs);
//!   it names no agent.
//! - `lines`: splitting a growing byte stream into complete lines.
//! - `limits`: the limits on free text a person sends, and dependency cycles, for every surface.
//! - `config`: the config file parsed from text, its defaults and its migrations.
//! - `agents`: one description and adapter per CLI (names, processes, roots, layouts, titles,
//!   screens, keys), turning records and processes into observations, and the registry that
//!   lists them.
//! - `protocol`: answering a dialog: the request, its outcome, its errors and its record.
//! - `tracker`: the state rules (docs/states.md §3–4).
//! - `remote`: what a link to another machine is, the fixed commands and `ssh` argument lists,
//!   the remote's NDJSON, and the merged view of every remote.
//! - `policy`: what every surface shows alike (needs you, the live list, notifications, the
//!   menu).
//! - `report`: the text and JSON the command line prints.
//! - `schedule`: the live loop's timing, as plain data.
//! - `usage`: the tokens a session's model calls used, and their estimated cost.

pub mod agents;
pub mod config;
pub mod limits;
pub mod lines;
pub mod model;
pub mod policy;
pub mod protocol;
pub mod remote;
pub mod report;
pub mod schedule;
pub mod tracker;
pub mod usage;
