//! The facts behind a decision, as values, and the one place they are put into words.
//!
//! The rules push an `Evidence` for every fact they look at on the way to a verdict: what the
//! listing says, which process vouches, what the transcript's last record is, what the terminal
//! shows. `slate show`, `slate doctor` and `GET /sessions/{id}` print them; each is written as
//! text by its `Display` here and nowhere else, and crosses the wire as that text, so the JSON
//! `evidence` stays a list of sentences.

use std::fmt;

use super::VouchKind;
use crate::agents::hooks::Signal;
use crate::agents::screens::ScreenKind;
use crate::agents::titles::TitleKind;
use crate::model::{AgentKind, ListedStatus, Timestamp};

/// One fact the rules looked at. Times are when the fact appeared; `call` is a tool call as a
/// person reads it (its tool's name and what it was asked to do).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// The agent's own listing names the session.
    Listed {
        status: Option<ListedStatus>,
        waiting_for: Option<String>,
        pid: Option<u32>,
    },
    /// The agent recorded the session's end.
    EndRecorded { at: Timestamp },
    /// A live process vouches for the session.
    Vouched { pid: u32, how: VouchKind },
    /// The process that vouched for the session died.
    ProcessDied { at: Timestamp },
    /// A tool call after the vouching process died proves the session present again.
    PresentAgain { died_at: Timestamp },
    /// The agent lists its live sessions and this one is not among them.
    Unlisted { agent: AgentKind },
    /// No live process vouches, and the transcript has been quiet past the window.
    QuietWithoutProcess { since: Timestamp },
    /// No live process vouches, but the transcript was written within the window.
    WrittenWithinWindow { at: Timestamp },
    /// A new transcript with no turn record yet, written a moment ago.
    Starting { at: Timestamp },
    /// A transcript with no turn record.
    NoTurnRecord,
    /// A tool call with no result for longer than a foreground command may run.
    CallQuiet { call: String, at: Timestamp },
    /// A question or a plan to approve, unanswered past the window.
    AskUnanswered { call: String, at: Timestamp },
    /// A question or a plan to approve, asked within the window.
    AskPending { call: String, at: Timestamp },
    /// A tool call still waiting for its result.
    CallOpen { call: String, at: Timestamp },
    /// The turn ended while work it left in the background runs (it wakes the agent).
    Background { work: String, at: Timestamp },
    /// The turn ended with background work running, and nothing was written for a quiet call's
    /// time.
    BackgroundQuiet { work: String, at: Timestamp },
    /// A tool call whose permission dialog the agent wrote as open.
    DialogWritten { call: String, at: Timestamp },
    /// The last turn record (a prompt, a tool result, a turn's start) asks the model to answer.
    ModelAsked { at: Timestamp },
    /// The model was thinking.
    Thinking { at: Timestamp },
    /// An API error being retried.
    Retrying { at: Timestamp },
    /// A compaction in progress.
    Compacting { at: Timestamp },
    /// The model wrote inside an explicit turn that has not ended.
    TurnOpen { at: Timestamp },
    /// The model's text stayed the last record long enough to end the turn.
    TextStayedLast { at: Timestamp },
    /// The model's text is the last record, and more may follow.
    TextFresh { at: Timestamp },
    /// The turn ended.
    TurnEnded { at: Timestamp },
    /// The turn was interrupted.
    Interrupted { at: Timestamp },
    /// The turn failed.
    TurnFailed { at: Timestamp },
    /// The last record is the session's end.
    SessionEnded { at: Timestamp },
    /// The last turn record settles nothing, and the window has passed since it.
    UnsettledPast { at: Timestamp },
    /// The last turn record settles nothing, and the window has not passed yet.
    UnsettledRecent { at: Timestamp },
    /// A sub-agent of the session wrote its transcript.
    SubagentWrote { at: Timestamp },
    /// The terminal's current title, what the agent's grammar makes of it, and since when.
    Title {
        text: String,
        kind: TitleKind,
        since: Timestamp,
    },
    /// The terminal drew nothing under an open tool call.
    TerminalSilent { since: Timestamp },
    /// What the terminal's screen shows, read with the agent's screen grammar, and since when:
    /// its kind, and a dialog's summary.
    Screen {
        kind: ScreenKind,
        summary: Option<String>,
        since: Timestamp,
    },
    /// The terminal's title, seen moving, stopped.
    TitleStopped { at: Timestamp },
    /// The agent's own hook fired: which event, what it says, and when Slate received it.
    Hook {
        event: String,
        signal: Signal,
        at: Timestamp,
    },
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Evidence::Listed {
                status,
                waiting_for,
                pid,
            } => {
                let status = match status {
                    Some(ListedStatus::Busy) => "busy",
                    Some(ListedStatus::Idle) => "idle",
                    Some(ListedStatus::Waiting) => "waiting",
                    Some(ListedStatus::Finished) => "finished",
                    None => "no status",
                };
                write!(f, "the agent lists it as {status}")?;
                if let Some(what) = waiting_for {
                    write!(f, " ({what})")?;
                }
                if let Some(pid) = pid {
                    write!(f, ", pid {pid}")?;
                }
                Ok(())
            }
            Evidence::EndRecorded { at } => {
                write!(f, "the agent recorded the session's end at {at}")
            }
            Evidence::Vouched { pid, how } => {
                let how = match how {
                    VouchKind::Listing => "listed by the agent",
                    VouchKind::CommandLine => "named on its command line",
                    VouchKind::Folder => "works in its folder",
                };
                write!(f, "process {pid} vouches for it ({how})")
            }
            Evidence::ProcessDied { at } => {
                write!(f, "the process that vouched for it died at {at}")
            }
            Evidence::PresentAgain { died_at } => write!(
                f,
                "a tool call after its process died at {died_at} proves it present again"
            ),
            Evidence::Unlisted { agent } => write!(
                f,
                "{} lists its live sessions and this one is not among them",
                agent.display_name()
            ),
            Evidence::QuietWithoutProcess { since } => write!(
                f,
                "no live process vouches for it and its transcript has been quiet since {since}"
            ),
            Evidence::WrittenWithinWindow { at } => write!(
                f,
                "no live process vouches for it, but it was written at {at}, within the window"
            ),
            Evidence::Starting { at } => write!(
                f,
                "the transcript was started at {at} and has no turn record yet"
            ),
            Evidence::NoTurnRecord => f.write_str("the transcript has no turn record yet"),
            Evidence::Background { work, at } => {
                write!(f, "the turn ended with {work} running since {at}")
            }
            Evidence::BackgroundQuiet { work, at } => {
                write!(f, "nothing written since {at} while waiting for {work}")
            }
            Evidence::CallQuiet { call, at } => {
                write!(f, "the tool call {call} has had no result since {at}")
            }
            Evidence::AskUnanswered { call, at } => {
                write!(f, "{call} has waited since {at} with no answer")
            }
            Evidence::AskPending { call, at } => {
                write!(f, "{call} was asked at {at}; the window has not passed")
            }
            Evidence::CallOpen { call, at } => {
                write!(f, "the tool call {call} at {at} has no result yet")
            }
            Evidence::DialogWritten { call, at } => {
                write!(
                    f,
                    "the agent wrote at {at} that {call} waits for your permission"
                )
            }
            Evidence::ModelAsked { at } => {
                write!(f, "the last turn record, at {at}, asks the model to answer")
            }
            Evidence::Thinking { at } => write!(f, "the model was thinking at {at}"),
            Evidence::Retrying { at } => write!(f, "an API error at {at} is being retried"),
            Evidence::Compacting { at } => write!(f, "compaction started at {at}"),
            Evidence::TurnOpen { at } => {
                write!(f, "the turn is still open after the model wrote at {at}")
            }
            Evidence::TextStayedLast { at } => write!(f, "the model's text at {at} stayed last"),
            Evidence::TextFresh { at } => {
                write!(f, "the model wrote text at {at}; more may follow")
            }
            Evidence::TurnEnded { at } => write!(f, "the turn ended at {at}"),
            Evidence::Interrupted { at } => write!(f, "the turn was interrupted at {at}"),
            Evidence::TurnFailed { at } => write!(f, "the turn failed at {at}"),
            Evidence::SessionEnded { at } => write!(f, "the session ended at {at}"),
            Evidence::UnsettledPast { at } => write!(
                f,
                "the last turn record at {at} does not settle the state, and the window has passed"
            ),
            Evidence::UnsettledRecent { at } => write!(
                f,
                "the last turn record at {at} does not settle the state; the window has not passed"
            ),
            Evidence::SubagentWrote { at } => {
                write!(f, "a sub-agent transcript was written at {at}")
            }
            Evidence::Title { text, kind, since } => write!(
                f,
                "the terminal's title has read {text:?} ({kind:?}) since {since}"
            ),
            Evidence::Screen {
                kind,
                summary,
                since,
            } => {
                let what = match kind {
                    ScreenKind::Permission => "a permission dialog",
                    ScreenKind::Question => "a question",
                    ScreenKind::Plan => "a plan to approve",
                    ScreenKind::Idle => "the composer, waiting",
                    ScreenKind::Working => "the agent at work",
                    ScreenKind::Unknown => "nothing its grammar knows",
                };
                write!(f, "the terminal's screen has shown {what} since {since}")?;
                if let Some(summary) = summary {
                    write!(f, " ({summary})")?;
                }
                Ok(())
            }
            Evidence::TerminalSilent { since } => write!(
                f,
                "the hosted terminal has drawn nothing since {since} under an open tool call"
            ),
            Evidence::TitleStopped { at } => {
                write!(f, "the terminal's title stopped moving at {at}")
            }
            Evidence::Hook { event, signal, at } => {
                let what = match signal {
                    Signal::Permission => "a permission dialog is open",
                    Signal::Question => "a question waits",
                    Signal::Working => "the agent works",
                    Signal::TurnEnded => "the turn ended",
                    Signal::Lifecycle => "the session started or ended",
                };
                write!(f, "the agent's {event} hook fired at {at}: {what}")
            }
        }
    }
}

/// Evidence crosses the wire as its sentence, so the JSON `evidence` is a list of strings.
impl serde::Serialize for Evidence {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}
