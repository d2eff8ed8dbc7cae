//! Native file dialogs (rfd's GTK backend), with a test hook.
//!
//! When `CASEBOOK_DIALOG_PATH` is set, no dialog opens: an open dialog returns the
//! paths it lists (separated by `:`), a save or folder dialog returns it. Native
//! dialogs cannot be driven reliably under Xvfb; this lets tests drive every flow
//! that opens or saves files.

use casebook_core::{Error, ErrorCode};
use std::path::PathBuf;

const TEST_HOOK: &str = "CASEBOOK_DIALOG_PATH";

fn hooked_paths() -> Option<Vec<PathBuf>> {
    let raw = std::env::var_os(TEST_HOOK)?;
    Some(
        std::env::split_paths(&raw)
            .filter(|p| !p.as_os_str().is_empty())
            .collect(),
    )
}

/// Asks the user for one or more documents to cite.
pub async fn pick_documents<R: tauri::Runtime>(
    window: &tauri::Window<R>,
) -> Result<Vec<PathBuf>, Error> {
    if let Some(paths) = hooked_paths() {
        return Ok(paths);
    }
    let picked = on_main_thread(window, |parent| {
        let mut dialog = rfd::FileDialog::new()
            .set_title("Choose documents to cite")
            .add_filter("Word and PowerPoint documents", &["docx", "pptx"])
            .add_filter("All files", &["*"]);
        if let Some(parent) = parent {
            dialog = dialog.set_parent(parent);
        }
        dialog.pick_files()
    })
    .await?;
    Ok(picked.unwrap_or_default())
}

/// GTK dialogs must run on the thread that owns the GTK main loop.
async fn on_main_thread<R, T, F>(window: &tauri::Window<R>, f: F) -> Result<T, Error>
where
    R: tauri::Runtime,
    T: Send + 'static,
    F: FnOnce(Option<&tauri::Window<R>>) -> T + Send + 'static,
{
    let (tx, rx) = tokio::sync::oneshot::channel();
    let parent = window.clone();
    window
        .run_on_main_thread(move || {
            let _ = tx.send(f(Some(&parent)));
        })
        .map_err(|e| Error::new(ErrorCode::Io, format!("Cannot open the dialog: {e}")))?;
    rx.await
        .map_err(|_| Error::new(ErrorCode::Io, "The dialog closed without an answer."))
}

/// Asks where to save, proposing `suggested`. `None` when the user cancels.
pub async fn save_file<R: tauri::Runtime>(
    window: &tauri::Window<R>,
    suggested: &std::path::Path,
    filter: (&'static str, &'static str),
) -> Result<Option<PathBuf>, Error> {
    save_file_titled(window, "Save the cited copy", suggested, filter).await
}

/// [`save_file`] with the dialog's title.
pub async fn save_file_titled<R: tauri::Runtime>(
    window: &tauri::Window<R>,
    title: &'static str,
    suggested: &std::path::Path,
    filter: (&'static str, &'static str),
) -> Result<Option<PathBuf>, Error> {
    if let Some(paths) = hooked_paths() {
        return Ok(paths.into_iter().next());
    }
    let dir = suggested.parent().map(|p| p.to_path_buf());
    let name = suggested
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    on_main_thread(window, move |parent| {
        let mut dialog = rfd::FileDialog::new()
            .set_title(title)
            .set_file_name(name)
            .add_filter(filter.0, &[filter.1]);
        if let Some(dir) = dir {
            dialog = dialog.set_directory(dir);
        }
        if let Some(parent) = parent {
            dialog = dialog.set_parent(parent);
        }
        dialog.save_file()
    })
    .await
}

/// Asks for a folder (Save all). `None` when the user cancels.
pub async fn pick_folder<R: tauri::Runtime>(
    window: &tauri::Window<R>,
) -> Result<Option<PathBuf>, Error> {
    if let Some(paths) = hooked_paths() {
        return Ok(paths.into_iter().next());
    }
    on_main_thread(window, |parent| {
        let mut dialog = rfd::FileDialog::new().set_title("Choose a folder for the cited copies");
        if let Some(parent) = parent {
            dialog = dialog.set_parent(parent);
        }
        dialog.pick_folder()
    })
    .await
}
