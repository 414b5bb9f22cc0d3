//! `slate doctor`: where Slate looked for each agent, which processes it matched to which
//! sessions, how each live session's terminal is seen (or why it is not) with the evidence of its
//! state, and the problems it counted; per agent, whether Slate's hooks are installed and when
//! one last fired; with remote machines configured, how each link stands.

use std::io::Write;
use std::process::ExitCode;

use slate::engine::Engine;
use slate::model::Status;
use slate::report;

use super::remote;
use super::setup::{server_unless_standalone, Context};

pub fn run(context: &Context) -> anyhow::Result<ExitCode> {
    let setup = &context.setup;
    let engine = context.engine(context.options()?, !context.replayed_at)?;
    let mut out = std::io::stdout().lock();
    write!(out, "{}", report::terminal_text(&doctor(&engine)))?;
    let hooks = slate::hooks::status(
        slate::agents::BUILT_IN,
        &setup.env,
        setup.places.as_ref().ok(),
    );
    writeln!(out, "\nAgent hooks (slate hooks status):")?;
    write!(
        out,
        "{}",
        report::terminal_text(&super::hooks::text(&hooks))
    )?;
    if !setup.config.remotes.is_empty() {
        let server = server_unless_standalone(setup);
        let client = server.as_ref().map(|server| &server.client);
        let (reports, from) = remote::reports(setup, client, context.now);
        write!(out, "{}", remote::doctor(&reports, &from, context.now))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The report: agent folders, agent processes, sessions with their terminals and evidence, and
/// the problems counted.
fn doctor(engine: &Engine) -> String {
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
        let terminal = match &session.terminal {
            Some(terminal) => terminal.describe(),
            None => "unknown (no live process vouches for it)".to_string(),
        };
        let _ = writeln!(out, "      terminal: {terminal}");
        for fact in engine.evidence(&key) {
            let _ = writeln!(out, "      - {fact}");
        }
    }
    let _ = writeln!(out, "\nAgent versions (live sessions; checked against):");
    let versions = slate::agents::versions::report(engine.registry(), &sessions);
    for agent in versions
        .iter()
        .filter(|agent| !agent.seen.is_empty() || !agent.recorded.is_empty())
    {
        let seen = if agent.seen.is_empty() {
            "no live session names one".to_string()
        } else {
            agent.seen.join(", ")
        };
        let recorded = if agent.recorded.is_empty() {
            "none: it cannot run here".to_string()
        } else {
            agent.recorded.join(", ")
        };
        let warning = if agent.newer_than_recorded {
            " — newer than recorded: its format may have changed"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  {:<13} {seen}; checked against {recorded}{warning}",
            agent.agent.display_name()
        );
    }
    let problems = engine.problems();
    let _ = writeln!(out, "\nProblems: {}", problems.total());
    for (kind, count) in &problems.counts {
        let _ = writeln!(out, "  {kind}: {count}");
    }
    for problem in problems.recent.iter().rev().take(10) {
        let _ = writeln!(out, "    {} — {}", problem.place, problem.detail);
    }
    out
}
