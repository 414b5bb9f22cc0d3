//! The command line's own documentation: shell completions (`slate completions <shell>`) and the
//! manual pages (`slate man`), both generated from the clap definition of [`Cli`] so they never
//! drift from what the parser accepts.
//!
//! It owns the text the generated pages add to clap's (exit status, files, environment). It does
//! not own the commands themselves, nor where the packages install these files
//! (`scripts/package.sh`).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::CommandFactory;
use clap_complete::Shell;
use clap_mangen::roff::{bold, italic, roman, Roff};
use clap_mangen::Man;

use super::{Cli, Command};

/// Runs `slate completions` and `slate man`; `None` for every other command.
pub fn run(command: &Command) -> anyhow::Result<Option<ExitCode>> {
    let mut out = io::stdout().lock();
    match command {
        Command::Completions { shell } => completions(*shell, &mut out)?,
        Command::Man { dir: None } => page(&mut out)?,
        Command::Man { dir: Some(dir) } => {
            for path in write_pages(dir)? {
                writeln!(out, "{}", path.display())?;
            }
        }
        _ => return Ok(None),
    }
    Ok(Some(ExitCode::SUCCESS))
}

/// Writes the completion script for `shell` to `out`.
pub fn completions(shell: Shell, out: &mut dyn Write) -> io::Result<()> {
    let mut command = shown(&Cli::command());
    // The generators write through `buf` and panic when it fails. A flush afterwards surfaces a
    // closed pipe as an error instead, because the script is first written into memory.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "slate", &mut script);
    out.write_all(&script)?;
    out.flush()
}

/// `command` without its hidden options and commands (the replay switches `--now` and
/// `--processes`): clap_complete's generators offer every argument, hidden or not, so the
/// completions are generated from a copy that leaves them out.
fn shown(command: &clap::Command) -> clap::Command {
    let mut copy = clap::Command::new(command.get_name().to_owned())
        .args(
            command
                .get_arguments()
                .filter(|arg| !arg.is_hide_set())
                .cloned(),
        )
        .subcommands(
            command
                .get_subcommands()
                .filter(|sub| !sub.is_hide_set())
                .map(shown),
        );
    if let Some(about) = command.get_about() {
        copy = copy.about(about.clone());
    }
    if let Some(version) = command.get_version() {
        copy = copy.version(version.to_owned());
    }
    copy
}

/// The command as the pages describe it: no `help` subcommand of its own (`--help` is on every
/// page), and every display name (`slate-sessions`, …) worked out.
fn documented() -> clap::Command {
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    command
}

/// Writes slate(1), the page of the whole command, to `out`.
pub fn page(out: &mut dyn Write) -> io::Result<()> {
    let command = documented();
    let man = Man::new(command.clone());
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    man.render_subcommands_section(out)?;
    sections().to_writer(out)?;
    man.render_version_section(out)?;
    out.flush()
}

/// Writes slate.1 and one page per visible subcommand (`slate-sessions.1`, `slate-item-add.1`,
/// …, the names slate(1) refers to) into `dir`, and returns their paths.
pub fn write_pages(dir: &Path) -> io::Result<Vec<PathBuf>> {
    fn subcommand_pages(
        command: &clap::Command,
        dir: &Path,
        written: &mut Vec<PathBuf>,
    ) -> io::Result<()> {
        for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
            written.push(Man::new(sub.clone()).generate_to(dir)?);
            subcommand_pages(sub, dir, written)?;
        }
        Ok(())
    }
    std::fs::create_dir_all(dir)?;
    let top = dir.join("slate.1");
    page(&mut io::BufWriter::new(std::fs::File::create(&top)?))?;
    let mut written = vec![top];
    subcommand_pages(&documented(), dir, &mut written)?;
    Ok(written)
}

/// EXIT STATUS, FILES and ENVIRONMENT: what clap does not know about the command.
fn sections() -> Roff {
    let mut roff = Roff::new();
    let entry = |roff: &mut Roff, term: &str, text: &str| {
        roff.control("TP", []);
        roff.text([bold(term)]);
        roff.text([roman(text)]);
    };

    roff.control("SH", ["EXIT STATUS"]);
    entry(
        &mut roff,
        "0",
        "The command did what was asked. Also when the reader of its output stopped reading \
         early, as in slate sessions --json | head -1: the output then ends quietly.",
    );
    entry(
        &mut roff,
        "1",
        "An error, told on standard error as a line starting with slate:. Also slate focus when \
         it cannot be sure which window shows the session, or cannot bring it to the front.",
    );
    entry(
        &mut roff,
        "2",
        "The command line is wrong: an unknown command or option, or a missing or bad value. \
         The usage is printed.",
    );
    roff.control("TP", []);
    roff.text([bold("slate approve, deny, answer")]);
    roff.text([roman(
        "0 only when the keys were delivered and the dialog left the screen. 3: the session is at \
         no dialog (it works, or waits for a prompt); nothing was typed. 4: the dialog on screen \
         is not the one shown; nothing was typed. 5: the keys were sent once and the dialog was \
         still there 5 s later, or the agent drew nothing of its own (never sent again). 6: Slate cannot type into the session's \
         terminal (a plain terminal: start it in tmux or under slate run; a remote without slate, \
         or with one older than this one). A session on another machine (NAME:ID) is answered there: \
         the answer is forwarded once over its ssh link as the fixed command slate remote-call, \
         with the request as JSON on its standard input, and the remote's outcome gives the \
         status. --dialog FINGERPRINT answers only the dialog with that fingerprint (else 4). 7: the option widens permissions or the dialog has \
         no such option. 8: the person said no at the question, or there was no terminal to ask \
         on and no --yes (piped input is no confirmation). 9: another answer to this dialog is \
         being carried out, or it was answered less than 30 s ago; nothing was typed. 1: any \
         other error (no such session, a bad request, no answer from the running Slate).",
    )]);
    roff.control("TP", []);
    roff.text([bold("slate run")]);
    roff.text([roman(
        "Exits with the status of the command it ran, as a shell does: its exit code, or \
         128 + n when signal n ended it (143 for SIGTERM). When the command cannot be started, \
         slate run fails with 1.",
    )]);

    roff.control("TP", []);
    roff.text([bold("slate serve")]);
    roff.text([roman(
        "Exits with 3, without starting, when this user's Slate already serves on its address \
         (the desktop app, or another slate serve): one engine runs per user, and the message \
         names the one that runs and its process id. The user unit does not restart on 3. On \
         Ctrl-C or SIGTERM it ends within 2 s, whatever it is doing.",
    )]);

    roff.control("SH", ["FILES"]);
    entry(
        &mut roff,
        "~/.config/slate/config.toml",
        "The settings; every key is optional, and an unknown key is an error that names it. \
         Its [[remote]] tables name the machines followed over SSH (slate remote add). Under \
         $XDG_CONFIG_HOME/slate when that is set.",
    );
    entry(
        &mut roff,
        "~/.config/slate/token",
        "The API token (mode 0600), created on first run. Requests that change state carry it \
         as Authorization: Bearer.",
    );
    entry(
        &mut roff,
        "~/.local/share/slate/slate.db",
        "Slate's store: state transitions, intents, work items and claims, the desktop app's \
         notification pause, and every answer to a dialog (SQLite). Under $XDG_DATA_HOME/slate \
         when that is set.",
    );
    entry(
        &mut roff,
        "/usr/lib/systemd/user/slate.service",
        "The user service that runs slate serve: systemctl --user enable --now slate.",
    );

    roff.control("SH", ["ENVIRONMENT"]);
    entry(
        &mut roff,
        "SLATE_LOG",
        "What to log on standard error, as a tracing filter (warn by default; debug shows what \
         Slate reads). The HTTP client's own records are never written: they carry tokens.",
    );
    entry(
        &mut roff,
        "SLATE_API",
        "The address of a running Slate server (http://127.0.0.1:PORT) for slate run and slate \
         sessions, when it listens on another port than the config's [server] listen.",
    );
    entry(
        &mut roff,
        "SLATE_STANDALONE",
        "When 1, slate sessions decides on its own instead of asking a running server.",
    );
    entry(
        &mut roff,
        "HOME, XDG_CONFIG_HOME, XDG_DATA_HOME",
        "Where Slate's own files are, and where the agents' folders are looked for.",
    );
    roff.control("TP", []);
    roff.text([bold(
        "CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME, OPENCODE_DB, CURSOR_CONFIG_DIR",
    )]);
    roff.text([
        roman("The agents' own folders, honoured as the agents honour them; see "),
        italic("slate doctor"),
        roman(" for what was found."),
    ]);
    roff
}
