//! The tools' outputs read without the tools: tmux's one-call read and its batches, kitty's
//! recorded answers and frames, and WezTerm's documented list.

use std::collections::BTreeMap;

use slate::terminals::backend::{PaneText, ParseError};
use slate::terminals::{kitty, tmux, wezterm};

use super::text;

#[test]
fn a_tmux_read_is_one_call_and_reads_back_pane_by_pane() {
    let line = tmux::read_line(
        "/tmp/tmux-0/s",
        &[("%1".to_string(), false), ("%2".to_string(), true)],
    );
    assert_eq!(line.program, "tmux");
    assert_eq!(
        line.args.join(" "),
        "-S /tmp/tmux-0/s display-message -p -t %1 #{pane_id} #{pane_height} #{pane_title} ; \
         capture-pane -p -t %1 ; display-message -p -t %2 #{pane_id} #{pane_height} #{pane_title} ; \
         capture-pane -p -e -t %2"
    );
    let panes_read = ["%1".to_string(), "%2".to_string()];
    let output = "%1 2 a title with  spaces\nline one\nline two\n%2 1 \nonly\n";
    let read = tmux::parse_read(output, &panes_read);
    assert_eq!(
        read[0].1,
        Ok(PaneText {
            title: Some("a title with  spaces".into()),
            screen: "line one\nline two\n".into()
        })
    );
    assert_eq!(
        read[1].1,
        Ok(PaneText {
            title: None,
            screen: "only\n".into()
        })
    );
    // tmux 3.3 prints an empty id for a pane it no longer has.
    let gone = tmux::parse_read(" 40 \n", &panes_read[..1]);
    assert_eq!(gone[0].1, Err(ParseError::Gone("%1".into())));
    // A cut answer, or one that is not tmux's, reads as no pane at all.
    for bad in [
        "",
        "%1 3 t\nonly one line\n",
        "%1 many t\n",
        "%1 99999999 t\n",
    ] {
        let read = tmux::parse_read(bad, &panes_read);
        assert!(read.iter().all(|(_, pane)| pane.is_err()), "{bad:?}");
        assert_eq!(read.len(), 2, "{bad:?}");
    }
}

/// The bytes of a tmux call's command as its client sends them: every argument after the
/// socket's, each with its NUL.
fn command_bytes(line: &slate::focus::strategy::CommandLine) -> usize {
    line.args[2..].iter().map(|arg| arg.len() + 1).sum()
}

// See: issue 20, item 6 (past about 150 panes the one combined read was "command too long").
#[test]
fn panes_past_tmuxs_command_length_are_read_in_batches_that_fit() {
    let most = tmux::COMMAND_MOST;
    let all: Vec<(String, bool)> = (0..400).map(|n| (format!("%{n}"), n % 3 == 0)).collect();
    let batches = tmux::batches(&all, most);
    // Every pane once, in order, in a few calls.
    let covered: Vec<usize> = batches.iter().flat_map(|batch| batch.clone()).collect();
    assert_eq!(covered, (0..400).collect::<Vec<_>>());
    assert!(batches.len() <= 4, "{} calls", batches.len());
    for batch in &batches {
        let line = tmux::read_line("/tmp/tmux-0/s", &all[batch.clone()]);
        // Under the limit, and far under what tmux 3.3a refuses (16,365 bytes).
        assert!(command_bytes(&line) <= most, "{batch:?}");
        assert!(most < 16_365);
    }
    // Each call but the last is as full as it can be: one more pane would not fit.
    for pair in batches.windows(2) {
        let grown = tmux::read_line("/tmp/tmux-0/s", &all[pair[0].start..pair[0].end + 1]);
        assert!(
            command_bytes(&grown) > most,
            "{:?} could hold more",
            pair[0]
        );
    }
    assert_eq!(tmux::batches(&all[..2], most), vec![0..2]);
    assert!(tmux::batches(&[], most).is_empty());
    // A pane longer than the limit still gets a call of its own.
    assert_eq!(tmux::batches(&all[..3], 10), vec![0..1, 1..2, 2..3]);
}

#[test]
fn kittys_answers_read_as_recorded() {
    let titles = kitty::parse_titles(&text("terminals/kitty/ls-permission.json")).unwrap();
    assert_eq!(
        titles.get("1").map(String::as_str),
        Some("[ . ] Action Required | slate-fixture run: touch kitty-probe.txt | acme-api")
    );
    assert_eq!(titles.get("2").map(String::as_str), Some("a plain shell"));
    assert!(kitty::parse_titles("not json").is_err());
    assert!(kitty::parse_titles("{}").is_err());
    let frame = kitty::frame("ls", serde_json::json!({}));
    assert!(frame.starts_with(b"\x1bP@kitty-cmd{"));
    assert!(frame.ends_with(b"\x1b\\"));
    let command: serde_json::Value =
        serde_json::from_slice(&frame[12..frame.len() - 2]).expect("the command is JSON");
    assert_eq!(command["cmd"], "ls");
    let answer = |body: &str| format!("\x1bP@kitty-cmd{body}\x1b\\").into_bytes();
    assert_eq!(
        kitty::parse_frame(&answer(r#"{"ok": true, "data": "text"}"#)),
        Ok("text".to_string())
    );
    assert_eq!(
        kitty::parse_frame(&answer(
            r#"{"ok": false, "error": "No matching windows for expression: id:9"}"#
        )),
        Err(ParseError::Refused(
            "No matching windows for expression: id:9".into()
        ))
    );
    assert!(kitty::parse_frame(b"{\"ok\": true}").is_err());
    assert!(kitty::parse_frame(&answer("{not json")).is_err());
}

#[test]
fn kittys_list_says_which_window_is_in_front() {
    let windows = kitty::parse_in_front(&text("terminals/kitty/ls-focus.json")).unwrap();
    let in_front: Vec<(u64, bool)> = windows.iter().map(|w| (w.id, w.in_front)).collect();
    // Window 2 is its own tab's active window, but that tab is behind: only window 3.
    assert_eq!(
        in_front,
        vec![(1, false), (2, false), (3, true), (4, false)]
    );
    assert!(windows.iter().all(|window| window.pid.is_some()));

    // Flags missing or of the wrong type are never "in front"; a window without an id is left
    // out; what is not a list is an error.
    let odd = r#"[{"is_focused": true, "tabs": [{"is_focused": "yes", "windows": [{"id": 7, "is_focused": true}]},
                 {"is_focused": true, "windows": [{"id": 8, "pid": -1, "is_focused": true}, {"is_focused": true}]}]},
                 {"tabs": 3}, 5]"#;
    let windows = kitty::parse_in_front(odd).unwrap();
    assert_eq!(
        windows,
        vec![
            kitty::ListedWindow {
                id: 7,
                pid: None,
                in_front: false
            },
            kitty::ListedWindow {
                id: 8,
                pid: None,
                in_front: true
            },
        ]
    );
    // Titles and children are read the same way, and the same input does not upset them.
    assert_eq!(kitty::parse_titles(odd).unwrap().len(), 2);
    assert_eq!(kitty::parse_children(odd).unwrap().len(), 0);
    for bad in ["", "{", "{}", "null", "\"\"", &"[".repeat(100_000)] {
        assert!(kitty::parse_in_front(bad).is_err(), "{bad:.20}");
    }
}

#[test]
fn wezterm_lists_read_from_their_documented_format() {
    let titles = wezterm::parse_titles(&text("sensed/wezterm/list.json")).unwrap();
    let expected: BTreeMap<String, String> = [
        (
            "0".to_string(),
            "[ . ] Action Required | slate-fixture run: touch x.txt | acme-api".to_string(),
        ),
        ("3".to_string(), "OC | Slate fixture session".to_string()),
    ]
    .into();
    assert_eq!(titles, expected);
    assert!(wezterm::parse_titles("[").is_err());
    let line = wezterm::get_text(Some("/run/w"), "3", false);
    assert_eq!(
        (line.program.as_str(), line.args.join(" ")),
        (
            "wezterm",
            "cli --no-auto-start get-text --pane-id 3".to_string()
        )
    );
    assert_eq!(
        line.env,
        vec![("WEZTERM_UNIX_SOCKET".to_string(), "/run/w".to_string())]
    );
    let line = wezterm::list(None);
    assert_eq!(
        line.args.join(" "),
        "cli --no-auto-start list --format json"
    );
    assert!(line.env.is_empty());
}

#[test]
fn wezterm_clients_read_from_their_documented_format() {
    // `wezterm cli list-clients --format json` as WezTerm's documentation shows it.
    let documented = r#"[{"username": "wez", "hostname": "foo", "pid": 1098536,
        "connection_elapsed": {"secs": 226, "nanos": 502667166},
        "idle_time": {"secs": 0, "nanos": 502667166}, "workspace": "default", "focused_pane_id": 0}]"#;
    assert_eq!(wezterm::parse_clients(documented), Ok(vec![(1098536, 0)]));
    let line = wezterm::list_clients(Some("/run/w"));
    assert_eq!(
        line.args.join(" "),
        "cli --no-auto-start list-clients --format json"
    );
    // A client without a pid or a focused pane is left out; what is not a list is an error.
    let odd = r#"[{"pid": 7}, {"focused_pane_id": 2}, {"pid": -1, "focused_pane_id": 2},
        {"pid": 99999999999, "focused_pane_id": 2}, 5, null, {"pid": 8, "focused_pane_id": 4}]"#;
    assert_eq!(wezterm::parse_clients(odd), Ok(vec![(8, 4)]));
    for bad in ["", "{}", "[", "null", &"[".repeat(100_000)] {
        assert!(wezterm::parse_clients(bad).is_err(), "{bad:.20}");
    }
}
