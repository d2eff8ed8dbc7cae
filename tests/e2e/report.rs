//! From a mission to a cited Word report in the real window: the Report tab says when
//! there is nothing to save yet, then saves the report as .docx (checked by python-docx
//! and LibreOffice), prints through the platform's dialog, and hands the document to the
//! Cite view, which shows its preview (the References section found), cites and saves it.

use crate::missions::{start_in_window, until_for};
use casebook_e2e::{App, AppOptions, exclusive, libreoffice_converts, office_texts};
use fantoccini::Locator;

const OBJECTIVE: &str = "How does urban heat exposure affect hospital admissions?";

#[tokio::test(flavor = "multi_thread")]
async fn a_report_is_saved_as_word_then_cited_and_saved_from_the_window() {
    let _one = exclusive().await;
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("report.docx");
    let cited = tmp.path().join("report-cited.docx");
    let app = App::launch(AppOptions {
        // The first save dialog answers the report's path, the next the cited copy's.
        dialog_path: Some(format!("{}:{}", report.display(), cited.display())),
        env: vec![
            // Slow enough that the Report tab is seen before the report is written.
            ("CASEBOOK_SANDBOX_MISSION_PACE_MS".into(), "100".into()),
            ("CASEBOOK_SANDBOX_MISSION_EVENTS".into(), "150".into()),
        ],
        ..Default::default()
    })
    .await;
    let main = app.client.window().await.unwrap();
    start_in_window(&app, OBJECTIVE).await;

    // While the agent works there is no report, and nothing to save, cite or print.
    app.click("mission-tab-report").await;
    let none = app.text("mission-report-none").await;
    assert!(none.contains("nothing to save"), "{none}");
    for id in ["export-report-docx", "cite-report", "print-report"] {
        assert!(
            app.all_css(&format!("[data-testid={id}]")).await.is_empty(),
            "{id} is offered without a report"
        );
    }
    until_for(120, "the mission waits for the next message", || async {
        app.text("mission-status").await.trim() == "Waiting for you"
    })
    .await;
    app.testid("mission-report").await;

    // Print / Save as PDF: the platform's print dialog, with a stylesheet for paper.
    let printed = app
        .client
        .execute(
            "window.__printed = 0; window.print = () => { window.__printed += 1; };
             return [...document.styleSheets].flatMap((s) => [...s.cssRules])
               .filter((r) => r instanceof CSSMediaRule && r.conditionText === 'print')
               .map((r) => r.cssText).join('\\n');",
            vec![],
        )
        .await
        .unwrap();
    let print_css = printed.as_str().unwrap_or_default();
    assert!(print_css.contains(".report-print"), "{print_css}");
    app.click("print-report").await;
    let calls = app
        .client
        .execute("return window.__printed;", vec![])
        .await
        .unwrap();
    assert_eq!(calls, 1, "Print opens the print dialog once");

    // Save as Word.
    app.click("export-report-docx").await;
    until_for(10, "the Word report", || async { report.exists() }).await;
    let said = app.text("report-result").await;
    assert_eq!(said, format!("Saved {}", report.display()));
    let texts = &office_texts(std::slice::from_ref(&report))[0];
    assert_eq!(texts[0], OBJECTIVE, "the objective is the title: {texts:?}");
    assert!(texts.iter().any(|t| t == "References"), "{texts:?}");
    libreoffice_converts(std::slice::from_ref(&report));
    app.screenshot("mission-report-actions").await;

    // Cite this report: the main window's Cite view has it, its preview open.
    app.click("cite-report").await;
    until_for(10, "the report handed over", || async {
        app.text("report-result").await.starts_with("Sent ")
    })
    .await;
    app.client.switch_to_window(main).await.unwrap();
    let card_css = format!("[data-testid=doc-card][data-path=\"{}\"]", report.display());
    let card = app.wait_css(&card_css).await;
    app.until("the report's card is ready", || async {
        card.attr("data-state").await.ok().flatten().as_deref() == Some("ready")
    })
    .await;
    let refs = app
        .wait_css(&format!(
            "{card_css} [data-testid=preview] ul.references li"
        ))
        .await;
    let first_ref = refs.text().await.unwrap();
    assert!(first_ref.starts_with("[1]"), "{first_ref}");
    let summary = card
        .find(Locator::Css("[data-testid=preview] p.muted"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(summary.contains("“References” section"), "{summary}");
    app.screenshot("cite-report-preview").await;

    app.click("cite-button").await;
    app.until("the report is cited", || async {
        card.attr("data-state").await.ok().flatten().as_deref() == Some("cited")
    })
    .await;
    app.click("save-button").await;
    app.until("the cited copy is saved", || async {
        card.attr("data-state").await.ok().flatten().as_deref() == Some("saved")
    })
    .await;
    let after = &office_texts(std::slice::from_ref(&cited))[0];
    assert_eq!(after[0], OBJECTIVE);
    assert_ne!(after, texts, "the cited copy has citations");
    libreoffice_converts(std::slice::from_ref(&cited));
    app.close().await;
}
