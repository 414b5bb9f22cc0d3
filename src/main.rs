//! The `slate` binary: parses the command line, sets up logging, and runs the command.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // `slate hook AGENT EVENT` runs inside an agent's turn: it starts nothing it does not need
    // (no log, no argument parser), prints nothing and exits 0 within its 250 ms.
    let started = std::time::Instant::now();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("hook") {
        slate::hooks::run_hook(slate::agents::BUILT_IN, &args[1..], started);
        return ExitCode::SUCCESS;
    }
    slate::logging::init("warn");
    match cli::run(cli::Cli::parse()) {
        Ok(code) => code,
        // `slate sessions | head -1`: the reader has what it wanted and went away. Like any Unix
        // tool, end quietly instead of reporting the failed write as an error.
        Err(err) if output_closed(&err) => ExitCode::SUCCESS,
        Err(err) => {
            let causes = err.chain().map(ToString::to_string);
            eprintln!("slate: {}", slate::report::error_text(causes));
            ExitCode::FAILURE
        }
    }
}

/// True when `err` is a broken pipe and standard output is the pipe that broke.
///
/// Rust ignores SIGPIPE, so a write to a closed pipe returns `BrokenPipe`. Setting SIGPIPE back to
/// its default would end the process silently too, but it would need unsafe code, and it would
/// also kill `slate serve` or `slate run` on a write to any other closed pipe. Checking the error
/// here changes nothing but the last message. A broken pipe from elsewhere (a server that went
/// away mid-request) is still reported, because standard output is still open then.
fn output_closed(err: &anyhow::Error) -> bool {
    let broken_pipe = err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    });
    broken_pipe && stdout_closed()
}

/// Whether nobody reads standard output any more: the kernel reports an error (a pipe without a
/// reader) or a hang-up (a closed socket) on it.
#[cfg(unix)]
fn stdout_closed() -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::AsFd;
    let stdout = std::io::stdout();
    let mut fds = [PollFd::new(stdout.as_fd(), PollFlags::POLLOUT)];
    if poll(&mut fds, PollTimeout::ZERO).is_err() {
        return false;
    }
    fds[0]
        .revents()
        .is_some_and(|events| events.intersects(PollFlags::POLLERR | PollFlags::POLLHUP))
}

/// Windows has no SIGPIPE to reset and no `poll` on a console handle: a broken pipe there is taken
/// to be standard output's.
#[cfg(not(unix))]
fn stdout_closed() -> bool {
    true
}
