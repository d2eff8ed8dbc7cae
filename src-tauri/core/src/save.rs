//! Writing results without ever losing the user's files: never over the input,
//! never over an existing file unless asked, and through a temporary file renamed
//! into place, so a failure leaves nothing behind.

use crate::error::{Error, ErrorCode, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `report.docx` → `report.cited.docx`, beside it (the CLI's default).
pub fn cited_path(input: &Path) -> PathBuf {
    with_suffix(input, |stem, ext| format!("{stem}.cited{ext}"))
}

/// `report.docx` → `report (cited).docx`, beside it (the app's save dialog proposal).
pub fn cited_path_for_people(input: &Path) -> PathBuf {
    with_suffix(input, |stem, ext| format!("{stem} (cited){ext}"))
}

fn with_suffix(input: &Path, name: impl Fn(&str, &str) -> String) -> PathBuf {
    let stem = input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "document".into());
    let ext = input
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    input.with_file_name(name(&stem, &ext))
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Refuses a destination that is the input, or that exists when `overwrite` is off.
pub fn check_destination(input: Option<&Path>, out: &Path, overwrite: bool) -> Result<()> {
    if let Some(input) = input
        && (same_file(input, out) || input == out)
    {
        return Err(Error::invalid_input(format!(
            "{} is the original document: Casebook never writes over it. Choose another name.",
            out.display()
        )));
    }
    if out.is_dir() {
        return Err(Error::invalid_input(format!(
            "{} is a folder.",
            out.display()
        )));
    }
    if out.exists() && !overwrite {
        return Err(Error::invalid_input(format!(
            "{} already exists. Choose another name, or allow overwriting (--overwrite).",
            out.display()
        )));
    }
    let parent = parent_of(out);
    if !parent.is_dir() {
        return Err(Error::new(
            ErrorCode::Io,
            format!("The folder {} does not exist.", parent.display()),
        ));
    }
    Ok(())
}

fn parent_of(p: &Path) -> &Path {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Writes `bytes` to a temporary file beside `out`, flushes it to disk, and renames
/// it into place (refusing to replace an existing file unless `overwrite`).
pub fn write_atomic(out: &Path, bytes: &[u8], overwrite: bool) -> Result<()> {
    let dir = parent_of(out);
    let fail =
        |what: &str, e: &std::io::Error| Error::io(&format!("Cannot {what} {}", out.display()), e);
    let mut tmp = tempfile::Builder::new()
        .prefix(".casebook-")
        .suffix(".part")
        .tempfile_in(dir)
        .map_err(|e| fail("write", &e))?;
    tmp.write_all(bytes).map_err(|e| fail("write", &e))?;
    tmp.as_file().sync_all().map_err(|e| fail("write", &e))?;
    let persisted = if overwrite {
        tmp.persist(out)
    } else {
        tmp.persist_noclobber(out)
    };
    persisted.map_err(|e| {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            Error::invalid_input(format!("{} already exists.", out.display()))
        } else {
            fail("save", &e.error)
        }
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_beside_the_input() {
        assert_eq!(
            cited_path(Path::new("/a/report.docx")),
            PathBuf::from("/a/report.cited.docx")
        );
        assert_eq!(
            cited_path_for_people(Path::new("/a/deck.v2.pptx")),
            PathBuf::from("/a/deck.v2 (cited).pptx")
        );
        assert_eq!(cited_path(Path::new("notes")), PathBuf::from("notes.cited"));
    }

    #[test]
    fn never_over_the_input_or_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.docx");
        std::fs::write(&input, b"original").unwrap();
        let code = |r: Result<()>| r.err().map(|e| e.code);
        assert_eq!(
            code(check_destination(Some(&input), &input, true)),
            Some(ErrorCode::InvalidInput)
        );
        let via_dots = dir.path().join(".").join("in.docx");
        assert_eq!(
            code(check_destination(Some(&input), &via_dots, true)),
            Some(ErrorCode::InvalidInput)
        );
        let out = dir.path().join("out.docx");
        assert!(check_destination(Some(&input), &out, false).is_ok());
        std::fs::write(&out, b"old").unwrap();
        assert_eq!(
            code(check_destination(Some(&input), &out, false)),
            Some(ErrorCode::InvalidInput)
        );
        assert!(check_destination(Some(&input), &out, true).is_ok());
        assert_eq!(
            code(check_destination(
                None,
                &dir.path().join("no/such/x.docx"),
                false
            )),
            Some(ErrorCode::Io)
        );
    }

    #[test]
    fn atomic_writes_leave_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.docx");
        write_atomic(&out, b"new", false).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        assert!(
            write_atomic(&out, b"newer", false).is_err(),
            "no clobber without overwrite"
        );
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        write_atomic(&out, b"newer", true).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"newer");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            vec![std::ffi::OsString::from("out.docx")],
            "no temporary file is left"
        );
    }
}
