//! Recognising a Qwen Code process (docs/formats.md §13.4): the script it runs, its role and
//! named session, and the processes that only wait for the session's own.

use super::KIND;
use crate::agents::{program_name, AgentProcess, ProcessRole};
use crate::model::ProcessInfo;

/// Recognises a Qwen Code process: `node …/.bin/qwen` (the launcher, `cli-entry.js` behind npm's
/// link), `node [--expose-gc] …/@qwen-code/qwen-code/cli.js` (the relaunch and the TUI), or a
/// program named `qwen`.
///
/// One session shows as three processes: the launcher, the process it relaunches, and that
/// one's own relaunch, the TUI (started with `QWEN_CODE_NO_RELAUNCH`), which is the pid the
/// registry names. This function sees one process at a time and recognises all three; the
/// processes edge marks the two that only wait ([`is_relaunch_parent`]) as helpers.
pub fn recognise(process: &ProcessInfo) -> Option<AgentProcess> {
    let args = invocation(process)?;
    let (role, session_arg) = read_args(args);
    Some(AgentProcess {
        agent: KIND,
        role,
        folder_arg: None,
        session_arg,
    })
}

/// True when `process` is a Qwen Code process with a Qwen Code child: the launcher and the
/// first relaunch only wait for the child that runs the session.
pub fn is_relaunch_parent(process: &ProcessInfo, all: &[ProcessInfo]) -> bool {
    invocation(process).is_some()
        && all.iter().any(|other| {
            other.pid != process.pid
                && other.ppid == Some(process.pid)
                && invocation(other).is_some()
        })
}

/// The arguments after Qwen Code's entry point, or `None` when the process is not Qwen Code.
fn invocation(process: &ProcessInfo) -> Option<&[String]> {
    let Some((first, rest)) = process.cmd.split_first() else {
        // Without a command line (another user's process) only the executable can tell.
        let exe = process.exe.as_deref()?;
        return (program_name(exe) == "qwen").then_some(&[]);
    };
    if program_name(first) == "qwen" {
        return Some(rest);
    }
    if !matches!(program_name(first).as_str(), "node" | "nodejs" | "bun") {
        return None;
    }
    let index = crate::agents::runtime_script_index(rest);
    let script = rest.get(index)?;
    is_qwen_script(script).then(|| rest.get(index + 1..).unwrap_or(&[]))
}

fn is_qwen_script(script: &str) -> bool {
    let normalised = script.replace('\\', "/").to_ascii_lowercase();
    if program_name(&normalised) == "qwen" {
        return true;
    }
    // The package's entry points: `cli-entry.js` (npm's `bin`) and the `cli.js` it relaunches.
    [
        "/@qwen-code/qwen-code/cli.js",
        "/@qwen-code/qwen-code/cli-entry.js",
    ]
    .iter()
    .any(|entry| normalised.ends_with(entry))
}

/// The role and the named session of a Qwen Code command line (the arguments after the script).
fn read_args(args: &[String]) -> (ProcessRole, Option<String>) {
    // Subcommands come first: `qwen sessions ps`, `qwen mcp …`, `qwen hooks …` manage the CLI.
    if matches!(
        args.first().map(String::as_str),
        Some(
            "sessions"
                | "mcp"
                | "extensions"
                | "extension"
                | "hooks"
                | "auth"
                | "channel"
                | "channels"
                | "serve"
                | "update"
        )
    ) {
        return (ProcessRole::Helper, None);
    }
    let mut role = ProcessRole::Interactive;
    let mut session = None;
    for (index, arg) in args.iter().enumerate() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value)),
            _ => (arg.as_str(), None),
        };
        let value = || inline.or_else(|| args.get(index + 1).map(String::as_str));
        match flag {
            "--version" | "-v" | "--help" | "-h" => return (ProcessRole::Helper, None),
            "-p" | "--prompt" => role = ProcessRole::Print,
            "-r" | "--resume" | "--session-id" => {
                session = value()
                    .filter(|id| crate::agents::is_uuid(id))
                    .map(str::to_string);
            }
            _ => {}
        }
    }
    (role, session)
}
