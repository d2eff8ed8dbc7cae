//! A cite answer no dropped document could be (a zip bomb, an entry named out of the
//! package, a link) shows on the document's card as the refusal the CLI prints, with
//! its code, and nothing is saved beside the original.

use casebook_e2e::{App, AppOptions, data, drag_files_onto, exclusive};
use std::path::Path;

async fn card_attr(app: &App, path: &Path, css: &str, attr: Option<&str>) -> String {
    let el = app
        .wait_css(&format!(
            "[data-testid=doc-card][data-path=\"{}\"] {css}",
            path.display()
        ))
        .await;
    match attr {
        Some(a) => el.attr(a).await.unwrap().unwrap_or_default(),
        None => el.text().await.unwrap(),
    }
}

async fn state_of(app: &App, path: &Path) -> String {
    app.wait_css(&format!(
        "[data-testid=doc-card][data-path=\"{}\"]",
        path.display()
    ))
    .await
    .attr("data-state")
    .await
    .unwrap()
    .unwrap_or_default()
}

async fn post_fault(app: &App, body: serde_json::Value) {
    let title = app
        .testid("sandbox-badge")
        .await
        .attr("title")
        .await
        .unwrap()
        .unwrap_or_default();
    let base = title.trim_start_matches("Local sandbox at ").to_owned();
    let resp = reqwest::Client::new()
        .post(format!("{base}/_sandbox/faults"))
        .bearer_auth(casebook_sandbox::DEMO_KEY)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hostile_returned_document_is_refused_on_the_card() {
    let _one = exclusive().await;
    let work = tempfile::tempdir().unwrap();
    let doc = work.path().join("headings-lorem-multirun.docx");
    std::fs::copy(data("docx/headings-lorem-multirun.docx"), &doc).unwrap();
    let app = App::launch(AppOptions::default()).await;
    post_fault(&app, serde_json::json!({"hostileDocument": "parent-path"})).await;
    let zone = app.testid("drop-zone").await;
    let (x, y) = app.screen_center_of(&zone).await;
    drag_files_onto(app.xvfb.display(), &[doc.as_path()], x, y);
    app.until("the card is ready", || async {
        state_of(&app, &doc).await == "ready"
    })
    .await;
    app.click("cite-button").await;
    app.until("the cite fails", || async {
        state_of(&app, &doc).await == "error"
    })
    .await;
    let code = card_attr(&app, &doc, "[data-testid=error-message]", Some("data-code")).await;
    assert_eq!(code, "unsafe_document");
    let said = card_attr(&app, &doc, "[data-testid=error-message]", None).await;
    assert!(
        said.contains(
            "The citation service returned a document Casebook refuses, so nothing was saved."
        ) && said.contains("\"../casebook-escape.txt\""),
        "{said}"
    );
    let mut names: Vec<String> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, vec!["headings-lorem-multirun.docx"]);
    app.close().await;
}
