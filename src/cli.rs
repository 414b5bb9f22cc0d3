//! The `slate` command line: argument parsing and the commands that print.
//!
//! This module belongs to the binary, not the library: it reads the environment and the clock,
//! runs the engine, and prints what `report` renders. It holds no rule of its own.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use slate::engine::{Engine, Options, ProcessSource};
use slate::model::{Session, Status, Timestamp};
use slate::report;
use slate::sources::files::Env;
use slate::sources::processes;

mod serve;

/// Slate watches every AI coding-agent session on this machine and tells you which ones need you.
#[derive(Debug, Parser)]
#[command(name = "slate", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Decide states as of this RFC 3339 time instead of now (for replaying recordings).
    #[arg(long, global = true, hide = true, value_name = "TIME")]
    now: Option<String>,
    /// Use a recorded process table (a `processes.json` of a fixture recording) instead of
    /// scanning the live one.
    #[arg(long, global = true, hide = true, value_name = "FILE")]
    processes: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List live sessions, Needs you first.
    Sessions {
        /// Print `{"sessions":[…]}` instead of a table.
        #[arg(long)]
        json: bool,
        /// Include closed sessions.
        #[arg(long)]
        all: bool,
    },
    /// Show one session and the evidence that decided its state.
    Show {
        /// A session id, or a unique prefix of one.
        id: String,
        /// Print `{"session":{…}}` instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show where Slate looked, which processes it matched, and the problems it counted.
    Doctor,
    /// Serve the live list over HTTP on loopback until Ctrl-C.
    Serve {
        /// The loopback address to listen on (default: the config's `[server] listen`,
        /// 127.0.0.1:7411); port 0 picks a free port.
        #[arg(long, value_name = "ADDRESS")]
        listen: Option<String>,
    },
    /// Print each change of the live list as it happens, from a running `slate serve` or, when
    /// none answers, from an engine of its own.
    Watch {
        /// Print one JSON object per event (NDJSON) instead of text.
        #[arg(long)]
        json: bool,
        /// The address of the server to follow (default: the config's `[server] listen`).
        #[arg(long, value_name = "ADDRESS")]
        listen: Option<String>,
    },
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let now = match &cli.now {
        Some(text) => Timestamp::parse_rfc3339(text)
            .with_context(|| format!("--now {text:?} is not an RFC 3339 time"))?,
        None => slate::live::system_clock(),
    };
    let mut options = Options::from_env(Env::from_process());
    if let Some(path) = &cli.processes {
        let table = processes::load_table(path)
            .with_context(|| format!("cannot read the process table {}", path.display()))?;
        options.processes = ProcessSource::Recorded(table);
    }
    match cli.command {
        Command::Serve { listen } => return serve::serve(listen.as_deref(), options),
        Command::Watch { json, listen } => {
            return serve::watch(listen.as_deref(), json, options);
        }
        _ => {}
    }
    let mut engine = Engine::new(options);
    engine.refresh(now);
    let mut out = std::io::stdout().lock();
    match cli.command {
        Command::Sessions { json, all } => {
            let mut sessions: Vec<Session> = engine
                .sessions()
                .into_iter()
                .filter(|session| all || session.status != Status::Ended)
                .collect();
            report::sort_for_display(&mut sessions);
            if json {
                let body = serde_json::json!({ "sessions": sessions });
                writeln!(out, "{}", serde_json::to_string_pretty(&body)?)?;
            } else {
                write!(out, "{}", report::table(&sessions, now))?;
            }
        }
        Command::Show { id, json } => {
            let session = engine.find(&id)?;
            let key = slate::model::SessionKey::new(session.agent, session.id.as_str());
            let evidence = engine.evidence(&key);
            if json {
                let mut value = serde_json::to_value(session)?;
                value["evidence"] = serde_json::json!(evidence);
                let body = serde_json::json!({ "session": value });
                writeln!(out, "{}", serde_json::to_string_pretty(&body)?)?;
            } else {
                write!(out, "{}", report::show(session, &evidence, now))?;
            }
        }
        Command::Doctor => write!(out, "{}", doctor(&engine, now))?,
        Command::Serve { .. } | Command::Watch { .. } => {}
    }
    Ok(ExitCode::SUCCESS)
}

fn doctor(engine: &Engine, now: Timestamp) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "Agent folders:");
    for root in engine.roots() {
        let found = if root.found { "found" } else { "not found" };
        let _ = writeln!(
            out,
            "  {:<13} {} ({found})",
            root.agent.display_name(),
            root.path.display()
        );
    }
    let sessions = engine.sessions();
    let _ = writeln!(out, "\nAgent processes:");
    if engine.processes().is_empty() {
        let _ = writeln!(out, "  none running");
    }
    for process in engine.processes() {
        let vouches: Vec<&str> = sessions
            .iter()
            .filter(|session| session.pid == Some(process.info.pid))
            .map(|session| session.id.as_str())
            .collect();
        let _ = writeln!(
            out,
            "  pid {:<7} {:<12} {:<11} {} → {}",
            process.info.pid,
            process.recognised.agent.display_name(),
            format!("{:?}", process.recognised.role).to_lowercase(),
            process.folder.as_deref().unwrap_or("?"),
            if vouches.is_empty() {
                "no session".to_string()
            } else {
                vouches.join(", ")
            }
        );
    }
    let count = |status| sessions.iter().filter(|s| s.status == status).count();
    let _ = writeln!(
        out,
        "\nSessions: {} needs you, {} working, {} closed",
        count(Status::Waiting),
        count(Status::Working),
        count(Status::Ended)
    );
    for session in sessions.iter().filter(|s| s.status != Status::Ended) {
        let key = slate::model::SessionKey::new(session.agent, session.id.as_str());
        let _ = writeln!(
            out,
            "  {} {} — {} ({})",
            session.agent,
            session.id,
            session.status.label(),
            session.session_state.reason.text
        );
        for fact in engine.evidence(&key) {
            let _ = writeln!(out, "      - {fact}");
        }
    }
    let problems = engine.problems();
    let _ = writeln!(out, "\nProblems: {}", problems.total());
    for (kind, count) in &problems.counts {
        let _ = writeln!(out, "  {kind}: {count}");
    }
    for problem in problems.recent.iter().rev().take(10) {
        let _ = writeln!(out, "    {} — {}", problem.place, problem.detail);
    }
    let _ = now;
    out
}
