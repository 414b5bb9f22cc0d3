//! The log: what `SLATE_LOG` asks for (tracing's filter syntax: `debug`, `slate=trace`, …), else
//! a default, written to standard error, with colour codes only for a terminal (a log kept in a
//! file or read by a test stays text).
//!
//! The HTTP client's own records are never written, whatever `SLATE_LOG` asks: at its trace
//! level `ureq` dumps the bytes it sends, the `Authorization` header (the API's token, the push
//! channel's) and a push's body (the ntfy topic) among them, and at its debug level the whole URL
//! (a webhook's secret path). Slate tells its own requests' failures itself, by kind only.

use tracing_subscriber::EnvFilter;

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
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(filter(default))
        .init();
}
