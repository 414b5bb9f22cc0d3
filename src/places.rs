//! Where Slate keeps its own files: its config folder (the config file and the API token), its
//! data folder (the store) and its private runtime folder (`slate run`'s control sockets and the
//! API's socket), resolved once from an [`Env`] by the platform's rules.
//!
//! Every entry point (the command line, `slate serve`, `slate run` and the desktop app) asks this
//! module, so they all find the same files. It reads no environment itself: the caller hands it
//! the `Env` it read once (tests build one over a temporary HOME). Where the agents keep their
//! files is `sources`' business, and what the files hold is `config`'s, `token`'s and `store`'s.

use std::path::{Path, PathBuf};

use slate_sources::sources::roots::Env;

/// The operating systems whose folder conventions differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    Linux,
    MacOs,
    Windows,
}

impl Platform {
    /// The platform this binary was built for; every other Unix follows the Linux (XDG) rules.
    pub fn current() -> Platform {
        if cfg!(target_os = "macos") {
            Platform::MacOs
        } else if cfg!(target_os = "windows") {
            Platform::Windows
        } else {
            Platform::Linux
        }
    }
}

/// Why Slate's folders cannot be found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlacesError {
    #[error("cannot find the home folder (neither HOME nor USERPROFILE is set)")]
    NoHome,
}

/// Slate's own folders for this person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Places {
    /// `<platform config folder>/slate`: the config file and the token.
    pub config_dir: PathBuf,
    /// `<platform data folder>/slate`: the store.
    pub data_dir: PathBuf,
}

impl Places {
    /// The folders for this platform.
    pub fn from_env(env: &Env) -> Result<Places, PlacesError> {
        Places::on(Platform::current(), env)
    }

    /// The folders by `platform`'s rules, so every platform's rule can be tested anywhere: XDG
    /// (`$XDG_CONFIG_HOME`, `$XDG_DATA_HOME`, else `~/.config` and `~/.local/share`) on Linux,
    /// `~/Library/Application Support` on macOS, and `%APPDATA%` (else `~/AppData/Roaming`) on
    /// Windows.
    pub fn on(platform: Platform, env: &Env) -> Result<Places, PlacesError> {
        let home = env.home.as_deref().ok_or(PlacesError::NoHome)?;
        let (config, data) = match platform {
            Platform::Windows => (env.appdata.as_deref(), env.appdata.as_deref()),
            Platform::Linux | Platform::MacOs => {
                (env.xdg_config_home.as_deref(), env.xdg_data_home.as_deref())
            }
        };
        Ok(Places {
            config_dir: platform_dir(platform, home, config, &[".config"]).join("slate"),
            data_dir: platform_dir(platform, home, data, &[".local", "share"]).join("slate"),
        })
    }

    /// The config file: `<config_dir>/config.toml`.
    pub fn config_file(&self) -> PathBuf {
        self.config_dir.join("config.toml")
    }

    /// The API's bearer token: `<config_dir>/token`.
    pub fn token_file(&self) -> PathBuf {
        self.config_dir.join("token")
    }

    /// Slate's store: `<data_dir>/slate.db`.
    pub fn store_file(&self) -> PathBuf {
        self.data_dir.join("slate.db")
    }

    /// The private folder for `slate run`'s control sockets (`host::control`):
    /// `<xdg_runtime_dir>/slate` when `$XDG_RUNTIME_DIR` (as read) is set and absolute, else
    /// `<data_dir>/run`.
    pub fn runtime_dir(&self, xdg_runtime_dir: Option<&Path>) -> PathBuf {
        match xdg_runtime_dir.filter(|folder| folder.is_absolute()) {
            Some(folder) => folder.join("slate"),
            None => self.data_dir.join("run"),
        }
    }

    /// The API's Unix socket (`api::local`, `client`): `api.sock` in the runtime folder. Here
    /// `$XDG_RUNTIME_DIR` counts only when it is a private folder of this user (a real folder,
    /// not a link, owned by this uid, with no access for group or others); else the socket is
    /// under Slate's own data folder in HOME, `<data_dir>/run/api.sock`.
    pub fn api_socket(&self, env: &Env) -> PathBuf {
        let runtime = env
            .xdg_runtime_dir
            .as_deref()
            .filter(|folder| private_to_this_user(folder));
        self.runtime_dir(runtime).join("api.sock")
    }
}

/// True when `folder` is a real folder (not a link) owned by this process's user, with no access
/// for group or others.
#[cfg(unix)]
pub fn private_to_this_user(folder: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(folder).is_ok_and(|meta| {
        meta.file_type().is_dir()
            && meta.uid() == nix::unistd::geteuid().as_raw()
            && meta.mode() & 0o077 == 0
    })
}

#[cfg(not(unix))]
pub fn private_to_this_user(_folder: &Path) -> bool {
    false
}

/// The platform's folder: `variable` (`$XDG_*_HOME` or `%APPDATA%`, as read) when it is set and
/// absolute, else the platform's default under `home`.
fn platform_dir(
    platform: Platform,
    home: &Path,
    variable: Option<&Path>,
    xdg_fallback: &[&str],
) -> PathBuf {
    // The XDG spec says a relative value is invalid and must be ignored; the same caution costs
    // nothing for %APPDATA%.
    let variable = variable.filter(|folder| folder.is_absolute());
    match platform {
        Platform::MacOs => home.join("Library").join("Application Support"),
        Platform::Windows => match variable {
            Some(folder) => folder.to_path_buf(),
            None => home.join("AppData").join("Roaming"),
        },
        Platform::Linux => match variable {
            Some(folder) => folder.to_path_buf(),
            None => xdg_fallback
                .iter()
                .fold(home.to_path_buf(), |path, part| path.join(part)),
        },
    }
}

/// Makes `folder` the private runtime folder, or says why it cannot be: it is created 0700 when
/// missing (with its parents), and an existing one must be a real folder (not a link) owned by
/// this user; its mode is narrowed to 0700 when it is wider.
pub fn private_folder(folder: &Path) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let shown = folder.display();
    if let Some(parent) = folder.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|error| format!("cannot create {}: {error}", parent.display()))?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(folder) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(format!("cannot create {shown}: {error}")),
    }
    let meta = std::fs::symlink_metadata(folder)
        .map_err(|error| format!("cannot read {shown}: {error}"))?;
    if !meta.file_type().is_dir() {
        return Err(format!("{shown} is not a folder"));
    }
    if meta.uid() != nix::unistd::geteuid().as_raw() {
        return Err(format!("{shown} belongs to another user"));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700))
            .map_err(|error| format!("cannot make {shown} private: {error}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn the_api_socket_is_in_the_runtime_folder_only_when_it_is_private_and_ours() {
        use std::os::unix::fs::PermissionsExt;
        let temp = tempfile::tempdir().unwrap();
        let home = temp.path().join("home");
        let runtime = temp.path().join("runtime");
        std::fs::create_dir_all(&runtime).unwrap();
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
        let env = Env {
            xdg_runtime_dir: Some(runtime.clone()),
            ..Env::with_home(&home)
        };
        let places = Places::on(Platform::Linux, &env).unwrap();
        let fallback = home.join(".local/share/slate/run/api.sock");
        assert_eq!(places.api_socket(&env), runtime.join("slate/api.sock"));
        // Open to others, a link to a private folder, missing, relative, or unset: not used.
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(places.api_socket(&env), fallback);
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
        // Another user's (when this process can give it away, as root).
        if nix::unistd::geteuid().is_root() {
            let other = temp.path().join("other");
            std::fs::create_dir(&other).unwrap();
            std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o700)).unwrap();
            nix::unistd::chown(&other, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
            let theirs = Env {
                xdg_runtime_dir: Some(other),
                ..Env::with_home(&home)
            };
            assert_eq!(places.api_socket(&theirs), fallback);
        }
        let link = temp.path().join("link");
        std::os::unix::fs::symlink(&runtime, &link).unwrap();
        for runtime in [
            Some(link),
            Some(temp.path().join("missing")),
            Some(PathBuf::from("relative")),
            None,
        ] {
            let env = Env {
                xdg_runtime_dir: runtime,
                ..Env::with_home(&home)
            };
            assert_eq!(places.api_socket(&env), fallback);
        }
    }
}
