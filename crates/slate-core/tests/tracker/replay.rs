//! Replays the scenarios through the tracker. One `check` runs them all and, on the way, checks
//! that every flip that happens with no new input was announced by `next_deadline`.

use std::collections::BTreeMap;
use std::path::Path;

use slate_core::agents::{
    AgentProcess, Info, Observation, ProcessRole, Record, Title, TitleSource,
};
use slate_core::model::{
    HostedSignals, Intent, IntentState, ListedStatus, Listing, ListingEntry, ProcessInfo,
    SessionKey, Timestamp,
};
use slate_core::tracker::{
    notifications_muted, Batch, Input, ItemStatus, Policy, SeenProcess, Tracker, TranscriptRole,
    WorkItemInfo,
};

use super::{agent, at, dialog_of, record, Expect, Scenario, Step};

fn inputs(
    scenario: &Scenario,
    step: &Step,
    intents: &mut BTreeMap<SessionKey, (Intent, Timestamp)>,
) -> Vec<Input> {
    let agent_kind = agent(&scenario.agent);
    let key = SessionKey::new(agent_kind, step.session.clone());
    let mut inputs = Vec::new();
    if let Some(spec) = &step.intent {
        let state = match spec.state.as_str() {
            "none" => IntentState::None,
            "parked" => IntentState::Parked,
            "awaiting" => IntentState::Awaiting,
            other => panic!("unknown intent state {other}"),
        };
        let intent = Intent {
            state,
            reason: spec.reason.clone(),
            awaiting_who: spec.awaiting_who.clone(),
        };
        intents.insert(key.clone(), (intent, at(step.at)));
        inputs.push(Input::Intents(
            intents
                .iter()
                .map(|(key, (intent, set_at))| (key.clone(), intent.clone(), *set_at))
                .collect(),
        ));
    }
    if step.items.is_some() || step.claims.is_some() {
        let items = step
            .items
            .iter()
            .flatten()
            .map(|spec| WorkItemInfo {
                id: spec.id.clone(),
                title: spec.id.clone(),
                status: ItemStatus::parse(&spec.status)
                    .unwrap_or_else(|| panic!("unknown item status {}", spec.status)),
                deps: spec.deps.clone(),
            })
            .collect();
        let claims = step
            .claims
            .iter()
            .flatten()
            .map(|spec| {
                let holder = SessionKey::new(agent_kind, spec.session.clone());
                (spec.item.clone(), holder, at(step.at))
            })
            .collect();
        inputs.push(Input::Custody { items, claims });
    }
    if let Some(processes) = &step.processes {
        let seen = processes
            .iter()
            .map(|spec| SeenProcess {
                info: ProcessInfo {
                    pid: spec.pid,
                    ppid: None,
                    name: "agent".to_string(),
                    exe: None,
                    cmd: vec!["agent".to_string()],
                    cwd: Some(spec.folder.clone()),
                    start_time: at(spec.start),
                    start_ticks: spec.ticks,
                },
                recognised: AgentProcess {
                    agent: spec.agent.as_deref().map_or(agent_kind, agent),
                    role: match spec.role.as_deref().unwrap_or("interactive") {
                        "interactive" => ProcessRole::Interactive,
                        "print" => ProcessRole::Print,
                        "daemon" => ProcessRole::Daemon,
                        "helper" => ProcessRole::Helper,
                        other => panic!("unknown role {other}"),
                    },
                    folder_arg: None,
                    session_arg: spec.session.clone(),
                },
                folder: Some(spec.folder.clone()),
                newest_child: None,
            })
            .collect();
        inputs.push(Input::Processes(seen));
    }
    if let Some(listing) = &step.listing {
        let entries = listing
            .entries
            .iter()
            .map(|spec| ListingEntry {
                session_id: spec.session.clone(),
                pid: spec.pid,
                proc_start: spec.proc_start.clone(),
                started_at: None,
                cwd: None,
                status: spec.status.as_deref().map(|status| match status {
                    "busy" => ListedStatus::Busy,
                    "idle" => ListedStatus::Idle,
                    "waiting" => ListedStatus::Waiting,
                    "finished" => ListedStatus::Finished,
                    other => panic!("unknown listed status {other}"),
                }),
                waiting_for: spec.waiting_for.clone(),
                interactive: spec.interactive,
                updated_at: None,
            })
            .collect();
        inputs.push(Input::Listing {
            agent: agent_kind,
            listing: Listing {
                available: listing.available,
                entries,
            },
        });
    }
    if let Some(spec) = &step.hosted {
        let signals = HostedSignals {
            pid: spec.pid,
            titles: spec
                .titles
                .iter()
                .map(|(seen, title)| (at(*seen), title.clone()))
                .collect(),
            last_draw: spec.last_draw.map(at),
            control: spec.control.clone(),
        };
        inputs.push(match spec.pid {
            Some(pid) => Input::HostedProcess { pid, signals },
            None => Input::Hosted {
                key: key.clone(),
                signals,
            },
        });
    }
    if let Some(terminals) = &step.terminals {
        let views = terminals
            .iter()
            .map(|spec| {
                let view = slate_core::model::TerminalView {
                    kind: spec.kind,
                    pane: spec.pane.clone(),
                    sensed: spec.sensed,
                    note: None,
                    // What the built-in backends state: a desktop terminal's tab is read only.
                    can: match (spec.sensed, spec.kind) {
                        (false, _) => slate_core::model::Can::NOTHING,
                        (true, slate_core::model::TerminalKind::Accessibility) => {
                            slate_core::model::Can {
                                read: true,
                                ..slate_core::model::Can::NOTHING
                            }
                        }
                        (true, _) => slate_core::model::Can::EVERYTHING,
                    },
                };
                (spec.pid, view)
            })
            .collect();
        inputs.push(Input::Terminals(views));
    }
    if let Some(spec) = &step.sensed {
        let reading = (!spec.unreadable).then(|| slate_core::tracker::Sensed {
            at: at(step.at),
            title: spec.title.clone(),
            screen: slate_core::agents::screens::ScreenSeen {
                kind: spec
                    .screen
                    .unwrap_or(slate_core::agents::screens::ScreenKind::Unknown),
                summary: spec.summary.clone(),
            },
            dialog: dialog_of(spec),
            unread: None,
        });
        inputs.push(Input::Sensed {
            key: key.clone(),
            reading,
        });
    }
    let mut observations = Vec::new();
    let info = Info {
        cwd: step.folder.clone(),
        print_mode: step.print_mode,
        parent_session: step.parent.clone(),
        title: step.title.clone().map(|text| Title {
            text,
            source: TitleSource::Custom,
        }),
        ..Info::default()
    };
    if info != Info::default() {
        observations.push(Observation::Info(info));
    }
    if let Some(spec) = &step.record {
        observations.push(Observation::Record(Record {
            at: Some(at(spec.stamped.unwrap_or(step.at))),
            kind: record(spec, step.at),
        }));
    }
    if let Some(agent_id) = &step.subagent {
        inputs.push(Input::Observed(Batch {
            key: key.clone(),
            role: TranscriptRole::Subagent {
                agent_id: agent_id.clone(),
            },
            transcript: format!("/transcripts/{}/{agent_id}.jsonl", step.session),
            last_write: at(step.at),
            observations: Vec::new(),
            folders: Vec::new(),
        }));
    }
    if !observations.is_empty() {
        inputs.push(Input::Observed(Batch {
            key,
            role: TranscriptRole::Main,
            transcript: format!("/transcripts/{}.jsonl", step.session),
            last_write: at(step.at),
            observations,
            folders: Vec::new(),
        }));
    }
    inputs
}

enum Event<'a> {
    Step(&'a Step),
    Expect(&'a Expect),
}

pub(super) fn check(path: &Path) {
    let text = std::fs::read_to_string(path).expect("scenario readable");
    let scenario: Scenario = toml::from_str(&text)
        .unwrap_or_else(|err| panic!("{}: not a scenario: {err}", path.display()));
    assert!(!scenario.rule.is_empty() && !scenario.description.is_empty());
    let mut events: Vec<(f64, u8, Event)> = Vec::new();
    for step in &scenario.step {
        events.push((step.at, 0, Event::Step(step)));
    }
    for expect in &scenario.expect {
        events.push((expect.at, 1, Event::Expect(expect)));
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));

    let mut tracker = Tracker::new(Policy::default());
    let mut intents = BTreeMap::new();
    // The last session object each session's changes published, as the live list has it.
    let mut published: BTreeMap<SessionKey, slate_core::model::Session> = BTreeMap::new();
    let name = path.file_name().unwrap().to_string_lossy();
    for (time, _, event) in events {
        let now = at(time);
        match event {
            Event::Step(step) => {
                for input in inputs(&scenario, step, &mut intents) {
                    for change in tracker.apply(input, now) {
                        published.insert(change.key, change.session);
                    }
                }
            }
            Event::Expect(expect) => {
                let deadline = tracker.next_deadline();
                let key = SessionKey::new(agent(&scenario.agent), expect.session.clone());
                let before = tracker.session(&key).map(|session| session.status);
                tracker.apply(Input::Tick, now);
                let session = tracker
                    .session(&key)
                    .unwrap_or_else(|| panic!("{name}: no session {} at {time}s", expect.session));
                if before.is_some_and(|before| before != session.status) {
                    assert!(
                        deadline.is_some_and(|deadline| deadline <= now),
                        "{name}: at {time}s the status flipped from {before:?} to {:?} with no \
                         input, but the tracker's next deadline was {deadline:?}",
                        session.status
                    );
                }
                let state = &session.session_state;
                let got = (state.status.as_str(), state.reason.code.as_str());
                assert_eq!(
                    got,
                    (expect.status.as_str(), expect.reason.as_str()),
                    "{name}: at {time}s session {} (reason text: {:?}); evidence: {:#?}",
                    expect.session,
                    state.reason.text,
                    tracker.evidence(&key)
                );
                assert_eq!(session.status, state.status);
                let json = serde_json::to_value(state).unwrap();
                for (field, want) in [
                    ("presence", &expect.presence),
                    ("activity", &expect.activity),
                ] {
                    if let Some(want) = want {
                        assert_eq!(json[field], *want, "{name}: {field} at {time}s");
                    }
                }
                if let Some(want) = &expect.intent {
                    assert_eq!(json["intent"]["state"], *want, "{name}: intent at {time}s");
                }
                for (field, want) in [
                    ("holds_work_claim", expect.holds_work_claim),
                    ("reclaimable", expect.reclaimable),
                ] {
                    if let Some(want) = want {
                        assert_eq!(
                            json["custody"][field], want,
                            "{name}: custody.{field} at {time}s: {}",
                            json["custody"]
                        );
                    }
                }
                if let Some(want) = expect.muted {
                    assert_eq!(
                        notifications_muted(state),
                        want,
                        "{name}: notifications muted at {time}s: {}",
                        json["next_actor"]
                    );
                }
                if let Some(want) = &expect.next_actor {
                    assert_eq!(
                        json["next_actor"]["actor"], *want,
                        "{name}: next_actor at {time}s: {}",
                        json["next_actor"]
                    );
                }
                if let Some(pid) = expect.pid {
                    assert_eq!(session.pid, Some(pid), "{name}: pid at {time}s");
                }
                if let Some(hosted) = expect.hosted {
                    assert_eq!(session.hosted, hosted, "{name}: hosted at {time}s");
                }
                if let Some(kind) = &expect.terminal {
                    let seen = session
                        .terminal
                        .as_ref()
                        .map_or("none", |terminal| match terminal.kind {
                            slate_core::model::TerminalKind::Hosted => "hosted",
                            slate_core::model::TerminalKind::Tmux => "tmux",
                            slate_core::model::TerminalKind::Kitty => "kitty",
                            slate_core::model::TerminalKind::Wezterm => "wezterm",
                            slate_core::model::TerminalKind::Accessibility => "accessibility",
                            slate_core::model::TerminalKind::Plain => "plain",
                            slate_core::model::TerminalKind::Unknown => "unknown",
                            slate_core::model::TerminalKind::Other(_) => "other",
                        });
                    assert_eq!(seen, kind, "{name}: terminal at {time}s");
                }
                if let Some(want) = &expect.dialog {
                    let summary = |session: Option<&slate_core::model::Session>| {
                        session
                            .and_then(|session| session.dialog.as_ref())
                            .map_or("none".to_string(), |dialog| dialog.summary.clone())
                    };
                    assert_eq!(summary(Some(&session)), *want, "{name}: dialog at {time}s");
                    assert_eq!(
                        summary(published.get(&key)),
                        *want,
                        "{name}: the dialog as published at {time}s"
                    );
                }
                if let Some(read) = expect.read {
                    let wanted = tracker
                        .terminals_wanted()
                        .iter()
                        .any(|(key, _)| key.id.as_str() == expect.session);
                    assert_eq!(wanted, read, "{name}: terminal wanted read at {time}s");
                }
            }
        }
    }
}

#[test]
fn scenarios() {
    let dir = crate::repository().join("fixtures/scenarios");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures/scenarios exists")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= 20,
        "expected the full scenario set, found {}",
        paths.len()
    );
    for path in paths {
        check(&path);
    }
}
