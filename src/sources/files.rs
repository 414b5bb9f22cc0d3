//! Finding the agents' JSONL transcripts on disk and reading them incrementally.
//!
//! This module owns where each agent keeps its transcripts (FORMATS.md §1.1, §2.1), which of them
//! exist, and how many of their bytes have been read. [`scan`] walks every agent root and returns
//! one [`Batch`] per transcript that has new lines; [`ReadState::read_path`] re-reads one file a
//! watcher reported. A file is read from where the last read stopped: a partial last line is kept
//! and waited for, a truncated or replaced file is re-read from the start after an
//! [`Observation::Reset`], and a line too long to hold is skipped and counted. Quiet transcripts
//! that no process vouches for are closed, so only their head and tail are read: a machine may
//! hold tens of thousands of them. When the caller says when the agents' live processes started
//! (`ScanOptions::process_since`), a quiet transcript none of them could vouch for is not read at
//! all until it is written again or someone asks for closed sessions' details.
//!
//! It deliberately does not interpret a line (the adapters in `agents` do), decide anything about
//! a session (`tracker` does), or watch the file system (the engine's watcher calls
//! [`ReadState::read_path`]). Adding an agent with JSONL transcripts means adding one
//! `TranscriptLayout` entry to `LAYOUTS`, not a new reader.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::fs::{self, File, Metadata};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::agents::{self, Info, LineError, LineReader, Observation, Title, TitleSource};
use crate::lines::{LineBuffer, LineEvent};
use crate::model::{AgentKind, Problem, SessionKey, Timestamp};
use crate::sources::stores::StoreRoots;
use crate::tracker::{Batch, TranscriptRole};

/// The environment variables that decide where the agents and Slate keep their files, and where a
/// running Slate answers. It is read once per process; tests build one by hand so they never see
/// the real home folder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    pub home: Option<PathBuf>,
    pub claude_config_dir: Option<PathBuf>,
    pub codex_home: Option<PathBuf>,
    pub gemini_cli_home: Option<PathBuf>,
    pub xdg_data_home: Option<PathBuf>,
    pub xdg_config_home: Option<PathBuf>,
    pub opencode_db: Option<PathBuf>,
    pub cursor_config_dir: Option<PathBuf>,
    /// `%APPDATA%`: where Slate keeps its own config and data on Windows (`places`).
    pub appdata: Option<PathBuf>,
    /// `SLATE_API`: the address of a running Slate to talk to instead of the config's (`client`).
    pub slate_api: Option<String>,
}

impl Env {
    /// Reads the variables from this process's environment. An empty variable counts as unset,
    /// as the agents themselves treat it.
    pub fn from_process() -> Env {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        Env {
            home: var("HOME").or_else(|| var("USERPROFILE")),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            codex_home: var("CODEX_HOME"),
            gemini_cli_home: var("GEMINI_CLI_HOME"),
            xdg_data_home: var("XDG_DATA_HOME"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            opencode_db: var("OPENCODE_DB"),
            cursor_config_dir: var("CURSOR_CONFIG_DIR"),
            appdata: var("APPDATA"),
            slate_api: std::env::var("SLATE_API")
                .ok()
                .filter(|value| !value.is_empty()),
        }
    }
}

/// Each agent's root folder, where the environment names one. A root that does not exist on disk
/// is still listed here; [`scan`] reports which ones it found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Roots {
    pub claude: Option<PathBuf>,
    pub codex: Option<PathBuf>,
    /// Gemini CLI's `.gemini` folder.
    pub gemini: Option<PathBuf>,
    /// OpenCode's data folder (its databases and the legacy `storage/` tree).
    pub opencode: Option<PathBuf>,
    /// OpenCode's main database; `None` when `$OPENCODE_DB` keeps it in memory.
    pub opencode_db: Option<PathBuf>,
    /// cursor-agent's config root.
    pub cursor: Option<PathBuf>,
}

impl Roots {
    pub fn get(&self, agent: AgentKind) -> Option<&Path> {
        match agent {
            AgentKind::ClaudeCode => self.claude.as_deref(),
            AgentKind::Codex => self.codex.as_deref(),
            AgentKind::GeminiCli => self.gemini.as_deref(),
            AgentKind::OpenCode => self.opencode.as_deref(),
            AgentKind::CursorAgent => self.cursor.as_deref(),
        }
    }

    /// Where the SQLite-backed agents keep their stores, for `sources::stores`.
    pub fn stores(&self) -> StoreRoots {
        StoreRoots {
            opencode_data: self.opencode.clone(),
            opencode_db: self.opencode_db.clone(),
            cursor: self.cursor.clone(),
        }
    }
}

/// Claude Code: `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`. Codex: `$CODEX_HOME`, else
/// `$HOME/.codex` (FORMATS.md §1.1, §2.1). Gemini CLI: `$GEMINI_CLI_HOME/.gemini`, else
/// `$HOME/.gemini` (§3). OpenCode: `$XDG_DATA_HOME/opencode`, else `$HOME/.local/share/opencode`,
/// with `$OPENCODE_DB` naming its main database (§4.1). cursor-agent: `$CURSOR_CONFIG_DIR`, else
/// `$XDG_CONFIG_HOME/cursor`, else `$HOME/.cursor` (§5.1).
pub fn resolve_roots(env: &Env) -> Roots {
    let under_home = |name: &str| env.home.as_ref().map(|home| home.join(name));
    let opencode = env
        .xdg_data_home
        .as_ref()
        .map(|data| data.join("opencode"))
        .or_else(|| under_home(".local/share/opencode"));
    let opencode_db = opencode.as_ref().and_then(|data| {
        let named = env.opencode_db.as_ref().map(|name| name.to_string_lossy());
        match named
            .as_deref()
            .map(str::trim)
            .filter(|name| !name.is_empty())
        {
            Some(":memory:") => None,
            Some(name) => Some(data.join(name)),
            None => Some(data.join("opencode.db")),
        }
    });
    Roots {
        claude: env
            .claude_config_dir
            .clone()
            .or_else(|| under_home(".claude")),
        codex: env.codex_home.clone().or_else(|| under_home(".codex")),
        gemini: env
            .gemini_cli_home
            .as_ref()
            .map(|home| home.join(".gemini"))
            .or_else(|| under_home(".gemini")),
        opencode,
        opencode_db,
        cursor: env
            .cursor_config_dir
            .clone()
            .or_else(|| {
                env.xdg_config_home
                    .as_ref()
                    .map(|config| config.join("cursor"))
            })
            .or_else(|| under_home(".cursor")),
    }
}

/// The knobs of a scan. `Default` gives the values the engine uses.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// A transcript not written for this long, whose session no process vouches for, is closed:
    /// only its head and tail are read. The window (45 s, SPEC §1) plus a margin for slow writers.
    /// The middle of such a file is never read, so a tool call in the head may look unanswered;
    /// that is harmless because a session without a vouching process is closed (SPEC §3 rule 1).
    pub quiet_horizon: Duration,
    /// How much of a closed transcript's start is read, for its session id, folder and first prompt.
    pub head_bytes: u64,
    /// How much of a closed transcript's end is read, for its latest records and titles.
    pub tail_bytes: u64,
    /// A fresh transcript larger than this is read head and tail only, like a closed one.
    pub whole_read_limit: u64,
    /// A longer line is skipped unread and counted as a `huge_line` problem.
    pub max_line: usize,
    /// Sessions a live process or listing vouches for: their transcripts are read whole on the
    /// first read even when quiet.
    pub vouched: HashSet<SessionKey>,
    /// The earliest start of a live interactive or print process of each agent (less the
    /// tracker's start slack), when the caller knows the process table; `None` when it does not.
    ///
    /// A process never vouches for a transcript last written before it started (SPEC §1), so a
    /// quiet transcript that nobody vouches for and that was last written before this time (or
    /// whose agent has no live process at all) is closed whatever it holds. Unless
    /// `closed_detail` is set it is not read at all: its batch carries no observations, just the
    /// session's key, transcript and last write, so the session is known and decided closed. On
    /// a machine with tens of thousands of old transcripts this is what makes start-up cheap.
    pub process_since: Option<HashMap<AgentKind, Timestamp>>,
    /// Read closed transcripts' head and tail anyway, for their title, folder and last prompt:
    /// set when a person asks for closed sessions (`slate sessions --all`, `slate show`).
    pub closed_detail: bool,
}

impl Default for ScanOptions {
    fn default() -> ScanOptions {
        ScanOptions {
            quiet_horizon: Duration::from_secs(60),
            head_bytes: 64 * 1024,
            tail_bytes: 64 * 1024,
            whole_read_limit: 16 * 1024 * 1024,
            max_line: 8 * 1024 * 1024,
            vouched: HashSet::new(),
            process_since: None,
            closed_detail: false,
        }
    }
}

/// Parses one line of a name index into `(session id, name, updated at)`.
type NameParser = fn(&[u8]) -> Result<Option<(String, String, Option<Timestamp>)>, LineError>;

/// Where one agent keeps its JSONL transcripts and how to read them.
struct TranscriptLayout {
    agent: AgentKind,
    /// Folders that hold transcripts, relative to the root; `*` matches any one folder.
    folders: &'static [&'static [&'static str]],
    /// Tells from a file's path relative to the root (its folder names, then its file name)
    /// whether it is a transcript, and whose.
    classify: fn(&[&str]) -> Option<Found>,
    /// An append-only file of session names, relative to the root.
    names: Option<(&'static str, NameParser)>,
}

const LAYOUTS: &[TranscriptLayout] = &[
    TranscriptLayout {
        agent: AgentKind::ClaudeCode,
        folders: &[
            &["projects", "*"],
            &["projects", "*", "*", "subagents"],
            &["projects", "*", "*", "subagents", "workflows", "*"],
        ],
        classify: classify_claude,
        names: None,
    },
    TranscriptLayout {
        agent: AgentKind::Codex,
        folders: &[&["sessions", "*", "*", "*"], &["archived_sessions"]],
        classify: classify_codex,
        names: Some(("session_index.jsonl", agents::codex::parse_index_line)),
    },
    TranscriptLayout {
        agent: AgentKind::GeminiCli,
        folders: &[&["tmp", "*", "chats"], &["tmp", "*", "chats", "*"]],
        classify: classify_gemini,
        names: None,
    },
];

/// A transcript's place in its agent's layout.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    session_id: String,
    role: TranscriptRole,
    compressed: bool,
    /// A whole-file JSON document rewritten on every update (Gemini's pre-0.39 `.json` chats),
    /// not a line file: it is read whole, again, whenever it changes.
    whole_json: bool,
    /// True when `session_id` is only the short id in the file name: the full id is in the
    /// file's first line (Gemini's metadata line) and is read from there when the file is first
    /// seen.
    short_id: bool,
}

/// Claude Code: `projects/<dir>/<sessionId>.jsonl` is a session's own transcript, and
/// `projects/<dir>/<sessionId>/subagents[/workflows/<wfId>]/agent-<agentId>.jsonl` are its
/// sub-agents'. The 2.0.x `projects/<dir>/agent-<id>.jsonl` sub-agent files are skipped: their
/// parent is named only inside their lines, and such old sessions are never live any more.
fn classify_claude(parts: &[&str]) -> Option<Found> {
    let (file, folders) = parts.split_last()?;
    let stem = file.strip_suffix(".jsonl")?;
    let main = |session: &str| Found {
        session_id: session.to_string(),
        role: TranscriptRole::Main,
        compressed: false,
        whole_json: false,
        short_id: false,
    };
    let subagent = |session: &str| {
        Some(Found {
            session_id: session.to_string(),
            role: TranscriptRole::Subagent {
                agent_id: stem.strip_prefix("agent-")?.to_string(),
            },
            compressed: false,
            whole_json: false,
            short_id: false,
        })
    };
    match folders {
        ["projects", _] if !stem.starts_with("agent-") && !stem.is_empty() => Some(main(stem)),
        ["projects", _, session, "subagents"] => subagent(session),
        ["projects", _, session, "subagents", "workflows", _] => subagent(session),
        _ => None,
    }
}

/// Codex: `sessions/YYYY/MM/DD/rollout-…-<threadId>.jsonl[.zst]` and the same names, flat, in
/// `archived_sessions/`.
fn classify_codex(parts: &[&str]) -> Option<Found> {
    let (file, folders) = parts.split_last()?;
    if !matches!(folders, ["sessions", _, _, _] | ["archived_sessions"]) {
        return None;
    }
    Some(Found {
        session_id: agents::codex::session_id_from_file_name(file)?,
        role: TranscriptRole::Main,
        compressed: file.ends_with(".zst"),
        whole_json: false,
        short_id: false,
    })
}

/// Gemini CLI: `tmp/<project>/chats/session-<minute>-<short id>.jsonl` is a session's chat (the
/// pre-0.39 `.json` of the same name is a whole-file chat), and
/// `tmp/<project>/chats/<parentSessionId>/<subSessionId>.jsonl` a sub-agent's, rolled up into the
/// parent (FORMATS.md §3).
///
/// A session's full id is only inside its file (the metadata line's `sessionId`); the file name
/// carries its first 8 characters. The full id is the key everything else uses (a sub-agent's
/// folder, `--resume`), so the reader reads the first line when it first sees the file and keeps
/// the short id only when that line names none.
fn classify_gemini(parts: &[&str]) -> Option<Found> {
    match parts {
        ["tmp", _, "chats", file] => Some(Found {
            session_id: agents::gemini::session_file_id(file)?,
            role: TranscriptRole::Main,
            compressed: false,
            whole_json: !file.ends_with(".jsonl"),
            short_id: true,
        }),
        ["tmp", _, "chats", parent, file] => {
            let (parent, sub) = agents::gemini::subagent_file(parent, file)?;
            Some(Found {
                session_id: parent,
                role: TranscriptRole::Subagent { agent_id: sub },
                compressed: false,
                whole_json: false,
                short_id: false,
            })
        }
        _ => None,
    }
}

/// The full session id of a Gemini chat: its first line's `sessionId` (a `.jsonl` chat's metadata
/// line), or the whole document's (a legacy `.json` chat). Reads at most the first 64 KiB of a
/// line file. A legacy chat is read whole for it even when it is closed history; such chats are
/// from before Gemini CLI 0.39 and few.
fn gemini_session_id(path: &Path, whole_json: bool) -> Option<String> {
    let bytes = if whole_json {
        fs::read(path).ok()?
    } else {
        // Buffered, so a short first line costs one small read, not the whole limit.
        let mut head = Vec::new();
        let file = File::open(path).ok()?.take(64 * 1024);
        io::BufRead::read_until(&mut io::BufReader::new(file), b'\n', &mut head).ok()?;
        if head.last() != Some(&b'\n') {
            return None;
        }
        head.pop();
        head
    };
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let id = value.get("sessionId")?.as_str()?;
    (!id.is_empty()).then(|| id.to_string())
}

/// One scan's results.
#[derive(Debug, Clone, Default)]
pub struct ScanResult {
    /// One batch per transcript with new lines (or read for the first time, or reset).
    pub batches: Vec<Batch>,
    /// Transcripts read before that are no longer on disk.
    pub gone: Vec<GoneTranscript>,
    pub problems: Vec<Problem>,
    /// The agents whose root folder exists.
    pub found: Vec<AgentKind>,
    /// What each file read cost, for diagnostics and tests.
    pub reads: Vec<FileRead>,
    /// Transcripts known to be closed and therefore not read (see `ScanOptions::process_since`).
    pub skipped: u64,
}

/// A transcript that disappeared: the engine sends `Input::TranscriptGone` for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoneTranscript {
    pub key: SessionKey,
    pub role: TranscriptRole,
    pub transcript: String,
}

/// One read of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRead {
    pub path: PathBuf,
    pub stats: ReadStats,
}

/// What one read did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadStats {
    /// Bytes read from the file (compressed bytes for a `.zst` file are counted decompressed).
    pub bytes_read: u64,
    /// Complete lines handed out, skipped oversized lines included.
    pub lines: u64,
    /// True when only the head and the tail were read.
    pub head_tail: bool,
    /// True when the file was truncated or replaced and read again from the start.
    pub reset: bool,
}

/// How a file is read the first time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadPlan {
    /// From the start to the end.
    Whole,
    /// The first `head` bytes and the last `tail` bytes, each cut to whole lines. A file not
    /// larger than both together is read whole.
    HeadTail { head: u64, tail: u64 },
}

/// What makes a file the same file: on Unix its device and inode, elsewhere (and as a second
/// check) its creation time. Replacing a transcript by renaming a new file over it changes this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    device: u64,
    inode: u64,
    created: Option<SystemTime>,
}

impl FileIdentity {
    pub fn of(meta: &Metadata) -> FileIdentity {
        #[cfg(unix)]
        let (device, inode) = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let (device, inode) = (0, 0);
        FileIdentity {
            device,
            inode,
            created: meta.created().ok(),
        }
    }
}

/// Where the reading of one file stands.
#[derive(Debug, Clone)]
struct Cursor {
    identity: FileIdentity,
    /// The next byte of the file to read (of the decompressed stream for a `.zst` file).
    position: u64,
    /// The file's size when last read: a compressed file is read again only when it changes.
    size: u64,
    /// True after a jump into the middle of the file: bytes are dropped up to the next newline.
    resync: bool,
    max_line: usize,
    lines: LineBuffer,
}

/// Reads one file's lines incrementally, whatever they mean.
///
/// It keeps the partial last line for the next read, skips lines longer than `max_line` without
/// holding them, and starts over (reporting a reset) when the file was truncated or replaced.
#[derive(Debug, Clone)]
pub struct FileTail {
    path: PathBuf,
    compressed: bool,
    max_line: usize,
    cursor: Option<Cursor>,
}

impl FileTail {
    /// A reader for `path`, which is zstd-compressed when `compressed`. Nothing is read yet.
    pub fn new(path: impl Into<PathBuf>, compressed: bool, max_line: usize) -> FileTail {
        FileTail {
            path: path.into(),
            compressed,
            max_line,
            cursor: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True once the file has been read at least once.
    pub fn started(&self) -> bool {
        self.cursor.is_some()
    }

    /// Reads what is new and calls `on_event` for every complete line. `plan` matters only for
    /// the first read (or the first after a reset). An error means the file could not be opened
    /// or read; lines handed out before a read error stay handed out.
    pub fn read(
        &mut self,
        plan: ReadPlan,
        on_reset: &mut dyn FnMut(),
        on_event: &mut dyn FnMut(LineEvent<'_>),
    ) -> io::Result<ReadStats> {
        let mut file = File::open(&self.path)?;
        let meta = file.metadata()?;
        let identity = FileIdentity::of(&meta);
        let size = meta.len();
        let mut stats = ReadStats::default();
        if let Some(cursor) = &self.cursor {
            let replaced = cursor.identity != identity;
            let truncated = if self.compressed {
                size != cursor.size
            } else {
                size < cursor.position
            };
            if replaced || truncated {
                stats.reset = true;
                self.cursor = None;
                on_reset();
            } else if self.compressed {
                // A compressed rollout is cold and complete: once read, it has nothing new.
                return Ok(stats);
            }
        }
        let mut lines = 0u64;
        let mut counting = |event: LineEvent<'_>| {
            lines += 1;
            on_event(event);
        };
        let bytes_read = if self.compressed {
            self.read_compressed(file, identity, size, &mut counting)?
        } else if let Some(cursor) = &mut self.cursor {
            cursor.size = size;
            file.seek(SeekFrom::Start(cursor.position))?;
            feed_to_end(&mut file, cursor, &mut counting)?
        } else {
            match plan {
                ReadPlan::HeadTail { head, tail } if size > head.saturating_add(tail) => {
                    stats.head_tail = true;
                    self.read_head_tail(&mut file, identity, size, head, tail, &mut counting)?
                }
                _ => {
                    let cursor = self.cursor.insert(Cursor {
                        identity,
                        position: 0,
                        size,
                        resync: false,
                        max_line: self.max_line,
                        lines: LineBuffer::new(0, self.max_line),
                    });
                    feed_to_end(&mut file, cursor, &mut counting)?
                }
            }
        };
        stats.bytes_read = bytes_read;
        stats.lines = lines;
        Ok(stats)
    }

    /// Reads the first `head` bytes (whole lines only), then the file from `size - tail` on,
    /// starting at the first line that begins inside the tail, and keeps reading from there.
    fn read_head_tail(
        &mut self,
        file: &mut File,
        identity: FileIdentity,
        size: u64,
        head: u64,
        tail: u64,
        on_event: &mut dyn FnMut(LineEvent<'_>),
    ) -> io::Result<u64> {
        let mut head_lines = LineBuffer::new(0, self.max_line);
        let mut chunk = vec![0; CHUNK];
        let mut read = 0;
        let mut limited = (&mut *file).take(head);
        loop {
            let n = limited.read(&mut chunk)?;
            if n == 0 {
                break;
            }
            read += n as u64;
            head_lines.push(&chunk[..n], &mut *on_event);
        }
        // Start one byte early: if that byte is a newline, the tail begins with a whole line,
        // which resyncing must not drop.
        let start = size - tail - 1;
        file.seek(SeekFrom::Start(start))?;
        let cursor = self.cursor.insert(Cursor {
            identity,
            position: start,
            size,
            resync: true,
            max_line: self.max_line,
            lines: LineBuffer::new(start, self.max_line),
        });
        Ok(read + feed_to_end(file, cursor, on_event)?)
    }

    /// Decompresses a whole `.zst` rollout as a stream. Its last line needs no newline: the file
    /// is finished.
    fn read_compressed(
        &mut self,
        file: File,
        identity: FileIdentity,
        size: u64,
        on_event: &mut dyn FnMut(LineEvent<'_>),
    ) -> io::Result<u64> {
        let mut decoder = zstd::stream::read::Decoder::new(file)?;
        let cursor = self.cursor.insert(Cursor {
            identity,
            position: 0,
            size,
            resync: false,
            max_line: self.max_line,
            lines: LineBuffer::new(0, self.max_line),
        });
        let read = feed_to_end(&mut decoder, cursor, on_event)?;
        if cursor.lines.has_partial() {
            cursor.lines.push(b"\n", on_event);
        }
        Ok(read)
    }
}

const CHUNK: usize = 256 * 1024;

/// Reads `source` to its end into `cursor`, handing out complete lines.
fn feed_to_end(
    source: &mut dyn Read,
    cursor: &mut Cursor,
    on_event: &mut dyn FnMut(LineEvent<'_>),
) -> io::Result<u64> {
    let mut chunk = vec![0; CHUNK];
    let mut read = 0;
    loop {
        let n = match source.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        read += n as u64;
        let mut bytes = &chunk[..n];
        let at = cursor.position;
        cursor.position += n as u64;
        if cursor.resync {
            match bytes.iter().position(|&byte| byte == b'\n') {
                None => continue,
                Some(newline) => {
                    cursor.lines = LineBuffer::new(at + newline as u64 + 1, cursor.max_line);
                    cursor.resync = false;
                    bytes = &bytes[newline + 1..];
                }
            }
        }
        cursor.lines.push(bytes, &mut *on_event);
    }
    Ok(read)
}

/// Reads one transcript: a [`FileTail`] whose lines go through an agent's parser.
#[derive(Debug, Clone)]
pub struct TranscriptReader {
    tail: FileTail,
    /// The parser as it was before the first line, to start over when the file is replaced.
    fresh: LineReader,
    parser: LineReader,
}

/// What one read of a transcript found.
#[derive(Debug, Clone, Default)]
pub struct TranscriptRead {
    /// The observations of the new lines, after an [`Observation::Reset`] when the file was
    /// truncated or replaced.
    pub observations: Vec<Observation>,
    pub problems: Vec<Problem>,
    pub stats: ReadStats,
}

/// At most this many malformed lines are reported one by one per read; the rest are summed up,
/// so a binary file does not flood the problem list.
const MALFORMED_REPORTED: u64 = 20;

impl TranscriptReader {
    pub fn new(
        path: impl Into<PathBuf>,
        compressed: bool,
        max_line: usize,
        parser: LineReader,
    ) -> TranscriptReader {
        TranscriptReader {
            tail: FileTail::new(path, compressed, max_line),
            fresh: parser.clone(),
            parser,
        }
    }

    pub fn path(&self) -> &Path {
        self.tail.path()
    }

    /// True once the file has been read at least once.
    pub fn started(&self) -> bool {
        self.tail.started()
    }

    /// Reads and parses what is new. A malformed or oversized line is a counted problem; the
    /// lines after it are read.
    pub fn read(&mut self, plan: ReadPlan) -> io::Result<TranscriptRead> {
        let place = self.tail.path().display().to_string();
        let parser = &mut self.parser;
        let fresh = &self.fresh;
        // Set when the file turned out truncated or replaced: the parser starts over before the
        // first line of the new content.
        let restart = std::cell::Cell::new(false);
        let mut observations = Vec::new();
        let mut problems = Vec::new();
        let mut malformed = 0u64;
        let mut on_event = |event: LineEvent<'_>| match event {
            LineEvent::Line(line) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    return;
                }
                if restart.replace(false) {
                    *parser = fresh.clone();
                }
                match parser.feed(line) {
                    Ok(parsed) => observations.extend(parsed),
                    Err(error) => {
                        malformed += 1;
                        if malformed <= MALFORMED_REPORTED {
                            problems.push(problem("malformed_line", &place, error.to_string()));
                        }
                    }
                }
            }
            LineEvent::Oversized { len } => problems.push(problem(
                "huge_line",
                &place,
                format!("a line of {len} bytes was skipped"),
            )),
        };
        let reset = std::cell::Cell::new(false);
        let mut on_reset = || {
            restart.set(true);
            reset.set(true);
        };
        let stats = match self.tail.read(plan, &mut on_reset, &mut on_event) {
            Ok(stats) => stats,
            Err(error) if observations.is_empty() && problems.is_empty() => return Err(error),
            // The read failed part way: what was read stands, and the failure is counted.
            Err(error) => {
                problems.push(problem("unreadable", &place, error.to_string()));
                ReadStats {
                    reset: reset.get(),
                    ..ReadStats::default()
                }
            }
        };
        if malformed > MALFORMED_REPORTED {
            problems.push(problem(
                "malformed_line",
                &place,
                format!("{} more malformed lines", malformed - MALFORMED_REPORTED),
            ));
        }
        if stats.reset {
            observations.insert(0, Observation::Reset);
        }
        Ok(TranscriptRead {
            observations,
            problems,
            stats,
        })
    }
}

fn problem(kind: &str, place: &str, detail: impl Into<String>) -> Problem {
    Problem {
        kind: kind.to_string(),
        place: place.to_string(),
        detail: detail.into(),
    }
}

/// A transcript being followed.
#[derive(Debug, Clone)]
struct Tracked {
    agent: AgentKind,
    found: Found,
    /// True once a whole-file JSON transcript was read (it has no line reader to say so).
    whole_started: bool,
    /// The line reader, made at the first real read: most transcripts of a long history are
    /// closed and never read, and a reader with its buffers would be most of what they cost.
    reader: Option<Box<TranscriptReader>>,
    /// The size, modification time and identity at the last read: unchanged means nothing to read.
    seen: Option<(u64, Option<SystemTime>, FileIdentity)>,
}

/// A transcript's identity apart from its file: agent, session and, for a sub-agent, its id.
type TranscriptId = (AgentKind, String, Option<String>);

fn transcript_id(agent: AgentKind, found: &Found) -> TranscriptId {
    let agent_id = match &found.role {
        TranscriptRole::Main => None,
        TranscriptRole::Subagent { agent_id } => Some(agent_id.clone()),
    };
    (agent, found.session_id.clone(), agent_id)
}

/// A name index being followed, with the newest name per session.
#[derive(Debug, Clone)]
struct NameIndex {
    tail: FileTail,
    seen: Option<(u64, Option<SystemTime>, FileIdentity)>,
    names: HashMap<String, String>,
}

/// What has been read so far, so that the next scan reads only what changed.
#[derive(Debug, Clone, Default)]
pub struct ReadState {
    /// Keyed by the path's bytes: hashing and comparing a `Path` goes component by component,
    /// which was a third of a walk over a long history.
    files: HashMap<OsString, Tracked>,
    /// Which file holds each transcript, so a transcript that moves (a rollout compressed to
    /// `.jsonl.zst`) is followed rather than reported gone and read twice.
    by_transcript: HashMap<TranscriptId, PathBuf>,
    names: HashMap<AgentKind, NameIndex>,
    /// Canonical spellings of folders already resolved: (as written → canonical).
    folders: HashMap<String, String>,
    /// Gemini's project roots, by `tmp/<project>` folder, once found.
    gemini_projects: HashMap<PathBuf, String>,
}

impl ReadState {
    pub fn new() -> ReadState {
        ReadState::default()
    }

    /// The number of transcripts being followed.
    pub fn tracked(&self) -> usize {
        self.files.len()
    }

    /// Re-reads the one file at `path` from where its last read stopped, as a watcher asks after
    /// a change. A path that is no transcript of any root is ignored (an empty result).
    pub fn read_path(&mut self, roots: &Roots, options: &ScanOptions, path: &Path) -> ScanResult {
        let mut result = ScanResult::default();
        let now = SystemTime::now();
        for layout in LAYOUTS {
            let Some(root) = roots.get(layout.agent) else {
                continue;
            };
            let Ok(relative) = path.strip_prefix(root) else {
                continue;
            };
            let parts: Vec<String> = relative
                .components()
                .map(|part| part.as_os_str().to_string_lossy().into_owned())
                .collect();
            let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
            if let Some((index_file, parse)) = layout.names {
                if parts == [index_file] {
                    let changed =
                        self.read_names(layout.agent, root, index_file, parse, &mut result);
                    self.add_titles(layout.agent, &changed, &mut result);
                    return result;
                }
            }
            let Some(found) = (layout.classify)(&parts) else {
                continue;
            };
            if !path.exists() {
                result.gone.extend(self.forget(path));
                return result;
            }
            let first = self.read_transcript(layout, path, found, options, now, &mut result);
            if let Some(session) = first {
                self.add_titles(layout.agent, &[session], &mut result);
            }
            return result;
        }
        result
    }

    /// Reads `path` if its size, mtime or identity changed since the last read. Returns the
    /// session id when this was the transcript's first read.
    fn read_transcript(
        &mut self,
        layout: &TranscriptLayout,
        path: &Path,
        found: Found,
        options: &ScanOptions,
        now: SystemTime,
        result: &mut ScanResult,
    ) -> Option<String> {
        let meta = match fs::metadata(path) {
            Ok(meta) => meta,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return None,
            Err(error) => {
                let place = path.display().to_string();
                result
                    .problems
                    .push(problem("unreadable", &place, error.to_string()));
                return None;
            }
        };
        let modified = meta.modified().ok();
        let seen = (meta.len(), modified, FileIdentity::of(&meta));
        // Most of a walk is files that did not change: one lookup, nothing allocated.
        if self
            .files
            .get(path.as_os_str())
            .is_some_and(|tracked| tracked.seen == Some(seen))
        {
            return None;
        }
        let place = path.display().to_string();
        let tracked = self
            .files
            .entry(path.as_os_str().to_owned())
            .or_insert_with(|| {
                let mut found = found.clone();
                if found.short_id {
                    if let Some(full) = gemini_session_id(path, found.whole_json) {
                        found.session_id = full;
                    }
                }
                Tracked {
                    agent: layout.agent,
                    found,
                    whole_started: false,
                    reader: None,
                    seen: None,
                }
            });
        let found = tracked.found.clone();
        let key = SessionKey::new(layout.agent, found.session_id.clone());
        let first = !tracked
            .reader
            .as_ref()
            .is_some_and(|reader| reader.started())
            && !tracked.whole_started;
        let quiet = modified
            .and_then(|at| now.duration_since(at).ok())
            .is_some_and(|age| age > options.quiet_horizon);
        let last_write = modified.map(timestamp).unwrap_or(Timestamp(0));
        let vouched = options.vouched.contains(&key);
        let unvouchable = options.process_since.as_ref().is_some_and(|since| {
            since
                .get(&layout.agent)
                .is_none_or(|started| last_write < *started)
        });
        if first && quiet && !vouched && unvouchable && !options.closed_detail {
            // Closed for good until it is written again: known, not read. When it changes, its
            // reader has not started, so the next read is a proper first read.
            tracked.seen = Some(seen);
            result.skipped += 1;
            self.by_transcript
                .insert(transcript_id(layout.agent, &found), path.to_path_buf());
            result.batches.push(Batch {
                key,
                role: found.role.clone(),
                transcript: place,
                last_write,
                observations: Vec::new(),
                folders: Vec::new(),
            });
            return Some(found.session_id);
        }
        let plan = if (quiet && !vouched) || meta.len() > options.whole_read_limit {
            ReadPlan::HeadTail {
                head: options.head_bytes,
                tail: options.tail_bytes,
            }
        } else {
            ReadPlan::Whole
        };
        let read = if found.whole_json {
            // Rewritten whole on every update: read whole, and its observations start with a
            // `Reset`, so the re-read replaces the previous one.
            tracked.whole_started = true;
            read_whole_json(path)
        } else {
            let reader = tracked.reader.get_or_insert_with(|| {
                Box::new(TranscriptReader::new(
                    path,
                    found.compressed,
                    options.max_line,
                    LineReader::for_transcript(layout.agent, found.role != TranscriptRole::Main)
                        .expect("every line-file layout has a line reader"),
                ))
            });
            reader.read(plan)
        };
        let read = match read {
            Ok(read) => read,
            Err(error) => {
                // A vanished file is reported as gone by the walk; anything else is a problem.
                if error.kind() != io::ErrorKind::NotFound {
                    result
                        .problems
                        .push(problem("unreadable", &place, error.to_string()));
                }
                return None;
            }
        };
        tracked.seen = Some(seen);
        result.problems.extend(read.problems);
        result.reads.push(FileRead {
            path: path.to_path_buf(),
            stats: read.stats,
        });
        let mut observations = read.observations;
        if first {
            let id = transcript_id(layout.agent, &found);
            let moved = self
                .by_transcript
                .insert(id, path.to_path_buf())
                .is_some_and(|previous| previous != path);
            // The transcript was read before under another file name: start its records over.
            if moved && observations.first() != Some(&Observation::Reset) {
                observations.insert(0, Observation::Reset);
            }
        }
        if layout.agent == AgentKind::GeminiCli {
            self.add_gemini_folder(path, first, &mut observations);
        }
        if first || read.stats.reset || read.stats.lines > 0 {
            let role = found.role.clone();
            let folders = self.folders_of(&observations);
            result.batches.push(Batch {
                key,
                role,
                transcript: place,
                last_write,
                observations,
                folders,
            });
        }
        first.then_some(found.session_id)
    }

    /// Gemini chats do not name their folder: it is the project root `tmp/<project>` belongs to,
    /// from `tmp/<project>/.project_root`, else from `projects.json` beside `tmp/` (which also
    /// maps a legacy hash-named folder). It is added as an `Info` at the start of a chat's first
    /// batch and after every `Reset`, so a rewritten chat keeps its folder.
    fn add_gemini_folder(&mut self, path: &Path, first: bool, observations: &mut Vec<Observation>) {
        let Some(project) = path
            .ancestors()
            .find(|folder| folder.parent().and_then(Path::file_name) == Some("tmp".as_ref()))
        else {
            return;
        };
        let root = match self.gemini_projects.get(project) {
            Some(root) => root.clone(),
            None => {
                let Some(root) = gemini_project_root(project) else {
                    return;
                };
                self.gemini_projects
                    .insert(project.to_path_buf(), root.clone());
                root
            }
        };
        let info = Observation::Info(Info {
            cwd: Some(root),
            ..Info::default()
        });
        let mut at = 0;
        while at < observations.len() {
            if observations[at] == Observation::Reset {
                observations.insert(at + 1, info.clone());
                at += 1;
            }
            at += 1;
        }
        if first && observations.first() != Some(&Observation::Reset) {
            observations.insert(0, info);
        }
    }

    /// Stops following the file at `path`. Returns what to report gone, unless its transcript now
    /// lives in another file.
    fn forget(&mut self, path: &Path) -> Option<GoneTranscript> {
        let tracked = self.files.remove(path.as_os_str())?;
        let id = transcript_id(tracked.agent, &tracked.found);
        if self
            .by_transcript
            .get(&id)
            .is_some_and(|holder| holder != path)
        {
            return None;
        }
        self.by_transcript.remove(&id);
        Some(GoneTranscript {
            key: SessionKey::new(tracked.agent, tracked.found.session_id.clone()),
            role: tracked.found.role.clone(),
            transcript: path.display().to_string(),
        })
    }

    /// Reads what is new in an agent's name index; returns the sessions whose name changed.
    fn read_names(
        &mut self,
        agent: AgentKind,
        root: &Path,
        file: &str,
        parse: NameParser,
        result: &mut ScanResult,
    ) -> Vec<String> {
        let path = root.join(file);
        let place = path.display().to_string();
        let meta = match fs::metadata(&path) {
            Ok(meta) => meta,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Vec::new(),
            Err(error) => {
                result
                    .problems
                    .push(problem("unreadable", &place, error.to_string()));
                return Vec::new();
            }
        };
        let seen = (meta.len(), meta.modified().ok(), FileIdentity::of(&meta));
        let index = self.names.entry(agent).or_insert_with(|| NameIndex {
            tail: FileTail::new(&path, false, 64 * 1024),
            seen: None,
            names: HashMap::new(),
        });
        if index.seen == Some(seen) {
            return Vec::new();
        }
        let mut lines = Vec::new();
        let mut problems = Vec::new();
        let outcome = index
            .tail
            .read(ReadPlan::Whole, &mut || {}, &mut |event| match event {
                LineEvent::Line(line) if line.iter().all(u8::is_ascii_whitespace) => {}
                LineEvent::Line(line) => match parse(line) {
                    Ok(Some(entry)) => lines.push(entry),
                    Ok(None) => {}
                    Err(error) => {
                        problems.push(problem("malformed_line", &place, error.to_string()))
                    }
                },
                LineEvent::Oversized { len } => problems.push(problem(
                    "huge_line",
                    &place,
                    format!("a line of {len} bytes was skipped"),
                )),
            });
        result.problems.extend(problems);
        match outcome {
            Ok(stats) => {
                index.seen = Some(seen);
                if stats.reset {
                    index.names.clear();
                }
                result.reads.push(FileRead { path, stats });
            }
            Err(error) => {
                result
                    .problems
                    .push(problem("unreadable", &place, error.to_string()));
            }
        }
        // The index is append-only, so the newest line for an id wins.
        let mut changed = Vec::new();
        for (id, name, _) in lines {
            if index.names.get(&id) != Some(&name) {
                index.names.insert(id.clone(), name);
                changed.push(id);
            }
        }
        changed
    }

    /// Adds each named session's name, as a `Named` title, to its main transcript's batch.
    fn add_titles(&mut self, agent: AgentKind, sessions: &[String], result: &mut ScanResult) {
        let Some(index) = self.names.get(&agent) else {
            return;
        };
        let mut done: HashSet<&String> = HashSet::new();
        for session in sessions {
            if !done.insert(session) {
                continue;
            }
            let Some(name) = index.names.get(session) else {
                continue;
            };
            let title = Observation::Info(Info {
                session_id: Some(session.clone()),
                title: Some(Title {
                    text: name.clone(),
                    source: TitleSource::Named,
                }),
                ..Info::default()
            });
            let key = SessionKey::new(agent, session.clone());
            let existing = result
                .batches
                .iter_mut()
                .find(|batch| batch.key == key && batch.role == TranscriptRole::Main);
            if let Some(batch) = existing {
                batch.observations.push(title);
                continue;
            }
            let transcript = self
                .by_transcript
                .get(&(agent, session.clone(), None))
                .and_then(|path| Some((path, self.files.get(path.as_os_str())?)));
            if let Some((path, tracked)) = transcript {
                result.batches.push(Batch {
                    key,
                    role: TranscriptRole::Main,
                    transcript: path.display().to_string(),
                    last_write: tracked
                        .seen
                        .and_then(|(_, modified, _)| modified)
                        .map(timestamp)
                        .unwrap_or(Timestamp(0)),
                    observations: vec![title],
                    folders: Vec::new(),
                });
            }
        }
    }

    /// The (as written, canonical) pairs of every folder the observations name.
    fn folders_of(&mut self, observations: &[Observation]) -> Vec<(String, String)> {
        let mut folders: Vec<(String, String)> = Vec::new();
        for observation in observations {
            let Observation::Info(Info { cwd: Some(cwd), .. }) = observation else {
                continue;
            };
            if folders.iter().any(|(written, _)| written == cwd) {
                continue;
            }
            let canonical = self
                .folders
                .entry(cwd.clone())
                .or_insert_with(|| canonical_folder(cwd))
                .clone();
            folders.push((cwd.clone(), canonical));
        }
        folders
    }
}

/// The project root a Gemini `tmp/<project>` folder belongs to.
fn gemini_project_root(project: &Path) -> Option<String> {
    if let Ok(text) = fs::read_to_string(project.join(".project_root")) {
        let root = text.trim();
        if !root.is_empty() {
            return Some(root.to_string());
        }
    }
    let name = project.file_name()?.to_str()?;
    let registry = fs::read(project.parent()?.parent()?.join("projects.json")).ok()?;
    agents::gemini::project_root_from_registry(&registry, name)
}

/// Reads a whole-file JSON chat (Gemini's pre-0.39 `.json`) into observations.
fn read_whole_json(path: &Path) -> io::Result<TranscriptRead> {
    let bytes = fs::read(path)?;
    let place = path.display().to_string();
    let stats = ReadStats {
        bytes_read: bytes.len() as u64,
        lines: 1,
        head_tail: false,
        reset: false,
    };
    Ok(match agents::gemini::fold_legacy_json(&bytes) {
        Ok(observations) => TranscriptRead {
            observations,
            problems: Vec::new(),
            stats,
        },
        Err(error) => TranscriptRead {
            observations: Vec::new(),
            problems: vec![problem("malformed_line", &place, error.to_string())],
            stats,
        },
    })
}

fn timestamp(at: SystemTime) -> Timestamp {
    match at.duration_since(UNIX_EPOCH) {
        Ok(since) => Timestamp(i64::try_from(since.as_millis()).unwrap_or(i64::MAX)),
        Err(before) => Timestamp(-i64::try_from(before.duration().as_millis()).unwrap_or(0)),
    }
}

/// Walks every agent root, reads what changed since the last scan and reports what disappeared.
pub fn scan(roots: &Roots, options: &ScanOptions, state: &mut ReadState) -> ScanResult {
    let mut result = ScanResult::default();
    let now = SystemTime::now();
    let mut seen: HashSet<OsString> = HashSet::new();
    // Files under a folder that could not be listed are kept, not reported gone: they may still be
    // there.
    let mut unlisted: Vec<PathBuf> = Vec::new();
    for layout in LAYOUTS {
        let Some(root) = roots.get(layout.agent) else {
            continue;
        };
        match fs::metadata(root) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                result.problems.push(problem(
                    "unreadable",
                    &root.display().to_string(),
                    "the agent's root is not a folder",
                ));
                continue;
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => {
                result.problems.push(problem(
                    "unreadable",
                    &root.display().to_string(),
                    error.to_string(),
                ));
                unlisted.push(root.to_path_buf());
                continue;
            }
        }
        result.found.push(layout.agent);
        let changed_names = match layout.names {
            Some((file, parse)) => state.read_names(layout.agent, root, file, parse, &mut result),
            None => Vec::new(),
        };
        let mut named = changed_names;
        for (path, found) in discover(layout, root, &mut result.problems, &mut unlisted) {
            if let Some(session) =
                state.read_transcript(layout, &path, found, options, now, &mut result)
            {
                named.push(session);
            }
            seen.insert(path.into_os_string());
        }
        state.add_titles(layout.agent, &named, &mut result);
    }
    let vanished: Vec<PathBuf> = state
        .files
        .keys()
        .filter(|path| !seen.contains(*path))
        .map(PathBuf::from)
        .filter(|path| !unlisted.iter().any(|folder| path.starts_with(folder)))
        .collect();
    for path in vanished {
        if let Some(gone) = state.forget(&path) {
            result.gone.push(gone);
        }
    }
    result
}

/// Lists one agent's transcripts. Folders that cannot be listed are counted as problems and
/// pushed onto `unlisted`; the walk goes on.
fn discover(
    layout: &TranscriptLayout,
    root: &Path,
    problems: &mut Vec<Problem>,
    unlisted: &mut Vec<PathBuf>,
) -> Vec<(PathBuf, Found)> {
    let mut listings: HashMap<PathBuf, Option<Vec<Entry>>> = HashMap::new();
    let mut transcripts = Vec::new();
    for pattern in layout.folders {
        // Each folder matched so far, with the names of the folders leading to it.
        let mut folders: Vec<(PathBuf, Vec<String>)> = vec![(root.to_path_buf(), Vec::new())];
        for segment in pattern.iter() {
            let mut next = Vec::new();
            for (folder, names) in folders {
                if *segment != "*" {
                    let mut names = names;
                    names.push(segment.to_string());
                    next.push((folder.join(segment), names));
                    continue;
                }
                for entry in list(&folder, &mut listings, problems, unlisted) {
                    if entry.is_dir {
                        let mut names = names.clone();
                        names.push(entry.name.clone());
                        next.push((folder.join(&entry.name), names));
                    }
                }
            }
            folders = next;
        }
        for (folder, names) in folders {
            for entry in list(&folder, &mut listings, problems, unlisted) {
                if !entry.is_file {
                    continue;
                }
                let mut parts: Vec<&str> = names.iter().map(String::as_str).collect();
                parts.push(&entry.name);
                if let Some(found) = (layout.classify)(&parts) {
                    transcripts.push((folder.join(&entry.name), found));
                }
            }
        }
    }
    if !transcripts
        .iter()
        .any(|(_, found)| found.compressed || found.whole_json)
    {
        return transcripts;
    }
    // A rollout kept both plain and compressed is read from the plain file (FORMATS.md §2.1).
    let plain: HashSet<PathBuf> = transcripts
        .iter()
        .filter(|(_, found)| !found.compressed)
        .map(|(path, _)| path.clone())
        .collect();
    transcripts
        .retain(|(path, found)| !found.compressed || !plain.contains(&path.with_extension("")));
    // A Gemini chat kept both as a legacy `.json` and as `.jsonl` is read from the `.jsonl`.
    transcripts.retain(|(path, found)| {
        !found.whole_json || !plain.contains(&path.with_extension("jsonl"))
    });
    transcripts
}

#[derive(Debug, Clone)]
struct Entry {
    name: String,
    is_dir: bool,
    is_file: bool,
}

/// Lists a folder once per scan. A missing folder is empty (most layouts have optional parts);
/// any other failure, and any entry whose link cannot be followed, is an `unreadable` problem.
fn list(
    folder: &Path,
    listings: &mut HashMap<PathBuf, Option<Vec<Entry>>>,
    problems: &mut Vec<Problem>,
    unlisted: &mut Vec<PathBuf>,
) -> Vec<Entry> {
    if let Some(known) = listings.get(folder) {
        return known.clone().unwrap_or_default();
    }
    let mut unreadable = |place: &Path, error: io::Error| {
        problems.push(problem(
            "unreadable",
            &place.display().to_string(),
            error.to_string(),
        ));
        unlisted.push(place.to_path_buf());
    };
    let entries = match fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            listings.insert(folder.to_path_buf(), None);
            return Vec::new();
        }
        Err(error) => {
            unreadable(folder, error);
            listings.insert(folder.to_path_buf(), None);
            return Vec::new();
        }
    };
    let mut listed = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                unreadable(folder, error);
                continue;
            }
        };
        let Ok(name) = entry.file_name().into_string() else {
            // Transcript paths the agents write are UTF-8; anything else is not theirs.
            continue;
        };
        let kind = match entry.file_type() {
            Ok(kind) if kind.is_symlink() => match fs::metadata(entry.path()) {
                Ok(meta) => meta.file_type(),
                Err(error) => {
                    unreadable(&entry.path(), error);
                    continue;
                }
            },
            Ok(kind) => kind,
            Err(error) => {
                unreadable(&entry.path(), error);
                continue;
            }
        };
        listed.push(Entry {
            name,
            is_dir: kind.is_dir(),
            is_file: kind.is_file(),
        });
    }
    listings.insert(folder.to_path_buf(), Some(listed.clone()));
    listed
}

/// The canonical spelling of a folder, so that two spellings of one folder compare equal
/// (SPEC §1 "folder"): symlinks resolved where the folder exists, else a lexical normalisation
/// (`.` and `..` folded, trailing separators dropped).
///
/// On macOS `/tmp`, `/var` and `/etc` are links into `/private`; the `/private` prefix is dropped
/// so that a folder that no longer exists (spelled `/tmp/…` in a transcript) still equals its
/// canonical form from when it did. macOS and Windows file systems are case-insensitive by
/// default, so there the result is lower-cased: it is a key for comparison, not a path to open.
pub fn canonical_folder(path: &str) -> String {
    let resolved = match fs::canonicalize(path) {
        Ok(resolved) => resolved.to_string_lossy().into_owned(),
        Err(_) => lexical(path),
    };
    // Windows canonical paths carry the verbatim prefix, which transcripts never write.
    let resolved = resolved
        .strip_prefix(r"\\?\")
        .map(str::to_string)
        .unwrap_or(resolved);
    if cfg!(target_os = "macos") {
        let unprivate = ["/private/tmp", "/private/var", "/private/etc"]
            .iter()
            .find(|prefix| resolved == **prefix || resolved.starts_with(&format!("{prefix}/")))
            .map(|_| resolved["/private".len()..].to_string());
        unprivate.unwrap_or(resolved).to_lowercase()
    } else if cfg!(windows) {
        resolved.to_lowercase()
    } else {
        resolved
    }
}

/// Folds `.` and `..` and drops trailing separators without touching the disk.
fn lexical(path: &str) -> String {
    let mut normal = PathBuf::new();
    for component in Path::new(path).components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !normal.pop() {
                    normal.push("..");
                }
            }
            other => normal.push(other.as_os_str()),
        }
    }
    let text = normal.to_string_lossy().into_owned();
    if text.is_empty() {
        path.to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_folds_dots_and_trailing_separators() {
        assert_eq!(lexical("/a/b/../c/./d/"), "/a/c/d");
        assert_eq!(lexical("/"), "/");
        assert_eq!(lexical("rel/x/"), "rel/x");
    }

    #[test]
    fn claude_layout_tells_main_from_subagent() {
        let main = classify_claude(&["projects", "-p", "abc.jsonl"]);
        assert_eq!(main.map(|f| f.session_id), Some("abc".to_string()));
        assert_eq!(classify_claude(&["projects", "-p", "agent-1.jsonl"]), None);
        let sub = classify_claude(&["projects", "-p", "abc", "subagents", "agent-x1.jsonl"]);
        assert_eq!(
            sub.map(|f| f.role),
            Some(TranscriptRole::Subagent {
                agent_id: "x1".to_string()
            })
        );
        assert_eq!(
            classify_claude(&["projects", "-p", "abc", "subagents", "agent-x1.meta.json"]),
            None
        );
    }
}
