//! A Word document's body: its paragraphs in order, the References section (a heading
//! and what follows it, or a bibliography field or content control), and the styles that
//! say which paragraphs are headings.

use super::marks::{Marks, Opened};
use super::*;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum WKind {
    Para,
    PPr,
    Run,
    /// A `w:t` inside a run: its text is the document's.
    Text,
    /// A `w:instrText` inside a run: a field's instruction.
    Instr,
    Sdt,
    Other,
}

pub(super) struct WFrame {
    kind: WKind,
    seq: u64,
    /// This element's slot in `Containers`, once a paragraph is found directly in it.
    container: Option<usize>,
    /// A content control holding a bibliography (`w:bibliography`, or the
    /// Bibliographies building-block gallery).
    bibliography: bool,
    /// How many paragraphs had begun when this element opened.
    first_para: usize,
}

/// Whether a field instruction makes a bibliography: Word's `BIBLIOGRAPHY`, Zotero's
/// `ADDIN ZOTERO_BIBL`, Mendeley's `ADDIN Mendeley Bibliography CSL_BIBLIOGRAPHY`,
/// EndNote's `ADDIN EN.REFLIST`.
pub(super) fn is_bibliography_field(instr: &str) -> bool {
    // Only the words before a reference manager's JSON: a title in it may say anything.
    let head = instr.split('{').next().unwrap_or("").to_ascii_uppercase();
    let mut words = head.split_whitespace();
    match words.next() {
        Some("BIBLIOGRAPHY") => true,
        Some("ADDIN") => words.any(|w| w.contains("BIBL") || w == "EN.REFLIST"),
        _ => false,
    }
}

#[derive(Default)]
pub(super) struct StyleInfo {
    name: Option<String>,
    outline: bool,
}

pub(super) fn read_docx<R: Read + Seek>(pkg: &mut Package<R>, main: &str) -> Result<LocalDocument> {
    let xml = pkg.require(main)?;
    let styles = docx_styles(pkg, main);
    let mut body = DocxBody::default();
    walk(&xml, main, |ev| body.step(ev))?;
    Ok(body.into_document(&styles).0)
}

/// What a kept (non-blank) paragraph is in the document the reader makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// The body paragraph at this index.
    Body(usize),
    Heading,
    /// The References entry at this index.
    Reference(usize),
}

/// A kept paragraph: which of the walked ones it is (an index into [`Marks::paras`]),
/// its role, and how many bytes of white space its text lost at the start when trimmed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Kept {
    pub para: usize,
    pub role: Role,
    pub lead: usize,
}

/// A Word document as [`read_docx`] reads it, with where each paragraph's text stands in
/// its main part (`xml`).
pub(crate) struct MarkedDocx {
    pub doc: LocalDocument,
    pub main: String,
    pub xml: Vec<u8>,
    pub kept: Vec<Kept>,
    pub marks: Vec<super::marks::ParaMarks>,
}

pub(super) fn read_marked_docx<R: Read + Seek>(
    pkg: &mut Package<R>,
    main: &str,
) -> Result<MarkedDocx> {
    let xml = pkg.require(main)?;
    let styles = docx_styles(pkg, main);
    let mut body = DocxBody {
        marks: Some(Marks::default()),
        ..DocxBody::default()
    };
    walk(&xml, main, |ev| body.step(ev))?;
    let marks = body.marks.take().map(|m| m.paras).unwrap_or_default();
    let (doc, kept) = body.into_document(&styles);
    Ok(MarkedDocx {
        doc,
        main: main.to_owned(),
        xml,
        kept,
        marks,
    })
}

/// `word/document.xml` as far as it has been walked.
#[derive(Default)]
pub(super) struct DocxBody {
    frames: Vec<WFrame>,
    /// Depth at which a subtree that is not the document's text began: deleted or
    /// moved-away text, and the Fallback copy of content Word writes twice.
    skip_from: Option<usize>,
    open: Vec<usize>,
    paras: Vec<Building>,
    containers: Containers,
    seq: u64,
    /// Complex fields open: the instruction so far and the paragraph each began in.
    fields: Vec<(String, Option<usize>)>,
    /// Paragraphs (as `first..end` of `paras`) of each bibliography field or control.
    bibliographies: Vec<(usize, usize)>,
    /// Where each paragraph's text stands in the part, when asked for (a review copy).
    marks: Option<Marks>,
}

impl DocxBody {
    fn step(&mut self, ev: Ev<'_, '_>) -> Result<()> {
        self.seq += 1;
        match ev {
            Ev::Open(e) => self.open_element(&e)?,
            Ev::Close(end) => self.close_element(end),
            Ev::Text(t) => self.text(t),
        }
        Ok(())
    }

    fn open_element(&mut self, e: &El<'_, '_>) -> Result<()> {
        let depth = self.frames.len();
        let parent = self.frames.last().map(|f| f.kind);
        if self.skip_from.is_none()
            && (e.is(Ns::W, "del") || e.is(Ns::W, "moveFrom") || e.is(Ns::Mc, "Fallback"))
        {
            self.skip_from = Some(depth);
        }
        let mut kind = WKind::Other;
        let word = self.skip_from.is_none() && e.ns == Ns::W;
        if word {
            kind = self.word_element(e, parent)?;
        }
        if let Some(marks) = &mut self.marks {
            let opened = Opened {
                kind,
                word,
                local: e.local,
                tag: e.tag.clone(),
                para: self.open.last().copied(),
            };
            let paras = &self.paras;
            marks.open(opened, |p| paras[p].text.len());
        }
        self.frames.push(WFrame {
            kind,
            seq: self.seq,
            container: None,
            bibliography: false,
            first_para: self.paras.len(),
        });
        Ok(())
    }

    /// Fields and content controls that make a bibliography.
    fn field_element(&mut self, e: &El<'_, '_>, in_run: bool) {
        match e.local {
            b"fldChar" if in_run => match e.attr(Some(Ns::W), "fldCharType").as_deref() {
                Some("begin") => self.fields.push((String::new(), self.open.last().copied())),
                Some("end") => {
                    if let Some((instr, Some(first))) = self.fields.pop()
                        && is_bibliography_field(&instr)
                        && let Some(&last) = self.open.last()
                    {
                        self.bibliographies.push((first, last + 1));
                    }
                }
                _ => {}
            },
            b"fldSimple" => {
                if is_bibliography_field(&e.attr(Some(Ns::W), "instr").unwrap_or_default())
                    && let Some(&p) = self.open.last()
                {
                    self.bibliographies.push((p, p + 1));
                }
            }
            b"bibliography" | b"docPartGallery" => {
                let gallery = e.local == b"docPartGallery";
                if (!gallery || e.attr(Some(Ns::W), "val").as_deref() == Some("Bibliographies"))
                    && let Some(f) = self.frames.iter_mut().rev().find(|f| f.kind == WKind::Sdt)
                {
                    f.bibliography = true;
                }
            }
            _ => {}
        }
    }

    /// What a WordprocessingML element in the text is, noting what it adds to the open
    /// paragraph.
    fn word_element(&mut self, e: &El<'_, '_>, parent: Option<WKind>) -> Result<WKind> {
        let in_run = parent == Some(WKind::Run);
        let in_props = parent == Some(WKind::PPr);
        self.field_element(e, in_run);
        match e.local {
            b"sdt" => return Ok(WKind::Sdt),
            b"instrText" if in_run => return Ok(WKind::Instr),
            b"p" => {
                self.start_paragraph()?;
                return Ok(WKind::Para);
            }
            b"pPr" if parent == Some(WKind::Para) => return Ok(WKind::PPr),
            b"pStyle" if in_props => {
                if let Some(p) = self.current() {
                    p.style = e.attr(Some(Ns::W), "val");
                }
            }
            b"outlineLvl" if in_props => {
                if let Some(p) = self.current() {
                    p.outline = e
                        .attr(Some(Ns::W), "val")
                        .and_then(|v| v.trim().parse::<u32>().ok())
                        .is_some_and(|v| v < 9);
                }
            }
            b"r" => return Ok(WKind::Run),
            b"t" if in_run => return Ok(WKind::Text),
            b"tab" | b"ptab" | b"br" | b"cr" if in_run => {
                if let Some(p) = self.current() {
                    p.text.push(' ');
                }
            }
            b"noBreakHyphen" if in_run => {
                if let Some(p) = self.current() {
                    p.text.push('-');
                }
            }
            _ => {}
        }
        Ok(WKind::Other)
    }

    /// The paragraph whose elements are being read, if any.
    fn current(&mut self) -> Option<&mut Building> {
        let &p = self.open.last()?;
        Some(&mut self.paras[p])
    }

    fn start_paragraph(&mut self) -> Result<()> {
        if self.paras.len() >= MAX_PARAGRAPHS {
            return Err(too_many());
        }
        let container = match self.frames.last_mut() {
            Some(f) => match f.container {
                Some(c) => c,
                None => {
                    self.containers.push((f.seq, u64::MAX));
                    f.container = Some(self.containers.len() - 1);
                    self.containers.len() - 1
                }
            },
            None => {
                self.containers.push((0, u64::MAX));
                self.containers.len() - 1
            }
        };
        self.open.push(self.paras.len());
        self.paras.push(Building {
            text: String::new(),
            style: None,
            outline: false,
            seq: self.seq,
            container,
        });
        Ok(())
    }

    fn close_element(&mut self, end: usize) {
        if let Some(marks) = &mut self.marks {
            let paras = &self.paras;
            marks.close(end, |p| paras[p].text.len());
        }
        if let Some(f) = self.frames.pop() {
            if let Some(c) = f.container {
                self.containers[c].1 = self.seq;
            }
            if f.bibliography {
                self.bibliographies.push((f.first_para, self.paras.len()));
            }
            if f.kind == WKind::Para {
                self.open.pop();
            }
        }
        if self.skip_from == Some(self.frames.len()) {
            self.skip_from = None;
        }
    }

    fn text(&mut self, t: &str) {
        if self.skip_from.is_none()
            && self.frames.last().is_some_and(|f| f.kind == WKind::Instr)
            && let Some(f) = self.fields.last_mut()
        {
            f.0.push_str(t);
        }
        if self.skip_from.is_none()
            && self.frames.last().is_some_and(|f| f.kind == WKind::Text)
            && let Some(&p) = self.open.last()
        {
            self.paras[p].text.push_str(t);
        }
    }

    /// The non-blank paragraphs, with the References section's heading and entries
    /// taken out of the body.
    fn into_document(self, styles: &HashMap<String, StyleInfo>) -> (LocalDocument, Vec<Kept>) {
        let is_heading = |b: &Building| {
            b.outline
                || b.style.as_deref().is_some_and(|id| {
                    heading_name(id)
                        || styles.get(id).is_some_and(|s| {
                            s.outline || s.name.as_deref().is_some_and(heading_name)
                        })
                })
        };
        let kept: Vec<usize> = (0..self.paras.len())
            .filter(|&i| !self.paras[i].text.trim().is_empty())
            .collect();
        // Bibliographies in the paragraphs left once blank ones are dropped.
        let bibliographies: Vec<(usize, usize)> = self
            .bibliographies
            .iter()
            .map(|&(a, b)| {
                (
                    kept.partition_point(|&k| k < a),
                    kept.partition_point(|&k| k < b),
                )
            })
            .filter(|(a, b)| a < b)
            .collect();
        let paras: Vec<Building> = self
            .paras
            .into_iter()
            .filter(|p| !p.text.trim().is_empty())
            .collect();
        let (refs_heading, refs_range) =
            bibliography_span(&paras, &bibliographies, &self.containers, is_heading)
                .unwrap_or_else(|| references_span(&paras, &self.containers, is_heading));

        let mut doc = LocalDocument {
            kind: DocKind::Docx,
            paragraphs: Vec::new(),
            references_heading: None,
            references: Vec::new(),
        };
        let mut roles = Vec::with_capacity(paras.len());
        for (i, p) in paras.into_iter().enumerate() {
            let lead = p.text.len() - p.text.trim_start().len();
            let role = if Some(i) == refs_heading {
                doc.references_heading = Some(p.text.trim().to_owned());
                Role::Heading
            } else if refs_range.contains(&i) {
                doc.references.push(p.text.trim().to_owned());
                Role::Reference(doc.references.len() - 1)
            } else {
                doc.paragraphs.push(Paragraph {
                    index: doc.paragraphs.len() as u32,
                    text: p.text,
                    slide: None,
                    style: p.style,
                    notes: false,
                });
                Role::Body(doc.paragraphs.len() - 1)
            };
            roles.push(Kept {
                para: kept[i],
                role,
                lead,
            });
        }
        (doc, roles)
    }
}

/// The last References heading and the entries after it, which end at the next heading
/// or where the element holding the heading ends (a list in a table cell ends with it).
pub(super) fn references_span(
    paras: &[Building],
    containers: &Containers,
    is_heading: impl Fn(&Building) -> bool,
) -> (Option<usize>, std::ops::Range<usize>) {
    let Some(h) = paras.iter().rposition(|p| is_references_heading(&p.text)) else {
        return (None, 0..0);
    };
    let (open_at, close_at) = containers[paras[h].container];
    let end = paras[h + 1..]
        .iter()
        .position(|p| is_heading(p) || p.seq <= open_at || p.seq >= close_at)
        .map_or(paras.len(), |n| h + 1 + n);
    (Some(h), h + 1..end)
}

/// The document's last bibliography (with the fields and controls around it taken as
/// one) as its References section: entries run on past it to the next heading or the
/// end of its container (entries added after a reference manager's field). Its heading
/// is its own first paragraph when that reads as one, else a References heading just
/// before it; there may be none.
pub(super) fn bibliography_span(
    paras: &[Building],
    bibliographies: &[(usize, usize)],
    containers: &Containers,
    is_heading: impl Fn(&Building) -> bool,
) -> Option<(Option<usize>, std::ops::Range<usize>)> {
    let &(mut lo, mut hi) = bibliographies.iter().max_by_key(|b| b.1)?;
    for &(a, b) in bibliographies {
        if a < hi && b > lo {
            lo = lo.min(a);
            hi = hi.max(b);
        }
    }
    let (open_at, close_at) = containers[paras[hi - 1].container];
    let end = paras[hi..]
        .iter()
        .position(|p| is_heading(p) || p.seq <= open_at || p.seq >= close_at)
        .map_or(paras.len(), |n| hi + n);
    if hi - lo > 1 && (is_references_heading(&paras[lo].text) || is_heading(&paras[lo])) {
        Some((Some(lo), lo + 1..end))
    } else if lo > 0 && is_references_heading(&paras[lo - 1].text) {
        Some((Some(lo - 1), lo..end))
    } else {
        Some((None, lo..end))
    }
}

/// Style ids and names such as "Heading1", "heading 1", "Title", "TOC Heading".
pub(super) fn heading_name(s: &str) -> bool {
    let s = s.to_ascii_lowercase();
    s.starts_with("title") || s.contains("heading")
}

/// Paragraph styles by id. A document without a readable styles part is still
/// read; its headings are then known by style id alone.
pub(super) fn docx_styles<R: Read + Seek>(
    pkg: &mut Package<R>,
    main: &str,
) -> HashMap<String, StyleInfo> {
    let part = read_rels(pkg, main)
        .ok()
        .and_then(|rels| {
            rels.into_iter()
                .find(|r| r.rel_type.ends_with("/styles"))
                .and_then(|r| r.part)
        })
        .unwrap_or_else(|| "word/styles.xml".to_owned());
    let Ok(Some(xml)) = pkg.read(&part) else {
        return HashMap::new();
    };
    let mut styles = HashMap::new();
    let mut depth = 0usize;
    let mut current: Option<(String, StyleInfo)> = None;
    let walked = walk(&xml, &part, |ev| {
        match ev {
            Ev::Open(e) => {
                depth += 1;
                if depth == 2 && e.is(Ns::W, "style") {
                    current = e
                        .attr(Some(Ns::W), "styleId")
                        .map(|id| (id, StyleInfo::default()));
                } else if let Some((_, info)) = current.as_mut() {
                    if depth == 3 && e.is(Ns::W, "name") {
                        info.name = e.attr(Some(Ns::W), "val");
                    } else if depth == 4 && e.is(Ns::W, "outlineLvl") {
                        info.outline = e
                            .attr(Some(Ns::W), "val")
                            .and_then(|v| v.trim().parse::<u32>().ok())
                            .is_some_and(|v| v < 9);
                    }
                }
            }
            Ev::Close(_) => {
                if depth == 2
                    && let Some((id, info)) = current.take()
                {
                    styles.insert(id, info);
                }
                depth = depth.saturating_sub(1);
            }
            Ev::Text(_) => {}
        }
        Ok(())
    });
    if walked.is_err() {
        return HashMap::new();
    }
    styles
}

// ---- PowerPoint ----
