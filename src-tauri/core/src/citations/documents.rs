//! Recognising what a file is from its bytes, never from its name.
//!
//! A user drops whatever they have; the services accept only .docx and .pptx. We
//! tell them before anything is sent, with a reason specific enough to act on.

use crate::error::{Error, ErrorCode, Result};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{Cursor, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;
use ts_rs::TS;

/// The services' request-body limit: the seed's "12 MB", read as decimal megabytes, the
/// smaller reading, so a request that fits here fits either way.
pub const MAX_REQUEST_BYTES: u64 = crate::net::http::CONTRACT_REQUEST_BYTES;

/// Bytes of JSON around the base64 of a document in a cite request
/// (`{"fileBase64":"…","mode":"every_other","minCitations":…}`), generously rounded.
const REQUEST_OVERHEAD_BYTES: u64 = 256;

/// The largest document whose cite request still fits in [`MAX_REQUEST_BYTES`]: 8,999,808
/// bytes, shown to people as 8.99 MB.
pub const MAX_DOCUMENT_BYTES: u64 = (MAX_REQUEST_BYTES - REQUEST_OVERHEAD_BYTES) / 4 * 3;

// The largest document's request fits, with its base64 padding and the JSON around it...
const _: () =
    assert!(MAX_DOCUMENT_BYTES.div_ceil(3) * 4 + REQUEST_OVERHEAD_BYTES <= MAX_REQUEST_BYTES);
// ...one more byte would not, so no room is wasted...
const _: () =
    assert!((MAX_DOCUMENT_BYTES + 1).div_ceil(3) * 4 + REQUEST_OVERHEAD_BYTES > MAX_REQUEST_BYTES);
// ...and the limit people are told ("8.99 MB", rounded down) is one every such file meets.
const _: () = assert!(MAX_DOCUMENT_BYTES >= 8_990_000 && MAX_DOCUMENT_BYTES < 9_000_000);

/// The largest cite or parse answer read: base64 of a document as large as a 12 MB request
/// body (16,000,000 bytes), plus room for the JSON around it. The seeds set no answer size;
/// a rewritten document is about the size of the one sent, and a parse answer is its text.
pub const MAX_DOCUMENT_ANSWER_BYTES: u64 = MAX_REQUEST_BYTES.div_ceil(3) * 4 + 100_000;

/// The total time for a cite or parse, which uploads up to 12 MB and waits for the work.
pub const DOCUMENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// One paragraph the service will consider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct Paragraph {
    pub index: u32,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub slide: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub style: Option<String>,
    /// A slide's speaker notes, not the slide itself (a service may cite both).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(optional, as = "Option<bool>")]
    pub notes: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename_all = "lowercase")]
pub enum DocKind {
    Docx,
    Pptx,
}

impl DocKind {
    pub fn extension(self) -> &'static str {
        match self {
            DocKind::Docx => "docx",
            DocKind::Pptx => "pptx",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            DocKind::Docx => "Word document",
            DocKind::Pptx => "PowerPoint presentation",
        }
    }
}

const OLE_MAGIC: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];
const ZIP_MAGIC: [u8; 4] = *b"PK\x03\x04";
const ZIP_EMPTY_MAGIC: [u8; 4] = *b"PK\x05\x06";

/// Says what `bytes` are, or why they cannot be cited.
pub fn sniff(bytes: &[u8]) -> Result<DocKind> {
    sniff_main(bytes).map(|(kind, _)| kind)
}

/// [`sniff`], with the zip entry of the package's main part.
pub fn sniff_main(bytes: &[u8]) -> Result<(DocKind, String)> {
    match magic(bytes)? {
        Magic::Ole => Err(sniff_ole(bytes)),
        Magic::Zip => sniff_package(Cursor::new(bytes)),
    }
}

/// [`sniff`] of an open file of `len` bytes, reading only what the check needs: the
/// first bytes, the zip directory and a few small parts. An old binary file, refused
/// anyway, is read whole to say which kind it is.
pub fn sniff_file(file: &File, len: u64) -> Result<DocKind> {
    sniff_file_main(file, len).map(|(kind, _)| kind)
}

/// [`sniff_file`], with the zip entry of the package's main part.
pub fn sniff_file_main(file: &File, len: u64) -> Result<(DocKind, String)> {
    let cannot_read = |e: std::io::Error| Error::io("Cannot read the file", &e);
    let mut head = [0u8; 8];
    let n = read_at_most(file, 0, &mut head).map_err(cannot_read)?;
    match magic(&head[..n])? {
        Magic::Ole => {
            let mut bytes = Vec::new();
            let mut reader = file;
            reader.seek(SeekFrom::Start(0)).map_err(cannot_read)?;
            reader
                .take(len.min(MAX_DOCUMENT_BYTES))
                .read_to_end(&mut bytes)
                .map_err(cannot_read)?;
            Err(sniff_ole(&bytes))
        }
        Magic::Zip => sniff_package(file),
    }
}

/// Fills `buf` from `offset` as far as the file goes; how many bytes that was.
pub fn read_at_most(file: &File, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut filled = 0;
    while filled < buf.len() {
        match file.read_at(&mut buf[filled..], offset + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// The `len` bytes of `file` as UTF-8 text (a cited essay, which is small).
pub fn read_text(file: &File, len: u64) -> Result<String> {
    let mut bytes = vec![0u8; len as usize];
    let n = read_at_most(file, 0, &mut bytes)
        .map_err(|e| Error::io("Cannot read the cited text", &e))?;
    bytes.truncate(n);
    String::from_utf8(bytes).map_err(|_| Error::invalid_input("The cited text is not UTF-8."))
}

enum Magic {
    Ole,
    Zip,
}

fn magic(head: &[u8]) -> Result<Magic> {
    if head.is_empty() {
        return Err(Error::new(ErrorCode::EmptyFile, "The file is empty."));
    }
    if head.starts_with(&OLE_MAGIC) {
        return Ok(Magic::Ole);
    }
    if head.starts_with(&ZIP_MAGIC) || head.starts_with(&ZIP_EMPTY_MAGIC) {
        return Ok(Magic::Zip);
    }
    Err(Error::new(
        ErrorCode::NotADocument,
        "This is not a Word or PowerPoint document. Casebook cites .docx and .pptx files, or pasted text.",
    ))
}

/// An OLE compound file is either a 97-2003 binary document or an encrypted OOXML
/// package; the directory entry names (UTF-16LE) tell which.
fn sniff_ole(bytes: &[u8]) -> Error {
    let has = |name: &str| {
        let needle: Vec<u8> = name.encode_utf16().flat_map(u16::to_le_bytes).collect();
        bytes.windows(needle.len()).any(|w| w == needle.as_slice())
    };
    if has("EncryptedPackage") || has("EncryptionInfo") {
        return Error::new(
            ErrorCode::EncryptedDocument,
            "This document is password-protected. Remove the password in Word or PowerPoint, save, and try again.",
        );
    }
    let (what, fix) = if has("WordDocument") {
        (
            "a Word 97-2003 document (.doc)",
            "Open it in Word or LibreOffice Writer, save it as .docx",
        )
    } else if has("PowerPoint Document") {
        (
            "a PowerPoint 97-2003 presentation (.ppt)",
            "Open it in PowerPoint or LibreOffice Impress, save it as .pptx",
        )
    } else {
        ("an old Office binary file", "Save it as .docx or .pptx")
    };
    Error::new(
        ErrorCode::LegacyFormat,
        format!("This is {what}. {fix}, and try again."),
    )
}

/// The most a package's parts may inflate to together, by the sizes its zip directory
/// declares: a 9 MB document of XML inflates to some tens of MB, a zip bomb to GBs.
/// What is read is bounded again as it is read, since a declared size can lie.
pub const MAX_INFLATED_BYTES: u64 = 512 * 1024 * 1024;

/// The package relationship that names the main part, transitional and strict.
const OFFICE_DOCUMENT_RELS: [&str; 2] = [
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument",
    "http://purl.oclc.org/ooxml/officeDocument/relationships/officeDocument",
];

fn corrupt(detail: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::CorruptDocument,
        format!(
            "The file looks like an Office document but cannot be read ({detail}). It may be damaged or incompletely downloaded."
        ),
    )
}

/// The kind of a .docx or .pptx package and its main part's zip entry name, found as
/// OPC says: the package's officeDocument relationship names the main part, typed by
/// its Override or else the Default for its extension. Before any part is read, every
/// entry must be a part a package can hold (no path out of it, no link) and all of
/// them together must not inflate past [`MAX_INFLATED_BYTES`].
pub fn sniff_package(source: impl Read + Seek) -> Result<(DocKind, String)> {
    let mut archive = zip::ZipArchive::new(source).map_err(corrupt)?;
    check_entries(&mut archive)?;
    let Some(types) = read_small(&mut archive, "[Content_Types].xml")? else {
        return Err(Error::new(
            ErrorCode::NotADocument,
            "This is a zip archive, not a Word or PowerPoint document.",
        ));
    };
    let types = String::from_utf8_lossy(&types).into_owned();
    if declares_dtd(types.as_bytes()) {
        return Err(unsafe_document("[Content_Types].xml"));
    }
    let content_types = ContentTypes::read(&types).map_err(corrupt)?;
    let (kind, main_part) = match package_main_part(&mut archive)? {
        Some(main) => {
            let ty = content_types.of(&main).ok_or_else(|| {
                corrupt(format!(
                    "its main part {main} has no content type in [Content_Types].xml"
                ))
            })?;
            (classify(&[ty])?, main)
        }
        // No officeDocument relationship: the main part is known by its type alone,
        // as packages without package relationships were always read.
        None => {
            let kind = classify(&content_types.overrides())?;
            let main = match kind {
                DocKind::Docx => "word/document.xml",
                DocKind::Pptx => "ppt/presentation.xml",
            };
            (kind, main.to_owned())
        }
    };
    // A package whose relationships or content types promise a main part it does not
    // hold is damaged.
    let Some(entry) = entry_name(&archive, &main_part) else {
        return Err(corrupt(format!("{main_part} is missing")));
    };
    let mut prolog = Vec::new();
    // The prolog is all we need: a DTD can only come before the root element.
    archive
        .by_name(&entry)
        .map_err(corrupt)?
        .take(64 * 1024)
        .read_to_end(&mut prolog)
        .map_err(corrupt)?;
    if declares_dtd(&prolog) {
        return Err(unsafe_document(&entry));
    }
    Ok((kind, entry))
}

/// The zip entry holding `part`: part names are compared case-insensitively in OPC,
/// zip entry names are not.
fn entry_name<R: Read + Seek>(archive: &zip::ZipArchive<R>, part: &str) -> Option<String> {
    let part = part.trim_start_matches('/');
    if archive.index_for_name(part).is_some() {
        return Some(part.to_owned());
    }
    archive
        .file_names()
        .find(|n| n.eq_ignore_ascii_case(part))
        .map(str::to_owned)
}

/// A small part (content types, relationships) whole, refusing to inflate a bomb.
fn read_small<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
    part: &str,
) -> Result<Option<Vec<u8>>> {
    let Some(entry) = entry_name(archive, part) else {
        return Ok(None);
    };
    let mut out = Vec::new();
    archive
        .by_name(&entry)
        .map_err(corrupt)?
        .take(1 << 20)
        .read_to_end(&mut out)
        .map_err(|e| corrupt(format!("{part}: {e}")))?;
    Ok(Some(out))
}

/// The main part `_rels/.rels` names, without a leading slash; `None` when the package
/// has no officeDocument relationship.
fn package_main_part<R: Read + Seek>(archive: &mut zip::ZipArchive<R>) -> Result<Option<String>> {
    use quick_xml::events::Event;
    let Some(rels) = read_small(archive, "_rels/.rels")? else {
        return Ok(None);
    };
    if declares_dtd(&rels) {
        return Err(unsafe_document("_rels/.rels"));
    }
    let mut reader = quick_xml::Reader::from_reader(rels.as_slice());
    let mut buf = Vec::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Empty(e)) | Ok(Event::Start(e))
                if e.local_name().as_ref() == b"Relationship" =>
            {
                let (mut ty, mut target, mut external) = (None, None, false);
                for attr in e.attributes().flatten() {
                    let value = String::from_utf8_lossy(&attr.value).trim().to_owned();
                    match attr.key.local_name().as_ref() {
                        b"Type" => ty = Some(value),
                        b"Target" => target = Some(value),
                        b"TargetMode" => external = value.eq_ignore_ascii_case("external"),
                        _ => {}
                    }
                }
                if let (Some(ty), Some(target)) = (ty, target)
                    && !external
                    && OFFICE_DOCUMENT_RELS.contains(&ty.as_str())
                {
                    return Ok(Some(package_target(&target)));
                }
            }
            Ok(Event::Eof) => return Ok(None),
            Ok(_) => {}
            Err(e) => return Err(corrupt(format!("_rels/.rels: {e}"))),
        }
        buf.clear();
    }
}

/// A package relationship's target as a part name: relative to the package root.
fn package_target(target: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for s in target.split(['#', '?']).next().unwrap_or("").split('/') {
        match s {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    segments.join("/")
}

/// `[Content_Types].xml`: Defaults by extension and Overrides by part name, both
/// matched case-insensitively.
struct ContentTypes {
    defaults: Vec<(String, String)>,
    overrides: Vec<(String, String)>,
}

impl ContentTypes {
    fn read(xml: &str) -> std::result::Result<Self, String> {
        use quick_xml::events::Event;
        // quick-xml never expands DTD entities, so a hostile [Content_Types].xml cannot
        // make us fetch or read anything.
        let mut reader = quick_xml::Reader::from_str(xml);
        let mut types = ContentTypes {
            defaults: Vec::new(),
            overrides: Vec::new(),
        };
        loop {
            match reader.read_event() {
                Ok(Event::Empty(e)) | Ok(Event::Start(e)) => {
                    let (key, list) = match e.local_name().as_ref() {
                        b"Default" => (&b"Extension"[..], &mut types.defaults),
                        b"Override" => (&b"PartName"[..], &mut types.overrides),
                        _ => continue,
                    };
                    let (mut name, mut ty) = (String::new(), String::new());
                    for attr in e.attributes().flatten() {
                        let value = String::from_utf8_lossy(&attr.value).trim().to_owned();
                        if attr.key.local_name().as_ref() == key {
                            name = value.trim_start_matches('/').to_ascii_lowercase();
                        } else if attr.key.local_name().as_ref() == b"ContentType" {
                            ty = value.to_ascii_lowercase();
                        }
                    }
                    list.push((name, ty));
                }
                Ok(Event::Eof) => return Ok(types),
                Ok(_) => {}
                Err(e) => return Err(format!("[Content_Types].xml: {e}")),
            }
        }
    }

    /// The content type of `part`: its Override, else the Default for its extension.
    fn of(&self, part: &str) -> Option<String> {
        let part = part.trim_start_matches('/').to_ascii_lowercase();
        let found = |list: &[(String, String)], key: &str| {
            list.iter().find(|(k, _)| k == key).map(|(_, t)| t.clone())
        };
        found(&self.overrides, &part).or_else(|| {
            let name = part.rsplit('/').next().unwrap_or(&part);
            let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
            found(&self.defaults, ext)
        })
    }

    fn overrides(&self) -> Vec<String> {
        self.overrides.iter().map(|(_, t)| t.clone()).collect()
    }
}

/// Refuses a package holding an entry that could not be a part (a name leading out of
/// the package, or a link) or whose entries together inflate past
/// [`MAX_INFLATED_BYTES`], from the zip directory alone.
fn check_entries<R: Read + Seek>(archive: &mut zip::ZipArchive<R>) -> Result<()> {
    let (mut inflated, mut packed) = (0u64, 0u64);
    for i in 0..archive.len() {
        let entry = archive.by_index_raw(i).map_err(corrupt)?;
        let name = entry.name().to_owned();
        if let Some(why) = unsafe_entry_name(&name) {
            return Err(Error::new(
                ErrorCode::UnsafeDocument,
                format!(
                    "This document holds a file named \"{}\", {why}. Word and PowerPoint never write one; a program unpacking it could write outside the document.",
                    shown_name(&name)
                ),
            ));
        }
        if entry.is_symlink() {
            return Err(Error::new(
                ErrorCode::UnsafeDocument,
                format!(
                    "This document holds \"{}\" as a symbolic link, which Word and PowerPoint never write; unpacked, it could point anywhere on the computer.",
                    shown_name(&name)
                ),
            ));
        }
        inflated = inflated.saturating_add(entry.size());
        packed = packed.saturating_add(entry.compressed_size());
    }
    if inflated > MAX_INFLATED_BYTES {
        return Err(Error::new(
            ErrorCode::UnsafeDocument,
            format!(
                "This document would unpack from {} MB to {} MB, more than any real document does (it is what a zip bomb looks like).",
                megabytes(packed, true),
                megabytes(inflated, false)
            ),
        ));
    }
    Ok(())
}

/// Why a zip entry's name cannot be a part name (OPC's rules, and the ways a name
/// leads out of a folder it is unpacked into), or `None` when it can be.
fn unsafe_entry_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("with an empty name");
    }
    if name.contains('\\') {
        return Some("with a backslash in its path");
    }
    if name.starts_with('/') {
        return Some("an absolute path");
    }
    if name.chars().any(char::is_control) {
        return Some("with a control character in its name");
    }
    let first = name.split('/').next().unwrap_or("");
    if first.len() >= 2 && first.as_bytes()[1] == b':' && first.as_bytes()[0].is_ascii_alphabetic()
    {
        return Some("a path on a drive");
    }
    // A folder entry ends in '/'; its segments follow the same rules as a part's.
    let path = name.strip_suffix('/').unwrap_or(name);
    for segment in path.split('/') {
        match segment {
            "" => return Some("with an empty segment in its path"),
            "." | ".." => return Some("a path leading out of its folder"),
            s if s.ends_with('.') => return Some("with a path segment ending in a dot"),
            _ => {}
        }
    }
    None
}

/// An entry's name for a message: bounded, and nothing in it read as control.
fn shown_name(name: &str) -> String {
    let mut shown: String = name
        .chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .take(80)
        .collect();
    if name.chars().count() > 80 {
        shown.push('…');
    }
    shown
}

/// Whether XML declares a document type before its root element. Office never
/// writes one; a DTD in a package is how XML external-entity attacks arrive.
fn declares_dtd(xml: &[u8]) -> bool {
    let mut rest = xml;
    loop {
        let Some(lt) = rest.iter().position(|&b| b == b'<') else {
            return false;
        };
        rest = &rest[lt..];
        if rest.starts_with(b"<!DOCTYPE") {
            return true;
        }
        if rest.starts_with(b"<?") || rest.starts_with(b"<!--") {
            let end: &[u8] = if rest.starts_with(b"<?") {
                b"?>"
            } else {
                b"-->"
            };
            match rest.windows(end.len()).position(|w| w == end) {
                Some(p) => rest = &rest[p + end.len()..],
                None => return false,
            }
            continue;
        }
        return false;
    }
}

fn unsafe_document(part: &str) -> Error {
    Error::new(
        ErrorCode::UnsafeDocument,
        format!(
            "This document's {part} declares an XML document type (DTD), which Word and PowerPoint never write and which can be used to read other files. Casebook will not send it; open it in Word or PowerPoint and save a fresh copy."
        ),
    )
}

fn classify(types: &[String]) -> Result<DocKind> {
    let has = |t: &str| types.iter().any(|x| x == t);
    const OXML: &str = "application/vnd.openxmlformats-officedocument.";
    if has(&format!("{OXML}wordprocessingml.document.main+xml")) {
        return Ok(DocKind::Docx);
    }
    if has(&format!("{OXML}presentationml.presentation.main+xml")) {
        return Ok(DocKind::Pptx);
    }
    if has("application/vnd.ms-word.document.macroenabled.main+xml")
        || has("application/vnd.ms-word.template.macroenabledtemplate.main+xml")
        || has("application/vnd.ms-powerpoint.presentation.macroenabled.main+xml")
        || has("application/vnd.ms-powerpoint.slideshow.macroenabled.main+xml")
        || has("application/vnd.ms-powerpoint.template.macroenabled.main+xml")
    {
        return Err(Error::new(
            ErrorCode::MacroEnabled,
            "This document contains macros (.docm or .pptm). Save a copy as .docx or .pptx without macros and try again.",
        ));
    }
    if has(&format!("{OXML}wordprocessingml.template.main+xml"))
        || has(&format!("{OXML}presentationml.template.main+xml"))
        || has(&format!("{OXML}presentationml.slideshow.main+xml"))
    {
        return Err(Error::new(
            ErrorCode::TemplateOrShow,
            "This is a template or a slide show (.dotx, .potx or .ppsx). Save it as a .docx or .pptx document and try again.",
        ));
    }
    if types
        .iter()
        .any(|t| t.starts_with(&format!("{OXML}spreadsheetml.")))
    {
        return Err(Error::new(
            ErrorCode::UnsupportedDocument,
            "This is an Excel workbook. Casebook cites Word (.docx) and PowerPoint (.pptx) documents.",
        ));
    }
    Err(Error::new(
        ErrorCode::UnsupportedDocument,
        "This Office package is not a Word or PowerPoint document.",
    ))
}

/// What Casebook knows about a file the user brought in, before anything is sent.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct DocumentInfo {
    pub path: String,
    pub name: String,
    #[ts(type = "number")]
    pub size: u64,
    /// Set when the file can be cited.
    pub kind: Option<DocKind>,
    /// Why the file cannot be cited, when it cannot.
    pub problem: Option<Error>,
    /// The entries Casebook's own reading found in its References section: `Some(0)`
    /// when it has none, which a service may refuse, or answer by adding one. `None`
    /// when it was not read.
    pub references: Option<u32>,
}

/// A document read from disk once and checked: these exact bytes are what gets sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    pub kind: DocKind,
}

/// Reads the file at `path` once, through a reader that stops past [`MAX_DOCUMENT_BYTES`],
/// and checks it is a .docx or .pptx that can be cited. Only regular files (or links to them)
/// are read: a folder, a device such as `/dev/zero`, a FIFO or a socket is refused before a
/// byte is read, since reading one may never end.
pub fn open(path: &Path) -> Result<Document> {
    open_sized(path, &mut 0)
}

/// [`open`], also reporting the file's size as soon as it is known, for a refusal that
/// names it.
fn open_sized(path: &Path, size: &mut u64) -> Result<Document> {
    let cannot_read = |e: &std::io::Error| Error::io("Cannot read the file", e);
    let (file, len) = open_regular(path, size)?;
    let mut bytes = Vec::with_capacity(len as usize + 1);
    file.take(MAX_DOCUMENT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| cannot_read(&e))?;
    if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
        // The file grew while being read.
        *size = (*size).max(bytes.len() as u64);
        return Err(too_large(*size));
    }
    *size = bytes.len() as u64;
    let kind = sniff(&bytes)?;
    Ok(Document {
        path: path.to_owned(),
        bytes,
        kind,
    })
}

fn check_regular(meta: &std::fs::Metadata) -> Result<()> {
    let ft = meta.file_type();
    if ft.is_dir() {
        return Err(Error::new(
            ErrorCode::NotADocument,
            "This is a folder, not a document: choose the documents inside it.",
        ));
    }
    if !ft.is_file() {
        return Err(Error::new(
            ErrorCode::NotADocument,
            format!(
                "This is {}, not a document file. Casebook cites .docx and .pptx files.",
                special_file_kind(&ft)
            ),
        ));
    }
    Ok(())
}

#[cfg(unix)]
fn special_file_kind(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_fifo() {
        "a pipe (FIFO)"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_char_device() || ft.is_block_device() {
        "a device"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn special_file_kind(_: &std::fs::FileType) -> &'static str {
    "a special file"
}

/// Opens without blocking: were the path swapped for a FIFO after it was checked, a plain
/// open would wait for a writer forever. For a regular file the flag changes nothing.
#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const O_NONBLOCK: i32 = 0o4000;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    const O_NONBLOCK: i32 = 0x0004;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// A document opened and checked, not read: what a cite streams from. The open file is
/// what gets sent, whatever happens to the path meanwhile.
#[derive(Debug)]
pub struct OpenDocument {
    pub path: PathBuf,
    pub file: File,
    /// The size when it was checked; a cite refuses a file that changes size.
    pub len: u64,
    pub kind: DocKind,
}

/// Opens the file at `path` and checks, as [`open`] does, that it is a .docx or .pptx
/// that can be cited, reading only what the check needs.
pub fn open_file(path: &Path) -> Result<OpenDocument> {
    open_file_sized(path, &mut 0)
}

fn open_file_sized(path: &Path, size: &mut u64) -> Result<OpenDocument> {
    let (file, len) = open_regular(path, size)?;
    let kind = sniff_file(&file, len)?;
    Ok(OpenDocument {
        path: path.to_owned(),
        file,
        len,
        kind,
    })
}

/// Opens a regular file no larger than [`MAX_DOCUMENT_BYTES`], reporting its size in `size`
/// as soon as it is known.
fn open_regular(path: &Path, size: &mut u64) -> Result<(File, u64)> {
    let cannot_read = |e: &std::io::Error| Error::io("Cannot read the file", e);
    // `metadata` never opens the file, so a FIFO cannot block here.
    let meta = std::fs::metadata(path).map_err(|e| cannot_read(&e))?;
    check_regular(&meta)?;
    *size = meta.len();
    if *size > MAX_DOCUMENT_BYTES {
        return Err(too_large(*size));
    }
    let file = open_nonblocking(path).map_err(|e| cannot_read(&e))?;
    // The path may have been swapped for something else since `metadata`; the open file
    // is what will be read.
    let meta = file.metadata().map_err(|e| cannot_read(&e))?;
    check_regular(&meta)?;
    *size = meta.len();
    if *size > MAX_DOCUMENT_BYTES {
        return Err(too_large(*size));
    }
    Ok((file, *size))
}

/// Checks a file with [`open_file`]. Never fails: a problem with the file is part of
/// the answer.
pub fn inspect(path: &Path) -> DocumentInfo {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let mut size = 0;
    let (kind, problem) = match open_file_sized(path, &mut size) {
        Ok(doc) => (Some(doc.kind), None),
        Err(e) => (None, Some(e)),
    };
    DocumentInfo {
        path: path.display().to_string(),
        name,
        size,
        kind,
        problem,
        references: None,
    }
}

/// `bytes` as megabytes with two decimals, rounded up or down, so a limit is never shown
/// larger, nor a size smaller, than it is.
fn megabytes(bytes: u64, round_up: bool) -> String {
    let hundredths = if round_up {
        bytes.div_ceil(10_000)
    } else {
        bytes / 10_000
    };
    format!("{}.{:02}", hundredths / 100, hundredths % 100)
}

pub fn too_large(size: u64) -> Error {
    Error::new(
        ErrorCode::TooLarge,
        format!(
            "This file is {} MB; the citation service accepts documents up to {} MB (a 12 MB request).",
            megabytes(size, true),
            megabytes(MAX_DOCUMENT_BYTES, false)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_answer_fits_base64_of_a_12_mb_document_and_no_more() {
        assert_eq!(MAX_DOCUMENT_ANSWER_BYTES, 16_100_000);
        let largest = MAX_DOCUMENT_BYTES;
        assert!(largest.div_ceil(3) * 4 + 1000 < MAX_DOCUMENT_ANSWER_BYTES);
    }

    use std::io::Write;

    fn package(entries: &[(&str, &str)]) -> Vec<u8> {
        let mut buf = Cursor::new(Vec::new());
        let mut zip = zip::ZipWriter::new(&mut buf);
        let opts = zip::write::SimpleFileOptions::default();
        for (name, body) in entries {
            zip.start_file(*name, opts).unwrap();
            zip.write_all(body.as_bytes()).unwrap();
        }
        zip.finish().unwrap();
        buf.into_inner()
    }

    fn types(main: &str) -> String {
        format!(
            r#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/x" ContentType="{main}"/></Types>"#
        )
    }

    #[test]
    fn recognises_docx_and_pptx_by_content_type_not_name() {
        let docx = package(&[
            (
                "[Content_Types].xml",
                &types(
                    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
                ),
            ),
            ("word/document.xml", "<w:document/>"),
        ]);
        assert_eq!(sniff(&docx).unwrap(), DocKind::Docx);
        let pptx = package(&[
            (
                "[Content_Types].xml",
                &types(
                    "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
                ),
            ),
            ("ppt/presentation.xml", "<p:presentation/>"),
        ]);
        assert_eq!(sniff(&pptx).unwrap(), DocKind::Pptx);
    }

    #[test]
    fn each_kind_of_wrong_file_has_its_own_code() {
        let cases: Vec<(&str, Vec<u8>, ErrorCode)> = vec![
            ("empty", vec![], ErrorCode::EmptyFile),
            ("text", b"hello".to_vec(), ErrorCode::NotADocument),
            (
                "plain zip",
                package(&[("a.txt", "a")]),
                ErrorCode::NotADocument,
            ),
            (
                "truncated zip",
                package(&[("a.txt", "a")])[..20].to_vec(),
                ErrorCode::CorruptDocument,
            ),
            (
                "docm",
                package(&[(
                    "[Content_Types].xml",
                    &types("application/vnd.ms-word.document.macroEnabled.main+xml"),
                )]),
                ErrorCode::MacroEnabled,
            ),
            (
                "dotx",
                package(&[(
                    "[Content_Types].xml",
                    &types(
                        "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
                    ),
                )]),
                ErrorCode::TemplateOrShow,
            ),
            (
                "xlsx",
                package(&[(
                    "[Content_Types].xml",
                    &types(
                        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
                    ),
                )]),
                ErrorCode::UnsupportedDocument,
            ),
            (
                "docx without its main part",
                package(&[(
                    "[Content_Types].xml",
                    &types(
                        "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
                    ),
                )]),
                ErrorCode::CorruptDocument,
            ),
        ];
        for (what, bytes, want) in cases {
            let got = sniff(&bytes).expect_err(what);
            assert_eq!(got.code, want, "{what}: {}", got.message);
        }
    }

    const DOCX_MAIN_TYPE: &str =
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml";

    fn package_rels(ty: &str, target: &str) -> String {
        format!(
            r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{ty}" Target="{target}"/></Relationships>"#
        )
    }

    const TRANSITIONAL: &str =
        "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument";
    const STRICT: &str = "http://purl.oclc.org/ooxml/officeDocument/relationships/officeDocument";

    #[test]
    fn the_main_part_is_the_one_the_package_relationships_name() {
        // System.IO.Packaging style: the main part typed by the Default for .xml, in a
        // folder of its own, named in another case than its zip entry.
        let by_default = format!(
            r#"<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="XML" ContentType="{DOCX_MAIN_TYPE}"/><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/></Types>"#
        );
        for (ty, target) in [
            (TRANSITIONAL, "/Content/Main.xml"),
            (STRICT, "content/main.xml"),
        ] {
            let pkg = package(&[
                ("[Content_Types].xml", &by_default),
                ("_rels/.rels", &package_rels(ty, target)),
                ("content/MAIN.xml", "<w:document/>"),
            ]);
            assert_eq!(
                sniff_main(&pkg).unwrap(),
                (DocKind::Docx, "content/MAIN.xml".to_owned()),
                "{ty} {target}"
            );
        }
        // An Override wins over the Default for the part's extension.
        let overridden = format!(
            r#"<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/WORD/document.xml" ContentType="{DOCX_MAIN_TYPE}"/></Types>"#
        );
        let pkg = package(&[
            ("[Content_Types].xml", &overridden),
            (
                "_rels/.rels",
                &package_rels(TRANSITIONAL, "word/document.xml"),
            ),
            ("word/document.xml", "<w:document/>"),
        ]);
        assert_eq!(sniff(&pkg).unwrap(), DocKind::Docx);
        // Named but not typed, or typed but not there: damaged.
        let untyped = package(&[
            (
                "[Content_Types].xml",
                r#"<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>"#,
            ),
            (
                "_rels/.rels",
                &package_rels(TRANSITIONAL, "word/document.xml"),
            ),
            ("word/document.xml", "<w:document/>"),
        ]);
        let err = sniff(&untyped).unwrap_err();
        assert_eq!(err.code, ErrorCode::CorruptDocument);
        assert!(
            err.message.contains("has no content type"),
            "{}",
            err.message
        );
        let missing = package(&[
            ("[Content_Types].xml", &by_default),
            (
                "_rels/.rels",
                &package_rels(TRANSITIONAL, "word/document.xml"),
            ),
        ]);
        assert_eq!(
            sniff(&missing).unwrap_err().code,
            ErrorCode::CorruptDocument
        );
    }

    #[test]
    fn entries_that_cannot_be_parts_are_refused_by_name() {
        for bad in [
            "../evil.xml",
            "word/../../evil.xml",
            "/etc/evil.xml",
            "C:\\evil.xml",
            "c:/evil.xml",
            "word//document.xml",
            "word/./x.xml",
            "word/x.",
            "word/a\u{1}b.xml",
        ] {
            assert!(unsafe_entry_name(bad).is_some(), "{bad:?}");
            let pkg = package(&[
                ("[Content_Types].xml", &types(DOCX_MAIN_TYPE)),
                ("word/document.xml", "<w:document/>"),
                (bad, "x"),
            ]);
            let err = sniff(&pkg).unwrap_err();
            assert_eq!(
                err.code,
                ErrorCode::UnsafeDocument,
                "{bad:?}: {}",
                err.message
            );
        }
        for good in [
            "[Content_Types].xml",
            "_rels/.rels",
            "word/_rels/document.xml.rels",
            "word/",
            "word/media/image 1.png",
            "ppt/slides/slide1.xml",
        ] {
            assert_eq!(unsafe_entry_name(good), None, "{good:?}");
        }
    }

    #[test]
    fn a_symbolic_link_and_a_bomb_are_refused_from_the_directory() {
        let mut buf = Cursor::new(Vec::new());
        let mut zip = zip::ZipWriter::new(&mut buf);
        let opts = zip::write::SimpleFileOptions::default();
        zip.start_file("[Content_Types].xml", opts).unwrap();
        zip.write_all(types(DOCX_MAIN_TYPE).as_bytes()).unwrap();
        zip.start_file("word/document.xml", opts).unwrap();
        zip.write_all(b"<w:document/>").unwrap();
        zip.add_symlink("word/media/link", "/etc/passwd", opts)
            .unwrap();
        zip.finish().unwrap();
        let err = sniff(&buf.into_inner()).unwrap_err();
        assert_eq!(err.code, ErrorCode::UnsafeDocument);
        assert!(err.message.contains("symbolic link"), "{}", err.message);

        // The sandbox's bomb: 2.3 GB of zeros in about 2 MB, declared honestly.
        let docx = package(&[
            ("[Content_Types].xml", &types(DOCX_MAIN_TYPE)),
            ("word/document.xml", "<w:document/>"),
        ]);
        use casebook_sandbox::cite_variants::{HostileDocument, hostile_document};
        let bomb = hostile_document(&docx, HostileDocument::Bomb);
        assert!(bomb.len() < 2_500_000, "{}", bomb.len());
        let err = sniff(&bomb).unwrap_err();
        assert_eq!(err.code, ErrorCode::UnsafeDocument);
        assert!(err.message.contains("zip bomb"), "{}", err.message);
    }

    #[test]
    fn a_dtd_in_the_main_part_is_refused_unresolved() {
        let xxe = package(&[
            (
                "[Content_Types].xml",
                &types(
                    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
                ),
            ),
            (
                "word/document.xml",
                "<?xml version=\"1.0\"?>\r\n<!-- c --><!DOCTYPE d [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><w:document>&e;</w:document>",
            ),
        ]);
        assert_eq!(sniff(&xxe).unwrap_err().code, ErrorCode::UnsafeDocument);
        assert!(
            !declares_dtd(b"<?xml version=\"1.0\"?><w:document><!DOCTYPE x></w:document>"),
            "only before the root"
        );
    }

    #[test]
    fn ole_containers_are_told_apart() {
        let mut doc = OLE_MAGIC.to_vec();
        doc.extend("WordDocument".encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(sniff(&doc).unwrap_err().code, ErrorCode::LegacyFormat);
        let mut enc = OLE_MAGIC.to_vec();
        enc.extend("EncryptionInfo".encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(sniff(&enc).unwrap_err().code, ErrorCode::EncryptedDocument);
    }

    /// Runs `f` on another thread and fails the test if it takes more than five seconds:
    /// reading a device or a FIFO would never end.
    fn within_5s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(f()).unwrap());
        rx.recv_timeout(std::time::Duration::from_secs(5))
            .expect("returned without reading forever")
    }

    fn docx() -> Vec<u8> {
        package(&[
            (
                "[Content_Types].xml",
                &types(
                    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
                ),
            ),
            ("word/document.xml", "<w:document/>"),
        ])
    }

    #[test]
    fn open_reads_a_document_once_and_checks_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("essay.bin");
        std::fs::write(&path, docx()).unwrap();
        let doc = open(&path).unwrap();
        assert_eq!(
            (doc.kind, doc.bytes, doc.path),
            (DocKind::Docx, docx(), path.clone())
        );
        let info = inspect(&path);
        assert_eq!(
            (info.kind, info.size),
            (Some(DocKind::Docx), docx().len() as u64)
        );
        std::fs::write(&path, b"just text").unwrap();
        assert_eq!(open(&path).unwrap_err().code, ErrorCode::NotADocument);
        assert_eq!(
            open(&dir.path().join("missing")).unwrap_err().code,
            ErrorCode::Io
        );
    }

    #[test]
    fn a_folder_has_its_own_message() {
        let dir = tempfile::tempdir().unwrap();
        let err = open(dir.path()).unwrap_err();
        assert_eq!(err.code, ErrorCode::NotADocument);
        assert!(err.message.contains("folder"), "{}", err.message);
        assert!(
            inspect(dir.path())
                .problem
                .unwrap()
                .message
                .contains("folder")
        );
    }

    #[cfg(unix)]
    #[test]
    fn devices_fifos_and_sockets_are_refused_before_a_byte_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let mut paths = vec![(socket, "socket")];
        if made.is_ok_and(|s| s.success()) {
            paths.push((fifo, "pipe"));
        }
        if Path::new("/dev/zero").exists() {
            paths.push(("/dev/zero".into(), "device"));
        }
        for (path, word) in paths {
            let shown = path.display().to_string();
            let (err, info) = within_5s(move || (open(&path).unwrap_err(), inspect(&path)));
            assert_eq!(
                err.code,
                ErrorCode::NotADocument,
                "{shown}: {}",
                err.message
            );
            assert!(err.message.contains(word), "{shown}: {}", err.message);
            assert_eq!(info.problem, Some(err), "{shown}");
        }
    }

    #[test]
    fn a_file_over_the_limit_is_too_large_without_being_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.docx");
        let f = std::fs::File::create(&path).unwrap();
        // Sparse: no time or disk is spent on the bytes.
        f.set_len(MAX_DOCUMENT_BYTES + 1).unwrap();
        let err = open(&path).unwrap_err();
        assert_eq!(err.code, ErrorCode::TooLarge);
        assert_eq!(
            err.message,
            "This file is 9.00 MB; the citation service accepts documents up to 8.99 MB (a 12 MB request)."
        );
        assert_eq!(inspect(&path).size, MAX_DOCUMENT_BYTES + 1);
        f.set_len(MAX_DOCUMENT_BYTES).unwrap();
        assert_eq!(
            open(&path).unwrap_err().code,
            ErrorCode::NotADocument,
            "exactly the limit is read and sniffed"
        );
    }

    #[test]
    fn the_limits_read_12_mb_as_twelve_million_bytes() {
        assert_eq!(MAX_REQUEST_BYTES, 12_000_000);
        assert_eq!(MAX_DOCUMENT_BYTES, 8_999_808);
        assert_eq!(megabytes(MAX_DOCUMENT_BYTES, false), "8.99");
        assert_eq!(megabytes(MAX_DOCUMENT_BYTES, true), "9.00");
        assert_eq!(megabytes(1, true), "0.01");
        assert_eq!(megabytes(12_000_000, false), "12.00");
    }
}
