//! What a document's card can say before anything is cited: the file checked and its
//! References section counted ([`inspect_documents`]), and what the service will
//! consider ([`preview_with`]). The window and the CLI both come here, so what one
//! says about a document the other says too.

use crate::citations::client::{CitationClient, Input, Preview};
use crate::citations::documents::{self, DocumentInfo};
use crate::citations::jobs::{self, CiteSource};
use crate::citations::reader;
use crate::error::Result;
use std::path::Path;

/// Checks one file as [`documents::inspect`] does and, when it can be cited, counts the
/// entries of its References section with Casebook's own reading (`Some(0)`: none), so
/// the window's card and the CLI can say so before anything is sent. Blocking.
pub fn inspect_document(path: &Path) -> DocumentInfo {
    let mut info = documents::inspect(path);
    if info.kind.is_some() {
        info.references = std::fs::File::open(path)
            .ok()
            .and_then(|f| reader::references_in(&f));
    }
    info
}

/// [`inspect_document`] for each of `paths`, in order, off the async threads.
pub async fn inspect_documents<P>(paths: Vec<P>) -> Vec<DocumentInfo>
where
    P: AsRef<Path> + Send + 'static,
{
    tokio::task::spawn_blocking(move || {
        (paths.iter())
            .flat_map(|p| in_folder(p.as_ref()))
            .map(|p| inspect_document(&p))
            .collect()
    })
    .await
    .unwrap_or_default()
}

/// The service's preview of `source` (read once from disk), in whatever shape it
/// comes; Casebook's own reading of a document when the service's fails.
pub async fn preview_with(client: &CitationClient, source: &CiteSource) -> Result<Preview> {
    match source {
        CiteSource::Document { path } => {
            let doc = jobs::read_document(path).await?;
            let input = Input::Document {
                bytes: &doc.bytes,
                kind: doc.kind,
            };
            client.preview(&input, Some(&doc.bytes)).await
        }
        CiteSource::Essay { text } => client.preview(&Input::essay(text)?, None).await,
    }
}

/// A folder stands for its Word documents and decks (a folder dropped is a queue of
/// them); anything else, or a folder with none or that cannot be listed, for itself (its
/// card says what it is).
fn in_folder(path: &Path) -> Vec<std::path::PathBuf> {
    if !path.is_dir() {
        return vec![path.to_owned()];
    }
    match crate::citations::batch::documents_in(&[path.to_owned()]) {
        Ok(found) if !found.is_empty() => found,
        _ => vec![path.to_owned()],
    }
}
