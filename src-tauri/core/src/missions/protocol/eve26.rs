//! eve's stream versions up to 26 (generations A and B): messages streamed as
//! `message.appended` deltas, actions, input requests, tasks, agents and authorizations
//! (`shared/research/eve-protocol.md`). The names it shares with the seeds' dialect
//! (`turn.started`, `session.waiting`, …) read as [`super::seeds`] reads them.

use crate::missions::protocol::MissionEvent;
use crate::missions::protocol::facts::{DeltaText, Fact, PartKind, SignInPrompt};
use crate::missions::protocol::json::{
    call_input, call_settled, cost, each, error_message, owned, request_of, status, text,
    text_of_parts, total_spent, user_message,
};
use crate::missions::protocol::outcomes::{RequestOutcome, SignInOutcome, TurnOutcome};
use serde_json::Value;

/// Task ids a result names that are kept: more say nothing a person reads.
const MAX_RESULT_TASKS: usize = 32;

/// What a v26 (or older) record says; `None` for a name this vocabulary does not have.
pub fn read(e: &MissionEvent) -> Option<Vec<Fact>> {
    let d = &e.data;
    let s = |k: &str| text(d, k);
    let none = || Some(Vec::new());
    let fact = match e.event.as_str() {
        "turn.failed" => Fact::TurnEnded {
            outcome: TurnOutcome::Failed,
            error: error_message(d),
            session_waits: false,
            held: false,
        },
        // `on: "tasks"`: the turn waits on its own background work and goes on by itself.
        // Before eve 0.70 no `on`: a question still open makes it the person's.
        "turn.waiting" => Fact::TurnHeld {
            for_person: s("on").map(|on| on == "input"),
            awaiting: Vec::new(),
        },
        "session.failed" => Fact::SessionEnded {
            failed: true,
            error: error_message(d),
        },
        "message.received" if s("kind").is_none_or(|k| k == "message") => {
            match user_message(s("message"), d.get("parts")) {
                Some(fact) => fact,
                None => return none(),
            }
        }
        // Delivered in a result turn of its own once the session is idle.
        "message.received" if s("kind") == Some("task.result") => Fact::TaskResult {
            tasks: each(d, "taskIds")
                .filter_map(Value::as_str)
                .take(MAX_RESULT_TASKS)
                .map(str::to_owned)
                .collect(),
            text: s("message")
                .or_else(|| text_of_parts(d.get("parts")))
                .map(str::to_owned),
        },
        // Its older name (eve 0.64), which names the task only in its text: "Background
        // task task_… (researcher) is completed."
        "message.received" if s("kind") == Some("execution.background_task") => {
            let said = s("message").or_else(|| text_of_parts(d.get("parts")));
            Fact::TaskResult {
                tasks: said
                    .and_then(|t| t.strip_prefix("Background task "))
                    .and_then(|t| t.split_whitespace().next())
                    .map(str::to_owned)
                    .into_iter()
                    .collect(),
                text: said.map(str::to_owned),
            }
        }
        "message.received" => return none(),
        "message.appended" | "reasoning.appended" => {
            let kind = part_kind(&e.event);
            Fact::Delta {
                part: part_key(d, kind),
                kind: Some(kind),
                text: match s("messageSoFar").or_else(|| s("reasoningSoFar")) {
                    Some(so_far) => DeltaText::SoFar(so_far.to_owned()),
                    None => match s("messageDelta").or_else(|| s("reasoningDelta")) {
                        Some(delta) => DeltaText::Append(delta.to_owned()),
                        None => DeltaText::None,
                    },
                },
            }
        }
        "message.completed" | "reasoning.completed" => {
            let kind = part_kind(&e.event);
            Fact::PartCompleted {
                part: part_key(d, kind),
                kind,
                // `message: null` is an intentional empty delivery: nothing to show.
                whole: owned(
                    d,
                    match kind {
                        PartKind::Text => "message",
                        PartKind::Reasoning => "reasoning",
                    },
                ),
                narration: s("finishReason") == Some("tool-calls"),
            }
        }
        _ => return work(e).or_else(|| asks(e)),
    };
    let mut facts = vec![fact];
    // B's cumulative spend rides on its held turns and the session's failure.
    if matches!(e.event.as_str(), "turn.waiting" | "session.failed") {
        facts.extend(total_spent(d));
    }
    Some(facts)
}

/// Work: tool calls (actions), background tasks, sub-agents, and what a step cost.
fn work(e: &MissionEvent) -> Option<Vec<Fact>> {
    let d = &e.data;
    let s = |k: &str| text(d, k);
    let none = || Some(Vec::new());
    let fact = match e.event.as_str() {
        "actions.requested" => {
            return Some(
                each(d, "actions")
                    .filter_map(|a| {
                        Some(Fact::CallRequested {
                            call: text(a, "callId")?.to_owned(),
                            name: text(a, "toolName").unwrap_or("tool").to_owned(),
                            input: a.get("input").cloned(),
                        })
                    })
                    .collect(),
            );
        }
        "action.input.appended" => return Some(call_input(d)),
        "action.result" => {
            let mut facts: Vec<Fact> = call_settled(d).into_iter().collect();
            facts.extend(background_receipt(d));
            return Some(facts);
        }
        "action.partial" => return none(),
        "task.started" => match s("taskId") {
            Some(task) => Fact::TaskStarted {
                task: task.to_owned(),
                name: s("name").unwrap_or("background task").to_owned(),
                call: d
                    .pointer("/startedBy/callId")
                    .and_then(serde_json::Value::as_str)
                    .or_else(|| s("callId"))
                    .map(str::to_owned),
                detached: false,
            },
            None => return none(),
        },
        "task.settled" | "task.ended" => match s("taskId") {
            Some(task) => Fact::TaskSettled {
                task: task.to_owned(),
                status: status(d),
                output: d.get("output").cloned(),
                error: error_message(d),
            },
            None => return none(),
        },
        "agent.started" | "subagent.started" => {
            let name = s("name").unwrap_or("sub-agent");
            Fact::ChildStarted {
                key: child_key(d, name),
                name: name.to_owned(),
                // A sub-agent is followed on its own stream; its end is not in this one.
                ends_here: e.event == "subagent.started",
                call: owned(d, "callId"),
                session: owned(d, "sessionId"),
                stream: owned(d, "streamPath"),
            }
        }
        // eve before 0.70 (0.30, 0.64): its end comes in this stream, by its call.
        "subagent.called" => {
            let name = s("name").or_else(|| s("toolName")).unwrap_or("sub-agent");
            Fact::ChildStarted {
                key: s("callId").unwrap_or(name).to_owned(),
                name: name.to_owned(),
                ends_here: true,
                call: owned(d, "callId"),
                session: owned(d, "childSessionId"),
                stream: owned(d, "childStreamPath"),
            }
        }
        "subagent.completed" => Fact::ChildEnded {
            key: child_key(d, s("name").unwrap_or("sub-agent")),
            output: d.get("output").cloned(),
        },
        "step.completed" => match cost(d) {
            Some(usd) => Fact::Spent { usd },
            None => return none(),
        },
        "step.failed" => Fact::StepFailed {
            message: error_message(d),
        },
        _ => return None,
    };
    Some(vec![fact])
}

/// What the session asks the person: input requests and sign-ins.
fn asks(e: &MissionEvent) -> Option<Vec<Fact>> {
    let d = &e.data;
    let s = |k: &str| text(d, k);
    let none = || Some(Vec::new());
    let fact = match e.event.as_str() {
        "input.requested" => {
            return Some(
                each(d, "requests")
                    .filter_map(|r| request_of(r, r.get("requestId")))
                    .map(Fact::RequestOpened)
                    .collect(),
            );
        }
        "input.resolved" => {
            return Some(
                each(d, "resolutions")
                    .filter_map(|r| {
                        Some(Fact::RequestSettled {
                            id: text(r, "requestId")?.to_owned(),
                            outcome: text(r, "outcome").map(RequestOutcome::from_wire),
                            reason: owned(r, "reason"),
                            response: r.get("response").cloned(),
                        })
                    })
                    .collect(),
            );
        }
        "authorization.required" => {
            let auth = d.get("authorization").unwrap_or(&Value::Null);
            Fact::SignInOpened {
                sign_in: SignInPrompt {
                    name: s("name").unwrap_or("a service").to_owned(),
                    description: owned(d, "description"),
                    url: owned(auth, "url"),
                    user_code: owned(auth, "userCode"),
                    expires_at: owned(auth, "expiresAt"),
                    instructions: owned(auth, "instructions"),
                    attempt: owned(d, "attemptId"),
                },
                interaction: None,
            }
        }
        "authorization.completed" => match s("name") {
            Some(name) => Fact::SignInSettled {
                name: name.to_owned(),
                attempt: owned(d, "attemptId"),
                outcome: s("outcome").map(SignInOutcome::from_wire),
                reason: owned(d, "reason"),
            },
            None => return none(),
        },
        _ => return None,
    };
    Some(vec![fact])
}

fn part_kind(event: &str) -> PartKind {
    if event.starts_with("reasoning") {
        PartKind::Reasoning
    } else {
        PartKind::Text
    }
}

/// Where a message or reasoning streams: its turn and step.
fn part_key(d: &Value, kind: PartKind) -> String {
    let what = match kind {
        PartKind::Text => "say",
        PartKind::Reasoning => "reason",
    };
    let turn = text(d, "turnId")
        .or_else(|| d.pointer("/scope/turnId").and_then(Value::as_str))
        .unwrap_or("");
    let step = d.get("stepIndex").and_then(Value::as_u64).unwrap_or(0);
    format!("{what}:{turn}:{step}")
}

/// A call whose result is a receipt for work that goes on in the background (eve 0.64:
/// `{status: "working", taskId}`): the task runs past its turn.
fn background_receipt(d: &Value) -> Option<Fact> {
    let output = d.pointer("/result/output")?;
    if text(output, "status") != Some("working") {
        return None;
    }
    Some(Fact::TaskStarted {
        task: text(output, "taskId")?.to_owned(),
        name: d
            .pointer("/result/toolName")
            .and_then(Value::as_str)
            .unwrap_or("background task")
            .to_owned(),
        call: d
            .pointer("/result/callId")
            .and_then(Value::as_str)
            .map(str::to_owned),
        detached: true,
    })
}

/// Which sub-agent: its session, else the call that started it, else its name.
fn child_key(d: &Value, name: &str) -> String {
    text(d, "sessionId")
        .or_else(|| text(d, "callId"))
        .unwrap_or(name)
        .to_owned()
}
