//! The app's wiring on Tauri's mock runtime, for unit tests of commands and watchers.

use crate::missions::Watchers;
use crate::state::AppState;
use tauri::Manager;
use tauri::test::{
    INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder, mock_context, noop_assets,
};

/// The app as `setup` wires it, with its own sandbox and a fresh data dir.
pub async fn mock_app() -> (tauri::App<MockRuntime>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let state = AppState::start(dir.path().to_path_buf()).await.unwrap();
    let app = crate::setup(mock_builder())
        .build(mock_context(noop_assets()))
        .unwrap();
    app.manage(state);
    app.manage(Watchers::new());
    (app, dir)
}

/// Calls `cmd` through the real IPC path, as the UI does.
pub fn invoke(
    webview: &tauri::WebviewWindow<MockRuntime>,
    cmd: &str,
    args: serde_json::Value,
) -> Result<serde_json::Value, serde_json::Value> {
    get_ipc_response(
        webview,
        tauri::webview::InvokeRequest {
            cmd: cmd.into(),
            callback: tauri::ipc::CallbackFn(0),
            error: tauri::ipc::CallbackFn(1),
            url: "tauri://localhost".parse().unwrap(),
            body: args.into(),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|b| b.deserialize::<serde_json::Value>().unwrap())
}
