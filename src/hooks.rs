//! The agents' own hooks on disk and in flight (docs/hooks.md): `hooks::config` installs and
//! removes Slate's entries in each agent's hook configuration and says what is installed; this
//! module runs `slate hook`, the command those entries run.
//!
//! What an entry is and what a hook's event means is `agents::hooks` (pure). The hook reads the
//! event from standard input within a deadline, hands a bounded report to this HOME's running
//! Slate (`POST /hooks`, with the token) or, when none takes it in time, appends it to a bounded
//! spool in Slate's data folder that the live service reads when it starts (`drain`). The hook always ends within
//! [`BUDGET`], prints nothing and exits 0: whatever happens to Slate, the agent goes on, and the
//! agent's dialog stays the person's.

use std::fs;
use std::io::{self, Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::agents::hooks::{self, HookReport, EVENT_LIMIT};
use crate::agents::Registry;
use crate::client::Client;
use crate::model::Timestamp;
use crate::places::Places;
use crate::sources::regular_file;
use crate::sources::roots::Env;

/// The most `slate hook` takes, from its start to its exit.
pub const BUDGET: Duration = Duration::from_millis(250);
/// How long `slate hook` waits for its event on standard input.
const READ_WITHIN: Duration = Duration::from_millis(100);
/// What `slate hook` keeps back from its budget for the spool and its exit.
const MARGIN: Duration = Duration::from_millis(40);
/// The longest `slate hook` waits for a running Slate to take its report: a Slate answers in a
/// few milliseconds, so one that takes longer is hanging, and the report goes to the spool.
const POST_WITHIN: Duration = Duration::from_millis(100);
/// The spool's name in Slate's data folder, and the most it holds.
pub const SPOOL_FILE: &str = "hooks.spool";
pub const SPOOL_LIMIT: u64 = 256 * 1024;
/// Where `slate hook` notes the last event of each agent, in Slate's data folder.
const LAST_FOLDER: &str = "hooks-last";

mod config;

pub use config::{
    agents, config_path, install, remove, status, this_program, AgentHooks, Changed, HooksError,
};

/// `options` creating a file only its owner may read (on Unix).
fn private(options: &mut fs::OpenOptions) -> &mut fs::OpenOptions {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(options, 0o600);
    options
}

/// The last event `slate hook` passed on for the agent `id`: `<event> at <time>`.
fn last_fired(places: &Places, id: &str) -> Option<String> {
    let path = places.data_dir.join(LAST_FOLDER).join(id);
    let text = regular_file::read_to_string(&path, 256).ok()?;
    let (event, at) = text.trim().split_once(' ')?;
    let at = Timestamp::from_millis(at.parse().ok()?);
    Some(format!("{} at {at}", hooks::clean(event, 64)))
}

/// `slate hook AGENT EVENT`: passes the event on standard input to this HOME's Slate, within
/// [`BUDGET`] of `started`. It never fails, prints nothing and answers nothing for the agent.
pub fn run_hook(registry: Registry, args: &[String], started: Instant) {
    // A panic's message would reach the agent on standard error; nothing may.
    std::panic::set_hook(Box::new(|_| {}));
    let _ = std::panic::catch_unwind(|| hook(registry, args, started));
}

fn hook(registry: Registry, args: &[String], started: Instant) -> Option<()> {
    let [agent, event] = args else {
        return None;
    };
    let description = registry
        .iter()
        .find(|description| description.id == agent)?;
    let hooks = description.hooks?;
    hooks.meaning(event)?;
    let raw = read_within(io::stdin(), EVENT_LIMIT, started + READ_WITHIN)?;
    let value: serde_json::Value = serde_json::from_slice(&raw).ok()?;
    let report = hooks.report(description.id, event, &value)?;
    let env = Env::from_process();
    let places = Places::from_env(&env).ok()?;
    let now = crate::clock::system_clock();
    let left = BUDGET
        .saturating_sub(started.elapsed() + MARGIN)
        .min(POST_WITHIN);
    if !post(&env, &places, &report, left) {
        let _ = spool(&places.data_dir.join(SPOOL_FILE), &report, now);
    }
    let _ = note_last(&places, description.id, event, now);
    Some(())
}

/// Reads at most `limit` bytes of `input` until it ends, or until `deadline`: `None` when it
/// did not end in time (the reading thread is left behind; the process ends soon after).
fn read_within(
    input: impl Read + Send + 'static,
    limit: usize,
    deadline: Instant,
) -> Option<Vec<u8>> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let read = input
            .take(limit as u64 + 1)
            .read_to_end(&mut bytes)
            .map(|_| bytes);
        let _ = sender.send(read);
    });
    let wait = deadline.saturating_duration_since(Instant::now());
    let bytes = receiver.recv_timeout(wait).ok()?.ok()?;
    (bytes.len() <= limit).then_some(bytes)
}

/// Posts the report to this HOME's running Slate within `left`; true when it took it.
fn post(env: &Env, places: &Places, report: &HookReport, left: Duration) -> bool {
    if left.is_zero() {
        return false;
    }
    let Ok(Some(token)) = crate::token::read_token(&places.token_file()) else {
        return false;
    };
    let Ok(body) = serde_json::to_value(report) else {
        return false;
    };
    // Over this user's API socket, else the configured port; either is proven this user's
    // before the token is sent (`client`).
    Client::local(env, places, configured_listen(places), Some(token))
        .post("/hooks", Some(&body), left)
        .is_ok()
}

/// The config's `[server] listen`, or the default when the config cannot be read.
fn configured_listen(places: &Places) -> std::net::SocketAddr {
    regular_file::read_to_string(&places.config_file(), 1024 * 1024)
        .ok()
        .and_then(|text| crate::config::Config::parse(&text).ok())
        .unwrap_or_default()
        .server
        .listen
}

/// One spooled event: when `slate hook` ran, and its report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Spooled {
    pub at: i64,
    pub report: HookReport,
}

/// Appends the report to the spool, unless the spool already holds `SPOOL_LIMIT` bytes.
pub fn spool(path: &Path, report: &HookReport, now: Timestamp) -> io::Result<()> {
    if let Some(folder) = path.parent() {
        fs::create_dir_all(folder)?;
    }
    let size = fs::metadata(path).map(|meta| meta.len()).unwrap_or(0);
    let mut line = serde_json::to_string(&Spooled {
        at: now.millis(),
        report: report.clone(),
    })?;
    line.push('\n');
    if size + line.len() as u64 > SPOOL_LIMIT {
        return Ok(());
    }
    let mut file = private(fs::OpenOptions::new().create(true).append(true)).open(path)?;
    // One write of one line: appends from hooks running at once do not interleave.
    file.write_all(line.as_bytes())
}

/// Takes the spool: its events, oldest first, with the spool emptied. Lines that do not read
/// are skipped.
pub fn drain(path: &Path) -> Vec<(Timestamp, HookReport)> {
    let taken = path.with_extension("draining");
    if fs::rename(path, &taken).is_err() {
        return Vec::new();
    }
    let text = regular_file::read_to_string(&taken, SPOOL_LIMIT * 2).unwrap_or_default();
    let _ = fs::remove_file(&taken);
    text.lines()
        .filter_map(|line| serde_json::from_str::<Spooled>(line).ok())
        .map(|spooled| (Timestamp::from_millis(spooled.at), spooled.report))
        .collect()
}

/// Notes the agent's last event, for `slate doctor`.
fn note_last(places: &Places, id: &str, event: &str, now: Timestamp) -> io::Result<()> {
    let folder = places.data_dir.join(LAST_FOLDER);
    fs::create_dir_all(&folder)?;
    fs::write(
        folder.join(id),
        format!("{} {}\n", hooks::clean(event, 64), now.millis()),
    )
}
