//! `slate approve`, `slate deny` and `slate answer`: answering a session's dialog from the command
//! line (docs/states.md §8), and `slate remote-call`, which carries out an answer another
//! machine's Slate forwarded here.
//!
//! The command shows the dialog it is about to answer, asks for confirmation only when standard
//! input is a terminal (`--yes` skips the question), and sends the fingerprint of the dialog it
//! showed. The answer then goes the one way every answer goes (`answers::answer`): when this
//! HOME's Slate runs, through its API (surface `cli`), so the server types it, records it and its
//! live list sees the dialog leave; without one, this process reads the screen once and answers
//! itself, recording the attempt in the store. A session on another machine (`NAME:ID`) is
//! answered there: the answer is forwarded over that remote's link (`remote::forward`) with the
//! fingerprint shown here, through this HOME's Slate when it runs, else from this process.
//! `--dialog` answers only the dialog with that fingerprint, which is how a forwarded answer
//! carries the one the person saw. A refusal decided here (no dialog, another dialog, a terminal
//! Slate cannot type into) is recorded too (`answers::refuse`). The exit status says what
//! happened (`slate man`): 0 only when the keys were delivered and the dialog left the screen.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use clap::Args;
use slate::agents::keys::{Action, OptionRef};
use slate::answers::{
    self, ErrorCode, Ledger, Record, RespondError, RespondRequest, Responded, Route, Surface,
    Target,
};
use slate::engine::Options;
use slate::model::{Session, SessionDialog, SessionKey, Timestamp};
use slate::remote::forward;
use slate::report;

use super::remote;
use super::setup::{find_session, server_unless_standalone, Context, Setup};

/// What `slate approve`, `slate deny` and `slate answer` share after the session's id: the dialog
/// it must show, whether to ask first, and how to print the outcome.
#[derive(Debug, Args)]
pub struct AnswerArgs {
    /// Answer only the dialog with this fingerprint (16 hex digits, as `"dialog"` in the JSON
    /// shows it); any other exits with the dialog-changed status.
    #[arg(long, value_name = "FINGERPRINT")]
    pub dialog: Option<String>,
    /// Answer without asking, even when standard input is a terminal.
    #[arg(long)]
    pub yes: bool,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
}

/// What the person asked for.
pub struct Ask {
    /// The session: an id or a unique prefix, or `NAME:ID` on a remote machine.
    pub id: String,
    pub action: Action,
    /// The option to pick (its number or label), only with `answer`.
    pub option: Option<String>,
    /// A free answer, only with `answer`.
    pub text: Option<String>,
    pub args: AnswerArgs,
}

/// The exit status of each outcome (documented in `slate man` and docs/answering.md).
pub fn exit_status(code: Option<ErrorCode>) -> u8 {
    match code {
        None => 0,
        Some(ErrorCode::NotAtDialog) => 3,
        Some(ErrorCode::DialogChanged) => 4,
        Some(ErrorCode::NoEffect) => 5,
        Some(ErrorCode::CannotType) => 6,
        Some(ErrorCode::NotOffered) => 7,
        Some(ErrorCode::AlreadyAnswered) => 9,
        Some(_) => 1,
    }
}

/// The status when the person said no at the question, or could not be asked (no terminal and no
/// `--yes`).
const DECLINED: u8 = 8;

/// `slate approve`, `slate deny` and `slate answer`: never in a replay.
pub fn command(context: &Context, ask: &Ask) -> anyhow::Result<ExitCode> {
    let options = context.options()?;
    if context.replay() {
        anyhow::bail!("a dialog is answered on the live screen, never in a replay");
    }
    run(ask, context, options)
}

/// `slate remote-call`: the answer another machine's Slate forwarded over SSH, read from standard
/// input, carried out as `slate approve|deny|answer --dialog <fingerprint> --yes --json <id>`
/// would be.
pub fn remote_call(context: &Context) -> anyhow::Result<ExitCode> {
    let options = context.options()?;
    let ask = match read_call() {
        Ok(ask) => ask,
        Err(error) => {
            let said =
                serde_json::json!({ "error": RespondError::new(ErrorCode::BadRequest, error) });
            println!("{said}");
            return Ok(ExitCode::FAILURE);
        }
    };
    run(&ask, context, options)
}

/// The answer a `slate remote-call` reads from standard input (at most `remote::CALL_MAX`
/// bytes), or why it cannot be read.
fn read_call() -> Result<Ask, String> {
    use std::io::Read;
    let mut input = Vec::new();
    std::io::stdin()
        .lock()
        .take(slate::remote::CALL_MAX as u64 + 1)
        .read_to_end(&mut input)
        .map_err(|err| format!("cannot read the call: {err}"))?;
    match slate::remote::RemoteCall::parse(&input)? {
        slate::remote::RemoteCall::Respond { id, request } => {
            slate::limits::session_id(&id).map_err(|err| err.to_string())?;
            Ok(Ask {
                id,
                action: request.action,
                option: request.option.map(|option| match option {
                    OptionRef::Number(number) => number.to_string(),
                    OptionRef::Label(label) => label,
                }),
                text: request.text,
                args: AnswerArgs {
                    dialog: Some(request.dialog),
                    yes: true,
                    json: true,
                },
            })
        }
    }
}

/// Where the command line records answers: this HOME's store, opened for each record, on the
/// wall clock.
struct Books<'a>(&'a Setup);

impl Ledger for Books<'_> {
    fn now(&self) -> Timestamp {
        slate::live::system_clock()
    }

    fn keep(&self, key: &SessionKey, record: &Record) {
        match self.0.open_store() {
            Ok(store) => {
                if let Err(err) = store.record_answer(key, record) {
                    eprintln!("slate: the answer was not recorded: {err}");
                }
            }
            Err(err) => eprintln!("slate: the answer was not recorded: {err:#}"),
        }
    }
}

/// Shows the dialog, asks, and answers it the one way every answer goes (`answers::answer`).
fn run(ask: &Ask, context: &Context, options: Options) -> anyhow::Result<ExitCode> {
    let setup = &context.setup;
    let args = &ask.args;
    if let Some(shown) = &args.dialog {
        if let Err(error) = answers::check(&request(ask, shown.clone())) {
            return finish(ask, None, Err(error));
        }
    }
    // A session on another machine is answered there, where its terminal is: forwarded over its
    // link. What cannot be forwarded is refused before anything reaches `ssh`.
    let remote = remote::reference(&setup.config, &ask.id);
    if let Some((entry, rest)) = remote {
        let request = request(ask, "0000000000000000".to_string());
        if let Err(error) = forward::command(entry, rest, &request) {
            return finish(ask, None, Err(error));
        }
    }
    let server = server_unless_standalone(setup);
    let session = match (&server, remote) {
        (Some(server), _) => {
            let engine = slate::engine::Engine::new(options);
            find_session(&engine, Some(&server.client), &ask.id)?.0
        }
        (None, Some((entry, rest))) => remote::asked_session(entry, rest)?,
        (None, None) => context.engine(options, true)?.find(&ask.id)?,
    };
    let target = Target::of(&session);
    let books = Books(setup);
    // The fingerprint on screen, else the one the person saw (`--dialog`, as a forwarded answer
    // carries it).
    let shown = session
        .dialog
        .as_ref()
        .map(|dialog| dialog.fingerprint.clone())
        .or_else(|| args.dialog.clone())
        .unwrap_or_default();
    let request = request(ask, shown);
    let Some(dialog) = &session.dialog else {
        let error = RespondError::new(
            ErrorCode::NotAtDialog,
            format!(
                "session {} is at no dialog Slate reads from its screen ({}: {}); nothing was typed",
                session.id,
                session.status.label(),
                session.session_state.reason.text
            ),
        );
        let error = answers::refuse(&target, &request, error, &books);
        return finish(ask, Some(&session), Err(error));
    };
    if let Some(seen) = args
        .dialog
        .as_deref()
        .filter(|seen| *seen != dialog.fingerprint)
    {
        let error = RespondError::new(
            ErrorCode::DialogChanged,
            format!(
                "the dialog changed: the session now shows {:?} (fingerprint {}), not the one \
                 answered ({seen}), so nothing was typed",
                dialog.summary, dialog.fingerprint
            ),
        );
        let error = answers::refuse(&target, &request, error, &books);
        return finish(ask, Some(&session), Err(error));
    }
    if !args.json {
        print!(
            "{}",
            preview(&session, dialog, ask.action, request.option.as_ref())
        );
    }
    if !dialog.answerable {
        let why = dialog
            .why_not
            .clone()
            .unwrap_or_else(|| "slate cannot type into this terminal".to_string());
        let error = RespondError::new(ErrorCode::CannotType, why);
        let error = answers::refuse(&target, &request, error, &books);
        return finish(ask, Some(&session), Err(error));
    }
    // Only a person at a terminal confirms; without one, only `--yes` does. Piped input (`echo y
    // | slate approve`) is no confirmation: it answers before anyone saw the dialog.
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            eprintln!(
                "slate: not answered: there is no terminal to confirm on; run it again with \
                 --yes to answer without a question"
            );
            return Ok(ExitCode::from(DECLINED));
        }
        if !confirmed()? {
            eprintln!("slate: not answered");
            return Ok(ExitCode::from(DECLINED));
        }
    }
    // Through this HOME's Slate when it runs (it types, or forwards, and records); else
    // forwarded from here to the session's machine, or typed here.
    let locks = setup
        .places
        .as_ref()
        .ok()
        .and_then(|places| answers::lock_folder(&places.store_file()));
    let route = match (server, remote) {
        (Some(server), _) => Route::Server(server.client),
        (None, Some((entry, _))) => Route::Forward {
            entry: entry.clone(),
            options: remote::options(),
            locks,
        },
        (None, None) => Route::Here { locks },
    };
    let result = answers::answer(route, &target, &request, &books);
    finish(ask, Some(&session), result)
}

/// The answer `ask` asks for, to the dialog with fingerprint `dialog`.
fn request(ask: &Ask, dialog: String) -> RespondRequest {
    RespondRequest {
        action: ask.action,
        option: ask.option.as_deref().map(OptionRef::parse),
        text: ask.text.clone(),
        dialog,
        surface: Some(Surface::Cli),
    }
}

/// Asks on the terminal whether to answer; anything but yes is no.
fn confirmed() -> anyhow::Result<bool> {
    eprint!("Answer it? [y/N] ");
    std::io::stderr().flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(matches!(line.trim().to_lowercase().as_str(), "y" | "yes"))
}

/// The dialog as it will be answered: its summary, every line of its text where the summary does
/// not hold it all, its options with what Slate offers for each, and what this answer picks.
fn preview(
    session: &Session,
    dialog: &SessionDialog,
    action: Action,
    option: Option<&OptionRef>,
) -> String {
    let mut out = format!(
        "{} {} · {}: {}\n",
        session.agent.display_name(),
        session.id,
        wire(dialog.kind),
        dialog.summary
    );
    // Every line of the command, where the summary does not hold it all.
    let whole = dialog.detail.len() <= 1
        && !dialog.cut
        && dialog
            .detail
            .iter()
            .all(|line| dialog.summary.contains(line.as_str()));
    if !whole {
        out.push_str(&format!(
            "  the whole text ({} lines):\n",
            dialog.detail.len()
        ));
        for line in &dialog.detail {
            out.push_str(&format!("  │ {line}\n"));
        }
        if dialog.cut {
            out.push_str("  (cut short on screen: only its terminal can allow it)\n");
        }
    }
    for (index, shown) in dialog.options.iter().enumerate() {
        let number = shown
            .number
            .map(|number| format!("{number}."))
            .unwrap_or_else(|| format!("({})", index + 1));
        let offered = match shown.action {
            Some(action) => action.as_str().to_string(),
            None => "stays in the terminal".to_string(),
        };
        out.push_str(&format!("  {number} {}  [{offered}]\n", shown.label));
    }
    let what = match (action, option) {
        (Action::Answer, Some(option)) => format!("answer with option {option}"),
        (Action::Answer, None) => "answer with the free text".to_string(),
        (action, _) => action.as_str().to_string(),
    };
    out.push_str(&format!("about to {what}\n"));
    report::terminal_text(&out).into_owned()
}

fn wire(kind: slate::agents::screens::DialogKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|value| value.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Prints the outcome and turns it into the exit status.
fn finish(
    ask: &Ask,
    session: Option<&Session>,
    result: Result<Responded, RespondError>,
) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let status = exit_status(result.as_ref().err().map(|error| error.code));
    if ask.args.json {
        let mut body = match &result {
            Ok(responded) => serde_json::to_value(responded)?,
            Err(error) => serde_json::json!({ "error": error }),
        };
        if let Some(dialog) = session.and_then(|session| session.dialog.as_ref()) {
            body["dialog"] = serde_json::to_value(dialog)?;
        }
        writeln!(out, "{}", serde_json::to_string_pretty(&body)?)?;
    } else {
        match &result {
            Ok(responded) if responded.outcome == slate::answers::hook::HOOK_OUTCOME => {
                writeln!(
                    out,
                    "answered: {}, through the agent's own hook",
                    responded.action.as_str()
                )?;
            }
            Ok(responded) => {
                let option = responded
                    .option
                    .map(|number| format!(" (option {number})"))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "answered: {}{option}; the dialog left the screen after {} ms",
                    responded.action.as_str(),
                    responded.left_after_ms
                )?;
            }
            Err(error) => {
                let line = format!("slate: {} ({})", error.message, error.code.as_str());
                eprintln!("{}", report::terminal_text(&line));
            }
        }
    }
    Ok(ExitCode::from(status))
}
