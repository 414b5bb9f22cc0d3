//! The config file: one serde struct with its defaults, parsed from text, and the migrations that
//! move keys written under earlier names to where they live now.
//!
//! Everything here works on text: an edit a command asks for (`slate remote add`) keeps the
//! person's comments and order (`toml_edit`). Reading and writing the file is the `slate` crate's
//! `config` module, which adds `load_or_default` and `edit_file` to this one. Where the file lives
//! is `places`' business; what the values mean, how an error is handled and how a change reaches
//! a running engine is `settings`'.

use core::net::SocketAddr;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};

use crate::model::{AgentKind, Machine, ReasonCode, Timestamp};

pub mod push;
pub mod spend;

pub use push::{NtfyTopic, Push, PushUrl};
pub use spend::{Budget, PriceOverride};

/// The port Slate listens on unless the config says otherwise.
pub const DEFAULT_PORT: u16 = 7411;

/// Everything the config file can say. Every section and every key is optional; a missing one
/// takes its default, and an unknown one is an error that names it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    #[serde(rename = "project-policy")]
    pub project_policy: ProjectPolicy,
    pub server: Server,
    pub notifications: Notifications,
    pub cleanup: Cleanup,
    /// `[push]`: an ntfy topic or a webhook told of every Needs you notification (`push`).
    pub push: Push,
    /// `[[remote]]`: other machines whose sessions Slate follows over SSH, in the file's order.
    #[serde(rename = "remote", skip_serializing_if = "Vec::is_empty")]
    pub remotes: Vec<RemoteEntry>,
    /// `[prices."<model>"]`: a person's own prices over the shipped table (`spend`).
    #[serde(
        deserialize_with = "spend::price_overrides",
        skip_serializing_if = "std::collections::BTreeMap::is_empty"
    )]
    pub prices: std::collections::BTreeMap<String, PriceOverride>,
    /// `[budget]`: the amounts whose crossing notifies once (`spend`); none by default.
    pub budget: Budget,
}

/// One `[[remote]]` entry: a machine Slate follows with the system `ssh`.
///
/// ```toml
/// [[remote]]
/// name = "box"
/// destination = "dev@box.example.com"
/// ssh_args = ["-p", "2222"]
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteEntry {
    /// What its sessions are marked with, and the `NAME` of `NAME:ID`.
    pub name: Machine,
    /// Anything `ssh` accepts as its destination: a `~/.ssh/config` host, `user@host`,
    /// `ssh://user@host:port`. Never one that starts with `-`, which `ssh` would read as an option.
    #[serde(deserialize_with = "destination")]
    pub destination: String,
    /// Arguments for `ssh` before the destination, such as `-F file`, `-p 2222` or `-i key`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ssh_args: Vec<String>,
}

impl RemoteEntry {
    /// An entry with its destination and arguments checked as the config file's are.
    pub fn new(
        name: Machine,
        destination: &str,
        ssh_args: Vec<String>,
    ) -> Result<RemoteEntry, String> {
        check_destination(destination)?;
        for arg in &ssh_args {
            check_ssh_arg(arg)?;
        }
        Ok(RemoteEntry {
            name,
            destination: destination.to_owned(),
            ssh_args,
        })
    }
}

/// A destination is passed to `ssh` as one argument and never through a shell; one that starts
/// with `-` would be read as an option, and whitespace or a control character names no host.
fn check_destination(text: &str) -> Result<(), String> {
    if text.is_empty() {
        return Err("a remote's destination is empty".to_owned());
    }
    if text.starts_with('-') {
        return Err(format!(
            "destination {text:?} starts with `-`, which ssh would read as an option; \
             put ssh options in ssh_args"
        ));
    }
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "destination {text:?} has a space or a control character; name a host ssh knows"
        ));
    }
    Ok(())
}

fn check_ssh_arg(text: &str) -> Result<(), String> {
    if text.chars().any(char::is_control) {
        return Err(format!("ssh argument {text:?} has a control character"));
    }
    Ok(())
}

fn destination<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let text = String::deserialize(deserializer)?;
    check_destination(&text).map_err(serde::de::Error::custom)?;
    Ok(text)
}

/// `[project-policy]`: the policy behind the `session_state` facets (docs/states.md §4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProjectPolicy {
    /// After this many minutes without tool activity a session's activity reads `silent`.
    pub session_idle_minutes: u32,
}

impl Default for ProjectPolicy {
    fn default() -> ProjectPolicy {
        ProjectPolicy {
            session_idle_minutes: 20,
        }
    }
}

/// `[server]`: where the HTTP API listens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Server {
    /// Always a loopback address (docs/states.md §7): anything else is rejected when the file is
    /// parsed.
    #[serde(deserialize_with = "loopback_address")]
    pub listen: SocketAddr,
}

impl Default for Server {
    fn default() -> Server {
        Server {
            listen: SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)),
        }
    }
}

/// `[notifications]`: whether Working → Needs you changes pop up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Notifications {
    pub enabled: bool,
    /// Notifications stay quiet until this time. Written as an RFC 3339 string or a bare TOML
    /// date-time, either way with a time zone.
    #[serde(
        deserialize_with = "optional_time",
        skip_serializing_if = "Option::is_none"
    )]
    pub paused_until: Option<Timestamp>,
    /// A sound for each Needs you notification, by its name in the freedesktop sound theme
    /// (`message-new-instant`), passed to the notification server as the notification's
    /// `sound-name` hint: the server plays it, Slate links no audio library. None by default.
    #[serde(
        deserialize_with = "optional_sound",
        skip_serializing_if = "Option::is_none"
    )]
    pub sound: Option<String>,
    /// Agents whose sessions never notify (`["codex"]`): they count and show as ever. By their
    /// ids, as `slate sessions` prints them.
    #[serde(deserialize_with = "agent_ids", skip_serializing_if = "Vec::is_empty")]
    pub muted_agents: Vec<AgentKind>,
    /// Quiet while you look: no notification (and no push) for a session whose terminal is in
    /// front, its tmux pane the one shown in the focused window, or its terminal window the
    /// focused one. On by default; whenever Slate is not sure, it notifies.
    pub quiet_while_looking: bool,
    /// The reasons a session turning Needs you notifies (and pushes) for, by their names
    /// (`["permission", "question"]`); all six by default. A session Needs you for another
    /// reason counts and shows as ever.
    #[serde(deserialize_with = "notify_reasons")]
    pub reasons: Vec<NotifyReason>,
}

impl Default for Notifications {
    fn default() -> Notifications {
        Notifications {
            enabled: true,
            paused_until: None,
            sound: None,
            muted_agents: Vec::new(),
            quiet_while_looking: true,
            reasons: NotifyReason::ALL.to_vec(),
        }
    }
}

/// The reasons a person can keep notifications for (`[notifications] reasons`), each a group of
/// Needs you reasons (docs/states.md §3); `policy::notifications` tells only the kept ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NotifyReason {
    /// A permission prompt (`permission_prompt`).
    Permission,
    /// A question to the person (`question`).
    Question,
    /// A plan or a proposal to approve, or another dialog the agent opened (`plan_approval`,
    /// `dialog`).
    Plan,
    /// A finished turn (`turn_finished`, `new_session`, `end_stamp`).
    Finished,
    /// A turn cut short (`interrupted`, `turn_failed`).
    Interrupted,
    /// Quiet with nothing that says what it waits for (`quiet_call`, `title_stopped`,
    /// `terminal_silent`, `unknown`).
    Quiet,
}

impl NotifyReason {
    /// Every reason, in the order the config's default lists them.
    pub const ALL: [NotifyReason; 6] = [
        NotifyReason::Permission,
        NotifyReason::Question,
        NotifyReason::Plan,
        NotifyReason::Finished,
        NotifyReason::Interrupted,
        NotifyReason::Quiet,
    ];

    /// Its name in the config.
    pub fn name(self) -> &'static str {
        match self {
            NotifyReason::Permission => "permission",
            NotifyReason::Question => "question",
            NotifyReason::Plan => "plan",
            NotifyReason::Finished => "finished",
            NotifyReason::Interrupted => "interrupted",
            NotifyReason::Quiet => "quiet",
        }
    }

    /// The reason a config names, exactly as written.
    pub fn parse(name: &str) -> Option<NotifyReason> {
        NotifyReason::ALL
            .into_iter()
            .find(|reason| reason.name() == name)
    }

    /// The group a Needs you reason is in; `None` for a reason that is not a Needs you one
    /// (Working and Closed reasons), which no list of reasons holds back.
    pub fn of(code: ReasonCode) -> Option<NotifyReason> {
        match code {
            ReasonCode::PermissionPrompt => Some(NotifyReason::Permission),
            ReasonCode::Question => Some(NotifyReason::Question),
            ReasonCode::PlanApproval | ReasonCode::Dialog => Some(NotifyReason::Plan),
            ReasonCode::TurnFinished | ReasonCode::NewSession | ReasonCode::EndStamp => {
                Some(NotifyReason::Finished)
            }
            ReasonCode::Interrupted | ReasonCode::TurnFailed => Some(NotifyReason::Interrupted),
            ReasonCode::QuietCall
            | ReasonCode::TitleStopped
            | ReasonCode::TerminalSilent
            | ReasonCode::Unknown => Some(NotifyReason::Quiet),
            ReasonCode::ToolRunning
            | ReasonCode::ModelAnswering
            | ReasonCode::SubagentRunning
            | ReasonCode::ListingBusy
            | ReasonCode::ModelRetrying
            | ReasonCode::Compacting
            | ReasonCode::TitleMoving
            | ReasonCode::RecentActivity
            | ReasonCode::ListingDone
            | ReasonCode::ProcessGone
            | ReasonCode::NotListed
            | ReasonCode::NoProcess
            | ReasonCode::PrintFinished => None,
        }
    }
}

/// A list of notification reasons by their names; a name Slate does not know is an error that
/// lists the ones it does, and a name written twice counts once.
fn notify_reasons<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<NotifyReason>, D::Error> {
    let names = Vec::<String>::deserialize(deserializer)?;
    let mut reasons = Vec::new();
    for name in &names {
        let reason = NotifyReason::parse(name).ok_or_else(|| {
            let known: Vec<&str> = NotifyReason::ALL.iter().map(|r| r.name()).collect();
            serde::de::Error::custom(format!(
                "{:?} is not a notification reason; one of: {}",
                name.chars().take(40).collect::<String>(),
                known.join(", ")
            ))
        })?;
        if !reasons.contains(&reason) {
            reasons.push(reason);
        }
    }
    Ok(reasons)
}

/// A list of built-in agents by their ids; an id Slate does not know is an error that lists the
/// ones it does.
fn agent_ids<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<AgentKind>, D::Error> {
    let names = Vec::<String>::deserialize(deserializer)?;
    names
        .iter()
        .map(|name| {
            AgentKind::parse(name).ok_or_else(|| {
                let known: Vec<&str> = crate::agents::BUILT_IN.iter().map(|d| d.id).collect();
                serde::de::Error::custom(format!(
                    "{:?} is not an agent Slate knows; one of: {}",
                    name.chars().take(40).collect::<String>(),
                    known.join(", ")
                ))
            })
        })
        .collect()
}

/// The longest sound name the config takes.
pub const SOUND_NAME_LIMIT: usize = 64;

/// Whether `name` is a sound name as the freedesktop sound naming specification writes them:
/// lower-case letters, digits, `-`, `_` and `.`, starting with a letter, at most
/// [`SOUND_NAME_LIMIT`] bytes (`message-new-instant`, `dialog-warning`).
pub fn is_sound_name(name: &str) -> bool {
    name.len() <= SOUND_NAME_LIMIT
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.')
        })
}

fn optional_sound<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    let name = String::deserialize(deserializer)?;
    if is_sound_name(&name) {
        Ok(Some(name))
    } else {
        Err(serde::de::Error::custom(format!(
            "{:?} is not a sound name: lower-case letters, digits, `-`, `_` and `.`, starting with a \
             letter, at most {SOUND_NAME_LIMIT} characters, such as \"message-new-instant\"",
            name.chars().take(80).collect::<String>()
        )))
    }
}

/// `[cleanup]`: when automatic cleanup may reclaim a session (docs/states.md §4 custody). By
/// default a closed session leaves the live list at once (docs/states.md §2); a positive
/// `reclaim_after_minutes` keeps closed, reclaimable sessions on it that long. A session holding a
/// work claim stays either way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct Cleanup {
    pub reclaim_after_minutes: u32,
}

/// What can go wrong with the config file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The text is not TOML, or says something the schema does not allow. `place` names the file
    /// (once known), the line, the section and the key, so the person editing the file can find
    /// it: "the config file /home/u/.config/slate/config.toml, line 2, in [project-policy], key
    /// `sesion_idle_minutes`".
    #[error("{place}: {message}")]
    Invalid {
        place: String,
        line: Option<usize>,
        section: Option<String>,
        key: Option<String>,
        message: String,
    },
    #[error("cannot read the config file {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("cannot write the config file {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
}

impl ConfigError {
    /// The same error, naming `file` as the file it was found in.
    pub fn in_file(self, file: &Path) -> ConfigError {
        match self {
            ConfigError::Invalid {
                line,
                section,
                key,
                message,
                ..
            } => ConfigError::Invalid {
                place: place(Some(file), line, section.as_deref(), key.as_deref()),
                line,
                section,
                key,
                message,
            },
            other @ (ConfigError::Read { .. } | ConfigError::Write { .. }) => other,
        }
    }
}

/// "config line 2, in [project-policy], key `x`", or with the file named, "the config file
/// <path>, line 2, …".
fn place(
    file: Option<&Path>,
    line: Option<usize>,
    section: Option<&str>,
    key: Option<&str>,
) -> String {
    let mut place = match file {
        Some(file) => format!("the config file {}", file.display()),
        None => "config".to_owned(),
    };
    if let Some(line) = line {
        let comma = if file.is_some() { "," } else { "" };
        place.push_str(&format!("{comma} line {line}"));
    }
    if let Some(section) = section {
        place.push_str(&format!(", in [{section}]"));
    }
    if let Some(key) = key {
        place.push_str(&format!(", key `{key}`"));
    }
    place
}

fn invalid_whole(message: String) -> ConfigError {
    ConfigError::Invalid {
        place: place(None, None, None, None),
        line: None,
        section: None,
        key: None,
        message,
    }
}

/// The result of [`migrate`]: the text to use, whether it differs from what was read, and one note
/// per change for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    pub text: String,
    pub changed: bool,
    pub notes: Vec<String>,
}

impl Config {
    /// Parses the config file's text. An empty text gives the defaults.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|err| invalid(text, &err))?;
        for (index, remote) in config.remotes.iter().enumerate() {
            if let Some(arg) = remote
                .ssh_args
                .iter()
                .find(|arg| check_ssh_arg(arg).is_err())
            {
                return Err(remote_error(
                    text,
                    &remote.name,
                    "ssh_args",
                    check_ssh_arg(arg),
                ));
            }
            if config.remotes[..index]
                .iter()
                .any(|earlier| earlier.name == remote.name)
            {
                return Err(remote_error(
                    text,
                    &remote.name,
                    "name",
                    Err(format!(
                        "two remotes are named {:?}; each needs its own name",
                        remote.name.as_str()
                    )),
                ));
            }
        }
        Ok(config)
    }
}

/// An error in the `[[remote]]` entry named `name`, at the line where that name is written last.
fn remote_error(text: &str, name: &Machine, key: &str, message: Result<(), String>) -> ConfigError {
    let message = message.err().unwrap_or_default();
    let needle = format!("\"{}\"", name.as_str());
    let line = text
        .lines()
        .enumerate()
        .filter(|(_, line)| line.trim_start().starts_with("name") && line.contains(&needle))
        .map(|(number, _)| number + 1)
        .last();
    ConfigError::Invalid {
        place: place(None, line, Some("[remote]"), Some(key)),
        line,
        section: Some("[remote]".to_owned()),
        key: Some(key.to_owned()),
        message,
    }
}

/// `text` with `entry` added as a new `[[remote]]` table at the end, everything else (comments,
/// order, spacing) as it was. An entry whose name is taken is refused.
pub fn with_remote_added(text: &str, entry: &RemoteEntry) -> Result<String, ConfigError> {
    let config = Config::parse(text)?;
    if config
        .remotes
        .iter()
        .any(|remote| remote.name == entry.name)
    {
        return Err(invalid_whole(format!(
            "a remote named {:?} is already configured (`slate remote remove {}` first)",
            entry.name.as_str(),
            entry.name
        )));
    }
    let mut document = editable(text)?;
    let remotes = document
        .entry("remote")
        .or_insert_with(|| toml_edit::Item::ArrayOfTables(toml_edit::ArrayOfTables::new()))
        .as_array_of_tables_mut()
        .ok_or_else(|| invalid_whole("`remote` must be written as [[remote]] tables".to_owned()))?;
    let mut table = toml_edit::Table::new();
    table.insert("name", toml_edit::value(entry.name.as_str()));
    table.insert("destination", toml_edit::value(entry.destination.as_str()));
    if !entry.ssh_args.is_empty() {
        let args: toml_edit::Array = entry.ssh_args.iter().map(String::as_str).collect();
        table.insert("ssh_args", toml_edit::value(args));
    }
    remotes.push(table);
    checked(document.to_string())
}

/// `text` without the `[[remote]]` table named `name`, everything else as it was; `None` when no
/// remote has that name.
pub fn with_remote_removed(text: &str, name: &Machine) -> Result<Option<String>, ConfigError> {
    Config::parse(text)?;
    let mut document = editable(text)?;
    let Some(remotes) = document
        .get_mut("remote")
        .and_then(toml_edit::Item::as_array_of_tables_mut)
    else {
        return Ok(None);
    };
    let Some(index) = remotes.iter().position(|table| {
        table.get("name").and_then(toml_edit::Item::as_str) == Some(name.as_str())
    }) else {
        return Ok(None);
    };
    remotes.remove(index);
    if remotes.is_empty() {
        document.remove("remote");
    }
    checked(document.to_string()).map(Some)
}

fn editable(text: &str) -> Result<toml_edit::DocumentMut, ConfigError> {
    text.parse()
        .map_err(|err: toml_edit::TomlError| invalid_whole(err.message().trim().to_owned()))
}

/// An edited text, if it still parses: an edit never writes a config that would not load.
fn checked(text: String) -> Result<String, ConfigError> {
    Config::parse(&text)?;
    Ok(text)
}

/// Moves keys written under earlier names to their current place, preserving their values:
/// `[steering] session_idle_minutes` becomes `[project-policy] session_idle_minutes`
/// (docs/states.md §4).
/// If both are set, the new key wins and the old one is dropped with a note. A text with nothing
/// to move comes back unchanged, byte for byte; a rewritten one loses its comments and key order,
/// which is why [`load_or_default`] keeps the earlier file.
pub fn migrate(text: &str) -> Result<Migrated, ConfigError> {
    migrate_with(text, None)
}

/// [`migrate`], and the one push token file every push channel was sent before given to one
/// channel (`push::migrate`), when the caller found that file (`legacy`).
pub fn migrate_with(
    text: &str,
    legacy: Option<push::LegacyToken>,
) -> Result<Migrated, ConfigError> {
    let mut table: toml::Table = text.parse().map_err(|err| invalid(text, &err))?;
    let mut notes = Vec::new();
    if let Some(note) = move_idle_minutes(&mut table)? {
        notes.push(note);
    }
    if let Some(note) = table
        .get_mut("push")
        .and_then(toml::Value::as_table_mut)
        .and_then(|push| push::migrate(push, legacy))
    {
        notes.push(note);
    }
    if notes.is_empty() {
        return Ok(Migrated {
            text: text.to_owned(),
            changed: false,
            notes,
        });
    }
    let text = toml::to_string(&table)
        .map_err(|err| invalid_whole(format!("cannot write the migrated config: {err}")))?;
    Ok(Migrated {
        text,
        changed: true,
        notes,
    })
}

/// `[steering] session_idle_minutes` moved to `[project-policy]`, and the note that says so.
fn move_idle_minutes(table: &mut toml::Table) -> Result<Option<String>, ConfigError> {
    let Some(steering) = table
        .get_mut("steering")
        .and_then(toml::Value::as_table_mut)
    else {
        return Ok(None);
    };
    let Some(old) = steering.remove("session_idle_minutes") else {
        return Ok(None);
    };
    if steering.is_empty() {
        table.remove("steering");
    }
    let policy = table
        .entry("project-policy")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let Some(policy) = policy.as_table_mut() else {
        return Err(invalid_whole(
            "`project-policy` must be a section, not a value".to_owned(),
        ));
    };
    Ok(Some(match policy.get("session_idle_minutes") {
        Some(new) => format!(
            "dropped [steering] session_idle_minutes = {old}: \
             [project-policy] session_idle_minutes = {new} is also set and wins"
        ),
        None => {
            let note = format!(
                "moved [steering] session_idle_minutes = {old} to [project-policy] session_idle_minutes"
            );
            policy.insert("session_idle_minutes".to_owned(), old);
            note
        }
    }))
}

/// Turns a TOML error into one that names the line, the section and the key, so that an unknown
/// key reads "config line 2, in [project-policy], key `sesion_idle_minutes`: unknown field
/// `sesion_idle_minutes`, expected …".
fn invalid(text: &str, err: &toml::de::Error) -> ConfigError {
    let message = err.message().trim().to_owned();
    let Some(span) = err.span() else {
        return invalid_whole(message);
    };
    let start = span.start.min(text.len());
    let before = text.get(..start).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let section = section_at(text, start);
    let key = key_at(text, start);
    ConfigError::Invalid {
        place: place(None, Some(line), section.as_deref(), key.as_deref()),
        line: Some(line),
        section,
        key,
        message,
    }
}

/// The key written on the line that holds byte `offset` (`key = value`), without quotes; `None`
/// on a header line or a line that continues a value.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let line_start = text.get(..offset)?.rfind('\n').map_or(0, |at| at + 1);
    let line = text[line_start..].lines().next()?.trim_start();
    if line.starts_with('[') {
        return None;
    }
    let (key, _) = line.split_once('=')?;
    let key = key.trim().trim_matches(['"', '\'']);
    (!key.is_empty()).then(|| key.to_owned())
}

/// The `[section]` header in force at byte `offset`, read from the text. An offset on a header
/// line itself belongs to the top level, which is where an unknown section name is an error.
fn section_at(text: &str, offset: usize) -> Option<String> {
    let mut section = None;
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let line_end = line_start + line.len();
        let header = line.trim_start().starts_with('[');
        if offset < line_end {
            return if header { None } else { section };
        }
        if header {
            let name = line
                .trim()
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or_default()
                .trim();
            section = Some(name.to_owned());
        }
        line_start = line_end;
    }
    section
}

/// Accepts only a loopback `ip:port`: the API must never be reachable from another machine.
fn loopback_address<'de, D: Deserializer<'de>>(deserializer: D) -> Result<SocketAddr, D::Error> {
    let text = String::deserialize(deserializer)?;
    let address: SocketAddr = text.parse().map_err(|_| {
        serde::de::Error::custom(format!(
            "listen = \"{text}\" is not an ip:port address such as \"127.0.0.1:{DEFAULT_PORT}\""
        ))
    })?;
    if !address.ip().is_loopback() {
        return Err(serde::de::Error::custom(format!(
            "listen = \"{text}\" is not a loopback address: Slate only listens on this machine \
             (use 127.0.0.1 or [::1])"
        )));
    }
    Ok(address)
}

/// Reads a time written as an RFC 3339 string or as a bare TOML date-time.
fn optional_time<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Timestamp>, D::Error> {
    let written = match toml::Value::deserialize(deserializer)? {
        toml::Value::String(text) => text,
        toml::Value::Datetime(datetime) => datetime.to_string(),
        other => {
            return Err(serde::de::Error::custom(format!(
                "expected a time such as \"2026-11-29T20:00:00Z\", found {}",
                other.type_str()
            )))
        }
    };
    Timestamp::parse_rfc3339(&written).map(Some).ok_or_else(|| {
        serde::de::Error::custom(format!(
            "\"{written}\" is not an RFC 3339 time with a zone, such as \"2026-11-29T20:00:00Z\""
        ))
    })
}
