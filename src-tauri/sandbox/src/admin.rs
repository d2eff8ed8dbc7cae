//! `POST /_sandbox/faults`: changes the knobs of a running sandbox over HTTP
//! ([`crate::knobs`] says which and how), so a test can drive the sandbox inside the app
//! it is testing. Sandbox-only, behind the bearer key, on 127.0.0.1 only. A refused
//! request is `400 invalid_field` naming the field; the answer carries `cutsMade`, the
//! stream connections cut so far, so a soak test outside the process can count its
//! drops.

use crate::auth::bearer;
use crate::errors::{error, error_with};
use crate::shared::Shared;
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;
use std::sync::Arc;

pub fn routes() -> axum::Router<Arc<Shared>> {
    axum::Router::new().route("/_sandbox/faults", post(set_knobs))
}

async fn set_knobs(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Err(resp) = bearer(&shared, &headers) {
        return resp;
    }
    let Ok(Value::Object(request)) = serde_json::from_slice(&body) else {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "Not a fault request: the body must be a JSON object of knobs.",
        );
    };
    match shared.knobs.change(request) {
        Ok(()) => Json(serde_json::json!({"ok": true, "cutsMade": shared.knobs.cuts_made()}))
            .into_response(),
        Err((field, message)) => error_with(
            StatusCode::BAD_REQUEST,
            "invalid_field",
            &message,
            serde_json::json!({ "field": field }),
        ),
    }
}
