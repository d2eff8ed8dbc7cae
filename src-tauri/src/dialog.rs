//! Native file dialogs (rfd's GTK backend), with a test hook.
//!
//! When `CASEBOOK_DIALOG_PATH` is set, no dialog opens: an open dialog returns the
//! paths it lists (separated by `:`), a save or folder dialog returns it. Native
//! dialogs cannot be driven reliably under Xvfb; this lets tests drive every flow
//! that opens or saves files.

use casebook_core::{Error, ErrorCode};
use std::path::{Path, PathBuf};

const TEST_HOOK: &str = "CASEBOOK_DIALOG_PATH";

fn hooked_paths() -> Option<Vec<PathBuf>> {
    let raw = std::env::var_os(TEST_HOOK)?;
    Some(
        std::env::split_paths(&raw)
            .filter(|p| !p.as_os_str().is_empty())
            .collect(),
    )
}

/// rfd's GTK backend queues the dialog onto the GTK main loop (Tauri's main thread)
/// and blocks until it closes, so it must be called from any thread but that one.
async fn off_main_thread<T, F>(f: F) -> Result<T, Error>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::new(ErrorCode::Io, format!("The dialog failed: {e}")))
}

/// Asks the user for one or more documents to cite.
pub async fn pick_documents() -> Result<Vec<PathBuf>, Error> {
    if let Some(paths) = hooked_paths() {
        return Ok(paths);
    }
    let picked = off_main_thread(|| {
        rfd::FileDialog::new()
            .set_title("Choose documents to cite")
            .add_filter("Word and PowerPoint documents", &["docx", "pptx"])
            .add_filter("All files", &["*"])
            .pick_files()
    })
    .await?;
    Ok(picked.unwrap_or_default())
}

/// Asks where to save, proposing `suggested`. `None` when the user cancels.
pub async fn save_file(
    suggested: &Path,
    filter: (&'static str, &'static str),
) -> Result<Option<PathBuf>, Error> {
    save_file_titled("Save the cited copy", suggested, filter).await
}

/// [`save_file`] with the dialog's title.
pub async fn save_file_titled(
    title: &'static str,
    suggested: &std::path::Path,
    filter: (&'static str, &'static str),
) -> Result<Option<PathBuf>, Error> {
    if let Some(paths) = hooked_paths() {
        return Ok(paths.into_iter().next());
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
            .add_filter(filter.0, &[filter.1]);
        if let Some(dir) = dir {
            dialog = dialog.set_directory(dir);
        }
        dialog.save_file()
    })
    .await
}

/// Asks for a folder (Save all). `None` when the user cancels.
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
