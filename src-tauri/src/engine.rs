//! The app's own engine: the live service it runs in-process when no Slate service serves, and
//! the loopback API it serves from it.
//!
//! [`engine_service`] makes the live service that watches this machine with the options the
//! config makes (`slate::settings::engine_options`: the tracker's policy, `session_idle_minutes`
//! included), the store, the config file to follow and the remote machines; [`demo_service`] the
//! demo's, in its temporary HOME with no store and no remotes. [`start`] runs one and serves its
//! API. [`Own`] is what the app keeps to start one later, when a followed service goes away
//! (`follow`); [`Engine`] is one that runs, stopped at exit (`app`).

use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use slate::live::{self, Service, Timing};
use slate::places::Places;
use slate::settings::{self, Settings};
use slate::sources::roots::Env;

use crate::server::{self, Endpoint};
use crate::source::Source;

/// What the app needs to start an engine of its own later.
pub(crate) struct Own {
    pub(crate) env: Env,
    pub(crate) places: Places,
    pub(crate) listen: SocketAddr,
}

/// The app's own engine: its live service and the thread it runs on.
pub(crate) struct Engine {
    pub(crate) handle: live::Handle,
    pub(crate) thread: std::thread::JoinHandle<()>,
}

/// Starts `service` in-process and serves its API on `listener`, with the push channel when
/// `push` is given (never for the demo: its sessions are made up).
pub(crate) fn start(
    service: Service,
    listener: TcpListener,
    socket: Option<&std::path::Path>,
    token_file: &std::path::Path,
    push: Option<slate::push::Setup>,
) -> anyhow::Result<(Source, Endpoint, Option<Engine>)> {
    let (handle, thread) = live::start(service);
    if let Some(setup) = push {
        slate::push::start(&handle, setup);
    }
    let endpoint = server::start(handle.clone(), listener, socket, token_file)?;
    Ok((
        Source::InProcess(handle.clone()),
        endpoint,
        Some(Engine { handle, thread }),
    ))
}

pub(crate) fn listen_address(config: &slate::config::Config) -> SocketAddr {
    // SLATE_LISTEN overrides the config, so tests and a second copy can run side by side.
    std::env::var("SLATE_LISTEN")
        .ok()
        .and_then(|text| text.parse().ok())
        .filter(|address: &SocketAddr| address.ip().is_loopback())
        .unwrap_or(config.server.listen)
}

/// The live service that watches this machine: the options the config makes (the tracker's
/// policy, `session_idle_minutes` included), the store, and the config file to follow.
pub(crate) fn engine_service(env: &Env, places: &Places, settings: Settings) -> Service {
    Service {
        options: settings::engine_options(env.clone(), &settings.config),
        timing: Timing::default(),
        store: open_store(&places.store_file()),
        clock: live::system_clock,
        settings,
        remotes: Some(slate::remote::LinkOptions::default()),
    }
}

/// The live service that plays the demo in its temporary HOME, with no store.
pub(crate) fn demo_service(demo: &slate::demo::Demo, settings: Settings) -> Service {
    let mut options = settings::engine_options(demo.env.clone(), &settings.config);
    options.processes = demo.processes.clone();
    // The demo changes the agents' registries every few seconds; a real registry only matters
    // at the next process scan, which the demo brings closer.
    let timing = Timing {
        process_scan: Duration::from_secs(2),
        ..Timing::default()
    };
    Service {
        options,
        timing,
        store: None,
        clock: live::system_clock,
        settings,
        // The demo shows its own made-up sessions only.
        remotes: None,
    }
}

fn open_store(path: &std::path::Path) -> Option<slate::store::Store> {
    match slate::store::open(path).and_then(|store| store.migrate().map(|_| store)) {
        Ok(store) => Some(store),
        Err(err) => {
            tracing::warn!("running without a store: {err}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The app once ran its engine on the default policy whatever the config said. Its engine now
    /// takes `[project-policy] session_idle_minutes` from the file (and follows the file); a file
    /// that does not parse gives the defaults and an error that names the file and the key.
    #[test]
    fn the_app_engine_honours_session_idle_minutes() {
        let temp = tempfile::tempdir().unwrap();
        let env = Env {
            home: Some(temp.path().to_path_buf()),
            xdg_config_home: Some(temp.path().join("config")),
            xdg_data_home: Some(temp.path().join("data")),
            ..Env::default()
        };
        let places = Places::from_env(&env).unwrap();
        std::fs::create_dir_all(&places.config_dir).unwrap();
        std::fs::write(
            places.config_file(),
            "[project-policy]\nsession_idle_minutes = 7\n",
        )
        .unwrap();
        let service = engine_service(&env, &places, Settings::load(&places.config_file()));
        assert_eq!(
            service.options.policy.session_idle,
            Duration::from_secs(7 * 60)
        );
        assert_eq!(service.settings.file, Some(places.config_file()));
        assert_eq!(service.settings.error, None);
        assert!(
            service.store.is_some(),
            "the store opens in the data folder"
        );
        assert!(places.store_file().exists());

        std::fs::write(
            places.config_file(),
            "[project-policy]\nsesion_idle_minutes = 7\n",
        )
        .unwrap();
        let service = engine_service(&env, &places, Settings::load(&places.config_file()));
        assert_eq!(
            service.options.policy.session_idle,
            Duration::from_secs(20 * 60),
            "a broken file runs on the defaults"
        );
        let error = service.settings.error.expect("the error is kept to show");
        assert!(error.contains("sesion_idle_minutes"), "{error}");
        assert!(
            error.contains(&places.config_file().display().to_string()),
            "{error}"
        );
    }

    #[test]
    fn the_demo_engine_takes_the_same_options() {
        let settings = Settings::new(
            None,
            slate::config::Config::parse("[project-policy]\nsession_idle_minutes = 3\n").unwrap(),
        );
        let temp = tempfile::tempdir().unwrap();
        let demo = slate::demo::start(Some(temp.path()), live::system_clock).unwrap();
        let service = demo_service(&demo, settings);
        assert_eq!(
            service.options.policy.session_idle,
            Duration::from_secs(3 * 60)
        );
        assert!(service.store.is_none());
    }
}
