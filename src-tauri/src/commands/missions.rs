//! Missions: the composer's preview, start, the history, a mission's window and its
//! live channel, cancel, export, and links to sources.

use crate::dialog;
use crate::missions::{self, MissionUpdate, Watchers};
use crate::state::{AppState, BackendMode};
use casebook_core::missions::{CancelAck, MissionSpec};
use casebook_core::store::MissionRecord;
use casebook_core::{Error, ErrorCode, save, transcript};
use serde::Deserialize;
use std::path::PathBuf;
use tauri::ipc::Channel;
use tauri::{AppHandle, Runtime, State};
use ts_rs::TS;

/// The exact message the service will receive for `spec`, or why it cannot be sent.
#[tauri::command]
pub fn mission_preview(spec: MissionSpec) -> Result<String, Error> {
    spec.message()
}

/// The sandbox-only fields a test or benchmark asks for through the environment.
/// Only ever sent to the app's own sandbox.
fn sandbox_extensions() -> Result<serde_json::Map<String, serde_json::Value>, Error> {
    let mut extra = serde_json::Map::new();
    for (var, field) in [
        ("CASEBOOK_SANDBOX_MISSION_PACE_MS", "paceMs"),
        ("CASEBOOK_SANDBOX_MISSION_EVENTS", "events"),
    ] {
        if let Ok(raw) = std::env::var(var) {
            let n: u64 = raw.trim().parse().map_err(|_| {
                Error::invalid_input(format!("{var} must be a whole number, not {raw:?}."))
            })?;
            extra.insert(field.into(), n.into());
        }
    }
    Ok(extra)
}

/// Starts a mission, records it, and opens its window.
#[tauri::command]
pub async fn start_mission<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    watchers: State<'_, Watchers>,
    spec: MissionSpec,
) -> Result<MissionRecord, Error> {
    spec.validate()?;
    let info = state.info().await;
    let client = state.investigations().await?;
    let extra = match info.mode {
        BackendMode::Sandbox => sandbox_extensions()?,
        BackendMode::Remote => Default::default(),
    };
    let session = client.create_session_with(&spec, extra).await?;
    let record = state
        .missions
        .insert(&session, &spec, &info.base_url)
        .await?;
    watchers.ensure(&app, &record);
    if let Err(e) = missions::open_window(&app, &record) {
        // The mission runs and is in the list; the window can be opened from there.
        tracing::warn!("{}", e.message);
    }
    Ok(record)
}

/// Every mission this computer started, newest first.
#[tauri::command]
pub async fn list_missions(state: State<'_, AppState>) -> Result<Vec<MissionRecord>, Error> {
    state.missions.list().await
}

/// Opens (or brings forward) a mission's window.
#[tauri::command]
pub async fn open_mission<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    session_id: String,
) -> Result<(), Error> {
    let record = state.missions.get(&session_id).await?.ok_or_else(|| {
        Error::new(
            ErrorCode::NotFound,
            format!("No mission {session_id} in this computer's history."),
        )
    })?;
    missions::open_window(&app, &record)
}

/// Streams a mission to the calling window: what is stored, then what arrives.
#[tauri::command]
pub async fn watch_mission<R: Runtime>(
    app: AppHandle<R>,
    window: tauri::Window<R>,
    state: State<'_, AppState>,
    watchers: State<'_, Watchers>,
    session_id: String,
    on_event: Channel<MissionUpdate>,
) -> Result<(), Error> {
    watchers
        .subscribe(&app, &state.missions, &session_id, window.label(), on_event)
        .await
}

/// Asks the service to cancel the mission's active turn. The turn is cancelled
/// when `turn.cancelled` arrives on the stream, not when this returns.
#[tauri::command]
pub async fn cancel_mission(
    state: State<'_, AppState>,
    session_id: String,
) -> Result<CancelAck, Error> {
    let record = state
        .missions
        .get(&session_id)
        .await?
        .ok_or_else(|| Error::new(ErrorCode::NotFound, format!("No mission {session_id}.")))?;
    let client = missions::client_for(&state, &record).await?;
    client.cancel(&session_id).await
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename_all = "lowercase")]
pub enum ExportFormat {
    Markdown,
    Json,
}

impl ExportFormat {
    fn filter(self) -> (&'static str, &'static str) {
        match self {
            ExportFormat::Markdown => ("Markdown", "md"),
            ExportFormat::Json => ("JSON", "json"),
        }
    }
}

/// A file name from the objective's first words: letters, digits and spaces.
pub fn export_name(record: &MissionRecord, format: ExportFormat) -> String {
    let words: Vec<String> = record
        .objective
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' {
                c
            } else {
                ' '
            }
        })
        .collect::<String>()
        .split_whitespace()
        .take(8)
        .map(str::to_owned)
        .collect();
    let stem = if words.is_empty() {
        "Mission".to_owned()
    } else {
        words.join(" ")
    };
    format!("{stem} (mission).{}", format.filter().1)
}

/// The transcript in `format`, as the file's bytes.
pub async fn transcript_bytes(
    state: &AppState,
    session_id: &str,
    format: ExportFormat,
) -> Result<(MissionRecord, Vec<u8>), Error> {
    let record = state
        .missions
        .get(session_id)
        .await?
        .ok_or_else(|| Error::new(ErrorCode::NotFound, format!("No mission {session_id}.")))?;
    let events = state.missions.events(session_id, 0, u32::MAX).await?;
    let bytes = match format {
        ExportFormat::Markdown => transcript::markdown(&record, &events).into_bytes(),
        ExportFormat::Json => {
            let mut v = serde_json::to_vec_pretty(&transcript::json(&record, &events))
                .map_err(|e| Error::new(ErrorCode::Io, e.to_string()))?;
            v.push(b'\n');
            v
        }
    };
    Ok((record, bytes))
}

/// Saves the mission's transcript where the user says. `None`: cancelled.
#[tauri::command]
pub async fn export_mission(
    state: State<'_, AppState>,
    session_id: String,
    format: ExportFormat,
) -> Result<Option<String>, Error> {
    let (record, bytes) = transcript_bytes(&state, &session_id, format).await?;
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    let suggested = home.join(export_name(&record, format));
    let Some(dest) =
        dialog::save_file_titled("Export the mission transcript", &suggested, format.filter())
            .await?
    else {
        return Ok(None);
    };
    // The dialog already asked before replacing a file.
    save::check_destination(None, &dest, true)?;
    let d = dest.clone();
    tauri::async_runtime::spawn_blocking(move || save::write_atomic(&d, &bytes, true))
        .await
        .map_err(|e| Error::new(ErrorCode::Io, e.to_string()))??;
    Ok(Some(dest.display().to_string()))
}

/// Opens an http(s) link in the system browser; `CASEBOOK_OPENER` (tests) names
/// another program to hand it to.
pub fn open_external(url: &str) -> Result<(), Error> {
    let parsed = url::Url::parse(url)
        .map_err(|_| Error::invalid_input(format!("{url:?} is not a web address.")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Error::invalid_input(format!(
            "Only web links open from Casebook, not {} links.",
            parsed.scheme()
        )));
    }
    let program = std::env::var_os("CASEBOOK_OPENER").unwrap_or_else(|| {
        if cfg!(target_os = "macos") {
            "open".into()
        } else if cfg!(target_os = "windows") {
            "explorer".into()
        } else {
            "xdg-open".into()
        }
    });
    let mut child = std::process::Command::new(&program)
        .arg(parsed.as_str())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| {
            Error::io(
                &format!(
                    "Cannot open the link with {}",
                    PathBuf::from(&program).display()
                ),
                &e,
            )
        })?;
    // Reaped in the background, so no zombie is left behind.
    std::thread::spawn(move || child.wait());
    Ok(())
}

#[tauri::command]
pub fn open_link(url: String) -> Result<(), Error> {
    open_external(&url)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{invoke, mock_app};
    use casebook_core::store::MissionStatus;
    use tauri::Manager;

    /// The commands as the UI calls them: names, argument names, answers and error codes.
    #[tokio::test(flavor = "multi_thread")]
    async fn the_ui_starts_lists_opens_and_cancels_missions_over_ipc() {
        let (app, _dir) = mock_app().await;
        let main = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
            .build()
            .unwrap();
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
        assert_eq!(record["budgetCents"], 1250);
        assert!(
            record.get("continuationToken").is_none(),
            "the token stays out of the web view"
        );
        assert!(
            app.get_webview_window(&missions::window_label(&id))
                .is_some(),
            "the mission opens in its own window"
        );
        assert!(app.state::<Watchers>().is_running(&id));

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

        let ack = invoke(
            &main,
            "cancel_mission",
            serde_json::json!({"sessionId": id}),
        )
        .unwrap();
        assert_eq!(ack["status"], "accepted");
        let watchers = app.state::<Watchers>();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while watchers.is_running(&id) {
            assert!(
                std::time::Instant::now() < deadline,
                "the cancel never arrived"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let again = invoke(
            &main,
            "cancel_mission",
            serde_json::json!({"sessionId": id}),
        )
        .unwrap_err();
        assert_eq!(again["code"], "conflict", "nothing left to cancel");

        let state = app.state::<AppState>();
        let (m, md) = transcript_bytes(&state, &id, ExportFormat::Markdown)
            .await
            .unwrap();
        assert_eq!(m.status, MissionStatus::Cancelled);
        let md = String::from_utf8(md).unwrap();
        assert!(md.contains(". turn.cancelled (id "), "{md}");
        let (_, json) = transcript_bytes(&state, &id, ExportFormat::Json)
            .await
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(json["mission"]["status"], "cancelled");
        let last = json["events"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["event"], "session.waiting");
    }

    fn record(objective: &str) -> MissionRecord {
        MissionRecord {
            session_id: "ses_1".into(),
            objective: objective.into(),
            mission_type: "research".into(),
            budget_type: "fixed".into(),
            budget_cents: 100,
            base_url: "http://127.0.0.1:1".into(),
            status: MissionStatus::Running,
            created_at: 0,
            updated_at: 0,
            last_event_id: None,
            event_count: 0,
            continuation_token: None,
        }
    }

    #[test]
    fn export_names_come_from_the_objective() {
        assert_eq!(
            export_name(
                &record("Does heat/raise admissions?"),
                ExportFormat::Markdown
            ),
            "Does heat raise admissions (mission).md"
        );
        assert_eq!(
            export_name(&record("  ../../etc  "), ExportFormat::Json),
            "etc (mission).json"
        );
        assert_eq!(
            export_name(&record("?!"), ExportFormat::Json),
            "Mission (mission).json"
        );
    }

    #[test]
    fn only_web_links_open() {
        for bad in ["file:///etc/passwd", "javascript:alert(1)", "not a url"] {
            assert_eq!(
                open_external(bad).err().map(|e| e.code),
                Some(ErrorCode::InvalidInput),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_preview_is_the_core_message() {
        let spec = MissionSpec::new("Find out", 2500);
        assert_eq!(
            mission_preview(spec.clone()).unwrap(),
            spec.message().unwrap()
        );
        let bad = MissionSpec::new("", 2500);
        assert_eq!(
            mission_preview(bad).err().map(|e| e.code),
            Some(ErrorCode::InvalidInput)
        );
    }
}
