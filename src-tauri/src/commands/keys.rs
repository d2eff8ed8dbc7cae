//! API keys: entered once into the keyring, afterwards only ever shown masked.

use crate::state::AppState;
use casebook_core::Error;
use casebook_core::keys::{KeyStatus, Service};
use tauri::State;

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
