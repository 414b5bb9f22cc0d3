//! Opening the store: the folder made, the connection made ready (busy timeout, WAL, foreign
//! keys, a quick corruption check, the migrations), a corrupt file moved aside with its
//! companions and a fresh one started, a locked one reported.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode};

use super::schema::migrate;
use super::{Failure, Store, StoreError, DEFAULT_BUSY_TIMEOUT};

/// Opens (creating if needed) the store at `path` with the default busy timeout.
pub fn open(path: &Path) -> Result<Store, StoreError> {
    open_with_busy_timeout(path, DEFAULT_BUSY_TIMEOUT)
}

/// Opens the store at `path`, waiting at most `busy_timeout` for another writer.
///
/// A corrupt file (not a database, or one that fails SQLite's quick check) is renamed to
/// `<name>.corrupt-<time>` together with its `-wal` and `-shm` files, a warning is logged, and a
/// fresh store is created in its place; [`Store::recovered_from`] then says where the old one went.
/// A locked file is not corrupt: it gives [`StoreError::Locked`] and is left alone.
pub fn open_with_busy_timeout(path: &Path, busy_timeout: Duration) -> Result<Store, StoreError> {
    if let Some(folder) = path
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
    {
        fs::create_dir_all(folder).map_err(|source| StoreError::CreateFolder {
            path: folder.to_path_buf(),
            source,
        })?;
    }
    match connect(path, busy_timeout) {
        Ok(conn) => Ok(Store {
            conn,
            path: path.to_path_buf(),
            recovered_from: None,
        }),
        Err(Failure::Corrupt(detail)) => {
            let aside = move_aside(path)?;
            tracing::warn!(
                store = %path.display(),
                moved_to = %aside.display(),
                error = %detail,
                "the store was corrupt: kept it aside and started a fresh one"
            );
            let conn = connect(path, busy_timeout).map_err(|failure| failure.into_error(path))?;
            Ok(Store {
                conn,
                path: path.to_path_buf(),
                recovered_from: Some(aside),
            })
        }
        Err(failure) => Err(failure.into_error(path)),
    }
}

/// Opens a fresh store that lives only in memory, for tests and for `--no-store` runs.
pub fn open_in_memory() -> Result<Store, StoreError> {
    let path = PathBuf::from(":memory:");
    let conn = Connection::open_in_memory().map_err(|source| StoreError::Open {
        path: path.clone(),
        source,
    })?;
    prepare(&conn, DEFAULT_BUSY_TIMEOUT).map_err(|failure| failure.into_error(&path))?;
    Ok(Store {
        conn,
        path,
        recovered_from: None,
    })
}

fn connect(path: &Path, busy_timeout: Duration) -> Result<Connection, Failure> {
    let conn = Connection::open(path)?;
    prepare(&conn, busy_timeout)?;
    Ok(conn)
}

/// Sets the connection up: busy timeout, WAL, foreign keys, a quick corruption check, migrations.
fn prepare(conn: &Connection, busy_timeout: Duration) -> Result<(), Failure> {
    conn.busy_timeout(busy_timeout)?;
    // WAL lets the API read while the engine writes, and with `synchronous = NORMAL` a commit
    // survives the process being killed (it may not survive a power cut, which is fine for a
    // cache of what the transcripts already say).
    let _mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", true)?;
    // The store is small, so checking it at every start is cheap, and it finds a truncated file
    // that would otherwise fail later, in the middle of some write.
    let verdict: String = conn.query_row("PRAGMA quick_check", [], |row| row.get(0))?;
    if verdict != "ok" {
        return Err(Failure::Corrupt(format!("quick check: {verdict}")));
    }
    migrate(conn)?;
    Ok(())
}

pub(super) fn is_busy(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Renames a corrupt store and its `-wal` and `-shm` companions to `<name>.corrupt-<time>[-wal]`,
/// so SQLite could still open the kept copy with its log. Nothing is deleted. Leaving the old
/// `-wal` in place would be wrong as well as wasteful: SQLite could replay it into the fresh file.
fn move_aside(path: &Path) -> Result<PathBuf, StoreError> {
    let stamp = time::OffsetDateTime::now_utc()
        .format(time::macros::format_description!(
            "[year][month][day]T[hour][minute][second]Z"
        ))
        .unwrap_or_else(|_| "unknown-time".to_owned());
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "slate.db".to_owned());
    let mut aside = path.with_file_name(format!("{name}.corrupt-{stamp}"));
    let mut attempt = 1;
    while aside.exists() {
        attempt += 1;
        aside = path.with_file_name(format!("{name}.corrupt-{stamp}-{attempt}"));
    }
    let rename = |from: &Path, to: &Path| {
        fs::rename(from, to).map_err(|source| StoreError::MoveAside {
            path: from.to_path_buf(),
            source,
        })
    };
    rename(path, &aside)?;
    for suffix in ["-wal", "-shm"] {
        let companion = with_suffix(path, suffix);
        if companion.exists() {
            rename(&companion, &with_suffix(&aside, suffix))?;
        }
    }
    Ok(aside)
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}
