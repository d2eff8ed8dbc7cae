//! Reading a Word body into paragraphs: a run's text pieces, the end of a complex field,
//! and each paragraph's role around the References section.

use super::*;

/// A complex field's end: a citation field marks its span cited, a generated one (a table
/// of contents, an index) its paragraphs generated, and a bibliography field outside a
/// fallback copy is a bibliography.
pub(super) fn field_ended(
    tree: &Tree<'_>,
    f: OpenField,
    (b, at): (Option<usize>, usize),
    in_copy: bool,
    builders: &mut [Para],
    bibs: &mut Vec<Bibliography>,
) {
    let kind = field_kind(&f.instr);
    if kind == FieldKind::Citation
        && let Some(b) = b.filter(|&b| f.para == Some(b))
    {
        builders[b].cited.push((f.at, at));
    }
    if kind == FieldKind::Generated {
        for b in [f.para, b].into_iter().flatten() {
            builders[b].generated = true;
        }
    }
    if kind == FieldKind::Bibliography
        && !in_copy
        && let (Some(first), Some(last)) = (f.para, b)
    {
        let last = builders[last].elem;
        bibs.push(Bibliography {
            first: builders[first].elem,
            last,
            insert_at: tree.elems[last].end,
        });
    }
}

/// Appends a run's piece of text to its paragraph: a `w:t`'s text (`None`), or what a
/// tab, a break or a non-breaking hyphen stands for.
pub(super) fn push_text(tree: &Tree<'_>, i: usize, piece: Option<&str>, para: &mut Para) {
    let e = &tree.elems[i];
    let run = e.parent.unwrap_or(i);
    let start = para.chars;
    match piece {
        Some(s) => {
            para.text.push_str(s);
            para.chars += s.chars().count();
            para.segs.push(Seg {
                start,
                len: s.chars().count(),
                t: None,
                run,
                offs: Vec::new(),
                splittable: false,
            });
        }
        None => {
            let t = TextAt::read(tree, i);
            t.append(&mut para.text, &mut para.chars);
            para.segs.push(Seg {
                start,
                len: t.len,
                t: Some(i),
                run,
                offs: t.offs,
                splittable: t.splittable,
            });
        }
    }
}

/// Each paragraph's role (body, the References heading, an entry) and where new
/// references go when the document has a bibliography of its own: the last
/// bibliography field or control, else the last References heading and what follows it
/// in its container.
pub(super) fn roles_of(
    tree: &Tree<'_>,
    body: usize,
    paras: &[Para],
    bibs: &[Bibliography],
) -> (Vec<Role>, Option<usize>) {
    let mut roles = vec![Role::Body; paras.len()];
    let bib = last_bibliography(tree, bibs);
    let mut bib_insert_at = None;
    if let Some(b) = bib {
        let (first, last) = (tree.elems[b.first].start, tree.elems[b.last].end);
        let inside = |p: &Para| tree.elems[p.elem].start >= first && tree.elems[p.elem].end <= last;
        if let Some(start) = paras.iter().position(inside) {
            let scope = tree.elems[b.last].parent.unwrap_or(body);
            let mut end = start;
            while end < paras.len()
                && (inside(&paras[end])
                    || (tree.is_within(paras[end].elem, scope)
                        && !is_heading_style(paras[end].style.as_deref())))
            {
                end += 1;
            }
            let mut entries = start;
            // The section's heading: the control's first paragraph, or the one before.
            if end - start > 1
                && (is_references_heading(&paras[start].text)
                    || is_heading_style(paras[start].style.as_deref()))
            {
                roles[start] = Role::RefsHeading;
                entries += 1;
            } else if start > 0 && is_references_heading(&paras[start - 1].text) {
                roles[start - 1] = Role::RefsHeading;
            }
            for r in &mut roles[entries..end] {
                *r = Role::RefEntry;
            }
            let after_last = tree.elems[paras[end - 1].elem].end;
            bib_insert_at = Some(b.insert_at.max(after_last));
        }
    }
    if bib_insert_at.is_none()
        && let Some(h) = paras.iter().rposition(|p| is_references_heading(&p.text))
    {
        roles[h] = Role::RefsHeading;
        // A list inside a container (a bibliography content control, a table
        // cell) ends with the container.
        let scope = tree.elems[paras[h].elem].parent.unwrap_or(body);
        for (i, p) in paras.iter().enumerate().skip(h + 1) {
            if is_heading_style(p.style.as_deref()) || !tree.is_within(p.elem, scope) {
                break;
            }
            roles[i] = Role::RefEntry;
        }
    }

    (roles, bib_insert_at)
}
