//! The dialog a session's screen shows, as the wire carries it (docs/states.md §8): its kind, its
//! text, its options with what Slate offers for each, its fingerprint, whether Slate can type the
//! answer, and the call it is about. Plain data: `agents::keys` builds it from a screen reading
//! (`SessionDialog::of`) and decides the offers and the fingerprint.

use serde::{Deserialize, Serialize};

/// What a dialog asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DialogKind {
    Permission,
    Question,
    Plan,
}

/// What a person asks Slate to do with a dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Allow the call once (a permission dialog), or approve a plan without widening anything.
    Approve,
    /// Reject the call, or close a question or a plan.
    Deny,
    /// Pick an option of a question or a plan, or give a free answer.
    Answer,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Approve => "approve",
            Action::Deny => "deny",
            Action::Answer => "answer",
        }
    }
}

impl std::str::FromStr for Action {
    type Err = String;

    fn from_str(text: &str) -> Result<Action, String> {
        match text {
            "approve" => Ok(Action::Approve),
            "deny" => Ok(Action::Deny),
            "answer" => Ok(Action::Answer),
            other => Err(format!(
                "not an action: {other:?} (approve, deny or answer)"
            )),
        }
    }
}

/// The dialog a session's screen shows, on the wire (docs/states.md §8): what it asks, its options
/// with what Slate offers for each, its fingerprint, and whether Slate can type the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionDialog {
    pub kind: DialogKind,
    /// `Run: touch x.txt`, `Question: Which database?`; `Run: touch x.txt && \ … (3 lines)` when
    /// the text has more lines, `… (cut short)` when it is not whole.
    pub summary: String,
    /// The whole command, file or diff the dialog asks about, as the CLI draws it: every line,
    /// wrapped lines joined (`agents::screens::Dialog::detail`). A surface that cannot show all
    /// of it offers no approval (docs/states.md §8).
    #[serde(default)]
    pub detail: Vec<String>,
    /// True when the text is not whole: the CLI cut it short, or it passed Slate's bounds.
    #[serde(default)]
    pub cut: bool,
    /// Every option drawn, in order.
    pub options: Vec<SessionDialogOption>,
    /// 16 lowercase hex digits naming what the dialog says (`agents::keys::fingerprint`): an
    /// answer must send the fingerprint of the dialog the person saw.
    pub fingerprint: String,
    /// False when Slate cannot type into the session's terminal.
    pub answerable: bool,
    /// Why it cannot, and what would make it possible; only when `answerable` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
    /// The call the dialog is about, where the transcript records it (a Claude Code `tool_use`, a
    /// Codex `function_call`): its id, and for a permission its input. Absent from an older
    /// server, and where no call is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<PendingCall>,
}

/// The tool call a dialog is about, as the transcript records it (docs/states.md §8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The call's id in the transcript.
    pub id: String,
    /// The tool's name (`Bash`, `exec_command`).
    pub name: String,
    /// The call's input: the command of a shell call, the path of a file call, at most 8 KB
    /// (`agents::INPUT_BYTES`); absent for a question or a plan, and where the call records none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// True when the input was longer than that and is kept cut short.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

impl PendingCall {
    /// The call as a dialog of `kind` carries it: a permission with its input, a question or a
    /// plan by its id only (its input is not compared with the screen).
    pub fn about(self, kind: DialogKind) -> PendingCall {
        match kind {
            DialogKind::Permission => self,
            DialogKind::Question | DialogKind::Plan => PendingCall {
                input: None,
                cut: false,
                ..self
            },
        }
    }
}

/// A call whose agent's decision hook waits for the person's answer from Slate (docs/hooks.md,
/// "Decision hooks"): the session's dialog while it waits, answered through the hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookDecision {
    /// The waiting call's fingerprint (`agents::hooks::decision::fingerprint`): an answer names it.
    pub fingerprint: String,
    pub summary: String,
    /// The call's input, every line.
    pub detail: Vec<String>,
    /// The call: its id (the tool call's, else the fingerprint), the tool, its whole input.
    pub call: PendingCall,
}

impl HookDecision {
    /// The session's dialog while the hook waits: Allow once and Deny, answerable through it.
    pub fn dialog(&self) -> SessionDialog {
        let option = |label: &str, action| SessionDialogOption {
            number: None,
            label: label.to_string(),
            action: Some(action),
        };
        SessionDialog {
            kind: DialogKind::Permission,
            summary: self.summary.clone(),
            detail: self.detail.clone(),
            cut: false,
            options: vec![
                option("Allow once", Action::Approve),
                option("Deny", Action::Deny),
            ],
            fingerprint: self.fingerprint.clone(),
            answerable: true,
            why_not: None,
            call: Some(self.call.clone()),
        }
    }
}

/// One option of a session's dialog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionDialogOption {
    /// The number the dialog draws in front of it; null where it draws none (OpenCode's row).
    pub number: Option<u32>,
    pub label: String,
    /// What Slate offers for it: approve, deny, answer, or null for an option that widens
    /// permissions (it stays in the terminal).
    pub action: Option<Action>,
}
