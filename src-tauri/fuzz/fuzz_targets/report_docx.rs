//! The Markdown-to-Word report writer, on any title, Markdown and sources (the input is
//! split at NUL bytes: title, Markdown, then one source a line as `title<TAB>url`). Every
//! report becomes a package Casebook itself accepts and reads back: the checks a dropped
//! or returned document passes, every entry inflated, the title among its paragraphs.
#![no_main]
use casebook_core::citations::{documents, reader, returned};
use casebook_core::missions::export::report_docx::{ReportDoc, ReportSource, to_docx};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\0');
    let title = parts.next().unwrap_or("").to_owned();
    let markdown = parts.next().unwrap_or("").to_owned();
    let sources = parts
        .next()
        .unwrap_or("")
        .lines()
        .take(64)
        .enumerate()
        .map(|(i, line)| {
            let (title, url) = line.split_once('\t').unwrap_or(("", line));
            ReportSource {
                title: title.to_owned(),
                url: url.to_owned(),
                accessed_ms: 1_765_000_000_000 + i as i64 * 86_400_000,
            }
        })
        .collect();
    let doc = ReportDoc {
        title: title.split_whitespace().collect::<Vec<_>>().join(" "),
        markdown,
        sources,
        date_ms: 1_765_000_000_000,
        author: None,
    };
    let bytes = to_docx(&doc).expect("a report always makes a document");
    assert_eq!(
        returned::check(&bytes).expect("Casebook accepts its own report"),
        documents::DocKind::Docx
    );
    let read = reader::read(&bytes).expect("Casebook reads its own report");
    let first = doc.title.trim();
    if !first.is_empty() && !first.chars().any(char::is_control) {
        assert!(
            read.paragraphs.iter().any(|p| p.text.contains(first)),
            "the title is among the paragraphs"
        );
    }
});
