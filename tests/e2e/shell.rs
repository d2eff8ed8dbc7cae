//! The window, its navigation, native drops and the dialog test hook.

use casebook_core::connection::Connection;
use casebook_e2e::{App, AppOptions, data, drag_files_onto, exclusive};

#[tokio::test(flavor = "multi_thread")]
async fn window_renders_navigation_and_each_view() {
    let _one = exclusive().await;
    let app = App::launch(AppOptions::default()).await;

    let title = app.client.title().await.unwrap();
    assert_eq!(title, "Casebook", "the window's document title");
    for id in ["nav-cite", "nav-missions", "nav-settings"] {
        let nav = app.testid(id).await;
        assert!(nav.is_displayed().await.unwrap(), "{id} is not visible");
    }
    let badge = app.testid("sandbox-badge").await;
    assert_eq!(
        badge.text().await.unwrap(),
        "Sandbox",
        "sandbox mode is the default and shows a badge"
    );

    // Cite is the first view; its empty state is honest.
    app.testid("drop-zone").await;
    app.testid("documents-empty").await;
    app.screenshot("cite-empty").await;

    app.click("nav-missions").await;
    let h1 = app.wait_css("#missions-title").await;
    assert_eq!(h1.text().await.unwrap(), "Missions");
    app.testid("missions-empty").await;
    app.screenshot("missions-empty").await;

    app.click("nav-settings").await;
    let base = app
        .testid("settings-active-url")
        .await
        .text()
        .await
        .unwrap();
    assert!(
        base.starts_with("http://127.0.0.1:"),
        "sandbox base URL on loopback, got {base}"
    );
    // The sandbox the app started really answers on that URL.
    let health = Connection::new(&base)
        .unwrap()
        .health()
        .await
        .expect("the app's sandbox answers");
    assert_eq!(health.status.as_deref(), Some("ok"));
    app.screenshot("settings").await;

    app.click("nav-cite").await;
    app.testid("drop-zone").await;
    app.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_real_os_drop_reaches_the_app() {
    let _one = exclusive().await;
    let app = App::launch(AppOptions::default()).await;
    let zone = app.testid("drop-zone").await;
    let (x, y) = app.screen_center_of(&zone).await;

    let docx = data("docx/headings-lorem-multirun.docx");
    let legacy = data("bad/legacy-word97-hyperlink.doc");
    drag_files_onto(app.xvfb.display(), &[&docx, &legacy], x, y);

    app.until("two document cards after the drop", || async {
        app.all_css("[data-testid=doc-card]").await.len() == 2
    })
    .await;
    let cards = app.all_css("[data-testid=doc-card]").await;
    let mut seen = Vec::new();
    for card in cards {
        let path = card.attr("data-path").await.unwrap().unwrap_or_default();
        let state = card.attr("data-state").await.unwrap().unwrap_or_default();
        seen.push((path, state));
    }
    seen.sort();
    let mut want = vec![
        (docx.display().to_string(), "ready".to_owned()),
        (legacy.display().to_string(), "invalid".to_owned()),
    ];
    want.sort();
    assert_eq!(
        seen, want,
        "the dropped paths arrive in the app and are checked there"
    );
    let problem = app
        .wait_css("[data-testid=doc-card][data-state=invalid] .problem")
        .await;
    assert_eq!(
        problem.attr("data-code").await.unwrap().as_deref(),
        Some("legacy_format")
    );
    app.screenshot("cite-dropped").await;
    app.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn browse_uses_the_dialog_test_hook() {
    let _one = exclusive().await;
    let a = data("pptx/title-bullets-notes.pptx");
    let b = data("docx/comments-ins-del-lorem.docx");
    let app = App::launch(AppOptions {
        dialog_path: Some(format!("{}:{}", a.display(), b.display())),
        ..Default::default()
    })
    .await;
    app.click("browse-button").await;
    app.until("two cards from the dialog hook", || async {
        app.all_css("[data-testid=doc-card][data-state=ready]")
            .await
            .len()
            == 2
    })
    .await;
    app.screenshot("cite-browsed").await;
    let first = app.testid("doc-card").await;
    let text = first.prop("textContent").await.unwrap().unwrap_or_default();
    assert!(text.contains("title-bullets-notes.pptx"), "{text}");
    assert!(text.contains("PowerPoint presentation"), "{text}");
    app.close().await;
}
