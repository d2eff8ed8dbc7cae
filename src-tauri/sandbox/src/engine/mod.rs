//! The sandbox's document engine: reads Word (.docx), PowerPoint (.pptx) and plain
//! text, and writes APA-style citations and a reference list into them.
//!
//! How and where citations are written, and from which works, can change
//! ([`style`]): the document's own reference list, inside sentences, numeric or
//! bracketed, speaker notes too; by default the engine does what it always did.
//!
//! Office files are edited by splicing new markup into the original XML at byte
//! offsets, and untouched ZIP entries are copied raw, so a cited document differs
//! from the upload only where citations and references were added.

pub mod bibliography;
mod docx;
mod package;
mod pptx;
pub mod style;
mod text;
mod xml;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub(crate) use crate::rng::Rng;

use bibliography::WORKS;
use package::Package;
pub use style::{CiteShape, CiteStyle, Placement, scrub_metadata};
use xml::{Ns, Tree};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Docx,
    Pptx,
    Text,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    #[default]
    Every,
    EveryOther,
    Random,
}

/// Which paragraphs get citations and how many each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CiteOptions {
    pub mode: Mode,
    /// Fewest citations per chosen paragraph (0 leaves a chosen paragraph as it is).
    pub min: u32,
    /// Most citations per chosen paragraph; a value below `min` is read as `min`.
    pub max: u32,
    /// Seeds every choice, so the same input and options give the same output.
    pub seed: u64,
    /// Where the works cited come from ([`style`]).
    pub style: CiteStyle,
    /// Where in a paragraph citations go.
    pub placement: Placement,
    /// How citations are written.
    pub shape: CiteShape,
    /// Cite a .pptx's speaker notes too.
    pub notes: bool,
}

impl Default for CiteOptions {
    fn default() -> Self {
        CiteOptions {
            mode: Mode::Every,
            min: 1,
            max: 1,
            seed: 0,
            style: CiteStyle::Library,
            placement: Placement::End,
            shape: CiteShape::AuthorYear,
            notes: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Paragraph {
    pub index: usize,
    pub text: String,
    /// 1-based slide number (PowerPoint only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slide: Option<u32>,
    /// Word paragraph style id; "Title"/"Subtitle" for slide title placeholders.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub style: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reference {
    pub index: usize,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Parsed {
    pub kind: Kind,
    pub paragraphs: Vec<Paragraph>,
    pub references: Vec<Reference>,
    pub references_heading: Option<String>,
}

impl Parsed {
    /// An empty parse answer, filled in as a reader walks the document.
    pub(crate) fn new(kind: Kind) -> Self {
        Parsed {
            kind,
            paragraphs: Vec::new(),
            references: Vec::new(),
            references_heading: None,
        }
    }

    /// The next body paragraph, numbered in reading order.
    pub(crate) fn body(&mut self, text: String, slide: Option<u32>, style: Option<String>) {
        let index = self.paragraphs.len();
        (self.paragraphs).push(Paragraph {
            index,
            text,
            slide,
            style,
        });
    }

    /// The next References entry, trimmed.
    pub(crate) fn reference(&mut self, text: &str) {
        let index = self.references.len();
        (self.references).push(Reference {
            index,
            text: text.trim().to_owned(),
        });
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CiteStats {
    pub paragraphs_cited: usize,
    pub citations_inserted: usize,
    pub references_added: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cited {
    pub bytes: Vec<u8>,
    pub stats: CiteStats,
}

/// Why a file was refused. Each variant carries a sentence fit to show a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineError {
    NotADocument(String),
    Legacy(String),
    Encrypted(String),
    Unsupported(String),
    Corrupt(String),
}

impl EngineError {
    pub fn code(&self) -> &'static str {
        match self {
            EngineError::NotADocument(_) => "not_a_document",
            EngineError::Legacy(_) => "legacy_format",
            EngineError::Encrypted(_) => "encrypted_document",
            EngineError::Unsupported(_) => "unsupported_document",
            EngineError::Corrupt(_) => "corrupt_document",
        }
    }

    pub fn message(&self) -> &str {
        match self {
            EngineError::NotADocument(m)
            | EngineError::Legacy(m)
            | EngineError::Encrypted(m)
            | EngineError::Unsupported(m)
            | EngineError::Corrupt(m) => m,
        }
    }
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for EngineError {}

const OLE_MAGIC: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];
const DOCX_MAIN: &str =
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml";
const PPTX_MAIN: &str =
    "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml";

fn utf16le(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Identifies the file from its bytes alone.
pub fn detect(bytes: &[u8]) -> Result<Kind, EngineError> {
    detect_package(bytes).map(|(k, _)| k)
}

/// The kind and the main part's name (e.g. `word/document.xml`).
fn detect_package(bytes: &[u8]) -> Result<(Kind, String), EngineError> {
    if bytes.starts_with(&OLE_MAGIC) {
        // Office wraps password-protected OOXML in an OLE2 container holding these streams.
        if contains(bytes, &utf16le("EncryptionInfo"))
            || contains(bytes, &utf16le("EncryptedPackage"))
        {
            return Err(EngineError::Encrypted(
                "This document is password-protected. Remove the password in Word or PowerPoint, save, and upload it again.".into(),
            ));
        }
        let what = if contains(bytes, &utf16le("WordDocument")) {
            "a Word 97–2003 document (.doc)"
        } else if contains(bytes, &utf16le("PowerPoint Document")) {
            "a PowerPoint 97–2003 presentation (.ppt)"
        } else {
            "an Office 97–2003 file"
        };
        return Err(EngineError::Legacy(format!(
            "This is {what}. Open it in Word or PowerPoint, save it as .docx or .pptx, and upload that."
        )));
    }
    if !bytes.starts_with(b"PK") {
        return Err(not_a_document());
    }
    let mut pkg = Package::open(bytes)?;
    let Some(ct) = pkg.read_xml("[Content_Types].xml")? else {
        return Err(not_a_document());
    };
    let tree = Tree::parse(&ct, "[Content_Types].xml")?;
    // OPC names the main part by the package's officeDocument relationship and types
    // it by its Override or else the Default for its extension; a package without that
    // relationship is known by an Override of a main type, as it always was.
    if let Some(main) = package::main_part(&mut pkg)? {
        let ty = package::content_type(&tree, &main).unwrap_or_default();
        return match kind_of(&ty) {
            Some(kind) => Ok((kind, main)),
            None if ty.is_empty() => Err(EngineError::Corrupt(format!(
                "The main part {main} has no content type."
            ))),
            None => Err(unsupported(&ty.to_ascii_lowercase())),
        };
    }
    let mut other_main = None;
    for o in tree.children_named(tree.root(), Ns::Ct, "Override") {
        let e = &tree.elems[o];
        let part = e.attr(Ns::None, "PartName").unwrap_or_default();
        let ty = e.attr(Ns::None, "ContentType").unwrap_or_default().trim();
        if let Some(kind) = kind_of(ty) {
            return Ok((kind, part.trim_start_matches('/').to_owned()));
        }
        if ty.to_ascii_lowercase().ends_with(".main+xml") {
            other_main = Some(ty.to_ascii_lowercase());
        }
    }
    match other_main {
        Some(ty) => Err(unsupported(&ty)),
        None => Err(not_a_document()),
    }
}

fn kind_of(content_type: &str) -> Option<Kind> {
    let ty = content_type.trim();
    if ty.eq_ignore_ascii_case(DOCX_MAIN) {
        Some(Kind::Docx)
    } else if ty.eq_ignore_ascii_case(PPTX_MAIN) {
        Some(Kind::Pptx)
    } else {
        None
    }
}

/// A main part of a type this service does not cite (`ty` lower-cased).
fn unsupported(ty: &str) -> EngineError {
    let what = if ty.contains("spreadsheetml") || ty.contains("ms-excel") {
        "an Excel workbook"
    } else if ty.contains("macroenabled") {
        "a macro-enabled Office file"
    } else if ty.contains("template") {
        "an Office template"
    } else if ty.contains("slideshow") {
        "a PowerPoint show (.ppsx)"
    } else {
        "an Office file of a kind this service does not handle"
    };
    EngineError::Unsupported(format!(
        "This is {what}. Upload a Word document (.docx), a PowerPoint presentation (.pptx) or plain text."
    ))
}

fn not_a_document() -> EngineError {
    EngineError::NotADocument(
        "This file is not a Word document (.docx) or PowerPoint presentation (.pptx).".into(),
    )
}

pub fn parse(bytes: &[u8]) -> Result<Parsed, EngineError> {
    let (kind, main) = detect_package(bytes)?;
    let mut pkg = Package::open(bytes)?;
    match kind {
        Kind::Docx => docx::parse(&mut pkg, &main),
        Kind::Pptx => pptx::parse(&mut pkg, &main),
        Kind::Text => unreachable!("detect never reports text"),
    }
}

pub fn parse_text(text: &str) -> Parsed {
    text::parse(text)
}

pub fn cite(bytes: &[u8], opts: &CiteOptions) -> Result<Cited, EngineError> {
    let (kind, main) = detect_package(bytes)?;
    let pkg = Package::open(bytes)?;
    match kind {
        Kind::Docx => docx::cite(pkg, &main, opts),
        Kind::Pptx => pptx::cite(pkg, &main, opts),
        Kind::Text => unreachable!("detect never reports text"),
    }
}

pub fn cite_text(text: &str, opts: &CiteOptions) -> (String, CiteStats) {
    text::cite(text, opts)
}

// ---- shared by the three formats ----

/// For each candidate paragraph, the works (indexes into a pool of `n`, [`WORKS`]
/// unless the document's own list is cited) to cite there; empty for paragraphs
/// left alone.
pub(crate) fn plan(eligible: &[bool], opts: &CiteOptions, n: usize) -> Vec<Vec<usize>> {
    let mut rng = Rng::new(opts.seed);
    let lo = opts.min as usize;
    let hi = (opts.max as usize).max(lo);
    let mut position = 0usize;
    eligible
        .iter()
        .map(|&ok| {
            if !ok {
                return Vec::new();
            }
            let pos = position;
            position += 1;
            let chosen = match opts.mode {
                Mode::Every => true,
                Mode::EveryOther => pos.is_multiple_of(2),
                Mode::Random => rng.next_u64() >> 63 == 1,
            };
            if !chosen || n == 0 {
                return Vec::new();
            }
            let k = (lo + rng.below((hi - lo + 1) as u64) as usize).min(n);
            // Partial Fisher–Yates: k distinct works.
            let mut pool: Vec<usize> = (0..n).collect();
            for j in 0..k {
                let r = j + rng.below((n - j) as u64) as usize;
                pool.swap(j, r);
            }
            pool.truncate(k);
            pool
        })
        .collect()
}

/// " (Knuth, 1984; Watson & Crick, 1953)", ordered as APA orders them.
pub(crate) fn citation_text(works: &[usize]) -> String {
    let mut ws: Vec<_> = works.iter().map(|&i| &WORKS[i]).collect();
    ws.sort_by(|a, b| {
        a.first_author()
            .to_lowercase()
            .cmp(&b.first_author().to_lowercase())
            .then(a.year.cmp(&b.year))
    });
    let inner: Vec<String> = ws.iter().map(|w| w.in_text_inner()).collect();
    format!(" ({})", inner.join("; "))
}

/// The references to add: every cited work once, sorted by first author, minus
/// those whose DOI already appears among the document's existing entries.
pub(crate) fn new_references(plan: &[Vec<usize>], existing: &[String]) -> Vec<String> {
    let mut ids: Vec<usize> = plan.iter().flatten().copied().collect();
    ids.sort_unstable();
    ids.dedup();
    let mut refs: Vec<(String, String)> = ids
        .into_iter()
        .map(|i| &WORKS[i])
        .filter(|w| {
            let doi = w.doi.to_lowercase();
            !existing.iter().any(|e| e.to_lowercase().contains(&doi))
        })
        .map(|w| (w.reference().to_lowercase(), w.reference()))
        .collect();
    refs.sort();
    refs.into_iter().map(|(_, r)| r).collect()
}

pub(crate) fn stats(plan: &[Vec<usize>], references_added: usize) -> CiteStats {
    CiteStats {
        paragraphs_cited: plan.iter().filter(|p| !p.is_empty()).count(),
        citations_inserted: plan.iter().map(Vec::len).sum(),
        references_added,
    }
}

/// Is this paragraph the heading of a reference list?
pub(crate) fn is_references_heading(text: &str) -> bool {
    let t = text.trim().trim_end_matches(':').trim_end();
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

pub(crate) fn is_heading_style(style: Option<&str>) -> bool {
    style.is_some_and(|s| {
        let s = s.to_ascii_lowercase();
        s.starts_with("heading") || s.starts_with("title")
    })
}

pub(crate) fn is_title_like_style(style: Option<&str>) -> bool {
    is_heading_style(style) || style.is_some_and(|s| s.to_ascii_lowercase().starts_with("subtitle"))
}

pub(crate) const MIN_CITABLE_CHARS: usize = 40;

/// Where a citation goes in a paragraph's text, as a char index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// Before this char: the first of the closing `.`/`!`/`?` run.
    Before(usize),
    /// After this char: the last non-blank one.
    After(usize),
}

impl Anchor {
    /// The char index the citation text will start at.
    pub fn split(self) -> usize {
        match self {
            Anchor::Before(i) => i,
            Anchor::After(i) => i + 1,
        }
    }

    /// The char whose run/element holds the insertion point.
    pub fn char_index(self) -> usize {
        match self {
            Anchor::Before(i) | Anchor::After(i) => i,
        }
    }
}

pub(crate) fn anchor(text: &str) -> Option<Anchor> {
    let chars: Vec<char> = text.chars().collect();
    let last = chars.iter().rposition(|c| !c.is_whitespace())?;
    if matches!(chars[last], '.' | '!' | '?') {
        let mut first = last;
        while first > 0 && matches!(chars[first - 1], '.' | '!' | '?') {
            first -= 1;
        }
        if first > 0 {
            return Some(Anchor::Before(first));
        }
    }
    Some(Anchor::After(last))
}
