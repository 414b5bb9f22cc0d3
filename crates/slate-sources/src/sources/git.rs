//! Git facts about a session's folder: its current branch, how far it is ahead of and behind its
//! upstream, and how many files are dirty, read with `git2` (vendored libgit2, no network).
//!
//! A live session's branch is the checkout's current one, which is the truth while the session
//! runs; the branch a transcript recorded is only what it was when that line was written. Reading
//! status costs a walk of the working tree, so `GitCache` keeps each folder's facts for up to
//! 30 s and refreshes at once when asked (a refresh, or a change of the checkout's `HEAD`).
//! This module only reads repositories: it never fetches, and it decides nothing about states.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use git2::{BranchType, Repository, StatusOptions};

/// What git says about one folder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitFacts {
    /// The current branch; `None` for a detached `HEAD`.
    pub branch: Option<String>,
    /// Commits on the branch and not on its upstream, and the other way round; `None` without an
    /// upstream.
    pub ahead: Option<u32>,
    pub behind: Option<u32>,
    /// Changed, staged, deleted or untracked files (ignored ones do not count).
    pub dirty: Option<u32>,
    /// The repository's `.git` folder, whose `HEAD` the watcher follows.
    pub git_dir: PathBuf,
}

/// The current branch of the checkout that holds `folder`, if it is one and `HEAD` names a branch
/// (including a branch with no commit yet).
pub fn branch_of(folder: &Path) -> Option<String> {
    let repository = Repository::discover(folder).ok()?;
    current_branch(&repository)
}

fn current_branch(repository: &Repository) -> Option<String> {
    let head = repository.find_reference("HEAD").ok()?;
    let target = head.symbolic_target()?;
    target.strip_prefix("refs/heads/").map(str::to_string)
}

/// Everything `GitFacts` holds for the checkout that holds `folder`; `None` outside a repository.
pub fn facts_of(folder: &Path) -> Option<GitFacts> {
    let repository = Repository::discover(folder).ok()?;
    let branch = current_branch(&repository);
    let (ahead, behind) = branch
        .as_deref()
        .and_then(|name| ahead_behind(&repository, name))
        .map_or((None, None), |(ahead, behind)| (Some(ahead), Some(behind)));
    let dirty = if repository.is_bare() {
        None
    } else {
        let mut options = StatusOptions::new();
        options
            .include_untracked(true)
            .recurse_untracked_dirs(false)
            .include_ignored(false)
            .exclude_submodules(true);
        repository
            .statuses(Some(&mut options))
            .ok()
            .map(|statuses| u32::try_from(statuses.len()).unwrap_or(u32::MAX))
    };
    Some(GitFacts {
        branch,
        ahead,
        behind,
        dirty,
        git_dir: repository.path().to_path_buf(),
    })
}

fn ahead_behind(repository: &Repository, branch: &str) -> Option<(u32, u32)> {
    let local = repository.find_branch(branch, BranchType::Local).ok()?;
    let upstream = local.upstream().ok()?;
    let ours = local.get().target()?;
    let theirs = upstream.get().target()?;
    let (ahead, behind) = repository.graph_ahead_behind(ours, theirs).ok()?;
    Some((
        u32::try_from(ahead).unwrap_or(u32::MAX),
        u32::try_from(behind).unwrap_or(u32::MAX),
    ))
}

/// Each folder's git facts, read at most once per `max_age` unless invalidated.
#[derive(Debug)]
pub struct GitCache {
    max_age: Duration,
    entries: HashMap<PathBuf, (Instant, Option<GitFacts>)>,
}

impl Default for GitCache {
    fn default() -> GitCache {
        GitCache::new(Duration::from_secs(30))
    }
}

impl GitCache {
    pub fn new(max_age: Duration) -> GitCache {
        GitCache {
            max_age,
            entries: HashMap::new(),
        }
    }

    /// The facts for `folder`, read again when older than `max_age` at `now`.
    pub fn facts(&mut self, folder: &Path, now: Instant) -> Option<&GitFacts> {
        let fresh = self
            .entries
            .get(folder)
            .is_some_and(|(read, _)| now.saturating_duration_since(*read) < self.max_age);
        if !fresh {
            self.entries
                .insert(folder.to_path_buf(), (now, facts_of(folder)));
        }
        self.entries.get(folder)?.1.as_ref()
    }

    /// How many folders are known.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Forgets everything, so the next look-up reads again (a refresh asked for it).
    pub fn invalidate_all(&mut self) {
        self.entries.clear();
    }

    /// Forgets the folders of the repository whose `.git` folder is `git_dir`; returns them.
    pub fn invalidate_repository(&mut self, git_dir: &Path) -> Vec<PathBuf> {
        let folders: Vec<PathBuf> = self
            .entries
            .iter()
            .filter(|(_, (_, facts))| facts.as_ref().is_some_and(|f| f.git_dir == git_dir))
            .map(|(folder, _)| folder.clone())
            .collect();
        for folder in &folders {
            self.entries.remove(folder);
        }
        folders
    }

    /// The `.git` folders of every repository known, for the watcher.
    pub fn git_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self
            .entries
            .values()
            .filter_map(|(_, facts)| Some(facts.as_ref()?.git_dir.clone()))
            .collect();
        dirs.sort();
        dirs.dedup();
        dirs
    }
}
