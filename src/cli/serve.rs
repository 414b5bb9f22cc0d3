//! `slate serve` and `slate watch`: the commands that run for as long as the person wants.
//!
//! `serve` opens the store, starts the live service (which follows the config file from then on,
//! and the config's remote machines over SSH) and serves the API on loopback until Ctrl-C or
//! SIGTERM. `watch` follows the event stream of a running server that holds this HOME's token,
//! or runs an engine of its own (this machine only) when none does, and prints one line (or one
//! JSON object) per change, the list as it stands first. `slate watch --json` is also what
//! another machine's Slate runs over SSH to follow this one (`remote`), so it stops as soon as
//! nobody reads its output. Both only wire the library's pieces together; the rules live in the
//! library.

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use slate::api::{self, Security};
use slate::client::Answer;
use slate::config::{self, Config};
use slate::engine::Options;
use slate::live::{self, Service, Timing, Update};
use slate::mirror::Told;
use slate::model::{ServerKind, Session};
use slate::report;
use slate::settings::Settings;
use slate::store;

use super::setup::{engine_json, running_server, Setup};

/// The address to listen on or follow: `--listen` when given (loopback only), else the config's.
fn address(listen: Option<&str>, config: &Config) -> anyhow::Result<SocketAddr> {
    let Some(text) = listen else {
        return Ok(config.server.listen);
    };
    let address: SocketAddr = text.parse().with_context(|| {
        format!(
            "--listen {text} is not an ip:port address such as 127.0.0.1:{}",
            config::DEFAULT_PORT
        )
    })?;
    if !address.ip().is_loopback() {
        bail!(
            "--listen {text} is not a loopback address: slate only listens on this machine \
             (use 127.0.0.1:PORT or [::1]:PORT)"
        );
    }
    Ok(address)
}

pub fn serve(listen: Option<&str>, setup: &Setup, options: Options) -> anyhow::Result<ExitCode> {
    let places = setup.places()?;
    let address = address(listen, &setup.config)?;
    let token = slate::token::load_or_create_token(&places.token_file())
        .context("cannot set up the API token")?;

    // Bind first, so a second `slate serve` fails at once rather than after a full read, and so
    // the desktop app, which binds first too, finds the port taken and follows this one.
    let listener = match std::net::TcpListener::bind(address) {
        Ok(listener) => listener,
        Err(err) if err.kind() == std::io::ErrorKind::AddrInUse => {
            return port_taken(address, token);
        }
        Err(err) => bail!("cannot listen on {address}: {err}"),
    };
    let local = listener.local_addr()?;
    listener.set_nonblocking(true)?;
    // This user's private way in, beside the port: taken by a running Slate, it is named as the
    // holder of a taken port is.
    let socket_path = places.api_socket(&setup.env);
    let mut socket = match api::local::listen(&socket_path) {
        Ok(socket) => socket,
        Err(api::local::LocalError::Taken(path)) => {
            let client = slate::client::Client::new(local, Some(token)).with_socket(Some(path));
            return taken(client, &Held::Socket(socket_path.display().to_string()));
        }
        Err(err) => bail!("cannot listen on the API socket: {err}"),
    };
    let unix = socket
        .take_listener()
        .context("the API socket has no listener")?;

    let store = match store::open(&places.store_file()) {
        Ok(store) => Some(store),
        Err(err) => {
            tracing::error!("running without a store (no history this run): {err}");
            None
        }
    };
    // The config was read when the command started; from now on an edit applies while serving.
    let settings = Settings::new(Some(places.config_file()), setup.config.clone());
    let (handle, thread) = live::start(Service {
        options,
        timing: Timing::default(),
        store,
        clock: live::system_clock,
        settings,
        remotes: Some(slate::remote::LinkOptions::default()),
    });
    // The engine runs here, so the push channel does too: one machine pushes once.
    slate::push::start(&handle, slate::push::Setup::of(places));

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        {
            let mut out = std::io::stdout().lock();
            writeln!(out, "listening on http://{local}")?;
            out.flush()?;
        }
        // The page's address with the token in its fragment, which a browser never sends to a
        // server: once, to this process's own stderr (the person's terminal, or their user
        // journal), never into the page the server hands to whoever asks. A closed stderr does
        // not stop the server.
        let _ = writeln!(
            std::io::stderr().lock(),
            "slate: open the page at http://{local}/#token={token} \
             (the address holds your API token: keep it to yourself)"
        );
        let security = Security {
            port: local.port(),
            token,
            kind: ServerKind::Service,
        };
        let stopping = async {
            shutdown_signal().await;
            end_within(STOP_WITHIN);
        };
        api::serve_local(listener, unix, handle.clone(), security, stopping).await
    });
    drop(socket);
    handle.shutdown();
    let _ = thread.join();
    // A request still being answered (a forwarded answer waits on its remote) is not waited
    // for: the stop is due now.
    runtime.shutdown_timeout(Duration::from_millis(100));
    result.context("the server stopped")?;
    Ok(ExitCode::SUCCESS)
}

/// How long `slate serve` takes at most to end after Ctrl-C or SIGTERM.
const STOP_WITHIN: Duration = Duration::from_millis(1500);

/// Ends this process `within` from now if it has not ended by then. The orderly stop (the
/// listener closed, the engine loop stopped before its next event, each remote's `ssh` killed)
/// takes milliseconds; this bounds whatever it waits on, a request being answered or a
/// terminal that does not answer, so a service manager's SIGTERM always ends `slate serve` in
/// time. The store is SQLite, whose transactions survive an exit at any point.
fn end_within(within: Duration) {
    let spawned = std::thread::Builder::new()
        .name("slate-stop".to_string())
        .spawn(move || {
            std::thread::sleep(within);
            tracing::warn!("the orderly stop took more than {within:?}; ending now");
            std::process::exit(0);
        });
    if let Err(err) = spawned {
        tracing::debug!("cannot bound the stop: {err}");
    }
}

/// The exit status of a `slate serve` that does not start because this user's engine already
/// runs (the app, or another `slate serve`). The user unit does not restart on it
/// (`RestartPreventExitStatus=3` in packaging/slate.service), and the manual page lists it.
pub const ALREADY_SERVED: u8 = 3;

/// How long `serve` waits to learn who holds its port: a Slate that has just started answers
/// after its first read of the machine.
const WHO_WAIT: Duration = Duration::from_secs(10);

/// Says who holds `address` when it is taken. One engine runs per user: when it is this user's
/// Slate (the app or another `slate serve`, which takes this HOME's token), this one says so and
/// ends with [`ALREADY_SERVED`]; anything else is an error.
fn port_taken(address: SocketAddr, token: String) -> anyhow::Result<ExitCode> {
    let client = slate::client::Client::new(address, Some(token));
    taken(client, &Held::Port(address))
}

/// What a Slate that does not start found taken.
enum Held {
    Port(SocketAddr),
    /// The API socket, by its path.
    Socket(String),
}

impl std::fmt::Display for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Held::Port(address) => write!(f, "port {} on {}", address.port(), address.ip()),
            Held::Socket(path) => write!(f, "the API socket {path}"),
        }
    }
}

/// Says who holds `place` (a port, or the API socket) that `client` reaches, as [`port_taken`].
fn taken(client: slate::client::Client, place: &Held) -> anyhow::Result<ExitCode> {
    match client.answer(WHO_WAIT) {
        Answer::Ours { version, kind, pid } => {
            let who = match kind {
                Some(ServerKind::App) => "the Slate app".to_string(),
                Some(ServerKind::Service) => "another `slate serve`".to_string(),
                None => format!("slate {version}"),
            };
            let pid = pid.map(|pid| format!(" (pid {pid})")).unwrap_or_default();
            eprintln!(
                "slate: {who} already serves on {}{pid}; it is this user's engine, \
                 so this one does not start",
                match place {
                    Held::Port(address) => address.to_string(),
                    Held::Socket(path) => path.clone(),
                }
            );
            Ok(ExitCode::from(ALREADY_SERVED))
        }
        Answer::Foreign(why) => bail!(
            "{place} is held by another user's or HOME's Slate ({why}); \
             pass --listen 127.0.0.1:0 to pick a free port"
        ),
        Answer::Silent => match place {
            Held::Port(address) => bail!(
                "port {} is already in use on {} by a program that is not a Slate; \
                 pass --listen 127.0.0.1:0 to pick a free port",
                address.port(),
                address.ip()
            ),
            Held::Socket(path) => bail!(
                "the API socket {path} is in use by a program that does not answer as a Slate"
            ),
        },
        Answer::NotYours(why) => bail!(
            "{place} is held by a listener that is not yours ({why}); \
             pass --listen 127.0.0.1:0 to pick a free port"
        ),
    }
}

/// Completes on Ctrl-C, or on SIGTERM where there is one.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

pub fn watch(
    listen: Option<&str>,
    json: bool,
    setup: &Setup,
    options: Options,
) -> anyhow::Result<ExitCode> {
    let client = match listen {
        Some(_) => setup.client_at(address(listen, &setup.config)?),
        None => setup.client(),
    };
    let address = client.address();
    exit_when_unread();
    let mut out = std::io::stdout().lock();
    let server = if address.port() == 0 {
        None
    } else {
        running_server(client, Duration::from_millis(500))
    };
    if let Some(server) = server {
        tracing::info!("following the server at {address}");
        let engine = engine_json(Some(&server));
        let mut events = server.client.events()?;
        while let Some(event) = events.next_event()? {
            let line = match slate::mirror::read_event(&event) {
                Some(Told::Snapshot(sessions)) => Printed::Snapshot(sessions),
                Some(Told::Update(update)) => Printed::Update(update),
                None => continue,
            };
            print(&mut out, &line, json, &engine)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    tracing::info!("no server answers at {address}; watching with an engine of this process");
    let (handle, _thread) = live::start(Service {
        options,
        timing: Timing::default(),
        store: None,
        clock: live::system_clock,
        settings: Settings::new(None, setup.config.clone()),
        // This is the engine a remote runs for another machine's link: it follows no remotes
        // of its own, so two machines that follow each other never loop.
        remotes: None,
    });
    let engine = engine_json(None);
    let (snapshot, mut updates) = handle.subscribe();
    print(&mut out, &Printed::Snapshot(snapshot), json, &engine)?;
    loop {
        let line = match updates.blocking_recv() {
            Ok(update) => Printed::Update(update),
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                let (snapshot, fresh) = handle.subscribe();
                updates = fresh;
                Printed::Snapshot(snapshot)
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
        };
        print(&mut out, &line, json, &engine)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What `watch` prints: the list as it stands, then each change.
enum Printed {
    Snapshot(Vec<Session>),
    Update(Update),
}

/// Prints one `watch` line; a JSON snapshot says which engine it follows (`engine_json`).
fn print(
    out: &mut impl Write,
    printed: &Printed,
    json: bool,
    engine: &serde_json::Value,
) -> anyhow::Result<()> {
    let now = live::system_clock();
    if json {
        let value = match printed {
            // The version lets a machine that follows this one over SSH say what runs here.
            Printed::Snapshot(sessions) => serde_json::json!({
                "type": "snapshot",
                "sessions": sessions,
                "engine": engine,
                "version": env!("CARGO_PKG_VERSION"),
            }),
            Printed::Update(update) => serde_json::to_value(update)?,
        };
        writeln!(out, "{value}")?;
    } else {
        match printed {
            Printed::Snapshot(sessions) => {
                for session in sessions {
                    writeln!(out, "{}", report::watch_line(session, now))?;
                }
            }
            Printed::Update(Update::Session { session }) => {
                writeln!(out, "{}", report::watch_line(session, now))?;
            }
            Printed::Update(Update::Removed { agent, id, machine }) => {
                let key = slate::model::SessionKey::new(*agent, id.as_str()).on(machine.clone());
                writeln!(out, "{}", report::watch_removed(&key, now))?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// Ends this process as soon as nobody reads its output: when `slate watch` runs for another
/// machine over SSH and the link drops, `sshd` closes the pipe, and a watcher that prints
/// nothing for hours would otherwise live on (and keep its engine running) until its next line.
/// A thread waits on the output for the hang-up or error a closed pipe or terminal reports.
fn exit_when_unread() {
    #[cfg(unix)]
    {
        let spawned = std::thread::Builder::new()
            .name("slate-watch-output".to_string())
            .spawn(|| {
                use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
                use std::os::fd::AsFd;
                let stdout = std::io::stdout();
                let closed = PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL;
                loop {
                    let mut fds = [PollFd::new(stdout.as_fd(), PollFlags::empty())];
                    match poll(&mut fds, PollTimeout::NONE) {
                        Ok(_)
                            if fds[0]
                                .revents()
                                .is_some_and(|events| events.intersects(closed)) =>
                        {
                            std::process::exit(0)
                        }
                        Ok(_) => {}
                        Err(nix::errno::Errno::EINTR) => {}
                        // A descriptor poll cannot watch (a regular file): nothing to wait for.
                        Err(_) => return,
                    }
                }
            });
        if let Err(err) = spawned {
            tracing::debug!("cannot watch the output for its reader: {err}");
        }
    }
}
