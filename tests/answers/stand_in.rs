//! The stand-in agent in a real tmux pane, answered: keys reach it once and only while its screen
//! shows the dialog seen, keys without effect are sent once and reported, one dialog is answered
//! once across processes and surfaces, and only the agent's own next screen confirms an answer.

use slate::agents::keys::Action;

use std::time::{Duration, Instant};

use slate::answers::{self, ErrorCode, Surface, Target};
use slate::model::Timestamp;

use crate::util::needs;

use crate::api::{json, slate};

use super::{print_of, request, Launch, StandIn, SESSION_ID};

#[test]
#[ignore = "slow tier: needs tmux"]
fn answers_reach_the_stand_in_once_and_only_when_its_screen_shows_the_dialog_seen() {
    needs(&["tmux"]);
    let stand_in = StandIn::start("react");
    let permission = print_of("permission-touch.txt");
    let target = stand_in.target();

    // Approve: the digit alone, and the dialog leaves.
    let done = stand_in.answer(&request(Action::Approve, None, &permission));
    let responded = done.result.expect("approve is delivered");
    assert_eq!(responded.option, Some(1));
    assert_eq!(stand_in.keys(), "1");
    assert_eq!(done.summary.as_deref(), Some("Run: touch x.txt"));
    stand_in.wait_showing("working-sleep.txt");

    // The same dialog drawn again at once: it was answered a moment ago, so a second answer to
    // it (a double click, a stale notification) is refused and types nothing.
    stand_in.show("permission-touch.txt");
    let done = stand_in.answer(&request(Action::Deny, None, &permission));
    let error = done.result.expect_err("answered once");
    assert_eq!(error.code, ErrorCode::AlreadyAnswered, "{error}");
    assert_eq!(stand_in.keys(), "");
    stand_in.wait_showing("permission-touch.txt");

    // Deny, once the dialog answered is no longer fresh: Escape, and the dialog leaves.
    let later = Timestamp::from_millis(
        slate::live::system_clock().millis() + answers::ANSWERED_HOLDS.as_millis() as i64,
    );
    let done = stand_in.answer_at(&target, &request(Action::Deny, None, &permission), later);
    assert_eq!(done.result.expect("deny is delivered").option, Some(3));
    assert_eq!(stand_in.keys(), "\u{1b}");

    // A question, answered by its number.
    stand_in.show("question.txt");
    let question = print_of("question.txt");
    let done = stand_in.answer(&request(Action::Answer, Some(2), &question));
    assert_eq!(
        done.result.expect("the answer is delivered").option,
        Some(2)
    );
    assert_eq!(stand_in.keys(), "2");

    // The dialog swapped between the reading the person saw and the answer: refused, and
    // nothing typed.
    stand_in.show("permission-touch.txt");
    stand_in.show("question.txt");
    let done = stand_in.answer(&request(Action::Approve, None, &permission));
    let error = done.result.expect_err("a changed dialog is refused");
    assert_eq!(error.code, ErrorCode::DialogChanged, "{error}");
    assert!(error.message.contains("the dialog changed"), "{error}");
    assert_eq!(stand_in.keys(), "");

    // A working session: refused, nothing typed.
    stand_in.show("working-sleep.txt");
    let done = stand_in.answer(&request(Action::Approve, None, &permission));
    let error = done.result.expect_err("a working session is refused");
    assert_eq!(error.code, ErrorCode::NotAtDialog, "{error}");
    assert_eq!(stand_in.keys(), "");

    // An option that widens permissions ("don't ask again"): refused, nothing typed.
    stand_in.show("permission-touch.txt");
    let done = stand_in.answer(&request(Action::Answer, Some(2), &permission));
    let error = done.result.expect_err("a widening option is refused");
    assert_eq!(error.code, ErrorCode::NotOffered, "{error}");
    assert!(error.message.contains("widens"), "{error}");
    assert_eq!(stand_in.keys(), "");

    // A fingerprint that is not one is a bad request, before anything is read.
    let done = stand_in.answer(&request(Action::Approve, None, "not-a-print"));
    assert_eq!(done.result.unwrap_err().code, ErrorCode::BadRequest);
    // So is an option with approve.
    let done = stand_in.answer(&request(Action::Approve, Some(1), &permission));
    assert_eq!(done.result.unwrap_err().code, ErrorCode::BadRequest);
    assert_eq!(stand_in.keys(), "");

    // A process in a plain terminal: Slate cannot type there, and says what would make it
    // possible.
    let mut plain = std::process::Command::new("env")
        .args(["-i", "PATH=/usr/bin:/bin", "sleep", "30"])
        .spawn()
        .unwrap();
    let done = stand_in.answer_at(
        &Target {
            pid: Some(plain.id()),
            ..stand_in.target()
        },
        &request(Action::Approve, None, &permission),
        slate::live::system_clock(),
    );
    let _ = plain.kill();
    let _ = plain.wait();
    let error = done.result.expect_err("a plain terminal is refused");
    assert_eq!(error.code, ErrorCode::CannotType, "{error}");
    assert!(error.message.contains("start it in tmux"), "{error}");
    // The dialog is still there, untouched.
    stand_in.wait_showing("permission-touch.txt");
    assert_eq!(stand_in.keys(), "");
    drop(stand_in.temp);
}

#[test]
#[ignore = "slow tier: needs tmux"]
fn keys_without_effect_are_sent_once_and_reported() {
    needs(&["tmux"]);
    let stand_in = StandIn::start("ignore");
    let permission = print_of("permission-touch.txt");
    let started = Instant::now();
    let done = stand_in.answer(&request(Action::Approve, None, &permission));
    let error = done.result.clone().expect_err("the dialog stayed");
    assert_eq!(error.code, ErrorCode::NoEffect, "{error}");
    assert!(started.elapsed() >= answers::CONFIRM_WITHIN);
    // One send, never a retry.
    assert_eq!(stand_in.keys(), "1");
    let record = done.record(
        &request(Action::Approve, None, &permission),
        slate::live::system_clock(),
    );
    assert_eq!(record.outcome, "no_effect");
    assert_eq!(record.surface, Surface::Cli);
    assert_eq!(record.fingerprint, permission);
}

#[test]
#[ignore = "slow tier: needs tmux"]
fn one_dialog_is_answered_once_across_processes_and_surfaces() {
    needs(&["tmux"]);
    // A stand-in that ignores keys keeps its dialog: the first answer holds the session's lock
    // for its whole confirmation.
    let stand_in = StandIn::start("ignore");
    let permission = print_of("permission-touch.txt");
    let approve = request(Action::Approve, None, &permission);
    let (first, second) = std::thread::scope(|scope| {
        let first = scope.spawn(|| stand_in.answer(&approve));
        std::thread::sleep(Duration::from_millis(500));
        let second = scope.spawn(|| stand_in.answer(&approve));
        (first.join().unwrap(), second.join().unwrap())
    });
    // Whichever took the session's lock first typed and waited its five seconds for the dialog
    // to leave; the other was refused while it did.
    let mut codes = [&first, &second].map(|done| done.result.as_ref().map_err(|e| e.code));
    codes.sort_by_key(|code| format!("{code:?}"));
    assert_eq!(
        codes,
        [Err(ErrorCode::AlreadyAnswered), Err(ErrorCode::NoEffect)],
        "{first:?} {second:?}"
    );
    let refused = [first, second]
        .into_iter()
        .find_map(|done| {
            done.result
                .err()
                .filter(|e| e.code == ErrorCode::AlreadyAnswered)
        })
        .unwrap();
    assert!(refused.message.contains("being carried out"), "{refused}");
    // Once done, the same fingerprint is still refused, in this process and in another one (the
    // command line, which takes the same lock beside the store of the same HOME).
    let done = stand_in.answer(&approve);
    let error = done.result.expect_err("answered once already");
    assert_eq!(error.code, ErrorCode::AlreadyAnswered, "{error}");
    let cli = slate(
        &stand_in.home,
        &["approve", &SESSION_ID[..8], "--yes", "--json"],
    )
    .env("SLATE_STANDALONE", "1")
    .stdin(std::process::Stdio::null())
    .output()
    .unwrap();
    assert_eq!(cli.status.code(), Some(9), "{cli:?}");
    let body = json(&String::from_utf8_lossy(&cli.stdout));
    assert_eq!(body["error"]["code"], "already_answered");
    // One `1`, whatever was asked.
    assert_eq!(stand_in.keys(), "1");
}

#[test]
#[ignore = "slow tier: needs tmux"]
fn only_the_agents_own_next_screen_confirms_an_answer() {
    needs(&["tmux"]);
    // A screen that flips between the dialog answered and another one every 40 ms: no answer is
    // ever reported delivered, whichever dialog it saw last.
    let stand_in = StandIn::start_with("flip", Launch::Direct, "question.txt");
    let permission = print_of("permission-touch.txt");
    let start = slate::live::system_clock().millis();
    let mut outcomes = Vec::new();
    for round in 0..12 {
        // Each round a minute apart: the hold on an answered dialog does not decide here.
        let now = Timestamp::from_millis(start + round * 60_000);
        let done = stand_in.answer_at(
            &stand_in.target(),
            &request(Action::Approve, None, &permission),
            now,
        );
        outcomes.push(done.result.map(|_| ()).map_err(|error| error.code));
    }
    assert!(
        outcomes
            .iter()
            .all(|outcome| *outcome == Err(ErrorCode::DialogChanged)),
        "{outcomes:?}"
    );
    drop(stand_in);

    // Another program echoing the keys is no effect: the agent drew nothing of its own.
    let stand_in = StandIn::start("echo");
    let done = stand_in.answer(&request(Action::Approve, None, &permission));
    let error = done.result.expect_err("an echo is not the agent's screen");
    assert_eq!(error.code, ErrorCode::NoEffect, "{error}");
    assert!(error.message.contains("does not draw"), "{error}");
    assert_eq!(stand_in.keys(), "1");
}
