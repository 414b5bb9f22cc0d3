//! Walking the agents' line-file transcripts: what exists, what changed, and what to read of it.
//!
//! [`scan`] walks every root whose description has a transcript layout and returns one [`Batch`]
//! per transcript with new lines; [`ReadState::read_path`] re-reads one file a watcher reported.
//! A file is read from where the last read stopped ([`FileTail`](super::tail::FileTail)), and a
//! file whose size, modification time and identity did not change is not opened at all: that
//! check is one lookup, with nothing allocated, because most of a walk is such files. Quiet
//! transcripts that no process vouches for are closed, so only their head and tail are read: a
//! machine may hold tens of thousands of them. When the caller says when the agents' live
//! processes started (`ScanOptions::process_since`), a quiet transcript none of them could vouch
//! for is not read at all until it is written again or someone asks for closed sessions'
//! details: start-up then costs a stat per file. Time comes in as an argument (`now`), so a walk
//! over the same files decides the same way.
//!
//! It deliberately does not interpret a line (the descriptions' parsers do), decide anything about
//! a session (`tracker` does), or watch the file system (the engine's watcher calls
//! [`ReadState::read_path`]).

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::folders::canonical_folder;
use super::layouts::{self, NameIndexes};
use super::regular_file;
use super::roots::Roots;
pub use super::tail::FileRead;
use super::tail::{self, FileIdentity, ReadPlan, TranscriptReader};
use slate_core::agents::{
    Description, Found, Info, Layout, Observation, Registry, Title, TitleSource,
};
use slate_core::model::{AgentKind, Problem, SessionKey, Timestamp};
use slate_core::tracker::{Batch, TranscriptRole};

/// The knobs of a scan. `Default` gives the values the engine uses.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// A transcript not written for this long, whose session no process vouches for, is closed:
    /// only its head and tail are read. The window (45 s, docs/states.md §1) plus a margin for
    /// slow writers. The middle of such a file is never read, so a tool call in the head may look
    /// unanswered; that is harmless because a session without a vouching process is closed
    /// (docs/states.md §3 rule 1).
    pub quiet_horizon: Duration,
    /// How much of a closed transcript's start is read, for its session id, folder and first prompt.
    pub head_bytes: u64,
    /// How much of a closed transcript's end is read, for its latest records and titles.
    pub tail_bytes: u64,
    /// A fresh transcript larger than this is read head and tail only, like a closed one. It is
    /// also the budget of any one read: a compressed transcript is decompressed no further (its
    /// head and tail are those of what fits), a whole-file transcript larger than this is not
    /// read, and a transcript that grew by more since its last read goes on from its last this
    /// many bytes.
    pub whole_read_limit: u64,
    /// A longer line is skipped unread and counted as a `huge_line` problem.
    pub max_line: usize,
    /// Sessions a live process or listing vouches for: their transcripts are read whole on the
    /// first read even when quiet.
    pub vouched: HashSet<SessionKey>,
    /// The earliest start of a live interactive or print process of each agent (less the
    /// tracker's start slack), when the caller knows the process table; `None` when it does not.
    ///
    /// A process never vouches for a transcript last written before it started (docs/states.md
    /// §1), so a quiet transcript that nobody vouches for and that was last written before this
    /// time (or whose agent has no live process at all) is closed whatever it holds. Unless
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

/// The size, modification time and identity of a file at its last read.
type Seen = (u64, Option<SystemTime>, FileIdentity);

/// A transcript being followed.
#[derive(Debug)]
struct Tracked {
    agent: AgentKind,
    found: Found,
    /// True once a whole-file transcript was read (it has no line reader to say so).
    whole_started: bool,
    /// The line reader, made at the first real read: most transcripts of a long history are
    /// closed and never read, and a reader with its buffers would be most of what they cost.
    reader: Option<Box<TranscriptReader>>,
    /// Unchanged since the last read means nothing to read.
    seen: Option<Seen>,
    /// The size and modification time of the document beside it, where the layout keeps one.
    beside_seen: Option<(u64, Option<SystemTime>)>,
}

/// A transcript's identity apart from its file: agent, session and, for a sub-agent, its id.
type TranscriptId = (AgentKind, String, Option<String>);

fn transcript_id(agent: AgentKind, found: &Found) -> TranscriptId {
    (agent, found.session_id.clone(), found.subagent.clone())
}

fn role(found: &Found) -> TranscriptRole {
    match &found.subagent {
        None => TranscriptRole::Main,
        Some(agent_id) => TranscriptRole::Subagent {
            agent_id: agent_id.clone(),
        },
    }
}

/// What has been read so far, so that the next scan reads only what changed.
#[derive(Debug, Default)]
pub struct ReadState {
    /// Keyed by the path's bytes: hashing and comparing a `Path` goes component by component,
    /// which was a third of a walk over a long history.
    files: HashMap<OsString, Tracked>,
    /// Which file holds each transcript, so a transcript that moves (a rollout compressed to
    /// `.jsonl.zst`) is followed rather than reported gone and read twice.
    by_transcript: HashMap<TranscriptId, PathBuf>,
    names: NameIndexes,
    /// Canonical spellings of folders already resolved: (as written → canonical).
    folders: HashMap<String, String>,
    /// The folders project folders stand for, once found.
    projects: HashMap<PathBuf, String>,
}

/// The descriptions of `registry` that have a transcript layout, each with its root.
fn layouts<'a>(
    registry: Registry,
    roots: &'a Roots,
) -> impl Iterator<Item = (&'static Description, &'static Layout, &'a Path)> + 'a {
    registry.iter().filter_map(|description| {
        let layout = description.layout()?;
        Some((description, layout, roots.get(description.kind())?))
    })
}

/// Walks every root with a transcript layout, reads what changed since the last scan as of
/// `now`, and reports what disappeared.
pub fn scan(
    registry: Registry,
    roots: &Roots,
    options: &ScanOptions,
    state: &mut ReadState,
    now: Timestamp,
) -> ScanResult {
    let mut result = ScanResult::default();
    let mut seen: HashSet<OsString> = HashSet::new();
    // Files under a folder that could not be listed are kept, not reported gone: they may still be
    // there.
    let mut unlisted: Vec<PathBuf> = Vec::new();
    for (description, layout, root) in layouts(registry, roots) {
        let agent = description.kind();
        match fs::metadata(root) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                let error = io::Error::other("the agent's root is not a folder");
                result.problems.push(layouts::unreadable(root, &error));
                continue;
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => {
                result.problems.push(layouts::unreadable(root, &error));
                unlisted.push(root.to_path_buf());
                continue;
            }
        }
        result.found.push(agent);
        let mut named = match &layout.names {
            Some(index) => {
                state
                    .names
                    .read(agent, root, index, &mut result.problems, &mut result.reads)
            }
            None => Vec::new(),
        };
        for (path, found) in layouts::discover(layout, root, &mut result.problems, &mut unlisted) {
            let read = state.read_transcript(description, &path, found, options, now, &mut result);
            named.extend(read);
            seen.insert(path.into_os_string());
        }
        state.add_titles(agent, &named, &mut result);
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

impl ReadState {
    pub fn new() -> ReadState {
        ReadState::default()
    }

    /// The number of transcripts being followed.
    pub fn tracked(&self) -> usize {
        self.files.len()
    }

    /// Re-reads the one file at `path` from where its last read stopped, as a watcher asks after
    /// a change, as of `now`. A path that is no transcript of any root is ignored (an empty
    /// result).
    pub fn read_path(
        &mut self,
        registry: Registry,
        roots: &Roots,
        options: &ScanOptions,
        path: &Path,
        now: Timestamp,
    ) -> ScanResult {
        let mut result = ScanResult::default();
        for (description, layout, root) in layouts(registry, roots) {
            let agent = description.kind();
            if let Some(index) = &layout.names {
                if path
                    .strip_prefix(root)
                    .is_ok_and(|rest| rest == Path::new(index.file))
                {
                    let changed = self.names.read(
                        agent,
                        root,
                        index,
                        &mut result.problems,
                        &mut result.reads,
                    );
                    self.add_titles(agent, &changed, &mut result);
                    return result;
                }
            }
            // A change to the document beside a transcript is a change to the transcript.
            let beside = layout.beside.as_ref().and_then(|beside| {
                let name = (beside.of)(path.file_name()?.to_str()?)?;
                Some(path.with_file_name(name))
            });
            let (path, found) = match layouts::classify(layout, root, path) {
                Some(found) => (path, found),
                None => match beside.as_deref().and_then(|transcript| {
                    Some((transcript, layouts::classify(layout, root, transcript)?))
                }) {
                    Some(pair) => pair,
                    None => continue,
                },
            };
            if !path.exists() {
                result.gone.extend(self.forget(path));
                return result;
            }
            let first = self.read_transcript(description, path, found, options, now, &mut result);
            if let Some(session) = first {
                self.add_titles(agent, &[session], &mut result);
            }
            return result;
        }
        result
    }

    /// Reads `path` if its size, mtime or identity changed since the last read. Returns the
    /// session id when this was the transcript's first read.
    fn read_transcript(
        &mut self,
        description: &'static Description,
        path: &Path,
        found: Found,
        options: &ScanOptions,
        now: Timestamp,
        result: &mut ScanResult,
    ) -> Option<String> {
        let (agent, layout) = (description.kind(), description.layout()?);
        let meta = match fs::metadata(path) {
            Ok(meta) => meta,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return None,
            Err(error) => {
                result.problems.push(layouts::unreadable(path, &error));
                return None;
            }
        };
        // A FIFO, a socket or a device named like a transcript is no transcript: counted, never
        // followed. The reader checks its opened handle again, for a file swapped after this.
        if let Err(error) = regular_file::ensure(&meta) {
            result.problems.push(layouts::unreadable(path, &error));
            return None;
        }
        let beside = layout.beside.as_ref().and_then(|beside| {
            let companion = path.with_file_name((beside.name)(path.file_name()?.to_str()?)?);
            let meta = fs::metadata(&companion).ok().filter(|meta| meta.is_file());
            Some((
                companion,
                meta.map(|meta| (meta.len(), meta.modified().ok())),
            ))
        });
        let beside_seen = beside.as_ref().and_then(|(_, seen)| *seen);
        let modified = meta.modified().ok().max(beside_seen.and_then(|(_, at)| at));
        let seen = (meta.len(), meta.modified().ok(), FileIdentity::of(&meta));
        // Most of a walk is files that did not change: one lookup, nothing allocated.
        if self
            .files
            .get(path.as_os_str())
            .is_some_and(|tracked| tracked.seen == Some(seen) && tracked.beside_seen == beside_seen)
        {
            return None;
        }
        let place = path.display().to_string();
        let tracked = self
            .files
            .entry(path.as_os_str().to_owned())
            .or_insert_with(|| {
                let mut found = found;
                if let (true, Some(parse)) = (found.short_id, layout.full_id) {
                    let limit = options.whole_read_limit;
                    if let Some(full) = layouts::full_id(path, found.whole_file, limit, parse) {
                        found.session_id = full;
                    }
                }
                Tracked {
                    agent,
                    found,
                    whole_started: false,
                    reader: None,
                    seen: None,
                    beside_seen: None,
                }
            });
        let found = tracked.found.clone();
        let key = SessionKey::new(agent, found.session_id.clone());
        let first = !tracked
            .reader
            .as_ref()
            .is_some_and(|reader| reader.started())
            && !tracked.whole_started;
        let last_write = modified.map(tail::timestamp).unwrap_or(Timestamp(0));
        let quiet = modified.is_some() && last_write.elapsed_until(now) > options.quiet_horizon;
        let vouched = options.vouched.contains(&key);
        let unvouchable = options.process_since.as_ref().is_some_and(|since| {
            since
                .get(&agent)
                .is_none_or(|started| last_write < *started)
        });
        if first && quiet && !vouched && unvouchable && !options.closed_detail {
            // Closed for good until it is written again: known, not read. When it changes, its
            // reader has not started, so the next read is a proper first read.
            tracked.seen = Some(seen);
            tracked.beside_seen = beside_seen;
            result.skipped += 1;
            self.by_transcript
                .insert(transcript_id(agent, &found), path.to_path_buf());
            result.batches.push(Batch {
                key,
                role: role(&found),
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
        let read = match (found.whole_file, layout.whole_file) {
            // With the document beside it: both read whole, together.
            (true, _) if layout.beside.is_some() => {
                tracked.whole_started = true;
                let (beside, companion) = (layout.beside.as_ref()?, beside.as_ref()?);
                let limit = options.whole_read_limit;
                layouts::read_whole_beside(path, &companion.0, limit, beside.read)
            }
            // Rewritten whole on every update: read whole, and its observations start with a
            // `Reset`, so the re-read replaces the previous one.
            (true, Some(parse)) => {
                tracked.whole_started = true;
                layouts::read_whole_file(path, options.whole_read_limit, parse)
            }
            _ => {
                let reader = tracked.reader.get_or_insert_with(|| {
                    let parser = (layout.parser)(found.subagent.is_some());
                    let reader =
                        TranscriptReader::new(path, found.compressed, options.max_line, parser);
                    Box::new(reader.with_budget(options.whole_read_limit))
                });
                reader.read(plan)
            }
        };
        let read = match read {
            Ok(read) => read,
            Err(error) => {
                // A vanished file is reported as gone by the walk; anything else is a problem.
                if error.kind() != io::ErrorKind::NotFound {
                    result.problems.push(layouts::unreadable(path, &error));
                }
                return None;
            }
        };
        tracked.seen = Some(seen);
        tracked.beside_seen = beside_seen;
        result.problems.extend(read.problems);
        result.reads.push(FileRead {
            path: path.to_path_buf(),
            stats: read.stats,
        });
        let mut observations = read.observations;
        if first {
            let id = transcript_id(agent, &found);
            let moved = self
                .by_transcript
                .insert(id, path.to_path_buf())
                .is_some_and(|previous| previous != path);
            // The transcript was read before under another file name: start its records over.
            if moved && observations.first() != Some(&Observation::Reset) {
                observations.insert(0, Observation::Reset);
            }
        }
        if let Some(rule) = &layout.project {
            let problems = &mut result.problems;
            self.add_project_folder(path, rule, first, &mut observations, problems);
        }
        if first || read.stats.reset || read.stats.lines > 0 {
            let folders = self.folders_of(&observations);
            result.batches.push(Batch {
                key,
                role: role(&found),
                transcript: place,
                last_write,
                observations,
                folders,
            });
        }
        first.then_some(found.session_id)
    }

    /// A transcript that does not name its folder (a Gemini chat) belongs to the folder its
    /// project folder stands for (`layouts::project_root`). It is added as an `Info` at the start
    /// of the transcript's first batch and after every `Reset`, so a rewritten transcript keeps
    /// its folder.
    fn add_project_folder(
        &mut self,
        path: &Path,
        rule: &slate_core::agents::ProjectFolder,
        first: bool,
        observations: &mut Vec<Observation>,
        problems: &mut Vec<Problem>,
    ) {
        let Some(project) = layouts::project_of(path, rule) else {
            return;
        };
        let root = match self.projects.get(project) {
            Some(root) => root.clone(),
            None => {
                let Some(root) = layouts::project_root(project, rule, problems) else {
                    return;
                };
                self.projects.insert(project.to_path_buf(), root.clone());
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
            role: role(&tracked.found),
            transcript: path.display().to_string(),
        })
    }

    /// Adds each named session's name, as a `Named` title, to its main transcript's batch.
    fn add_titles(&mut self, agent: AgentKind, sessions: &[String], result: &mut ScanResult) {
        let mut done: HashSet<&String> = HashSet::new();
        for session in sessions {
            if !done.insert(session) {
                continue;
            }
            let Some(name) = self.names.name(agent, session) else {
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
                        .map(tail::timestamp)
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
