//! Word documents: paragraphs of the main document part, citations spliced in as
//! new runs, and a reference list added or extended.

use std::collections::HashMap;

use super::package::{Package, parse_rels, rels_part_for};
use super::style::{has_free_sentence, insertions_avoiding, prepare};
use super::xml::{Edit, Elem, Ns, TextAt, Tree, apply, decode, escape_text};
use super::{
    Anchor, CiteOptions, Cited, EngineError, Kind, MIN_CITABLE_CHARS, Parsed, is_heading_style,
    is_references_heading, is_title_like_style, stats,
};

/// A piece of a paragraph's text and where it came from.
struct Seg {
    /// Char index in the paragraph text.
    start: usize,
    /// Length in chars.
    len: usize,
    /// The `w:t` holding the text; `None` for `w:tab`, `w:br` and the like.
    t: Option<usize>,
    run: usize,
    /// Absolute byte offset in the part of each char, plus the end.
    offs: Vec<usize>,
    /// False when the `w:t` holds markup (CDATA, comments) a split could break.
    splittable: bool,
}

impl Seg {
    fn end(&self) -> usize {
        self.start + self.len
    }
}

struct Para {
    elem: usize,
    text: String,
    /// `text`'s length in chars, kept so long paragraphs stay linear to build.
    chars: usize,
    style: Option<String>,
    segs: Vec<Seg>,
    runs: Vec<usize>,
    /// Inside a field result that began in an earlier paragraph (TOC, bibliography, index).
    in_field: bool,
    /// Field nesting depth at the paragraph's start.
    depth: u32,
    /// Inside a content control Word refills on open (bound to custom XML) or
    /// one still showing its placeholder prompt.
    bound: bool,
    /// In an `mc:Fallback`: the copy of `mc:Choice` content that older readers show.
    copy: bool,
    /// The `mc:Fallback` copy of this paragraph ([`Doc::copies`]), which gets the same
    /// citations; `None` outside alternate content.
    twin: Option<usize>,
    /// In alternate content whose fallback copy could not be matched paragraph for
    /// paragraph: citing one copy only would make them disagree.
    unpaired: bool,
    /// A field is still open where the paragraph ends (its text runs into a field result).
    open_at_end: bool,
    /// Holds a list Word generates (a table of contents or figures, an index).
    generated: bool,
    /// Char ranges of citations the document already has here (citation fields and
    /// citation content controls).
    cited: Vec<(usize, usize)>,
}

/// A complex field being read.
struct OpenField {
    instr: String,
    /// The paragraph (builder index) and char where the field began.
    para: Option<usize>,
    at: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldKind {
    /// Word's `CITATION`, Zotero's `ADDIN ZOTERO_ITEM`, Mendeley's `ADDIN CSL_CITATION`,
    /// EndNote's `ADDIN EN.CITE`.
    Citation,
    /// Word's `BIBLIOGRAPHY`, Zotero's `ADDIN ZOTERO_BIBL`, Mendeley's
    /// `ADDIN Mendeley Bibliography CSL_BIBLIOGRAPHY`, EndNote's `ADDIN EN.REFLIST`.
    Bibliography,
    /// `TOC` (contents, figures), `TOA` (authorities), `INDEX`: lists Word rebuilds.
    Generated,
    Other,
}

fn field_kind(instr: &str) -> FieldKind {
    // Only the words before a reference manager's JSON: a title in it may say anything.
    let head = instr.split('{').next().unwrap_or("").to_ascii_uppercase();
    let mut words = head.split_whitespace();
    match words.next() {
        Some("CITATION") => FieldKind::Citation,
        Some("BIBLIOGRAPHY") => FieldKind::Bibliography,
        Some("TOC" | "TOA" | "INDEX") => FieldKind::Generated,
        Some("ADDIN") => {
            let rest: Vec<&str> = words.collect();
            if rest
                .iter()
                .any(|w| w.contains("BIBL") || *w == "EN.REFLIST")
            {
                FieldKind::Bibliography
            } else if rest
                .iter()
                .any(|w| w.contains("CITATION") || *w == "ZOTERO_ITEM" || *w == "EN.CITE")
            {
                FieldKind::Citation
            } else {
                FieldKind::Other
            }
        }
        _ => FieldKind::Other,
    }
}

/// A bibliography the document already has: a field's result or a content control.
struct Bibliography {
    /// First and last paragraph elements it spans.
    first: usize,
    last: usize,
    /// Where entries added to it go: after the field's end (a reference manager
    /// rewrites the result), or at the end of the content control.
    insert_at: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Body,
    RefsHeading,
    RefEntry,
}

struct Doc<'a> {
    tree: Tree<'a>,
    body: usize,
    /// Non-empty paragraphs in document order.
    paras: Vec<Para>,
    roles: Vec<Role>,
    fld_before: Vec<u32>,
    fld_after: Vec<u32>,
    /// `mc:Fallback` copies of paragraphs, edited alongside their originals.
    copies: Vec<Para>,
    /// Where new references go when the document has a bibliography of its own.
    bib_insert_at: Option<usize>,
}

mod reading;
use reading::{field_ended, push_text, roles_of};

const W_NS: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

fn w(e: &Elem, local: &str) -> bool {
    e.is(Ns::W, local)
}

impl<'a> Doc<'a> {
    fn load(src: &'a str, part: &str) -> Result<Self, EngineError> {
        let tree = Tree::parse(src, part)?;
        let root = tree.root();
        if !w(&tree.elems[root], "document") {
            return Err(EngineError::Corrupt(
                "The Word document's main part is not a w:document.".into(),
            ));
        }
        let body = tree
            .child(root, Ns::W, "body")
            .ok_or_else(|| EngineError::Corrupt("The Word document has no body.".into()))?;

        let n = tree.elems.len();
        let mut excluded = vec![false; n];
        let mut copy = vec![false; n];
        // Fields open in the document's text and in fallback copies, read apart: a
        // copy repeats the fields of its original.
        let mut open: [Vec<OpenField>; 2] = [Vec::new(), Vec::new()];
        let mut bibs: Vec<Bibliography> = Vec::new();
        let mut para_of: Vec<Option<usize>> = vec![None; n];
        let mut bound_below = vec![false; n];
        let mut slot: Vec<Option<usize>> = vec![None; n];
        let mut fld_before = vec![0u32; n];
        let mut fld_after = vec![0u32; n];
        let mut builders: Vec<Para> = Vec::new();

        for i in 0..n {
            let e = &tree.elems[i];
            let parent = e.parent;
            // Deleted and moved-away text is not part of the document.
            excluded[i] = parent.is_some_and(|p| excluded[p]) || w(e, "del") || w(e, "moveFrom");
            if excluded[i] {
                continue;
            }
            // The mc:Fallback branch repeats mc:Choice content for old readers.
            copy[i] = parent.is_some_and(|p| copy[p]) || e.is(Ns::Mc, "Fallback");
            let fields = &mut open[usize::from(copy[i])];
            let depth = fields.len() as u32;
            // Content controls bound to custom XML are refilled by Word on open, and
            // ones showing placeholder text hold prompts, not prose.
            bound_below[i] = parent.is_some_and(|p| bound_below[p])
                || (w(e, "sdtContent")
                    && parent
                        .and_then(|p| tree.child(p, Ns::W, "sdtPr"))
                        .is_some_and(|pr| {
                            tree.child(pr, Ns::W, "dataBinding").is_some()
                                || tree.child(pr, Ns::W, "showingPlcHdr").is_some()
                        }));
            para_of[i] = parent.and_then(|p| {
                if w(&tree.elems[p], "p") {
                    Some(p)
                } else {
                    para_of[p]
                }
            });
            let parent_is_run = parent.is_some_and(|p| w(&tree.elems[p], "r"));
            if w(e, "p") {
                let style = tree
                    .child(i, Ns::W, "pPr")
                    .and_then(|ppr| tree.child(ppr, Ns::W, "pStyle"))
                    .and_then(|s| tree.elems[s].attr(Ns::W, "val"))
                    .map(str::to_owned);
                let bound = bound_below[i];
                slot[i] = Some(builders.len());
                builders.push(Para {
                    elem: i,
                    text: String::new(),
                    chars: 0,
                    style,
                    segs: Vec::new(),
                    runs: Vec::new(),
                    in_field: depth > 0,
                    depth,
                    bound,
                    copy: copy[i],
                    twin: None,
                    unpaired: false,
                    open_at_end: false,
                    generated: false,
                    cited: Vec::new(),
                });
            } else if w(e, "r") {
                fld_before[i] = depth;
                fld_after[i] = depth;
                if let Some(b) = para_of[i].and_then(|p| slot[p]) {
                    builders[b].runs.push(i);
                }
            } else if w(e, "fldChar") && parent_is_run {
                let b = para_of[i].and_then(|p| slot[p]);
                let at = b.map_or(0, |b| builders[b].chars);
                match e.attr(Ns::W, "fldCharType") {
                    Some("begin") => fields.push(OpenField {
                        instr: String::new(),
                        para: b,
                        at,
                    }),
                    Some("end") => {
                        if let Some(f) = fields.pop() {
                            field_ended(&tree, f, (b, at), copy[i], &mut builders, &mut bibs);
                        }
                    }
                    _ => {}
                }
                if let Some(p) = parent {
                    fld_after[p] = fields.len() as u32;
                }
            } else if w(e, "instrText") && parent_is_run {
                if let Some(f) = fields.last_mut() {
                    f.instr.push_str(&decode(tree.inner(i)).0);
                }
            } else if parent_is_run {
                let piece = match e.local.as_str() {
                    _ if e.ns != Ns::W => None,
                    "t" => Some(None),
                    "tab" | "ptab" => Some(Some("\t")),
                    "br" | "cr" => Some(Some("\n")),
                    "noBreakHyphen" => Some(Some("-")),
                    _ => None,
                };
                let (Some(piece), Some(b)) = (piece, para_of[i].and_then(|p| slot[p])) else {
                    continue;
                };
                push_text(&tree, i, piece, &mut builders[b]);
            }
        }

        for p in &mut builders {
            p.open_at_end = p.runs.last().is_some_and(|&r| fld_after[r] > 0);
        }
        Self::simple_fields_and_controls(
            &tree,
            &excluded,
            &copy,
            &para_of,
            &slot,
            &mut builders,
            &mut bibs,
        );

        let (copies, mut paras): (Vec<Para>, Vec<Para>) = builders
            .into_iter()
            .filter(|p| !p.text.trim().is_empty())
            .partition(|p| p.copy);
        pair_copies(&tree, &excluded, &mut paras, &copies);

        let (roles, bib_insert_at) = roles_of(&tree, body, &paras, &bibs);

        Ok(Doc {
            tree,
            body,
            paras,
            roles,
            fld_before,
            fld_after,
            copies,
            bib_insert_at,
        })
    }

    /// Citations and bibliographies written as simple fields (`w:fldSimple`) and as
    /// content controls (`w:citation`, `w:bibliography`, the Bibliographies gallery).
    #[allow(clippy::too_many_arguments)]
    fn simple_fields_and_controls(
        tree: &Tree<'_>,
        excluded: &[bool],
        copy: &[bool],
        para_of: &[Option<usize>],
        slot: &[Option<usize>],
        builders: &mut [Para],
        bibs: &mut Vec<Bibliography>,
    ) {
        for (i, e) in tree.elems.iter().enumerate() {
            if excluded[i] {
                continue;
            }
            let kind = if w(e, "fldSimple") {
                field_kind(e.attr(Ns::W, "instr").unwrap_or(""))
            } else if w(e, "sdt") {
                let pr = tree.child(i, Ns::W, "sdtPr");
                let has = |name: &str| pr.and_then(|pr| tree.child(pr, Ns::W, name)).is_some();
                let gallery = pr
                    .and_then(|pr| tree.child(pr, Ns::W, "docPartObj"))
                    .and_then(|o| tree.child(o, Ns::W, "docPartGallery"))
                    .and_then(|g| tree.elems[g].attr(Ns::W, "val"));
                if has("citation") {
                    FieldKind::Citation
                } else if has("bibliography") || gallery == Some("Bibliographies") {
                    FieldKind::Bibliography
                } else {
                    FieldKind::Other
                }
            } else {
                continue;
            };
            match kind {
                FieldKind::Citation => {
                    let Some(b) = para_of[i].and_then(|p| slot[p]) else {
                        continue;
                    };
                    let p = &mut builders[b];
                    let (lo, hi) = p
                        .segs
                        .iter()
                        .filter(|g| tree.is_within(g.run, i))
                        .fold((usize::MAX, 0), |(lo, hi), g| {
                            (lo.min(g.start), hi.max(g.end()))
                        });
                    if lo < hi {
                        p.cited.push((lo, hi));
                    }
                }
                FieldKind::Generated => {
                    if let Some(b) = para_of[i].and_then(|p| slot[p]) {
                        builders[b].generated = true;
                    }
                }
                FieldKind::Bibliography if !copy[i] => {
                    let inner: Vec<usize> = builders
                        .iter()
                        .filter(|p| tree.is_within(p.elem, i))
                        .map(|p| p.elem)
                        .collect();
                    let bib = match (inner.first(), inner.last(), para_of[i]) {
                        (Some(&first), Some(&last), _) => Bibliography {
                            first,
                            last,
                            insert_at: tree
                                .child(i, Ns::W, "sdtContent")
                                .map_or(tree.elems[i].end, |c| tree.elems[c].end_start),
                        },
                        (_, _, Some(p)) => Bibliography {
                            first: p,
                            last: p,
                            insert_at: tree.elems[p].end,
                        },
                        _ => continue,
                    };
                    bibs.push(bib);
                }
                _ => {}
            }
        }
    }

    fn parsed(&self) -> Parsed {
        let mut parsed = Parsed::new(Kind::Docx);
        for (p, role) in self.paras.iter().zip(&self.roles) {
            match role {
                Role::Body => parsed.body(p.text.clone(), None, p.style.clone()),
                Role::RefsHeading => parsed.references_heading = Some(p.text.trim().to_owned()),
                Role::RefEntry => parsed.reference(&p.text),
            }
        }
        parsed
    }

    fn eligible(&self, p: &Para, opts: &CiteOptions) -> bool {
        !is_title_like_style(p.style.as_deref())
            && !p.in_field
            && !p.open_at_end
            && !p.generated
            && !p.unpaired
            && !p.bound
            && has_free_sentence(&p.text, opts, &p.cited)
            && p.text.trim().chars().count() >= MIN_CITABLE_CHARS
    }

    /// A run's properties fit for a new run: no tracked formatting change (its
    /// revision id must stay unique), no hyperlink character style, and, when the
    /// citation lands beside a link, none of the link's colour or underline.
    fn run_props(&self, run: usize, beside_link: bool) -> String {
        let t = &self.tree;
        let Some(rpr) = t.child(run, Ns::W, "rPr") else {
            return String::new();
        };
        let out = t.raw_without(rpr, |e| {
            w(e, "rPrChange")
                || (beside_link && (w(e, "rStyle") || w(e, "color") || w(e, "u")))
                || (w(e, "rStyle")
                    && e.attr(Ns::W, "val")
                        .is_some_and(|v| v.to_ascii_lowercase().contains("hyperlink")))
        });
        if out.ends_with("/>") && !out.contains("><") {
            String::new()
        } else {
            out
        }
    }

    fn run_props_for_split(&self, run: usize) -> String {
        let t = &self.tree;
        match t.child(run, Ns::W, "rPr") {
            Some(rpr) => t.raw_without(rpr, |e| w(e, "rPrChange")),
            None => String::new(),
        }
    }

    /// Edits that put `citation` into paragraph `p` at `a`.
    fn citation_edits(&self, p: &Para, a: Anchor, citation: &str) -> Vec<Edit> {
        let t = &self.tree;
        let px = t.elems[p.elem].prefix().to_owned();
        let ci = a.char_index();
        let s = a.split();
        let Some(seg) = p.segs.iter().find(|g| ci >= g.start && ci < g.end()) else {
            return Vec::new();
        };
        let run = seg.run;
        let new_run = |beside_link: bool| {
            format!(
                "<{px}r>{}<{px}t xml:space=\"preserve\">{}</{px}t></{px}r>",
                self.run_props(run, beside_link),
                escape_text(citation)
            )
        };

        // Inside a field that began in this paragraph (a HYPERLINK or CITATION
        // result): go after the run that ends it, or Word drops the citation
        // when it updates the field.
        if self.fld_before[run] > p.depth
            && let Some(pos) = p.runs.iter().position(|&r| r == run)
            && let Some(&end_run) = p.runs[pos..]
                .iter()
                .find(|&&r| self.fld_after[r] <= p.depth)
        {
            let mut target = end_run;
            let mut chain: Vec<usize> = t.ancestors(end_run).take_while(|&x| x != p.elem).collect();
            chain.reverse();
            if let Some(&c) = chain.iter().find(|&&c| unsplittable(&t.elems[c])) {
                target = c;
            }
            return vec![Edit::insert(t.elems[target].end, new_run(true))];
        }

        let mut chain: Vec<usize> = t.ancestors(run).take_while(|&x| x != p.elem).collect();
        chain.reverse();
        for c in chain {
            let (cs, ce) = p
                .segs
                .iter()
                .filter(|g| t.is_within(g.run, c))
                .fold((usize::MAX, 0), |(lo, hi), g| {
                    (lo.min(g.start), hi.max(g.end()))
                });
            let ce_ = &t.elems[c];
            let link = w(ce_, "hyperlink") || w(ce_, "fldSimple");
            if s <= cs {
                return vec![Edit::insert(ce_.start, new_run(link))];
            }
            if s >= ce || unsplittable(ce_) {
                return vec![Edit::insert(ce_.end, new_run(link))];
            }
        }

        let r = &t.elems[run];
        let (Some(te), true) = (seg.t, seg.splittable) else {
            let at = if s <= seg.start { r.start } else { r.end };
            return vec![Edit::insert(at, new_run(false))];
        };
        let k = s - seg.start;
        let content: Vec<usize> = r
            .children
            .iter()
            .copied()
            .filter(|&c| !w(&t.elems[c], "rPr"))
            .collect();
        let tel = &t.elems[te];
        let new_run = new_run(false);
        if k == 0 && content.first() == Some(&te) {
            return vec![Edit::insert(r.start, new_run)];
        }
        if k == seg.len && content.last() == Some(&te) {
            return vec![Edit::insert(r.end, new_run)];
        }
        let reopen = format!("{}{}", t.start_tag(run), self.run_props_for_split(run));
        if k == 0 || k == seg.len {
            let at = if k == 0 { tel.start } else { tel.end };
            return vec![Edit::insert(at, format!("</{px}r>{new_run}{reopen}"))];
        }
        let tq = &tel.qname;
        let mut edits = vec![Edit::insert(
            seg.offs[k],
            format!("</{tq}></{px}r>{new_run}{reopen}<{tq} xml:space=\"preserve\">"),
        )];
        // The first half may now end in a space, which needs xml:space to survive.
        if !tel.attrs.iter().any(|a| a.qname == "xml:space") {
            edits.push(Edit::replace(
                tel.start,
                tel.start_end,
                format!("<{tq} xml:space=\"preserve\">"),
            ));
        }
        edits
    }
}

/// The document's last bibliography, with the fields and controls nested in or around
/// it taken as one: entries go after the outermost.
fn last_bibliography(tree: &Tree<'_>, bibs: &[Bibliography]) -> Option<Bibliography> {
    let span = |b: &Bibliography| (tree.elems[b.first].start, tree.elems[b.last].end);
    let last = bibs.iter().max_by_key(|b| span(b).1)?;
    let (mut lo, mut hi) = span(last);
    let mut out = Bibliography {
        first: last.first,
        last: last.last,
        insert_at: last.insert_at,
    };
    for b in bibs {
        let (s, e) = span(b);
        if s < hi && e > lo {
            if s < lo {
                lo = s;
                out.first = b.first;
            }
            if e > hi {
                hi = e;
                out.last = b.last;
            }
            out.insert_at = out.insert_at.max(b.insert_at);
        }
    }
    Some(out)
}

/// Gives each paragraph of an `mc:Choice` its `mc:Fallback` copy, when the fallback
/// holds the same paragraphs in the same order; otherwise marks them unpaired.
fn pair_copies(tree: &Tree<'_>, excluded: &[bool], paras: &mut [Para], copies: &[Para]) {
    let mut handled = vec![false; paras.len()];
    let nearest_fallback = |elem: usize| {
        tree.ancestors(elem)
            .find(|&x| tree.elems[x].is(Ns::Mc, "Fallback"))
    };
    for (a, e) in tree.elems.iter().enumerate() {
        if !e.is(Ns::Mc, "AlternateContent") || excluded[a] || nearest_fallback(a).is_some() {
            continue;
        }
        let Some(choice) = tree.child(a, Ns::Mc, "Choice") else {
            continue;
        };
        let originals: Vec<usize> = (0..paras.len())
            .filter(|&i| !handled[i] && tree.is_within(paras[i].elem, choice))
            .collect();
        if originals.is_empty() {
            continue;
        }
        let fallback = tree.child(a, Ns::Mc, "Fallback");
        let twins: Vec<usize> = (0..copies.len())
            .filter(|&c| fallback.is_some() && nearest_fallback(copies[c].elem) == fallback)
            .collect();
        let same = fallback.is_none()
            || (twins.len() == originals.len()
                && originals
                    .iter()
                    .zip(&twins)
                    .all(|(&o, &c)| paras[o].text == copies[c].text));
        for (k, &o) in originals.iter().enumerate() {
            handled[o] = true;
            if fallback.is_none() {
                continue;
            }
            if same {
                paras[o].twin = Some(twins[k]);
            } else {
                paras[o].unpaired = true;
            }
        }
    }
}

/// Containers a run may not be split out of: the citation goes beside them.
fn unsplittable(e: &Elem) -> bool {
    e.ns == Ns::W
        && matches!(
            e.local.as_str(),
            "hyperlink" | "fldSimple" | "sdt" | "r" | "ruby"
        )
}

pub(crate) fn parse(pkg: &mut Package<'_>, main: &str) -> Result<Parsed, EngineError> {
    let src = read_main(pkg, main)?;
    Ok(Doc::load(&src, main)?.parsed())
}

fn read_main(pkg: &mut Package<'_>, main: &str) -> Result<String, EngineError> {
    pkg.read_xml(main)?.ok_or_else(|| {
        EngineError::Corrupt(format!(
            "The Word document's main part ({main}) is missing."
        ))
    })
}

/// Paragraph style ids defined in the styles part.
fn style_ids(pkg: &mut Package<'_>, main: &str) -> Result<Vec<String>, EngineError> {
    let rels_part = rels_part_for(main);
    let styles_part = match pkg.read_xml(&rels_part)? {
        Some(x) => parse_rels(&x, &rels_part, main)?
            .into_iter()
            .find(|r| r.rel_type.ends_with("/styles"))
            .and_then(|r| r.part),
        None => None,
    }
    .unwrap_or_else(|| "word/styles.xml".to_owned());
    let Some(xml) = pkg.read_xml(&styles_part)? else {
        return Ok(Vec::new());
    };
    let tree = Tree::parse(&xml, &styles_part)?;
    Ok(tree
        .children_named(tree.root(), Ns::W, "style")
        .filter_map(|s| tree.elems[s].attr(Ns::W, "styleId").map(str::to_owned))
        .collect())
}

pub(crate) fn cite(
    mut pkg: Package<'_>,
    main: &str,
    opts: &CiteOptions,
) -> Result<Cited, EngineError> {
    let src = read_main(&mut pkg, main)?;
    let doc = Doc::load(&src, main)?;
    let t = &doc.tree;

    let body_idx: Vec<usize> = (0..doc.paras.len())
        .filter(|&i| doc.roles[i] == Role::Body)
        .collect();
    let eligible: Vec<bool> = body_idx
        .iter()
        .map(|&i| doc.eligible(&doc.paras[i], opts))
        .collect();
    let existing: Vec<String> = doc
        .paras
        .iter()
        .zip(&doc.roles)
        .filter(|(_, r)| **r == Role::RefEntry)
        .map(|(p, _)| p.text.clone())
        .collect();
    let cites = prepare(&eligible, &existing, opts);
    let chosen = &cites.plan;

    let mut edits = Vec::new();
    for (&i, works) in body_idx.iter().zip(chosen) {
        let p = &doc.paras[i];
        for (a, citation) in insertions_avoiding(&p.text, works, &cites, opts, i as u64, &p.cited) {
            edits.extend(doc.citation_edits(p, a, &citation));
            if let Some(c) = p.twin {
                edits.extend(doc.citation_edits(&doc.copies[c], a, &citation));
            }
        }
    }

    let refs = &cites.refs;
    if !refs.is_empty() {
        let px = t.elems[doc.body].prefix().to_owned();
        // WordprocessingML attributes are always namespace-qualified, even in a part
        // that writes its elements in the default namespace.
        let (at, decl) = match t.prefix_for(doc.body, Ns::W) {
            Some(p) => (p, String::new()),
            None => ("w:".to_owned(), format!(" xmlns:w=\"{W_NS}\"")),
        };
        let heading = doc.roles.iter().position(|r| *r == Role::RefsHeading);
        let last_entry = doc.roles.iter().rposition(|r| *r == Role::RefEntry);
        let ids = if last_entry.is_none() {
            style_ids(&mut pkg, main)?
        } else {
            Vec::new()
        };
        let has = |id: &str| ids.iter().any(|s| s == id);
        let entry_ppr = match last_entry {
            Some(e) => match t.child(doc.paras[e].elem, Ns::W, "pPr") {
                Some(ppr) => t.raw_without(ppr, |e| {
                    e.ns == Ns::W
                        && matches!(
                            e.local.as_str(),
                            "sectPr"
                                | "pPrChange"
                                | "rPrChange"
                                | "ins"
                                | "del"
                                | "moveFrom"
                                | "moveTo"
                        )
                }),
                None => String::new(),
            },
            None if has("Bibliography") => {
                format!("<{px}pPr><{px}pStyle {at}val=\"Bibliography\"/></{px}pPr>")
            }
            // APA's hanging indent, half an inch.
            None => format!("<{px}pPr><{px}ind {at}left=\"720\" {at}hanging=\"720\"/></{px}pPr>"),
        };
        let mut block = String::new();
        let at = match (doc.bib_insert_at, last_entry, heading) {
            (Some(at), _, _) => at,
            (None, Some(i), _) | (None, None, Some(i)) => t.elems[doc.paras[i].elem].end,
            (None, None, None) => {
                if has("Heading1") {
                    block.push_str(&format!(
                        "<{px}p{decl}><{px}pPr><{px}pStyle {at}val=\"Heading1\"/></{px}pPr><{px}r><{px}t>References</{px}t></{px}r></{px}p>"
                    ));
                } else {
                    block.push_str(&format!(
                        "<{px}p{decl}><{px}pPr><{px}keepNext/></{px}pPr><{px}r><{px}rPr><{px}b/></{px}rPr><{px}t>References</{px}t></{px}r></{px}p>"
                    ));
                }
                let body = &t.elems[doc.body];
                match body.children.last() {
                    Some(&c) if w(&t.elems[c], "sectPr") => t.elems[c].start,
                    _ => body.end_start,
                }
            }
        };
        for r in refs {
            block.push_str(&format!(
                "<{px}p{decl}>{entry_ppr}<{px}r><{px}t xml:space=\"preserve\">{}</{px}t></{px}r></{px}p>",
                escape_text(r)
            ));
        }
        edits.push(Edit::insert(at, block));
    }

    let st = stats(chosen, refs.len());
    if edits.is_empty() {
        return Ok(Cited {
            bytes: pkg.original().to_vec(),
            stats: st,
        });
    }
    let out = apply(&src, edits)?;
    let idx = pkg
        .find(main)
        .ok_or_else(|| EngineError::Corrupt("The main part vanished.".into()))?;
    let bytes = pkg.rewrite(HashMap::from([(idx, out.into_bytes())]), Vec::new())?;
    Ok(Cited { bytes, stats: st })
}
