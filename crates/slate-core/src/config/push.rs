//! `[push]`: the optional push channel, an ntfy topic or a plain webhook that hears of every
//! Needs you notification, for a person away from the desk.
//!
//! ```toml
//! [push]
//! ntfy = "https://ntfy.sh/slate-7f3kq9x2"   # a topic URL: ntfy.sh's or a self-hosted server's
//! webhook = "https://hooks.example.com/slate"
//! commands = false                          # carry a dialog's whole command (off by default)
//! ```
//!
//! An ntfy topic is a password (anyone who knows it can read it), so the URLs are never shown
//! whole: they print, serialize and show in `/health` as their scheme and host only. A server's
//! token is not kept here but in its own file, owner-only like the API token (the `slate`
//! crate's `push`). A URL with a user and password in it is refused for the same reason.

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
    /// A URL that gets each notification as a JSON POST.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook: Option<PushUrl>,
    /// Whether a push carries the dialog's whole command. Off: the machine, project, agent and
    /// reason only, since a push leaves the machine.
    pub commands: bool,
}

impl Push {
    /// Whether anything is to be pushed.
    pub fn is_on(&self) -> bool {
        self.ntfy.is_some() || self.webhook.is_some()
    }
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
