//! A writer's review of a cite. For a Word document, a copy of the service's document in
//! which every insertion is a tracked change (`w:ins`, by "Casebook"), built here from the
//! original, the cited document and the summary of what changed, never by asking the
//! service again ([`write_review_copy`]): rejecting every change gives the original's
//! text, accepting every change the cited document's. For any document, the insertions
//! as a list, in Markdown or CSV ([`list`]).

pub mod list;
mod marking;

use crate::citations::reader::{self, docx::Role};
use crate::citations::summary::{CiteSummary, new_entry_indices};
use crate::error::{Error, ErrorCode, Result};
use marking::Marker;
use serde::Serialize;
use std::io::{Seek, Write};
use ts_rs::TS;

/// Who the tracked changes are by, as Word's Review pane names them.
pub const AUTHOR: &str = "Casebook";

/// What a review copy holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct ReviewCopy {
    /// The inserted texts marked, in document order (a run split across two runs of the
    /// original's formatting counts once per piece).
    pub insertions: Vec<String>,
    /// Whole paragraphs marked as added (References entries, a new heading).
    pub paragraphs_added: u32,
}

/// Writes the review copy of `cited` (the service's Word document for `original`) to
/// `out`, marking what `summary` says citing inserted. `date` is when the changes are
/// said to be made, as `2026-12-07T09:30:00Z`.
pub fn write_review_copy(
    original: &std::fs::File,
    cited: &std::fs::File,
    summary: &CiteSummary,
    date: &str,
    out: impl Write + Seek,
) -> Result<ReviewCopy> {
    let before = reader::read_file(original)?;
    let after = reader::read_marked(cited)?;
    let mut marker = Marker::new(&after.xml, AUTHOR, date);
    let kept = |role: Role| {
        (after.kept.iter())
            .find(|k| k.role == role)
            .ok_or_else(|| mismatch(format_args!("no paragraph for {role:?}")))
    };
    for change in &summary.changes {
        let i = change.index as usize;
        let (role, text) = if i == after.doc.paragraphs.len() {
            let heading = after.doc.references_heading.as_deref().unwrap_or("");
            (Role::Heading, heading)
        } else {
            let p = (after.doc.paragraphs.get(i))
                .ok_or_else(|| mismatch(format_args!("paragraph {i}")))?;
            (Role::Body(i), p.text.as_str())
        };
        let said: String = change.after.iter().map(|s| s.text.as_str()).collect();
        if said != text {
            return Err(mismatch(format_args!("paragraph {i} reads otherwise")));
        }
        let k = kept(role)?;
        let padded = format!("{}{text}", " ".repeat(k.lead));
        let marks = &after.marks[k.para];
        let old: String = (change.after.iter())
            .filter(|s| !s.inserted)
            .map(|s| s.text.as_str())
            .collect();
        if role == Role::Body(i) && i >= before.paragraphs.len() {
            marker.mark_new_paragraph(marks, &padded);
        } else if old == change.before {
            let mut at = k.lead;
            let mut inserted = Vec::new();
            for s in &change.after {
                if s.inserted {
                    inserted.push(at..at + s.text.len());
                }
                at += s.text.len();
            }
            marker.mark_inserted(marks, &padded, &inserted);
        } else {
            marker.mark_replaced(marks, &padded, &change.before);
        }
    }
    let mut whole = 0u32;
    let mut add = |role: Role, text: &str, marker: &mut Marker<'_>| -> Result<()> {
        let k = kept(role)?;
        let padded = format!("{}{text}", " ".repeat(k.lead));
        marker.mark_new_paragraph(&after.marks[k.para], &padded);
        whole += 1;
        Ok(())
    };
    if before.references_heading.is_none()
        && let Some(h) = &after.doc.references_heading
    {
        add(Role::Heading, h, &mut marker)?;
    }
    for i in new_entry_indices(&before.references, &after.doc.references) {
        add(Role::Reference(i), &after.doc.references[i], &mut marker)?;
    }
    if marker.unmarked > 0 {
        return Err(Error::new(
            ErrorCode::UnsupportedDocument,
            format!(
                "{} of the citations sit where Word cannot track them as inserted (inside a change tracked already). Save the cited copy instead.",
                marker.unmarked
            ),
        ));
    }
    let insertions = std::mem::take(&mut marker.inserted);
    let xml = marker.finish();
    repackage(cited, &after.main, &xml, out)?;
    Ok(ReviewCopy {
        insertions,
        paragraphs_added: whole,
    })
}

/// The cited package with its main part replaced: every other entry copied as it is,
/// compressed bytes and all, in its order.
fn repackage(cited: &std::fs::File, main: &str, xml: &[u8], out: impl Write + Seek) -> Result<()> {
    let broken = |e: &dyn std::fmt::Display| {
        Error::new(
            ErrorCode::CorruptDocument,
            format!("The cited document cannot be repackaged: {e}"),
        )
    };
    let written = |e: &dyn std::fmt::Display| {
        Error::new(
            ErrorCode::Io,
            format!("The review copy cannot be written: {e}"),
        )
    };
    let mut zip = zip::ZipArchive::new(cited).map_err(|e| broken(&e))?;
    let mut w = zip::ZipWriter::new(out);
    let main = main.trim_start_matches('/');
    for i in 0..zip.len() {
        let entry = zip.by_index_raw(i).map_err(|e| broken(&e))?;
        if entry.name().eq_ignore_ascii_case(main) {
            let name = entry.name().to_owned();
            drop(entry);
            let options = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            w.start_file(name, options).map_err(|e| written(&e))?;
            w.write_all(xml).map_err(|e| written(&e))?;
        } else {
            w.raw_copy_file(entry).map_err(|e| written(&e))?;
        }
    }
    w.finish().map_err(|e| written(&e))?;
    Ok(())
}

fn mismatch(what: std::fmt::Arguments<'_>) -> Error {
    Error::internal(format!(
        "The summary does not match the cited document ({what}); no review copy was made."
    ))
}

/// Now, as a tracked change's date: UTC, to the second.
pub fn now_for_changes() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second()
    )
}
