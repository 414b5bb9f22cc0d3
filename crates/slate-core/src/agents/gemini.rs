//! The Gemini CLI adapter: chat recordings, processes and project folders (docs/formats.md §3).
//!
//! Gemini's JSONL chat recording is not append-only in meaning: a message is re-appended under the
//! same `id` whenever it changes, `{"$set":…}` patches the metadata (and a `$set` carrying a whole
//! `messages` array replaces the history), and `{"$rewindTo":id}` drops a message and everything
//! after it. [`ChatFold`] keeps the folded message list so that every line can be answered with
//! observations that leave the tracker's fold right: a plain append yields just the new message's
//! records, anything that rewrites history yields
//! [`Observation::Reset`](super::Observation::Reset) and a replay of the folded list. This module
//! also recognises Gemini processes and maps project temp folders to their roots from names and
//! bytes it is handed. It deliberately does no I/O (the sources read `projects.json`,
//! `.project_root` and the transcripts) and decides no status.
//!
//! This file holds the description, the file names and the project folders; `chat` folds chat
//! recordings, `processes` recognises Gemini processes.

mod chat;
mod processes;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::keys::{DialogKeys, Press};
use super::screens::{Detail, DialogKind, DialogShape, OptionLayout, ScreenGrammar, Summary, Top};
use super::titles::{Grammar, TitleKind};
use super::{Base, Description, Found, Layout, Processes, ProjectFolder, Root, Sessions, Watch};
use crate::model::AgentKind;

pub use chat::{fold_legacy_json, ChatFold};
pub use processes::{is_relaunch_parent, recognise};

/// Gemini CLI, as Slate knows it (docs/formats.md §3).
pub static DESCRIPTION: Description = Description {
    id: "gemini-cli",
    name: "Gemini",
    product: "Gemini CLI",
    processes: Processes {
        programs: &["gemini"],
        recognise,
        relaunch_parent: Some(is_relaunch_parent),
    },
    // `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini` (docs/formats.md §3).
    root: Root {
        candidates: &[
            (Base::Var("GEMINI_CLI_HOME"), ".gemini"),
            (Base::Home, ".gemini"),
        ],
        variables: &[],
    },
    watch: Watch {
        folders: &[("tmp", true)],
        files: &[".jsonl", ".json"],
    },
    sessions: Sessions::Transcripts(Layout {
        folders: &[&["tmp", "*", "chats"], &["tmp", "*", "chats", "*"]],
        classify: classify_transcript,
        parser: |_| Box::new(ChatFold::new()),
        names: None,
        whole_file: Some(fold_legacy_json),
        full_id: Some(session_id_in),
        project: Some(ProjectFolder {
            parent: "tmp",
            marker: ".project_root",
            registry: "projects.json",
            from_registry: project_root_from_registry,
        }),
        beside: None,
    }),
    listing: None,
    // Static titles that change with the state, padded to 80 characters (docs/formats.md §3.4).
    titles: Some(Grammar {
        animates: false,
        frames: &[],
        busy: &["✦  ", "⏲  "],
        action_required: &["✋  Action Required"],
        idle: &["◇  Ready", "Gemini CLI"],
        otherwise: TitleKind::Other,
    }),
    // Dialogs are boxes at the bottom, the highlighted option marked `●`; the permission box has
    // no key hints, its last option ends in `(esc)` (docs/formats.md §10).
    screens: Some(ScreenGrammar {
        dialogs: &[
            DialogShape {
                kind: DialogKind::Plan,
                footer: "Ctrl+G to edit plan",
                top: Top::Line("Ready to start implementation?"),
                holds: &[],
                options: OptionLayout::Numbered,
                summary: &[("Plan", Summary::After("Ready to start implementation?"))],
                widens: &["automatically", "always"],
                detail: &[],
            },
            DialogShape {
                kind: DialogKind::Question,
                footer: "Enter to select",
                top: Top::Line("Answer Questions"),
                holds: &[],
                options: OptionLayout::Numbered,
                summary: &[("Question", Summary::After("Answer Questions"))],
                widens: &[],
                detail: &[],
            },
            DialogShape {
                kind: DialogKind::Permission,
                footer: "(esc)",
                top: Top::Line("? "),
                holds: &[],
                options: OptionLayout::Numbered,
                summary: &[
                    // The box holds the command; the line heading it holds the command when it
                    // is short, else the call's description (permission-chain.txt).
                    ("Run", Summary::Boxed("? Shell")),
                    ("Run", Summary::Prefix("? Shell")),
                    ("Permission", Summary::Prefix("? ")),
                ],
                widens: &["for this session", "always"],
                detail: &[Detail::Boxed],
            },
        ],
        working: &["esc to cancel"],
        idle: &["Type your message", "for shortcuts"],
        status_lines: 7,
        markers: &["●"],
        margin: 3,
        breaks_after: &[],
        under_dialogs: 0,
    }),
    // Digits pick; Escape rejects. A free answer is paced: the burst lost its text
    // (docs/formats.md §10).
    hooks: Some(&HOOKS),
    recorded: &["0.61.0"],
    keys: Some(DialogKeys {
        deny: Press::Escape,
        confirm_reject: None,
        highlighted: Press::Enter,
        free_text: &["enter a custom value", "type your feedback"],
        text_pause_ms: 700,
        // Gemini CLI records a call only once it has finished, so no pending call is known.
        drawn_inputs: &[],
        lines_under_input: 0,
    }),
};

/// Its own hooks (docs/hooks.md): where they are configured and the events Slate listens to.
static HOOKS: crate::agents::hooks::Hooks = crate::agents::hooks::Hooks {
    file: &[
        (Base::Var("GEMINI_CLI_HOME"), ".gemini/settings.json"),
        (Base::Home, ".gemini/settings.json"),
    ],
    // Milliseconds; `slate hook` returns within 250 ms anyway.
    format: crate::agents::hooks::HookFormat::Matchers { timeout: 5000 },
    events: &[
        ("Notification", crate::agents::hooks::Meaning::Notification),
        ("BeforeTool", crate::agents::hooks::Meaning::ToolStart),
        ("AfterTool", crate::agents::hooks::Meaning::ToolEnd),
        ("BeforeAgent", crate::agents::hooks::Meaning::Prompt),
        ("AfterAgent", crate::agents::hooks::Meaning::TurnEnd),
        ("SessionStart", crate::agents::hooks::Meaning::SessionStart),
        ("SessionEnd", crate::agents::hooks::Meaning::SessionEnd),
    ],
    session: &["/session_id"],
    tool: &["/tool_name", "/details/title"],
    detail: &[
        "/tool_input/command",
        "/tool_input/file_path",
        "/details/command",
        "/details/fileName",
    ],
    notification: &["/notification_type"],
    questions: &[],
    trust: None,
    guarded: true,
    verified: crate::agents::hooks::Verified::ShippedCode,
};

/// Gemini CLI itself.
pub const KIND: AgentKind = AgentKind::of(&DESCRIPTION);

/// `tmp/<project>/chats/session-<minute>-<short id>.jsonl` is a session's chat (the pre-0.39
/// `.json` of the same name is a whole-file chat), and
/// `tmp/<project>/chats/<parentSessionId>/<subSessionId>.jsonl` a sub-agent's, rolled up into the
/// parent (docs/formats.md §3).
///
/// A session's full id is only inside its file (the metadata line's `sessionId`); the file name
/// carries its first 8 characters. The full id is the key everything else uses (a sub-agent's
/// folder, `--resume`), so the sources read it from the first line ([`session_id_in`]) when they
/// first see the file, and keep the short id only when that line names none.
pub fn classify_transcript(parts: &[&str]) -> Option<Found> {
    match parts {
        ["tmp", _, "chats", file] => Some(Found {
            whole_file: !file.ends_with(".jsonl"),
            short_id: true,
            ..Found::main(session_file_id(file)?)
        }),
        ["tmp", _, "chats", parent, file] => {
            let (parent, sub) = subagent_file(parent, file)?;
            Some(Found::subagent(parent, sub))
        }
        _ => None,
    }
}

/// The full session id a chat states: its metadata line's `sessionId` (the first line of a
/// `.jsonl` chat, without its newline), or the whole document's (a legacy `.json` chat).
pub fn session_id_in(bytes: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    let id = value.get("sessionId")?.as_str()?;
    (!id.is_empty()).then(|| id.to_string())
}

/// The short session id in a chat file name: `session-<YYYY-MM-DDTHH-MM>-<8 hex>.jsonl` (or the
/// legacy `.json`) gives the 8 characters. The full id is in the file's metadata.
pub fn session_file_id(file_name: &str) -> Option<String> {
    let stem = file_name.strip_prefix("session-")?;
    let stem = stem
        .strip_suffix(".jsonl")
        .or_else(|| stem.strip_suffix(".json"))?;
    let (minute, short) = stem.rsplit_once('-')?;
    let minute_ok = minute.len() == 16
        && minute.char_indices().all(|(at, c)| match at {
            4 | 7 | 13 => c == '-',
            10 => c == 'T',
            _ => c.is_ascii_digit(),
        });
    let short_ok = short.len() == 8 && short.chars().all(|c| c.is_ascii_hexdigit());
    (minute_ok && short_ok).then(|| short.to_string())
}

/// The parent session id and the sub-agent session id of a sub-agent chat at
/// `chats/<parentSessionId>/<subagentSessionId>.jsonl`, from the folder and file names. The chat's
/// own metadata says only `kind:"subagent"`; the parent is known from the path alone.
pub fn subagent_file(dir_name: &str, file_name: &str) -> Option<(String, String)> {
    let sub = file_name.strip_suffix(".jsonl")?;
    (crate::agents::is_uuid(dir_name) && crate::agents::is_uuid(sub))
        .then(|| (dir_name.to_string(), sub.to_string()))
}

/// The project root a `tmp/<dir>` folder belongs to, from the bytes of `~/.gemini/projects.json`
/// (`{"projects":{"/abs/root":"slug"}}`). A slug dir matches its entry's slug; a legacy
/// `tmp/<sha256>` dir matches the root whose [`hash_for`] it is.
pub fn project_root_from_registry(projects_json: &[u8], tmp_dir_name: &str) -> Option<String> {
    let value: Value = serde_json::from_slice(projects_json).ok()?;
    let projects = value.get("projects")?.as_object()?;
    let by_slug = projects
        .iter()
        .find(|(_, slug)| slug.as_str() == Some(tmp_dir_name));
    if let Some((root, _)) = by_slug {
        return Some(root.clone());
    }
    let is_hash = tmp_dir_name.len() == 64 && tmp_dir_name.chars().all(|c| c.is_ascii_hexdigit());
    if !is_hash {
        return None;
    }
    projects
        .keys()
        .find(|root| hash_for(root).eq_ignore_ascii_case(tmp_dir_name))
        .cloned()
}

/// The base slug Gemini gives a project root's temp folder: its last path component, lower-cased,
/// with every run of characters outside `[a-z0-9]` turned into one `-`, trimmed of `-`. Gemini
/// adds `-1`, `-2`… on a collision, which only `projects.json` records.
pub fn slug_for(root: &str) -> String {
    let base = root
        .trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(root)
        .to_lowercase();
    let mut slug = String::new();
    for c in base.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            slug.push(c);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_matches('-');
    if slug.is_empty() {
        "project".to_string()
    } else {
        slug.to_string()
    }
}

/// The hex SHA-256 of a project root: the name of a pre-0.29 temp folder, and the `projectHash`
/// of every chat's metadata.
pub fn hash_for(root: &str) -> String {
    Sha256::digest(root.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_ids_come_only_from_well_formed_names() {
        assert_eq!(
            session_file_id("session-2026-11-28T10-40-5e1f2a3b.jsonl").as_deref(),
            Some("5e1f2a3b")
        );
        assert_eq!(
            session_file_id("session-2026-01-12T08-00-0b1c2d3e.json").as_deref(),
            Some("0b1c2d3e")
        );
        assert_eq!(
            session_file_id("session-2026-11-28T10-40-5e1f2a3.jsonl"),
            None
        );
        assert_eq!(
            session_file_id("session-2026-11-28-10-40-5e1f2a3b.jsonl"),
            None
        );
        assert_eq!(
            session_file_id("session-2026-11-28T10-40-5e1f2a3b.txt"),
            None
        );
        assert_eq!(session_file_id("logs.json"), None);
        assert_eq!(session_file_id("session-ü"), None);
    }

    #[test]
    fn sub_agent_chats_name_their_parent_by_folder() {
        assert_eq!(
            subagent_file(
                "5e1f2a3b-6c7d-4e8f-9a0b-1c2d3e4f5a6b",
                "9c5d6e7f-0a1b-4c2d-8e3f-5a6b7c8d9e0f.jsonl"
            ),
            Some((
                "5e1f2a3b-6c7d-4e8f-9a0b-1c2d3e4f5a6b".to_string(),
                "9c5d6e7f-0a1b-4c2d-8e3f-5a6b7c8d9e0f".to_string()
            ))
        );
        assert_eq!(
            subagent_file("chats", "session-2026-11-28T10-40-5e1f2a3b.jsonl"),
            None
        );
        assert_eq!(
            subagent_file(
                "5e1f2a3b-6c7d-4e8f-9a0b-1c2d3e4f5a6b",
                "9c5d6e7f-0a1b-4c2d-8e3f-5a6b7c8d9e0f.json"
            ),
            None
        );
    }

    #[test]
    fn slugs_follow_the_last_path_component() {
        assert_eq!(slug_for("/home/dev/acme-api"), "acme-api");
        assert_eq!(slug_for("/home/dev/My Project_2/"), "my-project-2");
        assert_eq!(slug_for("C:\\Users\\dev\\Über"), "ber");
        assert_eq!(slug_for("/"), "project");
    }

    #[test]
    fn uuids_are_full_uuids() {
        assert!(crate::agents::is_uuid(
            "5e1f2a3b-6c7d-4e8f-9a0b-1c2d3e4f5a6b"
        ));
        assert!(!crate::agents::is_uuid("latest"));
        assert!(!crate::agents::is_uuid("3"));
        assert!(!crate::agents::is_uuid(
            "5e1f2a3b-6c7d-4e8f-9a0b-1c2d3e4f5a6"
        ));
    }
}
