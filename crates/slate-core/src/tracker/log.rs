//! The fold of one session's observations into the few facts the rules read.
//!
//! A transcript may hold hours of records; the rules only need the newest turn record, the tool
//! calls still waiting for a result, whether an explicit turn is open, the session's end stamp and
//! a little bookkeeping (folder, branch, title, prompts). `Log` keeps exactly that, updated one
//! observation at a time, so a session costs the same whatever its length. It decides nothing:
//! what the facts mean is `rules`' business.

use std::collections::{BTreeMap, HashSet};

use crate::agents::keys;
use crate::agents::screens::{Dialog, DialogKind};
use crate::agents::unread::UnreadRecord;
use crate::agents::{
    Background, CallInput, CallKind, Info, Observation, Record, RecordKind, Title,
};
use crate::model::{AgentKind, PendingCall, Timestamp, UnreadRecords};
use crate::usage::Tally;

/// The fold of a session's observations: the facts the rules read, kept small.
#[derive(Debug, Default, Clone)]
pub(super) struct Log {
    pub(super) folder: Option<String>,
    pub(super) branch: Option<String>,
    pub(super) cli_version: Option<String>,
    pub(super) model: Option<String>,
    pub(super) title: Option<Title>,
    pub(super) first_prompt: Option<String>,
    pub(super) last_prompt: Option<String>,
    pub(super) print_mode: bool,
    pub(super) parent_session: Option<String>,
    /// The newest turn record, by its time; file order breaks ties.
    pub(super) last: Option<Dated>,
    /// Tool calls without a result yet, by call id.
    open_calls: BTreeMap<String, OpenCall>,
    /// Results seen, so a result written before its call does not leave the call open.
    answered: HashSet<String>,
    /// The latest tool call's time: a tool call after the process died proves presence again.
    pub(super) last_tool_call: Option<Timestamp>,
    /// Codex-style explicit turns: `Some` while a started turn has not ended.
    pub(super) open_turn: Option<Option<String>>,
    n_prompts: u32,
    /// The latest prompt's time: someone handed the session its next message.
    pub(super) last_prompt_at: Option<Timestamp>,
    pub(super) n_records: u64,
    pub(super) ended_at: Option<Timestamp>,
    /// The records the parser did not know, counted; they move nothing else.
    pub(super) unread: UnreadRecords,
    /// The listing's `waitingFor` Slate did not know, counted in `unread` while the listing
    /// still says it (`Tracker::count_listed_drift`).
    pub(super) listed_drift: Option<String>,
    /// What the session's model calls used, each response once (`usage::Tally`).
    pub(super) usage: Tally,
    /// Work the agent left running in the background and that has not ended, by its id, with
    /// when it started: a turn end does not end it (at most `BACKGROUND_KEPT`, the oldest go).
    pub(super) background: BTreeMap<String, (Background, Timestamp)>,
}

/// The most background work remembered for one session.
const BACKGROUND_KEPT: usize = 64;

/// A turn record with its time and its place in the file.
#[derive(Debug, Clone)]
pub(super) struct Dated {
    pub(super) at: Timestamp,
    seq: u64,
    pub(super) kind: RecordKind,
}

/// A tool call still waiting for its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct OpenCall {
    id: String,
    name: String,
    pub(super) detail: Option<String>,
    /// The call's input, bounded by the adapter (`agents::CallInput`): what a dialog about it
    /// must agree with.
    input: Option<CallInput>,
    pub(super) kind: CallKind,
    pub(super) at: Timestamp,
    seq: u64,
}

impl OpenCall {
    /// How the call reads to a person: its tool's name, and what it was asked to do.
    pub(super) fn label(&self) -> String {
        match &self.detail {
            Some(detail) => format!("{}: {detail}", self.name),
            None => self.name.clone(),
        }
    }
}

impl OpenCall {
    /// The call as the wire dialog carries it.
    pub(super) fn pending(&self) -> PendingCall {
        PendingCall {
            id: self.id.clone(),
            name: self.name.clone(),
            input: self.input.as_ref().map(|input| input.text.clone()),
            cut: self.input.as_ref().is_some_and(|input| input.cut),
        }
    }
}

impl Log {
    /// The call a dialog on screen is about: of the tool calls still waiting for their result
    /// that such a dialog can ask about (a question about a question call, a plan about a plan,
    /// a permission about any other call but a sub-agent), the newest one the dialog agrees with
    /// (`agents::keys::disagreement`; several wait at once when the model called tools in
    /// parallel), else the newest one.
    pub(super) fn call_of(&self, agent: AgentKind, dialog: &Dialog) -> Option<PendingCall> {
        let fits = |call: &&OpenCall| match dialog.kind {
            DialogKind::Question => call.kind == CallKind::Question,
            DialogKind::Plan => call.kind == CallKind::PlanApproval,
            DialogKind::Permission => matches!(
                call.kind,
                CallKind::Plain | CallKind::Escalated | CallKind::Asking
            ),
        };
        let mut calls: Vec<&OpenCall> = self.open_calls.values().filter(fits).collect();
        calls.sort_by_key(|call| std::cmp::Reverse((call.at, call.seq)));
        let calls: Vec<PendingCall> = calls.into_iter().map(OpenCall::pending).collect();
        let agreeing = calls
            .iter()
            .find(|call| keys::disagreement(agent, dialog, Some(call)).is_none());
        agreeing.or(calls.first()).cloned()
    }

    /// The newest tool call still waiting for its result: the one a dialog would be about.
    /// The background work still running, as "1 background command, 2 background agents", with
    /// when the newest of it started; `None` when none runs.
    pub(super) fn background_work(&self) -> Option<(String, Timestamp)> {
        let newest = self.background.values().map(|(_, at)| *at).max()?;
        let mut counts: BTreeMap<Background, usize> = BTreeMap::new();
        for (work, _) in self.background.values() {
            *counts.entry(*work).or_default() += 1;
        }
        let words: Vec<String> = counts.iter().map(|(work, n)| work.count(*n)).collect();
        Some((words.join(", "), newest))
    }

    pub(super) fn newest_open_call(&self) -> Option<&OpenCall> {
        self.open_calls
            .values()
            .max_by_key(|call| (call.at, call.seq))
    }

    /// Folds one observation. `last_write` dates a record that carries no time of its own.
    pub(super) fn fold(&mut self, observation: Observation, last_write: Timestamp) {
        match observation {
            Observation::Info(info) => self.fold_info(info),
            Observation::Reset => {
                let kept = Log {
                    folder: self.folder.take(),
                    branch: self.branch.take(),
                    cli_version: self.cli_version.take(),
                    model: self.model.take(),
                    title: self.title.take(),
                    print_mode: self.print_mode,
                    parent_session: self.parent_session.take(),
                    usage: std::mem::take(&mut self.usage),
                    ..Log::default()
                };
                *self = kept;
            }
            Observation::Record(record) => self.fold_record(record, last_write),
            Observation::Unread(record) => self.unread.count(&record.what, &record.sample),
            Observation::Usage(call) => self.usage.add(call, self.model.as_deref()),
        }
    }

    /// Counts a screen of the session's terminal that its agent's grammar does not know.
    pub(super) fn count_screen(&mut self, screen: &UnreadRecord) {
        self.unread.count_screen(&screen.what, &screen.sample);
    }

    fn fold_info(&mut self, info: Info) {
        if self.folder.is_none() {
            self.folder = info.cwd;
        }
        if info.branch.is_some() {
            self.branch = info.branch;
        }
        if info.cli_version.is_some() {
            self.cli_version = info.cli_version;
        }
        if info.model.is_some() {
            self.model = info.model;
        }
        if let Some(title) = info.title {
            let better = self
                .title
                .as_ref()
                .is_none_or(|current| title.source >= current.source);
            if better && !title.text.trim().is_empty() {
                self.title = Some(title);
            }
        }
        if let Some(print_mode) = info.print_mode {
            self.print_mode = print_mode;
        }
        if info.parent_session.is_some() {
            self.parent_session = info.parent_session;
        }
    }

    fn fold_record(&mut self, record: Record, last_write: Timestamp) {
        let at = record.at.unwrap_or(last_write);
        self.n_records += 1;
        let seq = self.n_records;
        match &record.kind {
            RecordKind::Prompt { text } => {
                self.n_prompts += 1;
                if self.first_prompt.is_none() {
                    self.first_prompt = Some(text.clone());
                }
                self.last_prompt = Some(text.clone());
                self.last_prompt_at = Some(self.last_prompt_at.map_or(at, |last| last.max(at)));
                // A new prompt means every call made before it has finished one way or another.
                self.open_calls.retain(|_, call| call.at > at);
            }
            RecordKind::ToolCall {
                call_id,
                name,
                detail,
                input,
                kind,
            } => {
                self.last_tool_call = Some(self.last_tool_call.map_or(at, |last| last.max(at)));
                if !self.answered.remove(call_id) {
                    self.open_calls.insert(
                        call_id.clone(),
                        OpenCall {
                            id: call_id.clone(),
                            name: name.clone(),
                            detail: detail.clone(),
                            input: input.clone(),
                            kind: *kind,
                            at,
                            seq,
                        },
                    );
                }
            }
            RecordKind::ToolResult { call_id, .. } => {
                if self.open_calls.remove(call_id).is_none() {
                    self.answered.insert(call_id.clone());
                }
            }
            RecordKind::TurnStarted { turn_id } => self.open_turn = Some(turn_id.clone()),
            RecordKind::TurnEnded { turn_id } | RecordKind::Interrupted { turn_id } => {
                let same_turn = match (&self.open_turn, turn_id) {
                    (Some(Some(open)), Some(ended)) => open == ended,
                    _ => true,
                };
                if same_turn {
                    self.open_turn = None;
                }
                self.open_calls.clear();
            }
            RecordKind::TurnFailed { .. } => {
                self.open_turn = None;
                self.open_calls.clear();
            }
            RecordKind::SessionEnded => {
                self.ended_at = Some(at);
            }
            RecordKind::ModelText
            | RecordKind::ModelThinking
            | RecordKind::Retrying
            | RecordKind::Compacting
            | RecordKind::Unsettled => {}
            RecordKind::BackgroundStarted { id, work } => {
                self.background.insert(id.clone(), (*work, at));
                while self.background.len() > BACKGROUND_KEPT {
                    let oldest = self
                        .background
                        .iter()
                        .min_by_key(|(_, (_, started))| *started)
                        .map(|(id, _)| id.clone());
                    if let Some(oldest) = oldest {
                        self.background.remove(&oldest);
                    }
                }
                return;
            }
            RecordKind::BackgroundEnded { id } => {
                self.background.remove(id);
                return;
            }
        }
        let newer = self
            .last
            .as_ref()
            .is_none_or(|last| (at, seq) >= (last.at, last.seq));
        if newer {
            let kind = match record.kind {
                // The newest record only dates and names the turn; the open call keeps the input.
                RecordKind::ToolCall {
                    call_id,
                    name,
                    detail,
                    kind,
                    ..
                } => RecordKind::ToolCall {
                    call_id,
                    name,
                    detail,
                    input: None,
                    kind,
                },
                kind => kind,
            };
            self.last = Some(Dated { at, seq, kind });
        }
    }
}
