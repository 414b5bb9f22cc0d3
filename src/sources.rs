//! The edges that turn the outside world into tracker inputs: transcript files, the process table
//! and the agents' own listings. Every I/O the engine does to learn about sessions happens here.

pub mod files;
pub mod git;
pub mod listings;
pub mod processes;
pub mod stores;
