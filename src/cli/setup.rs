//! What every command starts from: the environment read once, Slate's places and the config
//! (`Setup`), the time it decides at and the replay switches (`Context`), the engine it runs once,
//! and this HOME's running Slate when one answers, with the sessions read from it.
//!
//! One engine: when this HOME's Slate server runs (the tray app or `slate serve`), a command that
//! reads sessions answers from it, so it shows what the tray shows, including what only a running
//! engine knows (hosted terminals, the death of a process it saw vouching). A replay (`--now`,
//! `--processes`) or `SLATE_STANDALONE=1` always decides on its own.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use slate::client::{self, Answer, Client};
use slate::config::{self, Config};
use slate::engine::{Engine, Options, ProcessSource};
use slate::model::{Session, SessionKey, Status, Timestamp};
use slate::places::{Places, PlacesError};
use slate::sources::processes;
use slate::sources::roots::Env;
use slate::{settings, store};

/// What every command starts from: the environment read once, Slate's places, and the config.
pub struct Setup {
    pub env: Env,
    pub places: Result<Places, PlacesError>,
    pub config: Config,
}

impl Setup {
    /// Reads the environment, finds Slate's places and reads the config. A config file that does
    /// not parse stops the command with an error naming the file, the line and the key (the
    /// one config-error policy for commands; `settings` says the rest).
    pub fn read() -> anyhow::Result<Setup> {
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

    pub fn places(&self) -> anyhow::Result<&Places> {
        self.places.as_ref().map_err(|err| anyhow::anyhow!("{err}"))
    }

    pub fn open_store(&self) -> anyhow::Result<store::Store> {
        let path = self.places()?.store_file();
        store::open(&path).with_context(|| format!("cannot open Slate's store {}", path.display()))
    }

    /// True when Slate's store exists: one not created yet holds nothing, and is not created
    /// just to read it.
    pub fn has_store(&self) -> bool {
        self.places
            .as_ref()
            .is_ok_and(|places| places.store_file().exists())
    }

    /// The client of the running Slate: at `SLATE_API` when set, else over this user's API
    /// socket, and at the config's `[server] listen` when nothing listens there
    /// (`Client::local`).
    pub fn client(&self) -> Client {
        let listen = self.config.server.listen;
        match &self.places {
            Ok(places) => Client::local(&self.env, places, listen, self.token()),
            Err(_) => self.client_at(client::engine_address(&self.env, listen)),
        }
    }

    /// The client of a Slate at `address`, with this HOME's token when one exists. A token file
    /// that cannot be read is said and leaves the client without a token: what needs one (a
    /// nudge, `slate run`'s reports) is best effort, and a command that reads finds that no
    /// running Slate can be shown to be this HOME's, so it reads for itself.
    pub fn client_at(&self, address: SocketAddr) -> Client {
        Client::new(address, self.token())
    }

    /// This HOME's token, when there is one (`client_at` says what a token that cannot be read
    /// means).
    fn token(&self) -> Option<String> {
        match &self.places {
            Ok(places) => slate::token::read_token(&places.token_file()).unwrap_or_else(|err| {
                tracing::warn!("{err}; a running Slate hears nothing from this command");
                None
            }),
            Err(_) => None,
        }
    }

    /// Asks a running server to re-read now, so a change made here shows at once. Any failure
    /// (no server, no token, an old server) is ignored: the server's periodic scans catch up.
    pub fn nudge_server(&self) {
        let client = self.client();
        if client.has_token() {
            let _ = client.post("/sessions/live/refresh", None, Duration::from_millis(1500));
        }
    }
}

/// What a command runs with besides its arguments: the setup, the time it decides at, and the
/// replay switches.
pub struct Context {
    pub setup: Setup,
    pub now: Timestamp,
    /// `--now` was given: a replay at that time, which reads no terminal.
    pub replayed_at: bool,
    /// `--processes`: a recorded process table instead of the live one.
    pub processes: Option<PathBuf>,
}

impl Context {
    /// A replay (`--now`, `--processes`): it decides on its own, from what it was given.
    pub fn replay(&self) -> bool {
        self.replayed_at || self.processes.is_some()
    }

    /// The engine's options from the config, with the recorded process table when one was given.
    pub fn options(&self) -> anyhow::Result<Options> {
        let mut options = settings::engine_options(self.setup.env.clone(), &self.setup.config);
        if let Some(path) = &self.processes {
            let table = processes::load_table(path)
                .with_context(|| format!("cannot read the process table {}", path.display()))?;
            options.processes = ProcessSource::Recorded(table);
        }
        Ok(options)
    }

    /// An engine with `options` that has read everything once, the intents and claims first, so
    /// the first decision of every session already shows them. With `sense`, the hook events
    /// spooled in the last hour are read (and left for a Slate that starts later:
    /// `hooks::read_spool`), and the panes of sessions with a tool call open are read once
    /// (`engine::sense_once`), so a prompt a hook told of, or one on screen, shows.
    pub fn engine(&self, options: Options, sense: bool) -> anyhow::Result<Engine> {
        let mut engine = Engine::new(options);
        if self.setup.has_store() {
            engine.load_custody(&self.setup.open_store()?, self.now)?;
        }
        engine.refresh(self.now);
        if let (true, Ok(places)) = (sense, &self.setup.places) {
            let spool = places.data_dir.join(slate::hooks::SPOOL_FILE);
            for (at, report) in slate::hooks::read_spool(&spool, self.now) {
                engine.hook(&report, at, self.now);
            }
        }
        if sense && engine.scans_live_processes() {
            slate::engine::sense_once(&mut engine, self.now, slate::live::system_clock);
        }
        Ok(engine)
    }

    /// The running Slate for a command that reads sessions, unless this is a replay or
    /// `SLATE_STANDALONE=1` asks the command to decide on its own.
    pub fn reading_server(&self) -> Option<Server> {
        if self.replay() || standalone_asked() {
            return None;
        }
        running_server(self.setup.client(), Duration::from_millis(300))
    }
}

/// A running Slate that holds this HOME's token, and the version it reported.
pub struct Server {
    pub client: Client,
    pub version: String,
}

/// Which engine answered a command, as its JSON says: `{"kind": "server", "address", "version"}`
/// for a running Slate, `{"kind": "standalone"}` for this process's own.
pub fn engine_json(server: Option<&Server>) -> serde_json::Value {
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
pub fn running_server(client: Client, timeout: Duration) -> Option<Server> {
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
        Answer::NotYours(why) => {
            eprintln!("slate: {why}; reading for myself");
            None
        }
    }
}

/// True when `SLATE_STANDALONE=1` asks this command to decide on its own.
fn standalone_asked() -> bool {
    std::env::var_os("SLATE_STANDALONE").is_some_and(|value| value == "1")
}

/// The running Slate, unless `SLATE_STANDALONE=1` asks this command to decide on its own.
pub fn server_unless_standalone(setup: &Setup) -> Option<Server> {
    if standalone_asked() {
        return None;
    }
    running_server(setup.client(), Duration::from_millis(300))
}

/// The live list of a running Slate server.
pub fn sessions_from_server(server: &Client) -> Option<Vec<Session>> {
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
pub fn with_history(server: &Client, live: Vec<Session>, local: Vec<Session>) -> Vec<Session> {
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
pub fn find_session(
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
