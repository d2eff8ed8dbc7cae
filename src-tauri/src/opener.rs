//! Handing things to the desktop: web links to the browser, folders to the file
//! manager. One program per platform; test builds (`test-hooks`) may name another
//! with `CASEBOOK_OPENER` (tests record what it is given).

use casebook_core::Error;
use std::ffi::OsString;
use std::path::Path;

fn program() -> OsString {
    #[cfg(feature = "test-hooks")]
    if let Some(p) = std::env::var_os("CASEBOOK_OPENER") {
        return p;
    }
    if cfg!(target_os = "macos") {
        "open".into()
    } else if cfg!(target_os = "windows") {
        "explorer".into()
    } else {
        "xdg-open".into()
    }
}

fn open(target: &std::ffi::OsStr, what: &str) -> Result<(), Error> {
    let program = program();
    let mut child = std::process::Command::new(&program)
        .arg(target)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        // Keys never travel in the environment, but the opener needs none of ours.
        .env_remove("CASEBOOK_CITATIONS_KEY")
        .env_remove("CASEBOOK_INVESTIGATIONS_KEY")
        .env_remove("CASEBOOK_SESSION_COOKIE")
        .spawn()
        .map_err(|e| {
            Error::io(
                &format!("Cannot open {what} with {}", Path::new(&program).display()),
                &e,
            )
        })?;
    // Reaped in the background, so no zombie is left behind.
    std::thread::spawn(move || child.wait());
    Ok(())
}

/// Opens an http(s) link in the system browser; nothing else opens from Casebook.
pub fn open_url(url: &str) -> Result<(), Error> {
    let parsed = url::Url::parse(url)
        .map_err(|_| Error::invalid_input(format!("{url:?} is not a web address.")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Error::invalid_input(format!(
            "Only web links open from Casebook, not {} links.",
            parsed.scheme()
        )));
    }
    open(parsed.as_str().as_ref(), "the link")
}

/// Opens the folder holding `path` in the file manager.
pub fn reveal(path: &Path) -> Result<(), Error> {
    let dir = path
        .parent()
        .filter(|d| d.is_dir())
        .ok_or_else(|| Error::new(casebook_core::ErrorCode::NotFound, "The folder is gone."))?;
    open(dir.as_os_str(), "the folder")
}

#[cfg(test)]
mod tests {
    use super::*;
    use casebook_core::ErrorCode;

    #[test]
    fn only_web_links_open() {
        for bad in ["file:///etc/passwd", "javascript:alert(1)", "not a url"] {
            assert_eq!(
                open_url(bad).err().map(|e| e.code()),
                Some(ErrorCode::InvalidInput),
                "{bad}"
            );
        }
    }
}
