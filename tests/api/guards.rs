//! The guard rails on every request: foreign hosts and origins refused, changes that need the
//! token and a small body, CORS for the desktop webview's origin only, and the token file, private
//! and kept.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use slate::api;

use tower::ServiceExt;

use super::{anonymous_get, call, error_code, get, refresh, security, started, PORT, TOKEN};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_hosts_and_origins_are_refused() {
    let (_temp, handle, thread) = started();
    for host in [
        "evil.example:7411",
        "127.0.0.1:7412",
        "localhost",
        "10.0.0.1:7411",
    ] {
        let request = Request::get("/sessions/live")
            .header("host", host)
            .body(Body::empty())
            .unwrap();
        let (status, body) = call(&handle, request).await;
        assert_eq!(status, StatusCode::MISDIRECTED_REQUEST, "{host}");
        assert_eq!(error_code(&body), "misdirected_request");
    }
    for host in ["localhost:7411", "[::1]:7411"] {
        let request = Request::get("/sessions/live")
            .header("host", host)
            .header("authorization", format!("Bearer {TOKEN}"))
            .body(Body::empty())
            .unwrap();
        assert_eq!(call(&handle, request).await.0, StatusCode::OK, "{host}");
    }
    for (origin, expected) in [
        ("https://evil.example", StatusCode::FORBIDDEN),
        ("http://127.0.0.1:7412", StatusCode::FORBIDDEN),
        ("null", StatusCode::FORBIDDEN),
        ("http://127.0.0.1:7411", StatusCode::OK),
        ("http://localhost:7411", StatusCode::OK),
        ("tauri://localhost", StatusCode::OK),
        ("http://tauri.localhost", StatusCode::OK),
    ] {
        let request = Request::get("/sessions/live")
            .header("host", "127.0.0.1:7411")
            .header("origin", origin)
            .header("authorization", format!("Bearer {TOKEN}"))
            .body(Body::empty())
            .unwrap();
        assert_eq!(call(&handle, request).await.0, expected, "{origin}");
    }
    handle.shutdown();
    thread.join().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_need_the_token_and_a_small_body() {
    let (_temp, handle, thread) = started();
    let (status, body) = call(&handle, refresh(None, Vec::new())).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(error_code(&body), "unauthorized");
    let wrong = "f".repeat(64);
    assert_eq!(
        call(&handle, refresh(Some(&wrong), Vec::new())).await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        call(&handle, refresh(Some(TOKEN), Vec::new())).await.0,
        StatusCode::NO_CONTENT
    );
    let (status, body) = call(&handle, refresh(Some(TOKEN), vec![b'x'; 1 << 20])).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(error_code(&body), "body_too_large");
    // A body just under the limit is fine.
    assert_eq!(
        call(&handle, refresh(Some(TOKEN), vec![b'x'; 1000]))
            .await
            .0,
        StatusCode::NO_CONTENT
    );
    handle.shutdown();
    thread.join().unwrap();
}

#[test]
fn the_token_file_is_private_and_kept() {
    let temp = tempfile::tempdir().unwrap();
    // The token file lives in a folder that does not exist yet: it is created.
    let path = temp.path().join("slate/token");
    assert_eq!(slate::token::read_token(&path).unwrap(), None);
    let token = slate::token::load_or_create_token(&path).unwrap();
    assert_eq!(token.len(), 64);
    assert!(token.bytes().all(|byte| byte.is_ascii_hexdigit()));
    assert_eq!(
        slate::token::read_token(&path).unwrap(),
        Some(token.clone())
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert_eq!(slate::token::load_or_create_token(&path).unwrap(), token);

    std::fs::write(&path, "not a token\n").unwrap();
    let replaced = slate::token::load_or_create_token(&path).unwrap();
    assert_ne!(replaced, token);
    assert_eq!(replaced.len(), 64);

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let again = slate::token::load_or_create_token(&path).unwrap();
        assert_ne!(again, replaced, "a token others could read is replaced");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desktop_webview_origin_gets_cors_and_others_do_not() {
    let (_temp, handle, thread) = started();
    let preflight = |origin: &str| {
        Request::options("/sessions/live/refresh")
            .header("host", format!("127.0.0.1:{PORT}"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "authorization")
            .body(Body::empty())
            .unwrap()
    };
    let response = api::router(handle.clone(), security(PORT))
        .oneshot(preflight("tauri://localhost"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let headers = response.headers();
    assert_eq!(headers["access-control-allow-origin"], "tauri://localhost");
    assert!(headers["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .contains("authorization"));
    let response = api::router(handle.clone(), security(PORT))
        .oneshot(preflight("https://evil.example"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(response
        .headers()
        .get("access-control-allow-origin")
        .is_none());
    // A plain read from the webview carries the header too; a same-origin read needs none.
    let mut request = get("/sessions/live");
    request
        .headers_mut()
        .insert("origin", "http://tauri.localhost".parse().unwrap());
    let response = api::router(handle.clone(), security(PORT))
        .oneshot(request)
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["access-control-allow-origin"],
        "http://tauri.localhost"
    );
    handle.shutdown();
    thread.join().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_shows_sessions_needs_the_token_and_the_page_does_not() {
    let (_temp, handle, thread) = started();
    for path in [
        "/sessions/live",
        "/sessions/live/stream",
        "/sessions/0ld5e551-0000-4000-8000-000000000001",
        "/remotes",
    ] {
        let (status, body) = call(&handle, anonymous_get(path)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}: {body}");
        assert_eq!(error_code(&body), "unauthorized");
        let (status, body) = call(&handle, get(path)).await;
        assert!(
            status.is_success() || path.ends_with("stream"),
            "{path}: {body}"
        );
    }
    // The page and its files hold no session: anyone local may fetch them.
    for path in ["/", "/ui/app.js", "/style.css"] {
        let (status, _) = call(&handle, anonymous_get(path)).await;
        assert_eq!(status, StatusCode::OK, "{path}");
    }
    // `/health` without the token says only that a Slate is here; with it, everything.
    let (status, body) = call(&handle, anonymous_get("/health")).await;
    assert_eq!(
        (status, body.as_str()),
        (StatusCode::OK, r#"{"slate":true}"#)
    );
    let (status, body) = call(&handle, get("/health")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(super::json(&body)["kind"], "service", "{body}");
    handle.shutdown();
    thread.join().unwrap();
}
