//! What a document the citation service returns must pass before it is saved: every
//! check a dropped one passes ([`documents::sniff`]), and then every entry inflated,
//! counting the bytes that come out rather than trusting the sizes its zip headers
//! declare, which a broken or hostile server can set to anything. Reading stops as the
//! count crosses [`MAX_INFLATED_BYTES`]; each entry's checksum is checked on the way,
//! so a package cut or garbled in transit is refused too.
//!
//! A dropped document needs no such pass: Casebook only ever inflates the parts it
//! reads, and the reader counts those the same way (`reader::Package`).

use super::documents::{self, DocKind, MAX_INFLATED_BYTES};
use crate::error::{Error, ErrorCode, Result};
use std::fs::File;
use std::io::{Cursor, Read, Seek};

/// [`documents::sniff`] of returned bytes, then their real inflation counted.
pub fn check(bytes: &[u8]) -> Result<DocKind> {
    let kind = documents::sniff(bytes)?;
    inflate_all(Cursor::new(bytes), MAX_INFLATED_BYTES)?;
    Ok(kind)
}

/// [`check`] of a returned document written to `file` (`len` bytes).
pub fn check_file(file: &File, len: u64) -> Result<DocKind> {
    let kind = documents::sniff_file(file, len)?;
    let mut reader = file;
    reader
        .rewind()
        .map_err(|e| Error::io("Cannot read the cited document", &e))?;
    inflate_all(std::io::BufReader::new(reader), MAX_INFLATED_BYTES)?;
    Ok(kind)
}

/// Inflates every entry of the package in `source`, all of them together bounded by
/// `bound` real bytes; how many came out.
pub fn inflate_all(source: impl Read + Seek, bound: u64) -> Result<u64> {
    let mut archive = zip::ZipArchive::new(source).map_err(corrupt)?;
    let mut total = 0u64;
    for i in 0..archive.len() {
        let entry = archive.by_index(i).map_err(corrupt)?;
        let name = entry.name().to_owned();
        let left = bound - total;
        // One byte past what is left tells "reached the bound" from "crossed it".
        let n = std::io::copy(&mut entry.take(left + 1), &mut std::io::sink())
            .map_err(|e| corrupt(format_args!("{name}: {e}")))?;
        if n > left {
            return Err(Error::new(
                ErrorCode::UnsafeDocument,
                format!(
                    "This document unpacks to more than {} MB (its parts say they are smaller than they are), more than any real document does: it is what a zip bomb looks like.",
                    bound / (1024 * 1024)
                ),
            ));
        }
        total += n;
    }
    Ok(total)
}

fn corrupt(detail: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::CorruptDocument,
        format!("The document cannot be unpacked ({detail}). It is damaged or incomplete."),
    )
}
