//! The Casebook desktop app: a thin Tauri shell over `casebook-core`.
//!
//! Commands (in `commands`) are one-liners over core; everything that can be
//! tested without a window lives in core or in `state`.

pub mod bindings;
pub mod commands;
mod dialog;
pub mod missions;
mod notify;
pub mod settings;
pub mod state;
#[cfg(test)]
mod testing;

use state::AppState;
use tauri::Manager;

/// Registers every command, generic over the runtime so tests can drive the same
/// wiring on `tauri::test::MockRuntime` without a display. The caller manages an
/// [`AppState`].
pub fn setup<R: tauri::Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder
        .invoke_handler(tauri::generate_handler![
            commands::app::app_info,
            commands::app::update_settings,
            commands::app::health,
            commands::documents::inspect_documents,
            commands::documents::pick_documents,
            commands::keys::key_status,
            commands::keys::set_key,
            commands::keys::delete_key,
            commands::cite::preview,
            commands::cite::cite,
            commands::cite::cancel_cite,
            commands::cite::save_cited,
            commands::cite::save_all_cited,
            commands::cite::show_in_folder,
            commands::missions::mission_preview,
            commands::missions::start_mission,
            commands::missions::list_missions,
            commands::missions::open_mission,
            commands::missions::watch_mission,
            commands::missions::cancel_mission,
            commands::missions::export_mission,
            commands::missions::open_link,
        ])
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::Destroyed = event
                && let Some(watchers) = window.try_state::<missions::Watchers>()
            {
                watchers.unsubscribe(window.label());
            }
        })
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
            let info = tauri::async_runtime::block_on(state.info());
            tracing::info!(base_url = %info.base_url, mode = ?info.mode, "Casebook is ready");
            app.manage(state);
            app.manage(commands::cite::Jobs::new());
            app.manage(missions::Watchers::new());
            missions::resume_all(app.handle());
            Ok(())
        })
        .run(tauri::generate_context!())
        .expect("error while running Casebook");
}
