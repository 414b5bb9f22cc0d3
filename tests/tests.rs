//! Slate's one integration-test binary. Each module below covers one area.

mod answers; // answering dialogs: keys against the recorded CLIs, a stand-in agent in real tmux, the API and the CLI
mod api; // the HTTP API: JSON endpoints, the event stream, guard rails, serve and watch
mod backends; // a terminal backend defined only in the test: located, read and answered through the product
mod claude; // the Claude Code adapter: transcript snapshots, process recognition, listing parsers
mod cli; // the command line as a packaged tool: closed pipes, exit codes, completions, man pages, the user unit
mod cline; // the Cline CLI adapter: recorded conversations read and decided, the TUI and its hub daemon, bad input
mod codex; // the Codex adapter: rollout snapshots, process recognition, bad input
mod config; // the config file: defaults, unknown keys, the [steering] move, write-back
mod control; // the hosted control socket: its protocol and refusals, private modes, stale files, `slate run` answering over it
mod copilot; // the GitHub Copilot CLI adapter: real sessions read and decided, a shrinking file, processes, bad input
mod cursor; // cursor-agent chat stores, transcripts and processes, and decoders that never panic
mod demo; // the demo timeline played through the real engine, and its temporary HOME
mod engine; // the engine over whole temp homes: every agent's samples in place, decided
mod files; // transcript discovery and incremental reading
mod focus; // focusing a terminal: the strategy table, parsers, and tmux and X11 for real
mod gemini; // the Gemini CLI adapter: chat folding, processes, project folders
mod git; // git facts: branch, ahead/behind, dirty, the cache, a live session following HEAD
mod hardening; // issue 17's hostile inputs: guard rails, timeouts, ids, tokens, limits, escapes
mod hooks; // the agents' own hooks: settings edited byte for byte, rule 3a, `slate hook` within its budget
mod host; // hosted sessions: the title scanner, report thinning, `slate run` in tmux, a silent prompt
mod hostile; // hostile files: FIFOs and device links, endless store queries, zstd bombs, future times
mod intent; // intent, custody and the next actor through the real binary over a temp HOME
mod kilo; // the Kilo Code CLI adapter: its real stores read and decided, names, processes, every cut of every row
mod layers; // the layers: no import circle, files of at most 800 lines, a core with no I/O crate
mod listings; // Claude Code's registry and background jobs on disk
mod live; // the live service: first snapshot, one change per append, intents and claims, over a temp HOME
mod menu; // the tray menu as data, its config-error note, the tooltip, and menu ids that read back
mod mirror; // following a running Slate: events read, a snapshot after a gap compared, a real follower
mod notifications; // the notification policy: one per flip, none at start-up or while paused, bursts
mod opencode; // OpenCode's SQLite store and JSON tree, read and decided, and damaged databases
mod pi; // the Pi coding agent: recorded session files read and decided, processes, bad input
mod places; // Slate's own folders and files on every platform
mod policy; // what every surface shares: needs you, the live list and when a session leaves it
mod processes; // the process scan, folder resolution and recorded tables
mod push; // the push channel: ntfy and webhook requests, secret URLs, the live worker against a local server
mod qwen; // the Qwen Code adapter: chats, registry, processes and titles, over real recordings, and bad input
mod recordings; // real CLI recordings replayed through the whole engine
mod registry; // the agent registry: built-in descriptions, wire ids, a toy agent through the engine
mod remote; // sessions on other machines over SSH: the link, the merged view, a real sshd on loopback
mod screens; // the screen grammars against real screens recorded from the CLIs, and lookalikes
mod session_usage; // slate sessions --json's usage object over a temp HOME: a sub-agent counted once in its parent, none when not recorded
mod sshd; // a real OpenSSH server on 127.0.0.1 for the remote tests: throwaway keys, forced HOMEs
mod store; // Slate's own SQLite store: round trips, migrations, kill -9, corruption and locks
mod terminals; // sensed terminals: where a pane is, the tools' outputs, real tmux, kitty's socket
mod tidy; // conventions: module docs, a pure core, layout, ARCHITECTURE.md's code map
mod unread; // records a parser does not know: the state kept, said in show and doctor, sampled redacted
mod usage; // slate usage and show over a temp HOME: each response once, priced, an estimate said so
mod util; // helpers several modules share: a Claude Code session in a temp HOME and its process, a screen reworded
mod waiting_for; // Claude Code's waitingFor, each value replayed: its reason, the person's own menu, a value Slate does not know
