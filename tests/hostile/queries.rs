//! SQLite stores whose queries never end are stopped and counted, and a store too big for one
//! budget is read over several scans.

use std::fs;
use std::time::Duration;

use slate::agents::BUILT_IN;
use slate::model::{AgentKind, SessionKey, Timestamp};
use slate::sources::roots::{resolve_roots, Env};
use slate::sources::stores::{self, StoreState};

use crate::engine::fixtures;

use super::{endless_cursor_store, endless_opencode_db, kinds, now, within_limit};

/// How long a read that spends its whole budget of SQLite steps may take before it counts as a
/// hang. The budget is counted in steps, not time: about a second of CPU each in a debug build,
/// alone, and many times that while the whole suite shares two loaded cores, where two such reads
/// in a row outran `HANG`. A hang would still wait forever.
const SPENT_BUDGET: Duration = Duration::from_secs(60);

#[test]
fn an_endless_store_query_is_stopped_and_counted() {
    let temp = tempfile::tempdir().unwrap();
    let data = temp.path().join(".local/share/opencode");
    fs::create_dir_all(&data).unwrap();
    let db = data.join("opencode.db");
    endless_opencode_db(&db);
    let store = temp
        .path()
        .join(".cursor/chats/ce3fa0aa9e98006977055c78d826399a/0a1b2c3d/store.db");
    endless_cursor_store(&store);

    // Each read spends its whole budget, and no more.
    let db_path = db.clone();
    let (batches, mut problems) = within_limit(
        "an OpenCode read of an endless view",
        SPENT_BUDGET,
        move || {
            let mut problems = Vec::new();
            let at = now();
            let batches =
                stores::read_opencode_since(AgentKind::OPENCODE, &db_path, None, at, &mut problems);
            (batches, problems)
        },
        || {},
    );
    assert!(batches.is_empty());
    let store_path = store.clone();
    let (chat, more) = within_limit(
        "a cursor-agent read of an endless view",
        SPENT_BUDGET,
        move || {
            let mut problems = Vec::new();
            let chat =
                stores::read_cursor_store(AgentKind::CURSOR_AGENT, &store_path, &mut problems);
            (chat, problems)
        },
        || {},
    );
    assert!(chat.is_none());
    problems.extend(more);
    assert_eq!(
        kinds(&problems),
        ["store_timeout", "store_timeout"],
        "{problems:?}"
    );
    assert_eq!(problems[0].place, db.display().to_string());
    assert_eq!(problems[1].place, store.display().to_string());

    // Through the stores' state, a store that ran out of time is not run again until it changes:
    // every scan would otherwise spend the whole budget on it again.
    let roots = resolve_roots(BUILT_IN, &Env::with_home(temp.path()));
    let problems = within_limit(
        "two scans of the stores",
        SPENT_BUDGET,
        move || {
            let mut state = StoreState::new();
            let mut first = Vec::new();
            state.scan(BUILT_IN, &roots, now(), &mut first);
            let mut second = Vec::new();
            state.scan(BUILT_IN, &roots, now(), &mut second);
            (first, second)
        },
        || {},
    );
    assert_eq!(kinds(&problems.0), ["store_timeout", "store_timeout"]);
    assert!(problems.1.is_empty(), "{:?}", problems.1);
}

#[test]
fn a_store_too_big_for_one_budget_is_read_over_several_scans() {
    // With a budget a few sessions' worth of steps, the sample database is read in parts, oldest
    // first, each scan going on where the last stopped, until every session is read.
    let temp = tempfile::tempdir().unwrap();
    let data = temp.path().join(".local/share/opencode");
    fs::create_dir_all(&data).unwrap();
    fs::copy(
        fixtures().join("stores/opencode.db"),
        data.join("opencode.db"),
    )
    .unwrap();
    let roots = resolve_roots(BUILT_IN, &Env::with_home(temp.path()));
    let at = Timestamp::from_millis(1_795_950_000_000);

    let mut whole = StoreState::new();
    let mut problems = Vec::new();
    let mut expected: Vec<SessionKey> = whole
        .scan(BUILT_IN, &roots, at, &mut problems)
        .into_iter()
        .map(|batch| batch.key)
        .collect();
    assert!(problems.is_empty(), "{problems:?}");
    expected.sort();
    expected.dedup();
    assert!(expected.len() > 4);

    let mut parts = StoreState::with_step_budget(1000);
    let mut seen: Vec<SessionKey> = Vec::new();
    let mut scans = 0;
    while scans < 50 {
        scans += 1;
        let mut problems = Vec::new();
        let batches = parts.scan(BUILT_IN, &roots, at, &mut problems);
        if batches.is_empty() && problems.is_empty() {
            break;
        }
        assert!(
            !batches.is_empty(),
            "every scan reads something: {problems:?}"
        );
        seen.extend(batches.into_iter().map(|batch| batch.key));
    }
    assert!(
        scans > 2,
        "the budget cut the read into parts ({scans} scans)"
    );
    seen.sort();
    seen.dedup();
    assert_eq!(seen, expected);
}
