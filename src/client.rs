//! The one client for a running Slate (a `slate serve` or the desktop app) on this machine: it
//! probes `/health`, reads JSON, posts with the token, and follows the event stream.
//!
//! The command line reads the live list through it and nudges the server after writing the store,
//! `slate run` and `slate hook` post their reports with it, and `slate watch`, the app, the tests
//! and the benchmarks follow the event stream with it. HTTP itself is `ureq`'s (plain HTTP: Slate
//! talks to itself on this machine only, and the client ignores proxy settings for the same
//! reason); this module adds where the server is (`Client::local`: this user's API socket, else
//! the config's `[server] listen`; `SLATE_API` chooses a TCP address instead), the token, and the
//! reading of server-sent events. It knows nothing of what the answers mean.
//!
//! Nothing is sent before the other end is proven this user's (`client::transport` connects,
//! `client::proof` proves): the socket's folder and file by their owner and modes and the peer by
//! `SO_PEERCRED`, a TCP listener by the kernel's table of sockets. A listener that is not shown
//! to be this user's gets no byte, and the request fails with `ClientError::NotYours`.
//!
//! Every request carries the token when the client has one, reads included: a listener that is
//! this user's may still be another HOME's Slate, and a server refuses a token that is not its
//! own. `Client::answer` turns that into whose Slate answered, so a command reads only from its
//! own.

mod proof;
mod transport;

use std::io::{self, BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::DeserializeOwned;

use crate::places::Places;
use slate_core::model::ServerKind;
use slate_core::protocol::{ErrorBody, ErrorCode, RespondError, RespondRequest, Responded};
use slate_sources::sources::roots::Env;

/// How long a request may take when the caller gives no limit of its own.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The most a JSON answer may hold; the live list of thousands of sessions is far below it.
const BODY_LIMIT: u64 = 64 * 1024 * 1024;

/// Why a request to a running Slate failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot reach slate at {address}: {detail}")]
    Unreachable { address: SocketAddr, detail: String },
    #[error("slate at {address} answered {status} to {path}")]
    Status {
        address: SocketAddr,
        path: String,
        status: u16,
    },
    #[error("slate at {address} sent an answer to {path} that cannot be read: {detail}")]
    Unreadable {
        address: SocketAddr,
        path: String,
        detail: String,
    },
    #[error("the connection to slate broke: {0}")]
    Io(#[from] io::Error),
    /// The listener is not shown to be this user's: nothing was sent to it.
    #[error("{0}")]
    NotYours(String),
}

pub use proof::NotYours;

/// Where the running engine listens: `SLATE_API` (`http://127.0.0.1:PORT`) when it is set and
/// names a loopback port, else `configured` (the config's `[server] listen`). `slate run` reports
/// there and the command line reads there, so a person who points one at a server points both.
pub fn engine_address(env: &Env, configured: SocketAddr) -> SocketAddr {
    env.slate_api
        .as_deref()
        .and_then(address_of)
        .unwrap_or(configured)
}

/// The loopback address named by a `http://127.0.0.1:PORT` URL (a bare port means 127.0.0.1).
pub fn address_of(url: &str) -> Option<SocketAddr> {
    let rest = url.strip_prefix("http://").unwrap_or(url);
    let authority = rest.split('/').next()?;
    if let Ok(address) = authority.parse::<SocketAddr>() {
        return address.ip().is_loopback().then_some(address);
    }
    let port = authority.rsplit(':').next()?.parse().ok()?;
    Some(SocketAddr::from(([127, 0, 0, 1], port)))
}

/// A session id as one segment of a path: anything but letters, digits and `-_.~:` is
/// percent-encoded, so an id cannot reach another endpoint.
fn path_segment(id: &str) -> String {
    id.bytes()
        .map(|byte| match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b':' => {
                (byte as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// Who answered at a client's address (`Client::answer`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A Slate that took this client's token, so what it sends is this HOME's. `version`,
    /// `kind` (the app or the service) and `pid` are what its `/health` reports; an older Slate
    /// says no kind and no pid.
    Ours {
        version: String,
        kind: Option<ServerKind>,
        pid: Option<u32>,
    },
    /// A Slate that is not this HOME's: what it sends is someone else's sessions.
    Foreign(Foreign),
    /// No Slate answered in time.
    Silent,
    /// Something listens where this user's Slate would, but it is not shown to be this user's:
    /// it was sent nothing, and what it would say is not read.
    NotYours(NotYours),
}

/// Why a Slate that answered is not this HOME's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Foreign {
    /// It refused this client's token: it holds another.
    #[error("its token differs")]
    TokenDiffers,
    /// This client has no token to prove whose it is. Every Slate writes its token before it
    /// listens, so a HOME without one has no Slate running.
    #[error("this HOME has no token")]
    NoToken,
}

/// A client of the Slate at one address (and this user's API socket, when it has one), with
/// the token when there is one.
#[derive(Clone)]
pub struct Client {
    address: SocketAddr,
    socket: Option<PathBuf>,
    token: Option<String>,
    agent: ureq::Agent,
}

impl std::fmt::Debug for Client {
    // The token never reaches a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("address", &self.address)
            .field("socket", &self.socket)
            .field("token", &self.token.as_ref().map(|_| "…"))
            .finish()
    }
}

/// One server-sent event: its name (`message` when the server gave none) and its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerEvent {
    pub event: String,
    pub data: String,
}

impl Client {
    /// A client of the Slate at the loopback TCP `address`, proven this user's before anything
    /// is sent. `token` is sent with every request: a post needs it, and a read with it is
    /// answered only by the Slate that holds the same token.
    pub fn new(address: SocketAddr, token: Option<String>) -> Client {
        Client::over(address, None, token)
    }

    /// This HOME's Slate as every command, `slate hook` and the app reach it: at `SLATE_API`
    /// when it names a loopback address (TCP, by the person's choice), else over this user's API
    /// socket (`Places::api_socket`), and at `configured` (the config's `[server] listen`) when
    /// no Slate listens on the socket.
    pub fn local(
        env: &Env,
        places: &Places,
        configured: SocketAddr,
        token: Option<String>,
    ) -> Client {
        match env.slate_api.as_deref().and_then(address_of) {
            Some(address) => Client::new(address, token),
            None => Client::over(configured, Some(places.api_socket(env)), token),
        }
    }

    /// The same client, over the API socket at `socket` first.
    pub fn with_socket(self, socket: Option<PathBuf>) -> Client {
        Client::over(self.address, socket, self.token)
    }

    fn over(address: SocketAddr, socket: Option<PathBuf>, token: Option<String>) -> Client {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .max_redirects(0)
            .user_agent(concat!("slate/", env!("CARGO_PKG_VERSION")))
            .build();
        let route = transport::Route {
            socket: socket.clone(),
            address,
        };
        let agent = ureq::Agent::with_parts(
            config,
            transport::Proven(route),
            ureq::unversioned::resolver::DefaultResolver::default(),
        );
        Client {
            address,
            socket,
            token,
            agent,
        }
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The API socket this client tries first, when it has one.
    pub fn socket(&self) -> Option<&Path> {
        self.socket.as_deref()
    }

    /// True when the client has a token to post with.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// `request` with the token, when the client has one.
    fn with_token<B>(&self, request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        match &self.token {
            Some(token) => request.header("Authorization", format!("Bearer {token}")),
            None => request,
        }
    }

    fn unreachable(&self, err: ureq::Error) -> ClientError {
        match err {
            ureq::Error::Io(err) => ClientError::Io(err),
            ureq::Error::Other(other) => match other.downcast::<NotYours>() {
                Ok(why) => ClientError::NotYours(why.0),
                Err(other) => ClientError::Unreachable {
                    address: self.address,
                    detail: other.to_string(),
                },
            },
            other => ClientError::Unreachable {
                address: self.address,
                detail: other.to_string(),
            },
        }
    }

    fn check(&self, path: &str, status: u16) -> Result<(), ClientError> {
        if (200..300).contains(&status) {
            return Ok(());
        }
        Err(ClientError::Status {
            address: self.address,
            path: path.to_string(),
            status,
        })
    }

    /// True when a Slate answers `GET /health` with 200 within `timeout`.
    pub fn probe(&self, timeout: Duration) -> bool {
        self.agent
            .get(self.url("/health"))
            .config()
            .timeout_global(Some(timeout))
            .build()
            .call()
            .is_ok_and(|response| response.status() == 200)
    }

    /// Whose Slate answers `GET /health` (with the token) within `timeout`: this HOME's, another
    /// user's or HOME's, or none.
    pub fn answer(&self, timeout: Duration) -> Answer {
        let request = self
            .agent
            .get(self.url("/health"))
            .config()
            .timeout_global(Some(timeout))
            .build();
        let mut response = match self.with_token(request).call() {
            Ok(response) => response,
            Err(err) => {
                return match self.unreachable(err) {
                    ClientError::NotYours(why) => Answer::NotYours(NotYours(why)),
                    _ => Answer::Silent,
                }
            }
        };
        let foreign = match (response.status().as_u16(), &self.token) {
            (401, Some(_)) => Foreign::TokenDiffers,
            (200 | 401, None) => Foreign::NoToken,
            (200, Some(_)) => {
                let health: Option<serde_json::Value> = response
                    .body_mut()
                    .with_config()
                    .limit(BODY_LIMIT)
                    .read_to_string()
                    .ok()
                    .and_then(|text| serde_json::from_str(&text).ok());
                let field = |name: &str| health.as_ref().map(|health| health[name].clone());
                let version = field("version")
                    .and_then(|version| version.as_str().map(str::to_string))
                    .unwrap_or_else(|| "unknown".to_string());
                let kind = field("kind").and_then(|kind| serde_json::from_value(kind).ok());
                let pid = field("pid")
                    .and_then(|pid| pid.as_u64())
                    .and_then(|pid| u32::try_from(pid).ok());
                return Answer::Ours { version, kind, pid };
            }
            _ => return Answer::Silent,
        };
        Answer::Foreign(foreign)
    }

    /// The body of `GET path`, read as JSON.
    pub fn get_json<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        let text = self.get(path)?;
        serde_json::from_str(&text).map_err(|err| ClientError::Unreadable {
            address: self.address,
            path: path.to_string(),
            detail: err.to_string(),
        })
    }

    /// The body of `GET path` as text, when the server answers 2xx.
    pub fn get(&self, path: &str) -> Result<String, ClientError> {
        let request = self
            .agent
            .get(self.url(path))
            .config()
            .timeout_global(Some(REQUEST_TIMEOUT))
            .build();
        let mut response = self
            .with_token(request)
            .call()
            .map_err(|err| self.unreachable(err))?;
        self.check(path, response.status().as_u16())?;
        response
            .body_mut()
            .with_config()
            .limit(BODY_LIMIT)
            .read_to_string()
            .map_err(|err| ClientError::Unreadable {
                address: self.address,
                path: path.to_string(),
                detail: err.to_string(),
            })
    }

    /// `POST path` with the token and `body` as JSON (an empty body when `None`), within
    /// `timeout`. Returns the status; a request without a token is refused by the server.
    pub fn post(
        &self,
        path: &str,
        body: Option<&serde_json::Value>,
        timeout: Duration,
    ) -> Result<u16, ClientError> {
        let request = self.with_token(
            self.agent
                .post(self.url(path))
                .config()
                .timeout_global(Some(timeout))
                .build(),
        );
        let response = match body {
            Some(body) => request
                .header("Content-Type", "application/json")
                .send(body.to_string()),
            None => request.send_empty(),
        }
        .map_err(|err| self.unreachable(err))?;
        let status = response.status().as_u16();
        self.check(path, status)?;
        Ok(status)
    }

    /// `POST /sessions/{id}/respond`: answers the dialog on a session's screen. The server
    /// re-reads the screen, types the keys once and waits up to five seconds for the dialog to
    /// leave, or forwards the answer to another machine, so this waits longer than the longest
    /// forward. Every refusal comes back as its code and
    /// sentence; a server that cannot be reached, or whose answer cannot be read, as
    /// `unreachable`.
    /// `POST /sessions/{id}/mute`: mutes (`muted`) or unmutes a session; the status code.
    pub fn set_muted(&self, id: &str, muted: bool) -> Result<u16, ClientError> {
        let path = format!("/sessions/{}/mute", path_segment(id));
        self.post(
            &path,
            Some(&serde_json::json!({ "muted": muted })),
            REQUEST_TIMEOUT,
        )
    }

    pub fn respond(&self, id: &str, request: &RespondRequest) -> Result<Responded, RespondError> {
        let path = format!("/sessions/{}/respond", path_segment(id));
        let unreachable = |detail: String| RespondError::new(ErrorCode::Unreachable, detail);
        let body = serde_json::to_string(request).map_err(|err| unreachable(err.to_string()))?;
        // Longer than the longest answer the server carries out: a forwarded one, which waits for
        // the remote's own confirmation over its link.
        let timeout = slate_core::remote::forward_limit(&slate_core::remote::LinkOptions::default())
            + REQUEST_TIMEOUT;
        let request = self.with_token(
            self.agent
                .post(self.url(&path))
                .config()
                .timeout_global(Some(timeout))
                .build(),
        );
        let mut response = request
            .header("Content-Type", "application/json")
            .send(body)
            .map_err(|err| unreachable(self.unreachable(err).to_string()))?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(BODY_LIMIT)
            .read_to_string()
            .map_err(|err| unreachable(format!("cannot read the answer to {path}: {err}")))?;
        if status == 200 {
            return serde_json::from_str(&text)
                .map_err(|err| unreachable(format!("cannot read the answer to {path}: {err}")));
        }
        if let Ok(body) = serde_json::from_str::<ErrorBody>(&text) {
            return Err(body.error);
        }
        // A refusal whose code is not an answer's (the guard's `body_too_large`, …) keeps its
        // sentence, and its status says the code; a Slate older than this one sent the sentence
        // alone, as `{"error": "…"}`.
        let message = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|value| {
                let error = &value["error"];
                error["message"]
                    .as_str()
                    .or(error.as_str())
                    .map(str::to_string)
            })
            .unwrap_or_else(|| format!("slate at {} answered {status} to {path}", self.address));
        let code = match status {
            401 => ErrorCode::Unauthorized,
            404 => ErrorCode::UnknownSession,
            400 | 413 | 415 => ErrorCode::BadRequest,
            _ => ErrorCode::Unreachable,
        };
        Err(RespondError::new(code, message))
    }

    /// Opens the live list's event stream (`/sessions/live/stream`).
    pub fn events(&self) -> Result<EventStream, ClientError> {
        let path = "/sessions/live/stream";
        let request = self
            .agent
            .get(self.url(path))
            .header("Accept", "text/event-stream")
            .config()
            .timeout_connect(Some(Duration::from_secs(2)))
            .timeout_recv_response(Some(REQUEST_TIMEOUT))
            .build();
        let response = self
            .with_token(request)
            .call()
            .map_err(|err| self.unreachable(err))?;
        self.check(path, response.status().as_u16())?;
        Ok(EventStream {
            lines: BufReader::new(Box::new(response.into_body().into_reader())),
        })
    }

    /// `POST path` with the token and `body`, whose answer comes line by line as the server
    /// writes it (`/hooks/decision`): its head within `head_within` of the start, all of it
    /// within `within`. Returns the answer's lines to read.
    pub fn post_lines(
        &self,
        path: &str,
        body: &serde_json::Value,
        head_within: Duration,
        within: Duration,
    ) -> Result<BufReader<Box<dyn io::Read + Send>>, ClientError> {
        let request = self
            .agent
            .post(self.url(path))
            .config()
            .timeout_connect(Some(head_within))
            .timeout_recv_response(Some(head_within))
            .timeout_global(Some(within))
            .build();
        let response = self
            .with_token(request)
            .header("Content-Type", "application/json")
            .send(body.to_string())
            .map_err(|err| self.unreachable(err))?;
        self.check(path, response.status().as_u16())?;
        Ok(BufReader::new(Box::new(response.into_body().into_reader())))
    }
}

/// Reads server-sent events one at a time, as they arrive.
pub struct EventStream {
    lines: BufReader<Box<dyn io::Read + Send>>,
}

impl EventStream {
    /// Reads events from any byte stream (the tests feed it text).
    pub fn from_reader(reader: impl io::Read + Send + 'static) -> EventStream {
        EventStream {
            lines: BufReader::new(Box::new(reader)),
        }
    }

    /// The next event, skipping comments such as keep-alives; `None` when the server closed the
    /// stream.
    pub fn next_event(&mut self) -> Result<Option<ServerEvent>, ClientError> {
        let mut event = String::new();
        let mut data: Vec<String> = Vec::new();
        let mut line = String::new();
        loop {
            line.clear();
            if self.lines.read_line(&mut line)? == 0 {
                return Ok(None);
            }
            let field = line.trim_end_matches(['\r', '\n']);
            if field.is_empty() {
                if data.is_empty() && event.is_empty() {
                    continue;
                }
                return Ok(Some(ServerEvent {
                    event: if event.is_empty() {
                        "message".to_string()
                    } else {
                        event
                    },
                    data: data.join("\n"),
                }));
            }
            if field.starts_with(':') {
                continue;
            }
            let (name, value) = field.split_once(':').unwrap_or((field, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match name {
                "event" => event = value.to_string(),
                "data" => data.push(value.to_string()),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slate_api_names_a_loopback_address() {
        let address = |url: &str| address_of(url).map(|address| address.to_string());
        assert_eq!(
            address("http://127.0.0.1:4123"),
            Some("127.0.0.1:4123".into())
        );
        assert_eq!(address("http://[::1]:4123/"), Some("[::1]:4123".into()));
        assert_eq!(
            address("http://localhost:4123"),
            Some("127.0.0.1:4123".into())
        );
        assert_eq!(
            address("http://10.0.0.7:4123"),
            None,
            "slate talks loopback only"
        );
        assert_eq!(address("http://127.0.0.1"), None);
        assert_eq!(address(""), None);
    }

    #[test]
    fn events_are_read_field_by_field_and_comments_skipped() {
        let text = ": keep-alive\n\nevent: snapshot\ndata: {\"a\":1}\n\n\
                    data: one\ndata: two\n\nevent: removed\r\ndata:x\r\n\r\n";
        let mut stream = EventStream::from_reader(io::Cursor::new(text.as_bytes().to_vec()));
        let mut seen = Vec::new();
        while let Some(event) = stream.next_event().unwrap() {
            seen.push((event.event, event.data));
        }
        assert_eq!(
            seen,
            [
                ("snapshot".to_string(), "{\"a\":1}".to_string()),
                ("message".to_string(), "one\ntwo".to_string()),
                ("removed".to_string(), "x".to_string()),
            ]
        );
    }
}
