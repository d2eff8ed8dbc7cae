//! The checkout's shared test documents, the Python tools that judge what Casebook
//! wrote, and packages edited the ways the suites need.

use std::ffi::OsStr;
use std::io::{Cursor, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The checkout's root (this crate is `src-tauri/testsupport`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A real document from `tests/data` (copied from `../shared/fixtures/`).
pub fn fixture(rel: &str) -> PathBuf {
    let p = root().join("tests/data").join(rel);
    assert!(p.exists(), "missing {}", p.display());
    p
}

/// The bytes of [`fixture`]`(rel)`.
pub fn fixture_bytes(rel: &str) -> Vec<u8> {
    let p = fixture(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The repository's `.venv` Python (python-docx, python-pptx), which must be there.
pub fn python() -> PathBuf {
    let p = root().join(".venv/bin/python");
    assert!(
        p.exists(),
        "{} is missing: run scripts/install-tools.sh for python-docx/pptx (make test does)",
        p.display()
    );
    p
}

/// `tests/tools/SCRIPT` run by [`python`].
pub fn python_tool(script: &str) -> Command {
    let mut c = Command::new(python());
    c.arg(root().join("tests/tools").join(script));
    c
}

/// The package `bytes` with each named part's text replaced as `edits` (part, from, to)
/// say: the first `from` only, which must be there.
pub fn patch(bytes: &[u8], edits: &[(&str, &str, &str)]) -> Vec<u8> {
    let mut zin = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    let mut zout = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for i in 0..zin.len() {
        let mut f = zin.by_index(i).unwrap();
        let name = f.name().to_owned();
        let mut data = Vec::new();
        f.read_to_end(&mut data).unwrap();
        for (part, from, to) in edits {
            if *part == name {
                let text = String::from_utf8(data).unwrap();
                assert!(text.contains(from), "{part} has no {from:?}");
                data = text.replacen(from, to, 1).into_bytes();
            }
        }
        zout.start_file(name, opts).unwrap();
        zout.write_all(&data).unwrap();
    }
    zout.finish().unwrap().into_inner()
}

/// The package `original` with `extra` bytes of padding beside its parts, stored as they
/// are, so they go into a request's body whatever they are: a document whose upload
/// takes a while.
pub fn padded(original: &[u8], extra: usize) -> Vec<u8> {
    let mut from = zip::ZipArchive::new(Cursor::new(original)).unwrap();
    let mut to = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for i in 0..from.len() {
        to.raw_copy_file(from.by_index_raw(i).unwrap()).unwrap();
    }
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    to.start_file("word/media/padding.bin", stored).unwrap();
    to.write_all(&vec![0u8; extra]).unwrap();
    to.finish().unwrap().into_inner()
}

/// LibreOffice headless converting `files` to `format` (`pdf`, `txt:Text (encoded):UTF8`,
/// `fodp`) into `out_dir`, with a profile of its own so runs never share one.
pub fn soffice<P: AsRef<OsStr>>(
    files: impl IntoIterator<Item = P>,
    format: &str,
    out_dir: &Path,
) -> Output {
    let profile = tempfile::tempdir().unwrap();
    let run = Command::new("soffice")
        .arg(format!(
            "-env:UserInstallation=file://{}",
            profile.path().display()
        ))
        .args([
            "--headless",
            "--norestore",
            "--convert-to",
            format,
            "--outdir",
        ])
        .arg(out_dir)
        .args(files)
        .output()
        .expect("LibreOffice (soffice) is installed");
    assert!(
        run.status.success(),
        "soffice failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    run
}
