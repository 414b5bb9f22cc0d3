//! The notification policy (`policy::notifications::decide`) over scripted updates with a fake
//! clock: one per flip, none at start-up or while paused, bursts summarised.

use std::time::Duration;

use slate::live::Update;
use slate::model::{AgentKind, SessionKey, Timestamp};
use slate::policy::notifications::{decide, Click, Input, NotificationPlan, Notifier, BURST};

use crate::util::{waiting, working};

mod reasons; // notifying by reason: only the kept ones, the count unchanged, finished turns folded

pub(super) fn at(seconds: f64) -> Timestamp {
    Timestamp::parse_rfc3339("2026-11-29T12:00:00Z")
        .unwrap()
        .plus(Duration::from_millis((seconds * 1000.0) as u64))
}

pub(super) fn update(session: slate::model::Session) -> Update {
    Update::Session {
        session: Box::new(session),
    }
}

/// Feeds `steps` (time, update or tick) and collects every plan with the time it came out,
/// ticking at each deadline the notifier asks for before the next step.
pub(super) fn run(
    notifier: &mut Notifier,
    steps: Vec<(f64, Option<Update>)>,
    paused: bool,
) -> Vec<(Timestamp, NotificationPlan)> {
    let mut shown = Vec::new();
    let mut deadline: Option<Timestamp> = None;
    for (seconds, step) in steps {
        let now = at(seconds);
        while let Some(due) = deadline.filter(|due| *due <= now) {
            let decision = decide(notifier, Input::Tick, due, paused);
            shown.extend(decision.plans.into_iter().map(|plan| (due, plan)));
            deadline = decision.next_deadline;
        }
        let decision = match &step {
            Some(update) => decide(notifier, update.as_notification(), now, paused),
            None => decide(notifier, Input::Tick, now, paused),
        };
        shown.extend(decision.plans.into_iter().map(|plan| (now, plan)));
        deadline = decision.next_deadline;
    }
    if let Some(due) = deadline {
        let decision = decide(notifier, Input::Tick, due, paused);
        shown.extend(decision.plans.into_iter().map(|plan| (due, plan)));
    }
    shown
}

#[test]
fn one_flip_gives_one_notification_naming_project_agent_reason_and_title() {
    let mut notifier = Notifier::seed(&[working("acme-api", "s1")]);
    let first = decide(
        &mut notifier,
        Input::Changed(&waiting("acme-api", "s1")),
        at(0.0),
        false,
    );
    assert!(first.plans.is_empty(), "held for the burst window");
    assert_eq!(first.next_deadline, Some(at(0.0).plus(BURST)));
    let early = decide(&mut notifier, Input::Tick, at(1.0), false);
    assert!(early.plans.is_empty());
    let due = decide(&mut notifier, Input::Tick, at(2.0), false);
    assert_eq!(
        due.plans,
        vec![NotificationPlan {
            title: "acme-api · Claude Code needs you".to_string(),
            body: "Asks permission for Bash: cargo test\nacme-api work".to_string(),
            click: Click::Focus(SessionKey::new(AgentKind::CLAUDE_CODE, "s1")),
            offer: None,
            sessions: vec![waiting("acme-api", "s1")],
        }]
    );
    assert_eq!(due.next_deadline, None);
    // The same status again is not a change.
    let shown = run(
        &mut notifier,
        vec![(3.0, Some(update(waiting("acme-api", "s1"))))],
        false,
    );
    assert!(shown.is_empty(), "{shown:#?}");
}

#[test]
fn sessions_already_waiting_at_start_up_are_not_news() {
    let mut notifier = Notifier::seed(&[waiting("acme-api", "s1"), waiting("web", "s2")]);
    let shown = run(
        &mut notifier,
        vec![
            (0.0, Some(update(waiting("acme-api", "s1")))),
            (0.5, Some(update(waiting("web", "s2")))),
            (5.0, None),
        ],
        false,
    );
    assert!(shown.is_empty(), "{shown:#?}");
}

#[test]
fn a_new_session_that_appears_waiting_is_not_a_flip() {
    let mut notifier = Notifier::seed(&[]);
    let shown = run(
        &mut notifier,
        vec![(0.0, Some(update(waiting("acme-api", "s1"))))],
        false,
    );
    assert!(shown.is_empty(), "{shown:#?}");
}

#[test]
fn a_burst_within_two_seconds_becomes_one_summary() {
    let mut notifier =
        Notifier::seed(&[working("a", "s1"), working("b", "s2"), working("c", "s3")]);
    let shown = run(
        &mut notifier,
        vec![
            (0.0, Some(update(waiting("a", "s1")))),
            (0.7, Some(update(waiting("b", "s2")))),
            (1.9, Some(update(waiting("c", "s3")))),
        ],
        false,
    );
    assert_eq!(shown.len(), 1, "{shown:#?}");
    let (when, plan) = &shown[0];
    assert_eq!(*when, at(2.0));
    assert_eq!(plan.title, "3 sessions need you");
    assert_eq!(plan.click, Click::OpenWindow);
    assert_eq!(plan.body.lines().count(), 3);
    assert!(
        plan.body.starts_with("a · Claude Code — Asks permission"),
        "{}",
        plan.body
    );
}

#[test]
fn flips_further_apart_are_told_one_by_one() {
    let mut notifier = Notifier::seed(&[working("a", "s1"), working("b", "s2")]);
    let shown = run(
        &mut notifier,
        vec![
            (0.0, Some(update(waiting("a", "s1")))),
            (3.0, Some(update(waiting("b", "s2")))),
        ],
        false,
    );
    let titles: Vec<&str> = shown.iter().map(|(_, plan)| plan.title.as_str()).collect();
    assert_eq!(
        titles,
        ["a · Claude Code needs you", "b · Claude Code needs you"]
    );
}

#[test]
fn the_same_session_flipping_again_later_is_told_again() {
    let mut notifier = Notifier::seed(&[working("a", "s1")]);
    let shown = run(
        &mut notifier,
        vec![
            (0.0, Some(update(waiting("a", "s1")))),
            (10.0, Some(update(working("a", "s1")))),
            (20.0, Some(update(waiting("a", "s1")))),
        ],
        false,
    );
    assert_eq!(shown.len(), 2, "{shown:#?}");
}

#[test]
fn nothing_is_shown_while_paused_nor_after_resuming() {
    let mut notifier = Notifier::seed(&[working("a", "s1")]);
    let shown = run(
        &mut notifier,
        vec![(0.0, Some(update(waiting("a", "s1")))), (5.0, None)],
        true,
    );
    assert!(shown.is_empty(), "{shown:#?}");
    // Resumed: the flip that happened while paused stays untold.
    let shown = run(&mut notifier, vec![(6.0, None)], false);
    assert!(shown.is_empty(), "{shown:#?}");
}

#[test]
fn a_pause_that_starts_inside_the_window_drops_the_pending_notification() {
    let mut notifier = Notifier::seed(&[working("a", "s1")]);
    decide(
        &mut notifier,
        Input::Changed(&waiting("a", "s1")),
        at(0.0),
        false,
    );
    let due = decide(&mut notifier, Input::Tick, at(2.0), true);
    assert!(due.plans.is_empty());
    assert_eq!(due.next_deadline, None);
}

#[test]
fn a_session_that_stops_waiting_before_the_window_closes_is_not_told() {
    let mut notifier = Notifier::seed(&[working("a", "s1"), working("b", "s2")]);
    let shown = run(
        &mut notifier,
        vec![
            (0.0, Some(update(waiting("a", "s1")))),
            (0.5, Some(update(waiting("b", "s2")))),
            (1.0, Some(update(working("a", "s1")))),
        ],
        false,
    );
    let titles: Vec<&str> = shown.iter().map(|(_, plan)| plan.title.as_str()).collect();
    assert_eq!(titles, ["b · Claude Code needs you"]);
}

#[test]
fn a_removed_session_is_forgotten() {
    let mut notifier = Notifier::seed(&[working("a", "s1")]);
    let shown = run(
        &mut notifier,
        vec![
            (0.0, Some(update(waiting("a", "s1")))),
            (
                0.5,
                Some(Update::Removed {
                    agent: AgentKind::CLAUDE_CODE,
                    id: "s1".to_string(),
                    machine: None,
                }),
            ),
            // Back with no known previous status: not a flip.
            (1.0, Some(update(waiting("a", "s1")))),
        ],
        false,
    );
    assert!(shown.is_empty(), "{shown:#?}");
}

#[test]
fn a_parked_session_and_one_awaiting_another_actor_stay_quiet() {
    use slate::model::{Actor, Awaiting, Intent, IntentState};
    let mut parked = waiting("acme-api", "s1");
    parked.session_state.intent = Intent {
        state: IntentState::Parked,
        reason: Some("lunch".to_string()),
        awaiting_who: None,
    };
    let mut awaiting = waiting("web", "s2");
    awaiting.session_state.intent = Intent {
        state: IntentState::Awaiting,
        reason: Some("the deploy".to_string()),
        awaiting_who: Some(Awaiting::CiOrDeploy),
    };
    awaiting.session_state.next_actor.actor = Actor::CiOrDeploy;
    let mut notifier = Notifier::seed(&[working("acme-api", "s1"), working("web", "s2")]);
    let shown = run(
        &mut notifier,
        vec![
            (0.0, Some(update(parked))),
            (0.5, Some(update(awaiting))),
            (5.0, None),
        ],
        false,
    );
    assert!(shown.is_empty(), "{shown:#?}");
}

/// A muted session (`slate mute`, or its agent muted in the config) never notifies, while the
/// others do; it still counts as needing you.
#[test]
fn a_muted_session_stays_quiet_and_still_counts() {
    let mut muted = waiting("acme-api", "s1");
    muted.muted = true;
    assert!(
        slate::policy::needs_you(&muted),
        "a muted session still needs you"
    );
    let mut notifier = Notifier::seed(&[working("acme-api", "s1"), working("web", "s2")]);
    let shown = run(
        &mut notifier,
        vec![
            (0.0, Some(update(muted))),
            (0.5, Some(update(waiting("web", "s2")))),
            (5.0, None),
        ],
        false,
    );
    let titles: Vec<&str> = shown.iter().map(|(_, plan)| plan.title.as_str()).collect();
    assert_eq!(titles, ["web · Claude Code needs you"]);
}

#[test]
fn a_hosted_session_says_so_in_its_notification_and_in_a_summary() {
    let hosted = |project: &str, id: &str| {
        let mut session = waiting(project, id);
        session.hosted = true;
        session
    };
    let mut notifier = Notifier::seed(&[working("acme-api", "s1")]);
    let shown = run(
        &mut notifier,
        vec![(0.0, Some(update(hosted("acme-api", "s1"))))],
        false,
    );
    let plans: Vec<&NotificationPlan> = shown.iter().map(|(_, plan)| plan).collect();
    assert_eq!(
        plans,
        [&NotificationPlan {
            title: "acme-api · Claude Code (hosted) needs you".to_string(),
            body: "Asks permission for Bash: cargo test\nacme-api work".to_string(),
            click: Click::Focus(SessionKey::new(AgentKind::CLAUDE_CODE, "s1")),
            offer: None,
            sessions: vec![hosted("acme-api", "s1")],
        }]
    );
    let mut notifier = Notifier::seed(&[working("a", "s1"), working("b", "s2")]);
    let shown = run(
        &mut notifier,
        vec![
            (0.0, Some(update(hosted("a", "s1")))),
            (0.5, Some(update(waiting("b", "s2")))),
        ],
        false,
    );
    assert_eq!(shown.len(), 1, "{shown:#?}");
    assert_eq!(
        shown[0].1.body,
        "a · Claude Code (hosted) — Asks permission for Bash: cargo test\n\
         b · Claude Code — Asks permission for Bash: cargo test"
    );
}

#[test]
fn a_permission_dialog_slate_can_answer_makes_an_offer_and_nothing_else_does() {
    use crate::menu::permission_dialog;
    use slate::policy::notifications::Offer;
    let mut at_dialog = waiting("acme-api", "s1");
    at_dialog.dialog = Some(permission_dialog("9f86d081884c7d65"));
    let mut notifier = Notifier::seed(&[working("acme-api", "s1")]);
    let shown = run(
        &mut notifier,
        vec![(0.0, Some(update(at_dialog.clone())))],
        false,
    );
    let plans: Vec<&NotificationPlan> = shown.iter().map(|(_, plan)| plan).collect();
    assert_eq!(plans.len(), 1);
    assert_eq!(
        plans[0].offer,
        Some(Offer {
            key: SessionKey::new(AgentKind::CLAUDE_CODE, "s1"),
            fingerprint: "9f86d081884c7d65".to_string(),
            label: "acme-api · Claude Code".to_string(),
            allow: true,
        })
    );
    // No offer without a dialog, for a dialog Slate cannot type into, for one that offers no
    // deny, or for another kind of dialog.
    assert_eq!(Offer::of(&waiting("acme-api", "s1")), None);
    let mut plain = at_dialog.clone();
    plain.dialog.as_mut().unwrap().answerable = false;
    assert_eq!(Offer::of(&plain), None);
    let mut no_deny = at_dialog.clone();
    no_deny.dialog.as_mut().unwrap().options.pop();
    assert_eq!(Offer::of(&no_deny), None);
    let mut question = at_dialog.clone();
    question.dialog.as_mut().unwrap().kind = slate::agents::screens::DialogKind::Question;
    assert_eq!(Offer::of(&question), None);
    // On another machine, the dialog decides as it does here (issue 21): the offer names the
    // machine in its key and its label, so its answer is forwarded there.
    let machine = slate::model::Machine::new("box").unwrap();
    let mut remote = at_dialog.clone();
    remote.machine = Some(machine.clone());
    assert_eq!(
        Offer::of(&remote),
        Some(Offer {
            key: SessionKey::new(AgentKind::CLAUDE_CODE, "s1").on(Some(machine.clone())),
            fingerprint: "9f86d081884c7d65".to_string(),
            label: "box · acme-api · Claude Code".to_string(),
            allow: true,
        })
    );
    // A remote dialog its machine says it cannot answer, or one whose link is down (the view
    // marks it not answerable), makes none.
    let mut remote_plain = remote.clone();
    remote_plain.dialog.as_mut().unwrap().answerable = false;
    assert_eq!(Offer::of(&remote_plain), None);
}

#[test]
fn a_remote_flip_at_a_dialog_is_notified_with_an_offer_for_that_machine() {
    use crate::menu::permission_dialog;
    use slate::model::Machine;
    use slate::policy::notifications::Offer;
    let machine = Machine::new("box").unwrap();
    let on_box = |mut session: slate::model::Session| {
        session.machine = Some(machine.clone());
        session
    };
    let mut at_dialog = on_box(waiting("api", "s1"));
    at_dialog.dialog = Some(permission_dialog("9f86d081884c7d65"));
    // The same id on this machine is another session: it stays working and untold.
    let mut notifier = Notifier::seed(&[on_box(working("api", "s1")), working("api", "s1")]);
    let shown = run(&mut notifier, vec![(0.0, Some(update(at_dialog)))], false);
    assert_eq!(shown.len(), 1, "{shown:#?}");
    let plan = &shown[0].1;
    let key = SessionKey::new(AgentKind::CLAUDE_CODE, "s1").on(Some(machine));
    assert_eq!(plan.title, "box · api · Claude Code needs you");
    assert_eq!(plan.click, Click::Focus(key.clone()));
    let offer = plan.offer.as_ref().expect("an offer");
    assert_eq!(offer.key, key);
    assert!(offer.allow);
    assert_eq!(Offer::of(&waiting("api", "s1")), None);
}

#[test]
fn a_notification_action_answers_only_what_the_notification_offered() {
    use slate::agents::keys::Action;
    use slate::model::Machine;
    use slate::policy::notifications::{Choice, Offer, ALLOW, DENY, MUTE, OPEN, TAP};
    let key = SessionKey::new(AgentKind::CLAUDE_CODE, "s1").on(Some(Machine::new("box").unwrap()));
    let offer = Offer {
        key: key.clone(),
        fingerprint: "9f86d081884c7d65".to_string(),
        label: "box · api · Claude Code".to_string(),
        allow: true,
    };
    let deny_only = Offer {
        allow: false,
        ..offer.clone()
    };
    let click = Click::Focus(key.clone());
    let answer = |offer: &Offer, action| Choice::Answer {
        offer: offer.clone(),
        action,
    };
    let cases = [
        (ALLOW, Some(&offer), answer(&offer, Action::Approve)),
        (DENY, Some(&offer), answer(&offer, Action::Deny)),
        (DENY, Some(&deny_only), answer(&deny_only, Action::Deny)),
        // "Allow once" where the notification did not offer it (it could not show the whole
        // command), or on a notification that offered nothing: nothing, and no focus either.
        (ALLOW, Some(&deny_only), Choice::Nothing),
        (ALLOW, None, Choice::Nothing),
        (DENY, None, Choice::Nothing),
        // A click on the notification and "Open" focus the session, on its machine.
        (TAP, Some(&offer), Choice::Click(click.clone())),
        (OPEN, Some(&offer), Choice::Click(click.clone())),
        (TAP, None, Choice::Click(click.clone())),
    ];
    for (action_id, offer, chosen) in cases {
        assert_eq!(
            Choice::of(action_id, Some(&click), offer),
            chosen,
            "{action_id}"
        );
    }
    // A summary opens the window.
    assert_eq!(
        Choice::of(TAP, Some(&Click::OpenWindow), None),
        Choice::Click(Click::OpenWindow)
    );
    // "Mute" mutes the one session of this machine a notification is about; on a session of
    // another machine (muted there), a summary or an unknown notification it does nothing.
    let here = SessionKey::new(AgentKind::CLAUDE_CODE, "s2");
    assert_eq!(
        Choice::of(MUTE, Some(&Click::Focus(here.clone())), None),
        Choice::Mute(here)
    );
    assert_eq!(
        Choice::of(MUTE, Some(&click), Some(&offer)),
        Choice::Nothing
    );
    assert_eq!(
        Choice::of(MUTE, Some(&Click::OpenWindow), None),
        Choice::Nothing
    );
    assert_eq!(Choice::of(MUTE, None, None), Choice::Nothing);
    for odd in ["Mute", "mute ", "mute\0", "unmute", "mute:claude-code:2:s2"] {
        let here = SessionKey::new(AgentKind::CLAUDE_CODE, "s2");
        assert_eq!(
            Choice::of(odd, Some(&Click::Focus(here)), None),
            Choice::Nothing,
            "{odd:?}"
        );
    }
    // A notification number Slate does not know: nothing, whatever the action.
    for action_id in [ALLOW, DENY, OPEN, TAP] {
        assert_eq!(
            Choice::of(action_id, None, None),
            Choice::Nothing,
            "{action_id}"
        );
    }
    // Malformed, truncated, huge and hostile action ids: nothing, even with an offer.
    let huge = "allow".repeat(1_000_000);
    let hostile = [
        "",
        "a",
        "allo",
        "allow ",
        " allow",
        "Allow",
        "ALLOW",
        "allow\0",
        "allow\n",
        "allow\u{200b}",
        "\u{ff41}llow",
        "de",
        "deny;allow",
        "deny allow",
        "default",
        "approve",
        "Allow once",
        "allow:box:s1",
        "answer@box:approve::9f86d081884c7d65:claude-code:2:s1",
        huge.as_str(),
    ];
    for action_id in hostile {
        assert_eq!(
            Choice::of(action_id, Some(&click), Some(&offer)),
            Choice::Nothing,
            "{:?}",
            action_id.chars().take(40).collect::<String>()
        );
    }
}

/// A session of `agent` waiting at the dialog the screen `folder/file` under `fixtures/screens/`
/// shows, as the live list carries it.
pub fn at_screen(agent: AgentKind, folder: &str, file: &str) -> slate::model::Session {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/screens")
        .join(folder)
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let screen = slate::agents::screens::read_screen(agent, &text);
    let dialog = screen
        .dialog()
        .unwrap_or_else(|| panic!("{}: no dialog", path.display()));
    let mut session = waiting("acme-api", file);
    session.agent = agent;
    session.dialog = Some(slate::model::SessionDialog::of(agent, dialog, None, None));
    session
}

/// The recorded harmless dialogs, the recorded ones whose command has more lines, wraps or runs
/// long, and the derived ones whose command pipes to `sh` on its second line or is cut short.
pub const SCREENS: &[(&str, &str)] = &[
    ("claude-code", "claude-code/2.1.332"),
    ("codex", "codex/0.171.0"),
    ("gemini-cli", "gemini-cli/0.61.0"),
];
pub const LONGER: &[&str] = &[
    "permission-curl.txt",
    "permission-heredoc.txt",
    "permission-chain.txt",
    "permission-chain-80x24.txt",
    "permission-long.txt",
    "permission-cut.txt",
];

/// The files of [`LONGER`] that are under `fixtures/screens/<folder>/`: not every agent's
/// recordings have every one.
pub fn longer_in(folder: &str) -> impl Iterator<Item = &'static str> + '_ {
    LONGER.iter().copied().filter(move |file| {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/screens")
            .join(folder)
            .join(file)
            .exists()
    })
}

#[test]
fn a_notification_offers_allow_once_only_for_a_command_it_shows_whole() {
    // See: issue 20, item 1. A notification shows the dialog's one-line summary: for a command of
    // several lines, one cut short, or one longer than it shows, it offers Deny and Open only.
    use slate::policy::notifications::Offer;
    let mut checked = 0;
    for (agent, folder) in SCREENS {
        let agent = AgentKind::parse(agent).unwrap();
        let harmless = Offer::of(&at_screen(agent, folder, "permission-touch.txt"))
            .unwrap_or_else(|| panic!("{folder}: no offer"));
        assert!(
            harmless.allow,
            "{folder}: the harmless dialog offers Allow once"
        );
        for file in longer_in(folder) {
            let session = at_screen(agent, folder, file);
            let offer = Offer::of(&session).unwrap_or_else(|| panic!("{folder}/{file}: no offer"));
            assert!(!offer.allow, "{folder}/{file}: Allow once offered");
            assert_ne!(offer.fingerprint, harmless.fingerprint, "{folder}/{file}");
            // The body names the dialog, and says that there is more than it shows.
            let mut before = working("acme-api", file);
            before.agent = agent;
            let mut notifier = Notifier::seed(&[before]);
            let shown = run(
                &mut notifier,
                vec![(0.0, Some(update(session.clone())))],
                false,
            );
            assert_eq!(shown.len(), 1, "{folder}/{file}");
            let dialog = session.dialog.as_ref().unwrap();
            assert!(
                shown[0].1.body.contains(&dialog.summary),
                "{folder}/{file}: {:?}",
                shown[0].1.body
            );
            assert!(dialog.summary.contains('…'), "{}", dialog.summary);
            assert_eq!(shown[0].1.offer.as_ref(), Some(&offer));
            checked += 1;
        }
    }
    assert!(checked >= 14, "only {checked} derived dialogs checked");
}

#[test]
fn a_body_for_a_server_that_reads_markup_shows_hostile_text_as_written() {
    // See: issue 20, item 13.
    use slate::policy::notifications::escape_markup;
    for (hostile, escaped) in [
        (
            r#"<a href="https://evil.example/">Allow</a>"#,
            "&lt;a href=&quot;https://evil.example/&quot;&gt;Allow&lt;/a&gt;",
        ),
        (
            "<img src=file:///etc/passwd>",
            "&lt;img src=file:///etc/passwd&gt;",
        ),
        ("touch a && rm -rf ~", "touch a &amp;&amp; rm -rf ~"),
        ("&amp; &#60; &lt;", "&amp;amp; &amp;#60; &amp;lt;"),
        ("<b unterminated", "&lt;b unterminated"),
        ("it's \"quoted\"", "it&#39;s &quot;quoted&quot;"),
        (
            "plain text\nsecond line · ünïcödé",
            "plain text\nsecond line · ünïcödé",
        ),
    ] {
        let got = escape_markup(hostile);
        assert_eq!(got, escaped, "{hostile:?}");
        // No tag can open, and every `&` starts an entity the escaping made.
        assert!(!got.contains(['<', '>', '"', '\'']), "{got}");
        for (at, _) in got.match_indices('&') {
            let rest = &got[at..];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"]
                    .iter()
                    .any(|entity| rest.starts_with(entity)),
                "{got}"
            );
        }
    }
    // A huge body is escaped whole, in one pass.
    let huge = "<&>".repeat(100_000);
    assert_eq!(escape_markup(&huge).len(), "&lt;&amp;&gt;".len() * 100_000);
}

#[test]
fn a_notification_shows_no_control_or_invisible_character_of_the_texts_it_quotes() {
    // A folder, a title and a reason from outside, with a right-to-left override, a tag
    // character, a line separator and an escape: each is a space in the title and the body, and
    // the body's own line breaks stay.
    let mut hostile = waiting("acme\u{202e}gpj.exe", "s1");
    hostile.title = Some("fix\u{e0041}\u{e0042} the\u{2028}tests\u{1b}[31m".to_string());
    hostile.session_state.reason.text = "Asks permission\u{2066} for Bash".to_string();
    let mut notifier = Notifier::seed(&[working("acme\u{202e}gpj.exe", "s1")]);
    let shown = run(
        &mut notifier,
        vec![(0.0, Some(update(hostile))), (3.0, None)],
        false,
    );
    let [(_, plan)] = shown.as_slice() else {
        panic!("{shown:#?}")
    };
    for text in [&plan.title, &plan.body] {
        assert!(
            !text
                .chars()
                .any(|c| slate::limits::is_invisible(c) || (c.is_control() && c != '\n')),
            "{text:?}"
        );
    }
    assert_eq!(plan.title, "acme gpj.exe · Claude Code needs you");
    assert_eq!(plan.body, "Asks permission  for Bash\nfix   the tests [31m");
}
