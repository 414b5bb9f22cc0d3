//! Slate's one integration-test binary. Each module below covers one area.

mod claude; // the Claude Code adapter: transcript snapshots, process recognition, listing parsers
mod codex; // the Codex adapter: rollout snapshots, process recognition, bad input
mod config; // the config file: defaults, unknown keys, the [steering] move, write-back
mod cursor; // cursor-agent chat stores, transcripts and processes, and decoders that never panic
mod demo; // the demo timeline played through the real engine, and its temporary HOME
mod files; // transcript discovery and incremental reading
mod gemini; // the Gemini CLI adapter: chat folding, processes, project folders
mod listings; // Claude Code's registry and background jobs on disk
mod live; // the live service: first snapshot, one change per append, over a temp HOME
mod opencode; // OpenCode's SQLite store and JSON tree, read and decided, and damaged databases
mod processes; // the process scan, folder resolution and recorded tables
mod recordings; // real CLI recordings replayed through the whole engine
mod store; // Slate's own SQLite store: round trips, migrations, kill -9, corruption and locks
mod tidy; // conventions: module docs, a pure core, layout, ARCHITECTURE.md's code map
mod tracker; // the state rules, replayed from fixtures/scenarios with a fake clock
