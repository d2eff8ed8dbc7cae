//! The HTTP surface of both services.

use crate::Shared;
use axum::routing::get;
use axum::{Json, Router};
use std::sync::Arc;

pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/citations/health", get(health))
        .with_state(shared)
}

async fn health() -> Json<serde_json::Value> {
    Json(serde_json::json!({
        "status": "ok",
        "service": "citations",
        "sandbox": true,
        "version": env!("CARGO_PKG_VERSION"),
    }))
}
