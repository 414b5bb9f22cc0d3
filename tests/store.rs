//! Slate's own store: typed round trips through an in-memory store, migrations, and what a real
//! file survives.

mod migrations; // the schema's versions, and what a newer Slate wrote
mod recovery; // kill -9, corruption and locks on a real file
mod round_trips; // what goes in comes out, in memory

use std::path::{Path, PathBuf};

use slate::model::{AgentKind, ItemStatus, Reason, ReasonCode, SessionKey, Status, Timestamp};
use slate::store::{self, Store, Transition, WorkItem};

fn key(id: &str) -> SessionKey {
    SessionKey::new(AgentKind::CLAUDE_CODE, id)
}

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_millis(seconds * 1000)
}

fn memory() -> Store {
    store::open_in_memory().expect("an in-memory store opens")
}

/// A ready work item with no dependencies: the smallest thing to write and read back.
fn item(id: &str) -> WorkItem {
    WorkItem {
        id: id.to_owned(),
        title: id.to_owned(),
        status: ItemStatus::Ready,
        deps: Vec::new(),
        created: at(1),
    }
}

fn transition(key: &SessionKey, from: Option<Status>, to: Status, seconds: i64) -> Transition {
    Transition {
        key: key.clone(),
        from,
        to,
        reason: Reason::new(ReasonCode::TurnFinished, format!("at {seconds}s")),
        at: at(seconds),
    }
}

fn corrupt_siblings(folder: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(folder)
        .expect("the temp folder lists")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.to_string_lossy().contains(".corrupt-"))
        .collect();
    found.sort();
    found
}
