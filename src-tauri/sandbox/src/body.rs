//! Request bodies, refused past the contract's 12 MB.
//!
//! A refusal must reach every client. A client that writes its whole body before it
//! reads anything (Python's urllib and requests do) would otherwise meet a connection
//! reset: closing a socket with unread bytes in it makes the kernel send RST, which
//! can destroy the 413 before the client reads it. So once the answer is 413 the
//! rest of the body is read and thrown away, within bounds, before the answer goes.

use crate::errors::error;
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use futures_util::StreamExt;
use std::time::Duration;

/// The contract's request-body limit: "12 MB", read as 12,000,000 bytes, the way
/// Casebook's client reads it.
pub const MAX_BODY_BYTES: usize = 12_000_000;
/// Past this many bytes in all, a refused body is no longer drained: the client is
/// sending far more than any legal request, and the connection is closed instead.
const MAX_DRAIN_BYTES: usize = 64 * 1024 * 1024;
/// Nor is a refused body drained for longer than this.
const MAX_DRAIN_TIME: Duration = Duration::from_secs(30);

/// Reads the whole body, or answers 413 as soon as it is known to pass
/// [`MAX_BODY_BYTES`] (from `Content-Length`, or from the bytes read).
pub async fn read_limited(headers: &HeaderMap, body: Body) -> Result<Vec<u8>, Response> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let mut stream = body.into_data_stream();
    if declared.is_some_and(|n| n > MAX_BODY_BYTES) {
        return Err(after_draining(&mut stream, 0, too_large()).await);
    }
    let mut buf = Vec::with_capacity(declared.unwrap_or(0));
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                &format!("Cannot read the body: {e}"),
            )
        })?;
        if buf.len() + chunk.len() > MAX_BODY_BYTES {
            let seen = buf.len() + chunk.len();
            drop(buf);
            return Err(after_draining(&mut stream, seen, too_large()).await);
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf)
}

/// `answer`, sent once the rest of the body (past the `already` bytes read) is read and
/// thrown away, within bounds. When it could not be, the connection closes after it:
/// what is left of the body cannot be told from a next request.
pub async fn after_draining(
    stream: &mut axum::body::BodyDataStream,
    already: usize,
    mut answer: Response,
) -> Response {
    let mut total = already;
    let rest = async {
        while let Some(chunk) = stream.next().await {
            let Ok(chunk) = chunk else { return false };
            total += chunk.len();
            if total > MAX_DRAIN_BYTES {
                return false;
            }
        }
        true
    };
    let drained = tokio::time::timeout(MAX_DRAIN_TIME, rest)
        .await
        .unwrap_or(false);
    if !drained {
        answer
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    answer
}

fn too_large() -> Response {
    error(
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
        "The request body is larger than 12 MB (12,000,000 bytes).",
    )
}

/// A JSON number that is a whole non-negative number, as `u64`. `5.0` counts: JSON
/// has one number type, and JSON Schema's `integer` accepts it.
pub fn whole_number(v: &serde_json::Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        let f = v.as_f64()?;
        // 2^64 as f64 is exact; anything below it that is whole fits in u64.
        (f >= 0.0 && f.fract() == 0.0 && f < 18_446_744_073_709_551_616.0).then_some(f as u64)
    })
}
