//! The citation client against the real sandbox over loopback HTTP, with faults.

use casebook_core::ErrorCode;
use casebook_core::citations::{CitationClient, CiteOptions, Input, Mode, OutputKind, no_progress};
use casebook_core::connection::Connection;
use casebook_core::documents::{self, DocKind};
use casebook_core::http::{Progress, RetryPolicy};
use casebook_core::keys::ApiKey;
use casebook_sandbox::{Failure, RunningSandbox, SandboxConfig, start};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn data(rel: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data")
            .join(rel),
    )
    .unwrap()
}

async fn setup() -> (RunningSandbox, CitationClient) {
    let s = start(SandboxConfig::default()).await.unwrap();
    let client = CitationClient::new(
        Connection::new(s.base_url()).unwrap(),
        ApiKey::parse(s.key()).unwrap(),
    );
    (s, client)
}

#[tokio::test]
async fn parses_and_cites_each_kind() {
    let (_s, client) = setup().await;
    let docx = data("docx/tracked-changes-hyperlinks.docx");
    let parsed = client
        .parse(&Input::document(&docx).unwrap(), &no_progress)
        .await
        .unwrap();
    assert!(!parsed.paragraphs.is_empty());
    assert_eq!(
        parsed.extra["kind"], "docx",
        "fields beyond the contract are kept"
    );

    let pptx = data("pptx/lecture-bullets-urls-embedded-zip.pptx");
    let input = Input::document(&pptx).unwrap();
    let opts = CiteOptions {
        mode: Mode::Every,
        min_citations: 1,
        max_citations: 1,
        seed: Some(3),
    };
    let cited = client.cite(&input, &opts, &no_progress).await.unwrap();
    assert_eq!(cited.kind, OutputKind::Pptx);
    assert_eq!(documents::sniff(&cited.bytes).unwrap(), DocKind::Pptx);
    assert_ne!(cited.bytes, pptx, "the deck was rewritten");
    let again = client
        .parse(&Input::document(&cited.bytes).unwrap(), &no_progress)
        .await
        .unwrap();
    assert!(
        !again.references.is_empty(),
        "the cited deck has references"
    );

    let essay = "A paragraph long enough to be cited by the sandbox service.\n\nAnother one, also long enough to cite.";
    let cited = client
        .cite(&Input::essay(essay).unwrap(), &opts, &no_progress)
        .await
        .unwrap();
    assert_eq!(cited.kind, OutputKind::Text);
    assert!(
        String::from_utf8(cited.bytes)
            .unwrap()
            .contains("References")
    );
}

#[tokio::test]
async fn a_wrong_key_is_unauthorized_and_never_echoed() {
    let s = start(SandboxConfig::default()).await.unwrap();
    let secret = "cbk_wrong_0123456789abcdef";
    let client = CitationClient::new(
        Connection::new(s.base_url()).unwrap(),
        ApiKey::parse(secret).unwrap(),
    );
    let err = client
        .parse(&Input::essay("x").unwrap(), &no_progress)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unauthorized);
    assert_eq!(err.status(), Some(401));
    let shown = format!(
        "{err} {err:?} {client:?} {}",
        serde_json::to_string(&err).unwrap()
    );
    assert!(!shown.contains(secret), "the key leaked: {shown}");
}

#[tokio::test]
async fn a_429_storm_is_waited_out_with_a_countdown() {
    let (s, client) = setup().await;
    s.faults().set_429_storm(2, 1);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let progress = move |p: Progress| log.lock().unwrap().push(p);
    let started = Instant::now();
    let parsed = client
        .parse(&Input::essay("Some text here.").unwrap(), &progress)
        .await
        .unwrap();
    assert!(!parsed.paragraphs.is_empty());
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "each Retry-After: 1 was waited out"
    );
    let waits: Vec<Progress> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|p| matches!(p, Progress::RateLimited { .. }))
        .cloned()
        .collect();
    assert_eq!(
        waits,
        vec![
            Progress::RateLimited {
                seconds: 1,
                attempt: 1,
                of: 3
            },
            Progress::RateLimited {
                seconds: 1,
                attempt: 2,
                of: 3
            },
        ]
    );
}

#[tokio::test]
async fn a_429_storm_longer_than_the_retries_is_rate_limited() {
    let (s, client) = setup().await;
    let client = client.with_retry(RetryPolicy {
        max_retries: 1,
        max_wait: Duration::from_secs(5),
    });
    s.faults().set_429_storm(10, 1);
    let err = client
        .parse(&Input::essay("x").unwrap(), &no_progress)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::RateLimited);
    assert_eq!(err.retry_after_secs(), Some(1));
    // A Retry-After beyond what we wait is handed to the caller at once.
    s.faults().set_429_storm(1, 3600);
    let started = Instant::now();
    let err = client
        .parse(&Input::essay("x").unwrap(), &no_progress)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::RateLimited);
    assert_eq!(err.retry_after_secs(), Some(3600));
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[tokio::test]
async fn server_errors_malformed_answers_and_slow_drips() {
    let (s, client) = setup().await;
    s.faults().fail_request(1, Failure::Status500);
    let err = client
        .parse(&Input::essay("x").unwrap(), &no_progress)
        .await
        .unwrap_err();
    assert_eq!((err.code(), err.status()), (ErrorCode::Server, Some(500)));

    s.faults().fail_request(1, Failure::MalformedJson);
    let err = client
        .cite(
            &Input::essay("x").unwrap(),
            &CiteOptions::default(),
            &no_progress,
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Protocol);

    s.faults().set_slow_drip(Duration::from_millis(5));
    let docx = data("docx/hyperlink-fragments.docx");
    let cited = client
        .cite(
            &Input::document(&docx).unwrap(),
            &CiteOptions::default(),
            &no_progress,
        )
        .await
        .unwrap();
    assert_eq!(
        cited.kind,
        OutputKind::Docx,
        "a body that arrives in drips is read whole"
    );
}

#[tokio::test]
async fn no_key_follows_a_redirect_to_another_origin() {
    use axum::http::HeaderMap;
    use axum::response::Redirect;
    use axum::routing::{any, post};
    // The "other origin": records any Authorization header it is sent.
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = seen.clone();
    let other = axum::Router::new().route(
        "/{*rest}",
        any(move |headers: HeaderMap| {
            let record = record.clone();
            async move {
                if let Some(v) = headers.get("authorization") {
                    record
                        .lock()
                        .unwrap()
                        .push(v.to_str().unwrap_or("").to_owned());
                }
                "{}"
            }
        }),
    );
    let other_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let other_url = format!("http://{}", other_listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(other_listener, other).await.unwrap() });
    let target = format!("{other_url}/citations/v1/parse");
    let redirector = axum::Router::new().route(
        "/citations/v1/parse",
        post(move || async move { Redirect::temporary(&target) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, redirector).await.unwrap() });

    let client = CitationClient::new(
        Connection::new(&url).unwrap(),
        ApiKey::parse("cbk_secret_key").unwrap(),
    );
    let err = client
        .parse(&Input::essay("x").unwrap(), &no_progress)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Protocol, "{}", err.message());
    assert!(
        seen.lock().unwrap().is_empty(),
        "the key reached another origin: {:?}",
        seen.lock().unwrap()
    );
}
