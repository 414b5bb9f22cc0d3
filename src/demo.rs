//! The demo: five made-up Claude Code sessions that play through every state in a temporary
//! HOME, so someone with no agent installed can watch Slate work (`slate-app --demo`).
//!
//! [`script`] is the timeline as plain data: which session gets which transcript lines, and what
//! the agent's own registry (`sessions/<pid>.json`) says about it, at which second. [`start`]
//! writes the first moment into a fresh temporary HOME, plays the rest on a thread, and returns
//! the `Env` pointing there plus a shared process table that vouches for the sessions' made-up
//! processes (and from which a process is removed when its session's agent "exits").
//! Everything downstream (watcher, tracker, API, tray) is the real thing; the demo only writes
//! files the way Claude Code does.
//!
//! It deliberately decides nothing: the states the sessions reach are whatever the tracker makes
//! of the files and the table. The engine must be given the demo's `ProcessSource::Shared` in
//! demo mode, since the pids are invented.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::engine::ProcessSource;
use slate_core::model::{ProcessInfo, ProcessTable, Timestamp};
use slate_sources::sources::roots::Env;

/// One made-up session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoSession {
    pub id: &'static str,
    pub pid: u32,
    pub project: &'static str,
    pub title: &'static str,
    pub prompt: &'static str,
}

/// The demo's sessions; the index is what [`Step::session`] refers to.
pub const SESSIONS: [DemoSession; 5] = [
    DemoSession {
        id: "de300001-0000-4000-8000-00000000a001",
        pid: 910001,
        project: "acme-api",
        title: "Rate limiting for the login endpoint",
        prompt: "Add rate limiting to the login endpoint",
    },
    DemoSession {
        id: "de300002-0000-4000-8000-00000000a002",
        pid: 910002,
        project: "web-dashboard",
        title: "Faster chart loading",
        prompt: "Make the dashboard charts load faster",
    },
    DemoSession {
        id: "de300003-0000-4000-8000-00000000a003",
        pid: 910003,
        project: "docs-site",
        title: "Upgrade guide for v3",
        prompt: "Write the upgrade guide for v3",
    },
    DemoSession {
        id: "de300004-0000-4000-8000-00000000a004",
        pid: 910004,
        project: "billing",
        title: "Rename the invoice tables",
        prompt: "Rename the invoice tables to match the new schema",
    },
    DemoSession {
        id: "de300005-0000-4000-8000-00000000a005",
        pid: 910005,
        project: "ml-pipeline",
        title: "Retrain the ranking model",
        prompt: "Retrain the ranking model on November's data",
    },
];

/// One transcript record, rendered with the moment it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Prompt,
    Title,
    ToolUse {
        call_id: &'static str,
        name: &'static str,
        /// The tool's `input` object as JSON.
        input: &'static str,
    },
    ToolResult {
        call_id: &'static str,
    },
    Text(&'static str),
    TurnEnd,
}

/// What the agent's registry says about a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registry {
    Busy,
    Idle,
    /// Waiting, with Claude Code's `waitingFor` text.
    Waiting(&'static str),
    /// The registry file is gone: the agent no longer lists the session.
    Gone,
}

/// One moment of the timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Since the demo started.
    pub at: Duration,
    /// An index into [`SESSIONS`].
    pub session: usize,
    pub lines: Vec<Line>,
    pub registry: Option<Registry>,
    /// The session's process exits (and the agent removes its registry file).
    pub exits: bool,
}

/// The whole timeline, in order: every session starts working at once; then one asks permission,
/// one finishes its turn, one asks a question and one closes (its process exits), while the last
/// keeps working.
pub fn script() -> Vec<Step> {
    let start = |session: usize, call_id, name, input| Step {
        at: Duration::ZERO,
        session,
        lines: vec![
            Line::Prompt,
            Line::Title,
            Line::ToolUse {
                call_id,
                name,
                input,
            },
        ],
        registry: Some(Registry::Busy),
        exits: false,
    };
    vec![
        start(
            0,
            "toolu_demo_a1",
            "Bash",
            r#"{"command":"cargo test -p auth"}"#,
        ),
        start(1, "toolu_demo_b1", "Bash", r#"{"command":"npm run build"}"#),
        start(
            2,
            "toolu_demo_c1",
            "Read",
            r#"{"file_path":"docs/upgrading.md"}"#,
        ),
        start(
            3,
            "toolu_demo_d1",
            "Bash",
            r#"{"command":"sqlx migrate run"}"#,
        ),
        start(
            4,
            "toolu_demo_e1",
            "Bash",
            r#"{"command":"python train.py --epochs 40"}"#,
        ),
        Step {
            at: Duration::from_secs(8),
            session: 0,
            lines: vec![
                Line::ToolResult {
                    call_id: "toolu_demo_a1",
                },
                Line::ToolUse {
                    call_id: "toolu_demo_a2",
                    name: "Edit",
                    input: r#"{"file_path":"src/limits.rs","old_string":"","new_string":"pub const MAX: u32 = 5;"}"#,
                },
            ],
            registry: Some(Registry::Waiting("permission prompt")),
            exits: false,
        },
        Step {
            at: Duration::from_secs(14),
            session: 1,
            lines: vec![
                Line::ToolResult {
                    call_id: "toolu_demo_b1",
                },
                Line::Text("The charts now load lazily; the bundle is 38% smaller."),
                Line::TurnEnd,
            ],
            registry: Some(Registry::Idle),
            exits: false,
        },
        Step {
            at: Duration::from_secs(20),
            session: 2,
            lines: vec![
                Line::ToolResult {
                    call_id: "toolu_demo_c1",
                },
                Line::ToolUse {
                    call_id: "toolu_demo_c2",
                    name: "AskUserQuestion",
                    input: r#"{"questions":[{"question":"Should the guide cover upgrading from v1 too?","options":[{"label":"Yes"},{"label":"No"}]}]}"#,
                },
            ],
            registry: Some(Registry::Waiting("permission prompt")),
            exits: false,
        },
        Step {
            at: Duration::from_secs(26),
            session: 3,
            lines: vec![],
            registry: Some(Registry::Gone),
            exits: true,
        },
    ]
}

/// The folder a demo session works in, inside the demo HOME.
pub fn folder(home: &Path, session: &DemoSession) -> PathBuf {
    home.join("code").join(session.project)
}

/// The transcript path, named the way Claude Code names it: the folder with every
/// non-alphanumeric character turned into `-`.
pub fn transcript_path(home: &Path, session: &DemoSession) -> PathBuf {
    let folder = folder(home, session).to_string_lossy().into_owned();
    let project_dir: String = folder
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    home.join(".claude/projects")
        .join(project_dir)
        .join(format!("{}.jsonl", session.id))
}

fn registry_path(home: &Path, session: &DemoSession) -> PathBuf {
    home.join(".claude/sessions")
        .join(format!("{}.json", session.pid))
}

/// Process start times in clock ticks, made up but fixed, so the registry's `procStart` matches.
fn start_ticks(session: &DemoSession) -> u64 {
    u64::from(session.pid) * 10
}

/// Renders one transcript line as Claude Code writes it.
pub fn render_line(home: &Path, session: &DemoSession, line: &Line, at: Timestamp) -> String {
    let cwd = folder(home, session).to_string_lossy().into_owned();
    let common = serde_json::json!({
        "sessionId": session.id,
        "cwd": cwd,
        "version": "2.1.332",
        "timestamp": at.to_string(),
        "uuid": format!("{}-{}", session.id, at.millis()),
        "isSidechain": false,
    });
    let mut value = match line {
        Line::Prompt => serde_json::json!({
            "type": "user",
            "message": {"role": "user", "content": session.prompt},
        }),
        Line::Title => serde_json::json!({"type": "ai-title", "aiTitle": session.title}),
        Line::ToolUse {
            call_id,
            name,
            input,
        } => serde_json::json!({
            "type": "assistant",
            "message": {
                "role": "assistant",
                "model": "claude-opus-5-5",
                "content": [{
                    "type": "tool_use",
                    "id": call_id,
                    "name": name,
                    "input": serde_json::from_str::<serde_json::Value>(input)
                        .unwrap_or(serde_json::Value::Null),
                }],
            },
        }),
        Line::ToolResult { call_id } => serde_json::json!({
            "type": "user",
            "message": {"role": "user", "content": [{
                "type": "tool_result", "tool_use_id": call_id, "content": "ok", "is_error": false,
            }]},
        }),
        Line::Text(text) => serde_json::json!({
            "type": "assistant",
            "message": {
                "role": "assistant",
                "model": "claude-opus-5-5",
                "content": [{"type": "text", "text": text}],
            },
        }),
        Line::TurnEnd => serde_json::json!({
            "type": "system", "subtype": "turn_duration", "durationMs": 14000,
        }),
    };
    if let (Some(object), Some(extra)) = (value.as_object_mut(), common.as_object()) {
        for (key, field) in extra {
            object.entry(key.clone()).or_insert(field.clone());
        }
    }
    value.to_string()
}

/// Renders a registry file as Claude Code writes it (docs/formats.md §1.1).
pub fn render_registry(
    home: &Path,
    session: &DemoSession,
    registry: Registry,
    started: Timestamp,
    at: Timestamp,
) -> Option<String> {
    let (status, waiting_for) = match registry {
        Registry::Busy => ("busy", None),
        Registry::Idle => ("idle", None),
        Registry::Waiting(what) => ("waiting", Some(what)),
        Registry::Gone => return None,
    };
    let mut value = serde_json::json!({
        "pid": session.pid,
        "sessionId": session.id,
        "cwd": folder(home, session).to_string_lossy(),
        "startedAt": started.millis(),
        "procStart": start_ticks(session).to_string(),
        "version": "2.1.332",
        "kind": "interactive",
        "entrypoint": "cli",
        "status": status,
        "updatedAt": at.millis(),
        "statusUpdatedAt": at.millis(),
    });
    if let (Some(object), Some(what)) = (value.as_object_mut(), waiting_for) {
        object.insert("waitingFor".to_string(), what.into());
    }
    Some(value.to_string())
}

/// The recorded process table that vouches for the demo's sessions.
pub fn process_table(home: &Path, started: Timestamp) -> ProcessTable {
    ProcessTable {
        processes: SESSIONS
            .iter()
            .map(|session| ProcessInfo {
                pid: session.pid,
                ppid: Some(1),
                name: "claude".to_string(),
                exe: None,
                cmd: vec!["claude".to_string()],
                cwd: Some(folder(home, session).to_string_lossy().into_owned()),
                start_time: started,
                start_ticks: Some(start_ticks(session)),
            })
            .collect(),
    }
}

/// Writes one step's files, and removes the session's process from `processes` when it exits.
pub fn apply(
    home: &Path,
    processes: &Mutex<ProcessTable>,
    step: &Step,
    started: Timestamp,
    at: Timestamp,
) -> io::Result<()> {
    let Some(session) = SESSIONS.get(step.session) else {
        return Ok(());
    };
    if step.exits {
        if let Ok(mut table) = processes.lock() {
            table.processes.retain(|process| process.pid != session.pid);
        }
    }
    if !step.lines.is_empty() {
        let path = transcript_path(home, session);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        let mut text = String::new();
        for line in &step.lines {
            text.push_str(&render_line(home, session, line, at));
            text.push('\n');
        }
        // One write per step, so the watcher never sees half a step.
        file.write_all(text.as_bytes())?;
    }
    if let Some(registry) = step.registry {
        let path = registry_path(home, session);
        match render_registry(home, session, registry, started, at) {
            Some(text) => {
                if let Some(parent) = path.parent() {
                    fs::create_dir_all(parent)?;
                }
                // Written aside and renamed, as Claude Code does, so no reader sees half a file.
                let aside = path.with_extension("json.tmp");
                fs::write(&aside, text)?;
                fs::rename(&aside, &path)?;
            }
            None => match fs::remove_file(&path) {
                Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
                _ => {}
            },
        }
    }
    Ok(())
}

#[derive(Debug, thiserror::Error)]
#[error("cannot prepare the demo in {path}: {source}")]
pub struct DemoError {
    path: PathBuf,
    source: io::Error,
}

/// A running demo. Dropping it stops the player and removes the temporary HOME.
pub struct Demo {
    pub env: Env,
    pub processes: ProcessSource,
    pub home: PathBuf,
    stop: Arc<AtomicBool>,
    player: Option<JoinHandle<()>>,
}

impl Drop for Demo {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(player) = self.player.take() {
            player.thread().unpark();
            let _ = player.join();
        }
        let _ = fs::remove_dir_all(&self.home);
    }
}

/// Creates a temporary HOME under `parent` (the system's temp folder when `None`), writes the
/// demo's first moment, and plays the rest of [`script`] on a thread, reading the time from
/// `clock`.
pub fn start(parent: Option<&Path>, clock: fn() -> Timestamp) -> Result<Demo, DemoError> {
    let parent = parent.map_or_else(std::env::temp_dir, Path::to_path_buf);
    let started = clock();
    let home = parent.join(format!(
        "slate-demo-{}-{}",
        std::process::id(),
        started.millis()
    ));
    let fail = |source| DemoError {
        path: home.clone(),
        source,
    };
    fs::create_dir_all(&home).map_err(fail)?;
    for session in &SESSIONS {
        fs::create_dir_all(folder(&home, session)).map_err(fail)?;
    }
    let table = Arc::new(Mutex::new(process_table(&home, started)));
    let (now, later): (Vec<Step>, Vec<Step>) =
        script().into_iter().partition(|step| step.at.is_zero());
    for step in &now {
        apply(&home, &table, step, started, started).map_err(fail)?;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let player = {
        let home = home.clone();
        let stop = stop.clone();
        let table = table.clone();
        std::thread::Builder::new()
            .name("slate-demo".to_string())
            .spawn(move || play(&home, &table, later, started, clock, &stop))
            .map_err(fail)?
    };
    Ok(Demo {
        env: Env {
            home: Some(home.clone()),
            xdg_data_home: Some(home.join(".local/share")),
            xdg_config_home: Some(home.join(".config")),
            ..Env::default()
        },
        processes: ProcessSource::Shared(table),
        home,
        stop,
        player: Some(player),
    })
}

fn play(
    home: &Path,
    table: &Mutex<ProcessTable>,
    steps: Vec<Step>,
    started: Timestamp,
    clock: fn() -> Timestamp,
    stop: &AtomicBool,
) {
    for step in steps {
        let due = started.plus(step.at);
        loop {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let wait = due.millis() - clock().millis();
            if wait <= 0 {
                break;
            }
            std::thread::park_timeout(Duration::from_millis(wait as u64));
        }
        if let Err(err) = apply(home, table, &step, started, clock()) {
            tracing::warn!("the demo could not write its next step: {err}");
        }
    }
}
