//! Native file dialogs (rfd's GTK backend).
//!
//! Test builds (`test-hooks`) read `CASEBOOK_DIALOG_PATH`: when set, no dialog
//! opens; an open dialog returns the paths it lists (separated by `:`), a folder
//! dialog the first, a save dialog the first not there yet (else the first). Native
//! dialogs cannot be driven reliably under Xvfb.

use casebook_core::Error;
use std::path::{Path, PathBuf};

#[cfg(feature = "test-hooks")]
fn hooked_paths() -> Option<Vec<PathBuf>> {
    let raw = std::env::var_os("CASEBOOK_DIALOG_PATH")?;
    Some(
        std::env::split_paths(&raw)
            .filter(|p| !p.as_os_str().is_empty())
            .collect(),
    )
}

#[cfg(not(feature = "test-hooks"))]
fn hooked_paths() -> Option<Vec<PathBuf>> {
    None
}

/// rfd's GTK backend queues the dialog onto the GTK main loop (Tauri's main thread)
/// and blocks until it closes, so it must be called from any thread but that one.
async fn off_main_thread<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Error> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::internal(format!("The dialog failed: {e}")))
}

/// Asks the user for one or more documents to cite.
pub async fn pick_documents() -> Result<Vec<String>, Error> {
    let paths = match hooked_paths() {
        Some(paths) => paths,
        None => off_main_thread(|| {
            rfd::FileDialog::new()
                .set_title("Choose documents to cite")
                .add_filter("Word and PowerPoint documents", &["docx", "pptx"])
                .add_filter("All files", &["*"])
                .pick_files()
        })
        .await?
        .unwrap_or_default(),
    };
    Ok(paths.iter().map(|p| p.display().to_string()).collect())
}

/// Asks the user for one document to attach to a reply. `None`: cancelled.
pub async fn pick_attachment() -> Result<Option<PathBuf>, Error> {
    if let Some(paths) = hooked_paths() {
        return Ok(paths.into_iter().next());
    }
    off_main_thread(|| {
        rfd::FileDialog::new()
            .set_title("Attach a document")
            .add_filter(
                "Documents and images",
                &[
                    "pdf", "docx", "pptx", "xlsx", "txt", "md", "csv", "png", "jpg", "jpeg", "gif",
                    "webp",
                ],
            )
            .add_filter("All files", &["*"])
            .pick_file()
    })
    .await
}

/// Asks where to save, proposing `suggested`, offering `filter` (a name and an
/// extension). `None`: cancelled.
pub async fn save_file(
    title: &'static str,
    suggested: &Path,
    filter: (&'static str, &'static str),
) -> Result<Option<PathBuf>, Error> {
    save_file_of(title, suggested, filter.0, vec![filter.1]).await
}

/// [`save_file`] offering a file of any of `extensions`, named `what`.
pub async fn save_file_of(
    title: &'static str,
    suggested: &Path,
    what: &'static str,
    extensions: Vec<&'static str>,
) -> Result<Option<PathBuf>, Error> {
    if let Some(paths) = hooked_paths() {
        // Several paths: the first not there yet, so one test can save two files (a
        // report, then its cited copy, which may not replace the report).
        let free = paths.iter().find(|p| !p.exists()).or(paths.first());
        return Ok(free.cloned());
    }
    let dir = suggested.parent().map(Path::to_path_buf);
    let name = suggested
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    off_main_thread(move || {
        let mut dialog = rfd::FileDialog::new()
            .set_title(title)
            .set_file_name(name)
            .add_filter(what, &extensions);
        if let Some(dir) = dir {
            dialog = dialog.set_directory(dir);
        }
        dialog.save_file()
    })
    .await
}

/// Asks for a folder (Save all). `None`: cancelled.
pub async fn pick_folder() -> Result<Option<PathBuf>, Error> {
    if let Some(paths) = hooked_paths() {
        return Ok(paths.into_iter().next());
    }
    off_main_thread(|| {
        rfd::FileDialog::new()
            .set_title("Choose a folder for the cited copies")
            .pick_folder()
    })
    .await
}
