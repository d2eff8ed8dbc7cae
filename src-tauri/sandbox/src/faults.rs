//! Faults a test can switch on in a running sandbox, to prove the client loses
//! nothing: latency, dropped streams, tiny SSE chunks, CRLF line endings, a 500 or a
//! malformed JSON body on the Nth request, slow-drip bodies and 429 storms.
//!
//! All off by default. The sandbox only ever binds 127.0.0.1, so these never reach
//! anyone else.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// What the Nth request gets instead of its real answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// `500` with a JSON error body.
    Status500,
    /// `200` with `Content-Type: application/json` and a body that is not JSON.
    MalformedJson,
}

#[derive(Default)]
struct State_ {
    latency_ms: AtomicU64,
    drop_stream_after: AtomicU64,
    tiny_chunks: AtomicBool,
    crlf: AtomicBool,
    drip_ms_per_chunk: AtomicU64,
    storm_remaining: AtomicU64,
    storm_retry_after: AtomicU64,
    requests: AtomicU64,
    fail: Mutex<Option<(u64, Failure)>>,
}

/// A handle on one sandbox's faults; clones share state.
#[derive(Clone, Default)]
pub struct Faults(Arc<State_>);

impl Faults {
    /// Every response waits this long before it starts.
    pub fn set_latency(&self, latency: Duration) {
        self.0
            .latency_ms
            .store(latency.as_millis() as u64, Ordering::SeqCst);
    }

    /// Each event-stream connection is cut after it has sent `n` events (0: off).
    pub fn set_drop_stream_after(&self, n: u64) {
        self.0.drop_stream_after.store(n, Ordering::SeqCst);
    }

    pub fn drop_stream_after(&self) -> Option<u64> {
        match self.0.drop_stream_after.load(Ordering::SeqCst) {
            0 => None,
            n => Some(n),
        }
    }

    /// Event-stream frames are written a few bytes at a time.
    pub fn set_tiny_chunks(&self, on: bool) {
        self.0.tiny_chunks.store(on, Ordering::SeqCst);
    }

    pub fn tiny_chunks(&self) -> bool {
        self.0.tiny_chunks.load(Ordering::SeqCst)
    }

    /// Event-stream lines end with CRLF instead of LF.
    pub fn set_crlf(&self, on: bool) {
        self.0.crlf.store(on, Ordering::SeqCst);
    }

    pub fn crlf(&self) -> bool {
        self.0.crlf.load(Ordering::SeqCst)
    }

    /// Response bodies are sent in small pieces with this pause between them (zero: off).
    pub fn set_slow_drip(&self, pause: Duration) {
        self.0
            .drip_ms_per_chunk
            .store(pause.as_millis() as u64, Ordering::SeqCst);
    }

    /// The next `count` requests are answered 429 with `Retry-After: retry_after_secs`.
    pub fn set_429_storm(&self, count: u64, retry_after_secs: u64) {
        self.0
            .storm_retry_after
            .store(retry_after_secs, Ordering::SeqCst);
        self.0.storm_remaining.store(count, Ordering::SeqCst);
    }

    /// The `n`th request from now (1 = the next one) fails as `failure`.
    pub fn fail_request(&self, n: u64, failure: Failure) {
        let base = self.0.requests.load(Ordering::SeqCst);
        *self.0.fail.lock().unwrap() = Some((base + n.max(1), failure));
    }

    /// Switches every fault off.
    pub fn clear(&self) {
        self.set_latency(Duration::ZERO);
        self.set_drop_stream_after(0);
        self.set_tiny_chunks(false);
        self.set_crlf(false);
        self.set_slow_drip(Duration::ZERO);
        self.0.storm_remaining.store(0, Ordering::SeqCst);
        *self.0.fail.lock().unwrap() = None;
    }

    /// Requests seen so far (health checks included).
    pub fn requests_seen(&self) -> u64 {
        self.0.requests.load(Ordering::SeqCst)
    }

    /// Splits an event-stream frame as the faults say: CRLF and tiny chunks.
    pub fn shape_frame(&self, frame: String) -> Vec<bytes::Bytes> {
        let frame = if self.crlf() {
            frame.replace('\n', "\r\n")
        } else {
            frame
        };
        if !self.tiny_chunks() {
            return vec![bytes::Bytes::from(frame)];
        }
        // 1-3 byte pieces, so CRs, LFs and UTF-8 sequences land on chunk edges.
        let raw = frame.into_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        let mut step = 1;
        while i < raw.len() {
            let end = (i + step).min(raw.len());
            out.push(bytes::Bytes::copy_from_slice(&raw[i..end]));
            i = end;
            step = step % 3 + 1;
        }
        out
    }
}

/// The middleware that applies request-level faults to every route.
pub async fn apply(State(faults): State<Faults>, req: Request, next: Next) -> Response {
    let n = faults.0.requests.fetch_add(1, Ordering::SeqCst) + 1;
    let latency = faults.0.latency_ms.load(Ordering::SeqCst);
    if latency > 0 {
        tokio::time::sleep(Duration::from_millis(latency)).await;
    }
    let storm = faults
        .0
        .storm_remaining
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |r| r.checked_sub(1))
        .is_ok();
    if storm {
        let secs = faults.0.storm_retry_after.load(Ordering::SeqCst);
        return crate::auth::rate_limited(secs);
    }
    let fail = {
        let mut slot = faults.0.fail.lock().unwrap();
        match *slot {
            Some((at, f)) if at == n => {
                *slot = None;
                Some(f)
            }
            _ => None,
        }
    };
    match fail {
        Some(Failure::Status500) => {
            return crate::auth::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "Injected fault: internal error.",
            );
        }
        Some(Failure::MalformedJson) => {
            let mut resp = (StatusCode::OK, "{\"documentBase64\": \"AAAA\", oops").into_response();
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            return resp;
        }
        None => {}
    }
    let resp = next.run(req).await;
    let drip = faults.0.drip_ms_per_chunk.load(Ordering::SeqCst);
    if drip == 0 {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let pause = Duration::from_millis(drip);
    let stream = body.into_data_stream().flat_map(move |chunk| {
        let pieces: Vec<Result<bytes::Bytes, axum::Error>> = match chunk {
            Ok(b) => b
                .chunks(64)
                .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
                .collect(),
            Err(e) => vec![Err(e)],
        };
        futures_util::stream::iter(pieces).then(move |piece| async move {
            tokio::time::sleep(pause).await;
            piece
        })
    });
    Response::from_parts(parts, Body::from_stream(stream))
}
