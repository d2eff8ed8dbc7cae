//! A writer's review, with real documents: every Word document of the corpus
//! (`../shared/corpus`) and of the suites' fixtures cited with `--track-changes`, each review copy judged by tools we
//! did not write: python-docx's XML with every change rejected gives the original's
//! paragraphs and with every change accepted the cited document's; its insertions are
//! exactly what the summary printed; ids unique; the package as valid as the corpus test
//! asks; LibreOffice opens every copy (one is drawn, changes shown, for the docs). Then
//! the corpus cited as one queue through a sandbox that answers 429 now and then.

mod common;

use casebook_core::citations::reader;
use casebook_sandbox::{CiteVariants, Placement, RunningSandbox, SandboxConfig};
use casebook_testsupport::files::{python_tool, root, soffice};
use casebook_testsupport::sandbox::Blocking;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn corpus(ext: &str) -> Vec<PathBuf> {
    let dir = root().join("../shared/corpus").join(ext);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| {
            panic!(
                "the corpus is part of the contract ({}): {e}",
                dir.display()
            )
        })
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .{ext} in {}", dir.display());
    files
}

/// The corpus's Word documents and the suites' own (`tests/data/docx`: tracked changes,
/// text boxes, footnotes, fields, a paragraph of 173 runs).
fn word_documents() -> Vec<PathBuf> {
    let dir = root().join("tests/data/docx");
    let mut ours: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "docx"))
        .collect();
    ours.sort();
    corpus("docx").into_iter().chain(ours).collect()
}

fn sandbox(per_minute: u32, burst: u32) -> Blocking {
    Blocking::start(SandboxConfig {
        pace: casebook_sandbox::Pace::Instant,
        rate_limit: casebook_sandbox::RateLimit { per_minute, burst },
        ..Default::default()
    })
}

fn run(s: &RunningSandbox, args: &[&str]) -> Output {
    common::against(s.base_url(), args)
        .env("CASEBOOK_CITATIONS_KEY", s.key())
        .output()
        .unwrap()
}

fn said(out: &Output) -> String {
    format!(
        "exit {:?}\n{}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn strings(v: &Value) -> Vec<String> {
    (v.as_array().into_iter().flatten())
        .map(|s| s.as_str().unwrap_or_default().to_owned())
        .collect()
}

/// What the summary says citing inserted, paragraph by paragraph: each changed
/// paragraph's inserted runs joined, a References heading the original lacked, each new
/// entry; sorted, to compare with what the copy marks.
fn expected_insertions(summary: &Value, added_heading: Option<String>) -> Vec<String> {
    let mut out: Vec<String> = (summary["changes"].as_array().unwrap().iter())
        .map(|change| {
            (change["after"].as_array().unwrap().iter())
                .filter(|seg| seg["inserted"] == true)
                .map(|seg| seg["text"].as_str().unwrap())
                .collect()
        })
        .collect();
    out.extend(added_heading);
    out.extend(strings(&summary["newReferences"]));
    out.retain(|s| !s.trim().is_empty());
    out.sort();
    out
}

/// One review copy judged; every problem found, named.
fn judge(doc: &Path, cited: &Path, review: &Path, printed: &Value) -> Vec<String> {
    let name = doc.file_name().unwrap().to_string_lossy().into_owned();
    let mut problems = Vec::new();
    let before = reader::read(&std::fs::read(doc).unwrap()).unwrap();
    let after = reader::read(&std::fs::read(cited).unwrap()).unwrap();
    let heading = match (&before.references_heading, &after.references_heading) {
        (None, Some(h)) => Some(h.clone()),
        _ => None,
    };
    let marked = strings(&printed["reviewCopy"]["insertions"]).concat();
    let expected = expected_insertions(&printed["summary"], heading);
    if marked.chars().filter(|c| !c.is_whitespace()).count()
        != expected
            .concat()
            .chars()
            .filter(|c| !c.is_whitespace())
            .count()
    {
        problems.push(format!(
            "{name}: marked {marked:?}, the summary inserted {expected:?}"
        ));
    }
    let check = python_tool("review_check.py")
        .args([doc, cited, review])
        .arg("Casebook")
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", said(&check));
    let r: Value = serde_json::from_slice(&check.stdout).unwrap();
    let mut expect = |what: &str, ok: bool| {
        if !ok {
            problems.push(format!("{name}: {what}: {r}"));
        }
    };
    expect(
        "python-docx opens it as it opens the original",
        r["opens"] == r["original_opens"],
    );
    expect(
        "reject-all gives the original's paragraphs",
        r["rejected"] == r["original_rejected"],
    );
    expect(
        "accept-all gives the cited document's paragraphs",
        r["accepted"] == r["cited_accepted"],
    );
    expect(
        "change ids are unique",
        r["duplicate_ids"] == serde_json::json!([]),
    );
    let mut tracked: Vec<String> = strings(&r["insertions"]);
    tracked.retain(|s| !s.trim().is_empty());
    tracked.sort();
    expect(
        "the tracked insertions are the summary's, paragraph by paragraph",
        tracked == expected,
    );
    let ours = !marked.is_empty();
    expect(
        "only the main part differs from the cited document",
        strings(&r["changed_parts"])
            == if ours {
                vec!["word/document.xml"]
            } else {
                vec![]
            },
    );
    expect(
        "the changes are Casebook's, dated",
        !ours
            || (strings(&r["authors"]).contains(&"Casebook".to_owned())
                && strings(&r["dates"])
                    .iter()
                    .all(|d| d.ends_with('Z') && d.len() == 20)),
    );
    problems
}

#[test]
fn every_corpus_word_document_cited_for_review_rejects_to_the_original_and_accepts_to_the_cited() {
    let s = sandbox(100_000, 1_000);
    let dir = tempfile::tempdir().unwrap();
    let mut problems = Vec::new();
    let mut reviews = Vec::new();
    let mut marked_docs = 0;
    // Citations after the sentence, then inside it (a run split in two, its look kept).
    for (pass, placement) in [
        ("after", Placement::default()),
        ("inside", Placement::Inside),
    ] {
        s.sandbox().knobs().set(|k| {
            k.citations = CiteVariants {
                placement,
                ..Default::default()
            }
        });
        for doc in word_documents() {
            let stem = doc.file_stem().unwrap().to_string_lossy().into_owned();
            let cited = dir.path().join(format!("{stem}.{pass}.cited.docx"));
            let review = dir.path().join(format!("{stem}.{pass}.review.docx"));
            let d = doc.to_str().unwrap();
            let plain = run(
                s.sandbox(),
                &["cite", d, "--mode", "every", "-o", cited.to_str().unwrap()],
            );
            assert!(plain.status.success(), "{stem}: {}", said(&plain));
            let out = run(
                s.sandbox(),
                &[
                    "cite",
                    d,
                    "--mode",
                    "every",
                    "--track-changes",
                    "--json",
                    "-o",
                    review.to_str().unwrap(),
                ],
            );
            assert!(out.status.success(), "{stem}: {}", said(&out));
            let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(printed["output"], review.to_str().unwrap(), "{stem}");
            if printed["summary"]["citationsInserted"].as_u64() > Some(0) {
                marked_docs += 1;
            }
            problems.extend(judge(&doc, &cited, &review, &printed));
            reviews.push(review);
        }
    }
    assert!(
        marked_docs >= 10,
        "only {marked_docs} review copies hold citations"
    );
    // The corpus test's package checks (every part typed, every relationship's target
    // there, well-formed XML) on every copy.
    let pairs: Vec<String> = reviews
        .iter()
        .map(|r| format!("{}={}", r.display(), r.display()))
        .collect();
    let check = python_tool("corpus_check.py")
        .args(&pairs)
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", said(&check));
    for line in String::from_utf8_lossy(&check.stdout).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        for what in ["untyped", "dangling", "malformed"] {
            if !strings(&v[what]).is_empty() {
                problems.push(format!("{what}: {v}"));
            }
        }
    }
    // LibreOffice opens every copy.
    let pdfs = tempfile::tempdir().unwrap();
    soffice(&reviews, "pdf", pdfs.path());
    for r in &reviews {
        let pdf = pdfs
            .path()
            .join(r.with_extension("pdf").file_name().unwrap());
        if !pdf.is_file() {
            problems.push(format!("LibreOffice did not open {}", r.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The docs' picture: a review copy as LibreOffice draws it, its changes shown.
    let shots = root().join("artifacts/screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let shown = dir.path().join("pandoc-equations.inside.review.docx");
    soffice([&shown], "png", dir.path());
    std::fs::copy(
        dir.path().join("pandoc-equations.inside.review.png"),
        shots.join("review-copy.png"),
    )
    .unwrap();
}

#[test]
fn a_folder_of_the_corpus_is_cited_in_one_command_through_429s_two_at_a_time() {
    // A small burst, then about a request a second: the queue meets 429s at once.
    let s = sandbox(60, 3);
    s.sandbox().knobs().set(|k| k.storm.count = 2);
    s.sandbox().knobs().set(|k| k.storm.retry_after = 1);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("chapters");
    std::fs::create_dir(&input).unwrap();
    let docs: Vec<PathBuf> = corpus("docx")
        .into_iter()
        .take(6)
        .chain(corpus("pptx").into_iter().take(3))
        .collect();
    for d in &docs {
        std::fs::copy(d, input.join(d.file_name().unwrap())).unwrap();
    }
    // Something that is not a document, named as one: it fails alone.
    std::fs::write(input.join("zz-broken.docx"), b"not a zip").unwrap();
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let lists = dir.path().join("lists");
    std::fs::create_dir(&lists).unwrap();
    let out = run(
        s.sandbox(),
        &[
            "cite",
            input.to_str().unwrap(),
            "--track-changes",
            "--review-list",
            lists.to_str().unwrap(),
            "-o",
            out_dir.to_str().unwrap(),
        ],
    );
    let text = said(&out);
    // One document failed, so the command did; its exit code says why (a bad document).
    assert_eq!(out.status.code(), Some(5), "{text}");
    assert!(
        text.contains("The service is busy: the queue waits"),
        "{text}"
    );
    assert!(
        text.contains("✗ ") && text.contains("zz-broken.docx"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{} documents: {} cited, 1 failed",
            docs.len() + 1,
            docs.len()
        )),
        "{text}"
    );
    for d in &docs {
        let stem = d.file_stem().unwrap().to_string_lossy().into_owned();
        let ext = d.extension().unwrap().to_string_lossy().into_owned();
        let name = if ext == "docx" {
            format!("{stem}.review.docx")
        } else {
            format!("{stem}.cited.pptx")
        };
        assert!(out_dir.join(&name).is_file(), "{name}: {text}");
        assert!(
            lists.join(format!("{stem}.citations.md")).is_file(),
            "{stem}: {text}"
        );
        assert!(
            text.contains(&format!(
                "✓ {}",
                input.join(d.file_name().unwrap()).display()
            )),
            "{text}"
        );
    }
    let saved = std::fs::read_dir(&out_dir).unwrap().count();
    assert_eq!(saved, docs.len(), "nothing else written: {text}");
}

#[test]
fn outputs_of_documents_of_one_name_never_overwrite_each_other() {
    let s = sandbox(100_000, 1_000);
    let dir = tempfile::tempdir().unwrap();
    let doc = &corpus("docx")[0];
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for d in [&a, &b] {
        std::fs::create_dir(d).unwrap();
        std::fs::copy(doc, d.join("chapter.docx")).unwrap();
    }
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let out = run(
        s.sandbox(),
        &[
            "cite",
            a.join("chapter.docx").to_str().unwrap(),
            b.join("chapter.docx").to_str().unwrap(),
            "-o",
            out_dir.to_str().unwrap(),
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", said(&out));
    let mut names: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["chapter.cited 2.docx", "chapter.cited.docx"]);
    // --json: one line a document.
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{}", said(&out));
    assert!(lines.iter().all(|l| l["summary"].is_object()), "{lines:?}");
    // Asked again without --overwrite, it refuses: a saved output is never replaced.
    let again = run(
        s.sandbox(),
        &["cite", a.to_str().unwrap(), "-o", out_dir.to_str().unwrap()],
    );
    assert_eq!(again.status.code(), Some(5), "{}", said(&again));
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("1 failed"),
        "{}",
        said(&again)
    );
}

#[test]
fn ctrl_c_in_the_middle_of_a_queue_keeps_what_was_saved_and_leaves_nothing_partial() {
    use std::io::BufRead;
    let s = sandbox(100_000, 1_000);
    // Each answer waits, so later documents are in flight when the first are saved.
    s.sandbox().knobs().set(|k| k.latency_ms = 2_000);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    for d in corpus("docx").into_iter().take(6) {
        std::fs::copy(&d, input.join(d.file_name().unwrap())).unwrap();
    }
    let (out_dir, tmp) = (dir.path().join("out"), dir.path().join("tmp"));
    std::fs::create_dir(&out_dir).unwrap();
    std::fs::create_dir(&tmp).unwrap();
    let mut child = common::against(
        s.sandbox().base_url(),
        &[
            "cite",
            input.to_str().unwrap(),
            "--track-changes",
            "-o",
            out_dir.to_str().unwrap(),
        ],
    )
    .env("CASEBOOK_CITATIONS_KEY", s.sandbox().key())
    .env("TMPDIR", &tmp)
    .spawn()
    .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.starts_with('✓'), "{first}");
    // SAFETY: signalling our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(130), "{rest:?}\n{stderr}");
    assert!(stderr.contains("Cancelled: "), "{stderr}");
    let done = 1 + rest.iter().filter(|l| l.starts_with('✓')).count();
    let saved: Vec<PathBuf> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(
        saved.len(),
        done,
        "only the documents said saved: {saved:?}"
    );
    assert!(done < 6, "the queue was cut short: {rest:?}");
    for p in &saved {
        zip::ZipArchive::new(std::fs::File::open(p).unwrap())
            .unwrap_or_else(|e| panic!("{} is not whole: {e}", p.display()));
    }
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().collect();
    assert!(left.is_empty(), "no temporary file: {left:?}");
}
