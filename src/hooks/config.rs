//! Slate's entries in the agents' own hook configurations, on disk (docs/hooks.md): where each
//! configuration is, what of Slate's it holds, and installing and removing Slate's entries.
//!
//! What an entry is and how a configuration's text is edited is `agents::hooks` (pure); this
//! module reads and writes the files: a backup first, the file replaced whole by a rename, a
//! link followed to its target.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{last_fired, private};
use crate::agents::description::Description;
use crate::agents::hooks::{self, settings, HookFormat, Hooks, Verified};
use crate::agents::Registry;
use crate::model::{AgentKind, Timestamp};
use crate::places::Places;
use crate::sources::regular_file;
use crate::sources::roots::{self, Env};

/// Why a configuration could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum HooksError {
    #[error("cannot find {0}'s hook configuration (its base folder is not set)")]
    NoPlace(String),
    #[error("{path} is left as it is: {source}")]
    Unreadable { path: PathBuf, source: io::Error },
    #[error("{path} is left as it is: {source}")]
    Refused {
        path: PathBuf,
        source: hooks::ParseError,
    },
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
    pub trust: Option<String>,
}

/// Where `description`'s hook configuration is in this environment.
pub fn config_path(hooks: &Hooks, env: &Env) -> Option<PathBuf> {
    roots::first_of(hooks.file, env)
}

/// Every agent of `registry` that has hooks.
pub fn agents(registry: Registry) -> impl Iterator<Item = (&'static Description, &'static Hooks)> {
    registry
        .iter()
        .filter_map(|description| Some((description, description.hooks?)))
}

/// Each agent's hooks as they stand.
pub fn status(registry: Registry, env: &Env, places: Option<&Places>) -> Vec<AgentHooks> {
    agents(registry)
        .map(|(description, hooks)| {
            let agent = description.kind();
            let path = config_path(hooks, env);
            let (installed, error) = match installed_events(hooks, description.id, path.as_deref())
            {
                Ok(found) => (found, None),
                Err(err) => (Vec::new(), Some(err)),
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
            }
        })
        .collect()
}

/// The events that have Slate's hook in the configuration at `path` (none without one), or why
/// it could not be read.
fn installed_events(
    hooks: &Hooks,
    agent: &str,
    path: Option<&Path>,
) -> Result<Vec<String>, String> {
    let Some(path) = path else {
        return Ok(Vec::new());
    };
    if hooks.format == HookFormat::Files {
        return files_installed(hooks, agent, path).map_err(|err| err.to_string());
    }
    let text = read_config(path).map_err(|err| err.to_string())?;
    settings::installed(hooks, agent, &text).map_err(|err| err.to_string())
}

/// The configuration's text: empty for a file that does not exist.
fn read_config(path: &Path) -> io::Result<String> {
    match regular_file::read_to_string(path, hooks::SETTINGS_LIMIT as u64) {
        Ok(text) => Ok(text),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(String::new()),
        Err(err) => Err(err),
    }
}

/// Installs Slate's hooks for `description`, running `program`.
pub fn install(
    description: &'static Description,
    env: &Env,
    program: &str,
    now: Timestamp,
) -> Result<Changed, HooksError> {
    if description.hooks.map(|hooks| hooks.format) == Some(HookFormat::Files) {
        return edit_files(description, env, Some(program));
    }
    edit(description, env, now, |hooks, text| {
        settings::install(hooks, description.id, program, text)
    })
}

/// Takes Slate's hooks out of `description`'s configuration.
pub fn remove(
    description: &'static Description,
    env: &Env,
    now: Timestamp,
) -> Result<Changed, HooksError> {
    if description.hooks.map(|hooks| hooks.format) == Some(HookFormat::Files) {
        return edit_files(description, env, None);
    }
    edit(description, env, now, |hooks, text| {
        settings::remove(hooks, description.id, text)
    })
}

fn edit(
    description: &'static Description,
    env: &Env,
    now: Timestamp,
    change: impl Fn(&Hooks, &str) -> Result<String, hooks::ParseError>,
) -> Result<Changed, HooksError> {
    let hooks = description
        .hooks
        .ok_or_else(|| HooksError::NoPlace(description.product.to_string()))?;
    let named = config_path(hooks, env)
        .ok_or_else(|| HooksError::NoPlace(description.product.to_string()))?;
    // A configuration kept as a link (a dotfiles folder) is edited where it lives.
    let path = fs::canonicalize(&named).unwrap_or(named);
    let text = read_config(&path).map_err(|source| HooksError::Unreadable {
        path: path.clone(),
        source,
    })?;
    let new = change(hooks, &text).map_err(|source| HooksError::Refused {
        path: path.clone(),
        source,
    })?;
    let trust = hooks.trust.map(str::to_string);
    if new == text {
        return Ok(Changed {
            agent: description.kind(),
            path,
            changed: false,
            backup: None,
            trust,
        });
    }
    let write_error = |source| HooksError::Write {
        path: path.clone(),
        source,
    };
    let backup = if text.is_empty() {
        None
    } else {
        // A copy keeps the file's permissions: a settings file may hold keys.
        let backup = backup_path(&path, now);
        fs::copy(&path, &backup).map_err(write_error)?;
        Some(backup)
    };
    if new.is_empty() {
        fs::remove_file(&path).map_err(write_error)?;
    } else {
        write_whole(&path, &new).map_err(write_error)?;
    }
    Ok(Changed {
        agent: description.kind(),
        path,
        changed: true,
        backup,
        trust,
    })
}

/// The most a hook file may hold for Slate to read it: Slate's are a few hundred bytes.
const HOOK_FILE_LIMIT: u64 = 64 * 1024;

/// What the file of `event` in a folder of hooks is: absent, Slate's hook for that event (its
/// text), or someone else's.
enum HookFile {
    Absent,
    Slates(String),
    Theirs,
}

fn hook_file(agent: &str, folder: &Path, event: &str) -> io::Result<HookFile> {
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
        Some(found) if found == event => HookFile::Slates(text),
        _ => HookFile::Theirs,
    })
}

/// The events whose file in the folder of hooks is Slate's.
fn files_installed(hooks: &Hooks, agent: &str, folder: &Path) -> io::Result<Vec<String>> {
    let mut found = Vec::new();
    for (event, _) in hooks.events {
        if let HookFile::Slates(_) = hook_file(agent, folder, event)? {
            found.push(event.to_string());
        }
    }
    Ok(found)
}

/// Installs (`program` given) or removes Slate's files in a folder of hooks (Cline CLI's): one
/// file an event, named after it, each Slate's own whole. A file of that name that is not
/// Slate's refuses the whole install, before anything is written: it is the person's hook,
/// which the agent runs beside any other of its event, and Slate neither replaces nor shadows
/// it. `remove` deletes Slate's files only; the folder stays.
fn edit_files(
    description: &'static Description,
    env: &Env,
    program: Option<&str>,
) -> Result<Changed, HooksError> {
    let hooks = description
        .hooks
        .ok_or_else(|| HooksError::NoPlace(description.product.to_string()))?;
    let folder = config_path(hooks, env)
        .ok_or_else(|| HooksError::NoPlace(description.product.to_string()))?;
    let agent = description.id;
    let unreadable = |source| HooksError::Unreadable {
        path: folder.clone(),
        source,
    };
    let mut files = Vec::new();
    for (event, _) in hooks.events {
        files.push((
            *event,
            hook_file(agent, &folder, event).map_err(unreadable)?,
        ));
    }
    let mut changed = false;
    let write_error = |path: &Path, source| HooksError::Write {
        path: path.to_path_buf(),
        source,
    };
    match program {
        Some(program) => {
            if let Some((event, _)) = files
                .iter()
                .find(|(_, file)| matches!(file, HookFile::Theirs))
            {
                return Err(HooksError::Refused {
                    path: folder.join(event),
                    source: hooks::ParseError::Invalid(format!(
                        "it is not Slate's hook for {event}, and Slate's would take its name. \
                         {} runs every file of an event, whatever its ending: rename yours \
                         ({event}.sh, say) and install again",
                        description.product
                    )),
                });
            }
            for (event, file) in &files {
                let text = settings::script(agent, program, event);
                if matches!(file, HookFile::Slates(old) if *old == text) {
                    continue;
                }
                let path = folder.join(event);
                write_whole(&path, &text).map_err(|source| write_error(&path, source))?;
                executable(&path).map_err(|source| write_error(&path, source))?;
                changed = true;
            }
        }
        None => {
            for (event, file) in &files {
                if let HookFile::Slates(_) = file {
                    let path = folder.join(event);
                    fs::remove_file(&path).map_err(|source| write_error(&path, source))?;
                    changed = true;
                }
            }
        }
    }
    Ok(Changed {
        agent: description.kind(),
        path: folder,
        changed,
        backup: None,
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

/// `<file>.slate-backup-<time>`, beside the file.
fn backup_path(path: &Path, now: Timestamp) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".slate-backup-{}", now.millis()));
    path.with_file_name(name)
}

/// Writes `text` to a new file beside `path` and renames it over `path`, so a reader never sees
/// half a file; the folder is made when missing, and a file's permissions are kept.
fn write_whole(path: &Path, text: &str) -> io::Result<()> {
    let folder = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(folder)?;
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".slate-{}", std::process::id()));
    let temporary = path.with_file_name(name);
    // A leftover of a write that stopped half-way goes first. Readable by its owner only until
    // it has the file's own permissions.
    let _ = fs::remove_file(&temporary);
    let mut file = private(fs::OpenOptions::new().write(true).create_new(true)).open(&temporary)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    if let Ok(meta) = fs::metadata(path) {
        let _ = fs::set_permissions(&temporary, meta.permissions());
    }
    fs::rename(&temporary, path)
}
