//! Where a Word document's text stands in its main part, by byte: each paragraph's start
//! tag, its properties, and each run with its children, recorded while the reader walks
//! the part (so what a review copy marks is exactly what the summary read).

use super::docx::WKind;
use std::ops::Range;

/// One paragraph of the main part, as bytes of the part.
#[derive(Debug, Clone, Default)]
pub(crate) struct ParaMarks {
    /// `<w:p …>`.
    pub open: Range<usize>,
    /// The whole `w:pPr` element, when the paragraph has one.
    pub ppr: Option<Range<usize>>,
    /// The start tag of the `w:rPr` inside `w:pPr` (the paragraph mark's run properties).
    pub mark_rpr_tag: Option<Range<usize>>,
    /// Where a `w:rPr` would go inside `w:pPr`: before `w:sectPr` or `w:pPrChange`.
    pub mark_rpr_before: Option<usize>,
    pub runs: Vec<RunMarks>,
}

/// One `w:r` of a paragraph.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunMarks {
    /// `<w:r …>` (the whole element for an empty `<w:r/>`).
    pub open: Range<usize>,
    /// Just past `</w:r>`.
    pub end: usize,
    /// The whole `w:rPr`, when the run has one.
    pub rpr: Option<Range<usize>>,
    pub children: Vec<ChildMarks>,
    /// Inside a tracked insertion already (`w:ins`, `w:moveTo`): one cannot hold another.
    pub in_insertion: bool,
    /// That insertion's start tag, when it holds the run directly (so it can be closed
    /// around a new insertion and opened again after).
    pub insertion_tag: Option<Range<usize>>,
}

/// One element inside a run other than its properties: text, a tab, a break, a drawing.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChildMarks {
    pub span: Range<usize>,
    /// What it adds to the paragraph's text, as bytes of that text.
    pub text: Range<usize>,
    /// A `w:t`: its text can be split.
    pub is_t: bool,
}

/// What an open element is to the recorder.
#[derive(Clone)]
enum Frame {
    Para(usize),
    PPr(usize),
    MarkRpr,
    Run(usize, usize),
    RunRpr(usize, usize),
    Child(usize, usize, usize),
    Insertion(Range<usize>),
    Other,
}

/// What the reader tells the recorder of an element that opens.
pub(super) struct Opened<'a> {
    pub kind: WKind,
    /// In the WordprocessingML namespace and not in skipped content.
    pub word: bool,
    pub local: &'a [u8],
    pub tag: Range<usize>,
    /// The paragraph whose text is being read.
    pub para: Option<usize>,
}

/// The recorder: one [`ParaMarks`] per paragraph the reader starts, in its order.
#[derive(Default)]
pub(crate) struct Marks {
    pub paras: Vec<ParaMarks>,
    frames: Vec<(Frame, usize)>,
    insertions: usize,
}

impl Marks {
    /// An element opens; `len` says how long a paragraph's text is now.
    pub(super) fn open(&mut self, o: Opened<'_>, len: impl Fn(usize) -> usize) {
        let parent = self.frames.last().map(|f| f.0.clone());
        let frame = match (o.kind, parent.clone(), o.para) {
            (WKind::Para, _, Some(p)) => {
                if self.paras.len() <= p {
                    self.paras.resize_with(p + 1, ParaMarks::default);
                }
                self.paras[p].open = o.tag.clone();
                Frame::Para(p)
            }
            (WKind::PPr, Some(Frame::Para(p)), _) => Frame::PPr(p),
            (_, Some(Frame::PPr(p)), _) if o.word && o.local == b"rPr" => {
                self.paras[p].mark_rpr_tag = Some(o.tag.clone());
                Frame::MarkRpr
            }
            (_, Some(Frame::PPr(p)), _)
                if o.word && matches!(o.local, b"sectPr" | b"pPrChange") =>
            {
                let at = &mut self.paras[p].mark_rpr_before;
                at.get_or_insert(o.tag.start);
                Frame::Other
            }
            (WKind::Run, _, Some(p)) if p < self.paras.len() => {
                let runs = &mut self.paras[p].runs;
                let insertion_tag = match parent {
                    Some(Frame::Insertion(tag)) => Some(tag),
                    _ => None,
                };
                runs.push(RunMarks {
                    open: o.tag.clone(),
                    in_insertion: self.insertions > 0,
                    insertion_tag,
                    ..RunMarks::default()
                });
                Frame::Run(p, runs.len() - 1)
            }
            (_, Some(Frame::Run(p, r)), _) if o.word && o.local == b"rPr" => Frame::RunRpr(p, r),
            (_, Some(Frame::Run(p, r)), _) => {
                let at = len(p);
                let children = &mut self.paras[p].runs[r].children;
                children.push(ChildMarks {
                    span: o.tag.start..o.tag.end,
                    text: at..at,
                    is_t: o.word && o.local == b"t",
                });
                Frame::Child(p, r, children.len() - 1)
            }
            _ if o.word && matches!(o.local, b"ins" | b"moveTo") => {
                self.insertions += 1;
                Frame::Insertion(o.tag.clone())
            }
            _ => Frame::Other,
        };
        self.frames.push((frame, o.tag.start));
    }

    /// The element opened last closes at `end`; `len` is how long the text of the
    /// paragraph it belongs to is now.
    pub(super) fn close(&mut self, end: usize, len: impl Fn(usize) -> usize) {
        let Some((frame, start)) = self.frames.pop() else {
            return;
        };
        match frame {
            Frame::PPr(p) => self.paras[p].ppr = Some(start..end),
            Frame::Run(p, r) => self.paras[p].runs[r].end = end,
            Frame::RunRpr(p, r) => self.paras[p].runs[r].rpr = Some(start..end),
            Frame::Child(p, r, c) => {
                let child = &mut self.paras[p].runs[r].children[c];
                child.span.end = end;
                child.text.end = len(p);
            }
            Frame::Insertion(_) => self.insertions -= 1,
            Frame::Para(_) | Frame::MarkRpr | Frame::Other => {}
        }
    }
}
