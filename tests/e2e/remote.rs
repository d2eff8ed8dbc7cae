//! The real window in remote mode against a separately started sandbox that makes
//! other legal choices than ours: events without ids replayed from the start after
//! a cut, another completion name then 204, parse answers of another shape, 202
//! for success. The client may depend only on what the seeds show.

use crate::missions::{follow_stops, open_raw_records, status, switch_to_mission_window};
use casebook_e2e::{App, AppOptions, data, drag_files_onto, environment, exclusive, processes};
use casebook_sandbox::knobs::{EventIds, ParseShape};
use fantoccini::Locator;

/// A data folder whose settings point the app at `base_url`, with the sandbox's
/// key for both services (the environment override the CLI and scripts use).
pub(crate) fn remote(base_url: &str, key: &str) -> (tempfile::TempDir, AppOptions) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("settings.json"),
        serde_json::json!({"sandbox": false, "baseUrl": base_url}).to_string(),
    )
    .unwrap();
    let options = AppOptions {
        data_dir: Some(dir.path().to_path_buf()),
        env: vec![
            ("CASEBOOK_CITATIONS_KEY".into(), key.into()),
            ("CASEBOOK_INVESTIGATIONS_KEY".into(), key.into()),
        ],
        ..Default::default()
    };
    (dir, options)
}

async fn names_in_window(app: &App) -> Vec<String> {
    let count = app.mission_figure("count").await.unwrap_or(0) as usize;
    let mut names = Vec::new();
    for card in app.all_css("[data-testid=event-card]").await {
        if let Ok(Some(n)) = card.attr("data-event").await {
            names.push(n);
        }
    }
    assert!(names.len() <= count);
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn id_less_events_another_completion_and_204_end_complete_with_nothing_twice() {
    let _one = exclusive().await;
    let service = casebook_sandbox::start(casebook_sandbox::SandboxConfig {
        pace: casebook_sandbox::Pace::Instant,
        mission_events: Some(40),
        mission_pace_ms: Some(40),
        ..Default::default()
    })
    .await
    .unwrap();
    // Without ids, a reconnect replays from the start: the client must skip what it has.
    // (Cut once: a server that cut every connection after 9 would never get further.)
    service.knobs().set(|k| {
        k.event_ids = EventIds::None;
        k.completion_event = Some("mission.finished".into());
        k.done_status_204 = true;
        k.drop_stream_after = 9;
    });
    let (_dir, mut options) = remote(service.base_url(), service.key());
    let cookie = "casebook_session=s3cr3t-session-value";
    options
        .env
        .push(("CASEBOOK_SESSION_COOKIE".into(), cookie.into()));
    let app = App::launch(options).await;
    app.wait_css("body").await;
    let main = app.client.window().await.unwrap();
    app.click("nav-missions").await;
    app.testid("mission-objective")
        .await
        .send_keys("Do street trees cool pavements?")
        .await
        .unwrap();
    app.until("the preview", || async {
        !app.text("mission-preview").await.is_empty()
    })
    .await;
    app.click("mission-start").await;
    switch_to_mission_window(&app, &main).await;
    open_raw_records(&app).await;
    app.until("the cut", || async { status(&app).await == "reconnecting" })
        .await;
    service.knobs().set(|k| k.drop_stream_after = 0);
    app.until("the mission to complete", || async {
        status(&app).await == "complete"
    })
    .await;
    // Every event the service sent, once: the sandbox says how many it sent per turn.
    let count = app.mission_figure("count").await.expect("count()");
    let hash = app
        .client
        .execute("return window.location.hash;", vec![])
        .await
        .unwrap();
    let id = hash
        .as_str()
        .unwrap()
        .trim_start_matches("#/mission/")
        .to_owned();
    let sent = service_event_count(&service, &id).await;
    assert_eq!(count, sent, "each event exactly once");
    let names = names_in_window(&app).await;
    assert_eq!(
        names.last().map(String::as_str),
        Some("mission.finished"),
        "{names:?}; following stopped: {}",
        follow_stops(&app).await
    );
    assert!(
        app.all_css("[data-testid=error-message]").await.is_empty(),
        "a server that simply finished is not an error"
    );
    // The key that did all this came in the environment, as did a session: WebKit's
    // processes, started after, inherit neither.
    let (_, children) = processes(app.data_dir(), "casebook-app");
    assert!(
        children.len() >= 2,
        "the web and network processes: {children:?}"
    );
    for (pid, name) in children {
        let env = environment(pid);
        assert!(
            env.iter().any(|kv| kv.starts_with("PATH=")),
            "{name}: its environment was not read"
        );
        if name.starts_with("WebKitWebProces") {
            // Casebook's choice for its pages' script (`renderer::SCRIPT_ENVIRONMENT`).
            assert!(
                env.iter().any(|kv| kv == "JSC_useDFGJIT=false"),
                "{name}: JavaScriptCore's optimizing tiers are on"
            );
        }
        for kv in env {
            assert!(
                !kv.contains(service.key()) && !kv.contains(cookie),
                "{name} inherited a secret: {}",
                kv.split('=').next().unwrap_or_default()
            );
        }
    }
    app.close().await;
    service.stop().await;
}

/// How many events the sandbox's one mission holds, read with a plain stream
/// request once the variants are off.
async fn service_event_count(service: &casebook_sandbox::RunningSandbox, id: &str) -> u64 {
    service.knobs().clear();
    let http = reqwest::Client::new();
    let body = http
        .get(format!("{}/eve/v1/session/{id}/stream", service.base_url()))
        .bearer_auth(service.key())
        .header("Accept", "text/event-stream")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    body.split("\n\n")
        .filter(|block| block.lines().any(|l| l.starts_with("data:")))
        .count() as u64
}

#[tokio::test(flavor = "multi_thread")]
async fn another_parse_shape_and_202_still_preview_and_cite() {
    let _one = exclusive().await;
    let service = casebook_sandbox::start(Default::default()).await.unwrap();
    service
        .knobs()
        .set(|k| k.parse_shape = ParseShape::Alternate);
    service.knobs().set(|k| k.success_status = 202);
    let (_dir, options) = remote(service.base_url(), service.key());
    let work = tempfile::tempdir().unwrap();
    let doc = work.path().join("essay.docx");
    std::fs::copy(data("docx/long-lorem-endnote.docx"), &doc).unwrap();
    let app = App::launch(options).await;
    let zone = app.testid("drop-zone").await;
    let (x, y) = app.screen_center_of(&zone).await;
    drag_files_onto(app.xvfb.display(), &[doc.as_path()], x, y);
    let card = app
        .wait_css(&format!(
            "[data-testid=doc-card][data-path=\"{}\"]",
            doc.display()
        ))
        .await;
    let toggle = card
        .find(Locator::Css("button[aria-expanded]"))
        .await
        .unwrap();
    app.press(&toggle, "the preview toggle").await;
    let raw = app.wait_css("[data-testid=preview-raw]").await;
    assert!(
        raw.text().await.unwrap().contains("blocks"),
        "an unknown shape is shown as it came"
    );
    app.click("cite-button").await;
    let summary = app.wait_css("[data-testid=result-summary]").await;
    let changed: u64 = summary
        .attr("data-changed")
        .await
        .unwrap()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        changed > 0,
        "the summary is read locally, whatever parse says"
    );
    app.close().await;
    service.stop().await;
}
