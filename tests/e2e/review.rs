//! A writer's review in the real window: a folder dropped becomes a queue of cards with
//! an overall progress bar; a Word document saved for review in Word holds its citations
//! as Casebook's tracked changes, and that choice becomes the default; a deck's card says
//! PowerPoint has none and saves the review list instead; Save all to a folder saves the
//! rest, the Word documents for review. A cancel of one document leaves the queue going.

use crate::cite::{originals, wait_state};
use casebook_e2e::{App, AppOptions, drag_files_onto, exclusive, libreoffice_converts};
use std::io::Read;
use std::path::Path;

const DOCUMENTS: [&str; 3] = [
    "docx/tracked-changes-hyperlinks.docx",
    "docx/headings-lorem-multirun.docx",
    "pptx/lecture-bullets-urls-embedded-zip.pptx",
];

async fn drop_folder(app: &App, folder: &Path) {
    let zone = app.testid("drop-zone").await;
    let (x, y) = app.screen_center_of(&zone).await;
    drag_files_onto(app.xvfb.display(), &[folder], x, y);
}

fn card_css(path: &Path) -> String {
    format!("[data-testid=doc-card][data-path=\"{}\"]", path.display())
}

/// Waits for a save on a card: saved, or the problem the card shows, said.
async fn wait_saved(app: &App, path: &Path) {
    let css = card_css(path);
    let problem = format!("{css} [data-testid=error-message]");
    app.until(&format!("{} is saved", path.display()), || async {
        if let Some(p) = app.all_css(&problem).await.first() {
            panic!("{}: {}", path.display(), p.text().await.unwrap_or_default());
        }
        let card = app.wait_css(&css).await;
        card.attr("data-state").await.unwrap().as_deref() == Some("saved")
    })
    .await;
}

async fn click_in(app: &App, path: &Path, testid: &str) {
    let css = format!("{} [data-testid={testid}]", card_css(path));
    let button = app.wait_css(&css).await;
    app.press(&button, testid).await;
}

fn main_part(path: &Path) -> String {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut xml = String::new();
    zip.by_name("word/document.xml")
        .unwrap()
        .read_to_string(&mut xml)
        .unwrap();
    xml
}

async fn choose_every_paragraph(app: &App) {
    let mode = app.testid("mode-select").await;
    mode.select_by_value("every").await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_folder_is_cited_as_a_queue_and_saved_for_review_in_word() {
    let _one = exclusive().await;
    let work = tempfile::tempdir().unwrap();
    let folder = work.path().join("chapters");
    std::fs::create_dir(&folder).unwrap();
    let docs = originals(&folder, &DOCUMENTS);
    let out = tempfile::tempdir().unwrap();
    let review = out
        .path()
        .join("tracked-changes-hyperlinks (for review).docx");
    let list = out.path().join("lecture-bullets.citations.csv");
    // The folder dialog takes the first path; each save dialog the first not there yet.
    let dialogs = [out.path().to_owned(), review.clone(), list.clone()];
    let app = App::launch(AppOptions {
        dialog_path: Some(
            std::env::join_paths(&dialogs)
                .unwrap()
                .into_string()
                .unwrap(),
        ),
        ..Default::default()
    })
    .await;

    drop_folder(&app, &folder).await;
    for d in &docs {
        wait_state(&app, d, "ready").await;
    }
    choose_every_paragraph(&app).await;
    app.click("cite-button").await;
    for d in &docs {
        wait_state(&app, d, "cited").await;
    }
    let queue = app.testid("queue-progress").await;
    assert_eq!(queue.attr("data-done").await.unwrap().as_deref(), Some("3"));
    assert_eq!(
        queue.attr("data-started").await.unwrap().as_deref(),
        Some("3")
    );

    // One Word document saved for review in Word: its citations are tracked changes.
    click_in(&app, &docs[0], "save-review-button").await;
    wait_saved(&app, &docs[0]).await;
    let xml = main_part(&review);
    assert!(
        xml.contains("w:author=\"Casebook\""),
        "no tracked change by Casebook"
    );
    assert!(xml.contains("<w:ins "), "no insertion tracked");
    libreoffice_converts(std::slice::from_ref(&review));

    // The deck: PowerPoint has no tracked changes, so its card offers the review list.
    let deck = &docs[2];
    let note = app
        .wait_css(&format!("{} [data-testid=review-note]", card_css(deck)))
        .await;
    let said = note.text().await.unwrap();
    assert!(said.contains("PowerPoint has no tracked changes"), "{said}");
    click_in(&app, deck, "save-list-button").await;
    app.wait_css(&format!("{} [data-testid=list-path]", card_css(deck)))
        .await;
    let csv = std::fs::read_to_string(&list).unwrap();
    assert!(
        csv.starts_with("kind,where,paragraph,slide,notes,citation,sentence"),
        "{csv}"
    );
    assert!(
        csv.lines().any(|l| l.starts_with("citation,Slide ")),
        "{csv}"
    );

    // Saving for review is now the default: the other Word document offers it first.
    let first = app
        .wait_css(&format!(
            "{} .card-actions button.primary",
            card_css(&docs[1])
        ))
        .await;
    assert_eq!(
        first.attr("data-testid").await.unwrap().as_deref(),
        Some("save-review-button")
    );

    // Save all to a folder: the Word document for review, the deck cited.
    app.click("save-all-button").await;
    for d in &docs {
        wait_saved(&app, d).await;
    }
    let second = out.path().join("headings-lorem-multirun (for review).docx");
    assert!(main_part(&second).contains("w:author=\"Casebook\""));
    assert!(
        out.path()
            .join("lecture-bullets-urls-embedded-zip (cited).pptx")
            .is_file()
    );
    libreoffice_converts(std::slice::from_ref(&second));
    app.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_one_document_leaves_the_rest_of_the_queue_citing() {
    let _one = exclusive().await;
    let work = tempfile::tempdir().unwrap();
    let folder = work.path().join("deck and chapters");
    std::fs::create_dir(&folder).unwrap();
    let docs = originals(&folder, &DOCUMENTS);
    let app = App::launch(AppOptions::default()).await;
    drop_folder(&app, &folder).await;
    for d in &docs {
        wait_state(&app, d, "ready").await;
    }
    // Each answer waits, so the queue is still going when one is cancelled.
    crate::cite::post_fault(&app, serde_json::json!({"latencyMs": 1500})).await;
    app.click("cite-button").await;
    wait_state(&app, &docs[0], "citing").await;
    click_in(&app, &docs[0], "cancel-button").await;
    wait_state(&app, &docs[0], "ready").await;
    for d in &docs[1..] {
        wait_state(&app, d, "cited").await;
    }
    let queue = app.testid("queue-progress").await;
    assert_eq!(queue.attr("data-done").await.unwrap().as_deref(), Some("2"));
    app.close().await;
}
