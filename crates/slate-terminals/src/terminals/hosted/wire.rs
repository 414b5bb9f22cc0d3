//! The wire of `slate run`'s control socket (src/host/control.rs serves it): one JSON request a
//! line and one JSON answer a line. The client here and the server there share these types, so
//! the two ends cannot drift apart.

use serde::{Deserialize, Serialize};

/// The most bytes one `write` request may type.
pub const MAX_WRITE: usize = 4096;

/// One request, as it goes over the socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// The last title and the visible screen, with backgrounds as escapes when `colours`.
    Read { colours: bool },
    /// Bytes to type into the program's terminal.
    Write(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WireRequest {
    #[serde(default)]
    read: Option<bool>,
    #[serde(default)]
    colours: Option<bool>,
    #[serde(default)]
    write: Option<String>,
}

impl Request {
    /// The request's line, without its newline.
    pub fn to_line(&self) -> String {
        match self {
            Request::Read { colours: false } => serde_json::json!({ "read": true }),
            Request::Read { colours: true } => {
                serde_json::json!({ "read": true, "colours": true })
            }
            Request::Write(text) => serde_json::json!({ "write": text }),
        }
        .to_string()
    }
}

/// Reads one request line (without its newline).
pub fn parse_request(line: &[u8]) -> Result<Request, String> {
    const EXPECTED: &str = r#"expected {"read": true} or {"write": "<text>"}"#;
    let wire: WireRequest =
        serde_json::from_slice(line).map_err(|error| format!("not a request: {error}"))?;
    match wire {
        WireRequest {
            read: Some(true),
            colours,
            write: None,
        } => Ok(Request::Read {
            colours: colours.unwrap_or(false),
        }),
        WireRequest {
            read: None,
            colours: None,
            write: Some(text),
        } => {
            if text.is_empty() {
                Err("nothing to write".to_string())
            } else if text.len() > MAX_WRITE {
                Err(format!("a write is at most {MAX_WRITE} bytes"))
            } else {
                Ok(Request::Write(text))
            }
        }
        _ => Err(EXPECTED.to_string()),
    }
}

/// One answer, as it goes over the socket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Answer {
    /// The last title (empty when the program set none) and the visible screen.
    Screen {
        title: String,
        screen: String,
    },
    Written {
        written: usize,
    },
    Error {
        error: String,
    },
}

impl Answer {
    /// The answer's line, with its newline.
    pub fn line(&self) -> Vec<u8> {
        let mut line = serde_json::to_vec(self).unwrap_or_else(|_| b"{}".to_vec());
        line.push(b'\n');
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse_and_round_trip() {
        for request in [
            Request::Read { colours: false },
            Request::Read { colours: true },
            Request::Write("1".to_string()),
            Request::Write("\x1b".to_string()),
        ] {
            assert_eq!(parse_request(request.to_line().as_bytes()), Ok(request));
        }
    }

    #[test]
    fn other_requests_are_refused() {
        for line in [
            "",
            "not json",
            "[]",
            "{}",
            r#"{"read": false}"#,
            r#"{"read": true, "write": "x"}"#,
            r#"{"write": "x", "colours": true}"#,
            r#"{"write": ""}"#,
            r#"{"write": 1}"#,
            r#"{"read": true, "extra": 1}"#,
            r#"{"read": true"#,
        ] {
            assert!(parse_request(line.as_bytes()).is_err(), "{line}");
        }
        let long = serde_json::json!({ "write": "x".repeat(MAX_WRITE + 1) }).to_string();
        assert!(parse_request(long.as_bytes())
            .unwrap_err()
            .contains("at most"));
    }

    #[test]
    fn answers_have_the_contract_shapes() {
        let screen = Answer::Screen {
            title: "t".to_string(),
            screen: "s\n".to_string(),
        };
        assert_eq!(screen.line(), b"{\"title\":\"t\",\"screen\":\"s\\n\"}\n");
        assert_eq!(Answer::Written { written: 2 }.line(), b"{\"written\":2}\n");
        let parsed: Answer = serde_json::from_str(r#"{"error": "no"}"#).unwrap();
        assert_eq!(
            parsed,
            Answer::Error {
                error: "no".to_string()
            }
        );
    }
}
