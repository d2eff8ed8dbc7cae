//! The other ways a real citation service writes citations, each off by default:
//!
//! - [`CiteStyle::Existing`]: cite only from the document's own reference list and
//!   append nothing (the closest real analogue does this);
//! - [`Placement::Inside`]: citations go inside sentences, before a sentence's final
//!   full stop, in a sentence of the paragraph picked at random (not always the
//!   last), in varied author–year shapes: `(Smith, 2019)`, `(Smith & Jones, 2019)`,
//!   `(Smith et al., 2019)`, narrative `…, as Smith (2019) notes.` and grouped
//!   `(Smith, 2019; Lee, 2020)`;
//! - [`CiteShape`]: numeric `[3]` or bracketed `[Smith 2019]` instead of `(Smith, 2019)`;
//! - speaker notes of a .pptx ([`super::CiteOptions::notes`]), cited by `pptx.rs`;
//! - [`scrub_metadata`]: author, last author, company and manager blanked.
//!
//! With every knob at its default, [`insertions`] gives exactly what the engine
//! always wrote: one parenthetical at the end of the paragraph from [`WORKS`].

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::bibliography::WORKS;
use super::package::Package;
use super::xml::{Edit, Tree, apply};
use super::{Anchor, CiteOptions, EngineError, Rng, anchor, citation_text, new_references, plan};

/// Where the works cited come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum CiteStyle {
    /// The sandbox's own library of real works, with a reference list added or extended.
    #[default]
    #[serde(alias = "default")]
    Library,
    /// Only the document's own reference list; nothing is appended.
    Existing,
}

/// Where in a paragraph a citation goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// At the end of the paragraph, before its closing full stop.
    #[default]
    #[serde(alias = "default")]
    End,
    /// Inside a sentence of the paragraph (any of them), before its full stop.
    Inside,
}

/// How a citation is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum CiteShape {
    /// `(Smith, 2019)` (and, inside sentences, narrative `Smith (2019)`).
    #[default]
    #[serde(alias = "default")]
    AuthorYear,
    /// `[3]`: the entry's position in the reference list.
    Numeric,
    /// `[Smith 2019]`.
    Bracketed,
    /// `(Smith, 2019)`, and `(ibid.)` when a paragraph cites again the one work the
    /// paragraph cited before it did.
    Ibid,
}

/// One work a citation can point at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Source {
    /// "Smith", "Smith & Jones", "Smith et al."
    pub names: String,
    pub year: Option<String>,
    /// 1-based position in the document's reference list (numeric citations).
    pub number: usize,
}

impl Source {
    fn inner(&self) -> String {
        match &self.year {
            Some(y) => format!("{}, {y}", self.names),
            None => self.names.clone(),
        }
    }

    fn bracketed(&self) -> String {
        match &self.year {
            Some(y) => format!("{} {y}", self.names),
            None => self.names.clone(),
        }
    }

    /// Only with a year: ", as Kramer notes" would read as the writer's own words.
    fn narrative(&self) -> Option<String> {
        let names = self.names.replace(" & ", " and ");
        self.year
            .as_ref()
            .filter(|_| self.names != IBID)
            .map(|y| format!(", as {names} ({y}) notes"))
    }
}

const IBID: &str = "ibid.";

/// In the ibid shape, a chosen paragraph after one that cited a single work cites that
/// work again, half the time: which paragraphs do (their plan now that one work).
fn repeat_for_ibid(plan: &mut [Vec<usize>], seed: u64) -> Vec<bool> {
    let mut rng = Rng::new(seed ^ 0x1B1D);
    let mut previous: Option<usize> = None;
    let mut again = vec![false; plan.len()];
    for (i, works) in plan.iter_mut().enumerate().filter(|(_, w)| !w.is_empty()) {
        if let Some(w) = previous.filter(|_| rng.below(2) == 0) {
            *works = vec![w];
            again[i] = true;
        }
        previous = match works.as_slice() {
            [w] => Some(*w),
            _ => None,
        };
    }
    again
}

/// The repeats [`repeat_for_ibid`] chose, written `(ibid.)`: each points at an added
/// source standing for the work it repeats.
fn write_as_ibid(plan: &mut [Vec<usize>], again: &[bool], sources: &mut Vec<Source>) {
    for (works, _) in plan.iter_mut().zip(again).filter(|(_, a)| **a) {
        sources.push(Source {
            names: IBID.to_owned(),
            year: None,
            number: sources[works[0]].number,
        });
        *works = vec![sources.len() - 1];
    }
}

/// What a cite will insert: the works to cite in each candidate paragraph (indexes
/// into `sources`), and the references to append (none in the existing style).
pub(crate) struct Cites {
    pub sources: Vec<Source>,
    pub plan: Vec<Vec<usize>>,
    pub refs: Vec<String>,
}

/// Chooses what to cite where, from the library or from `existing` entries.
pub(crate) fn prepare(eligible: &[bool], existing: &[String], opts: &CiteOptions) -> Cites {
    match opts.style {
        CiteStyle::Library => {
            let mut chosen = plan(eligible, opts, WORKS.len());
            let again = if opts.shape == CiteShape::Ibid {
                repeat_for_ibid(&mut chosen, opts.seed)
            } else {
                Vec::new()
            };
            let refs = new_references(&chosen, existing);
            let sources = WORKS
                .iter()
                .map(|w| {
                    let doi = w.doi.to_lowercase();
                    let number = existing
                        .iter()
                        .position(|e| e.to_lowercase().contains(&doi))
                        .or_else(|| {
                            refs.iter()
                                .position(|r| *r == w.reference())
                                .map(|i| existing.len() + i)
                        })
                        .unwrap_or(0)
                        + 1;
                    let inner = w.in_text_inner();
                    let (names, year) = inner
                        .rsplit_once(", ")
                        .map_or((inner.clone(), None), |(n, y)| {
                            (n.to_owned(), Some(y.to_owned()))
                        });
                    Source {
                        names,
                        year,
                        number,
                    }
                })
                .collect();
            let mut cites = Cites {
                sources,
                plan: chosen,
                refs,
            };
            write_as_ibid(&mut cites.plan, &again, &mut cites.sources);
            cites
        }
        CiteStyle::Existing => {
            let sources: Vec<Source> = existing
                .iter()
                .enumerate()
                .map(|(i, e)| source_from_entry(e, i + 1))
                .collect();
            let mut chosen = plan(eligible, opts, sources.len());
            let mut sources = sources;
            if opts.shape == CiteShape::Ibid {
                let again = repeat_for_ibid(&mut chosen, opts.seed);
                write_as_ibid(&mut chosen, &again, &mut sources);
            }
            Cites {
                sources,
                plan: chosen,
                refs: Vec::new(),
            }
        }
    }
}

/// The year in an entry: the first `19xx`/`20xx` (with an optional letter) standing
/// alone, and the byte offset it starts at.
fn find_year(text: &str) -> Option<(usize, String)> {
    let b = text.as_bytes();
    let mut i = 0;
    while i + 4 <= b.len() {
        let four = &b[i..i + 4];
        let alone_before = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        if alone_before
            && (four.starts_with(b"19") || four.starts_with(b"20"))
            && four.iter().all(u8::is_ascii_digit)
        {
            let mut end = i + 4;
            if end < b.len() && b[end].is_ascii_lowercase() {
                end += 1;
            }
            if end == b.len() || !b[end].is_ascii_alphanumeric() {
                return Some((i, text[i..end].to_owned()));
            }
        }
        i += 1;
    }
    None
}

/// "J." "K.-L." "A. N.": initials, not a family name.
fn is_initials(token: &str) -> bool {
    let t = token.trim();
    !t.is_empty()
        && t.split_whitespace()
            .all(|w| w.ends_with('.') && w.chars().filter(|c| c.is_alphabetic()).count() <= 3)
}

/// A citation label from a reference-list entry, as the analogue builds it: the text
/// before the year holds the authors; their family names give `Smith`,
/// `Smith & Jones` or `Smith et al.`; no year gives `(Smith)`, no usable author
/// `(Source N)`.
pub(crate) fn source_from_entry(entry: &str, number: usize) -> Source {
    let mut text = entry.trim();
    // "[3] …" or "3. …" numbering.
    if let Some(rest) = text.strip_prefix('[')
        && let Some((n, after)) = rest.split_once(']')
        && n.chars().all(|c| c.is_ascii_digit())
    {
        text = after.trim_start();
    }
    let year = find_year(text);
    let authors = match &year {
        Some((at, _)) => &text[..*at],
        None => text.split(['(', '.']).next().unwrap_or(""),
    };
    let authors = authors.trim().trim_end_matches(['(', ' ', ',']).trim();
    let mut names: Vec<String> = authors
        .split([',', '&'])
        .flat_map(|s| s.split(" and "))
        .map(str::trim)
        .filter(|s| !s.is_empty() && !is_initials(s))
        .map(|s| s.trim_end_matches('.').trim().to_owned())
        .filter(|s| s.chars().next().is_some_and(char::is_alphabetic))
        .collect();
    names.retain(|n| n != "et al");
    let names = match names.as_slice() {
        [] => format!("Source {number}"),
        [a] => a.clone(),
        [a, b] => format!("{a} & {b}"),
        [a, ..] => format!("{a} et al."),
    };
    Source {
        names,
        year: year.map(|(_, y)| y),
        number,
    }
}

/// One citation group as written: " (A, 2019; B, 2020)", " [3, 5]" or " [A 2019]".
fn group(works: &[usize], cites: &Cites, shape: CiteShape) -> String {
    let mut ws: Vec<&Source> = works.iter().map(|&i| &cites.sources[i]).collect();
    match shape {
        CiteShape::Numeric => {
            let mut n: Vec<usize> = ws.iter().map(|s| s.number).collect();
            n.sort_unstable();
            n.dedup();
            let n: Vec<String> = n.iter().map(usize::to_string).collect();
            format!(" [{}]", n.join(", "))
        }
        CiteShape::AuthorYear | CiteShape::Bracketed | CiteShape::Ibid => {
            ws.sort_by(|a, b| {
                a.names
                    .to_lowercase()
                    .cmp(&b.names.to_lowercase())
                    .then(a.year.cmp(&b.year))
            });
            if shape == CiteShape::Bracketed {
                let inner: Vec<String> = ws.iter().map(|s| s.bracketed()).collect();
                format!(" [{}]", inner.join("; "))
            } else {
                let inner: Vec<String> = ws.iter().map(|s| s.inner()).collect();
                format!(" ({})", inner.join("; "))
            }
        }
    }
}

/// Sentence ends in `text`: the char index of the first of each closing `.`/`!`/`?`
/// run that is followed (after closing quotes or brackets) by whitespace or the end,
/// with the number of words in the sentence it closes.
fn sentence_ends(text: &str) -> Vec<(usize, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut sentence_start = 0;
    let mut i = 0;
    while i < chars.len() {
        if matches!(chars[i], '.' | '!' | '?') {
            let first = i;
            let mut j = i;
            while j < chars.len() && matches!(chars[j], '.' | '!' | '?') {
                j += 1;
            }
            let mut k = j;
            while k < chars.len() && matches!(chars[k], '"' | '\'' | '”' | '’' | ')' | ']') {
                k += 1;
            }
            if k == chars.len() || chars[k].is_whitespace() {
                let words = chars[sentence_start..first]
                    .iter()
                    .collect::<String>()
                    .split_whitespace()
                    .count();
                // "e.g. x" or "al. 2019" are not sentence ends worth a citation.
                if first > 0 && words > 0 {
                    out.push((first, words));
                }
                sentence_start = k;
            }
            i = k.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// Where the citations of one paragraph go, and their text. `salt` tells the
/// paragraphs apart so each gets its own draws.
pub(crate) fn insertions(
    text: &str,
    works: &[usize],
    cites: &Cites,
    opts: &CiteOptions,
    salt: u64,
) -> Vec<(Anchor, String)> {
    insertions_avoiding(text, works, cites, opts, salt, &[])
}

/// The char index where the sentence holding the split point `at` begins.
fn sentence_start(text: &str, at: usize) -> usize {
    sentence_ends(text)
        .iter()
        .map(|(end, _)| end + 1)
        .filter(|&s| s < at)
        .max()
        .unwrap_or(0)
}

/// Whether a citation split in at `at` would join a sentence that already holds one of
/// the `cited` char ranges: a careful writer does not cite a sentence twice.
pub(crate) fn sentence_is_cited(text: &str, at: usize, cited: &[(usize, usize)]) -> bool {
    let from = sentence_start(text, at);
    cited.iter().any(|&(s, e)| s < at && e > from)
}

/// Whether [`insertions_avoiding`] finds a place in `text` outside the `cited` sentences.
pub(crate) fn has_free_sentence(text: &str, opts: &CiteOptions, cited: &[(usize, usize)]) -> bool {
    let free = |at: usize| !sentence_is_cited(text, at, cited);
    match anchor(text) {
        None => false,
        Some(_) if cited.is_empty() => true,
        Some(a) if opts.placement == Placement::End => free(a.split()),
        Some(a) => free(a.split()) || sentence_ends(text).iter().any(|&(at, _)| free(at)),
    }
}

/// [`insertions`], never into a sentence holding one of the `cited` char ranges (a
/// citation the document already has).
pub(crate) fn insertions_avoiding(
    text: &str,
    works: &[usize],
    cites: &Cites,
    opts: &CiteOptions,
    salt: u64,
    cited: &[(usize, usize)],
) -> Vec<(Anchor, String)> {
    if works.is_empty() || !has_free_sentence(text, opts, cited) {
        return Vec::new();
    }
    let free = |at: usize| !sentence_is_cited(text, at, cited);
    if opts.style == CiteStyle::Library
        && opts.placement == Placement::End
        && opts.shape == CiteShape::AuthorYear
    {
        // What the sandbox has always written.
        return anchor(text)
            .map(|a| vec![(a, citation_text(works))])
            .unwrap_or_default();
    }
    let whole = |works: &[usize]| group(works, cites, opts.shape);
    if opts.placement == Placement::End {
        return anchor(text)
            .map(|a| vec![(a, whole(works))])
            .unwrap_or_default();
    }
    let mut rng = Rng::new(opts.seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5EED);
    let ends = sentence_ends(text);
    let mut slots: Vec<usize> = ends
        .iter()
        .filter(|(_, words)| *words >= 4)
        .map(|(at, _)| *at)
        .collect();
    if slots.is_empty() {
        slots = ends.iter().map(|(at, _)| *at).collect();
    }
    // The analogue leaves the opening sentence of a longer paragraph alone.
    if slots.len() > 2 {
        slots.remove(0);
    }
    slots.retain(|&at| free(at));
    if slots.is_empty() {
        slots = ends
            .iter()
            .map(|(at, _)| *at)
            .filter(|&at| free(at))
            .collect();
    }
    if slots.is_empty() {
        return anchor(text)
            .map(|a| vec![(a, whole(works))])
            .unwrap_or_default();
    }
    let single = |w: usize, rng: &mut Rng| {
        let narrate =
            matches!(opts.shape, CiteShape::AuthorYear | CiteShape::Ibid) && rng.below(4) == 0;
        match cites.sources[w].narrative() {
            Some(n) if narrate => n,
            _ => whole(&[w]),
        }
    };
    let spread = works.len() > 1 && slots.len() >= works.len() && rng.below(2) == 0;
    if !spread {
        let at = slots[rng.below(slots.len() as u64) as usize];
        let text = if works.len() == 1 {
            single(works[0], &mut rng)
        } else {
            whole(works)
        };
        return vec![(Anchor::Before(at), text)];
    }
    // Distinct sentences, one work each.
    let mut pool = slots.clone();
    let mut out = Vec::new();
    for &w in works {
        let i = rng.below(pool.len() as u64) as usize;
        let at = pool.swap_remove(i);
        out.push((Anchor::Before(at), single(w, &mut rng)));
    }
    out.sort_by_key(|(a, _)| a.split());
    out
}

/// Blanks `dc:creator` and `cp:lastModifiedBy` in `docProps/core.xml` and `Company`
/// and `Manager` in `docProps/app.xml`; every other entry is copied raw.
pub fn scrub_metadata(bytes: &[u8]) -> Result<Vec<u8>, EngineError> {
    let mut pkg = Package::open(bytes)?;
    let mut changed = HashMap::new();
    for (part, fields) in [
        ("docProps/core.xml", &["creator", "lastModifiedBy"][..]),
        ("docProps/app.xml", &["Company", "Manager"][..]),
    ] {
        let Some(src) = pkg.read_xml(part)? else {
            continue;
        };
        let tree = Tree::parse(&src, part)?;
        let edits: Vec<Edit> = tree
            .elems
            .iter()
            .filter(|e| fields.contains(&e.local.as_str()) && e.end_start > e.start_end)
            .map(|e| Edit::replace(e.start_end, e.end_start, String::new()))
            .collect();
        if edits.is_empty() {
            continue;
        }
        let out = apply(&src, edits)?;
        if let Some(idx) = pkg.find(part) {
            changed.insert(idx, out.into_bytes());
        }
    }
    if changed.is_empty() {
        return Ok(bytes.to_vec());
    }
    pkg.rewrite(changed, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_from_entries() {
        let l = |e: &str| source_from_entry(e, 1).inner();
        assert_eq!(
            l("Buzan, B. (2010). People, states and fear. ECPR."),
            "Buzan, 2010"
        );
        assert_eq!(
            l("Smith, J., & Jones, K. (2019a). A title. Journal."),
            "Smith & Jones, 2019a"
        );
        assert_eq!(
            l("Lee, A., Park, B., & Kim, C. (2020). Title."),
            "Lee et al., 2020"
        );
        assert_eq!(
            l("World Health Organization. (2020). Report."),
            "World Health Organization, 2020"
        );
        assert_eq!(l("Kramer. Untitled notes."), "Kramer");
        assert_eq!(l("(n.d.)"), "Source 1");
    }

    #[test]
    fn sentence_ends_skip_inner_dots() {
        let t = "First one here. Second sentence is here (see 3.5) now! Third.";
        let ends: Vec<usize> = sentence_ends(t).iter().map(|e| e.0).collect();
        assert_eq!(ends, vec![14, 53, 60]);
    }
}
