//! Many documents cited as one queue: a few at a time, a 429 pausing every document not
//! yet sent until its `Retry-After` has passed, one failure never stopping the others.

use crate::citations::client::{CitationClient, ValidOptions};
use crate::citations::jobs::{CiteSource, Cited, cite_source, temporary_output};
use crate::error::{Error, Result};
use crate::net::http::Progress;
use futures_util::StreamExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::time::Instant;

/// The most documents cited at once: more only queue at the service's rate limit.
pub const MAX_JOBS: usize = 8;

/// The documents named by `paths`: a file as it is, a folder's `.docx` and `.pptx` (not
/// its subfolders', nor hidden or lock files like Word's `~$name.docx`), by name. A file
/// named twice is cited once.
pub fn documents_in(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path)
                .map_err(|e| Error::io(&format!("Cannot list {}", path.display()), &e))?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && is_citable_name(p))
                .collect();
            found.sort();
            out.extend(found);
        } else {
            out.push(path.clone());
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())));
    Ok(out)
}

fn is_citable_name(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let ext = p
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    !name.starts_with('.')
        && !name.starts_with("~$")
        && matches!(ext.as_deref(), Some("docx" | "pptx"))
}

/// A queue-wide pause: the latest moment any 429 asked the queue to wait until.
#[derive(Clone, Default)]
pub struct Pause(Arc<Mutex<Option<Instant>>>);

impl Pause {
    /// A 429 asked for `seconds`: nothing new starts before then.
    pub fn hold(&self, seconds: u64) {
        let until = Instant::now() + std::time::Duration::from_secs(seconds);
        let mut at = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if at.is_none_or(|t| t < until) {
            *at = Some(until);
        }
    }

    /// Waits out the pause, however often it is lengthened meanwhile.
    pub async fn wait(&self) {
        loop {
            let until = *self.0.lock().unwrap_or_else(|p| p.into_inner());
            match until {
                Some(t) if t > Instant::now() => tokio::time::sleep_until(t).await,
                _ => return,
            }
        }
    }
}

/// One document of the queue, done: where it was in the list, and how it went.
pub struct Done {
    pub index: usize,
    pub path: PathBuf,
    pub result: Result<Cited>,
}

/// Cites each of `paths`, `jobs` at a time (1 to [`MAX_JOBS`]), telling `done` about
/// each as it finishes, in the order they finish. A 429 to any one pauses the start of
/// every other until its `Retry-After` has passed; `rate_limited` hears of it.
pub async fn cite_each(
    client: &CitationClient,
    paths: Vec<PathBuf>,
    options: &ValidOptions,
    jobs: usize,
    rate_limited: impl Fn(u64) + Send + Sync,
    mut done: impl FnMut(Done),
) {
    let pause = Pause::default();
    let rate_limited = &rate_limited;
    let pause = &pause;
    let cite_one = |(index, path): (usize, PathBuf)| async move {
        pause.wait().await;
        let progress = move |p: Progress| {
            if let Progress::RateLimited { seconds, .. } = p {
                pause.hold(seconds);
                rate_limited(seconds);
            }
        };
        let source = CiteSource::Document { path: path.clone() };
        let result = match temporary_output().await {
            Ok(out) => cite_source(client, &source, options, &progress, out).await,
            Err(e) => Err(e),
        };
        Done {
            index,
            path,
            result,
        }
    };
    let mut finished = futures_util::stream::iter(paths.into_iter().enumerate())
        .map(cite_one)
        .buffer_unordered(jobs.clamp(1, MAX_JOBS));
    while let Some(d) = finished.next().await {
        done(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_gives_its_documents_by_name_and_a_file_named_twice_is_cited_once() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "b.pptx",
            "a.docx",
            "~$a.docx",
            ".hidden.docx",
            "notes.txt",
            "C.DOCX",
        ] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        std::fs::create_dir(dir.path().join("sub.docx")).unwrap();
        let a = dir.path().join("a.docx");
        let got = documents_in(&[dir.path().to_owned(), a.clone()]).unwrap();
        let names: Vec<_> = got
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["C.DOCX", "a.docx", "b.pptx"]);
    }

    #[test]
    fn a_pause_is_only_ever_lengthened() {
        let pause = Pause::default();
        pause.hold(5);
        let five = pause.0.lock().unwrap().unwrap();
        pause.hold(2);
        assert_eq!(pause.0.lock().unwrap().unwrap(), five);
        pause.hold(60);
        assert!(pause.0.lock().unwrap().unwrap() > five);
    }
}
