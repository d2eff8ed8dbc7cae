use std::collections::HashSet;
use std::io::{Cursor, Read, Write};
use std::path::PathBuf;

use super::bibliography::{WORKS, Work};
use super::package::Package;
use super::xml::{Ns, Tree, decode, well_formed};
use super::*;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

fn fixture(rel: &str) -> Vec<u8> {
    let p = data_dir().join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn fixtures(dir: &str) -> Vec<(String, Vec<u8>)> {
    let mut names: Vec<String> = std::fs::read_dir(data_dir().join(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let rel = format!("{dir}/{n}");
            let b = fixture(&rel);
            (rel, b)
        })
        .collect()
}

fn all_good() -> Vec<(String, Vec<u8>)> {
    let mut v = fixtures("docx");
    v.extend(fixtures("pptx"));
    v
}

struct Entry {
    name: String,
    raw: Vec<u8>,
    data: Vec<u8>,
    crc: u32,
    method: zip::CompressionMethod,
}

fn entries(bytes: &[u8]) -> Vec<Entry> {
    let mut z = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    (0..z.len())
        .map(|i| {
            let mut raw = Vec::new();
            let (name, crc, method) = {
                let mut f = z.by_index_raw(i).unwrap();
                f.read_to_end(&mut raw).unwrap();
                (f.name().to_owned(), f.crc32(), f.compression())
            };
            let mut data = Vec::new();
            z.by_index(i).unwrap().read_to_end(&mut data).unwrap();
            Entry {
                name,
                raw,
                data,
                crc,
                method,
            }
        })
        .collect()
}

fn part(bytes: &[u8], name: &str) -> String {
    let mut z = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    let mut s = String::new();
    z.by_name(name).unwrap().read_to_string(&mut s).unwrap();
    s
}

fn opts(mode: Mode, min: u32, max: u32, seed: u64) -> CiteOptions {
    CiteOptions {
        mode,
        min,
        max,
        seed,
        ..CiteOptions::default()
    }
}

/// The text inserted into `before` to give `after`, if `after` is `before` plus one insertion.
fn insertion(before: &str, after: &str) -> Option<String> {
    let b: Vec<char> = before.chars().collect();
    let a: Vec<char> = after.chars().collect();
    if a.len() <= b.len() {
        return None;
    }
    let pre = b.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let max_suf = b.len() - pre;
    let suf = b
        .iter()
        .rev()
        .zip(a.iter().rev())
        .take(max_suf)
        .take_while(|(x, y)| x == y)
        .count();
    Some(a[pre..a.len() - suf].iter().collect())
}

/// Splits " (A, 2017; B et al., 2019)" into its citations, each checked against WORKS.
fn citations_in(inserted: &str) -> Option<Vec<&'static Work>> {
    // A rotation of the insertion (when the text around it repeats) still holds
    // the same citations; normalise by finding the parenthesis.
    let open = inserted.find('(')?;
    let close = inserted.rfind(')')?;
    let inner = &inserted[open + 1..close];
    inner
        .split("; ")
        .map(|c| WORKS.iter().find(|w| w.in_text_inner() == c))
        .collect()
}

// ---------------------------------------------------------------- bibliography

#[test]
fn engine_bibliography_is_large_and_unique() {
    assert!(WORKS.len() >= 40, "{} works", WORKS.len());
    let dois: HashSet<_> = WORKS.iter().map(|w| w.doi.to_lowercase()).collect();
    assert_eq!(dois.len(), WORKS.len(), "duplicate DOI");
    for w in WORKS {
        assert!(w.doi.starts_with("10."), "{}", w.doi);
        assert!(!w.authors.is_empty() && !w.title.is_empty() && !w.venue.is_empty());
        assert!((1800..=2025).contains(&w.year));
        for a in w.authors {
            assert!(a.contains(", ") || *a == "Student", "author {a}");
        }
    }
}

#[test]
fn engine_bibliography_formats() {
    let find = |doi: &str| WORKS.iter().find(|w| w.doi == doi).unwrap();
    let vaswani = find("10.48550/arXiv.1706.03762");
    assert_eq!(vaswani.in_text(), "(Vaswani et al., 2017)");
    assert_eq!(
        vaswani.reference(),
        "Vaswani, A., Shazeer, N., Parmar, N., Uszkoreit, J., Jones, L., Gomez, A. N., Kaiser, Ł., & Polosukhin, I. (2017). Attention is all you need. Advances in Neural Information Processing Systems. https://doi.org/10.48550/arXiv.1706.03762"
    );
    let knuth = find("10.1093/comjnl/27.2.97");
    assert_eq!(knuth.in_text(), "(Knuth, 1984)");
    assert_eq!(
        knuth.reference(),
        "Knuth, D. E. (1984). Literate programming. The Computer Journal. https://doi.org/10.1093/comjnl/27.2.97"
    );
    let wc = find("10.1038/171737a0");
    assert_eq!(wc.in_text(), "(Watson & Crick, 1953)");
    assert!(
        wc.reference()
            .starts_with("Watson, J. D., & Crick, F. H. C. (1953). Molecular structure")
    );
    let epr = find("10.1103/PhysRev.47.777");
    assert!(
        epr.reference()
            .contains("considered complete? Physical Review.")
    );
    let student = find("10.1093/biomet/6.1.1");
    assert!(
        student
            .reference()
            .starts_with("Student. (1908). The probable error of a mean.")
    );
}

// ---------------------------------------------------------------- detection and errors

#[test]
fn engine_detects_fixtures_from_bytes() {
    for (name, bytes) in fixtures("docx") {
        assert_eq!(detect(&bytes), Ok(Kind::Docx), "{name}");
    }
    for (name, bytes) in fixtures("pptx") {
        assert_eq!(detect(&bytes), Ok(Kind::Pptx), "{name}");
    }
}

#[test]
fn engine_bad_files_give_the_right_error() {
    let cases = [
        ("bad/encrypted-password-is-pass.docx", "encrypted_document"),
        ("bad/encrypted-password-is-tika.pptx", "encrypted_document"),
        ("bad/legacy-word97-hyperlink.doc", "legacy_format"),
        ("bad/legacy-ppt97-basic.ppt", "legacy_format"),
        ("bad/clusterfuzz-corrupt-zip.docx", "corrupt_document"),
        ("bad/truncated-zip.docx", "corrupt_document"),
    ];
    for (name, code) in cases {
        let bytes = fixture(name);
        let e = detect(&bytes).unwrap_err();
        assert_eq!(e.code(), code, "{name}: {e}");
        assert!(!e.message().is_empty());
        assert_eq!(parse(&bytes).unwrap_err().code(), code, "{name}");
        assert_eq!(
            cite(&bytes, &CiteOptions::default()).unwrap_err().code(),
            code,
            "{name}"
        );
    }
    let e = detect(&fixture("bad/legacy-word97-hyperlink.doc")).unwrap_err();
    assert!(e.message().contains(".doc"), "{e}");
    let e = detect(&fixture("bad/legacy-ppt97-basic.ppt")).unwrap_err();
    assert!(e.message().contains(".ppt"), "{e}");
}

#[test]
fn engine_rejects_non_documents() {
    for bytes in [
        &b""[..],
        b"hello world",
        b"%PDF-1.7\n",
        b"PK\x03\x04garbage",
    ] {
        let e = detect(bytes).unwrap_err();
        assert!(
            matches!(e, EngineError::NotADocument(_) | EngineError::Corrupt(_)),
            "{e:?}"
        );
    }
    assert_eq!(detect(b"plain text").unwrap_err().code(), "not_a_document");
    // A real ZIP without [Content_Types].xml.
    let z = make_zip(&[("hello.txt", b"hi".as_slice())]);
    assert_eq!(detect(&z).unwrap_err().code(), "not_a_document");
}

#[test]
fn engine_unsupported_office_kinds() {
    for ct in [
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
        "application/vnd.ms-word.document.macroEnabled.main+xml",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
        "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml",
    ] {
        let types = format!(
            r#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/x/main.xml" ContentType="{ct}"/></Types>"#
        );
        let z = make_zip(&[("[Content_Types].xml", types.as_bytes())]);
        assert_eq!(
            detect(&z).unwrap_err().code(),
            "unsupported_document",
            "{ct}"
        );
    }
}

#[test]
fn engine_xxe_is_never_expanded() {
    let bytes = fixture("bad/xxe-external-entity.docx");
    assert_eq!(detect(&bytes), Ok(Kind::Docx));
    let p = parse(&bytes).unwrap();
    assert_eq!(p.paragraphs.len(), 1);
    let text = &p.paragraphs[0].text;
    assert!(
        text.starts_with("Here should not be the POI web site: \""),
        "{text}"
    );
    assert!(
        !text.contains("poi.apache.org") && !text.contains("testent"),
        "{text}"
    );
    // Citing keeps the DOCTYPE as it was and still produces well-formed XML.
    let out = cite(&bytes, &opts(Mode::Every, 1, 1, 3)).unwrap();
    let doc = part(&out.bytes, "word/document.xml");
    assert!(doc.contains("<!ENTITY testent SYSTEM \"http://poi.apache.org/\">"));
    well_formed(&doc).unwrap();
}

#[test]
fn engine_refuses_parts_too_large_when_unpacked() {
    let big = vec![b'a'; 300_000];
    let z = make_zip(&[
        ("[Content_Types].xml", b"<Types/>".as_slice()),
        ("big.xml", &big),
    ]);
    let mut pkg = Package::open_with_limit(&z, 100_000).unwrap();
    let e = pkg.read("big.xml").unwrap_err();
    assert_eq!(e.code(), "corrupt_document");
    assert!(e.message().contains("too large when unpacked"), "{e}");
    let mut pkg = Package::open_with_limit(&z, 300_000).unwrap();
    assert_eq!(pkg.read("big.xml").unwrap().unwrap().len(), 300_000);
}

fn make_zip(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let o = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in files {
        w.start_file(*name, o).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

// ---------------------------------------------------------------- parsing

fn parse_fixture(name: &str) -> Parsed {
    parse(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn engine_parses_docx_paragraphs() {
    let p = parse_fixture("docx/headings-lorem-multirun.docx");
    assert_eq!(p.kind, Kind::Docx);
    assert_eq!(p.paragraphs.len(), 6);
    let styles: Vec<_> = p.paragraphs.iter().map(|p| p.style.as_deref()).collect();
    assert_eq!(
        styles,
        [
            Some("Heading1"),
            None,
            Some("Heading2"),
            Some("NormalWeb"),
            Some("Heading3"),
            Some("NormalWeb")
        ]
    );
    assert_eq!(p.paragraphs[0].text, "First paragraph");
    assert!(
        p.paragraphs[1]
            .text
            .starts_with("FffLorem ipsum dolor sit amet, consectetur adipiscing elit.")
    );
    assert!(p.references.is_empty() && p.references_heading.is_none());
    assert!(
        p.paragraphs
            .iter()
            .enumerate()
            .all(|(i, q)| q.index == i && q.slide.is_none())
    );

    let p = parse_fixture("docx/one-para-173-runs-gif.docx");
    assert_eq!(p.paragraphs.len(), 1);
    assert_eq!(p.paragraphs[0].text.chars().count(), 591);

    let p = parse_fixture("docx/long-lorem-endnote.docx");
    assert_eq!(p.paragraphs.len(), 33);
    let total: usize = p.paragraphs.iter().map(|q| q.text.chars().count()).sum();
    assert_eq!(total, 73_646);

    let p = parse_fixture("docx/hyperlink-fragments.docx");
    assert_eq!(p.paragraphs.len(), 9);

    assert!(
        parse_fixture("docx/inline-images.docx")
            .paragraphs
            .is_empty()
    );
}

#[test]
fn engine_docx_tracked_changes_keep_insertions_drop_deletions() {
    let bytes = fixture("docx/tracked-changes-hyperlinks.docx");
    let p = parse(&bytes).unwrap();
    let total: usize = p.paragraphs.iter().map(|q| q.text.chars().count()).sum();
    // python-docx sees 448 chars because it skips w:ins; all inserted text counts here.
    assert!(total > 1000, "{total}");
    let doc = part(&bytes, "word/document.xml");
    let tree = Tree::parse(&doc, "d").unwrap();
    let deleted: Vec<String> = tree
        .elems
        .iter()
        .enumerate()
        .filter(|(_, e)| e.is(Ns::W, "delText"))
        .map(|(i, _)| decode(tree.inner(i)).0)
        .filter(|s| s.trim().len() > 3)
        .collect();
    assert!(!deleted.is_empty());
    let all: String = p.paragraphs.iter().map(|q| q.text.as_str()).collect();
    assert!(deleted.iter().any(|d| !all.contains(d.as_str())));
}

#[test]
fn engine_docx_tables_textboxes_and_controls_are_read() {
    let p = parse_fixture("docx/title-headings-nested-table-links.docx");
    assert!(p.paragraphs.len() > 14, "{}", p.paragraphs.len());
    let p = parse_fixture("docx/footnote-in-table.docx");
    assert!(!p.paragraphs.is_empty(), "table cell text must be read");
    let p = parse_fixture("docx/citations-bibliography-toc.docx");
    assert!(p.paragraphs.len() > 23, "{}", p.paragraphs.len());
    // Text boxes appear once, not again from their mc:Fallback copy.
    let texts: Vec<&str> = p.paragraphs.iter().map(|q| q.text.as_str()).collect();
    let mut seen = HashSet::new();
    let dup = texts
        .iter()
        .filter(|t| t.len() > 30 && !seen.insert(**t))
        .count();
    assert_eq!(dup, 0, "{texts:#?}");
}

#[test]
fn engine_finds_the_bibliography_section() {
    let p = parse_fixture("docx/citations-bibliography-toc.docx");
    assert_eq!(p.references_heading.as_deref(), Some("Bibliography"));
    assert_eq!(p.references.len(), 1, "{:#?}", p.references);
    assert_eq!(
        p.references[0].text,
        "Mattmann, C., & Zitting, J. (2011). Tika in Action. The Internet: Manning."
    );
    assert!(p.paragraphs.iter().all(|q| q.text != "Bibliography"));
}

#[test]
fn engine_parses_pptx_paragraphs() {
    let counts = [
        ("pptx/title-bullets-notes.pptx", 7),
        ("pptx/layouts-bullet-levels.pptx", 60),
        ("pptx/lecture-bullets-urls-embedded-zip.pptx", 19),
        ("pptx/bullets-table-links-citation.pptx", 33),
        ("pptx/group-table-pictures-small.pptx", 8),
        ("pptx/grouped-textboxes-wordart.pptx", 9),
    ];
    for (name, n) in counts {
        let p = parse_fixture(name);
        assert_eq!(p.kind, Kind::Pptx);
        assert_eq!(p.paragraphs.len(), n, "{name}: {:#?}", p.paragraphs);
        assert!(p.paragraphs.iter().all(|q| q.slide.is_some_and(|s| s >= 1)));
    }
    let p = parse_fixture("pptx/group-table-pictures-small.pptx");
    assert!(p.paragraphs.iter().any(|q| q.text == "Group test text"));
    let p = parse_fixture("pptx/layouts-bullet-levels.pptx");
    let slides: Vec<u32> = p.paragraphs.iter().filter_map(|q| q.slide).collect();
    assert!(slides.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(slides.last(), Some(&10));
    assert!(
        p.paragraphs
            .iter()
            .any(|q| q.style.as_deref() == Some("Title"))
    );
    let p = parse_fixture("pptx/lecture-bullets-urls-embedded-zip.pptx");
    assert!(
        p.paragraphs.iter().any(|q| q.text.contains("JConsole")),
        "{:#?}",
        p.paragraphs
    );
}

#[test]
fn engine_parse_serializes_camel_case() {
    let p = parse_fixture("pptx/title-bullets-notes.pptx");
    let v = serde_json::to_value(&p).unwrap();
    assert_eq!(v["kind"], "pptx");
    assert!(v.get("referencesHeading").is_some());
    assert!(v["paragraphs"][0].get("slide").is_some());
    let t = serde_json::to_value(parse_text("Hello there")).unwrap();
    assert!(t["paragraphs"][0].get("slide").is_none());
    let s = serde_json::to_value(CiteStats::default()).unwrap();
    assert!(s.get("paragraphsCited").is_some());
    let o: CiteOptions =
        serde_json::from_str(r#"{"mode":"every_other","min":1,"max":2,"seed":9}"#).unwrap();
    assert_eq!(o.mode, Mode::EveryOther);
    assert_eq!(serde_json::to_value(Mode::Random).unwrap(), "random");
}

// ---------------------------------------------------------------- citing

fn allowed_changes(kind: Kind, name: &str) -> bool {
    match kind {
        Kind::Docx => name == "word/document.xml",
        _ => {
            name.starts_with("ppt/slides/slide")
                || name == "ppt/presentation.xml"
                || name == "ppt/_rels/presentation.xml.rels"
                || name == "[Content_Types].xml"
        }
    }
}

/// Structural rules Word/PowerPoint enforce that well-formedness alone does not.
fn check_structure(kind: Kind, name: &str, xml: &str) {
    let t = Tree::parse(xml, name).unwrap_or_else(|e| panic!("{name}: {e}"));
    for (i, e) in t.elems.iter().enumerate() {
        let parent = e.parent.map(|p| &t.elems[p]);
        match kind {
            Kind::Docx => {
                if e.is(Ns::W, "t") {
                    assert!(
                        parent.is_some_and(|p| p.is(Ns::W, "r")),
                        "{name}: w:t outside w:r"
                    );
                    assert!(e.children.is_empty());
                    assert!(
                        !t.ancestors(i).any(|a| t.elems[a].is(Ns::W, "del")),
                        "{name}: w:t inside w:del"
                    );
                }
                if e.is(Ns::W, "r") {
                    let p = parent.unwrap();
                    assert!(
                        !p.is(Ns::W, "t") && !p.is(Ns::W, "rPr"),
                        "{name}: run in {}",
                        p.qname
                    );
                }
                if e.is(Ns::W, "p") {
                    let p = parent.unwrap();
                    assert!(
                        !p.is(Ns::W, "p") && !p.is(Ns::W, "r"),
                        "{name}: p in {}",
                        p.qname
                    );
                }
            }
            _ => {
                if e.is(Ns::A, "t") {
                    assert!(
                        parent.is_some_and(|p| p.is(Ns::A, "r") || p.is(Ns::A, "fld")),
                        "{name}: a:t outside a:r"
                    );
                    assert!(e.children.is_empty());
                }
                if e.is(Ns::A, "r") {
                    assert!(
                        parent.is_some_and(|p| p.is(Ns::A, "p")),
                        "{name}: a:r outside a:p"
                    );
                    // a:endParaRPr must stay the last child of its paragraph.
                    let p = e.parent.unwrap();
                    let sib = &t.elems[p].children;
                    let me = sib.iter().position(|&c| c == i).unwrap();
                    assert!(
                        !sib[..me]
                            .iter()
                            .any(|&c| t.elems[c].is(Ns::A, "endParaRPr")),
                        "{name}: run after endParaRPr"
                    );
                }
            }
        }
    }
}

struct Outcome {
    stats: CiteStats,
    per_paragraph: Vec<usize>,
}

/// Cites `bytes` and checks every promise the engine makes about the result.
fn cite_and_check(name: &str, bytes: &[u8], o: &CiteOptions) -> Outcome {
    let kind = detect(bytes).unwrap();
    let before = parse(bytes).unwrap();
    let out = cite(bytes, o).unwrap_or_else(|e| panic!("{name}: {e}"));
    let st = out.stats;
    if st.citations_inserted == 0 {
        assert_eq!(st, CiteStats::default(), "{name}");
        assert_eq!(
            out.bytes, bytes,
            "{name}: unchanged input must come back as it was"
        );
        return Outcome {
            stats: st,
            per_paragraph: Vec::new(),
        };
    }
    assert_eq!(detect(&out.bytes), Ok(kind), "{name}");
    let after = parse(&out.bytes).unwrap_or_else(|e| panic!("{name}: reparse: {e}"));

    // Paragraphs: same list, each either untouched or with one citation group inserted.
    assert_eq!(before.paragraphs.len(), after.paragraphs.len(), "{name}");
    let mut cited = HashSet::new();
    let mut per_paragraph = Vec::new();
    for (b, a) in before.paragraphs.iter().zip(&after.paragraphs) {
        assert_eq!(b.slide, a.slide);
        assert_eq!(b.style, a.style);
        if a.text == b.text {
            continue;
        }
        let ins = insertion(&b.text, &a.text)
            .unwrap_or_else(|| panic!("{name}: {:?} -> {:?}", b.text, a.text));
        let works = citations_in(&ins)
            .unwrap_or_else(|| panic!("{name}: bad insertion {ins:?} in {:?}", a.text));
        assert!(ins.contains(" ("), "{name}: {ins:?}");
        assert!(b.text.trim().chars().count() >= MIN_CITABLE_CHARS);
        assert!(!is_title_like_style(b.style.as_deref()));
        // Before the closing punctuation when there is one.
        let bt = b.text.trim_end();
        if bt.ends_with(['.', '!', '?']) {
            assert!(
                a.text.trim_end().ends_with(bt.chars().last().unwrap()),
                "{name}: {:?}",
                a.text
            );
            assert!(a.text.contains(&format!("{})", works.last().unwrap().year)));
        }
        let distinct: HashSet<_> = works.iter().map(|w| w.doi).collect();
        assert_eq!(
            distinct.len(),
            works.len(),
            "{name}: repeated work in {ins:?}"
        );
        per_paragraph.push(works.len());
        cited.extend(works.iter().map(|w| w.doi));
    }
    assert_eq!(per_paragraph.len(), st.paragraphs_cited, "{name}");
    assert_eq!(
        per_paragraph.iter().sum::<usize>(),
        st.citations_inserted,
        "{name}"
    );

    // References: every cited work is listed, in a recognised section.
    assert!(after.references_heading.is_some(), "{name}");
    for doi in &cited {
        let w = WORKS.iter().find(|w| w.doi == *doi).unwrap();
        assert!(
            after.references.iter().any(|r| r.text == w.reference()),
            "{name}: missing reference {}; have {:#?}",
            w.reference(),
            after.references
        );
    }
    assert_eq!(
        after.references.len(),
        before.references.len() + st.references_added,
        "{name}"
    );
    assert_eq!(st.references_added, cited.len(), "{name}");

    // The package: untouched entries raw-identical and in order, new ones at the end.
    let ein = entries(bytes);
    let eout = entries(&out.bytes);
    assert!(eout.len() >= ein.len());
    for (i, e) in ein.iter().enumerate() {
        let f = &eout[i];
        assert_eq!(e.name, f.name, "{name}: entry order");
        if e.data == f.data {
            assert_eq!((e.crc, e.method), (f.crc, f.method), "{name}: {}", e.name);
            assert_eq!(e.raw, f.raw, "{name}: {} not copied raw", e.name);
        } else {
            assert!(allowed_changes(kind, &e.name), "{name}: {} changed", e.name);
            let xml = String::from_utf8(f.data.clone()).unwrap();
            well_formed(&xml).unwrap_or_else(|err| panic!("{name}: {}: {err}", e.name));
            check_structure(kind, &e.name, &xml);
        }
    }
    for f in &eout[ein.len()..] {
        assert!(kind == Kind::Pptx, "{name}: a docx gains no parts");
        let xml = String::from_utf8(f.data.clone()).unwrap();
        well_formed(&xml).unwrap_or_else(|err| panic!("{name}: {}: {err}", f.name));
        check_structure(kind, &f.name, &xml);
    }
    Outcome {
        stats: st,
        per_paragraph,
    }
}

#[test]
fn engine_cites_every_fixture_in_every_mode() {
    let mut total = 0;
    for (name, bytes) in all_good() {
        for o in [
            opts(Mode::Every, 1, 1, 1),
            opts(Mode::EveryOther, 1, 2, 2),
            opts(Mode::Random, 1, 3, 3),
            opts(Mode::Random, 2, 4, 44),
        ] {
            let r = cite_and_check(&name, &bytes, &o);
            total += r.stats.citations_inserted;
        }
    }
    assert!(total > 100, "{total}");
}

#[test]
fn engine_cites_where_text_is_long_enough() {
    for name in [
        "docx/headings-lorem-multirun.docx",
        "docx/long-lorem-endnote.docx",
        "docx/one-para-173-runs-gif.docx",
        "docx/tracked-changes-hyperlinks.docx",
        "docx/comments-ins-del-lorem.docx",
        "docx/citations-bibliography-toc.docx",
        "docx/various-textbox-footnote-citation.docx",
        "pptx/lecture-bullets-urls-embedded-zip.pptx",
        "pptx/bullets-table-links-citation.pptx",
        "pptx/title-bullets-notes.pptx",
    ] {
        let bytes = fixture(name);
        let r = cite_and_check(name, &bytes, &opts(Mode::Every, 1, 1, 0));
        assert!(r.stats.paragraphs_cited > 0, "{name}");
        assert!(r.stats.references_added > 0, "{name}");
    }
}

#[test]
fn engine_every_other_cites_half() {
    let bytes = fixture("docx/long-lorem-endnote.docx");
    let every = cite_and_check("every", &bytes, &opts(Mode::Every, 1, 1, 5));
    let other = cite_and_check("other", &bytes, &opts(Mode::EveryOther, 1, 1, 5));
    assert_eq!(every.stats.paragraphs_cited, 33);
    assert_eq!(other.stats.paragraphs_cited, 17);
    let p = parse(
        &cite(&bytes, &opts(Mode::EveryOther, 1, 1, 5))
            .unwrap()
            .bytes,
    )
    .unwrap();
    let orig = parse(&bytes).unwrap();
    for (i, (a, b)) in p.paragraphs.iter().zip(&orig.paragraphs).enumerate() {
        assert_eq!(a.text != b.text, i % 2 == 0, "paragraph {i}");
    }
}

#[test]
fn engine_random_is_repeatable_and_seeded() {
    let bytes = fixture("docx/long-lorem-endnote.docx");
    let a = cite(&bytes, &opts(Mode::Random, 1, 3, 42)).unwrap();
    let b = cite(&bytes, &opts(Mode::Random, 1, 3, 42)).unwrap();
    let c = cite(&bytes, &opts(Mode::Random, 1, 3, 43)).unwrap();
    assert_eq!(a, b);
    assert_ne!(a.bytes, c.bytes);
    let n = a.stats.paragraphs_cited;
    assert!(n > 5 && n < 28, "about half of 33 expected, got {n}");
    let (t1, s1) = cite_text(ESSAY, &opts(Mode::Random, 1, 2, 7));
    let (t2, s2) = cite_text(ESSAY, &opts(Mode::Random, 1, 2, 7));
    assert_eq!((t1, s1), (t2, s2));
}

#[test]
fn engine_respects_min_and_max() {
    let bytes = fixture("docx/long-lorem-endnote.docx");
    let r = cite_and_check("2..4", &bytes, &opts(Mode::Every, 2, 4, 9));
    assert!(
        r.per_paragraph.iter().all(|&k| (2..=4).contains(&k)),
        "{:?}",
        r.per_paragraph
    );
    assert!(
        r.per_paragraph.iter().any(|&k| k != r.per_paragraph[0]),
        "k should vary"
    );
    let r = cite_and_check("3", &bytes, &opts(Mode::Every, 3, 3, 9));
    assert!(r.per_paragraph.iter().all(|&k| k == 3));
    let r = cite_and_check("0", &bytes, &opts(Mode::Every, 0, 0, 9));
    assert_eq!(r.stats, CiteStats::default());
    let pptx = fixture("pptx/lecture-bullets-urls-embedded-zip.pptx");
    let r = cite_and_check("pptx 2..3", &pptx, &opts(Mode::Every, 2, 3, 1));
    assert!(r.per_paragraph.iter().all(|&k| (2..=3).contains(&k)));
}

#[test]
fn engine_docx_extends_existing_bibliography() {
    let bytes = fixture("docx/citations-bibliography-toc.docx");
    let out = cite(&bytes, &opts(Mode::Every, 1, 1, 0)).unwrap();
    let p = parse(&out.bytes).unwrap();
    assert_eq!(p.references_heading.as_deref(), Some("Bibliography"));
    assert!(p.references[0].text.starts_with("Mattmann"));
    assert_eq!(p.references.len(), 1 + out.stats.references_added);
    let doc = part(&out.bytes, "word/document.xml");
    // New entries copy the existing entry's Bibliography style and hanging indent.
    let n = doc.matches("<w:pStyle w:val=\"Bibliography\"/>").count();
    assert_eq!(n, 1 + out.stats.references_added);
    // Only one References-like heading: none was added.
    assert!(!doc.contains(">References<"));
}

#[test]
fn engine_docx_adds_references_heading_before_sectpr() {
    let bytes = fixture("docx/long-lorem-endnote.docx");
    let out = cite(&bytes, &opts(Mode::Every, 1, 1, 0)).unwrap();
    let doc = part(&out.bytes, "word/document.xml");
    let refs_at = doc.find(">References<").unwrap();
    let sect = doc.rfind("<w:sectPr").unwrap();
    assert!(refs_at < sect);
    assert!(doc[refs_at..].find("</w:body>").unwrap() > doc[refs_at..].find("<w:sectPr").unwrap());
    let styles = part(&bytes, "word/styles.xml");
    let heading = if styles.contains("w:styleId=\"Heading1\"") {
        "<w:pStyle w:val=\"Heading1\"/>"
    } else {
        "<w:b/>"
    };
    let heading_p = &doc[..refs_at];
    let p_start = heading_p.rfind("<w:p>").unwrap();
    assert!(
        doc[p_start..refs_at].contains(heading),
        "{}",
        &doc[p_start..refs_at]
    );
}

#[test]
fn engine_docx_citation_keeps_formatting_and_splits_runs() {
    let bytes = fixture("docx/headings-lorem-multirun.docx");
    let out = cite(&bytes, &opts(Mode::Every, 1, 1, 0)).unwrap();
    let doc = part(&out.bytes, "word/document.xml");
    // "…tristique massa elementum. " then "ffff": citation at the end, after ffff.
    let p = parse(&out.bytes).unwrap();
    assert!(
        p.paragraphs[1].text.contains("elementum. ffff ("),
        "{}",
        p.paragraphs[1].text
    );
    // "…Quisque et ipsum eu massa tristique elementum. " ends in "." then a space:
    // the citation goes before the full stop, splitting the run.
    assert!(
        p.paragraphs[3].text.contains("tristique elementum ("),
        "{}",
        p.paragraphs[3].text
    );
    assert!(p.paragraphs[3].text.trim_end().ends_with(")."));
    assert!(doc.contains("xml:space=\"preserve\"> ("));
}

#[test]
fn engine_pptx_adds_a_references_slide() {
    let bytes = fixture("pptx/lecture-bullets-urls-embedded-zip.pptx");
    let out = cite(&bytes, &opts(Mode::Every, 1, 1, 0)).unwrap();
    let before = entries(&bytes);
    let after = entries(&out.bytes);
    assert_eq!(after.len(), before.len() + 2);
    let new_slide = &after[before.len()];
    let new_rels = &after[before.len() + 1];
    assert!(new_slide.name.starts_with("ppt/slides/slide") && new_slide.name.ends_with(".xml"));
    assert_eq!(
        new_rels.name,
        super::package::rels_part_for(&new_slide.name)
    );
    let rels = String::from_utf8(new_rels.data.clone()).unwrap();
    assert!(rels.contains("/slideLayout") && rels.contains("../slideLayouts/"));
    let ct = part(&out.bytes, "[Content_Types].xml");
    assert!(ct.contains(&format!("PartName=\"/{}\"", new_slide.name)));
    let pres = part(&out.bytes, "ppt/presentation.xml");
    let prels = part(&out.bytes, "ppt/_rels/presentation.xml.rels");
    let tree = Tree::parse(&pres, "p").unwrap();
    let ids: Vec<(u32, String)> = tree
        .elems
        .iter()
        .filter(|e| e.is(Ns::P, "sldId"))
        .map(|e| {
            (
                e.attr(Ns::None, "id").unwrap().parse().unwrap(),
                e.attr(Ns::R, "id").unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(ids.len(), 4);
    let (last_id, last_rid) = ids.last().unwrap();
    assert!(ids[..3].iter().all(|(i, r)| i < last_id && r != last_rid));
    assert!(*last_id >= 256);
    let slide_file = new_slide.name.rsplit('/').next().unwrap();
    assert!(prels.contains(&format!("Id=\"{last_rid}\"")));
    assert!(prels.contains(&format!("Target=\"slides/{slide_file}\"")));
    let p = parse(&out.bytes).unwrap();
    assert_eq!(p.references_heading.as_deref(), Some("References"));
    assert_eq!(p.references.len(), out.stats.references_added);
    // Citing the cited deck again adds to the References slide instead of a new one.
    let again = cite(&out.bytes, &opts(Mode::Every, 1, 1, 99)).unwrap();
    assert_eq!(entries(&again.bytes).len(), after.len());
    let p2 = parse(&again.bytes).unwrap();
    assert_eq!(
        p2.references.len(),
        p.references.len() + again.stats.references_added
    );
}

#[test]
fn engine_docx_twice_extends_own_section() {
    let bytes = fixture("docx/comments-ins-del-lorem.docx");
    let once = cite(&bytes, &opts(Mode::Every, 1, 1, 1)).unwrap();
    let twice = cite_and_check("twice", &once.bytes, &opts(Mode::Every, 1, 2, 2));
    assert!(twice.stats.citations_inserted > 0);
    let doc = part(
        &cite(&once.bytes, &opts(Mode::Every, 1, 2, 2))
            .unwrap()
            .bytes,
        "word/document.xml",
    );
    assert_eq!(doc.matches(">References<").count(), 1);
}

// ---------------------------------------------------------------- synthetic Word documents

const W_NS: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

fn docx_with_body(body: &str) -> Vec<u8> {
    let ct = r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#;
    let doc = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{W_NS}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><w:body>{body}<w:sectPr/></w:body></w:document>"#
    );
    make_zip(&[
        ("[Content_Types].xml", ct.as_bytes()),
        ("word/document.xml", doc.as_bytes()),
    ])
}

fn cite_body(body: &str) -> (String, Parsed) {
    let bytes = docx_with_body(body);
    let out = cite(&bytes, &opts(Mode::Every, 1, 1, 0)).unwrap();
    let doc = part(&out.bytes, "word/document.xml");
    well_formed(&doc).unwrap();
    check_structure(Kind::Docx, "synthetic", &doc);
    (doc, parse(&out.bytes).unwrap())
}

const LONG: &str = "This sentence is comfortably longer than forty characters";

#[test]
fn engine_docx_citation_goes_beside_hyperlinks() {
    let body = format!(
        r#"<w:p><w:r><w:t xml:space="preserve">{LONG} and ends in </w:t></w:r><w:hyperlink r:id="rId9"><w:r><w:rPr><w:rStyle w:val="Hyperlink"/><w:color w:val="0000FF"/><w:sz w:val="24"/><w:u w:val="single"/></w:rPr><w:t>a link.</w:t></w:r></w:hyperlink></w:p>"#
    );
    let (doc, p) = cite_body(&body);
    // Inside the link the full stop cannot be split off, so the citation follows the link.
    // …and without the link's look.
    assert!(
        doc.contains(
            "</w:hyperlink><w:r><w:rPr><w:sz w:val=\"24\"/></w:rPr><w:t xml:space=\"preserve\"> ("
        ),
        "{doc}"
    );
    assert!(
        p.paragraphs[0]
            .text
            .starts_with(&format!("{LONG} and ends in a link. ("))
    );
}

#[test]
fn engine_docx_citation_before_full_stop_in_own_run() {
    let body = format!(
        r#"<w:p><w:r><w:rPr><w:i/></w:rPr><w:t>{LONG}</w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>.</w:t></w:r></w:p>"#
    );
    let (doc, p) = cite_body(&body);
    assert!(
        doc.contains(&format!(
            "{LONG}</w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t xml:space=\"preserve\"> ("
        )),
        "{doc}"
    );
    assert!(p.paragraphs[0].text.ends_with(").") && p.paragraphs[0].text.starts_with(LONG));
}

#[test]
fn engine_docx_citation_splits_a_run_with_entities() {
    let body =
        format!(r#"<w:p><w:r><w:rPr><w:i/></w:rPr><w:t>{LONG} &amp; more&#33;</w:t></w:r></w:p>"#);
    let (doc, p) = cite_body(&body);
    assert!(
        p.paragraphs[0]
            .text
            .starts_with(&format!("{LONG} & more (")),
        "{}",
        p.paragraphs[0].text
    );
    assert!(p.paragraphs[0].text.ends_with(")!"));
    assert!(
        doc.contains("<w:t xml:space=\"preserve\">&#33;</w:t>"),
        "{doc}"
    );
    assert!(doc.contains(&format!("<w:t xml:space=\"preserve\">{LONG} &amp; more</w:t></w:r><w:r><w:rPr><w:i/></w:rPr><w:t xml:space=\"preserve\"> (")), "{doc}");
}

#[test]
fn engine_docx_citation_after_field_result() {
    let body = format!(
        r#"<w:p><w:r><w:t xml:space="preserve">{LONG}, see </w:t></w:r><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> HYPERLINK "https://example.org" </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>example.org.</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r><w:bookmarkStart w:id="1" w:name="x"/><w:bookmarkEnd w:id="1"/></w:p>"#
    );
    let (doc, p) = cite_body(&body);
    assert!(
        doc.contains("w:fldCharType=\"end\"/></w:r><w:r><w:t xml:space=\"preserve\"> ("),
        "{doc}"
    );
    assert!(
        p.paragraphs[0].text.contains("example.org. ("),
        "{}",
        p.paragraphs[0].text
    );
}

#[test]
fn engine_docx_never_cites_into_deleted_text() {
    let body = format!(
        r#"<w:p><w:r><w:t>{LONG}</w:t></w:r><w:ins w:id="1" w:author="a"><w:r><w:t xml:space="preserve"> was added</w:t></w:r></w:ins><w:del w:id="2" w:author="a"><w:r><w:delText> and removed.</w:delText></w:r></w:del></w:p>"#
    );
    let (doc, p) = cite_body(&body);
    let text = &p.paragraphs[0].text;
    assert!(text.starts_with(&format!("{LONG} was added (")), "{text}");
    assert!(!text.contains("removed"));
    let del = doc.find("<w:del ").unwrap();
    assert!(!doc[del..doc.find("</w:del>").unwrap()].contains("<w:t"));
}

#[test]
fn engine_docx_headings_short_and_bound_paragraphs_are_not_cited() {
    let body = format!(
        r#"<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>{LONG} heading.</w:t></w:r></w:p><w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>{LONG} title.</w:t></w:r></w:p><w:p><w:r><w:t>Too short to cite.</w:t></w:r></w:p><w:sdt><w:sdtPr><w:dataBinding w:xpath="/a" w:storeItemID="{{X}}"/></w:sdtPr><w:sdtContent><w:p><w:r><w:t>{LONG} bound.</w:t></w:r></w:p></w:sdtContent></w:sdt><w:p><w:r><w:t>{LONG} body.</w:t></w:r></w:p>"#
    );
    let bytes = docx_with_body(&body);
    let out = cite(&bytes, &opts(Mode::Every, 1, 1, 0)).unwrap();
    assert_eq!(out.stats.paragraphs_cited, 1);
    let p = parse(&out.bytes).unwrap();
    assert!(p.paragraphs[4].text.starts_with(&format!("{LONG} body (")));
    assert!(p.paragraphs[..4].iter().all(|q| !q.text.contains(" (")));
    assert_eq!(p.references_heading.as_deref(), Some("References"));
}

// ---------------------------------------------------------------- text

const ESSAY: &str = "A Short Essay\n\nThe first paragraph makes a claim that deserves support.\nThe second paragraph adds another claim that deserves a source!\n\nShort line.\nA fourth paragraph ends without any punctuation at all here\n";

#[test]
fn engine_text_parse() {
    let p = parse_text(ESSAY);
    assert_eq!(p.kind, Kind::Text);
    assert_eq!(p.paragraphs.len(), 5);
    assert_eq!(
        p.paragraphs[1].text,
        "The first paragraph makes a claim that deserves support."
    );
    assert!(p.references.is_empty() && p.references_heading.is_none());
    let with_refs = "Body text that is long enough to be cited by the engine.\n\nWorks Cited\nSmith, J. (2020). A book.\n\nJones, K. (2019). Another.\n";
    let p = parse_text(with_refs);
    assert_eq!(p.paragraphs.len(), 1);
    assert_eq!(p.references_heading.as_deref(), Some("Works Cited"));
    assert_eq!(p.references.len(), 2);
    assert_eq!(p.references[1].text, "Jones, K. (2019). Another.");
}

#[test]
fn engine_text_cite() {
    let (out, st) = cite_text(ESSAY, &opts(Mode::Every, 1, 1, 0));
    assert_eq!(st.paragraphs_cited, 3);
    assert_eq!(st.citations_inserted, 3);
    let p = parse_text(&out);
    assert!(
        p.paragraphs[1]
            .text
            .starts_with("The first paragraph makes a claim that deserves support (")
    );
    assert!(p.paragraphs[1].text.ends_with(")."));
    assert!(p.paragraphs[2].text.ends_with(")!"));
    assert!(
        p.paragraphs[4]
            .text
            .starts_with("A fourth paragraph ends without any punctuation at all here (")
    );
    assert_eq!(p.paragraphs[3].text, "Short line.");
    assert_eq!(p.references_heading.as_deref(), Some("References"));
    assert_eq!(p.references.len(), st.references_added);
    assert!(out.contains(")\n\nReferences\n"), "{out}");
    assert!(out.ends_with('\n'));
    let mut sorted = p
        .references
        .iter()
        .map(|r| r.text.to_lowercase())
        .collect::<Vec<_>>();
    sorted.sort();
    assert_eq!(
        sorted,
        p.references
            .iter()
            .map(|r| r.text.to_lowercase())
            .collect::<Vec<_>>()
    );

    // Existing section is extended, not duplicated; CRLF kept.
    let crlf = "Body text that is long enough to be cited by the engine.\r\n\r\nReferences\r\nSmith, J. (2020). A book.\r\n";
    let (out, st) = cite_text(crlf, &opts(Mode::Every, 2, 2, 0));
    assert_eq!(out.matches("References").count(), 1);
    assert!(!out.replace("\r\n", "").contains('\n'));
    let p = parse_text(&out);
    assert_eq!(p.references.len(), 1 + st.references_added);
    assert_eq!(p.references[0].text, "Smith, J. (2020). A book.");
    // No terminator on the last line.
    let (out, _) = cite_text(
        "Body text that is long enough to be cited by the engine.",
        &CiteOptions::default(),
    );
    assert!(
        out.contains(".\n\nReferences\n")
            || out.contains(")\n\nReferences\n")
            || out.contains(").\n\nReferences\n"),
        "{out}"
    );
    assert!(!out.ends_with('\n'));
    assert_eq!(cite_text("", &CiteOptions::default()).0, "");
}

// ---------------------------------------------------------------- helpers

#[test]
fn engine_anchor_rules() {
    assert_eq!(anchor("Hello world."), Some(Anchor::Before(11)));
    assert_eq!(anchor("Hello world?!  "), Some(Anchor::Before(11)));
    assert_eq!(anchor("Hello world"), Some(Anchor::After(10)));
    assert_eq!(anchor("Hello world  "), Some(Anchor::After(10)));
    assert_eq!(anchor("..."), Some(Anchor::After(2)));
    assert_eq!(anchor("   "), None);
}

#[test]
fn engine_decode_maps_offsets() {
    let (s, offs) = decode("a&amp;b&#x1F600;c&unknown;<![CDATA[<d>]]>");
    assert_eq!(s, "a&b😀c<d>");
    assert_eq!(offs[0], 0);
    assert_eq!(offs[1], 1);
    assert_eq!(offs[2], 6);
    assert_eq!(offs[3], 7);
    assert_eq!(offs[4], 16);
    assert_eq!(*offs.last().unwrap(), 41);
}

#[test]
fn engine_plan_is_deterministic_and_distinct() {
    let elig = vec![true; 50];
    let a = plan(&elig, &opts(Mode::Random, 1, 5, 1), WORKS.len());
    assert_eq!(a, plan(&elig, &opts(Mode::Random, 1, 5, 1), WORKS.len()));
    assert_ne!(a, plan(&elig, &opts(Mode::Random, 1, 5, 2), WORKS.len()));
    for works in &a {
        let set: HashSet<_> = works.iter().collect();
        assert_eq!(set.len(), works.len());
    }
    // More than the bibliography holds is capped, not a panic.
    let big = plan(&[true], &opts(Mode::Every, 500, 1000, 0), WORKS.len());
    assert_eq!(big[0].len(), WORKS.len());
    // max below min reads as min.
    assert!(
        plan(&[true; 5], &opts(Mode::Every, 2, 1, 0), WORKS.len())
            .iter()
            .all(|w| w.len() == 2)
    );
}

// ---------------------------------------------------------------- hostile and unusual input

#[test]
fn engine_damaged_packages_never_panic() {
    let mut rng = Rng::new(2024);
    for (name, bytes) in all_good() {
        for cut in [
            0,
            1,
            4,
            30,
            100,
            bytes.len() / 3,
            bytes.len() / 2,
            bytes.len() - 22,
            bytes.len() - 1,
        ] {
            let r = std::panic::catch_unwind(|| {
                let b = &bytes[..cut];
                (
                    detect(b).err(),
                    parse(b).err(),
                    cite(b, &CiteOptions::default()).err(),
                )
            });
            assert!(r.is_ok(), "{name} cut at {cut} panicked");
        }
        for _ in 0..12 {
            let mut b = bytes.clone();
            for _ in 0..8 {
                let i = rng.below(b.len() as u64) as usize;
                b[i] ^= 1 << rng.below(8);
            }
            let r = std::panic::catch_unwind(|| {
                let _ = detect(&b);
                let _ = parse(&b);
                let _ = cite(&b, &opts(Mode::Every, 1, 2, 0));
            });
            assert!(r.is_ok(), "{name} with flipped bits panicked");
        }
    }
}

#[test]
fn engine_malformed_xml_part_is_corrupt() {
    let bytes = docx_with_body("<w:p><w:r><w:t>unclosed</w:r></w:p>");
    assert_eq!(parse(&bytes).unwrap_err().code(), "corrupt_document");
    assert_eq!(
        cite(&bytes, &CiteOptions::default()).unwrap_err().code(),
        "corrupt_document"
    );
    // Declared as a Word document but without its main part.
    let ct = r#"<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#;
    let z = make_zip(&[("[Content_Types].xml", ct.as_bytes())]);
    assert_eq!(detect(&z), Ok(Kind::Docx));
    assert_eq!(parse(&z).unwrap_err().code(), "corrupt_document");
}

#[test]
fn engine_docx_with_bom_and_default_namespace() {
    let ct = r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#;
    let doc = format!(
        "\u{FEFF}<?xml version=\"1.0\" encoding=\"UTF-8\"?><document xmlns=\"{W_NS}\"><body><p><r><t>{LONG}, written without prefixes.</t></r></p></body></document>"
    );
    let bytes = make_zip(&[
        ("[Content_Types].xml", ct.as_bytes()),
        ("word/document.xml", doc.as_bytes()),
    ]);
    let out = cite(&bytes, &opts(Mode::Every, 1, 1, 0)).unwrap();
    let xml = part(&out.bytes, "word/document.xml");
    assert!(xml.starts_with('\u{FEFF}'));
    well_formed(&xml).unwrap();
    assert!(
        xml.contains(&format!("<p xmlns:w=\"{W_NS}\"><pPr><ind w:left=\"720\"")),
        "{xml}"
    );
    let p = parse(&out.bytes).unwrap();
    assert!(
        p.paragraphs[0]
            .text
            .starts_with(&format!("{LONG}, written without prefixes ("))
    );
    assert_eq!(p.references.len(), 1);
}

fn pptx_with_slides(slides: &[&str]) -> Vec<u8> {
    const P: &str = r#"xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main""#;
    let mut ct = String::from(
        r#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/>"#,
    );
    let mut ids = String::new();
    let mut rels = String::from(
        r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">"#,
    );
    let mut files: Vec<(String, String)> = Vec::new();
    for (i, body) in slides.iter().enumerate() {
        let n = i + 1;
        ct.push_str(&format!(r#"<Override PartName="/ppt/slides/slide{n}.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slide+xml"/>"#));
        ids.push_str(&format!(
            r#"<p:sldId id="{}" r:id="rId{}"/>"#,
            255 + n,
            n + 1
        ));
        rels.push_str(&format!(r#"<Relationship Id="rId{}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide{n}.xml"/>"#, n + 1));
        files.push((format!("ppt/slides/slide{n}.xml"), format!(r#"<p:sld {P}><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>{body}</p:spTree></p:cSld></p:sld>"#)));
        files.push((format!("ppt/slides/_rels/slide{n}.xml.rels"), r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slideLayout" Target="../slideLayouts/slideLayout1.xml"/></Relationships>"#.to_owned()));
    }
    ct.push_str("</Types>");
    rels.push_str("</Relationships>");
    let pres = format!(
        r#"<p:presentation {P}><p:sldIdLst>{ids}</p:sldIdLst><p:sldSz cx="12192000" cy="6858000"/></p:presentation>"#
    );
    let mut all: Vec<(String, String)> = vec![
        ("[Content_Types].xml".into(), ct),
        ("ppt/presentation.xml".into(), pres),
        ("ppt/_rels/presentation.xml.rels".into(), rels),
    ];
    all.extend(files);
    let refs: Vec<(&str, &[u8])> = all
        .iter()
        .map(|(n, d)| (n.as_str(), d.as_bytes()))
        .collect();
    make_zip(&refs)
}

fn sp(id: u32, ph: &str, paras: &str) -> String {
    format!(
        r#"<p:sp><p:nvSpPr><p:cNvPr id="{id}" name="s{id}"/><p:cNvSpPr/><p:nvPr>{ph}</p:nvPr></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:lstStyle/>{paras}</p:txBody></p:sp>"#
    )
}

#[test]
fn engine_pptx_fields_breaks_and_title_only_references_slide() {
    let s1 = format!(
        "{}{}",
        sp(
            2,
            r#"<p:ph type="title"/>"#,
            &format!("<a:p><a:r><a:t>{LONG} is a title.</a:t></a:r></a:p>")
        ),
        sp(
            7,
            "",
            &format!(
                r#"<a:p><a:r><a:rPr lang="en-US"/><a:t>{LONG}</a:t></a:r><a:br><a:rPr lang="en-US"/></a:br><a:r><a:rPr lang="en-US" b="1"><a:hlinkClick r:id="rId9"/></a:rPr><a:t>second line.</a:t></a:r><a:endParaRPr lang="en-US"/></a:p><a:p><a:r><a:t>{LONG}, on slide </a:t></a:r><a:fld id="{{B6F15528-21DE-4FAA-801E-634DDDAF4B2B}}" type="slidenum"><a:rPr lang="en-US"/><a:t>1</a:t></a:fld></a:p>"#
            )
        )
    );
    let s2 = sp(
        3,
        r#"<p:ph type="title"/>"#,
        "<a:p><a:r><a:t>Sources</a:t></a:r></a:p>",
    );
    let bytes = pptx_with_slides(&[&s1, &s2]);
    let before = parse(&bytes).unwrap();
    assert_eq!(before.references_heading.as_deref(), Some("Sources"));
    assert_eq!(before.paragraphs.len(), 3);
    assert_eq!(before.paragraphs[0].style.as_deref(), Some("Title"));
    assert_eq!(before.paragraphs[1].text, format!("{LONG}\nsecond line."));

    let r = cite_and_check("synthetic pptx", &bytes, &opts(Mode::Every, 1, 1, 0));
    assert_eq!(r.stats.paragraphs_cited, 2);
    let out = cite(&bytes, &opts(Mode::Every, 1, 1, 0)).unwrap();
    assert_eq!(
        entries(&out.bytes).len(),
        entries(&bytes).len(),
        "no new slide"
    );
    let s1x = part(&out.bytes, "ppt/slides/slide1.xml");
    // The split keeps the link on "second line" but not on the citation.
    assert!(
        s1x.contains(r#"<a:t>second line</a:t></a:r><a:r><a:rPr lang="en-US" b="1"/><a:t> ("#),
        "{s1x}"
    );
    assert!(s1x.contains(r#"<a:r><a:rPr lang="en-US" b="1"><a:hlinkClick r:id="rId9"/></a:rPr><a:t>.</a:t></a:r><a:endParaRPr"#), "{s1x}");
    // Fields are never split; the citation follows the slide number.
    assert!(
        s1x.contains(r#"</a:fld><a:r><a:rPr lang="en-US"/><a:t> ("#),
        "{s1x}"
    );
    let s2x = part(&out.bytes, "ppt/slides/slide2.xml");
    assert!(
        s2x.contains(r#"<p:cNvPr id="4" name="References 4"/>"#),
        "{s2x}"
    );
    let after = parse(&out.bytes).unwrap();
    assert_eq!(after.references_heading.as_deref(), Some("Sources"));
    assert_eq!(after.references.len(), 2);
}

// ---------------------------------------------------------------- citing as a careful writer would

fn corpus(rel: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus")
        .join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every complex and simple field of a part: its instruction and the text of its result.
fn fields(xml: &str) -> Vec<(String, String)> {
    let t = Tree::parse(xml, "d").unwrap();
    let mut out = Vec::new();
    let mut open: Vec<(String, String, bool)> = Vec::new();
    for (i, e) in t.elems.iter().enumerate() {
        if e.is(Ns::W, "fldSimple") {
            let text: String = t
                .descendants(i)
                .filter(|&d| t.elems[d].is(Ns::W, "t"))
                .map(|d| decode(t.inner(d)).0)
                .collect();
            out.push((e.attr(Ns::W, "instr").unwrap_or("").to_owned(), text));
        } else if e.is(Ns::W, "fldChar") {
            match e.attr(Ns::W, "fldCharType") {
                Some("begin") => open.push((String::new(), String::new(), false)),
                Some("separate") => {
                    if let Some(f) = open.last_mut() {
                        f.2 = true;
                    }
                }
                Some("end") => {
                    if let Some((instr, result, _)) = open.pop() {
                        out.push((instr, result));
                    }
                }
                _ => {}
            }
        } else if e.is(Ns::W, "instrText") {
            if let Some(f) = open.last_mut() {
                f.0.push_str(&decode(t.inner(i)).0);
            }
        } else if e.is(Ns::W, "t") {
            for f in open.iter_mut().filter(|f| f.2) {
                f.1.push_str(&decode(t.inner(i)).0);
            }
        }
    }
    out
}

/// The markup of every deleted and moved-away stretch, in order.
fn removed(xml: &str) -> Vec<String> {
    let t = Tree::parse(xml, "d").unwrap();
    (0..t.elems.len())
        .filter(|&i| t.elems[i].is(Ns::W, "del") || t.elems[i].is(Ns::W, "moveFrom"))
        .map(|i| t.raw(i).to_owned())
        .collect()
}

/// The text of each paragraph in each `mc:Choice` and `mc:Fallback` of a part.
fn alternates(xml: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let t = Tree::parse(xml, "d").unwrap();
    let paras = |of: usize| -> Vec<String> {
        t.descendants(of)
            .filter(|&d| t.elems[d].is(Ns::W, "p"))
            .map(|p| {
                t.descendants(p)
                    .filter(|&d| t.elems[d].is(Ns::W, "t"))
                    .map(|d| decode(t.inner(d)).0)
                    .collect::<String>()
            })
            .filter(|s| !s.trim().is_empty())
            .collect()
    };
    (0..t.elems.len())
        .filter(|&i| t.elems[i].is(Ns::Mc, "AlternateContent"))
        .filter_map(|a| {
            let c = t.child(a, Ns::Mc, "Choice")?;
            let f = t.child(a, Ns::Mc, "Fallback")?;
            Some((paras(c), paras(f)))
        })
        .collect()
}

/// Cites `bytes` and checks what a careful writer keeps: every field's instruction and
/// result, every deletion and move, and both copies of alternate content alike.
fn cite_carefully(name: &str, bytes: &[u8], o: &CiteOptions) -> (Cited, String) {
    let before = part(bytes, "word/document.xml");
    let out = cite(bytes, o).unwrap_or_else(|e| panic!("{name}: {e}"));
    let after = part(&out.bytes, "word/document.xml");
    well_formed(&after).unwrap();
    assert_eq!(fields(&after), fields(&before), "{name}: a field changed");
    assert_eq!(
        removed(&after),
        removed(&before),
        "{name}: deleted text changed"
    );
    for (choice, fallback) in alternates(&before) {
        if choice == fallback {
            let now = alternates(&after);
            assert!(
                now.iter().all(|(c, f)| c == f),
                "{name}: the copies of alternate content differ: {now:#?}"
            );
        }
    }
    (out, after)
}

fn careful_options() -> Vec<CiteOptions> {
    let mut all = Vec::new();
    for placement in [Placement::End, Placement::Inside] {
        for seed in 0..4 {
            all.push(CiteOptions {
                placement,
                ..opts(Mode::Every, 1, 3, seed)
            });
        }
    }
    all
}

const ZOTERO_ITEM: &str = r#" ADDIN ZOTERO_ITEM CSL_CITATION {"citationID":"a","properties":{"formattedCitation":"(Smith, 2013)"},"citationItems":[{"itemData":{"title":"A bibliography of bibliographies"}}]} "#;

fn complex_field(instr: &str, result: &str) -> String {
    format!(
        r#"<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve">{instr}</w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t xml:space="preserve">{result}</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r>"#
    )
}

#[test]
fn engine_docx_never_cites_inside_a_fields_code_or_result() {
    let long = |tail: &str| format!("<w:r><w:t xml:space=\"preserve\">{LONG} {tail}</w:t></w:r>");
    let body = [
        // A TOC whose result runs over three paragraphs, the first of which has prose.
        format!(
            r#"<w:p>{}<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> TOC \o "1-3" \h </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>{LONG} in the table of contents</w:t></w:r></w:p><w:p><w:r><w:t>{LONG} also in the table of contents</w:t></w:r></w:p><w:p><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>"#,
            long("before the contents:")
        ),
        // An index and a table of figures as simple fields.
        format!(
            r#"<w:p><w:fldSimple w:instr=" INDEX \c &quot;2&quot; "><w:r><w:t>{LONG} indexed</w:t></w:r></w:fldSimple></w:p><w:p><w:fldSimple w:instr=" TOC \h \c &quot;Figure&quot; "><w:r><w:t>{LONG}, figure one</w:t></w:r></w:fldSimple></w:p>"#
        ),
        // Citations already there, complex (Zotero) and simple (Word).
        format!(
            "<w:p>{}{}<w:r><w:t>.</w:t></w:r></w:p>",
            long("and holds one"),
            complex_field(ZOTERO_ITEM, " (Smith, 2013)")
        ),
        format!(
            r#"<w:p>{}<w:fldSimple w:instr=" CITATION Smi13 \l 1033 "><w:r><w:t xml:space="preserve"> (Smith, 2013)</w:t></w:r></w:fldSimple></w:p>"#,
            long("and holds another")
        ),
        // Cited in its first sentence only: the second can still take one.
        format!(
            "<w:p>{}{}<w:r><w:t xml:space=\"preserve\">. The second sentence of this paragraph has no source yet.</w:t></w:r></w:p>",
            long("first"),
            complex_field(" ADDIN CSL_CITATION {\"citationItems\":[]} ", " (Lee, 2011)")
        ),
    ]
    .concat();
    let bytes = docx_with_body(&body);
    for o in careful_options() {
        let (out, _) = cite_carefully("fields", &bytes, &o);
        let p = parse(&out.bytes).unwrap();
        let texts: Vec<&str> = p.paragraphs.iter().map(|q| q.text.as_str()).collect();
        assert_eq!(out.stats.paragraphs_cited, 1, "{o:?}: {texts:#?}");
        // Only the last paragraph's free sentence was cited, after "yet".
        let last = texts.last().unwrap();
        assert!(last.contains("(Lee, 2011). The second"), "{last}");
        assert!(last.contains("yet ("), "{o:?}: {last}");
        for (i, t) in texts[..texts.len() - 1].iter().enumerate() {
            assert_eq!(
                t.matches('(').count(),
                usize::from(i >= 4),
                "{o:?}: paragraph {i} was cited: {t}"
            );
        }
    }
}

#[test]
fn engine_docx_never_cites_into_moved_away_text() {
    let body = format!(
        r#"<w:p><w:r><w:t>{LONG}</w:t></w:r><w:moveTo w:id="3" w:author="a"><w:r><w:t xml:space="preserve"> and was moved here</w:t></w:r></w:moveTo><w:moveFrom w:id="4" w:author="a"><w:r><w:t xml:space="preserve"> but moved away.</w:t></w:r></w:moveFrom></w:p><w:p><w:del w:id="5" w:author="a"><w:r><w:delText>{LONG} all deleted.</w:delText></w:r></w:del></w:p>"#
    );
    let bytes = docx_with_body(&body);
    for o in careful_options() {
        let (out, _) = cite_carefully("moves", &bytes, &o);
        let p = parse(&out.bytes).unwrap();
        assert_eq!(out.stats.paragraphs_cited, 1);
        assert!(
            p.paragraphs[0]
                .text
                .starts_with(&format!("{LONG} and was moved here (")),
            "{}",
            p.paragraphs[0].text
        );
    }
}

/// A paragraph with a text box written twice: a DrawingML original and its VML copy.
fn text_box(choice: &str, fallback: &str) -> String {
    let p = |t: &str| format!("<w:p><w:r><w:t>{t}</w:t></w:r></w:p>");
    format!(
        r#"<w:p><w:r><w:t xml:space="preserve">Box: </w:t></w:r><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor><a:graphic><a:graphicData><wps:wsp><wps:txbx><w:txbxContent>{}</w:txbxContent></wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox><w:txbxContent>{}</w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>"#,
        choice.split('|').map(p).collect::<String>(),
        fallback.split('|').map(p).collect::<String>(),
    )
}

fn docx_with_namespaced_body(body: &str) -> Vec<u8> {
    let ct = r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#;
    let doc = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{W_NS}" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" xmlns:v="urn:schemas-microsoft-com:vml" mc:Ignorable="wps"><w:body>{body}<w:sectPr/></w:body></w:document>"#
    );
    make_zip(&[
        ("[Content_Types].xml", ct.as_bytes()),
        ("word/document.xml", doc.as_bytes()),
    ])
}

#[test]
fn engine_docx_both_copies_of_alternate_content_get_the_same_citation() {
    let a = format!("{LONG} in a text box.");
    let b = format!("{LONG} in its second paragraph!");
    let body = text_box(&format!("{a}|{b}"), &format!("{a}|{b}"));
    let bytes = docx_with_namespaced_body(&body);
    for o in careful_options() {
        let (out, after) = cite_carefully("text box", &bytes, &o);
        assert_eq!(out.stats.paragraphs_cited, 2, "{o:?}");
        let alt = alternates(&after);
        assert_eq!(alt.len(), 1);
        assert!(alt[0].0.iter().all(|t| t.contains(" (")), "{alt:?}");
        assert_eq!(alt[0].0, alt[0].1);
        // Read once: the copy is not a paragraph of its own.
        assert_eq!(parse(&out.bytes).unwrap().paragraphs.len(), 3);
    }
    // A fallback that says something else cannot be kept in step: neither is cited.
    let body = text_box(&format!("{a}|{b}"), &a);
    let bytes = docx_with_namespaced_body(&body);
    let (out, _) = cite_carefully("unmatched text box", &bytes, &opts(Mode::Every, 1, 1, 0));
    assert_eq!(out.stats.paragraphs_cited, 0);
}

fn bibliography_field(instr: &str, entries: &[&str]) -> String {
    let mut out = format!(
        r#"<w:p><w:pPr><w:pStyle w:val="Bibliography"/></w:pPr><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve">{instr}</w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>{}</w:t></w:r></w:p>"#,
        entries[0]
    );
    for e in &entries[1..] {
        out.push_str(&format!(
            r#"<w:p><w:pPr><w:pStyle w:val="Bibliography"/></w:pPr><w:r><w:t>{e}</w:t></w:r></w:p>"#
        ));
    }
    out.push_str(r#"<w:p><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>"#);
    out
}

const ENTRIES: [&str; 2] = [
    "Boer, G. J. (2016). The Decadal Climate Prediction Project. Geoscientific Model Development.",
    "Smith, D. M. (2013). A comparison of initializations. Climate Dynamics.",
];

#[test]
fn engine_docx_a_bibliography_field_is_the_references_section_and_is_extended_after_it() {
    for (instr, heading) in [
        (
            " ADDIN ZOTERO_BIBL {\"uncited\":[]} CSL_BIBLIOGRAPHY ",
            Some("Reference list"),
        ),
        (
            "ADDIN Mendeley Bibliography CSL_BIBLIOGRAPHY ",
            Some("References"),
        ),
        (" BIBLIOGRAPHY ", None),
    ] {
        let head = heading.map_or(String::new(), |h| {
            format!(
                r#"<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>{h}</w:t></w:r></w:p>"#
            )
        });
        let body = format!(
            "<w:p><w:r><w:t>{LONG} in the body.</w:t></w:r></w:p>{head}{}",
            bibliography_field(instr, &ENTRIES)
        );
        let bytes = docx_with_body(&body);
        let p = parse(&bytes).unwrap();
        assert_eq!(p.references_heading.as_deref(), heading, "{instr}");
        let listed: Vec<&str> = p.references.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(listed, ENTRIES, "{instr}");
        assert_eq!(p.paragraphs.len(), 1, "{instr}: {:#?}", p.paragraphs);

        let (out, doc) = cite_carefully(instr, &bytes, &opts(Mode::Every, 2, 2, 3));
        assert_eq!(out.stats.references_added, 2, "{instr}");
        assert!(
            !doc.contains(
                ">References</w:t></w:r></w:p><w:p><w:pPr><w:pStyle w:val=\"Bibliography\""
            ) || heading.is_some()
        );
        // After the field's end, which a reference manager rewrites, never inside it.
        let end = doc.rfind("w:fldCharType=\"end\"").unwrap();
        let first_new = doc.find("https://doi.org/").unwrap();
        assert!(first_new > end, "{instr}: a new entry inside the field");
        // New entries take the existing entries' look.
        assert_eq!(doc.matches("<w:pStyle w:val=\"Bibliography\"/>").count(), 4);
        let again = parse(&out.bytes).unwrap();
        assert_eq!(again.references_heading.as_deref(), heading);
        assert_eq!(
            again.references.len(),
            4,
            "{instr}: {:#?}",
            again.references
        );
        assert_eq!(
            &again.references[..2]
                .iter()
                .map(|r| r.text.as_str())
                .collect::<Vec<_>>(),
            &ENTRIES
        );
        // Cited again, the same section grows.
        let (twice, doc) = cite_carefully(instr, &out.bytes, &opts(Mode::Every, 3, 3, 8));
        let p2 = parse(&twice.bytes).unwrap();
        assert_eq!(
            p2.references.len(),
            4 + twice.stats.references_added,
            "{instr}"
        );
        assert_eq!(
            doc.matches(">References<").count(),
            usize::from(heading == Some("References"))
        );
    }
}

#[test]
fn engine_docx_a_bibliography_content_control_is_the_references_section() {
    // Word's own: a Bibliographies building block holding a heading and a
    // bibliography control around the BIBLIOGRAPHY field.
    let body = format!(
        r#"<w:p><w:r><w:t>{LONG} in the body.</w:t></w:r></w:p><w:sdt><w:sdtPr><w:docPartObj><w:docPartGallery w:val="Bibliographies"/><w:docPartUnique/></w:docPartObj></w:sdtPr><w:sdtContent><w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Works Consulted</w:t></w:r></w:p><w:sdt><w:sdtPr><w:bibliography/></w:sdtPr><w:sdtContent>{}</w:sdtContent></w:sdt></w:sdtContent></w:sdt><w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Appendix</w:t></w:r></w:p><w:p><w:r><w:t>{LONG} in the appendix.</w:t></w:r></w:p>"#,
        bibliography_field(" BIBLIOGRAPHY ", &ENTRIES)
    );
    let bytes = docx_with_body(&body);
    let p = parse(&bytes).unwrap();
    assert_eq!(p.references_heading.as_deref(), Some("Works Consulted"));
    assert_eq!(p.references.len(), 2);
    assert_eq!(p.paragraphs.len(), 3, "{:#?}", p.paragraphs);
    let (out, doc) = cite_carefully("control", &bytes, &opts(Mode::Every, 1, 1, 0));
    assert_eq!(out.stats.paragraphs_cited, 2);
    let added = out.stats.references_added;
    assert!(added > 0);
    // Inside the building block, after the bibliography control Word refills.
    let inner_end = doc.find("</w:sdtContent></w:sdt>").unwrap();
    let outer_end = doc.rfind("</w:sdtContent></w:sdt>").unwrap();
    let first_new = doc.find("https://doi.org/").unwrap();
    assert!(inner_end < first_new && first_new < outer_end, "{doc}");
    assert!(!doc.contains(">References<"));
    let again = parse(&out.bytes).unwrap();
    assert_eq!(again.references.len(), 2 + added);
    assert!(again.paragraphs.last().unwrap().text.contains("appendix ("));
}

#[test]
fn engine_docx_corpus_citation_managers_fields_are_kept_and_their_bibliographies_read() {
    for (name, heading, entries) in [
        ("docx/pandoc-zotero_citations.docx", "Reference list", 3),
        ("docx/pandoc-mendeley_citations.docx", "References", 4),
    ] {
        let bytes = corpus(name);
        let p = parse(&bytes).unwrap();
        assert_eq!(p.references_heading.as_deref(), Some(heading), "{name}");
        assert_eq!(p.references.len(), entries, "{name}: {:#?}", p.references);
        assert!(
            p.paragraphs
                .iter()
                .all(|q| !q.text.contains("https://doi.org")),
            "{name}"
        );
        for o in careful_options() {
            let (out, doc) = cite_carefully(name, &bytes, &o);
            // Every body sentence here already holds a citation field.
            assert_eq!(out.stats, CiteStats::default(), "{name} {o:?}");
            assert_eq!(out.bytes, bytes);
            assert!(!doc.contains(">References<") || heading == "References");
        }
    }
    // Word's CITATION and BIBLIOGRAPHY, a TOC, a table of figures, an index and a
    // table of authorities.
    let bytes = fixture("docx/citations-bibliography-toc.docx");
    for o in careful_options() {
        let (out, doc) = cite_carefully("citations-bibliography-toc", &bytes, &o);
        assert!(out.stats.paragraphs_cited > 0);
        let bib_end = doc.find("BIBLIOGRAPHY").unwrap();
        let end_of_field = bib_end + doc[bib_end..].find("w:fldCharType=\"end\"").unwrap();
        assert!(
            doc.find("https://doi.org/").unwrap() > end_of_field,
            "{o:?}"
        );
    }
}

#[test]
fn engine_docx_corpus_tracked_changes_text_boxes_and_controls_are_cited_carefully() {
    for name in [
        "docx/pandoc-track_changes_insertion.docx",
        "docx/pandoc-track_changes_move.docx",
        "docx/pandoc-paragraph_insertion_deletion.docx",
        "docx/mammoth-text-box.docx",
        "docx/pandoc-text_in_shape_format.docx",
        "docx/pandoc-sdt_elements.docx",
        "docx/pandoc-instrText_hyperlink.docx",
    ] {
        let bytes = corpus(name);
        for o in careful_options() {
            cite_carefully(name, &bytes, &o);
        }
    }
    for (name, _) in fixtures("docx") {
        let bytes = fixture(&name);
        for o in careful_options() {
            cite_carefully(&name, &bytes, &o);
        }
    }
}

/// A shape written twice as alternate content, its fallback holding `fallback`.
fn alternate_sp(choice: &str, fallback: &str) -> String {
    let para = |t: &str| format!("<a:p><a:r><a:t>{t}</a:t></a:r></a:p>");
    format!(
        r#"<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><mc:Choice Requires="a14">{}</mc:Choice><mc:Fallback>{}</mc:Fallback></mc:AlternateContent>"#,
        sp(3, "", &choice.split('|').map(para).collect::<String>()),
        sp(4, "", &fallback.split('|').map(para).collect::<String>()),
    )
}

/// The text of each `a:p` of each `mc:Choice` and `mc:Fallback` of a slide.
fn slide_alternates(xml: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let t = Tree::parse(xml, "s").unwrap();
    let paras = |of: usize| -> Vec<String> {
        t.descendants(of)
            .filter(|&d| t.elems[d].is(Ns::A, "p"))
            .map(|p| {
                t.descendants(p)
                    .filter(|&d| t.elems[d].is(Ns::A, "t"))
                    .map(|d| decode(t.inner(d)).0)
                    .collect::<String>()
            })
            .collect()
    };
    (0..t.elems.len())
        .filter(|&i| t.elems[i].is(Ns::Mc, "AlternateContent"))
        .map(|a| {
            (
                paras(t.child(a, Ns::Mc, "Choice").unwrap()),
                paras(t.child(a, Ns::Mc, "Fallback").unwrap()),
            )
        })
        .collect()
}

#[test]
fn engine_pptx_both_copies_of_alternate_content_get_the_same_citation() {
    let a = format!("{LONG} on a shape.");
    let b = format!("{LONG} on its second line!");
    let same = alternate_sp(&format!("{a}|{b}"), &format!("{a}|{b}"));
    let differ = alternate_sp(&a, &b);
    let bytes = pptx_with_slides(&[&same, &differ]);
    assert_eq!(
        parse(&bytes).unwrap().paragraphs.len(),
        3,
        "each copy read once"
    );
    for o in careful_options() {
        let out = cite(&bytes, &o).unwrap();
        assert_eq!(out.stats.paragraphs_cited, 2, "{o:?}");
        let s1 = slide_alternates(&part(&out.bytes, "ppt/slides/slide1.xml"));
        assert!(s1[0].0.iter().all(|t| t.contains(" (")), "{s1:?}");
        assert_eq!(s1[0].0, s1[0].1, "{o:?}");
        // Copies that differ are left alone, both.
        let s2 = slide_alternates(&part(&out.bytes, "ppt/slides/slide2.xml"));
        assert_eq!(s2, vec![(vec![a.clone()], vec![b.clone()])]);
    }
}
