//! Slate's one integration-test binary. Each module below covers one area.

mod cursor;
mod opencode; // OpenCode's SQLite store and JSON tree, read and decided, and damaged databases
mod tracker; // the state rules, replayed from fixtures/scenarios with a fake clock // cursor-agent chat stores, transcripts and processes, and decoders that never panic
