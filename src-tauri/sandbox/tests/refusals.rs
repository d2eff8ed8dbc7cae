//! What the OpenAPI document says the seeds' service refuses, refused: two requests
//! schemathesis once found accepted (random generation, all checks). A `lastEventId` with
//! a control character is no id the stream sent; a cancel body of random bytes is
//! neither empty nor a JSON object.

mod common;

use common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn a_last_event_id_with_a_control_character_is_refused() {
    let sb = sandbox().await;
    let id = create(&sb, json!({})).await;
    for query in ["lastEventId=%C2%84", "lastEventId=%00", "lastEventId=1%0A2"] {
        let resp = client()
            .get(format!(
                "{}/eve/v1/session/{id}/stream?{query}",
                sb.base_url()
            ))
            .bearer_auth(sb.key())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400, "{query}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], "invalid_request", "{query}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("Last-Event-ID must be an event id this stream sent"),
            "{query}: {body}"
        );
    }
    sb.stop().await;
}

#[tokio::test]
async fn a_cancel_body_of_random_bytes_is_refused_and_changes_nothing() {
    let sb = sandbox().await;
    let id = create(&sb, json!({"paceMs": 50})).await;
    // Bytes that are neither UTF-8 nor JSON, then JSON that is not an object.
    let bodies: [&[u8]; 3] = [b"\x8f\x01\xfe\x00\x9czz", b"[1, 2]", b"\"stop\""];
    for body in bodies {
        let resp = client()
            .post(format!("{}/eve/v1/session/{id}/cancel", sb.base_url()))
            .bearer_auth(sb.key())
            .header("content-type", "application/json")
            .body(body.to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400, "{body:?}");
        let v: Value = resp.json().await.unwrap();
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("must be empty or a JSON object"),
            "{v}"
        );
    }
    // Still running: none of them cancelled it.
    let kinds: Vec<String> = full(&sb, &id).await.into_iter().map(|e| e.kind).collect();
    assert!(!kinds.iter().any(|k| k == "turn.cancelled"), "{kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some("session.completed"));
    sb.stop().await;
}
