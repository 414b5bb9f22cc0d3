//! Slate's entries in an agent's hook configuration, added and taken out as text (docs/hooks.md):
//! every byte outside Slate's entries stays as it was, the person's own hooks, other settings,
//! formatting and comments included. Installing twice changes nothing, and `remove` after
//! `install` gives back the text it started from, byte for byte. A text that does not parse is
//! refused, never rewritten. New lines Slate adds are the file's own (`\r\n` in a file whose
//! lines end so).
//!
//! What is Slate's is decided by text, not by what a command looks like: `entries` gives the
//! exact texts Slate writes for a program (one entry an event, or the whole plugin), and an entry
//! is Slate's only when its text is one of those, byte for byte, in its own event's list. The
//! caller passes the texts this Slate would write and those it recorded at install; an entry the
//! person wrote or edited (a matcher, another timeout, a second command) is never Slate's.
//!
//! Each edit is the inverse of the other, by where Slate writes: an entry added to a non-empty
//! list goes right after its last item, behind a comma; one added to an empty list goes right
//! after its opening bracket; a list or object Slate creates is written with its first item on a
//! new line. `remove` reads these three shapes back, last entry first, and takes out exactly what
//! `install` put in. A plugin file (OpenCode) is Slate's own whole: `remove` takes out Slate's
//! text and leaves whatever the person added to it. Each of Slate's files in a folder of hooks
//! (Cline CLI) is Slate's own whole too: `script` writes one, `script_event` knows one again;
//! the `slate` crate's `hooks` puts them in the folder, one an event.

use serde_json::Value;

use super::spans::{self, Kind, Node, ParseError};
use super::{command, is_slates, HookFormat, Hooks};

/// The file a fresh `Commands` configuration leaves once Slate's hooks are taken out.
const COMMANDS_LEFTOVER: &str = "{\n  \"version\": 1\n}\n";

/// The first line of Slate's plugin file.
const PLUGIN_MARK: &str = "// Slate's hook plugin";

/// The second line of each of Slate's hook files (`HookFormat::Files`), after the shebang.
const SCRIPT_MARK: &str = "# Slate's hook";

/// Slate's hook file for `event`, in a folder of hooks (`HookFormat::Files`): a shell script
/// that hands the event on standard input to `slate hook` and ends in the guard, so that it
/// prints nothing and exits 0 whatever becomes of `program`.
pub fn script(agent: &str, program: &str, event: &str) -> String {
    format!(
        "#!/bin/sh\n\
         {SCRIPT_MARK} (`slate hooks install {agent}` wrote it; `slate hooks remove {agent}` \
         removes it).\n\
         # It passes {agent}'s {event} event to `slate hook` and never answers for it.\n\
         {}\n",
        command(program, agent, event, true)
    )
}

/// The event a hook file's text runs Slate's hook for, when it is Slate's hook file as `script`
/// writes it, for any program: `None` for anyone else's file, or one edited since.
pub fn script_event(agent: &str, text: &str) -> Option<String> {
    let mut lines = text.lines();
    (lines.next()? == "#!/bin/sh").then_some(())?;
    lines.next()?.starts_with(SCRIPT_MARK).then_some(())?;
    lines.next()?.starts_with("# ").then_some(())?;
    let line = lines.next()?;
    if lines.next().is_some() || !line.ends_with(super::GUARD) {
        return None;
    }
    is_slates(line, agent)
}

/// The exact texts Slate writes for `program`: its entry for each event, one line each, or for
/// a plugin the whole file. What `installed` counts and `remove` takes out is one of these (or
/// one recorded at an earlier install), byte for byte.
pub fn entries(hooks: &Hooks, agent: &str, program: &str) -> Vec<String> {
    match hooks.format {
        HookFormat::Plugin => vec![plugin(hooks, agent, program)],
        HookFormat::Files => Vec::new(),
        _ => hooks
            .events
            .iter()
            .map(|(event, _)| entry(hooks, agent, program, event))
            .collect(),
    }
}

/// The exact text of Slate's decision entry for the agent (`slate hooks install --answer`), for
/// an agent whose hook may decide (`decision::decides`) in a `Matchers` configuration.
pub fn answer_entry(hooks: &Hooks, agent: &str, program: &str) -> Option<String> {
    let decides = super::decision::decides(agent)?;
    let HookFormat::Matchers { .. } = hooks.format else {
        return None;
    };
    let line = serde_json::to_string(&super::answer_command(program, agent, decides.event)).ok()?;
    Some(format!(
        "{{\"hooks\": [{{\"type\": \"command\", \"command\": {line}, \"timeout\": {}}}]}}",
        decides.timeout
    ))
}

/// `text` with Slate's decision entry added when none of `own` decision entries is in it.
pub fn install_answer(
    hooks: &Hooks,
    agent: &str,
    program: &str,
    text: &str,
    own: &[String],
) -> Result<String, ParseError> {
    let (Some(entry), Some(decides)) = (
        answer_entry(hooks, agent, program),
        super::decision::decides(agent),
    ) else {
        return Err(ParseError::Invalid(
            "its dialog would not stay usable while a hook waits: Slate installs no decision \
             hook for it (docs/hooks.md)"
                .into(),
        ));
    };
    let mut mine = vec![entry.clone()];
    mine.extend(
        own.iter()
            .filter(|own| own.contains(super::decision::ANSWER_FLAG))
            .cloned(),
    );
    if answering(hooks, agent, text, &mine)? {
        return Ok(text.to_string());
    }
    if text.trim().is_empty() {
        return Err(ParseError::Invalid("install its hooks first".into()));
    }
    add(text, &entry, decides.event, newline_of(text))
}

/// True when one of Slate's decision entries (`own`, exact texts) is in `text`.
pub fn answering(
    hooks: &Hooks,
    agent: &str,
    text: &str,
    own: &[String],
) -> Result<bool, ParseError> {
    one_file(hooks)?;
    if text.trim().is_empty() {
        return Ok(false);
    }
    let decisions: Vec<String> = own
        .iter()
        .filter(|entry| entry.contains(super::decision::ANSWER_FLAG))
        .cloned()
        .collect();
    let (_, root, _) = spans::parse(text)?;
    Ok(!slates(hooks, agent, text, &root, &decisions).is_empty())
}

/// `text` with a hook for every event of `hooks` that has none of Slate's yet, running `program`;
/// `known` are the texts of Slate's entries recorded at earlier installs, counted as Slate's
/// beside `program`'s own. An empty (or blank) text is a file that does not exist yet. A plugin
/// file that is not Slate's is refused: Slate's would take its name.
pub fn install(
    hooks: &Hooks,
    agent: &str,
    program: &str,
    text: &str,
    known: &[String],
) -> Result<String, ParseError> {
    one_file(hooks)?;
    let mut own = entries(hooks, agent, program);
    own.extend(known.iter().cloned());
    if text.trim().is_empty() {
        return Ok(match hooks.format {
            HookFormat::Plugin => plugin(hooks, agent, program),
            _ => fresh(hooks, agent, program),
        });
    }
    let present = installed(hooks, agent, text, &own)?;
    if hooks.format == HookFormat::Plugin {
        if present.is_empty() {
            return Err(ParseError::NotSlates(
                "it is not Slate's plugin as Slate wrote it, and Slate's would take its name: \
                 move it away and install again"
                    .into(),
            ));
        }
        return Ok(text.to_string());
    }
    let newline = newline_of(text);
    let mut text = text.to_string();
    for (event, _) in hooks.events {
        if present.iter().any(|done| done == event) {
            continue;
        }
        text = add(&text, &entry(hooks, agent, program, event), event, newline)?;
    }
    Ok(text)
}

/// The events that have one of Slate's entries (`own`, exact texts) in `text`.
pub fn installed(
    hooks: &Hooks,
    agent: &str,
    text: &str,
    own: &[String],
) -> Result<Vec<String>, ParseError> {
    one_file(hooks)?;
    if hooks.format == HookFormat::Plugin {
        if !own.iter().any(|plugin| text.contains(plugin.as_str())) {
            return Ok(Vec::new());
        }
        return Ok(hooks
            .events
            .iter()
            .map(|(event, _)| event.to_string())
            .collect());
    }
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let (_, root, _) = spans::parse(text)?;
    let mut found: Vec<String> = Vec::new();
    for (event, _) in slates(hooks, agent, text, &root, own) {
        if !found.contains(&event) {
            found.push(event);
        }
    }
    Ok(found)
}

/// `text` without Slate's entries (`own`, exact texts), and for a plugin without Slate's text.
/// A file that held nothing but Slate's comes back empty (a `Commands` file, its `version`
/// only): whether the file goes is the caller's to decide, by whether Slate created it.
pub fn remove(
    hooks: &Hooks,
    agent: &str,
    text: &str,
    own: &[String],
) -> Result<String, ParseError> {
    one_file(hooks)?;
    if hooks.format == HookFormat::Plugin {
        let found = own
            .iter()
            .filter(|plugin| !plugin.is_empty())
            .find(|plugin| text.contains(plugin.as_str()));
        return Ok(match found {
            Some(plugin) => text.replacen(plugin.as_str(), "", 1),
            None => text.to_string(),
        });
    }
    if text.trim().is_empty() {
        return Ok(text.to_string());
    }
    let mut text = text.to_string();
    // One entry at a time, the last in the text first: the reverse of the order they went in.
    // Each removal takes out at least one entry, so this ends.
    loop {
        let (blank, root, _) = spans::parse(&text)?;
        let Some((_, path)) = slates(hooks, agent, &text, &root, own).pop() else {
            break;
        };
        text = take_out(&text, &blank, &root, &path);
        if text.is_empty() {
            break;
        }
    }
    if hooks.format == HookFormat::Commands && text == COMMANDS_LEFTOVER {
        return Ok(String::new());
    }
    Ok(text)
}

/// What a file Slate did not create is left holding once `remove` took out everything in it,
/// which was Slate's: an empty configuration of its format.
pub fn empty(hooks: &Hooks) -> &'static str {
    match hooks.format {
        HookFormat::Commands => COMMANDS_LEFTOVER,
        HookFormat::Plugin | HookFormat::Files => "",
        HookFormat::Matchers { .. } | HookFormat::Bash { .. } => "{}\n",
    }
}

/// The line break the text uses: `\r\n` when its first line ends so, else `\n`.
fn newline_of(text: &str) -> &'static str {
    match text.find('\n') {
        Some(at) if text[..at].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

/// Refuses a folder of hooks, which is no one text to edit (`script` is for those).
fn one_file(hooks: &Hooks) -> Result<(), ParseError> {
    if hooks.format == HookFormat::Files {
        return Err(ParseError::Invalid(
            "its hooks are a folder of files, one an event".into(),
        ));
    }
    Ok(())
}

/// The event `entry` (one element of an event's list) runs Slate's hook for, when it is Slate's.
fn ours(hooks: &Hooks, agent: &str, entry: &Value) -> Option<String> {
    match hooks.format {
        HookFormat::Matchers { .. } => {
            let inner = entry.get("hooks")?.as_array()?;
            let [only] = inner.as_slice() else {
                return None;
            };
            is_slates(only.get("command")?.as_str()?, agent)
        }
        HookFormat::Commands => is_slates(entry.get("command")?.as_str()?, agent),
        HookFormat::Bash { .. } => {
            (entry.get("type")?.as_str()? == "command").then_some(())?;
            is_slates(entry.get("bash")?.as_str()?, agent)
        }
        HookFormat::Plugin | HookFormat::Files => None,
    }
}

/// One entry, on one line.
fn entry(hooks: &Hooks, agent: &str, program: &str, event: &str) -> String {
    let line =
        serde_json::to_string(&command(program, agent, event, hooks.guarded)).unwrap_or_default();
    match hooks.format {
        HookFormat::Matchers { timeout } => format!(
            "{{\"hooks\": [{{\"type\": \"command\", \"command\": {line}, \"timeout\": {timeout}}}]}}"
        ),
        HookFormat::Bash { timeout_sec } => format!(
            "{{\"type\": \"command\", \"bash\": {line}, \"timeoutSec\": {timeout_sec}}}"
        ),
        HookFormat::Commands | HookFormat::Plugin | HookFormat::Files => {
            format!("{{\"command\": {line}}}")
        }
    }
}

/// A whole configuration with Slate's hooks only, for a file that does not exist yet.
fn fresh(hooks: &Hooks, agent: &str, program: &str) -> String {
    let members: Vec<String> = hooks
        .events
        .iter()
        .map(|(event, _)| {
            let entry = entry(hooks, agent, program, event);
            format!("    {}: [\n      {entry}\n    ]", quote(event))
        })
        .collect();
    let hooks_member = format!("\"hooks\": {{\n{}\n  }}", members.join(",\n"));
    match hooks.format {
        HookFormat::Commands => format!("{{\n  \"version\": 1,\n  {hooks_member}\n}}\n"),
        _ => format!("{{\n  {hooks_member}\n}}\n"),
    }
}

fn quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// The text with `entry` added to the list of `event`, creating the list and `hooks` as needed,
/// its new lines `newline`.
fn add(text: &str, entry: &str, event: &str, newline: &str) -> Result<String, ParseError> {
    let (_, root, _) = spans::parse(text)?;
    let unit = indent_unit(text);
    let lines = |item: String| item.replace('\n', newline);
    let Some(settings) = root.member("hooks") else {
        let at = item_indent(text, &root, &unit);
        let inner = format!("{at}{unit}");
        let list = format!("{inner}{unit}");
        let member = format!(
            "\"hooks\": {{\n{inner}{}: [\n{list}{entry}\n{inner}]\n{at}}}",
            quote(event)
        );
        return Ok(insert_item(text, &root, &lines(member), &at, newline));
    };
    if !matches!(settings.kind, Kind::Object(_)) {
        return Err(ParseError::Invalid("its \"hooks\" is not an object".into()));
    }
    let Some(list) = settings.member(event) else {
        let at = item_indent(text, settings, &unit);
        let inner = format!("{at}{unit}");
        let member = format!("{}: [\n{inner}{entry}\n{at}]", quote(event));
        return Ok(insert_item(text, settings, &lines(member), &at, newline));
    };
    if !matches!(list.kind, Kind::Array(_)) {
        return Err(ParseError::Invalid(format!(
            "its hooks for {event} are not a list"
        )));
    }
    let at = item_indent(text, list, &unit);
    Ok(insert_item(text, list, entry, &at, newline))
}

/// The spans of a container's items: (start, end); a member starts at its key.
fn items(node: &Node) -> Vec<(usize, usize)> {
    match &node.kind {
        Kind::Object(members) => members
            .iter()
            .map(|(_, start, value)| (*start, value.end))
            .collect(),
        Kind::Array(elements) => elements.iter().map(|node| (node.start, node.end)).collect(),
        Kind::Scalar => Vec::new(),
    }
}

/// Inserts `item` into `container`: right after its opening bracket when it is empty, else
/// after its last item behind a comma, on a new line (`newline`) with `indent` when that item
/// starts a line.
fn insert_item(text: &str, container: &Node, item: &str, indent: &str, newline: &str) -> String {
    let spans = items(container);
    let (at, insert) = match spans.last() {
        None => (container.start + 1, item.to_string()),
        Some(&(start, end)) => {
            let separator = if starts_line(text, start) {
                format!("{newline}{indent}")
            } else {
                " ".to_string()
            };
            (end, format!(",{separator}{item}"))
        }
    };
    format!("{}{insert}{}", &text[..at], &text[at..])
}

/// True when only spaces come before `at` on its line.
fn starts_line(text: &str, at: usize) -> bool {
    let line_start = text[..at].rfind('\n').map_or(0, |newline| newline + 1);
    text[line_start..at]
        .chars()
        .all(|ch| ch == ' ' || ch == '\t')
}

/// The leading spaces of the line holding `at`.
fn line_indent(text: &str, at: usize) -> String {
    let line_start = text[..at].rfind('\n').map_or(0, |newline| newline + 1);
    text[line_start..]
        .chars()
        .take_while(|ch| *ch == ' ' || *ch == '\t')
        .collect()
}

/// How deep an item of `container` is indented: as its last item, when that starts a line, else
/// one unit deeper than the container's line.
fn item_indent(text: &str, container: &Node, unit: &str) -> String {
    match items(container).last() {
        Some(&(start, _)) if starts_line(text, start) => line_indent(text, start),
        _ => format!("{}{unit}", line_indent(text, container.start)),
    }
}

/// The file's own indentation step: the leading spaces of its first indented line, else two.
fn indent_unit(text: &str) -> String {
    text.lines()
        .map(|line| {
            line.chars()
                .take_while(|ch| *ch == ' ' || *ch == '\t')
                .collect::<String>()
        })
        .find(|indent| !indent.is_empty())
        .unwrap_or_else(|| "  ".to_string())
}

/// Where an entry sits: the event's member index in `hooks`, and the entry's index in its list.
struct EntryPath {
    event: usize,
    index: usize,
}

/// Slate's entries in the text, in the order they stand: each one's event and where it sits. An
/// entry is Slate's when its text is one of `own`, byte for byte, and it runs Slate's hook for
/// the event whose list holds it.
fn slates(
    hooks: &Hooks,
    agent: &str,
    text: &str,
    root: &Node,
    own: &[String],
) -> Vec<(String, EntryPath)> {
    let Some(settings) = root.member("hooks") else {
        return Vec::new();
    };
    let Kind::Object(members) = &settings.kind else {
        return Vec::new();
    };
    let mut found: Vec<(usize, String, EntryPath)> = Vec::new();
    for (event, (name, _, list)) in members.iter().enumerate() {
        let Kind::Array(elements) = &list.kind else {
            continue;
        };
        // A key given twice is read by serde_json as its last value; only the list serde_json
        // read is looked into.
        if members.iter().rposition(|(other, _, _)| other == name) != Some(event) {
            continue;
        }
        for (index, node) in elements.iter().enumerate() {
            let written = &text[node.start..node.end];
            if !own.iter().any(|entry| entry == written) {
                continue;
            }
            let Ok(value) = serde_json::from_str::<Value>(written) else {
                continue;
            };
            if ours(hooks, agent, &value).as_deref() == Some(name.as_str()) {
                found.push((node.start, name.clone(), EntryPath { event, index }));
            }
        }
    }
    found.sort_by_key(|(start, _, _)| *start);
    found
        .into_iter()
        .map(|(_, name, path)| (name, path))
        .collect()
}

/// The text without the entry at `path`, and without the list, the `hooks` object and the file
/// that Slate created around it, once they hold nothing else.
fn take_out(text: &str, blank: &str, root: &Node, path: &EntryPath) -> String {
    let settings = root.member("hooks").expect("found above");
    let Kind::Object(members) = &settings.kind else {
        unreachable!("found above")
    };
    let list = &members[path.event].2;
    let (start, end) = match remove_span(blank, list, path.index) {
        Some(span) => span,
        None => match remove_span(blank, settings, path.event) {
            Some(span) => span,
            None => match remove_span(blank, root, member_index(root, "hooks")) {
                Some(span) => span,
                // The file was Slate's whole.
                None => return String::new(),
            },
        },
    };
    format!("{}{}", &text[..start], &text[end..])
}

fn member_index(node: &Node, key: &str) -> usize {
    match &node.kind {
        Kind::Object(members) => members
            .iter()
            .rposition(|(name, _, _)| name == key)
            .unwrap_or(0),
        _ => 0,
    }
}

/// The span that removes item `index` of `container`; `None` when it is the only item of a
/// container Slate created (its first item on a new line): then the container goes too.
fn remove_span(blank: &str, container: &Node, index: usize) -> Option<(usize, usize)> {
    let spans = items(container);
    let (start, end) = spans[index];
    if spans.len() == 1 {
        // Added to an empty container: right after its bracket.
        return (start == container.start + 1).then_some((start, end));
    }
    if index > 0 {
        let previous_end = spans[index - 1].1;
        let comma = blank[previous_end..start]
            .find(',')
            .map_or(previous_end, |offset| previous_end + offset);
        return Some((comma, end));
    }
    // Items of the person's own follow: take this one and what separates it from the next.
    Some((start, spans[1].0))
}

/// Slate's plugin file for an agent whose hooks are plugins (OpenCode): on each event Slate
/// listens to, it starts `program hook <agent> <event>` with the event as JSON on its standard
/// input, does not wait for it, and answers nothing.
fn plugin(hooks: &Hooks, agent: &str, program: &str) -> String {
    let events: Vec<String> = hooks.events.iter().map(|(event, _)| quote(event)).collect();
    format!(
        "{PLUGIN_MARK} (`slate hooks install {agent}` wrote it; `slate hooks remove {agent}` \
         removes it).\n\
         // It passes {agent}'s events to `slate hook {agent} EVENT` and never answers for it.\n\
         import {{ spawn }} from \"node:child_process\";\n\
         \n\
         const PROGRAM = {program};\n\
         const EVENTS = [{events}];\n\
         \n\
         export const SlateHooks = async () => ({{\n\
         \x20 event: async ({{ event }}) => {{\n\
         \x20   if (!event || !EVENTS.includes(event.type)) return;\n\
         \x20   try {{\n\
         \x20     const child = spawn(PROGRAM, [\"hook\", {agent_js}, event.type], {{\n\
         \x20       stdio: [\"pipe\", \"ignore\", \"ignore\"],\n\
         \x20     }});\n\
         \x20     child.on(\"error\", () => {{}});\n\
         \x20     child.stdin.on(\"error\", () => {{}});\n\
         \x20     child.stdin.end(JSON.stringify(event));\n\
         \x20     child.unref();\n\
         \x20   }} catch {{}}\n\
         \x20 }},\n\
         }});\n",
        program = quote(program),
        agent_js = quote(agent),
        events = events.join(", "),
    )
}
