//! The `slate` command line: argument parsing and the commands that print.
//!
//! This module belongs to the binary, not the library: it reads the environment and the clock,
//! runs the engine, and prints what `report` renders. It holds no rule of its own.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use slate::config::{self, Config};
use slate::engine::{Engine, Options, ProcessSource};
use slate::focus::{self, strategy::Plan};
use slate::model::{Awaiting, Intent, IntentState, Session, SessionKey, Status, Timestamp};
use slate::report;
use slate::sources::processes;
use slate::sources::roots::Env;
use slate::store;
use slate::tracker::{ItemStatus, WorkItemInfo};

mod manual;
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

/// The live list of a running Slate server, if one answers at `listen` within a moment.
fn sessions_from_server(listen: SocketAddr) -> Option<Vec<Session>> {
    if !slate::follow::probe(listen, Duration::from_millis(300)) {
        return None;
    }
    let body = slate::follow::get(listen, "/sessions/live").ok()?;
    let value: serde_json::Value = serde_json::from_str(&body).ok()?;
    // An older server may send sessions without `session_state`; `from_wire` fills it in.
    value["sessions"]
        .as_array()?
        .iter()
        .map(|session| Session::from_wire(session.clone()).ok())
        .collect()
}

/// Prints sessions as the `slate sessions` table or as `{"sessions":[…]}`, Needs you first.
fn print_sessions(
    mut sessions: Vec<Session>,
    json: bool,
    now: Timestamp,
    server: Option<SocketAddr>,
) -> anyhow::Result<()> {
    report::sort_for_display(&mut sessions);
    let mut out = std::io::stdout().lock();
    if json {
        let body = serde_json::json!({ "sessions": sessions });
        writeln!(out, "{}", serde_json::to_string_pretty(&body)?)?;
    } else {
        write!(out, "{}", report::table(&sessions, now))?;
        if let Some(server) = server {
            writeln!(out, "(from the Slate running at {server})")?;
        }
    }
    Ok(())
}

/// Where Slate's own files live for this user, from the environment.
struct Places {
    store: PathBuf,
    config_dir: PathBuf,
}

impl Places {
    fn from_env(env: &Env) -> anyhow::Result<Places> {
        let home = env
            .home
            .clone()
            .context("cannot find the home folder (HOME is not set)")?;
        let (data_var, config_var) = if cfg!(windows) {
            let appdata = std::env::var_os("APPDATA").map(PathBuf::from);
            (appdata.clone(), appdata)
        } else {
            (env.xdg_data_home.clone(), env.xdg_config_home.clone())
        };
        Ok(Places {
            store: store::default_path(&store::data_dir(&home, data_var.as_deref())),
            config_dir: store::config_dir(&home, config_var.as_deref()),
        })
    }

    fn open_store(&self) -> anyhow::Result<store::Store> {
        store::open(&self.store)
            .with_context(|| format!("cannot open Slate's store {}", self.store.display()))
    }

    fn config(&self) -> Config {
        match config::load_or_default(&config::default_path(&self.config_dir)) {
            Ok((config, _)) => config,
            Err(err) => {
                tracing::warn!("{err}; using the default settings");
                Config::default()
            }
        }
    }

    /// Asks a running server (at `SLATE_API` when set, else at `listen`) to re-read now, so a
    /// change made here shows at once. Any failure (no server, no token, an old server) is
    /// ignored: the server's periodic scans catch up.
    fn nudge_server(&self, listen: SocketAddr) {
        let listen = slate::host::engine_address(listen);
        let token = match slate::token::read_token(&self.config_dir) {
            Ok(Some(token)) => token,
            Ok(None) => return,
            Err(err) => {
                tracing::warn!("{err}; a running server sees the change at its next scan");
                return;
            }
        };
        let Ok(mut stream) = TcpStream::connect_timeout(&listen, Duration::from_millis(300)) else {
            return;
        };
        let _ = stream.set_write_timeout(Some(Duration::from_millis(500)));
        let _ = stream.set_read_timeout(Some(Duration::from_millis(1500)));
        let request = format!(
            "POST /sessions/live/refresh HTTP/1.1\r\nHost: {listen}\r\n\
             Authorization: Bearer {token}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        if stream.write_all(request.as_bytes()).is_ok() {
            let mut reply = [0u8; 256];
            let _ = std::io::Read::read(&mut stream, &mut reply);
        }
    }
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if let Command::Run { command } = &cli.command {
        let code = slate::host::run(command, slate::host::Endpoint::from_env())?;
        return Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)));
    }
    if let Some(done) = manual::run(&cli.command)? {
        return Ok(done);
    }
    let now = match &cli.now {
        Some(text) => Timestamp::parse_rfc3339(text)
            .with_context(|| format!("--now {text:?} is not an RFC 3339 time"))?,
        None => slate::live::system_clock(),
    };
    let env = Env::from_process();
    if let Some(done) = run_store_command(&cli.command, &env, now)? {
        return Ok(done);
    }
    let places = Places::from_env(&env).ok();
    let mut options = Options::from_env(env.clone());
    if let Some(path) = &cli.processes {
        let table = processes::load_table(path)
            .with_context(|| format!("cannot read the process table {}", path.display()))?;
        options.processes = ProcessSource::Recorded(table);
    }
    // `serve` and `watch` read the config themselves, and refuse a malformed one.
    match cli.command {
        Command::Serve { listen } => return serve::serve(listen.as_deref(), options),
        Command::Watch { json, listen } => {
            return serve::watch(listen.as_deref(), json, options);
        }
        _ => {}
    }
    let config = places.as_ref().map(Places::config).unwrap_or_default();
    options.policy.session_idle =
        Duration::from_secs(u64::from(config.project_policy.session_idle_minutes) * 60);
    // Closed sessions are known without reading their transcripts; when a person asks for them,
    // their head and tail are read for a title, a folder and a last prompt.
    options.scan.closed_detail = matches!(
        cli.command,
        Command::Sessions { all: true, .. } | Command::Show { .. }
    );
    // One engine: when a Slate server runs (the tray app or `slate serve`), the live list comes
    // from it, so this command shows what the tray shows, including what only a running engine
    // knows (hosted terminals, the death of a process it saw vouching). A replay (`--now`,
    // `--processes`) or `SLATE_STANDALONE=1` always decides on its own.
    if let Command::Sessions {
        json,
        all: false,
        reclaimable: false,
    } = cli.command
    {
        let standalone = cli.now.is_some()
            || cli.processes.is_some()
            || std::env::var_os("SLATE_STANDALONE").is_some_and(|value| value == "1");
        if !standalone {
            // `SLATE_API` first, as `slate run` reports there.
            let server = slate::host::engine_address(config.server.listen);
            if let Some(sessions) = sessions_from_server(server) {
                print_sessions(sessions, json, now, Some(server))?;
                return Ok(ExitCode::SUCCESS);
            }
        }
    }
    let mut engine = Engine::new(options);
    // Intents and claims first, so the first decision of every session already shows them. A
    // store that does not exist yet holds none, and is not created just to read it.
    if let Some(places) = places.as_ref().filter(|places| places.store.exists()) {
        let store = places.open_store()?;
        engine.load_custody(&store, now)?;
    }
    engine.refresh(now);
    let reclaim_after = Duration::from_secs(u64::from(config.cleanup.reclaim_after_minutes) * 60);
    let mut out = std::io::stdout().lock();
    match cli.command {
        Command::Sessions {
            json,
            all,
            reclaimable,
        } => {
            let mut sessions: Vec<Session> = engine
                .sessions()
                .into_iter()
                .filter(|session| {
                    if reclaimable {
                        session.session_state.custody.reclaimable
                    } else {
                        all || report::on_live_list(session, now, reclaim_after)
                    }
                })
                .collect();
            if reclaimable && !json {
                report::sort_for_display(&mut sessions);
                write!(out, "{}", report::reclaimable(&sessions, now))?;
            } else {
                print_sessions(sessions, json, now, None)?;
            }
        }
        Command::Show { id, json } => {
            let session = engine.find(&id)?;
            let key = slate::model::SessionKey::new(session.agent, session.id.as_str());
            let evidence = engine.evidence(&key);
            if json {
                let mut value = serde_json::to_value(&session)?;
                value["evidence"] = serde_json::json!(evidence);
                let body = serde_json::json!({ "session": value });
                writeln!(out, "{}", serde_json::to_string_pretty(&body)?)?;
            } else {
                write!(out, "{}", report::show(&session, &evidence, now))?;
            }
        }
        Command::Focus { id, dry_run } => {
            let session = engine.find(&id)?;
            return focus(&session, dry_run, &mut out);
        }
        Command::Doctor => write!(out, "{}", report::terminal_text(&doctor(&engine, now)))?,
        Command::Park { id, reason } => {
            let intent = Intent {
                state: IntentState::Parked,
                reason: Some(reason),
                awaiting_who: None,
            };
            set_intent(
                &engine,
                env_places(&places)?,
                &config,
                &id,
                intent,
                now,
                &mut out,
            )?;
        }
        Command::Await { id, who, reason } => {
            let intent = Intent {
                state: IntentState::Awaiting,
                reason: Some(reason),
                awaiting_who: Some(who),
            };
            set_intent(
                &engine,
                env_places(&places)?,
                &config,
                &id,
                intent,
                now,
                &mut out,
            )?;
        }
        Command::Resume { id } => {
            set_intent(
                &engine,
                env_places(&places)?,
                &config,
                &id,
                Intent::default(),
                now,
                &mut out,
            )?;
        }
        Command::Claim { item, session } => {
            let places = env_places(&places)?;
            slate::limits::item_id(&item)?;
            let session = engine.find(&session)?;
            let key = SessionKey::new(session.agent, session.id.as_str());
            let store = places.open_store()?;
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
            places.nudge_server(config.server.listen);
            writeln!(out, "{key} holds a work claim on item {item}")?;
        }
        Command::Item { .. } | Command::Release { .. } => {
            unreachable!("handled before the engine runs")
        }
        Command::Run { .. } | Command::Completions { .. } | Command::Man { .. } => {
            unreachable!("handled before the engine starts")
        }
        Command::Serve { .. } | Command::Watch { .. } => {}
    }
    Ok(ExitCode::SUCCESS)
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

fn env_places(places: &Option<Places>) -> anyhow::Result<&Places> {
    places
        .as_ref()
        .context("cannot find the home folder (HOME is not set)")
}

/// Writes a session's intent to the store and nudges a running server.
fn set_intent(
    engine: &Engine,
    places: &Places,
    config: &Config,
    id: &str,
    intent: Intent,
    now: Timestamp,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    slate::limits::intent(&intent)?;
    let session = engine.find(id)?;
    let key = SessionKey::new(session.agent, session.id.as_str());
    let store = places.open_store()?;
    store.set_intent(&key, &intent, now)?;
    places.nudge_server(config.server.listen);
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
    writeln!(out, "{key} {said}")?;
    Ok(())
}

/// The commands that only touch Slate's store (work items and releases) and need no engine run.
/// Returns `None` for every other command.
fn run_store_command(
    command: &Command,
    env: &Env,
    now: Timestamp,
) -> anyhow::Result<Option<ExitCode>> {
    let (Command::Item { .. } | Command::Release { .. }) = command else {
        return Ok(None);
    };
    let places = Places::from_env(env)?;
    let config = places.config();
    let store = places.open_store()?;
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
            writeln!(out, "item {id} ({})", status.as_str())?;
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
            writeln!(out, "item {id} done")?;
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
            if released == 0 {
                writeln!(out, "no claim held on item {item}")?;
            } else {
                writeln!(out, "released item {item}")?;
            }
        }
        _ => return Ok(None),
    }
    places.nudge_server(config.server.listen);
    Ok(Some(ExitCode::SUCCESS))
}
