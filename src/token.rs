//! The API's bearer token: created once per user in the config folder, read on every start.
//!
//! The token is what separates the person's own tools (the page Slate serves, the CLI, the desktop
//! shell) from a web page on another site: only someone who can read the user's config folder
//! can change anything through the API. It is 32 random bytes written as 64 hex characters in
//! the token file (`places::Places::token_file`), readable by the owner only. This module owns the
//! file's content and the randomness; it never logs the token itself. Where the file lives is
//! `places`' business, and checking a request's token is `api`'s.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The token's length in hex characters (32 random bytes).
pub const TOKEN_LEN: usize = 64;

/// The most a token file is read: the token, a line end, and room for stray whitespace. Whatever
/// the file holds beyond that is never read, so a file that never ends costs nothing.
const READ_LIMIT: u64 = 256;

/// Why the token could not be read or created.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("cannot create the config folder {path}: {source}")]
    CreateFolder { path: PathBuf, source: io::Error },
    #[error("cannot read random bytes for the token: {0}")]
    Random(io::Error),
    #[error("cannot write the token file {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot read the token file {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("the token file {path} is not a regular file; remove it and slate writes a new token")]
    NotAFile { path: PathBuf },
    #[error("the token file {path} is readable by others; make it the owner's only (chmod 600)")]
    Readable { path: PathBuf },
    #[error("the token file {path} does not hold one word of visible ASCII")]
    NotAToken { path: PathBuf },
}

/// Reads the token file at `path`, creating it on first run. A token file that is not 64 hex characters, or that
/// others can read, is replaced by a new one with a warning: a token others could have read is
/// no secret any more. A token file that is not a regular file (a FIFO, a device, a folder) is
/// an error: it is not Slate's to replace.
pub fn load_or_create_token(path: &Path) -> Result<String, TokenError> {
    if let Some(file) = read_file(path)? {
        let token = file.text.trim();
        if !is_token(token) {
            tracing::warn!(
                "the token file {} does not hold a token; writing a new one",
                path.display()
            );
        } else if !file.owner_only {
            tracing::warn!(
                "the token file {} is readable by others; writing a new token",
                path.display()
            );
        } else {
            return Ok(token.to_string());
        }
    }
    let token = new_token()?;
    write_token(path, &token)?;
    Ok(token)
}

/// Reads the token for a client of the API (`slate run`, the commands that nudge a running
/// server), never creating one: `None` when there is no token file or it holds nothing a
/// header could carry. What the file holds is sent as it is (the server judges it), but only
/// when it is one word of visible ASCII, so it cannot add lines to a request.
pub fn read_token(path: &Path) -> Result<Option<String>, TokenError> {
    let Some(file) = read_file(path)? else {
        return Ok(None);
    };
    let token = file.text.trim();
    let sendable = !token.is_empty() && token.bytes().all(|byte| byte.is_ascii_graphic());
    Ok(sendable.then(|| token.to_string()))
}

/// Reads a token another service gave the person (the push channel's), never creating one:
/// `None` when there is no file. A file others can read, or one that holds no single word of
/// visible ASCII, is an error that names the file and never its content.
pub fn read_private_token(path: &Path) -> Result<Option<String>, TokenError> {
    let Some(file) = read_file(path)? else {
        return Ok(None);
    };
    if !file.owner_only {
        return Err(TokenError::Readable {
            path: path.to_path_buf(),
        });
    }
    let token = file.text.trim();
    if token.is_empty() || !token.bytes().all(|byte| byte.is_ascii_graphic()) {
        return Err(TokenError::NotAToken {
            path: path.to_path_buf(),
        });
    }
    Ok(Some(token.to_string()))
}

/// What a token file held, and whether only its owner may read it.
struct TokenFile {
    text: String,
    owner_only: bool,
}

/// Reads the file at `path` as a regular file only, at most `READ_LIMIT` bytes of it. It is
/// opened without blocking, so a FIFO cannot hang the reader, and the opened handle's metadata
/// is what is checked, so the file cannot be swapped between the check and the read. `None`
/// when there is no file.
fn read_file(path: &Path) -> Result<Option<TokenFile>, TokenError> {
    let read_error = |source| TokenError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(nix::libc::O_NONBLOCK);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(read_error(err)),
    };
    let meta = file.metadata().map_err(read_error)?;
    if !meta.is_file() {
        return Err(TokenError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let mut bytes = Vec::new();
    file.take(READ_LIMIT)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    Ok(Some(TokenFile {
        text: String::from_utf8_lossy(&bytes).into_owned(),
        owner_only: owner_only(&meta),
    }))
}

fn is_token(text: &str) -> bool {
    text.len() == TOKEN_LEN && text.bytes().all(|byte| byte.is_ascii_hexdigit())
}

/// True when only the owner may read or write the file (always true where modes do not exist).
fn owner_only(meta: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o077 == 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        true
    }
}

/// 32 bytes from the operating system's random source, as hex.
fn new_token() -> Result<String, TokenError> {
    let bytes = random_bytes()?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

#[cfg(unix)]
fn random_bytes() -> Result<[u8; 32], TokenError> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    fs::File::open("/dev/urandom")
        .and_then(|mut file| file.read_exact(&mut bytes))
        .map_err(TokenError::Random)?;
    Ok(bytes)
}

/// Outside Unix there is no `/dev/urandom`, and std exposes no OS random source directly. The
/// keys std's `RandomState` draws come from the OS generator (`ProcessPrng` on Windows) but are
/// only 128 bits per process and partly reused, so instead this mixes many independently keyed
/// hashers with the clock and the process id through SHA-256. It is a stop-gap until the desktop
/// build brings a proper OS RNG crate; the token's only job is to keep other web sites out.
#[cfg(not(unix))]
fn random_bytes() -> Result<[u8; 32], TokenError> {
    use sha2::Digest;
    use std::hash::{BuildHasher, Hasher};
    let mut digest = sha2::Sha256::new();
    for round in 0u64..64 {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(round);
        digest.update(hasher.finish().to_le_bytes());
    }
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    digest.update(since.as_nanos().to_le_bytes());
    digest.update(std::process::id().to_le_bytes());
    Ok(digest.finalize().into())
}

/// Writes the token to a new file created owner-only, then renames it over `path`, so the token
/// is never readable by others, even for a moment, and a crash leaves the old file or the new one.
fn write_token(path: &Path, token: &str) -> Result<(), TokenError> {
    let folder = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(folder).map_err(|source| TokenError::CreateFolder {
        path: folder.to_path_buf(),
        source,
    })?;
    let temporary = folder.join(format!(".token.{}", std::process::id()));
    let write = || -> io::Result<()> {
        let _ = fs::remove_file(&temporary);
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&temporary)?;
        file.write_all(token.as_bytes())?;
        file.write_all(b"\n")?;
        file.sync_all()?;
        fs::rename(&temporary, path)
    };
    write().map_err(|source| {
        let _ = fs::remove_file(&temporary);
        TokenError::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_64_hex_characters_are_a_token() {
        assert!(is_token(&"a1".repeat(32)));
        assert!(!is_token(&"a1".repeat(31)));
        assert!(!is_token(&"zz".repeat(32)));
        assert!(!is_token(""));
    }
}
