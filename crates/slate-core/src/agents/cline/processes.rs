//! Recognising a Cline CLI process (docs/formats.md §15.4): the TUI is the session, the hub
//! daemon it starts is a daemon, its management commands are helpers.

use super::KIND;
use crate::agents::{program_name, AgentProcess, ProcessRole};
use crate::model::ProcessInfo;

/// The subcommands that manage the CLI rather than open a session (`cline --help` lists them).
const HELPER_COMMANDS: [&str; 16] = [
    "auth",
    "config",
    "plugin",
    "skill",
    "connect",
    "mcp",
    "doctor",
    "history",
    "h",
    "hook",
    "schedule",
    "hub",
    "dashboard",
    "update",
    "version",
    "kanban",
];

/// The options that take a value in the next argument.
const WITH_VALUE: [&str; 17] = [
    "--auto-approve",
    "-c",
    "--cwd",
    "--compaction",
    "--id",
    "-P",
    "--provider",
    "-k",
    "--key",
    "-m",
    "--model",
    "-s",
    "--system",
    "-t",
    "--timeout",
    "--config",
    "--data-dir",
];

/// Recognises a Cline CLI process.
///
/// npm's `cline` is the platform package's Bun-compiled binary (`…/@cline/cli-<os>-<arch>/bin/
/// cline`, or `bin/.cline` under the `cline` package's Node wrapper, which then waits as a
/// helper). The same binary, re-run with `--cline-hub-daemon`, is the hub that outlives the TUI
/// and runs its sessions: a daemon, never a session of its own.
pub fn recognise(process: &ProcessInfo) -> Option<AgentProcess> {
    let Some((first, rest)) = process.cmd.split_first() else {
        let exe = process.exe.as_deref()?;
        return is_binary(exe).then(|| session(ProcessRole::Interactive, None, None));
    };
    if is_binary(first) {
        return Some(read_args(rest));
    }
    if !matches!(program_name(first).as_str(), "node" | "nodejs" | "bun") {
        return None;
    }
    let script = rest.iter().find(|arg| !arg.starts_with('-'))?;
    is_wrapper(script).then(|| session(ProcessRole::Helper, None, None))
}

fn session(
    role: ProcessRole,
    folder_arg: Option<String>,
    session_arg: Option<String>,
) -> AgentProcess {
    AgentProcess {
        agent: KIND,
        role,
        folder_arg,
        session_arg,
    }
}

/// The binary: a program named `cline` (or `.cline`, the wrapper's copy) that no runtime runs.
fn is_binary(path: &str) -> bool {
    matches!(program_name(path).as_str(), "cline" | ".cline")
}

/// The Node wrapper the `cline` package ships: `…/node_modules/cline/bin/cline`.
fn is_wrapper(script: &str) -> bool {
    script.replace('\\', "/").ends_with("/cline/bin/cline")
}

/// `--thinking [level]` and `--retries [count]` take a value only when one follows.
fn optional_value(arg: &str, next: Option<&str>) -> bool {
    match (arg, next) {
        ("--thinking", Some(level)) => {
            matches!(level, "none" | "low" | "medium" | "high" | "xhigh")
        }
        ("--retries", Some(count)) => {
            !count.is_empty() && count.bytes().all(|b| b.is_ascii_digit())
        }
        _ => false,
    }
}

/// What the binary's arguments make of it: `--cline-hub-daemon` is the hub, a management
/// subcommand or `--version`/`--help` a helper, a prompt given without `-i`/`--tui` a print run
/// (it runs the task and exits), anything else the TUI. `-c`/`--cwd` names its folder and `--id`
/// its session.
fn read_args(args: &[String]) -> AgentProcess {
    let mut folder = None;
    let mut session_arg = None;
    let mut prompt = false;
    let mut tui = false;
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        let value = args.get(index + 1).cloned();
        match arg.as_str() {
            "--cline-hub-daemon" => return session(ProcessRole::Daemon, None, None),
            "-V" | "--version" | "-h" | "--help" | "--update" => {
                return session(ProcessRole::Helper, None, None)
            }
            "-i" | "--tui" | "--acp" => tui = true,
            "-c" | "--cwd" => folder = value.clone(),
            "--id" => session_arg = value.clone(),
            _ => {}
        }
        if let Some(found) = arg.strip_prefix("--cwd=") {
            folder = Some(found.to_string());
        } else if let Some(found) = arg.strip_prefix("--id=") {
            session_arg = Some(found.to_string());
        }
        if WITH_VALUE.contains(&arg.as_str()) || optional_value(arg, value.as_deref()) {
            index += 2;
            continue;
        }
        if !arg.starts_with('-') {
            if index == 0 && HELPER_COMMANDS.contains(&arg.as_str()) {
                return session(ProcessRole::Helper, None, None);
            }
            prompt = true;
        }
        index += 1;
    }
    let role = if prompt && !tui {
        ProcessRole::Print
    } else {
        ProcessRole::Interactive
    };
    session(role, folder, session_arg)
}
