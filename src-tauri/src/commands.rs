//! Every command the UI calls: each a one-liner over [`Casebook`] in core, plus the
//! native dialog or window it needs. Errors reach the UI as `{code, message}`.

use crate::{console, dialog, opener, windows};
use casebook_core::Error;
use casebook_core::account::AccountView;
use casebook_core::app::{AppInfo, Casebook, Health};
use casebook_core::citations::client::{CiteOptions, OutputKind, Preview};
use casebook_core::citations::documents::DocumentInfo;
use casebook_core::citations::jobs::{
    CiteOutcome, CiteProgress, CiteSource, SaveReport, SavedFile,
};
use casebook_core::desktop::launch::DropUpdate;
use casebook_core::keys::{KeyStatus, Service};
use casebook_core::missions::client::agent::AgentInfo;
use casebook_core::missions::client::attachment::{Attachment, AttachmentChoice};
use casebook_core::missions::client::{CancelAck, Delivered, FollowUp, InputResponse, MissionSpec};
use casebook_core::missions::conversation::{ConversationSummary, Source};
use casebook_core::missions::export::transcript::ExportFormat;
use casebook_core::missions::follower::MissionUpdate;
use casebook_core::missions::store::across::MissionHits;
use casebook_core::missions::store::conversations::{ConversationHits, ConversationPage};
use casebook_core::missions::store::{EventFilter, EventPage, KindCount, MissionRecord};
use casebook_core::missions::subagents::SubAgent;
use casebook_core::settings::Settings;
use std::path::PathBuf;
use std::sync::Arc;
use tauri::ipc::Channel;
use tauri::{AppHandle, Runtime, State};

type Core<'a> = State<'a, Arc<Casebook>>;

#[tauri::command]
pub async fn app_info(core: Core<'_>) -> Result<AppInfo, Error> {
    Ok(core.info().await)
}

/// Documents from the command line or a later start, not yet shown.
#[tauri::command]
pub fn opened_documents() -> Vec<String> {
    casebook_core::desktop::launch::take()
}

/// `on_more` is told whenever a later start brings documents, which the main window
/// then takes with `opened_documents`.
#[tauri::command]
pub fn watch_opened_documents<R: Runtime>(app: AppHandle<R>, on_more: Channel<()>) {
    windows::keep(&app, on_more);
}

/// `on_drop` hears of files dragged over and dropped on the main window.
#[tauri::command]
pub fn watch_drops<R: Runtime>(app: AppHandle<R>, on_drop: Channel<DropUpdate>) {
    windows::tell_of_drops(&app, on_drop);
}

#[tauri::command]
pub async fn update_settings(core: Core<'_>, settings: Settings) -> Result<AppInfo, Error> {
    core.update_settings(settings).await
}

#[tauri::command]
pub async fn health(core: Core<'_>) -> Result<Health, Error> {
    core.health().await
}

#[tauri::command]
pub async fn agent_info(core: Core<'_>) -> Result<Option<AgentInfo>, Error> {
    core.agent_info().await
}

#[tauri::command]
pub async fn inspect_documents(
    core: Core<'_>,
    paths: Vec<String>,
) -> Result<Vec<DocumentInfo>, Error> {
    Ok(core.inspect(paths).await)
}

/// One document to attach to a reply, checked (its size) but not read. `None`: cancelled.
#[tauri::command]
pub async fn pick_attachment() -> Result<Option<AttachmentChoice>, Error> {
    match dialog::pick_attachment().await? {
        Some(path) => AttachmentChoice::of(&path).map(Some),
        None => Ok(None),
    }
}

#[tauri::command]
pub async fn pick_documents(core: Core<'_>) -> Result<Vec<DocumentInfo>, Error> {
    Ok(core.inspect(dialog::pick_documents().await?).await)
}

#[tauri::command]
pub async fn key_status(core: Core<'_>) -> Result<Vec<KeyStatus>, Error> {
    core.key_status().await
}

#[tauri::command]
pub async fn set_key(core: Core<'_>, service: Service, key: String) -> Result<KeyStatus, Error> {
    core.set_key(service, &key).await
}

#[tauri::command]
pub async fn delete_key(core: Core<'_>, service: Service) -> Result<KeyStatus, Error> {
    core.delete_key(service).await
}

#[tauri::command]
pub async fn preview(core: Core<'_>, source: CiteSource) -> Result<Preview, Error> {
    core.preview(&source).await
}

/// The first message on `on_progress` is the job's id (for cancel and save).
#[tauri::command]
pub async fn cite(
    core: Core<'_>,
    source: CiteSource,
    options: CiteOptions,
    on_progress: Channel<CiteProgress>,
) -> Result<CiteOutcome, Error> {
    core.cite(source, options, move |p| drop(on_progress.send(p)))
        .await
}

#[tauri::command]
pub fn cancel_cite(core: Core<'_>, job_id: String) -> bool {
    core.jobs.cancel(&job_id)
}

#[tauri::command]
pub fn discard_cite(core: Core<'_>, job_id: String) {
    core.jobs.discard(&job_id)
}

/// Saves where the user says in the native dialog. `None`: cancelled.
#[tauri::command]
pub async fn save_cited(core: Core<'_>, job_id: String) -> Result<Option<SavedFile>, Error> {
    let (suggested, kind) = core.jobs.suggested_path(&job_id)?;
    match dialog::save_file("Save the cited copy", &suggested, kind.filter()).await? {
        Some(dest) => core.save_cited(&job_id, dest).await.map(Some),
        None => Ok(None),
    }
}

/// Saves a cited Word document for review in Word (each citation a tracked change).
/// `None`: cancelled.
#[tauri::command]
pub async fn save_for_review(core: Core<'_>, job_id: String) -> Result<Option<SavedFile>, Error> {
    let suggested = core.jobs.suggested_review_path(&job_id)?;
    let filter = OutputKind::Docx.filter();
    match dialog::save_file("Save for review in Word", &suggested, filter).await? {
        Some(dest) => core.save_for_review(&job_id, dest).await.map(Some),
        None => Ok(None),
    }
}

/// Saves the list of inserted citations, as Markdown or CSV. `None`: cancelled.
#[tauri::command]
pub async fn save_review_list(core: Core<'_>, job_id: String) -> Result<Option<SavedFile>, Error> {
    let suggested = core.jobs.suggested_list_path(&job_id)?;
    let kinds = vec!["md", "csv"];
    match dialog::save_file_of("Save the review list", &suggested, "Markdown or CSV", kinds).await?
    {
        Some(dest) => core.save_review_list(&job_id, dest).await.map(Some),
        None => Ok(None),
    }
}

/// Saves every cited document into one chosen folder (Word documents for review in Word
/// with `review`). Empty: cancelled.
#[tauri::command]
pub async fn save_all_cited(
    core: Core<'_>,
    job_ids: Vec<String>,
    review: bool,
) -> Result<Vec<SaveReport>, Error> {
    match dialog::pick_folder().await? {
        Some(folder) => core.save_all_cited(&job_ids, &folder, review).await,
        None => Ok(Vec::new()),
    }
}

#[tauri::command]
pub fn show_in_folder(path: String) -> Result<(), Error> {
    opener::reveal(&PathBuf::from(path))
}

#[tauri::command]
pub fn mission_preview(spec: MissionSpec) -> Result<String, Error> {
    spec.message()
}

/// Starts a mission, records it, and opens its window.
#[tauri::command]
pub async fn start_mission<R: Runtime>(
    app: AppHandle<R>,
    core: Core<'_>,
    spec: MissionSpec,
) -> Result<MissionRecord, Error> {
    let record = core.start_mission(&spec).await?;
    windows::open_mission_or_log(&app, &record);
    Ok(record)
}

#[tauri::command]
pub async fn list_missions(core: Core<'_>) -> Result<Vec<MissionRecord>, Error> {
    core.list_missions().await
}

/// Opens a mission's window, at item `item` when given (a search hit).
#[tauri::command]
pub async fn open_mission<R: Runtime>(
    app: AppHandle<R>,
    core: Core<'_>,
    session_id: String,
    item: Option<u32>,
) -> Result<(), Error> {
    windows::open_mission_at(&app, &core.mission(&session_id).await?, item)
}

#[tauri::command]
pub async fn search_missions(
    core: Core<'_>,
    query: String,
    limit: u32,
) -> Result<MissionHits, Error> {
    core.search_missions(&query, limit).await
}

/// Streams a mission to the calling window: what is stored, then what arrives (the records
/// themselves only with `records`, the raw view).
#[tauri::command]
pub async fn watch_mission<R: Runtime>(
    window: tauri::Window<R>,
    core: Core<'_>,
    session_id: String,
    records: Option<bool>,
    on_event: Channel<MissionUpdate>,
) -> Result<(), Error> {
    let sink = Box::new(move |u| on_event.send(u).is_ok());
    core.watch_window(&session_id, window.label(), sink, records.unwrap_or(true))
        .await
}

/// Whether the reader looks at the calling window (focused and shown): one they do not
/// is sent what its mission's records change once a second.
#[tauri::command]
pub async fn mission_window_looked_at<R: Runtime>(
    window: tauri::Window<R>,
    core: Core<'_>,
    looked_at: bool,
) -> Result<(), Error> {
    core.window_looked_at(window.label(), looked_at).await;
    Ok(())
}

/// A page of the timeline: the window holds only what it shows.
#[tauri::command]
pub async fn mission_events(
    core: Core<'_>,
    session_id: String,
    filter: EventFilter,
    offset: Option<u64>,
    limit: u32,
) -> Result<EventPage, Error> {
    core.mission_events(&session_id, &filter, offset, limit)
        .await
}

#[tauri::command]
pub async fn mission_kinds(core: Core<'_>, session_id: String) -> Result<Vec<KindCount>, Error> {
    core.mission_kinds(&session_id).await
}

#[tauri::command]
pub async fn cancel_mission(core: Core<'_>, session_id: String) -> Result<CancelAck, Error> {
    core.cancel_mission(&session_id).await
}

#[tauri::command]
pub async fn reply_mission(
    core: Core<'_>,
    session_id: String,
    message: String,
    attachments: Option<Vec<String>>,
) -> Result<Delivered, Error> {
    let files = attachments
        .unwrap_or_default()
        .iter()
        .map(|p| Attachment::read(std::path::Path::new(p)))
        .collect::<Result<Vec<_>, _>>()?;
    let follow_up = if files.is_empty() {
        FollowUp::Message(message)
    } else {
        FollowUp::Attached(message, files)
    };
    core.follow_up_mission(&session_id, &follow_up).await
}

#[tauri::command]
pub async fn answer_mission(
    core: Core<'_>,
    session_id: String,
    answers: Vec<InputResponse>,
) -> Result<Delivered, Error> {
    core.follow_up_mission(&session_id, &FollowUp::Answers(answers))
        .await
}

#[tauri::command]
pub async fn mission_conversation(
    core: Core<'_>,
    session_id: String,
) -> Result<ConversationSummary, Error> {
    core.mission_summary(&session_id).await
}

/// A page of the conversation: the window holds only what it shows.
#[tauri::command]
pub async fn mission_items(
    core: Core<'_>,
    session_id: String,
    offset: u32,
    limit: u32,
) -> Result<ConversationPage, Error> {
    core.mission_items(&session_id, offset, limit).await
}

/// A sub-agent the mission delegated to, opened: its stream read now, its conversation.
#[tauri::command]
pub async fn open_subagent(
    core: Core<'_>,
    session_id: String,
    call_id: String,
) -> Result<SubAgent, Error> {
    core.open_subagent(&session_id, &call_id).await
}

#[tauri::command]
pub async fn mission_sources(
    core: Core<'_>,
    session_id: String,
    offset: u32,
    limit: u32,
) -> Result<Vec<Source>, Error> {
    core.mission_sources(&session_id, offset, limit).await
}

#[tauri::command]
pub async fn search_mission(
    core: Core<'_>,
    session_id: String,
    query: String,
    limit: u32,
) -> Result<ConversationHits, Error> {
    core.search_mission(&session_id, &query, limit).await
}

/// Saves the transcript where the user says. `None`: cancelled.
#[tauri::command]
pub async fn export_mission(
    core: Core<'_>,
    session_id: String,
    format: ExportFormat,
) -> Result<Option<String>, Error> {
    let (name, bytes) = core.export_mission(&session_id, format).await?;
    let suggested = casebook_core::paths::home_dir().join(name);
    let title = match format {
        ExportFormat::Docx => "Save the report as a Word document",
        _ => "Export the mission transcript",
    };
    let Some(dest) = dialog::save_file(title, &suggested, format.filter()).await? else {
        return Ok(None);
    };
    core.save_export(&dest, bytes).await?;
    Ok(Some(dest.display().to_string()))
}

/// "Cite this report": the saved Word document goes to the main window's Cite view, as
/// a document opened with the app does, and the view shows its preview.
#[tauri::command]
pub fn cite_report<R: Runtime>(
    app: AppHandle<R>,
    core: Core<'_>,
    path: String,
) -> Result<(), Error> {
    let path = core.hand_over(std::path::Path::new(&path))?;
    // The program's name first, as in any command line the launch queue reads.
    casebook_core::desktop::launch::receive(&[String::new(), path], std::path::Path::new("/"));
    windows::bring_forward(&app);
    Ok(())
}

/// Of the documents the Cite view just took, those handed over as reports.
#[tauri::command]
pub fn handed_over_reports(core: Core<'_>, paths: Vec<String>) -> Vec<String> {
    core.take_handed_over(&paths)
}

#[tauri::command]
pub fn open_link(url: String) -> Result<(), Error> {
    opener::open_url(&url)
}

/// The signed-in account, its usage and keys; signed out or expired says so.
#[tauri::command]
pub async fn account(core: Core<'_>) -> Result<AccountView, Error> {
    core.account().await
}

/// Opens the service's console to sign in; `account-changed` follows once signed in.
#[tauri::command]
pub async fn sign_in<R: Runtime>(app: AppHandle<R>, core: Core<'_>) -> Result<(), Error> {
    console::open(&app, core.inner().clone(), &core.base_url().await?)
}

#[tauri::command]
pub async fn sign_out(core: Core<'_>) -> Result<AccountView, Error> {
    core.sign_out().await
}

/// The service's console in the system browser, where keys are made.
#[tauri::command]
pub async fn open_console(core: Core<'_>) -> Result<(), Error> {
    opener::open_url(&core.base_url().await?)
}
