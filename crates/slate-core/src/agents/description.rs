//! What Slate knows about one agent CLI, written down once as a value: its [`Description`].
//!
//! A description holds the agent's wire id and names, how its processes are recognised, where its
//! files live relative to the environment, which folders to watch, how its sessions are stored (a
//! transcript layout with a line parser, or a store the sources know how to read), its own listing
//! of live sessions if it keeps one, and its terminal-title and screen grammars. Everything in it is data or a
//! pure function: the sources do the reading the description asks for, the tracker reads the
//! titles through it, and every other module loops over a [`Registry`] of descriptions rather than
//! naming agents. It deliberately holds no I/O: no path is resolved, no file opened and no
//! process spawned here (`sources` does that), and no state is decided (`tracker` does that).
//!
//! The keys that answer an agent's dialogs ([`Description::keys`]) sit beside its screen grammar.

use std::fmt;

use crate::agents::hooks::Hooks;
use crate::agents::keys::DialogKeys;
use crate::agents::screens::ScreenGrammar;
use crate::agents::titles::Grammar;
use crate::agents::{AgentProcess, LineError, Observation};
use crate::model::{AgentKind, Described, ListingEntry, ProcessInfo, Timestamp};

/// One agent CLI, as Slate knows it.
pub struct Description {
    /// The wire id, as JSON, the command line and Slate's store spell it (`claude-code`).
    pub id: &'static str,
    /// The short name a person reads in a table, the tray or a notification (`Gemini`).
    pub name: &'static str,
    /// The product's own name, as the window shows it (`Gemini CLI`).
    pub product: &'static str,
    pub processes: Processes,
    pub root: Root,
    pub watch: Watch,
    pub sessions: Sessions,
    /// The agent's own listing of its live sessions, when it keeps one.
    pub listing: Option<ListingRule>,
    /// The agent's terminal titles, when they are known (docs/formats.md §9).
    pub titles: Option<Grammar>,
    /// What its screen shows: its dialogs, the agent at work, its composer (docs/formats.md
    /// §10), when they are known.
    pub screens: Option<ScreenGrammar>,
    /// The keys that answer its dialogs (docs/formats.md §10), when they were recorded from the
    /// real CLI.
    pub keys: Option<DialogKeys>,
    /// The agent's own hooks, where Slate can install them (docs/hooks.md).
    pub hooks: Option<&'static Hooks>,
    /// The versions of the CLI that Slate was checked against, run for real (its recordings in
    /// `fixtures/`), oldest first; empty for an agent that cannot run here. A session of a
    /// newer version may write what Slate has never read (`agents::versions`).
    pub recorded: &'static [&'static str],
}

impl Description {
    /// The agent this description describes.
    pub fn kind(&'static self) -> AgentKind {
        AgentKind::of(self)
    }

    /// The transcript layout, for an agent whose sessions are line files.
    pub fn layout(&self) -> Option<&Layout> {
        match &self.sessions {
            Sessions::Transcripts(layout) => Some(layout),
            Sessions::Store(_) => None,
        }
    }

    /// The store the sources read, for an agent that keeps its sessions in one.
    pub fn store(&self) -> Option<StoreKind> {
        match &self.sessions {
            Sessions::Store(kind) => Some(*kind),
            Sessions::Transcripts(_) => None,
        }
    }
}

impl Described for Description {
    fn id(&self) -> &'static str {
        self.id
    }

    fn name(&self) -> &'static str {
        self.name
    }
}

impl fmt::Debug for Description {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Description")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// How the agent's processes are found in the process table.
pub struct Processes {
    /// Program names that start the agent (`claude`), for `slate run` when the command line is
    /// too bare to recognise.
    pub programs: &'static [&'static str],
    /// Recognises one of its processes from the executable and argv.
    pub recognise: fn(&ProcessInfo) -> Option<AgentProcess>,
    /// True for a process that only waits for a relaunched child of itself (Gemini CLI restarts
    /// itself in a child `node`): it is a helper, so the session is vouched for once, by the child.
    pub relaunch_parent: Option<fn(&ProcessInfo, &[ProcessInfo]) -> bool>,
}

/// Where a root starts: the home folder, an XDG base folder, or one of the agent's own variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    Home,
    XdgData,
    XdgConfig,
    /// A variable of the agent's own (`CLAUDE_CONFIG_DIR`); empty counts as unset.
    Var(&'static str),
}

/// Where the agent keeps its files: the first candidate whose base is known, joined with its
/// relative path (`""` for the base itself).
pub struct Root {
    pub candidates: &'static [(Base, &'static str)],
    /// Other variables the agent's readers consult (OpenCode's `OPENCODE_DB`).
    pub variables: &'static [&'static str],
}

impl Root {
    /// Every variable of the agent's own that decides where its files are.
    pub fn variables(&self) -> impl Iterator<Item = &'static str> + '_ {
        let bases = self.candidates.iter().filter_map(|(base, _)| match base {
            Base::Var(name) => Some(*name),
            _ => None,
        });
        bases.chain(self.variables.iter().copied())
    }
}

/// What the file watcher watches for this agent.
pub struct Watch {
    /// Folders relative to the root (`""` is the root itself), and whether to watch below them.
    pub folders: &'static [(&'static str, bool)],
    /// The endings of the file names whose change can change a session (`.jsonl`, `.db-wal`).
    pub files: &'static [&'static str],
}

/// How the agent keeps its sessions.
pub enum Sessions {
    /// One line file per session (JSONL), read incrementally by the sources.
    Transcripts(Layout),
    /// A database or a tree of files the sources read with a reader of its own.
    Store(StoreKind),
}

/// The stores the sources know how to read (`sources::stores`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    /// OpenCode's SQLite databases and its pre-1.2 JSON tree (docs/formats.md §4), or those of a
    /// fork of OpenCode that keeps the same tables under its own names.
    OpenCode(OpenCodeStore),
    /// cursor-agent's per-chat SQLite stores (docs/formats.md §5).
    Cursor,
}

/// The names an OpenCode-shaped store goes by in its data folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenCodeStore {
    /// The main database's name without `.db` (`opencode` for `opencode.db`); a channel's build
    /// writes `<database>-<channel>.db` beside it.
    pub database: &'static str,
    /// The variable that names the main database instead (`OPENCODE_DB`); it must also be one of
    /// the root's `variables`, so that the roots resolve it.
    pub variable: &'static str,
}

/// Where an agent keeps its line-file transcripts, and how to read them.
pub struct Layout {
    /// Folders that hold transcripts, relative to the root; `*` matches any one folder.
    pub folders: &'static [&'static [&'static str]],
    /// Tells from a file's path relative to the root (its folder names, then its file name)
    /// whether it is a transcript, and whose.
    pub classify: fn(&[&str]) -> Option<Found>,
    /// A fresh parser for one transcript; `true` for a sub-agent's.
    pub parser: fn(bool) -> Box<dyn LineParser>,
    /// An append-only file of session names, relative to the root (Codex's `session_index.jsonl`).
    pub names: Option<NameIndex>,
    /// Reads a whole-file transcript (a `Found::whole_file` one) into observations.
    pub whole_file: Option<WholeFileReader>,
    /// The full session id in a `Found::short_id` transcript's first line (or whole document).
    pub full_id: Option<IdReader>,
    /// Where the folder of a transcript that does not name it is written down.
    pub project: Option<ProjectFolder>,
    /// A document kept beside each whole-file transcript that says what the transcript does not.
    pub beside: Option<Beside>,
}

/// A small document beside each whole-file transcript, saying what the transcript does not yet
/// (Cline's session row: the session's folder and status, written from the prompt on, while the
/// conversation holds nothing until the model's first reply, docs/formats.md §15.1). It is read
/// whole with the transcript whenever either changes, and both go to `read` together.
pub struct Beside {
    /// The companion of a transcript named so (`<id>.messages.json` → `<id>.json`).
    pub name: fn(&str) -> Option<String>,
    /// The transcript a companion named so sits beside (`<id>.json` → `<id>.messages.json`).
    pub of: fn(&str) -> Option<String>,
    /// Reads a transcript's bytes with its companion's (`None` when there is none) into
    /// observations, starting with a `Reset`.
    pub read: BesideReader,
}

/// Reads a whole-file transcript's bytes with those of the document beside it.
pub type BesideReader = fn(&[u8], Option<&[u8]>) -> Result<Vec<Observation>, LineError>;

/// Reads a whole-file transcript's bytes into observations.
pub type WholeFileReader = fn(&[u8]) -> Result<Vec<Observation>, LineError>;

/// Finds a session's full id in a transcript's first line (or whole document).
pub type IdReader = fn(&[u8]) -> Option<String>;

/// One line of a name index: `(session id, name, updated at)`, or nothing for a line without one.
pub type NameLine = Option<(String, String, Option<Timestamp>)>;

/// An append-only index of session names; the newest line for an id wins.
pub struct NameIndex {
    pub file: &'static str,
    pub parse: fn(&[u8]) -> Result<NameLine, LineError>,
}

/// A transcript's place in its agent's layout, as `Layout::classify` finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub session_id: String,
    /// The sub-agent's id, for a sub-agent's transcript rolled up into `session_id`.
    pub subagent: Option<String>,
    /// zstd-compressed: read whole, as a stream, once.
    pub compressed: bool,
    /// A whole-file document rewritten on every update, not a line file: it is read whole, again,
    /// whenever it changes, through `Layout::whole_file`.
    pub whole_file: bool,
    /// True when `session_id` is only a short id from the file name: the full one is read from
    /// the file through `Layout::full_id` when the file is first seen.
    pub short_id: bool,
}

impl Found {
    /// A session's own transcript, named by its full id.
    pub fn main(session_id: impl Into<String>) -> Found {
        Found {
            session_id: session_id.into(),
            subagent: None,
            compressed: false,
            whole_file: false,
            short_id: false,
        }
    }

    /// A sub-agent's transcript, rolled up into `session_id`.
    pub fn subagent(session_id: impl Into<String>, agent_id: impl Into<String>) -> Found {
        Found {
            subagent: Some(agent_id.into()),
            ..Found::main(session_id)
        }
    }
}

/// Where the folder of a transcript that does not name it is written down. A transcript under
/// `<root>/<parent>/<project>/…` belongs to the folder written in `<project>/<marker>`, else to
/// the one `from_registry` finds for `<project>` in `<root>/<registry>` (Gemini CLI's
/// `.project_root` and `projects.json`, docs/formats.md §3).
pub struct ProjectFolder {
    pub parent: &'static str,
    pub marker: &'static str,
    pub registry: &'static str,
    pub from_registry: fn(&[u8], &str) -> Option<String>,
}

/// Reads one transcript's lines into observations, keeping what a format needs to remember
/// between lines. One parser serves one file.
pub trait LineParser: fmt::Debug + Send {
    fn feed(&mut self, line: &[u8]) -> Result<Vec<Observation>, LineError>;

    /// Starts over, as before the first line: the file was truncated or replaced.
    fn restart(&mut self);
}

/// Parses the bytes of one listing file into an entry, or nothing for a file that lists none.
pub type EntryParser = fn(&[u8]) -> Result<Option<ListingEntry>, LineError>;

/// Where the agent lists its live sessions and background jobs (Claude Code's `sessions/`,
/// `jobs/` and `claude agents --json`, docs/formats.md §1.1 and §1.4).
pub struct ListingRule {
    /// A folder under the root with one file per live process. The listing is available (it
    /// decides which sessions are live) when this folder exists.
    pub registry: &'static str,
    /// Which file names in it are entries.
    pub entry_file: fn(&str) -> bool,
    pub parse_entry: EntryParser,
    /// `<root>/<folder>/<job id>/<file>` files, one per background job.
    pub jobs: Option<(&'static str, &'static str, EntryParser)>,
    /// The agent's own listing command, asked when a live process of the agent is missing from
    /// the registry.
    pub command: Option<ListingCommand>,
}

/// A command that prints the agent's live sessions.
#[derive(Debug)]
pub struct ListingCommand {
    pub program: &'static str,
    pub args: &'static [&'static str],
    pub parse: fn(&[u8]) -> Result<Vec<ListingEntry>, LineError>,
}

/// The descriptions an engine knows: the built-in agents ([`crate::agents::BUILT_IN`]) or, in a
/// test, a set of its own. The order is the order in which processes are recognised and agents
/// are listed.
#[derive(Clone, Copy)]
pub struct Registry {
    agents: &'static [&'static Description],
}

impl Registry {
    pub const fn new(agents: &'static [&'static Description]) -> Registry {
        Registry { agents }
    }

    pub fn iter(self) -> impl Iterator<Item = &'static Description> {
        self.agents.iter().copied()
    }

    /// The description of the agent with this wire id.
    pub fn find(self, id: &str) -> Option<&'static Description> {
        self.iter().find(|description| description.id == id)
    }

    /// Recognises an agent process, trying every description in order.
    pub fn recognise(self, process: &ProcessInfo) -> Option<AgentProcess> {
        self.iter()
            .find_map(|description| (description.processes.recognise)(process))
    }

    /// The agent a bare program name starts (`claude`, `cursor-agent`).
    pub fn by_program(self, program: &str) -> Option<AgentKind> {
        self.iter()
            .find(|description| description.processes.programs.contains(&program))
            .map(Description::kind)
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|description| description.id))
            .finish()
    }
}
