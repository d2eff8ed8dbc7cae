//! The Word package around the report's paragraphs: its styles (headings, quotes, code,
//! the title), the two list numberings, and docProps/core.xml written by hand.

use crate::error::{Error, Result};
use docx_rs::{
    AbstractNumbering, Docx, Level, LevelJc, LevelText, LineSpacing, NumberFormat, RunFonts,
    SpecialIndentType, Start, Style, StyleType,
};
use std::io::Cursor;

/// docProps/core.xml. docx-rs offers no way to set the title, and writes "unknown" as
/// the author, a name nobody chose: this part is written here instead, with the title,
/// the dates, and an author only when one was set.
pub(super) fn core_properties(title: &str, date: &str, author: Option<&str>) -> Result<Vec<u8>> {
    use quick_xml::Writer as XmlWriter;
    use quick_xml::events::{BytesDecl, BytesText, Event as XmlEvent};
    let fail = |e: std::io::Error| Error::internal(format!("Cannot write the properties: {e}"));
    let mut w = XmlWriter::new(Cursor::new(Vec::new()));
    w.write_event(XmlEvent::Decl(BytesDecl::new(
        "1.0",
        Some("UTF-8"),
        Some("yes"),
    )))
    .map_err(fail)?;
    w.create_element("cp:coreProperties")
        .with_attributes([
            (
                "xmlns:cp",
                "http://schemas.openxmlformats.org/package/2006/metadata/core-properties",
            ),
            ("xmlns:dc", "http://purl.org/dc/elements/1.1/"),
            ("xmlns:dcterms", "http://purl.org/dc/terms/"),
            ("xmlns:dcmitype", "http://purl.org/dc/dcmitype/"),
            ("xmlns:xsi", "http://www.w3.org/2001/XMLSchema-instance"),
        ])
        .write_inner_content(|w| {
            w.create_element("dc:title")
                .write_text_content(BytesText::new(title))?;
            if let Some(a) = author {
                w.create_element("dc:creator")
                    .write_text_content(BytesText::new(a))?;
            }
            for name in ["dcterms:created", "dcterms:modified"] {
                w.create_element(name)
                    .with_attribute(("xsi:type", "dcterms:W3CDTF"))
                    .write_text_content(BytesText::new(date))?;
            }
            Ok(())
        })
        .map_err(fail)?;
    Ok(w.into_inner().into_inner())
}

// docx-rs always writes its own abstract numbering 1 and numbering 1 (decimal): the
// report's own start above them, or its bullets would be numbers.
pub(super) const BULLETS: usize = 10;
pub(super) const DECIMAL: usize = 11;
pub(super) const FIRST_LIST: usize = 10;
/// Word's indent step for a list level or a quote, in twentieths of a point.
pub(super) const STEP: i32 = 720;
pub(super) const MONOSPACE: &str = "Courier New";
/// Word's own default; LibreOffice shows it with its metric twin, Carlito.
pub(super) const BODY_FONT: &str = "Calibri";

/// The bulleted or numbered list definition, nine levels deep as Word's are.
pub(super) fn list_numbering(id: usize, bullets: bool) -> AbstractNumbering {
    let mut a = AbstractNumbering::new(id);
    for level in 0..9 {
        let (format, text) = if bullets {
            ("bullet", ["•", "◦", "▪"][level % 3].to_owned())
        } else {
            ("decimal", format!("%{}.", level + 1))
        };
        a = a.add_level(
            Level::new(
                level,
                Start::new(1),
                NumberFormat::new(format),
                LevelText::new(text),
                LevelJc::new("left"),
            )
            .indent(
                Some(STEP * (level as i32 + 1)),
                Some(SpecialIndentType::Hanging(360)),
                None,
                None,
            ),
        );
    }
    a
}

/// The styles the document names: Word's built-in headings (so the navigation pane and
/// a table of contents find them), Title, Subtitle, Quote, a code block and links.
pub(super) fn styles(docx: Docx) -> Docx {
    let heading = |level: usize, size: usize| {
        Style::new(format!("Heading{level}"), StyleType::Paragraph)
            .name(format!("heading {level}"))
            .based_on("Normal")
            .next("Normal")
            .q_format(true)
            .outline_lvl(level - 1)
            .line_spacing(LineSpacing::new().before(240).after(80))
            .bold()
            .size(size)
            .color("1F3864")
    };
    docx.add_style(heading(1, 32))
        .add_style(heading(2, 28))
        .add_style(heading(3, 24))
        .add_style(
            Style::new("Title", StyleType::Paragraph)
                .name("Title")
                .based_on("Normal")
                .next("Normal")
                .q_format(true)
                .size(48),
        )
        .add_style(
            Style::new("Subtitle", StyleType::Paragraph)
                .name("Subtitle")
                .based_on("Normal")
                .next("Normal")
                .q_format(true)
                .color("595959"),
        )
        .add_style(
            Style::new("Quote", StyleType::Paragraph)
                .name("Quote")
                .based_on("Normal")
                .q_format(true)
                .italic()
                .color("404040")
                .indent(Some(STEP), None, Some(STEP), None),
        )
        .add_style(
            Style::new("CodeBlock", StyleType::Paragraph)
                .name("Code Block")
                .based_on("Normal")
                .fonts(monospace())
                .size(20),
        )
        .add_style(
            Style::new("Hyperlink", StyleType::Character)
                .name("Hyperlink")
                .color("0563C1")
                .underline("single"),
        )
}

pub(super) fn monospace() -> RunFonts {
    RunFonts::new()
        .ascii(MONOSPACE)
        .hi_ansi(MONOSPACE)
        .cs(MONOSPACE)
}
