//! What citing changed, computed locally from the original and the cited result:
//! one cite request, and a summary we can trust whatever the cite answer claims.

use crate::citations::client::Parsed;
use crate::citations::documents::Paragraph;
use crate::citations::reader;
use crate::error::Result;
use serde::Serialize;
use ts_rs::TS;

/// A run of text in a changed paragraph; `inserted` runs are what citing added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct Segment {
    pub text: String,
    pub inserted: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct ChangedParagraph {
    pub index: u32,
    pub slide: Option<u32>,
    /// In the slide's speaker notes.
    pub notes: bool,
    pub before: String,
    pub after: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct CiteSummary {
    pub paragraphs_changed: u32,
    /// Every citation found in what citing added, wherever it stands in a paragraph.
    pub citations_inserted: u32,
    /// Of those, the ones in speaker notes.
    pub citations_in_notes: u32,
    pub references_added: u32,
    pub changes: Vec<ChangedParagraph>,
    /// The References entries citing added, as the cited document has them, in its order
    /// (those the original did not have).
    #[serde(default)]
    pub new_references: Vec<String>,
}

/// Compares what [`reader::read`] finds in the original and the cited document.
pub fn summarize_local(original: &[u8], cited: &[u8]) -> Result<CiteSummary> {
    Ok(compare_documents(
        &reader::read(original)?,
        &reader::read(cited)?,
    ))
}

/// [`summarize_local`] of two open files, reading only their zip directories and the
/// parts that hold text.
pub fn summarize_files(original: &std::fs::File, cited: &std::fs::File) -> Result<CiteSummary> {
    Ok(compare_documents(
        &reader::read_file(original)?,
        &reader::read_file(cited)?,
    ))
}

fn compare_documents(before: &reader::LocalDocument, after: &reader::LocalDocument) -> CiteSummary {
    compare_read(before.into(), after.into())
}

/// What one side of a comparison read, whether a document or an essay.
struct Read<'a> {
    paragraphs: &'a [Paragraph],
    references: &'a [String],
    heading: Option<&'a str>,
}

impl<'a> From<&'a reader::LocalDocument> for Read<'a> {
    fn from(d: &'a reader::LocalDocument) -> Self {
        Read {
            paragraphs: &d.paragraphs,
            references: &d.references,
            heading: d.references_heading.as_deref(),
        }
    }
}

impl<'a> From<&'a Essay> for Read<'a> {
    fn from(e: &'a Essay) -> Self {
        Read {
            paragraphs: &e.paragraphs,
            references: &e.references,
            heading: e.references_heading.as_deref(),
        }
    }
}

fn compare_read(before: Read<'_>, after: Read<'_>) -> CiteSummary {
    let mut s = compare(
        before.paragraphs,
        before.references,
        after.paragraphs,
        after.references,
    );
    compare_headings(
        &mut s,
        before.heading,
        after.heading,
        after.paragraphs.len(),
    );
    s
}

/// A References heading that gained a citation is still the heading (the reader finds
/// it whatever was added in brackets), and what it gained is a change like any other,
/// shown after the body.
fn compare_headings(s: &mut CiteSummary, before: Option<&str>, after: Option<&str>, at: usize) {
    let (Some(old), Some(new)) = (before, after) else {
        return;
    };
    if old == new {
        return;
    }
    let segments = diff(old, new);
    let found = inserted_citations(old, new, &segments);
    s.citations_inserted = s.citations_inserted.saturating_add(found);
    s.paragraphs_changed = s.paragraphs_changed.saturating_add(1);
    s.changes.push(ChangedParagraph {
        index: u32::try_from(at).unwrap_or(u32::MAX),
        slide: None,
        notes: false,
        before: old.to_owned(),
        after: segments,
    });
}

/// Compares an essay and its cited text, paragraph by paragraph (see [`read_essay`]).
pub fn summarize_text(original: &str, cited: &str) -> CiteSummary {
    compare_read((&read_essay(original)).into(), (&read_essay(cited)).into())
}

/// Compares two parse answers. Kept for callers that still have them; a cite's
/// summary comes from [`summarize_local`] or [`summarize_text`].
pub fn summarize(before: &Parsed, after: &Parsed) -> CiteSummary {
    compare(
        &before.paragraphs,
        &before.references,
        &after.paragraphs,
        &after.references,
    )
}

/// An essay read the way documents are: paragraphs separated by blank lines, and a
/// References section.
#[derive(Debug, Clone, PartialEq)]
pub struct Essay {
    pub paragraphs: Vec<Paragraph>,
    pub references_heading: Option<String>,
    pub references: Vec<String>,
}

/// Paragraphs are runs of non-blank lines. The last line reading "References"
/// (or "Bibliography", "Works Cited", "Sources", maybe as a Markdown heading) starts
/// the references: each non-blank line after it is an entry, up to the next
/// Markdown heading.
pub fn read_essay(text: &str) -> Essay {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let heading_text = |l: &str| l.trim().trim_start_matches('#').trim().to_owned();
    let is_markdown_heading = |l: &str| l.trim_start().starts_with('#');
    let refs_at = lines
        .iter()
        .rposition(|l| reader::is_references_heading(&heading_text(l)));
    let mut essay = Essay {
        paragraphs: Vec::new(),
        references_heading: None,
        references: Vec::new(),
    };
    let mut block: Vec<&str> = Vec::new();
    let flush = |block: &mut Vec<&str>, paragraphs: &mut Vec<Paragraph>| {
        if !block.is_empty() {
            paragraphs.push(Paragraph {
                index: paragraphs.len() as u32,
                text: block.join("\n"),
                slide: None,
                style: None,
                notes: false,
            });
            block.clear();
        }
    };
    let mut in_refs = false;
    for (i, line) in lines.iter().enumerate() {
        if Some(i) == refs_at {
            flush(&mut block, &mut essay.paragraphs);
            essay.references_heading = Some(heading_text(line));
            in_refs = true;
            continue;
        }
        if line.trim().is_empty() {
            flush(&mut block, &mut essay.paragraphs);
            continue;
        }
        if in_refs && is_markdown_heading(line) {
            in_refs = false;
        }
        if in_refs {
            essay.references.push(line.trim().to_owned());
        } else {
            block.push(line);
        }
    }
    flush(&mut block, &mut essay.paragraphs);
    essay
}

/// Paragraphs by position, References by count.
fn compare(
    before: &[Paragraph],
    before_refs: &[String],
    after: &[Paragraph],
    after_refs: &[String],
) -> CiteSummary {
    let mut changes = Vec::new();
    let mut citations = 0u32;
    let mut in_notes = 0u32;
    for (i, new) in after.iter().enumerate() {
        let old = before.get(i).map(|p| p.text.as_str()).unwrap_or("");
        if old == new.text {
            continue;
        }
        let segments = diff(old, &new.text);
        let found = inserted_citations(old, &new.text, &segments);
        citations = citations.saturating_add(found);
        if new.notes {
            in_notes = in_notes.saturating_add(found);
        }
        changes.push(ChangedParagraph {
            index: new.index,
            slide: new.slide,
            notes: new.notes,
            before: old.to_owned(),
            after: segments,
        });
    }
    CiteSummary {
        paragraphs_changed: u32::try_from(changes.len()).unwrap_or(u32::MAX),
        citations_inserted: citations,
        citations_in_notes: in_notes,
        references_added: u32::try_from(after_refs.len().saturating_sub(before_refs.len()))
            .unwrap_or(u32::MAX),
        changes,
        new_references: new_entries(before_refs, after_refs),
    }
}

/// The entries of `after` that `before` has not, each of `before`'s matching one of the
/// same text (trimmed) at most once.
pub(crate) fn new_entries(before: &[String], after: &[String]) -> Vec<String> {
    (new_entry_indices(before, after).into_iter())
        .map(|i| after[i].clone())
        .collect()
}

/// Where [`new_entries`] stand in `after`.
pub(crate) fn new_entry_indices(before: &[String], after: &[String]) -> Vec<usize> {
    let mut old: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for r in before {
        *old.entry(r.trim()).or_default() += 1;
    }
    (0..after.len())
        .filter(|&i| match old.get_mut(after[i].trim()) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .collect()
}

/// `after` as unchanged and inserted runs. The common prefix and suffix are
/// unchanged; between them, when the rest of `before` is still there word by word
/// (citing only inserts), the words around each insertion are unchanged too.
/// Otherwise the whole middle is shown as inserted.
pub fn diff(before: &str, after: &str) -> Vec<Segment> {
    let prefix = before
        .chars()
        .zip(after.chars())
        .take_while(|(a, b)| a == b)
        .map(|(c, _)| c.len_utf8())
        .sum::<usize>();
    // On word boundaries: a common end inside a word ("degree|s" against "note|s") would
    // split it, and the words between would no longer be found whole.
    let prefix = word_boundary_back(before, after, prefix);
    let b_rest = &before[prefix..];
    let a_rest = &after[prefix..];
    let suffix = b_rest
        .chars()
        .rev()
        .zip(a_rest.chars().rev())
        .take_while(|(a, b)| a == b)
        .map(|(c, _)| c.len_utf8())
        .sum::<usize>()
        .min(a_rest.len());
    let suffix = word_boundary_forward(b_rest, a_rest, suffix);
    let b_mid = &b_rest[..b_rest.len() - suffix.min(b_rest.len())];
    let a_mid = &a_rest[..a_rest.len() - suffix];
    let mut out: Vec<Segment> = Vec::new();
    let mut push = |text: &str, inserted: bool| {
        if text.is_empty() {
            return;
        }
        match out.last_mut() {
            Some(last) if last.inserted == inserted => last.text.push_str(text),
            _ => out.push(Segment {
                text: text.to_owned(),
                inserted,
            }),
        }
    };
    push(&after[..prefix], false);
    match kept_tokens(b_mid, a_mid) {
        Some(kept) => {
            for (tok, keep) in tokens(a_mid).zip(kept) {
                push(tok, !keep);
            }
        }
        None => push(a_mid, true),
    }
    push(&a_rest[a_rest.len() - suffix..], false);
    out
}

/// `prefix` (bytes both strings share at their start) moved back to the start of the word
/// it ends in, if it ends inside one in either string.
fn word_boundary_back(a: &str, b: &str, mut prefix: usize) -> usize {
    let inside = |s: &str, at: usize| s[at..].chars().next().is_some_and(char::is_alphanumeric);
    while prefix > 0 {
        let last = a[..prefix].chars().next_back().unwrap_or(' ');
        if !(last.is_alphanumeric() && (inside(a, prefix) || inside(b, prefix))) {
            break;
        }
        prefix -= last.len_utf8();
    }
    prefix
}

/// `suffix` (bytes both strings share at their end) moved forward to the end of the word
/// it starts in, if it starts inside one in either string.
fn word_boundary_forward(a: &str, b: &str, mut suffix: usize) -> usize {
    let inside = |s: &str, len: usize| {
        s[..s.len() - len]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric)
    };
    while suffix > 0 {
        let first = a[a.len() - suffix..].chars().next().unwrap_or(' ');
        if !(first.is_alphanumeric() && (inside(a, suffix) || inside(b, suffix))) {
            break;
        }
        suffix -= first.len_utf8();
    }
    suffix
}

/// Words, runs of spaces, and single other characters.
fn tokens(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        let c = rest.chars().next()?;
        let class = |c: char| {
            if c.is_alphanumeric() {
                0
            } else if c.is_whitespace() {
                1
            } else {
                2
            }
        };
        let k = class(c);
        let len = if k == 2 {
            c.len_utf8()
        } else {
            rest.char_indices()
                .find(|&(_, d)| class(d) != k)
                .map_or(rest.len(), |(i, _)| i)
        };
        let (tok, tail) = rest.split_at(len);
        rest = tail;
        Some(tok)
    })
}

/// For each token of `after`, whether it is one of `before`'s, when `before`'s
/// tokens appear in `after` in order; `None` when they do not.
///
/// Of the two greedy matches, from the start and from the end, the one that leaves
/// fewer inserted runs: an insertion holding a token like the one after it ("(Lee et
/// al., 2020)" before a sentence's full stop) would otherwise give its own "." to the
/// original's, and be split into pieces no longer counted as a citation.
fn kept_tokens(before: &str, after: &str) -> Option<Vec<bool>> {
    let before: Vec<&str> = tokens(before).collect();
    let after: Vec<&str> = tokens(after).collect();
    let forward = greedy_match(before.iter(), after.iter())?;
    let mut backward = greedy_match(before.iter().rev(), after.iter().rev())?;
    backward.reverse();
    let runs = |kept: &[bool]| {
        kept.iter()
            .enumerate()
            .filter(|&(i, k)| !k && (i == 0 || kept[i - 1]))
            .count()
    };
    Some(if runs(&backward) < runs(&forward) {
        backward
    } else {
        forward
    })
}

/// Each of `after`'s tokens matched, in order, to the next of `before`'s it equals;
/// `None` when some of `before`'s are left over.
fn greedy_match<'a>(
    before: impl Iterator<Item = &'a &'a str>,
    after: impl Iterator<Item = &'a &'a str>,
) -> Option<Vec<bool>> {
    let mut want = before.peekable();
    let kept: Vec<bool> = after
        .map(|t| {
            if want.peek() == Some(&t) {
                want.next();
                true
            } else {
                false
            }
        })
        .collect();
    want.peek().is_none().then_some(kept)
}

/// The citations in a paragraph's inserted segments: [`count_citations`] of each,
/// but never a group `before` already had more often than it is left in `after`,
/// so text shown as inserted because it was rewritten is not taken for a citation.
fn inserted_citations(before: &str, after: &str, segments: &[Segment]) -> u32 {
    let mut spare: std::collections::HashMap<&str, i64> = std::collections::HashMap::new();
    for (g, _) in groups(after) {
        *spare.entry(g).or_default() += 1;
    }
    for (g, _) in groups(before) {
        *spare.entry(g).or_default() -= 1;
    }
    let mut n = 0u32;
    for seg in segments.iter().filter(|s| s.inserted) {
        for (g, k) in groups(&seg.text) {
            let left = spare.entry(g).or_default();
            if *left > 0 {
                *left -= 1;
                n = n.saturating_add(k);
            }
        }
    }
    n
}

/// Each bracketed or parenthesised group in `text` ("(Smith, 2020)", "[3]"), with the
/// citations it holds.
fn groups(text: &str) -> Vec<(&str, u32)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(open) = text[at..].find(['(', '[']).map(|i| at + i) {
        let closer = if text[open..].starts_with('(') {
            ')'
        } else {
            ']'
        };
        let Some(len) = text[open + 1..].find(closer) else {
            break;
        };
        let inner = &text[open + 1..open + 1 + len];
        let n = group_citations(inner);
        if n > 0 {
            out.push((&text[open..open + 1 + len + 1], n));
        }
        at = open + 1 + len + 1;
    }
    out
}

/// Citations in inserted text: every bracketed or parenthesised group the service
/// added is a citation, whatever it holds (a person, an organisation, a name without a
/// year, "Source 3", "ibid."); words around it are not. A group holds one citation per
/// `;`-separated part: "(Smith & Jones, 2020; Lee et al., 2019)" two; a narrative's
/// years one each, "Lee et al. (2019, 2021)" two; numbers one each, "[1, 2]" two,
/// "[1–3]" three.
pub fn count_citations(text: &str) -> u32 {
    groups(text)
        .iter()
        .map(|&(_, n)| n)
        .fold(0u32, u32::saturating_add)
}

fn group_citations(inner: &str) -> u32 {
    if let n @ 1.. = numeric(inner) {
        return n;
    }
    let mut n = 0u32;
    for part in inner.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        // "2019, 2021": the years of a narrative citation whose author stands outside.
        let pieces: Vec<&str> = part.split(',').collect();
        let all_years = pieces.iter().all(|p| is_year(p));
        n = n.saturating_add(if all_years { pieces.len() as u32 } else { 1 });
    }
    n
}

/// "2020", "2020a", "n.d.", "in press".
fn is_year(token: &str) -> bool {
    let t = token
        .trim()
        .trim_end_matches(|c: char| c.is_ascii_lowercase());
    (t.len() == 4
        && t.bytes().all(|b| b.is_ascii_digit())
        && matches!(t.as_bytes()[0], b'1' | b'2'))
        || ["n.d.", "in press"].contains(&token.trim())
}

fn numeric(inner: &str) -> u32 {
    let dashes = ['-', '\u{2013}', '\u{2014}'];
    if !inner.chars().any(|c| c.is_ascii_digit())
        || !inner
            .chars()
            .all(|c| c.is_ascii_digit() || c == ',' || c.is_whitespace() || dashes.contains(&c))
    {
        return 0;
    }
    let mut n = 0u32;
    for part in inner.split(',') {
        let mut ends = part.split(dashes).map(|x| x.trim().parse::<u32>().ok());
        n = n.saturating_add(
            match (ends.next().flatten(), ends.next().flatten(), ends.next()) {
                (Some(_), None, None) => 1,
                (Some(a), Some(b), None) if b >= a && b - a < 1000 => b - a + 1,
                _ => 0,
            },
        );
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_are_found_mid_sentence_in_any_shape_and_in_speaker_notes() {
        let p = |index: u32, text: &str, notes: bool| Paragraph {
            index,
            text: text.into(),
            slide: Some(1),
            style: None,
            notes,
        };
        let before = [
            p(
                0,
                "Heat waves raise admissions. Older people are most at risk.",
                false,
            ),
            p(
                1,
                "Mention the 2003 heat wave here. Then the cohort study.",
                true,
            ),
        ];
        let after = [
            p(
                0,
                "Heat waves raise admissions [3]. Older people are most at risk (Smith & Jones, 2019; Lee et al., 2020).",
                false,
            ),
            p(
                1,
                "Mention the 2003 heat wave here (Buzan, 2010). Then the cohort study.",
                true,
            ),
        ];
        let refs: Vec<String> = ["A", "B", "C", "D"].map(String::from).to_vec();
        let s = compare(&before, &refs, &after, &refs);
        assert_eq!(s.paragraphs_changed, 2);
        assert_eq!(s.citations_inserted, 4);
        assert_eq!(s.citations_in_notes, 1);
        assert_eq!(s.references_added, 0);
        assert!(s.changes[1].notes && !s.changes[0].notes);
        let inserted: Vec<&str> = s.changes[1]
            .after
            .iter()
            .filter(|x| x.inserted)
            .map(|x| x.text.as_str())
            .collect();
        assert_eq!(
            inserted,
            [" (Buzan, 2010)"],
            "the citation inside the sentence, before its full stop"
        );
        assert_eq!(
            count_citations(" [Smith 2019; Lee et al. 2020]"),
            2,
            "bracketed author-year"
        );
        assert_eq!(count_citations(" [Smith, 2019]"), 1);
    }
    use crate::citations::documents::Paragraph;

    #[test]
    fn insertions_whose_ends_look_like_the_originals_words_are_still_found_whole() {
        // "notes." ends like "neighbourhoods.": a common end inside a word must not be
        // taken, or the words between would not be found and everything would look new.
        let before = "It cools by degrees. The benefits are largest in poor neighbourhoods.";
        let after = "It cools by degrees, as Buzan (2010) notes. The benefits are largest in poor neighbourhoods, as Lee et al. (2020) notes.";
        let segs = diff(before, after);
        let kept: String = segs
            .iter()
            .filter(|x| !x.inserted)
            .map(|x| x.text.as_str())
            .collect();
        assert_eq!(kept, before);
        let added: Vec<&str> = segs
            .iter()
            .filter(|x| x.inserted)
            .map(|x| x.text.as_str())
            .collect();
        assert_eq!(
            added,
            [", as Buzan (2010) notes", ", as Lee et al. (2020) notes"]
        );
        assert_eq!(count_citations(&added.concat()), 2);
    }

    fn parsed(paras: &[&str], refs: usize) -> Parsed {
        Parsed {
            paragraphs: paras
                .iter()
                .enumerate()
                .map(|(i, t)| Paragraph {
                    index: i as u32,
                    text: (*t).into(),
                    slide: None,
                    style: None,
                    notes: false,
                })
                .collect(),
            references: (0..refs).map(|i| format!("Ref {i}")).collect(),
            references_heading: None,
            extra: Default::default(),
        }
    }

    #[test]
    fn insertions_are_found_and_counted() {
        let before = parsed(&["Title", "Heat kills people.", "Unchanged text."], 0);
        let after = parsed(
            &[
                "Title",
                "Heat kills people (Smith, 2020; Lee et al., 2019).",
                "Unchanged text.",
            ],
            2,
        );
        let s = summarize(&before, &after);
        assert_eq!(
            (
                s.paragraphs_changed,
                s.citations_inserted,
                s.references_added
            ),
            (1, 2, 2)
        );
        assert_eq!(
            s.changes[0].after,
            vec![
                Segment {
                    text: "Heat kills people".into(),
                    inserted: false
                },
                Segment {
                    text: " (Smith, 2020; Lee et al., 2019)".into(),
                    inserted: true
                },
                Segment {
                    text: ".".into(),
                    inserted: false
                },
            ]
        );
    }

    #[test]
    fn diff_handles_multibyte_text_and_repeats() {
        let d = diff("日本語です。", "日本語です (Tanaka, 2001)。");
        assert_eq!(
            d[1],
            Segment {
                text: " (Tanaka, 2001)".into(),
                inserted: true
            }
        );
        let d = diff("aa.", "aa (X, 2000)aa.");
        assert_eq!(
            d.iter().map(|s| s.text.as_str()).collect::<String>(),
            "aa (X, 2000)aa."
        );
        assert_eq!(count_citations("(see above) (Knuth, 1984) (Doe, 2020a)"), 3);
    }

    #[test]
    fn citation_forms_a_server_might_insert_are_counted() {
        for (text, n) in [
            (" (Smith, 2020)", 1),
            (" (Smith & Jones, 2020; Lee, 2019)", 2),
            (" (Lee et al., 2019, p. 4)", 1),
            (" (Smith 2020)", 1),
            (" Smith (2020)", 1),
            (" Lee et al. (2019, 2021)", 2),
            (" (Doe, n.d.)", 1),
            (" [1]", 1),
            (" [1, 2]", 2),
            (" [1\u{2013}3]", 3),
            (" [1-3, 7]", 4),
            (" (World Health Organization, 2020)", 1),
            (" (Smith)", 1),
            (" (Source 3)", 1),
            (" (ibid.)", 1),
            (" (Ibid., p. 4; Lee, 2019)", 2),
            (" [Source 3]", 1),
            (" [] () ( ; )", 0),
            (" [3\u{2013}1] [1-99999] (", 2),
            (", as noted above", 0),
        ] {
            assert_eq!(count_citations(text), n, "{text:?}");
        }
    }

    #[test]
    fn several_insertions_in_one_paragraph_are_each_marked() {
        let d = diff(
            "Heat kills. Cold kills too. Wind",
            "Heat kills (A, 2001). Cold kills too [2]. Wind",
        );
        let inserted: Vec<&str> = d
            .iter()
            .filter(|s| s.inserted)
            .map(|s| s.text.as_str())
            .collect();
        assert_eq!(inserted, vec![" (A, 2001)", " [2]"]);
        assert_eq!(
            d.iter().map(|s| s.text.as_str()).collect::<String>(),
            "Heat kills (A, 2001). Cold kills too [2]. Wind"
        );
        // A rewrite is not an insertion: the whole middle shows as new.
        let d = diff("one two three", "one 2 three");
        assert_eq!(d.iter().filter(|s| s.inserted).count(), 1);
        assert_eq!(
            d.iter().map(|s| s.text.as_str()).collect::<String>(),
            "one 2 three"
        );
    }

    #[test]
    fn an_insertion_holding_the_full_stop_it_goes_before_is_found_whole() {
        // "et al." has a full stop, like the one each citation goes before: taken as the
        // original's, it split the insertions into pieces no longer counted.
        let before = "Heat kills. Cold kills too. Wind";
        let after =
            "Heat kills (Lee et al., 2020). Cold kills too, as Lee et al. (2020) notes. Wind";
        let d = diff(before, after);
        let inserted: Vec<&str> = d
            .iter()
            .filter(|s| s.inserted)
            .map(|s| s.text.as_str())
            .collect();
        assert_eq!(
            inserted,
            [" (Lee et al., 2020)", ", as Lee et al. (2020) notes"]
        );
        let counted: u32 = inserted.iter().map(|t| count_citations(t)).sum();
        assert_eq!(counted, 2);
        let kept: String = d
            .iter()
            .filter(|s| !s.inserted)
            .map(|s| s.text.as_str())
            .collect();
        assert_eq!(kept, before);
    }

    #[test]
    fn essays_split_on_blank_lines_and_find_references() {
        let original = "# Title\r\n\r\nHeat kills people.\r\nIt does.\r\n\r\nCold too.\r\n";
        let cited = "# Title\r\n\r\nHeat kills people (Smith, 2020).\r\nIt does [1].\r\n\r\nCold too.\r\n\r\nReferences:\r\nSmith, J. (2020). Heat.\r\n\r\n[1] Lee, K. (2019). Cold.\r\n";
        let e = read_essay(cited);
        assert_eq!(e.paragraphs.len(), 3);
        assert_eq!(
            e.paragraphs[1].text,
            "Heat kills people (Smith, 2020).\nIt does [1]."
        );
        assert_eq!(e.references_heading.as_deref(), Some("References:"));
        assert_eq!(e.references.len(), 2);
        let s = summarize_text(original, cited);
        assert_eq!(
            (
                s.paragraphs_changed,
                s.citations_inserted,
                s.references_added
            ),
            (1, 2, 2)
        );
        assert_eq!(s.changes[0].index, 1);
        let same = summarize_text(original, original);
        assert_eq!(
            (
                same.paragraphs_changed,
                same.citations_inserted,
                same.references_added
            ),
            (0, 0, 0)
        );
        // A Markdown heading ends the references; what follows is body again.
        let e = read_essay("Text.\n\n## Sources\nA (2000).\n\n## Appendix\nMore.");
        assert_eq!(e.references, vec!["A (2000)."]);
        assert_eq!(e.paragraphs.len(), 2);
        assert_eq!(read_essay("").paragraphs.len(), 0);
    }
}
