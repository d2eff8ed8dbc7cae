//! A session id is one path segment: an id that would climb out of the session's path
//! never becomes a request (the key would go to another endpoint), and any other id is
//! sent percent-encoded.

mod common;

use axum::extract::{Request, State};
use casebook_core::ErrorCode;
use casebook_core::keys::ApiKey;
use casebook_core::missions::client::InvestigationClient;
use casebook_core::missions::stream::WatchOptions;
use casebook_core::net::connection::Connection;
use std::sync::{Arc, Mutex};

type Seen = Arc<Mutex<Vec<String>>>;

/// A server that records every request's raw path and accepts any cancel.
async fn recorder() -> (InvestigationClient, Seen) {
    let seen: Seen = Arc::default();
    let app = axum::Router::new()
        .fallback(|State(seen): State<Seen>, req: Request| async move {
            seen.lock().unwrap().push(req.uri().path().to_owned());
            axum::Json(serde_json::json!({"ok": true, "sessionId": "x", "status": "accepted"}))
        })
        .with_state(seen.clone());
    let url = common::serve(app).await;
    let client =
        InvestigationClient::new(Connection::new(&url).unwrap(), ApiKey::parse("k").unwrap());
    (client, seen)
}

#[tokio::test]
async fn dot_dot_and_slashes_never_reach_the_server() {
    let (c, seen) = recorder().await;
    for bad in ["..", ".", "", "../cancel", "a/b"] {
        let err = c.cancel(bad, None).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidInput, "cancel {bad:?}");
        let err = c
            .watch(bad, WatchOptions::default(), |_| {})
            .await
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidInput, "watch {bad:?}");
    }
    assert_eq!(
        *seen.lock().unwrap(),
        Vec::<String>::new(),
        "no request was made"
    );
}

#[tokio::test]
async fn other_ids_are_sent_as_one_encoded_segment() {
    let (c, seen) = recorder().await;
    c.cancel("a b?c", None).await.unwrap();
    c.cancel("ses_é#1", None).await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            "/eve/v1/session/a%20b%3Fc/cancel".to_owned(),
            "/eve/v1/session/ses_%C3%A9%231/cancel".to_owned()
        ]
    );
}
