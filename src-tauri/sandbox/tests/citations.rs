//! Contract tests of the citation service over real HTTP on loopback: every
//! endpoint and every error, status, headers and body shape.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use casebook_sandbox::{Failure, RateLimit, RunningSandbox, SandboxConfig, start};
use serde_json::{Value, json};
use std::time::Duration;

fn data(rel: &str) -> Vec<u8> {
    casebook_testsupport::files::fixture_bytes(rel)
}

async fn sandbox() -> RunningSandbox {
    start(SandboxConfig::default())
        .await
        .expect("sandbox starts")
}

async fn post(
    s: &RunningSandbox,
    path: &str,
    key: Option<&str>,
    body: Value,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut req = reqwest::Client::new()
        .post(format!("{}{path}", s.base_url()))
        .json(&body);
    if let Some(k) = key {
        req = req.bearer_auth(k);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.json::<Value>().await.unwrap_or(Value::Null);
    (status, headers, body)
}

fn error_code(body: &Value) -> &str {
    body["error"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("no error.code in {body}"))
}

#[tokio::test]
async fn health_needs_no_key() {
    let s = sandbox().await;
    let resp = reqwest::get(format!("{}/citations/health", s.base_url()))
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["status"], "ok");
}

#[tokio::test]
async fn parse_and_cite_need_a_valid_bearer_key() {
    let s = sandbox().await;
    for path in ["/citations/v1/parse", "/citations/v1/cite"] {
        for key in [None, Some("wrong-key")] {
            let (status, headers, body) = post(&s, path, key, json!({"essay": "Some text."})).await;
            assert_eq!(status, 401, "{path} with {key:?}");
            assert_eq!(error_code(&body), "unauthorized");
            assert!(
                body["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty())
            );
            assert_eq!(headers["www-authenticate"], "Bearer");
        }
    }
    // A scheme other than Bearer is refused too.
    let resp = reqwest::Client::new()
        .post(format!("{}/citations/v1/parse", s.base_url()))
        .header("Authorization", format!("Basic {}", s.key()))
        .json(&json!({"essay": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
}

#[tokio::test]
async fn input_must_be_exactly_one_of_essay_and_file() {
    let s = sandbox().await;
    let k = Some(s.key());
    let file = B64.encode(data("docx/hyperlink-fragments.docx"));
    for (body, code) in [
        (json!({}), "invalid_request"),
        (json!({"essay": "x", "fileBase64": file}), "invalid_request"),
        (json!({"essay": "   "}), "invalid_field"),
        (json!({"essay": 12}), "invalid_field"),
        (
            json!({"fileBase64": "%%% not base64 %%%"}),
            "invalid_base64",
        ),
        (
            json!({"fileBase64": B64.encode(b"just some text")}),
            "not_a_document",
        ),
    ] {
        let (status, _, resp) = post(&s, "/citations/v1/cite", k, body.clone()).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(error_code(&resp), code, "{body} → {resp}");
    }
    let resp = reqwest::Client::new()
        .post(format!("{}/citations/v1/parse", s.base_url()))
        .bearer_auth(s.key())
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
}

#[tokio::test]
async fn each_bad_file_has_its_own_error() {
    let s = sandbox().await;
    for (file, code) in [
        ("bad/legacy-word97-hyperlink.doc", "legacy_format"),
        ("bad/legacy-ppt97-basic.ppt", "legacy_format"),
        ("bad/encrypted-password-is-pass.docx", "encrypted_document"),
        ("bad/encrypted-password-is-tika.pptx", "encrypted_document"),
        ("bad/clusterfuzz-corrupt-zip.docx", "corrupt_document"),
        ("bad/truncated-zip.docx", "corrupt_document"),
    ] {
        let body = json!({"fileBase64": B64.encode(data(file))});
        for path in ["/citations/v1/parse", "/citations/v1/cite"] {
            let (status, _, resp) = post(&s, path, Some(s.key()), body.clone()).await;
            assert_eq!(status, 400, "{file} on {path}");
            assert_eq!(error_code(&resp), code, "{file} on {path}: {resp}");
        }
    }
}

#[tokio::test]
async fn options_out_of_bounds_name_the_field() {
    let s = sandbox().await;
    for (extra, field) in [
        (json!({"mode": "sometimes"}), "mode"),
        (json!({"minCitations": -1}), "minCitations"),
        (json!({"minCitations": 1.5}), "minCitations"),
        (json!({"maxCitations": 6}), "maxCitations"),
        (json!({"maxCitations": "2"}), "maxCitations"),
        (
            json!({"minCitations": 3, "maxCitations": 2}),
            "minCitations",
        ),
        (json!({"seed": -4}), "seed"),
    ] {
        let mut body =
            json!({"essay": "A long enough paragraph of text that could be cited by the sandbox."});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let (status, _, resp) = post(&s, "/citations/v1/cite", Some(s.key()), body.clone()).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(error_code(&resp), "invalid_field", "{resp}");
        assert_eq!(resp["error"]["field"], field, "{body} → {resp}");
    }
}

#[tokio::test]
async fn parse_returns_paragraphs_slides_and_references() {
    let s = sandbox().await;
    let (status, _, docx) = post(
        &s,
        "/citations/v1/parse",
        Some(s.key()),
        json!({"fileBase64": B64.encode(data("docx/citations-bibliography-toc.docx"))}),
    )
    .await;
    assert_eq!(status, 200, "{docx}");
    assert_eq!(docx["kind"], "docx");
    assert!(docx["paragraphs"].as_array().unwrap().len() > 5);
    assert_eq!(docx["referencesHeading"], "Bibliography");
    let refs = docx["references"].as_array().unwrap();
    assert!(
        refs.iter()
            .any(|r| r["text"].as_str().unwrap().contains("Mattmann")),
        "{refs:?}"
    );

    let (status, _, pptx) = post(
        &s,
        "/citations/v1/parse",
        Some(s.key()),
        json!({"fileBase64": B64.encode(data("pptx/layouts-bullet-levels.pptx"))}),
    )
    .await;
    assert_eq!(status, 200);
    let paras = pptx["paragraphs"].as_array().unwrap();
    assert!(
        paras.iter().all(|p| p["slide"].as_u64().is_some()),
        "every pptx paragraph names its slide"
    );
    assert!(paras.iter().any(|p| p["slide"] == 10));

    let (status, _, text) = post(
        &s,
        "/citations/v1/parse",
        Some(s.key()),
        json!({"essay": "Intro paragraph.\n\nSecond paragraph.\n\nReferences\nSmith, J. (2020). A book."}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(text["kind"], "text");
    assert_eq!(text["references"][0]["text"], "Smith, J. (2020). A book.");
}

#[tokio::test]
async fn cite_defaults_and_seeded_random_are_repeatable() {
    let s = sandbox().await;
    let essay = (0..8)
        .map(|i| {
            format!("Paragraph {i} says something substantial about the evidence we have gathered.")
        })
        .collect::<Vec<_>>()
        .join("\n\n");
    let cite = |extra: Value| {
        let mut body = json!({"essay": essay});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        post(&s, "/citations/v1/cite", Some(s.key()), body)
    };
    let (status, _, defaults) = cite(json!({})).await;
    assert_eq!(status, 200, "{defaults}");
    assert_eq!(defaults["kind"], "text");
    // Defaults: every_other, 1 to 2 per paragraph.
    assert_eq!(defaults["stats"]["paragraphsCited"], 4, "{defaults}");
    let n = defaults["stats"]["citationsInserted"].as_u64().unwrap();
    assert!((4..=8).contains(&n), "{n}");
    let text = String::from_utf8(
        B64.decode(defaults["documentBase64"].as_str().unwrap())
            .unwrap(),
    )
    .unwrap();
    assert!(text.contains("\nReferences\n"), "{text}");

    let (_, _, a) = cite(json!({"mode": "random", "seed": 7})).await;
    let (_, _, b) = cite(json!({"mode": "random", "seed": 7})).await;
    assert_eq!(
        a["documentBase64"], b["documentBase64"],
        "same seed, same result"
    );
    let differs = futures_any_differs(&s, &essay, &a).await;
    assert!(differs, "some other seed gives another result");
}

async fn futures_any_differs(s: &RunningSandbox, essay: &str, a: &Value) -> bool {
    for seed in 8..16 {
        let (_, _, c) = post(
            s,
            "/citations/v1/cite",
            Some(s.key()),
            json!({"essay": essay, "mode": "random", "seed": seed}),
        )
        .await;
        if c["documentBase64"] != a["documentBase64"] {
            return true;
        }
    }
    false
}

#[tokio::test]
async fn bodies_over_12_mb_get_413_json() {
    let s = sandbox().await;
    let big = vec![b'a'; 12 * 1024 * 1024 + 10];
    let resp = reqwest::Client::new()
        .post(format!("{}/citations/v1/cite", s.base_url()))
        .bearer_auth(s.key())
        .header("content-type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(error_code(&body), "payload_too_large");

    // Without Content-Length (chunked), the limit applies to the bytes read.
    let chunks = futures_util::stream::iter(
        (0..13).map(|_| Ok::<_, std::io::Error>(vec![b' '; 1024 * 1024])),
    );
    let resp = reqwest::Client::new()
        .post(format!("{}/citations/v1/cite", s.base_url()))
        .bearer_auth(s.key())
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
}

#[tokio::test]
async fn rate_limit_answers_429_with_retry_after() {
    let s = start(SandboxConfig {
        rate_limit: RateLimit {
            per_minute: 6,
            burst: 2,
        },
        ..Default::default()
    })
    .await
    .unwrap();
    let body = json!({"essay": "x"});
    for _ in 0..2 {
        let (status, _, _) = post(&s, "/citations/v1/parse", Some(s.key()), body.clone()).await;
        assert_eq!(status, 200);
    }
    let (status, headers, resp) = post(&s, "/citations/v1/parse", Some(s.key()), body).await;
    assert_eq!(status, 429);
    assert_eq!(error_code(&resp), "rate_limited");
    let secs: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=10).contains(&secs), "Retry-After {secs}");
}

#[tokio::test]
async fn faults_inject_429_storms_500s_and_malformed_json() {
    let s = sandbox().await;
    s.knobs().set(|k| {
        k.storm = casebook_sandbox::knobs::Storm {
            count: 2,
            retry_after: 3,
        }
    });
    for _ in 0..2 {
        let (status, headers, _) = post(
            &s,
            "/citations/v1/parse",
            Some(s.key()),
            json!({"essay": "x"}),
        )
        .await;
        assert_eq!(status, 429);
        assert_eq!(headers["retry-after"], "3");
    }
    let (status, _, _) = post(
        &s,
        "/citations/v1/parse",
        Some(s.key()),
        json!({"essay": "x"}),
    )
    .await;
    assert_eq!(status, 200, "the storm is over");

    s.knobs().set(|k| {
        k.fail = Some(casebook_sandbox::knobs::Fail {
            nth: 2,
            kind: Failure::Status500,
        })
    });
    let (status, _, _) = post(
        &s,
        "/citations/v1/parse",
        Some(s.key()),
        json!({"essay": "x"}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _, body) = post(
        &s,
        "/citations/v1/parse",
        Some(s.key()),
        json!({"essay": "x"}),
    )
    .await;
    assert_eq!(status, 500);
    assert_eq!(error_code(&body), "internal");

    s.knobs().set(|k| {
        k.fail = Some(casebook_sandbox::knobs::Fail {
            nth: 1,
            kind: Failure::MalformedJson,
        })
    });
    let resp = reqwest::Client::new()
        .post(format!("{}/citations/v1/cite", s.base_url()))
        .bearer_auth(s.key())
        .json(&json!({"essay": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(
        serde_json::from_slice::<Value>(&resp.bytes().await.unwrap()).is_err(),
        "the body is not JSON"
    );
}

#[tokio::test]
async fn account_endpoint_uses_a_session_cookie() {
    let s = sandbox().await;
    let me = format!("{}/citations/api/me", s.base_url());
    // A bearer key is not how this endpoint authenticates.
    let resp = reqwest::Client::new()
        .get(&me)
        .bearer_auth(s.key())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(error_code(&body), "unauthorized");

    post(
        &s,
        "/citations/v1/parse",
        Some(s.key()),
        json!({"essay": "x"}),
    )
    .await;
    post(
        &s,
        "/citations/v1/cite",
        Some(s.key()),
        json!({"essay": "x"}),
    )
    .await;
    post(
        &s,
        "/citations/v1/cite",
        Some(s.key()),
        json!({"essay": "x"}),
    )
    .await;

    let browser = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap();
    let resp = browser
        .post(format!("{}/citations/api/sandbox/sign-in", s.base_url()))
        .json(&json!({"email": "me@example.org"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let body: Value = browser.get(&me).send().await.unwrap().json().await.unwrap();
    assert_eq!(body["usage"]["parseCalls"], 1, "{body}");
    assert_eq!(body["usage"]["citeCalls"], 2, "{body}");
    let keys = body["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1);
    let masked = keys[0]["masked"].as_str().unwrap();
    assert!(
        !masked.contains(&s.key()[..8]),
        "the key list is masked: {masked}"
    );
}

#[tokio::test]
async fn the_console_signs_a_browser_in_with_a_plain_form() {
    let s = sandbox().await;
    let browser = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap();
    let page = browser.get(s.base_url()).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(
        html.contains("name=\"email\"") && html.contains("name=\"password\""),
        "{html}"
    );
    assert!(!html.contains("<script"), "the console needs no script");

    let blank = browser
        .post(format!("{}/console/sign-in", s.base_url()))
        .form(&[("email", " "), ("password", "x")])
        .send()
        .await
        .unwrap();
    assert_eq!(blank.status(), 400);
    let me = format!("{}/citations/api/me", s.base_url());
    assert_eq!(browser.get(&me).send().await.unwrap().status(), 401);

    let signed = browser
        .post(format!("{}/console/sign-in", s.base_url()))
        .form(&[("email", "ada@example.org"), ("password", "anything")])
        .send()
        .await
        .unwrap();
    // Followed the 303 back to the console, which now knows the browser.
    assert_eq!(signed.status(), 200);
    assert!(signed.text().await.unwrap().contains("ada@example.org"));
    let body: Value = browser.get(&me).send().await.unwrap().json().await.unwrap();
    assert_eq!(body["account"]["email"], "ada@example.org", "{body}");
    post(
        &s,
        "/citations/v1/cite",
        Some(s.key()),
        json!({"essay": "x"}),
    )
    .await;
    let body: Value = browser.get(&me).send().await.unwrap().json().await.unwrap();
    assert_eq!(body["usage"]["citeCalls"], 1, "{body}");

    browser
        .post(format!("{}/console/sign-out", s.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(browser.get(&me).send().await.unwrap().status(), 401);
}

#[tokio::test]
async fn discovery_documents_are_served() {
    let s = sandbox().await;
    let spec: Value = reqwest::get(format!("{}/openapi.json", s.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(spec["openapi"], "3.1.0");
    for path in [
        "/citations/health",
        "/citations/v1/parse",
        "/citations/v1/cite",
        "/citations/api/me",
        "/eve/v1/session",
        "/eve/v1/session/{sessionId}/stream",
        "/eve/v1/session/{sessionId}/cancel",
    ] {
        assert!(
            spec["paths"].get(path).is_some(),
            "openapi.json lacks {path}"
        );
    }
    for (path, needle) in [
        ("/llms.txt", "# Casebook sandbox"),
        ("/llms-full.txt", "contract"),
        ("/sitemap.xml", "<urlset"),
    ] {
        let resp = reqwest::get(format!("{}{path}", s.base_url()))
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "{path}");
        assert!(resp.text().await.unwrap().contains(needle), "{path}");
    }
    let resp = reqwest::get(format!("{}/nowhere", s.base_url()))
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(error_code(&body), "not_found");
}

#[tokio::test]
async fn faults_can_be_set_over_http_with_the_key() {
    let s = sandbox().await;
    let url = format!("{}/_sandbox/faults", s.base_url());
    let resp = reqwest::Client::new()
        .post(&url)
        .json(&json!({"storm": {"count": 1, "retryAfter": 2}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401, "the key is needed");
    let resp = reqwest::Client::new()
        .post(&url)
        .bearer_auth(s.key())
        .json(&json!({"storm": {"count": 1, "retryAfter": 2}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let (status, headers, _) = post(
        &s,
        "/citations/v1/parse",
        Some(s.key()),
        json!({"essay": "x"}),
    )
    .await;
    assert_eq!(
        (status, headers["retry-after"].to_str().unwrap()),
        (429, "2")
    );
    let resp = reqwest::Client::new()
        .post(&url)
        .bearer_auth(s.key())
        .json(&json!({"bogus": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400, "unknown fault names are refused");
}

/// An injected 500 or malformed answer stands for a service that took the request in:
/// nothing is answered until the body has been read. Answered from the headers, a
/// client still sending a large document would meet a closed connection instead, and
/// may rightly send it again: whether the fault landed would depend on timing.
#[tokio::test]
async fn injected_failures_are_answered_once_the_body_is_read() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = sandbox().await;
    let host = s.base_url().trim_start_matches("http://").to_owned();
    for (failure, status) in [(Failure::Status500, "500"), (Failure::MalformedJson, "200")] {
        s.knobs().set(|k| {
            k.fail = Some(casebook_sandbox::knobs::Fail {
                nth: 1,
                kind: failure,
            })
        });
        let body = json!({"essay": "x"}).to_string();
        let mut tcp = tokio::net::TcpStream::connect(&host).await.unwrap();
        let head = format!(
            "POST /citations/v1/cite HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            s.key(),
            body.len()
        );
        tcp.write_all(head.as_bytes()).await.unwrap();
        let mut first = [0u8; 64];
        let early = tokio::time::timeout(Duration::from_millis(300), tcp.read(&mut first)).await;
        assert!(
            early.is_err(),
            "{failure:?}: answered from the headers: {:?}",
            early.map(|n| String::from_utf8_lossy(&first[..n.unwrap_or(0)]).into_owned())
        );
        tcp.write_all(body.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut answer))
            .await
            .expect("the answer comes once the body is in")
            .unwrap();
        let answer = String::from_utf8_lossy(&answer);
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{failure:?}: {answer}"
        );
    }
}
