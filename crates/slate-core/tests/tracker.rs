//! The tracker's state rules with a fake clock. The scenario format is defined here: each scenario
//! in `fixtures/scenarios/*.toml` is data, timed inputs and the statuses expected at given times.

mod closed; // every agent's session closed at the scan that finds its process gone
mod dialogs; // a dialog and the open call it agrees with
mod history; // closed history as summaries, and a session waiting for a scan
mod replay; // every scenario replayed, and each quiet flip announced

use serde::Deserialize;
use slate_core::agents::{CallKind, RecordKind};
use slate_core::model::{AgentKind, Awaiting, Timestamp};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    /// The rule of docs/states.md the scenario shows, as section and rule, e.g. "3.6a".
    rule: String,
    description: String,
    #[serde(default = "default_agent")]
    agent: String,
    #[serde(default)]
    step: Vec<Step>,
    expect: Vec<Expect>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    /// Seconds after the scenario's start.
    at: f64,
    #[serde(default = "default_session")]
    session: String,
    #[serde(default)]
    folder: Option<String>,
    #[serde(default)]
    print_mode: Option<bool>,
    #[serde(default)]
    parent: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    record: Option<RecordSpec>,
    /// A write to a sub-agent transcript of `session`, with this sub-agent id.
    #[serde(default)]
    subagent: Option<String>,
    /// A full process scan: exactly these agent processes are alive.
    #[serde(default)]
    processes: Option<Vec<ProcessSpec>>,
    #[serde(default)]
    listing: Option<ListingSpec>,
    /// The user sets (or, with `state = "none"`, clears) `session`'s intent.
    #[serde(default)]
    intent: Option<IntentSpec>,
    /// The work items now (replacing the earlier list).
    #[serde(default)]
    items: Option<Vec<ItemSpec>>,
    /// The claims held now (replacing the earlier list), claimed at this step's time.
    #[serde(default)]
    claims: Option<Vec<ClaimSpec>>,
    /// A report from a hosted session's terminal.
    #[serde(default)]
    hosted: Option<HostedSpec>,
    /// Where the terminals of live processes are (replacing the earlier list).
    #[serde(default)]
    terminals: Option<Vec<TerminalSpec>>,
    /// One reading of `session`'s terminal from outside (a tmux pane, a kitty window).
    #[serde(default)]
    sensed: Option<SensedSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TerminalSpec {
    pid: u32,
    kind: slate_core::model::TerminalKind,
    #[serde(default)]
    pane: Option<String>,
    #[serde(default = "yes")]
    sensed: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SensedSpec {
    #[serde(default)]
    title: Option<String>,
    /// What the screen shows: permission, question, plan, idle, working or unknown.
    #[serde(default)]
    screen: Option<slate_core::agents::screens::ScreenKind>,
    #[serde(default)]
    summary: Option<String>,
    /// A dialog's options, numbered from 1 in this order (the first highlighted).
    #[serde(default)]
    options: Vec<String>,
    /// The terminal could not be read: what it showed is forgotten.
    #[serde(default)]
    unreadable: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct IntentSpec {
    state: String,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    awaiting_who: Option<Awaiting>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ItemSpec {
    id: String,
    #[serde(default = "default_item_status")]
    status: String,
    #[serde(default)]
    deps: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClaimSpec {
    item: String,
    #[serde(default = "default_session")]
    session: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HostedSpec {
    /// Titles seen, as `[seconds, "title"]`, oldest first.
    #[serde(default)]
    titles: Vec<(f64, String)>,
    #[serde(default)]
    last_draw: Option<f64>,
    /// Report by the hosted process's pid instead of the session key, as `slate run` does.
    #[serde(default)]
    pid: Option<u32>,
    /// The control socket the report names, through which the screen is read.
    #[serde(default)]
    control: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordSpec {
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    detail: Option<String>,
    #[serde(default)]
    call: Option<String>,
    #[serde(default)]
    turn_id: Option<String>,
    /// Seconds; the record's own time when it differs from the write (out-of-order lines).
    #[serde(default)]
    stamped: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProcessSpec {
    pid: u32,
    folder: String,
    /// Seconds after the scenario's start (negative: before it).
    start: f64,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    session: Option<String>,
    #[serde(default)]
    ticks: Option<u64>,
    #[serde(default)]
    agent: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListingSpec {
    available: bool,
    #[serde(default)]
    entries: Vec<ListedSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListedSpec {
    session: String,
    #[serde(default)]
    pid: Option<u32>,
    #[serde(default)]
    proc_start: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    waiting_for: Option<String>,
    #[serde(default)]
    interactive: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    at: f64,
    #[serde(default = "default_session")]
    session: String,
    status: String,
    reason: String,
    #[serde(default)]
    presence: Option<String>,
    #[serde(default)]
    activity: Option<String>,
    #[serde(default)]
    next_actor: Option<String>,
    /// The intent's state: none, parked or awaiting.
    #[serde(default)]
    intent: Option<String>,
    #[serde(default)]
    holds_work_claim: Option<bool>,
    #[serde(default)]
    reclaimable: Option<bool>,
    /// What `notifications_muted` says.
    #[serde(default)]
    muted: Option<bool>,
    #[serde(default)]
    pid: Option<u32>,
    #[serde(default)]
    hosted: Option<bool>,
    /// The kind of the session's `terminal` (`none` for no terminal).
    #[serde(default)]
    terminal: Option<String>,
    /// Whether the session is among those whose terminal a reading could change.
    #[serde(default)]
    read: Option<bool>,
    /// The summary of the dialog the session object carries (`none` for none), both as the
    /// tracker holds it and as its last change published it.
    #[serde(default)]
    dialog: Option<String>,
}

/// The dialog a sensed step's screen shows, when it lists options.
fn dialog_of(spec: &SensedSpec) -> Option<slate_core::agents::screens::Dialog> {
    use slate_core::agents::screens::{Dialog, DialogKind, DialogOption, ScreenKind};
    let kind = match spec.screen? {
        ScreenKind::Permission => DialogKind::Permission,
        ScreenKind::Question => DialogKind::Question,
        ScreenKind::Plan => DialogKind::Plan,
        _ => return None,
    };
    (!spec.options.is_empty()).then(|| Dialog {
        kind,
        summary: spec.summary.clone().unwrap_or_default(),
        detail: Vec::new(),
        cut: false,
        options: spec
            .options
            .iter()
            .zip(1..)
            .map(|(label, number)| DialogOption {
                label: label.clone(),
                number: Some(number),
                highlighted: number == 1,
                widens: false,
            })
            .collect(),
    })
}

fn default_item_status() -> String {
    "ready".to_string()
}

fn default_agent() -> String {
    "claude-code".to_string()
}

fn default_session() -> String {
    "s1".to_string()
}

const BASE_MS: i64 = 1_795_946_400_000; // 2026-11-28T10:00:00Z

fn at(seconds: f64) -> Timestamp {
    Timestamp::from_millis(BASE_MS + (seconds * 1000.0).round() as i64)
}

fn record(spec: &RecordSpec, write: f64) -> RecordKind {
    let text = || spec.text.clone().unwrap_or_default();
    let call_id = || spec.call_id.clone().expect("tool records need call_id");
    match spec.kind.as_str() {
        "prompt" => RecordKind::Prompt { text: text() },
        "tool_call" => RecordKind::ToolCall {
            call_id: call_id(),
            name: spec.name.clone().unwrap_or_else(|| "Bash".to_string()),
            detail: spec.detail.clone(),
            input: None,
            kind: match spec.call.as_deref().unwrap_or("plain") {
                "plain" => CallKind::Plain,
                "question" => CallKind::Question,
                "plan" => CallKind::PlanApproval,
                "subagent" => CallKind::SubAgent,
                "escalated" => CallKind::Escalated,
                other => panic!("unknown call kind {other}"),
            },
        },
        "tool_result" => RecordKind::ToolResult {
            call_id: call_id(),
            rejected: false,
        },
        "text" => RecordKind::ModelText,
        "thinking" => RecordKind::ModelThinking,
        "turn_started" => RecordKind::TurnStarted {
            turn_id: spec.turn_id.clone(),
        },
        "turn_ended" => RecordKind::TurnEnded {
            turn_id: spec.turn_id.clone(),
        },
        "interrupted" => RecordKind::Interrupted {
            turn_id: spec.turn_id.clone(),
        },
        "turn_failed" => RecordKind::TurnFailed {
            message: spec.text.clone(),
        },
        "retrying" => RecordKind::Retrying,
        "compacting" => RecordKind::Compacting,
        "session_ended" => RecordKind::SessionEnded,
        "unsettled" => RecordKind::Unsettled,
        // `call_id` is the work's id; `name` says what runs: "command" or "agent".
        "background_started" => RecordKind::BackgroundStarted {
            id: call_id(),
            work: match spec.name.as_deref().unwrap_or("command") {
                "command" => slate_core::agents::Background::Command,
                "agent" => slate_core::agents::Background::Agent,
                other => panic!("unknown background work {other}"),
            },
        },
        "background_ended" => RecordKind::BackgroundEnded { id: call_id() },
        other => panic!("unknown record kind {other} (at {write}s)"),
    }
}

fn agent(name: &str) -> AgentKind {
    AgentKind::parse(name).unwrap_or_else(|| panic!("unknown agent {name}"))
}
