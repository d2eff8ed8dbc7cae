//! Cited documents checked by tools Casebook did not write: python-docx,
//! python-pptx and LibreOffice. Every real .docx and .pptx fixture is cited over
//! HTTP, then opened by each.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use casebook_sandbox::{SandboxConfig, start};
use casebook_testsupport::files::{python_tool, soffice};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["tests/data/docx", "tests/data/pptx"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            out.push(entry.unwrap().path());
        }
    }
    out.sort();
    out
}

/// "(Author, 2017)" or "(A, 2017; B et al., 2019)".
fn has_citation(text: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices('(').any(|(i, _)| {
        let rest = &text[i..];
        let Some(end) = rest.find(')') else {
            return false;
        };
        let inner = &rest[1..end];
        inner.contains(", ")
            && inner.split("; ").all(|c| {
                c.rsplit_once(", ")
                    .is_some_and(|(_, y)| y.len() == 4 && y.bytes().all(|b| b.is_ascii_digit()))
            })
            && bytes.len() > i
    })
}

#[tokio::test]
async fn cited_fixtures_open_in_python_docx_pptx_and_libreoffice() {
    let s = start(SandboxConfig::default()).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let client = reqwest::Client::new();
    let mut written = Vec::new();
    for path in fixtures() {
        let original = std::fs::read(&path).unwrap();
        let resp = client
            .post(format!("{}/citations/v1/cite", s.base_url()))
            .bearer_auth(s.key())
            .json(&json!({"fileBase64": B64.encode(&original), "mode": "every", "minCitations": 1, "maxCitations": 2}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "{}", path.display());
        let body: Value = resp.json().await.unwrap();
        let bytes = B64
            .decode(body["documentBase64"].as_str().unwrap())
            .unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let dest = out.path().join(&name);
        std::fs::write(&dest, &bytes).unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            original,
            "the fixture itself is untouched"
        );
        written.push((
            dest,
            body["stats"]["citationsInserted"].as_u64().unwrap_or(0),
        ));
    }

    let output = python_tool("office_check.py")
        .args(written.iter().map(|(p, _)| p))
        .output()
        .unwrap();
    let report: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "office_check printed no JSON ({e}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert!(
        output.status.success(),
        "python-docx/pptx could not open: {report:?}"
    );
    for ((path, inserted), entry) in written.iter().zip(&report) {
        let texts: Vec<&str> = entry["paragraphs"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t.as_str())
            .collect();
        let all = texts.join("\n");
        if *inserted > 0 {
            assert!(
                has_citation(&all),
                "{}: python sees no inserted citation",
                path.display()
            );
            assert!(
                texts
                    .iter()
                    .any(|t| ["References", "Bibliography"].contains(&t.trim())),
                "{}: python sees no References heading",
                path.display()
            );
        }
    }
    // Six fixtures have no paragraph long enough to cite (images only, one-word
    // bullets, short links); every other one must have been cited.
    let cited = written.iter().filter(|(_, n)| *n > 0).count();
    assert!(
        cited >= 12,
        "only {cited} of {} fixtures were cited",
        written.len()
    );
    for must in [
        "long-lorem-endnote.docx",
        "one-para-173-runs-gif.docx",
        "tracked-changes-hyperlinks.docx",
        "lecture-bullets-urls-embedded-zip.pptx",
    ] {
        assert!(
            written.iter().any(|(p, n)| p.ends_with(must) && *n > 0),
            "{must} has long paragraphs and was not cited"
        );
    }

    // LibreOffice converts each to PDF: it could read the package.
    let pdfs = tempfile::tempdir().unwrap();
    soffice(written.iter().map(|(p, _)| p), "pdf", pdfs.path());
    for (path, _) in &written {
        let pdf = pdfs
            .path()
            .join(path.with_extension("pdf").file_name().unwrap());
        let size = std::fs::metadata(&pdf).map(|m| m.len()).unwrap_or(0);
        assert!(
            size > 1000,
            "LibreOffice did not convert {} ({size} bytes)",
            path.display()
        );
    }
    s.stop().await;
}

#[test]
fn citation_pattern() {
    assert!(has_citation("as shown (Vaswani et al., 2017)."));
    assert!(has_citation("x (Smith & Jones, 2020; Knuth, 1984)"));
    assert!(!has_citation("(see above)"));
    assert!(!has_citation("(Smith, twenty)"));
}
