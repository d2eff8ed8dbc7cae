//! The citation client against the sandbox answering the other ways real services do
//! (`CiteVariants`): citations inside sentences in any shape, from the document's own
//! list with nothing appended, in speaker notes; refusals of a document with no
//! References; every error family; a front with a smaller body limit. The summary and
//! the messages must tell the truth whichever the service chose.

mod common;

use casebook_core::ErrorCode;
use casebook_core::citations::client::{
    CitationClient, CiteOptions, Input, Mode, Upload, ValidOptions, no_progress,
};
use casebook_core::citations::documents;
use casebook_core::citations::summary;
use casebook_sandbox::{
    CiteShape, CiteStyle, CiteVariants, ErrorFamily, Placement, RunningSandbox, SandboxConfig,
    start,
};
use common::citation_client;

const ESSAY: &str =
    "Heat waves are becoming longer and more frequent in most of the world's cities. \
Hospital admissions rise on the hottest days, above all among older people. \
Cooling centres reduce the harm when people can reach them in time.

Urban design matters as much as warning systems do for the people most exposed. \
Trees and reflective roofs lower street temperatures by several degrees. \
The benefits are largest in the densest and poorest neighbourhoods.

References
Buzan, B. (2010). Cities and heat. Urban Press.
Smith, J., & Jones, K. (2019). Heat and health. Journal of Climate Medicine, 4, 1-20.
Lee, A., Park, B., & Kim, C. (2020). Cooling the city. Environmental Research, 12, 33-41.
";

async fn sandbox(v: CiteVariants) -> (RunningSandbox, CitationClient) {
    let s = start(SandboxConfig::default()).await.unwrap();
    s.knobs().set(|k| k.citations = v);
    let c = citation_client(&s);
    (s, c)
}

fn every() -> ValidOptions {
    CiteOptions {
        mode: Mode::Every,
        min_citations: 1,
        max_citations: 2,
        seed: None,
    }
    .validated()
    .unwrap()
}

async fn cite_essay(c: &CitationClient) -> casebook_core::Result<String> {
    let cited = c
        .cite(&Input::essay(ESSAY).unwrap(), &every(), &no_progress)
        .await?;
    Ok(String::from_utf8(cited.bytes).unwrap())
}

/// The essay without its References section, cited: the refusal.
async fn cite_without_references(c: &CitationClient) -> casebook_core::Error {
    let bare = ESSAY.split("\n\nReferences").next().unwrap();
    c.cite(&Input::essay(bare).unwrap(), &every(), &no_progress)
        .await
        .unwrap_err()
}

#[tokio::test]
async fn citations_inside_sentences_from_the_own_list_are_found_in_every_shape() {
    for shape in [
        CiteShape::AuthorYear,
        CiteShape::Numeric,
        CiteShape::Bracketed,
    ] {
        let (s, c) = sandbox(CiteVariants {
            style: CiteStyle::Existing,
            placement: Placement::Inside,
            shape,
            ..Default::default()
        })
        .await;
        let after = cite_essay(&c).await.unwrap();
        let sum = summary::summarize_text(ESSAY, &after);
        assert!(sum.citations_inserted >= 2, "{shape:?}: {sum:?}\n{after}");
        assert_eq!(sum.references_added, 0, "{shape:?}: nothing appended");
        // Each insertion sits inside its paragraph, not only at its end.
        let inside = sum.changes.iter().any(|ch| {
            let n = ch.after.len();
            ch.after
                .iter()
                .enumerate()
                .any(|(i, seg)| seg.inserted && i + 1 < n)
        });
        assert!(inside, "{shape:?}: a citation mid-paragraph: {sum:?}");
        // What was inserted is all the summary shows as new: the rest is the original.
        for ch in &sum.changes {
            let kept: String = ch
                .after
                .iter()
                .filter(|x| !x.inserted)
                .map(|x| x.text.as_str())
                .collect();
            assert_eq!(kept, ch.before, "{shape:?}");
        }
        s.stop().await;
    }
}

#[tokio::test]
async fn speaker_notes_cited_are_shown_as_notes() {
    let (s, c) = sandbox(CiteVariants {
        notes: true,
        placement: Placement::Inside,
        ..Default::default()
    })
    .await;
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cite/notes-deck.pptx");
    let doc = documents::open_file(&path).unwrap();
    let out = tempfile::tempfile().unwrap();
    let cited = c
        .cite_into(Upload::Document(&doc), &every(), &no_progress, out)
        .await
        .unwrap();
    let sum = summary::summarize_files(&doc.file, &cited.file).unwrap();
    assert!(sum.citations_in_notes > 0, "{sum:#?}");
    assert!(sum.citations_inserted > sum.citations_in_notes);
    assert!(sum.changes.iter().any(|ch| ch.notes && ch.slide.is_some()));
    s.stop().await;
}

#[tokio::test]
async fn a_document_without_references_is_refused_in_the_services_words() {
    let (s, c) = sandbox(CiteVariants {
        require_references: true,
        ..Default::default()
    })
    .await;
    let err = cite_without_references(&c).await;
    assert_eq!(err.code(), ErrorCode::InvalidInput, "{err:?}");
    assert!(
        err.message().contains("No References section was found"),
        "{}",
        err.message()
    );
    s.stop().await;
}

/// Every family of error body gives the person the service's own sentence (or the
/// title of the page something in front of it answered with).
#[tokio::test]
async fn every_error_family_shows_the_services_sentence() {
    for family in [
        ErrorFamily::Default,
        ErrorFamily::PlainError,
        ErrorFamily::Nested,
        ErrorFamily::Message,
        ErrorFamily::Detail,
        ErrorFamily::Problem,
        ErrorFamily::Text,
        ErrorFamily::Html,
    ] {
        let (s, c) = sandbox(CiteVariants {
            require_references: true,
            error_family: family,
            ..Default::default()
        })
        .await;
        let err = cite_without_references(&c).await;
        assert_eq!(err.status(), Some(422), "{family:?}");
        assert!(
            err.message().contains("References"),
            "{family:?}: the service's sentence is shown: {}",
            err.message()
        );
        assert!(
            !err.message().contains('<') && !err.message().contains('{'),
            "{family:?}: no markup or JSON: {}",
            err.message()
        );
        s.stop().await;
    }
}

#[tokio::test]
async fn a_front_that_takes_less_than_12_mb_is_named_with_the_size_sent() {
    let (s, c) = sandbox(CiteVariants {
        front_limit_bytes: Some(200_000),
        ..Default::default()
    })
    .await;
    let mut essay = String::new();
    while essay.len() < 600_000 {
        essay.push_str(ESSAY);
        essay.push_str("\n\n");
    }
    let err = c
        .cite(&Input::essay(&essay).unwrap(), &every(), &no_progress)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::TooLarge, "{err:?}");
    let m = err.message();
    assert!(m.contains("something in front of it"), "{m}");
    assert!(m.contains("0.6 MB"), "the size sent: {m}");
    assert!(m.contains("413"), "the front's own page title: {m}");
    s.stop().await;
}
