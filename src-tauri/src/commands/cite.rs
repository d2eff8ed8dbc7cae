//! Citing: preview (parse), cite with progress on a channel, cancel, save.

use crate::dialog;
use crate::state::AppState;
use casebook_core::citations::{CiteOptions, Input, OutputKind, Parsed};
use casebook_core::http::Progress;
use casebook_core::summary::{CiteSummary, summarize};
use casebook_core::{Error, ErrorCode, documents, save};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tauri::State;
use tauri::ipc::Channel;
use ts_rs::TS;

/// What to cite: a file on this computer, or pasted text.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[ts(tag = "type", rename_all = "camelCase")]
pub enum CiteSource {
    Document { path: String },
    Essay { text: String },
}

/// Progress of one citing job, streamed to its card.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[ts(tag = "type", rename_all = "camelCase")]
pub enum CiteProgress {
    Waiting,
    Sending {
        #[ts(type = "number")]
        bytes: u64,
    },
    RateLimited {
        #[ts(type = "number")]
        seconds: u64,
        attempt: u32,
        of: u32,
    },
    Receiving,
    Summarizing,
}

impl From<Progress> for CiteProgress {
    fn from(p: Progress) -> Self {
        match p {
            Progress::Sending { bytes } => CiteProgress::Sending { bytes },
            Progress::RateLimited {
                seconds,
                attempt,
                of,
            } => CiteProgress::RateLimited {
                seconds,
                attempt,
                of,
            },
            Progress::Receiving => CiteProgress::Receiving,
        }
    }
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct CiteOutcome {
    pub job_id: String,
    pub kind: OutputKind,
    #[ts(type = "number")]
    pub size: u64,
    pub summary: CiteSummary,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct SavedFile {
    pub job_id: String,
    pub path: String,
}

/// Cited documents waiting to be saved, and the jobs still running.
pub struct Jobs {
    results: std::sync::Mutex<HashMap<String, Finished>>,
    running: std::sync::Mutex<HashMap<String, tauri::async_runtime::JoinHandle<()>>>,
    /// At most two documents at once: the service rate-limits, and the machine may be small.
    slots: std::sync::Arc<tokio::sync::Semaphore>,
}

struct Finished {
    source: Option<PathBuf>,
    kind: OutputKind,
    bytes: Vec<u8>,
}

impl Default for Jobs {
    fn default() -> Self {
        Self::new()
    }
}

impl Jobs {
    pub fn new() -> Self {
        Self {
            results: Default::default(),
            running: Default::default(),
            slots: std::sync::Arc::new(tokio::sync::Semaphore::new(2)),
        }
    }
}

fn read_document(path: &str) -> Result<Vec<u8>, Error> {
    let info = documents::inspect(Path::new(path));
    if let Some(problem) = info.problem {
        return Err(problem);
    }
    std::fs::read(path).map_err(|e| Error::io("Cannot read the file", &e))
}

async fn parse_source(state: &AppState, source: &CiteSource) -> Result<Parsed, Error> {
    let client = state.citations().await?;
    match source {
        CiteSource::Document { path } => {
            let path = path.clone();
            let bytes = tauri::async_runtime::spawn_blocking(move || read_document(&path))
                .await
                .map_err(|e| Error::new(ErrorCode::Io, e.to_string()))??;
            client.parse(&Input::document(&bytes)?, &|_| {}).await
        }
        CiteSource::Essay { text } => client.parse(&Input::essay(text)?, &|_| {}).await,
    }
}

/// The preview: what the service will consider, before anything is cited.
#[tauri::command]
pub async fn preview(state: State<'_, AppState>, source: CiteSource) -> Result<Parsed, Error> {
    parse_source(&state, &source).await
}

/// Cites one document or text; progress goes to `on_progress`. The result stays in
/// the app until saved; the web view gets only the summary.
#[tauri::command]
pub async fn cite(
    state: State<'_, AppState>,
    jobs: State<'_, Jobs>,
    job_id: String,
    source: CiteSource,
    options: CiteOptions,
    on_progress: Channel<CiteProgress>,
) -> Result<CiteOutcome, Error> {
    options.validate()?;
    let client = state.citations().await?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let task_source = source.clone();
    let progress = on_progress.clone();
    let _ = on_progress.send(CiteProgress::Waiting);
    let slots = jobs.slots.clone();
    let handle = tauri::async_runtime::spawn(async move {
        // Waiting for a slot happens inside the job, so cancelling works while queued.
        let Ok(_slot) = slots.acquire_owned().await else {
            return;
        };
        let report = move |p: Progress| {
            let _ = progress.send(p.into());
        };
        let result = async {
            let (bytes, path) = match &task_source {
                CiteSource::Document { path } => {
                    let p = path.clone();
                    let bytes = tauri::async_runtime::spawn_blocking(move || read_document(&p))
                        .await
                        .map_err(|e| Error::new(ErrorCode::Io, e.to_string()))??;
                    (bytes, Some(PathBuf::from(path)))
                }
                CiteSource::Essay { text } => (text.clone().into_bytes(), None),
            };
            let input = match &path {
                Some(_) => Input::document(&bytes)?,
                None => Input::essay(std::str::from_utf8(&bytes).unwrap_or_default())?,
            };
            let before = client.parse(&input, &report).await?;
            let cited = client.cite(&input, &options, &report).await?;
            report(Progress::Receiving);
            let after_input = match cited.kind {
                OutputKind::Text => {
                    Input::essay(std::str::from_utf8(&cited.bytes).unwrap_or_default())?
                }
                _ => Input::document(&cited.bytes)?,
            };
            let after = client.parse(&after_input, &|_| {}).await?;
            Ok::<_, Error>((path, cited, summarize(&before, &after)))
        }
        .await;
        let _ = tx.send(result);
    });
    jobs.running.lock().unwrap().insert(job_id.clone(), handle);
    let result = rx.await;
    jobs.running.lock().unwrap().remove(&job_id);
    let (source_path, cited, summary) = match result {
        Ok(r) => r?,
        Err(_) => return Err(Error::new(ErrorCode::Cancelled, "Citing was cancelled.")),
    };
    let _ = on_progress.send(CiteProgress::Summarizing);
    let outcome = CiteOutcome {
        job_id: job_id.clone(),
        kind: cited.kind,
        size: cited.bytes.len() as u64,
        summary,
    };
    jobs.results.lock().unwrap().insert(
        job_id,
        Finished {
            source: source_path,
            kind: cited.kind,
            bytes: cited.bytes,
        },
    );
    Ok(outcome)
}

/// Stops a job in flight; nothing is kept from it.
#[tauri::command]
pub fn cancel_cite(jobs: State<'_, Jobs>, job_id: String) -> bool {
    match jobs.running.lock().unwrap().remove(&job_id) {
        Some(handle) => {
            handle.abort();
            true
        }
        None => false,
    }
}

fn suggested_path(f: &Finished) -> PathBuf {
    match &f.source {
        Some(p) => save::cited_path_for_people(p),
        None => dirs_home().join("Pasted text (cited).txt"),
    }
}

fn dirs_home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn filter_for(kind: OutputKind) -> (&'static str, &'static str) {
    match kind {
        OutputKind::Docx => ("Word document", "docx"),
        OutputKind::Pptx => ("PowerPoint presentation", "pptx"),
        OutputKind::Text => ("Text", "txt"),
    }
}

/// Saves one cited document where the user says (the native save dialog,
/// proposing `<stem> (cited).<ext>` beside the original). `None`: cancelled.
#[tauri::command]
pub async fn save_cited(jobs: State<'_, Jobs>, job_id: String) -> Result<Option<SavedFile>, Error> {
    let (suggested, kind, source) = {
        let results = jobs.results.lock().unwrap();
        let f = results
            .get(&job_id)
            .ok_or_else(|| Error::new(ErrorCode::NotFound, "Cite the document first."))?;
        (suggested_path(f), f.kind, f.source.clone())
    };
    let Some(dest) = dialog::save_file(&suggested, filter_for(kind)).await? else {
        return Ok(None);
    };
    // The dialog already asked before replacing a file; the original is never replaced.
    save::check_destination(source.as_deref(), &dest, true)?;
    let bytes = jobs
        .results
        .lock()
        .unwrap()
        .get(&job_id)
        .map(|f| f.bytes.clone())
        .unwrap_or_default();
    let d = dest.clone();
    tauri::async_runtime::spawn_blocking(move || save::write_atomic(&d, &bytes, true))
        .await
        .map_err(|e| Error::new(ErrorCode::Io, e.to_string()))??;
    Ok(Some(SavedFile {
        job_id,
        path: dest.display().to_string(),
    }))
}

/// Saves every cited document into one chosen folder, never replacing a file:
/// a taken name gets a number.
#[tauri::command]
pub async fn save_all_cited(
    jobs: State<'_, Jobs>,
    job_ids: Vec<String>,
) -> Result<Vec<SavedFile>, Error> {
    let Some(folder) = dialog::pick_folder().await? else {
        return Ok(Vec::new());
    };
    if !folder.is_dir() {
        return Err(Error::invalid_input(format!(
            "{} is not a folder.",
            folder.display()
        )));
    }
    let mut saved = Vec::new();
    for job_id in job_ids {
        let Some((name, bytes, source)) = jobs.results.lock().unwrap().get(&job_id).map(|f| {
            let name = suggested_path(f)
                .file_name()
                .map(|n| n.to_owned())
                .unwrap_or_default();
            (PathBuf::from(name), f.bytes.clone(), f.source.clone())
        }) else {
            continue;
        };
        let dest = free_name(&folder, &name);
        save::check_destination(source.as_deref(), &dest, false)?;
        let d = dest.clone();
        tauri::async_runtime::spawn_blocking(move || save::write_atomic(&d, &bytes, false))
            .await
            .map_err(|e| Error::new(ErrorCode::Io, e.to_string()))??;
        saved.push(SavedFile {
            job_id,
            path: dest.display().to_string(),
        });
    }
    Ok(saved)
}

/// `name` in `folder`, or `stem 2.ext`, `stem 3.ext`… when taken.
fn free_name(folder: &Path, name: &Path) -> PathBuf {
    let first = folder.join(name);
    if !first.exists() {
        return first;
    }
    let stem = name
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = name
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    (2..)
        .map(|n| folder.join(format!("{stem} {n}{ext}")))
        .find(|p| !p.exists())
        .expect("some name is free")
}

/// Opens the folder holding `path` in the file manager.
#[tauri::command]
pub fn show_in_folder(path: String) -> Result<(), Error> {
    let path = PathBuf::from(path);
    let dir = path
        .parent()
        .filter(|d| d.is_dir())
        .ok_or_else(|| Error::new(ErrorCode::NotFound, "The folder is gone."))?;
    #[cfg(target_os = "linux")]
    let mut cmd = std::process::Command::new("xdg-open");
    #[cfg(target_os = "macos")]
    let mut cmd = std::process::Command::new("open");
    #[cfg(target_os = "windows")]
    let mut cmd = std::process::Command::new("explorer");
    cmd.arg(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
        .map_err(|e| Error::io("Cannot open the file manager", &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_names_never_replace_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let name = Path::new("Report (cited).docx");
        assert_eq!(
            free_name(dir.path(), name),
            dir.path().join("Report (cited).docx")
        );
        std::fs::write(dir.path().join("Report (cited).docx"), b"x").unwrap();
        std::fs::write(dir.path().join("Report (cited) 2.docx"), b"x").unwrap();
        assert_eq!(
            free_name(dir.path(), name),
            dir.path().join("Report (cited) 3.docx")
        );
    }
}
