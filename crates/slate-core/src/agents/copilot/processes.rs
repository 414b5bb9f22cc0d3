//! Recognising a GitHub Copilot CLI process (docs/formats.md §14.4): the native binary is the
//! session, the npm loader that starts it is a helper.

use super::KIND;
use crate::agents::{is_uuid, program_name, AgentProcess, ProcessRole};
use crate::model::ProcessInfo;

/// The subcommands that manage the CLI rather than open a session (`copilot help` lists them).
const HELPER_COMMANDS: [&str; 17] = [
    "app",
    "login",
    "help",
    "init",
    "config",
    "update",
    "version",
    "workflow",
    "sessions",
    "memories",
    "plugin",
    "mcp",
    "skill",
    "instruction",
    "lsp",
    "sandbox",
    "completion",
];

/// Recognises a Copilot CLI process.
///
/// npm's `copilot` is `@github/copilot/npm-loader.js`, run by node, which starts the platform
/// binary (`…/@github/copilot-<platform>-<arch>/copilot`) as its child and waits for it: the
/// loader is a helper, the binary is the session. The binary's short name is `MainThread` on
/// Linux (its main thread's), so it is known by its command line and its executable, never by
/// its short name.
pub fn recognise(process: &ProcessInfo) -> Option<AgentProcess> {
    let Some((first, rest)) = process.cmd.split_first() else {
        // Without a command line (another user's process) only the executable can tell.
        let exe = process.exe.as_deref()?;
        return is_native(exe).then(|| session(ProcessRole::Interactive, None));
    };
    if is_native(first) {
        let (role, session_arg) = read_args(rest);
        return Some(session(role, session_arg));
    }
    if !matches!(program_name(first).as_str(), "node" | "nodejs") {
        return None;
    }
    let script = rest.iter().find(|arg| !arg.starts_with('-'))?;
    is_loader(script).then(|| session(ProcessRole::Helper, None))
}

fn session(role: ProcessRole, session_arg: Option<String>) -> AgentProcess {
    AgentProcess {
        agent: KIND,
        role,
        folder_arg: None,
        session_arg,
    }
}

/// The native binary: a program named `copilot` that is not a script node runs.
fn is_native(path: &str) -> bool {
    program_name(path) == "copilot"
}

/// The npm loader: `…/node_modules/.bin/copilot` or `…/@github/copilot/npm-loader.js`.
fn is_loader(script: &str) -> bool {
    let script = script.replace('\\', "/");
    program_name(&script) == "copilot" || script.ends_with("/@github/copilot/npm-loader.js")
}

/// The role and the named session of the binary's arguments: a subcommand that manages the CLI
/// is a helper, `-p`/`--prompt` a print run, `--resume <id>`/`--session-id <id>` names its
/// session.
fn read_args(args: &[String]) -> (ProcessRole, Option<String>) {
    let mut role = ProcessRole::Interactive;
    let mut session_arg = None;
    let mut index = 0;
    if let Some(first) = args.first() {
        if HELPER_COMMANDS.contains(&first.as_str()) {
            return (ProcessRole::Helper, None);
        }
    }
    while let Some(arg) = args.get(index) {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_string())),
            _ => (arg.as_str(), None),
        };
        match name {
            "-p" | "--prompt" => role = ProcessRole::Print,
            "-v" | "--version" | "-h" | "--help" => return (ProcessRole::Helper, None),
            "--resume" | "--session-id" => {
                // `--resume` alone opens a picker; only a full id names the session here.
                let value = inline.or_else(|| args.get(index + 1).cloned());
                if let Some(value) = value.filter(|value| is_uuid(value)) {
                    session_arg = Some(value);
                }
            }
            _ => {}
        }
        index += 1;
    }
    (role, session_arg)
}
