//! eve's wire: events rendered as stored records (A/B: one event object a line; 27:
//! commit and progress lines of v27 facts), and the NDJSON stream response.

pub mod v27;

use super::agent::Ev;
use super::{EveSession, Rec};
use crate::knobs::Cut;
use crate::knobs::{Handle, MissionProtocol};
use crate::missions::ending::{End, queued_or_end};
use crate::missions::session::{now_ms, random_u64, rfc3339};
use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// Silence before a heartbeat.
const HEARTBEAT: Duration = Duration::from_secs(10);
const BATCH: usize = 256;

pub fn stream_version(proto: MissionProtocol) -> &'static str {
    match proto {
        MissionProtocol::EveA => "19",
        MissionProtocol::EveB => "26",
        _ => "27",
    }
}

/// `evt_` and 26 Crockford base-32 characters: 10 of time, 16 of randomness, like a ULID.
pub fn event_id() -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let mut out = String::from("evt_");
    let ms = now_ms();
    for i in (0..10).rev() {
        out.push(ALPHABET[((ms >> (i * 5)) & 31) as usize] as char);
    }
    let (a, b) = (random_u64(), random_u64());
    for i in 0..16 {
        let bits = if i < 8 {
            a >> (i * 5)
        } else {
            b >> ((i - 8) * 5)
        };
        out.push(ALPHABET[(bits & 31) as usize] as char);
    }
    out
}

/// A/B: one event object.
pub fn render_event(proto: MissionProtocol, ev: &Ev) -> Rec {
    let mut meta = json!({"at": rfc3339(now_ms())});
    if proto == MissionProtocol::EveB {
        meta["id"] = json!(event_id());
    }
    if let Some(d) = &ev.delivery {
        meta["deliveryIds"] = json!([d]);
    }
    let line = json!({"type": ev.kind, "data": ev.data, "meta": meta}).to_string();
    Rec {
        line,
        boundary: matches!(
            ev.kind,
            "session.waiting" | "session.completed" | "session.failed"
        ),
        ended: matches!(ev.kind, "session.completed" | "session.failed"),
    }
}

/// A stored line read back: its flags, from what it says.
pub fn rec_from_line(proto: MissionProtocol, line: &str) -> Rec {
    let v: Value = serde_json::from_str(line).unwrap_or_default();
    let (boundary, ended) = if proto == MissionProtocol::Eve27 {
        let ended = v["facts"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f["type"] == "session.ended"));
        (ended, ended)
    } else {
        let ty = v["type"].as_str().unwrap_or_default();
        (
            matches!(
                ty,
                "session.waiting" | "session.completed" | "session.failed"
            ),
            matches!(ty, "session.completed" | "session.failed"),
        )
    };
    Rec {
        line: line.to_owned(),
        boundary,
        ended,
    }
}

struct Streamer {
    session: Arc<EveSession>,
    grown: watch::Receiver<u64>,
    next: usize,
    pending: VecDeque<Bytes>,
    sent: u64,
    drop_after: Option<u64>,
    cut: Option<Cut>,
    knobs: Handle,
    end: End,
    stop: watch::Receiver<bool>,
    lease_until: Option<Instant>,
    last_write: Instant,
}

impl Streamer {
    fn proto(&self) -> MissionProtocol {
        self.session.proto
    }

    fn push(&mut self, line: String) {
        self.pending.extend(self.knobs.shape_frame(line));
        self.last_write = Instant::now();
    }

    fn transport(&mut self, record: Value) {
        self.push(format!("{record}\n"));
    }

    fn heartbeat(&mut self) {
        if self.proto() == MissionProtocol::Eve27 {
            self.transport(json!({"$eve": "heartbeat"}));
        } else {
            self.push("\n".to_owned());
        }
    }

    fn lease_ended(&mut self) {
        let record = if self.proto() == MissionProtocol::Eve27 {
            json!({"$eve": "stream.lease-ended"})
        } else {
            json!({"$eve": "stream.lease-ended", "version": 1})
        };
        self.transport(record);
        self.end = End::Clean;
    }
}

/// Streams `session` from position `start` (already resolved against the tail).
pub fn response(
    session: Arc<EveSession>,
    start: usize,
    tail: Option<i64>,
    position: Option<usize>,
    knobs: Handle,
    stop: watch::Receiver<bool>,
) -> Response {
    let proto = session.proto;
    let lease = match proto {
        MissionProtocol::EveA => None,
        _ => knobs.get(|k| k.lease()),
    };
    let mut s = Streamer {
        grown: session.grown.subscribe(),
        session: session.clone(),
        next: start,
        pending: VecDeque::new(),
        sent: 0,
        drop_after: knobs.get(|k| k.drop_stream_after()),
        cut: knobs.take_cut(),
        knobs,
        end: End::No,
        stop,
        lease_until: lease.map(|l| Instant::now() + l),
        last_write: Instant::now(),
    };
    s.push("\n".to_owned());
    if proto == MissionProtocol::Eve27 {
        s.transport(json!({"$eve": "heartbeat"}));
        if let Some(next) = position {
            s.transport(json!({"$eve": "position", "next": next}));
        }
    }
    let body = Body::from_stream(futures_util::stream::unfold(s, step));
    let mut resp = Response::new(body);
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson; charset=utf-8"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-store, no-transform"),
    );
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    h.insert("x-eve-stream-format", HeaderValue::from_static("ndjson"));
    h.insert(
        "x-eve-stream-version",
        HeaderValue::from_static(stream_version(proto)),
    );
    if let Ok(v) = HeaderValue::from_str(&session.id) {
        h.insert("x-eve-session-id", v);
    }
    if let Some(t) = tail {
        h.insert("x-eve-stream-tail-index", HeaderValue::from(t));
    }
    resp
}

async fn step(mut s: Streamer) -> Option<(Result<Bytes, std::io::Error>, Streamer)> {
    loop {
        if let Some(item) = queued_or_end(&mut s.pending, &mut s.end).await {
            return item.map(|chunk| (chunk, s));
        }
        if *s.stop.borrow() {
            return None;
        }
        if s.lease_until.is_some_and(|t| Instant::now() >= t) {
            s.lease_ended();
            continue;
        }
        s.grown.borrow_and_update();
        let (batch, len, ended) = {
            let st = s.session.lock();
            let from = s.next.min(st.records.len());
            let to = (from + BATCH).min(st.records.len());
            (
                st.records[from..to].to_vec(),
                st.records.len(),
                st.ended_on_wire,
            )
        };
        if !batch.is_empty() {
            for rec in &batch {
                let line = format!("{}\n", rec.line);
                if let Some(cut) = s.cut.filter(|c| c.after_events == s.sent) {
                    let bytes: Vec<u8> = s.knobs.shape_frame(line).concat();
                    let at = cut.offset(&bytes);
                    if at > 0 {
                        s.pending.push_back(Bytes::copy_from_slice(&bytes[..at]));
                    }
                    s.end = End::Cut;
                    s.knobs.count_cut();
                    break;
                }
                s.push(line);
                s.next += 1;
                s.sent += 1;
                let caught_up = s.next >= len;
                if caught_up && rec.ended && s.proto() == MissionProtocol::Eve27 {
                    s.transport(json!({"$eve": "stream.ended"}));
                    s.end = End::Clean;
                    break;
                }
                if caught_up && rec.boundary && s.proto() == MissionProtocol::EveA {
                    s.end = End::Clean;
                    break;
                }
                if s.drop_after == Some(s.sent) {
                    s.end = End::Cut;
                    break;
                }
            }
            continue;
        }
        if ended && s.next >= len {
            // Nothing more will come.
            if s.proto() == MissionProtocol::Eve27 {
                s.transport(json!({"$eve": "stream.ended"}));
            }
            s.end = End::Clean;
            continue;
        }
        let heartbeat_at = s.last_write + HEARTBEAT;
        let wake_at = match s.lease_until {
            Some(l) if l < heartbeat_at => l,
            _ => heartbeat_at,
        };
        let mut stop = s.stop.clone();
        tokio::select! {
            changed = s.grown.changed() => if changed.is_err() { s.end = End::Clean },
            _ = tokio::time::sleep_until(wake_at) => {
                if s.lease_until.is_some_and(|t| Instant::now() >= t) {
                    s.lease_ended();
                } else {
                    s.heartbeat();
                }
            }
            _ = stop.wait_for(|stopped| *stopped) => return None,
        }
    }
}
