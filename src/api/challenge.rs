//! The loopback server's proof that it holds this user's token, for a client that must not send
//! the token before it knows who listens: the page (`ui/api.js`), which cannot read who owns a
//! port as `client::proof` does.
//!
//! `GET /auth/challenge?nonce=<64 hex digits>` needs no token and answers
//! `{"mac": "<hex>", "bound": "<ip:port>"}`: the HMAC-SHA256, keyed with the token, of
//! `slate-page-proof|<ip:port>|<nonce>`, where `ip:port` is the address the listener is bound
//! to, as the server itself knows it ([`Bound`], set by `api::serve_both`), never one a request
//! names. The client checks the MAC against the address it connected to before it sends the
//! token. A stranger's listener cannot answer: it does not hold the token, and a MAC it fetches
//! from this user's Slate on the stranger's behalf (a proxy on another port or address) names the
//! address this Slate is bound to, not the stranger's. The nonce, chosen by the client, makes an
//! old answer worthless. A MAC tells nothing of its key, so anyone may ask.
//!
//! The server compares nothing here: it only answers. The token proves the client to the server
//! (`guard`); this proves the server to the client (docs/api.md, "Who each end proves it is").

use std::net::SocketAddr;

use axum::extract::{Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use hmac::{Hmac, Mac};
use serde_json::json;
use sha2::Sha256;

use crate::api::errors::error;
use crate::api::AppState;

/// What the MAC's message starts with, so a MAC made here means nothing anywhere else.
pub const CONTEXT: &str = "slate-page-proof";

/// How many hex digits a nonce has: 32 random bytes.
pub const NONCE_DIGITS: usize = 64;

/// The address the loopback listener is bound to, as the server knows it.
#[derive(Debug, Clone, Copy)]
pub struct Bound(pub SocketAddr);

/// The query of `GET /auth/challenge`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Challenge {
    nonce: String,
}

/// The hex HMAC-SHA256, keyed with `token`, of `slate-page-proof|<bound>|<nonce>`, with `bound`
/// written as `SocketAddr` writes it (`127.0.0.1:7494`, `[::1]:7494`), as a URL's host is.
pub fn mac(token: &str, bound: SocketAddr, nonce: &str) -> String {
    // HMAC takes a key of any length; `new_from_slice` refuses none.
    let mut mac =
        Hmac::<Sha256>::new_from_slice(token.as_bytes()).expect("HMAC accepts a key of any length");
    mac.update(format!("{CONTEXT}|{bound}|{nonce}").as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// True for a nonce of exactly [`NONCE_DIGITS`] lower-case hex digits.
pub fn valid_nonce(nonce: &str) -> bool {
    nonce.len() == NONCE_DIGITS
        && nonce
            .bytes()
            .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

/// `GET /auth/challenge`: the MAC of the nonce and the bound address (the module's paragraph).
pub async fn answer(
    State(state): State<AppState>,
    bound: Option<Extension<Bound>>,
    query: Result<Query<Challenge>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let nonce = match query {
        Ok(Query(challenge)) if valid_nonce(&challenge.nonce) => challenge.nonce,
        _ => {
            return error(
                StatusCode::BAD_REQUEST,
                "bad_request",
                format!(
                    "the challenge needs ?nonce= and {NONCE_DIGITS} lower-case hex digits, and \
                     nothing else"
                ),
            )
        }
    };
    // A router served without a listener (a test's `api::router`) is bound nowhere: it has
    // nothing to prove its address by.
    let Some(Extension(Bound(bound))) = bound else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "this server listens on no port, so it has no address to prove",
        );
    };
    let mut response = Json(json!({
        "mac": mac(&state.security.token, bound, &nonce),
        "bound": bound.to_string(),
    }))
    .into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mac_is_hmac_sha256_of_the_context_the_address_and_the_nonce() {
        let nonce = "ab".repeat(32);
        let at: SocketAddr = "127.0.0.1:7494".parse().unwrap();
        let one = mac("token", at, &nonce);
        assert_eq!(one.len(), 64);
        assert_ne!(one, mac("token", "127.0.0.1:7495".parse().unwrap(), &nonce));
        assert_ne!(one, mac("token", "[::1]:7494".parse().unwrap(), &nonce));
        assert_ne!(one, mac("token", at, &"cd".repeat(32)));
        assert_ne!(one, mac("other", at, &nonce));
    }

    #[test]
    fn only_64_lower_case_hex_digits_are_a_nonce() {
        assert!(valid_nonce(&"0a".repeat(32)));
        assert!(!valid_nonce(&"0A".repeat(32)));
        assert!(!valid_nonce(&"0a".repeat(31)));
        assert!(!valid_nonce(&"0a".repeat(33)));
        assert!(!valid_nonce(&format!("{}g", "0".repeat(63))));
        assert!(!valid_nonce(""));
    }
}
