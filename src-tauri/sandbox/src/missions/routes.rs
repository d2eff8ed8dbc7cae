//! The investigation service's routes in the seeds' protocol (and the way into eve's):
//! create a session, stream it, cancel, follow up and end, with the sandbox's own
//! `/_sandbox` views of what a session received.

use super::*;
use crate::auth::admit;
use crate::body::read_limited;
use crate::errors::{error, error_with, rate_limited_with};
use crate::knobs::MissionProtocol;
use crate::shared::Shared;
use axum::Router;
use axum::body::Body;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use serde_json::json;
use session::Meta;
use std::sync::atomic::Ordering;

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/eve/v1/session", post(create))
        .route("/eve/v1/session/{id}/stream", get(stream_session))
        .route(
            "/eve/v1/session/{id}/subagents/{call}/{child}/stream",
            get(stream_child),
        )
        .route("/eve/v1/session/{id}/cancel", post(cancel))
        .route(
            "/eve/v1/session/{id}",
            any(|s, p, m, h, u, b| on_eve_session(s, p, m, h, u, b, SessionPost::FollowUp)),
        )
        .route(
            "/eve/v1/session/{id}/end",
            any(|s, p, m, h, u, b| on_eve_session(s, p, m, h, u, b, SessionPost::End)),
        )
        .route("/_sandbox/stream-requests", get(stream_requests))
        .route(
            "/_sandbox/sign-in/{session}/{attempt}",
            get(eve::sign_in::page_route),
        )
        .route("/_sandbox/posts", get(eve::sign_in::posts_route))
}

/// True when requests for unknown sessions get eve's answers.
fn eve_mode(shared: &Shared) -> bool {
    shared.knobs.get(|k| k.mission_protocol) != MissionProtocol::Legacy
}

/// What the router answers a path it does not serve (the legacy service has no
/// follow-up or end route).
fn no_such_endpoint(uri: &Uri) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "not_found",
        &format!("No such endpoint: {}", uri.path()),
    )
}

async fn stream_child(
    State(shared): State<Arc<Shared>>,
    UrlPath(ids): UrlPath<(String, String, String)>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let knobs = shared.missions.knobs.clone();
    let resp = eve::routes::child_stream(shared, ids, headers, uri).await;
    cut_as_asked(&knobs, resp)
}

/// Which of an eve session's own routes a request reached.
#[derive(Clone, Copy)]
enum SessionPost {
    FollowUp,
    End,
}

/// A POST to an eve session's route: taken by the session, or, for a session the
/// sandbox does not know, answered as eve answers it. The seeds' service has neither
/// route, and no route answers another method.
async fn on_eve_session(
    State(shared): State<Arc<Shared>>,
    UrlPath(id): UrlPath<String>,
    method: axum::http::Method,
    headers: HeaderMap,
    uri: Uri,
    body: Body,
    route: SessionPost,
) -> Response {
    if method != axum::http::Method::POST {
        return no_such_endpoint(&uri);
    }
    match (shared.missions.eve.get(&id), route) {
        (Some(s), SessionPost::FollowUp) => {
            eve::routes::follow_up(shared.clone(), s, headers, body).await
        }
        (Some(s), SessionPost::End) => eve::routes::end(shared.clone(), s, headers, body).await,
        (None, _) if eve_mode(&shared) => match admit(&shared, &headers) {
            Err(resp) => eve::routes::eveify(resp).await,
            Ok(_) => crate::errors::eve_session_not_found(),
        },
        (None, _) => no_such_endpoint(&uri),
    }
}

/// `GET /_sandbox/stream-requests?sessionId=…`: what each stream request of an eve
/// session asked for, in order.
async fn stream_requests(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    if let Err(resp) = crate::auth::bearer(&shared, &headers) {
        return resp;
    }
    let id = uri
        .query()
        .and_then(|q| {
            q.split('&')
                .find_map(|p| p.strip_prefix("sessionId="))
                .map(str::to_owned)
        })
        .unwrap_or_default();
    let requests: Vec<Value> = shared
        .missions
        .stream_requests(&id)
        .iter()
        .map(|r| json!({"startIndex": r.start_index, "includeTailIndex": r.include_tail_index}))
        .collect();
    axum::Json(json!({"ok": true, "sessionId": id, "requests": requests})).into_response()
}

fn bad(code: &str, message: &str) -> Response {
    error(StatusCode::BAD_REQUEST, code, message)
}

fn not_found(id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "session_not_found",
        &format!("No session {id:?}."),
    )
}

/// A sandbox-extension integer field: absent or null is `None`, larger than `max` is `max`.
fn extension(body: &Value, field: &str, max: u64) -> Result<Option<u64>, Box<Response>> {
    match body.get(field).filter(|v| !v.is_null()) {
        None => Ok(None),
        Some(v) => match crate::body::whole_number(v) {
            Some(n) => Ok(Some(n.min(max))),
            None => Err(Box::new(error_with(
                StatusCode::BAD_REQUEST,
                "invalid_field",
                &format!("{field} must be a non-negative whole number."),
                json!({ "field": field }),
            ))),
        },
    }
}

/// The mission message parser on its own, for the fuzzer: true when `text` is a valid
/// mission message.
pub fn check_message(text: &str) -> bool {
    message::parse(text).is_ok()
}

async fn create(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Body) -> Response {
    let protocol = shared.knobs.get(|k| k.mission_protocol);
    if protocol != MissionProtocol::Legacy {
        return eve::routes::create(shared.clone(), protocol, headers, body).await;
    }
    if let Err(resp) = admit(&shared, &headers) {
        return resp;
    }
    let raw = match read_limited(&headers, body).await {
        Ok(raw) => raw,
        Err(resp) => return resp,
    };
    let body: Value = match serde_json::from_slice(&raw) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => return bad("invalid_request", "The body must be a JSON object."),
        Err(e) => {
            return bad(
                "invalid_request",
                &format!("The body is not valid JSON: {e}."),
            );
        }
    };
    let Some(text) = body.get("message").and_then(Value::as_str) else {
        return error_with(
            StatusCode::BAD_REQUEST,
            "invalid_field",
            "message is required: the mission text, as a string.",
            json!({"field": "message"}),
        );
    };
    let mission = match message::parse(text) {
        Ok(m) => m,
        Err(e) => {
            return error_with(
                StatusCode::BAD_REQUEST,
                "invalid_mission",
                &e.message,
                json!({"line": e.line, "expected": e.expected}),
            );
        }
    };
    let defaults = shared.missions.defaults;
    let pace_ms = match extension(&body, "paceMs", MAX_PACE_MS) {
        Ok(v) => v.or(defaults.pace_ms),
        Err(resp) => return *resp,
    };
    let events = match extension(&body, "events", script::MAX_EVENTS) {
        Ok(v) => v.map(|n| n.max(script::MIN_EVENTS)).or(defaults.events),
        Err(resp) => return *resp,
    };

    let missions = &shared.missions;
    let id = format!("ses_{:016x}", session::random_u64());
    let meta = Meta {
        continuation_token: format!(
            "ct_{:016x}{:016x}",
            session::random_u64(),
            session::random_u64()
        ),
        created_at: session::rfc3339(session::now_ms()),
        mission_type: mission.mission_type,
        budget_type: mission.budget_type,
        budget_cents: mission.budget_cents,
        objective: mission.objective,
        seed: shared.knobs.next_mission_seed(),
        pace_ms,
        events,
        session_id: id.clone(),
    };
    let file = match &missions.dir {
        None => None,
        Some(dir) => match session::create_file(dir, &meta) {
            Ok(f) => Some(f),
            Err(e) => {
                tracing::error!("cannot store session {id}: {e}");
                return error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "The sandbox cannot store the session.",
                );
            }
        },
    };
    let stream_url = format!("/eve/v1/session/{id}/stream");
    let reply = json!({
        "sessionId": id,
        "continuationToken": meta.continuation_token,
        "status": "active",
        "createdAt": meta.created_at,
        "streamUrl": stream_url,
    });
    let session = Arc::new(Session::new(meta, Vec::new(), None, file));
    missions.lock().insert(id, session.clone());
    missions.spawn_runner(&tokio::runtime::Handle::current(), session);
    let status = shared.knobs.get(|k| k.success_status(StatusCode::CREATED));
    (status, axum::Json(reply)).into_response()
}

/// The id of the last event the client has, from `Last-Event-ID` or `?lastEventId=`
/// (the header wins; each one sent must be well formed): a decimal id of at most 19
/// digits, or an opaque id the `eventIds: "opaque"` variant sent. Empty means none.
///
/// The pattern /openapi.json gives both is held exactly, rather than the description
/// loosened: resuming is right only from an id this stream sent, and a 400 tells a
/// client that has lost its place, where a stream from another point would hide it.
/// (Casebook sends only the header, with an id the stream sent.) The query is read as
/// a form, percent-decoded, since any client may encode it; one sent twice is an array,
/// not the string described. White space around the header's value is HTTP's, not
/// the value's.
fn last_event_id(headers: &HeaderMap, uri: &Uri, seed: u64) -> Result<u64, Box<Response>> {
    let refuse = |why: String| Box::new(bad("invalid_request", &why));
    let mut from_headers = headers.get_all("last-event-id").iter();
    let from_header = from_headers
        .next()
        .map(|v| v.to_str().unwrap_or("\u{0}").trim().to_owned());
    if from_headers.next().is_some() {
        return Err(refuse("Last-Event-ID must be sent once.".into()));
    }
    let pairs = axum::extract::Query::<Vec<(String, String)>>::try_from_uri(uri)
        .map(|q| q.0)
        .unwrap_or_default();
    let mut from_query = pairs
        .into_iter()
        .filter_map(|(k, v)| (k == "lastEventId").then_some(v));
    let query = from_query.next();
    if from_query.next().is_some() {
        return Err(refuse("lastEventId must be sent once.".into()));
    }
    let read = |value: &str| -> Result<u64, Box<Response>> {
        if value.is_empty() {
            return Ok(0);
        }
        let decimal = value.len() <= 19 && value.bytes().all(|b| b.is_ascii_digit());
        decimal
            .then(|| value.parse::<u64>().ok())
            .flatten()
            .or_else(|| stream::decode_opaque(seed, value))
            .ok_or_else(|| {
                refuse(format!(
                    "Last-Event-ID must be an event id this stream sent; got {value:?}."
                ))
            })
    };
    let query = query.as_deref().map(read).transpose()?;
    match from_header.as_deref() {
        Some(value) => read(value),
        None => Ok(query.unwrap_or(0)),
    }
}

async fn stream_session(
    State(shared): State<Arc<Shared>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let knobs = shared.missions.knobs.clone();
    let resp = serve_stream(shared, id, headers, uri).await;
    cut_as_asked(&knobs, resp)
}

/// A stream answer as the `streamContentLength` knob asks: every 200 cut, and counted.
fn cut_as_asked(knobs: &Handle, resp: Response) -> Response {
    match knobs.get(|k| k.stream_content_length()) {
        Some(n) if resp.status() == StatusCode::OK => {
            knobs.count_cut();
            declare_length(resp, n)
        }
        _ => resp,
    }
}

/// `resp` declaring `Content-Length: n`, its body cut after `n` bytes.
fn declare_length(resp: Response, n: u64) -> Response {
    let (mut parts, body) = resp.into_parts();
    let cut = futures_util::StreamExt::scan(body.into_data_stream(), n, |left, chunk| {
        let next = match chunk {
            Ok(mut chunk) if *left > 0 => {
                let take = chunk
                    .len()
                    .min(usize::try_from(*left).unwrap_or(usize::MAX));
                *left -= take as u64;
                Some(Ok::<_, std::io::Error>(chunk.split_to(take)))
            }
            _ => None,
        };
        std::future::ready(next)
    });
    parts.headers.insert(
        axum::http::header::CONTENT_LENGTH,
        axum::http::HeaderValue::from(n),
    );
    Response::from_parts(parts, Body::from_stream(cut))
}

async fn serve_stream(shared: Arc<Shared>, id: String, headers: HeaderMap, uri: Uri) -> Response {
    if let Some(s) = shared.missions.eve.get(&id) {
        return eve::routes::stream(shared.clone(), s, headers, uri).await;
    }
    if eve_mode(&shared) && shared.missions.get(&id).is_none() {
        return match admit(&shared, &headers) {
            Err(resp) => eve::routes::eveify(resp).await,
            Ok(_) => crate::errors::eve_session_not_found(),
        };
    }
    if let Err(resp) = admit(&shared, &headers) {
        return resp;
    }
    let knobs = &shared.missions.knobs;
    if let Some(retry_after) = knobs.take_stream_429() {
        return rate_limited_with(retry_after);
    }
    let Some(session) = shared.missions.get(&id) else {
        return not_found(&id);
    };
    let after = match last_event_id(&headers, &uri, session.meta.seed) {
        Ok(n) => n,
        Err(resp) => return *resp,
    };
    if knobs.get(|k| k.done_status_204) {
        let over = {
            let st = session.lock();
            st.status != Status::Active
                && (session.streamed_to_end.load(Ordering::SeqCst)
                    || after >= st.events.len() as u64)
        };
        if over {
            return StatusCode::NO_CONTENT.into_response();
        }
    }
    stream::response(
        session,
        after,
        knobs.clone(),
        shared.missions.stop.subscribe(),
    )
}

async fn cancel(
    State(shared): State<Arc<Shared>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if let Some(s) = shared.missions.eve.get(&id) {
        return eve::routes::cancel(shared.clone(), s, headers, body).await;
    }
    if eve_mode(&shared) && shared.missions.get(&id).is_none() {
        // eve answers a cancel for an unknown session as "nothing to cancel".
        return match admit(&shared, &headers) {
            Err(resp) => eve::routes::eveify(resp).await,
            Ok(_) => (
                StatusCode::OK,
                axum::Json(json!({"ok": true, "status": "no_active_turn"})),
            )
                .into_response(),
        };
    }
    if let Err(resp) = admit(&shared, &headers) {
        return resp;
    }
    let raw = match read_limited(&headers, body).await {
        Ok(raw) => raw,
        Err(resp) => return resp,
    };
    let reason = if raw.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        match serde_json::from_slice::<Value>(&raw) {
            Ok(Value::Object(obj)) => obj.get("reason").and_then(Value::as_str).map(str::to_owned),
            _ => {
                return bad(
                    "invalid_request",
                    "The body must be empty or a JSON object (e.g. {\"reason\": \"…\"}).",
                );
            }
        }
    };
    let Some(session) = shared.missions.get(&id) else {
        return not_found(&id);
    };
    {
        let mut st = session.lock();
        if st.status != Status::Active || st.cancel.is_some() {
            let state = match (st.status, st.cancel.is_some()) {
                (Status::Active, true) => "is already being cancelled",
                (Status::Waiting, _) => "is waiting",
                _ => "is complete",
            };
            return error(
                StatusCode::CONFLICT,
                "no_active_turn",
                &format!("Session {id} has no active turn to cancel: it {state}."),
            );
        }
        session.record_cancel(&mut st, reason.as_deref().unwrap_or("requested"));
    }
    session.cancel.notify_one();
    axum::Json(json!({"ok": true, "sessionId": id, "status": "accepted"})).into_response()
}
