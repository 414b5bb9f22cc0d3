//! Git facts over temporary repositories built with git2: the branch (also unborn and detached),
//! ahead/behind an upstream, dirty files, the 30 s cache, and a live session that picks up a
//! branch switch through its checkout's `HEAD`.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use git2::{Repository, RepositoryInitOptions, Signature};
use slate::engine::{Options, ProcessSource};
use slate::live::{self, Service, Timing, Update};
use slate::model::{ProcessInfo, ProcessTable};
use slate::sources::git::{self, GitCache};
use slate::sources::roots::Env;

fn init(folder: &Path) -> Repository {
    let mut options = RepositoryInitOptions::new();
    options.initial_head("main");
    Repository::init_opts(folder, &options).unwrap()
}

fn commit(repository: &Repository, file: &str, text: &str) -> git2::Oid {
    let workdir = repository.workdir().unwrap().to_path_buf();
    std::fs::write(workdir.join(file), text).unwrap();
    let mut index = repository.index().unwrap();
    index.add_path(Path::new(file)).unwrap();
    index.write().unwrap();
    let tree = repository.find_tree(index.write_tree().unwrap()).unwrap();
    let signature = Signature::now("Slate Test", "test@example.invalid").unwrap();
    let parents: Vec<git2::Commit> = repository
        .head()
        .ok()
        .and_then(|head| head.peel_to_commit().ok())
        .into_iter()
        .collect();
    let parents: Vec<&git2::Commit> = parents.iter().collect();
    repository
        .commit(Some("HEAD"), &signature, &signature, text, &tree, &parents)
        .unwrap()
}

/// A repository on `main`, one commit ahead of `origin/main`, with one untracked and one
/// modified file.
fn ahead_and_dirty(folder: &Path) -> Repository {
    let repository = init(folder);
    let first = commit(&repository, "a.txt", "one");
    repository
        .remote("origin", "https://example.invalid/acme.git")
        .unwrap();
    repository
        .reference("refs/remotes/origin/main", first, true, "test upstream")
        .unwrap();
    {
        let mut config = repository.config().unwrap();
        config.set_str("branch.main.remote", "origin").unwrap();
        config
            .set_str("branch.main.merge", "refs/heads/main")
            .unwrap();
    }
    commit(&repository, "b.txt", "two");
    std::fs::write(folder.join("untracked.txt"), "new").unwrap();
    std::fs::write(folder.join("a.txt"), "changed").unwrap();
    repository
}

#[test]
fn facts_name_the_branch_the_upstream_distance_and_dirty_files() {
    let temp = tempfile::tempdir().unwrap();
    let _repository = ahead_and_dirty(temp.path());
    let facts = git::facts_of(temp.path()).unwrap();
    assert_eq!(facts.branch.as_deref(), Some("main"));
    assert_eq!((facts.ahead, facts.behind), (Some(1), Some(0)));
    assert_eq!(facts.dirty, Some(2));
    // A sub-folder belongs to the same checkout.
    std::fs::create_dir(temp.path().join("src")).unwrap();
    assert_eq!(
        git::branch_of(&temp.path().join("src")).as_deref(),
        Some("main")
    );
}

#[test]
fn unborn_detached_and_no_repository() {
    let temp = tempfile::tempdir().unwrap();
    let unborn = temp.path().join("unborn");
    std::fs::create_dir(&unborn).unwrap();
    init(&unborn);
    assert_eq!(git::branch_of(&unborn).as_deref(), Some("main"));
    let facts = git::facts_of(&unborn).unwrap();
    assert_eq!(
        (facts.ahead, facts.behind, facts.dirty),
        (None, None, Some(0))
    );

    let detached = temp.path().join("detached");
    std::fs::create_dir(&detached).unwrap();
    let repository = init(&detached);
    let first = commit(&repository, "a.txt", "one");
    repository.set_head_detached(first).unwrap();
    assert_eq!(git::branch_of(&detached), None);

    let plain = temp.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    assert_eq!(git::facts_of(&plain), None);
}

#[test]
fn the_cache_reads_again_after_30_s_or_when_told() {
    let temp = tempfile::tempdir().unwrap();
    let repository = ahead_and_dirty(temp.path());
    let mut cache = GitCache::default();
    let start = Instant::now();
    let git_dir = cache.facts(temp.path(), start).unwrap().git_dir.clone();
    assert_eq!(cache.git_dirs(), vec![git_dir.clone()]);

    let head = repository.head().unwrap().peel_to_commit().unwrap();
    repository.branch("other", &head, false).unwrap();
    repository.set_head("refs/heads/other").unwrap();
    let later = start + Duration::from_secs(10);
    assert_eq!(
        cache.facts(temp.path(), later).unwrap().branch.as_deref(),
        Some("main"),
        "within 30 s the cached facts stand"
    );
    let much_later = start + Duration::from_secs(31);
    assert_eq!(
        cache
            .facts(temp.path(), much_later)
            .unwrap()
            .branch
            .as_deref(),
        Some("other")
    );

    repository.set_head("refs/heads/main").unwrap();
    assert_eq!(
        cache.invalidate_repository(&git_dir),
        vec![temp.path().to_path_buf()]
    );
    assert_eq!(
        cache
            .facts(temp.path(), much_later)
            .unwrap()
            .branch
            .as_deref(),
        Some("main")
    );
}

const SESSION: &str = "2b9e4f10-8c7d-4e6f-a5b4-c3d2e1f0a9b8";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_session_follows_its_checkouts_branch() {
    let temp = tempfile::tempdir().unwrap();
    let checkout = temp.path().join("acme");
    std::fs::create_dir(&checkout).unwrap();
    let repository = ahead_and_dirty(&checkout);
    let home = temp.path().join("home");
    let folder = checkout.to_str().unwrap().to_string();
    let now = live::system_clock();

    // A working Claude Code session in the checkout that recorded an older branch.
    let transcript = home.join(format!(".claude/projects/-acme/{SESSION}.jsonl"));
    std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    let mut file = std::fs::File::create(&transcript).unwrap();
    for (kind, body) in [
        (
            "user",
            r#""message":{"role":"user","content":"run the tests"}"#,
        ),
        (
            "assistant",
            r#""message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"cargo test"}}]}"#,
        ),
    ] {
        writeln!(
            file,
            r#"{{"type":"{kind}","cwd":"{folder}","gitBranch":"stale","sessionId":"{SESSION}","version":"2.1.332","uuid":"u","timestamp":"{now}",{body}}}"#
        )
        .unwrap();
    }
    drop(file);

    let mut options = Options::from_env(Env {
        home: Some(home.clone()),
        ..Env::default()
    });
    options.processes = ProcessSource::Recorded(ProcessTable {
        processes: vec![ProcessInfo {
            pid: 4242,
            ppid: Some(1),
            name: "claude".to_string(),
            exe: None,
            cmd: vec!["claude".to_string()],
            cwd: Some(folder.clone()),
            start_time: now.minus(Duration::from_secs(60)),
            start_ticks: None,
        }],
    });
    let (handle, thread) = live::start(Service {
        options,
        timing: Timing::default(),
        store: None,
        clock: live::system_clock,
        settings: Default::default(),
        remotes: None,
    });
    let (snapshot, mut updates) = handle.subscribe();
    assert_eq!(snapshot.len(), 1, "{snapshot:#?}");
    assert_eq!(snapshot[0].branch.as_deref(), Some("main"));
    assert_eq!(snapshot[0].ahead, Some(1));
    assert_eq!(snapshot[0].behind, Some(0));
    assert_eq!(snapshot[0].dirty, Some(2));
    let wire = serde_json::to_value(&snapshot[0]).unwrap();
    assert_eq!(wire["ahead"], 1);

    // Switching branches rewrites HEAD; the session follows without any transcript change.
    let head = repository.head().unwrap().peel_to_commit().unwrap();
    repository.branch("feature", &head, false).unwrap();
    repository.set_head("refs/heads/feature").unwrap();
    let update = tokio::time::timeout(Duration::from_secs(2), updates.recv())
        .await
        .expect("a change within two seconds")
        .unwrap();
    match update {
        Update::Session { session } => {
            assert_eq!(session.branch.as_deref(), Some("feature"));
            assert_eq!(session.ahead, None, "feature has no upstream");
        }
        other => panic!("expected a session update, got {other:?}"),
    }
    handle.shutdown();
    thread.join().unwrap();
}
