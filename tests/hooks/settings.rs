//! Installing and removing Slate's hooks in configurations that already hold the person's own
//! hooks, settings and comments (`fixtures/hooks/`): byte for byte after remove, a no-op the
//! second time, broken files refused; and hostile texts (truncated, deep, huge).

use std::path::Path;

use proptest::prelude::*;
use serde_json::Value;
use slate::agents::description::Description;
use slate::agents::hooks::{settings, HookFormat, Hooks, ParseError, Verified, SETTINGS_LIMIT};
use slate::agents::BUILT_IN;

const PROGRAM: &str = "/usr/local/bin/slate";

/// The exact texts Slate writes for `PROGRAM`: what `installed` counts and `remove` takes out.
fn own(hooks: &Hooks, agent: &str) -> Vec<String> {
    settings::entries(hooks, agent, PROGRAM)
}

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/hooks")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// Every built-in agent with hooks kept in a JSON file.
fn json_agents() -> Vec<(&'static Description, &'static Hooks)> {
    BUILT_IN
        .iter()
        .filter_map(|description| Some((description, description.hooks?)))
        .filter(|(_, hooks)| !matches!(hooks.format, HookFormat::Plugin | HookFormat::Files))
        .collect()
}

fn events(hooks: &Hooks) -> Vec<String> {
    let mut events: Vec<String> = hooks.events.iter().map(|(e, _)| e.to_string()).collect();
    events.sort();
    events
}

fn without_comments(text: &str) -> Value {
    if let Ok(value) = serde_json::from_str(text) {
        return value;
    }
    // The fixtures' comments are whole `//` lines, trailing `//` remarks and `/* */` blocks on
    // one line; none is inside a string.
    let mut out = String::new();
    for line in text.lines() {
        let mut line = line.to_string();
        while let (Some(start), Some(end)) = (line.find("/*"), line.find("*/")) {
            line.replace_range(start..end + 2, "");
        }
        if let Some(at) = line.find("//") {
            if !line[..at].contains('"') || line[..at].matches('"').count() % 2 == 0 {
                line.truncate(at);
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    serde_json::from_str(&out).unwrap_or_else(|err| panic!("{err}: {out}"))
}

/// Checks one round trip: everything of the person's is still there after install, install
/// again changes nothing, remove gives the text back byte for byte.
fn round_trip(description: &Description, hooks: &Hooks, text: &str) {
    let id = description.id;
    let installed = settings::install(hooks, id, PROGRAM, text, &[])
        .unwrap_or_else(|err| panic!("{id}: {err}\n{text}"));
    let mut found =
        settings::installed(hooks, id, &installed, &own(hooks, id)).expect("reads back");
    found.sort();
    assert_eq!(
        found,
        events(hooks),
        "{id}: every event has its hook\n{installed}"
    );
    assert_eq!(
        settings::install(hooks, id, PROGRAM, &installed, &[]).unwrap(),
        installed,
        "{id}: installing twice changes nothing"
    );
    assert!(
        installed.contains(&format!("{PROGRAM} hook {id} ")),
        "{id}: the hook runs `slate hook {id} EVENT`"
    );
    if text.contains("\r\n") {
        assert!(
            !installed.replace("\r\n", "").contains('\n'),
            "{id}: a file whose lines end in CRLF keeps them\n{installed:?}"
        );
    }
    let removed = settings::remove(hooks, id, &installed, &own(hooks, id)).unwrap();
    assert_eq!(
        removed, text,
        "{id}: remove gives back the text byte for byte"
    );
    // What the person had is all there, in its order, in front of Slate's entries.
    if !text.trim().is_empty() {
        let before = without_comments(text);
        let after = without_comments(&installed);
        for (key, value) in before.as_object().unwrap() {
            if key != "hooks" {
                assert_eq!(&after[key], value, "{id}: {key} kept");
            }
        }
        if let Some(own) = before["hooks"].as_object() {
            for (event, entries) in own {
                let Some(entries) = entries.as_array() else {
                    continue;
                };
                let now = after["hooks"][event].as_array().expect("still a list");
                assert_eq!(
                    &now[..entries.len()],
                    &entries[..],
                    "{id}: {event}'s own hooks kept"
                );
            }
        }
    }
}

#[test]
fn every_agent_round_trips_on_every_fixture() {
    let fixtures = [
        "claude-settings.json",
        "codex-hooks.json",
        "gemini-settings.json",
        "cursor-hooks.json",
        "compact.json",
        "empty-object.json",
        "empty-lines.json",
        "empty-hooks.json",
    ];
    for (description, hooks) in json_agents() {
        for name in fixtures {
            round_trip(description, hooks, &fixture(name));
            // The same file written on Windows, its lines ending in CRLF.
            let crlf = fixture(name).replace('\n', "\r\n");
            round_trip(description, hooks, &crlf);
        }
        // A file that does not exist yet is made, and taken away again whole.
        round_trip(description, hooks, "");
        let made = settings::install(hooks, description.id, PROGRAM, "", &[]).unwrap();
        assert!(serde_json::from_str::<Value>(&made).is_ok(), "{made}");
        assert_eq!(
            settings::remove(hooks, description.id, &made, &own(hooks, description.id)).unwrap(),
            ""
        );
    }
}

#[test]
fn the_persons_comments_and_layout_stay_where_they_were() {
    let gemini = BUILT_IN.find("gemini-cli").unwrap();
    let hooks = gemini.hooks.unwrap();
    let text = fixture("gemini-settings.json");
    let installed = settings::install(hooks, gemini.id, PROGRAM, &text, &[]).unwrap();
    for kept in [
        "// Gemini CLI settings, kept by hand.",
        "/* the look */",
        "// trailing remark",
        "// my own check, keep it",
        "/* end of mine */",
        "// the end",
    ] {
        assert!(installed.contains(kept), "{kept} is kept:\n{installed}");
    }
    // Slate's entries follow the person's, indented as the file is.
    let own = installed.find("check.sh").unwrap();
    let slates = installed.find("hook gemini-cli BeforeTool").unwrap();
    assert!(own < slates);
    assert!(installed.contains("\n      {\"hooks\": [{\"type\": \"command\""));
}

#[test]
fn a_file_that_does_not_parse_is_refused() {
    for name in [
        "broken-truncated.json",
        "broken-trailing-comma.json",
        "broken-hooks-not-object.json",
        "broken-event-not-list.json",
        "broken-root-array.json",
        "broken-open-comment.json",
    ] {
        let text = fixture(name);
        for id in ["claude-code", "codex"] {
            let description = BUILT_IN.find(id).unwrap();
            let hooks = description.hooks.unwrap();
            let refused = settings::install(hooks, id, PROGRAM, &text, &[]);
            assert!(refused.is_err(), "{name} is refused for {id}: {refused:?}");
            let message = refused.unwrap_err().to_string();
            assert!(!message.is_empty());
            if name != "broken-event-not-list.json" && name != "broken-hooks-not-object.json" {
                assert!(
                    settings::remove(hooks, id, &text, &own(hooks, id)).is_err(),
                    "{name}"
                );
            }
        }
    }
}

#[test]
fn every_prefix_of_a_file_round_trips_or_is_refused() {
    let text = fixture("gemini-settings.json");
    for (description, hooks) in json_agents() {
        for end in (0..text.len()).filter(|end| text.is_char_boundary(*end)) {
            let prefix = &text[..end];
            if settings::install(hooks, description.id, PROGRAM, prefix, &[]).is_ok() {
                round_trip(description, hooks, prefix);
            }
        }
    }
}

#[test]
fn hostile_texts_are_refused_without_harm() {
    let claude = BUILT_IN.find("claude-code").unwrap();
    let hooks = claude.hooks.unwrap();
    // Deeper than serde_json reads: refused, no stack overflow.
    let deep = format!("{{\"a\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(settings::install(hooks, claude.id, PROGRAM, &deep, &[]).is_err());
    // Larger than Slate edits.
    let huge = format!("{{\"a\": \"{}\"}}", "x".repeat(SETTINGS_LIMIT));
    assert!(matches!(
        settings::install(hooks, claude.id, PROGRAM, &huge, &[]),
        Err(ParseError::TooLarge(..))
    ));
    // Large but within the limit, with thousands of the person's hooks: round trips.
    let entries: Vec<String> = (0..5000)
        .map(|n| format!("{{\"hooks\": [{{\"type\": \"command\", \"command\": \"echo {n}\"}}]}}"))
        .collect();
    let large = format!(
        "{{\"hooks\": {{\"PreToolUse\": [{}]}}}}",
        entries.join(", ")
    );
    round_trip(claude, hooks, &large);
    // Strings that look like comments, escapes, NULs and non-ASCII keys are text, not syntax.
    let tricky =
        "{\"a\": \"// not a comment /* nor this\", \"b\\\"c\": \"\\u0000\", \"ключ\": [\"é\"]}";
    round_trip(claude, hooks, tricky);
    // A key given twice: the entries serde_json would not read are left alone.
    let twice = "{\"hooks\": {\"Stop\": [], \"Stop\": []}}";
    round_trip(claude, hooks, twice);
}

#[test]
fn an_entry_the_person_edited_is_not_slates() {
    let codex = BUILT_IN.find("codex").unwrap();
    let hooks = codex.hooks.unwrap();
    let installed = settings::install(hooks, codex.id, PROGRAM, "", &[]).unwrap();
    // Someone added a second command beside Slate's in one entry: it is theirs now.
    let edited = installed.replacen(
        "\"timeout\": 5}]}",
        "\"timeout\": 5}, {\"type\": \"command\", \"command\": \"mine\"}]}",
        1,
    );
    let removed = settings::remove(hooks, codex.id, &edited, &own(hooks, codex.id)).unwrap();
    assert!(removed.contains("\"mine\""), "{removed}");
    // It still runs Slate's command, but it is no longer Slate's entry to take out or count.
    assert!(removed.contains("hook codex PermissionRequest"));
    assert!(
        settings::installed(hooks, codex.id, &removed, &own(hooks, codex.id))
            .unwrap()
            .is_empty()
    );
}

/// Only an entry exactly as Slate writes it is Slate's: the same command under a matcher, with
/// another timeout, or run by another program is the person's, and neither counted nor taken
/// out; an entry recorded at install (another program's path) is Slate's too.
#[test]
fn only_an_entry_exactly_as_slate_wrote_it_is_slates() {
    let claude = BUILT_IN.find("claude-code").unwrap();
    let hooks = claude.hooks.unwrap();
    let mine = |event: &str, extra: &str, timeout: u32, program: &str| {
        format!(
            "{{{extra}\"hooks\": [{{\"type\": \"command\", \"command\": \"{program} hook claude-code {event}\", \"timeout\": {timeout}}}]}}"
        )
    };
    let theirs = [
        mine("PreToolUse", "\"matcher\": \"Bash\", ", 5, PROGRAM),
        mine("Stop", "", 30, PROGRAM),
        mine("Notification", "", 5, "/home/me/bin/slate"),
        // Slate's own text in another event's list.
        mine("Stop", "", 5, PROGRAM)
            .replace("hook claude-code Stop", "hook claude-code SessionEnd"),
    ];
    let text = format!(
        "{{\n  \"hooks\": {{\n    \"PreToolUse\": [\n      {}\n    ],\n    \"Stop\": [\n      {},\n      {}\n    ],\n    \"Notification\": [\n      {}\n    ]\n  }}\n}}\n",
        theirs[0], theirs[1], theirs[3], theirs[2]
    );
    // None of them is Slate's: nothing is installed, nothing is removed.
    assert!(serde_json::from_str::<Value>(&text).is_ok(), "{text}");
    let own = own(hooks, claude.id);
    assert_eq!(
        settings::installed(hooks, claude.id, &text, &own).unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        settings::remove(hooks, claude.id, &text, &own).unwrap(),
        text
    );
    // Install adds Slate's beside them, and remove takes out only Slate's.
    let installed = settings::install(hooks, claude.id, PROGRAM, &text, &[]).unwrap();
    for entry in &theirs {
        assert!(installed.contains(entry.as_str()), "{installed}");
    }
    assert_eq!(
        settings::remove(hooks, claude.id, &installed, &own).unwrap(),
        text
    );
    // What a Slate elsewhere wrote, recorded at its install, is Slate's.
    let elsewhere = settings::install(hooks, claude.id, "/opt/old/slate", "", &[]).unwrap();
    assert!(settings::installed(hooks, claude.id, &elsewhere, &own)
        .unwrap()
        .is_empty());
    let recorded = settings::entries(hooks, claude.id, "/opt/old/slate");
    assert_eq!(
        settings::installed(hooks, claude.id, &elsewhere, &recorded)
            .unwrap()
            .len(),
        hooks.events.len()
    );
    // Installing with it recorded adds nothing; removing takes it out.
    assert_eq!(
        settings::install(hooks, claude.id, PROGRAM, &elsewhere, &recorded).unwrap(),
        elsewhere
    );
    assert_eq!(
        settings::remove(hooks, claude.id, &elsewhere, &recorded).unwrap(),
        ""
    );
}

/// The person added to Slate's plugin file: remove takes out Slate's text and leaves theirs. A
/// plugin file of that name that is not Slate's is not written over.
#[test]
fn a_plugin_the_person_added_to_loses_only_slates_part() {
    let opencode = BUILT_IN.find("opencode").unwrap();
    let hooks = opencode.hooks.unwrap();
    let plugin = settings::install(hooks, opencode.id, PROGRAM, "", &[]).unwrap();
    let added = "\nexport const Mine = async () => ({});\n";
    let appended = format!("{plugin}{added}");
    let own = own(hooks, opencode.id);
    assert_eq!(
        settings::installed(hooks, opencode.id, &appended, &own)
            .unwrap()
            .len(),
        hooks.events.len()
    );
    assert_eq!(
        settings::install(hooks, opencode.id, PROGRAM, &appended, &[]).unwrap(),
        appended
    );
    assert_eq!(
        settings::remove(hooks, opencode.id, &appended, &own).unwrap(),
        added
    );
    // Slate's text edited is no longer Slate's: not counted, not removed, not written over.
    let edited = plugin.replace("child.unref();", "child.unref(); mine();");
    assert!(settings::installed(hooks, opencode.id, &edited, &own)
        .unwrap()
        .is_empty());
    assert_eq!(
        settings::remove(hooks, opencode.id, &edited, &own).unwrap(),
        edited
    );
    let refused = settings::install(hooks, opencode.id, PROGRAM, &edited, &[]).unwrap_err();
    assert!(
        refused.to_string().contains("not Slate's plugin"),
        "{refused}"
    );
    assert!(!refused.to_string().contains("JSON"), "{refused}");
}

#[test]
fn opencode_gets_a_plugin_file_of_slates_own() {
    let opencode = BUILT_IN.find("opencode").unwrap();
    let hooks = opencode.hooks.unwrap();
    let plugin = settings::install(hooks, opencode.id, "/opt/it's/slate", "", &[]).unwrap();
    let own = settings::entries(hooks, opencode.id, "/opt/it's/slate");
    assert!(
        plugin.contains(r#"const PROGRAM = "/opt/it's/slate";"#),
        "{plugin}"
    );
    for (event, _) in hooks.events {
        assert!(plugin.contains(&format!("\"{event}\"")));
    }
    assert_eq!(
        settings::installed(hooks, opencode.id, &plugin, &own)
            .unwrap()
            .len(),
        hooks.events.len()
    );
    assert_eq!(
        settings::remove(hooks, opencode.id, &plugin, &own).unwrap(),
        ""
    );
    // A file that is not Slate's is neither read as installed nor removed.
    let theirs = "export const Mine = async () => ({});\n";
    assert!(settings::installed(hooks, opencode.id, theirs, &own)
        .unwrap()
        .is_empty());
    assert_eq!(
        settings::remove(hooks, opencode.id, theirs, &own).unwrap(),
        theirs
    );
}

#[test]
fn a_hook_file_is_known_again_only_as_slate_wrote_it() {
    for program in ["/usr/bin/slate", "/home/a b/it's/slate"] {
        let text = settings::script("cline", program, "PreToolUse");
        assert_eq!(
            settings::script_event("cline", &text).as_deref(),
            Some("PreToolUse"),
            "{text}"
        );
        assert_eq!(settings::script_event("codex", &text), None);
        // Edited in any way, it is the person's.
        let added = format!("{text}echo more\n");
        let unguarded = text.replace(" 2>/dev/null || true", "");
        let other_shell = text.replace("#!/bin/sh", "#!/bin/bash");
        for edited in [
            added,
            unguarded,
            other_shell,
            text[..text.len() / 2].to_string(),
        ] {
            assert_eq!(settings::script_event("cline", &edited), None, "{edited}");
        }
    }
    for hostile in ["", "\0\0\0", "#!/bin/sh\n", &"#".repeat(1 << 20)] {
        assert_eq!(settings::script_event("cline", hostile), None);
    }
    // A folder of hooks is no one text: the text edits refuse it.
    let cline = BUILT_IN.find("cline").unwrap().hooks.unwrap();
    assert!(settings::install(cline, "cline", PROGRAM, "", &[]).is_err());
    assert!(settings::installed(cline, "cline", "", &own(cline, "cline")).is_err());
    assert!(settings::remove(cline, "cline", "", &own(cline, "cline")).is_err());
}

#[test]
fn kilo_code_gets_opencodes_plugin_in_its_own_folder() {
    let kilo = BUILT_IN.find("kilo").unwrap().hooks.unwrap();
    let opencode = BUILT_IN.find("opencode").unwrap().hooks.unwrap();
    assert_eq!(kilo.format, HookFormat::Plugin);
    assert_eq!(kilo.events, opencode.events);
    assert!(kilo
        .file
        .iter()
        .all(|(_, path)| path.contains("kilo/plugin/")));
    let plugin = settings::install(kilo, "kilo", PROGRAM, "", &[]).unwrap();
    assert!(
        plugin.contains(r#"["hook", "kilo", event.type]"#),
        "{plugin}"
    );
    assert!(plugin.contains(r#""question.asked""#), "{plugin}");
}

#[test]
fn copilot_entries_run_a_bash_line_with_a_timeout_in_seconds() {
    let copilot = BUILT_IN.find("copilot").unwrap();
    let hooks = copilot.hooks.unwrap();
    let text = "{\n  \"model\": \"gpt-4.1\"\n}\n";
    let installed = settings::install(hooks, copilot.id, PROGRAM, text, &[]).unwrap();
    let value: Value = serde_json::from_str(&installed).unwrap();
    assert_eq!(value["model"], "gpt-4.1");
    let entry = &value["hooks"]["permissionRequest"][0];
    assert_eq!(entry["type"], "command");
    assert_eq!(entry["timeoutSec"], 5);
    assert_eq!(
        entry["bash"],
        format!("{PROGRAM} hook copilot permissionRequest 2>/dev/null || true")
    );
    assert!(entry.get("command").is_none(), "{installed}");
    // The same line under `command`, or an entry of another type, is not Slate's.
    for theirs in [
        r#"{"hooks": {"agentStop": [{"type": "command", "command": "/opt/slate/slate hook copilot agentStop"}]}}"#,
        r#"{"hooks": {"agentStop": [{"type": "prompt", "bash": "/opt/slate/slate hook copilot agentStop"}]}}"#,
    ] {
        assert!(
            settings::installed(hooks, copilot.id, theirs, &own(hooks, copilot.id))
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            settings::remove(hooks, copilot.id, theirs, &own(hooks, copilot.id)).unwrap(),
            theirs
        );
    }
}

#[test]
fn each_event_is_in_docs_hooks_md_with_how_it_was_checked() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/hooks.md"))
        .unwrap();
    for description in BUILT_IN.iter() {
        let Some(hooks) = description.hooks else {
            continue;
        };
        for (event, _) in hooks.events {
            assert!(
                doc.contains(&format!("`{event}`")),
                "docs/hooks.md names {event}"
            );
        }
        if hooks.verified == Verified::Documentation {
            assert!(doc.contains("documentation only"));
        }
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        "[a-z /*\\\\\"é]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z]{1,6}", inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn any_object_round_trips(
        value in prop::collection::btree_map("[a-zA-Z]{1,6}", json_value(), 0..5),
        own_hooks in prop::collection::btree_map(
            prop_oneof![Just("Stop"), Just("PreToolUse"), Just("Other")],
            prop::collection::vec(json_value(), 0..3),
            0..3,
        ),
        pretty in any::<bool>(),
    ) {
        let mut object: serde_json::Map<String, Value> = value.into_iter().collect();
        if !own_hooks.is_empty() {
            let hooks: serde_json::Map<String, Value> = own_hooks
                .into_iter()
                .map(|(event, entries)| (event.to_string(), Value::Array(entries)))
                .collect();
            object.insert("hooks".into(), Value::Object(hooks));
        }
        let value = Value::Object(object);
        let text = if pretty {
            serde_json::to_string_pretty(&value).unwrap()
        } else {
            serde_json::to_string(&value).unwrap()
        };
        for (description, hooks) in json_agents() {
            round_trip(description, hooks, &text);
            if pretty {
                round_trip(description, hooks, &text.replace('\n', "\r\n"));
            }
        }
    }
}

/// The recorded events that say a question is open: the question's own event, Copilot CLI's
/// `ask_user` and Cline CLI's `ask_question` starting, and Copilot CLI's `elicitation_dialog`
/// notification (which names no question).
const QUESTIONS: &[&str] = &[
    "cline-PreToolUse",
    "copilot-preToolUse",
    "copilot-notification",
    "kilo-question.asked",
    "opencode-question.asked",
];

/// The events the real CLIs sent to Slate's hooks (`hooks_e2e.sh` with `SLATE_E2E_CAPTURE`), in
/// `fixtures/hooks/events/AGENT-EVENT.json`: each reads as a report, with what it means.
#[test]
fn the_events_the_real_clis_sent_read_as_they_mean() {
    use slate::agents::hooks::Signal;
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/hooks/events");
    let mut read = 0;
    for entry in std::fs::read_dir(&folder).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let (agent, event) = name.rsplit_once('-').unwrap();
        let description = BUILT_IN.find(agent).unwrap_or_else(|| panic!("{name}"));
        let hooks = description.hooks.unwrap();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        // A command hook's event names itself in `hook_event_name` (Copilot CLI's and Cline
        // CLI's mostly do not: their `hookName` is their own name for it), an OpenCode bus event
        // in `type`.
        let named = ["hook_event_name", "type"]
            .iter()
            .find_map(|key| value.get(key)?.as_str());
        if let Some(named) = named {
            assert!(
                named.eq_ignore_ascii_case(event),
                "{name}: the event names itself ({named})"
            );
        }
        let report = hooks
            .report(agent, event, &value)
            .unwrap_or_else(|| panic!("{name} reads as a report"));
        let signal = hooks.signal(&report);
        let expected = match event {
            _ if QUESTIONS.contains(&name.as_str()) => Some(Signal::Question),
            "PermissionRequest" | "permissionRequest" | "permission.asked" => {
                Some(Signal::Permission)
            }
            // The other recorded notifications are the permission dialog's
            // (`permission_prompt`, or Gemini CLI's `ToolPermission`).
            "Notification" | "notification" => Some(Signal::Permission),
            "PreToolUse"
            | "PostToolUse"
            | "BeforeTool"
            | "AfterTool"
            | "UserPromptSubmit"
            | "BeforeAgent"
            | "permission.replied"
            | "question.replied"
            | "preToolUse"
            | "postToolUse"
            | "userPromptSubmitted"
            | "TaskStart"
            | "TaskResume" => Some(Signal::Working),
            "Stop" | "AfterAgent" | "session.idle" | "agentStop" | "TaskComplete" => {
                Some(Signal::TurnEnded)
            }
            "SessionStart" | "SessionEnd" | "sessionStart" | "sessionEnd" | "SessionShutdown" => {
                Some(Signal::Lifecycle)
            }
            other => panic!("{other}: an event the test does not know"),
        };
        assert_eq!(signal, expected, "{name}");
        if signal == Some(Signal::Question) && name != "copilot-notification" {
            assert_eq!(
                report.detail.as_deref(),
                Some("Which database should the fixture use?"),
                "{name}: what the question asks"
            );
        }
        if signal == Some(Signal::Permission) {
            assert_eq!(
                report.detail.as_deref(),
                Some("touch slate-permission-probe.txt"),
                "{name}: the command the dialog asks about"
            );
        }
        read += 1;
    }
    assert!(read >= 38, "{read} events");
}
