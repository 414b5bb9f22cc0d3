//! `slate doctor`: where Slate looked for each agent, which processes it matched to which
//! sessions, how each live session's terminal is seen (or why it is not), where a click would
//! take the person (or why nowhere) and whether its terminal is in front, with the evidence of its
//! state, and the problems it counted; per agent, whether Slate's hooks are installed and when
//! one last fired; with remote machines configured, how each link stands.

use std::io::Write;
use std::process::ExitCode;

use slate::engine::Engine;
use slate::model::{Session, Status, UnreadKind, UnreadRecords};
use slate::report;
use slate::terminals::accessibility;

use super::remote;
use super::setup::{find_session, server_unless_standalone, sessions_from_server, Context};

pub fn run(context: &Context) -> anyhow::Result<ExitCode> {
    let setup = &context.setup;
    // A running Slate has watched the terminals' screens over time, which this process, reading
    // them once, cannot: what it counted of screens it could not read is taken from it.
    let served = context
        .reading_server()
        .and_then(|server| sessions_from_server(&server.client))
        .unwrap_or_default();
    let engine = context.engine(context.options()?, !context.replayed_at)?;
    let mut out = std::io::stdout().lock();
    write!(out, "{}", report::terminal_text(&doctor(&engine, &served)))?;
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
/// the problems counted. A session the running Slate holds too (`served`) counts the records and
/// screens it could not read.
fn doctor(engine: &Engine, served: &[Session]) -> String {
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
    let mut sessions = engine.sessions();
    for session in &mut sessions {
        let held = served
            .iter()
            .find(|held| held.machine.is_none() && held.key() == session.key());
        if let Some(unread) = held.and_then(|held| held.unread.clone()) {
            session.unread = Some(unread);
        }
    }
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
    // Where each session in a plain terminal could be read on the accessibility bus, so that two
    // sessions of one agent in one terminal application are known to share its tabs.
    let places: Vec<(slate::model::SessionKey, u32)> = sessions
        .iter()
        .filter(|s| s.status != Status::Ended && engine.scans_live_processes())
        .filter_map(|s| {
            let key = slate::model::SessionKey::new(s.agent, s.id.as_str());
            Some((key, accessibility::place_of(s.pid?)?.app))
        })
        .collect();
    let calls = engine.tracker().open_calls();
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
        // Where a click would take the person, and whether they look at it now: only for real
        // processes (a replayed table's pids are not this machine's).
        if let Some(pid) = session.pid.filter(|_| engine.scans_live_processes()) {
            let _ = writeln!(out, "      focus: {}", focus_line(pid));
            let desktop = session.terminal.as_ref().is_some_and(|terminal| {
                use slate::model::TerminalKind::{Accessibility, Plain};
                matches!(terminal.kind, Plain | Accessibility)
            });
            if desktop {
                let _ = writeln!(
                    out,
                    "      accessibility: {}",
                    accessibility_line(pid, &key, &calls, &places)
                );
            }
        }
        for fact in engine.evidence(&key) {
            let _ = writeln!(out, "      - {fact}");
        }
        if let Some(unread) = &session.unread {
            let _ = writeln!(
                out,
                "      - {} (`slate doctor --sample {}`)",
                unread.summary(),
                session.id
            );
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
        for count in &agent.unread {
            let sessions = if count.sessions == 1 {
                "session"
            } else {
                "sessions"
            };
            let _ = writeln!(
                out,
                "  {:<13} {} Slate could not read, in {} {sessions} of {}: its format may have \
                 changed",
                "",
                UnreadRecords::counted(count.records, count.screens),
                count.sessions,
                count.version.as_deref().unwrap_or("an unnamed version")
            );
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
    out
}

/// Whether the terminal of process `pid`, a session of `agent` in a terminal Slate reads no other
/// way, is read through the accessibility bus, and which tab shows its dialog; or why not.
fn accessibility_line(
    pid: u32,
    key: &slate::model::SessionKey,
    calls: &std::collections::HashMap<slate::model::SessionKey, slate::model::PendingCall>,
    places: &[(slate::model::SessionKey, u32)],
) -> String {
    let agent = key.agent;
    use accessibility::TabChoice;
    let Some(place) = accessibility::place_of(pid) else {
        return "not read: its terminal application does not publish its text there".to_string();
    };
    let Some(bus) = &place.bus else {
        return format!("{}: not read: no session bus is known", place.program);
    };
    let tabs = match accessibility::read_app(bus, place.app, accessibility::DOCTOR_DEADLINE) {
        Ok(tabs) => tabs,
        Err(why @ accessibility::Unread::NotListed(_)) => {
            return format!(
                "{} (pid {}): not read: {why}; {}",
                place.program,
                place.app,
                accessibility::UNLISTED_ADVICE
            )
        }
        Err(why) => return format!("{} (pid {}): not read: {why}", place.program, place.app),
    };
    // The sessions of its agent in the same application, and the calls the others hold open.
    let here: Vec<&slate::model::SessionKey> = places
        .iter()
        .filter(|(other, app)| other.agent == agent && *app == place.app)
        .map(|(other, _)| other)
        .collect();
    let clues = slate::terminals::Clues {
        call: calls.get(key).cloned(),
        peers: here.len().max(1),
        others: here
            .iter()
            .filter(|other| **other != key)
            .filter_map(|other| calls.get(*other).cloned())
            .collect(),
    };
    let read = format!(
        "{} (pid {}), {} tab(s) read",
        place.program,
        place.app,
        tabs.len()
    );
    match accessibility::choose_tab(agent, &tabs, &clues) {
        TabChoice::Tab { index, why } => {
            format!("{read}: tab {} shows its dialog ({why})", index + 1)
        }
        TabChoice::NoDialog => format!("{read}: no tab shows a dialog of {}", agent.display_name()),
        TabChoice::Others(shown) => format!(
            "{read}: {shown} dialog(s) of {} shown, none about its open call",
            agent.display_name()
        ),
        TabChoice::Ambiguous(why) => format!("{read}: decided for no session: {why}"),
    }
}

/// What `slate focus` would do for process `pid` (its steps, or why it would do nothing), and
/// whether its terminal is in front now (quiet while you look).
fn focus_line(pid: u32) -> String {
    use slate::focus::strategy::{self, Looking, Plan};
    let facts = slate::terminals::front::gather(pid);
    let plan = match strategy::choose(&facts) {
        Plan::Run { steps, caveat } => {
            let steps: Vec<String> = steps.iter().map(ToString::to_string).collect();
            match caveat {
                Some(caveat) => format!("{} (note: {caveat})", steps.join("; ")),
                None => steps.join("; "),
            }
        }
        Plan::Unsure { reason } => format!("nothing, not sure which window shows it: {reason}"),
    };
    let looking = match strategy::looking(&facts) {
        Looking::Yes(why) => format!("in front ({why}): no notification"),
        Looking::No(why) => format!("not in front ({why})"),
        Looking::Unsure(why) => format!("not sure whether it is in front ({why}): notified"),
    };
    format!("{plan}\n      looking: {looking}")
}

/// `slate doctor --sample <id>`: the session's records and screens that Slate could not read,
/// redacted, in a new file. The running Slate's session is taken when one runs: it has watched
/// the terminal's screen for a while, which this process, reading it once, cannot. Nothing is
/// written for a session whose every record and screen was read, and an existing file is never
/// replaced.
pub fn sample(
    context: &Context,
    id: &str,
    out: Option<std::path::PathBuf>,
) -> anyhow::Result<ExitCode> {
    let server = context.reading_server();
    let engine = context.engine(context.options()?, !context.replayed_at)?;
    let (session, _) = find_session(&engine, server.as_ref().map(|server| &server.client), id)?;
    let mut stdout = std::io::stdout().lock();
    if let Some(machine) = &session.machine {
        anyhow::bail!(
            "{id} is a session of {machine}: run `slate doctor --sample {}` there",
            session.id
        );
    }
    let Some(unread) = &session.unread else {
        writeln!(
            stdout,
            "slate read every record and screen of {} {}: there is nothing to sample",
            session.agent, session.id
        )?;
        return Ok(ExitCode::SUCCESS);
    };
    // The copies and the kinds' names are held to the redaction's rules again here: a running
    // Slate, maybe an older one, kept them.
    let grammar = slate::agents::screens::grammar(session.agent);
    let samples: Vec<serde_json::Value> = unread
        .samples
        .iter()
        .map(|sample| slate::agents::unread::resample(grammar, sample))
        .collect();
    let kinds: Vec<UnreadKind> = unread
        .kinds
        .iter()
        .map(|kind| UnreadKind {
            what: UnreadKind::shown(&kind.what),
            records: kind.records,
        })
        .collect();
    let body = serde_json::json!({
        "about": "records and screens of an agent's session that Slate could not read; a \
                  record keeps its keys and record types that read as names, every other key \
                  and text is replaced by its length and every number by <number>; a screen \
                  keeps its frames, marks, punctuation and the agent's known words, and every \
                  other letter and digit is replaced by x",
        "slate_version": env!("CARGO_PKG_VERSION"),
        "agent": session.agent,
        "cli_version": session.cli_version,
        "checked_against": session.agent.description().map(|d| d.recorded).unwrap_or_default(),
        "session": session.id,
        "records": unread.records,
        "screens": unread.screens,
        "kinds": kinds,
        "samples": samples,
    });
    let short: String = session.id.as_str().chars().take(8).collect();
    let path = out.unwrap_or_else(|| format!("slate-sample-{}-{short}.json", session.agent).into());
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|error| match error.kind() {
            std::io::ErrorKind::AlreadyExists => anyhow::anyhow!(
                "{} exists and is left as it is: pass --out with another file",
                path.display()
            ),
            _ => anyhow::anyhow!("cannot create {}: {error}", path.display()),
        })?;
    writeln!(file, "{}", serde_json::to_string_pretty(&body)?)?;
    writeln!(
        stdout,
        "wrote {} redacted sample{} of the {} Slate could not read to {}",
        samples.len(),
        if samples.len() == 1 { "" } else { "s" },
        UnreadRecords::counted(unread.records, unread.screens),
        path.display()
    )?;
    Ok(ExitCode::SUCCESS)
}
