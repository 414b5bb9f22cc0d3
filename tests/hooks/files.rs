//! `slate hooks install|remove` over a temporary HOME, on the files as a person keeps them: only
//! what Slate wrote is taken out, only a file Slate created is deleted, a read-only file, a
//! dangling link and a relative agent home are refused with why, one backup is kept per file
//! (its owner's only), and what a killed install left is cleared.

use crate::util::slate_in;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/hooks")
            .join(name),
    )
    .unwrap()
}

fn hooks(root: &Path, args: &[&str]) -> (Output, String) {
    let output = slate_in(root).arg("hooks").args(args).output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output, said)
}

/// The files in `folder` whose names start with `prefix`, sorted.
fn named(folder: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(prefix)
        })
        .collect();
    found.sort();
    found
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// The probe's case: a settings.json holding only the person's own entries that run a `slate
/// hook` command (under a matcher, with another timeout, another program). `remove` took them
/// all and then deleted the file; now none of them is Slate's.
#[test]
fn remove_takes_out_only_what_slate_wrote() {
    let root = tempfile::tempdir().unwrap();
    let settings = root.path().join("home/.claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let theirs = String::from_utf8(fixture("claude-slate-like.json"))
        .unwrap()
        .replace("SLATE", env!("CARGO_BIN_EXE_slate"));
    std::fs::write(&settings, &theirs).unwrap();

    let (output, said) = hooks(root.path(), &["remove", "claude-code"]);
    assert!(output.status.success(), "{said}");
    assert!(said.contains("none to remove"), "{said}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), theirs);

    let (output, said) = hooks(root.path(), &["status", "--json"]);
    assert!(output.status.success(), "{said}");
    let status: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let claude = status["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|agent| agent["agent"] == "claude-code")
        .unwrap()
        .clone();
    assert!(
        claude["installed"].as_array().unwrap().is_empty(),
        "{claude}"
    );

    // Installed beside them and removed again: the file is theirs, byte for byte, and stays.
    let (output, said) = hooks(root.path(), &["install", "claude-code"]);
    assert!(output.status.success(), "{said}");
    assert_ne!(std::fs::read_to_string(&settings).unwrap(), theirs);
    let (output, said) = hooks(root.path(), &["remove", "claude-code"]);
    assert!(output.status.success(), "{said}");
    assert!(!said.contains("deleted"), "{said}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), theirs);
}

/// A file Slate did not create is never deleted: an empty settings.json gets its 0 bytes back,
/// and an OpenCode plugin the person added to loses only Slate's part. A file Slate created is.
#[test]
fn only_a_file_slate_created_is_deleted() {
    let root = tempfile::tempdir().unwrap();
    let settings = root.path().join("home/.claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "").unwrap();
    let (output, said) = hooks(root.path(), &["install", "claude-code"]);
    assert!(output.status.success(), "{said}");
    assert!(std::fs::metadata(&settings).unwrap().len() > 0);
    let (output, said) = hooks(root.path(), &["remove", "claude-code"]);
    assert!(output.status.success(), "{said}");
    assert_eq!(std::fs::read(&settings).unwrap(), b"", "{said}");

    let plugin = root.path().join("config/opencode/plugin/slate-hooks.js");
    let (output, said) = hooks(root.path(), &["install", "opencode"]);
    assert!(output.status.success(), "{said}");
    let slates = std::fs::read_to_string(&plugin).unwrap();
    let added = "\nexport const Mine = async () => ({});\n";
    std::fs::write(&plugin, format!("{slates}{added}")).unwrap();
    let (output, said) = hooks(root.path(), &["remove", "opencode"]);
    assert!(output.status.success(), "{said}");
    assert_eq!(std::fs::read_to_string(&plugin).unwrap(), added, "{said}");

    // Created by Slate and holding nothing else: deleted, and said so.
    let codex = root.path().join("home/.codex/hooks.json");
    let (output, said) = hooks(root.path(), &["install", "codex"]);
    assert!(output.status.success(), "{said}");
    assert!(codex.exists());
    let (output, said) = hooks(root.path(), &["remove", "codex"]);
    assert!(output.status.success(), "{said}");
    assert!(!codex.exists(), "{said}");
    assert!(said.contains("deleted"), "{said}");
}

/// A read-only settings file and a dangling link are refused, named with why, and left as they
/// were; a link to a real file is edited where it points and stays a link.
#[test]
fn read_only_files_and_dangling_links_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let folder = root.path().join("home/.gemini");
    std::fs::create_dir_all(&folder).unwrap();
    let settings = folder.join("settings.json");
    let original = fixture("gemini-settings.json");
    std::fs::write(&settings, &original).unwrap();
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o444)).unwrap();
    let (output, said) = hooks(root.path(), &["install", "gemini-cli"]);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(said.contains("read-only (mode 0444)"), "{said}");
    assert_eq!(std::fs::read(&settings).unwrap(), original);
    assert_eq!(mode(&settings), 0o444);
    assert!(named(&folder, "settings.json.").is_empty(), "no backup");
    std::fs::remove_file(&settings).unwrap();

    // A link to nothing: writing there would replace the link with a file.
    std::os::unix::fs::symlink("../dotfiles/gemini.json", &settings).unwrap();
    let (output, said) = hooks(root.path(), &["install", "gemini-cli"]);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains("it is a link to ../dotfiles/gemini.json, which does not exist"),
        "{said}"
    );
    assert!(std::fs::symlink_metadata(&settings)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(!root.path().join("home/dotfiles/gemini.json").exists());

    // A link to a real file (a dotfiles folder): edited where it points.
    let dotfiles = root.path().join("home/dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::write(dotfiles.join("gemini.json"), &original).unwrap();
    let (output, said) = hooks(root.path(), &["install", "gemini-cli"]);
    assert!(output.status.success(), "{said}");
    assert!(std::fs::symlink_metadata(&settings)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&settings)
        .unwrap()
        .contains("hook gemini-cli BeforeTool"));
    let (output, said) = hooks(root.path(), &["remove", "gemini-cli"]);
    assert!(output.status.success(), "{said}");
    assert_eq!(
        std::fs::read(dotfiles.join("gemini.json")).unwrap(),
        original
    );
}

/// Cycles of install and remove keep one backup beside the file, readable by its owner only,
/// holding the file as it was before the last change; a run that changes nothing writes none,
/// and what a killed install left (`<file>.slate-<pid>` of a process gone) is cleared.
#[test]
fn one_backup_per_file_and_no_leftovers() {
    let root = tempfile::tempdir().unwrap();
    let folder = root.path().join("home/.gemini");
    std::fs::create_dir_all(&folder).unwrap();
    let settings = folder.join("settings.json");
    let original = fixture("gemini-settings.json");
    std::fs::write(&settings, &original).unwrap();
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o644)).unwrap();
    // What an install killed before its rename leaves, by a process that is gone.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let leftover = folder.join(format!("settings.json.slate-{}", gone.id()));
    std::fs::write(&leftover, "half a fi").unwrap();
    // Another file's leftover-looking name is not this file's: it stays.
    let other = folder.join(format!("other.json.slate-{}", gone.id()));
    std::fs::write(&other, "x").unwrap();

    let mut installed = Vec::new();
    for _ in 0..5 {
        let (output, said) = hooks(root.path(), &["install", "gemini-cli"]);
        assert!(output.status.success(), "{said}");
        installed = std::fs::read(&settings).unwrap();
        let (output, said) = hooks(root.path(), &["install", "gemini-cli"]);
        assert!(said.contains("already installed"), "{said}");
        assert!(output.status.success());
        let (output, said) = hooks(root.path(), &["remove", "gemini-cli"]);
        assert!(output.status.success(), "{said}");
    }
    assert_eq!(std::fs::read(&settings).unwrap(), original);
    assert_eq!(mode(&settings), 0o644, "the file keeps its permissions");
    let backups = named(&folder, "settings.json.");
    assert_eq!(backups, [folder.join("settings.json.slate-backup")]);
    assert_eq!(mode(&backups[0]), 0o600);
    // The file as it was before the last change: with Slate's hooks in it.
    assert_eq!(std::fs::read(&backups[0]).unwrap(), installed);
    assert!(!leftover.exists());
    assert!(other.exists());
}

/// `CODEX_HOME=rel/dir`: Codex reads it against the folder it starts in, which Slate cannot
/// know, so Slate refuses it and says why, and writes nothing (it wrote `rel/dir/hooks.json`
/// under its own current folder).
#[test]
fn a_relative_agent_home_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let output = slate_in(root.path())
        .current_dir(root.path())
        .env("CODEX_HOME", "rel/dir")
        .args(["hooks", "install", "codex"])
        .output()
        .unwrap();
    let complained = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(output.status.code(), Some(1), "{complained}");
    assert!(
        complained.contains("CODEX_HOME is \"rel/dir\", a relative path"),
        "{complained}"
    );
    assert!(!root.path().join("rel").exists());
    assert!(!root.path().join("home/.codex").exists());
    let output = slate_in(root.path())
        .current_dir(root.path())
        .env("CODEX_HOME", "rel/dir")
        .args(["hooks", "status"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(said.contains("a relative path"), "{said}");
}

/// The same rule where Slate reads an agent's sessions: a relative home names no root, and no
/// other candidate stands in for it; a relative XDG folder counts as unset.
#[test]
fn a_relative_agent_home_names_no_root() {
    use slate::agents::BUILT_IN;
    use slate::sources::roots::{resolve_roots, Env};
    let home = Env::with_home("/home/me");
    let codex = BUILT_IN.find("codex").unwrap().kind();
    let roots = resolve_roots(BUILT_IN, &home.clone().with_var("CODEX_HOME", "rel/dir"));
    assert_eq!(roots.get(codex), None);
    let roots = resolve_roots(BUILT_IN, &home.clone().with_var("CODEX_HOME", "/srv/codex"));
    assert_eq!(roots.get(codex), Some(Path::new("/srv/codex")));
    let roots = resolve_roots(BUILT_IN, &home);
    assert_eq!(roots.get(codex), Some(Path::new("/home/me/.codex")));
    let opencode = BUILT_IN.find("opencode").unwrap().hooks.unwrap();
    let relative = Env {
        xdg_config_home: Some("rel/config".into()),
        ..home
    };
    assert_eq!(
        slate::hooks::config_path(opencode, &relative),
        Some(PathBuf::from(
            "/home/me/.config/opencode/plugin/slate-hooks.js"
        ))
    );
}

/// Cline CLI's folder of hooks: a file is Slate's only as this Slate writes it or as recorded
/// at install. One in Slate's form but edited since, or written for another `slate`, is neither
/// removed nor written over.
#[test]
fn a_cline_hook_file_is_slates_only_as_written_or_recorded() {
    use slate::agents::hooks::settings;
    let root = tempfile::tempdir().unwrap();
    let folder = root.path().join("home/.cline/hooks");
    let (output, said) = hooks(root.path(), &["install", "cline"]);
    assert!(output.status.success(), "{said}");
    let edited = folder.join("TaskStart");
    let text = std::fs::read_to_string(&edited)
        .unwrap()
        .replace("# It passes", "# My note. It passes");
    std::fs::write(&edited, &text).unwrap();
    let (output, said) = hooks(root.path(), &["remove", "cline"]);
    assert!(output.status.success(), "{said}");
    let left: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["TaskStart"], "{said}");
    assert_eq!(std::fs::read_to_string(&edited).unwrap(), text);
    std::fs::remove_file(&edited).unwrap();

    // Written by a Slate elsewhere, with no record here: not this Slate's to replace.
    let elsewhere = settings::script("cline", "/opt/old/slate", "TaskComplete");
    std::fs::write(folder.join("TaskComplete"), &elsewhere).unwrap();
    let (output, said) = hooks(root.path(), &["install", "cline"]);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains("in the form of Slate's hook for TaskComplete"),
        "{said}"
    );
    assert!(!said.contains("JSON"), "{said}");
    assert_eq!(
        std::fs::read_to_string(folder.join("TaskComplete")).unwrap(),
        elsewhere
    );
}
