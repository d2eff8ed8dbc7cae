//! The investigation service in eve's HTTP session protocol, behind the
//! `missionProtocol` knob (`eve-a`, `eve-b`, `eve-27`; the default `legacy` is the
//! SSE service in the parent module, unchanged). Routes, all under `/eve/v1`:
//!
//! - `POST /session` `{message, mode?, paceMs?, events?}` → `202` + `x-eve-session-id`;
//!   A `{ok, sessionId, continuationToken: "eve:<uuid>"}`, B/27 `{ok, sessionId,
//!   status: "accepted"}` (a `continuationToken` in the body → 400). `mode: "task"`
//!   (eve's task mode) ends the session after its first turn (`session.completed`;
//!   27 `session.ended`); otherwise a session waits for the next message after each turn.
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
//! eve sessions are kept in memory only (not in the data dir), unlike legacy ones.

pub mod agent;
pub mod wire;

use crate::auth::admit;
use crate::body::read_limited;
use crate::missions::session::{Gaps, random_u64};
use crate::{MissionProtocol, Shared};
use agent::{After, Agent, Ev, Open};
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
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
}

pub struct EveSession {
    pub id: String,
    pub proto: MissionProtocol,
    state: Mutex<St>,
    pub grown: watch::Sender<u64>,
    wake: Notify,
    requests: Mutex<Vec<StreamRequest>>,
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
        let rec = match self.proto {
            MissionProtocol::Eve27 => wire::render_v27(&mut st.v27, &ev),
            _ => Some(wire::render_event(self.proto, &ev)),
        };
        if ev.kind == "session.completed" {
            st.ended_on_wire = true;
        }
        if let Some(rec) = rec {
            st.records.push(rec);
            self.grown.send_replace(st.records.len() as u64);
        }
    }

    /// True while a turn runs or is held on input (B/27).
    fn turn_active(st: &St) -> bool {
        !st.pending.is_empty() || st.after == After::Held
    }

    fn queue(&self, st: &mut St, (events, after): (Vec<Ev>, After)) {
        if let Some(open) = Agent::last_open(&events) {
            st.open = vec![open];
        }
        st.pending.extend(events);
        st.after = after;
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
    pub fn get(&self, id: &str) -> Option<Arc<EveSession>> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }

    fn insert(&self, s: Arc<EveSession>) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(s.id.clone(), s);
    }

    pub fn stream_requests(&self, id: &str) -> Vec<StreamRequest> {
        self.get(id)
            .map(|s| s.requests.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .unwrap_or_default()
    }
}

/// eve's error body.
pub fn eve_error(status: StatusCode, error: &str, code: Option<&str>) -> Response {
    let mut body = json!({"ok": false, "error": error});
    if let Some(c) = code {
        body["code"] = json!(c);
    }
    (status, axum::Json(body)).into_response()
}

fn bad(error: &str) -> Response {
    eve_error(StatusCode::BAD_REQUEST, error, Some("invalid_request"))
}

pub fn session_not_found() -> Response {
    eve_error(StatusCode::NOT_FOUND, "Session not found.", None)
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

/// `POST /eve/v1/session` in an eve protocol.
pub async fn create(
    shared: Arc<Shared>,
    proto: MissionProtocol,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if let Err(resp) = admit(&shared, &headers) {
        return eveify(resp).await;
    }
    let body = match json_body(&headers, body).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    if proto != MissionProtocol::EveA && body.contains_key("continuationToken") {
        return bad("Session-ID routes do not accept 'continuationToken'.");
    }
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
    let task_mode = match body.get("mode") {
        None | Some(Value::Null) => false,
        Some(Value::String(m)) if m == "conversation" => false,
        Some(Value::String(m)) if m == "task" => true,
        Some(_) => return bad("'mode' must be \"conversation\" or \"task\"."),
    };

    let id = format!("ses_{:016x}", random_u64());
    let seed = super::script::seed_from(&id);
    let mut agent = Agent::new(
        proto,
        seed,
        &mission.objective,
        mission.budget_cents,
        events,
        task_mode,
    );
    let delivery = format!("dlv_{:016x}", random_u64());
    let first = agent.first_turn(text, Some(&delivery));
    let session = Arc::new(EveSession {
        id: id.clone(),
        proto,
        state: Mutex::new(St {
            records: Vec::new(),
            pending: VecDeque::new(),
            agent,
            after: After::Idle,
            open: Vec::new(),
            token: new_token(),
            cancel: false,
            ended_on_wire: false,
            v27: wire::V27::default(),
        }),
        grown: watch::Sender::new(0),
        wake: Notify::new(),
        requests: Mutex::new(Vec::new()),
    });
    let token = {
        let mut st = session.lock();
        session.queue(&mut st, first);
        st.token.clone()
    };
    shared.missions.eve.insert(session.clone());
    let gaps = Gaps::new(defaults.pace, pace_ms, seed);
    tokio::spawn(run(session, gaps, shared.missions.stop.subscribe()));
    let reply = match proto {
        MissionProtocol::EveA => json!({"ok": true, "sessionId": id, "continuationToken": token}),
        _ => json!({"ok": true, "sessionId": id, "status": "accepted"}),
    };
    with_session_header(
        (StatusCode::ACCEPTED, axum::Json(reply)).into_response(),
        &id,
    )
}

/// Plays a session's queued events at its pace, for as long as the sandbox runs.
async fn run(session: Arc<EveSession>, mut gaps: Gaps, mut stop: watch::Receiver<bool>) {
    let mut since_yield = 0u32;
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
            continue;
        }
        let mut gap = gaps.next();
        // Deltas come faster than whole events, as a model's tokens do.
        if appended_kind.is_some_and(|k| k.ends_with(".appended")) {
            gap /= 8;
        }
        if gap.is_zero() {
            since_yield += 1;
            if since_yield >= 32 {
                since_yield = 0;
                tokio::task::yield_now().await;
            }
        } else {
            tokio::select! {
                _ = tokio::time::sleep(gap) => {}
                _ = session.wake.notified() => {}
                _ = stop.changed() => {}
            }
        }
        let mut st = session.lock();
        if *stop.borrow() {
            return;
        }
        if std::mem::take(&mut st.cancel) {
            st.pending.clear();
            st.open.clear();
            let evs = st.agent.cancelled();
            let ended = st.after == After::Ended;
            st.pending.extend(evs);
            if ended {
                let ev = st.agent.ended();
                st.pending.push_back(ev);
            } else {
                st.after = After::Idle;
            }
        }
        if let Some(ev) = st.pending.pop_front() {
            session.append(&mut st, ev);
        }
    }
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
    let faults = &shared.faults;
    if faults.take_stream_404() {
        return session_not_found();
    }
    let len = session.lock().records.len() as i64;
    let wanted = start_index.unwrap_or(0);
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
    let tail = include_tail_index.then_some(len - 1);
    wire::response(
        session,
        usize::try_from(start).unwrap_or(usize::MAX),
        tail,
        position,
        faults.clone(),
        shared.missions.stop.subscribe(),
    )
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

/// `POST /eve/v1/session/{id}` for an eve session.
pub async fn follow_up(
    shared: Arc<Shared>,
    session: Arc<EveSession>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if let Err(resp) = admit(&shared, &headers) {
        return eveify(resp).await;
    }
    let body = match json_body(&headers, body).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    let proto = session.proto;
    let token = body.get("continuationToken");
    if proto != MissionProtocol::EveA && token.is_some() {
        return bad("Session-ID routes do not accept 'continuationToken'.");
    }
    let message = match body.get("message") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return bad("'message' must be a string."),
    };
    let responses = match body.get("inputResponses") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) if !a.is_empty() => Some(a.clone()),
        Some(_) => return bad("'inputResponses' must be a non-empty array."),
    };
    match (&message, &responses) {
        (Some(_), Some(_)) if proto != MissionProtocol::EveA => {
            return bad("'message' and 'inputResponses' are mutually exclusive.");
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
    if shared.faults.take_not_ready() {
        return eve_error(
            StatusCode::CONFLICT,
            "The session is not ready for a follow-up yet; retry shortly.",
            Some("session_not_ready"),
        );
    }
    let delivery = format!("dlv_{:016x}", random_u64());
    {
        let mut st = session.lock();
        if st.after == After::Ended {
            return eve_error(
                StatusCode::CONFLICT,
                "The session has ended and takes no more messages.",
                Some("session_not_active"),
            );
        }
        let active = EveSession::turn_active(&st);
        if let Some(responses) = responses {
            let mut answers = Vec::new();
            for r in &responses {
                match check_answer(&st.open, r) {
                    Ok(a) => answers.push(a),
                    Err(e) => return bad(&e),
                }
            }
            // One request is open at a time in this sandbox.
            let (open, response) = answers.swap_remove(0);
            st.open.clear();
            let batch = st
                .agent
                .answered(&open, response, message.as_deref(), Some(&delivery));
            session.queue(&mut st, batch);
        } else if let Some(text) = message {
            let sole_question = st.open.len() == 1
                && (st.after == After::Held || proto == MissionProtocol::EveA)
                && st.pending.is_empty();
            if sole_question {
                // A plain message answers the only pending question (or, for a budget
                // prompt, means "continue").
                let open = st.open.remove(0);
                let response = if open.allow_freeform {
                    json!({"text": text})
                } else {
                    json!({"optionId": "continue"})
                };
                let batch = st
                    .agent
                    .answered(&open, response, Some(&text), Some(&delivery));
                session.queue(&mut st, batch);
            } else if active {
                let ev = st.agent.steer(&text, Some(&delivery));
                st.pending.push_front(ev);
                session.wake.notify_one();
            } else {
                st.open.clear();
                let batch = st.agent.reply_turn(&text, Some(&delivery));
                session.queue(&mut st, batch);
            }
        }
    }
    let reply = match proto {
        MissionProtocol::EveA => (
            StatusCode::OK,
            axum::Json(json!({"ok": true, "sessionId": session.id})),
        ),
        _ => (
            StatusCode::ACCEPTED,
            axum::Json(
                json!({"ok": true, "sessionId": session.id, "status": "accepted", "deliveryId": delivery}),
            ),
        ),
    };
    with_session_header(reply.into_response(), &session.id)
}

/// `POST /eve/v1/session/{id}/cancel` for an eve session.
pub async fn cancel(
    shared: Arc<Shared>,
    session: Arc<EveSession>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if let Err(resp) = admit(&shared, &headers) {
        return eveify(resp).await;
    }
    let body = match json_body(&headers, body).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    if session.proto != MissionProtocol::EveA && body.contains_key("continuationToken") {
        return bad("Session-ID routes do not accept 'continuationToken'.");
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
    if accepted || session.proto == MissionProtocol::EveA {
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
    if let Err(resp) = admit(&shared, &headers) {
        return eveify(resp).await;
    }
    if let Err(resp) = json_body(&headers, body).await {
        return resp;
    }
    {
        let mut st = session.lock();
        if st.after != After::Ended {
            if EveSession::turn_active(&st) {
                st.cancel = true;
            } else {
                let ev = st.agent.ended();
                st.pending.push_back(ev);
            }
            st.after = After::Ended;
            st.open.clear();
            session.wake.notify_one();
        }
    }
    let body = json!({"ok": true, "sessionId": session.id, "status": "accepted"});
    (StatusCode::ACCEPTED, axum::Json(body)).into_response()
}
