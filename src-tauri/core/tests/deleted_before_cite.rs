//! A bad input the table in `cli/tests/bad_input.rs` cannot reach: the app's flow,
//! where a dropped file is inspected (its card says .docx) and is deleted before
//! Cite. The cite fails with a specific message and leaves nothing behind: no file
//! and no held result.

mod common;

use casebook_core::ErrorCode;
use casebook_core::backend::SandboxOptions;
use casebook_core::citations::client::CiteOptions;
use casebook_core::citations::jobs::CiteSource;
use casebook_core::missions::follower::Quiet;
use casebook_testsupport::store::casebook_in;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread")]
async fn a_file_deleted_between_drop_and_cite_fails_plainly_and_leaves_nothing() {
    let data = tempfile::tempdir().unwrap();
    let core = casebook_in(data.path(), SandboxOptions::default(), Arc::new(Quiet)).await;
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("essay.docx");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/docx/long-lorem-endnote.docx"
        ),
        &path,
    )
    .unwrap();

    let cards = core
        .inspect(vec![path.to_string_lossy().into_owned()])
        .await;
    let card = serde_json::to_value(&cards[0]).unwrap();
    assert_eq!(card["kind"], "docx", "the drop was fine: {card}");

    std::fs::remove_file(&path).unwrap();
    let err = core
        .cite(
            CiteSource::Document { path: path.clone() },
            CiteOptions::default(),
            |_| {},
        )
        .await
        .expect_err("a deleted file cannot be cited");
    assert_eq!(err.code(), ErrorCode::Io, "{}", err.message());
    assert!(
        err.message().starts_with("Cannot read the file") && err.message().contains("No such file"),
        "{}",
        err.message()
    );
    let left: Vec<_> = std::fs::read_dir(folder.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing written beside it: {left:?}");
    assert_eq!(core.jobs.held(), 0, "no result held for a save");
    // Counted with the CLI's table by `make harden`.
    println!("bad inputs: 1/1 (deleted between drop and cite)");
    core.shutdown().await;
}
