//! `slate run -- <cli> [args]`: hosts an agent CLI in a terminal Slate owns (`slate::host`),
//! reporting its titles and silences to this HOME's running Slate, and offering a control socket
//! in the runtime folder so an answer can be typed into it. It exits with the CLI's status.

use std::process::ExitCode;

use slate::config::Config;
use slate::places::Places;
use slate::sources::roots::Env;

use super::setup::Setup;

/// Hosts `command`, reporting to the running Slate. A config that does not parse is said on
/// stderr, not fatal: the agent CLI must run as it would without Slate, so its reports go to
/// `SLATE_API` or the default address instead.
pub fn run(command: &[String]) -> anyhow::Result<ExitCode> {
    let setup = Setup::read().unwrap_or_else(|err| {
        eprintln!("slate: {err:#}; reporting to the default address");
        let env = Env::from_process();
        Setup {
            places: Places::from_env(&env),
            env,
            config: Config::default(),
        }
    });
    let client = setup.client();
    let client = client.has_token().then_some(client);
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|value| !value.is_empty())
        .map(std::path::PathBuf::from);
    let control = setup
        .places
        .as_ref()
        .ok()
        .map(|places| places.runtime_dir(runtime.as_deref()));
    let code = slate::host::run(command, client, control.as_deref())?;
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}
