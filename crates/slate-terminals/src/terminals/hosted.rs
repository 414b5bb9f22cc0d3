//! The client side of a hosted terminal's control socket (`host::control`): reads the screen that
//! `slate run` keeps of its program, and types into the program's terminal.
//!
//! [`read`] asks `{"read": true}` and gives back the title and the visible screen as a pane's
//! text; [`write`] sends `{"write": "…"}` and checks that every byte was written. Each exchange
//! has sensing's limit ([`super::READ_LIMIT`]) from connecting to the answer, and an answer longer
//! than [`MOST`] is refused, so a stuck or hostile `slate run` costs sensing at most that. The
//! socket is found through the session's hosted report (`HostedSignals::control`), never guessed,
//! and it is used only when it is a socket of this user's in a folder of this user's that nobody
//! else may enter ([`check_private`]): a report that names any other socket is not followed.
//! What the screen means is `agents::screens`'; this module only carries text and bytes.
//!
//! As a terminal backend ([`HOSTED`]) it is never located from a process: the session's hosted
//! report names its socket ([`address`]), and `slate run` owns the terminal, so a hosted
//! terminal's view stays `hosted`.

use std::path::Path;

pub mod wire;

use super::backend::{Address, Backend, PaneRead, PaneText, Wanted};
use slate_core::agents::keys::Key;
use slate_core::model::{Can, TerminalKind, TerminalView, Timestamp, HOSTED_CAN};

/// The backend of `slate run`'s hosted terminals.
pub struct Hosted;

pub static HOSTED: Hosted = Hosted;

/// The hosted terminal behind control socket `socket`: its server and its pane are the socket,
/// one terminal each.
pub fn address(socket: impl Into<String>) -> Address {
    let socket = socket.into();
    Address::new(&HOSTED, socket.clone(), socket)
}

impl Backend for Hosted {
    fn kind(&self) -> TerminalKind {
        TerminalKind::Hosted
    }

    fn can(&self) -> Can {
        HOSTED_CAN
    }

    fn describe(&self, address: &Address) -> String {
        format!("the hosted terminal at {}", address.server)
    }

    fn view(&self, _address: &Address) -> TerminalView {
        TerminalView::hosted()
    }

    fn read(&self, socket: &str, wanted: &[Wanted], clock: fn() -> Timestamp) -> Vec<PaneRead> {
        wanted
            .iter()
            .map(|want| read(Path::new(socket), want.colours).map(|pane| (pane, clock())))
            .collect()
    }

    fn screen(&self, address: &Address, colours: bool) -> Result<String, String> {
        Ok(read(Path::new(&address.server), colours)?.screen)
    }

    fn send(&self, address: &Address, keys: &[Key]) -> Result<(), String> {
        write(Path::new(&address.server), &bytes(keys))
    }
}

/// What a hosted terminal is written for `keys`: the bytes a terminal would send for them
/// (`\r` for Enter, ESC for Escape, text as it is), through `slate run`'s control socket.
pub fn bytes(keys: &[Key]) -> String {
    keys.iter().map(Key::bytes).collect()
}

/// The longest answer read: a screen of 500 by 200 cells with a colour escape in front of each.
pub const MOST: usize = 4 << 20;

/// Reads the title and the visible screen of the hosted terminal behind `socket`; with
/// `colours`, each background is a colour escape in the screen's text.
pub fn read(socket: &Path, colours: bool) -> Result<PaneText, String> {
    #[cfg(unix)]
    {
        use wire::{Answer, Request};
        match exchange(socket, &Request::Read { colours })? {
            Answer::Screen { title, screen } => Ok(PaneText {
                title: (!title.is_empty()).then_some(title),
                screen,
            }),
            Answer::Error { error } => Err(format!("slate run refused: {error}")),
            Answer::Written { .. } => Err("slate run answered a read with a write".to_string()),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = colours;
        Err(format!(
            "cannot reach {} on this platform",
            socket.display()
        ))
    }
}

/// Types `bytes` (a UTF-8 text: keys are characters and escapes) into the hosted terminal behind
/// `socket`.
pub fn write(socket: &Path, bytes: &str) -> Result<(), String> {
    #[cfg(unix)]
    {
        use wire::{Answer, Request};
        match exchange(socket, &Request::Write(bytes.to_string()))? {
            Answer::Written { written } if written == bytes.len() => Ok(()),
            Answer::Written { written } => Err(format!(
                "slate run wrote {written} of {} bytes",
                bytes.len()
            )),
            Answer::Error { error } => Err(format!("slate run refused: {error}")),
            Answer::Screen { .. } => Err("slate run answered a write with a screen".to_string()),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = bytes;
        Err(format!(
            "cannot reach {} on this platform",
            socket.display()
        ))
    }
}

/// One request and its answer, within the limit from connecting on: a `slate run` that accepts
/// no connection (stopped, its listen queue full) or answers nothing is given up on then.
#[cfg(unix)]
fn exchange(socket: &Path, request: &wire::Request) -> Result<wire::Answer, String> {
    use std::io::ErrorKind;
    use std::time::Instant;

    use crate::socket::{connect_within, read_some_within, write_within, Place};

    let limit = super::READ_LIMIT;
    let deadline = Instant::now() + limit;
    let shown = socket.display();
    check_private(socket)?;
    let mut stream = connect_within(Place::Path(socket), deadline).map_err(|error| {
        if error.kind() == ErrorKind::TimedOut {
            format!(
                "the slate run at {shown} accepted no connection within {} ms",
                limit.as_millis()
            )
        } else {
            format!("no slate run listens on {shown}: {error}")
        }
    })?;
    let mut line = request.to_line().into_bytes();
    line.push(b'\n');
    write_within(&mut stream, &line, deadline)
        .map_err(|error| format!("cannot ask slate run: {error}"))?;
    let mut answer = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    while !answer.ends_with(b"\n") {
        if answer.len() > MOST {
            return Err("slate run's answer is too long".to_string());
        }
        match read_some_within(&mut stream, &mut chunk, deadline) {
            Ok(0) => return Err("slate run closed the connection".to_string()),
            Ok(read) => answer.extend_from_slice(&chunk[..read]),
            Err(error) if error.kind() == ErrorKind::TimedOut => {
                return Err(format!(
                    "slate run did not answer within {} ms",
                    limit.as_millis()
                ))
            }
            Err(error) => return Err(format!("slate run did not answer: {error}")),
        }
    }
    serde_json::from_slice(&answer).map_err(|_| "slate run's answer is not JSON".to_string())
}

/// Says why `socket` is not a hosted terminal's control socket as `slate run` makes one: a socket
/// owned by this user, in a folder owned by this user that no one else may enter.
#[cfg(unix)]
pub fn check_private(socket: &Path) -> Result<(), String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let me = nix::unistd::geteuid().as_raw();
    let shown = socket.display();
    let meta = std::fs::symlink_metadata(socket)
        .map_err(|error| format!("no slate run listens on {shown}: {error}"))?;
    if !meta.file_type().is_socket() || meta.uid() != me {
        return Err(format!("{shown} is not a control socket of this user's"));
    }
    let folder = socket
        .parent()
        .ok_or_else(|| format!("{shown} is not in a folder"))?;
    let folder_meta = std::fs::symlink_metadata(folder)
        .map_err(|error| format!("cannot read {}: {error}", folder.display()))?;
    if !folder_meta.is_dir() || folder_meta.uid() != me || folder_meta.mode() & 0o077 != 0 {
        return Err(format!(
            "{} is not a private folder of this user's",
            folder.display()
        ));
    }
    Ok(())
}
