//! The investigation service: the mission message, sessions, cancel, and the typed
//! events of a mission.

pub mod agent;
pub mod attachment;

use crate::error::{Error, ErrorCode, Result};
use crate::keys::ApiKey;
use crate::missions::spend::format_usd;
use crate::net::api::ApiClient;
use crate::net::connection::Connection;
use crate::net::http::RetryPolicy;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What the user asks for. Type and budget type default to the values the
/// contract uses; the budget is the hard maximum in US cents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct MissionSpec {
    pub mission_type: String,
    pub budget_type: String,
    #[ts(type = "number")]
    pub budget_cents: u64,
    pub objective: String,
}

impl MissionSpec {
    pub fn new(objective: impl Into<String>, budget_cents: u64) -> Self {
        Self {
            mission_type: "research".into(),
            budget_type: "fixed".into(),
            budget_cents,
            objective: objective.into(),
        }
    }

    /// Refuses what the service would refuse, with the field named.
    pub fn validate(&self) -> Result<()> {
        for (name, value) in [
            ("Mission type", &self.mission_type),
            ("Budget type", &self.budget_type),
        ] {
            if value.trim().is_empty() {
                return Err(Error::invalid_input(format!("{name} is empty.")));
            }
            if value.chars().any(|c| c == '\n' || c == '\r') {
                return Err(Error::invalid_input(format!("{name} must be on one line.")));
            }
        }
        if self.budget_cents == 0 {
            return Err(Error::invalid_input("The budget must be more than $0.00."));
        }
        if self.objective.trim().is_empty() {
            return Err(Error::invalid_input(
                "The objective is empty: say what the mission should find out.",
            ));
        }
        Ok(())
    }

    /// The spec a [`Self::message`] was made from, read back (a mission's first message,
    /// shown as its objective and budget); `None` for any other text.
    pub fn read(message: &str) -> Option<MissionSpec> {
        let mut spec = MissionSpec::new("", 0);
        spec.mission_type.clear();
        spec.budget_type.clear();
        let mut lines = message.lines();
        // The labelled lines, in any order and any of them left out (older builds sent
        // fewer), up to the objective's; anything else is not a spec's message.
        let first = loop {
            let line = lines.next()?.trim_end();
            if let Some(v) = line.strip_prefix("MISSION TYPE:") {
                spec.mission_type = v.trim().to_owned();
            } else if let Some(v) = line.strip_prefix("MISSION BUDGET TYPE:") {
                spec.budget_type = v.trim().to_owned();
            } else if let Some(v) = line.strip_prefix("MISSION BUDGET (hard maximum):") {
                let v = v.trim();
                let v = v.strip_suffix("USD").unwrap_or(v);
                spec.budget_cents = crate::missions::spend::parse_usd(v).ok()?;
            } else if let Some(v) = line.strip_prefix("MISSION OBJECTIVE:") {
                break v.trim().to_owned();
            } else {
                return None;
            }
        };
        let rest: Vec<&str> = lines.collect();
        spec.objective = format!("{first}\n{}", rest.join("\n")).trim().to_owned();
        (!spec.objective.is_empty()).then_some(spec)
    }

    /// The exact message the service receives: four labelled lines, a blank line,
    /// then the objective.
    pub fn message(&self) -> Result<String> {
        self.validate()?;
        Ok(format!(
            "MISSION TYPE: {}\nMISSION BUDGET TYPE: {}\nMISSION BUDGET (hard maximum): ${} USD\nMISSION OBJECTIVE:\n\n{}",
            self.mission_type.trim(),
            self.budget_type.trim(),
            format_usd(self.budget_cents),
            self.objective.trim()
        ))
    }
}

/// A started mission.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct Session {
    pub session_id: String,
    pub continuation_token: Option<String>,
    /// Fields the contract does not name, as the service sent them.
    #[ts(type = "Record<string, unknown>")]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// The service's answer to a cancel request. The turn is not cancelled until the
/// stream says it ended cancelled. Any 2xx is an acceptance: the seeds answer
/// `{ok, sessionId, status: "accepted"}`, eve 1.x `{ok, sessionId, deliveryId}` (also when
/// no turn ran: that delivery then settles `ignored` on the stream).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct CancelAck {
    pub ok: bool,
    pub session_id: Option<String>,
    /// `accepted` (the seeds), `no_active_turn` (eve before 1.0), or none (eve 1.x).
    pub status: Option<String>,
    /// eve 1.x: the cancel's own delivery.
    pub delivery_id: Option<String>,
    /// The service said there was no turn to cancel: nothing will come on the stream.
    pub nothing_to_cancel: bool,
}

impl CancelAck {
    /// Whatever a 2xx answer held: a JSON object read by name, anything else as nothing.
    pub fn read(answer: &serde_json::Value) -> Self {
        let s = |k: &str| answer.get(k).and_then(|v| v.as_str()).map(str::to_owned);
        let status = s("status");
        CancelAck {
            ok: answer.get("ok").and_then(|v| v.as_bool()).unwrap_or(true),
            session_id: s("sessionId"),
            nothing_to_cancel: status.as_deref() == Some("no_active_turn"),
            status,
            delivery_id: s("deliveryId"),
        }
    }

    /// What a person reads: "accepted", or what the service said.
    pub fn said(&self) -> &str {
        if self.nothing_to_cancel {
            "nothing to cancel: no turn is active"
        } else {
            self.status.as_deref().unwrap_or("accepted")
        }
    }
}

/// How a server takes answers to what it asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerForm {
    /// eve 1.x (stream 27): `answers: [{interactionId, optionId | text}]`.
    Answers,
    /// eve before 1.0 (streams up to 26): `inputResponses: [{requestId, optionId | text}]`.
    InputResponses,
}

impl AnswerForm {
    /// The form of the stream version a mission's stream last named; a mission never
    /// read yet is taken to be on today's eve.
    pub fn of_stream(version: Option<u32>) -> Self {
        match version {
            Some(v) if v < 27 => AnswerForm::InputResponses,
            _ => AnswerForm::Answers,
        }
    }

    fn field(self) -> &'static str {
        match self {
            AnswerForm::Answers => "answers",
            AnswerForm::InputResponses => "inputResponses",
        }
    }

    fn other(self) -> Self {
        match self {
            AnswerForm::Answers => AnswerForm::InputResponses,
            AnswerForm::InputResponses => AnswerForm::Answers,
        }
    }

    fn body(self, answers: &[InputResponse]) -> serde_json::Value {
        let id = match self {
            AnswerForm::Answers => "interactionId",
            AnswerForm::InputResponses => "requestId",
        };
        answers
            .iter()
            .map(|a| {
                let mut o = serde_json::Map::new();
                o.insert(id.into(), a.request_id.clone().into());
                if let Some(opt) = &a.option_id {
                    o.insert("optionId".into(), opt.clone().into());
                }
                if let Some(text) = &a.text {
                    o.insert("text".into(), text.clone().into());
                }
                serde_json::Value::Object(o)
            })
            .collect()
    }

    /// A 400 that names this form's field as unknown: the server takes the other one
    /// (eve lists what it accepts: "Unknown field 'inputResponses'. Accepted fields: …").
    fn refused_by(self, e: &Error) -> bool {
        e.status == Some(400)
            && e.message.contains("Unknown field")
            && e.message.contains(&format!("'{}'", self.field()))
    }
}

/// How a follow-up is sent: the form answers take, and whether the server takes an
/// `idempotencyKey` (eve 1.x refuses fields it does not know, so only stream 27 gets one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    pub answers: AnswerForm,
    pub idempotency: bool,
    /// The stream named its eve version: the turn that takes a message repeats it.
    pub eve: bool,
}

impl Dialect {
    pub fn of_stream(version: Option<u32>) -> Self {
        Dialect {
            answers: AnswerForm::of_stream(version),
            idempotency: version.is_some_and(|v| v >= 27),
            eve: version.is_some(),
        }
    }
}

/// One answer to a question or approval the service asked: one of the options it listed,
/// or free text where it allows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct InputResponse {
    pub request_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub option_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text: Option<String>,
}

/// What a waiting session is sent.
#[derive(Debug, Clone, PartialEq)]
pub enum FollowUp {
    /// The person's next message (while a turn runs, eve takes it as steering).
    Message(String),
    /// Answers to the requests the session holds its turn for.
    Answers(Vec<InputResponse>),
    /// The person's next message with documents attached: sent as AI SDK `UserContent`
    /// ([`crate::missions::client::attachment::user_content`]).
    Attached(String, Vec<crate::missions::client::attachment::Attachment>),
}

/// The service took a follow-up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct Delivered {
    /// eve's id for this message, which its stream's records name: kept when given.
    pub delivery_id: Option<String>,
}

/// A key no other follow-up has: the clock, a count and a per-process random hasher
/// (std's `RandomState` is seeded from the OS), so no dependency is needed for it.
fn idempotency_key() -> String {
    use std::hash::{BuildHasher, Hasher};
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let half = |salt: u64| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(nanos);
        h.write_u64(n);
        h.write_u64(salt);
        h.finish()
    };
    format!("casebook-{:016x}{:016x}", half(1), half(2))
}

/// How long a follow-up answered `409 session_not_ready` is tried again (eve's own client
/// retries about 20 s).
pub const NOT_READY_FOR: std::time::Duration = std::time::Duration::from_secs(20);

/// The investigation service, with one key.
#[derive(Clone, Debug)]
pub struct InvestigationClient {
    pub(crate) api: ApiClient,
    /// The path the session routes hang under (see [`crate::missions::client::agent`]).
    base: String,
}

/// The path of `tail` under one session. The id becomes exactly one path segment: ids that
/// would change the path (`.`, `..`, a `/`) are refused before any request, and every other
/// byte outside RFC 3986's unreserved set is percent-encoded, so an id the service chose with
/// spaces, `?`, `#`, `%`, `\` or non-ASCII still reaches that session and no other.
pub(crate) fn session_path(id: &str, tail: &str) -> Result<String> {
    session_path_under(crate::missions::client::agent::DEFAULT_API_BASE, id, tail)
}

/// [`session_path`] under the API base `base`.
pub(crate) fn session_path_under(base: &str, id: &str, tail: &str) -> Result<String> {
    if id.is_empty() {
        return Err(Error::invalid_input("The session id is empty."));
    }
    if id == "." || id == ".." || id.contains('/') {
        return Err(Error::invalid_input(format!(
            "\"{id}\" is not a session id: it would change the request's path."
        )));
    }
    Ok(format!("{base}/session/{}{tail}", encode_segment(id)))
}

/// `id` as one URL path segment (or fragment part): every byte outside RFC 3986's
/// unreserved set percent-encoded, so decoding gives the id back exactly.
pub fn encode_segment(id: &str) -> String {
    let mut segment = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            segment.push(char::from(b));
        } else {
            segment.push_str(&format!("%{b:02X}"));
        }
    }
    segment
}

impl InvestigationClient {
    pub fn new(conn: Connection, key: ApiKey) -> Self {
        Self {
            api: ApiClient::new(conn, key),
            base: crate::missions::client::agent::DEFAULT_API_BASE.to_owned(),
        }
    }

    /// The same service under another API base (already checked by
    /// [`crate::missions::client::agent::parse_api_base`]).
    pub fn at_base(mut self, base: &str) -> Self {
        self.base = base.to_owned();
        self
    }

    /// The API base the session routes hang under (`/eve/v1` by default).
    pub fn api_base(&self) -> &str {
        &self.base
    }

    fn path(&self, id: &str, tail: &str) -> Result<String> {
        session_path_under(&self.base, id, tail)
    }

    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.api.retry = retry;
        self
    }

    /// `POST <base>/session`.
    pub async fn create_session(&self, spec: &MissionSpec) -> Result<Session> {
        self.create_session_with(spec, serde_json::Map::new()).await
    }

    /// `POST <base>/session` with fields besides `message` (the sandbox's `paceMs`
    /// and `events` extensions). `message` always comes from `spec`.
    pub async fn create_session_with(
        &self,
        spec: &MissionSpec,
        mut extra: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Session> {
        let message = spec.message()?;
        extra.insert("message".into(), message.into());
        let (answer, headers) = self
            .api
            .post_json_with_headers(
                &format!("{}/session", self.base),
                "Start mission",
                serde_json::Value::Object(extra),
            )
            .await?;
        let mut obj = match answer {
            serde_json::Value::Object(obj) => obj,
            // eve names the session in a header too; a body is then not needed.
            serde_json::Value::Null => serde_json::Map::new(),
            _ => {
                return Err(Error::new(
                    ErrorCode::Protocol,
                    "Start mission: the answer is not a JSON object.",
                ));
            }
        };
        let from_header = headers
            .get("x-eve-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned);
        let session_id = obj
            .remove("sessionId")
            .and_then(|v| v.as_str().map(str::to_owned))
            .filter(|v| !v.is_empty())
            .or(from_header)
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::Protocol,
                    "Start mission: the answer names no session (no sessionId, no x-eve-session-id).",
                )
            })?;
        let continuation_token = obj
            .remove("continuationToken")
            .and_then(|v| v.as_str().map(str::to_owned));
        Ok(Session {
            session_id,
            continuation_token,
            extra: obj,
        })
    }

    /// `POST <base>/session/{id}/cancel`, guarded to `turn_id` when the active turn is
    /// known (eve cancels nothing if another turn is active by then). Any 2xx is taken.
    pub async fn cancel(&self, session_id: &str, turn_id: Option<&str>) -> Result<CancelAck> {
        let path = self.path(session_id, "/cancel")?;
        let body = match turn_id.filter(|t| !t.is_empty()) {
            Some(t) => serde_json::json!({ "turnId": t }),
            None => serde_json::json!({}),
        };
        let answer = self.api.post_json_lenient(&path, "Cancel", body).await?;
        Ok(CancelAck::read(&answer))
    }

    /// `POST <base>/session/{id}`: the next message, or answers, to a session, in the
    /// dialect of the stream it last spoke ([`Dialect`]). The newest `continuationToken`
    /// goes with it only when the service gave one (servers that gave none refuse it).
    /// `409 session_not_ready` is tried again for [`NOT_READY_FOR`]; `409
    /// session_not_active` means the session has ended. With an `idempotencyKey`, a
    /// request whose connection dropped before the answer is sent again under the same
    /// key: eve delivers it once.
    pub async fn follow_up(
        &self,
        session_id: &str,
        follow_up: &FollowUp,
        continuation_token: Option<&str>,
        dialect: Dialect,
    ) -> Result<Delivered> {
        let path = self.path(session_id, "")?;
        let mut body = serde_json::Map::new();
        let mut form = dialect.answers;
        match follow_up {
            FollowUp::Message(text) => {
                if text.trim().is_empty() {
                    return Err(Error::invalid_input("The message is empty."));
                }
                body.insert("message".into(), text.clone().into());
            }
            FollowUp::Attached(text, files) => {
                // A file alone is a message; no file is the plain text message.
                let message = if files.is_empty() {
                    if text.trim().is_empty() {
                        return Err(Error::invalid_input("The message is empty."));
                    }
                    text.clone().into()
                } else {
                    crate::missions::client::attachment::user_content(text, files)?
                };
                body.insert("message".into(), message);
            }
            FollowUp::Answers(answers) => {
                if answers.is_empty() {
                    return Err(Error::invalid_input("There is no answer to send."));
                }
                for a in answers {
                    if a.option_id.is_some() == a.text.is_some() {
                        return Err(Error::invalid_input(format!(
                            "The answer to {} needs one option or a text, not both or neither.",
                            a.request_id
                        )));
                    }
                }
                body.insert(form.field().into(), form.body(answers));
            }
        }
        if let Some(t) = continuation_token.filter(|t| !t.is_empty()) {
            body.insert("continuationToken".into(), t.into());
        }
        if dialect.idempotency {
            body.insert("idempotencyKey".into(), idempotency_key().into());
        }
        let what = match follow_up {
            FollowUp::Message(_) | FollowUp::Attached(..) => "Reply",
            FollowUp::Answers(_) => "Answer",
        };
        let started = std::time::Instant::now();
        let mut pause = std::time::Duration::from_millis(250);
        // Each of these is tried once: the other answer form, no idempotency key, a resend.
        let (mut switched, mut unkeyed, mut resent) = (false, false, false);
        loop {
            match self
                .api
                .post_json_lenient(&path, what, serde_json::Value::Object(body.clone()))
                .await
            {
                Ok(answer) => {
                    return Ok(Delivered {
                        delivery_id: answer
                            .get("deliveryId")
                            .and_then(|v| v.as_str())
                            .map(str::to_owned),
                    });
                }
                Err(e)
                    if e.service_code() == Some("session_not_ready")
                        && started.elapsed() < NOT_READY_FOR =>
                {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(std::time::Duration::from_secs(2));
                }
                Err(e) if e.service_code() == Some("session_not_active") => {
                    return Err(Error::new(
                        ErrorCode::Conflict,
                        "This mission's session has ended: it takes no more messages. Start a new mission to go on.",
                    )
                    .with_status(409)
                    .with_service_code("session_not_active"));
                }
                Err(e) if e.service_code() == Some("session_stranded") => {
                    return Err(Error::new(
                        ErrorCode::Conflict,
                        crate::missions::lifecycle::STRANDED,
                    )
                    .with_status(409)
                    .with_service_code("session_stranded"));
                }
                Err(e) if !switched && form.refused_by(&e) => {
                    let FollowUp::Answers(list) = follow_up else {
                        return Err(e);
                    };
                    body.remove(form.field());
                    form = form.other();
                    body.insert(form.field().into(), form.body(list));
                    switched = true;
                }
                Err(e)
                    if !unkeyed
                        && body.contains_key("idempotencyKey")
                        && e.status == Some(400)
                        && e.message.contains("'idempotencyKey'") =>
                {
                    body.remove("idempotencyKey");
                    unkeyed = true;
                }
                Err(e) if !resent && e.is_network() && body.contains_key("idempotencyKey") => {
                    resent = true;
                }
                Err(e) => return Err(e),
            }
        }
    }

    pub(crate) fn stream_path(&self, session_id: &str) -> Result<String> {
        self.path(session_id, "/stream")
    }
}

impl InvestigationClient {
    /// `GET <base>/info`. `None` when the server has no info route (404 or 405: eve before
    /// it had one, or a service that is not eve); an error when the base serves nothing
    /// Casebook can read or refuses the key.
    pub async fn agent_info(&self) -> Result<Option<crate::missions::client::agent::AgentInfo>> {
        let what = "Agent info";
        let path = format!("{}/info", self.api_base());
        let resp = self
            .api
            .conn
            .authed(reqwest::Method::GET, &path, &self.api.key)
            .header(reqwest::header::ACCEPT, "application/json")
            .timeout(crate::net::http::REQUEST_TIMEOUT)
            .send()
            .await
            .map_err(crate::net::http::network_error)
            .map_err(|e| self.api.key.scrub(e))?;
        if matches!(resp.status().as_u16(), 404 | 405) {
            return Ok(None);
        }
        if !resp.status().is_success() {
            return Err(self
                .api
                .key
                .scrub(crate::net::http::error_from(resp, what).await));
        }
        let bytes = crate::net::http::read_limited(
            resp,
            crate::missions::client::agent::MAX_INFO_BYTES,
            what,
        )
        .await?;
        let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
            Error::new(
                ErrorCode::Protocol,
                format!("{what}: the answer is not JSON ({e})."),
            )
        })?;
        if !v.is_object() {
            return Err(Error::new(
                ErrorCode::Protocol,
                format!("{what}: the answer is not a JSON object."),
            ));
        }
        Ok(Some(crate::missions::client::agent::AgentInfo::read(
            self.api_base(),
            &v,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_has_the_four_labelled_lines_then_the_objective() {
        let spec = MissionSpec::new("  Does X cause Y?\nLook at trials.  ", 2550);
        assert_eq!(
            spec.message().unwrap(),
            "MISSION TYPE: research\nMISSION BUDGET TYPE: fixed\nMISSION BUDGET (hard maximum): $25.50 USD\nMISSION OBJECTIVE:\n\nDoes X cause Y?\nLook at trials."
        );
        let back = MissionSpec::read(&spec.message().unwrap()).unwrap();
        assert_eq!(back.objective, "Does X cause Y?\nLook at trials.");
        assert_eq!(
            (back.budget_cents, back.mission_type.as_str()),
            (2550, "research")
        );
        assert_eq!(back.budget_type, "fixed");
        assert_eq!(MissionSpec::read("And in Europe?"), None);
        assert_eq!(
            MissionSpec::read("MISSION TYPE: x\nMISSION BUDGET TYPE: y"),
            None
        );
    }

    #[test]
    fn bad_specs_are_refused() {
        let ok = MissionSpec::new("Find out", 100);
        for (what, spec) in [
            (
                "empty objective",
                MissionSpec {
                    objective: " \n ".into(),
                    ..ok.clone()
                },
            ),
            (
                "zero budget",
                MissionSpec {
                    budget_cents: 0,
                    ..ok.clone()
                },
            ),
            (
                "line break in type",
                MissionSpec {
                    mission_type: "re\nsearch".into(),
                    ..ok.clone()
                },
            ),
            (
                "line break in budget type",
                MissionSpec {
                    budget_type: "fixed\r".into(),
                    ..ok.clone()
                },
            ),
            (
                "empty type",
                MissionSpec {
                    mission_type: "".into(),
                    ..ok.clone()
                },
            ),
        ] {
            assert_eq!(
                spec.message().err().map(|e| e.code),
                Some(ErrorCode::InvalidInput),
                "{what}"
            );
        }
    }

    #[test]
    fn session_ids_cannot_change_the_path() {
        for bad in ["", ".", "..", "../x", "a/b", "/"] {
            assert_eq!(
                session_path(bad, "/stream").unwrap_err().code,
                ErrorCode::InvalidInput,
                "{bad}"
            );
        }
    }

    #[test]
    fn other_session_ids_are_one_encoded_segment() {
        for (id, path) in [
            ("ses_abc-1.2~", "/eve/v1/session/ses_abc-1.2~/stream"),
            ("a b?c", "/eve/v1/session/a%20b%3Fc/stream"),
            ("x#y%2e\\z", "/eve/v1/session/x%23y%252e%5Cz/stream"),
            ("...", "/eve/v1/session/.../stream"),
            ("é", "/eve/v1/session/%C3%A9/stream"),
        ] {
            assert_eq!(session_path(id, "/stream").unwrap(), path, "{id}");
        }
        // The joined URL keeps the segment as it is: no dot-segment folding, no decoding.
        let conn = Connection::new("https://x.org/base").unwrap();
        for id in ["a b?c", "%2e%2e", "...", "x\\..\\y"] {
            let url = conn.url(&session_path(id, "/cancel").unwrap());
            let segments: Vec<_> = url.path_segments().unwrap().collect();
            assert_eq!(segments.len(), 6, "{id}: {url}");
            assert_eq!(segments[5], "cancel", "{id}: {url}");
        }
    }
}
