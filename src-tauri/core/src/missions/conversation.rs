//! A mission read as the conversation it is: the person's messages, the assistant's
//! replies assembled from their deltas, and the questions the session holds its turn for.
//! Built from the stored records, which stay the truth; the same records always give the
//! same conversation, whole or as they arrive.
//!
//! eve's two vocabularies read alike here: up to stream version 26, `message.received`,
//! `message.appended` deltas closed by `message.completed` (`finishReason: "tool-calls"`
//! marks narration before a tool call), `input.requested` answered by `input.resolved`;
//! in 27, `delivery.consumed`, `content.delta` progress closed by `content.completed`
//! (`phase`), `interaction.opened` settled by `interaction.settled`.

use crate::missions::client::MissionEvent;
use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One message of the conversation.
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

/// An option the service listed for a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct RequestOption {
    pub id: String,
    pub label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
}

/// A question, approval or budget prompt the session holds its turn for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
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
}

/// A sign-in the mission waits for: where to go, the code to type, until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct SignIn {
    /// What to sign in to (eve's `name`).
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub user_code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub expires_at: Option<String>,
}

/// The conversation so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct Conversation {
    pub messages: Vec<Message>,
    pub pending: Vec<PendingRequest>,
    /// Sign-ins asked for and not completed yet.
    pub sign_ins: Vec<SignIn>,
    /// The message each streaming part writes into (v26: turn and step; 27: part id).
    #[serde(skip)]
    #[ts(skip)]
    open_parts: Vec<(String, usize)>,
}

impl Conversation {
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a MissionEvent>) -> Self {
        let mut c = Self::default();
        for e in events {
            c.apply(e);
        }
        c
    }

    /// Takes one record into account.
    pub fn apply(&mut self, e: &MissionEvent) {
        let d = &e.data;
        let s = |k: &str| d.get(k).and_then(Value::as_str);
        match e.event.as_str() {
            "message.received" if s("kind").is_none_or(|k| k == "message") => {
                if let Some(text) = s("message").or_else(|| text_of_parts(d.get("parts"))) {
                    self.push(Role::User, text.to_owned(), false);
                }
            }
            "delivery.consumed" => {
                if let Some(text) = text_of_parts(d.get("parts")) {
                    self.push(Role::User, text.to_owned(), false);
                }
            }
            "message.appended" => {
                let key = step_key(d);
                let at = self.part(&key);
                let m = &mut self.messages[at];
                if let Some(so_far) = s("messageSoFar") {
                    m.text = so_far.to_owned();
                } else if let Some(delta) = s("messageDelta") {
                    m.text.push_str(delta);
                }
            }
            "message.completed" => {
                let key = step_key(d);
                let at = self.part(&key);
                self.close(&key);
                let m = &mut self.messages[at];
                if let Some(whole) = s("message") {
                    m.text = whole.to_owned();
                }
                m.narration = s("finishReason") == Some("tool-calls");
                m.open = false;
            }
            "content.delta" if s("kind").is_none_or(|k| k == "text") => {
                let Some(part) = s("partId") else { return };
                let key = format!("part:{part}");
                // A part announced as reasoning, or another kind, never opened a message.
                if s("kind").is_none() && !self.open_parts.iter().any(|(k, _)| *k == key) {
                    return;
                }
                let at = self.part(&key);
                if let Some(delta) = s("delta") {
                    self.messages[at].text.push_str(delta);
                }
            }
            "content.completed" if s("kind") == Some("text") => {
                let Some(part) = s("partId") else { return };
                let key = format!("part:{part}");
                let at = self.part(&key);
                self.close(&key);
                let m = &mut self.messages[at];
                if let Some(whole) = d.get("value").and_then(Value::as_str) {
                    m.text = whole.to_owned();
                }
                m.narration = s("phase") != Some("reply");
                m.open = false;
            }
            "input.requested" => {
                for r in d
                    .get("requests")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(p) = request_of(r, r.get("requestId")) {
                        self.pending.push(p);
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
                        self.pending.retain(|p| p.request_id != id);
                    }
                }
            }
            "interaction.opened" => {
                let request = d.get("request");
                if let Some(sign_in) = request.and_then(|r| r.get("signIn")) {
                    let f = |k: &str| sign_in.get(k).and_then(Value::as_str).map(str::to_owned);
                    self.sign_ins.push(SignIn {
                        name: f("displayName")
                            .or_else(|| f("name"))
                            .unwrap_or_else(|| "a service".into()),
                        description: request
                            .and_then(|r| r.get("prompt"))
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                        url: f("url"),
                        user_code: f("userCode"),
                        expires_at: f("expiresAt"),
                    });
                }
                if let Some(p) = request.and_then(|r| request_of(r, d.get("interactionId"))) {
                    self.pending.push(p);
                }
            }
            "interaction.settled" => {
                if let Some(id) = s("interactionId") {
                    self.pending.retain(|p| p.request_id != id);
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
                self.sign_ins.retain(|x| x.name != name);
                self.sign_ins.push(SignIn {
                    name,
                    description: s("description").map(str::to_owned),
                    url: a("url"),
                    user_code: a("userCode"),
                    expires_at: a("expiresAt"),
                });
            }
            "authorization.completed" => {
                if let Some(name) = s("name") {
                    self.sign_ins.retain(|x| x.name != name);
                }
            }
            // A cancelled turn withdraws what it asked, sign-ins included (eve 0.70).
            "turn.cancelled" => {
                self.pending.clear();
                self.sign_ins.clear();
            }
            "turn.settled" if s("outcome") == Some("cancelled") => {
                self.pending.clear();
                self.sign_ins.clear();
            }
            _ => {}
        }
    }

    /// The last assistant message that is a reply, not narration: the report.
    pub fn last_reply(&self) -> Option<&Message> {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant && !m.narration && !m.open)
    }

    fn push(&mut self, role: Role, text: String, open: bool) -> usize {
        self.messages.push(Message {
            role,
            text,
            narration: false,
            open,
        });
        self.messages.len() - 1
    }

    /// The message `key` streams into, opened if new.
    fn part(&mut self, key: &str) -> usize {
        if let Some((_, at)) = self.open_parts.iter().find(|(k, _)| k == key) {
            return *at;
        }
        let at = self.push(Role::Assistant, String::new(), true);
        // Parts close as they complete; a few stay open only if their completion was lost.
        if self.open_parts.len() >= 64 {
            self.open_parts.remove(0);
        }
        self.open_parts.push((key.to_owned(), at));
        at
    }

    fn close(&mut self, key: &str) {
        self.open_parts.retain(|(k, _)| k != key);
    }
}

/// Where a v26 message streams: its turn and step.
fn step_key(d: &Value) -> String {
    let turn = d
        .get("turnId")
        .and_then(Value::as_str)
        .or_else(|| d.pointer("/scope/turnId").and_then(Value::as_str))
        .unwrap_or("");
    let step = d.get("stepIndex").and_then(Value::as_u64).unwrap_or(0);
    format!("step:{turn}:{step}")
}

fn text_of_parts(parts: Option<&Value>) -> Option<&str> {
    parts?.as_array()?.iter().find_map(|p| {
        let kind = p.get("kind").or_else(|| p.get("type"))?.as_str()?;
        (kind == "text").then(|| p.get("text")?.as_str()).flatten()
    })
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(name: &str, data: Value) -> MissionEvent {
        let mut e = MissionEvent::new(None, name.into(), "null");
        e.data = data;
        e
    }

    #[test]
    fn v26_deltas_make_one_message_and_narration_is_told_from_the_reply() {
        let t = "t1";
        let events = vec![
            ev(
                "message.received",
                serde_json::json!({"turnId": t, "message": "Why?"}),
            ),
            ev(
                "message.appended",
                serde_json::json!({"turnId": t, "stepIndex": 0, "messageDelta": "Let me "}),
            ),
            ev(
                "message.appended",
                serde_json::json!({"turnId": t, "stepIndex": 0, "messageDelta": "search. “é” 🦀"}),
            ),
            ev(
                "message.completed",
                serde_json::json!({"turnId": t, "stepIndex": 0, "message": "Let me search. “é” 🦀", "finishReason": "tool-calls"}),
            ),
            ev(
                "message.appended",
                serde_json::json!({"turnId": t, "stepIndex": 1, "messageDelta": "Because"}),
            ),
            ev(
                "message.completed",
                serde_json::json!({"turnId": t, "stepIndex": 1, "message": "Because.", "finishReason": "stop"}),
            ),
        ];
        let c = Conversation::from_events(&events);
        let got: Vec<_> = c
            .messages
            .iter()
            .map(|m| (m.role, m.text.as_str(), m.narration, m.open))
            .collect();
        assert_eq!(
            got,
            [
                (Role::User, "Why?", false, false),
                (Role::Assistant, "Let me search. “é” 🦀", true, false),
                (Role::Assistant, "Because.", false, false),
            ]
        );
        assert_eq!(c.last_reply().unwrap().text, "Because.");
        // Grows record by record: half way, the reply is open with what streamed.
        let c = Conversation::from_events(&events[..5]);
        assert_eq!(c.messages[2].text, "Because");
        assert!(c.messages[2].open);
    }

    #[test]
    fn requests_are_pending_until_resolved_or_cancelled() {
        let asked = ev(
            "input.requested",
            serde_json::json!({"requests": [{"requestId": "r1", "kind": "question", "prompt": "Which city?",
                "options": [{"id": "nyc", "label": "New York"}, {"id": "la", "label": "Los Angeles"}], "allowFreeform": true}]}),
        );
        let mut c = Conversation::from_events([&asked]);
        assert_eq!(c.pending.len(), 1);
        assert_eq!(c.pending[0].options[1].label, "Los Angeles");
        assert!(c.pending[0].allow_freeform);
        c.apply(&ev(
            "input.resolved",
            serde_json::json!({"resolutions": [{"requestId": "r1", "outcome": "answered"}]}),
        ));
        assert!(c.pending.is_empty());
        let mut c = Conversation::from_events([&asked]);
        c.apply(&ev("turn.cancelled", serde_json::json!({})));
        assert!(c.pending.is_empty());
    }

    #[test]
    fn a_sign_in_shows_its_link_code_and_expiry_until_it_completes() {
        let mut c = Conversation::from_events([&ev(
            "authorization.required",
            serde_json::json!({"name": "drive", "description": "Sign in to Drive",
                "authorization": {"url": "https://example.org/device", "userCode": "ABCD-EFGH", "expiresAt": "2026-11-25T11:00:00Z"}}),
        )]);
        assert_eq!(c.sign_ins[0].user_code.as_deref(), Some("ABCD-EFGH"));
        assert_eq!(
            c.sign_ins[0].url.as_deref(),
            Some("https://example.org/device")
        );
        c.apply(&ev(
            "authorization.completed",
            serde_json::json!({"name": "drive", "outcome": "authorized"}),
        ));
        assert!(c.sign_ins.is_empty());
    }

    #[test]
    fn v27_parts_and_interactions_read_the_same_way() {
        let events = vec![
            ev(
                "delivery.consumed",
                serde_json::json!({"deliveryId": "d1", "parts": [{"kind": "text", "text": "Hello"}]}),
            ),
            ev(
                "content.delta",
                serde_json::json!({"partId": "p1", "kind": "reasoning", "delta": "hmm"}),
            ),
            ev(
                "content.delta",
                serde_json::json!({"partId": "p2", "kind": "text", "delta": "Hi "}),
            ),
            ev(
                "content.delta",
                serde_json::json!({"partId": "p2", "delta": "there"}),
            ),
            ev(
                "content.completed",
                serde_json::json!({"partId": "p2", "runId": "r", "kind": "text", "value": "Hi there", "phase": "reply"}),
            ),
            ev(
                "interaction.opened",
                serde_json::json!({"interactionId": "i1", "request": {"kind": "approval", "prompt": "Go?", "options": [{"id": "approve", "label": "Approve"}]}}),
            ),
        ];
        let c = Conversation::from_events(&events);
        let texts: Vec<_> = c
            .messages
            .iter()
            .map(|m| (m.role, m.text.as_str()))
            .collect();
        assert_eq!(
            texts,
            [(Role::User, "Hello"), (Role::Assistant, "Hi there")]
        );
        assert_eq!(c.pending[0].request_id, "i1");
        assert_eq!(c.pending[0].kind, "approval");
    }
}
