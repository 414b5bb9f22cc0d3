//! How sessions read on a terminal: the `slate sessions` table, the `slate show` page, the
//! `slate watch` lines, the `slate item list` table, and the one rule that makes any text safe
//! to print.
//!
//! These are pure functions from sessions (and `now`) to text, so their output is tested with
//! snapshots. They print nothing themselves and decide nothing: every status and reason comes from
//! `tracker`. Titles, prompts, folders, branches, ids and reasons are written by models, tools and
//! other programs, so every renderer here passes its text through `terminal_text`, and the
//! command line passes what it composes itself (`slate doctor`, errors) through it too.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

use crate::limits::is_invisible;
use crate::model::{Intent, IntentState, Machine, Problem, Session, SessionKey, Status, Timestamp};
use crate::tracker::{self, WorkItemInfo};

/// Makes text safe to print on a terminal: a control character is shown, never obeyed. C0
/// controls appear in caret notation as `cat -v` shows them (ESC as `^[`, BEL as `^G`, CR as
/// `^M`), DEL as `^?`, and a C1 control, which some terminals obey as an escape, as `^[` and its
/// 7-bit letter (CSI, U+009B, as `^[[`). So OSC 52 reads `^[]52;…^G` instead of writing the
/// clipboard. An invisible character (`limits::is_invisible`: the bidi overrides and isolates
/// such as U+202E, which would reorder the rest of a row, zero-width spaces and joiners, the byte
/// order mark, the line and paragraph separators, the tag characters) is shown as its code point, `<U+202E>`, so what another program wrote cannot rearrange
/// or hide text. Printable Unicode is kept as it is, and so are line ends and tabs, which lay the
/// text out. JSON output does not come here: serde escapes control characters itself.
pub fn terminal_text(text: &str) -> Cow<'_, str> {
    let obeyed = |c: char| (c.is_control() && c != '\n' && c != '\t') || is_invisible(c);
    if !text.chars().any(obeyed) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match u32::from(c) {
            0x0a | 0x09 => shown.push(c),
            code @ 0x00..=0x1f => {
                shown.push('^');
                shown.push(char::from(code as u8 + 0x40));
            }
            0x7f => shown.push_str("^?"),
            code @ 0x80..=0x9f => {
                shown.push_str("^[");
                shown.push(char::from(code as u8 - 0x40));
            }
            code if is_invisible(c) => {
                let _ = write!(shown, "<U+{code:04X}>");
            }
            _ => shown.push(c),
        }
    }
    Cow::Owned(shown)
}

/// An error and its causes as one line, `error: cause: cause`, safe for a terminal. A cause
/// that the text already ends with is left out: many errors repeat their cause in their own
/// words, and the operating system's message should read once.
pub fn error_text(causes: impl IntoIterator<Item = String>) -> String {
    let mut text = String::new();
    for cause in causes {
        if text.ends_with(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    finish(text)
}

/// The end of every renderer: the text, safe for a terminal.
fn finish(text: String) -> String {
    match terminal_text(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(shown) => shown,
    }
}

/// Orders sessions the way every surface shows them: Needs you first, then Working, then Closed;
/// within a group, the most recent first.
pub fn sort_for_display(sessions: &mut [Session]) {
    sessions.sort_by_key(|session| {
        let group = match session.status {
            Status::Waiting => 0,
            Status::Working => 1,
            Status::Ended => 2,
        };
        (group, Reverse(session.row_time), session.id.clone())
    });
}

/// Which sessions a `slate sessions` list was asked for, so an empty one says what it lacks and
/// suggests only a flag that was not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listed {
    /// The live list (`slate sessions`).
    Live,
    /// Live and closed sessions (`slate sessions --all`).
    All,
}

/// How many unread places the note names before it counts the rest.
const UNREAD_SHOWN: usize = 5;

/// The problems that hide sessions (`ProblemKind::hides_sessions`: a store, folder or file that
/// could not be read at all), one per place, in the order they were counted.
pub fn unread<'a>(problems: impl IntoIterator<Item = &'a Problem>) -> Vec<&'a Problem> {
    let mut unread: Vec<&Problem> = Vec::new();
    for problem in problems {
        if problem.kind.hides_sessions() && !unread.iter().any(|seen| seen.place == problem.place) {
            unread.push(problem);
        }
    }
    unread
}

/// The note under a list when places could not be read (`unread`): each place and why, and
/// where to look further. Empty when every place was read, so a list never hides that it may be
/// short.
pub fn unread_note(unread: &[&Problem]) -> String {
    let mut out = String::new();
    if unread.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "Slate could not read {} place{}, so sessions kept there are missing from this list:",
        unread.len(),
        if unread.len() == 1 { "" } else { "s" }
    );
    for problem in unread.iter().take(UNREAD_SHOWN) {
        let _ = writeln!(
            out,
            "  {} — {} ({})",
            problem.place, problem.detail, problem.kind
        );
    }
    if unread.len() > UNREAD_SHOWN {
        let _ = writeln!(out, "  … and {} more", unread.len() - UNREAD_SHOWN);
    }
    out.push_str("(`slate doctor` shows every problem Slate counted.)\n");
    finish(out)
}

/// The `slate sessions --reclaimable` table: the sessions automatic cleanup may reclaim, with the
/// custody reason for each, and the places that could not be read (`unread_note`).
pub fn reclaimable(sessions: &[Session], now: Timestamp, unread: &[&Problem]) -> String {
    let mut out = String::new();
    if sessions.is_empty() {
        out.push_str("No reclaimable sessions.\n");
        out.push_str(&unread_note(unread));
        return out;
    }
    let _ = writeln!(
        out,
        "{} {} {} {} REASON",
        cell("AGENT", 11),
        cell("SESSION", 36),
        cell("PROJECT", 16),
        cell("ENDED", 6),
    );
    for session in sessions {
        let state = &session.session_state;
        let _ = writeln!(
            out,
            "{} {} {} {} {}",
            cell(session.agent.as_str(), 11),
            cell(session.id.as_str(), 36),
            cell(session.project.as_deref().unwrap_or("—"), 16),
            cell(&age(state.next_actor.since, now), 6),
            state.custody.reason
        );
    }
    out.push_str(&unread_note(unread));
    finish(out)
}

/// `parked` or `awaiting <who>` for a session with an intent; `None` without one.
pub fn intent_label(intent: &Intent) -> Option<String> {
    match intent.state {
        IntentState::None => None,
        IntentState::Parked => Some("parked".to_string()),
        IntentState::Awaiting => Some(match &intent.awaiting_who {
            Some(who) => format!("awaiting {who}"),
            None => "awaiting".to_string(),
        }),
    }
}

/// A short age such as `12s`, `5m`, `3h` or `2d`.
pub fn age(since: Timestamp, now: Timestamp) -> String {
    let seconds = since.elapsed_until(now).as_secs();
    match seconds {
        0..=59 => format!("{seconds}s"),
        60..=3599 => format!("{}m", seconds / 60),
        3600..=86_399 => format!("{}h", seconds / 3600),
        _ => format!("{}d", seconds / 86_400),
    }
}

/// Cuts `text` to `width` characters as a terminal shows them (`terminal_text`), ending with `…`
/// when cut, and pads it to `width`.
fn cell(text: &str, width: usize) -> String {
    let text = terminal_text(text);
    let count = text.chars().count();
    if count <= width {
        let mut padded = text.to_string();
        padded.extend(std::iter::repeat_n(' ', width - count));
        padded
    } else {
        let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// The `slate sessions` table of the sessions `listed` asked for, then the places that could not
/// be read (`unread_note`). Sessions must already be sorted. An empty list says what it lacks,
/// and suggests `--all` only when it was not given. A MACHINE column comes first when any
/// session is on a remote machine.
pub fn table(sessions: &[Session], now: Timestamp, listed: Listed, unread: &[&Problem]) -> String {
    let machines = sessions.iter().any(|session| session.machine.is_some());
    table_with(sessions, now, listed, unread, machines)
}

/// The `slate sessions` table, with the MACHINE column when `machines` (any remote is
/// configured, whether or not it answered): `local` for this machine's sessions, the remote's
/// name for the others. A session on a remote that cannot be reached says so after its age.
pub fn table_with(
    sessions: &[Session],
    now: Timestamp,
    listed: Listed,
    unread: &[&Problem],
    machines: bool,
) -> String {
    let mut out = String::new();
    if sessions.is_empty() {
        let (empty, flag) = match listed {
            Listed::Live => (
                "No live agent sessions.",
                Some("`slate sessions --all` includes closed ones"),
            ),
            Listed::All => ("No agent sessions, live or closed.", None),
        };
        // The note on unread places names `slate doctor` itself.
        let doctor = unread
            .is_empty()
            .then_some("`slate doctor` shows where Slate looked");
        let hints: Vec<&str> = flag.into_iter().chain(doctor).collect();
        out.push_str(empty);
        if !hints.is_empty() {
            let _ = write!(out, " ({}.)", hints.join("; "));
        }
        out.push('\n');
        out.push_str(&unread_note(unread));
        return out;
    }
    let machine_cell = |name: &str| {
        if machines {
            format!("{} ", cell(name, 12))
        } else {
            String::new()
        }
    };
    let _ = writeln!(
        out,
        "{}{} {} {} {} {} AGE",
        machine_cell("MACHINE"),
        cell("STATUS", 9),
        cell("REASON", 36),
        cell("AGENT", 11),
        cell("PROJECT", 16),
        cell("TITLE", 40),
    );
    for session in sessions {
        let title = session
            .title
            .as_deref()
            .or(session.last_prompt.as_deref())
            .unwrap_or("—");
        let project = session.project.as_deref().unwrap_or("—");
        let hosted = if session.hosted { " (hosted)" } else { "" };
        let unreachable = if session.unreachable_since.is_some() {
            " (unreachable)"
        } else {
            ""
        };
        let machine = session.machine.as_ref().map_or("local", Machine::as_str);
        // A parked or awaiting session says so before its reason, which it keeps.
        let reason = match intent_label(&session.session_state.intent) {
            Some(label) => format!("{label} · {}", session.session_state.reason.text),
            None => session.session_state.reason.text.clone(),
        };
        let age = session
            .row_time
            .map(|row_time| age(row_time, now))
            .unwrap_or_else(|| "—".to_string());
        let _ = writeln!(
            out,
            "{}{} {} {} {} {} {age}{hosted}{unreachable}",
            machine_cell(machine),
            cell(session.status.label(), 9),
            cell(&reason, 36),
            cell(session.agent.display_name(), 11),
            cell(project, 16),
            cell(&one_line(title), 40),
        );
    }
    let needs_you = crate::policy::needs_you_count(sessions);
    let _ = writeln!(
        out,
        "\n{} session{}, {needs_you} need{} you",
        sessions.len(),
        if sessions.len() == 1 { "" } else { "s" },
        if needs_you == 1 { "s" } else { "" },
    );
    if !unread.is_empty() {
        out.push('\n');
    }
    out.push_str(&unread_note(unread));
    finish(out)
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The `slate show` page: one session and the evidence that decided its state (as `Evidence`
/// values, or as the sentences a server sent for them).
pub fn show(session: &Session, evidence: &[impl std::fmt::Display], now: Timestamp) -> String {
    let state = &session.session_state;
    let mut out = String::new();
    let mut line = |label: &str, value: String| {
        let _ = writeln!(out, "{:<12} {value}", format!("{label}:"));
    };
    line("session", format!("{} {}", session.agent, session.id));
    if let Some(machine) = &session.machine {
        let reach = match session.unreachable_since {
            Some(since) => {
                format!(" (unreachable since {since}; this is the state it last reported)")
            }
            None => String::new(),
        };
        line("machine", format!("{machine}{reach}"));
    }
    line(
        "status",
        format!(
            "{} ({})",
            session.status.label(),
            state.reason.code.as_str()
        ),
    );
    line("reason", state.reason.text.clone());
    if let Some(title) = &session.title {
        line("title", one_line(title));
    }
    if let Some(prompt) = &session.last_prompt {
        line("last prompt", one_line(prompt));
    }
    line(
        "folder",
        session.folder.clone().unwrap_or_else(|| "—".to_string()),
    );
    if let Some(branch) = &session.branch {
        line("branch", branch.clone());
    }
    line(
        "process",
        session
            .pid
            .map(|pid| pid.to_string())
            .unwrap_or_else(|| "none".to_string()),
    );
    if let Some(row_time) = session.row_time {
        line(
            "row time",
            format!("{row_time} ({} ago)", age(row_time, now)),
        );
    }
    line("presence", wire_name(state.presence));
    line("activity", wire_name(state.activity));
    line(
        "next actor",
        format!(
            "{} ({})",
            wire_name(state.next_actor.actor),
            state.next_actor.reason
        ),
    );
    if let Some(label) = intent_label(&state.intent) {
        let reason = state.intent.reason.as_deref().unwrap_or("no reason given");
        line("intent", format!("{label}: {reason}"));
    }
    let holds = if state.custody.holds.is_empty() {
        "nothing".to_string()
    } else {
        state.custody.holds.join(", ")
    };
    let cleanup = if state.custody.reclaimable {
        "reclaimable"
    } else {
        "not reclaimable"
    };
    line(
        "custody",
        format!("holds {holds}; {cleanup} ({})", state.custody.reason),
    );
    if let Some(transcript) = &session.transcript {
        line("transcript", transcript.clone());
    }
    if session.hosted {
        line("hosted", "yes: runs under `slate run`".to_string());
    }
    // What its model calls used, and what that cost: an estimate says so (`policy::usage`).
    line(
        "usage",
        crate::policy::usage::usage_line(session.usage.as_ref()),
    );
    if let Some(usage) = &session.usage {
        if !usage.models.is_empty() {
            line("models", usage.models.join(", "));
        }
        let tokens = crate::policy::usage::tokens_text(usage.context_tokens);
        line(
            "context",
            match usage.context_percent {
                Some(percent) => format!("{percent}% of the window ({tokens} tokens)"),
                None => format!("{tokens} tokens (the window is not known)"),
            },
        );
    }
    out.push_str("evidence:\n");
    for fact in evidence {
        let _ = writeln!(out, "  - {fact}");
    }
    finish(out)
}

/// One line of a session's history in `slate show`: a status change, or an answer to a dialog.
#[derive(Debug, Clone)]
pub enum HistoryEntry<'a> {
    Transition {
        at: Timestamp,
        from: Option<Status>,
        to: Status,
        reason: &'a str,
    },
    Answer {
        at: Timestamp,
        surface: &'a str,
        action: &'a str,
        option: Option<&'a str>,
        summary: Option<&'a str>,
        outcome: &'a str,
    },
}

impl HistoryEntry<'_> {
    fn at(&self) -> Timestamp {
        match self {
            HistoryEntry::Transition { at, .. } | HistoryEntry::Answer { at, .. } => *at,
        }
    }
}

/// The `history:` part of `slate show`: status changes and answers to dialogs, newest first.
pub fn history(mut entries: Vec<HistoryEntry<'_>>) -> String {
    if entries.is_empty() {
        return String::new();
    }
    entries.sort_by_key(|entry| std::cmp::Reverse(entry.at()));
    let mut out = String::from("history:\n");
    for entry in &entries {
        let line = match entry {
            HistoryEntry::Transition {
                at,
                from,
                to,
                reason,
            } => {
                let from = from.map_or("—", Status::label);
                format!("  {at}  {from} → {}: {}", to.label(), one_line(reason))
            }
            HistoryEntry::Answer {
                at,
                surface,
                action,
                option,
                summary,
                outcome,
            } => {
                let option = option
                    .map(|option| format!(" {option}"))
                    .unwrap_or_default();
                let summary = summary
                    .map(|summary| format!(" to {}", one_line(summary)))
                    .unwrap_or_default();
                format!("  {at}  answer {action}{option}{summary} from the {surface}: {outcome}")
            }
        };
        out.push_str(&line);
        out.push('\n');
    }
    finish(out)
}

/// The `dialog:` part of `slate show` for a session at a dialog: its summary and its options,
/// with what Slate offers for each.
pub fn dialog(dialog: &crate::model::SessionDialog) -> String {
    let mut out = format!("dialog:      {}\n", one_line(&dialog.summary));
    for (index, option) in dialog.options.iter().enumerate() {
        let number = option
            .number
            .map(|number| format!("{number}."))
            .unwrap_or_else(|| format!("({})", index + 1));
        let offered = option
            .action
            .map_or("stays in the terminal", |action| action.as_str());
        let _ = writeln!(out, "  {number} {}  [{offered}]", one_line(&option.label));
    }
    if let Some(why) = &dialog.why_not {
        let _ = writeln!(out, "  cannot answer from here: {why}");
    }
    finish(out)
}

/// One `slate watch` line for a session that appeared or changed:
/// `HH:MM:SS  Needs you  Claude Code acme — Finished its turn`, with `box · ` before the agent
/// for a session on a remote machine.
pub fn watch_line(session: &Session, now: Timestamp) -> String {
    let project = session
        .project
        .as_deref()
        .or(session.folder.as_deref())
        .unwrap_or("-");
    finish(format!(
        "{}  {:<9}  {}{} {project} — {}",
        clock_time(now),
        session.status.label(),
        machine_prefix(session.machine.as_ref()),
        session.agent.display_name(),
        session.session_state.reason.text
    ))
}

/// One `slate watch` line for a session that left the live list.
pub fn watch_removed(key: &SessionKey, now: Timestamp) -> String {
    finish(format!(
        "{}  {:<9}  {}{} {}",
        clock_time(now),
        "Closed",
        machine_prefix(key.machine.as_ref()),
        key.agent.display_name(),
        key.id
    ))
}

/// `box · ` for a remote machine's session; nothing for this machine's.
fn machine_prefix(machine: Option<&Machine>) -> String {
    machine.map_or_else(String::new, |machine| format!("{machine} · "))
}

/// The time of day in UTC: the `time` crate reads the local offset only where that is sound,
/// which a multi-threaded process on Linux is not.
fn clock_time(at: Timestamp) -> String {
    let seconds = at.millis().div_euclid(1000).rem_euclid(86_400);
    format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// The `slate item list` table: each work item, who holds it (`holders`: item id → the session
/// with an open claim) and who acts next.
pub fn items(
    items: &BTreeMap<String, WorkItemInfo>,
    holders: &BTreeMap<String, SessionKey>,
) -> String {
    let mut out = String::new();
    if items.is_empty() {
        out.push_str("No work items. (`slate item add <id> --title …` adds one.)\n");
        return out;
    }
    for item in items.values() {
        let holder = holders.get(&item.id);
        let (actor, why) = tracker::item_next_actor(item, items, holder);
        let _ = writeln!(
            out,
            "{:<14} {:<11} {:<32} {:<20} next: {} ({why})",
            item.id,
            item.status.as_str(),
            item.title,
            holder.map_or_else(|| "unclaimed".to_string(), |key| key.to_string()),
            wire_name(actor),
        );
    }
    finish(out)
}

/// The snake_case name a facet value has on the wire.
fn wire_name(value: impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|value| value.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// A duration as a person reads it, e.g. `1.2 s` or `340 ms`.
pub fn duration(duration: Duration) -> String {
    if duration >= Duration::from_secs(1) {
        format!("{:.1} s", duration.as_secs_f64())
    } else {
        format!("{} ms", duration.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_short() {
        let now = Timestamp::from_millis(1_000_000_000);
        let at = |seconds: i64| Timestamp::from_millis(1_000_000_000 - seconds * 1000);
        assert_eq!(age(at(5), now), "5s");
        assert_eq!(age(at(125), now), "2m");
        assert_eq!(age(at(7200), now), "2h");
        assert_eq!(age(at(200_000), now), "2d");
        assert_eq!(age(Timestamp::from_millis(2_000_000_000), now), "0s");
    }

    #[test]
    fn an_error_reads_each_cause_once() {
        let causes = [
            "cannot read the table /t: cannot read /t: gone (os error 2)",
            "cannot read /t: gone (os error 2)",
            "gone (os error 2)",
        ];
        assert_eq!(
            error_text(causes.map(String::from)),
            "cannot read the table /t: cannot read /t: gone (os error 2)"
        );
        let causes = ["cannot set up the token", "the file \u{1b}[2J is odd"];
        assert_eq!(
            error_text(causes.map(String::from)),
            "cannot set up the token: the file ^[[2J is odd"
        );
    }

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(terminal_text("plain — żółw ✓"), "plain — żółw ✓");
        assert!(matches!(terminal_text("plain"), Cow::Borrowed(_)));
        assert_eq!(
            terminal_text("a\u{1b}]52;c;eA==\u{7}b\u{1b}[2J"),
            "a^[]52;c;eA==^Gb^[[2J"
        );
        assert_eq!(
            terminal_text("\u{0}\r\u{7f}\u{9b}2J\u{9d}0;x"),
            "^@^M^?^[[2J^[]0;x"
        );
        assert_eq!(
            terminal_text("two\nlines\tand a tab"),
            "two\nlines\tand a tab"
        );
        // Bidi overrides and isolates, zero-width characters and the byte order mark are shown
        // as their code points: none can reorder or hide the rest of a row.
        assert_eq!(
            terminal_text("ok \u{202e}txt.exe\u{202c} \u{2066}x\u{2069}"),
            "ok <U+202E>txt.exe<U+202C> <U+2066>x<U+2069>"
        );
        assert_eq!(
            terminal_text("a\u{200b}b\u{200f}c\u{feff}d\u{61c}e\u{ad}f"),
            "a<U+200B>b<U+200F>c<U+FEFF>d<U+061C>e<U+00AD>f"
        );
        assert_eq!(terminal_text("\u{e0041}"), "<U+E0041>");
        // A cell measures what the terminal shows.
        assert_eq!(cell("\u{7}", 3), "^G ");
        assert_eq!(cell("\u{202e}", 8), "<U+202E>");
    }

    #[test]
    fn an_empty_list_suggests_only_a_flag_not_given_and_says_what_it_could_not_read() {
        let now = Timestamp::from_millis(1_000_000_000);
        assert_eq!(
            table(&[], now, Listed::Live, &[]),
            "No live agent sessions. (`slate sessions --all` includes closed ones; \
             `slate doctor` shows where Slate looked.)\n"
        );
        assert_eq!(
            table(&[], now, Listed::All, &[]),
            "No agent sessions, live or closed. (`slate doctor` shows where Slate looked.)\n"
        );
        let problems = [
            Problem::new(
                crate::model::ProblemKind::StoreLocked,
                "/h/opencode.db",
                "database is locked",
            ),
            Problem::new(
                crate::model::ProblemKind::MalformedLine,
                "/h/a.jsonl",
                "bad",
            ),
            Problem::new(
                crate::model::ProblemKind::StoreLocked,
                "/h/opencode.db",
                "database is locked",
            ),
            Problem::new(
                crate::model::ProblemKind::Unreadable,
                "/h/\u{1b}[2J",
                "permission denied",
            ),
        ];
        let unread = unread(&problems);
        assert_eq!(
            unread.len(),
            2,
            "one per place, and only what hides sessions"
        );
        assert_eq!(
            table(&[], now, Listed::All, &unread),
            "No agent sessions, live or closed.\n\
             Slate could not read 2 places, so sessions kept there are missing from this list:\n  \
             /h/opencode.db — database is locked (store_locked)\n  \
             /h/^[[2J — permission denied (unreadable)\n\
             (`slate doctor` shows every problem Slate counted.)\n"
        );
    }

    #[test]
    fn cells_cut_and_pad() {
        assert_eq!(cell("abc", 5), "abc  ");
        assert_eq!(cell("abcdef", 4), "abc…");
        assert_eq!(cell("żółw", 4), "żółw");
    }
}
