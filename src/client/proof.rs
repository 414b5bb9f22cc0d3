//! What the client proves about the other end before it sends a byte: that the listener is this
//! user's.
//!
//! Over the API's Unix socket: the socket's folder and the socket file are this user's and
//! nobody else's (real, not links, owned by this uid, no access for group or others), and, once
//! connected, the peer's credentials (`SO_PEERCRED`) name this uid. Over loopback TCP, where a
//! port belongs to whoever bound it first: the kernel's table of TCP sockets
//! (`/proc/net/tcp` and `/proc/net/tcp6`) names the user of the server's side of this very
//! connection (the row whose local address is the server's and whose remote address is the
//! client's), and that user must be this one. When that row is not there, every listening row for
//! the server's port must be this user's; when there is neither, nothing is proven and nothing
//! is sent. The tables are read with a size limit, and a row that does not read is skipped.

use std::io::{self, BufRead, BufReader, Read};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;

/// Why a listener is not shown to be this user's: the token and everything else stay unsent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotYours(pub String);

/// The most of one table of TCP sockets that is read. A machine with a million sockets has a
/// table of about 150 MB; past this limit the row is taken as not found, and nothing is sent.
pub const TABLE_LIMIT: u64 = 64 * 1024 * 1024;

/// The longest row read; a kernel row is 150 bytes.
const ROW_LIMIT: usize = 512;

/// The `st` column of a listening socket.
const LISTEN: u8 = 0x0A;

/// This process's user id.
pub fn my_uid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Checks that the socket at `path` and its folder are this user's alone: each a real file of its
/// kind (not a link), owned by this uid, with no access for group or others.
pub fn check_socket_file(path: &Path) -> Result<(), NotYours> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let me = my_uid();
    let folder = path.parent().unwrap_or(Path::new("/"));
    let read = |path: &Path| {
        std::fs::symlink_metadata(path)
            .map_err(|err| NotYours(format!("cannot read {}: {err}", path.display())))
    };
    let meta = read(folder)?;
    if meta.file_type().is_symlink() {
        return Err(NotYours(format!(
            "{} is a symbolic link, not slate's private folder: refusing to send the token",
            folder.display()
        )));
    }
    if !meta.file_type().is_dir() {
        return Err(NotYours(format!("{} is not a folder", folder.display())));
    }
    owned_alone(folder, meta.uid(), meta.mode(), me)?;
    let meta = read(path)?;
    if !meta.file_type().is_socket() {
        return Err(NotYours(format!(
            "{} is not a socket: refusing to send the token",
            path.display()
        )));
    }
    owned_alone(path, meta.uid(), meta.mode(), me)
}

/// Refuses a file owned by another uid than `me`, or open to group or others.
fn owned_alone(path: &Path, uid: u32, mode: u32, me: u32) -> Result<(), NotYours> {
    if uid != me {
        return Err(NotYours(format!(
            "{} belongs to uid {uid}, not you (uid {me}): refusing to send the token",
            path.display()
        )));
    }
    if mode & 0o077 != 0 {
        return Err(NotYours(format!(
            "{} is open to other users (mode {:o}): refusing to send the token",
            path.display(),
            mode & 0o777
        )));
    }
    Ok(())
}

/// The user id of the process at the other end of a Unix socket.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn peer_uid(stream: &std::os::unix::net::UnixStream) -> Option<u32> {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    getsockopt(stream, PeerCredentials)
        .ok()
        .map(|credentials| credentials.uid())
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn peer_uid(stream: &std::os::unix::net::UnixStream) -> Option<u32> {
    nix::unistd::getpeereid(stream)
        .ok()
        .map(|(uid, _)| uid.as_raw())
}

/// Checks a connected Unix socket's peer: it must be this user.
pub fn check_peer(stream: &std::os::unix::net::UnixStream, place: &Path) -> Result<(), NotYours> {
    let me = my_uid();
    match peer_uid(stream) {
        Some(uid) if uid == me => Ok(()),
        Some(uid) => Err(NotYours(format!(
            "the listener on {} belongs to uid {uid}, not you (uid {me}): refusing to send the token",
            place.display()
        ))),
        None => Err(NotYours(format!(
            "the listener on {} cannot be shown to be yours: refusing to send the token",
            place.display()
        ))),
    }
}

/// Checks a connected TCP stream's server side: the kernel's tables must name this user as its
/// owner (see the module's paragraph).
pub fn check_tcp(stream: &std::net::TcpStream) -> Result<(), NotYours> {
    let server = stream
        .peer_addr()
        .map_err(|err| NotYours(format!("cannot read the server's address: {err}")))?;
    let client = stream
        .local_addr()
        .map_err(|err| NotYours(format!("cannot read this connection's address: {err}")))?;
    let mut rows = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        // A machine without IPv6 has no tcp6 table; one without either proves nothing.
        if let Ok(file) = std::fs::File::open(table) {
            rows.extend(read_rows(file, TABLE_LIMIT));
        }
    }
    judge(&owners(&rows, server, client), server, my_uid())
}

/// Whether `owners` (from [`owners`]) prove the listener at `server` to be `me`'s.
pub fn judge(owners: &[u32], server: SocketAddr, me: u32) -> Result<(), NotYours> {
    if owners.is_empty() {
        return Err(NotYours(format!(
            "the listener on {server} cannot be found in /proc/net/tcp, so it cannot be shown \
             to be yours: refusing to send the token"
        )));
    }
    match owners.iter().find(|&&uid| uid != me) {
        Some(uid) => Err(NotYours(format!(
            "the listener on {server} belongs to uid {uid}, not you (uid {me}): refusing to \
             send the token"
        ))),
        None => Ok(()),
    }
}

/// One row of a table of TCP sockets: its two ends, its state and its user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub local: SocketAddr,
    pub remote: SocketAddr,
    pub state: u8,
    pub uid: u32,
}

/// The rows of a table read from `input`, at most `limit` bytes of it; rows that do not read
/// (the header among them), over-long lines and a last line cut short (by the limit, or by a
/// table that ends without a line end, whose last number may be cut) are skipped.
pub fn read_rows(input: impl Read, limit: u64) -> Vec<Row> {
    let mut reader = BufReader::new(input.take(limit));
    let mut rows = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        match read_line(&mut reader, &mut line) {
            Ok(Some(true)) => {}
            Ok(Some(false)) => continue,
            Ok(None) | Err(_) => return rows,
        }
        if let Some(row) = std::str::from_utf8(&line).ok().and_then(parse_row) {
            rows.push(row);
        }
    }
}

/// Reads one line into `line`: `Some(true)` for a whole line of at most [`ROW_LIMIT`] bytes,
/// `Some(false)` for a longer one (skipped), `None` at the end, where a line without its line
/// end is not kept.
fn read_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<Option<bool>> {
    let mut consumed = 0;
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            return Ok(None);
        }
        let (taken, ended) = match available.iter().position(|&byte| byte == b'\n') {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        let room = ROW_LIMIT.saturating_sub(line.len());
        line.extend_from_slice(&available[..taken.min(room)]);
        reader.consume(taken);
        consumed += taken;
        if ended {
            return Ok(Some(consumed <= ROW_LIMIT));
        }
    }
}

/// One row: `sl local rem st tx:rx tr:when retrnsmt uid …`, addresses in the kernel's hex.
pub fn parse_row(line: &str) -> Option<Row> {
    let mut fields = line.split_whitespace();
    fields.next()?.strip_suffix(':')?;
    let local = parse_address(fields.next()?)?;
    let remote = parse_address(fields.next()?)?;
    let state = u8::from_str_radix(fields.next()?, 16).ok()?;
    let uid = fields.nth(3)?.parse().ok()?;
    Some(Row {
        local,
        remote,
        state,
        uid,
    })
}

/// `0100007F:1D46` (IPv4) or 32 hex digits and a port (IPv6): the address as the kernel prints
/// it, each 32-bit word of the address in the machine's own byte order.
fn parse_address(text: &str) -> Option<SocketAddr> {
    let (ip, port) = text.split_once(':')?;
    if port.len() != 4 {
        return None;
    }
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |hex: &str| u32::from_str_radix(hex, 16).ok().map(u32::to_ne_bytes);
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(ip)?)),
        32 => {
            let mut octets = [0u8; 16];
            for (at, chunk) in octets.chunks_mut(4).enumerate() {
                chunk.copy_from_slice(&word(ip.get(at * 8..at * 8 + 8)?)?);
            }
            IpAddr::V6(Ipv6Addr::from(octets))
        }
        _ => return None,
    };
    Some(SocketAddr::new(plain(ip), port))
}

/// An IPv4 address carried in IPv6 (`::ffff:127.0.0.1`, a dual-stack listener's) as IPv4.
fn plain(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
}

/// The users who may own the listener at `server` that `client` is connected to: the server
/// side of this connection's row when there is one, else every listening row for the server's
/// port on its address or on every address.
pub fn owners(rows: &[Row], server: SocketAddr, client: SocketAddr) -> Vec<u32> {
    let server = SocketAddr::new(plain(server.ip()), server.port());
    let client = SocketAddr::new(plain(client.ip()), client.port());
    if let Some(row) = rows
        .iter()
        .find(|row| row.state != LISTEN && row.local == server && row.remote == client)
    {
        return vec![row.uid];
    }
    rows.iter()
        .filter(|row| {
            row.state == LISTEN
                && row.local.port() == server.port()
                && (row.local.ip() == server.ip() || row.local.ip().is_unspecified())
        })
        .map(|row| row.uid)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row as the kernel prints it, built with the same byte-order rule the parser reads.
    fn row(local: SocketAddr, remote: SocketAddr, state: u8, uid: u32) -> String {
        let hex = |address: SocketAddr| match address.ip() {
            IpAddr::V4(ip) => format!(
                "{:08X}:{:04X}",
                u32::from_ne_bytes(ip.octets()),
                address.port()
            ),
            IpAddr::V6(ip) => {
                let octets = ip.octets();
                let words: String = octets
                    .chunks(4)
                    .map(|chunk| format!("{:08X}", u32::from_ne_bytes(chunk.try_into().unwrap())))
                    .collect();
                format!("{words}:{:04X}", address.port())
            }
        };
        format!(
            "   7: {} {} {state:02X} 00000000:00000000 00:00000000 00000000 {uid:>5}        0 \
             4242 1 0000000000000000 20 4 30 10 -1\n",
            hex(local),
            hex(remote)
        )
    }

    const HEADER: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when \
                          retrnsmt   uid  timeout inode\n";

    fn at(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[cfg(target_endian = "little")]
    #[test]
    fn a_kernel_row_reads() {
        let line = "   0: 0100007F:1D46 00000000:0000 0A 00000000:00000000 00:00000000 \
                    00000000 65534        0 123456 1 0000000000000000 100 0 0 10 0";
        let row = parse_row(line).unwrap();
        assert_eq!(row.local, at("127.0.0.1:7494"));
        assert_eq!(row.remote, at("0.0.0.0:0"));
        assert_eq!(row.state, LISTEN);
        assert_eq!(row.uid, 65534);
        let six = "   1: 00000000000000000000000001000000:1D46 \
                   00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 \
                   00000000  1000        0 99 1";
        let row = parse_row(six).unwrap();
        assert_eq!(row.local, at("[::1]:7494"));
        assert_eq!(row.uid, 1000);
        let mapped = "   2: 0000000000000000FFFF00000100007F:1D46 \
                      0000000000000000FFFF00000100007F:D431 01 00000000:00000000 00:00000000 \
                      00000000     0        0 99 1";
        let row = parse_row(mapped).unwrap();
        assert_eq!(
            row.local,
            at("127.0.0.1:7494"),
            "a v4-mapped address reads as IPv4"
        );
        assert_eq!(row.remote, at("127.0.0.1:54321"));
    }

    #[test]
    fn the_server_side_of_this_connection_decides() {
        let server = at("127.0.0.1:7494");
        let client = at("127.0.0.1:40000");
        let table = format!(
            "{HEADER}{}{}{}{}",
            row(server, at("0.0.0.0:0"), LISTEN, 0),
            // The client's own side: ours, and not the one that counts.
            row(client, server, 1, 0),
            // The server's side of this connection: another user's.
            row(server, client, 1, 65534),
            row(server, at("127.0.0.1:40001"), 1, 0),
        );
        let rows = read_rows(table.as_bytes(), TABLE_LIMIT);
        assert_eq!(rows.len(), 4, "the header is skipped");
        assert_eq!(owners(&rows, server, client), [65534]);
        let refused = judge(&owners(&rows, server, client), server, 0).unwrap_err();
        assert_eq!(
            refused.0,
            "the listener on 127.0.0.1:7494 belongs to uid 65534, not you (uid 0): refusing to \
             send the token"
        );
    }

    #[test]
    fn without_the_connection_every_listener_on_the_port_must_be_ours() {
        let server = at("127.0.0.1:7494");
        let client = at("127.0.0.1:40000");
        let ours = row(server, at("0.0.0.0:0"), LISTEN, 1000);
        let rows = read_rows(ours.as_bytes(), TABLE_LIMIT);
        assert_eq!(owners(&rows, server, client), [1000]);
        assert!(judge(&owners(&rows, server, client), server, 1000).is_ok());
        // A wildcard listener of another user on the same port counts too.
        let both = format!(
            "{ours}{}{}",
            row(at("0.0.0.0:7494"), at("0.0.0.0:0"), LISTEN, 65534),
            // Another port, and another address, do not.
            row(at("127.0.0.2:7494"), at("0.0.0.0:0"), LISTEN, 7),
        );
        let rows = read_rows(both.as_bytes(), TABLE_LIMIT);
        assert_eq!(owners(&rows, server, client), [1000, 65534]);
        assert!(judge(&owners(&rows, server, client), server, 1000).is_err());
        // Nothing at all: nothing is proven.
        assert!(judge(&owners(&[], server, client), server, 1000).is_err());
    }

    #[test]
    fn an_ipv6_connection_is_found_in_tcp6() {
        let server = at("[::1]:7494");
        let client = at("[::1]:50000");
        let table = row(server, client, 1, 1000);
        let rows = read_rows(table.as_bytes(), TABLE_LIMIT);
        assert_eq!(owners(&rows, server, client), [1000]);
        // A dual-stack listener's connection from 127.0.0.1 is printed as v4-mapped IPv6.
        let mapped_server = at("[::ffff:127.0.0.1]:7494");
        let mapped_client = at("[::ffff:127.0.0.1]:50001");
        let table = row(mapped_server, mapped_client, 1, 65534);
        let rows = read_rows(table.as_bytes(), TABLE_LIMIT);
        assert_eq!(
            owners(&rows, at("127.0.0.1:7494"), at("127.0.0.1:50001")),
            [65534]
        );
    }

    #[test]
    fn malformed_and_truncated_rows_are_skipped() {
        for line in [
            "",
            "garbage",
            "   0: 0100007F:1D46",
            "   0: 0100007F:1D46 00000000:0000 0A",
            "   0: 0100007F:1D46 00000000:0000 0A 00000000:00000000 00:00000000 00000000",
            "   0: 0100007F:1D46 00000000:0000 0A 00000000:00000000 00:00000000 00000000 x 0 1",
            "   0: 0100007F:1D46 00000000:0000 0A 00000000:00000000 00:00000000 00000000 -1 0 1",
            "   0: 0100007Z:1D46 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1",
            "   0: 100007F:1D46 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1",
            "   0: 0100007F:1D46F 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1",
            "   0: 0100007F 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1",
            "   0: 0100007F:1D46 00000000:0000 1FF 00000000:00000000 00:00000000 00000000 0 0 1",
            "   0 0100007F:1D46 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1",
            "   0: 0000000000000000000000000100000:1D46 00000000:0000 0A 0:0 0:0 0 0 0 1",
            "   0: 0100007F:1D46 00000000:0000 0A 00000000:00000000 00:00000000 00000000 \
             99999999999 0 1",
        ] {
            assert_eq!(parse_row(line), None, "{line:?}");
        }
        // A table cut in the middle of a row keeps the rows before the cut.
        let server = at("127.0.0.1:7494");
        let whole = format!(
            "{}{}",
            row(server, at("127.0.0.1:1"), 1, 5),
            row(server, at("127.0.0.1:2"), 1, 6)
        );
        let cut = &whole[..whole.len() - 40];
        assert_eq!(read_rows(cut.as_bytes(), TABLE_LIMIT).len(), 1);
        // Bytes that are not text, and an endless line, read as no row.
        let mut noise = vec![0xFFu8; 10_000];
        noise.push(b'\n');
        noise.extend_from_slice(row(server, at("127.0.0.1:3"), 1, 7).as_bytes());
        let rows = read_rows(noise.as_slice(), TABLE_LIMIT);
        assert_eq!(rows.len(), 1, "the row after the noise still reads");
        assert_eq!(rows[0].uid, 7);
    }

    #[test]
    fn a_huge_table_is_read_to_its_limit_and_no_further() {
        let server = at("127.0.0.1:7494");
        let client = at("127.0.0.1:40000");
        let filler = row(at("10.0.0.1:22"), at("10.0.0.2:5000"), 1, 0);
        let count = 100_000;
        let mut table = filler.repeat(count);
        table.push_str(&row(server, client, 1, 1000));
        let rows = read_rows(table.as_bytes(), TABLE_LIMIT);
        assert_eq!(rows.len(), count + 1);
        assert_eq!(owners(&rows, server, client), [1000]);
        // Beyond the limit the row is not seen, and nothing is proven.
        let limit = (filler.len() * 10) as u64;
        let rows = read_rows(table.as_bytes(), limit);
        assert_eq!(rows.len(), 10);
        assert!(judge(&owners(&rows, server, client), server, 1000).is_err());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_listener_of_this_user_is_proven_from_the_kernels_table() {
        for bind in ["127.0.0.1:0", "[::1]:0"] {
            let Ok(listener) = std::net::TcpListener::bind(bind) else {
                continue; // no IPv6 here
            };
            let address = listener.local_addr().unwrap();
            // Before the server accepts, and after.
            let waiting = std::net::TcpStream::connect(address).unwrap();
            check_tcp(&waiting).unwrap();
            let _accepted = listener.accept().unwrap();
            check_tcp(&waiting).unwrap();
        }
    }

    #[test]
    fn a_socket_and_its_folder_must_be_ours_alone() {
        use std::os::unix::fs::PermissionsExt;
        let temp = tempfile::tempdir().unwrap();
        let folder = temp.path().join("slate");
        std::fs::create_dir(&folder).unwrap();
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
        let path = folder.join("api.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        check_socket_file(&path).unwrap();
        // The socket open to others.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(check_socket_file(&path)
            .unwrap_err()
            .0
            .contains("open to other users"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        // The folder open to others.
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(check_socket_file(&path)
            .unwrap_err()
            .0
            .contains("open to other users"));
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
        // A link in place of the folder, or of the socket.
        let linked = temp.path().join("linked");
        std::os::unix::fs::symlink(&folder, &linked).unwrap();
        let refused = check_socket_file(&linked.join("api.sock")).unwrap_err();
        assert!(refused.0.contains("symbolic link"), "{refused}");
        let link = folder.join("link.sock");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert!(check_socket_file(&link)
            .unwrap_err()
            .0
            .contains("not a socket"));
        // A regular file in place of the socket; no file at all.
        let file = folder.join("file.sock");
        std::fs::write(&file, "").unwrap();
        assert!(check_socket_file(&file)
            .unwrap_err()
            .0
            .contains("not a socket"));
        assert!(check_socket_file(&folder.join("none.sock")).is_err());
        // Another owner: the check compares with the uid it is given.
        let refused = owned_alone(&path, 65534, 0o600, 1000).unwrap_err();
        assert!(refused
            .0
            .contains("belongs to uid 65534, not you (uid 1000)"));
        assert!(owned_alone(&path, 1000, 0o600, 1000).is_ok());
    }
}
