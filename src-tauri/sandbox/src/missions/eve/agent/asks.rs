//! What the agent asks of the person besides questions: a tool approval (the `approval`
//! knob) and a sign-in (`signIn`, with `signInSuperseded` a second attempt replacing the
//! first), in B's events or 27's facts. An approval is answered with `inputResponses`
//! (`approve` / `cancel`, since eve 0.32) or withdrawn by a message; a sign-in is never
//! answered: its link points at the sandbox itself (`GET /_sandbox/sign-in/{session}/
//! {attempt}`), and visiting it is the browser's callback, after which the turn goes on.

use super::{After, Agent, Ev, Open};
use crate::knobs::MissionProtocol;
use crate::missions::session::{now_ms, random_u64, rfc3339};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// What a session's knobs asked for, kept in its file's header.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AskKnobs {
    pub approval: bool,
    pub sign_in: bool,
    pub superseded: bool,
    /// Where sign-in links point: `{origin}/_sandbox/sign-in/{session}`.
    pub link_base: String,
}

/// What the approval and sign-in knobs asked for, and where they stand.
#[derive(Debug, Clone, Default)]
pub struct Asks {
    /// Ask to approve the first source read (B and 27).
    pub approval: bool,
    /// Ask to sign in before the first search (B and 27).
    pub sign_in: bool,
    /// The first sign-in attempt is replaced by a second.
    pub superseded: bool,
    /// Where sign-in links point: `{origin}/_sandbox/sign-in/{session}`.
    pub link_base: String,
    /// The call an approval holds: its id, tool and input.
    held_call: Option<(String, &'static str, Value)>,
    /// The sign-in attempt awaiting the browser, with the call it interrupted.
    attempt: Option<(String, String)>,
    /// Attempts a newer one replaced.
    pub replaced: Vec<String>,
}

/// The service a sandbox sign-in is for.
const SERVICE: &str = "notes";
const SERVICE_LABEL: &str = "Sandbox Notes";

impl Agent {
    /// Asks what `knobs` say.
    pub fn asking(mut self, knobs: &AskKnobs) -> Self {
        self.asks.approval = knobs.approval;
        self.asks.sign_in = knobs.sign_in;
        self.asks.superseded = knobs.superseded;
        self.asks.link_base = knobs.link_base.clone();
        self
    }

    /// Before a round's search: the sign-in, once, when the knob asks (B and 27).
    pub(super) fn sign_in_first(&mut self, out: &mut Vec<Ev>) -> Option<After> {
        if !self.asks.sign_in || self.proto == MissionProtocol::EveA {
            return None;
        }
        self.asks.sign_in = false;
        self.step_started(out);
        let narration = format!("Looking in your notes for {}.", self.topic());
        self.say(out, &narration, "tool-calls");
        let call_id = self.id("call");
        let input = json!({"query": self.topic()});
        out.push(self.in_step(
            "actions.requested",
            json!({"actions": [{"kind": "tool-call", "callId": call_id, "toolName": "notes_search", "input": input}]}),
        ));
        let first = self.attempt_id();
        self.open_attempt(out, &call_id, &first, true);
        if std::mem::take(&mut self.asks.superseded) {
            let second = self.attempt_id();
            self.open_attempt(out, &call_id, &second, false);
            match self.proto {
                MissionProtocol::Eve27 => out.push(self.v27(vec![fact(
                    &self.turn_id,
                    "interaction.settled",
                    json!({"interactionId": first, "outcome": "failed",
                           "reason": "Superseded by a newer authorization attempt."}),
                )])),
                _ => out.push(self.in_turn(
                    "authorization.completed",
                    json!({"name": SERVICE, "attemptId": first, "outcome": "failed",
                           "reason": "Superseded by a newer authorization attempt."}),
                )),
            }
            self.asks.replaced.push(first);
            self.hold_for_sign_in(out, &second);
        } else {
            self.hold_for_sign_in(out, &first);
        }
        Some(After::Held)
    }

    fn attempt_id(&mut self) -> String {
        match self.proto {
            MissionProtocol::Eve27 => self.id("int"),
            _ => self.id("att"),
        }
    }

    /// One attempt's challenge: B's `authorization.required`; 27's interrupted call (the
    /// first time) and its `sign-in` interaction.
    fn open_attempt(&mut self, out: &mut Vec<Ev>, call_id: &str, attempt: &str, first: bool) {
        let n = random_u64();
        let code = format!("{:04X}-{:04X}", (n >> 16) & 0xffff, n & 0xffff);
        let url = format!("{}/{attempt}", self.asks.link_base);
        let expires = rfc3339(now_ms() + 15 * 60 * 1000);
        let instructions = format!(
            "Open the page, check that it shows the code {code}, and allow Casebook's research agent to read your notes."
        );
        self.asks.attempt = Some((attempt.to_owned(), call_id.to_owned()));
        if self.proto == MissionProtocol::Eve27 {
            let mut facts = Vec::new();
            if first {
                facts.push(fact(
                    &self.turn_id,
                    "call.started",
                    json!({"callId": call_id}),
                ));
                facts.push(fact(
                    &self.turn_id,
                    "call.settled",
                    json!({"callId": call_id, "outcome": "interrupted", "reason": "authorization-required"}),
                ));
            }
            facts.push(fact(
                &self.turn_id,
                "interaction.opened",
                json!({"interactionId": attempt, "subject": {"callId": call_id}, "request": {
                    "kind": "sign-in",
                    "prompt": format!("Sign in to {SERVICE_LABEL} so the agent can search your notes."),
                    "signIn": {"name": SERVICE, "displayName": SERVICE_LABEL, "url": url,
                               "userCode": code, "expiresAt": expires, "instructions": instructions},
                }}),
            ));
            out.push(self.v27(facts));
        } else {
            out.push(self.in_step(
                "authorization.required",
                json!({"name": SERVICE, "description": format!("Sign in to {SERVICE_LABEL} so the agent can search your notes."),
                       "attemptId": attempt,
                       "authorization": {"url": url, "userCode": code, "expiresAt": expires, "instructions": instructions},
                       "webhookUrl": format!("{}/callback", self.asks.link_base)}),
            ));
        }
    }

    /// B (as eve 0.70 and later): `turn.waiting {on: "input"}`; 27: `turn.paused`.
    fn hold_for_sign_in(&mut self, out: &mut Vec<Ev>, attempt: &str) {
        if self.proto == MissionProtocol::Eve27 {
            let paused = fact(
                &self.turn_id,
                "turn.paused",
                json!({"turnId": self.turn_id, "awaiting": [{"interactionId": attempt}]}),
            );
            out.push(self.v27(vec![paused]));
        } else {
            let usage = self.total_usage();
            out.push(self.in_turn("turn.waiting", json!({"on": "input", "usage": usage})));
        }
    }

    /// The attempt the browser may complete now, if one waits.
    pub fn sign_in_pending(&self) -> Option<&str> {
        self.asks.attempt.as_ref().map(|(a, _)| a.as_str())
    }

    /// The browser's callback for `attempt`: the sign-in settles and the turn goes on.
    /// `None` when no such attempt waits.
    pub fn signed_in(&mut self, attempt: &str, delivery: &str) -> Option<(Vec<Ev>, After)> {
        if self.sign_in_pending() != Some(attempt) {
            return None;
        }
        let (attempt, call_id) = self.asks.attempt.take()?;
        let mut out = Vec::new();
        if self.proto == MissionProtocol::Eve27 {
            let response = format!("rsp_{:016x}", random_u64());
            let t = self.turn_id.clone();
            out.push(self.v27(vec![
                json!({"type": "delivery.admitted", "data": {"deliveryId": delivery, "source": {"callback": {"interactionId": attempt}}}}),
                fact(&t, "response.submitted", json!({"responseId": response, "interactionId": attempt, "deliveryId": delivery})),
                fact(&t, "interaction.settled", json!({"interactionId": attempt, "outcome": "accepted", "cause": {"responseId": response}})),
                fact(&t, "turn.resumed", json!({"turnId": t, "cause": {"deliveryId": delivery}})),
            ]));
        } else {
            out.push(self.in_turn(
                "authorization.completed",
                json!({"name": SERVICE, "attemptId": attempt, "outcome": "authorized"}),
            ));
        }
        let found = format!("3 notes on {}.", self.topic());
        out.push(self.in_step(
            "action.result",
            json!({"status": "completed", "result": {
                "kind": "tool-result", "callId": call_id, "toolName": "notes_search",
                "output": {"text": found},
            }}),
        ));
        self.step_completed(&mut out, "tool-calls");
        let after = self.rounds_and_report(&mut out);
        Some((out, after))
    }

    /// Before the first source read: asks to approve it, once, when the knob asks.
    pub(super) fn approval_first(
        &mut self,
        out: &mut Vec<Ev>,
        narration: &str,
        input: Value,
    ) -> Option<After> {
        if !self.asks.approval || self.proto == MissionProtocol::EveA {
            return None;
        }
        self.asks.approval = false;
        let tool = "read_source";
        let call_id = self.call_request(out, narration, tool, &input);
        let request_id = self.id("req");
        let url = input["url"].as_str().unwrap_or_default().to_owned();
        // eve 1.x offers approve and deny, labels only; B (since 0.32) approve and cancel.
        let options = if self.proto == MissionProtocol::Eve27 {
            json!([{"id": "approve", "label": "Approve"}, {"id": "deny", "label": "Deny"}])
        } else {
            json!([
                {"id": "approve", "label": "Approve", "style": "primary"},
                {"id": "cancel", "label": "Cancel", "description": "The agent goes on without this source.", "style": "danger"},
            ])
        };
        self.ask(
            out,
            json!({
                "requestId": request_id,
                "kind": "tool-approval",
                "title": "Read a source?",
                "prompt": format!("The agent wants to read {url}."),
                "options": options,
                "allowFreeform": false,
                "display": "confirmation",
                "action": {"kind": "tool-call", "callId": call_id, "toolName": tool, "input": input},
            }),
        );
        self.asks.held_call = Some((call_id, tool, input));
        let usage = self.total_usage();
        if self.proto == MissionProtocol::EveB {
            out.push(self.in_turn("turn.waiting", json!({"on": "input", "usage": usage})));
        }
        Some(After::Held)
    }

    /// The answer to an approval: `approve` runs the call, `deny` (B: `cancel`) rejects it.
    pub(super) fn approval_answered(
        &mut self,
        open: &Open,
        response: Value,
        delivery: Option<&str>,
    ) -> (Vec<Ev>, After) {
        let approved = response["optionId"] == "approve";
        let outcome = if approved { "approved" } else { "denied" };
        let mut out = vec![self.resolution(open, outcome, Some(response), None, delivery)];
        self.finish_held_call(&mut out, if approved { None } else { Some("rejected") });
        let after = self.rounds_and_report(&mut out);
        (out, after)
    }

    /// A message while an approval is pending withdraws it (B: `ignored`; 27:
    /// `withdrawn`, `superseded-by-message`); the call is dropped and the turn goes on
    /// with the message.
    pub fn approval_withdrawn(
        &mut self,
        open: &Open,
        text: &str,
        delivery: Option<&str>,
    ) -> (Vec<Ev>, After) {
        let mut out = vec![self.resolution(
            open,
            "ignored",
            None,
            Some("superseded-by-message"),
            delivery,
        )];
        self.finish_held_call(&mut out, Some("cancelled"));
        out.push(self.steer(text, delivery));
        let after = self.rounds_and_report(&mut out);
        (out, after)
    }

    fn resolution(
        &self,
        open: &Open,
        outcome: &str,
        response: Option<Value>,
        reason: Option<&str>,
        delivery: Option<&str>,
    ) -> Ev {
        let mut r = json!({"requestId": open.request_id, "kind": open.kind, "outcome": outcome});
        if let Some(v) = response {
            r["response"] = v;
        }
        if let Some(why) = reason {
            r["reason"] = json!(why);
        }
        let mut ev = self.in_turn(
            "input.resolved",
            json!({"stepIndex": self.step, "resolutions": [r]}),
        );
        ev.delivery = delivery.map(str::to_owned);
        ev
    }

    /// The held call's end: its result when approved, else `refused` (`rejected`,
    /// `cancelled`) with nothing read.
    fn finish_held_call(&mut self, out: &mut Vec<Ev>, refused: Option<&str>) {
        let Some((call_id, tool, input)) = self.asks.held_call.take() else {
            return;
        };
        match refused {
            None => self.call_result(out, &call_id, tool, input),
            Some(status) => {
                out.push(self.in_step(
                    "action.result",
                    json!({"status": status, "result": {
                        "kind": "tool-result", "callId": call_id, "toolName": tool, "output": null,
                    }}),
                ));
                self.step_completed(out, "tool-calls");
            }
        }
    }

    /// A 27 line written as its facts (what has no v26 event to map from).
    fn v27(&self, facts: Vec<Value>) -> Ev {
        self.ev("v27.facts", json!({ "facts": facts }))
    }
}

fn fact(turn: &str, ty: &str, data: Value) -> Value {
    json!({"type": ty, "scope": {"turnId": turn}, "data": data})
}
