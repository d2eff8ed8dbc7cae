//! The investigation service in eve's protocol (`missionProtocol` = `eve-a`, `eve-b`,
//! `eve-27`), over loopback HTTP with a plain HTTP client and a line splitter written
//! here, not Casebook's.

mod common;

use casebook_sandbox::{MissionProtocol, RunningSandbox, SandboxConfig, StreamRequest, start};
use common::{MESSAGE, PATIENCE, client, set_faults};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::time::Duration;

const ALL: [MissionProtocol; 3] = [
    MissionProtocol::EveA,
    MissionProtocol::EveB,
    MissionProtocol::Eve27,
];

const AMBIGUOUS: &str = "MISSION TYPE: research\nMISSION BUDGET TYPE: fixed\nMISSION BUDGET (hard maximum): $25.00 USD\nMISSION OBJECTIVE:\n\nAn Ambiguous question: how does urban heat affect hospital admissions?";

async fn sandbox(proto: MissionProtocol) -> RunningSandbox {
    let sb = start(SandboxConfig {
        mission_protocol: proto,
        ..common::config()
    })
    .await
    .expect("sandbox starts");
    // Short leases, so a B or 27 stream read "whole" ends quickly.
    assert_eq!(set_faults(&sb, json!({"leaseSeconds": 1})).await, 200);
    sb
}

fn url(sb: &RunningSandbox, path: &str) -> String {
    format!("{}/eve/v1{path}", sb.base_url())
}

async fn post(
    sb: &RunningSandbox,
    path: &str,
    body: Value,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let resp = client()
        .post(url(sb, path))
        .bearer_auth(sb.key())
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.json().await.unwrap_or(Value::Null);
    (status, headers, body)
}

/// Creates a session; its id and the create answer's body.
async fn create_with(sb: &RunningSandbox, body: Value) -> (String, Value) {
    let (status, headers, reply) = post(sb, "/session", body).await;
    assert_eq!(status, 202, "{reply}");
    let id = reply["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(headers["x-eve-session-id"], id.as_str());
    (id, reply)
}

async fn create(sb: &RunningSandbox) -> (String, Value) {
    create_with(sb, json!({"message": MESSAGE})).await
}

struct Read {
    headers: reqwest::header::HeaderMap,
    body: String,
    /// Stored records, as sent (blank lines and `$eve` records left out).
    records: Vec<String>,
    /// `$eve` transport records.
    transport: Vec<Value>,
}

impl Read {
    fn values(&self) -> Vec<Value> {
        self.records
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// A/B: the `type` of each record.
    fn types(&self) -> Vec<String> {
        self.values()
            .iter()
            .map(|v| v["type"].as_str().unwrap().to_owned())
            .collect()
    }

    /// 27: the fact and progress types, in order.
    fn fact_types(&self) -> Vec<String> {
        let mut out = Vec::new();
        for v in self.values() {
            if let Some(facts) = v["facts"].as_array() {
                out.extend(facts.iter().map(|f| f["type"].as_str().unwrap().to_owned()));
            } else {
                out.push(v["progress"]["type"].as_str().unwrap().to_owned());
            }
        }
        out
    }

    /// Every event or fact of the given type, with its data.
    fn data_of(&self, ty: &str) -> Vec<Value> {
        common::data_of(&self.values(), ty)
    }
}

/// One stream response read to its end.
async fn read(sb: &RunningSandbox, id: &str, query: &str) -> Read {
    let resp = client()
        .get(url(sb, &format!("/session/{id}/stream{query}")))
        .bearer_auth(sb.key())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let headers = resp.headers().clone();
    let body = tokio::time::timeout(PATIENCE, resp.text())
        .await
        .expect("the response ends")
        .unwrap();
    let mut records = Vec::new();
    let mut transport = Vec::new();
    for line in body.split('\n').filter(|l| !l.is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(v.is_object(), "{line}");
        if v.get("$eve").is_some() {
            transport.push(v);
        } else {
            records.push(line.to_owned());
        }
    }
    Read {
        headers,
        body,
        records,
        transport,
    }
}

/// Waits until the session's log has stopped growing (instant pace: a turn is out
/// within milliseconds).
async fn settle() {
    tokio::time::sleep(Duration::from_millis(300)).await;
}

fn version(proto: MissionProtocol) -> &'static str {
    match proto {
        MissionProtocol::EveA => "19",
        MissionProtocol::EveB => "26",
        _ => "27",
    }
}

/// The sandbox question's option `n`, by the id `proto` names it with: its label from B on
/// (as eve 0.80 and 1.x's ask_question), the model's id in A (as eve 0.30).
fn option(proto: MissionProtocol, n: usize) -> &'static str {
    match (proto, n) {
        (MissionProtocol::EveA, 0) => "recent",
        (MissionProtocol::EveA, _) => "all",
        (_, 0) => "The last five years",
        _ => "All years",
    }
}

/// A follow-up answering with `list` (each `{requestId, optionId | text}`) as `proto`
/// takes it: eve 1.x's `answers` by `interactionId`, `inputResponses` before.
fn answers(proto: MissionProtocol, list: Vec<Value>) -> Value {
    if proto != MissionProtocol::Eve27 {
        return json!({ "inputResponses": list });
    }
    let list: Vec<Value> = list
        .into_iter()
        .map(|mut a| {
            let id = a.as_object_mut().unwrap().remove("requestId").unwrap();
            a["interactionId"] = id;
            a
        })
        .collect();
    json!({ "answers": list })
}

#[tokio::test]
async fn create_answers_202_with_the_header_and_each_generations_body() {
    for proto in ALL {
        let sb = sandbox(proto).await;
        let (_, reply) = create(&sb).await;
        assert_eq!(reply["ok"], true);
        if proto == MissionProtocol::EveA {
            assert!(
                reply["continuationToken"]
                    .as_str()
                    .unwrap()
                    .starts_with("eve:")
            );
            assert!(reply.get("status").is_none());
        } else {
            if proto == MissionProtocol::Eve27 {
                // eve 1.x: the create's delivery, and no status.
                assert!(reply["deliveryId"].as_str().unwrap().starts_with("dlv_"));
                assert!(reply.get("status").is_none());
            } else {
                assert_eq!(reply["status"], "accepted");
            }
            assert!(reply.get("continuationToken").is_none());
            let (status, _, body) = post(
                &sb,
                "/session",
                json!({"message": MESSAGE, "continuationToken": "eve:x"}),
            )
            .await;
            assert_eq!(status, 400);
            assert_eq!(
                body,
                json!({"ok": false, "error": "Session-ID routes do not accept 'continuationToken'."})
            );
        }
        let (status, _, body) = post(&sb, "/session", json!({"message": "hello"})).await;
        assert_eq!(status, 400);
        assert_eq!(body["ok"], false);
        assert!(body["error"].is_string());
    }
}

#[tokio::test]
async fn the_default_is_legacy_and_the_knob_applies_to_new_sessions_only() {
    let sb = common::sandbox().await;
    let old = common::create(&sb, json!({})).await;
    assert_eq!(
        set_faults(&sb, json!({"missionProtocol": "eve-b"})).await,
        200
    );
    let (new, reply) = create(&sb).await;
    assert_eq!(reply["status"], "accepted");
    let legacy = common::request(&sb, &old, None).await;
    assert_eq!(legacy.headers()["content-type"], "text/event-stream");
    set_faults(&sb, json!({"leaseSeconds": 1})).await;
    let r = read(&sb, &new, "").await;
    assert_eq!(r.headers["x-eve-stream-version"], "26");
    assert_eq!(
        set_faults(&sb, json!({"missionProtocol": "eve-9"})).await,
        400
    );
    assert_eq!(set_faults(&sb, json!({"clear": true})).await, 200);
    let status = client()
        .post(url(&sb, "/session"))
        .bearer_auth(sb.key())
        .json(&json!({"message": MESSAGE}))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 201, "clear goes back to the start-up protocol");
}

#[tokio::test]
async fn a_whole_stream_is_ndjson_of_the_documented_shapes_and_spend_stays_under_budget() {
    for proto in ALL {
        let sb = sandbox(proto).await;
        let (id, _) = create(&sb).await;
        settle().await;
        let r = read(&sb, &id, "").await;
        let h = &r.headers;
        assert_eq!(h["content-type"], "application/x-ndjson; charset=utf-8");
        assert_eq!(h["x-eve-session-id"], id.as_str());
        assert_eq!(h["x-eve-stream-format"], "ndjson");
        assert_eq!(h["x-eve-stream-version"], version(proto));
        assert_eq!(h["cache-control"], "no-store, no-transform");
        assert!(h.get("x-eve-stream-tail-index").is_none());
        assert!(r.body.starts_with('\n'), "{proto:?}");
        let cost: f64 = if proto == MissionProtocol::Eve27 {
            r.data_of("usage.recorded")
                .iter()
                .map(|u| u["usage"]["costUsd"].as_f64().unwrap())
                .sum()
        } else {
            r.data_of("step.completed")
                .iter()
                .map(|u| u["usage"]["costUsd"].as_f64().unwrap())
                .sum()
        };
        assert!(cost > 0.0 && cost < 25.0, "{proto:?}: {cost}");
        match proto {
            MissionProtocol::Eve27 => {
                for v in r.values() {
                    let commit =
                        v["at"].is_string() && v["facts"].as_array().is_some_and(|f| !f.is_empty());
                    let progress =
                        v["progress"]["type"].is_string() && v["progress"]["data"].is_object();
                    assert!(commit ^ progress, "{v}");
                    for f in v["facts"].as_array().into_iter().flatten() {
                        assert!(f["type"].is_string() && f["data"].is_object(), "{f}");
                    }
                }
                let types = r.fact_types();
                for t in [
                    "session.started",
                    "turn.started",
                    "delivery.admitted",
                    "delivery.consumed",
                    "model.requested",
                    "model.started",
                    "content.delta",
                    "content.completed",
                    "call.requested",
                    "call.input",
                    "call.settled",
                    "model.settled",
                    "usage.recorded",
                    "turn.settled",
                    "delivery.settled",
                ] {
                    assert!(types.iter().any(|x| x == t), "no {t}");
                }
                // The reply is a fact, its deltas progress; they agree.
                let deltas: String = r
                    .data_of("content.delta")
                    .iter()
                    .filter(|d| d["partId"].as_str().unwrap().ends_with("_text"))
                    .map(|d| d["delta"].as_str().unwrap().to_owned())
                    .collect();
                let texts: String = r
                    .data_of("content.completed")
                    .iter()
                    .filter(|d| d["kind"] == "text")
                    .map(|d| d["value"].as_str().unwrap().to_owned())
                    .collect();
                assert_eq!(deltas, texts);
                assert!(texts.contains('“') && texts.contains('é') && texts.contains('🔎'));
                assert_eq!(r.transport[0], json!({"$eve": "heartbeat"}));
                assert_eq!(
                    r.transport.last().unwrap(),
                    &json!({"$eve": "stream.lease-ended"})
                );
            }
            _ => {
                let mut ids = HashSet::new();
                for v in r.values() {
                    assert!(v["type"].is_string() && v["data"].is_object(), "{v}");
                    assert!(v["meta"]["at"].as_str().unwrap().ends_with('Z'));
                    if proto == MissionProtocol::EveB {
                        let id = v["meta"]["id"].as_str().unwrap();
                        assert!(id.starts_with("evt_") && id.len() == 30, "{id}");
                        assert!(ids.insert(id.to_owned()), "duplicate {id}");
                    } else {
                        assert!(v["meta"].get("id").is_none());
                    }
                }
                let types = r.types();
                assert_eq!(types[0], "session.started");
                assert_eq!(types[1], "turn.started");
                assert_eq!(types[2], "message.received");
                assert_eq!(types.last().unwrap(), "session.waiting");
                assert_eq!(types[types.len() - 2], "turn.completed");
                for t in [
                    "step.started",
                    "reasoning.appended",
                    "reasoning.completed",
                    "message.appended",
                    "message.completed",
                    "actions.requested",
                    "action.input.appended",
                    "action.result",
                    "step.completed",
                ] {
                    assert!(types.iter().any(|x| x == t), "no {t}");
                }
                let received = &r.data_of("message.received")[0];
                assert_eq!(received["message"], MESSAGE);
                let report = r.data_of("message.completed").pop().unwrap();
                assert_eq!(report["finishReason"], "stop");
                assert!(report["message"].as_str().unwrap().contains("](https://"));
                let waiting = r.data_of("session.waiting").pop().unwrap();
                assert_eq!(waiting["wait"], "next-user-message");
                if proto == MissionProtocol::EveA {
                    assert!(
                        waiting["continuationToken"]
                            .as_str()
                            .unwrap()
                            .starts_with("eve:")
                    );
                    assert!(r.transport.is_empty(), "A ends at the boundary");
                } else {
                    assert_eq!(waiting["continuationToken"], "");
                    assert_eq!(
                        r.transport,
                        vec![json!({"$eve": "stream.lease-ended", "version": 1})]
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn start_index_reads_from_that_position_and_minus_one_reads_the_last() {
    for proto in ALL {
        let sb = sandbox(proto).await;
        let (id, _) = create(&sb).await;
        settle().await;
        let whole = read(&sb, &id, "").await.records;
        let n = whole.len();
        for k in [0, 1, 7, n / 2, n - 1] {
            let part = read(&sb, &id, &format!("?startIndex={k}")).await.records;
            assert_eq!(part, whole[k..], "{proto:?} from {k}");
        }
        let last = read(&sb, &id, "?startIndex=-1").await.records;
        assert_eq!(last, whole[n - 1..]);
        let last3 = read(&sb, &id, "?startIndex=-3").await.records;
        assert_eq!(last3, whole[n - 3..]);
        for bad in ["1.5", "abc", "1e3", "--1"] {
            let resp = client()
                .get(url(&sb, &format!("/session/{id}/stream?startIndex={bad}")))
                .bearer_auth(sb.key())
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 400);
            let body: Value = resp.json().await.unwrap();
            assert_eq!(body["error"], "Expected startIndex to be an integer.");
            assert_eq!(body["ok"], false);
        }
        let r = read(&sb, &id, "?startIndex=-1&includeTailIndex=1").await;
        assert_eq!(
            r.headers["x-eve-stream-tail-index"],
            (n - 1).to_string().as_str()
        );
        if proto == MissionProtocol::Eve27 {
            let r = read(&sb, &id, &format!("?startIndex={}", n + 50)).await;
            assert!(r.records.is_empty());
            assert!(
                r.transport
                    .contains(&json!({"$eve": "position", "next": n}))
            );
        }
        let log = sb.stream_requests(&id);
        assert_eq!(
            log[0],
            StreamRequest {
                start_index: None,
                include_tail_index: false
            }
        );
        assert_eq!(log[1].start_index, Some(0));
        assert!(
            log.iter()
                .any(|r| r.start_index == Some(-1) && r.include_tail_index)
        );
    }
}

#[tokio::test]
async fn the_stream_request_log_is_served_over_http() {
    let sb = sandbox(MissionProtocol::EveB).await;
    let (id, _) = create(&sb).await;
    settle().await;
    read(&sb, &id, "?startIndex=4&includeTailIndex=true").await;
    let resp = client()
        .get(format!(
            "{}/_sandbox/stream-requests?sessionId={id}",
            sb.base_url()
        ))
        .bearer_auth(sb.key())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        body["requests"],
        json!([{"startIndex": 4, "includeTailIndex": true}])
    );
    let anon = client()
        .get(format!(
            "{}/_sandbox/stream-requests?sessionId={id}",
            sb.base_url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(anon.status(), 401);
}

/// A follow-up: the status and body.
async fn follow(sb: &RunningSandbox, id: &str, body: Value) -> (u16, Value) {
    let (status, _, body) = post(sb, &format!("/session/{id}"), body).await;
    (status, body)
}

#[tokio::test]
async fn a_reply_to_a_waiting_session_starts_a_new_turn_after_the_old_records() {
    for proto in ALL {
        let sb = sandbox(proto).await;
        let (id, created) = create(&sb).await;
        settle().await;
        let first = read(&sb, &id, "").await;
        let n = first.records.len();
        let mut body = json!({"message": "Thanks — and what about “night-time” heat?"});
        if proto == MissionProtocol::EveA {
            let token = first.data_of("session.waiting")[0]["continuationToken"].clone();
            assert_ne!(token, created["continuationToken"]);
            body["continuationToken"] = token;
        }
        let (status, reply) = follow(&sb, &id, body).await;
        if proto == MissionProtocol::EveA {
            assert_eq!(
                (status, &reply),
                (200, &json!({"ok": true, "sessionId": id}))
            );
        } else {
            assert_eq!(status, 202);
            if proto == MissionProtocol::Eve27 {
                assert!(reply.get("status").is_none(), "{reply}");
            } else {
                assert_eq!(reply["status"], "accepted");
            }
            assert!(reply["deliveryId"].as_str().unwrap().starts_with("dlv_"));
        }
        settle().await;
        let next = read(&sb, &id, &format!("?startIndex={n}")).await;
        let whole = read(&sb, &id, "").await;
        assert_eq!(whole.records[..n], first.records[..]);
        assert_eq!(whole.records[n..], next.records[..]);
        if proto == MissionProtocol::Eve27 {
            let types = next.fact_types();
            assert_eq!(types[0], "turn.started");
            let first_turn = &first.data_of("turn.started")[0];
            assert_eq!(first_turn["follows"], Value::Null);
            let second = &next.data_of("turn.started")[0];
            assert_eq!(second["follows"], first_turn["turnId"]);
            assert_eq!(second["cause"]["deliveryId"], reply["deliveryId"]);
            let settled = next.data_of("delivery.settled");
            assert_eq!(settled[0]["deliveryId"], reply["deliveryId"]);
            assert_eq!(settled[0]["outcome"], "handled");
            let consumed = next.data_of("delivery.consumed");
            assert_eq!(
                consumed[0]["parts"][0]["text"],
                "Thanks — and what about “night-time” heat?"
            );
            assert!(types.iter().any(|t| t == "turn.settled"));
        } else {
            let types = next.types();
            assert_eq!(types[..2], ["turn.started", "message.received"]);
            assert_eq!(types.last().unwrap(), "session.waiting");
            let started = &next.data_of("turn.started")[0];
            assert_eq!(started["sequence"], 2);
            // A: the replay from 0 ran past the first turn's boundary to the newest.
            assert_eq!(whole.data_of("session.waiting").len(), 2);
        }
    }
}

#[tokio::test]
async fn a_ambiguous_objective_asks_and_holds_the_turn_then_answers_carry_it_on() {
    for proto in ALL {
        for by_option in [true, false] {
            let sb = sandbox(proto).await;
            let (id, created) = create_with(&sb, json!({"message": AMBIGUOUS})).await;
            settle().await;
            let held = read(&sb, &id, "").await;
            let n = held.records.len();
            let request_id;
            match proto {
                MissionProtocol::Eve27 => {
                    let opened = &held.data_of("interaction.opened")[0];
                    assert_eq!(opened["request"]["kind"], "question");
                    assert_eq!(opened["request"]["allowFreeform"], true);
                    request_id = opened["interactionId"].as_str().unwrap().to_owned();
                    let paused = held.data_of("turn.paused");
                    assert_eq!(
                        paused[0]["awaiting"],
                        json!([{"interactionId": request_id}])
                    );
                    assert!(held.data_of("turn.settled").is_empty());
                }
                _ => {
                    let requested = &held.data_of("input.requested")[0]["requests"][0];
                    assert_eq!(requested["kind"], "question");
                    assert_eq!(requested["display"], "select");
                    assert_eq!(requested["allowFreeform"], true);
                    assert!(requested["options"][0]["id"].is_string());
                    request_id = requested["requestId"].as_str().unwrap().to_owned();
                    let types = held.types();
                    if proto == MissionProtocol::EveA {
                        assert_eq!(types.last().unwrap(), "session.waiting");
                    } else {
                        assert_eq!(types.last().unwrap(), "turn.waiting");
                        assert_eq!(held.data_of("turn.waiting")[0]["on"], "input");
                        assert!(!types.iter().any(|t| t == "session.waiting"));
                    }
                }
            }
            let answer = if by_option {
                json!({"requestId": request_id, "optionId": option(proto, 0)})
            } else {
                json!({"requestId": request_id, "text": "Only Europe, since 2020"})
            };
            let mut body = answers(proto, vec![answer]);
            if proto == MissionProtocol::EveA {
                let bad_option = json!({"inputResponses": [{"requestId": request_id, "optionId": "nope"}],
                                        "continuationToken": created["continuationToken"]});
                let (status, _) = follow(&sb, &id, bad_option).await;
                assert_eq!(
                    status, 400,
                    "the create's token is stale after session.waiting"
                );
                body["continuationToken"] =
                    held.data_of("session.waiting")[0]["continuationToken"].clone();
            }
            // Wrong answers first: an unknown option, an unknown request.
            let token = body.get("continuationToken").cloned();
            let wrong_with = |a: Value| {
                let mut w = answers(proto, vec![a]);
                if let Some(t) = &token {
                    w["continuationToken"] = t.clone();
                }
                w
            };
            let wrong = wrong_with(json!({"requestId": request_id, "optionId": "nope"}));
            let (status, err) = follow(&sb, &id, wrong).await;
            let mut n = n;
            if proto == MissionProtocol::Eve27 {
                // eve 1.x takes it, then refuses it on the stream; the question stays open.
                assert_eq!(status, 202, "{err}");
                settle().await;
                let r = read(&sb, &id, "").await;
                let settled = r.data_of("response.settled");
                assert_eq!(settled.last().unwrap()["outcome"], "refused", "{err}");
                assert_eq!(r.data_of("interaction.settled").len(), 0);
                n = r.records.len();
            } else {
                assert_eq!(status, 400, "{err}");
                assert!(err["error"].as_str().unwrap().contains("nope"));
            }
            let wrong = wrong_with(json!({"requestId": "req_unknown", "optionId": "recent"}));
            assert_eq!(follow(&sb, &id, wrong).await.0, 400);

            let (status, _) = follow(&sb, &id, body).await;
            assert_eq!(
                status,
                if proto == MissionProtocol::EveA {
                    200
                } else {
                    202
                }
            );
            settle().await;
            let after = read(&sb, &id, &format!("?startIndex={n}")).await;
            let expected = if by_option {
                json!({"optionId": option(proto, 0)})
            } else {
                json!({"text": "Only Europe, since 2020"})
            };
            match proto {
                MissionProtocol::Eve27 => {
                    // As eve 1.0.1 takes an answer (tests/eve-agent/WIRE.md): no record
                    // says the held turn resumed; it goes on.
                    let types = after.fact_types();
                    assert_eq!(
                        types[..5],
                        [
                            "delivery.admitted",
                            "response.submitted",
                            "response.settled",
                            "interaction.settled",
                            "delivery.consumed"
                        ]
                    );
                    assert!(!types.iter().any(|t| t == "turn.resumed"), "{types:?}");
                    assert_eq!(after.data_of("response.submitted")[0]["value"], expected);
                    let settled = &after.data_of("interaction.settled")[0];
                    assert_eq!(settled["interactionId"], request_id.as_str());
                    // eve's closed set of outcomes (`session-events/catalog.ts`).
                    let outcomes = [
                        "accepted",
                        "declined",
                        "invalid",
                        "failed",
                        "withdrawn",
                        "interrupted",
                        "abandoned",
                        "expired",
                    ];
                    assert!(outcomes.contains(&settled["outcome"].as_str().unwrap()));
                    assert_eq!(settled["outcome"], "accepted");
                    assert!(types.iter().any(|t| t == "call.requested"));
                    assert_eq!(after.data_of("turn.settled")[0]["outcome"], "completed");
                }
                _ => {
                    let types = after.types();
                    let resolved_at = if proto == MissionProtocol::EveA {
                        assert_eq!(types[0], "turn.started", "A answers in a new turn");
                        1
                    } else {
                        0
                    };
                    assert_eq!(types[resolved_at], "input.resolved");
                    let resolution = &after.data_of("input.resolved")[0]["resolutions"][0];
                    assert_eq!(resolution["requestId"], request_id.as_str());
                    assert_eq!(resolution["outcome"], "answered");
                    assert_eq!(resolution["response"], expected);
                    assert!(types.iter().any(|t| t == "actions.requested"));
                    assert_eq!(types.last().unwrap(), "session.waiting");
                }
            }
        }
    }
}

#[tokio::test]
async fn a_long_mission_asks_at_the_budget_limit() {
    for proto in ALL {
        let sb = sandbox(proto).await;
        let (id, _) = create_with(&sb, json!({"message": MESSAGE, "events": 1000})).await;
        settle().await;
        let r = read(&sb, &id, "").await;
        // Summed in whole cents, as the sandbox counts them: dollars summed as floats
        // land a hair under the 90% line (22.499999999999996).
        let cents = |u: &Value| (u["usage"]["costUsd"].as_f64().unwrap() * 100.0).round() as u64;
        let (request_id, spent): (String, u64) = if proto == MissionProtocol::Eve27 {
            let opened = &r.data_of("interaction.opened")[0];
            assert_eq!(opened["request"]["kind"], "budget");
            let spent = r.data_of("usage.recorded").iter().map(cents).sum();
            (opened["interactionId"].as_str().unwrap().to_owned(), spent)
        } else {
            let req = &r.data_of("input.requested")[0]["requests"][0];
            assert_eq!(req["kind"], "session-limit");
            let ids: Vec<_> = req["options"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["id"].clone())
                .collect();
            assert_eq!(ids, [json!("continue"), json!("stop")]);
            let spent = r.data_of("step.completed").iter().map(cents).sum();
            (req["requestId"].as_str().unwrap().to_owned(), spent)
        };
        assert!((2250..2500).contains(&spent), "{spent} cents");
        let mut body = answers(
            proto,
            vec![json!({"requestId": request_id, "optionId": "stop"})],
        );
        let mut text = answers(
            proto,
            vec![json!({"requestId": request_id, "text": "go on"})],
        );
        if proto == MissionProtocol::EveA {
            body["continuationToken"] =
                r.data_of("session.waiting")[0]["continuationToken"].clone();
            text["continuationToken"] = body["continuationToken"].clone();
        }
        // A budget prompt takes no free text (eve 1.x: taken, then refused on the stream).
        let refused = if proto == MissionProtocol::Eve27 {
            202
        } else {
            400
        };
        assert_eq!(follow(&sb, &id, text).await.0, refused);
        assert!(follow(&sb, &id, body).await.0 < 300);
        settle().await;
        let r = read(&sb, &id, &format!("?startIndex={}", r.records.len())).await;
        let finished = if proto == MissionProtocol::Eve27 {
            r.data_of("turn.settled").len()
        } else {
            r.data_of("turn.completed").len()
        };
        assert_eq!(finished, 1, "{proto:?}");
    }
}

#[tokio::test]
async fn token_rules_a_requires_the_newest_b_and_27_refuse_one() {
    for proto in ALL {
        let sb = sandbox(proto).await;
        let (id, created) = create(&sb).await;
        settle().await;
        let (status, body) = follow(&sb, &id, json!({"message": "more"})).await;
        if proto == MissionProtocol::EveA {
            assert_eq!(status, 400);
            assert_eq!(body["error"], "Missing or empty 'continuationToken' field.");
            let (status, body) = follow(
                &sb,
                &id,
                json!({"message": "more", "continuationToken": created["continuationToken"]}),
            )
            .await;
            assert_eq!(status, 400, "stale: {body}");
            assert!(body["error"].as_str().unwrap().contains("newest"));
        } else {
            assert_eq!(status, 202);
            let (status, body) = follow(
                &sb,
                &id,
                json!({"message": "more", "continuationToken": "eve:x"}),
            )
            .await;
            assert_eq!(status, 400);
            assert_eq!(
                body["error"],
                "Session-ID routes do not accept 'continuationToken'."
            );
            let mut both = answers(proto, vec![json!({"requestId": "r", "optionId": "o"})]);
            both["message"] = json!("more");
            let (status, body) = follow(&sb, &id, both).await;
            assert_eq!(status, 400);
            assert!(
                body["error"]
                    .as_str()
                    .unwrap()
                    .contains("mutually exclusive")
            );
        }
        let (status, body) = follow(&sb, "ses_nope", json!({"message": "x"})).await;
        assert_eq!(
            (status, body),
            (404, json!({"ok": false, "error": "Session not found."}))
        );
    }
}

#[tokio::test]
async fn not_ready_answers_409_then_the_follow_up_goes_through() {
    let sb = sandbox(MissionProtocol::EveB).await;
    let (id, _) = create(&sb).await;
    assert_eq!(set_faults(&sb, json!({"notReady": 2})).await, 200);
    for _ in 0..2 {
        let (status, body) = follow(&sb, &id, json!({"message": "hi"})).await;
        assert_eq!(status, 409);
        assert_eq!(body["code"], "session_not_ready");
        assert_eq!(body["ok"], false);
    }
    assert_eq!(follow(&sb, &id, json!({"message": "hi"})).await.0, 202);
}

#[tokio::test]
async fn stream404_answers_the_next_opens_not_found() {
    let sb = sandbox(MissionProtocol::Eve27).await;
    assert_eq!(set_faults(&sb, json!({"stream404": 2})).await, 200);
    let (id, _) = create(&sb).await;
    for _ in 0..2 {
        let resp = client()
            .get(url(&sb, &format!("/session/{id}/stream")))
            .bearer_auth(sb.key())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 404);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body, json!({"ok": false, "error": "Session not found."}));
    }
    settle().await;
    assert!(!read(&sb, &id, "").await.records.is_empty());
}

#[tokio::test]
async fn cancel_is_accepted_while_a_turn_runs_and_no_active_turn_when_idle() {
    for proto in ALL {
        let sb = sandbox(proto).await;
        let (id, _) = create_with(&sb, json!({"message": MESSAGE, "paceMs": 40})).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let (status, _, body) = post(&sb, &format!("/session/{id}/cancel"), json!({})).await;
        assert_eq!(status, 202);
        assert_eq!(
            (&body["ok"], &body["sessionId"]),
            (&json!(true), &json!(id))
        );
        if proto == MissionProtocol::Eve27 {
            // eve 1.x: the cancel's own delivery, no status.
            assert!(
                body["deliveryId"].is_string() && body.get("status").is_none(),
                "{body}"
            );
        } else {
            assert_eq!(body["status"], "accepted");
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let r = read(&sb, &id, "").await;
        if proto == MissionProtocol::Eve27 {
            let settled = r.data_of("turn.settled");
            assert_eq!(settled.last().unwrap()["outcome"], "cancelled");
        } else {
            let types = r.types();
            assert_eq!(
                types[types.len() - 2..],
                ["turn.cancelled", "session.waiting"]
            );
        }
        let (status, _, body) = post(&sb, &format!("/session/{id}/cancel"), json!({})).await;
        if proto == MissionProtocol::EveA {
            assert_eq!(status, 202);
            assert_eq!(body["status"], "accepted");
        } else if proto == MissionProtocol::Eve27 {
            // eve 1.x takes an idle cancel too (its delivery settles `ignored`).
            assert_eq!(status, 202);
            assert!(body["deliveryId"].is_string(), "{body}");
            let (status, _, body) =
                post(&sb, &format!("/session/{id}/cancel"), json!({"turn": "x"})).await;
            assert_eq!(status, 400, "{body}");
            assert_eq!(
                body["error"],
                "Unknown field 'turn'. Accepted fields: turnId."
            );
        } else {
            assert_eq!(
                (status, body),
                (200, json!({"ok": true, "status": "no_active_turn"}))
            );
        }
    }
}

#[tokio::test]
async fn a_task_session_ends_and_27_says_stream_ended() {
    for proto in ALL {
        let sb = sandbox(proto).await;
        let (id, created) = create_with(&sb, json!({"message": MESSAGE, "mode": "task"})).await;
        settle().await;
        let r = read(&sb, &id, "").await;
        if proto == MissionProtocol::Eve27 {
            let last: Value = serde_json::from_str(r.records.last().unwrap()).unwrap();
            assert_eq!(last["facts"][0]["type"], "session.ended");
            assert_eq!(
                r.transport.last().unwrap(),
                &json!({"$eve": "stream.ended"})
            );
            assert!(
                !r.transport
                    .iter()
                    .any(|t| t["$eve"] == "stream.lease-ended")
            );
        } else {
            assert_eq!(r.types().last().unwrap(), "session.completed");
            assert!(
                r.transport.is_empty(),
                "a completed session's stream just ends"
            );
        }
        let mut body = json!({"message": "again"});
        if proto == MissionProtocol::EveA {
            body["continuationToken"] = created["continuationToken"].clone();
        }
        let (status, body) = follow(&sb, &id, body).await;
        assert_eq!(status, 409, "{body}");
        assert_eq!(body["code"], "session_not_active");
    }
}

#[tokio::test]
async fn ending_a_session_from_the_end_route() {
    let sb = sandbox(MissionProtocol::Eve27).await;
    let (id, _) = create(&sb).await;
    settle().await;
    let (status, _, _) = post(&sb, &format!("/session/{id}/end"), json!({})).await;
    assert_eq!(status, 202);
    settle().await;
    let r = read(&sb, &id, "").await;
    assert_eq!(
        r.transport.last().unwrap(),
        &json!({"$eve": "stream.ended"})
    );
    assert_eq!(r.data_of("session.ended")[0]["outcome"], "completed");
}

#[tokio::test]
async fn a_message_during_a_turn_steers_it() {
    let sb = sandbox(MissionProtocol::EveB).await;
    let (id, _) = create_with(&sb, json!({"message": MESSAGE, "paceMs": 20})).await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(
        follow(&sb, &id, json!({"message": "Focus on Europe."}))
            .await
            .0,
        202
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    set_faults(&sb, json!({"leaseSeconds": 1})).await;
    let r = read(&sb, &id, "").await;
    let types = r.types();
    let received = r.data_of("message.received");
    assert_eq!(received.len(), 2);
    assert_eq!(received[1]["message"], "Focus on Europe.");
    assert_eq!(received[0]["turnId"], received[1]["turnId"]);
    assert_eq!(types.iter().filter(|t| *t == "turn.started").count(), 1);
}

#[tokio::test]
async fn cuts_and_tiny_chunks_lose_nothing_on_resume() {
    for proto in ALL {
        let sb = sandbox(proto).await;
        let (id, _) = create(&sb).await;
        settle().await;
        let whole = read(&sb, &id, "").await.records;
        set_faults(
            &sb,
            json!({"tinyChunks": true, "cutRandom": {"seed": 7, "count": 12}}),
        )
        .await;
        let mut got: Vec<String> = Vec::new();
        let mut tries = 0;
        while got.len() < whole.len() {
            tries += 1;
            assert!(tries < 40, "{proto:?}: no progress");
            got.extend(whole_records_from(&sb, &id, got.len()).await);
        }
        assert_eq!(got, whole, "{proto:?}");
        assert!(sb.knobs().cuts_made() > 0);
    }
}

async fn kept(proto: MissionProtocol, dir: &std::path::Path) -> RunningSandbox {
    let sb = start(SandboxConfig {
        mission_protocol: proto,
        data_dir: Some(dir.to_path_buf()),
        ..common::config()
    })
    .await
    .expect("sandbox starts");
    set_faults(&sb, json!({"leaseSeconds": 1})).await;
    sb
}

#[tokio::test]
async fn eve_sessions_survive_a_restart_mid_turn_and_while_held() {
    for proto in ALL {
        let dir = tempfile::tempdir().unwrap();
        let sb = kept(proto, dir.path()).await;
        let (held, created) = create_with(&sb, json!({"message": AMBIGUOUS})).await;
        let (running, _) = create_with(&sb, json!({"message": MESSAGE, "paceMs": 30})).await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        let before_held = read(&sb, &held, "").await.records;
        sb.stop().await;

        let sb = kept(proto, dir.path()).await;
        // The held session replays as it was, and its question can be answered.
        let again = read(&sb, &held, "").await;
        assert_eq!(again.records, before_held, "{proto:?}");
        let request_id = if proto == MissionProtocol::Eve27 {
            again.data_of("interaction.opened")[0]["interactionId"].clone()
        } else {
            again.data_of("input.requested")[0]["requests"][0]["requestId"].clone()
        };
        let mut body = answers(
            proto,
            vec![json!({"requestId": request_id, "optionId": option(proto, 1)})],
        );
        if proto == MissionProtocol::EveA {
            let token = again.data_of("session.waiting")[0]["continuationToken"].clone();
            assert_ne!(token, created["continuationToken"]);
            body["continuationToken"] = token;
        }
        assert!(follow(&sb, &held, body).await.0 < 300);
        // The interrupted turn plays on to its end.
        tokio::time::sleep(Duration::from_secs(8)).await;
        let done = read(&sb, &running, "").await;
        let completed = if proto == MissionProtocol::Eve27 {
            done.data_of("turn.settled").len()
        } else {
            done.data_of("turn.completed").len()
        };
        assert_eq!(completed, 1, "{proto:?}");
        let answered = read(&sb, &held, &format!("?startIndex={}", before_held.len())).await;
        assert!(!answered.records.is_empty());
        sb.stop().await;
    }
}

/// The whole records one response carried before it ended or was cut (a record cut
/// short, maybe inside a UTF-8 sequence, is left out: it is read again from its start).
async fn whole_records_from(sb: &RunningSandbox, id: &str, start: usize) -> Vec<String> {
    use futures_util::StreamExt;
    let resp = client()
        .get(url(sb, &format!("/session/{id}/stream?startIndex={start}")))
        .bearer_auth(sb.key())
        .send()
        .await
        .unwrap();
    let mut bytes = Vec::new();
    let mut s = resp.bytes_stream();
    while let Some(Ok(chunk)) = tokio::time::timeout(PATIENCE, s.next()).await.unwrap() {
        bytes.extend_from_slice(&chunk);
    }
    let end = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    std::str::from_utf8(&bytes[..end])
        .unwrap()
        .split('\n')
        .filter(|l| !l.is_empty() && !l.starts_with("{\"$eve\""))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn drop_stream_after_cuts_each_response_after_n_records() {
    for proto in ALL {
        let sb = sandbox(proto).await;
        let (id, _) = create(&sb).await;
        settle().await;
        let whole = read(&sb, &id, "").await.records;
        set_faults(&sb, json!({"dropStreamAfter": 5})).await;
        let mut got: Vec<String> = Vec::new();
        while got.len() < whole.len() {
            let lines = whole_records_from(&sb, &id, got.len()).await;
            assert!(
                !lines.is_empty() && lines.len() <= 5,
                "{proto:?}: {}",
                lines.len()
            );
            got.extend(lines);
        }
        assert_eq!(got, whole, "{proto:?}");
    }
}

#[tokio::test]
async fn in_the_v27_transition_tool_calls_ride_as_v26_events_inside_lines() {
    let sb = sandbox(MissionProtocol::Eve27).await;
    assert_eq!(set_faults(&sb, json!({"v27Transition": true})).await, 200);
    let (id, _) = create(&sb).await;
    settle().await;
    let r = read(&sb, &id, "").await;
    let types = r.fact_types();
    assert!(
        !types
            .iter()
            .any(|t| t == "call.requested" || t == "call.settled")
    );
    let requested = r.data_of("actions.requested");
    assert!(!requested.is_empty());
    assert_eq!(requested[0]["actions"][0]["kind"], "tool-call");
    assert!(!r.data_of("action.result").is_empty());
    let progress: Vec<Value> = r
        .values()
        .into_iter()
        .filter(|v| v["progress"]["type"] == "action.input.appended")
        .collect();
    assert!(!progress.is_empty());
    // Everything else is still v27.
    assert!(types.iter().any(|t| t == "turn.settled"));
    assert!(types.iter().any(|t| t == "usage.recorded"));
}

/// The report's deltas and its completed text: A and B's `message.appended` after the
/// message before it, 27's `content.delta` of the reply's part.
fn report_deltas(proto: MissionProtocol, r: &Read) -> Option<(Vec<String>, String)> {
    if proto == MissionProtocol::Eve27 {
        let reply = r
            .data_of("content.completed")
            .into_iter()
            .rfind(|d| d["phase"] == "reply")?;
        let deltas = r
            .data_of("content.delta")
            .iter()
            .filter(|d| d["partId"] == reply["partId"])
            .map(|d| d["delta"].as_str().unwrap().to_owned())
            .collect();
        return Some((deltas, reply["value"].as_str()?.to_owned()));
    }
    let mut deltas = Vec::new();
    for v in r.values() {
        match v["type"].as_str().unwrap() {
            "message.appended" => {
                deltas.push(v["data"]["messageDelta"].as_str().unwrap().to_owned())
            }
            "message.completed" if v["data"]["finishReason"] == "stop" => {
                return Some((deltas, v["data"]["message"].as_str()?.to_owned()));
            }
            "message.completed" => deltas.clear(),
            _ => {}
        }
    }
    None
}

/// The session's report, once it is out (waited for up to 20 s).
async fn report_of(sb: &RunningSandbox, proto: MissionProtocol, id: &str) -> (Vec<String>, String) {
    for _ in 0..100 {
        if let Some(report) = report_deltas(proto, &read(sb, id, "").await) {
            return report;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("{proto:?}: session {id} has no report after 20 s");
}

#[tokio::test]
async fn reply_deltas_make_the_report_one_message_of_that_many_deltas() {
    for proto in ALL {
        let sb = start(SandboxConfig {
            mission_protocol: proto,
            mission_reply_deltas: Some(120),
            ..common::config()
        })
        .await
        .expect("sandbox starts");
        set_faults(&sb, json!({"leaseSeconds": 1})).await;
        // The request's own length, then the sandbox's default.
        let (asked, _) = create_with(&sb, json!({"message": MESSAGE, "replyDeltas": 3000})).await;
        let (default, _) = create(&sb).await;
        for (id, n) in [(asked, 3000), (default, 120)] {
            let (deltas, text) = report_of(&sb, proto, &id).await;
            assert_eq!(deltas.len(), n, "{proto:?}");
            assert_eq!(deltas.concat(), text, "{proto:?}");
            assert!(deltas.iter().all(|d| (1..=20).contains(&d.chars().count())));
            assert!(text.starts_with("# Findings on"), "{proto:?}: {text:.60}");
        }
        let (status, _, body) = post(
            &sb,
            "/session",
            json!({"message": MESSAGE, "replyDeltas": "long"}),
        )
        .await;
        assert_eq!(status, 400, "{body}");
        sb.stop().await;
    }
    // Without the knob a report is as long as its findings (a random length: a report
    // of many findings may pass 120 deltas), far short of the 3000 asked above.
    let sb = sandbox(MissionProtocol::EveB).await;
    let (id, _) = create(&sb).await;
    let (deltas, text) = report_of(&sb, MissionProtocol::EveB, &id).await;
    assert_eq!(deltas.concat(), text);
    assert!(deltas.len() < 1000, "{}", deltas.len());
}

/// Milliseconds into the day of a record's `meta.at` (`…THH:MM:SS.mmmZ`).
fn ms_of_day(at: &str) -> f64 {
    let time = at.split('T').nth(1).unwrap().trim_end_matches('Z');
    let parts: Vec<f64> = time.split(':').map(|p| p.parse().unwrap()).collect();
    ((parts[0] * 60.0 + parts[1]) * 60.0 + parts[2]) * 1000.0
}

#[tokio::test]
async fn a_fixed_pace_is_kept_on_a_schedule_so_deltas_come_at_their_rate() {
    let sb = sandbox(MissionProtocol::EveB).await;
    // Deltas go 8 times as fast as other records: 5 ms apart, 200 a second.
    let body = json!({"message": MESSAGE, "paceMs": 40, "events": 10, "replyDeltas": 600});
    let (id, _) = create_with(&sb, body).await;
    let (deltas, _) = report_of(&sb, MissionProtocol::EveB, &id).await;
    assert_eq!(deltas.len(), 600);
    let r = read(&sb, &id, "").await;
    let at: Vec<f64> = r
        .values()
        .iter()
        .filter(|v| v["type"] == "message.appended")
        .map(|v| ms_of_day(v["meta"]["at"].as_str().unwrap()))
        .collect();
    // The report's deltas are the last 600. Sleeping each gap after the last record
    // made every gap the pace plus the timer's slack (3.8 s for the 599, gaps of 6 ms
    // and more). On a schedule a late delta is followed by a quick one, so the typical
    // gap is the pace however busy the machine is; how long the whole took is not
    // asserted, since a loaded machine makes that anything.
    let report = &at[at.len() - 600..];
    let mut gaps: Vec<f64> = report
        .windows(2)
        .map(|w| (w[1] - w[0]).rem_euclid(86_400_000.0))
        .collect();
    gaps.sort_by(f64::total_cmp);
    let median = gaps[gaps.len() / 2];
    assert!(
        median <= 5.0,
        "the typical gap between deltas is {median} ms, not the 5 ms pace: {gaps:?}"
    );
    // Paced at all: never ahead of the schedule, which forgives a lateness of at most
    // MAX_CATCH_UP (1 s), so the 599 gaps of 5 ms take 2 s at the very least.
    let span: f64 = gaps.iter().sum();
    assert!(span >= 2000.0, "600 deltas in {span} ms");
}

/// eve 1.x delivers a follow-up once per `idempotencyKey`: the same key again (a client
/// resending after a dropped connection) answers with the first delivery and adds no
/// message; another key is another message.
#[tokio::test]
async fn the_same_idempotency_key_is_one_delivery_in_27() {
    let sb = sandbox(MissionProtocol::Eve27).await;
    let (id, _) = create(&sb).await;
    settle().await;
    let body = json!({"message": "And in Europe?", "idempotencyKey": "casebook-k1"});
    let (status, first) = follow(&sb, &id, body.clone()).await;
    assert_eq!(status, 202, "{first}");
    let (status, again) = follow(&sb, &id, body).await;
    assert_eq!(status, 202, "{again}");
    assert_eq!(again["deliveryId"], first["deliveryId"]);
    let other = json!({"message": "And in Asia?", "idempotencyKey": "casebook-k2"});
    let (_, second) = follow(&sb, &id, other).await;
    assert_ne!(second["deliveryId"], first["deliveryId"]);
    settle().await;
    let r = read(&sb, &id, "").await;
    let said: Vec<String> = r
        .data_of("delivery.consumed")
        .iter()
        .filter_map(|d| d["parts"][0]["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        said.iter().filter(|t| *t == "And in Europe?").count(),
        1,
        "{said:?}"
    );
    assert!(said.iter().any(|t| t == "And in Asia?"), "{said:?}");
    // A key eve would refuse: empty.
    let (status, _) = follow(&sb, &id, json!({"message": "x", "idempotencyKey": ""})).await;
    assert_eq!(status, 400);
}
