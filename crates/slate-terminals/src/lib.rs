//! Slate's terminal edge: where an agent session's terminal is, what its screen shows, typing an
//! answer into it, and bringing it to the front.
//!
//! It stands on the pure core (`slate_core`: the model, the agents' screen grammars and keys,
//! the tracker's inputs) and the sources' bounded child processes (`slate_sources::child`), and
//! knows nothing of the engine, the store, the API or the command line that use it
//! (tests/layers.rs checks the direction).
//!
//! # Layout, from the bottom up
//! - `socket`: Unix-socket exchanges with a deadline, and the limit of any one call to a
//!   terminal.
//! - `tty`: the terminals of processes as `/proc` tells them, and the tmux servers that hold them.
//! - `focus`: bringing a session's terminal to the front, and the facts about a process's
//!   surroundings that `terminals` also reads.
//! - `terminals`: the backends (tmux, kitty, WezTerm, `slate run`'s control socket, the
//!   accessibility bus), the live loop's sensing worker and its pace, the proof of a pane by its
//!   terminal device, and the one place Slate types.

pub mod focus;
pub mod socket;
pub mod terminals;
pub mod tty;
