//! The API's Unix socket: this user's private way to the same routes as the loopback port.
//!
//! The socket is `api.sock` in the private runtime folder (`places::Places::api_socket`). The
//! folder is made this user's alone before anything listens there: created 0700 when missing, an
//! existing one refused when it is a link, not a folder, or another user's, and narrowed to 0700
//! when it is wider (`places::private_folder`, which `slate run`'s sockets in the same
//! folder use). The socket is 0600. A socket file left by a Slate that was killed is removed at
//! start only when it is this user's and nothing answers on it; one that answers is a running
//! Slate, which the caller names as it names the holder of a taken port.
//!
//! Every accepted connection's peer is checked by its credentials (`SO_PEERCRED`): a connection
//! from another user is closed before a byte of it is read, and logged. A request that came over
//! the socket carries [`OverSocket`], which the guard reads: its sender is this user.

use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use slate_terminals::socket::{connect_within, Place};

/// Marks a request that came over the API socket from this user (`guard`).
#[derive(Debug, Clone, Copy)]
pub struct OverSocket;

/// Why the API socket does not listen.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// Something answers on the socket already: a running Slate, or a program that holds it.
    #[error("{} is in use by a running program", .0.display())]
    Taken(PathBuf),
    #[error("{0}")]
    Refused(String),
}

/// A listening API socket; dropping it removes the socket file, unless another Slate has
/// replaced it since.
#[derive(Debug)]
pub struct Socket {
    listener: Option<std::os::unix::net::UnixListener>,
    path: PathBuf,
    identity: (u64, u64),
}

impl Socket {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The listener, for the server (once).
    pub fn take_listener(&mut self) -> Option<std::os::unix::net::UnixListener> {
        self.listener.take()
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        let same = std::fs::symlink_metadata(&self.path)
            .is_ok_and(|meta| (meta.dev(), meta.ino()) == self.identity);
        if same {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Listens on the API socket at `path` (see the module's paragraph).
pub fn listen(path: &Path) -> Result<Socket, LocalError> {
    let shown = path.display().to_string();
    let folder = path
        .parent()
        .ok_or_else(|| LocalError::Refused(format!("{shown} has no folder")))?;
    crate::places::private_folder(folder).map_err(LocalError::Refused)?;
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(LocalError::Refused(format!(
                "{shown} is not a socket; it is not slate's to replace (remove it and start again)"
            )));
        }
        let me = nix::unistd::geteuid().as_raw();
        if meta.uid() != me {
            return Err(LocalError::Refused(format!(
                "{shown} belongs to uid {}, not this user (uid {me})",
                meta.uid()
            )));
        }
        // A socket that accepts is in use, and so is one whose queue is full: only a refused
        // connection marks a file left by a Slate that was killed.
        let deadline = Instant::now() + slate_terminals::socket::READ_LIMIT;
        match connect_within(Place::Path(path), deadline) {
            Ok(_) => return Err(LocalError::Taken(path.to_path_buf())),
            Err(err) if err.kind() == io::ErrorKind::TimedOut => {
                return Err(LocalError::Taken(path.to_path_buf()))
            }
            Err(_) => {}
        }
        std::fs::remove_file(path).map_err(|err| {
            LocalError::Refused(format!("cannot replace the stale {shown}: {err}"))
        })?;
    }
    let listener = std::os::unix::net::UnixListener::bind(path)
        .map_err(|err| LocalError::Refused(format!("cannot listen on {shown}: {err}")))?;
    // The folder is private, so nobody else could reach the socket before it is narrowed too.
    let narrowed = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .and_then(|()| std::fs::symlink_metadata(path));
    let meta = match narrowed {
        Ok(meta) => meta,
        Err(err) => {
            let _ = std::fs::remove_file(path);
            return Err(LocalError::Refused(format!(
                "cannot make {shown} private: {err}"
            )));
        }
    };
    Ok(Socket {
        listener: Some(listener),
        path: path.to_path_buf(),
        identity: (meta.dev(), meta.ino()),
    })
}

/// The next connection from this user on `listener`. Another user's is closed unread, and
/// logged; an accept that fails waits a moment (out of descriptors) and tries again.
pub async fn accept(listener: &tokio::net::UnixListener) -> tokio::net::UnixStream {
    let me = nix::unistd::geteuid().as_raw();
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(err) => {
                tracing::debug!("cannot accept a connection on the API socket: {err}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        match stream.peer_cred().map(|credentials| credentials.uid()) {
            Ok(uid) if uid == me => return stream,
            Ok(uid) => {
                tracing::warn!("a connection from uid {uid} to the API socket was closed unread")
            }
            Err(err) => tracing::warn!(
                "a connection to the API socket whose user cannot be read was closed unread: {err}"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path).unwrap().mode() & 0o777
    }

    #[test]
    fn the_folder_and_the_socket_are_made_this_users_alone() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("run/slate/api.sock");
        let socket = listen(&path).unwrap();
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        assert_eq!(mode(&path), 0o600);
        drop(socket);
        assert!(!path.exists(), "the socket file goes with the server");
        // A folder of ours that is open to others is narrowed.
        let folder = path.parent().unwrap();
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755)).unwrap();
        let _socket = listen(&path).unwrap();
        assert_eq!(mode(folder), 0o700);
    }

    #[test]
    fn a_link_a_file_or_another_users_folder_is_refused() {
        let temp = tempfile::tempdir().unwrap();
        let real = temp.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = temp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let refused = |path: PathBuf| match listen(&path) {
            Err(LocalError::Refused(why)) => why,
            other => panic!("{} was taken: {other:?}", path.display()),
        };
        assert!(refused(link.join("api.sock")).contains("is not a folder"));
        let file = temp.path().join("file");
        std::fs::write(&file, "").unwrap();
        assert!(refused(file.join("api.sock")).contains(&file.display().to_string()));
        // Something that is not a socket where the socket goes is not Slate's to remove.
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(real.join("api.sock"), "keep me").unwrap();
        assert!(refused(real.join("api.sock")).contains("is not a socket"));
        assert_eq!(
            std::fs::read_to_string(real.join("api.sock")).unwrap(),
            "keep me"
        );
        // Another user's folder, when this process can make one (as root).
        if nix::unistd::geteuid().is_root() {
            let theirs = temp.path().join("theirs");
            std::fs::create_dir(&theirs).unwrap();
            std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
            let other = Some(nix::unistd::Uid::from_raw(65534));
            nix::unistd::chown(&theirs, other, None).unwrap();
            assert!(refused(theirs.join("api.sock")).contains("another user"));
        }
    }

    #[test]
    fn a_stale_socket_is_replaced_and_a_live_one_is_not() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("slate/api.sock");
        let mut live = listen(&path).unwrap();
        // Something answers: a running Slate holds it.
        assert!(matches!(listen(&path), Err(LocalError::Taken(_))));
        // The server is killed: its file stays and nothing answers.
        drop(live.take_listener());
        std::mem::forget(live);
        assert!(path.exists());
        let _again = listen(&path).unwrap();
        assert_eq!(mode(&path), 0o600);
    }
}
