//! Bringing documents in: dropped or browsed paths, checked on this computer.

use crate::dialog;
use casebook_core::Error;
use casebook_core::documents::{self, DocumentInfo};
use std::path::PathBuf;

#[tauri::command]
pub async fn inspect_documents(paths: Vec<String>) -> Vec<DocumentInfo> {
    tauri::async_runtime::spawn_blocking(move || {
        paths
            .iter()
            .map(|p| documents::inspect(&PathBuf::from(p)))
            .collect()
    })
    .await
    .unwrap_or_default()
}

#[tauri::command]
pub async fn pick_documents() -> Result<Vec<DocumentInfo>, Error> {
    let paths = dialog::pick_documents().await?;
    Ok(inspect_documents(paths.into_iter().map(|p| p.display().to_string()).collect()).await)
}
