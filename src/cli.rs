//! The `slate` command line: argument parsing and the commands that print.
//!
//! This module belongs to the binary, not the library: it reads the environment and the clock,
//! runs the engine, and prints what `report` renders. It holds no rule of its own.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use slate::agents::keys::{Action, OptionRef};
use slate::answers::{ErrorCode, RespondError};
use slate::client::{self, Answer, Client};
use slate::config::{self, Config};
use slate::engine::{Engine, ProcessSource};
use slate::focus::{self, strategy::Plan};
use slate::model::{
    Awaiting, Intent, IntentState, Problem, Session, SessionKey, Status, Timestamp,
};
use slate::places::{Places, PlacesError};
use slate::sources::processes;
use slate::sources::roots::Env;
use slate::tracker::{ItemStatus, WorkItemInfo};
use slate::{policy, report, settings, store};

mod answer;
mod manual;
mod remote;
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
        /// Include closed sessions (the history).
        #[arg(long)]
        all: bool,
        /// List only the sessions automatic cleanup may reclaim, with the custody reason.
        #[arg(long, alias = "stale")]
        reclaimable: bool,
    },
    /// Show one session and the evidence that decided its state.
    Show {
        /// A session id, or a unique prefix of one.
        id: String,
        /// Print `{"session":{…}}` instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Allow once the call a session's permission dialog asks about (or approve its plan without
    /// widening anything). Shows the dialog first; exits 0 only when the dialog left the screen.
    Approve {
        /// A session id, or a unique prefix of one.
        id: String,
        /// Answer only the dialog with this fingerprint (16 hex digits, as `"dialog"` in the JSON
        /// shows it); any other exits with the dialog-changed status.
        #[arg(long, value_name = "FINGERPRINT")]
        dialog: Option<String>,
        /// Answer without asking, even when standard input is a terminal.
        #[arg(long)]
        yes: bool,
        /// Print the outcome as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Reject the call a session's permission dialog asks about, or close its question or plan.
    Deny {
        /// A session id, or a unique prefix of one.
        id: String,
        /// Answer only the dialog with this fingerprint (16 hex digits, as `"dialog"` in the JSON
        /// shows it); any other exits with the dialog-changed status.
        #[arg(long, value_name = "FINGERPRINT")]
        dialog: Option<String>,
        /// Answer without asking, even when standard input is a terminal.
        #[arg(long)]
        yes: bool,
        /// Print the outcome as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Pick an option of a session's question or plan dialog, by its number or its label, or give
    /// a free answer with --text where the dialog offers one.
    Answer {
        /// A session id, or a unique prefix of one.
        id: String,
        /// The option's number or label (optional with --text: the dialog's free-answer option).
        option: Option<String>,
        /// A free answer, one line.
        #[arg(long)]
        text: Option<String>,
        /// Answer only the dialog with this fingerprint (16 hex digits, as `"dialog"` in the JSON
        /// shows it); any other exits with the dialog-changed status.
        #[arg(long, value_name = "FINGERPRINT")]
        dialog: Option<String>,
        /// Answer without asking, even when standard input is a terminal.
        #[arg(long)]
        yes: bool,
        /// Print the outcome as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Bring the terminal that hosts a session to the front (tmux pane, kitty, WezTerm, X11
    /// window, Terminal or iTerm2 tab). When it cannot be sure which window it is, it says why.
    Focus {
        /// A session id, or a unique prefix of one.
        id: String,
        /// Print the plan without running it.
        #[arg(long)]
        dry_run: bool,
    },
    /// Show where Slate looked, which processes it matched, and the problems it counted.
    Doctor,
    /// Park a session on purpose: it keeps its state, needs direction, and fires no notifications.
    Park {
        /// A session id, or a unique prefix of one.
        id: String,
        #[arg(long)]
        reason: String,
    },
    /// Mark a session as awaiting someone: `operator`, `another_item:<item>` or `ci_or_deploy`.
    Await {
        id: String,
        #[arg(long)]
        who: Awaiting,
        #[arg(long)]
        reason: String,
    },
    /// Clear a session's park or await.
    Resume { id: String },
    /// Work items sessions can claim.
    Item {
        #[command(subcommand)]
        command: ItemCommand,
    },
    /// Record that a session holds a work claim on an item.
    Claim {
        item: String,
        /// The session holding it: an id or a unique prefix.
        #[arg(long)]
        session: String,
    },
    /// Release every claim held on an item.
    Release { item: String },
    /// Run an agent CLI in a terminal Slate hosts, so Slate sees its title and its silences.
    Run {
        /// The command and its arguments, after `--`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        command: Vec<String>,
    },
    /// Serve the live list over HTTP on loopback until Ctrl-C.
    Serve {
        /// The loopback address to listen on (default: the config's `[server] listen`,
        /// 127.0.0.1:7411); port 0 picks a free port.
        #[arg(long, value_name = "ADDRESS")]
        listen: Option<String>,
    },
    /// Other machines whose sessions Slate follows over SSH.
    Remote {
        #[command(subcommand)]
        command: remote::RemoteCommand,
    },
    /// Print each change of the live list as it happens, from this HOME's running Slate or, when
    /// none answers, from an engine of its own.
    Watch {
        /// Print one JSON object per event (NDJSON) instead of text.
        #[arg(long)]
        json: bool,
        /// The address of the server to follow (default: the config's `[server] listen`).
        #[arg(long, value_name = "ADDRESS")]
        listen: Option<String>,
    },
    /// Carry out one call another machine's Slate sends over SSH, read as JSON from standard
    /// input (`remote::RemoteCall`): what a forwarded answer runs, so that none of its data is
    /// on the command line a remote's login shell reads.
    #[command(hide = true)]
    RemoteCall,
    /// Print the completion script for a shell, e.g. `slate completions bash > slate.bash`.
    Completions { shell: clap_complete::Shell },
    /// Print the manual page slate(1), or write it and one page per command into a folder.
    Man {
        #[arg(long, value_name = "FOLDER")]
        dir: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
enum ItemCommand {
    /// Add (or replace) a work item.
    Add {
        id: String,
        #[arg(long)]
        title: String,
        #[arg(long, default_value = "ready")]
        status: ItemStatus,
        /// An item this one waits for; repeat for several.
        #[arg(long = "dep")]
        deps: Vec<String>,
    },
    /// List the work items, who holds them and who acts next.
    List,
    /// Mark an item done and release the claims on it.
    Done { id: String },
}

/// What every command starts from: the environment read once, Slate's places, and the config.
struct Setup {
    env: Env,
    places: Result<Places, PlacesError>,
    config: Config,
}

impl Setup {
    /// Reads the environment, finds Slate's places and reads the config. A config file that does
    /// not parse stops the command with an error naming the file, the line and the key (the
    /// one config-error policy for commands; `settings` says the rest).
    fn read() -> anyhow::Result<Setup> {
        let env = Env::from_process();
        let places = Places::from_env(&env);
        let config = match &places {
            Ok(places) => {
                let (config, notes) = config::load_or_default(&places.config_file())?;
                for note in notes {
                    tracing::warn!("{note}");
                }
                config
            }
            Err(_) => Config::default(),
        };
        Ok(Setup {
            env,
            places,
            config,
        })
    }

    fn places(&self) -> anyhow::Result<&Places> {
        self.places.as_ref().map_err(|err| anyhow::anyhow!("{err}"))
    }

    fn open_store(&self) -> anyhow::Result<store::Store> {
        let path = self.places()?.store_file();
        store::open(&path).with_context(|| format!("cannot open Slate's store {}", path.display()))
    }

    /// The client of the running Slate: at `SLATE_API` when set, else at the config's `[server]
    /// listen` (`client_at`).
    fn client(&self) -> Client {
        self.client_at(client::engine_address(&self.env, self.config.server.listen))
    }

    /// The client of a Slate at `address`, with this HOME's token when one exists. A token file
    /// that cannot be read is said and leaves the client without a token: what needs one (a
    /// nudge, `slate run`'s reports) is best effort, and a command that reads finds that no
    /// running Slate can be shown to be this HOME's, so it reads for itself.
    fn client_at(&self, address: SocketAddr) -> Client {
        let token = match &self.places {
            Ok(places) => slate::token::read_token(&places.token_file()).unwrap_or_else(|err| {
                tracing::warn!("{err}; a running Slate hears nothing from this command");
                None
            }),
            Err(_) => None,
        };
        Client::new(address, token)
    }

    /// Asks a running server to re-read now, so a change made here shows at once. Any failure
    /// (no server, no token, an old server) is ignored: the server's periodic scans catch up.
    fn nudge_server(&self) {
        let client = self.client();
        if client.has_token() {
            let _ = client.post("/sessions/live/refresh", None, Duration::from_millis(1500));
        }
    }
}

/// A running Slate that holds this HOME's token, and the version it reported.
struct Server {
    client: Client,
    version: String,
}

/// Which engine answered a command, as its JSON says: `{"kind": "server", "address", "version"}`
/// for a running Slate, `{"kind": "standalone"}` for this process's own.
fn engine_json(server: Option<&Server>) -> serde_json::Value {
    match server {
        Some(server) => serde_json::json!({
            "kind": "server",
            "address": server.client.address().to_string(),
            "version": server.version,
        }),
        None => serde_json::json!({ "kind": "standalone" }),
    }
}

/// The running Slate at `client`'s address, when one answers within `timeout` and holds this
/// HOME's token. One that answers but is another user's or another HOME's is said on stderr,
/// and the command reads for itself.
fn running_server(client: Client, timeout: Duration) -> Option<Server> {
    match client.answer(timeout) {
        Answer::Ours { version, .. } => Some(Server { client, version }),
        Answer::Foreign(why) => {
            eprintln!(
                "slate: the Slate at {} belongs to another user or HOME ({why}); reading for myself",
                client.address()
            );
            None
        }
        Answer::Silent => None,
    }
}

/// True when `SLATE_STANDALONE=1` asks this command to decide on its own.
fn standalone_asked() -> bool {
    std::env::var_os("SLATE_STANDALONE").is_some_and(|value| value == "1")
}

/// The running Slate, unless `SLATE_STANDALONE=1` asks this command to decide on its own.
fn server_unless_standalone(setup: &Setup) -> Option<Server> {
    if standalone_asked() {
        return None;
    }
    running_server(setup.client(), Duration::from_millis(300))
}

/// The live list of a running Slate server.
fn sessions_from_server(server: &Client) -> Option<Vec<Session>> {
    let value: serde_json::Value = server.get_json("/sessions/live").ok()?;
    // An older server may send sessions without `session_state`; `from_wire` fills it in.
    value["sessions"]
        .as_array()?
        .iter()
        .map(|session| Session::from_wire(session.clone()).ok())
        .collect()
}

/// One session as the running server decided it, with its evidence (`GET /sessions/{id}`).
fn session_from_server(server: &Client, id: &str) -> Option<(Session, Vec<String>)> {
    let value: serde_json::Value = server.get_json(&format!("/sessions/{id}")).ok()?;
    let session = Session::from_wire(value["session"].clone()).ok()?;
    let evidence = serde_json::from_value(value["evidence"].clone()).unwrap_or_default();
    Some((session, evidence))
}

/// Every session as the one engine sees it: the server's live list, with this process's read of
/// the history added for the sessions the server does not list. A session this read finds live
/// that the server does not list is asked for by id: the running engine may know it closed (it
/// saw its process die), and it answers for every session it knows.
fn with_history(server: &Client, live: Vec<Session>, local: Vec<Session>) -> Vec<Session> {
    let listed: HashSet<SessionKey> = live.iter().map(Session::key).collect();
    let mut all = live;
    for session in local {
        if listed.contains(&session.key()) {
            continue;
        }
        if session.status == Status::Ended {
            all.push(session);
            continue;
        }
        match session_from_server(server, session.id.as_str()) {
            Some((known, _)) if known.key() == session.key() => all.push(known),
            _ => all.push(session),
        }
    }
    all
}

/// One session and its evidence (as the sentences the wire carries), from the running server
/// when there is one. A closed session that both the server and this read know closed is shown
/// from this read, which has read its transcript's head and tail (the server keeps closed history
/// small).
fn find_session(
    engine: &Engine,
    server: Option<&Client>,
    id: &str,
) -> anyhow::Result<(Session, Vec<String>)> {
    let local = engine.find(id);
    let served = server.and_then(|server| session_from_server(server, id));
    let read_here = |session: Session| {
        let evidence = engine.evidence(&session.key());
        (session, evidence.iter().map(ToString::to_string).collect())
    };
    Ok(match (served, local) {
        (Some((served, _)), Ok(local))
            if served.key() == local.key()
                && served.status == Status::Ended
                && local.status == Status::Ended =>
        {
            read_here(local)
        }
        (Some(served), _) => served,
        (None, local) => read_here(local?),
    })
}

/// What a list of sessions is, besides its sessions: which were asked for, which engine
/// answered, the places this process could not read (`None` when it read none itself), and, with
/// remote machines configured, how each answered (`None` without any).
struct Listing<'a> {
    listed: report::Listed,
    server: Option<&'a Server>,
    unread: Option<Vec<&'a Problem>>,
    remotes: Option<&'a [slate::remote::Report]>,
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

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if let Command::Run { command } = &cli.command {
        return run_hosted(command);
    }
    if let Some(done) = manual::run(&cli.command)? {
        return Ok(done);
    }
    let now = match &cli.now {
        Some(text) => Timestamp::parse_rfc3339(text)
            .with_context(|| format!("--now {text:?} is not an RFC 3339 time"))?,
        None => slate::live::system_clock(),
    };
    let setup = Setup::read()?;
    if let Some(done) = run_store_command(&cli.command, &setup, now)? {
        return Ok(done);
    }
    if let Command::Remote { command } = &cli.command {
        return remote::run(command, &setup, now);
    }
    let mut options = settings::engine_options(setup.env.clone(), &setup.config);
    if let Some(path) = &cli.processes {
        let table = processes::load_table(path)
            .with_context(|| format!("cannot read the process table {}", path.display()))?;
        options.processes = ProcessSource::Recorded(table);
    }
    // Closed sessions are known without reading their transcripts; when a person asks for them,
    // their head and tail are read for a title, a folder and a last prompt.
    options.scan.closed_detail = matches!(
        cli.command,
        Command::Sessions { all: true, .. } | Command::Show { .. }
    );
    if let Command::RemoteCall = &cli.command {
        let ask = match remote_call() {
            Ok(ask) => ask,
            Err(error) => {
                let said =
                    serde_json::json!({ "error": RespondError::new(ErrorCode::BadRequest, error) });
                println!("{said}");
                return Ok(ExitCode::FAILURE);
            }
        };
        return answer::run(&ask, &setup, options, now);
    }
    let ask = match &cli.command {
        Command::Approve {
            id,
            dialog,
            yes,
            json,
        } => Some((Action::Approve, id, None, None, dialog, *yes, *json)),
        Command::Deny {
            id,
            dialog,
            yes,
            json,
        } => Some((Action::Deny, id, None, None, dialog, *yes, *json)),
        Command::Answer {
            id,
            option,
            text,
            dialog,
            yes,
            json,
        } => Some((
            Action::Answer,
            id,
            option.clone(),
            text.clone(),
            dialog,
            *yes,
            *json,
        )),
        _ => None,
    };
    if let Some((action, id, option, text, dialog, yes, json)) = ask {
        if cli.now.is_some() || cli.processes.is_some() {
            anyhow::bail!("a dialog is answered on the live screen, never in a replay");
        }
        let ask = answer::Ask {
            id: id.clone(),
            action,
            option,
            text,
            dialog: dialog.clone(),
            yes,
            json,
        };
        return answer::run(&ask, &setup, options, now);
    }
    match cli.command {
        Command::Serve { listen } => return serve::serve(listen.as_deref(), &setup, options),
        Command::Watch { json, listen } => {
            return serve::watch(listen.as_deref(), json, &setup, options);
        }
        _ => {}
    }
    // One engine: when this HOME's Slate server runs (the tray app or `slate serve`), every
    // command that reads sessions answers from it, so it shows what the tray shows, including what only a running engine knows
    // (hosted terminals, the death of a process it saw vouching). The live list comes from the
    // server; the closed history this process reads is added to it. A replay (`--now`,
    // `--processes`) or `SLATE_STANDALONE=1` always decides on its own.
    // Only the commands that read sessions ask; the others write Slate's store or read only
    // this process's engine (`slate doctor` asks for the remotes' links only).
    let standalone = cli.now.is_some() || cli.processes.is_some() || standalone_asked();
    let reads = matches!(
        cli.command,
        Command::Sessions { .. } | Command::Show { .. } | Command::Focus { .. }
    );
    let server = if standalone || !reads {
        None
    } else {
        running_server(setup.client(), Duration::from_millis(300))
    };
    let has_remotes = !setup.config.remotes.is_empty();
    if let (
        Some(server),
        Command::Sessions {
            json,
            all: false,
            reclaimable: false,
        },
    ) = (&server, &cli.command)
    {
        if let Some(sessions) = sessions_from_server(&server.client) {
            let remotes =
                has_remotes.then(|| remote::served_reports(&server.client).unwrap_or_default());
            let listing = Listing {
                listed: report::Listed::Live,
                server: Some(server),
                unread: None,
                remotes: remotes.as_deref(),
            };
            print_sessions(sessions, *json, now, &listing)?;
            return Ok(ExitCode::SUCCESS);
        }
    }
    match &cli.command {
        Command::Focus { id, dry_run } => {
            // A remote session is seen through its own machine, never by a local pid.
            if let Some((entry, rest)) = remote::reference(&setup.config, id) {
                return remote::focus(entry, rest, *dry_run, &mut std::io::stdout().lock());
            }
        }
        Command::Park { id, .. } => remote::refuse_remote(&setup.config, id, "park")?,
        Command::Await { id, .. } => remote::refuse_remote(&setup.config, id, "await")?,
        Command::Resume { id } => remote::refuse_remote(&setup.config, id, "resume")?,
        Command::Claim { session, .. } => {
            remote::refuse_remote(&setup.config, session, "claim")?;
        }
        _ => {}
    }
    // Without a running Slate, the remotes are asked once, while this machine is read.
    let asked = match (&server, &cli.command) {
        (None, Command::Sessions { .. }) => remote::Asked::start(&setup.config),
        _ => None,
    };
    let mut engine = Engine::new(options);
    // Intents and claims first, so the first decision of every session already shows them. A
    // store that does not exist yet holds none, and is not created just to read it.
    if setup
        .places
        .as_ref()
        .is_ok_and(|places| places.store_file().exists())
    {
        engine.load_custody(&setup.open_store()?, now)?;
    }
    engine.refresh(now);
    // With no server running, the panes of sessions in a tool call are read once here, so a
    // prompt on screen shows; a replay reads no terminal.
    let reads_terminals = matches!(
        cli.command,
        Command::Sessions { .. } | Command::Show { .. } | Command::Doctor
    );
    if reads_terminals && cli.now.is_none() && engine.scans_live_processes() {
        slate::engine::sense_once(&mut engine, now, slate::live::system_clock);
    }
    let reclaim_after = settings::reclaim_after(&setup.config);
    let mut out = std::io::stdout().lock();
    match cli.command {
        Command::Sessions {
            json,
            all,
            reclaimable,
        } => {
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
        }
        Command::Show { id, json } => {
            let served = server.as_ref().map(|server| &server.client);
            let (session, evidence) = match (remote::reference(&setup.config, &id), served) {
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
                    let (session, mut evidence) = find_session(&engine, served, &id)?;
                    if let (Some(machine), true) = (&session.machine, evidence.is_empty()) {
                        evidence.push(format!(
                            "the evidence is on {machine}: `slate show {}` there",
                            session.id
                        ));
                    }
                    (session, evidence)
                }
            };
            // The history (status changes and answers) is in this HOME's store, for a session
            // of this machine; a store not created yet holds none.
            let stored = match (&session.machine, &setup.places) {
                (None, Ok(places)) if places.store_file().exists() => {
                    let store = setup.open_store()?;
                    let key = SessionKey::new(session.agent, session.id.as_str());
                    Some((store.transitions(&key, 20)?, store.answers(&key, 20)?))
                }
                _ => None,
            };
            let (transitions, answers) = stored.unwrap_or_default();
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
            } else {
                write!(out, "{}", report::show(&session, &evidence, now))?;
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
            }
        }
        Command::Focus { id, dry_run } => {
            let (session, _) =
                find_session(&engine, server.as_ref().map(|server| &server.client), &id)?;
            return focus(&session, dry_run, &mut out);
        }
        Command::Doctor => {
            write!(out, "{}", report::terminal_text(&doctor(&engine, now)))?;
            if !setup.config.remotes.is_empty() {
                let server = server_unless_standalone(&setup);
                let client = server.as_ref().map(|server| &server.client);
                let (reports, from) = remote::reports(&setup, client, now);
                write!(out, "{}", remote::doctor(&reports, &from, now))?;
            }
        }
        Command::Park { id, reason } => {
            let intent = Intent {
                state: IntentState::Parked,
                reason: Some(reason),
                awaiting_who: None,
            };
            set_intent(&engine, &setup, &id, intent, now, &mut out)?;
        }
        Command::Await { id, who, reason } => {
            let intent = Intent {
                state: IntentState::Awaiting,
                reason: Some(reason),
                awaiting_who: Some(who),
            };
            set_intent(&engine, &setup, &id, intent, now, &mut out)?;
        }
        Command::Resume { id } => {
            set_intent(&engine, &setup, &id, Intent::default(), now, &mut out)?;
        }
        Command::Claim { item, session } => {
            slate::limits::item_id(&item)?;
            let session = engine.find(&session)?;
            let key = SessionKey::new(session.agent, session.id.as_str());
            let store = setup.open_store()?;
            if store.work_item(&item)?.is_none() {
                anyhow::bail!(
                    "no work item `{item}` (add it with `slate item add {item} --title …`)"
                );
            }
            let held = store.claims_on(&item)?;
            if let Some(other) = held
                .iter()
                .find(|claim| claim.released.is_none() && claim.key != key)
            {
                anyhow::bail!(
                    "item `{item}` is already claimed by {}; release it first",
                    other.key
                );
            }
            if !held.iter().any(|claim| claim.released.is_none()) {
                store.claim(&item, &key, now)?;
            }
            setup.nudge_server();
            let said = format!("{key} holds a work claim on item {item}");
            writeln!(out, "{}", report::terminal_text(&said))?;
        }
        Command::Item { .. } | Command::Release { .. } => {
            unreachable!("handled before the engine runs")
        }
        Command::Run { .. }
        | Command::Approve { .. }
        | Command::Deny { .. }
        | Command::Answer { .. }
        | Command::Remote { .. }
        | Command::RemoteCall
        | Command::Completions { .. }
        | Command::Man { .. } => {
            unreachable!("handled before the engine starts")
        }
        Command::Serve { .. } | Command::Watch { .. } => {}
    }
    Ok(ExitCode::SUCCESS)
}

/// The answer a `slate remote-call` reads from standard input (at most `remote::CALL_MAX`
/// bytes): carried out as `slate approve|deny|answer --dialog <fingerprint> --yes --json <id>`
/// would be, or why it cannot be read.
fn remote_call() -> Result<answer::Ask, String> {
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
            Ok(answer::Ask {
                id,
                action: request.action,
                option: request.option.map(|option| match option {
                    OptionRef::Number(number) => number.to_string(),
                    OptionRef::Label(label) => label,
                }),
                text: request.text,
                dialog: Some(request.dialog),
                yes: true,
                json: true,
            })
        }
    }
}

/// `slate run`: hosts the command, reporting to the running Slate. A config that does not parse
/// is said on stderr, not fatal: the agent CLI must run as it would without Slate, so its reports
/// go to `SLATE_API` or the default address instead.
fn run_hosted(command: &[String]) -> anyhow::Result<ExitCode> {
    let setup = Setup::read().unwrap_or_else(|err| {
        eprintln!("slate: {err:#}; reporting to the default address");
        let env = Env::from_process();
        Setup {
            places: Places::from_env(&env),
            env,
            config: Config::default(),
        }
    });
    let client = setup.client();
    let client = client.has_token().then_some(client);
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|value| !value.is_empty())
        .map(std::path::PathBuf::from);
    let control = setup
        .places
        .as_ref()
        .ok()
        .map(|places| places.runtime_dir(runtime.as_deref()));
    let code = slate::host::run(command, client, control.as_deref())?;
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// `slate focus`: plans, then runs the plan unless `dry_run`. Unsure is a failure with its reason.
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
        let terminal = match &session.terminal {
            Some(terminal) => terminal.describe(),
            None => "unknown (no live process vouches for it)".to_string(),
        };
        let _ = writeln!(out, "      terminal: {terminal}");
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

/// The commands that only touch Slate's store (work items and releases) and need no engine run.
/// Returns `None` for every other command.
fn run_store_command(
    command: &Command,
    setup: &Setup,
    now: Timestamp,
) -> anyhow::Result<Option<ExitCode>> {
    let (Command::Item { .. } | Command::Release { .. }) = command else {
        return Ok(None);
    };
    let store = setup.open_store()?;
    let mut out = std::io::stdout().lock();
    match command {
        Command::Item {
            command:
                ItemCommand::Add {
                    id,
                    title,
                    status,
                    deps,
                },
        } => {
            let graph = store
                .work_items()?
                .into_iter()
                .map(|item| (item.id, item.deps))
                .collect();
            slate::limits::work_item(id, title, deps, &graph)?;
            let created = store.work_item(id)?.map_or(now, |item| item.created);
            store.put_work_item(&store::WorkItem {
                id: id.clone(),
                title: title.clone(),
                status: *status,
                deps: deps.clone(),
                created,
            })?;
            let said = format!("item {id} ({})", status.as_str());
            writeln!(out, "{}", report::terminal_text(&said))?;
        }
        Command::Item {
            command: ItemCommand::Done { id },
        } => {
            let mut item = store
                .work_item(id)?
                .with_context(|| format!("no work item `{id}`"))?;
            item.status = ItemStatus::Done;
            store.put_work_item(&item)?;
            // Finished work protects nobody: its claims are released with it.
            for claim in store.claims_on(id)? {
                if claim.released.is_none() {
                    store.release_claim(claim.id, now)?;
                }
            }
            writeln!(out, "item {} done", report::terminal_text(id))?;
        }
        Command::Item {
            command: ItemCommand::List,
        } => {
            let mut items = BTreeMap::new();
            let mut holders = BTreeMap::new();
            for item in store.work_items()? {
                for claim in store.claims_on(&item.id)? {
                    if claim.released.is_none() {
                        holders.insert(item.id.clone(), claim.key);
                    }
                }
                let info = WorkItemInfo {
                    status: item.status,
                    id: item.id,
                    title: item.title,
                    deps: item.deps,
                };
                items.insert(info.id.clone(), info);
            }
            write!(out, "{}", report::items(&items, &holders))?;
        }
        Command::Release { item } => {
            let mut released = 0;
            for claim in store.claims_on(item)? {
                if claim.released.is_none() {
                    store.release_claim(claim.id, now)?;
                    released += 1;
                }
            }
            // The id is as typed, so it is shown, never obeyed, like every other echoed text.
            let item = report::terminal_text(item);
            if released == 0 {
                writeln!(out, "no claim held on item {item}")?;
            } else {
                writeln!(out, "released item {item}")?;
            }
        }
        _ => return Ok(None),
    }
    setup.nudge_server();
    Ok(Some(ExitCode::SUCCESS))
}
