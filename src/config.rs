//! The config file on disk: reading it (migrated, and written back when the migration changed
//! it) and applying an edit a command asks for, with the person's comments and order kept. The
//! config itself, parsed from text, its defaults and migrations, is `slate_core::config`,
//! re-exported here.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

pub use slate_core::config::*;

/// Reads the config file at `path`, migrates it, and parses it; a missing file gives the
/// defaults. This is the only function in this module that does I/O.
///
/// When the migration changed something and the result parses, the migrated text is written back
/// atomically (a temporary file in the same folder, then a rename), and the earlier text is kept
/// next to it as `<name>.bak`, since the rewrite drops comments. If writing back fails, the
/// migrated config is still used for this run and a note says so. The returned notes are for the
/// log. The one push token file every push channel was sent before (`push-token` beside the
/// config) is looked at for its migration (`push::migrate`), and never changed.
pub fn load_or_default(path: &Path) -> Result<(Config, Vec<String>), ConfigError> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Ok((Config::default(), Vec::new()))
        }
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let Migrated {
        text: migrated,
        changed,
        mut notes,
    } = migrate_with(&text, legacy_push_token(path)).map_err(|err| err.in_file(path))?;
    let config = Config::parse(&migrated).map_err(|err| err.in_file(path))?;
    if changed {
        let backup = free_backup_path(path);
        match write_back(path, &backup, &migrated) {
            Ok(()) => notes.push(format!(
                "wrote the migrated config to {}; the earlier file is kept as {}",
                path.display(),
                backup.display()
            )),
            Err(err) => notes.push(format!(
                "could not write the migrated config to {}: {err}; using it for this run only",
                path.display()
            )),
        }
    }
    Ok((config, notes))
}

/// The push token file every channel was sent before, beside the config at `path`, when there is
/// one: whether it holds an ntfy access token (`tk_…`). A file Slate cannot read as a token
/// counts as some other token: the channel it goes to says why it is not sent.
fn legacy_push_token(path: &Path) -> Option<push::LegacyToken> {
    let file = path.parent()?.join(push::LEGACY_TOKEN_FILE);
    match crate::token::read_private_token(&file) {
        Ok(None) => None,
        Ok(Some(token)) => Some(push::LegacyToken {
            ntfy_shaped: token.starts_with("tk_"),
        }),
        Err(_) => Some(push::LegacyToken { ntfy_shaped: false }),
    }
}

/// Applies `edit` to the config file's text (an empty text when there is no file yet) and
/// writes the result back in place of the file (a temporary file in the same folder, then a
/// rename), creating the folder when needed. `edit` returns `None` to leave the file alone; the
/// return value says whether it was written. A file that does not parse is not edited: the
/// error names it.
pub fn edit_file(
    path: &Path,
    edit: impl FnOnce(&str) -> Result<Option<String>, ConfigError>,
) -> Result<bool, ConfigError> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let Some(edited) = edit(&text).map_err(|err| err.in_file(path))? else {
        return Ok(false);
    };
    let written = path
        .parent()
        .map_or(Ok(()), fs::create_dir_all)
        .and_then(|()| replace(path, &edited));
    written.map_err(|source| ConfigError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(true)
}

/// `<name>.bak`, or `<name>.bak-2` and so on when the person already keeps a file by that name.
fn free_backup_path(path: &Path) -> PathBuf {
    let mut backup = with_suffix(path, ".bak");
    let mut attempt = 1;
    while backup.exists() {
        attempt += 1;
        backup = with_suffix(path, &format!(".bak-{attempt}"));
    }
    backup
}

fn write_back(path: &Path, backup: &Path, text: &str) -> io::Result<()> {
    fs::copy(path, backup)?;
    replace(path, text)
}

/// Writes `text` to a temporary file beside `path` and renames it over `path`, so a reader sees
/// the old file or the new one, never half of one.
fn replace(path: &Path, text: &str) -> io::Result<()> {
    let temp = with_suffix(path, &format!(".tmp-{}", std::process::id()));
    let written = fs::File::create(&temp).and_then(|mut file| {
        file.write_all(text.as_bytes())?;
        file.sync_all()
    });
    match written.and_then(|()| fs::rename(&temp, path)) {
        Ok(()) => Ok(()),
        Err(err) => {
            // The temporary file is ours and holds nothing the user wrote.
            let _ = fs::remove_file(&temp);
            Err(err)
        }
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}
