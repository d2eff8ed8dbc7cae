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
//! eve's vocabularies read alike here: up to stream version 26, `message.received`,
//! `message.appended` deltas closed by `message.completed` (`finishReason: "tool-calls"`
//! marks narration before a tool call), `reasoning.*`, `actions.requested` /
//! `action.input.appended` / `action.result`, `input.requested` answered by
//! `input.resolved`, `task.*`, `agent.started`; in 27, `delivery.consumed`,
//! `content.delta` progress closed by `content.completed` (`phase`), `call.*`,
//! `interaction.opened` settled by `interaction.settled`, `child.opened`. The seeds' own
//! vocabulary (`plan`, `search.query`, `source.found`, `report.final`, …) becomes the same
//! kinds of item, so every server reads as a conversation.

use crate::missions::client::MissionEvent;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use ts_rs::TS;

/// Tool output, input and messages kept per item: a step's readable output is a
/// summary, the records keep the rest.
const MAX_TOOL_TEXT: usize = 4_000;
/// Keys of open parts, calls and requests remembered at once; a part whose end was lost
/// is forgotten first.
const MAX_OPEN_KEYS: usize = 4_096;

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
}

impl ItemKind {
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
}

/// An option the service listed for a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct RequestOption {
    pub id: String,
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
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
    pub prompt: String,
    pub options: Vec<RequestOption>,
    pub allow_freeform: bool,
    /// How it ended (`answered`, `approved`, `denied`, `cancelled`, …); none while pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub outcome: Option<String>,
    /// The answer given: the chosen option's label, or the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub answer: Option<String>,
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
    /// `authorized`, `declined`, … once it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub outcome: Option<String>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub step: Option<Step>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub request: Option<PendingRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sign_in: Option<SignIn>,
    /// The records it was made from (by `seq`; 0 when built from bare events).
    #[ts(type = "number")]
    pub first_seq: u64,
    #[ts(type = "number")]
    pub last_seq: u64,
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
    /// Spend from `step.completed` / `usage.recorded` (v26, 27), in micro-dollars so the
    /// sum is exact.
    spent_micros: u64,
    /// The seeds' `spend.updated` says the total itself.
    reported_usd: Option<f64>,
    turns: u32,
    /// The last step the seeds' vocabulary opened (a search), where its sources go.
    last_search: Option<u32>,
    /// Steps whose input streams in (no input came with the request): the raw text so far.
    inputs: Vec<(u32, String)>,
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
}

/// What one or more records changed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct ConversationChanges {
    /// Changed and new items, by index.
    pub items: Vec<Item>,
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
        self.progress.upto = self.progress.upto.max(seq);
        let d = &e.data;
        let s = |k: &str| d.get(k).and_then(Value::as_str);
        match e.event.as_str() {
            // Turns.
            "turn.started" => {
                self.progress.turns += 1;
                let n = self.progress.turns;
                let at = self.push(ItemKind::Turn, format!("Turn {n}"), seq);
                self.items[at as usize].open = true;
                // A turn left open (its end lost) is closed by the next one's start.
                if let Some(old) = self.take_key("turn") {
                    self.touch(old, seq).open = false;
                }
                self.remember("turn".into(), at);
            }
            "turn.completed" | "turn.settled" | "turn.cancelled" | "turn.failed" => {
                let outcome = match e.event.as_str() {
                    "turn.settled" => s("outcome").unwrap_or("completed"),
                    "turn.cancelled" => "cancelled",
                    "turn.failed" => "failed",
                    _ => "completed",
                };
                if let Some(at) = self.take_key("turn") {
                    let n = self.turn_number(at);
                    let item = self.touch(at, seq);
                    item.open = false;
                    item.text = format!("Turn {n} {outcome}");
                }
                if outcome == "cancelled" {
                    self.end_open(seq, "cancelled");
                }
                if outcome == "failed" {
                    let msg = error_message(d).unwrap_or("The turn failed.".into());
                    self.push(ItemKind::Failure, msg, seq);
                }
            }
            "turn.waiting" | "turn.paused" => {}
            // Before eve 0.70 a turn ends at the session's wait, with no turn.completed.
            "session.waiting" | "session.completed" | "session.ended" => {
                if let Some(at) = self.take_key("turn") {
                    let n = self.turn_number(at);
                    let item = self.touch(at, seq);
                    item.open = false;
                    item.text = format!("Turn {n} completed");
                }
                if e.event == "session.ended" && s("outcome") == Some("failed") {
                    let msg = error_message(d).unwrap_or("The mission failed.".into());
                    self.end_open(seq, "cancelled");
                    self.push(ItemKind::Failure, msg, seq);
                }
            }
            // What the person said.
            "message.received" if s("kind").is_none_or(|k| k == "message") => {
                if let Some(text) = s("message").or_else(|| text_of_parts(d.get("parts"))) {
                    self.push(ItemKind::User, text.to_owned(), seq);
                }
            }
            "delivery.consumed" => {
                if let Some(text) = text_of_parts(d.get("parts")) {
                    self.push(ItemKind::User, text.to_owned(), seq);
                }
            }
            // The assistant's messages and reasoning.
            "message.appended" | "reasoning.appended" => {
                let reasoning = e.event.starts_with("reasoning");
                let key = step_key(d, if reasoning { "reason" } else { "say" });
                let kind = if reasoning {
                    ItemKind::Reasoning
                } else {
                    ItemKind::Assistant
                };
                let at = self.part(&key, kind, seq);
                let item = self.touch(at, seq);
                if let Some(so_far) = s("messageSoFar").or_else(|| s("reasoningSoFar")) {
                    item.text = so_far.to_owned();
                } else if let Some(delta) = s("messageDelta").or_else(|| s("reasoningDelta")) {
                    item.text.push_str(delta);
                }
            }
            "message.completed" | "reasoning.completed" => {
                let reasoning = e.event.starts_with("reasoning");
                let key = step_key(d, if reasoning { "reason" } else { "say" });
                // `message: null` is an intentional empty delivery: nothing to show.
                let whole = s(if reasoning { "reasoning" } else { "message" });
                if whole.is_none() && !self.has_key(&key) {
                    return;
                }
                let kind = if reasoning {
                    ItemKind::Reasoning
                } else {
                    ItemKind::Assistant
                };
                let at = self.part(&key, kind, seq);
                self.take_key(&key);
                let narration = s("finishReason") == Some("tool-calls");
                self.finish(at, whole, narration, seq);
            }
            "content.delta" => {
                let Some(part) = s("partId") else { return };
                let key = format!("part:{part}");
                let kind = match s("kind") {
                    Some("text") => ItemKind::Assistant,
                    Some("reasoning") => ItemKind::Reasoning,
                    // Another kind (a file, a result) is not a message.
                    Some(_) => return,
                    // Only a part's first record names its kind.
                    None if self.has_key(&key) => ItemKind::Assistant,
                    None => return,
                };
                let at = self.part(&key, kind, seq);
                if let Some(delta) = s("delta") {
                    self.touch(at, seq).text.push_str(delta);
                }
            }
            "content.completed" => {
                let kind = match s("kind") {
                    Some("text") => ItemKind::Assistant,
                    Some("reasoning") => ItemKind::Reasoning,
                    _ => return,
                };
                let Some(part) = s("partId") else { return };
                let key = format!("part:{part}");
                let at = self.part(&key, kind, seq);
                self.take_key(&key);
                let narration =
                    s("phase") != Some("reply") || d.get("interrupted") == Some(&true.into());
                let whole = d.get("value").and_then(Value::as_str);
                self.finish(at, whole, narration && kind == ItemKind::Assistant, seq);
            }
            // Steps: tool calls (v26 actions, 27 calls), tasks and sub-agents.
            "actions.requested" => {
                for a in d
                    .get("actions")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let Some(call) = a.get("callId").and_then(Value::as_str) else {
                        continue;
                    };
                    let name = a.get("toolName").and_then(Value::as_str).unwrap_or("tool");
                    self.open_step(format!("call:{call}"), "tool", name, a.get("input"), seq);
                }
            }
            "call.requested" => {
                let Some(call) = s("callId") else { return };
                let cap = d.get("capability");
                let name = cap
                    .and_then(|c| c.get("title").or_else(|| c.get("name")))
                    .and_then(Value::as_str)
                    .unwrap_or("tool");
                self.open_step(format!("call:{call}"), "tool", name, d.get("input"), seq);
            }
            "action.input.appended" | "call.input" => {
                let Some(call) = s("callId") else { return };
                let Some(at) = self.key(&format!("call:{call}")) else {
                    return;
                };
                let delta = s("inputTextDelta").or_else(|| s("delta")).unwrap_or("");
                // The whole input, when it came with the request, is what the step shows.
                let asked = self.items[at as usize]
                    .step
                    .as_ref()
                    .is_some_and(|st| !st.input.is_empty());
                let buffer = self.progress.inputs.iter_mut().find(|(i, _)| *i == at);
                let raw = match buffer {
                    Some((_, raw)) => raw,
                    None if asked => return,
                    None => {
                        self.progress.inputs.push((at, String::new()));
                        &mut self.progress.inputs.last_mut().expect("just pushed").1
                    }
                };
                if raw.len() < MAX_TOOL_TEXT {
                    raw.push_str(delta);
                }
                let shown = bounded(raw);
                if let Some(step) = &mut self.touch(at, seq).step {
                    step.input = shown;
                }
            }
            "action.result" | "call.settled" => {
                let Some(call) =
                    s("callId").or_else(|| d.pointer("/result/callId").and_then(Value::as_str))
                else {
                    return;
                };
                // A call seen only in its approval (or whose request was lost) still
                // shows as a step.
                let at = match self.take_key(&format!("call:{call}")) {
                    Some(at) => at,
                    None => {
                        let name = d
                            .pointer("/result/toolName")
                            .and_then(Value::as_str)
                            .unwrap_or("tool");
                        self.open_step(String::new(), "tool", name, None, seq)
                    }
                };
                let status = s("status").or_else(|| s("outcome")).unwrap_or("completed");
                let output = d.pointer("/result/output").or_else(|| d.get("output"));
                self.settle_step(at, status, output, error_message(d), seq);
            }
            "action.partial" | "call.progress" => {}
            "task.started" => {
                let Some(task) = s("taskId") else { return };
                let name = s("name").unwrap_or("background task");
                self.open_step(format!("task:{task}"), "task", name, None, seq);
            }
            "task.settled" | "task.ended" => {
                let Some(task) = s("taskId") else { return };
                let Some(at) = self.take_key(&format!("task:{task}")) else {
                    return;
                };
                let status = s("status").or_else(|| s("outcome")).unwrap_or("completed");
                self.settle_step(at, status, d.get("output"), error_message(d), seq);
            }
            "agent.started" | "child.opened" | "subagent.started" => {
                let name = s("name").unwrap_or("sub-agent");
                let key = s("sessionId")
                    .or_else(|| s("callId"))
                    .unwrap_or(name)
                    .to_owned();
                let at = self.open_step(format!("agent:{key}"), "agent", name, None, seq);
                // A sub-agent is followed on its own stream; its end is not in this one.
                if e.event != "subagent.started" {
                    self.take_key(&format!("agent:{key}"));
                    self.settle_step(at, "completed", None, None, seq);
                }
            }
            "subagent.completed" => {
                let name = s("name").unwrap_or("sub-agent");
                let key = s("sessionId").or_else(|| s("callId")).unwrap_or(name);
                if let Some(at) = self.take_key(&format!("agent:{key}")) {
                    self.settle_step(at, "completed", d.get("output"), None, seq);
                }
            }
            // Spend.
            "step.completed" | "usage.recorded" => {
                if let Some(cost) = d.pointer("/usage/costUsd").and_then(Value::as_f64)
                    && cost.is_finite()
                    && cost > 0.0
                {
                    self.progress.spent_micros = self
                        .progress
                        .spent_micros
                        .saturating_add((cost * 1e6).round() as u64);
                }
            }
            "step.failed" => {
                let msg = error_message(d).unwrap_or("A step failed.".into());
                self.push(ItemKind::Failure, msg, seq);
            }
            // Questions and approvals.
            "input.requested" => {
                for r in d
                    .get("requests")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(p) = request_of(r, r.get("requestId")) {
                        self.ask(p, seq);
                    }
                }
            }
            "input.resolved" => {
                for r in d
                    .get("resolutions")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(id) = r.get("requestId").and_then(Value::as_str) {
                        let outcome = r.get("outcome").and_then(Value::as_str);
                        self.resolve(id, outcome, r.get("response"), seq);
                    }
                }
            }
            "interaction.opened" => {
                let request = d.get("request");
                if let Some(sign_in) = request.and_then(|r| r.get("signIn")) {
                    let f = |k: &str| sign_in.get(k).and_then(Value::as_str).map(str::to_owned);
                    let name = f("displayName")
                        .or_else(|| f("name"))
                        .unwrap_or_else(|| "a service".into());
                    let description = request
                        .and_then(|r| r.get("prompt"))
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    let at = self.sign_in(
                        SignIn {
                            name,
                            description,
                            url: f("url"),
                            user_code: f("userCode"),
                            expires_at: f("expiresAt"),
                            outcome: None,
                        },
                        seq,
                    );
                    if let Some(id) = s("interactionId") {
                        self.remember(format!("req:{id}"), at);
                    }
                    return;
                }
                if let Some(p) = request.and_then(|r| request_of(r, d.get("interactionId"))) {
                    self.ask(p, seq);
                }
            }
            "interaction.settled" => {
                if let Some(id) = s("interactionId") {
                    self.resolve(id, s("outcome"), d.get("response"), seq);
                }
            }
            "authorization.required" => {
                let auth = d.get("authorization");
                let a = |k: &str| {
                    auth.and_then(|x| x.get(k))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                };
                let name = s("name").unwrap_or("a service").to_owned();
                self.sign_in(
                    SignIn {
                        name,
                        description: s("description").map(str::to_owned),
                        url: a("url"),
                        user_code: a("userCode"),
                        expires_at: a("expiresAt"),
                        outcome: None,
                    },
                    seq,
                );
            }
            "authorization.completed" => {
                if let Some(name) = s("name")
                    && let Some(at) = self.take_key(&format!("auth:{name}"))
                {
                    let item = self.touch(at, seq);
                    item.open = false;
                    if let Some(x) = &mut item.sign_in {
                        x.outcome = Some(s("outcome").unwrap_or("authorized").to_owned());
                    }
                }
            }
            // How the session ends.
            "session.failed" => {
                if let Some(at) = self.take_key("turn") {
                    let n = self.turn_number(at);
                    let item = self.touch(at, seq);
                    item.open = false;
                    item.text = format!("Turn {n} failed");
                }
                let msg = error_message(d).unwrap_or("The mission failed.".into());
                self.end_open(seq, "cancelled");
                self.push(ItemKind::Failure, msg, seq);
            }
            // The seeds' own vocabulary.
            "plan" => {
                let steps: Vec<String> = d
                    .get("steps")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect();
                if !steps.is_empty() {
                    let md = steps
                        .iter()
                        .enumerate()
                        .map(|(i, step)| format!("{}. {}", i + 1, one_line(step)))
                        .collect::<Vec<_>>()
                        .join("\n");
                    let at = self.push(ItemKind::Assistant, format!("Plan:\n\n{md}"), seq);
                    self.finish(at, None, true, seq);
                }
            }
            "search.query" => {
                let Some(query) = s("query") else { return };
                let name = s("engine").map_or("search".to_owned(), |e| format!("search ({e})"));
                let input = serde_json::json!({"query": query});
                let at = self.open_step(String::new(), "tool", &name, Some(&input), seq);
                self.settle_step(at, "completed", None, None, seq);
                self.progress.last_search = Some(at);
            }
            "source.found" => {
                let Some(url) = s("url") else { return };
                let title = s("title").map(str::to_owned);
                let at = match self.progress.last_search {
                    Some(at) => at,
                    None => {
                        let input = serde_json::json!({"url": url});
                        let at = self.open_step(String::new(), "tool", "source", Some(&input), seq);
                        self.settle_step(at, "completed", None, None, seq);
                        at
                    }
                };
                self.add_sources(at, vec![(url.to_owned(), title)], seq);
            }
            "evidence" => {
                if let Some(quote) = s("quote") {
                    let mut text = format!("> {}", one_line(quote));
                    if let Some(url) = s("sourceUrl") {
                        text.push_str(&format!("\n\n(from <{url}>)"));
                    }
                    let at = self.push(ItemKind::Assistant, text, seq);
                    self.finish(at, None, true, seq);
                }
            }
            "finding.verified" => {
                if let Some(claim) = s("claim") {
                    let at = self.push(
                        ItemKind::Assistant,
                        format!("Verified: {}", one_line(claim)),
                        seq,
                    );
                    self.finish(at, None, true, seq);
                }
            }
            "spend.updated" => {
                if let Some(spent) = d.get("spentUsd").and_then(Value::as_f64) {
                    self.progress.reported_usd = Some(spent);
                }
            }
            "report.final" => {
                let mut md = String::new();
                if let Some(title) = s("title") {
                    md.push_str(&format!("# {}\n\n", one_line(title)));
                }
                if let Some(summary) = s("summary") {
                    md.push_str(summary.trim());
                    md.push_str("\n\n");
                }
                for f in d
                    .get("findings")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    md.push_str(&format!("- {}\n", one_line(f)));
                }
                if !md.is_empty() {
                    let at = self.push(ItemKind::Assistant, md.trim_end().to_owned(), seq);
                    self.finish(at, None, false, seq);
                }
            }
            _ => {}
        }
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
        }
    }

    /// Spend so far in dollars: the steps' costs summed, or the total the service said.
    pub fn spent_usd(&self) -> Option<f64> {
        if self.progress.spent_micros > 0 {
            Some(self.progress.spent_micros as f64 / 1e6)
        } else {
            self.progress.reported_usd
        }
    }

    /// What the agent does now, read from the newest open step, question or message.
    pub fn activity(&self) -> Option<String> {
        let item = self.items.iter().rev().take(64).find(|i| i.open)?;
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
        })
    }

    // ---- building blocks ----

    fn push(&mut self, kind: ItemKind, text: String, seq: u64) -> u32 {
        let index = self.items.len() as u32;
        self.items.push(Item {
            index,
            kind,
            text,
            open: false,
            narration: false,
            html: None,
            step: None,
            request: None,
            sign_in: None,
            first_seq: seq,
            last_seq: seq,
        });
        self.changed.insert(index);
        index
    }

    fn touch(&mut self, at: u32, seq: u64) -> &mut Item {
        self.changed.insert(at);
        let item = &mut self.items[at as usize];
        item.last_seq = item.last_seq.max(seq);
        item
    }

    fn key(&self, key: &str) -> Option<u32> {
        self.progress
            .open
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, at)| *at)
    }

    fn has_key(&self, key: &str) -> bool {
        self.key(key).is_some()
    }

    fn remember(&mut self, key: String, at: u32) {
        self.progress.open.retain(|(k, _)| *k != key);
        if self.progress.open.len() >= MAX_OPEN_KEYS {
            self.progress.open.remove(0);
        }
        self.progress.open.push((key, at));
    }

    fn take_key(&mut self, key: &str) -> Option<u32> {
        let at = self.key(key)?;
        self.progress.open.retain(|(k, _)| k != key);
        Some(at)
    }

    /// The message or reasoning `key` streams into, opened if new.
    fn part(&mut self, key: &str, kind: ItemKind, seq: u64) -> u32 {
        if let Some(at) = self.key(key) {
            return at;
        }
        let at = self.push(kind, String::new(), seq);
        self.items[at as usize].open = true;
        self.remember(key.to_owned(), at);
        at
    }

    fn finish(&mut self, at: u32, whole: Option<&str>, narration: bool, seq: u64) {
        let item = self.touch(at, seq);
        if let Some(whole) = whole {
            item.text = whole.to_owned();
        }
        item.open = false;
        if item.kind == ItemKind::Assistant {
            item.narration = narration;
            item.html = Some(crate::missions::markdown::to_html(&item.text));
        }
    }

    fn turn_number(&self, at: u32) -> u32 {
        self.items[..=at as usize]
            .iter()
            .filter(|i| i.kind == ItemKind::Turn)
            .count() as u32
    }

    fn open_step(
        &mut self,
        key: String,
        kind: &str,
        name: &str,
        input: Option<&Value>,
        seq: u64,
    ) -> u32 {
        let input = input.map(readable_input).unwrap_or_default();
        let at = self.push(ItemKind::Tool, String::new(), seq);
        let item = &mut self.items[at as usize];
        item.open = true;
        item.step = Some(Step {
            kind: kind.to_owned(),
            name: name.to_owned(),
            input,
            status: StepStatus::Running,
            output: None,
            error: None,
            sources: Vec::new(),
        });
        item.text = step_line(item.step.as_ref().expect("just set"), &self.sources);
        if !key.is_empty() {
            self.remember(key, at);
        }
        at
    }

    fn settle_step(
        &mut self,
        at: u32,
        status: &str,
        output: Option<&Value>,
        error: Option<String>,
        seq: u64,
    ) {
        let status = match status {
            "failed" | "error" => StepStatus::Failed,
            "rejected" | "denied" => StepStatus::Rejected,
            "cancelled" | "interrupted" | "abandoned" => StepStatus::Cancelled,
            _ => StepStatus::Completed,
        };
        let found = output.map(sources_of).unwrap_or_default();
        let streamed = self
            .progress
            .inputs
            .iter()
            .position(|(i, _)| *i == at)
            .map(|i| self.progress.inputs.swap_remove(i).1);
        let item = self.touch(at, seq);
        item.open = false;
        if let Some(step) = &mut item.step {
            step.status = status;
            if let Some(raw) = streamed {
                step.input = serde_json::from_str::<Value>(&raw)
                    .map(|v| readable_input(&v))
                    .unwrap_or_else(|_| bounded(&raw));
            }
            step.error = error;
            step.output = output
                .filter(|o| !o.is_null())
                .map(|o| readable_output(o, !found.is_empty()))
                .filter(|o| !o.is_empty());
        }
        self.add_sources(at, found, seq);
        let step = self.items[at as usize].step.clone();
        if let Some(step) = step {
            self.items[at as usize].text = step_line(&step, &self.sources);
        }
    }

    fn add_sources(&mut self, at: u32, found: Vec<(String, Option<String>)>, seq: u64) {
        if found.is_empty() {
            return;
        }
        let found_by = self.items[at as usize].step.clone().map(|mut step| {
            step.status = StepStatus::Completed;
            step_line(&step, &self.sources)
        });
        for (url, title) in found {
            let title = title.filter(|t| !t.trim().is_empty());
            if !self.source_urls.contains_key(&url) {
                self.source_urls.insert(url.clone(), self.sources.len());
                self.sources.push(Source {
                    url: url.clone(),
                    title: title.clone(),
                    item: at,
                    found_by: found_by.clone(),
                });
                self.new_sources += 1;
            }
            let item = self.touch(at, seq);
            if let Some(step) = &mut item.step
                && !step.sources.iter().any(|s| s.url == url)
            {
                step.sources.push(Source {
                    url,
                    title,
                    item: at,
                    found_by: None,
                });
            }
        }
    }

    fn ask(&mut self, request: PendingRequest, seq: u64) {
        let key = format!("req:{}", request.request_id);
        let at = self.push(ItemKind::Question, request.prompt.clone(), seq);
        let item = &mut self.items[at as usize];
        item.open = true;
        item.request = Some(request);
        self.remember(key, at);
    }

    fn resolve(&mut self, id: &str, outcome: Option<&str>, response: Option<&Value>, seq: u64) {
        let Some(at) = self.take_key(&format!("req:{id}")) else {
            return;
        };
        let item = self.touch(at, seq);
        item.open = false;
        let outcome = outcome.unwrap_or("answered").to_owned();
        if let Some(sign_in) = &mut item.sign_in {
            sign_in.outcome = Some(outcome);
            return;
        }
        if let Some(r) = &mut item.request {
            let value = response.map(|v| v.get("value").unwrap_or(v));
            let option = value
                .and_then(|v| v.get("optionId"))
                .and_then(Value::as_str);
            r.answer = match option {
                Some(id) => Some(
                    r.options
                        .iter()
                        .find(|o| o.id == id)
                        .map_or(id.to_owned(), |o| o.label.clone()),
                ),
                None => value
                    .and_then(|v| v.get("text"))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            };
            r.outcome = Some(outcome);
        }
    }

    fn sign_in(&mut self, sign_in: SignIn, seq: u64) -> u32 {
        let key = format!("auth:{}", sign_in.name);
        // Asked again (a new code): the old prompt is withdrawn.
        if let Some(old) = self.take_key(&key) {
            let item = self.touch(old, seq);
            item.open = false;
            if let Some(x) = &mut item.sign_in {
                x.outcome = Some("replaced".into());
            }
        }
        let text = match &sign_in.description {
            Some(d) => format!("Sign in to {}: {d}", sign_in.name),
            None => format!("Sign in to {}", sign_in.name),
        };
        let at = self.push(ItemKind::SignIn, text, seq);
        let item = &mut self.items[at as usize];
        item.open = true;
        item.sign_in = Some(sign_in);
        self.remember(key, at);
        at
    }

    /// A cancelled or failed turn ends what it had open: its steps, questions, sign-ins
    /// and streaming messages (eve withdraws them).
    fn end_open(&mut self, seq: u64, how: &str) {
        let open: Vec<(String, u32)> = std::mem::take(&mut self.progress.open);
        for (key, at) in open {
            if key.starts_with("turn") {
                continue;
            }
            let item = self.touch(at, seq);
            item.open = false;
            if let Some(step) = &mut item.step {
                step.status = StepStatus::Cancelled;
            }
            if let Some(r) = &mut item.request {
                r.outcome = Some(how.to_owned());
            }
            if let Some(x) = &mut item.sign_in {
                x.outcome = Some(how.to_owned());
            }
        }
    }
}

/// Where a v26 message or reasoning streams: its turn and step.
fn step_key(d: &Value, what: &str) -> String {
    let turn = d
        .get("turnId")
        .and_then(Value::as_str)
        .or_else(|| d.pointer("/scope/turnId").and_then(Value::as_str))
        .unwrap_or("");
    let step = d.get("stepIndex").and_then(Value::as_u64).unwrap_or(0);
    format!("{what}:{turn}:{step}")
}

fn text_of_parts(parts: Option<&Value>) -> Option<&str> {
    parts?.as_array()?.iter().find_map(|p| {
        let kind = p.get("kind").or_else(|| p.get("type"))?.as_str()?;
        (kind == "text").then(|| p.get("text")?.as_str()).flatten()
    })
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn bounded(s: &str) -> String {
    if s.len() <= MAX_TOOL_TEXT {
        return s.to_owned();
    }
    let mut end = MAX_TOOL_TEXT;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// eve's `{code, message}` error, or a `message` beside the other fields.
fn error_message(d: &Value) -> Option<String> {
    let e = d.get("error").unwrap_or(d);
    e.get("message")
        .and_then(Value::as_str)
        .or_else(|| e.as_str())
        .map(str::to_owned)
}

/// A step's input as a person reads it: the query or URL when that is what it is.
fn readable_input(v: &Value) -> String {
    for k in ["query", "q", "url", "path", "prompt"] {
        if let Some(s) = v.get(k).and_then(Value::as_str)
            && v.as_object().is_some_and(|o| o.len() <= 2)
        {
            return bounded(s);
        }
    }
    match v {
        Value::String(s) => bounded(s),
        Value::Null => String::new(),
        _ => bounded(&v.to_string()),
    }
}

/// What a step's output says, with its sources left to the source list.
fn readable_output(v: &Value, had_sources: bool) -> String {
    match v {
        Value::String(s) => bounded(s),
        Value::Object(o) if had_sources && o.len() == 1 && o.contains_key("sources") => {
            String::new()
        }
        Value::Object(o) => {
            for k in ["text", "summary", "content", "result"] {
                if let Some(s) = o.get(k).and_then(Value::as_str) {
                    return bounded(s);
                }
            }
            bounded(&serde_json::to_string_pretty(v).unwrap_or_default())
        }
        _ => bounded(&v.to_string()),
    }
}

/// The sources in a step's output: `{sources: [{url, title}]}`, `{results: [...]}`, a
/// list of them, or one `{url, title}`.
fn sources_of(v: &Value) -> Vec<(String, Option<String>)> {
    let one = |s: &Value| {
        let url = s
            .get("url")
            .or_else(|| s.get("link"))
            .or_else(|| s.get("href"))
            .and_then(Value::as_str)
            .filter(|u| u.starts_with("http://") || u.starts_with("https://"))?;
        let title = s
            .get("title")
            .or_else(|| s.get("name"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        Some((url.to_owned(), title))
    };
    let list = v.get("sources").or_else(|| v.get("results")).unwrap_or(v);
    match list {
        Value::Array(a) => a.iter().take(100).filter_map(one).collect(),
        Value::Object(_) => one(list).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// A step in one line: "Searching: urban heat exposure", "Read: Global report …".
fn step_line(step: &Step, sources: &[Source]) -> String {
    let running = step.status == StepStatus::Running;
    let name = step.name.to_lowercase();
    let input = step.input.as_str();
    let is_url = input.starts_with("http://") || input.starts_with("https://");
    let what = if is_url {
        sources
            .iter()
            .find(|s| s.url == input)
            .and_then(|s| s.title.clone())
            .unwrap_or_else(|| input.to_owned())
    } else {
        one_line(input)
    };
    let verb = if name.contains("search") {
        if running { "Searching" } else { "Searched" }
    } else if is_url || name.contains("read") || name.contains("fetch") || name.contains("browse") {
        if running { "Reading" } else { "Read" }
    } else {
        let label = match step.kind.as_str() {
            "task" => format!("Background task {}", step.name),
            "agent" => format!("Sub-agent {}", step.name),
            _ => step.name.clone(),
        };
        return match (running, what.is_empty() || what.starts_with('{')) {
            (true, _) => format!("Running {label}"),
            (false, true) => label,
            (false, false) => format!("{label}: {}", short(&what)),
        };
    };
    if what.is_empty() || what.starts_with('{') {
        verb.to_owned()
    } else {
        format!("{verb}: {}", short(&what))
    }
}

fn short(s: &str) -> String {
    let mut out: String = s.chars().take(120).collect();
    if s.chars().count() > 120 {
        out.push('…');
    }
    out
}

fn request_of(r: &Value, id: Option<&Value>) -> Option<PendingRequest> {
    let request_id = id?.as_str()?.to_owned();
    let s = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_owned);
    let options = r
        .get("options")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|o| {
            Some(RequestOption {
                id: o.get("id")?.as_str()?.to_owned(),
                label: o
                    .get("label")
                    .and_then(Value::as_str)
                    .or_else(|| o.get("id")?.as_str())?
                    .to_owned(),
                description: o
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            })
        })
        .collect();
    Some(PendingRequest {
        request_id,
        kind: s("kind").unwrap_or_else(|| "question".into()),
        prompt: s("prompt")
            .or_else(|| s("title"))
            .unwrap_or_else(|| "The mission asks for an answer.".into()),
        options,
        allow_freeform: r
            .get("allowFreeform")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        outcome: None,
        answer: None,
    })
}
