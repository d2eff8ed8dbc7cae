//! The app's commands through Tauri's real IPC, on a mock runtime (no display):
//! the same `setup` wiring the app uses.

use casebook_app::commands::cite::Jobs;
use casebook_app::state::AppState;
use tauri::test::{INVOKE_KEY, get_ipc_response, mock_builder};
use tauri::webview::InvokeRequest;

fn data(rel: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data")
        .join(rel)
        .display()
        .to_string()
}

fn invoke(
    webview: &tauri::WebviewWindow<tauri::test::MockRuntime>,
    cmd: &str,
    body: serde_json::Value,
) -> Result<serde_json::Value, serde_json::Value> {
    get_ipc_response(
        webview,
        InvokeRequest {
            cmd: cmd.into(),
            callback: tauri::ipc::CallbackFn(0),
            error: tauri::ipc::CallbackFn(1),
            url: "tauri://localhost".parse().unwrap(),
            body: tauri::ipc::InvokeBody::Json(body),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|r| r.deserialize::<serde_json::Value>().unwrap())
}

#[test]
fn commands_answer_through_ipc_with_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let state = runtime
        .block_on(AppState::start(dir.path().to_path_buf()))
        .unwrap();
    let app = casebook_app::setup(mock_builder())
        .manage(state)
        .manage(Jobs::new())
        // The real context: its capabilities decide what the window may call.
        .build(tauri::generate_context!("tauri.conf.json", test = true))
        .unwrap();
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();

    let info = invoke(&webview, "app_info", serde_json::json!({})).unwrap();
    assert_eq!(info["mode"], "sandbox");
    assert!(
        info["baseUrl"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:")
    );

    let docs = invoke(
        &webview,
        "inspect_documents",
        serde_json::json!({"paths": [data("docx/hyperlink-fragments.docx"), data("bad/truncated-zip.docx")]}),
    )
    .unwrap();
    assert_eq!(docs[0]["kind"], "docx");
    assert_eq!(docs[1]["problem"]["code"], "corrupt_document");

    // Bad settings come back as {code, message}, and change nothing.
    let err = invoke(
        &webview,
        "update_settings",
        serde_json::json!({"settings": {"sandbox": false, "baseUrl": "http://example.org", "citeOptions": {"mode": "every", "minCitations": 1, "maxCitations": 2}}}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "invalid_input", "{err}");
    assert!(err["message"].as_str().unwrap().contains("https"));
    let after = invoke(&webview, "app_info", serde_json::json!({})).unwrap();
    assert_eq!(after["mode"], "sandbox");

    // Only the commands the capability grants can be called at all.
    let denied = invoke(
        &webview,
        "plugin:fs|read_file",
        serde_json::json!({"path": "/etc/passwd"}),
    )
    .unwrap_err();
    assert!(
        denied
            .as_str()
            .is_some_and(|m| m.contains("not allowed") || m.contains("not found")),
        "{denied}"
    );
}
