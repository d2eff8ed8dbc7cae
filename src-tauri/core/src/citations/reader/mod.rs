//! Casebook's own reading of a .docx or .pptx: its paragraphs and References
//! section, so a cite can be summarized from the original and the result alone,
//! with no second request to the service.
//!
//! It reads what Word and PowerPoint write, not only what our sandbox writes, and
//! it takes untrusted bytes: every part is inflated under a cap, DTD entities are
//! never expanded (a DTD is refused outright), and no input makes it panic.

use crate::citations::documents::Paragraph;
use crate::citations::documents::{self, DocKind};
use crate::error::{Error, ErrorCode, Result};
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::name::{Namespace, ResolveResult};
use quick_xml::reader::NsReader;
use serde::Serialize;
use std::collections::HashMap;
use std::io::{Cursor, Read, Seek};

/// No part of a real document comes near this; a zip bomb does.
pub const MAX_PART_BYTES: u64 = 64 * 1024 * 1024;
/// All parts together, so a deck of many bombs is refused too.
pub const MAX_TOTAL_BYTES: u64 = 256 * 1024 * 1024;
/// Far above any real document, low enough to bound memory.
pub const MAX_PARAGRAPHS: usize = 1_000_000;

/// What a document says, read locally.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalDocument {
    pub kind: DocKind,
    /// Non-blank body paragraphs in reading order, `index` counting from 0.
    pub paragraphs: Vec<Paragraph>,
    pub references_heading: Option<String>,
    pub references: Vec<String>,
}

/// Reads a .docx or .pptx.
pub fn read(bytes: &[u8]) -> Result<LocalDocument> {
    let (kind, main) = documents::sniff_main(bytes)?;
    read_package(Package::open(Cursor::new(bytes))?, kind, &main)
}

/// Reads a .docx or .pptx from an open file, holding only its zip directory and the
/// parts read, never the whole file.
pub fn read_file(file: &std::fs::File) -> Result<LocalDocument> {
    let len = file
        .metadata()
        .map_err(|e| Error::io("Cannot read the document", &e))?
        .len();
    let (kind, main) = documents::sniff_file_main(file, len)?;
    read_package(Package::open(file)?, kind, &main)
}

/// Reads the Word document in `file` with where its text stands (a review copy's
/// reading); a presentation is refused.
pub(crate) fn read_marked(file: &std::fs::File) -> Result<docx::MarkedDocx> {
    let len = file
        .metadata()
        .map_err(|e| Error::io("Cannot read the document", &e))?
        .len();
    let (kind, main) = documents::sniff_file_main(file, len)?;
    if kind != DocKind::Docx {
        return Err(Error::new(
            ErrorCode::UnsupportedDocument,
            "PowerPoint has no tracked changes: a review copy is made of Word documents only.",
        ));
    }
    docx::read_marked_docx(&mut Package::open(file)?, &main)
}

/// `main`: the main part, as the package's relationships name it.
fn read_package<R: Read + Seek>(
    mut pkg: Package<R>,
    kind: DocKind,
    main: &str,
) -> Result<LocalDocument> {
    match kind {
        DocKind::Docx => read_docx(&mut pkg, main),
        DocKind::Pptx => read_pptx(&mut pkg, main),
    }
}

/// "References", "Bibliography", "Works Cited" or "Sources", in any case, maybe
/// with a trailing colon.
/// How many entries the References section of the document in `file` has: `Some(0)`
/// when it has none; `None` when the file cannot be read as a document.
pub fn references_in(file: &std::fs::File) -> Option<u32> {
    let doc = read_file(file).ok()?;
    // A bibliography needs no heading to be the References section.
    Some(u32::try_from(doc.references.len()).unwrap_or(u32::MAX))
}

pub fn is_references_heading(text: &str) -> bool {
    // A heading a service cited ("References (Smith, 2020)") is still the heading.
    let mut bare = String::with_capacity(text.len());
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' if depth > 0 => depth -= 1,
            _ if depth == 0 => bare.push(c),
            _ => {}
        }
    }
    let t = bare.trim().trim_end_matches(['.', ':']).trim_end();
    [
        "references",
        "reference list",
        "bibliography",
        "works cited",
        "sources",
    ]
    .iter()
    .any(|w| t.eq_ignore_ascii_case(w))
}

fn corrupt(detail: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::CorruptDocument,
        format!(
            "The document cannot be read ({detail}). It may be damaged or incompletely downloaded."
        ),
    )
}

// ---- the package ----

struct Package<R> {
    zip: zip::ZipArchive<R>,
    /// Bytes still allowed to be inflated.
    budget: u64,
}

impl<R: Read + Seek> Package<R> {
    fn open(source: R) -> Result<Self> {
        let zip = zip::ZipArchive::new(source).map_err(corrupt)?;
        Ok(Self {
            zip,
            budget: MAX_TOTAL_BYTES,
        })
    }

    /// A part's bytes, or `None` when the package has no such part. Part names
    /// are case-insensitive in OPC, zip entry names are not.
    fn read(&mut self, name: &str) -> Result<Option<Vec<u8>>> {
        let name = name.trim_start_matches('/');
        let entry = if self.zip.index_for_name(name).is_some() {
            name.to_owned()
        } else {
            match self.zip.file_names().find(|n| n.eq_ignore_ascii_case(name)) {
                Some(n) => n.to_owned(),
                None => return Ok(None),
            }
        };
        let file = self.zip.by_name(&entry).map_err(corrupt)?;
        let cap = MAX_PART_BYTES.min(self.budget);
        let mut out = Vec::new();
        // One byte past the cap tells a part at the cap from one beyond it.
        file.take(cap + 1)
            .read_to_end(&mut out)
            .map_err(|e| corrupt(format_args!("{name}: {e}")))?;
        if out.len() as u64 > cap {
            return Err(Error::new(
                ErrorCode::TooLarge,
                format!(
                    "The document's {name} inflates to more than {} MB; no real document does. Casebook will not read it.",
                    cap / (1024 * 1024)
                ),
            ));
        }
        self.budget -= out.len() as u64;
        Ok(Some(out))
    }

    fn require(&mut self, name: &str) -> Result<Vec<u8>> {
        self.read(name)?
            .ok_or_else(|| corrupt(format_args!("{name} is missing")))
    }
}

// ---- XML ----

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ns {
    W,
    A,
    P,
    R,
    Mc,
    Rels,
    Other,
}

fn ns_of(r: &ResolveResult<'_>) -> Ns {
    let ResolveResult::Bound(Namespace(uri)) = r else {
        return Ns::Other;
    };
    // Transitional and Strict OOXML name the same vocabularies differently.
    match *uri {
        b"http://schemas.openxmlformats.org/wordprocessingml/2006/main"
        | b"http://purl.oclc.org/ooxml/wordprocessingml/main" => Ns::W,
        b"http://schemas.openxmlformats.org/drawingml/2006/main"
        | b"http://purl.oclc.org/ooxml/drawingml/main" => Ns::A,
        b"http://schemas.openxmlformats.org/presentationml/2006/main"
        | b"http://purl.oclc.org/ooxml/presentationml/main" => Ns::P,
        b"http://schemas.openxmlformats.org/officeDocument/2006/relationships"
        | b"http://purl.oclc.org/ooxml/officeDocument/relationships" => Ns::R,
        b"http://schemas.openxmlformats.org/markup-compatibility/2006" => Ns::Mc,
        b"http://schemas.openxmlformats.org/package/2006/relationships" => Ns::Rels,
        _ => Ns::Other,
    }
}

/// An element's name and a way to its attributes.
struct El<'x, 'i> {
    ns: Ns,
    local: &'x [u8],
    start: &'x BytesStart<'i>,
    reader: &'x NsReader<&'i [u8]>,
    /// Where its start tag stands in the part, by byte (the whole element when empty).
    tag: std::ops::Range<usize>,
}

impl El<'_, '_> {
    fn is(&self, ns: Ns, local: &str) -> bool {
        self.ns == ns && self.local == local.as_bytes()
    }

    /// The value of the attribute `local` in namespace `ns` (`None` for an
    /// unprefixed attribute). Values with entities we do not know are skipped.
    fn attr(&self, ns: Option<Ns>, local: &str) -> Option<String> {
        self.start
            .attributes()
            .with_checks(false)
            .flatten()
            .find(|a| {
                let (r, l) = self.reader.resolve_attribute(a.key);
                let got = match r {
                    ResolveResult::Unbound => None,
                    other => Some(ns_of(&other)),
                };
                l.as_ref() == local.as_bytes() && got == ns
            })
            .and_then(|a| a.unescape_value().ok().map(|v| v.into_owned()))
    }
}

enum Ev<'x, 'i> {
    Open(El<'x, 'i>),
    /// The element opened last ends; its end tag ends at this byte.
    Close(usize),
    Text(&'x str),
}

/// Walks a part's elements and text, refusing a DTD. Entity references other than
/// the five XML predefines and character references are dropped, never expanded.
fn walk(xml: &[u8], part: &str, mut f: impl FnMut(Ev<'_, '_>) -> Result<()>) -> Result<()> {
    let bad = |e: &dyn std::fmt::Display| corrupt(format_args!("{part}: {e}"));
    let mut reader = NsReader::from_reader(xml);
    reader.config_mut().expand_empty_elements = false;
    loop {
        let from = reader.buffer_position() as usize;
        let event = reader.read_resolved_event().map_err(|e| bad(&e));
        let (res, event) = event?;
        let ns = ns_of(&res);
        let to = reader.buffer_position() as usize;
        match event {
            Event::Start(ref s) | Event::Empty(ref s) => {
                let empty = matches!(event, Event::Empty(_));
                let name = s.name();
                f(Ev::Open(El {
                    ns,
                    local: name.local_name().into_inner(),
                    start: s,
                    reader: &reader,
                    tag: from..to,
                }))?;
                if empty {
                    f(Ev::Close(to))?;
                }
            }
            Event::End(_) => f(Ev::Close(to))?,
            Event::Text(t) => {
                let text = t.xml10_content().map_err(|e| bad(&e))?;
                f(Ev::Text(&text))?;
            }
            Event::CData(c) => {
                let text = c.decode().map_err(|e| bad(&e))?;
                f(Ev::Text(&text))?;
            }
            Event::GeneralRef(r) => {
                if let Some(c) = resolve_ref(&r) {
                    let mut buf = [0u8; 4];
                    f(Ev::Text(c.encode_utf8(&mut buf)))?;
                }
            }
            Event::DocType(_) => {
                return Err(Error::new(
                    ErrorCode::UnsafeDocument,
                    format!(
                        "This document's {part} declares an XML document type (DTD), which Word and PowerPoint never write. Casebook will not read it; open it in Word or PowerPoint and save a fresh copy."
                    ),
                ));
            }
            Event::Eof => return Ok(()),
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
        }
    }
}

fn resolve_ref(r: &BytesRef<'_>) -> Option<char> {
    if r.is_char_ref() {
        return r.resolve_char_ref().ok().flatten();
    }
    match &**r {
        b"lt" => Some('<'),
        b"gt" => Some('>'),
        b"amp" => Some('&'),
        b"apos" => Some('\''),
        b"quot" => Some('"'),
        _ => None,
    }
}

// ---- relationships ----

struct Rel {
    id: String,
    rel_type: String,
    /// The target part's name in the package, for internal targets.
    part: Option<String>,
}

/// The relationships part for `part` (`ppt/presentation.xml` →
/// `ppt/_rels/presentation.xml.rels`).
fn rels_part_for(part: &str) -> String {
    match part.rsplit_once('/') {
        Some((dir, file)) => format!("{dir}/_rels/{file}.rels"),
        None => format!("_rels/{part}.rels"),
    }
}

/// `target` relative to the folder of `source`, with `.` and `..` resolved.
fn resolve_target(source: &str, target: &str) -> Option<String> {
    let target = target.split(['#', '?']).next().unwrap_or_default();
    let mut parts: Vec<&str> = if target.starts_with('/') {
        Vec::new()
    } else {
        source.split('/').collect()
    };
    if !target.starts_with('/') {
        parts.pop();
    }
    for seg in target.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

fn read_rels<R: Read + Seek>(pkg: &mut Package<R>, source: &str) -> Result<Vec<Rel>> {
    let part = rels_part_for(source);
    let Some(xml) = pkg.read(&part)? else {
        return Ok(Vec::new());
    };
    let mut rels = Vec::new();
    walk(&xml, &part, |ev| {
        if let Ev::Open(e) = ev
            && e.local == b"Relationship"
            && matches!(e.ns, Ns::Rels | Ns::Other)
        {
            let external = e
                .attr(None, "TargetMode")
                .is_some_and(|m| m.eq_ignore_ascii_case("external"));
            let target = e.attr(None, "Target").unwrap_or_default();
            rels.push(Rel {
                id: e.attr(None, "Id").unwrap_or_default(),
                rel_type: e.attr(None, "Type").unwrap_or_default(),
                part: if external {
                    None
                } else {
                    resolve_target(source, &target)
                },
            });
        }
        Ok(())
    })?;
    Ok(rels)
}

// ---- paragraphs being read ----

struct Building {
    text: String,
    style: Option<String>,
    /// A paragraph-level outline level (Word's "this is a heading" without a style).
    outline: bool,
    /// Document-order position of the paragraph's start tag.
    seq: u64,
    /// The element holding the paragraph, as an index into `Containers`.
    container: usize,
}

/// Elements that directly hold paragraphs (a body, a cell, a content control), as
/// the positions of their start and end tags: a References list inside one ends
/// with it.
type Containers = Vec<(u64, u64)>;

fn too_many() -> Error {
    Error::new(
        ErrorCode::TooLarge,
        format!(
            "The document has more than {MAX_PARAGRAPHS} paragraphs; Casebook will not read it."
        ),
    )
}

// ---- Word ----

pub(crate) mod docx;
pub(crate) mod marks;
mod pptx;

use docx::read_docx;
use pptx::read_pptx;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_resolve_against_the_source_folder() {
        assert_eq!(
            resolve_target("ppt/presentation.xml", "slides/slide1.xml").as_deref(),
            Some("ppt/slides/slide1.xml")
        );
        assert_eq!(
            resolve_target("ppt/slides/slide1.xml", "../slideLayouts/l.xml").as_deref(),
            Some("ppt/slideLayouts/l.xml")
        );
        assert_eq!(
            resolve_target("ppt/presentation.xml", "/ppt/slides/slide2.xml").as_deref(),
            Some("ppt/slides/slide2.xml")
        );
        assert_eq!(resolve_target("a.xml", "../../x.xml"), None);
        assert_eq!(
            rels_part_for("ppt/presentation.xml"),
            "ppt/_rels/presentation.xml.rels"
        );
    }

    #[test]
    fn references_headings() {
        for yes in ["References", "bibliography:", " Works Cited ", "SOURCES"] {
            assert!(is_references_heading(yes), "{yes}");
        }
        for no in ["Referencesx", "The references", ""] {
            assert!(!is_references_heading(no), "{no}");
        }
    }

    #[test]
    fn empty_and_non_zip_input_are_errors() {
        assert_eq!(read(b"").unwrap_err().code, ErrorCode::EmptyFile);
        assert_eq!(read(b"hello").unwrap_err().code, ErrorCode::NotADocument);
        assert!(read(b"PK\x03\x04").is_err());
    }
}
