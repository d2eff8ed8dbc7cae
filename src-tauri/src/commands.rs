//! Tauri commands: each a one-liner over core, returning `{code, message}` errors.

use crate::dialog;
use crate::state::{AppInfo, AppState};
use casebook_core::Error;
use casebook_core::documents::{self, DocumentInfo};
use casebook_core::keys::{KeyStatus, Service};
use std::path::PathBuf;
use tauri::State;

#[tauri::command]
pub fn app_info(state: State<'_, AppState>) -> AppInfo {
    state.info().clone()
}

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
pub async fn pick_documents<R: tauri::Runtime>(
    window: tauri::Window<R>,
) -> Result<Vec<DocumentInfo>, Error> {
    let paths = dialog::pick_documents(&window).await?;
    Ok(inspect_documents(paths.into_iter().map(|p| p.display().to_string()).collect()).await)
}

#[tauri::command]
pub async fn key_status(state: State<'_, AppState>) -> Result<Vec<KeyStatus>, Error> {
    let mut out = Vec::new();
    for service in Service::ALL {
        out.push(state.keys.status(service).await?);
    }
    Ok(out)
}

#[tauri::command]
pub async fn set_key(
    state: State<'_, AppState>,
    service: Service,
    key: String,
) -> Result<KeyStatus, Error> {
    state.keys.set(service, &key).await?;
    state.keys.status(service).await
}

#[tauri::command]
pub async fn delete_key(state: State<'_, AppState>, service: Service) -> Result<KeyStatus, Error> {
    state.keys.delete(service).await?;
    state.keys.status(service).await
}
