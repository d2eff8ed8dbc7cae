//! Checks of written documents by tools Casebook did not write.

use crate::root;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every paragraph python-docx / python-pptx sees in each file (panics if one fails to open).
pub fn office_texts(paths: &[PathBuf]) -> Vec<Vec<String>> {
    office_report(paths)
        .iter()
        .map(|r| {
            r["paragraphs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap_or("").to_owned())
                .collect()
        })
        .collect()
}

/// `tests/tools/office_check.py`'s report on each file.
fn office_report(paths: &[PathBuf]) -> Vec<serde_json::Value> {
    let python = root().join(".venv/bin/python");
    assert!(
        python.exists(),
        "run scripts/install-tools.sh for python-docx/pptx (make test does)"
    );
    let out = Command::new(python)
        .arg(root().join("tests/tools/office_check.py"))
        .args(paths)
        .output()
        .unwrap();
    let report: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "office_check: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(
        out.status.success(),
        "python-docx/pptx could not open: {report:?}"
    );
    report
}

/// Each slide's speaker notes, as python-pptx reads them, for each .pptx ("" for a slide
/// without notes).
pub fn office_notes(paths: &[PathBuf]) -> Vec<Vec<String>> {
    office_report(paths)
        .iter()
        .map(|r| {
            r["notes"]
                .as_array()
                .map(|notes| {
                    notes
                        .iter()
                        .map(|t| t.as_str().unwrap_or("").to_owned())
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect()
}

/// Whether LibreOffice converts each file to a non-trivial PDF.
pub fn libreoffice_converts(paths: &[PathBuf]) {
    let out_dir = tempfile::tempdir().unwrap();
    let profile = tempfile::tempdir().unwrap();
    let status = Command::new("soffice")
        .arg(format!(
            "-env:UserInstallation=file://{}",
            profile.path().display()
        ))
        .args([
            "--headless",
            "--norestore",
            "--convert-to",
            "pdf",
            "--outdir",
        ])
        .arg(out_dir.path())
        .args(paths)
        .output()
        .expect("LibreOffice (soffice) is installed");
    assert!(
        status.status.success(),
        "soffice failed: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    for p in paths {
        let pdf = out_dir
            .path()
            .join(Path::new(p.file_name().unwrap()).with_extension("pdf"));
        let size = std::fs::metadata(&pdf).map(|m| m.len()).unwrap_or(0);
        assert!(
            size > 1000,
            "LibreOffice did not convert {} ({size} bytes)",
            p.display()
        );
    }
}
