//! PowerPoint decks: paragraphs of every slide in presentation order, citations
//! spliced in as new runs, references on an existing "References" slide or a new one.

use std::collections::HashMap;

use super::package::{
    Package, Relationship, dir_of, fresh_rel_id, parse_rels, relative_target, rels_part_for,
};
use super::style::{insertions, prepare};
use super::xml::{Edit, Elem, Ns, TextAt, Tree, apply, escape_attr, escape_text};
use super::{
    Anchor, CiteOptions, Cited, EngineError, Kind, MIN_CITABLE_CHARS, Parsed,
    is_references_heading, stats,
};

const SLIDE_CT: &str = "application/vnd.openxmlformats-officedocument.presentationml.slide+xml";
const NS_A: &str = "http://schemas.openxmlformats.org/drawingml/2006/main";
const NS_R: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const NS_P: &str = "http://schemas.openxmlformats.org/presentationml/2006/main";
const NS_REL: &str = "http://schemas.openxmlformats.org/package/2006/relationships";

struct Seg {
    start: usize,
    len: usize,
    /// `a:r`, `a:fld` or `a:br`.
    holder: usize,
    t: Option<usize>,
    offs: Vec<usize>,
    splittable: bool,
}

impl Seg {
    fn end(&self) -> usize {
        self.start + self.len
    }
}

struct SPara {
    elem: usize,
    text: String,
    /// `text`'s length in chars, kept so long paragraphs stay linear to build.
    chars: usize,
    segs: Vec<Seg>,
    /// "Title" or "Subtitle" when in such a placeholder.
    style: Option<&'static str>,
}

struct SlideRef {
    part: String,
    id: u32,
}

struct Deck {
    pres_src: String,
    rels_part: String,
    rels_src: String,
    rels: Vec<Relationship>,
    slides: Vec<SlideRef>,
    slide_rel_type: String,
}

fn a(e: &Elem, local: &str) -> bool {
    e.is(Ns::A, local)
}

fn load_deck(pkg: &mut Package<'_>, main: &str) -> Result<Deck, EngineError> {
    let pres_src = pkg.read_xml(main)?.ok_or_else(|| {
        EngineError::Corrupt(format!("The presentation's main part ({main}) is missing."))
    })?;
    let rels_part = rels_part_for(main);
    let rels_src = pkg.read_xml(&rels_part)?.unwrap_or_default();
    let rels = if rels_src.is_empty() {
        Vec::new()
    } else {
        parse_rels(&rels_src, &rels_part, main)?
    };
    let tree = Tree::parse(&pres_src, main)?;
    let mut slides = Vec::new();
    let mut slide_rel_type = format!("{NS_R}/slide");
    if let Some(list) = tree.child(tree.root(), Ns::P, "sldIdLst") {
        for s in tree.children_named(list, Ns::P, "sldId") {
            let e = &tree.elems[s];
            let id = e
                .attr(Ns::None, "id")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let rid = e.attr(Ns::R, "id").unwrap_or_default();
            let rel = rels.iter().find(|r| r.id == rid);
            let Some((part, ty)) =
                rel.and_then(|r| r.part.clone().map(|p| (p, r.rel_type.clone())))
            else {
                return Err(EngineError::Corrupt(format!(
                    "The presentation lists a slide ({rid}) it has no part for."
                )));
            };
            slide_rel_type = ty;
            slides.push(SlideRef { part, id });
        }
    }
    Ok(Deck {
        pres_src,
        rels_part,
        rels_src,
        rels,
        slides,
        slide_rel_type,
    })
}

fn slide_paras(tree: &Tree<'_>) -> Vec<SPara> {
    paras_of(tree, false)
}

/// The `mc:Fallback` copies of a slide's paragraphs, which older readers show.
fn fallback_paras(tree: &Tree<'_>) -> Vec<SPara> {
    paras_of(tree, true)
}

/// For each of `paras` (a slide's), its `mc:Fallback` copy when alternate content
/// holds it (`Ok(Some)`, cited alike), `Ok(None)` outside alternate content, and
/// `Err(())` when the fallback does not hold the same paragraphs: citing one copy
/// only would make them disagree.
fn twins(tree: &Tree<'_>, paras: &[SPara]) -> Vec<Result<Option<SPara>, ()>> {
    let mut out: Vec<Result<Option<SPara>, ()>> = (0..paras.len()).map(|_| Ok(None)).collect();
    let mut copies: Vec<Option<SPara>> = fallback_paras(tree).into_iter().map(Some).collect();
    let nearest_fallback = |elem: usize| {
        tree.ancestors(elem)
            .find(|&x| tree.elems[x].is(Ns::Mc, "Fallback"))
    };
    let mut handled = vec![false; paras.len()];
    for (ac, e) in tree.elems.iter().enumerate() {
        if !e.is(Ns::Mc, "AlternateContent") || nearest_fallback(ac).is_some() {
            continue;
        }
        let (Some(choice), Some(fallback)) = (
            tree.child(ac, Ns::Mc, "Choice"),
            tree.child(ac, Ns::Mc, "Fallback"),
        ) else {
            continue;
        };
        let originals: Vec<usize> = (0..paras.len())
            .filter(|&i| !handled[i] && tree.is_within(paras[i].elem, choice))
            .collect();
        let mine: Vec<usize> = (0..copies.len())
            .filter(|&c| {
                copies[c]
                    .as_ref()
                    .is_some_and(|p| nearest_fallback(p.elem) == Some(fallback))
            })
            .collect();
        let same = originals.len() == mine.len()
            && originals
                .iter()
                .zip(&mine)
                .all(|(&o, &c)| copies[c].as_ref().is_some_and(|p| p.text == paras[o].text));
        for (k, &o) in originals.iter().enumerate() {
            handled[o] = true;
            out[o] = if same {
                Ok(copies[mine[k]].take())
            } else {
                Err(())
            };
        }
    }
    out
}

/// A slide's paragraphs, or with `copies` only those of its `mc:Fallback` branches.
fn paras_of(tree: &Tree<'_>, copies: bool) -> Vec<SPara> {
    let n = tree.elems.len();
    let mut excluded = vec![false; n];
    let mut in_fallback = vec![false; n];
    let mut para_of: Vec<Option<usize>> = vec![None; n];
    let mut sp_of: Vec<Option<usize>> = vec![None; n];
    let mut slot: Vec<Option<usize>> = vec![None; n];
    let mut paras: Vec<SPara> = Vec::new();
    for i in 0..n {
        let e = &tree.elems[i];
        let parent = e.parent;
        in_fallback[i] = parent.is_some_and(|p| in_fallback[p]) || e.is(Ns::Mc, "Fallback");
        excluded[i] = !copies && in_fallback[i];
        if excluded[i] {
            continue;
        }
        para_of[i] = parent.and_then(|p| {
            if a(&tree.elems[p], "p") {
                Some(p)
            } else {
                para_of[p]
            }
        });
        sp_of[i] = if e.is(Ns::P, "sp") {
            Some(i)
        } else {
            parent.and_then(|p| sp_of[p])
        };
        if a(e, "p") {
            if copies && !in_fallback[i] {
                continue;
            }
            slot[i] = Some(paras.len());
            paras.push(SPara {
                elem: i,
                text: String::new(),
                chars: 0,
                segs: Vec::new(),
                style: sp_of[i].and_then(|sp| placeholder_style(tree, sp)),
            });
            continue;
        }
        let Some(b) = para_of[i].and_then(|p| slot[p]) else {
            continue;
        };
        let Some(par) = parent else { continue };
        let pe = &tree.elems[par];
        let para = &mut paras[b];
        let start = para.chars;
        if a(e, "t") && (a(pe, "r") || a(pe, "fld")) {
            let t = TextAt::read(tree, i);
            t.append(&mut para.text, &mut para.chars);
            para.segs.push(Seg {
                start,
                len: t.len,
                holder: par,
                t: Some(i),
                offs: t.offs,
                splittable: t.splittable,
            });
        } else if a(e, "br") && a(pe, "p") {
            para.text.push('\n');
            para.chars += 1;
            para.segs.push(Seg {
                start,
                len: 1,
                holder: i,
                t: None,
                offs: Vec::new(),
                splittable: false,
            });
        }
    }
    paras.retain(|p| !p.text.trim().is_empty());
    paras
}

fn placeholder_style(tree: &Tree<'_>, sp: usize) -> Option<&'static str> {
    let ph = tree
        .child(sp, Ns::P, "nvSpPr")
        .and_then(|nv| tree.child(nv, Ns::P, "nvPr"))
        .and_then(|nv| tree.child(nv, Ns::P, "ph"))?;
    match tree.elems[ph].attr(Ns::None, "type") {
        Some("title" | "ctrTitle") => Some("Title"),
        Some("subTitle") => Some("Subtitle"),
        _ => None,
    }
}

struct LoadedSlide<'s> {
    tree: Tree<'s>,
    paras: Vec<SPara>,
}

fn read_slides(pkg: &mut Package<'_>, deck: &Deck) -> Result<Vec<String>, EngineError> {
    deck.slides
        .iter()
        .map(|s| {
            pkg.read_xml(&s.part)?.ok_or_else(|| {
                EngineError::Corrupt(format!("The slide part {} is missing.", s.part))
            })
        })
        .collect()
}

fn load_slides<'s>(srcs: &'s [String], deck: &Deck) -> Result<Vec<LoadedSlide<'s>>, EngineError> {
    srcs.iter()
        .zip(&deck.slides)
        .map(|(src, s)| {
            let tree = Tree::parse(src, &s.part)?;
            let paras = slide_paras(&tree);
            Ok(LoadedSlide { tree, paras })
        })
        .collect()
}

fn title_text(s: &LoadedSlide<'_>) -> String {
    s.paras
        .iter()
        .filter(|p| p.style == Some("Title"))
        .map(|p| p.text.trim())
        .collect::<Vec<_>>()
        .join(" ")
}

fn refs_slide(slides: &[LoadedSlide<'_>]) -> Option<usize> {
    slides
        .iter()
        .rposition(|s| is_references_heading(&title_text(s)))
}

pub(crate) fn parse(pkg: &mut Package<'_>, main: &str) -> Result<Parsed, EngineError> {
    let deck = load_deck(pkg, main)?;
    let srcs = read_slides(pkg, &deck)?;
    let slides = load_slides(&srcs, &deck)?;
    let refs_at = refs_slide(&slides);
    let mut parsed = Parsed::new(Kind::Pptx);
    for (si, s) in slides.iter().enumerate() {
        if Some(si) == refs_at {
            parsed.references_heading = Some(title_text(s));
            for p in s.paras.iter().filter(|p| p.style != Some("Title")) {
                parsed.reference(&p.text);
            }
            continue;
        }
        for p in &s.paras {
            let (slide, style) = (Some(si as u32 + 1), p.style.map(str::to_owned));
            parsed.body(p.text.clone(), slide, style);
        }
    }
    Ok(parsed)
}

/// Run properties for a new run: no hyperlink, or the citation would become a link.
fn run_props(tree: &Tree<'_>, holder: usize) -> String {
    match tree.child(holder, Ns::A, "rPr") {
        Some(rpr) => tree.raw_without(rpr, |e| a(e, "hlinkClick") || a(e, "hlinkMouseOver")),
        None => String::new(),
    }
}

fn citation_edits(tree: &Tree<'_>, p: &SPara, anc: Anchor, citation: &str) -> Vec<Edit> {
    let ci = anc.char_index();
    let s = anc.split();
    let Some(seg) = p.segs.iter().find(|g| ci >= g.start && ci < g.end()) else {
        return Vec::new();
    };
    let px = tree.elems[p.elem].prefix().to_owned();
    let h = &tree.elems[seg.holder];
    let new_run = format!(
        "<{px}r>{}<{px}t>{}</{px}t></{px}r>",
        run_props(tree, seg.holder),
        escape_text(citation)
    );
    let k = s - seg.start;
    let (Some(te), true, true) = (seg.t, seg.splittable, a(h, "r")) else {
        // Fields (slide numbers, dates) cannot be split.
        let at = if k == 0 { h.start } else { h.end };
        return vec![Edit::insert(at, new_run)];
    };
    if k == 0 {
        return vec![Edit::insert(h.start, new_run)];
    }
    if k == seg.len {
        return vec![Edit::insert(h.end, new_run)];
    }
    let tq = &tree.elems[te].qname;
    let rpr = tree
        .child(seg.holder, Ns::A, "rPr")
        .map_or("", |r| tree.raw(r));
    vec![Edit::insert(
        seg.offs[k],
        format!(
            "</{tq}></{px}r>{new_run}{}{rpr}<{tq}>",
            tree.start_tag(seg.holder)
        ),
    )]
}

fn font_size(n: usize) -> u32 {
    match n {
        0..=4 => 1800,
        5..=8 => 1400,
        9..=14 => 1200,
        15..=20 => 1000,
        _ => 800,
    }
}

fn ref_paragraphs(refs: &[String], a: &str) -> String {
    let sz = font_size(refs.len());
    refs.iter()
        .map(|r| {
            format!(
                "<{a}p><{a}pPr marL=\"457200\" indent=\"-457200\"><{a}buNone/></{a}pPr><{a}r><{a}rPr lang=\"en-US\" sz=\"{sz}\" dirty=\"0\"/><{a}t>{}</{a}t></{a}r></{a}p>",
                escape_text(r)
            )
        })
        .collect()
}

struct Geometry {
    x: i64,
    title_y: i64,
    title_h: i64,
    body_y: i64,
    body_h: i64,
    w: i64,
}

fn geometry(cx: i64, cy: i64) -> Geometry {
    let x = cx / 12;
    let title_y = cy / 20;
    let title_h = cy / 7;
    let body_y = title_y + title_h + cy / 40;
    Geometry {
        x,
        title_y,
        title_h,
        body_y,
        body_h: cy - body_y - cy / 20,
        w: cx - 2 * x,
    }
}

/// A text box for the reference list; `xmlns_a` declares `a:` where the slide lacks it.
fn textbox(id: u32, g: &Geometry, refs: &[String], p: &str, a: &str, xmlns_a: &str) -> String {
    format!(
        "<{p}sp{xmlns_a}><{p}nvSpPr><{p}cNvPr id=\"{id}\" name=\"References {id}\"/><{p}cNvSpPr txBox=\"1\"/><{p}nvPr/></{p}nvSpPr>\
<{p}spPr><{a}xfrm><{a}off x=\"{}\" y=\"{}\"/><{a}ext cx=\"{}\" cy=\"{}\"/></{a}xfrm><{a}prstGeom prst=\"rect\"><{a}avLst/></{a}prstGeom><{a}noFill/></{p}spPr>\
<{p}txBody><{a}bodyPr wrap=\"square\" rtlCol=\"0\"><{a}noAutofit/></{a}bodyPr><{a}lstStyle/>{}</{p}txBody></{p}sp>",
        g.x,
        g.body_y,
        g.w,
        g.body_h,
        ref_paragraphs(refs, a)
    )
}

fn new_slide_xml(g: &Geometry, refs: &[String]) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\r\n\
<p:sld xmlns:a=\"{NS_A}\" xmlns:r=\"{NS_R}\" xmlns:p=\"{NS_P}\"><p:cSld name=\"References\"><p:spTree>\
<p:nvGrpSpPr><p:cNvPr id=\"1\" name=\"\"/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr>\
<p:grpSpPr><a:xfrm><a:off x=\"0\" y=\"0\"/><a:ext cx=\"0\" cy=\"0\"/><a:chOff x=\"0\" y=\"0\"/><a:chExt cx=\"0\" cy=\"0\"/></a:xfrm></p:grpSpPr>\
<p:sp><p:nvSpPr><p:cNvPr id=\"2\" name=\"Title 1\"/><p:cNvSpPr><a:spLocks noGrp=\"1\"/></p:cNvSpPr><p:nvPr><p:ph type=\"title\"/></p:nvPr></p:nvSpPr>\
<p:spPr><a:xfrm><a:off x=\"{}\" y=\"{}\"/><a:ext cx=\"{}\" cy=\"{}\"/></a:xfrm></p:spPr>\
<p:txBody><a:bodyPr/><a:lstStyle/><a:p><a:r><a:rPr lang=\"en-US\" dirty=\"0\"/><a:t>References</a:t></a:r></a:p></p:txBody></p:sp>\
{}</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>",
        g.x,
        g.title_y,
        g.w,
        g.title_h,
        textbox(3, g, refs, "p:", "a:", "")
    )
}

fn slide_size(pres: &Tree<'_>) -> (i64, i64) {
    let sz = pres
        .child(pres.root(), Ns::P, "sldSz")
        .map(|s| &pres.elems[s]);
    let get = |k: &str, d: i64| {
        sz.and_then(|e| e.attr(Ns::None, k))
            .and_then(|v| v.parse().ok())
            .filter(|v: &i64| *v > 0)
            .unwrap_or(d)
    };
    (get("cx", 9_144_000), get("cy", 6_858_000))
}

pub(crate) fn cite(
    mut pkg: Package<'_>,
    main: &str,
    opts: &CiteOptions,
) -> Result<Cited, EngineError> {
    let deck = load_deck(&mut pkg, main)?;
    let srcs = read_slides(&mut pkg, &deck)?;
    let slides = load_slides(&srcs, &deck)?;
    let refs_at = refs_slide(&slides);

    // Speaker notes, when they are cited too: each slide's notes part and its source.
    let notes: Vec<Option<(String, String)>> = if opts.notes {
        notes_parts(&mut pkg, &deck)?
    } else {
        vec![None; deck.slides.len()]
    };
    let notes_trees: Vec<Option<(Tree<'_>, Vec<SPara>)>> = notes
        .iter()
        .map(|n| match n {
            Some((part, src)) => {
                let tree = Tree::parse(src, part)?;
                let paras = notes_paras(&tree);
                Ok(Some((tree, paras)))
            }
            None => Ok(None),
        })
        .collect::<Result<_, EngineError>>()?;

    // Every body paragraph, in order, as (slide, in the notes?, paragraph): a slide's
    // notes come right after it.
    let mut cands: Vec<(usize, bool, usize)> = Vec::new();
    for (si, s) in slides.iter().enumerate() {
        if Some(si) == refs_at {
            continue;
        }
        cands.extend((0..s.paras.len()).map(|pi| (si, false, pi)));
        if let Some((_, np)) = &notes_trees[si] {
            cands.extend((0..np.len()).map(|pi| (si, true, pi)));
        }
    }
    let para_of = |si: usize, in_notes: bool, pi: usize| -> (&Tree<'_>, &SPara) {
        if in_notes {
            let (t, ps) = notes_trees[si].as_ref().expect("notes loaded");
            (t, &ps[pi])
        } else {
            (&slides[si].tree, &slides[si].paras[pi])
        }
    };
    let slide_twins: Vec<Vec<Result<Option<SPara>, ()>>> =
        slides.iter().map(|s| twins(&s.tree, &s.paras)).collect();
    let twin_of = |si: usize, n: bool, pi: usize| if n { &Ok(None) } else { &slide_twins[si][pi] };
    let eligible: Vec<bool> = cands
        .iter()
        .map(|&(si, n, pi)| {
            let p = para_of(si, n, pi).1;
            p.style.is_none()
                && p.text.trim().chars().count() >= MIN_CITABLE_CHARS
                && twin_of(si, n, pi).is_ok()
        })
        .collect();

    let existing: Vec<String> = refs_at
        .map(|si| {
            slides[si]
                .paras
                .iter()
                .filter(|p| p.style != Some("Title"))
                .map(|p| p.text.clone())
                .collect()
        })
        .unwrap_or_default();
    let cites = prepare(&eligible, &existing, opts);
    let chosen = &cites.plan;

    let mut edits: Vec<Vec<Edit>> = vec![Vec::new(); slides.len()];
    let mut note_edits: Vec<Vec<Edit>> = vec![Vec::new(); slides.len()];
    for (ci, (&(si, n, pi), works)) in cands.iter().zip(chosen).enumerate() {
        let (tree, p) = para_of(si, n, pi);
        for (anc, citation) in insertions(&p.text, works, &cites, opts, ci as u64) {
            let mut e = citation_edits(tree, p, anc, &citation);
            if let Ok(Some(twin)) = twin_of(si, n, pi) {
                e.extend(citation_edits(tree, twin, anc, &citation));
            }
            if n {
                note_edits[si].extend(e);
            } else {
                edits[si].extend(e);
            }
        }
    }

    let refs = &cites.refs;
    let st = stats(chosen, refs.len());

    let mut changed: HashMap<usize, Vec<u8>> = HashMap::new();
    let mut added: Vec<(String, Vec<u8>)> = Vec::new();
    let pres = Tree::parse(&deck.pres_src, main)?;
    let g = {
        let (cx, cy) = slide_size(&pres);
        geometry(cx, cy)
    };

    if !refs.is_empty() {
        match refs_at {
            Some(si) => edits[si].push(refs_on_slide(&slides[si], &g, refs)?),
            None => add_slide(
                &mut pkg,
                &deck,
                &pres,
                &g,
                refs,
                main,
                &mut changed,
                &mut added,
            )?,
        }
    }

    for (si, e) in edits.into_iter().enumerate() {
        if e.is_empty() {
            continue;
        }
        let out = apply(&srcs[si], e)?;
        let idx = pkg.find(&deck.slides[si].part).ok_or_else(|| {
            EngineError::Corrupt(format!(
                "The slide part {} is missing.",
                deck.slides[si].part
            ))
        })?;
        changed.insert(idx, out.into_bytes());
    }

    for (si, e) in note_edits.into_iter().enumerate() {
        let Some((part, src)) = &notes[si] else {
            continue;
        };
        if e.is_empty() {
            continue;
        }
        let out = apply(src, e)?;
        let idx = pkg
            .find(part)
            .ok_or_else(|| EngineError::Corrupt(format!("The notes part {part} is missing.")))?;
        changed.insert(idx, out.into_bytes());
    }

    if changed.is_empty() && added.is_empty() {
        return Ok(Cited {
            bytes: pkg.original().to_vec(),
            stats: st,
        });
    }
    let bytes = pkg.rewrite(changed, added)?;
    Ok(Cited { bytes, stats: st })
}

/// The references added to the deck's own references slide: as paragraphs after its
/// last entry, in that entry's look, or in a text box of their own when the slide has
/// only a title.
fn refs_on_slide(s: &LoadedSlide<'_>, g: &Geometry, refs: &[String]) -> Result<Edit, EngineError> {
    let t = &s.tree;
    let last = s.paras.iter().rev().find(|p| p.style != Some("Title"));
    match last {
        Some(p) => {
            let px = t.elems[p.elem].prefix().to_owned();
            let ppr = t.child(p.elem, Ns::A, "pPr").map_or("", |x| t.raw(x));
            let rpr = p
                .segs
                .iter()
                .rev()
                .find(|g| g.t.is_some())
                .map(|g| run_props(t, g.holder))
                .unwrap_or_default();
            let block: String = refs
                .iter()
                .map(|r| {
                    format!(
                        "<{px}p>{ppr}<{px}r>{rpr}<{px}t>{}</{px}t></{px}r></{px}p>",
                        escape_text(r)
                    )
                })
                .collect();
            Ok(Edit::insert(t.elems[p.elem].end, block))
        }
        None => {
            let tree_el = t
                .elems
                .iter()
                .position(|e| e.is(Ns::P, "spTree"))
                .ok_or_else(|| EngineError::Corrupt("A slide has no shape tree.".into()))?;
            let max_id = t
                .elems
                .iter()
                .filter(|e| e.is(Ns::P, "cNvPr"))
                .filter_map(|e| e.attr(Ns::None, "id").and_then(|v| v.parse::<u32>().ok()))
                .max()
                .unwrap_or(1);
            let p_px = t.elems[tree_el].prefix().to_owned();
            let (a_px, decl) = match t.prefix_for(tree_el, Ns::A) {
                Some(p) => (p, String::new()),
                None => ("a:".to_owned(), format!(" xmlns:a=\"{NS_A}\"")),
            };
            Ok(Edit::insert(
                t.elems[tree_el].end_start,
                textbox(max_id + 1, g, refs, &p_px, &a_px, &decl),
            ))
        }
    }
}

/// Each slide's notes part (name and source), if it has one.
fn notes_parts(
    pkg: &mut Package<'_>,
    deck: &Deck,
) -> Result<Vec<Option<(String, String)>>, EngineError> {
    let mut out = Vec::new();
    for s in &deck.slides {
        let rels_part = rels_part_for(&s.part);
        let part = match pkg.read_xml(&rels_part)? {
            Some(x) => parse_rels(&x, &rels_part, &s.part)?
                .into_iter()
                .find(|r| r.rel_type.ends_with("/notesSlide"))
                .and_then(|r| r.part),
            None => None,
        };
        let src = match &part {
            Some(p) => pkg.read_xml(p)?,
            None => None,
        };
        out.push(part.zip(src));
    }
    Ok(out)
}

/// The paragraphs of a notes part's notes text (the `body` placeholder), not its
/// slide image, header, footer, date or slide number.
fn notes_paras(tree: &Tree<'_>) -> Vec<SPara> {
    slide_paras(tree)
        .into_iter()
        .filter(|p| {
            let Some(sp) = tree
                .ancestors(p.elem)
                .find(|&x| tree.elems[x].is(Ns::P, "sp"))
            else {
                return false;
            };
            tree.child(sp, Ns::P, "nvSpPr")
                .and_then(|nv| tree.child(nv, Ns::P, "nvPr"))
                .and_then(|nv| tree.child(nv, Ns::P, "ph"))
                .is_some_and(|ph| tree.elems[ph].attr(Ns::None, "type") == Some("body"))
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn add_slide(
    pkg: &mut Package<'_>,
    deck: &Deck,
    pres: &Tree<'_>,
    g: &Geometry,
    refs: &[String],
    main: &str,
    changed: &mut HashMap<usize, Vec<u8>>,
    added: &mut Vec<(String, Vec<u8>)>,
) -> Result<(), EngineError> {
    let Some(last) = deck.slides.last() else {
        return Ok(());
    };
    let dir = dir_of(&last.part).to_owned();

    // A fresh part name next to the existing slides.
    let prefix = if dir.is_empty() {
        "slide".to_owned()
    } else {
        format!("{dir}/slide")
    };
    let max_n = pkg
        .names()
        .iter()
        .filter_map(|n| {
            let lower = n.to_ascii_lowercase();
            lower
                .strip_prefix(&prefix.to_ascii_lowercase())
                .and_then(|r| r.strip_suffix(".xml"))
                .and_then(|num| num.parse::<u32>().ok())
        })
        .max()
        .unwrap_or(0);
    let mut n = max_n + 1;
    while pkg.find(&format!("{prefix}{n}.xml")).is_some() {
        n += 1;
    }
    let part = format!("{prefix}{n}.xml");

    // Reuse the last slide's layout so the new slide matches the deck (or the
    // nearest earlier slide's, should the last one lack a layout).
    let mut layout = None;
    for s in deck.slides.iter().rev() {
        let rels_part = rels_part_for(&s.part);
        let Some(x) = pkg.read_xml(&rels_part)? else {
            continue;
        };
        layout = parse_rels(&x, &rels_part, &s.part)?
            .into_iter()
            .find(|r| r.rel_type.ends_with("/slideLayout"))
            .and_then(|r| r.part.map(|p| (p, r.rel_type)));
        if layout.is_some() {
            break;
        }
    }
    let layout = layout.ok_or_else(|| {
        EngineError::Unsupported("No slide has a layout to base a references slide on.".into())
    })?;
    let slide_rels = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\r\n<Relationships xmlns=\"{NS_REL}\"><Relationship Id=\"rId1\" Type=\"{}\" Target=\"{}\"/></Relationships>",
        escape_attr(&layout.1),
        escape_attr(&relative_target(&dir, &layout.0))
    );

    // presentation.xml.rels
    let rid = fresh_rel_id(&deck.rels);
    let rels_tree = Tree::parse(&deck.rels_src, &deck.rels_part)?;
    let root = &rels_tree.elems[rels_tree.root()];
    let rel_px = root.prefix();
    let rel = format!(
        "<{rel_px}Relationship Id=\"{rid}\" Type=\"{}\" Target=\"{}\"/>",
        escape_attr(&deck.slide_rel_type),
        escape_attr(&relative_target(dir_of(main), &part))
    );
    let new_rels = apply(&deck.rels_src, vec![Edit::insert(root.end_start, rel)])?;

    // presentation.xml: ids below 256 are reserved.
    let list = pres
        .child(pres.root(), Ns::P, "sldIdLst")
        .ok_or_else(|| EngineError::Corrupt("The presentation has no slide list.".into()))?;
    let id = deck
        .slides
        .iter()
        .map(|s| s.id)
        .max()
        .unwrap_or(255)
        .max(255)
        + 1;
    let le = &pres.elems[list];
    let p_px = le.prefix();
    let sld_id = match pres.prefix_for(list, Ns::R) {
        Some(r) => format!("<{p_px}sldId id=\"{id}\" {r}id=\"{rid}\"/>"),
        None => format!("<{p_px}sldId xmlns:r=\"{NS_R}\" id=\"{id}\" r:id=\"{rid}\"/>"),
    };
    let new_pres = apply(&deck.pres_src, vec![Edit::insert(le.end_start, sld_id)])?;

    // [Content_Types].xml
    let ct_src = pkg
        .read_xml("[Content_Types].xml")?
        .ok_or_else(|| EngineError::Corrupt("[Content_Types].xml vanished.".into()))?;
    let ct = Tree::parse(&ct_src, "[Content_Types].xml")?;
    let ct_root = &ct.elems[ct.root()];
    let mut ov = format!(
        "<{}Override PartName=\"/{}\" ContentType=\"{SLIDE_CT}\"/>",
        ct_root.prefix(),
        escape_attr(&part)
    );
    // A deck may type every part by Override and have no Default for `.rels`; the new
    // slide's relationships part must have a content type all the same.
    if super::package::content_type(&ct, &rels_part_for(&part)).is_none() {
        ov.push_str(&format!(
            "<{}Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>",
            ct_root.prefix()
        ));
    }
    let new_ct = apply(&ct_src, vec![Edit::insert(ct_root.end_start, ov)])?;

    for (name, data) in [
        ("[Content_Types].xml", new_ct),
        (deck.rels_part.as_str(), new_rels),
        (main, new_pres),
    ] {
        let idx = pkg
            .find(name)
            .ok_or_else(|| EngineError::Corrupt(format!("The part {name} is missing.")))?;
        changed.insert(idx, data.into_bytes());
    }
    added.push((part.clone(), new_slide_xml(g, refs).into_bytes()));
    added.push((rels_part_for(&part), slide_rels.into_bytes()));
    Ok(())
}
