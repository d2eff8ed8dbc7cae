// The app manifest lists every command, so capabilities can grant each one by name
// and the UI gets only what it uses.
const COMMANDS: &[&str] = &[
    "app_info",
    "opened_documents",
    "watch_opened_documents",
    "watch_drops",
    "update_settings",
    "health",
    "agent_info",
    "inspect_documents",
    "pick_documents",
    "key_status",
    "set_key",
    "delete_key",
    "preview",
    "cite",
    "cancel_cite",
    "discard_cite",
    "save_cited",
    "save_for_review",
    "save_review_list",
    "save_all_cited",
    "show_in_folder",
    "mission_preview",
    "start_mission",
    "list_missions",
    "open_mission",
    "search_missions",
    "watch_mission",
    "mission_window_looked_at",
    "mission_events",
    "mission_kinds",
    "cancel_mission",
    "reply_mission",
    "pick_attachment",
    "answer_mission",
    "mission_conversation",
    "mission_items",
    "mission_sources",
    "open_subagent",
    "search_mission",
    "export_mission",
    "cite_report",
    "handed_over_reports",
    "open_link",
    "account",
    "sign_in",
    "sign_out",
    "open_console",
];

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri-build failed");
    // The bare example (the benchmarks' floor) embeds its pages when it is compiled;
    // tauri-build watches only the app's own.
    println!("cargo:rerun-if-changed=examples/bare/www");
}
