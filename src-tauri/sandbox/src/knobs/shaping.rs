//! How the knobs act on every request and stream frame: the middleware around every
//! route (latency, storms, an injected failure, slow drip, a front's body limit, error
//! bodies in another family or as HTML), and the shaping of stream frames (CRLF, tiny
//! chunks).

use super::{Failure, Handle};
use crate::cite_variants::{self, ErrorFamily};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use std::sync::atomic::Ordering;
use std::time::Duration;

impl Handle {
    /// Splits an event-stream frame as the faults say: CRLF and tiny chunks.
    pub fn shape_frame(&self, frame: String) -> Vec<bytes::Bytes> {
        let (crlf, tiny) = self.get(|k| (k.crlf, k.tiny_chunks));
        let frame = if crlf {
            frame.replace('\n', "\r\n")
        } else {
            frame
        };
        if !tiny {
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

    /// `answer`, after reading `body` to its end when `readRefused` says.
    pub async fn refuse(&self, body: Body, answer: Response) -> Response {
        if !self.get(|k| k.read_refused) {
            return answer;
        }
        crate::body::after_draining(&mut body.into_data_stream(), 0, answer).await
    }
}

/// `Retry-After` as an IMF-fixdate `secs` from now, rounded up to the next whole
/// second so the date is never earlier than the wait it stands for.
pub(super) fn http_date_in(secs: u64) -> HeaderValue {
    const FORMAT: &[time::format_description::BorrowedFormatItem<'_>] = time::macros::format_description!(
        "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
    );
    let now = time::OffsetDateTime::now_utc();
    let at = now.replace_nanosecond(0).unwrap_or(now)
        + time::Duration::seconds(i64::try_from(secs).unwrap_or(i64::MAX / 2) + 1);
    let text = at
        .format(FORMAT)
        .unwrap_or_else(|_| "Thu, 01 Jan 1970 00:00:00 GMT".to_owned());
    HeaderValue::from_str(&text).unwrap_or(HeaderValue::from_static("1"))
}

/// The HTML page that replaces a 413's or 429's JSON body under `htmlErrors`.
fn html_error(resp: Response) -> Response {
    let (mut parts, _) = resp.into_parts();
    let title = match parts.status {
        StatusCode::PAYLOAD_TOO_LARGE => "413 Request Entity Too Large",
        _ => "429 Too Many Requests",
    };
    let page = format!(
        "<!DOCTYPE html>\n<html><head><title>{title}</title></head>\n<body><h1>{title}</h1><hr><p>casebook-sandbox</p></body></html>\n"
    );
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(page))
}

/// The middleware that applies request-level faults to every route.
pub async fn apply(State(knobs): State<Handle>, req: Request, next: Next) -> Response {
    let citations = req.uri().path().starts_with("/citations/");
    let (variants, html_errors) = knobs.get(|k| (k.citations, k.html_errors));
    let req = match (citations, variants.front_limit_bytes) {
        (true, Some(limit)) => match front(req, limit).await {
            Ok(req) => req,
            Err(resp) => return resp,
        },
        _ => req,
    };
    let resp = apply_inner(&knobs, req, next).await;
    let html = html_errors
        && matches!(
            resp.status(),
            StatusCode::PAYLOAD_TOO_LARGE | StatusCode::TOO_MANY_REQUESTS
        );
    if html {
        return html_error(resp);
    }
    if citations
        && variants.error_family != ErrorFamily::Default
        && cite_variants::family_applies(resp.status())
    {
        return in_family(resp, variants.error_family).await;
    }
    resp
}

/// A front with a body limit of `limit` bytes: a declared `Content-Length` over it is
/// answered `413` at once, from the headers, without reading the body; a body of
/// unknown length is read up to the limit and turned away as soon as it passes it.
async fn front(req: Request, limit: u64) -> Result<Request, Response> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match declared {
        Some(n) if n > limit => return Err(cite_variants::front_too_large()),
        Some(_) => return Ok(req),
        None => {}
    }
    let (parts, body) = req.into_parts();
    let mut stream = body.into_data_stream();
    let mut buf = Vec::new();
    while let Some(chunk) = stream.next().await {
        let Ok(chunk) = chunk else {
            return Err(cite_variants::front_too_large());
        };
        if (buf.len() + chunk.len()) as u64 > limit {
            return Err(cite_variants::front_too_large());
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(Request::from_parts(parts, Body::from(buf)))
}

/// A JSON error answer rewritten in `family`; other answers as they are.
async fn in_family(resp: Response, family: ErrorFamily) -> Response {
    let is_json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !is_json {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 1 << 20).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
    let code = value["error"]["code"].as_str().unwrap_or("error");
    let message = value["error"]["message"]
        .as_str()
        .unwrap_or("The request failed.");
    let Some((content_type, text)) =
        cite_variants::family_body(family, parts.status, code, message)
    else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    parts
        .headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(text))
}

async fn apply_inner(knobs: &Handle, req: Request, next: Next) -> Response {
    knobs.0.requests.fetch_add(1, Ordering::SeqCst);
    let latency = knobs.get(|k| k.latency_ms);
    if latency > 0 {
        tokio::time::sleep(Duration::from_millis(latency)).await;
    }
    if knobs.take(|k| &mut k.storm.count) {
        let secs = knobs.get(|k| k.storm.retry_after);
        return knobs
            .refuse(req.into_body(), crate::errors::rate_limited(secs))
            .await;
    }
    // Counted down from the request after the one that set it.
    let fail = knobs.get_mut(|k| {
        let f = k.fail.as_mut()?;
        f.nth = f.nth.saturating_sub(1);
        (f.nth == 0).then(|| k.fail.take().map(|f| f.kind))?
    });
    // These stand for a service that took the request in and then failed at it, so the
    // body is read first. Answered from the headers, a large upload would meet a closed
    // connection, and the client rightly sends it again: the fault would land or not by
    // timing (answers from the headers alone are `set_read_refused`'s to model).
    let bad = match fail {
        Some(Failure::Status500) => Some(crate::errors::error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "Injected fault: internal error.",
        )),
        Some(Failure::MalformedJson) => {
            let mut resp = (StatusCode::OK, "{\"documentBase64\": \"AAAA\", oops").into_response();
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            Some(resp)
        }
        None => None,
    };
    if let Some(answer) = bad {
        return crate::body::after_draining(&mut req.into_body().into_data_stream(), 0, answer)
            .await;
    }
    let resp = next.run(req).await;
    let drip = knobs.get(|k| k.slow_drip_ms);
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
