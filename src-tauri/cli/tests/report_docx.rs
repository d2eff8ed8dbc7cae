//! `mission export --format docx`, and `--cite`: a finished mission's report as a Word
//! document, read back by tools Casebook did not write (python-docx through
//! `tests/tools/report_check.py`, LibreOffice headless), then cited by a service that
//! refuses documents without a References section.

mod common;

use casebook_sandbox::{CiteVariants, MissionProtocol, Pace, SandboxConfig};
use casebook_testsupport::files::{python_tool, soffice};
use casebook_testsupport::sandbox::Blocking;
use common::{against, ok};
use serde_json::Value;
use std::path::Path;
use std::process::Output;
const OBJECTIVE: &str = "Does urban heat raise hospital admissions?";

/// The sandbox in-process, speaking eve as the app's does, and citing only documents
/// with their own References.
struct Service {
    service: Blocking,
    data: tempfile::TempDir,
}

impl Service {
    fn start() -> Self {
        Self {
            service: Blocking::start(SandboxConfig {
                pace: Pace::Instant,
                // The app's default generation, whose reports link their sources.
                mission_protocol: MissionProtocol::EveA,
                citations: CiteVariants {
                    require_references: true,
                    ..Default::default()
                },
                ..Default::default()
            }),
            data: tempfile::tempdir().unwrap(),
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        let s = self.service.sandbox();
        against(s.base_url(), args)
            .env("CASEBOOK_CITATIONS_KEY", s.key())
            .env("CASEBOOK_INVESTIGATIONS_KEY", s.key())
            .env("CASEBOOK_DATA_DIR", self.data.path())
            .output()
            .unwrap()
    }
}

/// The sources the mission found, in order, as its Markdown transcript lists them.
fn sources(transcript: &str) -> Vec<String> {
    let list = transcript.split("### Sources\n").nth(1).expect(transcript);
    list.lines()
        .take_while(|l| !l.starts_with('#'))
        .filter_map(|l| l.split("](<").nth(1))
        .map(|rest| rest.trim_end_matches(">)").to_owned())
        .collect()
}

/// What python-docx reads in `docx`.
fn python_docx(docx: &Path) -> Value {
    let out = python_tool("report_check.py").arg(docx).output().unwrap();
    assert!(
        out.status.success(),
        "python-docx could not read {}: {}",
        docx.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The text of `docx` as LibreOffice headless converts it.
fn libreoffice_text(docx: &Path) -> String {
    let out_dir = tempfile::tempdir().unwrap();
    soffice([docx], "txt:Text (encoded):UTF8", out_dir.path());
    let txt = out_dir
        .path()
        .join(docx.with_extension("txt").file_name().unwrap());
    std::fs::read_to_string(&txt)
        .unwrap_or_else(|e| panic!("LibreOffice did not convert {}: {e}", docx.display()))
}

fn styles(report: &Value) -> Vec<String> {
    report["paragraphs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["style"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_report_exported_as_word_is_read_by_office_tools_and_cited_with_cite() {
    let service = Service::start();
    let started = ok(&service.run(&["mission", "start", "--objective", OBJECTIVE, "--follow"]));
    let sid = started.lines().next().unwrap().trim().to_owned();
    let transcript = ok(&service.run(&["mission", "export", &sid, "--format", "md"]));
    let urls = sources(&transcript);
    assert!(urls.len() >= 2, "the mission found sources: {transcript}");

    let dir = tempfile::tempdir().unwrap();
    let docx = dir.path().join("report.docx");
    let cited = dir.path().join("report.cited.docx");
    let out = service.run(&[
        "mission",
        "export",
        &sid,
        "--format",
        "docx",
        "-o",
        docx.to_str().unwrap(),
        "--cite",
    ]);
    let said = ok(&out) + &String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!("Saved {}", docx.display())),
        "{said}"
    );
    assert!(
        said.contains(&format!("Saved {}", cited.display())),
        "{said}"
    );
    assert!(said.contains("citations inserted"), "{said}");

    // python-docx: the title, the headings as Word's, the links' targets, the references.
    let report = python_docx(&docx);
    assert_eq!(report["title"], OBJECTIVE);
    assert_eq!(report["author"], "", "no author nobody chose");
    let paragraphs = report["paragraphs"].as_array().unwrap();
    assert_eq!(paragraphs[0]["style"], "Title");
    assert_eq!(paragraphs[0]["text"], OBJECTIVE);
    let styles = styles(&report);
    assert!(styles.iter().any(|s| s == "Heading 1"), "{styles:?}");
    let refs_at = paragraphs
        .iter()
        .position(|p| p["text"] == "References")
        .expect("a References heading");
    assert_eq!(paragraphs[refs_at]["style"], "Heading 1");
    let entries = &paragraphs[refs_at + 1..];
    assert_eq!(entries.len(), urls.len(), "one entry per source, in order");
    for (i, (entry, url)) in entries.iter().zip(&urls).enumerate() {
        let text = entry["text"].as_str().unwrap();
        assert!(text.starts_with(&format!("[{}]", i + 1)), "{text}");
        assert!(text.contains("Accessed 20"), "{text}");
        assert_eq!(entry["links"][0]["address"], url.as_str(), "{entry}");
    }
    let body_links: Vec<&Value> = paragraphs[..refs_at]
        .iter()
        .flat_map(|p| p["links"].as_array().unwrap())
        .collect();
    let external: Vec<&str> = (body_links.iter())
        .filter_map(|l| l["address"].as_str().filter(|a| !a.is_empty()))
        .collect();
    assert!(
        !external.is_empty(),
        "the report links its sources: {paragraphs:?}"
    );
    for address in &external {
        assert!(urls.iter().any(|u| u == address), "{address} is a source");
    }
    // Each link to a source is followed by its number, which points to its entry.
    let markers: Vec<(&str, &str)> = (body_links.iter())
        .filter_map(|l| Some((l["fragment"].as_str()?, l["text"].as_str()?)))
        .filter(|(f, _)| !f.is_empty())
        .collect();
    assert_eq!(markers.len(), external.len(), "{body_links:?}");
    for (fragment, text) in markers {
        let n: usize = fragment.trim_start_matches("ref_").parse().unwrap();
        assert_eq!(text, format!("[{n}]"));
        assert!(n >= 1 && n <= urls.len());
    }

    // LibreOffice opens and converts it.
    let text = libreoffice_text(&docx);
    assert!(
        text.contains(OBJECTIVE) && text.contains("References"),
        "{text}"
    );
    assert!(urls.iter().all(|u| text.contains(u.as_str())), "{text}");

    // The cited copy: the service accepted the References section and cited the body.
    let after = python_docx(&cited);
    assert_eq!(after["title"], OBJECTIVE);
    assert!(after["paragraphs"].as_array().unwrap().len() >= paragraphs.len());
    assert_ne!(
        after["paragraphs"], report["paragraphs"],
        "citations were added"
    );

    // Again: the cited copy is there, so nothing is written, not even the report.
    std::fs::remove_file(&docx).unwrap();
    let again = service.run(&[
        "mission",
        "export",
        &sid,
        "--format",
        "docx",
        "-o",
        docx.to_str().unwrap(),
        "--cite",
    ]);
    assert_eq!(again.status.code(), Some(5));
    assert!(!docx.exists());
}

#[test]
fn cite_needs_a_word_document_written_to_a_file() {
    let service = Service::start();
    let md = service.run(&[
        "mission",
        "export",
        "ses_x",
        "--format",
        "md",
        "-o",
        "/tmp/x.md",
        "--cite",
    ]);
    assert_eq!(md.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&md.stderr).contains("--cite needs --format docx"));
    let stdout = service.run(&["mission", "export", "ses_x", "--format", "docx", "--cite"]);
    assert_eq!(stdout.status.code(), Some(2), "clap: --cite requires -o");
}
