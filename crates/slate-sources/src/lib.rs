//! Slate's sources: the edges that read what the agents leave on the machine and turn it into the
//! core's inputs (`slate_core::tracker::Input`).
//!
//! Every read here has a budget and a limit, and nothing in `sources` reads the clock or starts a
//! thread (the watchers' threads are `watch`'s and `exits`'): time comes in as an argument, so a
//! replay of the same files and process tables decides the same way (tests/tidy.rs checks the
//! words, tests/layers.rs the import graph). The live loop and the
//! one-shot commands in the `slate` crate call them.
//!
//! - `sources`: transcripts (found by each agent's layout, read incrementally), the agents'
//!   SQLite stores, the process table, the agents' own listings, git facts.
//! - `child`: a helper program run to completion within a time limit and bounds.
//! - `watch`: the file watcher, whose events are only hints.
//! - `exits`: the ends of the agents' processes, waited for on pidfds, also only hints.

pub mod child;
pub mod exits;
pub mod sources;
pub mod watch;
