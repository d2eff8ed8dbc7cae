//! eve's v27 facts: what each sandbox event becomes as committed lines of facts and
//! progress records, a table per fact family (turn, model, call, interaction).

use super::*;
use std::collections::HashSet;

/// B's resolution outcome in 27's closed set (`packages/eve/src/protocol/session-events/
/// catalog.ts`): eve never writes `answered` there.
pub fn interaction_outcome(b: Option<&str>) -> &'static str {
    match b {
        Some("denied") => "declined",
        Some("ignored") => "withdrawn",
        Some("invalid") => "invalid",
        Some("cancelled") => "interrupted",
        _ => "accepted",
    }
}

/// A message's parts as 27's `delivery.consumed` carries them: the text, then the files
/// (`{kind: "file", mediaType, filename?, size?}`) B recorded in `parts`.
fn user_parts(d: &Value) -> Vec<Value> {
    let mut parts = Vec::new();
    if d["message"].as_str().is_some_and(|t| !t.is_empty()) || d["parts"].is_null() {
        parts.push(json!({"kind": "text", "text": d["message"]}));
    }
    for p in d["parts"].as_array().into_iter().flatten() {
        if p["type"] == "file" {
            let mut file = p.clone();
            if let Some(o) = file.as_object_mut() {
                o.remove("type");
                o.insert("kind".into(), json!("file"));
            }
            parts.push(file);
        }
    }
    parts
}

fn fact(ty: &str, turn: Option<&Value>, data: Value) -> Value {
    match turn {
        Some(t) if !t.is_null() => json!({"type": ty, "scope": {"turnId": t}, "data": data}),
        _ => json!({"type": ty, "data": data}),
    }
}

fn run_id(d: &Value) -> String {
    format!(
        "run_{}_{}",
        d["turnId"]
            .as_str()
            .unwrap_or("x")
            .trim_start_matches("turn_"),
        d["stepIndex"].as_u64().unwrap_or(0)
    )
}

fn part_id(d: &Value, kind: &str) -> String {
    format!("part_{}_{kind}", run_id(d).trim_start_matches("run_"))
}

/// What 27 needs to remember between lines: which parts and calls were announced,
/// the delivery a turn serves, and its reply part.
#[derive(Default)]
pub struct V27 {
    announced: HashSet<String>,
    /// Deliveries the current turn has consumed and not yet settled.
    deliveries: Vec<String>,
    reply: Option<String>,
    last_turn: Option<Value>,
    /// Calls handed to a sub-agent, whose end is the delegation's.
    delegated: HashSet<String>,
    /// eve's transition period: the tool-call family still rides as v26 events
    /// inside lines (the `v27Transition` fault).
    transition: bool,
    /// The turn pauses on a delegated call and resumes when it returns, as eve's v27
    /// catalog allows (the `delegationPause` fault); eve 1.x does not pause.
    pause_on_delegation: bool,
}

impl V27 {
    pub fn new(transition: bool, pause_on_delegation: bool) -> Self {
        Self {
            transition,
            pause_on_delegation,
            ..Self::default()
        }
    }

    pub fn transition(&self) -> bool {
        self.transition
    }
}

/// The v26 events that ride inside lines under `v27Transition`, and which of them
/// are progress.
const TRANSITION_TYPES: [&str; 3] = [
    "actions.requested",
    "action.input.appended",
    "action.result",
];

/// 27: the line an event becomes, if any (`session.waiting` and `turn.waiting` have
/// none: a paused turn says so with the request, a settled one with `turn.settled`).
pub fn render_v27(state: &mut V27, ev: &Ev) -> Option<Rec> {
    let d = &ev.data;
    let turn = d.get("turnId");
    let progress = |ty: &str, data: Value| {
        Some(Rec {
            line: json!({"progress": fact(ty, turn, data)}).to_string(),
            boundary: false,
            ended: false,
        })
    };
    if state.transition && TRANSITION_TYPES.contains(&ev.kind) {
        let mut record = json!({"type": ev.kind, "data": d});
        if let Some(id) = &ev.delivery {
            record["meta"] = json!({"deliveryIds": [id]});
        }
        if ev.kind == "action.input.appended" {
            return Some(Rec {
                line: json!({ "progress": record }).to_string(),
                boundary: false,
                ended: false,
            });
        }
        return Some(Rec {
            line: json!({"at": rfc3339(now_ms()), "facts": [record]}).to_string(),
            boundary: false,
            ended: false,
        });
    }
    let step = match ev.kind {
        "session.started" | "turn.started" | "message.received" | "turn.completed"
        | "turn.cancelled" | "session.completed" | "session.failed" => v27_turn(state, ev),
        "step.started"
        | "reasoning.appended"
        | "message.appended"
        | "reasoning.completed"
        | "message.completed"
        | "step.completed"
        | "usage.recorded" => v27_model(state, ev),
        "actions.requested"
        | "action.input.appended"
        | "v27.facts"
        | "action.result"
        | "agent.started" => v27_call(state, ev),
        "input.requested" | "input.resolved" | "answer.refused" => v27_interaction(state, ev),
        _ => Step27::Skip,
    };
    let facts = match step {
        Step27::Facts(facts) => facts,
        Step27::Progress(ty, data) => return progress(ty, data),
        Step27::Line(rec) => return Some(rec),
        Step27::Skip => return None,
    };
    let ended = matches!(ev.kind, "session.completed" | "session.failed");
    Some(Rec {
        line: json!({"at": rfc3339(now_ms()), "facts": facts}).to_string(),
        boundary: ended,
        ended,
    })
}

/// What one event becomes in 27: facts for a committed line, a progress record, a line
/// of its own, or nothing.
enum Step27 {
    Facts(Vec<Value>),
    Progress(&'static str, Value),
    Line(Rec),
    Skip,
}

/// 27's turn and session facts: a turn started, its deliveries admitted and consumed,
/// settled, the session ended.
fn v27_turn(state: &mut V27, ev: &Ev) -> Step27 {
    let d = &ev.data;
    let turn = d.get("turnId");
    Step27::Facts(match ev.kind {
        "session.started" => vec![fact(
            "session.started",
            None,
            json!({"runtime": d["runtime"]}),
        )],
        "turn.started" => {
            state.reply = None;
            let cause = match &ev.delivery {
                Some(id) => json!({"deliveryId": id}),
                None => json!({"policy": "sandbox"}),
            };
            let follows = state.last_turn.replace(turn.cloned().unwrap_or_default());
            vec![fact(
                "turn.started",
                turn,
                json!({"turnId": turn, "cause": cause, "follows": follows}),
            )]
        }
        "message.received" => {
            let id = ev
                .delivery
                .clone()
                .unwrap_or_else(|| format!("dlv_{:016x}", random_u64()));
            state.deliveries.push(id.clone());
            vec![
                fact("delivery.admitted", None, json!({"deliveryId": id})),
                fact(
                    "delivery.consumed",
                    turn,
                    json!({"deliveryId": id, "turnId": turn, "parts": user_parts(d)}),
                ),
            ]
        }
        "turn.completed" | "turn.cancelled" => {
            let outcome = if ev.kind == "turn.completed" {
                "completed"
            } else {
                "cancelled"
            };
            let mut settled = json!({"turnId": turn, "outcome": outcome});
            if let (Some(p), "completed") = (&state.reply, outcome) {
                settled["reply"] = json!([p]);
            }
            let mut facts = vec![fact("turn.settled", turn, settled)];
            for id in state.deliveries.drain(..) {
                facts.push(fact(
                    "delivery.settled",
                    None,
                    json!({"deliveryId": id, "outcome": "handled", "turnId": turn}),
                ));
            }
            facts
        }
        "session.completed" => {
            vec![fact("session.ended", None, json!({"outcome": "completed"}))]
        }
        // eve 1.x ends a session whose model failed for good in one line: the model run
        // failed, the deliveries failed with the session, the turn cancelled, the session
        // ended failed.
        "session.failed" => {
            let model = fact(
                "model.settled",
                turn,
                json!({"outcome": "failed", "error": ev.data["error"]}),
            );
            let mut facts: Vec<Value> = std::iter::once(model)
                .chain(state.deliveries.drain(..).map(|id| {
                    fact(
                        "delivery.settled",
                        None,
                        json!({"deliveryId": id, "outcome": "failed", "reason": "session-ended"}),
                    )
                }))
                .collect();
            facts.push(fact(
                "turn.settled",
                turn,
                json!({"turnId": turn, "outcome": "cancelled"}),
            ));
            facts.push(fact(
                "session.ended",
                None,
                json!({"outcome": "failed", "cause": {"turnId": turn}, "error": ev.data["error"]}),
            ));
            facts
        }

        _ => return Step27::Skip,
    })
}

/// 27's model facts: a run requested, started and settled, what it wrote (its deltas as
/// progress), its usage.
fn v27_model(state: &mut V27, ev: &Ev) -> Step27 {
    let d = &ev.data;
    let turn = d.get("turnId");
    Step27::Facts(match ev.kind {
        "step.started" => {
            let run = run_id(d);
            vec![
                fact(
                    "model.requested",
                    turn,
                    json!({"runId": run, "owner": {"turnId": turn}}),
                ),
                fact(
                    "model.started",
                    turn,
                    json!({"runId": run, "modelId": d["modelId"]}),
                ),
            ]
        }
        "reasoning.appended" | "message.appended" => {
            let (kind, field) = if ev.kind == "message.appended" {
                ("text", "messageDelta")
            } else {
                ("reasoning", "reasoningDelta")
            };
            let part = part_id(d, kind);
            let mut data = json!({"partId": part, "delta": d[field]});
            if state.announced.insert(part) {
                data["kind"] = json!(kind);
            }
            return Step27::Progress("content.delta", data);
        }
        "reasoning.completed" | "message.completed" => {
            let (kind, value) = if ev.kind == "message.completed" {
                ("text", &d["message"])
            } else {
                ("reasoning", &d["reasoning"])
            };
            let part = part_id(d, kind);
            let phase = if kind == "text" && d["finishReason"] == "stop" {
                state.reply = Some(part.clone());
                "reply"
            } else {
                "narration"
            };
            let mut facts = vec![fact(
                "content.completed",
                turn,
                json!({"partId": part, "runId": run_id(d), "kind": kind, "value": value, "phase": phase}),
            )];
            // The files the reply made (the `agentFile` knob): their metadata as the
            // value, their size in the reference.
            for (i, f) in d["agentFiles"].as_array().into_iter().flatten().enumerate() {
                facts.push(fact(
                    "content.completed",
                    turn,
                    json!({"partId": format!("{part}_file{i}"), "runId": run_id(d), "kind": "file",
                           "phase": "reply",
                           "value": {"filename": f["filename"], "mediaType": f["mediaType"], "url": f["url"]},
                           "valueRef": {"ref": format!("ref_{part}_{i}"), "mediaType": f["mediaType"], "size": f["size"]}}),
                ));
            }
            facts
        }
        "step.completed" => {
            let run = run_id(d);
            vec![
                fact(
                    "model.settled",
                    turn,
                    json!({"runId": run, "outcome": "completed", "finishReason": d["finishReason"]}),
                ),
                fact(
                    "usage.recorded",
                    turn,
                    json!({"owner": {"runId": run}, "kind": "model", "usage": d["usage"]}),
                ),
            ]
        }
        "usage.recorded" => vec![fact("usage.recorded", turn, d.clone())],
        _ => return Step27::Skip,
    })
}

/// 27's call facts: calls requested, started and settled, a sub-agent handed a task.
fn v27_call(state: &mut V27, ev: &Ev) -> Step27 {
    let d = &ev.data;
    let turn = d.get("turnId");
    Step27::Facts(match ev.kind {
        "actions.requested" => d["actions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| {
                fact(
                    "call.requested",
                    turn,
                    json!({"callId": a["callId"], "owner": {"runId": run_id(d)},
                           "capability": {"kind": "tool", "name": a["toolName"]}, "input": a["input"]}),
                )
            })
            .collect(),
        "action.input.appended" => {
            let call = d["callId"].as_str().unwrap_or_default().to_owned();
            let mut data = json!({"callId": call, "delta": d["inputTextDelta"]});
            if state.announced.insert(call) {
                data["name"] = d["toolName"].clone();
            }
            return Step27::Progress("call.input", data);
        }
        "v27.facts" => d["facts"].as_array().cloned().unwrap_or_default(),
        "action.result" => {
            let r = &d["result"];
            // 27's closed set: a call dropped with its withdrawn approval is abandoned.
            let outcome = match d["status"].as_str() {
                Some("cancelled") => json!("abandoned"),
                _ => d["status"].clone(),
            };
            let mut settled = json!({"callId": r["callId"], "outcome": outcome, "output": r["output"]});
            if let Some(e) = d.get("error") {
                settled["error"] = e.clone();
            }
            let call = r["callId"].as_str().unwrap_or_default();
            if state.delegated.remove(call) {
                // The sub-agent's call started when it was handed over.
                let mut facts = vec![fact("call.settled", turn, settled)];
                if state.pause_on_delegation {
                    facts.push(fact(
                        "turn.resumed",
                        turn,
                        json!({"turnId": turn, "cause": {"callId": call}}),
                    ));
                }
                return Step27::Line(line(facts));
            }
            vec![
                fact("call.started", turn, json!({"callId": r["callId"]})),
                fact("call.settled", turn, settled),
            ]
        }
        "agent.started" => {
            let call = d["callId"].as_str().unwrap_or_default().to_owned();
            state.delegated.insert(call.clone());
            let opened = fact(
                "child.opened",
                turn,
                json!({"sessionId": d["sessionId"], "owner": {"callId": call},
                       "name": d["name"], "stream": d["streamPath"]}),
            );
            if state.pause_on_delegation {
                vec![
                    fact("call.started", turn, json!({"callId": call})),
                    opened,
                    fact("turn.paused", turn, json!({"turnId": turn, "awaiting": [{"callId": call}]})),
                ]
            } else {
                // eve 1.x: the call starts a task of its own, which ends when the call does
                // (no end of its own), and the turn goes on waiting for it.
                let task = format!("{}-{call}", d["name"].as_str().unwrap_or("agent"));
                vec![
                    json!({"type": "task.started", "scope": {"taskId": task},
                           "data": {"taskId": task, "kind": "agent", "name": d["name"],
                                    "startedBy": {"callId": call}}}),
                    fact("call.started", turn, json!({"callId": call, "taskId": task})),
                    opened,
                    fact(
                        "child.sent",
                        turn,
                        json!({"callId": call, "sessionId": d["sessionId"],
                               "childDeliveryId": format!("agent-session:{call}:0:initial")}),
                    ),
                ]
            }
        }
        _ => return Step27::Skip,
    })
}

/// 27's interaction facts: questions and approvals opened, answered, refused.
fn v27_interaction(state: &mut V27, ev: &Ev) -> Step27 {
    let d = &ev.data;
    let turn = d.get("turnId");
    Step27::Facts(match ev.kind {
        "input.requested" => {
            let mut facts = Vec::new();
            let mut awaiting = Vec::new();
            for r in d["requests"].as_array().into_iter().flatten() {
                let kind = match r["kind"].as_str() {
                    Some("session-limit") => "budget",
                    Some("tool-approval") => "approval",
                    _ => "question",
                };
                let mut request = json!({"kind": kind, "prompt": r["prompt"], "options": r["options"],
                                         "allowFreeform": r["allowFreeform"], "display": r["display"]});
                if r["allowFreeform"].is_null() {
                    request["allowFreeform"] = json!(false);
                }
                if let Some(title) = r.get("title") {
                    request["title"] = title.clone();
                }
                // An approval is about the call it holds.
                let subject = match r.pointer("/action/callId") {
                    Some(call) => json!({"callId": call}),
                    None => json!({"turnId": turn}),
                };
                facts.push(fact(
                    "interaction.opened",
                    turn,
                    json!({"interactionId": r["requestId"], "subject": subject, "request": request}),
                ));
                awaiting.push(json!({"interactionId": r["requestId"]}));
            }
            facts.push(fact(
                "turn.paused",
                turn,
                json!({"turnId": turn, "awaiting": awaiting}),
            ));
            for id in state.deliveries.drain(..) {
                facts.push(fact(
                    "delivery.settled",
                    None,
                    json!({"deliveryId": id, "outcome": "awaiting-input", "turnId": turn}),
                ));
            }
            facts
        }
        // As eve 1.0.1 takes an answer: the delivery admitted, the response submitted
        // (an approval's admitted too), settled `applied`, the interaction settled, the
        // delivery consumed by the held turn, which goes on with no record of its own.
        "input.resolved" => {
            let delivery = ev
                .delivery
                .clone()
                .unwrap_or_else(|| format!("dlv_{:016x}", random_u64()));
            let mut facts = vec![fact(
                "delivery.admitted",
                None,
                json!({"deliveryId": delivery}),
            )];
            for r in d["resolutions"].as_array().into_iter().flatten() {
                let outcome = interaction_outcome(r["outcome"].as_str());
                if outcome == "withdrawn" {
                    // The person's message withdrew it: no response was submitted.
                    let mut settled = json!({"interactionId": r["requestId"], "outcome": outcome});
                    if let Some(reason) = r.get("reason") {
                        settled["reason"] = reason.clone();
                    }
                    facts.push(fact("interaction.settled", turn, settled));
                    continue;
                }
                let response_id = format!("response_{delivery}_0");
                facts.push(fact(
                    "response.submitted",
                    turn,
                    json!({"responseId": response_id, "interactionId": r["requestId"],
                           "deliveryId": delivery, "value": r["response"]}),
                ));
                if r["kind"].as_str().is_some_and(|k| k.ends_with("approval")) {
                    facts.push(fact(
                        "response.admitted",
                        turn,
                        json!({"responseId": response_id}),
                    ));
                }
                facts.push(fact(
                    "response.settled",
                    turn,
                    json!({"outcome": "applied", "responseId": response_id}),
                ));
                facts.push(fact(
                    "interaction.settled",
                    turn,
                    json!({"interactionId": r["requestId"], "outcome": outcome,
                           "cause": {"responseId": response_id}, "response": r["response"]}),
                ));
            }
            facts.push(fact(
                "delivery.consumed",
                turn,
                json!({"deliveryId": delivery, "parts": [], "turnId": turn}),
            ));
            state.deliveries.push(delivery);
            facts
        }
        // An answer eve 1.x took and refused: the interaction stays open.
        "answer.refused" => {
            let delivery = ev.delivery.clone().unwrap_or_default();
            let response = format!("response_{delivery}_0");
            let reason = &ev.data["reason"];
            vec![
                fact(
                    "response.submitted",
                    turn,
                    json!({"deliveryId": delivery, "interactionId": ev.data["interactionId"],
                           "responseId": response, "value": ev.data["value"]}),
                ),
                fact(
                    "response.settled",
                    turn,
                    json!({"outcome": "refused", "reason": reason, "responseId": response}),
                ),
                fact(
                    "delivery.settled",
                    None,
                    json!({"deliveryId": delivery, "outcome": "refused", "reason": reason}),
                ),
            ]
        }
        _ => return Step27::Skip,
    })
}

/// One committed line of facts.
fn line(facts: Vec<Value>) -> Rec {
    Rec {
        line: json!({"at": rfc3339(now_ms()), "facts": facts}).to_string(),
        boundary: false,
        ended: false,
    }
}
