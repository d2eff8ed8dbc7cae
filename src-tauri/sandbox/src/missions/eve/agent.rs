//! The research agent's turns in eve's v26 event vocabulary (`turn.started`,
//! `message.appended`, `actions.requested`, …), generation-neutral: the wire module
//! sends them as they are (A/B) or maps them to v27 facts (27). The few differences
//! between generations in *what* happens (how a question holds the turn, the
//! `session.waiting` token) are decided here from the session's protocol.
//!
//! Spend: each model step costs a share of what is left under 95% of the budget, so
//! the sum of `usage.costUsd` never reaches the budget. Once the spend reaches 90% of
//! it, the turn asks once per session with a `session-limit` request (`continue` /
//! `stop`).

use crate::knobs::{HeldShape, MissionProtocol};
use crate::missions::script::{Rng, ascii_slug, phrases};
use serde_json::{Value, json};

mod asks;
mod speech;
pub use asks::{AskKnobs, Asks};

/// Spend never reaches this share of the budget (percent).
const SPEND_CAP_PERCENT: u64 = 95;
/// From this share of the budget on (percent), the turn asks whether to go on.
const LIMIT_PERCENT: u64 = 90;
const MODEL_ID: &str = "sandbox/research-1";
/// About how many events a first turn has besides its rounds, and each round adds
/// (measured: the `events` extension asks for a length in events).
const OVERHEAD_EVENTS: u64 = 90;
const EVENTS_PER_ROUND: u64 = 38;
/// The most deltas the `replyDeltas` extension may ask the report to be.
pub const MAX_REPLY_DELTAS: u64 = 100_000;

/// How long a background task holds its turn (the `backgroundTask` knob), and how long
/// after a session's wait a task's result comes (`taskResult`).
pub const TASK_MS: u64 = 1_500;
/// Not an event: the runner waits its `ms` and puts nothing on the wire.
pub const PAUSE: &str = "sandbox.pause";

/// One event of the v26 vocabulary, before it is put on the wire.
#[derive(Debug, Clone)]
pub struct Ev {
    pub kind: &'static str,
    pub data: Value,
    /// The delivery (a create or follow-up message, or an answer) this event answers.
    pub delivery: Option<String>,
}

/// A request the session is waiting on an answer to.
#[derive(Debug, Clone)]
pub struct Open {
    pub request_id: String,
    pub kind: &'static str,
    pub options: Vec<String>,
    pub allow_freeform: bool,
}

/// What the session will be once its queued events are out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    /// Waiting for the next message (`session.waiting`).
    Idle,
    /// B and 27: a turn held open on input (`turn.waiting` / `turn.paused`).
    Held,
    /// `session.completed` / `session.ended`.
    Ended,
}

pub struct Agent {
    pub proto: MissionProtocol,
    rng: Rng,
    objective: String,
    phrases: Vec<String>,
    budget_cents: u64,
    pub spent_cents: u64,
    /// Research rounds still to play in the current turn.
    rounds_left: u64,
    asked_limit: bool,
    task_mode: bool,
    started: bool,
    pub turn_id: String,
    pub sequence: u64,
    step: u64,
    ids: u64,
    found: Vec<(String, String)>,
    claims: Vec<(String, String, String)>,
    /// The report's length in `message.appended` deltas (the `replyDeltas` extension);
    /// `None`: as long as its findings make it.
    reply_deltas: Option<u64>,
    /// Hands one task to a sub-agent before the report (the `delegate` fault).
    delegate: bool,
    /// Its first model call fails for good (the `modelFailure` knob).
    fail: bool,
    /// The files the message being applied carries, as its records describe them.
    pub attached: Vec<Value>,
    /// 27: each reply ends with two files it made (the `agentFile` knob).
    make_files: bool,
    /// What the sub-agents it delegated to spent: in eve's cumulative usage, never in a
    /// step's own.
    delegated_cents: u64,
    /// The `spendPercent` knob, until the turn has spent that much.
    spend_to: Option<u64>,
    /// What was added to reach it.
    extra_cents: u64,
    /// The sub-agents it started, in order.
    pub delegated: Vec<Delegated>,
    /// The parent session whose route a child's `streamPath` names (the `childRoute`
    /// knob's `parent`, as eve does for a remote child); `None`: the child's own stream.
    child_via: Option<String>,
    /// A sub-agent's own session: one research round, then its reply; it never asks.
    sub_agent: bool,
    /// How B holds a turn (the `heldShape` knob).
    held_shape: HeldShape,
    /// B: a background task holds the turn before the report, once (`backgroundTask`).
    background_task: bool,
    /// B: a task's result comes in a turn of its own after the first wait, once
    /// (`taskResult`).
    task_result: bool,
    /// The approval and sign-in knobs, and where they stand.
    pub asks: Asks,
}

/// A sub-agent this agent handed a task to.
#[derive(Debug, Clone)]
pub struct Delegated {
    pub call_id: String,
    pub session_id: String,
    pub task: String,
    /// What the parent researches: the child's own subject.
    pub topic: String,
}

impl Agent {
    /// `events`: about how many events the first turn should have (`None`: 3 to 5
    /// research rounds).
    pub fn new(
        proto: MissionProtocol,
        seed: u64,
        objective: &str,
        budget_cents: u64,
        events: Option<u64>,
        task_mode: bool,
    ) -> Self {
        let mut rng = Rng::new(seed ^ 0x6576_6521);
        let rounds = match events {
            Some(n) => (n.saturating_sub(OVERHEAD_EVENTS) / EVENTS_PER_ROUND).max(1),
            None => rng.range(3, 5),
        };
        let mut phrases = phrases(objective);
        for fallback in ["the evidence base", "reported outcomes"] {
            if phrases.len() < 2 {
                phrases.push(fallback.to_owned());
            }
        }
        Self {
            proto,
            rng,
            objective: objective.split_whitespace().collect::<Vec<_>>().join(" "),
            phrases,
            budget_cents,
            spent_cents: 0,
            rounds_left: rounds,
            asked_limit: false,
            task_mode,
            started: false,
            turn_id: String::new(),
            sequence: 0,
            step: 0,
            ids: 0,
            found: Vec::new(),
            claims: Vec::new(),
            reply_deltas: None,
            delegate: false,
            fail: false,
            attached: Vec::new(),
            make_files: false,
            delegated_cents: 0,
            spend_to: None,
            extra_cents: 0,
            delegated: Vec::new(),
            child_via: None,
            sub_agent: false,
            held_shape: HeldShape::On,
            background_task: false,
            task_result: false,
            asks: Asks::default(),
        }
    }

    /// B's holds in `shape`; a background task before the report (`task`) and a task
    /// result after the first wait (`result`).
    pub fn holding(mut self, shape: HeldShape, task: bool, result: bool) -> Self {
        let b = self.proto == MissionProtocol::EveB;
        self.held_shape = shape;
        self.background_task = b && task;
        self.task_result = b && result;
        self
    }

    /// Holds a B turn, as the `heldShape` knob says: `on` is what 0.70 and later name.
    fn hold_b(&mut self, out: &mut Vec<Ev>, on: &str) {
        let usage = self.total_usage();
        match self.held_shape {
            HeldShape::On => {
                out.push(self.in_turn("turn.waiting", json!({"on": on, "usage": usage})));
            }
            HeldShape::NoOn => out.push(self.in_turn("turn.waiting", json!({"usage": usage}))),
            HeldShape::CompletedHeld => {
                out.push(self.in_turn("turn.completed", json!({"held": true})));
                out.push(self.waiting());
            }
            HeldShape::WaitingInTurn => out.push(self.waiting()),
        }
    }

    /// A background task in its own step, holding the turn until it settles.
    fn background(&mut self, out: &mut Vec<Ev>) {
        let (task, call) = (self.id("task"), self.id("call"));
        self.step_started(out);
        self.say(
            out,
            "Archiving the sources found so far in the background.",
            "tool-calls",
        );
        out.push(self.in_step(
            "task.started",
            json!({"taskId": task, "callId": call, "kind": "tool", "name": "archive_sources"}),
        ));
        self.step_completed(out, "tool-calls");
        self.hold_b(out, "tasks");
        out.push(self.ev(PAUSE, json!({"ms": TASK_MS})));
        let n = self.found.len();
        out.push(self.in_turn(
            "task.settled",
            json!({"taskId": task, "status": "completed", "output": format!("Archived {n} sources.")}),
        ));
    }

    /// A background task's result, delivered once the session waits: a turn of its own.
    fn result_turn(&mut self, out: &mut Vec<Ev>) -> After {
        let task = self.id("task");
        out.push(self.ev(PAUSE, json!({"ms": TASK_MS})));
        self.begin_turn(out, None);
        out.push(self.in_turn(
            "message.received",
            json!({"kind": "task.result", "taskIds": [task],
                   "message": "Background task archive_sources finished: 12 sources archived."}),
        ));
        self.step_started(out);
        self.say(
            out,
            "The background archive finished: 12 sources are kept for the report.",
            "stop",
        );
        self.step_completed(out, "stop");
        self.end_turn(out)
    }

    /// A delegated child's own agent: one research round and its reply, never a
    /// question or a budget prompt.
    pub fn sub_agent(mut self) -> Self {
        self.sub_agent = true;
        self.asked_limit = true;
        self.rounds_left = 1;
        self
    }

    pub fn budget_cents(&self) -> u64 {
        self.budget_cents
    }

    /// Children's `streamPath` names the route through `parent` (a remote child's),
    /// not their own stream.
    pub fn child_stream_via(mut self, parent: Option<&str>) -> Self {
        self.child_via = parent.map(str::to_owned);
        self
    }

    /// Hands one task to a sub-agent, once, before the report (how 27 writes it, a task
    /// or a paused turn, is the wire's: [`super::wire::v27::V27`]).
    pub fn delegating(mut self, on: bool) -> Self {
        self.delegate = on;
        self
    }

    /// Its first model call fails, and eve does not retry it: the session ends failed.
    pub fn failing(mut self, on: bool) -> Self {
        self.fail = on;
        self
    }

    /// Ends each reply with two files it made (27: `content.completed {kind: "file"}`).
    pub fn making_files(mut self, on: bool) -> Self {
        self.make_files = on;
        self
    }

    /// The first turn spends at least `percent` of the budget (the `spendPercent` knob):
    /// past 80% or past the budget itself, which the steps' shares never reach. What is
    /// added is a model run of its own: a `usage.recorded` in 27, in A and B only the
    /// cumulative usage.
    pub fn spending_to(mut self, percent: Option<u64>) -> Self {
        self.spend_to = percent;
        self
    }

    /// Brings the spend up to the `spendPercent` share of the budget, once.
    fn top_up_spend(&mut self, out: &mut Vec<Ev>) {
        let Some(percent) = self.spend_to.take() else {
            return;
        };
        let want = self.budget_cents * percent / 100;
        let have = self.spent_cents + self.delegated_cents + self.extra_cents;
        if want <= have {
            return;
        }
        let cost = want - have;
        self.extra_cents += cost;
        let run = format!("{}_topup", self.turn_id);
        out.push(self.in_turn(
            "usage.recorded",
            json!({"owner": {"runId": run}, "kind": "model", "usage": {"costUsd": cost as f64 / 100.0}}),
        ));
    }

    /// Makes every report exactly `n` deltas long (at least 1, at most
    /// [`MAX_REPLY_DELTAS`]): one long growing message, for benchmarks.
    pub fn with_reply_deltas(mut self, n: Option<u64>) -> Self {
        self.reply_deltas = n.map(|n| n.clamp(1, MAX_REPLY_DELTAS));
        self
    }

    fn id(&mut self, prefix: &str) -> String {
        self.ids += 1;
        format!(
            "{prefix}_{:08x}{:04x}",
            self.rng.next_u64() as u32,
            self.ids
        )
    }

    fn ev(&self, kind: &'static str, data: Value) -> Ev {
        Ev {
            kind,
            data,
            delivery: None,
        }
    }

    fn turn_fields(&self) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        m.insert("turnId".into(), json!(self.turn_id));
        m.insert("sequence".into(), json!(self.sequence));
        m
    }

    fn in_turn(&self, kind: &'static str, extra: Value) -> Ev {
        let mut m = self.turn_fields();
        if let Some(obj) = extra.as_object() {
            m.extend(obj.clone());
        }
        self.ev(kind, Value::Object(m))
    }

    fn in_step(&self, kind: &'static str, extra: Value) -> Ev {
        let mut m = self.turn_fields();
        m.insert("stepIndex".into(), json!(self.step));
        if let Some(obj) = extra.as_object() {
            m.extend(obj.clone());
        }
        self.ev(kind, Value::Object(m))
    }

    /// Asks the person one thing (`request`, as the seeds' `input.requested` holds it).
    fn ask(&self, out: &mut Vec<Ev>, request: Value) {
        out.push(self.in_step("input.requested", json!({ "requests": [request] })));
    }

    fn begin_turn(&mut self, out: &mut Vec<Ev>, delivery: Option<&str>) {
        if !self.started {
            self.started = true;
            out.push(self.ev(
                "session.started",
                json!({"runtime": {
                    "agentId": "casebook-research",
                    "agentName": "Casebook research agent",
                    "eveVersion": match self.proto {
                        MissionProtocol::EveA => "0.27.9",
                        MissionProtocol::EveB => "0.82.1",
                        _ => "1.3.0",
                    },
                    "modelId": MODEL_ID,
                }}),
            ));
        }
        self.sequence += 1;
        self.turn_id = self.id("turn");
        self.step = 0;
        let mut started = self.in_turn("turn.started", json!({}));
        started.delivery = delivery.map(str::to_owned);
        out.push(started);
    }

    fn received(&self, text: &str, delivery: Option<&str>) -> Ev {
        let mut data = json!({"message": text});
        // B records the message's parts beside its text, files among them; A never did.
        if !self.attached.is_empty() && self.proto != MissionProtocol::EveA {
            let mut parts = Vec::new();
            if !text.is_empty() {
                parts.push(json!({"type": "text", "text": text}));
            }
            parts.extend(self.attached.iter().cloned());
            data["parts"] = Value::Array(parts);
        }
        let mut ev = self.in_turn("message.received", data);
        ev.delivery = delivery.map(str::to_owned);
        ev
    }

    /// A steering message appended to the running turn.
    pub fn steer(&self, text: &str, delivery: Option<&str>) -> Ev {
        self.received(text, delivery)
    }

    /// The first turn of a session, up to its end or its first hold.
    pub fn first_turn(&mut self, message: &str, delivery: Option<&str>) -> (Vec<Ev>, After) {
        let mut out = Vec::new();
        self.begin_turn(&mut out, delivery);
        out.push(self.received(message, delivery));
        self.step_started(&mut out);
        if self.fail {
            out.push(self.ev(
                "session.failed",
                json!({"error": {"code": "MODEL_CALL_FAILED",
                                 "message": "The model call failed: the provider refused the request."},
                       "usage": self.total_usage()}),
            ));
            return (out, After::Ended);
        }
        let topic = self.topic();
        self.think(
            &mut out,
            &format!("The objective asks about {topic}. I should find reviews first, then primary data, and check each claim against two sources."),
        );
        let plan = format!(
            "## Plan for “{}” 🔎\n\n1. Frame the question and its scope (an état des lieux of {topic}).\n2. Search reviews and official statistics.\n3. Read the most relevant sources and extract findings.\n4. Verify each finding against a second source, then write the report.\n",
            self.short_objective()
        );
        self.say(&mut out, &plan, "tool-calls");
        self.step_completed(&mut out, "tool-calls");
        if !self.sub_agent && self.objective.to_lowercase().contains("ambiguous") {
            let open = self.ask_question(&mut out);
            let after = self.hold(&mut out, open);
            return (out, after);
        }
        let mut after = self.rounds_and_report(&mut out);
        if after == After::Idle && std::mem::take(&mut self.task_result) {
            after = self.result_turn(&mut out);
        }
        (out, after)
    }

    fn ask_question(&mut self, out: &mut Vec<Ev>) -> Open {
        let request_id = self.id("req");
        let options = [
            (
                "recent",
                "The last five years",
                "Only sources from 2020 on.",
            ),
            ("all", "All years", "Everything the search finds."),
        ];
        // eve's ask_question tool names each option by its label (0.80 and 1.x); 0.30
        // kept the ids the model gave.
        let options = options.map(|(id, label, d)| match self.proto {
            MissionProtocol::EveA => (id, label, d),
            _ => (label, label, d),
        });
        self.ask(
            out,
            json!({
                "requestId": request_id,
                "kind": "question",
                "prompt": "The objective is ambiguous: which period should the investigation cover?",
                "options": options.iter().map(|(id, label, d)| json!({"id": id, "label": label, "description": d})).collect::<Vec<_>>(),
                "allowFreeform": true,
                "display": "select",
            }),
        );
        Open {
            request_id,
            kind: "question",
            options: options.iter().map(|o| o.0.to_owned()).collect(),
            allow_freeform: true,
        }
    }

    fn ask_limit(&mut self, out: &mut Vec<Ev>) -> Open {
        self.asked_limit = true;
        let request_id = self.id("req");
        self.ask(
            out,
            json!({
                "requestId": request_id,
                "kind": "session-limit",
                "prompt": format!(
                    "This mission has spent ${:.2} of its ${:.2} budget. Continue?",
                    self.spent_cents as f64 / 100.0,
                    self.budget_cents as f64 / 100.0
                ),
                "options": [
                    {"id": "continue", "label": "Continue", "style": "primary"},
                    {"id": "stop", "label": "Stop and report", "style": "danger"},
                ],
                "allowFreeform": false,
                "display": "confirmation",
            }),
        );
        Open {
            request_id,
            kind: "session-limit",
            options: vec!["continue".into(), "stop".into()],
            allow_freeform: false,
        }
    }

    /// Holds the turn on `open`: A ends it with `session.waiting` (before eve 0.70),
    /// B with `turn.waiting {on: "input"}`; 27's `turn.paused` comes with the request.
    fn hold(&mut self, out: &mut Vec<Ev>, _open: Open) -> After {
        match self.proto {
            MissionProtocol::EveA => {
                out.push(self.in_turn("turn.completed", json!({})));
                out.push(self.waiting());
                After::Idle
            }
            MissionProtocol::EveB => {
                self.hold_b(out, "input");
                After::Held
            }
            _ => After::Held,
        }
    }

    /// The pending hold's request, as it was asked (for the session to record).
    pub fn last_open(events: &[Ev]) -> Option<Open> {
        let ev = events.iter().rev().find(|e| e.kind == "input.requested")?;
        let r = &ev.data["requests"][0];
        Some(Open {
            request_id: r["requestId"].as_str()?.to_owned(),
            kind: match r["kind"].as_str() {
                Some("session-limit") => "session-limit",
                Some("tool-approval") => "tool-approval",
                _ => "question",
            },
            options: r["options"]
                .as_array()?
                .iter()
                .filter_map(|o| o["id"].as_str().map(str::to_owned))
                .collect(),
            allow_freeform: r["allowFreeform"].as_bool().unwrap_or(false),
        })
    }

    /// `session.waiting`: A's token is filled in when it is appended.
    fn waiting(&self) -> Ev {
        self.ev(
            "session.waiting",
            json!({"wait": "next-user-message", "continuationToken": "", "usage": self.total_usage()}),
        )
    }

    /// eve's cumulative usage on waiting and terminal records: its own model calls plus
    /// what the agents it delegated to spent.
    fn total_usage(&self) -> Value {
        json!({"costUsd": (self.spent_cents + self.delegated_cents + self.extra_cents) as f64 / 100.0})
    }

    fn rounds_and_report(&mut self, out: &mut Vec<Ev>) -> After {
        while self.rounds_left > 0 {
            if let Some(after) = self.sign_in_first(out) {
                return after;
            }
            self.rounds_left -= 1;
            let a = self.phrases[self.rng.below(self.phrases.len() as u64) as usize].clone();
            let query = format!("{a} {} systematic review", self.phrases[1]);
            self.call(
                out,
                &format!("Searching for “{query}”."),
                "web_search",
                json!({"query": query}),
            );
            if let Some((url, title)) = self.found.last().cloned() {
                let narration = format!("Reading “{title}”.");
                if let Some(after) = self.approval_first(out, &narration, json!({"url": url})) {
                    return after;
                }
                self.call(
                    out,
                    &format!("Reading “{title}”."),
                    "read_source",
                    json!({"url": url}),
                );
            }
            if !self.asked_limit && self.spent_cents * 100 >= self.budget_cents * LIMIT_PERCENT {
                let open = self.ask_limit(out);
                return self.hold(out, open);
            }
        }
        self.report(out)
    }

    /// One call to the `researcher` sub-agent, in its own step: the call, the child's
    /// start, the call's result with what the child found.
    fn delegate_research(&mut self, out: &mut Vec<Ev>) {
        self.step_started(out);
        self.say(
            out,
            "Asking the researcher sub-agent to check the findings.",
            "tool-calls",
        );
        let call_id = self.id("call");
        let child = self.id("ses_child");
        let task = format!(
            "Check every finding on {} against a second source.",
            self.topic()
        );
        out.push(self.in_step(
            "actions.requested",
            json!({"actions": [{"kind": "tool-call", "callId": call_id, "toolName": "researcher", "input": {"task": task}}]}),
        ));
        let stream_path = match &self.child_via {
            Some(parent) => format!("/eve/v1/session/{parent}/subagents/{call_id}/{child}/stream"),
            None => format!("/eve/v1/session/{child}/stream"),
        };
        out.push(self.in_step(
            "agent.started",
            json!({"callId": call_id, "sessionId": child, "name": "researcher",
                   "streamPath": stream_path}),
        ));
        self.delegated.push(Delegated {
            call_id: call_id.clone(),
            session_id: child.clone(),
            task: task.clone(),
            topic: self.topic(),
        });
        // The child's own model calls: in 27 a usage record of the delegated call, in B
        // only the parent's cumulative usage.
        let cap = self.budget_cents * SPEND_CAP_PERCENT / 100;
        let cost = cap.saturating_sub(self.spent_cents + self.delegated_cents) / 10;
        self.delegated_cents += cost;
        out.push(self.in_step(
            "usage.recorded",
            json!({"owner": {"callId": call_id}, "kind": "model", "usage": {"costUsd": cost as f64 / 100.0}}),
        ));
        let checked = self.claims.len();
        out.push(self.in_step(
            "action.result",
            json!({"status": "completed", "result": {
                "kind": "tool-result", "callId": call_id, "toolName": "researcher",
                "output": {"text": format!("Checked {checked} findings; each holds against a second source.")},
            }}),
        ));
        self.step_completed(out, "tool-calls");
    }

    fn report(&mut self, out: &mut Vec<Ev>) -> After {
        if std::mem::take(&mut self.background_task) {
            self.background(out);
        }
        if std::mem::take(&mut self.delegate) {
            self.delegate_research(out);
        }
        self.step_started(out);
        let mut text = format!(
            "# Findings on “{}”\n\n{} sources read; each finding links its source.\n\n",
            self.topic(),
            self.claims.len()
        );
        for (claim, title, url) in self.claims.iter().take(25) {
            text.push_str(&format!("- {claim} ([{title}]({url}))\n"));
        }
        if self.claims.is_empty() {
            text.push_str("- No source could be read; the question stays open.\n");
        }
        let closing = format!(
            "\nSpent ${:.2} of the ${:.2} budget — résumé done ✅\n",
            self.spent_cents as f64 / 100.0,
            self.budget_cents as f64 / 100.0
        );
        match self.reply_deltas {
            Some(n) => {
                let parts = self.long_reply(&text, &closing, n as usize);
                self.say_parts(out, parts, "stop");
            }
            None => {
                text.push_str(&closing);
                self.say(out, &text, "stop");
            }
        }
        self.step_completed(out, "stop");
        // After the last step, so the turn's total is what the knob asked.
        self.top_up_spend(out);
        self.end_turn(out)
    }

    fn end_turn(&mut self, out: &mut Vec<Ev>) -> After {
        out.push(self.in_turn("turn.completed", json!({})));
        if self.task_mode {
            out.push(self.ev("session.completed", json!({"usage": self.total_usage()})));
            After::Ended
        } else {
            out.push(self.waiting());
            After::Idle
        }
    }

    /// A message while idle: a new turn with a short reply.
    pub fn reply_turn(&mut self, message: &str, delivery: Option<&str>) -> (Vec<Ev>, After) {
        let mut out = Vec::new();
        self.begin_turn(&mut out, delivery);
        out.push(self.received(message, delivery));
        self.step_started(&mut out);
        let text = format!(
            "Noted: “{}”. The findings above still stand; ask for a new angle and I will search again.",
            message.chars().take(120).collect::<String>()
        );
        self.say(&mut out, &text, "stop");
        self.step_completed(&mut out, "stop");
        let after = self.end_turn(&mut out);
        (out, after)
    }

    /// An answer to `open`: A starts a new turn, B and 27 resume the held one. A
    /// `message` is the text that answered (a plain message answering the only
    /// pending question). `response` is `{optionId}` or `{text}`.
    pub fn answered(
        &mut self,
        open: &Open,
        response: Value,
        message: Option<&str>,
        delivery: Option<&str>,
    ) -> (Vec<Ev>, After) {
        if open.kind == "tool-approval" {
            return self.approval_answered(open, response, delivery);
        }
        let mut out = Vec::new();
        if self.proto == MissionProtocol::EveA {
            self.begin_turn(&mut out, delivery);
        }
        if let Some(text) = message {
            out.push(self.received(text, delivery));
        }
        let mut resolved = self.in_turn(
            "input.resolved",
            json!({"stepIndex": self.step, "resolutions": [{
                "requestId": open.request_id,
                "kind": open.kind,
                "outcome": "answered",
                "response": response,
            }]}),
        );
        resolved.delivery = delivery.map(str::to_owned);
        out.push(resolved);
        let stop = open.kind == "session-limit" && response["optionId"] == "stop";
        let after = if stop {
            self.rounds_left = 0;
            self.report(&mut out)
        } else {
            self.rounds_and_report(&mut out)
        };
        (out, after)
    }

    /// 27: an answer taken and then refused (the request stays open); rendered as eve
    /// 1.x's `response.submitted`, `response.settled` and `delivery.settled`, `refused`.
    pub fn refused(&self, request_id: &str, value: &Value, reason: &str) -> Ev {
        self.in_turn(
            "answer.refused",
            json!({"interactionId": request_id, "value": value, "reason": reason}),
        )
    }

    /// What a cancel of the current turn emits.
    pub fn cancelled(&mut self) -> Vec<Ev> {
        vec![self.in_turn("turn.cancelled", json!({})), self.waiting()]
    }

    /// What ending the session emits after its last turn.
    pub fn ended(&self) -> Ev {
        self.ev("session.completed", json!({"usage": self.total_usage()}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In whole cents: dollars summed as floats can land a hair under a line they reach.
    fn total_cost(events: &[Ev]) -> u64 {
        events
            .iter()
            .filter(|e| e.kind == "step.completed")
            .map(|e| (e.data["usage"]["costUsd"].as_f64().unwrap() * 100.0).round() as u64)
            .sum()
    }

    #[test]
    fn a_long_turn_asks_at_the_limit_and_never_overspends() {
        // Many seeds, so a spend landing exactly on the 90% line is among them.
        for seed in 0..64 {
            let mut a = Agent::new(
                MissionProtocol::EveB,
                seed,
                "Urban heat and hospital admissions",
                2500,
                Some(1000),
                false,
            );
            let (ev, after) = a.first_turn("go", None);
            assert_eq!(after, After::Held);
            let open = Agent::last_open(&ev).unwrap();
            assert_eq!(open.kind, "session-limit");
            let asked_at = total_cost(&ev);
            assert!((2250..2500).contains(&asked_at), "seed {seed}: {asked_at}");
            let (more, after) = a.answered(&open, json!({"optionId": "continue"}), None, None);
            assert_eq!(after, After::Idle);
            let all: Vec<_> = ev.into_iter().chain(more).collect();
            assert!(total_cost(&all) < 2500, "seed {seed}");
        }
    }

    #[test]
    fn deltas_rebuild_the_message() {
        let mut a = Agent::new(MissionProtocol::EveA, 3, "Heat", 500, None, false);
        let (ev, after) = a.first_turn("go", None);
        assert_eq!(after, After::Idle);
        let mut text = String::new();
        for e in &ev {
            if e.kind == "message.appended" {
                text.push_str(e.data["messageDelta"].as_str().unwrap());
            }
            if e.kind == "message.completed" {
                assert_eq!(text, e.data["message"].as_str().unwrap());
                text.clear();
            }
        }
        assert_eq!(ev.last().unwrap().kind, "session.waiting");
    }

    /// The report's deltas (those after the last message before it), and its text.
    fn report_of(events: &[Ev]) -> (Vec<String>, String) {
        let done = events
            .iter()
            .rposition(|e| e.kind == "message.completed")
            .unwrap();
        let from = events[..done]
            .iter()
            .rposition(|e| e.kind == "message.completed")
            .map_or(0, |i| i + 1);
        let deltas = events[from..done]
            .iter()
            .filter(|e| e.kind == "message.appended")
            .map(|e| e.data["messageDelta"].as_str().unwrap().to_owned())
            .collect();
        let text = events[done].data["message"].as_str().unwrap().to_owned();
        (deltas, text)
    }

    #[test]
    fn reply_deltas_make_the_report_that_many_deltas_long() {
        for (n, seed) in [(1u64, 1), (7, 2), (500, 3), (5000, 4)] {
            let mut a = Agent::new(MissionProtocol::EveB, seed, "Heat", 2500, None, false)
                .with_reply_deltas(Some(n));
            let (ev, _) = a.first_turn("go", None);
            let (deltas, text) = report_of(&ev);
            assert_eq!(deltas.len() as u64, n);
            assert_eq!(deltas.concat(), text);
            if n >= 500 {
                assert!(text.starts_with("# Findings on"), "{text:.40}");
                assert!(
                    text.ends_with("résumé done ✅\n"),
                    "…{}",
                    &text[text.len() - 40..]
                );
            }
        }
        // Without the knob the report is as long as its findings.
        let mut a = Agent::new(MissionProtocol::EveB, 3, "Heat", 2500, None, false);
        let (ev, _) = a.first_turn("go", None);
        assert!(report_of(&ev).0.len() < 200);
    }
}

#[cfg(test)]
mod lengths {
    use super::*;

    /// The first turn's length and how it ends, for `events`.
    fn first(seed: u64, events: Option<u64>) -> (usize, After) {
        let objective = "Urban heat and hospital admissions";
        let mut a = Agent::new(MissionProtocol::EveB, seed, objective, 2500, events, false);
        let (ev, after) = a.first_turn("go", None);
        (ev.len(), after)
    }

    #[test]
    fn events_set_the_first_turns_length_and_long_turns_reach_the_budget_prompt() {
        for seed in 0..20 {
            let (n, after) = first(seed, None);
            assert!((150..=500).contains(&n) && after == After::Idle, "{n}");
            let (n, after) = first(seed, Some(300));
            assert!((230..=400).contains(&n) && after == After::Idle, "{n}");
            let (n, after) = first(seed, Some(400));
            assert!((320..=520).contains(&n) && after == After::Idle, "{n}");
            assert_eq!(first(seed, Some(1000)).1, After::Held);
        }
    }
}
