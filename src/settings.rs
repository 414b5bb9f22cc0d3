//! From the config file to what the engine and the surfaces use, once for every entry point, and
//! the one policy for a config file that does not parse.
//!
//! [`engine_options`] turns a `Config` into the engine's `Options` (the tracker's policy), and
//! [`reclaim_after`] into the live list's cleanup delay; the command line, `slate serve` and the
//! desktop app all call them. The policy for errors: a command that runs once stops with the
//! error, which names the file, the line, the section and the key (`config::load_or_default`
//! says so). A process that keeps running holds a [`Settings`]: at start a broken file gives the
//! defaults and the problem, to show in the window and the tray; later the live service re-reads
//! the file when it changes ([`Settings::reload`]), applies what parses, and keeps the last good
//! config when an edit breaks it, saying so in the log and in `/health`.
//!
//! Every setting applies to a running engine at once except `[server] listen`: the listener is
//! bound at start, so a new address takes effect at the next start ([`Settings::restart_needed`]
//! says so). What the values mean is decided by the modules that use them (`tracker`, `policy`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::config::{self, Config};
use crate::engine::Options;
use slate_core::tracker::Policy;
use slate_sources::sources::roots::Env;

/// The engine's options for `env` under `config`: the process's own environment and live
/// processes, with the tracker's policy from `[project-policy]`.
pub fn engine_options(env: Env, config: &Config) -> Options {
    let mut options = Options::from_env(env);
    options.policy = policy(config, &options.policy);
    options
}

/// `base` with what the config sets: `[project-policy] session_idle_minutes` and `[notifications]
/// muted_agents`, and the price table with `[prices]` over it.
pub fn policy(config: &Config, base: &Policy) -> Policy {
    Policy {
        session_idle: minutes(config.project_policy.session_idle_minutes),
        muted_agents: config.notifications.muted_agents.clone(),
        prices: std::sync::Arc::new(
            slate_core::usage::prices::Table::shipped().with_overrides(&config.prices),
        ),
        ..base.clone()
    }
}

/// How long a closed, reclaimable session stays on the live list: `[cleanup]
/// reclaim_after_minutes`.
pub fn reclaim_after(config: &Config) -> Duration {
    minutes(config.cleanup.reclaim_after_minutes)
}

fn minutes(count: u32) -> Duration {
    Duration::from_secs(u64::from(count) * 60)
}

/// The settings a long-running process works with: the config in force, the file it came from,
/// and what is wrong with that file now, if anything.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Settings {
    /// The config file, when there is one to read (a test or the demo runs without).
    pub file: Option<PathBuf>,
    /// The config in force: the file's, or the last good one when the file broke since, or the
    /// defaults when it never read.
    pub config: Config,
    /// Why the file as it reads now is not in force, naming the file, the line and the key.
    pub error: Option<String>,
    /// Keys changed in the file since the start that take effect only at the next start.
    pub restart_needed: Vec<String>,
    /// The config this process started with, to tell what needs a restart.
    #[serde(skip)]
    started_with: Config,
}

/// What a re-read of the config file did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reload {
    /// The file says what is already in force.
    Unchanged,
    /// The file changed and parses: its config is in force now.
    Applied,
    /// The file does not parse: the last good config stays in force.
    Kept,
}

impl Settings {
    /// Settings with a config already read (by a command that stops on a broken file).
    pub fn new(file: Option<PathBuf>, config: Config) -> Settings {
        Settings {
            file,
            started_with: config.clone(),
            config,
            error: None,
            restart_needed: Vec::new(),
        }
    }

    /// Reads `file` for a process that must run whatever the file says (the desktop app): a file
    /// that does not parse gives the defaults, and the problem is kept to be shown.
    pub fn load(file: &Path) -> Settings {
        let mut settings = Settings::new(Some(file.to_path_buf()), Config::default());
        match config::load_or_default(file) {
            Ok((config, notes)) => {
                log_notes(&notes);
                settings.config = config.clone();
                settings.started_with = config;
            }
            Err(err) => {
                tracing::warn!("{err}; running on the default settings");
                settings.error = Some(err.to_string());
            }
        }
        settings
    }

    /// Reads the file again after a change. What parses is in force from now on; an edit that
    /// breaks the file keeps the last good config, and says so in the log and in `error`.
    pub fn reload(&mut self) -> Reload {
        let Some(file) = self.file.clone() else {
            return Reload::Unchanged;
        };
        match config::load_or_default(&file) {
            Ok((config, notes)) => {
                log_notes(&notes);
                let fixed = self.error.take().is_some();
                if config == self.config {
                    return if fixed {
                        tracing::info!("the config file {} reads again", file.display());
                        Reload::Applied
                    } else {
                        Reload::Unchanged
                    };
                }
                self.restart_needed = restart_needed(&self.started_with, &config);
                for key in &self.restart_needed {
                    tracing::warn!(
                        "`{key}` changed in the config; it takes effect at the next start"
                    );
                }
                tracing::info!("applied the config file {}", file.display());
                self.config = config;
                Reload::Applied
            }
            Err(err) => {
                let message = err.to_string();
                if self.error.as_deref() != Some(message.as_str()) {
                    tracing::warn!("{message}; keeping the last good settings");
                }
                self.error = Some(message);
                Reload::Kept
            }
        }
    }
}

/// The keys that differ between `before` and `after` and apply only at a start.
fn restart_needed(before: &Config, after: &Config) -> Vec<String> {
    let mut keys = Vec::new();
    if before.server.listen != after.server.listen {
        keys.push("server.listen".to_string());
    }
    keys
}

fn log_notes(notes: &[String]) {
    for note in notes {
        tracing::warn!("{note}");
    }
}
