//! Bearer-key checks, answering 401 with a JSON body as the contract says.

use crate::Shared;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::Json;

pub fn error(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        Json(serde_json::json!({"error": {"code": code, "message": message}})),
    )
        .into_response()
}

/// `Ok(key)` when the request carries a key this sandbox accepts.
pub fn bearer(shared: &Shared, headers: &HeaderMap) -> Result<String, Response> {
    let Some(value) = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) else {
        return Err(unauthorized("Missing Authorization header: send Authorization: Bearer <API_KEY>."));
    };
    let Some(key) = value.strip_prefix("Bearer ").map(str::trim) else {
        return Err(unauthorized("The Authorization header must use the Bearer scheme."));
    };
    // Compare every configured key in full so timing does not reveal a prefix.
    let ok = shared.keys.iter().fold(false, |acc, k| acc | constant_time_eq(k.as_bytes(), key.as_bytes()));
    if ok {
        Ok(key.to_owned())
    } else {
        Err(unauthorized("The API key is not valid."))
    }
}

fn unauthorized(message: &str) -> Response {
    let mut resp = error(StatusCode::UNAUTHORIZED, "unauthorized", message);
    resp.headers_mut()
        .insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
    resp
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
