//! Which version of each agent the live sessions were written by, beside the versions Slate was
//! checked against (`Description::recorded`): a CLI newer than any of them may write records
//! Slate has never read, and `slate doctor` and `/health` say so instead of breaking silently.
//!
//! Pure: it reads the sessions it is handed and the registry's descriptions.

use serde::Serialize;

use super::Registry;
use crate::model::{AgentKind, Session, Status};

/// One agent's versions: those Slate was checked against, and those its live sessions name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentVersions {
    pub agent: AgentKind,
    /// The versions Slate was checked against, oldest first.
    pub recorded: Vec<&'static str>,
    /// The versions the agent's live sessions were written by, as their files say, oldest first.
    /// An agent whose files name no version has none here.
    pub seen: Vec<String>,
    /// True when a version seen is newer than every version recorded.
    pub newer_than_recorded: bool,
    /// The records and screens of the agent's sessions that its parser and grammar could not
    /// read, by the version that wrote them (`None` where the files name none), oldest version
    /// first. Empty when Slate read every record and screen.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<UnreadByVersion>,
}

/// How many records and screens of one version of an agent Slate could not read, in how many
/// sessions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnreadByVersion {
    pub version: Option<String>,
    pub records: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub screens: u64,
    pub sessions: usize,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// The versions of every agent of `registry` that has a live session or was checked against a
/// version, in the registry's order.
/// The unread records and screens are counted over every session handed in, closed ones too.
pub fn report<'a>(
    registry: Registry,
    sessions: impl IntoIterator<Item = &'a Session>,
) -> Vec<AgentVersions> {
    let all: Vec<&Session> = sessions.into_iter().collect();
    let sessions: Vec<&Session> = all
        .iter()
        .copied()
        .filter(|session| session.status != Status::Ended)
        .collect();
    registry
        .iter()
        .map(|description| {
            let agent = description.kind();
            let mut seen: Vec<String> = sessions
                .iter()
                .filter(|session| session.agent == agent)
                .filter_map(|session| session.cli_version.clone())
                .filter(|version| parse(version).is_some())
                .collect();
            seen.sort_by(|a, b| parse(a).cmp(&parse(b)).then_with(|| a.cmp(b)));
            seen.dedup();
            let newest = description.recorded.iter().filter_map(|v| parse(v)).max();
            let newer_than_recorded = newest.is_some_and(|newest| {
                seen.iter()
                    .filter_map(|version| parse(version))
                    .any(|version| version > newest)
            });
            AgentVersions {
                agent,
                recorded: description.recorded.to_vec(),
                seen,
                newer_than_recorded,
                unread: unread(all.iter().filter(|session| session.agent == agent)),
            }
        })
        .collect()
}

/// The unread records and screens of one agent's sessions, by version.
fn unread<'a>(sessions: impl Iterator<Item = &'a &'a Session>) -> Vec<UnreadByVersion> {
    let mut counts: Vec<UnreadByVersion> = Vec::new();
    for session in sessions {
        let Some(unread) = &session.unread else {
            continue;
        };
        let version = session.cli_version.clone();
        match counts.iter_mut().find(|count| count.version == version) {
            Some(count) => {
                count.records = count.records.saturating_add(unread.records);
                count.screens = count.screens.saturating_add(unread.screens);
                count.sessions += 1;
            }
            None => counts.push(UnreadByVersion {
                version,
                records: unread.records,
                screens: unread.screens,
                sessions: 1,
            }),
        }
    }
    let key = |count: &UnreadByVersion| count.version.as_deref().and_then(parse);
    counts.sort_by(|a, b| key(a).cmp(&key(b)).then_with(|| a.version.cmp(&b.version)));
    counts
}

/// What `slate show` says of a session written by a version newer than every one Slate was
/// checked against; `None` for any other.
pub fn newer_note(session: &Session) -> Option<String> {
    let description = session.agent.description()?;
    let version = session.cli_version.as_deref()?;
    let newest = description.recorded.iter().filter_map(|v| parse(v)).max()?;
    (parse(version)? > newest).then(|| {
        format!(
            "written by {} {version}, newer than the versions Slate was checked against ({}): \
             its format may have changed, and what Slate cannot read of it is left out",
            description.product,
            description.recorded.join(", ")
        )
    })
}

/// The numbers of a version (`2.1.332`, `v0.61.0`, `1.0.102-beta.1` reads as 1.0.102): at most
/// four parts of at most nine digits each, or `None` for anything else.
pub fn parse(version: &str) -> Option<Vec<u32>> {
    let version = version.trim().trim_start_matches('v');
    let numbers = version
        .split(['-', '+', ' '])
        .next()
        .filter(|numbers| !numbers.is_empty())?;
    let parts: Vec<u32> = numbers
        .split('.')
        .map(|part| {
            (!part.is_empty() && part.len() <= 9 && part.bytes().all(|b| b.is_ascii_digit()))
                .then(|| part.parse().ok())
                .flatten()
        })
        .collect::<Option<_>>()?;
    (1..=4).contains(&parts.len()).then_some(parts)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn versions_read_as_numbers() {
        assert_eq!(parse("2.1.332"), Some(vec![2, 1, 332]));
        assert_eq!(parse("v0.61.0"), Some(vec![0, 61, 0]));
        assert_eq!(parse("1.0.102-beta.1"), Some(vec![1, 0, 102]));
        assert!(parse("0.171.0") > parse("0.99.9"));
        assert!(parse("2.1.332") > parse("2.1.197"));
        for bad in [
            "",
            "v",
            "latest",
            "1..2",
            "1.x",
            "1.2.3.4.5",
            "99999999999.1",
            "ü",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
