//! The end-to-end harness: a private X display, tauri-driver, the real app, and
//! helpers that act as a person would (real drag-and-drop, screenshots).

mod display;
mod drag;
mod office;
mod procs;
mod session;

pub use display::Xvfb;
pub use drag::{Drag, drag_files_onto};
pub use office::{libreoffice_converts, office_notes, office_texts};
pub use procs::{environment, processes};
pub use session::{App, AppOptions};

use std::path::PathBuf;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// Where the e2e run leaves screenshots for people and CI to look at.
pub fn artifacts_dir() -> PathBuf {
    let dir = root().join("artifacts/screenshots");
    std::fs::create_dir_all(&dir).expect("cannot create artifacts/screenshots");
    dir
}

/// A file in `tests/data`.
pub fn data(rel: &str) -> PathBuf {
    let p = root().join("tests/data").join(rel);
    assert!(p.exists(), "missing test data {}", p.display());
    p
}

/// The built app binary (`cargo build --workspace` puts it there).
pub fn app_binary() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let bin = target.join("debug/casebook-app");
    assert!(
        bin.exists(),
        "{} is missing: build it first with `cargo build --workspace` (make test does)",
        bin.display()
    );
    bin
}

/// The bare Tauri window `make bench` measures Casebook against (an example of the app
/// crate, built on the same tauri by `cargo build --workspace --all-targets`).
pub fn bare_binary() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let bin = target.join("debug/examples/bare");
    assert!(
        bin.exists(),
        "{} is missing: build it with `cargo build --workspace --all-targets`",
        bin.display()
    );
    bin
}

/// Runs a command to completion and returns its stdout, panicking with its stderr on failure.
pub(crate) fn run(cmd: &mut std::process::Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Only one app at a time: the machine has two cores and WebKit wants both.
pub async fn exclusive() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    LOCK.lock().await
}
