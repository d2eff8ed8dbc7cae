//! Every document of the real-world corpus (`../shared/corpus/`, beside the repository:
//! public files Word, LibreOffice, Google Docs, pandoc and generators wrote) parsed and
//! cited against the sandbox in each cite mode, through core and through the CLI, and
//! every output checked: a valid package (every part typed, every relationship's target
//! there), every part but those cited byte for byte the original's, well-formed XML,
//! every original paragraph still there in order, opened by python-docx / python-pptx
//! and converted to PDF by LibreOffice. A refusal passes only for a file no reader can
//! read, with a message. The corpus is part of the contract: without it this fails.

mod common;

use casebook_core::citations::client::{
    CitationClient, CiteOptions, Input, Mode, ValidOptions, no_progress,
};
use casebook_core::citations::jobs::{self, CiteSource};
use casebook_core::citations::reader;
use casebook_core::keys::ApiKey;
use casebook_core::net::connection::Connection;
use casebook_sandbox::{
    CiteShape, CiteStyle, CiteVariants, Placement, RunningSandbox, SandboxConfig,
};
use casebook_testsupport::files::{python_tool, root, soffice};
use casebook_testsupport::sandbox::Blocking;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The corpus's files, as its README lists them; every file there must be listed.
fn corpus() -> Vec<PathBuf> {
    let dir = root().join("../shared/corpus");
    let readme = dir.join("README.md");
    let text = std::fs::read_to_string(&readme).unwrap_or_else(|e| {
        panic!(
            "the real-world corpus is missing ({}: {e}). It is part of the test contract: \
             clone shared/ beside the repository so that ../shared/corpus/ holds it.",
            readme.display()
        )
    });
    let listed: Vec<PathBuf> = text
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .filter(|p| p.ends_with(".docx") || p.ends_with(".pptx"))
        .map(|p| dir.join(p))
        .collect();
    assert!(
        !listed.is_empty(),
        "{} lists no documents",
        readme.display()
    );
    for p in &listed {
        assert!(
            p.is_file(),
            "the corpus README lists {}, which is missing",
            p.display()
        );
    }
    for sub in ["docx", "pptx"] {
        for entry in std::fs::read_dir(dir.join(sub)).unwrap() {
            let p = entry.unwrap().path();
            assert!(
                listed.contains(&p),
                "{} is not in the corpus README",
                p.display()
            );
        }
    }
    listed
}

/// One way of citing: the CLI's mode and seed, and the service's variant.
struct CiteMode {
    name: &'static str,
    mode: Mode,
    seed: Option<u64>,
    variants: CiteVariants,
}

fn modes() -> Vec<CiteMode> {
    let plain = CiteVariants::default();
    vec![
        CiteMode {
            name: "every",
            mode: Mode::Every,
            seed: None,
            variants: plain,
        },
        CiteMode {
            name: "every_other",
            mode: Mode::EveryOther,
            seed: None,
            variants: plain,
        },
        CiteMode {
            name: "random",
            mode: Mode::Random,
            seed: Some(11),
            variants: plain,
        },
        CiteMode {
            name: "inside-numeric-notes",
            mode: Mode::Every,
            seed: None,
            variants: CiteVariants {
                placement: Placement::Inside,
                shape: CiteShape::Numeric,
                notes: true,
                ..Default::default()
            },
        },
        CiteMode {
            name: "existing",
            mode: Mode::Every,
            seed: None,
            variants: CiteVariants {
                style: CiteStyle::Existing,
                ..Default::default()
            },
        },
    ]
}

struct Service {
    rt: Blocking,
    client: CitationClient,
}

impl Service {
    fn start() -> Service {
        let rt = Blocking::start(SandboxConfig {
            // Hundreds of requests in a minute: the rate limit is not what is tested.
            rate_limit: casebook_sandbox::RateLimit {
                per_minute: 100_000,
                ..Default::default()
            },
            ..Default::default()
        });
        let client = CitationClient::new(
            Connection::new(rt.sandbox().base_url()).unwrap(),
            ApiKey::parse(rt.sandbox().key()).unwrap(),
        );
        Service { rt, client }
    }

    fn sandbox(&self) -> &RunningSandbox {
        self.rt.sandbox()
    }

    fn run(&self, args: &[&str]) -> Output {
        common::against(self.sandbox().base_url(), args)
            .env("CASEBOOK_CITATIONS_KEY", self.sandbox().key())
            .output()
            .unwrap()
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).trim().to_owned()
}

/// Whether `short`'s characters appear in `long` in order: the text with only insertions.
fn within(short: &str, long: &str) -> bool {
    let mut rest = long.chars();
    short.chars().all(|c| rest.any(|d| d == c))
}

/// Casebook's own reading of a document: its paragraphs, notes, and references, in order.
fn read_texts(bytes: &[u8]) -> Result<Vec<String>, String> {
    let doc = reader::read(bytes).map_err(|e| e.message().to_owned())?;
    Ok(doc
        .paragraphs
        .into_iter()
        .map(|p| p.text)
        .chain(doc.references)
        .collect())
}

/// The original's paragraphs not found in order in the output's.
fn lost_in_order(before: &[String], after: &[String]) -> Vec<String> {
    let (mut lost, mut j) = (Vec::new(), 0);
    for p in before.iter().filter(|p| !p.trim().is_empty()) {
        match after[j..].iter().position(|q| within(p, q)) {
            Some(k) => j += k + 1,
            None => lost.push(p.clone()),
        }
    }
    lost
}

/// Parts a cite may rewrite or add, for a document of this kind.
fn may_change(kind: &str, part: &str, notes: bool) -> bool {
    let p = part.to_ascii_lowercase();
    match kind {
        "docx" => p == "word/document.xml",
        _ => {
            p == "[content_types].xml"
                || p == "ppt/presentation.xml"
                || p == "ppt/_rels/presentation.xml.rels"
                || (p.starts_with("ppt/slides/") && p.ends_with(".xml"))
                || (notes && p.starts_with("ppt/notesslides/") && p.ends_with(".xml"))
        }
    }
}

fn may_be_added(kind: &str, part: &str) -> bool {
    let p = part.to_ascii_lowercase();
    kind == "pptx"
        && (p.starts_with("ppt/slides/slide") && p.ends_with(".xml")
            || p.starts_with("ppt/slides/_rels/slide") && p.ends_with(".xml.rels"))
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().unwrap_or("").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_corpus_document_is_parsed_and_cited_in_every_mode_and_each_output_holds_up() {
    let files = corpus();
    let s = Service::start();
    let out_dir = tempfile::tempdir().unwrap();
    // What went wrong, and each file's results by column, for the table printed at the end.
    let mut failures: Vec<String> = Vec::new();
    let mut table: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // (original, output, mode) of every cited output, checked in batches below.
    let mut outputs: Vec<(PathBuf, PathBuf, &'static str)> = Vec::new();

    let mut unreadable = BTreeMap::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(f).unwrap();
        let local = read_texts(&bytes);
        let core_parse = match Input::document(&bytes) {
            Ok(input) => s.rt.block_on(s.client.parse(&input, &no_progress)),
            Err(e) => Err(e),
        };
        let cli_parse = s.run(&["parse", f.to_str().unwrap(), "--json"]);
        let cell = match (&local, &core_parse, cli_parse.status.success()) {
            (Ok(_), Ok(p), true) => format!("ok ({} paragraphs)", p.paragraphs.len()),
            _ => {
                failures.push(format!(
                    "{name}: parse: local {:?}, core {:?}, CLI exit {:?} {}",
                    local.as_ref().err(),
                    core_parse.as_ref().err().map(|e| e.message().to_owned()),
                    cli_parse.status.code(),
                    stderr(&cli_parse)
                ));
                "FAILED".into()
            }
        };
        if local.is_err() {
            unreadable.insert(name.clone(), local.clone().unwrap_err());
        }
        table.entry(name).or_default().push(cell);
    }

    for mode in modes() {
        s.sandbox().knobs().set(|k| k.citations = mode.variants);
        let options: ValidOptions = CiteOptions {
            mode: mode.mode,
            min_citations: 1,
            max_citations: 2,
            seed: mode.seed,
        }
        .validated()
        .unwrap();
        for f in &files {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let ext = f.extension().unwrap().to_string_lossy().into_owned();
            let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
            let out = out_dir.path().join(format!("{stem}.{}.{ext}", mode.name));
            // Through core, as the window cites.
            let core = s.rt.block_on(async {
                let file = jobs::temporary_output().await?;
                let source = CiteSource::Document { path: f.clone() };
                jobs::cite_source(&s.client, &source, &options, &no_progress, file).await
            });
            // Through the CLI.
            let mut args = vec!["cite", f.to_str().unwrap(), "--mode", mode.mode.as_str()];
            let seed = mode.seed.map(|n| n.to_string());
            if let Some(seed) = &seed {
                args.extend(["--seed", seed.as_str()]);
            }
            args.extend(["-o", out.to_str().unwrap(), "--json"]);
            let cli = s.run(&args);
            let cell = match (&core, cli.status.success()) {
                (Ok(cited), true) => {
                    let mut core_bytes = Vec::new();
                    cited.write_to(&mut core_bytes).unwrap();
                    let cli_bytes = std::fs::read(&out).unwrap();
                    if core_bytes != cli_bytes {
                        failures.push(format!(
                            "{name} [{}]: core and the CLI got different documents",
                            mode.name
                        ));
                    }
                    if let Some(note) = &cited.summary_note {
                        failures.push(format!("{name} [{}]: {note}", mode.name));
                    }
                    let before = local_or_empty(&unreadable, &name, f);
                    match read_texts(&cli_bytes) {
                        Ok(after) => {
                            let lost = lost_in_order(&before, &after);
                            if !lost.is_empty() {
                                failures.push(format!(
                                    "{name} [{}]: Casebook's reading lost paragraphs: {lost:?}",
                                    mode.name
                                ));
                            }
                        }
                        Err(e) => failures.push(format!(
                            "{name} [{}]: the output cannot be read: {e}",
                            mode.name
                        )),
                    }
                    outputs.push((f.clone(), out.clone(), mode.name));
                    format!(
                        "cited {}",
                        cited.summary.citations_inserted + cited.summary.citations_in_notes
                    )
                }
                (Err(e), false) if unreadable.contains_key(&name) && !e.message().is_empty() => {
                    format!("refused: {}", e.message())
                }
                (core, _) => {
                    failures.push(format!(
                        "{name} [{}]: core {:?}; CLI exit {:?}: {}",
                        mode.name,
                        core.as_ref().err().map(|e| e.message().to_owned()),
                        cli.status.code(),
                        stderr(&cli)
                    ));
                    "FAILED".into()
                }
            };
            table.entry(name).or_default().push(cell);
        }
    }

    // python-docx / python-pptx, and the package checks, in one run for every output.
    let pairs: Vec<String> = outputs
        .iter()
        .map(|(o, c, _)| format!("{}={}", o.display(), c.display()))
        .collect();
    let run = python_tool("corpus_check.py")
        .args(&pairs)
        .output()
        .unwrap();
    let report: Vec<Value> = serde_json::from_slice(&run.stdout)
        .unwrap_or_else(|e| panic!("corpus_check.py: {e}: {}", stderr(&run)));
    assert_eq!(report.len(), outputs.len());
    let mut python_unopenable = BTreeMap::new();
    for (entry, (original, _, mode)) in report.iter().zip(&outputs) {
        let name = original.file_name().unwrap().to_string_lossy().into_owned();
        let kind = original.extension().unwrap().to_string_lossy().into_owned();
        let notes = *mode == "inside-numeric-notes";
        let at = format!("{name} [{mode}]");
        if let Some(e) = entry["error"].as_str() {
            failures.push(format!("{at}: python-docx/pptx: {e}"));
        }
        if let Some(e) = entry["unopenable_original"].as_str() {
            python_unopenable.insert(name.clone(), e.to_owned());
        }
        for (key, what) in [
            ("untyped", "parts without a content type"),
            ("dangling", "relationships to missing parts"),
            ("malformed", "XML that is not well-formed"),
            ("removed", "parts removed"),
            ("lost", "paragraphs lost (python-docx/pptx)"),
        ] {
            let found = strings(&entry[key]);
            if !found.is_empty() {
                failures.push(format!("{at}: {what}: {found:?}"));
            }
        }
        let changed: Vec<String> = strings(&entry["changed"])
            .into_iter()
            .filter(|p| !may_change(&kind, p, notes))
            .collect();
        if !changed.is_empty() {
            failures.push(format!(
                "{at}: parts other than those cited changed: {changed:?}"
            ));
        }
        let added: Vec<String> = strings(&entry["added"])
            .into_iter()
            .filter(|p| !may_be_added(&kind, p))
            .collect();
        if !added.is_empty() {
            failures.push(format!("{at}: unexpected parts added: {added:?}"));
        }
    }

    // LibreOffice: every output converted to PDF in one run.
    let pdf_dir = tempfile::tempdir().unwrap();
    let cited: Vec<&Path> = outputs.iter().map(|(_, c, _)| c.as_path()).collect();
    soffice(&cited, "pdf", pdf_dir.path());
    for (original, cited, mode) in &outputs {
        let pdf = pdf_dir
            .path()
            .join(cited.with_extension("pdf").file_name().unwrap());
        let size = std::fs::metadata(&pdf).map(|m| m.len()).unwrap_or(0);
        if size == 0 {
            failures.push(format!(
                "{} [{mode}]: LibreOffice did not convert it",
                original.file_name().unwrap().to_string_lossy()
            ));
        }
    }

    let mut head = vec!["parse".to_owned()];
    head.extend(modes().iter().map(|m| m.name.to_owned()));
    println!("| file | {} |", head.join(" | "));
    for (name, cells) in &table {
        println!("| {name} | {} |", cells.join(" | "));
    }
    for (name, why) in &python_unopenable {
        println!(
            "python-docx cannot open the original {name} ({why}): Casebook's reading and LibreOffice judge it"
        );
    }
    println!("{} outputs checked", outputs.len());
    assert!(
        failures.is_empty(),
        "{} problems in the corpus:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The original's texts by Casebook's reading (none when it cannot read it).
fn local_or_empty(unreadable: &BTreeMap<String, String>, name: &str, f: &Path) -> Vec<String> {
    if unreadable.contains_key(name) {
        return Vec::new();
    }
    read_texts(&std::fs::read(f).unwrap()).unwrap_or_default()
}
