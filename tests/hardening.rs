//! The defects a hostile user or file found (issue 17), each with the test that showed it, by
//! where they were: the server, ids and limits, terminal escapes, and the commands.

mod commands; // slate run's exit, error causes, another HOME's Slate, a locked store
mod escapes; // control characters kept from terminals and logs
mod invisible; // every invisible character through every cleaner (issue 35)
mod limits; // short ids, the token file, free text, item dependencies
mod server; // the address, headers, bodies, silent connections, lagging subscribers

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use slate::live;

use crate::api::{slate, write_table, Running};
use crate::util::working_transcript;

/// Sends `request` as it is and returns what the server answers until it closes the connection
/// (or 5 s pass).
fn raw(address: SocketAddr, request: &str) -> String {
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(2)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// The token `slate serve` created under `home`.
fn token_of(home: &Path) -> String {
    std::fs::read_to_string(home.join(".config/slate/token"))
        .unwrap()
        .trim()
        .to_string()
}

/// The address a `slate serve` child announced on its first line.
fn announced(server: &Running) -> SocketAddr {
    let line = server.line();
    line.strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .parse()
        .unwrap()
}

/// `slate serve` over a HOME with one working session, on `listen`.
fn serve(home: &Path, listen: &str) -> Running {
    working_transcript(home, live::system_clock());
    let table = write_table(home);
    Running::spawn(slate(
        home,
        &[
            "serve",
            "--listen",
            listen,
            "--processes",
            table.to_str().unwrap(),
        ],
    ))
}

/// Runs `command` to its end, or kills it after `limit`; `None` when it had to be killed.
fn finished_within(
    mut command: std::process::Command,
    limit: Duration,
) -> Option<std::process::Output> {
    let mut child = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(child.wait_with_output().unwrap())
}

/// `command` run by `sh` under `ulimit <limit>`, with the same arguments and environment.
#[cfg(unix)]
fn limited(limit: &str, command: std::process::Command) -> std::process::Command {
    let mut limited = std::process::Command::new("sh");
    limited
        .arg("-c")
        .arg(format!(r#"ulimit {limit} && exec "$0" "$@""#))
        .arg(command.get_program())
        .args(command.get_args());
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => limited.env(name, value),
            None => limited.env_remove(name),
        };
    }
    limited
}

/// `slate args…` over `home` with an engine of its own, whatever runs on the default port.
fn standalone(home: &Path, args: &[&str]) -> std::process::Output {
    let mut command = slate(home, args);
    command.env("SLATE_STANDALONE", "1");
    finished_within(command, Duration::from_secs(20)).expect("the command ends within 20 s")
}
