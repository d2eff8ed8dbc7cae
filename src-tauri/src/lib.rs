//! The Casebook desktop app: a thin Tauri shell over `casebook-core`.
//!
//! Commands (in `commands`) are one-liners over core; everything that can be
//! tested without a window lives in core or in `state`.

pub mod bindings;
mod commands;
mod dialog;
pub mod state;

use state::AppState;
use tauri::Manager;

/// Registers every command, generic over the runtime so tests can drive the same
/// wiring on `tauri::test::MockRuntime` without a display. The caller manages an
/// [`AppState`].
pub fn setup<R: tauri::Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder.invoke_handler(tauri::generate_handler![
        commands::app_info,
        commands::inspect_documents,
        commands::pick_documents,
        commands::key_status,
        commands::set_key,
        commands::delete_key,
    ])
}

pub fn run() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CASEBOOK_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();

    setup(tauri::Builder::default())
        .setup(|app| {
            let data_dir = state::data_dir(app.path().app_data_dir().ok())?;
            let state = tauri::async_runtime::block_on(AppState::start(data_dir))?;
            tracing::info!(base_url = %state.info().base_url, mode = ?state.info().mode, "Casebook is ready");
            app.manage(state);
            Ok(())
        })
        .run(tauri::generate_context!())
        .expect("error while running Casebook");
}
