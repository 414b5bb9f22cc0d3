//! Reading `slate watch --json` lines (bad, truncated, foreign, third-machine) and the merged view:
//! a reconnect fires nothing again, a missed flip fires once, a session first seen waiting fires
//! nothing, two machines with one session id stay two.

use slate::model::{AgentKind, Session, SessionKey, Status};
use slate::remote;
use slate::remote::view::LinkEvent;
use slate::remote::wire::{self, Line};

use crate::util::{waiting, working};

use super::{at, codex, entry, machine, snapshot_line, Watched};

#[test]
fn a_snapshot_line_reads_and_a_bad_session_in_it_is_skipped_not_the_snapshot() {
    let mut objects = vec![
        serde_json::to_value(working("api", "s1")).unwrap(),
        serde_json::json!({"agent": "claude-code", "id": "broken"}),
        serde_json::to_value(waiting("web", "s2")).unwrap(),
    ];
    // A newer Slate's agent, and an older server's session without facets, still read.
    let mut newer = serde_json::to_value(working("cli", "s3")).unwrap();
    newer["agent"] = "grok-cli".into();
    newer["some_new_field"] = serde_json::json!({"x": 1});
    objects.push(newer);
    let mut older = serde_json::to_value(waiting("old", "s4")).unwrap();
    older.as_object_mut().unwrap().remove("session_state");
    objects.push(older);
    // A session the remote follows on a third machine is not relayed.
    let mut third = serde_json::to_value(working("far", "s5")).unwrap();
    third["machine"] = "elsewhere".into();
    objects.push(third);
    let line = serde_json::json!({"type": "snapshot", "sessions": objects, "version": "9.9.9"});
    let Line::Snapshot {
        sessions,
        skipped,
        version,
    } = wire::parse_line(line.to_string().as_bytes()).unwrap()
    else {
        panic!("not a snapshot");
    };
    let ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["s1", "s2", "s3", "s4"]);
    assert_eq!(skipped, 1);
    assert_eq!(version.as_deref(), Some("9.9.9"));
    assert_eq!(sessions[2].agent.as_str(), "grok-cli");
    assert_eq!(sessions[3].session_state.status, Status::Waiting);
}

#[test]
fn change_lines_read_and_bad_lines_are_errors_that_name_what_is_wrong() {
    let session = serde_json::json!({"type": "session", "session": working("api", "s1")});
    assert!(matches!(
        wire::parse_line(session.to_string().as_bytes()).unwrap(),
        Line::Session(session) if session.id.as_str() == "s1"
    ));
    let removed = br#"{"type":"removed","agent":"codex","id":"s9"}"#;
    assert_eq!(
        wire::parse_line(removed).unwrap(),
        Line::Removed(SessionKey::new(AgentKind::CODEX, "s9"))
    );
    let elsewhere = br#"{"type":"removed","agent":"codex","id":"s9","machine":"far"}"#;
    assert_eq!(wire::parse_line(elsewhere).unwrap(), Line::Ignored);
    // A type a newer Slate may print is passed over.
    assert_eq!(
        wire::parse_line(br#"{"type":"keepalive"}"#).unwrap(),
        Line::Ignored
    );
    let full = snapshot_line(&[working("api", "s1")]);
    for bad in [
        &b"not json"[..],
        &full.as_bytes()[..full.len() / 2],
        br#"{"sessions":[]}"#,
        br#"{"type":"snapshot"}"#,
        br#"{"type":"session"}"#,
        br#"{"type":"session","session":{"id":"x"}}"#,
        br#"{"type":"removed","agent":"codex"}"#,
        br#"{"type":"removed","agent":"codex","id":""}"#,
        br#"{"type":"removed","agent":"this is no agent id at all","id":"x"}"#,
        b"\xff\xfe",
    ] {
        let error = wire::parse_line(bad).unwrap_err();
        assert!(
            error.to_string().starts_with("a line that cannot be read"),
            "{error}"
        );
    }
    let (sessions, skipped) = wire::parse_sessions(br#"{"sessions":[{"id":"x"}]}"#).unwrap();
    assert!(sessions.is_empty());
    assert_eq!(skipped, 1);
    assert!(wire::parse_sessions(b"").is_err());
}

#[test]
fn a_flip_on_a_remote_notifies_once_naming_the_machine() {
    let mut watched = Watched::new(&[entry("box", "box", &[])]);
    // First seen: one working, one already waiting. Nothing is news yet.
    watched.snapshot(
        "box",
        vec![
            codex("api-server", "s1", Status::Working),
            codex("web", "s2", Status::Waiting),
        ],
        1,
    );
    assert!(watched.shown.is_empty(), "{:?}", watched.shown);
    assert_eq!(watched.needs_you(), 1);
    let session = watched
        .remotes
        .session(&SessionKey::new(AgentKind::CODEX, "s1").on(Some(machine("box"))))
        .unwrap();
    assert_eq!(session.machine, Some(machine("box")));
    // A session that appears later already waiting is not news either.
    watched.report(
        "box",
        LinkEvent::Line(Line::Session(Box::new(codex(
            "late",
            "s3",
            Status::Waiting,
        )))),
        2,
    );
    assert!(watched.shown.is_empty(), "{:?}", watched.shown);
    watched.report(
        "box",
        LinkEvent::Line(Line::Session(Box::new(codex(
            "api-server",
            "s1",
            Status::Waiting,
        )))),
        3,
    );
    assert_eq!(watched.shown, ["box · api-server · Codex needs you"]);
}

#[test]
fn a_dropped_link_keeps_its_sessions_uncounted_and_a_reconnect_fires_nothing_again() {
    let mut watched = Watched::new(&[entry("box", "box", &[])]);
    watched.snapshot("box", vec![codex("api", "s1", Status::Working)], 1);
    watched.report(
        "box",
        LinkEvent::Line(Line::Session(Box::new(codex("api", "s1", Status::Waiting)))),
        2,
    );
    assert_eq!(watched.shown.len(), 1);
    assert_eq!(watched.needs_you(), 1);

    let touched = watched.lost("box", 5);
    assert_eq!(touched.len(), 1, "the session is marked, not removed");
    let session = watched.remotes.sessions().next().unwrap().clone();
    assert_eq!(session.status, Status::Waiting, "it keeps its last state");
    assert_eq!(session.unreachable_since, Some(at(5)));
    assert_eq!(
        watched.needs_you(),
        0,
        "an unreachable session is not counted"
    );
    let report = &watched.remotes.reports()[0];
    assert_eq!(report.status, remote::Status::Unreachable);
    assert_eq!(report.since, at(5));
    assert_eq!(report.sessions, 1);
    // Further failures while down change nothing listed.
    assert!(watched.lost("box", 9).is_empty());
    assert_eq!(watched.remotes.reports()[0].since, at(5));

    // Back: the snapshot says the same session still waits, and a new one works.
    let touched = watched.snapshot(
        "box",
        vec![
            codex("api", "s1", Status::Waiting),
            codex("docs", "s4", Status::Working),
        ],
        20,
    );
    assert_eq!(touched.len(), 2);
    assert_eq!(watched.shown.len(), 1, "{:?}", watched.shown);
    assert_eq!(watched.needs_you(), 1);
    assert!(watched
        .remotes
        .sessions()
        .all(|session| session.unreachable_since.is_none()));
    assert_eq!(
        watched.remotes.reports()[0].status,
        remote::Status::Connected
    );

    // A turn that finished while the link was down is told once, when the link is back.
    watched.lost("box", 30);
    watched.snapshot(
        "box",
        vec![
            codex("api", "s1", Status::Waiting),
            codex("docs", "s4", Status::Waiting),
        ],
        40,
    );
    assert_eq!(watched.shown.len(), 2, "{:?}", watched.shown);
    assert_eq!(watched.shown[1], "box · docs · Codex needs you");
    // A session gone from the snapshot leaves the list.
    let touched = watched.snapshot("box", vec![codex("docs", "s4", Status::Waiting)], 50);
    assert_eq!(touched.len(), 1);
    assert_eq!(watched.remotes.sessions().count(), 1);
    assert_eq!(watched.shown.len(), 2);
}

#[test]
fn two_machines_with_the_same_session_id_stay_two_sessions_and_a_removed_remote_goes() {
    let mut watched = Watched::new(&[entry("box", "box", &[]), entry("gpu", "gpu", &[])]);
    watched.snapshot("box", vec![codex("api", "same", Status::Working)], 1);
    watched.snapshot("gpu", vec![codex("api", "same", Status::Waiting)], 1);
    assert_eq!(watched.remotes.sessions().count(), 2);
    let local = SessionKey::new(AgentKind::CODEX, "same");
    let keys: Vec<SessionKey> = watched.remotes.sessions().map(Session::key).collect();
    assert!(
        !keys.contains(&local),
        "a remote key never equals a local one"
    );
    assert_ne!(keys[0], keys[1]);
    assert_eq!(keys[0].to_string(), "box:codex:same");
    assert_eq!(keys[0].reference(), "box:same");

    // A removal names the session on its machine only.
    watched.report("gpu", LinkEvent::Line(Line::Removed(local.clone())), 2);
    assert_eq!(watched.remotes.sessions().count(), 1);

    // A remote taken out of the config takes its sessions with it; a late report from it is
    // ignored.
    let gone = watched
        .remotes
        .configure(&[entry("gpu", "gpu", &[])], at(3));
    assert_eq!(gone, [local.clone().on(Some(machine("box")))]);
    assert!(watched
        .report(
            "box",
            LinkEvent::Line(Line::Session(Box::new(codex("x", "y", Status::Working)))),
            4
        )
        .is_empty());
    assert_eq!(watched.remotes.sessions().count(), 0);
    let names: Vec<String> = watched
        .remotes
        .reports()
        .iter()
        .map(|report| report.name.to_string())
        .collect();
    assert_eq!(names, ["gpu"]);
}

#[test]
fn a_garbled_line_is_said_and_the_link_goes_on() {
    let mut watched = Watched::new(&[entry("box", "box", &[])]);
    watched.snapshot("box", vec![codex("api", "s1", Status::Working)], 1);
    watched.report(
        "box",
        LinkEvent::Garbled("box: a line that cannot be read".into()),
        2,
    );
    let report = &watched.remotes.reports()[0];
    assert_eq!(report.status, remote::Status::Connected);
    assert_eq!(
        report.error.as_deref(),
        Some("box: a line that cannot be read")
    );
    assert_eq!(watched.remotes.sessions().count(), 1);
}
