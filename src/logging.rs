//! The log: what `SLATE_LOG` asks for (tracing's filter syntax: `debug`, `slate=trace`, …), else
//! a default, written to standard error as plain text.
//!
//! A log line carries what other programs wrote (a file's name, a title, a folder), so every line
//! goes through `report::terminal_text` on its way out: a control character in it is shown, never
//! obeyed by the terminal that reads the log. For that, the log has no colours of its own.
//!
//! The HTTP client's own records are never written, whatever `SLATE_LOG` asks: at its trace
//! level `ureq` dumps the bytes it sends, the `Authorization` header (the API's token, the push
//! channel's) and a push's body (the ntfy topic) among them, and at its debug level the whole URL
//! (a webhook's secret path). Slate tells its own requests' failures itself, by kind only.

use std::io::{self, Write};

use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::EnvFilter;

use slate_core::report::terminal_text;

/// The targets whose records are never written.
const SILENCED: &[&str] = &["ureq", "ureq_proto"];

/// The filter `SLATE_LOG` asks for, else `default`, with the [`SILENCED`] targets off.
pub fn filter(default: &str) -> EnvFilter {
    let asked = EnvFilter::try_from_env("SLATE_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    SILENCED.iter().fold(asked, |filter, target| {
        match format!("{target}=off").parse() {
            Ok(directive) => filter.add_directive(directive),
            Err(_) => filter,
        }
    })
}

/// Starts the log for this process, with [`filter`]`(default)`.
pub fn init(default: &str) {
    tracing_subscriber::fmt()
        .with_writer(Shown)
        .with_ansi(false)
        .with_env_filter(filter(default))
        .init();
}

/// Standard error, with each line's control characters shown rather than obeyed.
struct Shown;

impl<'a> MakeWriter<'a> for Shown {
    type Writer = Shown;

    fn make_writer(&'a self) -> Shown {
        Shown
    }
}

impl Write for Shown {
    /// Takes the whole of `buf`: the log hands over each record, formatted, in one piece.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        io::stderr()
            .lock()
            .write_all(terminal_text(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}
