//! The live loop's schedule from data: made-up instants in, due tasks and the next wake out. No
//! test here sleeps or waits.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use slate_core::schedule::{rewalk_interval, Schedule, Task, Timer, Timing};

fn secs(seconds: f64) -> Duration {
    Duration::from_secs_f64(seconds)
}

/// A schedule started at `t0` after a quick first walk, with the default timing (scan every
/// 15 s, walk every 60 s, hints coalesced for 150 ms, hosted rescans 2 s after a scan).
fn started(t0: Instant) -> Schedule {
    Schedule::new(Timing::default(), t0, Duration::from_millis(5))
}

#[test]
fn an_idle_loop_wakes_only_for_the_periodic_scans() {
    let t0 = Instant::now();
    let mut schedule = started(t0);
    assert_eq!(schedule.next_wake(), Some(t0 + secs(15.0)));
    assert!(schedule.due(t0 + secs(14.9)).is_empty());
    assert_eq!(schedule.due(t0 + secs(15.0)), [Task::Scan]);
    assert_eq!(schedule.next_wake(), Some(t0 + secs(30.0)));
    assert_eq!(schedule.due(t0 + secs(30.0)), [Task::Scan]);
    assert_eq!(schedule.due(t0 + secs(45.0)), [Task::Scan]);
    // At a minute both are due, in order: the scan before the walk.
    assert_eq!(schedule.due(t0 + secs(60.0)), [Task::Scan, Task::Rewalk]);
    schedule.walked(t0 + secs(60.1), Duration::from_millis(5));
    assert_eq!(schedule.when(Timer::Rewalk), Some(t0 + secs(120.1)));
}

#[test]
fn a_slow_walk_is_made_less_often() {
    let minute = Duration::from_secs(60);
    assert_eq!(rewalk_interval(minute, Duration::from_millis(5)), minute);
    assert_eq!(rewalk_interval(minute, Duration::from_millis(30)), minute);
    assert_eq!(
        rewalk_interval(minute, Duration::from_millis(150)),
        Duration::from_secs(300)
    );
    let t0 = Instant::now();
    let slow = Schedule::new(Timing::default(), t0, Duration::from_millis(150));
    assert_eq!(slow.when(Timer::Rewalk), Some(t0 + secs(300.0)));
    let mut schedule = started(t0);
    assert_eq!(schedule.due(t0 + secs(60.0)), [Task::Scan, Task::Rewalk]);
    // Until the walk reports how long it took, the next one is a period away.
    assert_eq!(schedule.when(Timer::Rewalk), Some(t0 + secs(120.0)));
    schedule.walked(t0 + secs(61.0), Duration::from_secs(1));
    assert_eq!(schedule.when(Timer::Rewalk), Some(t0 + secs(2061.0)));
}

#[test]
fn hints_are_coalesced_into_one_read() {
    let t0 = Instant::now();
    let mut schedule = started(t0);
    let a = PathBuf::from("/h/.claude/projects/x/a.jsonl");
    let b = PathBuf::from("/h/.claude/projects/x/b.jsonl");
    schedule.changed(a.clone(), t0 + secs(1.0));
    assert_eq!(schedule.next_wake(), Some(t0 + secs(1.15)));
    // Later hints join the pending read and do not push it back.
    schedule.changed(b.clone(), t0 + secs(1.1));
    schedule.changed(a.clone(), t0 + secs(1.12));
    assert_eq!(schedule.next_wake(), Some(t0 + secs(1.15)));
    assert!(schedule.due(t0 + secs(1.149)).is_empty());
    assert_eq!(
        schedule.due(t0 + secs(1.15)),
        [Task::Read(vec![a.clone(), b])]
    );
    assert_eq!(schedule.next_wake(), Some(t0 + secs(15.0)));
    // A hint after the read starts a new window.
    schedule.changed(a.clone(), t0 + secs(2.0));
    assert_eq!(schedule.due(t0 + secs(2.15)), [Task::Read(vec![a])]);
}

#[test]
fn a_refresh_reads_everything_so_pending_reads_are_dropped_and_the_scan_restarts() {
    let t0 = Instant::now();
    let mut schedule = started(t0);
    schedule.changed(PathBuf::from("/x.jsonl"), t0 + secs(10.0));
    schedule.refreshed(t0 + secs(10.05));
    assert_eq!(schedule.when(Timer::Reads), None);
    assert_eq!(schedule.when(Timer::Scan), Some(t0 + secs(25.05)));
    assert!(schedule.due(t0 + secs(15.0)).is_empty());
    assert_eq!(schedule.due(t0 + secs(25.05)), [Task::Scan]);
}

#[test]
fn a_hosted_report_from_an_unseen_program_brings_the_scan_forward_for_a_while() {
    let t0 = Instant::now();
    let mut schedule = started(t0);
    // A program the scan already saw asks for nothing.
    schedule.hosted_report(700, true, t0 + secs(1.0));
    assert_eq!(schedule.when(Timer::Scan), Some(t0 + secs(15.0)));
    // An unseen one: the next scan comes 2 s after the last one.
    schedule.hosted_report(4242, false, t0 + secs(1.0));
    assert_eq!(schedule.when(Timer::Scan), Some(t0 + secs(2.0)));
    assert_eq!(schedule.due(t0 + secs(2.0)), [Task::Scan]);
    schedule.hosted_report(4242, false, t0 + secs(3.0));
    assert_eq!(schedule.when(Timer::Scan), Some(t0 + secs(4.0)));
    // Reports after the scan that came late do not delay an earlier one.
    assert_eq!(schedule.due(t0 + secs(4.5)), [Task::Scan]);
    // A program that is never seen stops asking after one scan period.
    schedule.hosted_report(4242, false, t0 + secs(16.0));
    assert_eq!(schedule.when(Timer::Scan), Some(t0 + secs(19.5)));
    // Another pid asks on its own account.
    schedule.hosted_report(5151, false, t0 + secs(16.0));
    assert_eq!(schedule.when(Timer::Scan), Some(t0 + secs(6.5)));
}

#[test]
fn a_program_unseen_for_an_hour_is_forgotten_and_may_ask_again() {
    let t0 = Instant::now();
    let mut schedule = started(t0);
    schedule.hosted_report(4242, false, t0);
    let later = t0 + secs(3601.0);
    schedule.scanned(later);
    schedule.hosted_report(4242, false, later + secs(1.0));
    assert_eq!(schedule.when(Timer::Scan), Some(later + secs(2.0)));
}

#[test]
fn the_tracker_deadline_and_the_live_list_timer_wake_the_loop() {
    let t0 = Instant::now();
    let mut schedule = started(t0);
    schedule.set_deadline(Some(t0 + secs(3.0)));
    schedule.set_leave(Some(t0 + secs(5.0)));
    assert_eq!(schedule.next_wake(), Some(t0 + secs(3.0)));
    assert_eq!(schedule.due(t0 + secs(3.0)), [Task::Tick]);
    assert_eq!(schedule.next_wake(), Some(t0 + secs(5.0)));
    // A deadline moved or cleared before it fell due does not fire.
    schedule.set_deadline(Some(t0 + secs(8.0)));
    schedule.set_deadline(None);
    assert_eq!(schedule.due(t0 + secs(9.0)), [Task::Leave]);
    assert_eq!(schedule.next_wake(), Some(t0 + secs(15.0)));
    // Everything due at once comes in order: reads, scan, walk, tick, leave.
    schedule.changed(PathBuf::from("/y.jsonl"), t0 + secs(59.0));
    schedule.set_deadline(Some(t0 + secs(59.5)));
    schedule.set_leave(Some(t0 + secs(59.6)));
    assert_eq!(
        schedule.due(t0 + secs(60.0)),
        [
            Task::Read(vec![PathBuf::from("/y.jsonl")]),
            Task::Scan,
            Task::Rewalk,
            Task::Tick,
            Task::Leave,
        ]
    );
}

#[test]
fn terminal_reads_come_after_the_scan_and_before_the_tracker_ticks() {
    let t0 = Instant::now();
    let mut schedule = started(t0);
    schedule.set_panes(Some(t0 + secs(15.0)));
    schedule.set_deadline(Some(t0 + secs(15.0)));
    assert_eq!(
        schedule.due(t0 + secs(15.0)),
        [Task::Scan, Task::ReadPanes, Task::Tick]
    );
    // Reads are not periodic of their own: the loop arms them again while a session wants one.
    assert_eq!(schedule.when(Timer::Panes), None);
    schedule.set_panes(Some(t0 + secs(16.0)));
    assert_eq!(schedule.next_wake(), Some(t0 + secs(16.0)));
    schedule.set_panes(None);
    assert_eq!(schedule.next_wake(), Some(t0 + secs(30.0)));
}

#[test]
fn a_tool_call_no_process_vouches_for_brings_the_scan_forward_for_a_while() {
    use slate_core::model::{AgentKind, SessionKey};
    let t0 = Instant::now();
    let mut schedule = started(t0);
    let key = SessionKey::new(AgentKind::CODEX, "new-session");
    // A CLI started since the last scan opened a call at 1 s: the next scan comes 2 s after the
    // last one, not 15.
    schedule.awaiting_scan(std::slice::from_ref(&key), t0 + secs(1.0));
    assert_eq!(schedule.when(Timer::Scan), Some(t0 + secs(2.0)));
    assert_eq!(schedule.due(t0 + secs(2.0)), [Task::Scan]);
    schedule.awaiting_scan(std::slice::from_ref(&key), t0 + secs(2.1));
    assert_eq!(schedule.when(Timer::Scan), Some(t0 + secs(4.0)));
    // A session no scan ever finds a process for stops asking after one scan period.
    assert_eq!(schedule.due(t0 + secs(4.0)), [Task::Scan]);
    schedule.awaiting_scan(std::slice::from_ref(&key), t0 + secs(16.5));
    assert_eq!(schedule.when(Timer::Scan), Some(t0 + secs(19.0)));
    // It stops waiting, then waits again (interrupted, later on): the scans come forward again.
    assert_eq!(schedule.due(t0 + secs(19.0)), [Task::Scan]);
    schedule.awaiting_scan(&[], t0 + secs(20.0));
    schedule.awaiting_scan(std::slice::from_ref(&key), t0 + secs(21.0));
    assert_eq!(schedule.when(Timer::Scan), Some(t0 + secs(21.0)));
}
