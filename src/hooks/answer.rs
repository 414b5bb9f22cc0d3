//! `slate hook AGENT EVENT --answer`, the decision hook (docs/hooks.md, "Decision hooks"): it
//! hands the call the agent asks permission for to this HOME's running Slate over this user's API
//! socket only (`POST /hooks/decision`, its peer proven this uid; never the loopback port), and
//! waits for the person's decision up to its agent's bound (`agents::hooks::decision`).
//!
//! It prints the agent's allow or deny only when Slate said so. In every other case it prints
//! nothing and exits 0, and the agent's own dialog decides as it does without Slate: no Slate
//! holds the call within [`ANSWERED_WITHIN`] (none runs, or it hangs), the bound passed, Slate
//! went away or stopped, the call was released (answered at the terminal, a newer call), the
//! event is malformed or its input too large. Silence never approves.

use std::io::{self, BufRead, Read, Write};
use std::time::{Duration, Instant};

use crate::client::Client;
use crate::places::Places;
use slate_core::agents::hooks::decision::{self, HookCall, Verdict, ANSWERED_WITHIN, INPUT_LIMIT};
use slate_core::agents::hooks::EVENT_LIMIT;
use slate_sources::sources::roots::Env;

/// An environment variable that shortens the bound (milliseconds; never lengthens it), for the
/// tests that check the hook ends at its bound.
const WITHIN_VARIABLE: &str = "SLATE_HOOK_ANSWER_WITHIN_MS";

/// The most of one line of Slate's answer that is read.
const LINE_LIMIT: u64 = 1024;

/// Runs the decision hook of `agent` for `event`, started at `started`; prints the agent's
/// decision, or nothing.
pub fn run(agent: &str, event: &str, started: Instant) {
    let Some(decides) = decision::decides(agent).filter(|decides| decides.event == event) else {
        return;
    };
    let bound = std::env::var(WITHIN_VARIABLE)
        .ok()
        .and_then(|ms| ms.parse::<u64>().ok())
        .map_or(decides.bound, |ms| {
            decides.bound.min(Duration::from_millis(ms))
        });
    // Whatever holds it up, the hook ends at its bound, with no decision.
    let end = started + bound;
    let _ = std::thread::Builder::new().spawn(move || {
        std::thread::sleep(end.saturating_duration_since(Instant::now()));
        std::process::exit(0);
    });
    if let Some(verdict) = wait(agent, started, end) {
        if let Some(output) = decision::output(agent, verdict) {
            let mut out = io::stdout().lock();
            let _ = writeln!(out, "{output}");
            let _ = out.flush();
        }
    }
}

/// The person's verdict on the call in the event on standard input, or `None`.
fn wait(agent: &str, started: Instant, end: Instant) -> Option<Verdict> {
    let read_by = (started + super::READ_WITHIN).max(Instant::now() + super::READ_AT_LEAST);
    let raw = super::read_within(EVENT_LIMIT, read_by)?;
    let value: serde_json::Value = serde_json::from_slice(&raw).ok()?;
    let call = HookCall::of(agent, &value)?;
    if call.input.len() > INPUT_LIMIT || decision::refused(&call).is_some() {
        return None;
    }
    let env = Env::from_process();
    let places = Places::from_env(&env).ok()?;
    let socket = places.api_socket(&env);
    // Over the socket only: a Slate that does not listen there holds no call.
    std::fs::symlink_metadata(&socket).ok()?;
    let token = crate::token::read_token(&places.token_file())
        .ok()
        .flatten();
    // Port 0 is never reached: the client goes to the socket, and has no other way.
    let unreachable = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let client = Client::new(unreachable, token).with_socket(Some(socket));
    let body = serde_json::json!({
        "call": call,
        "nonce": nonce()?,
        "within_ms": end.saturating_duration_since(Instant::now()).as_millis() as u64,
    });
    let within = end.saturating_duration_since(Instant::now());
    let mut lines = client
        .post_lines("/hooks/decision", &body, ANSWERED_WITHIN, within)
        .ok()?;
    // The first line says that Slate holds the call; then blank lines while it waits, and the
    // verdict last.
    let first = line(&mut lines)?;
    first.get("waiting")?.as_str()?;
    loop {
        let next = line(&mut lines)?;
        if let Some(word) = next.get("decision") {
            return match word.as_str() {
                Some("allow") => Some(Verdict::Allow),
                Some("deny") => Some(Verdict::Deny),
                _ => None,
            };
        }
    }
}

/// The next line of Slate's answer that is not blank, read as JSON; `None` at its end, at an
/// error, or for a line too long or not JSON.
fn line(lines: &mut impl BufRead) -> Option<serde_json::Value> {
    loop {
        let mut text = String::new();
        let read = lines.take(LINE_LIMIT).read_line(&mut text).ok()?;
        if read == 0 || !text.ends_with('\n') {
            return None;
        }
        if !text.trim().is_empty() {
            return serde_json::from_str(text.trim()).ok();
        }
    }
}

/// 16 random bytes as hex: the waiting call's own, which its fingerprint covers.
fn nonce() -> Option<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut file| file.read_exact(&mut bytes))
        .ok()?;
    Some(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}
