//! `slate serve` and `slate watch`: the commands that run for as long as the person wants.
//!
//! `serve` reads the config, opens the store, starts the live service and serves the API on
//! loopback until Ctrl-C or SIGTERM. `watch` follows a running server's event stream, or runs an
//! engine of its own when no server answers, and prints one line (or one JSON object) per change.
//! Both only wire the library's pieces together; the rules live in the library.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use slate::api::{self, Security};
use slate::config::{self, Config};
use slate::engine::Options;
use slate::follow;
use slate::live::{self, Service, Timing, Update};
use slate::model::Session;
use slate::report;
use slate::sources::roots::Env;
use slate::store::{self, Platform};

/// The platform's config and data folders for this person.
fn folders(env: &Env) -> anyhow::Result<(PathBuf, PathBuf)> {
    let home = env
        .home
        .clone()
        .context("neither HOME nor USERPROFILE is set, so slate cannot find its folders")?;
    let appdata = std::env::var_os("APPDATA").map(PathBuf::from);
    let (config_variable, data_variable) = match Platform::current() {
        Platform::Windows => (appdata.clone(), appdata),
        _ => (env.xdg_config_home.clone(), env.xdg_data_home.clone()),
    };
    Ok((
        store::config_dir(&home, config_variable.as_deref()),
        store::data_dir(&home, data_variable.as_deref()),
    ))
}

fn load_config(config_dir: &std::path::Path) -> anyhow::Result<Config> {
    let path = config::default_path(config_dir);
    let (config, notes) = config::load_or_default(&path)
        .with_context(|| format!("cannot use the config file {}", path.display()))?;
    for note in notes {
        tracing::warn!("{note}");
    }
    Ok(config)
}

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

pub fn serve(listen: Option<&str>, mut options: Options) -> anyhow::Result<ExitCode> {
    let (config_dir, data_dir) = folders(&options.env)?;
    let config = load_config(&config_dir)?;
    let address = address(listen, &config)?;
    options.policy.session_idle =
        Duration::from_secs(u64::from(config.project_policy.session_idle_minutes) * 60);
    let token =
        slate::token::load_or_create_token(&config_dir).context("cannot set up the API token")?;

    // Bind first, so a second `slate serve` fails at once rather than after a full read.
    let listener = match std::net::TcpListener::bind(address) {
        Ok(listener) => listener,
        Err(err) if err.kind() == std::io::ErrorKind::AddrInUse => bail!(
            "port {} is already in use on {} (is another `slate serve` running?); \
             pass --listen 127.0.0.1:0 to pick a free port",
            address.port(),
            address.ip()
        ),
        Err(err) => bail!("cannot listen on {address}: {err}"),
    };
    let local = listener.local_addr()?;
    listener.set_nonblocking(true)?;

    let store_path = store::default_path(&data_dir);
    let store = match store::open(&store_path) {
        Ok(store) => Some(store),
        Err(err) => {
            tracing::error!("running without a store (no history this run): {err}");
            None
        }
    };
    let (handle, thread) = live::start(Service {
        options,
        timing: Timing::default(),
        store,
        clock: live::system_clock,
    });

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
        let security = Security {
            port: local.port(),
            token,
        };
        api::serve(listener, handle.clone(), security, shutdown_signal()).await
    });
    handle.shutdown();
    let _ = thread.join();
    result.context("the server stopped")?;
    Ok(ExitCode::SUCCESS)
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

pub fn watch(listen: Option<&str>, json: bool, mut options: Options) -> anyhow::Result<ExitCode> {
    let (config_dir, _) = folders(&options.env)?;
    let config = load_config(&config_dir)?;
    let address = address(listen, &config)?;
    options.policy.session_idle =
        Duration::from_secs(u64::from(config.project_policy.session_idle_minutes) * 60);
    let mut out = std::io::stdout().lock();
    if address.port() != 0 && follow::probe(address, Duration::from_millis(500)) {
        tracing::info!("following the server at {address}");
        let mut events = follow::open_stream(address)?;
        while let Some(event) = events.next_event()? {
            let Ok(data) = serde_json::from_str::<serde_json::Value>(&event.data) else {
                continue;
            };
            let line = match event.event.as_str() {
                "snapshot" => Printed::Snapshot(
                    serde_json::from_value(data["sessions"].clone()).unwrap_or_default(),
                ),
                "session" => match serde_json::from_value(data) {
                    Ok(session) => Printed::Update(Update::Session {
                        session: Box::new(session),
                    }),
                    Err(_) => continue,
                },
                "removed" => Printed::Update(Update::Removed {
                    agent: match serde_json::from_value(data["agent"].clone()) {
                        Ok(agent) => agent,
                        Err(_) => continue,
                    },
                    id: data["id"].as_str().unwrap_or_default().to_string(),
                }),
                _ => continue,
            };
            print(&mut out, &line, json)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    tracing::info!("no server answers at {address}; watching with an engine of this process");
    let (handle, _thread) = live::start(Service {
        options,
        timing: Timing::default(),
        store: None,
        clock: live::system_clock,
    });
    let (snapshot, mut updates) = handle.subscribe();
    print(&mut out, &Printed::Snapshot(snapshot), json)?;
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
        print(&mut out, &line, json)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What `watch` prints: the list as it stands, then each change.
enum Printed {
    Snapshot(Vec<Session>),
    Update(Update),
}

fn print(out: &mut impl Write, printed: &Printed, json: bool) -> anyhow::Result<()> {
    let now = live::system_clock();
    if json {
        let value = match printed {
            Printed::Snapshot(sessions) => {
                serde_json::json!({ "type": "snapshot", "sessions": sessions })
            }
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
            Printed::Update(Update::Removed { agent, id }) => {
                writeln!(out, "{}", report::watch_removed(*agent, id, now))?;
            }
        }
    }
    out.flush()?;
    Ok(())
}
