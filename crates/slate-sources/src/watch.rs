//! The file watcher: turns file-system notifications into [`Hint`]s for whoever started it (the
//! live loop).
//!
//! Notifications are hints, never the truth: the loop re-reads the hinted file from its saved
//! offset and walks everything again every minute, so a missed, duplicated or reordered event
//! costs at most a delay. Events are filtered here, in notify's own thread, so writes the engine
//! does not care about (logs, caches, SQLite journals of other tools) never wake the loop. Besides
//! the agents' folders it can watch single files by name (Slate's config file). It knows nothing
//! of what a hint leads to.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use notify::{EventKind, RecursiveMode, Watcher as _};

use crate::sources::roots::{is_interesting, WatchSpec};
use slate_core::agents::BUILT_IN;

/// What the watcher reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hint {
    /// This file changed (or appeared, or went away).
    Changed(PathBuf),
    /// The watcher lost track (an overflow, an error, a new folder): walk everything.
    Rescan,
}

/// The running watcher and what it watches.
pub struct Watcher {
    inner: notify::RecommendedWatcher,
    watched: BTreeSet<WatchSpec>,
    /// Single files reported by name whatever their name looks like, shared with notify's thread.
    files: Arc<RwLock<BTreeSet<PathBuf>>>,
}

/// Starts a watcher that hands its hints to `report`, on notify's own thread. Returns `None`
/// (and the loop relies on its periodic walk) when the platform refuses a watcher, e.g. out of
/// inotify instances.
pub fn start(specs: Vec<WatchSpec>, report: impl Fn(Hint) + Send + 'static) -> Option<Watcher> {
    let files: Arc<RwLock<BTreeSet<PathBuf>>> = Arc::default();
    let named = Arc::clone(&files);
    let handler = move |result: notify::Result<notify::Event>| match result {
        Ok(event) => {
            if event.need_rescan() {
                report(Hint::Rescan);
                return;
            }
            if matches!(event.kind, EventKind::Access(_)) {
                return;
            }
            for path in event.paths {
                let named = named.read().is_ok_and(|files| files.contains(&path));
                if named {
                    report(Hint::Changed(path));
                } else if matches!(
                    event.kind,
                    EventKind::Create(notify::event::CreateKind::Folder)
                ) {
                    report(Hint::Rescan);
                } else if is_interesting(BUILT_IN, &path) {
                    report(Hint::Changed(path));
                }
            }
        }
        Err(err) => {
            tracing::warn!("file watcher error, walking everything again: {err}");
            report(Hint::Rescan);
        }
    };
    match notify::recommended_watcher(handler) {
        Ok(inner) => {
            let mut watcher = Watcher {
                inner,
                watched: BTreeSet::new(),
                files,
            };
            watcher.watch_all(specs);
            Some(watcher)
        }
        Err(err) => {
            tracing::warn!("no file watcher ({err}); changes show up at the next periodic walk");
            None
        }
    }
}

impl Watcher {
    /// Watches every spec not watched yet. A folder that does not exist yet is watched through
    /// its nearest existing ancestor, whose folder-creation event triggers a walk that adds it.
    pub fn watch_all(&mut self, specs: Vec<WatchSpec>) {
        for spec in specs {
            let spec = match existing(&spec) {
                Some(spec) => spec,
                None => continue,
            };
            if self.watched.contains(&spec) {
                continue;
            }
            let mode = if spec.recursive {
                RecursiveMode::Recursive
            } else {
                RecursiveMode::NonRecursive
            };
            match self.inner.watch(&spec.path, mode) {
                Ok(()) => {
                    self.watched.insert(spec);
                }
                Err(err) => {
                    tracing::debug!("cannot watch {}: {err}", spec.path.display());
                }
            }
        }
    }

    /// Reports changes of the file at `path` (created, written, replaced by a rename, removed)
    /// whatever its name, by watching its folder.
    pub fn watch_file(&mut self, path: &Path) {
        if let Ok(mut files) = self.files.write() {
            files.insert(path.to_path_buf());
        }
        if let Some(folder) = path.parent() {
            self.watch_all(vec![WatchSpec {
                path: folder.to_path_buf(),
                recursive: false,
            }]);
        }
    }

    /// How many folders are watched, for diagnostics.
    pub fn len(&self) -> usize {
        self.watched.len()
    }

    pub fn is_empty(&self) -> bool {
        self.watched.is_empty()
    }
}

/// The spec itself when its folder exists, else a non-recursive watch on its nearest existing
/// ancestor (never the file-system root, which would wake us for everything).
fn existing(spec: &WatchSpec) -> Option<WatchSpec> {
    if spec.path.is_dir() {
        return Some(spec.clone());
    }
    let mut ancestor: &Path = spec.path.parent()?;
    while !ancestor.is_dir() {
        ancestor = ancestor.parent()?;
    }
    // Never the file-system root.
    ancestor.parent()?;
    Some(WatchSpec {
        path: ancestor.to_path_buf(),
        recursive: false,
    })
}
