//! Following the stores from scan to scan: [`StoreState`] remembers what has been read of each
//! store a registry names, so that a scan reads only the stores whose files changed, an OpenCode
//! database too big for one budget is read in a pass of several parts, and a read that failed is
//! tried again when it may now succeed.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::cursor::{cursor_stores, read_cursor};
use super::opencode::{opencode_databases, opencode_main_db, read_opencode, read_opencode_legacy};
use super::{Outcome, STEP_BUDGET};
use crate::sources::roots::Roots;
use slate_core::agents::{OpenCodeStore, Registry, StoreKind};
use slate_core::model::{AgentKind, Problem, Timestamp};
use slate_core::tracker::Batch;

/// The size and modification time of each of a store's files; unchanged means nothing to read.
type Signature = Vec<Option<(u64, SystemTime)>>;

fn signature(paths: &[PathBuf]) -> Signature {
    paths
        .iter()
        .map(|path| {
            let meta = std::fs::metadata(path).ok()?;
            Some((meta.len(), meta.modified().ok()?))
        })
        .collect()
}

/// True when a read should be tried again at the next scan even if the store's files did not
/// change: a lock or a damaged file may be gone by then, a read cut by its budget goes on where
/// it stopped. A store that outran its budget before reading anything is not tried again until it
/// changes: it would only spend the budget again.
fn read_again(outcome: Outcome) -> bool {
    match outcome {
        Outcome::Complete => false,
        Outcome::Partial => true,
        Outcome::Failed { timed_out } => !timed_out,
    }
}

/// The stores `registry`'s descriptions name, each with its agent and root.
fn stores<'a>(
    registry: Registry,
    roots: &'a Roots,
) -> impl Iterator<Item = (AgentKind, StoreKind, &'a Path)> + 'a {
    registry.iter().filter_map(|description| {
        let agent = description.kind();
        Some((agent, description.store()?, roots.get(agent)?))
    })
}

/// The databases of an OpenCode-shaped store in its data folder, with its variable (`$OPENCODE_DB`)
/// as the roots were resolved with.
fn opencode_databases_of(data: &Path, store: OpenCodeStore, roots: &Roots) -> Vec<PathBuf> {
    let main = opencode_main_db(data, store, roots.var(store.variable));
    opencode_databases(data, store, main.as_deref())
}

/// What has been read of each store, so that a scan re-reads only stores that changed.
///
/// An OpenCode database holds every session, so it is read incrementally: only sessions updated
/// after the newest update seen so far (less a millisecond, so a write in the same millisecond as
/// the last read is not missed). A cursor-agent chat store holds one chat and is small: it is read
/// whole whenever its `store.db`, `store.db-wal` or `meta.json` changed. A store that could not be
/// read (locked by a writer past the busy timeout, say) keeps its old signature, so the next scan
/// tries it again. The position of an OpenCode database never moves past `now`: a row dated in
/// the far future must not hide every later one. A database too big for one budget is read in a
/// pass of several parts: each part reads the sessions the earlier ones did not, from the same
/// position, and the position moves on when the pass is complete.
#[derive(Debug, Clone)]
pub struct StoreState {
    opencode: HashMap<PathBuf, Followed>,
    legacy: HashMap<PathBuf, Signature>,
    cursor: HashMap<PathBuf, Signature>,
    /// The budget of steps of each read.
    steps: u64,
}

/// What has been read of one OpenCode database.
#[derive(Debug, Clone, Default)]
struct Followed {
    /// The signature of its files when it was last read through; `None` while a pass has more
    /// to read.
    signature: Option<Signature>,
    /// The newest update read so far: the next read asks for what is newer.
    newest: Option<Timestamp>,
    pass: Option<Pass>,
}

/// A read of an OpenCode database that its budget cut into parts.
#[derive(Debug, Clone)]
struct Pass {
    /// The position every part reads from.
    after: i64,
    /// The sessions its parts have read.
    done: HashSet<String>,
    /// The newest update its parts have read.
    latest: Option<Timestamp>,
    /// When it started: the position never moves past it, so a session written again after its
    /// part was read is read again next time.
    started: Timestamp,
}

impl Default for StoreState {
    fn default() -> StoreState {
        StoreState::with_step_budget(STEP_BUDGET)
    }
}

impl StoreState {
    pub fn new() -> StoreState {
        StoreState::default()
    }

    /// A state whose every read has a budget of `steps` SQLite steps instead of `STEP_BUDGET`.
    pub fn with_step_budget(steps: u64) -> StoreState {
        StoreState {
            opencode: HashMap::new(),
            legacy: HashMap::new(),
            cursor: HashMap::new(),
            steps,
        }
    }

    /// Reads every store `registry` names under `roots` that changed since the last scan: each
    /// OpenCode database and legacy JSON tree, each cursor-agent chat store. `now` decides which
    /// archived OpenCode sessions are too old.
    pub fn scan(
        &mut self,
        registry: Registry,
        roots: &Roots,
        now: Timestamp,
        problems: &mut Vec<Problem>,
    ) -> Vec<Batch> {
        let mut batches = Vec::new();
        for (agent, kind, root) in stores(registry, roots) {
            match kind {
                StoreKind::OpenCode(store) => {
                    for db in opencode_databases_of(root, store, roots) {
                        batches.extend(self.read_opencode_db(agent, &db, now, problems));
                    }
                    batches.extend(self.read_legacy(agent, &root.join("storage"), problems));
                }
                StoreKind::Cursor => {
                    for store in cursor_stores(root) {
                        batches.extend(self.read_cursor(agent, &store, problems));
                    }
                }
            }
        }
        batches
    }

    /// Re-reads the store a changed file at `path` belongs to, as a watcher asks; `None` when the
    /// path belongs to no store.
    pub fn read_path(
        &mut self,
        registry: Registry,
        roots: &Roots,
        path: &Path,
        now: Timestamp,
        problems: &mut Vec<Problem>,
    ) -> Option<Vec<Batch>> {
        let name = path.file_name()?.to_str()?;
        for (agent, kind, root) in stores(registry, roots) {
            match kind {
                StoreKind::OpenCode(store) => {
                    let db = match name.strip_suffix("-wal") {
                        Some(db) => path.with_file_name(db),
                        None => path.to_path_buf(),
                    };
                    if opencode_databases_of(root, store, roots).contains(&db) {
                        return Some(self.read_opencode_db(agent, &db, now, problems));
                    }
                }
                StoreKind::Cursor => {
                    if !path.starts_with(root.join("chats")) {
                        continue;
                    }
                    if !matches!(name, "store.db" | "store.db-wal" | "meta.json") {
                        return Some(Vec::new());
                    }
                    let store = path.with_file_name("store.db");
                    let batch = self.read_cursor(agent, &store, problems);
                    return Some(batch.into_iter().collect());
                }
            }
        }
        None
    }

    fn read_opencode_db(
        &mut self,
        agent: AgentKind,
        db: &Path,
        now: Timestamp,
        problems: &mut Vec<Problem>,
    ) -> Vec<Batch> {
        let files = [db.to_path_buf(), db.with_extension("db-wal")];
        let seen = signature(&files);
        let known = self.opencode.get(db).cloned().unwrap_or_default();
        if known.signature.as_ref() == Some(&seen) {
            return Vec::new();
        }
        let mut pass = known.pass.unwrap_or_else(|| Pass {
            after: known
                .newest
                .map_or(i64::MIN, |newest| newest.millis().saturating_sub(1)),
            done: HashSet::new(),
            latest: None,
            started: now,
        });
        let (batches, outcome) =
            read_opencode(agent, db, pass.after, &pass.done, now, self.steps, problems);
        let latest = batches.iter().map(|batch| batch.last_write).max();
        pass.latest = pass.latest.max(latest);
        pass.done
            .extend(batches.iter().map(|batch| batch.key.id.to_string()));
        let followed = match outcome {
            Outcome::Complete => Followed {
                signature: Some(seen),
                newest: known
                    .newest
                    .max(pass.latest.map(|latest| latest.min(pass.started).min(now))),
                pass: None,
            },
            Outcome::Partial => Followed {
                signature: None,
                newest: known.newest,
                pass: Some(pass),
            },
            // Out of budget before reading anything: not again until the files change.
            Outcome::Failed { timed_out: true } => Followed {
                signature: Some(seen),
                newest: known.newest,
                pass: None,
            },
            // Anything else may pass (a lock, a file half written): tried again next time.
            Outcome::Failed { timed_out: false } => return batches,
        };
        self.opencode.insert(db.to_path_buf(), followed);
        batches
    }

    /// The pre-1.2 tree is history: it is read again only when a session folder in it changed.
    fn read_legacy(
        &mut self,
        agent: AgentKind,
        storage: &Path,
        problems: &mut Vec<Problem>,
    ) -> Vec<Batch> {
        let sessions = storage.join("session");
        let mut folders = vec![sessions.clone()];
        if let Ok(entries) = std::fs::read_dir(&sessions) {
            let mut projects: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .collect();
            projects.sort();
            folders.extend(projects);
        }
        let seen = signature(&folders);
        if self.legacy.get(storage) == Some(&seen) {
            return Vec::new();
        }
        self.legacy.insert(storage.to_path_buf(), seen);
        read_opencode_legacy(agent, storage, problems)
    }

    fn read_cursor(
        &mut self,
        agent: AgentKind,
        store: &Path,
        problems: &mut Vec<Problem>,
    ) -> Option<Batch> {
        let files = [
            store.to_path_buf(),
            store.with_extension("db-wal"),
            store.with_file_name("meta.json"),
        ];
        let seen = signature(&files);
        if self.cursor.get(store) == Some(&seen) {
            return None;
        }
        let (batch, outcome) = read_cursor(agent, store, self.steps, problems);
        if !read_again(outcome) {
            self.cursor.insert(store.to_path_buf(), seen);
        }
        batch
    }
}
