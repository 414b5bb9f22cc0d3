//! Following a running `slate serve` from another process: a small blocking HTTP/1.1 client that
//! asks `/health` whether a server answers and reads `/sessions/live/stream` as server-sent events.
//!
//! `slate watch` uses it to show a running server's changes, and the tests and benchmarks use it
//! to read the stream the way any client would. It speaks only what Slate's own server sends:
//! plain HTTP on loopback, a chunked or identity body, and `event:`/`data:` fields. It is no
//! general HTTP client and knows nothing of what the events mean.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// Why following a server failed.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    #[error("cannot reach slate at {address}: {source}")]
    Connect {
        address: SocketAddr,
        source: io::Error,
    },
    #[error("slate at {address} answered {status}")]
    Status { address: SocketAddr, status: String },
    #[error("the connection to slate broke: {0}")]
    Io(#[from] io::Error),
}

/// One server-sent event: its name (`message` when the server gave none) and its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerEvent {
    pub event: String,
    pub data: String,
}

/// True when a Slate server answers `GET /health` at `address` within `timeout`.
pub fn probe(address: SocketAddr, timeout: Duration) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&address, timeout) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(timeout));
    let _ = stream.set_write_timeout(Some(timeout));
    if send_get(&mut stream, address, "/health").is_err() {
        return false;
    }
    let mut reader = BufReader::new(stream);
    match read_head(&mut reader) {
        Ok(head) => head.status.starts_with("200"),
        Err(_) => false,
    }
}

/// The body of `GET path` from the server at `address`, when it answers 200.
pub fn get(address: SocketAddr, path: &str) -> Result<String, FollowError> {
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(2))
        .map_err(|source| FollowError::Connect { address, source })?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes())?;
    let mut reader = BufReader::new(stream);
    let head = read_head(&mut reader)?;
    if !head.status.starts_with("200") {
        return Err(FollowError::Status {
            address,
            status: head.status,
        });
    }
    let mut body = Body {
        inner: reader,
        chunked: head.chunked,
        left_in_chunk: 0,
        done: false,
    };
    let mut text = String::new();
    body.read_to_string(&mut text)?;
    Ok(text)
}

/// Opens the event stream of the server at `address`.
pub fn open_stream(address: SocketAddr) -> Result<EventReader, FollowError> {
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(2))
        .map_err(|source| FollowError::Connect { address, source })?;
    send_get(&mut stream, address, "/sessions/live/stream")?;
    let mut reader = BufReader::new(stream);
    let head = read_head(&mut reader)?;
    if !head.status.starts_with("200") {
        return Err(FollowError::Status {
            address,
            status: head.status,
        });
    }
    let body = Body {
        inner: reader,
        chunked: head.chunked,
        left_in_chunk: 0,
        done: false,
    };
    Ok(EventReader {
        lines: BufReader::new(body),
    })
}

fn send_get(stream: &mut TcpStream, address: SocketAddr, path: &str) -> io::Result<()> {
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nAccept: */*\r\nUser-Agent: slate-watch\r\n\r\n"
    );
    stream.write_all(request.as_bytes())
}

struct Head {
    status: String,
    chunked: bool,
}

/// Reads the status line and headers; the reader is left at the body.
fn read_head(reader: &mut impl BufRead) -> io::Result<Head> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status = line
        .split_once(' ')
        .map(|(_, status)| status.trim().to_string())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "not an HTTP response"))?;
    let mut chunked = false;
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("transfer-encoding")
                && value.trim().eq_ignore_ascii_case("chunked")
            {
                chunked = true;
            }
        }
    }
    Ok(Head { status, chunked })
}

/// A response body, undoing chunked transfer encoding.
struct Body<R> {
    inner: R,
    chunked: bool,
    left_in_chunk: u64,
    done: bool,
}

impl<R: BufRead> Read for Body<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.chunked {
            return self.inner.read(buf);
        }
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        if self.left_in_chunk == 0 {
            let mut line = String::new();
            // The CRLF that ends the previous chunk, then the size line.
            loop {
                line.clear();
                if self.inner.read_line(&mut line)? == 0 {
                    self.done = true;
                    return Ok(0);
                }
                if !line.trim().is_empty() {
                    break;
                }
            }
            let size = line.trim().split(';').next().unwrap_or("");
            self.left_in_chunk = u64::from_str_radix(size, 16)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad chunk size"))?;
            if self.left_in_chunk == 0 {
                self.done = true;
                return Ok(0);
            }
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left_in_chunk).unwrap_or(usize::MAX));
        let read = self.inner.read(&mut buf[..want])?;
        if read == 0 {
            self.done = true;
        }
        self.left_in_chunk -= read as u64;
        Ok(read)
    }
}

/// Reads server-sent events one at a time.
pub struct EventReader {
    lines: BufReader<Body<BufReader<TcpStream>>>,
}

impl EventReader {
    /// Limits how long `next_event` blocks before failing with a timeout error.
    pub fn set_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.lines
            .get_ref()
            .inner
            .get_ref()
            .set_read_timeout(timeout)
    }

    /// The next event, skipping comments such as keep-alives; `None` when the server closed the
    /// stream.
    pub fn next_event(&mut self) -> Result<Option<ServerEvent>, FollowError> {
        let mut event = String::new();
        let mut data: Vec<String> = Vec::new();
        let mut line = String::new();
        loop {
            line.clear();
            if self.lines.read_line(&mut line)? == 0 {
                return Ok(None);
            }
            let field = line.trim_end_matches(['\r', '\n']);
            if field.is_empty() {
                if data.is_empty() && event.is_empty() {
                    continue;
                }
                return Ok(Some(ServerEvent {
                    event: if event.is_empty() {
                        "message".to_string()
                    } else {
                        event
                    },
                    data: data.join("\n"),
                }));
            }
            if field.starts_with(':') {
                continue;
            }
            let (name, value) = field.split_once(':').unwrap_or((field, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match name {
                "event" => event = value.to_string(),
                "data" => data.push(value.to_string()),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunked_body_is_undone() {
        let raw = b"5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n";
        let mut body = Body {
            inner: BufReader::new(&raw[..]),
            chunked: true,
            left_in_chunk: 0,
            done: false,
        };
        let mut text = String::new();
        body.read_to_string(&mut text).unwrap();
        assert_eq!(text, "hello, world");
    }
}
