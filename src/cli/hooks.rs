//! `slate hooks install|remove|status`: Slate's hooks in the agents' own configurations, opt-in
//! and observe-only (docs/hooks.md); and `slate hook AGENT EVENT`, the command those hooks run,
//! which `main` starts before anything else so it keeps its 250 ms (`hooks::run_hook`).
//!
//! The files are read and written by `slate::hooks`; this module picks the agents, says what
//! was done, where the backup is, whether a file Slate had created was deleted and, for an agent
//! that asks for it, how to trust the new hooks.

use std::io::Write;
use std::process::ExitCode;

use clap::Subcommand;
use slate::agents::description::Description;
use slate::agents::BUILT_IN;
use slate::hooks::{self, AgentHooks};

use super::setup::Context;

#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// Add Slate's hooks to the agents' own hook configurations (all agents that have hooks, or
    /// the ones named). A backup of each file it changes is written first (one a file, beside
    /// it); installing twice changes nothing.
    Install {
        /// Agents by id (claude-code, codex, gemini-cli, opencode, cursor-agent).
        agents: Vec<String>,
        /// Also install the decision hook, which lets Slate answer the agent's permission
        /// dialog through the hook (Claude Code only: docs/hooks.md says why).
        #[arg(long)]
        answer: bool,
    },
    /// Take Slate's hooks out again, leaving everything else as it was: only entries exactly as
    /// Slate wrote them go, and only a file Slate created is deleted.
    Remove {
        agents: Vec<String>,
        /// Take out only the decision hook, and leave the observing ones.
        #[arg(long)]
        answer: bool,
    },
    /// Say, per agent, where its hook configuration is, which of Slate's hooks are installed and
    /// when one last fired.
    Status {
        /// Print `{"agents":[…]}` instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(context: &Context, command: &HooksCommand) -> anyhow::Result<ExitCode> {
    let setup = &context.setup;
    let env = &setup.env;
    let mut out = std::io::stdout().lock();
    match command {
        HooksCommand::Status { json } => {
            let places = setup.places.as_ref().ok();
            let status = hooks::status(BUILT_IN, env, places);
            if *json {
                writeln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({ "agents": status }))?
                )?;
            } else {
                write!(out, "{}", slate::report::terminal_text(&text(&status)))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        HooksCommand::Install { agents, answer } | HooksCommand::Remove { agents, answer } => {
            let mut chosen = choose(agents)?;
            if *answer {
                // Only where the agent's dialog stays usable while its hook waits.
                let (deciding, not): (Vec<_>, Vec<_>) = chosen
                    .into_iter()
                    .partition(|d| slate::agents::hooks::decision::decides(d.id).is_some());
                if !agents.is_empty() && !not.is_empty() {
                    let names: Vec<&str> = not.iter().map(|d| d.product).collect();
                    anyhow::bail!(
                        "no decision hook for {}: its dialog would not stay usable while a hook \
                         waits (docs/hooks.md), so Slate only observes it",
                        names.join(", ")
                    );
                }
                chosen = deciding;
            }
            let installing = matches!(command, HooksCommand::Install { .. });
            let program = hooks::this_program()?;
            let places = setup
                .places
                .as_ref()
                .map_err(|err| anyhow::anyhow!("cannot find Slate's data folder: {err}"))?;
            let mut failed = false;
            for description in chosen {
                let done = if *answer {
                    hooks::answering(description, env, places, &program, installing)
                } else if installing {
                    hooks::install(description, env, places, &program)
                } else {
                    hooks::remove(description, env, places, &program)
                };
                match done {
                    Ok(changed) => {
                        let what = match (changed.changed, installing) {
                            (false, true) => "already installed in",
                            (false, false) => "none to remove in",
                            (true, true) => "installed in",
                            (true, false) => "removed from",
                        };
                        writeln!(
                            out,
                            "{}: hooks {what} {}",
                            description.product,
                            changed.path.display()
                        )?;
                        if changed.deleted {
                            writeln!(
                                out,
                                "  Slate had created it, and it held nothing else: deleted"
                            )?;
                        }
                        if let Some(backup) = &changed.backup {
                            writeln!(out, "  the file as it was: {}", backup.display())?;
                        }
                        if let (true, true, Some(trust)) =
                            (installing, changed.changed, &changed.trust)
                        {
                            writeln!(out, "  {trust}")?;
                        }
                    }
                    Err(err) => {
                        failed = true;
                        eprintln!("slate: {}: {err}", description.product);
                    }
                }
            }
            Ok(if failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

/// The agents named (all that have hooks when none is), or an error naming what is unknown.
fn choose(names: &[String]) -> anyhow::Result<Vec<&'static Description>> {
    let with_hooks: Vec<&'static Description> = hooks::agents(BUILT_IN)
        .map(|(description, _)| description)
        .collect();
    if names.is_empty() {
        return Ok(with_hooks);
    }
    names
        .iter()
        .map(|name| {
            with_hooks
                .iter()
                .find(|description| description.id == name || description.name == name)
                .copied()
                .ok_or_else(|| {
                    let known: Vec<&str> = with_hooks.iter().map(|d| d.id).collect();
                    anyhow::anyhow!(
                        "no agent with hooks is called {name:?} (known: {})",
                        known.join(", ")
                    )
                })
        })
        .collect()
}

/// The status as text, one block per agent; `slate doctor` prints it too.
pub fn text(status: &[AgentHooks]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for agent in status {
        let state = match (&agent.error, agent.installed.len(), agent.missing.len()) {
            (Some(error), _, _) => format!("cannot be read: {error}"),
            (None, 0, _) => "not installed".to_string(),
            (None, _, 0) => "installed".to_string(),
            (None, _, _) => format!("partly installed (missing: {})", agent.missing.join(", ")),
        };
        let _ = writeln!(out, "  {:<13} hooks {state}", agent.product);
        if let Some(path) = &agent.path {
            let _ = writeln!(out, "      config: {}", path.display());
        }
        if agent.answers {
            let _ = writeln!(
                out,
                "      decision hook installed: Slate can answer its permission dialogs"
            );
        }
        if let Some(last) = &agent.last_fired {
            let _ = writeln!(out, "      last fired: {last}");
        }
        if agent.verified == slate::agents::hooks::Verified::Documentation {
            let _ = writeln!(
                out,
                "      events from its documentation only (it cannot run where Slate is tested)"
            );
        }
    }
    out
}
