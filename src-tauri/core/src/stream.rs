//! Following a mission's event stream to its end, across drops.
//!
//! The stream is `text/event-stream` (decoded by [`crate::sse`]) or NDJSON. When the
//! connection drops before the case is waiting or complete, we reconnect with
//! `Last-Event-ID` and back off (honouring the server's `retry:`); events whose id
//! we have already seen are dropped, so across reconnects nothing is lost or repeated.

use crate::connection::network_error;
use crate::error::{Error, ErrorCode, Result};
use crate::http::error_from;
use crate::missions::{InvestigationClient, MissionEvent};
use crate::sse::SseDecoder;
use serde::Serialize;
use std::collections::HashSet;
use std::time::Duration;
use ts_rs::TS;

#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Resume after this event (as after an app restart).
    pub last_event_id: Option<String>,
    /// Give up after this many reconnects in a row that delivered nothing.
    pub max_failures: u32,
    /// First back-off; doubles per failure up to `max_backoff`. A server's `retry:` replaces it.
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        Self {
            last_event_id: None,
            max_failures: 8,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(15),
        }
    }
}

/// What a watcher is told besides events.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[ts(tag = "type", rename_all = "camelCase")]
pub enum WatchUpdate {
    /// Connected (again) and reading.
    Connected { attempt: u32 },
    /// One event, new to this watcher.
    Event { event: MissionEvent },
    /// The connection dropped; reconnecting after a pause.
    Reconnecting {
        attempt: u32,
        #[ts(type = "number")]
        after_ms: u64,
        reason: String,
    },
}

/// How a watch ended: the terminal event, and the id to resume from.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchEnd {
    pub last_event_id: Option<String>,
    pub terminal: MissionEvent,
}

enum Framing {
    Sse(SseDecoder),
    Ndjson(Vec<u8>),
}

impl Framing {
    fn for_content_type(ct: &str) -> Option<Self> {
        let ct = ct
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match ct.as_str() {
            "text/event-stream" => Some(Framing::Sse(SseDecoder::new())),
            "application/x-ndjson"
            | "application/ndjson"
            | "application/jsonl"
            | "application/jsonlines"
            | "application/json-seq" => Some(Framing::Ndjson(Vec::new())),
            _ => None,
        }
    }

    fn feed(&mut self, chunk: &[u8], out: &mut Vec<MissionEvent>) {
        match self {
            Framing::Sse(d) => d.feed_with(chunk, |e| {
                out.push(MissionEvent::new(e.id, e.event, &e.data))
            }),
            Framing::Ndjson(buf) => {
                buf.extend_from_slice(chunk);
                while let Some(pos) = buf.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = buf.drain(..=pos).collect();
                    if let Some(e) = ndjson_event(&line) {
                        out.push(e);
                    }
                }
            }
        }
    }

    fn retry(&self) -> Option<Duration> {
        match self {
            Framing::Sse(d) => d.retry().map(Duration::from_millis),
            Framing::Ndjson(_) => None,
        }
    }
}

/// One NDJSON line as an event: the name from `event`, `type` or `kind`, the id
/// from `id`, the data from `data` (or the whole object).
fn ndjson_event(line: &[u8]) -> Option<MissionEvent> {
    // RFC 7464 json-seq puts a record separator before each record.
    let line = std::str::from_utf8(line)
        .ok()?
        .trim()
        .trim_start_matches('\u{1e}');
    if line.is_empty() {
        return None;
    }
    let v: serde_json::Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(_) => return Some(MissionEvent::new(None, "unparsed".into(), line)),
    };
    let name = ["event", "type", "kind"]
        .iter()
        .find_map(|k| v.get(*k).and_then(|x| x.as_str()))
        .unwrap_or("message")
        .to_owned();
    let id = v.get("id").and_then(|x| match x {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    });
    let data = v.get("data").cloned().unwrap_or_else(|| v.clone());
    let mut e = MissionEvent::new(id, name, "null");
    e.data = data;
    Some(e)
}

impl InvestigationClient {
    /// Follows the session's stream until `session.waiting` or completion,
    /// reconnecting across drops. `on_update` sees every new event once, in order.
    pub async fn watch(
        &self,
        session_id: &str,
        options: WatchOptions,
        mut on_update: impl FnMut(WatchUpdate) + Send,
    ) -> Result<WatchEnd> {
        let path = self.stream_path(session_id)?;
        let mut last_id = options.last_event_id.clone();
        let mut seen: HashSet<String> = last_id.iter().cloned().collect();
        let mut failures = 0u32;
        let mut attempt = 0u32;
        let mut use_post = false;
        let mut server_retry: Option<Duration> = None;
        loop {
            attempt += 1;
            let reason = match self.connect(&path, last_id.as_deref(), use_post).await {
                Err(e) if e.code == ErrorCode::Protocol && e.status == Some(405) && !use_post => {
                    // The contract does not name the stream's method: try POST once.
                    use_post = true;
                    continue;
                }
                Err(e) if retryable(&e) => e.message,
                Err(e) => return Err(e),
                Ok(mut resp) => {
                    on_update(WatchUpdate::Connected { attempt });
                    let ct = resp
                        .headers()
                        .get(reqwest::header::CONTENT_TYPE)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_owned();
                    let Some(mut framing) = Framing::for_content_type(&ct) else {
                        return Err(Error::new(
                            ErrorCode::Protocol,
                            format!(
                                "The mission stream answered {ct:?}, not text/event-stream or NDJSON."
                            ),
                        ));
                    };
                    let mut batch = Vec::new();
                    let mut delivered = false;
                    let reason = loop {
                        match resp.chunk().await {
                            Ok(Some(chunk)) => {
                                framing.feed(&chunk, &mut batch);
                                server_retry = framing.retry().or(server_retry);
                                for event in batch.drain(..) {
                                    if let Some(id) = &event.id {
                                        if !seen.insert(id.clone()) {
                                            continue;
                                        }
                                        last_id = Some(id.clone());
                                    }
                                    delivered = true;
                                    let terminal = event.is_terminal().then(|| event.clone());
                                    on_update(WatchUpdate::Event { event });
                                    if let Some(terminal) = terminal {
                                        return Ok(WatchEnd {
                                            last_event_id: last_id,
                                            terminal,
                                        });
                                    }
                                }
                            }
                            Ok(None) => {
                                break "the stream ended before the case was waiting or complete"
                                    .to_owned();
                            }
                            Err(e) => break network_error(e).message,
                        }
                    };
                    if delivered {
                        failures = 0;
                    }
                    reason
                }
            };
            failures += 1;
            if failures > options.max_failures {
                return Err(Error::new(
                    ErrorCode::Network,
                    format!(
                        "Lost the mission stream and could not get it back after {} tries ({reason}).",
                        failures - 1
                    ),
                ));
            }
            let backoff = server_retry.unwrap_or_else(|| {
                let exp = options
                    .initial_backoff
                    .saturating_mul(1 << (failures - 1).min(16));
                exp.min(options.max_backoff)
            });
            on_update(WatchUpdate::Reconnecting {
                attempt,
                after_ms: backoff.as_millis() as u64,
                reason,
            });
            tokio::time::sleep(backoff).await;
        }
    }

    async fn connect(
        &self,
        path: &str,
        last_id: Option<&str>,
        post: bool,
    ) -> Result<reqwest::Response> {
        let method = if post {
            reqwest::Method::POST
        } else {
            reqwest::Method::GET
        };
        let mut req = self
            .api
            .conn
            .authed(method, path, &self.api.key)
            .header(
                reqwest::header::ACCEPT,
                "text/event-stream, application/x-ndjson;q=0.9",
            )
            .header(reqwest::header::CACHE_CONTROL, "no-cache");
        if let Some(id) = last_id {
            req = req.header("Last-Event-ID", id);
        }
        if post {
            req = req
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body("{}");
        }
        let resp = req.send().await.map_err(network_error)?;
        if resp.status().is_success() {
            return Ok(resp);
        }
        if resp.status().as_u16() == 405 {
            return Err(Error::new(
                ErrorCode::Protocol,
                "The stream does not allow this method.",
            )
            .with_status(405));
        }
        Err(self.api.key.scrub(error_from(resp, "Mission stream").await))
    }
}

/// Drops and server trouble are worth a reconnect; a refused key or unknown
/// session is not.
fn retryable(e: &Error) -> bool {
    matches!(
        e.code,
        ErrorCode::Network | ErrorCode::Timeout | ErrorCode::Server | ErrorCode::RateLimited
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ndjson_lines_become_events() {
        let mut f = Framing::for_content_type("application/x-ndjson; charset=utf-8").unwrap();
        let mut out = Vec::new();
        f.feed(
            b"{\"id\":1,\"event\":\"plan\",\"data\":{\"steps\":[\"a\"]}}\n{\"type\":\"session.wai",
            &mut out,
        );
        f.feed(b"ting\",\"id\":\"2\"}\n\n", &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].id.as_deref(), Some("1"));
        assert_eq!(out[0].data["steps"][0], "a");
        assert_eq!(out[1].event, "session.waiting");
        assert!(out[1].is_terminal());
        assert!(Framing::for_content_type("text/html").is_none());
    }
}
