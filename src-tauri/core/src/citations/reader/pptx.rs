//! A deck's slides and speaker notes, paragraph by paragraph, in the presentation's
//! slide order.

use super::*;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum AKind {
    Para,
    /// `a:r` or `a:fld`: runs whose `a:t` is text.
    Run,
    Text,
    Shape,
    NvSpPr,
    NvPr,
    Other,
}

pub(super) struct SlidePara {
    text: String,
    /// "Title" or "Subtitle" for paragraphs of such a placeholder.
    style: Option<&'static str>,
}

pub(super) fn read_pptx<R: Read + Seek>(pkg: &mut Package<R>, main: &str) -> Result<LocalDocument> {
    let pres = pkg.require(main)?;
    let rels = read_rels(pkg, main)?;

    let mut ids: Vec<String> = Vec::new();
    let mut path: Vec<(Ns, bool)> = Vec::new();
    walk(&pres, main, |ev| {
        match ev {
            Ev::Open(e) => {
                let in_list = path.last().is_some_and(|&(_, l)| l);
                if in_list && e.is(Ns::P, "sldId") {
                    if ids.len() >= MAX_PARAGRAPHS {
                        return Err(too_many());
                    }
                    ids.push(e.attr(Some(Ns::R), "id").unwrap_or_default());
                }
                path.push((e.ns, path.len() == 1 && e.is(Ns::P, "sldIdLst")));
            }
            Ev::Close(_) => {
                path.pop();
            }
            Ev::Text(_) => {}
        }
        Ok(())
    })?;

    let mut slides: Vec<Vec<SlidePara>> = Vec::with_capacity(ids.len().min(4096));
    // Each slide's speaker notes (the notes page's body placeholder).
    let mut notes: Vec<Vec<SlidePara>> = Vec::with_capacity(ids.len().min(4096));
    let mut total = 0usize;
    for (n, rid) in ids.iter().enumerate() {
        let part = rels
            .iter()
            .find(|r| &r.id == rid)
            .and_then(|r| r.part.clone())
            .ok_or_else(|| {
                corrupt(format_args!(
                    "slide {} ({rid}) has no part in the package",
                    n + 1
                ))
            })?;
        let xml = pkg.require(&part)?;
        let paras = slide_paragraphs(&xml, &part, MAX_PARAGRAPHS - total, false)?;
        total += paras.len();
        slides.push(paras);
        let notes_part = read_rels(pkg, &part)?
            .into_iter()
            .find(|r| r.rel_type.ends_with("/notesSlide"))
            .and_then(|r| r.part);
        let said = match notes_part {
            Some(np) => match pkg.read(&np)? {
                Some(xml) => slide_paragraphs(&xml, &np, MAX_PARAGRAPHS - total, true)?,
                None => Vec::new(),
            },
            None => Vec::new(),
        };
        total += said.len();
        notes.push(said);
    }

    let title_of = |s: &[SlidePara]| -> (String, Vec<bool>) {
        let titles: Vec<bool> = s.iter().map(|p| p.style == Some("Title")).collect();
        if titles.iter().any(|&t| t) {
            let text = s
                .iter()
                .filter(|p| p.style == Some("Title"))
                .map(|p| p.text.trim())
                .collect::<Vec<_>>()
                .join(" ");
            (text, titles)
        } else {
            // A slide without a title placeholder: its first paragraph heads it.
            let mut first = vec![false; s.len()];
            if let Some(f) = first.first_mut() {
                *f = true;
            }
            (
                s.first()
                    .map(|p| p.text.trim().to_owned())
                    .unwrap_or_default(),
                first,
            )
        }
    };
    let refs_at = slides
        .iter()
        .rposition(|s| is_references_heading(&title_of(s).0));

    let mut doc = LocalDocument {
        kind: DocKind::Pptx,
        paragraphs: Vec::new(),
        references_heading: None,
        references: Vec::new(),
    };
    for (si, (s, said)) in slides.into_iter().zip(notes).enumerate() {
        if Some(si) == refs_at {
            let (heading, is_title) = title_of(&s);
            doc.references_heading = Some(heading);
            doc.references.extend(
                s.into_iter()
                    .zip(is_title)
                    .filter(|(_, t)| !t)
                    .map(|(p, _)| p.text.trim().to_owned()),
            );
            continue;
        }
        for (p, is_notes) in s
            .into_iter()
            .map(|p| (p, false))
            .chain(said.into_iter().map(|p| (p, true)))
        {
            doc.paragraphs.push(Paragraph {
                index: doc.paragraphs.len() as u32,
                text: p.text,
                slide: Some(si as u32 + 1),
                style: p.style.map(str::to_owned),
                notes: is_notes,
            });
        }
    }
    Ok(doc)
}

/// A slide's non-blank paragraphs in shape order: shapes, groups, tables. For a notes
/// page (`notes`), only its body placeholder's: the notes, not the slide's image, number,
/// date, header or footer.
pub(super) fn slide_paragraphs(
    xml: &[u8],
    part: &str,
    room: usize,
    notes: bool,
) -> Result<Vec<SlidePara>> {
    let mut frames: Vec<AKind> = Vec::new();
    let mut skip_from: Option<usize> = None;
    // The placeholder style of each open shape, innermost last.
    let mut shapes: Vec<Option<&'static str>> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut paras: Vec<SlidePara> = Vec::new();
    // Notes: the depth of the open shape that is the notes' body placeholder (0: none).
    let mut notes_body = 0usize;
    walk(xml, part, |ev| {
        match ev {
            Ev::Open(e) => {
                let depth = frames.len();
                let parent = frames.last().copied();
                if skip_from.is_none() && e.is(Ns::Mc, "Fallback") {
                    skip_from = Some(depth);
                }
                let mut kind = AKind::Other;
                if skip_from.is_none() {
                    match (e.ns, e.local) {
                        (Ns::A, b"p")
                            if notes && (notes_body == 0 || notes_body > shapes.len()) => {}
                        (Ns::A, b"p") => {
                            if paras.len() >= room {
                                return Err(too_many());
                            }
                            kind = AKind::Para;
                            open.push(paras.len());
                            paras.push(SlidePara {
                                text: String::new(),
                                style: shapes.last().copied().flatten(),
                            });
                        }
                        (Ns::A, b"r" | b"fld") => kind = AKind::Run,
                        (Ns::A, b"t") if parent == Some(AKind::Run) => kind = AKind::Text,
                        (Ns::A, b"br") if parent == Some(AKind::Para) => {
                            if let Some(&p) = open.last() {
                                paras[p].text.push(' ');
                            }
                        }
                        (Ns::P, b"sp") => {
                            kind = AKind::Shape;
                            shapes.push(None);
                        }
                        (Ns::P, b"nvSpPr") if parent == Some(AKind::Shape) => kind = AKind::NvSpPr,
                        (Ns::P, b"nvPr") if parent == Some(AKind::NvSpPr) => kind = AKind::NvPr,
                        (Ns::P, b"ph") if parent == Some(AKind::NvPr) => {
                            let style = match e.attr(None, "type").as_deref() {
                                _ if notes => None,
                                Some("title" | "ctrTitle") => Some("Title"),
                                Some("subTitle") => Some("Subtitle"),
                                _ => None,
                            };
                            if notes && e.attr(None, "type").as_deref() == Some("body") {
                                notes_body = shapes.len();
                            }
                            if let Some(s) = shapes.last_mut() {
                                *s = style;
                            }
                        }
                        _ => {}
                    }
                }
                frames.push(kind);
            }
            Ev::Close(_) => {
                match frames.pop() {
                    Some(AKind::Para) => {
                        open.pop();
                    }
                    Some(AKind::Shape) => {
                        if notes_body == shapes.len() {
                            notes_body = 0;
                        }
                        shapes.pop();
                    }
                    _ => {}
                }
                if skip_from == Some(frames.len()) {
                    skip_from = None;
                }
            }
            Ev::Text(t) => {
                if skip_from.is_none()
                    && frames.last() == Some(&AKind::Text)
                    && let Some(&p) = open.last()
                {
                    paras[p].text.push_str(t);
                }
            }
        }
        Ok(())
    })?;
    paras.retain(|p| !p.text.trim().is_empty());
    Ok(paras)
}
