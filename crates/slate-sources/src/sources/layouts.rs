//! The reading half of the agents' transcript layouts: the I/O that a [`Layout`] in an agent's
//! description asks for.
//!
//! A layout says, as data and pure functions, which folders hold transcripts and what a path
//! means; this module lists those folders ([`discover`]), classifies one changed path
//! ([`classify`]), reads a short-id transcript's full id from its first line, finds the folder of
//! a transcript that does not name it from the files beside it, reads a whole-file transcript, and
//! follows an agent's append-only index of session names ([`NameIndexes`]). It knows no agent by
//! name, keeps no reading position of a transcript (the walk does) and interprets no line (the
//! description's parser does). Every file it opens goes through `sources::regular_file`, with a
//! size limit for the ones read whole.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::regular_file;
use super::tail::{self, FileIdentity, FileRead, FileTail, ReadPlan, ReadStats, TranscriptRead};
use slate_core::agents::{
    BesideReader, Found, IdReader, Layout, NameIndex, ProjectFolder, WholeFileReader,
};
use slate_core::lines::LineEvent;
use slate_core::model::{AgentKind, Problem, ProblemKind};

/// Lists one layout's transcripts under `root`. Folders that cannot be listed are counted as
/// problems and pushed onto `unlisted`; the walk goes on.
pub fn discover(
    layout: &Layout,
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
                // Not only regular files: a FIFO or a device link named like a transcript is
                // listed too, so the walk reports it rather than passing over it in silence.
                if entry.is_dir {
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
        .any(|(_, found)| found.compressed || found.whole_file)
    {
        return transcripts;
    }
    // A transcript kept both plain and compressed is read from the plain file (docs/formats.md
    // §2.1).
    let plain: HashSet<PathBuf> = transcripts
        .iter()
        .filter(|(_, found)| !found.compressed)
        .map(|(path, _)| path.clone())
        .collect();
    transcripts
        .retain(|(path, found)| !found.compressed || !plain.contains(&path.with_extension("")));
    // A chat kept both as a legacy whole-file `.json` and as `.jsonl` is read from the `.jsonl`.
    transcripts.retain(|(path, found)| {
        !found.whole_file || !plain.contains(&path.with_extension("jsonl"))
    });
    transcripts
}

/// What `layout` makes of `path`, a file under `root`.
pub fn classify(layout: &Layout, root: &Path, path: &Path) -> Option<Found> {
    let parts = relative_parts(root, path)?;
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    (layout.classify)(&parts)
}

/// The names of `path`'s components below `root`, or `None` when it is not below it.
pub fn relative_parts(root: &Path, path: &Path) -> Option<Vec<String>> {
    let relative = path.strip_prefix(root).ok()?;
    Some(
        relative
            .components()
            .map(|part| part.as_os_str().to_string_lossy().into_owned())
            .collect(),
    )
}

#[derive(Debug, Clone)]
struct Entry {
    name: String,
    is_dir: bool,
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
    let mut fail = |place: &Path, error: io::Error| {
        problems.push(unreadable(place, &error));
        unlisted.push(place.to_path_buf());
    };
    let entries = match fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            listings.insert(folder.to_path_buf(), None);
            return Vec::new();
        }
        Err(error) => {
            fail(folder, error);
            listings.insert(folder.to_path_buf(), None);
            return Vec::new();
        }
    };
    let mut listed = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                fail(folder, error);
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
                    fail(&entry.path(), error);
                    continue;
                }
            },
            Ok(kind) => kind,
            Err(error) => {
                fail(&entry.path(), error);
                continue;
            }
        };
        listed.push(Entry {
            name,
            is_dir: kind.is_dir(),
        });
    }
    listings.insert(folder.to_path_buf(), Some(listed.clone()));
    listed
}

/// The `unreadable` problem an I/O error at `place` becomes.
pub fn unreadable(place: &Path, error: &io::Error) -> Problem {
    Problem::new(
        ProblemKind::Unreadable,
        place.display().to_string(),
        error.to_string(),
    )
}

/// The full session id of a short-id transcript, through `parse`: from its first line (reading
/// at most its first 64 KiB), or from the whole document of a whole-file transcript of at most
/// `limit` bytes. Such whole-file transcripts are from before Gemini CLI 0.39 and few, so reading
/// one whole for its id, even when it is closed history, costs little.
pub fn full_id(path: &Path, whole_file: bool, limit: u64, parse: IdReader) -> Option<String> {
    let bytes = if whole_file {
        regular_file::read(path, limit).ok()?
    } else {
        // Buffered, so a short first line costs one small read, not the whole limit.
        let mut head = Vec::new();
        let file = regular_file::open(path).ok()?.take(64 * 1024);
        io::BufRead::read_until(&mut io::BufReader::new(file), b'\n', &mut head).ok()?;
        if head.last() != Some(&b'\n') {
            return None;
        }
        head.pop();
        head
    };
    parse(&bytes)
}

/// The project folder a transcript at `path` lies in: the folder directly below a folder named
/// `rule.parent`.
pub fn project_of<'a>(path: &'a Path, rule: &ProjectFolder) -> Option<&'a Path> {
    path.ancestors()
        .find(|folder| folder.parent().and_then(Path::file_name) == Some(rule.parent.as_ref()))
}

/// The most of a project folder's marker file that is read: it holds one path.
const MARKER_LIMIT: u64 = 64 * 1024;

/// The most of a root's registry of project folders that is read.
const REGISTRY_LIMIT: u64 = 4 * 1024 * 1024;

/// The folder `project` stands for: the text of its marker file, else what the root's registry
/// says about its name. A marker or registry that is there but cannot be read (not a regular file,
/// too large, unreadable) is a counted problem.
pub fn project_root(
    project: &Path,
    rule: &ProjectFolder,
    problems: &mut Vec<Problem>,
) -> Option<String> {
    let mut read = |path: &Path, limit: u64| match regular_file::read(path, limit) {
        Ok(bytes) => Some(bytes),
        Err(error) if error.kind() == io::ErrorKind::NotFound => None,
        Err(error) => {
            problems.push(unreadable(path, &error));
            None
        }
    };
    if let Some(bytes) = read(&project.join(rule.marker), MARKER_LIMIT) {
        let text = String::from_utf8_lossy(&bytes);
        let root = text.trim();
        if !root.is_empty() {
            return Some(root.to_string());
        }
    }
    let name = project.file_name()?.to_str()?;
    let registry = read(
        &project.parent()?.parent()?.join(rule.registry),
        REGISTRY_LIMIT,
    )?;
    (rule.from_registry)(&registry, name)
}

/// Reads a whole-file transcript (Gemini's pre-0.39 `.json` chat) of at most `limit` bytes into
/// observations.
pub fn read_whole_file(
    path: &Path,
    limit: u64,
    parse: WholeFileReader,
) -> io::Result<TranscriptRead> {
    read_whole_file_with(path, limit, parse)
}

fn read_whole_file_with(
    path: &Path,
    limit: u64,
    parse: impl Fn(&[u8]) -> Result<Vec<slate_core::agents::Observation>, slate_core::agents::LineError>,
) -> io::Result<TranscriptRead> {
    let bytes = regular_file::read(path, limit)?;
    let place = path.display().to_string();
    let stats = ReadStats {
        bytes_read: bytes.len() as u64,
        lines: 1,
        ..ReadStats::default()
    };
    Ok(match parse(&bytes) {
        Ok(observations) => TranscriptRead {
            observations,
            problems: Vec::new(),
            stats,
        },
        Err(error) => TranscriptRead {
            observations: Vec::new(),
            problems: vec![Problem::new(
                ProblemKind::MalformedLine,
                place,
                error.to_string(),
            )],
            stats,
        },
    })
}

/// Reads a whole-file transcript with the document beside it (`layout.beside`), each of at most
/// `limit` bytes, into observations. A companion that is missing or cannot be read is left out:
/// the transcript alone still reads.
pub fn read_whole_beside(
    path: &Path,
    companion: &Path,
    limit: u64,
    read: BesideReader,
) -> io::Result<TranscriptRead> {
    let beside = regular_file::read(companion, limit).ok();
    read_whole_file_with(path, limit, |bytes| read(bytes, beside.as_deref()))
}

/// The agents' name indexes being followed, each with the newest name per session.
#[derive(Debug, Default)]
pub struct NameIndexes {
    indexes: HashMap<AgentKind, Followed>,
}

#[derive(Debug)]
struct Followed {
    tail: FileTail,
    seen: Option<(u64, Option<std::time::SystemTime>, FileIdentity)>,
    names: HashMap<String, String>,
}

impl NameIndexes {
    /// The name `agent`'s index gives `session`, if any.
    pub fn name(&self, agent: AgentKind, session: &str) -> Option<&String> {
        self.indexes.get(&agent)?.names.get(session)
    }

    /// Reads what is new in `agent`'s name index under `root`; returns the sessions whose name
    /// changed.
    pub fn read(
        &mut self,
        agent: AgentKind,
        root: &Path,
        index: &NameIndex,
        problems: &mut Vec<Problem>,
        reads: &mut Vec<FileRead>,
    ) -> Vec<String> {
        let path = root.join(index.file);
        let place = path.display().to_string();
        let meta = match fs::metadata(&path) {
            Ok(meta) => meta,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Vec::new(),
            Err(error) => {
                problems.push(unreadable(&path, &error));
                return Vec::new();
            }
        };
        let seen = (meta.len(), meta.modified().ok(), FileIdentity::of(&meta));
        let followed = self.indexes.entry(agent).or_insert_with(|| Followed {
            tail: FileTail::new(&path, false, 64 * 1024),
            seen: None,
            names: HashMap::new(),
        });
        if followed.seen == Some(seen) {
            return Vec::new();
        }
        let mut lines = Vec::new();
        let mut malformed = Vec::new();
        let outcome = followed
            .tail
            .read(ReadPlan::Whole, &mut || {}, &mut |event| match event {
                LineEvent::Line(line) if line.iter().all(u8::is_ascii_whitespace) => {}
                LineEvent::Line(line) => match (index.parse)(line) {
                    Ok(Some(entry)) => lines.push(entry),
                    Ok(None) => {}
                    Err(error) => malformed.push(Problem::new(
                        ProblemKind::MalformedLine,
                        &place,
                        error.to_string(),
                    )),
                },
                LineEvent::Oversized { len } => malformed.push(tail::oversized(&place, len)),
            });
        problems.extend(malformed);
        match outcome {
            Ok(stats) => {
                followed.seen = Some(seen);
                if stats.reset {
                    followed.names.clear();
                }
                reads.push(FileRead { path, stats });
            }
            Err(error) => problems.push(unreadable(&path, &error)),
        }
        // The index is append-only, so the newest line for an id wins.
        let mut changed = Vec::new();
        for (id, name, _) in lines {
            if followed.names.get(&id) != Some(&name) {
                followed.names.insert(id.clone(), name);
                changed.push(id);
            }
        }
        changed
    }
}
