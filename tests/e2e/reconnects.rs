//! A stream that never gets further, in the window: against a sandbox that cuts every
//! stream response inside its first record, the mission's window stops reconnecting by
//! itself, says why beside its status with a Retry button, and asks no more; Retry once
//! the service is well follows the mission to its end.

use crate::missions::{start_in_window, status, until_for};
use casebook_e2e::{App, AppOptions, exclusive};

/// The sandbox's count of stream responses it cut so far.
async fn cuts_made(base: &str) -> u64 {
    let resp = reqwest::Client::new()
        .post(format!("{base}/_sandbox/faults"))
        .bearer_auth("cbx_sandbox_demo_key")
        .json(&serde_json::json!({}))
        .send()
        .await
        .expect("the app's sandbox answers");
    let body: serde_json::Value = resp.json().await.unwrap();
    body["cutsMade"]
        .as_u64()
        .expect("cutsMade in every faults answer")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_cut_inside_its_first_record_every_time_stops_with_a_retry() {
    let _one = exclusive().await;
    let app = App::launch(AppOptions {
        env: vec![
            ("CASEBOOK_SANDBOX_MISSION_PACE_MS".into(), "20".into()),
            ("CASEBOOK_SANDBOX_MISSION_EVENTS".into(), "30".into()),
        ],
        ..Default::default()
    })
    .await;
    app.click("nav-settings").await;
    let base = app.text("settings-active-url").await;
    crate::missions::sandbox_faults(&base, serde_json::json!({"streamContentLength": 24})).await;

    start_in_window(&app, "Does shade reduce heat stroke among older adults?").await;

    // 12 empty tries, each pause longer (up to 15 s): about a minute and a half.
    until_for(300, "the watch to stop by itself", || async {
        status(&app).await == "lost"
    })
    .await;
    let detail = app.text("mission-status-detail").await;
    assert!(
        detail.contains("keeps ending the mission's stream before a whole record"),
        "{detail}"
    );
    assert!(detail.contains("stopped after 12 tries"), "{detail}");
    app.testid("mission-retry").await;
    app.screenshot("mission-stopped-reconnecting").await;
    let cuts = cuts_made(&base).await;
    assert!(
        (12..30).contains(&cuts),
        "fewer than 30 stream requests: {cuts}"
    );
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert_eq!(
        cuts_made(&base).await,
        cuts,
        "stopped: nothing asked by itself"
    );

    crate::missions::sandbox_faults(&base, serde_json::json!({"clear": true})).await;
    app.click("mission-retry").await;
    until_for(60, "followed to the turn's end after Retry", || async {
        matches!(status(&app).await.as_str(), "waiting" | "complete")
    })
    .await;
    app.close().await;
}
