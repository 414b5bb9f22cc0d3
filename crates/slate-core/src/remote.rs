//! Sessions on other machines, followed over SSH: what a link is, the fixed commands Slate runs
//! on a remote, the `ssh` argument lists, and what a link's failure means.
//!
//! Slate runs no network service of its own. For each `[[remote]]` of the config it runs the
//! system `ssh` (so `~/.ssh/config`, agents, `ProxyJump` and `ControlMaster` work as the person
//! set them up) with one long-lived command, `slate watch --json`, whose NDJSON is a snapshot of
//! the remote's live list and then each change as it happens: push, not poll. The pieces:
//!
//! - this module: the options and timings of a link ([`LinkOptions`], [`LinkTiming`]), the
//!   remote commands as a closed set of fixed words ([`RemoteCommand`]), the `ssh` argument
//!   lists built from them ([`ssh_args`], [`attach_args`]), the link's state as `slate remote
//!   list` reports it ([`Report`]), and what a failed link means ([`Failure`], [`classify`]);
//! - `remote::wire`: one NDJSON line of `slate watch --json` (or the answer of `slate sessions
//!   --json`) read into sessions, with a newer or older Slate's session objects tolerated;
//! - `remote::view`: the merged view of every remote, a pure state machine fed with link events:
//!   which sessions each remote has, which changed, and which are unreachable since when;
//! - `remote::backoff`: when to try again after a link failed;
//! - the I/O that runs `ssh` (`remote::link`, `remote::attach`, `remote::forward`) is in the
//!   `slate` crate's `remote` module, which adds it to this one.
//!
//! Everything here is pure: no I/O, no clock. No argument a
//! person or a remote wrote ever reaches a local shell: `ssh` is started with an argument list.
//! The words sent to the remote's login shell are fixed ([`RemoteCommand::words`]); data goes on
//! the remote command's standard input ([`RemoteCommand::input`]), so the remote's shell (a POSIX
//! one, fish, PowerShell) never parses it. Only `attach_args`, for a command that runs in a
//! terminal, puts a name on the command line, and only one every shell reads the same way.

pub mod backoff;
pub mod view;
pub mod wire;

use std::ffi::OsString;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::RemoteEntry;
use crate::model::{Machine, Timestamp};
use crate::protocol::{RespondRequest, CONFIRM_WITHIN};

/// How links are run: the `ssh` program and the timings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkOptions {
    /// The program to run: the system `ssh` (found on `PATH`) unless a test or the benchmark
    /// stands in for it.
    pub ssh: OsString,
    pub timing: LinkTiming,
}

/// What a forwarded answer's remote may take on top of its connect timeout and its own
/// confirmation: starting its `slate`, reading its list and its screen.
const FORWARD_MARGIN: Duration = Duration::from_secs(5);

/// The longest a forwarded answer (`remote::forward` in the `slate` crate) may take with
/// `options`' timings: 20 s with the defaults.
pub fn forward_limit(options: &LinkOptions) -> Duration {
    options.timing.connect_timeout + CONFIRM_WITHIN + FORWARD_MARGIN
}

impl Default for LinkOptions {
    fn default() -> LinkOptions {
        LinkOptions {
            ssh: OsString::from("ssh"),
            timing: LinkTiming::default(),
        }
    }
}

/// The timings of a link. The defaults are the product's: a dead link is noticed within 30 s,
/// a failed one is tried again after 1 s, doubling to 60 s, and a remote without a usable
/// `slate` is tried again every 5 minutes. Tests shorten them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkTiming {
    /// `ssh -o ConnectTimeout`: how long the TCP connection and the SSH handshake may take.
    pub connect_timeout: Duration,
    /// `ssh -o ServerAliveInterval`: after this long without a byte from the remote, `ssh` asks
    /// whether it is still there.
    pub alive_interval: Duration,
    /// `ssh -o ServerAliveCountMax`: how many such questions may go unanswered before `ssh`
    /// gives the link up.
    pub alive_count: u32,
    /// The first wait before trying a failed link again.
    pub first_retry: Duration,
    /// The longest wait between two attempts.
    pub most_retry: Duration,
    /// The wait when the remote has no `slate`, or one too old to stream: nothing changes until
    /// someone installs it, so there is no hurry.
    pub slow_retry: Duration,
    /// How long a one-shot question (`slate sessions` without a running Slate) may take.
    pub ask_limit: Duration,
}

impl Default for LinkTiming {
    fn default() -> LinkTiming {
        LinkTiming {
            connect_timeout: Duration::from_secs(10),
            alive_interval: Duration::from_secs(10),
            alive_count: 2,
            first_retry: Duration::from_secs(1),
            most_retry: Duration::from_secs(60),
            slow_retry: Duration::from_secs(300),
            ask_limit: Duration::from_secs(5),
        }
    }
}

impl LinkTiming {
    /// The longest a dead link goes unnoticed: the remote may have gone quiet just after its
    /// last byte, then `ssh` waits `alive_interval` before each of its `alive_count` questions,
    /// and gives up one interval after the last. With the defaults, 30 s.
    pub fn dead_link_noticed_within(&self) -> Duration {
        self.alive_interval * (self.alive_count + 1)
    }
}

/// The commands Slate runs on a remote. Each is a fixed list of words: nothing a person or a
/// remote wrote is ever on a remote's command line. A command that carries data
/// ([`RemoteCommand::Respond`]) sends it as one JSON [`RemoteCall`] on the remote command's
/// standard input ([`RemoteCommand::input`]), so no login shell (a POSIX one, fish, PowerShell)
/// reads it, and its quoting rules do not matter.
///
/// `ssh` joins the words after the destination with spaces and hands them to the remote's shell,
/// so every word must be one that any shell reads as itself. [`words`] checks every word against
/// that rule.
///
/// [`words`]: RemoteCommand::words
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteCommand {
    /// `slate watch --json`: the snapshot, then every change, for as long as the link lives.
    Watch,
    /// `slate sessions --json`: the live list once.
    Sessions,
    /// `slate remote-call`, with a [`RemoteCall::Respond`] on its standard input: one answer,
    /// forwarded to the machine whose terminal shows the dialog (`remote::forward`), carried
    /// out there as `slate approve|deny|answer --dialog <fingerprint> --yes --json <id>` would be.
    Respond { id: String, request: RespondRequest },
}

/// The fixed words of `slate remote-call`, the hidden command that reads one [`RemoteCall`] on
/// its standard input.
pub const REMOTE_CALL: [&str; 2] = ["slate", "remote-call"];

/// The most `slate remote-call` reads of its standard input: a call is a few hundred bytes.
pub const CALL_MAX: usize = 64 * 1024;

/// What `slate remote-call` reads on its standard input: one call, as JSON. Each is something a
/// machine that follows this one asks of it with data the command line must not carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "call", rename_all = "snake_case", deny_unknown_fields)]
pub enum RemoteCall {
    /// Answer the dialog of the session `id` (its full id there): the request as
    /// `POST /sessions/{id}/respond` takes it, with the fingerprint the person saw.
    Respond { id: String, request: RespondRequest },
}

impl RemoteCall {
    /// Reads a call from what `slate remote-call` read on its standard input.
    pub fn parse(input: &[u8]) -> Result<RemoteCall, String> {
        if input.len() > CALL_MAX {
            return Err(format!(
                "the call is {} bytes long; at most {CALL_MAX} are read",
                input.len()
            ));
        }
        serde_json::from_slice(input).map_err(|err| format!("the call cannot be read: {err}"))
    }
}

impl RemoteCommand {
    /// The words to run on the remote, each checked to be read by any shell as itself. No word
    /// carries data.
    pub fn words(&self) -> Result<Vec<String>, UnsafeWord> {
        let words: Vec<String> = match self {
            RemoteCommand::Watch => vec!["slate".into(), "watch".into(), "--json".into()],
            RemoteCommand::Sessions => vec!["slate".into(), "sessions".into(), "--json".into()],
            RemoteCommand::Respond { .. } => REMOTE_CALL.iter().map(|&word| word.into()).collect(),
        };
        words
            .into_iter()
            .map(|word| shell_safe(&word).map(|_| word.clone()))
            .collect()
    }

    /// What the command reads on its standard input, when it takes anything: the JSON of its
    /// [`RemoteCall`].
    pub fn input(&self) -> Option<Vec<u8>> {
        match self {
            RemoteCommand::Watch | RemoteCommand::Sessions => None,
            RemoteCommand::Respond { id, request } => {
                let call = RemoteCall::Respond {
                    id: id.clone(),
                    request: request.clone(),
                };
                Some(serde_json::to_vec(&call).expect("a call serializes"))
            }
        }
    }
}

/// A word that a remote shell would not read as itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} cannot be sent to a remote shell as it is")]
pub struct UnsafeWord(pub String);

/// `word` when every character of it is one a POSIX shell, fish or PowerShell reads as itself
/// (ASCII letters, digits, `-`, `_`, `.`, `/` and `:`); else an error.
pub fn shell_safe(word: &str) -> Result<&str, UnsafeWord> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':');
    if word.is_empty() || !word.chars().all(plain) {
        return Err(UnsafeWord(word.to_owned()));
    }
    Ok(word)
}

/// `text` quoted for a POSIX shell: in single quotes, with each `'` written `'\''`.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The arguments of the `ssh` that runs `command` on `remote`: Slate's own options first (so a
/// person's `ssh_args` cannot turn off batch mode or the keep-alives: the first value `ssh`
/// reads for an option wins), then the remote's `ssh_args`, then `--`, the destination and the
/// command's words. Every piece is its own argument: no local shell reads them.
pub fn ssh_args(
    remote: &RemoteEntry,
    timing: &LinkTiming,
    command: &RemoteCommand,
) -> Result<Vec<String>, UnsafeWord> {
    let seconds = |duration: Duration| duration.as_secs().max(1).to_string();
    let mut args: Vec<String> = vec![
        // No pseudo-terminal: the output is NDJSON, and a terminal would mangle it.
        "-T".into(),
        // Never a password prompt nobody can see.
        "-o".into(),
        "BatchMode=yes".into(),
        "-o".into(),
        format!("ConnectTimeout={}", seconds(timing.connect_timeout)),
        "-o".into(),
        format!("ServerAliveInterval={}", seconds(timing.alive_interval)),
        "-o".into(),
        format!("ServerAliveCountMax={}", timing.alive_count),
        // A host whose config forwards ports would otherwise try to bind them once per link.
        "-o".into(),
        "ClearAllForwardings=yes".into(),
    ];
    args.extend(remote.ssh_args.iter().cloned());
    args.push("--".into());
    args.push(remote.destination.clone());
    args.extend(command.words()?);
    Ok(args)
}

/// The arguments of the `ssh` a person runs to attach to the remote's tmux session `session`:
/// `ssh -t [ssh_args] -- DEST tmux attach -t <session>`, or `None` when the name cannot be sent
/// to the remote's login shell so that every shell reads it as itself. This command runs in a
/// terminal, so it cannot take its data on standard input: a name a shell would not read as
/// itself is put in single quotes, which a POSIX shell, fish and PowerShell all read the same
/// way as long as it holds no `'`, no `\` and no control or format character
/// ([`quoted_for_any_shell`]).
pub fn attach_args(remote: &RemoteEntry, session: &str) -> Option<Vec<String>> {
    let session = match shell_safe(session) {
        Ok(plain) => plain.to_owned(),
        Err(_) => quoted_for_any_shell(session)?,
    };
    let mut args: Vec<String> = vec!["-t".into()];
    args.extend(remote.ssh_args.iter().cloned());
    args.extend([
        "--".into(),
        remote.destination.clone(),
        "tmux".into(),
        "attach".into(),
        "-t".into(),
        session,
    ]);
    Some(args)
}

/// `text` in single quotes when every shell reads it so as `text`: fish reads `\'` and `\\`
/// inside single quotes as escapes where a POSIX shell does not, and PowerShell also ends a
/// single-quoted string at a typographic single quote (U+2018 to U+201B), so a text with any of
/// them is refused, and so is one with a control or format character, which a terminal or a line
/// editor may act on.
pub fn quoted_for_any_shell(text: &str) -> Option<String> {
    let odd = |c: char| {
        matches!(c, '\'' | '\\' | '\u{2018}'..='\u{201b}')
            || c.is_control()
            || crate::limits::is_invisible(c)
    };
    (!text.is_empty() && !text.chars().any(odd)).then(|| format!("'{text}'"))
}

/// The arguments of an `ssh` that opens a shell on the remote: where to go when Slate does not
/// know which terminal there shows the session.
pub fn shell_args(remote: &RemoteEntry) -> Vec<String> {
    let mut args: Vec<String> = remote.ssh_args.clone();
    args.extend(["--".into(), remote.destination.clone()]);
    args
}

/// A command line as a person would type it: each argument quoted when a shell would not read
/// it as itself.
pub fn command_line(program: &str, args: &[String]) -> String {
    std::iter::once(program.to_owned())
        .chain(args.iter().map(|arg| match shell_safe(arg) {
            Ok(arg) => arg.to_owned(),
            Err(_) => shell_quote(arg),
        }))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where a link stands, as `slate remote list` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The remote sent its snapshot, and the link is up.
    Connected,
    /// The first attempt is under way.
    Connecting,
    /// The link failed or dropped; its sessions keep their last state, marked unreachable.
    Unreachable,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Connected => "connected",
            Status::Connecting => "connecting",
            Status::Unreachable => "unreachable",
        }
    }
}

/// One remote as `slate remote list --json` and `GET /remotes` report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub name: Machine,
    pub destination: String,
    pub status: Status,
    /// Since when the status holds.
    pub since: Timestamp,
    /// Why the remote is unreachable, or the last line that could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How many of its sessions are listed.
    pub sessions: usize,
    /// When the next attempt is due, while unreachable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_attempt: Option<Timestamp>,
    /// The remote's Slate version, when its snapshot said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// What kind of failure ended a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The remote has no `slate` on the `PATH` its shell gives a command.
    NoSlate,
    /// The remote's `slate` has no `slate watch --json`, or printed something else.
    OldSlate,
    /// The connection failed or dropped, or the remote's `slate` stopped.
    Link,
}

/// Why a link ended, in words for `slate remote list` and `slate doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: FailureKind,
    pub message: String,
}

impl Failure {
    pub fn no_slate(name: &Machine) -> Failure {
        Failure {
            kind: FailureKind::NoSlate,
            message: format!(
                "slate not found on {name}: install it there (on the PATH of a non-interactive \
                 shell, e.g. /usr/local/bin)"
            ),
        }
    }

    pub fn old_slate(name: &Machine) -> Failure {
        Failure {
            kind: FailureKind::OldSlate,
            message: format!(
                "slate on {name} is too old to stream (no `slate watch --json`): update it there"
            ),
        }
    }

    pub fn link(message: impl Into<String>) -> Failure {
        Failure {
            kind: FailureKind::Link,
            message: message.into(),
        }
    }
}

/// What an ended `ssh` means: its exit code (`None` when killed by a signal), the end of what
/// it wrote on stderr, and whether the remote had begun to stream. `ssh` itself exits with 255
/// on its own errors; otherwise the code is the remote command's, and a shell says 127 for a
/// command it cannot find.
pub fn classify(name: &Machine, code: Option<i32>, stderr: &str, streamed: bool) -> Failure {
    let last = stderr
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(|line| line.chars().take(300).collect::<String>());
    let names_slate = stderr.lines().any(|line| line.contains("slate"));
    if !streamed && code != Some(255) {
        let missing = stderr.contains("command not found")
            || stderr.contains("not recognized as")
            || (names_slate && (stderr.contains("not found") || stderr.contains("No such file")));
        if code == Some(127) || missing {
            return Failure::no_slate(name);
        }
        let refused = stderr.contains("unrecognized subcommand")
            || stderr.contains("unexpected argument")
            || stderr.contains("Found argument");
        if code == Some(2) && refused {
            return Failure::old_slate(name);
        }
    }
    match (code, last) {
        (Some(255), Some(line)) => Failure::link(line),
        (Some(255), None) => Failure::link(format!("ssh could not reach {name}")),
        (Some(code), Some(line)) => Failure::link(format!(
            "the link to {name} closed (exit code {code}): {line}"
        )),
        (Some(code), None) => {
            Failure::link(format!("the link to {name} closed (exit code {code})"))
        }
        (None, _) => Failure::link(format!("the link to {name} was cut")),
    }
}
