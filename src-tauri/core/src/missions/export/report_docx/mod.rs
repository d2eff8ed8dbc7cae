//! A mission's report as a Word document: the objective as its title, the agent's
//! Markdown mapped onto Word's own structures (Heading 1–3, lists, quotes, tables, real
//! hyperlinks), and a References section listing the mission's sources in the order they
//! were found. A link to one of those sources also carries its number, which points to
//! its entry, so the citation service and a reader can both follow it.
//!
//! The Markdown is read with the same parser and options the window renders it with
//! ([`crate::missions::conversation::markdown`]), and with the same rule for links: only http(s) and mailto.

mod package;
mod writer;

use crate::error::{Error, ErrorCode, Result};
use crate::missions::conversation::Conversation;
use crate::missions::store::rfc3339;
use crate::missions::store::{MissionRecord, StoredEvent};
use docx_rs::{Docx, LineSpacing, LineSpacingType, RunFonts};
use package::{BODY_FONT, BULLETS, DECIMAL, core_properties, list_numbering, styles};
use std::io::Cursor;
use std::sync::Mutex;
use writer::{Block, Writer};

/// One entry of the References section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportSource {
    pub title: String,
    pub url: String,
    /// When it was found (ms since 1970): the day the reference says it was accessed.
    pub accessed_ms: i64,
}

/// What the document is made from.
#[derive(Debug, Clone)]
pub struct ReportDoc {
    /// The mission's objective, in one line.
    pub title: String,
    pub markdown: String,
    pub sources: Vec<ReportSource>,
    /// The report's date (ms since 1970): the document's created and modified date.
    pub date_ms: i64,
    /// The document's author, only when the person set one.
    pub author: Option<String>,
}

impl ReportDoc {
    /// The mission's report and its sources; a mission without a finished report has
    /// nothing to make a document of.
    pub fn from_mission(m: &MissionRecord, events: &[StoredEvent]) -> Result<Self> {
        let mut c = Conversation::default();
        let mut sources = Vec::new();
        for e in events {
            c.apply(&e.event);
            // Each source is dated by the record that first brought it.
            for s in &c.sources[sources.len()..] {
                sources.push(ReportSource {
                    title: s.title.as_deref().map(one_line).unwrap_or_default(),
                    url: s.url.clone(),
                    accessed_ms: e.received_at,
                });
            }
        }
        let report = c.report().ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!("Mission {} has no finished report yet.", m.session_id),
            )
        })?;
        Ok(Self {
            title: one_line(
                m.objective
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or(""),
            ),
            markdown: report.text.clone(),
            sources,
            date_ms: events.last().map_or(m.created_at, |e| e.received_at),
            author: None,
        })
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `YYYY-MM-DD`, as a reference's access date.
fn day(ms: i64) -> String {
    rfc3339(ms).chars().take(10).collect()
}

// docx-rs numbers hyperlinks from a process-wide counter it reads and writes in two
// steps: two documents built at once could give two links the same relationship id
// (and one of them the other's URL). One document at a time keeps every id unique.
static BUILDING: Mutex<()> = Mutex::new(());

/// The report as a .docx file's bytes.
pub fn to_docx(doc: &ReportDoc) -> Result<Vec<u8>> {
    let _one_at_a_time = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
    let mut w = Writer::new(&doc.sources);
    w.title(&doc.title, doc.date_ms);
    w.markdown(&doc.markdown);
    w.references();
    let mut docx = styles(Docx::new())
        .default_fonts(
            RunFonts::new()
                .ascii(BODY_FONT)
                .hi_ansi(BODY_FONT)
                .cs(BODY_FONT),
        )
        .default_size(22)
        // The rule said outright: LibreOffice reads a line height without one as exact,
        // and a two-line title then overlaps itself.
        .default_line_spacing(
            LineSpacing::new()
                .line_rule(LineSpacingType::Auto)
                .after(120)
                .line(264),
        )
        .add_abstract_numbering(list_numbering(BULLETS, true))
        .add_abstract_numbering(list_numbering(DECIMAL, false));
    for n in w.numberings.drain(..) {
        docx = docx.add_numbering(n);
    }
    for block in w.blocks.drain(..) {
        docx = match block {
            Block::Paragraph(p) => docx.add_paragraph(*p),
            Block::Table(t) => docx.add_table(*t),
        };
    }
    let date = rfc3339(doc.date_ms);
    let mut xml = docx.created_at(&date).updated_at(&date).build();
    xml.doc_props.core = core_properties(&doc.title, &date, doc.author.as_deref())?;
    let mut out = Cursor::new(Vec::new());
    xml.pack(&mut out)
        .map_err(|e| Error::internal(format!("Cannot write the Word document: {e}")))?;
    Ok(out.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn source(n: usize) -> ReportSource {
        ReportSource {
            title: format!("Source {n}"),
            url: format!("https://example.org/s{n}?a=1&b=2"),
            accessed_ms: 1_777_627_800_000 + n as i64 * 86_400_000,
        }
    }

    fn doc(md: &str, sources: Vec<ReportSource>) -> ReportDoc {
        ReportDoc {
            title: "Does heat raise admissions?".into(),
            markdown: md.into(),
            sources,
            date_ms: 1_777_627_800_000,
            author: None,
        }
    }

    /// A part of the written package, as text.
    fn part(bytes: &[u8], name: &str) -> String {
        let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
        let mut s = String::new();
        zip.by_name(name).unwrap().read_to_string(&mut s).unwrap();
        s
    }

    fn body(md: &str) -> String {
        part(&to_docx(&doc(md, vec![])).unwrap(), "word/document.xml")
    }

    /// The paragraphs of `document.xml`, each as its raw XML.
    fn paragraphs(xml: &str) -> Vec<&str> {
        xml.split("<w:p ").skip(1).collect()
    }

    /// The one paragraph holding `text`.
    fn paragraph_with<'x>(xml: &'x str, text: &str) -> &'x str {
        let found: Vec<_> = paragraphs(xml)
            .into_iter()
            .filter(|p| p.contains(&format!(">{text}</w:t>")))
            .collect();
        assert_eq!(found.len(), 1, "{text:?} in {xml}");
        found[0]
    }

    #[test]
    fn headings_become_word_headings_one_to_three() {
        let xml = body("# One\n\n## Two\n\n### Three\n\n#### Four\n\nText\n");
        for (text, style) in [
            ("One", "Heading1"),
            ("Two", "Heading2"),
            ("Three", "Heading3"),
            ("Four", "Heading3"),
        ] {
            let p = paragraph_with(&xml, text);
            assert!(
                p.contains(&format!("<w:pStyle w:val=\"{style}\" />")),
                "{text}: {p}"
            );
        }
        assert!(paragraph_with(&xml, "Text").contains("<w:pStyle w:val=\"Normal\" />"));
        let styles = part(&to_docx(&doc("x", vec![])).unwrap(), "word/styles.xml");
        assert!(styles.contains("w:styleId=\"Heading1\""), "{styles}");
        assert!(styles.contains("<w:outlineLvl w:val=\"0\" />"), "{styles}");
    }

    #[test]
    fn paragraphs_stay_apart_and_soft_breaks_join_lines() {
        let xml = body("First line\nsame paragraph.\n\nSecond.\n");
        let p = paragraph_with(&xml, "First line");
        assert!(p.contains(">same paragraph.</w:t>") && !p.contains("Second."));
        paragraph_with(&xml, "Second.");
    }

    #[test]
    fn bold_italic_strike_and_code_are_run_properties() {
        let xml = body("Plain **bold** *it* ~~gone~~ `x = 1` ***both***\n");
        let run = |text: &str| {
            let p = paragraph_with(&xml, "Plain ");
            let at = p.find(&format!(">{text}</w:t>")).unwrap();
            let start = p[..at].rfind("<w:r>").unwrap();
            p[start..at].to_owned()
        };
        assert!(run("bold").contains("<w:b />") && !run("bold").contains("<w:i />"));
        assert!(run("it").contains("<w:i />") && !run("it").contains("<w:b />"));
        assert!(run("gone").contains("<w:strike />"));
        assert!(
            run("x = 1").contains("w:ascii=\"Courier New\""),
            "{}",
            run("x = 1")
        );
        assert!(run("both").contains("<w:b />") && run("both").contains("<w:i />"));
        assert!(!run("Plain ").contains("<w:b />"));
    }

    #[test]
    fn lists_are_numbered_paragraphs_nested_by_level() {
        let bytes = to_docx(&doc(
            "- a\n  - a1\n    1. deep\n- b\n\n3. three\n4. four\n",
            vec![],
        ))
        .unwrap();
        let xml = part(&bytes, "word/document.xml");
        let num = |text: &str| {
            let p = paragraph_with(&xml, text);
            let level = p.split("<w:ilvl w:val=\"").nth(1).unwrap();
            let id = p.split("<w:numId w:val=\"").nth(1).unwrap();
            (
                level[..level.find('"').unwrap()].to_owned(),
                id[..id.find('"').unwrap()].to_owned(),
            )
        };
        let (a, a1, deep, b, three, four) = (
            num("a"),
            num("a1"),
            num("deep"),
            num("b"),
            num("three"),
            num("four"),
        );
        assert_eq!(
            (a.0.as_str(), a1.0.as_str(), deep.0.as_str()),
            ("0", "1", "2")
        );
        assert_eq!(a.1, b.1, "one list, one numbering");
        assert_ne!(a.1, a1.1);
        assert_eq!(three.1, four.1);
        assert_ne!(three.1, a.1, "a new list counts afresh");
        let numbering = part(&bytes, "word/numbering.xml");
        // The numbered list starts where the Markdown says, bullets are bullets.
        assert!(
            numbering.contains("<w:startOverride w:val=\"3\" />"),
            "{numbering}"
        );
        assert!(numbering.contains("<w:numFmt w:val=\"bullet\" />"));
        // The list's numbering names the bullets' definition, not docx-rs's own decimal one.
        let num = numbering
            .split("<w:num w:numId=\"")
            .find(|n| n.starts_with(&format!("{}\"", a.1)))
            .unwrap();
        assert!(
            num.contains(&format!("<w:abstractNumId w:val=\"{BULLETS}\" />")),
            "{num}"
        );
        assert_eq!(
            numbering
                .matches(&format!("w:abstractNumId=\"{BULLETS}\""))
                .count(),
            1
        );
        assert!(numbering.contains("<w:numFmt w:val=\"decimal\" />"));
    }

    #[test]
    fn a_loose_item_numbers_its_first_paragraph_and_indents_the_rest() {
        let xml = body("1. first\n\n   more of it\n2. second\n");
        assert!(paragraph_with(&xml, "first").contains("<w:numId"));
        let more = paragraph_with(&xml, "more of it");
        assert!(
            !more.contains("<w:numId") && more.contains("<w:ind w:left=\"720\""),
            "{more}"
        );
    }

    #[test]
    fn block_quotes_use_the_quote_style() {
        let xml = body("> Quoted **words**.\n>\n> > Deeper.\n\nAfter.\n");
        assert!(paragraph_with(&xml, "Quoted ").contains("<w:pStyle w:val=\"Quote\" />"));
        let deeper = paragraph_with(&xml, "Deeper.");
        assert!(
            deeper.contains("Quote") && deeper.contains("w:left=\"1440\""),
            "{deeper}"
        );
        assert!(!paragraph_with(&xml, "After.").contains("Quote"));
        assert!(!paragraph_with(&xml, "Deeper.").contains("Normal"));
    }

    #[test]
    fn tables_become_word_tables_with_a_bold_header() {
        let xml = body("| City | Rise |\n|---|--:|\n| Paris | 12% |\n| Lyon | |\n\nAfter.\n");
        assert_eq!(xml.matches("<w:tbl>").count(), 1, "{xml}");
        let table = &xml[xml.find("<w:tbl>").unwrap()..xml.find("</w:tbl>").unwrap()];
        assert_eq!(table.matches("<w:tr>").count(), 3);
        assert_eq!(
            table.matches("<w:tc>").count(),
            6,
            "an empty cell is still a cell"
        );
        let header = &table[..table.find(">City</w:t>").unwrap()];
        assert!(header[header.rfind("<w:r>").unwrap()..].contains("<w:b />"));
        let paris = &table[..table.find(">Paris</w:t>").unwrap()];
        assert!(!paris[paris.rfind("<w:r>").unwrap()..].contains("<w:b />"));
        assert!(!table.contains("After."));
    }

    #[test]
    fn links_are_hyperlinks_and_a_source_gets_its_number() {
        let sources = vec![source(1), source(2)];
        let md = "See [the study](https://example.org/s2?a=1&b=2) and [elsewhere](https://other.org/).\n\n\
                  Not [this](javascript:alert(1)).\n";
        let bytes = to_docx(&doc(md, sources)).unwrap();
        let xml = part(&bytes, "word/document.xml");
        let rels = part(&bytes, "word/_rels/document.xml.rels");
        let p = paragraph_with(&xml, "the study");
        let rid_of = |text: &str| {
            let before = &p[..p.find(&format!(">{text}</w:t>")).unwrap()];
            let link = &before[before.rfind("<w:hyperlink").unwrap()..];
            let id = link.split("r:id=\"").nth(1).unwrap();
            id[..id.find('"').unwrap()].to_owned()
        };
        for (text, target) in [
            ("the study", "https://example.org/s2?a=1&amp;b=2"),
            ("elsewhere", "https://other.org/"),
        ] {
            let rid = rid_of(text);
            let rel = rels
                .split("<Relationship ")
                .find(|r| r.contains(&format!("Id=\"{rid}\"")))
                .unwrap_or_else(|| panic!("{rid} in {rels}"));
            assert!(rel.contains(&format!("Target=\"{target}\"")), "{rel}");
            assert!(rel.contains("TargetMode=\"External\""), "{rel}");
        }
        // The marker follows the link to a source, and points at its entry.
        assert!(p.contains("<w:hyperlink w:anchor=\"ref_2\""), "{p}");
        assert!(p.contains(">[2]</w:t>"));
        assert!(
            !p.contains(">[1]</w:t>"),
            "only the source linked is marked"
        );
        assert!(!rels.contains("javascript"), "{rels}");
        assert!(paragraph_with(&xml, "this").matches("<w:hyperlink").count() == 0);
    }

    #[test]
    fn references_list_every_source_in_order_with_link_and_date() {
        let bytes = to_docx(&doc("Text.\n", vec![source(1), source(2)])).unwrap();
        let xml = part(&bytes, "word/document.xml");
        let heading = paragraph_with(&xml, "References");
        assert!(heading.contains("Heading1"));
        let refs = &xml[xml.find(">References</w:t>").unwrap()..];
        let first = refs.find(">Source 1. </w:t>").unwrap();
        let second = refs.find(">Source 2. </w:t>").unwrap();
        assert!(first < second);
        let entry = paragraph_with(&xml, "Source 1. ");
        assert!(
            entry.contains("<w:bookmarkStart w:id=\"1\" w:name=\"ref_1\" />"),
            "{entry}"
        );
        assert!(entry.contains(">[1]</w:t>"));
        assert!(
            entry.contains(">https://example.org/s1?a=1&amp;b=2</w:t>"),
            "{entry}"
        );
        assert!(entry.contains(">. Accessed 2026-05-02.</w:t>"), "{entry}");
        assert!(!body("No sources.\n").contains("References"));
    }

    #[test]
    fn the_title_and_date_are_the_documents_and_no_author_unless_set() {
        let mut d = doc("Text.\n", vec![]);
        d.title = "Heat & <health>".into();
        let bytes = to_docx(&d).unwrap();
        let xml = part(&bytes, "word/document.xml");
        assert!(paragraph_with(&xml, "Heat &amp; &lt;health&gt;").contains("\"Title\""));
        let core = part(&bytes, "docProps/core.xml");
        assert!(
            core.contains("<dc:title>Heat &amp; &lt;health&gt;</dc:title>"),
            "{core}"
        );
        assert!(
            core.contains(">2026-05-01T09:30:00Z</dcterms:created>"),
            "{core}"
        );
        assert!(
            !core.contains("creator") && !core.contains("lastModifiedBy"),
            "{core}"
        );
        d.author = Some("Ada".into());
        let core = part(&to_docx(&d).unwrap(), "docProps/core.xml");
        assert!(core.contains("<dc:creator>Ada</dc:creator>"), "{core}");
    }

    #[test]
    fn raw_html_is_text_and_code_blocks_keep_their_lines() {
        let xml = body("Hi <b>there</b>\n\n```\nline 1\nline 2\n```\n");
        assert!(xml.contains(">&lt;b&gt;</w:t>"), "{xml}");
        let code = paragraph_with(&xml, "line 1");
        assert!(code.contains("CodeBlock") && code.contains("<w:br w:type=\"textWrapping\" />"));
        assert!(code.contains(">line 2</w:t>"));
    }

    #[test]
    fn a_mission_without_a_finished_report_has_no_document() {
        use crate::missions::protocol::MissionEvent;
        use crate::missions::store::MissionStatus;
        let record = MissionRecord {
            session_id: "ses_1".into(),
            objective: "\n  Heat\n and more".into(),
            mission_type: "research".into(),
            budget_type: "fixed".into(),
            budget_cents: 100,
            base_url: "http://127.0.0.1:9".into(),
            api_base: "/eve/v1".into(),
            status: MissionStatus::Running,
            created_at: 1_777_627_800_000,
            updated_at: 1_777_627_800_000,
            last_event_id: None,
            event_count: 1,
            continuation_token: None,
        };
        let events = [StoredEvent::new(
            1,
            MissionEvent::new(Some("1".into()), "plan".into(), r#"{"steps":["Search"]}"#),
            1_777_627_801_000,
        )];
        let err = ReportDoc::from_mission(&record, &events).unwrap_err();
        assert_eq!(err.code(), ErrorCode::NotFound);
        assert!(
            err.message().contains("no finished report"),
            "{}",
            err.message()
        );
    }
}
