//! Answers are read only up to what they can legitimately be: a server that sends more, or
//! never stops, gets a `protocol` error instead of all of Casebook's memory. And the health
//! check takes any 2xx with any body.

mod common;

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use casebook_core::ErrorCode;
use casebook_core::citations::client::{CitationClient, Input, ValidOptions, no_progress};
use casebook_core::keys::ApiKey;
use casebook_core::missions::client::{InvestigationClient, MissionSpec};
use casebook_core::net::connection::Connection;
use std::time::Duration;

/// A body of `total` bytes (`None`: without end), sent in 64 KB chunks without a length.
fn body(total: Option<usize>) -> Body {
    body_of(b"", b'x', total)
}

/// `start`, then `fill` in 64 KB chunks, `total` bytes in all (`None`: without end).
fn body_of(start: &'static [u8], fill: u8, total: Option<usize>) -> Body {
    let chunk = bytes::Bytes::from(vec![fill; 64 * 1024]);
    let n = total.map_or(usize::MAX, |t| t.div_ceil(chunk.len()));
    Body::from_stream(futures_util::stream::iter(
        std::iter::once(bytes::Bytes::from_static(start))
            .chain(std::iter::repeat_n(chunk, n))
            .map(Ok::<_, std::io::Error>),
    ))
}

async fn serve(reply: impl Fn() -> Response + Clone + Send + Sync + 'static) -> String {
    let app = axum::Router::new().fallback(move || {
        let reply = reply.clone();
        async move { reply() }
    });
    common::serve(app).await
}

fn missions(url: &str) -> InvestigationClient {
    InvestigationClient::new(Connection::new(url).unwrap(), ApiKey::parse("k").unwrap())
}

fn citations(url: &str) -> CitationClient {
    CitationClient::new(Connection::new(url).unwrap(), ApiKey::parse("k").unwrap())
}

/// Fails the test rather than hang when a read has no end.
async fn soon<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("the read stopped")
}

#[tokio::test]
async fn an_endless_json_answer_is_cut_off_at_one_megabyte() {
    let url = serve(|| (StatusCode::OK, body(None)).into_response()).await;
    let c = missions(&url);
    let err = soon(c.cancel("ses_1", None)).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Protocol, "{}", err.message());
    assert!(err.message().contains("larger than"), "{}", err.message());
    let err = soon(c.create_session(&MissionSpec::new("x", 100)))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Protocol, "{}", err.message());
    assert!(err.message().contains("larger than"), "{}", err.message());
}

#[tokio::test]
async fn a_declared_length_over_the_cap_is_refused_before_reading() {
    let url =
        serve(|| ([(header::CONTENT_LENGTH, "2000000")], body(Some(2_000_000))).into_response())
            .await;
    let err = soon(missions(&url).cancel("ses_1", None))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Protocol, "{}", err.message());
    assert!(err.message().contains("larger than"), "{}", err.message());
}

#[tokio::test]
async fn a_cite_answer_past_what_12_mb_allow_is_cut_off() {
    // Endless base64 in a well-formed start: only the size can stop it.
    let url = serve(|| {
        (
            StatusCode::OK,
            body_of(br#"{"documentBase64": ""#, b'A', None),
        )
            .into_response()
    })
    .await;
    let input = Input::essay("A paragraph.").unwrap();
    let err = soon(citations(&url).cite(&input, &ValidOptions::default(), &no_progress))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Protocol, "{}", err.message());
    assert!(err.message().contains("larger than"), "{}", err.message());
    let url = serve(|| (StatusCode::OK, body(None)).into_response()).await;
    let err = soon(citations(&url).cite(&input, &ValidOptions::default(), &no_progress))
        .await
        .unwrap_err();
    assert!(
        err.message().contains("not valid JSON"),
        "{}",
        err.message()
    );
    let err = soon(citations(&url).parse(&input, &no_progress))
        .await
        .unwrap_err();
    assert!(err.message().contains("larger than"), "{}", err.message());
}

#[tokio::test]
async fn a_cite_answer_just_under_the_cap_is_read_whole() {
    // Base64 of a document as large as a 12 MB request can carry, inside JSON.
    let url = serve(|| {
        let doc = "A".repeat(16_000_000);
        axum::Json(serde_json::json!({ "documentBase64": doc, "kind": "text" })).into_response()
    })
    .await;
    let input = Input::essay("A paragraph.").unwrap();
    let err = soon(citations(&url).cite(&input, &ValidOptions::default(), &no_progress))
        .await
        .err();
    // Decoded, those bytes are not UTF-8 text of an essay answer, or they are: either way
    // the answer was read, not cut off.
    if let Some(err) = err {
        assert!(!err.message().contains("larger than"), "{}", err.message());
    }
}

#[tokio::test]
async fn an_endless_error_body_keeps_its_status_meaning() {
    let url = serve(|| (StatusCode::UNAUTHORIZED, body(None)).into_response()).await;
    let err = soon(missions(&url).cancel("ses_1", None))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unauthorized, "{}", err.message());
    assert_eq!(err.status(), Some(401));
    assert!(err.message().len() < 1000, "{}", err.message());

    let url = serve(|| (StatusCode::BAD_GATEWAY, body(None)).into_response()).await;
    let err = soon(citations(&url).parse(&Input::essay("x").unwrap(), &no_progress))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Server, "{}", err.message());
}

#[tokio::test]
async fn health_takes_any_2xx_with_any_body() {
    for (status, ct, text, want) in [
        (
            200,
            "application/json",
            r#"{"status":"ok","v":1}"#,
            Some("ok"),
        ),
        (200, "text/plain", "OK", None),
        (204, "text/plain", "", None),
        (200, "application/json", "[1,2]", None),
        (202, "application/json", r#"{"up":true}"#, None),
    ] {
        let url = serve(move || {
            (
                StatusCode::from_u16(status).unwrap(),
                [(header::CONTENT_TYPE, ct)],
                text,
            )
                .into_response()
        })
        .await;
        let health = Connection::new(&url)
            .unwrap()
            .health()
            .await
            .unwrap_or_else(|e| panic!("{status} {text:?}: {}", e.message()));
        assert_eq!(health.status.as_deref(), want, "{status} {text:?}");
    }
    let url = serve(|| (StatusCode::OK, body(None)).into_response()).await;
    let health = soon(Connection::new(&url).unwrap().health()).await;
    assert!(
        health.is_ok(),
        "an endless body still says the service answers"
    );
}
