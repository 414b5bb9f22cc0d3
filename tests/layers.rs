//! The layers, checked: no module imports another round a circle, every import goes down the
//! layers (a crate uses only crates below it; a top-level module of `slate` only modules of its
//! own layer or one below), no source file passes 800 lines (in the crates or beside them:
//! tests, benchmarks, the page, scripts), and the pure core (`slate-core`) depends, however
//! indirectly, on no runtime, database, file watcher, process table, git or HTTP crate.
//!
//! The import graph is read from the source: every `crate::…`, `super::…` and `self::…` path in
//! code (not in comments), resolved to the deepest module that exists. A path from a module into
//! one it contains, or out to one that contains it, is containment, not a layer; every other path
//! is an edge between the two sibling modules that hold its ends (two top-level modules, or two
//! children of one module). A circle among those edges fails, named with the places that make it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A crate of the workspace, by its name and source folder.
const CRATES: &[(&str, &str)] = &[
    ("slate", "src"),
    ("slate-core", "crates/slate-core/src"),
    ("slate-sources", "crates/slate-sources/src"),
    ("slate-terminals", "crates/slate-terminals/src"),
    ("slate-app", "src-tauri/src"),
];

/// What the core may never depend on, directly or through another crate.
const NOT_IN_CORE: &[&str] = &[
    "tokio", "rusqlite", "git2", "axum", "hyper", "notify", "sysinfo", "tauri", "ureq",
];

/// The most lines a source file may have.
const MAX_LINES: usize = 800;

/// The source outside the crates' `src` folders, which the line limit covers too: the tests, the
/// benchmarks, the page and its test, the scripts, the fixtures' scripts (the recorders, the
/// end-to-end runs, the store builders) and the desktop shell's tests, benchmarks and build
/// script. Every file with one of `SOURCE_EXTENSIONS` under them is read; the recorded data
/// beside them (transcripts, screens, snapshots, stores, payloads) has other extensions.
const OTHER_SOURCES: &[&str] = &[
    "tests",
    "crates/slate-core/tests",
    "benches",
    "ui",
    "scripts",
    "fixtures",
    "src-tauri/tests",
    "src-tauri/benches",
    "src-tauri/build.rs",
];

/// What a source file outside the crates is written in: Rust, JavaScript, shell or Python.
const SOURCE_EXTENSIONS: &[&str] = &["rs", "js", "mjs", "sh", "py"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    files_with(dir, &["rs"], out);
}

/// Every file under `dir` (or `dir` itself, if it is a file) whose extension is one of
/// `extensions`, leaving out hidden, `target` and `node_modules` folders.
fn files_with(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) {
    let wanted = |path: &Path| {
        path.extension()
            .is_some_and(|ext| extensions.iter().any(|wanted| ext == *wanted))
    };
    if dir.is_file() {
        if wanted(dir) {
            out.push(dir.to_path_buf());
        }
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        // What tools leave behind is nobody's source.
        if path.is_dir() && (name.starts_with('.') || ["target", "node_modules"].contains(&&*name))
        {
            continue;
        }
        if path.is_dir() {
            files_with(&path, extensions, out);
        } else if wanted(&path) {
            out.push(path);
        }
    }
}

/// A module's path within its crate: `["terminals", "proof"]`; empty for the crate root.
type ModPath = Vec<String>;

/// One source file: its module, its place in the repository and its text.
type File = (ModPath, String, String);

/// The module a file under `src` is: `a.rs` and `a/mod.rs` are `a`, `lib.rs` and `main.rs` the
/// root, and a binary under `bin/` a root of its own.
fn module_of(src: &Path, file: &Path) -> Option<ModPath> {
    let relative = file.strip_prefix(src).ok()?;
    let mut parts: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    if parts.first().is_some_and(|first| first == "bin") {
        return None;
    }
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?;
    match (parts.is_empty(), stem) {
        (true, "lib" | "main") => {}
        (_, "mod") => {}
        _ => parts.push(stem.to_string()),
    }
    Some(parts)
}

/// The code of a source file: comments dropped (a line that starts with `//`, and the rest of a
/// line after ` // `), string literals left as they are.
fn code_of(text: &str) -> String {
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .map(|line| line.split(" // ").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every module path `text` names after `crate::`, `super::` or `self::`, as written (relative
/// ones resolved against `here`), with `{…}` groups expanded.
fn paths_in(text: &str, here: &[String]) -> Vec<ModPath> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        let starts_word = at == 0 || !is_ident(bytes[at - 1]) && bytes[at - 1] != b':';
        let start = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|prefix| rest.starts_with(prefix.as_bytes()));
        match start {
            Some(prefix) if starts_word => {
                let base: ModPath = match prefix {
                    "crate::" => Vec::new(),
                    "self::" => here.to_vec(),
                    _ => here[..here.len().saturating_sub(1)].to_vec(),
                };
                let mut cursor = at + prefix.len();
                let mut base = base;
                // `super::super::…`
                while bytes[cursor..].starts_with(b"super::") {
                    base.pop();
                    cursor += "super::".len();
                }
                cursor = tree(text, cursor, base, &mut found);
                at = cursor.max(at + 1);
            }
            _ => at += 1,
        }
    }
    found
}

fn is_ident(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// Reads one use tree at `at` (`a::b`, `a::{b, c::d}`, `self`) onto `prefix`, pushing every
/// path it names; returns where it ended.
fn tree(text: &str, mut at: usize, prefix: ModPath, found: &mut Vec<ModPath>) -> usize {
    let bytes = text.as_bytes();
    let mut path = prefix;
    loop {
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        if at < bytes.len() && bytes[at] == b'{' {
            at += 1;
            loop {
                while at < bytes.len() && (bytes[at].is_ascii_whitespace() || bytes[at] == b',') {
                    at += 1;
                }
                if at >= bytes.len() || bytes[at] == b'}' {
                    return at + 1;
                }
                let before = at;
                at = tree(text, at, path.clone(), found);
                if at == before {
                    at += 1;
                }
            }
        }
        let start = at;
        while at < bytes.len() && is_ident(bytes[at]) {
            at += 1;
        }
        let word = &text[start..at];
        if word.is_empty() {
            found.push(path);
            return at;
        }
        if word != "self" {
            path.push(word.to_string());
        }
        if bytes[at..].starts_with(b"::") {
            at += 2;
        } else {
            found.push(path);
            return at;
        }
    }
}

/// The deepest module of `modules` that `path` names: `crate::model::Session` is `model`.
fn resolve(path: &[String], modules: &BTreeSet<ModPath>) -> ModPath {
    (0..=path.len())
        .rev()
        .map(|len| path[..len].to_vec())
        .find(|candidate| modules.contains(candidate))
        .unwrap_or_default()
}

/// One import between sibling modules, and where it is written.
type Edges = BTreeMap<(ModPath, ModPath), Vec<String>>;

/// The sibling edges of one crate's modules, from the files under `src`.
fn edges_of(files: &[File]) -> Edges {
    let modules: BTreeSet<ModPath> = files.iter().map(|(module, _, _)| module.clone()).collect();
    let mut edges = Edges::new();
    for (module, place, text) in files {
        for path in paths_in(&code_of(text), module) {
            let target = resolve(&path, &modules);
            let common = module
                .iter()
                .zip(&target)
                .take_while(|(one, two)| one == two)
                .count();
            if common == module.len() || common == target.len() {
                continue;
            }
            let from = module[..=common].to_vec();
            let to = target[..=common].to_vec();
            edges
                .entry((from, to))
                .or_default()
                .push(format!("{place} uses {}", path.join("::")));
        }
    }
    edges
}

/// A circle of `edges`, if there is one, as the modules round it.
fn circle(edges: &Edges) -> Option<Vec<ModPath>> {
    let mut next: BTreeMap<&ModPath, Vec<&ModPath>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
    }
    // Depth first, with the path so far: a module met again on the path closes a circle.
    fn visit<'a>(
        node: &'a ModPath,
        next: &BTreeMap<&'a ModPath, Vec<&'a ModPath>>,
        path: &mut Vec<&'a ModPath>,
        done: &mut BTreeSet<&'a ModPath>,
    ) -> Option<Vec<ModPath>> {
        if let Some(at) = path.iter().position(|on| *on == node) {
            return Some(path[at..].iter().map(|module| (*module).clone()).collect());
        }
        if done.contains(node) {
            return None;
        }
        path.push(node);
        for to in next.get(node).into_iter().flatten() {
            if let Some(found) = visit(to, next, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node);
        None
    }
    let mut done = BTreeSet::new();
    for start in next.keys() {
        if let Some(found) = visit(start, &next, &mut Vec::new(), &mut done) {
            return Some(found);
        }
    }
    None
}

/// Every crate's files: its module path, its place in the repository, its text.
fn crates() -> Vec<(&'static str, Vec<File>)> {
    CRATES
        .iter()
        .map(|(name, folder)| {
            let src = root().join(folder);
            let mut paths = Vec::new();
            rust_files(&src, &mut paths);
            paths.sort();
            let files = paths
                .iter()
                .filter_map(|path| {
                    let module = module_of(&src, path)?;
                    let place = path.strip_prefix(root()).unwrap().display().to_string();
                    Some((module, place, std::fs::read_to_string(path).unwrap()))
                })
                .collect();
            (*name, files)
        })
        .collect()
}

fn describe(found: &[ModPath], edges: &Edges) -> String {
    let name = |module: &ModPath| format!("crate::{}", module.join("::"));
    let mut said = found.iter().map(name).collect::<Vec<_>>().join(" → ");
    said.push_str(&format!(" → {}", name(&found[0])));
    for (index, from) in found.iter().enumerate() {
        let to = &found[(index + 1) % found.len()];
        if let Some(places) = edges.get(&(from.clone(), to.clone())) {
            said.push_str(&format!("\n  {}", places[0]));
        }
    }
    said
}

#[test]
fn no_module_imports_another_round_a_circle() {
    for (name, files) in crates() {
        assert!(!files.is_empty(), "{name} has no source files");
        let edges = edges_of(&files);
        if let Some(found) = circle(&edges) {
            panic!(
                "{name}: an import circle: {}\nPull what both sides need into a module below them.",
                describe(&found, &edges)
            );
        }
    }
}

#[test]
fn the_circle_check_finds_circles_and_only_circles() {
    let file = |module: &[&str], text: &str| {
        let module: ModPath = module.iter().map(|part| part.to_string()).collect();
        let place = format!("src/{}.rs", module.join("/"));
        (module, place, text.to_string())
    };
    // Two top-level modules that use each other, one through a `{…}` group.
    let two = [
        file(&["a"], "use crate::b::Thing;"),
        file(&["b"], "use crate::{a::{self, Other}, c};"),
        file(&["c"], ""),
    ];
    let found = circle(&edges_of(&two)).expect("a → b → a");
    assert_eq!(found.len(), 2, "{found:?}");
    // Siblings under one parent, one through `super::`.
    let siblings = [
        file(&["p"], "mod x; mod y;"),
        file(&["p", "x"], "use super::y::f;"),
        file(&["p", "y"], "fn g() { crate::p::x::h() }"),
    ];
    assert!(circle(&edges_of(&siblings)).is_some());
    // A child using its parent and the parent re-exporting the child is containment; a path in a
    // comment is no import; a chain that does not come back is no circle.
    let fine = [
        file(
            &["p"],
            "pub use self::x::Thing;\n// crate::q::z is above us",
        ),
        file(&["p", "x"], "use super::Shared; use crate::q::Other;"),
        file(&["q"], "/// See crate::p.\nfn f() {}"),
        file(&["q", "z"], "use crate::q::Other;"),
    ];
    assert_eq!(circle(&edges_of(&fine)), None);
    // Three round.
    let three = [
        file(&["a"], "fn f() -> crate::b::B { todo!() }"),
        file(&["b"], "use crate::c::C;"),
        file(&["c"], "use crate::a;"),
    ];
    assert_eq!(circle(&edges_of(&three)).map(|found| found.len()), Some(3));
}

/// Every source file outside the crates' `src` folders (`OTHER_SOURCES`): its place in the
/// repository and its text.
fn other_sources() -> Vec<(String, String)> {
    let mut paths = Vec::new();
    for place in OTHER_SOURCES {
        files_with(&root().join(place), SOURCE_EXTENSIONS, &mut paths);
    }
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let place = path.strip_prefix(root()).unwrap().display().to_string();
            (place, std::fs::read_to_string(path).unwrap())
        })
        .collect()
}

#[test]
fn no_source_file_passes_800_lines() {
    let mut files: Vec<(String, String)> = crates()
        .into_iter()
        .flat_map(|(_, files)| files.into_iter().map(|(_, place, text)| (place, text)))
        .collect();
    files.extend(other_sources());
    // The walk reads what it must: a file of each kind, from each place.
    for must in [
        "src/lib.rs",
        "tests/layers.rs",
        "benches/live.rs",
        "ui/app.js",
        "ui/test/run.mjs",
        "scripts/test.sh",
        "fixtures/recorder/record.sh",
        "fixtures/recorder/screens_helper.py",
        "src-tauri/tests/desktop.sh",
    ] {
        assert!(
            files.iter().any(|(place, _)| place == must),
            "the line limit reads {must}"
        );
    }
    let mut long = Vec::new();
    for (place, text) in &files {
        let lines = text.lines().count();
        if lines > MAX_LINES {
            long.push(format!("{place}: {lines} lines"));
        }
    }
    assert!(
        long.is_empty(),
        "split these along the concerns they mix (at most {MAX_LINES} lines):\n{}",
        long.join("\n")
    );
}

/// The packages `package` depends on, however indirectly, from Cargo.lock.
fn dependencies_of(lock: &str, package: &str) -> BTreeSet<String> {
    let lock: toml::Table = lock.parse().expect("Cargo.lock is TOML");
    let packages = lock["package"]
        .as_array()
        .expect("Cargo.lock lists packages");
    let depends: BTreeMap<String, Vec<String>> = packages
        .iter()
        .map(|entry| {
            let name = entry["name"].as_str().unwrap().to_string();
            let deps = entry
                .get("dependencies")
                .and_then(|deps| deps.as_array())
                .map(|deps| {
                    deps.iter()
                        // "name" or "name version" when two versions are locked.
                        .map(|dep| dep.as_str().unwrap().split(' ').next().unwrap().to_string())
                        .collect()
                })
                .unwrap_or_default();
            (name, deps)
        })
        .collect();
    let mut seen = BTreeSet::new();
    let mut queue = vec![package.to_string()];
    while let Some(name) = queue.pop() {
        for dep in depends.get(&name).into_iter().flatten() {
            if seen.insert(dep.clone()) {
                queue.push(dep.clone());
            }
        }
    }
    seen
}

#[test]
fn the_core_depends_on_no_runtime_database_watcher_process_table_or_http() {
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).unwrap();
    let core = dependencies_of(&lock, "slate-core");
    assert!(
        core.contains("serde"),
        "the core's dependencies were read: {core:?}"
    );
    let found: Vec<_> = NOT_IN_CORE
        .iter()
        .filter(|name| core.contains(**name))
        .collect();
    assert!(
        found.is_empty(),
        "slate-core depends on {found:?}: move the code that needs them out of the core"
    );
    // The check reads what it must: the engine crate does depend on them.
    let engine = dependencies_of(&lock, "slate");
    for name in ["tokio", "rusqlite", "git2", "axum", "notify", "sysinfo"] {
        assert!(engine.contains(name), "slate depends on {name}");
    }
}

/// The layers of the workspace, from the bottom up: a crate may depend only on the crates before
/// it, and a top-level module of the `slate` crate may use only modules of its own layer or one
/// before it (which layer is which, and why, is ARCHITECTURE.md's "Layers"). Every top-level
/// module of `slate` is in exactly one layer, so a new module has to take its place here.
const CRATE_ORDER: &[&str] = &[
    "slate-core",
    "slate-sources",
    "slate-terminals",
    "slate",
    "slate-app",
];
const SLATE_LAYERS: &[(&str, &[&str])] = &[
    (
        "edges",
        &["clock", "logging", "places", "token", "config", "client"],
    ),
    ("slate run", &["host"]),
    (
        "engine",
        &[
            "settings", "engine", "store", "answers", "remote", "hooks", "live", "push", "mirror",
        ],
    ),
    ("server", &["api"]),
    ("commands", &["cli", "demo"]),
];

/// The layer of a top-level module, by its place in `layers`.
fn layer_of(layers: &[(&str, &[&str])], module: &str) -> Option<usize> {
    layers
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

/// Every import of `edges` that goes up: from a top-level module into one of a later layer, or
/// between modules no layer names; described with the place that makes it.
fn against_direction(edges: &Edges, layers: &[(&str, &[&str])]) -> Vec<String> {
    let mut found = Vec::new();
    for ((from, to), places) in edges {
        if from.len() != 1 {
            continue;
        }
        let (from, to) = (&from[0], &to[0]);
        match (layer_of(layers, from), layer_of(layers, to)) {
            (Some(low), Some(high)) if high > low => found.push(format!(
                "{from} ({}) uses {to} ({}), a layer above it: {}",
                layers[low].0, layers[high].0, places[0]
            )),
            (None, _) => found.push(format!("{from} is in no layer")),
            (_, None) => found.push(format!("{to} is in no layer")),
            _ => {}
        }
    }
    found
}

#[test]
fn every_import_goes_down_the_layers() {
    let (_, files) = crates()
        .into_iter()
        .find(|(name, _)| *name == "slate")
        .unwrap();
    // Every top-level module has its layer, even one no other module uses.
    for (module, place, _) in &files {
        if module.len() == 1 {
            assert!(
                layer_of(SLATE_LAYERS, &module[0]).is_some(),
                "{place}: the module {} is in no layer of tests/layers.rs's SLATE_LAYERS",
                module[0]
            );
        }
    }
    let found = against_direction(&edges_of(&files), SLATE_LAYERS);
    assert!(
        found.is_empty(),
        "imports against the layers (edges ← slate run ← engine ← server ← commands):\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn the_direction_check_finds_an_import_up_and_only_that() {
    let file = |module: &[&str], text: &str| {
        let module: ModPath = module.iter().map(|part| part.to_string()).collect();
        let place = format!("src/{}.rs", module.join("/"));
        (module, place, text.to_string())
    };
    let layers: &[(&str, &[&str])] = &[("low", &["a", "b"]), ("high", &["c"])];
    // Down and sideways are fine, and so is a child's import of its parent's sibling below.
    let fine = [
        file(&["a"], "use crate::b::B;"),
        file(&["b"], ""),
        file(&["c"], "use crate::{a::A, b};"),
        file(&["c", "x"], "use crate::a::A;"),
    ];
    assert_eq!(
        against_direction(&edges_of(&fine), layers),
        Vec::<String>::new()
    );
    // A low module reaching up, even from a child module or through a group, is named.
    for text in ["use crate::c::C;", "fn f() { crate::{b, c::g}() }"] {
        let up = [
            file(&["a"], "mod x;"),
            file(&["a", "x"], text),
            file(&["c"], ""),
        ];
        let found = against_direction(&edges_of(&up), layers);
        assert_eq!(found.len(), 1, "{text}: {found:?}");
        assert!(found[0].starts_with("a (low) uses c (high)"), "{found:?}");
    }
    // A module in no layer is named too.
    let stray = [file(&["a"], "use crate::d::D;"), file(&["d"], "")];
    assert_eq!(
        against_direction(&edges_of(&stray), layers),
        vec!["d is in no layer".to_string()]
    );
}

#[test]
fn each_crate_depends_only_on_those_below_it() {
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).unwrap();
    for (index, name) in CRATE_ORDER.iter().enumerate() {
        let depends = dependencies_of(&lock, name);
        for above in &CRATE_ORDER[index..] {
            assert!(
                !depends.contains(*above),
                "{name} depends on {above}, which is not below it ({})",
                CRATE_ORDER.join(" ← ")
            );
        }
        // The check reads what it must: each crate above the core stands on the one below.
        if index > 0 {
            assert!(
                depends.contains(CRATE_ORDER[index - 1]),
                "{name} depends on {}",
                CRATE_ORDER[index - 1]
            );
        }
    }
}
