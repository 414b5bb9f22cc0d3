//! The limits on the free text a person sends Slate, and the checks every surface shares.
//!
//! Reasons, titles and ids are copied into session objects, the store and every event a
//! subscriber receives, so each has a length limit; an id must also be something a person can
//! read and type again (not empty, not only spaces, no control characters); and a work item may
//! not wait for itself, directly or round a cycle. The command line and the API call the same
//! functions here, so both refuse the same input with the same words. This module is pure: it
//! checks text and a dependency graph given to it, and reads nothing.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::Intent;

/// The longest park or await reason, in bytes.
pub const REASON_MAX: usize = 2048;
/// The longest work-item title, in bytes.
pub const TITLE_MAX: usize = 256;
/// The longest id (a work item, a dependency, what a session awaits), in bytes.
pub const ID_MAX: usize = 128;

/// Why a piece of text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    #[error("the {what} is {len} bytes long; at most {max} are allowed")]
    TooLong {
        what: &'static str,
        len: usize,
        max: usize,
    },
    #[error("the {what} is empty")]
    Empty { what: &'static str },
    #[error("the {what} {text:?} has a control character; use letters, digits and punctuation")]
    Control { what: &'static str, text: String },
    #[error("the {what} {text:?} has a space or an invisible character")]
    Blank { what: &'static str, text: String },
    #[error("item `{0}` cannot wait for itself")]
    SelfDependency(String),
    #[error("item `{item}` cannot wait for `{dep}`: that makes a cycle ({cycle})")]
    Cycle {
        item: String,
        dep: String,
        cycle: String,
    },
}

fn within(what: &'static str, text: &str, max: usize) -> Result<(), TextError> {
    if text.len() > max {
        return Err(TextError::TooLong {
            what,
            len: text.len(),
            max,
        });
    }
    Ok(())
}

/// A park or await reason: any text up to `REASON_MAX` bytes.
pub fn reason(text: &str) -> Result<(), TextError> {
    within("reason", text, REASON_MAX)
}

/// A work item's title: any text up to `TITLE_MAX` bytes.
pub fn title(text: &str) -> Result<(), TextError> {
    within("title", text, TITLE_MAX)
}

/// A work item's id (also a dependency's, or the item a session awaits): up to `ID_MAX` bytes,
/// not empty or only spaces, and without control characters.
pub fn item_id(text: &str) -> Result<(), TextError> {
    const WHAT: &str = "item id";
    within(WHAT, text, ID_MAX)?;
    if text.trim().is_empty() {
        return Err(TextError::Empty { what: WHAT });
    }
    if text.chars().any(char::is_control) {
        return Err(TextError::Control {
            what: WHAT,
            text: text.to_string(),
        });
    }
    Ok(())
}

/// A session id another machine sends (`remote::wire`): up to `ID_MAX` bytes, not empty, and
/// with no whitespace, no control character and no invisible format character. Every agent's own
/// ids are such (UUIDs, or short names of letters, digits and punctuation); a remote's id that is
/// not is refused, since it is printed in tables and given to commands.
pub fn session_id(text: &str) -> Result<(), TextError> {
    const WHAT: &str = "session id";
    within(WHAT, text, ID_MAX)?;
    if text.is_empty() {
        return Err(TextError::Empty { what: WHAT });
    }
    if text.chars().any(char::is_control) {
        return Err(TextError::Control {
            what: WHAT,
            text: text.to_string(),
        });
    }
    if text.chars().any(|c| c.is_whitespace() || is_invisible(c)) {
        return Err(TextError::Blank {
            what: WHAT,
            text: text.to_string(),
        });
    }
    Ok(())
}

/// An intent as a person sends it: its reason within `REASON_MAX`, and the item it awaits, if
/// any, a valid item id.
pub fn intent(intent: &Intent) -> Result<(), TextError> {
    if let Some(text) = &intent.reason {
        reason(text)?;
    }
    if let Some(item) = intent.awaiting_who.as_ref().and_then(|who| who.item()) {
        item_id(item)?;
    }
    Ok(())
}

/// A work item as a person adds it: a valid id, a title within `TITLE_MAX`, and dependencies
/// that pass `dependencies`.
pub fn work_item(
    id: &str,
    title_text: &str,
    deps: &[String],
    graph: &BTreeMap<String, Vec<String>>,
) -> Result<(), TextError> {
    item_id(id)?;
    title(title_text)?;
    dependencies(id, deps, graph)
}

/// Checks that item `item` may wait for `deps`, given what the other items wait for
/// (`graph`: item id → its dependencies; `item`'s own entry, if any, is replaced by `deps`).
/// Every dependency must be a valid id, and none may lead back to `item`.
pub fn dependencies(
    item: &str,
    deps: &[String],
    graph: &BTreeMap<String, Vec<String>>,
) -> Result<(), TextError> {
    for dep in deps {
        item_id(dep)?;
        if dep == item {
            return Err(TextError::SelfDependency(item.to_string()));
        }
    }
    for dep in deps {
        // A depth-first walk from `dep` along what each item waits for; the path it holds is
        // the way back to `item` when there is one.
        let mut path = vec![dep.as_str()];
        let mut seen = BTreeSet::new();
        if leads_to(item, &mut path, &mut seen, graph) {
            let mut cycle = vec![item];
            cycle.extend(path);
            return Err(TextError::Cycle {
                item: item.to_string(),
                dep: dep.clone(),
                cycle: cycle.join(" → "),
            });
        }
    }
    Ok(())
}

/// True when the last item of `path` leads to `target`; `path` then ends with `target`. The walk
/// stops at `target`, so what it waited for before (being replaced) is never followed.
fn leads_to<'a>(
    target: &str,
    path: &mut Vec<&'a str>,
    seen: &mut BTreeSet<&'a str>,
    graph: &'a BTreeMap<String, Vec<String>>,
) -> bool {
    let Some(&last) = path.last() else {
        return false;
    };
    if last == target {
        return true;
    }
    if !seen.insert(last) {
        return false;
    }
    for next in graph.get(last).into_iter().flatten() {
        path.push(next);
        if leads_to(target, path, seen, graph) {
            return true;
        }
        path.pop();
    }
    false
}

/// True for a character that is invisible yet acts on the text around it: the one class every
/// cleaner in Slate uses (`report::terminal_text` shows it as its code point, `agents::hooks`
/// replaces it, ids and shell words refuse it, a dialog's screen drops it). It holds
/// - Unicode's general category Cf (format), as of Unicode 15.1: the soft hyphen U+00AD, the
///   Arabic letter mark U+061C, the bidi marks, overrides and isolates (U+200E/F, U+202A–E,
///   U+2066–9) that reorder a line, the zero-width spaces and joiners, the byte order mark, the
///   interlinear annotations U+FFF9–FFFB;
/// - the line and paragraph separators U+2028 and U+2029, which some programs break a line at
///   and others draw as nothing;
/// - the whole tag block U+E0000–U+E007F, whose characters draw nothing and can spell a hidden
///   text after a visible one.
pub fn is_invisible(c: char) -> bool {
    matches!(
        u32::from(c),
        0x00ad
            | 0x0600..=0x0605
            | 0x061c
            | 0x06dd
            | 0x070f
            | 0x0890..=0x0891
            | 0x08e2
            | 0x180e
            | 0x200b..=0x200f
            | 0x2028..=0x202e
            | 0x2060..=0x2064
            | 0x2066..=0x206f
            | 0xfeff
            | 0xfff9..=0xfffb
            | 0x110bd
            | 0x110cd
            | 0x13430..=0x1343f
            | 0x1bca0..=0x1bca3
            | 0x1d173..=0x1d17a
            | 0xe0000..=0xe007f
    )
}

/// `text` with every control character and every invisible one ([`is_invisible`]) made a
/// space: for text shown where Slate cannot show a code point, such as a phone's notification.
pub fn spaced(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() || is_invisible(c) {
                ' '
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
        edges
            .iter()
            .map(|(item, deps)| {
                (
                    item.to_string(),
                    deps.iter().map(|dep| dep.to_string()).collect(),
                )
            })
            .collect()
    }

    fn deps(list: &[&str]) -> Vec<String> {
        list.iter().map(|dep| dep.to_string()).collect()
    }

    #[test]
    fn cycles_of_any_length_are_found_and_named() {
        let none = graph(&[]);
        assert_eq!(
            dependencies("x", &deps(&["x"]), &none),
            Err(TextError::SelfDependency("x".to_string()))
        );
        let pair = graph(&[("y", &["x"])]);
        assert!(matches!(
            dependencies("x", &deps(&["y"]), &pair),
            Err(TextError::Cycle { cycle, .. }) if cycle == "x → y → x"
        ));
        let long = graph(&[("a", &["b"]), ("b", &["c"]), ("c", &[])]);
        assert!(dependencies("c", &deps(&["d"]), &long).is_ok());
        assert!(matches!(
            dependencies("c", &deps(&["a"]), &long),
            Err(TextError::Cycle { cycle, .. }) if cycle == "c → a → b → c"
        ));
        // What the item waited for before does not count: its dependencies are being replaced.
        let old = graph(&[("x", &["y"]), ("y", &["z"]), ("z", &[])]);
        assert!(dependencies("y", &deps(&["z"]), &old).is_ok());
        assert!(dependencies("x", &deps(&[]), &old).is_ok());
        // A diamond is no cycle.
        let diamond = graph(&[("b", &["d"]), ("c", &["d"]), ("d", &[])]);
        assert!(dependencies("a", &deps(&["b", "c"]), &diamond).is_ok());
    }

    #[test]
    fn ids_must_be_readable_and_short() {
        assert!(item_id("fix-1").is_ok());
        assert!(item_id("fix the bug").is_ok());
        assert_eq!(item_id(""), Err(TextError::Empty { what: "item id" }));
        assert_eq!(item_id(" \t "), Err(TextError::Empty { what: "item id" }));
        assert!(matches!(
            item_id("a\u{1b}[2Jb"),
            Err(TextError::Control { .. })
        ));
        assert!(matches!(
            item_id("a\u{9b}b"),
            Err(TextError::Control { .. })
        ));
        assert!(item_id(&"i".repeat(ID_MAX)).is_ok());
        assert!(matches!(
            item_id(&"i".repeat(ID_MAX + 1)),
            Err(TextError::TooLong { .. })
        ));
        assert!(session_id("019a5c3e-7f0b-7c11-9a8e-0c6b2f1d9e44").is_ok());
        assert!(session_id("ses_4f1a:b.c").is_ok());
        assert!(session_id(&"s".repeat(ID_MAX)).is_ok());
        for bad in [
            "",
            " ",
            "a b",
            "a\u{a0}b",
            "a\u{1b}b",
            "a\u{202e}b",
            "a\u{200b}",
        ] {
            assert!(session_id(bad).is_err(), "{bad:?}");
        }
        assert!(matches!(
            session_id(&"s".repeat(5000)),
            Err(TextError::TooLong { len: 5000, .. })
        ));
        assert!(reason(&"r".repeat(REASON_MAX)).is_ok());
        assert!(reason(&"r".repeat(REASON_MAX + 1)).is_err());
    }
}
