//! `slate sessions`: the live list (or, with `--all`, the history too; with `--reclaimable`, what
//! automatic cleanup may reclaim), Needs you first, as a table or as JSON.
//!
//! With this HOME's Slate running, the live list is the server's; `--all` and `--reclaimable`
//! add the closed history this process reads (`setup::with_history`). Without one, this process
//! reads the disk and the panes once, and asks each remote machine once, in parallel, meanwhile.

use std::io::Write;
use std::process::ExitCode;

use slate::model::{Problem, Session, Timestamp};
use slate::{policy, report, settings};

use super::remote;
use super::setup::{engine_json, sessions_from_server, with_history, Context, Server};

/// What a list of sessions is, besides its sessions: which were asked for, which engine
/// answered, the places this process could not read (`None` when it read none itself), and, with
/// remote machines configured, how each answered (`None` without any).
struct Listing<'a> {
    listed: report::Listed,
    server: Option<&'a Server>,
    unread: Option<Vec<&'a Problem>>,
    remotes: Option<&'a [slate::remote::Report]>,
}

pub fn run(
    context: &Context,
    json: bool,
    all: bool,
    reclaimable: bool,
) -> anyhow::Result<ExitCode> {
    let setup = &context.setup;
    let mut options = context.options()?;
    // Closed sessions are known without reading their transcripts; when a person asks for them,
    // their head and tail are read for a title, a folder and a last prompt.
    options.scan.closed_detail = all;
    let server = context.reading_server();
    let has_remotes = !setup.config.remotes.is_empty();
    if let (Some(server), false, false) = (&server, all, reclaimable) {
        if let Some(sessions) = sessions_from_server(&server.client) {
            let remotes =
                has_remotes.then(|| remote::served_reports(&server.client).unwrap_or_default());
            let listing = Listing {
                listed: report::Listed::Live,
                server: Some(server),
                unread: None,
                remotes: remotes.as_deref(),
            };
            print_sessions(sessions, json, context.now, &listing)?;
            return Ok(ExitCode::SUCCESS);
        }
    }
    // Without a running Slate, the remotes are asked once, while this machine is read.
    let asked = match &server {
        None => remote::Asked::start(&setup.config),
        Some(_) => None,
    };
    let now = context.now;
    let engine = context.engine(options, !context.replayed_at)?;
    let reclaim_after = settings::reclaim_after(&setup.config);
    let (mut sessions, from) = match &server {
        Some(server) => match sessions_from_server(&server.client) {
            Some(live) => (
                with_history(&server.client, live, engine.sessions()),
                Some(server),
            ),
            None => (engine.sessions(), None),
        },
        None => (engine.sessions(), None),
    };
    let remotes = match (asked, &server) {
        (Some(asked), _) => {
            let asked = remote::Asked::finish(&setup.config, asked, now);
            sessions.extend(asked.sessions);
            Some(asked.reports)
        }
        (None, Some(server)) if has_remotes => {
            Some(remote::served_reports(&server.client).unwrap_or_default())
        }
        _ => None,
    };
    let unread = report::unread(&engine.problems().recent);
    let mut sessions: Vec<Session> = sessions
        .into_iter()
        .filter(|session| {
            if reclaimable {
                session.session_state.custody.reclaimable
            } else {
                all || policy::on_live_list(session, now, reclaim_after)
            }
        })
        .collect();
    if reclaimable && !json {
        report::sort_for_display(&mut sessions);
        let mut out = std::io::stdout().lock();
        write!(out, "{}", report::reclaimable(&sessions, now, &unread))?;
    } else {
        let listing = Listing {
            listed: if all {
                report::Listed::All
            } else {
                report::Listed::Live
            },
            server: from,
            unread: Some(unread),
            remotes: remotes.as_deref(),
        };
        print_sessions(sessions, json, now, &listing)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints sessions as the `slate sessions` table or as `{"sessions":[…], "engine":{…}}` (with
/// `"unread"`, the places this process could not read, when it read the disk itself), Needs you
/// first. With remote machines configured, the table has a MACHINE column and names each remote
/// that did not answer, and the JSON adds `"remotes"` (as `slate remote list --json` says them).
fn print_sessions(
    mut sessions: Vec<Session>,
    json: bool,
    now: Timestamp,
    listing: &Listing,
) -> anyhow::Result<()> {
    report::sort_for_display(&mut sessions);
    let unread = listing.unread.as_deref().unwrap_or_default();
    let mut out = std::io::stdout().lock();
    if json {
        let mut body = serde_json::json!({
            "sessions": sessions,
            "engine": engine_json(listing.server),
        });
        if listing.unread.is_some() {
            body["unread"] = serde_json::to_value(unread)?;
        }
        if let Some(remotes) = listing.remotes {
            body["remotes"] = serde_json::to_value(remotes)?;
        }
        writeln!(out, "{}", serde_json::to_string_pretty(&body)?)?;
    } else {
        let machines =
            listing.remotes.is_some() || sessions.iter().any(|session| session.machine.is_some());
        let table = report::table_with(&sessions, now, listing.listed, unread, machines);
        write!(out, "{table}")?;
        for remote in listing.remotes.unwrap_or_default() {
            if remote.status == slate::remote::Status::Unreachable {
                let error = remote.error.as_deref().unwrap_or("no answer");
                let line = format!("{}: unreachable ({error})", remote.name);
                writeln!(out, "{}", report::terminal_text(&line))?;
            }
        }
        if let Some(server) = listing.server {
            writeln!(
                out,
                "(from the Slate running at {})",
                server.client.address()
            )?;
        }
    }
    Ok(())
}
