//! The server's proof that it holds the token, for the page, which cannot ask the kernel who
//! listens on a port: `GET /auth/challenge?nonce=…` answers, with no token, the HMAC-SHA256 of
//! the nonce and the address the listener is bound to, keyed with the token. Checked here against
//! an HMAC computed by the test itself, on real listeners.

use std::net::SocketAddr;

use axum::http::StatusCode;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::{anonymous_get, call, error_code, json, serve_on_free_port, started, TOKEN};

/// One plain `GET` over TCP with no token, as any local program (or the page) sends it: the
/// status, the head in lower case and the body.
fn plain_get(address: SocketAddr, path: &str) -> (u16, String, String) {
    let answer = super::plain_get(address, path);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_string())
}

/// The MAC the page expects from this user's Slate at `address`, computed here.
fn expected(address: &str, nonce: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(TOKEN.as_bytes()).unwrap();
    mac.update(format!("slate-page-proof|{address}|{nonce}").as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_challenge_is_answered_with_a_mac_of_the_token_for_the_bound_address() {
    let (_temp, handle, thread) = started();
    let (one, stop_one, server_one) = serve_on_free_port(&handle).await;
    let (two, stop_two, server_two) = serve_on_free_port(&handle).await;
    let nonce = "0f".repeat(32);
    let asked = {
        let nonce = nonce.clone();
        tokio::task::spawn_blocking(move || {
            let path = format!("/auth/challenge?nonce={nonce}");
            (plain_get(one, &path), plain_get(two, &path))
        })
    };
    let ((status, head, body), (status_two, _, body_two)) = asked.await.unwrap();
    assert_eq!((status, status_two), (200, 200), "{body} {body_two}");
    assert!(head.contains("cache-control: no-store"), "{head}");
    let answer = json(&body);
    assert_eq!(answer["bound"], one.to_string(), "{body}");
    assert_eq!(answer["mac"], expected(&one.to_string(), &nonce), "{body}");
    // The same token and nonce on another port: another MAC, so a listener there that relays the
    // challenge to this one gets a MAC the page refuses.
    let answer_two = json(&body_two);
    assert_eq!(answer_two["mac"], expected(&two.to_string(), &nonce));
    assert_ne!(answer_two["mac"], answer["mac"]);
    assert!(!body.contains(TOKEN) && !head.contains(TOKEN));

    // A nonce that is not 64 lower-case hex digits, or none, or more than the nonce: 400.
    let refused = tokio::task::spawn_blocking(move || {
        [
            "/auth/challenge".to_string(),
            "/auth/challenge?nonce=".to_string(),
            format!("/auth/challenge?nonce={}", "0f".repeat(31)),
            format!("/auth/challenge?nonce={}", "0f".repeat(33)),
            format!("/auth/challenge?nonce={}", "0F".repeat(32)),
            format!("/auth/challenge?nonce={}zz", "0f".repeat(31)),
            format!("/auth/challenge?nonce={}&other=1", "0f".repeat(32)),
        ]
        .map(|path| (plain_get(one, &path), path))
    })
    .await
    .unwrap();
    for ((status, _, body), path) in refused {
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(error_code(&body), "bad_request", "{path}: {body}");
    }

    let _ = stop_one.send(());
    let _ = stop_two.send(());
    server_one.await.unwrap().unwrap();
    server_two.await.unwrap().unwrap();
    handle.shutdown();
    thread.join().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_router_that_listens_nowhere_has_no_address_to_prove() {
    let (_temp, handle, thread) = started();
    let nonce = "0f".repeat(32);
    let (status, body) = call(
        &handle,
        anonymous_get(&format!("/auth/challenge?nonce={nonce}")),
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(error_code(&body), "unavailable");
    handle.shutdown();
    thread.join().unwrap();
}
