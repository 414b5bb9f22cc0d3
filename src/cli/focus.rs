//! `slate focus <id> [--dry-run]`: brings the terminal that hosts a session to the front, or, with
//! `--dry-run`, prints the plan. The plan is the library's (`focus::plan`); when it cannot be sure
//! which window shows the session, the command fails with the reason. A remote session is
//! focused through its own machine (`remote::attach`), never by a local pid.

use std::io::Write;
use std::process::ExitCode;

use slate::focus::{self, strategy::Plan};
use slate::model::Session;
use slate::report;

use super::remote;
use super::setup::{find_session, Context};

pub fn run(context: &Context, id: &str, dry_run: bool) -> anyhow::Result<ExitCode> {
    let options = context.options()?;
    let server = context.reading_server();
    if let Some((entry, rest)) = remote::reference(&context.setup.config, id) {
        return remote::focus(entry, rest, dry_run, &mut std::io::stdout().lock());
    }
    let engine = context.engine(options, false)?;
    let served = server.as_ref().map(|server| &server.client);
    let (session, _) = find_session(&engine, served, id)?;
    focus(&session, dry_run, &mut std::io::stdout().lock())
}

/// Plans, then runs the plan unless `dry_run`. Unsure is a failure with its reason.
fn focus(session: &Session, dry_run: bool, out: &mut impl Write) -> anyhow::Result<ExitCode> {
    let plan = focus::plan(session.pid);
    if dry_run {
        match &plan {
            Plan::Run { steps, caveat } => {
                for step in steps {
                    writeln!(out, "{}", report::terminal_text(&step.to_string()))?;
                }
                if let Some(caveat) = caveat {
                    writeln!(out, "note: {}", report::terminal_text(caveat))?;
                }
            }
            Plan::Unsure { reason } => {
                let reason = report::terminal_text(reason);
                eprintln!("slate: not sure which window shows the session: {reason}");
                return Ok(ExitCode::FAILURE);
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    match focus::execute(&plan) {
        Ok(outcome) => {
            for step in &outcome.done {
                writeln!(out, "ran: {}", report::terminal_text(&step.to_string()))?;
            }
            if let Some(caveat) = &outcome.caveat {
                writeln!(out, "note: {}", report::terminal_text(caveat))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => {
            eprintln!("slate: {err}");
            Ok(ExitCode::FAILURE)
        }
    }
}
