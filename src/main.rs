//! The `slate` binary: parses the command line, sets up logging, and runs the command.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Colour codes only for a terminal: a log kept in a file or read by a test stays text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SLATE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    match cli::run(cli::Cli::parse()) {
        Ok(code) => code,
        Err(err) => {
            let causes = err.chain().map(ToString::to_string);
            eprintln!("slate: {}", slate::report::error_text(causes));
            ExitCode::FAILURE
        }
    }
}
