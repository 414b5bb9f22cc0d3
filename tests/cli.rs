//! The `slate` command line as a packaged Unix tool: it ends quietly when the reader of its
//! output goes away, its exit codes are the ones the manual page documents, the completions offer
//! what the parser accepts, the manual pages refer only to pages that exist, and the systemd user
//! unit the packages install is well formed and runs `slate serve` from where the packages put it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use slate::model::Timestamp;

use crate::util;

const NOW: &str = "2026-11-29T12:00:10.000Z";

/// Every command a person types, as the completions and the manual must know them.
const COMMANDS: [&str; 16] = [
    "sessions",
    "show",
    "focus",
    "doctor",
    "park",
    "await",
    "resume",
    "item",
    "claim",
    "release",
    "run",
    "serve",
    "watch",
    "remote",
    "completions",
    "man",
];

/// A temporary HOME with one Working Claude Code session and the recorded process that vouches
/// for it.
struct Home {
    dir: tempfile::TempDir,
    processes: PathBuf,
}

fn home() -> Home {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let now = Timestamp::parse_rfc3339(NOW).expect("a time");
    util::working_transcript(&dir.path().join("home"), now.minus(Duration::from_secs(2)));
    let table = util::claude_process_table(now.minus(Duration::from_secs(60)));
    let processes = dir.path().join("processes.json");
    std::fs::write(
        &processes,
        serde_json::to_string(&table.processes).expect("the table as JSON"),
    )
    .expect("the process table");
    Home { dir, processes }
}

/// `slate args…` over `home`, deciding on its own (never asking a server that may run here).
fn slate(home: &Home, args: &[&str]) -> Command {
    let mut command = util::slate_over(home.dir.path(), &home.processes, NOW);
    command
        .args(args)
        .env("SLATE_STANDALONE", "1")
        .stdin(Stdio::null());
    command
}

/// Waits for `command` for at most 30 s; a command that outlives that is killed and fails the
/// test, since each one here has an end.
fn finish(mut command: Command) -> Output {
    command.stderr(Stdio::piped());
    let mut child = command.spawn().expect("slate starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().expect("waiting for slate").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{command:?} did not end within 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("slate's output")
}

/// Runs `command` with its standard output on a pipe whose reading end is already closed: the
/// first write fails with a broken pipe, whenever it comes. Both ends are close-on-exec from the
/// start (`pipe2`, hence Linux only): a process another test starts meanwhile, such as a tmux
/// server that lives on, would otherwise inherit them, keep the pipe open, and trip that test.
#[cfg(target_os = "linux")]
fn into_closed_pipe(mut command: Command) -> Output {
    let (reader, writer) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).expect("a pipe");
    drop(reader);
    command.stdout(Stdio::from(writer));
    finish(command)
}

#[cfg(target_os = "linux")]
#[test]
fn every_command_that_prints_ends_quietly_when_its_reader_has_gone() {
    let home = home();
    let id = &util::SESSION[..8];
    let cases: [&[&str]; 11] = [
        &["sessions"],
        &["sessions", "--json"],
        &["sessions", "--all"],
        &["sessions", "--reclaimable"],
        &["show", id],
        &["show", id, "--json"],
        &["doctor"],
        &["item", "list"],
        &["watch", "--json", "--listen", "127.0.0.1:0"],
        &["completions", "bash"],
        &["man"],
    ];
    for args in cases {
        let output = into_closed_pipe(slate(&home, args));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success() && stderr.is_empty(),
            "slate {args:?} into a closed pipe: {:?}, stderr {stderr:?}",
            output.status
        );
    }
}

#[cfg(target_os = "linux")]
#[test]
fn an_error_is_still_reported_when_the_output_is_closed() {
    let home = home();
    let output = into_closed_pipe(slate(&home, &["show", "no-such-session"]));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "stderr {stderr:?}");
    assert!(stderr.starts_with("slate: "), "stderr {stderr:?}");
}

/// Runs `slate args…` with its output read in full.
fn output(home: &Home, args: &[&str]) -> Output {
    let mut command = slate(home, args);
    command.stdout(Stdio::piped());
    finish(command)
}

fn stdout(home: &Home, args: &[&str]) -> String {
    let output = output(home, args);
    assert!(
        output.status.success(),
        "slate {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8 output")
}

#[test]
fn the_exit_codes_are_the_ones_the_manual_documents() {
    let home = home();
    let page = stdout(&home, &["man"]);
    let exit_status = page
        .split(".SH \"EXIT STATUS\"")
        .nth(1)
        .expect("an EXIT STATUS section")
        .split("\n.SH ")
        .next()
        .unwrap_or_default();
    for term in [
        "\\fB0\\fR",
        "\\fB1\\fR",
        "\\fB2\\fR",
        "\\fBslate run\\fR",
        "\\fBslate serve\\fR",
    ] {
        assert!(
            exit_status.contains(term),
            "EXIT STATUS lacks {term}: {exit_status}"
        );
    }

    let code = |args: &[&str]| output(&home, args).status.code();
    assert_eq!(code(&["sessions"]), Some(0));
    assert_eq!(code(&["show", "no-such-session"]), Some(1));
    assert_eq!(code(&["--no-such-option"]), Some(2));
    assert_eq!(code(&["sessions", "--limit", "3"]), Some(2));
    #[cfg(unix)]
    {
        // `slate run` passes its command's status through; nothing listens on port 9.
        let run = |program: &[&str]| {
            let mut command = slate(&home, &[&["run", "--"], program].concat());
            command
                .env("SLATE_API", "http://127.0.0.1:9")
                .stdout(Stdio::null());
            finish(command).status.code()
        };
        assert_eq!(run(&["sh", "-c", "exit 7"]), Some(7));
        assert_eq!(run(&["sh", "-c", "exit 0"]), Some(0));
        assert_eq!(
            run(&["sh", "-c", "kill -TERM $$"]),
            Some(128 + 15),
            "ended by SIGTERM"
        );
        assert_eq!(
            run(&["/no/such/program"]),
            Some(1),
            "a command that cannot start"
        );
    }
}

#[test]
fn the_manual_pages_cover_every_command_and_refer_only_to_pages_that_exist() {
    let home = home();
    let dir = home.dir.path().join("man1");
    let listed = stdout(
        &home,
        &["man", "--dir", dir.to_str().expect("a UTF-8 path")],
    );
    let written: Vec<PathBuf> = listed.lines().map(PathBuf::from).collect();
    let names: Vec<String> = written
        .iter()
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(names.contains(&"slate.1".to_string()), "{names:?}");
    for command in COMMANDS {
        assert!(
            names.contains(&format!("slate-{command}.1")),
            "no page for slate {command}: {names:?}"
        );
    }
    for path in &written {
        let page = std::fs::read_to_string(path).expect("a written page");
        assert!(
            page.contains(".TH "),
            "{} has no title line",
            path.display()
        );
        // Every `slate-xxx(1)` a page names is a page that was written.
        for (start, _) in page.match_indices("slate\\-") {
            let rest = &page[start..];
            let Some(end) = rest.find("(1)") else {
                continue;
            };
            let name = rest[..end].replace("\\-", "-");
            if name.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
                assert!(
                    names.contains(&format!("{name}.1")),
                    "{} refers to {name}(1), which was not written",
                    path.display()
                );
            }
        }
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("slate.1")).expect("slate.1"),
        stdout(&home, &["man"]),
        "`slate man` prints the page `--dir` writes"
    );
}

#[test]
fn bash_completion_offers_the_commands_and_hides_the_replay_switches() {
    let home = home();
    let script = home.dir.path().join("slate.bash");
    std::fs::write(&script, stdout(&home, &["completions", "bash"])).expect("the script");
    // What bash-completion does on `slate <Tab>`: fill COMP_WORDS and COMP_CWORD, then call the
    // function the script registered with `complete -F`.
    let complete = |words: &[&str]| -> Vec<String> {
        let words: Vec<String> = words.iter().map(|word| format!("'{word}'")).collect();
        let program = format!(
            "source '{}'\nfunction_name=$(complete -p slate | sed -n 's/.*-F \\([^ ]*\\).*/\\1/p')\n\
             COMP_WORDS=({})\nCOMP_CWORD={}\nCOMP_LINE=\"${{COMP_WORDS[*]}}\"\nCOMP_POINT=${{#COMP_LINE}}\n\
             \"$function_name\" slate \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
             printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
            script.display(),
            words.join(" "),
            words.len() - 1
        );
        let output = Command::new("bash")
            .arg("-c")
            .arg(program)
            .output()
            .expect("bash runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    };
    let offered = complete(&["slate", ""]);
    for command in COMMANDS {
        assert!(
            offered.iter().any(|word| word == command),
            "`slate <Tab>` does not offer {command}: {offered:?}"
        );
    }
    for hidden in ["--now", "--processes"] {
        assert!(
            !offered.iter().any(|word| word == hidden),
            "`slate <Tab>` offers the hidden {hidden}"
        );
    }
    assert_eq!(complete(&["slate", "ses"]), vec!["sessions".to_string()]);
    let item = complete(&["slate", "item", ""]);
    for sub in ["add", "list", "done"] {
        assert!(item.iter().any(|word| word == sub), "{item:?}");
    }
    let shells = complete(&["slate", "completions", ""]);
    for shell in ["bash", "zsh", "fish"] {
        assert!(shells.iter().any(|word| word == shell), "{shells:?}");
    }
}

#[test]
fn zsh_and_fish_completions_are_for_slate() {
    let home = home();
    let zsh = stdout(&home, &["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef slate"), "{zsh:.80}");
    let fish = stdout(&home, &["completions", "fish"]);
    assert!(fish.contains("complete -c slate"), "{fish:.200}");
    for command in COMMANDS {
        assert!(
            fish.contains(&format!("-a \"{command}\"")),
            "fish does not offer {command}"
        );
    }
    let unknown = output(&home, &["completions", "tcsh"]);
    assert_eq!(unknown.status.code(), Some(2));
}

/// A systemd unit file read as systemd reads it: `[Section]` headers, `Key=Value` lines,
/// comments starting with `#` or `;`, blank lines. Anything else is an error with its line.
fn parse_unit(text: &str) -> Result<BTreeMap<String, Vec<(String, String)>>, String> {
    let mut sections: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
        {
            if sections.contains_key(name) {
                return Err(format!("line {}: [{name}] appears twice", index + 1));
            }
            sections.insert(name.to_string(), Vec::new());
            current = Some(name.to_string());
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("line {}: not Key=Value: {raw}", index + 1));
        };
        let Some(section) = &current else {
            return Err(format!("line {}: a key before any section", index + 1));
        };
        sections
            .get_mut(section)
            .expect("the current section")
            .push((key.trim().to_string(), value.trim().to_string()));
    }
    Ok(sections)
}

#[test]
fn the_unit_parser_rejects_what_systemd_would() {
    assert!(parse_unit("ExecStart=/usr/bin/slate serve\n").is_err());
    assert!(parse_unit("[Service]\nExecStart /usr/bin/slate serve\n").is_err());
    assert!(parse_unit("[Service]\n[Service]\n").is_err());
    let parsed = parse_unit("# note\n[Service]\n; also a note\nType=exec\n").expect("valid");
    assert_eq!(parsed["Service"], vec![("Type".into(), "exec".into())]);
}

fn repository(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

#[test]
fn the_user_unit_runs_slate_serve_from_the_package_and_restarts_on_failure() {
    let text = std::fs::read_to_string(repository("packaging/slate.service")).expect("the unit");
    let unit = parse_unit(&text).expect("a well-formed unit");
    assert_eq!(
        unit.keys().map(String::as_str).collect::<Vec<_>>(),
        ["Install", "Service", "Unit"]
    );
    // Keys systemd knows in each section; a misspelt one would be ignored with a warning.
    let known: [(&str, &[&str]); 3] = [
        ("Unit", &["Description", "Documentation"]),
        (
            "Service",
            &[
                "Type",
                "ExecStart",
                "Restart",
                "RestartSec",
                "RestartPreventExitStatus",
                "Environment",
            ],
        ),
        ("Install", &["WantedBy"]),
    ];
    for (section, keys) in known {
        for (key, _) in &unit[section] {
            assert!(keys.contains(&key.as_str()), "[{section}] {key} is unknown");
        }
    }
    let value = |section: &str, key: &str| -> Option<String> {
        unit[section]
            .iter()
            .rev()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.clone())
    };
    assert_eq!(
        value("Service", "ExecStart").as_deref(),
        Some("/usr/bin/slate serve")
    );
    assert!(matches!(
        value("Service", "Type").as_deref(),
        Some("exec" | "simple")
    ));
    assert_eq!(value("Service", "Restart").as_deref(), Some("on-failure"));
    // `slate serve` exits with 3 when this user's Slate (the app) already serves: no restart then.
    assert_eq!(
        value("Service", "RestartPreventExitStatus").as_deref(),
        Some("3")
    );
    assert!(value("Unit", "Description").is_some_and(|text| !text.is_empty()));
    // A user manager has no multi-user.target; default.target is what `enable` hooks into.
    assert_eq!(
        value("Install", "WantedBy").as_deref(),
        Some("default.target")
    );
    // It listens on loopback only, so it waits for no network (nor any other unit).
    for (section, entries) in &unit {
        for (key, value) in entries {
            assert!(!value.contains("network"), "[{section}] {key}={value}");
        }
    }

    // The packages install the unit and the binary it runs where the unit says, and that binary
    // is the one scripts/package.sh builds: with the cargo profile it names, which Cargo.toml
    // defines, so the bundler and the file list read the same target folder.
    let script = std::fs::read_to_string(repository("scripts/package.sh")).expect("the script");
    let profile = script
        .lines()
        .find_map(|line| line.strip_prefix("profile="))
        .expect("scripts/package.sh names its cargo profile");
    let manifest = std::fs::read_to_string(repository("Cargo.toml")).expect("the manifest");
    assert!(
        manifest.contains(&format!("[profile.{profile}]")),
        "Cargo.toml defines no profile {profile}"
    );
    let built = format!("../target/{profile}/slate");
    let config: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repository("src-tauri/tauri.conf.json")).expect("the config"),
    )
    .expect("JSON");
    for format in ["deb", "rpm"] {
        let files = &config["bundle"]["linux"][format]["files"];
        assert_eq!(
            files["/usr/lib/systemd/user/slate.service"], "../packaging/slate.service",
            "{format}"
        );
        assert_eq!(files["/usr/bin/slate"], built.as_str(), "{format}");
        for installed in [
            "/usr/share/bash-completion/completions/slate",
            "/usr/share/zsh/vendor-completions/_slate",
            "/usr/share/fish/vendor_completions.d/slate.fish",
            "/usr/share/man/man1",
        ] {
            assert!(files[installed].is_string(), "{format} lacks {installed}");
        }
    }
}
