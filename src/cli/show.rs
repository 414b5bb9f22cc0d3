//! `slate show <id>`: one session, the evidence that decided its state, the dialog on its screen,
//! and its history (status transitions and answers) from this HOME's store, as text or JSON.
//!
//! A session on a remote machine (`NAME:ID`) is shown from the running Slate, or, with none, as
//! that machine's own Slate says it; its evidence and history stay there.

use std::io::Write;
use std::process::ExitCode;

use slate::model::SessionKey;
use slate::report;

use super::remote;
use super::setup::{engine_json, find_session, Context};

pub fn run(context: &Context, id: &str, json: bool) -> anyhow::Result<ExitCode> {
    let setup = &context.setup;
    let mut options = context.options()?;
    // A closed session is known without reading its transcript; shown, its head and tail are
    // read for a title, a folder and a last prompt.
    options.scan.closed_detail = true;
    let server = context.reading_server();
    let engine = context.engine(options, !context.replayed_at)?;
    let served = server.as_ref().map(|server| &server.client);
    let (session, evidence) = match (remote::reference(&setup.config, id), served) {
        // With no Slate running here, the remote itself says how the session stands.
        (Some((entry, rest)), None) => {
            let session = remote::asked_session(entry, rest)?;
            let note = format!(
                "the evidence is on {}: `slate show {}` there",
                entry.name, session.id
            );
            (session, vec![note])
        }
        _ => {
            let (session, mut evidence) = find_session(&engine, served, id)?;
            if let (Some(machine), true) = (&session.machine, evidence.is_empty()) {
                evidence.push(format!(
                    "the evidence is on {machine}: `slate show {}` there",
                    session.id
                ));
            }
            (session, evidence)
        }
    };
    let mut evidence = evidence;
    if session.machine.is_none() {
        evidence.extend(slate::agents::versions::newer_note(&session));
    }
    if let Some(unread) = &session.unread {
        let sample = match &session.machine {
            None => format!(
                "`slate doctor --sample {}` writes them, redacted, for a bug report",
                session.id
            ),
            Some(machine) => format!("`slate doctor --sample {}` on {machine}", session.id),
        };
        evidence.push(format!("{}; {sample}", unread.summary()));
    }
    // The history (status changes and answers) is in this HOME's store, for a session of this
    // machine; a store not created yet holds none.
    let stored = match session.machine {
        None if setup.has_store() => {
            let store = setup.open_store()?;
            let key = SessionKey::new(session.agent, session.id.as_str());
            Some((store.transitions(&key, 20)?, store.answers(&key, 20)?))
        }
        _ => None,
    };
    let (transitions, answers) = stored.unwrap_or_default();
    let mut out = std::io::stdout().lock();
    if json {
        let mut value = serde_json::to_value(&session)?;
        value["evidence"] = serde_json::json!(evidence);
        value["transitions"] = serde_json::to_value(&transitions)?;
        value["answers"] = serde_json::to_value(&answers)?;
        let body = serde_json::json!({
            "session": value,
            "engine": engine_json(server.as_ref()),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&body)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    write!(out, "{}", report::show(&session, &evidence, context.now))?;
    if let Some(dialog) = &session.dialog {
        write!(out, "{}", report::dialog(dialog))?;
    }
    let entries = transitions
        .iter()
        .map(|transition| report::HistoryEntry::Transition {
            at: transition.at,
            from: transition.from,
            to: transition.to,
            reason: &transition.reason.text,
        })
        .chain(answers.iter().map(|answer| report::HistoryEntry::Answer {
            at: answer.at,
            surface: answer.surface.as_str(),
            action: answer.action.as_str(),
            option: answer.option.as_deref(),
            summary: answer.summary.as_deref(),
            outcome: &answer.outcome,
        }))
        .collect();
    write!(out, "{}", report::history(entries))?;
    Ok(ExitCode::SUCCESS)
}
