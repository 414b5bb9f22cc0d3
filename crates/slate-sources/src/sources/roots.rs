//! Where each agent keeps its files on this machine, and what the file watcher watches there.
//!
//! [`Env`] holds the environment variables that decide the places (the home folder, the XDG base
//! folders and the agents' own variables, such as `CLAUDE_CONFIG_DIR` or `CODEX_HOME`); tests build
//! one by hand so they never see the real home folder. [`resolve_roots`] reads each description's
//! root candidates against it, and [`Roots::watch_specs`] lists the folders the descriptions ask
//! to watch. [`is_interesting`] is the watcher's filter: the file endings the descriptions name.
//! It deliberately opens no file: which roots exist is the walk's question.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use slate_core::agents::{Base, Description, Registry};
use slate_core::model::AgentKind;

/// The environment variables that decide where the agents and Slate keep their files, and where a
/// running Slate answers. It is read once per process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    pub home: Option<PathBuf>,
    pub xdg_data_home: Option<PathBuf>,
    pub xdg_config_home: Option<PathBuf>,
    /// The agents' own variables, by name (`CLAUDE_CONFIG_DIR`, `OPENCODE_DB`, …).
    pub vars: BTreeMap<String, PathBuf>,
    /// `%APPDATA%`: where Slate keeps its own config and data on Windows (`places`).
    pub appdata: Option<PathBuf>,
    /// `SLATE_API`: the address of a running Slate to talk to instead of the config's (`client`).
    pub slate_api: Option<String>,
    /// `$XDG_RUNTIME_DIR`: where this user's private runtime files go (`places`), the API's
    /// socket among them.
    pub xdg_runtime_dir: Option<PathBuf>,
}

impl Env {
    /// Reads the variables from this process's environment: the home and XDG folders and every
    /// variable a built-in agent's description names. An empty variable counts as unset, as the
    /// agents themselves treat it.
    pub fn from_process() -> Env {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        let names = slate_core::agents::BUILT_IN
            .iter()
            .flat_map(|description| description.root.variables());
        Env {
            home: var("HOME").or_else(|| var("USERPROFILE")),
            xdg_data_home: var("XDG_DATA_HOME"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            vars: names
                .filter_map(|name| Some((name.to_string(), var(name)?)))
                .collect(),
            appdata: var("APPDATA"),
            slate_api: std::env::var("SLATE_API")
                .ok()
                .filter(|value| !value.is_empty()),
            xdg_runtime_dir: var("XDG_RUNTIME_DIR"),
        }
    }

    /// An environment with only a home folder, as tests build one.
    pub fn with_home(home: impl Into<PathBuf>) -> Env {
        Env {
            home: Some(home.into()),
            ..Env::default()
        }
    }

    /// The same environment with one of the agents' variables set.
    pub fn with_var(mut self, name: &str, value: impl Into<OsString>) -> Env {
        self.vars
            .insert(name.to_string(), PathBuf::from(value.into()));
        self
    }

    /// One of the agents' variables, when it is set.
    pub fn var(&self, name: &str) -> Option<&Path> {
        self.vars.get(name).map(PathBuf::as_path)
    }

    /// The folder `base` names. A relative XDG folder counts as unset, as the XDG base directory
    /// specification asks; a relative agent variable is returned as it is, for `first_of` to
    /// refuse.
    fn base(&self, base: Base) -> Option<&Path> {
        match base {
            Base::Home => self.home.as_deref(),
            Base::XdgData => self
                .xdg_data_home
                .as_deref()
                .filter(|path| path.is_absolute()),
            Base::XdgConfig => self
                .xdg_config_home
                .as_deref()
                .filter(|path| path.is_absolute()),
            Base::Var(name) => self.var(name),
        }
    }
}

/// Each agent's root folder, where the environment names one, and the variables its readers
/// consult. A root that does not exist on disk is still listed; the walk reports which it found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Roots {
    roots: Vec<(AgentKind, PathBuf)>,
    env: Env,
}

impl Roots {
    pub fn get(&self, agent: AgentKind) -> Option<&Path> {
        self.roots
            .iter()
            .find(|(kind, _)| *kind == agent)
            .map(|(_, root)| root.as_path())
    }

    /// Every agent with a root, in the registry's order.
    pub fn iter(&self) -> impl Iterator<Item = (AgentKind, &Path)> {
        self.roots
            .iter()
            .map(|(agent, root)| (*agent, root.as_path()))
    }

    /// One of the agents' variables, for a reader that needs more than its root (OpenCode's
    /// `OPENCODE_DB`).
    pub fn var(&self, name: &str) -> Option<&Path> {
        self.env.var(name)
    }

    /// The folders the file watcher should watch: where the descriptions say transcripts,
    /// registries and stores live.
    pub fn watch_specs(&self, registry: Registry) -> Vec<WatchSpec> {
        let mut specs = Vec::new();
        for description in registry.iter() {
            let Some(root) = self.get(description.kind()) else {
                continue;
            };
            for (folder, recursive) in description.watch.folders {
                specs.push(WatchSpec {
                    path: under(root, folder),
                    recursive: *recursive,
                });
            }
        }
        specs
    }
}

/// Each agent's root: the first of its description's candidates whose base the environment names.
pub fn resolve_roots(registry: Registry, env: &Env) -> Roots {
    let roots = registry
        .iter()
        .filter_map(|description| Some((description.kind(), root_of(description, env)?)))
        .collect();
    Roots {
        roots,
        env: env.clone(),
    }
}

fn root_of(description: &Description, env: &Env) -> Option<PathBuf> {
    first_of(description.root.candidates, env)
}

/// The first of `candidates` whose base the environment names, joined with its relative path:
/// an agent's root, or its hook configuration (`agents::hooks`). `None` when that base is an
/// agent's variable set to a relative path (`CODEX_HOME=rel/dir`): the agent reads it against
/// the folder it starts in, which Slate cannot know, so Slate reads and writes nothing there,
/// and does not fall back to the next candidate either (`relative_var` says why).
pub fn first_of(candidates: &[(Base, &str)], env: &Env) -> Option<PathBuf> {
    if relative_var(candidates, env).is_some() {
        return None;
    }
    candidates
        .iter()
        .find_map(|(base, relative)| Some(under(env.base(*base)?, relative)))
}

/// The agent's variable that decides `candidates` when it is set to a relative path: its name
/// and value.
pub fn relative_var<'a>(
    candidates: &[(Base, &str)],
    env: &'a Env,
) -> Option<(&'static str, &'a Path)> {
    let (base, _) = candidates
        .iter()
        .find(|(base, _)| env.base(*base).is_some())?;
    match base {
        Base::Var(name) => env
            .var(name)
            .filter(|value| value.is_relative())
            .map(|value| (*name, value)),
        _ => None,
    }
}

/// `relative` under `folder`; `folder` itself for an empty one (no trailing separator).
fn under(folder: &Path, relative: &str) -> PathBuf {
    if relative.is_empty() {
        folder.to_path_buf()
    } else {
        folder.join(relative)
    }
}

/// One folder to watch.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct WatchSpec {
    pub path: PathBuf,
    pub recursive: bool,
}

/// True for a file whose change can change a session: one whose name ends as one of `registry`'s
/// descriptions says, or a checkout's `HEAD` (a live session's branch, `sources::git`).
pub fn is_interesting(registry: Registry, path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
        return false;
    };
    name.ends_with("HEAD")
        || registry.iter().any(|description| {
            description
                .watch
                .files
                .iter()
                .any(|ending| name.ends_with(ending))
        })
}
