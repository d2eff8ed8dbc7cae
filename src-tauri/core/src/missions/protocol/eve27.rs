//! eve's stream version 27: deliveries, content parts, calls, interactions and children
//! (`packages/eve/src/protocol/` and `docs/concepts/upgrade-to-v27-events.md` in eve's
//! repository). Families that had not moved yet ride inside a v27 line with their v26
//! names, and read as [`super::eve26`] reads them.

use crate::missions::protocol::MissionEvent;
use crate::missions::protocol::facts::{Awaited, DeltaText, Fact, PartKind, SignInPrompt};
use crate::missions::protocol::json::{
    call_input, call_settled, cost, error_message, file_ref, owned, request_of, text, user_message,
};
use crate::missions::protocol::outcomes::{RequestOutcome, ResponseOutcome, TurnOutcome};
use serde_json::Value;

/// What a v27 record says; `None` for a name this vocabulary does not have.
pub fn read(e: &MissionEvent) -> Option<Vec<Fact>> {
    let d = &e.data;
    let s = |k: &str| text(d, k);
    let fact = match e.event.as_str() {
        "turn.settled" => Fact::TurnEnded {
            outcome: TurnOutcome::from_wire(s("outcome").unwrap_or("completed")),
            error: error_message(d),
            session_waits: true,
            held: false,
        },
        "turn.paused" => paused(d),
        "turn.resumed" => Fact::TurnResumed,
        "session.ended" => Fact::SessionEnded {
            failed: s("outcome") == Some("failed"),
            error: error_message(d),
        },
        "delivery.consumed" => match user_message(None, d.get("parts")) {
            Some(fact) => fact,
            None => return Some(Vec::new()),
        },
        "content.delta" => {
            let Some(part) = s("partId") else {
                return Some(Vec::new());
            };
            let kind = match s("kind") {
                Some("text") => Some(PartKind::Text),
                Some("reasoning") => Some(PartKind::Reasoning),
                // Another kind (a file, a result) is not a message.
                Some(_) => return Some(Vec::new()),
                None => None,
            };
            Fact::Delta {
                part: format!("part:{part}"),
                kind,
                text: match s("delta") {
                    Some(delta) => DeltaText::Append(delta.to_owned()),
                    None => DeltaText::None,
                },
            }
        }
        "content.completed" => {
            let Some(part) = s("partId") else {
                return Some(Vec::new());
            };
            let kind = match s("kind") {
                Some("text") => PartKind::Text,
                Some("reasoning") => PartKind::Reasoning,
                Some("file") => {
                    return Some(
                        file_ref(d)
                            .map(|file| Fact::FileMade { file })
                            .into_iter()
                            .collect(),
                    );
                }
                _ => return Some(Vec::new()),
            };
            let aside = s("phase") != Some("reply") || d.get("interrupted") == Some(&true.into());
            Fact::PartCompleted {
                part: format!("part:{part}"),
                kind,
                whole: owned(d, "value"),
                narration: aside && kind == PartKind::Text,
            }
        }
        "call.requested" => {
            let Some(call) = s("callId") else {
                return Some(Vec::new());
            };
            let capability = d.get("capability");
            let name = capability
                .and_then(|c| c.get("title").or_else(|| c.get("name")))
                .and_then(Value::as_str)
                .unwrap_or("tool");
            let control = capability.and_then(|c| c.get("kind")) == Some(&"control".into());
            Fact::CallRequested {
                call: call.to_owned(),
                name: if control {
                    control_words(name)
                } else {
                    name.to_owned()
                },
                input: d.get("input").cloned(),
            }
        }
        "call.input" => return Some(call_input(d)),
        "call.settled" => return Some(call_settled(d).into_iter().collect()),
        "call.progress" => return Some(Vec::new()),
        "child.opened" => {
            let name = s("name").unwrap_or("sub-agent");
            Fact::ChildStarted {
                key: s("sessionId")
                    .or_else(|| s("callId"))
                    .unwrap_or(name)
                    .to_owned(),
                name: name.to_owned(),
                ends_here: false,
                call: s("callId")
                    .or_else(|| d.pointer("/owner/callId").and_then(Value::as_str))
                    .map(str::to_owned),
                session: owned(d, "sessionId"),
                stream: owned(d, "stream"),
            }
        }
        "usage.recorded" => match cost(d) {
            Some(usd) => Fact::Spent { usd },
            None => return Some(Vec::new()),
        },
        "interaction.opened" => return Some(interaction(d).into_iter().collect()),
        "response.submitted" => match (s("responseId"), s("interactionId")) {
            (Some(response), Some(interaction)) => Fact::ResponseSubmitted {
                response: response.to_owned(),
                interaction: interaction.to_owned(),
            },
            _ => return Some(Vec::new()),
        },
        "response.settled" => match (s("responseId"), s("outcome")) {
            (Some(response), Some(outcome)) => Fact::ResponseSettled {
                response: response.to_owned(),
                outcome: ResponseOutcome::from_wire(outcome),
                reason: owned(d, "reason"),
            },
            _ => return Some(Vec::new()),
        },
        "interaction.settled" => match s("interactionId") {
            Some(id) => Fact::RequestSettled {
                id: id.to_owned(),
                outcome: s("outcome").map(RequestOutcome::from_wire),
                reason: owned(d, "reason"),
                response: d.get("response").cloned(),
            },
            None => return Some(Vec::new()),
        },
        _ => return None,
    };
    Some(vec![fact])
}

/// One of eve's own control tools (`capability.kind: "control"`), in words: the model
/// waiting on its tasks is no tool the agent was given.
fn control_words(name: &str) -> String {
    match name.trim_start_matches("eve__") {
        "task_wait" => "Waiting for its tasks".to_owned(),
        other => other.replace('_', " "),
    }
}

/// A paused turn: held for the person only when it awaits an interaction; one that
/// awaits its own calls or tasks resumes by itself. A pause that names nothing is taken
/// as the person's, as before eve listed what it awaits.
fn paused(d: &Value) -> Fact {
    let awaiting: Vec<Awaited> = d
        .get("awaiting")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|a| {
            let id = |k: &str| text(a, k).map(str::to_owned);
            id("interactionId")
                .map(Awaited::Interaction)
                .or_else(|| id("callId").map(Awaited::Call))
                .or_else(|| id("taskId").map(Awaited::Task))
        })
        .collect();
    let for_person = awaiting.is_empty()
        || awaiting
            .iter()
            .any(|a| matches!(a, Awaited::Interaction(_)));
    Fact::TurnHeld {
        for_person: Some(for_person),
        awaiting,
    }
}

/// An interaction: a sign-in, or a request the person answers.
fn interaction(d: &Value) -> Option<Fact> {
    let request = d.get("request")?;
    let Some(sign_in) = request.get("signIn") else {
        return request_of(request, d.get("interactionId")).map(Fact::RequestOpened);
    };
    let f = |k: &str| owned(sign_in, k);
    Some(Fact::SignInOpened {
        sign_in: SignInPrompt {
            name: f("displayName")
                .or_else(|| f("name"))
                .unwrap_or_else(|| "a service".into()),
            description: owned(request, "prompt"),
            url: f("url"),
            user_code: f("userCode"),
            expires_at: f("expiresAt"),
            instructions: f("instructions"),
            attempt: owned(d, "interactionId"),
        },
        interaction: owned(d, "interactionId"),
    })
}
