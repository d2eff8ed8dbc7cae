//! Citing, as both front ends do it: read the source once, send one cite request,
//! summarise locally what changed, and keep the result until it is saved.
//!
//! [`cite_source`] is one cite (the CLI's `casebook cite`); [`CiteJobs`] runs several
//! for the app, with ids made here, at most two at once, cancel, and the results
//! held until saved or discarded.

use crate::citations::client::{CitationClient, OutputKind, Upload, ValidOptions};
use crate::citations::documents;
use crate::citations::review::{self, ReviewCopy, list::ReviewList};
use crate::citations::summary::{self, CiteSummary};
use crate::error::{Error, ErrorCode, Result};
use crate::net::http::Progress;
use crate::paths::home_dir;
use crate::save;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use ts_rs::TS;

/// What to cite: a file on this computer, or pasted text.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[ts(tag = "type", rename_all = "camelCase")]
pub enum CiteSource {
    Document {
        #[ts(type = "string")]
        path: PathBuf,
    },
    Essay {
        text: String,
    },
}

/// Progress of one citing job.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[ts(tag = "type", rename_all = "camelCase")]
pub enum CiteProgress {
    /// Always first: the job's id, for cancel and save.
    Queued {
        #[serde(rename = "jobId")]
        #[ts(rename = "jobId")]
        job_id: String,
    },
    Sending {
        #[ts(type = "number")]
        bytes: u64,
    },
    /// Part of the document has gone: a percentage can be shown.
    Uploading {
        #[ts(type = "number")]
        sent: u64,
        #[ts(type = "number")]
        of: u64,
    },
    /// All sent; the service has been working on it this long.
    Waiting {
        #[ts(type = "number")]
        seconds: u64,
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
            Progress::Uploading { sent, of } => CiteProgress::Uploading { sent, of },
            Progress::Waiting { seconds } => CiteProgress::Waiting { seconds },
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

/// A finished cite as the UI sees it: never the document's bytes.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct CiteOutcome {
    pub job_id: String,
    pub kind: OutputKind,
    #[ts(type = "number")]
    pub size: u64,
    pub summary: CiteSummary,
    /// Set when the result is good but what changed could not be worked out.
    pub summary_note: Option<String>,
    /// A review copy for Word can be saved: a Word document, its summary read.
    pub reviewable: bool,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct SavedFile {
    pub job_id: String,
    pub path: String,
}

/// One file of a Save all: where it went, or why it did not.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct SaveReport {
    pub job_id: String,
    pub path: Option<String>,
    pub error: Option<Error>,
}

/// A cited document or text, with what changed.
pub struct Cited {
    pub source: Option<PathBuf>,
    /// The original as it was read when cited (a review copy is built from it, whatever
    /// has happened to the file since).
    pub original: Option<std::fs::File>,
    pub kind: OutputKind,
    /// The rewritten document, decoded here as it arrived: an unnamed temporary file,
    /// gone when this is dropped or the process ends, however it ends.
    pub file: std::fs::File,
    pub len: u64,
    pub summary: CiteSummary,
    pub summary_note: Option<String>,
}

impl Cited {
    /// Saves the document at `out` atomically (see [`save::write_atomic_with`]).
    pub fn save(&self, out: &Path, overwrite: bool) -> Result<()> {
        save::write_atomic_with(out, overwrite, |f| self.write_to(f))
    }

    /// Whether [`Self::write_review`] can make a review copy of it.
    pub fn reviewable(&self) -> bool {
        self.kind == OutputKind::Docx && self.original.is_some() && self.summary_note.is_none()
    }

    /// Writes the review copy (every insertion a tracked change) to `out`; for a Word
    /// document only.
    pub fn write_review(&self, out: &std::fs::File) -> Result<ReviewCopy> {
        match (&self.original, self.kind) {
            (Some(original), OutputKind::Docx) => review::write_review_copy(
                original,
                &self.file,
                &self.summary,
                &review::now_for_changes(),
                out,
            ),
            (_, OutputKind::Pptx) => Err(Error::new(
                ErrorCode::UnsupportedDocument,
                "PowerPoint has no tracked changes: save the cited copy, and the review list beside it.",
            )),
            _ => Err(Error::new(
                ErrorCode::UnsupportedDocument,
                "Tracked changes are for Word documents: save the cited text, and the review list beside it.",
            )),
        }
    }

    /// Saves the review copy at `out` atomically, as [`Self::save`] saves the cited one.
    pub fn save_review(&self, out: &Path, overwrite: bool) -> Result<ReviewCopy> {
        let pending = save::Pending::create(out)?;
        let copy = self.write_review(pending.file())?;
        pending.commit(overwrite)?;
        Ok(copy)
    }

    /// The insertions as a list, for any document.
    pub fn review_list(&self) -> ReviewList {
        review::list::review_list(&self.summary)
    }

    /// Saves the review list at `out`: CSV for a `.csv` name, else Markdown titled with
    /// the document's name.
    pub fn save_review_list(&self, out: &Path, overwrite: bool) -> Result<()> {
        let list = self.review_list();
        let csv = out
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        let text = if csv {
            list.csv()
        } else {
            let title = (self.source.as_deref())
                .and_then(Path::file_name)
                .map_or("the pasted text".into(), |n| n.to_string_lossy());
            list.markdown(&title)
        };
        save::write_atomic(out, text.as_bytes(), overwrite)
    }

    /// Copies the document to `w` a chunk at a time, reading at offsets so that two
    /// saves of one result cannot disturb each other.
    pub fn write_to(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut buf = vec![0u8; 64 * 1024];
        let mut offset = 0;
        while offset < self.len {
            let want = buf.len().min((self.len - offset) as usize);
            let n = documents::read_at_most(&self.file, offset, &mut buf[..want])?;
            if n == 0 {
                return Err(std::io::Error::other("the cited document was cut short"));
            }
            w.write_all(&buf[..n])?;
            offset += n as u64;
        }
        w.flush()
    }
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::internal(format!("A background task failed: {e}")))?
}

/// Reads the document at `path` once, bounded and checked.
pub async fn read_document(path: &Path) -> Result<documents::Document> {
    let path = path.to_owned();
    blocking(move || documents::open(&path)).await
}

/// An unnamed temporary file for a result whose destination is not known yet.
pub async fn temporary_output() -> Result<std::fs::File> {
    blocking(|| {
        tempfile::tempfile()
            .map_err(|e| Error::io("Cannot make a temporary file for the cited document", &e))
    })
    .await
}

/// One cite: exactly one request to the service, the document streamed from its file
/// and the answer decoded into `out` (empty, unnamed: see [`temporary_output`] and
/// [`save::Pending`]) as it arrives, so neither is ever in memory whole. The summary
/// comes from reading the original and the result here; if that reading fails, the
/// result is kept and the note says why.
pub async fn cite_source(
    client: &CitationClient,
    source: &CiteSource,
    options: &ValidOptions,
    progress: &(dyn Fn(Progress) + Send + Sync),
    out: std::fs::File,
) -> Result<Cited> {
    let (path, cited, summary) = match source {
        CiteSource::Document { path } => {
            let open = path.clone();
            let doc = blocking(move || documents::open_file(&open)).await?;
            let cited = client
                .cite_into(Upload::Document(&doc), options, progress, out)
                .await?;
            let (original, cited, summary) = blocking(move || {
                let summary = summary::summarize_files(&doc.file, &cited.file);
                Ok((doc.file, cited, summary))
            })
            .await?;
            (Some((path.clone(), original)), cited, summary)
        }
        CiteSource::Essay { text } => {
            let cited = client
                .cite_into(Upload::Essay(text), options, progress, out)
                .await?;
            let summary = match cited.kind {
                OutputKind::Text => documents::read_text(&cited.file, cited.len)
                    .map(|after| summary::summarize_text(text, &after)),
                _ => Err(Error::new(
                    ErrorCode::UnsupportedDocument,
                    "the service answered the text with a document",
                )),
            };
            (None, cited, summary)
        }
    };
    let (summary, summary_note) = match summary {
        Ok(s) => (s, None),
        Err(e) => (
            CiteSummary {
                paragraphs_changed: 0,
                citations_inserted: 0,
                citations_in_notes: 0,
                references_added: 0,
                changes: Vec::new(),
                new_references: Vec::new(),
            },
            Some(format!(
                "Cited, but what changed could not be read: {}",
                e.message
            )),
        ),
    };
    let (source, original) = path.unzip();
    Ok(Cited {
        source,
        original,
        kind: cited.kind,
        file: cited.file,
        len: cited.len,
        summary,
        summary_note,
    })
}

/// Cited documents waiting to be saved, and the jobs still running.
pub struct CiteJobs {
    next: AtomicU64,
    results: std::sync::Mutex<HashMap<String, Arc<Cited>>>,
    running: std::sync::Mutex<HashMap<String, tokio::task::AbortHandle>>,
    /// At most two documents at once: the service rate-limits, and the machine may be small.
    slots: Arc<tokio::sync::Semaphore>,
}

impl Default for CiteJobs {
    fn default() -> Self {
        Self {
            next: AtomicU64::new(1),
            results: Default::default(),
            running: Default::default(),
            slots: Arc::new(tokio::sync::Semaphore::new(2)),
        }
    }
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl CiteJobs {
    /// Cites `source`, telling `progress` first the job's id, then how it goes. The
    /// result stays here until saved or discarded; the answer carries only its summary.
    pub async fn run(
        &self,
        client: CitationClient,
        source: CiteSource,
        options: ValidOptions,
        progress: impl Fn(CiteProgress) + Send + Sync + 'static,
    ) -> Result<CiteOutcome> {
        let job_id = format!("cite-{}", self.next.fetch_add(1, Ordering::Relaxed));
        progress(CiteProgress::Queued {
            job_id: job_id.clone(),
        });
        let slots = self.slots.clone();
        let progress = Arc::new(progress);
        let report = progress.clone();
        let task = tokio::spawn(async move {
            // Waiting for a slot happens inside the job, so cancelling works while queued.
            let _slot = slots
                .acquire_owned()
                .await
                .map_err(|_| Error::internal("The citing queue has closed."))?;
            let out = temporary_output().await?;
            cite_source(&client, &source, &options, &move |p| report(p.into()), out).await
        });
        lock(&self.running).insert(job_id.clone(), task.abort_handle());
        let result = task.await;
        lock(&self.running).remove(&job_id);
        let cited = match result {
            Ok(r) => r?,
            Err(e) if e.is_cancelled() => {
                return Err(Error::new(ErrorCode::Cancelled, "Citing was cancelled."));
            }
            Err(e) => return Err(Error::internal(format!("Citing failed: {e}"))),
        };
        progress(CiteProgress::Summarizing);
        let outcome = CiteOutcome {
            job_id: job_id.clone(),
            kind: cited.kind,
            size: cited.len,
            summary: cited.summary.clone(),
            summary_note: cited.summary_note.clone(),
            reviewable: cited.reviewable(),
        };
        lock(&self.results).insert(job_id, Arc::new(cited));
        Ok(outcome)
    }

    /// Stops a job in flight; nothing is kept from it. False when it was not running.
    pub fn cancel(&self, job_id: &str) -> bool {
        match lock(&self.running).remove(job_id) {
            Some(handle) => {
                handle.abort();
                true
            }
            None => false,
        }
    }

    /// Cancels the job if it runs and forgets its result (the card was removed).
    pub fn discard(&self, job_id: &str) {
        self.cancel(job_id);
        lock(&self.results).remove(job_id);
    }

    /// How many results are held, waiting to be saved.
    pub fn held(&self) -> usize {
        lock(&self.results).len()
    }

    fn get(&self, job_id: &str) -> Result<Arc<Cited>> {
        lock(&self.results).get(job_id).cloned().ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                "Nothing to save for this document: cite it (again) first.",
            )
        })
    }

    /// Where the save dialog should propose to save: `<stem> (cited).<ext>` beside
    /// the original, or in the home folder for pasted text.
    pub fn suggested_path(&self, job_id: &str) -> Result<(PathBuf, OutputKind)> {
        let cited = self.get(job_id)?;
        Ok((suggested(&cited), cited.kind))
    }

    /// Saves the result at `dest` (the dialog already asked before replacing a file;
    /// the original is never replaced), then lets it go.
    pub async fn save(&self, job_id: &str, dest: PathBuf) -> Result<SavedFile> {
        let cited = self.get(job_id)?;
        save::check_destination(cited.source.as_deref(), &dest, true)?;
        let (d, c) = (dest.clone(), cited.clone());
        blocking(move || c.save(&d, true)).await?;
        lock(&self.results).remove(job_id);
        Ok(SavedFile {
            job_id: job_id.to_owned(),
            path: dest.display().to_string(),
        })
    }

    /// Where the save dialog should propose the review copy: `<stem> (for review).docx`.
    pub fn suggested_review_path(&self, job_id: &str) -> Result<PathBuf> {
        let cited = self.get(job_id)?;
        Ok(suggested_for(&cited, true))
    }

    /// Saves the review copy at `dest`, as [`Self::save`] saves the cited one.
    pub async fn save_review(&self, job_id: &str, dest: PathBuf) -> Result<SavedFile> {
        let cited = self.get(job_id)?;
        save::check_destination(cited.source.as_deref(), &dest, true)?;
        let (d, c) = (dest.clone(), cited.clone());
        blocking(move || c.save_review(&d, true)).await?;
        lock(&self.results).remove(job_id);
        Ok(SavedFile {
            job_id: job_id.to_owned(),
            path: dest.display().to_string(),
        })
    }

    /// Where the save dialog should propose the review list: `<stem>.citations.md` beside
    /// the original.
    pub fn suggested_list_path(&self, job_id: &str) -> Result<PathBuf> {
        let cited = self.get(job_id)?;
        Ok(match &cited.source {
            Some(p) => save::review_list_path(p, "md"),
            None => home_dir().join("Pasted text.citations.md"),
        })
    }

    /// Saves the review list at `dest` (CSV for a `.csv` name); the result stays held, to
    /// be saved itself.
    pub async fn save_review_list(&self, job_id: &str, dest: PathBuf) -> Result<SavedFile> {
        let cited = self.get(job_id)?;
        save::check_destination(cited.source.as_deref(), &dest, true)?;
        let d = dest.clone();
        blocking(move || cited.save_review_list(&d, true)).await?;
        Ok(SavedFile {
            job_id: job_id.to_owned(),
            path: dest.display().to_string(),
        })
    }

    /// Saves every result into `folder`, never replacing a file (a taken name gets a
    /// number, also when another program takes it meanwhile), and reports each file.
    /// With `review`, each Word document is saved as its review copy.
    pub async fn save_all(
        &self,
        job_ids: &[String],
        folder: &Path,
        review: bool,
    ) -> Result<Vec<SaveReport>> {
        if !folder.is_dir() {
            return Err(Error::invalid_input(format!(
                "{} is not a folder.",
                folder.display()
            )));
        }
        let mut reports = Vec::new();
        for job_id in job_ids {
            let saved = match self.get(job_id) {
                Ok(cited) => save_free(folder, cited, review).await,
                Err(e) => Err(e),
            };
            if saved.is_ok() {
                lock(&self.results).remove(job_id);
            }
            reports.push(match saved {
                Ok(path) => SaveReport {
                    job_id: job_id.clone(),
                    path: Some(path.display().to_string()),
                    error: None,
                },
                Err(e) => SaveReport {
                    job_id: job_id.clone(),
                    path: None,
                    error: Some(e),
                },
            });
        }
        Ok(reports)
    }
}

fn suggested(cited: &Cited) -> PathBuf {
    suggested_for(cited, false)
}

/// The name people are offered: `<stem> (cited).<ext>`, or `<stem> (for review).docx`.
fn suggested_for(cited: &Cited, review: bool) -> PathBuf {
    match &cited.source {
        Some(p) if review && cited.reviewable() => save::review_path_for_people(p),
        Some(p) => save::cited_path_for_people(p),
        None => home_dir().join("Pasted text (cited).txt"),
    }
}

/// Writes `cited` under its suggested name in `folder`, or the first free numbered one.
async fn save_free(folder: &Path, cited: Arc<Cited>, review: bool) -> Result<PathBuf> {
    let review = review && cited.reviewable();
    let name = suggested_for(&cited, review)
        .file_name()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("Cited"));
    let folder = folder.to_owned();
    blocking(move || {
        for n in 1..10_000u32 {
            let dest = save::numbered(&folder, &name, n);
            if dest.exists() {
                continue;
            }
            save::check_destination(cited.source.as_deref(), &dest, false)?;
            let saved = if review {
                cited.save_review(&dest, false).map(drop)
            } else {
                cited.save(&dest, false)
            };
            match saved {
                Ok(()) => return Ok(dest),
                // Taken between the check and the rename: try the next number.
                Err(e) if e.code == ErrorCode::InvalidInput && dest.exists() => continue,
                Err(e) => return Err(e),
            }
        }
        Err(Error::invalid_input(format!(
            "Every name like {} is taken in {}.",
            name.display(),
            folder.display()
        )))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_names_never_replace_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let name = Path::new("Report (cited).docx");
        assert_eq!(save::numbered(dir.path(), name, 1), dir.path().join(name));
        assert_eq!(
            save::numbered(dir.path(), name, 3),
            dir.path().join("Report (cited) 3.docx")
        );
    }
}
