//! Slate's entries in the agents' own hook configurations, on disk (docs/hooks.md): where each
//! configuration is, what of Slate's it holds, and installing and removing Slate's entries.
//!
//! What an entry is and how a configuration's text is edited is `agents::hooks` (pure); this
//! module reads and writes the files. An entry is Slate's only when its text is, byte for byte,
//! one this Slate writes or one a Slate of this HOME recorded when it installed it: the record
//! (`hooks-installed.json` in Slate's data folder) holds, per file, the entries written and
//! whether Slate created the file, and only a file Slate created is ever deleted. A change is
//! made to a new file renamed over the old one, after one backup beside it (`<file>.slate-backup`,
//! readable by its owner only), and only when the text changes; what a killed run left (its
//! `<file>.slate-<pid>`) is cleared on the next. A link to a file is edited where it points; a
//! dangling link, a read-only file or an agent home given as a relative path is refused, named
//! with why.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{last_fired, private};
use leftovers::clear_leftovers;

mod leftovers;
use crate::places::Places;
use slate_core::agents::description::Description;
use slate_core::agents::hooks::{self, settings, HookFormat, Hooks, Verified};
use slate_core::agents::Registry;
use slate_core::model::AgentKind;
use slate_sources::sources::regular_file;
use slate_sources::sources::roots::{self, Env};

/// Why a configuration could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum HooksError {
    #[error("cannot find {0}'s hook configuration (its base folder is not set)")]
    NoPlace(String),
    #[error(
        "{name} is {value:?}, a relative path: the agent reads it against the folder it starts \
         in, which Slate cannot know; set {name} to an absolute path"
    )]
    Relative { name: String, value: PathBuf },
    #[error("{path} is left as it is: {source}")]
    Unreadable { path: PathBuf, source: io::Error },
    #[error("{path} is left as it is: {source}")]
    Refused {
        path: PathBuf,
        source: hooks::ParseError,
    },
    #[error("{path} is left as it is: it is a link to {target}, which does not exist")]
    Dangling { path: PathBuf, target: PathBuf },
    #[error(
        "{path} is left as it is: it is read-only (mode {mode:04o}); make it writable \
         (chmod u+w) for Slate to change it"
    )]
    ReadOnly { path: PathBuf, mode: u32 },
    #[error("cannot read Slate's record of the hooks it installed, {path}: {reason}")]
    Record { path: PathBuf, reason: String },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
}

/// One agent's hooks as they stand.
#[derive(Debug, Clone, Serialize)]
pub struct AgentHooks {
    pub agent: AgentKind,
    pub product: String,
    pub path: Option<PathBuf>,
    /// The events that have Slate's hook.
    pub installed: Vec<String>,
    /// The events Slate listens to that have none yet.
    pub missing: Vec<String>,
    /// Why the configuration could not be read, when it could not.
    pub error: Option<String>,
    pub verified: Verified,
    /// What the agent asks before new hooks run, and how to give it.
    pub trust: Option<String>,
    /// The last event a hook passed on: its name and when (`slate hook` notes it).
    pub last_fired: Option<String>,
    /// True when Slate's decision hook is installed (`slate hooks install --answer`).
    pub answers: bool,
}

/// What an install or a remove did to one agent's configuration.
#[derive(Debug, Clone, Serialize)]
pub struct Changed {
    pub agent: AgentKind,
    pub path: PathBuf,
    /// False when the file already was as asked.
    pub changed: bool,
    /// The copy of the file as it was, when there was one to keep.
    pub backup: Option<PathBuf>,
    /// True when the file was deleted: Slate had created it, and nothing else was in it.
    pub deleted: bool,
    pub trust: Option<String>,
}

/// Where `description`'s hook configuration is in this environment.
pub fn config_path(hooks: &Hooks, env: &Env) -> Option<PathBuf> {
    roots::first_of(hooks.file, env)
}

/// Where the configuration is, or why it cannot be said: no base folder, or an agent's home
/// given as a relative path.
fn place(description: &Description, hooks: &Hooks, env: &Env) -> Result<PathBuf, HooksError> {
    if let Some((name, value)) = roots::relative_var(hooks.file, env) {
        return Err(HooksError::Relative {
            name: name.to_string(),
            value: value.to_path_buf(),
        });
    }
    config_path(hooks, env).ok_or_else(|| HooksError::NoPlace(description.product.to_string()))
}

/// Every agent of `registry` that has hooks.
pub fn agents(registry: Registry) -> impl Iterator<Item = (&'static Description, &'static Hooks)> {
    registry
        .iter()
        .filter_map(|description| Some((description, description.hooks?)))
}

/// This program's path, as the hooks it installs run it.
pub fn this_program() -> io::Result<String> {
    let path = std::env::current_exe()?;
    path.to_str().map(str::to_string).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("this program's path {} is not UTF-8", path.display()),
        )
    })
}

/// Each agent's hooks as they stand: Slate's entries are those this program writes and those
/// recorded at install.
pub fn status(registry: Registry, env: &Env, places: Option<&Places>) -> Vec<AgentHooks> {
    let program = this_program().ok();
    let record = places.and_then(|places| Record::load(places).ok());
    agents(registry)
        .map(|(description, hooks)| {
            let agent = description.kind();
            let path = config_path(hooks, env);
            let found = match place(description, hooks, env) {
                // No base folder: nothing is installed, and nothing is wrong.
                Err(HooksError::NoPlace(_)) => Ok((Vec::new(), false)),
                Err(err) => Err(err.to_string()),
                Ok(path) => {
                    let path = fs::canonicalize(&path).unwrap_or(path);
                    let mut own = program
                        .as_deref()
                        .map(|program| settings::entries(hooks, description.id, program))
                        .unwrap_or_default();
                    if let Some(written) = record.as_ref().and_then(|record| record.of(&path)) {
                        own.extend(written.entries.iter().cloned());
                    }
                    own.extend(settings::answer_entry(
                        hooks,
                        description.id,
                        program.as_deref().unwrap_or(""),
                    ));
                    if hooks.format == HookFormat::Files {
                        files_installed(
                            hooks,
                            description.id,
                            &path,
                            program.as_deref(),
                            record.as_ref(),
                        )
                        .map(|events| (events, false))
                        .map_err(|err| err.to_string())
                    } else {
                        installed_events(hooks, description.id, &path, &own).map(|events| {
                            let text = read_config(&path).unwrap_or_default();
                            let on = settings::answering(hooks, description.id, &text, &own);
                            (events, on.unwrap_or(false))
                        })
                    }
                }
            };
            let ((installed, answers), error) = match found {
                Ok(found) => (found, None),
                Err(err) => ((Vec::new(), false), Some(err)),
            };
            let missing = hooks
                .events
                .iter()
                .map(|(event, _)| event.to_string())
                .filter(|event| !installed.contains(event))
                .collect();
            AgentHooks {
                agent,
                product: description.product.to_string(),
                path,
                installed,
                missing,
                error,
                verified: hooks.verified,
                trust: hooks.trust.map(str::to_string),
                last_fired: places.and_then(|places| last_fired(places, description.id)),
                answers,
            }
        })
        .collect()
}

/// The events that have Slate's hook (one of `own`) in the configuration at `path`, or why it
/// could not be read.
fn installed_events(
    hooks: &Hooks,
    agent: &str,
    path: &Path,
    own: &[String],
) -> Result<Vec<String>, String> {
    let text = read_config(path).map_err(|err| err.to_string())?;
    settings::installed(hooks, agent, &text, own).map_err(|err| err.to_string())
}

/// The configuration's text: empty for a file that does not exist.
fn read_config(path: &Path) -> io::Result<String> {
    match regular_file::read_to_string(path, hooks::SETTINGS_LIMIT as u64) {
        Ok(text) => Ok(text),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(String::new()),
        Err(err) => Err(err),
    }
}

/// Installs Slate's hooks for `description`, running `program`, and records what it wrote in
/// Slate's data folder.
pub fn install(
    description: &'static Description,
    env: &Env,
    places: &Places,
    program: &str,
) -> Result<Changed, HooksError> {
    change(description, env, places, program, true, false)
}

/// Installs Slate's hooks and its decision hook (`--answer`) for `description`, or, with
/// `installing` false, takes its decision hook out and leaves its other hooks.
pub fn answering(
    description: &'static Description,
    env: &Env,
    places: &Places,
    program: &str,
    installing: bool,
) -> Result<Changed, HooksError> {
    change(description, env, places, program, installing, true)
}

/// Takes Slate's hooks out of `description`'s configuration: the entries `program` writes and
/// those recorded at install, byte for byte, and nothing else.
pub fn remove(
    description: &'static Description,
    env: &Env,
    places: &Places,
    program: &str,
) -> Result<Changed, HooksError> {
    change(description, env, places, program, false, false)
}

/// Installs (`install`) or removes Slate's hooks, in a file per event or in one configuration.
fn change(
    description: &'static Description,
    env: &Env,
    places: &Places,
    program: &str,
    install: bool,
    answer: bool,
) -> Result<Changed, HooksError> {
    if description.hooks.map(|hooks| hooks.format) == Some(HookFormat::Files) {
        return edit_files(description, env, places, program, install);
    }
    edit(description, env, places, program, install, answer)
}

/// The file to edit for the configuration named `named`: the file a link points to, or `named`
/// itself. A link that points nowhere is refused: writing there would replace the link.
fn target(named: &Path) -> Result<PathBuf, HooksError> {
    let unreadable = |source| HooksError::Unreadable {
        path: named.to_path_buf(),
        source,
    };
    match fs::symlink_metadata(named) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            // The file is not there yet; a folder above it kept as a link is followed.
            let folder = named
                .parent()
                .and_then(|folder| fs::canonicalize(folder).ok());
            Ok(match (folder, named.file_name()) {
                (Some(folder), Some(name)) => folder.join(name),
                _ => named.to_path_buf(),
            })
        }
        Err(err) => Err(unreadable(err)),
        Ok(meta) if meta.file_type().is_symlink() => match fs::canonicalize(named) {
            Ok(path) => Ok(path),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Err(HooksError::Dangling {
                path: named.to_path_buf(),
                target: fs::read_link(named).unwrap_or_default(),
            }),
            Err(err) => Err(unreadable(err)),
        },
        Ok(_) => Ok(fs::canonicalize(named).unwrap_or_else(|_| named.to_path_buf())),
    }
}

/// Refuses a file its owner cannot write: a person who made a configuration read-only meant
/// it to stay as it is.
fn writable(path: &Path) -> Result<(), HooksError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = fs::metadata(path) {
            let mode = meta.permissions().mode() & 0o7777;
            if mode & 0o200 == 0 {
                return Err(HooksError::ReadOnly {
                    path: path.to_path_buf(),
                    mode,
                });
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

fn edit(
    description: &'static Description,
    env: &Env,
    places: &Places,
    program: &str,
    installing: bool,
    answer: bool,
) -> Result<Changed, HooksError> {
    let hooks = description
        .hooks
        .ok_or_else(|| HooksError::NoPlace(description.product.to_string()))?;
    let agent = description.id;
    // A configuration kept as a link (a dotfiles folder) is edited where it lives.
    let path = target(&place(description, hooks, env)?)?;
    clear_leftovers(&path);
    let existed = fs::symlink_metadata(&path).is_ok();
    let text = read_config(&path).map_err(|source| HooksError::Unreadable {
        path: path.clone(),
        source,
    })?;
    let mut record = Record::load(places)?;
    let written = record.of(&path).cloned().unwrap_or_default();
    let mut mine = settings::entries(hooks, agent, program);
    let decision = settings::answer_entry(hooks, agent, program);
    mine.extend(decision.clone().filter(|_| answer && installing));
    let mut own = mine.clone();
    own.extend(written.entries.iter().cloned());
    own.extend(decision);
    if answer && !installing {
        // Only the decision hook goes: entries with its flag.
        own.retain(|entry| entry.contains(hooks::decision::ANSWER_FLAG));
    }
    let refused = |source| HooksError::Refused {
        path: path.clone(),
        source,
    };
    let new = if installing {
        let new =
            settings::install(hooks, agent, program, &text, &written.entries).map_err(refused)?;
        if answer {
            settings::install_answer(hooks, agent, program, &new, &own).map_err(refused)?
        } else {
            new
        }
    } else {
        settings::remove(hooks, agent, &text, &own).map_err(refused)?
    };
    let trust = hooks.trust.map(str::to_string);
    let unchanged = Changed {
        agent: description.kind(),
        path: path.clone(),
        changed: false,
        backup: None,
        deleted: false,
        trust: trust.clone(),
    };
    if new == text {
        return Ok(unchanged);
    }
    writable(&path)?;
    // What the file was before Slate's first entry: kept while any of Slate's entries is in it.
    let before = if !existed {
        Before::Absent
    } else if text.trim().is_empty() {
        Before::Blank(text.clone())
    } else if settings::installed(hooks, agent, &text, &own).is_ok_and(|found| !found.is_empty()) {
        written.before.clone()
    } else {
        Before::Theirs
    };
    let write_error = |path: &Path, source| HooksError::Write {
        path: path.to_path_buf(),
        source,
    };
    let record_file = places.data_dir.join(RECORD_FILE);
    if installing {
        // Recorded before the file is written: a run killed in between leaves entries the
        // record knows.
        let mut entries = written.entries.clone();
        for entry in mine {
            if !entries.contains(&entry) {
                entries.push(entry);
            }
        }
        record.set(
            &path,
            Some(Written {
                before: before.clone(),
                entries,
            }),
        );
        record
            .save(&record_file)
            .map_err(|source| write_error(&record_file, source))?;
    }
    let backup = if text.is_empty() {
        None
    } else {
        let backup = backup_path(&path);
        write_whole(&backup, &text, Some(0o600)).map_err(|source| write_error(&backup, source))?;
        Some(backup)
    };
    let mut deleted = false;
    if new.is_empty() && !installing {
        match &before {
            Before::Absent => {
                fs::remove_file(&path).map_err(|source| write_error(&path, source))?;
                deleted = true;
            }
            Before::Blank(was) => {
                write_whole(&path, was, None).map_err(|source| write_error(&path, source))?
            }
            Before::Theirs => write_whole(&path, settings::empty(hooks), None)
                .map_err(|source| write_error(&path, source))?,
        }
    } else {
        write_whole(&path, &new, None).map_err(|source| write_error(&path, source))?;
    }
    if !installing {
        // Nothing of Slate's is left to know again (but its other hooks, when only the
        // decision hook went).
        let rest = Written {
            entries: (written.entries.iter())
                .filter(|entry| !entry.contains(hooks::decision::ANSWER_FLAG))
                .cloned()
                .collect(),
            ..written
        };
        record.set(&path, answer.then_some(rest));
        record
            .save(&record_file)
            .map_err(|source| write_error(&record_file, source))?;
    }
    Ok(Changed {
        changed: true,
        backup,
        deleted,
        ..unchanged
    })
}

/// Slate's record of the hooks it installed, in its data folder.
const RECORD_FILE: &str = "hooks-installed.json";
/// The most the record may hold for Slate to read it.
const RECORD_LIMIT: u64 = 4 * 1024 * 1024;

/// What a Slate of this HOME wrote into each hook configuration, by the file's path.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    files: BTreeMap<String, Written>,
}

/// What Slate wrote into one file: what the file was before, and the exact entries.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Written {
    before: Before,
    entries: Vec<String>,
}

/// What a file was before Slate's first entry went in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Before {
    /// It did not exist: Slate created it, and deletes it once nothing else is in it.
    Absent,
    /// It held this blank text (an empty file), which it gets back.
    Blank(String),
    /// It held the person's text, or Slate does not know: it is never deleted.
    #[default]
    Theirs,
}

impl Record {
    /// The record in `places`' data folder: empty when there is none yet, an error when it does
    /// not read (it is then left as it is, and nothing is changed).
    fn load(places: &Places) -> Result<Record, HooksError> {
        let path = places.data_dir.join(RECORD_FILE);
        let error = |reason: String| HooksError::Record {
            path: path.clone(),
            reason,
        };
        match regular_file::read_to_string(&path, RECORD_LIMIT) {
            Ok(text) => serde_json::from_str(&text).map_err(|err| error(err.to_string())),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(Record::default()),
            Err(err) => Err(error(err.to_string())),
        }
    }

    fn key(path: &Path) -> String {
        path.to_string_lossy().into_owned()
    }

    fn of(&self, path: &Path) -> Option<&Written> {
        self.files.get(&Record::key(path))
    }

    fn set(&mut self, path: &Path, written: Option<Written>) {
        match written {
            Some(written) => self.files.insert(Record::key(path), written),
            None => self.files.remove(&Record::key(path)),
        };
    }

    fn save(&self, path: &Path) -> io::Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        write_whole(path, &format!("{text}\n"), Some(0o600))
    }
}

/// The most a hook file may hold for Slate to read it: Slate's are a few hundred bytes.
const HOOK_FILE_LIMIT: u64 = 64 * 1024;

/// What the file of `event` in a folder of hooks is: absent, Slate's hook for that event (its
/// text, one of `known` byte for byte), one in Slate's form that this Slate neither writes nor
/// recorded (another Slate's, or edited since), or someone else's.
enum HookFile {
    Absent,
    Slates(String),
    Unknown,
    Theirs,
}

fn hook_file(agent: &str, folder: &Path, event: &str, known: &[String]) -> io::Result<HookFile> {
    let path = folder.join(event);
    match fs::symlink_metadata(&path) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(HookFile::Absent),
        Err(err) => return Err(err),
        Ok(meta) if !meta.file_type().is_file() => return Ok(HookFile::Theirs),
        Ok(_) => {}
    }
    // A file too large, or not text, is not one Slate wrote.
    let Ok(text) = regular_file::read_to_string(&path, HOOK_FILE_LIMIT) else {
        return Ok(HookFile::Theirs);
    };
    Ok(match settings::script_event(agent, &text) {
        Some(found) if found == event && known.contains(&text) => HookFile::Slates(text),
        Some(_) => HookFile::Unknown,
        None => HookFile::Theirs,
    })
}

/// The texts of Slate's file for `event` in `folder`: the one `program` writes, and those
/// recorded at install.
fn known_scripts(
    agent: &str,
    folder: &Path,
    event: &str,
    program: Option<&str>,
    record: Option<&Record>,
) -> Vec<String> {
    let mut known: Vec<String> = program
        .map(|program| settings::script(agent, program, event))
        .into_iter()
        .collect();
    if let Some(written) = record.and_then(|record| record.of(&folder.join(event))) {
        known.extend(written.entries.iter().cloned());
    }
    known
}

/// The events whose file in the folder of hooks is Slate's.
fn files_installed(
    hooks: &Hooks,
    agent: &str,
    folder: &Path,
    program: Option<&str>,
    record: Option<&Record>,
) -> io::Result<Vec<String>> {
    let mut found = Vec::new();
    for (event, _) in hooks.events {
        let known = known_scripts(agent, folder, event, program, record);
        if let HookFile::Slates(_) = hook_file(agent, folder, event, &known)? {
            found.push(event.to_string());
        }
    }
    Ok(found)
}

/// Installs (`program` given) or removes Slate's files in a folder of hooks (Cline CLI's): one
/// file an event, named after it, each Slate's own whole. A file of that name that is not
/// Slate's refuses the whole install, before anything is written: it is the person's hook,
/// which the agent runs beside any other of its event, and Slate neither replaces nor shadows
/// it. `remove` deletes Slate's files only (as this Slate writes them, or as recorded at
/// install); the folder stays.
fn edit_files(
    description: &'static Description,
    env: &Env,
    places: &Places,
    program: &str,
    installing: bool,
) -> Result<Changed, HooksError> {
    let hooks = description
        .hooks
        .ok_or_else(|| HooksError::NoPlace(description.product.to_string()))?;
    let folder = place(description, hooks, env)?;
    let agent = description.id;
    let unreadable = |source| HooksError::Unreadable {
        path: folder.clone(),
        source,
    };
    let mut record = Record::load(places)?;
    let mut files = Vec::new();
    for (event, _) in hooks.events {
        clear_leftovers(&folder.join(event));
        let known = known_scripts(agent, &folder, event, Some(program), Some(&record));
        files.push((
            *event,
            hook_file(agent, &folder, event, &known).map_err(unreadable)?,
        ));
    }
    let mut changed = false;
    let write_error = |path: &Path, source| HooksError::Write {
        path: path.to_path_buf(),
        source,
    };
    let record_file = places.data_dir.join(RECORD_FILE);
    if installing {
        if let Some((event, file)) = files
            .iter()
            .find(|(_, file)| matches!(file, HookFile::Theirs | HookFile::Unknown))
        {
            let why = if matches!(file, HookFile::Unknown) {
                format!(
                    "it is in the form of Slate's hook for {event}, but not as this Slate \
                     writes it nor as one recorded at install (edited since, or another \
                     Slate's): delete it, or remove it with the Slate that installed it, and \
                     install again"
                )
            } else {
                format!(
                    "it is not Slate's hook for {event}, and Slate's would take its name. \
                     {} runs every file of an event, whatever its ending: rename yours \
                     ({event}.sh, say) and install again",
                    description.product
                )
            };
            return Err(HooksError::Refused {
                path: folder.join(event),
                source: hooks::ParseError::NotSlates(why),
            });
        }
        for (event, file) in &files {
            let text = settings::script(agent, program, event);
            if matches!(file, HookFile::Slates(old) if *old == text) {
                continue;
            }
            let path = folder.join(event);
            let mut entries = record
                .of(&path)
                .map(|written| written.entries.clone())
                .unwrap_or_default();
            entries.push(text.clone());
            let before = Before::Absent;
            record.set(&path, Some(Written { before, entries }));
            record
                .save(&record_file)
                .map_err(|source| write_error(&record_file, source))?;
            write_whole(&path, &text, None).map_err(|source| write_error(&path, source))?;
            executable(&path).map_err(|source| write_error(&path, source))?;
            changed = true;
        }
    } else {
        for (event, file) in &files {
            if let HookFile::Slates(_) = file {
                let path = folder.join(event);
                fs::remove_file(&path).map_err(|source| write_error(&path, source))?;
                record.set(&path, None);
                changed = true;
            }
        }
        if changed {
            record
                .save(&record_file)
                .map_err(|source| write_error(&record_file, source))?;
        }
    }
    Ok(Changed {
        agent: description.kind(),
        path: folder,
        changed,
        backup: None,
        deleted: false,
        trust: hooks.trust.map(str::to_string),
    })
}

/// Lets the file's owner run it, and others read and run it, as a hook is: `rwxr-xr-x`.
fn executable(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o755))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// `<file>.slate-backup`, beside the file: one a file, the file as it was before Slate's last
/// change.
fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".slate-backup");
    path.with_file_name(name)
}

/// `<file>.slate-<pid>`: where `write_whole` writes before its rename.
fn temporary_path(path: &Path, pid: u32) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".slate-{pid}"));
    path.with_file_name(name)
}

/// Writes `text` to a new file beside `path` and renames it over `path`, so a reader never sees
/// half a file; the folder is made when missing. The new file has `mode` when one is given,
/// else the old file's permissions.
fn write_whole(path: &Path, text: &str, mode: Option<u32>) -> io::Result<()> {
    let folder = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(folder)?;
    let temporary = temporary_path(path, std::process::id());
    // A leftover of a write that stopped half-way goes first. Readable by its owner only until
    // it has the file's own permissions.
    let _ = fs::remove_file(&temporary);
    let mut file = private(fs::OpenOptions::new().write(true).create_new(true)).open(&temporary)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    #[cfg(unix)]
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&temporary, fs::Permissions::from_mode(mode))?;
    }
    if mode.is_none() {
        if let Ok(meta) = fs::metadata(path) {
            let _ = fs::set_permissions(&temporary, meta.permissions());
        }
    }
    fs::rename(&temporary, path)
}
