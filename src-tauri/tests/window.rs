//! The line protocol between the window process and the tray: every request reads back as itself,
//! and anything else is refused rather than guessed at.

use slate::model::Timestamp;
use slate_app::tray::Pause;
use slate_app::window::Request;

#[test]
fn every_request_reads_back_from_its_line() {
    let requests = [
        Request::Pause(Pause::Off),
        Request::Pause(Pause::UntilResumed),
        Request::Pause(Pause::Until(Timestamp::from_millis(1_764_590_400_123))),
        Request::Quit,
        Request::Refresh,
    ];
    for request in requests {
        let line = request.to_line();
        assert!(!line.contains('\n'), "{line:?} is one line");
        assert_eq!(Request::parse(&line), Some(request), "{line:?}");
    }
}

#[test]
fn lines_are_read_with_their_surrounding_spaces() {
    assert_eq!(Request::parse("  quit \r"), Some(Request::Quit));
    assert_eq!(
        Request::parse("pause   until-resumed"),
        Some(Request::Pause(Pause::UntilResumed))
    );
}

#[test]
fn unknown_or_malformed_lines_are_refused() {
    for line in [
        "",
        "show",
        "Quit",
        "quit now",
        "pause",
        "pause soon",
        "pause until",
        "pause until tomorrow",
        "pause until 12 13",
        "refresh please",
        "{\"base\":\"http://127.0.0.1:7411\"}",
    ] {
        assert_eq!(Request::parse(line), None, "{line:?}");
    }
}
