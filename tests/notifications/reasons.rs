//! Notifying by reason (`[notifications] reasons`): only the kept reasons interrupt the person,
//! the count moves as ever, a session held back is told once it comes to a kept reason, and a
//! finished turn close after the same session's previous one is told too.

use slate::config::Config;
use slate::model::{Session, Status};
use slate::policy::notifications::{Notifier, NotifyReason};
use slate::policy::{needs_you, needs_you_count};

use super::{run, update};
use crate::util::{wire_session, working};

fn finished(project: &str, id: &str) -> Session {
    wire_session(
        project,
        id,
        Status::Waiting,
        "turn_finished",
        "The turn finished",
    )
}

fn asks(project: &str, id: &str) -> Session {
    crate::util::waiting(project, id)
}

fn titles(
    shown: &[(
        slate::model::Timestamp,
        slate::policy::notifications::NotificationPlan,
    )],
) -> Vec<String> {
    shown.iter().map(|(_, plan)| plan.title.clone()).collect()
}

#[test]
fn a_config_that_keeps_only_dialogs_sends_nothing_for_a_finished_turn_and_the_count_still_moves() {
    let config =
        Config::parse("[notifications]\nreasons = [\"permission\", \"question\"]\n").unwrap();
    let mut notifier = Notifier::seed(&[working("acme-api", "s1"), working("web", "s2")]);
    notifier.keep(&config.notifications.reasons);
    let before = [working("acme-api", "s1"), working("web", "s2")];
    let after = [finished("acme-api", "s1"), asks("web", "s2")];
    let shown = run(
        &mut notifier,
        vec![
            (0.0, Some(update(after[0].clone()))),
            (5.0, None),
            (10.0, Some(update(after[1].clone()))),
            (15.0, None),
        ],
        false,
    );
    assert_eq!(titles(&shown), ["web · Claude Code needs you"]);
    // The tray's count and the window read the sessions, not the notifier: both count.
    assert_eq!(needs_you_count(&before), 0);
    assert_eq!(needs_you_count(&after), 2);
    assert!(needs_you(&after[0]));
}

#[test]
fn by_default_every_reason_notifies() {
    assert_eq!(Config::default().notifications.reasons, NotifyReason::ALL);
    let mut notifier = Notifier::seed(&[working("acme-api", "s1")]);
    let shown = run(
        &mut notifier,
        vec![(0.0, Some(update(finished("acme-api", "s1")))), (5.0, None)],
        false,
    );
    assert_eq!(titles(&shown), ["acme-api · Claude Code needs you"]);
}

#[test]
fn a_session_held_back_is_told_when_it_comes_to_a_kept_reason_while_still_needing_you() {
    let mut notifier = Notifier::seed(&[working("acme-api", "s1")]);
    notifier.keep(&[NotifyReason::Permission]);
    let quiet = wire_session(
        "acme-api",
        "s1",
        Status::Waiting,
        "title_stopped",
        "The title stopped",
    );
    let shown = run(
        &mut notifier,
        vec![
            (0.0, Some(update(quiet))),
            (5.0, None),
            (6.0, Some(update(asks("acme-api", "s1")))),
            (10.0, None),
            // Still the same dialog: told once.
            (11.0, Some(update(asks("acme-api", "s1")))),
            (15.0, None),
        ],
        false,
    );
    assert_eq!(titles(&shown), ["acme-api · Claude Code needs you"]);
    assert!(
        shown[0].1.body.starts_with("Asks permission"),
        "{}",
        shown[0].1.body
    );
}

#[test]
fn a_change_that_turns_to_a_reason_not_kept_inside_the_window_is_not_told() {
    let mut notifier = Notifier::seed(&[working("acme-api", "s1")]);
    notifier.keep(&[NotifyReason::Permission, NotifyReason::Question]);
    let shown = run(
        &mut notifier,
        vec![
            (0.0, Some(update(asks("acme-api", "s1")))),
            (0.5, Some(update(finished("acme-api", "s1")))),
            (5.0, None),
        ],
        false,
    );
    assert!(shown.is_empty(), "{:?}", titles(&shown));
}

#[test]
fn a_finished_turn_soon_after_the_last_is_told_too() {
    // A person who answers at once and whose next turn ends 6 s later may have stepped away:
    // nothing tells that turn from one a background task's end started, so neither is swallowed
    // (folding the background-driven ones waits for each CLI's own sign of them).
    let mut notifier = Notifier::seed(&[working("acme-api", "s1"), working("web", "s2")]);
    let shown = run(
        &mut notifier,
        vec![
            (0.0, Some(update(finished("acme-api", "s1")))),
            (3.0, Some(update(working("acme-api", "s1")))),
            (6.0, Some(update(finished("acme-api", "s1")))),
            (10.0, Some(update(working("acme-api", "s1")))),
            (12.0, Some(update(finished("web", "s2")))),
            (15.0, Some(update(asks("acme-api", "s1")))),
            (20.0, None),
        ],
        false,
    );
    assert_eq!(
        titles(&shown),
        [
            "acme-api · Claude Code needs you",
            "acme-api · Claude Code needs you",
            "web · Claude Code needs you",
            "acme-api · Claude Code needs you",
        ]
    );
}

#[test]
fn an_unknown_reason_name_is_refused_with_the_names_slate_knows() {
    let err = Config::parse("[notifications]\nreasons = [\"permission\", \"finish\"]\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("key `reasons`"), "{err}");
    assert!(
        err.contains(
            "\"finish\" is not a notification reason; one of: permission, question, plan, \
             finished, interrupted, quiet"
        ),
        "{err}"
    );
    // A name written twice counts once, and the list reads back as written.
    let config =
        Config::parse("[notifications]\nreasons = [\"plan\", \"plan\", \"quiet\"]\n").unwrap();
    assert_eq!(
        config.notifications.reasons,
        [NotifyReason::Plan, NotifyReason::Quiet]
    );
    let text = toml::to_string(&config).unwrap();
    assert_eq!(Config::parse(&text).unwrap(), config);
}

#[test]
fn every_needs_you_reason_is_in_a_group() {
    use slate::model::ReasonCode;
    let needs_you = [
        ReasonCode::TurnFinished,
        ReasonCode::PermissionPrompt,
        ReasonCode::Question,
        ReasonCode::PlanApproval,
        ReasonCode::Dialog,
        ReasonCode::Interrupted,
        ReasonCode::QuietCall,
        ReasonCode::TitleStopped,
        ReasonCode::TerminalSilent,
        ReasonCode::TurnFailed,
        ReasonCode::NewSession,
        ReasonCode::Unknown,
    ];
    for code in needs_you {
        assert!(NotifyReason::of(code).is_some(), "{code:?}");
    }
    assert_eq!(NotifyReason::of(ReasonCode::ToolRunning), None);
}
