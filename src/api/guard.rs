//! The guard every request to the API passes before any endpoint sees it: the `Host` allow-list
//! against DNS rebinding (the loopback names with the server's port, and the loopback address it
//! is bound to), the `Origin` allow-list against other web sites, one `Host` and one `Origin` at
//! most, the bearer token on every request that changes anything (and on a read that carries
//! one), and the size and time limits of a request's body; and the CORS headers an allowed origin
//! gets. Every refusal has the API's one error shape (`errors`).
//!
//! A request with the right token, or one that came over this user's API socket (`local`: its
//! peer was proven this user by `SO_PEERCRED`, and no browser reaches a Unix socket, so its
//! `Host` is not checked), is marked [`Authorized`]; [`private`] lets only such a request reach
//! a route that shows sessions, reads included.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::answers::ErrorCode;
use crate::api::errors::error;

/// The largest request body accepted, in bytes.
pub const BODY_LIMIT: usize = 64 * 1024;

/// What the guard checks a request against: the names the server answers to, its token, and how
/// long a request's body may take. (No `Debug`: the token never reaches a log.)
pub struct Guard {
    pub names: Names,
    pub token: String,
    pub body_within: Duration,
}

/// Marks a request that carried this server's token or came over this user's socket.
#[derive(Debug, Clone, Copy)]
pub struct Authorized;

/// The names the server answers to: `Host` values and page origins.
#[derive(Debug)]
pub struct Names {
    hosts: Vec<String>,
    origins: Vec<String>,
}

impl Names {
    /// The loopback names with `port`, and `bound` (the address the listener is bound to) when
    /// it is another loopback address, such as `--listen 127.0.0.2:0`: a request made to the
    /// address the server printed must pass.
    pub fn new(port: u16, bound: Option<IpAddr>) -> Names {
        let mut hosts = vec![
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("[::1]:{port}"),
        ];
        if let Some(ip) = bound.filter(IpAddr::is_loopback) {
            let host = SocketAddr::new(ip, port).to_string();
            if !hosts.contains(&host) {
                hosts.push(host);
            }
        }
        let mut origins: Vec<String> = hosts.iter().map(|host| format!("http://{host}")).collect();
        origins.push("tauri://localhost".to_string());
        origins.push("http://tauri.localhost".to_string());
        Names { hosts, origins }
    }

    fn host(&self, host: &str) -> bool {
        self.hosts
            .iter()
            .any(|allowed| host.eq_ignore_ascii_case(allowed))
    }

    fn origin(&self, origin: &str) -> bool {
        self.origins
            .iter()
            .any(|allowed| origin.eq_ignore_ascii_case(allowed))
    }
}

/// The guard every request passes: `Host` (and the authority of an absolute URL), then
/// `Origin`, then (for anything but reads) the token, then the body size. A header that decides
/// trust must come once: with two, which one counts would be a guess, so two are refused.
pub async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let names = &guard.names;
    let headers = request.headers();
    for name in [header::HOST, header::ORIGIN] {
        if let Some(refusal) = repeated(headers, &name) {
            return refusal;
        }
    }
    if over_socket(&request) {
        return guarded(&guard, request, next).await;
    }
    let refused_host = || {
        error(
            StatusCode::MISDIRECTED_REQUEST,
            "misdirected_request",
            format!("this server answers only to {}", names.hosts.join(", ")),
        )
    };
    match headers
        .get(header::HOST)
        .and_then(|host| host.to_str().ok())
    {
        Some(host) if names.host(host) => {}
        Some(_) => return refused_host(),
        None => {
            return error(
                StatusCode::MISDIRECTED_REQUEST,
                "misdirected_request",
                "the request has no Host",
            )
        }
    }
    // A request line may name its target as a whole URL (`GET http://host/path`), and that
    // authority is the one HTTP says counts: it must be ours too.
    if let Some(authority) = request.uri().authority() {
        if !names.host(authority.as_str()) {
            return refused_host();
        }
    }
    let origin = match headers.get(header::ORIGIN) {
        Some(origin) => match origin.to_str() {
            Ok(origin) if names.origin(origin) => Some(origin.to_string()),
            _ => {
                return error(
                    StatusCode::FORBIDDEN,
                    "forbidden_origin",
                    "requests from other sites are refused",
                )
            }
        },
        None => None,
    };
    // The desktop window's page comes from the webview's own origin, so its requests are
    // cross-origin: answer the allowed origins' preflights, and name them on every response.
    if *request.method() == Method::OPTIONS {
        let mut response = StatusCode::NO_CONTENT.into_response();
        allow_origin(&mut response, origin.as_deref());
        return response;
    }
    let mut response = guarded(&guard, request, next).await;
    allow_origin(&mut response, origin.as_deref());
    response
}

/// A 400 when `name` appears more than once in `headers`.
fn repeated(headers: &HeaderMap, name: &HeaderName) -> Option<Response> {
    (headers.get_all(name).iter().count() > 1).then(|| {
        error(
            StatusCode::BAD_REQUEST,
            "bad_request",
            format!("the request has more than one {name} header"),
        )
    })
}

/// Adds the CORS headers for an allowed origin (never for any other: those were refused).
fn allow_origin(response: &mut Response, origin: Option<&str>) {
    let Some(origin) = origin.and_then(|origin| HeaderValue::from_str(origin).ok()) else {
        return;
    };
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.insert(header::VARY, HeaderValue::from_static("Origin"));
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("authorization, content-type"),
    );
}

/// True when `request` came over this user's API socket.
fn over_socket(request: &Request) -> bool {
    request
        .extensions()
        .get::<crate::api::local::OverSocket>()
        .is_some()
}

/// The token and body-size part of the guard, for requests that passed `Host` and `Origin`.
/// A read needs no token here (the page's files, `/health`); a route that shows sessions asks
/// for it with [`private`]. A request that carries a token must carry ours, reads included: a
/// client whose token differs belongs to another user or HOME, and is told so rather than
/// handed this HOME's sessions as its own. A request over the socket needs no token: its sender
/// is this user.
async fn guarded(guard: &Guard, mut request: Request, next: Next) -> Response {
    let headers = request.headers();
    let read = matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    let presented = headers.contains_key(header::AUTHORIZATION);
    let matches = bearer_matches(headers, &guard.token);
    let socket = over_socket(&request);
    if (presented || (!read && !socket)) && !matches {
        let message = if presented {
            "the token sent is not this server's: this Slate belongs to another user or HOME \
             (send its own token, or none to read)"
        } else {
            "this request needs `Authorization: Bearer <token>` (the token is in the config folder)"
        };
        return error(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized.as_str(),
            message,
        );
    }
    if matches || socket {
        request.extensions_mut().insert(Authorized);
    }
    if !read {
        // The size limit holds for every body, not only for handlers that read one, and so
        // does the time limit: a body sent a byte at a time must not hold a connection.
        let (parts, body) = request.into_parts();
        let within = guard.body_within;
        let bytes = match tokio::time::timeout(within, axum::body::to_bytes(body, BODY_LIMIT)).await
        {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(_)) => {
                return error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "body_too_large",
                    format!("request bodies are limited to {BODY_LIMIT} bytes"),
                )
            }
            Err(_) => {
                return error(
                    StatusCode::REQUEST_TIMEOUT,
                    "request_timeout",
                    format!(
                        "the request body did not arrive within {} s",
                        within.as_secs()
                    ),
                )
            }
        };
        let request = Request::from_parts(parts, Body::from(bytes));
        return next.run(request).await;
    }
    next.run(request).await
}

/// The guard of every route that shows sessions: only an [`Authorized`] request passes.
pub async fn private(request: Request, next: Next) -> Response {
    if request.extensions().get::<Authorized>().is_none() {
        return error(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized.as_str(),
            "this request needs `Authorization: Bearer <token>` (the token is in the config \
             folder), or this user's API socket",
        );
    }
    next.run(request).await
}

/// Compares the presented token with ours in time that does not depend on where they differ.
/// The scheme's name is case-insensitive, as HTTP says.
fn bearer_matches(headers: &HeaderMap, token: &str) -> bool {
    let Some((scheme, presented)) = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim_start().split_once(' '))
    else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return false;
    }
    let presented = presented.trim().as_bytes();
    let expected = token.as_bytes();
    presented.len() == expected.len()
        && presented
            .iter()
            .zip(expected)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_names_with_our_port_are_hosts() {
        let names = Names::new(7411, None);
        assert!(names.host("127.0.0.1:7411"));
        assert!(names.host("localhost:7411"));
        assert!(names.host("[::1]:7411"));
        assert!(!names.host("127.0.0.1:7412"));
        assert!(!names.host("evil.example:7411"));
        assert!(!names.host("127.0.0.1"));
        assert!(!names.host("127.0.0.2:7411"));
        // The loopback address the listener is bound to is a name too; another address is not.
        let names = Names::new(7411, Some("127.0.0.2".parse().unwrap()));
        assert!(names.host("127.0.0.2:7411"));
        assert!(names.origin("http://127.0.0.2:7411"));
        assert!(!names.host("127.0.0.3:7411"));
        let names = Names::new(7411, Some("10.0.0.2".parse().unwrap()));
        assert!(!names.host("10.0.0.2:7411"));
    }
}
