//! The sandbox's side of a sign-in: the page its links open (`GET /_sandbox/sign-in/
//! {session}/{attempt}`), whose visit is the browser's callback, and the log of every
//! POST a session received, so a test can show that nothing was POSTed for a sign-in.

use super::{EveSession, Input};
use crate::missions::session::random_u64;
use crate::shared::Shared;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// Where the request came in (`http://<Host>`): sign-in links point back at the sandbox
/// as the client reached it.
pub(super) fn origin(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.len() <= 255
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
        })
        .unwrap_or("127.0.0.1");
    format!("http://{host}")
}

impl EveSession {
    /// Logs a POST the session received: its route after the session's path, and body.
    pub(super) fn posted(&self, route: &str, body: &Map<String, Value>) {
        self.lock()
            .posts
            .push(json!({"route": route, "body": Value::Object(body.clone())}));
    }
}

fn page(status: StatusCode, title: &str, text: &str) -> Response {
    let html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><h1>{title}</h1><p>{text}</p></body></html>"
    );
    (status, Html(html)).into_response()
}

/// `GET /_sandbox/sign-in/{session}/{attempt}`: what the person's browser opens. A
/// pending attempt completes (the turn goes on); one a newer attempt replaced answers
/// 410, as a stale device link would.
pub async fn sign_in_page(shared: Arc<Shared>, session: &str, attempt: &str) -> Response {
    let Some(s) = shared.missions.eve.get(session) else {
        return page(
            StatusCode::NOT_FOUND,
            "No such sign-in",
            "This link is not known.",
        );
    };
    let mut st = s.lock();
    if st.agent.asks.replaced.iter().any(|a| a == attempt) {
        return page(
            StatusCode::GONE,
            "This link was replaced",
            "A newer sign-in link was sent; use that one.",
        );
    }
    if st.agent.sign_in_pending() != Some(attempt) {
        return page(
            StatusCode::NOT_FOUND,
            "No sign-in waiting",
            "This sign-in is already complete or was never asked for.",
        );
    }
    let delivery = format!("dlv_{:016x}", random_u64());
    s.apply(
        &mut st,
        Input::SignedIn {
            attempt: attempt.to_owned(),
            delivery,
        },
    );
    page(
        StatusCode::OK,
        "Signed in to Sandbox Notes",
        "You can close this page and go back to Casebook.",
    )
}

/// The sign-in page's route.
pub async fn page_route(
    axum::extract::State(shared): axum::extract::State<Arc<Shared>>,
    axum::extract::Path((session, attempt)): axum::extract::Path<(String, String)>,
) -> Response {
    sign_in_page(shared, &session, &attempt).await
}

/// `GET /_sandbox/posts?sessionId=…` (bearer key): every POST the session received after
/// its create, in order, as `{route, body}`.
pub async fn posts_route(
    axum::extract::State(shared): axum::extract::State<Arc<Shared>>,
    headers: HeaderMap,
    uri: axum::http::Uri,
) -> Response {
    if let Err(resp) = crate::auth::bearer(&shared, &headers) {
        return resp;
    }
    let id = uri
        .query()
        .and_then(|q| q.split('&').find_map(|p| p.strip_prefix("sessionId=")))
        .unwrap_or_default();
    let posts = shared.missions.posts(id);
    axum::Json(json!({"ok": true, "sessionId": id, "posts": posts})).into_response()
}
