//! The `slate` command line: the arguments (clap) and a short dispatch to one module per command.
//!
//! This module belongs to the binary, not the library: it reads the environment and the clock,
//! runs the engine, and prints what `report` renders. It holds no rule of its own. What every
//! command starts from (the environment, Slate's places, the config, the time, a running Slate)
//! is `setup`; then each command is a module: `sessions`, `show`, `answer` (approve, deny, answer
//! and the hidden remote-call), `focus`, `doctor`, `intent` (park, await, resume), `items` (item,
//! claim, release), `host` (run), `serve` (serve, watch), `remote`, `hooks` (hooks, hook), and
//! `manual` (completions, man).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use slate::agents::keys::Action;
use slate::model::{Awaiting, Timestamp};

mod answer;
mod doctor;
mod focus;
mod hooks;
mod host;
mod intent;
mod items;
mod manual;
mod remote;
mod serve;
mod sessions;
mod setup;
mod show;
mod usage;

use setup::{Context, Setup};

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
    /// What the sessions' model calls used and cost: tokens, and a reported cost or an estimate
    /// from a dated price table (never a bill), by session, project, agent or UTC day.
    Usage {
        /// Sum by `session`, `project`, `agent` or `day`.
        #[arg(long, default_value = "session", value_name = "GROUP")]
        by: String,
        /// Only sessions active since then: `24h`, `7d`, `90m`, a day (`2026-12-01`) or an
        /// RFC 3339 time.
        #[arg(long, value_name = "WHEN")]
        since: Option<String>,
        /// Print `{"rows":[…],"total":{…},"prices":{…}}` instead of a table.
        #[arg(long)]
        json: bool,
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
        #[command(flatten)]
        args: answer::AnswerArgs,
    },
    /// Reject the call a session's permission dialog asks about, or close its question or plan.
    Deny {
        /// A session id, or a unique prefix of one.
        id: String,
        #[command(flatten)]
        args: answer::AnswerArgs,
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
        #[command(flatten)]
        args: answer::AnswerArgs,
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
    Doctor {
        /// Write the records and screens of this session that Slate could not read, redacted
        /// (keys, record types and frames kept, text replaced), to a file to attach to a bug
        /// report. A running Slate is asked for them when one runs.
        #[arg(long, value_name = "ID")]
        sample: Option<String>,
        /// Where --sample writes (default: slate-sample-<agent>-<id>.json here). An existing
        /// file is never replaced.
        #[arg(long, value_name = "FILE", requires = "sample")]
        out: Option<std::path::PathBuf>,
    },
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
    /// Mute a session: it still counts and shows, and no notification tells of it.
    Mute {
        /// A session id, or a unique prefix of one.
        id: String,
    },
    /// Unmute a session muted with `slate mute`.
    Unmute { id: String },
    /// Work items sessions can claim.
    Item {
        #[command(subcommand)]
        command: items::ItemCommand,
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
    /// The agents' own hooks: opt-in, observe-only, so a prompt in a terminal Slate cannot read
    /// still shows (docs/hooks.md).
    Hooks {
        #[command(subcommand)]
        command: hooks::HooksCommand,
    },
    /// What an installed hook runs: reads the agent's event as JSON on standard input and hands
    /// it to the running Slate, within 250 ms; prints nothing and always exits 0.
    Hook { agent: String, event: String },
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

/// Runs the command: the ones that need no setup first, then the others with the setup read once.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if let Command::Run { command } = &cli.command {
        return host::run(command);
    }
    if let Command::Hook { agent, event } = &cli.command {
        let args = [agent.clone(), event.clone()];
        slate::hooks::run_hook(slate::agents::BUILT_IN, &args, std::time::Instant::now());
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(done) = manual::run(&cli.command)? {
        return Ok(done);
    }
    let now = match &cli.now {
        Some(text) => Timestamp::parse_rfc3339(text)
            .with_context(|| format!("--now {text:?} is not an RFC 3339 time"))?,
        None => slate::live::system_clock(),
    };
    let context = Context {
        setup: Setup::read()?,
        now,
        replayed_at: cli.now.is_some(),
        processes: cli.processes,
    };
    let setup = &context.setup;
    let ask = |action, id: String, option, text, args| answer::Ask {
        id,
        action,
        option,
        text,
        args,
    };
    match cli.command {
        Command::Sessions {
            json,
            all,
            reclaimable,
        } => sessions::run(&context, json, all, reclaimable),
        Command::Show { id, json } => show::run(&context, &id, json),
        Command::Usage { by, since, json } => usage::run(&context, &by, since.as_deref(), json),
        Command::Approve { id, args } => {
            answer::command(&context, &ask(Action::Approve, id, None, None, args))
        }
        Command::Deny { id, args } => {
            answer::command(&context, &ask(Action::Deny, id, None, None, args))
        }
        Command::Answer {
            id,
            option,
            text,
            args,
        } => answer::command(&context, &ask(Action::Answer, id, option, text, args)),
        Command::RemoteCall => answer::remote_call(&context),
        Command::Focus { id, dry_run } => focus::run(&context, &id, dry_run),
        Command::Doctor { sample: None, .. } => doctor::run(&context),
        Command::Doctor {
            sample: Some(id),
            out,
        } => doctor::sample(&context, &id, out),
        Command::Park { id, reason } => intent::park(&context, &id, reason),
        Command::Await { id, who, reason } => intent::wait_for(&context, &id, who, reason),
        Command::Resume { id } => intent::resume(&context, &id),
        Command::Mute { id } => intent::mute(&context, &id, true),
        Command::Unmute { id } => intent::mute(&context, &id, false),
        Command::Item { command } => items::item(&command, setup, now),
        Command::Claim { item, session } => items::claim(&context, &item, &session),
        Command::Release { item } => items::release(&item, setup, now),
        Command::Remote { command } => remote::run(&command, setup, now),
        Command::Hooks { command } => hooks::run(&context, &command),
        Command::Serve { listen } => serve::serve(listen.as_deref(), setup, context.options()?),
        Command::Watch { json, listen } => {
            serve::watch(listen.as_deref(), json, setup, context.options()?)
        }
        Command::Run { .. }
        | Command::Hook { .. }
        | Command::Completions { .. }
        | Command::Man { .. } => {
            unreachable!("handled before the setup is read")
        }
    }
}
