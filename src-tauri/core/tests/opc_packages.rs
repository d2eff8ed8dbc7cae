//! Packages read as Open Packaging Conventions say, by the client and the sandbox
//! alike: the main part is the one `_rels/.rels` names, typed by its Override or the
//! Default for its extension, part names compared case-insensitively; and every part
//! a cite adds has a content type and relationships whose targets are there.

use casebook_core::citations::documents::{self, DocKind};
use casebook_core::citations::reader;
use casebook_sandbox::engine;
use casebook_testsupport::files::fixture_bytes as fixture;
use std::collections::HashMap;
use std::io::{Cursor, Read, Write};

fn parts(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    (0..z.len())
        .map(|i| {
            let mut f = z.by_index(i).unwrap();
            let mut data = Vec::new();
            f.read_to_end(&mut data).unwrap();
            (f.name().to_owned(), data)
        })
        .collect()
}

fn zip_of(parts: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in parts {
        w.start_file(name.as_str(), opts).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// The package with `[Content_Types].xml` replaced by what `types` makes of the part
/// names, and each part renamed as `rename` says.
fn retyped(
    bytes: &[u8],
    types: impl Fn(&[String]) -> String,
    rename: impl Fn(&str) -> String,
) -> Vec<u8> {
    let mut ps = parts(bytes);
    let names: Vec<String> = ps.iter().map(|(n, _)| rename(n)).collect();
    for (name, data) in ps.iter_mut() {
        if name == "[Content_Types].xml" {
            *data = types(&names).into_bytes();
        } else {
            *name = rename(name);
        }
    }
    zip_of(&ps)
}

const TYPES_NS: &str = "http://schemas.openxmlformats.org/package/2006/content-types";
const RELS: &str = "application/vnd.openxmlformats-package.relationships+xml";

fn attrs(e: &quick_xml::events::BytesStart<'_>) -> HashMap<String, String> {
    e.attributes()
        .flatten()
        .map(|a| {
            (
                String::from_utf8_lossy(a.key.local_name().as_ref()).into_owned(),
                a.unescape_value().unwrap().into_owned(),
            )
        })
        .collect()
}

fn elements(xml: &[u8], name: &str) -> Vec<HashMap<String, String>> {
    use quick_xml::events::Event;
    let mut r = quick_xml::Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut out = Vec::new();
    loop {
        match r.read_event_into(&mut buf).expect("well-formed XML") {
            Event::Empty(e) | Event::Start(e) if e.local_name().as_ref() == name.as_bytes() => {
                out.push(attrs(&e))
            }
            Event::Eof => return out,
            _ => {}
        }
        buf.clear();
    }
}

/// Every part has a content type and every internal relationship's target is a part.
fn assert_valid_package(bytes: &[u8], what: &str) {
    let ps = parts(bytes);
    let lower: Vec<String> = ps.iter().map(|(n, _)| n.to_ascii_lowercase()).collect();
    let (_, types) = ps.iter().find(|(n, _)| n == "[Content_Types].xml").unwrap();
    let defaults: Vec<String> = elements(types, "Default")
        .iter()
        .map(|a| a["Extension"].to_ascii_lowercase())
        .collect();
    let overrides: Vec<String> = elements(types, "Override")
        .iter()
        .map(|a| a["PartName"].trim_start_matches('/').to_ascii_lowercase())
        .collect();
    for name in &lower {
        if name == "[content_types].xml" || name.ends_with('/') {
            continue;
        }
        let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
        assert!(
            overrides.contains(name) || defaults.iter().any(|d| d == ext),
            "{what}: {name} has no content type"
        );
    }
    for (name, data) in &ps {
        let Some((dir, file)) = name.rsplit_once("_rels/") else {
            continue;
        };
        let source_dir = dir.trim_end_matches('/');
        let _ = file;
        for rel in elements(data, "Relationship") {
            if rel
                .get("TargetMode")
                .is_some_and(|m| m.eq_ignore_ascii_case("external"))
            {
                continue;
            }
            let target = rel["Target"].split('#').next().unwrap();
            let mut segs: Vec<&str> = if target.starts_with('/') {
                Vec::new()
            } else {
                source_dir.split('/').filter(|s| !s.is_empty()).collect()
            };
            for s in target.split('/') {
                match s {
                    "" | "." => {}
                    ".." => {
                        segs.pop();
                    }
                    s => segs.push(s),
                }
            }
            let resolved = segs.join("/").to_ascii_lowercase();
            assert!(
                lower.contains(&resolved),
                "{what}: {name} points at {resolved}, which is not in the package"
            );
        }
    }
}

const DOCX_MAIN: &str =
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml";

/// A .docx as System.IO.Packaging-style generators write it: its main part typed by
/// the Default for `.xml`, named in `_rels/.rels` in another case than its zip entry.
fn docx_typed_by_default() -> Vec<u8> {
    let original = fixture("docx/headings-lorem-multirun.docx");
    let plain = retyped(
        &original,
        |names| {
            let mut t = format!(
                r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="{TYPES_NS}"><Default Extension="rels" ContentType="{RELS}"/><Default Extension="xml" ContentType="{DOCX_MAIN}"/><Default Extension="jpeg" ContentType="image/jpeg"/><Default Extension="png" ContentType="image/png"/>"#
            );
            // Every other XML part by an Override of its own type, as such generators do.
            for n in names {
                let ty = match n.as_str() {
                    "word/styles.xml" => {
                        "application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"
                    }
                    "word/settings.xml" => {
                        "application/vnd.openxmlformats-officedocument.wordprocessingml.settings+xml"
                    }
                    "docProps/core.xml" => {
                        "application/vnd.openxmlformats-package.core-properties+xml"
                    }
                    "docProps/app.xml" => {
                        "application/vnd.openxmlformats-officedocument.extended-properties+xml"
                    }
                    _ => continue,
                };
                t.push_str(&format!(
                    r#"<Override PartName="/{n}" ContentType="{ty}"/>"#
                ));
            }
            t.push_str("</Types>");
            t
        },
        |n| n.to_owned(),
    );
    let mut ps = parts(&plain);
    for (name, data) in ps.iter_mut() {
        if name == "_rels/.rels" {
            *data = String::from_utf8(data.clone())
                .unwrap()
                .replace(
                    "Target=\"word/document.xml\"",
                    "Target=\"/Word/Document.xml\"",
                )
                .into_bytes();
            assert!(String::from_utf8_lossy(data).contains("/Word/Document.xml"));
        }
    }
    zip_of(&ps)
}

#[test]
fn a_main_part_typed_by_default_is_read_and_cited_by_both() {
    let doc = docx_typed_by_default();
    assert_eq!(
        documents::sniff_main(&doc).unwrap(),
        (DocKind::Docx, "word/document.xml".to_owned())
    );
    let local = reader::read(&doc).unwrap();
    assert!(!local.paragraphs.is_empty());
    let parsed = engine::parse(&doc).unwrap();
    assert_eq!(parsed.kind, engine::Kind::Docx);
    assert_eq!(
        parsed
            .paragraphs
            .iter()
            .map(|p| &p.text)
            .collect::<Vec<_>>(),
        local.paragraphs.iter().map(|p| &p.text).collect::<Vec<_>>()
    );
    let cited = engine::cite(&doc, &engine::CiteOptions::default()).unwrap();
    assert!(cited.stats.citations_inserted > 0);
    assert_eq!(documents::sniff(&cited.bytes).unwrap(), DocKind::Docx);
    assert_valid_package(&cited.bytes, "cited docx");
}

#[test]
fn a_strict_package_relationship_names_the_main_part() {
    let original = fixture("docx/headings-lorem-multirun.docx");
    let mut ps = parts(&original);
    for (name, data) in ps.iter_mut() {
        if name == "_rels/.rels" {
            *data = String::from_utf8(data.clone())
                .unwrap()
                .replace(
                    "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument",
                    "http://purl.oclc.org/ooxml/officeDocument/relationships/officeDocument",
                )
                .into_bytes();
        }
    }
    let strict = zip_of(&ps);
    assert_eq!(documents::sniff(&strict).unwrap(), DocKind::Docx);
    assert_eq!(
        engine::detect(&strict).unwrap(),
        engine::Kind::Docx,
        "the sandbox reads it too"
    );
}

#[test]
fn a_deck_typed_only_by_overrides_gets_a_references_slide_with_typed_parts() {
    let original = fixture("pptx/title-bullets-notes.pptx");
    let types = parts(&original)
        .into_iter()
        .find(|(n, _)| n == "[Content_Types].xml")
        .unwrap()
        .1;
    let types = String::from_utf8(types).unwrap();
    let overridden = retyped(
        &original,
        |names| {
            // No Default for .rels: every relationships part by Override instead.
            let mut t = types.clone();
            let start = t
                .find("<Default Extension=\"rels\"")
                .expect("a Default for .rels");
            let end = start + t[start..].find("/>").unwrap() + 2;
            t.replace_range(start..end, "");
            let overrides: String = names
                .iter()
                .filter(|n| n.ends_with(".rels"))
                .map(|n| format!(r#"<Override PartName="/{n}" ContentType="{RELS}"/>"#))
                .collect();
            t.replace("</Types>", &format!("{overrides}</Types>"))
        },
        |n| n.to_owned(),
    );
    assert_valid_package(&overridden, "the deck as sent");
    let cited = engine::cite(&overridden, &engine::CiteOptions::default()).unwrap();
    assert!(cited.stats.references_added > 0, "a References slide added");
    assert_valid_package(&cited.bytes, "the cited deck");
    assert_eq!(documents::sniff(&cited.bytes).unwrap(), DocKind::Pptx);
}
