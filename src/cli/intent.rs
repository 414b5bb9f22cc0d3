//! `slate park`, `slate await` and `slate resume`: a session's intent (docs/states.md §4), and
//! `slate mute` and `slate unmute`, written to this HOME's store, after which a running Slate is
//! nudged to re-read. A session on a remote machine is refused: its intents and mutes live in that
//! machine's store.

use std::io::Write;
use std::process::ExitCode;

use slate::engine::Engine;
use slate::model::{Awaiting, Intent, IntentState, SessionKey, Timestamp};
use slate::report;

use super::remote;
use super::setup::{Context, Setup};

/// `slate park <id> --reason …`: parked on purpose.
pub fn park(context: &Context, id: &str, reason: String) -> anyhow::Result<ExitCode> {
    let intent = Intent {
        state: IntentState::Parked,
        reason: Some(reason),
        awaiting_who: None,
    };
    run(context, "park", id, intent)
}

/// `slate await <id> --who … --reason …`: awaiting someone.
pub fn wait_for(
    context: &Context,
    id: &str,
    who: Awaiting,
    reason: String,
) -> anyhow::Result<ExitCode> {
    let intent = Intent {
        state: IntentState::Awaiting,
        reason: Some(reason),
        awaiting_who: Some(who),
    };
    run(context, "await", id, intent)
}

/// `slate resume <id>`: neither parked nor awaiting any more.
pub fn resume(context: &Context, id: &str) -> anyhow::Result<ExitCode> {
    run(context, "resume", id, Intent::default())
}

/// `slate mute <id>` (`muted`) and `slate unmute <id>`: whether the session's changes notify.
pub fn mute(context: &Context, id: &str, muted: bool) -> anyhow::Result<ExitCode> {
    let command = if muted { "mute" } else { "unmute" };
    let options = context.options()?;
    remote::refuse_remote(&context.setup.config, id, command)?;
    let engine = context.engine(options, false)?;
    let session = engine.find(id)?;
    let key = SessionKey::new(session.agent, session.id.as_str());
    context
        .setup
        .open_store()?
        .set_muted(&key, muted, context.now)?;
    context.setup.nudge_server();
    let said = if muted {
        "muted: it counts and shows as ever, and no notification tells of it"
    } else {
        "unmuted"
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", report::terminal_text(&format!("{key} {said}")))?;
    Ok(ExitCode::SUCCESS)
}

/// Sets session `id`'s intent; `command` is how the person named it.
fn run(context: &Context, command: &str, id: &str, intent: Intent) -> anyhow::Result<ExitCode> {
    let options = context.options()?;
    remote::refuse_remote(&context.setup.config, id, command)?;
    let engine = context.engine(options, false)?;
    let mut out = std::io::stdout().lock();
    set_intent(&engine, &context.setup, id, intent, context.now, &mut out)?;
    Ok(ExitCode::SUCCESS)
}

/// Writes a session's intent to the store and nudges a running server.
fn set_intent(
    engine: &Engine,
    setup: &Setup,
    id: &str,
    intent: Intent,
    now: Timestamp,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    slate::limits::intent(&intent)?;
    let session = engine.find(id)?;
    let key = SessionKey::new(session.agent, session.id.as_str());
    let store = setup.open_store()?;
    store.set_intent(&key, &intent, now)?;
    setup.nudge_server();
    let said = match intent.state {
        IntentState::None => "resumed".to_string(),
        IntentState::Parked => "parked".to_string(),
        IntentState::Awaiting => format!(
            "awaiting {}",
            intent
                .awaiting_who
                .as_ref()
                .map_or("someone".to_string(), Awaiting::to_string)
        ),
    };
    writeln!(out, "{}", report::terminal_text(&format!("{key} {said}")))?;
    Ok(())
}
