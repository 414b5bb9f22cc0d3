//! What a hook event makes of a session (docs/states.md §3 rule 3a), through the tracker with a
//! fake clock: a prompt hook is Needs you at once, the next event Working again, and a hook never
//! brings back a session no live process vouches for.

use std::time::Duration;

use slate::agents::hooks::{seen, HookReport, HookSeen, Signal};
use slate::agents::{
    AgentProcess, CallKind, Info, Observation, ProcessRole, Record, RecordKind, BUILT_IN,
};
use slate::model::{AgentKind, ProcessInfo, ReasonCode, SessionKey, Status, Timestamp};
use slate::tracker::{Batch, Input, Policy, SeenProcess, Tracker, TranscriptRole};

const START: i64 = 1_800_000_000_000;

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_millis(START + seconds * 1000)
}

fn key() -> SessionKey {
    SessionKey::new(AgentKind::CODEX, "019a-hooked")
}

fn records(at_s: i64, kinds: Vec<RecordKind>) -> Input {
    Input::Observed(Batch {
        key: key(),
        role: TranscriptRole::Main,
        transcript: "/h/.codex/sessions/019a-hooked.jsonl".into(),
        last_write: at(at_s),
        observations: std::iter::once(Observation::Info(Info {
            cwd: Some("/work/acme".into()),
            ..Info::default()
        }))
        .chain(kinds.into_iter().map(|kind| {
            Observation::Record(Record {
                at: Some(at(at_s)),
                kind,
            })
        }))
        .collect(),
        folders: Vec::new(),
    })
}

fn codex(pid: u32) -> Input {
    codex_with_child(pid, None)
}

/// The Codex process, with the newest process it started starting at `child_s`.
fn codex_with_child(pid: u32, child_s: Option<i64>) -> Input {
    Input::Processes(vec![SeenProcess {
        info: ProcessInfo {
            pid,
            ppid: None,
            name: "codex".into(),
            exe: None,
            cmd: vec!["codex".into()],
            cwd: Some("/work/acme".into()),
            start_time: at(-60),
            start_ticks: None,
        },
        recognised: AgentProcess {
            agent: AgentKind::CODEX,
            role: ProcessRole::Interactive,
            folder_arg: None,
            session_arg: None,
        },
        folder: Some("/work/acme".into()),
        newest_child: child_s.map(at),
    }])
}

fn hook(event: &str, at_s: i64, tool: Option<&str>, detail: Option<&str>) -> Input {
    let hooks = BUILT_IN.find("codex").unwrap().hooks.unwrap();
    let report = HookReport {
        agent: "codex".into(),
        event: event.into(),
        session_id: key().id.as_str().into(),
        tool: tool.map(Into::into),
        detail: detail.map(Into::into),
        notification: None,
    };
    Input::Hook(seen(hooks, key(), &report, at(at_s)).expect("an event Slate reads"))
}

fn state(tracker: &Tracker) -> (Status, ReasonCode, String) {
    let session = tracker.session(&key()).expect("the session is known");
    let reason = session.session_state.reason;
    (session.status, reason.code, reason.text)
}

fn tool_call(id: &str) -> RecordKind {
    RecordKind::ToolCall {
        call_id: id.into(),
        name: "exec_command".into(),
        detail: Some("touch x.txt".into()),
        input: None,
        kind: CallKind::Plain,
    }
}

/// A Codex session at work on a call, its process alive.
fn at_work() -> Tracker {
    let mut tracker = Tracker::new(Policy::default());
    tracker.apply(codex(100), at(0));
    tracker.apply(
        records(
            0,
            vec![RecordKind::Prompt { text: "go".into() }, tool_call("c1")],
        ),
        at(0),
    );
    tracker
}

#[test]
fn a_permission_hook_is_needs_you_and_the_next_event_working() {
    let mut tracker = at_work();
    assert_eq!(state(&tracker).0, Status::Working);
    // The dialog opens: the hook says so at once, with the command it carries.
    tracker.apply(
        hook("PermissionRequest", 1, Some("Bash"), Some("touch x.txt")),
        at(1),
    );
    let (status, code, text) = state(&tracker);
    assert_eq!(
        (status, code),
        (Status::Waiting, ReasonCode::PermissionPrompt)
    );
    assert!(text.contains("touch x.txt"), "{text}");
    // The session's dialog shows the call, and offers nothing to answer: only the terminal can.
    let dialog = tracker.session(&key()).unwrap().dialog.expect("a dialog");
    assert_eq!(dialog.summary, "Run: touch x.txt");
    assert!(!dialog.answerable && dialog.options.is_empty());
    assert!(dialog.why_not.unwrap().contains("hook"));
    let evidence: Vec<String> = tracker
        .evidence(&key())
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        evidence
            .iter()
            .any(|fact| fact.contains("PermissionRequest hook fired at")),
        "{evidence:?}"
    );
    // Nothing else happens for a long while: still Needs you (no time-based flip).
    tracker.apply(Input::Tick, at(600));
    assert_eq!(state(&tracker).0, Status::Waiting);
    // Approved: the tool ends, and its hook comes before the transcript's result.
    tracker.apply(hook("PostToolUse", 601, Some("Bash"), None), at(601));
    assert_eq!(state(&tracker).0, Status::Working);
    assert!(tracker.session(&key()).unwrap().dialog.is_none());
    // The transcript catches up and decides again.
    tracker.apply(
        records(
            602,
            vec![RecordKind::ToolResult {
                call_id: "c1".into(),
                rejected: false,
            }],
        ),
        at(602),
    );
    assert_eq!(state(&tracker).1, ReasonCode::ModelAnswering);
    // The turn ends: the Stop hook says so before the transcript does.
    tracker.apply(hook("Stop", 603, None, None), at(603));
    assert_eq!(
        (state(&tracker).0, state(&tracker).1),
        (Status::Waiting, ReasonCode::TurnFinished)
    );
}

#[test]
fn a_transcript_record_that_answers_the_prompt_takes_over() {
    let mut tracker = Tracker::new(Policy::default());
    tracker.apply(codex(100), at(0));
    tracker.apply(records(0, vec![tool_call("c1")]), at(0));
    tracker.apply(hook("PermissionRequest", 1, Some("Bash"), None), at(1));
    assert_eq!(state(&tracker).0, Status::Waiting);
    // A call written after the hook (the CLI wrote it late) does not answer it...
    tracker.apply(records(2, vec![tool_call("c1")]), at(2));
    assert_eq!(state(&tracker).0, Status::Waiting);
    // ...its result does.
    tracker.apply(
        records(
            3,
            vec![RecordKind::ToolResult {
                call_id: "c1".into(),
                rejected: false,
            }],
        ),
        at(3),
    );
    assert_eq!(state(&tracker).0, Status::Working);
}

#[test]
fn a_hook_never_brings_back_a_closed_session() {
    let mut tracker = Tracker::new(Policy::default());
    tracker.apply(codex(100), at(0));
    tracker.apply(records(0, vec![tool_call("c1")]), at(0));
    assert_eq!(state(&tracker).0, Status::Working);
    // The process dies: closed at once.
    tracker.apply(Input::Processes(Vec::new()), at(10));
    assert_eq!(state(&tracker).0, Status::Ended);
    // A late hook, even a prompt, changes nothing: no live process vouches.
    for (event, n) in [("PermissionRequest", 11), ("PreToolUse", 12), ("Stop", 13)] {
        tracker.apply(hook(event, n, Some("Bash"), Some("rm -rf /")), at(n));
        assert_eq!(state(&tracker).0, Status::Ended, "{event}");
    }
    tracker.apply(Input::Tick, at(3600));
    assert_eq!(state(&tracker).0, Status::Ended);
}

#[test]
fn a_hook_without_a_vouching_process_decides_nothing() {
    let mut tracker = Tracker::new(Policy::default());
    tracker.apply(records(0, vec![tool_call("c1")]), at(0));
    let before = state(&tracker);
    tracker.apply(hook("PermissionRequest", 1, Some("Bash"), None), at(1));
    assert_eq!(state(&tracker), before);
}

#[test]
fn a_working_hook_holds_for_the_window_at_most() {
    let policy = Policy::default();
    let mut tracker = Tracker::new(policy.clone());
    tracker.apply(codex(100), at(0));
    tracker.apply(
        records(0, vec![RecordKind::TurnEnded { turn_id: None }]),
        at(0),
    );
    assert_eq!(state(&tracker).0, Status::Waiting);
    tracker.apply(hook("UserPromptSubmit", 5, None, None), at(5));
    assert_eq!(state(&tracker).0, Status::Working);
    // The deadline is announced, and after it the transcript decides again.
    let deadline = tracker.next_deadline().expect("a deadline");
    assert!(deadline <= at(5).plus(policy.window));
    tracker.apply(
        Input::Tick,
        at(5).plus(policy.window + Duration::from_secs(1)),
    );
    assert_eq!(state(&tracker).0, Status::Waiting);
}

#[test]
fn hooks_for_sessions_not_read_yet_wait_for_their_transcript_in_bounded_memory() {
    let mut tracker = Tracker::new(Policy::default());
    tracker.apply(codex(100), at(0));
    let hooks = BUILT_IN.find("codex").unwrap().hooks.unwrap();
    for n in 0..2000 {
        let id = format!("unknown-{n}");
        let report = HookReport {
            agent: "codex".into(),
            event: "PermissionRequest".into(),
            session_id: id.clone(),
            tool: None,
            detail: None,
            notification: None,
        };
        let key = SessionKey::new(AgentKind::CODEX, id);
        tracker.apply(
            Input::Hook(seen(hooks, key, &report, at(1)).unwrap()),
            at(1),
        );
    }
    assert_eq!(tracker.sessions().count(), 0);
    // Our session's hook came last: it is kept, and applies once the transcript is read.
    tracker.apply(hook("PermissionRequest", 2, Some("Bash"), None), at(2));
    tracker.apply(records(1, vec![tool_call("c1")]), at(3));
    assert_eq!(state(&tracker).1, ReasonCode::PermissionPrompt);
}

/// A reading of the session's terminal from outside (a tmux pane) at `at_s`, showing Codex's
/// recorded screen `name`.
fn screen(name: &str, at_s: i64) -> Input {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/screens/codex/0.171.0")
            .join(name),
    )
    .unwrap();
    let screen = slate::agents::screens::read_screen(AgentKind::CODEX, &text);
    Input::Sensed {
        key: key(),
        reading: Some(slate::tracker::Sensed::of(at(at_s), None, &screen)),
    }
}

#[test]
fn a_terminal_read_after_the_hook_goes_first() {
    // A session with hooks in a pane Slate also reads. Codex sends no hook when the person
    // approves: the screen that changed after the prompt hook says the dialog is gone.
    let mut tracker = at_work();
    tracker.apply(screen("working-sleep.txt", 0), at(0));
    tracker.apply(
        hook("PermissionRequest", 1, Some("Bash"), Some("touch x.txt")),
        at(1),
    );
    assert_eq!(state(&tracker).1, ReasonCode::PermissionPrompt);
    // A reading taken while the dialog is being drawn still shows the agent working: the
    // prompt hook holds for a moment against it, then the screen decides.
    let drawing = Timestamp::from_millis(at(1).millis() + 300);
    tracker.apply(
        Input::Sensed {
            key: key(),
            reading: Some(slate::tracker::Sensed::of(
                drawing,
                None,
                &slate::agents::screens::read_screen(AgentKind::CODEX, "Working (1s)\n"),
            )),
        },
        drawing,
    );
    assert_eq!(state(&tracker).1, ReasonCode::PermissionPrompt);
    tracker.apply(screen("permission-touch.txt", 2), at(2));
    assert_eq!(state(&tracker).1, ReasonCode::PermissionPrompt);
    // The screen read when the hook fired agrees with it: the hook stays the newest word.
    tracker.apply(Input::Tick, at(3));
    assert_eq!(state(&tracker).0, Status::Waiting);
    // Approved at the terminal: the next reading shows the command running, with no hook.
    tracker.apply(screen("working-sleep.txt", 4), at(4));
    assert_eq!(state(&tracker).0, Status::Working, "{:?}", state(&tracker));

    // The other way round: a hook that says the agent works, then a dialog on the screen
    // (an agent whose hooks tell no prompt, or a prompt hook that did not fire).
    tracker.apply(hook("PreToolUse", 10, Some("Bash"), Some("ls")), at(10));
    assert_eq!(state(&tracker).0, Status::Working);
    tracker.apply(screen("permission-touch.txt", 11), at(11));
    assert_eq!(
        (state(&tracker).0, state(&tracker).1),
        (Status::Waiting, ReasonCode::PermissionPrompt)
    );
}

#[test]
fn a_process_started_after_a_permission_hook_means_the_dialog_was_approved() {
    let mut tracker = Tracker::new(Policy::default());
    // A child from before the dialog (an MCP server started with the session) means nothing.
    tracker.apply(codex_with_child(100, Some(-30)), at(0));
    tracker.apply(records(0, vec![tool_call("c1")]), at(0));
    tracker.apply(
        hook("PermissionRequest", 10, Some("Bash"), Some("sleep 600")),
        at(10),
    );
    assert_eq!(state(&tracker).1, ReasonCode::PermissionPrompt);
    // A process that started within a second of the hook may be another hook of the same
    // event (the person's own, playing a sound): still Needs you.
    tracker.apply(codex_with_child(100, Some(10)), at(11));
    assert_eq!(state(&tracker).1, ReasonCode::PermissionPrompt);
    // Approved at the terminal: Codex sends no hook until the command ends, but the command
    // it runs is a new process of its own. Working, for as long as nothing newer is said.
    tracker.apply(codex_with_child(100, Some(14)), at(15));
    let (status, code, text) = state(&tracker);
    assert_eq!((status, code), (Status::Working, ReasonCode::ToolRunning));
    assert!(
        text.contains("sleep 600") && text.contains("approved at the terminal"),
        "{text}"
    );
    assert!(
        tracker.session(&key()).unwrap().dialog.is_none(),
        "no dialog is shown once approved"
    );
    tracker.apply(codex_with_child(100, Some(14)), at(600));
    assert_eq!(
        state(&tracker).0,
        Status::Working,
        "a long command stays Working"
    );
    // The command's end hook is the newest word again.
    tracker.apply(hook("PostToolUse", 601, Some("Bash"), None), at(601));
    assert_eq!(state(&tracker).0, Status::Working);
}

#[test]
fn a_new_process_after_a_question_hook_answers_nothing() {
    let mut tracker = Tracker::new(Policy::default());
    tracker.apply(codex(100), at(0));
    tracker.apply(records(0, vec![tool_call("c1")]), at(0));
    let question = HookSeen {
        key: key(),
        event: "PermissionRequest".into(),
        signal: Signal::Question,
        tool: Some("request_user_input".into()),
        detail: Some("Which database?".into()),
        at: at(10),
    };
    tracker.apply(Input::Hook(question), at(10));
    let before = state(&tracker);
    assert_eq!(before.0, Status::Waiting);
    // A question is answered by typing, not by a command: a new process says nothing of it.
    tracker.apply(codex_with_child(100, Some(20)), at(21));
    assert_eq!(state(&tracker), before);
}

/// Claude Code and Copilot CLI follow the dialog's own event with a `permission_prompt`
/// notification that carries no call: the session keeps what the dialog asks, and since when.
#[test]
fn a_notification_right_after_the_dialogs_event_keeps_its_command() {
    let mut tracker = at_work();
    tracker.apply(
        hook("PermissionRequest", 1, Some("Bash"), Some("touch x.txt")),
        at(1),
    );
    let notification = |at_ms: i64| {
        Input::Hook(HookSeen {
            key: key(),
            event: "Notification".into(),
            signal: Signal::Permission,
            tool: None,
            detail: None,
            at: Timestamp::from_millis(START + at_ms),
        })
    };
    tracker.apply(notification(1_020), at(2));
    let (status, code, text) = state(&tracker);
    assert_eq!(
        (status, code),
        (Status::Waiting, ReasonCode::PermissionPrompt)
    );
    assert!(text.contains("touch x.txt"), "{text}");
    let session = tracker.session(&key()).unwrap();
    assert_eq!(
        session.dialog.expect("a dialog").summary,
        "Run: touch x.txt"
    );
    let fired = |tracker: &Tracker, event: &str| {
        tracker
            .evidence(&key())
            .iter()
            .any(|fact| fact.to_string().contains(&format!("{event} hook fired at")))
    };
    assert!(fired(&tracker, "PermissionRequest"));
    assert!(!fired(&tracker, "Notification"));
    // A prompt notification long after is news: it is the newest word, whatever it lacks.
    tracker.apply(notification(30_000), at(30));
    assert_eq!(state(&tracker).0, Status::Waiting);
    assert!(fired(&tracker, "Notification"));
}

/// A decision hook waits on the call (issue 37): the session's dialog is the hook's, answerable
/// with Allow once and Deny under its fingerprint, only while the session waits at the
/// permission; once the call moved on, or the hook is released, it is not offered.
#[test]
fn a_waiting_decision_hook_is_the_dialog_only_while_the_permission_waits() {
    use slate::model::{HookDecision, PendingCall};
    let waiting = HookDecision {
        fingerprint: "00112233aabbccdd".into(),
        summary: "Run: touch x.txt".into(),
        detail: vec!["touch x.txt".into()],
        call: PendingCall {
            id: "00112233aabbccdd".into(),
            name: "Bash".into(),
            input: Some("{\"command\": \"touch x.txt\"}".into()),
            cut: false,
        },
    };
    let decision = |waiting: Option<HookDecision>| Input::Decision {
        key: key(),
        waiting,
    };
    let mut tracker = at_work();
    // Before the permission hook the session works: nothing is offered.
    tracker.apply(decision(Some(waiting.clone())), at(1));
    assert!(tracker.session(&key()).unwrap().dialog.is_none());
    tracker.apply(
        hook("PermissionRequest", 1, Some("Bash"), Some("touch x.txt")),
        at(1),
    );
    let dialog = tracker.session(&key()).unwrap().dialog.expect("a dialog");
    assert!(dialog.answerable);
    assert_eq!(dialog.fingerprint, "00112233aabbccdd");
    let labels: Vec<&str> = dialog.options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(labels, ["Allow once", "Deny"]);
    // Released: the hook's dialog goes, and the observed one (never answerable) is back.
    tracker.apply(decision(None), at(2));
    let dialog = tracker.session(&key()).unwrap().dialog.expect("a dialog");
    assert!(!dialog.answerable);
    // Held again, then the call moves on (its tool ends): nothing is offered.
    tracker.apply(decision(Some(waiting.clone())), at(2));
    tracker.apply(hook("PostToolUse", 3, Some("Bash"), None), at(3));
    let session = tracker.session(&key()).unwrap();
    assert_eq!(session.status, Status::Working);
    assert!(session.dialog.is_none_or(|dialog| !dialog.answerable));
    // Still held when the turn ends (a denial at the terminal ends it): Needs you, but for the
    // turn's end, and the hook's dialog is not offered.
    tracker.apply(decision(Some(waiting)), at(4));
    tracker.apply(hook("Stop", 4, None, None), at(4));
    let session = tracker.session(&key()).unwrap();
    assert_eq!(
        (session.status, session.session_state.reason.code),
        (Status::Waiting, ReasonCode::TurnFinished)
    );
    assert!(session.dialog.is_none_or(|dialog| !dialog.answerable));
}
