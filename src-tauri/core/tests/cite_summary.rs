//! A cite's summary from the original and the result alone: every fixture cited
//! through the in-process sandbox, then read locally and compared with what the
//! sandbox says it did. And the preview, in each shape parse can answer.

mod common;

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
use common::citation_client;
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
    let client = citation_client(&s);
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
    s.knobs().set(|k| {
        k.fail = Some(casebook_sandbox::knobs::Fail {
            nth: 1,
            kind: Failure::Status500,
        })
    });
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
    s.knobs().set(|k| {
        k.fail = Some(casebook_sandbox::knobs::Fail {
            nth: 1,
            kind: Failure::Status500,
        })
    });
    let err = client.preview(&input, None).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Server);

    // An answer that is not JSON is shown as it came.
    s.knobs().set(|k| {
        k.fail = Some(casebook_sandbox::knobs::Fail {
            nth: 1,
            kind: Failure::MalformedJson,
        })
    });
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

// ---- bibliographies, every shape a service inserts, and a cited heading ----

fn corpus(rel: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus")
        .join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The package `bytes` with `word/document.xml`'s first `from` replaced by `to`.
fn patch(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    casebook_testsupport::files::patch(bytes, &[("word/document.xml", from, to)])
}

/// Entries whose citations take every shape the service writes from a document's own
/// list: a person, two, an organisation, a name without a year, no usable author.
const ENTRIES: [&str; 5] = [
    "Buzan, B. (2010). People, states and fear. ECPR Press.",
    "Smith, J., &amp; Jones, K. (2019). Cities and heat. Journal of Urban Studies.",
    "World Health Organization. (2020). Heat and health. WHO.",
    "Kramer. Untitled field notes, kept in the archive.",
    "(n.d.). A pamphlet handed out at the station.",
];

/// The real long-lorem-endnote.docx with a References heading and [`ENTRIES`].
fn lorem_with_references() -> Vec<u8> {
    let entries: String = ENTRIES
        .iter()
        .map(|e| format!("<w:p><w:r><w:t>{e}</w:t></w:r></w:p>"))
        .collect();
    let sect = "<w:sectPr w:rsidR=\"009E05A7\"";
    patch(
        &data("docx/long-lorem-endnote.docx"),
        sect,
        &format!(
            "<w:p><w:pPr><w:pStyle w:val=\"Heading1\"/></w:pPr><w:r><w:t>References</w:t></w:r></w:p>{entries}{sect}"
        ),
    )
}

#[test]
fn the_reader_takes_a_bibliography_field_or_control_for_the_references_section() {
    for (name, bytes, heading, entries) in [
        (
            "zotero",
            corpus("docx/pandoc-zotero_citations.docx"),
            "Reference list",
            3,
        ),
        (
            "mendeley",
            corpus("docx/pandoc-mendeley_citations.docx"),
            "References",
            4,
        ),
        (
            "word",
            data("docx/citations-bibliography-toc.docx"),
            "Bibliography",
            1,
        ),
    ] {
        let doc = reader::read(&bytes).unwrap();
        assert_eq!(doc.references_heading.as_deref(), Some(heading), "{name}");
        assert_eq!(
            doc.references.len(),
            entries,
            "{name}: {:#?}",
            doc.references
        );
        assert!(
            doc.references.iter().all(|r| r.contains("(20")),
            "{name}: {:#?}",
            doc.references
        );
        assert!(
            doc.paragraphs
                .iter()
                .all(|p| !doc.references.contains(&p.text)),
            "{name}"
        );
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &bytes).unwrap();
        assert_eq!(
            reader::references_in(file.as_file()),
            Some(entries as u32),
            "{name}: the no-References warning"
        );
    }
    // Without a heading, a bibliography field is still the References section, and
    // entries the service adds after it are its entries too.
    let cited = casebook_sandbox::engine::cite(
        &corpus("docx/pandoc-zotero_citations.docx"),
        &Default::default(),
    )
    .unwrap();
    let headless = patch(&cited.bytes, ">Reference list<", "><");
    let doc = reader::read(&headless).unwrap();
    assert_eq!(doc.references_heading, None);
    assert_eq!(doc.references.len(), 3 + cited.stats.references_added);
}

fn engine_options(
    style: casebook_sandbox::CiteStyle,
    placement: casebook_sandbox::Placement,
    shape: casebook_sandbox::CiteShape,
    seed: u64,
) -> casebook_sandbox::engine::CiteOptions {
    casebook_sandbox::engine::CiteOptions {
        mode: casebook_sandbox::engine::Mode::Every,
        min: 1,
        max: 2,
        seed,
        style,
        placement,
        shape,
        notes: false,
    }
}

#[test]
fn every_shape_the_service_inserts_is_counted_as_a_citation() {
    use casebook_sandbox::{CiteShape, CiteStyle, Placement};
    let original = lorem_with_references();
    let mut seen: Vec<String> = Vec::new();
    for style in [CiteStyle::Existing, CiteStyle::Library] {
        for placement in [Placement::End, Placement::Inside] {
            for shape in [
                CiteShape::AuthorYear,
                CiteShape::Numeric,
                CiteShape::Bracketed,
                CiteShape::Ibid,
            ] {
                for seed in 0..3 {
                    let o = engine_options(style, placement, shape, seed);
                    let cited = casebook_sandbox::engine::cite(&original, &o).unwrap();
                    let s = summarize_local(&original, &cited.bytes).unwrap();
                    let st = cited.stats;
                    assert_eq!(
                        counts(&s),
                        (
                            st.paragraphs_cited as u32,
                            st.citations_inserted as u32,
                            st.references_added as u32
                        ),
                        "{o:?}: {s:#?}"
                    );
                    for c in &s.changes {
                        let kept: String = c
                            .after
                            .iter()
                            .filter(|g| !g.inserted)
                            .map(|g| g.text.as_str())
                            .collect();
                        assert_eq!(kept, c.before, "{o:?}");
                        seen.extend(
                            c.after
                                .iter()
                                .filter(|g| g.inserted)
                                .map(|g| g.text.clone()),
                        );
                    }
                }
            }
        }
    }
    // The shapes were written, so the counts above cover them.
    for shape in [
        "(World Health Organization, 2020)",
        "(Kramer)",
        "(Source 5)",
        "(ibid.)",
        "[3]",
        "[Kramer]",
        "[World Health Organization 2020]",
        "(Buzan, 2010)",
    ] {
        assert!(
            seen.iter().any(|t| t.contains(shape)),
            "never inserted: {shape}"
        );
    }
    assert!(
        seen.iter().all(|t| !t.contains(" as Kramer notes")),
        "a name without a year is never written as the writer's own words"
    );
}

#[test]
fn a_references_heading_that_gained_a_citation_keeps_the_paragraphs_aligned() {
    use casebook_sandbox::{CiteShape, CiteStyle, Placement};
    let original = lorem_with_references();
    let o = engine_options(
        CiteStyle::Existing,
        Placement::End,
        CiteShape::AuthorYear,
        1,
    );
    let cited = casebook_sandbox::engine::cite(&original, &o).unwrap();
    // A service that also cites the heading.
    let after = patch(
        &cited.bytes,
        ">References</w:t>",
        ">References</w:t></w:r><w:r><w:t xml:space=\"preserve\"> (Smith &amp; Jones, 2019)</w:t>",
    );
    let s = summarize_local(&original, &after).unwrap();
    let st = cited.stats;
    assert_eq!(
        counts(&s),
        (
            st.paragraphs_cited as u32 + 1,
            st.citations_inserted as u32 + 1,
            0
        ),
        "{s:#?}"
    );
    assert!(
        s.changes.iter().all(|c| !c.before.is_empty()),
        "no paragraph is new"
    );
    let heading = s.changes.last().unwrap();
    assert_eq!(heading.before, "References");
    let inserted: Vec<&str> = heading
        .after
        .iter()
        .filter(|g| g.inserted)
        .map(|g| g.text.as_str())
        .collect();
    assert_eq!(inserted, [" (Smith & Jones, 2019)"]);

    // An essay's heading the same.
    let essay = "Heat waves kill more people than any other weather event.\n\nReferences\nSmith, J. (2019). Heat.\n";
    let cited = "Heat waves kill more people than any other weather event (Smith, 2019).\n\nReferences (Smith, 2019)\nSmith, J. (2019). Heat.\n";
    assert_eq!(counts(&summarize_text(essay, cited)), (2, 2, 0));
}
