//! A mission read as the conversation it is: turns, the person's messages, the
//! assistant's replies assembled from their deltas, reasoning, tool calls as steps (with
//! the sources they found), questions and sign-ins with their outcome, failures, and the
//! spend. The window, `mission show`, the transcript and the exports all read this one
//! model. It is derived from the stored records, which stay the truth: the same records
//! always give the same conversation, whole or as they arrive one by one.
//!
//! Each record changes at most a few items, which [`Conversation::take_changes`] hands
//! out, so a front end redraws one growing message, not the whole list; the store keeps
//! the items (`MissionStore::conversation`), so a long mission opens at once and pages by
//! item.
//!
//! It reads facts ([`crate::missions::protocol`]), never wire names, so every generation
//! of eve and the seeds' own dialect become the same kinds of item; [`apply`] says what
//! each fact does to the items.

mod apply;
pub mod cards;
mod grown;
pub mod markdown;
mod readable;
mod words;

pub use grown::{Grown, TextAppended, TextClosed};

use crate::missions::client::MissionSpec;
pub use crate::missions::protocol::facts::{FileRef, RequestOption};
use crate::missions::protocol::{self, MissionEvent};
use crate::missions::spend::BudgetUse;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use ts_rs::TS;

/// What a conversation item is (`data-kind` in the window).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
#[ts(rename_all = "kebab-case")]
pub enum ItemKind {
    User,
    Assistant,
    Reasoning,
    Tool,
    Question,
    SignIn,
    Failure,
    Turn,
    /// A background task's result, delivered after its turn.
    Result,
}

impl ItemKind {
    pub const ALL: [ItemKind; 9] = [
        ItemKind::User,
        ItemKind::Assistant,
        ItemKind::Reasoning,
        ItemKind::Tool,
        ItemKind::Question,
        ItemKind::SignIn,
        ItemKind::Failure,
        ItemKind::Turn,
        ItemKind::Result,
    ];

    /// The kind [`ItemKind::as_str`] names.
    pub fn parse(name: &str) -> Option<ItemKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::User => "user",
            ItemKind::Assistant => "assistant",
            ItemKind::Reasoning => "reasoning",
            ItemKind::Tool => "tool",
            ItemKind::Question => "question",
            ItemKind::SignIn => "sign-in",
            ItemKind::Failure => "failure",
            ItemKind::Turn => "turn",
            ItemKind::Result => "result",
        }
    }
}

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// A tool call's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename_all = "lowercase")]
pub enum StepStatus {
    Running,
    Completed,
    Failed,
    Rejected,
    Cancelled,
}

/// A source a step found or read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct Source {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    /// The item that first cited it (the sources list links there).
    pub item: u32,
    /// That step in one line ("Searched: urban heat exposure").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub found_by: Option<String>,
}

/// A tool call, background task or sub-agent, as one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct Step {
    /// `tool`, `task` or `agent`.
    pub kind: String,
    pub name: String,
    /// What the step was asked, readable: the query or URL when there is one, else its
    /// input as JSON.
    pub input: String,
    pub status: StepStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub output: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<String>,
    #[serde(default)]
    pub sources: Vec<Source>,
    /// A sub-agent's own session, which opens to show its conversation (read only then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub child: Option<ChildRef>,
}

/// What opens a delegated sub-agent's conversation: the call that delegated to it (its
/// handle in the parent's route), its session and the stream path the record named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct ChildRef {
    pub call_id: String,
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub stream_path: Option<String>,
}

/// A question, approval or budget prompt the session holds its turn for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct PendingRequest {
    /// The id an answer names (eve 27: the interaction's id).
    pub request_id: String,
    /// `question`, `tool-approval`, `session-limit`, `approval`, `budget`, ... (open).
    pub kind: String,
    /// It asks to approve a call, not a question: the window offers approve and deny.
    #[serde(default)]
    pub approval: bool,
    pub prompt: String,
    /// A short heading above the prompt (eve 27's `title`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    pub options: Vec<RequestOption>,
    pub allow_freeform: bool,
    /// How it ended: eve 27's closed set (`accepted`, `declined`, `invalid`, `failed`,
    /// `withdrawn`, `interrupted`, `abandoned`, `expired`), B's (`answered`, `approved`,
    /// `denied`, `ignored`, …) or `cancelled` with its turn; none while pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub outcome: Option<String>,
    /// Why it ended, when eve says (`superseded-by-message`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
    /// How it ended, in plain words ("Withdrawn by your message"): what the window and
    /// `mission show` say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub outcome_text: Option<String>,
    /// The answer given: the chosen option's label, or the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub answer: Option<String>,
    /// While still open: what became of the last answer the service took but did not
    /// apply (eve 1.x's `response.settled` `refused`, `expired`, …), in plain words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub refusal: Option<String>,
}

/// A sign-in the mission waits for: where to go, the code to type, until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct SignIn {
    /// What to sign in to (eve's `name`).
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub user_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub expires_at: Option<String>,
    /// What to do on the page, in the service's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub instructions: Option<String>,
    /// The attempt shown (B's `attemptId`; 27: its interaction): a newer attempt for the
    /// same service replaces it in this item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub attempt: Option<String>,
    /// `authorized`, `declined`, `accepted`, … once it ended; `superseded` while a newer
    /// attempt is awaited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub outcome: Option<String>,
    /// How it ended, in plain words ("Signed in").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub outcome_text: Option<String>,
}

/// One item of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct Item {
    /// Its place in the conversation, from 0; stable once given.
    pub index: u32,
    pub kind: ItemKind,
    /// A message's or reasoning's whole text so far; a failure's message; a turn's label;
    /// a step's or question's one-line summary.
    pub text: String,
    /// Still streaming (a message, reasoning), running (a step) or pending (a question).
    pub open: bool,
    /// An assistant message narrating work it goes on with (before a tool call), not
    /// a reply.
    #[serde(default)]
    pub narration: bool,
    /// A finished assistant message as HTML from its Markdown (see `markdown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub html: Option<String>,
    /// Where each top-level block of `html` starts, in UTF-16 code units (see
    /// `markdown::to_html_blocks`): a window following a long reply draws its last blocks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<u32>>", optional)]
    pub html_blocks: Vec<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub step: Option<Step>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub request: Option<PendingRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sign_in: Option<SignIn>,
    /// Files that came with a message, or that the agent made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<FileRef>>", optional)]
    pub files: Vec<FileRef>,
    /// A mission's first message, read as what it was made from: the window shows its
    /// objective with its budget, not the four labelled lines the service was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mission: Option<MissionSpec>,
    /// The records it was made from (by `seq`; 0 when built from bare events).
    #[ts(type = "number")]
    pub first_seq: u64,
    #[ts(type = "number")]
    pub last_seq: u64,
}

impl Item {
    /// A new closed item at `index`, made from the record `seq`, with nothing but its text.
    pub(crate) fn new(index: u32, kind: ItemKind, text: String, seq: u64) -> Item {
        Item {
            index,
            kind,
            text,
            open: false,
            narration: false,
            html: None,
            html_blocks: Vec::new(),
            step: None,
            request: None,
            sign_in: None,
            files: Vec::new(),
            mission: None,
            first_seq: seq,
            last_seq: seq,
        }
    }
}

/// One message of the conversation, as `mission show` lists them.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct Message {
    pub role: Role,
    pub text: String,
    /// The assistant narrating work it goes on with (before a tool call), not replying.
    pub narration: bool,
    /// Still streaming.
    pub open: bool,
    /// Files that came with it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<FileRef>>", optional)]
    pub files: Vec<FileRef>,
}

/// Where the conversation stands besides its items: what the store keeps beside them so
/// records arriving later (after a restart too) continue it exactly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// The last record read (its `seq`).
    #[serde(default)]
    upto: u64,
    /// The open part, call, request or sign-in each key writes into.
    open: Vec<(String, u32)>,
    /// What each step or call cost, summed in micro-dollars so the sum is exact.
    spent_micros: u64,
    /// The total the service reported itself (the seeds' `spend.updated`; eve B's
    /// cumulative usage, which counts the agents it delegated to), newest first.
    reported_usd: Option<f64>,
    /// `spent_micros` when the total was last reported: what steps cost since is added.
    #[serde(default)]
    micros_at_report: u64,
    turns: u32,
    /// The last step the seeds' vocabulary opened (a search), where its sources go.
    last_search: Option<u32>,
    /// Steps whose input streams in (no input came with the request): the raw text so far.
    inputs: Vec<(u32, String)>,
    /// What a held turn waits on, readable ("the sub-agent researcher"), while it does.
    #[serde(default)]
    held_on: Option<String>,
    /// Sub-agents by the call that delegated to them: their names.
    #[serde(default)]
    agents: Vec<(String, String)>,
}

/// The conversation so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversation {
    pub items: Vec<Item>,
    /// Every source found, once per URL, in the order first found.
    pub sources: Vec<Source>,
    pub progress: Progress,
    /// Items changed since the last `take_changes`.
    changed: BTreeSet<u32>,
    /// Sources added since the last `take_changes`.
    new_sources: usize,
    source_urls: HashMap<String, usize>,
    /// The mission's budget, when this is a mission's own conversation (a sub-agent's has
    /// none): what the spend is judged against.
    budget_cents: Option<u64>,
}

/// What one or more records changed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct ConversationChanges {
    /// Changed and new items, by index.
    pub items: Vec<Item>,
    /// Open items that only grew at the end of their text, as what they grew by (to
    /// windows only: see [`Grown`]; empty elsewhere).
    pub appended: Vec<TextAppended>,
    /// Open items that closed with the text windows were sent, sent without it (to
    /// windows only: see [`Grown`]; empty elsewhere).
    pub closed: Vec<TextClosed>,
    /// Sources found for the first time.
    pub sources: Vec<Source>,
    pub facts: ConversationFacts,
}

/// The figures a window shows beside the items.
#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct ConversationFacts {
    /// How many records it was read from.
    #[ts(type = "number")]
    pub records: u64,
    /// How many items the conversation has.
    pub items: u32,
    /// How many sources it found.
    pub sources: u32,
    /// What the agent does now ("Searching: urban heat exposure"), while something runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub activity: Option<String>,
    /// Spend so far in dollars, when the service reported any.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub spent_usd: Option<f64>,
    /// The index of the report (the newest finished reply), if there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub report: Option<u32>,
    /// The spend against the mission's budget, when both are known: the verdict (and its
    /// words) the window shows as core says it, the same as the CLI's.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub budget: Option<BudgetUse>,
}

/// The summary `mission show --json` and the window's answer cards read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct ConversationSummary {
    pub messages: Vec<Message>,
    pub pending: Vec<PendingRequest>,
    /// Sign-ins asked for and not completed yet.
    pub sign_ins: Vec<SignIn>,
}

impl Conversation {
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a MissionEvent>) -> Self {
        let mut c = Self::default();
        for e in events {
            c.apply(e);
        }
        c.take_changes();
        c
    }

    /// A conversation continued from what the store kept.
    pub fn restore(items: Vec<Item>, sources: Vec<Source>, progress: Progress) -> Self {
        let source_urls = sources
            .iter()
            .enumerate()
            .map(|(i, s)| (s.url.clone(), i))
            .collect();
        Self {
            items,
            sources,
            progress,
            source_urls,
            ..Self::default()
        }
    }

    /// Takes one record into account.
    pub fn apply(&mut self, e: &MissionEvent) {
        self.apply_at(e, 0);
    }

    /// The last record read (its `seq`; 0 for bare events).
    pub fn upto(&self) -> u64 {
        self.progress.upto
    }

    /// Takes record `seq` into account.
    pub fn apply_at(&mut self, e: &MissionEvent, seq: u64) {
        self.take_facts(&protocol::read(e), seq);
    }

    /// The items and sources changed since the last call, with the figures.
    pub fn take_changes(&mut self) -> ConversationChanges {
        let items = std::mem::take(&mut self.changed)
            .into_iter()
            .filter_map(|i| self.items.get(i as usize).cloned())
            .collect();
        let from = self.sources.len() - self.new_sources.min(self.sources.len());
        self.new_sources = 0;
        ConversationChanges {
            items,
            appended: Vec::new(),
            closed: Vec::new(),
            sources: self.sources[from..].to_vec(),
            facts: self.facts(),
        }
    }

    /// Whether records changed anything since the last `take_changes`.
    pub fn has_changes(&self) -> bool {
        !self.changed.is_empty() || self.new_sources > 0
    }

    pub fn facts(&self) -> ConversationFacts {
        ConversationFacts {
            records: self.progress.upto,
            items: self.items.len() as u32,
            sources: self.sources.len() as u32,
            activity: self.activity(),
            spent_usd: self.spent_usd(),
            report: self.report().map(|r| r.index),
            budget: (self.budget_cents).and_then(|cents| BudgetUse::of(self.spent_usd(), cents)),
        }
    }

    /// Judges the spend against `cents`, the mission's budget.
    pub fn set_budget(&mut self, cents: u64) {
        self.budget_cents = Some(cents);
    }

    /// Spend so far in dollars: the steps' costs summed, or the total the service said.
    pub fn spent_usd(&self) -> Option<f64> {
        let since = self.progress.spent_micros - self.progress.micros_at_report;
        match self.progress.reported_usd {
            // The service's own total counts what step costs miss (delegated agents).
            Some(total) => Some(total + since as f64 / 1e6),
            None if self.progress.spent_micros > 0 => Some(self.progress.spent_micros as f64 / 1e6),
            None => None,
        }
    }

    /// What the agent does now, read from the newest open step, question or message.
    /// A question or sign-in the person owes comes first; then what a held turn waits on.
    pub fn activity(&self) -> Option<String> {
        let item = self.items.iter().rev().take(64).find(|i| i.open);
        let owed = item.is_some_and(|i| matches!(i.kind, ItemKind::Question | ItemKind::SignIn));
        if let Some(on) = self.progress.held_on.as_ref().filter(|_| !owed) {
            return Some(format!("Waiting for {on}"));
        }
        let item = item?;
        Some(match item.kind {
            ItemKind::Tool => {
                let step = item.step.as_ref()?;
                return Some(item.text.clone()).filter(|_| step.status == StepStatus::Running);
            }
            ItemKind::Reasoning => "Thinking".into(),
            ItemKind::Assistant => "Writing".into(),
            ItemKind::Question => "Waiting for your answer".into(),
            ItemKind::SignIn => format!(
                "Waiting for you to sign in to {}",
                item.sign_in
                    .as_ref()
                    .map_or("a service", |s| s.name.as_str())
            ),
            ItemKind::Turn => "Working".into(),
            _ => return None,
        })
    }

    /// The newest finished assistant reply (not narration): the report.
    pub fn report(&self) -> Option<&Item> {
        self.items
            .iter()
            .rev()
            .find(|m| m.kind == ItemKind::Assistant && !m.narration && !m.open)
    }

    /// The messages, the requests still pending and the sign-ins still open.
    pub fn summary(&self) -> ConversationSummary {
        let mut out = ConversationSummary::default();
        for item in &self.items {
            match item.kind {
                ItemKind::User | ItemKind::Assistant => out.messages.push(Message {
                    role: if item.kind == ItemKind::User {
                        Role::User
                    } else {
                        Role::Assistant
                    },
                    text: item.text.clone(),
                    narration: item.narration,
                    open: item.open,
                    files: item.files.clone(),
                }),
                ItemKind::Question if item.open => {
                    out.pending.extend(item.request.clone());
                }
                ItemKind::SignIn if item.open => out.sign_ins.extend(item.sign_in.clone()),
                _ => {}
            }
        }
        out
    }

    /// The messages, as `mission show` lists them.
    pub fn messages(&self) -> Vec<Message> {
        self.summary().messages
    }

    /// The requests still waiting for an answer.
    pub fn pending(&self) -> Vec<PendingRequest> {
        self.summary().pending
    }

    /// The last assistant message that is a reply, not narration.
    pub fn last_reply(&self) -> Option<Message> {
        self.report().map(|i| Message {
            role: Role::Assistant,
            text: i.text.clone(),
            narration: false,
            open: false,
            files: i.files.clone(),
        })
    }
}
