//! eve's routes: create a session, stream it, follow up, cancel and end, with eve's
//! error answers and its rules for what a follow-up may carry.

use super::*;
use crate::auth::admit;
use crate::body::read_limited;
use crate::errors::{eve_error, eve_session_not_found};
use crate::missions::eve::durability::create_file;
use crate::missions::session::random_u64;
use crate::shared::Shared;
use agent::{After, Open};
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use sign_in::origin;

/// eve's error body.
/// eve's answer to a stranded session's follow or input, as its server test writes it.
pub(super) fn stranded() -> Response {
    let body = json!({"ok": false, "code": "session_stranded", "eveVersion": "0.91.0",
                      "error": "This session is stranded."});
    (StatusCode::CONFLICT, axum::Json(body)).into_response()
}

/// `resp` with its body cut halfway and the connection closed, its whole length declared:
/// the client cannot tell whether the service took what it sent.
pub(super) async fn cut_answer(resp: Response) -> Response {
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

pub(super) fn bad(error: &str) -> Response {
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

pub(super) async fn json_body(
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

pub(super) fn with_session_header(mut resp: Response, id: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(id) {
        resp.headers_mut().insert("x-eve-session-id", v);
    }
    resp
}

/// What every eve POST route reads first: the key, a JSON object body, and, from
/// generation B on, no `continuationToken` (eve's ID-addressed routes refuse it).
pub(super) async fn admitted(
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
    let mission = match crate::missions::message::parse(text) {
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
    let pace_ms = match whole("paceMs", crate::missions::MAX_PACE_MS) {
        Ok(v) => v.or(defaults.pace_ms),
        Err(r) => return r,
    };
    let events = match whole("events", crate::missions::script::MAX_EVENTS) {
        Ok(v) => v
            .map(|n| n.max(crate::missions::script::MIN_EVENTS))
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

pub(super) fn query_param<'a>(uri: &'a Uri, name: &str) -> Option<&'a str> {
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
pub(super) fn serve(shared: Arc<Shared>, session: Arc<EveSession>, uri: Uri) -> Response {
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
pub(super) const FOLLOW_UP_FIELDS_27: &[&str] = &[
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
pub(super) fn unknown_fields(
    body: &serde_json::Map<String, Value>,
    accepted: &[&str],
) -> Option<Response> {
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
pub(super) fn answers_27(
    body: &serde_json::Map<String, Value>,
) -> Result<Option<Vec<Value>>, Response> {
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
pub(super) fn refusal_27(open: &[Open], responses: &[Value]) -> Option<(String, Value, String)> {
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
pub(super) fn check_answer(open: &[Open], r: &Value) -> Result<(Open, Value), String> {
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
pub(super) fn user_content(parts: &[Value]) -> Result<(String, Vec<Value>), String> {
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
