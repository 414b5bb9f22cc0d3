//! Conventions checked as tests: module docs, the purity of the core, file layout, and an
//! ARCHITECTURE.md that names every crate and top-level module.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sources() -> Vec<(String, String)> {
    let mut paths = Vec::new();
    rust_files(&root().join("src"), &mut paths);
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        rust_files(&entry.unwrap().path().join("src"), &mut paths);
    }
    if root().join("src-tauri/src").is_dir() {
        rust_files(&root().join("src-tauri/src"), &mut paths);
    }
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let relative = path
                .strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (relative, text)
        })
        .collect()
}

/// The pure core: no I/O, no clock, no async, and nothing from the edges.
const PURE: &[&str] = &[
    // The whole core crate; Cargo keeps its dependencies out (tests/layers.rs), and this keeps
    // the standard library's I/O and clock out too.
    "crates/slate-core/src/",
    "src/mirror.rs",
    "crates/slate-terminals/src/focus/strategy.rs",
    "crates/slate-terminals/src/focus/strategy/",
    "crates/slate-terminals/src/terminals/backend.rs",
];

/// The sources: they read the outside world, but take time as an argument like the core, so a
/// replay of the same files and process tables decides the same way.
const SOURCES: &[&str] = &["crates/slate-sources/src/sources"];

/// A read of the wall clock or a thread of its own: neither the core nor the sources may have one.
const CLOCK_WORDS: &[&str] = &[
    "SystemTime::now",
    "Instant::now",
    "Utc::now",
    "Local::now",
    "OffsetDateTime::now",
    ".elapsed()",
    "std::thread",
    "thread::spawn",
    "thread::sleep",
];

const IMPURE_WORDS: &[&str] = &[
    "tokio",
    "std::fs",
    "std::process",
    "std::env",
    "std::net",
    "notify::",
    "rusqlite",
    "axum",
    "sysinfo",
    "git2",
    "Instant::now",
    "SystemTime::now",
    "crate::sources",
    "crate::engine",
    "crate::store",
    "crate::api",
];

#[test]
fn every_module_opens_with_a_doc_paragraph() {
    for (path, text) in sources() {
        let first = text
            .lines()
            .find(|line| !line.trim().is_empty())
            .unwrap_or("");
        assert!(
            first.starts_with("//!") || path.ends_with("main.rs") && first.starts_with("//"),
            "{path} must open with a `//!` paragraph saying what it owns"
        );
    }
}

#[test]
fn the_core_does_no_io_and_reads_no_clock() {
    // Each place the check covers is there: a file moved away is not left unchecked.
    for pure in PURE.iter().chain(SOURCES) {
        assert!(
            root().join(pure).exists(),
            "tests/tidy.rs names {pure}, which is not there"
        );
    }
    for (path, text) in sources() {
        if !PURE.iter().any(|pure| path.starts_with(pure)) {
            continue;
        }
        for word in IMPURE_WORDS {
            for (number, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                assert!(
                    !code.contains(word),
                    "{path}:{}: the pure core must not use `{word}`",
                    number + 1
                );
            }
        }
    }
}

/// The lines of `text` that use `word` in code (not in a comment), as `path:line`.
fn uses(path: &str, text: &str, word: &str) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| line.split("//").next().unwrap_or("").contains(word))
        .map(|(number, _)| format!("{path}:{}", number + 1))
        .collect()
}

/// Where the core and the sources read the clock or use a thread.
fn clock_reads(files: &[(String, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (path, text) in files {
        if !PURE
            .iter()
            .chain(SOURCES)
            .any(|area| path.starts_with(area))
        {
            continue;
        }
        for word in CLOCK_WORDS {
            found.extend(
                uses(path, text, word)
                    .into_iter()
                    .map(|place| format!("{place}: `{word}`")),
            );
        }
    }
    found
}

#[test]
fn the_core_and_the_sources_read_no_clock_and_start_no_thread() {
    let found = clock_reads(&sources());
    assert!(
        found.is_empty(),
        "time comes in as an argument and work runs on the caller's thread: {found:?}"
    );
}

#[test]
fn the_clock_check_catches_what_it_must() {
    // The check itself, on made-up files: a clock read or a thread in the sources or the core is
    // caught, a mention in a comment or a file elsewhere is not.
    let files = |path: &str, text: &str| vec![(path.to_string(), text.to_string())];
    let caught = [
        (
            "crates/slate-sources/src/sources/walk.rs",
            "    let now = SystemTime::now();",
        ),
        (
            "crates/slate-sources/src/sources/stores.rs",
            "use std::thread;",
        ),
        (
            "crates/slate-sources/src/sources/listings.rs",
            "        thread::sleep(BACKOFF);",
        ),
        (
            "crates/slate-sources/src/sources.rs",
            "    let started = Instant::now();",
        ),
        (
            "crates/slate-core/src/tracker.rs",
            "    if at.elapsed() > limit {",
        ),
        (
            "crates/slate-core/src/agents/codex.rs",
            "    let today = OffsetDateTime::now_utc();",
        ),
    ];
    for (path, text) in caught {
        assert_eq!(clock_reads(&files(path, text)).len(), 1, "{path}: {text}");
    }
    let allowed = [
        (
            "crates/slate-sources/src/sources/walk.rs",
            "    // never SystemTime::now: time is an argument",
        ),
        ("src/live.rs", "    let now = SystemTime::now();"),
        (
            "crates/slate-sources/src/child.rs",
            "    std::thread::spawn(move || read(stdout));",
        ),
        (
            "crates/slate-sources/src/sources/processes.rs",
            "    .filter(|process| process.thread_kind().is_none())",
        ),
    ];
    for (path, text) in allowed {
        assert_eq!(
            clock_reads(&files(path, text)),
            Vec::<String>::new(),
            "{path}: {text}"
        );
    }
}

#[test]
fn no_mod_rs_and_no_grab_bag_modules() {
    for (path, _) in sources() {
        let name = path.rsplit('/').next().unwrap();
        assert_ne!(name, "mod.rs", "{path}: use `foo.rs` next to `foo/`");
        for bad in ["utils", "helpers", "common", "manager", "misc"] {
            assert!(
                !name.starts_with(bad),
                "{path}: name modules after concepts, not `{bad}`"
            );
        }
    }
}

#[test]
fn architecture_names_every_crate_and_top_level_module() {
    let architecture = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let mut named = 0;
    for (path, _) in sources() {
        // `src/…` is the `slate` crate's, `crates/<crate>/src/…` another crate's, which the map
        // names by its folder.
        let (relative, folder) = match path.strip_prefix("src/") {
            Some(relative) => (relative, None),
            None => match path
                .strip_prefix("crates/")
                .and_then(|rest| rest.split_once("/src/"))
            {
                Some((folder, relative)) => (relative, Some(folder)),
                None => continue,
            },
        };
        if let Some(folder) = folder {
            assert!(
                architecture.contains(&format!("`crates/{folder}/`")),
                "ARCHITECTURE.md's code map must name the crate `crates/{folder}/` ({path})"
            );
        }
        if relative == "lib.rs" || relative == "main.rs" {
            continue;
        }
        // Only the top-level modules: a module's own `//!` paragraph says what is inside it.
        let module = relative.split('/').next().unwrap().trim_end_matches(".rs");
        assert!(
            architecture.contains(&format!("`{module}`")),
            "ARCHITECTURE.md's code map must name `{module}` ({path})"
        );
        named += 1;
    }
    assert!(named > 50, "the check read the sources: {named} files");
}

#[test]
fn the_engine_does_not_depend_on_tauri() {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let dependencies = manifest
        .split("[dependencies]")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .unwrap_or("");
    assert!(
        !dependencies.contains("tauri"),
        "the engine crate must not depend on Tauri"
    );
}
