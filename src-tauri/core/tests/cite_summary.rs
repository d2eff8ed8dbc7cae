//! A cite's summary from the original and the result alone: every fixture cited
//! through the in-process sandbox, then read locally and compared with what the
//! sandbox says it did. And the preview, in each shape parse can answer.

use casebook_core::ErrorCode;
use casebook_core::citations::client::{
    CitationClient, CiteOptions, Input, Mode, OutputKind, Preview, PreviewSource, ValidOptions,
    no_progress,
};
use casebook_core::citations::reader;
use casebook_core::citations::summary::{CiteSummary, summarize_local, summarize_text};
use casebook_core::keys::ApiKey;
use casebook_core::net::connection::Connection;
use casebook_sandbox::{Failure, RunningSandbox, SandboxConfig, start};
use std::path::{Path, PathBuf};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

fn data(rel: &str) -> Vec<u8> {
    std::fs::read(data_dir().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn fixtures() -> Vec<String> {
    let mut names = Vec::new();
    for kind in ["docx", "pptx"] {
        for e in std::fs::read_dir(data_dir().join(kind)).unwrap() {
            names.push(format!(
                "{kind}/{}",
                e.unwrap().file_name().to_string_lossy()
            ));
        }
    }
    names.sort();
    names
}

async fn setup() -> (RunningSandbox, CitationClient) {
    let s = start(SandboxConfig::default()).await.unwrap();
    let client = CitationClient::new(
        Connection::new(s.base_url()).unwrap(),
        ApiKey::parse(s.key()).unwrap(),
    );
    (s, client)
}

fn options(seed: u64) -> ValidOptions {
    CiteOptions {
        mode: Mode::Every,
        min_citations: 1,
        max_citations: 2,
        seed: Some(seed),
    }
    .validated()
    .unwrap()
}

/// What the sandbox says it did, from the fields it adds to the cite answer.
fn stats(extra: &serde_json::Map<String, serde_json::Value>) -> (u32, u32, u32) {
    let s = &extra["stats"];
    let n = |k: &str| s[k].as_u64().unwrap_or_else(|| panic!("stats.{k}: {s}")) as u32;
    (
        n("paragraphsCited"),
        n("citationsInserted"),
        n("referencesAdded"),
    )
}

fn counts(s: &CiteSummary) -> (u32, u32, u32) {
    (
        s.paragraphs_changed,
        s.citations_inserted,
        s.references_added,
    )
}

fn check_changes(name: &str, s: &CiteSummary) {
    for c in &s.changes {
        let inserted: Vec<&str> = c
            .after
            .iter()
            .filter(|g| g.inserted)
            .map(|g| g.text.as_str())
            .collect();
        assert_eq!(
            inserted.len(),
            1,
            "{name}: one citation run per paragraph: {c:?}"
        );
        assert!(
            inserted[0].starts_with(" (") && inserted[0].ends_with(')'),
            "{name}: {inserted:?}"
        );
        let unchanged: String = c
            .after
            .iter()
            .filter(|g| !g.inserted)
            .map(|g| g.text.as_str())
            .collect();
        assert_eq!(unchanged, c.before, "{name}: citing only inserted");
    }
}

#[tokio::test]
async fn every_fixture_cited_is_summarized_from_the_documents() {
    let (_s, client) = setup().await;
    let mut cited_any = 0;
    for (i, name) in fixtures().into_iter().enumerate() {
        let original = data(&name);
        let input = Input::document(&original).unwrap();
        let cited = client
            .cite(&input, &options(i as u64), &no_progress)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_ne!(cited.kind, OutputKind::Text);
        let summary = summarize_local(&original, &cited.bytes).unwrap();
        let said = stats(&cited.extra);
        assert_eq!(counts(&summary), said, "{name}: {summary:#?}");
        check_changes(&name, &summary);
        if said.1 > 0 {
            cited_any += 1;
            assert!(summary.citations_inserted > 0);
            let after = reader::read(&cited.bytes).unwrap();
            assert!(after.references_heading.is_some(), "{name}");
        } else {
            assert_eq!(
                cited.bytes, original,
                "{name}: nothing to cite, nothing changed"
            );
        }
        let unchanged = summarize_local(&original, &original).unwrap();
        assert_eq!(counts(&unchanged), (0, 0, 0), "{name}");
        assert!(unchanged.changes.is_empty());
    }
    // Fixtures with no paragraph long enough to cite (images only, short items) are
    // left alone by the sandbox; most are cited.
    assert!(cited_any >= 8, "only {cited_any} fixtures were cited");
}

#[tokio::test]
async fn citing_again_extends_the_references() {
    let (_s, client) = setup().await;
    for name in [
        "docx/citations-bibliography-toc.docx",
        "docx/long-lorem-endnote.docx",
        "pptx/lecture-bullets-urls-embedded-zip.pptx",
    ] {
        let original = data(name);
        let first = client
            .cite(
                &Input::document(&original).unwrap(),
                &options(1),
                &no_progress,
            )
            .await
            .unwrap();
        let second = client
            .cite(
                &Input::document(&first.bytes).unwrap(),
                &options(2),
                &no_progress,
            )
            .await
            .unwrap();
        let summary = summarize_local(&first.bytes, &second.bytes).unwrap();
        assert_eq!(counts(&summary), stats(&second.extra), "{name}");
        let before = reader::read(&first.bytes).unwrap();
        let after = reader::read(&second.bytes).unwrap();
        assert_eq!(
            after.references.len(),
            before.references.len() + summary.references_added as usize
        );
    }
}

#[tokio::test]
async fn an_essay_is_summarized_from_its_text() {
    let (_s, client) = setup().await;
    let essay = "# Heat\n\nHeat waves kill more people than any other weather event in Europe.\n\nShort.\n\nCities trap heat in concrete and asphalt long after the sun has set.\n";
    let cited = client
        .cite(&Input::essay(essay).unwrap(), &options(5), &no_progress)
        .await
        .unwrap();
    assert_eq!(cited.kind, OutputKind::Text);
    let text = String::from_utf8(cited.bytes).unwrap();
    let summary = summarize_text(essay, &text);
    assert_eq!(counts(&summary), stats(&cited.extra), "{text}");
    assert_eq!(summary.paragraphs_changed, 2);
    check_changes("essay", &summary);
    assert_eq!(counts(&summarize_text(essay, essay)), (0, 0, 0));
}

#[tokio::test]
async fn the_preview_shows_parse_or_the_local_reading() {
    let (s, client) = setup().await;
    let docx = data("docx/headings-lorem-multirun.docx");
    let input = Input::document(&docx).unwrap();
    let local = reader::read(&docx).unwrap();

    match client.preview(&input, Some(&docx)).await.unwrap() {
        Preview::Paragraphs {
            parsed,
            source: PreviewSource::Service,
        } => {
            assert_eq!(parsed.paragraphs.len(), local.paragraphs.len());
            assert_eq!(parsed.extra["kind"], "docx");
        }
        other => panic!("{other:?}"),
    }

    // parse fails: the document is read here instead, and the note says why.
    s.faults().fail_request(1, Failure::Status500);
    match client.preview(&input, Some(&docx)).await.unwrap() {
        Preview::Paragraphs {
            parsed,
            source: PreviewSource::Local { note },
        } => {
            assert_eq!(parsed.paragraphs, local.paragraphs);
            assert!(note.contains("preview failed"), "{note}");
            assert!(note.contains("500"), "{note}");
        }
        other => panic!("{other:?}"),
    }
    // Without the document, the failure is the answer.
    s.faults().fail_request(1, Failure::Status500);
    let err = client.preview(&input, None).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Server);

    // An answer that is not JSON is shown as it came.
    s.faults().fail_request(1, Failure::MalformedJson);
    match client.preview(&input, Some(&docx)).await.unwrap() {
        Preview::Raw { note, .. } => assert!(note.contains("not JSON"), "{note}"),
        other => panic!("{other:?}"),
    }

    // A wrong key is for the person to fix, not to paper over.
    let wrong = CitationClient::new(
        Connection::new(s.base_url()).unwrap(),
        ApiKey::parse("cbk_wrong_0123456789abcdef").unwrap(),
    );
    let err = wrong.preview(&input, Some(&docx)).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unauthorized);

    // Essays preview through the service too.
    let essay = Input::essay("One paragraph.\n\nAnother.").unwrap();
    assert!(matches!(
        client.preview(&essay, None).await.unwrap(),
        Preview::Paragraphs { .. }
    ));
}
