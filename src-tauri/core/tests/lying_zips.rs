//! Packages whose zip headers lie about their sizes (the local and the central header
//! both, as a careful attacker writes them): what Casebook inflates is bounded by the
//! bytes that come out, never by what the headers declare. A dropped document's reading
//! stops at its caps; a returned one is refused before it is saved (returned_documents.rs
//! has that through the service).

use casebook_core::ErrorCode;
use casebook_core::citations::documents::{self, MAX_INFLATED_BYTES};
use casebook_core::citations::reader::{self, MAX_PART_BYTES};
use casebook_core::citations::returned;
use casebook_testsupport::files::fixture_bytes as fixture;
use std::io::{Cursor, Read, Write};

/// `package` with `part` holding `content` (deflated); every other entry as it was.
fn with_part(package: &[u8], part: &str, content: &[u8]) -> Vec<u8> {
    let mut from = zip::ZipArchive::new(Cursor::new(package)).unwrap();
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(1));
    for i in 0..from.len() {
        let mut entry = from.by_index(i).unwrap();
        let name = entry.name().to_owned();
        out.start_file(name.as_str(), deflated).unwrap();
        if name == part {
            out.write_all(content).unwrap();
        } else {
            std::io::copy(&mut entry, &mut out).unwrap();
        }
    }
    out.finish().unwrap().into_inner()
}

/// `package` with `part`'s inflated size declared as `declared` in its local header and
/// in the central directory, and its checksum too when `crc` is given.
fn lie_about(package: &[u8], part: &str, declared: u32, crc: Option<u32>) -> Vec<u8> {
    let mut out = package.to_vec();
    let le16 = |b: &[u8], at: usize| u16::from_le_bytes([b[at], b[at + 1]]) as usize;
    let le32 = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize;
    let eocd = out.windows(4).rposition(|w| w == b"PK\x05\x06").unwrap();
    let (entries, mut at) = (le16(&out, eocd + 10), le32(&out, eocd + 16));
    let mut lied = 0;
    for _ in 0..entries {
        assert_eq!(&out[at..at + 4], b"PK\x01\x02");
        let (name_len, extra, comment) = (
            le16(&out, at + 28),
            le16(&out, at + 30),
            le16(&out, at + 32),
        );
        let name = String::from_utf8_lossy(&out[at + 46..at + 46 + name_len]).into_owned();
        if name == part {
            let local = le32(&out, at + 42);
            assert_eq!(&out[local..local + 4], b"PK\x03\x04");
            // The central header's size is at 24, the local header's at 22; checksums 4 before.
            for size_at in [at + 24, local + 22] {
                out[size_at..size_at + 4].copy_from_slice(&declared.to_le_bytes());
                if let Some(crc) = crc {
                    out[size_at - 8..size_at - 4].copy_from_slice(&crc.to_le_bytes());
                }
            }
            lied += 1;
        }
        at += 46 + name_len + extra + comment;
    }
    assert_eq!(lied, 1, "{part} is in the package once");
    out
}

/// A main part of `len` bytes: one paragraph of one long run.
fn long_document(len: usize) -> Vec<u8> {
    let head = br#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>"#;
    let tail = b"</w:t></w:r></w:p></w:body></w:document>";
    let mut xml = Vec::with_capacity(len);
    xml.extend_from_slice(head);
    xml.resize(len - tail.len(), b'a');
    xml.extend_from_slice(tail);
    xml
}

#[test]
fn a_dropped_document_whose_main_part_lies_is_read_only_to_the_part_cap() {
    let real = MAX_PART_BYTES as usize + 4 * 1024 * 1024;
    let honest = with_part(
        &fixture("docx/headings-lorem-multirun.docx"),
        "word/document.xml",
        &long_document(real),
    );
    let lying = lie_about(&honest, "word/document.xml", 2048, None);
    let declared: u64 = zip::ZipArchive::new(Cursor::new(&lying))
        .unwrap()
        .by_name("word/document.xml")
        .unwrap()
        .size();
    assert_eq!(declared, 2048, "the lie is what the directory says");
    // The drop's own check reads the directory and the main part's prolog: it passes.
    assert_eq!(documents::sniff(&lying).unwrap(), documents::DocKind::Docx);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lying.docx");
    std::fs::write(&path, &lying).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    // Reading it stops on the real bytes, at the part cap, and says so.
    let err = reader::read_file(&file).unwrap_err();
    assert_eq!(err.code(), ErrorCode::TooLarge, "{}", err.message());
    assert!(
        err.message()
            .contains("word/document.xml inflates to more than 64 MB"),
        "{}",
        err.message()
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        lying,
        "the original is untouched"
    );
}

#[test]
fn inflation_is_counted_on_the_bytes_that_come_out() {
    let content = long_document(3 * 1024 * 1024);
    let honest = with_part(
        &fixture("docx/headings-lorem-multirun.docx"),
        "word/document.xml",
        &content,
    );
    let lying = lie_about(&honest, "word/document.xml", 100, None);
    let mut real = 0u64;
    let mut archive = zip::ZipArchive::new(Cursor::new(&honest)).unwrap();
    for i in 0..archive.len() {
        real += std::io::copy(&mut archive.by_index(i).unwrap(), &mut std::io::sink()).unwrap();
    }
    assert_eq!(
        returned::inflate_all(Cursor::new(&lying), MAX_INFLATED_BYTES).unwrap(),
        real,
        "every real byte counted, whatever the headers say"
    );
    // The bound is crossed on real bytes: one short of them refuses, exactly them passes.
    assert_eq!(
        returned::inflate_all(Cursor::new(&lying), real).unwrap(),
        real
    );
    let err = returned::inflate_all(Cursor::new(&lying), real - 1).unwrap_err();
    assert_eq!(err.code(), ErrorCode::UnsafeDocument, "{}", err.message());
    assert!(
        err.message().contains("smaller than they are"),
        "{}",
        err.message()
    );
    // The directory alone would have let it through.
    assert_eq!(documents::sniff(&lying).unwrap(), documents::DocKind::Docx);
}

#[test]
fn a_returned_package_whose_headers_lie_about_size_and_checksum_is_refused() {
    let honest = with_part(
        &fixture("docx/headings-lorem-multirun.docx"),
        "word/document.xml",
        &long_document(1024 * 1024),
    );
    // Sizes and checksum both made up: the checksum of what comes out does not match.
    let lying = lie_about(&honest, "word/document.xml", 100, Some(0xdead_beef));
    let err = returned::check(&lying).unwrap_err();
    assert_eq!(err.code(), ErrorCode::CorruptDocument, "{}", err.message());
    assert!(
        err.message().contains("word/document.xml"),
        "{}",
        err.message()
    );
    assert!(
        err.message().contains("damaged or incomplete"),
        "{}",
        err.message()
    );
    // With an honest checksum it is only a lie about size, small enough to pass.
    let crc_honest = lie_about(&honest, "word/document.xml", 100, None);
    assert_eq!(
        returned::check(&crc_honest).unwrap(),
        documents::DocKind::Docx
    );
    let mut text = String::new();
    zip::ZipArchive::new(Cursor::new(&crc_honest))
        .unwrap()
        .by_name("word/document.xml")
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(text.len(), 1024 * 1024, "what passes is read whole");
}
