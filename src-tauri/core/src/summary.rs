//! What citing changed, computed by comparing the service's parse of the document
//! before and after: a summary we can trust whatever the cite answer claims.

use crate::citations::Parsed;
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
    pub before: String,
    pub after: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct CiteSummary {
    pub paragraphs_changed: u32,
    pub citations_inserted: u32,
    pub references_added: u32,
    pub changes: Vec<ChangedParagraph>,
}

/// Compares paragraphs by position and References by count.
pub fn summarize(before: &Parsed, after: &Parsed) -> CiteSummary {
    let mut changes = Vec::new();
    let mut citations = 0u32;
    for (i, new) in after.paragraphs.iter().enumerate() {
        let old = before
            .paragraphs
            .get(i)
            .map(|p| p.text.as_str())
            .unwrap_or("");
        if old == new.text {
            continue;
        }
        let segments = diff(old, &new.text);
        citations += segments
            .iter()
            .filter(|s| s.inserted)
            .map(|s| count_citations(&s.text))
            .sum::<u32>();
        changes.push(ChangedParagraph {
            index: new.index,
            slide: new.slide,
            before: old.to_owned(),
            after: segments,
        });
    }
    CiteSummary {
        paragraphs_changed: changes.len() as u32,
        citations_inserted: citations,
        references_added: after
            .references
            .len()
            .saturating_sub(before.references.len()) as u32,
        changes,
    }
}

/// `after` as unchanged and inserted runs: the common prefix and suffix are
/// unchanged, the middle inserted. Citing only inserts, so this is exact for one
/// insertion per paragraph and a fair picture otherwise.
pub fn diff(before: &str, after: &str) -> Vec<Segment> {
    let prefix = before
        .chars()
        .zip(after.chars())
        .take_while(|(a, b)| a == b)
        .map(|(c, _)| c.len_utf8())
        .sum::<usize>();
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
    let middle = &a_rest[..a_rest.len() - suffix];
    let mut out = Vec::new();
    let mut push = |text: &str, inserted: bool| {
        if !text.is_empty() {
            out.push(Segment {
                text: text.to_owned(),
                inserted,
            });
        }
    };
    push(&after[..prefix], false);
    push(middle, true);
    push(&a_rest[a_rest.len() - suffix..], false);
    out
}

/// Citations in inserted text: "(A, 2017)" is one, "(A, 2017; B, 2019)" two.
pub fn count_citations(text: &str) -> u32 {
    let mut n = 0;
    let mut rest = text;
    while let Some(open) = rest.find('(') {
        let Some(close) = rest[open..].find(')') else {
            break;
        };
        let inner = &rest[open + 1..open + close];
        n += inner
            .split(';')
            .filter(|c| {
                c.trim().rsplit_once(", ").is_some_and(|(_, y)| {
                    let y = y.trim_end_matches(|ch: char| ch.is_ascii_lowercase());
                    y.len() == 4 && y.bytes().all(|b| b.is_ascii_digit())
                })
            })
            .count() as u32;
        rest = &rest[open + close + 1..];
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::citations::Paragraph;

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
        assert_eq!(count_citations("(see above) (Knuth, 1984) (Doe, 2020a)"), 2);
    }
}
