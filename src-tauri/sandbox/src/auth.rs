//! Bearer keys, rate limits and the JSON error shape every endpoint shares:
//! `{"error": {"code": "…", "message": "…"}}`.

use crate::Shared;
use axum::Json;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

pub fn error(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        Json(serde_json::json!({"error": {"code": code, "message": message}})),
    )
        .into_response()
}

pub fn error_with(
    status: StatusCode,
    code: &str,
    message: &str,
    extra: serde_json::Value,
) -> Response {
    let mut body = serde_json::json!({"code": code, "message": message});
    if let (Some(obj), Some(more)) = (body.as_object_mut(), extra.as_object()) {
        obj.extend(more.clone());
    }
    (status, Json(serde_json::json!({ "error": body }))).into_response()
}

pub fn rate_limited(retry_after_secs: u64) -> Response {
    let mut resp = error(
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
        &format!("Too many requests: retry after {retry_after_secs} s."),
    );
    resp.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
    resp
}

/// A 429 whose `Retry-After` is given as is (seconds or an HTTP date).
pub fn rate_limited_with(retry_after: HeaderValue) -> Response {
    let when = retry_after.to_str().unwrap_or("later").to_owned();
    let mut resp = error(
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
        &format!("Too many requests: retry after {when}."),
    );
    resp.headers_mut().insert(header::RETRY_AFTER, retry_after);
    resp
}

/// Authenticates the request and charges it to its key's rate limit.
/// Returns the key, or the 401/429 response to send.
pub fn admit(shared: &Shared, headers: &HeaderMap) -> Result<String, Response> {
    let key = bearer(shared, headers)?;
    if let Err(wait) = shared.limiter.check(&key) {
        return Err(rate_limited(wait.as_secs_f64().ceil().max(1.0) as u64));
    }
    Ok(key)
}

/// `Ok(key)` when the request carries a key this sandbox accepts.
pub fn bearer(shared: &Shared, headers: &HeaderMap) -> Result<String, Response> {
    let Some(value) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return Err(unauthorized(
            "Missing Authorization header: send Authorization: Bearer <API_KEY>.",
        ));
    };
    let Some(key) = value.strip_prefix("Bearer ").map(str::trim) else {
        return Err(unauthorized(
            "The Authorization header must use the Bearer scheme.",
        ));
    };
    // Compare with every configured key in full, so timing does not reveal a prefix.
    let ok = shared.keys.iter().fold(false, |acc, k| {
        acc | constant_time_eq(k.as_bytes(), key.as_bytes())
    });
    if ok {
        Ok(key.to_owned())
    } else {
        Err(unauthorized("The API key is not valid."))
    }
}

pub fn unauthorized(message: &str) -> Response {
    let mut resp = error(StatusCode::UNAUTHORIZED, "unauthorized", message);
    resp.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    resp
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// eve's error body (`{ok: false, error, code?}`), which its routes answer in eve mode.
pub fn eve_error(status: StatusCode, error: &str, code: Option<&str>) -> Response {
    let mut body = serde_json::json!({"ok": false, "error": error});
    if let Some(c) = code {
        body["code"] = serde_json::json!(c);
    }
    (status, axum::Json(body)).into_response()
}

/// eve's answer for a session it does not know, on any of its routes.
pub fn eve_session_not_found() -> Response {
    eve_error(StatusCode::NOT_FOUND, "Session not found.", None)
}
