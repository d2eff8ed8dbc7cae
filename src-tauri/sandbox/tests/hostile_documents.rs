//! `hostileDocument`: the cite answer's document with one hostile zip entry, set at run
//! time over `POST /_sandbox/faults` and read back with a zip reader.

mod common;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use casebook_sandbox::{RunningSandbox, SandboxConfig, start};
use common::set_faults as faults;
use serde_json::{Value, json};
use std::io::Cursor;
use std::path::Path;

/// The cited document's zip entries: name, declared size, whether a symbolic link.
async fn cited_entries(sb: &RunningSandbox) -> Vec<(String, u64, bool)> {
    let doc = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/docx/headings-lorem-multirun.docx"),
    )
    .unwrap();
    let resp = reqwest::Client::new()
        .post(format!("{}/citations/v1/cite", sb.base_url()))
        .bearer_auth(sb.key())
        .json(&json!({"fileBase64": B64.encode(&doc), "mode": "every"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    let bytes = B64.decode(v["documentBase64"].as_str().unwrap()).unwrap();
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    (0..zip.len())
        .map(|i| {
            let f = zip.by_index_raw(i).unwrap();
            (f.name().to_owned(), f.size(), f.is_symlink())
        })
        .collect()
}

#[tokio::test]
async fn each_hostile_entry_is_added_and_none_takes_it_away() {
    let sb = start(SandboxConfig::default()).await.unwrap();
    let clean = cited_entries(&sb).await;
    assert!(clean.iter().all(|(_, size, link)| !link && *size < 1 << 20));
    for (name, entry) in [
        ("parent-path", "../casebook-escape.txt"),
        ("absolute-path", "/tmp/casebook-escape.txt"),
        ("drive-path", "C:\\casebook-escape.txt"),
    ] {
        assert_eq!(faults(&sb, json!({"hostileDocument": name})).await, 200);
        let entries = cited_entries(&sb).await;
        assert_eq!(entries.len(), clean.len() + 1, "{name}");
        assert_eq!(entries.last().unwrap().0, entry, "{name}");
    }
    assert_eq!(
        faults(&sb, json!({"hostileDocument": "symlink"})).await,
        200
    );
    let last = cited_entries(&sb).await.pop().unwrap();
    assert_eq!((last.0.as_str(), last.2), ("word/media/link", true));
    assert_eq!(faults(&sb, json!({"hostileDocument": "bomb"})).await, 200);
    let last = cited_entries(&sb).await.pop().unwrap();
    assert_eq!(
        (last.0.as_str(), last.1),
        (
            "docProps/padding.bin",
            casebook_sandbox::cite_variants::BOMB_INFLATED
        )
    );
    assert_eq!(faults(&sb, json!({"hostileDocument": "none"})).await, 200);
    assert_eq!(cited_entries(&sb).await, clean);
    assert_eq!(faults(&sb, json!({"hostileDocument": "worse"})).await, 400);
    sb.stop().await;
}
