//! Menu ids read back into their actions: every id reads back and none is too long, an id cut
//! short anywhere reads as nothing, malformed, huge and hostile ids are refused, and the same for
//! generated actions and keys (proptest).

use proptest::prelude::*;

use slate::agents::keys::Action;
use slate::model::{AgentKind, Machine, SessionKey};
use slate::policy::menu::{MenuAction, MenuAnswer};

#[test]
fn menu_ids_read_back_into_their_actions() {
    let actions = [
        MenuAction::Focus(SessionKey::new(AgentKind::CODEX, "019a-ff:with-colon")),
        MenuAction::OpenWindow,
        MenuAction::PauseForAnHour,
        MenuAction::PauseUntilResumed,
        MenuAction::Resume,
        MenuAction::ToggleAutostart,
        MenuAction::Quit,
    ];
    for action in actions {
        assert_eq!(MenuAction::parse(&action.id()), Some(action.clone()));
    }
    let answer = MenuAction::Answer(MenuAnswer {
        key: SessionKey::new(AgentKind::CLAUDE_CODE, "019a-ff:with-colon"),
        action: Action::Answer,
        option: Some(2),
        fingerprint: "9f86d081884c7d65".to_string(),
    });
    assert_eq!(MenuAction::parse(&answer.id()), Some(answer));
    let approve = MenuAction::Answer(MenuAnswer {
        key: SessionKey::new(AgentKind::CODEX, "s1"),
        action: Action::Approve,
        option: None,
        fingerprint: "0123456789abcdef".to_string(),
    });
    assert_eq!(MenuAction::parse(&approve.id()), Some(approve));
    assert_eq!(MenuAction::parse("answer:always:1:00:claude-code:s1"), None);
    assert_eq!(
        MenuAction::parse("answer:approve:x:00:claude-code:s1"),
        None
    );
    assert_eq!(MenuAction::parse("focus:nobody:1:x"), None);
    assert_eq!(MenuAction::parse("something-else"), None);
}

/// Every id the menu makes for these sessions and actions.
fn sample_actions() -> Vec<MenuAction> {
    let keys = [
        SessionKey::new(
            AgentKind::CLAUDE_CODE,
            "de5c0003-0000-4000-8000-000000000003",
        ),
        SessionKey::new(AgentKind::CODEX, "019a-ff:with-colon"),
        SessionKey::new(AgentKind::CLAUDE_CODE, "s1").on(Some(Machine::new("box").unwrap())),
        SessionKey::new(AgentKind::from_wire("toy-agent").unwrap(), "t:1")
            .on(Some(Machine::new("build-01.lab").unwrap())),
        SessionKey::new(AgentKind::CODEX, "x".repeat(128))
            .on(Some(Machine::new(&"m".repeat(32)).unwrap())),
    ];
    let mut actions = vec![
        MenuAction::OpenWindow,
        MenuAction::PauseForAnHour,
        MenuAction::PauseUntilResumed,
        MenuAction::Resume,
        MenuAction::ToggleAutostart,
        MenuAction::Quit,
    ];
    for key in keys {
        actions.push(MenuAction::Focus(key.clone()));
        for (action, option) in [
            (Action::Approve, None),
            (Action::Deny, None),
            (Action::Answer, Some(1)),
            (Action::Answer, Some(u32::MAX)),
        ] {
            actions.push(MenuAction::Answer(MenuAnswer {
                key: key.clone(),
                action,
                option,
                fingerprint: "0123456789abcdef".to_string(),
            }));
        }
    }
    actions
}

#[test]
fn every_menu_id_reads_back_and_none_is_too_long_to() {
    use slate::policy::menu::MENU_ID_MAX;
    for action in sample_actions() {
        let id = action.id();
        assert!(id.len() <= MENU_ID_MAX, "{id}: {} bytes", id.len());
        assert_eq!(MenuAction::parse(&id), Some(action), "{id}");
    }
}

#[test]
fn a_menu_id_cut_short_anywhere_reads_as_nothing() {
    // An id that lost its end must not read as another session (`s1` for `s12`) or another
    // answer: the session's id carries its length, and the fixed ids are no prefix of another.
    let mut cuts = 0;
    for action in sample_actions() {
        let id = action.id();
        for end in 0..id.len() {
            if !id.is_char_boundary(end) {
                continue;
            }
            assert_eq!(
                MenuAction::parse(&id[..end]),
                None,
                "{:?} from {id}",
                &id[..end]
            );
            cuts += 1;
        }
    }
    assert!(cuts > 2000, "{cuts}");
}

#[test]
fn malformed_huge_and_hostile_menu_ids_are_refused() {
    let fine = "answer@box:approve::0123456789abcdef:claude-code:2:s1";
    assert!(MenuAction::parse(fine).is_some());
    let refused = [
        // Malformed: a field missing, added, misspelt or out of place.
        "",
        ":",
        "answer",
        "answer:",
        "answer@",
        "answer@box",
        "answer@box:",
        "answer@box:approve::0123456789abcdef:claude-code:2",
        "answer@box:approve:0123456789abcdef:claude-code:2:s1",
        "answer@box:approve::0123456789abcdef::claude-code:2:s1",
        "answer@box:approve::0123456789abcdef:claude-code::s1",
        "answer@box:approve::0123456789abcdef:claude-code:s1",
        "answer@box:always::0123456789abcdef:claude-code:2:s1",
        "answer@box:APPROVE::0123456789abcdef:claude-code:2:s1",
        "Answer@box:approve::0123456789abcdef:claude-code:2:s1",
        "answers@box:approve::0123456789abcdef:claude-code:2:s1",
        "focus@box@box:claude-code:2:s1",
        "focus@:claude-code:2:s1",
        "focus@box:claude-code:2:s1:",
        "focus:claude-code:2",
        "focused:claude-code:2:s1",
        "quit ",
        " quit",
        "Quit",
        "quit\n",
        "open:",
        "pause",
        // A length that does not match, or is spelt another way.
        "focus:claude-code:3:s1",
        "focus:claude-code:1:s1",
        "focus:claude-code:02:s1",
        "focus:claude-code:+2:s1",
        "focus:claude-code:-2:s1",
        "focus:claude-code: 2:s1",
        "focus:claude-code:0:",
        "focus:claude-code:18446744073709551618:s1",
        // An option where none belongs, none where one must be, or one spelt another way.
        "answer:approve:1:0123456789abcdef:claude-code:2:s1",
        "answer:deny:0:0123456789abcdef:claude-code:2:s1",
        "answer:answer::0123456789abcdef:claude-code:2:s1",
        "answer:answer:01:0123456789abcdef:claude-code:2:s1",
        "answer:answer:+1:0123456789abcdef:claude-code:2:s1",
        "answer:answer:-1:0123456789abcdef:claude-code:2:s1",
        "answer:answer:4294967296:0123456789abcdef:claude-code:2:s1",
        "answer:answer:99999999999:0123456789abcdef:claude-code:2:s1",
        "answer:answer:1.0:0123456789abcdef:claude-code:2:s1",
        // A fingerprint of the wrong length, case or alphabet.
        "answer:approve::0123456789abcde:claude-code:2:s1",
        "answer:approve::0123456789abcdef0:claude-code:2:s1",
        "answer:approve::0123456789ABCDEF:claude-code:2:s1",
        "answer:approve::0123456789abcdeg:claude-code:2:s1",
        "answer:approve::0123456789abcde\u{0}:claude-code:2:s1",
        // A local session of an agent this Slate does not know; a remote agent id that is none.
        "focus:toy-agent:2:s1",
        "answer:deny::0123456789abcdef:Claude-Code:2:s1",
        "focus@box:a-very-long-agent-id:2:s1",
        "focus@box::2:s1",
        "focus@box:c\u{e9}:2:s1",
        // Machine names that are none: an option for ssh, a shell's words, too long, not ASCII.
        "focus@-oProxyCommand=x:claude-code:2:s1",
        "focus@box;reboot:claude-code:2:s1",
        "focus@$(reboot):claude-code:2:s1",
        "focus@b\u{f6}x:claude-code:2:s1",
        "focus@ box:claude-code:2:s1",
        // Session ids that are none: blank, control or invisible characters, too long.
        "focus:claude-code:3:s 1",
        "focus:claude-code:3:s\n1",
        "focus:claude-code:3:s\t1",
        "focus:claude-code:3:s\u{0}1",
        "focus:claude-code:3:s\u{1b}1",
        "focus:claude-code:5:s\u{202e}1",
        "focus:claude-code:5:s\u{200b}1",
        "focus:claude-code:5:s\u{feff}1",
    ];
    for id in refused {
        assert_eq!(MenuAction::parse(id), None, "{id:?}");
    }
    // Too long: a session id past `limits::ID_MAX`, a machine name past `Machine::MAX`, and
    // anything past `MENU_ID_MAX` whatever it holds, read in no time.
    let long_id = "x".repeat(129);
    assert_eq!(
        MenuAction::parse(&format!("focus:claude-code:129:{long_id}")),
        None
    );
    let long_machine = "m".repeat(33);
    assert_eq!(
        MenuAction::parse(&format!("focus@{long_machine}:claude-code:2:s1")),
        None
    );
    let started = std::time::Instant::now();
    for huge in [
        "x".repeat(slate::policy::menu::MENU_ID_MAX + 1),
        format!("focus:claude-code:2:s1{}", " ".repeat(10_000_000)),
        format!(
            "answer@box:approve::0123456789abcdef:claude-code:{}",
            ":".repeat(10_000_000)
        ),
        format!("focus@box:claude-code:9999999:{}", "s".repeat(9_999_999)),
        "quit".repeat(1_000_000),
    ] {
        assert_eq!(MenuAction::parse(&huge), None);
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

fn key() -> impl Strategy<Value = SessionKey> {
    (
        prop_oneof![
            Just(AgentKind::CLAUDE_CODE),
            Just(AgentKind::CODEX),
            Just(AgentKind::from_wire("toy:agent").unwrap())
        ],
        "[!-~]{1,128}",
        proptest::option::of("[A-Za-z0-9][A-Za-z0-9._-]{0,31}"),
    )
        .prop_map(|(agent, id, machine)| {
            // A foreign agent is another machine's.
            let machine = match (agent.as_str() == "toy:agent", machine) {
                (true, None) => Some("box".to_string()),
                (_, machine) => machine,
            };
            SessionKey::new(agent, id).on(machine.map(|name| Machine::new(&name).unwrap()))
        })
}

fn action() -> impl Strategy<Value = MenuAction> {
    (key(), 0u8..4, any::<u32>(), "[0-9a-f]{16}").prop_map(|(key, which, number, print)| {
        let answer = |action, option| {
            MenuAction::Answer(MenuAnswer {
                key: key.clone(),
                action,
                option,
                fingerprint: print.clone(),
            })
        };
        match which {
            0 => MenuAction::Focus(key.clone()),
            1 => answer(Action::Approve, None),
            2 => answer(Action::Deny, None),
            _ => answer(Action::Answer, Some(number)),
        }
    })
}

proptest! {
    /// Every id the menu makes reads back as its action, except where the agent's own id
    /// holds a `:` (no built-in agent's does; an id the menu cannot tell apart reads as
    /// nothing rather than as another session); no proper prefix of it reads at all.
    #[test]
    fn ids_read_back_and_their_prefixes_do_not(action in action()) {
        let id = action.id();
        let parsed = MenuAction::parse(&id);
        let agent = match &action {
            MenuAction::Focus(key) => key.agent,
            MenuAction::Answer(answer) => answer.key.agent,
            _ => unreachable!(),
        };
        if agent.as_str().contains(':') {
            prop_assert_eq!(parsed, None);
        } else {
            prop_assert_eq!(parsed, Some(action));
        }
        for end in (0..id.len()).filter(|end| id.is_char_boundary(*end)) {
            prop_assert_eq!(MenuAction::parse(&id[..end]), None);
        }
    }

    /// Whatever the text, reading it ends, and what reads is an id the menu makes.
    #[test]
    fn any_text_reads_as_nothing_or_as_the_id_it_is(text in "\\PC{0,300}") {
        if let Some(action) = MenuAction::parse(&text) {
            prop_assert_eq!(action.id(), text);
        }
    }

    /// Text that looks like an id, with its fields in any order and any content.
    #[test]
    fn id_shaped_text_reads_as_nothing_or_as_the_id_it_is(
        head in prop_oneof![Just("focus"), Just("answer")],
        at in proptest::option::of("[a-z0-9.@:_-]{0,6}"),
        fields in proptest::collection::vec("[a-z0-9:+ -]{0,5}", 0..7),
    ) {
        let text = format!(
            "{head}{}:{}",
            at.map(|at| format!("@{at}")).unwrap_or_default(),
            fields.join(":")
        );
        if let Some(action) = MenuAction::parse(&text) {
            prop_assert_eq!(action.id(), text);
        }
    }
}
