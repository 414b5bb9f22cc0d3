//! The core's own tests: the pure parts checked without the engine, so `cargo test -p slate-core`
//! runs them in seconds. One binary; each module below is one area. The tests that need the
//! engine, a terminal, a process or a server are in the `slate` crate's `tests/tests.rs`.

use std::path::PathBuf;

mod prices; // usage::prices: the shipped table, the name rules, overrides, budget, the estimate
mod schedule; // the live loop's timers from data, with made-up instants
mod spend; // policy::spend: the budget alert, once per session, the day across sessions
mod titles; // the title grammars against real titles recorded from the CLIs
mod tracker; // the state rules, replayed from fixtures/scenarios with a fake clock
mod usage_records; // each agent's usage records folded: the recordings' figures, each response once, hostile figures refused
mod versions; // the versions the live sessions were written by, beside the versions Slate was checked against

/// The repository's root, where `fixtures/` is.
fn repository() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}
