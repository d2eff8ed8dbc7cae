//! eve as today's releases speak it, in the real window: spend past 80% of the budget
//! (and past all of it) said in the mission's header, and a mission whose history the
//! service let expire opened from the history list, its stored conversation shown under
//! a banner and the service not asked again.

use crate::missions::{sandbox_faults, start_in_window, switch_to_mission_window, until_for};
use casebook_core::keys::ApiKey;
use casebook_core::missions::client::InvestigationClient;
use casebook_core::missions::follower::{Feed, Follower, Quiet};
use casebook_core::missions::store::{MissionStatus, MissionStore};
use casebook_core::net::connection::Connection;
use casebook_e2e::{App, AppOptions, exclusive};
use std::sync::Arc;

const KEY: &str = "cbx_sandbox_demo_key";

fn quick() -> AppOptions {
    AppOptions {
        env: vec![
            ("CASEBOOK_SANDBOX_MISSION_PACE_MS".into(), "20".into()),
            ("CASEBOOK_SANDBOX_MISSION_EVENTS".into(), "60".into()),
        ],
        ..Default::default()
    }
}

async fn sandbox_base(app: &App) -> String {
    app.click("nav-settings").await;
    app.text("settings-active-url").await.trim().to_owned()
}

async fn budget_warning(app: &App) -> Option<(String, String)> {
    let el = app
        .all_css("[data-testid=mission-budget-warning]")
        .await
        .into_iter()
        .next()?;
    let level = el
        .attr("data-level")
        .await
        .ok()
        .flatten()
        .unwrap_or_default();
    Some((level, el.text().await.unwrap_or_default()))
}

#[tokio::test(flavor = "multi_thread")]
async fn spend_past_80_percent_is_warned_and_past_the_budget_said_plainly_in_the_header() {
    let _one = exclusive().await;
    let app = App::launch(quick()).await;
    let base = sandbox_base(&app).await;
    let main = app.client.window().await.unwrap();
    for (percent, level, words) in [
        (85, "warning", "$21.25 of $25.00 — 85% of the budget"),
        (
            110,
            "exceeded",
            "$27.50 of $25.00 — over the budget by $2.50 (110%)",
        ),
    ] {
        sandbox_faults(&base, serde_json::json!({"spendPercent": percent})).await;
        app.client.switch_to_window(main.clone()).await.unwrap();
        start_in_window(
            &app,
            &format!("Does shade reduce heat stroke? ({percent}%)"),
        )
        .await;
        until_for(60, "the mission to wait for the person", || async {
            crate::missions::status(&app).await == "waiting"
        })
        .await;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
        while budget_warning(&app).await.is_none() {
            if std::time::Instant::now() >= deadline {
                app.screenshot(&format!("failed-budget-{percent}")).await;
                panic!(
                    "{percent}%: no budget warning; the header says {:?}",
                    app.text("mission-spend").await
                );
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let (shown_level, text) = budget_warning(&app).await.unwrap();
        assert_eq!(shown_level, level, "{text}");
        assert!(text.contains(words), "{percent}%: {text}");
        if level == "exceeded" {
            assert!(text.starts_with("Budget exceeded"), "{text}");
            app.screenshot("mission-budget-exceeded").await;
        }
        app.client.close_window().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_mission_opened_from_history_shows_what_was_stored_under_a_banner() {
    let _one = exclusive().await;
    let data = tempfile::tempdir().unwrap();
    let options = || AppOptions {
        data_dir: Some(data.path().to_path_buf()),
        ..quick()
    };
    let app = App::launch(options()).await;
    let base = sandbox_base(&app).await;
    start_in_window(&app, "Does shade reduce heat stroke?").await;
    until_for(60, "the mission to wait for the person", || async {
        crate::missions::status(&app).await == "waiting"
    })
    .await;
    let sid = app
        .client
        .execute(
            "return decodeURIComponent(location.hash.split('/').pop());",
            vec![],
        )
        .await
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();

    // The service lets the history expire; the command line, sharing the app's history,
    // asks for the mission as `mission watch` does and is told so.
    sandbox_faults(&base, serde_json::json!({"historyExpired": true})).await;
    let store = MissionStore::open(&data.path().join("casebook.db")).unwrap();
    let record = store.require(&sid).await.unwrap();
    let follower = Follower::new(store.clone(), Arc::new(Quiet));
    let client =
        InvestigationClient::new(Connection::new(&base).unwrap(), ApiKey::parse(KEY).unwrap());
    follower
        .subscribe_asking(
            &record,
            Ok(client),
            "test",
            Box::new(|_| true),
            Feed::RECORDS,
        )
        .await
        .unwrap();
    follower.finished(&sid).await;
    assert_eq!(
        store.require(&sid).await.unwrap().status,
        MissionStatus::Expired
    );
    app.close().await;

    // Started again: the expired mission is not followed at the start, and opened from
    // the history it shows what was stored under the banner, the service not asked.
    let app = App::launch(options()).await;
    let base = sandbox_base(&app).await;
    let main = app.client.window().await.unwrap();
    app.click("nav-missions").await;
    let row = app
        .wait_css(&format!(
            "[data-testid=mission-row][data-session-id='{sid}']"
        ))
        .await;
    assert_eq!(
        row.attr("data-status").await.unwrap().as_deref(),
        Some("expired")
    );
    assert!(row.text().await.unwrap().contains("History expired"));
    row.click().await.unwrap();
    switch_to_mission_window(&app, &main).await;
    let banner = app.wait_css("[data-testid=mission-expired]").await;
    assert!(banner.text().await.unwrap().contains("expired"));
    assert_eq!(crate::missions::status(&app).await, "expired");
    until_for(10, "the stored conversation", || async {
        app.all_css("[data-testid=conversation-item]").await.len() > 2
    })
    .await;
    let mut texts = String::new();
    for el in app.all_css("[data-testid=conversation-item]").await {
        texts.push_str(&el.text().await.unwrap_or_default());
    }
    assert!(texts.contains("Findings"), "{texts}");
    assert!(app.all_css("[data-testid=mission-retry]").await.is_empty());
    app.screenshot("mission-expired").await;
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert_eq!(stream_requests(&base, &sid).await, 0, "asked again");
}

async fn stream_requests(base: &str, sid: &str) -> usize {
    let v: serde_json::Value = reqwest::Client::new()
        .get(format!("{base}/_sandbox/stream-requests?sessionId={sid}"))
        .bearer_auth(KEY)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    v["requests"].as_array().unwrap().len()
}

/// One agent of several, chosen in Settings: a base that is not a path is refused as it
/// is typed, the agent there is named from eve's info route, and a mission started
/// there runs under it and says so in its header.
#[tokio::test(flavor = "multi_thread")]
async fn the_api_base_is_chosen_in_settings_names_its_agent_and_a_mission_runs_there() {
    let _one = exclusive().await;
    let app = App::launch(quick()).await;
    let base = sandbox_base(&app).await;
    sandbox_faults(
        &base,
        serde_json::json!({"agents": ["researcher", "writer"], "agentPaths": "new"}),
    )
    .await;
    let field = app.testid("settings-eve-base").await;
    field.send_keys("eve/researcher/v1").await.unwrap();
    until_for(5, "the field's problem", || async {
        app.text("settings-eve-base-help")
            .await
            .contains("must start with /")
    })
    .await;
    let save = app.testid("settings-eve-base-save").await;
    assert!(
        !save.is_enabled().await.unwrap(),
        "saved a base that is not a path"
    );
    field.clear().await.unwrap();
    field.send_keys("/eve/researcher/v1").await.unwrap();
    until_for(5, "Save to be enabled", || async {
        save.is_enabled().await.unwrap_or(false)
    })
    .await;
    save.click().await.unwrap();
    until_for(10, "the agent's name", || async {
        let el = app.testid("settings-agent").await;
        el.attr("data-name").await.ok().flatten().as_deref() == Some("researcher")
    })
    .await;
    assert!(
        app.text("settings-agent")
            .await
            .contains("sandbox/research-1")
    );

    start_in_window(&app, "Does shade reduce heat stroke?").await;
    until_for(60, "the mission to wait for the person", || async {
        crate::missions::status(&app).await == "waiting"
    })
    .await;
    assert_eq!(
        app.text("mission-api-base").await.trim(),
        "/eve/researcher/v1"
    );
}
