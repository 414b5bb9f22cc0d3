//! A remote's backlog, played by a stand-in `ssh` that prints a snapshot and thousands of changes
//! at once: the link hands it over one event per read, not one per line, with what a later line
//! of the same read supersedes left out, and what it hands over leaves the view as every line
//! would have; the live service applies it in slices, one publish each, and lists its end. The
//! tests count work (events, lines), not time; the rounds and CPU time a backlog took are
//! printed.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use slate::model::{Session, Status};
use slate::remote::link::Link;
use slate::remote::view::{coalesce, LinkEvent, Remotes};
use slate::remote::wire::Line;
use slate::remote::LinkOptions;

use super::{at, codex, entry, fast, machine, snapshot_line, stand_in_ssh, wait_for};

const SESSIONS: usize = 50;
const CHANGES: usize = 20_000;

/// Session `n`'s state in change `k`: Working and Needs you in turn.
fn changed(k: usize) -> Session {
    let n = k % SESSIONS;
    let status = if (k / SESSIONS).is_multiple_of(2) {
        Status::Working
    } else {
        Status::Waiting
    };
    codex("api", &format!("s{n}"), status)
}

fn session_line(session: &Session) -> String {
    serde_json::json!({"type": "session", "session": session}).to_string()
}

/// What the link handed over, and the view it built.
#[derive(Default)]
struct Received {
    events: usize,
    lines: usize,
    remotes: Remotes,
}

#[test]
fn a_backlog_goes_over_one_event_per_read_and_ends_as_every_line_would() {
    let temp = tempfile::tempdir().unwrap();
    let mut text = snapshot_line(&[]) + "\n";
    for k in 0..CHANGES {
        text.push_str(&session_line(&changed(k)));
        text.push('\n');
    }
    // The last line: a session that only the end of the backlog brings.
    text.push_str(&session_line(&codex("api", "last", Status::Waiting)));
    text.push('\n');
    let backlog = temp.path().join("backlog");
    std::fs::write(&backlog, &text).unwrap();
    let program = stand_in_ssh(
        &temp.path().join("bin"),
        &format!("cat '{}'; exec sleep 600\n", backlog.display()),
    );
    let remote = entry("box", "box.example", &[]);
    let received = Arc::new(Mutex::new(Received::default()));
    received
        .lock()
        .unwrap()
        .remotes
        .configure(std::slice::from_ref(&remote), at(0));
    let sink = {
        let received = received.clone();
        Box::new(
            move |event: LinkEvent, credit: slate::remote::link::Credit| {
                let mut received = received.lock().unwrap();
                received.events += 1;
                received.lines += event.lines();
                received.remotes.apply(&machine("box"), event, at(1));
                drop(credit);
            },
        )
    };
    let options = LinkOptions {
        ssh: program.into(),
        timing: fast(),
    };
    let link = Link::start(remote, options, slate::live::system_clock, sink);
    wait_for("the end of the backlog", Duration::from_secs(120), || {
        let received = received.lock().unwrap();
        let mut sessions = received.remotes.sessions();
        sessions
            .any(|session| session.id.as_str() == "last")
            .then_some(())
    });
    drop(link);
    let received = received.lock().unwrap();
    // Every session as its last line says.
    for n in 0..SESSIONS {
        let last = changed(CHANGES - SESSIONS + n);
        let id = format!("s{n}");
        let seen = received
            .remotes
            .sessions()
            .find(|session| session.id.as_str() == id)
            .unwrap_or_else(|| panic!("{id} is listed"));
        assert_eq!(seen.status, last.status, "{id}");
    }
    let lines = CHANGES + 2;
    eprintln!(
        "a backlog of {lines} lines ({} bytes): {} events, {} lines applied",
        text.len(),
        received.events,
        received.lines
    );
    // A read is 64 KiB, some 60 of these lines: one event each (and one for the attempt).
    assert!(
        received.events * 10 <= lines,
        "{} events for {lines} lines",
        received.events
    );
    assert!(received.lines < lines, "superseded lines are left out");
}

#[test]
fn coalescing_keeps_what_the_last_line_of_each_session_says() {
    let s = |id: &str, status| Line::Session(Box::new(codex("api", id, status)));
    let removed = |id: &str| Line::Removed(codex("api", id, Status::Working).key());
    let snapshot = |ids: &[&str]| Line::Snapshot {
        sessions: ids
            .iter()
            .map(|id| codex("api", id, Status::Working))
            .collect(),
        skipped: 0,
        version: None,
    };
    // A session's later line wins, in the order of the last lines; a removal is a line too.
    assert_eq!(
        coalesce(vec![
            s("a", Status::Working),
            s("b", Status::Working),
            s("a", Status::Waiting),
            removed("b"),
            Line::Ignored,
            s("c", Status::Working),
        ]),
        vec![
            s("a", Status::Waiting),
            removed("b"),
            s("c", Status::Working)
        ]
    );
    // A snapshot replaces everything before it; what comes after it stays.
    assert_eq!(
        coalesce(vec![
            s("a", Status::Waiting),
            snapshot(&["x"]),
            s("a", Status::Working),
            snapshot(&["y"]),
            s("y", Status::Waiting),
            s("y", Status::Working),
        ]),
        vec![snapshot(&["y"]), s("y", Status::Working)]
    );
    // Applied, the coalesced lines leave the view as all of them do.
    let lines: Vec<Line> = (0..300)
        .map(|k| match k % 7 {
            3 => removed(&format!("s{}", k % 11)),
            _ => Line::Session(Box::new(changed(k % 97 + k))),
        })
        .collect();
    let view = |event: LinkEvent| {
        let remote = entry("box", "box.example", &[]);
        let mut remotes = Remotes::default();
        remotes.configure(&[remote], at(0));
        remotes.apply(&machine("box"), LinkEvent::Line(snapshot(&[])), at(1));
        remotes.apply(&machine("box"), event, at(2));
        let mut sessions: Vec<Session> = remotes.sessions().cloned().collect();
        sessions.sort_by_key(|session| session.id.as_str().to_string());
        sessions
    };
    let every = view(LinkEvent::Lines(lines.clone()));
    let coalesced = coalesce(lines);
    assert!(coalesced.len() < 300);
    assert_eq!(view(LinkEvent::Lines(coalesced)), every);
}

/// This process's CPU time so far (user and system), from `/proc/self/stat`.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

/// The live service applies a backlog of a remote with the most sessions one lists, each
/// changed 20 times, and lists the end of it as its last lines say. How many rounds and how
/// much CPU time it took is printed, for docs/performance.md; what the test asserts is the list.
#[test]
fn the_live_service_applies_a_backlog_in_slices_and_lists_its_end() {
    let sessions = slate::remote::view::SESSIONS_PER_REMOTE;
    let rounds = 20;
    let temp = tempfile::tempdir().unwrap();
    let mut text = snapshot_line(&[]) + "\n";
    for k in 0..sessions * rounds {
        let status = if (k / sessions).is_multiple_of(2) {
            Status::Working
        } else {
            Status::Waiting
        };
        text.push_str(&session_line(&codex(
            "api",
            &format!("s{}", k % sessions),
            status,
        )));
        text.push('\n');
    }
    let backlog = temp.path().join("backlog");
    std::fs::write(&backlog, &text).unwrap();
    let program = stand_in_ssh(
        &temp.path().join("bin"),
        &format!("cat '{}'; exec sleep 600\n", backlog.display()),
    );
    let local = temp.path().join("local");
    std::fs::create_dir_all(&local).unwrap();
    let mut service = super::following(&local, vec![entry("box", "box.example", &[])]);
    service.remotes = Some(LinkOptions {
        ssh: program.into(),
        timing: fast(),
    });
    let (cpu, started) = (cpu_time(), std::time::Instant::now());
    let (handle, thread) = slate::live::start(service);
    let woken = handle.health().wakeups;
    // The last round of changes leaves every session Needs you (rounds is even: it ends on an
    // odd round).
    wait_for("the end of the backlog", Duration::from_secs(300), || {
        let listed = handle.live_sessions();
        (listed.len() == sessions
            && listed
                .iter()
                .all(|session| session.status == Status::Waiting))
        .then_some(())
    });
    eprintln!(
        "a backlog of {} lines for {sessions} sessions: listed after {:?}, {:?} of CPU, {} rounds",
        sessions * rounds + 1,
        started.elapsed(),
        cpu_time() - cpu,
        handle.health().wakeups - woken
    );
    handle.shutdown();
    thread.join().unwrap();
}
