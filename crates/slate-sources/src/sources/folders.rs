//! The one canonical spelling of a folder, so that a transcript's folder and a process's folder
//! compare equal however each was written.
//!
//! Every source that names a folder (the transcripts' lines, the stores' rows, the processes'
//! working folders) goes through [`canonical_folder`], so they all match on every platform. It
//! deliberately does not decide which folder belongs to which session: the tracker does that with
//! the canonical spellings it is given.

use std::fs;
use std::path::{Component, Path, PathBuf};

/// The canonical spelling of a folder, so that two spellings of one folder compare equal
/// (docs/states.md §1 "folder"): symlinks resolved where the folder exists, else a lexical
/// normalisation (`.` and `..` folded, trailing separators dropped).
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
    let platform = if cfg!(target_os = "macos") {
        Platform::MacOs
    } else if cfg!(windows) {
        Platform::Windows
    } else {
        Platform::Other
    };
    comparable(&resolved, platform)
}

/// The platform rules [`comparable`] applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    MacOs,
    Windows,
    Other,
}

/// A resolved folder made comparable on `platform`: without Windows' verbatim prefix (which
/// transcripts never write), without macOS's `/private` in front of `/tmp`, `/var` and `/etc`,
/// and lower-cased where the file system ignores case. Kept apart from [`canonical_folder`] so
/// every platform's rules are tested on any machine.
pub fn comparable(resolved: &str, platform: Platform) -> String {
    let resolved = resolved.strip_prefix(r"\\?\").unwrap_or(resolved);
    match platform {
        Platform::MacOs => {
            let private = ["/private/tmp", "/private/var", "/private/etc"]
                .iter()
                .any(|prefix| {
                    resolved
                        .strip_prefix(prefix)
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
                });
            let unprivate = if private {
                &resolved["/private".len()..]
            } else {
                resolved
            };
            unprivate.to_lowercase()
        }
        Platform::Windows => resolved.to_lowercase(),
        Platform::Other => resolved.to_string(),
    }
}

/// Folds `.` and `..` and drops trailing separators without touching the disk.
pub fn lexical(path: &str) -> String {
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

/// The `(as written, canonical)` pair the tracker matches processes with, or none for an empty
/// folder (a store row that names none).
pub fn folder_pair(written: &str) -> Vec<(String, String)> {
    if written.is_empty() {
        return Vec::new();
    }
    vec![(written.to_string(), canonical_folder(written))]
}
