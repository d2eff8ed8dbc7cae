//! The app itself: where it talks to, and whether that answers.

use crate::settings::Settings;
use crate::state::{AppInfo, AppState};
use casebook_core::Error;
use serde::Serialize;
use tauri::State;
use ts_rs::TS;

#[tauri::command]
pub async fn app_info(state: State<'_, AppState>) -> Result<AppInfo, Error> {
    Ok(state.info().await)
}

#[tauri::command]
pub async fn update_settings(
    state: State<'_, AppState>,
    settings: Settings,
) -> Result<AppInfo, Error> {
    state.update_settings(settings).await
}

/// The health indicator in Settings.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct Health {
    pub ok: bool,
    pub base_url: String,
    pub detail: String,
}

#[tauri::command]
pub async fn health(state: State<'_, AppState>) -> Result<Health, Error> {
    let base_url = state.base_url().await;
    let conn = casebook_core::connection::Connection::new(&base_url)?;
    Ok(match conn.health().await {
        Ok(h) => Health {
            ok: true,
            base_url,
            detail: h.status.unwrap_or_else(|| "answering".into()),
        },
        Err(e) => Health {
            ok: false,
            base_url,
            detail: e.message,
        },
    })
}
