//! The title grammars read against real titles: every `fixtures/titles/<agent>/<version>/<scenario>.jsonl`
//! was recorded from the real CLI in tmux (fixtures/recorder) and is classified here. The snapshot
//! shows each run of one title kind; the asserts pin what each recorded scenario must show.

use std::path::PathBuf;

use serde::Deserialize;
use slate_core::agents::titles::{classify_title, TitleKind};
use slate_core::model::AgentKind;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Seen {
    at: String,
    title: String,
}

struct Recording {
    agent: AgentKind,
    name: String,
    titles: Vec<(String, TitleKind)>,
}

fn recordings() -> Vec<Recording> {
    let root = crate::repository().join("fixtures/titles");
    let mut paths: Vec<PathBuf> = Vec::new();
    for agent in std::fs::read_dir(&root).unwrap() {
        for version in std::fs::read_dir(agent.unwrap().path()).unwrap() {
            for file in std::fs::read_dir(version.unwrap().path()).unwrap() {
                paths.push(file.unwrap().path());
            }
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let relative = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .to_string();
            let agent_name = relative.split('/').next().unwrap();
            let agent = AgentKind::parse(agent_name).expect("folder names an agent");
            let titles = std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .map(|line| {
                    let seen: Seen = serde_json::from_str(line).expect("a title line");
                    assert!(!seen.at.is_empty());
                    let kind = classify_title(agent, &seen.title);
                    (seen.title, kind)
                })
                .collect();
            Recording {
                agent,
                name: relative.trim_end_matches(".jsonl").to_string(),
                titles,
            }
        })
        .collect()
}

fn scenario(recording: &Recording) -> &str {
    recording.name.rsplit('/').next().unwrap()
}

#[test]
fn recorded_titles_classify() {
    let recordings = recordings();
    assert!(recordings.len() >= 15, "found {}", recordings.len());
    let mut runs: Vec<String> = Vec::new();
    for recording in &recordings {
        let kinds: Vec<TitleKind> = recording.titles.iter().map(|(_, kind)| *kind).collect();
        // The last title the CLI set before it was looked at (an exit empties it).
        let last = recording
            .titles
            .iter()
            .rev()
            .find(|(title, _)| !title.is_empty() && title != "vm")
            .map(|(_, kind)| *kind);
        let name = &recording.name;
        match (recording.agent.as_str(), scenario(recording)) {
            ("codex" | "gemini-cli", "permission") => {
                assert_eq!(last, Some(TitleKind::ActionRequired), "{name}")
            }
            ("claude-code" | "codex", "tool_running") => {
                assert_eq!(last, Some(TitleKind::Frame), "{name}");
                assert!(kinds.iter().filter(|k| **k == TitleKind::Frame).count() >= 4);
            }
            ("gemini-cli", "tool_running") => {
                assert_eq!(last, Some(TitleKind::Busy), "{name}")
            }
            ("claude-code" | "gemini-cli", "finished") => {
                assert_eq!(last, Some(TitleKind::Idle), "{name}")
            }
            ("codex", "finished" | "finished-nodaemon") => {
                assert_eq!(last, Some(TitleKind::Idle), "{name}")
            }
            _ => {}
        }
        // Claude Code never asks for action in its title: its dialogs look idle
        // (docs/formats.md §9).
        if recording.agent == AgentKind::CLAUDE_CODE {
            assert!(!kinds.contains(&TitleKind::ActionRequired), "{name}");
        }
        let mut previous: Option<(TitleKind, &str)> = None;
        for (title, kind) in &recording.titles {
            let title = title.trim_end();
            if previous.is_some_and(|(k, t)| {
                k == *kind
                    && (matches!(k, TitleKind::Frame | TitleKind::ActionRequired) || t == title)
            }) {
                continue;
            }
            previous = Some((*kind, title));
            runs.push(format!("{name}: {kind:?} {title:?}"));
        }
    }
    insta::assert_snapshot!("recorded_titles", runs.join("\n"));
}
