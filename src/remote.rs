//! Sessions on other machines, followed over SSH: the I/O. The links, their timings, the fixed
//! remote commands, the `ssh` argument lists and what a failure means are pure and live in
//! `slate_core::remote`, re-exported here; this module adds what runs `ssh`:
//!
//! - `remote::link`: one thread per remote running `ssh`, and the one-shot questions;
//! - `remote::attach`: `slate focus NAME:ID`, a local terminal attached to the remote's tmux;
//! - `remote::forward`: approve, deny or answer a remote session's dialog, forwarded as one
//!   `ssh DEST slate remote-call` with the request, and the fingerprint the person saw, on its
//!   standard input.

pub mod attach;
pub mod forward;
pub mod link;

pub use slate_core::remote::*;
