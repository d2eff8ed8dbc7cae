//! The investigation service in eve's HTTP session protocol, behind the
//! `missionProtocol` knob (`eve-a`, `eve-b`, `eve-27`; the default `legacy` is the
//! SSE service in the parent module, unchanged). Routes, all under `/eve/v1`:
//!
//! - `POST /session` `{message, mode?, paceMs?, events?, replyDeltas?}` → `202` +
//!   `x-eve-session-id`;
//!   A `{ok, sessionId, continuationToken: "eve:<uuid>"}`, B/27 `{ok, sessionId,
//!   status: "accepted"}` (a `continuationToken` in the body → 400). `mode: "task"`
//!   (eve's task mode) ends the session after its first turn (`session.completed`;
//!   27 `session.ended`); otherwise a session waits for the next message after each turn.
//!   `replyDeltas: N` (sandbox-only, like `paceMs` and `events`; 1-100 000, else the
//!   sandbox's `--mission-reply-deltas`) makes every report exactly N
//!   `message.appended` deltas long: one long growing message, for benchmarks.
//! - `GET /session/{id}/stream?startIndex=N&includeTailIndex=1`: NDJSON (see [`wire`]).
//! - `POST /session/{id}` follow-ups: exactly one of `message` / `inputResponses`; A
//!   also needs the newest `continuationToken`, B/27 refuse one.
//! - `POST /session/{id}/cancel` `{turnId?}` and `POST /session/{id}/end` (eve ≥ 0.87:
//!   cancels a running turn, then ends the session).
//!
//! The agent ([`agent`]) asks a question when the objective contains the word
//! "ambiguous" (any case), and a `session-limit` question once the spend reaches 90%
//! of the budget. Errors are eve's `{"ok": false, "error": "…", "code"?: "…"}`.
//!
//! # Durability
//!
//! With a data dir, each eve session is kept in `sessions/<id>.eve.ndjson`: a header
//! `{"eve": {…}}` (what the agent is made from), then, in the order they happen, one
//! `{"rec": "<the stored line>" | null}` per event played (null: an event 27 stores
//! no line for) and one `{"in": {…}}` per input that changed the session (a message,
//! an answer, a cancel played, an end). The agent is deterministic, so a restart
//! replays the inputs to rebuild it, keeps the stored lines as they were sent (ids,
//! times and tokens included), and plays on what the interrupted turn had left.

pub mod agent;
pub(crate) mod durability;
pub(crate) mod routes;
pub(crate) mod sign_in;
pub mod wire;

use crate::knobs::MissionProtocol;
use crate::missions::session::{Gaps, MAX_CATCH_UP, random_u64};
use agent::{After, Agent, Ev, Open};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, watch};

/// What one stream request asked for, as the session received it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamRequest {
    /// `startIndex` as sent (`None` when absent).
    pub start_index: Option<i64>,
    pub include_tail_index: bool,
}

/// One stored record: a line of the stream (without its `\n`).
#[derive(Debug, Clone)]
pub struct Rec {
    pub line: String,
    /// A/B: a turn boundary (`session.waiting`, `session.completed`, `session.failed`).
    pub boundary: bool,
    /// The session's last record (`session.completed` / `session.ended`).
    pub ended: bool,
}

pub struct St {
    pub records: Vec<Rec>,
    /// Every POST the session received after its create (follow-ups, cancels, ends):
    /// `{route, body}`, for tests to assert what a client sent (none for a sign-in).
    pub posts: Vec<Value>,
    /// B: a waiting session names its own id as `continuationToken` (the
    /// `sessionIdTokens` fault), as eve 0.31 and later do for ID-addressed sessions.
    id_tokens: bool,
    /// A message sent while a turn runs starts the next turn instead of steering this one.
    queue_replies: bool,
    /// Events decided and not yet appended, played at the session's pace.
    pending: VecDeque<Ev>,
    agent: Agent,
    /// What the session is once `pending` is out.
    after: After,
    /// Requests waiting for an answer.
    open: Vec<Open>,
    /// A: the newest continuation token.
    token: String,
    cancel: bool,
    /// `session.completed` has been appended.
    pub ended_on_wire: bool,
    v27: wire::v27::V27,
    /// `sessions/<id>.eve.ndjson`, when sessions are kept.
    file: Option<File>,
    /// 27: each follow-up's `idempotencyKey` and the delivery it made, so the same key
    /// again is that delivery, not a second message (as eve 1.x delivers once).
    idempotent: HashMap<String, String>,
    /// What the script and its pace are drawn from.
    seed: u64,
    /// The sub-agents it started, each with its own session. Not kept in a file: a
    /// restart rebuilds them, finished, as it replays the parent.
    children: Vec<Arc<EveSession>>,
}

/// What a session's agent is made from: the header of its file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    session_id: String,
    protocol: String,
    message: String,
    objective: String,
    budget_cents: u64,
    events: Option<u64>,
    pace_ms: Option<u64>,
    task_mode: bool,
    delivery: String,
    token: String,
    /// 27 only: the tool-call family rides as v26 events (`v27Transition`).
    #[serde(default)]
    transition: bool,
    /// The report's length in deltas (the `replyDeltas` extension).
    #[serde(default)]
    reply_deltas: Option<u64>,
    /// The agent delegates to a sub-agent before its report (the `delegate` fault).
    #[serde(default)]
    delegate: bool,
    /// Its first model call fails for good: the session ends failed (`modelFailure`).
    #[serde(default)]
    model_failure: bool,
    /// A message sent while a turn runs waits for a turn of its own (`queueReplies`).
    #[serde(default)]
    queue_replies: bool,
    /// 27: the turn pauses on a delegated call (`delegationPause`).
    #[serde(default)]
    delegation_pause: bool,
    /// B's waiting records name the session id as their token (`sessionIdTokens`).
    #[serde(default)]
    id_tokens: bool,
    /// A child's `streamPath` names the parent's route (the `childRoute` knob's `parent`).
    #[serde(default)]
    child_via_parent: bool,
    /// A delegated child's own session.
    #[serde(default)]
    sub_agent: bool,
    /// The approval and sign-in knobs (`approval`, `signIn`, `signInSuperseded`).
    #[serde(default)]
    asks: agent::AskKnobs,
    /// B: how a turn is held (the `heldShape` knob, as `HeldShape as u64`).
    #[serde(default)]
    held_shape: u64,
    /// 27: each reply ends with two files the agent made (`agentFile`).
    #[serde(default)]
    agent_file: bool,
    /// B: a background task holds the turn before the report (`backgroundTask`).
    #[serde(default)]
    background_task: bool,
    /// B: a task's result comes after the first wait (`taskResult`).
    #[serde(default)]
    task_result: bool,
    /// The first turn spends at least this share of the budget (`spendPercent`).
    #[serde(default)]
    spend_percent: Option<u64>,
    /// What its script is drawn from (the sandbox's seed sequence, `missionSeed`); a file
    /// from before it was kept draws from the session id.
    #[serde(default)]
    seed: Option<u64>,
}

/// Something that changed a session besides its own playing: logged so a restart
/// can replay it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
enum Input {
    Message {
        text: String,
        delivery: String,
        /// The files sent with it, described without their data (`{type: "file",
        /// mediaType, filename, size}`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<Value>,
    },
    /// A checked answer to the open request `request_id`.
    #[serde(rename_all = "camelCase")]
    Answer {
        request_id: String,
        response: Value,
        text: Option<String>,
        delivery: String,
    },
    /// 27: an answer eve 1.x takes (202) and then refuses on the stream (an option the
    /// interaction did not offer, text where it takes none); the interaction stays open.
    #[serde(rename_all = "camelCase")]
    Refused {
        request_id: String,
        response: Value,
        reason: String,
        delivery: String,
    },
    /// A cancel, as the runner played it.
    Cancel,
    /// The browser visited a sign-in attempt's link: its callback.
    #[serde(rename_all = "camelCase")]
    SignedIn {
        attempt: String,
        delivery: String,
    },
    End,
}

impl St {
    fn fresh(meta: &Meta, proto: MissionProtocol) -> Self {
        let seed = meta
            .seed
            .unwrap_or_else(|| crate::rng::seed_from(&meta.session_id));
        let agent = Agent::new(
            proto,
            seed,
            &meta.objective,
            meta.budget_cents,
            meta.events,
            meta.task_mode,
        )
        .with_reply_deltas(meta.reply_deltas)
        .delegating(meta.delegate)
        .failing(meta.model_failure)
        .making_files(meta.agent_file)
        .asking(&meta.asks)
        .spending_to(meta.spend_percent)
        .child_stream_via(meta.child_via_parent.then_some(meta.session_id.as_str()))
        .holding(
            crate::knobs::HeldShape::from_u64(meta.held_shape),
            meta.background_task,
            meta.task_result,
        );
        let agent = if meta.sub_agent {
            agent.sub_agent()
        } else {
            agent
        };
        let mut st = St {
            records: Vec::new(),
            id_tokens: meta.id_tokens,
            queue_replies: meta.queue_replies,
            pending: VecDeque::new(),
            agent,
            after: After::Idle,
            open: Vec::new(),
            token: meta.token.clone(),
            cancel: false,
            ended_on_wire: false,
            v27: wire::v27::V27::new(meta.transition, meta.delegation_pause),
            file: None,
            idempotent: HashMap::new(),
            children: Vec::new(),
            posts: Vec::new(),
            seed,
        };
        let first = st.agent.first_turn(&meta.message, Some(&meta.delivery));
        st.queue(first);
        st
    }

    fn queue(&mut self, (events, after): (Vec<Ev>, After)) {
        if let Some(open) = Agent::last_open(&events) {
            self.open = vec![open];
        }
        self.pending.extend(events);
        self.after = after;
    }

    fn write(&mut self, line: Value) {
        if let Some(file) = self.file.as_mut()
            && let Err(e) = file.write_all(format!("{line}\n").as_bytes())
        {
            tracing::warn!("cannot keep an eve session's line: {e}");
        }
    }

    /// Applies an input; the same code runs live and on replay.
    fn apply(&mut self, input: &Input) {
        match input {
            Input::Message {
                text,
                delivery,
                files,
            } => {
                // What records the message carries its files.
                self.agent.attached = files.clone();
                let sole_question = self.open.len() == 1
                    && (self.after == After::Held || self.agent.proto == MissionProtocol::EveA)
                    && self.pending.is_empty();
                let approval = self.open.first().filter(|o| o.kind == "tool-approval");
                if let Some(open) = approval.filter(|_| self.after == After::Held).cloned() {
                    // A message withdraws a pending approval (eve 0.70 and later).
                    self.open.clear();
                    let batch = self.agent.approval_withdrawn(&open, text, Some(delivery));
                    self.queue(batch);
                } else if sole_question {
                    // A plain message answers the only pending question (or, for a
                    // budget prompt, means "continue").
                    let open = self.open.remove(0);
                    let response = if open.allow_freeform {
                        json!({"text": text})
                    } else {
                        json!({"optionId": "continue"})
                    };
                    let batch = self
                        .agent
                        .answered(&open, response, Some(text), Some(delivery));
                    self.queue(batch);
                } else if EveSession::turn_active(self) && self.queue_replies {
                    // As eve B and 1.x do with a message that comes once the turn's last
                    // step has begun: the next turn takes it.
                    let batch = self.agent.reply_turn(text, Some(delivery));
                    self.queue(batch);
                } else if EveSession::turn_active(self) {
                    let ev = self.agent.steer(text, Some(delivery));
                    self.pending.push_front(ev);
                } else {
                    self.open.clear();
                    let batch = self.agent.reply_turn(text, Some(delivery));
                    self.queue(batch);
                }
                self.agent.attached.clear();
            }
            Input::Answer {
                request_id,
                response,
                text,
                delivery,
            } => {
                let Some(i) = self.open.iter().position(|o| &o.request_id == request_id) else {
                    return;
                };
                let open = self.open.remove(i);
                self.open.clear();
                let batch =
                    self.agent
                        .answered(&open, response.clone(), text.as_deref(), Some(delivery));
                self.queue(batch);
            }
            Input::SignedIn { attempt, delivery } => {
                if let Some(batch) = self.agent.signed_in(attempt, delivery) {
                    self.queue(batch);
                }
            }
            Input::Refused {
                request_id,
                response,
                reason,
                delivery,
            } => {
                let mut ev = self.agent.refused(request_id, response, reason);
                ev.delivery = Some(delivery.clone());
                self.pending.push_back(ev);
            }
            Input::Cancel => {
                self.cancel = false;
                self.pending.clear();
                self.open.clear();
                let evs = self.agent.cancelled();
                self.pending.extend(evs);
                if self.after == After::Ended {
                    let ev = self.agent.ended();
                    self.pending.push_back(ev);
                } else {
                    self.after = After::Idle;
                }
            }
            Input::End => {
                if self.after != After::Ended {
                    if EveSession::turn_active(self) {
                        self.cancel = true;
                    } else {
                        let ev = self.agent.ended();
                        self.pending.push_back(ev);
                    }
                    self.after = After::Ended;
                    self.open.clear();
                }
            }
        }
    }
}

pub struct EveSession {
    pub id: String,
    pub proto: MissionProtocol,
    state: Mutex<St>,
    pub grown: watch::Sender<u64>,
    wake: Notify,
    requests: Mutex<Vec<StreamRequest>>,
    /// A delegated child's session: its parent and the call that started it.
    child_of: Option<(String, String)>,
    /// A child's stream requests by route, refused ones too.
    child_requests: Mutex<Vec<ChildStreamRequest>>,
}

/// One request for a sub-agent's stream, as the sandbox received it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildStreamRequest {
    /// Through the parent's route; otherwise the child's own stream path.
    pub via_parent: bool,
    /// Served; otherwise refused with a 404 by the `childRoute` knob.
    pub served: bool,
}

/// A delegated child's session, playing its one turn to its end: its own agent given
/// the task, under the parent's protocol.
fn child_session(
    parent_id: &str,
    proto: MissionProtocol,
    st: &St,
    d: &agent::Delegated,
) -> EveSession {
    let meta = Meta {
        session_id: d.session_id.clone(),
        protocol: proto.name().to_owned(),
        message: d.task.clone(),
        objective: d.topic.clone(),
        budget_cents: st.agent.budget_cents(),
        events: None,
        pace_ms: None,
        task_mode: true,
        delivery: format!("dlv_{:016x}", random_u64()),
        token: new_token(),
        transition: st.v27.transition(),
        reply_deltas: None,
        delegate: false,
        model_failure: false,
        queue_replies: false,
        delegation_pause: false,
        id_tokens: false,
        child_via_parent: false,
        sub_agent: true,
        asks: Default::default(),
        held_shape: 0,
        background_task: false,
        agent_file: false,
        task_result: false,
        spend_percent: None,
        // The parent's seed and the child's task: the same run delegates the same way.
        seed: Some(crate::rng::seed_from(&format!("{}:{}", st.seed, d.task))),
    };
    EveSession {
        id: d.session_id.clone(),
        proto,
        state: Mutex::new(St::fresh(&meta, proto)),
        grown: watch::Sender::new(0),
        wake: Notify::new(),
        requests: Mutex::new(Vec::new()),
        child_of: Some((parent_id.to_owned(), d.call_id.clone())),
        child_requests: Mutex::new(Vec::new()),
    }
}

/// The sub-agent an `agent.started` event names, as the parent's agent recorded it.
fn delegated_by<'a>(st: &'a St, ev: &Ev) -> Option<&'a agent::Delegated> {
    let child = ev.data["sessionId"].as_str()?;
    st.agent.delegated.iter().find(|d| d.session_id == child)
}

impl EveSession {
    pub fn lock(&self) -> std::sync::MutexGuard<'_, St> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Renders and stores one event.
    fn append(&self, st: &mut St, mut ev: Ev) {
        if ev.kind == "session.waiting" && self.proto == MissionProtocol::EveA {
            st.token = new_token();
            ev.data["continuationToken"] = json!(st.token);
        }
        if ev.kind == "session.waiting" && st.id_tokens {
            ev.data["continuationToken"] = json!(self.id);
        }
        let rec = match self.proto {
            MissionProtocol::Eve27 => wire::v27::render_v27(&mut st.v27, &ev),
            // A delegated call's own usage record is 27's: B counts it in its cumulative
            // usage only.
            _ if ev.kind == "usage.recorded" => None,
            _ => Some(wire::render_event(self.proto, &ev)),
        };
        if matches!(ev.kind, "session.completed" | "session.failed") {
            st.ended_on_wire = true;
        }
        st.write(json!({"rec": rec.as_ref().map(|r| r.line.as_str())}));
        if let Some(rec) = rec {
            st.records.push(rec);
            self.grown.send_replace(st.records.len() as u64);
        }
    }

    fn log_child_request(&self, via_parent: bool, served: bool) {
        self.child_requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(ChildStreamRequest { via_parent, served });
    }

    /// True while a turn runs or is held on input (B/27).
    fn turn_active(st: &St) -> bool {
        !st.pending.is_empty() || st.after == After::Held
    }

    /// Applies an input live: logs it and wakes the runner.
    fn apply(&self, st: &mut St, input: Input) {
        st.apply(&input);
        st.write(json!({ "in": input }));
        self.wake.notify_one();
    }
}

fn new_token() -> String {
    let (a, b) = (random_u64(), random_u64());
    format!(
        "eve:{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        0x8000 | (b >> 48) & 0x3fff,
        b & 0xffff_ffff_ffff
    )
}

/// The eve sessions of one sandbox.
#[derive(Default)]
pub struct EveSessions(Mutex<HashMap<String, Arc<EveSession>>>);

impl EveSessions {
    /// A session by id: a parent, or a sub-agent one of them started.
    pub fn get(&self, id: &str) -> Option<Arc<EveSession>> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.get(id).cloned().or_else(|| {
            map.values()
                .find_map(|s| s.lock().children.iter().find(|c| c.id == id).cloned())
        })
    }

    /// The requests for a sub-agent's stream so far, through either route.
    pub fn child_stream_requests(&self, child_id: &str) -> Vec<ChildStreamRequest> {
        self.get(child_id)
            .map(|s| {
                s.child_requests
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone()
            })
            .unwrap_or_default()
    }

    fn insert(&self, s: Arc<EveSession>) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(s.id.clone(), s);
    }

    /// Closes every session's file, releasing its lock for the next sandbox.
    pub fn close_files(&self) {
        for s in self.0.lock().unwrap_or_else(|p| p.into_inner()).values() {
            s.lock().file = None;
        }
    }

    pub fn stream_requests(&self, id: &str) -> Vec<StreamRequest> {
        self.get(id)
            .map(|s| s.requests.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .unwrap_or_default()
    }
}

fn spawn_runner(
    runtime: &tokio::runtime::Handle,
    session: Arc<EveSession>,
    pace: crate::config::Pace,
    pace_ms: Option<u64>,
    stop: &watch::Sender<bool>,
) {
    runtime.spawn(run(session, pace, pace_ms, stop.subscribe()));
}

/// Plays a session's queued events at its pace, for as long as the sandbox runs.
async fn run(
    session: Arc<EveSession>,
    pace: crate::config::Pace,
    pace_ms: Option<u64>,
    mut stop: watch::Receiver<bool>,
) {
    let seed = session.lock().seed;
    let mut gaps = Gaps::new(pace, pace_ms, seed);
    let mut since_yield = 0u32;
    let mut first = session.lock().records.is_empty();
    // A fixed pace is kept on a schedule, as in legacy mode: sleeping each gap after
    // the last event lets timer slack add up (a 200-a-second pace came out slower).
    // It starts afresh at the first event and after each idle spell.
    let mut due = tokio::time::Instant::now();
    let mut afresh = true;
    loop {
        let (has, appended_kind) = {
            let st = session.lock();
            (
                st.cancel || !st.pending.is_empty(),
                st.pending.front().map(|e| e.kind),
            )
        };
        if *stop.borrow() {
            return;
        }
        if !has {
            tokio::select! {
                _ = session.wake.notified() => {}
                _ = stop.changed() => {}
            }
            afresh = true;
            continue;
        }
        // The first event goes out at once, as in legacy mode.
        let mut gap = if std::mem::take(&mut first) {
            std::time::Duration::ZERO
        } else {
            gaps.next()
        };
        // Deltas come faster than whole events, as a model's tokens do.
        if appended_kind.is_some_and(|k| k.ends_with(".appended")) {
            gap /= 8;
        }
        let now = tokio::time::Instant::now();
        // After a long stall (a suspended laptop) start afresh rather than burst.
        let on_schedule = !std::mem::take(&mut afresh)
            && matches!(gaps, Gaps::Fixed(_))
            && now.saturating_duration_since(due) < MAX_CATCH_UP;
        due = if on_schedule { due + gap } else { now + gap };
        if gap.is_zero() {
            since_yield += 1;
            if since_yield >= 32 {
                since_yield = 0;
                tokio::task::yield_now().await;
            }
        } else {
            tokio::select! {
                _ = tokio::time::sleep_until(due) => {}
                _ = session.wake.notified() => {}
                _ = stop.changed() => {}
            }
        }
        // A task's time: nothing on the wire, the rest of the queue after it.
        let pause = {
            let mut st = session.lock();
            let ms = st
                .pending
                .front()
                .filter(|e| e.kind == agent::PAUSE)
                .map(|e| e.data["ms"].as_u64().unwrap_or(0));
            if ms.is_some() {
                st.pending.pop_front();
                st.write(json!({ "rec": null }));
            }
            ms
        };
        if let Some(ms) = pause {
            tokio::select! {
                _ = tokio::time::sleep(std::time::Duration::from_millis(ms)) => {}
                _ = stop.changed() => {}
            }
            afresh = true;
            continue;
        }
        let mut st = session.lock();
        if *stop.borrow() {
            return;
        }
        if st.cancel {
            session.apply(&mut st, Input::Cancel);
        }
        if let Some(ev) = st.pending.pop_front() {
            if ev.kind == "agent.started"
                && let Some(d) = delegated_by(&st, &ev)
            {
                // The child plays its own session at the parent's pace.
                let child = Arc::new(child_session(&session.id, session.proto, &st, d));
                st.children.push(child.clone());
                tokio::spawn(run_child(child, pace, pace_ms, stop.clone()));
            }
            session.append(&mut st, ev);
        }
    }
}

/// [`run`] for a child, boxed: a runner starting runners is a recursive future.
fn run_child(
    child: Arc<EveSession>,
    pace: crate::config::Pace,
    pace_ms: Option<u64>,
    stop: watch::Receiver<bool>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
    Box::pin(run(child, pace, pace_ms, stop))
}
