//! Where Casebook keeps things on this computer: its data folder (shared by the app
//! and the CLI) and where save dialogs start.

use crate::error::{Error, ErrorCode, Result};
use std::path::PathBuf;

/// The app's identifier; its data folder is named after it, as Tauri names it.
pub const APP_IDENTIFIER: &str = "app.casebook.desktop";

/// The data folder (settings, mission history, the sandbox's sessions), shared by
/// the app and the CLI: `CASEBOOK_DATA_DIR`, else the platform's app-data folder.
pub fn data_dir() -> Result<PathBuf> {
    let dir = std::env::var_os("CASEBOOK_DATA_DIR")
        .map(PathBuf::from)
        .or_else(|| dirs::data_dir().map(|d| d.join(APP_IDENTIFIER)))
        .ok_or_else(|| {
            Error::new(
                ErrorCode::Io,
                "No data folder: this system names no home folder. Set CASEBOOK_DATA_DIR.",
            )
        })?;
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(&format!("Cannot create {}", dir.display()), &e))?;
    Ok(dir)
}

/// The user's home folder, where save dialogs start for files with no origin.
pub fn home_dir() -> PathBuf {
    dirs::home_dir().unwrap_or_else(|| PathBuf::from("."))
}
