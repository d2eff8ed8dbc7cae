//! The citation service's other legal modes, each behind a knob that is off by
//! default: References required, the document's own list, citations inside
//! sentences in several shapes, speaker notes, scrubbed metadata, unseeded results,
//! error-body families, a front with a smaller body limit and a slow cite. Driven
//! over loopback HTTP, by `SandboxConfig::citations` and by `POST /_sandbox/faults`.

mod common;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use casebook_sandbox::{CiteVariants, ErrorFamily, RunningSandbox, SandboxConfig, start};
use casebook_testsupport::files::{fixture_bytes, patch, root};
use common::*;
use serde_json::{Value, json};
use std::io::{Cursor, Read};
use std::path::Path;
use std::time::{Duration, Instant};

fn fixture(rel: &str) -> Vec<u8> {
    fixture_bytes(rel)
}

fn part(bytes: &[u8], name: &str) -> Option<String> {
    let mut z = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    let mut f = z.by_name(name).ok()?;
    let mut s = String::new();
    f.read_to_string(&mut s).unwrap();
    Some(s)
}

fn part_names(bytes: &[u8]) -> Vec<String> {
    let z = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    z.file_names().map(str::to_owned).collect()
}

const ENTRIES: [&str; 4] = [
    "Buzan, B. (2010). People, states and fear. ECPR Press.",
    "Smith, J., &amp; Jones, K. (2019). Cities and heat. Journal of Urban Studies, 4(2), 1-9.",
    "Lee, A., Park, B., &amp; Kim, C. (2020). Hospital admissions in summer. Health Reports.",
    "Kramer. Untitled field notes.",
];

/// The labels the existing style may build from [`ENTRIES`], in every shape.
const LABELS: [&str; 4] = [
    "Buzan, 2010",
    "Smith & Jones, 2019",
    "Lee et al., 2020",
    "Kramer",
];

fn essay_entries() -> String {
    ENTRIES.map(|e| e.replace("&amp;", "&")).join("\n")
}

const BODY: &str = "Urban heat is rising in most large cities of the world today. Older adults are more exposed than others to it. Hospitals see more admissions during long heat waves in the summer.\n\nPlanners have tried several measures to cool the streets down. Trees and water help in many neighbourhoods at once. Roofs painted white reflect a good share of the sunlight back.\n\nThe evidence on admissions is mixed across regions and years. Some studies find strong effects on the oldest residents. Others find that air conditioning removes most of the risk.";

fn essay_with_references() -> String {
    format!("{BODY}\n\nReferences\n{}", essay_entries())
}

async fn cite(sb: &RunningSandbox, body: Value) -> reqwest::Response {
    post_json(sb, "/citations/v1/cite", &body).await
}

async fn cite_ok(sb: &RunningSandbox, body: Value) -> (Vec<u8>, Value) {
    let resp = cite(sb, body).await;
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    let bytes = B64.decode(v["documentBase64"].as_str().unwrap()).unwrap();
    (bytes, v["stats"].clone())
}

async fn parse(sb: &RunningSandbox, bytes: &[u8]) -> Value {
    let resp = post_json(
        sb,
        "/citations/v1/parse",
        &json!({"fileBase64": B64.encode(bytes)}),
    )
    .await;
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

fn sandbox_with(citations: CiteVariants) -> SandboxConfig {
    SandboxConfig {
        citations,
        ..config()
    }
}

/// A citation found in a text: the char offsets where it starts and just after it
/// ends, and the char that follows it.
#[derive(Debug, PartialEq)]
struct Found {
    start: usize,
    end: usize,
    after: Option<char>,
}

impl Found {
    /// Is there more of the paragraph after the sentence the citation closes?
    fn mid(&self, text: &str) -> bool {
        text.chars()
            .skip(self.end + 1)
            .collect::<String>()
            .trim()
            .len()
            > 10
    }
}

/// Every citation written in `text`: parenthetical `(… 2019)`, narrative `, as Smith
/// (2019) notes`, numeric `[3]` and bracketed `[Smith 2019]`, recognised by the
/// labels they carry.
fn citations_in(text: &str) -> Vec<Found> {
    let mut out = Vec::new();
    let chars = |b: usize| text[..b].chars().count();
    let mut push = |s: usize, e: usize| {
        out.push(Found {
            start: chars(s),
            end: chars(e),
            after: text[e..].chars().next(),
        })
    };
    for (open, close) in [(" (", ')'), (" [", ']')] {
        for (i, _) in text.match_indices(open) {
            let rest = &text[i + open.len()..];
            let Some(end) = rest.find(close) else {
                continue;
            };
            let inner = &rest[..end];
            let known = if open == " (" {
                inner.split("; ").all(|c| LABELS.contains(&c))
            } else {
                inner.split(", ").all(|n| n.parse::<u32>().is_ok())
                    || inner
                        .split("; ")
                        .all(|c| LABELS.iter().any(|l| l.replace(", ", " ") == c))
            };
            if known {
                push(i, i + open.len() + end + 1);
            }
        }
    }
    for l in LABELS {
        let n = match l.rsplit_once(", ") {
            Some((n, y)) => format!(", as {} ({y}) notes", n.replace(" & ", " and ")),
            None => format!(", as {l} notes"),
        };
        for (i, _) in text.match_indices(n.as_str()) {
            push(i, i + n.len());
        }
    }
    out.sort_by_key(|f| f.start);
    out
}

fn has_narrative(text: &str) -> bool {
    text.contains(", as ") && text.contains(" notes.")
}

#[test]
fn citation_finder_finds_each_shape() {
    let one = |t: &str| {
        let f = citations_in(t);
        assert_eq!(f.len(), 1, "{t}");
        (f[0].start, f[0].after, f[0].mid(t))
    };
    assert_eq!(
        one("A claim (Buzan, 2010). More to say here."),
        (7, Some('.'), true)
    );
    assert_eq!(one("A claim [1, 3]."), (7, Some('.'), false));
    assert_eq!(one("A claim [Buzan 2010]."), (7, Some('.'), false));
    assert_eq!(
        one("A claim, as Smith and Jones (2019) notes."),
        (7, Some('.'), false)
    );
    assert!(citations_in("See (above) here.").is_empty());
}

#[tokio::test]
async fn require_references_refuses_a_document_without_them() {
    let sb = start(sandbox_with(CiteVariants {
        require_references: true,
        ..CiteVariants::default()
    }))
    .await
    .unwrap();
    let resp = cite(&sb, json!({"essay": BODY})).await;
    assert_eq!(resp.status(), 422);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["code"], "no_references");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("No References section was found")
    );
    // A .docx without one is refused the same way; one with a list is cited.
    let resp = cite(
        &sb,
        json!({"fileBase64": B64.encode(fixture("docx/long-lorem-endnote.docx"))}),
    )
    .await;
    assert_eq!(resp.status(), 422);
    let (_, stats) = cite_ok(&sb, json!({"essay": essay_with_references()})).await;
    assert!(stats["citationsInserted"].as_u64().unwrap() > 0);
    // A heading with nothing under it is refused too.
    let resp = cite(&sb, json!({"essay": format!("{BODY}\n\nReferences\n")})).await;
    assert_eq!(resp.status(), 422);
    // `clear` goes back to the configured variants; the faults endpoint switches it.
    assert_eq!(
        set_faults(&sb, json!({"requireReferences": false})).await,
        200
    );
    assert_eq!(cite(&sb, json!({"essay": BODY})).await.status(), 200);
    assert_eq!(set_faults(&sb, json!({"clear": true})).await, 200);
    assert_eq!(cite(&sb, json!({"essay": BODY})).await.status(), 422);
    sb.stop().await;

    // Off by default.
    let sb = sandbox().await;
    assert_eq!(cite(&sb, json!({"essay": BODY})).await.status(), 200);
    assert_eq!(
        set_faults(&sb, json!({"requireReferences": true})).await,
        200
    );
    assert_eq!(cite(&sb, json!({"essay": BODY})).await.status(), 422);
    sb.stop().await;
}

#[tokio::test]
async fn existing_style_cites_from_the_documents_own_list_and_appends_nothing() {
    let sb = sandbox().await;
    assert_eq!(set_faults(&sb, json!({"citeStyle": "existing"})).await, 200);
    let essay = essay_with_references();
    let (out, stats) = cite_ok(
        &sb,
        json!({"essay": essay, "mode": "every", "minCitations": 1, "maxCitations": 2}),
    )
    .await;
    let out = String::from_utf8(out).unwrap();
    assert_eq!(stats["referencesAdded"], 0);
    assert!(stats["citationsInserted"].as_u64().unwrap() >= 3, "{stats}");
    // The list is untouched and nothing follows it.
    let tail = format!("\n\nReferences\n{}", essay_entries());
    assert!(out.ends_with(&tail), "{out}");
    let body = &out[..out.len() - tail.len()];
    let found = citations_in(body);
    assert!(found.len() >= 3, "{body}");
    // Only labels from the document's list: every parenthesis is one of them.
    assert_eq!(body.matches(" (").count(), found.len(), "{body}");
    assert!(found.iter().all(|f| f.after == Some('.')), "{body}");
    assert!(!out.contains("doi.org"), "{out}");

    // No References section: nothing to cite from, the essay comes back as it was.
    let (out, stats) = cite_ok(&sb, json!({"essay": BODY, "mode": "every"})).await;
    assert_eq!(String::from_utf8(out).unwrap(), BODY);
    assert_eq!(stats["citationsInserted"], 0);
    assert_eq!(stats["referencesAdded"], 0);
    sb.stop().await;
}

#[tokio::test]
async fn inside_placement_cites_before_a_sentences_full_stop_in_varied_shapes() {
    let sb = start(sandbox_with(CiteVariants {
        style: casebook_sandbox::CiteStyle::Existing,
        placement: casebook_sandbox::Placement::Inside,
        ..CiteVariants::default()
    }))
    .await
    .unwrap();
    let essay = essay_with_references();
    let mut mid = 0;
    let mut last = 0;
    let mut narrative = false;
    let mut grouped = false;
    for seed in 0..12u64 {
        let (out, _) = cite_ok(
            &sb,
            json!({"essay": essay, "mode": "every", "minCitations": 1, "maxCitations": 2, "seed": seed}),
        )
        .await;
        let out = String::from_utf8(out).unwrap();
        let body = out.split("\n\nReferences\n").next().unwrap();
        for para in body.split("\n\n") {
            let found = citations_in(para);
            for f in &found {
                assert_eq!(f.after, Some('.'), "not before a full stop: {para}");
                if f.mid(para) {
                    mid += 1;
                } else {
                    last += 1;
                }
            }
            narrative |= has_narrative(para);
            grouped |= para.contains("; ");
        }
    }
    assert!(mid > 0, "no citation in a middle sentence");
    assert!(last > 0, "no citation in a last sentence");
    assert!(narrative, "no narrative citation");
    assert!(grouped, "no grouped citation");

    // Numeric and bracketed shapes, switched at run time.
    assert_eq!(set_faults(&sb, json!({"citeShape": "numeric"})).await, 200);
    let (out, _) = cite_ok(&sb, json!({"essay": essay, "mode": "every"})).await;
    let out = String::from_utf8(out).unwrap();
    let body = out.split("\n\nReferences\n").next().unwrap();
    assert!(
        ["[1].", "[2].", "[3].", "[4]."]
            .iter()
            .any(|n| body.contains(n)),
        "{body}"
    );
    assert!(!body.contains(" ("), "{body}");
    assert_eq!(
        set_faults(&sb, json!({"citeShape": "bracketed"})).await,
        200
    );
    let (out, _) = cite_ok(&sb, json!({"essay": essay, "mode": "every"})).await;
    let out = String::from_utf8(out).unwrap();
    let body = out.split("\n\nReferences\n").next().unwrap();
    assert!(
        [
            "[Buzan 2010]",
            "[Smith & Jones 2019]",
            "[Lee et al. 2020]",
            "[Kramer]"
        ]
        .iter()
        .any(|n| body.contains(n)),
        "{body}"
    );
    assert!(citations_in(body).iter().all(|f| f.after == Some('.')));
    sb.stop().await;
}

/// long-lorem-endnote.docx with a References heading and [`ENTRIES`] added at the end
/// of its body, and a company and manager in its metadata.
fn docx_with_references() -> Vec<u8> {
    let entries: String = ENTRIES
        .iter()
        .map(|e| format!("<w:p><w:r><w:t>{e}</w:t></w:r></w:p>"))
        .collect();
    let block = format!(
        "<w:p><w:pPr><w:pStyle w:val=\"Heading1\"/></w:pPr><w:r><w:t>References</w:t></w:r></w:p>{entries}<w:sectPr "
    );
    patch(
        &fixture("docx/long-lorem-endnote.docx"),
        &[
            (
                "word/document.xml",
                "<w:sectPr w:rsidR=\"009E05A7\"",
                &block.replace("<w:sectPr ", "<w:sectPr w:rsidR=\"009E05A7\""),
            ),
            (
                "docProps/app.xml",
                "<Company></Company>",
                "<Company>Acme Corp</Company><Manager>Pat Boss</Manager>",
            ),
        ],
    )
}

/// title-bullets-notes.pptx made into a deck to cite: slide 1's subtitle holds body
/// prose (a body placeholder), slide 1's notes a paragraph of sentences, and slide 2
/// is a References slide holding three of [`ENTRIES`].
fn pptx_with_notes_and_references() -> Vec<u8> {
    patch(
        &fixture("pptx/title-bullets-notes.pptx"),
        &[
            (
                "ppt/slides/slide1.xml",
                "<p:ph type=\"subTitle\" idx=\"1\"/>",
                "<p:ph type=\"body\" idx=\"1\"/>",
            ),
            (
                "ppt/slides/slide1.xml",
                "This bit is in italic green",
                "Urban heat is rising in most large cities today. Older adults are more exposed than the young. Hospitals see more admissions in heat waves.",
            ),
            (
                "ppt/notesSlides/notesSlide1.xml",
                "I am the notes of the first slide",
                "Say that heat waves are getting longer every decade. Mention that older adults are most at risk here. Close with the admissions data from the summer.",
            ),
            (
                "ppt/slides/slide2.xml",
                "This is the second slide",
                "References",
            ),
            (
                "ppt/slides/slide2.xml",
                "It has bullet points on it",
                ENTRIES[0],
            ),
            (
                "ppt/slides/slide2.xml",
                "They’re fun, aren’t they?",
                ENTRIES[1],
            ),
            (
                "ppt/slides/slide2.xml",
                "Especially in a different font like Arial Black at 16 point!",
                ENTRIES[2],
            ),
        ],
    )
}

/// The text of every `a:t` in a part, joined.
fn xml_text(xml: &str) -> String {
    let mut out = String::new();
    for piece in xml.split("<a:t>").skip(1) {
        if let Some(end) = piece.find("</a:t>") {
            out.push_str(&piece[..end].replace("&amp;", "&"));
        }
    }
    out
}

fn office_check(files: &[&Path]) -> Option<Vec<Value>> {
    let python = root().join(".venv/bin/python");
    if !python.exists() {
        eprintln!("no venv: python-docx/pptx check skipped");
        return None;
    }
    let out = std::process::Command::new(python)
        .arg(root().join("tests/tools/office_check.py"))
        .args(files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python-docx/pptx could not open: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[tokio::test]
async fn docx_cited_inside_from_its_own_list_still_opens_and_is_scrubbed() {
    let sb = sandbox().await;
    let input = docx_with_references();
    let before = parse(&sb, &input).await;
    assert_eq!(before["references"].as_array().unwrap().len(), 4);
    assert_eq!(
        set_faults(
            &sb,
            json!({"citeStyle": "existing", "placement": "inside", "scrubMetadata": true})
        )
        .await,
        200
    );
    let (out, stats) = cite_ok(
        &sb,
        json!({"fileBase64": B64.encode(&input), "mode": "every", "minCitations": 1, "maxCitations": 2}),
    )
    .await;
    assert_eq!(stats["referencesAdded"], 0);
    assert!(
        stats["citationsInserted"].as_u64().unwrap() >= 20,
        "{stats}"
    );

    let after = parse(&sb, &out).await;
    // The reference list is what it was, and nothing was added after it.
    assert_eq!(after["references"], before["references"]);
    assert_eq!(after["referencesHeading"], "References");
    let paras: Vec<&str> = after["paragraphs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["text"].as_str().unwrap())
        .collect();
    assert_eq!(paras.len(), before["paragraphs"].as_array().unwrap().len());
    let mut mid = 0;
    let mut total = 0;
    for p in &paras {
        for f in citations_in(p) {
            total += 1;
            assert_eq!(f.after, Some('.'), "{p}");
            if f.mid(p) {
                mid += 1;
            }
        }
    }
    assert!(total >= 20, "{total} citations seen by parse");
    assert!(mid > 0, "no citation in the middle of a paragraph");

    let core = part(&out, "docProps/core.xml").unwrap();
    assert!(core.contains("<dc:creator></dc:creator>"), "{core}");
    assert!(
        core.contains("<cp:lastModifiedBy></cp:lastModifiedBy>"),
        "{core}"
    );
    assert!(!core.contains("Sophie Ryan"));
    let app = part(&out, "docProps/app.xml").unwrap();
    assert!(app.contains("<Company></Company>") && app.contains("<Manager></Manager>"));

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cited.docx");
    std::fs::write(&path, &out).unwrap();
    if let Some(report) = office_check(&[&path]) {
        let texts: Vec<&str> = report[0]["paragraphs"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(texts.iter().any(|t| !citations_in(t).is_empty()));
        assert_eq!(
            texts.iter().rev().find(|t| !t.trim().is_empty()).copied(),
            Some("Kramer. Untitled field notes.")
        );
    }

    // Default metadata stays as uploaded.
    assert_eq!(set_faults(&sb, json!({"clear": true})).await, 200);
    let (out, _) = cite_ok(&sb, json!({"fileBase64": B64.encode(&input)})).await;
    assert!(
        part(&out, "docProps/core.xml")
            .unwrap()
            .contains("Sophie Ryan")
    );
    sb.stop().await;
}

#[tokio::test]
async fn pptx_speaker_notes_are_cited_when_asked() {
    let sb = sandbox().await;
    let input = pptx_with_notes_and_references();
    let before = parse(&sb, &input).await;
    assert_eq!(before["references"].as_array().unwrap().len(), 3);
    assert_eq!(
        set_faults(&sb, json!({"citeStyle": "existing", "placement": "inside"})).await,
        200
    );
    let body = json!({"fileBase64": B64.encode(&input), "mode": "every"});
    let (without, _) = cite_ok(&sb, body.clone()).await;
    assert_eq!(
        part(&without, "ppt/notesSlides/notesSlide1.xml"),
        part(&input, "ppt/notesSlides/notesSlide1.xml"),
        "notes are left alone unless citeNotes"
    );
    assert!(!citations_in(&xml_text(&part(&without, "ppt/slides/slide1.xml").unwrap())).is_empty());

    assert_eq!(set_faults(&sb, json!({"citeNotes": true})).await, 200);
    let (out, stats) = cite_ok(&sb, body).await;
    assert_eq!(stats["referencesAdded"], 0);
    assert_eq!(stats["paragraphsCited"], 2, "{stats}");
    let notes = xml_text(&part(&out, "ppt/notesSlides/notesSlide1.xml").unwrap());
    let found = citations_in(&notes);
    assert!(!found.is_empty(), "{notes}");
    assert!(found.iter().all(|f| f.after == Some('.')), "{notes}");
    // The References slide's notes, the slide list and the list itself: untouched.
    assert_eq!(
        part(&out, "ppt/notesSlides/notesSlide2.xml"),
        part(&input, "ppt/notesSlides/notesSlide2.xml")
    );
    assert_eq!(part_names(&out), part_names(&input));
    let after = parse(&sb, &out).await;
    assert_eq!(after["references"], before["references"]);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cited.pptx");
    std::fs::write(&path, &out).unwrap();
    if let Some(report) = office_check(&[&path]) {
        assert_eq!(report[0]["slides"], 2);
    }
    sb.stop().await;
}

#[tokio::test]
async fn unseeded_cites_of_the_same_input_differ() {
    let sb = sandbox().await;
    let essay = essay_with_references();
    let body = json!({"essay": essay, "mode": "random", "minCitations": 1, "maxCitations": 3});
    let a = cite_ok(&sb, body.clone()).await.0;
    assert_eq!(a, cite_ok(&sb, body.clone()).await.0, "seeded by default");
    assert_eq!(set_faults(&sb, json!({"unseeded": true})).await, 200);
    let mut outs = std::collections::HashSet::new();
    for _ in 0..4 {
        outs.insert(cite_ok(&sb, body.clone()).await.0);
    }
    assert!(outs.len() >= 2, "four unseeded cites were identical");
    sb.stop().await;
}

async fn error_of(
    sb: &RunningSandbox,
    key: Option<&str>,
    body: Value,
) -> (u16, reqwest::header::HeaderMap, String) {
    let mut req = client()
        .post(format!("{}/citations/v1/cite", sb.base_url()))
        .json(&body);
    if let Some(k) = key {
        req = req.bearer_auth(k);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    (status, headers, resp.text().await.unwrap())
}

#[tokio::test]
async fn error_families_shape_every_error_body() {
    let sb = sandbox().await;
    let key = sb.key().to_owned();
    for family in [
        "default",
        "plain-error",
        "nested",
        "message",
        "detail",
        "problem",
        "text",
        "html",
    ] {
        assert_eq!(
            set_faults(
                &sb,
                json!({"clear": true, "errorFamily": family, "requireReferences": true})
            )
            .await,
            200
        );
        sb.knobs().set(|k| {
            k.storm = casebook_sandbox::knobs::Storm {
                count: 0,
                retry_after: 0,
            }
        });
        let mut seen = Vec::new();
        seen.push(error_of(&sb, None, json!({"essay": BODY})).await);
        seen.push(error_of(&sb, Some(&key), json!({"mode": "every"})).await);
        seen.push(error_of(&sb, Some(&key), json!({"essay": BODY})).await);
        sb.knobs().set(|k| {
            k.storm = casebook_sandbox::knobs::Storm {
                count: 1,
                retry_after: 7,
            }
        });
        seen.push(error_of(&sb, Some(&key), json!({"essay": BODY})).await);
        let statuses: Vec<u16> = seen.iter().map(|s| s.0).collect();
        assert_eq!(statuses, [401, 400, 422, 429], "{family}");
        assert_eq!(seen[0].1["www-authenticate"], "Bearer", "{family}");
        assert_eq!(seen[3].1["retry-after"], "7", "{family}");
        for (status, headers, body) in &seen {
            let ct = headers["content-type"].to_str().unwrap();
            let json = serde_json::from_str::<Value>(body);
            let message = match family {
                "default" => {
                    let v = json.unwrap();
                    assert!(ct.starts_with("application/json"));
                    v["error"]["message"].as_str().unwrap().to_owned()
                }
                "plain-error" => {
                    let v = json.unwrap();
                    assert_eq!(v.as_object().unwrap().len(), 1, "{body}");
                    v["error"].as_str().unwrap().to_owned()
                }
                "nested" => {
                    let v = json.unwrap();
                    let e = v["error"].as_object().unwrap();
                    assert_eq!(e.len(), 2, "{body}");
                    assert!(e["code"].is_string());
                    e["message"].as_str().unwrap().to_owned()
                }
                "message" | "detail" => {
                    let v = json.unwrap();
                    assert!(ct.starts_with("application/json"));
                    assert_eq!(v.as_object().unwrap().len(), 1, "{body}");
                    v[family].as_str().unwrap().to_owned()
                }
                "problem" => {
                    assert_eq!(ct, "application/problem+json");
                    let v = json.unwrap();
                    assert_eq!(v["status"], *status);
                    assert!(v["type"].is_string() && v["title"].is_string());
                    v["detail"].as_str().unwrap().to_owned()
                }
                "text" => {
                    assert!(ct.starts_with("text/plain"), "{ct}");
                    assert!(json.is_err());
                    body.trim().to_owned()
                }
                "html" => {
                    assert!(ct.starts_with("text/html"), "{ct}");
                    assert!(body.contains(&format!("<title>{status} ")), "{body}");
                    body.clone()
                }
                _ => unreachable!(),
            };
            assert!(!message.is_empty(), "{family} {status}");
            if *status == 422 {
                assert!(
                    message.contains("No References section was found"),
                    "{family}: {message}"
                );
            }
        }
    }
    // Success answers and other services' errors are not touched.
    assert_eq!(
        set_faults(&sb, json!({"clear": true, "errorFamily": "text"})).await,
        200
    );
    let (status, headers, _) = error_of(&sb, Some(&key), json!({"essay": BODY})).await;
    assert_eq!(status, 200);
    assert!(
        headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let resp = client()
        .get(format!("{}/eve/v1/session/nope/stream", sb.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    assert!(resp.json::<Value>().await.is_ok());
    sb.stop().await;
}

#[tokio::test]
async fn a_front_with_a_smaller_limit_answers_413_from_the_headers() {
    let sb = start(sandbox_with(CiteVariants {
        front_limit_bytes: Some(4096),
        ..CiteVariants::default()
    }))
    .await
    .unwrap();
    // Headers announcing 50 MB and not one byte of body: the answer comes anyway.
    let mut conn = tokio::net::TcpStream::connect(sb.addr()).await.unwrap();
    let head = format!(
        "POST /citations/v1/cite HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n",
        sb.addr(),
        sb.key()
    );
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    conn.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), conn.read_to_end(&mut answer))
        .await
        .expect("the front answers without the body")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("content-type: text/html"),
        "{answer}"
    );
    assert!(
        answer.contains("<title>413 Request Entity Too Large</title>"),
        "{answer}"
    );

    // Over the limit by reqwest too (before authentication: it is the front); under
    // it, the service answers as usual.
    let big = json!({"essay": "x".repeat(5000)});
    let resp = client()
        .post(format!("{}/citations/v1/cite", sb.base_url()))
        .json(&big)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    assert!(resp.text().await.unwrap().contains("nginx"));
    assert_eq!(cite(&sb, json!({"essay": BODY})).await.status(), 200);

    // Off, and on again over HTTP.
    assert_eq!(set_faults(&sb, json!({"frontLimitBytes": 0})).await, 200);
    assert_eq!(cite(&sb, big.clone()).await.status(), 200);
    assert_eq!(set_faults(&sb, json!({"frontLimitBytes": 100})).await, 200);
    assert_eq!(cite(&sb, json!({"essay": BODY})).await.status(), 413);
    sb.stop().await;
}

#[tokio::test]
async fn slow_cite_holds_its_answer_and_can_be_given_up_on() {
    let sb = sandbox().await;
    assert_eq!(set_faults(&sb, json!({"slowCiteMs": 700})).await, 200);
    let t = Instant::now();
    assert_eq!(cite(&sb, json!({"essay": BODY})).await.status(), 200);
    assert!(
        t.elapsed() >= Duration::from_millis(700),
        "{:?}",
        t.elapsed()
    );
    // A client that gives up does not hold the sandbox up.
    let gave_up = client()
        .post(format!("{}/citations/v1/cite", sb.base_url()))
        .bearer_auth(sb.key())
        .timeout(Duration::from_millis(150))
        .json(&json!({"essay": BODY}))
        .send()
        .await;
    assert!(gave_up.unwrap_err().is_timeout());
    // What is not held is told from what is by a hold far longer than any loaded machine
    // takes to answer, not by how fast the answer came: parse is not slowed, and with
    // the hold off again neither is cite.
    assert_eq!(set_faults(&sb, json!({"slowCiteMs": 120_000})).await, 200);
    let unheld = |path: &str| {
        client()
            .post(format!("{}/citations/v1/{path}", sb.base_url()))
            .bearer_auth(sb.key())
            .timeout(Duration::from_secs(60))
            .json(&json!({"essay": BODY}))
            .send()
    };
    let resp = unheld("parse")
        .await
        .expect("parse answers without the hold");
    assert_eq!(resp.status(), 200);
    assert_eq!(set_faults(&sb, json!({"slowCiteMs": 0})).await, 200);
    let resp = unheld("cite")
        .await
        .expect("cite answers once the hold is off");
    assert_eq!(resp.status(), 200);
    sb.stop().await;
}

#[tokio::test]
async fn unknown_variant_names_are_refused() {
    let sb = sandbox().await;
    for body in [
        json!({"citeStyle": "mine"}),
        json!({"placement": "middle"}),
        json!({"citeShape": "roman"}),
        json!({"errorFamily": "xml"}),
    ] {
        assert_eq!(set_faults(&sb, body).await, 400);
    }
    assert_eq!(sb.knobs().get(|k| k.citations), CiteVariants::default());
    let _ = ErrorFamily::Default;
    sb.stop().await;
}

#[tokio::test]
async fn the_binary_takes_the_variants_as_flags() {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_casebook-sandbox"))
        .args([
            "--require-references",
            "--error-family",
            "problem",
            "--cite-style",
            "existing",
            "--placement",
            "inside",
            "--cite-shape",
            "bracketed",
            "--front-limit-bytes",
            "100000",
            "--slow-cite-ms",
            "1",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(Child)
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line.trim().to_owned();
    let post = |body: Value| {
        client()
            .post(format!("{base}/citations/v1/cite"))
            .bearer_auth(casebook_sandbox::DEMO_KEY)
            .json(&body)
            .send()
    };
    let resp = post(json!({"essay": BODY})).await.unwrap();
    assert_eq!(resp.status(), 422);
    assert_eq!(resp.headers()["content-type"], "application/problem+json");
    let resp = post(json!({"essay": essay_with_references(), "mode": "every"}))
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    let out =
        String::from_utf8(B64.decode(v["documentBase64"].as_str().unwrap()).unwrap()).unwrap();
    assert!(out.contains(" [") && !out.contains("doi.org"), "{out}");
    assert_eq!(v["stats"]["referencesAdded"], 0);
}

#[tokio::test]
async fn the_ibid_shape_repeats_the_work_the_paragraph_before_cited() {
    let sb = sandbox().await;
    assert_eq!(
        set_faults(&sb, json!({"citeStyle": "existing", "citeShape": "ibid"})).await,
        200
    );
    let essay = essay_with_references();
    let mut repeats = 0;
    for seed in 0..12u64 {
        let (out, stats) = cite_ok(
            &sb,
            json!({"essay": essay, "mode": "every", "minCitations": 1, "maxCitations": 1, "seed": seed}),
        )
        .await;
        let out = String::from_utf8(out).unwrap();
        let body = out.split("\n\nReferences\n").next().unwrap();
        let paras: Vec<&str> = body.split("\n\n").collect();
        // One citation per paragraph: the stats count each, "(ibid.)" too.
        assert_eq!(stats["citationsInserted"], paras.len(), "{body}");
        for (i, p) in paras.iter().enumerate() {
            if p.contains("(ibid.)") {
                repeats += 1;
                assert!(i > 0, "nothing before to repeat: {body}");
                assert!(!paras[i - 1].contains("; "), "one work before: {body}");
                assert_eq!(p.matches("(ibid.)").count(), 1, "{p}");
            } else {
                assert_eq!(citations_in(p).len(), 1, "{p}");
            }
        }
    }
    assert!(repeats > 0, "no (ibid.) in 12 cites");
    sb.stop().await;
}
