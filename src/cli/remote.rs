//! `slate remote add|remove|list`, and what the other commands do with the config's remote
//! machines: name a session on one as `NAME:ID`, and, when no Slate runs here to keep links,
//! ask each remote once.
//!
//! `add` and `remove` edit the config file's `[[remote]]` tables and keep everything else in it
//! (`config::with_remote_added`); a running Slate follows the file and starts or stops the link
//! at once. `list` says where each link stands: from the running Slate (`GET /remotes`), or,
//! with none running, from one question to each remote (`ssh DEST slate sessions --json`, all at
//! once, each within 5 s), which is also how `slate sessions` and `slate doctor` read remotes
//! then. The link itself and what its failures mean are the library's (`remote`).

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use slate::client::Client;
use slate::config::{self, Config, RemoteEntry};
use slate::engine::pick;
use slate::model::{Machine, Session, Timestamp};
use slate::remote::{self, attach, link, LinkOptions, Report, Status};
use slate::report;

use super::setup::Setup;

#[derive(Debug, Subcommand)]
pub enum RemoteCommand {
    /// Follow the sessions of another machine over SSH (the system `ssh`, with your
    /// ~/.ssh/config): `slate remote add box dev@box.example.com -- -p 2222`.
    Add {
        /// The name its sessions are marked with; `box:ID` names one of them.
        name: String,
        /// Where `ssh` connects: a host of ~/.ssh/config, user@host, or ssh://user@host:port.
        destination: String,
        /// Arguments for `ssh` before the destination, after `--`, such as `-p 2222` or
        /// `-i ~/.ssh/box`.
        #[arg(last = true, value_name = "SSH_ARGS")]
        ssh_args: Vec<String>,
    },
    /// Stop following a machine.
    Remove { name: String },
    /// Where each machine's link stands, and how many sessions it has.
    List {
        /// Print `{"remotes":[…]}` instead of a table.
        #[arg(long)]
        json: bool,
    },
}

/// The link options every command uses: the system `ssh`, the product's timings.
pub fn options() -> LinkOptions {
    LinkOptions::default()
}

pub fn run(command: &RemoteCommand, setup: &Setup, now: Timestamp) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match command {
        RemoteCommand::Add {
            name,
            destination,
            ssh_args,
        } => {
            let machine = Machine::new(name)?;
            let entry = RemoteEntry::new(machine, destination, ssh_args.clone())
                .map_err(anyhow::Error::msg)?;
            let file = setup.places()?.config_file();
            config::edit_file(&file, |text| {
                config::with_remote_added(text, &entry).map(Some)
            })?;
            let line = remote::command_line(
                "ssh",
                &remote::ssh_args(&entry, &options().timing, &remote::RemoteCommand::Watch)?,
            );
            writeln!(
                out,
                "added remote {} ({}) to {}",
                entry.name,
                report::terminal_text(&entry.destination),
                file.display()
            )?;
            writeln!(
                out,
                "a running Slate follows it now with: {}",
                report::terminal_text(&line)
            )?;
            writeln!(out, "check the link with `slate remote list`")?;
        }
        RemoteCommand::Remove { name } => {
            let machine = Machine::new(name)?;
            let file = setup.places()?.config_file();
            let removed =
                config::edit_file(&file, |text| config::with_remote_removed(text, &machine))?;
            if !removed {
                anyhow::bail!("no remote named {machine} in {}", file.display());
            }
            writeln!(out, "removed remote {machine}")?;
        }
        RemoteCommand::List { json } => {
            let server = super::setup::server_unless_standalone(setup);
            let client = server.as_ref().map(|server| &server.client);
            let (reports, from) = reports(setup, client, now);
            if *json {
                let body = serde_json::json!({ "remotes": reports });
                writeln!(out, "{}", serde_json::to_string_pretty(&body)?)?;
            } else {
                write!(out, "{}", table(&reports, now))?;
                if !reports.is_empty() {
                    writeln!(out, "{}", from.note())?;
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Where the remotes' state came from.
pub enum From {
    /// The running Slate at this address, which keeps a link to each.
    Server(std::net::SocketAddr),
    /// One question to each remote, just now.
    Asked,
}

impl From {
    pub fn note(&self) -> String {
        match self {
            From::Server(address) => format!("(from the Slate running at {address})"),
            From::Asked => {
                "(no Slate runs here to keep links: each remote was asked once, just now)"
                    .to_string()
            }
        }
    }
}

/// Each remote's state: from the running Slate, else by asking each remote once.
pub fn reports(setup: &Setup, server: Option<&Client>, now: Timestamp) -> (Vec<Report>, From) {
    if let Some(server) = server {
        if let Some(reports) = served_reports(server) {
            return (reports, From::Server(server.address()));
        }
    }
    let asked = Asked::collect(
        &setup.config.remotes,
        link::ask_all(&setup.config.remotes, &options()),
        now,
    );
    (asked.reports, From::Asked)
}

/// `GET /remotes` of the running Slate; `None` from an older one that has no such endpoint.
pub fn served_reports(server: &Client) -> Option<Vec<Report>> {
    let value: serde_json::Value = server.get_json("/remotes").ok()?;
    serde_json::from_value(value["remotes"].clone()).ok()
}

/// What one question to each remote told: their sessions, and a report for each.
pub struct Asked {
    pub reports: Vec<Report>,
    pub sessions: Vec<Session>,
}

impl Asked {
    /// Starts asking every configured remote on a thread of its own; `None` without remotes.
    pub fn start(config: &Config) -> Option<std::thread::JoinHandle<link::Answers>> {
        (!config.remotes.is_empty()).then(|| link::ask_all_later(config.remotes.clone(), options()))
    }

    /// The answers, in `entries`' order, as reports and sessions.
    pub fn collect(entries: &[RemoteEntry], answers: link::Answers, now: Timestamp) -> Asked {
        let mut reports = Vec::new();
        let mut sessions = Vec::new();
        for (entry, answer) in entries.iter().zip(answers) {
            let (status, error, count) = match answer {
                Ok(answered) => {
                    let count = answered.len();
                    sessions.extend(answered);
                    (Status::Connected, None, count)
                }
                Err(failure) => (Status::Unreachable, Some(failure.message), 0),
            };
            reports.push(Report {
                name: entry.name.clone(),
                destination: entry.destination.clone(),
                status,
                since: now,
                error,
                sessions: count,
                next_attempt: None,
                version: None,
            });
        }
        Asked { reports, sessions }
    }

    /// Waits for a question started with [`Asked::start`].
    pub fn finish(
        config: &Config,
        started: std::thread::JoinHandle<link::Answers>,
        now: Timestamp,
    ) -> Asked {
        let answers = started.join().unwrap_or_default();
        Asked::collect(&config.remotes, answers, now)
    }
}

/// The remote entry and the id in `NAME:ID`, when `NAME` is a configured remote.
pub fn reference<'a>(config: &'a Config, id: &'a str) -> Option<(&'a RemoteEntry, &'a str)> {
    let (name, rest) = id.split_once(':')?;
    config
        .remotes
        .iter()
        .find(|entry| entry.name.as_str() == name)
        .map(|entry| (entry, rest))
}

/// Refuses a command that changes this machine's store for a session on another machine.
pub fn refuse_remote(config: &Config, id: &str, command: &str) -> anyhow::Result<()> {
    if let Some((entry, rest)) = reference(config, id) {
        anyhow::bail!(
            "{id} is a session on {}: run `slate {command} {rest}` there (its intents, mutes and claims \
             live in that machine's store)",
            entry.name
        );
    }
    Ok(())
}

/// One session on a remote, asked of the remote itself (no Slate runs here to know it).
pub fn asked_session(entry: &RemoteEntry, id: &str) -> anyhow::Result<Session> {
    let sessions = link::ask_sessions(entry, &options())
        .map_err(|failure| anyhow::anyhow!("{}", failure.message))?;
    let keys: Vec<_> = sessions.iter().map(Session::key).collect();
    let key = pick(keys.iter(), id).with_context(|| format!("on {}", entry.name))?;
    Ok(sessions
        .into_iter()
        .find(|session| session.key() == *key)
        .expect("the key picked is one of them"))
}

/// `slate focus NAME:ID`: a local terminal attached to the remote's tmux session, or the command
/// that gets there (printed alone on stdout, with the reason on stderr).
pub fn focus(
    entry: &RemoteEntry,
    id: &str,
    dry_run: bool,
    out: &mut impl Write,
) -> anyhow::Result<ExitCode> {
    let plan = attach::plan(entry, &options(), id)
        .map_err(|failure| anyhow::anyhow!("{}", failure.message))?;
    let line = report::terminal_text(&plan.command_line()).into_owned();
    match &plan {
        attach::Plan::Shell { reason, .. } => {
            eprintln!("slate: {}", report::terminal_text(reason));
            eprintln!("slate: this opens a shell there:");
            writeln!(out, "{line}")?;
        }
        attach::Plan::Tmux { .. } if dry_run => writeln!(out, "{line}")?,
        attach::Plan::Tmux { .. } => match attach::open_terminal(plan.args()) {
            Ok(terminal) => writeln!(out, "opened {terminal}: {line}")?,
            Err(reason) => {
                eprintln!("slate: cannot open a terminal here ({reason}); run:");
                writeln!(out, "{line}")?;
            }
        },
    }
    Ok(ExitCode::SUCCESS)
}

/// The `slate remote list` table, with each remote's problem under it.
pub fn table(reports: &[Report], now: Timestamp) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if reports.is_empty() {
        out.push_str("No remote machines. (`slate remote add NAME DEST` follows one over SSH.)\n");
        return out;
    }
    let _ = writeln!(
        out,
        "{:<12} {:<12} {:<6} {:<8} DESTINATION",
        "NAME", "STATUS", "SINCE", "SESSIONS"
    );
    for remote in reports {
        let _ = writeln!(
            out,
            "{:<12} {:<12} {:<6} {:<8} {}",
            remote.name.as_str(),
            remote.status.as_str(),
            report::age(remote.since, now),
            remote.sessions,
            remote.destination
        );
        if let Some(error) = &remote.error {
            let _ = writeln!(out, "{:<12} {error}", "");
        }
    }
    report::terminal_text(&out).into_owned()
}

/// The remote machines' part of `slate doctor`.
pub fn doctor(reports: &[Report], from: &From, now: Timestamp) -> String {
    if reports.is_empty() {
        return String::new();
    }
    format!(
        "\nRemote machines:\n{}{}\n",
        table(reports, now),
        from.note()
    )
}
