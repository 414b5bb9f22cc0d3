//! The hosted terminal's control socket (`slate::host::control`) and its client
//! (`slate::terminals::hosted`): the protocol and its refusals (bad JSON, an oversized line, a
//! wrong request, too many connections), the private folder and socket modes, a stale socket
//! file, and `slate run` of a stand-in program that draws a dialog: read over the socket, the
//! dialog; write, and the program receives exactly those bytes. Every folder is a temporary one;
//! the real HOME and runtime folder are never touched.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use slate::agents::screens::{read_screen, Screen, ScreenKind};
use slate::host::control::{self, Terminal, MAX_CONNECTIONS, MAX_LINE};
use slate::model::AgentKind;
use slate::terminals::hosted;
use slate::terminals::hosted::wire::MAX_WRITE;

/// A terminal that shows a fixed screen and keeps what is typed into it.
#[derive(Default)]
struct Fake {
    typed: Mutex<Vec<u8>>,
}

impl Terminal for Fake {
    fn read(&self, colours: bool) -> (Option<String>, String) {
        let screen = if colours {
            "\x1b[7mhi\x1b[0m\n"
        } else {
            "hi\n"
        };
        (Some("a title".to_string()), screen.to_string())
    }

    fn write(&self, bytes: &[u8]) -> std::io::Result<()> {
        self.typed.lock().unwrap().extend_from_slice(bytes);
        Ok(())
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

/// A control socket for a fake terminal in a fresh private folder.
fn serving() -> (tempfile::TempDir, PathBuf, Arc<Fake>, control::Control) {
    let temp = tempfile::tempdir().unwrap();
    let folder = temp.path().join("run").join("slate");
    let fake = Arc::new(Fake::default());
    let served = control::serve(&folder, 4242, fake.clone()).expect("the socket listens");
    (temp, folder, fake, served)
}

/// One line sent, one line back.
fn ask(stream: &mut UnixStream, line: &[u8]) -> serde_json::Value {
    stream.write_all(line).unwrap();
    let mut answer = String::new();
    BufReader::new(stream.try_clone().unwrap())
        .read_line(&mut answer)
        .unwrap();
    serde_json::from_str(&answer).unwrap_or_else(|_| panic!("not JSON: {answer:?}"))
}

fn connect(path: &Path) -> UnixStream {
    let stream = UnixStream::connect(path).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
}

#[test]
fn the_socket_is_private_and_named_by_the_pid() {
    let (_temp, folder, _fake, served) = serving();
    assert_eq!(served.path(), folder.join("4242.sock"));
    assert_eq!(served.path(), control::socket_path(&folder, 4242));
    assert_eq!(mode(&folder), 0o700);
    assert_eq!(mode(served.path()), 0o600);
    assert!(std::fs::symlink_metadata(served.path())
        .unwrap()
        .file_type()
        .is_socket());
    let path = served.path().to_path_buf();
    drop(served);
    assert!(!path.exists(), "the socket file outlived the host");
}

#[test]
fn a_folder_open_to_others_is_narrowed_and_a_file_is_no_folder() {
    let temp = tempfile::tempdir().unwrap();
    let folder = temp.path().join("open");
    std::fs::create_dir(&folder).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    slate::places::private_folder(&folder).unwrap();
    assert_eq!(mode(&folder), 0o700);
    let file = temp.path().join("file");
    std::fs::write(&file, "").unwrap();
    assert!(slate::places::private_folder(&file)
        .unwrap_err()
        .contains("not a folder"));
    let link = temp.path().join("link");
    std::os::unix::fs::symlink(&folder, &link).unwrap();
    assert!(
        slate::places::private_folder(&link).is_err(),
        "a link is followed"
    );
}

#[test]
fn reads_and_writes_answer_as_the_contract_says() {
    let (_temp, _folder, fake, served) = serving();
    let mut stream = connect(served.path());
    assert_eq!(
        ask(&mut stream, b"{\"read\": true}\n"),
        serde_json::json!({"title": "a title", "screen": "hi\n"})
    );
    assert_eq!(
        ask(&mut stream, b"{\"read\": true, \"colours\": true}\n")["screen"],
        "\x1b[7mhi\x1b[0m\n"
    );
    assert_eq!(
        ask(&mut stream, "{\"write\": \"1\\r\\u001b\"}\n".as_bytes()),
        serde_json::json!({"written": 3})
    );
    assert_eq!(*fake.typed.lock().unwrap(), b"1\r\x1b");
}

#[test]
fn bad_requests_are_refused_and_the_connection_goes_on() {
    let (_temp, _folder, fake, served) = serving();
    let mut stream = connect(served.path());
    for line in [
        &b"not json\n"[..],
        b"{}\n",
        b"{\"read\": false}\n",
        b"{\"write\": 7}\n",
        b"{\"read\": true, \"write\": \"x\"}\n",
        b"{\"type\": \"keys\"}\n",
        b"\n",
    ] {
        let answer = ask(&mut stream, line);
        assert!(
            answer["error"].is_string(),
            "{}: {answer}",
            String::from_utf8_lossy(line)
        );
    }
    let too_much = serde_json::json!({ "write": "x".repeat(MAX_WRITE + 1) }).to_string() + "\n";
    assert!(ask(&mut stream, too_much.as_bytes())["error"]
        .as_str()
        .unwrap()
        .contains("at most"));
    assert!(
        fake.typed.lock().unwrap().is_empty(),
        "a refused write typed"
    );
    // Still answering after all that.
    assert_eq!(ask(&mut stream, b"{\"read\": true}\n")["screen"], "hi\n");
}

#[test]
fn an_oversized_line_is_refused_and_the_connection_closed() {
    let (_temp, _folder, fake, served) = serving();
    let mut stream = connect(served.path());
    // More than a line may hold, with no newline: the host must not keep reading it.
    let flood = vec![b'x'; MAX_LINE * 4];
    let _ = stream.write_all(&flood);
    let mut answer = String::new();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    reader.read_line(&mut answer).unwrap();
    assert!(answer.contains("a request is at most"), "{answer}");
    // Then the connection ends (the rest of the flood is never read).
    let mut rest = Vec::new();
    let _ = reader.read_to_end(&mut rest);
    assert!(fake.typed.lock().unwrap().is_empty());
}

#[test]
fn connections_are_limited_and_idle_ones_closed() {
    let (_temp, _folder, _fake, served) = serving();
    let mut held: Vec<UnixStream> = (0..MAX_CONNECTIONS)
        .map(|_| connect(served.path()))
        .collect();
    // Each held connection is served (and so counted) before the next one is opened.
    for stream in &mut held {
        assert_eq!(ask(stream, b"{\"read\": true}\n")["screen"], "hi\n");
    }
    let mut one_more = connect(served.path());
    let mut answer = String::new();
    BufReader::new(&mut one_more)
        .read_line(&mut answer)
        .unwrap();
    assert!(answer.contains("too many connections"), "{answer}");
    // A connection that says nothing is closed by the host, not held for ever.
    let mut idle = held.pop().unwrap();
    let started = Instant::now();
    let mut buffer = [0u8; 16];
    let read = idle
        .read(&mut buffer)
        .expect("the host closes the connection");
    assert_eq!(read, 0);
    assert!(started.elapsed() < Duration::from_secs(10));
    drop(held);
    // With the others gone, a new connection is served again.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut stream = connect(served.path());
        let answer = ask(&mut stream, b"{\"read\": true}\n");
        if answer["screen"] == "hi\n" {
            break;
        }
        assert!(Instant::now() < deadline, "never served again: {answer}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_stale_socket_is_replaced_and_a_live_one_is_not() {
    let temp = tempfile::tempdir().unwrap();
    let folder = temp.path().join("slate");
    slate::places::private_folder(&folder).unwrap();
    let path = control::socket_path(&folder, 77);
    // A run killed with -9 leaves its socket file; nothing listens on it.
    drop(UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    let served = control::serve(&folder, 77, Arc::new(Fake::default())).expect("replaced");
    assert_eq!(
        ask(&mut connect(served.path()), b"{\"read\": true}\n")["title"],
        "a title"
    );
    // A second host for the same pid finds the socket answering and leaves it alone.
    let refused = control::serve(&folder, 77, Arc::new(Fake::default())).unwrap_err();
    assert!(refused.contains("in use"), "{refused}");
    assert_eq!(
        ask(&mut connect(served.path()), b"{\"read\": true}\n")["title"],
        "a title"
    );
    // A plain file of that name is stale too.
    drop(served);
    std::fs::write(&path, "junk").unwrap();
    let served = control::serve(&folder, 77, Arc::new(Fake::default())).expect("replaced");
    assert_eq!(mode(served.path()), 0o600);
}

#[test]
fn the_client_reads_and_writes_and_follows_only_private_sockets() {
    let (temp, _folder, fake, served) = serving();
    let pane = hosted::read(served.path(), false).unwrap();
    assert_eq!(pane.title.as_deref(), Some("a title"));
    assert_eq!(pane.screen, "hi\n");
    hosted::write(served.path(), "2").unwrap();
    assert_eq!(*fake.typed.lock().unwrap(), b"2");
    let missing = hosted::read(&temp.path().join("nothing.sock"), false).unwrap_err();
    assert!(missing.contains("no slate run listens"), "{missing}");
    // A socket in a folder others may enter is not followed, whatever listens there.
    let open = temp.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
    let listener = UnixListener::bind(open.join("1.sock")).unwrap();
    let refused = hosted::read(&open.join("1.sock"), false).unwrap_err();
    assert!(refused.contains("not a private folder"), "{refused}");
    drop(listener);
    // A socket that never answers costs the reader its limit, not more.
    let quiet_folder = temp.path().join("quiet");
    slate::places::private_folder(&quiet_folder).unwrap();
    let quiet = UnixListener::bind(quiet_folder.join("2.sock")).unwrap();
    let started = Instant::now();
    let silent = hosted::read(&quiet_folder.join("2.sock"), false).unwrap_err();
    assert!(silent.contains("did not answer"), "{silent}");
    assert!(started.elapsed() < Duration::from_secs(5));
    drop(quiet);
}

/// The stand-in program: draws Codex's permission dialog as recorded in an 80x24 pane, then
/// takes the terminal raw and keeps exactly the next `count` bytes it is sent; then it clears
/// the screen and draws Codex's composer (the dialog leaves, as Codex's does) and lingers a
/// moment.
fn stand_in(temp: &Path, count: usize) -> PathBuf {
    let screen = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/screens/codex/0.171.0/permission-touch-80x24.txt");
    let script = temp.join("dialog.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '\\033]0;[ ! ] Action Required\\007'\nstty raw -echo\n\
             cat '{screen}' | sed 's/$/\\r/'\ndd bs=1 count={count} of='{out}' 2>/dev/null\n\
             printf '\\033[2J\\033[H'\ncat '{idle}' | sed 's/$/\\r/'\nsleep 1\n",
            screen = screen.display(),
            idle = screen.with_file_name("idle-start-80x24.txt").display(),
            out = temp.join("received").display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// `slate run` of `script` in a temporary HOME and runtime folder, its input held open (when it
/// ends, the program's input would end too), reporting to nothing.
fn host(temp: &Path, script: &Path) -> std::process::Child {
    let home = temp.join("home");
    let runtime = temp.join("xdg-run");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&runtime).unwrap();
    Command::new(env!("CARGO_BIN_EXE_slate"))
        .args(["run", "--"])
        .arg(script)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("SLATE_API", "http://127.0.0.1:9")
        .env("SLATE_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("slate run starts")
}

/// Waits for the hosted program's dialog, read over its control socket.
fn dialog_over_the_socket(
    temp: &Path,
    deadline: Instant,
) -> (PathBuf, String, slate::agents::screens::Dialog) {
    let folder = temp.join("xdg-run").join("slate");
    loop {
        assert!(Instant::now() < deadline, "no dialog over the socket");
        std::thread::sleep(Duration::from_millis(100));
        let Some(socket) = std::fs::read_dir(&folder).ok().and_then(|entries| {
            entries
                .flatten()
                .map(|entry| entry.path())
                .find(|path| path.extension().is_some_and(|ext| ext == "sock"))
        }) else {
            continue;
        };
        let Ok(pane) = hosted::read(&socket, false) else {
            continue;
        };
        if let Screen::Dialog(dialog) = read_screen(AgentKind::CODEX, &pane.screen) {
            return (socket, pane.title.unwrap_or_default(), dialog);
        }
    }
}

/// The program `slate run` (process `host`) started.
fn hosted_child(host: u32) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let children = std::fs::read_to_string(format!("/proc/{host}/task/{host}/children"))
            .unwrap_or_default();
        if let Some(pid) = children.split_whitespace().next() {
            return pid.parse().unwrap();
        }
        assert!(Instant::now() < deadline, "slate run started no program");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_exit(host: &mut std::process::Child, deadline: Instant) -> std::process::ExitStatus {
    loop {
        if let Some(status) = host.try_wait().unwrap() {
            drop(host.stdin.take());
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "the program did not get its bytes"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn approving_a_hosted_dialog_types_its_digit_and_sees_it_leave() {
    use slate::agents::keys::Action;
    use slate::answers::{respond_to, Destination, RespondRequest};
    let temp = tempfile::tempdir().unwrap();
    let script = stand_in(temp.path(), 1);
    let mut child = host(temp.path(), &script);
    let deadline = Instant::now() + Duration::from_secs(20);
    let (socket, _, dialog) = dialog_over_the_socket(temp.path(), deadline);
    let destination = Destination {
        address: hosted::address(socket.to_string_lossy()),
        pid: hosted_child(child.id()),
        proof: None,
    };
    let key = slate::model::SessionKey::new(AgentKind::CODEX, "hosted");
    let locks = temp.path().join("locks");
    let now = slate::live::system_clock();
    // A fingerprint of another dialog is refused, and nothing is typed.
    let mut request = RespondRequest {
        action: Action::Approve,
        option: None,
        text: None,
        dialog: "0123456789abcdef".to_string(),
        surface: None,
    };
    let refused = respond_to(&destination, &key, None, &request, &locks, now).result;
    assert_eq!(
        refused.unwrap_err().code,
        slate::answers::ErrorCode::DialogChanged
    );
    request.dialog = slate::agents::keys::fingerprint(AgentKind::CODEX, &dialog, None);
    let answered = respond_to(&destination, &key, None, &request, &locks, now)
        .result
        .expect("answered");
    assert_eq!(answered.option, Some(1));
    assert!(wait_exit(&mut child, deadline).success());
    // Codex's allow-once is its digit, and nothing else was typed.
    assert_eq!(std::fs::read(temp.path().join("received")).unwrap(), b"1");
}

#[test]
fn slate_run_serves_its_programs_screen_and_types_into_it() {
    let temp = tempfile::tempdir().unwrap();
    let script = stand_in(temp.path(), 3);
    let mut child = host(temp.path(), &script);
    let deadline = Instant::now() + Duration::from_secs(20);
    let (socket, title, dialog) = dialog_over_the_socket(temp.path(), deadline);
    assert_eq!(title, "[ ! ] Action Required");
    assert_eq!(dialog.kind.screen_kind(), ScreenKind::Permission);
    assert_eq!(dialog.summary, "Run: touch narrow.txt");
    assert_eq!(mode(socket.parent().unwrap()), 0o700);
    assert_eq!(mode(&socket), 0o600);
    hosted::write(&socket, "1\r\u{1b}").unwrap();
    let status = wait_exit(&mut child, deadline);
    assert!(status.success(), "{status}");
    assert_eq!(
        std::fs::read(temp.path().join("received")).unwrap(),
        b"1\r\x1b"
    );
    assert!(!socket.exists(), "the socket outlived slate run");
}

#[test]
fn a_hosted_session_is_typed_into_through_its_socket_or_not_at_all() {
    use slate::answers::{terminal_of, ErrorCode, Target, NO_CONTROL_NOTE};
    let target = |control: Option<&str>| Target {
        key: slate::model::SessionKey::new(AgentKind::CODEX, "s1"),
        pid: Some(std::process::id()),
        hosted: true,
        control: control.map(str::to_string),
        machine: None,
        call: None,
        summary: None,
    };
    assert_eq!(
        terminal_of(&target(Some("/run/user/1/slate/9.sock")))
            .unwrap()
            .address,
        hosted::address("/run/user/1/slate/9.sock")
    );
    // An older `slate run` offers no socket: nothing is typed, wherever its process sits.
    let refused = terminal_of(&target(None)).unwrap_err();
    assert_eq!(refused.code, ErrorCode::CannotType);
    assert_eq!(refused.message, NO_CONTROL_NOTE);
    assert_eq!(
        hosted::bytes(&[
            slate::agents::keys::Key::Digit(3),
            slate::agents::keys::Key::Text("DuckDB".to_string()),
            slate::agents::keys::Key::Pause(400),
            slate::agents::keys::Key::Enter,
            slate::agents::keys::Key::Escape,
        ]),
        "3DuckDB\r\u{1b}"
    );
}
