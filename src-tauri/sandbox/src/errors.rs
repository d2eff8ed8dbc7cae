//! The error bodies every endpoint shares: the citation service's
//! `{"error": {"code": "…", "message": "…"}}`, its 401 and 429, and eve's
//! `{ok: false, error, code?}`.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
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

pub fn unauthorized(message: &str) -> Response {
    let mut resp = error(StatusCode::UNAUTHORIZED, "unauthorized", message);
    resp.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    resp
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
