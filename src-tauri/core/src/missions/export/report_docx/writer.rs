//! The agent's Markdown written as Word paragraphs and tables: headings, lists (nested,
//! bulleted or numbered), quotes, code, tables, and links that are real hyperlinks, a
//! link to a mission source also carrying its number in the References section.

use super::package::{BULLETS, DECIMAL, FIRST_LIST, STEP, monospace};
use super::{ReportSource, day};
use docx_rs::{
    AlignmentType, BreakType, Hyperlink, HyperlinkType, IndentLevel, LevelOverride, Numbering,
    NumberingId, Paragraph, Run, SpecialIndentType, Table, TableCell, TableRow,
};
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

pub(super) enum Block {
    Paragraph(Box<Paragraph>),
    Table(Box<Table>),
}

/// A list being written: its numbering, and whether its current item's first
/// paragraph (the one that carries the bullet or number) is still to come.
pub(super) struct List {
    num_id: usize,
    item_pending: bool,
}

/// A link being written. `None` for the hyperlink: a link to an unsafe URL, kept as text.
pub(super) struct Link {
    hyperlink: Option<Hyperlink>,
    /// The source it points to, from 1.
    source: Option<usize>,
}

#[derive(Default)]
pub(super) struct TableBeingWritten {
    rows: Vec<TableRow>,
    cells: Vec<TableCell>,
    head: bool,
}

/// Markdown events in, Word blocks out.
pub(super) struct Writer<'a> {
    pub(super) sources: &'a [ReportSource],
    pub(super) blocks: Vec<Block>,
    pub(super) para: Option<Paragraph>,
    pub(super) heading: Option<usize>,
    pub(super) bold: u32,
    pub(super) italic: u32,
    pub(super) strike: u32,
    pub(super) code_block: bool,
    pub(super) quotes: usize,
    pub(super) lists: Vec<List>,
    pub(super) link: Option<Link>,
    pub(super) table: Option<TableBeingWritten>,
    pub(super) numberings: Vec<Numbering>,
}

impl<'a> Writer<'a> {
    pub(super) fn new(sources: &'a [ReportSource]) -> Self {
        Self {
            sources,
            blocks: Vec::new(),
            para: None,
            heading: None,
            bold: 0,
            italic: 0,
            strike: 0,
            code_block: false,
            quotes: 0,
            lists: Vec::new(),
            link: None,
            table: None,
            numberings: Vec::new(),
        }
    }

    pub(super) fn title(&mut self, title: &str, date_ms: i64) {
        let title = if title.is_empty() {
            "Mission report"
        } else {
            title
        };
        self.blocks.push(Block::Paragraph(Box::new(
            Paragraph::new()
                .style("Title")
                .add_run(Run::new().add_text(title)),
        )));
        self.blocks.push(Block::Paragraph(Box::new(
            Paragraph::new()
                .style("Subtitle")
                .add_run(Run::new().add_text(format!("Mission report, {}", day(date_ms)))),
        )));
    }

    pub(super) fn markdown(&mut self, md: &str) {
        let options =
            Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
        for event in Parser::new_ext(md, options) {
            self.event(event);
        }
        self.end_paragraph();
    }

    pub(super) fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => {
                let run = self
                    .styled(Run::new().add_text(t.as_ref()))
                    .fonts(monospace());
                self.push_run(run);
            }
            // Raw HTML is shown as the text it is, as in the window.
            Event::Html(t) | Event::InlineHtml(t) => self.text(&t),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
            Event::FootnoteReference(t) => self.text(&format!("[^{t}]")),
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.push_run(Run::new().add_break(BreakType::TextWrapping)),
            Event::Rule => {
                self.end_paragraph();
                self.blocks.push(Block::Paragraph(Box::new(
                    Paragraph::new()
                        .style("Normal")
                        .align(AlignmentType::Center)
                        .add_run(Run::new().add_text("* * *")),
                )));
            }
            Event::TaskListMarker(done) => self.text(if done { "☒ " } else { "☐ " }),
        }
    }

    pub(super) fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {
                self.end_paragraph();
                self.start_paragraph();
            }
            Tag::Heading { level, .. } => {
                self.end_paragraph();
                self.heading = Some(match level {
                    HeadingLevel::H1 => 1,
                    HeadingLevel::H2 => 2,
                    // Word's navigation keeps three levels readable; deeper ones join the third.
                    _ => 3,
                });
                self.start_paragraph();
            }
            Tag::BlockQuote(_) => {
                self.end_paragraph();
                self.quotes += 1;
            }
            Tag::CodeBlock(_) => {
                self.end_paragraph();
                self.code_block = true;
                self.start_paragraph();
            }
            Tag::List(start) => {
                self.end_paragraph();
                let num_id = FIRST_LIST + self.numberings.len();
                let level = self.lists.len();
                // Each list gets its own numbering, so a numbered list counts from its
                // own start rather than continuing the previous one.
                let n = match start {
                    Some(first) => Numbering::new(num_id, DECIMAL)
                        .add_override(LevelOverride::new(level).start(first as usize)),
                    None => Numbering::new(num_id, BULLETS),
                };
                self.numberings.push(n);
                self.lists.push(List {
                    num_id,
                    item_pending: false,
                });
            }
            Tag::Item => {
                self.end_paragraph();
                if let Some(l) = self.lists.last_mut() {
                    l.item_pending = true;
                }
            }
            Tag::Table(_) => {
                self.end_paragraph();
                self.table = Some(TableBeingWritten::default());
            }
            Tag::TableHead => {
                if let Some(t) = &mut self.table {
                    t.head = true;
                    t.cells.clear();
                }
            }
            Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.cells.clear();
                }
            }
            Tag::TableCell => self.start_paragraph(),
            Tag::Emphasis => self.italic += 1,
            Tag::Strong => self.bold += 1,
            Tag::Strikethrough => self.strike += 1,
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.link = Some(self.open_link(&dest_url));
            }
            _ => {}
        }
    }

    pub(super) fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::Item => self.end_paragraph(),
            TagEnd::Heading(_) => {
                self.end_paragraph();
                self.heading = None;
            }
            TagEnd::BlockQuote(_) => {
                self.end_paragraph();
                self.quotes = self.quotes.saturating_sub(1);
            }
            TagEnd::CodeBlock => {
                self.end_paragraph();
                self.code_block = false;
            }
            TagEnd::List(_) => {
                self.end_paragraph();
                self.lists.pop();
            }
            TagEnd::TableCell => {
                let p = self.para.take().unwrap_or_default();
                if let Some(t) = &mut self.table {
                    t.cells.push(TableCell::new().add_paragraph(p));
                }
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    t.rows.push(TableRow::new(std::mem::take(&mut t.cells)));
                    t.head = false;
                }
            }
            TagEnd::Table => {
                if let Some(t) = self.table.take() {
                    self.blocks.push(Block::Table(Box::new(Table::new(t.rows))));
                }
            }
            TagEnd::Emphasis => self.italic = self.italic.saturating_sub(1),
            TagEnd::Strong => self.bold = self.bold.saturating_sub(1),
            TagEnd::Strikethrough => self.strike = self.strike.saturating_sub(1),
            TagEnd::Link | TagEnd::Image => self.close_link(),
            _ => {}
        }
    }

    pub(super) fn open_link(&self, url: &str) -> Link {
        if !crate::missions::conversation::markdown::is_safe_url(url) {
            return Link {
                hyperlink: None,
                source: None,
            };
        }
        let url = url.trim();
        let same = |a: &str, b: &str| a.trim_end_matches('/') == b.trim_end_matches('/');
        Link {
            hyperlink: Some(Hyperlink::new(url, HyperlinkType::External)),
            source: self
                .sources
                .iter()
                .position(|s| same(&s.url, url))
                .map(|i| i + 1),
        }
    }

    pub(super) fn close_link(&mut self) {
        let Some(link) = self.link.take() else {
            return;
        };
        if let Some(h) = link.hyperlink {
            let p = self.para.take().unwrap_or_else(|| self.new_paragraph());
            self.para = Some(p.add_hyperlink(h));
        }
        if let Some(n) = link.source {
            let marker = Hyperlink::new(reference_anchor(n), HyperlinkType::Anchor)
                .add_run(Run::new().add_text(format!("[{n}]")));
            self.push_run(Run::new().add_text(" "));
            let p = self.para.take().unwrap_or_else(|| self.new_paragraph());
            self.para = Some(p.add_hyperlink(marker));
        }
    }

    /// A paragraph styled for where it is: a heading, a code block, a quote, a list
    /// item (its first paragraph numbered, any later one indented to match).
    pub(super) fn new_paragraph(&mut self) -> Paragraph {
        let mut p = Paragraph::new();
        if let Some(level) = self.heading {
            return p.style(&format!("Heading{level}"));
        }
        // Named even when Normal: a reader that looks up the default style finds
        // none in docx-rs's styles, which mark no style as the default.
        p = p.style(if self.code_block {
            "CodeBlock"
        } else if self.quotes > 0 {
            "Quote"
        } else {
            "Normal"
        });
        let depth = self.lists.len();
        if let Some(list) = self.lists.last_mut() {
            if list.item_pending {
                list.item_pending = false;
                p = p.numbering(NumberingId::new(list.num_id), IndentLevel::new(depth - 1));
            } else {
                p = p.indent(Some(STEP * depth as i32), None, None, None);
            }
        } else if self.quotes > 1 {
            p = p.indent(Some(STEP * self.quotes as i32), None, Some(STEP), None);
        }
        p
    }

    pub(super) fn start_paragraph(&mut self) {
        let p = self.new_paragraph();
        self.para = Some(p);
    }

    pub(super) fn end_paragraph(&mut self) {
        if self.table.is_some() {
            // A cell's paragraph ends with the cell.
            return;
        }
        if let Some(p) = self.para.take() {
            self.blocks.push(Block::Paragraph(Box::new(p)));
        }
    }

    pub(super) fn styled(&self, mut run: Run) -> Run {
        let head = self.table.as_ref().is_some_and(|t| t.head);
        if self.bold > 0 || head {
            run = run.bold();
        }
        if self.italic > 0 {
            run = run.italic();
        }
        if self.strike > 0 {
            run = run.strike();
        }
        if self.link.as_ref().is_some_and(|l| l.hyperlink.is_some()) {
            run = run.style("Hyperlink");
        }
        run
    }

    pub(super) fn text(&mut self, t: &str) {
        if self.code_block {
            let mut lines = t.strip_suffix('\n').unwrap_or(t).split('\n');
            if let Some(first) = lines.next() {
                let run = Run::new().add_text(first);
                self.push_run(run);
            }
            for line in lines {
                let run = Run::new().add_break(BreakType::TextWrapping).add_text(line);
                self.push_run(run);
            }
            return;
        }
        let run = self.styled(Run::new().add_text(t));
        self.push_run(run);
    }

    pub(super) fn push_run(&mut self, run: Run) {
        if let Some(Link {
            hyperlink: Some(h), ..
        }) = &mut self.link
        {
            *h = std::mem::replace(h, Hyperlink::new("", HyperlinkType::Anchor)).add_run(run);
            return;
        }
        let p = self.para.take().unwrap_or_else(|| self.new_paragraph());
        self.para = Some(p.add_run(run));
    }

    /// The References section: each source, in the order found, with its number (where
    /// the markers in the text point), its title, its URL as a link, and when it was
    /// accessed.
    pub(super) fn references(&mut self) {
        if self.sources.is_empty() {
            return;
        }
        self.blocks.push(Block::Paragraph(Box::new(
            Paragraph::new()
                .style("Heading1")
                .add_run(Run::new().add_text("References")),
        )));
        for (i, s) in self.sources.iter().enumerate() {
            let n = i + 1;
            let mut p = Paragraph::new()
                .style("Normal")
                .indent(
                    Some(STEP),
                    Some(SpecialIndentType::Hanging(STEP)),
                    None,
                    None,
                )
                .add_bookmark_start(n, reference_anchor(n))
                .add_run(Run::new().add_text(format!("[{n}]")))
                .add_bookmark_end(n)
                .add_run(Run::new().add_tab());
            if !s.title.is_empty() {
                p = p.add_run(Run::new().add_text(format!("{}. ", s.title)));
            }
            p = p
                .add_hyperlink(
                    Hyperlink::new(&s.url, HyperlinkType::External)
                        .add_run(Run::new().style("Hyperlink").add_text(&s.url)),
                )
                .add_run(Run::new().add_text(format!(". Accessed {}.", day(s.accessed_ms))));
            self.blocks.push(Block::Paragraph(Box::new(p)));
        }
    }
}

/// The bookmark on a References entry, which the markers in the text link to.
pub(super) fn reference_anchor(n: usize) -> String {
    format!("ref_{n}")
}
