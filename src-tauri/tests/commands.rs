//! The app's commands through Tauri's real IPC, on a mock runtime (no display):
//! the same `setup` wiring the app uses.

use tauri::Manager;
use tauri::test::{INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder};
use tauri::webview::InvokeRequest;

fn data(rel: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data")
        .join(rel)
        .display()
        .to_string()
}

fn invoke(
    webview: &tauri::WebviewWindow<MockRuntime>,
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

/// The app as `run` wires it, with the real capabilities, on the mock runtime.
fn app(dir: &std::path::Path) -> tauri::App<MockRuntime> {
    let app = casebook_app::setup(mock_builder())
        // The real context: its capabilities decide what each window may call.
        .build(tauri::generate_context!("tauri.conf.json", test = true))
        .unwrap();
    let core =
        tauri::async_runtime::block_on(casebook_app::start_core(app.handle(), dir.to_path_buf()))
            .unwrap();
    app.manage(core);
    app
}

fn window(app: &tauri::App<MockRuntime>, label: &str) -> tauri::WebviewWindow<MockRuntime> {
    tauri::WebviewWindowBuilder::new(app, label, Default::default())
        .build()
        .unwrap()
}

#[test]
fn commands_answer_through_ipc_with_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let webview = window(&app, "main");

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
    assert_eq!(
        after["testHooks"], true,
        "tests build the app with its hooks"
    );

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

/// Missions as the UI drives them: preview, start (its own window), list, open,
/// cancel and its conflict; and what a mission window may not call.
#[test]
fn missions_over_ipc_and_the_mission_window_capability() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let main = window(&app, "main");
    let spec = serde_json::json!({
        "objective": "Does urban heat raise hospital admissions?",
        "budgetCents": 1250,
        "missionType": "research",
        "budgetType": "fixed",
    });
    let preview = invoke(&main, "mission_preview", serde_json::json!({"spec": spec})).unwrap();
    assert!(
        preview
            .as_str()
            .unwrap()
            .contains("MISSION BUDGET (hard maximum): $12.50 USD"),
        "{preview}"
    );
    let bad = invoke(
        &main,
        "mission_preview",
        serde_json::json!({"spec": {"objective": " ", "budgetCents": 0, "missionType": "research", "budgetType": "fixed"}}),
    )
    .unwrap_err();
    assert_eq!(bad["code"], "invalid_input");

    let record = invoke(&main, "start_mission", serde_json::json!({"spec": spec})).unwrap();
    let id = record["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(record["status"], "running");
    assert!(
        record.get("continuationToken").is_none(),
        "the token stays out of the web view"
    );
    let label = casebook_app::windows::window_label(&id);
    let mission = app
        .get_webview_window(&label)
        .expect("the mission opens in its own window");
    let list = invoke(&main, "list_missions", serde_json::json!({})).unwrap();
    assert_eq!(list[0]["sessionId"], id.as_str());
    invoke(&main, "open_mission", serde_json::json!({"sessionId": id})).unwrap();
    let missing = invoke(
        &main,
        "open_mission",
        serde_json::json!({"sessionId": "ses_nope"}),
    )
    .unwrap_err();
    assert_eq!(missing["code"], "not_found");

    // The mission window may cancel its mission, and nothing of the main window's.
    let denied = invoke(
        &mission,
        "set_key",
        serde_json::json!({"service": "citations", "key": "k"}),
    )
    .unwrap_err();
    assert!(
        denied.as_str().is_some_and(|m| m.contains("not allowed")),
        "{denied}"
    );
    let ack = invoke(
        &mission,
        "cancel_mission",
        serde_json::json!({"sessionId": id}),
    )
    .unwrap();
    assert_eq!(ack["status"], "accepted");
    let core = app.state::<std::sync::Arc<casebook_core::app::Casebook>>();
    tauri::async_runtime::block_on(core.watch_finished(&id));
    // eve's generation A (the embedded sandbox's protocol) accepts every cancel, with or
    // without a turn running (no_active_turn came later); the window's capability allows
    // asking again. core's mission_client tests read the other answers (200, 409).
    let again = invoke(
        &mission,
        "cancel_mission",
        serde_json::json!({"sessionId": id}),
    )
    .unwrap();
    assert_eq!(again["status"], "accepted");
}

/// Citing over IPC: each job gets its id in Rust, Save all reports each file
/// (an unknown one too, without stopping), and a saved result is let go.
#[test]
fn cite_ids_come_from_rust_and_save_all_reports_each_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    // Test builds answer the folder dialog from the environment.
    unsafe { std::env::set_var("CASEBOOK_DIALOG_PATH", out.path()) };
    let app = app(dir.path());
    let main = window(&app, "main");
    let mut ids = Vec::new();
    for _ in 0..2 {
        let outcome = invoke(
            &main,
            "cite",
            serde_json::json!({
                "source": {"type": "document", "path": data("docx/long-lorem-endnote.docx")},
                "options": {"mode": "every", "minCitations": 1, "maxCitations": 2},
                // A channel as the UI passes it; its messages go to the (mock) web view.
                "onProgress": "__CHANNEL__:1",
            }),
        )
        .unwrap();
        assert!(
            outcome["summary"]["paragraphsChanged"].as_u64().unwrap() > 0,
            "{outcome}"
        );
        ids.push(outcome["jobId"].as_str().unwrap().to_owned());
    }
    assert_ne!(ids[0], ids[1], "each job has its own id");

    let reports = invoke(
        &main,
        "save_all_cited",
        // Word documents saved for review in Word, as the window's Save all does once
        // that is the choice.
        serde_json::json!({"jobIds": [ids[0], ids[1], "cite-999"], "review": true}),
    )
    .unwrap();
    let reports = reports.as_array().unwrap();
    assert_eq!(reports.len(), 3, "{reports:?}");
    let names: Vec<String> = reports[..2]
        .iter()
        .map(|r| {
            r["path"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        names,
        [
            "long-lorem-endnote (for review).docx",
            "long-lorem-endnote (for review) 2.docx"
        ]
    );
    assert_eq!(
        reports[2]["error"]["code"], "not_found",
        "an unknown job is reported, not fatal"
    );
    let core = app.state::<std::sync::Arc<casebook_core::app::Casebook>>();
    assert_eq!(core.jobs.held(), 0, "saved results are let go");
}
