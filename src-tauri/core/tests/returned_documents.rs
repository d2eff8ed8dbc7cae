//! A returned document is checked as a dropped one is: a cite answer whose package
//! would inflate to gigabytes (declared, or only in the bytes that come out), holds an
//! entry named out of the package, or holds a link is refused as bad input, in plain
//! words, and nothing of it is kept.

mod common;

use casebook_core::ErrorCode;
use casebook_core::citations::client::{CitationClient, Input, ValidOptions, no_progress};
use casebook_core::citations::jobs::{CiteJobs, CiteSource};
use casebook_sandbox::cite_variants::HostileDocument;
use casebook_sandbox::{CiteVariants, RunningSandbox, SandboxConfig, start};
use common::{citation_client, cite_defaults};
use std::path::{Path, PathBuf};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(rel)
}

async fn hostile(what: HostileDocument) -> (RunningSandbox, CitationClient) {
    let s = start(SandboxConfig {
        citations: CiteVariants {
            hostile_document: Some(what),
            ..Default::default()
        },
        ..Default::default()
    })
    .await
    .unwrap();
    let client = citation_client(&s);
    (s, client)
}

/// Each hostile answer, with the words its refusal must use.
const CASES: [(HostileDocument, ErrorCode, &str); 6] = [
    (HostileDocument::Bomb, ErrorCode::UnsafeDocument, "zip bomb"),
    (
        HostileDocument::LyingBomb,
        ErrorCode::UnsafeDocument,
        "unpacks to more than 512 MB (its parts say they are smaller than they are)",
    ),
    (
        HostileDocument::ParentPath,
        ErrorCode::UnsafeDocument,
        "\"../casebook-escape.txt\", a path leading out of its folder",
    ),
    (
        HostileDocument::AbsolutePath,
        ErrorCode::UnsafeDocument,
        "\"/tmp/casebook-escape.txt\", an absolute path",
    ),
    (
        HostileDocument::DrivePath,
        ErrorCode::UnsafeDocument,
        "\"C:\\casebook-escape.txt\", with a backslash",
    ),
    (
        HostileDocument::Symlink,
        ErrorCode::UnsafeDocument,
        "\"word/media/link\" as a symbolic link",
    ),
];

fn check_refusal(err: &casebook_core::Error, what: HostileDocument, code: ErrorCode, words: &str) {
    assert_eq!(err.code(), code, "{what:?}: {}", err.message());
    assert!(err.is_bad_document(), "{what:?}: bad input, not a failure");
    assert!(
        err.message().starts_with(
            "The citation service returned a document Casebook refuses, so nothing was saved."
        ),
        "{what:?}: {}",
        err.message()
    );
    assert!(err.message().contains(words), "{what:?}: {}", err.message());
}

#[tokio::test]
async fn each_hostile_answer_is_refused_in_memory_and_through_a_job() {
    let path = data("docx/headings-lorem-multirun.docx");
    let bytes = std::fs::read(&path).unwrap();
    for (what, code, words) in CASES {
        let (s, client) = hostile(what).await;
        let input = Input::document(&bytes).unwrap();
        let err = client
            .cite(&input, &ValidOptions::default(), &no_progress)
            .await
            .unwrap_err();
        check_refusal(&err, what, code, words);

        let jobs = CiteJobs::default();
        let err = jobs
            .run(
                client.clone(),
                CiteSource::Document { path: path.clone() },
                ValidOptions::default(),
                |_| {},
            )
            .await
            .unwrap_err();
        check_refusal(&err, what, code, words);
        assert_eq!(jobs.held(), 0, "{what:?}: nothing is kept to be saved");
        s.stop().await;
    }
}

#[tokio::test]
async fn a_deck_answered_with_a_bomb_is_refused_too() {
    let deck = std::fs::read(data("pptx/title-bullets-notes.pptx")).unwrap();
    for (what, words) in [
        (HostileDocument::Bomb, "to 2300."),
        // Its headers say 1 KB: only the bytes that come out tell.
        (HostileDocument::LyingBomb, "more than 512 MB"),
    ] {
        let (s, client) = hostile(what).await;
        let err = cite_defaults(&client, &Input::document(&deck).unwrap(), &no_progress)
            .await
            .unwrap_err();
        check_refusal(&err, what, ErrorCode::UnsafeDocument, words);
        s.stop().await;
    }
}

#[tokio::test]
async fn the_same_answer_without_the_hostile_entry_is_saved() {
    // The control: the knob off, the same document cites and is kept.
    let path = data("docx/headings-lorem-multirun.docx");
    let s = start(SandboxConfig::default()).await.unwrap();
    let client = citation_client(&s);
    let jobs = CiteJobs::default();
    jobs.run(
        client,
        CiteSource::Document { path },
        ValidOptions::default(),
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(jobs.held(), 1);
    s.stop().await;
}
