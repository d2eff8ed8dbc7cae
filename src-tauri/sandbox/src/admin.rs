//! `POST /_sandbox/faults`: switches faults on a running sandbox over HTTP, so a
//! test can drive the sandbox inside the app it is testing. Sandbox-only, needs the
//! bearer key, and the sandbox only listens on 127.0.0.1.
//!
//! The body is a JSON object; every field is optional, fields left out stay as they
//! are, and `"clear": true` (applied first) switches everything off. Unknown fields
//! are refused with 400. Faults:
//!
//! - `latencyMs`, `dropStreamAfter`, `tinyChunks`, `crlf`, `slowDripMs`,
//!   `storm: {count, retryAfter}`, `fail: {nth, kind: "500" | "malformed_json"}`,
//!   `cutRandom: {seed, count}` (the next `count` stream connections cut at random
//!   points: between events, mid-event or mid-UTF-8 sequence). The answer carries
//!   `cutsMade`, the connections cut so far.
//!
//! Variants, the other legal answers to what the contract leaves "not shown" (see
//! [`crate::knobs`]):
//!
//! - `eventIds`: `"all"` (default), `"none"`, `"some"` (every third event) or
//!   `"opaque"` (non-numeric tokens, still good for `Last-Event-ID`);
//! - `completionEvent`: the wire name of the event ending a completed mission
//!   (`""`: back to `session.completed`);
//! - `doneStatus204`: `true` to answer 204 to stream requests for a finished session
//!   once it has been streamed to its end;
//! - `stream429`: the next N stream requests answer 429, with `Retry-After` of
//!   `stream429RetryAfter` seconds (default 1), given as an HTTP date when
//!   `stream429RetryAfterDate` is `true`;
//! - `silenceMs` + `silenceAfter`: each stream connection sends nothing for
//!   `silenceMs` ms after `silenceAfter` events (default 0), then carries on
//!   (`silenceMs: 0`: off);
//! - `parseShape`: `"default"`, `"alternate"` or `"text"`;
//! - `successStatus`: 200, 201 or 202 for successful parse, cite and session-create
//!   answers (0: each endpoint's own);
//! - `htmlErrors`: `true` for HTML bodies on 413 and 429 answers;
//! - `readRefused`: `true` to read a turned-away cite or parse (401, 429) to its end
//!   before answering, instead of answering from the headers and closing.
//!
//! The citation service's variants (see [`crate::cite_variants`]), each off by default:
//!
//! - `requireReferences`: `true` to refuse (422) a cite of a document or essay with no
//!   References section (or none with entries);
//! - `citeStyle`: `"library"` (default) or `"existing"`: cite only from the
//!   document's own reference list, append nothing (`referencesAdded` 0);
//! - `placement`: `"end"` (default) or `"inside"`: before the full stop of a sentence
//!   picked at random, in varied author–year shapes;
//! - `citeShape`: `"author-year"` (default), `"numeric"` (`[3]`), `"bracketed"`
//!   (`[Smith 2019]`) or `"ibid"` (`(ibid.)` for the work the paragraph before cited);
//! - `citeNotes`: `true` to cite .pptx speaker notes too;
//! - `scrubMetadata`: `true` to blank creator, lastModifiedBy, Company and Manager;
//! - `unseeded`: `true` for a fresh random seed each cite;
//! - `errorFamily`: `"default"`, `"plain-error"`, `"nested"`, `"message"`,
//!   `"detail"`, `"problem"`, `"text"` or `"html"`;
//! - `frontLimitBytes`: a front answers 413 (an HTML page) to a citation request whose
//!   body is over N bytes, before the service reads it (0: off);
//! - `slowCiteMs`: the cite holds its answer N ms after reading the request (0: off).
//!
//! The investigation service's protocol and eve's own faults (see
//! `crate::missions::eve`):
//!
//! - `missionProtocol`: `"legacy"` (the seeds' SSE), `"eve-a"` (what `casebook-sandbox`
//!   and the app's sandbox start with), `"eve-b"` or `"eve-27"`, for sessions created from now on (a session keeps its protocol;
//!   `clear` goes back to the protocol the sandbox started with);
//! - `leaseSeconds`: eve B and 27 stream responses end after N seconds with the
//!   lease record (default 60; 0: never);
//! - `notReady`: the next N eve follow-up POSTs answer `409 session_not_ready`;
//! - `stream404`: the next N eve stream opens answer `404 Session not found.`;
//! - `v27Transition`: `true` to have eve-27 sessions created from now on write the
//!   tool-call family as v26 events inside their lines (eve's transition period);
//! - `noTailIndex`: `true` to answer `includeTailIndex` without the
//!   `x-eve-stream-tail-index` header, as eve did before 0.27.7;
//! - `ignoreStartIndex`: `true` to send eve streams from their first record whatever
//!   `startIndex` asks, as a server that does not know it would.
//! - `sessionIdTokens`: `true` to have eve B sessions created from now on name their
//!   own id as each `session.waiting`'s `continuationToken` (eve 0.31 and later), while
//!   still refusing a token in a follow-up;
//! - `historyExpired`: `true` to answer eve stream requests `410 {code:
//!   "session_expired"}`, as eve does once a session's history is past its retention;
//! - `agents`: `["researcher", "writer"]` to serve one agent per name under eve's
//!   per-agent prefix, and nothing at the bare `/eve/v1` (`[]`: one root agent there);
//!   `agentPaths`: `"new"` (`/eve/<name>/v1`, the default) or `"old"`
//!   (`/eve/agents/<name>/eve/v1`); a session answers only under its own agent (see
//!   [`crate::agents`]);
//! - `noInfoRoute`: `true` to answer eve's info route (`GET <base>/info`) 404, as eve
//!   releases before it did;
//! - `spendPercent`: N to have eve sessions created from now on spend at least N% of
//!   their budget in their first turn (85: past the 80% warning; 110: over the budget;
//!   0: off), as a model run of its own (27: `usage.recorded`; A and B: the cumulative
//!   usage only);
//! - `missionSeed`: N to draw the missions created from now on from N (the n-th from
//!   `"N:n"`, counting again from 0), so a test gets the same missions on every run;
//!   `clear` leaves it;
//! - `delegate`: `true` to have eve sessions created from now on hand one task to a
//!   `researcher` sub-agent before their report (27: a task its call started, as eve 1.x);
//! - `modelFailure`: `true` to have eve sessions created from now on meet a model
//!   failure eve does not retry in their first step: the session ends failed (27: as eve
//!   1.x ends it, `turn.settled` cancelled and `session.ended` failed in one line);
//! - `stranded`: `true` to have every eve session answer a follow-up and a live stream with
//!   eve's `409 {"code": "session_stranded"}` (another eve version built its owner);
//! - `cutAnswers`: N to have the next N eve follow-ups taken and their answers cut halfway,
//!   the connection closed (a client that sends again with the same `idempotencyKey` is
//!   one delivery);
//! - `delegationPause`: `true` to have eve 27 sessions created from now on pause their turn
//!   on a delegated call and resume when it returns (without, as eve 1.x: the call starts a
//!   task, `task.started {startedBy}`, and the turn goes on);
//! - `queueReplies`: `true` to have eve sessions created from now on take a message sent
//!   while a turn runs in a turn of its own once that one ends, as eve B and 1.x do,
//!   instead of steering the running turn;
//! - `approval`: `true` to have eve B and 27 sessions created from now on ask to approve
//!   their first source read (B: `input.requested` of kind `tool-approval`; 27:
//!   `interaction.opened` of kind `approval`), with the options `approve` (`primary`) and
//!   `cancel` (`danger`); a cancel ends the call `rejected`, and a message while it is
//!   pending withdraws it (B: `input.resolved {outcome: "ignored"}`; 27:
//!   `interaction.settled {outcome: "withdrawn", reason: "superseded-by-message"}`);
//! - `signIn`: `true` to have eve B and 27 sessions created from now on ask the person to
//!   sign in to "Sandbox Notes" before their first search (B: `authorization.required`
//!   then `turn.waiting {on: "input"}`; 27: the call `interrupted`
//!   (`authorization-required`), an `interaction.opened` of kind `sign-in`, `turn.paused`).
//!   Its link is the sandbox's own `GET /_sandbox/sign-in/{session}/{attempt}`: visiting
//!   it is the browser's callback, after which the turn goes on to its report. Nothing is
//!   ever POSTed for it; every POST a session receives is logged
//!   (`GET /_sandbox/posts?sessionId=…`);
//! - `signInSuperseded`: with `signIn`, a second attempt replaces the first at once (the
//!   first ends `failed`, "Superseded by a newer authorization attempt."; its link then
//!   answers 410);
//! - `childRoute`: where a delegated sub-agent's stream is served: `"both"` (the
//!   default: the parent's route `/eve/v1/session/{parent}/subagents/{callId}/{child}/stream`
//!   and the child's own `/eve/v1/session/{child}/stream`), `"parent"` (only the parent's,
//!   and sessions created from now on name it as the child's `streamPath`, as eve does
//!   for a remote child) or `"own"` (only the child's own); the other answers
//!   `404 Subagent stream not found.` / `404 Session not found.`;
//! - `heldShape`: how eve B sessions created from now on hold a turn, for a question and
//!   for a background task alike: `"on"` (the default: `turn.waiting {on}`, eve 0.70 and
//!   later), `"no-on"` (`turn.waiting` with no `on`), `"completed-held"`
//!   (`turn.completed {held: true}` then `session.waiting`, after which the same turn goes
//!   on) or `"waiting-in-turn"` (`session.waiting` inside the open turn);
//! - `backgroundTask`: `true` to have eve B sessions created from now on start a
//!   background task (`task.started`) before their report and hold the turn on it for
//!   about 1.5 s (in the `heldShape`); it settles and the turn goes on by itself;
//! - `taskResult`: `true` to have eve B sessions created from now on deliver a background
//!   task's result about 1.5 s after their first turn's `session.waiting`: a result turn
//!   with `message.received {kind: "task.result", taskIds}` and a short reply;
//! - `agentFile`: `true` to have eve 27 sessions created from now on end each reply with
//!   two files the agent made (`content.completed {kind: "file"}`), one at an https URL
//!   and one at a `data:` URL (which a client must not make a link);
//! - `streamContentLength`: N > 0 to have every stream response (SSE and eve) declare
//!   `Content-Length: N` and end after N bytes, inside a record (0: off); each counts in
//!   `cutsMade`.
//!
//! `dropStreamAfter`, `cutRandom`, `tinyChunks` and `crlf` apply to eve streams too,
//! counting records (lines) instead of events.

use crate::auth::{bearer, error, error_with};
use crate::{
    ChildRoute, CiteShape, CiteStyle, ErrorFamily, EventIds, Failure, HeldShape, MissionProtocol,
    ParseShape, Placement, Shared,
};
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FaultRequest {
    clear: Option<bool>,
    latency_ms: Option<u64>,
    drop_stream_after: Option<u64>,
    tiny_chunks: Option<bool>,
    crlf: Option<bool>,
    slow_drip_ms: Option<u64>,
    storm: Option<Storm>,
    fail: Option<Fail>,
    event_ids: Option<String>,
    completion_event: Option<String>,
    #[serde(rename = "doneStatus204")]
    done_status_204: Option<bool>,
    #[serde(rename = "stream429")]
    stream_429: Option<u64>,
    #[serde(rename = "stream429RetryAfter")]
    stream_429_retry_after: Option<u64>,
    #[serde(rename = "stream429RetryAfterDate")]
    stream_429_retry_after_date: Option<bool>,
    silence_ms: Option<u64>,
    silence_after: Option<u64>,
    parse_shape: Option<String>,
    success_status: Option<u16>,
    html_errors: Option<bool>,
    read_refused: Option<bool>,
    cut_random: Option<CutRandom>,
    mission_protocol: Option<String>,
    lease_seconds: Option<u64>,
    not_ready: Option<u64>,
    #[serde(rename = "stream404")]
    stream_404: Option<u64>,
    #[serde(rename = "v27Transition")]
    v27_transition: Option<bool>,
    no_tail_index: Option<bool>,
    ignore_start_index: Option<bool>,
    stream_content_length: Option<u64>,
    delegate: Option<bool>,
    model_failure: Option<bool>,
    queue_replies: Option<bool>,
    delegation_pause: Option<bool>,
    stranded: Option<bool>,
    cut_answers: Option<u64>,
    approval: Option<bool>,
    sign_in: Option<bool>,
    sign_in_superseded: Option<bool>,
    child_route: Option<String>,
    history_expired: Option<bool>,
    session_id_tokens: Option<bool>,
    agents: Option<Vec<String>>,
    agent_paths: Option<String>,
    no_info_route: Option<bool>,
    spend_percent: Option<u64>,
    mission_seed: Option<u64>,
    held_shape: Option<String>,
    background_task: Option<bool>,
    task_result: Option<bool>,
    agent_file: Option<bool>,
    require_references: Option<bool>,
    cite_style: Option<String>,
    placement: Option<String>,
    cite_shape: Option<String>,
    cite_notes: Option<bool>,
    scrub_metadata: Option<bool>,
    unseeded: Option<bool>,
    error_family: Option<String>,
    front_limit_bytes: Option<u64>,
    slow_cite_ms: Option<u64>,
    hostile_document: Option<String>,
}

/// A named value of one of the variants' enums, or the 400 naming the field.
fn named<T>(
    value: Option<&str>,
    field: &str,
    parse: fn(&str) -> Option<T>,
    allowed: &str,
) -> Result<Option<T>, Response> {
    match value {
        None => Ok(None),
        Some(name) => parse(name)
            .map(Some)
            .ok_or_else(|| invalid(field, &format!("{field} {name:?} is not one of {allowed}."))),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CutRandom {
    seed: u64,
    count: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Storm {
    count: u64,
    retry_after: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Fail {
    /// 1 = the next request.
    nth: u64,
    /// "500" or "malformed_json".
    kind: String,
}

fn invalid(field: &str, message: &str) -> Response {
    error_with(
        StatusCode::BAD_REQUEST,
        "invalid_field",
        message,
        serde_json::json!({ "field": field }),
    )
}

pub fn routes() -> axum::Router<Arc<Shared>> {
    axum::Router::new().route("/_sandbox/faults", post(set_faults))
}

async fn set_faults(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(resp) = bearer(&shared, &headers) {
        return resp;
    }
    let req: FaultRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                &format!("Not a fault request: {e}"),
            );
        }
    };
    // Checked before anything changes, so a refused request changes nothing.
    let event_ids = match req.event_ids.as_deref().map(|n| (n, EventIds::parse(n))) {
        None => None,
        Some((_, Some(ids))) => Some(ids),
        Some((name, None)) => {
            return invalid(
                "eventIds",
                &format!("eventIds {name:?} is not one of all, none, some, opaque."),
            );
        }
    };
    let parse_shape = match req
        .parse_shape
        .as_deref()
        .map(|n| (n, ParseShape::parse(n)))
    {
        None => None,
        Some((_, Some(shape))) => Some(shape),
        Some((name, None)) => {
            return invalid(
                "parseShape",
                &format!("parseShape {name:?} is not one of default, alternate, text."),
            );
        }
    };
    let success_status = match req.success_status {
        None => None,
        Some(0) => Some(None),
        Some(code @ 200..=202) => Some(StatusCode::from_u16(code).ok()),
        Some(code) => {
            return invalid(
                "successStatus",
                &format!("successStatus {code} is not 200, 201 or 202 (or 0 for the default)."),
            );
        }
    };
    let protocol = match req
        .mission_protocol
        .as_deref()
        .map(|n| (n, MissionProtocol::parse(n)))
    {
        None => None,
        Some((_, Some(p))) => Some(p),
        Some((name, None)) => {
            return invalid(
                "missionProtocol",
                &format!("missionProtocol {name:?} is not one of legacy, eve-a, eve-b, eve-27."),
            );
        }
    };
    let held_shape = match named(
        req.held_shape.as_deref(),
        "heldShape",
        HeldShape::parse,
        "on, no-on, completed-held, waiting-in-turn",
    ) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let child_route = match named(
        req.child_route.as_deref(),
        "childRoute",
        ChildRoute::parse,
        "both, parent, own",
    ) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let cite_style = match named(
        req.cite_style.as_deref(),
        "citeStyle",
        CiteStyle::parse,
        "library, existing",
    ) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let placement = match named(
        req.placement.as_deref(),
        "placement",
        Placement::parse,
        "end, inside",
    ) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let cite_shape = match named(
        req.cite_shape.as_deref(),
        "citeShape",
        CiteShape::parse,
        "author-year, numeric, bracketed, ibid",
    ) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let error_family = match named(
        req.error_family.as_deref(),
        "errorFamily",
        ErrorFamily::parse,
        "default, plain-error, nested, message, detail, problem, text, html",
    ) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let hostile_document = match named(
        req.hostile_document.as_deref(),
        "hostileDocument",
        crate::cite_variants::HostileDocument::parse_fault,
        "none, bomb, lying-bomb, parent-path, absolute-path, drive-path, symlink",
    ) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let old_paths = match req.agent_paths.as_deref() {
        None => None,
        Some("new") => Some(false),
        Some("old") => Some(true),
        Some(other) => {
            return invalid(
                "agentPaths",
                &format!("agentPaths {other:?} is not one of new, old."),
            );
        }
    };
    if let Some(bad) =
        (req.agents.iter().flatten()).find(|n| !crate::knobs::deployment::Deployment::valid_name(n))
    {
        return invalid(
            "agents",
            &format!("{bad:?} is not an agent name (letters, digits, - and _; not v1 or agents)."),
        );
    }
    if req.spend_percent.is_some_and(|p| p > 1000) {
        return invalid("spendPercent", "spendPercent is at most 1000.");
    }
    if req.silence_after.is_some() && req.silence_ms.is_none() {
        return invalid("silenceAfter", "silenceAfter needs silenceMs.");
    }
    if req.stream_429_retry_after.is_some() && req.stream_429.is_none() {
        return invalid(
            "stream429RetryAfter",
            "stream429RetryAfter needs stream429.",
        );
    }

    let f = &shared.faults;
    if req.clear == Some(true) {
        f.clear();
    }
    if let Some(ids) = event_ids {
        f.set_event_ids(ids);
    }
    f.update_cite_variants(|v| {
        if let Some(on) = req.require_references {
            v.require_references = on;
        }
        if let Some(s) = cite_style {
            v.style = s;
        }
        if let Some(p) = placement {
            v.placement = p;
        }
        if let Some(s) = cite_shape {
            v.shape = s;
        }
        if let Some(on) = req.cite_notes {
            v.notes = on;
        }
        if let Some(on) = req.scrub_metadata {
            v.scrub_metadata = on;
        }
        if let Some(on) = req.unseeded {
            v.unseeded = on;
        }
        if let Some(fam) = error_family {
            v.error_family = fam;
        }
        if let Some(n) = req.front_limit_bytes {
            v.front_limit_bytes = (n > 0).then_some(n);
        }
        if let Some(ms) = req.slow_cite_ms {
            v.slow_cite_ms = ms;
        }
        if let Some(h) = hostile_document {
            v.hostile_document = h;
        }
    });
    if let Some(p) = protocol {
        f.set_mission_protocol(p);
    }
    if let Some(secs) = req.lease_seconds {
        f.set_lease_seconds(secs);
    }
    if let Some(n) = req.not_ready {
        f.set_not_ready(n);
    }
    if let Some(n) = req.stream_404 {
        f.set_stream_404(n);
    }
    if let Some(on) = req.v27_transition {
        f.set_v27_transition(on);
    }
    if let Some(on) = req.no_tail_index {
        f.set_no_tail_index(on);
    }
    if let Some(on) = req.ignore_start_index {
        f.set_ignore_start_index(on);
    }
    if let Some(n) = req.stream_content_length {
        f.set_stream_content_length(n);
    }
    if let Some(on) = req.delegate {
        f.set_delegate(on);
    }
    if let Some(on) = req.model_failure {
        f.set_model_failure(on);
    }
    if let Some(on) = req.queue_replies {
        f.set_queue_replies(on);
    }
    if let Some(on) = req.delegation_pause {
        f.set_delegation_pause(on);
    }
    if let Some(on) = req.stranded {
        f.set_stranded(on);
    }
    if let Some(n) = req.cut_answers {
        f.set_cut_answers(n);
    }
    if let Some(on) = req.approval {
        f.set_approval(on);
    }
    if let Some(on) = req.sign_in {
        f.set_sign_in(on);
    }
    if let Some(on) = req.sign_in_superseded {
        f.set_sign_in_superseded(on);
    }
    if let Some(route) = child_route {
        f.set_child_route(route);
    }
    if let Some(on) = req.history_expired {
        f.set_history_expired(on);
    }
    if let Some(on) = req.session_id_tokens {
        f.set_session_id_tokens(on);
    }
    if req.agents.is_some() || old_paths.is_some() || req.no_info_route.is_some() {
        let mut d = f.deployment();
        if let Some(agents) = req.agents {
            d.agents = agents;
        }
        if let Some(old) = old_paths {
            d.old_paths = old;
        }
        if let Some(on) = req.no_info_route {
            d.no_info_route = on;
        }
        f.set_deployment(d);
    }
    if let Some(seed) = req.mission_seed {
        f.set_mission_seed(seed);
    }
    if let Some(p) = req.spend_percent {
        f.set_spend_percent((p > 0).then_some(p));
    }
    if let Some(shape) = held_shape {
        f.set_held_shape(shape);
    }
    if let Some(on) = req.background_task {
        f.set_background_task(on);
    }
    if let Some(on) = req.agent_file {
        f.set_agent_file(on);
    }
    if let Some(on) = req.task_result {
        f.set_task_result(on);
    }
    if let Some(name) = req.completion_event.as_deref() {
        f.set_completion_event(Some(name));
    }
    if let Some(on) = req.done_status_204 {
        f.set_done_status_204(on);
    }
    if let Some(n) = req.stream_429 {
        f.set_stream_429(n, req.stream_429_retry_after.unwrap_or(1));
    }
    if let Some(on) = req.stream_429_retry_after_date {
        f.set_stream_429_retry_after_date(on);
    }
    if let Some(ms) = req.silence_ms {
        f.set_silence(req.silence_after.unwrap_or(0), Duration::from_millis(ms));
    }
    if let Some(shape) = parse_shape {
        f.set_parse_shape(shape);
    }
    if let Some(status) = success_status {
        f.set_success_status(status);
    }
    if let Some(on) = req.html_errors {
        f.set_html_errors(on);
    }
    if let Some(on) = req.read_refused {
        f.set_read_refused(on);
    }
    if let Some(ms) = req.latency_ms {
        f.set_latency(Duration::from_millis(ms));
    }
    if let Some(n) = req.drop_stream_after {
        f.set_drop_stream_after(n);
    }
    if let Some(on) = req.tiny_chunks {
        f.set_tiny_chunks(on);
    }
    if let Some(on) = req.crlf {
        f.set_crlf(on);
    }
    if let Some(ms) = req.slow_drip_ms {
        f.set_slow_drip(Duration::from_millis(ms));
    }
    if let Some(c) = req.cut_random {
        f.set_cut_random(c.seed, c.count);
    }
    if let Some(s) = req.storm {
        f.set_429_storm(s.count, s.retry_after);
    }
    if let Some(fail) = req.fail {
        let kind = match fail.kind.as_str() {
            "500" => Failure::Status500,
            "malformed_json" => Failure::MalformedJson,
            other => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "invalid_field",
                    &format!("Unknown failure kind {other:?}."),
                );
            }
        };
        // This request itself counts as one; "1" means the request after it.
        f.fail_request(fail.nth, kind);
    }
    // The cuts so far, so a soak test outside the process can count its drops.
    Json(serde_json::json!({"ok": true, "cutsMade": f.cuts_made()})).into_response()
}
