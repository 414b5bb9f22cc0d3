//! `[push]`: the optional push channel, an ntfy topic or a plain webhook that hears of every
//! Needs you notification, for a person away from the desk.
//!
//! ```toml
//! [push]
//! ntfy = "https://ntfy.sh/slate-7f3kq9x2"   # a topic URL: ntfy.sh's or a self-hosted server's
//! ntfy_token_file = "push-token-ntfy"       # the file of ntfy's token, in Slate's config folder
//! webhook = "https://hooks.example.com/slate"
//! webhook_token_file = "push-token-webhook" # the webhook's own secret, in a file of its own
//! commands = false                          # carry a dialog's whole command (off by default)
//! ```
//!
//! An ntfy topic is a password (anyone who knows it can read it), so the URLs are never shown
//! whole: they print, serialize and show in `/health` as their scheme and host only. A server's
//! token is not kept here but in its own file, owner-only like the API token (the `slate`
//! crate's `push`), and each channel names its own file: a channel that names none is sent no
//! token, and one channel's token never goes to the other's server. A URL with a user and
//! password in it is refused for the same reason.
//!
//! Before each channel named its file, one file, `push-token`, was sent to both: [`migrate`]
//! gives it to one channel (the config's only one, or ntfy for an ntfy token, `tk_…`, and the
//! webhook for any other).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The longest URL the section takes.
pub const URL_LIMIT: usize = 2048;

/// The longest ntfy topic name, as ntfy allows them.
pub const TOPIC_LIMIT: usize = 64;

/// `[push]`: nothing is pushed unless a URL is set.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Push {
    /// An ntfy topic: `https://ntfy.sh/<topic>`, or a topic on a self-hosted server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ntfy: Option<NtfyTopic>,
    /// The file of the ntfy server's token, sent to it alone; none sends no token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ntfy_token_file: Option<TokenFile>,
    /// A URL that gets each notification as a JSON POST.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook: Option<PushUrl>,
    /// The file of the webhook's secret, sent to it alone; none sends no token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook_token_file: Option<TokenFile>,
    /// Whether a push carries the dialog's whole command. Off: the machine, project, agent and
    /// reason only, since a push leaves the machine.
    pub commands: bool,
}

impl Push {
    /// Whether anything is to be pushed.
    pub fn is_on(&self) -> bool {
        self.ntfy.is_some() || self.webhook.is_some()
    }

    /// The token file `channel` (`ntfy` or `webhook`) names, if any.
    pub fn token_file(&self, channel: &str) -> Option<&TokenFile> {
        match channel {
            NTFY => self.ntfy_token_file.as_ref(),
            WEBHOOK => self.webhook_token_file.as_ref(),
            _ => None,
        }
    }
}

/// The channels' names, as the counts, the logs and [`Push::token_file`] call them.
pub const NTFY: &str = "ntfy";
pub const WEBHOOK: &str = "webhook";

/// The one token file every channel was sent before each named its own, in Slate's config
/// folder.
pub const LEGACY_TOKEN_FILE: &str = "push-token";

/// The longest token file name.
pub const TOKEN_FILE_LIMIT: usize = 64;

/// The name of a push token's file in Slate's config folder: letters, digits, `-`, `_` and `.`,
/// not starting with `.`, and not one of Slate's own files (the API's `token`, the config).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct TokenFile(String);

impl TokenFile {
    pub fn parse(text: &str) -> Result<TokenFile, String> {
        let fits = !text.is_empty()
            && text.len() <= TOKEN_FILE_LIMIT
            && !text.starts_with('.')
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if !fits {
            return Err(format!(
                "a push token file is a file name in Slate's config folder, such as \
                 push-token-ntfy: letters, digits, `-`, `_` and `.`, at most {TOKEN_FILE_LIMIT}, \
                 not starting with `.`"
            ));
        }
        if text == "token" || text.starts_with("config.toml") {
            return Err(format!(
                "{text} is Slate's own file, not a push token's: name a file of its own"
            ));
        }
        Ok(TokenFile(text.to_owned()))
    }

    /// The file's name in Slate's config folder.
    pub fn name(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for TokenFile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<TokenFile, D::Error> {
        let text = String::deserialize(deserializer)?;
        TokenFile::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// What [`migrate`] knows of the one token file every channel was sent before
/// ([`LEGACY_TOKEN_FILE`]): whether it holds an ntfy access token (`tk_…`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyToken {
    pub ntfy_shaped: bool,
}

/// Gives the one token file every channel was sent before to one channel of `push` (the
/// config's table under `[push]`), or `None` when there is nothing to do: no such file, or a
/// `[push]` that names no channel or already names a token file. With one channel, it is that
/// channel's; with both, ntfy's when it holds an ntfy token (`tk_…`), else the webhook's, and the
/// other channel is sent no token. The note says which, for the log.
pub fn migrate(push: &mut toml::Table, legacy: Option<LegacyToken>) -> Option<String> {
    let legacy = legacy?;
    if push.contains_key("ntfy_token_file") || push.contains_key("webhook_token_file") {
        return None;
    }
    let channel = match (push.contains_key(NTFY), push.contains_key(WEBHOOK)) {
        (false, false) => return None,
        (true, false) => NTFY,
        (false, true) => WEBHOOK,
        (true, true) if legacy.ntfy_shaped => NTFY,
        (true, true) => WEBHOOK,
    };
    push.insert(
        format!("{channel}_token_file"),
        toml::Value::String(LEGACY_TOKEN_FILE.to_owned()),
    );
    let other = if channel == NTFY { WEBHOOK } else { NTFY };
    let said = |channel: &str| {
        if channel == NTFY {
            "ntfy"
        } else {
            "the webhook"
        }
    };
    let alone = if push.contains_key(other) {
        format!(
            "; {} is sent no token until [push] {other}_token_file names a file of its own",
            said(other)
        )
    } else {
        String::new()
    };
    Some(format!(
        "the push token in {LEGACY_TOKEN_FILE} is now {}'s alone: \
         set [push] {channel}_token_file = \"{LEGACY_TOKEN_FILE}\"{alone}",
        said(channel)
    ))
}

/// An `http` or `https` URL with a host, no user or password, no fragment and no control
/// character or space. Shown as its scheme and host only.
#[derive(Clone, PartialEq, Eq)]
pub struct PushUrl {
    url: String,
    /// Where the path starts (the end of `scheme://host[:port]`).
    path_at: usize,
}

impl PushUrl {
    /// Checks `text` as a push URL, or says what is wrong with it without repeating it (it may
    /// hold a secret topic).
    pub fn parse(text: &str) -> Result<PushUrl, String> {
        if text.len() > URL_LIMIT {
            return Err(format!("a push URL is longer than {URL_LIMIT} bytes"));
        }
        if text.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err("a push URL has a space or a control character".to_owned());
        }
        let rest = if let Some(rest) = text.strip_prefix("https://") {
            rest
        } else if let Some(rest) = text.strip_prefix("http://") {
            rest
        } else {
            return Err("a push URL starts with https:// or http://".to_owned());
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        if authority.is_empty() {
            return Err("a push URL names no host".to_owned());
        }
        if authority.contains('@') {
            return Err(
                "a push URL carries no user or password: put the token in the push token file"
                    .to_owned(),
            );
        }
        if text.contains('#') {
            return Err("a push URL has no fragment (`#…`)".to_owned());
        }
        Ok(PushUrl {
            url: text.to_owned(),
            path_at: text.len() - rest.len() + authority.len(),
        })
    }

    /// The whole URL, to send to. Never to print: `Display` does that.
    pub fn expose(&self) -> &str {
        &self.url
    }

    /// `scheme://host[:port]`.
    pub fn origin(&self) -> &str {
        &self.url[..self.path_at]
    }

    /// The path and query, after the host (`/slate-7f3kq9x2`).
    fn path(&self) -> &str {
        &self.url[self.path_at..]
    }
}

impl fmt::Display for PushUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hidden = if self.path().is_empty() { "" } else { "/…" };
        write!(f, "{}{hidden}", self.origin())
    }
}

impl fmt::Debug for PushUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PushUrl({self})")
    }
}

impl Serialize for PushUrl {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PushUrl {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<PushUrl, D::Error> {
        let text = String::deserialize(deserializer)?;
        PushUrl::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// An ntfy topic's URL: a push URL whose path is one topic name of letters, digits, `-` and `_`,
/// with no query. ntfy's JSON publish goes to the server's root with the topic in the body.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
#[serde(transparent)]
pub struct NtfyTopic(PushUrl);

impl NtfyTopic {
    pub fn parse(text: &str) -> Result<NtfyTopic, String> {
        let url = PushUrl::parse(text)?;
        let topic = url.path().strip_prefix('/').unwrap_or("");
        let fits = !topic.is_empty()
            && topic.len() <= TOPIC_LIMIT
            && topic
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'));
        if !fits {
            return Err(format!(
                "an ntfy URL is a server and one topic, such as https://ntfy.sh/my-topic: letters, \
                 digits, `-` and `_`, at most {TOPIC_LIMIT}, and no query"
            ));
        }
        Ok(NtfyTopic(url))
    }

    /// The server's root, where ntfy takes a JSON publish (`https://ntfy.sh/`).
    pub fn server(&self) -> String {
        format!("{}/", self.0.origin())
    }

    /// The topic's name. Never to print: it is the topic's password.
    pub fn expose_topic(&self) -> &str {
        &self.0.path()[1..]
    }
}

impl fmt::Display for NtfyTopic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<'de> Deserialize<'de> for NtfyTopic {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<NtfyTopic, D::Error> {
        let text = String::deserialize(deserializer)?;
        NtfyTopic::parse(&text).map_err(serde::de::Error::custom)
    }
}
