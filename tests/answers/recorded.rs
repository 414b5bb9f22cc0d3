//! The keys each agent's description produces, replayed against every dialog screen recorded from
//! the real CLIs (`fixtures/screens/<agent>/<version>/`), must be the keys the real CLI accepted
//! (`keys.toml`'s `fewest`, or for a free answer a trial that worked); and what the session object
//! offers for each option, with its fingerprint.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use slate::agents::keys::{self, Action, Choice, OptionRef};
use slate::agents::screens::{read_screen, Screen};
use slate::model::{AgentKind, SessionDialog};

use super::{dialog, typed};

#[derive(Debug, Deserialize)]
struct Index {
    agent: String,
    version: String,
    #[serde(default)]
    answer: Vec<Trial>,
}

#[derive(Debug, Deserialize)]
struct Trial {
    dialog: String,
    action: String,
    #[serde(default)]
    sent: Vec<String>,
    #[serde(default)]
    works: bool,
    #[serde(default)]
    name: String,
    /// The screen recorded after the keys.
    #[serde(default)]
    after: Option<String>,
}

fn folders() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/screens");
    let mut found = Vec::new();
    for agent in std::fs::read_dir(root).unwrap() {
        let agent = agent.unwrap().path();
        if agent.is_dir() {
            for version in std::fs::read_dir(&agent).unwrap() {
                found.push(version.unwrap().path());
            }
        }
    }
    found.sort();
    found
}

fn strings(value: &toml::Value) -> Vec<String> {
    value
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|item| item.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// One replayed answer: the dialog, its screen, the `keys.toml` table, the action and option
/// asked for, and the action its trials in `screens.toml` name.
type Case = (
    &'static str,
    &'static str,
    &'static str,
    Action,
    Option<u32>,
    &'static str,
);

/// An answer counts as delivered only when the agent draws a screen of its own after the keys
/// (`answers`): on every recorded trial whose keys worked, the real CLI's screen after them reads
/// as working, idle, or another dialog, never as the dialog answered or as nothing known.
#[test]
fn after_every_answer_that_worked_the_real_cli_drew_a_screen_of_its_own() {
    let mut checked = 0;
    for folder in folders() {
        let index: Index =
            toml::from_str(&std::fs::read_to_string(folder.join("screens.toml")).unwrap()).unwrap();
        let agent = AgentKind::parse(&index.agent).unwrap();
        for trial in index.answer.iter().filter(|trial| trial.works) {
            let Some(after) = &trial.after else { continue };
            let text = std::fs::read_to_string(folder.join(after)).unwrap();
            let screen = read_screen(agent, &text);
            let own = match &screen {
                Screen::Working | Screen::Idle => true,
                Screen::Dialog(next) => next.kind.screen_kind().as_str() != trial.dialog,
                Screen::Unknown => false,
            };
            assert!(
                own,
                "{} {} {}: after the keys the screen reads {screen:?}",
                index.agent, index.version, trial.name
            );
            checked += 1;
        }
    }
    assert!(checked >= 40, "only {checked} trials checked");
}

#[test]
fn the_keys_of_every_recorded_dialog_are_the_keys_the_real_cli_took() {
    let mut checked = 0;
    for folder in folders() {
        let index: Index =
            toml::from_str(&std::fs::read_to_string(folder.join("screens.toml")).unwrap()).unwrap();
        let keys_toml: toml::Value =
            toml::from_str(&std::fs::read_to_string(folder.join("keys.toml")).unwrap()).unwrap();
        let agent = AgentKind::parse(&index.agent).unwrap();
        let name = format!("{} {}", index.agent, index.version);
        let cases: Vec<Case> = vec![
            (
                "permission",
                "permission-touch",
                "allow",
                Action::Approve,
                None,
                "allow",
            ),
            (
                "permission",
                "permission-touch",
                "deny",
                Action::Deny,
                None,
                "deny",
            ),
            (
                "question",
                "question",
                "pick_1",
                Action::Answer,
                Some(1),
                "pick:1",
            ),
            (
                "question",
                "question",
                "pick_2",
                Action::Answer,
                Some(2),
                "pick:2",
            ),
            (
                "question",
                "question",
                "dismiss",
                Action::Deny,
                None,
                "dismiss",
            ),
            ("question", "question", "text", Action::Answer, None, "text"),
            ("plan", "plan", "approve", Action::Approve, None, "approve"),
            ("plan", "plan", "dismiss", Action::Deny, None, "dismiss"),
            ("plan", "plan", "text", Action::Answer, None, "text"),
        ];
        for (kind, stem, table, action, option, trial_action) in cases {
            // A dialog a CLI was not recorded with, or that Slate does not answer for it (Qwen
            // Code's plan; Copilot CLI has no plan), has no table, and an answer not tried on it
            // (Copilot CLI's question takes no typed answer) none either.
            let Some(recorded) = keys_toml.get(kind).and_then(|section| section.get(table)) else {
                continue;
            };
            let fewest = strings(&recorded["fewest"]);
            let text = (table == "text").then(|| typed(&fewest)).flatten();
            if table == "text" && text.is_none() {
                // Not tried: the dialog has no option for a free answer.
                continue;
            }
            let dialog = dialog(agent, &folder, stem);
            let choice = Choice {
                action,
                option: option.map(OptionRef::Number),
                text: text.clone(),
            };
            let planned = keys::plan(agent, &dialog, &choice);
            let worked: Vec<&Vec<String>> = index
                .answer
                .iter()
                .filter(|trial| trial.dialog == kind && trial.action == trial_action && trial.works)
                .map(|trial| &trial.sent)
                .collect();
            match planned {
                Ok(plan) => {
                    let sent: Vec<String> = plan.keys.iter().map(|key| key.tmux_form()).collect();
                    let accepted = sent == fewest || (text.is_some() && worked.contains(&&sent));
                    assert!(
                        accepted,
                        "{name} {kind}.{table}: slate sends {sent:?}, the CLI took {fewest:?} \
                         (trials that worked: {worked:?})"
                    );
                    assert!(
                        !sent
                            .iter()
                            .any(|key| ["Up", "Down", "Left", "Right"].contains(&key.as_str())),
                        "{name} {kind}.{table}: slate never sends arrows"
                    );
                    if sent.contains(&"Enter".to_string()) {
                        let needed = recorded["enter_needed"].as_bool() == Some(true);
                        assert!(needed, "{name} {kind}.{table}: Enter sent where not needed");
                    }
                }
                Err(refusal) => {
                    // Slate refuses only what takes arrow keys on the real CLI.
                    let arrows = fewest
                        .iter()
                        .any(|key| ["Up", "Down", "Tab"].contains(&key.as_str()));
                    assert!(
                        arrows,
                        "{name} {kind}.{table}: slate refuses ({refusal}) what the CLI took as {fewest:?}"
                    );
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 40, "only {checked} cases checked");
}

#[test]
fn the_session_object_offers_only_what_does_not_widen() {
    for folder in folders() {
        let keys_toml: toml::Value =
            toml::from_str(&std::fs::read_to_string(folder.join("keys.toml")).unwrap()).unwrap();
        let agent = AgentKind::parse(keys_toml["agent"].as_str().unwrap()).unwrap();
        for (kind, stem) in [
            ("permission", "permission-touch"),
            ("question", "question"),
            ("plan", "plan"),
        ] {
            if keys_toml.get(kind).is_none() {
                continue;
            }
            let dialog = dialog(agent, &folder, stem);
            let shown = SessionDialog::of(agent, &dialog, None, None);
            let widens: Vec<i64> = keys_toml[kind]["widens"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_integer().unwrap())
                .collect();
            for (index, option) in shown.options.iter().enumerate() {
                if widens.contains(&(index as i64 + 1)) {
                    assert_eq!(
                        option.action,
                        None,
                        "{}: {kind} option {} widens and must not be offered",
                        folder.display(),
                        option.label
                    );
                }
            }
            assert!(shown.answerable, "{}: {kind}", folder.display());
            assert_eq!(shown.fingerprint, keys::fingerprint(agent, &dialog, None));
            if kind == "permission" {
                let actions: Vec<Option<Action>> = shown.options.iter().map(|o| o.action).collect();
                assert_eq!(
                    actions.first(),
                    Some(&Some(Action::Approve)),
                    "{}",
                    folder.display()
                );
                assert_eq!(
                    actions.last(),
                    Some(&Some(Action::Deny)),
                    "{}",
                    folder.display()
                );
            }
            // The wire form reads back, and the fingerprint is 16 lowercase hex digits.
            let wire = serde_json::to_value(&shown).unwrap();
            let back: SessionDialog = serde_json::from_value(wire.clone()).unwrap();
            assert_eq!(back, shown);
            assert!(wire.get("why_not").is_none());
            assert_eq!(shown.fingerprint.len(), 16);
        }
    }
}
