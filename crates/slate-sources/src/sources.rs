//! The edges that turn the outside world into tracker inputs: transcript files, the agents'
//! stores, the process table and the agents' own listings. Every I/O the engine does to learn
//! about sessions happens here, and none of it reads the clock: the engine hands time in.
//!
//! Where to look is each agent's description (`agents::Description`); the modules here do the
//! reading it asks for, for whatever agents the registry holds.

pub mod folders;
pub mod git;
pub mod layouts;
pub mod listings;
pub mod processes;
pub mod regular_file;
pub mod roots;
pub mod stores;
pub mod tail;
pub mod walk;
