//! What reading desktop terminals through the accessibility bus costs: ten Codex sessions in open
//! calls across two xfce4-terminal windows (one process, five tabs each; half the tabs show a
//! recorded permission dialog, half its idle screen), read once a second through the backend the
//! live loop uses, as the sensing loop reads them. Prints the CPU time of the reads (this
//! process) and what answering them cost the terminal, each as a share of one core, with the
//! median time of one read. (After the first lookup a read goes to the terminal alone, not
//! through the accessibility registry.) Asserts nothing.
//!
//! Run with `cargo bench --bench accessibility` on a machine with Xvfb, dbus-daemon, at-spi2-core
//! and xfce4-terminal (`scripts/deps.sh`); `SLATE_BENCH_SECONDS` sets how long it reads (default
//! 30). Everything runs in a throwaway HOME, on a private display and a private session bus.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use slate::model::{AgentKind, Timestamp};
use slate::terminals::accessibility::{self, ACCESSIBILITY};
use slate::terminals::{Backend, Clues, Wanted};

#[path = "../tests/terminals/desktop.rs"]
mod desktop;
use desktop::Desktop;

const SESSIONS: usize = 10;

/// The CPU time process `pid` has used, user and system, from `/proc` (in clock ticks of 10 ms).
fn cpu(pid: &str) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let fields: Vec<u64> = stat
        .rsplit_once(')')
        .map(|(_, rest)| {
            rest.split_whitespace()
                .filter_map(|f| f.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let ticks = fields.get(10).copied().unwrap_or(0) + fields.get(11).copied().unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

fn clock() -> Timestamp {
    slate::live::system_clock()
}

fn main() {
    for tool in ["Xvfb", "dbus-daemon", "xfce4-terminal"] {
        if Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .map_or(true, |out| !out.status.success())
        {
            eprintln!("needs {tool} (scripts/deps.sh installs it); nothing measured");
            return;
        }
    }
    let seconds: u64 = std::env::var("SLATE_BENCH_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let mut desktop = Desktop::start("1600x1000x24");
    let bus = desktop.bus.clone();

    let screens = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/screens/codex/0.171.0");
    let show = |file: &str| {
        format!(
            "sh -c \"cat '{}'; exec sleep 3600\"",
            screens.join(file).display()
        )
    };
    let mut terminal = desktop.command("xfce4-terminal");
    terminal.args(["--disable-server", "--geometry", "120x40"]);
    for window in 0..2 {
        if window > 0 {
            terminal.arg("--window");
        }
        for tab in 0..SESSIONS / 2 {
            if tab > 0 {
                terminal.arg("--tab");
            }
            let file = if tab % 2 == 0 {
                "permission-touch.txt"
            } else {
                "idle.txt"
            };
            terminal.args(["--command", &show(file)]);
        }
    }
    let terminal = terminal
        .stdout(Stdio::null())
        .spawn()
        .expect("xfce4-terminal starts");
    let app = terminal.id();
    desktop.keep(terminal);

    let ready = Instant::now();
    loop {
        let tabs = accessibility::read_app(&bus, app, Duration::from_secs(2)).unwrap_or_default();
        if tabs.len() == SESSIONS && tabs.iter().all(|tab| !tab.text.trim().is_empty()) {
            break;
        }
        assert!(
            ready.elapsed() < Duration::from_secs(30),
            "xfce4-terminal's {SESSIONS} tabs never showed on the accessibility bus"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // Ten sessions of one agent in one application: each read takes every tab once.
    let server = format!("xfce4-terminal:{app}@{bus}");
    let wanted: Vec<Wanted> = (0..SESSIONS)
        .map(|n| Wanted {
            pane: format!("/dev/pts/{n}"),
            agent: AgentKind::CODEX,
            clues: Clues {
                call: None,
                peers: SESSIONS,
                others: Vec::new(),
            },
            colours: false,
            screen: true,
        })
        .collect();
    let me = std::process::id().to_string();
    let app = app.to_string();
    let started = Instant::now();
    let before = (cpu(&me), cpu(&app));
    let mut reads = Vec::new();
    let mut failed = 0;
    for second in 0..seconds {
        let read_at = Instant::now();
        let outcomes = ACCESSIBILITY.read(&server, &wanted, clock);
        reads.push(read_at.elapsed());
        failed += outcomes.iter().filter(|read| read.is_err()).count();
        let next = started + Duration::from_secs(second + 1);
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    let wall = started.elapsed().as_secs_f64();
    let after = (cpu(&me), cpu(&app));
    reads.sort();
    let share = |from: Duration, to: Duration| 100.0 * (to - from).as_secs_f64() / wall;
    println!(
        "accessibility reads: {SESSIONS} sessions in open calls, 2 windows of one xfce4-terminal, \
         {} reads over {wall:.0} s ({failed} session reads failed)",
        reads.len()
    );
    println!(
        "  one read (all tabs): median {:.1} ms, slowest {:.1} ms",
        reads[reads.len() / 2].as_secs_f64() * 1000.0,
        reads[reads.len() - 1].as_secs_f64() * 1000.0
    );
    println!(
        "  CPU, share of one core: slate {:.2}%, xfce4-terminal {:.2}%",
        share(before.0, after.0),
        share(before.1, after.1)
    );
}
