//! Recognising a Claude Code process (docs/formats.md §1.5): the native binary, npm's
//! `claude.exe`, the legacy `cli.js` under node, or a process that titled itself `claude`; its
//! role (`claude daemon`, helper subcommands, print mode) and the session it names.

use super::KIND;
use crate::agents::{program_name, AgentProcess, ProcessRole};
use crate::model::ProcessInfo;

/// Recognises a Claude Code process (docs/formats.md §1.5): the native binary (`claude`, or a
/// versioned file under `.local/share/claude/versions/`), npm's `bin/claude.exe`, the legacy
/// `node …/@anthropic-ai/claude-code/cli.js`, or any process that titled itself `claude`.
/// Programs that merely mention Claude in an argument (`vim notes-about-claude.md`) are not it.
pub fn recognise(process: &ProcessInfo) -> Option<AgentProcess> {
    let args = claude_args(process)?;
    let subcommand = args.first().map(String::as_str);
    let role = match subcommand {
        Some("daemon" | "daemon-worker") => ProcessRole::Daemon,
        Some(
            "agents" | "mcp" | "config" | "doctor" | "update" | "upgrade" | "install"
            | "setup-token" | "plugin" | "plugins" | "migrate-installer" | "auth" | "login"
            | "logout",
        ) => ProcessRole::Helper,
        _ if args.iter().any(|arg| arg == "-p" || arg == "--print") => ProcessRole::Print,
        _ => ProcessRole::Interactive,
    };
    Some(AgentProcess {
        agent: KIND,
        role,
        folder_arg: None,
        session_arg: session_arg(&args),
    })
}

/// The arguments after the program (or after the `cli.js` script), when the process is Claude
/// Code at all.
fn claude_args(process: &ProcessInfo) -> Option<Vec<String>> {
    let argv0 = process.cmd.first().map(String::as_str).unwrap_or("");
    // `process.title = "claude daemon"` can leave the whole title in argv[0].
    let mut title_words = argv0.split_whitespace();
    if title_words.next().map(program_name).as_deref() == Some("claude") {
        let mut args: Vec<String> = title_words.map(str::to_owned).collect();
        args.extend(process.cmd.iter().skip(1).cloned());
        return Some(args);
    }
    if is_node(argv0) || process.exe.as_deref().is_some_and(is_node) {
        // The script is the first argument that is not a node option.
        let script_idx = process
            .cmd
            .iter()
            .skip(1)
            .position(|arg| !arg.starts_with('-'))?
            + 1;
        let script = process.cmd[script_idx].replace('\\', "/");
        return script
            .ends_with("@anthropic-ai/claude-code/cli.js")
            .then(|| process.cmd[script_idx + 1..].to_vec());
    }
    let exe_is_claude = process.exe.as_deref().is_some_and(|exe| {
        program_name(exe) == "claude" || exe.replace('\\', "/").contains("/claude/versions/")
    });
    if exe_is_claude || program_name(&process.name) == "claude" {
        return Some(process.cmd.iter().skip(1).cloned().collect());
    }
    None
}

fn is_node(path: &str) -> bool {
    matches!(program_name(path).as_str(), "node" | "nodejs")
}

/// The session named by `--resume <id>`, `-r <id>` or `--session-id <id>` (also `--flag=<id>`).
/// `--resume` without an id opens a picker, and the next argument is then a prompt or another
/// flag, so only a session UUID counts.
fn session_arg(args: &[String]) -> Option<String> {
    const FLAGS: [&str; 3] = ["--resume", "-r", "--session-id"];
    for (arg_idx, arg) in args.iter().enumerate() {
        let value = if FLAGS.contains(&arg.as_str()) {
            args.get(arg_idx + 1).map(String::as_str)
        } else {
            FLAGS.iter().find_map(|flag| {
                arg.strip_prefix(flag)
                    .and_then(|rest| rest.strip_prefix('='))
            })
        };
        if let Some(value) = value.filter(|value| crate::agents::is_uuid(value)) {
            return Some(value.to_owned());
        }
    }
    None
}
