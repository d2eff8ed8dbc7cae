//! `casebook cite` and `parse` against the sandbox answering the other ways a real
//! citation service does (`CiteVariants`): a document without References refused in
//! the service's words (and said before citing, from Casebook's own reading);
//! citations from the document's own list with nothing appended; citations inside
//! sentences in author-year, numeric and bracketed shapes; speaker notes cited and
//! counted as notes; metadata scrubbed; unseeded results; every error family; a front
//! with a smaller body limit; a slow cite's phases on a terminal, and Ctrl+C in each of
//! them leaving nothing behind.
//!
//! What the CLI writes is opened by tools Casebook did not write: python-docx and
//! python-pptx (`tests/tools/office_check.py`, in the repository's `.venv`) and
//! LibreOffice headless (a .docx to text, a .pptx to flat ODP, whose notes pages hold
//! the speaker notes).

mod common;

use casebook_sandbox::{
    CiteShape, CiteStyle, CiteVariants, ErrorFamily, Placement, RunningSandbox, SandboxConfig,
};
use casebook_testsupport::files::{fixture, padded, patch, python, python_tool, root, soffice};
use casebook_testsupport::sandbox::Blocking;
use common::{against, ok};
use serde_json::Value;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The card's words, printed before citing a document Casebook finds no References in.
const NOTE: &str = "No References section found. The service may refuse this document, or add a References section of its own.";
/// The sandbox's refusal under `requireReferences`.
const REFUSAL: &str = "No References section was found; the service cites only from the document's own reference list.";

/// The python-pptx deck with speaker notes and a References slide
/// (`core/tests/data/cite/make_notes_deck.py`).
fn notes_deck() -> PathBuf {
    root().join("src-tauri/core/tests/data/cite/notes-deck.pptx")
}

/// The sandbox in-process, on a runtime of its own, so the tests can block on the CLI.
struct Service(Blocking);

impl Service {
    fn start(variants: CiteVariants) -> Service {
        Service(Blocking::start(SandboxConfig {
            citations: variants,
            ..Default::default()
        }))
    }

    fn sandbox(&self) -> &RunningSandbox {
        self.0.sandbox()
    }

    fn set(&self, variants: CiteVariants) {
        self.sandbox().knobs().set(|k| k.citations = variants);
    }

    /// `casebook --base-url URL ARGS…` with the sandbox's key.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = against(self.sandbox().base_url(), args);
        cmd.env_remove("CASEBOOK_INVESTIGATIONS_KEY")
            .env("CASEBOOK_CITATIONS_KEY", self.sandbox().key());
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    fn run_with_stdin(&self, args: &[&str], text: &str) -> Output {
        let mut child = self.command(args).stdin(Stdio::piped()).spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let text = text.to_owned();
        let feed = std::thread::spawn(move || {
            let _ = stdin.write_all(text.as_bytes());
        });
        let out = child.wait_with_output().unwrap();
        feed.join().unwrap();
        out
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A scratch folder holding a copy of `from` named `name`.
fn scratch(from: &Path, name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::copy(from, &p).unwrap();
    (dir, p)
}

/// Cites `input` to `out` with `--json`: the summary line, parsed.
fn cite_json(s: &Service, input: &Path, out: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "cite",
        input.to_str().unwrap(),
        "--mode",
        "every",
        "-o",
        out.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    let text = ok(&s.run(&args));
    let v: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(v["output"], out.to_str().unwrap(), "{v}");
    v
}

/// The inserted runs of a summary's changes, as inserted, with whether each was in notes.
fn insertions(summary: &Value) -> Vec<(String, bool)> {
    let mut found = Vec::new();
    for ch in summary["changes"].as_array().unwrap() {
        for seg in ch["after"].as_array().unwrap() {
            if seg["inserted"] == true {
                found.push((
                    seg["text"].as_str().unwrap().to_owned(),
                    ch["notes"] == true,
                ));
            }
        }
    }
    found
}

/// Whether some change has an insertion with more of its paragraph after it than a
/// closing full stop: a citation inside the paragraph, not only at its end.
fn has_one_inside(summary: &Value) -> bool {
    summary["changes"].as_array().unwrap().iter().any(|ch| {
        let after = ch["after"].as_array().unwrap();
        after.iter().enumerate().any(|(i, seg)| {
            seg["inserted"] == true
                && after[i + 1..]
                    .iter()
                    .any(|rest| rest["text"].as_str().unwrap().trim().len() > 1)
        })
    })
}

/// Every change's unchanged runs are its paragraph as it was: the summary shows as new
/// only what was inserted.
fn assert_kept_is_before(summary: &Value) {
    for ch in summary["changes"].as_array().unwrap() {
        let kept: String = ch["after"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|seg| seg["inserted"] == false)
            .map(|seg| seg["text"].as_str().unwrap())
            .collect();
        assert_eq!(kept, ch["before"].as_str().unwrap(), "{ch}");
    }
}

/// `text` with every occurrence of each of `cut` taken out (and spaces evened).
fn without(text: &str, cut: &[String]) -> String {
    let mut t = text.to_owned();
    for c in cut {
        t = t.replace(c.as_str(), "");
    }
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

// Tools Casebook did not write.

/// What python-docx / python-pptx see in each file (`office_check.py`'s report).
fn office_report(paths: &[&Path]) -> Vec<Value> {
    let out = python_tool("office_check.py").args(paths).output().unwrap();
    let report: Vec<Value> = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("office_check: {e}: {}", stderr(&out)));
    assert!(
        out.status.success(),
        "python-docx/pptx could not open: {report:?}"
    );
    report
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap_or("").to_owned())
        .collect()
}

/// One LibreOffice at a time: two cores, and each conversion starts a whole office.
static SOFFICE: Mutex<()> = Mutex::new(());

/// `path` converted by LibreOffice headless to `format` (`txt:Text (encoded):UTF8` or
/// `fodp`), read back as text.
fn libreoffice(path: &Path, format: &str, ext: &str) -> String {
    let _one = SOFFICE.lock().unwrap_or_else(|p| p.into_inner());
    let out_dir = tempfile::tempdir().unwrap();
    let run = soffice([path], format, out_dir.path());
    let converted = out_dir
        .path()
        .join(Path::new(path.file_name().unwrap()).with_extension(ext));
    std::fs::read_to_string(&converted).unwrap_or_else(|e| {
        panic!(
            "LibreOffice did not convert {}: {e} ({})",
            path.display(),
            String::from_utf8_lossy(&run.stdout)
        )
    })
}

/// The text of a .docx as LibreOffice reads it.
fn libreoffice_text(docx: &Path) -> String {
    libreoffice(docx, "txt:Text (encoded):UTF8", "txt")
}

/// The speaker notes of each slide of a .pptx as LibreOffice reads them: the text of
/// each `presentation:notes` inside a `draw:page` of its flat ODP.
fn libreoffice_notes(pptx: &Path) -> Vec<String> {
    let xml = libreoffice(pptx, "fodp", "fodp");
    let mut notes = Vec::new();
    for page in xml.split("<draw:page ").skip(1) {
        let page = page.split("</draw:page>").next().unwrap_or("");
        let Some(start) = page.find("<presentation:notes") else {
            notes.push(String::new());
            continue;
        };
        let block = &page[start..];
        let block = &block[..block.find("</presentation:notes>").unwrap_or(block.len())];
        notes.push(xml_text(block));
    }
    notes
}

/// The character data of an XML fragment, entities decoded, spaces evened.
fn xml_text(xml: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in xml.chars() {
        match c {
            '<' => {
                in_tag = true;
                text.push(' ');
            }
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

// Documents.

/// The entries given to long-lorem-endnote.docx as its reference list.
const ENTRIES: [&str; 3] = [
    "Buzan, B. (2010). People, states and fear. ECPR Press.",
    "Smith, J., &amp; Jones, K. (2019). Cities and heat. Journal of Urban Studies, 4(2), 1-9.",
    "Lee, A., Park, B., &amp; Kim, C. (2020). Hospital admissions in summer. Health Reports.",
];

/// The real long-lorem-endnote.docx (33 paragraphs of sentences) with a References
/// heading and [`ENTRIES`] at the end of its body, written to `dir/name`.
fn lorem_with_references(dir: &Path, name: &str) -> PathBuf {
    let entries: String = ENTRIES
        .iter()
        .map(|e| format!("<w:p><w:r><w:t>{e}</w:t></w:r></w:p>"))
        .collect();
    let sect = "<w:sectPr w:rsidR=\"009E05A7\"";
    let block = format!(
        "<w:p><w:pPr><w:pStyle w:val=\"Heading1\"/></w:pPr><w:r><w:t>References</w:t></w:r></w:p>{entries}{sect}"
    );
    let bytes = patch(
        &std::fs::read(fixture("docx/long-lorem-endnote.docx")).unwrap(),
        &[("word/document.xml", sect, &block)],
    );
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// A real document padded to over `extra` bytes with a stored part, so that its upload
/// takes a while and fills the connection when the service does not read.
fn padded_docx(dir: &Path, extra: usize) -> PathBuf {
    let original = std::fs::read(fixture("docx/headings-lorem-multirun.docx")).unwrap();
    let p = dir.join("large.docx");
    std::fs::write(&p, padded(&original, extra)).unwrap();
    p
}

// References required.

#[test]
fn a_document_without_references_is_noted_then_refused_in_the_services_words() {
    let s = Service::start(CiteVariants {
        require_references: true,
        ..Default::default()
    });
    // Real documents with no References section: a Word document and a deck with notes.
    for rel in [
        "docx/headings-lorem-multirun.docx",
        "pptx/title-bullets-notes.pptx",
    ] {
        let name = Path::new(rel).file_name().unwrap().to_str().unwrap();
        let (dir, input) = scratch(&fixture(rel), name);
        let out = dir.path().join(format!("cited-{name}"));
        for json in [false, true] {
            let mut args = vec!["cite", input.to_str().unwrap(), "-o", out.to_str().unwrap()];
            if json {
                args.push("--json");
            }
            let run = s.run(&args);
            let err = stderr(&run);
            assert_eq!(run.status.code(), Some(5), "{rel} json={json}: {err}");
            assert!(run.stdout.is_empty(), "{rel}: nothing on stdout");
            // Said first, from Casebook's own reading, before anything was sent.
            let note_at = err.find(NOTE).unwrap_or_else(|| panic!("{rel}: {err}"));
            let refusal_at = err.find(REFUSAL).unwrap_or_else(|| panic!("{rel}: {err}"));
            assert!(note_at < refusal_at, "{err}");
            assert!(
                err.lines()
                    .any(|l| l.starts_with("casebook: ") && l.ends_with("[invalid_input]")),
                "{err}"
            );
            assert!(!out.exists(), "{rel}: no output");
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "{rel}");
        }
        // The preview says the same, from the service's parse, as text and as JSON.
        let shown = ok(&s.run(&["parse", input.to_str().unwrap()]));
        assert!(shown.contains("No References section."), "{shown}");
        let v: Value =
            serde_json::from_str(&ok(&s.run(&["parse", input.to_str().unwrap(), "--json"])))
                .unwrap();
        assert!(v["references"].as_array().unwrap().is_empty(), "{v}");
        assert!(!v["paragraphs"].as_array().unwrap().is_empty(), "{v}");
    }

    // The same text from stdin: noted as text, and refused.
    let run = s.run_with_stdin(
        &["cite", "-"],
        "Heat waves are longer than they were. Cities are hotter at night.\n",
    );
    assert_eq!(run.status.code(), Some(5));
    let err = stderr(&run);
    assert!(err.contains("No References section found. The service may refuse this text"));
    assert!(err.contains(REFUSAL), "{err}");

    // A document with References: no note, and it is cited.
    let dir = tempfile::tempdir().unwrap();
    let input = lorem_with_references(dir.path(), "with-refs.docx");
    let v: Value =
        serde_json::from_str(&ok(&s.run(&["parse", input.to_str().unwrap(), "--json"]))).unwrap();
    assert_eq!(
        v["references"].as_array().unwrap().len(),
        ENTRIES.len(),
        "{v}"
    );
    let run = s.run(&["cite", input.to_str().unwrap()]);
    ok(&run);
    assert!(!stderr(&run).contains(NOTE), "{}", stderr(&run));
    assert!(dir.path().join("with-refs.cited.docx").exists());
}

// The document's own list, nothing appended.

/// A real Word document with a real Bibliography (one entry, Mattmann & Zitting 2011):
/// cited only from it, nothing appended, and the summary says "references unchanged".
#[test]
fn only_the_documents_own_references_are_cited_and_nothing_is_appended() {
    let s = Service::start(CiteVariants {
        style: CiteStyle::Existing,
        ..Default::default()
    });
    let (dir, input) = scratch(
        &fixture("docx/citations-bibliography-toc.docx"),
        "bibliography.docx",
    );
    let out = dir.path().join("cited.docx");
    let v = cite_json(&s, &input, &out, &[]);
    let sum = &v["summary"];
    assert_eq!(sum["referencesAdded"], 0, "{v}");
    assert!(sum["citationsInserted"].as_u64().unwrap() >= 1, "{v}");
    assert_kept_is_before(sum);
    let inserted = insertions(sum);
    for (text, _) in &inserted {
        assert!(
            text.contains("Mattmann") && text.contains("2011"),
            "only the document's own entry is cited: {text}"
        );
    }
    let plain = ok(&s.run(&[
        "cite",
        input.to_str().unwrap(),
        "--mode",
        "every",
        "-o",
        out.to_str().unwrap(),
        "--overwrite",
    ]));
    assert!(plain.contains(", references unchanged"), "{plain}");
    assert!(!plain.contains("added"), "{plain}");

    // python-docx: the same paragraphs, none appended; the changed ones are the
    // originals with the citations in them.
    let report = office_report(&[&input, &out]);
    let (before, after) = (
        strings(&report[0]["paragraphs"]),
        strings(&report[1]["paragraphs"]),
    );
    assert_eq!(before.len(), after.len(), "nothing appended");
    let cut: Vec<String> = inserted.iter().map(|(t, _)| t.clone()).collect();
    let mut changed = 0;
    for (b, a) in before.iter().zip(&after) {
        if a != b {
            changed += 1;
            assert_eq!(without(a, &cut), without(b, &cut), "paragraph intact");
        }
    }
    assert_eq!(changed as u64, sum["paragraphsChanged"].as_u64().unwrap());
    // LibreOffice reads the citations in the text.
    let text = libreoffice_text(&out);
    for c in &cut {
        assert!(text.contains(c.trim()), "LibreOffice: {c} in\n{text}");
    }
}

// Inside sentences, in every shape.

fn has_year(t: &str) -> bool {
    t.as_bytes()
        .windows(4)
        .any(|w| w.iter().all(u8::is_ascii_digit))
}

/// Whether `t`, as inserted, is a citation of `shape` naming one of [`ENTRIES`].
fn of_shape(shape: CiteShape, t: &str) -> bool {
    let names = ["Buzan", "Smith", "Lee"];
    let named = names.iter().any(|n| t.contains(n));
    match shape {
        CiteShape::AuthorYear => named && has_year(t) && t.contains('(') && t.contains(')'),
        CiteShape::Bracketed => named && has_year(t) && t.starts_with('[') && t.ends_with(']'),
        CiteShape::Ibid => {
            t == "(ibid.)" || (named && has_year(t) && t.starts_with('(') && t.ends_with(')'))
        }
        CiteShape::Numeric => {
            let inner = t.trim_start_matches('[').trim_end_matches(']');
            t.starts_with('[')
                && t.ends_with(']')
                && inner
                    .split([',', '-', '–', ' '])
                    .filter(|n| !n.is_empty())
                    .all(|n| {
                        n.parse::<usize>()
                            .is_ok_and(|n| (1..=ENTRIES.len()).contains(&n))
                    })
        }
    }
}

#[test]
fn citations_inside_sentences_are_found_and_counted_in_every_shape() {
    let s = Service::start(CiteVariants::default());
    let dir = tempfile::tempdir().unwrap();
    let input = lorem_with_references(dir.path(), "lorem.docx");
    for shape in [
        CiteShape::AuthorYear,
        CiteShape::Numeric,
        CiteShape::Bracketed,
    ] {
        s.set(CiteVariants {
            style: CiteStyle::Existing,
            placement: Placement::Inside,
            shape,
            ..Default::default()
        });
        let out = dir.path().join(format!("lorem-{shape:?}.docx"));
        let v = cite_json(&s, &input, &out, &[]);
        let sum = &v["summary"];
        let changed = sum["paragraphsChanged"].as_u64().unwrap();
        let cited = sum["citationsInserted"].as_u64().unwrap();
        assert!(changed >= 10 && cited >= changed, "{shape:?}: {v}");
        assert_eq!(sum["referencesAdded"], 0, "{shape:?}");
        assert_eq!(sum["citationsInNotes"], 0, "{shape:?}");
        assert!(has_one_inside(sum), "{shape:?}: a citation mid-paragraph");
        assert_kept_is_before(sum);
        let inserted = insertions(sum);
        assert!(
            inserted.len() as u64 <= cited,
            "{shape:?}: a run holds one or more"
        );
        for (t, _) in &inserted {
            // A run is one citation, or several in one pair of brackets; a narrative
            // one (", as Smith and Jones (2019) notes") names its authors outside them.
            let t = t.trim();
            let t = t
                .strip_prefix(", as ")
                .and_then(|n| n.strip_suffix(" notes"))
                .unwrap_or(t);
            assert!(of_shape(shape, t), "{shape:?}: {t:?}");
        }

        // The plain summary counts the same.
        let plain = ok(&s.run(&[
            "cite",
            input.to_str().unwrap(),
            "--mode",
            "every",
            "-o",
            out.to_str().unwrap(),
            "--overwrite",
        ]));
        assert!(
            plain.contains(&format!(
                "{changed} paragraphs changed, {cited} citations inserted, references unchanged"
            )),
            "{shape:?}: {plain}"
        );

        // python-docx: every changed paragraph is the original with its citations in
        // it, mid-sentence; LibreOffice reads each citation in the text.
        let report = office_report(&[&input, &out]);
        let (before, after) = (
            strings(&report[0]["paragraphs"]),
            strings(&report[1]["paragraphs"]),
        );
        assert_eq!(before.len(), after.len(), "{shape:?}: nothing appended");
        let cut: Vec<String> = inserted.iter().map(|(t, _)| t.clone()).collect();
        let mut mid = 0;
        for (b, a) in before.iter().zip(&after) {
            if a != b {
                assert_eq!(without(a, &cut), without(b, &cut), "{shape:?}: intact");
                mid += usize::from(cut.iter().any(|c| {
                    a.find(c.as_str())
                        .is_some_and(|at| a[at + c.len()..].trim().len() > 1)
                }));
            }
        }
        assert!(
            mid > 0,
            "{shape:?}: python-docx sees a citation mid-paragraph"
        );
        let text = libreoffice_text(&out);
        for c in &cut {
            assert!(text.contains(c.trim()), "{shape:?}: LibreOffice: {c}");
        }
    }
}

// Speaker notes.

#[test]
fn speaker_notes_cited_are_counted_as_notes_and_read_by_other_tools() {
    let s = Service::start(CiteVariants {
        notes: true,
        style: CiteStyle::Existing,
        placement: Placement::Inside,
        shape: CiteShape::Bracketed,
        ..Default::default()
    });
    let (dir, input) = scratch(&notes_deck(), "deck.pptx");
    let out = dir.path().join("deck-cited.pptx");
    let v = cite_json(&s, &input, &out, &[]);
    let sum = &v["summary"];
    assert_eq!(v["kind"], "pptx");
    let in_notes = sum["citationsInNotes"].as_u64().unwrap();
    let all = sum["citationsInserted"].as_u64().unwrap();
    assert!(in_notes > 0 && all > in_notes, "body and notes: {v}");
    assert_eq!(sum["referencesAdded"], 0);
    assert_kept_is_before(sum);
    let inserted = insertions(sum);
    assert_eq!(
        inserted.iter().filter(|(_, notes)| *notes).count() as u64,
        in_notes,
        "the notes' count is the notes' insertions"
    );
    for ch in sum["changes"].as_array().unwrap() {
        assert!(
            ch["slide"].as_u64().is_some(),
            "each change names its slide: {ch}"
        );
    }
    assert!(has_one_inside(sum), "mid-sentence");

    let plain = ok(&s.run(&[
        "cite",
        input.to_str().unwrap(),
        "--mode",
        "every",
        "-o",
        out.to_str().unwrap(),
        "--overwrite",
    ]));
    assert!(
        plain.contains(&format!(
            "{all} citations inserted ({in_notes} in speaker notes), references unchanged"
        )),
        "{plain}"
    );

    // python-pptx and LibreOffice: each cited note is the slide's notes, as the summary
    // shows it after citing; the body's citations are on the slides; nothing else moved.
    let report = office_report(&[&input, &out]);
    assert_eq!(report[0]["slides"], report[1]["slides"]);
    let notes_after = strings(&report[1]["notes"]);
    let lo_notes = libreoffice_notes(&out);
    assert_eq!(lo_notes.len(), notes_after.len(), "{lo_notes:?}");
    let even = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    for ch in sum["changes"].as_array().unwrap() {
        let after: String = ch["after"]
            .as_array()
            .unwrap()
            .iter()
            .map(|seg| seg["text"].as_str().unwrap())
            .collect();
        let slide = ch["slide"].as_u64().unwrap() as usize - 1;
        if ch["notes"] == true {
            assert_eq!(even(&notes_after[slide]), even(&after), "python-pptx notes");
            // The notes page also holds its slide-number field.
            assert!(
                lo_notes[slide].contains(&even(&after)),
                "LibreOffice notes: {:?}",
                lo_notes[slide]
            );
        } else {
            let body = strings(&report[1]["paragraphs"]);
            assert!(
                body.iter().any(|p| even(p) == even(&after)),
                "python-pptx body: {after}"
            );
        }
    }
    let (b, a) = (
        strings(&report[0]["paragraphs"]),
        strings(&report[1]["paragraphs"]),
    );
    assert_eq!(b.len(), a.len(), "paragraphs intact");
}

// Metadata.

/// A real document whose author and last editor are named: scrubbed by the service,
/// which the summary does not count, and python-docx sees blank.
#[test]
fn scrubbed_metadata_is_not_counted_as_a_change() {
    let s = Service::start(CiteVariants::default());
    let (dir, input) = scratch(
        &fixture("docx/citations-bibliography-toc.docx"),
        "bibliography.docx",
    );
    let kept = dir.path().join("kept.docx");
    let scrubbed = dir.path().join("scrubbed.docx");
    let plain = cite_json(&s, &input, &kept, &[]);
    s.set(CiteVariants {
        scrub_metadata: true,
        ..Default::default()
    });
    let v = cite_json(&s, &input, &scrubbed, &[]);
    assert_eq!(
        v["summary"], plain["summary"],
        "the same cite (seeded from the document) with its metadata scrubbed: the same summary"
    );
    let text = v.to_string();
    assert!(!text.contains("This is the Author") && !text.contains("Allison"));
    let report = office_report(&[&kept, &scrubbed]);
    assert_eq!(report[0]["author"], "This is the Author");
    assert_eq!(report[0]["lastModifiedBy"], "Allison, Timothy B.");
    assert_eq!(report[1]["author"], "", "scrubbed");
    assert_eq!(report[1]["lastModifiedBy"], "", "scrubbed");
    assert_eq!(report[0]["paragraphs"], report[1]["paragraphs"]);
}

// Unseeded results.

/// A service that is not repeatable: the same cite twice, even with `--seed`, differs,
/// and each summary is true of its own result (python-docx finds the original
/// paragraphs plus exactly what the summary says was inserted). Seeded, the two agree.
#[test]
fn unseeded_results_differ_and_each_summary_is_true_of_its_own() {
    let s = Service::start(CiteVariants {
        placement: Placement::Inside,
        style: CiteStyle::Existing,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let input = lorem_with_references(dir.path(), "lorem.docx");
    let twice = |tag: &str| {
        let a = dir.path().join(format!("{tag}-a.docx"));
        let b = dir.path().join(format!("{tag}-b.docx"));
        let va = cite_json(&s, &input, &a, &["--seed", "7"]);
        let vb = cite_json(&s, &input, &b, &["--seed", "7"]);
        (a, va, b, vb)
    };
    let (_, sa, _, sb) = twice("seeded");
    assert_eq!(sa["summary"], sb["summary"], "seeded: repeatable");

    s.set(CiteVariants {
        placement: Placement::Inside,
        style: CiteStyle::Existing,
        unseeded: true,
        ..Default::default()
    });
    let (a, va, b, vb) = twice("unseeded");
    assert_ne!(
        va["summary"]["changes"], vb["summary"]["changes"],
        "not repeatable"
    );
    assert_ne!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let report = office_report(&[&input, &a, &b]);
    let before = strings(&report[0]["paragraphs"]);
    for (i, v) in [(1, &va), (2, &vb)] {
        let after = strings(&report[i]["paragraphs"]);
        assert_eq!(before.len(), after.len());
        let cut: Vec<String> = insertions(&v["summary"])
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        let mut changed = 0;
        for (b, a) in before.iter().zip(&after) {
            if a != b {
                changed += 1;
                assert_eq!(without(a, &cut), without(b, &cut), "result {i}");
            }
        }
        assert_eq!(changed, v["summary"]["paragraphsChanged"].as_u64().unwrap());
    }
}

// Errors.

/// Every error family, with and without `--json`: the service's own sentence (or the
/// page's title and first paragraph), never markup or JSON, and the exit code of its
/// kind. A wrong key is exit 3 in every family, whatever its body.
#[test]
fn every_error_family_shows_the_services_sentence() {
    let s = Service::start(CiteVariants::default());
    let (dir, input) = scratch(
        &fixture("docx/headings-lorem-multirun.docx"),
        "no-references.docx",
    );
    let out = dir.path().join("out.docx");
    for family in [
        ErrorFamily::Default,
        ErrorFamily::PlainError,
        ErrorFamily::Nested,
        ErrorFamily::Message,
        ErrorFamily::Detail,
        ErrorFamily::Problem,
        ErrorFamily::Text,
        ErrorFamily::Html,
    ] {
        s.set(CiteVariants {
            require_references: true,
            error_family: family,
            ..Default::default()
        });
        for json in [false, true] {
            let mut args = vec!["cite", input.to_str().unwrap(), "-o", out.to_str().unwrap()];
            if json {
                args.push("--json");
            }
            let run = s.run(&args);
            assert_eq!(run.status.code(), Some(5), "{family:?}: {}", stderr(&run));
            let err = stderr(&run);
            let line = err
                .lines()
                .find(|l| l.starts_with("casebook: "))
                .unwrap_or_else(|| panic!("{family:?}: {err}"));
            assert!(line.contains(REFUSAL), "{family:?}: {line}");
            assert!(line.ends_with("[invalid_input]"), "{family:?}: {line}");
            let said = line.trim_end_matches("[invalid_input]");
            assert!(
                !said.contains('<') && !said.contains('{') && !said.contains("\\n"),
                "{family:?}: no markup or JSON: {line}"
            );
            assert!(!out.exists());
        }
        let wrong = s
            .command(&["cite", input.to_str().unwrap(), "-o", out.to_str().unwrap()])
            .env("CASEBOOK_CITATIONS_KEY", "cbk_wrong_key_0000")
            .output()
            .unwrap();
        let err = stderr(&wrong);
        assert_eq!(wrong.status.code(), Some(3), "{family:?}: {err}");
        assert!(err.contains("[unauthorized]"), "{family:?}: {err}");
        assert!(
            !err.contains('<') && !err.contains('{'),
            "{family:?}: {err}"
        );
    }
}

/// A front with a smaller body limit than the service's 12 MB: its 413 page is named
/// as what it is, with the size sent.
#[test]
fn a_front_that_takes_less_than_12_mb_is_named_with_the_size_sent() {
    let s = Service::start(CiteVariants {
        front_limit_bytes: Some(200_000),
        ..Default::default()
    });
    let mut essay = String::new();
    while essay.len() < 600_000 {
        essay.push_str(
            "Heat waves are becoming longer and more frequent in most cities. \
             Hospital admissions rise on the hottest days.\n\n",
        );
    }
    essay.push_str("References\nSmith, J. (2019). Heat and health. Journal, 4, 1-20.\n");
    for json in [false, true] {
        let args: &[&str] = if json {
            &["cite", "-", "--json"]
        } else {
            &["cite", "-"]
        };
        let run = s.run_with_stdin(args, &essay);
        let err = stderr(&run);
        assert_eq!(run.status.code(), Some(5), "{err}");
        assert!(run.stdout.is_empty(), "nothing cited to stdout");
        assert!(err.contains("something in front of it"), "{err}");
        assert!(err.contains("0.6 MB"), "the size sent: {err}");
        assert!(err.contains("413"), "the front's own words: {err}");
        assert!(err.contains("[too_large]"), "{err}");
    }

    // A document under the front's limit goes through.
    let (dir, input) = scratch(&fixture("docx/hyperlink-fragments.docx"), "small.docx");
    ok(&s.run(&["cite", input.to_str().unwrap()]));
    assert!(dir.path().join("small.cited.docx").exists());
}

// A slow cite on a terminal, and Ctrl+C.

/// A pseudo-terminal: the CLI's stderr is a terminal, as a person's is, and what it
/// writes there is collected as it comes.
struct Terminal {
    seen: Arc<Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Terminal {
    /// Spawns `cmd` with its stderr on a new pseudo-terminal.
    fn spawn(cmd: &mut Command) -> (Child, Terminal) {
        let (master, slave) = common::pty();
        let child = cmd.stderr(Stdio::from(slave)).spawn().unwrap();
        // The command held the only other end: once the child exits, reads end (EIO).
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let mut file = std::fs::File::from(master);
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = file.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        (
            child,
            Terminal {
                seen,
                reader: Some(reader),
            },
        )
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }

    /// Waits (up to 60 s) until what the terminal shows satisfies `f`.
    fn until(&self, what: &str, child: &mut Child, f: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if f(&self.text()) {
                return;
            }
            if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
                let _ = child.kill();
                panic!("the terminal never showed {what}: {:?}", self.text());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything the terminal showed, once the child has exited.
    fn finish(mut self) -> String {
        if let Some(r) = self.reader.take() {
            r.join().unwrap();
        }
        self.text()
    }
}

/// The percentages of "sending… N%" lines the terminal showed.
fn percentages(shown: &str) -> Vec<u64> {
    shown
        .split("sending… ")
        .skip(1)
        .filter_map(|rest| rest.split('%').next()?.parse().ok())
        .collect()
}

/// The seconds of "waiting for the service… N s" lines.
fn waited(shown: &str) -> Vec<u64> {
    shown
        .split("waiting for the service… ")
        .skip(1)
        .filter_map(|rest| rest.split(' ').next()?.parse().ok())
        .collect()
}

/// What the person sees last: the text after the final line clearing.
fn last_line(shown: &str) -> &str {
    shown.rsplit("\r\x1b[2K").next().unwrap_or(shown)
}

/// A large cite held at each phase: the upload stalled part way (the service does not
/// read), then the service working on it, then the answer arriving. On a terminal the
/// CLI shows each: the percentage sent, the seconds waited, receiving; then the line is
/// cleared and the summary printed. On a pipe it shows none of it.
#[test]
fn a_slow_cite_shows_its_phases_on_a_terminal() {
    let s = Service::start(CiteVariants {
        slow_cite_ms: 2500,
        ..Default::default()
    });
    s.sandbox().knobs().set(|k| k.latency_ms = 1500);
    let dir = tempfile::tempdir().unwrap();
    let input = padded_docx(dir.path(), 8 << 20);
    let out = dir.path().join("out.docx");
    let (mut child, term) = Terminal::spawn(&mut s.command(&[
        "cite",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]));
    let status = child.wait().unwrap();
    let shown = term.finish();
    assert!(status.success(), "{shown:?}");
    let sent = percentages(&shown);
    assert!(
        sent.iter().any(|p| *p < 100),
        "the upload's percentage while it was held: {shown:?}"
    );
    assert!(sent.windows(2).all(|w| w[0] <= w[1]), "{sent:?}");
    let seconds = waited(&shown);
    assert!(
        seconds.contains(&0) && seconds.iter().any(|s| *s >= 1),
        "the time so far: {seconds:?} in {shown:?}"
    );
    let (first_wait, receiving) = (
        shown.find("waiting for the service…").unwrap(),
        shown
            .find(": receiving…")
            .unwrap_or_else(|| panic!("{shown:?}")),
    );
    assert!(shown.find("sending… ").unwrap() < first_wait && first_wait < receiving);
    assert_eq!(
        last_line(&shown),
        "",
        "the progress line is cleared at the end"
    );
    assert!(out.exists());

    // Not a terminal: no progress at all, only the result on stdout.
    let piped = s.run(&[
        "cite",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--overwrite",
    ]);
    ok(&piped);
    assert_eq!(
        stderr(&piped),
        format!("{NOTE}\n"),
        "no progress on a pipe, only the note (the padding has no References)"
    );
}

/// Descriptors `pid` holds open on files under `dir` (an unnamed file made with
/// `O_TMPFILE` there shows as `dir/#N (deleted)`).
fn open_under(pid: u32, dir: &Path) -> Vec<String> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .map(|p| p.display().to_string())
        .filter(|p| p.starts_with(&dir.display().to_string()))
        .collect()
}

/// Ctrl+C while the upload is held part way, while the service works, and while the
/// answer arrives: each time the CLI clears its line, says it was cancelled and that
/// nothing was saved, exits 130, and leaves nothing: no output, nothing beside it, no
/// temporary file (the answer was going into an unnamed file in the output's folder,
/// which it held open until then).
#[test]
fn ctrl_c_in_each_phase_of_a_slow_cite_leaves_nothing() {
    let s = Service::start(CiteVariants::default());
    let dir = tempfile::tempdir().unwrap();
    let input = padded_docx(dir.path(), 8 << 20);
    for phase in ["sending", "waiting", "receiving"] {
        s.sandbox().knobs().clear();
        match phase {
            "sending" => s.sandbox().knobs().set(|k| k.latency_ms = 30_000),
            "waiting" => s.set(CiteVariants {
                slow_cite_ms: 30_000,
                ..Default::default()
            }),
            _ => s.sandbox().knobs().set(|k| k.slow_drip_ms = 20),
        }
        let out_dir = tempfile::tempdir().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let out = out_dir.path().join("cited.docx");
        let (mut child, term) = Terminal::spawn(
            s.command(&["cite", input.to_str().unwrap(), "-o", out.to_str().unwrap()])
                .env("TMPDIR", tmp.path()),
        );
        term.until(phase, &mut child, |shown| match phase {
            "sending" => percentages(shown).iter().any(|p| *p > 0 && *p < 100),
            "waiting" => waited(shown).iter().any(|s| *s >= 1),
            _ => shown.contains("receiving…"),
        });
        let mut held = open_under(child.id(), out_dir.path());
        held.dedup();
        assert_eq!(
            held.len(),
            1,
            "{phase}: the answer's unnamed file: {held:?}"
        );
        assert!(held[0].ends_with("(deleted)"), "{phase}: {held:?}");
        // SAFETY: signalling our own child.
        assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
        let status = child.wait().unwrap();
        let shown = term.finish();
        assert_eq!(status.code(), Some(130), "{phase}: {shown:?}");
        assert!(
            last_line(&shown).starts_with("casebook: Cancelled: nothing was saved. [cancelled]"),
            "{phase}: on a line of its own: {shown:?}"
        );
        assert!(!out.exists(), "{phase}: no output");
        let left: Vec<_> = std::fs::read_dir(out_dir.path())
            .unwrap()
            .flatten()
            .collect();
        assert!(left.is_empty(), "{phase}: nothing beside it: {left:?}");
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().collect();
        assert!(left.is_empty(), "{phase}: no temporary file: {left:?}");
    }
}

// Every shape, counted alike on the card, in --json and in the text.

/// Entries whose citations take every shape the service writes from a document's own
/// list: a person, two, an organisation, a name without a year, no usable author.
const SHAPED: [&str; 5] = [
    "Buzan, B. (2010). People, states and fear. ECPR Press.",
    "Smith, J., &amp; Jones, K. (2019). Cities and heat. Journal of Urban Studies.",
    "World Health Organization. (2020). Heat and health. WHO.",
    "Kramer. Untitled field notes, kept in the archive.",
    "(n.d.). A pamphlet handed out at the station.",
];

#[test]
fn the_card_the_json_and_the_text_count_every_inserted_shape_alike() {
    let s = Service::start(CiteVariants::default());
    let dir = tempfile::tempdir().unwrap();
    let entries: String = SHAPED
        .iter()
        .map(|e| format!("<w:p><w:r><w:t>{e}</w:t></w:r></w:p>"))
        .collect();
    let sect = "<w:sectPr w:rsidR=\"009E05A7\"";
    let original = patch(
        &std::fs::read(fixture("docx/long-lorem-endnote.docx")).unwrap(),
        &[(
            "word/document.xml",
            sect,
            &format!(
                "<w:p><w:pPr><w:pStyle w:val=\"Heading1\"/></w:pPr><w:r><w:t>References</w:t></w:r></w:p>{entries}{sect}"
            ),
        )],
    );
    let input = dir.path().join("shapes.docx");
    std::fs::write(&input, &original).unwrap();
    let mut seen: Vec<String> = Vec::new();
    for (style, placement, shape) in [
        (CiteStyle::Existing, Placement::End, CiteShape::AuthorYear),
        (
            CiteStyle::Existing,
            Placement::Inside,
            CiteShape::AuthorYear,
        ),
        (CiteStyle::Existing, Placement::End, CiteShape::Numeric),
        (CiteStyle::Existing, Placement::Inside, CiteShape::Bracketed),
        (CiteStyle::Existing, Placement::End, CiteShape::Ibid),
        (CiteStyle::Existing, Placement::Inside, CiteShape::Ibid),
        (CiteStyle::Library, Placement::End, CiteShape::Ibid),
    ] {
        let what = format!("{style:?} {placement:?} {shape:?}");
        s.set(CiteVariants {
            style,
            placement,
            shape,
            ..Default::default()
        });
        let out = dir
            .path()
            .join(format!("{style:?}-{placement:?}-{shape:?}.docx"));
        let v = cite_json(&s, &input, &out, &["--seed", "7"]);
        let sum = &v["summary"];

        // What the service did: its engine, with the options the CLI sent.
        let truth = casebook_sandbox::engine::cite(
            &original,
            &casebook_sandbox::engine::CiteOptions {
                mode: casebook_sandbox::engine::Mode::Every,
                min: 1,
                max: 2,
                seed: 7,
                style,
                placement,
                shape,
                notes: false,
            },
        )
        .unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), truth.bytes, "{what}");
        let st = truth.stats;
        assert_eq!(
            sum["paragraphsChanged"], st.paragraphs_cited,
            "{what}: {sum}"
        );
        assert_eq!(
            sum["citationsInserted"], st.citations_inserted,
            "{what}: {sum}"
        );
        assert_eq!(sum["referencesAdded"], st.references_added, "{what}: {sum}");
        assert_kept_is_before(sum);

        // The card shows the summary core makes for the app from the same two files.
        let card = casebook_core::citations::summary::summarize_files(
            &std::fs::File::open(&input).unwrap(),
            &std::fs::File::open(&out).unwrap(),
        )
        .unwrap();
        assert_eq!(serde_json::to_value(&card).unwrap(), *sum, "{what}");

        // The text says the same numbers.
        let plain = ok(&s.run(&[
            "cite",
            input.to_str().unwrap(),
            "--mode",
            "every",
            "--seed",
            "7",
            "-o",
            out.to_str().unwrap(),
            "--overwrite",
        ]));
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let line = format!(
            "{} paragraph{} changed, {} citation{} inserted",
            st.paragraphs_cited,
            plural(st.paragraphs_cited),
            st.citations_inserted,
            plural(st.citations_inserted)
        );
        assert!(plain.contains(&line), "{what}: {plain}");

        // python-docx reads every insertion in the cited document.
        let report = office_report(&[&out]);
        let paragraphs = strings(&report[0]["paragraphs"]).join("\n");
        for (t, _) in insertions(sum) {
            assert!(paragraphs.contains(&t), "{what}: python-docx: {t:?}");
            seen.push(t);
        }
    }
    for shape in [
        "(World Health Organization, 2020)",
        "(Kramer)",
        "(Source 5)",
        "(ibid.)",
        "[3]",
    ] {
        assert!(
            seen.iter().any(|t| t.contains(shape)),
            "never inserted: {shape}: {seen:#?}"
        );
    }
}

// Fields, bibliographies and text boxes of real documents.

fn corpus(rel: &str) -> PathBuf {
    root().join("../shared/corpus").join(rel)
}

#[test]
fn real_bibliographies_are_known_and_extended_and_text_boxes_cited_in_both_copies() {
    let s = Service::start(CiteVariants::default());
    // Zotero's and Mendeley's bibliography fields are the References section: no
    // warning before citing, and every body sentence already holds a citation field.
    for rel in [
        "docx/pandoc-zotero_citations.docx",
        "docx/pandoc-mendeley_citations.docx",
    ] {
        let name = Path::new(rel).file_name().unwrap().to_str().unwrap();
        let (dir, input) = scratch(&corpus(rel), name);
        let out = dir.path().join(format!("cited-{name}"));
        let run = s.run(&[
            "cite",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--mode",
            "every",
            "--json",
        ]);
        let v: Value = serde_json::from_str(ok(&run).trim()).unwrap();
        assert!(!stderr(&run).contains(NOTE), "{rel}: {}", stderr(&run));
        assert_eq!(v["summary"]["citationsInserted"], 0, "{rel}: {v}");
        assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&input).unwrap());
    }

    // Word's bibliography control: new entries after the field Word refills, in the
    // same section; LibreOffice reads them after the existing entry.
    let (dir, input) = scratch(
        &fixture("docx/citations-bibliography-toc.docx"),
        "word.docx",
    );
    let out = dir.path().join("cited-word.docx");
    let v = cite_json(&s, &input, &out, &["--seed", "3"]);
    let added = v["summary"]["referencesAdded"].as_u64().unwrap();
    assert!(added > 0, "{v}");
    let after = casebook_core::citations::reader::read(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(after.references_heading.as_deref(), Some("Bibliography"));
    assert_eq!(after.references.len() as u64, 1 + added);
    let text = libreoffice_text(&out);
    let existing = text.find("Mattmann, C., & Zitting, J. (2011)").unwrap();
    for r in &after.references[1..] {
        let at = text
            .find(r.as_str())
            .unwrap_or_else(|| panic!("LibreOffice: {r}"));
        assert!(at > existing, "{r}");
    }
    assert!(
        !text.contains("\nReferences\n"),
        "no second References section"
    );
    let (fields_before, fields_after) = (python_fields(&input), python_fields(&out));
    assert_eq!(
        fields_before, fields_after,
        "python-docx: every field's result as it was"
    );

    // A text box written twice (DrawingML and its VML fallback): python-docx reads both
    // copies, and both carry the same citation; LibreOffice shows it.
    let rel = "docx/pandoc-text_in_shape_format.docx";
    let (dir, input) = scratch(&corpus(rel), "shape.docx");
    let out = dir.path().join("cited-shape.docx");
    let v = cite_json(&s, &input, &out, &[]);
    let boxed = "Using Microsoft Word 2007/2010for Writing Technical Documents";
    let inserted: Vec<String> = insertions(&v["summary"])
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    let report = office_report(&[&out]);
    let copies: Vec<String> = strings(&report[0]["paragraphs"])
        .into_iter()
        .filter(|p| p.starts_with(boxed) && p.len() > boxed.len())
        .collect();
    assert_eq!(copies.len(), 2, "{copies:#?}");
    assert_eq!(copies[0], copies[1]);
    assert!(
        inserted.iter().any(|t| copies[0].contains(t.as_str())),
        "{copies:?} {inserted:?}"
    );
    // LibreOffice's plain text leaves shapes out; its flat ODT holds the text box.
    let fodt = libreoffice(&out, "fodt", "fodt");
    let cited = inserted
        .iter()
        .find(|t| copies[0].contains(t.as_str()))
        .unwrap()
        .replace('&', "&amp;");
    assert!(
        fodt.contains(&cited),
        "LibreOffice: {cited} not in the text box"
    );
}

/// Every field's instruction and result text, as python-docx's XML reads them.
fn python_fields(docx: &Path) -> String {
    let script = r#"
import sys, docx
from docx.oxml.ns import qn
body = docx.Document(sys.argv[1]).element.body
out, stack = [], []
for el in body.iter():
    if el.tag == qn('w:fldChar'):
        t = el.get(qn('w:fldCharType'))
        if t == 'begin': stack.append(['', '', False])
        elif t == 'separate' and stack: stack[-1][2] = True
        elif t == 'end' and stack: out.append(stack.pop()[:2])
    elif el.tag == qn('w:instrText') and stack: stack[-1][0] += el.text or ''
    elif el.tag == qn('w:t'):
        for f in stack:
            if f[2]: f[1] += el.text or ''
    elif el.tag == qn('w:fldSimple'):
        out.append([el.get(qn('w:instr')), ''.join(t.text or '' for t in el.iter(qn('w:t')))])
print(out)
"#;
    let run = Command::new(python())
        .args(["-c", script])
        .arg(docx)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    String::from_utf8(run.stdout).unwrap()
}
