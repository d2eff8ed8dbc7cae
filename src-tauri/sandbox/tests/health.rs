//! The sandbox answers over real HTTP on loopback.

use casebook_sandbox::{SandboxConfig, start};

#[tokio::test]
async fn health_answers_json_without_auth() {
    let sandbox = start(SandboxConfig::default())
        .await
        .expect("sandbox starts");
    let resp = reqwest::get(format!("{}/citations/health", sandbox.base_url()))
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["status"], "ok", "{body}");
    sandbox.stop().await;
}
