//! Recognising a Codex process from its argv (docs/formats.md §2.4): the TUI, `codex exec`, the
//! `app-server` daemon, helper subcommands, the npm shim and the tools Codex runs as itself.

use super::KIND;
use crate::agents::{program_name, AgentProcess, ProcessRole};
use crate::model::ProcessInfo;

/// Recognises a Codex process (docs/formats.md §2.4) from its argv, falling back to its executable.
///
/// A process whose argv cannot be read is not recognised: without it a TUI cannot be told from the
/// `app-server` daemon, and a daemon must never vouch for a session.
pub fn recognise(process: &ProcessInfo) -> Option<AgentProcess> {
    let arg0 = program_name(process.cmd.first()?);
    if is_codex_program(&arg0) {
        return Some(classify(&process.cmd[1..]));
    }
    if matches!(arg0.as_str(), "node" | "nodejs" | "bun") {
        // The npm shim either `execve`s into the vendor binary (then this process is gone or about
        // to be renamed) or spawns it as a child that is recognised on its own. Either way the shim
        // is not the session, or a session would be counted twice.
        let script = process.cmd[1..].iter().find(|arg| !arg.starts_with('-'))?;
        return is_codex_script(script).then_some(helper());
    }
    // Codex re-executes itself under other names (`codex-linux-sandbox`, `apply_patch`): the
    // executable is Codex but the process is one of its tools, never a session.
    let exe = program_name(process.exe.as_deref()?);
    is_codex_program(&exe).then_some(helper())
}

/// `codex`, or a release binary still named after its target, like `codex-x86_64-unknown-linux-musl`.
fn is_codex_program(name: &str) -> bool {
    name == "codex"
        || name
            .strip_prefix("codex-")
            .is_some_and(|triple| triple.starts_with("x86_64-") || triple.starts_with("aarch64-"))
}

/// The shim script: `…/@openai/codex/bin/codex.js`, or the `codex` link npm puts on the PATH,
/// which the shebang hands to node as the script path.
fn is_codex_script(script: &str) -> bool {
    let path = script.replace('\\', "/").to_ascii_lowercase();
    program_name(&path) == "codex" || path.ends_with("/codex/bin/codex.js")
}

fn helper() -> AgentProcess {
    AgentProcess {
        agent: KIND,
        role: ProcessRole::Helper,
        folder_arg: None,
        session_arg: None,
    }
}

/// Options of the `codex` command line (top level and `exec`) that take a separate value, so the
/// value is not mistaken for a subcommand or a prompt.
const VALUE_OPTIONS: [&str; 20] = [
    "-c",
    "--config",
    "--enable",
    "--disable",
    "-i",
    "--image",
    "-m",
    "--model",
    "--local-provider",
    "-p",
    "--profile",
    "-s",
    "--sandbox",
    "-a",
    "--ask-for-approval",
    "--add-dir",
    "-o",
    "--output-last-message",
    "--output-schema",
    "--color",
];

/// Subcommands that run something other than a session.
const HELPER_SUBCOMMANDS: [&str; 16] = [
    "login",
    "logout",
    "mcp",
    "mcp-server",
    "completion",
    "sandbox",
    "debug",
    "apply",
    "a",
    "cloud",
    "features",
    "help",
    "responses-api-proxy",
    "stdio-to-uds",
    "generate-ts",
    "generate-json-schema",
];

/// Reads the arguments after the program name.
fn classify(args: &[String]) -> AgentProcess {
    let mut folder_arg = None;
    let mut asks_help = false;
    let mut positionals: Vec<&str> = Vec::new();
    let mut idx = 0;
    while idx < args.len() {
        let arg = args[idx].as_str();
        if arg == "--" {
            break;
        }
        if arg == "-C" || arg == "--cd" {
            folder_arg = args.get(idx + 1).cloned();
            idx += 1;
        } else if let Some(dir) = arg.strip_prefix("--cd=") {
            folder_arg = Some(dir.to_owned());
        } else if let Some(dir) = arg.strip_prefix("-C").filter(|dir| !dir.is_empty()) {
            folder_arg = Some(dir.strip_prefix('=').unwrap_or(dir).to_owned());
        } else if matches!(arg, "-h" | "--help" | "-V" | "--version") {
            asks_help = true;
        } else if VALUE_OPTIONS.contains(&arg) {
            idx += 1;
        } else if !arg.starts_with('-') {
            positionals.push(arg);
        }
        idx += 1;
    }
    let uuid_at = |pos: usize| {
        positionals
            .get(pos)
            .filter(|text| crate::agents::is_uuid(text))
            .map(|text| (*text).to_owned())
    };
    let (role, session_arg) = match positionals.first().copied() {
        _ if asks_help => (ProcessRole::Helper, None),
        Some("app-server") => (ProcessRole::Daemon, None),
        Some("exec" | "e") => {
            // `codex exec resume <id>` continues a session in print mode.
            let resumed = positionals.get(1) == Some(&"resume");
            (ProcessRole::Print, if resumed { uuid_at(2) } else { None })
        }
        Some("review") => (ProcessRole::Print, None),
        Some("resume" | "fork") => (ProcessRole::Interactive, uuid_at(1)),
        Some(sub) if HELPER_SUBCOMMANDS.contains(&sub) => (ProcessRole::Helper, None),
        // No subcommand, or a prompt: the TUI.
        _ => (ProcessRole::Interactive, None),
    };
    AgentProcess {
        agent: KIND,
        role,
        folder_arg,
        session_arg,
    }
}
