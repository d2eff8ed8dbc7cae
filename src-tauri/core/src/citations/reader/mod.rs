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
    Close,
    Text(&'x str),
}

/// Walks a part's elements and text, refusing a DTD. Entity references other than
/// the five XML predefines and character references are dropped, never expanded.
fn walk(xml: &[u8], part: &str, mut f: impl FnMut(Ev<'_, '_>) -> Result<()>) -> Result<()> {
    let bad = |e: &dyn std::fmt::Display| corrupt(format_args!("{part}: {e}"));
    let mut reader = NsReader::from_reader(xml);
    reader.config_mut().expand_empty_elements = false;
    loop {
        let event = reader.read_resolved_event().map_err(|e| bad(&e));
        let (res, event) = event?;
        match event {
            Event::Start(ref s) | Event::Empty(ref s) => {
                let empty = matches!(event, Event::Empty(_));
                let name = s.name();
                f(Ev::Open(El {
                    ns: ns_of(&res),
                    local: name.local_name().into_inner(),
                    start: s,
                    reader: &reader,
                }))?;
                if empty {
                    f(Ev::Close)?;
                }
            }
            Event::End(_) => f(Ev::Close)?,
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

#[derive(Clone, Copy, PartialEq, Eq)]
enum WKind {
    Para,
    PPr,
    Run,
    /// A `w:t` inside a run: its text is the document's.
    Text,
    /// A `w:instrText` inside a run: a field's instruction.
    Instr,
    Sdt,
    Other,
}

struct WFrame {
    kind: WKind,
    seq: u64,
    /// This element's slot in `Containers`, once a paragraph is found directly in it.
    container: Option<usize>,
    /// A content control holding a bibliography (`w:bibliography`, or the
    /// Bibliographies building-block gallery).
    bibliography: bool,
    /// How many paragraphs had begun when this element opened.
    first_para: usize,
}

/// Whether a field instruction makes a bibliography: Word's `BIBLIOGRAPHY`, Zotero's
/// `ADDIN ZOTERO_BIBL`, Mendeley's `ADDIN Mendeley Bibliography CSL_BIBLIOGRAPHY`,
/// EndNote's `ADDIN EN.REFLIST`.
fn is_bibliography_field(instr: &str) -> bool {
    // Only the words before a reference manager's JSON: a title in it may say anything.
    let head = instr.split('{').next().unwrap_or("").to_ascii_uppercase();
    let mut words = head.split_whitespace();
    match words.next() {
        Some("BIBLIOGRAPHY") => true,
        Some("ADDIN") => words.any(|w| w.contains("BIBL") || w == "EN.REFLIST"),
        _ => false,
    }
}

#[derive(Default)]
struct StyleInfo {
    name: Option<String>,
    outline: bool,
}

fn read_docx<R: Read + Seek>(pkg: &mut Package<R>, main: &str) -> Result<LocalDocument> {
    let xml = pkg.require(main)?;
    let styles = docx_styles(pkg, main);
    let mut body = DocxBody::default();
    walk(&xml, main, |ev| body.step(ev))?;
    Ok(body.into_document(&styles))
}

/// `word/document.xml` as far as it has been walked.
#[derive(Default)]
struct DocxBody {
    frames: Vec<WFrame>,
    /// Depth at which a subtree that is not the document's text began: deleted or
    /// moved-away text, and the Fallback copy of content Word writes twice.
    skip_from: Option<usize>,
    open: Vec<usize>,
    paras: Vec<Building>,
    containers: Containers,
    seq: u64,
    /// Complex fields open: the instruction so far and the paragraph each began in.
    fields: Vec<(String, Option<usize>)>,
    /// Paragraphs (as `first..end` of `paras`) of each bibliography field or control.
    bibliographies: Vec<(usize, usize)>,
}

impl DocxBody {
    fn step(&mut self, ev: Ev<'_, '_>) -> Result<()> {
        self.seq += 1;
        match ev {
            Ev::Open(e) => self.open_element(&e)?,
            Ev::Close => self.close_element(),
            Ev::Text(t) => self.text(t),
        }
        Ok(())
    }

    fn open_element(&mut self, e: &El<'_, '_>) -> Result<()> {
        let depth = self.frames.len();
        let parent = self.frames.last().map(|f| f.kind);
        if self.skip_from.is_none()
            && (e.is(Ns::W, "del") || e.is(Ns::W, "moveFrom") || e.is(Ns::Mc, "Fallback"))
        {
            self.skip_from = Some(depth);
        }
        let mut kind = WKind::Other;
        if self.skip_from.is_none() && e.ns == Ns::W {
            kind = self.word_element(e, parent)?;
        }
        self.frames.push(WFrame {
            kind,
            seq: self.seq,
            container: None,
            bibliography: false,
            first_para: self.paras.len(),
        });
        Ok(())
    }

    /// Fields and content controls that make a bibliography.
    fn field_element(&mut self, e: &El<'_, '_>, in_run: bool) {
        match e.local {
            b"fldChar" if in_run => match e.attr(Some(Ns::W), "fldCharType").as_deref() {
                Some("begin") => self.fields.push((String::new(), self.open.last().copied())),
                Some("end") => {
                    if let Some((instr, Some(first))) = self.fields.pop()
                        && is_bibliography_field(&instr)
                        && let Some(&last) = self.open.last()
                    {
                        self.bibliographies.push((first, last + 1));
                    }
                }
                _ => {}
            },
            b"fldSimple" => {
                if is_bibliography_field(&e.attr(Some(Ns::W), "instr").unwrap_or_default())
                    && let Some(&p) = self.open.last()
                {
                    self.bibliographies.push((p, p + 1));
                }
            }
            b"bibliography" | b"docPartGallery" => {
                let gallery = e.local == b"docPartGallery";
                if (!gallery || e.attr(Some(Ns::W), "val").as_deref() == Some("Bibliographies"))
                    && let Some(f) = self.frames.iter_mut().rev().find(|f| f.kind == WKind::Sdt)
                {
                    f.bibliography = true;
                }
            }
            _ => {}
        }
    }

    /// What a WordprocessingML element in the text is, noting what it adds to the open
    /// paragraph.
    fn word_element(&mut self, e: &El<'_, '_>, parent: Option<WKind>) -> Result<WKind> {
        let in_run = parent == Some(WKind::Run);
        let in_props = parent == Some(WKind::PPr);
        self.field_element(e, in_run);
        match e.local {
            b"sdt" => return Ok(WKind::Sdt),
            b"instrText" if in_run => return Ok(WKind::Instr),
            b"p" => {
                self.start_paragraph()?;
                return Ok(WKind::Para);
            }
            b"pPr" if parent == Some(WKind::Para) => return Ok(WKind::PPr),
            b"pStyle" if in_props => {
                if let Some(p) = self.current() {
                    p.style = e.attr(Some(Ns::W), "val");
                }
            }
            b"outlineLvl" if in_props => {
                if let Some(p) = self.current() {
                    p.outline = e
                        .attr(Some(Ns::W), "val")
                        .and_then(|v| v.trim().parse::<u32>().ok())
                        .is_some_and(|v| v < 9);
                }
            }
            b"r" => return Ok(WKind::Run),
            b"t" if in_run => return Ok(WKind::Text),
            b"tab" | b"ptab" | b"br" | b"cr" if in_run => {
                if let Some(p) = self.current() {
                    p.text.push(' ');
                }
            }
            b"noBreakHyphen" if in_run => {
                if let Some(p) = self.current() {
                    p.text.push('-');
                }
            }
            _ => {}
        }
        Ok(WKind::Other)
    }

    /// The paragraph whose elements are being read, if any.
    fn current(&mut self) -> Option<&mut Building> {
        let &p = self.open.last()?;
        Some(&mut self.paras[p])
    }

    fn start_paragraph(&mut self) -> Result<()> {
        if self.paras.len() >= MAX_PARAGRAPHS {
            return Err(too_many());
        }
        let container = match self.frames.last_mut() {
            Some(f) => match f.container {
                Some(c) => c,
                None => {
                    self.containers.push((f.seq, u64::MAX));
                    f.container = Some(self.containers.len() - 1);
                    self.containers.len() - 1
                }
            },
            None => {
                self.containers.push((0, u64::MAX));
                self.containers.len() - 1
            }
        };
        self.open.push(self.paras.len());
        self.paras.push(Building {
            text: String::new(),
            style: None,
            outline: false,
            seq: self.seq,
            container,
        });
        Ok(())
    }

    fn close_element(&mut self) {
        if let Some(f) = self.frames.pop() {
            if let Some(c) = f.container {
                self.containers[c].1 = self.seq;
            }
            if f.bibliography {
                self.bibliographies.push((f.first_para, self.paras.len()));
            }
            if f.kind == WKind::Para {
                self.open.pop();
            }
        }
        if self.skip_from == Some(self.frames.len()) {
            self.skip_from = None;
        }
    }

    fn text(&mut self, t: &str) {
        if self.skip_from.is_none()
            && self.frames.last().is_some_and(|f| f.kind == WKind::Instr)
            && let Some(f) = self.fields.last_mut()
        {
            f.0.push_str(t);
        }
        if self.skip_from.is_none()
            && self.frames.last().is_some_and(|f| f.kind == WKind::Text)
            && let Some(&p) = self.open.last()
        {
            self.paras[p].text.push_str(t);
        }
    }

    /// The non-blank paragraphs, with the References section's heading and entries
    /// taken out of the body.
    fn into_document(self, styles: &HashMap<String, StyleInfo>) -> LocalDocument {
        let is_heading = |b: &Building| {
            b.outline
                || b.style.as_deref().is_some_and(|id| {
                    heading_name(id)
                        || styles.get(id).is_some_and(|s| {
                            s.outline || s.name.as_deref().is_some_and(heading_name)
                        })
                })
        };
        let kept: Vec<usize> = (0..self.paras.len())
            .filter(|&i| !self.paras[i].text.trim().is_empty())
            .collect();
        // Bibliographies in the paragraphs left once blank ones are dropped.
        let bibliographies: Vec<(usize, usize)> = self
            .bibliographies
            .iter()
            .map(|&(a, b)| {
                (
                    kept.partition_point(|&k| k < a),
                    kept.partition_point(|&k| k < b),
                )
            })
            .filter(|(a, b)| a < b)
            .collect();
        let paras: Vec<Building> = self
            .paras
            .into_iter()
            .filter(|p| !p.text.trim().is_empty())
            .collect();
        let (refs_heading, refs_range) =
            bibliography_span(&paras, &bibliographies, &self.containers, is_heading)
                .unwrap_or_else(|| references_span(&paras, &self.containers, is_heading));

        let mut doc = LocalDocument {
            kind: DocKind::Docx,
            paragraphs: Vec::new(),
            references_heading: None,
            references: Vec::new(),
        };
        for (i, p) in paras.into_iter().enumerate() {
            if Some(i) == refs_heading {
                doc.references_heading = Some(p.text.trim().to_owned());
            } else if refs_range.contains(&i) {
                doc.references.push(p.text.trim().to_owned());
            } else {
                doc.paragraphs.push(Paragraph {
                    index: doc.paragraphs.len() as u32,
                    text: p.text,
                    slide: None,
                    style: p.style,
                    notes: false,
                });
            }
        }
        doc
    }
}

/// The last References heading and the entries after it, which end at the next heading
/// or where the element holding the heading ends (a list in a table cell ends with it).
fn references_span(
    paras: &[Building],
    containers: &Containers,
    is_heading: impl Fn(&Building) -> bool,
) -> (Option<usize>, std::ops::Range<usize>) {
    let Some(h) = paras.iter().rposition(|p| is_references_heading(&p.text)) else {
        return (None, 0..0);
    };
    let (open_at, close_at) = containers[paras[h].container];
    let end = paras[h + 1..]
        .iter()
        .position(|p| is_heading(p) || p.seq <= open_at || p.seq >= close_at)
        .map_or(paras.len(), |n| h + 1 + n);
    (Some(h), h + 1..end)
}

/// The document's last bibliography (with the fields and controls around it taken as
/// one) as its References section: entries run on past it to the next heading or the
/// end of its container (entries added after a reference manager's field). Its heading
/// is its own first paragraph when that reads as one, else a References heading just
/// before it; there may be none.
fn bibliography_span(
    paras: &[Building],
    bibliographies: &[(usize, usize)],
    containers: &Containers,
    is_heading: impl Fn(&Building) -> bool,
) -> Option<(Option<usize>, std::ops::Range<usize>)> {
    let &(mut lo, mut hi) = bibliographies.iter().max_by_key(|b| b.1)?;
    for &(a, b) in bibliographies {
        if a < hi && b > lo {
            lo = lo.min(a);
            hi = hi.max(b);
        }
    }
    let (open_at, close_at) = containers[paras[hi - 1].container];
    let end = paras[hi..]
        .iter()
        .position(|p| is_heading(p) || p.seq <= open_at || p.seq >= close_at)
        .map_or(paras.len(), |n| hi + n);
    if hi - lo > 1 && (is_references_heading(&paras[lo].text) || is_heading(&paras[lo])) {
        Some((Some(lo), lo + 1..end))
    } else if lo > 0 && is_references_heading(&paras[lo - 1].text) {
        Some((Some(lo - 1), lo..end))
    } else {
        Some((None, lo..end))
    }
}

/// Style ids and names such as "Heading1", "heading 1", "Title", "TOC Heading".
fn heading_name(s: &str) -> bool {
    let s = s.to_ascii_lowercase();
    s.starts_with("title") || s.contains("heading")
}

/// Paragraph styles by id. A document without a readable styles part is still
/// read; its headings are then known by style id alone.
fn docx_styles<R: Read + Seek>(pkg: &mut Package<R>, main: &str) -> HashMap<String, StyleInfo> {
    let part = read_rels(pkg, main)
        .ok()
        .and_then(|rels| {
            rels.into_iter()
                .find(|r| r.rel_type.ends_with("/styles"))
                .and_then(|r| r.part)
        })
        .unwrap_or_else(|| "word/styles.xml".to_owned());
    let Ok(Some(xml)) = pkg.read(&part) else {
        return HashMap::new();
    };
    let mut styles = HashMap::new();
    let mut depth = 0usize;
    let mut current: Option<(String, StyleInfo)> = None;
    let walked = walk(&xml, &part, |ev| {
        match ev {
            Ev::Open(e) => {
                depth += 1;
                if depth == 2 && e.is(Ns::W, "style") {
                    current = e
                        .attr(Some(Ns::W), "styleId")
                        .map(|id| (id, StyleInfo::default()));
                } else if let Some((_, info)) = current.as_mut() {
                    if depth == 3 && e.is(Ns::W, "name") {
                        info.name = e.attr(Some(Ns::W), "val");
                    } else if depth == 4 && e.is(Ns::W, "outlineLvl") {
                        info.outline = e
                            .attr(Some(Ns::W), "val")
                            .and_then(|v| v.trim().parse::<u32>().ok())
                            .is_some_and(|v| v < 9);
                    }
                }
            }
            Ev::Close => {
                if depth == 2
                    && let Some((id, info)) = current.take()
                {
                    styles.insert(id, info);
                }
                depth = depth.saturating_sub(1);
            }
            Ev::Text(_) => {}
        }
        Ok(())
    });
    if walked.is_err() {
        return HashMap::new();
    }
    styles
}

// ---- PowerPoint ----

#[derive(Clone, Copy, PartialEq, Eq)]
enum AKind {
    Para,
    /// `a:r` or `a:fld`: runs whose `a:t` is text.
    Run,
    Text,
    Shape,
    NvSpPr,
    NvPr,
    Other,
}

struct SlidePara {
    text: String,
    /// "Title" or "Subtitle" for paragraphs of such a placeholder.
    style: Option<&'static str>,
}

fn read_pptx<R: Read + Seek>(pkg: &mut Package<R>, main: &str) -> Result<LocalDocument> {
    let pres = pkg.require(main)?;
    let rels = read_rels(pkg, main)?;

    let mut ids: Vec<String> = Vec::new();
    let mut path: Vec<(Ns, bool)> = Vec::new();
    walk(&pres, main, |ev| {
        match ev {
            Ev::Open(e) => {
                let in_list = path.last().is_some_and(|&(_, l)| l);
                if in_list && e.is(Ns::P, "sldId") {
                    if ids.len() >= MAX_PARAGRAPHS {
                        return Err(too_many());
                    }
                    ids.push(e.attr(Some(Ns::R), "id").unwrap_or_default());
                }
                path.push((e.ns, path.len() == 1 && e.is(Ns::P, "sldIdLst")));
            }
            Ev::Close => {
                path.pop();
            }
            Ev::Text(_) => {}
        }
        Ok(())
    })?;

    let mut slides: Vec<Vec<SlidePara>> = Vec::with_capacity(ids.len().min(4096));
    // Each slide's speaker notes (the notes page's body placeholder).
    let mut notes: Vec<Vec<SlidePara>> = Vec::with_capacity(ids.len().min(4096));
    let mut total = 0usize;
    for (n, rid) in ids.iter().enumerate() {
        let part = rels
            .iter()
            .find(|r| &r.id == rid)
            .and_then(|r| r.part.clone())
            .ok_or_else(|| {
                corrupt(format_args!(
                    "slide {} ({rid}) has no part in the package",
                    n + 1
                ))
            })?;
        let xml = pkg.require(&part)?;
        let paras = slide_paragraphs(&xml, &part, MAX_PARAGRAPHS - total, false)?;
        total += paras.len();
        slides.push(paras);
        let notes_part = read_rels(pkg, &part)?
            .into_iter()
            .find(|r| r.rel_type.ends_with("/notesSlide"))
            .and_then(|r| r.part);
        let said = match notes_part {
            Some(np) => match pkg.read(&np)? {
                Some(xml) => slide_paragraphs(&xml, &np, MAX_PARAGRAPHS - total, true)?,
                None => Vec::new(),
            },
            None => Vec::new(),
        };
        total += said.len();
        notes.push(said);
    }

    let title_of = |s: &[SlidePara]| -> (String, Vec<bool>) {
        let titles: Vec<bool> = s.iter().map(|p| p.style == Some("Title")).collect();
        if titles.iter().any(|&t| t) {
            let text = s
                .iter()
                .filter(|p| p.style == Some("Title"))
                .map(|p| p.text.trim())
                .collect::<Vec<_>>()
                .join(" ");
            (text, titles)
        } else {
            // A slide without a title placeholder: its first paragraph heads it.
            let mut first = vec![false; s.len()];
            if let Some(f) = first.first_mut() {
                *f = true;
            }
            (
                s.first()
                    .map(|p| p.text.trim().to_owned())
                    .unwrap_or_default(),
                first,
            )
        }
    };
    let refs_at = slides
        .iter()
        .rposition(|s| is_references_heading(&title_of(s).0));

    let mut doc = LocalDocument {
        kind: DocKind::Pptx,
        paragraphs: Vec::new(),
        references_heading: None,
        references: Vec::new(),
    };
    for (si, (s, said)) in slides.into_iter().zip(notes).enumerate() {
        if Some(si) == refs_at {
            let (heading, is_title) = title_of(&s);
            doc.references_heading = Some(heading);
            doc.references.extend(
                s.into_iter()
                    .zip(is_title)
                    .filter(|(_, t)| !t)
                    .map(|(p, _)| p.text.trim().to_owned()),
            );
            continue;
        }
        for (p, is_notes) in s
            .into_iter()
            .map(|p| (p, false))
            .chain(said.into_iter().map(|p| (p, true)))
        {
            doc.paragraphs.push(Paragraph {
                index: doc.paragraphs.len() as u32,
                text: p.text,
                slide: Some(si as u32 + 1),
                style: p.style.map(str::to_owned),
                notes: is_notes,
            });
        }
    }
    Ok(doc)
}

/// A slide's non-blank paragraphs in shape order: shapes, groups, tables. For a notes
/// page (`notes`), only its body placeholder's: the notes, not the slide's image, number,
/// date, header or footer.
fn slide_paragraphs(xml: &[u8], part: &str, room: usize, notes: bool) -> Result<Vec<SlidePara>> {
    let mut frames: Vec<AKind> = Vec::new();
    let mut skip_from: Option<usize> = None;
    // The placeholder style of each open shape, innermost last.
    let mut shapes: Vec<Option<&'static str>> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut paras: Vec<SlidePara> = Vec::new();
    // Notes: the depth of the open shape that is the notes' body placeholder (0: none).
    let mut notes_body = 0usize;
    walk(xml, part, |ev| {
        match ev {
            Ev::Open(e) => {
                let depth = frames.len();
                let parent = frames.last().copied();
                if skip_from.is_none() && e.is(Ns::Mc, "Fallback") {
                    skip_from = Some(depth);
                }
                let mut kind = AKind::Other;
                if skip_from.is_none() {
                    match (e.ns, e.local) {
                        (Ns::A, b"p")
                            if notes && (notes_body == 0 || notes_body > shapes.len()) => {}
                        (Ns::A, b"p") => {
                            if paras.len() >= room {
                                return Err(too_many());
                            }
                            kind = AKind::Para;
                            open.push(paras.len());
                            paras.push(SlidePara {
                                text: String::new(),
                                style: shapes.last().copied().flatten(),
                            });
                        }
                        (Ns::A, b"r" | b"fld") => kind = AKind::Run,
                        (Ns::A, b"t") if parent == Some(AKind::Run) => kind = AKind::Text,
                        (Ns::A, b"br") if parent == Some(AKind::Para) => {
                            if let Some(&p) = open.last() {
                                paras[p].text.push(' ');
                            }
                        }
                        (Ns::P, b"sp") => {
                            kind = AKind::Shape;
                            shapes.push(None);
                        }
                        (Ns::P, b"nvSpPr") if parent == Some(AKind::Shape) => kind = AKind::NvSpPr,
                        (Ns::P, b"nvPr") if parent == Some(AKind::NvSpPr) => kind = AKind::NvPr,
                        (Ns::P, b"ph") if parent == Some(AKind::NvPr) => {
                            let style = match e.attr(None, "type").as_deref() {
                                _ if notes => None,
                                Some("title" | "ctrTitle") => Some("Title"),
                                Some("subTitle") => Some("Subtitle"),
                                _ => None,
                            };
                            if notes && e.attr(None, "type").as_deref() == Some("body") {
                                notes_body = shapes.len();
                            }
                            if let Some(s) = shapes.last_mut() {
                                *s = style;
                            }
                        }
                        _ => {}
                    }
                }
                frames.push(kind);
            }
            Ev::Close => {
                match frames.pop() {
                    Some(AKind::Para) => {
                        open.pop();
                    }
                    Some(AKind::Shape) => {
                        if notes_body == shapes.len() {
                            notes_body = 0;
                        }
                        shapes.pop();
                    }
                    _ => {}
                }
                if skip_from == Some(frames.len()) {
                    skip_from = None;
                }
            }
            Ev::Text(t) => {
                if skip_from.is_none()
                    && frames.last() == Some(&AKind::Text)
                    && let Some(&p) = open.last()
                {
                    paras[p].text.push_str(t);
                }
            }
        }
        Ok(())
    })?;
    paras.retain(|p| !p.text.trim().is_empty());
    Ok(paras)
}

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
