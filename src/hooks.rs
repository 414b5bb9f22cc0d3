//! The agents' own hooks on disk and in flight (docs/hooks.md): `hooks::config` installs and
//! removes Slate's entries in each agent's hook configuration and says what is installed; this
//! module runs `slate hook`, the command those entries run.
//!
//! What an entry is and what a hook's event means is `agents::hooks` (pure). The hook reads the
//! event from standard input within a deadline, hands a bounded report to this HOME's running
//! Slate (`POST /hooks`, with the token) or, when none takes it in time, appends it to a bounded
//! spool in Slate's data folder (`hooks::spool`: a running Slate drains it as it grows, a one-shot
//! command reads it). The hook always ends within [`BUDGET`], by a watchdog if need be, prints
//! nothing and exits 0: whatever happens to Slate, the agent goes on, and the agent's dialog
//! stays the person's.

use std::fs;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use crate::client::Client;
use crate::places::Places;
use slate_core::agents::hooks::{self, HookReport, EVENT_LIMIT};
use slate_core::agents::Registry;
use slate_core::model::Timestamp;
use slate_sources::sources::regular_file;
use slate_sources::sources::roots::Env;

/// The most `slate hook` takes, from its start to its exit.
pub const BUDGET: Duration = Duration::from_millis(250);
/// How long `slate hook` waits for its event on standard input, from its start; and the least it
/// waits, however late it got there (on a busy machine a process can take that long to reach its
/// first line, and the event is already written). It ends 20 ms before the watchdog's spool
/// ([`LAST_SPOOL`] before the budget's end), so an event read late is still spooled, and a hook
/// that got no CPU until past it still looks once (`read_within`).
const READ_WITHIN: Duration = Duration::from_millis(150);
const READ_AT_LEAST: Duration = Duration::from_millis(50);
/// The longest `slate hook` waits for a running Slate to take its report: a Slate answers in a
/// few milliseconds, so one that takes longer is hanging, and the report goes to the spool.
const POST_WITHIN: Duration = Duration::from_millis(100);
/// Where `slate hook` notes the last event of each agent, in Slate's data folder.
const LAST_FOLDER: &str = "hooks-last";

mod answer;
mod config;
mod spool;

pub use config::{
    agents, answering, config_path, install, remove, status, this_program, AgentHooks, Changed,
    HooksError,
};
pub use spool::{
    drain, read as read_spool, spool, waiting as spool_waiting, Spooled, KEPT, SPOOL_FILE,
    SPOOL_LIMIT,
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
    if let [agent, event, flag] = args {
        // The decision hook, which alone may print: the agent's allow or deny, when Slate says.
        let known = registry.iter().any(|description| description.id == agent);
        if known && flag == hooks::decision::ANSWER_FLAG {
            let _ = std::panic::catch_unwind(|| answer::run(agent, event, started));
        }
        return;
    }
    let pending = Pending::default();
    watchdog(started, pending.clone());
    let _ = std::panic::catch_unwind(|| hook(registry, args, started, &pending));
}

/// A report read and not yet handed over: where it would be spooled, the report, and when the
/// hook ran. Whoever takes it out (the hook once its POST is done, or the watchdog) owns it.
#[derive(Default, Clone)]
struct Pending(Arc<Mutex<Option<(PathBuf, HookReport, Timestamp)>>>);

impl Pending {
    fn put(&self, path: PathBuf, report: HookReport, now: Timestamp) {
        if let Ok(mut pending) = self.0.lock() {
            *pending = Some((path, report, now));
        }
    }

    fn take(&self) -> Option<(PathBuf, HookReport, Timestamp)> {
        self.0.lock().ok()?.take()
    }
}

/// How long before the end of its budget the watchdog spools a report still in flight: on a
/// machine busy enough to hold a POST up that long, a spool write can take tens of milliseconds.
const LAST_SPOOL: Duration = Duration::from_millis(80);

/// The least that spool write gets, even when the watchdog itself ran late (a process that got
/// no CPU until past its budget would otherwise exit at once and lose the report it holds): a
/// spool write takes a millisecond, and its file is opened without blocking.
const SPOOL_AT_LEAST: Duration = Duration::from_millis(25);

/// Whatever holds the hook up (a machine so busy that a burst of hooks each gets a sliver of a
/// core, a hung file system, a spool another process keeps locked), it exits 0 at its budget's
/// end. Shortly before, a report still in flight (its POST not answered yet) is spooled, so a
/// slow hook loses no event; that spool write gets what is left of the budget, and at least
/// [`SPOOL_AT_LEAST`] when the watchdog woke past it. A hook that has not read its event by then
/// (a starved process, which finds it written when it runs) is waited for, to the budget's end,
/// or [`SPOOL_AT_LEAST`] when the watchdog woke past that. A report both spooled here and taken
/// by a Slate is read twice as the one event it is.
fn watchdog(started: Instant, pending: Pending) {
    let end = started + BUDGET;
    let _ = std::thread::Builder::new().spawn(move || {
        std::thread::sleep((end - LAST_SPOOL).saturating_duration_since(Instant::now()));
        let give_up = end.max(Instant::now() + SPOOL_AT_LEAST);
        let taken = loop {
            if let Some(taken) = pending.take() {
                break Some(taken);
            }
            if Instant::now() >= give_up {
                break None;
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        if let Some((path, report, now)) = taken {
            let (done, spooled) = mpsc::channel();
            let _ = std::thread::Builder::new().spawn(move || {
                let _ = spool(&path, &report, now);
                let _ = done.send(());
            });
            let _ = spooled.recv_timeout(
                end.saturating_duration_since(Instant::now())
                    .max(SPOOL_AT_LEAST),
            );
        }
        std::process::exit(0);
    });
}

fn hook(registry: Registry, args: &[String], started: Instant, pending: &Pending) -> Option<()> {
    let [agent, event] = args else {
        return None;
    };
    let description = registry
        .iter()
        .find(|description| description.id == agent)?;
    let hooks = description.hooks?;
    hooks.meaning(event)?;
    let read_by = (started + READ_WITHIN).max(Instant::now() + READ_AT_LEAST);
    let raw = read_within(EVENT_LIMIT, read_by)?;
    let value: serde_json::Value = serde_json::from_slice(&raw).ok()?;
    let report = hooks.report(description.id, event, &value)?;
    let env = Env::from_process();
    let places = Places::from_env(&env).ok()?;
    let now = crate::clock::system_clock();
    pending.put(places.data_dir.join(SPOOL_FILE), report.clone(), now);
    let left = BUDGET
        .saturating_sub(started.elapsed() + LAST_SPOOL)
        .min(POST_WITHIN);
    let posted = post(&env, &places, &report, left);
    // Unless the watchdog took it meanwhile (and spools it), the report is this thread's again:
    // handed over, or spooled here.
    let still = pending.take();
    if let (false, Some((path, report, now))) = (posted, still) {
        let _ = spool(&path, &report, now);
    }
    let _ = note_last(&places, description.id, event, now);
    Some(())
}

/// Reads standard input to its end, at most `limit` bytes, until `deadline`: `None` when it did
/// not end in time or was longer. It waits on the descriptor itself (`poll`), not on a thread of
/// its own, and a process that got no CPU until past its deadline still looks once, without
/// waiting: the agent wrote the event as the hook started, so a starved hook finds it whole
/// rather than dropping it (a burst of 40 hooks on a loaded machine lost events that way).
fn read_within(limit: usize, deadline: Instant) -> Option<Vec<u8>> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::AsFd;
    let stdin = io::stdin();
    // Its own descriptor, read directly: standard input's buffer would hide bytes from `poll`.
    let mut input = fs::File::from(stdin.as_fd().try_clone_to_owned().ok()?);
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let wait = PollTimeout::try_from(left).unwrap_or(PollTimeout::MAX);
        let mut fds = [PollFd::new(input.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, wait) {
            // Nothing more came in time.
            Ok(0) => return None,
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return None,
        }
        // Ready: this read returns what is there (or the end) without blocking.
        match input.read(&mut chunk) {
            Ok(0) => return (bytes.len() <= limit).then_some(bytes),
            Ok(read) => {
                bytes.extend_from_slice(&chunk[..read]);
                if bytes.len() > limit {
                    return None;
                }
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
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

/// Notes the agent's last event, for `slate doctor`.
fn note_last(places: &Places, id: &str, event: &str, now: Timestamp) -> io::Result<()> {
    let folder = places.data_dir.join(LAST_FOLDER);
    fs::create_dir_all(&folder)?;
    let file = spool::open_own(&folder.join(id), true)?;
    file.set_len(0)?;
    (&file).write_all(format!("{} {}\n", hooks::clean(event, 64), now.millis()).as_bytes())
}
