//! Decisions through an agent's own hook (docs/hooks.md, "Decision hooks"): which agents' hooks
//! may wait for the person's answer from Slate, how long, the call a waiting hook holds, its
//! fingerprint, and what the hook prints for each verdict.
//!
//! Only an agent whose terminal dialog stays drawn and usable while its hook runs is here (Claude
//! Code, seen by running its pinned version): there the terminal and Slate both offer the answer
//! and the first one wins. An agent that would hide its dialog while the hook waits keeps
//! observe-only hooks. Pure: the `slate` crate's `hooks` runs the hook and its `answers` keeps the
//! waiting calls.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{clean, valid_id, FIELD_LIMIT};

/// The word that makes `slate hook AGENT EVENT` a decision hook.
pub const ANSWER_FLAG: &str = "--answer";

/// The most of a call's input (its JSON text, every line) a decision may be about: a larger
/// input is never offered from Slate, and its hook returns no decision.
pub const INPUT_LIMIT: usize = 8 * 1024;

/// How long a decision hook waits for a running Slate to say it holds the call: past it, no
/// Slate answers, and the hook returns no decision.
pub const ANSWERED_WITHIN: Duration = Duration::from_millis(250);

/// An agent whose hook may wait for a decision from Slate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decides {
    /// The agent's id (`Description::id`).
    pub agent: &'static str,
    /// The event whose hook decides.
    pub event: &'static str,
    /// The timeout Slate's decision entry gives the agent, in the agent's unit.
    pub timeout: u64,
    /// The longest the hook waits for the person: under the entry's timeout, so the hook ends
    /// with no decision before the agent would stop it.
    pub bound: Duration,
    /// The tools whose call is a question or a plan, not a permission: never decided here (an
    /// allow would answer nothing the person chose).
    pub questions: &'static [&'static str],
}

/// The agents whose dialog stays usable while a decision hook waits (docs/hooks.md's table).
pub const DECIDERS: &[Decides] = &[Decides {
    agent: "claude-code",
    event: "PermissionRequest",
    timeout: 330,
    bound: Duration::from_secs(300),
    questions: &["AskUserQuestion", "ExitPlanMode"],
}];

/// The decision hook of the agent with id `agent`, when its dialog stays usable.
pub fn decides(agent: &str) -> Option<&'static Decides> {
    DECIDERS.iter().find(|decides| decides.agent == agent)
}

/// The call a decision hook holds, as the agent handed it: what `POST /hooks/decision` takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookCall {
    pub agent: String,
    pub session_id: String,
    /// The tool call's id, where the event carries one (Claude Code 2.1.332's
    /// `PermissionRequest` carries none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    pub tool: String,
    /// The call's whole input: its JSON text as the agent sent it, every line.
    pub input: String,
    /// The folder the agent works in.
    pub cwd: String,
}

/// Why a call is not one Slate may offer to decide.
pub fn refused(call: &HookCall) -> Option<String> {
    let Some(decides) = decides(&call.agent) else {
        return Some("this agent's hook cannot decide with its dialog kept usable".into());
    };
    if decides.questions.contains(&call.tool.as_str()) {
        return Some("a question or a plan is answered in its terminal".into());
    }
    if !valid_id(&call.session_id) {
        return Some("the session id is not one Slate reads".into());
    }
    if call.call_id.as_deref().is_some_and(|id| !valid_id(id)) {
        return Some("the call id is not one Slate reads".into());
    }
    if call.tool.is_empty() || clean(&call.tool, FIELD_LIMIT) != call.tool {
        return Some("the tool's name is empty, too long or holds control characters".into());
    }
    if call.input.len() > INPUT_LIMIT {
        return Some(format!(
            "the call's input is {} bytes; at most {INPUT_LIMIT} are offered",
            call.input.len()
        ));
    }
    if call.cwd.is_empty() || call.cwd.len() > 4096 || call.cwd.contains('\0') {
        return Some("the working folder is empty, too long or holds a NUL".into());
    }
    None
}

impl HookCall {
    /// The call in the event `value` of the agent's decision hook, or `None` when it lacks a
    /// field: the session (`session_id`), the tool (`tool_name`), its input (`tool_input`, kept
    /// as its JSON text) and the folder (`cwd`).
    pub fn of(agent: &str, value: &Value) -> Option<HookCall> {
        let text = |key: &str| value.get(key)?.as_str().map(str::to_string);
        let input = value.get("tool_input")?;
        Some(HookCall {
            agent: agent.to_string(),
            session_id: text("session_id")?,
            call_id: text("tool_use_id"),
            tool: text("tool_name")?,
            input: serde_json::to_string_pretty(input).ok()?,
            cwd: text("cwd")?,
        })
    }

    /// The input's lines, for the dialog's detail: a shell command's every line, or the JSON.
    pub fn lines(&self) -> Vec<String> {
        let command = serde_json::from_str::<Value>(&self.input)
            .ok()
            .and_then(|value| value.get("command")?.as_str().map(str::to_string));
        command
            .unwrap_or_else(|| self.input.clone())
            .lines()
            .map(|line| clean(line, usize::MAX))
            .collect()
    }
}

/// The fingerprint of a waiting call: 16 lowercase hex digits of SHA-256 over the agent, the
/// session, the call's id, the tool, the whole input, the folder and `nonce` (the waiting
/// hook's own, so the same command asked twice is two decisions), each ended by a NUL.
pub fn fingerprint(call: &HookCall, nonce: &str) -> String {
    let mut hash = Sha256::new();
    for part in [
        "hook-decision",
        call.agent.as_str(),
        call.session_id.as_str(),
        call.call_id.as_deref().unwrap_or(""),
        call.tool.as_str(),
        call.input.as_str(),
        call.cwd.as_str(),
        nonce,
    ] {
        hash.update(part.len().to_string().as_bytes());
        hash.update([0]);
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    hash.finalize()[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// What the person decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Allow,
    Deny,
}

/// The reason a denied call carries to the agent.
pub const DENIED: &str = "denied from Slate";

/// What the agent's decision hook prints for `verdict` on standard output.
pub fn output(agent: &str, verdict: Verdict) -> Option<String> {
    let decides = decides(agent)?;
    let decision = match verdict {
        Verdict::Allow => serde_json::json!({ "behavior": "allow" }),
        Verdict::Deny => serde_json::json!({ "behavior": "deny", "message": DENIED }),
    };
    Some(
        serde_json::json!({
            "hookSpecificOutput": {
                "hookEventName": decides.event,
                "decision": decision,
            }
        })
        .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> HookCall {
        HookCall::of(
            "claude-code",
            &serde_json::json!({
                "session_id": "s1", "tool_name": "Bash", "cwd": "/w",
                "tool_input": {"command": "touch a &&\ncurl x | sh"}
            }),
        )
        .unwrap()
    }

    #[test]
    fn every_part_of_the_call_changes_the_fingerprint() {
        let base = fingerprint(&call(), "n");
        assert_eq!(base.len(), 16);
        let mut other = call();
        other.input = other.input.replace("sh", "bash");
        assert_ne!(fingerprint(&other, "n"), base);
        let mut other = call();
        other.cwd = "/x".into();
        assert_ne!(fingerprint(&other, "n"), base);
        let mut other = call();
        other.session_id = "s2".into();
        assert_ne!(fingerprint(&other, "n"), base);
        assert_ne!(fingerprint(&call(), "m"), base);
        assert_eq!(fingerprint(&call(), "n"), base);
    }

    #[test]
    fn the_lines_are_every_line_of_the_command() {
        assert_eq!(call().lines(), vec!["touch a &&", "curl x | sh"]);
    }

    #[test]
    fn only_an_agent_whose_dialog_stays_usable_decides() {
        assert!(refused(&call()).is_none());
        let mut other = call();
        other.agent = "qwen-code".into();
        assert!(refused(&other).is_some());
        let mut question = call();
        question.tool = "AskUserQuestion".into();
        assert!(refused(&question).is_some());
        let mut huge = call();
        huge.input = "x".repeat(INPUT_LIMIT + 1);
        assert!(refused(&huge).is_some());
        assert!(output("qwen-code", Verdict::Allow).is_none());
        let deny: Value =
            serde_json::from_str(&output("claude-code", Verdict::Deny).unwrap()).unwrap();
        assert_eq!(deny["hookSpecificOutput"]["decision"]["behavior"], "deny");
        assert_eq!(deny["hookSpecificOutput"]["decision"]["message"], DENIED);
    }
}
