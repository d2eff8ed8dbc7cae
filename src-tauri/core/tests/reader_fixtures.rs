//! The local reader against real Word and PowerPoint files, checked against what
//! python-docx and python-pptx report (tests/data/reader/expected.json, written by
//! tests/data/reader/expected.py).

use casebook_core::ErrorCode;
use casebook_core::citations::documents::DocKind;
use casebook_core::citations::reader::{self, LocalDocument};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

fn data(rel: &str) -> Vec<u8> {
    std::fs::read(data_dir().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn expected() -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(data_dir().join("reader/expected.json")).unwrap();
    match serde_json::from_str(&text).unwrap() {
        Value::Object(m) => m,
        _ => panic!("expected.json is not an object"),
    }
}

/// Tabs and breaks read as spaces; the libraries give "\t", "\n" and "\v".
fn norm(s: &str) -> String {
    s.replace(['\t', '\n', '\u{b}', '\r'], " ")
}

fn texts(v: &Value) -> Vec<(String, Option<String>)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                norm(p["text"].as_str().unwrap()),
                p["style"].as_str().map(str::to_owned),
            )
        })
        .filter(|(t, _)| !t.trim().is_empty())
        .collect()
}

/// The reader's paragraphs, References heading and entries as one list of texts.
fn everything(doc: &LocalDocument) -> Vec<String> {
    let mut all: Vec<String> = doc.paragraphs.iter().map(|p| norm(&p.text)).collect();
    all.extend(doc.references_heading.iter().map(|h| norm(h)));
    all.extend(doc.references.iter().map(|r| norm(r)));
    all
}

/// Each expected text, in order, among `got` (trimmed): what is left over is what the
/// reader found beyond the library.
fn missing_in_order(want: &[String], got: &[String]) -> Vec<String> {
    let got: Vec<&str> = got.iter().map(|s| s.trim()).collect();
    let mut at = 0;
    let mut missing = Vec::new();
    for w in want {
        match got[at..].iter().position(|g| *g == w.trim()) {
            Some(n) => at += n + 1,
            None => missing.push(w.clone()),
        }
    }
    missing
}

fn fixture_names(kind: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(data_dir().join(kind))
        .unwrap()
        .map(|e| format!("{kind}/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    names.sort();
    names
}

/// How many more non-blank paragraphs the reader finds than python-docx's body and
/// table paragraphs, and why.
const DOCX_BEYOND_PYTHON_DOCX: &[(&str, usize)] = &[
    // 22 content controls (a bibliography, rich text, repeating sections, a date, a
    // drop-down) and text boxes, shapes and WordArt: python-docx reads none of them.
    ("docx/citations-bibliography-toc.docx", 22),
    // One text box ("Here is a text box").
    ("docx/various-textbox-footnote-citation.docx", 1),
];

#[test]
fn docx_paragraphs_match_python_docx() {
    let expected = expected();
    let names = fixture_names("docx");
    assert_eq!(names.len(), 11);
    for name in names {
        let want_all = &expected[&name]["paragraphs"];
        let want: Vec<String> = texts(want_all).into_iter().map(|t| t.0).collect();
        let doc = reader::read(&data(&name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(doc.kind, DocKind::Docx);
        let got = everything(&doc);
        let missing = missing_in_order(&want, &got);
        assert!(
            missing.is_empty(),
            "{name}: not read, or out of order: {missing:#?}"
        );
        let beyond = DOCX_BEYOND_PYTHON_DOCX
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |(_, k)| *k);
        assert_eq!(got.len(), want.len() + beyond, "{name}: {got:#?}");
        // Styles come through for what both read.
        for (text, style) in texts(want_all) {
            if let Some(p) = doc.paragraphs.iter().find(|p| norm(&p.text) == text)
                && style.as_deref() != Some("Normal")
            {
                assert_eq!(p.style, style, "{name}: style of {text:?}");
            }
        }
        for (i, p) in doc.paragraphs.iter().enumerate() {
            assert_eq!(p.index as usize, i);
            assert_eq!(p.slide, None);
        }
    }
}

#[test]
fn tracked_changes_read_as_accepted() {
    // python-docx leaves inserted text out of Paragraph.text; the expected texts
    // take it from the XML, and deleted text must not appear.
    let expected = expected();
    let want_all = expected["docx/tracked-changes-hyperlinks.docx"]["paragraphs"]
        .as_array()
        .unwrap();
    let differs = want_all
        .iter()
        .filter(|p| p["text"] != p["pythonDocxText"])
        .count();
    assert!(differs > 5, "the fixture has insertions python-docx misses");
    let doc = reader::read(&data("docx/tracked-changes-hyperlinks.docx")).unwrap();
    let chars: usize = doc.paragraphs.iter().map(|p| p.text.chars().count()).sum();
    assert!(chars > 1200, "inserted text is read: {chars} chars");
    let doc = reader::read(&data("docx/comments-ins-del-lorem.docx")).unwrap();
    let chars: usize = doc.paragraphs.iter().map(|p| p.text.chars().count()).sum();
    assert!((540..560).contains(&chars), "{chars}");
}

#[test]
fn word_bibliography_is_the_references_section() {
    let doc = reader::read(&data("docx/citations-bibliography-toc.docx")).unwrap();
    assert_eq!(doc.references_heading.as_deref(), Some("Bibliography"));
    assert_eq!(
        doc.references,
        vec!["Mattmann, C., & Zitting, J. (2011). Tika in Action. The Internet: Manning."]
    );
    assert!(
        doc.paragraphs
            .iter()
            .any(|p| p.text == "(Mattmann & Zitting, 2011)"),
        "a CITATION field's result is read"
    );
    assert!(
        !doc.paragraphs
            .iter()
            .any(|p| p.text.contains("Bibliography"))
    );
}

#[test]
fn pptx_paragraphs_match_python_pptx() {
    let expected = expected();
    let names = fixture_names("pptx");
    assert_eq!(names.len(), 7);
    for name in names {
        let doc = reader::read(&data(&name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(doc.kind, DocKind::Pptx);
        assert_eq!(doc.references_heading, None, "{name}");
        let slides = expected[&name]["slides"].as_array().unwrap();
        let notes = expected[&name]["notes"].as_array().unwrap();
        // Each slide's paragraphs, then its speaker notes.
        let mut want: Vec<(u32, String, Option<String>, bool)> = Vec::new();
        for (i, (s, n)) in slides.iter().zip(notes).enumerate() {
            for (text, style) in texts(s) {
                want.push((i as u32 + 1, text, style, false));
            }
            for (text, style) in texts(n) {
                want.push((i as u32 + 1, text, style, true));
            }
        }
        let got: Vec<(u32, String, Option<String>, bool)> = doc
            .paragraphs
            .iter()
            .map(|p| (p.slide.unwrap(), norm(&p.text), p.style.clone(), p.notes))
            .collect();
        assert_eq!(got, want, "{name}");
    }
}

/// The reader and the sandbox's own parser agree, so a sandbox cite's summary
/// compares like with like.
#[test]
fn reader_agrees_with_the_sandbox_parser() {
    for name in fixture_names("docx")
        .into_iter()
        .chain(fixture_names("pptx"))
    {
        let bytes = data(&name);
        let doc = reader::read(&bytes).unwrap();
        let theirs = casebook_sandbox::engine::parse(&bytes).unwrap();
        // The sandbox's parse reports slides, not their speaker notes.
        let ours: Vec<(String, Option<u32>, Option<String>)> = doc
            .paragraphs
            .iter()
            .filter(|p| !p.notes)
            .map(|p| (norm(&p.text), p.slide, p.style.clone()))
            .collect();
        let sandbox: Vec<(String, Option<u32>, Option<String>)> = theirs
            .paragraphs
            .iter()
            .map(|p| (norm(&p.text), p.slide, p.style.clone()))
            .collect();
        assert_eq!(ours, sandbox, "{name}");
        let refs: Vec<String> = theirs.references.iter().map(|r| r.text.clone()).collect();
        assert_eq!(doc.references, refs, "{name}");
        assert_eq!(doc.references_heading, theirs.references_heading, "{name}");
    }
}

#[test]
fn bad_inputs_are_errors() {
    for (name, code) in [
        (
            "bad/encrypted-password-is-pass.docx",
            ErrorCode::EncryptedDocument,
        ),
        (
            "bad/encrypted-password-is-tika.pptx",
            ErrorCode::EncryptedDocument,
        ),
        ("bad/legacy-word97-hyperlink.doc", ErrorCode::LegacyFormat),
        ("bad/legacy-ppt97-basic.ppt", ErrorCode::LegacyFormat),
        ("bad/truncated-zip.docx", ErrorCode::CorruptDocument),
        (
            "bad/clusterfuzz-corrupt-zip.docx",
            ErrorCode::CorruptDocument,
        ),
        ("bad/xxe-external-entity.docx", ErrorCode::UnsafeDocument),
    ] {
        let err = reader::read(&data(name)).unwrap_err();
        assert_eq!(err.code(), code, "{name}: {err}");
    }
    assert_eq!(reader::read(b"").unwrap_err().code(), ErrorCode::EmptyFile);
}

/// Every prefix of a few fixtures, and many with bytes changed: errors or readings,
/// never a panic.
#[test]
fn damaged_documents_never_panic() {
    for name in [
        "docx/hyperlink-fragments.docx",
        "pptx/group-table-pictures-small.pptx",
    ] {
        let bytes = data(name);
        for len in (0..bytes.len()).step_by(97) {
            let _ = reader::read(&bytes[..len]);
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..300 {
            let mut b = bytes.clone();
            for _ in 0..1 + next() % 8 {
                let at = (next() % b.len() as u64) as usize;
                b[at] = next() as u8;
            }
            let _ = reader::read(&b);
        }
    }
}

// ---- small documents written here, for shapes the fixtures lack ----

const W: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

fn package(kind: DocKind, parts: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write;
    let main = match kind {
        DocKind::Docx => {
            "<Override PartName=\"/word/document.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/>"
        }
        DocKind::Pptx => {
            "<Override PartName=\"/ppt/presentation.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml\"/>"
        }
    };
    let types = format!(
        "<?xml version=\"1.0\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">{main}</Types>"
    );
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("[Content_Types].xml", opts).unwrap();
    zip.write_all(types.as_bytes()).unwrap();
    for (name, data) in parts {
        zip.start_file(*name, opts).unwrap();
        zip.write_all(data).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

fn docx(body: &str) -> Vec<u8> {
    let xml = format!(
        "<w:document xmlns:w=\"{W}\" xmlns:mc=\"http://schemas.openxmlformats.org/markup-compatibility/2006\"><w:body>{body}</w:body></w:document>"
    );
    package(DocKind::Docx, &[("word/document.xml", xml.as_bytes())])
}

fn para(style: Option<&str>, inner: &str) -> String {
    let ppr = style.map_or(String::new(), |s| {
        format!("<w:pPr><w:pStyle w:val=\"{s}\"/></w:pPr>")
    });
    format!("<w:p>{ppr}{inner}</w:p>")
}

fn run(text: &str) -> String {
    format!("<w:r><w:t xml:space=\"preserve\">{text}</w:t></w:r>")
}

#[test]
fn word_markup_is_read_as_word_shows_it() {
    let body = [
        para(
            None,
            &format!(
                "{}<w:ins><w:r><w:t>kept </w:t></w:r></w:ins><w:del><w:r><w:delText>gone </w:delText></w:r></w:del>\
<w:hyperlink><w:r><w:t>link</w:t></w:r></w:hyperlink><w:r><w:tab/><w:t>a</w:t><w:br/><w:t>b</w:t></w:r>\
<w:r><w:fldChar w:fldCharType=\"begin\"/></w:r><w:r><w:instrText>CITATION x</w:instrText></w:r><w:r><w:fldChar w:fldCharType=\"separate\"/></w:r>{}<w:r><w:fldChar w:fldCharType=\"end\"/></w:r>\
<w:smartTag><w:r><w:t> tag</w:t></w:r></w:smartTag><w:sdt><w:sdtContent><w:r><w:t> cc</w:t></w:r></w:sdtContent></w:sdt>\
<w:fldSimple><w:r><w:t> simple</w:t></w:r></w:fldSimple><w:r><w:t>&amp;&#233;&#x41;&unknown;</w:t></w:r>",
                run("Start "),
                run(" (Doe, 2001)")
            ),
        ),
        para(None, "<w:r><w:t>   </w:t></w:r>"),
        "<w:tbl><w:tr><w:tc>".to_owned() + &para(None, &run("cell")) + "</w:tc></w:tr></w:tbl>",
        para(None, &format!("<w:r><mc:AlternateContent><mc:Choice><w:drawing><w:txbxContent>{}</w:txbxContent></w:drawing></mc:Choice><mc:Fallback><w:pict><w:txbxContent>{}</w:txbxContent></w:pict></mc:Fallback></mc:AlternateContent></w:r>{}", para(None, &run("in box")), para(None, &run("in box")), run("around"))),
        para(Some("Heading1"), &run("Works Cited:")),
        para(None, &run("Doe, J. (2001). A.")),
        "<w:sdt><w:sdtContent>".to_owned() + &para(None, &run("Roe, R. (2002). B.")) + "</w:sdtContent></w:sdt>",
        para(Some("Heading2"), &run("Appendix")),
        para(None, &run("After.")),
        "<w:sectPr/>".to_owned(),
    ]
    .concat();
    let doc = reader::read(&docx(&body)).unwrap();
    let texts: Vec<&str> = doc.paragraphs.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(
        texts,
        vec![
            "Start kept link a b (Doe, 2001) tag cc simple&éA",
            "cell",
            "around",
            "in box",
            "Appendix",
            "After.",
        ]
    );
    assert_eq!(doc.references_heading.as_deref(), Some("Works Cited:"));
    assert_eq!(
        doc.references,
        vec!["Doe, J. (2001). A.", "Roe, R. (2002). B."]
    );
}

#[test]
fn a_references_list_in_a_container_ends_with_it() {
    let body = [
        "<w:sdt><w:sdtContent>".to_owned(),
        para(None, &run("References")),
        para(None, &run("Doe, J. (2001). A.")),
        "</w:sdtContent></w:sdt>".to_owned(),
        para(None, &run("Body after the list.")),
    ]
    .concat();
    let doc = reader::read(&docx(&body)).unwrap();
    assert_eq!(doc.references, vec!["Doe, J. (2001). A."]);
    assert_eq!(doc.paragraphs.len(), 1);
}

#[test]
fn heading_styles_are_known_by_name_too() {
    let styles = format!(
        "<w:styles xmlns:w=\"{W}\"><w:style w:type=\"paragraph\" w:styleId=\"berschrift1\"><w:name w:val=\"heading 1\"/></w:style></w:styles>"
    );
    let body = [
        para(None, &run("Bibliography")),
        para(None, &run("Doe, J. (2001). A.")),
        para(Some("berschrift1"), &run("Anhang")),
        para(None, &run("Body.")),
    ]
    .concat();
    let xml = format!("<w:document xmlns:w=\"{W}\"><w:body>{body}</w:body></w:document>");
    let bytes = package(
        DocKind::Docx,
        &[
            ("word/document.xml", xml.as_bytes()),
            ("word/styles.xml", styles.as_bytes()),
        ],
    );
    let doc = reader::read(&bytes).unwrap();
    assert_eq!(doc.references, vec!["Doe, J. (2001). A."]);
    assert_eq!(doc.paragraphs.len(), 2);
}

const P: &str = "http://schemas.openxmlformats.org/presentationml/2006/main";
const A: &str = "http://schemas.openxmlformats.org/drawingml/2006/main";
const R: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

fn slide(shapes: &str) -> String {
    format!(
        "<p:sld xmlns:p=\"{P}\" xmlns:a=\"{A}\"><p:cSld><p:spTree>{shapes}</p:spTree></p:cSld></p:sld>"
    )
}

fn shape(ph: Option<&str>, paras: &[&str]) -> String {
    let ph = ph.map_or(String::new(), |t| format!("<p:ph type=\"{t}\"/>"));
    let ps: String = paras
        .iter()
        .map(|t| format!("<a:p><a:r><a:t>{t}</a:t></a:r></a:p>"))
        .collect();
    format!(
        "<p:sp><p:nvSpPr><p:cNvPr id=\"2\" name=\"x\"/><p:cNvSpPr/><p:nvPr>{ph}</p:nvPr></p:nvSpPr><p:txBody>{ps}</p:txBody></p:sp>"
    )
}

/// A deck whose slides are listed in the order given, stored under other names.
fn pptx(slides: &[String]) -> Vec<u8> {
    let ids: String = (0..slides.len())
        .rev()
        .map(|i| format!("<p:sldId id=\"{}\" r:id=\"rId{i}\"/>", 256 + i))
        .collect();
    let pres = format!(
        "<p:presentation xmlns:p=\"{P}\" xmlns:r=\"{R}\"><p:sldIdLst>{ids}</p:sldIdLst></p:presentation>"
    );
    let rels: String = (0..slides.len())
        .map(|i| {
            format!("<Relationship Id=\"rId{i}\" Type=\"{R}/slide\" Target=\"slides/s{i}.xml\"/>")
        })
        .collect();
    let rels = format!(
        "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">{rels}</Relationships>"
    );
    // Listed in reverse: the last slide given is the first shown.
    let names: Vec<String> = (0..slides.len())
        .map(|i| format!("ppt/slides/s{i}.xml"))
        .collect();
    let mut parts: Vec<(&str, &[u8])> = vec![
        ("ppt/presentation.xml", pres.as_bytes()),
        ("ppt/_rels/presentation.xml.rels", rels.as_bytes()),
    ];
    for (n, s) in names.iter().zip(slides) {
        parts.push((n, s.as_bytes()));
    }
    package(DocKind::Pptx, &parts)
}

#[test]
fn slides_are_read_in_presentation_order_with_a_references_slide() {
    let group = format!(
        "<p:grpSp>{}<p:grpSp>{}</p:grpSp></p:grpSp>",
        shape(None, &["grouped"]),
        shape(None, &["deeper"])
    );
    let table = "<p:graphicFrame><a:graphic><a:graphicData><a:tbl><a:tr><a:tc><a:txBody><a:p><a:fld><a:t>cell</a:t></a:fld><a:br/><a:r><a:t>two</a:t></a:r></a:p></a:txBody></a:tc></a:tr></a:tbl></a:graphicData></a:graphic></p:graphicFrame>";
    // Listed in reverse, so the References slide (given first) is shown last.
    let bytes = pptx(&[
        slide(
            &(shape(Some("title"), &["Sources"]) + &shape(None, &["Doe (2001).", "Roe (2002)."])),
        ),
        slide(
            &(shape(Some("ctrTitle"), &["Deck"])
                + &shape(Some("subTitle"), &["Sub"])
                + &group
                + table),
        ),
    ]);
    let doc = reader::read(&bytes).unwrap();
    let got: Vec<(u32, &str, Option<&str>)> = doc
        .paragraphs
        .iter()
        .map(|p| (p.slide.unwrap(), p.text.as_str(), p.style.as_deref()))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, "Deck", Some("Title")),
            (1, "Sub", Some("Subtitle")),
            (1, "grouped", None),
            (1, "deeper", None),
            (1, "cell two", None),
        ]
    );
    assert_eq!(doc.references_heading.as_deref(), Some("Sources"));
    assert_eq!(doc.references, vec!["Doe (2001).", "Roe (2002)."]);

    // A slide without a title placeholder is headed by its first paragraph.
    let bytes = pptx(&[slide(&shape(None, &["References:", "Doe (2001)."]))]);
    let doc = reader::read(&bytes).unwrap();
    assert_eq!(doc.references, vec!["Doe (2001)."]);
    assert!(doc.paragraphs.is_empty());
}

#[test]
fn hostile_packages_are_refused() {
    // A DTD in a slide: refused, never expanded.
    let evil = format!(
        "<?xml version=\"1.0\"?><!DOCTYPE p:sld [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>{}",
        slide(&shape(None, &["&x;"]))
    );
    assert_eq!(
        reader::read(&pptx(&[evil])).unwrap_err().code(),
        ErrorCode::UnsafeDocument
    );
    // A slide the presentation lists but the package lacks.
    let pres = format!(
        "<p:presentation xmlns:p=\"{P}\" xmlns:r=\"{R}\"><p:sldIdLst><p:sldId id=\"256\" r:id=\"rId9\"/></p:sldIdLst></p:presentation>"
    );
    let bytes = package(DocKind::Pptx, &[("ppt/presentation.xml", pres.as_bytes())]);
    assert_eq!(
        reader::read(&bytes).unwrap_err().code(),
        ErrorCode::CorruptDocument
    );
    // Malformed XML.
    let bytes = package(
        DocKind::Docx,
        &[(
            "word/document.xml",
            b"<w:document xmlns:w=\"x\"><w:body></w:document>",
        )],
    );
    assert_eq!(
        reader::read(&bytes).unwrap_err().code(),
        ErrorCode::CorruptDocument
    );
}

#[test]
fn a_part_inflating_past_the_cap_is_refused() {
    let head = format!("<w:document xmlns:w=\"{W}\"><w:body><w:p><w:r><w:t>");
    let mut xml = head.into_bytes();
    xml.resize(xml.len() + reader::MAX_PART_BYTES as usize, b'a');
    xml.extend_from_slice(b"</w:t></w:r></w:p></w:body></w:document>");
    let bytes = package(DocKind::Docx, &[("word/document.xml", &xml)]);
    assert!(bytes.len() < 1024 * 1024, "{}", bytes.len());
    assert_eq!(
        reader::read(&bytes).unwrap_err().code(),
        ErrorCode::TooLarge
    );
}

/// A card says before citing that a document has no References section: Casebook's
/// own reading, no request.
#[test]
fn a_document_without_references_is_known_before_citing() {
    let open = |name: &str| std::fs::File::open(data_dir().join(name)).unwrap();
    let with = reader::references_in(&open("docx/citations-bibliography-toc.docx")).unwrap();
    assert!(with > 0, "a bibliography's entries are counted: {with}");
    let mut none = 0;
    for name in fixture_names("docx")
        .into_iter()
        .chain(fixture_names("pptx"))
    {
        let n = reader::references_in(&open(&name)).unwrap();
        let doc = reader::read(&data(&name)).unwrap();
        assert_eq!(
            n == 0,
            doc.references_heading.is_none() || doc.references.is_empty(),
            "{name}"
        );
        none += usize::from(n == 0);
    }
    assert!(none > 0, "some fixtures have no References section");
    let garbage = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(garbage.path(), b"not a document").unwrap();
    assert_eq!(reader::references_in(garbage.as_file()), None);
}
