//! The investigation service over real HTTP on loopback, read with an SSE parser
//! that is not Casebook's (`eventsource-stream`), so the sandbox and the client's
//! decoder cannot agree on a mistake.

mod common;

use casebook_sandbox::{Pace, RateLimit, RunningSandbox, SandboxConfig, start};
use common::post_json;
use eventsource_stream::Eventsource;
use futures_util::{Stream, StreamExt};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

const OBJECTIVE: &str = "How does urban heat exposure affect hospital admissions among older adults in European cities?";
/// Every stream read in these tests ends well within this.
const PATIENCE: Duration = Duration::from_secs(60);

fn message(budget: &str) -> String {
    format!(
        "MISSION TYPE: research\nMISSION BUDGET TYPE: fixed\nMISSION BUDGET (hard maximum): {budget} USD\nMISSION OBJECTIVE:\n\n{OBJECTIVE}"
    )
}

fn config(data_dir: Option<&Path>) -> SandboxConfig {
    SandboxConfig {
        pace: Pace::Instant,
        data_dir: data_dir.map(Path::to_path_buf),
        // Reconnect-heavy tests would otherwise meet the rate limiter.
        rate_limit: RateLimit {
            per_minute: 0,
            ..RateLimit::default()
        },
        ..SandboxConfig::default()
    }
}

async fn sandbox() -> RunningSandbox {
    start(config(None)).await.expect("sandbox starts")
}

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

#[derive(Debug, Clone, PartialEq)]
struct Ev {
    id: u64,
    kind: String,
    data: Value,
}

/// Creates a session with the standard message plus `extra` fields; its id.
async fn create(sb: &RunningSandbox, extra: Value) -> String {
    let mut body = json!({ "message": message("$25.00") });
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().cloned().unwrap_or_default());
    let resp = post_json(sb, "/eve/v1/session", &body).await;
    assert_eq!(resp.status(), 201);
    let body: Value = resp.json().await.unwrap();
    body["sessionId"].as_str().unwrap().to_owned()
}

enum Resume {
    Header(u64),
    Query(u64),
}

async fn open(
    sb: &RunningSandbox,
    id: &str,
    resume: Option<Resume>,
) -> impl Stream<Item = Result<Ev, String>> + Unpin + use<> {
    let mut url = format!("{}/eve/v1/session/{id}/stream", sb.base_url());
    let mut req = client()
        .get(&url)
        .bearer_auth(sb.key())
        .header("accept", "text/event-stream");
    match resume {
        Some(Resume::Header(n)) => req = req.header("last-event-id", n.to_string()),
        Some(Resume::Query(n)) => {
            url.push_str(&format!("?lastEventId={n}"));
            req = client()
                .get(&url)
                .bearer_auth(sb.key())
                .header("accept", "text/event-stream");
        }
        None => {}
    }
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    assert_eq!(resp.headers()["cache-control"], "no-cache");
    let id = id.to_owned();
    Box::pin(resp.bytes_stream().eventsource().map(move |item| {
        let e = item.map_err(|e| e.to_string())?;
        let data: Value = serde_json::from_str(&e.data)
            .map_err(|err| format!("data is not JSON ({err}): {}", e.data))?;
        let seq: u64 = e.id.parse().map_err(|_| format!("id {:?}", e.id))?;
        assert_eq!(data["seq"], seq, "seq matches id: {data}");
        assert_eq!(data["sessionId"], id.as_str(), "{data}");
        assert!(
            data["sentAt"].as_u64().unwrap() > 1_600_000_000_000,
            "{data}"
        );
        assert_ne!(e.event, "message", "every event is named");
        Ok(Ev {
            id: seq,
            kind: e.event,
            data,
        })
    }))
}

/// Reads one connection to its end: its events, and whether it ended cleanly.
async fn read_all(sb: &RunningSandbox, id: &str, resume: Option<Resume>) -> (Vec<Ev>, bool) {
    common::drain(open(sb, id, resume)).await
}

/// The whole log of a session that runs to its end, in one clean connection.
async fn full(sb: &RunningSandbox, id: &str) -> Vec<Ev> {
    let (events, clean) = read_all(sb, id, None).await;
    assert!(clean);
    events
}

fn ids(events: &[Ev]) -> Vec<u64> {
    events.iter().map(|e| e.id).collect()
}

fn kinds(events: &[Ev]) -> Vec<&str> {
    events.iter().map(|e| e.kind.as_str()).collect()
}

/// The raw body of a stream, up to its end.
async fn raw(sb: &RunningSandbox, id: &str) -> String {
    let resp = client()
        .get(format!("{}/eve/v1/session/{id}/stream", sb.base_url()))
        .bearer_auth(sb.key())
        .send()
        .await
        .unwrap();
    tokio::time::timeout(PATIENCE, resp.text())
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn create_answers_201_with_the_documented_shape() {
    let sb = sandbox().await;
    let resp = post_json(
        &sb,
        "/eve/v1/session",
        &json!({"message": message("$25.00"), "somethingElse": true}),
    )
    .await;
    assert_eq!(resp.status(), 201);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let body: Value = resp.json().await.unwrap();
    let id = body["sessionId"].as_str().unwrap();
    let hex = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit());
    assert!(id.strip_prefix("ses_").is_some_and(hex), "{body}");
    let ct = body["continuationToken"].as_str().unwrap();
    assert!(ct.strip_prefix("ct_").is_some_and(hex), "{body}");
    assert_eq!(body["status"], "active");
    assert_eq!(body["streamUrl"], format!("/eve/v1/session/{id}/stream"));
    let created = body["createdAt"].as_str().unwrap();
    // RFC 3339 in UTC: 2026-05-01T09:30:00.123Z
    assert_eq!(created.len(), 24, "{created}");
    assert!(
        created.ends_with('Z') && created.as_bytes()[10] == b'T',
        "{created}"
    );

    let other = create(&sb, json!({})).await;
    assert_ne!(other, id, "ids are unique");
    sb.stop().await;
}

#[tokio::test]
async fn malformed_messages_are_400_invalid_mission_naming_the_line() {
    let sb = sandbox().await;
    let good = message("$25.00");
    let replace = |n: usize, with: &str| {
        good.split('\n')
            .enumerate()
            .map(|(i, l)| if i + 1 == n { with } else { l })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let cases: Vec<(String, u64)> = vec![
        (String::new(), 1),
        (replace(1, "MISSION TYPE:"), 1),
        (replace(1, "MISSION TYPE: deep research"), 1),
        (replace(1, "Mission Type: research"), 1),
        (replace(2, "MISSION BUDGET TYPE:"), 2),
        (replace(2, "MISSION BUDGET: fixed"), 2),
        (replace(3, "MISSION BUDGET (hard maximum): $0.00 USD"), 3),
        (replace(3, "MISSION BUDGET (hard maximum): $25.001 USD"), 3),
        (replace(3, "MISSION BUDGET (hard maximum): 25 USD"), 3),
        (replace(3, "MISSION BUDGET (hard maximum): $25"), 3),
        (replace(3, "MISSION BUDGET (hard maximum): $-3 USD"), 3),
        (replace(4, "MISSION OBJECTIVE: inline"), 4),
        (replace(4, "OBJECTIVE:"), 4),
        (good.split("\n\n").next().unwrap().to_owned(), 5),
        (
            format!("{}\n\n   \n", good.split("\n\n").next().unwrap()),
            6,
        ),
        (good.replace("\n\n", "\n\n\n"), 6),
    ];
    for (msg, line) in cases {
        let resp = post_json(&sb, "/eve/v1/session", &json!({ "message": msg })).await;
        assert_eq!(resp.status(), 400, "{msg:?}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], "invalid_mission", "{msg:?}: {body}");
        assert_eq!(body["error"]["line"], line, "{msg:?}: {body}");
        let text = body["error"]["message"].as_str().unwrap();
        assert!(
            text.starts_with(&format!("Line {line}: expected")),
            "{text}"
        );
        assert!(body["error"]["expected"].is_string(), "{body}");
    }

    // Accepted variants: no blank line before the objective, a whole-dollar budget.
    for msg in [
        good.replace("OBJECTIVE:\n\n", "OBJECTIVE:\n"),
        message("$7"),
        message("$7.5"),
    ] {
        let resp = post_json(&sb, "/eve/v1/session", &json!({ "message": msg })).await;
        assert_eq!(resp.status(), 201, "{msg:?}");
    }
    sb.stop().await;
}

#[tokio::test]
async fn bodies_that_are_not_a_create_request_are_400() {
    let sb = sandbox().await;
    let url = format!("{}/eve/v1/session", sb.base_url());
    let send = |body: String| {
        client()
            .post(&url)
            .bearer_auth(sb.key())
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    for (body, code) in [
        ("not json".to_owned(), "invalid_request"),
        ("[1, 2]".to_owned(), "invalid_request"),
        ("{}".to_owned(), "invalid_field"),
        (r#"{"message": 42}"#.to_owned(), "invalid_field"),
        (
            json!({"message": message("$25.00"), "paceMs": "fast"}).to_string(),
            "invalid_field",
        ),
        (
            json!({"message": message("$25.00"), "events": -1}).to_string(),
            "invalid_field",
        ),
    ] {
        let resp = send(body.clone()).await.unwrap();
        assert_eq!(resp.status(), 400, "{body}");
        let json: Value = resp.json().await.unwrap();
        assert_eq!(json["error"]["code"], code, "{body}: {json}");
    }
    sb.stop().await;
}

#[tokio::test]
async fn every_endpoint_requires_the_bearer_key() {
    let sb = sandbox().await;
    let id = create(&sb, json!({"paceMs": 50})).await;
    let base = sb.base_url();
    let body = json!({ "message": message("$25.00") });
    for key in [None, Some("wrong_key"), Some("")] {
        let with = |req: reqwest::RequestBuilder| match key {
            Some(k) => req.header("authorization", format!("Bearer {k}")),
            None => req,
        };
        let requests = [
            with(client().post(format!("{base}/eve/v1/session")).json(&body)),
            with(client().get(format!("{base}/eve/v1/session/{id}/stream"))),
            with(client().post(format!("{base}/eve/v1/session/{id}/cancel"))),
            // Authentication comes before looking the session up.
            with(client().get(format!("{base}/eve/v1/session/ses_nope/stream"))),
            with(client().post(format!("{base}/eve/v1/session/ses_nope/cancel"))),
        ];
        for req in requests {
            let resp = req.send().await.unwrap();
            let what = format!("{} with key {key:?}", resp.url());
            assert_eq!(resp.status(), 401, "{what}");
            assert_eq!(resp.headers()["www-authenticate"], "Bearer", "{what}");
            let json: Value = resp.json().await.unwrap();
            assert_eq!(json["error"]["code"], "unauthorized", "{what}");
        }
    }
    // A basic-auth header is not a bearer key either.
    let resp = client()
        .get(format!("{base}/eve/v1/session/{id}/stream"))
        .basic_auth("user", Some(sb.key()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    // The unauthenticated cancels above did not cancel anything.
    let events = full(&sb, &id).await;
    assert_eq!(events.last().unwrap().kind, "session.completed");
    sb.stop().await;
}

#[tokio::test]
async fn a_full_stream_plays_the_whole_turn() {
    let sb = sandbox().await;
    let id = create(&sb, json!({})).await;
    let events = full(&sb, &id).await;

    let n = events.len() as u64;
    assert!((20..=40).contains(&n), "{n} events: {:?}", kinds(&events));
    assert_eq!(ids(&events), (1..=n).collect::<Vec<_>>());

    let k = kinds(&events);
    assert_eq!(&k[..2], ["turn.started", "plan"]);
    assert_eq!(
        &k[k.len() - 3..],
        ["report.final", "turn.completed", "session.completed"]
    );
    let expected: &[(&str, &[&str])] = &[
        ("turn.started", &["turnId", "objective", "budgetUsd"]),
        ("plan", &["steps"]),
        ("search.query", &["query", "engine"]),
        ("source.found", &["title", "url", "publisher", "year"]),
        ("evidence", &["sourceUrl", "quote", "supports"]),
        ("finding.verified", &["claim", "confidence", "sources"]),
        ("spend.updated", &["spentUsd", "budgetUsd"]),
        ("report.final", &["title", "summary", "findings"]),
        ("turn.completed", &["turnId"]),
        ("session.completed", &["reportTitle"]),
    ];
    for (kind, fields) in expected {
        let of_kind: Vec<_> = events.iter().filter(|e| e.kind == *kind).collect();
        assert!(!of_kind.is_empty(), "no {kind} in {k:?}");
        for e in of_kind {
            for f in *fields {
                assert!(!e.data[f].is_null(), "{kind} lacks {f}: {}", e.data);
            }
        }
    }
    for e in &events {
        assert!(
            expected.iter().any(|(kind, _)| *kind == e.kind),
            "unexpected kind {}",
            e.kind
        );
    }

    let started = &events[0].data;
    assert_eq!(started["objective"], OBJECTIVE);
    assert_eq!(started["budgetUsd"], 25.0);
    assert_eq!(events[n as usize - 2].data["turnId"], started["turnId"]);
    let steps = events[1].data["steps"].as_array().unwrap();
    assert!((3..=5).contains(&steps.len()));

    let mut last = 0.0;
    for e in events.iter().filter(|e| e.kind == "spend.updated") {
        let spent = e.data["spentUsd"].as_f64().unwrap();
        assert!(spent >= last && spent < 25.0, "{}", e.data);
        assert_eq!(e.data["budgetUsd"], 25.0);
        last = spent;
    }
    assert!(last > 0.0);
    for e in events.iter().filter(|e| e.kind == "finding.verified") {
        let c = e.data["confidence"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&c), "{}", e.data);
        assert!(!e.data["sources"].as_array().unwrap().is_empty());
    }
    let report = &events[n as usize - 3].data;
    assert_eq!(
        events.last().unwrap().data["reportTitle"],
        report["title"],
        "completion names the report"
    );
    assert!(!report["findings"].as_array().unwrap().is_empty());

    // The raw framing: retry first, then id / event / one data line per event.
    let body = raw(&sb, &id).await;
    assert!(
        body.starts_with("retry: 1000\n\nid: 1\nevent: turn.started\ndata: {"),
        "{body}"
    );
    assert_eq!(body.matches("\ndata: ").count() as u64, n);
    assert!(body.ends_with("}\n\n"));
    sb.stop().await;
}

#[tokio::test]
async fn last_event_id_replays_exactly_the_events_after_it() {
    let sb = sandbox().await;
    let id = create(&sb, json!({})).await;
    let all = full(&sb, &id).await;
    let n = all.len() as u64;
    for after in [0, 1, 2, n / 2, n - 1] {
        for resume in [Resume::Header(after), Resume::Query(after)] {
            let (events, clean) = read_all(&sb, &id, Some(resume)).await;
            assert!(clean);
            assert_eq!(events, all[after as usize..], "after {after}");
        }
    }
    // After the last event there is nothing left: the stream ends at once.
    let (events, clean) = read_all(&sb, &id, Some(Resume::Header(n))).await;
    assert!(clean && events.is_empty());
    let (events, _) = read_all(&sb, &id, Some(Resume::Header(n + 100))).await;
    assert!(events.is_empty());

    // The header wins over the query, as a browser's EventSource would send both.
    let resp = client()
        .get(format!(
            "{}/eve/v1/session/{id}/stream?lastEventId=1",
            sb.base_url()
        ))
        .bearer_auth(sb.key())
        .header("last-event-id", (n - 1).to_string())
        .send()
        .await
        .unwrap();
    let text = resp.text().await.unwrap();
    assert_eq!(text.matches("\ndata: ").count(), 1, "{text}");

    let resp = client()
        .get(format!("{}/eve/v1/session/{id}/stream", sb.base_url()))
        .bearer_auth(sb.key())
        .header("last-event-id", "abc")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    sb.stop().await;
}

/// What /openapi.json says of `lastEventId` and `Last-Event-ID` (one string, empty, a
/// decimal id of at most 19 digits or `ev_` and 16 lowercase hex digits) is what the
/// stream takes: a query value is read percent-decoded, and anything else is refused
/// with the usual error body rather than streamed from some other point.
#[tokio::test]
async fn a_last_event_id_outside_the_described_pattern_is_refused() {
    let sb = sandbox().await;
    let id = create(&sb, json!({})).await;
    let all = full(&sb, &id).await;
    let get = |query: &str, headers: &[&str]| {
        let mut req = client()
            .get(format!(
                "{}/eve/v1/session/{id}/stream{query}",
                sb.base_url()
            ))
            .bearer_auth(sb.key());
        for h in headers {
            req = req.header("last-event-id", *h);
        }
        req.send()
    };
    for query in [
        "?lastEventId=abc",
        "?lastEventId=%201",
        "?lastEventId=1%20",
        "?lastEventId=1+",
        "?lastEventId=12345678901234567890",
        "?lastEventId=ev_0123456789ABCDEF",
        "?lastEventId=ev_0123456789abcde",
        "?lastEventId=1&lastEventId=1",
        "?lastEventId=1&lastEventId=2",
        "?lastEventId=1&lastEventId=abc",
    ] {
        let resp = get(query, &[]).await.unwrap();
        assert_eq!(resp.status(), 400, "{query}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], "invalid_request", "{query}: {body}");
    }
    let resp = get("", &["1", "2"]).await.unwrap();
    assert_eq!(resp.status(), 400, "Last-Event-ID sent twice");

    // What the pattern allows, however it is encoded: %31 is "1", and empty is the start.
    for (query, after) in [
        ("?lastEventId=%31", 1),
        ("?lastEventId=", 0),
        ("?lastEventId", 0),
    ] {
        let resp = get(query, &[]).await.unwrap();
        assert_eq!(resp.status(), 200, "{query}");
        let text = resp.text().await.unwrap();
        assert_eq!(
            text.matches("\ndata: ").count(),
            all.len() - after,
            "{query}: {text}"
        );
    }
    sb.stop().await;
}

#[tokio::test]
async fn live_resume_mid_turn_continues_without_gap() {
    let sb = sandbox().await;
    let id = create(&sb, json!({"paceMs": 20})).await;
    let mut s = open(&sb, &id, None).await;
    let mut first = Vec::new();
    while first.len() < 4 {
        first.push(s.next().await.unwrap().unwrap());
    }
    drop(s);
    let (rest, clean) = read_all(&sb, &id, Some(Resume::Header(4))).await;
    assert!(clean);
    first.extend(rest);
    assert_eq!(first, full(&sb, &id).await);
    sb.stop().await;
}

#[tokio::test]
async fn concurrent_clients_see_identical_sequences() {
    let sb = sandbox().await;
    let id = create(&sb, json!({"paceMs": 15, "events": 40})).await;
    let (a, b) = tokio::join!(read_all(&sb, &id, None), read_all(&sb, &id, None));
    // A third client joining late replays what it missed and then matches too.
    let (c, _) = read_all(&sb, &id, None).await;
    assert!(a.1 && b.1);
    assert!(a.0.len() >= 30);
    assert_eq!(a.0, b.0);
    assert_eq!(a.0, c);
    assert_eq!(a.0.last().unwrap().kind, "session.completed");
    sb.stop().await;
}

async fn cancel(sb: &RunningSandbox, id: &str, body: Option<Value>) -> reqwest::Response {
    let mut req = client()
        .post(format!("{}/eve/v1/session/{id}/cancel", sb.base_url()))
        .bearer_auth(sb.key());
    if let Some(body) = body {
        req = req.json(&body);
    }
    req.send().await.unwrap()
}

#[tokio::test]
async fn cancel_mid_turn_ends_with_turn_cancelled_then_session_waiting() {
    let sb = sandbox().await;
    // A turn of 100,000 events at 50 ms has over an hour to go: a cancel that waited
    // for the turn instead of answering at once would run into PATIENCE, whereas how
    // fast it answers says nothing on a loaded machine.
    let id = create(&sb, json!({"paceMs": 50, "events": 100_000})).await;
    let mut s = open(&sb, &id, None).await;
    let mut seen = Vec::new();
    while seen.len() < 3 {
        seen.push(s.next().await.unwrap().unwrap());
    }

    let resp = tokio::time::timeout(
        PATIENCE,
        cancel(&sb, &id, Some(json!({"reason": "enough for today"}))),
    )
    .await
    .expect("the cancel answers at once, not when the turn ends");
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        body,
        json!({"ok": true, "sessionId": id, "status": "accepted"})
    );

    tokio::time::timeout(PATIENCE, async {
        while let Some(ev) = s.next().await {
            seen.push(ev.unwrap());
        }
    })
    .await
    .unwrap();
    let k = kinds(&seen);
    assert_eq!(
        &k[k.len() - 2..],
        ["turn.cancelled", "session.waiting"],
        "{k:?}"
    );
    assert!(!k.contains(&"session.completed") && !k.contains(&"report.final"));
    assert_eq!(ids(&seen), (1..=seen.len() as u64).collect::<Vec<_>>());
    let cancelled = &seen[seen.len() - 2].data;
    assert_eq!(cancelled["reason"], "enough for today");
    assert_eq!(cancelled["turnId"], seen[0].data["turnId"]);
    assert_eq!(seen.last().unwrap().data["reason"], "cancelled");

    // No active turn any more.
    let resp = cancel(&sb, &id, Some(json!({}))).await;
    assert_eq!(resp.status(), 409);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "no_active_turn");

    // A waiting session replays its log and ends.
    let (replayed, clean) = read_all(&sb, &id, None).await;
    assert!(clean);
    assert_eq!(replayed, seen);
    sb.stop().await;
}

#[tokio::test]
async fn cancel_takes_an_empty_body_and_refuses_what_is_not_a_turn() {
    let sb = sandbox().await;
    let id = create(&sb, json!({"paceMs": 50})).await;
    let resp = cancel(&sb, &id, None).await;
    assert_eq!(resp.status(), 200);
    // Accepted but not yet played: still nothing more to cancel.
    let resp = cancel(&sb, &id, None).await;
    assert_eq!(resp.status(), 409);
    let events = full(&sb, &id).await;
    let k = kinds(&events);
    assert_eq!(&k[k.len() - 2..], ["turn.cancelled", "session.waiting"]);
    assert!(events[events.len() - 2].data["reason"].is_string());

    let resp = cancel(&sb, "ses_0000000000000000", Some(json!({}))).await;
    assert_eq!(resp.status(), 404);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "session_not_found");
    let resp = client()
        .get(format!("{}/eve/v1/session/ses_nope/stream", sb.base_url()))
        .bearer_auth(sb.key())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "session_not_found");

    // A completed turn cannot be cancelled.
    let done = create(&sb, json!({})).await;
    full(&sb, &done).await;
    let resp = cancel(&sb, &done, Some(json!({"reason": "late"}))).await;
    assert_eq!(resp.status(), 409);

    let resp = client()
        .post(format!("{}/eve/v1/session/{done}/cancel", sb.base_url()))
        .bearer_auth(sb.key())
        .header("content-type", "application/json")
        .body("[]")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    sb.stop().await;
}

#[tokio::test]
async fn dropped_streams_resume_with_last_event_id_without_gap_or_duplicate() {
    let sb = sandbox().await;
    let id = create(&sb, json!({"paceMs": 5, "events": 60})).await;
    sb.knobs().set(|k| k.drop_stream_after = 4);
    let mut got: Vec<Ev> = Vec::new();
    let mut connections = 0;
    loop {
        connections += 1;
        assert!(connections < 100, "no progress");
        let resume = got.last().map(|e| Resume::Header(e.id));
        let (events, clean) = read_all(&sb, &id, resume).await;
        assert!(
            events.len() <= 4,
            "cut after 4 events, got {}",
            events.len()
        );
        got.extend(events);
        if clean && got.last().is_some_and(|e| e.kind == "session.completed") {
            break;
        }
        assert!(
            !clean,
            "a stream that did not finish the turn was cut, not ended"
        );
    }
    assert!(connections >= 10, "{connections} connections");
    assert_eq!(ids(&got), (1..=got.len() as u64).collect::<Vec<_>>());
    sb.knobs().clear();
    assert_eq!(got, full(&sb, &id).await);
    sb.stop().await;
}

#[tokio::test]
async fn tiny_chunks_and_crlf_parse_identically() {
    let sb = sandbox().await;
    let id = create(&sb, json!({})).await;
    let plain = full(&sb, &id).await;
    sb.knobs().set(|k| k.tiny_chunks = true);
    sb.knobs().set(|k| k.crlf = true);
    let shaped = full(&sb, &id).await;
    assert_eq!(plain, shaped);
    let body = raw(&sb, &id).await;
    assert!(
        body.starts_with("retry: 1000\r\n\r\nid: 1\r\n"),
        "{body:.60}"
    );
    assert!(!body.replace("\r\n", "").contains('\n'));

    // Live events, not only replays, go through the same shaping.
    let live = create(&sb, json!({"paceMs": 5})).await;
    let shaped_live = full(&sb, &live).await;
    sb.knobs().clear();
    assert_eq!(shaped_live, full(&sb, &live).await);
    sb.stop().await;
}

#[tokio::test]
async fn sessions_resume_across_a_sandbox_restart() {
    let dir = tempfile::tempdir().unwrap();
    let sb = start(config(Some(dir.path()))).await.unwrap();
    let id = create(&sb, json!({"paceMs": 100, "events": 30})).await;
    let done = create(&sb, json!({})).await;
    let done_log = full(&sb, &done).await;

    let mut s = open(&sb, &id, None).await;
    let mut before = Vec::new();
    while before.len() < 5 {
        before.push(s.next().await.unwrap().unwrap());
    }
    drop(s);
    sb.stop().await;

    let sb = start(config(Some(dir.path()))).await.unwrap();
    let last = before.last().unwrap().id;
    let (after, clean) = read_all(&sb, &id, Some(Resume::Header(last))).await;
    assert!(clean);
    assert!(!after.is_empty());
    assert_eq!(after[0].id, last + 1, "no gap and no duplicate");
    let mut whole = before.clone();
    whole.extend(after);
    assert_eq!(ids(&whole), (1..=whole.len() as u64).collect::<Vec<_>>());
    assert_eq!(whole.last().unwrap().kind, "session.completed");
    assert!(whole.len() >= 25, "{}", whole.len());
    let turn = &whole[0].data["turnId"];
    assert_eq!(&whole[whole.len() - 2].data["turnId"], turn, "same turn");

    // The restarted sandbox serves the same log from the start, and the completed
    // session as it was.
    assert_eq!(full(&sb, &id).await, whole);
    assert_eq!(full(&sb, &done).await, done_log);

    // And its file holds each event once.
    let text =
        std::fs::read_to_string(dir.path().join("sessions").join(format!("{id}.jsonl"))).unwrap();
    let mut seen = HashSet::new();
    for line in text.lines().skip(1) {
        let v: Value = serde_json::from_str(line).unwrap();
        assert!(
            seen.insert(v["id"].as_u64().unwrap()),
            "duplicate line {line}"
        );
    }
    assert_eq!(seen.len(), whole.len());

    // A cancelled session stays waiting across a restart.
    let cancelled = create(&sb, json!({"paceMs": 100})).await;
    assert_eq!(cancel(&sb, &cancelled, None).await.status(), 200);
    let waiting = full(&sb, &cancelled).await;
    sb.stop().await;
    let sb = start(config(Some(dir.path()))).await.unwrap();
    assert_eq!(full(&sb, &cancelled).await, waiting);
    assert_eq!(cancel(&sb, &cancelled, None).await.status(), 409);
    sb.stop().await;
}

#[tokio::test]
async fn the_events_extension_stretches_the_turn() {
    let sb = sandbox().await;
    let id = create(&sb, json!({"events": 2000})).await;
    let events = full(&sb, &id).await;
    let n = events.len();
    assert!((1990..=2000).contains(&n), "{n}");
    assert_eq!(ids(&events), (1..=n as u64).collect::<Vec<_>>());
    let k = kinds(&events);
    assert_eq!(k.last(), Some(&"session.completed"));
    assert!(k.iter().filter(|k| **k == "search.query").count() > 250);
    sb.stop().await;
}

#[tokio::test]
async fn idle_streams_get_keep_alive_comments() {
    let sb = sandbox().await;
    // The second event comes after 18 s, so the stream idles past the 15 s mark.
    let id = create(&sb, json!({"paceMs": 18_000, "events": 10})).await;
    let resp = client()
        .get(format!("{}/eve/v1/session/{id}/stream", sb.base_url()))
        .bearer_auth(sb.key())
        .send()
        .await
        .unwrap();
    let mut body = resp.bytes_stream();
    let mut text = String::new();
    let found = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(chunk) = body.next().await {
            text.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
            if text.contains(": keep-alive\n\n") {
                return true;
            }
        }
        false
    })
    .await;
    assert!(matches!(found, Ok(true)), "{text}");
    assert!(text.starts_with("retry: 1000\n\nid: 1\n"), "{text}");
    assert!(
        !text.contains("id: 2\n"),
        "the comment came while idle: {text}"
    );
    drop(body);
    let resp = cancel(&sb, &id, None).await;
    assert_eq!(resp.status(), 200);
    sb.stop().await;
}
