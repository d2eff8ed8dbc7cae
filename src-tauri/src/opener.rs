//! Handing things to the desktop: web links to the browser, folders to the file
//! manager. One program per platform; test builds (`test-hooks`) may name another
//! with `CASEBOOK_OPENER` (tests record what it is given).

use casebook_core::Error;
use casebook_core::keys::SECRET_ENVIRONMENT;
use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};

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

/// The opener's command for `target`, with the user's environment: not Casebook's keys,
/// nor what Casebook set for its own WebKit (a browser built on WebKitGTK would
/// otherwise start with compositing off).
fn command(program: &OsString, target: &std::ffi::OsStr, ours: &[&str]) -> Command {
    let mut cmd = Command::new(program);
    cmd.arg(target)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // `run` already took these out of the environment; an opener is no place to risk one.
    for name in SECRET_ENVIRONMENT.iter().chain(ours) {
        cmd.env_remove(name);
    }
    cmd
}

fn open(target: &std::ffi::OsStr, what: &str) -> Result<(), Error> {
    let program = program();
    let mut child = command(&program, target, crate::set_for_webkit())
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
    fn the_opener_gets_neither_keys_nor_what_casebook_set_for_webkit() {
        let ours = ["WEBKIT_DISABLE_COMPOSITING_MODE", "GDK_GL"];
        let cmd = command(&"xdg-open".into(), "https://example.com".as_ref(), &ours);
        let removed: Vec<_> = cmd
            .get_envs()
            .filter(|(_, value)| value.is_none())
            .map(|(name, _)| name.to_string_lossy().into_owned())
            .collect();
        for name in ours.iter().chain(&SECRET_ENVIRONMENT) {
            assert!(
                removed.iter().any(|r| r == name),
                "{name} reaches the opener"
            );
        }
        assert_eq!(removed.len(), 5, "only those: {removed:?}");
    }

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
