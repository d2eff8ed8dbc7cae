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
pub(crate) mod sign_in;
pub mod wire;

use crate::Shared;
use crate::auth::admit;
use crate::body::read_limited;
use crate::errors::{eve_error, eve_session_not_found};
use crate::knobs::MissionProtocol;
use crate::missions::session::{Gaps, MAX_CATCH_UP, random_u64};
use agent::{After, Agent, Ev, Open};
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sign_in::origin;
use std::collections::{HashMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;
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
    v27: wire::V27,
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
            v27: wire::V27::new(meta.transition, meta.delegation_pause),
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
            MissionProtocol::Eve27 => wire::render_v27(&mut st.v27, &ev),
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

/// eve's error body.
/// eve's answer to a stranded session's follow or input, as its server test writes it.
fn stranded() -> Response {
    let body = json!({"ok": false, "code": "session_stranded", "eveVersion": "0.91.0",
                      "error": "This session is stranded."});
    (StatusCode::CONFLICT, axum::Json(body)).into_response()
}

/// `resp` with its body cut halfway and the connection closed, its whole length declared:
/// the client cannot tell whether the service took what it sent.
async fn cut_answer(resp: Response) -> Response {
    let (mut parts, body) = resp.into_parts();
    let bytes = axum::body::to_bytes(body, 64 * 1024)
        .await
        .unwrap_or_default();
    let half = bytes.slice(..bytes.len() / 2);
    let chunks = futures_util::stream::iter([
        Ok::<_, std::io::Error>(half),
        Err(std::io::Error::other("the sandbox cut this answer")),
    ]);
    parts.headers.insert(
        axum::http::header::CONTENT_LENGTH,
        axum::http::HeaderValue::from(bytes.len()),
    );
    Response::from_parts(parts, Body::from_stream(chunks))
}

fn bad(error: &str) -> Response {
    eve_error(StatusCode::BAD_REQUEST, error, None)
}

/// A sandbox error (`{"error": {"code", "message"}}`, from auth, rate limits and body
/// limits) in eve's shape, keeping its status and headers.
pub async fn eveify(resp: Response) -> Response {
    let (mut parts, body) = resp.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let error = v["error"]["message"]
        .as_str()
        .unwrap_or("The request failed.");
    let mut out = json!({"ok": false, "error": error});
    if let Some(code) = v["error"]["code"].as_str() {
        out["code"] = json!(code);
    }
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(out.to_string()))
}

async fn json_body(
    headers: &HeaderMap,
    body: Body,
) -> Result<serde_json::Map<String, Value>, Response> {
    let raw = match read_limited(headers, body).await {
        Ok(raw) => raw,
        Err(resp) => return Err(eveify(resp).await),
    };
    if raw.iter().all(u8::is_ascii_whitespace) {
        return Ok(serde_json::Map::new());
    }
    match serde_json::from_slice(&raw) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(bad("The request body must be a JSON object.")),
        Err(_) => Err(bad("The request body must be valid JSON.")),
    }
}

fn with_session_header(mut resp: Response, id: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(id) {
        resp.headers_mut().insert("x-eve-session-id", v);
    }
    resp
}

/// What every eve POST route reads first: the key, a JSON object body, and, from
/// generation B on, no `continuationToken` (eve's ID-addressed routes refuse it).
async fn admitted(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    body: Body,
    proto: MissionProtocol,
) -> Result<serde_json::Map<String, Value>, Response> {
    if let Err(resp) = admit(shared, headers) {
        return Err(eveify(resp).await);
    }
    let body = json_body(headers, body).await?;
    if proto != MissionProtocol::EveA && body.contains_key("continuationToken") {
        return Err(bad("Session-ID routes do not accept 'continuationToken'."));
    }
    Ok(body)
}

/// `POST /eve/v1/session` in an eve protocol.
pub async fn create(
    shared: Arc<Shared>,
    proto: MissionProtocol,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let body = match admitted(&shared, &headers, body, proto).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    let Some(text) = body.get("message").and_then(Value::as_str) else {
        return bad("Missing 'message': the mission text, as a string.");
    };
    let mission = match super::message::parse(text) {
        Ok(m) => m,
        Err(e) => {
            return bad(&format!(
                "Invalid mission message (line {}): {}",
                e.line, e.message
            ));
        }
    };
    let whole = |field: &str, max: u64| -> Result<Option<u64>, Response> {
        match body.get(field).filter(|v| !v.is_null()) {
            None => Ok(None),
            Some(v) => crate::body::whole_number(v)
                .map(|n| Some(n.min(max)))
                .ok_or_else(|| bad(&format!("'{field}' must be a non-negative whole number."))),
        }
    };
    let defaults = shared.missions.defaults;
    let pace_ms = match whole("paceMs", super::MAX_PACE_MS) {
        Ok(v) => v.or(defaults.pace_ms),
        Err(r) => return r,
    };
    let events = match whole("events", super::script::MAX_EVENTS) {
        Ok(v) => v
            .map(|n| n.max(super::script::MIN_EVENTS))
            .or(defaults.events),
        Err(r) => return r,
    };
    let reply_deltas = match whole("replyDeltas", agent::MAX_REPLY_DELTAS) {
        Ok(v) => v.map(|n| n.max(1)).or(defaults.reply_deltas),
        Err(r) => return r,
    };
    let task_mode = match body.get("mode") {
        None | Some(Value::Null) => false,
        Some(Value::String(m)) if m == "conversation" => false,
        Some(Value::String(m)) if m == "task" => true,
        Some(_) => return bad("'mode' must be \"conversation\" or \"task\"."),
    };

    let id = format!("ses_{:016x}", random_u64());
    let meta = Meta {
        session_id: id.clone(),
        protocol: proto.name().to_owned(),
        message: text.to_owned(),
        objective: mission.objective,
        budget_cents: mission.budget_cents,
        events,
        pace_ms,
        task_mode,
        delivery: format!("dlv_{:016x}", random_u64()),
        token: new_token(),
        transition: proto == MissionProtocol::Eve27 && shared.knobs.get(|k| k.v27_transition),
        reply_deltas,
        delegate: shared.knobs.get(|k| k.delegate),
        model_failure: shared.knobs.get(|k| k.model_failure),
        queue_replies: shared.knobs.get(|k| k.queue_replies),
        delegation_pause: shared.knobs.get(|k| k.delegation_pause),
        id_tokens: proto == MissionProtocol::EveB && shared.knobs.get(|k| k.session_id_tokens),
        child_via_parent: shared.knobs.get(|k| k.child_route) == crate::knobs::ChildRoute::Parent,
        sub_agent: false,
        asks: agent::AskKnobs {
            approval: shared.knobs.get(|k| k.approval),
            sign_in: shared.knobs.get(|k| k.sign_in),
            superseded: shared.knobs.get(|k| k.sign_in_superseded),
            link_base: format!("{}/_sandbox/sign-in/{id}", origin(&headers)),
        },
        held_shape: shared.knobs.get(|k| k.held_shape) as u64,
        background_task: shared.knobs.get(|k| k.background_task),
        agent_file: proto == MissionProtocol::Eve27 && shared.knobs.get(|k| k.agent_file),
        task_result: shared.knobs.get(|k| k.task_result),
        spend_percent: shared.knobs.get(|k| k.spend_percent),
        seed: Some(shared.knobs.next_mission_seed()),
    };
    let mut st = St::fresh(&meta, proto);
    if let Some(dir) = &shared.missions.dir {
        match create_file(dir, &meta) {
            Ok(f) => st.file = Some(f),
            Err(e) => {
                tracing::error!("cannot store session {id}: {e}");
                return eve_error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "The sandbox cannot store the session.",
                    Some("internal"),
                );
            }
        }
    }
    let token = st.token.clone();
    let session = Arc::new(EveSession {
        id: id.clone(),
        proto,
        state: Mutex::new(st),
        grown: watch::Sender::new(0),
        wake: Notify::new(),
        requests: Mutex::new(Vec::new()),
        child_of: None,
        child_requests: Mutex::new(Vec::new()),
    });
    shared.missions.eve.insert(session.clone());
    spawn_runner(
        &tokio::runtime::Handle::current(),
        session,
        defaults.pace,
        pace_ms,
        &shared.missions.stop,
    );
    let reply = match proto {
        MissionProtocol::EveA => json!({"ok": true, "sessionId": id, "continuationToken": token}),
        MissionProtocol::Eve27 => {
            json!({"ok": true, "sessionId": id, "deliveryId": format!("dlv_{:016x}", random_u64())})
        }
        _ => json!({"ok": true, "sessionId": id, "status": "accepted"}),
    };
    with_session_header(
        (StatusCode::ACCEPTED, axum::Json(reply)).into_response(),
        &id,
    )
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

fn create_file(dir: &Path, meta: &Meta) -> std::io::Result<File> {
    let path = dir.join(format!("{}.eve.ndjson", meta.session_id));
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create_new(true)
        .open(path)?;
    file.try_lock().map_err(std::io::Error::other)?;
    file.write_all(format!("{}\n", json!({ "eve": meta })).as_bytes())?;
    Ok(file)
}

/// An eve session read back from its file, with its inputs replayed; `None` when the
/// file is not one. The file stays open (and locked) for what the session does next.
pub fn load(path: &Path) -> std::io::Result<Option<EveSession>> {
    let mut file = OpenOptions::new().read(true).append(true).open(path)?;
    super::session::lock_waiting(&file, path)?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    // A line cut short by a crash is dropped, and cut from the file.
    let good_len = text.rfind('\n').map_or(0, |i| i + 1);
    if good_len < text.len() {
        file.set_len(good_len as u64)?;
    }
    let mut lines = text[..good_len].lines();
    let Some(meta) = lines
        .next()
        .and_then(|h| serde_json::from_str::<Value>(h).ok())
        .and_then(|v| serde_json::from_value::<Meta>(v.get("eve")?.clone()).ok())
    else {
        return Ok(None);
    };
    let Some(proto) = MissionProtocol::parse(&meta.protocol) else {
        return Ok(None);
    };
    let mut st = St::fresh(&meta, proto);
    for line in lines {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            break;
        };
        if let Some(rec) = v.get("rec") {
            let Some(ev) = st.pending.pop_front() else {
                break;
            };
            if proto == MissionProtocol::Eve27 && ev.kind != agent::PAUSE {
                wire::render_v27(&mut st.v27, &ev);
            }
            if ev.kind == "agent.started"
                && let Some(d) = delegated_by(&st, &ev)
            {
                // Time passed while the sandbox was down: the child has finished.
                let child = child_session(&meta.session_id, proto, &st, d);
                {
                    let mut cst = child.lock();
                    while let Some(ev) = cst.pending.pop_front() {
                        child.append(&mut cst, ev);
                    }
                }
                st.children.push(Arc::new(child));
            }
            if matches!(ev.kind, "session.completed" | "session.failed") {
                st.ended_on_wire = true;
            }
            if let Some(line) = rec.as_str() {
                let rec = wire::rec_from_line(proto, line);
                if proto == MissionProtocol::EveA && ev.kind == "session.waiting" {
                    let stored: Value = serde_json::from_str(line).unwrap_or_default();
                    if let Some(t) = stored["data"]["continuationToken"].as_str() {
                        st.token = t.to_owned();
                    }
                }
                st.records.push(rec);
            }
        } else if let Some(input) = v
            .get("in")
            .and_then(|i| serde_json::from_value::<Input>(i.clone()).ok())
        {
            st.apply(&input);
        }
    }
    st.file = Some(file);
    let len = st.records.len() as u64;
    Ok(Some(EveSession {
        id: meta.session_id.clone(),
        proto,
        state: Mutex::new(st),
        grown: watch::Sender::new(len),
        wake: Notify::new(),
        requests: Mutex::new(Vec::new()),
        child_of: None,
        child_requests: Mutex::new(Vec::new()),
    }))
}

/// Loads the eve sessions kept in `dir` and sets them playing again.
pub fn load_all(
    dir: &Path,
    sessions: &EveSessions,
    pace: crate::config::Pace,
    stop: &watch::Sender<bool>,
) -> std::io::Result<()> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".eve.ndjson"))
        .collect();
    paths.sort();
    for path in paths {
        let session = match load(&path) {
            Ok(Some(s)) => Arc::new(s),
            Ok(None) => {
                tracing::warn!("{}: not an eve session, skipped", path.display());
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Err(e),
            Err(e) => {
                tracing::warn!("{}: cannot read the session, skipped: {e}", path.display());
                continue;
            }
        };
        let pace_ms = {
            let raw = std::fs::read_to_string(&path).unwrap_or_default();
            raw.lines()
                .next()
                .and_then(|h| serde_json::from_str::<Value>(h).ok())
                .and_then(|v| v["eve"]["paceMs"].as_u64())
        };
        sessions.insert(session.clone());
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            std::io::Error::other("resuming missions needs a running Tokio runtime")
        })?;
        spawn_runner(&runtime, session, pace, pace_ms, stop);
    }
    Ok(())
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
    // the last event lets timer slack add up (5 ms deltas came 150 a second, not 200).
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

fn query_param<'a>(uri: &'a Uri, name: &str) -> Option<&'a str> {
    uri.query()?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == name).then_some(v)
    })
}

/// `GET /eve/v1/session/{id}/stream` for an eve session.
pub async fn stream(
    shared: Arc<Shared>,
    session: Arc<EveSession>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    if let Err(resp) = admit(&shared, &headers) {
        return eveify(resp).await;
    }
    if shared.knobs.get(|k| k.stranded) {
        return stranded();
    }
    if session.child_of.is_some() {
        let served = shared.knobs.get(|k| k.child_route).serves_own();
        session.log_child_request(false, served);
        if !served {
            return eve_session_not_found();
        }
    }
    serve(shared, session, uri)
}

/// `GET /eve/v1/session/{parent}/subagents/{callId}/{child}/stream`: a sub-agent's
/// stream through its parent's route (eve's `subagent-stream-route.ts`), with the
/// parent's key.
pub async fn child_stream(
    shared: Arc<Shared>,
    (parent, call, child): (String, String, String),
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    if let Err(resp) = admit(&shared, &headers) {
        return eveify(resp).await;
    }
    let not_found = || eve_error(StatusCode::NOT_FOUND, "Subagent stream not found.", None);
    let Some(found) = shared.missions.eve.get(&parent).and_then(|p| {
        p.lock()
            .children
            .iter()
            .find(|c| c.id == child && c.child_of.as_ref().is_some_and(|(_, k)| *k == call))
            .cloned()
    }) else {
        return not_found();
    };
    let served = shared.knobs.get(|k| k.child_route).serves_parent();
    found.log_child_request(true, served);
    if !served {
        return not_found();
    }
    serve(shared, found, uri)
}

/// A session's stream, once the route is admitted.
fn serve(shared: Arc<Shared>, session: Arc<EveSession>, uri: Uri) -> Response {
    let start_index = match query_param(&uri, "startIndex") {
        None | Some("") => None,
        Some(v) => {
            let digits = v.strip_prefix('-').unwrap_or(v);
            match (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| v.parse::<i64>().ok())
                .flatten()
            {
                Some(n) => Some(n),
                None => return bad("Expected startIndex to be an integer."),
            }
        }
    };
    let include_tail_index = matches!(query_param(&uri, "includeTailIndex"), Some("1" | "true"));
    session
        .requests
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(StreamRequest {
            start_index,
            include_tail_index,
        });
    let knobs = &shared.knobs;
    if knobs.take(|k| &mut k.stream_404) {
        return eve_session_not_found();
    }
    if knobs.get(|k| k.history_expired) {
        // eve 0.79.1 and later, once a session's history is past its retention.
        return eve_error(
            StatusCode::GONE,
            "This session's history has expired.",
            Some("session_expired"),
        );
    }
    let len = session.lock().records.len() as i64;
    let wanted = if knobs.get(|k| k.ignore_start_index) {
        0
    } else {
        start_index.unwrap_or(0)
    };
    let mut start = if wanted < 0 {
        (len + wanted).max(0)
    } else {
        wanted
    };
    let mut position = None;
    if session.proto == MissionProtocol::Eve27 && start > len {
        start = len;
        position = Some(len as usize);
    }
    let tail = (include_tail_index && !knobs.get(|k| k.no_tail_index)).then_some(len - 1);
    wire::response(
        session,
        usize::try_from(start).unwrap_or(usize::MAX),
        tail,
        position,
        knobs.clone(),
        shared.missions.stop.subscribe(),
    )
}

/// What eve 1.x takes in a follow-up: any other field is refused by name, as eve does.
const FOLLOW_UP_FIELDS_27: &[&str] = &[
    "inbox",
    "message",
    "answers",
    "clientContext",
    "outputSchema",
    "turnPolicy",
    "callback",
    "forwardedPrincipal",
    "idempotencyKey",
];

/// eve 1.x's 400 for fields it does not take: "Unknown field 'x'. Accepted fields: …".
fn unknown_fields(body: &serde_json::Map<String, Value>, accepted: &[&str]) -> Option<Response> {
    let mut unknown: Vec<&str> = body
        .keys()
        .map(String::as_str)
        .filter(|k| !accepted.contains(k))
        .collect();
    if unknown.is_empty() {
        return None;
    }
    unknown.sort_unstable();
    let named: Vec<String> = unknown.iter().map(|k| format!("'{k}'")).collect();
    let list = if accepted.is_empty() {
        "(none)".to_owned()
    } else {
        accepted.join(", ")
    };
    Some(bad(&format!(
        "Unknown field{} {}. Accepted fields: {list}.",
        if unknown.len() == 1 { "" } else { "s" },
        named.join(", ")
    )))
}

/// eve 1.x's `answers: [{interactionId, optionId?, text?}]` (strict), as the input
/// responses the agent reads (`requestId`: the interaction's id).
fn answers_27(body: &serde_json::Map<String, Value>) -> Result<Option<Vec<Value>>, Response> {
    if let Some(resp) = unknown_fields(body, FOLLOW_UP_FIELDS_27) {
        return Err(resp);
    }
    if let Some(key) = body.get("idempotencyKey")
        && !key
            .as_str()
            .is_some_and(|k| !k.is_empty() && k.len() <= 256)
    {
        return Err(bad(
            "Expected 'idempotencyKey' to be a nonempty string of at most 256 characters.",
        ));
    }
    let list = match body.get("answers") {
        None => return Ok(None),
        Some(Value::Array(a)) if !a.is_empty() => a,
        Some(_) => return Err(bad("Expected 'answers' to be a non-empty array.")),
    };
    let schema = || bad("Expected every 'answers' entry to match the HITL response schema.");
    let mut out = Vec::new();
    for a in list {
        let Some(o) = a.as_object() else {
            return Err(schema());
        };
        let strings = |k: &str| o.get(k).is_none_or(Value::is_string);
        if !o
            .keys()
            .all(|k| ["interactionId", "optionId", "text"].contains(&k.as_str()))
            || !o.get("interactionId").is_some_and(Value::is_string)
            || !strings("optionId")
            || !strings("text")
        {
            return Err(schema());
        }
        let mut r = json!({"requestId": o["interactionId"]});
        for k in ["optionId", "text"] {
            if let Some(v) = o.get(k) {
                r[k] = v.clone();
            }
        }
        out.push(r);
    }
    Ok(Some(out))
}

/// eve 1.x takes an answer to an open interaction that names an option it did not offer
/// (or text where it takes none) and refuses it on the stream, the interaction left open:
/// the request it names, the value sent, and eve's reason.
fn refusal_27(open: &[Open], responses: &[Value]) -> Option<(String, Value, String)> {
    let r = responses.first()?;
    let o = open
        .iter()
        .find(|o| Some(o.request_id.as_str()) == r["requestId"].as_str())?;
    let value = match (r.get("optionId"), r.get("text")) {
        (Some(Value::String(opt)), None) if !o.options.iter().any(|x| x == opt) => {
            json!({"optionId": opt})
        }
        (None, Some(Value::String(t))) if !o.allow_freeform => json!({"text": t}),
        _ => return None,
    };
    let choices: Vec<&str> = o.options.iter().map(String::as_str).collect();
    let reason = if o.kind == "tool-approval" {
        "Respond to this approval with Approve or Deny.".to_owned()
    } else {
        format!("Choose one of: {}.", choices.join(", "))
    };
    Some((o.request_id.clone(), value, reason))
}

/// An input response, checked against the open request it answers.
fn check_answer(open: &[Open], r: &Value) -> Result<(Open, Value), String> {
    let Some(request_id) = r.get("requestId").and_then(Value::as_str) else {
        return Err("Each input response needs a 'requestId' string.".into());
    };
    let Some(o) = open.iter().find(|o| o.request_id == request_id) else {
        return Err(format!(
            "No pending input request has the id {request_id:?}."
        ));
    };
    match (
        r.get("optionId").and_then(Value::as_str),
        r.get("text").and_then(Value::as_str),
    ) {
        (Some(opt), None) if o.options.iter().any(|x| x == opt) => {
            Ok((o.clone(), json!({"optionId": opt})))
        }
        (Some(opt), None) => Err(format!(
            "The option {opt:?} is not one of request {request_id:?}'s options."
        )),
        (None, Some(text)) if o.allow_freeform => Ok((o.clone(), json!({"text": text}))),
        (None, Some(_)) => Err(format!(
            "Request {request_id:?} does not accept free-form text."
        )),
        _ => Err("Each input response needs exactly one of 'optionId' or 'text'.".into()),
    }
}

/// An AI SDK `UserContent` message: its text parts joined, and each file part described
/// as eve records it (`{type: "file", mediaType, filename?, size}`, the size of its
/// decoded data), never with the data itself.
fn user_content(parts: &[Value]) -> Result<(String, Vec<Value>), String> {
    use base64::Engine as _;
    let mut text = Vec::new();
    let mut files = Vec::new();
    for p in parts {
        match p.get("type").and_then(Value::as_str) {
            Some("text") => match p.get("text").and_then(Value::as_str) {
                Some(t) => text.push(t),
                None => return Err("A text part needs a string 'text'.".into()),
            },
            Some("file") => {
                let Some(media_type) = p.get("mediaType").and_then(Value::as_str) else {
                    return Err("A file part needs a string 'mediaType'.".into());
                };
                let size = match p.get("data") {
                    Some(Value::String(d)) => base64::engine::general_purpose::STANDARD
                        .decode(d)
                        .map_err(|_| "A file part's 'data' must be base64.".to_owned())?
                        .len(),
                    _ => return Err("A file part needs its 'data' as base64.".into()),
                };
                let mut file = json!({"type": "file", "mediaType": media_type, "size": size});
                if let Some(name) = p.get("filename").and_then(Value::as_str) {
                    file["filename"] = json!(name);
                }
                files.push(file);
            }
            _ => return Err("Each part of 'message' must be a text or a file part.".into()),
        }
    }
    if text.is_empty() && files.is_empty() {
        return Err("'message' has no parts.".into());
    }
    Ok((text.join("\n"), files))
}

/// `POST /eve/v1/session/{id}` for an eve session.
pub async fn follow_up(
    shared: Arc<Shared>,
    session: Arc<EveSession>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let proto = session.proto;
    let body = match admitted(&shared, &headers, body, proto).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    session.posted("", &body);
    if shared.knobs.get(|k| k.stranded) {
        return stranded();
    }
    let token = body.get("continuationToken");
    let (message, files) = match body.get("message") {
        None | Some(Value::Null) => (None, Vec::new()),
        Some(Value::String(s)) => (Some(s.clone()), Vec::new()),
        Some(Value::Array(parts)) => match user_content(parts) {
            Ok((text, files)) => (Some(text), files),
            Err(why) => return bad(&why),
        },
        Some(_) => return bad("'message' must be a string or an array of parts."),
    };
    let responses = if proto == MissionProtocol::Eve27 {
        match answers_27(&body) {
            Ok(r) => r,
            Err(resp) => return resp,
        }
    } else {
        match body.get("inputResponses") {
            None | Some(Value::Null) => None,
            Some(Value::Array(a)) if !a.is_empty() => Some(a.clone()),
            Some(_) => return bad("'inputResponses' must be a non-empty array."),
        }
    };
    match (&message, &responses) {
        (Some(_), Some(_)) if proto == MissionProtocol::Eve27 => {
            return bad("'message' and 'answers' are mutually exclusive.");
        }
        (Some(_), Some(_)) if proto != MissionProtocol::EveA => {
            return bad("'message' and 'inputResponses' are mutually exclusive.");
        }
        (None, None) if proto == MissionProtocol::Eve27 => {
            return bad("Expected a non-empty 'message' or a non-empty 'answers' array.");
        }
        (None, None) => return bad("Send 'message' or 'inputResponses'."),
        _ => {}
    }
    if proto == MissionProtocol::EveA {
        match token.and_then(Value::as_str) {
            None | Some("") => return bad("Missing or empty 'continuationToken' field."),
            Some(t) if t != session.lock().token => {
                return bad(
                    "The 'continuationToken' is not the session's newest: use the one from the latest session.waiting (or the create response before any).",
                );
            }
            Some(_) => {}
        }
    }
    if shared.knobs.take(|k| &mut k.not_ready) {
        return eve_error(
            StatusCode::CONFLICT,
            "The session is not ready for a follow-up yet; retry shortly.",
            Some("session_not_ready"),
        );
    }
    let key = body
        .get("idempotencyKey")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut delivery = format!("dlv_{:016x}", random_u64());
    {
        let mut st = session.lock();
        let again = key.as_ref().and_then(|k| st.idempotent.get(k)).cloned();
        if let Some(first) = again {
            delivery = first;
        } else if st.after == After::Ended {
            return eve_error(
                StatusCode::CONFLICT,
                "The session has ended and takes no more messages.",
                Some("session_not_active"),
            );
        } else {
            let refused = (proto == MissionProtocol::Eve27)
                .then(|| responses.as_deref().and_then(|r| refusal_27(&st.open, r)))
                .flatten();
            let input = if let Some((request_id, response, reason)) = refused {
                Input::Refused {
                    request_id,
                    response,
                    reason,
                    delivery: delivery.clone(),
                }
            } else if let Some(responses) = responses {
                let mut answers = Vec::new();
                for r in &responses {
                    match check_answer(&st.open, r) {
                        Ok(a) => answers.push(a),
                        Err(e) => return bad(&e),
                    }
                }
                // One request is open at a time in this sandbox.
                let (open, response) = answers.swap_remove(0);
                Input::Answer {
                    request_id: open.request_id,
                    response,
                    text: message,
                    delivery: delivery.clone(),
                }
            } else {
                Input::Message {
                    text: message.unwrap_or_default(),
                    delivery: delivery.clone(),
                    files,
                }
            };
            session.apply(&mut st, input);
            if let Some(k) = key {
                st.idempotent.insert(k, delivery.clone());
            }
        }
    }
    let reply = match proto {
        MissionProtocol::EveA => (
            StatusCode::OK,
            axum::Json(json!({"ok": true, "sessionId": session.id})),
        ),
        MissionProtocol::Eve27 => (
            StatusCode::ACCEPTED,
            axum::Json(json!({"ok": true, "sessionId": session.id, "deliveryId": delivery})),
        ),
        _ => (
            StatusCode::ACCEPTED,
            axum::Json(
                json!({"ok": true, "sessionId": session.id, "status": "accepted", "deliveryId": delivery}),
            ),
        ),
    };
    let reply = with_session_header(reply.into_response(), &session.id);
    if shared.knobs.take(|k| &mut k.cut_answers) {
        return cut_answer(reply).await;
    }
    reply
}

/// `POST /eve/v1/session/{id}/cancel` for an eve session.
pub async fn cancel(
    shared: Arc<Shared>,
    session: Arc<EveSession>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let body = match admitted(&shared, &headers, body, session.proto).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    session.posted("/cancel", &body);
    if session.proto == MissionProtocol::Eve27
        && let Some(resp) = unknown_fields(&body, &["turnId"])
    {
        return resp;
    }
    let guard = match body.get("turnId") {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) if !t.is_empty() => Some(t.clone()),
        Some(_) => return bad("'turnId' must be a non-empty string."),
    };
    let accepted = {
        let mut st = session.lock();
        let active = EveSession::turn_active(&st) && st.after != After::Ended;
        // A stale guard is a benign no-op.
        let current = guard.as_deref().is_none_or(|t| t == st.agent.turn_id);
        if active && current {
            st.cancel = true;
            session.wake.notify_one();
        }
        active
    };
    if session.proto == MissionProtocol::Eve27 {
        // eve 1.x takes every cancel as a delivery of its own (one with no turn to cancel
        // settles `ignored`), and says nothing of a status.
        let delivery = format!("dlv_{:016x}", random_u64());
        let body = json!({"ok": true, "sessionId": session.id, "deliveryId": delivery});
        (StatusCode::ACCEPTED, axum::Json(body)).into_response()
    } else if accepted || session.proto == MissionProtocol::EveA {
        let body = json!({"ok": true, "sessionId": session.id, "status": "accepted"});
        (StatusCode::ACCEPTED, axum::Json(body)).into_response()
    } else {
        (
            StatusCode::OK,
            axum::Json(json!({"ok": true, "status": "no_active_turn"})),
        )
            .into_response()
    }
}

/// `POST /eve/v1/session/{id}/end`: cancels a running turn, then ends the session.
pub async fn end(
    shared: Arc<Shared>,
    session: Arc<EveSession>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    match admitted(&shared, &headers, body, session.proto).await {
        Ok(body) => session.posted("/end", &body),
        Err(resp) => return resp,
    }
    {
        let mut st = session.lock();
        if st.after != After::Ended {
            session.apply(&mut st, Input::End);
        }
    }
    let body = json!({"ok": true, "sessionId": session.id, "status": "accepted"});
    (StatusCode::ACCEPTED, axum::Json(body)).into_response()
}
