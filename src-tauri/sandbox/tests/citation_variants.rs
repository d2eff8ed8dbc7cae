//! The other legal answers the sandbox can give where the citation contract (and the
//! create-session answer) leaves the choice open: the parse answer's shape, the
//! success status, and HTML bodies on 413 and 429.

mod common;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use casebook_sandbox::{ParseShape, RateLimit, SandboxConfig, start};
use common::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

fn fixture(rel: &str) -> Vec<u8> {
    casebook_testsupport::files::fixture_bytes(rel)
}

fn docx_request() -> Value {
    json!({"fileBase64": B64.encode(fixture("docx/citations-bibliography-toc.docx"))})
}

#[tokio::test]
async fn parse_shape_alternate_has_blocks_and_no_paragraphs() {
    let sb = sandbox().await;
    let default: Value = post_json(&sb, "/citations/v1/parse", &docx_request())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        set_faults(&sb, json!({"parseShape": "alternate"})).await,
        200
    );
    let resp = post_json(&sb, "/citations/v1/parse", &docx_request()).await;
    assert_eq!(resp.status(), 200);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let alt: Value = resp.json().await.unwrap();
    assert!(alt.get("paragraphs").is_none(), "{alt:.200}");
    assert!(alt.get("references").is_none());
    let texts = |v: &Value, list: &str, field: &str| -> Vec<String> {
        v[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p[field].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        texts(&alt, "blocks", "content"),
        texts(&default, "paragraphs", "text")
    );
    assert_eq!(
        texts(&alt, "bibliography", "content"),
        texts(&default, "references", "text")
    );
    assert_eq!(alt["meta"]["format"], "docx");
    assert_eq!(alt["meta"]["bibliographyTitle"], "Bibliography");

    sb.knobs().set(|k| k.parse_shape = ParseShape::Default);
    let back: Value = post_json(&sb, "/citations/v1/parse", &docx_request())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(back, default);
    sb.stop().await;
}

#[tokio::test]
async fn parse_shape_text_answers_text_plain() {
    let sb = sandbox().await;
    sb.knobs().set(|k| k.parse_shape = ParseShape::Text);
    let essay = json!({"essay": "Intro paragraph.\n\nSecond paragraph.\n\nReferences\nSmith, J. (2020). A book."});
    let resp = post_json(&sb, "/citations/v1/parse", &essay).await;
    assert_eq!(resp.status(), 200);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain"),
        "{:?}",
        resp.headers()
    );
    let text = resp.text().await.unwrap();
    assert_eq!(
        text,
        "Intro paragraph.\nSecond paragraph.\n\nReferences\nSmith, J. (2020). A book.\n"
    );
    // Errors stay JSON.
    let resp = post_json(&sb, "/citations/v1/parse", &json!({})).await;
    assert_eq!(resp.status(), 400);
    assert!(resp.json::<Value>().await.unwrap()["error"]["code"].is_string());
    sb.stop().await;
}

#[tokio::test]
async fn success_status_applies_to_parse_cite_and_create() {
    let sb = sandbox().await;
    let create_body = json!({ "message": MESSAGE });
    let essay = json!({"essay": "One paragraph. Another sentence."});
    let statuses = || async {
        [
            post_json(&sb, "/citations/v1/parse", &essay).await.status(),
            post_json(&sb, "/citations/v1/cite", &essay).await.status(),
            post_json(&sb, "/eve/v1/session", &create_body)
                .await
                .status(),
        ]
    };
    assert_eq!(
        statuses().await,
        [StatusCode::OK, StatusCode::OK, StatusCode::CREATED]
    );
    for code in [200u16, 201, 202] {
        assert_eq!(set_faults(&sb, json!({"successStatus": code})).await, 200);
        let want = StatusCode::from_u16(code).unwrap();
        assert_eq!(statuses().await, [want; 3]);
    }
    // The bodies are the same; errors keep their status.
    let resp = post_json(&sb, "/eve/v1/session", &create_body).await;
    assert_eq!(resp.status(), 202);
    assert!(resp.json::<Value>().await.unwrap()["sessionId"].is_string());
    assert_eq!(
        post_json(&sb, "/citations/v1/parse", &json!({}))
            .await
            .status(),
        400
    );

    sb.knobs().set(|k| k.success_status = 0);
    assert_eq!(
        statuses().await,
        [StatusCode::OK, StatusCode::OK, StatusCode::CREATED]
    );
    sb.stop().await;
}

async fn assert_html(resp: reqwest::Response, status: u16) -> reqwest::header::HeaderMap {
    assert_eq!(resp.status(), status);
    let headers = resp.headers().clone();
    assert!(
        headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"),
        "{headers:?}"
    );
    let body = resp.text().await.unwrap();
    assert!(body.starts_with("<!DOCTYPE html>"), "{body}");
    assert!(body.contains(&status.to_string()), "{body}");
    assert!(serde_json::from_str::<Value>(&body).is_err());
    headers
}

#[tokio::test]
async fn html_errors_turn_413_and_429_bodies_into_pages() {
    let sb = start(SandboxConfig {
        rate_limit: RateLimit {
            per_minute: 6,
            burst: 3,
        },
        ..config()
    })
    .await
    .unwrap();
    assert_eq!(set_faults(&sb, json!({"htmlErrors": true})).await, 200);

    let big = vec![b' '; 12_000_001];
    let resp = client()
        .post(format!("{}/citations/v1/cite", sb.base_url()))
        .bearer_auth(sb.key())
        .header("content-type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_html(resp, 413).await;

    // A 429 from an injected storm, then from the rate limiter itself.
    sb.knobs().set(|k| {
        k.storm = casebook_sandbox::knobs::Storm {
            count: 1,
            retry_after: 4,
        }
    });
    let essay = json!({"essay": "x"});
    let headers = assert_html(post_json(&sb, "/citations/v1/parse", &essay).await, 429).await;
    assert_eq!(headers["retry-after"], "4");
    let mut limited = None;
    for _ in 0..10 {
        let resp = post_json(&sb, "/citations/v1/parse", &essay).await;
        if resp.status() == 429 {
            limited = Some(resp);
            break;
        }
    }
    let headers = assert_html(limited.expect("the rate limit is reached"), 429).await;
    assert!(
        headers["retry-after"]
            .to_str()
            .unwrap()
            .parse::<u64>()
            .is_ok()
    );

    // Other errors stay JSON.
    let resp = client()
        .post(format!("{}/citations/v1/parse", sb.base_url()))
        .json(&essay)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    assert!(resp.json::<Value>().await.is_ok());
    sb.stop().await;
}

#[tokio::test]
async fn html_errors_cover_stream_429s() {
    let sb = sandbox().await;
    let id = create(&sb, json!({})).await;
    sb.knobs().set(|k| k.html_errors = true);
    sb.knobs().set(|k| {
        k.stream_429 = 1;
        k.stream_429_retry_after = Some(2);
    });
    let headers = assert_html(request(&sb, &id, None).await, 429).await;
    assert_eq!(headers["retry-after"], "2");
    sb.knobs().clear();
    sb.knobs().set(|k| {
        k.stream_429 = 1;
        k.stream_429_retry_after = Some(2);
    });
    let resp = request(&sb, &id, None).await;
    assert_eq!(resp.status(), 429);
    assert_eq!(
        resp.json::<Value>().await.unwrap()["error"]["code"],
        "rate_limited"
    );
    sb.stop().await;
}
