//! Recognising a Gemini CLI process (docs/formats.md §3.4): the script or binary it runs, its
//! role and named session, and the parent a relaunch leaves waiting for its child.

use super::KIND;
use crate::agents::{program_name, AgentProcess, ProcessRole};
use crate::model::ProcessInfo;

/// Recognises a Gemini CLI process: `node …/@google/gemini-cli/bundle/gemini.js` (or
/// `…/dist/index.js`, or the npm `bin/gemini` link run by node), or a binary named `gemini`.
///
/// The CLI relaunches itself in a child node process with the same script, so one session shows as
/// a parent and a child. This function sees one process at a time and recognises both; the
/// processes edge must call [`is_relaunch_parent`] and mark the parent `ProcessRole::Helper` so
/// the pair vouches once.
pub fn recognise(process: &ProcessInfo) -> Option<AgentProcess> {
    let (_, args) = invocation(process)?;
    let (role, session_arg) = read_args(args);
    Some(AgentProcess {
        agent: KIND,
        role,
        folder_arg: None,
        session_arg,
    })
}

/// True when `process` is a Gemini process that relaunched itself: another Gemini process in
/// `all` runs the same script and has `process` as its parent. The parent only waits for its child,
/// which is the real session.
pub fn is_relaunch_parent(process: &ProcessInfo, all: &[ProcessInfo]) -> bool {
    let Some((script, _)) = invocation(process) else {
        return false;
    };
    all.iter().any(|other| {
        other.pid != process.pid
            && other.ppid == Some(process.pid)
            && invocation(other).is_some_and(|(other_script, _)| same_script(script, other_script))
    })
}

/// True when two command lines name the same script. The child gets the parent's script as Node
/// resolved it, so a parent started as `node bundle/gemini.js` has a child with the absolute path.
fn same_script(a: &str, b: &str) -> bool {
    let a = a.replace('\\', "/");
    let b = b.replace('\\', "/");
    let relative = |path: &str| path.trim_start_matches("./").to_string();
    a == b
        || (!a.starts_with('/') && b.ends_with(&format!("/{}", relative(&a))))
        || (!b.starts_with('/') && a.ends_with(&format!("/{}", relative(&b))))
}

/// The Gemini entry point a process runs and the arguments after it, or `None` when the process
/// is not Gemini.
fn invocation(process: &ProcessInfo) -> Option<(&str, &[String])> {
    let (first, rest) = match process.cmd.split_first() {
        Some(split) => split,
        None => {
            // Without a command line (another user's process) only the executable can tell.
            let exe = process.exe.as_deref()?;
            return (program_name(exe) == "gemini").then_some((exe, &[]));
        }
    };
    let program = program_name(first);
    if program == "gemini" {
        return Some((first.as_str(), rest));
    }
    if !matches!(program.as_str(), "node" | "nodejs" | "bun") {
        return None;
    }
    let index = crate::agents::runtime_script_index(rest);
    let script = rest.get(index)?;
    is_gemini_script(script).then(|| (script.as_str(), rest.get(index + 1..).unwrap_or(&[])))
}

fn is_gemini_script(script: &str) -> bool {
    let normalised = script.replace('\\', "/").to_ascii_lowercase();
    if program_name(&normalised) == "gemini" {
        return true;
    }
    // The bundle's file name is distinctive; `dist/index.js` is not, so it must sit in a
    // `gemini-cli` package or checkout.
    let bundle = normalised == "bundle/gemini.js" || normalised.ends_with("/bundle/gemini.js");
    bundle || (normalised.contains("gemini-cli/") && normalised.ends_with("/dist/index.js"))
}

/// The role and the named session of a Gemini command line (the arguments after the script).
fn read_args(args: &[String]) -> (ProcessRole, Option<String>) {
    let mut role = ProcessRole::Interactive;
    let mut session = None;
    for (index, arg) in args.iter().enumerate() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value)),
            _ => (arg.as_str(), None),
        };
        let value = || inline.or_else(|| args.get(index + 1).map(String::as_str));
        match flag {
            "--list-sessions" | "--delete-session" | "--version" | "-v" | "--help" | "-h"
            | "--list-extensions" | "-l" => return (ProcessRole::Helper, None),
            "-p" | "--prompt" => role = ProcessRole::Print,
            "-r" | "--resume" => {
                session = value()
                    .filter(|id| crate::agents::is_uuid(id))
                    .map(str::to_string);
            }
            _ => {}
        }
    }
    // Subcommands come first: `gemini mcp …`, `gemini extensions …` manage the CLI.
    if matches!(
        args.first().map(String::as_str),
        Some("mcp" | "extensions" | "extension")
    ) {
        return (ProcessRole::Helper, None);
    }
    (role, session)
}
