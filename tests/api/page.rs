//! The page as the server serves it: no token in it, whoever asks (any local user can fetch it),
//! and `slate serve` telling only its own terminal the address that brings the token, in the
//! fragment a browser never sends.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode};

use crate::util::working_transcript;

use super::{call, get, plain_get, slate, started, write_table, PORT, TOKEN};

/// Every address the page and its files are served at.
const PAGE_FILES: [&str; 10] = [
    "/",
    "/ui/",
    "/ui/index.html",
    "/api.js",
    "/ui/api.js",
    "/sse.js",
    "/ui/sse.js",
    "/app.js",
    "/parts.js",
    "/session.js",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_holds_no_token_whoever_asks() {
    let (_temp, handle, thread) = started();
    for path in PAGE_FILES {
        // Asked with no token, as another local user would, and with the token, as the page
        // reloaded would: the same text, and no token in either.
        let with_token = Request::get(path)
            .header("host", format!("127.0.0.1:{PORT}"))
            .header("authorization", format!("Bearer {TOKEN}"))
            .body(Body::empty())
            .unwrap();
        let (status, without) = call(&handle, get(path)).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        let (status, with) = call(&handle, with_token).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(with, without, "{path} is the same for everyone");
        assert!(!without.contains(TOKEN), "{path} holds the token");
    }
    let (_, page) = call(&handle, get("/")).await;
    assert!(
        page.contains(r#"<script type="module" src="app.js">"#),
        "{page}"
    );
    handle.shutdown();
    thread.join().unwrap();
}

/// A `slate serve` on a free port, killed when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The lines a pipe sends, as they come.
fn lines_of(pipe: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { return };
            if send.send(line).is_err() {
                return;
            }
        }
    });
    lines
}

#[cfg(unix)]
#[test]
fn serve_prints_the_pages_address_with_the_token_in_its_fragment_to_its_own_stderr() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    working_transcript(home, slate::live::system_clock());
    let table = write_table(home);
    let mut child = slate(
        home,
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--processes",
            table.to_str().unwrap(),
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let out = lines_of(child.stdout.take().unwrap());
    let err = lines_of(child.stderr.take().unwrap());
    let served = Served(child);

    let listening = out.recv_timeout(Duration::from_secs(10)).unwrap();
    let base = listening
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {listening:?}"))
        .to_string();
    let token = std::fs::read_to_string(home.join(".config/slate/token")).unwrap();
    let token = token.trim();
    let deadline = Instant::now() + Duration::from_secs(10);
    let told = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = err
            .recv_timeout(left)
            .expect("slate serve names the page's address on stderr within 10 s");
        if line.contains("#token=") {
            break line;
        }
    };
    assert_eq!(
        told,
        format!(
            "slate: open the page at {base}/#token={token} (the address holds your API token: \
             keep it to yourself)"
        )
    );
    // Stdout, which a script reads for the port, does not carry it.
    std::thread::sleep(Duration::from_millis(200));
    assert!(out.try_iter().all(|line| !line.contains(token)));

    // The page any local program fetches has no token in it.
    let address: SocketAddr = base.strip_prefix("http://").unwrap().parse().unwrap();
    for path in ["/", "/ui/index.html"] {
        let answer = plain_get(address, path);
        assert!(answer.starts_with("HTTP/1.1 200"), "{path}: {answer}");
        assert!(answer.contains("<title>Slate</title>"), "{path}: {answer}");
        assert!(!answer.contains(token), "{path} holds the token: {answer}");
    }
    drop(served);
}
