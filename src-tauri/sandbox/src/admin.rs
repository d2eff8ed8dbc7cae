//! `POST /_sandbox/faults`: switches faults on a running sandbox over HTTP, so a
//! test can drive the sandbox inside the app it is testing. Sandbox-only, needs the
//! bearer key, and the sandbox only listens on 127.0.0.1.

use crate::auth::{bearer, error};
use crate::{Failure, Shared};
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FaultRequest {
    clear: Option<bool>,
    latency_ms: Option<u64>,
    drop_stream_after: Option<u64>,
    tiny_chunks: Option<bool>,
    crlf: Option<bool>,
    slow_drip_ms: Option<u64>,
    storm: Option<Storm>,
    fail: Option<Fail>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Storm {
    count: u64,
    retry_after: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Fail {
    /// 1 = the next request.
    nth: u64,
    /// "500" or "malformed_json".
    kind: String,
}

pub fn routes() -> axum::Router<Arc<Shared>> {
    axum::Router::new().route("/_sandbox/faults", post(set_faults))
}

async fn set_faults(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(resp) = bearer(&shared, &headers) {
        return resp;
    }
    let req: FaultRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                &format!("Not a fault request: {e}"),
            );
        }
    };
    let f = &shared.faults;
    if req.clear == Some(true) {
        f.clear();
    }
    if let Some(ms) = req.latency_ms {
        f.set_latency(Duration::from_millis(ms));
    }
    if let Some(n) = req.drop_stream_after {
        f.set_drop_stream_after(n);
    }
    if let Some(on) = req.tiny_chunks {
        f.set_tiny_chunks(on);
    }
    if let Some(on) = req.crlf {
        f.set_crlf(on);
    }
    if let Some(ms) = req.slow_drip_ms {
        f.set_slow_drip(Duration::from_millis(ms));
    }
    if let Some(s) = req.storm {
        f.set_429_storm(s.count, s.retry_after);
    }
    if let Some(fail) = req.fail {
        let kind = match fail.kind.as_str() {
            "500" => Failure::Status500,
            "malformed_json" => Failure::MalformedJson,
            other => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "invalid_field",
                    &format!("Unknown failure kind {other:?}."),
                );
            }
        };
        // This request itself counts as one; "1" means the request after it.
        f.fail_request(fail.nth, kind);
    }
    Json(serde_json::json!({"ok": true})).into_response()
}
