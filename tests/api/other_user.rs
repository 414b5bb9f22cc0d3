//! Issue 35's headline, tried as another local user would (uid 65534, through `setpriv`): with
//! this HOME's Slate stopped, a listener of theirs on the configured port hears no token and no
//! `Bearer` from `slate hook` or `slate sessions`; with Slate running, they read no session and
//! answer nothing over TCP without the token, and the API socket refuses them, by its folder's
//! mode and, with the folder opened up, by the server's check of the peer's uid.
//!
//! It needs root (to become another user); as any other user it says why it cannot run and
//! passes without checking anything. CI runs as root.

use std::io::Read;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{lines_of, point_at, slate, Running, TOKEN};

/// The other user.
const OTHER: &str = "65534";

/// A listener that records every byte each connection sends it, and answers a request the way
/// a Slate would, so a client that talks goes on talking: one line per connection when it
/// closes, `conn <hex>`. Its argument is the port.
const RECORDER: &str = r#"
import socket, sys, threading
port = int(sys.argv[1])
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", port))
server.listen(64)
print("ready", flush=True)
lock = threading.Lock()
def serve(conn):
    conn.settimeout(3)
    data = b""
    try:
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in chunk:
                body = b'{"status":"ok","version":"9.9.9","kind":"service","pid":1}'
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(body)).encode() + b"\r\n\r\n" + body)
    except Exception:
        pass
    conn.close()
    with lock:
        print("conn " + data.hex(), flush=True)
while True:
    conn, _ = server.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
"#;

/// One HTTP request over TCP: `method`, `path`, the port and a body; prints the status, a line
/// end, and the body.
const REQUEST: &str = r#"
import http.client, sys
method, path, port, body = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
conn.request(method, path, body=body or None, headers={"Content-Type": "application/json"})
response = conn.getresponse()
print(response.status)
sys.stdout.write(response.read(65536).decode("utf-8", "replace"))
"#;

/// Connects to the Unix socket at the path given, asks for the live list (with no token, and a
/// `Host` no TCP request could pass with), and prints
/// `refused <errno name>` when the connect fails, else `answer <hex>` of what came back.
const UNIX: &str = r#"
import socket, sys, errno
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("refused " + errno.errorcode.get(e.errno, str(e.errno)))
    sys.exit(0)
data = b""
try:
    s.sendall(b"GET /sessions/live HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
except OSError:
    pass
print("answer " + data.hex())
"#;

/// A Python the other user can run (a pyenv shim under /root is not one), when this process can
/// become another user at all: `None`, with the reason printed, when it cannot.
fn other_user_python() -> Option<PathBuf> {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED: not root, so this test cannot run a listener as uid {OTHER}");
        return None;
    }
    for python in ["/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"] {
        let works = as_other(Path::new(python))
            .args(["-c", "pass"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if works {
            return Some(PathBuf::from(python));
        }
    }
    eprintln!("SKIPPED: setpriv cannot run a system python3 as uid {OTHER}");
    None
}

/// `program` run as the other user, with no groups.
fn as_other(program: &Path) -> Command {
    let mut command = Command::new("setpriv");
    command
        .args(["--reuid", OTHER, "--regid", OTHER, "--clear-groups"])
        .arg(program)
        .current_dir("/");
    command
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The other user's recording listener on `port`; killed when dropped.
struct Recorder {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Recorder {
    fn start(python: &Path, port: u16) -> Recorder {
        let mut child = as_other(python)
            .args(["-c", RECORDER, &port.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let lines = lines_of(child.stdout.take().unwrap());
        let ready = lines.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(ready, "ready");
        Recorder { child, lines }
    }

    /// The bytes of every connection that closed, waiting until none has closed for a second.
    fn connections(&self) -> Vec<Vec<u8>> {
        let mut seen = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(1)) {
            let hex = line.strip_prefix("conn ").unwrap_or_default();
            seen.push(decode_hex(hex));
        }
        seen
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn decode_hex(hex: &str) -> Vec<u8> {
    (0..hex.len() / 2)
        .map(|at| u8::from_str_radix(&hex[at * 2..at * 2 + 2], 16).unwrap())
        .collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window.eq_ignore_ascii_case(needle))
}

/// Runs `command` to its end (at most 20 s) with `input` on its standard input; its stderr.
fn run(mut command: Command, input: &str) -> String {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, input.as_bytes()).unwrap();
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the command did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    stderr
}

const HOOK_EVENT: &str = r#"{"session_id":"019a-hooked","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch x.txt"},"cwd":"/work/acme","transcript_path":null,"turn_id":"t1","model":"m","permission_mode":"default"}"#;

#[test]
fn another_user_on_the_port_hears_no_token_from_any_slate_program() {
    let Some(python) = other_user_python() else {
        return;
    };
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let port = free_port();
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    // The config names the port, and the HOME holds its token; no Slate runs.
    point_at(home, address);
    let recorder = Recorder::start(&python, port);

    let mut hook = slate(home, &["hook", "codex", "PermissionRequest"]);
    hook.env("SLATE_LOG", "off");
    run(hook, HOOK_EVENT);
    let by_hook = recorder.connections();

    let said = run(slate(home, &["sessions"]), "");
    let by_sessions = recorder.connections();

    let mut chosen = slate(home, &["sessions"]);
    chosen.env("SLATE_API", format!("http://{address}"));
    let said_chosen = run(chosen, "");
    let by_chosen = recorder.connections();

    for (what, connections) in [
        ("slate hook", &by_hook),
        ("slate sessions", &by_sessions),
        ("slate sessions with SLATE_API", &by_chosen),
    ] {
        let bytes: Vec<u8> = connections.concat();
        eprintln!(
            "{what}: {} connection(s) to uid {OTHER}'s listener, {} byte(s) received: {:?}",
            connections.len(),
            bytes.len(),
            String::from_utf8_lossy(&bytes)
        );
        // Each program did reach the listener: what it withheld, it withheld from a live one.
        assert!(!connections.is_empty(), "{what} never connected");
        assert!(!contains(&bytes, TOKEN.as_bytes()), "{what} sent the token");
        assert!(!contains(&bytes, b"Bearer"), "{what} sent a Bearer header");
    }
    let refusal = format!("the listener on {address} belongs to uid {OTHER}, not you");
    assert!(said.contains(&refusal), "{said}");
    assert!(said_chosen.contains(&refusal), "{said_chosen}");
}

#[test]
fn another_user_cannot_read_or_answer_a_running_slate() {
    let Some(python) = other_user_python() else {
        return;
    };
    // Under /tmp, which every user may pass through: only the folders made here decide who
    // reaches the socket, whatever TMPDIR says.
    let temp = tempfile::tempdir_in("/tmp").unwrap();
    let home = temp.path();
    point_at(home, SocketAddr::from(([127, 0, 0, 1], free_port())));
    let mut serve = slate(home, &["serve", "--listen", "127.0.0.1:0"]);
    serve.env("SLATE_LOG", "warn");
    let served = Running::spawn(serve);
    let line = served.line();
    let address: SocketAddr = line
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("{line}"))
        .parse()
        .unwrap();
    let port = address.port().to_string();
    let request = |method: &str, path: &str, body: &str| -> (u16, String) {
        let output = as_other(&python)
            .args(["-c", REQUEST, method, path, &port, body])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).to_string();
        let (status, body) = text.split_once('\n').unwrap_or_else(|| panic!("{text}"));
        (status.parse().unwrap(), body.to_string())
    };
    // Without the token: no live list, no stream, no session, no answer.
    for path in [
        "/sessions/live",
        "/sessions/live/stream",
        "/sessions/019a-hooked",
        "/remotes",
    ] {
        let (status, body) = request("GET", path, "");
        assert_eq!(status, 401, "{path}: {body}");
        assert!(
            !body.contains("sessions") && !body.contains("dialog"),
            "{body}"
        );
    }
    let answer = r#"{"action":"approve","dialog":"0000000000000000"}"#;
    let (status, body) = request("POST", "/sessions/019a-hooked/respond", answer);
    assert_eq!(status, 401, "{body}");
    // `/health` says only that a Slate is here.
    let (status, body) = request("GET", "/health", "");
    assert_eq!((status, body.trim()), (200, r#"{"slate":true}"#));
    // The person, with the token, reads them: the refusals above were for want of it.
    let client = slate::client::Client::new(address, Some(TOKEN.to_string()));
    let live: serde_json::Value = client.get_json("/sessions/live").unwrap();
    assert!(live["sessions"].is_array(), "{live}");

    // The socket: the other user cannot reach it through its private folder.
    let socket = home.join(".local/share/slate/run/api.sock");
    let folder = socket.parent().unwrap();
    assert_eq!(mode(folder), 0o700);
    assert_eq!(mode(&socket), 0o600);
    // Every folder above it opened for passing through, so only the socket's folder refuses.
    let mut above = folder.parent();
    while let Some(path) = above.filter(|path| path.starts_with(home)) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o711)).unwrap();
        above = path.parent();
    }
    let connect = |who: Option<&Path>| -> String {
        let mut command = match who {
            Some(python) => as_other(python),
            None => Command::new(&python),
        };
        let output = command.args(["-c", UNIX]).arg(&socket).output().unwrap();
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    };
    assert_eq!(connect(Some(&python)), "refused EACCES");
    // Opened up: the connection is made, and the server closes it unread, with nothing said.
    std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o711)).unwrap();
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert_eq!(connect(Some(&python)), "answer");
    // The same request from this user is answered over the same socket, with no token: the
    // socket proved who sent it.
    let mine = connect(None);
    let answered = decode_hex(mine.strip_prefix("answer ").unwrap());
    assert!(
        answered.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&answered)
    );
    // And the server said whom it turned away.
    let mut served = served;
    let _ = served.child.kill();
    let _ = served.child.wait();
    let mut log = String::new();
    let _ = served.child.stderr.take().unwrap().read_to_string(&mut log);
    assert!(
        log.contains(&format!(
            "a connection from uid {OTHER} to the API socket was closed unread"
        )),
        "{log}"
    );
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

/// The other side of the same proofs: this user's own client reaches a Slate over the socket
/// alone (its TCP address answers nothing), without the token; and refuses the socket, sending
/// nothing, once its folder belongs to another user.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn this_user_reaches_slate_over_the_socket_and_refuses_anothers() {
    let (temp, handle, thread) = super::started();
    let socket_path = temp.path().join("run/slate/api.sock");
    let mut socket = slate::api::local::listen(&socket_path).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(slate::api::serve_local(
        listener,
        socket.take_listener().unwrap(),
        handle.clone(),
        super::security(super::PORT),
        async move {
            let _ = stopped.await;
        },
    ));
    // Port 9 (discard) answers nothing here: whatever is read came over the socket.
    let nowhere = SocketAddr::from(([127, 0, 0, 1], 9));
    let path = socket_path.clone();
    let live = tokio::task::spawn_blocking(move || {
        slate::client::Client::new(nowhere, None)
            .with_socket(Some(path))
            .get_json::<serde_json::Value>("/sessions/live")
    })
    .await
    .unwrap()
    .unwrap();
    assert!(!live["sessions"].as_array().unwrap().is_empty(), "{live}");
    // The event stream too, as `slate watch` and the app follow it.
    let path = socket_path.clone();
    let first = tokio::task::spawn_blocking(move || {
        let mut events = slate::client::Client::new(nowhere, None)
            .with_socket(Some(path))
            .events()
            .unwrap();
        events.next_event().unwrap().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(first.event, "snapshot", "{first:?}");

    if nix::unistd::geteuid().is_root() {
        let folder = socket_path.parent().unwrap();
        let other = Some(nix::unistd::Uid::from_raw(65534));
        nix::unistd::chown(folder, other, None).unwrap();
        let path = socket_path.clone();
        let refused = tokio::task::spawn_blocking(move || {
            slate::client::Client::new(nowhere, Some(TOKEN.to_string()))
                .with_socket(Some(path))
                .get("/sessions/live")
        })
        .await
        .unwrap();
        match refused {
            Err(slate::client::ClientError::NotYours(why)) => assert!(
                why.contains(&format!("belongs to uid {OTHER}, not you")),
                "{why}"
            ),
            other => panic!("the socket in another user's folder was used: {other:?}"),
        }
    } else {
        eprintln!("SKIPPED the refusal: not root, so no folder can be given to another user");
    }
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    handle.shutdown();
    thread.join().unwrap();
}
