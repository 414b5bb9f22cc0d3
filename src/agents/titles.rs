//! Each agent's terminal-title grammar, kept as data (FORMATS.md §1.5, §2.4, §3.4, §4.4, §9).
//!
//! A hosted session's pseudo-terminal sees the titles the agent sets with OSC 0/2. This module
//! says what one title means for one agent: a spinner frame (the title animates while the agent
//! works), a static "busy" state, an idle or static title, or a request for the user's action. The
//! table [`GRAMMARS`] is the data; [`classify_title`] reads it. It deliberately knows nothing about
//! time: whether a title is *moving* is the tracker's question, answered from the times at which
//! titles were seen.

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

/// One agent's title grammar. Prefixes are matched against the title with trailing padding
/// removed; a spinner frame must be followed by a space.
#[derive(Debug, Clone, Copy)]
pub struct Grammar {
    pub agent: AgentKind,
    /// True when the agent animates its title while working, so a title that stops changing
    /// means the work stopped (SPEC §3 rule 5).
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

/// The grammars of the agents whose titles are known.
pub const GRAMMARS: &[Grammar] = &[
    // Claude Code: `<frame> <title>` while busy, the frames `◐`/`◑` in 2.1.332 and `⠂`/`⠐` in
    // 2.1.197, about once a second; `✳ <title>` when idle and when a dialog waits.
    Grammar {
        agent: AgentKind::ClaudeCode,
        animates: true,
        frames: &["◐", "◑", "⠂", "⠐"],
        busy: &[],
        action_required: &[],
        idle: &["✳"],
        otherwise: TitleKind::Other,
    },
    // Codex: a braille spinner frame prefixes the title while a task runs (~100 ms a frame); the
    // title blinks between `[ ! ]` and `[ . ] Action Required` while the bottom pane waits; the
    // idle title is the plain project name, or the thread's name and the project.
    Grammar {
        agent: AgentKind::Codex,
        animates: true,
        frames: &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"],
        busy: &[],
        action_required: &["[ ! ] Action Required", "[ . ] Action Required"],
        idle: &[],
        otherwise: TitleKind::Idle,
    },
    // Gemini CLI: static titles that change with the state, padded to 80 characters.
    Grammar {
        agent: AgentKind::GeminiCli,
        animates: false,
        frames: &[],
        busy: &["✦  ", "⏲  "],
        action_required: &["✋  Action Required"],
        idle: &["◇  Ready", "Gemini CLI"],
        otherwise: TitleKind::Other,
    },
    // OpenCode: always static, `OpenCode` on the home screen, `OC | <session title>` in a session.
    Grammar {
        agent: AgentKind::OpenCode,
        animates: false,
        frames: &[],
        busy: &[],
        action_required: &[],
        idle: &["OC | ", "OpenCode"],
        otherwise: TitleKind::Other,
    },
];

/// The grammar of one agent, if its titles are known (cursor-agent's are not).
pub fn grammar(agent: AgentKind) -> Option<&'static Grammar> {
    GRAMMARS.iter().find(|grammar| grammar.agent == agent)
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
            (AgentKind::ClaudeCode, "◐ Claude Code", TitleKind::Frame),
            (AgentKind::ClaudeCode, "⠐ Fix the tests", TitleKind::Frame),
            (AgentKind::ClaudeCode, "✳ Claude Code", TitleKind::Idle),
            (AgentKind::ClaudeCode, "◐", TitleKind::Other),
            (AgentKind::Codex, "⠦ acme-api", TitleKind::Frame),
            (AgentKind::Codex, "acme-api", TitleKind::Idle),
            (
                AgentKind::Codex,
                "[ . ] Action Required | acme-api",
                TitleKind::ActionRequired,
            ),
            (AgentKind::GeminiCli, "◇  Ready (acme)   ", TitleKind::Idle),
            (AgentKind::GeminiCli, "✦  Working… (acme)", TitleKind::Busy),
            (AgentKind::GeminiCli, "⏲  Working… (acme)", TitleKind::Busy),
            (
                AgentKind::GeminiCli,
                "✋  Action Required (acme)",
                TitleKind::ActionRequired,
            ),
            (AgentKind::OpenCode, "OC | Fix it", TitleKind::Idle),
            (AgentKind::CursorAgent, "anything", TitleKind::Other),
            (AgentKind::Codex, "", TitleKind::Other),
        ];
        for (agent, title, kind) in cases {
            assert_eq!(classify_title(agent, title), kind, "{agent:?} {title:?}");
        }
    }
}
