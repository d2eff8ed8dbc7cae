//! Helpers shared by the tests of the sandbox's variants: a sandbox on loopback,
//! missions to stream, and streams read with an SSE parser that is not Casebook's
//! (`eventsource-stream`) or as raw bytes.

#![allow(dead_code)]

use casebook_sandbox::{Pace, RateLimit, RunningSandbox, SandboxConfig, start};
use eventsource_stream::Eventsource;
use futures_util::{Stream, StreamExt};
use serde_json::{Value, json};
use std::time::Duration;

/// Every stream read in these tests ends well within this.
pub const PATIENCE: Duration = Duration::from_secs(60);

pub const MESSAGE: &str = "MISSION TYPE: research\nMISSION BUDGET TYPE: fixed\nMISSION BUDGET (hard maximum): $25.00 USD\nMISSION OBJECTIVE:\n\nHow does urban heat exposure affect hospital admissions among older adults?";

/// Instant missions and no rate limit, so reconnect-heavy tests run quickly.
pub fn config() -> SandboxConfig {
    SandboxConfig {
        pace: Pace::Instant,
        rate_limit: RateLimit {
            per_minute: 0,
            ..RateLimit::default()
        },
        ..SandboxConfig::default()
    }
}

pub async fn sandbox() -> RunningSandbox {
    start(config()).await.expect("sandbox starts")
}

pub fn client() -> reqwest::Client {
    reqwest::Client::new()
}

pub use casebook_testsupport::sandbox::post as post_json;

/// Creates a session with the standard message plus `extra` fields; its id.
pub async fn create(sb: &RunningSandbox, extra: Value) -> String {
    let mut body = json!({ "message": MESSAGE });
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().cloned().unwrap_or_default());
    let resp = post_json(sb, "/eve/v1/session", &body).await;
    assert!(resp.status().is_success(), "{}", resp.status());
    let body: Value = resp.json().await.unwrap();
    body["sessionId"].as_str().unwrap().to_owned()
}

/// A stream request, optionally resuming after `last_event_id`.
pub async fn request(
    sb: &RunningSandbox,
    id: &str,
    last_event_id: Option<&str>,
) -> reqwest::Response {
    let mut req = client()
        .get(format!("{}/eve/v1/session/{id}/stream", sb.base_url()))
        .bearer_auth(sb.key())
        .header("accept", "text/event-stream");
    if let Some(last) = last_event_id {
        req = req.header("last-event-id", last);
    }
    req.send().await.unwrap()
}

/// One event as an independent parser sees it. `id` is the parser's last event id
/// (which, per WHATWG, carries over events that have no `id:` line); `seq` is the
/// sequence number from the payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Ev {
    pub id: String,
    pub kind: String,
    pub seq: u64,
    pub data: Value,
}

pub fn sse(resp: reqwest::Response) -> impl Stream<Item = Result<Ev, String>> + Unpin {
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    Box::pin(resp.bytes_stream().eventsource().map(|item| {
        let e = item.map_err(|e| e.to_string())?;
        let data: Value = serde_json::from_str(&e.data)
            .map_err(|err| format!("data is not JSON ({err}): {}", e.data))?;
        Ok(Ev {
            id: e.id,
            kind: e.event,
            seq: data["seq"].as_u64().ok_or("no seq")?,
            data,
        })
    }))
}

/// Reads one connection to its end: its events, and whether it ended cleanly.
pub async fn read_all(
    sb: &RunningSandbox,
    id: &str,
    last_event_id: Option<&str>,
) -> (Vec<Ev>, bool) {
    drain(async { sse(request(sb, id, last_event_id).await) }).await
}

/// Opens a stream and reads it to its end, all within [`PATIENCE`]: its items, and
/// whether it ended cleanly (no error item).
pub async fn drain<T, E, S>(open: impl std::future::Future<Output = S>) -> (Vec<T>, bool)
where
    S: Stream<Item = Result<T, E>> + Unpin,
{
    tokio::time::timeout(PATIENCE, async {
        let mut s = open.await;
        let mut out = Vec::new();
        while let Some(item) = s.next().await {
            match item {
                Ok(ev) => out.push(ev),
                Err(_) => return (out, false),
            }
        }
        (out, true)
    })
    .await
    .expect("the stream ends")
}

/// Every event (A/B) or fact and progress (27) of type `ty` in `records`, with its data.
pub fn data_of(records: &[Value], ty: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for v in records {
        if v["type"] == ty {
            out.push(v["data"].clone());
        }
        for f in v["facts"].as_array().into_iter().flatten() {
            if f["type"] == ty {
                out.push(f["data"].clone());
            }
        }
        if v["progress"]["type"] == ty {
            out.push(v["progress"]["data"].clone());
        }
    }
    out
}

/// The whole log of a session that runs to its end, in one clean connection.
pub async fn full(sb: &RunningSandbox, id: &str) -> Vec<Ev> {
    let (events, clean) = read_all(sb, id, None).await;
    assert!(clean);
    events
}

/// The raw body of a stream, up to its end.
pub async fn raw(sb: &RunningSandbox, id: &str) -> String {
    let resp = request(sb, id, None).await;
    assert_eq!(resp.status(), 200);
    tokio::time::timeout(PATIENCE, resp.text())
        .await
        .unwrap()
        .unwrap()
}

pub fn seqs(events: &[Ev]) -> Vec<u64> {
    events.iter().map(|e| e.seq).collect()
}

pub fn kinds(events: &[Ev]) -> Vec<&str> {
    events.iter().map(|e| e.kind.as_str()).collect()
}

/// `POST /_sandbox/faults` with the sandbox's key: the status.
pub async fn set_faults(sb: &RunningSandbox, body: Value) -> u16 {
    post_json(sb, "/_sandbox/faults", &body)
        .await
        .status()
        .as_u16()
}

/// Kills the child it holds when dropped, so a failing test leaves no sandbox behind.
pub struct Child(pub std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
