//! Reading terminal titles with an agent's title grammar (docs/formats.md §1.5, §2.4, §3.4, §4.4,
//! §9).
//!
//! A hosted session's pseudo-terminal sees the titles the agent sets with OSC 0/2. This module
//! says what one title means for one agent: a spinner frame (the title animates while the agent
//! works), a static "busy" state, an idle or static title, or a request for the user's action.
//! Each agent's [`Grammar`] is data in its description (`agents::<agent>::DESCRIPTION.titles`);
//! [`classify_title`] reads it. It deliberately knows nothing about time: whether a title is
//! *moving* is the tracker's question, answered from the times at which titles were seen.

use crate::model::AgentKind;

/// What one terminal title says about its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TitleKind {
    /// One frame of a spinner: the agent animates its title while it works, so a run of these
    /// titles changing is the evidence, not any one of them.
    Frame,
    /// A static title that says the agent is working (Gemini's `✦  Working…`).
    Busy,
    /// A static title that says nothing is running: idle, or a dialog the title does not tell apart.
    Idle,
    /// The agent asks for the user's action: an approval or a confirmation dialog.
    ActionRequired,
    /// A title this agent's grammar does not know, or an empty one.
    Other,
}

/// One agent's title grammar, part of its description. Prefixes are matched against the title
/// with trailing padding removed; a spinner frame must be followed by a space.
#[derive(Debug, Clone, Copy)]
pub struct Grammar {
    /// True when the agent animates its title while working, so a title that stops changing
    /// means the work stopped (docs/states.md §3 rule 5).
    pub animates: bool,
    /// Spinner frames that prefix the title while the agent works.
    pub frames: &'static [&'static str],
    /// Prefixes of static titles that say the agent is working.
    pub busy: &'static [&'static str],
    /// Prefixes of titles that ask for the user's action.
    pub action_required: &'static [&'static str],
    /// Prefixes of titles that say the agent is idle.
    pub idle: &'static [&'static str],
    /// What any other non-empty title means.
    pub otherwise: TitleKind,
}

impl Grammar {
    /// The grammar of an agent whose titles say nothing of its state (a name, a session's
    /// title): each reads as `Other`, and none animates.
    pub const SILENT: Grammar = Grammar {
        animates: false,
        frames: &[],
        busy: &[],
        action_required: &[],
        idle: &[],
        otherwise: TitleKind::Other,
    };
}

/// The grammar of one agent, if its titles are known (cursor-agent's are not).
pub fn grammar(agent: AgentKind) -> Option<&'static Grammar> {
    agent.description()?.titles.as_ref()
}

/// What `title` means for `agent`.
pub fn classify_title(agent: AgentKind, title: &str) -> TitleKind {
    let title = title.trim_end();
    let Some(grammar) = grammar(agent) else {
        return TitleKind::Other;
    };
    if title.is_empty() {
        return TitleKind::Other;
    }
    let starts = |prefixes: &[&str]| prefixes.iter().any(|prefix| title.starts_with(prefix));
    let framed = grammar.frames.iter().any(|frame| {
        title
            .strip_prefix(frame)
            .is_some_and(|rest| rest.starts_with(' '))
    });
    if framed {
        TitleKind::Frame
    } else if starts(grammar.action_required) {
        TitleKind::ActionRequired
    } else if starts(grammar.busy) {
        TitleKind::Busy
    } else if starts(grammar.idle) {
        TitleKind::Idle
    } else {
        grammar.otherwise
    }
}

/// True when `agent` animates its title while it works.
pub fn animates(agent: AgentKind) -> bool {
    grammar(agent).is_some_and(|grammar| grammar.animates)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_titles_classify() {
        let cases = [
            (AgentKind::CLAUDE_CODE, "◐ Claude Code", TitleKind::Frame),
            (AgentKind::CLAUDE_CODE, "⠐ Fix the tests", TitleKind::Frame),
            (AgentKind::CLAUDE_CODE, "✳ Claude Code", TitleKind::Idle),
            (AgentKind::CLAUDE_CODE, "◐", TitleKind::Other),
            (AgentKind::CODEX, "⠦ acme-api", TitleKind::Frame),
            (AgentKind::CODEX, "acme-api", TitleKind::Idle),
            (
                AgentKind::CODEX,
                "[ . ] Action Required | acme-api",
                TitleKind::ActionRequired,
            ),
            (AgentKind::GEMINI_CLI, "◇  Ready (acme)   ", TitleKind::Idle),
            (AgentKind::GEMINI_CLI, "✦  Working… (acme)", TitleKind::Busy),
            (AgentKind::GEMINI_CLI, "⏲  Working… (acme)", TitleKind::Busy),
            (
                AgentKind::GEMINI_CLI,
                "✋  Action Required (acme)",
                TitleKind::ActionRequired,
            ),
            (AgentKind::OPENCODE, "OC | Fix it", TitleKind::Idle),
            (AgentKind::CURSOR_AGENT, "anything", TitleKind::Other),
            (AgentKind::CODEX, "", TitleKind::Other),
        ];
        for (agent, title, kind) in cases {
            assert_eq!(classify_title(agent, title), kind, "{agent:?} {title:?}");
        }
    }
}
