//! Bearer keys and rate limits: who may call, and how often.

use crate::errors::{rate_limited, unauthorized};
use crate::shared::Shared;
use axum::http::{HeaderMap, header};
use axum::response::Response;

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

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
