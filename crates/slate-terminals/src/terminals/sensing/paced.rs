//! The sensing worker's side of the pace (`terminals::pace`): a read that stumbled is read again
//! a second later, however slow the session's pace has become.

use super::*;
use crate::terminals::pace;

// Paced through a quiet call, a pane read eight seconds apart is read a second after a read that
// stumbled, as at any pace.
#[test]
fn a_stumble_is_read_again_a_second_later_however_slow_the_pace() {
    let (requests, inbox) = mpsc::channel();
    let in_flight = Arc::new(Mutex::new(HashSet::new()));
    let mut sensing = Sensing::over(BUILT_IN, requests, Arc::clone(&in_flight));
    let key = SessionKey::new(AgentKind::CODEX, "paced-1");
    let socket = "/run/user/1000/slate/4243.sock".to_string();
    sensing.set_hosted(HashMap::from([(key.clone(), socket.clone())]));
    let (wanted, start) = ([(key.clone(), 4243)], Instant::now());
    sensing.set_marks(&HashMap::from([(key.clone(), None)]), start);
    let address = hosted::address(socket);
    let screen = "› run make\n\n• Working (4s • esc to interrupt)\n";
    let sensed = Sensed::read(
        Timestamp::from_millis(2_000),
        None,
        AgentKind::CODEX,
        screen,
    );
    assert_eq!(sensed.screen.kind, ScreenKind::Working);
    // Whether a read is sent at `at`, and when the next is due once it is back.
    let sent = |sensing: &mut Sensing, at: Instant| {
        in_flight.lock().unwrap().clear();
        sensing.read_due(&wanted, at);
        let sent = matches!(inbox.try_recv(), Ok(Request::Read(_)));
        in_flight.lock().unwrap().clear();
        (sensing.next_read(&wanted, at), sent)
    };
    let _ = sent(&mut sensing, start);
    // A working screen read well into a quiet call: the next read is the slowest pace away.
    let late = start + Duration::from_secs(100);
    let read = Outcome::Read {
        key: key.clone(),
        address: address.clone(),
        sensed,
    };
    let _ = sensing.delivered(Delivery::Read(vec![read]), late);
    assert_eq!(sent(&mut sensing, late), (Some(late + pace::SLOWEST), true));
    assert!(
        !sent(&mut sensing, late + READ_EVERY).1,
        "read before its pace"
    );
    // That read fails once: it is read again a second later.
    let failed = Outcome::Failed {
        key,
        address,
        why: "slow".into(),
    };
    let _ = sensing.delivered(Delivery::Read(vec![failed]), late + READ_EVERY);
    let again = sent(&mut sensing, late + READ_EVERY * 2).1;
    assert!(again, "a stumble not read again a second later");
}
