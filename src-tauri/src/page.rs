//! What the window's process and the commands its page invokes share: the requests it sends the
//! tray ([`Request`], one line each on its standard output), its own state ([`Page`]: where the
//! API is, and the line to the tray), and raising the window ([`raise`]).
//!
//! A leaf: `window` runs the process and speaks the protocol's other lines, `commands` holds what
//! the page invokes; both read this, and neither reads the other for it.

use std::io::Write;
use std::sync::Mutex;

use slate::model::Timestamp;
use slate::policy::menu::Pause;
use tauri::{AppHandle, Manager, Runtime};

use crate::server::Endpoint;

/// The window's label, as declared in `tauri.conf.json` and named by the capabilities.
pub const LABEL: &str = "main";

/// What the window process asks of the tray, one line each on its standard output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// Pause or resume notifications.
    Pause(Pause),
    /// Quit Slate: the tray, and with it the window.
    Quit,
    /// Redraw the tray menu (start at login changed).
    Refresh,
}

impl Request {
    /// The line that carries the request, without its newline.
    pub fn to_line(self) -> String {
        match self {
            Request::Pause(Pause::Off) => "pause off".to_string(),
            Request::Pause(Pause::UntilResumed) => "pause until-resumed".to_string(),
            Request::Pause(Pause::Until(until)) => format!("pause until {}", until.millis()),
            Request::Quit => "quit".to_string(),
            Request::Refresh => "refresh".to_string(),
        }
    }

    /// Reads a line written by [`Request::to_line`]; anything else is `None`.
    pub fn parse(line: &str) -> Option<Request> {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["pause", "off"] => Some(Request::Pause(Pause::Off)),
            ["pause", "until-resumed"] => Some(Request::Pause(Pause::UntilResumed)),
            ["pause", "until", millis] => millis
                .parse()
                .ok()
                .map(|millis| Request::Pause(Pause::Until(Timestamp::from_millis(millis)))),
            ["quit"] => Some(Request::Quit),
            ["refresh"] => Some(Request::Refresh),
            _ => None,
        }
    }
}

/// What the window process shares with the commands the page invokes.
pub struct Page {
    /// Where the page finds the API, from the tray.
    endpoint: Mutex<Endpoint>,
    /// The line to the tray.
    tray: Mutex<std::io::Stdout>,
}

impl Page {
    /// The window process's state: the API at `endpoint`, and its standard output to the tray.
    pub fn new(endpoint: Endpoint) -> Page {
        Page {
            endpoint: Mutex::new(endpoint),
            tray: Mutex::new(std::io::stdout()),
        }
    }

    /// Where the page finds the API now.
    pub fn endpoint(&self) -> Endpoint {
        self.endpoint.lock().expect("lock poisoned").clone()
    }

    /// Points the page at the API's new place.
    pub fn set_endpoint(&self, endpoint: Endpoint) {
        *self.endpoint.lock().expect("lock poisoned") = endpoint;
    }

    /// Sends a request to the tray.
    pub fn ask(&self, request: Request) {
        let mut tray = self.tray.lock().expect("lock poisoned");
        if let Err(err) = writeln!(tray, "{}", request.to_line()).and_then(|_| tray.flush()) {
            tracing::warn!("cannot reach the tray: {err}");
        }
    }
}

/// Shows, unminimises and focuses the window.
pub fn raise<R: Runtime>(app: &AppHandle<R>) {
    let Some(window) = app.get_webview_window(LABEL) else {
        return;
    };
    let shown = window
        .show()
        .and_then(|_| window.unminimize())
        .and_then(|_| window.set_focus());
    if let Err(err) = shown {
        tracing::warn!("cannot raise the window: {err}");
    }
}

/// The requests the window process sends the tray: every request reads back as itself, and
/// anything else is refused rather than guessed at.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_request_reads_back_from_its_line() {
        let requests = [
            Request::Pause(Pause::Off),
            Request::Pause(Pause::UntilResumed),
            Request::Pause(Pause::Until(Timestamp::from_millis(1_764_590_400_123))),
            Request::Quit,
            Request::Refresh,
        ];
        for request in requests {
            let line = request.to_line();
            assert!(!line.contains('\n'), "{line:?} is one line");
            assert_eq!(Request::parse(&line), Some(request), "{line:?}");
        }
    }

    #[test]
    fn lines_are_read_with_their_surrounding_spaces() {
        assert_eq!(Request::parse("  quit \r"), Some(Request::Quit));
        assert_eq!(
            Request::parse("pause   until-resumed"),
            Some(Request::Pause(Pause::UntilResumed))
        );
    }

    #[test]
    fn unknown_or_malformed_lines_are_refused() {
        for line in [
            "",
            "show",
            "Quit",
            "quit now",
            "pause",
            "pause soon",
            "pause until",
            "pause until tomorrow",
            "pause until 12 13",
            "refresh please",
            "{\"base\":\"http://127.0.0.1:7411\"}",
        ] {
            assert_eq!(Request::parse(line), None, "{line:?}");
        }
    }
}
