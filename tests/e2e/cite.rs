//! Citing in the real window: drop, preview, cite against the sandbox, save, and
//! the error paths a person meets. Saved files are checked by python-docx,
//! python-pptx and LibreOffice; originals must be byte-identical afterwards.

use casebook_e2e::{
    App, AppOptions, data, drag_files_onto, exclusive, libreoffice_converts, office_notes,
    office_texts,
};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Copies fixtures into a scratch folder, so "the original" is a file we can watch.
pub(crate) fn originals(dir: &Path, rels: &[&str]) -> Vec<PathBuf> {
    rels.iter()
        .map(|rel| {
            let dest = dir.join(Path::new(rel).file_name().unwrap());
            std::fs::copy(data(rel), &dest).unwrap();
            dest
        })
        .collect()
}

async fn card(app: &App, path: &Path) -> fantoccini::elements::Element {
    app.wait_css(&format!(
        "[data-testid=doc-card][data-path=\"{}\"]",
        path.display()
    ))
    .await
}

async fn state_of(app: &App, path: &Path) -> String {
    card(app, path)
        .await
        .attr("data-state")
        .await
        .unwrap()
        .unwrap_or_default()
}

pub(crate) async fn wait_state(app: &App, path: &Path, want: &str) {
    app.until(&format!("{} becomes {want}", path.display()), || async {
        state_of(app, path).await == want
    })
    .await;
}

async fn drop_files(app: &App, files: &[&Path]) {
    let zone = app.testid("drop-zone").await;
    let (x, y) = app.screen_center_of(&zone).await;
    drag_files_onto(app.xvfb.display(), files, x, y);
}

/// Sets faults on the app's own sandbox (its URL is in the sandbox badge's title;
/// visiting Settings would spend a request on the health check).
pub(crate) async fn post_fault(app: &App, body: serde_json::Value) {
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
async fn drop_preview_cite_and_save_all() {
    let _one = exclusive().await;
    let work = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let files = originals(
        work.path(),
        &[
            "docx/tracked-changes-hyperlinks.docx",
            "pptx/lecture-bullets-urls-embedded-zip.pptx",
        ],
    );
    let before: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    let app = App::launch(AppOptions {
        dialog_path: Some(out.path().display().to_string()),
        ..Default::default()
    })
    .await;

    drop_files(&app, &[&files[0], &files[1]]).await;
    for f in &files {
        wait_state(&app, f, "ready").await;
    }
    // Preview: the paragraphs the service will consider.
    let docx_card = card(&app, &files[0]).await;
    let expand = docx_card
        .find(fantoccini::Locator::Css("button[aria-expanded]"))
        .await
        .unwrap();
    app.press(&expand, "the preview toggle").await;
    let preview = app
        .wait_css("[data-testid=doc-card] [data-testid=preview] .paragraphs li")
        .await;
    assert!(
        !preview
            .prop("textContent")
            .await
            .unwrap()
            .unwrap_or_default()
            .is_empty()
    );
    app.screenshot("cite-preview").await;

    // Options: every paragraph, exactly one citation each.
    let mode = app.testid("mode-select").await;
    mode.select_by_value("every").await.unwrap();
    for (id, v) in [("min-input", "1"), ("max-input", "1")] {
        let input = app.testid(id).await;
        input.clear().await.unwrap();
        input.send_keys(v).await.unwrap();
    }
    app.click("cite-button").await;
    for f in &files {
        wait_state(&app, f, "cited").await;
    }
    let summaries = app.all_css("[data-testid=result-summary]").await;
    assert_eq!(summaries.len(), 2);
    for s in &summaries {
        let cited: u32 = s
            .attr("data-citations")
            .await
            .unwrap()
            .unwrap()
            .parse()
            .unwrap();
        let changed: u32 = s
            .attr("data-changed")
            .await
            .unwrap()
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            changed > 0 && cited >= changed,
            "one citation per changed paragraph at least: {changed} / {cited}"
        );
    }
    // The changed paragraphs, before and after, with the insertion highlighted.
    let show = app
        .wait_css("[data-testid=doc-card] [data-testid=show-changes]")
        .await;
    app.press(&show, "show changes").await;
    let mark = app.wait_css("[data-testid=changes] mark").await;
    let inserted = mark.prop("textContent").await.unwrap().unwrap_or_default();
    assert!(
        inserted.contains('(') && inserted.contains(')'),
        "highlighted insertion: {inserted}"
    );
    app.screenshot("cite-result").await;

    app.click("save-all-button").await;
    for f in &files {
        wait_state(&app, f, "saved").await;
    }
    app.screenshot("cite-saved").await;
    let saved: Vec<PathBuf> = [
        "tracked-changes-hyperlinks (cited).docx",
        "lecture-bullets-urls-embedded-zip (cited).pptx",
    ]
    .iter()
    .map(|n| out.path().join(n))
    .collect();
    for p in &saved {
        assert!(p.exists(), "{} was not saved", p.display());
    }
    let texts = office_texts(&saved);
    for (p, paras) in saved.iter().zip(&texts) {
        let all = paras.join("\n");
        assert!(
            all.contains(", 19") || all.contains(", 20"),
            "{}: no citation in the saved file",
            p.display()
        );
        assert!(
            paras.iter().any(|t| t.trim() == "References"),
            "{}: no References",
            p.display()
        );
    }
    libreoffice_converts(&saved);
    for (f, b) in files.iter().zip(&before) {
        assert_eq!(
            &std::fs::read(f).unwrap(),
            b,
            "{} was modified",
            f.display()
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        2,
        "only the two saved files, no temporary ones: {leftovers:?}"
    );
    app.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pasted_text_is_cited_and_saved_to_the_chosen_file() {
    let _one = exclusive().await;
    let out = tempfile::tempdir().unwrap();
    let dest = out.path().join("essay cited.txt");
    let app = App::launch(AppOptions {
        dialog_path: Some(dest.display().to_string()),
        ..Default::default()
    })
    .await;
    let summary = app.wait_css("details.essay summary").await;
    app.press(&summary, "the essay summary").await;
    let essay = app.testid("essay-input").await;
    essay
        .send_keys("Heat waves are becoming more frequent in European cities over recent decades.\n\nHospital admissions rise measurably during prolonged periods of extreme heat.")
        .await
        .unwrap();
    app.click("cite-button").await;
    app.until("the pasted text is cited", || async {
        app.all_css("[data-testid=doc-card][data-path=essay][data-state=cited]")
            .await
            .len()
            == 1
    })
    .await;
    app.click("save-button").await;
    app.until("saved", || async {
        app.all_css("[data-testid=doc-card][data-state=saved]")
            .await
            .len()
            == 1
    })
    .await;
    let text = std::fs::read_to_string(&dest).unwrap();
    assert!(text.contains("References"), "{text}");
    assert!(text.contains("Heat waves"), "{text}");
    app.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_files_are_refused_before_anything_is_sent() {
    let _one = exclusive().await;
    let work = tempfile::tempdir().unwrap();
    let legacy = originals(work.path(), &["bad/legacy-word97-hyperlink.doc"]).remove(0);
    // Over the ~9 MB a 12 MB request can carry.
    let huge = work.path().join("huge.docx");
    std::fs::write(&huge, vec![b'P'; 9_600_000]).unwrap();
    let app = App::launch(AppOptions::default()).await;
    drop_files(&app, &[&legacy, &huge]).await;
    wait_state(&app, &legacy, "invalid").await;
    wait_state(&app, &huge, "invalid").await;
    let code = |p: PathBuf| {
        let app = &app;
        async move {
            card(app, &p)
                .await
                .find(fantoccini::Locator::Css("[data-testid=error-message]"))
                .await
                .unwrap()
                .attr("data-code")
                .await
                .unwrap()
                .unwrap_or_default()
        }
    };
    assert_eq!(code(legacy.clone()).await, "legacy_format");
    assert_eq!(code(huge.clone()).await, "too_large");
    let cite = app.testid("cite-button").await;
    assert!(
        !cite.is_enabled().await.unwrap(),
        "nothing citable, nothing to send"
    );
    app.screenshot("cite-refused").await;
    app.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_limits_show_a_countdown_then_succeed() {
    let _one = exclusive().await;
    let work = tempfile::tempdir().unwrap();
    let doc = originals(work.path(), &["docx/headings-lorem-multirun.docx"]).remove(0);
    let app = App::launch(AppOptions::default()).await;
    drop_files(&app, &[&doc]).await;
    wait_state(&app, &doc, "ready").await;
    post_fault(
        &app,
        serde_json::json!({"storm": {"count": 2, "retryAfter": 3}}),
    )
    .await;
    app.click("cite-button").await;
    let progress = app
        .wait_css("[data-testid=cite-progress][data-progress=rateLimited]")
        .await;
    let text = progress
        .prop("textContent")
        .await
        .unwrap()
        .unwrap_or_default();
    assert!(text.contains("retrying in"), "{text}");
    app.screenshot("cite-rate-limited").await;
    wait_state(&app, &doc, "cited").await;
    app.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_key_leads_to_settings() {
    let _one = exclusive().await;
    // A separate service, as a real account would be; the app's key for it is wrong.
    let service = casebook_sandbox::start(Default::default()).await.unwrap();
    let work = tempfile::tempdir().unwrap();
    let doc = originals(work.path(), &["docx/hyperlink-fragments.docx"]).remove(0);
    let app = App::launch(AppOptions::default()).await;
    app.click("nav-settings").await;
    // Clicks land on coordinates: let the view finish laying out (the connection
    // facts and the health answer arrive after it opens) before pressing Save.
    app.wait_css("[data-testid=settings-health]:not([data-ok=''])")
        .await;
    let key_input = app.testid("settings-key-citations").await;
    key_input
        .send_keys("cbk_wrong_key_123456789")
        .await
        .unwrap();
    let save = app
        .wait_css("form:has([data-testid=settings-key-citations]) button[type=submit]:enabled")
        .await;
    app.press(&save, "Save key").await;
    app.until("the key is stored, masked", || async {
        app.text("key-state-citations").await.contains("6789")
    })
    .await;
    let typed = app
        .testid("settings-key-citations")
        .await
        .prop("value")
        .await
        .unwrap()
        .unwrap_or_default();
    assert_eq!(typed, "", "the key is gone from the web view once stored");
    let source = app.client.source().await.unwrap();
    assert!(
        !source.contains("cbk_wrong_key"),
        "the key is not in the DOM"
    );
    let url = app.testid("settings-base-url").await;
    url.send_keys(service.base_url()).await.unwrap();
    app.click("settings-sandbox").await;
    app.until("remote mode", || async {
        app.all_css("[data-testid=sandbox-badge]").await.is_empty()
    })
    .await;
    app.click("nav-cite").await;
    drop_files(&app, &[&doc]).await;
    wait_state(&app, &doc, "ready").await;
    app.click("cite-button").await;
    wait_state(&app, &doc, "error").await;
    let err = card(&app, &doc)
        .await
        .find(fantoccini::Locator::Css("[data-testid=error-message]"))
        .await
        .unwrap();
    assert_eq!(
        err.attr("data-code").await.unwrap().as_deref(),
        Some("unauthorized")
    );
    app.screenshot("cite-unauthorized").await;
    app.click("open-settings").await;
    app.testid("settings-key-citations").await;
    app.close().await;
    // The test keyring is private to this run; remove the key all the same.
    let _ = Command::new("secret-tool")
        .args(["clear", "service", "casebook", "username", "citations"])
        .status();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_real_save_dialog_opens_and_escape_writes_nothing() {
    let _one = exclusive().await;
    let work = tempfile::tempdir().unwrap();
    let doc = originals(work.path(), &["docx/comments-ins-del-lorem.docx"]).remove(0);
    let app = App::launch(AppOptions::default()).await;
    drop_files(&app, &[&doc]).await;
    wait_state(&app, &doc, "ready").await;
    app.click("cite-button").await;
    wait_state(&app, &doc, "cited").await;
    app.click("save-button").await;
    let display = app.xvfb.display().to_owned();
    let found = tokio::task::spawn_blocking(move || {
        Command::new("xdotool")
            .args([
                "search",
                "--sync",
                "--onlyvisible",
                "--name",
                "Save the cited copy",
            ])
            .env("DISPLAY", &display)
            .output()
            .unwrap()
    });
    let found = tokio::time::timeout(Duration::from_secs(20), found)
        .await
        .expect("a GTK file chooser opened")
        .unwrap();
    let window = String::from_utf8_lossy(&found.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_owned();
    assert!(!window.is_empty(), "no save dialog window");
    let shot = app.xvfb.display().to_owned();
    // No window manager runs under Xvfb: focus the dialog directly, then press a real
    // (XTEST) Escape, which GTK treats exactly like a person's key press.
    Command::new("xdotool")
        .args(["windowfocus", "--sync", &window])
        .env("DISPLAY", &shot)
        .status()
        .unwrap();
    Command::new("xdotool")
        .args(["key", "Escape"])
        .env("DISPLAY", &shot)
        .status()
        .unwrap();
    app.until("the dialog closes", || async {
        let out = Command::new("xdotool")
            .args(["search", "--onlyvisible", "--name", "Save the cited copy"])
            .env("DISPLAY", app.xvfb.display())
            .output()
            .unwrap();
        out.stdout.is_empty()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        state_of(&app, &doc).await,
        "cited",
        "cancelled: nothing saved"
    );
    let names: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names.len(),
        1,
        "nothing was written beside the original: {names:?}"
    );
    app.close().await;
}

// The citation service's other legal answers (issue #38), set on the app's own sandbox.

/// The python-pptx deck with speaker notes and a References slide
/// (`src-tauri/core/tests/data/cite/make_notes_deck.py`), copied into `dir`.
fn notes_deck(dir: &Path) -> PathBuf {
    let dest = dir.join("heat-and-health.pptx");
    std::fs::copy(
        casebook_e2e::root().join("src-tauri/core/tests/data/cite/notes-deck.pptx"),
        &dest,
    )
    .unwrap();
    dest
}

async fn attr(el: &fantoccini::elements::Element, name: &str) -> String {
    el.attr(name).await.unwrap().unwrap_or_default()
}

async fn text_of(el: &fantoccini::elements::Element) -> String {
    el.prop("textContent").await.unwrap().unwrap_or_default()
}

/// The card's element matching `css`, waited for.
async fn in_card(app: &App, path: &Path, css: &str) -> fantoccini::elements::Element {
    app.wait_css(&format!(
        "[data-testid=doc-card][data-path=\"{}\"] {css}",
        path.display()
    ))
    .await
}

const NOTE: &str = "No References section found. The service may refuse this document, or add a References section of its own.";
const REFUSAL: &str = "No References section was found; the service cites only from the document's own reference list.";

/// A deck whose speaker notes are cited too, inside sentences, in brackets, from its own
/// References slide: the card counts the notes' citations apart and says nothing was
/// added to the references; its changes show each insertion mid-sentence, the notes'
/// marked as speaker notes; the saved deck's notes hold them (python-pptx).
#[tokio::test(flavor = "multi_thread")]
async fn speaker_notes_cited_mid_sentence_are_shown_as_notes() {
    let _one = exclusive().await;
    let work = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let deck = notes_deck(work.path());
    let saved = out.path().join("heat-and-health (cited).pptx");
    let app = App::launch(AppOptions {
        dialog_path: Some(saved.display().to_string()),
        ..Default::default()
    })
    .await;
    post_fault(
        &app,
        serde_json::json!({
            "citeNotes": true,
            "placement": "inside",
            "citeShape": "bracketed",
            "citeStyle": "existing",
        }),
    )
    .await;
    drop_files(&app, &[&deck]).await;
    wait_state(&app, &deck, "ready").await;
    assert!(
        app.all_css("[data-testid=card-note]").await.is_empty(),
        "the deck has References: no note"
    );
    app.testid("mode-select")
        .await
        .select_by_value("every")
        .await
        .unwrap();
    app.click("cite-button").await;
    wait_state(&app, &deck, "cited").await;

    let summary = in_card(&app, &deck, "[data-testid=result-summary]").await;
    let number = |s: String| s.parse::<u32>().unwrap();
    let notes = number(attr(&summary, "data-notes").await);
    let all = number(attr(&summary, "data-citations").await);
    assert!(notes > 0 && all > notes, "body and notes: {notes} of {all}");
    assert_eq!(attr(&summary, "data-references").await, "0");
    let said = text_of(&summary).await;
    assert!(
        said.contains(&format!("({notes} in speaker notes)"))
            && said.contains("references unchanged"),
        "{said}"
    );

    let show = in_card(&app, &deck, "[data-testid=show-changes]").await;
    app.press(&show, "show changes").await;
    app.wait_css("[data-testid=changes] li[data-notes=true] mark")
        .await;
    // Each change: where it is, and whether some insertion has more of its sentence
    // after it than a full stop (mid-sentence), read from the page as shown.
    let changes = app
        .client
        .execute(
            r#"return [...document.querySelectorAll("[data-testid=changes] li")].map(li => ({
                notes: li.dataset.notes === "true",
                tag: li.querySelector(".tag")?.textContent ?? "",
                marks: [...li.querySelectorAll(".after mark")].map(m => m.textContent),
                inside: [...li.querySelectorAll(".after mark")].some(m => {
                  let rest = "", n = m.nextSibling;
                  while (n && n.nodeName !== "MARK") { rest += n.textContent; n = n.nextSibling; }
                  return rest.trim().length > 1;
                }),
              }));"#,
            vec![],
        )
        .await
        .unwrap();
    let changes = changes.as_array().unwrap();
    let in_notes: Vec<_> = changes.iter().filter(|c| c["notes"] == true).collect();
    assert!(
        !in_notes.is_empty() && in_notes.len() < changes.len(),
        "{changes:?}"
    );
    for c in &in_notes {
        assert!(
            c["tag"].as_str().unwrap().contains("speaker notes"),
            "shown as notes: {c}"
        );
    }
    assert!(
        in_notes.iter().any(|c| c["inside"] == true),
        "a notes citation mid-sentence: {changes:?}"
    );
    assert!(
        changes
            .iter()
            .any(|c| c["notes"] == false && c["inside"] == true),
        "a body citation mid-sentence: {changes:?}"
    );
    for c in changes {
        for m in c["marks"].as_array().unwrap() {
            let m = m.as_str().unwrap().trim();
            assert!(m.starts_with('[') && m.ends_with(']'), "bracketed: {m}");
        }
    }
    // The card as the README shows it: the summary, then the changes.
    app.client
        .execute(
            "document.querySelector('[data-testid=result-summary]').scrollIntoView({block: 'start'});",
            vec![],
        )
        .await
        .unwrap();
    app.screenshot("cite-notes").await;

    app.click("save-button").await;
    wait_state(&app, &deck, "saved").await;
    let notes_saved = office_notes(std::slice::from_ref(&saved)).remove(0);
    for c in &in_notes {
        for m in c["marks"].as_array().unwrap() {
            let m = m.as_str().unwrap().trim();
            assert!(
                notes_saved.iter().any(|n| n.contains(m)),
                "python-pptx finds {m} in the saved notes: {notes_saved:?}"
            );
        }
    }
    libreoffice_converts(std::slice::from_ref(&saved));
    app.close().await;
}

/// A document with no References section says so on its card before anything is sent;
/// a service that requires one refuses it, and the card shows the service's sentence.
/// A deck with References beside it is cited.
#[tokio::test(flavor = "multi_thread")]
async fn a_document_without_references_says_so_then_shows_the_refusal() {
    let _one = exclusive().await;
    let work = tempfile::tempdir().unwrap();
    let bare = originals(work.path(), &["docx/headings-lorem-multirun.docx"]).remove(0);
    let deck = notes_deck(work.path());
    let app = App::launch(AppOptions::default()).await;
    post_fault(&app, serde_json::json!({"requireReferences": true})).await;
    drop_files(&app, &[&bare, &deck]).await;
    wait_state(&app, &bare, "ready").await;
    wait_state(&app, &deck, "ready").await;
    let note = in_card(&app, &bare, "[data-testid=card-note]").await;
    assert_eq!(text_of(&note).await.trim(), NOTE);
    assert_eq!(
        app.all_css("[data-testid=card-note]").await.len(),
        1,
        "only the document without References has the note"
    );
    app.screenshot("cite-no-references").await;
    app.click("cite-button").await;
    wait_state(&app, &bare, "error").await;
    wait_state(&app, &deck, "cited").await;
    let err = in_card(&app, &bare, "[data-testid=error-message]").await;
    assert_eq!(attr(&err, "data-code").await, "invalid_input");
    let said = text_of(&err).await;
    assert!(said.contains(REFUSAL), "the service's own sentence: {said}");
    app.screenshot("cite-refused-no-references").await;
    app.close().await;
}

/// Errors from something in front of the service: an HTML page gives the service's
/// sentence (no markup); a front that takes less than 12 MB is named, with the size sent.
#[tokio::test(flavor = "multi_thread")]
async fn errors_from_a_front_show_the_services_sentence() {
    let _one = exclusive().await;
    let work = tempfile::tempdir().unwrap();
    let doc = originals(work.path(), &["docx/headings-lorem-multirun.docx"]).remove(0);
    let app = App::launch(AppOptions::default()).await;
    post_fault(
        &app,
        serde_json::json!({"requireReferences": true, "errorFamily": "html"}),
    )
    .await;
    drop_files(&app, &[&doc]).await;
    wait_state(&app, &doc, "ready").await;
    app.click("cite-button").await;
    wait_state(&app, &doc, "error").await;
    let err = in_card(&app, &doc, "[data-testid=error-message]").await;
    let said = text_of(&err).await;
    assert!(said.contains(REFUSAL), "{said}");
    assert!(!said.contains('<') && !said.contains("html"), "{said}");
    assert_eq!(attr(&err, "data-code").await, "invalid_input");

    // The same card again, against a front with a 5 kB limit, plain-text errors.
    post_fault(
        &app,
        serde_json::json!({"requireReferences": false, "errorFamily": "text", "frontLimitBytes": 5000}),
    )
    .await;
    app.click("cite-button").await;
    app.until("the front's refusal", || async {
        let err = in_card(&app, &doc, "[data-testid=error-message]").await;
        attr(&err, "data-code").await == "too_large"
    })
    .await;
    let err = in_card(&app, &doc, "[data-testid=error-message]").await;
    let said = text_of(&err).await;
    assert!(
        said.contains("something in front of it") && said.contains("MB request"),
        "{said}"
    );
    app.close().await;
}

/// An 8 MB document for a slow cite: a real one padded with a stored part.
fn padded_docx(dir: &Path) -> PathBuf {
    use std::io::Write;
    let original = std::fs::read(data("docx/headings-lorem-multirun.docx")).unwrap();
    let mut from = zip::ZipArchive::new(std::io::Cursor::new(original)).unwrap();
    let mut to = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..from.len() {
        to.raw_copy_file(from.by_index_raw(i).unwrap()).unwrap();
    }
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    to.start_file("word/media/padding.bin", stored).unwrap();
    to.write_all(&vec![0u8; 8 << 20]).unwrap();
    let p = dir.join("large.docx");
    std::fs::write(&p, to.finish().unwrap().into_inner()).unwrap();
    p
}

/// The unnamed (deleted) files process `pid` holds open under `dir`.
fn unnamed_files(pid: u32, dir: &Path) -> Vec<String> {
    let mut open: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| {
            fds.flatten()
                .filter_map(|fd| std::fs::read_link(fd.path()).ok())
                .map(|p| p.display().to_string())
                .filter(|p| p.starts_with(&dir.display().to_string()) && p.ends_with("(deleted)"))
                .collect()
        })
        .unwrap_or_default();
    open.sort();
    open.dedup();
    open
}

/// A slow cite shows where it is: the upload's percentage while the service does not
/// read, the seconds it has worked on it, the answer arriving. Cancelled in each, the
/// card is ready again and nothing is left: no file beside the original or in the save
/// folder, and the unnamed file the answer was going into is closed.
#[tokio::test(flavor = "multi_thread")]
async fn a_slow_cite_shows_where_it_is_and_a_cancel_leaves_nothing() {
    let _one = exclusive().await;
    let work = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let doc = padded_docx(work.path());
    let app = App::launch(AppOptions {
        dialog_path: Some(out.path().display().to_string()),
        env: vec![("TMPDIR".into(), tmp.path().display().to_string())],
        ..Default::default()
    })
    .await;
    drop_files(&app, &[&doc]).await;
    wait_state(&app, &doc, "ready").await;
    let (pid, _) = casebook_e2e::processes(app.data_dir(), "casebook-app");
    for (phase, fault, progress) in [
        (
            "sending",
            serde_json::json!({"latencyMs": 30000}),
            "uploading",
        ),
        (
            "waiting",
            serde_json::json!({"slowCiteMs": 30000}),
            "waiting",
        ),
        (
            "receiving",
            serde_json::json!({"slowDripMs": 20}),
            "receiving",
        ),
    ] {
        let mut body = fault;
        body["clear"] = true.into();
        post_fault(&app, body).await;
        app.click("cite-button").await;
        let shown = app
            .wait_css(&format!(
                "[data-testid=cite-progress][data-progress={progress}]"
            ))
            .await;
        match phase {
            "sending" => {
                let text = text_of(&shown).await;
                let pct: u32 = text
                    .split("Sending… ")
                    .nth(1)
                    .and_then(|r| r.split('%').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("a percentage: {text}"));
                assert!(pct < 100, "{text}");
                assert!(text.contains("MB"), "of the size: {text}");
                app.screenshot("cite-sending").await;
            }
            "waiting" => {
                app.until("a second waited", || async {
                    let p = app.all_css("[data-testid=cite-progress]").await;
                    match p.first() {
                        Some(p) => {
                            text_of(p).await.contains("Waiting for the service… 1 s")
                                || text_of(p).await.contains("Waiting for the service… 2 s")
                        }
                        None => false,
                    }
                })
                .await;
                app.screenshot("cite-waiting").await;
            }
            _ => assert!(text_of(&shown).await.contains("Receiving")),
        }
        assert_eq!(
            unnamed_files(pid, tmp.path()).len(),
            1,
            "{phase}: the answer goes into an unnamed file"
        );
        let cancel = in_card(&app, &doc, "[data-testid=cancel-button]").await;
        app.press(&cancel, "Cancel").await;
        wait_state(&app, &doc, "ready").await;
        app.until(&format!("{phase}: the unnamed file closed"), || async {
            unnamed_files(pid, tmp.path()).is_empty()
        })
        .await;
        assert!(
            app.all_css("[data-testid=doc-card] [data-testid=error-message]")
                .await
                .is_empty(),
            "{phase}: a cancel is not an error"
        );
        let beside: Vec<_> = std::fs::read_dir(work.path()).unwrap().flatten().collect();
        assert_eq!(beside.len(), 1, "{phase}: only the original: {beside:?}");
        let saved: Vec<_> = std::fs::read_dir(out.path()).unwrap().flatten().collect();
        assert!(saved.is_empty(), "{phase}: nothing saved: {saved:?}");
        let named: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().collect();
        assert!(
            named.is_empty(),
            "{phase}: no named temporary file: {named:?}"
        );
    }
    app.close().await;
}
