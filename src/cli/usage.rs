//! `slate usage [--by session|project|agent|day] [--since …] [--json]`: what the sessions' model
//! calls used and what that cost, summed by session, project, agent or day, live and closed.
//!
//! The sums are `policy::usage`'s; every cost says whether it is `reported`, an `estimate` (a
//! floor, "≥ $x", when some tokens have no price) or `unknown`, and the price table's date and
//! sources are printed with it: an estimate is never a bill. The sessions are those `slate
//! sessions --all` lists (the running Slate's live list with this process's read of the history,
//! or this process's own read), each counted toward the UTC day of its last activity, and the
//! totals the store kept of sessions no longer read (`store::usage`).

use std::collections::HashSet;
use std::io::Write;
use std::process::ExitCode;

use anyhow::bail;

use slate::model::{Session, SessionKey, Timestamp};
use slate::policy::usage::{cost_text, since, summarize, tokens_text, By, Item, Row};
use slate::usage::prices::Table;

use super::setup::{engine_json, sessions_from_server, with_history, Context};

pub fn run(
    context: &Context,
    by: &str,
    since_text: Option<&str>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let Some(by) = By::parse(by) else {
        bail!("--by {by:?} is not a grouping: session, project, agent or day");
    };
    let since = since_text
        .map(|text| since(text, context.now))
        .transpose()
        .map_err(|err| anyhow::anyhow!("--since {err}"))?;
    let mut options = context.options()?;
    options.scan.closed_detail = true;
    let server = context.reading_server();
    let engine = context.engine(options, !context.replayed_at)?;
    let sessions = match server
        .as_ref()
        .and_then(|server| Some((server, sessions_from_server(&server.client)?)))
    {
        Some((server, live)) => with_history(&server.client, live, engine.sessions()),
        None => engine.sessions(),
    };
    let after = |at: Option<Timestamp>| since.is_none_or(|since| at.is_some_and(|at| at >= since));
    let sessions: Vec<Session> = sessions
        .into_iter()
        .filter(|session| session.machine.is_none() && after(session.row_time))
        .collect();
    // The store keeps the totals of sessions no longer read (their transcript gone, or off the
    // list): those count too, once.
    let read: HashSet<SessionKey> = sessions.iter().map(Session::key).collect();
    let stored = match context.setup.has_store() {
        true => context.setup.open_store()?.usages()?,
        false => Vec::new(),
    };
    let kept = stored
        .iter()
        .filter(|row| !read.contains(&row.key) && after(Some(row.at)))
        .map(|row| Item {
            id: row.key.id.as_str(),
            project: row.project.as_deref(),
            agent: row.key.agent.as_str(),
            at: Some(row.at),
            usage: Some(&row.usage),
        });
    let (rows, total) = summarize(sessions.iter().map(Item::from).chain(kept), by);
    let table = Table::shipped();
    let mut out = std::io::stdout().lock();
    if json {
        let body = serde_json::json!({
            "by": by,
            "since": since,
            "rows": rows,
            "total": total,
            "prices": {"date": table.date, "sources": table.sources},
            "engine": engine_json(server.as_ref()),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&body)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    write!(out, "{}", text(&rows, &total, by, &table.date))?;
    Ok(ExitCode::SUCCESS)
}

/// The table `slate usage` prints.
fn text(rows: &[Row], total: &Row, by: By, date: &str) -> String {
    let head = match by {
        By::Session => "SESSION",
        By::Project => "PROJECT",
        By::Agent => "AGENT",
        By::Day => "DAY (UTC)",
    };
    let mut out = format!(
        "{head:<38} {:>8} {:>9} {:>9} {:>10} {:>11}  COST\n",
        "SESSIONS", "INPUT", "OUTPUT", "CACHE RD", "CACHE WR"
    );
    let mut line = |row: &Row, key: &str| {
        let cost = if row.sessions == row.not_recorded {
            "not recorded".to_owned()
        } else {
            let mut cost = cost_text(row.cost_usd, row.cost_basis, row.unpriced_tokens);
            if row.not_recorded > 0 {
                cost.push_str(&format!(", {} not recorded", row.not_recorded));
            }
            cost
        };
        let key: String = slate::report::terminal_text(key).chars().take(38).collect();
        out.push_str(&format!(
            "{key:<38} {:>8} {:>9} {:>9} {:>10} {:>11}  {cost}\n",
            row.sessions,
            tokens_text(row.input_tokens),
            tokens_text(row.output_tokens),
            tokens_text(row.cache_read_tokens),
            tokens_text(row.cache_write_tokens),
        ));
    };
    for row in rows {
        line(row, &row.key);
    }
    line(total, "total");
    out.push_str(&format!(
        "Estimates are tokens times the price table of {date} (or your [prices]); not a bill.\n"
    ));
    if total.is_partial() {
        out.push_str(&format!(
            "≥: {} tokens have no price and are left out.\n",
            tokens_text(total.unpriced_tokens)
        ));
    }
    out
}
