//! The HTTP surface of both services, with request-level faults around it all.

use crate::shared::Shared;
use axum::Router;
use std::sync::Arc;

pub fn router(shared: Arc<Shared>) -> Router {
    let knobs = shared.knobs.clone();
    let outer = shared.clone();
    let inner = Router::new()
        .merge(crate::citations::routes())
        .merge(crate::console::routes())
        .merge(crate::discovery::routes())
        .merge(crate::missions::routes::routes())
        .merge(crate::agents::routes())
        .merge(crate::admin::routes())
        .fallback(not_found)
        .with_state(shared)
        .layer(axum::middleware::from_fn_with_state(
            knobs,
            crate::knobs::apply,
        ));
    // Around the whole router, since it changes the path the routes are matched on (a
    // layer on the router runs after routing): each agent's prefix becomes `/eve/v1`.
    Router::new()
        .fallback_service(inner)
        .layer(axum::middleware::from_fn_with_state(
            outer,
            crate::agents::route_agents,
        ))
}

async fn not_found(uri: axum::http::Uri) -> axum::response::Response {
    crate::errors::error(
        axum::http::StatusCode::NOT_FOUND,
        "not_found",
        &format!("No such endpoint: {}", uri.path()),
    )
}
