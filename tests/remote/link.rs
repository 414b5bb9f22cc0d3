//! The link's pure parts, from data: the retry schedule with made-up jitter, the `ssh` argument
//! lists, machine names, the words for a remote shell, attaching to a remote pane, and what a
//! failed link means.

use std::time::Duration;

use slate::config::{Config, RemoteEntry};
use slate::model::Machine;
use slate::remote::backoff::Backoff;
use slate::remote::{self, attach, FailureKind, LinkTiming, RemoteCommand};

use super::{entry, machine};

// ---------------------------------------------------------------------------------------------
// The retry schedule.

#[test]
fn retries_start_at_a_second_and_double_to_a_minute() {
    let mut backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(60));
    let waits: Vec<u64> = (0..9).map(|_| backoff.ended(None, 0.0).as_secs()).collect();
    assert_eq!(waits, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
}

#[test]
fn jitter_takes_up_to_a_quarter_off_and_never_adds() {
    let mut backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(60));
    assert_eq!(backoff.ended(None, 1.0), Duration::from_millis(750));
    assert_eq!(backoff.ended(None, 0.5), Duration::from_millis(1750));
    for _ in 0..10 {
        backoff.ended(None, 0.0);
    }
    for jitter in [0.0, 0.3, 0.99, 1.0, 7.0, -3.0] {
        let wait = backoff.ended(None, jitter);
        assert!(wait <= Duration::from_secs(60), "{jitter}: {wait:?}");
        assert!(wait >= Duration::from_secs(45), "{jitter}: {wait:?}");
    }
}

#[test]
fn a_link_that_stayed_up_starts_the_waits_over_and_a_flapping_one_does_not() {
    let mut backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(60));
    for _ in 0..5 {
        backoff.ended(None, 0.0);
    }
    assert_eq!(backoff.upcoming(), Duration::from_secs(32));
    // Up for a few seconds after its snapshot, then gone again: still backing off.
    assert_eq!(
        backoff.ended(Some(Duration::from_secs(5)), 0.0),
        Duration::from_secs(32)
    );
    // Up for an hour: a drop now is news, tried again within a second.
    assert_eq!(
        backoff.ended(Some(Duration::from_secs(3600)), 0.0),
        Duration::from_secs(1)
    );
}

// ---------------------------------------------------------------------------------------------
// The ssh command lines.

#[test]
fn ssh_gets_batch_mode_keep_alives_the_person_s_arguments_and_a_fixed_command() {
    let remote = entry("box", "dev@box.example.com", &["-p", "2222", "-i", "/k ey"]);
    let args = remote::ssh_args(&remote, &LinkTiming::default(), &RemoteCommand::Watch).unwrap();
    assert_eq!(
        args,
        [
            "-T",
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=10",
            "-o",
            "ServerAliveInterval=10",
            "-o",
            "ServerAliveCountMax=2",
            "-o",
            "ClearAllForwardings=yes",
            "-p",
            "2222",
            "-i",
            "/k ey",
            "--",
            "dev@box.example.com",
            "slate",
            "watch",
            "--json",
        ]
    );
    let once = remote::ssh_args(&remote, &LinkTiming::default(), &RemoteCommand::Sessions).unwrap();
    assert_eq!(once[once.len() - 3..], ["slate", "sessions", "--json"]);
    // The product's bound: a dead link is noticed within 30 s.
    assert_eq!(
        LinkTiming::default().dead_link_noticed_within(),
        Duration::from_secs(30)
    );
}

#[test]
fn a_destination_that_ssh_would_read_as_an_option_is_refused() {
    for bad in [
        "-oProxyCommand=touch /tmp/x",
        "-p",
        "",
        "box example",
        "box\n",
    ] {
        let refused = RemoteEntry::new(machine("box"), bad, Vec::new());
        assert!(refused.is_err(), "{bad:?} was accepted");
    }
    let error = Config::parse(
        "[[remote]]\nname = \"box\"\ndestination = \"-oProxyCommand=touch /tmp/x\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("line 3"), "{error}");
    assert!(error.contains("`destination`"), "{error}");
    assert!(error.contains("starts with `-`"), "{error}");
    for good in ["box", "dev@box.example.com", "ssh://dev@box:2222", "[::1]"] {
        assert!(
            RemoteEntry::new(machine("box"), good, Vec::new()).is_ok(),
            "{good}"
        );
    }
}

#[test]
fn machine_names_are_short_plain_and_never_hold_a_colon() {
    for good in ["box", "build-01", "gpu.lab", "a", "A_b"] {
        assert!(Machine::new(good).is_ok(), "{good}");
    }
    for bad in [
        "",
        "-box",
        ".box",
        "box:1",
        "my box",
        "b/x",
        &"x".repeat(33),
        "bôx",
    ] {
        assert!(Machine::new(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn words_for_a_remote_shell_are_plain_and_anything_else_is_quoted() {
    assert!(remote::shell_safe("3fa2-0c1d").is_ok());
    for bad in [
        "a b",
        "$(reboot)",
        "a;b",
        "`x`",
        "a'b",
        "~",
        "",
        "a\nb",
        "*",
    ] {
        assert!(remote::shell_safe(bad).is_err(), "{bad:?}");
    }
    assert_eq!(remote::shell_quote("it's"), r"'it'\''s'");
    let remote = entry("box", "box", &["-F", "/c f"]);
    assert_eq!(
        remote::attach_args(&remote, "work; rm -rf ~").unwrap(),
        [
            "-t",
            "-F",
            "/c f",
            "--",
            "box",
            "tmux",
            "attach",
            "-t",
            "'work; rm -rf ~'"
        ]
    );
    assert_eq!(
        remote::command_line("ssh", &remote::attach_args(&remote, "w").unwrap()),
        "ssh -t -F '/c f' -- box tmux attach -t w"
    );
    // Typed into a local shell, a quoted name reaches the remote's shell quoted.
    assert_eq!(
        remote::command_line("ssh", &remote::attach_args(&remote, "a b").unwrap()),
        r"ssh -t -F '/c f' -- box tmux attach -t ''\''a b'\'''"
    );
    // fish reads `\'` and `\\` in single quotes as escapes, a POSIX shell does not, and PowerShell
    // ends a quote at a typographic one: a name with any of them (or a control or format
    // character) is never sent to a remote's login shell.
    for odd in ["it's", "it\u{2019}s", r"a\b", "a\u{1b}b", "a\u{202e}b", ""] {
        assert_eq!(remote::attach_args(&remote, odd), None, "{odd:?}");
    }
}

#[test]
fn a_remote_session_in_tmux_is_attached_to_and_any_other_gets_a_shell_there() {
    let remote = entry("box", "box", &[]);
    // The pane is the most precise target: attaching to it selects its window and pane.
    let in_tmux = serde_json::json!({
        "id": "s1", "terminal": {"kind": "tmux", "pane": "%3", "sensed": true}
    });
    assert_eq!(attach::tmux_session(&in_tmux).as_deref(), Some("%3"));
    let plan = attach::plan_for(&remote, &in_tmux);
    assert_eq!(
        plan.args(),
        ["-t", "--", "box", "tmux", "attach", "-t", "'%3'"]
    );
    let named = serde_json::json!({"id": "s1", "terminal": {"kind": "tmux", "session": "work"}});
    let plan = attach::plan_for(&remote, &named);
    assert_eq!(plan.command_line(), "ssh -t -- box tmux attach -t work");
    for elsewhere in [
        serde_json::json!({"id": "s1"}),
        serde_json::json!({"id": "s1", "terminal": null}),
        serde_json::json!({"id": "s1", "terminal": {"kind": "kitty", "session": "work"}}),
        serde_json::json!({"id": "s1", "terminal": {"kind": "tmux"}}),
    ] {
        let plan = attach::plan_for(&remote, &elsewhere);
        assert!(matches!(plan, attach::Plan::Shell { .. }), "{elsewhere}");
        assert_eq!(plan.command_line(), "ssh -- box");
    }
}

#[test]
fn a_failed_link_says_what_is_wrong_on_which_machine() {
    let name = machine("box");
    let missing = remote::classify(&name, Some(127), "sh: 1: slate: not found\n", false);
    assert_eq!(missing.kind, FailureKind::NoSlate);
    assert!(
        missing
            .message
            .starts_with("slate not found on box: install it there"),
        "{}",
        missing.message
    );
    let bash = remote::classify(&name, Some(127), "bash: slate: command not found\n", false);
    assert_eq!(bash.kind, FailureKind::NoSlate);
    let old = remote::classify(
        &name,
        Some(2),
        "error: unrecognized subcommand 'watch'\n\nUsage: slate <COMMAND>\n",
        false,
    );
    assert_eq!(old.kind, FailureKind::OldSlate);
    assert!(old.message.contains("too old to stream"), "{}", old.message);
    let refused = remote::classify(
        &name,
        Some(255),
        "ssh: connect to host 10.0.0.9 port 22: Connection refused\r\n",
        false,
    );
    assert_eq!(refused.kind, FailureKind::Link);
    assert_eq!(
        refused.message,
        "ssh: connect to host 10.0.0.9 port 22: Connection refused"
    );
    // A remote whose Slate streamed and then stopped is a link that closed, not a missing one.
    let closed = remote::classify(&name, Some(1), "slate: the server stopped\n", true);
    assert_eq!(closed.kind, FailureKind::Link);
    assert!(closed.message.contains("closed"), "{}", closed.message);
    let cut = remote::classify(&name, None, "", true);
    assert_eq!(cut.message, "the link to box was cut");
}
